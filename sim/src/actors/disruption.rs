//! The disruption controller (kubernetes `pkg/controller/disruption/disruption.go` @01aa0f3f,
//! `trySync`, `getExpectedPodCount`, `countHealthyPods`, `updatePdbStatus`): each
//! PodDisruptionBudget's status, from the pods its selector matches, written when it changes
//! (`kubectl get pdb`'s ALLOWED DISRUPTIONS). The eviction API still computes its budget from
//! the live pods (`api::eviction`, docs/fidelity.md), so this controller only reports.
//!
//! Simplified: no `disruptedPods` (an evicted pod is gone or terminating, and so not healthy,
//! at once); expected pods under `maxUnavailable` or a percentage `minAvailable` are the scale
//! of the pods' StatefulSets, read live (upstream's `finders` for ReplicationControllers,
//! Deployments, ReplicaSets and the scale subresource of other controllers are not modelled: a
//! pod without a StatefulSet controller fails the sync, as an unknown controller does
//! upstream); its informers have no lag and draw nothing from the world's random stream.
//! Nothing is read while no PodDisruptionBudget exists: the pod informer starts with the first.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::k8s;

use crate::api::{ApiServer, Key, Selector};
use crate::informer::Informer;
use crate::time::to_time;

pub const ACTOR: &str = "disruption-controller";

/// How long a failed status write waits before the PDB is synced again (the work queue's
/// first back-off is 5 ms; a conflict is retried at once upstream, from a fresher cache).
const RETRY_MS: u64 = 1_000;

pub struct DisruptionController {
    pdbs: Informer<PodDisruptionBudget>,
    /// Started with the first PodDisruptionBudget.
    pods: Option<Informer<Pod>>,
    /// Namespaces whose PDBs are to be synced.
    dirty: BTreeSet<String>,
    retry_ms: Option<u64>,
}

impl DisruptionController {
    pub fn new(api: &ApiServer) -> DisruptionController {
        let pdbs: Informer<PodDisruptionBudget> = Informer::start(api, 0);
        let mut c = DisruptionController {
            pods: None,
            dirty: pdbs
                .all()
                .map(|p| k8s::namespace(&p.metadata).to_string())
                .collect(),
            pdbs,
            retry_ms: None,
        };
        if !c.pdbs.is_empty() {
            c.pods = Some(Informer::start(api, 0));
        }
        c
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        let dirty = (!self.dirty.is_empty()).then(|| api.now_ms());
        [
            self.pdbs.next_due_ms(api),
            self.pods.as_ref().and_then(|p| p.next_due_ms(api)),
            dirty,
            self.retry_ms,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        for d in self.pdbs.poll(api, now_ms) {
            self.dirty
                .insert(k8s::namespace(&d.obj.metadata).to_string());
        }
        if self.pods.is_none() && !self.pdbs.is_empty() {
            self.pods = Some(Informer::start(api, 0));
        }
        if let Some(pods) = &mut self.pods {
            for d in pods.poll(api, now_ms) {
                self.dirty
                    .insert(k8s::namespace(&d.obj.metadata).to_string());
            }
        }
        if self.retry_ms.is_some_and(|t| t <= now_ms) {
            self.retry_ms = None;
            self.dirty.extend(
                self.pdbs
                    .all()
                    .map(|p| k8s::namespace(&p.metadata).to_string()),
            );
        }
        for ns in std::mem::take(&mut self.dirty) {
            let pdbs: Vec<Arc<PodDisruptionBudget>> = self
                .pdbs
                .list(&ns, &Selector::everything())
                .into_iter()
                .cloned()
                .collect();
            for pdb in pdbs {
                if !self.sync(api, &pdb, now_ms) {
                    self.retry_ms = Some(now_ms + RETRY_MS);
                }
            }
        }
    }

    /// `trySync` (with `failSafe` when the expected count cannot be had): write the status if
    /// it changed. Whether the write, if any, succeeded.
    fn sync(&self, api: &mut ApiServer, pdb: &Arc<PodDisruptionBudget>, now_ms: u64) -> bool {
        let pods = self.matched(pdb);
        let status = match expected_and_desired(api, pdb, &pods) {
            Ok((expected, desired)) => {
                // countHealthyPods: not being deleted, and Ready.
                let healthy = pods
                    .iter()
                    .filter(|p| k8s::is_ready(p) && !k8s::is_terminating(&p.metadata))
                    .count() as i32;
                // updatePdbStatus: nothing is allowed while nothing is expected.
                let allowed = if expected <= 0 {
                    0
                } else {
                    (healthy - desired).max(0)
                };
                let (st, reason) = if allowed > 0 {
                    ("True", "SufficientPods")
                } else {
                    ("False", "InsufficientPods")
                };
                let counts = (healthy, desired, expected, allowed);
                let generation = pdb.metadata.generation;
                new_status(pdb, counts, generation, (st, reason, ""), now_ms)
            }
            Err(message) => {
                // failSafe: the counts and observedGeneration as they were, nothing allowed.
                let old = pdb.status.clone().unwrap_or_default();
                let counts = (
                    old.current_healthy.unwrap_or(0),
                    old.desired_healthy.unwrap_or(0),
                    old.expected_pods.unwrap_or(0),
                    0,
                );
                let condition = ("False", "SyncFailed", message.as_str());
                new_status(pdb, counts, old.observed_generation, condition, now_ms)
            }
        };
        if pdb.status.as_ref() == Some(&status) {
            return true;
        }
        api.update_status_of(ACTOR, pdb, |p| p.status = Some(status))
            .is_ok()
    }

    /// The pods the PDB's selector matches in its namespace (policy/v1: a nil selector matches
    /// none, an empty one every pod).
    fn matched(&self, pdb: &PodDisruptionBudget) -> Vec<Arc<Pod>> {
        let sel = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
        let (Some(pods), Some(_)) = (&self.pods, sel) else {
            return Vec::new();
        };
        let Ok(sel) = Selector::from_label_selector(sel) else {
            return Vec::new();
        };
        pods.list(k8s::namespace(&pdb.metadata), &sel)
            .into_iter()
            .cloned()
            .collect()
    }
}

/// `getExpectedPodCount`: (expectedCount, desiredHealthy), or the sync error's message. A PDB
/// with neither field expects nothing.
fn expected_and_desired(
    api: &ApiServer,
    pdb: &PodDisruptionBudget,
    pods: &[Arc<Pod>],
) -> Result<(i32, i32), String> {
    let spec = pdb.spec.clone().unwrap_or_default();
    if let Some(max) = &spec.max_unavailable {
        let expected = expected_scale(api, pods)?;
        let max = k8s::scaled_value(max, expected, true)?;
        return Ok((expected, (expected - max).max(0)));
    }
    match &spec.min_available {
        Some(IntOrString::Int(min)) => Ok((pods.len() as i32, *min)),
        Some(min) => {
            let expected = expected_scale(api, pods)?;
            Ok((expected, k8s::scaled_value(min, expected, true)?))
        }
        None => Ok((0, 0)),
    }
}

/// `getExpectedScale`: the replicas of the pods' controllers, each counted once; a pod without
/// a controller is unmanaged and counts for nothing, a controller that cannot be found fails.
fn expected_scale(api: &ApiServer, pods: &[Arc<Pod>]) -> Result<i32, String> {
    let mut controllers: BTreeMap<Key, i32> = BTreeMap::new();
    for pod in pods {
        let Some(owner) = k8s::controller_of(&pod.metadata) else {
            continue;
        };
        let ns = k8s::namespace(&pod.metadata);
        let sts = (owner.kind == "StatefulSet")
            .then(|| api.try_get::<StatefulSet>(ns, &owner.name))
            .flatten()
            .filter(|s| s.metadata.uid.as_deref() == Some(owner.uid.as_str()));
        let Some(sts) = sts else {
            return Err(format!(
                "found no controllers for pod {:?}",
                k8s::name(&pod.metadata)
            ));
        };
        let key = (ns.to_string(), owner.name.clone());
        controllers.insert(key, sts.spec.replicas.unwrap_or(1));
    }
    Ok(controllers.values().sum())
}

/// The status `updatePdbStatus` writes: the DisruptionAllowed condition set as
/// `apimeta.SetStatusCondition` sets it (its transition time kept while its status stays, the
/// other conditions kept).
fn new_status(
    pdb: &PodDisruptionBudget,
    (healthy, desired, expected, allowed): (i32, i32, i32, i32),
    generation: Option<i64>,
    (status, reason, message): (&str, &str, &str),
    now_ms: u64,
) -> PodDisruptionBudgetStatus {
    let old = pdb.status.as_ref();
    let mut conditions = old.and_then(|s| s.conditions.clone()).unwrap_or_default();
    let since = conditions
        .iter()
        .find(|c| c.type_ == "DisruptionAllowed")
        .filter(|c| c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| to_time(now_ms));
    let condition = Condition {
        type_: "DisruptionAllowed".into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: generation,
        last_transition_time: since,
    };
    match conditions
        .iter_mut()
        .find(|c| c.type_ == "DisruptionAllowed")
    {
        Some(c) => *c = condition,
        None => conditions.push(condition),
    }
    PodDisruptionBudgetStatus {
        current_healthy: Some(healthy),
        desired_healthy: Some(desired),
        expected_pods: Some(expected),
        disruptions_allowed: Some(allowed),
        observed_generation: generation,
        conditions: Some(conditions),
        disrupted_pods: old.and_then(|s| s.disrupted_pods.clone()),
    }
}
