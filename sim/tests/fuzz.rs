//! The fuzzer finds the seed bug and shrinks it to a small scenario that replays exactly; the
//! fixed reconciler raises no alarm over the same cases; a campaign's results do not depend on
//! how its cases are batched; the shards of a campaign merge into the campaign.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

use lws::profile::Profile;
use lws_sim::fuzz::{check_case, Campaign, Workload};
use lws_sim::scenario::{parse_spec, run, ScenarioFiles};

fn profile(spec: &str) -> Profile {
    Profile::parse(spec).unwrap()
}

#[test]
fn finds_shrinks_and_replays_the_seed_bug_under_v030() {
    let campaign = Campaign::new(1, profile("v0.3.0"), (0, 1));
    let first = (0..10)
        .map(|i| campaign.check(i))
        .find(|r| r.violated.contains("groupConsistency"))
        .expect("the seed bug within 10 cases");
    let shrunk = campaign
        .shrink(first.index, "groupConsistency", 60)
        .unwrap();
    let small = &shrunk.case;
    assert!(
        small.steps.len() + 3 <= 6,
        "at most 6 steps: {:?}",
        small.steps
    );
    assert!(shrunk.report.violated().contains("groupConsistency"));
    // Written as an ordinary scenario, it replays to the same verdict and trace.
    let violated: Vec<String> = shrunk.report.violated().into_iter().collect();
    let files = campaign.failure_files(small, &violated, "");
    let written = ScenarioFiles {
        spec: parse_spec("replay.yaml", &files.yaml()).unwrap(),
        manifests: files.manifests.clone(),
    };
    let replay = run(
        &written.scenario(Path::new("replay.yaml")).unwrap(),
        None,
        None,
    )
    .unwrap();
    assert_eq!(replay.trace_hash, shrunk.report.trace_hash);
    assert_eq!(replay.violated(), shrunk.report.violated());
}

#[test]
fn the_fixed_reconciler_raises_no_alarm_on_the_same_cases() {
    let fixed = profile(lws_sim::fixtures::ALL_FIXED);
    for i in 0..30 {
        let r = check_case(Workload::Lws, 1, i, &fixed);
        assert!(r.error.is_none(), "case {i}: {:?}", r.error);
        assert!(r.violated.is_empty(), "case {i}: {:?}", r.violated);
    }
}

#[test]
fn a_case_result_does_not_depend_on_its_batch() {
    let mut one = Campaign::new(3, profile("v0.4.1"), (0, 1));
    let mut two = Campaign::new(3, profile("v0.4.1"), (0, 1));
    let singles: Vec<u64> = (0..4).flat_map(|_| one.next_batch(1)).collect();
    let batch = two.next_batch(4);
    assert_eq!(singles, batch);
    for i in [0, 3] {
        let (a, b) = (one.check(i), two.check(i));
        assert_eq!((a.violated, a.events), (b.violated, b.events));
    }
}

/// `lws-sim ARGS`: exit code, stdout, stderr.
fn cli(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (o.status.code().unwrap(), text(o.stdout), text(o.stderr))
}

/// `lws-sim fuzz --reconciler R --cases N --out DIR` with more arguments.
fn fuzz_cli(reconciler: &str, cases: u64, out: &Path, more: &[&str]) -> (i32, String) {
    let cases = cases.to_string();
    let mut args = vec!["fuzz", "--reconciler", reconciler, "--cases", &cases];
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend(more);
    let (code, stdout, stderr) = cli(&args);
    assert!(code == 0 || code == 1, "{args:?}: {stdout}{stderr}");
    (code, stdout)
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

/// The summary's per-invariant lines, with the output directory masked.
fn invariant_lines(stdout: &str, out: &Path) -> Vec<String> {
    let out = out.to_str().unwrap();
    stdout
        .lines()
        .skip(1)
        .map(|l| l.replace(out, "OUT"))
        .collect()
}

fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("fuzz-{name}"))
}

#[test]
fn three_shards_merge_into_the_unsharded_campaign() {
    let dir = scratch("merge");
    let whole = dir.join("whole");
    // Two threads for the whole campaign, one per shard: neither changes what is found. Every
    // failing case saved too (`case-N/`).
    let (code, stdout) = fuzz_cli("v0.4.1", 40, &whole, &["--jobs", "2", "--save-all"]);
    assert_eq!(code, 1, "v0.4.1 fails some of 40 cases: {stdout}");
    let shards: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("shard-{i}"))).collect();
    // Cases 0..40 over 3 shards: 14, 13 and 13 of them.
    for (i, cases) in [14, 13, 13].into_iter().enumerate() {
        let shard = format!("{i}/3");
        fuzz_cli(
            "v0.4.1",
            cases,
            &shards[i],
            &["--shard", &shard, "--save-all"],
        );
    }
    let merged = dir.join("merged");
    let mut args = vec!["fuzz", "merge"];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    args.extend(["--out", merged.to_str().unwrap()]);
    let (mcode, mout, merr) = cli(&args);
    assert_eq!(mcode, 1, "{mout}{merr}");
    assert!(!merr.contains("missing"), "{merr}");
    let failing = |out: &str| {
        out.lines()
            .next()
            .unwrap()
            .rsplit(", ")
            .next()
            .unwrap()
            .to_string()
    };
    assert!(
        mout.starts_with("40 cases merged from 3 of 3 shards"),
        "{mout}"
    );
    assert_eq!(failing(&mout), failing(&stdout));
    let lines = invariant_lines(&stdout, &whole);
    assert!(lines.len() >= 3, "several invariants break: {stdout}");
    assert_eq!(invariant_lines(&mout, &merged), lines);
    let summary = std::fs::read_to_string(whole.join("summary.json")).unwrap();
    assert!(
        summary.contains("\"failures\": [\n    {\n      \"case\": 0,"),
        "{summary}"
    );
    let (w, m) = (tree(&whole), tree(&merged));
    let names = |t: &[(PathBuf, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&m), names(&w));
    assert!(
        w.len() > lines.len() * 3,
        "scenario, manifests and picture per invariant"
    );
    assert!(names(&w).contains(&PathBuf::from("case-0/scenario.yaml")));
    assert!(
        m == w,
        "summary.json and every minimized file byte for byte"
    );
    refusals(&dir, &shards);
}

/// What `fuzz merge` refuses (exit 2, naming the directory) and what it merges with a note.
fn refusals(dir: &Path, shards: &[PathBuf]) {
    let s = |i: usize| shards[i].to_str().unwrap();
    let merge = |dirs: &[&str], out: &Path| {
        let mut args = vec!["fuzz", "merge"];
        args.extend(dirs);
        args.extend(["--out", out.to_str().unwrap()]);
        cli(&args)
    };
    let out = dir.join("partial");
    let (code, stdout, err) = merge(&[s(2), s(0)], &out);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("1 of 3 shards missing (1/3)"), "{err}");
    assert!(
        stdout.starts_with("27 cases merged from 2 of 3 shards"),
        "{stdout}"
    );
    let (code, _, err) = merge(&[s(0), s(1), s(0)], &out);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{}: shard 0/3 again", s(0))), "{err}");
    let other_seed = dir.join("seed-2");
    fuzz_cli("v0.4.1", 1, &other_seed, &["--shard", "2/3", "--seed", "2"]);
    let (code, _, err) = merge(&[s(0), s(1), other_seed.to_str().unwrap()], &out);
    assert_eq!(code, 2);
    assert!(
        err.contains("seed-2: not a shard of the same campaign"),
        "{err}"
    );
    assert!(err.contains("seed 2, not 1"), "{err}");
    let fixed = dir.join("all-fixed");
    fuzz_cli("all-fixed", 1, &fixed, &["--shard", "2/3"]);
    let (code, _, err) = merge(&[s(0), fixed.to_str().unwrap()], &out);
    assert_eq!(code, 2);
    assert!(
        err.contains("all-fixed: not a shard") && err.contains("reconciler"),
        "{err}"
    );
    let (code, _, err) = merge(&[s(0), dir.to_str().unwrap()], &out);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{}: no readable summary.json", dir.display())),
        "{err}"
    );
    let (code, _, err) = merge(&[s(0), s(1)], &shards[1]);
    assert_eq!(code, 2);
    assert!(err.contains("--out"), "{err}");
    // Session 25's audit: a case directory holding a symbolic link had its target copied
    // (`/etc/passwd`), and a FIFO there hung the merge. Anything but plain files is refused,
    // naming it, and nothing is followed.
    let link = shards[0].join("case-0/passwd");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &dir.join("with-link"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("case-0/passwd: not a file a campaign wrote"),
        "{err}"
    );
    std::fs::remove_file(&link).unwrap();
    // Session 37's audit: `--out` inside a shard copied a case directory into itself ~200
    // levels deep (then "File name too long") and later merges carried the tree along; a
    // subdirectory in a case directory is not something a campaign writes.
    let inside = shards[0].join("case-0/deeper");
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &inside);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--out is one of the shard directories or inside one"),
        "{err}"
    );
    assert!(!inside.exists(), "nothing written");
    let sub = shards[0].join("case-0/sub");
    std::fs::create_dir(&sub).unwrap();
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &dir.join("with-sub"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("case-0/sub: not a file a campaign wrote"),
        "{err}"
    );
    std::fs::remove_dir(&sub).unwrap();
    // `--out` a symbolic link to a directory: refused as `fuzz --out` refuses one.
    let real = dir.join("real-out");
    std::fs::create_dir(&real).unwrap();
    let linked = dir.join("linked-out");
    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &linked);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("a symbolic link is never written through"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&real).unwrap().count(),
        0,
        "nothing written through"
    );
    // A damaged minimized scenario is named at merge time, not by a later `check`.
    // (Case N of the campaign ran in shard N mod 3.)
    let minimized = first_minimized(&dir.join("merged"));
    let case: usize = minimized.rsplit('-').next().unwrap().parse().unwrap();
    let file = shards[case % 3].join(&minimized).join("scenario.yaml");
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, b"steps: [ {\n").unwrap();
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &dir.join("damaged"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{minimized}/scenario.yaml")), "{err}");
    std::fs::write(&file, good).unwrap();
    // An earlier summary in `--out` that does not read: exit 2 naming it, where it was
    // removed alone and its campaign's case directories stayed for `check DIR` to run.
    let stale = dir.join("stale");
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &stale);
    assert_eq!(code, 1, "{err}");
    let summary = stale.join("summary.json");
    let text = std::fs::read(&summary).unwrap();
    std::fs::write(&summary, &text[..100]).unwrap();
    let (code, _, err) = merge(&[s(0), s(1), s(2)], &stale);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("an earlier campaign's summary that does not read"),
        "{err}"
    );
    let (code, _, err) = cli(&[
        "fuzz",
        "--reconciler",
        "v0.4.1",
        "--cases",
        "1",
        "--out",
        stale.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&summary.display().to_string()), "{err}");
    // `check` of a campaign directory whose case has a scenario.yaml that is no file: exit 2
    // naming it, where the case used to be left out without a word.
    let fifo_case = dir.join("fifo-campaign/case-9");
    std::fs::create_dir_all(&fifo_case).unwrap();
    let fifo = fifo_case.join("scenario.yaml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let (code, _, err) = cli(&["check", dir.join("fifo-campaign").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("case-9/scenario.yaml"), "{err}");
}

/// The directory of a campaign's first minimized scenario, as its summary names it.
fn first_minimized(out: &Path) -> String {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["minimized"][0]["dir"].as_str().unwrap().to_string()
}

#[test]
fn a_case_run_in_memory_is_the_run_of_its_written_files() {
    // `run_case` decodes the manifests straight from JSON; the files a failure is written as
    // go through YAML. Both must be the same run, trace for trace.
    let reconciler = profile("v0.4.1");
    let campaign = Campaign::new(7, reconciler.clone(), (0, 1));
    for i in 0..6 {
        let case = campaign.case(i);
        let in_memory = lws_sim::fuzz::run_case(&case, &reconciler).unwrap();
        let files = case.files(Some(&reconciler.name), None, "");
        let s = files.scenario(Path::new("case.yaml")).unwrap();
        let written = lws_sim::scenario::run_with(&s, &reconciler, None).unwrap();
        assert_eq!(in_memory.trace_hash, written.trace_hash, "case {i}");
        assert_eq!(in_memory.violated(), written.violated(), "case {i}");
    }
}

/// Every fix v0.10.0 lacks (B09, the terminating pods, the partition, the leader-pod watch,
/// Z05's worker finalizer, and the DisaggregatedSet controller's Z09 and Z10): the reconciler
/// a DisaggregatedSet campaign holds to no alarm.
const V0_10_0_FIXED: &str = "v0.10.0,pod-delete-events=tombstone,terminating-pods=not-ready,partition=all-unready,leader-pod-watch=on,worker-finalizer=on,ds-partial-revision=complete,ds-old-replicas=all-roles";

#[test]
fn a_disaggregated_case_rolls_out_a_set_and_aims_its_faults_at_the_set_s_pods() {
    let fixed = profile(V0_10_0_FIXED);
    let campaign = Campaign::new(1, fixed.clone(), (0, 1)).with_workload(Workload::Disaggregated);
    let (mut faulted, mut hit) = (0, 0);
    for i in 0..12 {
        let case = campaign.case(i);
        assert_eq!(case.workload, Workload::Disaggregated);
        let files = case.files(Some(V0_10_0_FIXED), None, "");
        let s = files.scenario(Path::new("ds.yaml")).unwrap();
        let r = lws_sim::scenario::run(&s, None, None).unwrap();
        assert!(r.violations.is_empty(), "case {i}: {:?}", r.violations);
        // Each fault names a pod of an LWS of the set (the revisions it was computed from are
        // the controller's); most of those pods existed (a group of the new revision may not
        // be up yet when the fault fires, and then the fault is a no-op, as on a cluster).
        let created = |kind: &str, name: &str| {
            r.trace
                .entries
                .iter()
                .any(|e| e.kind == kind && e.verb == "create" && e.rv != 0 && e.name == name)
        };
        for step in &files.spec.steps {
            let Some(pod) = fault_pod(step) else { continue };
            faulted += 1;
            let lws = lws_of(&pod);
            assert!(
                created("LeaderWorkerSet", lws),
                "case {i}: {pod}: no LWS {lws}"
            );
            hit += usize::from(created("Pod", &pod));
        }
        // The set's LWSs of both revisions were judged, each on its own.
        let sets = r
            .trace
            .entries
            .iter()
            .filter(|e| e.kind == "LeaderWorkerSet" && e.verb == "create" && e.rv != 0)
            .count();
        assert_eq!(sets, 4, "case {i}: two roles, two revisions");
    }
    assert!(faulted >= 10, "only {faulted} faults aimed");
    assert!(2 * hit >= faulted, "{hit} of {faulted} faults hit a pod");
}

/// `fz-0-<revision>-<role>` of `fz-0-<revision>-<role>-<group>[-<worker>]`.
fn lws_of(pod: &str) -> &str {
    let parts: Vec<&str> = pod.splitn(5, '-').collect();
    &pod[..parts[..4].iter().map(|p| p.len() + 1).sum::<usize>() - 1]
}

fn fault_pod(step: &lws_sim::scenario::spec::StepSpec) -> Option<String> {
    use lws_sim::scenario::spec::StepSpec;
    match step {
        StepSpec::DeletePod(d) => Some(d.pod.clone()),
        StepSpec::CrashContainer(p) => Some(p.pod.clone()),
        StepSpec::DrainNode(n) => n.node_of.clone(),
        _ => None,
    }
}

#[test]
fn a_disaggregated_campaign_finds_b09_under_v0_10_0_and_its_fix_holds() {
    let plain = Campaign::new(1, profile("v0.10.0"), (0, 1)).with_workload(Workload::Disaggregated);
    // Case 2 force-deletes a worker of the old revision's prefill LWS: v0.10.0 never
    // recreates its group (B09); with the fixes it does.
    let r = plain.check(2);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.violated.iter().collect::<Vec<_>>(), ["requiredRestart"]);
    let fixed =
        Campaign::new(1, profile(V0_10_0_FIXED), (0, 1)).with_workload(Workload::Disaggregated);
    let r = fixed.check(2);
    assert!(r.violated.is_empty() && r.error.is_none(), "{r:?}");
}

/// `lws-sim fuzz` of `cases` cases of `workload` under `reconciler`, into `out`.
fn campaign(
    reconciler: &str,
    workload: &str,
    cases: u32,
    out: &std::path::Path,
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args(["fuzz", "--reconciler", reconciler, "--workload", workload])
        .args([
            "--cases",
            &cases.to_string(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap()
}

/// A campaign of `workload` under `refused` is exit 2 saying `says` and writes nothing; under
/// `accepted` it passes and its summary records the workload.
fn refused_then_recorded(workload: &str, cases: u32, refused: (&str, &str), accepted: &str) {
    let dir = scratch(workload);
    let out = dir.join("out");
    let o = campaign(refused.0, workload, cases, &out);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(refused.1), "{err}");
    assert!(!out.exists(), "nothing written for a refused campaign");
    let o = campaign(accepted, workload, cases, &out);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let recorded = format!("\"workload\": \"{workload}\"");
    assert!(summary.contains(&recorded), "{summary}");
}

#[test]
fn a_disaggregated_campaign_needs_v0_10_0_and_records_its_workload() {
    let refused = ("v0.4.1", "runs no DisaggregatedSet controller");
    refused_then_recorded("disaggregated", 2, refused, V0_10_0_FIXED);
}

#[test]
fn a_disaggregated_campaign_finds_z09_and_its_proposed_fix_holds() {
    // Seed 2, case 492: the controller is killed between creating the new revision's prefill
    // and decode LWSs; v0.10.0's DisaggregatedSet controller creates a new revision's LWSs only
    // while none exists, so the set waits forever for the missing role (Z09).
    let lws_fixes = V0_10_0_FIXED
        .replace(",ds-partial-revision=complete", "")
        .replace(",ds-old-replicas=all-roles", "");
    let stalled =
        Campaign::new(2, profile(&lws_fixes), (0, 1)).with_workload(Workload::Disaggregated);
    let r = stalled.check(492);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.violated.iter().collect::<Vec<_>>(), ["check", "timeout"]);
    let fixed =
        Campaign::new(2, profile(V0_10_0_FIXED), (0, 1)).with_workload(Workload::Disaggregated);
    let r = fixed.check(492);
    assert!(r.violated.is_empty() && r.error.is_none(), "{r:?}");
}

/// The LWS fixes with Z11's proposed fix: what an `lws-replaced` campaign holds to no alarm.
fn replaced_fixed() -> String {
    format!("{V0_10_0_FIXED},adopted-leader-sts=wait")
}

/// Seed 1's `lws-replaced` campaign under `reconciler`.
fn replaced(reconciler: &str) -> Campaign {
    Campaign::new(1, profile(reconciler), (0, 1)).with_workload(Workload::Replaced)
}

#[test]
fn a_replaced_case_deletes_the_lws_and_creates_it_again_at_once() {
    let case = replaced("v0.10.0").case(1);
    assert_eq!(case.workload, Workload::Replaced);
    let files = case.files(Some("v0.10.0"), None, "");
    let steps: Vec<String> = files.spec.steps[..3]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
    assert!(
        steps[1].contains("\"delete\"") && steps[1].contains("LeaderWorkerSet"),
        "{steps:?}"
    );
    assert_eq!(steps[2], r#"{"apply":"v2.yaml"}"#);
}

#[test]
fn a_replaced_campaign_finds_z11_and_its_proposed_fix_holds() {
    // Case 1: 3 groups of 2 replaced at once; the new LWS takes the old leader StatefulSet
    // over under the old revision key and every leader is replaced without its group's budget
    // (Z11); with the proposed fix the controller waits for the garbage collector.
    let lws_fixes = replaced(V0_10_0_FIXED);
    let r = lws_fixes.check(1);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.violated.iter().collect::<Vec<_>>(), ["availability"]);
    let fixed = replaced(&replaced_fixed());
    let r = fixed.check(1);
    assert!(r.violated.is_empty() && r.error.is_none(), "{r:?}");
}

#[test]
fn faults_on_a_replaced_lws_s_old_pods_are_not_restarts_of_the_new_one() {
    // Case 830: a drain evicts a worker of the old LWS as the new one is created; the new LWS
    // takes the old groups over, and the restart the eviction made due is owed by it. The
    // checker used to call that restart one for no failure (groupRestart). What is left is
    // Z11's out-of-order update.
    let lws_fixes = replaced(V0_10_0_FIXED);
    let r = lws_fixes.check(830);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.violated.iter().collect::<Vec<_>>(), ["updateOrder"]);
    // Case 93: the same with Z11's fix: the old LWS's restart of its own group, while the new
    // LWS waits for the garbage collector, is not one of the new LWS's (groupRestart before).
    let fixed = replaced(&replaced_fixed());
    for case in [93, 830] {
        let r = fixed.check(case);
        assert!(
            r.violated.is_empty() && r.error.is_none(),
            "case {case}: {r:?}"
        );
    }
}

#[test]
fn z11_s_fix_in_the_v0_4_1_port_clears_all_fixed_s_replaced_stall() {
    // Case 38: the LWS is replaced while a leader and a worker are deleted. Without Z11's fix
    // the v0.4.1-based all-fixed profile took the old leader StatefulSet over; its re-created
    // leader of the old revision found no revision to build workers from (the old one was the
    // deleted LWS's) and the rollout stalled. With the fix (in ALL_FIXED since session 23) it
    // waits for the garbage collector and holds.
    let all_fixed = lws_sim::fixtures::ALL_FIXED;
    let without = all_fixed.replace(",adopted-leader-sts=wait", "");
    assert_ne!(without, all_fixed, "ALL_FIXED carries Z11's fix");
    let r = replaced(&without).check(38);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(r.violated.iter().any(|v| v == "convergence"), "{r:?}");
    let r = replaced("all-fixed").check(38);
    assert!(r.violated.is_empty() && r.error.is_none(), "{r:?}");
}

#[test]
fn a_gang_campaign_needs_the_scheduler_provider_and_its_cases_gang_schedule() {
    let gang = format!("{V0_10_0_FIXED},gang-scheduling=volcano");
    let refused = ("v0.10.0", "has no scheduler provider");
    refused_then_recorded("lws-gang", 3, refused, &gang);
    // The case's pods name Volcano, and Volcano binds them.
    let case = lws_sim::fuzz::generate_for(lws_sim::fuzz::Workload::Gang, 1, 0);
    let profile = lws::profile::Profile::parse(&gang).unwrap();
    let report = lws_sim::fuzz::run_case(&case, &profile).unwrap();
    let binds = report.trace.entries.iter().filter(|e| e.verb == "bind");
    assert!(binds.clone().count() > 0 && binds.clone().all(|e| e.actor == "volcano"));
}
