//! One LWS reconcile and one leader-pod reconcile, at rest ("steady") and mid-rollout, for LWSs
//! of 1, 16, 256 and 1024 groups of 4, under v0.3.0, v0.4.1 and v0.10.0. Each iteration runs the ported
//! reconciler against caches holding the whole LWS, applying its writes to the API server (at
//! rest they are no-ops). API calls per reconcile are printed once per configuration.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lws::profile::Profile;
use lws_sim::controller::direct::DirectReconciler;
use lws_sim::fixtures::{lws_at_rest, mid_rollout, NAME, NS};

mod common;

fn reconcile(c: &mut Criterion) {
    let sizes: &[i32] = if common::measuring() {
        &[1, 16, 256, 1024]
    } else {
        &[1, 16]
    };
    for profile in ["v0.3.0", "v0.4.1", "v0.10.0"] {
        for state in ["steady", "mid-rollout"] {
            let mut group = c.benchmark_group(format!("reconcile/{profile}/{state}"));
            for &n in sizes {
                let mut w = lws_at_rest(n, 4, profile);
                if state == "mid-rollout" {
                    mid_rollout(&mut w, profile, (n / 4).max(1).min(n - 1).max(0));
                }
                let r = DirectReconciler::new(&w.api, Profile::parse(profile).unwrap());
                let leader = format!("{NAME}-0");
                let l = r.reconcile_lws(&mut w.api, NS, NAME);
                let p = r.reconcile_pod(&mut w.api, NS, &leader);
                eprintln!(
                    "calls {profile} {state} groups={n}: lws reads={} writes={}, leader-pod reads={} writes={}",
                    l.reads, l.writes, p.reads, p.writes
                );
                group.bench_with_input(BenchmarkId::new("lws", n), &n, |b, _| {
                    b.iter(|| r.reconcile_lws(&mut w.api, NS, NAME))
                });
                group.bench_with_input(BenchmarkId::new("leader-pod", n), &n, |b, _| {
                    b.iter(|| r.reconcile_pod(&mut w.api, NS, &leader))
                });
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = reconcile
}
criterion_main!(benches);
