//! The DisaggregatedSet workload (`lws-sim fuzz --workload disaggregated`, v0.10.0 only): the
//! case's LWS shape becomes each role of a two-role DisaggregatedSet (prefill and decode, each
//! `replicas` groups of `size` pods with the case's rollout knobs), so the template update is a
//! set rollout: the DisaggregatedSet controller creates the new revision's LWS per role and
//! moves groups from old to new in planned steps. Faults hit pods of either role of the old or
//! the new revision; the invariants judge every LWS of the set on its own, and the case ends
//! once the old revision is gone and one LWS per role is left.
//!
//! A pod is named by its LWS, `<set>-<slice>-<revision>-<role>` (`src/disagg/utils.rs`
//! `generate_name`), so a fault's target is computed from the revision the controller will
//! compute (`compute_revision` of the roles after the CRD's defaults, as the API server stores
//! them). Scale steps and a broken first image are LWS-only: a set is scaled per role through
//! its spec or its scalers, and a planner waiting on a revision that never comes up is a
//! question of its own.

use lws::disagg::api::DisaggregatedSet;
use lws::disagg::{utils, webhook};
use serde_json::{json, Value};

use super::{Case, CaseStep, Target};
use crate::rng::SimRng;

/// What a case rolls out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Workload {
    /// One LeaderWorkerSet (every release).
    #[default]
    Lws,
    /// A DisaggregatedSet of two roles (v0.10.0).
    Disaggregated,
    /// One LeaderWorkerSet updated by deleting it and creating it again at once with the new
    /// templates, as `kubectl replace --force` does (every release; Z11).
    Replaced,
    /// One LeaderWorkerSet whose pods are gang-scheduled: scheduled by `volcano`, under a
    /// reconciler with `gang-scheduling=volcano` (v0.10.0), each group a PodGroup.
    Gang,
}

impl Workload {
    pub fn as_str(self) -> &'static str {
        match self {
            Workload::Lws => "lws",
            Workload::Disaggregated => "disaggregated",
            Workload::Replaced => "lws-replaced",
            Workload::Gang => "lws-gang",
        }
    }

    pub fn parse(s: &str) -> Option<Workload> {
        match s {
            "lws" => Some(Workload::Lws),
            "disaggregated" => Some(Workload::Disaggregated),
            "lws-replaced" => Some(Workload::Replaced),
            "lws-gang" => Some(Workload::Gang),
            _ => None,
        }
    }

    /// Whether `reconciler` can run this workload's cases: a DisaggregatedSet needs its
    /// controller (v0.10.0), a gang its scheduler provider (`gang-scheduling=volcano`).
    pub fn check_reconciler(self, reconciler: &lws::profile::Profile) -> Result<(), String> {
        use lws::profile::{GangScheduling, Release};
        match self {
            Workload::Disaggregated if reconciler.release != Release::V0_10_0 => Err(format!(
                "--workload disaggregated: {} runs no DisaggregatedSet controller (only v0.10.0 does)",
                reconciler.name
            )),
            Workload::Gang if reconciler.flags.gang_scheduling != GangScheduling::Volcano => {
                Err(format!(
                    "--workload lws-gang: {} has no scheduler provider (add gang-scheduling=volcano, a v0.10.0 flag)",
                    reconciler.name
                ))
            }
            _ => Ok(()),
        }
    }
}

/// The set's name and its roles, in spec order.
pub const SET: &str = "fz";
pub const ROLES: [&str; 2] = ["prefill", "decode"];

/// Turn a drawn LWS case into its DisaggregatedSet form: no scale step, a working first image,
/// room for both roles of two revisions, and each fault aimed at a role and a revision drawn
/// from a stream of its own (so the LWS draws are the same for both workloads).
pub fn adapt(case: &mut Case) {
    case.workload = Workload::Disaggregated;
    case.broken_first_image = false;
    case.steps.retain(|s| !matches!(s, CaseStep::Scale(_)));
    case.nodes = nodes_for(case.size);
    let mut rng = SimRng::labelled(case.seed, "ds-targets");
    for step in &mut case.steps {
        if let CaseStep::Fault { target, .. } = step {
            *target = Target {
                role: (rng.next_u64() % ROLES.len() as u64) as usize,
                new_revision: rng.next_u64().is_multiple_of(2),
            };
        }
    }
}

/// Nodes (of 4 pods) for both roles, each at its largest (8 groups, surge 2) on two revisions
/// at once, with room for drains.
pub fn nodes_for(size: i32) -> u32 {
    2 * super::nodes_for(size)
}

/// The set with `image` in every role: each role's spec is the case's LWS spec.
pub fn manifest(lws: &Value) -> Value {
    let roles: Vec<Value> = ROLES
        .iter()
        .map(|r| json!({"name": r, "spec": lws["spec"]}))
        .collect();
    json!({
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": SET},
        "spec": {"roles": roles},
    })
}

/// The revision the controller computes for the set `manifest`, as the API server stores it.
pub fn revision(manifest: &Value) -> Result<String, String> {
    let mut ds: DisaggregatedSet =
        serde_json::from_value(manifest.clone()).map_err(|e| format!("DisaggregatedSet: {e}"))?;
    webhook::default_crd(&mut ds);
    Ok(utils::compute_revision(&ds.spec.roles))
}

/// The LWS of `role` at `revision` (slice 0).
pub fn lws_name(revision: &str, role: &str) -> String {
    utils::generate_name(SET, 0, revision, role)
}
