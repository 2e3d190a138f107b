//! Generated fuzz cases per second on one core: generate, build in memory and run one case of
//! the default distribution (see `lws_sim::fuzz::DEFAULT_PARAMS`), under all-fixed (the profile
//! a campaign for new bugs runs) and under v0.4.1 (whose cases often break invariants).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lws::profile::Profile;
use lws_sim::fuzz::{check_case, Workload};

mod common;

/// The bench cycles through this many cases of campaign seed 1: about as many as criterion runs
/// (its warm-up and 100 samples take some 1,250 cases at 2 ms each), so each case counts about
/// once. A shorter cycle measures its window's mix rather than the distribution's: in the
/// campaign binary, the six 200-case windows of the first 1,200 cases averaged 1.86-2.11 ms a
/// case (the first window the most; all 1,200: 1.96 ms). Until session 40 the cycle was 200.
const CASES: u64 = 1_000;

fn fuzz(c: &mut Criterion) {
    let mut g = c.benchmark_group("fuzz");
    g.throughput(Throughput::Elements(1));
    for spec in ["all-fixed", "v0.4.1"] {
        let reconciler = Profile::parse(spec).expect("a profile");
        let mut i = 0;
        g.bench_function(format!("case/{spec}"), |b| {
            b.iter(|| {
                i += 1;
                check_case(Workload::Lws, 1, i % CASES, &reconciler).events
            })
        });
    }
    g.finish();
    let _ = common::measuring();
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = fuzz
}
criterion_main!(benches);
