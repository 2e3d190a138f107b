//! The small utilities of v0.10.0: `pkg/utils/utils.go` (`NonZeroValue`, `SortByIndex`),
//! `pkg/utils/statefulset/statefulset_utils.go` (`StatefulsetReady`, `GetParentNameAndOrdinal`),
//! `pkg/utils/pod/pod_utils.go` (`ContainerRestarted`, `PodDeleted`, `LeaderPod`,
//! `PodRunningAndReady`, `GetEnvVarValueIfInContainer`), `pkg/utils/controller/controller_utils.go`
//! (`CreateHeadlessServiceIfNotExists`, `GetPVCApplyConfiguration`), `pkg/controllers/metadata.go`
//! (`mergeMetadata`). `pkg/utils/accelerators/tpu.go` is `tpu`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimSpec, Pod, Service, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Client, Resource, Result};
use crate::k8s;
use crate::profile::{Flags, WorkerStsReady};

/// `NonZeroValue`.
pub fn non_zero_value(v: i32) -> i32 {
    v.max(0)
}

/// `SortByIndex`: `items` placed at their index in a list of `length` slots; an item without
/// a parseable index, or with one out of range, is dropped.
pub fn sort_by_index<K: Resource>(items: Vec<Arc<K>>, length: i32) -> Vec<Option<Arc<K>>> {
    let mut out = vec![None; usize::try_from(length).unwrap_or(0)];
    for item in items {
        let index = k8s::label(item.meta(), keys::GROUP_INDEX).and_then(|v| v.parse::<i32>().ok());
        if let Some(i) = index.filter(|i| (0..length).contains(i)) {
            out[i as usize] = Some(item);
        }
    }
    out
}

/// `StatefulsetReady`: `spec.replicas == status.availableReplicas` (PR #705) and the current
/// revision is the update revision. `worker-sts-ready=exists` re-enables bug B14 (the count of
/// existing pods); `terminating-pods=not-ready` (the proposed Z02 fix) also asks every pod to
/// be an updated, non-terminating one.
pub fn statefulset_ready(sts: &StatefulSet, flags: &Flags) -> bool {
    let default = StatefulSetStatus::default();
    let st = sts.status.as_ref().unwrap_or(&default);
    let want = sts.spec.replicas.unwrap_or(1);
    let counted = match flags.worker_sts_ready {
        WorkerStsReady::Available => st.available_replicas.unwrap_or(0),
        WorkerStsReady::Exists => st.replicas,
    };
    let ready = want == counted && st.current_revision == st.update_revision;
    ready && !(flags.terminating_not_ready && st.updated_replicas.unwrap_or(0) != want)
}

/// `PodRunningAndReady`; with `terminating-pods=not-ready` (Z02) a terminating pod is not.
pub fn pod_running_and_ready(pod: &Pod, flags: &Flags) -> bool {
    k8s::is_running_and_ready(pod)
        && !(flags.terminating_not_ready && k8s::is_terminating(&pod.metadata))
}

/// `ContainerRestarted`: Running or Pending with any (init) container restarted.
pub fn container_restarted(pod: &Pod) -> bool {
    k8s::container_restarted(pod)
}

/// `PodDeleted`: the pod has a deletion timestamp.
pub fn pod_deleted(pod: &Pod) -> bool {
    k8s::is_terminating(&pod.metadata)
}

/// `LeaderPod`: worker index 0.
pub fn leader_pod(pod: &Pod) -> bool {
    k8s::label(&pod.metadata, keys::WORKER_INDEX) == Some("0")
}

/// `GetParentNameAndOrdinal`: `("", -1)` when the name has no ordinal.
pub fn get_parent_name_and_ordinal(name: &str) -> (&str, i32) {
    k8s::parent_and_ordinal(name).unwrap_or(("", -1))
}

/// `mergeMetadata`: the user's map overlaid with the controller's; None when both are empty.
pub fn merge_metadata(
    user: Option<&BTreeMap<String, String>>,
    controller: BTreeMap<String, String>,
) -> Option<BTreeMap<String, String>> {
    let mut merged = user.cloned().unwrap_or_default();
    if merged.is_empty() && controller.is_empty() {
        return None;
    }
    merged.extend(controller);
    Some(merged)
}

/// `CreateHeadlessServiceIfNotExists`: a headless Service named `name` selecting `selector`,
/// labelled with the LWS name, controlled by `owner`; never updated.
pub async fn create_headless_service_if_not_exists<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    name: &str,
    selector: BTreeMap<String, String>,
    owner: OwnerReference,
) -> Result<()> {
    match c.get::<Service>(lws.namespace(), name).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    let svc = Service {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(lws.namespace().to_string()),
            labels: Some([(keys::SET_NAME.to_string(), lws.name().to_string())].into()),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".into()),
            selector: Some(selector),
            publish_not_ready_addresses: Some(true),
            ..Default::default()
        }),
        status: None,
    };
    c.create(svc).await.map(|_| ())
}

/// `GetPVCApplyConfiguration`: each volume claim template reduced to name, access modes,
/// storage class, volume mode and resources.
pub fn get_pvc_apply_configuration(lws: &LeaderWorkerSet) -> Vec<PersistentVolumeClaim> {
    let templates = lws
        .spec
        .leader_worker_template
        .volume_claim_templates
        .iter();
    templates
        .flatten()
        .map(|pvc| {
            let spec = pvc.spec.clone().unwrap_or_default();
            PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: pvc.metadata.name.clone(),
                    namespace: Some(lws.namespace().to_string()),
                    ..Default::default()
                },
                spec: Some(PersistentVolumeClaimSpec {
                    access_modes: spec.access_modes,
                    storage_class_name: spec.storage_class_name,
                    volume_mode: spec.volume_mode,
                    resources: spec.resources,
                    ..Default::default()
                }),
                status: None,
            }
        })
        .collect()
}

/// `GetEnvVarValueIfInContainer` (`pkg/utils/pod/pod_utils.go`@v0.10.0): whether the container
/// sets the variable, and its `value` ("" when it has none).
pub fn get_env_var_value_if_in_container(c: &Container, env_var_name: &str) -> (bool, String) {
    match c.env.iter().flatten().find(|e| e.name == env_var_name) {
        Some(e) => (true, e.value.clone().unwrap_or_default()),
        None => (false, String::new()),
    }
}
