//! Single reconciles at rest, counted: what each release's reconcilers ask of the API server.

use lws::api::LeaderWorkerSet;
use lws::profile::Profile;
use lws_sim::controller::direct::DirectReconciler;
use lws_sim::fixtures::{lws_at_rest, mid_rollout, NAME, NS};

fn available(w: &lws_sim::world::World) -> bool {
    let l = w.api.get::<LeaderWorkerSet>(NS, NAME).unwrap();
    l.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True")
    })
}

#[test]
fn at_rest_v030_leader_reconciles_apply_and_v041_only_read() {
    for (profile, pod_writes) in [("v0.3.0", 1), ("v0.4.1", 0)] {
        let mut w = lws_at_rest(16, 4, profile);
        assert!(available(&w), "{profile}: the fixture is at rest");
        let r = DirectReconciler::new(&w.api, Profile::parse(profile).unwrap());
        let rv = w.api.resource_version();
        let pod = r.reconcile_pod(&mut w.api, NS, &format!("{NAME}-3"));
        assert!(pod.ok);
        assert_eq!(
            pod.writes, pod_writes,
            "{profile}: leader-pod reconcile writes"
        );
        let l = r.reconcile_lws(&mut w.api, NS, NAME);
        assert!(l.ok);
        assert_eq!(l.writes, 1, "{profile}: the leader sts apply");
        assert_eq!(
            w.api.resource_version(),
            rv,
            "{profile}: at rest every write is a no-op"
        );
        // get LWS, get leader sts (parameters), get service, get sts (status), list pods, and
        // one worker-sts get per group (v0.4.1) or a list plus one leader get per group (v0.3.0).
        assert!(
            l.reads >= 16,
            "{profile}: status reads every group: {}",
            l.reads
        );
    }
}

#[test]
fn mid_rollout_the_lws_reconcile_still_converges_to_no_change() {
    let mut w = lws_at_rest(16, 4, "v0.4.1");
    mid_rollout(&mut w, "v0.4.1", 3);
    let r = DirectReconciler::new(&w.api, Profile::parse("v0.4.1").unwrap());
    let rv = w.api.resource_version();
    let l = r.reconcile_lws(&mut w.api, NS, NAME);
    assert!(l.ok);
    assert_eq!(
        w.api.resource_version(),
        rv,
        "the controller had already reached this state"
    );
    let sts = w
        .api
        .get::<k8s_openapi::api::apps::v1::StatefulSet>(NS, NAME)
        .unwrap();
    let p = sts
        .spec
        .update_strategy
        .as_ref()
        .unwrap()
        .rolling_update
        .as_ref()
        .unwrap()
        .partition;
    assert_eq!(
        p,
        Some(12),
        "16 groups, 3 done, maxUnavailable 1: partition 16-1-3"
    );
}
