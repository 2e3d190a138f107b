//! `lws-sim sweep`: a race answered as a distribution. One scenario run over a grid of one or
//! two timing (or count) parameters of its `cluster`/`controller` sections, K seeds per grid
//! point; per point, the fraction of seeds breaking each invariant, the least availability any
//! seed saw, and the fraction that completed the rollout (README, "Sweeps").
//!
//! Parameters are set on the typed `ScenarioSpec` (never on the file's text). Each run is as
//! deterministic as `lws-sim run`, and runs are collected in (point, seed) order, so `--jobs`
//! never changes the result.

use std::collections::{BTreeMap, BTreeSet};

use lws::profile::Profile;

use crate::invariants;
use crate::scenario::spec::{
    parse_duration, within_horizon, Duration, Expectation, Range, ScenarioSpec,
};
use crate::scenario::{self, RunError, RunOptions, RunReport, Scenario};

/// What kind of value a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A `lo..hi` range the world draws from uniformly; a grid point `p` sets it to
    /// `p - p/10 .. p + p/10` (a narrow range around the point, so seeds still differ).
    Range,
    /// A single duration.
    Duration,
    /// A whole number.
    Count,
}

/// The fields a sweep can vary: every numeric or duration field of `cluster` and `controller`.
/// Runs of one sweep (grid points times seeds): each run's outcome is held until the table is
/// drawn, so a grid of 10,000 points at 100,000 seeds (10^9 runs) grew memory by gigabytes
/// in seconds; a million runs is hours of work on one core.
pub const SWEEP_RUNS_MAX: u64 = 1_000_000;

pub const FIELDS: [(&str, FieldKind); 12] = [
    ("cluster.podStartup", FieldKind::Range),
    ("cluster.podTermination", FieldKind::Range),
    ("cluster.watchLag", FieldKind::Range),
    ("cluster.gcLag", FieldKind::Range),
    ("cluster.nodeDeleteDelay", FieldKind::Duration),
    ("cluster.nodeJoinDelay", FieldKind::Duration),
    ("cluster.nodes.count", FieldKind::Count),
    ("cluster.nodes.podsPerNode", FieldKind::Count),
    ("controller.syncPeriod", FieldKind::Duration),
    ("controller.apiLatency", FieldKind::Range),
    ("controller.watchLag", FieldKind::Range),
    ("controller.restartDelay", FieldKind::Range),
];

/// One `--vary PATH=LO..HI`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub path: String,
    pub kind: FieldKind,
    pub lo: u64,
    pub hi: u64,
}

impl Param {
    /// `PATH=LO..HI`: durations (`1ms..1s`) for duration and range fields, whole numbers for
    /// counts.
    pub fn parse(s: &str) -> Result<Param, String> {
        let (path, range) = s
            .split_once('=')
            .ok_or_else(|| format!("expected PATH=LO..HI, got {s:?}"))?;
        let kind = FIELDS
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = FIELDS.iter().map(|(p, _)| *p).collect();
                format!("unknown field {path:?}; one of {}", names.join(", "))
            })?;
        let (a, b) = range
            .split_once("..")
            .ok_or_else(|| format!("{path}: expected LO..HI, got {range:?}"))?;
        let value = |v: &str| match kind {
            FieldKind::Count => v
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{path}: {v:?} is not a whole number")),
            _ => parse_duration(v).and_then(|ms| within_horizon(v, ms)),
        };
        let (lo, hi) = (value(a)?, value(b)?);
        if lo > hi {
            return Err(format!("{path}: the lower bound exceeds the upper"));
        }
        // A range field runs each grid point as `p ± p/10` (`narrow_range`): its top must be
        // within the horizon too, as the loader holds a range written in the file.
        let top = narrow_range(hi).1;
        if kind == FieldKind::Range {
            within_horizon(
                &format!("{b} (+10%: {})", crate::time::duration_text(top)),
                top,
            )
            .map_err(|e| format!("{path}: {e}"))?;
        }
        Ok(Param {
            path: path.to_string(),
            kind,
            lo,
            hi,
        })
    }

    /// `steps` points from `lo` to `hi`: log-spaced when the range spans more than 10x,
    /// linear otherwise; rounded to whole units, duplicates dropped.
    pub fn grid(&self, steps: u32) -> Vec<u64> {
        let (lo, hi) = (self.lo, self.hi);
        if steps <= 1 || lo == hi {
            return vec![lo];
        }
        let n = f64::from(steps - 1);
        let log = lo > 0 && hi as f64 / lo as f64 > 10.0;
        let mut out: Vec<u64> = (0..steps)
            .map(|i| {
                let t = f64::from(i) / n;
                let v = if log {
                    (lo as f64).ln() + t * ((hi as f64).ln() - (lo as f64).ln())
                } else {
                    lo as f64 + t * (hi as f64 - lo as f64)
                };
                let v = if log { v.exp() } else { v };
                (v.round() as u64).clamp(lo, hi)
            })
            .collect();
        out.dedup();
        out
    }

    /// A grid value as the file would write it.
    pub fn text(&self, v: u64) -> String {
        match self.kind {
            FieldKind::Count => v.to_string(),
            _ => crate::time::duration_text(v),
        }
    }
}

/// The range a grid point `p` gives a range field: `p ± p/10`.
pub fn narrow_range(p: u64) -> Range {
    Range(p - p / 10, p + p / 10)
}

/// Set `path` to the grid value `v` in `spec`.
pub fn set_field(spec: &mut ScenarioSpec, path: &str, v: u64) -> Result<(), String> {
    let (c, k) = (&mut spec.cluster, &mut spec.controller);
    let count = || u32::try_from(v).map_err(|_| format!("{path}: {v} is too large"));
    match path {
        "cluster.podStartup" => c.pod_startup = Some(narrow_range(v)),
        "cluster.podTermination" => c.pod_termination = Some(narrow_range(v)),
        "cluster.watchLag" => c.watch_lag = Some(narrow_range(v)),
        "cluster.gcLag" => c.gc_lag = Some(narrow_range(v)),
        "cluster.nodeDeleteDelay" => c.node_delete_delay = Some(Duration(v)),
        "cluster.nodeJoinDelay" => c.node_join_delay = Some(Duration(v)),
        "cluster.nodes.count" => {
            c.nodes.get_or_insert_with(Default::default).count = Some(count()?)
        }
        "cluster.nodes.podsPerNode" => {
            c.nodes.get_or_insert_with(Default::default).pods_per_node = Some(count()?)
        }
        "controller.syncPeriod" => k.sync_period = Some(Duration(v)),
        "controller.apiLatency" => k.api_latency = Some(narrow_range(v)),
        "controller.watchLag" => k.watch_lag = Some(narrow_range(v)),
        "controller.restartDelay" => k.restart_delay = Some(narrow_range(v)),
        _ => return Err(format!("unknown field {path:?}")),
    }
    Ok(())
}

/// A sweep: the scenario, the reconciler, one or two parameters, grid steps and seeds.
pub struct Sweep {
    pub scenario: Scenario,
    pub profile: Profile,
    pub params: Vec<Param>,
    pub steps: u32,
    pub seeds: u64,
}

/// What one seed did at one grid point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedOutcome {
    pub seed: u64,
    pub violated: Vec<String>,
    pub min_available: Option<i32>,
    pub completed: bool,
    pub trace_hash: u64,
}

/// One grid point's results.
#[derive(Clone, Debug, PartialEq)]
pub struct PointResult {
    /// (field path, grid value) per parameter.
    pub values: Vec<(String, u64)>,
    pub runs: Vec<SeedOutcome>,
}

impl PointResult {
    /// For each invariant broken by some seed: the fraction of seeds that broke it.
    pub fn rates(&self) -> BTreeMap<String, f64> {
        let mut n: BTreeMap<String, usize> = BTreeMap::new();
        for r in &self.runs {
            for v in &r.violated {
                *n.entry(v.clone()).or_default() += 1;
            }
        }
        let total = self.runs.len().max(1) as f64;
        n.into_iter().map(|(k, c)| (k, c as f64 / total)).collect()
    }

    /// The least number of available groups any seed saw.
    pub fn min_available(&self) -> Option<i32> {
        self.runs.iter().filter_map(|r| r.min_available).min()
    }

    /// The fraction of seeds that completed the rollout.
    pub fn completed(&self) -> f64 {
        let done = self.runs.iter().filter(|r| r.completed).count();
        done as f64 / self.runs.len().max(1) as f64
    }

    pub fn json(&self, params: &[Param]) -> serde_json::Value {
        let values: serde_json::Map<String, serde_json::Value> = self
            .values
            .iter()
            .zip(params)
            .map(|((path, v), p)| {
                let text = p.text(*v);
                (path.clone(), serde_json::json!({"value": v, "text": text}))
            })
            .collect();
        serde_json::json!({
            "point": values,
            "seeds": self.runs.len(),
            "violation_rates": self.rates(),
            "min_available": self.min_available(),
            "completed": self.completed(),
            "runs": self.runs.iter().map(|r| serde_json::json!({
                "seed": r.seed, "violated": r.violated, "min_available": r.min_available,
                "completed": r.completed, "trace_hash": format!("{:016x}", r.trace_hash),
            })).collect::<Vec<_>>(),
        })
    }
}

/// Did the run complete its rollout: no convergence verdict (nor a run limit) against it.
/// A scenario that does not select `convergence` never counts as complete.
pub fn completed(s: &Scenario, r: &RunReport) -> bool {
    let v = r.violated();
    s.invariants
        .iter()
        .any(|i| i == invariants::CONVERGENCE.as_str())
        && !v.contains(invariants::CONVERGENCE.as_str())
        && !v.contains(invariants::LIVENESS.as_str())
}

impl Sweep {
    /// Every grid point: the cross product of the parameters' grids, first parameter outer.
    pub fn points(&self) -> Vec<Vec<u64>> {
        let mut points: Vec<Vec<u64>> = vec![Vec::new()];
        for p in &self.params {
            let grid = p.grid(self.steps);
            points = points
                .into_iter()
                .flat_map(|pt| {
                    grid.iter().map(move |v| {
                        let mut pt = pt.clone();
                        pt.push(*v);
                        pt
                    })
                })
                .collect();
        }
        points
    }

    /// The seeds of every point: the file's seed (default 1) and the next `seeds - 1`.
    /// (`seeds_of`: the caller checked it first.)
    pub fn seed_list(&self) -> Vec<u64> {
        seeds_of(&self.scenario, self.seeds).expect("checked by seeds_of before the sweep")
    }

    /// The scenario with one grid point's values set.
    pub fn at(&self, point: &[u64]) -> Result<Scenario, String> {
        let mut s = self.scenario.clone();
        for (p, v) in self.params.iter().zip(point) {
            set_field(&mut s.spec, &p.path, *v)
                .map_err(|m| self.blame_vary(point, &m).unwrap_or(m))?;
        }
        // The limits a file with these values would meet at load (README, "Limits"); a value
        // the grid set is blamed on its `--vary`, not on a line of the file.
        let file = s.path.display().to_string();
        scenario::targets::check_scenario(&file, &s.lines, &s.spec, &s.manifests, &s.steps)
            .map_err(|e| self.blame_vary(point, &e.message).unwrap_or(e.to_string()))?;
        s.cluster_config()
            .map_err(|m| self.blame_vary(point, &m).unwrap_or(m))?;
        Ok(s)
    }

    /// An error about a field the grid sets, worded as the `--vary` that set it.
    fn blame_vary(&self, point: &[u64], message: &str) -> Option<String> {
        let (p, v) = self
            .params
            .iter()
            .zip(point)
            .find(|(p, _)| message.starts_with(&format!("{}:", p.path)))?;
        Some(format!(
            "--vary {}: at the grid value {}: {message}",
            p.path,
            p.text(*v)
        ))
    }

    /// Every run of the sweep, in (point, seed) order: the scenario of each point, and the
    /// (point index, seed) pairs.
    pub fn tasks(&self) -> Result<(Vec<Scenario>, Vec<Task>), RunError> {
        let scenarios: Vec<Scenario> = self
            .points()
            .iter()
            .map(|p| self.at(p))
            .collect::<Result<_, _>>()
            .map_err(RunError)?;
        let seeds = self.seed_list();
        let tasks = (0..scenarios.len())
            .flat_map(|point| seeds.iter().map(move |&seed| Task { point, seed }))
            .collect();
        Ok((scenarios, tasks))
    }

    /// One run: `task`'s seed in its point's scenario.
    pub fn run_task(&self, scenarios: &[Scenario], task: Task) -> Result<SeedOutcome, RunError> {
        let s = &scenarios[task.point];
        let opts = RunOptions {
            seed: Some(task.seed),
            timeline: false,
            progress: None,
        };
        let r = scenario::run_with_options(s, &self.profile, opts)?;
        Ok(SeedOutcome {
            seed: task.seed,
            violated: r.violated().into_iter().collect(),
            min_available: r.min_available,
            completed: completed(s, &r),
            trace_hash: r.trace_hash,
        })
    }

    /// The results per point from the runs, in whatever order they finished (the CLI runs
    /// tasks over `--jobs` threads): sorted back into (point, seed) order.
    pub fn collect(&self, mut done: Vec<(Task, SeedOutcome)>) -> Vec<PointResult> {
        done.sort_by_key(|(t, _)| (t.point, t.seed));
        let mut out: Vec<PointResult> = self
            .points()
            .iter()
            .map(|pt| PointResult {
                values: self
                    .params
                    .iter()
                    .zip(pt)
                    .map(|(p, v)| (p.path.clone(), *v))
                    .collect(),
                runs: Vec::new(),
            })
            .collect();
        for (t, o) in done {
            out[t.point].runs.push(o);
        }
        out
    }

    /// Every run, one after another.
    pub fn run(&self) -> Result<Vec<PointResult>, RunError> {
        let (scenarios, tasks) = self.tasks()?;
        let done = tasks
            .into_iter()
            .map(|t| self.run_task(&scenarios, t).map(|o| (t, o)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.collect(done))
    }
}

/// One run of a sweep: a grid point (index into [`Sweep::points`]) and a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub point: usize,
    pub seed: u64,
}

/// The table `sweep` prints: one row per grid point; a column per parameter, per invariant
/// any seed broke (the fraction of seeds), min available and completed.
pub fn table(params: &[Param], results: &[PointResult]) -> Vec<String> {
    let mut invs: Vec<String> = results.iter().flat_map(|r| r.rates().into_keys()).collect();
    invs.sort();
    invs.dedup();
    let mut rows: Vec<Vec<String>> = vec![params
        .iter()
        .map(|p| p.path.clone())
        .chain(invs.iter().cloned())
        .chain(["minAvailable".to_string(), "completed".to_string()])
        .collect()];
    for r in results {
        let rates = r.rates();
        let pct = |f: f64| format!("{:.0}%", f * 100.0);
        rows.push(
            params
                .iter()
                .zip(&r.values)
                .map(|(p, (_, v))| p.text(*v))
                .chain(
                    invs.iter()
                        .map(|i| pct(rates.get(i).copied().unwrap_or(0.0))),
                )
                .chain([
                    r.min_available()
                        .map_or_else(|| "-".to_string(), |m| m.to_string()),
                    pct(r.completed()),
                ])
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:>w$}"))
                .collect();
            cells.join("  ")
        })
        .collect()
}

/// The seeds `check --seeds N` runs: the file's seed (default 1) and the next `n - 1`, so
/// `1..=N` for a file without one; the same seeds a sweep runs at each point.
/// `Err` when the last would pass `u64::MAX` (a file's seed near it): no silent wrap-around.
pub fn seeds_of(s: &Scenario, n: u64) -> Result<Vec<u64>, String> {
    let base = s.spec.seed.unwrap_or(1);
    if n > 0 && base.checked_add(n - 1).is_none() {
        return Err(format!(
            "{}: seed: {base} and the next {} seeds pass the largest seed, {}",
            s.path.display(),
            n - 1,
            u64::MAX
        ));
    }
    Ok((0..n).map(|i| base + i).collect())
}

/// One expectation judged over many seeds (`check --seeds`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedsVerdict {
    pub ok: bool,
    /// `holds in all 10`, `violates a,b in all 10`, or each outcome's share:
    /// `violates a in 4/10 (40%), holds in 6/10 (60%)`.
    pub observed: String,
    /// Seeds whose outcome the expectation does not allow (a flip, for `holds`/`violates`).
    pub disagreeing: Vec<u64>,
    /// Seeds that broke exactly the expected set (for `holds`, seeds that held).
    pub matching: usize,
}

fn outcome_text(v: &BTreeSet<String>) -> String {
    if v.is_empty() {
        "holds".into()
    } else {
        format!(
            "violates {}",
            v.iter().cloned().collect::<Vec<_>>().join(",")
        )
    }
}

/// Judge `expected` over `(seed, invariants broken)` per seed. `holds` and `violates` must be
/// met by every seed; a rate by every seed holding or breaking exactly its set, with the
/// fraction breaking it in the range.
pub fn judge_seeds(expected: &Expectation, outcomes: &[(u64, BTreeSet<String>)]) -> SeedsVerdict {
    let want: BTreeSet<String> = expected.invariants().iter().cloned().collect();
    let n = outcomes.len();
    let matching = outcomes.iter().filter(|(_, g)| *g == want).count();
    let allowed = |g: &BTreeSet<String>| match expected {
        Expectation::Rate(..) => g.is_empty() || *g == want,
        _ => *g == want,
    };
    let disagreeing: Vec<u64> = outcomes
        .iter()
        .filter(|(_, g)| !allowed(g))
        .map(|(s, _)| *s)
        .collect();
    let in_range = match expected {
        Expectation::Rate(_, lo, hi) => {
            let pct = matching * 100;
            pct >= *lo as usize * n && pct <= *hi as usize * n
        }
        _ => true,
    };
    let mut by: BTreeMap<BTreeSet<String>, usize> = BTreeMap::new();
    for (_, g) in outcomes {
        *by.entry(g.clone()).or_default() += 1;
    }
    let observed = match by.len() {
        1 => {
            let only = by.keys().next().expect("one outcome");
            format!("{} in all {n}", outcome_text(only))
        }
        _ => {
            let mut shares: Vec<(&BTreeSet<String>, usize)> =
                by.iter().map(|(g, c)| (g, *c)).collect();
            shares.sort_by_key(|s| std::cmp::Reverse(s.1));
            shares
                .iter()
                .map(|(g, c)| {
                    format!(
                        "{} in {c}/{n} ({:.0}%)",
                        outcome_text(g),
                        *c as f64 * 100.0 / n.max(1) as f64
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    SeedsVerdict {
        ok: n > 0 && disagreeing.is_empty() && in_range,
        observed,
        disagreeing,
        matching,
    }
}

/// Run `s` under `profile` at each of `seeds`: the invariants each broke.
pub fn outcomes(
    s: &Scenario,
    profile: &Profile,
    seeds: &[u64],
) -> Result<Vec<(u64, BTreeSet<String>)>, RunError> {
    seeds
        .iter()
        .map(|&seed| scenario::run_with(s, profile, Some(seed)).map(|r| (seed, r.violated())))
        .collect()
}
