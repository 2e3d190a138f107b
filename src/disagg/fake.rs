//! The fake controller-runtime client of upstream's DisaggregatedSet unit tests, shared by the
//! ported tests of this module: one in-memory store of objects (as JSON) keyed by kind,
//! namespace and name. It answers get, list by labels, create, merge patches of the object and
//! of its status, and delete, for the kinds it was seeded with; any other call, or a kind it
//! was not given, is refused, so a port that makes a call its Go test's fake would not see
//! fails. Events are kept as `"type reason message"`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use serde_json::{Map, Value};

use crate::client::{Client, Error, Propagation, Reason, Resource, Result};
use crate::k8s;

type Key = (&'static str, String, String);

#[derive(Default)]
pub(crate) struct FakeClient {
    kinds: BTreeSet<&'static str>,
    objects: RefCell<BTreeMap<Key, Value>>,
    pub events: RefCell<Vec<String>>,
}

impl FakeClient {
    /// A store serving `K` only, holding `objects`.
    pub fn with<K: Resource>(objects: Vec<K>) -> FakeClient {
        let fake = FakeClient {
            kinds: BTreeSet::from([K::KIND]),
            ..FakeClient::default()
        };
        for o in objects {
            let key = key_of::<K>(k8s::namespace(o.meta()), k8s::name(o.meta()));
            fake.objects.borrow_mut().insert(key, encode(&o));
        }
        fake
    }

    /// The stored object, if any.
    pub fn stored<K: Resource>(&self, namespace: &str, name: &str) -> Option<K> {
        let objects = self.objects.borrow();
        objects.get(&key_of::<K>(namespace, name)).map(decode)
    }

    fn served<K: Resource>(&self, call: &str) -> Result<()> {
        if self.kinds.contains(K::KIND) {
            return Ok(());
        }
        Err(refused(&format!("{call} of a {}", K::KIND)))
    }

    fn patch<K: Resource>(&self, namespace: &str, name: &str, patch: &Value) -> Result<Arc<K>> {
        let mut objects = self.objects.borrow_mut();
        let doc = objects
            .get_mut(&key_of::<K>(namespace, name))
            .ok_or_else(|| not_found(name))?;
        apply_merge_patch(doc, patch);
        Ok(Arc::new(decode(doc)))
    }
}

fn key_of<K: Resource>(namespace: &str, name: &str) -> Key {
    (K::KIND, namespace.to_string(), name.to_string())
}

fn encode<T: serde::Serialize>(o: &T) -> Value {
    serde_json::to_value(o).expect("objects encode")
}

fn decode<T: serde::de::DeserializeOwned>(v: &Value) -> T {
    serde_json::from_value(v.clone()).expect("stored objects decode")
}

fn refused(call: &str) -> Error {
    Error::internal(format!(
        "FakeClient: unexpected {call} in a ported unit test"
    ))
}

fn not_found(name: &str) -> Error {
    Error::new(Reason::NotFound, format!("{name:?} not found"))
}

/// RFC 7386: apply a JSON merge patch to `doc`.
fn apply_merge_patch(doc: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *doc = patch.clone();
        return;
    };
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let obj = doc.as_object_mut().expect("an object");
    for (k, v) in fields {
        if v.is_null() {
            obj.remove(k);
        } else {
            apply_merge_patch(obj.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// Runs a future that never suspends (the fake answers at once).
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a future on FakeClient suspended"),
    }
}

impl Client for FakeClient {
    async fn get<K: Resource>(&self, namespace: &str, name: &str) -> Result<Arc<K>> {
        self.served::<K>("get")?;
        self.stored(namespace, name)
            .map(Arc::new)
            .ok_or_else(|| not_found(name))
    }

    async fn get_live<K: Resource>(&self, namespace: &str, name: &str) -> Result<Arc<K>> {
        self.get(namespace, name).await
    }

    async fn list<K: Resource>(&self, ns: &str, labels: &[(&str, &str)]) -> Result<Vec<Arc<K>>> {
        self.served::<K>("list")?;
        let objects = self.objects.borrow();
        let all = objects
            .iter()
            .filter(|((kind, n, _), _)| *kind == K::KIND && n == ns);
        let typed = all.map(|(_, v)| decode::<K>(v));
        let matching = typed.filter(|o| {
            let label = |k: &str| k8s::label(o.meta(), k);
            labels.iter().all(|&(k, v)| label(k) == Some(v))
        });
        Ok(matching.map(Arc::new).collect())
    }

    async fn create<K: Resource>(&self, obj: K) -> Result<Arc<K>> {
        self.served::<K>("create")?;
        let key = key_of::<K>(k8s::namespace(obj.meta()), k8s::name(obj.meta()));
        let mut objects = self.objects.borrow_mut();
        if objects.contains_key(&key) {
            return Err(Error::new(Reason::AlreadyExists, "taken"));
        }
        objects.insert(key, encode(&obj));
        Ok(Arc::new(obj))
    }

    async fn update<K: Resource>(&self, _obj: K) -> Result<Arc<K>> {
        Err(refused("update"))
    }

    async fn update_status<K: Resource>(&self, _obj: K) -> Result<Arc<K>> {
        Err(refused("update_status"))
    }

    async fn merge_patch<K: Resource>(&self, ns: &str, name: &str, p: Value) -> Result<Arc<K>> {
        self.served::<K>("merge_patch")?;
        self.patch(ns, name, &p)
    }

    async fn merge_patch_status<K: Resource>(
        &self,
        ns: &str,
        name: &str,
        p: Value,
    ) -> Result<Arc<K>> {
        self.served::<K>("merge_patch_status")?;
        self.patch(ns, name, &p)
    }

    async fn apply<K: Resource>(&self, _obj: K, _manager: &str, _force: bool) -> Result<Arc<K>> {
        Err(refused("apply"))
    }

    async fn delete<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        _propagation: Option<Propagation>,
    ) -> Result<()> {
        self.served::<K>("delete")?;
        let mut objects = self.objects.borrow_mut();
        objects
            .remove(&key_of::<K>(namespace, name))
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }

    fn event<K: Resource>(&self, _object: &K, type_: &str, reason: &str, message: &str) {
        let e = format!("{type_} {reason} {message}");
        self.events.borrow_mut().push(e);
    }
}
