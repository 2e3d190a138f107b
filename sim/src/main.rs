//! The `lws-sim` command line. The only module that touches stdout, files, the wall clock and
//! exit codes: 0 every run held, 1 an invariant broke (or an expectation failed), 2 bad input.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use lws_sim::scenario::spec::Expectation;
use lws_sim::scenario::{self, RunReport, Scenario};

const USAGE: &str = "\
lws-sim: deterministic simulation of the LeaderWorkerSet controller

USAGE:
  lws-sim run SCENARIO... [--reconciler SPEC] [--seed N] [--json] [--trace FILE]
  lws-sim check PATH...
  lws-sim help

run     run each scenario; exit 0 if no invariant broke, 1 if any did, 2 on bad input
check   run every scenario (files, or *.yaml in directories) against every reconciler in its
        `expect`; print a table; exit 0 only if every expectation is met

SPEC is PROFILE[,flag=value...], e.g. v0.3.0 or v0.3.0,worker-update-strategy=OnDelete.
Profiles: v0.3.0, v0.4.1.";

struct RunArgs {
    scenarios: Vec<PathBuf>,
    reconciler: Option<String>,
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
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match a.as_str() {
            "--reconciler" => r.reconciler = Some(value("--reconciler")?),
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
    if let Some(spec) = &r.reconciler {
        lws::profile::Profile::parse(spec).map_err(|e| format!("--reconciler: {e}"))?;
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
        let report = match scenario::run(s, a.reconciler.as_deref(), a.seed) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {}", e.0);
                return ExitCode::from(2);
            }
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
        for (reconciler, expected) in &s.spec.expect {
            let report = match scenario::run(&s, Some(reconciler), None) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {}", e.0);
                    return ExitCode::from(2);
                }
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
            table.push([name, reconciler.clone(), want, verdict]);
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("check") => cmd_check(&args[1..]),
        Some("help") | Some("--help") | Some("-h") => {
            say!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => usage_error(&format!("unknown command {other:?}")),
        None => usage_error("no command given"),
    }
}
