//! The fuzzer finds the seed bug and shrinks it to a small scenario that replays exactly; the
//! fixed reconciler raises no alarm over the same cases; results do not depend on the scratch
//! directory (so `--jobs` cannot change them).

use lws_sim::fuzz::{check_case, generate, run_case, shrink};
use lws_sim::scenario::{run, Scenario};

fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("lws-sim-fuzz-test-{name}-{}", std::process::id()))
}

#[test]
fn finds_shrinks_and_replays_the_seed_bug_under_v030() {
    let first = (0..10)
        .map(|i| check_case(1, i, "v0.3.0", &scratch("find")))
        .find(|r| r.violated.contains("groupConsistency"))
        .expect("the seed bug within 10 cases");
    let case = generate(1, first.index);
    let small = shrink(&case, "v0.3.0", "groupConsistency", &scratch("shrink"), 60);
    assert!(
        small.steps.len() + 3 <= 6,
        "at most 6 steps: {:?}",
        small.steps
    );
    let shrunk = run_case(&small, "v0.3.0", &scratch("shrunk")).unwrap();
    assert!(shrunk.violated().contains("groupConsistency"));
    // Written as an ordinary scenario, it replays to the same verdict and trace.
    let violated: Vec<String> = shrunk.violated().into_iter().collect();
    let path = small
        .write(
            &scratch("replay"),
            "replay.yaml",
            "v0.3.0",
            Some(&violated),
            "",
        )
        .unwrap();
    let replay = run(&Scenario::load(&path).unwrap(), None, None).unwrap();
    assert_eq!(replay.trace_hash, shrunk.trace_hash);
    assert_eq!(replay.violated(), shrunk.violated());
}

#[test]
fn the_fixed_reconciler_raises_no_alarm_on_the_same_cases() {
    for i in 0..30 {
        let r = check_case(1, i, lws_sim::fixtures::ALL_FIXED, &scratch("fixed"));
        assert!(r.error.is_none(), "case {i}: {:?}", r.error);
        assert!(r.violated.is_empty(), "case {i}: {:?}", r.violated);
    }
}

#[test]
fn a_case_result_does_not_depend_on_where_it_runs() {
    for i in [0, 7] {
        let a = check_case(3, i, "v0.4.1", &scratch("a"));
        let b = check_case(3, i, "v0.4.1", &scratch("b"));
        assert_eq!((a.violated, a.events), (b.violated, b.events));
    }
}
