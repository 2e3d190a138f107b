//! The scheduler (kube-scheduler, reduced to the filters LWS pods meet; docs/fidelity.md): binds each pending pod to a schedulable node that matches
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
    /// Schedulable nodes ordered by (slots used, name): the least-loaded candidate first, so a
    /// placement costs the nodes it skips, not the cluster size.
    ranked: BTreeSet<(u32, String)>,
    /// Pod slots of each schedulable node.
    capacity: BTreeMap<String, u32>,
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
            ranked: BTreeSet::new(),
            capacity: BTreeMap::new(),
        };
        let nodes: Vec<Node> = s.nodes.all().map(|n| (**n).clone()).collect();
        for n in &nodes {
            s.node_changed(k8s::name(&n.metadata), Some(n));
        }
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

    fn used_of(&self, node: &str) -> u32 {
        self.used.get(node).copied().unwrap_or(0)
    }

    /// Re-rank a node after its Node object or its load changed.
    fn node_changed(&mut self, name: &str, node: Option<&Node>) {
        let used = self.used_of(name);
        self.ranked.remove(&(used, name.to_string()));
        self.capacity.remove(name);
        if let Some(n) = node.filter(|n| schedulable(n)) {
            self.capacity.insert(name.to_string(), capacity(n));
            self.ranked.insert((used, name.to_string()));
        }
    }

    fn add_used(&mut self, node: &str, delta: i64) {
        let before = self.used_of(node);
        let after = (i64::from(before) + delta).max(0) as u32;
        self.used.insert(node.to_string(), after);
        if self.ranked.remove(&(before, node.to_string())) {
            self.ranked.insert((after, node.to_string()));
        }
    }

    fn unaccount(&mut self, key: &Key) {
        self.pending.remove(key);
        if let Some(node) = self.placed.remove(key) {
            self.add_used(&node, -1);
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
            self.add_used(node, 1);
            self.placed.insert(key, node.to_string());
        }
    }

    /// The least-loaded schedulable node with a free slot whose labels match `selector`.
    fn pick(&self, selector: &BTreeMap<String, String>) -> Option<String> {
        self.ranked
            .iter()
            .filter(|(used, name)| *used < self.capacity.get(name).copied().unwrap_or(0))
            .find(|(_, name)| {
                let labels = self
                    .nodes
                    .get("", name)
                    .and_then(|n| n.metadata.labels.clone());
                selector
                    .iter()
                    .all(|(k, v)| labels.as_ref().and_then(|l| l.get(k)) == Some(v))
            })
            .map(|(_, name)| name.clone())
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        let pod_deltas = self.pods.poll(api, now_ms);
        let node_deltas = self.nodes.poll(api, now_ms);
        for d in &node_deltas {
            let name = k8s::name(&d.obj.metadata).to_string();
            let node = (d.ty != EventType::Deleted).then(|| (*d.obj).clone());
            self.node_changed(&name, node.as_ref());
        }
        for d in &pod_deltas {
            match d.ty {
                EventType::Deleted => self.unaccount(&crate::api::key_of(&*d.obj)),
                _ => self.account(&d.obj),
            }
        }
        if pod_deltas.is_empty() && node_deltas.is_empty() && !self.dirty {
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
            match self.pick(&selector) {
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
