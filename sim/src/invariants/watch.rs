//! One watched LWS: the state every family of checks keeps for it, and how the watch-log
//! entries of its own objects (the LWS, its pods, its StatefulSets) feed them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use lws::api::{keys, LeaderWorkerSet};
use lws::k8s;

use super::groups::GroupChecks;
use super::model::{group_of, Model, Revision, RevisionHashing};
use super::partition::PartitionChecks;
use super::quiescence::Quiescence;
use super::report::Sink;
use super::restart::RestartChecks;
use super::status::StatusChecks;
use super::{FaultEffect, ObjectRef};
use crate::api::{EventType, Selector};
use crate::trace::TraceEntry;

/// Which LWS a watch is for, shared with the sinks that report its violations.
pub(super) struct WatchId {
    pub lws: ObjectRef,
    /// When this LWS was created: a pod or StatefulSet created before it belongs to an earlier
    /// LWS of the same name, whose objects the garbage collector has yet to remove, unless
    /// this LWS adopts them (`Watch::adopts`).
    pub created: Option<Time>,
    pub uid: String,
    /// `LWS <namespace>/<name>: `, put before its violations when the run has several LWSs.
    pub label: String,
}

pub(super) struct Watch {
    pub id: Arc<WatchId>,
    generation: Option<i64>,
    /// Whether the LWS has been written since its spec last changed: a write that does not
    /// bump the generation is a status write, so the status describes the current spec.
    status_current: bool,
    /// The LWS has a deletionTimestamp (or is gone): it owes no availability any more, and it
    /// has converged once it is gone.
    deleting: bool,
    gone: bool,
    /// Last seen generation per StatefulSet of this LWS, to tell spec changes from status writes.
    sts_generations: BTreeMap<String, Option<i64>>,
    pub model: Model,
    pub groups: GroupChecks,
    partition: PartitionChecks,
    restart: RestartChecks,
    status: StatusChecks,
    quiet: Quiescence,
    /// Groups the entries read since the last `check` touched.
    dirty: BTreeSet<i32>,
    /// This LWS has taken over the objects of an earlier LWS of the same name: those created
    /// before it are no longer ignored.
    adopted: bool,
    /// The revisions of the earlier LWSs of this name, which adopted objects may run.
    inherited: Vec<Revision>,
    /// Writes (pod name, resourceVersion) of pods an earlier LWS of this name left, seen since
    /// the last `check`: the restart policy deleting one of them restarts that LWS's group, not
    /// one of this LWS's.
    ignored_writes: BTreeSet<(String, u64)>,
    /// Faults that hit an earlier LWS's pods before this LWS took them over, with their time:
    /// what they made due is due from this LWS once it has (`take_in`).
    pending_faults: Vec<(FaultEffect, u64)>,
}

impl Watch {
    pub fn new(l: &LeaderWorkerSet) -> Watch {
        let lws = ObjectRef::of(&l.metadata);
        Watch {
            id: Arc::new(WatchId {
                label: format!("LWS {}/{}: ", lws.namespace, lws.name),
                lws,
                created: l.metadata.creation_timestamp.clone(),
                uid: k8s::uid(&l.metadata).to_string(),
            }),
            generation: None,
            status_current: true,
            deleting: false,
            gone: false,
            sts_generations: BTreeMap::new(),
            model: Model::new(),
            groups: GroupChecks::default(),
            partition: PartitionChecks::default(),
            restart: RestartChecks::default(),
            status: StatusChecks::default(),
            quiet: Quiescence::default(),
            dirty: BTreeSet::new(),
            adopted: false,
            inherited: Vec::new(),
            ignored_writes: BTreeSet::new(),
            pending_faults: Vec::new(),
        }
    }

    /// The watch of an LWS created again under the name of `earlier`, which is gone: it knows
    /// the revisions the earlier one's objects run.
    pub fn succeed(l: &LeaderWorkerSet, earlier: Watch) -> Watch {
        let mut w = Watch::new(l);
        w.inherited = earlier.inherited;
        for r in earlier.model.revisions {
            if !w.inherited.contains(&r) {
                w.inherited.push(r);
            }
        }
        // Until the garbage collector has removed them, the earlier LWS's pods carry its
        // revisions, and the controller, which lists pods by label, may say an update is in
        // progress: not a spurious UpgradeInProgress.
        for r in &w.inherited {
            w.status.on_revision(&r.key);
        }
        w
    }

    pub fn status_current(&self) -> bool {
        self.status_current
    }

    /// Being deleted: `Some(gone)`.
    pub fn deletion(&self) -> Option<bool> {
        self.deleting.then_some(self.gone)
    }

    pub fn is_gone(&self) -> bool {
        self.gone
    }

    /// Groups were touched since the last `check`.
    pub fn is_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Why the rollout is not complete, in words.
    pub fn stuck_state(&self) -> String {
        let name = format!("LWS {}/{}", self.id.lws.namespace, self.id.lws.name);
        if self.deleting && !self.gone {
            return format!("{name} is being deleted and still exists");
        }
        format!("{name}: {}", self.model.stuck_state())
    }

    /// One watch event of this LWS.
    pub fn on_lws(
        &mut self,
        out: &mut Sink,
        ty: EventType,
        l: &LeaderWorkerSet,
        at_ms: u64,
        hashing: RevisionHashing,
    ) {
        if ty == EventType::Deleted {
            (self.deleting, self.gone) = (true, true);
            self.quiet.close();
            return;
        }
        if l.metadata.deletion_timestamp.is_some() {
            // Its objects go, whatever deletes them: not a change at rest.
            self.deleting = true;
            self.quiet.close();
        }
        // Status writes do not change the spec: skip them without hashing templates.
        self.status_current = l.metadata.generation == self.generation;
        if l.metadata.generation != self.generation {
            self.generation = l.metadata.generation;
            self.on_spec(l, at_ms, hashing);
        }
        self.status.on_lws(out, l, hashing);
    }

    fn on_spec(&mut self, l: &LeaderWorkerSet, at_ms: u64, hashing: RevisionHashing) {
        // A new spec is a reason to change things: the LWS is no longer at rest (a
        // DisaggregatedSet controller scaling its role's LWS after a restart, say).
        self.quiet.close();
        let before = self.model.replicas;
        let knobs_before = (self.model.replicas, self.model.max_unavailable);
        let floor_before = self.model.replicas - self.model.max_unavailable;
        let key = hashing.key(l);
        self.status.on_revision(&key);
        self.restart.on_lws_spec(l);
        self.partition.on_lws_spec(l);
        self.model.observe_spec(l, key);
        let floor = self.model.replicas - self.model.max_unavailable;
        self.partition.on_floor(floor_before, floor, at_ms);
        self.groups.on_recount(&self.model, knobs_before, at_ms);
        self.dirty.extend(self.model.groups.keys().copied());
        if self.model.replicas < before {
            self.groups.on_scale_down(&self.model);
        }
    }

    /// Whether an object carrying this LWS's name label was created before it (by an earlier
    /// LWS of the same name) and has not been adopted.
    fn predates(&self, meta: &ObjectMeta) -> bool {
        !self.adopted && self.created_before(meta)
    }

    /// Whether an object was created before this LWS.
    fn created_before(&self, meta: &ObjectMeta) -> bool {
        match (&self.id.created, &meta.creation_timestamp) {
            (Some(lws), Some(obj)) => obj.0 < lws.0,
            _ => false,
        }
    }

    /// Whether this event is this LWS taking over the earlier LWS's leader StatefulSet. If its
    /// controller applies the leader StatefulSet before the garbage collector gets to the old
    /// one, the apply makes this LWS the owner (server-side apply drops the owner reference the
    /// same manager set before), and everything under it stays.
    fn adopts(&self, ty: EventType, sts: &StatefulSet) -> bool {
        ty != EventType::Deleted
            && k8s::name(&sts.metadata) == self.id.lws.name
            && k8s::controller_of(&sts.metadata).is_some_and(|o| o.uid == self.id.uid)
    }

    /// Take in the earlier LWS's objects as they are now (a relist): its StatefulSets, then
    /// its pods, as if created now. The leader StatefulSet is left to the adopting event.
    fn take_in(&mut self, out: &mut Sink) {
        self.adopted = true;
        self.model.inherit(&self.inherited);
        let ns = self.id.lws.namespace.as_str();
        let selector = Selector::labels([(keys::SET_NAME, self.id.lws.name.as_str())]);
        let sets: Vec<_> = out
            .api
            .list::<StatefulSet>(Some(ns), &selector)
            .into_iter()
            .filter(|s| {
                self.created_before(&s.metadata) && k8s::name(&s.metadata) != self.id.lws.name
            })
            .collect();
        let pods: Vec<_> = out
            .api
            .list::<Pod>(Some(ns), &selector)
            .into_iter()
            .filter(|p| self.created_before(&p.metadata))
            .collect();
        for sts in &sets {
            self.on_statefulset(out, EventType::Added, sts);
        }
        for p in &pods {
            self.on_pod(out, EventType::Added, p);
        }
        for (fault, at_ms) in std::mem::take(&mut self.pending_faults) {
            self.on_fault(&fault, at_ms);
        }
    }

    /// One watch event of a pod carrying this LWS's name label, in its namespace.
    pub fn on_pod(&mut self, out: &mut Sink, ty: EventType, p: &Pod) {
        if self.predates(&p.metadata) {
            let rv = p
                .metadata
                .resource_version
                .as_deref()
                .and_then(|r| r.parse().ok());
            if let Some(rv) = rv {
                self.ignored_writes
                    .insert((k8s::name(&p.metadata).to_string(), rv));
            }
            return;
        }
        let Some(pe) = self.model.observe_pod(&self.id.lws.name, ty, p) else {
            return;
        };
        self.dirty.insert(pe.group);
        self.restart.on_pod(&pe);
        if (pe.deleted || pe.terminating) && !pe.was_terminating {
            let what = format!("pod {} was deleted", pe.name);
            self.quiet.changed(out, what, pe.name);
        }
    }

    /// One watch event of a StatefulSet carrying this LWS's name label, in its namespace.
    /// Whether it is a write of the leader StatefulSet (not a deletion).
    pub fn on_statefulset(&mut self, out: &mut Sink, ty: EventType, sts: &StatefulSet) -> bool {
        if self.predates(&sts.metadata) {
            if !self.adopts(ty, sts) {
                return false;
            }
            self.take_in(out);
        }
        let sts_name = k8s::name(&sts.metadata).to_string();
        let leader_sts = sts_name == self.id.lws.name;
        if leader_sts && ty != EventType::Deleted {
            self.partition.on_leader_sts(out, &self.model, sts);
        }
        // A spec change bumps generation; a create or delete changes the set of specs.
        let generation = sts.metadata.generation;
        let before = match ty {
            EventType::Deleted => self.sts_generations.remove(&sts_name),
            _ => self.sts_generations.insert(sts_name.clone(), generation),
        };
        // The garbage collector removing the worker StatefulSet of a group already gone (a
        // released surge group, a scaled-away one) is cleanup, not a change.
        let leftover =
            group_of(&self.id.lws.name, &sts_name).is_some_and(|g| g >= self.model.replicas);
        let changed = match ty {
            EventType::Added => true,
            EventType::Deleted => !leftover,
            EventType::Modified => before.is_some_and(|g| g != generation),
        };
        if leader_sts && ty == EventType::Modified && changed {
            self.partition.check_storm(out, &sts_name);
        }
        if changed && self.quiet.is_open() {
            let what = format!("StatefulSet {sts_name} spec changed ({ty:?})");
            self.quiet.changed(out, what, sts_name);
        }
        leader_sts && ty != EventType::Deleted
    }

    /// After the entries since the last look: the checks the trace `entries` and the touched
    /// groups can affect. Returns the touched groups.
    pub fn check(&mut self, out: &mut Sink, entries: &[TraceEntry], now: u64) -> BTreeSet<i32> {
        self.groups.on_trace(entries, &self.id.lws);
        // An LWS being deleted owes no restarts: its groups go, whatever deletes them.
        if !self.deleting {
            let (namespace, name) = (&self.id.lws.namespace, &self.id.lws.name);
            let theirs = &self.ignored_writes;
            let ours =
                |e: &&TraceEntry| theirs.is_empty() || !theirs.contains(&(e.name.clone(), e.rv));
            let entries = entries.iter().filter(ours);
            self.restart
                .check_restarts(out, &self.model, namespace, name, entries);
            self.restart.check_required(out, &self.model);
        }
        self.ignored_writes.clear();
        let dirty = std::mem::take(&mut self.dirty);
        for &g in &dirty {
            let change = self.model.reevaluate(g);
            self.partition.on_group(&self.model, g, change, now);
            self.groups.on_group(out, &self.model, g, change);
        }
        if !self.deleting {
            self.groups.check_availability(out, &self.model);
        }
        dirty
    }

    /// A fault is about to fire (or, for `ContainerRestarted`, has fired) at `now_ms`: the
    /// pods of it in this LWS's namespace that the model knows.
    pub fn on_fault(&mut self, fault: &FaultEffect, now_ms: u64) {
        if !self.adopted && !self.inherited.is_empty() {
            if let Some(f) = self.of_earlier_pods(fault) {
                self.pending_faults.push((f, now_ms));
            }
        }
        let ours = |p: &&ObjectRef| p.namespace == self.id.lws.namespace;
        let (pods, disrupts, requires): (Vec<&ObjectRef>, bool, bool) = match fault {
            FaultEffect::PodsDisrupted { pods } => (pods.iter().filter(ours).collect(), true, true),
            FaultEffect::NodeFailed { pods } => (pods.iter().filter(ours).collect(), true, false),
            FaultEffect::ContainerCrashing { pod } => {
                (Some(pod).filter(ours).into_iter().collect(), true, false)
            }
            FaultEffect::ContainerRestarted { pod } => {
                (Some(pod).filter(ours).into_iter().collect(), false, true)
            }
        };
        if requires {
            for p in &pods {
                self.restart
                    .require(&self.model, &self.id.lws.name, &p.name, now_ms);
            }
        }
        if disrupts {
            let groups: Vec<i32> = pods
                .iter()
                .filter_map(|p| self.model.pods.get(&p.name).map(|i| i.group))
                .collect();
            self.restart.owe(&groups, now_ms);
            self.groups.disrupt(&groups, now_ms);
        }
    }

    /// The part of `fault` that hit pods of this namespace the model does not know: an earlier
    /// LWS's, not (yet) taken over.
    fn of_earlier_pods(&self, fault: &FaultEffect) -> Option<FaultEffect> {
        let earlier = |p: &&ObjectRef| {
            p.namespace == self.id.lws.namespace && !self.model.pods.contains_key(&p.name)
        };
        let some = |pods: &[ObjectRef]| {
            let pods: Vec<ObjectRef> = pods.iter().filter(earlier).cloned().collect();
            (!pods.is_empty()).then_some(pods)
        };
        match fault {
            FaultEffect::PodsDisrupted { pods } => {
                some(pods).map(|pods| FaultEffect::PodsDisrupted { pods })
            }
            FaultEffect::NodeFailed { pods } => {
                some(pods).map(|pods| FaultEffect::NodeFailed { pods })
            }
            FaultEffect::ContainerCrashing { pod } | FaultEffect::ContainerRestarted { pod } => {
                earlier(&pod).then(|| fault.clone())
            }
        }
    }

    /// A restart or resync at rest opens a window in which nothing may change.
    pub fn open_quiet_window(&mut self, now_ms: u64) {
        // After an injected fault, a restart may legitimately finish the fault's work (a group
        // restart the restart policy owes), so only an undisturbed rest is held to quiescence.
        if !self.deleting && self.model.rollout_complete() && !self.groups.ever_disrupted() {
            self.quiet.open(now_ms);
        }
    }

    pub fn close_quiet_window(&mut self) {
        self.quiet.close();
    }

    /// End of run: restarts still owed are late if their time has come.
    pub fn finish(&mut self, out: &mut Sink) {
        if !self.deleting {
            self.restart.check_required(out, &self.model);
        }
    }
}
