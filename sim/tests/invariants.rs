//! Invariants that the shipped scenarios only show holding: here each is made to fire.

use k8s_openapi::api::core::v1::Pod;
use lws::profile::Profile;
use lws_sim::api::DeleteOptions;
use lws_sim::controller::ControllerConfig;
use lws_sim::invariants::{self, Checker, FaultEffect, InvariantId, ObjectRef};
use lws_sim::scenario::manifest::{parse, Manifest};
use lws_sim::world::{ClusterConfig, World};

const LWS: &str = "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: q
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: c
          image: app:v1
";

/// A world with a 2x2 LWS at rest under v0.4.1, and a checker that has seen all of it.
fn at_rest() -> (World, Checker) {
    at_rest_under("v0.4.1")
}

/// `at_rest` under the reconciler `profile`, with a checker judging revisions as it hashes them.
fn at_rest_under(profile: &str) -> (World, Checker) {
    let profile = Profile::parse(profile).unwrap();
    let mut w = World::new(
        1,
        ClusterConfig {
            node_count: 2,
            pods_per_node: 4,
            ..Default::default()
        },
    );
    w.install_controller(ControllerConfig::new(profile.clone()));
    let Manifest::LeaderWorkerSet(l) = parse("q.yaml", LWS).unwrap().remove(0) else {
        panic!()
    };
    w.api.create("user", *l).unwrap();
    let mut c = Checker::new(invariants::ALL).for_profile(&profile);
    let deadline = 600_000;
    while !c.rollout_complete_groups() && w.step(deadline) {
        c.observe(&w.api);
    }
    assert!(c.rollout_complete_groups(), "the LWS came up");
    (w, c)
}

/// Runs `ms` of simulated time, observing after every event; the clock ends at the deadline.
fn run(w: &mut World, c: &mut Checker, ms: u64) {
    let deadline = w.now_ms + ms;
    while w.step(deadline) {
        c.observe(&w.api);
    }
    w.run_until(deadline);
}

#[test]
fn quiescence_fires_when_a_pod_is_deleted_in_a_quiet_window() {
    let (mut w, mut c) = at_rest();
    c.open_quiet_window(w.now_ms);
    run(&mut w, &mut c, 10_000);
    assert!(
        c.violations.is_empty(),
        "nothing happens at rest: {:?}",
        c.violations
    );
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    let v: Vec<InvariantId> = c.violations.iter().map(|v| v.invariant).collect();
    assert!(v.contains(&InvariantId::Quiescence), "{v:?}");
}

#[test]
fn surge_bound_fires_when_the_leader_sts_asks_for_more_than_replicas_plus_max_surge() {
    let (mut w, mut c) = at_rest();
    // As if the controller had written 5 leader replicas for an LWS of 2 with maxSurge 0.
    let patch = serde_json::json!({"spec": {"replicas": 5}});
    w.api
        .merge_patch::<k8s_openapi::api::apps::v1::StatefulSet>("lws", "default", "q", &patch)
        .unwrap();
    run(&mut w, &mut c, 1);
    let v: Vec<InvariantId> = c.violations.iter().map(|v| v.invariant).collect();
    assert_eq!(v.first(), Some(&InvariantId::SurgeBound), "{v:?}");
    assert!(
        c.violations[0].message.contains("asks for 5 groups"),
        "{}",
        c.violations[0].message
    );
}

#[test]
fn group_restart_fires_when_the_restart_policy_restarts_a_group_no_fault_asked_for() {
    let (mut w, mut c) = at_rest();
    // A pod deleted by hand, not through a declared fault: the restart it causes is not owed.
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    assert!(
        c.violations
            .iter()
            .any(|v| v.invariant == InvariantId::GroupRestart),
        "{:?}",
        c.violations
    );
    let (mut w, mut c) = at_rest();
    let pods = vec![ObjectRef::new("default", "q-1-1")];
    c.on_fault(&FaultEffect::PodsDisrupted { pods }, w.now_ms);
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    assert!(
        c.violations
            .iter()
            .all(|v| v.invariant != InvariantId::GroupRestart),
        "{:?}",
        c.violations
    );
}

#[test]
fn availability_fires_on_an_undeclared_disruption_and_not_on_a_declared_one() {
    let (mut w, mut c) = at_rest();
    // maxUnavailable 1: one group down is fine, two are not, unless they are declared disrupted.
    let pods = vec![ObjectRef::new("default", "q-0-1")];
    c.on_fault(&FaultEffect::PodsDisrupted { pods }, w.now_ms);
    w.api
        .delete::<Pod>("user", "default", "q-0-1", &DeleteOptions::default())
        .unwrap();
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    // (The restart policy restarts both groups; only availability is under test here.)
    let availability = |c: &Checker| {
        c.violations
            .iter()
            .filter(|v| v.invariant == InvariantId::Availability)
            .count()
    };
    assert_eq!(availability(&c), 0, "{:?}", c.violations);
    let (mut w, mut c) = at_rest();
    w.api
        .delete::<Pod>("user", "default", "q-0-1", &DeleteOptions::default())
        .unwrap();
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    assert_eq!(availability(&c), 1, "{:?}", c.violations);
    assert_eq!(c.min_available(), Some(0));
}

/// Sets the LWS's Progressing condition to `status`, keeping Available (True at rest).
fn set_progressing(w: &mut World, status: &str) {
    set_condition(w, lws::rollout::PROGRESSING, status);
}

/// Sets one LWS status condition, keeping the others.
fn set_condition(w: &mut World, type_: &str, status: &str) {
    let l = w
        .api
        .get::<lws::api::LeaderWorkerSet>("default", "q")
        .unwrap();
    let mut conditions = l.status.clone().unwrap_or_default().conditions;
    conditions.retain(|c| c.type_ != type_);
    let mut p = lws::rollout::condition(type_, conditions[0].last_transition_time.clone());
    p.status = status.into();
    conditions.push(p);
    let patch = serde_json::json!({"status": {"conditions": conditions}});
    w.api
        .merge_patch_status::<lws::api::LeaderWorkerSet>("user", "default", "q", &patch)
        .unwrap();
}

#[test]
fn status_conditions_fires_once_per_episode_of_available_with_progressing() {
    let (mut w, mut c) = at_rest();
    run(&mut w, &mut c, 60_000);
    let l = w
        .api
        .get::<lws::api::LeaderWorkerSet>("default", "q")
        .unwrap();
    let conditions = &l.status.as_ref().unwrap().conditions;
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True"),
        "{conditions:?}"
    );
    let statuses = |c: &Checker| -> Vec<String> {
        c.violations
            .iter()
            .filter(|v| v.invariant == InvariantId::StatusConditions)
            .map(|v| v.message.clone())
            .collect()
    };
    assert!(statuses(&c).is_empty(), "at rest only Available is True");
    set_progressing(&mut w, "True");
    set_progressing(&mut w, "True");
    c.observe(&w.api);
    let v = statuses(&c);
    assert_eq!(v.len(), 1, "one report for one episode: {v:?}");
    assert!(
        v[0].contains("Available=True together with Progressing=True"),
        "{}",
        v[0]
    );
    set_progressing(&mut w, "False");
    c.observe(&w.api);
    assert_eq!(statuses(&c).len(), 1, "the episode ended cleanly");
    set_progressing(&mut w, "True");
    c.observe(&w.api);
    assert_eq!(statuses(&c).len(), 2, "a new episode is a new report");
}

/// Replaces the LWS's worker image, as `kubectl apply` of a new template would.
fn update_image(w: &mut World, image: &str) {
    let mut l = (*w
        .api
        .get::<lws::api::LeaderWorkerSet>("default", "q")
        .unwrap())
    .clone();
    let spec = l.spec.leader_worker_template.worker_template.spec.as_mut();
    spec.unwrap().containers[0].image = Some(image.into());
    w.api.update("user", l).unwrap();
}

fn violations_of(c: &Checker, invariant: InvariantId) -> Vec<&str> {
    c.violations
        .iter()
        .filter(|v| v.invariant == invariant)
        .map(|v| v.message.as_str())
        .collect()
}

#[test]
fn status_conditions_fires_on_upgrade_in_progress_before_any_template_change() {
    let (mut w, mut c) = at_rest();
    set_condition(&mut w, lws::rollout::UPGRADE_IN_PROGRESS, "True");
    c.observe(&w.api);
    let v = violations_of(&c, InvariantId::StatusConditions);
    assert!(v.iter().any(|m| m.contains("has never changed")), "{v:?}");
    // After a real template change the same condition is what a rollout reports.
    let (mut w, mut c) = at_rest();
    update_image(&mut w, "app:v2");
    run(&mut w, &mut c, 1);
    set_condition(&mut w, lws::rollout::UPGRADE_IN_PROGRESS, "True");
    c.observe(&w.api);
    let v = violations_of(&c, InvariantId::StatusConditions);
    assert!(v.iter().all(|m| !m.contains("has never changed")), "{v:?}");
}

/// A subdomainPolicy change alone is a new revision where the release hashes it (v0.4.1 with
/// its network-config flag, pkg/utils/utils.go at v0.4.1:43-51) and not where it does not.
#[test]
fn status_conditions_follows_what_the_release_hashes() {
    for (profile, hashed) in [("v0.4.1", true), ("v0.4.1,network-config=off", false)] {
        let (mut w, mut c) = at_rest_under(profile);
        let patch =
            serde_json::json!({"spec": {"networkConfig": {"subdomainPolicy": "UniquePerReplica"}}});
        w.api
            .merge_patch::<lws::api::LeaderWorkerSet>("user", "default", "q", &patch)
            .unwrap();
        run(&mut w, &mut c, 1);
        set_condition(&mut w, lws::rollout::UPGRADE_IN_PROGRESS, "True");
        c.observe(&w.api);
        let v = violations_of(&c, InvariantId::StatusConditions);
        assert_eq!(
            v.iter().any(|m| m.contains("has never changed")),
            !hashed,
            "{profile}: {v:?}"
        );
    }
}

/// v0.4.1's tail formula (B10) lowers the partition past group 1 while group 0 restarts: the
/// controller is blamed only once group 0 has been down long enough for it to have seen.
#[test]
fn partition_budget_counts_groups_down_longer_than_the_controller_can_miss() {
    let outcome = |head_start_ms: u64| {
        let (mut w, mut c) = at_rest();
        w.api
            .delete::<Pod>("user", "default", "q-0-1", &DeleteOptions::default())
            .unwrap();
        run(&mut w, &mut c, head_start_ms);
        update_image(&mut w, "app:v2");
        run(&mut w, &mut c, 2_000);
        let sts = w
            .api
            .get::<k8s_openapi::api::apps::v1::StatefulSet>("default", "q")
            .unwrap();
        let strategy = sts.spec.update_strategy.as_ref().unwrap();
        let partition = strategy.rolling_update.as_ref().unwrap().partition;
        assert_eq!(partition, Some(1), "the tail formula moved on");
        violations_of(&c, InvariantId::PartitionBudget)
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
    };
    assert!(outcome(500).is_empty(), "{:?}", outcome(500));
    let v = outcome(invariants::STALE_VIEW_MS + 1_000);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("partition lowered 2 -> 1, taking down ready groups [1]"),
        "{}",
        v[0]
    );
}

#[test]
fn required_restart_fires_only_when_the_owed_group_restart_never_comes() {
    // A real crash under RecreateGroupOnPodRestart (the v0.4.1 default): the pod controller
    // deletes the leader, so the restart the crash made due happens.
    let (mut w, mut c) = at_rest();
    let now = w.now_ms;
    w.schedule(
        now,
        lws_sim::world::Event::CrashContainer {
            namespace: "default".into(),
            pod: "q-1-1".into(),
        },
    );
    let pod = ObjectRef::new("default", "q-1-1");
    c.on_fault(&FaultEffect::ContainerCrashing { pod: pod.clone() }, now);
    c.on_fault(&FaultEffect::ContainerRestarted { pod }, now);
    run(&mut w, &mut c, invariants::RESTART_DUE_MS + 10_000);
    c.finish(&w.api);
    assert!(
        violations_of(&c, InvariantId::RequiredRestart).is_empty(),
        "{:?}",
        c.violations
    );
    // The same obligation with nothing that fails: the leader is never deleted.
    let (mut w, mut c) = at_rest();
    let pod = ObjectRef::new("default", "q-1-1");
    c.on_fault(&FaultEffect::ContainerRestarted { pod }, w.now_ms);
    run(&mut w, &mut c, invariants::RESTART_DUE_MS + 10_000);
    c.finish(&w.api);
    let v = violations_of(&c, InvariantId::RequiredRestart);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("group was not recreated"), "{}", v[0]);
}

/// Issue 16: an LWS of the same name in another namespace, with its own template, StatefulSets
/// and pods of the same names, is neither a template change of the first LWS nor part of it;
/// each is judged on its own, a fault declared in one namespace excuses nothing in the other,
/// and a violation names the LWS it is about.
#[test]
fn a_same_named_lws_in_another_namespace_is_watched_on_its_own() {
    let (mut w, mut c) = at_rest();
    let other = LWS
        .replace("  name: q\n", "  name: q\n  namespace: other\n")
        .replace("app:v1", "app:v2");
    let Manifest::LeaderWorkerSet(l) = parse("q-other.yaml", &other).unwrap().remove(0) else {
        panic!()
    };
    w.api.create("user", *l).unwrap();
    run(&mut w, &mut c, 600_000);
    let pods = |ns: &str| {
        w.api
            .list::<Pod>(Some(ns), &lws_sim::api::Selector::everything())
            .iter()
            .filter(|p| lws::k8s::is_running_and_ready(p))
            .count()
    };
    assert_eq!((pods("default"), pods("other")), (4, 4), "both came up");
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    assert!(c.rollout_complete_groups());
    let watched: Vec<String> = c.watched().map(|r| r.namespace.clone()).collect();
    assert_eq!(watched, ["default", "other"]);
    // A declared fault in the other namespace: its group restart is owed there.
    let pods = vec![ObjectRef::new("other", "q-1-1")];
    c.on_fault(&FaultEffect::PodsDisrupted { pods }, w.now_ms);
    w.api
        .delete::<Pod>("user", "other", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 120_000);
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    assert!(c.all_available());
    // The same fault owes the first LWS's group 1 nothing: a deletion by hand there, with no
    // fault declared, makes its group restart unowed, and the report says whose.
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    let v: Vec<InvariantId> = c.violations.iter().map(|v| v.invariant).collect();
    assert_eq!(v, [InvariantId::GroupRestart], "{:?}", c.violations);
    assert!(
        c.violations[0]
            .message
            .starts_with("LWS default/q: group 1 "),
        "{}",
        c.violations[0].message
    );
}

/// The LWS `q` of `LWS` with `image` in its worker template.
fn lws_with(image: &str) -> lws::api::LeaderWorkerSet {
    let Manifest::LeaderWorkerSet(l) = parse("q.yaml", &LWS.replace("app:v1", image))
        .unwrap()
        .remove(0)
    else {
        panic!()
    };
    *l
}

/// Every pod's first container image, in key order.
fn pod_images(w: &World) -> Vec<String> {
    w.api
        .list::<Pod>(Some("default"), &lws_sim::api::Selector::everything())
        .iter()
        .map(|p| {
            p.spec.as_ref().unwrap().containers[0]
                .image
                .clone()
                .unwrap()
        })
        .collect()
}

/// Delete the LWS `q` and create it again at once with `image`, before the garbage collector
/// has removed anything; run 20 minutes. Returns the UIDs of the new LWS and of the leader
/// StatefulSet's controller.
fn recreate_at_once(w: &mut World, c: &mut Checker, image: &str) -> (String, String) {
    w.api
        .delete::<lws::api::LeaderWorkerSet>("user", "default", "q", &DeleteOptions::default())
        .unwrap();
    let created = w.api.create("user", lws_with(image)).unwrap();
    run(w, c, 1_200_000);
    let sts = w
        .api
        .get::<k8s_openapi::api::apps::v1::StatefulSet>("default", "q")
        .expect("a leader StatefulSet");
    let owner = lws::k8s::controller_of(&sts.metadata).expect("owned");
    (created.metadata.uid.clone().unwrap(), owner.uid.clone())
}

/// An LWS created again before the garbage collector got to its predecessor's leader
/// StatefulSet: the new controller's apply takes the StatefulSet over (server-side apply drops
/// the owner reference its manager set before), and the pods under it stay. The checker takes
/// them in when it sees the takeover; it used to ignore everything created before the new LWS
/// and reported a run that was at rest as stalled (timeout, convergence).
#[test]
fn an_lws_created_again_at_once_adopts_its_predecessors_objects() {
    let (mut w, mut c) = at_rest();
    let (lws_uid, owner_uid) = recreate_at_once(&mut w, &mut c, "app:v1");
    assert_eq!(owner_uid, lws_uid, "the new LWS took the StatefulSet over");
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    assert!(c.rollout_complete_groups(), "{}", c.stuck_state());
    assert!(c.all_available());
}

/// The same with new templates: the adopted groups run a revision only the predecessor had,
/// which the checker knows from the predecessor's watch, so the rollout that follows is
/// judged as one (it used to call every adopted group inconsistent, of no known revision).
#[test]
fn adopted_groups_roll_to_the_new_lws_templates() {
    let (mut w, mut c) = at_rest_under("all-fixed");
    let (lws_uid, owner_uid) = recreate_at_once(&mut w, &mut c, "app:v2");
    assert_eq!(owner_uid, lws_uid, "the new LWS took the StatefulSet over");
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    assert!(c.rollout_complete_groups(), "{}", c.stuck_state());
    assert_eq!(pod_images(&w), ["app:v2"; 4]);
}

/// An LWS deleted and created again under the same name is a new LWS: its watch starts afresh
/// (before, the name stayed "being deleted" and the new LWS was never judged).
#[test]
fn an_lws_created_again_is_watched_afresh() {
    let (mut w, mut c) = at_rest();
    w.api
        .delete::<lws::api::LeaderWorkerSet>("user", "default", "q", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 120_000);
    let left = w
        .api
        .list::<Pod>(Some("default"), &lws_sim::api::Selector::everything())
        .len();
    assert_eq!(
        left, 0,
        "the garbage collector removed the first LWS's pods"
    );
    w.api.create("user", lws_with("app:v2")).unwrap();
    run(&mut w, &mut c, 600_000);
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    assert_eq!(c.watched().count(), 1);
    assert!(c.rollout_complete_groups(), "{}", c.stuck_state());
    assert!(c.all_available());
    assert_eq!(pod_images(&w), ["app:v2"; 4]);
}
