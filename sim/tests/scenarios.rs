//! Every scenario under `scenarios/` against every reconciler in its `expect` (tests generated
//! by build.rs), each run twice to check the trace is byte-identical, and its trace hash
//! compared with the one pinned in `scenarios/trace-hashes.tsv`: rule 1 of the house says a
//! change that moves a trace hash is a named fidelity fix or a bug, and this is where it shows.

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
    let got = format!("{:016x}", first.trace_hash);
    match pinned(path, reconciler) {
        Some(want) if want == got => {}
        Some(want) => panic!(
            "{path} [{reconciler}]: trace hash {got}, pinned {want} in scenarios/trace-hashes.tsv: \
             a named fidelity fix (then run scripts/bless-trace-hashes.sh) or a bug"
        ),
        None => panic!(
            "{path} [{reconciler}]: no pinned trace hash; add `{path}\t{reconciler}\t{got}` to \
             scenarios/trace-hashes.tsv (scripts/bless-trace-hashes.sh)"
        ),
    }
    if let Err(m) = scenario::judge(&first, expected) {
        panic!("{m}\nreplay: {}", first.replay_command(Path::new(path)));
    }
}

/// The pinned hash of (scenario path relative to the repository, reconciler).
fn pinned(path: &str, reconciler: &str) -> Option<String> {
    let rel = path.rsplit_once("/../").map_or(path, |(_, r)| r);
    let table = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/trace-hashes.tsv"),
    )
    .expect("scenarios/trace-hashes.tsv is part of the repository");
    table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?, f.next()?))
        })
        .find(|(p, r, _)| *p == rel && *r == reconciler)
        .map(|(_, _, h)| h.to_string())
}

#[allow(dead_code)]
fn check_loads(path: &str) {
    Scenario::load(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
}

include!(concat!(env!("OUT_DIR"), "/scenario_tests.rs"));
