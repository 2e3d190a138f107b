//! `pkg/schedulerprovider` at v0.10.0 (`interface.go`, `volcano_provider.go`) and the
//! `utils.CalculatePGMinResources` it calls (`pkg/utils/utils.go` v0.10.0:83-104), with
//! `resourcehelper.PodRequests` (`k8s.io/component-helpers` v0.36.3, `resource/helpers.go`:
//! `PodRequests`, `AggregateContainerRequests`, `addResourceList`, `maxResourceList`) and
//! `quotav1.Add` (`k8s.io/apiserver` `pkg/quota/v1/resources.go`).
//!
//! Configured by `gangSchedulingManagement.schedulerProvider` in the manager's Configuration
//! (cmd/main.go v0.10.0:217-226); here the profile flag `gang-scheduling=volcano`. Unset, as in
//! a default install, the pod controller and the pod webhook never call it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Client, Result};
use crate::k8s;
use crate::quantity::Quantity;
use crate::volcano::{self, PodGroup, PodGroupSpec};

/// `VolcanoAnnotationPrefix`: LWS annotations a PodGroup inherits.
const VOLCANO_ANNOTATION_PREFIX: &str = "volcano.sh/";

/// `GetPodGroupName` (`PodGroupNameFmt = "%s-%s-%s"`): `<lws>-<group index>-<revision>`.
pub fn get_pod_group_name(lws_name: &str, group_index: &str, revision: &str) -> String {
    format!("{lws_name}-{group_index}-{revision}")
}

/// `VolcanoProvider.InjectPodGroupMetadata`, called by the pod webhook for every LWS pod.
pub fn inject_pod_group_metadata(pod: &mut Pod) {
    let label = |k| k8s::label(&pod.metadata, k).unwrap_or("").to_string();
    let name = get_pod_group_name(
        &label(keys::SET_NAME),
        &label(keys::GROUP_INDEX),
        &label(keys::TEMPLATE_REVISION_HASH),
    );
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(volcano::KUBE_GROUP_NAME_ANNOTATION_KEY.to_string(), name);
}

/// `VolcanoProvider.CreatePodGroupIfNotExists`, called by the pod controller for a leader pod
/// that is not being deleted: the PodGroup the leader's annotation names, created (controlled
/// by the leader pod) when the cache has none.
pub async fn create_pod_group_if_not_exists<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    leader_pod: &Pod,
) -> Result<()> {
    let pg_name = k8s::annotation(
        &leader_pod.metadata,
        volcano::KUBE_GROUP_NAME_ANNOTATION_KEY,
    )
    .unwrap_or("");
    match c.get::<PodGroup>(lws.namespace(), pg_name).await {
        Ok(_) => return Ok(()),
        Err(e) if !e.is_not_found() => return Err(e),
        Err(_) => {}
    }
    let label = |k| {
        k8s::label(&leader_pod.metadata, k)
            .unwrap_or("")
            .to_string()
    };
    let labels = BTreeMap::from([
        (keys::SET_NAME.to_string(), lws.name().to_string()),
        (keys::GROUP_INDEX.to_string(), label(keys::GROUP_INDEX)),
        (
            keys::TEMPLATE_REVISION_HASH.to_string(),
            label(keys::TEMPLATE_REVISION_HASH),
        ),
    ]);
    let mut pg = PodGroup {
        metadata: ObjectMeta {
            name: Some(pg_name.to_string()),
            namespace: Some(lws.namespace().to_string()),
            labels: Some(labels),
            annotations: Some(inherit_volcano_annotations(lws)),
            owner_references: Some(vec![k8s::controller_ref("v1", "Pod", &leader_pod.metadata)]),
            ..Default::default()
        },
        spec: PodGroupSpec {
            min_member: Some(lws.size()),
            min_resources: Some(calculate_pg_min_resources(lws)),
            ..Default::default()
        },
        ..Default::default()
    };
    // LeaderReady schedules the leader alone first; minResources still counts the whole group.
    if lws.spec.startup_policy == "LeaderReady" {
        pg.spec.min_member = Some(1);
    }
    if let Some(queue) = k8s::annotation(&lws.metadata, volcano::QUEUE_NAME_ANNOTATION_KEY) {
        // Go's `omitempty`: an empty queue name is not sent, and the CRD's default applies.
        pg.spec.queue = Some(queue.to_string()).filter(|q| !q.is_empty());
    }
    c.create(pg).await?;
    Ok(())
}

/// `inheritVolcanoAnnotations`: the LWS's `volcano.sh/` annotations.
fn inherit_volcano_annotations(lws: &LeaderWorkerSet) -> BTreeMap<String, String> {
    lws.metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| k.starts_with(VOLCANO_ANNOTATION_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A resource list while it is summed: each quantity parsed once, printed at the end.
type Resources = BTreeMap<String, Quantity>;

/// `CalculatePGMinResources`: the leader's requests plus `size - 1` workers'.
pub fn calculate_pg_min_resources(lws: &LeaderWorkerSet) -> BTreeMap<String, K8sQuantity> {
    let spec_of =
        |t: &k8s_openapi::api::core::v1::PodTemplateSpec| t.spec.clone().unwrap_or_default();
    let mut total = pod_requests(&spec_of(lws.leader_template()));
    let worker_count = lws.size() - 1;
    if worker_count > 0 {
        let worker = pod_requests(&spec_of(&lws.spec.leader_worker_template.worker_template));
        for _ in 0..worker_count {
            total = quota_add(&total, &worker);
        }
    }
    total
        .into_iter()
        .map(|(k, q)| (k, K8sQuantity(q.to_string())))
        .collect()
}

/// `resourcehelper.PodRequests` with empty options: the containers' requests summed, the init
/// containers' by the sidecar formula (a restartable one runs beside what follows it), the
/// larger of the two; pod-level cpu and memory requests replace the containers'; overhead added.
/// A quantity that does not parse counts as zero (the API server refused it on the pod).
fn pod_requests(spec: &PodSpec) -> Resources {
    let mut reqs = Resources::new();
    for c in &spec.containers {
        add_resource_list(&mut reqs, &requests(c.resources.as_ref()));
    }
    let mut restartable = Resources::new();
    let mut init = Resources::new();
    for c in spec.init_containers.iter().flatten() {
        let mut container = requests(c.resources.as_ref());
        if c.restart_policy.as_deref() == Some("Always") {
            add_resource_list(&mut reqs, &container);
            add_resource_list(&mut restartable, &container);
            container = restartable.clone();
        } else {
            let mut tmp = Resources::new();
            add_resource_list(&mut tmp, &container);
            add_resource_list(&mut tmp, &restartable);
            container = tmp;
        }
        max_resource_list(&mut init, &container);
    }
    max_resource_list(&mut reqs, &init);
    let pod_level = parse_list(spec.resources.as_ref().and_then(|r| r.requests.as_ref()));
    for (name, q) in pod_level {
        // `IsSupportedPodLevelResource`: cpu, memory and hugepages.
        if name == "cpu" || name == "memory" || name.starts_with("hugepages-") {
            reqs.insert(name, q);
        }
    }
    add_resource_list(&mut reqs, &parse_list(spec.overhead.as_ref()));
    reqs
}

fn requests(r: Option<&k8s_openapi::api::core::v1::ResourceRequirements>) -> Resources {
    parse_list(r.and_then(|r| r.requests.as_ref()))
}

fn parse_list(list: Option<&BTreeMap<String, K8sQuantity>>) -> Resources {
    list.into_iter()
        .flatten()
        .map(|(k, q)| (k.clone(), Quantity::parse(&q.0).unwrap_or(Quantity::ZERO)))
        .collect()
}

/// `addResourceList`: each quantity of `new` added to the list's (in the list's format).
fn add_resource_list(list: &mut Resources, new: &Resources) {
    for (name, q) in new {
        list.entry(name.clone())
            .and_modify(|v| *v = *v + *q)
            .or_insert(*q);
    }
}

/// `maxResourceList`: each quantity the larger of the two (a tie keeps the list's).
fn max_resource_list(list: &mut Resources, new: &Resources) {
    for (name, q) in new {
        match list.get(name) {
            Some(v) if q.cmp_value(v).is_le() => {}
            _ => {
                list.insert(name.clone(), *q);
            }
        }
    }
}

/// `quotav1.Add`: a new list, every name of either, summed in `a`'s format where both have it.
fn quota_add(a: &Resources, b: &Resources) -> Resources {
    let mut result = a.clone();
    add_resource_list(&mut result, b);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lws(
        size: i32,
        leader: Option<serde_json::Value>,
        worker: serde_json::Value,
    ) -> LeaderWorkerSet {
        let mut t = json!({"size": size, "workerTemplate": {"spec": worker}});
        if let Some(l) = leader {
            t["leaderTemplate"] = json!({"spec": l});
        }
        serde_json::from_value(json!({
            "apiVersion": crate::api::API_VERSION, "kind": "LeaderWorkerSet",
            "metadata": {"name": "lws", "namespace": "ns"},
            "spec": {"replicas": 1, "leaderWorkerTemplate": t}
        }))
        .unwrap()
    }

    fn container(requests: serde_json::Value) -> serde_json::Value {
        json!({"name": "c", "image": "i", "resources": {"requests": requests}})
    }

    fn min_resources(l: &LeaderWorkerSet) -> BTreeMap<String, String> {
        calculate_pg_min_resources(l)
            .into_iter()
            .map(|(k, q)| (k, q.0))
            .collect()
    }

    fn want(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn min_resources_count_the_leader_and_every_worker() {
        // utils_test.go TestCalculatePGMinResources (v0.10.0): leader template given.
        let leader = json!({"containers": [container(json!({"cpu": "1", "memory": "1Gi"}))]});
        let worker = json!({"containers": [container(json!({"cpu": "2", "memory": "2Gi"}))]});
        let l = lws(3, Some(leader), worker.clone());
        assert_eq!(min_resources(&l), want(&[("cpu", "5"), ("memory", "5Gi")]));
        // No leader template: the worker template counts for the leader too.
        let l = lws(2, None, worker);
        assert_eq!(min_resources(&l), want(&[("cpu", "4"), ("memory", "4Gi")]));
        // Size 1: the leader alone; no requests at all: an empty list.
        let l = lws(
            1,
            None,
            json!({"containers": [container(json!({"cpu": "500m"}))]}),
        );
        assert_eq!(min_resources(&l), want(&[("cpu", "500m")]));
        let l = lws(
            4,
            None,
            json!({"containers": [{"name": "c", "image": "i"}]}),
        );
        assert!(min_resources(&l).is_empty());
    }

    #[test]
    fn init_containers_count_by_the_sidecar_formula() {
        // An ordinary init container runs alone: max(containers, init); a sidecar (restartPolicy
        // Always) runs beside the containers and every later init container.
        let spec = json!({
            "initContainers": [
                {"name": "side", "image": "i", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "1"}}},
                {"name": "init", "image": "i", "resources": {"requests": {"cpu": "4"}}}
            ],
            "containers": [container(json!({"cpu": "2"}))]
        });
        let l = lws(1, None, spec);
        // containers 2 + sidecar 1 = 3; init 4 + sidecar 1 = 5: the larger.
        assert_eq!(min_resources(&l), want(&[("cpu", "5")]));
    }

    #[test]
    fn the_webhook_names_the_group_of_set_index_and_revision() {
        // webhooks/pod_test.go v0.10.0:913: "test-0-1".
        let mut pod: Pod = serde_json::from_value(json!({"metadata": {"name": "test-pod-0",
            "labels": {keys::SET_NAME: "test", keys::GROUP_INDEX: "0", keys::TEMPLATE_REVISION_HASH: "1"}}}))
        .unwrap();
        inject_pod_group_metadata(&mut pod);
        let got = k8s::annotation(&pod.metadata, volcano::KUBE_GROUP_NAME_ANNOTATION_KEY);
        assert_eq!(got, Some("test-0-1"));
    }
}
