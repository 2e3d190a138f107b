//! Volcano's gang gate, for pods whose `schedulerName` is `volcano` (the scheduler of
//! `gang-scheduling=volcano`; volcano v1.12 `pkg/scheduler`, reduced to what a PodGroup means to
//! the LWS pods it names; docs/fidelity.md): a pod is placed only as part of its PodGroup
//! (`scheduling.k8s.io/group-name`). While fewer than the group's `minMember` pods are placed,
//! its pending pods are bound together when enough of them fit at once to make `minMember`, and
//! none is bound otherwise; once `minMember` are placed, each further pod is placed on its own. A pod whose
//! PodGroup does not exist waits. Nodes are filtered as the default scheduler filters them
//! (`Scheduler::pick`); no queues, priorities, preemption or PodGroup status.

use k8s_openapi::api::core::v1::Pod;
use lws::k8s;
use lws::volcano::{PodGroup, KUBE_GROUP_NAME_ANNOTATION_KEY};

use super::{mark_unschedulable, Scheduler};
use crate::api::{ApiServer, Key};

/// The scheduler name Volcano's pods carry, and the actor its binds are traced as.
pub const VOLCANO: &str = "volcano";

/// Volcano's scheduling cycle (`schedulePeriod`, default 1s): pods left waiting are looked at
/// again after it (the cycles that could change nothing are skipped: `GangWait`).
pub const SCHEDULE_PERIOD_MS: u64 = 1_000;

/// The PodGroup a pod belongs to.
pub fn group_of(pod: &Pod) -> Option<&str> {
    k8s::annotation(&pod.metadata, KUBE_GROUP_NAME_ANNOTATION_KEY)
}

impl Scheduler {
    /// Place the pending pods `keys` of PodGroup `group` in `namespace` as a gang. Whether
    /// every one of them was bound.
    pub(super) fn schedule_gang(
        &mut self,
        api: &mut ApiServer,
        namespace: &str,
        group: &str,
        keys: &[Key],
        now_ms: u64,
    ) -> bool {
        let Some(pg) = api.try_get::<PodGroup>(namespace, group) else {
            return false;
        };
        let min_member = usize::try_from(pg.spec.min_member.unwrap_or(0).max(1)).unwrap_or(1);
        let placed = self.placed_members(namespace, group);
        let pods: Vec<(Key, std::sync::Arc<Pod>)> = keys
            .iter()
            .filter_map(|k| Some((k.clone(), self.pods.get(&k.0, &k.1)?.clone())))
            .collect();
        if placed >= min_member {
            let mut all = true;
            for (key, pod) in &pods {
                all &= self.schedule_one(api, key, pod, VOLCANO, now_ms);
            }
            return all;
        }
        let Some(nodes) = self.fit_all(&pods, min_member - placed) else {
            let why = format!(
                "pod group is not ready, {placed} Running, {} Pending, {min_member} minAvailable",
                pods.len()
            );
            for (key, pod) in &pods {
                mark_unschedulable(api, key, pod, VOLCANO, || why.clone(), now_ms);
            }
            return false;
        };
        let all = nodes.iter().all(Option::is_some);
        for ((key, _), node) in pods.iter().zip(nodes) {
            let Some(node) = node else {
                continue; // left for a later pass, placed on its own once the gang runs
            };
            if let Ok(bound) = api.bind(VOLCANO, &key.0, &key.1, &node) {
                self.account(&bound);
            }
        }
        all
    }

    /// Members of `group` in `namespace` already counted on a node.
    fn placed_members(&self, namespace: &str, group: &str) -> usize {
        self.placed
            .keys()
            .filter(|k| k.0 == namespace)
            .filter_map(|k| self.pods.get(&k.0, &k.1))
            .filter(|p| group_of(p) == Some(group))
            .count()
    }

    /// A node for each pod that fits, in order, as they would be placed one after another,
    /// when at least `needed` of them fit (the gang's all-or-nothing allocation: Volcano binds
    /// what it allocated once the job is ready); the slots are given back either way, the binds
    /// account them.
    fn fit_all(
        &mut self,
        pods: &[(Key, std::sync::Arc<Pod>)],
        needed: usize,
    ) -> Option<Vec<Option<String>>> {
        // Each pod placed in the trial counts for the next ones' slots and pod affinity, as
        // Volcano's session allocates a job's tasks one after another.
        let nodes: Vec<Option<String>> = pods
            .iter()
            .map(|(key, pod)| {
                let node = self.fit(pod)?;
                self.add_used(&node, 1);
                self.placed.insert(key.clone(), node.clone());
                if !super::required_terms(pod).1.is_empty() {
                    self.anti_placed.insert(key.clone());
                }
                Some(node)
            })
            .collect();
        for ((key, _), node) in pods.iter().zip(&nodes) {
            if let Some(node) = node {
                self.add_used(node, -1);
                self.placed.remove(key);
                self.anti_placed.remove(key);
            }
        }
        (nodes.iter().flatten().count() >= needed).then_some(nodes)
    }
}
