//! Every scenario under `scenarios/` against every reconciler in its `expect` (tests generated
//! by build.rs), each run twice to check the trace is byte-identical.

use std::path::Path;

use lws_sim::scenario::{self, Scenario};

fn check(path: &str, reconciler: &str) {
    let s = Scenario::load(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    let expected = s
        .spec
        .expect
        .get(reconciler)
        .unwrap_or_else(|| panic!("{path}: no expect for {reconciler}"));
    let first = scenario::run(&s, Some(reconciler), None).unwrap_or_else(|e| panic!("{}", e.0));
    let second = scenario::run(&s, Some(reconciler), None).unwrap_or_else(|e| panic!("{}", e.0));
    if let Some(i) = first.trace.first_divergence(&second.trace) {
        let line = |t: &lws_sim::trace::Trace| {
            t.entries
                .get(i)
                .map(|e| e.line())
                .unwrap_or_else(|| "<end>".into())
        };
        panic!(
            "non-determinism at trace line {i}:\n  first:  {}\n  second: {}",
            line(&first.trace),
            line(&second.trace)
        );
    }
    assert_eq!(first.trace_hash, second.trace_hash);
    if let Err(m) = scenario::judge(&first, expected) {
        panic!("{m}\nreplay: {}", first.replay_command(Path::new(path)));
    }
}

#[allow(dead_code)]
fn check_loads(path: &str) {
    Scenario::load(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
}

include!(concat!(env!("OUT_DIR"), "/scenario_tests.rs"));
