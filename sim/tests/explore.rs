//! `explore`: perturbations of a reference run; findings are replayable scenarios.

use std::path::Path;

use lws_sim::explore::{explore, perturbed_text, Perturbation};
use lws_sim::scenario::{run, Scenario};

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
fn a_quiet_lws_survives_kills_after_writes_and_resyncs_after_reconciles() {
    let (s, _) = scenario("quiescence-restart-and-resync.yaml");
    let ex = explore(&s, "v0.4.1", 4).unwrap();
    assert_eq!(ex.tried, 8, "4 kill points and 4 resync points");
    assert!(ex.reference.controller_writes > 4 && ex.reference.controller_reconciles > 4);
    assert!(ex.findings.is_empty(), "{:?}", ex.findings);
}

#[test]
fn a_perturbation_is_written_as_a_scenario_that_replays_it() {
    let (s, text) = scenario("quiescence-restart-and-resync.yaml");
    let p = Perturbation::KillAfterWrite(3);
    let mut perturbed = s.clone();
    perturbed.steps.insert(
        0,
        lws_sim::scenario::Step::KillController {
            after_writes: Some(3),
        },
    );
    let direct = run(&perturbed, Some("v0.4.1"), None).unwrap();
    let dir = std::env::temp_dir().join(format!("lws-sim-explore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("perturbed.yaml");
    std::fs::write(&file, perturbed_text(&s, &text, p, "v0.4.1", &[])).unwrap();
    let loaded = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.spec.controller.reconciler.as_deref(), Some("v0.4.1"));
    let replay = run(&loaded, None, None).unwrap();
    assert_eq!(
        replay.trace_hash, direct.trace_hash,
        "the file replays the perturbed run"
    );
}
