//! The LWS defaulting and validating webhooks and the pod mutating webhook of v0.3.0 and v0.4.1
//! (lws `pkg/webhooks/leaderworkerset_webhook.go`, `pod_webhook.go` at v0.3.0 and 84da957),
//! with what the API server does around them: pruning by the CRD schema, its defaults (before
//! the mutating webhook) and its enums (before the validating webhook).
//!
//! The CRD of the shared port follows the v0.4.0 admission flags, which came with their CRD
//! changes: `network-config` (PR #197 added `networkConfig`) selects v0.4.1's CRD for pruning,
//! otherwise v0.3.0's; `restart-policy-default` (PR #214) selects v0.4.1's `restartPolicy` enum
//! (with `None`) and default (`RecreateGroupOnPodRestart`), otherwise v0.3.0's (`Default`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{
    keys, LeaderWorkerSet, NetworkConfig, RollingUpdateConfiguration, RolloutStrategy,
};
use crate::crd::check_enum;
use crate::k8s;
use crate::profile::{Flags, Release};
use crate::tpu;

/// The release whose CRD (`config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml`)
/// the API server serves for these flags.
pub fn crd_release(flags: &Flags) -> Release {
    if flags.network_config {
        Release::V0_4_1
    } else {
        Release::V0_3_0
    }
}

/// `restartPolicy`'s `+kubebuilder:validation:Enum` (leaderworkerset_types.go: v0.3.0
/// `{Default,RecreateGroupOnPodRestart}`, v0.4.1 `{Default,RecreateGroupOnPodRestart,None}`).
fn restart_policies(flags: &Flags) -> &'static [&'static str] {
    if flags.restart_policy_default_recreate {
        &["Default", "RecreateGroupOnPodRestart", "None"]
    } else {
        &["Default", "RecreateGroupOnPodRestart"]
    }
}

/// Decoding by the CRD schema: fields the tag's CRD lacks are pruned, then its `default`s are
/// applied (leaderworkerset_types.go markers at v0.3.0 and v0.4.1: replicas 1, size 1,
/// startupPolicy LeaderCreated, restartPolicy `Default` (v0.3.0) or `RecreateGroupOnPodRestart`
/// (v0.4.1), inside a given rolloutStrategy the type RollingUpdate, inside a given
/// rollingUpdateConfiguration maxUnavailable 1 and maxSurge 0).
pub fn crd_schema_defaults(lws: &mut LeaderWorkerSet, flags: &Flags) {
    crate::crd::prune(lws, crd_release(flags));
    let spec = &mut lws.spec;
    spec.replicas.get_or_insert(1);
    spec.leader_worker_template.size.get_or_insert(1);
    if spec.startup_policy.is_empty() {
        spec.startup_policy = "LeaderCreated".into();
    }
    let rp = &mut spec.leader_worker_template.restart_policy;
    if rp.is_empty() {
        *rp = if flags.restart_policy_default_recreate {
            "RecreateGroupOnPodRestart".into()
        } else {
            "Default".into()
        };
    }
    if let Some(s) = spec.rollout_strategy.as_mut() {
        if s.type_.is_empty() {
            s.type_ = "RollingUpdate".into();
        }
        if let Some(ru) = s.rolling_update_configuration.as_mut() {
            ru.max_unavailable.get_or_insert(IntOrString::Int(1));
            ru.max_surge.get_or_insert(IntOrString::Int(0));
        }
    }
}

/// The CRD schema's enums, checked by the API server after the mutating webhooks and before the
/// validating ones (v0.3.0 and v0.4.1 declare no bounds).
pub fn validate_schema(lws: &LeaderWorkerSet, flags: &Flags) -> Result<(), String> {
    let mut errs = Vec::new();
    let spec = &lws.spec;
    check_enum(
        &mut errs,
        "spec.startupPolicy",
        &spec.startup_policy,
        &["LeaderCreated", "LeaderReady"],
    );
    check_enum(
        &mut errs,
        "spec.leaderWorkerTemplate.restartPolicy",
        &spec.leader_worker_template.restart_policy,
        restart_policies(flags),
    );
    if let Some(s) = &spec.rollout_strategy {
        check_enum(
            &mut errs,
            "spec.rolloutStrategy.type",
            &s.type_,
            &["RollingUpdate"],
        );
    }
    crate::crd::check_required_pod_fields(&mut errs, lws);
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

/// CRD schema pruning and defaults, then the mutating webhook (V3 lwswh:54-71, FX lwswh:54-86).
pub fn default_lws(lws: &mut LeaderWorkerSet, flags: &Flags) {
    crd_schema_defaults(lws, flags);
    let spec = &mut lws.spec;
    let rp = &mut spec.leader_worker_template.restart_policy;
    if flags.restart_policy_default_recreate && rp == "Default" {
        *rp = "None".into();
    }
    let strategy = spec
        .rollout_strategy
        .get_or_insert_with(RolloutStrategy::default);
    if strategy.type_.is_empty() {
        strategy.type_ = "RollingUpdate".into();
    }
    if strategy.type_ == "RollingUpdate" {
        let ru = strategy
            .rolling_update_configuration
            .get_or_insert_with(RollingUpdateConfiguration::default);
        ru.max_unavailable.get_or_insert(IntOrString::Int(1));
        ru.max_surge.get_or_insert(IntOrString::Int(0));
    }
    if flags.network_config {
        let nc = spec
            .network_config
            .get_or_insert_with(NetworkConfig::default);
        nc.subdomain_policy.get_or_insert_with(|| "Shared".into());
    }
}

fn validate_int_or_percent(v: &IntOrString, field: &str) -> Result<(), String> {
    match v {
        IntOrString::Int(i) if *i < 0 => Err(format!(
            "{field}: Invalid value: {i}: must be greater than or equal to 0"
        )),
        IntOrString::Int(_) => Ok(()),
        IntOrString::String(s) => {
            let pct = s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok());
            match pct {
                Some(p) if (0..=100).contains(&p) => Ok(()),
                Some(_) => Err(format!("{field}: Invalid value: {s:?}: must not be greater than 100%")),
                None => Err(format!("{field}: Invalid value: {s:?}: a valid percent string must be a numeric string followed by an ending '%'")),
            }
        }
    }
}

/// The CRD schema's enums, then `generalValidate` plus the update-only checks (V3
/// lwswh:84-161; FX lwswh:99-180).
pub fn validate_lws(
    lws: &LeaderWorkerSet,
    old: Option<&LeaderWorkerSet>,
    flags: &Flags,
) -> Result<(), String> {
    validate_schema(lws, flags)?;
    validate_webhook(lws, old, flags)
}

/// The validating webhook alone, `generalValidate` plus the update-only checks: what the API
/// server asks once the schema passed.
pub fn validate_webhook(
    lws: &LeaderWorkerSet,
    old: Option<&LeaderWorkerSet>,
    flags: &Flags,
) -> Result<(), String> {
    let replicas = lws.replicas();
    let size = lws.size();
    if replicas < 0 {
        return Err(format!(
            "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
        ));
    }
    if size < 1 {
        return Err(format!("spec.leaderWorkerTemplate.size: Invalid value: {size}: must be greater than or equal to 1"));
    }
    if i64::from(replicas) * i64::from(size) > i64::from(i32::MAX) {
        return Err("spec.replicas: Invalid value: the product of replicas and worker replicas must not exceed 2147483647".into());
    }
    let ru = lws.rolling_update();
    let mu = ru.max_unavailable.clone().unwrap_or(IntOrString::Int(1));
    let ms = ru.max_surge.clone().unwrap_or(IntOrString::Int(0));
    validate_int_or_percent(
        &mu,
        "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable",
    )?;
    validate_int_or_percent(
        &ms,
        "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge",
    )?;
    let mu_v = k8s::scaled_value(&mu, replicas, false)?;
    let ms_v = k8s::scaled_value(&ms, replicas, true)?;
    if mu_v == 0 && ms_v == 0 {
        return Err("spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: Invalid value: must not be 0 when `maxSurge` is 0".into());
    }
    if let Some(sgs) = lws
        .spec
        .leader_worker_template
        .sub_group_policy
        .as_ref()
        .and_then(|p| p.sub_group_size)
    {
        if sgs < 1 || sgs > size || (size % sgs != 0 && (size - 1) % sgs != 0) {
            return Err(format!("spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: {sgs}: size or size - 1 must be divisible by it, and it must not exceed size"));
        }
    } else if k8s::annotation(&lws.metadata, keys::SUBGROUP_EXCLUSIVE_TOPOLOGY).is_some() {
        return Err("metadata.annotations: Invalid value: subgroup-exclusive-topology requires a subGroupPolicy".into());
    }
    if let Some(old) = old {
        if old.spec.leader_worker_template.size != lws.spec.leader_worker_template.size {
            return Err("spec.leaderWorkerTemplate.size: Invalid value: field is immutable".into());
        }
        let sgp = |l: &LeaderWorkerSet| l.spec.leader_worker_template.sub_group_policy.clone();
        if sgp(old) != sgp(lws) {
            return Err(
                "spec.leaderWorkerTemplate.subGroupPolicy: Invalid value: field is immutable"
                    .into(),
            );
        }
        if flags.network_config {
            let had = old
                .spec
                .network_config
                .as_ref()
                .and_then(|n| n.subdomain_policy.as_ref())
                .is_some();
            let has = lws
                .spec
                .network_config
                .as_ref()
                .and_then(|n| n.subdomain_policy.as_ref())
                .is_some();
            if had && !has {
                return Err("spec.networkConfig.subdomainPolicy: Invalid value: cannot set subdomainPolicy to null".into());
            }
        }
    }
    Ok(())
}

/// The pod mutating webhook (objectSelector: the LWS name label exists). Errors reject the pod.
pub fn default_pod(pod: &mut Pod, flags: &Flags) -> Result<(), String> {
    if k8s::label(&pod.metadata, keys::SET_NAME).is_none() {
        return Ok(());
    }
    let size: i32 = k8s::annotation(&pod.metadata, keys::SIZE)
        .ok_or("pod is missing the leaderworkerset.sigs.k8s.io/size annotation")?
        .parse()
        .map_err(|_| "the size annotation is not an integer".to_string())?;
    let name = k8s::name(&pod.metadata).to_string();
    let namespace = k8s::namespace(&pod.metadata).to_string();
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    let is_leader = labels.get(keys::WORKER_INDEX).map(String::as_str) == Some("0");
    // Exclusive placement: (group key or subgroup key, topology key, label key) to inject.
    let mut exclusive: Vec<(String, String, &str)> = Vec::new();
    let unset = |labels: &BTreeMap<String, String>| {
        labels
            .get(keys::SUBGROUP_INDEX)
            .is_none_or(|v| v.is_empty())
    };
    if is_leader {
        if !labels.contains_key(keys::GROUP_INDEX) {
            let (_, ord) = k8s::parent_and_ordinal(&name)
                .ok_or_else(|| format!("pod name {name:?} has no ordinal"))?;
            labels.insert(keys::GROUP_INDEX.into(), ord.to_string());
        }
        let group_key = labels
            .entry(keys::GROUP_UNIQUE_HASH.into())
            .or_insert_with(|| crate::hash::group_key(&namespace, &name))
            .clone();
        // V3 podwh:113-123 = FX podwh:117-127: the group key and its exclusive terms.
        if let Some(topology) = annotations.get(keys::EXCLUSIVE_TOPOLOGY) {
            exclusive.push((group_key, topology.clone(), keys::GROUP_UNIQUE_HASH));
        }
        // V3 podwh:124-134 = FX podwh:128-138: the leader is always in subgroup 0.
        if annotations.contains_key(keys::SUBGROUP_SIZE) && unset(labels) {
            let key = crate::hash::group_key(&name, "0");
            labels.insert(keys::SUBGROUP_INDEX.into(), "0".into());
            labels.insert(keys::SUBGROUP_KEY.into(), key.clone());
            if let Some(topology) = annotations.get(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
                exclusive.push((key, topology.clone(), keys::SUBGROUP_KEY));
            }
        }
    } else {
        let (_, ord) = k8s::parent_and_ordinal(&name)
            .ok_or_else(|| format!("pod name {name:?} has no ordinal"))?;
        labels.insert(keys::WORKER_INDEX.into(), ord.to_string());
        // V3 podwh:141-155 = FX podwh:145-159: subgroup index and key of a worker.
        if let Some(sgs) = annotations
            .get(keys::SUBGROUP_SIZE)
            .filter(|_| unset(labels))
        {
            let sgs: i32 = sgs
                .parse()
                .map_err(|_| format!("strconv.Atoi: parsing {sgs:?}: invalid syntax"))?;
            if sgs < 1 {
                return Err(format!("subgroup size {sgs} must be at least 1")); // Go: divide by zero
            }
            let leader = annotations
                .get(keys::LEADER_POD_NAME)
                .cloned()
                .unwrap_or_default();
            let index = sub_group_index(size, sgs, ord);
            let key = crate::hash::group_key(&leader, &index);
            labels.insert(keys::SUBGROUP_INDEX.into(), index);
            labels.insert(keys::SUBGROUP_KEY.into(), key.clone());
            if let Some(topology) = annotations.get(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
                exclusive.push((key, topology.clone(), keys::SUBGROUP_KEY));
            }
        }
    }
    for (key, topology, label_key) in exclusive {
        // `SetExclusiveAffinities` is the same function at v0.3.0, v0.4.1 and v0.10.0.
        crate::v0_10_0::webhook::set_exclusive_affinities(pod, &key, &topology, label_key);
    }
    if flags.network_config
        && k8s::annotation(&pod.metadata, keys::SUBDOMAIN_POLICY) == Some("UniquePerReplica")
        && is_leader
    {
        pod.spec.get_or_insert_with(Default::default).subdomain = Some(name.clone());
    }
    // V3 podwh:158-163 = FX podwh:162-167: the TPU variables, then the LWS ones.
    if pod.spec.as_ref().is_some_and(tpu::pod_requests_tpus) {
        tpu::add_tpu_variables(pod, i64::from(size))?;
    }
    add_lws_env(pod, size, flags);
    Ok(())
}

/// `getSubGroupIndex` of v0.3.0 and v0.4.1 (pod_webhook.go): when `size - 1` divides, the leader
/// is the extra pod of subgroup 0, whether or not `size` divides too (v0.10.0 requires that it
/// does not).
pub fn sub_group_index(pod_count: i32, sub_group_size: i32, worker_index: i32) -> String {
    if (pod_count - 1) % sub_group_size == 0 {
        return ((worker_index - 1) / sub_group_size).to_string();
    }
    (worker_index / sub_group_size).to_string()
}

/// `AddLWSVariables`: V3 prepends and lets the user's value win; v0.4 puts the LWS variables
/// first and overrides the user's (FX podu:99-120). The leader address is
/// `<lws>-<group>.<subdomain>.<namespace>`, the subdomain being the LWS name at V3 and the pod's
/// `spec.subdomain` at FX.
fn add_lws_env(pod: &mut Pod, size: i32, flags: &Flags) {
    let group_index = k8s::label(&pod.metadata, keys::GROUP_INDEX)
        .unwrap_or("0")
        .to_string();
    let lws_name = k8s::label(&pod.metadata, keys::SET_NAME)
        .unwrap_or("")
        .to_string();
    let namespace = k8s::namespace(&pod.metadata).to_string();
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    // V3 names the headless Service after the LWS; FX reads `spec.subdomain` as it is (empty
    // when unset: `test-1..ns`; only a pod not made by a StatefulSet lacks one).
    let subdomain = if flags.network_config {
        spec.subdomain.clone().unwrap_or_default()
    } else {
        lws_name.clone()
    };
    let mut vars = vec![EnvVar {
        name: keys::LEADER_ADDRESS_ENV.into(),
        value: Some(format!("{lws_name}-{group_index}.{subdomain}.{namespace}")),
        value_from: None,
    }];
    if flags.network_config {
        vars.push(EnvVar {
            name: keys::GROUP_SIZE_ENV.into(),
            value: Some(size.to_string()),
            value_from: None,
        });
    }
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        let env = c.env.take().unwrap_or_default();
        let mut out = Vec::new();
        if flags.network_config {
            out.extend(vars.iter().cloned());
            out.extend(
                env.into_iter()
                    .filter(|e| !vars.iter().any(|v| v.name == e.name)),
            );
        } else {
            out.extend(
                vars.iter()
                    .filter(|v| !env.iter().any(|e| e.name == v.name))
                    .cloned(),
            );
            out.extend(env);
        }
        c.env = Some(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LeaderWorkerSetSpec;

    fn lws() -> LeaderWorkerSet {
        LeaderWorkerSet {
            spec: LeaderWorkerSetSpec::default(),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_differ_by_release() {
        // V3 lwswh:54-71 vs FX lwswh:54-86.
        let mut a = lws();
        default_lws(&mut a, &Flags::v0_3_0());
        assert_eq!(a.spec.leader_worker_template.restart_policy, "Default");
        assert_eq!(a.spec.network_config, None);
        let ru = a.rolling_update();
        assert_eq!(
            (ru.max_unavailable, ru.max_surge),
            (Some(IntOrString::Int(1)), Some(IntOrString::Int(0)))
        );
        let mut b = lws();
        b.spec.leader_worker_template.restart_policy = "Default".into();
        default_lws(&mut b, &Flags::v0_4_1());
        assert_eq!(b.spec.leader_worker_template.restart_policy, "None");
        assert_eq!(
            b.spec.network_config.unwrap().subdomain_policy.as_deref(),
            Some("Shared")
        );
    }

    #[test]
    fn validation_rejects_what_the_webhook_rejects() {
        let f = Flags::v0_3_0();
        let mut l = lws();
        default_lws(&mut l, &f);
        assert!(validate_lws(&l, None, &f).is_ok());
        let mut bad = l.clone();
        bad.spec.replicas = Some(-1);
        assert!(validate_lws(&bad, None, &f).is_err());
        let mut zero = l.clone();
        zero.spec
            .rollout_strategy
            .as_mut()
            .unwrap()
            .rolling_update_configuration
            .as_mut()
            .unwrap()
            .max_unavailable = Some(IntOrString::Int(0));
        assert!(validate_lws(&zero, None, &f)
            .unwrap_err()
            .contains("must not be 0"));
        let mut pct = l.clone();
        pct.spec
            .rollout_strategy
            .as_mut()
            .unwrap()
            .rolling_update_configuration
            .as_mut()
            .unwrap()
            .max_surge = Some(IntOrString::String("50".into()));
        assert!(validate_lws(&pct, None, &f).is_err());
        let mut resized = l.clone();
        resized.spec.leader_worker_template.size = Some(3);
        assert!(validate_lws(&resized, Some(&l), &f)
            .unwrap_err()
            .contains("immutable"));
    }

    fn admit(mut l: LeaderWorkerSet, f: &Flags) -> Result<LeaderWorkerSet, String> {
        default_lws(&mut l, f);
        validate_lws(&l, None, f).map(|()| l)
    }

    fn with_restart_policy(p: &str) -> LeaderWorkerSet {
        let mut l = lws();
        l.spec.leader_worker_template.restart_policy = p.into();
        l
    }

    #[test]
    fn enums_are_those_of_the_release_crd() {
        // test/integration/webhooks/leaderworkerset_test.go (v0.3.0 and v0.4.1): "creation with
        // invalid startpolicy should fail", "set restart policy should fail when value is
        // invalid", "set invalid rolloutStrategyType should be failed".
        for f in [Flags::v0_3_0(), Flags::v0_4_1()] {
            let mut l = lws();
            l.spec.startup_policy = "invalidValue".into();
            assert_eq!(
                admit(l, &f).unwrap_err(),
                r#"spec.startupPolicy: Unsupported value: "invalidValue": supported values: "LeaderCreated", "LeaderReady""#
            );
            assert!(admit(with_restart_policy("invalidValue"), &f)
                .unwrap_err()
                .starts_with(
                    r#"spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "invalidValue""#
                ));
            let mut l = lws();
            l.spec.rollout_strategy = Some(RolloutStrategy {
                type_: "invalidValue".into(),
                rolling_update_configuration: None,
            });
            assert!(admit(l, &f)
                .unwrap_err()
                .starts_with("spec.rolloutStrategy.type: Unsupported value"));
            // RecreateGroupAfterStart came with v0.7.0's CRD.
            assert!(admit(with_restart_policy("RecreateGroupAfterStart"), &f).is_err());
        }
        // `None` is v0.4.0's (types.go v0.4.1 enum); v0.3.0's CRD rejects it.
        assert_eq!(
            admit(with_restart_policy("None"), &Flags::v0_3_0()).unwrap_err(),
            r#"spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "None": supported values: "Default", "RecreateGroupOnPodRestart""#
        );
        // leaderworkerset_test.go (v0.4.1) "set restart policy should succeed" with None, and
        // "DeprecatedDefaultRestartPolicy will be shift to NoneRestartPolicy".
        let ok = admit(with_restart_policy("None"), &Flags::v0_4_1()).unwrap();
        assert_eq!(ok.spec.leader_worker_template.restart_policy, "None");
        let shifted = admit(with_restart_policy("Default"), &Flags::v0_4_1()).unwrap();
        assert_eq!(shifted.spec.leader_worker_template.restart_policy, "None");
        // leaderworkerset_test.go (v0.3.0) "defaulting logic applies when
        // leaderworkertemplate.restartpolicy is not set": the CRD default `Default`.
        let d = admit(lws(), &Flags::v0_3_0()).unwrap();
        assert_eq!(d.spec.leader_worker_template.restart_policy, "Default");
        // Two violations are reported together, as an aggregate.
        let mut both = with_restart_policy("X");
        both.spec.startup_policy = "Y".into();
        assert!(admit(both, &Flags::v0_3_0()).unwrap_err().starts_with('['));
    }

    #[test]
    fn fields_newer_than_the_release_crd_are_pruned() {
        let mut l = lws();
        l.spec.rollout_strategy = Some(RolloutStrategy {
            type_: "RollingUpdate".into(),
            rolling_update_configuration: Some(RollingUpdateConfiguration {
                max_unavailable: Some(IntOrString::Int(2)),
                max_surge: None,
                partition: Some(3),
            }),
        });
        l.spec.network_config = Some(NetworkConfig {
            subdomain_policy: Some("UniquePerReplica".into()),
        });
        let a = admit(l.clone(), &Flags::v0_3_0()).unwrap();
        let ru = a.rolling_update();
        assert_eq!(ru.partition, None, "partition is v0.7.0's");
        assert_eq!(ru.max_unavailable, Some(IntOrString::Int(2)));
        assert_eq!(ru.max_surge, Some(IntOrString::Int(0)), "CRD default");
        assert_eq!(a.spec.network_config, None, "networkConfig is v0.4.0's");
        let b = admit(l, &Flags::v0_4_1()).unwrap();
        assert_eq!(b.rolling_update().partition, None);
        assert_eq!(
            b.spec.network_config.unwrap().subdomain_policy.as_deref(),
            Some("UniquePerReplica")
        );
    }

    fn pod(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> Pod {
        let map = |kv: &[(&str, &str)]| {
            Some(
                kv.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        let mut p = Pod::default();
        p.metadata.name = Some(name.into());
        p.metadata.namespace = Some("ns".into());
        p.metadata.labels = map(labels);
        p.metadata.annotations = map(annotations);
        p.spec = Some(Default::default());
        p
    }

    fn label<'a>(p: &'a Pod, k: &str) -> Option<&'a str> {
        k8s::label(&p.metadata, k)
    }

    #[test]
    fn the_pod_webhook_sets_subgroup_labels() {
        for f in [Flags::v0_3_0(), Flags::v0_4_1()] {
            // test/integration/webhooks/pod_test.go (v0.3.0, v0.4.1): "Leader requests TPU
            // resources, expect subgroup labels in worker to be populated" (size 4, subgroup 2,
            // worker 3: subgroup 1) and "Leader doesn't request TPU resources, expect subgroup
            // labels in worker to be populated" (size 5, worker 4: the leader is the extra pod,
            // subgroup 1).
            for (size, name, index) in [("4", "test-1-3", "1"), ("5", "test-1-4", "1")] {
                let mut w = pod(
                    name,
                    &[(keys::SET_NAME, "test"), (keys::GROUP_INDEX, "1")],
                    &[
                        (keys::SIZE, size),
                        (keys::SUBGROUP_SIZE, "2"),
                        (keys::LEADER_POD_NAME, "test-1"),
                    ],
                );
                default_pod(&mut w, &f).unwrap();
                assert_eq!(label(&w, keys::SUBGROUP_INDEX), Some(index));
                assert_eq!(
                    label(&w, keys::SUBGROUP_KEY),
                    Some(crate::hash::group_key("test-1", index).as_str())
                );
            }
            // "Leader requests TPU resources, expect subgroup labels to be populated in leader".
            let mut l = pod(
                "test-1",
                &[(keys::SET_NAME, "test"), (keys::WORKER_INDEX, "0")],
                &[(keys::SIZE, "4"), (keys::SUBGROUP_SIZE, "2")],
            );
            default_pod(&mut l, &f).unwrap();
            assert_eq!(label(&l, keys::SUBGROUP_INDEX), Some("0"));
            assert_eq!(
                label(&l, keys::SUBGROUP_KEY),
                Some(crate::hash::group_key("test-1", "0").as_str())
            );
            // Without the annotation, no subgroup labels.
            let mut plain = pod(
                "test-1-1",
                &[(keys::SET_NAME, "test"), (keys::GROUP_INDEX, "1")],
                &[(keys::SIZE, "4")],
            );
            default_pod(&mut plain, &f).unwrap();
            assert_eq!(label(&plain, keys::SUBGROUP_INDEX), None);
        }
        // v0.3.0/v0.4.1 `getSubGroupIndex`: size 3, subgroup 1: size - 1 divides, so worker 2
        // is in subgroup 1 (v0.10.0 would say 2, as size divides too).
        assert_eq!(sub_group_index(3, 1, 2), "1");
        assert_eq!(crate::v0_10_0::webhook::get_sub_group_index(3, 1, 2), "2");
    }

    fn terms(p: &Pod) -> (usize, usize, Vec<String>) {
        let a = p.spec.as_ref().and_then(|s| s.affinity.as_ref());
        let aff = a
            .and_then(|a| a.pod_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .clone()
            })
            .unwrap_or_default();
        let anti = a
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .clone()
            })
            .unwrap_or_default();
        let topologies = aff.iter().map(|t| t.topology_key.clone()).collect();
        (aff.len(), anti.len(), topologies)
    }

    #[test]
    fn the_pod_webhook_injects_exclusive_affinities() {
        for f in [Flags::v0_3_0(), Flags::v0_4_1()] {
            // pod_test.go (v0.3.0, v0.4.1): "Leader pod with exclusive placement enabled have
            // pod affinity/anti-affinity".
            let mut l = pod(
                "test-sample-1",
                &[(keys::SET_NAME, "test-sample"), (keys::WORKER_INDEX, "0")],
                &[(keys::SIZE, "1"), (keys::EXCLUSIVE_TOPOLOGY, "topologyKey")],
            );
            default_pod(&mut l, &f).unwrap();
            assert_eq!(terms(&l), (1, 1, vec!["topologyKey".to_string()]));
            // "... will not re-apply exclusive terms".
            default_pod(&mut l, &f).unwrap();
            assert_eq!(terms(&l).0, 1);
            // "Leader pod with exclusive placement and subgroup exclusive placement enabled will
            // have two pod affinity/anti-affinity".
            let mut both = pod(
                "test-sample-1",
                &[(keys::SET_NAME, "test-sample"), (keys::WORKER_INDEX, "0")],
                &[
                    (keys::SIZE, "4"),
                    (keys::EXCLUSIVE_TOPOLOGY, "topologyKey"),
                    (keys::SUBGROUP_EXCLUSIVE_TOPOLOGY, "topologyKey-2"),
                    (keys::SUBGROUP_SIZE, "2"),
                ],
            );
            default_pod(&mut both, &f).unwrap();
            assert_eq!(terms(&both).0, 2);
            assert_eq!(terms(&both).1, 2);
            // "Worker pod with exclusive placement and subgroup exclusive placement enabled will
            // only have subgroup pod affinity/anti-affinity".
            let mut w = pod(
                "test-sample-1-1",
                &[(keys::SET_NAME, "test-sample"), (keys::GROUP_INDEX, "1")],
                &[
                    (keys::SIZE, "4"),
                    (keys::EXCLUSIVE_TOPOLOGY, "topologyKey"),
                    (keys::SUBGROUP_EXCLUSIVE_TOPOLOGY, "topologyKey-2"),
                    (keys::SUBGROUP_SIZE, "2"),
                ],
            );
            default_pod(&mut w, &f).unwrap();
            assert_eq!(terms(&w), (1, 1, vec!["topologyKey-2".to_string()]));
            // "Leader pod with exclusive placement disabled will not have pod
            // affinity/anti-affinity".
            let mut none = pod(
                "test-sample-1",
                &[(keys::SET_NAME, "test-sample"), (keys::WORKER_INDEX, "0")],
                &[(keys::SIZE, "1")],
            );
            default_pod(&mut none, &f).unwrap();
            assert_eq!(terms(&none), (0, 0, vec![]));
        }
    }

    /// test/testutils/wrappers.go at v0.3.0 and v0.4.1: `MakeWorkerPodSpec` (no TPU),
    /// `MakeWorkerPodSpecWithTPUResource` (requests and limits, subdomain `default`),
    /// `MakeLeaderPodSpecWithTPUResource` (limits, subdomain `default`) and
    /// `MakePodSpecWithInitContainer` (env key1, key2; subdomain `test-sample`).
    fn spec(which: &str) -> k8s_openapi::api::core::v1::PodSpec {
        let tpu = serde_json::json!({"google.com/tpu": "4"});
        let env = serde_json::json!([{"name": "key1", "value": "value1"}, {"name": "key2", "value": "value2"}]);
        serde_json::from_value(match which {
            "worker" => {
                serde_json::json!({"containers": [{"name": "leader", "image": "nginx:1.14.2",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]})
            }
            "worker-tpu" => {
                serde_json::json!({"containers": [{"name": "leader", "image": "nginx:1.14.2",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": tpu, "limits": tpu}}], "subdomain": "default"})
            }
            "leader-tpu" => {
                serde_json::json!({"containers": [{"name": "worker", "image": "busybox",
                "resources": {"limits": tpu}}], "subdomain": "default"})
            }
            "init" => {
                serde_json::json!({"containers": [{"name": "test", "image": "busybox", "env": env}],
                "initContainers": [{"name": "init-test", "image": "busybox", "env": env}],
                "subdomain": "test-sample"})
            }
            _ => unreachable!(),
        })
        .unwrap()
    }

    /// Each container's env as (name, value) pairs.
    fn envs(p: &Pod) -> Vec<Vec<(String, String)>> {
        let s = p.spec.as_ref().unwrap();
        let init = s.init_containers.iter().flatten();
        s.containers
            .iter()
            .chain(init)
            .map(|c| {
                c.env
                    .iter()
                    .flatten()
                    .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
                    .collect()
            })
            .collect()
    }

    /// `HasTPUEnvVarsPopulated` and `CheckTPUContainerHasCorrectEnvVars` (test/testutils/util.go
    /// at v0.3.0 and v0.4.1): the TPU variables of the first container, None when unset.
    fn tpu_vars(p: &Pod) -> Option<(String, String)> {
        let env = envs(p).into_iter().next()?;
        let get = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        Some((get(tpu::TPU_WORKER_HOSTNAMES)?, get(tpu::TPU_WORKER_ID)?))
    }

    const LRT: &str = tpu::LEADER_REQUESTS_TPUS_ANNOTATION_KEY;

    #[test]
    fn the_pod_webhook_injects_tpu_variables() {
        // test/integration/webhooks/pod_test.go, the TPU entries, at v0.4.1 (v0.3.0 line in
        // brackets). Hostnames are upstream's expected strings (spelled by `hosts`); TPU_WORKER_ID is what
        // `CheckTPUContainerHasCorrectEnvVars` computes for the case.
        let hosts = |leader: &str, from: i32, to: i32, sub: &str| {
            let mut h: Vec<String> = (from..=to).map(|i| format!("{leader}-{i}.{sub}")).collect();
            if from == 0 {
                h[0] = format!("{leader}.{sub}");
            }
            h.join(",")
        };
        type Case<'a> = (
            &'a str,
            &'a str,
            Vec<(&'a str, &'a str)>,
            Vec<(&'a str, &'a str)>,
            &'a str,
            Option<(String, &'a str)>,
        );
        let ws = |w: &'static str| {
            vec![
                (keys::SET_NAME, "test-sample"),
                (keys::WORKER_INDEX, w),
                (keys::GROUP_INDEX, "1"),
            ]
        };
        let ls = vec![(keys::SET_NAME, "test-sample"), (keys::WORKER_INDEX, "0")];
        let cases: Vec<Case> = vec![
            // :262 [262] Pod requesting TPUs which doesn't belong to LWS: no TPU env vars.
            (":262", "test-1", vec![], vec![], "worker-tpu", None),
            // :279 [279] Pod not requesting TPUs: none for leader pods.
            (
                ":279",
                "test-1",
                vec![(keys::SET_NAME, "test"), (keys::WORKER_INDEX, "0")],
                vec![(keys::SIZE, "2")],
                "worker",
                None,
            ),
            // :303 [303] ... nor for worker pods.
            (
                ":303",
                "test-1-2",
                vec![(keys::SET_NAME, "test"), (keys::GROUP_INDEX, "1")],
                vec![(keys::SIZE, "3")],
                "worker",
                None,
            ),
            // :327 [327] size 5, leader pod.
            (
                ":327",
                "test-sample-1",
                ls.clone(),
                vec![(keys::SIZE, "5")],
                "leader-tpu",
                Some((hosts("test-sample-1", 0, 4, "default"), "0")),
            ),
            // :392 [354] subgroupsize 5, leader pod: no leader-requests-tpus annotation on the
            // leader, so TPU_WORKER_ID is (0 - 1) % 5 = -1 at these tags.
            (
                ":392",
                "test-sample-1",
                ls.clone(),
                vec![(keys::SIZE, "5"), (keys::SUBGROUP_SIZE, "5")],
                "leader-tpu",
                Some((hosts("test-sample-1", 0, 4, "default"), "-1")),
            ),
            // :420 [382] worker pod, leader requests TPUs too.
            (
                ":420",
                "test-sample-1-3",
                ws("3"),
                vec![(keys::SIZE, "5"), (LRT, "true")],
                "worker-tpu",
                Some((hosts("test-sample-1", 0, 4, "default"), "3")),
            ),
            // :449 [411] worker pod using subgrouping, leader too (size 10, subgroup 0).
            (
                ":449",
                "test-sample-1-3",
                ws("3"),
                vec![
                    (keys::SIZE, "10"),
                    (LRT, "true"),
                    (keys::SUBGROUP_SIZE, "5"),
                ],
                "worker-tpu",
                Some((hosts("test-sample-1", 0, 4, "default"), "3")),
            ),
            // :479 [441] worker pod, leader doesn't.
            (
                ":479",
                "test-sample-1-3",
                ws("3"),
                vec![(keys::SIZE, "5")],
                "worker-tpu",
                Some((hosts("test-sample-1", 1, 4, "default"), "2")),
            ),
            // :507 [469] worker pod using subgrouping, leader doesn't (size 11, subgroup 1).
            (
                ":507",
                "test-sample-1-7",
                ws("7"),
                vec![(keys::SIZE, "11"), (keys::SUBGROUP_SIZE, "5")],
                "worker-tpu",
                Some((hosts("test-sample-1", 6, 10, "default"), "1")),
            ),
            // :536 [498] size 2, worker pod.
            (
                ":536",
                "test-sample-1-1",
                ws("1"),
                vec![(keys::SIZE, "2"), (LRT, "true")],
                "worker-tpu",
                Some((hosts("test-sample-1", 0, 1, "default"), "1")),
            ),
            // :565 [527] "size 0" (size 1), leader pod.
            (
                ":565",
                "test-sample-1",
                ls.clone(),
                vec![(keys::SIZE, "1")],
                "leader-tpu",
                Some((hosts("test-sample-1", 0, 0, "default"), "0")),
            ),
        ];
        for f in [Flags::v0_3_0(), Flags::v0_4_1()] {
            for (line, name, labels, annotations, which, want) in &cases {
                let mut p = pod(name, labels, annotations);
                p.spec = Some(spec(which));
                default_pod(&mut p, &f).unwrap();
                let want = want.as_ref().map(|(h, id)| (h.clone(), id.to_string()));
                assert_eq!(tpu_vars(&p), want, "pod_test.go{line} under {f:?}");
            }
        }
    }

    #[test]
    fn the_pod_webhook_subgroup_cases_with_tpus() {
        // pod_test.go (v0.4.1 and v0.3.0 at the same lines): :149 the leader requests TPUs
        // (size 5, subgroup 4): subgroup labels of the leader; :226 the leader doesn't (size 5,
        // subgroup 2, worker 4 with TPUs): subgroup 1. Upstream checks the labels only.
        for f in [Flags::v0_3_0(), Flags::v0_4_1()] {
            let mut l = pod(
                "test-1",
                &[(keys::SET_NAME, "test"), (keys::WORKER_INDEX, "0")],
                &[(keys::SIZE, "5"), (LRT, "true"), (keys::SUBGROUP_SIZE, "4")],
            );
            l.spec = Some(spec("leader-tpu"));
            default_pod(&mut l, &f).unwrap();
            assert_eq!(label(&l, keys::GROUP_INDEX), Some("1"));
            assert_eq!(label(&l, keys::SUBGROUP_INDEX), Some("0"));
            let mut w = pod(
                "test-1-4",
                &[
                    (keys::SET_NAME, "test"),
                    (keys::WORKER_INDEX, "4"),
                    (keys::GROUP_INDEX, "1"),
                ],
                &[(keys::SIZE, "5"), (keys::SUBGROUP_SIZE, "2")],
            );
            w.spec = Some(spec("worker-tpu"));
            default_pod(&mut w, &f).unwrap();
            assert_eq!(label(&w, keys::SUBGROUP_INDEX), Some("1"));
            // Not asserted upstream: what the TPU code makes of them.
            assert_eq!(
                tpu_vars(&l),
                Some((
                    "test-1.default,test-1-1.default,test-1-2.default,test-1-3.default".into(),
                    "0".into()
                ))
            );
            assert_eq!(
                tpu_vars(&w),
                Some(("test-1-3.default,test-1-4.default".into(), "1".into()))
            );
        }
    }

    #[test]
    fn the_pod_webhook_tpu_subdomain_and_lws_env() {
        // pod_test.go@v0.4.1:354 (not at v0.3.0): a leader requesting TPUs with subdomainPolicy
        // UniquePerReplica has its own subdomain in the hostnames and the leader address.
        let mut p = pod(
            "test-sample-1",
            &[(keys::SET_NAME, "test-sample"), (keys::WORKER_INDEX, "0")],
            &[
                (keys::SIZE, "5"),
                (keys::SUBDOMAIN_POLICY, "UniquePerReplica"),
            ],
        );
        p.spec = Some(spec("leader-tpu"));
        let mut v3 = p.clone();
        default_pod(&mut p, &Flags::v0_4_1()).unwrap();
        let hosts = "test-sample-1.test-sample-1,test-sample-1-1.test-sample-1,test-sample-1-2.test-sample-1,test-sample-1-3.test-sample-1,test-sample-1-4.test-sample-1";
        assert_eq!(tpu_vars(&p), Some((hosts.into(), "0".into())));
        let env = &envs(&p)[0];
        let leader_address = (
            keys::LEADER_ADDRESS_ENV.to_string(),
            "test-sample-1.test-sample-1.ns".to_string(),
        );
        assert!(env.contains(&leader_address));
        assert!(env.contains(&(keys::GROUP_SIZE_ENV.to_string(), "5".to_string())));
        // v0.4.1's LWS variables come first, the TPU ones after them.
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "LWS_LEADER_ADDRESS",
                "LWS_GROUP_SIZE",
                "TPU_WORKER_HOSTNAMES",
                "TPU_WORKER_ID"
            ]
        );
        // v0.3.0 has no subdomainPolicy: the pod keeps its subdomain, and only the leader
        // address is prepended.
        default_pod(&mut v3, &Flags::v0_3_0()).unwrap();
        assert!(tpu_vars(&v3)
            .unwrap()
            .0
            .starts_with("test-sample-1.default,"));
        let names: Vec<String> = envs(&v3)[0].iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            names,
            [
                "LWS_LEADER_ADDRESS",
                "TPU_WORKER_HOSTNAMES",
                "TPU_WORKER_ID"
            ]
        );

        // A pod without a subdomain (pod_test.go@v0.4.1:279, made by hand, not by a
        // StatefulSet): v0.4.1 writes the empty subdomain, v0.3.0 the LWS name.
        for (f, want) in [
            (Flags::v0_4_1(), "test-1..ns"),
            (Flags::v0_3_0(), "test-1.test.ns"),
        ] {
            let mut l = pod(
                "test-1",
                &[(keys::SET_NAME, "test"), (keys::WORKER_INDEX, "0")],
                &[(keys::SIZE, "2")],
            );
            l.spec = Some(spec("worker"));
            default_pod(&mut l, &f).unwrap();
            assert_eq!(
                envs(&l)[0][0],
                (keys::LEADER_ADDRESS_ENV.to_string(), want.to_string())
            );
        }

        // pod_test.go@v0.4.1:771 "Leader env var should be populated and leader address env
        // should be the first env var" (v0.3.0:733 "Leader address env var should be populated
        // and is the first env var", without LWS_GROUP_SIZE), in containers and init
        // containers alike.
        for (f, want) in [
            (
                Flags::v0_4_1(),
                vec!["LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "key1", "key2"],
            ),
            (Flags::v0_3_0(), vec!["LWS_LEADER_ADDRESS", "key1", "key2"]),
        ] {
            let mut w = pod(
                "test-sample-1-1",
                &[
                    (keys::SET_NAME, "test-sample"),
                    (keys::WORKER_INDEX, "1"),
                    (keys::GROUP_INDEX, "1"),
                ],
                &[(keys::SIZE, "2")],
            );
            w.spec = Some(spec("init"));
            default_pod(&mut w, &f).unwrap();
            for env in envs(&w) {
                assert_eq!(env[0].1, "test-sample-1.test-sample.ns");
                let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
                assert_eq!(names, want);
                if let Some((_, size)) = env.iter().find(|(k, _)| k == keys::GROUP_SIZE_ENV) {
                    assert_eq!(size, "2");
                }
            }
        }
    }
}
