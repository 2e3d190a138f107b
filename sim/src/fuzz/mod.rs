//! Generated rollout cases, shrinking, and replayable failure files.
//!
//! A case is drawn from a case seed (derived from the campaign seed and the case index, so any
//! case can be re-run alone and shards partition a campaign exactly): an LWS shape, a cluster,
//! and a schedule mixing a template update with faults. The *mix* of fault kinds is itself drawn
//! per case (swarm testing), so some cases hammer one fault and others combine several. Every
//! case ends with `waitFor: rolloutComplete` and the `convergence` check. What a case may be is
//! one table, `CaseParams` (`DEFAULT_PARAMS`): `draw` samples it for `lws-sim fuzz`, and
//! `sim/tests/proptest_rollouts.rs` turns the same table into a proptest `Strategy`.
//!
//! A case is an ordinary scenario held in memory (`ScenarioFiles`: a `ScenarioSpec` and its
//! two manifests), so a failure written out by `main.rs` is replayed with `lws-sim run`.
//! Shrinking is greedy: drop steps, then fewer groups, smaller groups, a working first image,
//! the default startup policy, shorter waits, keeping every change that still breaks the same
//! invariant. A `Campaign` is the generation, sharding, batching and shrinking; the threads that
//! run a batch and the files are `main.rs`'s.
//!
//! `disaggregated.rs` is the other workload a campaign may roll out: the same case as a
//! two-role DisaggregatedSet (v0.10.0).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use lws::profile::Profile;
use serde_json::{json, Value};

use crate::rng::SimRng;
use crate::scenario::manifest::Manifest;
use crate::scenario::spec::{
    ClusterSpec, ControllerSpec, DeletePodSpec, Duration, Expectation, InvariantSelection,
    KillSpec, NodeRef, NodesSpec, PodRef, Range, ResyncSpec, ScaleSpec, ScenarioSpec, StepSpec,
};
use crate::scenario::{self, RunReport, ScenarioFiles};

mod disaggregated;
pub use disaggregated::Workload;

/// A fault kind a case may use; each case enables a random non-empty subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    KillController,
    KillAfterWrites,
    Resync,
    DrainNode,
    CrashContainer,
    DeletePod,
    ForceDeletePod,
}

/// Every fault kind, in the order the generator draws them.
pub const FAULTS: [Fault; 7] = [
    Fault::KillController,
    Fault::KillAfterWrites,
    Fault::Resync,
    Fault::DrainNode,
    Fault::CrashContainer,
    Fault::DeletePod,
    Fault::ForceDeletePod,
];

impl Fault {
    /// The scenario step of this fault aimed at `pod` (`writes` for `KillAfterWrites`).
    pub fn step(self, pod: &str, writes: u64) -> StepSpec {
        let delete_pod = |grace_period_seconds| {
            StepSpec::DeletePod(DeletePodSpec {
                pod: pod.to_string(),
                namespace: None,
                grace_period_seconds,
            })
        };
        match self {
            Fault::KillController => StepSpec::KillController(KillSpec::default()),
            Fault::KillAfterWrites => StepSpec::KillController(KillSpec {
                after_writes: Some(writes),
            }),
            Fault::Resync => StepSpec::Resync(ResyncSpec::default()),
            Fault::DrainNode => StepSpec::DrainNode(NodeRef {
                node_of: Some(pod.to_string()),
                ..NodeRef::default()
            }),
            Fault::CrashContainer => StepSpec::CrashContainer(PodRef {
                pod: pod.to_string(),
                namespace: None,
            }),
            Fault::DeletePod => delete_pod(None),
            Fault::ForceDeletePod => delete_pod(Some(0)),
        }
    }
}

/// The image of a broken first template: listed as unpullable in the case's cluster.
const BROKEN_IMAGE: &str = "app:does-not-exist";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseStep {
    Wait(u64),
    Fault {
        kind: Fault,
        group: i32,
        worker: i32,
        writes: u64,
        /// Which LWS of a DisaggregatedSet the fault hits (always the default for an LWS case).
        target: Target,
    },
    Scale(i32),
}

/// A fault's LWS in a DisaggregatedSet case: a role (index into `disaggregated::ROLES`) of the
/// old or the new revision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Target {
    pub role: usize,
    pub new_revision: bool,
}

/// Everything a generated case is made of; `files` turns it into a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub index: u64,
    pub seed: u64,
    pub workload: Workload,
    pub replicas: i32,
    pub size: i32,
    pub max_unavailable: String,
    pub max_surge: String,
    pub restart_policy: Option<&'static str>,
    pub startup_policy: Option<&'static str>,
    /// The first template's image never pulls, so no group ever comes up before the update
    /// that fixes it (the shape of issue #567, bug B11).
    pub broken_first_image: bool,
    /// Kubernetes 1.x: 29 (MaxUnavailableStatefulSet off), 35 (on by default) or 37 (old
    /// unavailable pods replaced first).
    pub kubernetes_minor: u32,
    pub nodes: u32,
    pub startup_ms: (u64, u64),
    pub steps: Vec<CaseStep>,
}

/// What a case may be: inclusive ranges and the lists choices are drawn from (a repeated entry
/// weighs more). `draw` samples it; a proptest `Strategy` can be built from the same fields.
#[derive(Clone, Copy, Debug)]
pub struct CaseParams {
    pub replicas: (u64, u64),
    pub size: (u64, u64),
    pub max_surge: &'static [&'static str],
    /// maxUnavailable without a surge: a percentage can scale to 0, which the webhook rejects
    /// without a surge (a user error, not a controller bug), so none here.
    pub max_unavailable_without_surge: &'static [&'static str],
    pub max_unavailable_with_surge: &'static [&'static str],
    pub restart_policies: &'static [Option<&'static str>],
    pub startup_policies: &'static [Option<&'static str>],
    pub kubernetes_minors: &'static [u32],
    /// One case in this many starts from an image that never pulls (where that can roll out).
    pub broken_first_image_one_in: u64,
    pub faults: &'static [Fault],
    pub fault_count: (u64, u64),
    pub first_wait_s: (u64, u64),
    pub kill_after_writes: (u64, u64),
    pub wait_after_fault_s: (u64, u64),
    /// One case in this many scales the LWS (to `scale_to` groups) right after the first wait.
    pub scale_one_in: u64,
    pub scale_to: (u64, u64),
    pub startup_lo_s: (u64, u64),
    pub startup_hi_s: (u64, u64),
}

/// The default distribution: 1-8 groups of 1-4 pods (median 4 groups of 3), maxUnavailable 1-2
/// (0 too with a surge) or 25-50%, maxSurge 0-2, either startup policy, Kubernetes 1.29, 1.35
/// or 1.37 (MaxUnavailableStatefulSet off, on, on with PR #137666), one template update (from
/// an image that never pulls in one case of eight), 1-4 faults of 1-7 kinds.
pub const DEFAULT_PARAMS: CaseParams = CaseParams {
    replicas: (1, 8),
    size: (1, 4),
    max_surge: &["0", "0", "1", "2"],
    max_unavailable_without_surge: &["1", "1", "2"],
    max_unavailable_with_surge: &["0", "1", "2", "25%", "50%"],
    restart_policies: &[None, Some("RecreateGroupOnPodRestart"), Some("None")],
    startup_policies: &[None, Some("LeaderReady")],
    kubernetes_minors: &[29, 35, 37],
    broken_first_image_one_in: 8,
    faults: &FAULTS,
    fault_count: (1, 4),
    first_wait_s: (0, 60),
    kill_after_writes: (1, 6),
    wait_after_fault_s: (5, 120),
    scale_one_in: 4,
    scale_to: (1, 8),
    startup_lo_s: (5, 30),
    startup_hi_s: (30, 90),
};

/// The default distribution's fingerprint: FNV-1a 64 of the table, as hex. Shards of one
/// campaign agree on it; a change to the table changes it (a change to how `draw` reads the
/// table does not: that comes with another lws-sim version).
pub fn distribution() -> String {
    format!(
        "{:016x}",
        crate::trace::fnv64(&format!("{DEFAULT_PARAMS:?}"))
    )
}

/// The fingerprint of the default distribution rolled out as `workload` (`distribution` for
/// an LWS).
pub fn distribution_of(workload: Workload) -> String {
    match workload {
        Workload::Lws => distribution(),
        w => format!(
            "{:016x}",
            crate::trace::fnv64(&format!("{} {DEFAULT_PARAMS:?}", w.as_str()))
        ),
    }
}

/// The seed of case `index` of a campaign: a fixed function of both.
pub fn case_seed(campaign_seed: u64, index: u64) -> u64 {
    SimRng::labelled(campaign_seed, &format!("case-{index}")).next_u64()
}

fn pick<T: Copy>(rng: &mut SimRng, items: &[T]) -> T {
    items[(rng.next_u64() % items.len() as u64) as usize]
}

fn range(rng: &mut SimRng, (lo, hi): (u64, u64)) -> u64 {
    rng.range_inclusive(lo, hi)
}

impl CaseParams {
    /// maxSurge, then maxUnavailable (which depends on it).
    fn draw_knobs(&self, rng: &mut SimRng) -> (String, String) {
        let max_surge = pick(rng, self.max_surge);
        let max_unavailable = if max_surge == "0" {
            pick(rng, self.max_unavailable_without_surge)
        } else {
            pick(rng, self.max_unavailable_with_surge)
        };
        (max_unavailable.to_string(), max_surge.to_string())
    }

    /// The schedule after the update: a first wait, faults with waits between, and sometimes a
    /// scale right after the first wait.
    fn draw_schedule(&self, rng: &mut SimRng, replicas: i32, size: i32) -> Vec<CaseStep> {
        let mut enabled: Vec<Fault> = self
            .faults
            .iter()
            .copied()
            .filter(|_| rng.next_u64().is_multiple_of(2))
            .collect();
        if enabled.is_empty() {
            enabled.push(pick(rng, self.faults));
        }
        let faults = range(rng, self.fault_count);
        let mut steps = vec![CaseStep::Wait(range(rng, self.first_wait_s) * 1000)];
        for _ in 0..faults {
            let kind = pick(rng, &enabled);
            let group = rng.range_inclusive(0, replicas as u64 - 1) as i32;
            let worker = rng.range_inclusive(0, size as u64 - 1) as i32;
            let writes = range(rng, self.kill_after_writes);
            steps.push(CaseStep::Fault {
                kind,
                group,
                worker,
                writes,
                target: Target::default(),
            });
            steps.push(CaseStep::Wait(range(rng, self.wait_after_fault_s) * 1000));
        }
        if rng.next_u64().is_multiple_of(self.scale_one_in) {
            steps.insert(1, CaseStep::Scale(range(rng, self.scale_to) as i32));
        }
        steps
    }

    /// Draw case `index` from its case seed.
    pub fn draw(&self, index: u64, seed: u64) -> Case {
        let mut rng = SimRng::labelled(seed, "generator");
        let replicas = range(&mut rng, self.replicas) as i32;
        let size = range(&mut rng, self.size) as i32;
        let (max_unavailable, max_surge) = self.draw_knobs(&mut rng);
        let restart_policy = pick(&mut rng, self.restart_policies);
        let startup_policy = pick(&mut rng, self.startup_policies);
        let kubernetes_minor = pick(&mut rng, self.kubernetes_minors);
        let broken_first_image = rng
            .next_u64()
            .is_multiple_of(self.broken_first_image_one_in)
            && broken_image_rolls_out(kubernetes_minor);
        let steps = self.draw_schedule(&mut rng, replicas, size);
        let startup_lo = range(&mut rng, self.startup_lo_s) * 1000;
        let startup_hi = range(&mut rng, self.startup_hi_s) * 1000;
        Case {
            index,
            seed,
            workload: Workload::Lws,
            replicas,
            size,
            max_unavailable,
            max_surge,
            restart_policy,
            startup_policy,
            broken_first_image,
            kubernetes_minor,
            nodes: nodes_for(size),
            startup_ms: (startup_lo, startup_hi),
            steps,
        }
    }
}

/// Case `index` of a campaign, from the default distribution.
pub fn generate(campaign_seed: u64, index: u64) -> Case {
    DEFAULT_PARAMS.draw(index, case_seed(campaign_seed, index))
}

/// Case `index` of a campaign rolling out `workload`: the LWS case of the same index, in the
/// workload's form.
pub fn generate_for(workload: Workload, campaign_seed: u64, index: u64) -> Case {
    let mut case = generate(campaign_seed, index);
    match workload {
        Workload::Lws => {}
        Workload::Disaggregated => disaggregated::adapt(&mut case),
        Workload::Replaced | Workload::Gang => case.workload = workload,
    }
    case
}

/// Nodes (of 4 pods) for groups of `size`: room for the largest a case can grow to (8 groups,
/// surge 2), twice over for drains.
pub fn nodes_for(size: i32) -> u32 {
    let pods = (10 * size) as u32;
    (pods * 2).div_ceil(4).max(2) + 2
}

/// Whether a rollout away from a never-ready image can complete on Kubernetes 1.`minor`: a 1.35
/// StatefulSet never replaces pods that are unavailable once its budget is spent (fixed in 1.37,
/// PR #137666), a Kubernetes limit rather than the controller's.
pub fn broken_image_rolls_out(minor: u32) -> bool {
    minor != 35
}

/// `1` as an integer, `25%` as a string: the manifest's IntOrString.
fn int_or_percent(v: &str) -> Value {
    v.parse::<i64>().map_or_else(|_| json!(v), |n| json!(n))
}

fn wait(ms: u64) -> StepSpec {
    StepSpec::Wait(Duration(ms))
}

fn rollout_complete_within(ms: u64) -> StepSpec {
    StepSpec::WaitFor {
        target: json!("rolloutComplete"),
        timeout: Some(Duration(ms)),
    }
}

impl Case {
    /// The LWS manifest with the given worker image. v0.3.0's CRD has no `None` restart
    /// policy (its enum is {Default, RecreateGroupOnPodRestart}): under that CRD (`old_crd`)
    /// it is spelt `Default`, which means the same.
    fn manifest(&self, image: &str, old_crd: bool) -> Value {
        let mut template = json!({
            "size": self.size,
            "workerTemplate": {"spec": {"containers": [{"name": "worker", "image": image}]}},
        });
        if self.workload == Workload::Gang {
            // The leader takes the worker template: both scheduled by Volcano.
            template["workerTemplate"]["spec"]["schedulerName"] = json!("volcano");
        }
        if let Some(p) = self.restart_policy {
            let p = if p == "None" && old_crd { "Default" } else { p };
            template["restartPolicy"] = json!(p);
        }
        let mut spec = json!({
            "replicas": self.replicas,
            "leaderWorkerTemplate": template,
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {
                    "maxUnavailable": int_or_percent(&self.max_unavailable),
                    "maxSurge": int_or_percent(&self.max_surge),
                },
            },
        });
        if let Some(p) = self.startup_policy {
            spec["startupPolicy"] = json!(p);
        }
        json!({
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "fz"},
            "spec": spec,
        })
    }

    /// The name of a fault's pod: worker `worker` of group `group` of the case's LWS, or, given
    /// the set's revisions (old, new), of the set's LWS that `target` names.
    fn pod(group: i32, worker: i32, target: Target, revisions: Option<&[String; 2]>) -> String {
        let lws = match revisions {
            None => "fz".to_string(),
            Some([old, new]) => {
                let revision = if target.new_revision { new } else { old };
                disaggregated::lws_name(revision, disaggregated::ROLES[target.role])
            }
        };
        if worker == 0 {
            format!("{lws}-{group}")
        } else {
            format!("{lws}-{group}-{worker}")
        }
    }

    /// The revisions of the set's first and second template (a DisaggregatedSet case).
    fn set_revisions(&self) -> [String; 2] {
        self.manifest_values(Some("v0.10.0")).map(|(name, v)| {
            disaggregated::revision(&v)
                .unwrap_or_else(|e| panic!("a generated set does not decode ({name}): {e}"))
        })
    }

    fn cluster(&self) -> ClusterSpec {
        ClusterSpec {
            kubernetes_version: Some(format!("1.{}", self.kubernetes_minor)),
            nodes: Some(NodesSpec {
                count: Some(self.nodes),
                pods_per_node: Some(4),
                labels: BTreeMap::new(),
                domains: Vec::new(),
            }),
            pod_startup: Some(Range(self.startup_ms.0, self.startup_ms.1)),
            pod_termination: Some(Range(1_000, 10_000)),
            unpullable_images: if self.broken_first_image {
                vec![BROKEN_IMAGE.to_string()]
            } else {
                Vec::new()
            },
            ..ClusterSpec::default()
        }
    }

    /// The steps: bring v1 up (or wait on the broken image), apply v2, the case's schedule,
    /// and wait for the rollout to complete.
    fn steps(&self) -> Vec<StepSpec> {
        let first = if self.broken_first_image {
            wait(120_000)
        } else {
            rollout_complete_within(3_600_000)
        };
        // A set's revisions, computed once: every fault's pod and the end of the rollout.
        let revisions = (self.workload == Workload::Disaggregated).then(|| self.set_revisions());
        let mut steps = vec![first];
        if self.workload == Workload::Replaced {
            // `kubectl replace --force`: delete (in the background, kubectl's default), then
            // create at once.
            steps.push(StepSpec::Delete(scenario::spec::ObjectRef {
                kind: "LeaderWorkerSet".into(),
                name: "fz".into(),
                ..Default::default()
            }));
        }
        steps.push(StepSpec::Apply(json!("v2.yaml")));
        steps.extend(self.steps.iter().map(|step| match step {
            CaseStep::Wait(ms) => wait(*ms),
            CaseStep::Scale(n) => StepSpec::Scale(ScaleSpec {
                lws: Some("fz".into()),
                kind: None,
                name: None,
                replicas: *n,
                namespace: None,
            }),
            CaseStep::Fault {
                kind,
                group,
                worker,
                writes,
                target,
            } => {
                let pod = Self::pod(*group, *worker, *target, revisions.as_ref());
                kind.step(&pod, *writes)
            }
        }));
        if let Some([old, _]) = &revisions {
            steps.push(set_rolled_out(old));
        }
        steps.push(rollout_complete_within(7_200_000));
        if revisions.is_some() {
            // One LWS per role is left: the new revision's.
            steps.push(StepSpec::Check(set_lws(
                None,
                Some(disaggregated::ROLES.len() as u32),
            )));
        }
        steps
    }

    /// How many steps the case's scenario has (the drawn schedule and the steps around it).
    pub fn step_count(&self) -> usize {
        self.steps().len()
    }

    /// The case as a scenario (manifests `v1.yaml` and `v2.yaml` beside it). With a reconciler
    /// and the invariants it broke, a replayable failure file.
    pub fn files(
        &self,
        reconciler: Option<&str>,
        expect: Option<&[String]>,
        note: &str,
    ) -> ScenarioFiles {
        let spec = self.spec(reconciler, expect, note);
        let manifests = self
            .manifest_values(reconciler)
            .into_iter()
            .map(|(name, v)| {
                let text = serde_saphyr::to_string(&v).expect("manifests encode");
                (name.to_string(), text)
            })
            .collect();
        ScenarioFiles { spec, manifests }
    }

    /// The scenario spec of `files`, without the manifests.
    fn spec(
        &self,
        reconciler: Option<&str>,
        expect: Option<&[String]>,
        note: &str,
    ) -> ScenarioSpec {
        let expect = match (reconciler, expect) {
            (Some(r), Some(v)) => {
                BTreeMap::from([(r.to_string(), Expectation::Violates(v.to_vec()))])
            }
            _ => BTreeMap::new(),
        };
        ScenarioSpec {
            name: format!("fuzz-case-{}", self.index),
            description: format!(
                "Generated by lws-sim fuzz (case {}, case seed {}). {note}",
                self.index, self.seed
            ),
            seed: Some(self.seed % 1_000_000_007),
            cluster: self.cluster(),
            controller: ControllerSpec {
                reconciler: reconciler.map(str::to_string),
                ..ControllerSpec::default()
            },
            manifests: vec!["v1.yaml".into()],
            steps: self.steps(),
            invariants: Some(InvariantSelection::Named("all".into())),
            converge_within: None,
            expect,
        }
    }

    /// The two LWS manifests (`v1.yaml`, `v2.yaml`) as JSON. v0.3.0's CRD has no `None`
    /// restart policy, so a reconciler of the old defaulting gets the old spelling.
    fn manifest_values(&self, reconciler: Option<&str>) -> [(&'static str, Value); 2] {
        let v1 = if self.broken_first_image {
            BROKEN_IMAGE
        } else {
            "app:v1"
        };
        let old_crd = reconciler
            .and_then(|r| Profile::parse(r).ok())
            .is_some_and(|r| {
                r.release != lws::profile::Release::V0_10_0
                    && !r.flags.restart_policy_default_recreate
            });
        let [v1, v2] = [self.manifest(v1, old_crd), self.manifest("app:v2", old_crd)];
        match self.workload {
            Workload::Lws | Workload::Replaced | Workload::Gang => {
                [("v1.yaml", v1), ("v2.yaml", v2)]
            }
            Workload::Disaggregated => [
                ("v1.yaml", disaggregated::manifest(&v1)),
                ("v2.yaml", disaggregated::manifest(&v2)),
            ],
        }
    }

    /// The case as a runnable scenario without the YAML round trip of `files`: the same spec,
    /// the manifests decoded straight from JSON (`run_case`; a failure is written with `files`).
    pub fn scenario(&self, reconciler: &str) -> Result<scenario::Scenario, String> {
        let spec = self.spec(Some(reconciler), None, "");
        let decoded = self
            .manifest_values(Some(reconciler))
            .into_iter()
            .map(|(name, v)| {
                let decoded = match self.workload {
                    Workload::Lws | Workload::Replaced | Workload::Gang => {
                        serde_json::from_value(v).map(Manifest::LeaderWorkerSet)
                    }
                    Workload::Disaggregated => {
                        serde_json::from_value(v).map(Manifest::DisaggregatedSet)
                    }
                };
                Ok((
                    name.to_string(),
                    vec![decoded.map_err(|e| format!("{name}: {e}"))?],
                ))
            })
            .collect::<Result<BTreeMap<_, _>, String>>()?;
        scenario::Scenario::from_spec(
            Path::new("case.yaml"),
            spec,
            &scenario::DecodedManifests(decoded),
        )
        .map_err(|e| e.to_string())
    }
}

/// A DisaggregatedSet case is rolled out once no LWS of the `old` revision is left.
fn set_rolled_out(old: &str) -> StepSpec {
    let mut gone = set_lws(Some(old), None);
    gone.absent = true;
    StepSpec::WaitFor {
        target: serde_json::to_value(&gone).expect("object refs encode"),
        timeout: Some(Duration(7_200_000)),
    }
}

/// The LWSs of the case's set (of one revision, if given): a `check`/`waitFor` target.
fn set_lws(revision: Option<&str>, count: Option<u32>) -> scenario::spec::ObjectRef {
    let mut selector = BTreeMap::from([(
        "disaggregatedset.x-k8s.io/name".to_string(),
        disaggregated::SET.to_string(),
    )]);
    if let Some(r) = revision {
        selector.insert("disaggregatedset.x-k8s.io/revision".into(), r.into());
    }
    scenario::spec::ObjectRef {
        kind: "LeaderWorkerSet".into(),
        selector,
        count,
        ..Default::default()
    }
}

/// Run a case against `reconciler`. `Err` is a case the engine refused (a generator bug).
pub fn run_case(case: &Case, reconciler: &Profile) -> Result<RunReport, String> {
    let s = case.scenario(&reconciler.name)?;
    scenario::run_with(&s, reconciler, None).map_err(|e| e.0)
}

/// The cases one shrinking round tries, simplest first: each step dropped, one group fewer, a
/// smaller group, a working first image, Kubernetes 1.29, the default startup policy, each
/// wait halved.
fn shrink_candidates(best: &Case) -> Vec<Case> {
    let mut candidates: Vec<Case> = Vec::new();
    for i in 0..best.steps.len() {
        let mut c = best.clone();
        c.steps.remove(i);
        candidates.push(c);
    }
    if best.replicas > 1 {
        let mut c = best.clone();
        c.replicas -= 1;
        c.steps
            .retain(|s| !matches!(s, CaseStep::Fault { group, .. } if *group >= c.replicas));
        candidates.push(c);
    }
    if best.size > 1 {
        let mut c = best.clone();
        c.size -= 1;
        c.steps
            .retain(|s| !matches!(s, CaseStep::Fault { worker, .. } if *worker >= c.size));
        candidates.push(c);
    }
    if best.broken_first_image {
        candidates.push(Case {
            broken_first_image: false,
            ..best.clone()
        });
    }
    if best.kubernetes_minor != 29 {
        candidates.push(Case {
            kubernetes_minor: 29,
            ..best.clone()
        });
    }
    if best.startup_policy.is_some() {
        candidates.push(Case {
            startup_policy: None,
            ..best.clone()
        });
    }
    for (i, s) in best.steps.iter().enumerate() {
        if let CaseStep::Wait(ms) = s {
            if *ms >= 2_000 {
                let mut c = best.clone();
                c.steps[i] = CaseStep::Wait(ms / 2);
                candidates.push(c);
            }
        }
    }
    candidates
}

/// Greedy shrinking towards a case that still breaks `target`. Bounded: at most `budget` runs.
pub fn shrink(case: &Case, reconciler: &Profile, target: &str, budget: usize) -> Case {
    let fails = |c: &Case| run_case(c, reconciler).is_ok_and(|r| r.violated().contains(target));
    let mut best = case.clone();
    let mut runs = 0;
    loop {
        let mut improved = false;
        for c in shrink_candidates(&best) {
            if runs >= budget {
                return best;
            }
            runs += 1;
            if fails(&c) {
                best = c;
                improved = true;
                break;
            }
        }
        if !improved {
            return best;
        }
    }
}

/// The outcome of one case of a campaign.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub index: u64,
    pub violated: BTreeSet<String>,
    pub events: u64,
    pub error: Option<String>,
}

pub fn check_case(
    workload: Workload,
    campaign_seed: u64,
    index: u64,
    reconciler: &Profile,
) -> CaseResult {
    let case = generate_for(workload, campaign_seed, index);
    match run_case(&case, reconciler) {
        Ok(r) => CaseResult {
            index,
            violated: r.violated(),
            events: r.events,
            error: None,
        },
        Err(e) => CaseResult {
            index,
            violated: BTreeSet::new(),
            events: 0,
            error: Some(e),
        },
    }
}

/// Which case indices shard `i` of `n` runs: every n-th, starting at i.
pub fn in_shard(index: u64, shard: (u64, u64)) -> bool {
    index % shard.1 == shard.0
}

/// A failure shrunk to a small case, with its run.
pub struct Shrunk {
    pub original: Case,
    pub case: Case,
    pub report: RunReport,
}

/// A fuzz campaign: the cases of one shard of a campaign seed, handed out in batches (in index
/// order, so however a batch is spread over threads the results are the same), and the
/// shrinking of its failures. It never touches files; `main.rs` writes what it returns.
pub struct Campaign {
    pub seed: u64,
    pub reconciler: Profile,
    /// What its cases roll out (an LWS unless `with_workload` says otherwise).
    pub workload: Workload,
    /// `(i, n)`: this campaign runs the indices `i`, `i + n`, `i + 2n`, ... up to `u64::MAX`.
    pub shard: (u64, u64),
    /// The next index to hand out; `None` once past `u64::MAX` (never wrapping, so no index
    /// lands in a second shard).
    next: Option<u64>,
}

impl Campaign {
    pub fn new(seed: u64, reconciler: Profile, shard: (u64, u64)) -> Campaign {
        assert!(shard.0 < shard.1, "shard {shard:?}: I < N");
        Campaign {
            seed,
            reconciler,
            workload: Workload::Lws,
            shard,
            next: Some(shard.0),
        }
    }

    /// The same campaign rolling out `workload`.
    pub fn with_workload(self, workload: Workload) -> Campaign {
        Campaign { workload, ..self }
    }

    /// The next `n` case indices of this shard; fewer (or none) once the shard's indices run out
    /// at `u64::MAX`.
    pub fn next_batch(&mut self, n: u64) -> Vec<u64> {
        let mut batch = Vec::new();
        while (batch.len() as u64) < n {
            let Some(i) = self.next else { break };
            batch.push(i);
            self.next = i.checked_add(self.shard.1);
        }
        batch
    }

    /// Whether every case index of this shard has been handed out: they end at `u64::MAX`,
    /// which a shard of a very large `N` reaches after a few cases.
    pub fn exhausted(&self) -> bool {
        self.next.is_none()
    }

    pub fn case(&self, index: u64) -> Case {
        generate_for(self.workload, self.seed, index)
    }

    /// Run case `index`.
    pub fn check(&self, index: u64) -> CaseResult {
        check_case(self.workload, self.seed, index, &self.reconciler)
    }

    /// Shrink case `index` towards a case that still breaks `invariant` (at most `budget`
    /// runs) and run the result once more for its report.
    pub fn shrink(&self, index: u64, invariant: &str, budget: usize) -> Result<Shrunk, String> {
        let original = self.case(index);
        let case = shrink(&original, &self.reconciler, invariant, budget);
        let report = run_case(&case, &self.reconciler)?;
        Ok(Shrunk {
            original,
            case,
            report,
        })
    }

    /// A case as a replayable failure file: this campaign's reconciler, expecting exactly what
    /// `violated` lists.
    pub fn failure_files(&self, case: &Case, violated: &[String], note: &str) -> ScenarioFiles {
        case.files(Some(&self.reconciler.name), Some(violated), note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_a_function_of_campaign_seed_and_index() {
        assert_eq!(generate(7, 3), generate(7, 3));
        assert_ne!(generate(7, 3), generate(7, 4));
        assert_ne!(generate(7, 3), generate(8, 3));
    }

    #[test]
    fn shards_partition_the_case_indices() {
        for i in 0..100 {
            let owners = (0..3).filter(|s| in_shard(i, (*s, 3))).count();
            assert_eq!(owners, 1);
        }
    }

    #[test]
    fn every_generated_case_loads_as_a_scenario_and_its_file_reads_back() {
        for i in 0..50 {
            let c = generate(1, i);
            let files = c.files(Some("v0.4.1"), Some(&["availability".to_string()]), "");
            files
                .scenario(Path::new("c.yaml"))
                .unwrap_or_else(|e| panic!("case {i}: {e}"));
            let back = scenario::parse_spec("c.yaml", &files.yaml()).unwrap();
            assert_eq!(back, files.spec, "case {i}");
        }
    }

    #[test]
    fn a_disaggregated_case_is_the_lws_case_as_a_set_and_loads_as_a_scenario() {
        for i in 0..50 {
            let lws = generate(1, i);
            assert_eq!(generate_for(Workload::Lws, 1, i), lws);
            let c = generate_for(Workload::Disaggregated, 1, i);
            assert_eq!((c.replicas, c.size), (lws.replicas, lws.size), "case {i}");
            assert!(!c.broken_first_image);
            assert!(!c.steps.iter().any(|s| matches!(s, CaseStep::Scale(_))));
            let files = c.files(Some("v0.10.0"), Some(&["availability".to_string()]), "");
            let s = files
                .scenario(Path::new("c.yaml"))
                .unwrap_or_else(|e| panic!("case {i}: {e}"));
            assert_eq!(s.spec.manifests, ["v1.yaml"]);
            let back = scenario::parse_spec("c.yaml", &files.yaml()).unwrap();
            assert_eq!(back, files.spec, "case {i}");
        }
        assert_ne!(distribution_of(Workload::Disaggregated), distribution());
        assert_eq!(distribution_of(Workload::Lws), distribution());
    }

    #[test]
    fn a_campaign_hands_out_its_shard_in_batches() {
        let mut c = Campaign::new(1, Profile::parse("v0.4.1").unwrap(), (1, 3));
        assert_eq!(c.next_batch(3), vec![1, 4, 7]);
        assert_eq!(c.next_batch(2), vec![10, 13]);
    }

    #[test]
    fn a_shard_ends_at_the_last_index_instead_of_wrapping() {
        let v = Profile::parse("v0.4.1").unwrap();
        let mut c = Campaign::new(1, v.clone(), (0, u64::MAX));
        assert_eq!(c.next_batch(3), vec![0, u64::MAX]);
        assert!(c.next_batch(3).is_empty());
        let mut c = Campaign::new(1, v, (u64::MAX - 1, u64::MAX));
        assert_eq!(c.next_batch(3), vec![u64::MAX - 1]);
        assert!(c.exhausted());
    }
}
