//! The eviction subresource (`pods/<name>/eviction`; kubernetes
//! `pkg/registry/core/pod/storage/eviction.go` @01aa0f3f).
//!
//! Simplification (docs/fidelity.md): a PDB's healthy count and allowed disruptions are
//! computed from the live pods at eviction time, not read from the status the disruption
//! controller (`actors::disruption`) writes, and a pod already being evicted is not healthy,
//! which stands in for `disruptedPods`. `ObservedGeneration` is not compared (the budget is
//! never "not yet processed").

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use lws::k8s;

use super::{ApiError, ApiResult, ApiServer, DeleteOptions, Deleted, KindId, Reason, Selector};
use crate::time::to_time;

impl ApiServer {
    /// Evict a pod: delete it with `opts` (the Eviction's `deleteOptions`) unless a
    /// PodDisruptionBudget forbids it (429).
    pub fn evict(
        &mut self,
        actor: &str,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<Deleted<Pod>> {
        let key = (namespace.to_string(), name.to_string());
        let Some(pod) = self.try_get::<Pod>(namespace, name) else {
            return self.fail(
                actor,
                "evict",
                KindId::Pod,
                &key,
                super::not_found(KindId::Pod, name),
            );
        };
        // canIgnorePDB: pending, finished or already terminating pods are deleted outright.
        let phase = k8s::phase(&pod);
        if matches!(phase, "Pending" | "Succeeded" | "Failed") || k8s::is_terminating(&pod.metadata)
        {
            return self.add_condition_and_delete(actor, &pod, opts);
        }
        let labels = pod.metadata.labels.as_ref();
        let pdbs: Vec<_> = self
            .list::<PodDisruptionBudget>(Some(namespace), &Selector::everything())
            .into_iter()
            .filter(|b| {
                // policy/v1 (`GetPodPodDisruptionBudgets`): a nil selector matches nothing, an
                // empty one every pod of the namespace.
                let sel = b.spec.as_ref().and_then(|s| s.selector.as_ref());
                sel.is_some() && Selector::from_label_selector(sel).is_ok_and(|s| s.matches(labels))
            })
            .collect();
        if pdbs.len() > 1 {
            let e = ApiError::new(Reason::InternalError, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
            return self.fail(actor, "evict", KindId::Pod, &key, e);
        }
        if let Some(pdb) = pdbs.first() {
            let spec = pdb.spec.clone().unwrap_or_default();
            let sel = Selector::from_label_selector(spec.selector.as_ref())
                .unwrap_or_else(|_| Selector::nothing());
            let matched = self.list::<Pod>(Some(namespace), &sel);
            let expected = matched.len() as i32;
            let healthy = matched
                .iter()
                .filter(|p| k8s::is_running_and_ready(p) && !k8s::is_terminating(&p.metadata))
                .count() as i32;
            let desired = if let Some(min) = &spec.min_available {
                k8s::scaled_value(min, expected, true).unwrap_or(expected)
            } else if let Some(max) = &spec.max_unavailable {
                // `getExpectedPodCount`: never below zero.
                (expected - k8s::scaled_value(max, expected, true).unwrap_or(0)).max(0)
            } else {
                expected
            };
            // An unready pod counts for no budget: `AlwaysAllow` evicts it outright,
            // `IfHealthyBudget` (the default) while the budget is met.
            if !k8s::is_ready(&pod) {
                let policy = spec.unhealthy_pod_eviction_policy.as_deref();
                if policy == Some("AlwaysAllow") || (healthy >= desired && desired > 0) {
                    return self.add_condition_and_delete(actor, &pod, opts);
                }
            }
            if healthy - desired <= 0 {
                // `checkAndDecrement`: the refusal names the budget in a DisruptionBudget cause.
                let mut e = ApiError::new(
                    Reason::TooManyRequests,
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                );
                let budget = pdb.metadata.name.as_deref().unwrap_or_default();
                e.causes.push(super::Cause {
                    reason: "DisruptionBudget",
                    message: format!(
                        "The disruption budget {budget} needs {desired} healthy pods and has {healthy} currently"
                    ),
                    field: String::new(),
                });
                return self.fail(actor, "evict", KindId::Pod, &key, e);
            }
        }
        self.add_condition_and_delete(actor, &pod, opts)
    }

    /// eviction.go `addConditionAndDeletePod`: the pod gets the `DisruptionTarget` condition
    /// (PodDisruptionConditions, on by default from Kubernetes 1.26, the oldest minor
    /// simulated) through the status store, then is deleted; a dry run writes no condition.
    fn add_condition_and_delete(
        &mut self,
        actor: &str,
        pod: &Pod,
        opts: &DeleteOptions,
    ) -> ApiResult<Deleted<Pod>> {
        let (namespace, name) = (k8s::namespace(&pod.metadata), k8s::name(&pod.metadata));
        let mut opts = opts.clone();
        if !self.in_dry_run() {
            // `getLatestPod`: the caller's preconditions hold before anything is written.
            if let Some(e) = precondition_conflict(pod, &opts) {
                let key = (namespace.to_string(), name.to_string());
                return self.fail(actor, "evict", KindId::Pod, &key, e);
            }
            let mut marked = pod.clone();
            let now_ms = self.now_ms();
            if disruption_target(&mut marked, &BY_EVICTION_API, now_ms) {
                let written = self.update_status(actor, marked)?;
                // The resourceVersion precondition moves past this write, ours.
                if opts.precondition_rv.is_some() {
                    opts.precondition_rv = written.metadata.resource_version.clone();
                }
            }
        }
        self.delete::<Pod>(actor, namespace, name, &opts)
    }
}

/// eviction.go `getLatestPod`: a UID or resourceVersion precondition the pod does not meet.
fn precondition_conflict(pod: &Pod, opts: &DeleteOptions) -> Option<ApiError> {
    let meta = &pod.metadata;
    let name = k8s::name(meta);
    let why = if let Some(uid) = opts.precondition_uid.as_deref().filter(|u| !u.is_empty()) {
        (Some(uid) != meta.uid.as_deref()).then(|| format!("the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated", k8s::uid(meta)))
    } else {
        None
    };
    let why = why.or_else(|| {
        let rv = opts.precondition_rv.as_deref().filter(|r| !r.is_empty())?;
        let now = meta.resource_version.as_deref().unwrap_or_default();
        (rv != now).then(|| format!("the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({now}). The object might have been modified"))
    })?;
    let m = format!("Operation cannot be fulfilled on Pod {name:?}: {why}");
    Some(ApiError::new(Reason::Conflict, m))
}

/// Why a pod is about to be disrupted: a `DisruptionTarget` condition's reason and message
/// (k8s.io/api core/v1 `PodReasonDeletionByTaintManager` and the others; the messages are the
/// writers' own).
pub struct DisruptionReason {
    pub reason: &'static str,
    pub message: &'static str,
}

/// The eviction subresource's (eviction.go `addConditionAndDeletePod`).
pub const BY_EVICTION_API: DisruptionReason = DisruptionReason {
    reason: "EvictionByEvictionAPI",
    message: "Eviction API: evicting",
};

/// The taint eviction controller's (pkg/controller/tainteviction `addConditionAndDeletePod`).
pub const BY_TAINT_MANAGER: DisruptionReason = DisruptionReason {
    reason: "DeletionByTaintManager",
    message: "Taint manager: deleting due to NoExecute taint",
};

/// PodGC's, for a pod whose node no longer exists (pkg/controller/podgc `gcOrphaned`).
pub const BY_POD_GC: DisruptionReason = DisruptionReason {
    reason: "DeletionByPodGC",
    message: "PodGC: node no longer exists",
};

/// Set `DisruptionTarget=True` with `why` on `pod` as pkg/api/v1/pod `UpdatePodCondition`
/// does: the transition time moves only when the status changes. Whether anything changed.
pub fn disruption_target(pod: &mut Pod, why: &DisruptionReason, now_ms: u64) -> bool {
    let conditions = pod
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    let wanted = |transition| PodCondition {
        type_: "DisruptionTarget".into(),
        status: "True".into(),
        reason: Some(why.reason.into()),
        message: Some(why.message.into()),
        last_transition_time: transition,
        ..Default::default()
    };
    match conditions
        .iter_mut()
        .find(|c| c.type_ == "DisruptionTarget")
    {
        None => {
            conditions.push(wanted(Some(to_time(now_ms))));
            true
        }
        Some(old) => {
            let transition = if old.status == "True" {
                old.last_transition_time.clone()
            } else {
                Some(to_time(now_ms))
            };
            let new = wanted(transition);
            let changed = *old != new;
            *old = new;
            changed
        }
    }
}
