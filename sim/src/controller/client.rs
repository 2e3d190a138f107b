//! `SimClient`: the `lws::client::Client` the ported reconcilers run against in the world.
//!
//! Reads are served at once from the manager's shared informer caches (controller-runtime's
//! cache-backed client). A write suspends the reconcile: the future parks the request in the
//! `Exchange` and returns `Pending`; the runtime performs it against the API server after the
//! sampled API latency, stores the response and polls again. Dropping the future is a crash.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use lws::api::LeaderWorkerSet;
use lws::client::{Client, Error, Propagation, Related, Resource, Result};
use lws::disagg::api::{DisaggregatedSet, DisaggregatedSetRoleScaler};
use lws::volcano::PodGroup;

use crate::api::events::{self, RecordedV1};
use crate::api::{KindId, Selector};
use crate::informer::Informer;

pub type AnyObject = Arc<dyn Any + Send + Sync>;

/// The manager's shared informers: one per kind, as controller-runtime's cache has.
pub struct Caches {
    pub lws: Informer<LeaderWorkerSet>,
    pub statefulsets: Informer<StatefulSet>,
    pub pods: Informer<Pod>,
    pub services: Informer<Service>,
    pub nodes: Informer<Node>,
    pub revisions: Informer<ControllerRevision>,
    pub disaggregatedsets: Informer<DisaggregatedSet>,
    pub rolescalers: Informer<DisaggregatedSetRoleScaler>,
    /// Started only with a scheduler provider (`gang-scheduling=volcano`): controller-runtime
    /// starts an informer on a kind's first cached read, and only the provider reads PodGroups.
    pub podgroups: Option<Informer<PodGroup>>,
}

fn get_in<K: Any + Send + Sync + crate::api::Kind>(
    inf: &Informer<K>,
    ns: &str,
    name: &str,
    stale: bool,
) -> Option<AnyObject> {
    let found = if stale {
        inf.stale_get(ns, name)
    } else {
        inf.get(ns, name)
    };
    found.map(|o| o.clone() as AnyObject)
}

/// The answer as a `Vec<Arc<K>>` in a box: the caller downcasts the list once, not each item.
fn list_in<K: Any + Send + Sync + crate::api::Kind>(
    inf: &Informer<K>,
    ns: &str,
    sel: &Selector,
    stale: bool,
) -> Box<dyn Any> {
    let found = if stale {
        inf.stale_list(ns, sel)
    } else {
        inf.list(ns, sel)
    };
    let typed: Vec<Arc<K>> = found.into_iter().cloned().collect();
    Box::new(typed)
}

impl Caches {
    /// A cached object; `stale` serves its previous version (explore's stale-state pattern).
    fn get(&self, kind: KindId, ns: &str, name: &str, stale: bool) -> Option<AnyObject> {
        match kind {
            KindId::LeaderWorkerSet => get_in(&self.lws, ns, name, stale),
            KindId::StatefulSet => get_in(&self.statefulsets, ns, name, stale),
            KindId::Pod => get_in(&self.pods, ns, name, stale),
            KindId::Service => get_in(&self.services, ns, name, stale),
            KindId::Node => get_in(&self.nodes, "", name, stale),
            KindId::ControllerRevision => get_in(&self.revisions, ns, name, stale),
            KindId::DisaggregatedSet => get_in(&self.disaggregatedsets, ns, name, stale),
            KindId::DisaggregatedSetRoleScaler => get_in(&self.rolescalers, ns, name, stale),
            KindId::PodGroup => get_in(self.podgroups.as_ref()?, ns, name, stale),
            _ => None,
        }
    }

    /// A list's answer, a `Vec<Arc<K>>` of the kind's type (boxed); `None` for a kind the
    /// manager does not cache.
    fn list(&self, kind: KindId, ns: &str, sel: &Selector, stale: bool) -> Option<Box<dyn Any>> {
        match kind {
            KindId::LeaderWorkerSet => Some(list_in(&self.lws, ns, sel, stale)),
            KindId::StatefulSet => Some(list_in(&self.statefulsets, ns, sel, stale)),
            KindId::Pod => Some(list_in(&self.pods, ns, sel, stale)),
            KindId::Service => Some(list_in(&self.services, ns, sel, stale)),
            KindId::Node => Some(list_in(&self.nodes, "", sel, stale)),
            KindId::ControllerRevision => Some(list_in(&self.revisions, ns, sel, stale)),
            KindId::DisaggregatedSet => Some(list_in(&self.disaggregatedsets, ns, sel, stale)),
            KindId::DisaggregatedSetRoleScaler => Some(list_in(&self.rolescalers, ns, sel, stale)),
            KindId::PodGroup => Some(list_in(self.podgroups.as_ref()?, ns, sel, stale)),
            _ => None,
        }
    }

    /// Remember previous versions in every informer, so stale reads can be served.
    pub fn track_previous(&mut self) {
        self.lws.track_previous();
        self.statefulsets.track_previous();
        self.pods.track_previous();
        self.services.track_previous();
        self.nodes.track_previous();
        self.revisions.track_previous();
        self.disaggregatedsets.track_previous();
        self.rolescalers.track_previous();
        if let Some(p) = &mut self.podgroups {
            p.track_previous();
        }
    }
}

/// A write the reconcile is waiting on.
pub struct WriteOp {
    pub verb: &'static str,
    pub kind: KindId,
    pub namespace: String,
    pub name: String,
    pub object: Option<Box<dyn Any>>,
    pub patch: Option<serde_json::Value>,
    pub field_manager: String,
    pub force: bool,
    pub propagation: Option<Propagation>,
}

/// The mailbox between one in-flight reconcile and the runtime.
pub struct Exchange {
    pub caches: Rc<RefCell<Caches>>,
    pub pending: Option<WriteOp>,
    pub response: Option<Result<Option<AnyObject>>>,
    /// Kubernetes Events the reconciler recorded (kept out of the trace hash), as log lines
    /// and as what the API server's event store keeps.
    pub events: Vec<String>,
    pub recorded: Vec<crate::api::events::Recorded>,
    /// The name of the reconciler's event recorder (`GetEventRecorder(name)`).
    pub recorder: &'static str,
    /// Cache reads served, for "API calls per reconcile".
    pub reads: u32,
    /// Serve this reconcile's reads from each object's previous version (explore).
    pub stale: bool,
}

#[derive(Clone)]
pub struct SimClient {
    pub exchange: Rc<RefCell<Exchange>>,
}

fn kind_of<K: Resource>() -> KindId {
    KindId::parse(K::KIND).expect("every Resource kind is a stored kind")
}

fn downcast<K: Resource>(o: AnyObject) -> Arc<K> {
    o.downcast::<K>()
        .unwrap_or_else(|_| panic!("response of the wrong kind for {}", K::KIND))
}

struct WriteFuture {
    exchange: Rc<RefCell<Exchange>>,
    op: Option<WriteOp>,
}

impl Future for WriteFuture {
    type Output = Result<Option<AnyObject>>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(op) = self.op.take() {
            let mut ex = self.exchange.borrow_mut();
            assert!(ex.pending.is_none(), "one write at a time per reconcile");
            ex.pending = Some(op);
            return Poll::Pending;
        }
        match self.exchange.borrow_mut().response.take() {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        }
    }
}

impl SimClient {
    /// An event for the API server's event store, and a line for the reconcile's log.
    fn record<K: Resource>(
        &self,
        object: &K,
        type_: &str,
        reason: &str,
        message: &str,
        v1: Option<RecordedV1>,
    ) {
        let meta = object.meta();
        let name = meta.name.as_deref().unwrap_or("");
        let mut x = self.exchange.borrow_mut();
        x.events.push(format!("{type_} {reason} {name}: {message}"));
        let controller = x.recorder;
        x.recorded.push(events::Recorded {
            kind: K::KIND,
            api_version: K::API_VERSION,
            object: meta.clone(),
            type_: type_.into(),
            reason: reason.into(),
            message: message.into(),
            controller,
            v1,
        });
    }

    fn write(&self, op: WriteOp) -> WriteFuture {
        WriteFuture {
            exchange: self.exchange.clone(),
            op: Some(op),
        }
    }

    fn op<K: Resource>(verb: &'static str, namespace: &str, name: &str) -> WriteOp {
        WriteOp {
            verb,
            kind: kind_of::<K>(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            object: None,
            patch: None,
            field_manager: String::new(),
            force: false,
            propagation: None,
        }
    }

    fn op_with<K: Resource>(verb: &'static str, obj: K) -> WriteOp {
        let ns = obj
            .meta()
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = obj.meta().name.clone().unwrap_or_default();
        let mut op = Self::op::<K>(verb, &ns, &name);
        op.object = Some(Box::new(obj));
        op
    }

    async fn write_object<K: Resource>(&self, op: WriteOp) -> Result<Arc<K>> {
        let obj = self
            .write(op)
            .await?
            .ok_or_else(|| Error::internal("write returned no object"))?;
        Ok(downcast(obj))
    }
}

impl Client for SimClient {
    async fn get<K: Resource>(&self, namespace: &str, name: &str) -> Result<Arc<K>> {
        self.exchange.borrow_mut().reads += 1;
        let ex = self.exchange.borrow();
        let found = ex
            .caches
            .borrow()
            .get(kind_of::<K>(), namespace, name, ex.stale);
        match found {
            Some(o) => Ok(downcast(o)),
            None => Err(Error::not_found(K::KIND, name)),
        }
    }

    /// A round trip like a write's (`perform`'s `get`): parked, answered after the API
    /// latency, but never counted as a write nor failed by `apiErrors` (reads keep working).
    async fn get_live<K: Resource>(&self, namespace: &str, name: &str) -> Result<Arc<K>> {
        self.exchange.borrow_mut().reads += 1;
        self.write_object(Self::op::<K>("get", namespace, name))
            .await
    }

    async fn list<K: Resource>(
        &self,
        namespace: &str,
        labels: &[(&str, &str)],
    ) -> Result<Vec<Arc<K>>> {
        self.exchange.borrow_mut().reads += 1;
        let sel = Selector::labels(labels.iter().copied());
        let ex = self.exchange.borrow();
        let items = ex
            .caches
            .borrow()
            .list(kind_of::<K>(), namespace, &sel, ex.stale);
        Ok(items.map_or_else(Vec::new, |b| {
            *b.downcast::<Vec<Arc<K>>>()
                .unwrap_or_else(|_| panic!("list of the wrong kind for {}", K::KIND))
        }))
    }

    async fn create<K: Resource>(&self, obj: K) -> Result<Arc<K>> {
        self.write_object(Self::op_with("create", obj)).await
    }

    async fn update<K: Resource>(&self, obj: K) -> Result<Arc<K>> {
        self.write_object(Self::op_with("update", obj)).await
    }

    async fn update_status<K: Resource>(&self, obj: K) -> Result<Arc<K>> {
        self.write_object(Self::op_with("update-status", obj)).await
    }

    async fn merge_patch<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        patch: serde_json::Value,
    ) -> Result<Arc<K>> {
        let mut op = Self::op::<K>("patch", namespace, name);
        op.patch = Some(patch);
        self.write_object(op).await
    }

    async fn merge_patch_status<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        patch: serde_json::Value,
    ) -> Result<Arc<K>> {
        let mut op = Self::op::<K>("patch-status", namespace, name);
        op.patch = Some(patch);
        self.write_object(op).await
    }

    async fn apply<K: Resource>(&self, obj: K, field_manager: &str, force: bool) -> Result<Arc<K>> {
        let mut op = Self::op_with("apply", obj);
        op.field_manager = field_manager.to_string();
        op.force = force;
        self.write_object(op).await
    }

    async fn delete<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<()> {
        let mut op = Self::op::<K>("delete", namespace, name);
        op.propagation = propagation;
        self.write(op).await.map(|_| ())
    }

    fn event<K: Resource>(&self, object: &K, type_: &str, reason: &str, message: &str) {
        self.record(object, type_, reason, message, None);
    }

    fn eventf<K: Resource>(
        &self,
        regarding: &K,
        related: Option<Related<'_>>,
        type_: &str,
        reason: &str,
        action: &str,
        note: &str,
    ) {
        let v1 = RecordedV1 {
            action: action.to_string(),
            related: related.map(|r| events::reference(r.kind, r.api_version, r.meta)),
        };
        self.record(regarding, type_, reason, note, Some(v1));
    }
}
