//! LeaderWorkerSet API types (`leaderworkerset.x-k8s.io/v1`).
//!
//! Our own serde types with the CRD's exact JSON names (lws `api/leaderworkerset/v1/leaderworkerset_types.go`
//! at v0.3.0 and v0.4.1; see `docs/fidelity.md`). Fields of every release we model are present; a release
//! that lacks a field simply ignores it; admission first prunes what the release's CRD does not
//! declare (`crate::crd`). Unknown fields are rejected so a typo in a manifest is an error,
//! as `kubectl apply --validate=strict` would make it.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

pub const API_VERSION: &str = "leaderworkerset.x-k8s.io/v1";
pub const KIND: &str = "LeaderWorkerSet";

/// Well-known label and annotation keys (lws `leaderworkerset_types.go`, v0.3.0 L28-L79).
pub mod keys {
    pub const SET_NAME: &str = "leaderworkerset.sigs.k8s.io/name";
    pub const GROUP_INDEX: &str = "leaderworkerset.sigs.k8s.io/group-index";
    pub const WORKER_INDEX: &str = "leaderworkerset.sigs.k8s.io/worker-index";
    pub const SIZE: &str = "leaderworkerset.sigs.k8s.io/size";
    pub const REPLICAS: &str = "leaderworkerset.sigs.k8s.io/replicas";
    pub const GROUP_UNIQUE_HASH: &str = "leaderworkerset.sigs.k8s.io/group-key";
    pub const LEADER_POD_NAME: &str = "leaderworkerset.sigs.k8s.io/leader-name";
    pub const TEMPLATE_REVISION_HASH: &str = "leaderworkerset.sigs.k8s.io/template-revision-hash";
    pub const EXCLUSIVE_TOPOLOGY: &str = "leaderworkerset.sigs.k8s.io/exclusive-topology";
    pub const SUBGROUP_EXCLUSIVE_TOPOLOGY: &str =
        "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology";
    pub const SUBGROUP_SIZE: &str = "leaderworkerset.gke.io/subgroup-size";
    pub const SUBGROUP_INDEX: &str = "leaderworkerset.sigs.k8s.io/subgroup-index";
    pub const SUBGROUP_KEY: &str = "leaderworkerset.sigs.k8s.io/subgroup-key";
    pub const SUBDOMAIN_POLICY: &str = "leaderworkerset.sigs.k8s.io/subdomainPolicy";
    pub const LEADER_ADDRESS_ENV: &str = "LWS_LEADER_ADDRESS";
    pub const GROUP_SIZE_ENV: &str = "LWS_GROUP_SIZE";
    /// v0.10.0 (api/leaderworkerset/v1/leaderworkerset_types.go at the tag): the subgroup keys
    /// moved from `leaderworkerset.gke.io` to `leaderworkerset.sigs.k8s.io`.
    pub const SUBGROUP_SIZE_V0_10: &str = "leaderworkerset.sigs.k8s.io/subgroup-size";
    pub const SUBGROUP_POLICY_TYPE: &str = "leaderworkerset.sigs.k8s.io/subgroup-policy-type";
    pub const RECREATE_GROUP_AFTER_START: &str =
        "leaderworkerset.sigs.k8s.io/experimental-recreate-group-after-start";
    pub const WORKER_INDEX_ENV: &str = "LWS_WORKER_INDEX";
    /// Not upstream: the finalizer of the proposed Z05 fix (`crate::restart_guard`).
    pub const GROUP_RESTART_FINALIZER: &str = "leaderworkerset.sigs.k8s.io/group-restart";
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaderWorkerSet {
    #[serde(default = "api_version")]
    pub api_version: String,
    #[serde(default = "kind")]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: LeaderWorkerSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LeaderWorkerSetStatus>,
}

fn api_version() -> String {
    API_VERSION.to_string()
}

fn kind() -> String {
    KIND.to_string()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaderWorkerSetSpec {
    /// Number of groups. CRD default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    pub leader_worker_template: LeaderWorkerTemplate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<RolloutStrategy>,
    /// `LeaderCreated` (default) or `LeaderReady`. The Go tag has no omitempty.
    #[serde(default)]
    pub startup_policy: String,
    /// v0.4.0+.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_config: Option<NetworkConfig>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaderWorkerTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_template: Option<PodTemplateSpec>,
    pub worker_template: PodTemplateSpec,
    /// Pods per group, leader included. CRD default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub restart_policy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_group_policy: Option<SubGroupPolicy>,
    /// v0.8.0+: passed to the leader and worker StatefulSets by v0.10.0; v0.3.0 and v0.4.1 ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claim_templates: Option<Vec<k8s_openapi::api::core::v1::PersistentVolumeClaim>>,
    /// v0.8.0+, like `volumeClaimTemplates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_retention_policy:
        Option<k8s_openapi::api::apps::v1::StatefulSetPersistentVolumeClaimRetentionPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubGroupPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_group_size: Option<i32>,
    /// v0.6.0+: `LeaderWorker` (CRD default) or `LeaderExcluded`; v0.3.0 and v0.4.1 ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_group_policy_type: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutStrategy {
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update_configuration: Option<RollingUpdateConfiguration>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollingUpdateConfiguration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// v0.7.0+ (CRD default 0): groups below it are not updated; v0.3.0 and v0.4.1 ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdomain_policy: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerSetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    // `int32` with `omitempty` upstream (api/leaderworkerset/v1/leaderworkerset_types.go,
    // v0.3.0 to v0.10.0): the API server stores no zero count.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa_pod_selector: Option<String>,
    /// v0.10.0 (leaderworkerset_types.go): the generation the status was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl LeaderWorkerSet {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    /// `spec.replicas` after CRD defaulting.
    pub fn replicas(&self) -> i32 {
        self.spec.replicas.unwrap_or(1)
    }

    /// `spec.leaderWorkerTemplate.size` after CRD defaulting.
    pub fn size(&self) -> i32 {
        self.spec.leader_worker_template.size.unwrap_or(1)
    }

    pub fn rolling_update(&self) -> RollingUpdateConfiguration {
        self.spec
            .rollout_strategy
            .as_ref()
            .and_then(|s| s.rolling_update_configuration.clone())
            .unwrap_or_default()
    }

    /// The leader template: `leaderTemplate` when set, else the worker template (v0.3.0 lwsc:547-552).
    pub fn leader_template(&self) -> &PodTemplateSpec {
        let t = &self.spec.leader_worker_template;
        t.leader_template.as_ref().unwrap_or(&t.worker_template)
    }
}
