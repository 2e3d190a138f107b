//! The LWS defaulting and validating webhooks and the pod mutating webhook (lws
//! `pkg/webhooks/leaderworkerset_webhook.go`, `pod_webhook.go` at v0.3.0 and 84da957), with
//! the CRD schema defaults the API server applies before them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{
    keys, LeaderWorkerSet, NetworkConfig, RollingUpdateConfiguration, RolloutStrategy,
};
use crate::k8s;
use crate::profile::Flags;

/// CRD schema defaults, then the mutating webhook.
pub fn default_lws(lws: &mut LeaderWorkerSet, flags: &Flags) {
    let spec = &mut lws.spec;
    spec.replicas.get_or_insert(1);
    spec.leader_worker_template.size.get_or_insert(1);
    if spec.startup_policy.is_empty() {
        spec.startup_policy = "LeaderCreated".into();
    }
    let rp = &mut spec.leader_worker_template.restart_policy;
    if flags.restart_policy_default_recreate {
        if rp.is_empty() {
            *rp = "RecreateGroupOnPodRestart".into();
        } else if rp == "Default" {
            *rp = "None".into();
        }
    } else if rp.is_empty() {
        *rp = "Default".into();
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

/// `generalValidate` plus the update-only checks (V3 lwswh:84-161; FX lwswh:99-180).
pub fn validate_lws(
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
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    let is_leader = labels.get(keys::WORKER_INDEX).map(String::as_str) == Some("0");
    if is_leader {
        if !labels.contains_key(keys::GROUP_INDEX) {
            let (_, ord) = k8s::parent_and_ordinal(&name)
                .ok_or_else(|| format!("pod name {name:?} has no ordinal"))?;
            labels.insert(keys::GROUP_INDEX.into(), ord.to_string());
        }
        labels
            .entry(keys::GROUP_UNIQUE_HASH.into())
            .or_insert_with(|| crate::hash::group_key(&namespace, &name));
    } else {
        let (_, ord) = k8s::parent_and_ordinal(&name)
            .ok_or_else(|| format!("pod name {name:?} has no ordinal"))?;
        labels.insert(keys::WORKER_INDEX.into(), ord.to_string());
    }
    if flags.network_config
        && k8s::annotation(&pod.metadata, keys::SUBDOMAIN_POLICY) == Some("UniquePerReplica")
        && is_leader
    {
        pod.spec.get_or_insert_with(Default::default).subdomain = Some(name.clone());
    }
    add_lws_env(pod, size, flags);
    Ok(())
}

/// `AddLWSVariables`: V3 prepends and lets the user's value win; v0.4 puts the LWS variables
/// first and overrides the user's (FX podu:99-120).
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
    let subdomain = if flags.network_config {
        spec.subdomain.clone().unwrap_or_else(|| lws_name.clone())
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
}
