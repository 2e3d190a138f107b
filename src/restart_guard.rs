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

use crate::api::keys;
use crate::client::{Client, Result};
use crate::k8s;

/// Whether `policy` (`leaderWorkerTemplate.restartPolicy`) recreates a group when one of its
/// pods goes: the only policies under which a worker's deletion must be seen.
pub fn policy_needs_guard(policy: &str) -> bool {
    policy == "RecreateGroupOnPodRestart" || policy == "RecreateGroupAfterStart"
}

/// Adds the finalizer to a worker pod template's metadata (the StatefulSet controller copies a
/// template's finalizers to each pod it creates).
pub fn guard_template(meta: &mut ObjectMeta) {
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers
        .iter()
        .any(|f| f == keys::GROUP_RESTART_FINALIZER)
    {
        finalizers.push(keys::GROUP_RESTART_FINALIZER.to_string());
    }
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
        let mut meta = ObjectMeta::default();
        guard_template(&mut meta);
        guard_template(&mut meta);
        assert_eq!(
            meta.finalizers.as_deref(),
            Some(&[keys::GROUP_RESTART_FINALIZER.to_string()][..])
        );
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
        assert!(policy_needs_guard("RecreateGroupAfterStart"));
        assert!(!policy_needs_guard("None"));
    }
}
