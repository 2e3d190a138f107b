//! The deterministic world: the kernel (one clock, one event queue, one RNG), the API server and
//! the Kubernetes actors, and the fault verbs that scenarios and the fuzzer share.
//!
//! The loop is closed: the next thing to happen is either the head of the event queue (external
//! events: faults and scenario steps) or the earliest `next_wakeup_ms` of an actor (a watch event
//! becoming visible, a timer). Ties go to queued events first, then actors in `ActorId` order.

use std::cell::Cell;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::actors::disruption::DisruptionController;
use crate::actors::drain::{DrainOutcome, Drainer};
use crate::actors::gc::GarbageCollector;
use crate::actors::kubelet::Kubelet;
use crate::actors::nodes::{register_node, NodeLifecycle};
use crate::actors::scheduler::Scheduler;
use crate::actors::statefulset::StatefulSetController;
use crate::api::{ApiServer, DeleteOptions};
pub use crate::cluster::{ClusterConfig, Infra};
use crate::controller::{ControllerConfig, ControllerRuntime};
use crate::fault::ClusterFault;
use crate::rng::SimRng;
use crate::time::{after, fmt_ms, HORIZON_MS};

/// Everything that can happen from outside the actors. One closed enum: "what can trigger work?"
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Cordon(String),
    Uncordon(String),
    DrainNode {
        node: String,
        replace: bool,
    },
    FailNode(String),
    CrashContainer {
        namespace: String,
        pod: String,
    },
    DeletePod {
        namespace: String,
        pod: String,
        grace_period_seconds: Option<i64>,
    },
    KillController,
    /// Crash the controller right after its N-th API write from now.
    KillControllerAfterWrites(u64),
    /// Fire every informer's resync now.
    Resync,
    /// Fire a resync right after the N-th controller reconcile from now finishes.
    ResyncAfterReconciles(u64),
    /// Hold back the N-th watch event the controller receives from now (unobserved state).
    HoldWatchEvent(u64),
    /// Serve the N-th controller reconcile from now from previous versions (stale state).
    StaleRead(u64),
    /// A fault the world injects on its own (`fault.rs`).
    Fault(ClusterFault),
}

/// An actor's next wake-up as last computed, and the API's `change_stamp` it was computed at
/// (`None`: not computed since the actor's state last changed).
#[derive(Clone, Copy, Default)]
struct Wakeup {
    stamp: Option<(u64, bool)>,
    at_ms: Option<u64>,
}

/// Which actor runs; the order breaks ties at equal times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ActorId {
    Controller,
    StatefulSet,
    Scheduler,
    Kubelet,
    NodeLifecycle,
    Drain,
    GarbageCollector,
    Disruption,
}

impl ActorId {
    const ALL: [ActorId; 8] = [
        ActorId::Controller,
        ActorId::StatefulSet,
        ActorId::Scheduler,
        ActorId::Kubelet,
        ActorId::NodeLifecycle,
        ActorId::Drain,
        ActorId::GarbageCollector,
        ActorId::Disruption,
    ];
}

/// More steps than this at one simulated instant is a livelock, not progress.
pub const STEPS_AT_INSTANT_MAX: u64 = 100_000;

/// Why the world stopped stepping before its deadline: a run limit, for the caller to turn into
/// a verdict. Once stopped, `step` does nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `STEPS_AT_INSTANT_MAX` steps at `at_ms` without time advancing (e.g. a zero resync
    /// period); `next` is the actor that was due, if not a queued event.
    Livelock { at_ms: u64, next: Option<ActorId> },
    /// The next thing is due at `at_ms`, past `HORIZON_MS`.
    Horizon { at_ms: u64 },
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Livelock { at_ms, next } => write!(
                f,
                "livelock: {STEPS_AT_INSTANT_MAX} steps at t={at_ms}ms without time advancing (next: {next:?})"
            ),
            Stop::Horizon { at_ms } => write!(
                f,
                "simulated time would pass the horizon ({}) at t={at_ms}ms",
                fmt_ms(HORIZON_MS)
            ),
        }
    }
}

pub struct World {
    pub now_ms: u64,
    pub api: ApiServer,
    pub rng: SimRng,
    pub config: ClusterConfig,
    pub infra: Infra,
    queue: BTreeMap<(u64, u64), Event>,
    seq: u64,
    pub event_count: u64,
    /// Consecutive steps at one instant: a bound that turns a livelock into a report.
    steps_at_instant: u64,
    /// Set when a run limit stopped the world.
    stop: Option<Stop>,
    pub statefulsets: Option<StatefulSetController>,
    pub scheduler: Option<Scheduler>,
    pub kubelet: Option<Kubelet>,
    pub nodes: NodeLifecycle,
    pub drain: Drainer,
    pub gc: Option<GarbageCollector>,
    pub disruption: Option<DisruptionController>,
    /// The LWS controller pod, once installed.
    pub controller: Option<ControllerRuntime>,
    replacement_count: u32,
    /// The slot (`node-<slot>`) each replacement node took the place of: its topology labels.
    replaced_slots: BTreeMap<String, u32>,
    /// Each actor's next wake-up, by `ActorId`: asked of every actor before every step, it
    /// changes only when the actor's own state does (its step; an external event or a drain's
    /// instance termination, which may touch any actor) or the API's logs do (`change_stamp`).
    /// Code that changes an actor outside `step` must call `forget_wakeups`.
    /// One cell per actor, so a step reads and writes one entry, not a copy of all eight.
    wakeups: [Cell<Wakeup>; 8],
}

impl World {
    pub fn new(seed: u64, config: ClusterConfig) -> World {
        let mut api = ApiServer::new(seed, config.gates());
        let mut rng = SimRng::labelled(seed, "world");
        let mut infra = Infra::default();
        for i in 0..config.node_count {
            let name = ClusterConfig::node_name(i);
            infra.add_machine(&name);
            register_node(&mut api, &name, i, &config, 0);
        }
        let lag = |r: &mut SimRng, range: (u64, u64)| r.range_inclusive(range.0, range.1);
        let (statefulsets, scheduler, kubelet) = if config.manual {
            (None, None, None)
        } else {
            let r = config.watch_lag_ms;
            let sts_lag = [lag(&mut rng, r), lag(&mut rng, r), lag(&mut rng, r)];
            let sched_lag = [lag(&mut rng, r), lag(&mut rng, r)];
            let kubelet_lag = lag(&mut rng, r);
            (
                Some(StatefulSetController::new(&api, sts_lag)),
                Some(Scheduler::new(&api, sched_lag)),
                Some(Kubelet::new(&api, kubelet_lag)),
            )
        };
        let gc_lag = lag(&mut rng, config.gc_lag_ms);
        let gc = (!config.manual).then(|| GarbageCollector::new(&api, gc_lag));
        let nodes = NodeLifecycle::new(&api);
        let disruption = (!config.manual).then(|| DisruptionController::new(&api));
        World {
            now_ms: 0,
            api,
            rng,
            config,
            infra,
            queue: BTreeMap::new(),
            seq: 0,
            event_count: 0,
            steps_at_instant: 0,
            stop: None,
            statefulsets,
            scheduler,
            kubelet,
            nodes,
            drain: Drainer::default(),
            gc,
            disruption,
            controller: None,
            replacement_count: 0,
            replaced_slots: BTreeMap::new(),
            wakeups: Default::default(),
        }
    }

    /// Install the LWS controller (its webhooks and its pod) running `config.profile`.
    pub fn install_controller(&mut self, config: ControllerConfig) {
        self.controller = Some(ControllerRuntime::new(config, &mut self.api));
        self.forget_wakeups();
    }

    /// Every actor's next wake-up is asked again before the next step.
    pub fn forget_wakeups(&self) {
        for w in &self.wakeups {
            w.set(Wakeup::default());
        }
    }

    /// Actor `id`'s next wake-up is asked again before the next step.
    fn forget_wakeup(&self, id: ActorId) {
        self.wakeups[id as usize].set(Wakeup::default());
    }

    /// Queue an external event at `at_ms` (not before now).
    pub fn schedule(&mut self, at_ms: u64, event: Event) {
        self.seq += 1;
        self.queue.insert((at_ms.max(self.now_ms), self.seq), event);
    }

    /// The actor due first, at its time (not before now); ties go to the first in `ActorId`
    /// order. Each actor's wake-up is asked again only when it may have changed (`wakeups`).
    fn next_actor(&self) -> Option<(u64, ActorId)> {
        let stamp = self.api.change_stamp();
        let mut next = None;
        for id in ActorId::ALL {
            let cell = &self.wakeups[id as usize];
            let mut w = cell.get();
            if w.stamp != Some(stamp) {
                w = Wakeup {
                    stamp: Some(stamp),
                    at_ms: self.wakeup_of(id),
                };
                cell.set(w);
            }
            if let Some(t) = w.at_ms {
                let due = (t.max(self.now_ms), id);
                next = Some(next.map_or(due, |n: (u64, ActorId)| n.min(due)));
            }
        }
        next
    }

    /// When actor `id` next wants to run, asked of the actor.
    fn wakeup_of(&self, id: ActorId) -> Option<u64> {
        let api = &self.api;
        match id {
            ActorId::Controller => self.controller.as_ref()?.next_wakeup_ms(api),
            ActorId::StatefulSet => self.statefulsets.as_ref()?.next_wakeup_ms(api),
            ActorId::Scheduler => self.scheduler.as_ref()?.next_wakeup_ms(api),
            ActorId::Kubelet => self.kubelet.as_ref()?.next_wakeup_ms(api),
            ActorId::NodeLifecycle => self.nodes.next_wakeup_ms(api),
            ActorId::Drain => self.drain.next_wakeup_ms(),
            ActorId::GarbageCollector => self.gc.as_ref()?.next_wakeup_ms(api),
            ActorId::Disruption => self.disruption.as_ref()?.next_wakeup_ms(api),
        }
    }

    /// When the next thing happens, if anything is pending.
    pub fn next_time_ms(&self) -> Option<u64> {
        let q = self.queue.keys().next().map(|k| k.0);
        [q, self.next_actor().map(|a| a.0)]
            .into_iter()
            .flatten()
            .min()
    }

    /// Why the world stopped, if a run limit stopped it (`step` then always returns false).
    pub fn stopped(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// Run the next event or actor step if it is due at or before `deadline_ms`. False when
    /// nothing is, or when a run limit stops the world (see `stopped`).
    pub fn step(&mut self, deadline_ms: u64) -> bool {
        if self.stop.is_some() {
            return false;
        }
        let queued = self.queue.keys().next().copied();
        let actor = self.next_actor();
        let run_queued = match (queued, actor) {
            (Some((tq, _)), Some((ta, _))) => tq <= ta,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return false,
        };
        let at = if run_queued {
            queued.map(|q| q.0)
        } else {
            actor.map(|a| a.0)
        }
        .expect("some");
        if at > deadline_ms {
            return false;
        }
        if at > HORIZON_MS {
            self.stop = Some(Stop::Horizon { at_ms: at });
            return false;
        }
        assert!(at >= self.now_ms, "time went back: {} -> {at}", self.now_ms);
        self.steps_at_instant = if at == self.now_ms {
            self.steps_at_instant + 1
        } else {
            0
        };
        if self.steps_at_instant >= STEPS_AT_INSTANT_MAX {
            let next = if run_queued { None } else { actor.map(|a| a.1) };
            self.stop = Some(Stop::Livelock { at_ms: at, next });
            return false;
        }
        self.now_ms = at;
        self.api.set_now(at);
        self.event_count += 1;
        if run_queued {
            let key = queued.expect("queued");
            let event = self.queue.remove(&key).expect("present");
            self.handle(event);
            self.forget_wakeups();
        } else {
            let id = actor.expect("actor").1;
            self.run_actor(id);
            // A drain's step may terminate an instance, which touches other actors.
            if id == ActorId::Drain {
                self.forget_wakeups();
            } else {
                self.forget_wakeup(id);
            }
        }
        true
    }

    /// Run everything due up to `deadline_ms`, then set the clock to it (`u64::MAX`: leave the
    /// clock at the last event). A deadline past `HORIZON_MS` stops the world at the horizon.
    pub fn run_until(&mut self, deadline_ms: u64) {
        while self.step(deadline_ms) {}
        if self.stop.is_some() || deadline_ms == u64::MAX {
            return;
        }
        if deadline_ms > HORIZON_MS {
            self.stop = Some(Stop::Horizon { at_ms: deadline_ms });
        }
        let to = deadline_ms.min(HORIZON_MS);
        if to > self.now_ms {
            self.now_ms = to;
            self.api.set_now(to);
        }
    }

    /// Run until `done` holds (checked after every event) or `timeout_ms` passes. Returns whether
    /// it held.
    pub fn run_until_pred(
        &mut self,
        timeout_ms: u64,
        mut done: impl FnMut(&World) -> bool,
    ) -> bool {
        let deadline = after(self.now_ms, timeout_ms);
        loop {
            if done(self) {
                return true;
            }
            if !self.step(deadline) {
                self.run_until(deadline);
                return done(self);
            }
        }
    }

    fn run_actor(&mut self, id: ActorId) {
        let now = self.now_ms;
        match id {
            ActorId::Controller => {
                if let Some(c) = self.controller.as_mut() {
                    c.step(&mut self.api, &mut self.rng);
                }
            }
            ActorId::StatefulSet => {
                if let Some(a) = self.statefulsets.as_mut() {
                    a.step(&mut self.api, now);
                }
            }
            ActorId::Scheduler => {
                if let Some(a) = self.scheduler.as_mut() {
                    a.step(&mut self.api, now);
                }
            }
            ActorId::Kubelet => {
                if let Some(a) = self.kubelet.as_mut() {
                    a.step(&mut self.api, &mut self.rng, &self.infra, &self.config, now);
                }
            }
            ActorId::NodeLifecycle => {
                self.nodes
                    .step(&mut self.api, &mut self.infra, &self.config, now)
            }
            ActorId::Drain => {
                for outcome in self.drain.step(&mut self.api, &self.infra, now) {
                    if let DrainOutcome::TerminateInstance(node) = outcome {
                        self.terminate_instance(&node, true);
                    }
                }
            }
            ActorId::GarbageCollector => {
                if let Some(gc) = self.gc.as_mut() {
                    gc.step(&mut self.api, now);
                }
            }
            ActorId::Disruption => {
                if let Some(d) = self.disruption.as_mut() {
                    d.step(&mut self.api, now);
                }
            }
        }
    }

    fn handle(&mut self, event: Event) {
        let now = self.now_ms;
        match event {
            Event::Cordon(node) => self.cordon(&node, true),
            Event::Uncordon(node) => self.cordon(&node, false),
            Event::DrainNode { node, replace } => {
                self.api.trace_external(
                    "fault",
                    "drainNode",
                    "Node",
                    &node,
                    format!("replace={replace}"),
                );
                self.drain.start(&node, replace, now);
            }
            Event::FailNode(node) => {
                self.api
                    .trace_external("fault", "failNode", "Node", &node, String::new());
                if self.infra.kill(&node) {
                    self.nodes.machine_failed(&node, &self.config, now);
                }
            }
            Event::CrashContainer { namespace, pod } => {
                self.api
                    .trace_external("fault", "crashContainer", "Pod", &pod, String::new());
                if let Some(k) = self.kubelet.as_mut() {
                    k.crash_container(&mut self.api, &namespace, &pod, now);
                }
            }
            Event::DeletePod {
                namespace,
                pod,
                grace_period_seconds,
            } => self.delete_pod(&namespace, &pod, grace_period_seconds),
            e @ (Event::KillController
            | Event::KillControllerAfterWrites(_)
            | Event::ResyncAfterReconciles(_)
            | Event::HoldWatchEvent(_)
            | Event::StaleRead(_)
            | Event::Resync) => self.controller_fault(e),
            Event::Fault(f) => self.inject(f),
        }
    }

    /// A fault the world injects on its own (`fault.rs`); traced as `fault:<key>`.
    fn inject(&mut self, fault: ClusterFault) {
        let now = self.now_ms;
        let detail = serde_json::to_string(&fault).unwrap_or_default();
        self.api
            .trace_external("fault", fault.key(), "", "", detail);
        match fault {
            ClusterFault::ApiErrors(s) => {
                if let Some(c) = self.controller.as_mut() {
                    c.fail_writes(after(now, s.duration.0), s.code);
                }
            }
            ClusterFault::SlowApi(s) => {
                if let Some(c) = self.controller.as_mut() {
                    c.slow_writes(after(now, s.duration.0), s.extra.0);
                }
            }
        }
    }

    /// `kubectl cordon` / `uncordon`: a merge patch of `spec.unschedulable`. A missing node is
    /// traced as a failed cordon either way.
    fn cordon(&mut self, node: &str, cordon: bool) {
        if self.api.try_get::<Node>("", node).is_none() {
            self.api
                .trace_external("fault", "cordon", "Node", node, "error=NotFound".into());
            return;
        }
        let (verb, value) = if cordon {
            ("cordon", serde_json::Value::Bool(true))
        } else {
            ("uncordon", serde_json::Value::Null)
        };
        self.api
            .trace_external("fault", verb, "Node", node, String::new());
        let patch = serde_json::json!({"spec": {"unschedulable": value}});
        let _ = self.api.merge_patch::<Node>("kubectl", "", node, &patch);
    }

    /// `kubectl delete pod`, with its grace period if given.
    fn delete_pod(&mut self, namespace: &str, pod: &str, grace_period_seconds: Option<i64>) {
        let detail = grace_period_seconds
            .map(|g| format!("grace={g}"))
            .unwrap_or_default();
        self.api
            .trace_external("fault", "deletePod", "Pod", pod, detail);
        let opts = DeleteOptions {
            grace_period_seconds,
            ..DeleteOptions::default()
        };
        let _ = self.api.delete::<Pod>("kubectl", namespace, pod, &opts);
    }

    /// The faults aimed at the LWS controller pod: kills, resyncs, held events, stale reads.
    fn controller_fault(&mut self, event: Event) {
        let trace = |api: &mut ApiServer, verb: &str, detail: String| {
            api.trace_external("fault", verb, "", "", detail);
        };
        match event {
            Event::KillController => {
                if let Some(c) = self.controller.as_mut() {
                    c.kill(&mut self.api, &mut self.rng);
                }
            }
            Event::KillControllerAfterWrites(n) => {
                self.api.trace_external(
                    "fault",
                    "killControllerAfterWrites",
                    "Pod",
                    "",
                    format!("writes={n}"),
                );
                if let Some(c) = self.controller.as_mut() {
                    c.kill_after_writes(n);
                }
            }
            Event::ResyncAfterReconciles(n) => {
                trace(
                    &mut self.api,
                    "resyncAfterReconciles",
                    format!("reconciles={n}"),
                );
                if let Some(c) = self.controller.as_mut() {
                    c.resync_after_reconciles(n);
                }
            }
            Event::HoldWatchEvent(n) => {
                trace(&mut self.api, "holdWatchEvent", format!("nth={n}"));
                if let Some(c) = self.controller.as_mut() {
                    c.hold_event(n);
                }
            }
            Event::StaleRead(n) => {
                trace(&mut self.api, "staleRead", format!("atReconcile={n}"));
                if let Some(c) = self.controller.as_mut() {
                    c.stale_reconcile(n);
                }
            }
            Event::Resync => {
                trace(&mut self.api, "resync", String::new());
                if let Some(c) = self.controller.as_mut() {
                    c.resync_now(&self.api);
                }
            }
            other => unreachable!("not a controller fault: {other:?}"),
        }
    }

    /// The slot of `node`: `i` for `node-<i>`, a replacement's predecessor's slot.
    fn slot_of(&self, node: &str) -> u32 {
        self.replaced_slots.get(node).copied().unwrap_or_else(|| {
            node.strip_prefix("node-")
                .and_then(|i| i.parse().ok())
                .unwrap_or(0)
        })
    }

    /// The instance behind `node` is terminated: the kubelet stops, the cloud controller deletes
    /// the Node, and with `replace` a new node joins.
    fn terminate_instance(&mut self, node: &str, replace: bool) {
        let now = self.now_ms;
        self.api
            .trace_external("cloud", "terminateInstance", "Node", node, String::new());
        self.infra.kill(node);
        self.nodes.machine_failed(node, &self.config, now);
        self.nodes.instance_terminated(node, &self.config, now);
        if replace {
            let name = format!("node-r{}", self.replacement_count);
            self.replacement_count += 1;
            let slot = self.slot_of(node);
            self.replaced_slots.insert(name.clone(), slot);
            self.nodes.schedule_join(&name, slot, &self.config, now);
        }
    }
}
