//! A model of controller-runtime running the ported LWS controllers (controller-runtime
//! v0.24.1 `pkg/internal/controller`, `pkg/cache`, `pkg/manager`; client-go leaderelection).
//!
//! The controller *pod* runs one manager: shared informer caches fed from the watch logs with
//! their own lag, a work queue per controller (dedup, earliest-due wins, 5 ms..1000 s backoff),
//! one in-flight reconcile per controller (`MaxConcurrentReconciles = 1`), event handlers wired as
//! upstream's `SetupWithManager`, the 10 h resync, and Lease leader election. Killing the pod
//! drops all of it; a new pod waits out the old lease, lists everything and reconciles it all.

pub mod client;
pub mod direct;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use lws::api::{keys, LeaderWorkerSet};
use lws::client::Action;
use lws::disagg::api::{DisaggregatedSet, DisaggregatedSetRoleScaler};
use lws::k8s;
use lws::profile::{Flags, GangScheduling, Profile, Release};

use crate::api::{
    self, ApiError, ApiServer, DeleteOptions, Deleted, Key, Kind, KindId, Operation, Rejection,
    Shared,
};
use crate::informer::{Delta, Informer};
use crate::queue::WorkQueue;
use crate::rng::SimRng;
use crate::time::{after, to_time};
use client::{AnyObject, Caches, Exchange, SimClient, WriteOp};

pub const LWS_ACTOR: &str = "lws-controller";
pub const POD_ACTOR: &str = "pod-controller";
pub const DS_ACTOR: &str = "disaggregatedset-controller";
pub const LEASE_NAME: &str = "b8b2488c.x-k8s.io";
pub const LEASE_NAMESPACE: &str = "lws-system";

#[derive(Clone, Debug)]
pub struct ControllerConfig {
    pub profile: Profile,
    /// controller-runtime `SyncPeriod` (default 10 h), jittered x U[0.9, 1.1) per informer.
    pub sync_period_ms: u64,
    pub api_latency_ms: (u64, u64),
    pub watch_lag_ms: (u64, u64),
    /// Kill -> the replacement pod's manager starts (container restart or new pod).
    pub restart_delay_ms: (u64, u64),
    /// Leader election: lease 15 s, retry 2 s x U[1, 2.2) (client-go leaderelection, lws cmd/main.go).
    pub lease_duration_ms: u64,
    pub retry_period_ms: u64,
    /// Keep each cached object's previous version, so a `staleRead` step can be served.
    pub track_previous: bool,
}

impl ControllerConfig {
    pub fn new(profile: Profile) -> ControllerConfig {
        ControllerConfig {
            profile,
            sync_period_ms: 36_000_000,
            api_latency_ms: (2, 20),
            watch_lag_ms: (1, 10),
            restart_delay_ms: (1_000, 5_000),
            lease_duration_ms: 15_000,
            retry_period_ms: 2_000,
            track_previous: false,
        }
    }
}

/// Register the release's webhooks on the API server. They are served by the controller pod, so
/// while it is down, calls fail (`failurePolicy: Fail`).
pub fn register_webhooks(api: &mut ApiServer, profile: &Profile, serving: Rc<Cell<bool>>) {
    if profile.release == Release::V0_10_0 {
        return register_webhooks_v0_10_0(api, serving, profile.flags.gang_scheduling);
    }
    let flags = &profile.flags;
    let (f, s) = (flags.clone(), serving.clone());
    api.add_mutating_hook::<LeaderWorkerSet>("mleaderworkerset.kb.io", move |l, _| {
        webhook_down(&s)?;
        decodes(l)?;
        lws::webhook::default_lws(l, &f);
        canonical_templates(l);
        Ok(())
    });
    let f = flags.clone();
    api.add_schema_check::<LeaderWorkerSet>(move |l| lws::webhook::validate_schema(l, &f));
    let (f, s) = (flags.clone(), serving.clone());
    api.add_validating_hook::<LeaderWorkerSet>("vleaderworkerset.kb.io", move |l, old| {
        webhook_down(&s)?;
        Ok(lws::webhook::validate_webhook(l, old, &f)?)
    });
    let (f, s) = (flags.clone(), serving.clone());
    api.add_mutating_hook::<Pod>("mpod.kb.io", move |p, op| {
        // objectSelector: only pods with the LWS name label reach the webhook.
        if k8s::label(&p.metadata, keys::SET_NAME).is_none() {
            return Ok(());
        }
        webhook_down(&s)?;
        let _ = op == Operation::Create; // CREATE and UPDATE in V3/FX; every step is idempotent.
        Ok(lws::webhook::default_pod(p, &f)?)
    });
    register_pod_validator(api, serving);
}

/// v0.10.0 installs the DisaggregatedSet CRDs (config/crd/bases) and registers their
/// validating webhook `vdisaggregatedset.kb.io` (pkg/webhooks/disaggregatedset, CREATE and
/// UPDATE, `failurePolicy: Fail`). The CRDs' defaults and schema checks are the API server's
/// own and do not depend on the webhook.
fn register_disaggregated_set(api: &mut ApiServer, serving: Rc<Cell<bool>>) {
    use lws::disagg::webhook;
    api.disaggregated_set_crds = true;
    api.add_mutating_hook::<DisaggregatedSet>("crd-defaults", |d, _| {
        webhook::default_crd(d);
        Ok(())
    });
    api.add_schema_check::<DisaggregatedSet>(|d| {
        lws::v0_10_0::webhook::aggregate(webhook::validate_crd(d, None))
    });
    let warnings = api.admission_warnings.clone();
    api.add_validating_hook::<DisaggregatedSet>("vdisaggregatedset.kb.io", move |d, _old| {
        webhook_down(&serving)?;
        // `admission.Warnings` (disaggregatedset_webhook.go:87-93 at v0.10.0), which the
        // apiserver returns to the client with the answer, admitted or not.
        let (warned, errs) = webhook::validate(d);
        warnings.borrow_mut().extend(warned);
        Ok(lws::v0_10_0::webhook::aggregate(errs)?)
    });
    api.add_mutating_hook::<DisaggregatedSetRoleScaler>("crd-defaults", |s, _| {
        webhook::default_scaler_crd(s);
        Ok(())
    });
    api.add_schema_check::<DisaggregatedSetRoleScaler>(|s| {
        lws::v0_10_0::webhook::aggregate(webhook::validate_scaler_crd(s, None))
    });
}

/// `vpod.kb.io` (every release's config/webhook: pods, CREATE and UPDATE, `failurePolicy:
/// Fail`, objectSelector on the LWS name label): its `validate` admits every pod
/// (pkg/webhooks/pod_webhook.go), but while the controller pod is down an update of an LWS pod
/// fails (status writes go to the `/status` subresource, which it does not cover).
fn register_pod_validator(api: &mut ApiServer, serving: Rc<Cell<bool>>) {
    api.add_validating_hook::<Pod>("vpod.kb.io", move |p, old| {
        // The objectSelector matches an update when the old or the new object matches.
        let labelled = |p: &Pod| k8s::label(&p.metadata, keys::SET_NAME).is_some();
        if !labelled(p) && !old.is_some_and(labelled) {
            return Ok(());
        }
        webhook_down(&serving)
    });
}

/// The Go webhook decodes the LWS into Go types first (controller-runtime's decoder): a
/// quantity that does not parse fails the request with a 400 (`Errored(http.StatusBadRequest,
/// err)`). Simplified: a quantity the CRD's pattern refuses is left to the schema check, which
/// names its field (upstream the webhook, called before schema validation, refuses it first,
/// naming none); what is left is a quantity of the pattern's shape that does not parse (an
/// exponent past int64: `1e99999999999999999999`).
fn decodes(l: &LeaderWorkerSet) -> Result<(), Rejection> {
    use crate::api::quantity::{each_in_map, each_in_pod_spec, matches_crd_pattern};
    let mut bad = None;
    let mut check =
        |_: crate::api::quantity::PathOf,
         q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity| {
            if bad.is_none() && matches_crd_pattern(&q.0) {
                bad = lws::quantity::Quantity::parse(&q.0).err();
            }
        };
    let t = &l.spec.leader_worker_template;
    let templates = t.leader_template.iter().chain([&t.worker_template]);
    for spec in templates.filter_map(|t| t.spec.as_ref()) {
        each_in_pod_spec(spec, "", &mut check);
    }
    let claims = t.volume_claim_templates.iter().flatten();
    for r in claims.filter_map(|c| c.spec.as_ref()?.resources.as_ref()) {
        each_in_map(r.limits.as_ref(), &String::new, &mut check);
        each_in_map(r.requests.as_ref(), &String::new, &mut check);
    }
    bad.map_or(Ok(()), |why| Err(Rejection::Undecodable(why.to_string())))
}

/// The LWS a Go defaulting webhook answers with is the request decoded into Go types and
/// encoded again (controller-runtime `PatchResponseFromRaw`): the templates' quantities come
/// back canonical (`0.5` as `500m`), and the patch writes them so.
fn canonical_templates(l: &mut LeaderWorkerSet) {
    use crate::api::quantity::{canonicalize_claim, canonicalize_pod_spec, Rounding};
    // The webhook decodes into Go types and re-encodes: no defaulting rounds anything. A
    // quantity that does not parse is left to the schema check (`decodes` refused the ones of
    // the pattern's shape), which refuses this LWS.
    let t = &mut l.spec.leader_worker_template;
    let templates = t.leader_template.iter_mut().chain([&mut t.worker_template]);
    for spec in templates.filter_map(|t| t.spec.as_mut()) {
        let _ = canonicalize_pod_spec(spec, Rounding::None);
    }
    for claim in t.volume_claim_templates.iter_mut().flatten() {
        let _ = canonicalize_claim(claim, Rounding::None);
    }
}

fn webhook_down(s: &Rc<Cell<bool>>) -> Result<(), Rejection> {
    if s.get() {
        Ok(())
    } else {
        Err(Rejection::Unreachable(
            "failed to call webhook: connect: connection refused".into(),
        ))
    }
}

/// v0.10.0's webhooks (pkg/webhooks at the tag): the pod webhook is registered for CREATE only.
fn register_webhooks_v0_10_0(api: &mut ApiServer, serving: Rc<Cell<bool>>, gang: GangScheduling) {
    use lws::v0_10_0::webhook;
    // Its CRD's printer columns (config/crd/bases at v0.10.0), for `serve`'s tables.
    api.lws_printer_columns = true;
    let s = serving.clone();
    api.add_mutating_hook::<LeaderWorkerSet>("mleaderworkerset.kb.io", move |l, _| {
        webhook_down(&s)?;
        decodes(l)?;
        webhook::default_lws(l);
        canonical_templates(l);
        Ok(())
    });
    api.add_schema_check::<LeaderWorkerSet>(webhook::check_schema);
    let s = serving.clone();
    api.add_validating_hook::<LeaderWorkerSet>("vleaderworkerset.kb.io", move |l, old| {
        webhook_down(&s)?;
        webhook::validate_webhook(l, old).map_err(rejection)
    });
    let s = serving.clone();
    api.add_mutating_hook::<Pod>("mpod.kb.io", move |p, op| {
        if op != Operation::Create || k8s::label(&p.metadata, keys::SET_NAME).is_none() {
            return Ok(());
        }
        webhook_down(&s)?;
        webhook::default_pod(p, gang).map_err(rejection)
    });
    register_pod_validator(api, serving.clone());
    register_disaggregated_set(api, serving);
    if gang == GangScheduling::Volcano {
        register_volcano(api);
    }
}

/// With `gang-scheduling=volcano` the cluster has Volcano installed: its PodGroup CRD, whose
/// defaults are `spec.queue: default` and, in a `networkTopology`, `mode: hard` and
/// `highestTierAllowed: 1`, each filled in only when absent (config/crd/volcano/bases/
/// scheduling.volcano.sh_podgroups.yaml, volcano v1.12: the `+kubebuilder:default` markers of
/// volcano.sh/apis v1.12.1), and whose one enum is the mode (`hard` or `soft`, a 422
/// otherwise). Volcano's own admission webhooks and controllers are not modelled; the gang gate
/// of its scheduler is (`actors::scheduler`).
fn register_volcano(api: &mut ApiServer) {
    api.volcano_crds = true;
    api.add_mutating_hook::<lws::volcano::PodGroup>("crd-defaults", |pg, _| {
        let spec = &mut pg.spec;
        spec.queue
            .get_or_insert_with(|| lws::volcano::DEFAULT_QUEUE.to_string());
        if let Some(t) = &mut spec.network_topology {
            t.mode.get_or_insert_with(|| "hard".to_string());
            t.highest_tier_allowed.get_or_insert(1);
        }
        Ok(())
    });
    api.add_schema_check::<lws::volcano::PodGroup>(|pg| {
        let mut errs = Vec::new();
        let mode = pg
            .spec
            .network_topology
            .as_ref()
            .and_then(|t| t.mode.as_deref());
        if let Some(m) = mode {
            let path = "spec.networkTopology.mode";
            lws::crd::check_enum(&mut errs, path, m, &["hard", "soft"]);
        }
        // controller-gen's quantity pattern on every `minResources` value.
        let resources = pg.spec.min_resources.as_ref();
        let at = || "spec.minResources".to_string();
        crate::api::quantity::each_in_map(resources, &at, &mut |q_at, q| {
            crate::api::podspec::crd_quantity(&mut errs, q_at, q)
        });
        match errs.len() {
            0 => Ok(()),
            1 => Err(errs.remove(0)),
            _ => Err(format!("[{}]", errs.join(", "))),
        }
    });
}

/// How the API server answers a v0.10.0 webhook's refusal: 403, or 500 for a panic.
fn rejection(r: lws::v0_10_0::webhook::Refusal) -> Rejection {
    use lws::v0_10_0::webhook::Refusal;
    match r {
        Refusal::Invalid(m) => Rejection::Denied(m),
        Refusal::Panicked(_) => Rejection::Panicked(r.to_string()),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Lws,
    Pod,
    /// v0.10.0's DisaggregatedSet controller, in the same manager (cmd/main.go at the tag).
    Ds,
}

struct InFlight {
    key: Key,
    future: Pin<Box<dyn Future<Output = lws::client::Result<Action>>>>,
    exchange: Rc<RefCell<Exchange>>,
    /// When the parked write completes.
    write_due_ms: Option<u64>,
}

struct Worker {
    which: Which,
    queue: WorkQueue,
    inflight: Option<InFlight>,
    /// Deleted pods waiting for their key's next reconcile (`pod-delete-events=tombstone`).
    tombstones: BTreeMap<Key, Shared<Pod>>,
}

impl Worker {
    fn actor(&self) -> &'static str {
        match self.which {
            Which::Lws => LWS_ACTOR,
            Which::Pod => POD_ACTOR,
            Which::Ds => DS_ACTOR,
        }
    }

    fn next_wakeup_ms(&self) -> Option<u64> {
        match &self.inflight {
            Some(f) => f.write_due_ms,
            None => self.queue.next_due_ms(),
        }
    }
}

enum Phase {
    /// Trying to acquire the lease; `observed` is when this candidate first saw the current record.
    Electing {
        observed: Option<(u64, String)>,
        next_try_ms: u64,
    },
    Leading {
        caches: Rc<RefCell<Caches>>,
        resync: Vec<(u64, u64, KindId)>,
        workers: Box<[Worker; 3]>,
    },
}

/// One controller pod's manager.
struct Manager {
    identity: String,
    phase: Phase,
}

pub struct ControllerRuntime {
    pub config: ControllerConfig,
    manager: Option<Manager>,
    pub webhook_serving: Rc<Cell<bool>>,
    restart_at_ms: Option<u64>,
    pod_count: u32,
    /// Crash right after this many more controller writes (`killController: {afterWrites: N}`).
    kill_after_writes: Option<u64>,
    /// Fire a resync right after this many more reconciles finish (explore's reconcile
    /// boundaries).
    resync_after_reconciles: Option<u64>,
    /// Hold back the watch event this counts down to (explore's unobserved state).
    hold_event: Option<u64>,
    /// Serve the reconcile this counts down to from stale caches (explore's stale state).
    stale_reconcile: Option<u64>,
    pub writes: u64,
    /// Watch events delivered to the controller's caches (what `holdWatchEvent` counts).
    pub events_delivered: u64,
    pub restarts: u32,
    /// Events recorded by the reconcilers: "at_ms message".
    pub events: Vec<String>,
    /// Events recorded since the last step, for the API server's event store.
    recorded: Vec<crate::api::events::Recorded>,
    /// Reconciles started, per controller, for benches and tests.
    pub reconciles: [u64; 3],
    /// How the finished reconciles ended, typed.
    pub outcomes: ReconcileOutcomes,
    /// `apiErrors`: until when, and with which HTTP code, the API server fails its writes.
    failing_writes: Option<(u64, u16)>,
    /// `slowApi`: until when, and by how much, every write is slower.
    slow_writes: Option<(u64, u64)>,
}

impl ControllerRuntime {
    pub fn new(config: ControllerConfig, api: &mut ApiServer) -> ControllerRuntime {
        let serving = Rc::new(Cell::new(true));
        register_webhooks(api, &config.profile, serving.clone());
        ControllerRuntime {
            config,
            manager: None,
            webhook_serving: serving,
            restart_at_ms: Some(api.now_ms()),
            pod_count: 0,
            kill_after_writes: None,
            resync_after_reconciles: None,
            hold_event: None,
            stale_reconcile: None,
            writes: 0,
            events_delivered: 0,
            restarts: 0,
            events: Vec::new(),
            recorded: Vec::new(),
            reconciles: [0, 0, 0],
            outcomes: ReconcileOutcomes::default(),
            failing_writes: None,
            slow_writes: None,
        }
    }

    pub fn is_leading(&self) -> bool {
        matches!(
            self.manager.as_ref().map(|m| &m.phase),
            Some(Phase::Leading { .. })
        )
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        let Some(m) = &self.manager else {
            return self.restart_at_ms;
        };
        match &m.phase {
            Phase::Electing { next_try_ms, .. } => Some(*next_try_ms),
            Phase::Leading {
                caches,
                resync,
                workers,
            } => {
                let c = caches.borrow();
                [
                    c.lws.next_due_ms(api),
                    c.statefulsets.next_due_ms(api),
                    c.pods.next_due_ms(api),
                    c.services.next_due_ms(api),
                    c.nodes.next_due_ms(api),
                    c.revisions.next_due_ms(api),
                    c.disaggregatedsets.next_due_ms(api),
                    c.rolescalers.next_due_ms(api),
                    c.podgroups.as_ref().and_then(|p| p.next_due_ms(api)),
                    resync.iter().map(|r| r.0).min(),
                    workers[0].next_wakeup_ms(),
                    workers[1].next_wakeup_ms(),
                    workers[2].next_wakeup_ms(),
                ]
                .into_iter()
                .flatten()
                .min()
            }
        }
    }

    /// `apiErrors`: every write the controller sends before `until_ms` fails with `code` (429,
    /// 500 or 503) without reaching the API server; reads come from the caches and still work.
    pub fn fail_writes(&mut self, until_ms: u64, code: u16) {
        self.failing_writes = Some((until_ms, code));
    }

    /// `slowApi`: every write the controller sends before `until_ms` takes `extra_ms` longer.
    pub fn slow_writes(&mut self, until_ms: u64, extra_ms: u64) {
        self.slow_writes = Some((until_ms, extra_ms));
    }

    /// Kill the controller pod now: caches, queues and in-flight reconciles are lost. The lease
    /// is not released (LWS does not set `LeaderElectionReleaseOnCancel`).
    pub fn kill(&mut self, api: &mut ApiServer, rng: &mut SimRng) {
        let now = api.now_ms();
        api.trace_external(
            "fault",
            "killController",
            "Pod",
            &self.pod_name(),
            String::new(),
        );
        if let Some(m) = self.manager.take() {
            api.events.stop_recording(&m.identity);
        }
        self.webhook_serving.set(false);
        self.kill_after_writes = None;
        self.restarts += 1;
        let (lo, hi) = self.config.restart_delay_ms;
        self.restart_at_ms = Some(after(now, rng.range_inclusive(lo, hi)));
    }

    /// Crash right after the controller's `n`-th API write from now.
    /// Fire a resync right after the `n`-th reconcile from now finishes.
    pub fn resync_after_reconciles(&mut self, n: u64) {
        self.resync_after_reconciles = Some(n.max(1));
    }

    pub fn kill_after_writes(&mut self, n: u64) {
        self.kill_after_writes = Some(n.max(1));
    }

    /// Hold back the `n`-th watch event from now until the next event of the same object.
    pub fn hold_event(&mut self, n: u64) {
        self.hold_event = Some(n.max(1));
    }

    /// Serve the `n`-th reconcile from now from each object's previous version.
    pub fn stale_reconcile(&mut self, n: u64) {
        self.stale_reconcile = Some(n.max(1));
    }

    /// The countdown triggers still armed (they never fired): the step that arms each, and
    /// how many more writes, finished reconciles, watch events or reconciles it waits for.
    pub fn unfired(&self) -> Vec<(Trigger, u64)> {
        [
            (Trigger::KillAfterWrites, self.kill_after_writes),
            (Trigger::ResyncAfterReconciles, self.resync_after_reconciles),
            (Trigger::HoldWatchEvent, self.hold_event),
            (Trigger::StaleRead, self.stale_reconcile),
        ]
        .into_iter()
        .filter_map(|(t, n)| Some((t, n?)))
        .collect()
    }

    fn pod_name(&self) -> String {
        format!("lws-controller-manager-{}", self.pod_count)
    }

    /// Fire every informer's resync now (the `resync` scenario step).
    pub fn resync_now(&mut self, api: &ApiServer) {
        let watches = Watches::of(&self.config.profile.flags);
        let Some(Manager {
            phase: Phase::Leading {
                caches, workers, ..
            },
            ..
        }) = &mut self.manager
        else {
            return;
        };
        let now = api.now_ms();
        for kind in [
            KindId::LeaderWorkerSet,
            KindId::StatefulSet,
            KindId::Pod,
            KindId::Service,
        ] {
            resync_kind(&caches.borrow(), kind, workers, watches, now);
        }
    }

    pub fn step(&mut self, api: &mut ApiServer, rng: &mut SimRng) {
        let now = api.now_ms();
        if self.manager.is_none() {
            if self.restart_at_ms.is_some_and(|t| t <= now) {
                self.restart_at_ms = None;
                self.pod_count += 1;
                self.webhook_serving.set(true);
                self.manager = Some(Manager {
                    identity: self.pod_name(),
                    phase: Phase::Electing {
                        observed: None,
                        next_try_ms: now,
                    },
                });
            } else {
                return;
            }
        }
        let manager = self.manager.as_mut().expect("started above");
        if let Phase::Electing {
            observed,
            next_try_ms,
        } = &mut manager.phase
        {
            if *next_try_ms > now {
                return;
            }
            if !try_acquire(
                api,
                &manager.identity,
                observed,
                self.config.lease_duration_ms,
                now,
            ) {
                let jitter = 1.0 + 1.2 * rng.unit();
                *next_try_ms = after(now, (self.config.retry_period_ms as f64 * jitter) as u64);
                return;
            }
            // The lease's "became leader" event goes through controller-runtime's recorder
            // provider, which starts the process's event broadcasters (recorder.go:109-134).
            api.events.start_recording(&manager.identity, now);
            manager.phase = start_leading(api, rng, &self.config, now);
        }
        self.run_leading(api, rng);
    }

    fn run_leading(&mut self, api: &mut ApiServer, rng: &mut SimRng) {
        let Some(mut manager) = self.manager.take() else {
            return;
        };
        let killed = self.drive(&mut manager, api, rng);
        let now = api.now_ms();
        for e in self.recorded.drain(..) {
            api.events.record(e, &manager.identity, now);
        }
        if killed {
            api.events.stop_recording(&manager.identity);
        } else {
            self.manager = Some(manager);
        }
    }

    /// Deliver watch events and resyncs to the handlers, then run each controller's reconciles
    /// as far as they go at this instant. Returns true when the pod was killed meanwhile.
    fn drive(&mut self, manager: &mut Manager, api: &mut ApiServer, rng: &mut SimRng) -> bool {
        let now = api.now_ms();
        let watches = Watches::of(&self.config.profile.flags);
        let Phase::Leading {
            caches,
            resync,
            workers,
        } = &mut manager.phase
        else {
            return false;
        };
        self.deliver(api, &mut caches.borrow_mut(), resync, workers, watches);
        let mut resync_due = false;
        for (i, w) in workers.iter_mut().enumerate() {
            match self.run_worker(i, w, caches, api, rng) {
                WorkerRun::Killed => return true,
                WorkerRun::Idle { resync_due: due } => resync_due |= due,
            }
        }
        if resync_due {
            self.resync_after_reconciles = None;
            api.trace_external("fault", "resync", "", "", "at a reconcile boundary".into());
            for kind in [
                KindId::LeaderWorkerSet,
                KindId::StatefulSet,
                KindId::Pod,
                KindId::Service,
            ] {
                resync_kind(&caches.borrow(), kind, workers, watches, now);
            }
        }
        false
    }

    /// The informers' watch events (one may be held back) to the handlers, and the resync
    /// timers that are due.
    fn deliver(
        &mut self,
        api: &mut ApiServer,
        c: &mut Caches,
        resync: &mut [(u64, u64, KindId)],
        workers: &mut [Worker; 3],
        watches: Watches,
    ) {
        let now = api.now_ms();
        let hold = &mut self.hold_event;
        let armed = hold.is_some();
        let lws_d = c.lws.poll_holding(api, now, hold);
        let sts_d = c.statefulsets.poll_holding(api, now, hold);
        let pod_d = c.pods.poll_holding(api, now, hold);
        let svc_d = c.services.poll_holding(api, now, hold);
        // Nodes and revisions feed only the cache: no handler watches them.
        let quiet = c.nodes.poll_holding(api, now, hold).len()
            + c.revisions.poll_holding(api, now, hold).len()
            + c.podgroups
                .as_mut()
                .map_or(0, |p| p.poll_holding(api, now, hold).len());
        if armed && hold.is_none() {
            api.trace_external("fault", "holdEvent", "", "", "one watch event held".into());
        }
        let ds_d = c.disaggregatedsets.poll_holding(api, now, hold);
        let scaler_d = c.rolescalers.poll_holding(api, now, hold);
        let handled =
            lws_d.len() + sts_d.len() + pod_d.len() + svc_d.len() + ds_d.len() + scaler_d.len();
        self.events_delivered += (handled + quiet) as u64;
        for d in &lws_d {
            on_lws(workers, d, now);
        }
        for d in &sts_d {
            on_statefulset(workers, d, now);
        }
        for d in &pod_d {
            on_pod(workers, d, watches, now);
        }
        for d in &svc_d {
            on_service(workers, d, now);
        }
        for d in &ds_d {
            on_ds(workers, d, now);
        }
        for d in &scaler_d {
            on_scaler(workers, d, now);
        }
        for r in resync.iter_mut().filter(|r| r.0 <= now) {
            resync_kind(c, r.2, workers, watches, now);
            r.0 = after(r.0, r.1);
        }
    }

    /// One controller's loop at this instant: complete its parked write when due, or start the
    /// next due key, and poll the reconcile on until it parks again or nothing is due.
    fn run_worker(
        &mut self,
        i: usize,
        w: &mut Worker,
        caches: &Rc<RefCell<Caches>>,
        api: &mut ApiServer,
        rng: &mut SimRng,
    ) -> WorkerRun {
        let now = api.now_ms();
        let actor = w.actor();
        let mut resync_due = false;
        loop {
            if let Some(f) = w.inflight.as_mut() {
                if f.write_due_ms.is_none_or(|t| t > now) {
                    break;
                }
                if self.complete_write(f, actor, api, rng) {
                    return WorkerRun::Killed;
                }
            } else {
                let Some(key) = w.queue.pop_due(now) else {
                    break;
                };
                self.start(i, w, key, caches, api);
            }
            resync_due |= self.poll_reconcile(w, api, rng);
        }
        WorkerRun::Idle { resync_due }
    }

    /// Perform a parked write against the API server and store its response. Returns true when
    /// a `killController: {afterWrites}` countdown killed the pod right after it.
    fn complete_write(
        &mut self,
        f: &mut InFlight,
        actor: &str,
        api: &mut ApiServer,
        rng: &mut SimRng,
    ) -> bool {
        let op = f
            .exchange
            .borrow_mut()
            .pending
            .take()
            .expect("a parked write");
        let read = op.verb == "get";
        let result = match self.failing_writes {
            Some((until, code)) if api.now_ms() < until && !read => {
                injected_error(api, actor, &op, code)
            }
            _ => perform(api, actor, op),
        };
        f.exchange.borrow_mut().response = Some(result);
        f.write_due_ms = None;
        if read {
            return false;
        }
        self.writes += 1;
        if let Some(n) = self.kill_after_writes.as_mut() {
            *n -= 1;
            if *n == 0 {
                self.kill(api, rng);
                return true;
            }
        }
        false
    }

    /// Start a reconcile of `key` (served stale if a `staleRead` countdown hits it).
    fn start(
        &mut self,
        i: usize,
        w: &mut Worker,
        key: Key,
        caches: &Rc<RefCell<Caches>>,
        api: &mut ApiServer,
    ) {
        self.reconciles[i] += 1;
        let stale = self.stale_reconcile.as_mut().is_some_and(|n| {
            *n -= 1;
            *n == 0
        });
        if stale {
            self.stale_reconcile = None;
            let what = format!("{}/{} from previous versions", key.0, key.1);
            api.trace_external("fault", "staleRead", "", "", what);
        }
        let tombstone = w.tombstones.remove(&key);
        w.inflight = Some(start_reconcile(
            w.which,
            key,
            caches.clone(),
            &self.config.profile,
            stale,
            tombstone,
            api.now_ms(),
        ));
    }

    /// Poll the in-flight reconcile once: when done, record its events and outcome and requeue
    /// its key as controller-runtime does; when parked on a write, sample the write's latency.
    /// Returns true when a `resyncAfterReconciles` countdown ran out.
    fn poll_reconcile(&mut self, w: &mut Worker, api: &ApiServer, rng: &mut SimRng) -> bool {
        let now = api.now_ms();
        let actor = w.actor();
        let f = w.inflight.as_mut().expect("in flight");
        match poll_once(f.future.as_mut()) {
            Poll::Ready(result) => {
                let f = w.inflight.take().expect("in flight");
                let events = std::mem::take(&mut f.exchange.borrow_mut().events);
                self.events
                    .extend(events.into_iter().map(|e| format!("{now} {e}")));
                self.recorded.append(&mut f.exchange.borrow_mut().recorded);
                self.outcomes.record(ReconcileOutcome {
                    at_ms: now,
                    controller: actor,
                    key: f.key.clone(),
                    result: result.as_ref().map(|_| ()).map_err(|e| e.clone()),
                });
                if let Err(e) = &result {
                    self.events.push(format!(
                        "{now} {actor} reconcile {}/{} failed: {e}",
                        f.key.0, f.key.1
                    ));
                }
                // The stale view catches up: the objects this reconcile read stale are
                // delivered at their current versions, and their handlers enqueue the key again.
                let caught_up = f.exchange.borrow().stale.then(|| f.key.clone());
                finish(&mut w.queue, f.key, result, now);
                if let Some(key) = caught_up {
                    w.queue.add(key, now);
                }
                if let Some(n) = self.resync_after_reconciles.as_mut().filter(|n| **n > 0) {
                    *n -= 1;
                    return *n == 0;
                }
            }
            Poll::Pending => {
                assert!(
                    f.exchange.borrow().pending.is_some(),
                    "a reconcile may only wait on a write"
                );
                let (lo, hi) = self.config.api_latency_ms;
                let extra = match self.slow_writes {
                    Some((until, extra)) if now < until => extra,
                    _ => 0,
                };
                let latency = rng.range_inclusive(lo, hi).saturating_add(extra);
                f.write_due_ms = Some(after(now, latency));
            }
        }
        false
    }
}

/// How `run_worker` left a controller.
enum WorkerRun {
    /// The pod was killed (the manager is gone).
    Killed,
    /// Nothing more is due at this instant; `resync_due` when a reconcile-boundary resync fired.
    Idle { resync_due: bool },
}

/// How one reconcile ended: controller-runtime's `Reconcile` result, typed (the trace and
/// `events` carry the same as text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconcileOutcome {
    pub at_ms: u64,
    /// `LWS_ACTOR`, `POD_ACTOR` or `DS_ACTOR`.
    pub controller: &'static str,
    pub key: Key,
    pub result: Result<(), lws::client::Error>,
}

impl std::fmt::Display for ReconcileOutcome {
    /// `<controller> reconcile <ns>/<name> ok` or `... failed: <Reason>: <message>`, as in
    /// `events`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (c, k) = (self.controller, &self.key);
        match &self.result {
            Ok(()) => write!(f, "{c} reconcile {}/{} ok", k.0, k.1),
            Err(e) => write!(f, "{c} reconcile {}/{} failed: {e}", k.0, k.1),
        }
    }
}

/// The reconciles' outcomes over a run: counts per controller (`[lws, pod, disaggregatedset]`)
/// and the last failure. Counts, not a log, so a long run costs no memory here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReconcileOutcomes {
    pub ok: [u64; 3],
    pub failed: [u64; 3],
    pub last_failure: Option<ReconcileOutcome>,
}

impl ReconcileOutcomes {
    fn record(&mut self, o: ReconcileOutcome) {
        let i = match o.controller {
            LWS_ACTOR => 0,
            POD_ACTOR => 1,
            _ => 2,
        };
        if o.result.is_ok() {
            self.ok[i] += 1;
        } else {
            self.failed[i] += 1;
            self.last_failure = Some(o);
        }
    }

    pub fn failures(&self) -> u64 {
        self.failed.iter().sum()
    }
}

fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    crate::probe::timed(crate::probe::Section::Reconcile, || f.poll(&mut cx))
}

fn start_reconcile(
    which: Which,
    key: Key,
    caches: Rc<RefCell<Caches>>,
    profile: &Profile,
    stale: bool,
    tombstone: Option<Shared<Pod>>,
    now: u64,
) -> InFlight {
    let exchange = Rc::new(RefCell::new(Exchange {
        caches,
        pending: None,
        response: None,
        events: Vec::new(),
        recorded: Vec::new(),
        // `GetEventRecorder(name)` / `GetEventRecorderFor(name)` in each release's cmd/main.go.
        recorder: match which {
            Which::Ds => "disaggregatedset",
            Which::Lws | Which::Pod => "leaderworkerset",
        },
        reads: 0,
        stale,
    }));
    let client = SimClient {
        exchange: exchange.clone(),
    };
    let flags = profile.flags.clone();
    let (ns, name) = key.clone();
    let future: Pin<Box<dyn Future<Output = lws::client::Result<Action>>>> =
        match (profile.release, which) {
            (Release::V0_10_0, Which::Lws) => in_box(move || async move {
                let ctx = lws::lws_controller::Ctx {
                    flags: &flags,
                    now: to_time(now),
                };
                lws::v0_10_0::lws_controller::reconcile(&client, &ctx, &ns, &name).await
            }),
            (Release::V0_10_0, Which::Pod) => in_box(move || async move {
                use lws::v0_10_0::pod_controller;
                if let Some(pod) = tombstone {
                    pod_controller::reconcile_deleted(&client, &pod).await?;
                }
                pod_controller::reconcile(&client, &flags, &ns, &name).await
            }),
            (_, Which::Lws) => in_box(move || async move {
                let ctx = lws::lws_controller::Ctx {
                    flags: &flags,
                    now: to_time(now),
                };
                lws::lws_controller::reconcile(&client, &ctx, &ns, &name).await
            }),
            (_, Which::Ds) => in_box(move || async move {
                let fixes = lws::disagg::Fixes {
                    complete_partial_revision: flags.ds_complete_partial_revision,
                    count_removed_roles: flags.ds_count_removed_roles,
                };
                lws::disagg::controller::reconcile(&client, fixes, &ns, &name).await
            }),
            (_, Which::Pod) => in_box(move || async move {
                if let Some(pod) = tombstone {
                    lws::pod_controller::reconcile_deleted(&client, &flags, &pod).await?;
                }
                lws::pod_controller::reconcile(&client, &flags, &ns, &name).await
            }),
        };
    InFlight {
        key,
        future,
        exchange,
        write_due_ms: None,
    }
}

/// The reconcile future, made in its heap slot: a reconciler's future is about 10 KB (every
/// local it holds across an await), and `Box::pin(future)` made it on the stack and copied it,
/// a tenth of a fuzz case's instructions (callgrind).
#[inline(always)]
fn in_box<F>(make: impl FnOnce() -> F) -> Pin<Box<dyn Future<Output = lws::client::Result<Action>>>>
where
    F: Future<Output = lws::client::Result<Action>> + 'static,
{
    let slot: Box<F> = Box::write(Box::<F>::new_uninit(), make());
    Box::into_pin(slot)
}

/// `reconcileHandler` result rules (controller-runtime v0.24.1
/// `pkg/internal/controller/controller.go`).
fn finish(queue: &mut WorkQueue, key: Key, result: lws::client::Result<Action>, now: u64) {
    match result {
        Err(_) => queue.add_rate_limited(key, now),
        Ok(a) if a.requeue_after_ms.is_some() => {
            queue.forget(&key);
            queue.add_after(key, after(now, a.requeue_after_ms.unwrap_or(0)));
        }
        Ok(a) if a.requeue => queue.add_rate_limited(key, now),
        Ok(_) => queue.forget(&key),
    }
}

/// A countdown fault: armed by a step, it fires on the n-th write, reconcile or watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trigger {
    KillAfterWrites,
    ResyncAfterReconciles,
    HoldWatchEvent,
    StaleRead,
}

impl Trigger {
    /// The step that arms it, and what it counts.
    pub fn describe(self) -> (&'static str, &'static str) {
        match self {
            Trigger::KillAfterWrites => ("killController.afterWrites", "controller writes"),
            Trigger::ResyncAfterReconciles => ("resync.afterReconciles", "finished reconciles"),
            Trigger::HoldWatchEvent => ("holdWatchEvent", "watch events"),
            Trigger::StaleRead => ("staleRead", "reconciles"),
        }
    }
}

/// client-go `tryAcquireOrRenew`: a record held by someone else is valid until this candidate's
/// first observation of it plus the lease duration.
fn try_acquire(
    api: &mut ApiServer,
    me: &str,
    observed: &mut Option<(u64, String)>,
    lease_ms: u64,
    now: u64,
) -> bool {
    let current = api.try_get::<Lease>(LEASE_NAMESPACE, LEASE_NAME);
    let holder = current
        .as_ref()
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.holder_identity.clone())
        .unwrap_or_default();
    let record = current
        .as_ref()
        .and_then(|l| l.metadata.resource_version.clone())
        .unwrap_or_default();
    if !holder.is_empty() && holder != me {
        match observed {
            Some((_, rv)) if *rv == record => {}
            _ => *observed = Some((now, record)),
        }
        let (since, _) = observed.as_ref().expect("set above");
        if now < since + lease_ms {
            return false;
        }
    }
    let transitions = current
        .as_ref()
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.lease_transitions)
        .unwrap_or(0);
    let spec = LeaseSpec {
        holder_identity: Some(me.to_string()),
        lease_duration_seconds: Some((lease_ms / 1000) as i32),
        acquire_time: Some(MicroTime(to_time(now).0)),
        renew_time: Some(MicroTime(to_time(now).0)),
        lease_transitions: Some(transitions + i32::from(current.is_some())),
        ..Default::default()
    };
    let result = match current {
        Some(l) => {
            let mut l = (*l).clone();
            l.spec = Some(spec);
            api.update("leader-election", l).map(|_| ())
        }
        None => {
            let meta = ObjectMeta {
                name: Some(LEASE_NAME.into()),
                namespace: Some(LEASE_NAMESPACE.into()),
                ..Default::default()
            };
            api.create(
                "leader-election",
                Lease {
                    metadata: meta,
                    spec: Some(spec),
                },
            )
            .map(|_| ())
        }
    };
    result.is_ok()
}

/// Leadership acquired: start the informers (a consistent initial list, which hands every object
/// to the handlers as an add) and the workers. Lease renewals are not written (docs/fidelity.md).
fn start_leading(api: &ApiServer, rng: &mut SimRng, cfg: &ControllerConfig, now: u64) -> Phase {
    let mut lag = || rng.range_inclusive(cfg.watch_lag_ms.0, cfg.watch_lag_ms.1);
    let lws_lag = lag();
    let mut caches = Caches {
        lws: Informer::start(api, lws_lag),
        statefulsets: Informer::start(api, lag()),
        pods: Informer::start(api, lag()),
        services: Informer::start(api, lag()),
        nodes: Informer::start(api, lag()),
        revisions: Informer::start(api, lag()),
        // No draw of their own: a run without DisaggregatedSets keeps its random stream
        // (docs/fidelity.md).
        disaggregatedsets: Informer::start(api, lws_lag),
        rolescalers: Informer::start(api, lws_lag),
        podgroups: (cfg.profile.flags.gang_scheduling == GangScheduling::Volcano)
            .then(|| Informer::start(api, lws_lag)),
    };
    if cfg.track_previous {
        caches.track_previous();
    }
    let mut workers = [
        Worker {
            which: Which::Lws,
            queue: WorkQueue::default(),
            inflight: None,
            tombstones: BTreeMap::new(),
        },
        Worker {
            which: Which::Pod,
            queue: WorkQueue::default(),
            inflight: None,
            tombstones: BTreeMap::new(),
        },
        Worker {
            which: Which::Ds,
            queue: WorkQueue::default(),
            inflight: None,
            tombstones: BTreeMap::new(),
        },
    ];
    for d in caches.lws.initial_deltas() {
        on_lws(&mut workers, &d, now);
    }
    for d in caches.statefulsets.initial_deltas() {
        on_statefulset(&mut workers, &d, now);
    }
    for d in caches.pods.initial_deltas() {
        on_pod(&mut workers, &d, Watches::of(&cfg.profile.flags), now);
    }
    for d in caches.services.initial_deltas() {
        on_service(&mut workers, &d, now);
    }
    for d in caches.disaggregatedsets.initial_deltas() {
        on_ds(&mut workers, &d, now);
    }
    for d in caches.rolescalers.initial_deltas() {
        on_scaler(&mut workers, &d, now);
    }
    // calculateResyncPeriod: SyncPeriod x U[0.9, 1.1), drawn once per informer.
    let resync = [
        KindId::LeaderWorkerSet,
        KindId::StatefulSet,
        KindId::Pod,
        KindId::Service,
    ]
    .into_iter()
    .map(|k| {
        // Jittered by +-10% (controller-runtime's cache `SyncPeriod` jitter); at least 1 ms for
        // a period of 1 ms or more, where client-go's nanoseconds would never round to 0.
        let jittered = (cfg.sync_period_ms as f64 * (0.9 + 0.2 * rng.unit())) as u64;
        let period = jittered.max(cfg.sync_period_ms.min(1));
        (after(now, period), period, k)
    })
    .collect();
    Phase::Leading {
        caches: Rc::new(RefCell::new(caches)),
        resync,
        workers: Box::new(workers),
    }
}

/// A resync replays the whole cache as same-object updates to every handler (no API call).
fn resync_kind(c: &Caches, kind: KindId, workers: &mut [Worker; 3], watches: Watches, now: u64) {
    fn replay<K: Kind>(inf: &Informer<K>) -> Vec<Delta<K>> {
        inf.all()
            .map(|o| Delta {
                ty: api::EventType::Modified,
                old: Some(o.clone()),
                obj: o.clone(),
            })
            .collect()
    }
    match kind {
        KindId::LeaderWorkerSet => {
            replay(&c.lws).iter().for_each(|d| on_lws(workers, d, now));
            // The DisaggregatedSet informers resync with the LWS one (no period drawn).
            replay(&c.disaggregatedsets)
                .iter()
                .for_each(|d| on_ds(workers, d, now));
            replay(&c.rolescalers)
                .iter()
                .for_each(|d| on_scaler(workers, d, now));
        }
        KindId::StatefulSet => replay(&c.statefulsets)
            .iter()
            .for_each(|d| on_statefulset(workers, d, now)),
        KindId::Pod => replay(&c.pods)
            .iter()
            .for_each(|d| on_pod(workers, d, watches, now)),
        KindId::Service => replay(&c.services)
            .iter()
            .for_each(|d| on_service(workers, d, now)),
        _ => {}
    }
}

fn ns_of(meta: &ObjectMeta) -> String {
    k8s::namespace(meta).to_string()
}

/// Both the old and the new object of an update, as controller-runtime handlers see them.
fn versions<K: Kind>(d: &Delta<K>) -> Vec<&K> {
    let mut v = vec![&*d.obj];
    if let Some(old) = &d.old {
        if !std::sync::Arc::ptr_eq(old, &d.obj) {
            v.push(&**old);
        }
    }
    v
}

/// `EnqueueRequestForOwner(OnlyControllerOwner)`: by owner kind and name, UID ignored.
fn controller_owner(meta: &ObjectMeta, kind: &str) -> Option<Key> {
    k8s::controller_of(meta)
        .filter(|o| o.kind == kind)
        .map(|o| (ns_of(meta), o.name.clone()))
}

/// LWS controller: `For(LeaderWorkerSet)` (V3 lwsc:159-174).
/// DisaggregatedSet controller: `Owns(LeaderWorkerSet)`
/// (pkg/controllers/disaggregatedset/disaggregatedset_controller.go `SetupWithManager`).
fn on_lws(workers: &mut [Worker; 3], d: &Delta<LeaderWorkerSet>, now: u64) {
    workers[0].queue.add(api::key_of(&*d.obj), now);
    for l in versions(d) {
        if let Some(k) = controller_owner(&l.metadata, lws::disagg::api::KIND) {
            workers[2].queue.add(k, now);
        }
    }
}

/// DisaggregatedSet controller: `For(DisaggregatedSet)`.
fn on_ds(workers: &mut [Worker; 3], d: &Delta<DisaggregatedSet>, now: u64) {
    workers[2].queue.add(api::key_of(&*d.obj), now);
}

/// DisaggregatedSet controller: `Owns(DisaggregatedSetRoleScaler)`.
fn on_scaler(workers: &mut [Worker; 3], d: &Delta<DisaggregatedSetRoleScaler>, now: u64) {
    for s in versions(d) {
        if let Some(k) = controller_owner(&s.metadata, lws::disagg::api::KIND) {
            workers[2].queue.add(k, now);
        }
    }
}

/// LWS controller: `Owns(StatefulSet)` and `Watches(StatefulSet, by name label)`; pod controller:
/// `Owns(StatefulSet)` behind the has-name-label filter (V3 lwsc:159-174, podc:305-319).
fn on_statefulset(workers: &mut [Worker; 3], d: &Delta<StatefulSet>, now: u64) {
    for s in versions(d) {
        if let Some(k) = controller_owner(&s.metadata, "LeaderWorkerSet") {
            workers[0].queue.add(k, now);
        }
        if let Some(name) = k8s::label(&s.metadata, keys::SET_NAME) {
            workers[0]
                .queue
                .add((ns_of(&s.metadata), name.to_string()), now);
            if let Some(k) = controller_owner(&s.metadata, "Pod") {
                workers[1].queue.add(k, now);
            }
        }
    }
}

/// The handler wiring that differs between flag values.
#[derive(Clone, Copy)]
struct Watches {
    /// `leader-pod-watch=on`.
    leader_pods: bool,
    /// `pod-delete-events=tombstone`.
    pod_tombstones: bool,
}

impl Watches {
    fn of(flags: &Flags) -> Watches {
        Watches {
            leader_pods: flags.leader_pod_watch,
            pod_tombstones: flags.pod_delete_tombstones,
        }
    }
}

/// Pod controller: `For(Pod)` behind the has-name-label filter; with `pod-delete-events=tombstone`
/// a delete also hands the deleted pod to the next reconcile of its key (B09's typed request).
/// With `leader-pod-watch=on` the LWS controller also `Watches(Pod)` of leader pods, mapped to
/// their LWS by the name label (added by d275e0a, PR #778; removed as redundant by 02e43b0, PR
/// #791).
fn on_pod(workers: &mut [Worker; 3], d: &Delta<Pod>, watches: Watches, now: u64) {
    let Some(name) = k8s::label(&d.obj.metadata, keys::SET_NAME) else {
        return;
    };
    let key = api::key_of(&*d.obj);
    if watches.pod_tombstones && d.ty == api::EventType::Deleted {
        workers[1].tombstones.insert(key.clone(), d.obj.clone());
    }
    workers[1].queue.add(key, now);
    if watches.leader_pods && k8s::label(&d.obj.metadata, keys::WORKER_INDEX) == Some("0") {
        workers[0]
            .queue
            .add((ns_of(&d.obj.metadata), name.to_string()), now);
    }
}

/// LWS controller: `Owns(Service)`.
fn on_service(workers: &mut [Worker; 3], d: &Delta<Service>, now: u64) {
    for s in versions(d) {
        if let Some(k) = controller_owner(&s.metadata, "LeaderWorkerSet") {
            workers[0].queue.add(k, now);
        }
    }
}

fn to_client_error(e: ApiError) -> lws::client::Error {
    lws::client::Error::new(e.reason, e.message)
}

/// Carry out a parked write against the API server.
/// The error an `apiErrors` fault answers a write with, traced as a failed call would be.
fn injected_error(
    api: &mut ApiServer,
    actor: &str,
    op: &WriteOp,
    code: u16,
) -> lws::client::Result<Option<AnyObject>> {
    let reason = match code {
        429 => lws::client::Reason::TooManyRequests,
        500 => lws::client::Reason::InternalError,
        _ => lws::client::Reason::ServiceUnavailable,
    };
    api.trace_external(
        actor,
        op.verb,
        op.kind.as_str(),
        &op.name,
        format!("error={reason:?} (injected {code})"),
    );
    Err(lws::client::Error::new(
        reason,
        format!("the server is currently unable to handle the request (injected {code})"),
    ))
}

fn perform(
    api: &mut ApiServer,
    actor: &str,
    op: WriteOp,
) -> lws::client::Result<Option<AnyObject>> {
    fn typed<K: Kind + Send + Sync>(
        api: &mut ApiServer,
        actor: &str,
        op: WriteOp,
    ) -> Result<Option<AnyObject>, ApiError> {
        let obj = || -> K {
            *op.object
                .expect("write carries an object")
                .downcast::<K>()
                .expect("object of the op's kind")
        };
        let any = |r: Result<std::sync::Arc<K>, ApiError>| r.map(|o| Some(o as AnyObject));
        match op.verb {
            "get" => any(api.get::<K>(&op.namespace, &op.name)),
            "create" => any(api.create(actor, obj())),
            "update" => any(api.update(actor, obj())),
            "update-status" => any(api.update_status(actor, obj())),
            "patch" => any(api.merge_patch(
                actor,
                &op.namespace,
                &op.name,
                op.patch.as_ref().expect("patch body"),
            )),
            "patch-status" => any(api.merge_patch_status(
                actor,
                &op.namespace,
                &op.name,
                op.patch.as_ref().expect("patch body"),
            )),
            "apply" => any(api.apply(&op.field_manager, &obj(), op.force)),
            "delete" => {
                let propagation = op.propagation.map(|p| match p {
                    lws::client::Propagation::Background => api::Propagation::Background,
                    lws::client::Propagation::Foreground => api::Propagation::Foreground,
                    lws::client::Propagation::Orphan => api::Propagation::Orphan,
                });
                let opts = DeleteOptions {
                    propagation,
                    ..Default::default()
                };
                api.delete::<K>(actor, &op.namespace, &op.name, &opts)
                    .map(|d| match d {
                        Deleted::Gone(o) | Deleted::Terminating(o) => Some(o as AnyObject),
                    })
            }
            other => unreachable!("unknown verb {other}"),
        }
    }
    let result = match op.kind {
        KindId::LeaderWorkerSet => typed::<LeaderWorkerSet>(api, actor, op),
        KindId::StatefulSet => typed::<StatefulSet>(api, actor, op),
        KindId::Pod => typed::<Pod>(api, actor, op),
        KindId::Service => typed::<Service>(api, actor, op),
        KindId::Node => typed::<Node>(api, actor, op),
        KindId::ControllerRevision => typed::<ControllerRevision>(api, actor, op),
        KindId::DisaggregatedSet => typed::<DisaggregatedSet>(api, actor, op),
        KindId::DisaggregatedSetRoleScaler => typed::<DisaggregatedSetRoleScaler>(api, actor, op),
        KindId::PodGroup => typed::<lws::volcano::PodGroup>(api, actor, op),
        other => unreachable!("the LWS controllers do not write {other}"),
    };
    result.map_err(to_client_error)
}
