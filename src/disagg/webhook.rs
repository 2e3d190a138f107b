//! Admission of DisaggregatedSet objects at v0.10.0, in two parts:
//!
//! - the validating webhook `vdisaggregatedset.kb.io`
//!   (`pkg/webhooks/disaggregatedset/disaggregatedset_webhook.go`): `validate`;
//! - what the API server itself does from the CRDs
//!   (`config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml` and
//!   `..._disaggregatedsetrolescalers.yaml`, cited below as `ds.yaml:LINE` and
//!   `scaler.yaml:LINE`): the structural defaults (`default_crd`, `default_scaler_crd`) and the
//!   422 causes (`validate_crd`, `validate_scaler_crd`): the OpenAPI schema, the list-map keys
//!   and the CEL rule, in kube-apiserver's order and wording, with validation ratcheting on
//!   update (a cause at a node whose value is unchanged from the old object is dropped).
//!
//! Every error is a `field.Error` string, `path: body`, as `field.ErrorList.ToAggregate` prints
//! it (apimachinery's current `ErrorBody`: strings quoted, numbers bare, other values as JSON).
//!
//! Not modelled: the embedded pod templates and volume claim templates (their defaults, enums
//! and list-map keys are those of core/v1); `metadata` (name) validation, which is generic;
//! the DisaggregatedSet status (the v0.10.0 controller never writes it). Our types cannot tell
//! an absent field from an empty one where they skip empty values, so an empty enum string
//! counts as absent (defaulted, then not checked), as `crate::v0_10_0::webhook` does for LWS;
//! and fields our types always carry (`spec.roles`, each role's `name` and `spec`) are never
//! reported missing. Within one object the schema's checks run in property-name order
//! (upstream iterates a Go map).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;
use serde_json::Value;

use crate::api::{keys as lws_keys, LeaderWorkerSetSpec, RollingUpdateConfiguration};
use crate::disagg::api::{
    DisaggregatedRoleSpec, DisaggregatedSet, DisaggregatedSetRoleScaler, DisaggregatedSetSpec,
    PLACEMENT_EXCLUSIVE_SLICE, PLACEMENT_EXCLUSIVE_TOPOLOGY, PLACEMENT_NONE, SCALING_EXTERNAL,
    SCALING_STATIC,
};
use crate::k8s;
use crate::v0_10_0::webhook::{is_not_more_than_100_percent, validate_positive_int_or_percent};

/// A schema `pattern`: its text (quoted in the error) and the matcher that stands for it.
type Pattern<'a> = (&'a str, fn(&str) -> bool);

// ---------------------------------------------------------------------------------------------
// The validating webhook (disaggregatedset_webhook.go)
// ---------------------------------------------------------------------------------------------

/// `ValidateCreate` and `ValidateUpdate` (disaggregatedset_webhook.go:47-59): both check the
/// new object only. Returns the warnings and the errors (`ToAggregate` drops repeats).
pub fn validate(ds: &DisaggregatedSet) -> (Vec<String>, Vec<String>) {
    let (warnings, mut errs) = validate_roles(ds);
    errs.extend(validate_placement(ds));
    let mut seen = BTreeSet::new();
    errs.retain(|e| seen.insert(e.clone()));
    (warnings, errs)
}

fn is_external(role: &DisaggregatedRoleSpec) -> bool {
    role.scaling
        .as_ref()
        .is_some_and(|s| s.mode == SCALING_EXTERNAL)
}

/// `validate` (disaggregatedset_webhook.go:66-105): each role's rollout strategy; for External
/// roles the scaler name's length and a warning when `spec.replicas` (ignored) is above 1;
/// External roles and `slices > 1` do not mix (alpha).
fn validate_roles(ds: &DisaggregatedSet) -> (Vec<String>, Vec<String>) {
    let mut errs = Vec::new();
    let mut warnings = Vec::new();
    let mut has_external = false;
    for (i, role) in ds.spec.roles.iter().enumerate() {
        let role_path = format!("spec.roles[{i}]");
        errs.extend(validate_role_rollout_strategy(role, &role_path));
        if !is_external(role) {
            continue;
        }
        has_external = true;
        // The scaler is `<set>-<role>` and must fit Kubernetes' 253 characters.
        let scaler_name = format!("{}-{}", ds.name(), role.name);
        if scaler_name.len() > 253 {
            errs.push(format!(
                "{role_path}.name: Invalid value: {:?}: would produce scaler name {scaler_name:?} exceeding 253 characters",
                role.name
            ));
        }
        if let Some(replicas) = role.spec.replicas.filter(|r| *r > 1) {
            warnings.push(format!(
                "role {:?} sets scaling.mode: External and spec.replicas: {replicas} — spec.replicas is ignored; drive replicas via DisaggregatedSetRoleScaler {scaler_name:?} instead",
                role.name
            ));
        }
    }
    if has_external && ds.spec.slices.is_some_and(|s| s > 1) {
        errs.push("spec.slices: Forbidden: spec.slices > 1 is not supported while any role has scaling.mode: External (alpha restriction)".to_string());
    }
    (warnings, errs)
}

/// `validatePlacement` (disaggregatedset_webhook.go:107-136): a placement policy other than
/// None needs a topology, and no role may also ask for LWS exclusive placement (the two would
/// co-locate and exclude at overlapping levels, so the slice would never schedule).
fn validate_placement(ds: &DisaggregatedSet) -> Vec<String> {
    let mut errs = Vec::new();
    let Some(policy) = ds.spec.placement_policy.as_ref() else {
        return errs;
    };
    if policy.type_ == PLACEMENT_NONE || policy.type_.is_empty() {
        return errs;
    }
    if policy.topology.is_empty() {
        errs.push(
            "spec.placementPolicy.topology: Required value: topology is required when type is not None"
                .to_string(),
        );
    }
    for (i, role) in ds.spec.roles.iter().enumerate() {
        if let Some(key) = role_exclusive_topology_annotation(role) {
            errs.push(format!(
                "spec.roles[{i}]: Forbidden: the {key:?} annotation must not be combined with a non-None spec.placementPolicy.type ({})",
                policy.type_
            ));
        }
    }
    errs
}

/// `exclusiveTopologyAnnotationKeys` (disaggregatedset_webhook.go:138-144): the group- and
/// subgroup-level LWS exclusive placement annotations.
const EXCLUSIVE_TOPOLOGY_ANNOTATION_KEYS: [&str; 2] = [
    lws_keys::EXCLUSIVE_TOPOLOGY,
    lws_keys::SUBGROUP_EXCLUSIVE_TOPOLOGY,
];

/// `roleExclusiveTopologyAnnotation` (disaggregatedset_webhook.go:146-166): the first of those
/// keys the role carries where it takes effect: the LWS metadata, or the leader or worker pod
/// template (the LWS pod webhook reads the pod's).
fn role_exclusive_topology_annotation(role: &DisaggregatedRoleSpec) -> Option<&'static str> {
    let has = |meta: Option<&ObjectMeta>, key: &str| {
        meta.and_then(|m| m.annotations.as_ref())
            .is_some_and(|a| a.contains_key(key))
    };
    let template = &role.spec.leader_worker_template;
    EXCLUSIVE_TOPOLOGY_ANNOTATION_KEYS.into_iter().find(|&key| {
        has(Some(&role.metadata), key)
            || template
                .leader_template
                .as_ref()
                .is_some_and(|t| has(t.metadata.as_ref(), key))
            || has(template.worker_template.metadata.as_ref(), key)
    })
}

/// `validateRoleRolloutStrategy` (disaggregatedset_webhook.go:168-203): the type must be
/// RollingUpdate or empty, a partition is forbidden (the controller rolls across roles), and
/// maxSurge and maxUnavailable are checked as the LWS webhook checks them.
fn validate_role_rollout_strategy(role: &DisaggregatedRoleSpec, role_path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let rollout_path = format!("{role_path}.spec.rolloutStrategy");
    let strategy = role.spec.rollout_strategy.as_ref();
    let type_ = strategy.map_or("", |s| s.type_.as_str());
    if !type_.is_empty() && type_ != "RollingUpdate" {
        errs.push(format!(
            "{rollout_path}.type: Unsupported value: {type_:?}: supported values: \"RollingUpdate\", \"\""
        ));
    }
    if let Some(ruc) = strategy.and_then(|s| s.rolling_update_configuration.as_ref()) {
        let ruc_path = format!("{rollout_path}.rollingUpdateConfiguration");
        if ruc.partition.is_some_and(|p| p != 0) {
            errs.push(format!("{ruc_path}.partition: Forbidden: partition is not supported by DisaggregatedSet; rolling updates are managed across roles by the DisaggregatedSet controller"));
        }
        errs.extend(validate_role_max_surge_unavailable(
            ruc,
            role.spec.replicas,
            &ruc_path,
        ));
    }
    errs
}

/// `validateRoleMaxSurgeUnavailable` (disaggregatedset_webhook.go:205-255): for a role with
/// replicas (unset or 0 is exempt), each field non-negative and at most 100%, and if both are
/// valid, not both 0 once scaled (a percentage too). An unset field is Go's zero, int 0.
fn validate_role_max_surge_unavailable(
    ruc: &RollingUpdateConfiguration,
    replicas: Option<i32>,
    ruc_path: &str,
) -> Vec<String> {
    let mut errs = Vec::new();
    let replica_count = match replicas {
        None | Some(0) => return errs,
        Some(r) => r,
    };
    let max_unavailable = ruc.max_unavailable.clone().unwrap_or(IntOrString::Int(0));
    let max_unavailable_path = format!("{ruc_path}.maxUnavailable");
    let max_surge = ruc.max_surge.clone().unwrap_or(IntOrString::Int(0));
    let max_surge_path = format!("{ruc_path}.maxSurge");

    validate_positive_int_or_percent(&max_unavailable, &max_unavailable_path, &mut errs);
    is_not_more_than_100_percent(&max_unavailable, &max_unavailable_path, &mut errs);
    validate_positive_int_or_percent(&max_surge, &max_surge_path, &mut errs);
    is_not_more_than_100_percent(&max_surge, &max_surge_path, &mut errs);
    if !errs.is_empty() {
        return errs; // the combined check needs both fields valid
    }

    let Ok(max_unavailable_value) = k8s::scaled_value(&max_unavailable, replica_count, false)
    else {
        let v = show(&max_unavailable);
        errs.push(format!(
            "{max_unavailable_path}: Invalid value: {v}: invalid value"
        ));
        return errs;
    };
    let Ok(max_surge_value) = k8s::scaled_value(&max_surge, replica_count, true) else {
        let v = show(&max_surge);
        errs.push(format!(
            "{max_surge_path}: Invalid value: {v}: invalid value"
        ));
        return errs;
    };
    if max_unavailable_value == 0 && max_surge_value == 0 {
        let v = show(&max_unavailable);
        errs.push(format!(
            "{max_unavailable_path}: Invalid value: {v}: must not be 0 when `maxSurge` is 0"
        ));
    }
    errs
}

/// An `IntOrString` bad value as `ErrorBody` prints it (JSON): `1`, `"50%"`.
fn show(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => format!("{s:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The CRDs: defaults
// ---------------------------------------------------------------------------------------------

/// The DisaggregatedSet CRD's `default:`s, applied as the API server decodes a request: inside
/// `spec`, those of the set's own fields and of each role's embedded LWS spec, not of the pod
/// templates. A default applies only where its parent object is present.
pub fn default_crd(ds: &mut DisaggregatedSet) {
    let spec = &mut ds.spec;
    spec.slices.get_or_insert(1); // ds.yaml:18364
    if let Some(policy) = spec.placement_policy.as_mut() {
        if policy.type_.is_empty() {
            policy.type_ = PLACEMENT_NONE.to_string(); // ds.yaml:56
        }
    }
    for role in &mut spec.roles {
        if let Some(scaling) = role.scaling.as_mut() {
            if scaling.mode.is_empty() {
                scaling.mode = SCALING_STATIC.to_string(); // ds.yaml:109
            }
        }
        default_role_spec(&mut role.spec);
    }
}

/// The defaults of a role's LWS spec (ds.yaml:118-18353), the LWS CRD's own markers.
fn default_role_spec(spec: &mut LeaderWorkerSetSpec) {
    spec.replicas.get_or_insert(1); // ds.yaml:18261
    if spec.startup_policy.is_empty() {
        spec.startup_policy = "LeaderCreated".to_string(); // ds.yaml:18344
    }
    let template = &mut spec.leader_worker_template;
    if template.restart_policy.is_empty() {
        template.restart_policy = "RecreateGroupOnPodRestart".to_string(); // ds.yaml:8944
    }
    template.size.get_or_insert(1); // ds.yaml:8956
    if let Some(policy) = template.sub_group_policy.as_mut() {
        policy
            .sub_group_policy_type
            .get_or_insert_with(|| "LeaderWorker".to_string()); // ds.yaml:8970
    }
    if let Some(strategy) = spec.rollout_strategy.as_mut() {
        if strategy.type_.is_empty() {
            strategy.type_ = "RollingUpdate".to_string(); // ds.yaml:18334
        }
        if let Some(ruc) = strategy.rolling_update_configuration.as_mut() {
            ruc.max_surge.get_or_insert(IntOrString::Int(0)); // ds.yaml:18287
            ruc.max_unavailable.get_or_insert(IntOrString::Int(1)); // ds.yaml:18305
            ruc.partition.get_or_insert(0); // ds.yaml:18319
        }
    }
}

/// The DisaggregatedSetRoleScaler CRD's defaults: only `spec.replicas: 0` (scaler.yaml:61),
/// which our non-optional `spec.replicas` already carries (Go's zero value too), so nothing is
/// left to fill in.
pub fn default_scaler_crd(_scaler: &mut DisaggregatedSetRoleScaler) {}

// ---------------------------------------------------------------------------------------------
// The CRDs: validation
// ---------------------------------------------------------------------------------------------

/// `hasBlockingErr`'s error (apiextensions-apiserver `pkg/registry/customresource/strategy.go`):
/// after a type, required, enum, maxLength or maxItems failure the CEL rules are not run.
const CEL_SKIPPED: &str = "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// The message of the CEL rule on `spec` (ds.yaml:18376-18382).
const REPLICAS_RULE_MESSAGE: &str =
    "replicas must be zero for all non-External roles or non-zero for all non-External roles";

const ROLE_NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const CONDITION_REASON_PATTERN: &str = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$";
const CONDITION_TYPE_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

/// The API server's own checks of a DisaggregatedSet on create (`old` None) or update, after
/// `default_crd`: the OpenAPI schema (ratcheted per node on update), the `roles` list-map key
/// (skipped on update when the old object already broke it), then the CEL rule on `spec`
/// (skipped when a blocking error was found, or on update when `spec` is unchanged). Each
/// string is one cause of the 422, `field.path: message`.
pub fn validate_crd(ds: &DisaggregatedSet, old: Option<&DisaggregatedSet>) -> Vec<String> {
    let mut v = Checker::new(ds, old);
    check_spec(&mut v, &ds.spec);

    // `x-kubernetes-list-type: map` keyed by `name` (ds.yaml:18360-18362).
    if old.is_none_or(|o| duplicate_roles(&o.spec).is_empty()) {
        v.errs.extend(duplicate_roles(&ds.spec));
    }

    // `x-kubernetes-validations` on `spec` (ds.yaml:18376-18382).
    if v.blocking {
        v.errs.push(CEL_SKIPPED.to_string());
    } else if !v.unchanged(&Node::root("spec")) && !replicas_rule_holds(&ds.spec) {
        v.errs.push(format!(
            "spec: Invalid value: \"object\": {REPLICAS_RULE_MESSAGE}"
        ));
    }
    v.errs
}

/// `spec` (ds.yaml:39-18382). Its `required: [roles]` (:18373-18374) cannot fail here.
fn check_spec(v: &mut Checker, spec: &DisaggregatedSetSpec) {
    let node = Node::root("spec");
    if let Some(policy) = &spec.placement_policy {
        // `topology` has no constraint; `type` is an enum (ds.yaml:55-62).
        if !policy.type_.is_empty() {
            let allowed = [
                PLACEMENT_NONE,
                PLACEMENT_EXCLUSIVE_SLICE,
                PLACEMENT_EXCLUSIVE_TOPOLOGY,
            ];
            let type_node = node.child("placementPolicy").child("type");
            v.enumeration(&type_node, &policy.type_, &allowed);
        }
    }
    check_roles(v, &node, &spec.roles);
    if let Some(slices) = spec.slices {
        // ds.yaml:18363-18372
        let slices_node = node.child("slices");
        v.maximum(&slices_node, slices.into(), 100);
        v.minimum(&slices_node, slices.into(), 1);
    }
}

/// `spec.roles` (ds.yaml:65-18362): each item, then `minItems: 2` (:18358) and `maxItems: 10`
/// (:18357), in kube-openapi's slice-validator order.
fn check_roles<'a>(v: &mut Checker, spec: &Node<'a>, roles: &'a [DisaggregatedRoleSpec]) {
    let node = spec.child("roles");
    for (i, role) in roles.iter().enumerate() {
        check_role(v, &node.item(i, "name", &role.name), role);
    }
    let n = roles.len();
    let p = &node.path;
    if n < 2 {
        let msg = format!("{p}: Invalid value: {n}: {p} in body should have at least 2 items");
        v.report(&node, false, msg);
    }
    if n > 10 {
        let msg = format!("{p}: Too many: {n}: must have at most 10 items");
        v.report(&node, true, msg);
    }
}

/// One role (ds.yaml:69-18356). Its `required: [name]` (:18354-18355) cannot fail here.
fn check_role<'a>(v: &mut Checker, node: &Node<'a>, role: &'a DisaggregatedRoleSpec) {
    // `metadata` (ds.yaml:76-95) has no constraint.
    let pattern = (ROLE_NAME_PATTERN, is_dns1123_label as fn(&str) -> bool);
    v.string(
        &node.child("name"),
        &role.name,
        Some(63),
        Some(1),
        Some(pattern),
    ); // ds.yaml:96-101
    if let Some(scaling) = &role.scaling {
        if !scaling.mode.is_empty() {
            let allowed = [SCALING_STATIC, SCALING_EXTERNAL];
            let mode = node.child("scaling").child("mode");
            v.enumeration(&mode, &scaling.mode, &allowed); // ds.yaml:102-117
        }
    }
    check_role_lws_spec(v, &node.child("spec"), &role.spec);
}

/// A role's LWS spec (ds.yaml:118-18353), pod and volume claim templates left out. Its
/// `required: [leaderWorkerTemplate]` (:18351-18352) and the template's `required:
/// [workerTemplate]` (:18242-18243) cannot fail here.
fn check_role_lws_spec<'a>(v: &mut Checker, node: &Node<'a>, spec: &'a LeaderWorkerSetSpec) {
    let template = &spec.leader_worker_template;
    let template_node = node.child("leaderWorkerTemplate");
    let pod_templates = [
        ("leaderTemplate", template.leader_template.as_ref()),
        ("workerTemplate", Some(&template.worker_template)),
    ];
    for (field, pod_template) in pod_templates {
        if let Some(pod) = pod_template.and_then(|t| t.spec.as_ref()) {
            check_pod_required(v, &template_node.child(field).child("spec"), pod);
        }
    }
    if !template.restart_policy.is_empty() {
        let allowed = [
            "Default",
            "RecreateGroupOnPodRestart",
            "RecreateGroupAfterStart",
            "None",
        ];
        let n = template_node.child("restartPolicy");
        v.enumeration(&n, &template.restart_policy, &allowed); // ds.yaml:8943-8954
    }
    let sub_group_type = template
        .sub_group_policy
        .as_ref()
        .and_then(|p| p.sub_group_policy_type.as_deref());
    if let Some(type_) = sub_group_type {
        let n = template_node
            .child("subGroupPolicy")
            .child("subGroupPolicyType");
        v.enumeration(&n, type_, &["LeaderWorker", "LeaderExcluded"]); // ds.yaml:8969-8977
    }
    if let Some(network) = &spec.network_config {
        // ds.yaml:18245-18259: `subdomainPolicy` required, an enum.
        let n = node.child("networkConfig");
        match network.subdomain_policy.as_deref() {
            None => v.required(&n, "subdomainPolicy"),
            Some(p) => v.enumeration(
                &n.child("subdomainPolicy"),
                p,
                &["Shared", "UniquePerReplica"],
            ),
        }
    }
    if let Some(replicas) = spec.replicas {
        // ds.yaml:18260-18273
        let n = node.child("replicas");
        v.maximum(&n, replicas.into(), 1_000_000);
        v.minimum(&n, replicas.into(), 0);
    }
    if let Some(strategy) = &spec.rollout_strategy {
        // ds.yaml:18274-18342: `type` required (our empty type is absent), an enum;
        // `rollingUpdateConfiguration` has no constraint.
        let n = node.child("rolloutStrategy");
        if strategy.type_.is_empty() {
            v.required(&n, "type");
        } else {
            v.enumeration(&n.child("type"), &strategy.type_, &["RollingUpdate"]);
        }
    }
    if !spec.startup_policy.is_empty() {
        let n = node.child("startupPolicy");
        v.enumeration(&n, &spec.startup_policy, &["LeaderCreated", "LeaderReady"]);
        // ds.yaml:18343-18350
    }
}

/// The embedded pod template's `required` fields (ds.yaml carries the PodSpec schema of the
/// LWS CRD: `containers`, and each container's and env var's `name`), as the LWS CRD's
/// `crd::check_required_pod_fields` checks an LWS: a role without them was stored, and every
/// create of its LeaderWorkerSet then failed.
fn check_pod_required<'a>(v: &mut Checker, node: &Node<'a>, pod: &'a PodSpec) {
    if pod.containers.is_empty() {
        v.required(node, "containers");
    }
    let init = pod.init_containers.as_deref().unwrap_or(&[]);
    for (list, containers) in [
        ("containers", pod.containers.as_slice()),
        ("initContainers", init),
    ] {
        let list_node = node.child(list);
        for (i, c) in containers.iter().enumerate() {
            let item = list_node.item(i, "name", &c.name);
            if c.name.is_empty() {
                v.required(&item, "name");
            }
            let env_node = item.child("env");
            for (j, e) in c.env.iter().flatten().enumerate() {
                if e.name.is_empty() {
                    v.required(&env_node.item(j, "name", &e.name), "name");
                }
            }
        }
    }
}

/// The list-map check of `spec.roles` (apiextensions-apiserver `schema/listtype`): a name seen
/// before is `Duplicate value: {"name":...}`.
fn duplicate_roles(spec: &DisaggregatedSetSpec) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut errs = Vec::new();
    for (i, role) in spec.roles.iter().enumerate() {
        if !seen.insert(role.name.as_str()) {
            let key = key_json("name", &role.name);
            errs.push(format!("spec.roles[{i}]: Duplicate value: {key}"));
        }
    }
    errs
}

/// A list-map key as the duplicate error prints it: `{"name":"prefill"}`.
fn key_json(field: &str, value: &str) -> String {
    format!("{{\"{field}\":{}}}", Value::from(value))
}

/// The CEL rule (ds.yaml:18379-18382): among the roles that are not External, either every
/// `spec.replicas` is unset or 0, or every one is set and above 0.
fn replicas_rule_holds(spec: &DisaggregatedSetSpec) -> bool {
    let non_external: Vec<&DisaggregatedRoleSpec> = spec
        .roles
        .iter()
        .filter(|r| {
            r.scaling
                .as_ref()
                .is_none_or(|s| s.mode != SCALING_EXTERNAL)
        })
        .collect();
    let all_zero = non_external
        .iter()
        .all(|r| r.spec.replicas.is_none_or(|n| n == 0));
    let all_positive = non_external
        .iter()
        .all(|r| r.spec.replicas.is_some_and(|n| n > 0));
    all_zero || all_positive
}

/// The API server's own checks of a DisaggregatedSetRoleScaler on create (`old` None) or
/// update, main resource or status: the schema (scaler.yaml:57-164, ratcheted per node), the
/// scale subresource's replicas (scaler.yaml:168-172: `ValidateScaleSpec` and
/// `ValidateScaleStatus`, not ratcheted), then the `status.conditions` list-map key
/// (scaler.yaml:139-141). The CRD has no CEL rule.
pub fn validate_scaler_crd(
    scaler: &DisaggregatedSetRoleScaler,
    old: Option<&DisaggregatedSetRoleScaler>,
) -> Vec<String> {
    let mut v = Checker::new(scaler, old);
    // `spec` (scaler.yaml:57-78): `replicas` required (never absent here), minimum 0.
    let replicas = Node::root("spec").child("replicas");
    v.minimum(&replicas, scaler.spec.replicas.into(), 0); // scaler.yaml:74
    let conditions = scaler
        .status
        .as_ref()
        .map_or(&[][..], |s| s.conditions.as_slice());
    let conditions_node = Node::root("status").child("conditions");
    for (i, c) in conditions.iter().enumerate() {
        check_condition(&mut v, &conditions_node.item(i, "type", &c.type_), c);
    }
    let mut errs = v.errs;

    let spec_replicas = scaler.spec.replicas;
    if spec_replicas < 0 {
        errs.push(format!(
            ".spec.replicas: Invalid value: {spec_replicas}: should be a non-negative integer"
        ));
    }
    let status_replicas = scaler.status.as_ref().map_or(0, |s| s.replicas);
    if status_replicas < 0 {
        errs.push(format!(
            ".status.replicas: Invalid value: {status_replicas}: should be a non-negative integer"
        ));
    }

    if old.is_none_or(|o| duplicate_conditions(o).is_empty()) {
        errs.extend(duplicate_conditions(scaler));
    }
    errs
}

/// One `metav1.Condition` (scaler.yaml:85-137). Its required fields (:131-136) are never
/// absent from ours; `lastTransitionTime` is always a valid date-time.
fn check_condition(v: &mut Checker, node: &Node<'_>, c: &Condition) {
    v.string(&node.child("message"), &c.message, Some(32768), None, None); // scaler.yaml:94-99
    if let Some(generation) = c.observed_generation {
        v.minimum(&node.child("observedGeneration"), generation, 0); // scaler.yaml:100-107
    }
    let reason = (
        CONDITION_REASON_PATTERN,
        is_condition_reason as fn(&str) -> bool,
    );
    v.string(
        &node.child("reason"),
        &c.reason,
        Some(1024),
        Some(1),
        Some(reason),
    ); // :108-118
    let status = ["True", "False", "Unknown"];
    v.enumeration(&node.child("status"), &c.status, &status); // scaler.yaml:119-125
    let type_ = (
        CONDITION_TYPE_PATTERN,
        is_condition_type as fn(&str) -> bool,
    );
    v.string(&node.child("type"), &c.type_, Some(316), None, Some(type_)); // :126-130
}

/// The list-map check of `status.conditions`, keyed by `type`.
fn duplicate_conditions(scaler: &DisaggregatedSetRoleScaler) -> Vec<String> {
    let conditions = scaler
        .status
        .as_ref()
        .map_or(&[][..], |s| s.conditions.as_slice());
    let mut seen = BTreeSet::new();
    let mut errs = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        if !seen.insert(c.type_.as_str()) {
            let key = key_json("type", &c.type_);
            errs.push(format!("status.conditions[{i}]: Duplicate value: {key}"));
        }
    }
    errs
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`.
fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
        }
        _ => false,
    }
}

/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
fn is_condition_reason(s: &str) -> bool {
    let Some((first, rest)) = s.as_bytes().split_first() else {
        return false;
    };
    if !first.is_ascii_alphabetic() {
        return false;
    }
    let Some((last, middle)) = rest.split_last() else {
        return true;
    };
    (last.is_ascii_alphanumeric() || *last == b'_')
        && middle
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// `CONDITION_TYPE_PATTERN`: an optional DNS-subdomain prefix and `/`, then a name that starts
/// and ends alphanumeric with `-`, `_` and `.` between.
fn is_condition_type(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    let prefix_ok = prefix.is_none_or(|p| p.split('.').all(is_dns1123_label));
    let b = name.as_bytes();
    let name_ok = match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    };
    prefix_ok && name_ok
}

/// One step from a node to a child: an object property, or the item of a list-map whose key
/// field has the given value (how ratcheting correlates list items).
#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    Field(&'static str),
    Keyed(&'static str, &'a str),
}

/// A node of the object: its field path as errors print it, and its steps for ratcheting.
#[derive(Clone, Debug)]
struct Node<'a> {
    path: String,
    steps: Vec<Step<'a>>,
}

impl<'a> Node<'a> {
    fn root(field: &'static str) -> Node<'a> {
        Node {
            path: field.to_string(),
            steps: vec![Step::Field(field)],
        }
    }

    fn child(&self, field: &'static str) -> Node<'a> {
        let mut steps = self.steps.clone();
        steps.push(Step::Field(field));
        Node {
            path: format!("{}.{field}", self.path),
            steps,
        }
    }

    fn item(&self, index: usize, key: &'static str, value: &'a str) -> Node<'a> {
        let mut steps = self.steps.clone();
        steps.push(Step::Keyed(key, value));
        Node {
            path: format!("{}[{index}]", self.path),
            steps,
        }
    }
}

/// The value at `steps` in a JSON object.
fn lookup<'v>(v: &'v Value, steps: &[Step<'_>]) -> Option<&'v Value> {
    steps.iter().try_fold(v, |v, step| match *step {
        Step::Field(field) => v.get(field),
        Step::Keyed(key, value) => v
            .as_array()?
            .iter()
            .find(|item| item.get(key).and_then(Value::as_str) == Some(value)),
    })
}

/// The schema validator's errors for one object, with ratcheting against the old object and
/// whether any error blocks the CEL rules.
struct Checker {
    new: Value,
    old: Option<Value>,
    errs: Vec<String>,
    blocking: bool,
}

impl Checker {
    fn new<T: Serialize>(new: &T, old: Option<&T>) -> Checker {
        let json = |o: &T| serde_json::to_value(o).expect("objects serialize");
        Checker {
            new: json(new),
            old: old.map(json),
            errs: Vec::new(),
            blocking: false,
        }
    }

    /// Ratcheting (CRDValidationRatcheting): the node exists in the old object (correlated
    /// through properties and list-map keys) with the same value.
    fn unchanged(&self, node: &Node<'_>) -> bool {
        let Some(old) = &self.old else {
            return false;
        };
        match (lookup(old, &node.steps), lookup(&self.new, &node.steps)) {
            (Some(o), Some(n)) => o == n,
            _ => false,
        }
    }

    /// An error of `node`'s validator, unless ratcheted away.
    fn report(&mut self, node: &Node<'_>, blocking: bool, msg: String) {
        if self.unchanged(node) {
            return;
        }
        self.blocking |= blocking;
        self.errs.push(msg);
    }

    /// `required` of the object at `parent`.
    fn required(&mut self, parent: &Node<'_>, field: &str) {
        let msg = format!("{}.{field}: Required value", parent.path);
        self.report(parent, true, msg);
    }

    /// `enum`: `field.NotSupported`.
    fn enumeration(&mut self, node: &Node<'_>, value: &str, allowed: &[&str]) {
        if allowed.contains(&value) {
            return;
        }
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        let msg = format!(
            "{}: Unsupported value: {value:?}: supported values: {}",
            node.path,
            quoted.join(", ")
        );
        self.report(node, true, msg);
    }

    fn minimum(&mut self, node: &Node<'_>, value: i64, min: i64) {
        if value < min {
            let p = &node.path;
            let msg = format!(
                "{p}: Invalid value: {value}: {p} in body should be greater than or equal to {min}"
            );
            self.report(node, false, msg);
        }
    }

    fn maximum(&mut self, node: &Node<'_>, value: i64, max: i64) {
        if value > max {
            let p = &node.path;
            let msg = format!(
                "{p}: Invalid value: {value}: {p} in body should be less than or equal to {max}"
            );
            self.report(node, false, msg);
        }
    }

    /// kube-openapi's string validator: `maxLength` (in characters; reported as
    /// `field.TooLong`), else `minLength`, else `pattern`; at most one error.
    fn string(
        &mut self,
        node: &Node<'_>,
        value: &str,
        max_len: Option<usize>,
        min_len: Option<usize>,
        pattern: Option<Pattern<'_>>,
    ) {
        let p = &node.path;
        let chars = value.chars().count();
        if let Some(max) = max_len.filter(|max| chars > *max) {
            let unit = if max == 1 { "byte" } else { "bytes" };
            let msg = format!("{p}: Too long: may not be more than {max} {unit}");
            return self.report(node, true, msg);
        }
        if let Some(min) = min_len.filter(|min| chars < *min) {
            let msg = format!(
                "{p}: Invalid value: {value:?}: {p} in body should be at least {min} chars long"
            );
            return self.report(node, false, msg);
        }
        if let Some((pattern, matches)) = pattern {
            if !matches(value) {
                let msg =
                    format!("{p}: Invalid value: {value:?}: {p} in body should match '{pattern}'");
                self.report(node, false, msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::PodTemplateSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;
    use crate::api::{LeaderWorkerTemplate, NetworkConfig, RolloutStrategy};
    use crate::disagg::api::{PlacementPolicy, RoleScalerStatus, RoleScaling};

    const EXCLUSIVE: &str = lws_keys::EXCLUSIVE_TOPOLOGY;
    const SUBGROUP_EXCLUSIVE: &str = lws_keys::SUBGROUP_EXCLUSIVE_TOPOLOGY;

    fn ds_named(name: &str, roles: Vec<DisaggregatedRoleSpec>) -> DisaggregatedSet {
        DisaggregatedSet {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            spec: DisaggregatedSetSpec {
                roles,
                ..DisaggregatedSetSpec::default()
            },
            ..DisaggregatedSet::default()
        }
    }

    /// The objects of disaggregatedset_webhook_test.go: named `test`, in `default`.
    fn ds(roles: Vec<DisaggregatedRoleSpec>) -> DisaggregatedSet {
        ds_named("test", roles)
    }

    fn role(name: &str, replicas: Option<i32>) -> DisaggregatedRoleSpec {
        let mut r = DisaggregatedRoleSpec {
            name: name.into(),
            ..DisaggregatedRoleSpec::default()
        };
        r.spec.replicas = replicas;
        r
    }

    fn external(mut r: DisaggregatedRoleSpec) -> DisaggregatedRoleSpec {
        r.scaling = Some(RoleScaling {
            mode: SCALING_EXTERNAL.into(),
        });
        r
    }

    fn rollout(
        mut r: DisaggregatedRoleSpec,
        type_: &str,
        ruc: Option<RollingUpdateConfiguration>,
    ) -> DisaggregatedRoleSpec {
        r.spec.rollout_strategy = Some(RolloutStrategy {
            type_: type_.into(),
            rolling_update_configuration: ruc,
        });
        r
    }

    /// `RollingUpdateConfiguration{...}`: an omitted IntOrString is Go's zero (None here).
    fn ruc(
        max_surge: Option<IntOrString>,
        max_unavailable: Option<IntOrString>,
        partition: Option<i32>,
    ) -> RollingUpdateConfiguration {
        RollingUpdateConfiguration {
            max_unavailable,
            max_surge,
            partition,
        }
    }

    fn int(i: i32) -> Option<IntOrString> {
        Some(IntOrString::Int(i))
    }

    fn pct(s: &str) -> Option<IntOrString> {
        Some(IntOrString::String(s.into()))
    }

    fn annotations(key: &str) -> Option<BTreeMap<String, String>> {
        Some(BTreeMap::from([(key.to_string(), "rack".to_string())]))
    }

    fn meta_annotation(mut r: DisaggregatedRoleSpec, key: &str) -> DisaggregatedRoleSpec {
        r.metadata.annotations = annotations(key);
        r
    }

    fn worker_annotation(mut r: DisaggregatedRoleSpec, key: &str) -> DisaggregatedRoleSpec {
        let t = &mut r.spec.leader_worker_template.worker_template;
        t.metadata
            .get_or_insert_with(ObjectMeta::default)
            .annotations = annotations(key);
        r
    }

    fn leader_annotation(mut r: DisaggregatedRoleSpec, key: &str) -> DisaggregatedRoleSpec {
        let template = PodTemplateSpec {
            metadata: Some(ObjectMeta {
                annotations: annotations(key),
                ..ObjectMeta::default()
            }),
            spec: None,
        };
        r.spec.leader_worker_template.leader_template = Some(template);
        r
    }

    fn placed(mut ds: DisaggregatedSet, type_: &str, topology: &str) -> DisaggregatedSet {
        ds.spec.placement_policy = Some(PlacementPolicy {
            type_: type_.into(),
            topology: topology.into(),
        });
        ds
    }

    fn decode() -> DisaggregatedRoleSpec {
        role("decode", Some(2))
    }

    /// `err.Error()` of the aggregate, for upstream's `Contains` checks.
    fn joined(errs: &[String]) -> String {
        errs.join(", ")
    }

    /// `TestValidateCreate` (disaggregatedset_webhook_test.go@v0.10.0:33-552): `None` for no
    /// error, else a substring of the aggregate.
    #[test]
    fn validate_create() {
        let prefill = || role("prefill", Some(2));
        let topo = "cloud.google.com/gke-nodepool";
        let cases: Vec<(&str, DisaggregatedSet, Option<&str>)> = vec![
            // :44
            (
                "valid with no rolloutStrategy",
                ds(vec![prefill(), decode()]),
                None,
            ),
            // :71
            (
                "valid with RollingUpdate type",
                ds(vec![
                    rollout(prefill(), "RollingUpdate", Some(ruc(int(1), int(0), None))),
                    decode(),
                ]),
                None,
            ),
            // :105
            (
                "valid with partition set to 0",
                ds(vec![
                    rollout(prefill(), "", Some(ruc(None, int(1), Some(0)))),
                    decode(),
                ]),
                None,
            ),
            // :138
            (
                "invalid with partition set to non-zero",
                ds(vec![
                    rollout(prefill(), "", Some(ruc(None, None, Some(1)))),
                    decode(),
                ]),
                Some("partition"),
            ),
            // :171
            (
                "invalid with unsupported rollout type",
                ds(vec![rollout(prefill(), "SomeOtherType", None), decode()]),
                Some("type"),
            ),
            // :202
            (
                "invalid with multiple validation errors",
                ds(vec![
                    rollout(prefill(), "InvalidType", Some(ruc(None, None, Some(5)))),
                    decode(),
                ]),
                Some("type"),
            ),
            // :236
            (
                "valid placement policy ExclusiveSlice with topology",
                placed(
                    ds(vec![prefill(), decode()]),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    topo,
                ),
                None,
            ),
            // :253
            (
                "invalid placement policy missing topology",
                placed(
                    ds(vec![prefill(), decode()]),
                    PLACEMENT_EXCLUSIVE_TOPOLOGY,
                    "",
                ),
                Some("topology"),
            ),
            // :268
            (
                "placement policy with LWS exclusive-topology annotation",
                placed(
                    ds(vec![meta_annotation(prefill(), EXCLUSIVE), decode()]),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    topo,
                ),
                Some("exclusive-topology"),
            ),
            // :292
            (
                "placement policy with exclusive-topology on the worker template",
                placed(
                    ds(vec![worker_annotation(prefill(), EXCLUSIVE), decode()]),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    topo,
                ),
                Some("exclusive-topology"),
            ),
            // :322
            (
                "placement policy with subgroup-exclusive-topology annotation",
                placed(
                    ds(vec![
                        meta_annotation(prefill(), SUBGROUP_EXCLUSIVE),
                        decode(),
                    ]),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    topo,
                ),
                Some("subgroup-exclusive-topology"),
            ),
            // :346
            (
                "placement policy with subgroup-exclusive-topology on the leader template",
                placed(
                    ds(vec![
                        leader_annotation(prefill(), SUBGROUP_EXCLUSIVE),
                        decode(),
                    ]),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    topo,
                ),
                Some("subgroup-exclusive-topology"),
            ),
            // :376
            (
                "placement policy with subgroup-exclusive-topology on the worker template",
                placed(
                    ds(vec![
                        worker_annotation(prefill(), SUBGROUP_EXCLUSIVE),
                        decode(),
                    ]),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    topo,
                ),
                Some("subgroup-exclusive-topology"),
            ),
            // :406
            (
                "maxSurge=0 and maxUnavailable=0 with replicas > 0 (int)",
                ds(vec![
                    rollout(prefill(), "", Some(ruc(int(0), int(0), None))),
                    decode(),
                ]),
                Some("must not be 0 when `maxSurge` is 0"),
            ),
            // :440
            (
                "maxSurge=0% and maxUnavailable=0% with replicas > 0",
                ds(vec![
                    rollout(prefill(), "", Some(ruc(pct("0%"), pct("0%"), None))),
                    decode(),
                ]),
                Some("must not be 0 when `maxSurge` is 0"),
            ),
            // :474
            (
                "maxSurge=0 and maxUnavailable=1",
                ds(vec![
                    rollout(prefill(), "", Some(ruc(int(0), int(1), None))),
                    decode(),
                ]),
                None,
            ),
            // :507
            (
                "maxSurge=0 and maxUnavailable=0 but replicas=0",
                ds(vec![
                    rollout(
                        role("prefill", Some(0)),
                        "",
                        Some(ruc(int(0), int(0), None)),
                    ),
                    role("decode", Some(0)),
                ]),
                None,
            ),
        ];
        for (name, obj, want) in cases {
            let (_, errs) = validate(&obj);
            match want {
                None => assert!(errs.is_empty(), "{name}: {errs:?}"),
                Some(s) => assert!(joined(&errs).contains(s), "{name}: {errs:?}"),
            }
        }
    }

    /// The exact wording of the errors `TestValidateCreate` matches by substring (cases at
    /// disaggregatedset_webhook_test.go@v0.10.0:138, :202, :253, :268, :440).
    #[test]
    fn validate_words_errors_as_field_errors() {
        let prefill = || role("prefill", Some(2));
        let ruc_path = "spec.roles[0].spec.rolloutStrategy.rollingUpdateConfiguration";
        let obj = ds(vec![
            rollout(prefill(), "InvalidType", Some(ruc(None, None, Some(5)))),
            decode(),
        ]);
        assert_eq!(
            validate(&obj).1,
            vec![
                "spec.roles[0].spec.rolloutStrategy.type: Unsupported value: \"InvalidType\": supported values: \"RollingUpdate\", \"\"".to_string(),
                format!("{ruc_path}.partition: Forbidden: partition is not supported by DisaggregatedSet; rolling updates are managed across roles by the DisaggregatedSet controller"),
                format!("{ruc_path}.maxUnavailable: Invalid value: 0: must not be 0 when `maxSurge` is 0"),
            ]
        );
        let obj = ds(vec![
            rollout(prefill(), "", Some(ruc(pct("0%"), pct("0%"), None))),
            decode(),
        ]);
        assert_eq!(
            validate(&obj).1,
            vec![format!("{ruc_path}.maxUnavailable: Invalid value: \"0%\": must not be 0 when `maxSurge` is 0")]
        );
        let obj = ds(vec![
            rollout(prefill(), "", Some(ruc(pct("150%"), int(-1), None))),
            decode(),
        ]);
        assert_eq!(
            validate(&obj).1,
            vec![
                format!("{ruc_path}.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"),
                format!("{ruc_path}.maxSurge: Invalid value: \"150%\": must not be greater than 100%"),
            ]
        );
        let obj = placed(
            ds(vec![meta_annotation(prefill(), EXCLUSIVE), decode()]),
            PLACEMENT_EXCLUSIVE_TOPOLOGY,
            "",
        );
        assert_eq!(
            validate(&obj).1,
            vec![
                "spec.placementPolicy.topology: Required value: topology is required when type is not None".to_string(),
                "spec.roles[0]: Forbidden: the \"leaderworkerset.sigs.k8s.io/exclusive-topology\" annotation must not be combined with a non-None spec.placementPolicy.type (ExclusiveTopology)".to_string(),
            ]
        );
    }

    /// `TestValidateUpdate` (disaggregatedset_webhook_test.go@v0.10.0:554-656): only the new
    /// object counts. (`TestValidateDelete`, :658, has no counterpart: delete is not validated.)
    #[test]
    fn validate_update() {
        let valid = ds(vec![role("prefill", Some(2)), decode()]);
        let partition = ds(vec![
            rollout(role("prefill", Some(2)), "", Some(ruc(None, None, Some(1)))),
            decode(),
        ]);
        let both_zero = ds(vec![
            rollout(
                role("prefill", Some(2)),
                "",
                Some(ruc(int(0), int(0), None)),
            ),
            decode(),
        ]);
        assert!(validate(&valid).1.is_empty()); // :611
        assert!(joined(&validate(&partition).1).contains("partition")); // :616
        let errs = validate(&both_zero).1; // :622
        assert!(
            joined(&errs).contains("must not be 0 when `maxSurge` is 0"),
            "{errs:?}"
        );
    }

    /// `TestValidateExternalScalingRules` (disaggregatedset_webhook_test.go@v0.10.0:670-716).
    #[test]
    fn validate_external_scaling_rules() {
        // :675 warns when External + replicas > 1.
        let obj = ds_named("ds", vec![external(role("prefill", Some(3)))]);
        let (warnings, errs) = validate(&obj);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(warnings, vec!["role \"prefill\" sets scaling.mode: External and spec.replicas: 3 — spec.replicas is ignored; drive replicas via DisaggregatedSetRoleScaler \"ds-prefill\" instead".to_string()]);

        // :688 rejects External + spec.slices > 1.
        let mut obj = ds_named("ds", vec![external(role("prefill", None))]);
        obj.spec.slices = Some(2);
        assert_eq!(
            validate(&obj).1,
            vec!["spec.slices: Forbidden: spec.slices > 1 is not supported while any role has scaling.mode: External (alpha restriction)".to_string()]
        );

        // :701 rejects a scaler name over 253 characters.
        let obj = ds_named(&"a".repeat(250), vec![external(role("prefill", None))]);
        let errs = validate(&obj).1;
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with(
            "spec.roles[0].name: Invalid value: \"prefill\": would produce scaler name \"aaaa"
        ));
        assert!(errs[0].ends_with("-prefill\" exceeding 253 characters"));
    }

    /// What the API server answers a create (`old` None) or update: CRD defaults, the CRD's
    /// own checks, then the webhook.
    fn admit(
        obj: &DisaggregatedSet,
        old: Option<&DisaggregatedSet>,
    ) -> (DisaggregatedSet, Vec<String>) {
        let mut obj = obj.clone();
        default_crd(&mut obj);
        let errs = validate_crd(&obj, old);
        if !errs.is_empty() {
            return (obj, errs);
        }
        let errs = validate(&obj).1;
        (obj, errs)
    }

    /// `wrappers.BuildDisaggregatedSet("placement-test", ns).WithRole("prefill", 1, ..)
    /// .WithRole("decode", 1, ..)` with rollout type and startup policy set, as the integration
    /// test builds it (test/integration/webhooks/disaggregatedset_test.go@v0.10.0:45-56).
    fn integration_set() -> DisaggregatedSet {
        let with_role = |name: &str| {
            let mut r = role(name, Some(1));
            r.spec.leader_worker_template = LeaderWorkerTemplate {
                size: Some(1),
                ..LeaderWorkerTemplate::default()
            };
            r.spec.startup_policy = "LeaderCreated".into();
            rollout(r, "RollingUpdate", None)
        };
        ds_named(
            "placement-test",
            vec![with_role("prefill"), with_role("decode")],
        )
    }

    /// The placement-policy cases of test/integration/webhooks/disaggregatedset_test.go@v0.10.0
    /// that the API server's defaults, the CRD checks and the webhook answer.
    #[test]
    fn integration_placement_policy_validation() {
        let host = "kubernetes.io/hostname";
        let with_meta = |mut d: DisaggregatedSet, i: usize, key: &str| {
            d.spec.roles[i] = meta_annotation(d.spec.roles[i].clone(), key);
            d
        };
        let cases = [
            // :73 placement policy alone is allowed
            (
                placed(integration_set(), PLACEMENT_EXCLUSIVE_SLICE, host),
                "",
            ),
            // :80 the LWS annotation alone is allowed
            (with_meta(integration_set(), 0, EXCLUSIVE), ""),
            // :87 policy + annotation on the role metadata
            (
                placed(
                    with_meta(integration_set(), 0, EXCLUSIVE),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    host,
                ),
                EXCLUSIVE,
            ),
            // :96 policy + annotation on the worker template
            (
                {
                    let mut d = placed(integration_set(), PLACEMENT_EXCLUSIVE_TOPOLOGY, host);
                    d.spec.roles[1] = worker_annotation(d.spec.roles[1].clone(), EXCLUSIVE);
                    d
                },
                EXCLUSIVE,
            ),
            // :105 policy + subgroup annotation
            (
                placed(
                    with_meta(integration_set(), 1, SUBGROUP_EXCLUSIVE),
                    PLACEMENT_EXCLUSIVE_SLICE,
                    host,
                ),
                SUBGROUP_EXCLUSIVE,
            ),
        ];
        for (i, (obj, want)) in cases.iter().enumerate() {
            let (_, errs) = admit(obj, None);
            if want.is_empty() {
                assert!(errs.is_empty(), "case {i}: {errs:?}");
            } else {
                assert!(joined(&errs).contains(*want), "case {i}: {errs:?}");
            }
        }

        // :116 adding the annotation to a set with a policy is rejected on update.
        let (stored, errs) = admit(
            &placed(integration_set(), PLACEMENT_EXCLUSIVE_SLICE, host),
            None,
        );
        assert!(errs.is_empty(), "{errs:?}");
        let updated = with_meta(stored.clone(), 0, EXCLUSIVE);
        assert!(joined(&admit(&updated, Some(&stored)).1).contains(EXCLUSIVE));

        // :133 adding a policy to a set with the annotation is rejected on update.
        let (stored, errs) = admit(&with_meta(integration_set(), 0, EXCLUSIVE), None);
        assert!(errs.is_empty(), "{errs:?}");
        let updated = placed(stored.clone(), PLACEMENT_EXCLUSIVE_SLICE, host);
        assert!(joined(&admit(&updated, Some(&stored)).1).contains(EXCLUSIVE));
    }

    /// Not upstream: the CRD defaults land where ds.yaml puts them, and only under a present
    /// parent.
    #[test]
    fn crd_defaults() {
        let mut obj = ds(vec![
            rollout(role("a", None), "", Some(ruc(None, None, None))),
            external(role("b", Some(3))),
        ]);
        obj.spec.roles[1].scaling = Some(RoleScaling::default());
        obj.spec.placement_policy = Some(PlacementPolicy::default());
        default_crd(&mut obj);
        assert_eq!(obj.spec.slices, Some(1));
        assert_eq!(
            obj.spec.placement_policy.as_ref().map(|p| p.type_.as_str()),
            Some("None")
        );
        let a = &obj.spec.roles[0];
        assert_eq!(a.scaling, None);
        assert_eq!(a.spec.replicas, Some(1));
        assert_eq!(a.spec.startup_policy, "LeaderCreated");
        assert_eq!(a.spec.leader_worker_template.size, Some(1));
        assert_eq!(
            a.spec.leader_worker_template.restart_policy,
            "RecreateGroupOnPodRestart"
        );
        assert_eq!(a.spec.leader_worker_template.sub_group_policy, None);
        let strategy = a.spec.rollout_strategy.as_ref().expect("kept");
        assert_eq!(strategy.type_, "RollingUpdate");
        assert_eq!(
            strategy.rolling_update_configuration,
            Some(ruc(int(0), int(1), Some(0)))
        );
        let b = &obj.spec.roles[1];
        assert_eq!(b.scaling.as_ref().map(|s| s.mode.as_str()), Some("Static"));
        assert_eq!(b.spec.replicas, Some(3));
        assert_eq!(b.spec.rollout_strategy, None);
    }

    /// Not upstream: the schema's causes in kube-apiserver's wording (ds.yaml lines cited).
    #[test]
    fn crd_schema_causes() {
        let blocked = CEL_SKIPPED.to_string();
        let defaulted = |mut d: DisaggregatedSet| {
            default_crd(&mut d);
            d
        };
        let two = || vec![role("prefill", Some(1)), role("decode", Some(1))];
        assert!(validate_crd(&defaulted(ds(two())), None).is_empty());

        // minItems (:18358): not blocking, so the CEL rule still runs (and holds).
        let obj = defaulted(ds(vec![role("prefill", Some(1))]));
        assert_eq!(
            validate_crd(&obj, None),
            vec!["spec.roles: Invalid value: 1: spec.roles in body should have at least 2 items"]
        );
        // maxItems (:18357) blocks the CEL rule.
        let many = (0..11).map(|i| role(&format!("r{i}"), Some(1))).collect();
        assert_eq!(
            validate_crd(&defaulted(ds(many)), None),
            vec![
                "spec.roles: Too many: 11: must have at most 10 items".to_string(),
                blocked.clone()
            ]
        );
        // The placementPolicy.type enum (:59-62).
        let obj = placed(defaulted(ds(two())), "X", "zone");
        assert_eq!(
            validate_crd(&obj, None),
            vec![
                "spec.placementPolicy.type: Unsupported value: \"X\": supported values: \"None\", \"ExclusiveSlice\", \"ExclusiveTopology\"".to_string(),
                blocked.clone(),
            ]
        );
        // A role's name (:97-100), one error per string, and the slices bounds (:18370-18371).
        let mut obj = defaulted(ds(vec![
            role("Prefill", Some(1)),
            role(&"d".repeat(64), Some(1)),
        ]));
        obj.spec.slices = Some(0);
        assert_eq!(
            validate_crd(&obj, None),
            vec![
                "spec.roles[0].name: Invalid value: \"Prefill\": spec.roles[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'".to_string(),
                "spec.roles[1].name: Too long: may not be more than 63 bytes".to_string(),
                "spec.slices: Invalid value: 0: spec.slices in body should be greater than or equal to 1".to_string(),
                blocked.clone(),
            ]
        );
        // The embedded LWS spec: replicas (:18271-18272), networkConfig required (:18257).
        let mut obj = defaulted(ds(two()));
        obj.spec.roles[0].spec.replicas = Some(1_000_001);
        obj.spec.roles[1].spec.network_config = Some(NetworkConfig::default());
        assert_eq!(
            validate_crd(&obj, None),
            vec![
                "spec.roles[0].spec.replicas: Invalid value: 1000001: spec.roles[0].spec.replicas in body should be less than or equal to 1000000".to_string(),
                "spec.roles[1].spec.networkConfig.subdomainPolicy: Required value".to_string(),
                blocked.clone(),
            ]
        );
        // The embedded pod templates' required fields (PodSpec `containers`, a container's
        // and an env var's `name`).
        let mut obj = defaulted(ds(two()));
        let nameless = k8s_openapi::api::core::v1::Container {
            env: Some(vec![Default::default()]),
            ..Default::default()
        };
        let worker = &mut obj.spec.roles[0]
            .spec
            .leader_worker_template
            .worker_template;
        worker.spec = Some(PodSpec {
            containers: vec![nameless],
            ..Default::default()
        });
        let leader = PodTemplateSpec {
            spec: Some(PodSpec::default()),
            ..Default::default()
        };
        obj.spec.roles[1]
            .spec
            .leader_worker_template
            .leader_template = Some(leader);
        let at = "spec.roles[0].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0]";
        assert_eq!(
            validate_crd(&obj, None),
            vec![
                format!("{at}.name: Required value"),
                format!("{at}.env[0].name: Required value"),
                "spec.roles[1].spec.leaderWorkerTemplate.leaderTemplate.spec.containers: Required value".to_string(),
                blocked,
            ]
        );
        // The list-map key (:18360-18362).
        let obj = defaulted(ds(vec![role("prefill", Some(1)), role("prefill", Some(1))]));
        assert_eq!(
            validate_crd(&obj, None),
            vec!["spec.roles[1]: Duplicate value: {\"name\":\"prefill\"}"]
        );
    }

    /// Not upstream: the CEL rule (ds.yaml:18376-18382) ignores External roles, and ratcheting
    /// keeps an unchanged invalid value (or an unchanged `spec`) from failing an update.
    #[test]
    fn crd_cel_rule_and_ratcheting() {
        let defaulted = |mut d: DisaggregatedSet| {
            default_crd(&mut d);
            d
        };
        let cel = "spec: Invalid value: \"object\": replicas must be zero for all non-External roles or non-zero for all non-External roles";
        let mixed = defaulted(ds(vec![role("prefill", Some(0)), role("decode", Some(2))]));
        assert_eq!(validate_crd(&mixed, None), vec![cel]);
        let zeros = defaulted(ds(vec![role("prefill", Some(0)), role("decode", Some(0))]));
        assert!(validate_crd(&zeros, None).is_empty());
        let with_external = defaulted(ds(vec![
            role("prefill", Some(2)),
            external(role("decode", Some(0))),
        ]));
        assert!(validate_crd(&with_external, None).is_empty());

        // An unchanged spec skips the rule; a changed one runs it.
        let mut relabelled = mixed.clone();
        relabelled.metadata.labels = Some(BTreeMap::from([("a".to_string(), "b".to_string())]));
        assert!(validate_crd(&relabelled, Some(&mixed)).is_empty());
        let mut rescaled = mixed.clone();
        rescaled.spec.roles[1].spec.replicas = Some(3);
        assert_eq!(validate_crd(&rescaled, Some(&mixed)), vec![cel]);

        // An invalid field kept as it was is ratcheted; changed, it is reported.
        let mut old = defaulted(ds(vec![role("prefill", Some(1)), role("decode", Some(1))]));
        old.spec.slices = Some(0);
        let mut new = old.clone();
        new.spec.roles[0].spec.replicas = Some(4);
        assert!(validate_crd(&new, Some(&old)).is_empty());
        new.spec.slices = Some(-1);
        assert_eq!(
            validate_crd(&new, Some(&old)),
            vec!["spec.slices: Invalid value: -1: spec.slices in body should be greater than or equal to 1"]
        );
    }

    /// Not upstream: the scaler CRD (scaler.yaml) and its scale subresource.
    #[test]
    fn scaler_crd_causes() {
        let mut scaler = DisaggregatedSetRoleScaler::default();
        default_scaler_crd(&mut scaler);
        assert!(validate_scaler_crd(&scaler, None).is_empty());
        scaler.spec.replicas = -1;
        assert_eq!(
            validate_scaler_crd(&scaler, None),
            vec![
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
                ".spec.replicas: Invalid value: -1: should be a non-negative integer",
            ]
        );

        let condition = |type_: &str, status: &str, reason: &str| Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        };
        let scaler = DisaggregatedSetRoleScaler {
            status: Some(RoleScalerStatus {
                conditions: vec![
                    condition("Ready", "True", "Bound"),
                    condition("Ready", "Maybe", ""),
                    condition("x/", "True", "9lives"),
                ],
                ..RoleScalerStatus::default()
            }),
            ..DisaggregatedSetRoleScaler::default()
        };
        let pattern_type = CONDITION_TYPE_PATTERN;
        assert_eq!(
            validate_scaler_crd(&scaler, None),
            vec![
                "status.conditions[1].reason: Invalid value: \"\": status.conditions[1].reason in body should be at least 1 chars long".to_string(),
                "status.conditions[1].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\"".to_string(),
                "status.conditions[2].reason: Invalid value: \"9lives\": status.conditions[2].reason in body should match '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'".to_string(),
                format!("status.conditions[2].type: Invalid value: \"x/\": status.conditions[2].type in body should match '{pattern_type}'"),
                "status.conditions[1]: Duplicate value: {\"type\":\"Ready\"}".to_string(),
            ]
        );
    }

    #[test]
    fn patterns() {
        for (s, want) in [
            ("a", true),
            ("a-1", true),
            ("-a", false),
            ("a-", false),
            ("A", false),
            ("", false),
        ] {
            assert_eq!(is_dns1123_label(s), want, "{s:?}");
        }
        for (s, want) in [
            ("Bound", true),
            ("B", true),
            ("a_b,c:d_", true),
            ("a:", false),
            ("1a", false),
            ("", false),
        ] {
            assert_eq!(is_condition_reason(s), want, "{s:?}");
        }
        for (s, want) in [
            ("Ready", true),
            ("example.com/Ready", true),
            ("a.b-c/x_y.z", true),
            ("/Ready", false),
            ("Ex.com/Ready", false),
            ("a/b/c", false),
            ("Ready-", false),
            ("", false),
        ] {
            assert_eq!(is_condition_type(s), want, "{s:?}");
        }
    }
}
