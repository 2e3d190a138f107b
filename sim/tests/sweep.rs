//! `lws-sim sweep` (sim/src/sweep.rs): grids, determinism independent of `--jobs`, and rates
//! that are those of the individual runs.

mod common;

use common::Scratch;
use std::path::PathBuf;
use std::process::Command;

use lws::profile::Profile;
use lws_sim::scenario::{self, Scenario};
use lws_sim::sweep::{self, FieldKind, Param, Sweep};

const RECONCILER: &str = "v0.3.0,worker-update-strategy=OnDelete";

fn scenario_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/workaround-ondelete-recreate.yaml")
}

fn two_points() -> Sweep {
    Sweep {
        scenario: Scenario::load(&scenario_path()).unwrap(),
        profile: Profile::parse(RECONCILER).unwrap(),
        params: vec![Param::parse("cluster.gcLag=1ms..1s").unwrap()],
        steps: 2,
        seeds: 3,
    }
}

#[test]
fn grids_are_log_spaced_past_ten_x_and_linear_within() {
    let p = Param::parse("cluster.gcLag=1ms..1s").unwrap();
    assert_eq!(p.kind, FieldKind::Range);
    assert_eq!(p.grid(5), vec![1, 6, 32, 178, 1000]);
    let p = Param::parse("controller.syncPeriod=10s..50s").unwrap();
    assert_eq!(p.grid(5), vec![10_000, 20_000, 30_000, 40_000, 50_000]);
    let p = Param::parse("cluster.nodes.count=4..6").unwrap();
    assert_eq!(p.grid(5), vec![4, 5, 6]);
    assert!(Param::parse("cluster.bogus=1ms..2ms").is_err());
    assert!(Param::parse("cluster.gcLag=2s..1s").is_err());
    // A range field runs `p ± p/10`: its top is held to the horizon as the loader holds a
    // range in the file (session 37's audit: 8760h ran as 7884h..9636h).
    let e = Param::parse("cluster.podStartup=8760h..8760h").unwrap_err();
    assert!(
        e.contains("cluster.podStartup") && e.contains("past the simulated horizon"),
        "{e}"
    );
    assert!(Param::parse("cluster.podStartup=7000h..7000h").is_ok());
    assert!(
        Param::parse("controller.syncPeriod=8760h..8760h").is_ok(),
        "a plain duration"
    );
    assert_eq!(
        sweep::narrow_range(100),
        lws_sim::scenario::spec::Range(90, 110)
    );
}

#[test]
fn rates_are_those_of_the_individual_runs_and_order_changes_nothing() {
    let sw = two_points();
    let one = sw.run().unwrap();
    // Runs finishing in another order (as over --jobs threads) collect to the same result.
    let (scenarios, mut tasks) = sw.tasks().unwrap();
    tasks.reverse();
    let done = tasks
        .into_iter()
        .map(|t| (t, sw.run_task(&scenarios, t).unwrap()))
        .collect();
    assert_eq!(one, sw.collect(done));
    assert_eq!(one.len(), 2);
    for point in &one {
        // The same run, by hand: the field set on the spec, each seed run alone.
        let mut s = Scenario::load(&scenario_path()).unwrap();
        let (path, v) = &point.values[0];
        sweep::set_field(&mut s.spec, path, *v).unwrap();
        let gc = s.cluster_config().unwrap().gc_lag_ms;
        assert_eq!(gc, (v - v / 10, v + v / 10));
        let mut broke: std::collections::BTreeMap<String, usize> = Default::default();
        let mut min = None::<i32>;
        for (i, seed) in [1u64, 2, 3].into_iter().enumerate() {
            let r = scenario::run_with(&s, &sw.profile, Some(seed)).unwrap();
            assert_eq!(point.runs[i].trace_hash, r.trace_hash);
            assert_eq!(point.runs[i].completed, sweep::completed(&s, &r));
            for inv in r.violated() {
                *broke.entry(inv).or_default() += 1;
            }
            min = match (min, r.min_available) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        let rates = point.rates();
        assert_eq!(rates.len(), broke.len());
        for (inv, n) in broke {
            assert_eq!(rates[&inv], n as f64 / 3.0, "{inv} at {v} ms");
        }
        assert_eq!(point.min_available(), min);
    }
}

/// `lws-sim sweep` of the test scenario under `RECONCILER`, with `args` after.
fn sweep_command(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args([
            "sweep",
            scenario_path().to_str().unwrap(),
            "--reconciler",
            RECONCILER,
        ])
        .args(args)
        .output()
        .unwrap()
}

/// `sweep_command` refused as bad input (exit 2): its stderr.
fn refused(args: &[&str]) -> String {
    let out = sweep_command(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

#[test]
fn the_command_prints_the_same_json_for_any_jobs() {
    let run = |jobs: &str| {
        let out = sweep_command(&[
            "--vary",
            "cluster.gcLag=1ms..1s",
            "--steps",
            "2",
            "--seeds",
            "2",
            "--json",
            "--jobs",
            jobs,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
    assert_eq!(v["points"][0]["point"]["cluster.gcLag"]["text"], "1ms");
    assert_eq!(v["points"][1]["point"]["cluster.gcLag"]["text"], "1s");
}

#[test]
fn a_sweep_past_a_million_runs_is_refused_before_it_starts() {
    let err = refused(&[
        "--vary",
        "cluster.gcLag=1ms..7000h",
        "--vary",
        "controller.apiLatency=1ms..1h",
        "--steps",
        "100",
        "--seeds",
        "100000",
        "--jobs",
        "1",
    ]);
    assert!(
        err.contains("--seeds 100000 at ")
            && err.contains("runs, over the limit of 1000000 runs per sweep"),
        "{err}"
    );
}

/// A copy of workaround-ondelete-recreate with other expectations, in a scratch directory of
/// its own (tests run in parallel in this process): the directory and the file's path.
fn rate_scenario(expect: &str) -> (Scratch, PathBuf) {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Scratch::new(&format!("seeds-{n}"));
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    for m in ["vllm-lws-recreate.yaml", "vllm-lws-v2-recreate.yaml"] {
        std::fs::copy(src.join("manifests").join(m), dir.join("manifests").join(m)).unwrap();
    }
    let text = std::fs::read_to_string(scenario_path()).unwrap();
    let head = text.split("\nexpect:\n").next().unwrap();
    let p = dir.join("rates.yaml");
    std::fs::write(&p, format!("{head}\nexpect:\n{expect}")).unwrap();
    (dir, p)
}

#[test]
fn check_seeds_judges_rates_and_lists_seeds_that_flip() {
    // v0.3.0 on the OnDelete scenario is a race: its seeds break different sets. Expect what
    // the most common outcome of seeds 1..=5 breaks; the other seeds must be listed.
    let (_probe_dir, probe) = rate_scenario("  v0.3.0: holds\n");
    let probe = Scenario::load(&probe).unwrap();
    let v030 = Profile::parse("v0.3.0").unwrap();
    let outcomes: Vec<Vec<String>> = (1..=5u64)
        .map(|seed| {
            let r = scenario::run_with(&probe, &v030, Some(seed)).unwrap();
            r.violated().into_iter().collect()
        })
        .collect();
    let common = outcomes
        .iter()
        .max_by_key(|o| outcomes.iter().filter(|x| x == o).count())
        .unwrap()
        .clone();
    let disagreeing: Vec<u64> = (1..=5u64)
        .filter(|s| outcomes[*s as usize - 1] != common)
        .collect();
    assert!(
        !disagreeing.is_empty(),
        "the race no longer splits seeds 1..=5: {outcomes:?}"
    );
    let (_dir, p) = rate_scenario(&format!(
        "  v0.3.0,worker-update-strategy=OnDelete: {{violates: [convergence, groupConsistency, timeout], in: 50%..100%}}\n  v0.3.0: {{violates: [{}]}}\n",
        common.join(", ")
    ));
    let s = Scenario::load(&p).unwrap();
    assert_eq!(sweep::seeds_of(&s, 5), Ok(vec![1, 2, 3, 4, 5]));
    let out = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .args(["check", p.to_str().unwrap(), "--seeds", "5", "--json"])
        .output()
        .unwrap();
    // `violates` without a rate fails on the seeds that break another set.
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["results"].as_array().unwrap();
    let row = |r: &str| rows.iter().find(|x| x["reconciler"] == r).unwrap();
    let rate = row(RECONCILER);
    assert_eq!(rate["ok"], true);
    assert_eq!(rate["rate"], serde_json::json!([50, 100]));
    assert_eq!(rate["matching"], 5);
    let flip = row("v0.3.0");
    assert_eq!(flip["ok"], false);
    assert_eq!(flip["disagreeing_seeds"], serde_json::json!(disagreeing));
    // Each seed's outcome is that of `lws-sim run --seed`.
    for (i, got) in outcomes.iter().enumerate() {
        assert_eq!(flip["seeds"][i]["violated"], serde_json::json!(got));
    }
}

#[test]
fn a_rate_outside_its_range_fails_and_one_run_meets_either_outcome() {
    use lws_sim::scenario::spec::{parse_rate, Expectation};
    assert_eq!(parse_rate("30%..70%"), Ok((30, 70)));
    assert!(parse_rate("70%..30%").is_err());
    assert!(parse_rate("0%..101%").is_err());
    let want: std::collections::BTreeSet<String> = ["availability".to_string()].into();
    let runs = vec![
        (1, want.clone()),
        (2, Default::default()),
        (3, Default::default()),
    ];
    let e = Expectation::Rate(vec!["availability".into()], 30, 40);
    let v = sweep::judge_seeds(&e, &runs);
    assert!(v.ok, "{v:?}");
    assert_eq!(v.matching, 1);
    let e = Expectation::Rate(vec!["availability".into()], 50, 100);
    assert!(!sweep::judge_seeds(&e, &runs).ok);
    let e = Expectation::Holds;
    let v = sweep::judge_seeds(&e, &runs);
    assert_eq!((v.ok, v.disagreeing.clone()), (false, vec![1]));
    assert!(v.observed.contains("holds in 2/3"), "{}", v.observed);
}

#[test]
fn a_grid_value_past_a_load_limit_is_bad_input() {
    let mut sw = two_points();
    sw.params = vec![Param::parse("cluster.nodes.count=8..100000").unwrap()];
    let e = sw.tasks().expect_err("past the node limit");
    assert!(e.0.contains("cluster.nodes.count"), "{}", e.0);
}

#[test]
fn check_over_seeds_gives_the_same_answer_for_any_jobs() {
    let (_dir, p) = rate_scenario(
        "  v0.3.0,worker-update-strategy=OnDelete: {violates: [convergence, groupConsistency, timeout], in: 50%..100%}\n  v0.3.0: holds\n",
    );
    let run = |jobs: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
            .args([
                "check",
                p.to_str().unwrap(),
                "--seeds",
                "4",
                "--json",
                "--jobs",
                jobs,
            ])
            .output()
            .unwrap();
        (out.status.code(), out.stdout)
    };
    let (code1, one) = run("1");
    let (code2, two) = run("2");
    assert_eq!(
        code1,
        Some(1),
        "v0.3.0 does not hold: {}",
        String::from_utf8_lossy(&one)
    );
    assert_eq!((code1, one), (code2, two));
}

/// A grid value past a limit is the command line's, not the file's: the error names the
/// `--vary` and the value, and no line of the scenario.
#[test]
fn a_grid_value_past_a_limit_is_blamed_on_its_vary() {
    let err = refused(&[
        "--vary",
        "cluster.nodes.count=1..20000",
        "--steps",
        "2",
        "--seeds",
        "1",
    ]);
    assert!(
        err.contains("--vary cluster.nodes.count: at the grid value 20000: cluster.nodes.count: 20000 is above the limit"),
        "{err}"
    );
    let file = scenario_path().display().to_string();
    assert!(!err.contains(&format!("{file}:")), "{err}");
}
