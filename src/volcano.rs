//! Volcano's `PodGroup` (`volcano.sh/apis` v1.12.1, `pkg/apis/scheduling/v1beta1/types.go`, the
//! version LWS v0.10.0's go.mod pins), which the v0.10.0 scheduler provider creates for each
//! group (`crate::v0_10_0::scheduler_provider`). Its CRD
//! (`config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml`) has no status subresource.
//! Fields outside the schema are dropped on decode, as the API server prunes them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

pub const API_VERSION: &str = "scheduling.volcano.sh/v1beta1";
pub const KIND: &str = "PodGroup";
/// `KubeGroupNameAnnotationKey`: the PodGroup a pod belongs to.
pub const KUBE_GROUP_NAME_ANNOTATION_KEY: &str = "scheduling.k8s.io/group-name";
/// `QueueNameAnnotationKey` (`GroupName + "/queue-name"`).
pub const QUEUE_NAME_ANNOTATION_KEY: &str = "scheduling.volcano.sh/queue-name";
/// The CRD's default `spec.queue`.
pub const DEFAULT_QUEUE: &str = "default";

fn api_version() -> String {
    API_VERSION.to_string()
}

fn kind() -> String {
    KIND.to_string()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroup {
    #[serde(default = "api_version")]
    pub api_version: String,
    #[serde(default = "kind")]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodGroupSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodGroupStatus>,
}

/// An empty PodGroup with its type set, as a typed Go client's create sends it.
impl Default for PodGroup {
    fn default() -> PodGroup {
        PodGroup {
            api_version: api_version(),
            kind: kind(),
            metadata: ObjectMeta::default(),
            spec: PodGroupSpec::default(),
            status: None,
        }
    }
}

/// The spec as the API server keeps it: a custom resource is stored as sent (pruned by its
/// schema), so every field is optional and a zero or empty value a client sends stays
/// (`minMember: 0`, `queue: ""`); Go's `omitempty` is what a Go client leaves out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_member: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_task_member: Option<BTreeMap<String, i32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_resources: Option<BTreeMap<String, Quantity>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_topology: Option<NetworkTopologySpec>,
}

/// `NetworkTopologySpec`: the CRD defaults `mode` to `hard` and `highestTierAllowed` to 1,
/// and allows only `hard` and `soft` as the mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkTopologySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_tier_allowed: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<PodGroupCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupCondition {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(
        default,
        rename = "transitionID",
        skip_serializing_if = "Option::is_none"
    )]
    pub transition_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
