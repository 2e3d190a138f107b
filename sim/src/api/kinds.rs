//! The kinds the fake API server stores, and what differs between them: scope, the spec/status
//! split and the generation rule (kubernetes pkg/registry/apps/statefulset/strategy.go @01aa0f3f,
//! apiextensions-apiserver pkg/registry/customresource/strategy.go).

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lws::api::LeaderWorkerSet;
use lws::disagg::api::{DisaggregatedSet, DisaggregatedSetRoleScaler};
use lws::volcano::PodGroup;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{ApiServer, Store};

/// A kind, as a closed enum, for type-erased paths (garbage collector, trace, scenario steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KindId {
    LeaderWorkerSet,
    StatefulSet,
    ControllerRevision,
    Pod,
    Service,
    Node,
    Lease,
    PodDisruptionBudget,
    DisaggregatedSet,
    DisaggregatedSetRoleScaler,
    PodGroup,
}

impl KindId {
    pub const ALL: [KindId; 11] = [
        KindId::LeaderWorkerSet,
        KindId::StatefulSet,
        KindId::ControllerRevision,
        KindId::Pod,
        KindId::Service,
        KindId::Node,
        KindId::Lease,
        KindId::PodDisruptionBudget,
        KindId::DisaggregatedSet,
        KindId::DisaggregatedSetRoleScaler,
        KindId::PodGroup,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            KindId::LeaderWorkerSet => "LeaderWorkerSet",
            KindId::StatefulSet => "StatefulSet",
            KindId::ControllerRevision => "ControllerRevision",
            KindId::Pod => "Pod",
            KindId::Service => "Service",
            KindId::Node => "Node",
            KindId::Lease => "Lease",
            KindId::PodDisruptionBudget => "PodDisruptionBudget",
            KindId::DisaggregatedSet => "DisaggregatedSet",
            KindId::DisaggregatedSetRoleScaler => "DisaggregatedSetRoleScaler",
            KindId::PodGroup => "PodGroup",
        }
    }

    pub fn parse(s: &str) -> Option<KindId> {
        KindId::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn api_version(self) -> &'static str {
        match self {
            KindId::LeaderWorkerSet => lws::api::API_VERSION,
            KindId::StatefulSet | KindId::ControllerRevision => "apps/v1",
            KindId::Pod | KindId::Service | KindId::Node => "v1",
            KindId::Lease => "coordination.k8s.io/v1",
            KindId::PodDisruptionBudget => "policy/v1",
            KindId::DisaggregatedSet | KindId::DisaggregatedSetRoleScaler => {
                lws::disagg::api::API_VERSION
            }
            KindId::PodGroup => lws::volcano::API_VERSION,
        }
    }

    /// A custom resource (served from a CRD): the apiserver has no patch strategies for it.
    pub fn custom(self) -> bool {
        matches!(
            self,
            KindId::LeaderWorkerSet
                | KindId::DisaggregatedSet
                | KindId::DisaggregatedSetRoleScaler
                | KindId::PodGroup
        )
    }

    /// Nodes are cluster-scoped; everything else here is namespaced.
    pub fn namespaced(self) -> bool {
        self != KindId::Node
    }
}

impl fmt::Display for KindId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored kind. Implementations encode the per-type registry strategy of the real API server.
pub trait Kind:
    Clone + PartialEq + Serialize + DeserializeOwned + fmt::Debug + Send + Sync + 'static
{
    const ID: KindId;
    fn meta(&self) -> &ObjectMeta;
    fn meta_mut(&mut self) -> &mut ObjectMeta;
    /// True when the kind has a status subresource: the main endpoint then ignores status and
    /// `/status` ignores everything else (statefulset `strategy.go` `PrepareForUpdate`; apiextensions
    /// `status_strategy.go`).
    fn has_status() -> bool {
        false
    }
    /// Copy `from`'s status into `self` (main-endpoint writes keep the stored status).
    fn copy_status(&mut self, _from: &Self) {}
    /// Clear status on create (StatefulSet and CR `PrepareForCreate`).
    fn clear_status(&mut self) {}
    /// Whether `metadata.generation` is tracked, and whether the change from `old` to `new` bumps it:
    /// StatefulSet on any spec change, CRs with a status subresource on any non-metadata change.
    fn tracks_generation() -> bool {
        false
    }
    fn spec_differs(_old: &Self, _new: &Self) -> bool {
        false
    }
    /// Equal but for status and resourceVersion (always `false` for kinds without status).
    fn same_but_status(&self, _other: &Self) -> bool {
        false
    }
    /// Equal in status (always `true` for kinds without status).
    fn status_eq(&self, _other: &Self) -> bool {
        true
    }
    fn store(api: &ApiServer) -> &Store<Self>;
    fn store_mut(api: &mut ApiServer) -> &mut Store<Self>;
}

macro_rules! kind {
    ($ty:ty, $id:ident, $field:ident, status: $status:tt, generation: $gen:tt) => {
        impl Kind for $ty {
            const ID: KindId = KindId::$id;
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
            fn has_status() -> bool {
                $status
            }
            fn copy_status(&mut self, from: &Self) {
                kind!(@copy $status, self, from);
            }
            fn clear_status(&mut self) {
                kind!(@clear $status, self);
            }
            fn tracks_generation() -> bool {
                kind!(@tracks $gen)
            }
            fn spec_differs(old: &Self, new: &Self) -> bool {
                kind!(@spec $gen, old, new)
            }
            fn same_but_status(&self, other: &Self) -> bool {
                kind!(@same $status, self, other)
            }
            fn status_eq(&self, other: &Self) -> bool {
                kind!(@status_eq $status, self, other)
            }
            fn store(api: &ApiServer) -> &Store<Self> {
                &api.$field
            }
            fn store_mut(api: &mut ApiServer) -> &mut Store<Self> {
                &mut api.$field
            }
        }
    };
    (@copy true, $s:ident, $f:ident) => { $s.status = $f.status.clone() };
    (@copy false, $s:ident, $f:ident) => { let _ = ($s, $f); };
    (@clear true, $s:ident) => { $s.status = None };
    (@clear false, $s:ident) => { let _ = $s; };
    (@tracks true) => { true };
    (@tracks false) => { false };
    (@tracks everything) => { true };
    (@spec true, $o:ident, $n:ident) => { $o.spec != $n.spec };
    // A custom resource without a status subresource: any change but metadata's
    // (apiextensions-apiserver `customResourceStrategy.PrepareForUpdate`).
    (@spec everything, $o:ident, $n:ident) => { $o.spec != $n.spec || $o.status != $n.status };
    (@spec false, $o:ident, $n:ident) => {{ let _ = ($o, $n); false }};
    (@same true, $a:ident, $b:ident) => {
        meta_eq_but_rv(&$a.metadata, &$b.metadata) && $a.spec == $b.spec
    };
    (@same false, $a:ident, $b:ident) => {{ let _ = ($a, $b); false }};
    (@status_eq true, $a:ident, $b:ident) => { $a.status == $b.status };
    (@status_eq false, $a:ident, $b:ident) => {{ let _ = ($a, $b); true }};
}

/// Two objects' metadata, equal but for `resourceVersion` (every field named, so a new
/// `ObjectMeta` field is a compile error here, not a silent difference).
fn meta_eq_but_rv(a: &ObjectMeta, b: &ObjectMeta) -> bool {
    let ObjectMeta {
        annotations,
        creation_timestamp,
        deletion_grace_period_seconds,
        deletion_timestamp,
        finalizers,
        generate_name,
        generation,
        labels,
        managed_fields,
        name,
        namespace,
        owner_references,
        resource_version: _,
        self_link,
        uid,
    } = a;
    *name == b.name
        && *namespace == b.namespace
        && *uid == b.uid
        && *generation == b.generation
        && *labels == b.labels
        && *annotations == b.annotations
        && *owner_references == b.owner_references
        && *finalizers == b.finalizers
        && *creation_timestamp == b.creation_timestamp
        && *deletion_timestamp == b.deletion_timestamp
        && *deletion_grace_period_seconds == b.deletion_grace_period_seconds
        && *generate_name == b.generate_name
        && *managed_fields == b.managed_fields
        && *self_link == b.self_link
}

kind!(LeaderWorkerSet, LeaderWorkerSet, lws, status: true, generation: true);
kind!(StatefulSet, StatefulSet, statefulsets, status: true, generation: true);
kind!(Pod, Pod, pods, status: true, generation: false);
kind!(Service, Service, services, status: true, generation: false);
kind!(Node, Node, nodes, status: true, generation: false);
kind!(PodDisruptionBudget, PodDisruptionBudget, pdbs, status: true, generation: true);
kind!(DisaggregatedSet, DisaggregatedSet, disaggregatedsets, status: true, generation: true);
kind!(
    DisaggregatedSetRoleScaler,
    DisaggregatedSetRoleScaler,
    rolescalers,
    status: true,
    generation: true
);
kind!(Lease, Lease, leases, status: false, generation: false);
// Volcano's CRD has no status subresource (`subresources: {}`): status is written through the
// main endpoint, and any change outside metadata bumps the generation (docs/fidelity.md).
kind!(PodGroup, PodGroup, podgroups, status: false, generation: everything);
kind!(ControllerRevision, ControllerRevision, revisions, status: false, generation: false);

/// `(namespace, name)`; the namespace is empty for cluster-scoped kinds.
pub type Key = (String, String);

/// A key as borrowed parts, so a map keyed by `Key` can be searched by `(&str, &str)` without
/// building two `String`s (`map.get(&(ns, name) as &dyn KeyRef)`): same order as `Key`'s.
pub trait KeyRef {
    fn parts(&self) -> (&str, &str);
}

impl KeyRef for Key {
    fn parts(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl KeyRef for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn KeyRef + 'a> for Key {
    fn borrow(&self) -> &(dyn KeyRef + 'a) {
        self
    }
}

impl PartialEq for dyn KeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn KeyRef + '_ {}

/// Hashes as `Key` does (a `String` hashes as its `str`), so a hash map keyed by `Key` can be
/// searched by `(&str, &str)` too.
impl std::hash::Hash for dyn KeyRef + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

impl PartialOrd for dyn KeyRef + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn KeyRef + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts().cmp(&other.parts())
    }
}

/// An object's key borrowed from its metadata, for lookups that need no owned `Key`.
pub fn meta_key(m: &ObjectMeta) -> (&str, &str) {
    (
        m.namespace.as_deref().unwrap_or_default(),
        m.name.as_deref().unwrap_or_default(),
    )
}

pub fn key_of<K: Kind>(obj: &K) -> Key {
    let m = obj.meta();
    (
        m.namespace.clone().unwrap_or_default(),
        m.name.clone().unwrap_or_default(),
    )
}

/// A shared, immutable stored object. Readers get an `Arc`, never a deep copy.
pub type Shared<K> = Arc<K>;

/// Run `$body` with `$k` bound to the typed kind of a `KindId`: the one place where type-erased
/// paths (garbage collector, scenario steps) meet the typed stores.
macro_rules! with_kind {
    ($kind:expr, $k:ident => $body:expr) => {
        match $kind {
            $crate::api::KindId::LeaderWorkerSet => {
                type $k = ::lws::api::LeaderWorkerSet;
                $body
            }
            $crate::api::KindId::StatefulSet => {
                type $k = ::k8s_openapi::api::apps::v1::StatefulSet;
                $body
            }
            $crate::api::KindId::ControllerRevision => {
                type $k = ::k8s_openapi::api::apps::v1::ControllerRevision;
                $body
            }
            $crate::api::KindId::Pod => {
                type $k = ::k8s_openapi::api::core::v1::Pod;
                $body
            }
            $crate::api::KindId::Service => {
                type $k = ::k8s_openapi::api::core::v1::Service;
                $body
            }
            $crate::api::KindId::Node => {
                type $k = ::k8s_openapi::api::core::v1::Node;
                $body
            }
            $crate::api::KindId::Lease => {
                type $k = ::k8s_openapi::api::coordination::v1::Lease;
                $body
            }
            $crate::api::KindId::PodDisruptionBudget => {
                type $k = ::k8s_openapi::api::policy::v1::PodDisruptionBudget;
                $body
            }
            $crate::api::KindId::DisaggregatedSet => {
                type $k = ::lws::disagg::api::DisaggregatedSet;
                $body
            }
            $crate::api::KindId::DisaggregatedSetRoleScaler => {
                type $k = ::lws::disagg::api::DisaggregatedSetRoleScaler;
                $body
            }
            $crate::api::KindId::PodGroup => {
                type $k = ::lws::volcano::PodGroup;
                $body
            }
        }
    };
}
pub(crate) use with_kind;
