//! `pkg/controllers/disaggregatedset/lws_manager.go` at v0.10.0: the LeaderWorkerSets of a
//! DisaggregatedSet, one per (slice, revision, role). Upstream's `LeaderWorkerSetManager` holds
//! only the client, so its methods are free functions taking it first; logging is dropped.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::affinity::set_placement_affinities;
use super::api::{keys, DisaggregatedSet, API_VERSION, KIND};
use super::utils::{self, CreateParams, RevisionRoles};
use super::{merge_from, wrap};
use crate::api::LeaderWorkerSet;
use crate::client::{Client, Result};
use crate::k8s;

/// `mergeLabels` (lws_manager.go:45-50): the user's labels overlaid with the controller's,
/// which win on a shared key.
pub(crate) fn merge_labels(
    user_labels: Option<&BTreeMap<String, String>>,
    auto_labels: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut merged = user_labels.cloned().unwrap_or_default();
    merged.extend(auto_labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    merged
}

/// `copyAnnotations` (lws_manager.go:52-57): a copy, `None` for no annotations.
pub(crate) fn copy_annotations(
    annotations: Option<&BTreeMap<String, String>>,
) -> Option<BTreeMap<String, String>> {
    annotations.filter(|a| !a.is_empty()).cloned()
}

/// `Create` (lws_manager.go:59-111): creates the role's LWS for the slice and revision;
/// one that already exists is left as it is.
pub async fn create(c: &impl Client, params: CreateParams<'_>) -> Result<()> {
    let lws = build_leader_worker_set(&params);
    let lws_name = lws.name().to_string();
    match c.create(lws).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(wrap(
            e,
            format!("failed to create LeaderWorkerSet {lws_name}"),
        )),
    }
}

/// The object `Create` sends (lws_manager.go:60-99): named `<set>-<slice>-<revision>-<role>`,
/// the role's metadata with the system labels on top, controlled by the set (a controller
/// reference without `blockOwnerDeletion`, as upstream writes it by hand), the role's spec with
/// `replicas` overridden and the pod templates prepared by `prepare_pod_template`.
pub(crate) fn build_leader_worker_set(params: &CreateParams<'_>) -> LeaderWorkerSet {
    let ds = params.ds;
    let config = params.config;
    let lws_name = utils::generate_name(ds.name(), params.slice, params.revision, params.role);
    let mut spec = config.spec.clone();
    spec.replicas = Some(params.replicas);
    let template = &mut spec.leader_worker_template;
    prepare_pod_template(&mut template.worker_template, params);
    if let Some(leader) = template.leader_template.as_mut() {
        prepare_pod_template(leader, params);
    }
    let owner = OwnerReference {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        name: ds.name().to_string(),
        uid: ds.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: None,
    };
    LeaderWorkerSet {
        api_version: crate::api::API_VERSION.to_string(),
        kind: crate::api::KIND.to_string(),
        metadata: ObjectMeta {
            name: Some(lws_name),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(merge_labels(
                config.metadata.labels.as_ref(),
                &params.labels,
            )),
            annotations: copy_annotations(config.metadata.annotations.as_ref()),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec,
        status: None,
    }
}

/// One pod template of `Create` (lws_manager.go:68-82): the system labels merged into the
/// template's (services select pods by them), the annotations copied, and the placement
/// policy's affinity terms added. A template without a `spec` keeps none unless the policy
/// adds terms (Go's `PodSpec` is a value, so there it is simply the zero spec).
fn prepare_pod_template(t: &mut PodTemplateSpec, params: &CreateParams<'_>) {
    let meta = t.metadata.get_or_insert_with(ObjectMeta::default);
    meta.labels = Some(merge_labels(meta.labels.as_ref(), &params.labels));
    meta.annotations = copy_annotations(meta.annotations.as_ref());
    let had_spec = t.spec.is_some();
    let mut pod_spec = t.spec.take().unwrap_or_default();
    let policy = params.ds.spec.placement_policy.as_ref();
    set_placement_affinities(&mut pod_spec, params.ds.name(), params.slice, policy);
    if had_spec || pod_spec != PodSpec::default() {
        t.spec = Some(pod_spec);
    }
}

/// `Scale` (lws_manager.go:113-131): sets `spec.replicas` by merge patch, unless it already
/// has that value.
pub async fn scale(c: &impl Client, namespace: &str, name: &str, replicas: i32) -> Result<()> {
    let lws = c
        .get::<LeaderWorkerSet>(namespace, name)
        .await
        .map_err(|e| {
            wrap(
                e,
                format!("failed to get LeaderWorkerSet {name} for scaling"),
            )
        })?;
    if get_lws_replicas(&lws) == replicas {
        return Ok(());
    }
    let mut scaled = (*lws).clone();
    scaled.spec.replicas = Some(replicas);
    c.merge_patch::<LeaderWorkerSet>(namespace, name, merge_from(&*lws, &scaled))
        .await
        .map_err(|e| wrap(e, format!("failed to scale LeaderWorkerSet {name}")))?;
    Ok(())
}

/// `Get` (lws_manager.go:133-143): the LWS from the cache, `None` when not found.
pub async fn get(
    c: &impl Client,
    namespace: &str,
    name: &str,
) -> Result<Option<Arc<LeaderWorkerSet>>> {
    match c.get::<LeaderWorkerSet>(namespace, name).await {
        Ok(lws) => Ok(Some(lws)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(wrap(e, format!("failed to get LeaderWorkerSet {name}"))),
    }
}

/// `List` (lws_manager.go:145-168): the set's LWSs (of `role` unless it is ""), kept to
/// `slice` after listing (a negative slice keeps all). Slice 0 also keeps LWSs without a
/// slice label; "label is 0 or absent" is no label selector, hence the filtering here.
pub async fn list(
    c: &impl Client,
    namespace: &str,
    disagg_deployment_name: &str,
    slice: i32,
    role: &str,
) -> Result<Vec<Arc<LeaderWorkerSet>>> {
    let mut labels = vec![(keys::SET_NAME, disagg_deployment_name)];
    if !role.is_empty() {
        labels.push((keys::ROLE, role));
    }
    let items = c
        .list::<LeaderWorkerSet>(namespace, &labels)
        .await
        .map_err(|e| {
            let context =
                format!("failed to list LeaderWorkerSets for {namespace}/{disagg_deployment_name}");
            wrap(e, context)
        })?;
    Ok(items
        .into_iter()
        .filter(|l| utils::slice_label_matches(l.metadata.labels.as_ref(), slice))
        .collect())
}

/// `GetForRole` (lws_manager.go:170-182): the LWS of (slice, revision, role) under its
/// slice-aware name; for slice 0, failing that, under the name from before slices, so that
/// object is adopted rather than duplicated.
pub async fn get_for_role(
    c: &impl Client,
    ds: &DisaggregatedSet,
    slice: i32,
    revision: &str,
    role: &str,
) -> Result<Option<Arc<LeaderWorkerSet>>> {
    let name = utils::generate_name(ds.name(), slice, revision, role);
    let lws = get(c, ds.namespace(), &name).await?;
    if lws.is_some() || slice != 0 {
        return Ok(lws);
    }
    let legacy = utils::generate_legacy_name(ds.name(), revision, role);
    get(c, ds.namespace(), &legacy).await
}

/// `Delete` (lws_manager.go:184-200): deletes the LWS; one already gone is no error.
pub async fn delete(c: &impl Client, namespace: &str, name: &str) -> Result<()> {
    match c.delete::<LeaderWorkerSet>(namespace, name, None).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(wrap(e, format!("failed to delete LeaderWorkerSet {name}"))),
    }
}

/// `getLWSReplicas` (lws_manager.go:202-207): `spec.replicas`, 1 when unset.
pub(crate) fn get_lws_replicas(lws: &LeaderWorkerSet) -> i32 {
    lws.spec.replicas.unwrap_or(1)
}

/// `GetRevisionRolesList` (lws_manager.go:209-244): the slice's LWSs grouped by revision,
/// split into the other revisions (sorted by revision) and the target `revision`'s group
/// (`None` while it has no LWS yet).
pub async fn get_revision_roles_list(
    c: &impl Client,
    namespace: &str,
    disagg_deployment_name: &str,
    slice: i32,
    revision: &str,
) -> Result<(Vec<RevisionRoles>, Option<RevisionRoles>)> {
    let lws_list = list(c, namespace, disagg_deployment_name, slice, "")
        .await
        .map_err(|e| wrap(e, "failed to list LWS"))?;
    let (new_lws, old_lws): (Vec<_>, Vec<_>) = lws_list
        .into_iter()
        .partition(|l| k8s::label(&l.metadata, keys::REVISION).unwrap_or("") == revision);
    let old_revisions = utils::group_by_revision(&old_lws);
    // Every new LWS has the same revision label, so there is at most one group.
    let new_revision = utils::group_by_revision(&new_lws).into_iter().next();
    Ok((old_revisions, new_revision))
}

/// `parseInitialReplicasAnnotation` (lws_manager.go:246-259): the initial-replicas
/// annotation as an integer, `None` when absent or not a number.
pub(crate) fn parse_initial_replicas_annotation(lws: &LeaderWorkerSet) -> Option<i32> {
    k8s::annotation(&lws.metadata, keys::INITIAL_REPLICAS)?
        .parse::<i32>()
        .ok()
}

/// `patchInitialReplicasAnnotation` (lws_manager.go:261-272): merge-patches the
/// initial-replicas annotation to `value`.
pub(crate) async fn patch_initial_replicas_annotation(
    c: &impl Client,
    lws: &LeaderWorkerSet,
    value: i32,
) -> Result<()> {
    let mut patched = lws.clone();
    patched
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::INITIAL_REPLICAS.to_string(), value.to_string());
    let patch = merge_from(lws, &patched);
    c.merge_patch::<LeaderWorkerSet>(lws.namespace(), lws.name(), patch)
        .await?;
    Ok(())
}

/// `SetInitialReplicas` (lws_manager.go:274-304): records `replicas` in the initial-replicas
/// annotation and returns the value it had before (`None` if none). An equal value is not
/// patched again; upstream only logs a warning when a different value is overwritten.
pub async fn set_initial_replicas(
    c: &impl Client,
    namespace: &str,
    name: &str,
    replicas: i32,
) -> Result<Option<i32>> {
    let lws = c
        .get::<LeaderWorkerSet>(namespace, name)
        .await
        .map_err(|e| wrap(e, format!("failed to get LeaderWorkerSet {name}")))?;
    let old_value = parse_initial_replicas_annotation(&lws);
    if old_value == Some(replicas) {
        return Ok(old_value);
    }
    patch_initial_replicas_annotation(c, &lws, replicas)
        .await
        .map_err(|e| {
            wrap(
                e,
                format!("failed to update initial-replicas annotation on {name}"),
            )
        })?;
    Ok(old_value)
}

#[cfg(test)]
mod tests {

    /// An optional label list, as the Go tests' `map[string]string` literals (nil or not).
    type Labels<'a> = Option<&'a [(&'a str, &'a str)]>;
    use super::*;
    use crate::api::{LeaderWorkerSetSpec, LeaderWorkerTemplate};
    use crate::disagg::api::{
        DisaggregatedRoleSpec, DisaggregatedSetSpec, PlacementPolicy, PLACEMENT_EXCLUSIVE_TOPOLOGY,
    };
    use k8s_openapi::api::core::v1::PodAffinityTerm;

    fn map(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn ds(name: &str, policy: Option<PlacementPolicy>) -> DisaggregatedSet {
        DisaggregatedSet {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("default".to_string()),
                uid: Some("uid".to_string()),
                ..Default::default()
            },
            spec: DisaggregatedSetSpec {
                placement_policy: policy,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn role_spec(name: &str, replicas: i32, size: i32) -> DisaggregatedRoleSpec {
        DisaggregatedRoleSpec {
            name: name.to_string(),
            spec: LeaderWorkerSetSpec {
                replicas: Some(replicas),
                leader_worker_template: LeaderWorkerTemplate {
                    size: Some(size),
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn parse_initial_replicas_annotation_cases() {
        let k = keys::INITIAL_REPLICAS;
        // lws_manager_test.go@v0.10.0:58-82, one case a line.
        let cases: [(&str, Labels<'_>, Option<i32>); 5] = [
            ("nil annotations map returns nil", None, None),
            (
                "missing annotation returns nil",
                Some(&[("other-key", "value")]),
                None,
            ),
            (
                "invalid non-numeric annotation returns nil",
                Some(&[(k, "not-a-number")]),
                None,
            ),
            (
                "valid annotation returns correct value",
                Some(&[(k, "5")]),
                Some(5),
            ),
            (
                "zero value annotation returns zero",
                Some(&[(k, "0")]),
                Some(0),
            ),
        ];
        for (case, annotations, want) in cases {
            let mut lws = LeaderWorkerSet::default();
            lws.metadata.annotations = annotations.map(map);
            assert_eq!(parse_initial_replicas_annotation(&lws), want, "{case}");
        }
    }

    #[test]
    fn get_lws_replicas_defaults_to_one() {
        // lws_manager_test.go@v0.10.0:110-124, one case a line.
        let cases = [
            ("nil replicas returns 1", None, 1),
            ("set replicas returns correct value", Some(5), 5),
            ("zero replicas returns 0", Some(0), 0),
        ];
        for (case, replicas, want) in cases {
            let mut lws = LeaderWorkerSet::default();
            lws.spec.replicas = replicas;
            assert_eq!(get_lws_replicas(&lws), want, "{case}");
        }
    }

    #[test]
    fn compute_revision_cases() {
        // lws_manager_test.go@v0.10.0:487: consistent, 8 characters.
        let roles = [role_spec("prefill", 2, 1), role_spec("decode", 3, 1)];
        let r1 = utils::compute_revision(&roles);
        assert_eq!(r1, utils::compute_revision(&roles));
        assert_eq!(r1.len(), 8);
        // lws_manager_test.go@v0.10.0:516: a different size changes it.
        let sized = [role_spec("prefill", 2, 2), role_spec("decode", 3, 1)];
        assert_ne!(r1, utils::compute_revision(&sized));
        // lws_manager_test.go@v0.10.0:564: a different role name changes it.
        let renamed = [role_spec("other-role", 2, 1), role_spec("decode", 3, 1)];
        assert_ne!(r1, utils::compute_revision(&renamed));
        // lws_manager_test.go@v0.10.0:612: no roles still gives 8 characters.
        assert_eq!(utils::compute_revision(&[]).len(), 8);
    }

    // The `TestManagerCreate` cases below check the object `Create` sends; upstream reads it
    // back from the fake client, here it is `build_leader_worker_set`'s result.

    #[test]
    fn create_merges_user_metadata_with_system_labels_winning() {
        // lws_manager_test.go@v0.10.0:365
        let d = ds("test", None);
        let mut config = role_spec("prefill", 1, 1);
        config.spec.replicas = None;
        config.metadata.labels = Some(map(&[
            ("kueue.x-k8s.io/queue-name", "q1"),
            ("app", "user-app"),
        ]));
        config.metadata.annotations = Some(map(&[("note", "val")]));
        let labels = map(&[
            (keys::SET_NAME, "test"),
            (keys::ROLE, "prefill"),
            ("app", "system-app"),
        ]);
        let params = CreateParams {
            ds: &d,
            role: "prefill",
            slice: 0,
            config: &config,
            revision: "rev1",
            labels,
            replicas: 1,
        };
        let lws = build_leader_worker_set(&params);
        assert_eq!(lws.name(), "test-0-rev1-prefill");
        assert_eq!(
            k8s::label(&lws.metadata, "kueue.x-k8s.io/queue-name"),
            Some("q1")
        );
        assert_eq!(k8s::label(&lws.metadata, "app"), Some("system-app"));
        assert_eq!(k8s::annotation(&lws.metadata, "note"), Some("val"));
        // Not asserted upstream: replicas, the owner, and the labels on the pod template.
        assert_eq!(lws.spec.replicas, Some(1));
        let owner = &lws.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.name.as_str(), owner.uid.as_str()), ("test", "uid"));
        assert_eq!(owner.controller, Some(true));
        let worker_meta = lws
            .spec
            .leader_worker_template
            .worker_template
            .metadata
            .as_ref();
        let worker_labels = worker_meta.and_then(|m| m.labels.as_ref());
        assert_eq!(worker_labels, Some(&params.labels));
    }

    fn required(terms: Option<&Vec<PodAffinityTerm>>) -> usize {
        terms.map_or(0, Vec::len)
    }

    #[test]
    fn create_injects_placement_affinity_into_both_templates() {
        // lws_manager_test.go@v0.10.0:398
        let policy = PlacementPolicy {
            type_: PLACEMENT_EXCLUSIVE_TOPOLOGY.to_string(),
            topology: "topology.example.com/rack".to_string(),
        };
        let d = ds("test-deploy", Some(policy));
        let mut config = role_spec("prefill", 1, 2);
        config.spec.replicas = None;
        config.spec.leader_worker_template.leader_template = Some(PodTemplateSpec::default());
        let labels = map(&[
            (keys::SET_NAME, "test-deploy"),
            (keys::ROLE, "prefill"),
            (keys::SLICE, "1"),
        ]);
        let params = CreateParams {
            ds: &d,
            role: "prefill",
            slice: 1,
            config: &config,
            revision: "abc123",
            labels,
            replicas: 2,
        };
        let lws = build_leader_worker_set(&params);
        assert_eq!(lws.name(), "test-deploy-1-abc123-prefill");
        let t = &lws.spec.leader_worker_template;
        for (name, tmpl) in [
            ("leader", t.leader_template.as_ref().unwrap()),
            ("worker", &t.worker_template),
        ] {
            let affinity = tmpl.spec.as_ref().and_then(|s| s.affinity.as_ref());
            let affinity = affinity.unwrap_or_else(|| panic!("{name} affinity"));
            let pod_affinity = affinity.pod_affinity.as_ref().expect("podAffinity");
            let aff = pod_affinity
                .required_during_scheduling_ignored_during_execution
                .as_ref()
                .expect("terms");
            assert_eq!(aff.len(), 1, "{name}");
            assert_eq!(aff[0].topology_key, "topology.example.com/rack", "{name}");
            let exprs = aff[0]
                .label_selector
                .as_ref()
                .unwrap()
                .match_expressions
                .as_ref();
            let got: Vec<(&str, &str, Option<&Vec<String>>)> = exprs
                .unwrap()
                .iter()
                .map(|r| (r.key.as_str(), r.operator.as_str(), r.values.as_ref()))
                .collect();
            let want_name = vec!["test-deploy".to_string()];
            let want_slice = vec!["1".to_string()];
            let want = vec![
                (keys::SET_NAME, "In", Some(&want_name)),
                (keys::SLICE, "In", Some(&want_slice)),
            ];
            assert_eq!(got, want, "{name}");
            let anti = affinity
                .pod_anti_affinity
                .as_ref()
                .expect("podAntiAffinity");
            let anti = anti
                .required_during_scheduling_ignored_during_execution
                .as_ref();
            assert_eq!(required(anti), 2, "{name}");
        }
    }

    #[test]
    fn create_injects_no_affinity_without_a_policy() {
        // lws_manager_test.go@v0.10.0:456
        let d = ds("test-deploy", None);
        let mut config = role_spec("prefill", 1, 2);
        config.spec.replicas = None;
        config.spec.leader_worker_template.leader_template = Some(PodTemplateSpec::default());
        let params = CreateParams {
            ds: &d,
            role: "prefill",
            slice: 0,
            config: &config,
            revision: "abc123",
            labels: map(&[(keys::SET_NAME, "test-deploy")]),
            replicas: 1,
        };
        let lws = build_leader_worker_set(&params);
        assert_eq!(lws.name(), "test-deploy-0-abc123-prefill");
        let t = &lws.spec.leader_worker_template;
        let affinity = |p: &PodTemplateSpec| p.spec.as_ref().and_then(|s| s.affinity.clone());
        assert_eq!(affinity(&t.worker_template), None, "worker affinity");
        assert_eq!(
            affinity(t.leader_template.as_ref().unwrap()),
            None,
            "leader affinity"
        );
    }
}
