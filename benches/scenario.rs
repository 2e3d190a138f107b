//! Whole scenarios, end to end (load excluded): the seed scenarios under both releases and the
//! 10 h resync scenario. Throughput is in events; simulated time per wall second is the
//! scenario's simulated span divided by the time per iteration (printed once per scenario).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lws_sim::scenario::{run, Scenario};

mod common;

fn scenarios(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut g = c.benchmark_group("scenario");
    g.sample_size(20);
    for (file, reconciler) in [
        ("controller-restart-mid-rollout.yaml", "v0.3.0"),
        ("controller-restart-mid-rollout.yaml", "v0.4.1"),
        ("resync-mid-rollout.yaml", "v0.3.0"),
        ("resync-mid-rollout.yaml", "v0.4.1"),
        ("node-group-update-mid-rollout.yaml", "v0.4.1"),
    ] {
        let s = Scenario::load(&dir.join(file)).unwrap();
        let probe = run(&s, Some(reconciler), None).unwrap();
        eprintln!(
            "scenario {file} {reconciler}: sim_ms={} events={}",
            probe.sim_ms, probe.events
        );
        g.throughput(Throughput::Elements(probe.events));
        g.bench_function(
            format!("{}/{reconciler}", file.trim_end_matches(".yaml")),
            |b| b.iter(|| run(&s, Some(reconciler), None).unwrap().events),
        );
    }
    g.finish();
    let _ = common::measuring();
}

criterion_group!(benches, scenarios);
criterion_main!(benches);
