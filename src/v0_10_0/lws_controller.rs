//! `pkg/controllers/leaderworkerset_controller.go` at v0.10.0, function by function (names in
//! each doc comment). One call of `reconcile` is one reconcile of one LWS key; every `Client`
//! call is a point where the world may interleave.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::revision::{self as rev, get_revision_key};
use super::utils::{self, non_zero_value, pod_running_and_ready, statefulset_ready};
use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Action, Client, Error, Related, Result};
use crate::k8s;
use crate::lws_controller::{controlled_by_another, Ctx};
use crate::profile::PartitionFormula;
use crate::rollout::{self, ReplicaState};

pub const FIELD_MANAGER: &str = "lws";
pub const AVAILABLE: &str = "Available";
pub const PROGRESSING: &str = "Progressing";
/// `LeaderWorkerSetUpdateInProgress` (v0.3.0 and v0.4.1 spelled it `UpgradeInProgress`).
pub const UPDATE_IN_PROGRESS: &str = rollout::UPDATE_IN_PROGRESS;
const GROUPS_PROGRESSING: &str = "GroupsProgressing";
const GROUPS_UPDATING: &str = "GroupsUpdating";
// The events' actions (`Create`, `Update`, `Delete`: pkg/controllers/leaderworkerset_controller.go
// @v0.10.0, also used by the pod controller).
pub(super) const CREATE: &str = "Create";
pub(super) const UPDATE: &str = "Update";
pub(super) const DELETE: &str = "Delete";

/// `Reconcile`.
pub async fn reconcile<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    namespace: &str,
    name: &str,
) -> Result<Action> {
    let lws = match c.get::<LeaderWorkerSet>(namespace, name).await {
        Ok(l) => l,
        Err(e) if e.is_not_found() => return Ok(Action::done()),
        Err(e) => return Err(e),
    };
    if k8s::is_terminating(&lws.metadata) {
        return Ok(Action::done());
    }
    let leader_sts = get_leader_statefulset(c, ctx, &lws).await?;
    if leader_sts
        .as_ref()
        .is_some_and(|s| k8s::is_terminating(&s.metadata))
    {
        return Ok(Action::requeue_after(5_000));
    }
    // Z11's proposed fix (not upstream): a leader StatefulSet another object controls (an
    // earlier LWS of this name, deleted) is left to the garbage collector, as the terminating
    // one above is waited for.
    if ctx.flags.foreign_leader_sts_waits
        && leader_sts
            .as_deref()
            .is_some_and(|s| controlled_by_another(s, &lws))
    {
        return Ok(Action::requeue_after(5_000));
    }
    let mut revision =
        get_or_create_revision_if_non_exist(c, ctx, leader_sts.as_deref(), &lws).await?;
    let updated = get_updated_revision(c, leader_sts.as_deref(), &lws, &revision).await?;
    let lws_updated = updated.is_some();
    if let Some(u) = updated {
        revision = match existing_updated_revision(c, ctx, &lws, &u).await? {
            Some(r) => r,
            None => {
                let created = rev::create_revision(c, u).await?;
                let msg = format!(
                    "Creating revision with key {} for updated LWS",
                    get_revision_key(&created.metadata)
                );
                let related = Some(Related::of(&*created));
                c.eventf(&*lws, related, "Normal", "CreatingRevision", CREATE, &msg);
                created
            }
        };
    }
    let key = get_revision_key(&revision.metadata).to_string();
    let (partition, replicas) =
        rolling_update_parameters(c, ctx, &lws, leader_sts.as_deref(), &key, lws_updated).await?;
    if let Err(e) = ssa_with_statefulset(c, &lws, partition, replicas, &key).await {
        let (reason, action, verb) = match leader_sts {
            None => ("FailedCreate", CREATE, "create"),
            Some(_) => ("FailedUpdate", UPDATE, "update"),
        };
        let msg = format!(
            "Failed to {verb} leader statefulset {}: {}",
            lws.name(),
            e.message
        );
        c.eventf(&*lws, None, "Warning", reason, action, &msg);
        return Err(e);
    }
    record_partition_event(
        c,
        &lws,
        &revision,
        leader_sts.as_deref(),
        lws_updated,
        partition,
    );
    if let Err(e) = reconcile_headless_services(c, &lws).await {
        let msg = format!("Failed to create headless service for error: {}", e.message);
        c.eventf(&*lws, None, "Warning", "FailedCreate", CREATE, &msg);
        return Err(e);
    }
    let update_done = match update_status(c, ctx, &lws, &key).await {
        Ok(done) => done,
        Err(e) if e.is_conflict() => {
            return Ok(Action {
                requeue: true,
                requeue_after_ms: None,
            })
        }
        Err(e) => return Err(e),
    };
    if update_done {
        rev::truncate_revisions(c, &lws, &key).await?;
    }
    Ok(Action::done())
}

/// The events `Reconcile` records after the apply: the leader StatefulSet created, or the
/// partition moved.
fn record_partition_event<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    revision: &ControllerRevision,
    leader_sts: Option<&StatefulSet>,
    lws_updated: bool,
    partition: i32,
) {
    let related = Some(Related::of(revision));
    let Some(sts) = leader_sts else {
        let msg = format!("Created leader statefulset {}", lws.name());
        c.eventf(lws, related, "Normal", GROUPS_PROGRESSING, CREATE, &msg);
        return;
    };
    let old = sts_partition(sts);
    if lws_updated || partition == old {
        return;
    }
    let msg = if old - 1 == partition {
        format!("Updating replica {partition}")
    } else {
        format!("Updating replicas {partition} to {} (inclusive)", old - 1)
    };
    c.eventf(lws, related, "Normal", GROUPS_UPDATING, UPDATE, &msg);
}

fn sts_partition(sts: &StatefulSet) -> i32 {
    sts.spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.partition)
        .unwrap_or(0)
}

/// `reconcileHeadlessServices`: the shared Service unless the subdomain policy is
/// UniquePerReplica (then the pod controller makes one per leader).
async fn reconcile_headless_services<C: Client>(c: &C, lws: &LeaderWorkerSet) -> Result<()> {
    if subdomain_policy(lws) != Some("UniquePerReplica") {
        let selector = [(keys::SET_NAME.to_string(), lws.name().to_string())].into();
        let owner = k8s::controller_ref(crate::api::API_VERSION, crate::api::KIND, &lws.metadata);
        utils::create_headless_service_if_not_exists(c, lws, lws.name(), selector, owner).await?;
    }
    Ok(())
}

/// `*lws.Spec.NetworkConfig.SubdomainPolicy`, when set.
pub fn subdomain_policy(lws: &LeaderWorkerSet) -> Option<&str> {
    lws.spec
        .network_config
        .as_ref()
        .and_then(|n| n.subdomain_policy.as_deref())
}

/// The scaled `(maxSurge, maxUnavailable)` of `rollingUpdateParameters`: surge rounded up and
/// capped at the replicas, unavailable rounded down (the same arithmetic as every release).
pub fn scaled_knobs(lws: &LeaderWorkerSet) -> Result<(i32, i32)> {
    let k = crate::lws_controller::knobs(lws)?;
    Ok((k.max_surge, k.max_unavailable))
}

/// `*lws.Spec.RolloutStrategy.RollingUpdateConfiguration.Partition` (CRD default 0).
pub fn lws_partition(lws: &LeaderWorkerSet) -> i32 {
    lws.rolling_update().partition.unwrap_or(0)
}

/// `rollingUpdateParameters`: the leader StatefulSet's `(partition, replicas)`. Cases as in
/// upstream's comments; the deferred `max` keeps groups below the LWS partition on their
/// revision.
pub async fn rolling_update_parameters<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    sts: Option<&StatefulSet>,
    revision_key: &str,
    lws_updated: bool,
) -> Result<(i32, i32)> {
    let (partition, replicas) = parameters(c, ctx, lws, sts, revision_key, lws_updated).await?;
    Ok((partition.max(lws_partition(lws)), replicas))
}

async fn parameters<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    sts: Option<&StatefulSet>,
    revision_key: &str,
    lws_updated: bool,
) -> Result<(i32, i32)> {
    let lws_replicas = lws.replicas();
    // Case 1: no leader StatefulSet yet.
    let Some(sts) = sts else {
        return Ok((0, lws_replicas));
    };
    let sts_replicas = sts.spec.replicas.unwrap_or(1);
    let (max_surge, max_unavailable) = scaled_knobs(lws)?;
    let burst_replicas = lws_replicas + max_surge;
    let want_replicas = |unready: i32| {
        let want =
            calculate_rolling_update_replicas(lws_replicas, max_surge, max_unavailable, unready);
        record_surge_release(c, lws, want, sts_replicas);
        want
    };
    // Case 2: a new rolling update; scale up first.
    if lws_updated {
        let partition = lws_replicas.min(sts_replicas);
        if sts_replicas < lws_replicas {
            return Ok((partition, lws_replicas));
        }
        return Ok((partition, want_replicas(lws_replicas)));
    }
    let partition = sts_partition(sts);
    // Case 3: at rest.
    if partition == 0 && sts_replicas == lws_replicas {
        return Ok((0, lws_replicas));
    }
    if sts_replicas < lws_replicas {
        // Not upstream: Z08's fix keeps the surge, and the partition above the old groups
        // left, while groups remain to be replaced (`rollout::Knobs::scale_up_parameters`).
        let old_pods = crate::lws_controller::old_pod_count(sts);
        if ctx.flags.scale_up_keeps_surge && (partition > 0 || old_pods > 0) {
            return Ok((partition.max(old_pods), burst_replicas));
        }
        return Ok((partition, lws_replicas));
    }
    let states = get_replica_states(c, ctx, lws, sts_replicas, revision_key).await?;
    let lws_unready = calculate_lws_unready_replicas(&states, lws_replicas);
    let annotation = k8s::annotation(&sts.metadata, keys::REPLICAS).unwrap_or("");
    let original: i32 = annotation.parse().map_err(|_| {
        Error::internal(format!(
            "strconv.Atoi: parsing {annotation:?}: invalid syntax"
        ))
    })?;
    // Case 4: replicas changed during a rolling update.
    if original != lws_replicas {
        let mut partition = partition.min(burst_replicas);
        if ctx.flags.rescale_holds_old {
            // Not upstream: Z04's fix (`rollout::Knobs::rescale_partition`).
            let old_pods = crate::lws_controller::old_pod_count(sts);
            partition = partition.max(old_pods.min(lws_replicas));
        }
        return Ok((partition, want_replicas(lws_unready)));
    }
    // Case 5: the partition during a rolling update.
    let rolling_step = max_unavailable + max_surge - (burst_replicas - sts_replicas);
    let formula = ctx.flags.partition;
    let partition =
        rolling_update_partition(formula, &states, sts_replicas, rolling_step, partition);
    Ok((partition, want_replicas(lws_unready)))
}

/// The surge-release events of `wantReplicas`.
fn record_surge_release<C: Client>(c: &C, lws: &LeaderWorkerSet, want: i32, sts_replicas: i32) {
    let name = lws.name();
    let msg = if want == sts_replicas - 1 {
        format!("deleting surge replica {name}-{want}")
    } else if want < sts_replicas {
        format!(
            "deleting surge replicas from {name}-{want} to {name}-{}",
            sts_replicas - 1
        )
    } else {
        return;
    };
    c.eventf(lws, None, "Normal", GROUPS_PROGRESSING, DELETE, &msg);
}

/// `getReplicaStates`: for each index below the leader StatefulSet's replicas, whether its
/// group (leader pod and worker StatefulSet, both present and rightly named) is ready and on
/// `revision_key`.
pub async fn get_replica_states<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    sts_replicas: i32,
    revision_key: &str,
) -> Result<Vec<ReplicaState>> {
    let name = lws.name();
    let pods = c
        .list::<Pod>(
            lws.namespace(),
            &[(keys::SET_NAME, name), (keys::WORKER_INDEX, "0")],
        )
        .await?;
    let sorted_pods = utils::sort_by_index(pods, sts_replicas);
    let sets = c
        .list::<StatefulSet>(lws.namespace(), &[(keys::SET_NAME, name)])
        .await?;
    let sorted_sts = utils::sort_by_index(sets, sts_replicas);
    let no_worker_sts = lws.size() == 1;
    let named = |m: Option<&ObjectMeta>, want: &str| m.is_some_and(|m| k8s::name(m) == want);
    let mut states = Vec::with_capacity(sorted_pods.len());
    for (pod, sts) in sorted_pods.iter().zip(&sorted_sts) {
        let nominated = format!("{name}-{}", states.len());
        let pod_meta = pod.as_deref().map(|p| &p.metadata);
        let sts_meta = sts.as_deref().map(|s| &s.metadata);
        if !named(pod_meta, &nominated) || (!no_worker_sts && !named(sts_meta, &nominated)) {
            states.push(ReplicaState::default());
            continue;
        }
        let pod = pod.as_deref().expect("named");
        let leader_updated = get_revision_key(&pod.metadata) == revision_key;
        let leader_ready = pod_running_and_ready(pod, ctx.flags);
        let Some(sts) = sts.as_deref().filter(|_| !no_worker_sts) else {
            states.push(ReplicaState {
                ready: leader_ready,
                updated: leader_updated,
            });
            continue;
        };
        states.push(ReplicaState {
            ready: leader_ready && statefulset_ready(sts, ctx.flags),
            updated: leader_updated && get_revision_key(&sts.metadata) == revision_key,
        });
    }
    Ok(states)
}

/// `rollingUpdatePartition` (partitionHD): lower the partition by the rolling step from the
/// ready-and-updated tail, raise it by the unready groups below that, then slide it down over
/// groups that cost no availability (unready or already updated); never up.
/// `partition=all-unready` is the proposed fix for Z03 (`rollout::case5_partition`).
pub fn rolling_update_partition(
    formula: PartitionFormula,
    states: &[ReplicaState],
    sts_replicas: i32,
    rolling_step: i32,
    current_partition: i32,
) -> i32 {
    if formula == PartitionFormula::AllUnready {
        return rollout::case5_partition(formula, states, rolling_step, current_partition);
    }
    let continuous_ready = calculate_continuous_ready_replicas(states);
    let step_partition = non_zero_value(sts_replicas - continuous_ready - rolling_step);
    let unavailable = states[..step_partition as usize]
        .iter()
        .filter(|s| !s.ready)
        .count() as i32;
    let mut partition = step_partition + unavailable;
    let mut idx = partition.min(sts_replicas - 1);
    while idx >= step_partition {
        let s = states[idx as usize];
        if !s.ready || s.updated {
            partition = idx;
        } else {
            break;
        }
        idx -= 1;
    }
    partition.min(current_partition)
}

/// `calculateLWSUnreadyReplicas`: indices below the LWS replicas that are missing (beyond the
/// leader StatefulSet), unready or not updated.
pub fn calculate_lws_unready_replicas(states: &[ReplicaState], lws_replicas: i32) -> i32 {
    (0..lws_replicas.max(0) as usize)
        .filter(|&i| states.get(i).is_none_or(|s| !s.ready || !s.updated))
        .count() as i32
}

/// `calculateRollingUpdateReplicas`: the burst while more groups are unready than the surge
/// allows, then release surge groups down to those still needed beyond maxUnavailable.
pub fn calculate_rolling_update_replicas(
    lws_replicas: i32,
    max_surge: i32,
    max_unavailable: i32,
    unready: i32,
) -> i32 {
    if unready <= max_surge {
        return lws_replicas + non_zero_value(unready - max_unavailable);
    }
    lws_replicas + max_surge
}

/// `calculateContinuousReadyReplicas`: ready-and-updated groups counted down from the top.
pub fn calculate_continuous_ready_replicas(states: &[ReplicaState]) -> i32 {
    states
        .iter()
        .rev()
        .take_while(|s| s.ready && s.updated)
        .count() as i32
}

/// `getLeaderStatefulSet`: None when not found. With Z06's fix (`leader-sts-read=live`, not
/// upstream) a live GET instead of the cache: the partition is then bounded by the value the
/// reconciler last wrote, not by an older one its cache still holds.
async fn get_leader_statefulset<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
) -> Result<Option<Arc<StatefulSet>>> {
    let read = if ctx.flags.leader_sts_read_live {
        c.get_live::<StatefulSet>(lws.namespace(), lws.name()).await
    } else {
        c.get::<StatefulSet>(lws.namespace(), lws.name()).await
    };
    match read {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// `getOrCreateRevisionIfNonExist`: the revision named by the leader StatefulSet's key, or a
/// new one (for a new LWS, or one upgraded from a release without revisions).
///
/// Upstream asks `GetRevision` for the key "" when no leader StatefulSet is in the cache, and
/// that finds nothing: a reconcile whose StatefulSet cache has not yet seen the StatefulSet a
/// previous reconcile created makes a second revision of the same key (Z07).
/// `revision-at-creation=reuse` (not upstream) first looks for a revision under the key
/// `NewRevision` would give the current templates.
///
/// A leader StatefulSet left by an earlier LWS of the same name (deleted, created again before
/// the garbage collector got to it) has a key no revision of this LWS carries: upstream then
/// stores the current templates under the old key, so no update is seen (Z11).
pub(super) async fn get_or_create_revision_if_non_exist<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    sts: Option<&StatefulSet>,
    lws: &LeaderWorkerSet,
) -> Result<Arc<ControllerRevision>> {
    let revision_key = sts.map_or("", |s| get_revision_key(&s.metadata));
    if let Some(r) = rev::get_revision(c, lws, revision_key).await? {
        return Ok(r);
    }
    if revision_key.is_empty() && ctx.flags.revision_reuse_at_creation {
        let current_key = rev::current_revision_key(lws);
        if let Some(r) = rev::get_revision(c, lws, &current_key).await? {
            return Ok(r);
        }
    }
    let revision = rev::new_revision(c, lws, revision_key).await?;
    let key = get_revision_key(&revision.metadata).to_string();
    let created = rev::create_revision(c, revision).await?;
    let msg = if revision_key.is_empty() {
        format!("Creating revision with key {key} for a newly created LeaderWorkerSet")
    } else {
        format!("Creating missing revision with key {key} for existing LeaderWorkerSet")
    };
    let related = Some(Related::of(&*created));
    c.eventf(lws, related, "Normal", "CreatingRevision", CREATE, &msg);
    Ok(created)
}

/// `getUpdatedRevision`: a new revision when the LWS templates differ from `revision` (and not
/// merely in serialization); None before the leader StatefulSet exists.
pub(super) async fn get_updated_revision<C: Client>(
    c: &C,
    sts: Option<&StatefulSet>,
    lws: &LeaderWorkerSet,
    revision: &ControllerRevision,
) -> Result<Option<ControllerRevision>> {
    if sts.is_none() {
        return Ok(None);
    }
    let current = rev::new_revision(c, lws, "").await?;
    if !rev::equal_revision(Some(&current), Some(revision)) {
        if rev::set_matches_revision(lws, &current, revision) {
            return Ok(None);
        }
        return Ok(Some(current));
    }
    Ok(None)
}

/// Not upstream: under `revision-at-creation=reuse`, the revision already stored under the key
/// of `updated` (the current templates), if any. Upstream creates `updated` whenever
/// `getUpdatedRevision` returns it, and a reconcile whose StatefulSet cache has not yet seen
/// the controller's own apply of the new key reads the old key, takes the templates for an
/// update again, and stores a second revision of the new key with the next number (Z07 after
/// an update).
pub(super) async fn existing_updated_revision<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    updated: &ControllerRevision,
) -> Result<Option<Arc<ControllerRevision>>> {
    if !ctx.flags.revision_reuse_at_creation {
        return Ok(None);
    }
    rev::get_revision(c, lws, get_revision_key(&updated.metadata)).await
}

/// `SSAWithStatefulset`: force-apply the leader StatefulSet as field manager `lws`.
async fn ssa_with_statefulset<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    partition: i32,
    replicas: i32,
    revision_key: &str,
) -> Result<()> {
    let mut sts =
        construct_leader_statefulset_apply_configuration(lws, partition, replicas, revision_key)?;
    sts.metadata.owner_references = Some(vec![k8s::controller_ref(
        crate::api::API_VERSION,
        crate::api::KIND,
        &lws.metadata,
    )]);
    c.apply(sts, FIELD_MANAGER, true).await.map(|_| ())
}

/// `constructLeaderStatefulSetApplyConfiguration`.
pub fn construct_leader_statefulset_apply_configuration(
    lws: &LeaderWorkerSet,
    partition: i32,
    replicas: i32,
    revision_key: &str,
) -> Result<StatefulSet> {
    let name = lws.name().to_string();
    let mut template: PodTemplateSpec = lws.leader_template().clone();
    let tmeta = template.metadata.get_or_insert_with(ObjectMeta::default);
    let labels = tmeta.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(keys::WORKER_INDEX.into(), "0".into());
    labels.insert(keys::SET_NAME.into(), name.clone());
    labels.insert(keys::TEMPLATE_REVISION_HASH.into(), revision_key.into());
    let annotations = tmeta.annotations.get_or_insert_with(BTreeMap::new);
    annotations.extend(pod_annotations(lws));
    let (max_surge, max_unavailable) = scaled_knobs(lws)?;
    // At least 1: also covers replicas 0 and the 0/0 the webhook rejects.
    let sts_max_unavailable = (max_unavailable + max_surge).max(1);
    let sts_labels = [
        (keys::SET_NAME.to_string(), name.clone()),
        (
            keys::TEMPLATE_REVISION_HASH.to_string(),
            revision_key.to_string(),
        ),
    ];
    let sts_annotations = [(keys::REPLICAS.to_string(), lws.replicas().to_string())];
    let pvcs = utils::get_pvc_apply_configuration(lws);
    let strategy_type = lws
        .spec
        .rollout_strategy
        .as_ref()
        .map(|s| s.type_.clone())
        .filter(|t| !t.is_empty());
    Ok(StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(lws.namespace().to_string()),
            labels: utils::merge_metadata(lws.metadata.labels.as_ref(), sts_labels.into()),
            annotations: utils::merge_metadata(
                lws.metadata.annotations.as_ref(),
                sts_annotations.into(),
            ),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            service_name: Some(name.clone()),
            replicas: Some(replicas),
            pod_management_policy: Some("Parallel".into()),
            template,
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: strategy_type,
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    max_unavailable: Some(IntOrString::Int(sts_max_unavailable)),
                    partition: Some(partition),
                }),
            }),
            selector: LabelSelector {
                match_labels: Some(
                    [
                        (keys::SET_NAME.to_string(), name),
                        (keys::WORKER_INDEX.to_string(), "0".to_string()),
                    ]
                    .into(),
                ),
                match_expressions: None,
            },
            volume_claim_templates: (!pvcs.is_empty()).then_some(pvcs),
            persistent_volume_claim_retention_policy: lws
                .spec
                .leader_worker_template
                .persistent_volume_claim_retention_policy
                .clone(),
            ..Default::default()
        },
        status: None,
    })
}

/// The leader pod template's annotations: size, exclusive topology, subgroup policy, and the
/// UniquePerReplica subdomain policy.
fn pod_annotations(lws: &LeaderWorkerSet) -> BTreeMap<String, String> {
    let mut a = BTreeMap::new();
    a.insert(keys::SIZE.to_string(), lws.size().to_string());
    let lws_annotation = |k: &str| k8s::annotation(&lws.metadata, k).filter(|v| !v.is_empty());
    if let Some(t) = lws_annotation(keys::EXCLUSIVE_TOPOLOGY) {
        a.insert(keys::EXCLUSIVE_TOPOLOGY.to_string(), t.to_string());
    }
    if let Some(p) = &lws.spec.leader_worker_template.sub_group_policy {
        let policy_type = p.sub_group_policy_type.clone().unwrap_or_default();
        a.insert(keys::SUBGROUP_POLICY_TYPE.to_string(), policy_type);
        let size = p.sub_group_size.unwrap_or(0);
        a.insert(keys::SUBGROUP_SIZE_V0_10.to_string(), size.to_string());
        if let Some(t) = lws_annotation(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
            a.insert(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY.to_string(), t.to_string());
        }
    }
    if subdomain_policy(lws) == Some("UniquePerReplica") {
        a.insert(
            keys::SUBDOMAIN_POLICY.to_string(),
            "UniquePerReplica".into(),
        );
    }
    a
}

/// `updateStatus`: replicas, observedGeneration, the HPA selector and the conditions, written
/// with one `Status().Update` when anything changed. Returns `updateDone`.
async fn update_status<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    revision_key: &str,
) -> Result<bool> {
    let sts = c.get::<StatefulSet>(lws.namespace(), lws.name()).await?;
    let mut lws = lws.clone();
    let hpa_selector = format!("{}={},{}=0", keys::SET_NAME, lws.name(), keys::WORKER_INDEX);
    let generation = lws.metadata.generation.unwrap_or(0);
    let status = lws.status.get_or_insert_with(Default::default);
    let mut update_status = false;
    let replicas = sts.status.as_ref().map_or(0, |s| s.replicas);
    if status.replicas != replicas {
        status.replicas = replicas;
        update_status = true;
    }
    if status.observed_generation.unwrap_or(0) != generation {
        status.observed_generation = Some(generation);
        update_status = true;
    }
    if status.hpa_pod_selector.as_deref().unwrap_or("").is_empty() {
        status.hpa_pod_selector = Some(hpa_selector);
        update_status = true;
    }
    let (update_conditions, update_done) =
        update_conditions(c, ctx, &mut lws, revision_key).await?;
    if update_status || update_conditions {
        c.update_status(lws).await?;
    }
    Ok(update_done)
}

/// The counts of `updateConditions`' loop over leader pods.
#[derive(Default)]
struct Counts {
    ready: i32,
    updated: i32,
    ready_non_burst: i32,
    partitioned_updated_non_burst: i32,
    partitioned_current_non_burst: i32,
    partitioned_updated_and_ready: i32,
}

/// `updateConditions`: ready and updated counts over leader pods (a group whose worker
/// StatefulSet is missing is skipped), and the one condition, of Available, Progressing and
/// UpdateInProgress, the counts ask for. Returns `(changed, updateDone)`.
async fn update_conditions<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &mut LeaderWorkerSet,
    revision_key: &str,
) -> Result<(bool, bool)> {
    let pods = c
        .list::<Pod>(
            lws.namespace(),
            &[(keys::SET_NAME, lws.name()), (keys::WORKER_INDEX, "0")],
        )
        .await?;
    let no_worker_sts = lws.size() == 1;
    let lws_partition = lws_partition(lws);
    let replicas = lws.replicas();
    let mut n = Counts::default();
    for pod in pods {
        let label = k8s::label(&pod.metadata, keys::GROUP_INDEX).unwrap_or("");
        let index: i32 = label.parse().map_err(|_| {
            Error::internal(format!("strconv.Atoi: parsing {label:?}: invalid syntax"))
        })?;
        let sts = if no_worker_sts {
            None
        } else {
            match c
                .get::<StatefulSet>(lws.namespace(), k8s::name(&pod.metadata))
                .await
            {
                Ok(s) => Some(s),
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e),
            }
        };
        let partitioned = index < replicas && index >= lws_partition;
        if partitioned {
            n.partitioned_current_non_burst += 1;
        }
        let sts_ready = sts
            .as_deref()
            .is_none_or(|s| statefulset_ready(s, ctx.flags));
        let ready = sts_ready && pod_running_and_ready(&pod, ctx.flags);
        n.ready += i32::from(ready);
        let sts_updated = sts
            .as_deref()
            .is_none_or(|s| get_revision_key(&s.metadata) == revision_key);
        let updated = sts_updated && get_revision_key(&pod.metadata) == revision_key;
        n.updated += i32::from(updated);
        n.partitioned_updated_non_burst += i32::from(updated && partitioned);
        if index < replicas {
            n.ready_non_burst += i32::from(ready);
            n.partitioned_updated_and_ready += i32::from(partitioned && ready && updated);
        }
    }
    let generation = lws.metadata.generation.unwrap_or(0);
    let status = lws.status.get_or_insert_with(Default::default);
    let mut update_status = false;
    if status.ready_replicas != n.ready {
        status.ready_replicas = n.ready;
        update_status = true;
    }
    if status.updated_replicas != n.updated {
        status.updated_replicas = n.updated;
        update_status = true;
    }
    let types: &[&str] = if n.partitioned_updated_non_burst < n.partitioned_current_non_burst {
        &[UPDATE_IN_PROGRESS, PROGRESSING]
    } else if n.ready_non_burst == replicas
        && n.partitioned_updated_and_ready == n.partitioned_current_non_burst
    {
        &[AVAILABLE]
    } else {
        &[PROGRESSING]
    };
    let conditions: Vec<Condition> = types
        .iter()
        .map(|t| make_condition(t, generation, ctx))
        .collect();
    let update_done = lws_partition == 0 && n.partitioned_updated_and_ready == replicas;
    let first = conditions[0].clone();
    let update_condition = set_conditions(&mut status.conditions, conditions, generation, ctx);
    if update_condition {
        let msg = format!(
            "{}, with {} groups ready of total {replicas} groups",
            first.message, n.ready
        );
        c.eventf(&*lws, None, "Normal", &first.reason, UPDATE, &msg);
    }
    Ok((update_status || update_condition, update_done))
}

/// `makeCondition`.
pub fn make_condition(type_: &str, generation: i64, ctx: &Ctx<'_>) -> Condition {
    let (reason, message) = match type_ {
        AVAILABLE => ("AllGroupsReady", "All replicas are ready"),
        UPDATE_IN_PROGRESS => (GROUPS_UPDATING, "Rolling Upgrade is in progress"),
        _ => (GROUPS_PROGRESSING, "Replicas are progressing"),
    };
    let type_ = if matches!(type_, AVAILABLE | UPDATE_IN_PROGRESS) {
        type_
    } else {
        PROGRESSING
    };
    Condition {
        type_: type_.to_string(),
        status: "True".into(),
        last_transition_time: ctx.now.clone(),
        observed_generation: Some(generation),
        reason: reason.into(),
        message: message.into(),
    }
}

/// `setConditions`: a short-circuiting fold of `setCondition`, then every condition stamped
/// with the current generation.
pub fn set_conditions(
    conditions: &mut Vec<Condition>,
    new: Vec<Condition>,
    generation: i64,
    ctx: &Ctx<'_>,
) -> bool {
    let mut should_update = false;
    for c in new {
        should_update = should_update || set_condition(conditions, c, ctx);
    }
    for c in conditions.iter_mut() {
        if c.observed_generation.unwrap_or(0) != generation {
            c.observed_generation = Some(generation);
            should_update = true;
        }
    }
    should_update
}

/// `setCondition`: replace a condition of the same type whose status or generation differs;
/// set a True exclusive partner to False; append when missing and True.
pub fn set_condition(conditions: &mut Vec<Condition>, new: Condition, ctx: &Ctx<'_>) -> bool {
    let mut found = false;
    let mut should_update = false;
    for c in conditions.iter_mut() {
        if c.type_ == new.type_ {
            if c.status != new.status || c.observed_generation != new.observed_generation {
                *c = new.clone();
                should_update = true;
            }
            found = true;
        } else if exclusive_condition_types(&c.type_, &new.type_)
            && new.status == "True"
            && c.status == "True"
        {
            c.status = "False".into();
            c.last_transition_time = ctx.now.clone();
            c.observed_generation = new.observed_generation;
            should_update = true;
        }
    }
    if new.status == "True" && !found {
        conditions.push(new);
        should_update = true;
    }
    should_update
}

/// `exclusiveConditionTypes`: Available excludes Progressing and UpdateInProgress.
pub fn exclusive_condition_types(a: &str, b: &str) -> bool {
    matches!(
        (a, b),
        (AVAILABLE, PROGRESSING)
            | (PROGRESSING, AVAILABLE)
            | (AVAILABLE, UPDATE_IN_PROGRESS)
            | (UPDATE_IN_PROGRESS, AVAILABLE)
    )
}
