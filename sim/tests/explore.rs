//! `explore`: perturbations of a reference run; findings are replayable scenarios.

use std::path::Path;

use lws_sim::explore::{explore, minimize, perturbed_text, Perturbation};
use lws_sim::scenario::{run, Scenario, Step};

fn scenario(name: &str) -> (Scenario, String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name);
    (
        Scenario::load(&p).unwrap(),
        std::fs::read_to_string(&p).unwrap(),
    )
}

#[test]
fn a_quiet_lws_survives_every_perturbation_pattern() {
    let (s, _) = scenario("quiescence-restart-and-resync.yaml");
    let ex = explore(&s, "v0.4.1", 4).unwrap();
    assert_eq!(ex.tried, 16, "4 points for each of the 4 patterns");
    let r = &ex.reference;
    assert!(r.controller_writes > 4 && r.controller_reconciles > 4 && r.controller_events > 4);
    assert!(ex.findings.is_empty(), "{:?}", ex.findings);
}

#[test]
fn a_perturbation_is_written_as_a_scenario_that_replays_it() {
    let (s, text) = scenario("quiescence-restart-and-resync.yaml");
    let dir = std::env::temp_dir().join(format!("lws-sim-explore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let steps = [
        (
            Perturbation::KillAfterWrite(3),
            Step::KillController {
                after_writes: Some(3),
            },
        ),
        (Perturbation::HoldWatchEvent(5), Step::HoldWatchEvent(5)),
        (Perturbation::StaleRead(4), Step::StaleRead(4)),
    ];
    for (p, step) in steps {
        let mut perturbed = s.clone();
        perturbed.steps.insert(0, step);
        let direct = run(&perturbed, Some("v0.4.1"), None).unwrap();
        let file = dir.join(format!("{}.yaml", p.cause()));
        let all: Vec<usize> = (0..s.steps.len()).collect();
        std::fs::write(&file, perturbed_text(&s, &text, p, &all, "v0.4.1", &[])).unwrap();
        let loaded = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.spec.controller.reconciler.as_deref(), Some("v0.4.1"));
        let replay = run(&loaded, None, None).unwrap();
        assert_eq!(
            replay.trace_hash,
            direct.trace_hash,
            "{}: the file replays the perturbed run",
            p.yaml()
        );
        let reference = run(&s, Some("v0.4.1"), None).unwrap();
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
    let (s, text) = scenario("quiescence-restart-and-resync.yaml");
    let reconciler = "v0.4.1,condition-flip=copy";
    let p = Perturbation::KillAfterWrite(2);
    let (keep, found) = minimize(&s, p, reconciler, "statusConditions").unwrap();
    assert!(
        keep.len() < s.steps.len(),
        "kept {keep:?} of {}",
        s.steps.len()
    );
    assert!(found.violated().contains("statusConditions"));
    let dir = std::env::temp_dir().join(format!("lws-sim-explore-min-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("min.yaml");
    let violated: Vec<String> = found.violated().into_iter().collect();
    std::fs::write(
        &file,
        perturbed_text(&s, &text, p, &keep, reconciler, &violated),
    )
    .unwrap();
    let loaded = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.steps.len(), keep.len() + 1);
    let replay = run(&loaded, None, None).unwrap();
    assert_eq!(
        replay.trace_hash, found.trace_hash,
        "the file replays the minimized run"
    );
}
