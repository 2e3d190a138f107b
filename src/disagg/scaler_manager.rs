//! `pkg/controllers/disaggregatedset/scaler_manager.go` at v0.10.0: one
//! DisaggregatedSetRoleScaler per External role (KEP-849), created and garbage-collected by
//! the DisaggregatedSet controller, whose status it writes so an autoscaler sees a valid
//! `/scale` target. Upstream's `ScalerManager` holds only the client and the recorder, so its
//! methods are free functions taking `c`.
//!
//! Not faithful: `WriteStatus` stamps a new (or newly changed) Ready condition with
//! `time.Now()`; there is no clock here, so the scaler's own `creationTimestamp` stands in (the
//! first status write follows the scaler's creation in the same reconcile), or the epoch when
//! it has none.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use crate::client::{Client, Result};
use crate::disagg::api::{
    self, keys, DisaggregatedSet, DisaggregatedSetRoleScaler, RoleScalerSpec, RoleScalerStatus,
};
use crate::disagg::{merge_from, wrap};
use crate::k8s;

pub const EVENT_REASON_SCALER_CREATED: &str = "ScalerCreated";
pub const EVENT_REASON_SCALER_DELETED: &str = "ScalerDeleted";
pub const EVENT_REASON_SCALER_CONFLICT: &str = "ScalerConflict";

/// `ScalerName` (scaler_manager.go:56-57): `<set>-<role>`.
pub fn scaler_name(ds_name: &str, role: &str) -> String {
    format!("{ds_name}-{role}")
}

/// `Reconcile` (scaler_manager.go:59-120): delete the scalers this set controls whose role is
/// no longer External, create the missing ones (`seed_for(role)` their first `spec.replicas`),
/// and return role -> scaler. Upstream's `seedFor` may be nil (seed 0): pass `&|_| 0`.
pub async fn reconcile(
    c: &impl Client,
    ds: &DisaggregatedSet,
    seed_for: &dyn Fn(&str) -> i32,
) -> Result<BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>> {
    let external_roles: BTreeSet<String> = ds
        .spec
        .roles
        .iter()
        .filter(|r| {
            r.scaling
                .as_ref()
                .is_some_and(|s| s.mode == api::SCALING_EXTERNAL)
        })
        .map(|r| r.name.clone())
        .collect();

    let list = c
        .list::<DisaggregatedSetRoleScaler>(ds.namespace(), &[(keys::SET_NAME, ds.name())])
        .await
        .map_err(|e| wrap(e, "list scalers"))?;

    let uid = k8s::uid(&ds.metadata);
    let mut existing = BTreeMap::new();
    for s in list {
        if !is_controlled_by(&s.metadata, uid) {
            continue;
        }
        let role = k8s::label(&s.metadata, keys::ROLE)
            .unwrap_or("")
            .to_string();
        if !external_roles.contains(&role) {
            let name = k8s::name(&s.metadata);
            let deleted = c
                .delete::<DisaggregatedSetRoleScaler>(k8s::namespace(&s.metadata), name, None)
                .await;
            if let Err(e) = deleted {
                if !e.is_not_found() {
                    return Err(wrap(e, format!("delete scaler {name}")));
                }
            }
            let msg = format!("Deleted scaler {name} (role {role} is no longer External)");
            c.eventf(
                ds,
                None,
                "Normal",
                EVENT_REASON_SCALER_DELETED,
                "Delete",
                &msg,
            );
            continue;
        }
        existing.insert(role, s);
    }

    for role in &external_roles {
        if existing.contains_key(role) {
            continue;
        }
        let seed = seed_for(role);
        if let Some(s) = create(c, ds, role, seed).await? {
            existing.insert(role.clone(), s);
        }
    }
    Ok(existing)
}

/// `create` (scaler_manager.go:122-163): create `<set>-<role>` controlled by the set; when
/// the name is taken, adopt the existing scaler only if this set already controls it,
/// otherwise record a ScalerConflict warning and return None.
async fn create(
    c: &impl Client,
    ds: &DisaggregatedSet,
    role: &str,
    seed: i32,
) -> Result<Option<Arc<DisaggregatedSetRoleScaler>>> {
    let name = scaler_name(ds.name(), role);
    let labels = BTreeMap::from([
        (keys::SET_NAME.to_string(), ds.name().to_string()),
        (keys::ROLE.to_string(), role.to_string()),
    ]);
    let scaler = DisaggregatedSetRoleScaler {
        api_version: api::API_VERSION.to_string(),
        kind: api::SCALER_KIND.to_string(),
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(ds.namespace().to_string()),
            labels: Some(labels),
            owner_references: Some(vec![k8s::controller_ref(
                api::API_VERSION,
                api::KIND,
                &ds.metadata,
            )]),
            ..ObjectMeta::default()
        },
        spec: RoleScalerSpec { replicas: seed },
        status: None,
    };
    match c.create(scaler).await {
        Ok(created) => {
            let msg = format!("Created scaler {name} for role {role}");
            c.eventf(
                ds,
                None,
                "Normal",
                EVENT_REASON_SCALER_CREATED,
                "Create",
                &msg,
            );
            return Ok(Some(created));
        }
        Err(e) if !e.is_already_exists() => {
            return Err(wrap(e, format!("create scaler {name}")));
        }
        Err(_) => {}
    }
    // The name is taken: adopt only what this set already controls.
    let cur = c
        .get::<DisaggregatedSetRoleScaler>(ds.namespace(), &name)
        .await
        .map_err(|e| wrap(e, format!("get existing scaler {name}")))?;
    if !is_controlled_by(&cur.metadata, k8s::uid(&ds.metadata)) {
        let msg = format!(
            "Scaler {name} exists but is not controlled by this DisaggregatedSet; not adopting"
        );
        c.eventf(
            ds,
            None,
            "Warning",
            EVENT_REASON_SCALER_CONFLICT,
            "Conflict",
            &msg,
        );
        return Ok(None);
    }
    Ok(Some(cur))
}

/// `WriteStatus` (scaler_manager.go:165-199): on each scaler, `status.replicas` (the role's
/// observed LWS groups over all revisions), a leader-only `status.selector` (one pod per group,
/// so HPA's per-pod averaging divides by the count it scales), `observedGeneration` and a Ready
/// condition, as a merge patch of the status subresource from the scaler as given.
pub async fn write_status(
    c: &impl Client,
    ds: &DisaggregatedSet,
    scalers: &BTreeMap<String, Arc<DisaggregatedSetRoleScaler>>,
    observed_replicas: &BTreeMap<String, i32>,
) -> Result<()> {
    for (role, s) in scalers {
        let generation = s.metadata.generation.unwrap_or(0);
        let mut desired: DisaggregatedSetRoleScaler = (**s).clone();
        let status = desired.status.get_or_insert_with(RoleScalerStatus::default);
        status.replicas = observed_replicas.get(role).copied().unwrap_or(0);
        status.selector = format!(
            "{}={},{}={},{}=0",
            keys::SET_NAME,
            ds.name(),
            keys::ROLE,
            role,
            crate::api::keys::WORKER_INDEX
        );
        status.observed_generation = generation;
        let ready = Condition {
            type_: api::SCALER_READY.to_string(),
            status: "True".to_string(),
            // Go's `omitempty` drops a zero generation.
            observed_generation: (generation != 0).then_some(generation),
            reason: "Bound".to_string(),
            message: "Scaler bound to a live DisaggregatedSet role".to_string(),
            last_transition_time: transition_time(s),
        };
        set_status_condition(&mut status.conditions, ready);
        let name = k8s::name(&s.metadata);
        c.merge_patch_status::<DisaggregatedSetRoleScaler>(
            k8s::namespace(&s.metadata),
            name,
            merge_from(&**s, &desired),
        )
        .await
        .map_err(|e| wrap(e, format!("patch scaler {name} status")))?;
    }
    Ok(())
}

/// The stand-in for `time.Now()` in `WriteStatus` (see the module comment).
fn transition_time(s: &DisaggregatedSetRoleScaler) -> Time {
    s.metadata
        .creation_timestamp
        .clone()
        .unwrap_or(Time(Timestamp::UNIX_EPOCH))
}

/// `apimeta.SetStatusCondition` (apimachinery `pkg/api/meta/conditions.go`): append when the
/// type is missing; otherwise take the new status (and, when it changes, the new transition
/// time), reason, message and observed generation. `new.last_transition_time` is the time to
/// stamp (upstream passes a zero time and the helper takes `time.Now()`). Returns whether
/// anything changed.
pub(crate) fn set_status_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = new.last_transition_time;
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation.unwrap_or(0) != new.observed_generation.unwrap_or(0) {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// `isControlledBy` (scaler_manager.go:201-208): a controller owner reference with this UID.
pub(crate) fn is_controlled_by(meta: &ObjectMeta, uid: &str) -> bool {
    meta.owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

#[cfg(test)]
mod tests {
    //! scaler_manager_test.go@v0.10.0. The four tests on controller-runtime's fake client run
    //! on `FakeClient` (`disagg::fake`) seeded with scalers only; `block_on` polls once, since
    //! nothing in it suspends.
    //! `TestGetTargetReplicasResolutionMatrix` (:122) tests `executor::get_target_replicas` and
    //! is ported in `executor.rs`.

    use super::*;
    use crate::disagg::api::{DisaggregatedRoleSpec, DisaggregatedSetSpec, RoleScaling};
    use crate::disagg::fake::{block_on, FakeClient};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn scalers() -> FakeClient {
        FakeClient::with(Vec::<DisaggregatedSetRoleScaler>::new())
    }

    fn stored(c: &FakeClient, name: &str) -> Option<DisaggregatedSetRoleScaler> {
        c.stored("default", name)
    }

    /// `newDSWithRoles` (scaler_manager_test.go@v0.10.0:36).
    fn new_ds_with_roles(name: &str, roles: Vec<DisaggregatedRoleSpec>) -> DisaggregatedSet {
        DisaggregatedSet {
            api_version: api::API_VERSION.into(),
            kind: api::KIND.into(),
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                uid: Some(format!("uid-{name}")),
                ..ObjectMeta::default()
            },
            spec: DisaggregatedSetSpec {
                roles,
                ..DisaggregatedSetSpec::default()
            },
            status: None,
        }
    }

    /// `externalRole` (scaler_manager_test.go@v0.10.0:43).
    fn external_role(name: &str) -> DisaggregatedRoleSpec {
        DisaggregatedRoleSpec {
            name: name.into(),
            scaling: Some(RoleScaling {
                mode: api::SCALING_EXTERNAL.into(),
            }),
            ..DisaggregatedRoleSpec::default()
        }
    }

    /// `staticRole` (scaler_manager_test.go@v0.10.0:50).
    fn static_role(name: &str) -> DisaggregatedRoleSpec {
        DisaggregatedRoleSpec {
            name: name.into(),
            ..DisaggregatedRoleSpec::default()
        }
    }

    fn scaler(
        name: &str,
        labels: &[(&str, &str)],
        owner: Option<&str>,
    ) -> DisaggregatedSetRoleScaler {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let owner = owner.map(|uid| OwnerReference {
            api_version: api::API_VERSION.into(),
            kind: api::KIND.into(),
            name: "myds".into(),
            uid: uid.into(),
            controller: Some(true),
            block_owner_deletion: None,
        });
        DisaggregatedSetRoleScaler {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                labels: (!labels.is_empty()).then_some(labels),
                owner_references: owner.map(|o| vec![o]),
                ..ObjectMeta::default()
            },
            ..DisaggregatedSetRoleScaler::default()
        }
    }

    /// `TestScalerManagerReconcileCreatesMissing` (scaler_manager_test.go@v0.10.0:54).
    #[test]
    fn reconcile_creates_missing() {
        let ds = new_ds_with_roles(
            "myds",
            vec![external_role("prefill"), static_role("decode")],
        );
        let c = scalers();
        let scalers = block_on(reconcile(&c, &ds, &|_: &str| 0)).expect("Reconcile");
        assert!(scalers.contains_key("prefill"));
        assert!(!scalers.contains_key("decode"));

        let got = stored(&c, "myds-prefill").expect("created");
        assert_eq!(k8s::label(&got.metadata, keys::ROLE), Some("prefill"));
        assert_eq!(k8s::label(&got.metadata, keys::SET_NAME), Some("myds"));
        let refs = got.metadata.owner_references.clone().unwrap_or_default();
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].uid, "uid-myds");
        assert_eq!(refs[0].controller, Some(true));
    }

    /// `TestScalerManagerReconcileDeletesOrphaned` (scaler_manager_test.go@v0.10.0:73).
    #[test]
    fn reconcile_deletes_orphaned() {
        let ds = new_ds_with_roles(
            "myds",
            vec![external_role("prefill"), static_role("decode")],
        );
        let labels = [(keys::SET_NAME, "myds"), (keys::ROLE, "old-role")];
        let stale = scaler("myds-old-role", &labels, Some("uid-myds"));
        let c = FakeClient::with(vec![stale]);
        block_on(reconcile(&c, &ds, &|_: &str| 0)).expect("Reconcile");
        assert!(stored(&c, "myds-old-role").is_none());
    }

    /// `TestScalerManagerReconcileRefusesForeignScaler` (scaler_manager_test.go@v0.10.0:97).
    #[test]
    fn reconcile_refuses_foreign_scaler() {
        let ds = new_ds_with_roles(
            "myds",
            vec![external_role("prefill"), static_role("decode")],
        );
        let c = FakeClient::with(vec![scaler("myds-prefill", &[], None)]);
        let scalers = block_on(reconcile(&c, &ds, &|_: &str| 0)).expect("Reconcile");
        assert!(!scalers.contains_key("prefill"));

        let got = stored(&c, "myds-prefill").expect("still there");
        assert!(
            got.metadata.owner_references.is_none(),
            "foreign scaler must not be adopted"
        );
        let events = c.events.borrow();
        assert!(
            events
                .iter()
                .any(|e| e.contains(EVENT_REASON_SCALER_CONFLICT)),
            "expected conflict event: {events:?}"
        );
    }

    /// `TestScalerManagerWriteStatus` (scaler_manager_test.go@v0.10.0:157).
    #[test]
    fn write_status() {
        let ds = new_ds_with_roles("myds", vec![external_role("prefill")]);
        let mut s = scaler("myds-prefill", &[], None);
        s.metadata.generation = Some(2);
        s.spec.replicas = 5;
        let c = FakeClient::with(vec![s.clone()]);
        let scalers = BTreeMap::from([("prefill".to_string(), Arc::new(s))]);
        let observed = BTreeMap::from([("prefill".to_string(), 4)]);
        block_on(super::write_status(&c, &ds, &scalers, &observed)).expect("WriteStatus");

        let got = stored(&c, "myds-prefill").expect("stored");
        let status = got.status.expect("status");
        assert_eq!(status.replicas, 4);
        assert_eq!(
            status.selector,
            "disaggregatedset.x-k8s.io/name=myds,disaggregatedset.x-k8s.io/role=prefill,leaderworkerset.sigs.k8s.io/worker-index=0"
        );
        assert_eq!(status.conditions.len(), 1);
        assert_eq!(status.conditions[0].status, "True");
        assert_eq!(status.observed_generation, 2);
    }

    /// Not upstream: `SetStatusCondition` keeps the transition time unless the status changes.
    #[test]
    fn set_status_condition_moves_the_transition_time_only_on_a_status_change() {
        let at = |s: i64| Time(Timestamp::from_second(s).expect("valid"));
        let cond = |status: &str, t: i64, reason: &str| Condition {
            type_: "Ready".into(),
            status: status.into(),
            observed_generation: None,
            reason: reason.into(),
            message: String::new(),
            last_transition_time: at(t),
        };
        let mut conditions = vec![cond("True", 1, "A")];
        assert!(!set_status_condition(&mut conditions, cond("True", 9, "A")));
        assert_eq!(conditions, vec![cond("True", 1, "A")]);
        assert!(set_status_condition(&mut conditions, cond("True", 9, "B")));
        assert_eq!(conditions, vec![cond("True", 1, "B")]);
        assert!(set_status_condition(&mut conditions, cond("False", 9, "B")));
        assert_eq!(conditions, vec![cond("False", 9, "B")]);
    }
}
