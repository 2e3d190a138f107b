//! Scenarios: load a scenario file (and the manifests it names), run it against a reconciler
//! in the world with the invariants checked after every event, and judge the run against the
//! file's `expect`.

pub mod manifest;
pub mod spec;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use lws::api::LeaderWorkerSet;
use lws::k8s;
use lws::profile::Profile;
use serde_json::Value;

use crate::api::{with_kind, ApiServer, DeleteOptions, Kind, KindId, Propagation};
use crate::controller::ControllerConfig;
use crate::invariants::{self, Checker, FaultEffect, InvariantId, ObjectRef, Violation};
use crate::trace::Trace;
use crate::world::{ClusterConfig, Event, World};
pub use manifest::{LoadError, Manifest};
use spec::{Expectation, InvariantSelection, NodeRef, ScenarioSpec, StepSpec};

/// A bound on events per run: a runaway loop is reported, never a hang.
pub const EVENT_COUNT_MAX: u64 = 20_000_000;
pub const DEFAULT_CONVERGE_MS: u64 = 3_600_000;

#[derive(Clone, Debug)]
pub enum NodeSel {
    Node(String),
    NodeOf(String),
}

/// An object and the partial JSON it must match (`waitFor` and `check` steps).
#[derive(Clone, Debug)]
pub struct ObjectMatch {
    pub kind: KindId,
    pub namespace: String,
    pub name: String,
    pub pattern: Value,
}

impl ObjectMatch {
    /// Ok when the object exists and matches; otherwise the object as found, if at all.
    fn matching(&self, api: &ApiServer) -> Result<(), Option<Value>> {
        match object_json(api, self.kind, &self.namespace, &self.name) {
            Some(o) if subset_match(&self.pattern, &o) => Ok(()),
            other => Err(other),
        }
    }
}

#[derive(Clone, Debug)]
pub enum WaitTarget {
    Available,
    RolloutComplete,
    Object(ObjectMatch),
}

#[derive(Clone, Debug)]
pub enum Step {
    Apply {
        source: String,
        objects: Vec<Manifest>,
    },
    Patch {
        kind: KindId,
        namespace: String,
        name: String,
        merge: Value,
    },
    Scale {
        namespace: String,
        lws: String,
        replicas: i32,
    },
    Delete {
        kind: KindId,
        namespace: String,
        name: String,
        propagation: Option<Propagation>,
    },
    Wait(u64),
    WaitFor {
        target: WaitTarget,
        timeout_ms: u64,
    },
    Check(ObjectMatch),
    KillController {
        after_writes: Option<u64>,
    },
    Resync {
        after_reconciles: Option<u64>,
    },
    /// Explore's unobserved-state pattern: hold back the N-th watch event to the controller
    /// until the next event of the same object.
    HoldWatchEvent(u64),
    /// Explore's stale-state pattern: the N-th reconcile reads each object's previous version.
    StaleRead(u64),
    DrainNode {
        node: NodeSel,
        replace: bool,
    },
    FailNode(NodeSel),
    Cordon(NodeSel),
    Uncordon(NodeSel),
    CrashContainer {
        namespace: String,
        pod: String,
    },
    DeletePod {
        namespace: String,
        pod: String,
        grace_period_seconds: Option<i64>,
    },
}

impl Step {
    /// Steps after which a quiescence window stays open.
    fn is_passive(&self) -> bool {
        matches!(
            self,
            Step::Wait(_)
                | Step::WaitFor { .. }
                | Step::Check(_)
                | Step::KillController { .. }
                | Step::Resync { .. }
                | Step::HoldWatchEvent(_)
                | Step::StaleRead(_)
        )
    }
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub path: PathBuf,
    pub spec: ScenarioSpec,
    pub manifests: Vec<(String, Vec<Manifest>)>,
    pub steps: Vec<Step>,
    pub invariants: Vec<String>,
}

fn err(file: &str, message: impl Into<String>) -> LoadError {
    LoadError {
        file: file.into(),
        line: None,
        message: message.into(),
    }
}

/// The `{kind, name, namespace, match}` of a `waitFor` or `check` step.
fn object_match(file: &str, step: &str, r: &spec::ObjectRef) -> Result<ObjectMatch, LoadError> {
    let pattern = r
        .pattern
        .clone()
        .ok_or_else(|| err(file, format!("{step}: `match` is required")))?;
    Ok(ObjectMatch {
        kind: kind_of(file, &r.kind)?,
        namespace: r.namespace.clone().unwrap_or_else(|| "default".into()),
        name: r.name.clone(),
        pattern,
    })
}

fn kind_of(file: &str, kind: &str) -> Result<KindId, LoadError> {
    KindId::parse(kind).ok_or_else(|| {
        let all: Vec<&str> = KindId::ALL.iter().map(|k| k.as_str()).collect();
        err(
            file,
            format!("unknown kind {kind:?}; valid kinds: {}", all.join(", ")),
        )
    })
}

fn node_sel(file: &str, r: &NodeRef, step: &str) -> Result<NodeSel, LoadError> {
    match (&r.node, &r.node_of) {
        (Some(n), None) => Ok(NodeSel::Node(n.clone())),
        (None, Some(p)) => Ok(NodeSel::NodeOf(p.clone())),
        _ => Err(err(
            file,
            format!("{step} needs exactly one of `node` or `nodeOf`"),
        )),
    }
}

fn load_manifest_file(path: &Path) -> Result<Vec<Manifest>, LoadError> {
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| err(&name, format!("cannot read: {e}")))?;
    manifest::parse(&name, &text)
}

impl Scenario {
    /// Read and validate a scenario file and everything it references.
    pub fn load(path: &Path) -> Result<Scenario, LoadError> {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| err(&file, format!("cannot read: {e}")))?;
        Scenario::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Scenario, LoadError> {
        let file = path.display().to_string();
        let spec: ScenarioSpec = serde_saphyr::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            let line = first
                .strip_prefix("line ")
                .and_then(|r| r.split(' ').next())
                .and_then(|l| l.parse().ok());
            let message = first
                .split_once(": ")
                .map(|(_, m)| m.to_string())
                .unwrap_or(first.clone());
            LoadError {
                file: file.clone(),
                line,
                message,
            }
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut manifests = Vec::new();
        for m in &spec.manifests {
            let p = dir.join(m);
            manifests.push((p.display().to_string(), load_manifest_file(&p)?));
        }
        let mut steps = Vec::new();
        for (i, s) in spec.steps.iter().enumerate() {
            let ctx = format!("{file}: steps[{i}]");
            steps.push(Self::step(&ctx, dir, s)?);
        }
        let invariants = match &spec.invariants {
            None => invariants::ALL.iter().map(|s| s.to_string()).collect(),
            Some(InvariantSelection::Named(s)) if s == "all" => {
                invariants::ALL.iter().map(|s| s.to_string()).collect()
            }
            Some(InvariantSelection::Named(s)) => {
                return Err(err(
                    &file,
                    format!("invariants: expected `all` or a list, got {s:?}"),
                ))
            }
            Some(InvariantSelection::List(l)) => {
                for n in l {
                    if !invariants::ALL.contains(&n.as_str()) {
                        return Err(err(
                            &file,
                            format!(
                                "unknown invariant {n:?}; valid: {}",
                                invariants::ALL.join(", ")
                            ),
                        ));
                    }
                }
                l.clone()
            }
        };
        for (reconciler, e) in &spec.expect {
            Profile::parse(reconciler).map_err(|m| err(&file, format!("expect: {m}")))?;
            if let Expectation::Violates(v) = e {
                for n in v {
                    let known = InvariantId::parse(n).is_some();
                    if !known {
                        return Err(err(
                            &file,
                            format!("expect.{reconciler}: unknown invariant {n:?}"),
                        ));
                    }
                }
            }
        }
        if let Some(r) = &spec.controller.reconciler {
            Profile::parse(r).map_err(|m| err(&file, format!("controller.reconciler: {m}")))?;
        }
        Ok(Scenario {
            path: path.to_path_buf(),
            spec,
            manifests,
            steps,
            invariants,
        })
    }

    fn step(ctx: &str, dir: &Path, s: &StepSpec) -> Result<Step, LoadError> {
        let actions = s.actions();
        if actions.len() != 1 {
            return Err(err(
                ctx,
                format!(
                    "a step needs exactly one action, found {}: {:?}",
                    actions.len(),
                    actions
                ),
            ));
        }
        if s.timeout.is_some() && s.wait_for.is_none() {
            return Err(err(ctx, "`timeout` belongs to `waitFor`"));
        }
        let ns = |n: &Option<String>| n.clone().unwrap_or_else(|| "default".into());
        let step = match actions[0] {
            "apply" => {
                let v = s.apply.as_ref().expect("set");
                match v {
                    Value::String(p) => {
                        let path = dir.join(p);
                        Step::Apply {
                            source: path.display().to_string(),
                            objects: load_manifest_file(&path)?,
                        }
                    }
                    Value::Object(_) => Step::Apply {
                        source: format!("{ctx} (inline)"),
                        objects: vec![manifest::from_value(ctx, v)?],
                    },
                    _ => {
                        return Err(err(
                            ctx,
                            "apply: expected a manifest path or an inline object",
                        ))
                    }
                }
            }
            "patch" => {
                let p = s.patch.as_ref().expect("set");
                let merge = p
                    .merge
                    .clone()
                    .ok_or_else(|| err(ctx, "patch: `merge` is required"))?;
                Step::Patch {
                    kind: kind_of(ctx, &p.kind)?,
                    namespace: ns(&p.namespace),
                    name: p.name.clone(),
                    merge,
                }
            }
            "scale" => {
                let p = s.scale.as_ref().expect("set");
                Step::Scale {
                    namespace: ns(&p.namespace),
                    lws: p.lws.clone(),
                    replicas: p.replicas,
                }
            }
            "delete" => {
                let p = s.delete.as_ref().expect("set");
                let propagation = match p.propagation.as_deref() {
                    None => None,
                    Some(x) => Some(Propagation::parse(x).ok_or_else(|| {
                        err(
                            ctx,
                            format!(
                                "delete: propagation {x:?} is not Background, Foreground or Orphan"
                            ),
                        )
                    })?),
                };
                Step::Delete {
                    kind: kind_of(ctx, &p.kind)?,
                    namespace: ns(&p.namespace),
                    name: p.name.clone(),
                    propagation,
                }
            }
            "wait" => Step::Wait(s.wait.expect("set").0),
            "waitFor" => {
                let timeout_ms = s
                    .timeout
                    .ok_or_else(|| err(ctx, "waitFor: `timeout` is required"))?
                    .0;
                let target = match s.wait_for.as_ref().expect("set") {
                    Value::String(t) if t == "available" => WaitTarget::Available,
                    Value::String(t) if t == "rolloutComplete" => WaitTarget::RolloutComplete,
                    Value::Object(o) => {
                        let r: spec::ObjectRef = serde_json::from_value(Value::Object(o.clone()))
                            .map_err(|e| err(ctx, format!("waitFor: {e}")))?;
                        WaitTarget::Object(object_match(ctx, "waitFor", &r)?)
                    }
                    other => return Err(err(ctx, format!("waitFor: expected available, rolloutComplete or {{kind, name, match}}, got {other}"))),
                };
                Step::WaitFor { target, timeout_ms }
            }
            "check" => Step::Check(object_match(ctx, "check", s.check.as_ref().expect("set"))?),
            "killController" => Step::KillController {
                after_writes: s.kill_controller.as_ref().and_then(|k| k.after_writes),
            },
            "resync" => Step::Resync {
                after_reconciles: s.resync.as_ref().and_then(|r| r.after_reconciles),
            },
            "holdWatchEvent" => Step::HoldWatchEvent(s.hold_watch_event.as_ref().expect("set").nth),
            "staleRead" => Step::StaleRead(s.stale_read.as_ref().expect("set").at_reconcile),
            "drainNode" => {
                let r = s.drain_node.as_ref().expect("set");
                Step::DrainNode {
                    node: node_sel(ctx, r, "drainNode")?,
                    replace: r.replace,
                }
            }
            "failNode" => Step::FailNode(node_sel(
                ctx,
                s.fail_node.as_ref().expect("set"),
                "failNode",
            )?),
            "cordon" => Step::Cordon(node_sel(ctx, s.cordon.as_ref().expect("set"), "cordon")?),
            "uncordon" => Step::Uncordon(node_sel(
                ctx,
                s.uncordon.as_ref().expect("set"),
                "uncordon",
            )?),
            "crashContainer" => {
                let p = s.crash_container.as_ref().expect("set");
                Step::CrashContainer {
                    namespace: ns(&p.namespace),
                    pod: p.pod.clone(),
                }
            }
            "deletePod" => {
                let p = s.delete_pod.as_ref().expect("set");
                Step::DeletePod {
                    namespace: ns(&p.namespace),
                    pod: p.pod.clone(),
                    grace_period_seconds: p.grace_period_seconds,
                }
            }
            other => unreachable!("unknown action {other}"),
        };
        Ok(step)
    }

    /// The reconciler to use: the override, else the file's.
    pub fn reconciler(&self, over: Option<&str>) -> Result<Profile, String> {
        let spec = over
            .map(str::to_string)
            .or_else(|| self.spec.controller.reconciler.clone())
            .ok_or_else(|| {
                format!(
                    "{}: no reconciler: set controller.reconciler or pass --reconciler",
                    self.path.display()
                )
            })?;
        Profile::parse(&spec)
    }

    pub fn cluster_config(&self) -> Result<ClusterConfig, String> {
        let c = &self.spec.cluster;
        let mut cfg = ClusterConfig::default();
        if let Some(v) = &c.kubernetes_version {
            let minor = v.strip_prefix("1.").and_then(|m| m.parse().ok());
            cfg.kubernetes_minor = minor.ok_or_else(|| {
                format!(
                    "{}: cluster.kubernetesVersion {v:?} is not of the form \"1.N\"",
                    self.path.display()
                )
            })?;
        }
        cfg.max_unavailable_statefulset = c.max_unavailable_stateful_set;
        if let Some(n) = &c.nodes {
            cfg.node_count = n.count.unwrap_or(cfg.node_count);
            cfg.pods_per_node = n.pods_per_node.unwrap_or(cfg.pods_per_node);
            cfg.node_labels = n.labels.clone();
        }
        let range = |r: Option<spec::Range>, d: (u64, u64)| r.map(|r| (r.0, r.1)).unwrap_or(d);
        cfg.pod_startup_ms = range(c.pod_startup, cfg.pod_startup_ms);
        cfg.pod_termination_ms = range(c.pod_termination, cfg.pod_termination_ms);
        cfg.watch_lag_ms = range(c.watch_lag, cfg.watch_lag_ms);
        cfg.gc_lag_ms = range(c.gc_lag, cfg.gc_lag_ms);
        cfg.node_delete_delay_ms = c
            .node_delete_delay
            .map(|d| d.0)
            .unwrap_or(cfg.node_delete_delay_ms);
        cfg.node_join_delay_ms = c
            .node_join_delay
            .map(|d| d.0)
            .unwrap_or(cfg.node_join_delay_ms);
        cfg.unpullable_images = c.unpullable_images.iter().cloned().collect();
        Ok(cfg)
    }
}

/// The outcome of one run.
#[derive(Debug)]
pub struct RunReport {
    pub scenario: String,
    pub reconciler: String,
    pub seed: u64,
    pub violations: Vec<Violation>,
    pub min_available: Option<i32>,
    pub floor: i32,
    pub trace_hash: u64,
    pub sim_ms: u64,
    pub events: u64,
    pub trace: Trace,
    /// Kubernetes Events and reconcile errors from the controller, "at_ms text".
    pub controller_log: Vec<String>,
    /// API writes the controller made and reconciles it ran (explore's perturbation points).
    pub controller_writes: u64,
    pub controller_reconciles: u64,
    /// Watch events delivered to the controller's caches.
    pub controller_events: u64,
}

impl RunReport {
    /// The distinct invariants that broke, sorted.
    pub fn violated(&self) -> BTreeSet<String> {
        self.violations
            .iter()
            .map(|v| v.invariant.to_string())
            .collect()
    }

    pub fn replay_command(&self, path: &Path) -> String {
        format!(
            "lws-sim run {} --seed {} --reconciler {}",
            path.display(),
            self.seed,
            self.reconciler
        )
    }
}

/// Why a run could not be carried out: bad input discovered while running (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError(pub String);

/// A scenario being run: the world and the invariant checker (`serve` drives one too).
pub struct Runner {
    pub world: World,
    pub checker: Checker,
}

impl Runner {
    /// Step the world to `deadline`, checking the invariants after every event.
    pub fn advance_to(&mut self, deadline: u64) -> Result<(), RunError> {
        // Writes made by a step itself are observed before anything else happens.
        self.checker.observe(&self.world.api);
        while self.world.step(deadline) {
            self.checker.observe(&self.world.api);
            if self.world.event_count > EVENT_COUNT_MAX {
                return Err(RunError(format!(
                    "more than {EVENT_COUNT_MAX} events: a runaway loop at t={}",
                    self.world.now_ms
                )));
            }
        }
        self.world.run_until(deadline);
        Ok(())
    }

    /// Step until `done` holds or `timeout_ms` passes.
    fn advance_until(
        &mut self,
        timeout_ms: u64,
        done: impl Fn(&World, &Checker) -> bool,
    ) -> Result<bool, RunError> {
        let deadline = self.world.now_ms.saturating_add(timeout_ms);
        self.checker.observe(&self.world.api);
        loop {
            if done(&self.world, &self.checker) {
                return Ok(true);
            }
            if !self.world.step(deadline) {
                self.world.run_until(deadline);
                return Ok(done(&self.world, &self.checker));
            }
            self.checker.observe(&self.world.api);
            if self.world.event_count > EVENT_COUNT_MAX {
                return Err(RunError(format!(
                    "more than {EVENT_COUNT_MAX} events: a runaway loop at t={}",
                    self.world.now_ms
                )));
            }
        }
    }

    /// Run one external event now.
    fn fire(&mut self, e: Event) -> Result<(), RunError> {
        let now = self.world.now_ms;
        self.world.schedule(now, e);
        self.advance_to(now)
    }

    /// The highest container restart count of a pod (0 if it does not exist).
    fn restart_count(&self, namespace: &str, pod: &str) -> i32 {
        let Some(p) = self.world.api.try_get::<Pod>(namespace, pod) else {
            return 0;
        };
        let statuses = p
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref());
        statuses
            .into_iter()
            .flatten()
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0)
    }

    fn node_of(&self, sel: &NodeSel) -> Result<String, String> {
        match sel {
            NodeSel::Node(n) => Ok(n.clone()),
            NodeSel::NodeOf(p) => {
                let pod = self
                    .world
                    .api
                    .try_get::<Pod>("default", p)
                    .ok_or_else(|| format!("nodeOf: pod {p} does not exist"))?;
                let node = k8s::node_name(&pod);
                if node.is_empty() {
                    return Err(format!("nodeOf: pod {p} is not scheduled"));
                }
                Ok(node.to_string())
            }
        }
    }

    /// A fault aimed at a pod that is not there (deleted, or not yet scheduled) does nothing;
    /// the trace says so. Faults are timing-dependent, so this is not a scenario error.
    fn skipped(&mut self, step: &str, why: &str) {
        self.world
            .api
            .trace_external("step", step, "", "", format!("skipped: {why}"));
    }

    fn pods_on(&self, node: &str) -> Vec<ObjectRef> {
        self.world
            .api
            .list::<Pod>(None, &crate::api::Selector::everything())
            .iter()
            .filter(|p| k8s::node_name(p) == node)
            .map(|p| ObjectRef::of(&p.metadata))
            .collect()
    }

    /// Apply one manifest. While the LWS webhook is unreachable (its controller pod is down)
    /// the apply is retried every second, as a deploy pipeline would, for up to two minutes.
    pub fn apply_manifest(&mut self, source: &str, m: &Manifest) -> Result<(), RunError> {
        let mut attempts = 0;
        let r = loop {
            let api = &mut self.world.api;
            let r = match m {
                Manifest::LeaderWorkerSet(o) => kubectl_apply(api, (**o).clone()),
                Manifest::StatefulSet(o) => kubectl_apply(api, (**o).clone()),
                Manifest::Service(o) => kubectl_apply(api, (**o).clone()),
                Manifest::Pod(o) => kubectl_apply(api, (**o).clone()),
                Manifest::PodDisruptionBudget(o) => kubectl_apply(api, (**o).clone()),
            };
            let webhook_down = r
                .as_ref()
                .is_err_and(|e| e.message.contains("failed calling webhook"));
            if !webhook_down || attempts >= 120 {
                break r;
            }
            attempts += 1;
            let t = self.world.now_ms + 1_000;
            self.advance_to(t)?;
        };
        r.map_err(|e| {
            RunError(format!(
                "{source}: {} {:?} was rejected: {e}",
                m.kind(),
                m.name()
            ))
        })
    }

    pub fn run_step(&mut self, step: &Step) -> Result<(), RunError> {
        if !step.is_passive() {
            self.checker.close_quiet_window();
        }
        let now = self.world.now_ms;
        match step {
            Step::Apply { source, objects } => {
                // The file name only: a trace must not depend on where the scenario lives.
                let file = Path::new(source)
                    .file_name()
                    .map(|f| f.to_string_lossy().to_string());
                let file = file.unwrap_or_else(|| source.clone());
                self.world
                    .api
                    .trace_external("step", "apply", "", &file, String::new());
                for m in objects {
                    self.apply_manifest(source, m)?;
                }
                self.advance_to(now)?;
            }
            Step::Patch {
                kind,
                namespace,
                name,
                merge,
            } => {
                let r = with_kind!(*kind, K => self.world.api.merge_patch::<K>("kubectl", namespace, name, merge).map(|_| ()));
                if let Err(e) = r {
                    self.checker.external(
                        &self.world.api,
                        invariants::CHECK,
                        format!("patch {kind} {name} failed: {e}"),
                    );
                }
                self.advance_to(now)?;
            }
            Step::Scale {
                namespace,
                lws,
                replicas,
            } => {
                let patch = serde_json::json!({"spec": {"replicas": replicas}});
                if let Err(e) = self
                    .world
                    .api
                    .merge_patch::<LeaderWorkerSet>("kubectl", namespace, lws, &patch)
                {
                    self.checker.external(
                        &self.world.api,
                        invariants::CHECK,
                        format!("scale {lws} failed: {e}"),
                    );
                }
                self.advance_to(now)?;
            }
            Step::Delete {
                kind,
                namespace,
                name,
                propagation,
            } => {
                let opts = DeleteOptions {
                    propagation: *propagation,
                    ..Default::default()
                };
                let r = with_kind!(*kind, K => self.world.api.delete::<K>("kubectl", namespace, name, &opts).map(|_| ()));
                if let Err(e) = r {
                    self.checker.external(
                        &self.world.api,
                        invariants::CHECK,
                        format!("delete {kind} {name} failed: {e}"),
                    );
                }
                self.advance_to(now)?;
            }
            Step::Wait(ms) => self.advance_to(now + ms)?,
            Step::WaitFor { target, timeout_ms } => {
                let ok = self.advance_until(*timeout_ms, |w, c| wait_target_met(w, c, target))?;
                if !ok {
                    let what = match target {
                        WaitTarget::Available => "the LeaderWorkerSet to be Available".to_string(),
                        WaitTarget::RolloutComplete => "the rollout to complete".to_string(),
                        WaitTarget::Object(m) => {
                            format!("{} {} to match {}", m.kind, m.name, m.pattern)
                        }
                    };
                    let msg = format!(
                        "waited {} for {what}; state: {}",
                        crate::time::fmt_ms(*timeout_ms),
                        stuck_state(&self.world, &self.checker)
                    );
                    self.checker
                        .external(&self.world.api, invariants::TIMEOUT, msg);
                }
            }
            Step::Check(m) => {
                if let Err(obj) = m.matching(&self.world.api) {
                    let got = obj
                        .map(|o| o.to_string())
                        .unwrap_or_else(|| "not found".into());
                    let got: String = got.chars().take(300).collect();
                    self.checker.external(
                        &self.world.api,
                        invariants::CHECK,
                        format!("{} {} does not match {}: {got}", m.kind, m.name, m.pattern),
                    );
                }
            }
            Step::KillController { after_writes } => {
                self.checker.open_quiet_window(now);
                match after_writes {
                    Some(n) => self.fire(Event::KillControllerAfterWrites(*n))?,
                    None => self.fire(Event::KillController)?,
                }
            }
            Step::Resync { after_reconciles } => {
                self.checker.open_quiet_window(now);
                match after_reconciles {
                    Some(n) => self.fire(Event::ResyncAfterReconciles(*n))?,
                    None => self.fire(Event::Resync)?,
                }
            }
            Step::HoldWatchEvent(n) => self.fire(Event::HoldWatchEvent(*n))?,
            Step::StaleRead(n) => self.fire(Event::StaleRead(*n))?,
            Step::DrainNode { node, replace } => match self.node_of(node) {
                Ok(n) => {
                    let pods = self.pods_on(&n);
                    self.checker
                        .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
                    self.fire(Event::DrainNode {
                        node: n,
                        replace: *replace,
                    })?;
                }
                Err(m) => self.skipped("drainNode", &m),
            },
            Step::FailNode(node) => match self.node_of(node) {
                Ok(n) => {
                    let pods = self.pods_on(&n);
                    self.checker
                        .on_fault(&FaultEffect::NodeFailed { pods }, now);
                    self.fire(Event::FailNode(n))?;
                }
                Err(m) => self.skipped("failNode", &m),
            },
            Step::Cordon(node) | Step::Uncordon(node) => match self.node_of(node) {
                Ok(n) => {
                    let e = if matches!(step, Step::Cordon(_)) {
                        Event::Cordon(n)
                    } else {
                        Event::Uncordon(n)
                    };
                    self.fire(e)?;
                }
                Err(m) => self.skipped("cordon", &m),
            },
            Step::CrashContainer { namespace, pod } => {
                let target = ObjectRef::new(namespace, pod);
                let crash = FaultEffect::ContainerCrashing {
                    pod: target.clone(),
                };
                self.checker.on_fault(&crash, now);
                let before = self.restart_count(namespace, pod);
                self.fire(Event::CrashContainer {
                    namespace: namespace.clone(),
                    pod: pod.clone(),
                })?;
                // A crash only counts if a container did restart (the pod was Running).
                if self.restart_count(namespace, pod) > before {
                    let restarted = FaultEffect::ContainerRestarted { pod: target };
                    self.checker.on_fault(&restarted, now);
                }
            }
            Step::DeletePod {
                namespace,
                pod,
                grace_period_seconds,
            } => {
                let pods = vec![ObjectRef::new(namespace, pod)];
                self.checker
                    .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
                self.fire(Event::DeletePod {
                    namespace: namespace.clone(),
                    pod: pod.clone(),
                    grace_period_seconds: *grace_period_seconds,
                })?;
            }
        }
        Ok(())
    }
}

/// Create, or replace labels, annotations and spec of the live object (simplified
/// `kubectl apply`; docs/fidelity.md).
fn kubectl_apply<K: Kind>(api: &mut ApiServer, obj: K) -> Result<(), crate::api::ApiError> {
    let ns = obj
        .meta()
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = obj.meta().name.clone().unwrap_or_default();
    match api.try_get::<K>(&ns, &name) {
        None => api.create("kubectl", obj).map(|_| ()),
        Some(live) => {
            let mut v = serde_json::to_value(&obj).expect("objects encode");
            let mut merged = serde_json::to_value(&*live).expect("objects encode");
            if let Some(m) = merged.as_object_mut() {
                if let Some(spec) = v.get_mut("spec").map(Value::take) {
                    m.insert("spec".into(), spec);
                }
            }
            for key in ["labels", "annotations"] {
                if let Some(x) = v.pointer(&format!("/metadata/{key}")) {
                    merged["metadata"][key] = x.clone();
                }
            }
            let updated: K = serde_json::from_value(merged).expect("a merged object decodes");
            api.update("kubectl", updated).map(|_| ())
        }
    }
}

fn object_json(api: &ApiServer, kind: KindId, ns: &str, name: &str) -> Option<Value> {
    let ns = if kind.namespaced() { ns } else { "" };
    with_kind!(kind, K => api.try_get::<K>(ns, name).map(|o| serde_json::to_value(&*o).expect("objects encode")))
}

/// Subset match: every key of the pattern matches; scalars equal; arrays element-wise, same
/// length.
pub fn subset_match(pattern: &Value, obj: &Value) -> bool {
    match (pattern, obj) {
        (Value::Object(p), Value::Object(o)) => p
            .iter()
            .all(|(k, v)| o.get(k).is_some_and(|x| subset_match(v, x))),
        (Value::Array(p), Value::Array(o)) => {
            p.len() == o.len() && p.iter().zip(o).all(|(a, b)| subset_match(a, b))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

fn lws_available(w: &World) -> bool {
    w.api
        .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
        .iter()
        .all(|l| {
            l.status.as_ref().is_some_and(|s| {
                s.conditions
                    .iter()
                    .any(|c| c.type_ == "Available" && c.status == "True")
            })
        })
}

/// Rollout complete: every group on the latest revision and ready, no surge group, and the
/// status says Available with counts equal to `replicas`.
pub fn rollout_complete(w: &World, c: &Checker) -> bool {
    c.rollout_complete_groups()
        && lws_available(w)
        && w.api
            .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
            .iter()
            .all(|l| {
                let s = l.status.clone().unwrap_or_default();
                s.ready_replicas == l.replicas() && s.updated_replicas == l.replicas()
            })
}

/// Why the rollout is not complete: the groups' state, and, once every group is done, where the
/// LWS status disagrees with the world (the status counts and conditions rollout-complete needs).
fn stuck_state(w: &World, c: &Checker) -> String {
    let mut s = c.stuck_state();
    let last_error = w
        .controller
        .as_ref()
        .and_then(|ctl| ctl.events.iter().rev().find(|e| e.contains(" failed: ")));
    if let Some(e) = last_error {
        let (at, what) = e.split_once(' ').unwrap_or(("", e));
        let at = at.parse().map(crate::time::fmt_ms).unwrap_or_default();
        s.push_str(&format!("; last controller error (t={at}): {what}"));
    }
    if !c.rollout_complete_groups() {
        return s;
    }
    for l in w
        .api
        .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
    {
        let st = l.status.clone().unwrap_or_default();
        let conditions: Vec<String> = st
            .conditions
            .iter()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.clone())
            .collect();
        s.push_str(&format!(
            "; but the status of LWS {} disagrees: readyReplicas {}, updatedReplicas {} of {} groups, True conditions {conditions:?}",
            lws::k8s::name(&l.metadata),
            st.ready_replicas,
            st.updated_replicas,
            l.replicas()
        ));
    }
    s
}

fn wait_target_met(w: &World, c: &Checker, t: &WaitTarget) -> bool {
    match t {
        WaitTarget::Available => lws_available(w) && c.available_groups() >= c.replicas().max(1),
        WaitTarget::RolloutComplete => rollout_complete(w, c),
        WaitTarget::Object(m) => m.matching(&w.api).is_ok(),
    }
}

/// Run a scenario against a reconciler.
pub fn run(
    s: &Scenario,
    reconciler: Option<&str>,
    seed: Option<u64>,
) -> Result<RunReport, RunError> {
    let profile = s.reconciler(reconciler).map_err(RunError)?;
    let seed = seed.or(s.spec.seed).unwrap_or(1);
    let cluster = s.cluster_config().map_err(RunError)?;
    let mut world = World::new(seed, cluster);
    let mut cc = ControllerConfig::new(profile.clone());
    let c = &s.spec.controller;
    if let Some(p) = c.sync_period {
        cc.sync_period_ms = p.0;
    }
    let range = |r: Option<spec::Range>, d: (u64, u64)| r.map(|r| (r.0, r.1)).unwrap_or(d);
    cc.api_latency_ms = range(c.api_latency, cc.api_latency_ms);
    cc.watch_lag_ms = range(c.watch_lag, cc.watch_lag_ms);
    cc.restart_delay_ms = range(c.restart_delay, cc.restart_delay_ms);
    cc.track_previous = s.steps.iter().any(|st| matches!(st, Step::StaleRead(_)));
    world.install_controller(cc);
    let mut runner = Runner {
        world,
        checker: Checker::new(s.invariants.iter().cloned()),
    };
    // Let the controller come up before the manifests are applied, as a user would.
    runner.advance_to(0)?;
    for (file, objects) in &s.manifests {
        for m in objects {
            runner.apply_manifest(file, m)?;
        }
    }
    for step in &s.steps {
        runner.run_step(step)?;
    }
    runner.checker.close_quiet_window();
    if runner.checker.is_enabled(invariants::CONVERGENCE) {
        let within = s
            .spec
            .converge_within
            .map(|d| d.0)
            .unwrap_or(DEFAULT_CONVERGE_MS);
        if !runner.advance_until(within, rollout_complete)? {
            let msg = format!(
                "the rollout did not complete within {} after the last step: {}",
                crate::time::fmt_ms(within),
                stuck_state(&runner.world, &runner.checker)
            );
            runner
                .checker
                .external(&runner.world.api, invariants::CONVERGENCE, msg);
        }
    }
    runner.checker.finish(&runner.world.api);
    let Runner { mut world, checker } = runner;
    let controller_log = world
        .controller
        .as_mut()
        .map(|c| std::mem::take(&mut c.events))
        .unwrap_or_default();
    let controller_writes = world.controller.as_ref().map_or(0, |c| c.writes);
    let controller_reconciles = world
        .controller
        .as_ref()
        .map_or(0, |c| c.reconciles.iter().sum());
    let controller_events = world.controller.as_ref().map_or(0, |c| c.events_delivered);
    Ok(RunReport {
        scenario: s.spec.name.clone(),
        reconciler: profile.name,
        seed,
        min_available: checker.min_available(),
        floor: checker.floor(),
        violations: checker.violations,
        trace_hash: world.api.trace.hash(),
        sim_ms: world.now_ms,
        events: world.event_count,
        trace: world.api.trace,
        controller_log,
        controller_writes,
        controller_reconciles,
        controller_events,
    })
}

/// Does a run meet its expectation? `Err` says how it did not.
pub fn judge(report: &RunReport, expected: &Expectation) -> Result<(), String> {
    let got = report.violated();
    let want: BTreeSet<String> = match expected {
        Expectation::Holds => BTreeSet::new(),
        Expectation::Violates(v) => v.iter().cloned().collect(),
    };
    if got == want {
        return Ok(());
    }
    let mut msg = format!(
        "{} under {}: expected {:?}, got {:?}",
        report.scenario, report.reconciler, want, got
    );
    for v in &report.violations {
        msg.push_str(&format!("\n{}", v.report()));
    }
    Err(msg)
}

/// Kinds a manifest can create, for `--help` and errors.
pub fn manifest_kinds() -> [&'static str; 5] {
    [
        LeaderWorkerSet::ID.as_str(),
        StatefulSet::ID.as_str(),
        Service::ID.as_str(),
        Pod::ID.as_str(),
        PodDisruptionBudget::ID.as_str(),
    ]
}
