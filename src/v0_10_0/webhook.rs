//! The admission of v0.10.0: the CRD schema's defaults and enums (kubebuilder markers of
//! `api/leaderworkerset/v1/leaderworkerset_types.go`), the LWS webhook
//! (`pkg/webhooks/leaderworkerset_webhook.go`) and the pod mutating webhook
//! (`pkg/webhooks/pod_webhook.go`), all at tag v0.10.0.
//!
//! Not modelled (docs/fidelity.md): the scheduler provider's pod-group metadata; the group keys
//! are our stable hash, not SHA-1. The TPU variables are `super::tpu`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, Pod, PodAffinity, PodAffinityTerm, PodAntiAffinity,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::scheduler_provider;
use super::tpu;
use super::utils::{get_parent_name_and_ordinal, leader_pod};
use crate::api::{
    keys, LeaderWorkerSet, NetworkConfig, RollingUpdateConfiguration, RolloutStrategy,
};
use crate::k8s;
use crate::profile::GangScheduling;

/// The CRD schema's defaults (applied when the object is decoded), then the webhook's `Default`.
pub fn default_lws(lws: &mut LeaderWorkerSet) {
    crate::crd::prune(lws, crate::profile::Release::V0_10_0); // fields the tag's CRD lacks
    crd_defaults(lws);
    let spec = &mut lws.spec;
    let rp = &mut spec.leader_worker_template.restart_policy;
    if rp.is_empty() {
        *rp = "RecreateGroupOnPodRestart".into();
    }
    if rp == "Default" {
        *rp = "None".into();
    }
    let strategy = spec
        .rollout_strategy
        .get_or_insert_with(RolloutStrategy::default);
    if strategy.type_.is_empty() {
        strategy.type_ = "RollingUpdate".into();
    }
    if strategy.type_ == "RollingUpdate" && strategy.rolling_update_configuration.is_none() {
        strategy.rolling_update_configuration = Some(RollingUpdateConfiguration {
            max_unavailable: Some(IntOrString::Int(1)),
            max_surge: Some(IntOrString::Int(0)),
            partition: Some(0),
        });
    }
    let nc = spec
        .network_config
        .get_or_insert_with(NetworkConfig::default);
    nc.subdomain_policy.get_or_insert_with(|| "Shared".into());
}

/// `+kubebuilder:default` markers: replicas 1, startupPolicy LeaderCreated, size 1,
/// restartPolicy RecreateGroupOnPodRestart, rollout type RollingUpdate, and inside a present
/// rollingUpdateConfiguration partition 0, maxUnavailable 1, maxSurge 0; inside a present
/// subGroupPolicy the type LeaderWorker.
fn crd_defaults(lws: &mut LeaderWorkerSet) {
    let spec = &mut lws.spec;
    spec.replicas.get_or_insert(1);
    if spec.startup_policy.is_empty() {
        spec.startup_policy = "LeaderCreated".into();
    }
    let t = &mut spec.leader_worker_template;
    t.size.get_or_insert(1);
    if t.restart_policy.is_empty() {
        t.restart_policy = "RecreateGroupOnPodRestart".into();
    }
    if let Some(p) = t.sub_group_policy.as_mut() {
        p.sub_group_policy_type
            .get_or_insert_with(|| "LeaderWorker".into());
    }
    if let Some(s) = spec.rollout_strategy.as_mut() {
        if s.type_.is_empty() {
            s.type_ = "RollingUpdate".into();
        }
        if let Some(ru) = s.rolling_update_configuration.as_mut() {
            ru.partition.get_or_insert(0);
            ru.max_unavailable.get_or_insert(IntOrString::Int(1));
            ru.max_surge.get_or_insert(IntOrString::Int(0));
        }
    }
}

/// The CRD schema's enums and bounds, which the API server checks before the webhooks run.
/// A `+kubebuilder:validation:Enum` check.
fn check_enum(errs: &mut Vec<String>, path: &str, value: &str, allowed: &[&str]) {
    if !allowed.contains(&value) {
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        errs.push(format!(
            "{path}: Unsupported value: {value:?}: supported values: {}",
            quoted.join(", ")
        ));
    }
}

fn validate_schema(lws: &LeaderWorkerSet, errs: &mut Vec<String>) {
    let replicas = lws.replicas();
    if replicas < 0 {
        errs.push(format!("spec.replicas: Invalid value: {replicas}: spec.replicas in body should be greater than or equal to 0"));
    }
    if replicas > 1_000_000 {
        errs.push(format!("spec.replicas: Invalid value: {replicas}: spec.replicas in body should be less than or equal to 1000000"));
    }
    let mut enum_check =
        |path: &str, value: &str, allowed: &[&str]| check_enum(errs, path, value, allowed);
    let spec = &lws.spec;
    let t = &spec.leader_worker_template;
    enum_check(
        "spec.startupPolicy",
        &spec.startup_policy,
        &["LeaderCreated", "LeaderReady"],
    );
    enum_check(
        "spec.leaderWorkerTemplate.restartPolicy",
        &t.restart_policy,
        &[
            "Default",
            "RecreateGroupOnPodRestart",
            "RecreateGroupAfterStart",
            "None",
        ],
    );
    if let Some(s) = &spec.rollout_strategy {
        enum_check("spec.rolloutStrategy.type", &s.type_, &["RollingUpdate"]);
    }
    if let Some(p) = t
        .sub_group_policy
        .as_ref()
        .and_then(|p| p.sub_group_policy_type.as_deref())
    {
        enum_check(
            "spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType",
            p,
            &["LeaderWorker", "LeaderExcluded"],
        );
    }
    if let Some(p) = spec
        .network_config
        .as_ref()
        .and_then(|n| n.subdomain_policy.as_deref())
    {
        enum_check(
            "spec.networkConfig.subdomainPolicy",
            p,
            &["Shared", "UniquePerReplica"],
        );
    }
    crate::crd::check_required_pod_fields(errs, lws);
}

/// The admission of a create (`old` None) or update: schema, `generalValidate`, and on update
/// `ValidateUpdate`'s subgroup and subdomain rules. Errors are joined as an aggregate; a panic
/// of the webhook reads as the message controller-runtime answers with.
pub fn validate_lws(lws: &LeaderWorkerSet, old: Option<&LeaderWorkerSet>) -> Result<(), String> {
    // The API server validates against the schema before it calls validating webhooks.
    check_schema(lws)?;
    validate_webhook(lws, old).map_err(|r| r.to_string())
}

/// Why the validating webhook refused an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The aggregate of `field.ErrorList`: `admission.Denied`, 403.
    Invalid(String),
    /// The Go code panicked (a runtime error, its text as Go prints it). controller-runtime
    /// v0.24.1 recovers a webhook's panic and answers `Errored(500, "panic: %v [recovered]")`
    /// (`pkg/webhook/admission/webhook.go:156-170`; `RecoverPanic` defaults to true).
    Panicked(&'static str),
}

impl From<String> for Refusal {
    fn from(m: String) -> Self {
        Refusal::Invalid(m)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Invalid(m) => f.write_str(m),
            Refusal::Panicked(e) => write!(f, "panic: {e} [recovered]"),
        }
    }
}

/// Go's runtime error for an integer division by zero.
pub const DIVIDE_BY_ZERO: &str = "runtime error: integer divide by zero";
/// Go's runtime error for a nil pointer dereference.
pub const NIL_DEREFERENCE: &str =
    "runtime error: invalid memory address or nil pointer dereference";

/// The CRD schema's enums and bounds alone: what the API server refuses itself (422), before
/// any validating webhook is called.
pub fn check_schema(lws: &LeaderWorkerSet) -> Result<(), String> {
    let mut errs = Vec::new();
    validate_schema(lws, &mut errs);
    aggregate(errs)
}

/// The validating webhook alone (`ValidateCreate` / `ValidateUpdate`, lwswh v0.10.0:92-115):
/// `generalValidate`, and on update the subgroup and subdomain rules.
pub fn validate_webhook(
    lws: &LeaderWorkerSet,
    old: Option<&LeaderWorkerSet>,
) -> Result<(), Refusal> {
    let mut errs = Vec::new();
    general_validate(lws, &mut errs).map_err(Refusal::Panicked)?;
    if let Some(old) = old {
        validate_update(old, lws, &mut errs);
    }
    aggregate(errs).map_err(Refusal::Invalid)
}

/// `field.ErrorList.ToAggregate()`'s text: one error as is, several in brackets.
pub fn aggregate(mut errs: Vec<String>) -> Result<(), String> {
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

fn validate_update(old: &LeaderWorkerSet, new: &LeaderWorkerSet, errs: &mut Vec<String>) {
    let path = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize";
    let size = |l: &LeaderWorkerSet| {
        l.spec
            .leader_worker_template
            .sub_group_policy
            .as_ref()
            .map(|p| p.sub_group_size)
    };
    match (size(new), size(old)) {
        (Some(n), Some(o)) if n != o => errs.push(format!(
            "{path}: Invalid value: {}: field is immutable",
            fmt_opt(n)
        )),
        (Some(n), None) => errs.push(format!(
            "{path}: Invalid value: {}: cannot enable subGroupSize after the lws is already created",
            fmt_opt(n)
        )),
        (None, Some(o)) => errs.push(format!(
            "{path}: Invalid value: {}: cannot remove subGroupSize after enabled",
            fmt_opt(o)
        )),
        _ => {}
    }
    let unset = new
        .spec
        .network_config
        .as_ref()
        .is_some_and(|n| n.subdomain_policy.is_none());
    if unset {
        errs.push("spec.networkConfig.subdomainPolicy: Invalid value: null: cannot set subdomainPolicy as null".into());
    }
}

fn fmt_opt(v: Option<i32>) -> String {
    v.map_or("null".into(), |v| v.to_string())
}

/// `generalValidate`.
/// `generalValidate`; `Err` is the Go runtime error it panics with.
fn general_validate(lws: &LeaderWorkerSet, errs: &mut Vec<String>) -> Result<(), &'static str> {
    validate_dns1035_name(lws.name(), errs);
    let replicas = lws.replicas();
    let size = lws.size();
    if replicas < 0 {
        errs.push(format!(
            "spec.replicas: Invalid value: {replicas}: replicas must be equal or greater than 0"
        ));
    }
    if replicas > 1_000_000 {
        errs.push(format!(
            "spec.replicas: Invalid value: {replicas}: replicas must be equal or less than 1000000"
        ));
    }
    if size < 1 {
        errs.push(format!("spec.leaderWorkerTemplate.size: Invalid value: {size}: size must be equal or greater than 1"));
    }
    if i64::from(replicas) * i64::from(size) > i64::from(i32::MAX) {
        errs.push(format!("spec.replicas: Invalid value: {replicas}: the product of replicas and worker replicas must not exceed {}", i32::MAX));
    }
    let ru = lws.rolling_update();
    let has_config = lws
        .spec
        .rollout_strategy
        .as_ref()
        .is_some_and(|s| s.rolling_update_configuration.is_some());
    let mu = ru.max_unavailable.clone().unwrap_or(IntOrString::Int(0));
    let ms = ru.max_surge.clone().unwrap_or(IntOrString::Int(0));
    let mu_path = "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable";
    let ms_path = "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge";
    if has_config {
        validate_positive_int_or_percent(&mu, mu_path, errs);
        is_not_more_than_100_percent(&mu, mu_path, errs);
        validate_positive_int_or_percent(&ms, ms_path, errs);
        is_not_more_than_100_percent(&ms, ms_path, errs);
        let partition = i64::from(ru.partition.unwrap_or(0));
        if partition < 0 {
            errs.push(format!("spec.rolloutStrategy.rollingUpdateConfiguration.partition: Invalid value: {partition}: must be greater than or equal to 0"));
        }
    }
    let mu_value = k8s::scaled_value(&mu, replicas, false);
    let ms_value = k8s::scaled_value(&ms, replicas, true);
    if mu_value.is_err() {
        errs.push(format!(
            "{mu_path}: Invalid value: {}: invalid value",
            show(&mu)
        ));
    }
    if ms_value.is_err() {
        errs.push(format!(
            "{ms_path}: Invalid value: {}: invalid value",
            show(&ms)
        ));
    }
    if mu_value.unwrap_or(0) == 0 && ms_value.unwrap_or(0) == 0 && replicas != 0 {
        errs.push(format!(
            "{mu_path}: Invalid value: {}: must not be 0 when `maxSurge` is 0",
            show(&mu)
        ));
    }
    if lws.spec.leader_worker_template.sub_group_policy.is_some() {
        validate_update_sub_group_policy(lws, errs)?;
    } else if let Some(v) = k8s::annotation(&lws.metadata, keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
        errs.push(format!(
            "metadata.annotations[{}]: Invalid value: {v:?}: cannot have subgroup-exclusive-topology without subGroupSize set",
            keys::SUBGROUP_EXCLUSIVE_TOPOLOGY
        ));
    }
    Ok(())
}

fn show(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => format!("{s:?}"),
    }
}

/// `apivalidation.NameIsDNS1035Label` through `ValidateObjectMeta`: the LWS name names the
/// headless Service, so it must be a DNS-1035 label. `IsDNS1035Label` reports the length and
/// the pattern separately (apimachinery `pkg/util/validation/validation.go`): a long name that
/// also breaks the pattern gets both.
fn validate_dns1035_name(name: &str, errs: &mut Vec<String>) {
    let b = name.as_bytes();
    if b.len() > 63 {
        errs.push(format!(
            "metadata.name: Invalid value: {name:?}: must be no more than 63 characters"
        ));
    }
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[b.len() - 1] != b'-';
    if !ok {
        errs.push(format!("metadata.name: Invalid value: {name:?}: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
    }
}

/// `ValidatePositiveIntOrPercent`.
pub(crate) fn validate_positive_int_or_percent(
    v: &IntOrString,
    path: &str,
    errs: &mut Vec<String>,
) {
    match v {
        IntOrString::String(s) if percent_value(s).is_none() => errs.push(format!(
            "{path}: Invalid value: {s:?}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
        )),
        IntOrString::Int(i) if *i < 0 => errs.push(format!(
            "{path}: Invalid value: {i}: must be greater than or equal to 0"
        )),
        _ => {}
    }
}

/// `IsNotMoreThan100Percent`.
pub(crate) fn is_not_more_than_100_percent(v: &IntOrString, path: &str, errs: &mut Vec<String>) {
    if let IntOrString::String(s) = v {
        if percent_value(s).is_some_and(|p| p > 100) {
            errs.push(format!(
                "{path}: Invalid value: {s:?}: must not be greater than 100%"
            ));
        }
    }
}

/// `utilvalidation.IsValidPercent` (`[0-9]+%`) and the value.
fn percent_value(s: &str) -> Option<u64> {
    let digits = s.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(0)) // Go's Atoi error gives 0 here
}

/// `validateUpdateSubGroupPolicy` (lwswh:242-261@v0.10.0). The CRD sets no minimum and does not
/// require `subGroupSize`: an absent one is dereferenced (lwswh:245) and a zero one divides
/// (lwswh:249), and the webhook panics: `Err` is the Go runtime error.
fn validate_update_sub_group_policy(
    lws: &LeaderWorkerSet,
    errs: &mut Vec<String>,
) -> Result<(), &'static str> {
    let path = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize";
    let size = lws.size();
    let policy = lws.spec.leader_worker_template.sub_group_policy.as_ref();
    let Some(sgs) = policy.and_then(|p| p.sub_group_size) else {
        return Err(NIL_DEREFERENCE);
    };
    if sgs < 1 {
        errs.push(format!(
            "{path}: Invalid value: {sgs}: subGroupSize must be equal or greater than 1"
        ));
    }
    if sgs == 0 {
        return Err(DIVIDE_BY_ZERO);
    }
    // Go's int32 arithmetic wraps (and `MinInt32 % -1` is 0); Rust's would panic.
    let (rem, rem_less_one) = (
        size.wrapping_rem(sgs),
        size.wrapping_sub(1).wrapping_rem(sgs),
    );
    if rem != 0 && rem_less_one != 0 {
        errs.push(format!(
            "{path}: Invalid value: {sgs}: size or size - 1 must be divisible by subGroupSize"
        ));
    }
    if size < sgs {
        errs.push(format!(
            "{path}: Invalid value: {sgs}: subGroupSize cannot be larger than size"
        ));
    }
    let excluded =
        policy.and_then(|p| p.sub_group_policy_type.as_deref()) == Some("LeaderExcluded");
    if excluded && rem_less_one != 0 {
        errs.push(format!("{path}: Invalid value: {sgs}: size-1 must be divisible by subGroupSize when using LeaderExcluded"));
    }
    Ok(())
}

/// The pod webhook's `Default` (on pod create): group index, subdomain, group key and
/// exclusive affinities for leaders; worker index and subgroup labels for workers; then, for a
/// pod requesting TPUs, the TPU environment variables, and the LWS ones. Errors reject the pod.
pub fn default_pod(pod: &mut Pod, gang: GangScheduling) -> Result<(), Refusal> {
    if k8s::label(&pod.metadata, keys::SET_NAME).is_none() {
        return Ok(());
    }
    let name = k8s::name(&pod.metadata).to_string();
    let size = k8s::annotation(&pod.metadata, keys::SIZE)
        .ok_or_else(|| format!("size annotation is unexpectedly missing for pod {name}"))?;
    // Go's `int` is 64 bits: `strconv.Atoi`.
    let pod_count = tpu::atoi(size)?;
    if leader_pod(pod) {
        default_leader_labels(pod, &name)?;
    } else {
        default_worker_labels(pod, &name, pod_count)?;
    }
    // pod_webhook.go@v0.10.0:159-175: the scheduler provider (nil in a default install), then
    // the TPU variables, then the LWS ones.
    if gang == GangScheduling::Volcano {
        scheduler_provider::inject_pod_group_metadata(pod);
    }
    if pod.spec.as_ref().is_some_and(tpu::pod_requests_tpus) {
        tpu::add_tpu_variables(pod, pod_count).map_err(|e| match e.as_str() {
            tpu::DIVIDE_BY_ZERO => Refusal::Panicked(DIVIDE_BY_ZERO),
            _ => Refusal::Invalid(e),
        })?;
    }
    Ok(add_lws_variables(pod)?)
}

fn default_leader_labels(pod: &mut Pod, name: &str) -> Result<(), String> {
    let namespace = k8s::namespace(&pod.metadata).to_string();
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    if !labels.contains_key(keys::GROUP_INDEX) {
        let (_, group) = get_parent_name_and_ordinal(name);
        if group == -1 {
            return Err(format!("parsing pod ordinal for pod {name}"));
        }
        labels.insert(keys::GROUP_INDEX.into(), group.to_string());
    }
    let group_key = labels
        .entry(keys::GROUP_UNIQUE_HASH.into())
        .or_insert_with(|| crate::hash::group_key(&namespace, name))
        .clone();
    let subgroup_policy = annotations
        .get(keys::SUBGROUP_POLICY_TYPE)
        .map(String::as_str);
    let subgroup = annotations.contains_key(keys::SUBGROUP_SIZE_V0_10)
        && labels
            .get(keys::SUBGROUP_INDEX)
            .is_none_or(|v| v.is_empty())
        && subgroup_policy != Some("LeaderExcluded");
    let subgroup_key = crate::hash::group_key(name, "0");
    if subgroup {
        labels.insert(keys::SUBGROUP_INDEX.into(), "0".into());
        labels.insert(keys::SUBGROUP_KEY.into(), subgroup_key.clone());
    }
    if annotations.get(keys::SUBDOMAIN_POLICY).map(String::as_str) == Some("UniquePerReplica") {
        pod.spec.get_or_insert_with(Default::default).subdomain = Some(name.to_string());
    }
    if let Some(topology) = annotations.get(keys::EXCLUSIVE_TOPOLOGY) {
        set_exclusive_affinities(pod, &group_key, topology, keys::GROUP_UNIQUE_HASH);
    }
    if let Some(topology) = annotations
        .get(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY)
        .filter(|_| subgroup)
    {
        set_exclusive_affinities(pod, &subgroup_key, topology, keys::SUBGROUP_KEY);
    }
    Ok(())
}

fn default_worker_labels(pod: &mut Pod, name: &str, pod_count: i64) -> Result<(), Refusal> {
    let (_, worker_index) = get_parent_name_and_ordinal(name);
    if worker_index == -1 {
        return Err(format!("parsing pod ordinal for pod {name}").into());
    }
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(keys::WORKER_INDEX.into(), worker_index.to_string());
    let Some(sgs) = annotations.get(keys::SUBGROUP_SIZE_V0_10) else {
        return Ok(());
    };
    if labels
        .get(keys::SUBGROUP_INDEX)
        .is_some_and(|v| !v.is_empty())
    {
        return Ok(());
    }
    let sgs = tpu::atoi(sgs)?;
    if sgs == 0 {
        // `getSubGroupIndex`'s `%` by zero: the handler panics (a negative size divides).
        return Err(Refusal::Panicked(DIVIDE_BY_ZERO));
    }
    let leader = annotations
        .get(keys::LEADER_POD_NAME)
        .cloned()
        .unwrap_or_default();
    let index = get_sub_group_index(pod_count, sgs, i64::from(worker_index));
    let key = crate::hash::group_key(&leader, &index);
    labels.insert(keys::SUBGROUP_INDEX.into(), index);
    labels.insert(keys::SUBGROUP_KEY.into(), key.clone());
    if let Some(topology) = annotations.get(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
        set_exclusive_affinities(pod, &key, topology, keys::SUBGROUP_KEY);
    }
    Ok(())
}

/// `getSubGroupIndex`: when only `size - 1` divides, the leader is an extra pod of subgroup 0.
/// Go's 64-bit arithmetic, which wraps (a nonzero `sub_group_size`).
pub fn get_sub_group_index(pod_count: i64, sub_group_size: i64, worker_index: i64) -> String {
    let rem = |x: i64| x.wrapping_rem(sub_group_size);
    if rem(pod_count.wrapping_sub(1)) == 0 && rem(pod_count) != 0 {
        return worker_index
            .wrapping_sub(1)
            .wrapping_div(sub_group_size)
            .to_string();
    }
    worker_index.wrapping_div(sub_group_size).to_string()
}

/// `SetExclusiveAffinities`: required pod affinity to the group's own key and anti-affinity to
/// any other group's, on `topology`; skipped when both terms for it are already there.
pub fn set_exclusive_affinities(pod: &mut Pod, group_key: &str, topology: &str, label_key: &str) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let has = |terms: Option<&Vec<PodAffinityTerm>>| {
        terms
            .into_iter()
            .flatten()
            .any(|t| t.topology_key == topology)
    };
    let applied = has(affinity.pod_affinity.as_ref().and_then(|a| {
        a.required_during_scheduling_ignored_during_execution
            .as_ref()
    })) && has(affinity.pod_anti_affinity.as_ref().and_then(|a| {
        a.required_during_scheduling_ignored_during_execution
            .as_ref()
    }));
    if applied {
        return;
    }
    let requirement = |operator: &str, values: Option<Vec<String>>| LabelSelectorRequirement {
        key: label_key.to_string(),
        operator: operator.to_string(),
        values,
    };
    let term = |expressions: Vec<LabelSelectorRequirement>| PodAffinityTerm {
        label_selector: Some(LabelSelector {
            match_expressions: Some(expressions),
            match_labels: None,
        }),
        topology_key: topology.to_string(),
        ..Default::default()
    };
    let same = term(vec![requirement("In", Some(vec![group_key.to_string()]))]);
    let other = term(vec![
        requirement("Exists", None),
        requirement("NotIn", Some(vec![group_key.to_string()])),
    ]);
    affinity
        .pod_affinity
        .get_or_insert_with(PodAffinity::default)
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(Vec::new)
        .push(same);
    affinity
        .pod_anti_affinity
        .get_or_insert_with(PodAntiAffinity::default)
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(Vec::new)
        .push(other);
}

/// `AddLWSVariables`: LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX first in every
/// (init) container, overriding the user's values of the same names.
fn add_lws_variables(pod: &mut Pod) -> Result<(), String> {
    // `klog.KObj(pod)`: namespace/name.
    let name = match k8s::namespace(&pod.metadata) {
        "" => k8s::name(&pod.metadata).to_string(),
        ns => format!("{ns}/{}", k8s::name(&pod.metadata)),
    };
    let missing = |what: &str| {
        format!("Failure constructing environment variables, no {what} found for pod {name}")
    };
    let label = |k: &str| k8s::label(&pod.metadata, k).map(str::to_string);
    let lws_name = label(keys::SET_NAME).ok_or_else(|| missing("name label"))?;
    let group = label(keys::GROUP_INDEX).ok_or_else(|| missing("group index label"))?;
    let size = k8s::annotation(&pod.metadata, keys::SIZE)
        .map(str::to_string)
        .ok_or_else(|| missing("size annotation"))?;
    let worker = label(keys::WORKER_INDEX).ok_or_else(|| missing("worker index label"))?;
    let namespace = k8s::namespace(&pod.metadata).to_string();
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let subdomain = spec.subdomain.clone().unwrap_or_default();
    let var = |n: &str, v: String| EnvVar {
        name: n.to_string(),
        value: Some(v),
        value_from: None,
    };
    let vars = [
        var(
            keys::LEADER_ADDRESS_ENV,
            format!("{lws_name}-{group}.{subdomain}.{namespace}"),
        ),
        var(keys::GROUP_SIZE_ENV, size),
        var(keys::WORKER_INDEX_ENV, worker),
    ];
    let containers = spec.containers.iter_mut();
    for c in containers.chain(spec.init_containers.iter_mut().flatten()) {
        let existing = c.env.take().unwrap_or_default();
        let mut env = vars.to_vec();
        for e in existing {
            if !env.iter().any(|v| v.name == e.name) {
                env.push(e);
            }
        }
        c.env = Some(env);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The TPU entries of `test/integration/webhooks/pod_test.go` at v0.10.0, through
    //! `default_pod` (the rest of the v0.10.0 webhook tests are in `upstream_tests`).

    use serde_json::{json, Value};

    use super::*;
    use crate::v0_10_0::tpu::{
        LEADER_REQUESTS_TPUS_ANNOTATION_KEY as LRT, TPU_NAME, TPU_PROCESS_ADDRESSES,
        TPU_PROCESS_PORT_NAME, TPU_WORKER_HOSTNAMES, TPU_WORKER_ID,
    };

    const IMAGE: &str = "docker.io/nginxinc/nginx-unprivileged:1.27";

    /// test/wrappers/wrappers.go@v0.10.0: `MakeWorkerPodSpec`, `MakeWorkerPodSpecWithTPUResource`,
    /// `MakeLeaderPodSpecWithTPUResource` (`MakeContainerWithTPU("worker")`),
    /// `MakeLeaderPodSpecWithTPUResourceMultipleContainers` and `MakePodSpecWithInitContainer`.
    fn spec(which: &str) -> Value {
        let tpu = json!({"google.com/tpu": "4"});
        let port = json!([{"containerPort": 8080, "protocol": "TCP"}]);
        let tpu_worker =
            json!({"name": "worker", "image": "busybox", "resources": {"limits": tpu}});
        let env = json!([{"name": "key1", "value": "value1"}, {"name": "key2", "value": "value2"}]);
        match which {
            "worker" => json!({"containers": [{"name": "worker", "image": IMAGE, "ports": port}]}),
            "worker-tpu" => json!({"containers": [{"name": "leader", "image": IMAGE, "ports": port,
                "resources": {"requests": tpu, "limits": tpu}}], "subdomain": "default"}),
            "leader-tpu" => json!({"containers": [tpu_worker], "subdomain": "default"}),
            "leader-tpu-two" => json!({"containers": [tpu_worker,
                {"name": "leader", "image": IMAGE, "ports": port}], "subdomain": "default"}),
            "init" => json!({"containers": [{"name": "test", "image": "busybox", "env": env}],
                "initContainers": [{"name": "init-test", "image": "busybox", "env": env}],
                "subdomain": "test-sample"}),
            _ => unreachable!(),
        }
    }

    fn pod(
        name: &str,
        labels: &[(&str, &str)],
        annotations: &[(&str, &str)],
        spec_of: &str,
    ) -> Pod {
        let map = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "labels": map(labels),
                         "annotations": map(annotations)},
            "spec": spec(spec_of)
        }))
        .unwrap()
    }

    fn envs(p: &Pod) -> Vec<Vec<(String, String)>> {
        let s = p.spec.as_ref().unwrap();
        let init = s.init_containers.iter().flatten();
        s.containers
            .iter()
            .chain(init)
            .map(|c| {
                let env = c.env.iter().flatten();
                env.map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
                    .collect()
            })
            .collect()
    }

    /// The first container's TPU variables (`HasTPUEnvVarsPopulated` at v0.10.0 asks for
    /// hostnames, id and name; `CheckTPUContainerHasCorrectEnvVars` also reads the port):
    /// hostnames, id, name, addresses, port.
    fn tpu_vars(p: &Pod) -> Option<[String; 5]> {
        let env = envs(p).into_iter().next()?;
        let get = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        Some([
            get(TPU_WORKER_HOSTNAMES)?,
            get(TPU_WORKER_ID)?,
            get(TPU_NAME)?,
            get(TPU_PROCESS_ADDRESSES)?,
            get(TPU_PROCESS_PORT_NAME)?,
        ])
    }

    /// `<leader>.<sub>` (from 0) or `<leader>-<i>.<sub>`, for i in from..=to.
    fn hosts(leader: &str, from: i32, to: i32, sub: &str) -> Vec<String> {
        (from..=to)
            .map(|i| match i {
                0 => format!("{leader}.{sub}"),
                i => format!("{leader}-{i}.{sub}"),
            })
            .collect()
    }

    /// What the TPU variables of a one-TPU-container pod must be.
    fn want(leader: &str, hosts: &[String], id: &str) -> Option<[String; 5]> {
        let addresses: Vec<String> = hosts.iter().map(|h| format!("{h}:8476")).collect();
        Some([
            hosts.join(","),
            id.into(),
            leader.into(),
            addresses.join(","),
            "8476".into(),
        ])
    }

    #[test]
    fn the_pod_webhook_injects_tpu_variables() {
        // pod_test.go@v0.10.0, each case's line. Hostnames are upstream's expected strings
        // (spelled by `hosts`); TPU_WORKER_ID and TPU_PROCESS_PORT are what
        // `CheckTPUContainerHasCorrectEnvVars` computes for the case, TPU_NAME the leader.
        let sg = keys::SUBGROUP_SIZE_V0_10;
        let ws = |w: &'static str| {
            vec![
                (keys::SET_NAME, "test-sample"),
                (keys::WORKER_INDEX, w),
                (keys::GROUP_INDEX, "1"),
            ]
        };
        let ls = vec![(keys::SET_NAME, "test-sample"), (keys::WORKER_INDEX, "0")];
        let l = "test-sample-1";
        let cases: Vec<(&str, Pod, Option<[String; 5]>)> = vec![
            // :265 Pod requesting TPUs which doesn't belong to LWS: no TPU env vars.
            (":265", pod("test-1", &[], &[], "worker-tpu"), None),
            // :282 Pod not requesting TPUs: none for leader pods ...
            (
                ":282",
                pod(
                    "test-1",
                    &[(keys::SET_NAME, "test"), (keys::WORKER_INDEX, "0")],
                    &[(keys::SIZE, "2")],
                    "worker",
                ),
                None,
            ),
            // :306 ... nor for worker pods.
            (
                ":306",
                pod(
                    "test-1-2",
                    &[(keys::SET_NAME, "test"), (keys::GROUP_INDEX, "1")],
                    &[(keys::SIZE, "3")],
                    "worker",
                ),
                None,
            ),
            // :330 size 5, leader pod.
            (
                ":330",
                pod(l, &ls, &[(keys::SIZE, "5")], "leader-tpu"),
                want(l, &hosts(l, 0, 4, "default"), "0"),
            ),
            // :395 subgroupsize 5, leader pod: TPU_WORKER_ID 0 (v0.4.1: -1).
            (
                ":395",
                pod(l, &ls, &[(keys::SIZE, "5"), (sg, "5")], "leader-tpu"),
                want(l, &hosts(l, 0, 4, "default"), "0"),
            ),
            // :423 worker pod, leader requests TPUs too.
            (
                ":423",
                pod(
                    "test-sample-1-3",
                    &ws("3"),
                    &[(keys::SIZE, "5"), (LRT, "true")],
                    "worker-tpu",
                ),
                want(l, &hosts(l, 0, 4, "default"), "3"),
            ),
            // :452 worker pod using subgrouping, leader too.
            (
                ":452",
                pod(
                    "test-sample-1-3",
                    &ws("3"),
                    &[(keys::SIZE, "10"), (LRT, "true"), (sg, "5")],
                    "worker-tpu",
                ),
                want(l, &hosts(l, 0, 4, "default"), "3"),
            ),
            // :482 worker pod, leader doesn't.
            (
                ":482",
                pod(
                    "test-sample-1-3",
                    &ws("3"),
                    &[(keys::SIZE, "5")],
                    "worker-tpu",
                ),
                want(l, &hosts(l, 1, 4, "default"), "2"),
            ),
            // :510 worker pod using subgrouping, leader doesn't.
            (
                ":510",
                pod(
                    "test-sample-1-7",
                    &ws("7"),
                    &[(keys::SIZE, "11"), (sg, "5")],
                    "worker-tpu",
                ),
                want(l, &hosts(l, 6, 10, "default"), "1"),
            ),
            // :539 size 2, worker pod.
            (
                ":539",
                pod(
                    "test-sample-1-1",
                    &ws("1"),
                    &[(keys::SIZE, "2"), (LRT, "true")],
                    "worker-tpu",
                ),
                want(l, &hosts(l, 0, 1, "default"), "1"),
            ),
            // :568 size 1, leader pod (v0.4.1:565 "size 0").
            (
                ":568",
                pod(l, &ls, &[(keys::SIZE, "1")], "leader-tpu"),
                want(l, &hosts(l, 0, 0, "default"), "0"),
            ),
            // :595 multiple containers, only some requesting TPUs: the TPU one is worker 0.
            (
                ":595",
                pod(l, &ls, &[(keys::SIZE, "1")], "leader-tpu-two"),
                want(l, &hosts(l, 0, 0, "default"), "0"),
            ),
            // :357 leader pod with subdomainPolicy UniquePerReplica: its own subdomain.
            (
                ":357",
                pod(
                    l,
                    &ls,
                    &[
                        (keys::SIZE, "5"),
                        (keys::SUBDOMAIN_POLICY, "UniquePerReplica"),
                    ],
                    "leader-tpu",
                ),
                want(l, &hosts(l, 0, 4, l), "0"),
            ),
        ];
        for (line, mut p, want) in cases {
            default_pod(&mut p, GangScheduling::Off).unwrap();
            assert_eq!(tpu_vars(&p), want, "pod_test.go@v0.10.0{line}");
        }
        // :357 also checks the leader address; :595's second container gets no TPU variable.
        let mut p = pod(
            l,
            &ls,
            &[
                (keys::SIZE, "5"),
                (keys::SUBDOMAIN_POLICY, "UniquePerReplica"),
            ],
            "leader-tpu",
        );
        default_pod(&mut p, GangScheduling::Off).unwrap();
        let env = &envs(&p)[0];
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "LWS_LEADER_ADDRESS",
                "LWS_GROUP_SIZE",
                "LWS_WORKER_INDEX",
                "TPU_WORKER_HOSTNAMES",
                "TPU_WORKER_ID",
                "TPU_NAME",
                "TPU_PROCESS_ADDRESSES",
                "TPU_PROCESS_PORT"
            ]
        );
        assert_eq!(env[0].1, "test-sample-1.test-sample-1.ns");
        let mut p = pod(l, &ls, &[(keys::SIZE, "1")], "leader-tpu-two");
        default_pod(&mut p, GangScheduling::Off).unwrap();
        let names: Vec<String> = envs(&p)[1].iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            names,
            ["LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"]
        );
    }

    #[test]
    fn a_zero_subgroup_size_panics_and_a_negative_one_divides() {
        let sg = keys::SUBGROUP_SIZE_V0_10;
        let labels = [(keys::SET_NAME, "lws"), (keys::GROUP_INDEX, "0")];
        // pod_webhook.go@v0.10.0:143-150, getSubGroupIndex: `%` by zero panics (500).
        let mut w = pod(
            "lws-0-1",
            &labels,
            &[(keys::SIZE, "4"), (sg, "0")],
            "worker",
        );
        assert_eq!(
            default_pod(&mut w, GangScheduling::Off),
            Err(Refusal::Panicked(DIVIDE_BY_ZERO))
        );
        // Go divides by a negative size: (4-1) % -2 != 0, so 1 / -2 = 0.
        let mut w = pod(
            "lws-0-1",
            &labels,
            &[(keys::SIZE, "4"), (sg, "-2")],
            "worker",
        );
        default_pod(&mut w, GangScheduling::Off).unwrap();
        assert_eq!(k8s::label(&w.metadata, keys::SUBGROUP_INDEX), Some("0"));
        // `strconv.Atoi` is 64-bit: a size past i32 is a number, past i64 out of range.
        let mut w = pod("lws-0-1", &labels, &[(keys::SIZE, "3000000000")], "worker");
        default_pod(&mut w, GangScheduling::Off).unwrap();
        let mut w = pod(
            "lws-0-1",
            &labels,
            &[(keys::SIZE, "99999999999999999999")],
            "worker",
        );
        assert_eq!(
            default_pod(&mut w, GangScheduling::Off),
            Err(Refusal::Invalid(
                r#"strconv.Atoi: parsing "99999999999999999999": value out of range"#.into()
            ))
        );
    }

    #[test]
    fn the_pod_webhook_subgroup_labels_with_tpus_and_lws_env_first() {
        let sg = keys::SUBGROUP_SIZE_V0_10;
        // pod_test.go@v0.10.0:152: the leader requests TPUs, subgroup labels of the leader.
        let mut l = pod(
            "test-1",
            &[(keys::SET_NAME, "test"), (keys::WORKER_INDEX, "0")],
            &[(keys::SIZE, "5"), (LRT, "true"), (sg, "4")],
            "leader-tpu",
        );
        default_pod(&mut l, GangScheduling::Off).unwrap();
        assert_eq!(k8s::label(&l.metadata, keys::GROUP_INDEX), Some("1"));
        assert_eq!(k8s::label(&l.metadata, keys::SUBGROUP_INDEX), Some("0"));
        // Not asserted upstream: what the TPU code makes of it.
        assert_eq!(
            tpu_vars(&l),
            want("test-1", &hosts("test-1", 0, 3, "default"), "0")
        );
        // :192 worker without TPUs (size 4, subgroup 2, worker 3): subgroup 1.
        let mut w = pod(
            "test-1-3",
            &[
                (keys::SET_NAME, "test"),
                (keys::WORKER_INDEX, "3"),
                (keys::GROUP_INDEX, "1"),
            ],
            &[(keys::SIZE, "4"), (LRT, "true"), (sg, "2")],
            "worker",
        );
        default_pod(&mut w, GangScheduling::Off).unwrap();
        assert_eq!(k8s::label(&w.metadata, keys::SUBGROUP_INDEX), Some("1"));
        assert_eq!(tpu_vars(&w), None);
        // :229 the leader doesn't request TPUs (size 5, subgroup 2, worker 4): subgroup 1.
        let mut w = pod(
            "test-1-4",
            &[
                (keys::SET_NAME, "test"),
                (keys::WORKER_INDEX, "4"),
                (keys::GROUP_INDEX, "1"),
            ],
            &[(keys::SIZE, "5"), (sg, "2")],
            "worker-tpu",
        );
        default_pod(&mut w, GangScheduling::Off).unwrap();
        assert_eq!(k8s::label(&w.metadata, keys::SUBGROUP_INDEX), Some("1"));
        assert_eq!(
            tpu_vars(&w),
            want("test-1", &hosts("test-1", 3, 4, "default"), "1")
        );
        // :801 LWS env vars populated, the leader address first, in containers and init
        // containers alike.
        let mut w = pod(
            "test-sample-1-1",
            &[
                (keys::SET_NAME, "test-sample"),
                (keys::WORKER_INDEX, "1"),
                (keys::GROUP_INDEX, "1"),
            ],
            &[(keys::SIZE, "2")],
            "init",
        );
        default_pod(&mut w, GangScheduling::Off).unwrap();
        for env in envs(&w) {
            let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                names,
                [
                    "LWS_LEADER_ADDRESS",
                    "LWS_GROUP_SIZE",
                    "LWS_WORKER_INDEX",
                    "key1",
                    "key2"
                ]
            );
            assert_eq!(env[0].1, "test-sample-1.test-sample.ns");
            assert_eq!(env[1].1, "2");
        }
    }

    #[test]
    fn a_long_name_is_reported_by_length_and_by_pattern_separately() {
        let errs = |name: &str| {
            let mut e = Vec::new();
            validate_dns1035_name(name, &mut e);
            e
        };
        let long = "a".repeat(64);
        assert_eq!(
            errs(&long),
            [format!(
                "metadata.name: Invalid value: {long:?}: must be no more than 63 characters"
            )]
        );
        let both = errs(&format!("A{}", "a".repeat(63)));
        assert_eq!(both.len(), 2, "{both:?}");
        assert!(
            both[1].contains("a DNS-1035 label must consist"),
            "{both:?}"
        );
        assert!(errs(&"a".repeat(63)).is_empty());
    }

    #[test]
    fn add_lws_variables_names_the_pod_as_klog_kobj_does() {
        let mut p = pod("w-0-1", &[(keys::SET_NAME, "w")], &[], "worker");
        let e = add_lws_variables(&mut p).unwrap_err();
        assert_eq!(
            e,
            "Failure constructing environment variables, no group index label found for pod ns/w-0-1"
        );
    }
}
