//! The `lws-sim` binary: exit codes, messages that name file, line and field, `--json`,
//! `--trace` and `check`.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lws-sim"))
}

/// A scratch directory per test, holding a small LWS manifest.
fn scratch(name: &str) -> Scratch {
    let dir = Scratch::new(&format!("cli-{name}"));
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::write(dir.join("manifests/lws.yaml"), LWS).unwrap();
    dir
}

const LWS: &str = "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: small
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: c
          image: app:v1
";

fn scenario(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const OK: &str = "name: small
controller: {reconciler: v0.4.1}
cluster: {nodes: {count: 2, podsPerNode: 4}}
manifests: [manifests/lws.yaml]
steps:
  - waitFor: rolloutComplete
    timeout: 10m
expect:
  v0.4.1: holds
";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_passing_run_exits_0_and_json_has_the_fields() {
    let dir = scratch("pass");
    let s = scenario(&dir, "ok.yaml", OK);
    let trace = dir.join("trace.jsonl");
    let (code, out, err) = run(&[
        "run",
        s.to_str().unwrap(),
        "--json",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for k in [
        "scenario",
        "reconciler",
        "seed",
        "result",
        "violations",
        "min_available",
        "floor",
        "trace_hash",
        "sim_ms",
        "events",
        "wall_ms",
    ] {
        assert!(v.get(k).is_some(), "missing {k}: {v}");
    }
    assert_eq!(v["result"], "pass");
    let lines = std::fs::read_to_string(&trace).unwrap();
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert!(first.get("at_ms").is_some() && first.get("verb").is_some());
}

#[test]
fn a_countdown_fault_that_never_fires_is_noted_naming_its_step() {
    let dir = scratch("unfired");
    let body = OK.replace(
        "steps:\n",
        "steps:\n  - killController: {afterWrites: 100000}\n  - resync: {afterReconciles: 3}\n",
    );
    let s = scenario(&dir, "unfired.yaml", &body);
    let (code, out, err) = run(&["run", s.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 1, "the resync fired, the kill did not: {out}");
    assert!(
        notes[0].starts_with("note: unfired.yaml:6: steps[0]: killController.afterWrites never fired: the run ended ")
            && notes[0].ends_with(" controller writes short of it"),
        "{out}"
    );
    let (_, json, _) = run(&["run", s.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["notes"].as_array().map(Vec::len), Some(1), "{v}");
    let (_, plain, _) = run(&["run", scenario(&dir, "ok.yaml", OK).to_str().unwrap()]);
    assert!(!plain.contains("note: "), "{plain}");
}

#[test]
fn a_timeout_is_a_violation_and_exits_1_with_a_replay_line() {
    let dir = scratch("timeout");
    let s = scenario(
        &dir,
        "slow.yaml",
        &OK.replace("timeout: 10m", "timeout: 1s"),
    );
    let (code, out, _) = run(&["run", s.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("timeout violated"), "{out}");
    assert!(out.contains("replay: lws-sim run"), "{out}");
}

#[test]
fn bad_input_exits_2_naming_file_line_and_field() {
    let dir = scratch("bad");
    let s = scenario(&dir, "typo.yaml", &OK.replace("steps:", "stepz:"));
    let (code, _, err) = run(&["run", s.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("typo.yaml:5") && err.contains("stepz"),
        "{err}"
    );

    let s = scenario(&dir, "yaml.yaml", "name: [\n");
    let (code, _, err) = run(&["run", s.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("yaml.yaml:1"), "{err}");

    std::fs::write(
        dir.join("manifests/lws.yaml"),
        LWS.replace("image: app:v1", "imag: app:v1"),
    )
    .unwrap();
    let s = scenario(&dir, "ok.yaml", OK);
    let (code, _, err) = run(&["run", s.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("lws.yaml:13") && err.contains("imag"), "{err}");
}

#[test]
fn an_invalid_lws_is_rejected_like_the_webhook_with_exit_2() {
    let dir = scratch("invalid");
    std::fs::write(dir.join("manifests/lws.yaml"), LWS.replace("  replicas: 2", "  replicas: 2\n  rolloutStrategy:\n    rollingUpdateConfiguration: {maxUnavailable: 0, maxSurge: 0}")).unwrap();
    let s = scenario(&dir, "ok.yaml", OK);
    let (code, _, err) = run(&["run", s.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("must not be 0"), "{err}");
}

#[test]
fn bad_flags_and_reconcilers_exit_2() {
    let dir = scratch("flags");
    let s = scenario(&dir, "ok.yaml", OK);
    let p = s.to_str().unwrap();
    let (code, _, err) = run(&["run", p, "--bogus"]);
    assert_eq!(code, 2);
    assert!(err.contains("--bogus"), "{err}");
    let (code, _, err) = run(&["run", p, "--reconciler", "v9"]);
    assert_eq!(code, 2);
    assert!(err.contains("v0.3.0, v0.4.1"), "{err}");
    let (code, _, err) = run(&["run", p, "--seed", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--seed"), "{err}");
    assert_eq!(run(&["frobnicate"]).0, 2);
    assert_eq!(run(&[]).0, 2);
}

#[test]
fn help_anywhere_prints_the_usage_and_exits_0() {
    // clap's help: the command's own usage line (run's is clap's generated one).
    for (args, usage) in [
        (&["--help"][..], "lws-sim fuzz --reconciler SPEC"),
        (&["fuzz", "--help"], "lws-sim fuzz --reconciler SPEC"),
        (&["run", "x.yaml", "-h"], "lws-sim run"),
        (&["help", "check"], "lws-sim check"),
    ] {
        let (code, out, _) = run(args);
        assert_eq!(code, 0, "{args:?}");
        assert!(out.contains(usage), "{args:?}: {out}");
    }
}

#[test]
fn version_prints_the_package_version_and_exits_0() {
    for flag in ["--version", "-V"] {
        let (code, out, _) = run(&[flag]);
        assert_eq!(code, 0, "{flag}");
        assert_eq!(out.trim(), format!("lws-sim {}", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn usage_errors_exit_2_with_a_suggestion() {
    let (code, _, err) = run(&["chek", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("check"), "{err}");
    let (code, _, err) = run(&[
        "fuzz",
        "--reconciler",
        "v0.4.1",
        "--cases",
        "1",
        "--tim",
        "1s",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--time"), "{err}");
    // --cases or --time, not both and not neither.
    assert_eq!(run(&["fuzz", "--reconciler", "v0.4.1"]).0, 2);
    let both = [
        "fuzz",
        "--reconciler",
        "v0.4.1",
        "--cases",
        "1",
        "--time",
        "1s",
    ];
    assert_eq!(run(&both).0, 2);
    let (code, _, err) = run(&["fuzz", "--reconciler", "v0.4.1", "--time", "soon"]);
    assert_eq!(code, 2);
    assert!(err.contains("--time"), "{err}");
}

#[test]
fn a_negative_number_is_refused_by_the_flag_it_was_given_to() {
    for (line, flag) in [
        ("fuzz --reconciler v0.4.1 --cases -5", "--cases"),
        ("fuzz --reconciler v0.4.1 --cases 1 --seed -1", "--seed"),
        ("fuzz --reconciler v0.4.1 --cases 1 --jobs -2", "--jobs"),
        ("check scenarios --seeds -3", "--seeds"),
        (
            "sweep x.yaml --vary cluster.gcLag=1ms..1s --steps -1",
            "--steps",
        ),
        ("serve x.yaml --speed -2", "--speed"),
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{line}: {err}");
        assert!(err.contains(&format!("for '{flag} ")), "{line}: {err}");
    }
}

#[test]
fn a_shard_whose_case_indices_run_out_says_so() {
    let dir = scratch("last-shard");
    let out = dir.join("out");
    let n = u64::MAX.to_string();
    let shard = format!("{}/{n}", u64::MAX - 1);
    let (code, stdout, err) = run(&[
        "fuzz",
        "--reconciler",
        "all-fixed",
        "--cases",
        "5",
        "--shard",
        &shard,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.lines().any(|l| l.starts_with("1 cases in")),
        "{stdout}"
    );
    assert!(
        err.contains(&format!("note: shard {shard} has no case index left")),
        "{err}"
    );
}

#[test]
fn fuzz_merge_takes_directories_and_no_campaign_arguments() {
    let (code, _, err) = run(&["fuzz", "merge"]);
    assert_eq!(code, 2);
    assert!(err.contains("<DIR>"), "{err}");
    let (code, _, err) = run(&["fuzz", "--reconciler", "v0.4.1", "merge", "d"]);
    assert_eq!(code, 2);
    assert!(err.contains("merge"), "{err}");
    let dir = scratch("merge");
    let none = dir.join("no-shard");
    let out = dir.join("out");
    let (code, _, err) = run(&[
        "fuzz",
        "merge",
        none.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{}: no readable summary.json", none.display())),
        "{err}"
    );
    let (code, out, _) = run(&["fuzz", "merge", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("lws-sim fuzz merge"), "{out}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, needle) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef lws-sim"),
        ("fish", "complete -c lws-sim"),
    ] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(needle), "{shell}: {out}");
        assert!(out.contains("explore"), "{shell}");
        assert!(
            out.contains("insecure-bind"),
            "{shell}: serve's flags complete too"
        );
    }
    assert_eq!(run(&["completions", "tcsh"]).0, 2);
}

#[test]
fn jobs_are_capped_at_the_machine_and_never_overflow() {
    let dir = scratch("jobs");
    let out = dir.join("out");
    let (code, stdout, err) = run(&[
        "fuzz",
        "--reconciler",
        "all-fixed",
        "--cases",
        "2",
        "--jobs",
        "18446744073709551615",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "{stdout}{err}");
    assert!(err.contains("capped at"), "{err}");
    assert!(stdout.contains("2 cases"), "{stdout}");
    assert_eq!(
        run(&[
            "fuzz",
            "--reconciler",
            "v0.4.1",
            "--cases",
            "1",
            "--jobs",
            "0"
        ])
        .0,
        2
    );
    let too_big = [
        "fuzz",
        "--reconciler",
        "v0.4.1",
        "--cases",
        "1",
        "--jobs",
        "18446744073709551616",
    ];
    assert_eq!(run(&too_big).0, 2);
}

#[test]
fn shards_are_validated_and_the_last_shard_index_does_not_wrap() {
    for bad in ["1/1", "0/0", "3", "a/b", "0/18446744073709551616", "-1/2"] {
        let (code, _, err) = run(&[
            "fuzz",
            "--reconciler",
            "v0.4.1",
            "--cases",
            "1",
            "--shard",
            bad,
        ]);
        assert_eq!(code, 2, "{bad}: {err}");
    }
    // Shard 0 of u64::MAX holds indices 0 and u64::MAX only: asked for 3 cases, it runs 2 (a
    // wrapping index would land in another shard).
    let dir = scratch("shard");
    let out = dir.join("out");
    let (code, stdout, err) = run(&[
        "fuzz",
        "--reconciler",
        "all-fixed",
        "--cases",
        "3",
        "--shard",
        "0/18446744073709551615",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "{stdout}{err}");
    assert!(stdout.starts_with("2 cases"), "{stdout}");
}

#[test]
fn output_files_are_created_before_the_run() {
    let dir = scratch("outputs");
    let s = scenario(&dir, "ok.yaml", OK);
    for flag in ["--trace", "--timeline", "--perfetto"] {
        let bad = dir.join("no-such-dir").join("f");
        let (code, out, err) = run(&["run", s.to_str().unwrap(), flag, bad.to_str().unwrap()]);
        assert_eq!(code, 2, "{flag}: {out}{err}");
        assert!(out.is_empty(), "{flag}: ran before failing: {out}");
        assert!(err.contains("no-such-dir"), "{flag}: {err}");
    }
    let two = [
        "run",
        s.to_str().unwrap(),
        s.to_str().unwrap(),
        "--timeline",
        "x.svg",
    ];
    assert_eq!(run(&two).0, 2);
}

#[test]
fn check_reads_fuzz_output_directories_and_prints_json() {
    let dir = scratch("check-out");
    // A fuzz --out directory: case subdirectories, each a scenario.yaml and its manifests.
    let case = dir.join("out").join("availability-case-3");
    std::fs::create_dir_all(case.join("manifests")).unwrap();
    std::fs::write(case.join("manifests/lws.yaml"), LWS).unwrap();
    std::fs::write(case.join("lws.yaml"), LWS).unwrap();
    scenario(&case, "scenario.yaml", OK);
    let out_dir = dir.join("out");
    let (code, out, err) = run(&["check", out_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 of 1 expectations met"), "{out}");
    assert!(out.contains("availability-case-3"), "{out}");
    // The case directory itself: its scenario.yaml, not its manifests.
    let (code, out, err) = run(&["check", case.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((v["met"].as_u64(), v["total"].as_u64()), (Some(1), Some(1)));
    assert_eq!(v["results"][0]["ok"], true);
    assert_eq!(v["results"][0]["reconciler"], "v0.4.1");
}

#[test]
fn the_check_table_fits_100_columns_and_footnotes_long_specs() {
    let dir = scratch("check-wide");
    let long = "v0.4.1,worker-sts-ready=available,restart-check=ownership";
    let body = OK.replace(
        "v0.4.1: holds",
        &format!("v0.4.1: holds\n  {long}: {{violates: [availability, groupConsistency, updateOrder, partitionBudget]}}"),
    );
    scenario(
        &dir,
        "a-scenario-with-a-rather-long-name-indeed-longer-than-most.yaml",
        &body,
    );
    let (code, out, _) = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(out.contains("v0.4.1 [1]"), "{out}");
    assert!(out.contains(&format!("[1] {long}")), "{out}");
    assert!(out.contains("1 of 2 expectations met"), "{out}");
}

#[test]
fn check_reports_each_expectation_and_fails_on_a_wrong_one() {
    let dir = scratch("check");
    scenario(&dir, "ok.yaml", OK);
    let (code, out, _) = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 of 1 expectations met"), "{out}");
    scenario(
        &dir,
        "wrong.yaml",
        &OK.replace("v0.4.1: holds", "v0.4.1: {violates: [availability]}"),
    );
    let (code, out, _) = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAILED"), "{out}");
}

#[test]
fn release_names_and_aliases_run_and_a_flag_without_a_code_path_at_v0_10_0_is_exit_2() {
    let dir = scratch("profiles");
    let s = scenario(&dir, "ok.yaml", OK);
    let path = s.to_str().unwrap();
    for spec in [
        "v0.10.0",
        "latest",
        "all-fixed",
        "v0.10.0,partition=all-unready",
    ] {
        let (code, out, err) = run(&["run", path, "--reconciler", spec]);
        assert_eq!(code, 0, "{spec}: {out}{err}");
        assert!(out.contains(&format!("[{spec}]")), "{spec}: {out}");
    }
    let (code, _, err) = run(&[
        "run",
        path,
        "--reconciler",
        "v0.10.0,worker-sts-write=apply",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no code path at v0.10.0"), "{err}");
    assert!(err.contains("worker-sts-write=create"), "{err}");
    let (code, out, _) = run(&["help"]);
    assert_eq!(code, 0);
    for needle in [
        "v0.10.0",
        "latest",
        "all-fixed",
        "partition=tail|unready-below|hd|all-unready",
    ] {
        assert!(out.contains(needle), "help lacks {needle}: {out}");
    }
}

/// `--help`, `-h` and `lws-sim help serve` print serve's help, its control routes with it,
/// and exit 0.
#[test]
fn serve_help_prints_usage_and_exits_zero() {
    for args in [
        &["serve", "--help"][..],
        &["serve", "-h"],
        &["help", "serve"],
    ] {
        let out = bin().args(args).output().expect("runs");
        assert!(out.status.success(), "{args:?}: {:?}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("lws-sim serve SCENARIO"), "{args:?}: {text}");
        assert!(text.contains("--paused"), "{args:?}: {text}");
        assert!(text.contains("/lws-sim/shutdown"), "{args:?}: {text}");
    }
}

/// serve's flags parse as every command's: `--flag=value` is the flag, a misspelt one gets a
/// suggestion, a bad value names its flag; all exit 2 before anything is loaded.
#[test]
fn serve_flags_parse_as_every_command_does() {
    let (code, _, err) = run(&["serve", "no-such.yaml", "--addr=127.0.0.1:0", "--paused"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no-such.yaml"),
        "the flags parsed, the file did not: {err}"
    );
    let (code, _, err) = run(&["serve", "scenarios/rollout.yaml", "--sped", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--speed"), "a suggestion: {err}");
    for (flag, bad) in [
        ("--speed", "0"),
        ("--speed", "fast"),
        ("--addr", "localhost"),
    ] {
        let (code, _, err) = run(&["serve", "scenarios/rollout.yaml", flag, bad]);
        assert_eq!(code, 2, "{flag} {bad}: {err}");
        assert!(err.contains(flag), "{flag} {bad}: {err}");
    }
    let (code, _, err) = run(&[
        "serve",
        "scenarios/rollout.yaml",
        "--speed",
        "5",
        "--paused",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn serve_refuses_a_flag_given_twice() {
    let (code, _, err) = run(&[
        "serve",
        "scenarios/rollout.yaml",
        "--seed",
        "1",
        "--seed",
        "2",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--seed"), "{err}");
    assert!(err.contains("cannot be used multiple times"), "{err}");
}
