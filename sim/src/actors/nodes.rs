//! Node lifecycle (kubernetes pkg/controller/nodelifecycle, pkg/controller/tainteviction,
//! pkg/controller/podgc/gc_controller.go @003e8629; EKS managed node group update behaviour): the node lifecycle controller (NotReady after the
//! monitor grace period, pods marked NotReady, NoExecute taints), taint-based eviction when each
//! pod's toleration runs out (300 s unless its spec says), the cloud controller deleting the Node of a terminated instance, new
//! instances joining, and PodGC force-deleting pods bound to a Node that no longer exists.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Node, NodeAddress, NodeCondition, NodeSpec, NodeStatus, NodeSystemInfo, Pod, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lws::k8s;
use serde_json::json;

use crate::api::{
    disruption_target, set_pod_condition, ApiServer, DeleteOptions, EventType, Selector, BY_POD_GC,
    BY_TAINT_MANAGER,
};
use crate::cluster::{ClusterConfig, Infra};
use crate::informer::Informer;
use crate::time::{after, to_time};

pub const ACTOR: &str = "node-lifecycle-controller";
pub const PODGC: &str = "pod-garbage-collector";
const TAINT_EVICTION: &str = "taint-eviction-controller";
pub const CLOUD: &str = "cloud-node-lifecycle";
const PODGC_TICK_MS: u64 = 20_000;
const PODGC_QUARANTINE_MS: u64 = 40_000;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    MarkNotReady(String),
    TaintEvict(String),
    DeleteNode(String),
    /// A new node and the slot (of `node-<slot>`) whose labels it takes.
    Join(String, u32),
    PodGcTick,
}

pub struct NodeLifecycle {
    /// Node deletions arm PodGC (which otherwise would tick every 20 s for nothing).
    nodes: Informer<Node>,
    timers: BTreeSet<(u64, u64, Timer)>,
    seq: u64,
    /// Pods on a missing Node, with the time PodGC first saw them (quarantine).
    orphans: BTreeMap<(String, String), u64>,
    podgc_armed: bool,
    /// The NoExecute taints of each node a client added (`kubectl taint`, a patch), by key and
    /// value, with when the taint eviction controller first saw each: its clock for the pods
    /// that tolerate one for a while. The unreachable taint is this controller's own and keeps
    /// its `timeAdded`.
    client_taints: BTreeMap<String, BTreeMap<(String, String), u64>>,
}

impl NodeLifecycle {
    pub fn new(api: &ApiServer) -> NodeLifecycle {
        NodeLifecycle {
            nodes: Informer::start(api, 0),
            timers: BTreeSet::new(),
            seq: 0,
            orphans: BTreeMap::new(),
            podgc_armed: false,
            client_taints: BTreeMap::new(),
        }
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        [
            self.timers.first().map(|t| t.0),
            self.nodes.next_due_ms(api),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn at(&mut self, at_ms: u64, t: Timer) {
        self.seq += 1;
        self.timers.insert((at_ms, self.seq, t));
    }

    /// `at`, unless the same timer is already set for that instant.
    fn at_once(&mut self, at_ms: u64, t: Timer) {
        if !self.timers.iter().any(|(a, _, x)| *a == at_ms && *x == t) {
            self.at(at_ms, t);
        }
    }

    /// The taint eviction controller's node handler (kubernetes
    /// pkg/controller/tainteviction/taint_eviction.go `NodeUpdated`, `handleNodeUpdate`): a
    /// client's NoExecute taint appearing on a node has every pod on it processed at once
    /// (`processPodOnNode`: a pod that does not tolerate it is deleted now, one that tolerates
    /// it for a while when that runs out, counted from now); a node whose client taints are
    /// all gone cancels nothing already due but starts no clock.
    fn on_node_taints(&mut self, d: &crate::informer::Delta<Node>, now_ms: u64) {
        let node = k8s::name(&d.obj.metadata).to_string();
        if d.ty == EventType::Deleted {
            self.client_taints.remove(&node);
            return;
        }
        let current: BTreeSet<(String, String)> = no_execute(&d.obj)
            .into_iter()
            .filter(|t| t.key != UNREACHABLE)
            .map(|t| (t.key, t.value.unwrap_or_default()))
            .collect();
        let seen = self.client_taints.entry(node.clone()).or_default();
        seen.retain(|k, _| current.contains(k));
        let mut added = false;
        for k in current {
            seen.entry(k).or_insert_with(|| {
                added = true;
                now_ms
            });
        }
        if seen.is_empty() {
            self.client_taints.remove(&node);
        }
        if added {
            self.at_once(now_ms, Timer::TaintEvict(node));
        }
    }

    /// The machine stopped (crash or termination): its kubelet stops renewing its lease.
    pub fn machine_failed(&mut self, node: &str, cfg: &ClusterConfig, now_ms: u64) {
        self.at(
            after(now_ms, cfg.node_monitor_grace_ms()),
            Timer::MarkNotReady(node.to_string()),
        );
    }

    /// The cloud provider reports the instance gone: the Node object is deleted after a delay.
    pub fn instance_terminated(&mut self, node: &str, cfg: &ClusterConfig, now_ms: u64) {
        self.at(
            after(now_ms, cfg.node_delete_delay_ms),
            Timer::DeleteNode(node.to_string()),
        );
    }

    /// A replacement instance registers its Node, with the labels of `slot`, after the join
    /// delay.
    pub fn schedule_join(&mut self, node: &str, slot: u32, cfg: &ClusterConfig, now_ms: u64) {
        self.at(
            after(now_ms, cfg.node_join_delay_ms),
            Timer::Join(node.to_string(), slot),
        );
    }

    pub fn step(
        &mut self,
        api: &mut ApiServer,
        infra: &mut Infra,
        cfg: &ClusterConfig,
        now_ms: u64,
    ) {
        let deltas = self.nodes.poll(api, now_ms);
        let node_deleted = deltas.iter().any(|d| d.ty == EventType::Deleted);
        for d in &deltas {
            self.on_node_taints(d, now_ms);
        }
        if node_deleted && !self.podgc_armed {
            self.podgc_armed = true;
            self.at(after(now_ms, PODGC_TICK_MS), Timer::PodGcTick);
        }
        while let Some(first) = self.timers.first() {
            if first.0 > now_ms {
                break;
            }
            let (_, _, timer) = self.timers.pop_first().expect("checked non-empty");
            match timer {
                Timer::MarkNotReady(node) => self.mark_not_ready(api, infra, &node, now_ms),
                Timer::TaintEvict(node) => {
                    let seen = self.client_taints.get(&node);
                    for at in evict_by_taint(api, &node, seen) {
                        self.at_once(at, Timer::TaintEvict(node.clone()));
                    }
                }
                Timer::DeleteNode(node) => {
                    let _ = api.delete::<Node>(CLOUD, "", &node, &DeleteOptions::default());
                }
                Timer::Join(node, slot) => {
                    infra.add_machine(&node);
                    register_node(api, &node, slot, cfg, now_ms);
                }
                Timer::PodGcTick => self.podgc_tick(api, now_ms),
            }
        }
    }

    /// Ready=Unknown, unreachable taints, every pod on the node Ready=False, and taint eviction
    /// planned for when the default 300 s toleration runs out.
    fn mark_not_ready(&mut self, api: &mut ApiServer, infra: &Infra, node: &str, now_ms: u64) {
        if infra.is_alive(node) {
            return;
        }
        let Some(live) = api.try_get::<Node>("", node) else {
            return;
        };
        let mut n = (*live).clone();
        let st = n.status.get_or_insert_with(Default::default);
        for c in st.conditions.iter_mut().flatten() {
            if c.type_ == "Ready" {
                c.status = "Unknown".into();
                c.reason = Some("NodeStatusUnknown".into());
                c.last_transition_time = Some(to_time(now_ms));
            }
        }
        let _ = api.update_status(ACTOR, n);
        let taints: Vec<Taint> = ["NoSchedule", "NoExecute"]
            .into_iter()
            .map(|effect| Taint {
                key: UNREACHABLE.into(),
                effect: effect.into(),
                time_added: Some(to_time(now_ms)),
                value: None,
            })
            .collect();
        let no_execute: Vec<Taint> = taints
            .iter()
            .filter(|t| t.effect == "NoExecute")
            .cloned()
            .collect();
        let _ = api.merge_patch::<Node>(ACTOR, "", node, &json!({"spec": {"taints": taints}}));
        // The taint eviction controller's deadline for each pod: one timer per distinct one
        // (the admission plugin's 300 s for every pod that did not say otherwise).
        let mut deadlines = BTreeSet::new();
        for pod in pods_on(api, node) {
            let delay = eviction_delay_ms(&pod, &no_execute);
            deadlines.extend(delay.map(|d| after(now_ms, d)));
            let mut p = (*pod).clone();
            set_pod_condition(&mut p, "Ready", "False", Some("NodeNotReady"), now_ms);
            let _ = api.update_status(ACTOR, p);
        }
        if deadlines.is_empty() {
            deadlines.insert(after(now_ms, TOLERATION_MS));
        }
        for at in deadlines {
            self.at(at, Timer::TaintEvict(node.to_string()));
        }
    }

    /// `gcOrphaned`: pods bound to a missing Node for longer than the quarantine are marked
    /// Failed and force-deleted.
    fn podgc_tick(&mut self, api: &mut ApiServer, now_ms: u64) {
        let nodes: BTreeSet<String> = api
            .list::<Node>(None, &Selector::everything())
            .iter()
            .map(|n| k8s::name(&n.metadata).to_string())
            .collect();
        let mut seen = BTreeMap::new();
        for pod in api.list::<Pod>(None, &Selector::everything()) {
            let node = k8s::node_name(&pod);
            if node.is_empty() || nodes.contains(node) {
                continue;
            }
            let key = (
                k8s::namespace(&pod.metadata).to_string(),
                k8s::name(&pod.metadata).to_string(),
            );
            let since = self.orphans.get(&key).copied().unwrap_or(now_ms);
            if now_ms - since >= PODGC_QUARANTINE_MS {
                // `markFailedAndDeletePodWithCondition`: a pod not yet terminal is marked
                // Failed, with DisruptionTarget, before the forced delete.
                if !matches!(k8s::phase(&pod), "Succeeded" | "Failed") {
                    let mut p = (*pod).clone();
                    p.status.get_or_insert_with(Default::default).phase = Some("Failed".into());
                    disruption_target(&mut p, &BY_POD_GC, now_ms);
                    let _ = api.update_status(PODGC, p);
                }
                let opts = DeleteOptions {
                    grace_period_seconds: Some(0),
                    ..Default::default()
                };
                let _ = api.delete::<Pod>(PODGC, &key.0, &key.1, &opts);
            } else {
                seen.insert(key, since);
            }
        }
        self.orphans = seen;
        self.podgc_armed = !self.orphans.is_empty();
        if self.podgc_armed {
            self.at(after(now_ms, PODGC_TICK_MS), Timer::PodGcTick);
        }
    }
}

/// How long after the NoExecute `taints` were added the taint eviction controller deletes
/// `pod` (kubernetes pkg/controller/tainteviction `processPodOnNode`, `getMinTolerationTime`;
/// k8s.io/api core/v1 `GetMatchingTolerations`): at once when a taint is not tolerated or a
/// matching toleration's `tolerationSeconds` is 0 or less; never (`None`) when no matching
/// toleration has `tolerationSeconds`; else after the least of them.
fn eviction_delay_ms(pod: &Pod, taints: &[Taint]) -> Option<u64> {
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    let mut least: Option<i64> = None;
    for taint in taints {
        let Some(t) = tolerations.iter().find(|t| tolerates(t, taint)) else {
            return Some(0);
        };
        if let Some(s) = t.toleration_seconds {
            least = Some(least.map_or(s, |l| l.min(s)));
        }
    }
    least.map(crate::time::secs_to_ms)
}

/// `Toleration.ToleratesTaint` (k8s.io/api core/v1 `toleration.go`): the effect and key match
/// when given, and the value by the operator.
pub(crate) fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    fn given(v: &Option<String>) -> Option<&str> {
        v.as_deref().filter(|v| !v.is_empty())
    }
    if given(&t.effect).is_some_and(|e| e != taint.effect)
        || given(&t.key).is_some_and(|k| k != taint.key)
    {
        return false;
    }
    match t.operator.as_deref().unwrap_or("") {
        "" | "Equal" => t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds`.
pub const TOLERATION_MS: u64 = 300_000;

fn pods_on(api: &ApiServer, node: &str) -> Vec<crate::api::Shared<Pod>> {
    api.list::<Pod>(None, &Selector::everything())
        .into_iter()
        .filter(|p| k8s::node_name(p) == node)
        .collect()
}

/// The node lifecycle controller's own NoExecute taint for a node that stopped reporting.
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// A node's NoExecute taints.
fn no_execute(node: &Node) -> Vec<Taint> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t.effect == "NoExecute")
        .collect()
}

/// The taint eviction controller: a graceful delete of every pod on the node whose toleration
/// of its NoExecute taints has run out (`eviction_delay_ms`, counted from when the controller
/// first saw one: the unreachable taint's `timeAdded`, a client's taint's first sighting in
/// `client_taints`, the earlier of them, as an eviction already scheduled keeps its start in
/// `processPodOnNode`). With the kubelet dead nobody finishes it, so the pods stay Terminating
/// until PodGC or the node returns. Returns the later instants a pod on the node is due.
fn evict_by_taint(
    api: &mut ApiServer,
    node: &str,
    client_taints: Option<&BTreeMap<(String, String), u64>>,
) -> Vec<u64> {
    let no_execute = api
        .try_get::<Node>("", node)
        .map(|n| no_execute(&n))
        .unwrap_or_default();
    if no_execute.is_empty() {
        return Vec::new();
    }
    let now_ms = api.now_ms();
    let own = no_execute
        .iter()
        .filter(|t| t.key == UNREACHABLE)
        .filter_map(|t| t.time_added.as_ref().map(crate::time::from_time))
        .max();
    let theirs = client_taints.and_then(|m| m.values().min().copied());
    let since_ms = own.into_iter().chain(theirs).min().unwrap_or(now_ms);
    let mut later = Vec::new();
    for pod in pods_on(api, node) {
        let at = eviction_delay_ms(&pod, &no_execute).map(|d| after(since_ms, d));
        if at.is_some_and(|at| at > now_ms) && pod.metadata.deletion_timestamp.is_none() {
            later.extend(at);
        }
        let due = at.is_some_and(|at| at <= now_ms);
        if due && pod.metadata.deletion_timestamp.is_none() {
            // `addConditionAndDeletePod`: DisruptionTarget first (a status patch), then the
            // delete; a failed patch (only an injected fault) leaves the pod undeleted, where
            // upstream's queue would retry.
            let mut marked = (*pod).clone();
            if disruption_target(&mut marked, &BY_TAINT_MANAGER, now_ms)
                && api.update_status(TAINT_EVICTION, marked).is_err()
            {
                continue;
            }
            let m = &pod.metadata;
            let _ = api.delete::<Pod>(
                TAINT_EVICTION,
                k8s::namespace(m),
                k8s::name(m),
                &DeleteOptions::default(),
            );
        }
    }
    later
}

/// Create the Node, then post its status, as a kubelet registering does.
pub fn register_node(api: &mut ApiServer, name: &str, slot: u32, cfg: &ClusterConfig, now_ms: u64) {
    let mut node = new_node(name, cfg.node_labels_at(slot), cfg, now_ms);
    describe_node(&mut node, name, slot, cfg.kubernetes_minor);
    // The kubelet registers the Node, then its status loop reports the status.
    let status = node.status.take();
    if let Ok(created) = api.create("kubelet", node) {
        let mut n = (*created).clone();
        n.status = status;
        let _ = api.update_status("kubelet", n);
    }
}

/// What a kubelet reports about its machine (`kubectl get nodes -o wide`): an InternalIP in
/// 10.0.0.0/16 by slot, the hostname, and a kind node's system info at the cluster's version.
/// Nothing in the simulation reads them.
fn describe_node(node: &mut Node, name: &str, slot: u32, minor: u32) {
    let ip = std::net::Ipv4Addr::from(u32::from(std::net::Ipv4Addr::new(10, 0, 0, 2)) + slot);
    let address = |type_: &str, address: String| NodeAddress {
        type_: type_.into(),
        address,
    };
    let status = node.status.get_or_insert_with(Default::default);
    status.addresses = Some(vec![
        address("InternalIP", ip.to_string()),
        address("Hostname", name.to_string()),
    ]);
    status.node_info = Some(NodeSystemInfo {
        architecture: "amd64".into(),
        container_runtime_version: "containerd://2.0.3".into(),
        kernel_version: "6.1.0-31-cloud-amd64".into(),
        kubelet_version: format!("v1.{minor}.0"),
        kube_proxy_version: format!("v1.{minor}.0"),
        operating_system: "linux".into(),
        os_image: "Debian GNU/Linux 12 (bookworm)".into(),
        machine_id: String::new(),
        system_uuid: String::new(),
        boot_id: String::new(),
        ..Default::default()
    });
}

/// The cpu a node reports (not scheduled on).
const NODE_CPU: &str = "64";
/// The memory a node reports (not scheduled on).
const NODE_MEMORY: &str = "512Gi";

/// A Ready node with `pods_per_node` slots and `labels`.
fn new_node(
    name: &str,
    mut labels: BTreeMap<String, String>,
    cfg: &ClusterConfig,
    now_ms: u64,
) -> Node {
    labels.insert(crate::cluster::HOSTNAME_LABEL.into(), name.to_string());
    let pods = Quantity(cfg.pods_per_node.to_string());
    // cpu and memory are not scheduled on (capacity is a pod count); they are reported so that
    // `kubectl describe node` has a denominator for its request percentages.
    let resources: BTreeMap<String, Quantity> = [
        ("cpu".to_string(), Quantity(NODE_CPU.into())),
        ("memory".to_string(), Quantity(NODE_MEMORY.into())),
        ("pods".to_string(), pods),
    ]
    .into();
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            allocatable: Some(resources.clone()),
            capacity: Some(resources),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(to_time(now_ms)),
                last_heartbeat_time: Some(to_time(now_ms)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;

    fn tol(key: &str, op: &str, effect: &str, seconds: Option<i64>) -> Toleration {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Toleration {
            key: some(key),
            operator: some(op),
            effect: some(effect),
            toleration_seconds: seconds,
            value: None,
        }
    }

    fn pod(tolerations: Vec<Toleration>) -> Pod {
        Pod {
            spec: Some(PodSpec {
                tolerations: Some(tolerations),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_pod_is_evicted_when_its_least_matching_toleration_runs_out() {
        let unreachable = Taint {
            key: "node.kubernetes.io/unreachable".into(),
            effect: "NoExecute".into(),
            ..Default::default()
        };
        let taints = [unreachable];
        let key = "node.kubernetes.io/unreachable";
        let cases = [
            (vec![], Some(0)),
            (
                vec![tol(key, "Exists", "NoExecute", Some(300))],
                Some(300_000),
            ),
            (
                vec![
                    tol(key, "Exists", "NoExecute", Some(300)),
                    tol("", "Exists", "", Some(30)),
                ],
                Some(300_000),
            ),
            (vec![tol(key, "Exists", "NoSchedule", Some(30))], Some(0)),
            (vec![tol(key, "Exists", "", None)], None),
            (vec![tol(key, "Exists", "NoExecute", Some(-5))], Some(0)),
            (vec![tol(key, "Equal", "NoExecute", Some(30))], Some(30_000)),
            (vec![tol("other", "Exists", "NoExecute", Some(30))], Some(0)),
        ];
        for (tolerations, want) in cases {
            let p = pod(tolerations.clone());
            assert_eq!(eviction_delay_ms(&p, &taints), want, "{tolerations:?}");
        }
    }
}
