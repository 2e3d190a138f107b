//! A full rollout of 16, 128, 1024 and 4096 groups of 8 pods with the same fault mix (a node
//! drain and a controller restart mid-rollout), to show how cost grows with groups. Each size
//! also prints the share of wall time spent inside the ported reconcilers.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lws_sim::scenario::{run, Scenario};

mod common;

/// The scale scenario for `groups` groups, written as a scenario file in memory.
pub fn scenario(groups: u32) -> Scenario {
    let nodes = groups * 8 / 4 + 8;
    let lws = |image: &str| {
        format!(
            "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: scale\nspec:\n  replicas: {groups}\n  leaderWorkerTemplate:\n    size: 8\n    workerTemplate:\n      spec:\n        containers:\n        - name: w\n          image: {image}\n"
        )
    };
    let dir = std::env::temp_dir().join(format!("lws-sim-scale-{groups}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("v1.yaml"), lws("app:v1")).unwrap();
    std::fs::write(dir.join("v2.yaml"), lws("app:v2")).unwrap();
    let text = format!(
        "name: scale-{groups}\ncluster: {{nodes: {{count: {nodes}, podsPerNode: 4}}}}\ncontroller: {{reconciler: v0.4.1}}\nmanifests: [v1.yaml]\nsteps:\n  - waitFor: rolloutComplete\n    timeout: 10h\n  - apply: v2.yaml\n  - wait: 2m\n  - drainNode: {{node: node-0}}\n  - killController: {{}}\n  - waitFor: rolloutComplete\n    timeout: 1000h\ninvariants: [groupConsistency, surgeBound]\n"
    );
    let path = dir.join("scale.yaml");
    std::fs::write(&path, &text).unwrap();
    Scenario::load(&path).unwrap()
}

fn scale(c: &mut Criterion) {
    let sizes: &[u32] = if common::measuring() {
        &[16, 128, 1024, 4096]
    } else {
        &[16]
    };
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    for &n in sizes {
        let s = scenario(n);
        let probe = run(&s, Some("v0.4.1"), None).unwrap();
        eprintln!(
            "scale groups={n}: events={} sim_ms={} violations={:?}",
            probe.events,
            probe.sim_ms,
            probe.violated()
        );
        g.throughput(Throughput::Elements(probe.events));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| run(&s, Some("v0.4.1"), None).unwrap().events)
        });
    }
    g.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
