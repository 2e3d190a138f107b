//! The pod reconciler, v0.3.0 and v0.4.1 (lws `pkg/controllers/pod_controller.go` at V3 and FX;
//! see docs/fidelity.md). It reconciles every LWS pod: restart policy for all of them, and for leaders the
//! group's worker StatefulSet.
//!
//! The seed bug lives in `write_worker_statefulset`: v0.3.0 force-applies the worker
//! StatefulSet, built from the *live* LWS worker template, on every leader reconcile (V3
//! podc:134-151), so a controller restart or resync rewrites every group at once; v0.4.1 creates
//! it only when missing (FX podc:152-160, PR #229).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, StatefulSet, StatefulSetOrdinals, StatefulSetSpec,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Action, Client, Error, Propagation, Result};
use crate::k8s;
use crate::lws_controller::{add_topology_annotations, headless_service, FIELD_MANAGER};
use crate::profile::{Flags, WorkerStsWrite};
use crate::restart_guard;

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
    let (Some(lws_name), Some(worker_index)) = (
        k8s::label(&pod.metadata, keys::SET_NAME),
        k8s::label(&pod.metadata, keys::WORKER_INDEX),
    ) else {
        return Err(Error::internal(format!(
            "pod {name} is missing the name or worker-index label"
        )));
    };
    let lws = match c.get::<LeaderWorkerSet>(namespace, lws_name).await {
        Ok(l) => Some(l),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e),
    };
    if flags.worker_finalizer && restart_guard::awaits_release(&pod) {
        // The Z05 fix: the restart policy sees the deleted worker, then lets it go.
        if let Some(lws) = &lws {
            // A leader already gone (a group scaled away) leaves nothing to recreate.
            restart_guard::ignore_not_found(
                handle_restart_policy(c, flags, &pod, lws, false).await,
            )?;
        }
        restart_guard::release(c, &pod).await?;
        return Ok(Action::done());
    }
    let Some(lws) = lws else {
        return Ok(Action::done());
    };
    if handle_restart_policy(c, flags, &pod, &lws, false).await? {
        return Ok(Action::done());
    }
    if worker_index != "0" {
        return Ok(Action::done());
    }
    let unique_per_replica = flags.network_config
        && lws
            .spec
            .network_config
            .as_ref()
            .and_then(|n| n.subdomain_policy.as_deref())
            == Some("UniquePerReplica");
    if !flags.network_config && k8s::is_terminating(&pod.metadata) {
        return Ok(Action::done());
    }
    if unique_per_replica {
        // FX creates it even for a terminating leader (B24, fixed later by afd02ec).
        create_replica_service_if_missing(c, &pod).await?;
    }
    if flags.network_config && k8s::is_terminating(&pod.metadata) {
        return Ok(Action::done());
    }
    if flags.size_one_skips_worker_sts && lws.size() == 1 {
        return Ok(Action::done());
    }
    if lws.spec.startup_policy == "LeaderReady" && !k8s::is_ready(&pod) {
        return Ok(Action::done());
    }
    // B02 fix: the group's templates come from the leader's revision (HD podc:147-156).
    let source = if flags.worker_template_from_revision {
        let hash = k8s::label(&pod.metadata, keys::TEMPLATE_REVISION_HASH).unwrap_or("");
        match c
            .get::<ControllerRevision>(namespace, &crate::revision::name(lws.name(), hash))
            .await
        {
            Ok(rev) => std::sync::Arc::new(crate::revision::apply_revision(&lws, &rev)?),
            Err(e) if e.is_not_found() => return Ok(Action::requeue_after(1_000)),
            Err(e) => return Err(e),
        }
    } else {
        lws.clone()
    };
    let mut sts = worker_statefulset(&pod, &source, flags, unique_per_replica);
    if k8s::annotation(&lws.metadata, keys::EXCLUSIVE_TOPOLOGY).is_some() {
        let node = k8s::node_name(&pod);
        if node.is_empty() {
            return Ok(Action::done()); // retriggered when the leader is scheduled
        }
        let topology_key = k8s::annotation(&lws.metadata, keys::EXCLUSIVE_TOPOLOGY)
            .unwrap_or("")
            .to_string();
        let value = topology_value(c, node, &topology_key).await?;
        let spec = sts.spec.template.spec.get_or_insert_with(Default::default);
        spec.node_selector
            .get_or_insert_with(BTreeMap::new)
            .insert(topology_key, value);
    }
    sts.metadata.owner_references = Some(vec![k8s::controller_ref("v1", "Pod", &pod.metadata)]);
    write_worker_statefulset(c, flags, sts).await?;
    Ok(Action::done())
}

/// V3/FX: a NotFound node is logged and gives an empty value (B25); a missing label is an error.
async fn topology_value<C: Client>(c: &C, node: &str, key: &str) -> Result<String> {
    match c.get::<Node>("", node).await {
        Ok(n) => k8s::label(&n.metadata, key)
            .map(str::to_string)
            .ok_or_else(|| Error::internal(format!("node {node} has no label {key}"))),
        Err(e) if e.is_not_found() => Ok(String::new()),
        Err(e) => Err(e),
    }
}

async fn write_worker_statefulset<C: Client>(c: &C, flags: &Flags, sts: StatefulSet) -> Result<()> {
    match flags.worker_sts_write {
        WorkerStsWrite::Apply => c.apply(sts, FIELD_MANAGER, true).await.map(|_| ()),
        WorkerStsWrite::Create => {
            match c
                .get::<StatefulSet>(k8s::namespace(&sts.metadata), k8s::name(&sts.metadata))
                .await
            {
                Ok(_) => return Ok(()),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
            c.create(sts).await.map(|_| ())
        }
    }
}

/// The B09 fix (PR #999, dcbd8f0; `pod-delete-events=tombstone`): a delete event carries the
/// deleted pod, so a deleted worker restarts its group even when the worker StatefulSet has
/// already re-created a pod of the same name, which is all a reconcile by name would see. A
/// deleted leader needs nothing: its group goes with it.
pub async fn reconcile_deleted<C: Client>(c: &C, flags: &Flags, pod: &Pod) -> Result<()> {
    let ns = k8s::namespace(&pod.metadata);
    let (Some(lws_name), Some(worker_index)) = (
        k8s::label(&pod.metadata, keys::SET_NAME),
        k8s::label(&pod.metadata, keys::WORKER_INDEX),
    ) else {
        return Ok(());
    };
    if worker_index == "0" {
        return Ok(());
    }
    let lws = match c.get::<LeaderWorkerSet>(ns, lws_name).await {
        Ok(l) => l,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    };
    handle_restart_policy(c, flags, pod, &lws, true)
        .await
        .map(|_| ())
}

/// `handleRestartPolicy` (V3 podc:156-187 = FX podc:165-196): with RecreateGroupOnPodRestart, a
/// restarted or deleted (`gone`, or terminating) group member deletes the leader in the
/// foreground. Returns whether the leader was or is being deleted.
async fn handle_restart_policy<C: Client>(
    c: &C,
    flags: &Flags,
    pod: &Pod,
    lws: &LeaderWorkerSet,
    gone: bool,
) -> Result<bool> {
    if lws.spec.leader_worker_template.restart_policy != "RecreateGroupOnPodRestart" {
        return Ok(false);
    }
    if !gone && !k8s::container_restarted(pod) && !k8s::is_terminating(&pod.metadata) {
        return Ok(false);
    }
    let ns = k8s::namespace(&pod.metadata);
    let leader = if k8s::label(&pod.metadata, keys::WORKER_INDEX) == Some("0") {
        std::sync::Arc::new(pod.clone())
    } else {
        let name = k8s::name(&pod.metadata);
        let (leader_name, _) = k8s::parent_and_ordinal(name)
            .ok_or_else(|| Error::internal(format!("worker pod {name} has no ordinal")))?;
        let leader = c.get::<Pod>(ns, leader_name).await?;
        if flags.restart_check_ownership && !worker_belongs_to_leader(c, pod, &leader).await? {
            // A stale worker of an earlier leader (GC'd after a rollout or restart) must not
            // restart the group again (B03, B08).
            return Ok(false);
        }
        leader
    };
    if k8s::is_terminating(&leader.metadata) {
        return Ok(true);
    }
    c.delete::<Pod>(
        ns,
        k8s::name(&leader.metadata),
        Some(Propagation::Foreground),
    )
    .await?;
    // No event here: the pod controller of v0.3.0 and v0.4.1 records none (the RecreateGroup
    // event arrived with PR #299, v0.5.0; the v0.10.0 port records it).
    Ok(true)
}

/// The B03/B08 fix (HD podc:238-250, 268-295): the worker carries the leader's revision key,
/// and its controller StatefulSet (matching UID) is controlled by this leader (name and UID).
async fn worker_belongs_to_leader<C: Client>(c: &C, worker: &Pod, leader: &Pod) -> Result<bool> {
    let key = |p: &Pod| k8s::label(&p.metadata, keys::TEMPLATE_REVISION_HASH).map(str::to_string);
    if key(worker) != key(leader) {
        return Ok(false);
    }
    let Some(owner) = k8s::controller_of(&worker.metadata).filter(|o| o.kind == "StatefulSet")
    else {
        return Ok(false);
    };
    let sts = match c
        .get::<StatefulSet>(k8s::namespace(&worker.metadata), &owner.name)
        .await
    {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Ok(false),
        Err(e) => return Err(e),
    };
    if k8s::uid(&sts.metadata) != owner.uid {
        return Ok(false);
    }
    Ok(k8s::controller_of(&sts.metadata).is_some_and(|o| {
        o.kind == "Pod"
            && o.name == k8s::name(&leader.metadata)
            && o.uid == k8s::uid(&leader.metadata)
    }))
}

async fn create_replica_service_if_missing<C: Client>(c: &C, pod: &Pod) -> Result<()> {
    let (ns, name) = (k8s::namespace(&pod.metadata), k8s::name(&pod.metadata));
    match c.get::<k8s_openapi::api::core::v1::Service>(ns, name).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    let lws_name = k8s::label(&pod.metadata, keys::SET_NAME).unwrap_or("");
    let group = k8s::label(&pod.metadata, keys::GROUP_INDEX).unwrap_or("");
    let svc = headless_service(
        name,
        ns,
        [(keys::SET_NAME, lws_name), (keys::GROUP_INDEX, group)],
        k8s::controller_ref("v1", "Pod", &pod.metadata),
    );
    c.create(svc).await.map(|_| ())
}

/// `constructWorkerStatefulSetApplyConfiguration` (V3 podc:252-303; FX podc:261-316): the live
/// worker template under the *leader's* template hash label.
pub fn worker_statefulset(
    leader: &Pod,
    lws: &LeaderWorkerSet,
    flags: &Flags,
    unique_per_replica: bool,
) -> StatefulSet {
    let name = k8s::name(&leader.metadata).to_string();
    let label = |k: &str| k8s::label(&leader.metadata, k).unwrap_or("").to_string();
    let labels: BTreeMap<String, String> = [
        (keys::GROUP_INDEX.to_string(), label(keys::GROUP_INDEX)),
        (keys::SET_NAME.to_string(), lws.name().to_string()),
        (
            keys::GROUP_UNIQUE_HASH.to_string(),
            label(keys::GROUP_UNIQUE_HASH),
        ),
        (
            keys::TEMPLATE_REVISION_HASH.to_string(),
            label(keys::TEMPLATE_REVISION_HASH),
        ),
    ]
    .into();
    let selector: BTreeMap<String, String> = labels
        .iter()
        .filter(|(k, _)| k.as_str() != keys::TEMPLATE_REVISION_HASH)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut template = lws.spec.leader_worker_template.worker_template.clone();
    let tmeta = template.metadata.get_or_insert_with(ObjectMeta::default);
    tmeta
        .labels
        .get_or_insert_with(BTreeMap::new)
        .extend(labels.clone());
    let annotations = tmeta.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(keys::SIZE.into(), lws.size().to_string());
    annotations.insert(keys::LEADER_POD_NAME.into(), name.clone());
    add_topology_annotations(lws, annotations);
    // V3 podc:289 = FX podc:298.
    crate::tpu::add_tpu_annotations(leader, annotations);
    restart_guard::guard_worker_template(tmeta, flags, lws);
    let service_name = if unique_per_replica {
        name.clone()
    } else {
        lws.name().to_string()
    };
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(lws.namespace().to_string()),
            labels: Some(labels),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(lws.size() - 1),
            ordinals: Some(StatefulSetOrdinals { start: Some(1) }),
            pod_management_policy: Some("Parallel".into()),
            service_name: Some(service_name),
            selector: LabelSelector {
                match_labels: Some(selector),
                match_expressions: None,
            },
            // Unset upstream (API defaults: RollingUpdate, partition 0); OnDelete is the #225
            // workaround flag.
            update_strategy: flags.worker_update_strategy_on_delete.then(|| {
                StatefulSetUpdateStrategy {
                    type_: Some("OnDelete".into()),
                    rolling_update: None,
                }
            }),
            template,
            ..Default::default()
        },
        status: None,
    }
}
