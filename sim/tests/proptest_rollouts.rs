//! Property-based rollout replay: proptest draws whole cases (an LWS shape, a cluster, and a
//! schedule mixing a template update with a swarm-chosen mix of faults), runs each in the
//! simulator, and shrinks a failure towards fewer steps, fewer and smaller groups and shorter
//! waits. Past failures are replayed first from `sim/proptest-regressions/rollouts.txt`, which
//! is kept in the repository.
//!
//! The property: with every known bug fixed (`fixtures::ALL_FIXED`) no invariant breaks, and
//! a case replays to the same trace. `lws-sim fuzz` runs the same kind of case at scale; this
//! test keeps a small, fixed-seed sample in `cargo test`. More cases, or another reconciler to
//! hunt a bug with: `PROPTEST_CASES=500 LWS_SIM_RECONCILER=v0.4.1 cargo test --release --test
//! proptest_rollouts` (a failure under another reconciler is also written to the regressions
//! file; keep it only if it should hold with `ALL_FIXED`). The regression seeds belong to this
//! strategy: when it changes, hunt again and replace them. Three findings have no fix (Z04-Z06
//! in docs/bug-zoo.md, about 1 case in 1000), so a long hunt under `ALL_FIXED` can stop on them.

use lws_sim::fixtures::ALL_FIXED;
use lws_sim::fuzz::{broken_image_rolls_out, nodes_for, run_case, Case, CaseStep, FAULTS};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};

/// maxUnavailable and maxSurge as written in the manifest: a percentage maxUnavailable may scale
/// to 0, which the webhook accepts only with a surge.
fn rollout_knobs() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        (prop::sample::select(vec!["1", "2"]), Just("0")),
        (
            prop::sample::select(vec!["0", "1", "2", "25%", "50%"]),
            prop::sample::select(vec!["1", "2", "50%"])
        ),
    ]
    .prop_map(|(mu, ms)| (mu.to_string(), ms.to_string()))
}

/// One fault against a pod of `replicas` groups of `size`, then a wait.
fn fault(
    kinds: Vec<&'static str>,
    replicas: i32,
    size: i32,
) -> impl Strategy<Value = [CaseStep; 2]> {
    (
        prop::sample::select(kinds),
        0..replicas,
        0..size,
        1u64..=6,
        5u64..=120,
    )
        .prop_map(|(kind, group, worker, writes, wait_s)| {
            [
                CaseStep::Fault {
                    kind,
                    group,
                    worker,
                    writes,
                },
                CaseStep::Wait(wait_s * 1000),
            ]
        })
}

/// The faults a case may use: a non-empty subset of every kind (swarm testing).
fn fault_mix() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::subsequence(FAULTS.to_vec(), 1..=FAULTS.len())
}

/// A schedule: a first wait, an optional scale, 1-4 faults with waits between.
fn schedule(replicas: i32, size: i32) -> impl Strategy<Value = Vec<CaseStep>> {
    (
        0u64..=60,
        prop::option::weighted(0.25, 1i32..=8),
        fault_mix(),
    )
        .prop_flat_map(move |(first_wait_s, scale, kinds)| {
            prop::collection::vec(fault(kinds, replicas, size), 1..=4).prop_map(move |faults| {
                let mut steps = vec![CaseStep::Wait(first_wait_s * 1000)];
                steps.extend(scale.map(CaseStep::Scale));
                steps.extend(faults.into_iter().flatten());
                steps
            })
        })
}

prop_compose! {
    fn case()(
        (replicas, size) in (1i32..=8, 1i32..=4),
        (max_unavailable, max_surge) in rollout_knobs(),
        restart_policy in prop::sample::select(vec![None, Some("RecreateGroupOnPodRestart"), Some("None")]),
        startup_policy in prop::option::of(Just("LeaderReady")),
        broken_first_image in prop::bool::weighted(0.125),
        kubernetes_minor in prop::sample::select(vec![29u32, 35, 37]),
        startup_lo_s in 5u64..=30,
        startup_hi_s in 30u64..=90,
        seed in any::<u64>(),
    )(
        steps in schedule(replicas, size),
        replicas in Just(replicas),
        size in Just(size),
        max_unavailable in Just(max_unavailable),
        max_surge in Just(max_surge),
        restart_policy in Just(restart_policy),
        startup_policy in Just(startup_policy),
        broken_first_image in Just(broken_first_image && broken_image_rolls_out(kubernetes_minor)),
        kubernetes_minor in Just(kubernetes_minor),
        startup_ms in Just((startup_lo_s * 1000, startup_hi_s * 1000)),
        seed in Just(seed),
    ) -> Case {
        Case {
            index: 0,
            seed,
            replicas,
            size,
            max_unavailable,
            max_surge,
            restart_policy,
            startup_policy,
            broken_first_image,
            kubernetes_minor,
            nodes: nodes_for(size),
            startup_ms,
            steps,
        }
    }
}

fn config() -> Config {
    Config {
        cases: 12,
        rng_seed: RngSeed::Fixed(1),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/rollouts.txt",
        ))),
        max_shrink_iters: 200,
        // PROPTEST_CASES and friends still override these.
        ..Config::default()
    }
}

fn scratch() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("lws-sim-proptest-{}", std::process::id()))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_invariant_holds_with_every_known_bug_fixed(case in case()) {
        let reconciler =
            std::env::var("LWS_SIM_RECONCILER").unwrap_or_else(|_| ALL_FIXED.to_string());
        let first = run_case(&case, &reconciler, &scratch()).map_err(TestCaseError::fail)?;
        prop_assert!(
            first.violations.is_empty(),
            "{}",
            first.violations.iter().map(|v| v.report()).collect::<Vec<_>>().join("\n")
        );
        let again = run_case(&case, &reconciler, &scratch()).map_err(TestCaseError::fail)?;
        prop_assert_eq!(first.trace_hash, again.trace_hash, "the same case replays exactly");
    }
}
