//! A full rollout of 16, 128, 512, 1024 and 4096 groups of 8 pods with the same fault mix (a node
//! drain and a controller restart mid-rollout), to show how cost grows with groups. For each size
//! it also prints the share of wall time spent inside the ported reconcilers and inside the
//! StatefulSet controller's per-set syncs (both upstream algorithms that walk every group or
//! pod of a set; timed through the simulator's probe), so the simulator's own cost per event can
//! be read separately, and the run's peak resident memory.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lws_sim::probe::set_probe;
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

/// What one timed run measured.
struct Timing {
    total: Duration,
    /// Inside the ported reconcilers' polls.
    reconcile: Duration,
    /// Inside the StatefulSet controller's per-set syncs.
    sts_sync: Duration,
    events: u64,
    /// The process's peak resident set during the run (Linux: `VmHWM` after resetting it).
    peak_rss_mb: Option<u64>,
}

impl Timing {
    fn line(&self, groups: u32, label: &str) -> String {
        let secs = |d: Duration| d.as_secs_f64();
        let pct = |d: Duration| 100.0 * secs(d) / secs(self.total);
        let own = self.total.saturating_sub(self.reconcile + self.sts_sync);
        format!(
            "scale groups={groups}{label}: events={} wall={:.3}s reconcilers={:.3}s ({:.0}%) sts-syncs={:.3}s ({:.0}%) simulator={:.1}us/event peak-rss={}",
            self.events,
            secs(self.total),
            secs(self.reconcile),
            pct(self.reconcile),
            secs(self.sts_sync),
            pct(self.sts_sync),
            secs(own) * 1e6 / self.events as f64,
            self.peak_rss_mb
                .map_or_else(|| "?".to_string(), |m| format!("{m}MB"))
        )
    }
}

/// Reset the kernel's peak-RSS mark (`/proc/self/clear_refs`, 5), so `VmHWM` is this run's.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// One run, timing the reconcilers' polls and the StatefulSet controller's syncs through the
/// simulator's probe.
fn timed_run(s: &Scenario) -> Timing {
    let spent = Rc::new(Cell::new([Duration::ZERO; 2]));
    let started = Rc::new(Cell::new(None::<Instant>));
    let (spent2, started2) = (spent.clone(), started.clone());
    set_probe(Some(Box::new(move |section, begin| {
        if begin {
            started2.set(Some(Instant::now()));
        } else if let Some(t) = started2.take() {
            let mut d = spent2.get();
            d[section as usize] += t.elapsed();
            spent2.set(d);
        }
    })));
    reset_peak_rss();
    let t0 = Instant::now();
    let report = run(s, Some("v0.4.1"), None).unwrap();
    let total = t0.elapsed();
    set_probe(None);
    let [reconcile, sts_sync] = spent.get();
    Timing {
        total,
        reconcile,
        sts_sync,
        events: report.events,
        peak_rss_mb: peak_rss_mb(),
    }
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
        eprintln!("{}", timed_run(&scenario(n)).line(n, " (single run)"));
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
        let timing = timed_run(&s);
        eprintln!("{}", timing.line(n, ""));
        g.throughput(Throughput::Elements(timing.events));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| run(&s, Some("v0.4.1"), None).unwrap().events)
        });
    }
    g.finish();
    // Bigger sizes take seconds to minutes per run: one timed run each, not a criterion sample.
    if common::measuring() {
        for n in [512, 1024, 4096] {
            eprintln!("{}", timed_run(&scenario(n)).line(n, " (single run)"));
        }
    }
}

criterion_group!(benches, scale);
criterion_main!(benches);
