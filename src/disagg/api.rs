//! DisaggregatedSet API types (`disaggregatedset.x-k8s.io/v1`), lws
//! `api/disaggregatedset/v1/disaggregatedset_types.go` and `disaggregatedsetrolescaler_types.go`
//! at v0.10.0. Our own serde types with the CRD's JSON names; unknown fields are rejected, as
//! `kubectl apply --validate=strict` rejects them. Enumerations are strings, as in the LWS types.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};

use crate::api::LeaderWorkerSetSpec;

pub const GROUP: &str = "disaggregatedset.x-k8s.io";
pub const API_VERSION: &str = "disaggregatedset.x-k8s.io/v1";
pub const KIND: &str = "DisaggregatedSet";
pub const SCALER_KIND: &str = "DisaggregatedSetRoleScaler";

/// Label and annotation keys (disaggregatedset_types.go).
pub mod keys {
    pub const SET_NAME: &str = "disaggregatedset.x-k8s.io/name";
    pub const ROLE: &str = "disaggregatedset.x-k8s.io/role";
    pub const SLICE: &str = "disaggregatedset.x-k8s.io/slice";
    pub const REVISION: &str = "disaggregatedset.x-k8s.io/revision";
    pub const INITIAL_REPLICAS: &str = "disaggregatedset.x-k8s.io/initial-replicas";
}

/// `RoleScalingMode`.
pub const SCALING_STATIC: &str = "Static";
pub const SCALING_EXTERNAL: &str = "External";

/// `PlacementType`.
pub const PLACEMENT_NONE: &str = "None";
pub const PLACEMENT_EXCLUSIVE_SLICE: &str = "ExclusiveSlice";
pub const PLACEMENT_EXCLUSIVE_TOPOLOGY: &str = "ExclusiveTopology";

/// `DisaggregatedSetRoleScalerReady`, the scaler's condition type.
pub const SCALER_READY: &str = "Ready";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisaggregatedSet {
    #[serde(default = "api_version")]
    pub api_version: String,
    #[serde(default = "kind")]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: DisaggregatedSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<DisaggregatedSetStatus>,
}

fn api_version() -> String {
    API_VERSION.to_string()
}

fn kind() -> String {
    KIND.to_string()
}

fn scaler_kind() -> String {
    SCALER_KIND.to_string()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisaggregatedSetSpec {
    /// At least two (CRD `minItems`), names unique.
    pub roles: Vec<DisaggregatedRoleSpec>,
    /// Independent copies of every role (KEP-846); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slices: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_policy: Option<PlacementPolicy>,
}

/// A role: a name, its scaling mode, and an inlined `LeaderWorkerSetTemplateSpec`
/// (`metadata` and `spec` of the LWS it becomes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisaggregatedRoleSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<RoleScaling>,
    #[serde(default, skip_serializing_if = "is_empty_meta")]
    pub metadata: ObjectMeta,
    /// Required here (a role without it fails the CRD's `leaderWorkerTemplate` requirement and
    /// its CEL rule on a real API server; here it fails to decode).
    pub spec: LeaderWorkerSetSpec,
}

fn is_empty_meta(m: &ObjectMeta) -> bool {
    *m == ObjectMeta::default()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleScaling {
    /// `Static` (CRD default) or `External`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacementPolicy {
    /// `None` (CRD default), `ExclusiveSlice` or `ExclusiveTopology`.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub topology: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleStatus {
    pub name: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_replicas: i32,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DisaggregatedSetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub role_statuses: Vec<RoleStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

impl DisaggregatedSet {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }
}

/// `DisaggregatedSetRoleScaler`: the `/scale` target an autoscaler drives for one External role
/// (KEP-849), named `<set>-<role>`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisaggregatedSetRoleScaler {
    #[serde(default = "api_version")]
    pub api_version: String,
    #[serde(default = "scaler_kind")]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: RoleScalerSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RoleScalerStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleScalerSpec {
    #[serde(default)]
    pub replicas: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleScalerStatus {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}
