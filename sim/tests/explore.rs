//! `explore`: perturbations of a reference run; findings are replayable scenarios.

use std::path::Path;

use lws::profile::Profile;
use lws_sim::explore::{explore, minimize, perturbed, perturbed_spec, Perturbation};
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
    // B16 breaks statusConditions as the LWS comes up: none of the scenario's steps is needed.
    let s = scenario("quiescence-restart-and-resync.yaml");
    let reconciler = "v0.4.1,condition-flip=copy";
    let p = Perturbation::KillAfterWrite(2);
    let (keep, found) = minimize(&s, p, &profile(reconciler), "statusConditions").unwrap();
    assert!(
        keep.len() < s.steps.len(),
        "kept {keep:?} of {}",
        s.steps.len()
    );
    assert!(found.violated().contains("statusConditions"));
    let violated: Vec<String> = found.violated().into_iter().collect();
    let loaded = written(&s, p, &keep, reconciler, &violated);
    assert_eq!(loaded.steps.len(), keep.len() + 1);
    let replay = run(&loaded, None, None).unwrap();
    assert_eq!(
        replay.trace_hash, found.trace_hash,
        "the file replays the minimized run"
    );
}
