//! `pkg/utils/disaggregatedset/affinity.go` at v0.10.0: the pod (anti-)affinity terms a
//! DisaggregatedSet's placement policy puts on the pod templates of its LeaderWorkerSets.

use k8s_openapi::api::core::v1::{
    Affinity, PodAffinity, PodAffinityTerm, PodAntiAffinity, PodSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::api::{keys, PlacementPolicy, PLACEMENT_EXCLUSIVE_TOPOLOGY, PLACEMENT_NONE};

const OP_IN: &str = "In";
const OP_NOT_IN: &str = "NotIn";
const OP_EXISTS: &str = "Exists";

/// `SetPlacementAffinities` (affinity.go:28-115): appends to `pod_spec`'s affinity, keeping
/// what is there, the terms of `policy`. Nothing happens without a policy, for `None` (or an
/// empty type), or without a topology key (the webhook rejects that; the guard keeps an
/// unvalidated spec from producing terms with an empty `topologyKey`).
///
/// Every policy adds a podAffinity term keeping the slice's roles in one topology domain (same
/// set name, same slice) and a podAntiAffinity term spreading the set's slices over domains
/// (same set name, other slice). For slice 0 that anti-affinity term also requires the slice
/// label to exist: pods from before slices carry none and are slice 0 themselves, so without it
/// a slice-0 pod would repel itself from its legacy predecessor's domain. `ExclusiveTopology`
/// adds a second anti-affinity term against every other DisaggregatedSet's slices (set-name
/// label present but different, slice label present), so each domain holds one slice, while
/// workloads not managed by a DisaggregatedSet may still share it.
pub fn set_placement_affinities(
    pod_spec: &mut PodSpec,
    ds_name: &str,
    slice: i32,
    policy: Option<&PlacementPolicy>,
) {
    let Some(policy) = policy else { return };
    if policy.type_ == PLACEMENT_NONE || policy.type_.is_empty() || policy.topology.is_empty() {
        return;
    }
    let slice_str = slice.to_string();
    let topology_key = policy.topology.as_str();

    // Upstream deep-copies the existing affinity so it never appends to a template shared with
    // the caller; `pod_spec` is owned here, so taking it out is the same.
    let mut affinity = pod_spec.affinity.take().unwrap_or_default();
    let pod_affinity = affinity
        .pod_affinity
        .get_or_insert_with(PodAffinity::default);
    pod_affinity
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(Vec::new)
        .push(term(
            vec![
                req(keys::SET_NAME, OP_IN, &[ds_name]),
                req(keys::SLICE, OP_IN, &[slice_str.as_str()]),
            ],
            topology_key,
        ));

    let mut spread = vec![req(keys::SET_NAME, OP_IN, &[ds_name])];
    if slice == 0 {
        spread.push(req(keys::SLICE, OP_EXISTS, &[]));
    }
    spread.push(req(keys::SLICE, OP_NOT_IN, &[slice_str.as_str()]));
    let anti = anti_terms(&mut affinity);
    anti.push(term(spread, topology_key));

    if policy.type_ == PLACEMENT_EXCLUSIVE_TOPOLOGY {
        anti.push(term(
            vec![
                req(keys::SET_NAME, OP_EXISTS, &[]),
                req(keys::SET_NAME, OP_NOT_IN, &[ds_name]),
                req(keys::SLICE, OP_EXISTS, &[]),
            ],
            topology_key,
        ));
    }

    pod_spec.affinity = Some(affinity);
}

/// The required podAntiAffinity terms of `affinity`, created empty when absent.
fn anti_terms(affinity: &mut Affinity) -> &mut Vec<PodAffinityTerm> {
    affinity
        .pod_anti_affinity
        .get_or_insert_with(PodAntiAffinity::default)
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(Vec::new)
}

/// A `LabelSelectorRequirement`; no values (`Exists`) leaves `values` unset, as Go's nil.
fn req(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.to_string(),
        operator: operator.to_string(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

/// A `PodAffinityTerm` selecting on `exprs` over `topology_key`.
fn term(exprs: Vec<LabelSelectorRequirement>, topology_key: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(LabelSelector {
            match_expressions: Some(exprs),
            match_labels: None,
        }),
        topology_key: topology_key.to_string(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disagg::api::PLACEMENT_EXCLUSIVE_SLICE;
    use k8s_openapi::api::core::v1::NodeAffinity;

    const DS_NAME: &str = "my-ds";
    const TOPO: &str = "cloud.google.com/gke-nodepool";

    fn policy(type_: &str, topology: &str) -> PlacementPolicy {
        PlacementPolicy {
            type_: type_.to_string(),
            topology: topology.to_string(),
        }
    }

    fn placed(slice: i32, p: Option<&PlacementPolicy>) -> PodSpec {
        let mut spec = PodSpec::default();
        set_placement_affinities(&mut spec, DS_NAME, slice, p);
        spec
    }

    fn affinity_terms(spec: &PodSpec) -> &Vec<PodAffinityTerm> {
        let a = spec.affinity.as_ref().expect("affinity");
        let pa = a.pod_affinity.as_ref().expect("podAffinity");
        pa.required_during_scheduling_ignored_during_execution
            .as_ref()
            .expect("required terms")
    }

    fn anti_affinity_terms(spec: &PodSpec) -> &Vec<PodAffinityTerm> {
        let a = spec.affinity.as_ref().expect("affinity");
        let pa = a.pod_anti_affinity.as_ref().expect("podAntiAffinity");
        pa.required_during_scheduling_ignored_during_execution
            .as_ref()
            .expect("required terms")
    }

    fn exprs(t: &PodAffinityTerm) -> &Vec<LabelSelectorRequirement> {
        let s = t.label_selector.as_ref().expect("selector");
        s.match_expressions.as_ref().expect("expressions")
    }

    #[test]
    fn no_policy_none_or_no_topology_inject_nothing() {
        // affinity_test.go@v0.10.0:36, :42, :50.
        assert_eq!(placed(0, None).affinity, None);
        let none = policy(PLACEMENT_NONE, TOPO);
        assert_eq!(placed(0, Some(&none)).affinity, None);
        let no_topology = policy(PLACEMENT_EXCLUSIVE_SLICE, "");
        assert_eq!(placed(0, Some(&no_topology)).affinity, None);
    }

    #[test]
    fn exclusive_slice_colocates_and_spreads_the_set() {
        // affinity_test.go@v0.10.0:58
        let p = policy(PLACEMENT_EXCLUSIVE_SLICE, TOPO);
        let spec = placed(1, Some(&p));
        let aff = affinity_terms(&spec);
        assert_eq!(aff.len(), 1);
        assert_eq!(aff[0].topology_key, TOPO);
        assert_eq!(
            *exprs(&aff[0]),
            vec![
                req(keys::SET_NAME, OP_IN, &[DS_NAME]),
                req(keys::SLICE, OP_IN, &["1"]),
            ]
        );
        let anti = anti_affinity_terms(&spec);
        assert_eq!(anti.len(), 1);
        assert_eq!(anti[0].topology_key, TOPO);
        assert_eq!(
            *exprs(&anti[0]),
            vec![
                req(keys::SET_NAME, OP_IN, &[DS_NAME]),
                req(keys::SLICE, OP_NOT_IN, &["1"]),
            ]
        );
    }

    #[test]
    fn slice_zero_spread_requires_the_slice_label() {
        // affinity_test.go@v0.10.0:84
        let p = policy(PLACEMENT_EXCLUSIVE_SLICE, TOPO);
        let spec = placed(0, Some(&p));
        let anti = anti_affinity_terms(&spec);
        assert_eq!(anti.len(), 1);
        let exists = LabelSelectorRequirement {
            key: keys::SLICE.to_string(),
            operator: OP_EXISTS.to_string(),
            values: None,
        };
        assert_eq!(
            *exprs(&anti[0]),
            vec![
                req(keys::SET_NAME, OP_IN, &[DS_NAME]),
                exists,
                req(keys::SLICE, OP_NOT_IN, &["0"]),
            ]
        );
    }

    #[test]
    fn exclusive_topology_excludes_other_sets() {
        // affinity_test.go@v0.10.0:104
        let p = policy(PLACEMENT_EXCLUSIVE_TOPOLOGY, TOPO);
        let spec = placed(0, Some(&p));
        assert_eq!(affinity_terms(&spec).len(), 1);
        let anti = anti_affinity_terms(&spec);
        assert_eq!(anti.len(), 2);
        assert_eq!(anti[1].topology_key, TOPO);
        assert_eq!(
            *exprs(&anti[1]),
            vec![
                req(keys::SET_NAME, OP_EXISTS, &[]),
                req(keys::SET_NAME, OP_NOT_IN, &[DS_NAME]),
                req(keys::SLICE, OP_EXISTS, &[]),
            ]
        );
    }

    #[test]
    fn existing_affinity_is_kept_and_the_callers_copy_untouched() {
        // affinity_test.go@v0.10.0:125
        let existing = Affinity {
            pod_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                    topology_key: "existing-key".to_string(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            node_affinity: Some(NodeAffinity::default()),
            ..Default::default()
        };
        let mut spec = PodSpec {
            affinity: Some(existing.clone()),
            ..Default::default()
        };
        let p = policy(PLACEMENT_EXCLUSIVE_SLICE, TOPO);
        set_placement_affinities(&mut spec, DS_NAME, 0, Some(&p));
        let aff = affinity_terms(&spec);
        assert_eq!(aff.len(), 2);
        assert_eq!(aff[0].topology_key, "existing-key");
        assert!(spec.affinity.as_ref().unwrap().node_affinity.is_some());
        let original = existing.pod_affinity.as_ref().unwrap();
        let original_terms = original
            .required_during_scheduling_ignored_during_execution
            .as_ref();
        assert_eq!(original_terms.map(Vec::len), Some(1));
    }
}
