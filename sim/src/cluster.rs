//! The cluster under the controllers: its configuration (`ClusterConfig`: size, timings,
//! Kubernetes version) and its machines (`Infra`: which are alive). The world and the actors
//! that look at machines (kubelet, node lifecycle, drain) all read these; keeping them here
//! keeps `world` above `actors` with no import back up.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::FeatureGates;

/// The label every node carries with its own name.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// The cluster a run simulates. Defaults are realistic: pods take 20-60 s to become Ready.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// Kubernetes minor version (1.x): picks feature-gate defaults and timings.
    pub kubernetes_minor: u32,
    /// Overrides the version default of `MaxUnavailableStatefulSet` when set.
    pub max_unavailable_statefulset: Option<bool>,
    pub node_count: u32,
    pub pods_per_node: u32,
    pub node_labels: BTreeMap<String, String>,
    /// Topology labels that split the nodes into domains: (key, nodes per domain).
    pub node_domains: Vec<(String, u32)>,
    /// Bound -> Ready, uniform in the inclusive range.
    pub pod_startup_ms: (u64, u64),
    /// Deletion -> containers stopped (capped by the grace period).
    pub pod_termination_ms: (u64, u64),
    /// Watch delivery lag, drawn once per informer.
    pub watch_lag_ms: (u64, u64),
    /// Extra lag of the garbage collector's metadata informers.
    pub gc_lag_ms: (u64, u64),
    /// Terminated instance -> Node object deleted by the cloud controller.
    pub node_delete_delay_ms: u64,
    /// Replacement requested -> new Node registered.
    pub node_join_delay_ms: u64,
    /// Images no node can pull: their pods stay Pending in ImagePullBackOff (a broken template
    /// being rolled out, then fixed: bug B11).
    pub unpullable_images: BTreeSet<String>,
    /// Upstream's integration harness (envtest): no StatefulSet controller, scheduler, kubelet or
    /// garbage collector; tests create and ready pods by hand (lws
    /// `test/integration/controllers/suite_test.go`, `test/testutils/util.go`).
    pub manual: bool,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            kubernetes_minor: 29,
            max_unavailable_statefulset: None,
            node_count: 8,
            pods_per_node: 4,
            node_labels: BTreeMap::new(),
            node_domains: Vec::new(),
            pod_startup_ms: (20_000, 60_000),
            pod_termination_ms: (1_000, 10_000),
            watch_lag_ms: (1, 10),
            gc_lag_ms: (100, 1_000),
            node_delete_delay_ms: 30_000,
            node_join_delay_ms: 120_000,
            unpullable_images: BTreeSet::new(),
            manual: false,
        }
    }
}

impl ClusterConfig {
    pub fn gates(&self) -> FeatureGates {
        let mut g = FeatureGates::for_minor(self.kubernetes_minor);
        if let Some(v) = self.max_unavailable_statefulset {
            g.max_unavailable_statefulset = v;
        }
        g
    }

    /// `--node-monitor-grace-period`: 40 s before 1.32, 50 s from 1.32 (PR #126287).
    pub fn node_monitor_grace_ms(&self) -> u64 {
        if self.kubernetes_minor >= 32 {
            50_000
        } else {
            40_000
        }
    }

    pub fn node_name(index: u32) -> String {
        format!("node-{index}")
    }

    /// The labels of the node in slot `slot` (node `node-<slot>`, or a replacement of it): the
    /// configured labels plus one value per topology domain key, `<key's name>-<domain>` (the
    /// name cut to 50 characters, so the value stays a valid label value).
    pub fn node_labels_at(&self, slot: u32) -> BTreeMap<String, String> {
        let mut labels = self.node_labels.clone();
        for (key, per_domain) in &self.node_domains {
            let name = key.rsplit('/').next().unwrap_or(key);
            let name = name.get(..50).unwrap_or(name);
            let domain = slot / (*per_domain).max(1);
            labels.insert(key.clone(), format!("{name}-{domain}"));
        }
        labels
    }
}

/// The machines under the nodes: what is physically alive. Only the kubelet and the node
/// lifecycle controller's failure detection look here; everything else sees the API.
#[derive(Debug, Default)]
pub struct Infra {
    alive: BTreeSet<String>,
}

impl Infra {
    pub fn is_alive(&self, node: &str) -> bool {
        self.alive.contains(node)
    }

    pub fn add_machine(&mut self, node: &str) {
        self.alive.insert(node.to_string());
    }

    pub fn kill(&mut self, node: &str) -> bool {
        self.alive.remove(node)
    }
}
