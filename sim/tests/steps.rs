//! The `waitFor {kind, name, match}` and `check` steps, which no shipped scenario uses.

use std::path::PathBuf;

use lws_sim::invariants;
use lws_sim::scenario::{self, Scenario};

/// A scenario file beside the shipped ones, so `manifests/` resolves.
fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/steps-test.yaml")
}

fn scenario(steps: &str) -> Result<Scenario, String> {
    let text = format!(
        "name: steps
cluster:
  kubernetesVersion: \"1.29\"
  nodes: {{count: 8, podsPerNode: 4}}
  podStartup: 20s..60s
controller:
  reconciler: v0.4.1
manifests: [manifests/vllm-lws.yaml]
steps:
{steps}invariants: [availability]
"
    );
    Scenario::parse(&path(), &text).map_err(|e| e.to_string())
}

#[test]
fn wait_for_an_object_and_check_it() {
    let s = scenario(
        "  - waitFor: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 4}}}
    timeout: 10m
  - check: {kind: StatefulSet, name: vllm, match: {spec: {replicas: 4}}}
  - check: {kind: StatefulSet, name: vllm, match: {spec: {replicas: 5}}}
",
    )
    .unwrap();
    let r = scenario::run(&s, None, None).unwrap_or_else(|e| panic!("{}", e.0));
    let v: Vec<(&str, &str)> = r
        .violations
        .iter()
        .map(|v| (v.invariant.as_str(), v.message.as_str()))
        .collect();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].0, invariants::CHECK);
    assert!(
        v[0].1
            .contains("StatefulSet vllm does not match {\"spec\":{\"replicas\":5}}"),
        "{}",
        v[0].1
    );
    // The report names the first field that differs, not a cut of the whole object.
    assert!(
        v[0].1.ends_with(": .spec.replicas: expected 5, found 4"),
        "{}",
        v[0].1
    );
}

#[test]
fn a_mismatch_names_the_first_differing_field_path() {
    use serde_json::json;
    let obj = json!({"status": {"conditions": [{"type": "Available", "status": "False"}]}});
    let want = json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}});
    assert_eq!(
        scenario::first_mismatch(&want, &obj, "").as_deref(),
        Some(".status.conditions[type=\"Available\"].status: expected \"True\", found \"False\"")
    );
    let absent = json!({"spec": {"partition": 1}});
    assert_eq!(
        scenario::first_mismatch(&absent, &obj, "").as_deref(),
        Some(".spec: expected {\"partition\":1}, the field is absent")
    );
    assert_eq!(scenario::first_mismatch(&obj, &obj, ""), None);
}

#[test]
fn lists_keyed_by_type_or_name_match_by_key_in_any_order() {
    use serde_json::json;
    let obj = json!({"conditions": [
        {"type": "Progressing", "status": "False"},
        {"type": "Available", "status": "True"},
    ]});
    assert!(scenario::subset_match(
        &json!({"conditions": [{"type": "Available", "status": "True"}]}),
        &obj
    ));
    let wrong = json!({"conditions": [{"type": "Available", "status": "False"}]});
    assert!(!scenario::subset_match(&wrong, &obj));
    assert_eq!(
        scenario::first_mismatch(&wrong, &obj, "").as_deref(),
        Some(".conditions[type=\"Available\"].status: expected \"False\", found \"True\"")
    );
    let missing = json!({"conditions": [{"type": "UpgradeInProgress"}]});
    assert!(!scenario::subset_match(&missing, &obj));
    // A list without keys still matches whole and in order.
    assert!(!scenario::subset_match(
        &json!({"a": [2, 1]}),
        &json!({"a": [1, 2]})
    ));
    assert!(scenario::subset_match(
        &json!({"a": [1, 2]}),
        &json!({"a": [1, 2]})
    ));
}

#[test]
fn an_object_that_never_matches_times_out() {
    let s = scenario(
        "  - waitFor: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 9}}}
    timeout: 5m
",
    )
    .unwrap();
    let r = scenario::run(&s, None, None).unwrap_or_else(|e| panic!("{}", e.0));
    let v = &r.violations;
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].invariant, invariants::TIMEOUT);
    assert!(
        v[0].message
            .contains("waited 5m for LeaderWorkerSet vllm to match"),
        "{}",
        v[0].message
    );
}

#[test]
fn match_is_required() {
    for (step, extra) in [("check", ""), ("waitFor", "    timeout: 1m\n")] {
        let e = scenario(&format!(
            "  - {step}: {{kind: StatefulSet, name: vllm}}\n{extra}"
        ))
        .unwrap_err();
        assert!(e.contains(&format!("{step}: `match` is required")), "{e}");
    }
}

#[test]
fn a_step_with_two_actions_names_both() {
    let e = scenario("  - apply: manifests/vllm-lws.yaml\n    wait: 1m\n").unwrap_err();
    assert!(
        e.contains("a step needs exactly one action, found 2: [apply, wait]"),
        "{e}"
    );
    let e = scenario("  - timeout: 1m\n").unwrap_err();
    assert!(
        e.contains("a step needs exactly one action, found 0: []"),
        "{e}"
    );
    let e = scenario("  - wait: 1m\n    timeout: 1m\n").unwrap_err();
    assert!(e.contains("`timeout` belongs to `waitFor`"), "{e}");
}

#[test]
fn an_unknown_action_key_is_named() {
    let e = scenario("  - restartController: {}\n").unwrap_err();
    assert!(e.contains("restartController"), "{e}");
    assert!(
        e.contains("steps-test.yaml:"),
        "the error names the file and line: {e}"
    );
}

/// Every shipped scenario file reads into a spec that writes back to a file that reads into
/// the same spec, and runs to the same trace.
#[test]
fn every_shipped_scenario_round_trips_through_its_spec() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [root.clone(), root.join("zoo")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "yaml") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    for f in files {
        let s = Scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
        let text = scenario::spec_yaml(&s.spec);
        let back = Scenario::parse(&f, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.spec, s.spec, "{}", f.display());
        let (profile, _) = &s.expect[0];
        let a = scenario::run_with(&s, profile, None).unwrap();
        let b = scenario::run_with(&back, profile, None).unwrap();
        assert_eq!(a.trace_hash, b.trace_hash, "{}", f.display());
    }
}

#[test]
fn absent_checks_that_an_object_is_gone() {
    let s = scenario(
        "  - waitFor: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 4}}}
    timeout: 10m
  - check: {kind: Service, name: vllm-nope, absent: true}
  - delete: {kind: LeaderWorkerSet, name: vllm}
  - waitFor: {kind: StatefulSet, name: vllm, absent: true}
    timeout: 5m
  - check: {kind: LeaderWorkerSet, name: vllm, absent: true}
  - check: {kind: Node, name: node-0, absent: true}
",
    )
    .unwrap();
    let r = scenario::run(&s, None, None).unwrap_or_else(|e| panic!("{}", e.0));
    let v: Vec<(&str, &str)> = r
        .violations
        .iter()
        .map(|v| (v.invariant.as_str(), v.message.as_str()))
        .collect();
    assert_eq!(
        v,
        [(
            invariants::CHECK.as_str(),
            "steps-test.yaml:17: steps[5]: Node node-0 exists; the step wants it absent"
        )]
    );
    let both = scenario("  - check: {kind: Pod, name: vllm-0, absent: true, match: {}}\n");
    assert!(both.unwrap_err().contains("exclude each other"));
}

/// The `check` violations of a run of `steps`, as messages.
fn check_messages(steps: &str) -> Vec<String> {
    messages_of(steps, invariants::CHECK)
}

/// The violations of `invariant` in a run of `steps`, as messages.
fn messages_of(steps: &str, invariant: invariants::InvariantId) -> Vec<String> {
    let s = scenario(steps).unwrap();
    let r = scenario::run(&s, None, None).unwrap_or_else(|e| panic!("{}", e.0));
    r.violations
        .iter()
        .filter(|v| v.invariant == invariant)
        .map(|v| v.message.clone())
        .collect()
}

#[test]
fn count_checks_the_number_of_objects_carrying_the_labels() {
    let m = check_messages(
        "  - waitFor: available
    timeout: 10m
  - check: {kind: Pod, selector: {leaderworkerset.sigs.k8s.io/name: vllm}, count: 12}
  - check: {kind: Pod, selector: {leaderworkerset.sigs.k8s.io/worker-index: \"0\"}, count: 4}
  - check: {kind: Pod, selector: {leaderworkerset.sigs.k8s.io/name: vllm}, match: {status: {phase: Running}}}
  - check: {kind: Service, count: 2}
  - check: {kind: Pod, selector: {leaderworkerset.sigs.k8s.io/name: other}, absent: true}
",
    );
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(
        m[0],
        "steps-test.yaml:15: steps[4]: Services: found 1 (vllm), wanted exactly 2"
    );
}

#[test]
fn null_exists_and_field_of_match_presence_and_another_objects_field() {
    let hash = "/metadata/labels/leaderworkerset.sigs.k8s.io~1template-revision-hash";
    let m = check_messages(&format!(
        "  - waitFor: available
    timeout: 10m
  - check: {{kind: Pod, name: vllm-0, match: {{spec: {{affinity: null}}, metadata: {{uid: {{$exists: true}}}}}}}}
  - check: {{kind: Pod, name: vllm-1-2, match: {{metadata: {{labels: {{leaderworkerset.sigs.k8s.io/template-revision-hash: {{$fieldOf: {{kind: Pod, name: vllm-0, pointer: {hash}}}}}}}}}}}}}
  - check: {{kind: Pod, name: vllm-0, match: {{spec: {{nodeName: null}}}}}}
  - check: {{kind: Pod, name: vllm-0, match: {{spec: {{affinity: {{$exists: true}}}}}}}}
  - check: {{kind: Pod, name: vllm-0, match: {{spec: {{nodeName: {{$fieldOf: {{kind: Pod, name: nope, pointer: /spec/nodeName}}}}}}}}}}
"
    ));
    assert_eq!(m.len(), 3, "{m:?}");
    assert!(
        m[0].contains(".spec.nodeName: expected no field, found \"node-"),
        "{}",
        m[0]
    );
    assert!(
        m[1].contains(".spec.affinity: expected a value, the field is absent"),
        "{}",
        m[1]
    );
    assert_eq!(
        m[2],
        "steps-test.yaml:16: steps[5]: $fieldOf: Pod nope not found"
    );
}

#[test]
fn holds_fails_when_the_condition_stops_holding_and_status_patches_write_status() {
    let m = check_messages(
        "  - waitFor: available
    timeout: 10m
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 4}}, holds: 2m}
  - patch: {kind: LeaderWorkerSet, name: vllm, subresource: status, merge: {status: {readyReplicas: 1}}}
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 1}}}
  - deletePod: {pod: vllm-2}
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 1}}, holds: 1m}
",
    );
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("held for less than 1m: LeaderWorkerSet vllm does not match"),
        "{}",
        m[0]
    );
}

#[test]
fn events_are_objects_a_check_selects() {
    let m = check_messages(
        "  - waitFor: {kind: Event, match: {reason: GroupsAreProgressing, type: Normal, involvedObject: {kind: LeaderWorkerSet, name: vllm}}}
    timeout: 1m
  - waitFor: available
    timeout: 10m
  - check: {kind: Event, match: {reason: NoSuchReason}}
",
    );
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(
        m[0],
        "steps-test.yaml:14: steps[2]: Events matching {\"reason\":\"NoSuchReason\"}: found 0 of 2, wanted at least one"
    );
}

#[test]
fn contains_matches_part_of_a_string() {
    let m = check_messages(
        "  - waitFor: available
    timeout: 10m
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {conditions: [{type: Available, message: {$contains: replicas are ready}}]}}}
  - check: {kind: Pod, name: vllm-0, match: {spec: {containers: [{name: vllm-leader, image: {$not: {$contains: \":v9\"}}}]}}}
  - check: {kind: Pod, name: vllm-0, match: {metadata: {name: {$contains: vllm-9}}}}
  - check: {kind: Pod, name: vllm-0, match: {spec: {nodeName: {$not: {$contains: node}}}}}
",
    );
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].ends_with(".metadata.name: expected a string containing \"vllm-9\", found \"vllm-0\""),
        "{}",
        m[0]
    );
    assert!(
        m[1].contains(".spec.nodeName: expected anything but"),
        "{}",
        m[1]
    );
    // Only a string is contained.
    let e = scenario(
        "  - check: {kind: Pod, name: vllm-0, match: {metadata: {name: {$contains: 3}}}}\n",
    )
    .unwrap_err();
    assert!(
        e.contains("match.metadata.name.$contains: must be a string"),
        "{e}"
    );
}

#[test]
fn recreated_asks_for_another_uid_than_the_deleted_one() {
    let m = check_messages(
        "  - waitFor: available
    timeout: 10m
  - deletePod: {pod: vllm-1-1}
  - waitFor: {kind: Pod, name: vllm-1-1, recreated: true, match: {status: {phase: Running}}}
    timeout: 5m
  - check: {kind: Pod, name: vllm-1-1, match: {metadata: {name: {$not: vllm-1-1}}}}
",
    );
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].ends_with(".metadata.name: expected anything but \"vllm-1-1\", found \"vllm-1-1\""),
        "{}",
        m[0]
    );
    // No earlier step deletes it: a check is refused when the file loads, naming the step.
    let e = scenario("  - check: {kind: Pod, name: vllm-1, recreated: true}\n").unwrap_err();
    assert!(
        e.contains(
            "steps[0].check.recreated: no earlier `delete`, `deletePod` or `crashContainer` step deletes Pod vllm-1"
        ),
        "{e}"
    );
    // A waitFor waits for a replacement of what it finds when it starts: here none comes.
    let timeouts = messages_of(
        "  - waitFor: available
    timeout: 10m
  - waitFor: {kind: Pod, name: vllm-1-1, recreated: true}
    timeout: 1m
",
        invariants::TIMEOUT,
    );
    assert_eq!(timeouts.len(), 1, "{timeouts:?}");
    assert!(
        timeouts[0].contains("waited 1m for Pod vllm-1-1"),
        "{}",
        timeouts[0]
    );
}

/// A run's progress hook (the CLI's progress line) is told the step, the simulated time and
/// the event count, in order, and observes only: the trace is the one a run without it makes.
#[test]
fn the_progress_hook_follows_the_run_and_changes_nothing() {
    use std::sync::{Arc, Mutex};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rollout.yaml");
    let s = Scenario::load(&path).unwrap();
    let profile = s.reconciler(None).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = scenario::RunOptions {
        progress: Some(Arc::new(move |p: &scenario::Progress| {
            sink.lock().unwrap().push(*p)
        })),
        ..Default::default()
    };
    let with = scenario::run_with_options(&s, &profile, opts).unwrap();
    let without = scenario::run_with_options(&s, &profile, Default::default()).unwrap();
    assert_eq!(with.trace_hash, without.trace_hash);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len() as u64, with.events / scenario::PROGRESS_EVERY);
    assert!(seen.windows(2).all(|w| w[0].events < w[1].events
        && w[0].now_ms <= w[1].now_ms
        && w[0].step <= w[1].step));
    assert!(seen
        .iter()
        .all(|p| p.steps == s.steps.len() && p.step <= p.steps));
}

/// Upstream's status counters are `int32` with `omitempty`: the API server stores no zero
/// count, so before any group is ready `status.readyReplicas` is absent. A pattern's `0` still
/// matches (a Go client reads the absent field as 0), `null` asks for the absence, and a
/// count that is there must match as written. A map of such patterns holds where the map
/// itself is absent (the LWS has no annotations).
#[test]
fn a_zero_status_count_is_absent_and_a_zero_pattern_matches_it() {
    let m = check_messages(
        "  - waitFor: {kind: LeaderWorkerSet, name: vllm, match: {status: {replicas: 4}}}
    timeout: 1m
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 0}}}
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: null}}}
  - check: {kind: LeaderWorkerSet, name: vllm, match: {metadata: {annotations: {note: null}}}}
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: {$exists: true}}}}
  - check: {kind: LeaderWorkerSet, name: vllm, match: {status: {readyReplicas: 1}}}
",
    );
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].ends_with(".status.readyReplicas: expected a value, the field is absent"),
        "{}",
        m[0]
    );
    assert!(
        m[1].ends_with(".status.readyReplicas: expected 1, the field is absent"),
        "{}",
        m[1]
    );
}

/// After a `crashContainer` (RecreateGroupOnPodRestart recreates the group), `recreated: true`
/// compares with the UIDs the namespace's pods had at the crash, so a later `check` can ask
/// that a pod is new (upstream's e2e compares every pod's UID before and after), and a pod of
/// a group the crash did not touch is not.
#[test]
fn recreated_after_a_container_crash_compares_with_the_uids_at_the_crash() {
    let text = "name: steps
cluster:
  nodes: {count: 8, podsPerNode: 4}
  podStartup: 20s..60s
controller:
  reconciler: v0.10.0
manifests: [manifests/vllm-lws-recreate.yaml]
steps:
  - waitFor: available
    timeout: 10m
  - crashContainer: {pod: vllm-1-1}
  - wait: 3m
  - check: {kind: Pod, name: vllm-1, recreated: true}
  - check: {kind: Pod, name: vllm-1-2, recreated: true}
  - check: {kind: StatefulSet, name: vllm-1, recreated: true}
  - check: {kind: Pod, name: vllm-2, recreated: true}
invariants: []
";
    let s = Scenario::parse(&path(), text).unwrap_or_else(|e| panic!("{e}"));
    let r = scenario::run(&s, None, None).unwrap_or_else(|e| panic!("{}", e.0));
    let m: Vec<&str> = r
        .violations
        .iter()
        .filter(|v| v.invariant == invariants::CHECK)
        .map(|v| v.message.as_str())
        .collect();
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("steps[6]: Pod vllm-2"), "{}", m[0]);
    assert!(m[0].contains(".metadata.uid"), "{}", m[0]);
}
