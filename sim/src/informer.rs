//! A lagging view of one kind: a cursor into the API server's watch log and the cache it feeds
//! (client-go reflector + store; k8s-semantics §2 and §7.1). Each consumer has its own, so
//! caches of different kinds and different actors are skewed, as in a real cluster.
//!
//! Simplification (docs/fidelity.md): the initial list is consistent (WatchList, client-go
//! v0.35+), the lag is fixed per informer, and watch history never expires (no 410 relists).

use std::collections::BTreeMap;

use crate::api::{ApiServer, EventType, Key, Kind, Selector, Shared};

/// One change delivered to a consumer. `old` is the cached object before the change.
#[derive(Debug)]
pub struct Delta<K> {
    pub ty: EventType,
    pub old: Option<Shared<K>>,
    pub obj: Shared<K>,
}

pub struct Informer<K> {
    cursor: usize,
    lag_ms: u64,
    cache: BTreeMap<Key, Shared<K>>,
    last_rv: u64,
}

impl<K: Kind> Informer<K> {
    /// Start with a consistent list of everything the server holds now.
    pub fn start(api: &ApiServer, lag_ms: u64) -> Informer<K> {
        let store = K::store(api);
        let cache = store.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        Informer {
            cursor: store.log().len(),
            lag_ms,
            cache,
            last_rv: api.resource_version(),
        }
    }

    /// The initial list as `Added` deltas (what a fresh informer hands its handlers).
    pub fn initial_deltas(&self) -> Vec<Delta<K>> {
        self.cache
            .values()
            .map(|o| Delta {
                ty: EventType::Added,
                old: None,
                obj: o.clone(),
            })
            .collect()
    }

    /// When the next undelivered event becomes visible to this consumer.
    pub fn next_due_ms(&self, api: &ApiServer) -> Option<u64> {
        K::store(api)
            .log()
            .get(self.cursor)
            .map(|e| e.at_ms + self.lag_ms)
    }

    /// Deliver every event visible at `now_ms`, in resourceVersion order, updating the cache.
    pub fn poll(&mut self, api: &ApiServer, now_ms: u64) -> Vec<Delta<K>> {
        let log = K::store(api).log();
        let mut out = Vec::new();
        while let Some(e) = log.get(self.cursor) {
            if e.at_ms + self.lag_ms > now_ms {
                break;
            }
            assert!(
                e.rv > self.last_rv,
                "watch went back: rv {} after {}",
                e.rv,
                self.last_rv
            );
            self.last_rv = e.rv;
            self.cursor += 1;
            let key = crate::api::key_of(&*e.obj);
            let old = match e.ty {
                EventType::Deleted => self.cache.remove(&key),
                _ => self.cache.insert(key, e.obj.clone()),
            };
            out.push(Delta {
                ty: e.ty,
                old,
                obj: e.obj.clone(),
            });
        }
        out
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<&Shared<K>> {
        self.cache.get(&(namespace.to_string(), name.to_string()))
    }

    pub fn list<'a>(
        &'a self,
        namespace: &'a str,
        selector: &'a Selector,
    ) -> impl Iterator<Item = &'a Shared<K>> + 'a {
        self.cache
            .range((namespace.to_string(), String::new())..)
            .take_while(move |((ns, _), _)| ns == namespace)
            .map(|(_, o)| o)
            .filter(move |o| selector.matches(o.meta().labels.as_ref()))
    }

    pub fn all(&self) -> impl Iterator<Item = &Shared<K>> {
        self.cache.values()
    }

    pub fn len(&self) -> usize {
        self.cache.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }
}
