//! `pkg/controllers/disaggregatedset/executor.go` at v0.10.0: the rolling-update executor of a
//! DisaggregatedSet, function by function (names in each doc comment). It reads the slice's
//! LeaderWorkerSets, asks the planner (`super::planner`) for the next step, and scales the new
//! revision up and the old revisions down to it, newest old revision first.
//!
//! Upstream's `RollingUpdateExecutor` holds only the client, the recorder and the LWS manager,
//! so its methods are free functions taking the client first. Go's `map[string]bool` role sets
//! (only ever `true`) are `BTreeSet<String>`; other Go maps are `BTreeMap`s, iterated in key
//! order where Go's is random. Log calls are dropped, with `buildStepLogArgs` (log arguments
//! only).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

use super::api::{DisaggregatedRoleSpec, DisaggregatedSet, DisaggregatedSetRoleScaler};
use super::lws_manager::{self, get_lws_replicas};
use super::planner::{
    compute_next_step, default_rolling_update_config, RoleReplicaState, RollingUpdateConfig,
};
use super::utils::{self, CreateParams, RevisionRoles};
use super::{wrap, Fixes};
use crate::client::{Action, Client, Result};
use crate::k8s;

/// Event reasons (executor.go:36-42).
pub const EVENT_REASON_ROLLING_UPDATE_STARTED: &str = "RollingUpdateStarted";
pub const EVENT_REASON_ROLLING_UPDATE_COMPLETED: &str = "RollingUpdateCompleted";
pub const EVENT_REASON_SCALING_UP: &str = "ScalingUp";
pub const EVENT_REASON_SCALING_DOWN: &str = "ScalingDown";
pub const EVENT_REASON_LWS_DELETED: &str = "LWSDeleted";

/// Upstream's `RequeueAfter: time.Second`.
const ONE_SECOND_MS: u64 = 1000;

/// `ReconcileRollingUpdateNew` (executor.go:50-85): nothing to do without old revisions;
/// otherwise start a rolling update when the target revision has no LWS yet, else take the
/// in-progress update's next step.
pub async fn reconcile_rolling_update_new(
    c: &impl Client,
    fixes: Fixes,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    scalers: &BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>,
) -> Result<Action> {
    let role_names = utils::get_role_names(ds);
    let role_configs = utils::get_role_configs(ds);
    let (old_revisions, new_revision) =
        lws_manager::get_revision_roles_list(c, ds.namespace(), ds.name(), slice, revision).await?;
    if old_revisions.is_empty() {
        return Ok(Action::done());
    }
    // Upstream only logs the roles added and removed.
    let _ = detect_role_changes(&role_names, &old_revisions);
    let Some(new_revision) = new_revision else {
        return init_rolling_update(
            c,
            ds,
            slice,
            revision,
            &role_names,
            &role_configs,
            &old_revisions,
        )
        .await;
    };
    // Upstream creates the new revision's LWSs only here, in `initRollingUpdate`, while no
    // new-revision LWS exists; one that is missing later is waited for forever (Z09).
    let partial = role_names
        .iter()
        .any(|r| !new_revision.roles.contains_key(r));
    if fixes.complete_partial_revision && partial {
        return create_new_revision(c, ds, slice, revision, &role_names, &role_configs).await;
    }
    reconcile_rolling_update(c, ds, slice, &old_revisions, &new_revision, scalers).await
}

/// The second half of `initRollingUpdate` (executor.go:119-126): each spec role's
/// new-revision LWS, created at 0 replicas where missing, then a requeue after a second. Z09's
/// proposed fix (`ds-partial-revision=complete`, not upstream) also calls it for a revision
/// whose creation was interrupted: the old LWSs' initial-replicas annotations need no rewrite,
/// as no old LWS is scaled before the new revision is complete and stable.
async fn create_new_revision(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    role_names: &[String],
    role_configs: &BTreeMap<String, &DisaggregatedRoleSpec>,
) -> Result<Action> {
    for role_name in role_names {
        let config = role_configs[role_name.as_str()];
        ensure_new_lws_exists(c, ds, slice, revision, role_name, config, 0).await?;
    }
    Ok(Action::requeue_after(ONE_SECOND_MS))
}

/// `initRollingUpdate` (executor.go:87-127): record every old LWS's current replicas in its
/// initial-replicas annotation (the planner's drain baseline, since `spec.replicas` moves
/// during the rollout; failures are only logged upstream), create each role's new-revision
/// LWS at 0 replicas, and requeue after a second.
async fn init_rolling_update(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    role_names: &[String],
    role_configs: &BTreeMap<String, &DisaggregatedRoleSpec>,
    old_revisions: &[RevisionRoles],
) -> Result<Action> {
    let msg = format!("Started rolling update to revision {revision}");
    c.eventf(
        ds,
        None,
        "Normal",
        EVENT_REASON_ROLLING_UPDATE_STARTED,
        "Update",
        &msg,
    );
    for old_grouped in old_revisions {
        for role_lws in old_grouped.roles.values() {
            let replicas = role_lws.spec.replicas.unwrap_or(1);
            // By the LWS's own name, so a legacy slice-0 LWS (no slice in its name) is found.
            let _ = lws_manager::set_initial_replicas(c, ds.namespace(), role_lws.name(), replicas)
                .await;
        }
    }
    create_new_revision(c, ds, slice, revision, role_names, role_configs).await
}

/// `ReconcileRollingUpdate` (executor.go:129-177): one step of an in-progress rolling update.
/// Wait (requeue after a second) until every spec role's new LWS is ready at its replicas, so
/// a step is not taken on top of an unfinished one; then plan the next step over the spec roles
/// and the removed roles still in old revisions, scale the new revision up and the old ones
/// down. No step left: the update is complete.
pub async fn reconcile_rolling_update(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    old_revisions: &[RevisionRoles],
    new_revision: &RevisionRoles,
    scalers: &BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>,
) -> Result<Action> {
    let spec_role_names = utils::get_role_names(ds);
    let (spec_role_set, old_role_set) = build_role_sets(&spec_role_names, old_revisions);
    let mut all_role_names = spec_role_names.clone();
    all_role_names.extend(removed_roles(&old_role_set, &spec_role_set));
    if !is_revision_stable(new_revision, &spec_role_names) {
        return Ok(Action::requeue_after(ONE_SECOND_MS));
    }
    let (initial_old, current_old, current_new, target_new) = build_planner_state(
        ds,
        &all_role_names,
        &spec_role_set,
        old_revisions,
        new_revision,
        scalers,
    );
    let config = extract_rolling_update_config(ds, &all_role_names, scalers);
    let Some(next_step) = compute_next_step(
        &initial_old,
        &current_old,
        &current_new,
        &target_new,
        &config,
    ) else {
        let msg = format!(
            "Completed rolling update to revision {}",
            new_revision.revision
        );
        c.eventf(
            ds,
            None,
            "Normal",
            EVENT_REASON_ROLLING_UPDATE_COMPLETED,
            "Update",
            &msg,
        );
        return Ok(Action::done());
    };
    scale_up_new(
        c,
        ds,
        slice,
        new_revision,
        &all_role_names,
        &spec_role_set,
        &current_new,
        &next_step.new,
    )
    .await?;
    scale_down_old(
        c,
        ds,
        old_revisions,
        &all_role_names,
        &current_old,
        &next_step.past,
    )
    .await?;
    Ok(Action::done())
}

/// `buildRoleSets` (executor.go:181-193): the spec's role names, and the roles present in any
/// old revision.
fn build_role_sets(
    spec_role_names: &[String],
    old_revisions: &[RevisionRoles],
) -> (BTreeSet<String>, BTreeSet<String>) {
    let spec: BTreeSet<String> = spec_role_names.iter().cloned().collect();
    let mut old = BTreeSet::new();
    for wl in old_revisions {
        for name in wl.roles.keys() {
            old.insert(name.clone());
        }
    }
    (spec, old)
}

/// `removedRoles` (executor.go:195-203): the old roles no longer in the spec (in name order;
/// Go's is random).
fn removed_roles(old_role_set: &BTreeSet<String>, spec_role_set: &BTreeSet<String>) -> Vec<String> {
    let mut removed = Vec::new();
    for role in old_role_set {
        if !spec_role_set.contains(role) {
            removed.push(role.clone());
        }
    }
    removed
}

/// `buildPlannerState` (executor.go:205-234): per role of `all_role_names`, the planner's
/// `(initial_old, current_old, current_new, target_new)`. Removed roles have no new side
/// (target 0). An External role's target never drops below its current new replicas while old
/// revisions remain, so an autoscaler lowering it mid-rollout does not shrink the new fleet
/// before the old one is drained.
fn build_planner_state(
    ds: &DisaggregatedSet,
    all_role_names: &[String],
    spec_role_set: &BTreeSet<String>,
    old_revisions: &[RevisionRoles],
    new_revision: &RevisionRoles,
    scalers: &BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>,
) -> (
    RoleReplicaState,
    RoleReplicaState,
    RoleReplicaState,
    RoleReplicaState,
) {
    let n = all_role_names.len();
    let mut initial_old = vec![0; n];
    let mut current_old = vec![0; n];
    let mut current_new = vec![0; n];
    let mut target_new = vec![0; n];
    for (i, role_name) in all_role_names.iter().enumerate() {
        initial_old[i] = utils::get_total_initial_replicas_per_role(old_revisions, role_name);
        current_old[i] = utils::get_total_replicas_per_role(old_revisions, role_name);
        if spec_role_set.contains(role_name) {
            if let Some(lws) = new_revision.roles.get(role_name) {
                current_new[i] = get_lws_replicas(lws);
            }
            target_new[i] = get_target_replicas(ds, role_name, scalers, current_new[i]);
            if is_external(ds, role_name)
                && !old_revisions.is_empty()
                && target_new[i] < current_new[i]
            {
                target_new[i] = current_new[i];
            }
        }
    }
    (initial_old, current_old, current_new, target_new)
}

/// `getTargetReplicas` (executor.go:236-257): the role's desired replicas. An External role
/// reads its scaler's `spec.replicas` (always set: the CRD defaults it to 0 and the controller
/// seeds it when creating the scaler), or keeps `current_new` while the scaler is missing; a
/// Static role has its `spec.replicas` (1 when unset); an unknown role 1.
pub(crate) fn get_target_replicas(
    ds: &DisaggregatedSet,
    role_name: &str,
    scalers: &BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>,
    current_new: i32,
) -> i32 {
    for p in &ds.spec.roles {
        if p.name != role_name {
            continue;
        }
        if is_external_role(p) {
            if let Some(s) = scalers.get(role_name) {
                return s.spec.replicas;
            }
            return current_new;
        }
        return p.spec.replicas.unwrap_or(1);
    }
    1
}

/// `isExternal` (executor.go:259-266): whether the spec's first role of that name scales
/// externally.
pub(crate) fn is_external(ds: &DisaggregatedSet, role_name: &str) -> bool {
    for p in &ds.spec.roles {
        if p.name == role_name {
            return is_external_role(p);
        }
    }
    false
}

/// `p.Scaling != nil && p.Scaling.Mode == RoleScalingExternal`.
fn is_external_role(p: &DisaggregatedRoleSpec) -> bool {
    p.scaling
        .as_ref()
        .is_some_and(|s| s.mode == super::api::SCALING_EXTERNAL)
}

/// `extractRollingUpdateConfig` (executor.go:268-300): per role of `all_role_names`, the
/// default (surge 1, unavailable 0) unless the role's `rolloutStrategy.rollingUpdateConfiguration`
/// sets values scaled against its target replicas (surge rounded up, unavailable down; a value
/// that does not scale counts 0). A positive unavailability takes both values (the surge may
/// then be 0); otherwise only a positive surge replaces the default.
fn extract_rolling_update_config(
    ds: &DisaggregatedSet,
    all_role_names: &[String],
    scalers: &BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>,
) -> Vec<RollingUpdateConfig> {
    let mut config = default_rolling_update_config(all_role_names.len());
    let role_index: BTreeMap<&str, usize> = all_role_names
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let zero = IntOrString::Int(0);
    for role in &ds.spec.roles {
        let rc = role
            .spec
            .rollout_strategy
            .as_ref()
            .and_then(|s| s.rolling_update_configuration.as_ref());
        let Some(rc) = rc else {
            continue;
        };
        // Go's map lookup: a name missing from the index reads 0.
        let i = role_index.get(role.name.as_str()).copied().unwrap_or(0);
        // For an External role, the scaler's value (0 without one: a percentage of 0 is 0).
        let replicas = get_target_replicas(ds, &role.name, scalers, 0);
        let max_surge = rc.max_surge.as_ref().unwrap_or(&zero);
        let max_unavailable = rc.max_unavailable.as_ref().unwrap_or(&zero);
        let surge = k8s::scaled_value(max_surge, replicas, true).unwrap_or(0);
        let unavail = k8s::scaled_value(max_unavailable, replicas, false).unwrap_or(0);
        if unavail > 0 {
            config[i].max_unavailable = unavail;
            config[i].max_surge = surge;
        } else if surge > 0 {
            config[i].max_surge = surge;
        }
    }
    config
}

/// `isRevisionStable` (executor.go:310-321): every named role has an LWS in the revision, ready
/// at its `spec.replicas`.
fn is_revision_stable(rev: &RevisionRoles, role_names: &[String]) -> bool {
    for name in role_names {
        let Some(lws) = rev.roles.get(name) else {
            return false;
        };
        let ready = lws.status.as_ref().map_or(0, |s| s.ready_replicas);
        if get_lws_replicas(lws) != ready {
            return false;
        }
    }
    true
}

/// `maxTimestamp` (executor.go:323-331): the revision's latest LWS creation time; `None` (Go's
/// zero time, earlier than any other) when no LWS has one.
fn max_timestamp(wl: &RevisionRoles) -> Option<Timestamp> {
    let mut max_ts: Option<Timestamp> = None;
    for lws in wl.roles.values() {
        let ts = lws.metadata.creation_timestamp.as_ref().map(|t| t.0);
        if ts > max_ts {
            max_ts = ts;
        }
    }
    max_ts
}

/// `sortByNewestTimestamp` (executor.go:333-342): the revisions, newest `max_timestamp` first
/// (as given when there are no role names); the input is left as is. Upstream's
/// `slices.SortFunc` is not stable; this sort is, so revisions created at the same time keep
/// their input order (upstream's pdqsort is an insertion sort, stable too, below 13 elements).
fn sort_by_newest_timestamp<'a>(
    revisions: &'a [RevisionRoles],
    role_names: &[String],
) -> Vec<&'a RevisionRoles> {
    let mut sorted: Vec<&RevisionRoles> = revisions.iter().collect();
    if role_names.is_empty() {
        return sorted;
    }
    sorted.sort_by_key(|r| Reverse(max_timestamp(r)));
    sorted
}

/// `scaleUpNew` (executor.go:346-369): scale each spec role's new-revision LWS up to `target`
/// where it is below, recording a ScalingUp event for each.
#[allow(clippy::too_many_arguments)]
async fn scale_up_new(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    new_revision: &RevisionRoles,
    all_role_names: &[String],
    spec_role_set: &BTreeSet<String>,
    current: &[i32],
    target: &[i32],
) -> Result<()> {
    for (i, name) in all_role_names.iter().enumerate() {
        if !spec_role_set.contains(name) || current[i] >= target[i] {
            continue;
        }
        let lws_name = utils::generate_name(ds.name(), slice, &new_revision.revision, name);
        lws_manager::scale(c, ds.namespace(), &lws_name, target[i])
            .await
            .map_err(|e| wrap(e, format!("failed to scale {lws_name}")))?;
        let msg = format!(
            "Scaling up {name} LWS {lws_name} from {} to {} replicas",
            current[i], target[i]
        );
        c.eventf(ds, None, "Normal", EVENT_REASON_SCALING_UP, "Update", &msg);
    }
    Ok(())
}

/// `scaleDownOld` (executor.go:371-440): drain `current - target` replicas per role from the old
/// revisions, newest first, until the budget is spent. Within a revision each role drains what
/// its budget allows; if that empties any role of the revision (coordinated drain), every role
/// of it drains to 0 so no revision is left with a role missing, and only the roles that
/// reached 0 on their own charge their budget.
async fn scale_down_old(
    c: &impl Client,
    ds: &DisaggregatedSet,
    old_revisions: &[RevisionRoles],
    role_names: &[String],
    current: &[i32],
    target: &[i32],
) -> Result<()> {
    let mut budget: Vec<i32> = (0..role_names.len())
        .map(|i| current[i] - target[i])
        .collect();
    for wl in sort_by_newest_timestamp(old_revisions, role_names) {
        if all_zero(&budget) {
            break;
        }
        let mut new_replicas: BTreeMap<&str, i32> = BTreeMap::new();
        let mut planned_drain: BTreeMap<&str, i32> = BTreeMap::new();
        let mut triggers_coordinated: BTreeSet<&str> = BTreeSet::new();
        for (i, name) in role_names.iter().enumerate() {
            let Some(lws) = wl.roles.get(name) else {
                continue;
            };
            let replicas = get_lws_replicas(lws);
            let drain = budget[i].min(replicas);
            planned_drain.insert(name, drain);
            new_replicas.insert(name, replicas - drain);
            if replicas - drain == 0 {
                triggers_coordinated.insert(name);
            }
        }
        let any_triggered = !triggers_coordinated.is_empty();
        if any_triggered {
            for name in role_names {
                if wl.roles.contains_key(name) {
                    new_replicas.insert(name, 0);
                }
            }
        }
        for (i, name) in role_names.iter().enumerate() {
            let Some(lws) = wl.roles.get(name) else {
                continue;
            };
            let replicas = get_lws_replicas(lws);
            let to = new_replicas[name.as_str()];
            if replicas <= to {
                continue;
            }
            // By the LWS's own name, so a legacy slice-0 LWS drains too.
            let lws_name = lws.name();
            lws_manager::scale(c, ds.namespace(), lws_name, to)
                .await
                .map_err(|e| wrap(e, format!("failed to scale {lws_name}")))?;
            let msg =
                format!("Scaling down {name} LWS {lws_name} from {replicas} to {to} replicas");
            c.eventf(
                ds,
                None,
                "Normal",
                EVENT_REASON_SCALING_DOWN,
                "Update",
                &msg,
            );
            if triggers_coordinated.contains(name.as_str()) || !any_triggered {
                budget[i] -= planned_drain[name.as_str()];
            }
        }
    }
    Ok(())
}

/// `allZero` (executor.go:442-449): no positive entry.
fn all_zero(s: &[i32]) -> bool {
    for &v in s {
        if v > 0 {
            return false;
        }
    }
    true
}

/// `ensureNewLWSExists` (executor.go:453-482): create the (slice, revision, role) LWS with
/// `initial_replicas` unless it exists; whether it was created.
async fn ensure_new_lws_exists(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    role: &str,
    config: &DisaggregatedRoleSpec,
    initial_replicas: i32,
) -> Result<bool> {
    let lws_name = utils::generate_name(ds.name(), slice, revision, role);
    let existing = lws_manager::get(c, ds.namespace(), &lws_name)
        .await
        .map_err(|e| wrap(e, format!("failed to get LWS {lws_name}")))?;
    if existing.is_some() {
        return Ok(false);
    }
    let params = CreateParams {
        ds,
        role,
        slice,
        config,
        revision,
        labels: utils::generate_labels(ds.name(), slice, revision, role),
        replicas: initial_replicas,
    };
    lws_manager::create(c, params)
        .await
        .map_err(|e| wrap(e, format!("failed to create LWS {lws_name}")))?;
    Ok(true)
}

/// `detectRoleChanges` (executor.go:485-500): `(added, removed)`: spec roles absent from every
/// old revision (spec order), and old roles absent from the spec (name order; Go's is random).
pub(crate) fn detect_role_changes(
    spec_role_names: &[String],
    old_revisions: &[RevisionRoles],
) -> (Vec<String>, Vec<String>) {
    let (spec_roles, old_roles) = build_role_sets(spec_role_names, old_revisions);
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for name in &old_roles {
        if !spec_roles.contains(name) {
            removed.push(name.clone());
        }
    }
    for name in spec_role_names {
        if !old_roles.contains(name) {
            added.push(name.clone());
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    //! `pkg/controllers/disaggregatedset/executor_test.go` at v0.10.0, each test citing its Go
    //! test as `executor_test.go@v0.10.0:LINE` (table cases cite their lines), and
    //! `TestGetTargetReplicasResolutionMatrix` of `scaler_manager_test.go`, which tests
    //! `get_target_replicas`. The tests of `scaleDownOld`, `scaleUpNew`, `ensureNewLWSExists` and
    //! `ReconcileRollingUpdate` run on `FakeClient` (`disagg::fake`) seeded with LeaderWorkerSets, standing in
    //! for the fake controller-runtime client (`block_on` polls once: nothing in it suspends). Left out:
    //! `TestReconcilerIntegration`, `TestMidRolloutABC` and `TestAsymmetricSizesCoordinatedDrain`,
    //! which drive the whole reconciler (`disaggregatedset_controller.go`). Go's `time.Now()`
    //! base is a fixed instant.

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    use super::*;
    use crate::api::{
        LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerSetStatus, RollingUpdateConfiguration,
        RolloutStrategy,
    };
    use crate::disagg::api::{
        keys, DisaggregatedSetSpec, RoleScalerSpec, RoleScaling, SCALING_EXTERNAL,
    };
    use crate::disagg::fake::{block_on, FakeClient};

    const NS: &str = "default";
    const PREFILL: &str = "prefill";
    const DECODE: &str = "decode";
    /// The tests' `baseTime` (Go: `time.Now()`), in seconds since the epoch.
    const BASE: i64 = 1_700_000_000;

    /// `testRoleNames` (executor_test.go@v0.10.0:52-55).
    fn test_role_names() -> Vec<String> {
        vec![PREFILL.to_string(), DECODE.to_string()]
    }

    /// `baseTime.Add(minutes * time.Minute)`.
    fn at_minute(minutes: i64) -> Time {
        Time(Timestamp::from_second(BASE + minutes * 60).expect("in range"))
    }

    /// `makeLWS` and its options (executor_test.go@v0.10.0:107-149), as a builder.
    #[derive(Default)]
    struct Lws(LeaderWorkerSet);

    impl Lws {
        fn name(mut self, name: &str) -> Lws {
            self.0.metadata.name = Some(name.to_string());
            self
        }

        fn replicas(mut self, r: i32) -> Lws {
            self.0.spec.replicas = Some(r);
            self
        }

        fn ready(mut self, r: i32) -> Lws {
            self.0
                .status
                .get_or_insert_with(LeaderWorkerSetStatus::default)
                .ready_replicas = r;
            self
        }

        fn created(mut self, t: Time) -> Lws {
            self.0.metadata.creation_timestamp = Some(t);
            self
        }

        fn initial_replicas(mut self, r: i32) -> Lws {
            let annotations = self
                .0
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new);
            annotations.insert(keys::INITIAL_REPLICAS.to_string(), r.to_string());
            self
        }

        fn arc(self) -> Arc<LeaderWorkerSet> {
            Arc::new(self.0)
        }
    }

    /// `buildTestLWS(name, "default", role, revision)` (executor_test.go@v0.10.0:84-92) with
    /// `.Replica(r).StatusReplicas(r).ReadyReplicas(r).CreationTimestamp(created)`: a stored
    /// object.
    fn build_test_lws(
        name: &str,
        role: &str,
        revision: &str,
        r: i32,
        created: Time,
    ) -> LeaderWorkerSet {
        let mut lws = Lws::default()
            .name(name)
            .replicas(r)
            .ready(r)
            .created(created)
            .0;
        lws.metadata.namespace = Some(NS.to_string());
        let labels = [
            (keys::ROLE, role),
            (keys::SET_NAME, "test"),
            (keys::SLICE, "0"),
            (keys::REVISION, revision),
        ];
        let labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        lws.metadata.labels = Some(labels.collect());
        lws.status.get_or_insert_with(Default::default).replicas = r;
        lws
    }

    /// A `RevisionRoles` literal.
    fn revision(hash: &str, roles: Vec<(&str, Arc<LeaderWorkerSet>)>) -> RevisionRoles {
        RevisionRoles {
            revision: hash.to_string(),
            roles: roles.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    /// A role with `spec.replicas` and a rolling-update configuration.
    fn role(
        name: &str,
        replicas: Option<i32>,
        rc: Option<RollingUpdateConfiguration>,
    ) -> DisaggregatedRoleSpec {
        DisaggregatedRoleSpec {
            name: name.to_string(),
            spec: LeaderWorkerSetSpec {
                replicas,
                rollout_strategy: rc.map(|rc| RolloutStrategy {
                    type_: String::new(),
                    rolling_update_configuration: Some(rc),
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// `RollingUpdateConfiguration{MaxSurge: surge, MaxUnavailable: unavailable}`, unset fields
    /// left `None` (Go's zero `IntOrString`).
    fn rc(
        surge: Option<IntOrString>,
        unavailable: Option<IntOrString>,
    ) -> RollingUpdateConfiguration {
        RollingUpdateConfiguration {
            max_surge: surge,
            max_unavailable: unavailable,
            partition: None,
        }
    }

    /// The DisaggregatedSet "test" in "default" with these roles.
    fn ds_with(roles: Vec<DisaggregatedRoleSpec>) -> DisaggregatedSet {
        DisaggregatedSet {
            metadata: ObjectMeta {
                name: Some("test".to_string()),
                namespace: Some(NS.to_string()),
                ..Default::default()
            },
            spec: DisaggregatedSetSpec {
                roles,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn no_scalers() -> BTreeMap<String, Arc<DisaggregatedSetRoleScaler>> {
        BTreeMap::new()
    }

    // ---------------------------------------------------------------------------------------
    // The fake client
    // ---------------------------------------------------------------------------------------

    /// `getTestLWSReplicas` (executor_test.go@v0.10.0:94-105): `spec.replicas`, 0 when unset,
    /// -1 when there is no such LWS.
    fn replicas(fake: &FakeClient, name: &str) -> i32 {
        match fake.stored::<LeaderWorkerSet>(NS, name) {
            None => -1,
            Some(lws) => lws.spec.replicas.unwrap_or(0),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Pure functions
    // ---------------------------------------------------------------------------------------

    /// `makeRevision` of TestSortByNewestTimestamp: both roles created `offset` minutes in.
    fn timed_revision(hash: &str, offset: i64) -> RevisionRoles {
        let lws = || Lws::default().created(at_minute(offset)).arc();
        revision(hash, vec![(PREFILL, lws()), (DECODE, lws())])
    }

    fn hashes(revisions: &[&RevisionRoles]) -> Vec<String> {
        revisions.iter().map(|r| r.revision.clone()).collect()
    }

    /// A case of TestSortByNewestTimestamp: name, (revision, creation minute) in input order,
    /// the revisions expected, newest first.
    type SortCase = (
        &'static str,
        &'static [(&'static str, i64)],
        &'static [&'static str],
    );

    // TestSortByNewestTimestamp (executor_test.go@v0.10.0:496): cases at :518-521.
    #[test]
    fn sort_by_newest_timestamp_cases() {
        let cases: [SortCase; 4] = [
            ("empty list", &[], &[]),
            ("single workload", &[("hash1", 0)], &["hash1"]),
            (
                "three workloads unsorted",
                &[("newest", 120), ("oldest", 0), ("middle", 60)],
                &["newest", "middle", "oldest"],
            ),
            (
                "four workloads unsorted",
                &[("d", 30), ("a", 0), ("c", 20), ("b", 10)],
                &["d", "c", "b", "a"],
            ),
        ];
        for (name, input, expected) in cases {
            let workloads: Vec<RevisionRoles> =
                input.iter().map(|&(h, o)| timed_revision(h, o)).collect();
            let result = sort_by_newest_timestamp(&workloads, &test_role_names());
            assert_eq!(hashes(&result), expected, "{name}");
        }
    }

    // TestSortByNewestTimestamp/does not modify original slice (executor_test.go@v0.10.0:538)
    #[test]
    fn sort_by_newest_timestamp_does_not_modify_original() {
        let workloads = vec![timed_revision("second", 60), timed_revision("first", 0)];
        let _ = sort_by_newest_timestamp(&workloads, &test_role_names());
        assert_eq!(
            workloads[0].revision, "second",
            "original slice should not be modified"
        );
    }

    // TestSortByNewestTimestamp/uses max timestamp across roles (executor_test.go@v0.10.0:544)
    #[test]
    fn sort_by_newest_timestamp_uses_max_timestamp_across_roles() {
        let lws = |m| Lws::default().created(at_minute(m)).arc();
        let workloads = vec![
            revision("A", vec![(PREFILL, lws(0)), (DECODE, lws(20))]),
            revision("B", vec![(PREFILL, lws(10)), (DECODE, lws(10))]),
        ];
        let result = sort_by_newest_timestamp(&workloads, &test_role_names());
        assert_eq!(
            hashes(&result),
            ["A", "B"],
            "A has max ts=20min and comes first (newest)"
        );
    }

    // TestIsRevisionStable (executor_test.go@v0.10.0:568): cases at :576-580.
    #[test]
    fn is_revision_stable_cases() {
        let cases = [
            ("all roles stable", 3, 3, 2, 2, true),
            ("prefill unstable", 3, 2, 2, 2, false),
            ("decode unstable", 3, 3, 2, 1, false),
            ("both roles unstable", 3, 1, 2, 0, false),
            ("zero replicas stable", 0, 0, 0, 0, true),
        ];
        for (name, p_replicas, p_ready, d_replicas, d_ready, expected) in cases {
            let workload = revision(
                "hash1",
                vec![
                    (
                        PREFILL,
                        Lws::default().replicas(p_replicas).ready(p_ready).arc(),
                    ),
                    (
                        DECODE,
                        Lws::default().replicas(d_replicas).ready(d_ready).arc(),
                    ),
                ],
            );
            assert_eq!(
                is_revision_stable(&workload, &test_role_names()),
                expected,
                "{name}"
            );
        }
    }

    // TestGetRoleConfigs (executor_test.go@v0.10.0:600): `utils::get_role_configs`.
    #[test]
    fn get_role_configs_by_name() {
        let ds = ds_with(vec![
            role(PREFILL, Some(3), None),
            role(DECODE, Some(5), None),
        ]);
        let configs = utils::get_role_configs(&ds);
        assert_eq!(configs[PREFILL].spec.replicas, Some(3));
        assert_eq!(configs[DECODE].spec.replicas, Some(5));
    }

    /// `[prefill surge, prefill unavailable, decode surge, decode unavailable]` of the
    /// extract_rolling_update_config tests.
    type Knobs<T> = [T; 4];

    /// The config of a prefill (3 replicas) and decode (2 replicas) set whose roles have a
    /// rolling-update configuration when either of their values is set.
    fn extracted(
        values: Knobs<Option<IntOrString>>,
        replicas: [i32; 2],
    ) -> Vec<RollingUpdateConfig> {
        let [ps, pu, ds_, du] = values;
        let config = |s: Option<IntOrString>, u: Option<IntOrString>| {
            (s.is_some() || u.is_some()).then(|| rc(s, u))
        };
        let ds = ds_with(vec![
            role(PREFILL, Some(replicas[0]), config(ps, pu)),
            role(DECODE, Some(replicas[1]), config(ds_, du)),
        ]);
        extract_rolling_update_config(&ds, &test_role_names(), &no_scalers())
    }

    fn flat(config: &[RollingUpdateConfig]) -> Knobs<i32> {
        [
            config[0].max_surge,
            config[0].max_unavailable,
            config[1].max_surge,
            config[1].max_unavailable,
        ]
    }

    /// A case of TestExtractRollingUpdateConfig: name, the integer values set, the expected.
    type KnobsCase = (&'static str, Knobs<Option<i32>>, Knobs<i32>);

    // TestExtractRollingUpdateConfig (executor_test.go@v0.10.0:619): cases at :628-634.
    #[test]
    fn extract_rolling_update_config_cases() {
        let n = None;
        let cases: [KnobsCase; 7] = [
            ("defaults when nil", [n, n, n, n], [1, 0, 1, 0]),
            (
                "custom prefill only",
                [Some(3), Some(1), n, n],
                [3, 1, 1, 0],
            ),
            ("custom decode only", [n, n, Some(2), Some(0)], [1, 0, 2, 0]),
            (
                "partial prefill (surge only)",
                [Some(5), Some(0), n, n],
                [5, 0, 1, 0],
            ),
            (
                "both custom",
                [Some(2), Some(1), Some(3), Some(2)],
                [2, 1, 3, 2],
            ),
            (
                "surge=0 with unavail allows zero surge",
                [Some(0), Some(4), Some(0), Some(2)],
                [0, 4, 0, 2],
            ),
            (
                "surge=0 without unavail keeps default",
                [Some(0), Some(0), Some(0), Some(0)],
                [1, 0, 1, 0],
            ),
        ];
        for (name, values, expected) in cases {
            let config = extracted(values.map(|v| v.map(IntOrString::Int)), [3, 2]);
            assert_eq!(flat(&config), expected, "{name}");
        }
    }

    // TestExtractRollingUpdateConfigWithPercentages (executor_test.go@v0.10.0:695): cases at
    // :707, :720, :733, :746. Every value is a string there, "0" included (no percentage, so
    // it scales to 0).
    #[test]
    fn extract_rolling_update_config_with_percentages() {
        let cases: [(&str, i32, Knobs<&str>, Knobs<i32>); 4] = [
            (
                "50% surge on 4 replicas = 2",
                4,
                ["50%", "0", "50%", "0"],
                [2, 0, 2, 0],
            ),
            (
                "25% unavailable on 4 replicas = 1",
                4,
                ["0", "25%", "0", "25%"],
                [0, 1, 0, 1],
            ),
            (
                "surge rounds up, unavail rounds down",
                10,
                ["25%", "25%", "25%", "25%"],
                [3, 2, 3, 2],
            ),
            ("100% surge", 5, ["100%", "0", "100%", "0"], [5, 0, 5, 0]),
        ];
        for (name, replicas, values, expected) in cases {
            let values = values.map(|v| Some(IntOrString::String(v.to_string())));
            let config = extracted(values, [replicas, replicas]);
            assert_eq!(flat(&config), expected, "{name}");
        }
    }

    // TestGetTargetReplicasResolutionMatrix (scaler_manager_test.go@v0.10.0:122): cases at
    // :131-135 (`staticRole`, `roleWithReplicas`, `externalRole`: :43-54, :152).
    #[test]
    fn get_target_replicas_resolution_matrix() {
        let external = || DisaggregatedRoleSpec {
            scaling: Some(RoleScaling {
                mode: SCALING_EXTERNAL.to_string(),
            }),
            ..role("r", None, None)
        };
        let cases = [
            ("static default", role("r", None, None), None, 0, 1),
            ("static explicit", role("r", Some(4), None), None, 0, 4),
            ("external + scaler seeded at 0", external(), Some(0), 0, 0),
            ("external + scaler written to 7", external(), Some(7), 0, 7),
            (
                "external + scaler missing (transient) falls back to currentNew",
                external(),
                None,
                3,
                3,
            ),
        ];
        for (name, r, scaler, current_new, want) in cases {
            let ds = ds_with(vec![r]);
            let mut scalers = no_scalers();
            if let Some(replicas) = scaler {
                let s = DisaggregatedSetRoleScaler {
                    spec: RoleScalerSpec { replicas },
                    ..Default::default()
                };
                scalers.insert("r".to_string(), Arc::new(s));
            }
            assert_eq!(
                get_target_replicas(&ds, "r", &scalers, current_new),
                want,
                "{name}"
            );
        }
    }

    // Not upstream (no Go test covers them): the role-set helpers, for a role "encode" added
    // and "old" removed.
    #[test]
    fn role_changes_between_spec_and_old_revisions() {
        let spec = vec![
            PREFILL.to_string(),
            DECODE.to_string(),
            "encode".to_string(),
        ];
        let lws = || Lws::default().arc();
        let old = vec![
            revision("a", vec![(PREFILL, lws()), ("old", lws())]),
            revision("b", vec![(DECODE, lws())]),
        ];
        let (spec_set, old_set) = build_role_sets(&spec, &old);
        assert_eq!(removed_roles(&old_set, &spec_set), ["old"]);
        let (added, removed) = detect_role_changes(&spec, &old);
        assert_eq!(added, ["encode"]);
        assert_eq!(removed, ["old"]);
        assert!(all_zero(&[0, -1, 0]) && !all_zero(&[0, 1]));
    }

    // Not upstream: build_planner_state's no-shrink guard holds an External role's target at
    // its new replicas while old revisions remain; a removed role has no new side.
    #[test]
    fn build_planner_state_holds_external_targets_mid_rollout() {
        let mut external = role(PREFILL, None, None);
        external.scaling = Some(RoleScaling {
            mode: SCALING_EXTERNAL.to_string(),
        });
        let ds = ds_with(vec![external, role(DECODE, Some(2), None)]);
        let scaler = DisaggregatedSetRoleScaler {
            spec: RoleScalerSpec { replicas: 1 },
            ..Default::default()
        };
        let scalers = BTreeMap::from([(PREFILL.to_string(), Arc::new(scaler))]);
        let old_lws = || Lws::default().replicas(3).initial_replicas(4).arc();
        let old = vec![revision(
            "old",
            vec![(PREFILL, old_lws()), ("gone", old_lws())],
        )];
        let new = revision("new", vec![(PREFILL, Lws::default().replicas(2).arc())]);
        let names: Vec<String> = [PREFILL, DECODE, "gone"].map(String::from).to_vec();
        let spec_set: BTreeSet<String> = [PREFILL, DECODE].map(String::from).into();
        let state = build_planner_state(&ds, &names, &spec_set, &old, &new, &scalers);
        assert_eq!(state.0, [4, 0, 4], "initial old");
        assert_eq!(state.1, [3, 0, 3], "current old");
        assert_eq!(state.2, [2, 0, 0], "current new");
        assert_eq!(
            state.3,
            [2, 2, 0],
            "target: prefill held at 2, not the scaler's 1"
        );
    }

    // ---------------------------------------------------------------------------------------
    // On FakeClient
    // ---------------------------------------------------------------------------------------

    /// `lwsDef` (executor_test.go@v0.10.0:808-814): a revision's (prefill, decode) replicas, its
    /// age in hours after the base time, and the replicas expected after the drain.
    struct LwsDef {
        revision: &'static str,
        replicas: [i32; 2],
        age_hours: i64,
        expected: [i32; 2],
    }

    const fn def(
        revision: &'static str,
        replicas: [i32; 2],
        age_hours: i64,
        expected: [i32; 2],
    ) -> LwsDef {
        LwsDef {
            revision,
            replicas,
            age_hours,
            expected,
        }
    }

    /// The stored objects and the `RevisionRoles` of `workloads`, named
    /// `test-0-<revision>-<role>`.
    fn scale_down_fixture(workloads: &[LwsDef]) -> (FakeClient, Vec<RevisionRoles>) {
        let mut objects = Vec::new();
        let mut grouped = Vec::new();
        for w in workloads {
            let created = at_minute(w.age_hours * 60);
            let mut roles = Vec::new();
            for (i, role) in [PREFILL, DECODE].into_iter().enumerate() {
                let name = format!("test-0-{}-{role}", w.revision);
                let r = w.replicas[i];
                objects.push(build_test_lws(&name, role, w.revision, r, created.clone()));
                roles.push((
                    role,
                    Lws::default()
                        .name(&name)
                        .replicas(r)
                        .created(created.clone())
                        .arc(),
                ));
            }
            grouped.push(revision(w.revision, roles));
        }
        (FakeClient::with(objects), grouped)
    }

    // TestScaleDownOld (executor_test.go@v0.10.0:816): cases at :826-871; the budget is turned
    // into `current` and `target` as upstream does.
    #[test]
    fn scale_down_old_cases() {
        let cases: [(&str, Vec<LwsDef>, [i32; 2]); 7] = [
            (
                "single workload scales down",
                vec![def("hash1", [4, 4], 0, [2, 2])],
                [2, 2],
            ),
            (
                "multiple workloads drain newest first",
                vec![
                    def("oldest", [2, 2], 0, [2, 2]),
                    def("newer", [2, 2], 1, [0, 0]),
                ],
                [2, 2],
            ),
            (
                "coordinated drain when one role reaches zero",
                vec![def("hash1", [3, 2], 0, [0, 0])],
                [1, 2],
            ),
            (
                "budget exhaustion stops mid-workload",
                vec![def("hash1", [6, 6], 0, [4, 4])],
                [2, 2],
            ),
            (
                "three workloads drain newest then middle",
                vec![
                    def("oldest", [2, 2], 0, [2, 2]),
                    def("middle", [2, 2], 1, [0, 0]),
                    def("newest", [2, 2], 2, [0, 0]),
                ],
                [4, 4],
            ),
            (
                "partial drain of newest without coordinated trigger",
                vec![
                    def("hashA", [1, 2], 0, [1, 2]),
                    def("hashB", [3, 3], 1, [2, 2]),
                ],
                [1, 1],
            ),
            (
                "drains newest without spilling to older",
                vec![
                    def("oldest", [1, 1], 0, [1, 1]),
                    def("newer", [3, 3], 1, [1, 1]),
                ],
                [2, 2],
            ),
        ];
        for (name, workloads, budget) in cases {
            let (fake, grouped) = scale_down_fixture(&workloads);
            let ds = ds_with(vec![]);
            let current = [
                utils::get_total_replicas_per_role(&grouped, PREFILL),
                utils::get_total_replicas_per_role(&grouped, DECODE),
            ];
            let target = [current[0] - budget[0], current[1] - budget[1]];
            let names = test_role_names();
            block_on(scale_down_old(
                &fake, &ds, &grouped, &names, &current, &target,
            ))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            for w in &workloads {
                let got = [PREFILL, DECODE]
                    .map(|r| replicas(&fake, &format!("test-0-{}-{r}", w.revision)));
                assert_eq!(got, w.expected, "{name}: revision {}", w.revision);
            }
        }
    }

    // Not upstream: pins executor.go:434-436. In a coordinated drain only the roles that reached
    // 0 on their own charge their budget; decode, forced from 3 to 0 in "newer" with a budget of
    // 1, keeps that budget and drains "older" too (4 decode replicas removed for a planned 1).
    #[test]
    fn scale_down_old_coordinated_drain_charges_only_triggering_roles() {
        let workloads = [
            def("older", [2, 2], 0, [2, 1]),
            def("newer", [1, 3], 1, [0, 0]),
        ];
        let (fake, grouped) = scale_down_fixture(&workloads);
        let names = test_role_names();
        let ds = ds_with(vec![]);
        let result = scale_down_old(&fake, &ds, &grouped, &names, &[3, 5], &[2, 4]);
        block_on(result).expect("scales");
        for w in &workloads {
            let got =
                [PREFILL, DECODE].map(|r| replicas(&fake, &format!("test-0-{}-{r}", w.revision)));
            assert_eq!(got, w.expected, "revision {}", w.revision);
        }
    }

    // TestScaleDownOldWithMissingRole (executor_test.go@v0.10.0:930): cases at :944-966. A role
    // ("encode") missing from the old revision must not trigger a coordinated drain.
    #[test]
    fn scale_down_old_with_missing_role() {
        let cases = [
            (
                "missing role should not trigger coordinated drain",
                [0, 1, 0],
                [4, 3],
            ),
            ("normal drain with missing role", [1, 1, 0], [3, 3]),
            (
                "coordinated drain only when existing role reaches zero",
                [4, 0, 0],
                [0, 0],
            ),
        ];
        for (name, budget, expected) in cases {
            let (fake, grouped) = scale_down_fixture(&[def("oldhash", [4, 4], 0, expected)]);
            let ds = ds_with(vec![]);
            let names: Vec<String> = [PREFILL, DECODE, "encode"].map(String::from).to_vec();
            let current: Vec<i32> = names
                .iter()
                .map(|r| utils::get_total_replicas_per_role(&grouped, r))
                .collect();
            let target: Vec<i32> = (0..3).map(|i| current[i] - budget[i]).collect();
            block_on(scale_down_old(
                &fake, &ds, &grouped, &names, &current, &target,
            ))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                replicas(&fake, "test-0-oldhash-prefill"),
                expected[0],
                "{name}: prefill"
            );
            assert_eq!(
                replicas(&fake, "test-0-oldhash-decode"),
                expected[1],
                "{name}: decode"
            );
        }
    }

    // TestScaleUpNew (executor_test.go@v0.10.0:1026): cases at :1039-1042.
    #[test]
    fn scale_up_new_cases() {
        let cases = [
            ("scales up prefill only", [2, 4], [2, 4], [4, 4], [4, 4]),
            ("scales up decode only", [4, 2], [4, 2], [4, 4], [4, 4]),
            ("scales up both roles", [1, 2], [1, 2], [4, 4], [4, 4]),
            ("no-op when at target", [4, 4], [4, 4], [4, 4], [4, 4]),
        ];
        for (name, init, workload, target, expected) in cases {
            let created = at_minute(0);
            let fake = FakeClient::with(vec![
                build_test_lws(
                    "test-0-newhash-prefill",
                    PREFILL,
                    "newhash",
                    init[0],
                    created.clone(),
                ),
                build_test_lws("test-0-newhash-decode", DECODE, "newhash", init[1], created),
            ]);
            let ds = ds_with(vec![]);
            let new_revision = revision(
                "newhash",
                vec![
                    (PREFILL, Lws::default().replicas(workload[0]).arc()),
                    (DECODE, Lws::default().replicas(workload[1]).arc()),
                ],
            );
            let names = test_role_names();
            let spec_role_set: BTreeSet<String> = names.iter().cloned().collect();
            let scaled = scale_up_new(
                &fake,
                &ds,
                0,
                &new_revision,
                &names,
                &spec_role_set,
                &workload,
                &target,
            );
            block_on(scaled).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got =
                ["test-0-newhash-prefill", "test-0-newhash-decode"].map(|n| replicas(&fake, n));
            assert_eq!(got, expected, "{name}");
        }
    }

    // TestEnsureNewLWSExists (executor_test.go@v0.10.0:1086): cases at :1093-1094.
    #[test]
    fn ensure_new_lws_exists_cases() {
        let cases = [
            ("creates workload when missing", None, true, 2),
            ("no-op when workload already exists", Some(3), false, 3),
        ];
        for (name, existing, expected_created, expected_replicas) in cases {
            let objects = existing.map_or(vec![], |r| {
                let created = at_minute(0);
                vec![build_test_lws(
                    "test-0-newhash-prefill",
                    PREFILL,
                    "newhash",
                    r,
                    created,
                )]
            });
            let fake = FakeClient::with(objects);
            let spec_of = |name: &str| {
                let mut r = role(name, Some(4), None);
                r.spec.leader_worker_template.size = Some(1);
                r.spec.leader_worker_template.worker_template = serde_json::from_value(
                    serde_json::json!({"spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
                )
                .expect("a pod template");
                r
            };
            let mut ds = ds_with(vec![spec_of(PREFILL), spec_of(DECODE)]);
            ds.metadata.uid = Some("test-uid".to_string());
            let config = &ds.spec.roles[0];
            let created = block_on(ensure_new_lws_exists(
                &fake, &ds, 0, "newhash", PREFILL, config, 2,
            ))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(created, expected_created, "{name}");
            assert_eq!(
                replicas(&fake, "test-0-newhash-prefill"),
                expected_replicas,
                "{name}"
            );
        }
    }

    /// The old (A, B) and new (C) revisions of TestReconcileRollingUpdateABCScenario: A created
    /// at the base time, B an hour later, C two hours later; A and B carry initial-replicas 2.
    /// A's objects are stored only when it has replicas.
    fn abc_fixture(
        a: [i32; 2],
        b: [i32; 2],
        c: [i32; 2],
    ) -> (FakeClient, Vec<RevisionRoles>, RevisionRoles) {
        let times = [at_minute(0), at_minute(60), at_minute(120)];
        let mut objects = Vec::new();
        let mut old = Vec::new();
        for (hash, replicas, t) in [("hashA", a, &times[0]), ("hashB", b, &times[1])] {
            let mut roles = Vec::new();
            for (i, role) in [PREFILL, DECODE].into_iter().enumerate() {
                let name = format!("test-0-{hash}-{role}");
                let r = replicas[i];
                if hash != "hashA" || a[0] > 0 || a[1] > 0 {
                    let mut stored = build_test_lws(&name, role, hash, r, t.clone());
                    stored.metadata.annotations =
                        Lws::default().initial_replicas(2).0.metadata.annotations;
                    objects.push(stored);
                }
                let lws = Lws::default()
                    .name(&name)
                    .replicas(r)
                    .ready(r)
                    .initial_replicas(2);
                roles.push((role, lws.created(t.clone()).arc()));
            }
            old.push(revision(hash, roles));
        }
        let mut new_roles = Vec::new();
        for (i, role) in [PREFILL, DECODE].into_iter().enumerate() {
            let name = format!("test-0-hashC-{role}");
            objects.push(build_test_lws(&name, role, "hashC", c[i], times[2].clone()));
            new_roles.push((role, Lws::default().replicas(c[i]).ready(c[i]).arc()));
        }
        (FakeClient::with(objects), old, revision("hashC", new_roles))
    }

    // TestReconcileRollingUpdateABCScenario (executor_test.go@v0.10.0:1161): cases at
    // :1166-1176. Two old revisions (A older than B) roll to C, target 4 per role.
    #[test]
    fn reconcile_rolling_update_abc_scenario() {
        let cases = [
            (
                "first step scales up C without drain",
                [[2, 2], [2, 2], [0, 0]],
                [[2, 2], [2, 2], [1, 1]],
            ),
            (
                "C scales up while B stays",
                [[0, 0], [2, 2], [2, 2]],
                [[0, 0], [2, 2], [3, 3]],
            ),
            (
                "drains newest old workload first",
                [[2, 2], [2, 2], [2, 2]],
                [[2, 2], [1, 1], [2, 2]],
            ),
        ];
        for (name, [a, b, c], expected) in cases {
            let (fake, old, new) = abc_fixture(a, b, c);
            let ds = ds_with(vec![
                role(PREFILL, Some(4), None),
                role(DECODE, Some(4), None),
            ]);
            block_on(reconcile_rolling_update(
                &fake,
                &ds,
                0,
                &old,
                &new,
                &no_scalers(),
            ))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let got = |hash: &str| {
                [PREFILL, DECODE].map(|r| replicas(&fake, &format!("test-0-{hash}-{r}")))
            };
            if a[0] > 0 || a[1] > 0 {
                assert_eq!(got("hashA"), expected[0], "{name}: A");
            }
            assert_eq!(got("hashB"), expected[1], "{name}: B");
            assert_eq!(got("hashC"), expected[2], "{name}: C");
        }
    }
}
