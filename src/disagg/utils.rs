//! `pkg/utils/disaggregatedset/utils.go` at v0.10.0: names, labels, the revision hash, the
//! initial-replicas annotation and the grouping of a set's LeaderWorkerSets by revision.
//!
//! Upstream's `RevisionRolesList` methods are free functions over `&[RevisionRoles]`, and Go
//! maps are `BTreeMap`s, so every iteration here is in key order.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::api::{keys, DisaggregatedRoleSpec, DisaggregatedSet};
use crate::api::{LeaderWorkerSet, LeaderWorkerTemplate};
use crate::hash::fnv1a64;
use crate::k8s;

/// `NumRequiredRoles` (utils.go:31): a DisaggregatedSet has at least this many roles.
pub const NUM_REQUIRED_ROLES: usize = 2;

/// `GetInitialReplicas` (utils.go:33-46): the initial-replicas annotation as a 32-bit integer;
/// `None` when it is absent, empty or does not parse (Go's `(0, false)`).
pub fn get_initial_replicas(lws: &LeaderWorkerSet) -> Option<i32> {
    let value = k8s::annotation(&lws.metadata, keys::INITIAL_REPLICAS)?;
    if value.is_empty() {
        return None;
    }
    value.parse::<i32>().ok()
}

/// `SetInitialReplicas` (utils.go:48-53): writes the initial-replicas annotation in place.
pub fn set_initial_replicas(lws: &mut LeaderWorkerSet, replicas: i32) {
    lws.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::INITIAL_REPLICAS.to_string(), replicas.to_string());
}

/// `ComputeInitialReplicaState` (utils.go:55-81): per role label, the sum over the given
/// LeaderWorkerSets of the initial-replicas annotation, falling back to `spec.replicas`
/// (1 when unset). Objects without a role label are skipped.
pub fn compute_initial_replica_state(lws_list: &[Arc<LeaderWorkerSet>]) -> BTreeMap<String, i32> {
    let mut state = BTreeMap::new();
    for lws in lws_list {
        let role = k8s::label(&lws.metadata, keys::ROLE).unwrap_or("");
        if role.is_empty() {
            continue;
        }
        let replicas = match get_initial_replicas(lws) {
            Some(r) => r,
            None => lws.spec.replicas.unwrap_or(1),
        };
        *state.entry(role.to_string()).or_insert(0) += replicas;
    }
    state
}

/// `CreateParams` (utils.go:83-91): what `lws_manager::create` needs to build one LWS.
#[derive(Clone, Debug)]
pub struct CreateParams<'a> {
    pub ds: &'a DisaggregatedSet,
    pub role: &'a str,
    pub slice: i32,
    pub config: &'a DisaggregatedRoleSpec,
    pub revision: &'a str,
    pub labels: BTreeMap<String, String>,
    pub replicas: i32,
}

/// `GenerateName` (utils.go:93-95): `<base>-<slice>-<revision>-<role>`.
pub fn generate_name(base_name: &str, slice: i32, revision: &str, role: &str) -> String {
    format!("{base_name}-{slice}-{revision}-{role}")
}

/// `GenerateLegacyName` (utils.go:97-101): the name from before slices existed,
/// `<base>-<revision>-<role>`; such objects belong to slice 0 and are adopted by it.
pub fn generate_legacy_name(base_name: &str, revision: &str, role: &str) -> String {
    format!("{base_name}-{revision}-{role}")
}

/// `GenerateLabels` (utils.go:103-111): `app`, role, slice, set name and revision.
pub fn generate_labels(
    base_name: &str,
    slice: i32,
    revision: &str,
    role: &str,
) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_string(), format!("{base_name}-{slice}-{role}")),
        (keys::ROLE.to_string(), role.to_string()),
        (keys::SLICE.to_string(), slice.to_string()),
        (keys::SET_NAME.to_string(), base_name.to_string()),
        (keys::REVISION.to_string(), revision.to_string()),
    ])
}

/// `GetSlices` (utils.go:113-119): `spec.slices`, 1 when unset.
pub fn get_slices(ds: &DisaggregatedSet) -> i32 {
    ds.spec.slices.unwrap_or(1)
}

/// `SliceLabelMatches` (utils.go:121-133): whether labels place an object in `slice`. A negative
/// slice matches everything; slice 0 also matches an object without (or with an empty) slice
/// label, so objects from before slices count as slice 0.
pub fn slice_label_matches(labels: Option<&BTreeMap<String, String>>, slice: i32) -> bool {
    if slice < 0 {
        return true;
    }
    match labels.and_then(|l| l.get(keys::SLICE)) {
        None => slice == 0,
        Some(v) if v.is_empty() => slice == 0,
        Some(v) => *v == slice.to_string(),
    }
}

/// `HasSliceLabel` (utils.go:135-140): a non-empty slice label, i.e. the object was made by a
/// slice-aware controller.
pub fn has_slice_label(labels: Option<&BTreeMap<String, String>>) -> bool {
    labels
        .and_then(|l| l.get(keys::SLICE))
        .is_some_and(|v| !v.is_empty())
}

/// `revisionLength` (utils.go:142).
const REVISION_LENGTH: usize = 8;

/// `roleTemplate`, the local type `ComputeRevision` hashes (utils.go:145-148).
#[derive(Serialize)]
struct RoleTemplate<'a> {
    name: &'a str,
    template: &'a LeaderWorkerTemplate,
}

/// `ComputeRevision` (utils.go:144-169): a hash of every role's name and
/// `leaderWorkerTemplate`, in role order. Upstream takes the first 8 hex characters of the
/// sha256 of Go's JSON, which Rust cannot reproduce byte for byte; here the list of
/// `{name, template}` goes through a `serde_json::Value` (so object keys are sorted) to bytes,
/// and the revision is the first 8 lowercase hex characters of its FNV-1a 64
/// (`crate::hash::fnv1a64`). Equal specs give equal revisions, and the result is always a
/// valid label value and DNS label part. Replicas and role metadata are not hashed.
pub fn compute_revision(roles: &[DisaggregatedRoleSpec]) -> String {
    let templates: Vec<RoleTemplate<'_>> = roles
        .iter()
        .map(|r| RoleTemplate {
            name: &r.name,
            template: &r.spec.leader_worker_template,
        })
        .collect();
    let value = serde_json::to_value(&templates).expect("role templates serialize");
    let bytes = serde_json::to_vec(&value).expect("values serialize");
    let full = format!("{:016x}", fnv1a64(&[&bytes]));
    full[..REVISION_LENGTH].to_string()
}

/// `GetRoleConfigs` (utils.go:171-180): each role's spec by name (a later duplicate wins).
pub fn get_role_configs(ds: &DisaggregatedSet) -> BTreeMap<String, &DisaggregatedRoleSpec> {
    let mut configs = BTreeMap::new();
    for role in &ds.spec.roles {
        configs.insert(role.name.clone(), role);
    }
    configs
}

/// `GetRoleNames` (utils.go:182-188): the role names in spec order.
pub fn get_role_names(ds: &DisaggregatedSet) -> Vec<String> {
    ds.spec.roles.iter().map(|r| r.name.clone()).collect()
}

/// `RevisionRoles` (utils.go:190-193): one revision's LeaderWorkerSets by role.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RevisionRoles {
    pub revision: String,
    pub roles: BTreeMap<String, Arc<LeaderWorkerSet>>,
}

/// `RevisionRolesList` (utils.go:195); its methods are the free functions below.
pub type RevisionRolesList = Vec<RevisionRoles>;

/// `getLWSReplicas` (utils.go:197-202): `spec.replicas`, 1 when unset.
pub(crate) fn get_lws_replicas(lws: &LeaderWorkerSet) -> i32 {
    lws.spec.replicas.unwrap_or(1)
}

/// `RevisionRolesList.GetTotalReplicasPerRole` (utils.go:204-212): the role's replicas summed
/// over all revisions.
pub fn get_total_replicas_per_role(revisions: &[RevisionRoles], role: &str) -> i32 {
    revisions
        .iter()
        .filter_map(|rev| rev.roles.get(role))
        .map(|lws| get_lws_replicas(lws))
        .sum()
}

/// `RevisionRolesList.GetTotalInitialReplicasPerRole` (utils.go:214-227): like
/// `get_total_replicas_per_role`, but each LWS counts its initial-replicas annotation when it
/// has a valid one.
pub fn get_total_initial_replicas_per_role(revisions: &[RevisionRoles], role: &str) -> i32 {
    revisions
        .iter()
        .filter_map(|rev| rev.roles.get(role))
        .map(|lws| get_initial_replicas(lws).unwrap_or_else(|| get_lws_replicas(lws)))
        .sum()
}

/// `GroupByRevision` (utils.go:229-248): the LeaderWorkerSets grouped by revision label, then
/// by role label (a missing label is ""; a later LWS of the same revision and role wins).
/// Upstream returns the groups in Go's random map order; here they are sorted by revision.
pub fn group_by_revision(lws_list: &[Arc<LeaderWorkerSet>]) -> Vec<RevisionRoles> {
    let mut by_revision: BTreeMap<String, RevisionRoles> = BTreeMap::new();
    for lws in lws_list {
        let revision = k8s::label(&lws.metadata, keys::REVISION).unwrap_or("");
        let role = k8s::label(&lws.metadata, keys::ROLE).unwrap_or("");
        let group = by_revision
            .entry(revision.to_string())
            .or_insert_with(|| RevisionRoles {
                revision: revision.to_string(),
                roles: BTreeMap::new(),
            });
        group.roles.insert(role.to_string(), Arc::clone(lws));
    }
    by_revision.into_values().collect()
}

#[cfg(test)]
mod tests {

    /// An optional label list, as the Go tests' `map[string]string` literals (nil or not).
    type Labels<'a> = Option<&'a [(&'a str, &'a str)]>;
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    const PREFILL: &str = "prefill";
    const DECODE: &str = "decode";

    fn map(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn lws(
        name: &str,
        labels: Labels<'_>,
        annotations: Labels<'_>,
        replicas: Option<i32>,
    ) -> LeaderWorkerSet {
        let mut l = LeaderWorkerSet {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                labels: labels.map(map),
                annotations: annotations.map(map),
                ..Default::default()
            },
            ..Default::default()
        };
        l.spec.replicas = replicas;
        l
    }

    #[test]
    fn get_initial_replicas_parses_the_annotation() {
        let k = keys::INITIAL_REPLICAS;
        // (case, annotations, want); utils_test.go@v0.10.0:LINE per case.
        let cases: [(&str, Labels<'_>, Option<i32>); 6] = [
            ("valid annotation (:21)", Some(&[(k, "5")]), Some(5)),
            ("missing annotation (:36)", Some(&[]), None),
            ("nil annotations (:49)", None, None),
            ("invalid value (:61)", Some(&[(k, "not-a-number")]), None),
            ("empty value (:76)", Some(&[(k, "")]), None),
            ("zero value (:91)", Some(&[(k, "0")]), Some(0)),
        ];
        for (case, annotations, want) in cases {
            let l = lws("test-lws", None, annotations, None);
            assert_eq!(get_initial_replicas(&l), want, "{case}");
        }
    }

    #[test]
    fn set_initial_replicas_writes_the_annotation() {
        let k = keys::INITIAL_REPLICAS;
        // (case, annotations before, replicas); utils_test.go@v0.10.0:LINE per case.
        let cases: [(&str, Labels<'_>, i32); 4] = [
            ("nil annotations (:108)", None, 3),
            (
                "existing annotations (:124)",
                Some(&[("other-key", "other-value")]),
                5,
            ),
            ("overwrites (:143)", Some(&[(k, "10")]), 7),
            ("zero replicas (:161)", None, 0),
        ];
        for (case, annotations, replicas) in cases {
            let mut l = lws("test-lws", None, annotations, Some(replicas));
            set_initial_replicas(&mut l, replicas);
            let want = replicas.to_string();
            assert_eq!(
                k8s::annotation(&l.metadata, k),
                Some(want.as_str()),
                "{case}"
            );
            if annotations.is_some_and(|a| a.iter().any(|(key, _)| *key == "other-key")) {
                let other = k8s::annotation(&l.metadata, "other-key");
                assert_eq!(other, Some("other-value"), "{case}: others kept");
            }
        }
    }

    /// One LWS of `compute_initial_replica_state`'s tests: role, annotation, `spec.replicas`.
    type Item<'a> = (&'a str, Option<&'a str>, Option<i32>);

    #[test]
    fn compute_initial_replica_state_sums_per_role() {
        // (case, items, want prefill, want decode); utils_test.go@v0.10.0:LINE per case.
        let cases: [(&str, Vec<Item>, i32, i32); 8] = [
            ("empty list (:178)", vec![], 0, 0),
            (
                "prefill annotations (:187)",
                vec![(PREFILL, Some("3"), Some(3)), (PREFILL, Some("2"), Some(2))],
                5,
                0,
            ),
            (
                "decode annotations (:225)",
                vec![(DECODE, Some("4"), Some(4)), (DECODE, Some("6"), Some(6))],
                0,
                10,
            ),
            (
                "mixed roles (:263)",
                vec![
                    (PREFILL, Some("3"), Some(3)),
                    (DECODE, Some("6"), Some(6)),
                    (PREFILL, Some("2"), Some(2)),
                ],
                5,
                6,
            ),
            (
                "missing annotation (:315)",
                vec![(PREFILL, None, Some(4))],
                4,
                0,
            ),
            (
                "invalid annotation (:335)",
                vec![(DECODE, Some("not-a-number"), Some(5))],
                0,
                5,
            ),
            (
                "valid and invalid (:358)",
                vec![
                    (PREFILL, Some("3"), Some(3)),
                    (PREFILL, Some("invalid"), Some(2)),
                ],
                5,
                0,
            ),
            ("nil replicas (:395)", vec![(PREFILL, None, None)], 1, 0),
        ];
        for (case, items, want_prefill, want_decode) in cases {
            let list: Vec<Arc<LeaderWorkerSet>> = items
                .iter()
                .enumerate()
                .map(|(i, (role, annotation, replicas))| {
                    let labels = [(keys::ROLE, *role)];
                    let annotations = annotation.map(|a| [(keys::INITIAL_REPLICAS, a)]);
                    let name = format!("lws-{i}");
                    let a = annotations.as_ref().map(|a| &a[..]);
                    Arc::new(lws(&name, Some(&labels), a, *replicas))
                })
                .collect();
            let state = compute_initial_replica_state(&list);
            let got = |role: &str| state.get(role).copied().unwrap_or(0);
            assert_eq!(got(PREFILL), want_prefill, "{case}: prefill");
            assert_eq!(got(DECODE), want_decode, "{case}: decode");
        }
    }

    #[test]
    fn slice_label_matches_buckets_legacy_objects_into_slice_zero() {
        let s = keys::SLICE;
        // utils_test.go@v0.10.0:421-428, one case a line.
        let cases: [(&str, Labels<'_>, i32, bool); 8] = [
            ("all slices matches label-less", None, -1, true),
            ("all slices matches labeled", Some(&[(s, "3")]), -1, true),
            ("slice 0 matches legacy label-less", None, 0, true),
            ("slice 0 matches empty label", Some(&[(s, "")]), 0, true),
            ("slice 0 matches slice 0", Some(&[(s, "0")]), 0, true),
            (
                "slice 0 does not match slice 1",
                Some(&[(s, "1")]),
                0,
                false,
            ),
            ("slice 1 does not match legacy label-less", None, 1, false),
            ("slice 1 matches slice 1", Some(&[(s, "1")]), 1, true),
        ];
        for (case, labels, slice, want) in cases {
            let labels = labels.map(map);
            assert_eq!(slice_label_matches(labels.as_ref(), slice), want, "{case}");
        }
    }

    // Not upstream: the properties the brief asks of our revision and of the Rust-only ordering.

    #[test]
    fn revisions_are_eight_lowercase_hex_characters() {
        for roles in [vec![], vec![DisaggregatedRoleSpec::default()]] {
            let r = compute_revision(&roles);
            assert_eq!(r.len(), 8);
            assert!(r
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }
    }

    #[test]
    fn groups_come_sorted_by_revision() {
        let rev = |name: &str, r: &str, role: &str| {
            let labels = [(keys::REVISION, r), (keys::ROLE, role)];
            Arc::new(lws(name, Some(&labels), None, Some(2)))
        };
        let list = vec![
            rev("a", "r2", PREFILL),
            rev("b", "r1", PREFILL),
            rev("c", "r2", DECODE),
        ];
        let groups = group_by_revision(&list);
        let revisions: Vec<&str> = groups.iter().map(|g| g.revision.as_str()).collect();
        assert_eq!(revisions, ["r1", "r2"]);
        assert_eq!(groups[1].roles.len(), 2);
        assert_eq!(get_total_replicas_per_role(&groups, PREFILL), 4);
        assert_eq!(get_total_initial_replicas_per_role(&groups, DECODE), 2);
    }
}
