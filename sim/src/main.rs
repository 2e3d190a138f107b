//! The `lws-sim` command line. The only module that touches stdout, files, the wall clock and
//! exit codes: 0 every run held, 1 an invariant broke (or an expectation failed), 2 bad input
//! or usage (clap's usage errors exit 2 too).
//!
//! Parsing, help, typo suggestions and shell completions are clap's (derive API); durations on
//! the command line are humantime's (`--time 90s`, `--time 1h30m`); progress bars are
//! indicatif's, drawn only when stderr is a terminal and `--json` is off.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory as _, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use lws::profile::Profile;
use lws_sim::explore::{self, Exploration, Finding};
use lws_sim::fuzz::{Campaign, Workload};
use lws_sim::perfetto;
use lws_sim::scenario::spec::Expectation;
use lws_sim::scenario::{self, RunOptions, RunReport, Scenario, ScenarioFiles};
use lws_sim::summary::{self, Failure, Merged, Minimized, Summary};
use lws_sim::sweep::{self, Param, Sweep};

const USAGE: &str = "\
lws-sim run SCENARIO... [--reconciler SPEC] [--seed N] [--json] [--trace FILE]
                [--timeline FILE.svg] [--perfetto FILE.json]
       lws-sim check PATH... [--seeds N] [--jobs J] [--json]
       lws-sim fuzz --reconciler SPEC (--cases N | --time DURATION) [--seed S] [--jobs J]
                [--shard I/N] [--out DIR] [--save-all]
       lws-sim fuzz merge DIR... [--out DIR]
       lws-sim explore SCENARIO --reconciler SPEC [--max N] [--out DIR] [--jobs J]
       lws-sim sweep SCENARIO --reconciler SPEC --vary PATH=LO..HI [--vary PATH=LO..HI]
                [--steps N] [--seeds K] [--jobs J] [--json]
       lws-sim serve SCENARIO [--reconciler SPEC] [--seed N] [--addr 127.0.0.1:PORT]
                [--speed X | --paused] [--record FILE] [--request-timeout D] [--insecure-bind]
       lws-sim completions bash|zsh|fish
       lws-sim help [COMMAND]";

const FUZZ_USAGE: &str = "lws-sim fuzz --reconciler SPEC (--cases N | --time DURATION) [--seed S] \
[--jobs J] [--shard I/N] [--out DIR] [--save-all] [--workload lws|disaggregated|lws-replaced|lws-gang]
       lws-sim fuzz merge DIR... [--out DIR]";

const SPEC_NOTE: &str = "SPEC is PROFILE[,flag=value...], e.g. v0.10.0, latest, all-fixed or
v0.3.0,worker-update-strategy=OnDelete (`lws-sim help` lists profiles and flags).";

/// `lws-sim --help`: the profiles and flags a SPEC names, after clap's usage and commands.
fn profiles_and_flags() -> String {
    let mut s = format!("{SPEC_NOTE}\n\nPROFILES:\n");
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
    s.push_str(
        "\nserve: load a scenario, then serve its cluster over plain HTTP as a Kubernetes API\n\
         server for kubectl --server and kube-rs (`lws-sim serve --help`).\n",
    );
    s.push_str("\nExit status: 0 every run held, 1 an invariant broke, 2 bad input or usage.");
    s
}

#[derive(Parser)]
#[command(
    name = "lws-sim",
    version,
    about = "lws-sim: deterministic simulation of the LeaderWorkerSet controller",
    override_usage = USAGE,
    subcommand_required = true,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run each scenario; exit 0 if no invariant broke, 1 if any did, 2 on bad input
    Run(RunArgs),
    /// Run scenarios against every reconciler in their `expect`; exit 0 if all are met
    ///
    /// PATHs are scenario files; directories (their *.yaml); and fuzz and explore output
    /// directories (each case directory's scenario.yaml). Prints a table, or with --json one
    /// object; exit 0 only if every expectation is met.
    Check(CheckArgs),
    /// Generate rollout cases with faults, run them, shrink and save each failure
    ///
    /// Each distinct invariant broken gets one minimized scenario file in --out, with a
    /// timeline SVG beside it; --save-all also writes every failing case unminimized
    /// (DIR/case-N/); summary.json records the campaign, the cases run and every failure.
    /// `fuzz merge` combines the --out directories of shards (--shard I/N) into what one
    /// campaign over their cases writes. Exit 1 if any case failed.
    #[command(override_usage = FUZZ_USAGE)]
    Fuzz(FuzzCmd),
    /// Re-run a scenario under systematic perturbations; save what breaks something new
    ///
    /// Four kinds, at most --max of each: the controller killed right after each of its writes;
    /// each watch event to it held back until the next one of the same object; each reconcile
    /// served from stale caches; a resync after each reconcile. Every perturbation that breaks
    /// an invariant the reference run kept is reported; one scenario (and its timeline SVG)
    /// per (invariant, cause) is written to --out.
    Explore(ExploreArgs),
    /// Run a scenario over a grid of one or two timing parameters, many seeds per point
    ///
    /// Each grid point sets the --vary fields in the scenario's `cluster`/`controller`; a range
    /// field (podStartup, podTermination, watchLag, gcLag, apiLatency, restartDelay) is set to
    /// the narrow range POINT-10%..POINT+10%. Grids are log-spaced when HI/LO > 10, linear
    /// otherwise. Every point runs the same seeds: the file's seed (default 1) and the next
    /// K-1. Prints per point the fraction of seeds breaking each invariant, the least
    /// availability any seed saw and the fraction that completed the rollout. The result does
    /// not depend on --jobs. Exit 0 even when runs break invariants; 2 on bad input.
    Sweep(SweepArgs),
    /// Serve a scenario's simulated cluster to kubectl and client-go as a Kubernetes API server
    ///
    /// Loads SCENARIO as `run` does (manifests applied, steps run), then serves the cluster
    /// over plain HTTP; virtual time keeps running at --speed times real time.
    #[command(override_usage = lws_sim::serve::USAGE, after_help = lws_sim::serve::ROUTES)]
    Serve(lws_sim::serve::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    ///
    /// e.g. `lws-sim completions bash > ~/.local/share/bash-completion/completions/lws-sim`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Scenario files.
    #[arg(value_name = "SCENARIO", required = true)]
    scenarios: Vec<PathBuf>,
    /// Reconciler SPEC (default: the scenario's `controller.reconciler`).
    #[arg(long, value_name = "SPEC", value_parser = reconciler)]
    reconciler: Option<Profile>,
    /// Run seed (default: the scenario's `seed`, else 1).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    seed: Option<u64>,
    /// One JSON object per run on stdout.
    #[arg(long)]
    json: bool,
    /// Write the API write trace as JSON lines (one scenario).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Draw the run as an SVG: one row per group, faults, controller down time, the
    /// availability floor and violations (one scenario).
    #[arg(long, value_name = "FILE.svg")]
    timeline: Option<PathBuf>,
    /// Write the run as Chrome trace-event JSON for ui.perfetto.dev (one scenario).
    #[arg(long, value_name = "FILE.json")]
    perfetto: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Scenario files or directories.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Judge each expectation over N seeds: the file's seed (default 1) and the next N-1. An
    /// expectation `{violates: [...], in: 30%..70%}` is met if the fraction of seeds breaking
    /// exactly those lies in the range (the others holding); `holds` or `violates` must be met
    /// by every seed, and the seeds that disagree are listed.
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    seeds: Option<u64>,
    /// Spread the runs over J threads (results and output do not depend on J).
    #[arg(long, allow_negative_numbers = true, value_name = "J", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
    /// One JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
}

/// `lws-sim fuzz`: a campaign's arguments, or the `merge` subcommand (never both).
#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
struct FuzzCmd {
    #[command(subcommand)]
    merge: Option<FuzzSub>,
    #[command(flatten)]
    run: Option<FuzzArgs>,
}

#[derive(Subcommand)]
enum FuzzSub {
    /// Merge the --out directories of a sharded campaign into one summary
    ///
    /// Each DIR is a `fuzz --shard I/N --out DIR` directory with its summary.json. Prints the
    /// summary one campaign over the same cases prints, and writes its minimized scenarios and
    /// summary.json to --out (byte for byte the unsharded campaign's when the shards ran cases
    /// 0..M between them). Refuses (exit 2) shards of different campaigns (lws-sim version,
    /// case distribution, reconciler, seed, N) and a shard given twice; missing shards are
    /// named and the rest merged. Exit 1 if any case failed.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
struct MergeArgs {
    /// The shards' --out directories.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Where the merged summary and minimized failures go.
    #[arg(long, value_name = "DIR", default_value = "fuzz-failures")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct FuzzArgs {
    /// Reconciler SPEC to fuzz.
    #[arg(long, value_name = "SPEC", value_parser = reconciler)]
    reconciler: Profile,
    /// Run this many cases (of this shard).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        required_unless_present = "time",
        conflicts_with = "time",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    cases: Option<u64>,
    /// Run cases for this long (wall clock): 90s, 10m, 1h30m.
    #[arg(long, value_name = "DURATION", value_parser = campaign_time_ms)]
    time: Option<u64>,
    /// Campaign seed.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "S",
        default_value_t = 1
    )]
    seed: u64,
    /// Worker threads, at most the machine's available parallelism.
    #[arg(long, allow_negative_numbers = true, value_name = "J", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
    /// Run only case indices i, i + n, i + 2n, ... (0 <= I < N).
    #[arg(long, value_name = "I/N", default_value = "0/1", value_parser = parse_shard)]
    shard: (u64, u64),
    /// Where minimized failures go.
    #[arg(long, value_name = "DIR", default_value = "fuzz-failures")]
    out: PathBuf,
    /// Also write every failing case unminimized (DIR/case-N/).
    #[arg(long)]
    save_all: bool,
    /// What each case rolls out: `lws` (one LeaderWorkerSet), `disaggregated` (the same
    /// case as a two-role DisaggregatedSet; a v0.10.0 reconciler only), `lws-replaced` (the
    /// same LWS, updated by deleting it and creating it again at once, as `kubectl replace
    /// --force` does) or `lws-gang` (the same LWS, its pods scheduled by Volcano's gang gate;
    /// a reconciler with gang-scheduling=volcano only).
    #[arg(long, value_name = "W", default_value = "lws", value_parser = workload)]
    workload: Workload,
}

#[derive(clap::Args)]
struct ExploreArgs {
    /// The scenario to perturb.
    #[arg(value_name = "SCENARIO")]
    path: PathBuf,
    /// Reconciler SPEC.
    #[arg(long, value_name = "SPEC", value_parser = reconciler)]
    reconciler: Profile,
    /// At most this many perturbations of each kind.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    max: u64,
    /// Where findings go (default explore-<scenario name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Worker threads, at most the machine's available parallelism; the result does not
    /// depend on it.
    #[arg(long, allow_negative_numbers = true, value_name = "J", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// The scenario to sweep.
    #[arg(value_name = "SCENARIO")]
    path: PathBuf,
    /// Reconciler SPEC (default: the scenario's `controller.reconciler`).
    #[arg(long, value_name = "SPEC", value_parser = reconciler)]
    reconciler: Option<Profile>,
    /// A field and its range, e.g. cluster.gcLag=1ms..1s, controller.apiLatency=2ms..200ms,
    /// cluster.podStartup=5s..60s, controller.syncPeriod=1m..10h, cluster.nodes.count=4..8
    /// (once or twice).
    #[arg(long, value_name = "PATH=LO..HI", required = true, value_parser = vary)]
    vary: Vec<Param>,
    /// Grid points per parameter.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    steps: u32,
    /// Seeds per grid point.
    #[arg(long, allow_negative_numbers = true, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    seeds: u64,
    /// Worker threads, at most the machine's available parallelism.
    #[arg(long, allow_negative_numbers = true, value_name = "J", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
    /// One JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
}

/// A `--vary` value.
fn vary(v: &str) -> Result<Param, String> {
    Param::parse(v)
}

/// The first failed write to stdout, if any: from then on nothing more is printed, the run
/// goes on (its files are still written) and `finish` decides the exit status.
static STDOUT_ERROR: std::sync::OnceLock<std::io::ErrorKind> = std::sync::OnceLock::new();

/// Print a line to stdout; a failed write (a closed pipe, a full disk) stops the output, not the
/// run, and never panics.
macro_rules! say {
    ($($arg:tt)*) => {{
        if STDOUT_ERROR.get().is_none() {
            let mut out = std::io::stdout().lock();
            if let Err(e) = writeln!(out, $($arg)*) {
                let _ = STDOUT_ERROR.set(e.kind());
            }
        }
    }};
}

/// The exit status once the output is written: the command's own, except that output lost to
/// anything but a closed pipe (`| head`, which only ends the output) turns a success into 2,
/// with the reason on stderr. A verdict (1) or bad input (2) is never hidden behind 0.
fn finish(code: ExitCode) -> ExitCode {
    let flushed = std::io::stdout().lock().flush().err().map(|e| e.kind());
    match STDOUT_ERROR.get().copied().or(flushed) {
        Some(kind) if kind != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: writing to stdout: {}", std::io::Error::from(kind));
            if code == ExitCode::SUCCESS {
                ExitCode::from(2)
            } else {
                code
            }
        }
        _ => code,
    }
}

/// A `--reconciler` value.
fn reconciler(spec: &str) -> Result<Profile, String> {
    Profile::parse(spec)
}

fn workload(v: &str) -> Result<Workload, String> {
    Workload::parse(v)
        .ok_or_else(|| format!("{v:?}: expected lws, disaggregated, lws-replaced or lws-gang"))
}

/// A `--time` value, in milliseconds.
fn duration_ms(v: &str) -> Result<u64, String> {
    let d = humantime::parse_duration(v).map_err(|e| format!("{e} (e.g. 90s, 10m, 1h30m)"))?;
    Ok(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A campaign's `--time`: a duration that leaves room for a case (`0s` would run none and
/// report a campaign that tried nothing).
fn campaign_time_ms(v: &str) -> Result<u64, String> {
    match duration_ms(v)? {
        0 => Err("a campaign of no time runs no case; give at least 1ms".into()),
        ms => Ok(ms),
    }
}

/// A `--shard I/N` value: N >= 1 and I < N, both within u64.
fn parse_shard(v: &str) -> Result<(u64, u64), String> {
    let parsed = v
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    parsed
        .filter(|(i, n)| *n >= 1 && i < n)
        .ok_or_else(|| format!("expected I/N with 0 <= I < N, got {v:?}"))
}

/// Bad input: exit status 2.
fn input_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// A usage error found after parsing, reported as clap reports its own (exit 2).
fn usage_error(msg: &str) -> ExitCode {
    let e = Cli::command().error(clap::error::ErrorKind::ArgumentConflict, msg);
    let _ = e.print();
    ExitCode::from(2)
}

/// A progress bar on stderr when it is a terminal and `show` (not `--json`); hidden otherwise.
fn progress(len: u64, show: bool, prefix: &str) -> ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    let style =
        ProgressStyle::with_template("{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}")
            .expect("a valid template");
    pb.set_style(style);
    pb.set_prefix(prefix.to_string());
    pb
}

/// A single run's progress on a terminal (unless `quiet`: `--json`, or a bar over several
/// scenarios already shows): the step, the simulated time and the events so far, drawn once
/// the run has gone on for a second.
fn run_progress(quiet: bool) -> Option<scenario::ProgressHook> {
    if quiet {
        return None;
    }
    if !std::io::stderr().is_terminal() {
        return Some(plain_progress());
    }
    let started = Instant::now();
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("run [{elapsed_precise}] {msg}").expect("a valid template"),
    );
    pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    let pb = ClearOnDrop(pb);
    Some(std::sync::Arc::new(move |p: &scenario::Progress| {
        let pb = &pb.0;
        if pb.is_hidden() && started.elapsed().as_secs() >= 1 {
            pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        let step = match p.step < p.steps {
            true => format!("step {} of {}", p.step + 1, p.steps),
            false => "converging after the last step".to_string(),
        };
        pb.set_message(format!(
            "{step}, t={} simulated, {} events",
            lws_sim::time::fmt_ms(p.now_ms),
            p.events
        ));
        pb.tick();
    }))
}

/// Seconds of wall clock between two progress lines when stderr is not a terminal.
const PLAIN_PROGRESS_S: u64 = 30;

/// A long run's progress where no bar can be drawn (a CI log, a file): one plain line on
/// stderr every `PLAIN_PROGRESS_S` seconds of wall clock, so a run of thousands of groups is
/// seen to be moving. A run shorter than that prints nothing.
fn plain_progress() -> scenario::ProgressHook {
    let started = Instant::now();
    let next = std::sync::atomic::AtomicU64::new(PLAIN_PROGRESS_S);
    std::sync::Arc::new(move |p: &scenario::Progress| {
        let elapsed = started.elapsed().as_secs();
        let due = next.load(std::sync::atomic::Ordering::Relaxed);
        if elapsed < due {
            return;
        }
        next.store(
            elapsed + PLAIN_PROGRESS_S,
            std::sync::atomic::Ordering::Relaxed,
        );
        let step = match p.step < p.steps {
            true => format!("step {} of {}", p.step + 1, p.steps),
            false => "converging after the last step".to_string(),
        };
        eprintln!(
            "run: {elapsed}s: {step}, t={} simulated, {} events",
            lws_sim::time::fmt_ms(p.now_ms),
            p.events
        );
    })
}

/// A bar that leaves no line behind once the run it shows has ended.
struct ClearOnDrop(ProgressBar);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The output file `flag` names, if any, created before any work so a bad path is exit 2 at
/// once (the error names the flag).
fn create(flag: &str, path: &Option<PathBuf>) -> Result<Option<(PathBuf, File)>, String> {
    path.as_ref()
        .map(|p| {
            File::create(p)
                .map(|f| (p.clone(), f))
                .map_err(|e| format!("{flag} {}: {e}", p.display()))
        })
        .transpose()
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
        "notes": r.notes,
    })
}

fn write_trace((path, f): (PathBuf, File), r: &RunReport) -> Result<(), String> {
    let mut f = std::io::BufWriter::new(f);
    for e in &r.trace.entries {
        let line = serde_json::to_string(&e.json_line()).expect("trace lines encode");
        writeln!(f, "{line}").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    f.flush().map_err(|e| format!("{}: {e}", path.display()))
}

/// The picture's title: scenario, reconciler, seed and verdict.
fn picture_title(r: &RunReport) -> String {
    let verdict = match r.violated().len() {
        0 => "holds".to_string(),
        _ => format!(
            "violates {}",
            r.violated().into_iter().collect::<Vec<_>>().join(", ")
        ),
    };
    format!(
        "{} [{}] seed {}: {verdict}",
        r.scenario, r.reconciler, r.seed
    )
}

fn write_svg((path, mut f): (PathBuf, File), r: &RunReport) -> Result<(), String> {
    let tl = r.timeline.as_ref().expect("run with a timeline");
    f.write_all(tl.svg(&picture_title(r)).as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Largest gap (ms) between two writes of one reconcile: the default API latency's upper end
/// (`ControllerConfig::api_latency_ms`, 2..20 ms) with room to spare.
const BURST_GAP_MS: u64 = 50;

fn write_perfetto((path, f): (PathBuf, File), r: &RunReport) -> Result<(), String> {
    let tl = r.timeline.as_ref().expect("run with a timeline");
    let slices =
        perfetto::write_bursts(&r.trace.entries, &perfetto::CONTROLLER_ACTORS, BURST_GAP_MS);
    let doc = perfetto::render(&r.trace.entries, &slices, tl, &picture_title(r));
    let mut w = std::io::BufWriter::new(f);
    serde_json::to_writer(&mut w, &doc)
        .map_err(|e| e.to_string())
        .and_then(|_| w.flush().map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The output files of one run, created up front.
struct Outputs {
    trace: Option<(PathBuf, File)>,
    timeline: Option<(PathBuf, File)>,
    perfetto: Option<(PathBuf, File)>,
}

impl Outputs {
    fn open(a: &RunArgs) -> Result<Outputs, String> {
        Ok(Outputs {
            trace: create("--trace", &a.trace)?,
            timeline: create("--timeline", &a.timeline)?,
            perfetto: create("--perfetto", &a.perfetto)?,
        })
    }

    fn picture(&self) -> bool {
        self.timeline.is_some() || self.perfetto.is_some()
    }

    fn write(&mut self, r: &RunReport) -> Result<(), String> {
        // An error names the flag whose file could not take the output.
        if let Some(t) = self.trace.take() {
            write_trace(t, r).map_err(|e| format!("--trace {e}"))?;
        }
        if let Some(t) = self.timeline.take() {
            write_svg(t, r).map_err(|e| format!("--timeline {e}"))?;
        }
        if let Some(t) = self.perfetto.take() {
            write_perfetto(t, r).map_err(|e| format!("--perfetto {e}"))?;
        }
        Ok(())
    }
}

/// One run of `s` as `run` reports it; `Err` is bad input (exit 2).
fn run_one(a: &RunArgs, s: &Scenario, out: &mut Outputs, pb: &ProgressBar) -> Result<bool, String> {
    let started = Instant::now();
    let profile = match &a.reconciler {
        Some(p) => p.clone(),
        None => s.reconciler(None)?,
    };
    let opts = RunOptions {
        seed: a.seed,
        timeline: out.picture(),
        progress: run_progress(a.json || !pb.is_hidden()),
    };
    let report = scenario::run_with_options(s, &profile, opts).map_err(|e| e.0)?;
    let wall_ms = started.elapsed().as_millis();
    // Files first: printing ends the process quietly if stdout is a closed pipe.
    out.write(&report)?;
    pb.suspend(|| {
        if a.json {
            say!("{}", json_line(&report, wall_ms));
        } else {
            say!("{}", summary_line(&s.path, &report, wall_ms));
            for n in &report.notes {
                say!("note: {n}");
            }
            for v in &report.violations {
                say!("{}", v.report());
            }
            if !report.violations.is_empty() {
                say!("replay: {}", report.replay_command(&s.path));
            }
        }
    });
    Ok(!report.violations.is_empty())
}

fn cmd_run(a: RunArgs) -> ExitCode {
    let outputs = [&a.trace, &a.timeline, &a.perfetto];
    if a.scenarios.len() > 1 && outputs.iter().any(|o| o.is_some()) {
        return usage_error("--trace, --timeline and --perfetto take one scenario");
    }
    let mut scenarios = Vec::new();
    for p in &a.scenarios {
        match Scenario::load(p) {
            Ok(s) => scenarios.push(s),
            Err(e) => return input_error(e),
        }
    }
    // Outputs are created (truncated) only once no input is among them.
    let outs = [
        ("--trace", &a.trace),
        ("--timeline", &a.timeline),
        ("--perfetto", &a.perfetto),
    ];
    if let Err(m) = distinct_outputs(&outs, &scenarios) {
        return input_error(m);
    }
    let mut out = match Outputs::open(&a) {
        Ok(o) => o,
        Err(m) => return input_error(m),
    };
    let pb = progress(
        scenarios.len() as u64,
        !a.json && scenarios.len() > 1,
        "run",
    );
    let mut any_violation = false;
    for s in &scenarios {
        pb.set_message(s.path.display().to_string());
        match run_one(&a, s, &mut out, &pb) {
            Ok(v) => any_violation |= v,
            Err(e) => return input_error(e),
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    ExitCode::from(u8::from(any_violation))
}

/// No output file may be an input of the run or another output: each would be truncated.
fn distinct_outputs(
    outs: &[(&str, &Option<PathBuf>)],
    scenarios: &[Scenario],
) -> Result<(), String> {
    let mut seen: Vec<(&str, &Path)> = Vec::new();
    for &(flag, path) in outs {
        let Some(path) = path else { continue };
        scenario::check_output(flag, path)?;
        if let Some((other, _)) = seen.iter().find(|(_, q)| scenario::same_file(q, path)) {
            return Err(format!(
                "{flag} {}: the same file as {other}",
                path.display()
            ));
        }
        if let Some(input) = scenarios.iter().find_map(|s| s.reads(path)) {
            return Err(format!(
                "{flag} {}: the run reads this file ({}); writing it would destroy it",
                path.display(),
                input.display()
            ));
        }
        seen.push((flag, path));
    }
    Ok(())
}

/// The scenario files a `check` path names: a file; a directory's *.yaml, or its
/// `scenario.yaml` alone when it has one (a fuzz case directory, whose other YAML files are
/// manifests); and, one level down, each subdirectory's `scenario.yaml` (fuzz `--out`).
fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.join("scenario.yaml").is_file() {
            out.push(p.join("scenario.yaml"));
        } else if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter_map(|f| {
                    if f.is_dir() {
                        // Anything named scenario.yaml is a case to check: one that is not a
                        // readable file (a FIFO, a directory, a dangling link) is refused when
                        // it loads, never skipped.
                        Some(f.join("scenario.yaml")).filter(|s| s.symlink_metadata().is_ok())
                    } else {
                        Some(f).filter(|f| f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                    }
                })
                .collect();
            if files.is_empty() {
                return Err(format!(
                    "{}: a directory without scenarios (no *.yaml file, no subdirectory holding a scenario.yaml)",
                    p.display()
                ));
            }
            files.sort();
            out.extend(files);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// One row of `check`: a scenario under one reconciler.
struct CheckRow {
    path: PathBuf,
    name: String,
    reconciler: String,
    expected: Expectation,
    got: Vec<String>,
    ok: bool,
    /// With `--seeds`: the verdict over the seeds, and each seed's outcome.
    seeds: Option<(sweep::SeedsVerdict, SeedRuns)>,
}

/// Each seed and the invariants it broke.
type SeedRuns = Vec<(u64, Vec<String>)>;

impl CheckRow {
    fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "scenario": self.name, "path": self.path.to_string_lossy(), "reconciler": self.reconciler,
            "expected": self.expected.invariants(), "got": self.got, "ok": self.ok,
        });
        if let Expectation::Rate(_, lo, hi) = &self.expected {
            v["rate"] = serde_json::json!([lo, hi]);
        }
        if let Some((verdict, runs)) = &self.seeds {
            v["observed"] = verdict.observed.clone().into();
            v["disagreeing_seeds"] = verdict.disagreeing.clone().into();
            v["matching"] = verdict.matching.into();
            v["seeds"] = runs
                .iter()
                .map(|(seed, got)| serde_json::json!({"seed": seed, "violated": got}))
                .collect::<Vec<_>>()
                .into();
        }
        v
    }

    /// The expected column: `holds`, the invariants, and a rate's range.
    fn expected_text(&self) -> String {
        let list = verdict_list(self.expected.invariants());
        match &self.expected {
            Expectation::Rate(_, lo, hi) => format!("{list} in {lo}%..{hi}%"),
            _ => list,
        }
    }

    /// The result column.
    fn result_text(&self) -> String {
        match (&self.seeds, self.ok) {
            (Some((v, _)), true) => format!("ok: {}", v.observed),
            (Some((v, _)), false) if v.disagreeing.is_empty() => format!("FAILED: {}", v.observed),
            (Some((v, _)), false) => format!(
                "FAILED: {}; seeds disagreeing: {}",
                v.observed,
                case_list(&v.disagreeing)
            ),
            (None, true) => "ok".to_string(),
            (None, false) => format!("FAILED (got {})", verdict_list(&self.got)),
        }
    }
}

/// A scenario's name in the table: its file stem, or for a fuzz case's `scenario.yaml` the
/// case directory's name.
fn check_name(f: &Path) -> String {
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().to_string());
    match (stem(f), f.parent().and_then(|d| d.file_name())) {
        (Some(s), Some(dir)) if s == "scenario" => dir.to_string_lossy().to_string(),
        (s, _) => s.unwrap_or_default(),
    }
}

/// Run `s` against every reconciler in its `expect`, once or (`--seeds N`) at N seeds.
/// Each expectation of `s` judged once (the file's seed) or over `seeds` seeds; the runs spread
/// over `jobs` threads and collected in (expectation, seed) order.
fn check_scenario(
    f: &Path,
    s: &Scenario,
    seeds: Option<u64>,
    jobs: usize,
) -> Result<Vec<CheckRow>, String> {
    let seed_list: Vec<Option<u64>> = match seeds {
        None => vec![None],
        Some(n) => sweep::seeds_of(s, n)?.into_iter().map(Some).collect(),
    };
    let tasks: Vec<(usize, Option<u64>)> = (0..s.expect.len())
        .flat_map(|i| seed_list.iter().map(move |&seed| (i, seed)))
        .collect();
    let runs = par_map(&tasks, jobs, |&(i, seed)| {
        scenario::run_with(s, &s.expect[i].0, seed).map_err(|e| e.0)
    });
    let mut runs = runs.into_iter();
    let mut rows = Vec::new();
    for (profile, expected) in &s.expect {
        let mine: Vec<RunReport> = runs
            .by_ref()
            .take(seed_list.len())
            .collect::<Result<_, _>>()?;
        let (got, ok, over_seeds) = match seeds {
            None => {
                let ok = scenario::judge(&mine[0], expected).is_ok();
                (mine[0].violated().into_iter().collect(), ok, None)
            }
            Some(_) => {
                let outcomes: Vec<(u64, BTreeSet<String>)> = seed_list
                    .iter()
                    .zip(&mine)
                    .map(|(seed, r)| (seed.unwrap_or(1), r.violated()))
                    .collect();
                let verdict = sweep::judge_seeds(expected, &outcomes);
                let runs: Vec<(u64, Vec<String>)> = outcomes
                    .into_iter()
                    .map(|(seed, g)| (seed, g.into_iter().collect()))
                    .collect();
                let got = runs[0].1.clone();
                (got, verdict.ok, Some((verdict, runs)))
            }
        };
        rows.push(CheckRow {
            path: f.to_path_buf(),
            name: check_name(f),
            reconciler: profile.name.clone(),
            expected: expected.clone(),
            got,
            ok,
            seeds: over_seeds,
        });
    }
    Ok(rows)
}

fn cmd_check(a: CheckArgs) -> ExitCode {
    let files = match scenario_files(&a.paths) {
        Ok(f) => f,
        Err(m) => return usage_error(&m),
    };
    let jobs = capped_jobs(a.jobs);
    let pb = progress(files.len() as u64, !a.json, "check");
    let mut rows = Vec::new();
    for f in &files {
        pb.set_message(f.display().to_string());
        let s = match Scenario::load(f) {
            Ok(s) => s,
            Err(e) => return input_error(e),
        };
        if s.expect.is_empty() {
            pb.finish_and_clear();
            return input_error(format!(
                "{}: expect: missing: `check` judges a scenario by its `expect` block and this \
                 one has none (add `expect:`, e.g. `v0.10.0: holds`, or run it with `lws-sim run`)",
                f.display()
            ));
        }
        match check_scenario(f, &s, a.seeds, jobs) {
            Ok(r) => rows.extend(r),
            Err(e) => return input_error(e),
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let failed = rows.iter().filter(|r| !r.ok).count();
    if a.json {
        say!(
            "{}",
            serde_json::json!({
                "results": rows.iter().map(CheckRow::json).collect::<Vec<_>>(),
                "met": rows.len() - failed, "total": rows.len(),
            })
        );
    } else {
        for line in check_table(&rows) {
            say!("{line}");
        }
        say!(
            "{} of {} expectations met ({} scenario{}{}{})",
            rows.len() - failed,
            rows.len(),
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            a.seeds
                .map_or(String::new(), |n| format!(", {n} seeds each")),
            if failed > 0 {
                format!(", {failed} FAILED")
            } else {
                String::new()
            }
        );
    }
    ExitCode::from(u8::from(failed > 0))
}

/// Columns of the check table, widest first allowed; the table fits in 100 columns.
const TABLE_WIDTH: usize = 100;
/// A reconciler SPEC longer than this is shown as its profile and a footnote mark.
const SPEC_SHORT: usize = 14;

/// `holds` or the invariants, comma-separated.
fn verdict_list(v: &[String]) -> String {
    if v.is_empty() {
        "holds".into()
    } else {
        v.join(",")
    }
}

/// A file name as the table shows it: control characters (an escape sequence, a newline in
/// the name) escaped, so a name cannot redraw the terminal or break a row.
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` in lines of at most `width` characters, broken after commas where possible.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(4);
    let parts: Vec<&str> = text.split(',').collect();
    let mut lines = vec![String::new()];
    for (i, part) in parts.iter().enumerate() {
        let token = if i + 1 < parts.len() {
            format!("{part},")
        } else {
            part.to_string()
        };
        for piece in token.chars().collect::<Vec<_>>().chunks(width) {
            let piece: String = piece.iter().collect();
            let last = lines.last_mut().expect("one line at least");
            if last.chars().count() + piece.chars().count() <= width {
                last.push_str(&piece);
            } else {
                lines.push(piece);
            }
        }
    }
    lines
}

/// The check table's lines: scenario, reconciler (long SPECs footnoted), expected, result;
/// long cells wrap within their column.
fn check_table(rows: &[CheckRow]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let mut cells: Vec<[String; 4]> = vec![[
        "scenario".into(),
        "reconciler".into(),
        "expected".into(),
        "result".into(),
    ]];
    for r in rows {
        let rec = if r.reconciler.len() <= SPEC_SHORT {
            r.reconciler.clone()
        } else {
            let n = match notes.iter().position(|n| *n == r.reconciler) {
                Some(i) => i + 1,
                None => {
                    notes.push(r.reconciler.clone());
                    notes.len()
                }
            };
            let base = r.reconciler.split(',').next().unwrap_or_default();
            format!("{base} [{n}]")
        };
        cells.push([printable(&r.name), rec, r.expected_text(), r.result_text()]);
    }
    let natural = |c: usize| {
        cells
            .iter()
            .map(|r| r[c].chars().count())
            .max()
            .unwrap_or(0)
    };
    let w0 = natural(0).min(36);
    let w1 = natural(1).min(SPEC_SHORT + 5);
    let rest = TABLE_WIDTH - w0 - w1 - 6;
    let w2 = natural(2)
        .min(rest / 2)
        .max(rest.saturating_sub(natural(3)));
    let w2 = w2.min(natural(2));
    let w3 = TABLE_WIDTH - w0 - w1 - w2 - 6;
    let mut out = Vec::new();
    for r in &cells {
        let cols = [
            wrap(&r[0], w0),
            wrap(&r[1], w1),
            wrap(&r[2], w2),
            wrap(&r[3], w3),
        ];
        let height = cols.iter().map(Vec::len).max().unwrap_or(1);
        for i in 0..height {
            let c = |k: usize| cols[k].get(i).map_or("", String::as_str);
            let line = format!("{:<w0$}  {:<w1$}  {:<w2$}  {}", c(0), c(1), c(2), c(3));
            out.push(line.trim_end().to_string());
        }
    }
    for (i, n) in notes.iter().enumerate() {
        out.extend(wrap(&format!("[{}] {n}", i + 1), TABLE_WIDTH));
    }
    out
}

/// Whether files can be made in `dir` (a campaign's `--out` is tried before its first case,
/// not after its last).
fn writable(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(".lws-sim-writable");
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Make a directory the simulator writes its own files into (`--out`, a case directory): a
/// symbolic link in its place is refused, never written through.
fn output_dir(dir: &Path) -> std::io::Result<()> {
    if dir
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_file())
    {
        return Err(std::io::Error::other(
            "not a directory (a file is in its place)",
        ));
    }
    std::fs::create_dir_all(dir)?;
    if dir.symlink_metadata()?.is_dir() {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "not a directory (a symbolic link is never written through)",
        ))
    }
}

/// Create (or truncate) a file in such a directory: an existing path that is not a regular
/// file (a symbolic link, a FIFO, a directory) is refused, never written through or waited on.
fn create_output(path: &Path) -> std::io::Result<File> {
    match path.symlink_metadata() {
        Ok(m) if !m.file_type().is_file() => Err(std::io::Error::other(
            "not a regular file (a symbolic link or a special file is never written through)",
        )),
        _ => File::create(path),
    }
}

fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    create_output(path)?.write_all(bytes)
}

/// Write a scenario held in memory into `dir`: its manifests, and the scenario as `file`.
fn write_scenario(dir: &Path, file: &str, s: &ScenarioFiles) -> Result<PathBuf, String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    output_dir(dir).map_err(|e| io(dir, e))?;
    for (name, text) in &s.manifests {
        let path = dir.join(name);
        write_output(&path, text.as_bytes()).map_err(|e| io(&path, e))?;
    }
    let path = dir.join(file);
    write_output(&path, s.yaml().as_bytes()).map_err(|e| io(&path, e))?;
    Ok(path)
}

/// Replay a written failure with the timeline recorded, and draw it beside the file
/// (`scenario.yaml` → `scenario.svg`).
fn write_picture_beside(scenario_file: &Path, profile: &Profile) -> Result<PathBuf, String> {
    let s = Scenario::load(scenario_file).map_err(|e| e.to_string())?;
    let opts = RunOptions {
        seed: None,
        timeline: true,
        progress: None,
    };
    let r = scenario::run_with_options(&s, profile, opts).map_err(|e| e.0)?;
    let svg = scenario_file.with_extension("svg");
    let f = create_output(&svg).map_err(|e| format!("{}: {e}", svg.display()))?;
    write_svg((svg.clone(), f), &r)?;
    Ok(svg)
}

/// `f` over `items` on `jobs` threads, each taking a strided share (items `j`, `j + jobs`, ...;
/// one run never spans threads); the results in `items`' order, so `jobs` never changes them.
fn par_map<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if jobs <= 1 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                s.spawn(move || {
                    let mine = items.iter().enumerate().skip(j).step_by(jobs);
                    mine.map(|(i, t)| (i, f(t))).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, R)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, r)| r).collect()
    })
}

/// `--jobs`, capped at the machine's available parallelism (with a note on stderr).
fn capped_jobs(asked: u64) -> usize {
    let avail = std::thread::available_parallelism().map_or(1, |n| n.get());
    match usize::try_from(asked) {
        Ok(j) if j <= avail => j,
        _ => {
            eprintln!(
                "note: --jobs {asked} capped at {avail}, this machine's available parallelism"
            );
            avail
        }
    }
}

/// Run cases until `--cases` are done, `--time` is up or the shard runs out of indices: the
/// summary of how many ran, the failing ones and those that could not run.
fn run_campaign(a: &FuzzArgs, jobs: usize, campaign: &mut Campaign, started: Instant) -> Summary {
    let mut summary = Summary::new(campaign, 0, a.save_all);
    let mut done = 0u64;
    let mut last_report = Instant::now();
    let pb = match (a.cases, a.time) {
        (Some(n), _) => progress(n, true, "fuzz"),
        (None, t) => progress(t.unwrap_or(0) / 1000, true, "fuzz (s)"),
    };
    loop {
        let out_of_cases = a.cases.is_some_and(|n| done >= n);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        if out_of_cases || a.time.is_some_and(|t| elapsed_ms >= t) {
            break;
        }
        let full = jobs as u64 * 4;
        let batch = a.cases.map_or(full, |n| (n - done).min(full));
        let indices = campaign.next_batch(batch);
        if indices.is_empty() {
            break;
        }
        for r in par_map(&indices, jobs, |&i| campaign.check(i)) {
            done += 1;
            if let Some(e) = &r.error {
                pb.suspend(|| eprintln!("case {} could not run: {e}", r.index));
            }
            summary.record(&r);
        }
        let rate = done as f64 / started.elapsed().as_secs_f64();
        let msg = format!(
            "{done} cases, {} failing, {rate:.0} cases/s",
            summary.failures.len()
        );
        match a.cases {
            Some(_) => pb.set_position(done),
            None => pb.set_position(started.elapsed().as_secs()),
        }
        pb.set_message(msg.clone());
        if pb.is_hidden() && last_report.elapsed().as_millis() >= 1000 {
            eprintln!("  {msg}");
            last_report = Instant::now();
        }
    }
    pb.finish_and_clear();
    summary.ran[0].cases = done;
    summary
}

/// `--save-all`: every failing case as it was generated, in `DIR/case-N/`.
fn save_all(a: &FuzzArgs, campaign: &Campaign, failures: &[Failure]) -> Result<(), String> {
    for f in failures {
        let files = campaign.failure_files(&campaign.case(f.case), &f.violated, "");
        write_scenario(
            &a.out.join(format!("case-{}", f.case)),
            "scenario.yaml",
            &files,
        )?;
    }
    Ok(())
}

/// Shrink the first case that broke `invariant`, write it with its picture, and print where.
fn write_minimized(
    a: &FuzzArgs,
    campaign: &Campaign,
    invariant: &str,
    cases: &[u64],
) -> Result<Minimized, String> {
    let first = cases[0];
    let shrunk = campaign.shrink(first, invariant, 200)?;
    let (small, report) = (&shrunk.case, &shrunk.report);
    let violated: Vec<String> = report.violated().into_iter().collect();
    let note = format!(
        "Minimized from {} steps to {}; expect trace hash {:016x}.",
        shrunk.original.step_count(),
        small.step_count(),
        report.trace_hash
    );
    let files = campaign.failure_files(small, &violated, &note);
    let m = Minimized {
        invariant: invariant.to_string(),
        case: first,
        dir: format!("{invariant}-case-{first}"),
        steps: small.step_count(),
        groups: small.replicas,
        size: small.size,
    };
    let p = write_scenario(&a.out.join(&m.dir), "scenario.yaml", &files)?;
    let svg = write_picture_beside(&p, &a.reconciler)?;
    say!("{}", minimized_line(&m, cases, &p, &svg));
    Ok(m)
}

/// The summary's line for one invariant: how many cases broke it, which, and where its
/// minimized scenario is.
fn minimized_line(m: &Minimized, cases: &[u64], scenario: &Path, svg: &Path) -> String {
    format!(
        "{}: {} cases ({}), first case {}; minimized to {} steps, {} groups of {}: lws-sim run {} (picture: {})",
        m.invariant,
        cases.len(),
        case_list(cases),
        m.case,
        m.steps,
        m.groups,
        m.size,
        scenario.display(),
        svg.display()
    )
}

/// Write a summary as `DIR/summary.json`.
fn write_summary(dir: &Path, s: &Summary) -> Result<(), String> {
    let path = dir.join(summary::FILE);
    write_output(&path, s.json().as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Run a campaign: case indices of this shard, in batches over `jobs` threads; results are
/// taken in index order, so `--jobs` never changes what is found. Then one minimized scenario
/// per distinct invariant, from the first case that broke it, and last `summary.json` (so a
/// directory with one holds a finished shard).
fn cmd_fuzz(a: FuzzArgs) -> ExitCode {
    let started = Instant::now();
    if let Err(e) = a.workload.check_reconciler(&a.reconciler) {
        return input_error(e);
    }
    // What an earlier campaign left goes first: only a finished one writes a summary again.
    let ready = output_dir(&a.out)
        .and_then(|_| writable(&a.out))
        .map_err(|e| format!("--out {}: {e}", a.out.display()))
        .and_then(|_| forget_earlier_campaign(&a.out));
    if let Err(e) = ready {
        return input_error(e);
    }
    let jobs = capped_jobs(a.jobs);
    eprintln!(
        "fuzz {} seed {} shard {}/{} jobs {jobs} workload {}",
        a.reconciler.name,
        a.seed,
        a.shard.0,
        a.shard.1,
        a.workload.as_str()
    );
    let mut campaign =
        Campaign::new(a.seed, a.reconciler.clone(), a.shard).with_workload(a.workload);
    let mut summary = run_campaign(&a, jobs, &mut campaign, started);
    let (done, elapsed) = (summary.cases(), started.elapsed().as_secs_f64());
    say!(
        "{done} cases in {elapsed:.1}s ({:.0} cases/s), {} failing",
        done as f64 / elapsed,
        summary.failures.len()
    );
    if campaign.exhausted() {
        eprintln!(
            "note: shard {}/{} has no case index left (indices end at {}): it ran all {done}",
            a.shard.0,
            a.shard.1,
            u64::MAX
        );
    }
    if a.save_all {
        if let Err(e) = save_all(&a, &campaign, &summary.failures) {
            return input_error(e);
        }
    }
    for (invariant, cases) in &summary.by_invariant() {
        match write_minimized(&a, &campaign, invariant, cases) {
            Ok(m) => summary.minimized.push(m),
            Err(e) => return input_error(e),
        }
    }
    if let Err(e) = write_summary(&a.out, &summary) {
        return input_error(e);
    }
    ExitCode::from(u8::from(!summary.failures.is_empty()))
}

/// Remove from `out` what the campaign whose `summary.json` is there wrote: its minimized case
/// directories, its saved cases (`--save-all`), then the summary. Left in place, `check DIR`
/// would run an earlier campaign's cases beside the new ones. Nothing else in `out` is touched:
/// only directories the summary names, each a plain name inside `out` (a summary naming
/// `../x` or `/x` is not followed). A summary that does not read as one is an error naming
/// it: removing it alone would leave its campaign's cases for `check DIR` to run.
fn forget_earlier_campaign(out: &Path) -> Result<(), String> {
    let path = out.join(summary::FILE);
    let io = |p: &Path, e: std::io::Error| format!("--out {}: {e}", p.display());
    if path.symlink_metadata().is_err() {
        return Ok(());
    }
    let earlier = scenario::read_text(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| Summary::parse(&t))
        .map_err(|e| {
            format!(
                "--out {}: an earlier campaign's summary that does not read ({e}): its case \
                 directories cannot be told from other files; remove the directory or choose \
                 another --out",
                path.display()
            )
        })?;
    let mut dirs: Vec<String> = earlier.minimized.iter().map(|m| m.dir.clone()).collect();
    if earlier.save_all {
        dirs.extend(earlier.failures.iter().map(|f| format!("case-{}", f.case)));
    }
    for d in dirs {
        let plain = matches!(
            Path::new(&d).components().collect::<Vec<_>>()[..],
            [std::path::Component::Normal(_)]
        );
        let dir = out.join(&d);
        let is_dir = dir.symlink_metadata().is_ok_and(|m| m.is_dir());
        if plain && is_dir {
            std::fs::remove_dir_all(&dir).map_err(|e| io(&dir, e))?;
        }
    }
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&path, e)),
        _ => Ok(()),
    }
}

/// Each shard directory's `summary.json`, labelled by the directory.
fn read_summaries(dirs: &[PathBuf]) -> Result<Vec<(String, Summary)>, String> {
    dirs.iter()
        .map(|d| {
            let label = d.display().to_string();
            let path = d.join(summary::FILE);
            // Bounded and regular files only, as scenarios are read (a FIFO or /dev/zero
            // named summary.json would block or exhaust memory).
            let text = scenario::read_text(&path).map_err(|e| {
                format!(
                    "{label}: no readable {} ({e}): not the --out directory of a finished \
                     `lws-sim fuzz` (leave out a shard that did not finish)",
                    summary::FILE
                )
            })?;
            let s = Summary::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok((label, s))
        })
        .collect()
}

/// Copy the files of directory `from` into `to` (created). A case directory holds plain files
/// a campaign wrote: anything else in it (a directory, a symbolic link, a FIFO, a device, a
/// file over `FILE_BYTES_MAX`) is refused, naming it, never followed or read.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let kind = from
        .symlink_metadata()
        .map_err(|e| io(from, e))?
        .file_type();
    if !kind.is_dir() {
        return Err(format!(
            "{}: not a directory a campaign wrote (a symbolic link or a special file)",
            from.display()
        ));
    }
    output_dir(to).map_err(|e| io(to, e))?;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(from)
        .map_err(|e| io(from, e))?
        .map(|e| e.map(|e| e.path()).map_err(|e| io(from, e)))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for src in entries {
        let dst = to.join(src.file_name().unwrap_or_default());
        let meta = src.symlink_metadata().map_err(|e| io(&src, e))?;
        if !meta.file_type().is_file() {
            return Err(format!(
                "{}: not a file a campaign wrote (a directory, a symbolic link or a special file)",
                src.display()
            ));
        } else if meta.len() > lws_sim::scenario::limits::FILE_BYTES_MAX {
            return Err(format!(
                "{}: larger than the limit of {} bytes (16 MiB) for a file in a case directory",
                src.display(),
                lws_sim::scenario::limits::FILE_BYTES_MAX
            ));
        } else {
            let mut from = File::open(&src).map_err(|e| io(&src, e))?;
            let mut to = create_output(&dst).map_err(|e| io(&dst, e))?;
            std::io::copy(&mut from, &mut to).map_err(|e| io(&dst, e))?;
        }
    }
    Ok(())
}

/// Whether `out` is one of `dirs` or inside one (however spelt; `out` need not exist yet:
/// its nearest existing ancestor is resolved and the rest appended).
fn is_within_one_of(out: &Path, dirs: &[PathBuf]) -> bool {
    let Some(o) = resolve_partly(out) else {
        return false;
    };
    dirs.iter()
        .filter_map(|d| d.canonicalize().ok())
        .any(|d| o.starts_with(d))
}

/// `path` with its longest existing prefix canonicalized, the components after it kept.
fn resolve_partly(path: &Path) -> Option<PathBuf> {
    let absolute = std::env::current_dir().ok()?.join(path);
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(c) = at.canonicalize() {
            return Some(rest.iter().rev().fold(c, |p, n| p.join(n)));
        }
        rest.push(at.file_name()?.to_os_string());
        at = at.parent()?;
    }
}

/// A note on stderr naming the shards no directory holds.
fn note_missing(m: &Merged, given: usize, n: u64) {
    if m.missing.count == 0 {
        return;
    }
    let named: Vec<String> = m.missing.first.iter().map(|i| format!("{i}/{n}")).collect();
    let more = m.missing.count - m.missing.first.len() as u64;
    let more = if more > 0 {
        format!(", ... and {more} more")
    } else {
        String::new()
    };
    eprintln!(
        "note: {} of {n} shards missing ({}{more}); merged the {given} given: the summary covers only their cases",
        m.missing.count,
        named.join(", ")
    );
}

/// `fuzz merge`: read each shard's summary, merge, copy the minimized scenarios (and saved
/// cases) into `--out` with the merged `summary.json`, and print the summary a campaign prints.
fn cmd_fuzz_merge(a: MergeArgs) -> ExitCode {
    let inputs = match read_summaries(&a.dirs) {
        Ok(i) => i,
        Err(e) => return input_error(e),
    };
    if is_within_one_of(&a.out, &a.dirs) {
        return usage_error(
            "--out is one of the shard directories or inside one; merge into another",
        );
    }
    let ready = output_dir(&a.out)
        .and_then(|_| writable(&a.out))
        .map_err(|e| format!("--out {}: {e}", a.out.display()));
    if let Err(e) = ready {
        return input_error(e);
    }
    let n = inputs[0].1.shards;
    let merged = match summary::merge(&inputs) {
        Ok(m) => m,
        Err(e) => return input_error(e),
    };
    note_missing(&merged, inputs.len(), n);
    let s = &merged.summary;
    for e in &s.errors {
        eprintln!("case {} could not run: {}", e.case, e.error);
    }
    let copied = forget_earlier_campaign(&a.out).and_then(|_| {
        merged
            .copies
            .iter()
            .try_for_each(|c| copy_dir(&a.dirs[c.input].join(&c.dir), &a.out.join(&c.dir)))
    });
    let copied = copied.and_then(|_| minimized_load(&a.out, &s.minimized));
    if let Err(e) = copied.and_then(|_| write_summary(&a.out, s)) {
        return input_error(e);
    }
    say!(
        "{} cases merged from {} of {n} shards, {} failing",
        s.cases(),
        inputs.len(),
        s.failures.len()
    );
    let by_invariant = s.by_invariant();
    for m in &s.minimized {
        let p = a.out.join(&m.dir).join("scenario.yaml");
        say!(
            "{}",
            minimized_line(m, &by_invariant[&m.invariant], &p, &p.with_extension("svg"))
        );
    }
    ExitCode::from(u8::from(!s.failures.is_empty()))
}

/// Each minimized scenario copied into `out` loads, as `lws-sim run` would load it: a shard
/// whose case directory was damaged is exit 2 naming the file, not a replay command that fails
/// later.
fn minimized_load(out: &Path, minimized: &[summary::Minimized]) -> Result<(), String> {
    for m in minimized {
        let p = out.join(&m.dir).join("scenario.yaml");
        Scenario::load(&p).map_err(|e| format!("minimized scenario of the merge: {e}"))?;
    }
    Ok(())
}

/// `3, 17, 40` or, past ten, `3, 17, ... and 12 more`.
fn case_list(cases: &[u64]) -> String {
    let shown: Vec<String> = cases.iter().take(10).map(u64::to_string).collect();
    match cases.len().saturating_sub(10) {
        0 => shown.join(", "),
        more => format!("{}, ... and {more} more", shown.join(", ")),
    }
}

/// Write one minimized finding (`keep`, the original steps it kept, and its run) as
/// `OUT/INVARIANT-CAUSE.yaml` with its picture beside it, and print where.
fn write_finding(
    (a, out): (&ExploreArgs, &Path),
    s: &Scenario,
    ex: &Exploration,
    (invariant, cause): (&str, &str),
    f: &Finding,
    (keep, run): (Vec<usize>, RunReport),
) -> Result<(), String> {
    let points: Vec<u64> = ex
        .findings
        .iter()
        .filter(|g| g.perturbation.cause() == cause && g.new.contains(invariant))
        .map(|g| g.perturbation.point())
        .collect();
    let violated: Vec<String> = run.violated().into_iter().collect();
    let parent = scenario::dir_of(&a.path);
    let dir = parent.canonicalize().unwrap_or(parent.to_path_buf());
    let spec = explore::perturbed_spec(
        s,
        f.perturbation,
        &keep,
        &a.reconciler.name,
        &violated,
        &dir,
    );
    let file = out.join(format!("{invariant}-{cause}.yaml"));
    output_dir(out)
        .and_then(|_| write_output(&file, scenario::spec_yaml(&spec).as_bytes()))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let svg = write_picture_beside(&file, &a.reconciler)?;
    say!(
        "{invariant} via {cause}: {} perturbations (at {}), first {}; minimized to {} of {} steps: lws-sim run {} (picture: {})",
        points.len(),
        case_list(&points),
        f.perturbation.yaml(),
        keep.len() + 1,
        s.steps.len() + 1,
        file.display(),
        svg.display()
    );
    Ok(())
}

/// The perturbed runs of an exploration over `jobs` threads, with a progress bar; `Plan::finish`
/// takes their outcomes in perturbation order, so `--jobs` never changes the result.
fn run_exploration(a: &ExploreArgs, s: &Scenario, jobs: usize) -> Result<Exploration, String> {
    let plan = explore::Plan::new(s, &a.reconciler, a.max).map_err(|e| e.0)?;
    let indices: Vec<usize> = (0..plan.perturbations.len()).collect();
    let pb = progress(indices.len() as u64, true, "explore");
    let outcomes = par_map(&indices, jobs, |&i| {
        let outcome = plan.try_one(i);
        pb.inc(1);
        outcome
    });
    pb.finish_and_clear();
    plan.finish(outcomes).map_err(|e| e.0)
}

/// Minimize each distinct finding (over `jobs` threads), then write them in order.
fn write_findings(
    a: &ExploreArgs,
    out: &Path,
    s: &Scenario,
    ex: &Exploration,
    jobs: usize,
) -> Result<(), String> {
    let distinct: Vec<_> = ex.distinct().into_iter().collect();
    let minimized = par_map(&distinct, jobs, |((invariant, _), f)| {
        explore::minimize(s, f.perturbation, &a.reconciler, invariant)
    });
    for (((invariant, cause), f), m) in distinct.iter().zip(minimized) {
        let m = m.map_err(|e| e.0)?;
        write_finding((a, out), s, ex, (invariant, cause), f, m)?;
    }
    Ok(())
}

/// Remove the findings an earlier exploration wrote to `out` (`<invariant>-<cause>.yaml` and
/// its `.svg`, for every invariant and cause name): left in place, `check DIR` would run a
/// finding this exploration no longer makes beside the new ones. A symbolic link of such a
/// name is removed too (not what it points at); a FIFO, a directory or another special file
/// there is refused before the exploration starts. Nothing else is touched.
fn forget_earlier_findings(out: &Path) -> std::io::Result<()> {
    for inv in lws_sim::invariants::InvariantId::ALL {
        for cause in lws_sim::explore::Perturbation::CAUSES {
            for ext in ["yaml", "svg"] {
                let f = out.join(format!("{}-{cause}.{ext}", inv.as_str()));
                let Ok(m) = f.symlink_metadata() else {
                    continue;
                };
                if m.is_file() || m.file_type().is_symlink() {
                    std::fs::remove_file(&f)?;
                } else {
                    let e = format!(
                        "{}: not a regular file (a finding is written there)",
                        f.display()
                    );
                    return Err(std::io::Error::other(e));
                }
            }
        }
    }
    Ok(())
}

fn cmd_explore(a: ExploreArgs) -> ExitCode {
    let out = a.out.clone().unwrap_or_else(|| {
        let stem = a.path.file_stem().map(|s| s.to_string_lossy().to_string());
        PathBuf::from(format!("explore-{}", stem.unwrap_or_default()))
    });
    let s = match Scenario::load(&a.path) {
        Ok(s) => s,
        Err(e) => return input_error(e),
    };
    // The output directory is made before the exploration, so a bad `--out` is said at once.
    let ready = output_dir(&out).and_then(|_| forget_earlier_findings(&out));
    if let Err(e) = ready {
        return input_error(format!("--out {}: {e}", out.display()));
    }
    let jobs = capped_jobs(a.jobs);
    let started = Instant::now();
    let ex = match run_exploration(&a, &s, jobs) {
        Ok(x) => x,
        Err(e) => return input_error(e),
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
    if let Err(e) = write_findings(&a, &out, &s, &ex, jobs) {
        return input_error(e);
    }
    ExitCode::from(u8::from(!ex.findings.is_empty()))
}

/// Run a sweep's tasks over `jobs` threads; `Sweep::collect` puts them back in order, so
/// `--jobs` never changes the result (nor which error is reported: the first in task order).
fn run_sweep(
    sw: &Sweep,
    jobs: usize,
    pb: &ProgressBar,
) -> Result<Vec<sweep::PointResult>, scenario::RunError> {
    let (scenarios, tasks) = sw.tasks()?;
    let done = par_map(&tasks, jobs, |&t| {
        let o = sw.run_task(&scenarios, t);
        pb.inc(1);
        o.map(|o| (t, o))
    });
    Ok(sw.collect(done.into_iter().collect::<Result<Vec<_>, _>>()?))
}

fn cmd_sweep(a: SweepArgs) -> ExitCode {
    if a.vary.len() > 2 {
        return usage_error("--vary takes one or two parameters");
    }
    if a.vary.len() == 2 && a.vary[0].path == a.vary[1].path {
        return usage_error("the two --vary parameters name the same field");
    }
    let s = match Scenario::load(&a.path) {
        Ok(s) => s,
        Err(e) => return input_error(e),
    };
    let profile = match &a.reconciler {
        Some(p) => p.clone(),
        None => match s.reconciler(None) {
            Ok(p) => p,
            Err(e) => return input_error(e),
        },
    };
    if let Err(e) = sweep::seeds_of(&s, a.seeds) {
        return input_error(e);
    }
    let jobs = capped_jobs(a.jobs);
    let sw = Sweep {
        scenario: s,
        profile,
        params: a.vary.clone(),
        steps: a.steps,
        seeds: a.seeds,
    };
    let total = (sw.points().len() as u64).saturating_mul(a.seeds);
    if total > sweep::SWEEP_RUNS_MAX {
        return usage_error(&format!(
            "--seeds {} at {} grid points is {total} runs, over the limit of {} runs per sweep (SWEEP_RUNS_MAX): fewer --steps or --seeds",
            a.seeds,
            sw.points().len(),
            sweep::SWEEP_RUNS_MAX
        ));
    }
    let pb = progress(total, !a.json, "sweep");
    let started = Instant::now();
    let results = match run_sweep(&sw, jobs, &pb) {
        Ok(r) => r,
        Err(e) => return input_error(e.0),
    };
    pb.finish_and_clear();
    if a.json {
        say!(
            "{}",
            serde_json::json!({
                "scenario": sw.scenario.spec.name,
                "reconciler": sw.profile.name,
                "seeds": sw.seed_list(),
                "points": results.iter().map(|r| r.json(&sw.params)).collect::<Vec<_>>(),
            })
        );
    } else {
        let seeds = sw.seed_list();
        say!(
            "{} [{}]: {} points x {} seeds (seeds {}..={}), {:.1}s",
            a.path.display(),
            sw.profile.name,
            results.len(),
            a.seeds,
            seeds[0],
            seeds[seeds.len() - 1],
            started.elapsed().as_secs_f64()
        );
        for line in sweep::table(&sw.params, &results) {
            say!("{line}");
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::command().after_long_help(profiles_and_flags());
    let cli = match cli.try_get_matches() {
        Ok(m) => <Cli as clap::FromArgMatches>::from_arg_matches(&m).unwrap_or_else(|e| e.exit()),
        // Help and version print and exit 0; usage errors exit 2 (clap's codes). Help that
        // could not be written (stdout full or closed) is an error like any other output's.
        Err(e) => {
            if let Err(w) = e.print() {
                let _ = STDOUT_ERROR.set(w.kind());
            }
            let code = u8::try_from(e.exit_code()).unwrap_or(2);
            return finish(ExitCode::from(code));
        }
    };
    let code = match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Check(a) => cmd_check(a),
        Command::Fuzz(FuzzCmd {
            merge: Some(FuzzSub::Merge(a)),
            ..
        }) => cmd_fuzz_merge(a),
        Command::Fuzz(FuzzCmd { run: Some(a), .. }) => cmd_fuzz(a),
        Command::Fuzz(_) => usage_error("fuzz takes --reconciler SPEC or `merge DIR...`"),
        Command::Explore(a) => cmd_explore(a),
        Command::Sweep(a) => cmd_sweep(a),
        Command::Serve(a) => lws_sim::serve::cli(a),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "lws-sim", &mut script);
            if let Err(e) = std::io::stdout().lock().write_all(&script) {
                let _ = STDOUT_ERROR.set(e.kind());
            }
            ExitCode::SUCCESS
        }
    };
    finish(code)
}

#[cfg(test)]
mod tests {
    use super::{printable, wrap};

    /// A file name cannot redraw the terminal or break a row of the check table; a row is as
    /// wide as its characters, not its bytes.
    #[test]
    fn table_cells_are_printable_and_wrap_by_characters() {
        assert_eq!(
            printable("\u{1b}[31mred\nnl.yaml"),
            "\\u{1b}[31mred\\nnl.yaml"
        );
        assert_eq!(wrap("éééé,éééé", 5), ["éééé,", "éééé"]);
    }
}
