//! Systematic perturbation of one scenario's reference run, Sieve's three patterns plus ours:
//! crash the controller right after each of its writes (intermediate state); hold back each
//! watch event to the controller until the next one of the same object (unobserved state);
//! serve each reconcile's reads from the previous version of every object (stale state); fire a
//! resync right after each reconcile finishes (resync timing). Each perturbation is the
//! reference scenario with one extra first step (`killController: {afterWrites: k}`,
//! `holdWatchEvent: {nth: k}`, `staleRead: {atReconcile: k}`, `resync: {afterReconciles: k}`),
//! so a finding is an ordinary, replayable scenario: the reference spec with that step inserted
//! (`perturbed_spec`), which `main.rs` writes out. The perturbed runs are independent: a `Plan`
//! hands them out one by one and takes their outcomes back in any order, so the CLI spreads them
//! over threads (`--jobs`) without changing what is found.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use lws::profile::Profile;
use serde_json::Value;

use crate::scenario::spec::{
    Expectation, HoldSpec, KillSpec, ResyncSpec, ScenarioSpec, StaleSpec, StepSpec,
};
use crate::scenario::{self, is_inline_block, RunError, RunReport, Scenario};

/// One perturbation: which kind and at which point of the reference run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Perturbation {
    KillAfterWrite(u64),
    HoldWatchEvent(u64),
    StaleRead(u64),
    ResyncAfterReconcile(u64),
}

impl Perturbation {
    /// Every `cause` name (the second half of a finding's file name).
    pub const CAUSES: [&'static str; 4] = [
        "kill-after-write",
        "unobserved-state",
        "stale-state",
        "resync-after-reconcile",
    ];

    pub fn cause(&self) -> &'static str {
        match self {
            Perturbation::KillAfterWrite(_) => "kill-after-write",
            Perturbation::HoldWatchEvent(_) => "unobserved-state",
            Perturbation::StaleRead(_) => "stale-state",
            Perturbation::ResyncAfterReconcile(_) => "resync-after-reconcile",
        }
    }

    /// Which write, watch event or reconcile of the reference run it hits.
    pub fn point(&self) -> u64 {
        match *self {
            Perturbation::KillAfterWrite(k)
            | Perturbation::HoldWatchEvent(k)
            | Perturbation::StaleRead(k)
            | Perturbation::ResyncAfterReconcile(k) => k,
        }
    }

    /// The extra first step.
    pub fn step(&self) -> StepSpec {
        match *self {
            Perturbation::KillAfterWrite(k) => StepSpec::KillController(KillSpec {
                after_writes: Some(k),
            }),
            Perturbation::HoldWatchEvent(k) => StepSpec::HoldWatchEvent(HoldSpec { nth: k }),
            Perturbation::StaleRead(k) => StepSpec::StaleRead(StaleSpec { at_reconcile: k }),
            Perturbation::ResyncAfterReconcile(k) => StepSpec::Resync(ResyncSpec {
                after_reconciles: Some(k),
            }),
        }
    }

    /// The extra first step as one line of flow YAML, for reports.
    pub fn yaml(&self) -> String {
        match *self {
            Perturbation::KillAfterWrite(k) => format!("killController: {{afterWrites: {k}}}"),
            Perturbation::HoldWatchEvent(k) => format!("holdWatchEvent: {{nth: {k}}}"),
            Perturbation::StaleRead(k) => format!("staleRead: {{atReconcile: {k}}}"),
            Perturbation::ResyncAfterReconcile(k) => format!("resync: {{afterReconciles: {k}}}"),
        }
    }
}

/// A perturbation that broke an invariant the reference run kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub perturbation: Perturbation,
    pub new: BTreeSet<String>,
    pub trace_hash: u64,
}

pub struct Exploration {
    pub reference: RunReport,
    pub tried: usize,
    pub findings: Vec<Finding>,
}

impl Exploration {
    /// The first finding per distinct (invariant, cause).
    pub fn distinct(&self) -> BTreeMap<(String, &'static str), &Finding> {
        let mut out = BTreeMap::new();
        for f in &self.findings {
            for inv in &f.new {
                out.entry((inv.clone(), f.perturbation.cause()))
                    .or_insert(f);
            }
        }
        out
    }
}

/// At most `max_each` points of `total`, spread over them.
fn points(total: u64, max_each: u64) -> Vec<u64> {
    if total <= max_each {
        (1..=total).collect()
    } else {
        (0..max_each).map(|i| 1 + i * total / max_each).collect()
    }
}

/// A kind of perturbation: how many points the reference run offers, and the perturbation at one.
type Kind = (u64, fn(u64) -> Perturbation);

/// Every perturbation to try after `reference`: at most `max_each` of each kind.
fn perturbations(reference: &RunReport, max_each: u64) -> Vec<Perturbation> {
    let kinds: [Kind; 4] = [
        (reference.controller_writes, Perturbation::KillAfterWrite),
        (reference.controller_events, Perturbation::HoldWatchEvent),
        (reference.controller_reconciles, Perturbation::StaleRead),
        (
            reference.controller_reconciles,
            Perturbation::ResyncAfterReconcile,
        ),
    ];
    kinds
        .into_iter()
        .flat_map(|(total, p)| points(total, max_each).into_iter().map(p))
        .collect()
}

/// Run `s` once, then once per perturbation point (at most `max_each` of each kind, spread over
/// the reference run).
pub fn explore(s: &Scenario, reconciler: &Profile, max_each: u64) -> Result<Exploration, RunError> {
    explore_with_progress(s, reconciler, max_each, &mut |_, _| {})
}

/// [`explore`], calling `progress(done, total)` before each perturbed run and once at the end.
pub fn explore_with_progress(
    s: &Scenario,
    reconciler: &Profile,
    max_each: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Exploration, RunError> {
    let plan = Plan::new(s, reconciler, max_each)?;
    let total = plan.perturbations.len();
    let mut outcomes = Vec::with_capacity(total);
    for i in 0..total {
        progress(i, total);
        let outcome = plan.try_one(i);
        let failed = outcome.1.is_err();
        outcomes.push(outcome);
        if failed {
            break;
        }
    }
    progress(total, total);
    plan.finish(outcomes)
}

/// What one perturbed run found: its index among the plan's perturbations, and a finding if
/// it broke an invariant the reference run kept.
pub type Outcome = (usize, Result<Option<Finding>, RunError>);

/// An exploration split into independent runs, so a caller may spread them over threads (the
/// CLI's `--jobs`): the reference run and the perturbations it offers; `try_one` runs one
/// perturbation (a whole run, sharing nothing); `finish` puts the outcomes back in perturbation
/// order, whatever order they came in, so how runs were spread never changes the result.
pub struct Plan<'a> {
    scenario: &'a Scenario,
    reconciler: &'a Profile,
    pub reference: RunReport,
    base: BTreeSet<String>,
    /// Every perturbation to try, in order.
    pub perturbations: Vec<Perturbation>,
}

impl<'a> Plan<'a> {
    /// Run the reference and list the perturbations: at most `max_each` of each kind.
    pub fn new(s: &'a Scenario, reconciler: &'a Profile, max_each: u64) -> Result<Self, RunError> {
        let reference = scenario::run_with(s, reconciler, None)?;
        Ok(Plan {
            scenario: s,
            reconciler,
            base: reference.violated(),
            perturbations: perturbations(&reference, max_each),
            reference,
        })
    }

    /// Run perturbation `i` (an index into `perturbations`).
    pub fn try_one(&self, i: usize) -> Outcome {
        let s = self.scenario;
        let p = self.perturbations[i];
        let all: Vec<usize> = (0..s.steps.len()).collect();
        let found = scenario::run_with(&perturbed(s, p, &all), self.reconciler, None).map(|r| {
            let new: BTreeSet<String> = r.violated().difference(&self.base).cloned().collect();
            (!new.is_empty()).then_some(Finding {
                perturbation: p,
                new,
                trace_hash: r.trace_hash,
            })
        });
        (i, found)
    }

    /// The exploration from one outcome per perturbation, in any order; or the first error in
    /// perturbation order (the outcomes up to it suffice).
    pub fn finish(self, mut outcomes: Vec<Outcome>) -> Result<Exploration, RunError> {
        outcomes.sort_by_key(|(i, _)| *i);
        let total = outcomes.len();
        let mut findings = Vec::new();
        for (n, (i, found)) in outcomes.into_iter().enumerate() {
            assert_eq!(i, n, "one outcome per perturbation");
            findings.extend(found?);
        }
        assert_eq!(
            total,
            self.perturbations.len(),
            "one outcome per perturbation"
        );
        Ok(Exploration {
            reference: self.reference,
            tried: self.perturbations.len(),
            findings,
        })
    }
}

/// `s` with the perturbation as its first step and only the original steps in `keep`.
pub fn perturbed(s: &Scenario, p: Perturbation, keep: &[usize]) -> Scenario {
    let mut out = s.clone();
    out.keep_steps(keep);
    out.insert_step(0, p.step())
        .expect("a perturbation step names no file");
    out
}

/// Greedy minimization of a finding: drop original steps, last first, while the perturbed run
/// still breaks `invariant` and the same steps without the perturbation still keep it (what
/// made it a finding). Without the second test a scenario verdict (`timeout`, `check`) is
/// "reproduced" by dropping the step that makes its condition reachable: the rollout's `apply`
/// before a `waitFor` of the new revision. Returns the indices of the steps kept and the final
/// run.
pub fn minimize(
    s: &Scenario,
    p: Perturbation,
    reconciler: &Profile,
    invariant: &str,
) -> Result<(Vec<usize>, RunReport), RunError> {
    let mut keep: Vec<usize> = (0..s.steps.len()).collect();
    let mut last = scenario::run_with(&perturbed(s, p, &keep), reconciler, None)?;
    for i in (0..s.steps.len()).rev() {
        let fewer: Vec<usize> = keep.iter().copied().filter(|&k| k != i).collect();
        let r = scenario::run_with(&perturbed(s, p, &fewer), reconciler, None)?;
        if !r.violated().contains(invariant) {
            continue;
        }
        let mut unperturbed = s.clone();
        unperturbed.keep_steps(&fewer);
        let reference = scenario::run_with(&unperturbed, reconciler, None)?;
        if !reference.violated().contains(invariant) {
            keep = fewer;
            last = r;
        }
    }
    Ok((keep, last))
}

/// The finding as a scenario spec: the perturbation as first step, only the original steps in
/// `keep` (indices into `steps`), the reconciler set, and `expect` set to what the perturbed run
/// broke. Manifest paths are joined to `dir` (the scenario file's directory; absolute, so the
/// file replays from anywhere).
pub fn perturbed_spec(
    s: &Scenario,
    p: Perturbation,
    keep: &[usize],
    reconciler: &str,
    violated: &[String],
    dir: &Path,
) -> ScenarioSpec {
    let mut spec = perturbed(s, p, keep).spec;
    let rebase = |m: &str| dir.join(m).display().to_string();
    spec.manifests = spec.manifests.iter().map(|m| rebase(m)).collect();
    for step in &mut spec.steps {
        let step = match step {
            StepSpec::Rejected { step, .. } => &mut **step,
            step => step,
        };
        // A file's name is rebased; a manifest written inline (`apply: |`) is kept as it is.
        if let StepSpec::Apply(Value::String(path)) = step {
            if !is_inline_block(path) {
                *path = rebase(path);
            }
        }
    }
    spec.controller.reconciler = Some(reconciler.to_string());
    spec.expect = BTreeMap::from([(
        reconciler.to_string(),
        Expectation::Violates(violated.to_vec()),
    )]);
    spec
}
