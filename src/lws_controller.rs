//! The LeaderWorkerSet reconciler, v0.3.0 and v0.4.1 (lws `pkg/controllers/leaderworkerset_controller.go`
//! at v0.3.0 = V3 and at 84da957 = FX; see docs/fidelity.md). One call of `reconcile` is one reconcile of
//! one key; every `Client` call inside it is a point where the world may interleave.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec,
    StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec, Service, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Action, Client, Error, Resource, Result};
use crate::hash::template_hash;
use crate::k8s;
use crate::profile::{Flags, MissingWorkerSts, PartitionFormula, StatusSource, WorkerStsReady};
use crate::rollout::{self, GroupStatus, Knobs, LeaderSts, ReplicaState};

pub const FIELD_MANAGER: &str = "lws";

/// What a reconcile needs besides the client: the release's flags and the time to stamp on
/// conditions (passed in: the reconcilers read no clock).
pub struct Ctx<'a> {
    pub flags: &'a Flags,
    pub now: Time,
}

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
    if ctx.flags.deleting_lws_returns && k8s::is_terminating(&lws.metadata) {
        return Ok(Action::done());
    }
    if ctx.flags.foreign_leader_sts_waits && leader_sts_of_another(c, &lws).await? {
        return Ok(Action::requeue_after(5_000));
    }
    let hash = template_hash(&lws, ctx.flags.network_config);
    if ctx.flags.worker_template_from_revision {
        ensure_revision(c, &lws, &hash).await?;
    }
    let (partition, replicas) = rolling_update_parameters(c, ctx, &lws, &hash).await?;
    let sts = leader_statefulset(&lws, &hash, partition, replicas, ctx.flags);
    c.apply(sts, FIELD_MANAGER, true).await?;
    if subdomain_policy(&lws, ctx.flags) != "UniquePerReplica" {
        create_headless_service_if_missing(c, &lws).await?;
    }
    update_status(c, ctx, &lws, &hash).await?;
    Ok(Action::done())
}

/// Z11's proposed fix (not upstream; the v0.10.0 port has it too): whether the leader
/// StatefulSet exists and another object (an earlier LWS of this name, deleted) controls it.
/// The reconcile then leaves it to the garbage collector instead of applying over it. A cache
/// read: the predecessor's StatefulSet is long in the cache, and under `leader-sts-read=live`
/// the partition's read stays the reconcile's one live read (as in the v0.10.0 port, where one
/// read serves both).
async fn leader_sts_of_another<C: Client>(c: &C, lws: &LeaderWorkerSet) -> Result<bool> {
    match c.get::<StatefulSet>(lws.namespace(), lws.name()).await {
        Ok(sts) => Ok(controlled_by_another(&sts, lws)),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether an object other than `lws` is `sts`'s controller (Z11's fix, both ports).
pub(crate) fn controlled_by_another(sts: &StatefulSet, lws: &LeaderWorkerSet) -> bool {
    k8s::controller_of(&sts.metadata).is_some_and(|o| o.uid != k8s::uid(&lws.metadata))
}

/// Store the current templates as a revision if none exists for this hash (B02 fix).
async fn ensure_revision<C: Client>(c: &C, lws: &LeaderWorkerSet, hash: &str) -> Result<()> {
    let name = crate::revision::name(lws.name(), hash);
    match c.get::<ControllerRevision>(lws.namespace(), &name).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => {
            match c.create(crate::revision::new_revision(lws, hash)).await {
                Ok(_) => Ok(()),
                Err(e) if e.is_already_exists() => Ok(()),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

fn subdomain_policy(lws: &LeaderWorkerSet, flags: &Flags) -> String {
    if !flags.network_config {
        return "Shared".into();
    }
    lws.spec
        .network_config
        .as_ref()
        .and_then(|n| n.subdomain_policy.clone())
        .unwrap_or_else(|| "Shared".into())
}

/// The scaled knobs: MS rounded up and clamped to R, MU rounded down (V3 lwsc:231-239, 286).
pub fn knobs(lws: &LeaderWorkerSet) -> Result<Knobs> {
    let r = lws.replicas();
    let ru = lws.rolling_update();
    let ms = ru.max_surge.unwrap_or(IntOrString::Int(0));
    let mu = ru.max_unavailable.unwrap_or(IntOrString::Int(1));
    let ms = k8s::scaled_value(&ms, r, true)
        .map_err(Error::internal)?
        .max(0)
        .min(r);
    let mu = k8s::scaled_value(&mu, r, false).map_err(Error::internal)?;
    Ok(Knobs {
        replicas: r,
        max_unavailable: mu,
        max_surge: ms,
        surge_release_by_max_unavailable: false,
        partition: PartitionFormula::Tail,
        scale_up_keeps_surge: false,
        rescale_holds_old: false,
    })
}

async fn rolling_update_parameters<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    hash: &str,
) -> Result<(i32, i32)> {
    let k = Knobs {
        surge_release_by_max_unavailable: ctx.flags.surge_release_by_max_unavailable,
        partition: ctx.flags.partition,
        scale_up_keeps_surge: ctx.flags.scale_up_keeps_surge,
        rescale_holds_old: ctx.flags.rescale_holds_old,
        ..knobs(lws)?
    };
    let sts = if ctx.flags.leader_sts_read_live {
        // Not upstream: Z06's fix reads its own last write back.
        c.get_live::<StatefulSet>(lws.namespace(), lws.name()).await
    } else {
        c.get::<StatefulSet>(lws.namespace(), lws.name()).await
    };
    let sts = match sts {
        Ok(s) => Some(s),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e),
    };
    let view = sts.as_deref().map(leader_view);
    if let Some(r) = rollout::early_parameters(&k, view.as_ref(), hash) {
        return Ok(r);
    }
    let view = view.expect("case 1 covers a missing sts");
    let states = replica_states(c, ctx, lws, hash, view.replicas).await?;
    rollout::late_parameters(&k, &view, &states).map_err(Error::internal)
}

fn leader_view(sts: &StatefulSet) -> LeaderSts {
    LeaderSts {
        replicas: sts.spec.replicas.unwrap_or(1),
        partition: sts
            .spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.rolling_update.as_ref())
            .and_then(|r| r.partition)
            .unwrap_or(0),
        hash: k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH)
            .unwrap_or("")
            .to_string(),
        replicas_annotation: k8s::annotation(&sts.metadata, keys::REPLICAS).map(str::to_string),
        old_pods: old_pod_count(sts),
    }
}

/// Not upstream (Z08's fix reads it): how many pods, not being deleted, still run the
/// StatefulSet's old revision: `currentReplicas` while the status names two revisions (it
/// counts created, non-terminating pods of `currentRevision`: kubernetes
/// pkg/controller/statefulset/stateful_set_control.go, `computeReplicaStatus`). The names alone
/// are not enough: `currentRevision` moves only once every pod is updated and ready, so they
/// differ while the last old group is already recreated and starting. A rolling update walks
/// down from the highest ordinal, so these pods hold the lowest ordinals.
pub fn old_pod_count(sts: &StatefulSet) -> i32 {
    sts.status.as_ref().map_or(0, |s| {
        if s.current_revision != s.update_revision {
            s.current_replicas.unwrap_or(0).max(0)
        } else {
            0
        }
    })
}

/// `StatefulsetReady` (V3 stsu:48-51), or availability with PR #705.
pub fn statefulset_ready(sts: &StatefulSet, readiness: WorkerStsReady) -> bool {
    let default = StatefulSetStatus::default();
    let st = sts.status.as_ref().unwrap_or(&default);
    let counted = match readiness {
        WorkerStsReady::Exists => st.replicas,
        WorkerStsReady::Available => st.available_replicas.unwrap_or(0),
    };
    sts.spec.replicas.unwrap_or(1) == counted && st.current_revision == st.update_revision
}

/// A leader pod counts as ready when Running and Ready (upstream `PodRunningAndReady`), and,
/// with the proposed Z02 fix, not terminating.
fn leader_ready(pod: &Pod, flags: &Flags) -> bool {
    k8s::is_running_and_ready(pod)
        && !(flags.terminating_not_ready && k8s::is_terminating(&pod.metadata))
}

/// `StatefulsetReady` under the release's flags; the proposed Z02 fix also asks that every pod
/// be a non-terminating one on the update revision (`status.updatedReplicas`).
fn worker_sts_ready(sts: &StatefulSet, flags: &Flags) -> bool {
    let updated = sts
        .status
        .as_ref()
        .and_then(|s| s.updated_replicas)
        .unwrap_or(0);
    statefulset_ready(sts, flags.worker_sts_ready)
        && !(flags.terminating_not_ready && updated != sts.spec.replicas.unwrap_or(1))
}

/// Place objects by their group-index label into `[0, len)`; others are dropped (V3 utils:49-67).
fn by_group_index<K: Resource>(objects: Vec<Arc<K>>, len: i32) -> Vec<Option<Arc<K>>> {
    let mut out = vec![None; len.max(0) as usize];
    for o in objects {
        let index = k8s::label(o.meta(), keys::GROUP_INDEX).and_then(|v| v.parse::<i32>().ok());
        if let Some(i) = index.filter(|i| (0..len).contains(i)) {
            out[i as usize] = Some(o);
        }
    }
    out
}

/// `iterateReplicas` (V3 lwsc:481-543) / `getReplicaStates` (HD lwsc:582-647): the state of
/// each group index in `[0, S)`. A slot whose leader or worker StatefulSet is missing or
/// misnamed is neither ready nor updated; `ready && updated` is V3/FX's `readyAndUpdated`.
async fn replica_states<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    hash: &str,
    s: i32,
) -> Result<Vec<ReplicaState>> {
    let name = lws.name();
    let pods = c
        .list::<Pod>(
            lws.namespace(),
            &[(keys::SET_NAME, name), (keys::WORKER_INDEX, "0")],
        )
        .await?;
    let sets = c
        .list::<StatefulSet>(lws.namespace(), &[(keys::SET_NAME, name)])
        .await?;
    let pods = by_group_index(pods, s);
    let sets = by_group_index(sets, s);
    let no_worker_sts = ctx.flags.size_one_skips_worker_sts && lws.size() == 1;
    let current = |meta: &ObjectMeta| k8s::label(meta, keys::TEMPLATE_REVISION_HASH) == Some(hash);
    Ok((0..s as usize)
        .map(|i| {
            let named = |meta: &ObjectMeta| is_group_name(k8s::name(meta), name, i);
            let Some(pod) = pods[i].as_ref().filter(|p| named(&p.metadata)) else {
                return ReplicaState::default();
            };
            let pod_ready = leader_ready(pod, ctx.flags);
            if no_worker_sts {
                return ReplicaState {
                    ready: pod_ready,
                    updated: current(&pod.metadata),
                };
            }
            let Some(sts) = sets[i].as_ref().filter(|x| named(&x.metadata)) else {
                return ReplicaState::default();
            };
            ReplicaState {
                ready: pod_ready && worker_sts_ready(sts, ctx.flags),
                updated: current(&pod.metadata) && current(&sts.metadata),
            }
        })
        .collect())
}

/// Whether `got` is `fmt.Sprintf("%s-%d", set, index)`, without building the name (this runs for
/// every group on every reconcile).
fn is_group_name(got: &str, set: &str, index: usize) -> bool {
    got.strip_prefix(set)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|digits| digits == itoa::Buffer::new().format(index))
}

/// `constructLeaderStatefulSetApplyConfiguration` (V3 lwsc:538-600; FX adds the subdomain
/// policy annotation).
pub fn leader_statefulset(
    lws: &LeaderWorkerSet,
    hash: &str,
    partition: i32,
    replicas: i32,
    flags: &Flags,
) -> StatefulSet {
    let name = lws.name().to_string();
    let mut template: PodTemplateSpec = lws.leader_template().clone();
    let tmeta = template.metadata.get_or_insert_with(ObjectMeta::default);
    let labels = tmeta.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(keys::WORKER_INDEX.into(), "0".into());
    labels.insert(keys::SET_NAME.into(), name.clone());
    labels.insert(keys::TEMPLATE_REVISION_HASH.into(), hash.to_string());
    let annotations = tmeta.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(keys::SIZE.into(), lws.size().to_string());
    add_topology_annotations(lws, annotations);
    if subdomain_policy(lws, flags) == "UniquePerReplica" {
        annotations.insert(keys::SUBDOMAIN_POLICY.into(), "UniquePerReplica".into());
    }
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(lws.namespace().to_string()),
            labels: Some(
                [
                    (keys::SET_NAME.to_string(), name.clone()),
                    (keys::TEMPLATE_REVISION_HASH.to_string(), hash.to_string()),
                ]
                .into(),
            ),
            annotations: Some([(keys::REPLICAS.to_string(), lws.replicas().to_string())].into()),
            owner_references: Some(vec![k8s::controller_ref(
                crate::api::API_VERSION,
                crate::api::KIND,
                &lws.metadata,
            )]),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            pod_management_policy: Some("Parallel".into()),
            service_name: Some(name.clone()),
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
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(partition),
                    max_unavailable: leader_max_unavailable(lws, flags),
                }),
            }),
            template,
            ..Default::default()
        },
        status: None,
    }
}

/// The leader StatefulSet's `maxUnavailable`: the LWS value verbatim in V3 and FX (V3
/// lwsc:590-592), so 0 (valid for an LWS with a surge) is rejected by the StatefulSet API where
/// MaxUnavailableStatefulSet is on (bug B13); with PR #781 (d4d6b17), `max(1, MU + MS)` of the
/// scaled knobs, so surge groups being created do not eat the budget (HD lwsc:775ff).
fn leader_max_unavailable(lws: &LeaderWorkerSet, flags: &Flags) -> Option<IntOrString> {
    if !flags.leader_max_unavailable_budget {
        return lws.rolling_update().max_unavailable;
    }
    let k = knobs(lws).ok()?;
    Some(IntOrString::Int((k.max_unavailable + k.max_surge).max(1)))
}

/// The exclusive-topology annotations copied from the LWS metadata to pod templates.
pub fn add_topology_annotations(lws: &LeaderWorkerSet, annotations: &mut BTreeMap<String, String>) {
    if let Some(t) =
        k8s::annotation(&lws.metadata, keys::EXCLUSIVE_TOPOLOGY).filter(|t| !t.is_empty())
    {
        annotations.insert(keys::EXCLUSIVE_TOPOLOGY.into(), t.to_string());
    }
    if let Some(sgs) = lws
        .spec
        .leader_worker_template
        .sub_group_policy
        .as_ref()
        .and_then(|p| p.sub_group_size)
    {
        annotations.insert(keys::SUBGROUP_SIZE.into(), sgs.to_string());
        if let Some(t) = k8s::annotation(&lws.metadata, keys::SUBGROUP_EXCLUSIVE_TOPOLOGY) {
            annotations.insert(keys::SUBGROUP_EXCLUSIVE_TOPOLOGY.into(), t.to_string());
        }
    }
}

/// The shared headless Service, created when missing and never updated (V3 lwsc:124-156).
async fn create_headless_service_if_missing<C: Client>(c: &C, lws: &LeaderWorkerSet) -> Result<()> {
    match c.get::<Service>(lws.namespace(), lws.name()).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    let svc = headless_service(
        lws.name(),
        lws.namespace(),
        [(keys::SET_NAME, lws.name())],
        k8s::controller_ref(crate::api::API_VERSION, crate::api::KIND, &lws.metadata),
    );
    c.create(svc).await.map(|_| ()).inspect_err(|e| {
        c.event(
            &*lws,
            "Warning",
            "FailedCreate",
            &format!("Failed to create headless service: {}", e.message),
        );
    })
}

pub fn headless_service<'a>(
    name: &str,
    namespace: &str,
    selector: impl IntoIterator<Item = (&'a str, &'a str)>,
    owner: k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".into()),
            selector: Some(
                selector
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            publish_not_ready_addresses: Some(true),
            ..Default::default()
        }),
        status: None,
    }
}

/// `updateStatus` + `updateConditions`: one `Status().Update` when anything changed, built on
/// the LWS read at the start of the reconcile (a stale one gets a Conflict).
async fn update_status<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &Arc<LeaderWorkerSet>,
    hash: &str,
) -> Result<()> {
    let sts = c.get::<StatefulSet>(lws.namespace(), lws.name()).await?;
    let mut status = lws.status.clone().unwrap_or_default();
    let before = status.clone();
    status.replicas = sts.status.as_ref().map(|s| s.replicas).unwrap_or(0);
    if status.hpa_pod_selector.as_deref().unwrap_or("").is_empty() {
        status.hpa_pod_selector = Some(format!(
            "{}={},{}=0",
            keys::SET_NAME,
            lws.name(),
            keys::WORKER_INDEX
        ));
    }
    let groups = group_statuses(c, ctx, lws, hash).await?;
    let summary = rollout::summarize(&groups, lws.replicas());
    status.ready_replicas = summary.ready_replicas;
    status.updated_replicas = summary.updated_replicas;
    let wanted = summary
        .conditions
        .iter()
        .map(|t| rollout::condition(t, ctx.now.clone()))
        .collect();
    let conditions_changed = rollout::set_conditions(
        &mut status.conditions,
        wanted,
        ctx.flags.exclusive_conditions_flip,
    );
    if conditions_changed {
        let first = status
            .conditions
            .iter()
            .find(|c| c.type_ == summary.conditions[0])
            .map(|c| (c.reason.clone(), c.message.clone()));
        if let Some((reason, message)) = first {
            let msg = format!(
                "{message}, with {} groups ready of total {} groups",
                summary.ready_non_burst,
                lws.replicas()
            );
            c.event(&**lws, "Normal", &reason, &msg);
        }
    }
    if status == before {
        return Ok(());
    }
    // The read LWS with the new status (its old status is not copied only to be replaced).
    let updated = LeaderWorkerSet {
        api_version: lws.api_version.clone(),
        kind: lws.kind.clone(),
        metadata: lws.metadata.clone(),
        spec: lws.spec.clone(),
        status: Some(status),
    };
    c.update_status(updated).await.map(|_| ())
}

/// Per-group readiness for the status, from worker StatefulSets (V3) or leader pods (FX).
async fn group_statuses<C: Client>(
    c: &C,
    ctx: &Ctx<'_>,
    lws: &LeaderWorkerSet,
    hash: &str,
) -> Result<Vec<GroupStatus>> {
    let ns = lws.namespace();
    let name = lws.name();
    let mut out = Vec::new();
    match ctx.flags.status_source {
        StatusSource::WorkerSts => {
            for sts in c.list::<StatefulSet>(ns, &[(keys::SET_NAME, name)]).await? {
                if k8s::name(&sts.metadata) == name {
                    continue;
                }
                let index = group_index(&sts.metadata)?;
                let leader = c.get::<Pod>(ns, k8s::name(&sts.metadata)).await?;
                out.push(GroupStatus {
                    index,
                    ready: worker_sts_ready(&sts, ctx.flags) && leader_ready(&leader, ctx.flags),
                    updated: k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH) == Some(hash)
                        && k8s::label(&leader.metadata, keys::TEMPLATE_REVISION_HASH) == Some(hash),
                });
            }
        }
        StatusSource::LeaderPods => {
            let no_worker_sts = ctx.flags.size_one_skips_worker_sts && lws.size() == 1;
            for pod in c
                .list::<Pod>(ns, &[(keys::SET_NAME, name), (keys::WORKER_INDEX, "0")])
                .await?
            {
                let index = group_index(&pod.metadata)?;
                let pod_updated =
                    k8s::label(&pod.metadata, keys::TEMPLATE_REVISION_HASH) == Some(hash);
                if no_worker_sts {
                    out.push(GroupStatus {
                        index,
                        ready: leader_ready(&pod, ctx.flags),
                        updated: pod_updated,
                    });
                    continue;
                }
                let sts = match c.get::<StatefulSet>(ns, k8s::name(&pod.metadata)).await {
                    Ok(sts) => sts,
                    Err(e) if e.is_not_found() => match ctx.flags.missing_worker_sts {
                        MissingWorkerSts::Error => return Err(e),
                        // B18: counted as a current group, never as updated.
                        MissingWorkerSts::Count => {
                            out.push(GroupStatus {
                                index,
                                ready: false,
                                updated: false,
                            });
                            continue;
                        }
                        MissingWorkerSts::Skip => continue,
                    },
                    Err(e) => return Err(e),
                };
                out.push(GroupStatus {
                    index,
                    ready: leader_ready(&pod, ctx.flags) && worker_sts_ready(&sts, ctx.flags),
                    updated: pod_updated
                        && k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH) == Some(hash),
                });
            }
        }
    }
    Ok(out)
}

fn group_index(meta: &ObjectMeta) -> Result<i32> {
    let v = k8s::label(meta, keys::GROUP_INDEX).unwrap_or("");
    v.parse()
        .map_err(|_| Error::internal(format!("strconv.Atoi: parsing {v:?}: invalid syntax")))
}

#[cfg(test)]
mod tests {
    use super::is_group_name;

    #[test]
    fn group_names_are_the_set_name_dash_the_decimal_index() {
        assert!(is_group_name("lws-0", "lws", 0));
        assert!(is_group_name("lws-17", "lws", 17));
        assert!(is_group_name("a-b-4096", "a-b", 4096));
        assert!(is_group_name(&format!("s-{}", usize::MAX), "s", usize::MAX));
        assert!(!is_group_name("lws-017", "lws", 17));
        assert!(!is_group_name("lws-1", "lws", 17));
        assert!(!is_group_name("lws-170", "lws", 17));
        assert!(!is_group_name("lws17", "lws", 17));
        assert!(!is_group_name("lwsx-17", "lws", 17));
        assert!(!is_group_name("other-17", "lws", 17));
        assert!(!is_group_name("lws-", "lws", 0));
    }
}
