//! `pkg/controllers/pod_controller.go` at v0.10.0: the restart policy for every LWS pod, and
//! for a leader its per-replica Service and its group's worker StatefulSet, created only when
//! missing from the template of the leader's own revision.
//!
//! With `gang-scheduling=volcano` the scheduler provider creates each leader's `PodGroup`
//! (`super::scheduler_provider`); unset, as in a default install, it is nil.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, StatefulSet, StatefulSetOrdinals, StatefulSetSpec,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::lws_controller::{subdomain_policy, CREATE, DELETE};
use super::revision::{self as rev, get_revision_key};
use super::scheduler_provider;
use super::utils;
use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Action, Client, Error, Propagation, Related, Result};
use crate::k8s;
use crate::profile::{Flags, GangScheduling};
use crate::restart_guard;

const RECREATE_ON_RESTART: &str = "RecreateGroupOnPodRestart";
const RECREATE_AFTER_START: &str = "RecreateGroupAfterStart";

/// `Reconcile`.
pub async fn reconcile<C: Client>(
    c: &C,
    flags: &Flags,
    namespace: &str,
    name: &str,
) -> Result<Action> {
    let pod = match c.get::<Pod>(namespace, name).await {
        Ok(p) => p,
        Err(e) if e.is_not_found() => return Ok(Action::done()),
        Err(e) => return Err(e),
    };
    let lws_name = k8s::label(&pod.metadata, keys::SET_NAME).unwrap_or("");
    if lws_name.is_empty() {
        return Err(Error::internal(
            "leaderworkerset.sigs.k8s.io/name label is unexpected missing",
        ));
    }
    if k8s::label(&pod.metadata, keys::WORKER_INDEX).is_none() {
        return Err(Error::internal(
            "leaderworkerset.sigs.k8s.io/worker-index label is unexpected missing",
        ));
    }
    let lws = match c.get::<LeaderWorkerSet>(namespace, lws_name).await {
        Ok(l) => Some(l),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e),
    };
    if flags.worker_finalizer && restart_guard::awaits_release(&pod) {
        // Not upstream: the Z05 fix. The restart policy sees the deleted worker, then lets it go.
        if let Some(lws) = &lws {
            // A leader already gone (a group scaled away) leaves nothing to recreate.
            restart_guard::ignore_not_found(handle_restart_policy(c, &pod, lws, false).await)?;
        }
        restart_guard::release(c, &pod).await?;
        return Ok(Action::done());
    }
    let Some(lws) = lws else {
        return Ok(Action::done());
    };
    if handle_restart_policy(c, &pod, &lws, false).await? {
        return Ok(Action::done());
    }
    if !utils::leader_pod(&pod) {
        return Ok(Action::done());
    }
    reconcile_leader(c, flags, &pod, &lws).await
}

/// The B09 fix (PR #999, dcbd8f0: a PR head, in no release; `pod-delete-events=tombstone`): a delete
/// event hands the deleted pod to the restart policy, so a deleted worker restarts its group
/// even when its StatefulSet has already re-created a pod of the same name.
pub async fn reconcile_deleted<C: Client>(c: &C, pod: &Pod) -> Result<()> {
    let ns = k8s::namespace(&pod.metadata);
    let Some(lws_name) = k8s::label(&pod.metadata, keys::SET_NAME) else {
        return Ok(());
    };
    if utils::leader_pod(pod) {
        return Ok(()); // its group goes with it
    }
    let lws = match c.get::<LeaderWorkerSet>(ns, lws_name).await {
        Ok(l) => l,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    };
    handle_restart_policy(c, pod, &lws, true).await.map(|_| ())
}

/// `Reconcile` from the leader check on: the per-replica Service, then the worker StatefulSet.
async fn reconcile_leader<C: Client>(
    c: &C,
    flags: &Flags,
    pod: &Pod,
    lws: &LeaderWorkerSet,
) -> Result<Action> {
    if k8s::annotation(&pod.metadata, keys::LEADER_POD_NAME).is_some_and(|v| !v.is_empty()) {
        let msg = format!(
            "leader pod {}/{} contains mistake annotation '{}': requires Kubernetes ≥v1.27 or v1.26 with StatefulSetStartOrdinal feature",
            k8s::namespace(&pod.metadata),
            k8s::name(&pod.metadata),
            keys::LEADER_POD_NAME
        );
        c.eventf(
            lws,
            Some(Related::of(pod)),
            "Warning",
            "FailedCreate",
            CREATE,
            &msg,
        );
        return Ok(Action::done());
    }
    if subdomain_policy(lws) == Some("UniquePerReplica") {
        let group = k8s::label(&pod.metadata, keys::GROUP_INDEX).unwrap_or("");
        let selector = [
            (keys::SET_NAME.to_string(), lws.name().to_string()),
            (keys::GROUP_INDEX.to_string(), group.to_string()),
        ];
        let owner = k8s::controller_ref("v1", "Pod", &pod.metadata);
        let name = k8s::name(&pod.metadata);
        utils::create_headless_service_if_not_exists(c, lws, name, selector.into(), owner).await?;
    }
    // Never for a leader being deleted: the group restart would race a new worker set.
    if k8s::is_terminating(&pod.metadata) {
        return Ok(Action::done());
    }
    if flags.gang_scheduling == GangScheduling::Volcano {
        scheduler_provider::create_pod_group_if_not_exists(c, lws, pod).await?;
    }
    if lws.size() == 1 {
        return Ok(Action::done());
    }
    if lws.spec.startup_policy == "LeaderReady" && !k8s::is_ready(pod) {
        return Ok(Action::done());
    }
    let Some(revision) = rev::get_revision(c, lws, get_revision_key(&pod.metadata)).await? else {
        return Ok(Action::requeue_after(1_000));
    };
    let mut sts = construct_worker_statefulset_apply_configuration(pod, lws, &revision, flags)?;
    if let Some(topology_key) = k8s::annotation(&lws.metadata, keys::EXCLUSIVE_TOPOLOGY) {
        if k8s::node_name(pod).is_empty() {
            return Ok(Action::done());
        }
        set_node_selector_for_worker_pods(c, pod, &mut sts, topology_key).await?;
    }
    sts.metadata.owner_references = Some(vec![k8s::controller_ref("v1", "Pod", &pod.metadata)]);
    match c
        .get::<StatefulSet>(lws.namespace(), k8s::name(&pod.metadata))
        .await
    {
        Ok(_) => return Ok(Action::done()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    match c.create(sts).await {
        Ok(_) => {
            let msg = format!(
                "Created worker statefulset for leader pod {}",
                k8s::name(&pod.metadata)
            );
            let related = Some(Related::of(pod));
            c.eventf(lws, related, "Normal", "GroupsProgressing", CREATE, &msg);
            Ok(Action::done())
        }
        Err(e) if e.is_already_exists() => Ok(Action::done()),
        Err(e) => {
            let msg = format!(
                "Failed to create worker statefulset for leader pod {}: {}",
                k8s::name(&pod.metadata),
                e.message
            );
            let related = Some(Related::of(pod));
            c.eventf(lws, related, "Warning", "FailedCreate", CREATE, &msg);
            Err(e)
        }
    }
}

/// `handleRestartPolicy`: under RecreateGroupOnPodRestart (or RecreateGroupAfterStart once no
/// pod of the group is pending), a restarted or deleted (`deleted`, or terminating) pod of the
/// current group deletes its leader in the foreground. Returns whether the leader was or is
/// being deleted.
async fn handle_restart_policy<C: Client>(
    c: &C,
    pod: &Pod,
    lws: &LeaderWorkerSet,
    deleted: bool,
) -> Result<bool> {
    let policy = lws.spec.leader_worker_template.restart_policy.as_str();
    if policy != RECREATE_ON_RESTART && policy != RECREATE_AFTER_START {
        return Ok(false);
    }
    if !utils::container_restarted(pod) && !utils::pod_deleted(pod) && !deleted {
        return Ok(false);
    }
    let size = lws.size();
    let pending = pending_pods_in_group(c, pod, size).await?;
    let after_start_annotation =
        k8s::annotation(&lws.metadata, keys::RECREATE_GROUP_AFTER_START).is_some();
    if pending && (policy == RECREATE_AFTER_START || after_start_annotation) {
        return Ok(false);
    }
    let ns = k8s::namespace(&pod.metadata);
    let leader = if utils::leader_pod(pod) {
        Arc::new(pod.clone())
    } else {
        let name = k8s::name(&pod.metadata);
        let (leader_name, ordinal) = utils::get_parent_name_and_ordinal(name);
        if ordinal == -1 {
            return Err(Error::internal(format!("parsing pod name for pod {name}")));
        }
        let leader = match c.get::<Pod>(ns, leader_name).await {
            Ok(l) => l,
            Err(e) if e.is_not_found() => return Ok(false),
            Err(e) => return Err(e),
        };
        if get_revision_key(&leader.metadata) != get_revision_key(&pod.metadata) {
            return Ok(false);
        }
        if !worker_pod_belongs_to_leader(c, pod, &leader).await? {
            return Ok(false);
        }
        leader
    };
    if k8s::is_terminating(&leader.metadata) {
        return Ok(true);
    }
    let leader_name = k8s::name(&leader.metadata);
    c.delete::<Pod>(ns, leader_name, Some(Propagation::Foreground))
        .await?;
    let group = k8s::label(&leader.metadata, keys::GROUP_INDEX).unwrap_or("");
    let msg = format!(
        "Worker pod {} failed, deleted leader pod {leader_name} to recreate group {group}",
        k8s::name(&pod.metadata)
    );
    let related = Some(Related::of(&*leader));
    c.eventf(lws, related, "Normal", "RecreateGroup", DELETE, &msg);
    Ok(true)
}

/// `workerPodBelongsToLeader`: the worker's controller is this leader, or a StatefulSet (of
/// the UID the worker names) controlled by this leader (name and UID).
async fn worker_pod_belongs_to_leader<C: Client>(c: &C, pod: &Pod, leader: &Pod) -> Result<bool> {
    let Some(owner) = k8s::controller_of(&pod.metadata) else {
        return Ok(false);
    };
    let is_leader = |name: &str, uid: &str| {
        name == k8s::name(&leader.metadata) && uid == k8s::uid(&leader.metadata)
    };
    if owner.kind == "Pod" {
        return Ok(is_leader(&owner.name, &owner.uid));
    }
    if owner.kind != "StatefulSet" {
        return Ok(false);
    }
    let sts = match c
        .get::<StatefulSet>(k8s::namespace(&pod.metadata), &owner.name)
        .await
    {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Ok(false),
        Err(e) => return Err(e),
    };
    if k8s::uid(&sts.metadata) != owner.uid {
        return Ok(false);
    }
    Ok(k8s::controller_of(&sts.metadata)
        .is_some_and(|o| o.kind == "Pod" && is_leader(&o.name, &o.uid)))
}

/// `setNodeSelectorForWorkerPods` with `topologyValueFromPod`: pin workers to the leader's
/// topology domain. A node that is gone gives an empty value; a node without the label is an
/// error.
async fn set_node_selector_for_worker_pods<C: Client>(
    c: &C,
    pod: &Pod,
    sts: &mut StatefulSet,
    topology_key: &str,
) -> Result<()> {
    let node = k8s::node_name(pod);
    let value = match c.get::<Node>("", node).await {
        Ok(n) => match k8s::label(&n.metadata, topology_key) {
            Some(v) => v.to_string(),
            None => {
                return Err(Error::internal(
                    "node does not have topology label: ".to_string(),
                ))
            }
        },
        Err(e) if e.is_not_found() => String::new(),
        Err(e) => return Err(e),
    };
    let spec = sts.spec.template.spec.get_or_insert_with(Default::default);
    spec.node_selector
        .get_or_insert_with(BTreeMap::new)
        .insert(topology_key.to_string(), value);
    Ok(())
}

/// `pendingPodsInGroup`: the group has fewer pods than its size, or one of them is Pending.
async fn pending_pods_in_group<C: Client>(c: &C, pod: &Pod, size: i32) -> Result<bool> {
    let group = k8s::label(&pod.metadata, keys::GROUP_INDEX).unwrap_or("");
    let lws_name = k8s::label(&pod.metadata, keys::SET_NAME).unwrap_or("");
    let pods = c
        .list::<Pod>(
            k8s::namespace(&pod.metadata),
            &[(keys::SET_NAME, lws_name), (keys::GROUP_INDEX, group)],
        )
        .await?;
    if usize::try_from(size).ok() != Some(pods.len()) {
        return Ok(true);
    }
    Ok(pods.iter().any(|p| k8s::phase(p) == "Pending"))
}

/// `constructWorkerStatefulSetApplyConfiguration`: the worker template of the leader's
/// revision; size, annotations, subgroup policy and subdomain from the live LWS.
/// `worker-update-strategy=OnDelete` is the workaround proposed in lws #225 (not upstream).
/// `worker-sts-spec=revision` is PR #963 (d014d0f, after the tag): every spec-derived value
/// from the revision-applied spec; metadata stays the live LWS's.
pub fn construct_worker_statefulset_apply_configuration(
    leader: &Pod,
    lws: &LeaderWorkerSet,
    revision: &ControllerRevision,
    flags: &Flags,
) -> Result<StatefulSet> {
    let current = rev::apply_revision(lws, revision)?;
    let spec_of = if flags.worker_sts_spec_from_revision {
        &current
    } else {
        lws
    };
    let mut template = current.spec.leader_worker_template.worker_template.clone();
    let leader_name = k8s::name(&leader.metadata).to_string();
    let label = |k: &str| k8s::label(&leader.metadata, k).unwrap_or("").to_string();
    let selector: BTreeMap<String, String> = [
        (keys::GROUP_INDEX.to_string(), label(keys::GROUP_INDEX)),
        (keys::SET_NAME.to_string(), lws.name().to_string()),
        (
            keys::GROUP_UNIQUE_HASH.to_string(),
            label(keys::GROUP_UNIQUE_HASH),
        ),
    ]
    .into();
    let mut labels = selector.clone();
    labels.insert(
        keys::TEMPLATE_REVISION_HASH.to_string(),
        get_revision_key(&leader.metadata).to_string(),
    );
    let tmeta = template.metadata.get_or_insert_with(ObjectMeta::default);
    tmeta
        .labels
        .get_or_insert_with(BTreeMap::new)
        .extend(labels.clone());
    let annotations = tmeta.annotations.get_or_insert_with(BTreeMap::new);
    annotations.extend(worker_pod_annotations(leader, lws, spec_of));
    restart_guard::guard_worker_template(tmeta, flags, lws); // not upstream: the Z05 fix
    let service_name = match subdomain_policy(spec_of) {
        None | Some("Shared") => lws.name().to_string(),
        Some(_) => leader_name.clone(),
    };
    let pvcs = utils::get_pvc_apply_configuration(spec_of);
    Ok(StatefulSet {
        metadata: ObjectMeta {
            name: Some(leader_name),
            namespace: Some(k8s::namespace(&leader.metadata).to_string()),
            labels: utils::merge_metadata(lws.metadata.labels.as_ref(), labels),
            annotations: lws.metadata.annotations.clone(),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            service_name: Some(service_name),
            replicas: Some(spec_of.size() - 1),
            pod_management_policy: Some("Parallel".into()),
            template,
            ordinals: Some(StatefulSetOrdinals { start: Some(1) }),
            selector: LabelSelector {
                match_labels: Some(selector),
                match_expressions: None,
            },
            update_strategy: flags.worker_update_strategy_on_delete.then(|| {
                StatefulSetUpdateStrategy {
                    type_: Some("OnDelete".into()),
                    rolling_update: None,
                }
            }),
            volume_claim_templates: (!pvcs.is_empty()).then_some(pvcs),
            persistent_volume_claim_retention_policy: spec_of
                .spec
                .leader_worker_template
                .persistent_volume_claim_retention_policy
                .clone(),
            ..Default::default()
        },
        status: None,
    })
}

/// The worker pod template's annotations: size, leader name, exclusive topology, subgroup
/// policy, TPU. Size and subgroup policy come from `spec_of`, the exclusive-topology
/// annotations from the live `lws`.
fn worker_pod_annotations(
    leader: &Pod,
    lws: &LeaderWorkerSet,
    spec_of: &LeaderWorkerSet,
) -> BTreeMap<String, String> {
    let mut a = BTreeMap::new();
    a.insert(keys::SIZE.to_string(), spec_of.size().to_string());
    a.insert(
        keys::LEADER_POD_NAME.to_string(),
        k8s::name(&leader.metadata).to_string(),
    );
    let lws_annotation = |k: &str| k8s::annotation(&lws.metadata, k).filter(|v| !v.is_empty());
    if let Some(t) = lws_annotation(keys::EXCLUSIVE_TOPOLOGY) {
        a.insert(keys::EXCLUSIVE_TOPOLOGY.to_string(), t.to_string());
    }
    if let Some(p) = &spec_of.spec.leader_worker_template.sub_group_policy {
        if let Some(t) = &p.sub_group_policy_type {
            a.insert(keys::SUBGROUP_POLICY_TYPE.to_string(), t.clone());
        }
        let size = p.sub_group_size.unwrap_or(0);
        a.insert(keys::SUBGROUP_SIZE_V0_10.to_string(), size.to_string());
        if let Some(t) = lws_annotation(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
            a.insert(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY.to_string(), t.to_string());
        }
    }
    super::tpu::add_tpu_annotations(leader, &mut a);
    a
}
