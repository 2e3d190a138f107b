//! The `lws-sim` command line. The only module that touches stdout, files, the wall clock and
//! exit codes: 0 every run held, 1 an invariant broke (or an expectation failed), 2 bad input.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use lws::profile::Profile;
use lws_sim::explore::{self, Exploration, Finding};
use lws_sim::fuzz::{self, Campaign};
use lws_sim::scenario::spec::Expectation;
use lws_sim::scenario::{self, RunReport, Scenario, ScenarioFiles};

const USAGE: &str = "\
lws-sim: deterministic simulation of the LeaderWorkerSet controller

USAGE:
  lws-sim run SCENARIO... [--reconciler SPEC] [--seed N] [--json] [--trace FILE]
  lws-sim check PATH...
  lws-sim fuzz --reconciler SPEC (--cases N | --time DURATION) [--seed S] [--jobs J]
               [--shard I/N] [--out DIR] [--save-all]
  lws-sim explore SCENARIO --reconciler SPEC [--max N] [--out DIR]
  lws-sim serve SCENARIO [--reconciler SPEC] [--seed N] [--addr 127.0.0.1:PORT]
               [--speed X | --paused] [--record FILE] [--insecure-bind]
  lws-sim help

run     run each scenario; exit 0 if no invariant broke, 1 if any did, 2 on bad input
fuzz    generate rollout cases with faults, run each, shrink every failure to a small
        scenario file in --out (default fuzz-failures/); --save-all also writes every failing
        case unminimized (DIR/case-N/); exit 1 if any case failed
explore re-run a scenario perturbed four ways (at most N of each, default 200): the controller
        killed right after each of its writes; each watch event to it held back until the next
        one of the same object; each reconcile served from stale caches; a resync after each
        reconcile. Report every perturbation that breaks an invariant the reference run kept;
        one scenario per (invariant, cause)
check   run every scenario (files, or *.yaml in directories) against every reconciler in its
        `expect`; print a table; exit 0 only if every expectation is met
serve   load a scenario (manifests applied, steps run), then serve its cluster over plain HTTP
        (default 127.0.0.1:8001) as a Kubernetes API server for kubectl --server and kube-rs;
        virtual time runs at --speed times real time (default 60) or stays --paused, moved by
        POST /lws-sim/step?for=30s and /lws-sim/until?t=10m; --record FILE writes every client
        write as a scenario step (`lws-sim run FILE` replays it)

SPEC is PROFILE[,flag=value...], e.g. v0.10.0, latest, all-fixed or
v0.3.0,worker-update-strategy=OnDelete (`lws-sim help` lists profiles and flags).";

/// `lws-sim help`: the usage, then one line per profile and per flag.
fn help_text() -> String {
    let mut s = format!("{USAGE}\n\nPROFILES:\n");
    s.push_str(
        "  v0.3.0    tag v0.3.0: the seed bug (worker StatefulSets force-applied, lws #225)\n",
    );
    s.push_str("  v0.4.1    tag v0.4.1: the seed fix (create only when missing, PR #229)\n");
    s.push_str(
        "  v0.10.0   tag v0.10.0 (2161f38): its own port; only [bracketed] flag values apply\n",
    );
    s.push_str("  latest    the newest release profile, v0.10.0\n");
    s.push_str(
        "  all-fixed v0.4.1 with every known upstream fix and the proposed fixes for Z01-Z03\n",
    );
    s.push_str("\nFLAGS (flag=values  [values at v0.10.0]  upstream change):\n");
    for line in lws::profile::Flags::help() {
        s.push_str(&format!("  {line}\n"));
    }
    s
}

/// The argument after `flag`, or the error that names it.
fn flag_value(it: &mut std::slice::Iter<String>, flag: &str) -> Result<String, String> {
    it.next()
        .cloned()
        .ok_or_else(|| format!("{flag} needs a value"))
}

struct RunArgs {
    scenarios: Vec<PathBuf>,
    reconciler: Option<Profile>,
    seed: Option<u64>,
    json: bool,
    trace: Option<PathBuf>,
}

/// Print a line to stdout; a closed pipe (`| head`) ends output quietly instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut out = std::io::stdout().lock();
        if writeln!(out, $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// The `--reconciler` value, parsed once.
fn reconciler(spec: &str) -> Result<Profile, String> {
    Profile::parse(spec).map_err(|e| format!("--reconciler: {e}"))
}

/// Bad input: exit status 2.
fn input_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n\n{USAGE}");
    ExitCode::from(2)
}

fn parse_run(args: &[String]) -> Result<RunArgs, String> {
    let mut r = RunArgs {
        scenarios: Vec::new(),
        reconciler: None,
        seed: None,
        json: false,
        trace: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| flag_value(&mut it, flag);
        match a.as_str() {
            "--reconciler" => r.reconciler = Some(reconciler(&value("--reconciler")?)?),
            "--seed" => {
                let v = value("--seed")?;
                r.seed = Some(
                    v.parse()
                        .map_err(|_| format!("--seed: {v:?} is not a non-negative integer"))?,
                );
            }
            "--json" => r.json = true,
            "--trace" => r.trace = Some(PathBuf::from(value("--trace")?)),
            f if f.starts_with('-') => return Err(format!("unknown flag {f:?}")),
            p => r.scenarios.push(PathBuf::from(p)),
        }
    }
    if r.scenarios.is_empty() {
        return Err("run needs at least one scenario file".into());
    }
    if r.trace.is_some() && r.scenarios.len() > 1 {
        return Err("--trace takes one scenario".into());
    }
    Ok(r)
}

fn summary_line(path: &Path, r: &RunReport, wall_ms: u128) -> String {
    let verdict = if r.violations.is_empty() {
        "PASS"
    } else {
        "VIOLATION"
    };
    let min = r
        .min_available
        .map(|m| m.to_string())
        .unwrap_or_else(|| "-".into());
    format!(
        "{verdict} {} [{}] seed {}: {} simulated in {wall_ms} ms, {} events, min available {min} (floor {}), trace {:016x}",
        path.display(),
        r.reconciler,
        r.seed,
        lws_sim::time::fmt_ms(r.sim_ms),
        r.events,
        r.floor,
        r.trace_hash
    )
}

fn json_line(r: &RunReport, wall_ms: u128) -> serde_json::Value {
    serde_json::json!({
        "scenario": r.scenario,
        "reconciler": r.reconciler,
        "seed": r.seed,
        "result": if r.violations.is_empty() { "pass" } else { "violation" },
        "violations": r.violations.iter().map(|v| serde_json::json!({
            "invariant": v.invariant, "at_ms": v.at_ms, "message": v.message,
        })).collect::<Vec<_>>(),
        "min_available": r.min_available,
        "floor": r.floor,
        "trace_hash": format!("{:016x}", r.trace_hash),
        "sim_ms": r.sim_ms,
        "events": r.events,
        "wall_ms": wall_ms,
    })
}

fn write_trace(path: &Path, r: &RunReport) -> Result<(), String> {
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?,
    );
    for e in &r.trace.entries {
        let line = serde_json::to_string(&e.json_line()).expect("trace lines encode");
        writeln!(f, "{line}").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    f.flush().map_err(|e| format!("{}: {e}", path.display()))
}

fn cmd_run(args: &[String]) -> ExitCode {
    let a = match parse_run(args) {
        Ok(a) => a,
        Err(m) => return usage_error(&m),
    };
    let mut scenarios = Vec::new();
    for p in &a.scenarios {
        match Scenario::load(p) {
            Ok(s) => scenarios.push(s),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut any_violation = false;
    for s in &scenarios {
        let started = Instant::now();
        let profile = match &a.reconciler {
            Some(p) => Ok(p.clone()),
            None => s.reconciler(None),
        };
        let report = match profile.and_then(|p| scenario::run_with(s, &p, a.seed).map_err(|e| e.0))
        {
            Ok(r) => r,
            Err(e) => return input_error(e),
        };
        let wall_ms = started.elapsed().as_millis();
        if a.json {
            say!("{}", json_line(&report, wall_ms));
        } else {
            say!("{}", summary_line(&s.path, &report, wall_ms));
            for v in &report.violations {
                say!("{}", v.report());
            }
            if !report.violations.is_empty() {
                say!("replay: {}", report.replay_command(&s.path));
            }
        }
        if let Some(t) = &a.trace {
            if let Err(m) = write_trace(t, &report) {
                eprintln!("error: {m}");
                return ExitCode::from(2);
            }
        }
        any_violation |= !report.violations.is_empty();
    }
    ExitCode::from(u8::from(any_violation))
}

fn scenario_files(paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let p = PathBuf::from(p);
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            files.sort();
            out.extend(files);
        } else if p.exists() {
            out.push(p);
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

fn cmd_check(args: &[String]) -> ExitCode {
    if args.is_empty() {
        return usage_error("check needs at least one path");
    }
    if let Some(f) = args.iter().find(|a| a.starts_with('-')) {
        return usage_error(&format!("unknown flag {f:?}"));
    }
    let files = match scenario_files(args) {
        Ok(f) => f,
        Err(m) => return usage_error(&m),
    };
    let mut failed = 0;
    let mut table: Vec<[String; 4]> = vec![[
        "scenario".into(),
        "reconciler".into(),
        "expected".into(),
        "result".into(),
    ]];
    for f in &files {
        let s = match Scenario::load(f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        for (profile, expected) in &s.expect {
            let report = match scenario::run_with(&s, profile, None) {
                Ok(r) => r,
                Err(e) => return input_error(e.0),
            };
            let want = match expected {
                Expectation::Holds => "holds".to_string(),
                Expectation::Violates(v) => v.join(","),
            };
            let verdict = match scenario::judge(&report, expected) {
                Ok(()) => "ok".to_string(),
                Err(_) => {
                    failed += 1;
                    let got: Vec<String> = report.violated().into_iter().collect();
                    format!(
                        "FAILED (got {})",
                        if got.is_empty() {
                            "holds".into()
                        } else {
                            got.join(",")
                        }
                    )
                }
            };
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            eprint!(".");
            table.push([name, profile.name.clone(), want, verdict]);
        }
    }
    eprintln!();
    let rows = table.len() - 1;
    let widths: Vec<usize> = (0..3)
        .map(|c| table.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for r in &table {
        say!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
    say!("{} of {rows} expectations met", rows - failed);
    ExitCode::from(u8::from(failed > 0))
}

struct FuzzArgs {
    reconciler: Profile,
    cases: Option<u64>,
    time_ms: Option<u64>,
    seed: u64,
    jobs: usize,
    shard: (u64, u64),
    out: PathBuf,
    save_all: bool,
}

fn parse_shard(v: &str) -> Result<(u64, u64), String> {
    let parsed = v
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    parsed
        .filter(|(i, n)| *n >= 1 && i < n)
        .ok_or_else(|| format!("--shard: expected I/N with I < N, got {v:?}"))
}

fn parse_fuzz(args: &[String]) -> Result<FuzzArgs, String> {
    let (mut rec, mut cases, mut time_ms, mut seed, mut jobs) = (None, None, None, 1, 1);
    let (mut shard, mut out, mut save_all) = ((0, 1), PathBuf::from("fuzz-failures"), false);
    let mut it = args.iter();
    while let Some(f) = it.next() {
        let mut value = |flag: &str| flag_value(&mut it, flag);
        let number = |v: String, flag: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: expected a number"))
        };
        match f.as_str() {
            "--reconciler" => rec = Some(value("--reconciler")?),
            "--cases" => cases = Some(number(value("--cases")?, "--cases")?),
            "--time" => {
                time_ms = Some(
                    lws_sim::scenario::spec::parse_duration(&value("--time")?)
                        .map_err(|e| format!("--time: {e}"))?,
                )
            }
            "--seed" => seed = number(value("--seed")?, "--seed")?,
            "--jobs" => {
                jobs = value("--jobs")?
                    .parse()
                    .ok()
                    .filter(|j| *j >= 1)
                    .ok_or("--jobs: expected a number >= 1")?
            }
            "--shard" => shard = parse_shard(&value("--shard")?)?,
            "--out" => out = PathBuf::from(value("--out")?),
            "--save-all" => save_all = true,
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    let reconciler = reconciler(&rec.ok_or("fuzz needs --reconciler")?)?;
    if cases.is_none() == time_ms.is_none() {
        return Err("fuzz needs exactly one of --cases N or --time DURATION".into());
    }
    Ok(FuzzArgs {
        reconciler,
        cases,
        time_ms,
        seed,
        jobs,
        shard,
        out,
        save_all,
    })
}

/// Write a scenario held in memory into `dir`: its manifests, and the scenario as `file`.
fn write_scenario(dir: &Path, file: &str, s: &ScenarioFiles) -> Result<PathBuf, String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    for (name, text) in &s.manifests {
        std::fs::write(dir.join(name), text).map_err(io)?;
    }
    let path = dir.join(file);
    std::fs::write(&path, s.yaml()).map_err(io)?;
    Ok(path)
}

/// Run a batch of cases over `jobs` threads; results in index order.
fn run_batch(campaign: &Campaign, indices: &[u64], jobs: usize) -> Vec<fuzz::CaseResult> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                let chunk: Vec<u64> = indices.iter().copied().skip(j).step_by(jobs).collect();
                s.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|i| campaign.check(i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<fuzz::CaseResult> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect();
        all.sort_by_key(|r| r.index);
        all
    })
}

/// Run cases until `--cases` are done or `--time` is up; the failing ones, and how many ran.
fn run_campaign(
    a: &FuzzArgs,
    campaign: &mut Campaign,
    started: Instant,
) -> (u64, Vec<fuzz::CaseResult>) {
    let (mut done, mut failures) = (0u64, Vec::new());
    let mut last_report = Instant::now();
    loop {
        let out_of_cases = a.cases.is_some_and(|n| done >= n);
        let out_of_time = a
            .time_ms
            .is_some_and(|t| started.elapsed().as_millis() as u64 >= t);
        if out_of_cases || out_of_time {
            return (done, failures);
        }
        let full = a.jobs as u64 * 4;
        let batch = a.cases.map_or(full, |n| (n - done).min(full));
        let indices = campaign.next_batch(batch);
        for r in run_batch(campaign, &indices, a.jobs) {
            done += 1;
            if let Some(e) = &r.error {
                eprintln!("case {} could not run: {e}", r.index);
            }
            if !r.violated.is_empty() {
                failures.push(r);
            }
        }
        if last_report.elapsed().as_millis() >= 1000 {
            let rate = done as f64 / started.elapsed().as_secs_f64();
            eprintln!(
                "  {done} cases, {} failing, {rate:.0} cases/s",
                failures.len()
            );
            last_report = Instant::now();
        }
    }
}

/// `--save-all`: every failing case as it was generated, in `DIR/case-N/`.
fn save_all(
    a: &FuzzArgs,
    campaign: &Campaign,
    failures: &[fuzz::CaseResult],
) -> Result<(), String> {
    for f in failures {
        let violated: Vec<String> = f.violated.iter().cloned().collect();
        let files = campaign.failure_files(&campaign.case(f.index), &violated, "");
        write_scenario(
            &a.out.join(format!("case-{}", f.index)),
            "scenario.yaml",
            &files,
        )?;
    }
    Ok(())
}

/// Shrink the first case that broke `invariant`, write it, and print where.
fn write_minimized(
    a: &FuzzArgs,
    campaign: &Campaign,
    invariant: &str,
    cases: &[u64],
) -> Result<(), String> {
    let first = cases[0];
    let shrunk = campaign.shrink(first, invariant, 200)?;
    let (small, report) = (&shrunk.case, &shrunk.report);
    let violated: Vec<String> = report.violated().into_iter().collect();
    let note = format!(
        "Minimized from {} steps to {}; expect trace hash {:016x}.",
        shrunk.original.steps.len() + 3,
        small.steps.len() + 3,
        report.trace_hash
    );
    let files = campaign.failure_files(small, &violated, &note);
    let dir = a.out.join(format!("{invariant}-case-{first}"));
    let p = write_scenario(&dir, "scenario.yaml", &files)?;
    say!(
        "{invariant}: {} cases ({}), first case {first}; minimized to {} steps, {} groups of {}: lws-sim run {}",
        cases.len(),
        case_list(cases),
        small.steps.len() + 3,
        small.replicas,
        small.size,
        p.display()
    );
    Ok(())
}

/// Run a campaign: case indices of this shard, in batches over `jobs` threads; results are
/// taken in index order, so `--jobs` never changes what is found. Then one minimized scenario
/// per distinct invariant, from the first case that broke it.
fn cmd_fuzz(args: &[String]) -> ExitCode {
    let a = match parse_fuzz(args) {
        Ok(a) => a,
        Err(m) => return usage_error(&m),
    };
    let started = Instant::now();
    eprintln!(
        "fuzz {} seed {} shard {}/{} jobs {}",
        a.reconciler.name, a.seed, a.shard.0, a.shard.1, a.jobs
    );
    let mut campaign = Campaign::new(a.seed, a.reconciler.clone(), a.shard);
    let (done, failures) = run_campaign(&a, &mut campaign, started);
    let elapsed = started.elapsed().as_secs_f64();
    say!(
        "{done} cases in {elapsed:.1}s ({:.0} cases/s), {} failing",
        done as f64 / elapsed,
        failures.len()
    );
    if a.save_all {
        if let Err(e) = save_all(&a, &campaign, &failures) {
            return input_error(e);
        }
    }
    let mut by_invariant: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for f in &failures {
        for v in &f.violated {
            by_invariant.entry(v.clone()).or_default().push(f.index);
        }
    }
    for (invariant, cases) in &by_invariant {
        if let Err(e) = write_minimized(&a, &campaign, invariant, cases) {
            return input_error(e);
        }
    }
    ExitCode::from(u8::from(!failures.is_empty()))
}

/// `3, 17, 40` or, past ten, `3, 17, ... and 12 more`.
fn case_list(cases: &[u64]) -> String {
    let shown: Vec<String> = cases.iter().take(10).map(u64::to_string).collect();
    match cases.len().saturating_sub(10) {
        0 => shown.join(", "),
        more => format!("{}, ... and {more} more", shown.join(", ")),
    }
}

struct ExploreArgs {
    path: PathBuf,
    reconciler: Profile,
    max: u64,
    out: PathBuf,
}

fn parse_explore(args: &[String]) -> Result<ExploreArgs, String> {
    let (mut path, mut rec, mut max, mut out) = (None, None, 200u64, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| flag_value(&mut it, flag);
        match a.as_str() {
            "--reconciler" => rec = Some(value("--reconciler")?),
            "--max" => {
                max = value("--max")?
                    .parse()
                    .map_err(|_| "--max: expected a number".to_string())?
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            f if f.starts_with('-') => return Err(format!("unknown flag {f:?}")),
            p => path = Some(PathBuf::from(p)),
        }
    }
    let (Some(path), Some(rec)) = (path, rec) else {
        return Err("explore needs a scenario and --reconciler".into());
    };
    let out = out.unwrap_or_else(|| {
        let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
        PathBuf::from(format!("explore-{}", stem.unwrap_or_default()))
    });
    Ok(ExploreArgs {
        reconciler: reconciler(&rec)?,
        path,
        max,
        out,
    })
}

/// Minimize one finding, write it as `OUT/INVARIANT-CAUSE.yaml`, and print where.
fn write_finding(
    a: &ExploreArgs,
    s: &Scenario,
    ex: &Exploration,
    (invariant, cause): (&str, &str),
    f: &Finding,
) -> Result<(), String> {
    let points: Vec<u64> = ex
        .findings
        .iter()
        .filter(|g| g.perturbation.cause() == cause && g.new.contains(invariant))
        .map(|g| g.perturbation.point())
        .collect();
    let (keep, run) =
        explore::minimize(s, f.perturbation, &a.reconciler, invariant).map_err(|e| e.0)?;
    let violated: Vec<String> = run.violated().into_iter().collect();
    let parent = a.path.parent().unwrap_or(Path::new("."));
    let dir = parent.canonicalize().unwrap_or(parent.to_path_buf());
    let spec = explore::perturbed_spec(
        s,
        f.perturbation,
        &keep,
        &a.reconciler.name,
        &violated,
        &dir,
    );
    let file = a.out.join(format!("{invariant}-{cause}.yaml"));
    std::fs::create_dir_all(&a.out)
        .and_then(|_| std::fs::write(&file, scenario::spec_yaml(&spec)))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    say!(
        "{invariant} via {cause}: {} perturbations (at {}), first {}; minimized to {} of {} steps: lws-sim run {}",
        points.len(),
        case_list(&points),
        f.perturbation.yaml(),
        keep.len() + 1,
        s.steps.len() + 1,
        file.display()
    );
    Ok(())
}

fn cmd_explore(args: &[String]) -> ExitCode {
    let a = match parse_explore(args) {
        Ok(a) => a,
        Err(m) => return usage_error(&m),
    };
    let s = match Scenario::load(&a.path) {
        Ok(s) => s,
        Err(e) => return input_error(e),
    };
    let started = Instant::now();
    let ex = match explore::explore(&s, &a.reconciler, a.max) {
        Ok(x) => x,
        Err(e) => return input_error(e.0),
    };
    let base: Vec<String> = ex.reference.violated().into_iter().collect();
    say!(
        "{} [{}]: reference run broke {:?}; tried {} perturbations ({} controller writes, {} watch events, {} reconciles) in {:.1}s; {} broke something new",
        a.path.display(),
        a.reconciler.name,
        base,
        ex.tried,
        ex.reference.controller_writes,
        ex.reference.controller_events,
        ex.reference.controller_reconciles,
        started.elapsed().as_secs_f64(),
        ex.findings.len()
    );
    for ((invariant, cause), f) in ex.distinct() {
        if let Err(e) = write_finding(&a, &s, &ex, (&invariant, cause), f) {
            return input_error(e);
        }
    }
    ExitCode::from(u8::from(!ex.findings.is_empty()))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `lws-sim fuzz --help` asks for help, not for a flag named --help.
    if args.iter().any(|a| a == "--help" || a == "-h") {
        say!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("serve") => lws_sim::serve::cli(&args[1..]),
        Some("check") => cmd_check(&args[1..]),
        Some("fuzz") => cmd_fuzz(&args[1..]),
        Some("explore") => cmd_explore(&args[1..]),
        Some("help") | Some("--help") | Some("-h") => {
            say!("{}", help_text());
            ExitCode::SUCCESS
        }
        Some(other) => usage_error(&format!("unknown command {other:?}")),
        None => usage_error("no command given"),
    }
}
