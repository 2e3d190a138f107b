//! Availability invariants, checked after every simulated event at O(change) cost: the checker
//! reads only the watch-log (and trace) entries written since its last look, feeds them to its
//! model of the watched LWS and to one state machine per family of checks, and re-evaluates
//! only the groups those entries touched.
//!
//! The checker watches every LWS, each identified by namespace and name (`watch.rs`); an
//! LWS's pods and StatefulSets are those in its namespace carrying its name label, so the
//! objects of a same-named LWS in another namespace are not its own. The first LWS seen is the
//! primary: the run report's availability figures and the picture are of it.
//!
//! Layout: `watch.rs` (one LWS's state and how its objects' entries feed the checks),
//! `model.rs` (revisions, pods, per-group state and counters), one file per family of
//! checks (`groups.rs`, `partition.rs`, `restart.rs`, `status.rs`, `quiescence.rs`), `id.rs`
//! (the invariants by name) and `report.rs` (violations). This file dispatches.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

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
mod watch;

pub use id::InvariantId;
pub use model::RevisionHashing;
use model::{Model, Phase};
use report::Sink;
pub use report::Violation;
use watch::{Watch, WatchId};

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
    /// Every LWS seen, in the order first seen; the first is the primary, whose figures the
    /// run report and the picture show.
    watches: Vec<Watch>,
    /// Where each LWS's watch is: namespace, then name.
    index: BTreeMap<String, BTreeMap<String, usize>>,
    lws_cursor: usize,
    pod_cursor: usize,
    sts_cursor: usize,
    /// The three cursors above registered with their watch logs, so compaction keeps what the
    /// checker has not read (`api::watch`).
    readers: Option<[Cursor; 3]>,
    trace_cursor: usize,
    /// Change points for the picture of the run, kept only when asked for.
    timeline: Option<Timeline>,
    pub violations: Vec<Violation>,
}

/// A sink for the violations of `w`: its namespace, and its name before each message once the
/// run has more than one LWS.
fn sink<'a>(
    api: &'a ApiServer,
    enabled: &'a BTreeSet<InvariantId>,
    violations: &'a mut Vec<Violation>,
    id: &'a WatchId,
    named: bool,
) -> Sink<'a> {
    Sink {
        api,
        enabled,
        violations,
        namespace: &id.lws.namespace,
        prefix: if named { &id.label } else { "" },
    }
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
            watches: Vec::new(),
            index: BTreeMap::new(),
            lws_cursor: 0,
            pod_cursor: 0,
            sts_cursor: 0,
            readers: None,
            trace_cursor: 0,
            timeline: None,
            violations: Vec::new(),
        }
    }

    /// Record, from now on, the change points [`crate::timeline`] draws (of the primary LWS).
    pub fn record_timeline(&mut self) {
        self.timeline.get_or_insert_with(Timeline::default);
    }

    pub fn take_timeline(&mut self) -> Option<Timeline> {
        self.timeline.take()
    }

    /// Judge revisions as `profile`'s release hashes them (without this, as v0.4.1 does).
    /// Before the first observation only: the keys seen so far would not compare.
    pub fn for_profile(mut self, profile: &lws::profile::Profile) -> Checker {
        assert!(
            self.watches.is_empty(),
            "for_profile before the first observe"
        );
        self.hashing = RevisionHashing::of(profile);
        self
    }

    fn primary(&self) -> Option<&Watch> {
        self.watches.first()
    }

    /// The namespace of the primary LWS ("" before one is seen).
    pub fn namespace(&self) -> &str {
        self.primary().map_or("", |w| w.id.lws.namespace.as_str())
    }

    /// The LWSs watched, in the order first seen.
    pub fn watched(&self) -> impl Iterator<Item = &ObjectRef> {
        self.watches.iter().map(|w| &w.id.lws)
    }

    pub fn is_enabled(&self, invariant: InvariantId) -> bool {
        self.enabled.contains(&invariant)
    }

    /// The fewest groups of the primary LWS available since every desired group first was.
    pub fn min_available(&self) -> Option<i32> {
        self.primary().and_then(|w| w.groups.min_available)
    }

    /// The primary LWS's `replicas - maxUnavailable`: the floor without disruptions.
    pub fn floor(&self) -> i32 {
        self.primary()
            .map_or(0, |w| (w.model.replicas - w.model.max_unavailable).max(0))
    }

    /// Every LWS not being deleted has all its groups available, and there is at least one
    /// group to have.
    pub fn all_available(&self) -> bool {
        let live = || self.watches.iter().filter(|w| w.deletion().is_none());
        live().map(|w| w.model.replicas).sum::<i32>() >= 1
            && live().all(|w| w.model.counts.available >= w.model.replicas)
    }

    /// Every LWS's rollout is complete as far as the checker's model of it goes: one being
    /// deleted is gone; any other has every group below `replicas` on the latest revision
    /// and ready, no surge group left, and its status written after its last spec change (a
    /// rollout is only complete once the status describes the new spec). `Gone` when every
    /// LWS seen is gone. Never complete before an LWS is seen.
    pub fn rollout_state(&self) -> RolloutState {
        if self.watches.is_empty() {
            return RolloutState::Incomplete;
        }
        let mut gone = true;
        for w in &self.watches {
            match w.deletion() {
                Some(true) => continue,
                Some(false) => return RolloutState::Incomplete,
                None => gone = false,
            }
            if !w.model.rollout_complete() || !w.status_current() {
                return RolloutState::Incomplete;
            }
        }
        if gone {
            RolloutState::Gone
        } else {
            RolloutState::GroupsDone
        }
    }

    /// Whether every live LWS has every group on the latest revision and ready.
    pub fn rollout_complete_groups(&self) -> bool {
        let mut live = self.watches.iter().filter(|w| !w.is_gone());
        !self.watches.is_empty() && live.all(|w| w.model.rollout_complete())
    }

    /// Why the rollout is not complete, in words (for convergence and timeout reports): each
    /// LWS not done.
    pub fn stuck_state(&self) -> String {
        if self.watches.is_empty() {
            return "no LeaderWorkerSet was ever created".into();
        }
        let stuck: Vec<String> = self
            .watches
            .iter()
            .filter(|w| match w.deletion() {
                Some(gone) => !gone,
                None => !w.model.rollout_complete() || self.watches.len() == 1,
            })
            .map(Watch::stuck_state)
            .collect();
        if stuck.is_empty() {
            return "every LWS has every group on the latest revision and ready".into();
        }
        stuck.join("; ")
    }

    /// A fault is about to fire (or, for `ContainerRestarted`, has fired) at `now_ms`.
    pub fn on_fault(&mut self, fault: &FaultEffect, now_ms: u64) {
        for w in &mut self.watches {
            w.on_fault(fault, now_ms);
        }
    }

    /// A restart or resync at rest opens a window in which nothing may change (for each LWS
    /// at rest).
    pub fn open_quiet_window(&mut self, now_ms: u64) {
        for w in &mut self.watches {
            w.open_quiet_window(now_ms);
        }
    }

    pub fn close_quiet_window(&mut self) {
        for w in &mut self.watches {
            w.close_quiet_window();
        }
    }

    /// Record a violation decided outside the checker (timeout, check, convergence).
    pub fn external(&mut self, api: &ApiServer, invariant: InvariantId, message: String) {
        let namespace = self
            .watches
            .first()
            .map_or("", |w| w.id.lws.namespace.as_str());
        Sink {
            api,
            enabled: &self.enabled,
            violations: &mut self.violations,
            namespace,
            prefix: "",
        }
        .violate(invariant, message, Vec::new());
    }

    /// End of run: restarts still owed are late if their time has come.
    pub fn finish(&mut self, api: &ApiServer) {
        let named = self.watches.len() > 1;
        for w in &mut self.watches {
            let id = Arc::clone(&w.id);
            w.finish(&mut sink(
                api,
                &self.enabled,
                &mut self.violations,
                &id,
                named,
            ));
        }
    }

    /// Look at what changed since the last call and check the invariants it can affect.
    pub fn observe(&mut self, api: &ApiServer) {
        self.sync_readers(api);
        self.observe_lws(api);
        if self.watches.is_empty() {
            return;
        }
        self.observe_pods(api);
        self.observe_statefulsets(api);
        let entries = &api.trace.entries[self.trace_cursor..];
        self.trace_cursor = api.trace.entries.len();
        let now = api.now_ms();
        let named = self.watches.len() > 1;
        for (i, w) in self.watches.iter_mut().enumerate() {
            // A gone LWS owes nothing; only its pods' last events are left to fold in.
            if w.is_gone() && !w.is_dirty() {
                continue;
            }
            let id = Arc::clone(&w.id);
            let mut out = sink(api, &self.enabled, &mut self.violations, &id, named);
            let dirty = w.check(&mut out, entries, now);
            if let Some(tl) = self.timeline.as_mut().filter(|_| i == 0) {
                record_groups(tl, &w.model, &dirty, now);
            }
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

    /// The watch of the LWS `namespace/name`, if it is watched.
    fn find(&self, namespace: &str, name: &str) -> Option<usize> {
        self.index.get(namespace)?.get(name).copied()
    }

    /// The watch for an event of the LWS `l`: a new one for an LWS not seen before, or for
    /// one created again after it was gone (its old pods are the garbage collector's).
    fn watch_for(&mut self, ty: EventType, l: &LeaderWorkerSet) -> usize {
        let (namespace, name) = (k8s::namespace(&l.metadata), k8s::name(&l.metadata));
        match self.find(namespace, name) {
            Some(i) if !(ty == EventType::Added && self.watches[i].is_gone()) => i,
            Some(i) => {
                let earlier = std::mem::replace(&mut self.watches[i], Watch::new(l));
                self.watches[i] = Watch::succeed(l, earlier);
                i
            }
            None => {
                self.watches.push(Watch::new(l));
                let i = self.watches.len() - 1;
                self.index
                    .entry(namespace.to_string())
                    .or_default()
                    .insert(name.to_string(), i);
                i
            }
        }
    }

    fn observe_lws(&mut self, api: &ApiServer) {
        let log = LeaderWorkerSet::store(api).log();
        while let Some(e) = log.get(self.lws_cursor) {
            self.lws_cursor += 1;
            let i = self.watch_for(e.ty, &e.obj);
            let named = self.watches.len() > 1;
            let w = &mut self.watches[i];
            let id = Arc::clone(&w.id);
            let mut out = sink(api, &self.enabled, &mut self.violations, &id, named);
            w.on_lws(&mut out, e.ty, &e.obj, e.at_ms, self.hashing);
        }
    }

    /// The watch of the LWS that owns an object by its name label, in the object's namespace.
    fn owner_of(&self, meta: &ObjectMeta) -> Option<usize> {
        let name = k8s::label(meta, keys::SET_NAME)?;
        self.find(k8s::namespace(meta), name)
    }

    fn observe_pods(&mut self, api: &ApiServer) {
        let log = Pod::store(api).log();
        let named = self.watches.len() > 1;
        while let Some(e) = log.get(self.pod_cursor) {
            self.pod_cursor += 1;
            let Some(i) = self.owner_of(&e.obj.metadata) else {
                continue;
            };
            let w = &mut self.watches[i];
            let id = Arc::clone(&w.id);
            let mut out = sink(api, &self.enabled, &mut self.violations, &id, named);
            w.on_pod(&mut out, e.ty, &e.obj);
        }
    }

    fn observe_statefulsets(&mut self, api: &ApiServer) {
        let log = StatefulSet::store(api).log();
        let named = self.watches.len() > 1;
        while let Some(e) = log.get(self.sts_cursor) {
            self.sts_cursor += 1;
            let Some(i) = self.owner_of(&e.obj.metadata) else {
                continue;
            };
            let w = &mut self.watches[i];
            let id = Arc::clone(&w.id);
            let mut out = sink(api, &self.enabled, &mut self.violations, &id, named);
            let leader_write = w.on_statefulset(&mut out, e.ty, &e.obj);
            if let Some(tl) = self.timeline.as_mut().filter(|_| i == 0 && leader_write) {
                record_leader_sts(tl, &e.obj, api.now_ms());
            }
        }
    }
}

/// How far the rollouts of the LWSs seen have come ([`Checker::rollout_state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RolloutState {
    Incomplete,
    /// Every LWS not deleted has its groups done (the statuses are the caller's to judge).
    GroupsDone,
    /// Every LWS seen has been deleted and is gone.
    Gone,
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
