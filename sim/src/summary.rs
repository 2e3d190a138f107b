//! A fuzz campaign's summary (`summary.json` in its `--out` directory) and the merge of sharded
//! campaigns' summaries (`lws-sim fuzz merge`).
//!
//! The summary records what the printed summary says and what a merge needs: the campaign (lws-sim
//! version, case distribution, reconciler, seed), which shard of how many ran how many cases (shard
//! `I` of `N` runs cases `I`, `I + N`, ... in order, so a count says which), every failing case
//! with the invariants it broke, the cases that could not run, and for each invariant the
//! minimized scenario directory written from the first case that broke it. It holds nothing that
//! depends on the wall clock or on `--jobs`, so the same campaign writes the same bytes.
//!
//! Shards of one campaign partition its cases, and shrinking is a function of the case, so a
//! merge needs no run: the failures are the union, the first case of each invariant is the least
//! over the shards, and its minimized directory is the one the shard holding that case wrote.
//! When the shards together ran cases `0..M` (as `--cases` split over them does), the merged
//! summary is the one an unsharded campaign of `M` cases writes, byte for byte. Files are
//! `main.rs`'s: this module only compares and combines.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fuzz::{self, Campaign, CaseResult};

/// The version of `summary.json`'s layout; a merge refuses any other.
pub const FORMAT: u32 = 1;

/// The summary's file name in a fuzz `--out` directory.
pub const FILE: &str = "summary.json";

/// One campaign, or one shard of it, as `summary.json` records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Summary {
    /// [`FORMAT`].
    pub format: u32,
    /// The lws-sim version that ran the cases.
    pub lws_sim: String,
    /// The case distribution's fingerprint (`fuzz::distribution`).
    pub distribution: String,
    /// What the cases rolled out (`fuzz --workload`); absent for an LWS.
    #[serde(default, skip_serializing_if = "is_lws")]
    pub workload: String,
    /// The reconciler SPEC, as given.
    pub reconciler: String,
    /// The campaign seed.
    pub seed: u64,
    /// N of `--shard I/N` (1 for an unsharded campaign).
    pub shards: u64,
    /// Which shards ran, and how many cases each (one entry unless merged from an incomplete
    /// or uneven set of shards).
    pub ran: Vec<ShardRun>,
    /// Whether every failing case was also written as drawn (`--save-all`, `case-N/`).
    pub save_all: bool,
    /// Every failing case, in index order.
    pub failures: Vec<Failure>,
    /// Every case the engine refused to run (a generator bug), in index order.
    pub errors: Vec<CaseError>,
    /// One minimized scenario per invariant broken, in invariant order.
    pub minimized: Vec<Minimized>,
}

fn is_lws(workload: &str) -> bool {
    workload.is_empty()
}

/// Shard `shard` of [`Summary::shards`] ran its first `cases` cases: `shard + k * shards` for
/// `k < cases`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardRun {
    pub shard: u64,
    pub cases: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub case: u64,
    pub violated: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseError {
    pub case: u64,
    pub error: String,
}

/// The minimized scenario of `invariant`, shrunk from `case` (the first case that broke it),
/// written in the directory `dir` of the `--out` directory: `steps` steps, `groups` groups of
/// `size` pods.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Minimized {
    pub invariant: String,
    pub case: u64,
    pub dir: String,
    pub steps: usize,
    pub groups: i32,
    pub size: i32,
}

impl Summary {
    /// The summary of `campaign` (this lws-sim, its distribution and its shard) after `cases`
    /// cases, with no failure, error or minimized scenario yet.
    pub fn new(campaign: &Campaign, cases: u64, save_all: bool) -> Summary {
        Summary {
            format: FORMAT,
            lws_sim: env!("CARGO_PKG_VERSION").to_string(),
            distribution: fuzz::distribution_of(campaign.workload),
            workload: match campaign.workload {
                fuzz::Workload::Lws => String::new(),
                w => w.as_str().to_string(),
            },
            reconciler: campaign.reconciler.name.clone(),
            seed: campaign.seed,
            shards: campaign.shard.1,
            ran: vec![ShardRun {
                shard: campaign.shard.0,
                cases,
            }],
            save_all,
            failures: Vec::new(),
            errors: Vec::new(),
            minimized: Vec::new(),
        }
    }

    /// Record a case's outcome: a failure if it broke something, an error if it could not run.
    pub fn record(&mut self, r: &CaseResult) {
        if let Some(error) = &r.error {
            self.errors.push(CaseError {
                case: r.index,
                error: error.clone(),
            });
        }
        if !r.violated.is_empty() {
            self.failures.push(Failure {
                case: r.index,
                violated: r.violated.iter().cloned().collect(),
            });
        }
    }

    /// Cases run over all the shards.
    /// The cases the campaign ran (every index of u64 at most: saturating, never wrapping).
    pub fn cases(&self) -> u64 {
        self.ran
            .iter()
            .fold(0u64, |total, r| total.saturating_add(r.cases))
    }

    /// Each invariant broken and the cases that broke it, in index order.
    pub fn by_invariant(&self) -> BTreeMap<String, Vec<u64>> {
        let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for f in &self.failures {
            for v in &f.violated {
                out.entry(v.clone()).or_default().push(f.case);
            }
        }
        out
    }

    /// The summary as `summary.json` holds it.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a summary encodes") + "\n"
    }

    /// Read `summary.json`'s text.
    pub fn parse(text: &str) -> Result<Summary, String> {
        let s = decode(text)?;
        if s.format != FORMAT {
            return Err(format!("format {}, this lws-sim reads {FORMAT}", s.format));
        }
        s.check_consistent()?;
        // A merge copies each minimized directory by this name: only the one fuzz writes,
        // `<invariant>-case-<N>` inside the --out directory, never a path out of it.
        for (i, m) in s.minimized.iter().enumerate() {
            let plain =
                !m.invariant.is_empty() && m.invariant.chars().all(|c| c.is_ascii_alphanumeric());
            if !plain || m.dir != format!("{}-case-{}", m.invariant, m.case) {
                return Err(format!(
                    "minimized[{i}].dir: {:?} is not the directory fuzz writes for invariant {:?} and case {} (`<invariant>-case-<N>`)",
                    m.dir, m.invariant, m.case
                ));
            }
        }
        Ok(s)
    }
}

/// `text` as a `Summary`, a type error naming the field it is in (`ran[0].cases: invalid
/// type: ...`) besides serde_json's line and column.
fn decode(text: &str) -> Result<Summary, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let s: Summary = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        match path.as_str() {
            "." => e.into_inner().to_string(),
            _ => format!("{path}: {}", e.into_inner()),
        }
    })?;
    de.end().map_err(|e| e.to_string())?;
    Ok(s)
}

impl Summary {
    /// Whether case `case` is one the shards in `ran` ran.
    fn ran_case(&self, case: u64) -> bool {
        let (shard, k) = (case % self.shards, case / self.shards);
        self.ran.iter().any(|r| r.shard == shard && k < r.cases)
    }

    /// What fuzz writes holds together: shards below `shards`, each once; failures and errors
    /// in case order, each a case a listed shard ran, each failure breaking known invariants
    /// (sorted, once each); one minimized scenario per invariant that broke, from the first
    /// case that broke it. A summary that does not would merge into a wrong one.
    fn check_consistent(&self) -> Result<(), String> {
        if self.shards == 0 {
            return Err("shards: 0; a campaign has at least one shard".into());
        }
        let reconciler = lws::profile::Profile::parse(&self.reconciler)
            .map_err(|e| format!("reconciler: {e}"))?;
        let workload = match self.workload.as_str() {
            // Absent for an LWS; written as absent, so `lws` spelled out is not a summary's.
            "" => fuzz::Workload::Lws,
            w => fuzz::Workload::parse(w)
                .filter(|w| *w != fuzz::Workload::Lws)
                .ok_or_else(|| {
                    format!("workload: {w:?} is not a workload (disaggregated, lws-replaced, lws-gang, or absent for lws)")
                })?,
        };
        workload
            .check_reconciler(&reconciler)
            .map_err(|e| format!("reconciler: {e}"))?;
        for (i, m) in self.minimized.iter().enumerate() {
            use crate::scenario::limits::{LWS_PODS_MAX, STEP_COUNT_MAX};
            let (groups, size) = (i64::from(m.groups), i64::from(m.size));
            if !(1..=STEP_COUNT_MAX).contains(&m.steps) {
                return Err(format!(
                    "minimized[{i}].steps: {} is not a step count a scenario can have (1..={STEP_COUNT_MAX})",
                    m.steps
                ));
            }
            if groups < 0 || size < 1 || groups * size > LWS_PODS_MAX {
                return Err(format!(
                    "minimized[{i}]: {groups} groups of {size} pods is not a world a scenario can have (at least one pod per group, at most {LWS_PODS_MAX} pods)"
                ));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, r) in self.ran.iter().enumerate() {
            if r.shard >= self.shards || !seen.insert(r.shard) {
                return Err(format!(
                    "ran[{i}].shard: {} is not a shard of 0..{} listed once",
                    r.shard, self.shards
                ));
            }
            // Shard k of n runs the case indices i = k (mod n) of u64: at most this many.
            let most = ((u64::MAX - r.shard) / self.shards).saturating_add(1);
            if r.cases > most {
                return Err(format!(
                    "ran[{i}].cases: {} is more than shard {}/{} can run ({most})",
                    r.cases, r.shard, self.shards
                ));
            }
        }
        let cases = self.failures.iter().map(|f| f.case);
        check_cases("failures", cases, |c| self.ran_case(c))?;
        check_cases("errors", self.errors.iter().map(|e| e.case), |c| {
            self.ran_case(c)
        })?;
        for (i, f) in self.failures.iter().enumerate() {
            let known = f
                .violated
                .iter()
                .all(|v| crate::invariants::InvariantId::parse(v).is_some());
            if f.violated.is_empty() || !known || !f.violated.is_sorted_by(|a, b| a < b) {
                return Err(format!(
                    "failures[{i}].violated: {:?} is not a sorted list of invariant names, each once",
                    f.violated
                ));
            }
        }
        let first = self.by_invariant();
        let minimized: Vec<(&str, u64)> = self
            .minimized
            .iter()
            .map(|m| (m.invariant.as_str(), m.case))
            .collect();
        let wanted: Vec<(&str, u64)> = first.iter().map(|(k, v)| (k.as_str(), v[0])).collect();
        if minimized != wanted {
            return Err(format!(
                "minimized: {minimized:?} (invariant, case), but the failures' first case of each invariant is {wanted:?}"
            ));
        }
        Ok(())
    }
}

/// The cases of `field` are strictly increasing and each `ran`.
fn check_cases(
    field: &str,
    cases: impl Iterator<Item = u64>,
    ran: impl Fn(u64) -> bool,
) -> Result<(), String> {
    let mut last = None;
    for (i, c) in cases.enumerate() {
        if last.is_some_and(|l| c <= l) || !ran(c) {
            return Err(format!(
                "{field}[{i}].case: {c} is not a case the listed shards ran, after the one before it"
            ));
        }
        last = Some(c);
    }
    Ok(())
}

/// Where a merged file comes from: the input (an index into `merge`'s inputs) and the directory
/// name, the same in the input and in the merged output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub input: usize,
    pub dir: String,
}

/// A merge: the merged summary, the directories to copy into the merged output (each
/// minimized scenario, and each `case-N/` when every shard saved all), and the shards no input
/// ran.
#[derive(Clone, Debug)]
pub struct Merged {
    pub summary: Summary,
    pub copies: Vec<Source>,
    pub missing: Missing,
}

/// The shard indices of `0..N` that no input ran: how many, and the first few.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    pub count: u64,
    pub first: Vec<u64>,
}

/// How many missing shards [`Missing::first`] lists.
const MISSING_SHOWN: usize = 10;

/// Why `b` (labelled `lb`) is not a shard of the same campaign as `a` (labelled `la`).
fn other_campaign(la: &str, a: &Summary, lb: &str, b: &Summary) -> Option<String> {
    // An LWS campaign's workload is absent from its summary: say `lws`.
    let workload = |s: &Summary| match s.workload.as_str() {
        "" => "lws".to_string(),
        w => w.to_string(),
    };
    let (wa, wb) = (workload(a), workload(b));
    let fields = [
        ("lws-sim version", &a.lws_sim, &b.lws_sim),
        ("workload", &wa, &wb),
        ("case distribution", &a.distribution, &b.distribution),
        ("reconciler", &a.reconciler, &b.reconciler),
    ];
    let numbers = [
        ("seed", a.seed, b.seed),
        ("shard count N", a.shards, b.shards),
    ];
    let differs = fields
        .iter()
        .find(|(_, x, y)| x != y)
        .map(|(what, x, y)| (*what, x.to_string(), y.to_string()))
        .or_else(|| {
            numbers
                .iter()
                .find(|(_, x, y)| x != y)
                .map(|(what, x, y)| (*what, x.to_string(), y.to_string()))
        });
    differs.map(|(what, x, y)| {
        format!("{lb}: not a shard of the same campaign as {la}: {what} {y}, not {x}")
    })
}

/// Every shard run of the inputs by shard index, refusing one that appears twice.
fn shard_runs(inputs: &[(String, Summary)]) -> Result<BTreeMap<u64, (usize, u64)>, String> {
    let mut runs: BTreeMap<u64, (usize, u64)> = BTreeMap::new();
    for (k, (label, s)) in inputs.iter().enumerate() {
        for r in &s.ran {
            if r.shard >= s.shards {
                return Err(format!(
                    "{label}: shard {}/{} is not a shard",
                    r.shard, s.shards
                ));
            }
            if let Some((j, _)) = runs.insert(r.shard, (k, r.cases)) {
                return Err(format!(
                    "{label}: shard {}/{} again (also in {}): shards overlap",
                    r.shard, s.shards, inputs[j].0
                ));
            }
        }
    }
    Ok(runs)
}

/// The shards of `0..n` not in `runs`.
fn missing(runs: &BTreeMap<u64, (usize, u64)>, n: u64) -> Missing {
    let count = n - runs.len() as u64;
    let first = (0..n)
        .filter(|i| !runs.contains_key(i))
        .take(MISSING_SHOWN)
        .collect();
    Missing { count, first }
}

/// The shard runs as the merged summary records them: one unsharded run of `M` cases when
/// every shard ran and together they ran exactly cases `0..M`; otherwise each shard's run.
fn merged_ran(runs: &BTreeMap<u64, (usize, u64)>, n: u64) -> (u64, Vec<ShardRun>) {
    let each: Vec<ShardRun> = runs
        .iter()
        .map(|(&shard, &(_, cases))| ShardRun { shard, cases })
        .collect();
    let total = each.iter().try_fold(0u64, |t, r| t.checked_add(r.cases));
    let prefix = total.filter(|&m| {
        runs.len() as u64 == n
            && each
                .iter()
                .all(|r| r.cases == m.saturating_sub(r.shard).div_ceil(n))
    });
    match prefix {
        Some(m) => (1, vec![ShardRun { shard: 0, cases: m }]),
        None => (n, each),
    }
}

/// For each invariant the failures break, the minimized scenario of its first case, from the
/// input that ran that case.
fn merged_minimized(
    inputs: &[(String, Summary)],
    failures: &[(usize, Failure)],
) -> Result<Vec<(usize, Minimized)>, String> {
    let mut first: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for (k, f) in failures {
        for v in &f.violated {
            first.entry(v).or_insert((*k, f.case));
        }
    }
    first
        .into_iter()
        .map(|(invariant, (k, case))| {
            let (label, s) = &inputs[k];
            s.minimized
                .iter()
                .find(|m| m.invariant == invariant && m.case == case)
                .map(|m| (k, m.clone()))
                .ok_or_else(|| {
                    format!("{label}: case {case} broke {invariant} but no minimized scenario of it is listed")
                })
        })
        .collect()
}

/// Merge the summaries of shards of one campaign (each labelled by its directory, for
/// messages). Refuses shards of different campaigns, different shard counts, and a shard that
/// appears twice; shards that none ran are reported in [`Merged::missing`].
pub fn merge(inputs: &[(String, Summary)]) -> Result<Merged, String> {
    let (l0, s0) = inputs.first().ok_or("no summaries to merge")?;
    if let Some(e) = inputs
        .iter()
        .find_map(|(l, s)| other_campaign(l0, s0, l, s))
    {
        return Err(e);
    }
    let runs = shard_runs(inputs)?;
    let mut failures: Vec<(usize, Failure)> = inputs
        .iter()
        .enumerate()
        .flat_map(|(k, (_, s))| s.failures.iter().map(move |f| (k, f.clone())))
        .collect();
    failures.sort_by_key(|(_, f)| f.case);
    let mut errors: Vec<CaseError> = inputs
        .iter()
        .flat_map(|(_, s)| s.errors.iter().cloned())
        .collect();
    errors.sort_by_key(|e| e.case);
    let minimized = merged_minimized(inputs, &failures)?;
    let save_all = inputs.iter().all(|(_, s)| s.save_all);
    let mut copies: Vec<Source> = minimized
        .iter()
        .map(|(k, m)| Source {
            input: *k,
            dir: m.dir.clone(),
        })
        .collect();
    if save_all {
        copies.extend(failures.iter().map(|(k, f)| Source {
            input: *k,
            dir: format!("case-{}", f.case),
        }));
    }
    let (shards, ran) = merged_ran(&runs, s0.shards);
    let summary = Summary {
        shards,
        ran,
        save_all,
        failures: failures.into_iter().map(|(_, f)| f).collect(),
        errors,
        minimized: minimized.into_iter().map(|(_, m)| m).collect(),
        ..s0.clone()
    };
    Ok(Merged {
        summary,
        copies,
        missing: missing(&runs, s0.shards),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(i: u64, n: u64, cases: u64, failures: &[(u64, &str)]) -> (String, Summary) {
        let failures: Vec<Failure> = failures
            .iter()
            .map(|(case, v)| Failure {
                case: *case,
                violated: vec![v.to_string()],
            })
            .collect();
        let mut minimized: Vec<Minimized> = Vec::new();
        for f in &failures {
            let invariant = &f.violated[0];
            if !minimized.iter().any(|m| &m.invariant == invariant) {
                minimized.push(Minimized {
                    invariant: invariant.clone(),
                    case: f.case,
                    dir: format!("{invariant}-case-{}", f.case),
                    steps: 3,
                    groups: 1,
                    size: 1,
                });
            }
        }
        minimized.sort_by(|a, b| a.invariant.cmp(&b.invariant));
        let s = Summary {
            format: FORMAT,
            lws_sim: "0.1.0".into(),
            distribution: "d".into(),
            workload: String::new(),
            reconciler: "v0.4.1".into(),
            seed: 1,
            shards: n,
            ran: vec![ShardRun { shard: i, cases }],
            save_all: false,
            failures,
            errors: Vec::new(),
            minimized,
        };
        (format!("shard-{i}"), s)
    }

    #[test]
    fn shards_covering_a_prefix_merge_into_the_unsharded_summary() {
        // Cases 0..7 over 3 shards: 0, 3, 6 | 1, 4 | 2, 5.
        let shards = [
            shard(0, 3, 3, &[(3, "availability"), (6, "timeout")]),
            shard(1, 3, 2, &[(1, "timeout"), (4, "availability")]),
            shard(2, 3, 2, &[]),
        ];
        let whole = shard(
            0,
            1,
            7,
            &[
                (1, "timeout"),
                (3, "availability"),
                (4, "availability"),
                (6, "timeout"),
            ],
        );
        let m = merge(&shards).unwrap();
        assert_eq!(m.summary, whole.1);
        assert_eq!(m.missing.count, 0);
        let from: Vec<(usize, &str)> = m.copies.iter().map(|c| (c.input, &*c.dir)).collect();
        assert_eq!(from, [(0, "availability-case-3"), (1, "timeout-case-1")]);
    }

    #[test]
    fn missing_and_uneven_shards_are_kept_as_shard_runs() {
        let m = merge(&[shard(0, 4, 2, &[]), shard(2, 4, 2, &[])]).unwrap();
        assert_eq!(
            m.missing,
            Missing {
                count: 2,
                first: vec![1, 3]
            }
        );
        assert_eq!(m.summary.shards, 4);
        assert_eq!(m.summary.cases(), 4);
        assert_eq!(m.summary.ran.len(), 2);
        // Shard 1 one case short of shard 0 still makes cases 0..9; two short does not.
        let m = merge(&[shard(0, 2, 5, &[]), shard(1, 2, 4, &[])]).unwrap();
        assert_eq!((m.summary.shards, m.summary.cases()), (1, 9));
        let m = merge(&[shard(0, 2, 5, &[]), shard(1, 2, 3, &[])]).unwrap();
        assert_eq!((m.summary.shards, m.summary.ran.len()), (2, 2));
    }

    #[test]
    fn other_campaigns_and_overlapping_shards_are_refused_by_name() {
        let a = shard(0, 2, 1, &[]);
        let mut b = shard(1, 2, 1, &[]);
        b.1.seed = 2;
        let e = merge(&[a.clone(), b]).unwrap_err();
        assert!(
            e.starts_with("shard-1:") && e.contains("seed 2, not 1"),
            "{e}"
        );
        let mut b = shard(1, 2, 1, &[]);
        b.1.reconciler = "v0.3.0".into();
        assert!(merge(&[a.clone(), b]).unwrap_err().contains("reconciler"));
        let e = merge(&[a.clone(), shard(1, 3, 1, &[])]).unwrap_err();
        assert!(e.contains("shard count N 3, not 2"), "{e}");
        let mut again = a.clone();
        again.0 = "copy".into();
        let e = merge(&[a, again]).unwrap_err();
        assert!(
            e.starts_with("copy:") && e.contains("also in shard-0"),
            "{e}"
        );
    }

    #[test]
    fn a_summary_reads_back_and_refuses_another_format() {
        let (_, s) = shard(0, 1, 3, &[(2, "timeout")]);
        assert_eq!(Summary::parse(&s.json()).unwrap(), s);
        let other = s.json().replace("\"format\": 1", "\"format\": 2");
        assert!(Summary::parse(&other).unwrap_err().contains("format 2"));
    }

    #[test]
    fn a_mistyped_field_is_named_by_its_path() {
        let (_, s) = shard(1, 2, 3, &[(3, "timeout")]);
        let json = s.json();
        let retyped = |from: &str, to: &str| {
            assert!(json.contains(from), "{from} in {json}");
            Summary::parse(&json.replacen(from, to, 1)).unwrap_err()
        };
        let e = retyped("\"cases\": 3", "\"cases\": \"3\"");
        assert!(e.starts_with("ran[0].cases: invalid type: string"), "{e}");
        let e = retyped("\"case\": 3", "\"case\": -3");
        assert!(e.starts_with("failures[0].case: invalid value"), "{e}");
        let e = retyped("\"shards\": 2", "\"shards\": 2.5");
        assert!(e.starts_with("shards: invalid type: floating point"), "{e}");
        assert!(Summary::parse(&format!("{json} x"))
            .unwrap_err()
            .contains("trailing"));
    }

    #[test]
    fn an_inconsistent_summary_is_refused_naming_the_field() {
        // Shard 1 of 2 ran 3 cases: 1, 3 and 5.
        let (_, s) = shard(1, 2, 3, &[(3, "timeout"), (5, "availability")]);
        assert!(Summary::parse(&s.json()).is_ok());
        let edit = |f: &dyn Fn(&mut Summary)| {
            let mut t = s.clone();
            f(&mut t);
            Summary::parse(&t.json()).unwrap_err()
        };
        let cases = [
            (edit(&|t| t.failures[0].case = 4), "failures[0].case: 4"),
            (edit(&|t| t.failures[1].case = 7), "failures[1].case: 7"),
            (edit(&|t| t.failures.swap(0, 1)), "failures[1].case: 3"),
            (edit(&|t| t.ran[0].shard = 2), "ran[0].shard: 2"),
            (
                edit(&|t| t.ran[0].cases = u64::MAX),
                "ran[0].cases: 18446744073709551615",
            ),
            (edit(&|t| t.shards = 0), "shards: 0"),
            (
                edit(&|t| t.failures[0].violated = vec!["nope".into()]),
                "failures[0].violated",
            ),
            (
                edit(&|t| t.failures[0].violated = vec!["timeout".into(), "check".into()]),
                "failures[0].violated",
            ),
            (edit(&|t| t.minimized.truncate(1)), "minimized: "),
            (
                edit(&|t| {
                    t.errors.push(CaseError {
                        case: 2,
                        error: "x".into(),
                    })
                }),
                "errors[0].case: 2",
            ),
            (
                edit(&|t| t.workload = "bogus".into()),
                "workload: \"bogus\"",
            ),
            (edit(&|t| t.workload = "lws".into()), "workload: \"lws\""),
            (
                edit(&|t| t.workload = "lws-gang".into()),
                "reconciler: --workload lws-gang: v0.4.1 has no scheduler provider",
            ),
            (
                edit(&|t| t.workload = "disaggregated".into()),
                "reconciler: --workload disaggregated: v0.4.1 runs no",
            ),
        ];
        for (e, says) in cases {
            assert!(e.starts_with(says), "{says}: {e}");
        }
    }

    #[test]
    fn a_minimized_directory_must_be_the_one_fuzz_writes() {
        // A merge copies it: a path out of the shard (or an absolute one) is refused.
        let (_, s) = shard(0, 1, 3, &[(2, "timeout")]);
        assert_eq!(s.minimized[0].dir, "timeout-case-2");
        for dir in [
            "../evil",
            "/tmp/x",
            "timeout-case-3",
            "",
            "timeout-case-2/..",
        ] {
            let bad = s
                .json()
                .replace("\"timeout-case-2\"", &format!("{:?}", dir));
            let e = Summary::parse(&bad).unwrap_err();
            assert!(e.contains("minimized[0].dir"), "{dir}: {e}");
        }
        let odd = s.json().replace("\"timeout\"", "\"../x\"");
        assert!(Summary::parse(&odd).is_err());
    }

    #[test]
    fn a_reconciler_and_minimized_sizes_must_be_ones_a_campaign_can_have() {
        let (_, s) = shard(0, 1, 3, &[(2, "timeout")]);
        let json = s.json();
        let bogus = json.replace("\"v0.4.1\"", "\"bogus\"");
        assert!(Summary::parse(&bogus)
            .unwrap_err()
            .starts_with("reconciler: "));
        for (from, to) in [
            ("\"groups\": 1", "\"groups\": -5"),
            ("\"size\": 1", "\"size\": 0"),
            ("\"steps\": 3", "\"steps\": 0"),
            ("\"steps\": 3", "\"steps\": 18446744073709551615"),
        ] {
            assert!(json.contains(from), "{json}");
            let e = Summary::parse(&json.replace(from, to)).unwrap_err();
            assert!(e.starts_with("minimized[0]"), "{to}: {e}");
        }
    }
}
