//! A full rollout of 16, 128, 512 and 1024 groups of 8 pods with the same fault mix (a node drain
//! and a controller restart mid-rollout), to show how cost grows with groups. For each size it
//! also prints the share of wall time spent inside the ported reconcilers (timed through the
//! runtime's poll hook), so the simulator's own cost can be read separately.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lws_sim::controller::set_poll_hook;
use lws_sim::scenario::{run, Scenario};

mod common;

/// The scale scenario for `groups` groups, written as a scenario file.
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

/// One run, timing the reconcilers' polls: (total, inside reconcilers, events).
fn timed_run(s: &Scenario) -> (Duration, Duration, u64) {
    let inside = Rc::new(Cell::new(Duration::ZERO));
    let started = Rc::new(Cell::new(None::<Instant>));
    let (i2, s2) = (inside.clone(), started.clone());
    set_poll_hook(Some(Box::new(move |begin| {
        if begin {
            s2.set(Some(Instant::now()));
        } else if let Some(t) = s2.take() {
            i2.set(i2.get() + t.elapsed());
        }
    })));
    let t0 = Instant::now();
    let report = run(s, Some("v0.4.1"), None).unwrap();
    let total = t0.elapsed();
    set_poll_hook(None);
    (total, inside.get(), report.events)
}

/// `LWS_SIM_SCALE_SIZES=16,128,512`: one timed run per size, no criterion samples (a quick
/// per-event reading at sizes of one's choice).
fn timed_only() -> bool {
    let Ok(sizes) = std::env::var("LWS_SIM_SCALE_SIZES") else {
        return false;
    };
    for n in sizes
        .split(',')
        .filter_map(|s| s.trim().parse::<u32>().ok())
    {
        let (total, inside, events) = timed_run(&scenario(n));
        eprintln!(
            "scale groups={n} (single run): events={events} wall={:.3}s reconcilers={:.3}s ({:.0}%) simulator={:.1}us/event",
            total.as_secs_f64(),
            inside.as_secs_f64(),
            100.0 * inside.as_secs_f64() / total.as_secs_f64(),
            (total - inside).as_secs_f64() * 1e6 / events as f64
        );
    }
    true
}

fn scale(c: &mut Criterion) {
    if timed_only() {
        return;
    }
    let sizes: &[u32] = if common::measuring() {
        &[16, 128]
    } else {
        &[16]
    };
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    for &n in sizes {
        let s = scenario(n);
        let (total, inside, events) = timed_run(&s);
        eprintln!(
            "scale groups={n}: events={events} wall={:.3}s reconcilers={:.3}s ({:.0}%) simulator={:.1}us/event",
            total.as_secs_f64(),
            inside.as_secs_f64(),
            100.0 * inside.as_secs_f64() / total.as_secs_f64(),
            (total - inside).as_secs_f64() * 1e6 / events as f64
        );
        g.throughput(Throughput::Elements(events));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| run(&s, Some("v0.4.1"), None).unwrap().events)
        });
    }
    g.finish();
    // Bigger sizes take seconds to minutes per run: one timed run each, not a criterion sample.
    if common::measuring() {
        for n in [512, 1024] {
            let (total, inside, events) = timed_run(&scenario(n));
            eprintln!(
                "scale groups={n} (single run): events={events} wall={:.3}s reconcilers={:.3}s ({:.0}%) simulator={:.1}us/event",
                total.as_secs_f64(),
                inside.as_secs_f64(),
                100.0 * inside.as_secs_f64() / total.as_secs_f64(),
                (total - inside).as_secs_f64() * 1e6 / events as f64
            );
        }
    }
}

criterion_group!(benches, scale);
criterion_main!(benches);
