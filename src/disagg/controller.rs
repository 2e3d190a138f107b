//! `pkg/controllers/disaggregatedset/disaggregatedset_controller.go` at v0.10.0, function by
//! function (each doc comment names the Go function and its lines). One call of `reconcile` is
//! one reconcile of one DisaggregatedSet key; every `Client` call is a point where the world may
//! interleave.
//!
//! Watches (`SetupWithManager`, disaggregatedset_controller.go:463-483), wired by the
//! simulator, not here: `For(DisaggregatedSet)`, `Owns(LeaderWorkerSet)`,
//! `Owns(DisaggregatedSetRoleScaler)`, controller name `disaggregatedset`. An owned object's
//! event enqueues the key of its controller owner reference.
//!
//! Upstream's reconciler holds the client, the recorder and three managers that hold nothing
//! but the client; here the managers are the modules `lws_manager`, `service_manager`,
//! `scaler_manager` and `executor`, called with `c`. Go maps are `BTreeMap`s, so roles and
//! revisions are visited in key order (upstream's order is random).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::LeaderWorkerSet;
use crate::client::{Action, Client, Result};
use crate::disagg::api::{
    keys, DisaggregatedRoleSpec, DisaggregatedSet, DisaggregatedSetRoleScaler,
};
use crate::disagg::executor::{self, EVENT_REASON_LWS_DELETED};
use crate::disagg::utils::{self, CreateParams};
use crate::disagg::{join, lws_manager, scaler_manager, service_manager, wrap, Fixes};
use crate::k8s;

type Scalers = BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>;

/// `Reconcile` (disaggregatedset_controller.go:58-145): scalers, legacy migration, then every
/// slice on its own; per-slice errors are joined and the soonest requeue wins.
pub async fn reconcile(
    c: &impl Client,
    fixes: Fixes,
    namespace: &str,
    name: &str,
) -> Result<Action> {
    let ds = match c.get::<DisaggregatedSet>(namespace, name).await {
        Ok(ds) => ds,
        Err(e) if e.is_not_found() => return Ok(Action::done()),
        Err(e) => return Err(e),
    };
    let ds: &DisaggregatedSet = &ds;

    // Step 1: the target revision is the hash of the roles' templates.
    let revision = utils::compute_revision(&ds.spec.roles);
    let slice_count = utils::get_slices(ds);

    // Step 2: slices at or above the desired count go (per-revision drained cleanup runs per
    // slice, in `reconcile_slice`).
    cleanup_removed_slices(c, ds, slice_count).await?;

    // Scalers settle before replicas are resolved: missing ones are created, seeded with the
    // role's current aggregate so a Static->External flip does not drain the role; ones whose
    // role is no longer External are deleted.
    let seed_for = seed_for_role(c, ds)
        .await
        .map_err(|e| wrap(e, "failed to compute scaler seeds"))?;
    let scalers = scaler_manager::reconcile(c, ds, &*seed_for)
        .await
        .map_err(|e| wrap(e, "failed to reconcile scalers"))?;

    // Step 3: the LWS objects.
    let role_names = utils::get_role_names(ds);

    // A pre-slices (label-less) slice 0 at the target revision is left alone while slices is
    // 1; once siblings are wanted it must be recreated slice-aware first, or its
    // slice-agnostic Service would also select the siblings' pods. Before the loop, and fatal
    // on error, so the legacy Service never coexists with a sibling slice.
    if slice_count > 1 {
        recreate_legacy_slice0(c, ds, &revision, &role_names).await?;
    }

    // Slices are independent: one failing does not skip the others.
    let mut result = Action::done();
    let mut errs = Vec::new();
    for slice in 0..slice_count {
        match reconcile_slice(c, fixes, ds, slice, &revision, &role_names, &scalers).await {
            Ok(slice_result) => result = earliest_requeue(result, slice_result),
            Err(e) => errs.push(wrap(e, format!("slice {slice}"))),
        }
    }

    // The scalers' status: observed groups summed over every slice and revision.
    if let Err(e) = update_scaler_status(c, ds, &scalers).await {
        errs.push(e);
    }

    match join(errs) {
        Some(e) => Err(e),
        None => Ok(result),
    }
}

/// `seedForRole` (disaggregatedset_controller.go:147-178): the initial `spec.replicas` of a
/// new scaler. A role with LWS gets their summed replicas (a nil replicas counts 1); a role
/// with none gets 1, not 0, since vanilla HPA stays in ScalingDisabled while `/scale` reads 0.
async fn seed_for_role(
    c: &impl Client,
    ds: &DisaggregatedSet,
) -> Result<Box<dyn Fn(&str) -> i32 + Send + Sync>> {
    let all = lws_manager::list(c, ds.namespace(), ds.name(), -1, "")
        .await
        .map_err(|e| wrap(e, "list LWS for scaler seed"))?;
    // A role is in `sums` exactly when upstream's `seen` has it.
    let mut sums: BTreeMap<String, i32> = BTreeMap::new();
    for lws in &all {
        let role = k8s::label(&lws.metadata, keys::ROLE).unwrap_or("");
        let sum = sums.entry(role.to_string()).or_insert(0);
        *sum = sum.wrapping_add(lws.spec.replicas.unwrap_or(1));
    }
    Ok(Box::new(move |role: &str| -> i32 {
        sums.get(role).copied().unwrap_or(1)
    }))
}

/// `updateScalerStatus` (disaggregatedset_controller.go:180-205): per External role, the
/// `status.replicas` of its LWS summed over slices and revisions (LWS groups, the unit HPA
/// writes to `spec.replicas`), written by `scaler_manager::write_status`.
async fn update_scaler_status(
    c: &impl Client,
    ds: &DisaggregatedSet,
    scalers: &Scalers,
) -> Result<()> {
    if scalers.is_empty() {
        return Ok(());
    }
    let all = lws_manager::list(c, ds.namespace(), ds.name(), -1, "")
        .await
        .map_err(|e| wrap(e, "list LWS for scaler status"))?;
    let mut observed: BTreeMap<String, i32> = BTreeMap::new();
    for lws in &all {
        let role = k8s::label(&lws.metadata, keys::ROLE).unwrap_or("");
        if !scalers.contains_key(role) {
            continue;
        }
        let replicas = lws.status.as_ref().map_or(0, |s| s.replicas);
        let sum = observed.entry(role.to_string()).or_insert(0);
        *sum = sum.wrapping_add(replicas);
    }
    scaler_manager::write_status(c, ds, scalers, &observed).await
}

/// `reconcileSlice` (disaggregatedset_controller.go:207-257): drained old revisions go, then a
/// rolling update when an old revision still serves, else the simple create/scale path; then
/// the slice's Services.
async fn reconcile_slice(
    c: &impl Client,
    fixes: Fixes,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    role_names: &[String],
    scalers: &Scalers,
) -> Result<Action> {
    cleanup_drained_lws(c, ds, slice, revision).await?;

    let (old_revisions, _) =
        lws_manager::get_revision_roles_list(c, ds.namespace(), ds.name(), slice, revision).await?;
    // Go sums in `int` (64 bits), over the spec's roles only: a removed role's old LWS does not
    // count (Z10). The proposed fix counts every role an old revision has.
    let counted: Vec<&str> = if fixes.count_removed_roles {
        let roles = old_revisions.iter().flat_map(|r| r.roles.keys());
        roles.map(String::as_str).collect()
    } else {
        role_names.iter().map(String::as_str).collect()
    };
    let total_old_replicas: i64 = counted
        .iter()
        .map(|role| i64::from(utils::get_total_replicas_per_role(&old_revisions, role)))
        .sum();

    let result = if !old_revisions.is_empty() && total_old_replicas > 0 {
        executor::reconcile_rolling_update_new(c, fixes, ds, slice, revision, scalers).await?
    } else {
        reconcile_simple(c, ds, slice, revision, scalers).await?
    };

    // Step 4: headless Services for the revisions ready on every role.
    let all_lws = lws_manager::list(c, ds.namespace(), ds.name(), slice, "")
        .await
        .map_err(|e| wrap(e, "failed to list LWS for service reconciliation"))?;
    let revision_roles = utils::group_by_revision(&all_lws);
    service_manager::reconcile_services(c, ds, slice, &revision_roles, revision)
        .await
        .map_err(|e| wrap(e, "failed to reconcile services"))?;

    Ok(result)
}

/// `earliestRequeue` (disaggregatedset_controller.go:259-265): the soonest non-zero
/// `RequeueAfter` of two results (the whole result of that one is kept).
fn earliest_requeue(a: Action, b: Action) -> Action {
    let after = |r: &Action| r.requeue_after_ms.unwrap_or(0);
    if after(&b) > 0 && (after(&a) == 0 || after(&b) < after(&a)) {
        b
    } else {
        a
    }
}

/// `cleanupRemovedSlices` (disaggregatedset_controller.go:267-291): delete the LWS whose slice
/// label parses (`strconv.Atoi`) to an index at or above the desired count, then the Services
/// of those slices. A plain delete; pods go with their grace period.
async fn cleanup_removed_slices(
    c: &impl Client,
    ds: &DisaggregatedSet,
    desired_slices: i32,
) -> Result<()> {
    let lws_list = lws_manager::list(c, ds.namespace(), ds.name(), -1, "")
        .await
        .map_err(|e| wrap(e, "failed to list LWS for slice cleanup"))?;
    for lws in &lws_list {
        let label = k8s::label(&lws.metadata, keys::SLICE).unwrap_or("");
        // `strconv.Atoi`: an optional sign and decimal digits, in Go's 64-bit `int`.
        let Ok(slice_idx) = label.parse::<i64>() else {
            continue;
        };
        if slice_idx < i64::from(desired_slices) {
            continue;
        }
        lws_manager::delete(c, ds.namespace(), lws.name())
            .await
            .map_err(|e| wrap(e, format!("failed to delete LWS {}", lws.name())))?;
        let msg = format!("Deleted LWS {} for removed slice {slice_idx}", lws.name());
        c.eventf(ds, None, "Normal", EVENT_REASON_LWS_DELETED, "Delete", &msg);
    }
    service_manager::cleanup_removed_slices(c, ds, desired_slices).await
}

/// `reconcileSimple` (disaggregatedset_controller.go:301-312): every role straight to its
/// target replicas at the target revision. The result is always empty.
async fn reconcile_simple(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    scalers: &Scalers,
) -> Result<Action> {
    let role_configs = utils::get_role_configs(ds);
    for (role, config) in &role_configs {
        reconcile_role_simple(c, ds, slice, role, config, revision, scalers)
            .await
            .map_err(|e| wrap(e, format!("failed to reconcile {role} role")))?;
    }
    Ok(Action::done())
}

/// `reconcileRoleSimple` (disaggregatedset_controller.go:314-358): create the role's LWS at
/// the target replicas, or scale the existing one (a legacy slice-0 LWS is adopted by
/// `get_for_role`). External roles take their target from the scaler, Static ones from the
/// role's `spec.replicas`.
async fn reconcile_role_simple(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    role: &str,
    config: &DisaggregatedRoleSpec,
    revision: &str,
    scalers: &Scalers,
) -> Result<()> {
    let existing = lws_manager::get_for_role(c, ds, slice, revision, role)
        .await
        .map_err(|e| {
            wrap(
                e,
                format!("failed to get LWS for role {role} revision {revision}"),
            )
        })?;

    let current_replicas = existing.as_ref().and_then(|l| l.spec.replicas).unwrap_or(0);
    let desired_replicas = executor::get_target_replicas(ds, role, scalers, current_replicas);

    let Some(existing) = existing else {
        let labels = utils::generate_labels(ds.name(), slice, revision, role);
        return lws_manager::create(
            c,
            CreateParams {
                ds,
                role,
                slice,
                config,
                revision,
                labels,
                replicas: desired_replicas,
            },
        )
        .await;
    };

    // Here a nil replicas counts as 1 (above, as 0 for the target's `current_new`).
    let existing_replicas = existing.spec.replicas.unwrap_or(1);
    if existing_replicas != desired_replicas {
        lws_manager::scale(c, ds.namespace(), existing.name(), desired_replicas)
            .await
            .map_err(|e| wrap(e, format!("failed to scale LWS {}", existing.name())))?;
    }
    Ok(())
}

/// `cleanupDrainedLWS` (disaggregatedset_controller.go:360-416): delete an old revision's LWS
/// (by their listed names, so a legacy slice-0 name works too) only once every role of that
/// revision is at 0 replicas, so a rolling update never tears a revision down part way.
async fn cleanup_drained_lws(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
) -> Result<()> {
    let lws_list = lws_manager::list(c, ds.namespace(), ds.name(), slice, "")
        .await
        .map_err(|e| wrap(e, "failed to list LWS for cleanup"))?;

    // Old revision -> role -> LWS. Two LWS of one role and revision: the later one listed
    // wins (upstream logs a warning).
    let mut revision_lws: BTreeMap<String, BTreeMap<String, Arc<LeaderWorkerSet>>> =
        BTreeMap::new();
    for lws in &lws_list {
        let lws_revision = k8s::label(&lws.metadata, keys::REVISION).unwrap_or("");
        if lws_revision == revision {
            continue;
        }
        let lws_role = k8s::label(&lws.metadata, keys::ROLE).unwrap_or("");
        revision_lws
            .entry(lws_revision.to_string())
            .or_default()
            .insert(lws_role.to_string(), Arc::clone(lws));
    }

    for roles in revision_lws.values() {
        let all_drained = roles
            .values()
            .all(|lws| lws_manager::get_lws_replicas(lws) == 0);
        if !all_drained {
            continue;
        }
        for lws in roles.values() {
            lws_manager::delete(c, ds.namespace(), lws.name())
                .await
                .map_err(|e| wrap(e, format!("failed to delete LWS {}", lws.name())))?;
            let msg = format!("Deleted drained LWS {}", lws.name());
            c.eventf(ds, None, "Normal", EVENT_REASON_LWS_DELETED, "Delete", &msg);
        }
    }
    Ok(())
}

/// `recreateLegacySlice0` (disaggregatedset_controller.go:418-461): when slices goes above 1,
/// delete each role's label-less legacy slice-0 LWS at the target revision, its legacy Service
/// first (a partial failure leaves the LWS, so this retries), so the slice loop recreates it
/// slice-aware. Slice 0 restarts once. A legacy LWS at an older revision is left to the
/// rolling update.
async fn recreate_legacy_slice0(
    c: &impl Client,
    ds: &DisaggregatedSet,
    revision: &str,
    role_names: &[String],
) -> Result<()> {
    for role in role_names {
        let legacy_name = utils::generate_legacy_name(ds.name(), revision, role);
        let lws = lws_manager::get(c, ds.namespace(), &legacy_name).await?;
        let Some(lws) = lws else {
            continue;
        };
        if utils::has_slice_label(lws.metadata.labels.as_ref()) {
            continue;
        }
        service_manager::delete_legacy_service(c, ds, revision, role).await?;
        lws_manager::delete(c, ds.namespace(), lws.name())
            .await
            .map_err(|e| wrap(e, format!("failed to delete legacy LWS {}", lws.name())))?;
        let msg = format!(
            "Deleted legacy slice-0 LWS {} to recreate it in slice-aware form",
            lws.name()
        );
        c.eventf(
            ds,
            None,
            "Normal",
            EVENT_REASON_LWS_DELETED,
            "Migrate",
            &msg,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not an upstream test (the controller's tests at v0.10.0 all run a fake client through
    /// whole reconciles): `earliestRequeue` keeps the soonest non-zero requeue.
    #[test]
    fn earliest_requeue_keeps_the_soonest_non_zero() {
        let after = Action::requeue_after;
        let none = Action::done();
        let cases = [
            (none, none, none),
            (none, after(5), after(5)),
            (after(5), none, after(5)),
            (after(5), after(3), after(3)),
            (after(3), after(5), after(3)),
            (after(3), after(3), after(3)),
        ];
        for (a, b, want) in cases {
            assert_eq!(earliest_requeue(a, b), want, "{a:?} {b:?}");
        }
    }
}
