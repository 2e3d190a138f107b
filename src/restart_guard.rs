//! Not upstream: the proposed fix for finding Z05 (docs/findings/Z05.md), flag
//! `worker-finalizer=on`, shared by both ports.
//!
//! Under a group-recreating restart policy, upstream learns that a worker was deleted only from
//! a delete event or a `deletionTimestamp` its cache happens to show
//! (`pkg/controllers/pod_controller.go:204-213@v0.10.0`). A worker deleted while no controller
//! runs is replaced by its StatefulSet before the next controller starts, which then sees only
//! the replacement. With this fix the worker template carries a finalizer, so a deleted worker
//! stays (terminating) until a pod reconcile has seen it, applied the restart policy to it and
//! released it. The cost: a worker deleted while no controller runs stays terminating until
//! one does, and so does its replacement's creation.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{keys, LeaderWorkerSet};
use crate::client::{Client, Result};
use crate::k8s;
use crate::profile::Flags;

/// Whether `policy` (`leaderWorkerTemplate.restartPolicy`) recreates a group when one of its
/// pods goes: the only policies under which a worker's deletion must be seen.
fn policy_needs_guard(policy: &str) -> bool {
    policy == "RecreateGroupOnPodRestart" || policy == "RecreateGroupAfterStart"
}

/// With the flag on and a group-recreating restart policy, adds the finalizer to the worker pod
/// template's metadata (the StatefulSet controller copies a template's finalizers to each pod
/// it creates). Both ports call it where they build the worker template.
pub fn guard_worker_template(meta: &mut ObjectMeta, flags: &Flags, lws: &LeaderWorkerSet) {
    if !flags.worker_finalizer
        || !policy_needs_guard(&lws.spec.leader_worker_template.restart_policy)
        || holds_guard(meta)
    {
        return;
    }
    meta.finalizers
        .get_or_insert_with(Vec::new)
        .push(keys::GROUP_RESTART_FINALIZER.to_string());
}

/// A guarded pod that has been deleted: the restart policy must see it before it may go.
pub fn awaits_release(pod: &Pod) -> bool {
    k8s::is_terminating(&pod.metadata) && holds_guard(&pod.metadata)
}

fn holds_guard(meta: &ObjectMeta) -> bool {
    meta.finalizers
        .iter()
        .flatten()
        .any(|f| f == keys::GROUP_RESTART_FINALIZER)
}

/// The restart policy's outcome for a guarded pod, with NotFound (its leader or group already
/// gone) as nothing to do: the pod must be released either way, or it stays terminating for
/// good (the v0.4.1 port's restart policy answers a missing leader with an error, as upstream
/// v0.4.1 does).
pub fn ignore_not_found(r: Result<bool>) -> Result<()> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes the finalizer (an update carrying the pod's resourceVersion: a stale read gets a
/// Conflict and the reconcile is retried). A pod already gone needs nothing.
pub async fn release<C: Client>(c: &C, pod: &Pod) -> Result<()> {
    let mut released = pod.clone();
    if let Some(f) = released.metadata.finalizers.as_mut() {
        f.retain(|f| f != keys::GROUP_RESTART_FINALIZER);
    }
    match c.update(released).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_is_added_once_and_only_deleted_guarded_pods_await_release() {
        let mut lws = LeaderWorkerSet::default();
        lws.spec.leader_worker_template.restart_policy = "RecreateGroupAfterStart".into();
        let on = Flags {
            worker_finalizer: true,
            ..Flags::v0_10_0()
        };
        let mut meta = ObjectMeta::default();
        guard_worker_template(&mut meta, &Flags::v0_10_0(), &lws);
        assert_eq!(meta.finalizers, None, "flag off");
        guard_worker_template(&mut meta, &on, &lws);
        guard_worker_template(&mut meta, &on, &lws);
        assert_eq!(
            meta.finalizers.as_deref(),
            Some(&[keys::GROUP_RESTART_FINALIZER.to_string()][..])
        );
        let mut none = LeaderWorkerSet::default();
        none.spec.leader_worker_template.restart_policy = "None".into();
        let mut unguarded = ObjectMeta::default();
        guard_worker_template(&mut unguarded, &on, &none);
        assert_eq!(unguarded.finalizers, None, "policy None");
        let mut pod = Pod {
            metadata: meta,
            ..Default::default()
        };
        assert!(!awaits_release(&pod), "not deleted");
        pod.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        assert!(awaits_release(&pod));
        pod.metadata.finalizers = Some(vec!["example.com/other".into()]);
        assert!(!awaits_release(&pod), "someone else's finalizer");
    }
}
