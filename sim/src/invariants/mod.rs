//! Availability invariants, checked after every simulated event at O(change) cost: the checker
//! reads only the watch-log (and trace) entries written since its last look, feeds them to its
//! model of the watched LWS and to one state machine per family of checks, and re-evaluates
//! only the groups those entries touched.
//!
//! The checker watches one LWS, the first one created, identified by namespace and name; its
//! pods and StatefulSets are those in its namespace carrying its name label. Objects of a
//! same-named LWS in another namespace are not its own.
//!
//! Layout: `model.rs` (revisions, pods, per-group state and counters), one file per family of
//! checks (`groups.rs`, `partition.rs`, `restart.rs`, `status.rs`, `quiescence.rs`), `id.rs`
//! (the invariants by name) and `report.rs` (violations). This file dispatches.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lws::api::{keys, LeaderWorkerSet};
use lws::k8s;

use crate::api::{ApiServer, Cursor, EventType, Kind};
use crate::timeline::{GroupState, Rev, Timeline};

mod groups;
mod id;
mod model;
mod partition;
mod quiescence;
mod report;
mod restart;
mod status;

use groups::GroupChecks;
pub use id::InvariantId;
pub use model::RevisionHashing;
use model::{group_of, Model, Phase};
use partition::PartitionChecks;
use quiescence::Quiescence;
use report::Sink;
pub use report::Violation;
use restart::RestartChecks;
use status::StatusChecks;

pub const AVAILABILITY: InvariantId = InvariantId::Availability;
pub const GROUP_CONSISTENCY: InvariantId = InvariantId::GroupConsistency;
pub const UPDATE_ORDER: InvariantId = InvariantId::UpdateOrder;
pub const SURGE_BOUND: InvariantId = InvariantId::SurgeBound;
pub const CONVERGENCE: InvariantId = InvariantId::Convergence;
pub const QUIESCENCE: InvariantId = InvariantId::Quiescence;
pub const TIMEOUT: InvariantId = InvariantId::Timeout;
pub const CHECK: InvariantId = InvariantId::Check;
pub const LIVENESS: InvariantId = InvariantId::Liveness;
pub const GROUP_RESTART: InvariantId = InvariantId::GroupRestart;
pub const STATUS_CONDITIONS: InvariantId = InvariantId::StatusConditions;
pub const PARTITION_BUDGET: InvariantId = InvariantId::PartitionBudget;
pub const REQUIRED_RESTART: InvariantId = InvariantId::RequiredRestart;
pub const WRITE_STORM: InvariantId = InvariantId::WriteStorm;

/// `writeStorm`: more leader StatefulSet spec changes than this within `STORM_WINDOW_MS`.
pub const STORM_WRITES: usize = 50;
pub const STORM_WINDOW_MS: u64 = 10_000;

/// How long a group restart the restart policy owes may take: a controller pod that was down
/// is back (restart delay and a 15 s lease) well within it.
pub const RESTART_DUE_MS: u64 = 120_000;

/// How long a disrupted group must stay available before it counts as recovered.
pub const DISRUPTION_SETTLE_MS: u64 = 60_000;

/// A controller is not blamed for what it cannot have seen yet: a group down for less than
/// this counts as up when a partition move is judged (watch lags are milliseconds).
pub const STALE_VIEW_MS: u64 = 5_000;

/// The names of every invariant a scenario can enable (`timeout` and `check` are always on).
pub const ALL: [&str; 11] = {
    let mut out = [""; 11];
    let mut i = 0;
    while i < out.len() {
        out[i] = InvariantId::SELECTABLE[i].as_str();
        i += 1;
    }
    out
};

/// A namespaced object: namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    pub namespace: String,
    pub name: String,
}

impl ObjectRef {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> ObjectRef {
        ObjectRef {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    pub fn of(meta: &ObjectMeta) -> ObjectRef {
        ObjectRef::new(k8s::namespace(meta), k8s::name(meta))
    }

    fn is(&self, meta: &ObjectMeta) -> bool {
        self.name == k8s::name(meta) && self.namespace == k8s::namespace(meta)
    }
}

/// What an injected fault does, as the checker needs to know it. The scenario runner tells the
/// checker just before the fault fires, with the pods it is aimed at (any namespace: the
/// checker keeps those of its LWS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultEffect {
    /// Pods about to be deleted or evicted (`deletePod`, `drainNode`): each group losing one
    /// is disrupted and owes one restart, and under RecreateGroupOnPodRestart each pod that is
    /// a live member of its group's current generation makes its group's recreation due.
    PodsDisrupted { pods: Vec<ObjectRef> },
    /// A node about to fail with these pods on it (`failNode`): their groups are disrupted and
    /// each owes one restart.
    NodeFailed { pods: Vec<ObjectRef> },
    /// A container of this pod about to be crashed (`crashContainer`): its group is disrupted
    /// and owes one restart.
    ContainerCrashing { pod: ObjectRef },
    /// The crash did restart a container of this pod (it was running): under
    /// RecreateGroupOnPodRestart its group's recreation is due, as for `PodsDisrupted`.
    ContainerRestarted { pod: ObjectRef },
}

pub struct Checker {
    enabled: BTreeSet<InvariantId>,
    /// What the release under test hashes into its revision key.
    hashing: RevisionHashing,
    /// The LWS under watch: the first one seen.
    lws: Option<ObjectRef>,
    lws_cursor: usize,
    pod_cursor: usize,
    sts_cursor: usize,
    /// The three cursors above registered with their watch logs, so compaction keeps what the
    /// checker has not read (`api::watch`).
    readers: Option<[Cursor; 3]>,
    trace_cursor: usize,
    lws_generation: Option<i64>,
    /// Whether the watched LWS has been written since its spec last changed: a write that does
    /// not bump the generation is a status write, so the status describes the current spec.
    status_current: bool,
    /// The watched LWS has a deletionTimestamp (or is gone): it owes no availability any more,
    /// and it has converged once it is gone.
    lws_deleting: bool,
    lws_gone: bool,
    /// Last seen generation per StatefulSet of this LWS, to tell spec changes from status writes.
    sts_generations: BTreeMap<String, Option<i64>>,
    model: Model,
    groups: GroupChecks,
    partition: PartitionChecks,
    restart: RestartChecks,
    status: StatusChecks,
    quiet: Quiescence,
    /// Change points for the picture of the run, kept only when asked for.
    timeline: Option<Timeline>,
    pub violations: Vec<Violation>,
}

impl Checker {
    /// A checker with the named invariants enabled (names as `InvariantId::as_str` spells
    /// them; the scenario loader has validated them).
    pub fn new<S: AsRef<str>>(enabled: impl IntoIterator<Item = S>) -> Checker {
        let enabled = enabled
            .into_iter()
            .map(|n| {
                let n = n.as_ref();
                InvariantId::parse(n).unwrap_or_else(|| panic!("unknown invariant {n:?}"))
            })
            .collect();
        Checker {
            enabled,
            hashing: RevisionHashing::TemplateHash {
                network_config: true,
            },
            lws: None,
            lws_cursor: 0,
            pod_cursor: 0,
            sts_cursor: 0,
            readers: None,
            trace_cursor: 0,
            lws_generation: None,
            status_current: true,
            lws_deleting: false,
            lws_gone: false,
            sts_generations: BTreeMap::new(),
            model: Model::new(),
            groups: GroupChecks::default(),
            partition: PartitionChecks::default(),
            restart: RestartChecks::default(),
            status: StatusChecks::default(),
            quiet: Quiescence::default(),
            timeline: None,
            violations: Vec::new(),
        }
    }

    /// Record, from now on, the change points [`crate::timeline`] draws.
    pub fn record_timeline(&mut self) {
        self.timeline.get_or_insert_with(Timeline::default);
    }

    pub fn take_timeline(&mut self) -> Option<Timeline> {
        self.timeline.take()
    }

    /// Judge revisions as `profile`'s release hashes them (without this, as v0.4.1 does).
    /// Before the first observation only: the keys seen so far would not compare.
    pub fn for_profile(mut self, profile: &lws::profile::Profile) -> Checker {
        assert!(self.lws.is_none(), "for_profile before the first observe");
        self.hashing = RevisionHashing::of(profile);
        self
    }

    /// The namespace of the LWS under watch ("" before one is seen).
    pub fn namespace(&self) -> &str {
        self.lws.as_ref().map_or("", |l| l.namespace.as_str())
    }

    pub fn is_enabled(&self, invariant: InvariantId) -> bool {
        self.enabled.contains(&invariant)
    }

    /// The watched LWS's `replicas`.
    pub fn replicas(&self) -> i32 {
        self.model.replicas
    }

    /// The fewest groups available since every desired group first was.
    pub fn min_available(&self) -> Option<i32> {
        self.groups.min_available
    }

    /// `replicas - maxUnavailable`: the floor without disruptions.
    pub fn floor(&self) -> i32 {
        self.model.replicas - self.model.max_unavailable
    }

    pub fn available_groups(&self) -> i32 {
        self.model.counts.available
    }

    /// Every group below `replicas` is on the latest revision and ready, and no surge group is
    /// left.
    pub fn rollout_complete_groups(&self) -> bool {
        self.model.rollout_complete()
    }

    /// The watched LWS's status was written after its last spec change (a rollout is only
    /// complete once the status describes the new spec).
    pub fn status_current(&self) -> bool {
        self.status_current
    }

    /// Why the rollout is not complete, in words (for convergence and timeout reports).
    pub fn stuck_state(&self) -> String {
        let Some(lws) = &self.lws else {
            return "no LeaderWorkerSet was ever created".into();
        };
        let name = format!("LWS {}/{}", lws.namespace, lws.name);
        if self.lws_deleting && !self.lws_gone {
            return format!("{name} is being deleted and still exists");
        }
        format!("{name}: {}", self.model.stuck_state())
    }

    /// The watched LWS is being deleted (its convergence is its deletion completing) and
    /// whether it is gone.
    pub fn lws_deletion(&self) -> Option<bool> {
        self.lws_deleting.then_some(self.lws_gone)
    }

    /// A fault is about to fire (or, for `ContainerRestarted`, has fired) at `now_ms`.
    pub fn on_fault(&mut self, fault: &FaultEffect, now_ms: u64) {
        let Some(lws) = &self.lws else {
            return;
        };
        let ours = |p: &&ObjectRef| p.namespace == lws.namespace;
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
                    .require(&self.model, &lws.name, &p.name, now_ms);
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

    /// A restart or resync at rest opens a window in which nothing may change.
    pub fn open_quiet_window(&mut self, now_ms: u64) {
        // After an injected fault, a restart may legitimately finish the fault's work (a group
        // restart the restart policy owes), so only an undisturbed rest is held to quiescence.
        if self.model.rollout_complete() && !self.groups.ever_disrupted() {
            self.quiet.open(now_ms);
        }
    }

    pub fn close_quiet_window(&mut self) {
        self.quiet.close();
    }

    /// Record a violation decided outside the checker (timeout, check, convergence).
    pub fn external(&mut self, api: &ApiServer, invariant: InvariantId, message: String) {
        let namespace = self.lws.as_ref().map_or("", |l| l.namespace.as_str());
        Sink {
            api,
            enabled: &self.enabled,
            violations: &mut self.violations,
            namespace,
        }
        .violate(invariant, message, Vec::new());
    }

    /// End of run: restarts still owed are late if their time has come.
    pub fn finish(&mut self, api: &ApiServer) {
        if self.lws_deleting {
            return;
        }
        let namespace = self.lws.as_ref().map_or("", |l| l.namespace.as_str());
        let mut out = Sink {
            api,
            enabled: &self.enabled,
            violations: &mut self.violations,
            namespace,
        };
        self.restart.check_required(&mut out, &self.model);
    }

    /// Look at what changed since the last call and check the invariants it can affect.
    pub fn observe(&mut self, api: &ApiServer) {
        self.sync_readers(api);
        let mut dirty = BTreeSet::new();
        self.observe_lws(api, &mut dirty);
        let Some(lws) = self.lws.take() else {
            return;
        };
        self.observe_pods(api, &lws, &mut dirty);
        self.observe_statefulsets(api, &lws);
        let mut out = Sink {
            api,
            enabled: &self.enabled,
            violations: &mut self.violations,
            namespace: &lws.namespace,
        };
        let entries = &api.trace.entries[self.trace_cursor..];
        self.trace_cursor = api.trace.entries.len();
        self.groups.on_trace(entries);
        let model = &self.model;
        // An LWS being deleted owes no restarts: its groups go, whatever deletes them.
        if !self.lws_deleting {
            self.restart
                .check_restarts(&mut out, model, &lws.namespace, &lws.name, entries);
            self.restart.check_required(&mut out, model);
        }
        let now = api.now_ms();
        for &g in &dirty {
            let change = self.model.reevaluate(g);
            self.partition.on_group(&self.model, g, change, now);
            self.groups.on_group(&mut out, &self.model, g, change);
        }
        if !self.lws_deleting {
            self.groups.check_availability(&mut out, &self.model);
        }
        self.lws = Some(lws);
        if let Some(tl) = &mut self.timeline {
            record_groups(tl, &self.model, &dirty, now);
        }
    }

    /// Tell the watch logs how far the checker has read (registering on the first call).
    fn sync_readers(&mut self, api: &ApiServer) {
        let logs = (
            LeaderWorkerSet::store(api).log(),
            Pod::store(api).log(),
            StatefulSet::store(api).log(),
        );
        let at = [self.lws_cursor, self.pod_cursor, self.sts_cursor];
        let readers = self
            .readers
            .get_or_insert_with(|| [logs.0.reader(0), logs.1.reader(0), logs.2.reader(0)]);
        assert!(
            !logs.0.expired(at[0]) && !logs.1.expired(at[1]) && !logs.2.expired(at[2]),
            "the checker fell behind the watch logs' compaction"
        );
        for (r, at) in readers.iter().zip(at) {
            r.set(at);
        }
    }

    fn observe_lws(&mut self, api: &ApiServer, dirty: &mut BTreeSet<i32>) {
        let log = LeaderWorkerSet::store(api).log();
        while let Some(e) = log.get(self.lws_cursor) {
            self.lws_cursor += 1;
            let l = &e.obj;
            let lws = self.lws.get_or_insert_with(|| ObjectRef::of(&l.metadata));
            if !lws.is(&l.metadata) {
                continue;
            }
            if e.ty == EventType::Deleted {
                (self.lws_deleting, self.lws_gone) = (true, true);
                continue;
            }
            self.lws_deleting |= l.metadata.deletion_timestamp.is_some();
            // Status writes do not change the spec: skip them without hashing templates.
            self.status_current = l.metadata.generation == self.lws_generation;
            if l.metadata.generation != self.lws_generation {
                self.lws_generation = l.metadata.generation;
                let before = self.model.replicas;
                let knobs_before = (self.model.replicas, self.model.max_unavailable);
                let floor_before = self.model.replicas - self.model.max_unavailable;
                let key = self.hashing.key(l);
                self.status.on_revision(&key);
                self.restart.on_lws_spec(l);
                self.partition.on_lws_spec(l);
                self.model.observe_spec(l, key);
                let floor = self.model.replicas - self.model.max_unavailable;
                self.partition.on_floor(floor_before, floor, e.at_ms);
                self.groups.on_recount(&self.model, knobs_before, e.at_ms);
                dirty.extend(self.model.groups.keys().copied());
                if self.model.replicas < before {
                    self.groups.on_scale_down(&self.model);
                }
            }
            let mut out = Sink {
                api,
                enabled: &self.enabled,
                violations: &mut self.violations,
                namespace: &lws.namespace,
            };
            self.status.on_lws(&mut out, l, self.hashing);
        }
    }

    fn observe_pods(&mut self, api: &ApiServer, lws: &ObjectRef, dirty: &mut BTreeSet<i32>) {
        let log = Pod::store(api).log();
        while let Some(e) = log.get(self.pod_cursor) {
            self.pod_cursor += 1;
            let p = &e.obj;
            if k8s::label(&p.metadata, keys::SET_NAME) != Some(lws.name.as_str())
                || k8s::namespace(&p.metadata) != lws.namespace
            {
                continue;
            }
            let Some(pe) = self.model.observe_pod(&lws.name, e.ty, p) else {
                continue;
            };
            dirty.insert(pe.group);
            self.restart.on_pod(&pe);
            if (pe.deleted || pe.terminating) && !pe.was_terminating {
                let mut out = Sink {
                    api,
                    enabled: &self.enabled,
                    violations: &mut self.violations,
                    namespace: &lws.namespace,
                };
                let what = format!("pod {} was deleted", pe.name);
                self.quiet.changed(&mut out, what, pe.name);
            }
        }
    }

    fn observe_statefulsets(&mut self, api: &ApiServer, lws: &ObjectRef) {
        let log = StatefulSet::store(api).log();
        while let Some(e) = log.get(self.sts_cursor) {
            self.sts_cursor += 1;
            if k8s::label(&e.obj.metadata, keys::SET_NAME) != Some(lws.name.as_str())
                || k8s::namespace(&e.obj.metadata) != lws.namespace
            {
                continue;
            }
            let mut out = Sink {
                api,
                enabled: &self.enabled,
                violations: &mut self.violations,
                namespace: &lws.namespace,
            };
            let sts_name = k8s::name(&e.obj.metadata).to_string();
            let leader_sts = sts_name == lws.name;
            if leader_sts && e.ty != EventType::Deleted {
                self.partition.on_leader_sts(&mut out, &self.model, &e.obj);
                if let Some(tl) = &mut self.timeline {
                    record_leader_sts(tl, &e.obj, api.now_ms());
                }
            }
            // A spec change bumps generation; a create or delete changes the set of specs.
            let generation = e.obj.metadata.generation;
            let before = match e.ty {
                EventType::Deleted => self.sts_generations.remove(&sts_name),
                _ => self.sts_generations.insert(sts_name.clone(), generation),
            };
            // The garbage collector removing the worker StatefulSet of a group already gone (a
            // released surge group, a scaled-away one) is cleanup, not a change.
            let leftover = group_of(&lws.name, &sts_name).is_some_and(|g| g >= self.model.replicas);
            let changed = match e.ty {
                EventType::Added => true,
                EventType::Deleted => !leftover,
                EventType::Modified => before.is_some_and(|g| g != generation),
            };
            if leader_sts && e.ty == EventType::Modified && changed {
                self.partition.check_storm(&mut out, &sts_name);
            }
            if changed && self.quiet.is_open() {
                let what = format!("StatefulSet {sts_name} spec changed ({:?})", e.ty);
                self.quiet.changed(&mut out, what, sts_name);
            }
        }
    }
}

/// The groups that changed, and the available count against the floor, as the picture shows
/// them.
fn record_groups(tl: &mut Timeline, model: &Model, dirty: &BTreeSet<i32>, now: u64) {
    for &g in dirty {
        let rev = match model.phase(g) {
            None | Some(Phase::Empty) => Rev::Empty,
            Some(Phase::Old) => Rev::Old,
            Some(Phase::Moving) => Rev::Mixed,
            Some(Phase::On | Phase::Done) => Rev::New,
        };
        let state = GroupState {
            rev,
            ready: model.is_available(g),
            terminating: model.has_terminating(g),
        };
        tl.group(now, g, state);
    }
    tl.floor = model.replicas - model.max_unavailable;
    tl.available(now, model.counts.available);
}

fn record_leader_sts(tl: &mut Timeline, sts: &StatefulSet, now: u64) {
    let spec = &sts.spec;
    let replicas = spec.replicas.unwrap_or(1);
    let partition = spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition)
        .unwrap_or(0);
    tl.replicas(now, replicas);
    tl.partition(now, partition);
}
