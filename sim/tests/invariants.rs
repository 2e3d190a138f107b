//! Invariants that the shipped scenarios only show holding: here each is made to fire.

use k8s_openapi::api::core::v1::Pod;
use lws::profile::Profile;
use lws_sim::api::DeleteOptions;
use lws_sim::controller::ControllerConfig;
use lws_sim::invariants::{self, Checker};
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
    let mut w = World::new(
        1,
        ClusterConfig {
            node_count: 2,
            pods_per_node: 4,
            ..Default::default()
        },
    );
    w.install_controller(ControllerConfig::new(Profile::parse("v0.4.1").unwrap()));
    let Manifest::LeaderWorkerSet(l) = parse("q.yaml", LWS).unwrap().remove(0) else {
        panic!()
    };
    w.api.create("user", *l).unwrap();
    let mut c = Checker::new(invariants::ALL.iter().map(|s| s.to_string()));
    let deadline = 600_000;
    while !c.rollout_complete_groups() && w.step(deadline) {
        c.observe(&w.api);
    }
    assert!(c.rollout_complete_groups(), "the LWS came up");
    (w, c)
}

fn run(w: &mut World, c: &mut Checker, ms: u64) {
    let deadline = w.now_ms + ms;
    while w.step(deadline) {
        c.observe(&w.api);
    }
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
    let v: Vec<&str> = c.violations.iter().map(|v| v.invariant.as_str()).collect();
    assert!(v.contains(&invariants::QUIESCENCE), "{v:?}");
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
    let v: Vec<&str> = c.violations.iter().map(|v| v.invariant.as_str()).collect();
    assert_eq!(v.first(), Some(&invariants::SURGE_BOUND), "{v:?}");
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
            .any(|v| v.invariant == invariants::GROUP_RESTART),
        "{:?}",
        c.violations
    );
    let (mut w, mut c) = at_rest();
    c.owe_restart([1]);
    w.api
        .delete::<Pod>("user", "default", "q-1-1", &DeleteOptions::default())
        .unwrap();
    run(&mut w, &mut c, 1_000);
    assert!(
        c.violations
            .iter()
            .all(|v| v.invariant != invariants::GROUP_RESTART),
        "{:?}",
        c.violations
    );
}

#[test]
fn availability_fires_on_an_undeclared_disruption_and_not_on_a_declared_one() {
    let (mut w, mut c) = at_rest();
    // maxUnavailable 1: one group down is fine, two are not, unless they are declared disrupted.
    c.disrupt([0], w.now_ms);
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
            .filter(|v| v.invariant == invariants::AVAILABILITY)
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
    assert_eq!(c.min_available, Some(0));
}

/// Sets the LWS's Progressing condition to `status`, keeping Available (True at rest).
fn set_progressing(w: &mut World, status: &str) {
    let l = w
        .api
        .get::<lws::api::LeaderWorkerSet>("default", "q")
        .unwrap();
    let mut conditions = l.status.clone().unwrap_or_default().conditions;
    conditions.retain(|c| c.type_ != "Progressing");
    let mut p = lws::rollout::condition(
        lws::rollout::PROGRESSING,
        conditions[0].last_transition_time.clone(),
    );
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
            .filter(|v| v.invariant == invariants::STATUS_CONDITIONS)
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
