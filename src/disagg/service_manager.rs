//! `pkg/controllers/disaggregatedset/service_manager.go` at v0.10.0: one headless Service per
//! role LWS of the target revision (`<lws name>-prv`), created once every role of that revision
//! has a ready group, and removed when its revision drains or its slice goes away. Upstream's
//! `ServiceManager` holds only the client (and the scheme, unused once owner references are
//! written by hand), so its methods are free functions taking it first; logging is dropped.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Service, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::api::{keys, DisaggregatedSet, API_VERSION, KIND};
use super::utils::{self, RevisionRoles};
use super::wrap;
use crate::api::LeaderWorkerSet;
use crate::client::{Client, Result};
use crate::k8s;

/// `corev1.ClusterIPNone`: a headless Service.
pub const CLUSTER_IP_NONE: &str = "None";

/// `ReconcileServices` (service_manager.go:50-92): once the target revision has a ready LWS for
/// every role, makes sure each of its role LWSs has its Service, then deletes the slice's
/// Services of revisions that are no longer ready on all roles. Until then nothing changes, so
/// clients keep the Services they have.
pub async fn reconcile_services(
    c: &impl Client,
    deployment: &DisaggregatedSet,
    slice: i32,
    revision_roles: &[RevisionRoles],
    target_revision: &str,
) -> Result<()> {
    let role_names = utils::get_role_names(deployment);
    let target_group = revision_roles
        .iter()
        .find(|g| g.revision == target_revision);
    let Some(target_group) = target_group.filter(|g| revision_ready_on_all_roles(g, &role_names))
    else {
        return Ok(());
    };
    // The Service is built from the target LWS, so it selects exactly that LWS's pods: a
    // slice-0 LWS from before slices gets a slice-agnostic Service, a slice-aware one a
    // slice-scoped Service.
    for role_name in &role_names {
        let Some(lws) = target_group.roles.get(role_name) else {
            continue;
        };
        ensure_service(c, deployment, lws)
            .await
            .map_err(|e| wrap(e, format!("failed to ensure service for {role_name}")))?;
    }
    cleanup_drained_services(
        c,
        deployment,
        slice,
        revision_roles,
        target_revision,
        &role_names,
    )
    .await
    .map_err(|e| wrap(e, "failed to cleanup drained services"))
}

/// `revisionReadyOnAllRoles` (service_manager.go:94-104): every role has an LWS in the group
/// with at least one ready replica.
pub(crate) fn revision_ready_on_all_roles(group: &RevisionRoles, role_names: &[String]) -> bool {
    role_names.iter().all(|role| {
        group
            .roles
            .get(role)
            .is_some_and(|lws| lws.status.as_ref().map_or(0, |s| s.ready_replicas) >= 1)
    })
}

/// `ensureService` (service_manager.go:106-125): creates the LWS's Service; one that already
/// exists is left as it is.
pub(crate) async fn ensure_service(
    c: &impl Client,
    deployment: &DisaggregatedSet,
    lws: &LeaderWorkerSet,
) -> Result<()> {
    let service = build_service(deployment, lws);
    let name = k8s::name(&service.metadata).to_string();
    match c.create(service).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(wrap(e, format!("failed to create service {name}"))),
    }
}

/// `buildService` (service_manager.go:127-163): the headless, portless Service `<lws>-prv`,
/// labelled with and selecting the LWS's own set-name, role and revision labels, and its slice
/// label when it has one (so an LWS from before slices, which has none, gets a selector that
/// matches its unlabelled pods); controlled by the set (no `blockOwnerDeletion`, as upstream).
pub(crate) fn build_service(deployment: &DisaggregatedSet, lws: &LeaderWorkerSet) -> Service {
    let label = |key: &str| k8s::label(&lws.metadata, key).unwrap_or("").to_string();
    let mut selector = BTreeMap::from([
        (keys::SET_NAME.to_string(), deployment.name().to_string()),
        (keys::ROLE.to_string(), label(keys::ROLE)),
        (keys::REVISION.to_string(), label(keys::REVISION)),
    ]);
    if utils::has_slice_label(lws.metadata.labels.as_ref()) {
        selector.insert(keys::SLICE.to_string(), label(keys::SLICE));
    }
    let owner = OwnerReference {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        name: deployment.name().to_string(),
        uid: deployment.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: None,
    };
    Service {
        metadata: ObjectMeta {
            name: Some(format!("{}-prv", lws.name())),
            namespace: deployment.metadata.namespace.clone(),
            labels: Some(selector.clone()),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            cluster_ip: Some(CLUSTER_IP_NONE.to_string()),
            selector: Some(selector),
            ..Default::default()
        }),
        status: None,
    }
}

/// `cleanupDrainedServices` (service_manager.go:165-214): deletes the slice's Services whose
/// revision is neither the target nor ready on all roles. All the set's Services are listed
/// and kept to the slice here, so slice 0 also cleans up a Service from before slices (no slice
/// label) once its revision drains.
pub(crate) async fn cleanup_drained_services(
    c: &impl Client,
    deployment: &DisaggregatedSet,
    slice: i32,
    revision_roles: &[RevisionRoles],
    target_revision: &str,
    role_names: &[String],
) -> Result<()> {
    let mut ready_revisions: BTreeSet<&str> = revision_roles
        .iter()
        .filter(|g| revision_ready_on_all_roles(g, role_names))
        .map(|g| g.revision.as_str())
        .collect();
    ready_revisions.insert(target_revision);
    let services = list_services(c, deployment).await?;
    for service in &services {
        if !utils::slice_label_matches(service.metadata.labels.as_ref(), slice) {
            continue;
        }
        let service_revision = k8s::label(&service.metadata, keys::REVISION).unwrap_or("");
        if !ready_revisions.contains(service_revision) {
            delete_service(c, service).await?;
        }
    }
    Ok(())
}

/// `CleanupRemovedSlices` (service_manager.go:216-249): deletes the set's Services whose slice
/// label is a number at or above `desired_slices` (Services without one are kept).
pub async fn cleanup_removed_slices(
    c: &impl Client,
    deployment: &DisaggregatedSet,
    desired_slices: i32,
) -> Result<()> {
    let services = list_services(c, deployment).await?;
    for service in &services {
        let slice_label = k8s::label(&service.metadata, keys::SLICE).unwrap_or("");
        // `strconv.Atoi`: a (64-bit) decimal integer, an optional sign allowed.
        let Ok(slice_idx) = slice_label.parse::<i64>() else {
            continue;
        };
        if slice_idx < i64::from(desired_slices) {
            continue;
        }
        delete_service(c, service).await?;
    }
    Ok(())
}

/// `DeleteLegacyService` (service_manager.go:251-265): deletes the Service from before slices
/// (`<set>-<revision>-<role>-prv`, no slice). Used when slice 0 migrates: that Service has the
/// target revision, so the drained-revision cleanup never removes it. Already gone is no error.
pub async fn delete_legacy_service(
    c: &impl Client,
    deployment: &DisaggregatedSet,
    revision: &str,
    role: &str,
) -> Result<()> {
    let name = format!(
        "{}-prv",
        utils::generate_legacy_name(deployment.name(), revision, role)
    );
    match c
        .delete::<Service>(deployment.namespace(), &name, None)
        .await
    {
        Err(e) if !e.is_not_found() => {
            Err(wrap(e, format!("failed to delete legacy service {name}")))
        }
        _ => Ok(()),
    }
}

/// The List both cleanups start with (service_manager.go:187-193, :225-231): the set's
/// Services in its namespace, by set-name label.
async fn list_services(
    c: &impl Client,
    deployment: &DisaggregatedSet,
) -> Result<Vec<std::sync::Arc<Service>>> {
    c.list::<Service>(
        deployment.namespace(),
        &[(keys::SET_NAME, deployment.name())],
    )
    .await
    .map_err(|e| wrap(e, "failed to list services"))
}

/// The Delete both cleanups end with (service_manager.go:204-209, :240-245): a Service already
/// gone is skipped.
async fn delete_service(c: &impl Client, service: &Service) -> Result<()> {
    let name = k8s::name(&service.metadata);
    match c
        .delete::<Service>(k8s::namespace(&service.metadata), name, None)
        .await
    {
        Err(e) if !e.is_not_found() => Err(wrap(e, format!("failed to delete service {name}"))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LeaderWorkerSetStatus;
    use std::sync::Arc;

    const PREFILL: &str = "prefill";
    const DECODE: &str = "decode";

    /// `readyLWS` (service_manager_test.go@v0.10.0:42-54): a slice-0 LWS with the standard
    /// name and labels and `ready` ready replicas.
    fn ready_lws(ds_name: &str, revision: &str, role: &str, ready: i32) -> Arc<LeaderWorkerSet> {
        Arc::new(LeaderWorkerSet {
            metadata: ObjectMeta {
                name: Some(utils::generate_name(ds_name, 0, revision, role)),
                labels: Some(utils::generate_labels(ds_name, 0, revision, role)),
                ..Default::default()
            },
            status: Some(LeaderWorkerSetStatus {
                ready_replicas: ready,
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn deployment(name: &str) -> DisaggregatedSet {
        DisaggregatedSet {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("default".to_string()),
                uid: Some("test-uid".to_string()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn group(ds_name: &str, revision: &str, prefill: i32, decode: i32) -> RevisionRoles {
        RevisionRoles {
            revision: revision.to_string(),
            roles: BTreeMap::from([
                (
                    PREFILL.to_string(),
                    ready_lws(ds_name, revision, PREFILL, prefill),
                ),
                (
                    DECODE.to_string(),
                    ready_lws(ds_name, revision, DECODE, decode),
                ),
            ]),
        }
    }

    #[test]
    fn a_revision_is_ready_when_every_role_has_a_ready_replica() {
        // The readiness gate of service_manager_test.go@v0.10.0:66 (only prefill ready: no
        // Service) and :93 (both ready: Services), which go through ReconcileServices and the
        // fake client upstream.
        let roles = vec![PREFILL.to_string(), DECODE.to_string()];
        let cases = [
            ("only prefill ready (:66)", 2, 0, false),
            ("both ready (:93)", 1, 1, true),
            ("drained (:464)", 0, 0, false),
        ];
        for (case, prefill, decode, want) in cases {
            let g = group("test-deploy", "abc12345", prefill, decode);
            assert_eq!(revision_ready_on_all_roles(&g, &roles), want, "{case}");
        }
        let mut missing = group("test-deploy", "abc12345", 1, 1);
        missing.roles.remove(DECODE);
        assert!(
            !revision_ready_on_all_roles(&missing, &roles),
            "a role without an LWS"
        );
    }

    #[test]
    fn the_service_is_headless_portless_named_and_labelled_after_its_lws() {
        // service_manager_test.go@v0.10.0:129 (headless), :159 (portless), :189 (name),
        // :221 (labels), :254 (selector); upstream reads the Service ReconcileServices created
        // back from the fake client, here it is `build_service`'s result.
        let d = deployment("my-app");
        let svc = build_service(&d, &ready_lws("my-app", "ef53f2d7", DECODE, 1));
        assert_eq!(k8s::name(&svc.metadata), "my-app-0-ef53f2d7-decode-prv");
        assert_eq!(svc.metadata.namespace.as_deref(), Some("default"));
        let spec = svc.spec.as_ref().unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), Some(CLUSTER_IP_NONE));
        assert!(spec.ports.as_ref().is_none_or(Vec::is_empty));
        let want = BTreeMap::from([
            (keys::SET_NAME.to_string(), "my-app".to_string()),
            (keys::REVISION.to_string(), "ef53f2d7".to_string()),
            (keys::ROLE.to_string(), DECODE.to_string()),
            (keys::SLICE.to_string(), "0".to_string()),
        ]);
        assert_eq!(svc.metadata.labels.as_ref(), Some(&want));
        assert_eq!(spec.selector.as_ref(), Some(&want));
        let owner = &svc.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            (KIND, "test-uid")
        );
        assert_eq!(owner.controller, Some(true));
    }

    #[test]
    fn a_legacy_lws_gets_a_slice_agnostic_selector() {
        // Not a separate upstream case: buildService's comment (service_manager.go:127-131).
        let d = deployment("test-deploy");
        let mut legacy = (*ready_lws("test-deploy", "old12345", PREFILL, 1)).clone();
        let legacy_name = utils::generate_legacy_name("test-deploy", "old12345", PREFILL);
        legacy.metadata.name = Some(legacy_name);
        legacy.metadata.labels.as_mut().unwrap().remove(keys::SLICE);
        let svc = build_service(&d, &legacy);
        assert_eq!(k8s::name(&svc.metadata), "test-deploy-old12345-prefill-prv");
        let selector = svc.spec.unwrap().selector.unwrap();
        assert!(!selector.contains_key(keys::SLICE));
        assert_eq!(selector.len(), 3);
    }
}
