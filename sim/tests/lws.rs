//! The ported LWS controllers running in the world (issue: controllers identical to production).

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use lws::api::{keys, LeaderWorkerSet};
use lws::k8s;
use lws::profile::Profile;
use lws_sim::api::Selector;
use lws_sim::controller::ControllerConfig;
use lws_sim::fixtures::template;
use lws_sim::world::{ClusterConfig, Event, World};

/// An LWS named `vllm` (mU 1 and mS 0 by default).
fn lws(replicas: i32, size: i32, image: &str) -> LeaderWorkerSet {
    let mut l = lws_sim::fixtures::lws(replicas, size, image);
    l.metadata.name = Some("vllm".into());
    l
}

fn world(profile: &str, seed: u64) -> World {
    let mut w = World::new(
        seed,
        ClusterConfig {
            node_count: 8,
            pods_per_node: 4,
            ..Default::default()
        },
    );
    w.install_controller(ControllerConfig::new(Profile::parse(profile).unwrap()));
    w
}

fn available(w: &World) -> bool {
    let Some(l) = w.api.try_get::<LeaderWorkerSet>("default", "vllm") else {
        return false;
    };
    let conds = l
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    conds
        .iter()
        .any(|c| c.type_ == "Available" && c.status == "True")
        && l.metadata.generation
            == l.status
                .as_ref()
                .map(|_| l.metadata.generation)
                .unwrap_or_default()
}

fn image_of(w: &World, pod: &str) -> Option<String> {
    w.api
        .try_get::<Pod>("default", pod)
        .and_then(|p| p.spec.as_ref().unwrap().containers[0].image.clone())
}

fn all_pods_on(w: &World, image: &str, n: usize) -> bool {
    let pods = w.api.list::<Pod>(
        Some("default"),
        &Selector::labels([(keys::SET_NAME, "vllm")]),
    );
    pods.len() == n
        && pods.iter().all(|p| {
            k8s::is_running_and_ready(p)
                && p.metadata.deletion_timestamp.is_none()
                && p.spec.as_ref().unwrap().containers[0].image.as_deref() == Some(image)
        })
}

fn set_image(w: &mut World, image: &str) {
    let cur = w.api.get::<LeaderWorkerSet>("default", "vllm").unwrap();
    let mut l = (*cur).clone();
    l.spec.leader_worker_template.worker_template = template(image);
    w.api.update("user", l).unwrap();
}

fn start(profile: &str, seed: u64) -> World {
    let mut w = world(profile, seed);
    w.api.create("user", lws(4, 3, "v1")).unwrap();
    assert!(
        w.run_until_pred(1_800_000, |w| available(w) && all_pods_on(w, "v1", 12)),
        "never became available"
    );
    w
}

/// Leader pod deletions by the StatefulSet controller: (time, group index).
fn leader_deletes(w: &World) -> Vec<(u64, String)> {
    w.api
        .trace
        .filter("delete", "Pod")
        .filter(|e| e.actor == "statefulset-controller" && e.name.matches('-').count() == 1)
        .map(|e| (e.at_ms, e.name.clone()))
        .collect()
}

#[test]
fn v041_creates_an_available_lws_and_rolls_group_by_group_from_the_top() {
    let mut w = start("v0.4.1", 1);
    let sts = w.api.get::<StatefulSet>("default", "vllm").unwrap();
    assert_eq!(sts.spec.replicas, Some(4));
    for i in 0..4 {
        let worker = w
            .api
            .get::<StatefulSet>("default", &format!("vllm-{i}"))
            .unwrap();
        assert_eq!(worker.spec.replicas, Some(2));
        assert_eq!(k8s::controller_of(&worker.metadata).unwrap().kind, "Pod");
    }
    let t0 = w.now_ms;
    let deletes_before = leader_deletes(&w).len();
    // A reader of our own keeps the StatefulSet writes from here on (compaction drops what
    // every reader has passed).
    let log = w.api.statefulsets.log();
    let from = log.reader(log.len());
    set_image(&mut w, "v2");
    assert!(
        w.run_until_pred(7_200_000, |w| available(w) && all_pods_on(w, "v2", 12)),
        "rollout did not finish"
    );
    let deletes: Vec<(u64, String)> = leader_deletes(&w)
        .into_iter()
        .skip(deletes_before)
        .collect();
    let names: Vec<&str> = deletes.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(
        names,
        ["vllm-3", "vllm-2", "vllm-1", "vllm-0"],
        "from the highest index down"
    );
    assert!(deletes[0].0 >= t0);
    // maxUnavailable 1: each next group only after the previous one is back (pods take >= 20 s).
    for pair in deletes.windows(2) {
        assert!(pair[1].0 >= pair[0].0 + 20_000, "{pair:?}");
    }
    // The partition walked 3, 2, 1, 0 on the leader StatefulSet.
    let partitions: Vec<i32> = w.api.statefulsets.log()[from.get()..]
        .iter()
        .filter(|e| e.obj.metadata.name.as_deref() == Some("vllm"))
        .filter_map(|e| {
            e.obj
                .spec
                .update_strategy
                .as_ref()?
                .rolling_update
                .as_ref()?
                .partition
        })
        .collect();
    let mut walk = partitions.clone();
    walk.dedup();
    assert_eq!(walk, [4, 3, 2, 1, 0], "partition sequence {partitions:?}");
}

/// Restart the controller while group 3 is updating; count worker StatefulSet template writes.
fn restart_mid_rollout(profile: &str) -> (World, Vec<String>) {
    let mut w = start(profile, 7);
    set_image(&mut w, "v2");
    // Wait until group 3's leader has been replaced, then kill the controller.
    assert!(w.run_until_pred(600_000, |w| image_of(w, "vllm-3").as_deref() == Some("v2")));
    let t_kill = w.now_ms;
    w.schedule(t_kill, Event::KillController);
    w.run_until(t_kill + 120_000);
    let rewritten: Vec<String> = w
        .api
        .trace
        .entries
        .iter()
        .filter(|e| {
            e.at_ms >= t_kill && e.kind == "StatefulSet" && e.verb == "apply" && e.name != "vllm"
        })
        .map(|e| e.name.clone())
        .collect();
    (w, rewritten)
}

#[test]
fn v030_restart_mid_rollout_rewrites_every_groups_workers_at_once_and_v041_does_not() {
    let (w, rewritten) = restart_mid_rollout("v0.3.0");
    let mut groups = rewritten.clone();
    groups.sort();
    groups.dedup();
    assert!(
        groups.len() >= 2,
        "the restart re-applied several groups' worker sts: {groups:?}"
    );
    // Every group whose leader is still old now has the new worker template (the ones not
    // rewritten after the kill had been rewritten by an earlier pod event, B01's small variant).
    for g in 0..3 {
        let sts = w
            .api
            .get::<StatefulSet>("default", &format!("vllm-{g}"))
            .unwrap();
        let image = sts.spec.template.spec.as_ref().unwrap().containers[0]
            .image
            .clone();
        assert_eq!(image.as_deref(), Some("v2"), "worker sts of group {g}");
    }
    // Their workers now run the new image under the old leaders: the seed outage.
    let mut mixed = 0;
    for g in 0..3 {
        if image_of(&w, &format!("vllm-{g}")).as_deref() == Some("v1")
            && image_of(&w, &format!("vllm-{g}-2")).as_deref() == Some("v2")
        {
            mixed += 1;
        }
    }
    assert!(mixed >= 2, "old leaders with new workers in {mixed} groups");

    let (w, rewritten) = restart_mid_rollout("v0.4.1");
    assert!(
        rewritten.is_empty(),
        "v0.4.1 never rewrites a worker sts: {rewritten:?}"
    );
    for g in 0..3 {
        assert_eq!(
            image_of(&w, &format!("vllm-{g}-2")).as_deref(),
            image_of(&w, &format!("vllm-{g}")).as_deref()
        );
    }
}

#[test]
fn a_restarted_controller_waits_for_the_old_lease() {
    let mut w = start("v0.4.1", 3);
    let t_kill = w.now_ms;
    w.schedule(t_kill, Event::KillController);
    w.run_until(t_kill + 60_000);
    let acquired: Vec<u64> = w
        .api
        .trace
        .entries
        .iter()
        .filter(|e| e.kind == "Lease" && e.at_ms >= t_kill)
        .map(|e| e.at_ms)
        .collect();
    assert_eq!(acquired.len(), 1);
    assert!(
        acquired[0] >= t_kill + 15_000 + 1_000,
        "lease 15 s after first observation, plus the restart delay"
    );
    assert!(acquired[0] <= t_kill + 15_000 + 5_000 + 4_400);
}

/// A bare pod carrying the exclusive-placement terms `SetExclusiveAffinities` injects for
/// `group` on `kubernetes.io/hostname` (pkg/webhooks/pod_webhook.go, v0.3.0 to v0.10.0).
fn exclusive_pod(name: &str, group: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = Some(name.into());
    p.metadata.namespace = Some("default".into());
    p.metadata.labels = Some([(keys::GROUP_UNIQUE_HASH.to_string(), group.to_string())].into());
    p.spec = template("v1").spec;
    lws::v0_10_0::webhook::set_exclusive_affinities(
        &mut p,
        group,
        "kubernetes.io/hostname",
        keys::GROUP_UNIQUE_HASH,
    );
    p
}

fn node_of(w: &World, pod: &str) -> String {
    w.api
        .try_get::<Pod>("default", pod)
        .map(|p| k8s::node_name(&p).to_string())
        .unwrap_or_default()
}

#[test]
fn exclusive_placement_keeps_two_groups_off_one_topology_domain() {
    // kube-scheduler's InterPodAffinity filter (pkg/scheduler/framework/plugins/interpodaffinity/
    // filtering.go): a group's first pod may go anywhere no other group is; its later pods must
    // join it; another group's pods must stay away. Least-loaded alone would put a-2 and b-2 on
    // the empty third node.
    let mut w = World::new(
        1,
        ClusterConfig {
            node_count: 3,
            pods_per_node: 4,
            ..Default::default()
        },
    );
    let mut placed = Vec::new();
    for (name, group) in [("a-1", "a"), ("b-1", "b"), ("a-2", "a"), ("b-2", "b")] {
        w.api.create("user", exclusive_pod(name, group)).unwrap();
        let t = w.now_ms + 5_000;
        w.run_until(t);
        placed.push(node_of(&w, name));
    }
    assert!(placed.iter().all(|n| !n.is_empty()), "{placed:?}");
    assert_eq!(placed[0], placed[2], "a's pods share a node: {placed:?}");
    assert_eq!(placed[1], placed[3], "b's pods share a node: {placed:?}");
    assert_ne!(placed[0], placed[1], "a and b never share one: {placed:?}");
    // c takes the last free node; d finds none and stays Pending, Unschedulable.
    w.api.create("user", exclusive_pod("c-1", "c")).unwrap();
    w.api.create("user", exclusive_pod("d-1", "d")).unwrap();
    let t = w.now_ms + 5_000;
    w.run_until(t);
    let c = node_of(&w, "c-1");
    assert!(!c.is_empty() && !placed.contains(&c), "c on {c:?}");
    assert_eq!(node_of(&w, "d-1"), "");
    let d = w.api.try_get::<Pod>("default", "d-1").unwrap();
    let unschedulable = d
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable"))
        });
    assert!(unschedulable);
    // Deleting group c frees its node for d.
    let now = lws_sim::api::DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    w.api.delete::<Pod>("user", "default", "c-1", &now).unwrap();
    let t = w.now_ms + 60_000;
    w.run_until(t);
    assert_eq!(node_of(&w, "d-1"), c);
    // Placed pods' anti-affinity binds pods without terms too (satisfyExistingPodsAntiAffinity):
    // a pod with some other group key fits nowhere, a pod without one fits anywhere.
    let mut keyed = exclusive_pod("e-1", "e");
    keyed.spec.as_mut().unwrap().affinity = None;
    let mut plain = keyed.clone();
    plain.metadata.name = Some("f-1".into());
    plain.metadata.labels = None;
    w.api.create("user", keyed).unwrap();
    w.api.create("user", plain).unwrap();
    let t = w.now_ms + 5_000;
    w.run_until(t);
    assert_eq!(node_of(&w, "e-1"), "");
    assert_ne!(node_of(&w, "f-1"), "");
}

#[test]
fn v030_and_v041_inject_exclusive_affinity_and_each_node_hosts_one_group() {
    for profile in ["v0.3.0", "v0.4.1"] {
        let mut w = world(profile, 5);
        let mut l = lws(3, 3, "v1");
        l.metadata.annotations = Some(
            [(
                keys::EXCLUSIVE_TOPOLOGY.to_string(),
                "kubernetes.io/hostname".to_string(),
            )]
            .into(),
        );
        w.api.create("user", l).unwrap();
        assert!(
            w.run_until_pred(1_800_000, |w| available(w) && all_pods_on(w, "v1", 9)),
            "{profile}: never became available"
        );
        let pods = w.api.list::<Pod>(
            Some("default"),
            &Selector::labels([(keys::SET_NAME, "vllm")]),
        );
        let mut groups_of_node: std::collections::BTreeMap<String, Vec<String>> =
            Default::default();
        for p in &pods {
            let group = k8s::label(&p.metadata, keys::GROUP_INDEX)
                .unwrap()
                .to_string();
            let node = k8s::node_name(p).to_string();
            let groups = groups_of_node.entry(node).or_default();
            if !groups.contains(&group) {
                groups.push(group);
            }
            if k8s::label(&p.metadata, keys::WORKER_INDEX) == Some("0") {
                let affinity = p.spec.as_ref().unwrap().affinity.as_ref();
                assert!(
                    affinity.is_some_and(|a| a.pod_anti_affinity.is_some()),
                    "{profile}: leader {} without exclusive terms",
                    k8s::name(&p.metadata)
                );
            }
        }
        assert_eq!(groups_of_node.len(), 3, "{profile}: {groups_of_node:?}");
        assert!(
            groups_of_node.values().all(|g| g.len() == 1),
            "{profile}: {groups_of_node:?}"
        );
    }
}

#[test]
fn the_api_server_applies_each_release_crd_around_the_webhooks() {
    // leaderworkerset_test.go (v0.3.0) "set restart policy should fail when value is invalid":
    // v0.3.0's CRD knows no `None`; v0.4.1's does.
    let mut l = lws(1, 2, "v1");
    l.spec.leader_worker_template.restart_policy = "None".into();
    let mut w = world("v0.3.0", 1);
    let err = w.api.create("user", l.clone()).unwrap_err();
    assert!(
        err.message.contains(r#"spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "None": supported values: "Default", "RecreateGroupOnPodRestart""#),
        "{}",
        err.message
    );
    let mut w = world("v0.4.1", 1);
    w.api.create("user", l).unwrap();
    // `partition` (v0.7.0) is pruned by v0.4.1's CRD and kept by v0.10.0's.
    let mut p = lws(1, 2, "v1");
    p.metadata.name = Some("partitioned".into());
    let ru = p
        .spec
        .rollout_strategy
        .get_or_insert_with(Default::default)
        .rolling_update_configuration
        .get_or_insert_with(Default::default);
    ru.partition = Some(1);
    ru.max_unavailable = Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1));
    let stored = w.api.create("user", p.clone()).unwrap();
    assert_eq!(stored.rolling_update().partition, None);
    let mut w = world("v0.10.0", 1);
    let stored = w.api.create("user", p).unwrap();
    assert_eq!(stored.rolling_update().partition, Some(1));
}

#[test]
fn disaggregatedset_reconciles_are_counted_apart_from_the_pod_controllers() {
    let mut w = world("v0.10.0", 1);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/conformance/manifests/ds-test-basic.yaml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let ds: lws::disagg::api::DisaggregatedSet = serde_saphyr::from_str(&text).unwrap();
    w.api.create("user", ds).unwrap();
    w.run_until(120_000);
    let outcomes = &w.controller.as_ref().unwrap().outcomes;
    // [lws, pod, disaggregatedset]: each controller's reconciles in its own slot.
    assert!(outcomes.ok.iter().all(|&n| n > 0), "{outcomes:?}");
    assert_eq!(outcomes.failures(), 0, "{outcomes:?}");
}

#[test]
fn reconcile_outcomes_are_typed_and_a_too_large_lws_is_an_invalid_statefulset() {
    use lws_sim::api::{Reason, STATEFULSET_REPLICAS_MAX};
    let mut w = world("v0.4.1", 1);
    w.api
        .create("user", lws(STATEFULSET_REPLICAS_MAX + 1, 2, "v1"))
        .unwrap();
    w.run_until(60_000);
    let outcomes = &w.controller.as_ref().unwrap().outcomes;
    assert!(outcomes.failed[0] > 0, "{outcomes:?}");
    assert_eq!(outcomes.failures(), outcomes.failed.iter().sum::<u64>());
    let last = outcomes.last_failure.as_ref().unwrap();
    assert_eq!(last.controller, lws_sim::controller::LWS_ACTOR);
    assert_eq!(last.key, ("default".to_string(), "vllm".to_string()));
    let e = last.result.as_ref().unwrap_err();
    assert_eq!(e.reason, Reason::Invalid);
    assert!(e.message.contains("spec.replicas"), "{e}");
    let line = last.to_string();
    assert!(
        line.starts_with(
            "lws-controller reconcile default/vllm failed: Invalid: StatefulSet \"vllm\" is invalid: spec.replicas"
        ),
        "{line}"
    );
    assert!(w
        .api
        .list::<Pod>(Some("default"), &Selector::everything())
        .is_empty());
}

/// `vpod.kb.io` (pods, CREATE and UPDATE, failurePolicy Fail): while the controller pod is down,
/// an update of an LWS pod fails at admission, at every release; a status write does not.
#[test]
fn pod_updates_fail_while_the_webhook_server_is_down() {
    for profile in ["v0.10.0", "v0.4.1"] {
        let mut w = start(profile, 3);
        let label = |w: &mut World, value: &str| {
            let patch = serde_json::json!({"metadata": {"labels": {"team": value}}});
            w.api
                .merge_patch::<Pod>("user", "default", "vllm-0-1", &patch)
        };
        assert!(label(&mut w, "a").is_ok(), "{profile}: served");
        let t = w.now_ms;
        w.schedule(t, Event::KillController);
        w.run_until(t + 1);
        let err = label(&mut w, "b").expect_err("refused while down");
        assert!(
            err.message.contains("failed calling webhook"),
            "{profile}: {}",
            err.message
        );
        let pod = w.api.get::<Pod>("default", "vllm-0-1").unwrap();
        assert!(
            w.api.update_status("kubelet", (*pod).clone()).is_ok(),
            "{profile}: /status is not covered"
        );
    }
}
