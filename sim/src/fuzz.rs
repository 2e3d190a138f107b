//! Generated rollout cases, shrinking, and replayable failure files.
//!
//! A case is drawn from a case seed (derived from the campaign seed and the case index, so any
//! case can be re-run alone and shards partition a campaign exactly): an LWS shape, a cluster,
//! and a schedule mixing a template update with faults. The *mix* of fault kinds is itself drawn
//! per case (swarm testing), so some cases hammer one fault and others combine several. Every
//! case ends with `waitFor: rolloutComplete` and the `convergence` check.
//!
//! A case is written as an ordinary scenario file (plus its two manifests), so a failure is
//! replayed with `lws-sim run`. Shrinking is greedy: drop steps, then fewer groups, smaller
//! groups, a working first image, the default startup policy, shorter waits, keeping every
//! change that still breaks the same invariant.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::rng::SimRng;
use crate::scenario::{self, RunReport, Scenario};

/// Fault kinds a case may use; each case enables a random non-empty subset.
pub const FAULTS: [&str; 7] = [
    "killController",
    "killAfterWrites",
    "resync",
    "drainNode",
    "crashContainer",
    "deletePod",
    "forceDeletePod",
];

/// The image of a broken first template: listed as unpullable in the case's cluster.
const BROKEN_IMAGE: &str = "app:does-not-exist";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseStep {
    Wait(u64),
    Fault {
        kind: &'static str,
        group: i32,
        worker: i32,
        writes: u64,
    },
    Scale(i32),
}

/// Everything a generated case is made of; `render` turns it into files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub index: u64,
    pub seed: u64,
    pub replicas: i32,
    pub size: i32,
    pub max_unavailable: String,
    pub max_surge: String,
    pub restart_policy: Option<&'static str>,
    pub startup_policy: Option<&'static str>,
    /// The first template's image never pulls, so no group ever comes up before the update
    /// that fixes it (the shape of issue #567, bug B11).
    pub broken_first_image: bool,
    /// Kubernetes 1.x: 29 (MaxUnavailableStatefulSet off), 35 (on by default) or 37 (old
    /// unavailable pods replaced first).
    pub kubernetes_minor: u32,
    pub nodes: u32,
    pub startup_ms: (u64, u64),
    pub steps: Vec<CaseStep>,
}

/// The seed of case `index` of a campaign: a fixed function of both.
pub fn case_seed(campaign_seed: u64, index: u64) -> u64 {
    SimRng::labelled(campaign_seed, &format!("case-{index}")).next_u64()
}

fn pick<T: Copy>(rng: &mut SimRng, items: &[T]) -> T {
    items[(rng.next_u64() % items.len() as u64) as usize]
}

/// Draw a case. The default distribution: 1-8 groups of 1-4 pods (median 4 groups of 3),
/// maxUnavailable 1-2 (0 too with a surge) or 25-50%, maxSurge 0-2, either startup policy,
/// Kubernetes 1.29, 1.35 or 1.37 (MaxUnavailableStatefulSet off, on, on with PR #137666), one
/// template update
/// (from an image that never pulls in one case of eight), 1-4 faults of 1-7 kinds.
pub fn generate(campaign_seed: u64, index: u64) -> Case {
    let seed = case_seed(campaign_seed, index);
    let mut rng = SimRng::labelled(seed, "generator");
    let replicas = rng.range_inclusive(1, 8) as i32;
    let size = rng.range_inclusive(1, 4) as i32;
    let max_surge = pick(&mut rng, &["0", "0", "1", "2"]).to_string();
    // A percentage maxUnavailable can scale to 0; with no surge the webhook would reject the
    // LWS (a user error, not a controller bug), so percentages come only with a surge.
    let max_unavailable = if max_surge == "0" {
        pick(&mut rng, &["1", "1", "2"])
    } else {
        pick(&mut rng, &["0", "1", "2", "25%", "50%"])
    }
    .to_string();
    let restart_policy = pick(
        &mut rng,
        &[None, Some("RecreateGroupOnPodRestart"), Some("None")],
    );
    let startup_policy = pick(&mut rng, &[None, Some("LeaderReady")]);
    let kubernetes_minor = pick(&mut rng, &[29, 35, 37]);
    let broken_first_image =
        rng.next_u64().is_multiple_of(8) && broken_image_rolls_out(kubernetes_minor);
    let mut enabled: Vec<&'static str> = FAULTS
        .iter()
        .copied()
        .filter(|_| rng.next_u64().is_multiple_of(2))
        .collect();
    if enabled.is_empty() {
        enabled.push(pick(&mut rng, &FAULTS));
    }
    let faults = rng.range_inclusive(1, 4);
    let mut steps = vec![CaseStep::Wait(rng.range_inclusive(0, 60) * 1000)];
    for _ in 0..faults {
        let kind = pick(&mut rng, &enabled);
        let group = rng.range_inclusive(0, replicas as u64 - 1) as i32;
        let worker = rng.range_inclusive(0, size as u64 - 1) as i32;
        let writes = rng.range_inclusive(1, 6);
        steps.push(CaseStep::Fault {
            kind,
            group,
            worker,
            writes,
        });
        steps.push(CaseStep::Wait(rng.range_inclusive(5, 120) * 1000));
    }
    if rng.next_u64().is_multiple_of(4) {
        steps.insert(1, CaseStep::Scale(rng.range_inclusive(1, 8) as i32));
    }
    Case {
        index,
        seed,
        replicas,
        size,
        max_unavailable,
        max_surge,
        restart_policy,
        startup_policy,
        broken_first_image,
        kubernetes_minor,
        nodes: nodes_for(size),
        startup_ms: (
            rng.range_inclusive(5, 30) * 1000,
            rng.range_inclusive(30, 90) * 1000,
        ),
        steps,
    }
}

/// Nodes (of 4 pods) for groups of `size`: room for the largest a case can grow to (8 groups,
/// surge 2), twice over for drains.
pub fn nodes_for(size: i32) -> u32 {
    let pods = (10 * size) as u32;
    (pods * 2).div_ceil(4).max(2) + 2
}

/// Whether a rollout away from a never-ready image can complete on Kubernetes 1.`minor`: a 1.35
/// StatefulSet never replaces pods that are unavailable once its budget is spent (fixed in 1.37,
/// PR #137666), a Kubernetes limit rather than the controller's.
pub fn broken_image_rolls_out(minor: u32) -> bool {
    minor != 35
}

fn quote(v: &str) -> String {
    if v.ends_with('%') {
        format!("\"{v}\"")
    } else {
        v.to_string()
    }
}

impl Case {
    fn manifest(&self, image: &str, reconciler: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: fz\nspec:");
        if let Some(p) = self.startup_policy {
            let _ = writeln!(s, "  startupPolicy: {p}");
        }
        let _ = writeln!(
            s,
            "  replicas: {}\n  leaderWorkerTemplate:\n    size: {}",
            self.replicas, self.size
        );
        if let Some(p) = self.restart_policy {
            // v0.3.0's CRD has no `None` (its enum is {Default, RecreateGroupOnPodRestart}):
            // there it is spelt `Default`, which means the same.
            let old_crd = lws::profile::Profile::parse(reconciler).is_ok_and(|r| {
                r.release != lws::profile::Release::V0_10_0
                    && !r.flags.restart_policy_default_recreate
            });
            let p = if p == "None" && old_crd { "Default" } else { p };
            let _ = writeln!(s, "    restartPolicy: {p}");
        }
        let _ = writeln!(s, "    workerTemplate:\n      spec:\n        containers:\n        - name: worker\n          image: {image}");
        let _ = writeln!(
            s,
            "  rolloutStrategy:\n    type: RollingUpdate\n    rollingUpdateConfiguration:\n      maxUnavailable: {}\n      maxSurge: {}",
            quote(&self.max_unavailable),
            quote(&self.max_surge)
        );
        s
    }

    fn pod(&self, group: i32, worker: i32) -> String {
        if worker == 0 {
            format!("fz-{group}")
        } else {
            format!("fz-{group}-{worker}")
        }
    }

    /// The scenario file text (manifests at `v1.yaml` and `v2.yaml` beside it).
    pub fn scenario_text(&self, reconciler: &str, expect: Option<&[String]>, note: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "name: fuzz-case-{}", self.index);
        let _ = writeln!(
            s,
            "description: >\n  Generated by lws-sim fuzz (case {}, case seed {}). {note}",
            self.index, self.seed
        );
        let _ = writeln!(s, "seed: {}", self.seed % 1_000_000_007);
        let _ = writeln!(
            s,
            "cluster:\n  kubernetesVersion: \"1.{}\"\n  nodes: {{count: {}, podsPerNode: 4}}\n  podStartup: {}ms..{}ms\n  podTermination: 1s..10s",
            self.kubernetes_minor, self.nodes, self.startup_ms.0, self.startup_ms.1
        );
        if self.broken_first_image {
            let _ = writeln!(s, "  unpullableImages: [{BROKEN_IMAGE}]");
        }
        let _ = writeln!(
            s,
            "controller:\n  reconciler: {reconciler}\nmanifests: [v1.yaml]\nsteps:"
        );
        let first = if self.broken_first_image {
            "wait: 2m"
        } else {
            "waitFor: rolloutComplete\n    timeout: 1h"
        };
        let _ = writeln!(s, "  - {first}\n  - apply: v2.yaml");
        for step in &self.steps {
            match step {
                CaseStep::Wait(ms) => {
                    let _ = writeln!(s, "  - wait: {ms}ms");
                }
                CaseStep::Scale(n) => {
                    let _ = writeln!(s, "  - scale: {{lws: fz, replicas: {n}}}");
                }
                CaseStep::Fault {
                    kind,
                    group,
                    worker,
                    writes,
                } => {
                    let pod = self.pod(*group, *worker);
                    let line = match *kind {
                        "killController" => "killController: {}".to_string(),
                        "killAfterWrites" => format!("killController: {{afterWrites: {writes}}}"),
                        "resync" => "resync: {}".to_string(),
                        "drainNode" => format!("drainNode: {{nodeOf: {pod}}}"),
                        "crashContainer" => format!("crashContainer: {{pod: {pod}}}"),
                        "forceDeletePod" => {
                            format!("deletePod: {{pod: {pod}, gracePeriodSeconds: 0}}")
                        }
                        _ => format!("deletePod: {{pod: {pod}}}"),
                    };
                    let _ = writeln!(s, "  - {line}");
                }
            }
        }
        let _ = writeln!(
            s,
            "  - waitFor: rolloutComplete\n    timeout: 2h\ninvariants: all"
        );
        if let Some(v) = expect {
            let _ = writeln!(
                s,
                "expect:\n  {reconciler}: {{violates: [{}]}}",
                v.join(", ")
            );
        }
        s
    }

    /// Write the case into `dir` (scenario plus manifests) and return the scenario's path.
    pub fn write(
        &self,
        dir: &Path,
        file: &str,
        reconciler: &str,
        expect: Option<&[String]>,
        note: &str,
    ) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let v1 = if self.broken_first_image {
            BROKEN_IMAGE
        } else {
            "app:v1"
        };
        std::fs::write(dir.join("v1.yaml"), self.manifest(v1, reconciler))?;
        std::fs::write(dir.join("v2.yaml"), self.manifest("app:v2", reconciler))?;
        let path = dir.join(file);
        std::fs::write(&path, self.scenario_text(reconciler, expect, note))?;
        Ok(path)
    }
}

/// Run a case in a scratch directory. `Err` is a case the engine refused (a generator bug).
pub fn run_case(case: &Case, reconciler: &str, scratch: &Path) -> Result<RunReport, String> {
    let path = case
        .write(scratch, "case.yaml", reconciler, None, "")
        .map_err(|e| e.to_string())?;
    let s = Scenario::load(&path).map_err(|e| e.to_string())?;
    scenario::run(&s, None, None).map_err(|e| e.0)
}

/// Greedy shrinking towards a case that still breaks `target`. Bounded: at most `budget` runs.
pub fn shrink(case: &Case, reconciler: &str, target: &str, scratch: &Path, budget: usize) -> Case {
    let fails =
        |c: &Case| run_case(c, reconciler, scratch).is_ok_and(|r| r.violated().contains(target));
    let mut best = case.clone();
    let mut runs = 0;
    loop {
        let mut improved = false;
        let mut candidates: Vec<Case> = Vec::new();
        for i in 0..best.steps.len() {
            let mut c = best.clone();
            c.steps.remove(i);
            candidates.push(c);
        }
        if best.replicas > 1 {
            let mut c = best.clone();
            c.replicas -= 1;
            c.steps
                .retain(|s| !matches!(s, CaseStep::Fault { group, .. } if *group >= c.replicas));
            candidates.push(c);
        }
        if best.size > 1 {
            let mut c = best.clone();
            c.size -= 1;
            c.steps
                .retain(|s| !matches!(s, CaseStep::Fault { worker, .. } if *worker >= c.size));
            candidates.push(c);
        }
        if best.broken_first_image {
            candidates.push(Case {
                broken_first_image: false,
                ..best.clone()
            });
        }
        if best.kubernetes_minor != 29 {
            candidates.push(Case {
                kubernetes_minor: 29,
                ..best.clone()
            });
        }
        if best.startup_policy.is_some() {
            candidates.push(Case {
                startup_policy: None,
                ..best.clone()
            });
        }
        for (i, s) in best.steps.iter().enumerate() {
            if let CaseStep::Wait(ms) = s {
                if *ms >= 2_000 {
                    let mut c = best.clone();
                    c.steps[i] = CaseStep::Wait(ms / 2);
                    candidates.push(c);
                }
            }
        }
        for c in candidates {
            if runs >= budget {
                return best;
            }
            runs += 1;
            if fails(&c) {
                best = c;
                improved = true;
                break;
            }
        }
        if !improved {
            return best;
        }
    }
}

/// The outcome of one case of a campaign.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub index: u64,
    pub violated: BTreeSet<String>,
    pub events: u64,
    pub error: Option<String>,
}

pub fn check_case(campaign_seed: u64, index: u64, reconciler: &str, scratch: &Path) -> CaseResult {
    let case = generate(campaign_seed, index);
    match run_case(&case, reconciler, scratch) {
        Ok(r) => CaseResult {
            index,
            violated: r.violated(),
            events: r.events,
            error: None,
        },
        Err(e) => CaseResult {
            index,
            violated: BTreeSet::new(),
            events: 0,
            error: Some(e),
        },
    }
}

/// Which case indices shard `i` of `n` runs: every n-th, starting at i.
pub fn in_shard(index: u64, shard: (u64, u64)) -> bool {
    index % shard.1 == shard.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_a_function_of_campaign_seed_and_index() {
        assert_eq!(generate(7, 3), generate(7, 3));
        assert_ne!(generate(7, 3), generate(7, 4));
        assert_ne!(generate(7, 3), generate(8, 3));
    }

    #[test]
    fn shards_partition_the_case_indices() {
        for i in 0..100 {
            let owners = (0..3).filter(|s| in_shard(i, (*s, 3))).count();
            assert_eq!(owners, 1);
        }
    }

    #[test]
    fn every_generated_case_loads_as_a_scenario() {
        let dir = std::env::temp_dir().join(format!("lws-sim-fuzz-load-{}", std::process::id()));
        for i in 0..50 {
            let c = generate(1, i);
            let p = c
                .write(
                    &dir,
                    "c.yaml",
                    "v0.4.1",
                    Some(&["availability".to_string()]),
                    "",
                )
                .unwrap();
            Scenario::load(&p).unwrap_or_else(|e| panic!("case {i}: {e}"));
        }
    }
}
