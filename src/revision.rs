//! Template revisions for the B02 fix (lws PR #277, c03d4c9, v0.5.0;
//! `pkg/utils/revision/revision_utils.go`): the LWS
//! controller stores each distinct `leaderWorkerTemplate` (and `networkConfig`) as a
//! ControllerRevision keyed by its template hash, and the pod controller rebuilds a group's
//! worker StatefulSet from the revision its leader carries instead of the live spec.
//!
//! Simplification (docs/fidelity.md): revisions are keyed by our template hash and named
//! `<lws>-<hash>`; upstream names them `<lws>-<hash>-<number>` and truncates them once a rollout
//! is done, which we do not.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::json;

use crate::api::{keys, LeaderWorkerSet, LeaderWorkerSetSpec};
use crate::client::{Error, Result};
use crate::k8s;

pub fn name(lws: &str, hash: &str) -> String {
    // `format!("{lws}-{hash}")` without `fmt`: every leader-pod reconcile names one.
    [lws, "-", hash].concat()
}

/// The revision holding the templates of `lws` as it is now.
pub fn new_revision(lws: &LeaderWorkerSet, hash: &str) -> ControllerRevision {
    let data = json!({
        "leaderWorkerTemplate": lws.spec.leader_worker_template,
        "networkConfig": lws.spec.network_config,
    });
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name(lws.name(), hash)),
            namespace: Some(lws.namespace().to_string()),
            labels: Some(
                [
                    (keys::SET_NAME.to_string(), lws.name().to_string()),
                    (keys::TEMPLATE_REVISION_HASH.to_string(), hash.to_string()),
                ]
                .into(),
            ),
            owner_references: Some(vec![k8s::controller_ref(
                crate::api::API_VERSION,
                crate::api::KIND,
                &lws.metadata,
            )]),
            ..Default::default()
        },
        data: RawExtension(data),
        revision: Some(1),
    }
}

/// `ApplyRevision`: the LWS with the revision's templates in place of the live ones.
pub fn apply_revision(lws: &LeaderWorkerSet, rev: &ControllerRevision) -> Result<LeaderWorkerSet> {
    let template = rev
        .data
        .0
        .get("leaderWorkerTemplate")
        .unwrap_or(&serde_json::Value::Null);
    let leader_worker_template = serde::Deserialize::deserialize(template).map_err(|e| {
        Error::internal(format!(
            "revision {} does not decode: {e}",
            k8s::name(&rev.metadata)
        ))
    })?;
    let network_config = match rev.data.0.get("networkConfig") {
        Some(nc) => serde::Deserialize::deserialize(nc).ok(),
        None => lws.spec.network_config.clone(),
    };
    // A copy of `lws` with the revision's parts; the live templates are not copied only to be
    // replaced.
    let spec = &lws.spec;
    Ok(LeaderWorkerSet {
        api_version: lws.api_version.clone(),
        kind: lws.kind.clone(),
        metadata: lws.metadata.clone(),
        spec: LeaderWorkerSetSpec {
            replicas: spec.replicas,
            leader_worker_template,
            rollout_strategy: spec.rollout_strategy.clone(),
            startup_policy: spec.startup_policy.clone(),
            network_config,
        },
        status: lws.status.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_round_trips_the_templates() {
        let mut a = LeaderWorkerSet::default();
        a.metadata.name = Some("x".into());
        a.spec.leader_worker_template.size = Some(3);
        let rev = new_revision(&a, "h1");
        let mut b = a.clone();
        b.spec.leader_worker_template.size = Some(5);
        let restored = apply_revision(&b, &rev).unwrap();
        assert_eq!(restored.spec.leader_worker_template.size, Some(3));
        assert_eq!(k8s::name(&rev.metadata), "x-h1");
    }
}
