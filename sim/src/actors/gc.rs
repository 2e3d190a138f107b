//! The garbage collector (kubernetes `pkg/controller/garbagecollector/garbagecollector.go`
//! @02830ed2 and `graph_builder.go`).
//!
//! It reads the cross-kind metadata log with its own lag, keeps an owner -> dependents graph by
//! UID, and acts asynchronously: a dependent is deleted only after its owners are *gone* (or
//! re-created under another UID), checked by a live lookup. Foreground owners wait for their
//! blocking dependents; orphan owners release theirs. Deletes carry the UID and resourceVersion
//! preconditions of Kubernetes 1.34+ (PR #132632).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::json;

use crate::api::{
    with_kind, ApiServer, Cursor, DeleteOptions, EventType, HasMeta, Key, KindId, MetaEvent,
    Propagation, FINALIZER_FOREGROUND, FINALIZER_ORPHAN,
};
use crate::lookup::LookupMap;
use crate::queue::WorkQueue;

pub const ACTOR: &str = "garbage-collector";

#[derive(Clone, Debug)]
struct GraphNode {
    kind: KindId,
    key: Key,
    owners: Vec<OwnerReference>,
}

pub struct GarbageCollector {
    /// Registered with the metadata log, so compaction keeps what the GC has not read.
    cursor: Cursor,
    lag_ms: u64,
    /// By UID; looked up, never walked (hashed: UIDs share a long prefix).
    nodes: LookupMap<String, GraphNode>,
    dependents: LookupMap<String, BTreeSet<String>>,
    /// UIDs to examine (`attemptToDelete`) and owners to process (`attemptToOrphan`, foreground).
    attempt_delete: BTreeSet<String>,
    owners_to_process: BTreeSet<String>,
    /// Owners being deleted with the foreground or orphan finalizer: their dependents' changes
    /// re-trigger them.
    deleting_owners: BTreeSet<String>,
    /// Failed writes waiting for their retry: ("owner" | "item", uid).
    retries: WorkQueue,
    now_ms: u64,
}

impl GarbageCollector {
    pub fn new(api: &ApiServer, lag_ms: u64) -> GarbageCollector {
        let mut gc = GarbageCollector {
            cursor: api.meta_log().reader(0),
            lag_ms,
            nodes: LookupMap::default(),
            dependents: LookupMap::default(),
            attempt_delete: BTreeSet::new(),
            owners_to_process: BTreeSet::new(),
            deleting_owners: BTreeSet::new(),
            retries: WorkQueue::default(),
            now_ms: 0,
        };
        // Build the graph from history so a GC started late knows every object.
        gc.poll(api, u64::MAX);
        gc
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        let log = api
            .meta_log()
            .get(self.cursor.get())
            .map(|e| e.at_ms.saturating_add(self.lag_ms));
        [log, self.retries.next_due_ms()]
            .into_iter()
            .flatten()
            .min()
    }

    /// A failed write is retried with the work queue's back-off (the GC's queues are
    /// rate-limited like any controller's).
    fn retry(&mut self, uid: &str, owner: bool, now_ms: u64) {
        let tag = if owner { "owner" } else { "item" };
        self.retries
            .add_rate_limited((tag.to_string(), uid.to_string()), now_ms);
    }

    fn poll(&mut self, api: &ApiServer, now_ms: u64) {
        let log = api.meta_log();
        assert!(
            !log.expired(self.cursor.get()),
            "the GC fell behind the metadata log's compaction"
        );
        while let Some(e) = log.get(self.cursor.get()) {
            if e.at_ms.saturating_add(self.lag_ms) > now_ms {
                break;
            }
            self.cursor.advance();
            match e.ty {
                EventType::Deleted => {
                    self.deleting_owners.remove(e.uid());
                    if let Some(old) = self.nodes.remove(e.uid()) {
                        for o in &old.owners {
                            if let Some(d) = self.dependents.get_mut(&o.uid) {
                                d.remove(e.uid());
                            }
                            if self.deleting_owners.contains(&o.uid) {
                                self.owners_to_process.insert(o.uid.clone());
                            }
                        }
                    }
                    if let Some(deps) = self.dependents.get(e.uid()) {
                        self.attempt_delete.extend(deps.iter().cloned());
                    }
                }
                _ => self.observe_update(e),
            }
        }
    }

    /// An added or updated object (`processGraphChanges`, add/update arms): re-link it to its
    /// owners; an owner waiting for its dependents is re-examined only when this object drops
    /// its reference or stops blocking (`addUnblockedOwnersToDeleteQueue`), and an object that
    /// starts waiting for its own dependents has them examined (`processTransitions`).
    fn observe_update(&mut self, e: &MetaEvent) {
        let (uid, owners) = (e.uid(), e.owners());
        // A UID names one object for good (kind and key never change): only its owners can.
        let same_node = self.nodes.get(uid).is_some_and(|n| n.owners == owners);
        for o in owners {
            if !self.nodes.contains_key(&o.uid) {
                // An owner the graph has never seen: verify it (virtual node).
                self.attempt_delete.insert(uid.to_string());
            }
        }
        if !same_node {
            self.relink(e);
        }
        let waits = e.deleting()
            && e.finalizers()
                .iter()
                .any(|f| f == FINALIZER_FOREGROUND || f == FINALIZER_ORPHAN);
        if waits && self.deleting_owners.insert(uid.to_string()) {
            self.owners_to_process.insert(uid.to_string());
            if e.finalizers().iter().any(|f| f == FINALIZER_FOREGROUND) {
                if let Some(deps) = self.dependents.get(uid) {
                    self.attempt_delete.extend(deps.iter().cloned());
                }
            }
        }
    }

    /// Re-link a new or changed node to its owners: drop it from its old owners' dependents
    /// (queueing an owner it stopped blocking), add it to its new owners', store it. A change
    /// that keeps the owners (most: status) leaves the graph as it is, so it skips this.
    fn relink(&mut self, e: &MetaEvent) {
        let (uid, owners) = (e.uid(), e.owners());
        let old_owners = self
            .nodes
            .get(uid)
            .map(|n| n.owners.clone())
            .unwrap_or_default();
        for o in &old_owners {
            if let Some(d) = self.dependents.get_mut(&o.uid) {
                d.remove(uid);
            }
            if unblocks(o, owners) && self.deleting_owners.contains(&o.uid) {
                self.owners_to_process.insert(o.uid.clone());
            }
        }
        for o in owners {
            self.dependents
                .entry(o.uid.clone())
                .or_default()
                .insert(uid.to_string());
        }
        let (ns, name) = e.key();
        self.nodes.insert(
            uid.to_string(),
            GraphNode {
                kind: e.kind,
                key: (ns.to_string(), name.to_string()),
                owners: owners.to_vec(),
            },
        );
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        self.poll(api, now_ms);
        while let Some((tag, uid)) = self.retries.pop_due(now_ms) {
            if tag == "owner" {
                self.owners_to_process.insert(uid);
            } else {
                self.attempt_delete.insert(uid);
            }
        }
        self.now_ms = now_ms;
        for uid in std::mem::take(&mut self.owners_to_process) {
            self.process_owner(api, &uid);
        }
        for uid in std::mem::take(&mut self.attempt_delete) {
            self.attempt_to_delete(api, &uid);
        }
    }

    /// Foreground: delete dependents, then drop the finalizer once no blocking dependent is
    /// left. Orphan: remove the owner's refs from its dependents, then drop the finalizer.
    fn process_owner(&mut self, api: &mut ApiServer, uid: &str) {
        let Some(node) = self.nodes.get(uid).cloned() else {
            return;
        };
        let Some(meta) = live_meta(api, node.kind, &node.key) else {
            return;
        };
        if meta.uid.as_deref() != Some(uid) || meta.deletion_timestamp.is_none() {
            return;
        }
        let finalizers = meta.finalizers.clone().unwrap_or_default();
        let deps: Vec<String> = self
            .dependents
            .get(uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        if finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
            for d in &deps {
                let Some(dn) = self.nodes.get(d).cloned() else {
                    continue;
                };
                let remaining: Vec<OwnerReference> =
                    dn.owners.iter().filter(|o| o.uid != uid).cloned().collect();
                let _ = patch_owners(api, dn.kind, &dn.key, &remaining);
            }
            if !remove_finalizer(api, node.kind, &node.key, &meta, FINALIZER_ORPHAN) {
                self.retry(uid, true, self.now_ms);
            }
            return;
        }
        if finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) {
            self.process_deleting_dependents(api, &node, &meta, uid, &deps);
        }
    }

    /// `processDeletingDependentsItem`: the blocking dependents are the graph's (dependents
    /// whose reference to the owner has `blockOwnerDeletion`), whether or not a live read would
    /// still find them; with none the finalizer goes, otherwise each one not itself waiting for
    /// its dependents is examined (`attemptToDelete`). The owner is looked at again only when a
    /// dependent is deleted or drops its reference (`observe_update`, `poll`).
    fn process_deleting_dependents(
        &mut self,
        api: &mut ApiServer,
        node: &GraphNode,
        meta: &ObjectMeta,
        uid: &str,
        deps: &[String],
    ) {
        let blocking: Vec<&String> = deps
            .iter()
            .filter(|d| {
                self.nodes.get(*d).is_some_and(|dn| {
                    dn.owners
                        .iter()
                        .any(|o| o.uid == uid && o.block_owner_deletion == Some(true))
                })
            })
            .collect();
        if blocking.is_empty() {
            if !remove_finalizer(api, node.kind, &node.key, meta, FINALIZER_FOREGROUND) {
                self.retry(uid, true, self.now_ms);
            }
            return;
        }
        for d in blocking {
            if !self.deleting_owners.contains(d) {
                self.attempt_delete.insert(d.clone());
            }
        }
    }

    /// `attemptToDeleteItem`: classify owners by live lookup; delete when none is solid.
    fn attempt_to_delete(&mut self, api: &mut ApiServer, uid: &str) {
        let Some(node) = self.nodes.get(uid).cloned() else {
            return;
        };
        let Some(meta) = live_meta(api, node.kind, &node.key) else {
            return;
        };
        if meta.uid.as_deref() != Some(uid) || meta.deletion_timestamp.is_some() {
            return;
        }
        let owners = meta.owner_references.clone().unwrap_or_default();
        if owners.is_empty() {
            return;
        }
        let (mut solid, mut dangling, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
        for o in &owners {
            let Some(kind) = KindId::parse(&o.kind) else {
                solid.push(o.clone()); // an owner kind we do not store: never collect
                continue;
            };
            let owner_ns = if kind.namespaced() {
                node.key.0.clone()
            } else {
                String::new()
            };
            match live_meta(api, kind, &(owner_ns, o.name.clone())) {
                Some(m) if m.uid.as_deref() == Some(o.uid.as_str()) => {
                    let fg = m.deletion_timestamp.is_some()
                        && m.finalizers
                            .iter()
                            .flatten()
                            .any(|f| f == FINALIZER_FOREGROUND);
                    if fg {
                        waiting.push(o.clone())
                    } else {
                        solid.push(o.clone())
                    }
                }
                _ => dangling.push(o.clone()),
            }
        }
        if !solid.is_empty() {
            if !dangling.is_empty() || !waiting.is_empty() {
                let _ = patch_owners(api, node.kind, &node.key, &solid);
            }
            return;
        }
        let has_deps = self.dependents.get(uid).is_some_and(|d| !d.is_empty());
        let finalizers = meta.finalizers.clone().unwrap_or_default();
        let policy = if !waiting.is_empty() && has_deps {
            Propagation::Foreground
        } else if finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
            Propagation::Orphan
        } else if finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) {
            Propagation::Foreground
        } else {
            Propagation::Background
        };
        if !delete_dyn(api, node.kind, &node.key, &meta, policy) {
            self.retry(uid, false, self.now_ms);
        }
    }
}

/// A stored object's metadata, read through the object the store holds (no copy).
struct LiveMeta(std::sync::Arc<dyn HasMeta>);

impl std::ops::Deref for LiveMeta {
    type Target = ObjectMeta;

    fn deref(&self) -> &ObjectMeta {
        self.0.object_meta()
    }
}

fn live_meta(api: &ApiServer, kind: KindId, key: &Key) -> Option<LiveMeta> {
    with_kind!(kind, K => api.try_get::<K>(&key.0, &key.1).map(|o| LiveMeta(o)))
}

fn delete_dyn(
    api: &mut ApiServer,
    kind: KindId,
    key: &Key,
    meta: &ObjectMeta,
    policy: Propagation,
) -> bool {
    let opts = DeleteOptions {
        propagation: Some(policy),
        precondition_uid: meta.uid.clone(),
        precondition_rv: meta.resource_version.clone(),
        ..Default::default()
    };
    let r = with_kind!(kind, K => api.delete::<K>(ACTOR, &key.0, &key.1, &opts).map(|_| ()));
    r.is_ok() || r.is_err_and(|e| e.is(crate::api::Reason::NotFound))
}

fn patch_owners(
    api: &mut ApiServer,
    kind: KindId,
    key: &Key,
    owners: &[OwnerReference],
) -> Result<(), ()> {
    let patch = json!({ "metadata": { "ownerReferences": owners } });
    with_kind!(kind, K => api.merge_patch::<K>(ACTOR, &key.0, &key.1, &patch).map(|_| ()).map_err(|_| ()))
}

fn remove_finalizer(
    api: &mut ApiServer,
    kind: KindId,
    key: &Key,
    meta: &ObjectMeta,
    finalizer: &str,
) -> bool {
    let rest: Vec<String> = meta
        .finalizers
        .iter()
        .flatten()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    let patch =
        json!({ "metadata": { "finalizers": rest, "resourceVersion": meta.resource_version } });
    let r = with_kind!(kind, K => api.merge_patch::<K>(ACTOR, &key.0, &key.1, &patch).map(|_| ()));
    r.is_ok() || r.is_err_and(|e| e.is(crate::api::Reason::NotFound))
}

/// `addUnblockedOwnersToDeleteQueue`: a blocking reference `old` that is gone from `now`, or
/// is still there without `blockOwnerDeletion`.
fn unblocks(old: &OwnerReference, now: &[OwnerReference]) -> bool {
    let blocked = |r: &OwnerReference| r.block_owner_deletion == Some(true);
    blocked(old)
        && now
            .iter()
            .find(|r| r.uid == old.uid)
            .is_none_or(|r| !blocked(r))
}
