//! The scheduler (k8s-semantics §6.1): binds each pending pod to a schedulable node that matches
//! its nodeSelector and has a free pod slot, least-loaded first, ties by name. A pod that fits
//! nowhere gets `PodScheduled=False/Unschedulable` and stays Pending until a node or pod changes.
//! Simplification (docs/fidelity.md): capacity is a pod count; affinity and tolerations are not
//! evaluated.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Pod};
use lws::k8s;

use crate::api::{set_pod_condition, ApiServer, EventType, Key};
use crate::informer::Informer;

pub const ACTOR: &str = "default-scheduler";

pub struct Scheduler {
    pods: Informer<Pod>,
    nodes: Informer<Node>,
    dirty: bool,
    /// Pods waiting for a node, kept in step with the pod deltas.
    pending: BTreeSet<Key>,
    /// Pods counted against a node's slots, and the slots used per node.
    placed: BTreeMap<Key, String>,
    used: BTreeMap<String, u32>,
}

impl Scheduler {
    /// `lags_ms`: the pod and node informers' watch lags.
    pub fn new(api: &ApiServer, lags_ms: [u64; 2]) -> Scheduler {
        let mut s = Scheduler {
            pods: Informer::start(api, lags_ms[0]),
            nodes: Informer::start(api, lags_ms[1]),
            dirty: true,
            pending: BTreeSet::new(),
            placed: BTreeMap::new(),
            used: BTreeMap::new(),
        };
        for d in s.pods.initial_deltas() {
            s.account(&d.obj);
        }
        s
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

    fn unaccount(&mut self, key: &Key) {
        self.pending.remove(key);
        if let Some(node) = self.placed.remove(key) {
            if let Some(n) = self.used.get_mut(&node) {
                *n -= 1;
            }
        }
    }

    /// Count a pod against its node, or remember it as pending.
    fn account(&mut self, pod: &Pod) {
        let key = crate::api::key_of(pod);
        self.unaccount(&key);
        let node = k8s::node_name(pod);
        if node.is_empty() {
            if !k8s::is_terminating(&pod.metadata) {
                self.pending.insert(key);
            }
        } else if !matches!(k8s::phase(pod), "Succeeded" | "Failed") {
            *self.used.entry(node.to_string()).or_default() += 1;
            self.placed.insert(key, node.to_string());
        }
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        let pod_deltas = self.pods.poll(api, now_ms);
        let node_changes = self.nodes.poll(api, now_ms).len();
        for d in &pod_deltas {
            match d.ty {
                EventType::Deleted => self.unaccount(&crate::api::key_of(&*d.obj)),
                _ => self.account(&d.obj),
            }
        }
        if pod_deltas.is_empty() && node_changes == 0 && !self.dirty {
            return;
        }
        self.dirty = false;
        let pending: Vec<Key> = self.pending.iter().cloned().collect();
        for key in pending {
            let Some(pod) = self.pods.get(&key.0, &key.1).cloned() else {
                continue;
            };
            let selector = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_selector.clone())
                .unwrap_or_default();
            let used = &self.used;
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
                .map(|n| (k8s::name(&n.metadata), capacity(n)))
                .filter(|(name, cap)| used.get(*name).copied().unwrap_or(0) < *cap)
                .min_by_key(|(name, _)| (used.get(*name).copied().unwrap_or(0), *name))
                .map(|(name, _)| name.to_string());
            match best {
                Some(node) => {
                    if let Ok(bound) = api.bind(ACTOR, &key.0, &key.1, &node) {
                        self.account(&bound);
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
                        if let Some(live) = api.try_get::<Pod>(&key.0, &key.1) {
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
