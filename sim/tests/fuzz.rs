//! The fuzzer finds the seed bug and shrinks it to a small scenario that replays exactly; the
//! fixed reconciler raises no alarm over the same cases; a campaign's results do not depend on
//! how its cases are batched.

use std::path::Path;

use lws::profile::Profile;
use lws_sim::fuzz::{check_case, Campaign};
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
        let r = check_case(1, i, &fixed);
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
