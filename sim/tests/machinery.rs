//! Garbage collection, drain, node failure and determinism in the world (kubernetes
//! pkg/controller/garbagecollector, kubectl pkg/drain, pkg/controller/nodelifecycle and podgc).

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{Container, Node, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::k8s;
use lws_sim::api::{DeleteOptions, Propagation, Selector};
use lws_sim::world::{ClusterConfig, Event, World};

fn sts(name: &str, replicas: i32) -> StatefulSet {
    let labels: std::collections::BTreeMap<String, String> =
        [("app".to_string(), name.to_string())].into();
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            pod_management_policy: Some("Parallel".into()),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("v1".into()),
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

fn world(seed: u64) -> World {
    sized_world(seed, 3, 4)
}

fn sized_world(seed: u64, node_count: u32, pods_per_node: u32) -> World {
    World::new(
        seed,
        ClusterConfig {
            node_count,
            pods_per_node,
            ..Default::default()
        },
    )
}

fn pods(w: &World, app: &str) -> Vec<std::sync::Arc<Pod>> {
    w.api
        .list::<Pod>(Some("default"), &Selector::labels([("app", app)]))
}

fn ready(w: &World, app: &str, n: usize) -> bool {
    let p = pods(w, app);
    p.len() == n
        && p.iter()
            .all(|p| k8s::is_running_and_ready(p) && p.metadata.deletion_timestamp.is_none())
}

fn start(seed: u64, replicas: i32) -> World {
    let mut w = world(seed);
    w.api.create("user", sts("web", replicas)).unwrap();
    assert!(w.run_until_pred(600_000, |w| ready(w, "web", replicas as usize)));
    w
}

#[test]
fn background_deletion_removes_the_owner_first_then_dependents_asynchronously() {
    let mut w = start(1, 3);
    w.api
        .delete::<StatefulSet>("user", "default", "web", &DeleteOptions::default())
        .unwrap();
    let gone_at = w.now_ms;
    assert!(
        w.api.try_get::<StatefulSet>("default", "web").is_none(),
        "owner removed at once"
    );
    assert_eq!(pods(&w, "web").len(), 3, "GC has not acted synchronously");
    assert!(w.run_until_pred(600_000, |w| pods(w, "web").is_empty()));
    let gc_deletes: Vec<u64> = w
        .api
        .trace
        .filter("delete", "Pod")
        .filter(|e| e.actor == "garbage-collector")
        .map(|e| e.at_ms)
        .collect();
    assert_eq!(gc_deletes.len(), 3, "the GC deleted every pod");
    assert!(
        gc_deletes.iter().all(|&t| t > gone_at),
        "after the owner was gone"
    );
    assert!(w
        .api
        .list::<k8s_openapi::api::apps::v1::ControllerRevision>(None, &Selector::everything())
        .is_empty());
}

#[test]
fn foreground_deletion_removes_dependents_before_the_owner() {
    let mut w = start(2, 3);
    let fg = DeleteOptions {
        propagation: Some(Propagation::Foreground),
        ..Default::default()
    };
    w.api
        .delete::<StatefulSet>("user", "default", "web", &fg)
        .unwrap();
    let set = w.api.get::<StatefulSet>("default", "web").unwrap();
    assert!(set.metadata.deletion_timestamp.is_some());
    assert!(w.run_until_pred(600_000, |w| w
        .api
        .try_get::<StatefulSet>("default", "web")
        .is_none()));
    assert!(
        pods(&w, "web").is_empty(),
        "every pod was gone before the owner"
    );
    let last_pod_gone = w
        .api
        .trace
        .entries
        .iter()
        .filter(|e| e.kind == "Pod" && e.detail == "gone")
        .map(|e| e.rv)
        .max()
        .unwrap();
    let owner_gone = w
        .api
        .trace
        .entries
        .iter()
        .find(|e| e.kind == "StatefulSet" && e.detail == "gone")
        .unwrap()
        .rv;
    assert!(owner_gone > last_pod_gone);
}

#[test]
fn orphan_deletion_keeps_dependents_and_strips_their_owner_refs() {
    let mut w = start(3, 2);
    let or = DeleteOptions {
        propagation: Some(Propagation::Orphan),
        ..Default::default()
    };
    w.api
        .delete::<StatefulSet>("user", "default", "web", &or)
        .unwrap();
    assert!(w.run_until_pred(600_000, |w| w
        .api
        .try_get::<StatefulSet>("default", "web")
        .is_none()));
    w.run_until(w.now_ms + 60_000);
    let p = pods(&w, "web");
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|p| p
        .metadata
        .owner_references
        .as_ref()
        .is_none_or(|o| o.is_empty())));
}

#[test]
fn drain_evicts_every_pod_and_the_statefulset_reschedules_them_elsewhere() {
    let mut w = start(4, 4);
    let node = k8s::node_name(&pods(&w, "web")[0]).to_string();
    let on_node: Vec<String> = pods(&w, "web")
        .iter()
        .filter(|p| k8s::node_name(p) == node)
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert!(!on_node.is_empty());
    w.schedule(
        w.now_ms,
        Event::DrainNode {
            node: node.clone(),
            replace: false,
        },
    );
    assert!(w.run_until_pred(900_000, |w| ready(w, "web", 4)
        && pods(w, "web").iter().all(|p| k8s::node_name(p) != node)));
    let n = w.api.get::<Node>("", &node).unwrap();
    assert_eq!(
        n.spec.as_ref().unwrap().unschedulable,
        Some(true),
        "cordoned"
    );
    let evicted: Vec<String> = w
        .api
        .trace
        .filter("delete", "Pod")
        .filter(|e| e.actor == "kubectl-drain")
        .map(|e| e.name.clone())
        .collect();
    let mut expect = on_node.clone();
    expect.sort();
    let mut got = evicted.clone();
    got.sort();
    assert_eq!(got, expect, "evicted through the eviction API, all at once");
}

#[test]
fn drain_respects_a_pod_disruption_budget_and_retries_after_429() {
    let mut w = start(5, 3);
    let pdb = PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(3)),
            selector: Some(LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    };
    w.api.create("user", pdb).unwrap();
    let node = k8s::node_name(&pods(&w, "web")[0]).to_string();
    w.schedule(
        w.now_ms,
        Event::DrainNode {
            node,
            replace: false,
        },
    );
    w.run_until(w.now_ms + 30_000);
    let refused = w
        .api
        .trace
        .entries
        .iter()
        .filter(|e| e.verb == "evict" && e.detail == "error=TooManyRequests")
        .count();
    assert!(refused >= 5, "429 retried every 5 s: {refused}");
    assert!(ready(&w, "web", 3), "the budget held: nothing evicted");
}

#[test]
fn node_failure_marks_pods_not_ready_then_evicts_after_300s_and_podgc_frees_them_after_node_deletion(
) {
    let mut w = start(6, 4);
    let node = k8s::node_name(&pods(&w, "web")[0]).to_string();
    let victim = pods(&w, "web")
        .iter()
        .find(|p| k8s::node_name(p) == node)
        .unwrap()
        .metadata
        .name
        .clone()
        .unwrap();
    let t0 = w.now_ms;
    w.schedule(t0, Event::FailNode(node.clone()));
    // 1.29: node-monitor-grace-period 40 s.
    w.run_until(t0 + 39_000);
    assert!(k8s::is_ready(
        &w.api.get::<Pod>("default", &victim).unwrap()
    ));
    w.run_until(t0 + 41_000);
    assert!(
        !k8s::is_ready(&w.api.get::<Pod>("default", &victim).unwrap()),
        "MarkPodsNotReady"
    );
    w.run_until(t0 + 40_000 + 299_000);
    assert!(w
        .api
        .get::<Pod>("default", &victim)
        .unwrap()
        .metadata
        .deletion_timestamp
        .is_none());
    w.run_until(t0 + 40_000 + 301_000);
    let p = w.api.get::<Pod>("default", &victim).unwrap();
    assert!(
        p.metadata.deletion_timestamp.is_some(),
        "taint eviction at 300 s"
    );
    // The kubelet is dead: the pod stays Terminating and the slot stays blocked.
    w.run_until(w.now_ms + 3_600_000);
    assert_eq!(
        w.api.get::<Pod>("default", &victim).unwrap().metadata.uid,
        p.metadata.uid
    );
    // The Node object is deleted: PodGC force-deletes after its 40 s quarantine.
    let node_deleted_at = w.now_ms;
    w.api
        .delete::<Node>("cloud", "", &node, &DeleteOptions::default())
        .unwrap();
    assert!(w.run_until_pred(600_000, |w| ready(w, "web", 4)));
    let freed = w
        .api
        .trace
        .filter("delete", "Pod")
        .find(|e| e.actor == "pod-garbage-collector" && e.name == victim)
        .unwrap();
    assert!(
        freed.at_ms >= node_deleted_at + 40_000,
        "PodGC quarantine of 40 s"
    );
    assert!(
        freed.at_ms <= node_deleted_at + 80_000,
        "within two 20 s ticks of the quarantine"
    );
    assert!(pods(&w, "web").iter().all(|p| k8s::node_name(p) != node));
}

#[test]
fn node_replacement_drains_terminates_and_a_new_node_joins() {
    let mut w = start(7, 4);
    let node = k8s::node_name(&pods(&w, "web")[0]).to_string();
    w.schedule(
        w.now_ms,
        Event::DrainNode {
            node: node.clone(),
            replace: true,
        },
    );
    assert!(w.run_until_pred(1_800_000, |w| w
        .api
        .try_get::<Node>("", "node-r0")
        .is_some()
        && w.api.try_get::<Node>("", &node).is_none()));
    assert!(ready(&w, "web", 4));
}

#[test]
fn crashed_container_restarts_in_place() {
    let mut w = start(8, 1);
    let uid = pods(&w, "web")[0].metadata.uid.clone();
    w.schedule(
        w.now_ms,
        Event::CrashContainer {
            namespace: "default".into(),
            pod: "web-0".into(),
        },
    );
    w.run_until(w.now_ms + 1);
    let p = w.api.get::<Pod>("default", "web-0").unwrap();
    assert!(!k8s::is_ready(&p));
    assert_eq!(k8s::phase(&p), "Running");
    let c = p
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0]
        .clone();
    assert_eq!(c.restart_count, 1);
    // As the kubelet reports a crash: not started, waiting in back-off with its message, the
    // run that ended in `lastState`.
    assert_eq!(c.started, Some(false));
    let waiting = c.state.unwrap().waiting.unwrap();
    let message = waiting.message.unwrap();
    let uid_text = uid.clone().unwrap();
    assert_eq!(
        message,
        format!("back-off 10s restarting failed container=c pod=web-0_default({uid_text})")
    );
    let ended = c.last_state.unwrap().terminated.unwrap();
    assert_eq!(
        (ended.exit_code, ended.reason.as_deref()),
        (1, Some("Error"))
    );
    assert!(w.run_until_pred(60_000, |w| ready(w, "web", 1)));
    let p = pods(&w, "web")[0].clone();
    assert_eq!(p.metadata.uid, uid, "same pod object");
    let c = &p
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0];
    assert!(c.last_state.is_some(), "kept through the restart");
}

fn scripted_run(seed: u64) -> (u64, usize, Vec<u64>) {
    let mut w = start(seed, 4);
    w.schedule(
        w.now_ms + 10_000,
        Event::DeletePod {
            namespace: "default".into(),
            pod: "web-1".into(),
            grace_period_seconds: None,
        },
    );
    w.run_until(w.now_ms + 600_000);
    let creates = w
        .api
        .trace
        .filter("update-status", "Pod")
        .map(|e| e.at_ms)
        .collect();
    (w.api.trace.hash(), w.api.trace.entries.len(), creates)
}

#[test]
fn same_seed_same_trace_hash_and_a_different_seed_changes_the_delays() {
    let a = scripted_run(42);
    let b = scripted_run(42);
    assert_eq!(a, b);
    let c = scripted_run(43);
    assert_ne!(a.0, c.0);
    assert_ne!(a.2, c.2, "start-up delays are drawn from the seed");
}

#[test]
fn a_zero_resync_period_stops_the_world_with_a_livelock_instead_of_panicking() {
    use lws::profile::Profile;
    use lws_sim::controller::ControllerConfig;
    use lws_sim::world::{Stop, STEPS_AT_INSTANT_MAX};
    // A period of 1 ms is no livelock: it is jittered to at least 1 ms (it once truncated to
    // 0 ms half the time, a false verdict), and time goes on.
    let mut quick = world(1);
    let mut config = ControllerConfig::new(Profile::parse("v0.4.1").unwrap());
    config.sync_period_ms = 1;
    quick.install_controller(config);
    quick.run_until(3_000);
    assert!(quick.stopped().is_none(), "{:?}", quick.stopped());
    assert_eq!(quick.now_ms, 3_000);
    let mut w = world(1);
    let mut config = ControllerConfig::new(Profile::parse("v0.4.1").unwrap());
    config.sync_period_ms = 0;
    w.install_controller(config);
    w.run_until(60_000);
    let Some(Stop::Livelock { at_ms, .. }) = w.stopped().cloned() else {
        panic!("no livelock stop: {:?}", w.stopped());
    };
    assert!(at_ms < 60_000 && w.now_ms == at_ms, "{at_ms} {}", w.now_ms);
    assert!(w.stopped().unwrap().to_string().contains("livelock"));
    assert!(w.event_count >= STEPS_AT_INSTANT_MAX - 1);
    // Stopped for good: nothing more runs, the clock stays.
    assert!(!w.step(u64::MAX - 1));
    w.run_until(120_000);
    assert_eq!(w.now_ms, at_ms);
}

#[test]
fn a_huge_wait_stops_at_the_horizon_without_wrapping_time() {
    use lws_sim::time::HORIZON_MS;
    use lws_sim::world::Stop;
    let mut w = start(1, 2);
    // A kubectl delete with a grace period of 1e12 s: the deletion timestamp saturates.
    w.schedule(
        w.now_ms,
        Event::DeletePod {
            namespace: "default".into(),
            pod: "web-0".into(),
            grace_period_seconds: Some(1_000_000_000_000),
        },
    );
    // `wait: 99999999h`.
    let deadline = w.now_ms + 99_999_999 * 3_600_000;
    w.run_until(deadline);
    assert_eq!(w.now_ms, HORIZON_MS);
    assert!(
        matches!(w.stopped(), Some(Stop::Horizon { at_ms }) if *at_ms > HORIZON_MS),
        "{:?}",
        w.stopped()
    );
    let mut w = world(1);
    w.run_until(u64::MAX - 1);
    assert_eq!(w.now_ms, HORIZON_MS);
    assert!(!w.run_until_pred(u64::MAX, |_| false));
}

#[test]
fn a_pod_deleted_before_its_containers_started_is_never_started() {
    // Start-up (1 s) shorter than termination (20 s): the kubelet's start would come first.
    let mut w = World::new(
        9,
        ClusterConfig {
            node_count: 3,
            pods_per_node: 4,
            pod_startup_ms: (1_000, 1_000),
            pod_termination_ms: (20_000, 20_000),
            ..Default::default()
        },
    );
    w.api.create("user", sts("web", 1)).unwrap();
    let bound = |w: &World| {
        pods(w, "web")
            .first()
            .is_some_and(|p| !k8s::node_name(p).is_empty())
    };
    assert!(w.run_until_pred(10_000, bound));
    let uid = pods(&w, "web")[0].metadata.uid.clone();
    let opts = DeleteOptions::default();
    w.api
        .delete::<Pod>("kubectl", "default", "web-0", &opts)
        .unwrap();
    let mut started = false;
    let gone = w.run_until_pred(60_000, |w| match w.api.try_get::<Pod>("default", "web-0") {
        Some(p) if p.metadata.uid == uid => {
            started |= k8s::phase(&p) != "Pending" || k8s::is_ready(&p);
            false
        }
        _ => true,
    });
    assert!(gone, "the pod terminates");
    assert!(
        !started,
        "a terminating pod is never started (pod_workers.go)"
    );
    assert!(
        w.run_until_pred(60_000, |w| ready(w, "web", 1)),
        "its replacement starts"
    );
}

/// The PodScheduled condition of the first pod of `app`.
fn scheduled_condition(w: &World, app: &str) -> k8s_openapi::api::core::v1::PodCondition {
    pods(w, app)[0]
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"))
        .cloned()
        .expect("a PodScheduled condition")
}

#[test]
fn a_node_both_full_and_unmatched_counts_as_unmatched() {
    // NodeAffinity filters before NodeResourcesFit: a full node whose labels do not match is
    // reported as not matching, not as "Too many pods".
    let mut w = sized_world(1, 2, 1);
    w.api.create("user", sts("web", 2)).unwrap();
    assert!(w.run_until_pred(600_000, |w| ready(w, "web", 2)));
    let mut selective = sts("gpu", 1);
    let spec = selective.spec.template.spec.as_mut().unwrap();
    spec.node_selector = Some([("accelerator".to_string(), "h100".to_string())].into());
    w.api.create("user", selective).unwrap();
    w.run_until(w.now_ms + 5_000);
    let scheduled = scheduled_condition(&w, "gpu");
    assert_eq!(
        scheduled.message.as_deref(),
        Some("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
    );
}

#[test]
fn an_unschedulable_pod_says_why_no_node_fits() {
    // kube-scheduler's FitError: each node's first failing filter, counted, reasons sorted.
    let mut w = start(1, 4);
    w.schedule(w.now_ms, Event::Cordon("node-0".into()));
    let mut selective = sts("gpu", 1);
    let spec = selective.spec.template.spec.as_mut().unwrap();
    spec.node_selector = Some([("accelerator".to_string(), "h100".to_string())].into());
    w.api.create("user", selective).unwrap();
    w.run_until(w.now_ms + 5_000);
    let scheduled = scheduled_condition(&w, "gpu");
    assert_eq!(
        (scheduled.status.as_str(), scheduled.reason.as_deref()),
        ("False", Some("Unschedulable"))
    );
    assert_eq!(
        scheduled.message.as_deref(),
        Some("0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable.")
    );
}

/// A StatefulSet `app` of `replicas` pods naming `scheduler`, each in PodGroup `group` (the
/// annotation the LWS pod webhook sets under `gang-scheduling=volcano`).
fn gang_sts(app: &str, replicas: i32, scheduler: &str, group: &str) -> StatefulSet {
    let mut s = sts(app, replicas);
    let t = &mut s.spec.template;
    t.spec.as_mut().unwrap().scheduler_name = Some(scheduler.into());
    let annotations = [(
        "scheduling.k8s.io/group-name".to_string(),
        group.to_string(),
    )];
    t.metadata.as_mut().unwrap().annotations = Some(annotations.into());
    s
}

fn pod_group(name: &str, min_member: i32) -> lws::volcano::PodGroup {
    let mut pg = lws::volcano::PodGroup::default();
    pg.metadata.name = Some(name.into());
    pg.metadata.namespace = Some("default".into());
    pg.spec.min_member = Some(min_member);
    pg
}

fn bound(w: &World, app: &str) -> usize {
    pods(w, app)
        .iter()
        .filter(|p| !k8s::node_name(p).is_empty())
        .count()
}

#[test]
fn volcano_places_a_gang_whole_or_not_at_all_and_other_schedulers_not_at_all() {
    let mut w = sized_world(1, 2, 2);
    w.api.volcano_crds = true;
    // No PodGroup yet: Volcano's pods wait, a pod of a scheduler nobody runs waits.
    w.api
        .create("user", gang_sts("a", 3, "volcano", "pg-a"))
        .unwrap();
    w.api
        .create("user", gang_sts("x", 1, "my-scheduler", ""))
        .unwrap();
    w.run_until(w.now_ms + 10_000);
    assert_eq!((bound(&w, "a"), bound(&w, "x")), (0, 0));
    // Its PodGroup wants 3: all three are placed together, within a scheduling period.
    w.api.create("user", pod_group("pg-a", 3)).unwrap();
    w.run_until(w.now_ms + 2_000);
    assert_eq!(bound(&w, "a"), 3);
    // One slot left for a gang of 2: neither pod is placed; they say why.
    w.api.create("user", pod_group("pg-b", 2)).unwrap();
    w.api
        .create("user", gang_sts("b", 2, "volcano", "pg-b"))
        .unwrap();
    w.run_until(w.now_ms + 10_000);
    assert_eq!(bound(&w, "b"), 0);
    let scheduled = scheduled_condition(&w, "b");
    assert_eq!(scheduled.reason.as_deref(), Some("Unschedulable"));
    assert!(
        scheduled
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("pod group is not ready")),
        "{scheduled:?}"
    );
    // A gang of 2 whose minMember is 1 takes the one slot for its first pod.
    w.api.create("user", pod_group("pg-c", 1)).unwrap();
    w.api
        .create("user", gang_sts("c", 2, "volcano", "pg-c"))
        .unwrap();
    w.run_until(w.now_ms + 10_000);
    assert_eq!((bound(&w, "b"), bound(&w, "c"), bound(&w, "x")), (0, 1, 0));
}

fn pdb_for_web(
    name: &str,
    min: Option<IntOrString>,
    max: Option<IntOrString>,
) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            min_available: min,
            max_unavailable: max,
            selector: Some(LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    }
}

/// (currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed, DisruptionAllowed reason).
fn budget(w: &World, name: &str) -> (i32, i32, i32, i32, String) {
    let pdb = w.api.get::<PodDisruptionBudget>("default", name).unwrap();
    let s = pdb
        .status
        .clone()
        .expect("the disruption controller wrote a status");
    let reason = s.conditions.as_ref().unwrap()[0].reason.clone();
    let n = |v: Option<i32>| v.unwrap_or(0);
    let counts = (
        n(s.current_healthy),
        n(s.desired_healthy),
        n(s.expected_pods),
    );
    (
        counts.0,
        counts.1,
        counts.2,
        n(s.disruptions_allowed),
        reason,
    )
}

#[test]
fn the_disruption_controller_reports_each_budget() {
    let mut w = start(3, 3);
    let min = pdb_for_web("min", Some(IntOrString::Int(2)), None);
    let max = pdb_for_web("max", None, Some(IntOrString::String("34%".into())));
    w.api.create("user", min).unwrap();
    w.api.create("user", max).unwrap();
    w.run_until(w.now_ms + 1_000);
    assert_eq!(budget(&w, "min"), (3, 2, 3, 1, "SufficientPods".into()));
    // 34% of the StatefulSet's 3 replicas, rounded up: 2 may be unavailable.
    assert_eq!(budget(&w, "max"), (3, 1, 3, 2, "SufficientPods".into()));
    // One pod deleted: until its replacement is ready the budget allows nothing more.
    let name = k8s::name(&pods(&w, "web")[0].metadata).to_string();
    w.api
        .delete::<Pod>("user", "default", &name, &DeleteOptions::default())
        .unwrap();
    w.run_until(w.now_ms + 1_000);
    assert_eq!(budget(&w, "min"), (2, 2, 3, 0, "InsufficientPods".into()));
    assert!(w.run_until_pred(600_000, |w| ready(w, "web", 3)));
    w.run_until(w.now_ms + 1_000);
    assert_eq!(budget(&w, "min"), (3, 2, 3, 1, "SufficientPods".into()));
}

/// A pod's readiness gates hold Ready at False (`ReadinessGatesNotReady`) while its
/// containers run, until a client sets the gate's condition True (kubernetes
/// pkg/kubelet/status `GeneratePodReadyCondition`).
#[test]
fn readiness_gates_hold_ready_until_their_condition_is_true() {
    use k8s_openapi::api::core::v1::{PodCondition, PodReadinessGate};
    let mut w = world(3);
    let mut s = sts("gated", 1);
    let spec = s.spec.template.spec.as_mut().unwrap();
    spec.readiness_gates = Some(vec![PodReadinessGate {
        condition_type: "example.com/ready".into(),
    }]);
    w.api.create("user", s).unwrap();
    let running = |w: &World| {
        let p = pods(w, "gated");
        p.len() == 1 && k8s::phase(&p[0]) == "Running"
    };
    assert!(w.run_until_pred(600_000, running));
    let condition = |p: &Pod, ty: &str| {
        let cs = p.status.as_ref().unwrap().conditions.clone().unwrap();
        cs.into_iter().find(|c| c.type_ == ty)
    };
    let p = w.api.get::<Pod>("default", "gated-0").unwrap();
    let gate = condition(&p, "Ready").unwrap();
    assert_eq!(gate.status, "False");
    assert_eq!(gate.reason.as_deref(), Some("ReadinessGatesNotReady"));
    assert_eq!(
        gate.message.as_deref(),
        Some("corresponding condition of pod readiness gate \"example.com/ready\" does not exist.")
    );
    assert_eq!(condition(&p, "ContainersReady").unwrap().status, "True");
    let mut p = (*p).clone();
    let st = p.status.as_mut().unwrap();
    st.conditions.as_mut().unwrap().push(PodCondition {
        type_: "example.com/ready".into(),
        status: "True".into(),
        ..Default::default()
    });
    w.api.update_status("gate-controller", p).unwrap();
    assert!(w.run_until_pred(10_000, |w| ready(w, "gated", 1)));
}
