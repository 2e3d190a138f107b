//! The scheduler (k8s-semantics §6.1): binds each pending pod to a schedulable node that matches
//! its nodeSelector and has a free pod slot, least-loaded first, ties by name. A pod that fits
//! nowhere gets `PodScheduled=False/Unschedulable` and stays Pending until a node or pod changes.
//! Simplification (docs/fidelity.md): capacity is a pod count; affinity and tolerations are not
//! evaluated.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};
use lws::k8s;

use crate::api::{set_pod_condition, ApiServer};
use crate::informer::Informer;

pub const ACTOR: &str = "default-scheduler";

pub struct Scheduler {
    pods: Informer<Pod>,
    nodes: Informer<Node>,
    dirty: bool,
}

impl Scheduler {
    /// `lags_ms`: the pod and node informers' watch lags.
    pub fn new(api: &ApiServer, lags_ms: [u64; 2]) -> Scheduler {
        Scheduler {
            pods: Informer::start(api, lags_ms[0]),
            nodes: Informer::start(api, lags_ms[1]),
            dirty: true,
        }
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        let dirty = self.dirty.then_some(api.now_ms());
        [
            self.pods.next_due_ms(api),
            self.nodes.next_due_ms(api),
            dirty,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        let pod_changes = self.pods.poll(api, now_ms).len();
        let node_changes = self.nodes.poll(api, now_ms).len();
        if pod_changes + node_changes == 0 && !self.dirty {
            return;
        }
        self.dirty = false;
        let mut used: BTreeMap<&str, u32> = BTreeMap::new();
        let mut pending = Vec::new();
        for p in self.pods.all() {
            let node = k8s::node_name(p);
            if node.is_empty() {
                if !k8s::is_terminating(&p.metadata) {
                    pending.push(p.clone());
                }
            } else if !matches!(k8s::phase(p), "Succeeded" | "Failed") {
                *used.entry(node).or_default() += 1;
            }
        }
        let mut used: BTreeMap<String, u32> =
            used.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        for pod in pending {
            let selector = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_selector.clone())
                .unwrap_or_default();
            let best = self
                .nodes
                .all()
                .filter(|n| schedulable(n))
                .filter(|n| {
                    let labels = n.metadata.labels.as_ref();
                    selector
                        .iter()
                        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
                })
                .map(|n| (k8s::name(&n.metadata).to_string(), capacity(n)))
                .filter(|(name, cap)| used.get(name).copied().unwrap_or(0) < *cap)
                .min_by_key(|(name, _)| (used.get(name).copied().unwrap_or(0), name.clone()));
            let (ns, name) = (k8s::namespace(&pod.metadata), k8s::name(&pod.metadata));
            match best {
                Some((node, _)) => {
                    if api.bind(ACTOR, ns, name, &node).is_ok() {
                        *used.entry(node).or_default() += 1;
                    }
                }
                None => {
                    let already = pod
                        .status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| {
                            c.iter()
                                .any(|c| c.type_ == "PodScheduled" && c.status == "False")
                        });
                    if !already {
                        if let Some(live) = api.try_get::<Pod>(ns, name) {
                            let mut p = (*live).clone();
                            set_pod_condition(
                                &mut p,
                                "PodScheduled",
                                "False",
                                Some("Unschedulable"),
                                now_ms,
                            );
                            let _ = api.update_status(ACTOR, p);
                        }
                    }
                }
            }
        }
    }
}

fn schedulable(n: &Node) -> bool {
    let spec = n.spec.as_ref();
    if spec.and_then(|s| s.unschedulable).unwrap_or(false) {
        return false;
    }
    let tainted = spec.and_then(|s| s.taints.as_ref()).is_some_and(|t| {
        t.iter()
            .any(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
    });
    let ready = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_none_or(|c| c.status == "True");
    !tainted && ready
}

/// `status.allocatable.pods`, the node's pod slots.
pub fn capacity(n: &Node) -> u32 {
    n.status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get("pods"))
        .and_then(|q| q.0.parse().ok())
        .unwrap_or(110)
}
