//! TPU environment variables and annotations of v0.10.0: `pkg/utils/accelerators/tpu.go` at tag
//! v0.10.0. The pod webhook calls `add_tpu_variables` for a pod that requests `google.com/tpu`
//! (`pod_webhook.go`); the pod controller calls `add_tpu_annotations` on the worker template
//! (`pod_controller.go`). Everything a function reads comes from the pod itself: its name, the
//! worker-index and subgroup-index labels, the size, subgroup-size and leader-requests-tpus
//! annotations and `spec.subdomain`.
//!
//! Against v0.3.0/v0.4.1 (`crate::tpu`): every container requesting TPUs gets the variables (the
//! older tags: the first one only), with `TPU_NAME`, `TPU_PROCESS_ADDRESSES` and
//! `TPU_PROCESS_PORT`; in a subgroup, a worker whose leader requests no TPUs counts its subgroup
//! from worker 1, and the leader no longer gets `TPU_WORKER_ID=-1`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::utils::{get_env_var_value_if_in_container, get_parent_name_and_ordinal};
use crate::api::keys;
use crate::k8s;

/// `TpuResourceName` (tpu.go@v0.10.0).
pub const TPU_RESOURCE_NAME: &str = "google.com/tpu";
/// `TpuWorkerHostNames`.
pub const TPU_WORKER_HOSTNAMES: &str = "TPU_WORKER_HOSTNAMES";
/// `TpuProcessAddresses` (not at v0.3.0/v0.4.1).
pub const TPU_PROCESS_ADDRESSES: &str = "TPU_PROCESS_ADDRESSES";
/// `TpuProcessPortName` (not at v0.3.0/v0.4.1).
pub const TPU_PROCESS_PORT_NAME: &str = "TPU_PROCESS_PORT";
/// `TpuProcessDefaultPort` (not at v0.3.0/v0.4.1).
pub const TPU_PROCESS_DEFAULT_PORT: i64 = 8476;
/// `TpuWorkerId`.
pub const TPU_WORKER_ID: &str = "TPU_WORKER_ID";
/// `TpuName` (not at v0.3.0/v0.4.1).
pub const TPU_NAME: &str = "TPU_NAME";
/// `LeaderRequestsTPUsAnnotationKey`: set on worker pods whose leader requests TPUs.
pub const LEADER_REQUESTS_TPUS_ANNOTATION_KEY: &str =
    "leaderworkerset.sigs.k8s.io/leader-requests-tpus";

/// The most hostnames one pod's `TPU_WORKER_HOSTNAMES` may list here: the simulator's
/// `LWS_PODS_MAX`. Upstream has no bound (a size annotation of two billion makes it build the
/// list until it runs out of memory); a pod that would need more is rejected
/// (docs/fidelity.md, "TPU environment variables").
pub const HOSTNAMES_MAX: i64 = 100_000;

/// `PodRequestsTPUs` (tpu.go@v0.10.0; the same at v0.3.0 and v0.4.1): a container or init
/// container requests TPUs.
pub fn pod_requests_tpus(spec: &PodSpec) -> bool {
    containers_request_tpus(&spec.containers)
        || containers_request_tpus(spec.init_containers.iter().flatten())
}

/// `numTPUsRequested` (tpu.go@v0.10.0; the same at v0.3.0 and v0.4.1): the non-zero
/// `google.com/tpu` limit, else the non-zero request, else 0.
pub fn num_tpus_requested(container: &Container) -> i64 {
    let resources = container.resources.as_ref();
    let non_zero = |list: Option<&BTreeMap<String, Quantity>>| {
        list.and_then(|l| l.get(TPU_RESOURCE_NAME))
            .filter(|q| !quantity_is_zero(q))
            .map(quantity_value)
    };
    non_zero(resources.and_then(|r| r.limits.as_ref()))
        .or_else(|| non_zero(resources.and_then(|r| r.requests.as_ref())))
        .unwrap_or(0)
}

/// `ContainersRequestTPUs` (tpu.go@v0.10.0; `containersRequestTPUs` at v0.3.0 and v0.4.1): any
/// of the containers requests TPUs.
pub fn containers_request_tpus<'a>(containers: impl IntoIterator<Item = &'a Container>) -> bool {
    containers.into_iter().any(|c| num_tpus_requested(c) != 0)
}

/// `getContainersRequestingTPUs` (tpu.go@v0.10.0): the containers, then the init containers,
/// that request TPUs.
pub fn get_containers_requesting_tpus(spec: &mut PodSpec) -> Vec<&mut Container> {
    let init = spec.init_containers.iter_mut().flatten();
    spec.containers
        .iter_mut()
        .chain(init)
        .filter(|c| containers_request_tpus([&**c]))
        .collect()
}

/// `getContainerRequestingTPUs` (tpu.go@v0.10.0): the first of `getContainersRequestingTPUs`.
pub fn get_container_requesting_tpus(spec: &mut PodSpec) -> Option<&mut Container> {
    get_containers_requesting_tpus(spec).into_iter().next()
}

/// What `addTPUVariablesSubGroup` and `AddTPUVariables` read from the pod's metadata.
pub(crate) struct TpuPodInfo {
    pub name: String,
    /// The worker-index label ("" when absent, as Go's map read).
    pub worker_index: String,
    /// The subgroup-index label.
    pub sub_group_index: String,
    /// The leader-requests-tpus annotation is `"true"`.
    pub leader_requests_tpus: bool,
    pub subdomain: String,
}

impl TpuPodInfo {
    pub(crate) fn of(pod: &Pod) -> TpuPodInfo {
        let label = |k: &str| k8s::label(&pod.metadata, k).unwrap_or("").to_string();
        TpuPodInfo {
            name: k8s::name(&pod.metadata).to_string(),
            worker_index: label(keys::WORKER_INDEX),
            sub_group_index: label(keys::SUBGROUP_INDEX),
            leader_requests_tpus: k8s::annotation(
                &pod.metadata,
                LEADER_REQUESTS_TPUS_ANNOTATION_KEY,
            ) == Some("true"),
            subdomain: pod
                .spec
                .as_ref()
                .and_then(|s| s.subdomain.clone())
                .unwrap_or_default(),
        }
    }
}

/// `addTPUVariablesSubGroup` (tpu.go@v0.10.0): the variables of a pod whose LWS has a
/// `subGroupPolicy`, for the first container requesting TPUs. The hostnames are those of the
/// pod's subgroup; `TPU_WORKER_ID` is the pod's index in it.
pub fn add_tpu_variables_sub_group(pod: &mut Pod) -> Result<(), String> {
    let info = TpuPodInfo::of(pod);
    let sub_group_size_annotation = k8s::annotation(&pod.metadata, keys::SUBGROUP_SIZE_V0_10)
        .unwrap_or("")
        .to_string();
    let Some(container) = pod.spec.as_mut().and_then(get_container_requesting_tpus) else {
        return Ok(());
    };
    if has_tpu_variables(container) {
        // The assumption is that the other variables were added too.
        return Ok(());
    }
    let mut leader_name = info.name.clone();
    let sub_group_size = atoi(&sub_group_size_annotation)?;
    let mut sub_group_index = atoi(&info.sub_group_index)?;
    let worker_index = atoi(&info.worker_index)?;
    if sub_group_size == 0 {
        return Err(DIVIDE_BY_ZERO.into());
    }
    let mut tpu_worker_id = worker_index.wrapping_rem(sub_group_size);
    if worker_index != 0 && !info.leader_requests_tpus {
        // The leader is no TPU worker: workers count from 1.
        let from_one = worker_index.wrapping_sub(1);
        tpu_worker_id = from_one.wrapping_rem(sub_group_size);
        sub_group_index = from_one.wrapping_div(sub_group_size);
    }
    let (port_in_container, port) =
        get_env_var_value_if_in_container(container, TPU_PROCESS_PORT_NAME);
    let port = if port_in_container {
        port
    } else {
        TPU_PROCESS_DEFAULT_PORT.to_string()
    };
    let mut start = sub_group_size.wrapping_mul(sub_group_index).wrapping_add(1);
    let mut end = sub_group_size.wrapping_mul(sub_group_index.wrapping_add(1));
    let subdomain = &info.subdomain;
    let mut hostnames = Vec::new();
    let mut addresses = Vec::new();
    if info.worker_index == "0" {
        // The leader requests TPUs (it is here), so it is the subgroup's first host.
        hostnames.push(format!("{leader_name}.{subdomain}"));
        addresses.push(format!("{leader_name}.{subdomain}:{port}"));
        end = end.wrapping_sub(1);
    } else {
        let (parent, _) = get_parent_name_and_ordinal(&info.name);
        if parent.is_empty() {
            return Err(format!("parsing parent name from pod {}", info.name));
        }
        leader_name = parent.to_string();
        if info.leader_requests_tpus && sub_group_index == 0 {
            // Subgroup 0 holds the leader, which requests TPUs: the list shifts left by one.
            end = end.wrapping_sub(1);
            hostnames.push(format!("{leader_name}.{subdomain}"));
            addresses.push(format!("{leader_name}.{subdomain}:{port}"));
        } else if info.leader_requests_tpus {
            // So does every later subgroup.
            start = start.wrapping_sub(1);
            end = end.wrapping_sub(1);
        }
    }
    check_hostnames(end.saturating_sub(start).saturating_add(1))?;
    for i in start..=end {
        hostnames.push(format!("{leader_name}-{i}.{subdomain}"));
        addresses.push(format!("{leader_name}-{i}.{subdomain}:{port}"));
    }
    let env = container.env.get_or_insert_with(Vec::new);
    env.extend([
        env_var(TPU_WORKER_HOSTNAMES, hostnames.join(",")),
        env_var(TPU_WORKER_ID, tpu_worker_id.to_string()),
        env_var(TPU_NAME, leader_name),
        env_var(TPU_PROCESS_ADDRESSES, addresses.join(",")),
    ]);
    if !port_in_container {
        env.push(env_var(TPU_PROCESS_PORT_NAME, port));
    }
    Ok(())
}

/// `AddTPUVariables` (tpu.go@v0.10.0): `TPU_WORKER_HOSTNAMES`, `TPU_WORKER_ID`, `TPU_NAME`,
/// `TPU_PROCESS_ADDRESSES` and (unless the container sets it) `TPU_PROCESS_PORT`, appended to
/// every container requesting TPUs. Each such container is one TPU worker: the group's hosts
/// are listed once per container (the leader's only if it requests TPUs, assuming it has as
/// many TPU containers as this pod), container `i` of worker `w` is worker `w * n + i`, and
/// container `i` listens on 8476 + i unless it sets `TPU_PROCESS_PORT`. With a subgroup-size
/// annotation, `addTPUVariablesSubGroup` instead.
pub fn add_tpu_variables(pod: &mut Pod, size: i64) -> Result<(), String> {
    if k8s::annotation(&pod.metadata, keys::SUBGROUP_SIZE_V0_10).is_some() {
        return add_tpu_variables_sub_group(pod);
    }
    let info = TpuPodInfo::of(pod);
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let mut containers = get_containers_requesting_tpus(spec);
    let n = containers.len() as i64;
    if n == 0 || has_tpu_variables(containers[0]) {
        // The assumption is that the other variables were added too.
        return Ok(());
    }
    let (leader_pod_name, pod_worker_index) = if info.worker_index == "0" {
        // A leader here requests TPUs, and is TPU worker 0.
        (info.name.clone(), 0)
    } else {
        let (parent, ordinal) = get_parent_name_and_ordinal(&info.name);
        if parent.is_empty() {
            return Err(format!("parsing parent name from pod {}", info.name));
        }
        // A leader without TPUs is no TPU worker: the workers count from 0.
        let shift = i64::from(!info.leader_requests_tpus);
        (parent.to_string(), i64::from(ordinal) - shift)
    };
    let ports: Vec<String> = containers
        .iter()
        .zip(0..)
        .map(
            |(c, i)| match get_env_var_value_if_in_container(c, TPU_PROCESS_PORT_NAME) {
                (true, port) => port,
                // Not set by the user: the default, one port per container.
                (false, _) => (TPU_PROCESS_DEFAULT_PORT + i).to_string(),
            },
        )
        .collect();
    let subdomain = &info.subdomain;
    let leader_listed = info.leader_requests_tpus || info.worker_index == "0";
    let pods = size.saturating_sub(1).max(0) + i64::from(leader_listed);
    check_hostnames(pods.saturating_mul(n))?;
    let mut hostnames = Vec::new();
    let mut addresses = Vec::new();
    let mut add_host = |host: String| {
        for port in &ports {
            addresses.push(format!("{host}:{port}"));
            hostnames.push(host.clone());
        }
    };
    if leader_listed {
        add_host(format!("{leader_pod_name}.{subdomain}"));
    }
    for i in 1..size {
        add_host(format!("{leader_pod_name}-{i}.{subdomain}"));
    }
    let (hostnames, addresses) = (hostnames.join(","), addresses.join(","));
    for (c, i) in containers.iter_mut().zip(0..) {
        let tpu_worker_id = pod_worker_index.wrapping_mul(n).wrapping_add(i);
        let (port_in_container, _) = get_env_var_value_if_in_container(c, TPU_PROCESS_PORT_NAME);
        let env = c.env.get_or_insert_with(Vec::new);
        env.extend([
            env_var(TPU_WORKER_HOSTNAMES, hostnames.clone()),
            env_var(TPU_WORKER_ID, tpu_worker_id.to_string()),
            env_var(TPU_NAME, leader_pod_name.clone()),
            env_var(TPU_PROCESS_ADDRESSES, addresses.clone()),
        ]);
        if !port_in_container {
            env.push(env_var(TPU_PROCESS_PORT_NAME, ports[i as usize].clone()));
        }
    }
    Ok(())
}

/// `AddTPUAnnotations` (tpu.go@v0.10.0; the same at v0.3.0 and v0.4.1): mark the worker pod
/// template when the leader requests TPUs.
pub fn add_tpu_annotations(leader_pod: &Pod, annotations: &mut BTreeMap<String, String>) {
    if leader_pod.spec.as_ref().is_some_and(pod_requests_tpus) {
        annotations.insert(LEADER_REQUESTS_TPUS_ANNOTATION_KEY.into(), "true".into());
    }
}

/// The early return of every tag's injection: the container already has `TPU_WORKER_HOSTNAMES`
/// or `TPU_WORKER_ID` (the webhook ran before, or the user set them).
pub(crate) fn has_tpu_variables(container: &Container) -> bool {
    container
        .env
        .iter()
        .flatten()
        .any(|e| e.name == TPU_WORKER_HOSTNAMES || e.name == TPU_WORKER_ID)
}

pub(crate) fn env_var(name: &str, value: String) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value),
        value_from: None,
    }
}

/// Go's runtime panic for `x % 0`; the webhook answers with an error (a subgroup size of 0 only
/// reaches it on a hand-made pod: the LWS webhook refuses `subGroupSize < 1`).
pub(crate) const DIVIDE_BY_ZERO: &str = "runtime error: integer divide by zero";

/// `HOSTNAMES_MAX`, checked before the list is built.
pub(crate) fn check_hostnames(count: i64) -> Result<(), String> {
    if count > HOSTNAMES_MAX {
        return Err(format!(
            "{count} TPU worker hostnames is more than {HOSTNAMES_MAX} (the simulator's limit)"
        ));
    }
    Ok(())
}

/// `strconv.Atoi` on a 64-bit platform: an optional sign and decimal digits; its error text.
pub(crate) fn atoi(s: &str) -> Result<i64, String> {
    s.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.Atoi: parsing {s:?}: {why}")
    })
}

/// The number and the multiplier of a quantity string (`resource.ParseQuantity`'s grammar:
/// sign, digits with an optional point, then a decimal-SI suffix `n u m k M G T P E`, a binary
/// one `Ki` .. `Ei`, or an exponent `e3`/`E-2`). None for a string that is not a quantity.
fn parse_quantity(q: &Quantity) -> Option<(f64, f64)> {
    let s = q.0.trim();
    let end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '+' || *c == '-'))))
        .map_or(s.len(), |(i, _)| i);
    let (number, suffix) = s.split_at(end);
    let number: f64 = number.parse().ok()?;
    let binary = |p: i32| Some(2f64.powi(p));
    let multiplier = match suffix {
        "" => Some(1.0),
        "n" => Some(1e-9),
        "u" => Some(1e-6),
        "m" => Some(1e-3),
        "k" => Some(1e3),
        "M" => Some(1e6),
        "G" => Some(1e9),
        "T" => Some(1e12),
        "P" => Some(1e15),
        "E" => Some(1e18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            Some(10f64.powi(exp.parse::<i32>().ok()?))
        }
    }?;
    Some((number, multiplier))
}

/// `resource.Quantity.IsZero`: a string that is not a quantity (the API server refuses such a
/// pod) counts as zero.
fn quantity_is_zero(q: &Quantity) -> bool {
    parse_quantity(q).is_none_or(|(n, _)| n == 0.0)
}

/// `resource.Quantity.Value`: the value rounded up to an integer (`500m` is 1, `1Ki` 1024).
fn quantity_value(q: &Quantity) -> i64 {
    parse_quantity(q).map_or(0, |(n, m)| (n * m).ceil() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity(s.to_string())
    }

    #[test]
    fn quantities_read_as_go_reads_them() {
        for (s, zero, value) in [
            ("4", false, 4),
            ("0", true, 0),
            ("0.0", true, 0),
            ("500m", false, 1),
            ("0m", true, 0),
            ("1Ki", false, 1024),
            ("2e3", false, 2000),
            ("+1", false, 1),
            ("lots", true, 0),
        ] {
            assert_eq!(quantity_is_zero(&q(s)), zero, "{s}");
            assert_eq!(quantity_value(&q(s)), value, "{s}");
        }
    }

    #[test]
    fn atoi_errors_are_go_s() {
        assert_eq!(atoi("+7"), Ok(7));
        assert_eq!(
            atoi("").unwrap_err(),
            r#"strconv.Atoi: parsing "": invalid syntax"#
        );
        assert_eq!(
            atoi("99999999999999999999").unwrap_err(),
            r#"strconv.Atoi: parsing "99999999999999999999": value out of range"#
        );
    }

    #[test]
    fn absurd_sizes_are_refused_not_built() {
        let mut p: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "a-0", "labels": {(keys::WORKER_INDEX): "0"}},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"google.com/tpu": "1"}}}]}
        }))
        .unwrap();
        assert!(add_tpu_variables(&mut p, 2_000_000_000)
            .unwrap_err()
            .contains("simulator's limit"));
        let annotations = p.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(keys::SUBGROUP_SIZE_V0_10.into(), "2000000000".into());
        let labels = p.metadata.labels.get_or_insert_with(BTreeMap::new);
        labels.insert(keys::SUBGROUP_INDEX.into(), "0".into());
        assert!(add_tpu_variables(&mut p, 2)
            .unwrap_err()
            .contains("simulator's limit"));
        annotations_of(&mut p).insert(keys::SUBGROUP_SIZE_V0_10.into(), "0".into());
        assert_eq!(add_tpu_variables(&mut p, 2).unwrap_err(), DIVIDE_BY_ZERO);
    }

    fn annotations_of(p: &mut Pod) -> &mut BTreeMap<String, String> {
        p.metadata.annotations.get_or_insert_with(BTreeMap::new)
    }
}
