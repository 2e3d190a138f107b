//! Availability invariants, checked after every simulated event at O(change) cost: the checker
//! reads only the watch-log entries written since its last look, keeps per-group state, and
//! re-evaluates only the groups those entries touched.
//!
//! A group is judged by its pods' *specs*, not their labels: each pod's containers (minus the
//! env the LWS webhook injects) are fingerprinted and matched against the leader and worker
//! templates of every LWS revision seen. The seed bug put the new worker template under the old
//! revision label, which only a spec comparison sees.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use lws::api::{keys, LeaderWorkerSet};
use lws::{k8s, rollout};

use crate::api::{ApiServer, EventType, Kind};
use crate::time::fmt_ms;

mod groups;
mod partition;
mod restart;
mod status;

pub const AVAILABILITY: &str = "availability";
pub const GROUP_CONSISTENCY: &str = "groupConsistency";
pub const UPDATE_ORDER: &str = "updateOrder";
pub const SURGE_BOUND: &str = "surgeBound";
pub const CONVERGENCE: &str = "convergence";
pub const QUIESCENCE: &str = "quiescence";
pub const TIMEOUT: &str = "timeout";
pub const CHECK: &str = "check";
pub const GROUP_RESTART: &str = "groupRestart";
pub const STATUS_CONDITIONS: &str = "statusConditions";
pub const PARTITION_BUDGET: &str = "partitionBudget";
pub const REQUIRED_RESTART: &str = "requiredRestart";
pub const WRITE_STORM: &str = "writeStorm";

/// `writeStorm`: more leader StatefulSet spec changes than this within `STORM_WINDOW_MS`.
pub const STORM_WRITES: usize = 50;
pub const STORM_WINDOW_MS: u64 = 10_000;

/// How long a group restart the restart policy owes may take: a controller pod that was down
/// is back (restart delay and a 15 s lease) well within it.
pub const RESTART_DUE_MS: u64 = 120_000;

/// Every invariant a scenario can enable by name (`timeout` and `check` are always on).
/// How long a disrupted group must stay available before it counts as recovered.
pub const DISRUPTION_SETTLE_MS: u64 = 60_000;

/// A controller is not blamed for what it cannot have seen yet: a group down for less than
/// this counts as up when a partition move is judged (watch lags are milliseconds).
pub const STALE_VIEW_MS: u64 = 5_000;

pub const ALL: [&str; 11] = [
    AVAILABILITY,
    GROUP_CONSISTENCY,
    UPDATE_ORDER,
    SURGE_BOUND,
    CONVERGENCE,
    QUIESCENCE,
    GROUP_RESTART,
    STATUS_CONDITIONS,
    PARTITION_BUDGET,
    REQUIRED_RESTART,
    WRITE_STORM,
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: String,
    pub at_ms: u64,
    pub message: String,
    /// The objects involved (pod and StatefulSet names).
    pub objects: Vec<String>,
    /// The last trace lines touching those objects, oldest first.
    pub recent: Vec<String>,
}

impl Violation {
    /// The plain-words report: what broke, when, what, and the events that led there.
    pub fn report(&self) -> String {
        let mut s = format!(
            "{} violated at t={} ({} ms): {}",
            self.invariant,
            fmt_ms(self.at_ms),
            self.at_ms,
            self.message
        );
        if !self.objects.is_empty() {
            s.push_str(&format!("\n  objects: {}", self.objects.join(", ")));
        }
        if !self.recent.is_empty() {
            s.push_str("\n  events that led there:");
            for r in &self.recent {
                s.push_str(&format!("\n    {r}"));
            }
        }
        s
    }
}

/// One LWS revision: the fingerprints of its leader and worker templates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Revision {
    leader: u64,
    worker: u64,
}

#[derive(Clone, Debug)]
struct PodInfo {
    group: i32,
    leader: bool,
    fingerprint: u64,
    ready: bool,
    terminating: bool,
    /// The template-revision-hash label: what the leader StatefulSet compares with its
    /// template when it decides to replace a leader.
    revision: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Empty,
    /// Pods exist and none is distinguishably on the latest revision.
    Old,
    /// Some live pods are on the latest revision and some are not: the group is being moved.
    Moving,
    /// Every live pod on the latest revision, not all of them ready (or not all there yet).
    On,
    /// Every pod on the latest revision and ready.
    Done,
}

#[derive(Clone, Debug)]
struct Group {
    pods: BTreeSet<String>,
    phase: Phase,
    available: bool,
    inconsistent: bool,
    /// A non-terminating leader exists (the group "exists" for `surgeBound`).
    has_leader: bool,
    /// Some non-terminating pod exists.
    has_live: bool,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            pods: BTreeSet::new(),
            phase: Phase::Empty,
            available: false,
            inconsistent: false,
            has_leader: false,
            has_live: false,
        }
    }
}

/// Counters kept in step with the per-group state, so no check scans every group.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    available: i32,
    /// Available groups below `replicas`: what arms `availability`.
    available_desired: i32,
    with_leader: i32,
    done_desired: i32,
    live_surge: i32,
}

impl Counts {
    fn add(&mut self, g: i32, x: &Group, replicas: i32, sign: i32) {
        self.available += sign * i32::from(x.available);
        self.available_desired += sign * i32::from(g < replicas && x.available);
        self.with_leader += sign * i32::from(x.has_leader);
        self.done_desired += sign * i32::from(g < replicas && x.phase == Phase::Done);
        self.live_surge += sign * i32::from(g >= replicas && x.has_live);
    }
}

pub struct Checker {
    enabled: BTreeSet<String>,
    namespace: String,
    name: Option<String>,
    lws_cursor: usize,
    pod_cursor: usize,
    sts_cursor: usize,
    revisions: Vec<Revision>,
    latest: Option<usize>,
    pub replicas: i32,
    size: i32,
    max_unavailable: i32,
    max_surge: i32,
    pods: BTreeMap<String, PodInfo>,
    /// Container fingerprint per live pod UID (no actor here updates a pod's containers).
    fingerprints: BTreeMap<String, u64>,
    groups: BTreeMap<i32, Group>,
    first_available: bool,
    disrupted: BTreeSet<i32>,
    disrupted_ever: BTreeSet<i32>,
    /// When each currently available group became available, and each unavailable one
    /// became unavailable.
    available_since: BTreeMap<i32, u64>,
    unavailable_since: BTreeMap<i32, u64>,
    /// Unavailable groups that have had a terminating pod since they went down (a terminating
    /// pod may still be Ready, and upstream counts it as ready: see docs/bug-zoo.md, Z02).
    down_terminating: BTreeSet<i32>,
    /// When the leader StatefulSet's spec last changed, within the storm window.
    leader_spec_writes: std::collections::VecDeque<u64>,
    storming: bool,
    /// The lowest partition written to the leader StatefulSet for its current template.
    leader_partition: Option<i32>,
    partition_template: Option<String>,
    /// Fingerprints of every `leaderWorkerTemplate` the LWS has had: with only one, no
    /// rollout can ever be in progress.
    lws_templates: BTreeSet<u64>,
    /// Group restarts owed to injected failures, and the restarts the restart policy made
    /// (leader deletions by the pod controller, read from the trace).
    owed_restarts: BTreeMap<i32, i32>,
    restarts: BTreeMap<i32, i32>,
    /// Groups a fault obliges the restart policy to restart: (due, the pod hit, when).
    required_restarts: BTreeMap<i32, (u64, String, u64)>,
    /// The LWS asks for RecreateGroupOnPodRestart.
    recreate_on_restart: bool,
    trace_cursor: usize,
    pub min_available: Option<i32>,
    below_floor: bool,
    over_surge: bool,
    quiet_since: Option<u64>,
    /// Last seen generation per StatefulSet of this LWS, to tell spec changes from status writes.
    sts_generations: BTreeMap<String, Option<i64>>,
    lws_generation: Option<i64>,
    max_surge_raw: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    counts: Counts,
    available_hw: i32,
    /// Whether the LWS's last status broke `statusConditions` (report once per episode).
    conflicting_conditions: bool,
    spurious_upgrade: bool,
    pub violations: Vec<Violation>,
}

/// A pod's containers without the env the LWS webhook injects, hashed.
fn fingerprint(spec: Option<&PodSpec>) -> u64 {
    let strip = |cs: &[Container]| -> Vec<Container> {
        cs.iter()
            .map(|c| {
                let mut c = c.clone();
                if let Some(env) = c.env.as_mut() {
                    env.retain(|e| !e.name.starts_with("LWS_") && !e.name.starts_with("TPU_"));
                    if env.is_empty() {
                        c.env = None;
                    }
                }
                c
            })
            .collect()
    };
    let (containers, init) = match spec {
        Some(s) => (
            strip(&s.containers),
            strip(s.init_containers.as_deref().unwrap_or(&[])),
        ),
        None => (Vec::new(), Vec::new()),
    };
    fnv64(&serde_json::to_vec(&(containers, init)).expect("containers encode"))
}

fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Checker {
    pub fn new(enabled: impl IntoIterator<Item = String>) -> Checker {
        Checker {
            enabled: enabled.into_iter().collect(),
            namespace: String::new(),
            name: None,
            lws_cursor: 0,
            pod_cursor: 0,
            sts_cursor: 0,
            revisions: Vec::new(),
            latest: None,
            replicas: 0,
            size: 1,
            max_unavailable: 1,
            max_surge: 0,
            pods: BTreeMap::new(),
            fingerprints: BTreeMap::new(),
            groups: BTreeMap::new(),
            first_available: false,
            disrupted: BTreeSet::new(),
            disrupted_ever: BTreeSet::new(),
            available_since: BTreeMap::new(),
            unavailable_since: BTreeMap::new(),
            down_terminating: BTreeSet::new(),
            leader_spec_writes: std::collections::VecDeque::new(),
            storming: false,
            leader_partition: None,
            partition_template: None,
            lws_templates: BTreeSet::new(),
            owed_restarts: BTreeMap::new(),
            restarts: BTreeMap::new(),
            required_restarts: BTreeMap::new(),
            recreate_on_restart: false,
            trace_cursor: 0,
            min_available: None,
            below_floor: false,
            over_surge: false,
            quiet_since: None,
            sts_generations: BTreeMap::new(),
            lws_generation: None,
            max_surge_raw: None,
            counts: Counts::default(),
            available_hw: 0,
            conflicting_conditions: false,
            spurious_upgrade: false,
            violations: Vec::new(),
        }
    }

    /// The namespace of the LWS under watch.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.contains(name)
    }

    /// `replicas - maxUnavailable`: the floor without disruptions.
    pub fn floor(&self) -> i32 {
        self.replicas - self.max_unavailable
    }

    pub fn available_groups(&self) -> i32 {
        self.counts.available
    }

    /// Recompute the counters from the per-group state: only when `replicas` or the latest
    /// revision changes, never per event.
    fn recount(&mut self) {
        let mut c = Counts::default();
        for (g, x) in &self.groups {
            c.add(*g, x, self.replicas, 1);
        }
        self.counts = c;
        self.available_hw = c.available;
    }

    /// Groups that lost a pod to an injected fault (engine calls this at the fault).
    pub fn disrupt(&mut self, groups: impl IntoIterator<Item = i32>, now_ms: u64) {
        let groups: Vec<i32> = groups.into_iter().collect();
        for g in &groups {
            // The settle time counts from the fault, not from an older recovery.
            if self.available_since.contains_key(g) {
                self.available_since.insert(*g, now_ms);
            }
        }
        self.disrupted.extend(groups.iter().copied());
        self.disrupted_ever.extend(groups);
    }

    /// The groups a set of pods belongs to (for faults naming pods or nodes).
    pub fn groups_of<'a>(&self, pods: impl IntoIterator<Item = &'a str>) -> Vec<i32> {
        pods.into_iter()
            .filter_map(|p| self.pods.get(p).map(|i| i.group))
            .collect()
    }

    /// A restart or resync at rest opens a window in which nothing may change.
    pub fn open_quiet_window(&mut self, now_ms: u64) {
        // After an injected fault, a restart may legitimately finish the fault's work (a group
        // restart the restart policy owes), so only an undisturbed rest is held to quiescence.
        if self.rollout_complete_groups() && self.disrupted_ever.is_empty() {
            self.quiet_since = Some(now_ms);
        }
    }

    pub fn close_quiet_window(&mut self) {
        self.quiet_since = None;
    }

    /// Every group below `replicas` is on the latest revision and ready, and no surge group is
    /// left.
    pub fn rollout_complete_groups(&self) -> bool {
        if self.latest.is_none() {
            return false;
        }
        self.counts.done_desired == self.replicas && self.counts.live_surge == 0
    }

    /// Why the rollout is not complete, in words (for convergence and timeout reports).
    pub fn stuck_state(&self) -> String {
        let mut parts = Vec::new();
        for g in 0..self.replicas {
            let phase = self.groups.get(&g).map(|x| x.phase).unwrap_or(Phase::Empty);
            if phase != Phase::Done {
                let pods = self.groups.get(&g).map(|x| x.pods.len()).unwrap_or(0);
                parts.push(format!(
                    "group {g} is {phase:?} ({pods} of {} pods present)",
                    self.size
                ));
            }
        }
        for (i, g) in self.groups.range(self.replicas..) {
            if g.pods
                .iter()
                .any(|p| self.pods.get(p).is_some_and(|p| !p.terminating))
            {
                parts.push(format!("surge group {i} still exists"));
            }
        }
        if parts.is_empty() {
            "every group is on the latest revision and ready".into()
        } else {
            parts.join("; ")
        }
    }

    fn violate(&mut self, api: &ApiServer, invariant: &str, message: String, objects: Vec<String>) {
        if self.enabled.contains(invariant) {
            self.record(api, invariant, message, objects);
        }
    }

    fn record(&mut self, api: &ApiServer, invariant: &str, message: String, objects: Vec<String>) {
        let recent = recent_events(api, &objects, 8);
        self.violations.push(Violation {
            invariant: invariant.into(),
            at_ms: api.now_ms(),
            message,
            objects,
            recent,
        });
    }

    /// Record a violation decided outside the checker (timeout, check, convergence).
    pub fn external(&mut self, api: &ApiServer, invariant: &str, message: String) {
        if matches!(invariant, TIMEOUT | CHECK) || self.enabled.contains(invariant) {
            self.record(api, invariant, message, Vec::new());
        }
    }

    /// Look at what changed since the last call and check the invariants it can affect.
    pub fn observe(&mut self, api: &ApiServer) {
        let mut dirty = BTreeSet::new();
        self.observe_lws(api, &mut dirty);
        let Some(name) = self.name.clone() else {
            return;
        };
        self.observe_pods(api, &name, &mut dirty);
        self.observe_statefulsets(api, &name);
        self.check_restarts(api, &name);
        if !self.required_restarts.is_empty() {
            self.check_required_restarts(api);
        }
        for g in dirty {
            self.reevaluate(api, g);
        }
        self.check_availability(api);
    }

    fn observe_lws(&mut self, api: &ApiServer, dirty: &mut BTreeSet<i32>) {
        let log = LeaderWorkerSet::store(api).log();
        while let Some(e) = log.get(self.lws_cursor) {
            self.lws_cursor += 1;
            let l = &e.obj;
            if self.name.is_none() {
                self.name = l.metadata.name.clone();
                self.namespace = k8s::namespace(&l.metadata).to_string();
            }
            if l.metadata.name != self.name || e.ty == EventType::Deleted {
                continue;
            }
            // Status writes do not change the spec: skip them without hashing templates.
            if l.metadata.generation != self.lws_generation {
                self.lws_generation = l.metadata.generation;
                let before = self.replicas;
                self.observe_lws_spec(l, dirty);
                if self.replicas < before {
                    self.excuse_groups_down_at_scale_down();
                }
            }
            self.check_conditions(api, l);
        }
    }

    /// A scale-down mid-rollout keeps the lowest groups, whatever their state: those it finds
    /// down (being updated under the old budget) are excused, as disrupted, until they recover.
    fn excuse_groups_down_at_scale_down(&mut self) {
        let down: Vec<i32> = (0..self.replicas)
            .filter(|g| !self.groups.get(g).is_some_and(|x| x.available))
            .collect();
        self.disrupted.extend(down);
    }

    fn observe_lws_spec(&mut self, l: &LeaderWorkerSet, dirty: &mut BTreeSet<i32>) {
        let template = serde_json::to_vec(&l.spec.leader_worker_template).expect("encodes");
        self.lws_templates.insert(fnv64(&template));
        self.replicas = l.replicas();
        self.size = l.size();
        self.recreate_on_restart =
            l.spec.leader_worker_template.restart_policy == "RecreateGroupOnPodRestart";
        if let Ok(k) = lws::lws_controller::knobs(l) {
            self.max_unavailable = k.max_unavailable;
            self.max_surge = k.max_surge;
        }
        self.max_surge_raw = l.rolling_update().max_surge;
        let rev = Revision {
            leader: fingerprint(l.leader_template().spec.as_ref()),
            worker: fingerprint(l.spec.leader_worker_template.worker_template.spec.as_ref()),
        };
        if self.latest.map(|i| self.revisions[i]) != Some(rev) {
            let index = self
                .revisions
                .iter()
                .position(|r| *r == rev)
                .unwrap_or_else(|| {
                    self.revisions.push(rev);
                    self.revisions.len() - 1
                });
            self.latest = Some(index);
            // Phases are relative to the latest revision: recompute them all, silently.
            let groups: Vec<i32> = self.groups.keys().copied().collect();
            for g in groups {
                let phase = self.phase_of(g);
                self.groups.get_mut(&g).expect("listed").phase = phase;
            }
        }
        self.recount();
        dirty.extend(self.groups.keys().copied());
    }

    fn observe_pods(&mut self, api: &ApiServer, name: &str, dirty: &mut BTreeSet<i32>) {
        let log = Pod::store(api).log();
        while let Some(e) = log.get(self.pod_cursor) {
            self.pod_cursor += 1;
            let p = &e.obj;
            if k8s::label(&p.metadata, keys::SET_NAME) != Some(name) {
                continue;
            }
            let pod_name = k8s::name(&p.metadata).to_string();
            let Some(group) = group_of(name, &pod_name) else {
                continue;
            };
            dirty.insert(group);
            let was_terminating = self.pods.get(&pod_name).is_some_and(|i| i.terminating);
            if e.ty == EventType::Deleted {
                if self.pods.get(&pod_name).is_some_and(|i| i.leader) {
                    self.required_restarts.remove(&group);
                }
                self.pods.remove(&pod_name);
                self.fingerprints.remove(k8s::uid(&p.metadata));
                if let Some(g) = self.groups.get_mut(&group) {
                    g.pods.remove(&pod_name);
                }
                if !was_terminating {
                    self.quiet_violation(api, format!("pod {pod_name} was deleted"), pod_name);
                }
                continue;
            }
            let uid = k8s::uid(&p.metadata).to_string();
            let fp = *self
                .fingerprints
                .entry(uid)
                .or_insert_with(|| fingerprint(p.spec.as_ref()));
            let terminating = k8s::is_terminating(&p.metadata);
            let leader = k8s::label(&p.metadata, keys::WORKER_INDEX) == Some("0");
            if terminating && leader {
                self.required_restarts.remove(&group);
            }
            if terminating && !was_terminating {
                self.quiet_violation(api, format!("pod {pod_name} was deleted"), pod_name.clone());
            }
            let info = PodInfo {
                group,
                leader,
                fingerprint: fp,
                ready: k8s::is_running_and_ready(p),
                terminating,
                revision: k8s::label(&p.metadata, keys::TEMPLATE_REVISION_HASH).map(str::to_string),
            };
            self.pods.insert(pod_name.clone(), info);
            self.groups.entry(group).or_default().pods.insert(pod_name);
        }
    }

    fn observe_statefulsets(&mut self, api: &ApiServer, name: &str) {
        let log = StatefulSet::store(api).log();
        while let Some(e) = log.get(self.sts_cursor) {
            self.sts_cursor += 1;
            if k8s::label(&e.obj.metadata, keys::SET_NAME) != Some(name) {
                continue;
            }
            let sts_name = k8s::name(&e.obj.metadata).to_string();
            if sts_name == name && e.ty != EventType::Deleted {
                let obj = e.obj.clone();
                self.check_surge(api, &obj);
                self.check_partition_move(api, &obj);
            }
            // A spec change bumps generation; a create or delete changes the set of specs.
            let generation = e.obj.metadata.generation;
            let before = match e.ty {
                EventType::Deleted => self.sts_generations.remove(&sts_name),
                _ => self.sts_generations.insert(sts_name.clone(), generation),
            };
            // The garbage collector removing the worker StatefulSet of a group already gone (a
            // released surge group, a scaled-away one) is cleanup, not a change.
            let leftover = group_of(name, &sts_name).is_some_and(|g| g >= self.replicas);
            let changed = match e.ty {
                EventType::Added => true,
                EventType::Deleted => !leftover,
                EventType::Modified => before.is_some_and(|g| g != generation),
            };
            if sts_name == name && e.ty == EventType::Modified && changed {
                self.check_storm(api, &sts_name);
            }
            if changed && self.quiet_since.is_some() {
                self.quiet_violation(
                    api,
                    format!("StatefulSet {sts_name} spec changed ({:?})", e.ty),
                    sts_name,
                );
            }
        }
    }

    fn quiet_violation(&mut self, api: &ApiServer, what: String, object: String) {
        if let Some(since) = self.quiet_since {
            let msg = format!(
                "{what} after a controller restart or resync at t={} with no rollout pending",
                fmt_ms(since)
            );
            self.quiet_since = None; // one report per window
            self.violate(api, QUIESCENCE, msg, vec![object]);
        }
    }

    /// Does `p` distinguishably run the latest revision's template for its role?
    fn is_new(&self, p: &PodInfo) -> bool {
        let Some(latest) = self.latest else {
            return false;
        };
        let role = |r: &Revision| if p.leader { r.leader } else { r.worker };
        let fp = role(&self.revisions[latest]);
        p.fingerprint == fp
            && self
                .revisions
                .iter()
                .enumerate()
                .all(|(i, r)| i == latest || role(r) != fp)
    }

    fn matches_latest(&self, p: &PodInfo) -> bool {
        let Some(latest) = self.latest else {
            return false;
        };
        let r = self.revisions[latest];
        p.fingerprint == if p.leader { r.leader } else { r.worker }
    }

    fn live_pods(&self, g: i32) -> Vec<(&String, &PodInfo)> {
        let Some(group) = self.groups.get(&g) else {
            return Vec::new();
        };
        group
            .pods
            .iter()
            .filter_map(|n| self.pods.get(n).map(|i| (n, i)))
            .filter(|(_, i)| !i.terminating)
            .collect()
    }

    fn all_ready(&self, g: i32) -> bool {
        let live = self.live_pods(g);
        live.len() as i32 == self.size
            && live.iter().filter(|(_, i)| i.leader).count() == 1
            && live.iter().all(|(_, i)| i.ready)
    }

    fn phase_of(&self, g: i32) -> Phase {
        let live = self.live_pods(g);
        if live.is_empty() {
            return Phase::Empty;
        }
        if live.iter().all(|(_, i)| self.matches_latest(i)) {
            return if self.all_ready(g) {
                Phase::Done
            } else {
                Phase::On
            };
        }
        if live.iter().any(|(_, i)| self.is_new(i)) {
            Phase::Moving
        } else {
            Phase::Old
        }
    }

    fn reevaluate(&mut self, api: &ApiServer, g: i32) {
        let live = self.live_pods(g);
        let has_live = !live.is_empty();
        let has_leader = live.iter().any(|(_, i)| i.leader);
        let available = self.all_ready(g);
        let phase = self.phase_of(g);
        let replicas = self.replicas;
        let group = self.groups.entry(g).or_default();
        let before_phase = group.phase;
        self.counts.add(g, group, replicas, -1);
        group.available = available;
        group.phase = phase;
        group.has_live = has_live;
        group.has_leader = has_leader;
        self.counts.add(g, group, replicas, 1);
        // A disrupted group recovers once it has stayed available for DISRUPTION_SETTLE_MS: a
        // container restarted in place may still owe a group restart (RecreateGroupOnPodRestart)
        // that a controller, perhaps restarting itself, carries out a little later.
        if available {
            self.available_since.entry(g).or_insert(api.now_ms());
            self.unavailable_since.remove(&g);
            self.down_terminating.remove(&g);
        } else {
            self.available_since.remove(&g);
            self.unavailable_since.entry(g).or_insert(api.now_ms());
            if self.has_terminating(g) {
                self.down_terminating.insert(g);
            }
        }
        let left_old = matches!(phase, Phase::Moving | Phase::On | Phase::Done);
        if before_phase == Phase::Old && left_old && g < self.replicas {
            self.check_order(api, g);
        }
        self.check_consistency(api, g, available);
    }

    fn group_objects(&self, g: i32) -> Vec<String> {
        self.groups
            .get(&g)
            .map(|x| x.pods.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// `<lws>-<g>` is a leader, `<lws>-<g>-<w>` a worker of group g.
fn group_of(lws: &str, pod: &str) -> Option<i32> {
    let rest = pod.strip_prefix(lws)?.strip_prefix('-')?;
    rest.split('-').next()?.parse().ok()
}

/// The last `n` trace lines naming one of `objects` (or a fault), oldest first.
fn recent_events(api: &ApiServer, objects: &[String], n: usize) -> Vec<String> {
    let mut out: Vec<String> = api
        .trace
        .entries
        .iter()
        .rev()
        .filter(|e| e.actor == "fault" || objects.contains(&e.name))
        .take(n)
        .map(|e| e.line())
        .collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_indices_parse_from_pod_names() {
        assert_eq!(group_of("vllm", "vllm-3"), Some(3));
        assert_eq!(group_of("vllm", "vllm-3-2"), Some(3));
        assert_eq!(group_of("vllm", "vllmx-3"), None);
        assert_eq!(group_of("vllm", "vllm-a"), None);
    }

    #[test]
    fn fingerprints_ignore_injected_env_but_not_images() {
        let c = |image: &str, env: &[&str]| Container {
            name: "c".into(),
            image: Some(image.into()),
            env: Some(
                env.iter()
                    .map(|n| k8s_openapi::api::core::v1::EnvVar {
                        name: n.to_string(),
                        value: Some("x".into()),
                        value_from: None,
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        let spec = |c: Container| PodSpec {
            containers: vec![c],
            ..Default::default()
        };
        assert_eq!(
            fingerprint(Some(&spec(c("a", &[])))),
            fingerprint(Some(&spec(c("a", &["LWS_LEADER_ADDRESS"]))))
        );
        assert_ne!(
            fingerprint(Some(&spec(c("a", &[])))),
            fingerprint(Some(&spec(c("b", &[]))))
        );
        assert_ne!(
            fingerprint(Some(&spec(c("a", &[])))),
            fingerprint(Some(&spec(c("a", &["USER_VAR"]))))
        );
    }
}
