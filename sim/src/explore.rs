//! Systematic perturbation of one scenario's reference run, Sieve's three patterns plus ours:
//! crash the controller right after each of its writes (intermediate state); hold back each
//! watch event to the controller until the next one of the same object (unobserved state);
//! serve each reconcile's reads from the previous version of every object (stale state); fire a
//! resync right after each reconcile finishes (resync timing). Each perturbation is the
//! reference scenario with one extra first step (`killController: {afterWrites: k}`,
//! `holdWatchEvent: {nth: k}`, `staleRead: {atReconcile: k}`, `resync: {afterReconciles: k}`),
//! so a finding is an ordinary, replayable scenario.

use std::collections::{BTreeMap, BTreeSet};

use crate::scenario::{self, RunError, RunReport, Scenario, Step};

/// One perturbation: which kind and at which point of the reference run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Perturbation {
    KillAfterWrite(u64),
    HoldWatchEvent(u64),
    StaleRead(u64),
    ResyncAfterReconcile(u64),
}

impl Perturbation {
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

    fn step(&self) -> Step {
        match *self {
            Perturbation::KillAfterWrite(k) => Step::KillController {
                after_writes: Some(k),
            },
            Perturbation::HoldWatchEvent(k) => Step::HoldWatchEvent(k),
            Perturbation::StaleRead(k) => Step::StaleRead(k),
            Perturbation::ResyncAfterReconcile(k) => Step::Resync {
                after_reconciles: Some(k),
            },
        }
    }

    /// The extra first step, as YAML.
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
#[derive(Clone, Debug)]
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

/// Run `s` once, then once per perturbation point (at most `max_each` of each kind, spread over
/// the reference run).
pub fn explore(s: &Scenario, reconciler: &str, max_each: u64) -> Result<Exploration, RunError> {
    let reference = scenario::run(s, Some(reconciler), None)?;
    let base = reference.violated();
    let points = |total: u64| -> Vec<u64> {
        if total <= max_each {
            (1..=total).collect()
        } else {
            (0..max_each).map(|i| 1 + i * total / max_each).collect()
        }
    };
    let mut perturbations: Vec<Perturbation> = points(reference.controller_writes)
        .into_iter()
        .map(Perturbation::KillAfterWrite)
        .collect();
    perturbations.extend(
        points(reference.controller_events)
            .into_iter()
            .map(Perturbation::HoldWatchEvent),
    );
    perturbations.extend(
        points(reference.controller_reconciles)
            .into_iter()
            .map(Perturbation::StaleRead),
    );
    perturbations.extend(
        points(reference.controller_reconciles)
            .into_iter()
            .map(Perturbation::ResyncAfterReconcile),
    );
    let mut findings = Vec::new();
    for p in &perturbations {
        let mut perturbed = s.clone();
        perturbed.steps.insert(0, p.step());
        let r = scenario::run(&perturbed, Some(reconciler), None)?;
        let new: BTreeSet<String> = r.violated().difference(&base).cloned().collect();
        if !new.is_empty() {
            findings.push(Finding {
                perturbation: *p,
                new,
                trace_hash: r.trace_hash,
            });
        }
    }
    Ok(Exploration {
        reference,
        tried: perturbations.len(),
        findings,
    })
}

/// `s` with the perturbation as its first step and only the original steps in `keep`.
pub fn perturbed(s: &Scenario, p: Perturbation, keep: &[usize]) -> Scenario {
    let mut out = s.clone();
    out.steps = std::iter::once(p.step())
        .chain(keep.iter().map(|&i| s.steps[i].clone()))
        .collect();
    out
}

/// Greedy minimization of a finding: drop original steps, last first, while the perturbed run
/// still breaks `invariant`. Returns the indices of the steps kept and the final run.
pub fn minimize(
    s: &Scenario,
    p: Perturbation,
    reconciler: &str,
    invariant: &str,
) -> Result<(Vec<usize>, RunReport), RunError> {
    let mut keep: Vec<usize> = (0..s.steps.len()).collect();
    let mut last = scenario::run(&perturbed(s, p, &keep), Some(reconciler), None)?;
    for i in (0..s.steps.len()).rev() {
        let fewer: Vec<usize> = keep.iter().copied().filter(|&k| k != i).collect();
        let r = scenario::run(&perturbed(s, p, &fewer), Some(reconciler), None)?;
        if r.violated().contains(invariant) {
            keep = fewer;
            last = r;
        }
    }
    Ok((keep, last))
}

/// The scenario file text with the perturbation as first step, only the original steps in
/// `keep` (indices into the file's `steps`), and `expect` set to what the perturbed run broke.
/// Paths are made absolute so the file replays from anywhere.
pub fn perturbed_text(
    s: &Scenario,
    original: &str,
    p: Perturbation,
    keep: &[usize],
    reconciler: &str,
    violated: &[String],
) -> String {
    let dir = s
        .path
        .parent()
        .map(|d| d.canonicalize().unwrap_or(d.to_path_buf()))
        .unwrap_or_default();
    let mut out = String::new();
    let mut in_expect = false;
    let mut in_steps = false;
    // The index of the step item the current line belongs to, while in `steps:`.
    let mut step: Option<usize> = None;
    for line in original.lines() {
        if line.starts_with("expect:") {
            in_expect = true;
            continue;
        }
        if in_expect {
            if line.starts_with(' ') || line.trim().is_empty() {
                continue;
            }
            in_expect = false;
        }
        if in_steps && !line.starts_with(' ') && !line.trim().is_empty() {
            in_steps = false;
        }
        if in_steps {
            if line.trim_start().starts_with("- ") && !line.starts_with("    ") {
                step = Some(step.map_or(0, |i| i + 1));
            }
            if step.is_some_and(|i| !keep.contains(&i)) {
                continue;
            }
        }
        let mut line = line.to_string();
        if let Some(rest) = line.trim_start().strip_prefix("reconciler:") {
            line = line.replace(rest, &format!(" {reconciler}"));
        }
        for m in &s.spec.manifests {
            line = line.replace(m.as_str(), &dir.join(m).display().to_string());
        }
        if let Some(rest) = line.trim_start().strip_prefix("- apply: ") {
            if !rest.starts_with('/') && !rest.starts_with('{') {
                line = line.replace(rest, &dir.join(rest).display().to_string());
            }
        }
        out.push_str(&line);
        out.push('\n');
        if line.trim_end() == "steps:" {
            in_steps = true;
            out.push_str(&format!("  - {}\n", p.yaml()));
        }
    }
    out.push_str(&format!(
        "expect:\n  {reconciler}: {{violates: [{}]}}\n",
        violated.join(", ")
    ));
    out
}
