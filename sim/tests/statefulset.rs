//! A plain StatefulSet (no LWS) rolling from one template to another in the world
//! (kubernetes `pkg/controller/statefulset/stateful_set_control.go` @0004b149).

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws_sim::api::Selector;
use lws_sim::world::{ClusterConfig, World};

fn sts(name: &str, replicas: i32, image: &str) -> StatefulSet {
    let labels = [("app".to_string(), name.to_string())]
        .into_iter()
        .collect();
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels),
                ..Default::default()
            },
            service_name: Some(name.into()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some([("app".to_string(), name.to_string())].into()),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some(image.into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

fn world(minor: u32) -> World {
    World::new(
        1,
        ClusterConfig {
            kubernetes_minor: minor,
            node_count: 4,
            pods_per_node: 8,
            ..Default::default()
        },
    )
}

fn all_ready(w: &World, name: &str, n: usize, image: &str) -> bool {
    let pods = w
        .api
        .list::<Pod>(Some("default"), &Selector::labels([("app", name)]));
    pods.len() == n
        && pods.iter().all(|p| {
            lws::k8s::is_running_and_ready(p)
                && p.metadata.deletion_timestamp.is_none()
                && p.spec.as_ref().unwrap().containers[0].image.as_deref() == Some(image)
        })
}

/// The image of pod `name`'s first container.
fn pod_image(w: &World, name: &str) -> String {
    let pod = w.api.get::<Pod>("default", name).unwrap();
    pod.spec.as_ref().unwrap().containers[0]
        .image
        .clone()
        .unwrap()
}

fn set_image(w: &mut World, name: &str, image: &str) {
    let cur = w.api.get::<StatefulSet>("default", name).unwrap();
    let mut s = (*cur).clone();
    s.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
    w.api.update("user", s).unwrap();
}

/// (time, pod name) of every pod deletion by the StatefulSet controller, in order.
fn controller_deletes(w: &World) -> Vec<(u64, String)> {
    w.api
        .trace
        .filter("delete", "Pod")
        .filter(|e| e.actor == "statefulset-controller")
        .map(|e| (e.at_ms, e.name.clone()))
        .collect()
}

fn roll(minor: u32, strategy: StatefulSetUpdateStrategy) -> World {
    let mut w = world(minor);
    let mut s = sts("web", 5, "v1");
    s.spec.pod_management_policy = Some("Parallel".into());
    s.spec.update_strategy = Some(strategy);
    w.api.create("user", s).unwrap();
    assert!(
        w.run_until_pred(600_000, |w| all_ready(w, "web", 5, "v1")),
        "initial pods never became ready"
    );
    set_image(&mut w, "web", "v2");
    w
}

#[test]
fn gate_off_replaces_one_pod_at_a_time_highest_ordinal_first() {
    let mut w = roll(
        29,
        StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: None,
        },
    );
    let t0 = w.now_ms;
    assert!(
        w.run_until_pred(3_600_000, |w| all_ready(w, "web", 5, "v2")),
        "rollout did not finish"
    );
    let deletes = controller_deletes(&w);
    let names: Vec<&str> = deletes.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(names, ["web-4", "web-3", "web-2", "web-1", "web-0"]);
    // Each deletion waits for the replacement above it to start (20-60 s start-up).
    for pair in deletes.windows(2) {
        assert!(
            pair[1].0 - pair[0].0 >= 20_000,
            "deletes too close: {pair:?}"
        );
    }
    assert!(deletes[0].0 >= t0);
    w.run_until(w.now_ms + 60_000);
    // currentRevision catches up with updateRevision once everything is updated and ready.
    let set = w.api.get::<StatefulSet>("default", "web").unwrap();
    let st = set.status.as_ref().unwrap();
    assert_eq!(st.current_revision, st.update_revision);
    assert_eq!(st.updated_replicas, Some(5));
}

#[test]
fn maxunavailable_is_dropped_with_the_gate_off() {
    let ru = RollingUpdateStatefulSetStrategy {
        max_unavailable: Some(IntOrString::Int(2)),
        partition: None,
    };
    let w = roll(
        29,
        StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(ru),
        },
    );
    let set = w.api.get::<StatefulSet>("default", "web").unwrap();
    let ru = set
        .spec
        .update_strategy
        .as_ref()
        .unwrap()
        .rolling_update
        .as_ref()
        .unwrap();
    assert_eq!(ru.max_unavailable, None, "dropStatefulSetDisabledFields");
}

#[test]
fn gate_on_with_maxunavailable_2_replaces_two_at_a_time() {
    let ru = RollingUpdateStatefulSetStrategy {
        max_unavailable: Some(IntOrString::Int(2)),
        partition: None,
    };
    let mut w = roll(
        35,
        StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(ru),
        },
    );
    let mut max_unready = 0;
    assert!(w.run_until_pred(3_600_000, |w| {
        let pods = w
            .api
            .list::<Pod>(Some("default"), &Selector::labels([("app", "web")]));
        let ready = pods
            .iter()
            .filter(|p| {
                lws::k8s::is_running_and_ready(p) && p.metadata.deletion_timestamp.is_none()
            })
            .count();
        max_unready = max_unready.max(5 - ready);
        all_ready(w, "web", 5, "v2")
    }));
    assert_eq!(
        max_unready, 2,
        "never more than maxUnavailable pods down, and the budget is used"
    );
    let deletes = controller_deletes(&w);
    let names: Vec<&str> = deletes.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(names, ["web-4", "web-3", "web-2", "web-1", "web-0"]);
    // web-4 and web-3 go in the same sync; the next pair only after a replacement is available.
    assert_eq!(deletes[0].0, deletes[1].0);
    assert!(deletes[2].0 > deletes[1].0 + 20_000);
}

#[test]
fn partition_3_updates_only_ordinals_3_and_4() {
    let ru = RollingUpdateStatefulSetStrategy {
        max_unavailable: None,
        partition: Some(3),
    };
    let mut w = roll(
        29,
        StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(ru),
        },
    );
    w.run_until(w.now_ms + 3_600_000);
    let names: Vec<String> = controller_deletes(&w).into_iter().map(|d| d.1).collect();
    assert_eq!(names, ["web-4", "web-3"]);
    let image = |n: &str| pod_image(&w, n);
    assert_eq!(
        [
            image("web-0"),
            image("web-1"),
            image("web-2"),
            image("web-3"),
            image("web-4")
        ],
        ["v1", "v1", "v1", "v2", "v2"]
    );
    // With a partition, currentRevision never advances.
    let set = w.api.get::<StatefulSet>("default", "web").unwrap();
    let st = set.status.as_ref().unwrap();
    assert_ne!(st.current_revision, st.update_revision);
}

#[test]
fn on_delete_changes_nothing_until_a_pod_is_deleted() {
    let mut w = roll(
        29,
        StatefulSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        },
    );
    w.run_until(w.now_ms + 3_600_000);
    assert!(controller_deletes(&w).is_empty());
    assert!(all_ready(&w, "web", 5, "v1"));
    w.schedule(
        w.now_ms,
        lws_sim::world::Event::DeletePod {
            namespace: "default".into(),
            pod: "web-2".into(),
            grace_period_seconds: None,
        },
    );
    w.run_until(w.now_ms + 600_000);
    let image = |n: &str| pod_image(&w, n);
    assert_eq!(
        image("web-2"),
        "v2",
        "a deleted pod comes back at the update revision"
    );
    assert_eq!(image("web-1"), "v1");
}

#[test]
fn ordered_ready_creates_pods_one_by_one_in_order() {
    let mut w = world(29);
    w.api.create("user", sts("db", 3, "v1")).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "db", 3, "v1")));
    let creates: Vec<(u64, String)> = w
        .api
        .trace
        .filter("create", "Pod")
        .map(|e| (e.at_ms, e.name.clone()))
        .collect();
    let names: Vec<&str> = creates.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
    assert!(
        creates[1].0 >= creates[0].0 + 20_000,
        "db-1 waits for db-0 to be ready"
    );
}

#[test]
fn scale_down_removes_highest_ordinals_and_ordinals_start_shifts_names() {
    let mut w = world(29);
    let mut s = sts("w", 3, "v1");
    s.spec.pod_management_policy = Some("Parallel".into());
    s.spec.ordinals = Some(k8s_openapi::api::apps::v1::StatefulSetOrdinals { start: Some(1) });
    w.api.create("user", s).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "w", 3, "v1")));
    let mut names: Vec<String> = w
        .api
        .list::<Pod>(Some("default"), &Selector::labels([("app", "w")]))
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["w-1", "w-2", "w-3"]);
    let cur = w.api.get::<StatefulSet>("default", "w").unwrap();
    let mut s = (*cur).clone();
    s.spec.replicas = Some(1);
    w.api.update("user", s).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "w", 1, "v1")));
    assert!(w.api.try_get::<Pod>("default", "w-1").is_some());
}

#[test]
fn min_ready_seconds_delays_available_replicas() {
    let mut w = world(29);
    let mut s = sts("m", 1, "v1");
    s.spec.min_ready_seconds = Some(30);
    w.api.create("user", s).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "m", 1, "v1")));
    let ready_at = w.now_ms;
    let status = |w: &World| {
        w.api
            .get::<StatefulSet>("default", "m")
            .unwrap()
            .status
            .clone()
            .unwrap_or_default()
    };
    assert!(w.run_until_pred(60_000, |w| status(w).ready_replicas == Some(1)));
    assert_eq!(status(&w).available_replicas, Some(0));
    assert!(w.run_until_pred(60_000, |w| status(w).available_replicas == Some(1)));
    assert!(
        w.now_ms >= ready_at + 30_000,
        "available only after minReadySeconds"
    );
}

#[test]
fn reverting_a_template_reuses_the_old_revision_and_restarts_only_changed_pods() {
    // getStatefulSetRevisions: an equal older revision is reused with the next revision number,
    // so pods still labelled with it count as updated (stateful_set_control.go @0004b149).
    let ru = RollingUpdateStatefulSetStrategy {
        max_unavailable: None,
        partition: Some(4),
    };
    let mut w = roll(
        29,
        StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(ru),
        },
    );
    assert!(w.run_until_pred(600_000, |w| {
        w.api.try_get::<Pod>("default", "web-4").is_some_and(|p| {
            lws::k8s::is_running_and_ready(&p)
                && p.spec.as_ref().unwrap().containers[0].image.as_deref() == Some("v2")
        })
    }));
    let revisions = |w: &World| {
        w.api
            .list::<k8s_openapi::api::apps::v1::ControllerRevision>(
                Some("default"),
                &Selector::everything(),
            )
    };
    assert_eq!(revisions(&w).len(), 2);
    let uid_web0 = w
        .api
        .get::<Pod>("default", "web-0")
        .unwrap()
        .metadata
        .uid
        .clone();
    set_image(&mut w, "web", "v1");
    w.run_until(w.now_ms + 600_000);
    let revs = revisions(&w);
    assert_eq!(revs.len(), 2, "no third revision for a revert");
    let v1 = revs
        .iter()
        .find(|r| r.data.0.to_string().contains("\"v1\""))
        .unwrap();
    assert_eq!(v1.revision, Some(3), "the old revision got the next number");
    // web-4 (above the partition) went back to v1; web-0 was never touched.
    let image = |n: &str| pod_image(&w, n);
    assert_eq!(image("web-4"), "v1");
    assert_eq!(
        w.api.get::<Pod>("default", "web-0").unwrap().metadata.uid,
        uid_web0
    );
}

#[test]
fn a_failed_pod_is_deleted_and_recreated_under_the_same_name() {
    let mut w = world(29);
    let mut s = sts("f", 2, "v1");
    s.spec.pod_management_policy = Some("Parallel".into());
    w.api.create("user", s).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "f", 2, "v1")));
    let old = w.api.get::<Pod>("default", "f-1").unwrap();
    let mut failed = (*old).clone();
    failed.status.as_mut().unwrap().phase = Some("Failed".into());
    w.api.update_status("kubelet", failed).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "f", 2, "v1")
        && w.api.get::<Pod>("default", "f-1").unwrap().metadata.uid != old.metadata.uid));
    let deleted = w
        .api
        .trace
        .filter("delete", "Pod")
        .any(|e| e.actor == "statefulset-controller" && e.name == "f-1");
    assert!(
        deleted,
        "the controller deletes a Failed pod before re-creating it"
    );
}

#[test]
fn a_pod_that_fits_nowhere_stays_pending_until_a_node_matches() {
    let mut w = world(29);
    let mut s = sts("gpu", 1, "v1");
    s.spec.template.spec.as_mut().unwrap().node_selector =
        Some([("pool".to_string(), "gpu".to_string())].into());
    w.api.create("user", s).unwrap();
    w.run_until(600_000);
    let p = w.api.get::<Pod>("default", "gpu-0").unwrap();
    assert_eq!(lws::k8s::phase(&p), "Pending");
    assert_eq!(lws::k8s::node_name(&p), "");
    let unschedulable = p
        .status
        .as_ref()
        .unwrap()
        .conditions
        .as_ref()
        .unwrap()
        .iter()
        .any(|c| c.type_ == "PodScheduled" && c.status == "False");
    assert!(unschedulable);
    // Labelling a node lets the scheduler place it on the next node event.
    w.api
        .merge_patch::<k8s_openapi::api::core::v1::Node>(
            "user",
            "",
            "node-2",
            &serde_json::json!({"metadata": {"labels": {"pool": "gpu"}}}),
        )
        .unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "gpu", 1, "v1")));
    assert_eq!(
        lws::k8s::node_name(&w.api.get::<Pod>("default", "gpu-0").unwrap()),
        "node-2"
    );
}

#[test]
fn a_cordoned_node_gets_no_new_pods() {
    let mut w = world(29);
    for n in ["node-0", "node-1", "node-2"] {
        w.schedule(0, lws_sim::world::Event::Cordon(n.into()));
    }
    w.run_until(1);
    let mut s = sts("c", 3, "v1");
    s.spec.pod_management_policy = Some("Parallel".into());
    w.api.create("user", s).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "c", 3, "v1")));
    for p in w
        .api
        .list::<Pod>(Some("default"), &Selector::labels([("app", "c")]))
    {
        assert_eq!(lws::k8s::node_name(&p), "node-3");
    }
}

#[test]
fn a_lagging_cache_makes_the_controller_retry_creates_with_already_exists() {
    // No creation expectations (kubernetes pkg/controller/statefulset keeps none for pods): a sync before the informer has delivered
    // the pod it just created tries again and gets AlreadyExists, then backs off.
    let mut w = World::new(
        5,
        ClusterConfig {
            node_count: 4,
            pods_per_node: 8,
            watch_lag_ms: (10, 1_000),
            ..Default::default()
        },
    );
    let mut s = sts("lag", 2, "v1");
    s.spec.pod_management_policy = Some("Parallel".into());
    w.api.create("user", s).unwrap();
    assert!(w.run_until_pred(600_000, |w| all_ready(w, "lag", 2, "v1")));
    let retries = w
        .api
        .trace
        .entries
        .iter()
        .filter(|e| e.verb == "create" && e.kind == "Pod" && e.detail == "error=AlreadyExists")
        .count();
    assert!(
        retries > 0,
        "stale cache reads show up as AlreadyExists retries"
    );
}

/// A Parallel StatefulSet whose pods never became ready (their image never pulls) rolled to a
/// working image with maxUnavailable 1: on 1.35 the unavailable old pods use up the budget and
/// nothing is ever replaced; from 1.37 (PR #137666) they are replaced first.
fn roll_away_from_a_broken_image(minor: u32) -> bool {
    let mut w = World::new(
        1,
        ClusterConfig {
            kubernetes_minor: minor,
            node_count: 4,
            pods_per_node: 8,
            unpullable_images: ["app:broken".to_string()].into(),
            ..Default::default()
        },
    );
    let mut s = sts("web", 3, "app:broken");
    s.spec.pod_management_policy = Some("Parallel".into());
    s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateStatefulSetStrategy {
            max_unavailable: Some(IntOrString::Int(1)),
            partition: None,
        }),
    });
    w.api.create("user", s).unwrap();
    w.run_until(120_000);
    set_image(&mut w, "web", "app:v2");
    w.run_until_pred(600_000, |w| all_ready(w, "web", 3, "app:v2"))
}

#[test]
fn unavailable_old_pods_block_a_1_35_rollout_and_are_replaced_first_from_1_37() {
    assert!(!roll_away_from_a_broken_image(35), "1.35 stalls");
    assert!(roll_away_from_a_broken_image(37), "1.37 replaces them");
}

#[test]
fn two_billion_replicas_are_invalid_not_an_allocation() {
    use lws_sim::api::STATEFULSET_REPLICAS_MAX;
    let mut w = world(32);
    let e = w
        .api
        .create("user", sts("huge", 2_000_000_000, "v1"))
        .unwrap_err();
    assert_eq!(e.reason, lws_sim::api::Reason::Invalid);
    assert!(e.message.contains("spec.replicas"), "{}", e.message);
    w.api.create("user", sts("web", 2, "v1")).unwrap();
    let patch = serde_json::json!({"spec": {"replicas": 2_000_000_000}});
    let e = w
        .api
        .merge_patch::<StatefulSet>("user", "default", "web", &patch)
        .unwrap_err();
    assert_eq!(e.reason, lws_sim::api::Reason::Invalid);
    assert!(e.message.contains("spec.replicas"), "{}", e.message);
    let patch = serde_json::json!({"spec": {"replicas": STATEFULSET_REPLICAS_MAX + 1}});
    assert!(w
        .api
        .merge_patch::<StatefulSet>("user", "default", "web", &patch)
        .is_err());
    w.run_until(120_000);
    let pods = w.api.list::<Pod>(Some("default"), &Selector::everything());
    assert_eq!(pods.len(), 2);
}

/// `updateStorage` (stateful_set_utils.go @0004b149): each pod gets a volume per claim
/// template, on the claim `<template>-<set>-<ordinal>`, in place of a template volume of the
/// same name; the template's other volumes follow.
#[test]
fn pods_get_a_volume_per_claim_template() {
    use k8s_openapi::api::core::v1::{EmptyDirVolumeSource, PersistentVolumeClaim, Volume};
    let mut w = world(29);
    let mut s = sts("db", 2, "v1");
    let claim = |name: &str| PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    s.spec.volume_claim_templates = Some(vec![claim("data"), claim("logs")]);
    let scratch = |name: &str| Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    };
    s.spec.template.spec.as_mut().unwrap().volumes = Some(vec![scratch("logs"), scratch("tmp")]);
    w.api.create("test", s).unwrap();
    w.run_until(60_000);
    let pod = w.api.try_get::<Pod>("default", "db-1").expect("pod db-1");
    let volumes = pod.spec.as_ref().unwrap().volumes.clone().unwrap();
    let seen: Vec<(String, Option<String>, bool)> = volumes
        .iter()
        .map(|v| {
            (
                v.name.clone(),
                v.persistent_volume_claim
                    .as_ref()
                    .map(|c| c.claim_name.clone()),
                v.empty_dir.is_some(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("data".into(), Some("data-db-1".into()), false),
            ("logs".into(), Some("logs-db-1".into()), false),
            ("tmp".into(), None, true),
        ]
    );
}
