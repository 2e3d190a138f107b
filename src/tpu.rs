//! TPU environment variables and annotations of v0.3.0 and v0.4.1: `pkg/utils/accelerators/tpu.go`
//! at both tags, which differ only in `addTPUVariablesSubGroup`'s unused `size` parameter
//! (dropped in v0.4.1). The pod webhook calls `add_tpu_variables` for a pod that requests
//! `google.com/tpu` (V3 podwh:158-163, FX podwh:162-167); the pod controller calls
//! `add_tpu_annotations` on the worker template (V3 podc:289, FX podc:298). Everything a
//! function reads comes from the pod itself: its name, the worker-index and subgroup-index
//! labels, the size, `leaderworkerset.gke.io/subgroup-size` and leader-requests-tpus
//! annotations and `spec.subdomain`.
//!
//! Only `TPU_WORKER_HOSTNAMES` and `TPU_WORKER_ID`, in the first container requesting TPUs;
//! v0.10.0 (`crate::v0_10_0::tpu`) adds more variables and containers.

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};

use crate::api::keys;
use crate::k8s;
use crate::v0_10_0::tpu::{
    atoi, check_hostnames, containers_request_tpus, env_var, has_tpu_variables, TpuPodInfo,
    DIVIDE_BY_ZERO,
};
use crate::v0_10_0::utils::get_parent_name_and_ordinal;

/// `PodRequestsTPUs`, `numTPUsRequested`, `containersRequestTPUs` and `AddTPUAnnotations` of
/// tpu.go@v0.3.0 and v0.4.1: the same functions at v0.10.0 (where `containersRequestTPUs` is
/// exported), as are the constants these tags have.
pub use crate::v0_10_0::tpu::{
    add_tpu_annotations, num_tpus_requested, pod_requests_tpus,
    LEADER_REQUESTS_TPUS_ANNOTATION_KEY, TPU_RESOURCE_NAME, TPU_WORKER_HOSTNAMES, TPU_WORKER_ID,
};

/// `getContainerRequestingTPUs` (tpu.go@v0.3.0, v0.4.1): the first container, else init
/// container, that requests TPUs ("only one container on a pod will be requesting TPU
/// resource").
pub fn get_container_requesting_tpus(spec: &mut PodSpec) -> Option<&mut Container> {
    let init = spec.init_containers.iter_mut().flatten();
    spec.containers
        .iter_mut()
        .chain(init)
        .find(|c| containers_request_tpus([&**c]))
}

/// `addTPUVariablesSubGroup` (tpu.go@v0.4.1; at v0.3.0 it also takes the group size, unused):
/// the variables of a pod with a `leaderworkerset.gke.io/subgroup-size` annotation. The
/// hostnames are those of the pod's subgroup (by its subgroup-index label); `TPU_WORKER_ID` is
/// the worker index modulo the subgroup size, minus one first when the pod carries no
/// leader-requests-tpus annotation, which is so for the leader itself: a leader with a subgroup
/// gets `TPU_WORKER_ID=-1` at these tags (fixed by v0.10.0).
pub fn add_tpu_variables_sub_group(pod: &mut Pod) -> Result<(), String> {
    let info = TpuPodInfo::of(pod);
    let sub_group_size_annotation = k8s::annotation(&pod.metadata, keys::SUBGROUP_SIZE)
        .unwrap_or("")
        .to_string();
    let Some(container) = pod.spec.as_mut().and_then(get_container_requesting_tpus) else {
        return Ok(());
    };
    if has_tpu_variables(container) {
        // The assumption is that the other variable was added too.
        return Ok(());
    }
    let mut leader_name = info.name.clone();
    let sub_group_size = atoi(&sub_group_size_annotation)?;
    let sub_group_index = atoi(&info.sub_group_index)?;
    let worker_index = atoi(&info.worker_index)?;
    if sub_group_size == 0 {
        return Err(DIVIDE_BY_ZERO.into());
    }
    let mut tpu_worker_id = worker_index.wrapping_rem(sub_group_size);
    if !info.leader_requests_tpus {
        tpu_worker_id = worker_index.wrapping_sub(1).wrapping_rem(sub_group_size);
    }
    let mut start = sub_group_size.wrapping_mul(sub_group_index).wrapping_add(1);
    let mut end = sub_group_size.wrapping_mul(sub_group_index.wrapping_add(1));
    let subdomain = &info.subdomain;
    let mut hostnames = Vec::new();
    if info.worker_index == "0" {
        // The leader requests TPUs (it is here), so it is the subgroup's first host.
        hostnames.push(format!("{leader_name}.{subdomain}"));
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
        } else if info.leader_requests_tpus {
            // So does every later subgroup.
            start = start.wrapping_sub(1);
            end = end.wrapping_sub(1);
        }
    }
    check_hostnames(end.saturating_sub(start).saturating_add(1))?;
    for i in start..=end {
        hostnames.push(format!("{leader_name}-{i}.{subdomain}"));
    }
    container.env.get_or_insert_with(Vec::new).extend([
        env_var(TPU_WORKER_HOSTNAMES, hostnames.join(",")),
        env_var(TPU_WORKER_ID, tpu_worker_id.to_string()),
    ]);
    Ok(())
}

/// `AddTPUVariables` (tpu.go@v0.3.0, v0.4.1): `TPU_WORKER_HOSTNAMES` (the leader, if it requests
/// TPUs, then workers 1 .. size-1, as `<leader>[-i].<subdomain>`) and `TPU_WORKER_ID` (the
/// worker index, minus one when the leader requests none), appended to the first container
/// requesting TPUs. With a subgroup-size annotation, `addTPUVariablesSubGroup` instead.
pub fn add_tpu_variables(pod: &mut Pod, size: i64) -> Result<(), String> {
    if k8s::annotation(&pod.metadata, keys::SUBGROUP_SIZE).is_some() {
        return add_tpu_variables_sub_group(pod);
    }
    let info = TpuPodInfo::of(pod);
    let Some(container) = pod.spec.as_mut().and_then(get_container_requesting_tpus) else {
        return Ok(());
    };
    if has_tpu_variables(container) {
        // The assumption is that the other variable was added too.
        return Ok(());
    }
    let subdomain = &info.subdomain;
    let mut leader_name = info.name.clone();
    let mut tpu_worker_id = 0;
    let mut hostnames = Vec::new();
    let leader_listed = info.worker_index == "0" || info.leader_requests_tpus;
    if info.worker_index != "0" {
        let (parent, ordinal) = get_parent_name_and_ordinal(&info.name);
        if parent.is_empty() {
            return Err(format!("parsing parent name from pod {}", info.name));
        }
        leader_name = parent.to_string();
        tpu_worker_id = i64::from(ordinal);
        if !info.leader_requests_tpus {
            // The leader is no TPU worker: the workers' ids shift down by one.
            tpu_worker_id -= 1;
        }
    }
    // A leader here requests TPUs and is TPU worker 0; so is a worker's leader that does.
    check_hostnames(size.saturating_sub(1).max(0) + i64::from(leader_listed))?;
    if leader_listed {
        hostnames.push(format!("{leader_name}.{subdomain}"));
    }
    for i in 1..size {
        hostnames.push(format!("{leader_name}-{i}.{subdomain}"));
    }
    container.env.get_or_insert_with(Vec::new).extend([
        env_var(TPU_WORKER_HOSTNAMES, hostnames.join(",")),
        env_var(TPU_WORKER_ID, tpu_worker_id.to_string()),
    ]);
    Ok(())
}

#[cfg(test)]
mod tests {
    //! `pkg/utils/accelerators/tpu_test.go` at v0.4.1 (v0.3.0's has the same cases, with the
    //! subgroup cases' unused `size`), each case citing its line.

    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::EnvVar;
    use serde_json::{json, Value};

    use super::*;

    /// tpu_test.go's `MakeLeaderPodSpecWithTPUResource`.
    fn tpu_spec() -> Value {
        json!({
            "containers": [{"name": "worker", "image": "busybox",
                            "resources": {"limits": {"google.com/tpu": "4"}}}],
            "subdomain": "default"
        })
    }

    /// tpu_test.go's `MakeLeaderPodSpecWithTPUResourceMultipleContainers`.
    fn tpu_spec_two_containers() -> Value {
        json!({
            "containers": [
                {"name": "worker", "image": "busybox",
                 "resources": {"limits": {"google.com/tpu": "4"}}},
                {"name": "leader", "image": "nginx:1.14.2",
                 "ports": [{"containerPort": 8080, "protocol": "TCP"}]}
            ],
            "subdomain": "default"
        })
    }

    fn pod(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> Pod {
        let map = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default",
                         "labels": map(labels), "annotations": map(annotations)},
            "spec": tpu_spec()
        }))
        .unwrap()
    }

    /// The first container's env, as the Go tests read it (`Env[0]`, `Env[1]`).
    fn env(p: &Pod) -> Vec<(String, String)> {
        let c = &p.spec.as_ref().unwrap().containers[0];
        let e: &[EnvVar] = c.env.as_deref().unwrap_or_default();
        e.iter()
            .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
            .collect()
    }

    fn tpu_env(hostnames: &str, id: &str) -> Vec<(String, String)> {
        vec![
            (TPU_WORKER_HOSTNAMES.into(), hostnames.into()),
            (TPU_WORKER_ID.into(), id.into()),
        ]
    }

    #[test]
    fn add_tpu_variables_table() {
        // TestAddTPUVariables (tpu_test.go@v0.4.1:30, the same at v0.3.0).
        let cases = [
            // :40 Worker Index is 0
            (
                pod("test-sample-1", &[(keys::WORKER_INDEX, "0")], &[]),
                1,
                "test-sample-1.default",
                "0",
            ),
            // :57 Worker Index is non-zero, size is above 2
            (
                pod(
                    "test-sample-1-3",
                    &[(keys::WORKER_INDEX, "3")],
                    &[(LEADER_REQUESTS_TPUS_ANNOTATION_KEY, "true")],
                ),
                5,
                "test-sample-1.default,test-sample-1-1.default,test-sample-1-2.default,test-sample-1-3.default,test-sample-1-4.default",
                "3",
            ),
        ];
        for (mut p, size, hostnames, id) in cases {
            add_tpu_variables(&mut p, size).unwrap();
            assert_eq!(env(&p), tpu_env(hostnames, id), "{:?}", p.metadata.name);
        }
    }

    #[test]
    fn add_tpu_variables_sub_group_table() {
        // TestAddTPUVariablesSubGroup (tpu_test.go@v0.4.1:103; v0.3.0:103).
        let cases = [
            // :111 Leader requests TPU resources
            (
                pod(
                    "test-sample-1-3",
                    &[(keys::WORKER_INDEX, "3"), (keys::SUBGROUP_INDEX, "0")],
                    &[
                        (LEADER_REQUESTS_TPUS_ANNOTATION_KEY, "true"),
                        (keys::SUBGROUP_SIZE, "5"),
                    ],
                ),
                "3",
                "test-sample-1.default,test-sample-1-1.default,test-sample-1-2.default,test-sample-1-3.default,test-sample-1-4.default",
            ),
            // :131 Leader requests TPU resources, worker with subgroup index > 0
            (
                pod(
                    "test-sample-1-7",
                    &[(keys::WORKER_INDEX, "7"), (keys::SUBGROUP_INDEX, "1")],
                    &[
                        (LEADER_REQUESTS_TPUS_ANNOTATION_KEY, "true"),
                        (keys::SUBGROUP_SIZE, "4"),
                    ],
                ),
                "3",
                "test-sample-1-4.default,test-sample-1-5.default,test-sample-1-6.default,test-sample-1-7.default",
            ),
            // :151 Leader does not request TPU resources, worker with subgroup index > 0
            (
                pod(
                    "test-sample-1-5",
                    &[(keys::WORKER_INDEX, "5"), (keys::SUBGROUP_INDEX, "1")],
                    &[(keys::SUBGROUP_SIZE, "4")],
                ),
                "0",
                "test-sample-1-5.default,test-sample-1-6.default,test-sample-1-7.default,test-sample-1-8.default",
            ),
        ];
        for (mut p, id, hostnames) in cases {
            add_tpu_variables_sub_group(&mut p).unwrap();
            assert_eq!(env(&p), tpu_env(hostnames, id), "{:?}", p.metadata.name);
        }
    }

    #[test]
    fn get_container_requesting_tpus_table() {
        // TestGetContainerRequestingTPUs (tpu_test.go@v0.4.1:186): :193 single container with
        // TPU resource, :206 multiple containers, one with TPU resource, :219 container without.
        let mut one: PodSpec = serde_json::from_value(tpu_spec()).unwrap();
        let mut two: PodSpec = serde_json::from_value(tpu_spec_two_containers()).unwrap();
        let mut none: PodSpec =
            serde_json::from_value(json!({"containers": [{"name": "worker", "image": "busybox"}]}))
                .unwrap();
        let expected: Container = serde_json::from_value(json!({
            "name": "worker", "image": "busybox",
            "resources": {"limits": {"google.com/tpu": "4"}}
        }))
        .unwrap();
        assert_eq!(
            get_container_requesting_tpus(&mut one),
            Some(&mut expected.clone())
        );
        assert_eq!(
            get_container_requesting_tpus(&mut two),
            Some(&mut expected.clone())
        );
        assert_eq!(get_container_requesting_tpus(&mut none), None);
    }

    #[test]
    fn injection_is_skipped_once_done_and_leaves_other_containers() {
        let mut p = pod("test-sample-1", &[(keys::WORKER_INDEX, "0")], &[]);
        add_tpu_variables(&mut p, 3).unwrap();
        let once = p.clone();
        add_tpu_variables(&mut p, 3).unwrap();
        assert_eq!(
            p, once,
            "a second call (the webhook on UPDATE) changes nothing"
        );
        let mut two = pod("test-sample-1", &[(keys::WORKER_INDEX, "0")], &[]);
        two.spec = Some(serde_json::from_value(tpu_spec_two_containers()).unwrap());
        add_tpu_variables(&mut two, 2).unwrap();
        let containers = &two.spec.as_ref().unwrap().containers;
        assert_eq!(containers[0].env.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            containers[1].env, None,
            "only the first TPU container at these tags"
        );
    }

    #[test]
    fn errors_are_upstream_s() {
        let mut p = pod("test-sample-1", &[], &[(keys::SUBGROUP_SIZE, "x")]);
        assert_eq!(
            add_tpu_variables(&mut p, 2).unwrap_err(),
            r#"strconv.Atoi: parsing "x": invalid syntax"#
        );
        let mut p = pod("nameless", &[(keys::WORKER_INDEX, "1")], &[]);
        assert_eq!(
            add_tpu_variables(&mut p, 2).unwrap_err(),
            "parsing parent name from pod nameless"
        );
    }
}
