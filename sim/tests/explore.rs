//! `explore`: perturbations of a reference run; findings are replayable scenarios; `--jobs`
//! never changes what is found, printed or written.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

use lws::profile::Profile;
use lws_sim::explore::{explore, minimize, perturbed, perturbed_spec, Perturbation, Plan};
use lws_sim::scenario::{run, run_with, spec_yaml, Scenario};

fn scenario(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name);
    Scenario::load(&p).unwrap()
}

fn profile(spec: &str) -> Profile {
    Profile::parse(spec).unwrap()
}

/// The finding's file, written beside nothing: its manifest paths are absolute.
fn written(
    s: &Scenario,
    p: Perturbation,
    keep: &[usize],
    rec: &str,
    violated: &[String],
) -> Scenario {
    let dir = s.path.parent().unwrap().canonicalize().unwrap();
    let spec = perturbed_spec(s, p, keep, rec, violated, &dir);
    let file = std::env::temp_dir()
        .join("lws-sim-explore-test")
        .join("finding.yaml");
    Scenario::parse(&file, &spec_yaml(&spec)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_quiet_lws_survives_every_perturbation_pattern() {
    let s = scenario("quiescence-restart-and-resync.yaml");
    let ex = explore(&s, &profile("v0.4.1"), 4).unwrap();
    assert_eq!(ex.tried, 16, "4 points for each of the 4 patterns");
    let r = &ex.reference;
    assert!(r.controller_writes > 4 && r.controller_reconciles > 4 && r.controller_events > 4);
    assert!(ex.findings.is_empty(), "{:?}", ex.findings);
}

#[test]
fn a_perturbation_is_written_as_a_scenario_that_replays_it() {
    let s = scenario("quiescence-restart-and-resync.yaml");
    let v041 = profile("v0.4.1");
    let all: Vec<usize> = (0..s.steps.len()).collect();
    for p in [
        Perturbation::KillAfterWrite(3),
        Perturbation::HoldWatchEvent(5),
        Perturbation::StaleRead(4),
        Perturbation::ResyncAfterReconcile(6),
    ] {
        let direct = run_with(&perturbed(&s, p, &all), &v041, None).unwrap();
        let loaded = written(&s, p, &all, "v0.4.1", &[]);
        assert_eq!(loaded.spec.controller.reconciler.as_deref(), Some("v0.4.1"));
        assert_eq!(loaded.spec.steps[0], p.step());
        let replay = run(&loaded, None, None).unwrap();
        assert_eq!(
            replay.trace_hash,
            direct.trace_hash,
            "{}: the file replays the perturbed run",
            p.yaml()
        );
        let reference = run_with(&s, &v041, None).unwrap();
        assert_ne!(
            replay.trace_hash,
            reference.trace_hash,
            "{} changes the run",
            p.yaml()
        );
    }
}

#[test]
fn a_finding_is_minimized_to_the_steps_it_needs_and_still_replays() {
    // Under v0.3.0 killing the controller after its 56th write breaks partitionBudget, which the
    // reference run keeps (see the plan test below).
    let s = scenario("rollout.yaml");
    let reconciler = "v0.3.0";
    let p = Perturbation::KillAfterWrite(56);
    let (keep, found) = minimize(&s, p, &profile(reconciler), "partitionBudget").unwrap();
    assert!(
        keep.len() < s.steps.len(),
        "kept {keep:?} of {}",
        s.steps.len()
    );
    assert!(found.violated().contains("partitionBudget"));
    let mut unperturbed = s.clone();
    unperturbed.keep_steps(&keep);
    let reference = run_with(&unperturbed, &profile(reconciler), None).unwrap();
    assert!(
        !reference.violated().contains("partitionBudget"),
        "without the perturbation the kept steps hold"
    );
    let violated: Vec<String> = found.violated().into_iter().collect();
    let loaded = written(&s, p, &keep, reconciler, &violated);
    assert_eq!(loaded.steps.len(), keep.len() + 1);
    let replay = run(&loaded, None, None).unwrap();
    assert_eq!(
        replay.trace_hash, found.trace_hash,
        "the file replays the minimized run"
    );
}

#[test]
fn minimizing_a_timeout_keeps_the_step_that_makes_its_condition_reachable() {
    // Z09: a kill between the new revision's two LWS creates stalls the DisaggregatedSet
    // rollout, a `timeout` of the waitFor after the new-image `apply`. Dropping the `apply` also
    // times out that waitFor, without the perturbation too: the minimized file must keep it.
    let s = scenario("conformance/ds-e2e-rolling-update.yaml");
    let reconciler = profile("v0.10.0,leader-pod-watch=on");
    // The 39th controller write is the new prefill LWS (`lws-sim explore` finds this point).
    let p = Perturbation::KillAfterWrite(39);
    let all: Vec<usize> = (0..s.steps.len()).collect();
    let broken = run_with(&perturbed(&s, p, &all), &reconciler, None).unwrap();
    assert!(broken.violated().contains("timeout"), "Z09 at this point");
    let reference = run_with(&s, &reconciler, None).unwrap();
    assert!(!reference.violated().contains("timeout"));
    let (keep, found) = minimize(&s, p, &reconciler, "timeout").unwrap();
    assert!(found.violated().contains("timeout"));
    let apply = s
        .spec
        .steps
        .iter()
        .position(|st| matches!(st, lws_sim::scenario::spec::StepSpec::Apply(_)))
        .expect("the scenario applies the new image");
    assert!(keep.contains(&apply), "kept {keep:?}: the apply is needed");
}

#[test]
fn a_plans_outcomes_taken_in_any_order_make_the_same_exploration() {
    // Under v0.3.0 killing the controller after its 56th write breaks partitionBudget, which
    // the reference run keeps; 10 points of each kind include it.
    let s = scenario("rollout.yaml");
    let v030 = profile("v0.3.0");
    let serial = explore(&s, &v030, 10).unwrap();
    assert_eq!(serial.tried, 40);
    let found: Vec<Perturbation> = serial.findings.iter().map(|f| f.perturbation).collect();
    assert_eq!(found, [Perturbation::KillAfterWrite(56)]);
    let plan = Plan::new(&s, &v030, 10).unwrap();
    let backwards = (0..plan.perturbations.len()).rev().map(|i| plan.try_one(i));
    let outcomes = backwards.collect();
    let shuffled = plan.finish(outcomes).unwrap();
    assert_eq!(shuffled.tried, serial.tried);
    assert_eq!(shuffled.findings, serial.findings);
    assert_eq!(shuffled.reference.trace_hash, serial.reference.trace_hash);
}

/// `lws-sim explore` on a seed scenario with `--jobs J` into `out`: exit code and stdout, the
/// wall time and `out` masked.
fn explore_cli(name: &str, reconciler: &str, max: &str, jobs: &str, out: &Path) -> (i32, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name);
    let o = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args([
            "explore",
            path.to_str().unwrap(),
            "--reconciler",
            reconciler,
        ])
        .args(["--max", max, "--jobs", jobs, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code().unwrap();
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    let masked: Vec<String> = stdout
        .lines()
        .map(|l| {
            let l = l.replace(out.to_str().unwrap(), "OUT");
            match (l.find(" in "), l.find("s; ")) {
                (Some(a), Some(b)) if a < b => format!("{} in TIME{}", &l[..a], &l[b + 1..]),
                _ => l,
            }
        })
        .collect();
    (code, masked.join("\n"))
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn jobs_never_change_the_report_or_the_files_written() {
    let scratch = Scratch::new("explore-jobs");
    let (one, two) = (scratch.join("jobs-1"), scratch.join("jobs-2"));
    let serial = explore_cli("rollout.yaml", "v0.3.0", "10", "1", &one);
    let parallel = explore_cli("rollout.yaml", "v0.3.0", "10", "2", &two);
    assert_eq!(serial.0, 1, "a finding: {}", serial.1);
    assert!(
        serial.1.contains("tried 40 perturbations")
            && serial
                .1
                .contains("partitionBudget via kill-after-write: 1 perturbations (at 56)"),
        "{}",
        serial.1
    );
    assert_eq!(parallel, serial);
    let files = tree(&one);
    let names: Vec<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
    assert_eq!(
        names,
        [
            Path::new("partitionBudget-kill-after-write.svg"),
            Path::new("partitionBudget-kill-after-write.yaml")
        ]
    );
    assert!(tree(&two) == files, "the same files, byte for byte");
}

/// A finding's name in `--out` held by a symbolic link: the link is removed, not written
/// through (a file outside `--out` was overwritten); a FIFO there is refused at once (the
/// exploration waited on it forever).
#[cfg(unix)]
#[test]
fn explore_never_writes_through_a_link_nor_waits_on_a_fifo_in_out() {
    let scratch = Scratch::new("explore-out");
    let (out, victim) = (scratch.join("out"), scratch.join("victim.txt"));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(&victim, "VICTIM").unwrap();
    let finding = out.join("partitionBudget-kill-after-write.yaml");
    std::os::unix::fs::symlink(&victim, &finding).unwrap();
    let (code, text) = explore_cli("rollout.yaml", "v0.3.0", "10", "1", &out);
    assert_eq!(code, 1, "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "VICTIM");
    assert!(
        finding.symlink_metadata().unwrap().is_file(),
        "the finding replaced the link"
    );
    let fifo_out = scratch.join("fifo");
    std::fs::create_dir_all(&fifo_out).unwrap();
    let fifo = fifo_out.join("partitionBudget-kill-after-write.svg");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rollout.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args(["explore", path.to_str().unwrap(), "--reconciler", "v0.3.0"])
        .args([
            "--max",
            "10",
            "--jobs",
            "1",
            "--out",
            fifo_out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn explore_jobs_0_is_a_usage_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args(["explore", "x.yaml", "--reconciler", "v0.4.1", "--jobs", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--jobs"));
}

#[test]
fn a_stale_reconcile_is_followed_by_one_that_reads_the_caught_up_view() {
    // A reconcile served stale that decides to wait must not be the last one: the stale view
    // catches up, its objects are delivered at their current versions, and their handlers
    // enqueue the key again. Near the end of a rollout, a stale reconcile of the LWS reads a
    // group's worker StatefulSet from before its last pod turned Ready and waits; if nothing
    // followed it, the rollout would stop there for good (`convergence`, `timeout`), which no
    // controller sees in practice. Every reconcile of the reference run is tried.
    let s = scenario("controller-restart-mid-rollout.yaml");
    let all_fixed = profile("all-fixed");
    let reference = run_with(&s, &all_fixed, None).unwrap();
    assert!(reference.violated().is_empty());
    let last = reference.controller_reconciles;
    let all: Vec<usize> = (0..s.steps.len()).collect();
    for k in 1..=last {
        let r = run_with(
            &perturbed(&s, Perturbation::StaleRead(k), &all),
            &all_fixed,
            None,
        )
        .unwrap();
        let violated = r.violated();
        assert!(
            violated.is_empty(),
            "staleRead at reconcile {k} broke {violated:?}"
        );
    }
}

/// A manifest written inline as a block (`apply: |`) stays inline in a finding: it was taken
/// for a file's name and rebased onto the scenario's directory, and the finding did not load.
#[test]
fn a_finding_keeps_an_inline_block_manifest_inline() {
    let s = scenario("inline-block-manifests.yaml");
    let all: Vec<usize> = (0..s.steps.len()).collect();
    let p = Perturbation::KillAfterWrite(1);
    let loaded = written(&s, p, &all, "v0.10.0,gang-scheduling=volcano", &[]);
    let direct = run_with(
        &perturbed(&s, p, &all),
        &profile("v0.10.0,gang-scheduling=volcano"),
        None,
    )
    .unwrap();
    let replay = run(&loaded, None, None).unwrap();
    assert_eq!(
        replay.events, direct.events,
        "the finding runs as the perturbed run"
    );
    assert!(replay.violations.is_empty(), "{:?}", replay.violations);
}
