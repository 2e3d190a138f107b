//! API server semantics, each test naming the upstream behaviour it checks (kubernetes/apiserver
//! `pkg/registry/generic/registry/store.go`, `pkg/storage/etcd3/store.go` @24a394e5).

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec, StatefulSetStatus};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use lws::api::{LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerSetStatus};
use serde_json::json;

use super::*;

fn api() -> ApiServer {
    ApiServer::new(1, FeatureGates::for_minor(29))
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..Default::default()
    }
}

fn sts(name: &str, image: &str) -> StatefulSet {
    StatefulSet {
        metadata: meta(name),
        spec: StatefulSetSpec {
            selector: LabelSelector {
                match_labels: Some([("app".to_string(), name.to_string())].into()),
                ..Default::default()
            },
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

fn pod(name: &str) -> Pod {
    Pod {
        metadata: meta(name),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("app:v1".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

fn lws(name: &str) -> LeaderWorkerSet {
    LeaderWorkerSet {
        metadata: meta(name),
        spec: LeaderWorkerSetSpec::default(),
        ..Default::default()
    }
}

fn rv<K: Kind>(o: &K) -> u64 {
    o.meta()
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn create_sets_system_fields_and_one_global_resource_version() {
    // rest.FillObjectMetaSystemFields; one etcd revision counter for all kinds
    // (apiserver pkg/registry/rest/create.go, pkg/storage/etcd3/store.go).
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let p = a.create("t", pod("p")).unwrap();
    assert!(s.metadata.uid.is_some());
    assert_ne!(s.metadata.uid, p.metadata.uid);
    assert!(s.metadata.creation_timestamp.is_some());
    assert_eq!(s.metadata.generation, Some(1));
    assert_eq!(rv(&*p), rv(&*s) + 1);
    // Create cannot set status; pods start Pending.
    assert_eq!(lws::k8s::phase(&p), "Pending");
}

#[test]
fn a_node_keeps_the_status_it_is_created_with_a_statefulset_does_not() {
    // kubernetes pkg/registry/core/node/strategy.go: "Nodes allow *all* fields, including
    // status, to be set on create"; the StatefulSet strategy's PrepareForCreate clears it.
    use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeStatus};
    let mut a = api();
    let node = Node {
        metadata: ObjectMeta {
            name: Some("n".into()),
            ..Default::default()
        },
        status: Some(NodeStatus {
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let created = a.create("t", node).unwrap();
    let conditions = created.status.as_ref().and_then(|s| s.conditions.as_ref());
    assert_eq!(conditions.map(|c| c[0].status.as_str()), Some("True"));
    let mut set = sts("a", "v1");
    set.status = Some(StatefulSetStatus {
        replicas: 3,
        ..Default::default()
    });
    assert_eq!(a.create("t", set).unwrap().status, None);
}

#[test]
fn create_of_an_existing_name_is_409_already_exists() {
    let mut a = api();
    a.create("t", pod("p")).unwrap();
    let e = a.create("t", pod("p")).unwrap_err();
    assert_eq!((e.code, e.reason), (409, Reason::AlreadyExists));
}

#[test]
fn a_create_naming_a_resource_version_is_refused_but_an_apply_creating_one_is_not() {
    // apiserver storage/etcd3/store.go `Create`: ErrResourceVersionSetOnCreate, a 500.
    let mut a = api();
    let mut p = pod("p");
    p.metadata.resource_version = Some("42".into());
    let e = a.create("t", p.clone()).unwrap_err();
    assert_eq!((e.code, e.reason), (500, Reason::InternalError));
    assert_eq!(
        e.message,
        "resourceVersion should not be set on objects to be created"
    );
    assert!(a.try_get::<Pod>("default", "p").is_none());
    // "0" and a version that is no number are taken (and dropped), as upstream.
    for v in ["0", "abc"] {
        let mut q = pod(&format!("q{v}"));
        q.metadata.resource_version = Some(v.into());
        let q = a.create("t", q).unwrap();
        assert_ne!(q.metadata.resource_version.as_deref(), Some(v));
    }
    // Server-side apply creates through the update path, which takes no version.
    let mut s = sts("a", "v1");
    s.metadata.resource_version = Some("42".into());
    let created = a.apply("t", &s, true).unwrap();
    assert_ne!(created.metadata.resource_version.as_deref(), Some("42"));
}

#[test]
fn resize_policies_are_validated_from_1_33_and_retention_policies_always() {
    // validateResizePolicy: from 1.33 (InPlacePodVerticalScaling on), cpu or memory once each,
    // NotRequired or RestartContainer.
    let bogus = |name: &str| {
        let mut p = pod(name);
        p.spec.as_mut().unwrap().containers[0].resize_policy = Some(vec![
            k8s_openapi::api::core::v1::ContainerResizePolicy {
                resource_name: "cpu".into(),
                restart_policy: "Bogus".into(),
            },
            k8s_openapi::api::core::v1::ContainerResizePolicy {
                resource_name: "cpu".into(),
                restart_policy: "NotRequired".into(),
            },
        ]);
        p
    };
    let mut new = ApiServer::new(1, FeatureGates::for_minor(33));
    let e = new.create("t", bogus("p")).unwrap_err();
    assert_eq!(e.code, 422, "{}", e.message);
    assert!(
        e.message
            .contains("spec.containers[0].resizePolicy: Unsupported value: \"Bogus\""),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("spec.containers[0].resizePolicy[1]: Duplicate value: \"cpu\""),
        "{}",
        e.message
    );
    // Before 1.33 the field is not validated (the API server drops it).
    api().create("t", bogus("p")).unwrap();
    // ValidatePersistentVolumeClaimRetentionPolicyType: Retain or Delete.
    let mut s = sts("a", "v1");
    s.spec.persistent_volume_claim_retention_policy = Some(
        k8s_openapi::api::apps::v1::StatefulSetPersistentVolumeClaimRetentionPolicy {
            when_deleted: Some("Bogus".into()),
            when_scaled: None,
        },
    );
    let e = api().create("t", s).unwrap_err();
    assert_eq!(e.code, 422, "{}", e.message);
    assert!(
        e.message.contains("spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Bogus\": supported values: \"Retain\", \"Delete\""),
        "{}",
        e.message
    );
}

#[test]
fn a_patch_that_does_not_decode_names_the_field() {
    let mut a = api();
    a.create("t", sts("a", "v1")).unwrap();
    let wrong =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": true}]}}}});
    let e = a
        .merge_patch::<StatefulSet>("t", "default", "a", &wrong)
        .unwrap_err();
    assert_eq!(e.code, 422, "{}", e.message);
    assert!(
        e.message.contains(
            "spec.template.spec.containers[0].image: Invalid value: \"boolean\": spec.template.spec.containers[0].image in body must be of type string: \"boolean\""
        ),
        "{}",
        e.message
    );
    let nameless = json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    let e = a
        .merge_patch::<StatefulSet>("t", "default", "a", &nameless)
        .unwrap_err();
    assert!(
        e.message
            .contains("spec.template.spec.containers[0].name: Required value"),
        "{}",
        e.message
    );
}

#[test]
fn generate_name_draws_a_suffix() {
    let mut a = api();
    let mut p = pod("");
    p.metadata.name = None;
    p.metadata.generate_name = Some("job-".into());
    let created = a.create("t", p).unwrap();
    let name = created.metadata.name.clone().unwrap();
    assert!(name.starts_with("job-") && name.len() == 9, "{name}");
}

#[test]
fn no_op_update_consumes_no_resource_version_and_emits_no_event() {
    // etcd3 store GuaranteedUpdate skips identical writes (apiserver pkg/storage/etcd3/store.go).
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let log_len = a.statefulsets.log().len();
    let again = a.update("t", (*s).clone()).unwrap();
    assert_eq!(rv(&*again), rv(&*s));
    assert_eq!(a.resource_version(), rv(&*s));
    assert_eq!(a.statefulsets.log().len(), log_len);
}

#[test]
fn generation_bumps_on_spec_changes_only() {
    // statefulset strategy: +1 iff spec differs; status and metadata never bump it
    // (kubernetes pkg/registry/apps/statefulset/strategy.go @01aa0f3f).
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let mut m = (*s).clone();
    m.metadata.labels = Some([("x".to_string(), "y".to_string())].into());
    let m = a.update("t", m).unwrap();
    assert_eq!(m.metadata.generation, Some(1));
    let mut st = (*m).clone();
    st.status = Some(StatefulSetStatus {
        replicas: 3,
        ..Default::default()
    });
    let st = a.update_status("t", st).unwrap();
    assert_eq!(st.metadata.generation, Some(1));
    let mut sp = (*st).clone();
    sp.spec.replicas = Some(7); // any spec field counts, not only the template
    let sp = a.update("t", sp).unwrap();
    assert_eq!(sp.metadata.generation, Some(2));
}

#[test]
fn main_endpoint_ignores_status_and_status_endpoint_ignores_spec() {
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let mut both = (*s).clone();
    both.spec.replicas = Some(4);
    both.status = Some(StatefulSetStatus {
        replicas: 9,
        ..Default::default()
    });
    let via_main = a.update("t", both.clone()).unwrap();
    assert_eq!(via_main.spec.replicas, Some(4));
    assert_eq!(via_main.status.as_ref().map(|s| s.replicas), None);
    let mut both = (*via_main).clone();
    both.spec.replicas = Some(1);
    both.status = Some(StatefulSetStatus {
        replicas: 9,
        ..Default::default()
    });
    let via_status = a.update_status("t", both).unwrap();
    assert_eq!(via_status.spec.replicas, Some(4));
    assert_eq!(via_status.status.as_ref().unwrap().replicas, 9);
}

#[test]
fn stale_resource_version_is_409_conflict() {
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let mut first = (*s).clone();
    first.spec.replicas = Some(2);
    a.update("t", first).unwrap();
    let mut stale = (*s).clone();
    stale.spec.replicas = Some(3);
    let e = a.update("t", stale).unwrap_err();
    assert_eq!((e.code, e.reason), (409, Reason::Conflict));
}

#[test]
fn unconditional_update_is_allowed_for_builtins_but_422_for_custom_resources() {
    // AllowUnconditionalUpdate: true for StatefulSet, false for CRs (each kind's registry strategy).
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let mut u = (*s).clone();
    u.metadata.resource_version = None;
    u.spec.replicas = Some(2);
    assert!(a.update("t", u).is_ok());
    let l = a.create("t", lws("l")).unwrap();
    let mut u = (*l).clone();
    u.metadata.resource_version = None;
    u.spec.replicas = Some(2);
    let e = a.update("t", u).unwrap_err();
    assert_eq!((e.code, e.reason), (422, Reason::Invalid));
    // Every custom resource: a DisaggregatedSetRoleScaler too (a PUT without one was taken).
    a.disaggregated_set_crds = true;
    let scaler: lws::disagg::api::DisaggregatedSetRoleScaler = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "r", "namespace": "default"}, "spec": {"replicas": 1}}),
    )
    .unwrap();
    let r = a.create("t", scaler).unwrap();
    let mut u = (*r).clone();
    u.metadata.resource_version = None;
    let e = a.update("t", u).unwrap_err();
    assert_eq!((e.code, e.reason), (422, Reason::Invalid));
    assert!(
        e.message.contains("must be specified for an update"),
        "{}",
        e.message
    );
}

#[test]
fn lws_generation_ignores_status_writes() {
    // CRD with status subresource: generation follows non-metadata, non-status changes.
    let mut a = api();
    let l = a.create("t", lws("l")).unwrap();
    let mut s = (*l).clone();
    s.status = Some(LeaderWorkerSetStatus {
        ready_replicas: 1,
        ..Default::default()
    });
    let s = a.update_status("t", s).unwrap();
    assert_eq!(s.metadata.generation, Some(1));
    let mut u = (*s).clone();
    u.spec.replicas = Some(3);
    assert_eq!(a.update("t", u).unwrap().metadata.generation, Some(2));
}

#[test]
fn missing_objects_are_404() {
    let mut a = api();
    assert_eq!(a.get::<Pod>("default", "nope").unwrap_err().code, 404);
    assert_eq!(
        a.update("t", pod("nope")).unwrap_err().reason,
        Reason::NotFound
    );
    let e = a
        .delete::<Pod>("t", "default", "nope", &DeleteOptions::default())
        .unwrap_err();
    assert_eq!(e.reason, Reason::NotFound);
}

#[test]
fn list_filters_by_label_selector_and_namespace_in_key_order() {
    let mut a = api();
    for (ns, name, app) in [
        ("default", "b", "x"),
        ("default", "a", "x"),
        ("other", "c", "x"),
        ("default", "d", "y"),
    ] {
        let mut p = pod(name);
        p.metadata.namespace = Some(ns.into());
        p.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        a.create("t", p).unwrap();
    }
    let names = |v: Vec<Shared<Pod>>| {
        v.iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(a.list::<Pod>(Some("default"), &Selector::labels([("app", "x")]))),
        ["a", "b"]
    );
    assert_eq!(
        names(a.list::<Pod>(None, &Selector::labels([("app", "x")]))),
        ["a", "b", "c"]
    );
}

#[test]
fn graceful_pod_deletion_keeps_the_pod_terminating_until_the_final_delete() {
    // pod strategy CheckGracefulDelete: deletionTimestamp = now + grace, MODIFIED
    // (kubernetes pkg/registry/core/pod/strategy.go; apiserver store.go).
    let mut a = api();
    let p = a.create("t", pod("p")).unwrap();
    a.bind("sched", "default", "p", "node-0").unwrap();
    a.set_now(1_000);
    let d = a
        .delete::<Pod>("t", "default", "p", &DeleteOptions::default())
        .unwrap();
    let Deleted::Terminating(t) = d else {
        panic!("a bound pod must terminate gracefully")
    };
    assert_eq!(
        crate::time::from_time(t.metadata.deletion_timestamp.as_ref().unwrap()),
        31_000
    );
    assert_eq!(a.pods.log().last().unwrap().ty, EventType::Modified);
    // The kubelet's final delete: grace 0 with a UID precondition.
    let wrong = DeleteOptions {
        grace_period_seconds: Some(0),
        precondition_uid: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(
        a.delete::<Pod>("k", "default", "p", &wrong)
            .unwrap_err()
            .reason,
        Reason::Conflict
    );
    let right = DeleteOptions {
        grace_period_seconds: Some(0),
        precondition_uid: p.metadata.uid.clone(),
        ..Default::default()
    };
    assert!(matches!(
        a.delete::<Pod>("k", "default", "p", &right).unwrap(),
        Deleted::Gone(_)
    ));
    assert_eq!(a.pods.log().last().unwrap().ty, EventType::Deleted);
}

#[test]
fn unscheduled_pods_are_deleted_at_once() {
    let mut a = api();
    a.create("t", pod("p")).unwrap();
    assert!(matches!(
        a.delete::<Pod>("t", "default", "p", &DeleteOptions::default())
            .unwrap(),
        Deleted::Gone(_)
    ));
}

#[test]
fn finalizers_block_removal_and_cannot_be_added_while_deleting() {
    let mut a = api();
    let mut s = sts("a", "v1");
    s.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    a.create("t", s).unwrap();
    let Deleted::Terminating(t) = a
        .delete::<StatefulSet>("t", "default", "a", &DeleteOptions::default())
        .unwrap()
    else {
        panic!("finalizer must block removal");
    };
    assert_eq!(
        t.metadata.generation,
        Some(2),
        "first deletionTimestamp bumps generation"
    );
    let mut add = (*t).clone();
    add.metadata
        .finalizers
        .as_mut()
        .unwrap()
        .push("more".into());
    assert_eq!(a.update("t", add).unwrap_err().reason, Reason::Invalid);
    let mut clear = (*t).clone();
    clear.metadata.finalizers = None;
    a.update("t", clear).unwrap();
    assert!(
        a.try_get::<StatefulSet>("default", "a").is_none(),
        "removing the last finalizer removes it"
    );
}

#[test]
fn propagation_policies_add_gc_finalizers() {
    let mut a = api();
    a.create("t", sts("f", "v1")).unwrap();
    a.create("t", sts("o", "v1")).unwrap();
    a.create("t", sts("b", "v1")).unwrap();
    let fg = DeleteOptions {
        propagation: Some(Propagation::Foreground),
        ..Default::default()
    };
    let or = DeleteOptions {
        propagation: Some(Propagation::Orphan),
        ..Default::default()
    };
    let Deleted::Terminating(f) = a.delete::<StatefulSet>("t", "default", "f", &fg).unwrap() else {
        panic!()
    };
    assert_eq!(
        f.metadata.finalizers,
        Some(vec![FINALIZER_FOREGROUND.to_string()])
    );
    let Deleted::Terminating(o) = a.delete::<StatefulSet>("t", "default", "o", &or).unwrap() else {
        panic!()
    };
    assert_eq!(
        o.metadata.finalizers,
        Some(vec![FINALIZER_ORPHAN.to_string()])
    );
    assert!(matches!(
        a.delete::<StatefulSet>("t", "default", "b", &DeleteOptions::default())
            .unwrap(),
        Deleted::Gone(_)
    ));
}

#[test]
fn apply_creates_then_identical_apply_is_a_no_op_and_a_changed_template_bumps_generation() {
    // Server-side apply with force (kubernetes.io "Server-Side Apply": conflicts and force).
    let mut a = api();
    let created = a.apply("lws", &sts("a", "v1"), true).unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let same = a.apply("lws", &sts("a", "v1"), true).unwrap();
    assert_eq!(rv(&*same), rv(&*created), "identical apply must not write");
    let changed = a.apply("lws", &sts("a", "v2"), true).unwrap();
    assert_eq!(changed.metadata.generation, Some(2));
    assert!(rv(&*changed) > rv(&*created));
}

#[test]
fn apply_removes_fields_the_manager_stopped_sending_but_keeps_other_managers_fields() {
    let mut a = api();
    let mut first = sts("a", "v1");
    first.metadata.labels = Some([("owned".to_string(), "1".to_string())].into());
    a.apply("lws", &first, true).unwrap();
    a.merge_patch::<StatefulSet>(
        "kubectl",
        "default",
        "a",
        &json!({"metadata": {"annotations": {"note": "x"}}}),
    )
    .unwrap();
    let after = a.apply("lws", &sts("a", "v1"), true).unwrap();
    assert_eq!(
        after.metadata.labels, None,
        "dropped from the intent, so removed"
    );
    assert_eq!(
        after.metadata.annotations.as_ref().unwrap()["note"],
        "x",
        "never owned by lws"
    );
}

#[test]
fn apply_without_force_conflicts_with_another_managers_field() {
    let mut a = api();
    a.apply("alice", &sts("a", "v1"), true).unwrap();
    let e = a.apply("bob", &sts("a", "v2"), false).unwrap_err();
    assert_eq!((e.code, e.reason), (409, Reason::Conflict));
    assert!(e.message.contains("alice"));
    let forced = a.apply("bob", &sts("a", "v2"), true).unwrap();
    assert_eq!(
        forced.spec.template.spec.as_ref().unwrap().containers[0]
            .image
            .as_deref(),
        Some("v2")
    );
}

#[test]
fn ports_applied_without_their_defaulted_protocol_are_shared_not_conflicting() {
    // Service and container ports are list maps keyed by port (containerPort) and protocol,
    // whose default (TCP) keys an item that leaves it out: a second manager applying the same
    // ports shares them; one changing a port's target conflicts on that field only.
    use k8s_openapi::api::core::v1::{ContainerPort, Service, ServicePort, ServiceSpec};
    let svc = |target: i32| Service {
        metadata: ObjectMeta {
            name: Some("front".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            ports: Some(vec![ServicePort {
                port: 80,
                target_port: Some(IntOrString::Int(target)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut a = api();
    a.apply("a", &svc(9090), false).unwrap();
    a.apply("b", &svc(9090), false).unwrap();
    let e = a.apply("b", &svc(9191), false).unwrap_err();
    assert_eq!(e.reason, Reason::Conflict, "{e}");
    assert!(
        e.message
            .contains(r#".spec.ports[port=80,protocol="TCP"].targetPort"#),
        "{e}"
    );
    let mut p = pod("web");
    p.spec.as_mut().unwrap().containers[0].ports = Some(vec![ContainerPort {
        container_port: 8080,
        ..Default::default()
    }]);
    a.apply("a", &p, false).unwrap();
    a.apply("b", &p, false).unwrap();
    // In a StatefulSet's template (a pod's spec is immutable): `a` names the port; `b` naming
    // it otherwise conflicts on that item's field only.
    let named = |name: &str| {
        let mut s = sts("web", "app:v1");
        let spec = s.spec.template.spec.as_mut().unwrap();
        spec.containers[0].ports = Some(vec![ContainerPort {
            container_port: 8080,
            name: Some(name.into()),
            ..Default::default()
        }]);
        s
    };
    a.apply("a", &named("http"), false).unwrap();
    a.apply("b", &named("http"), false).unwrap();
    let e = a.apply("b", &named("web"), false).unwrap_err();
    assert!(
        e.message
            .contains(r#"ports[containerPort=8080,protocol="TCP"].name"#),
        "{e}"
    );
}

#[test]
fn a_lease_lasts_more_than_zero_seconds_and_never_changes_hands_negatively() {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    let lease = |duration: i32, transitions: i32| Lease {
        metadata: ObjectMeta {
            name: Some("l".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            lease_duration_seconds: Some(duration),
            lease_transitions: Some(transitions),
            ..Default::default()
        }),
    };
    let mut a = api();
    let e = a.create("t", lease(-5, 0)).unwrap_err();
    assert!(
        e.message
            .contains("spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0"),
        "{e}"
    );
    let e = a.create("t", lease(15, -2)).unwrap_err();
    assert!(
        e.message
            .contains("spec.leaseTransitions: Invalid value: -2"),
        "{e}"
    );
    a.create("t", lease(15, 0)).unwrap();
}

#[test]
fn merge_patch_has_no_conflict_unless_it_carries_a_resource_version() {
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    a.merge_patch::<StatefulSet>("t", "default", "a", &json!({"spec": {"replicas": 2}}))
        .unwrap();
    let stale = json!({"metadata": {"resourceVersion": s.metadata.resource_version}, "spec": {"replicas": 3}});
    let e = a
        .merge_patch::<StatefulSet>("t", "default", "a", &stale)
        .unwrap_err();
    assert_eq!(e.reason, Reason::Conflict);
}

#[test]
fn admission_runs_mutating_before_validating_and_rejects_with_403() {
    let mut a = api();
    a.add_mutating_hook::<LeaderWorkerSet>("default", |l, _| {
        l.spec.replicas.get_or_insert(1);
        Ok(())
    });
    a.add_validating_hook::<LeaderWorkerSet>("validate", |l, _| {
        if l.spec.replicas == Some(1) {
            Ok(())
        } else {
            Err(Rejection::Denied("replicas must be 1".into()))
        }
    });
    let created = a.create("t", lws("a")).unwrap();
    assert_eq!(
        created.spec.replicas,
        Some(1),
        "validator saw the mutated object"
    );
    let mut bad = lws("b");
    bad.spec.replicas = Some(5);
    let e = a.create("t", bad).unwrap_err();
    assert_eq!((e.code, e.reason), (403, Reason::Forbidden));
    assert!(e
        .message
        .contains("admission webhook \"validate\" denied the request: replicas must be 1"));
}

#[test]
fn the_schema_refuses_before_webhooks_and_an_unreachable_webhook_is_a_500() {
    let mut a = ApiServer::new(1, FeatureGates::for_minor(29));
    a.add_schema_check::<LeaderWorkerSet>(|l| match l.spec.replicas {
        Some(r) if r > 3 => Err(format!("spec.replicas: Invalid value: {r}")),
        _ => Ok(()),
    });
    a.add_validating_hook::<LeaderWorkerSet>("validate", |l, _| match l.spec.replicas {
        Some(2) => Err(Rejection::Unreachable("connect: connection refused".into())),
        Some(r) if r > 1 => Err(format!("replicas {r}").into()),
        _ => Ok(()),
    });
    let with = |name: &str, r: i32| {
        let mut l = lws(name);
        l.spec.replicas = Some(r);
        l
    };
    // The schema answers first (422), whatever the webhook would say.
    let e = a.create("t", with("a", 5)).unwrap_err();
    assert_eq!((e.code, e.reason), (422, Reason::Invalid));
    assert!(!e.message.contains("admission webhook"), "{e}");
    let e = a.create("t", with("b", 2)).unwrap_err();
    assert_eq!((e.code, e.reason), (500, Reason::InternalError));
    assert!(
        e.message
            .starts_with("Internal error occurred: failed calling webhook \"validate\""),
        "{e}"
    );
    let e = a.create("t", with("c", 3)).unwrap_err();
    assert_eq!(e.code, 403, "{e}");
    assert!(a.create("t", with("d", 1)).is_ok());
}

#[test]
fn statefulset_max_unavailable_zero_is_rejected_when_the_gate_is_on() {
    // LWS #776: a copied maxUnavailable of 0 fails StatefulSet validation.
    let mut a = ApiServer::new(1, FeatureGates::for_minor(35));
    let mut s = sts("a", "v1");
    s.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(
            k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy {
                max_unavailable: Some(
                    k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0),
                ),
                partition: None,
            },
        ),
    });
    assert_eq!(a.create("t", s).unwrap_err().reason, Reason::Invalid);
}

#[test]
fn watch_log_is_in_resource_version_order_and_deleted_carries_last_state() {
    let mut a = api();
    a.create("t", pod("p")).unwrap();
    a.merge_patch::<Pod>(
        "t",
        "default",
        "p",
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .unwrap();
    a.delete::<Pod>("t", "default", "p", &DeleteOptions::default())
        .unwrap();
    let log = a.pods.log();
    let types: Vec<EventType> = log.iter().map(|e| e.ty).collect();
    assert_eq!(
        types,
        [EventType::Added, EventType::Modified, EventType::Deleted]
    );
    let rvs: Vec<u64> = log.iter().map(|e| e.rv).collect();
    assert!(rvs.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(log[2].obj.metadata.labels.as_ref().unwrap()["a"], "b");
}

#[test]
fn injected_errors_fail_the_next_matching_call_only() {
    let mut a = api();
    a.inject_error(InjectedError {
        actor: Some("ctl".into()),
        verb: Some("create".into()),
        kind: Some(KindId::Pod),
        error: ApiError::new(Reason::InternalError, "boom"),
    });
    assert!(a.create("other", pod("x")).is_ok());
    assert_eq!(a.create("ctl", pod("y")).unwrap_err().code, 500);
    assert!(a.create("ctl", pod("y")).is_ok());
}

#[test]
fn a_pod_spec_is_immutable_but_for_images_deadlines_and_added_tolerations() {
    // ValidatePodUpdate (kubernetes pkg/apis/core/validation/validation.go).
    let mut a = api();
    let p = a.create("t", pod("p")).unwrap();
    let mut image = (*p).clone();
    image.spec.as_mut().unwrap().containers[0].image = Some("app:v2".into());
    let p = a.update("t", image).unwrap();
    let mut tolerate = (*p).clone();
    let spec = tolerate.spec.as_mut().unwrap();
    spec.active_deadline_seconds = Some(60);
    // Added to the admission plugin's two: allowed.
    spec.tolerations
        .get_or_insert_with(Vec::new)
        .push(toleration("", "Exists", "", ""));
    let p = a.update("t", tolerate).unwrap();
    let edits: [fn(&mut PodSpec); 4] = [
        |s| s.restart_policy = Some("Never".into()),
        |s| s.containers[0].args = Some(vec!["--x".into()]),
        |s| {
            s.containers.push(Container {
                name: "d".into(),
                image: Some("app:v1".into()),
                ..Default::default()
            })
        },
        |s| s.tolerations = None,
    ];
    for edit in edits {
        let mut u = (*p).clone();
        edit(u.spec.as_mut().unwrap());
        let e = a.update("t", u).unwrap_err();
        assert_eq!((e.code, e.reason), (422, Reason::Invalid));
        assert!(
            e.to_string()
                .contains("pod updates may not change fields other than"),
            "{e}"
        );
    }
}

#[test]
fn containers_need_a_dns_label_name_unique_across_lists_and_an_image() {
    // validateContainers / validateInitContainers (kubernetes
    // pkg/apis/core/validation/validation.go), for pods and StatefulSet templates alike.
    let mut a = api();
    type Edit = (fn(&mut PodSpec), &'static str);
    let edits: [Edit; 5] = [
        (|s| s.containers.clear(), "containers: Required value"),
        (
            |s| s.containers[0].name = String::new(),
            "containers[0].name: Required value",
        ),
        (
            |s| s.containers[0].name = "Bad Name!".into(),
            "containers[0].name: Invalid value: \"Bad Name!\"",
        ),
        (
            |s| s.containers[0].image = Some(String::new()),
            "containers[0].image: Required value",
        ),
        (
            |s| s.init_containers = Some(vec![s.containers[0].clone()]),
            "initContainers[0].name: Duplicate value: \"c\"",
        ),
    ];
    for (i, (edit, says)) in edits.into_iter().enumerate() {
        let mut p = pod(&format!("p{i}"));
        edit(p.spec.as_mut().unwrap());
        let e = a.create("t", p).unwrap_err();
        assert_eq!((e.code, e.reason), (422, Reason::Invalid), "{e}");
        assert!(
            e.to_string().contains(&format!("spec.{says}")),
            "{says}: {e}"
        );
        let mut s = sts(&format!("s{i}"), "v1");
        edit(s.spec.template.spec.as_mut().unwrap());
        let e = a.create("t", s).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("spec.template.spec.{says}")),
            "{says}: {e}"
        );
    }
    assert!(a.create("t", pod("fine")).is_ok());
}

#[test]
fn a_statefulset_update_may_not_change_its_service_name_or_pod_management_policy() {
    // ValidateStatefulSetUpdate (kubernetes pkg/apis/apps/validation/validation.go).
    let mut a = api();
    let s = a.create("t", sts("a", "v1")).unwrap();
    let mut ok = (*s).clone();
    ok.spec.replicas = Some(3);
    ok.spec.template.spec.as_mut().unwrap().containers[0].image = Some("v2".into());
    let s = a.update("t", ok).unwrap();
    let edits: [fn(&mut StatefulSet); 2] = [
        |s| s.spec.service_name = Some("other".into()),
        |s| s.spec.pod_management_policy = Some("Parallel".into()),
    ];
    for edit in edits {
        let mut u = (*s).clone();
        edit(&mut u);
        let e = a.update("t", u).unwrap_err();
        assert_eq!((e.code, e.reason), (422, Reason::Invalid), "{e}");
        assert!(
            e.to_string()
                .contains("updates to statefulset spec for fields other than"),
            "{e}"
        );
    }
}

#[test]
fn a_merge_patch_cannot_change_the_kind_or_version_of_what_it_patches() {
    let mut a = api();
    a.create("t", lws("l")).unwrap();
    let before = a.get::<LeaderWorkerSet>("default", "l").unwrap();
    for patch in [
        serde_json::json!({"apiVersion": "nothing"}),
        serde_json::json!({"kind": "Pod"}),
    ] {
        let e = a
            .merge_patch::<LeaderWorkerSet>("t", "default", "l", &patch)
            .unwrap_err();
        assert_eq!((e.code, e.reason), (422, Reason::Invalid), "{e}");
    }
    assert_eq!(a.get::<LeaderWorkerSet>("default", "l").unwrap(), before);
    let e = a
        .merge_patch::<Pod>("t", "default", "p", &serde_json::json!({"kind": "Node"}))
        .unwrap_err();
    assert_eq!(e.code, 404, "{e}");
}

#[test]
fn owner_references_name_their_owner_fully_and_one_controller_at_most() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    let owner = |uid: &str, controller: bool| OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: "s".into(),
        uid: uid.into(),
        controller: Some(controller),
        ..Default::default()
    };
    let mut a = api();
    let with = |name: &str, refs: Vec<OwnerReference>| {
        let mut p = pod(name);
        p.metadata.owner_references = Some(refs);
        p
    };
    let e = a
        .create("t", with("a", vec![owner("", false)]))
        .unwrap_err();
    assert!(e.to_string().contains("ownerReferences[0].uid"), "{e}");
    let two = vec![owner("u1", true), owner("u2", true)];
    let e = a.create("t", with("b", two)).unwrap_err();
    assert!(e.to_string().contains("only one reference"), "{e}");
    let p = a.create("t", with("c", vec![owner("u1", true)])).unwrap();
    let mut bad = (*p).clone();
    bad.metadata.owner_references = Some(vec![OwnerReference::default()]);
    assert_eq!(a.update("t", bad).unwrap_err().reason, Reason::Invalid);
}

#[test]
fn an_update_s_uid_is_a_precondition_and_a_patch_may_not_change_it() {
    // defaultUpdatedObjectInfo.Preconditions (apiserver rest/update.go): 409 on a PUT;
    // ValidateObjectMetaUpdate: metadata.uid is immutable, 422 on a patch.
    let mut a = api();
    let p = a.create("t", pod("p")).unwrap();
    let uid = p.metadata.uid.clone().unwrap();
    let mut same = (*p).clone();
    same.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
    let p = a.update("t", same).unwrap();
    let mut other = (*p).clone();
    other.metadata.uid = Some("not-the-uid".into());
    other.metadata.labels = None;
    let e = a.update("t", other).unwrap_err();
    assert_eq!((e.code, e.reason), (409, Reason::Conflict));
    let want =
        format!("Precondition failed: UID in precondition: not-the-uid, UID in object meta: {uid}");
    assert!(e.to_string().contains(&want), "{e}");
    let patch = serde_json::json!({"metadata": {"uid": "x"}});
    let e = a
        .merge_patch::<Pod>("t", "default", "p", &patch)
        .unwrap_err();
    assert_eq!((e.code, e.reason), (422, Reason::Invalid));
    assert!(
        e.to_string()
            .contains("metadata.uid: Invalid value: \"x\": field is immutable"),
        "{e}"
    );
    let same_uid = serde_json::json!({"metadata": {"uid": uid, "labels": {"c": "d"}}});
    a.merge_patch::<Pod>("t", "default", "p", &same_uid)
        .unwrap();
    assert_eq!(
        a.get::<Pod>("default", "p")
            .unwrap()
            .metadata
            .uid
            .as_deref(),
        Some(uid.as_str())
    );
}

#[test]
fn a_statefulset_status_write_is_validated() {
    // ValidateStatefulSetStatus (kubernetes pkg/apis/apps/validation/validation.go).
    let mut a = api();
    a.create("t", sts("s", "app:v1")).unwrap();
    let status = |s: serde_json::Value| serde_json::json!({"status": s});
    let ok = status(
        serde_json::json!({"replicas": 2, "readyReplicas": 2, "availableReplicas": 1, "collisionCount": 2}),
    );
    a.merge_patch_status::<StatefulSet>("t", "default", "s", &ok)
        .unwrap();
    let cases = [
        (serde_json::json!({"readyReplicas": -5}), "status.readyReplicas: Invalid value: -5: must be greater than or equal to 0"),
        (serde_json::json!({"readyReplicas": 3}), "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas"),
        (serde_json::json!({"availableReplicas": 2, "readyReplicas": 1}), "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas"),
        (serde_json::json!({"observedGeneration": -1}), "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0"),
        (serde_json::json!({"collisionCount": 1}), "status.collisionCount: Invalid value: 1: cannot be decremented"),
    ];
    for (s, want) in cases {
        let e = a
            .merge_patch_status::<StatefulSet>("t", "default", "s", &status(s))
            .unwrap_err();
        assert_eq!((e.code, e.reason), (422, Reason::Invalid));
        assert!(e.to_string().contains(want), "{e}");
    }
    let st = a
        .get::<StatefulSet>("default", "s")
        .unwrap()
        .status
        .clone()
        .unwrap();
    assert_eq!(
        (st.replicas, st.ready_replicas, st.available_replicas),
        (2, Some(2), Some(1))
    );
}

/// Empty metadata lists and maps are stored as absent (protobuf in etcd; `omitempty` in
/// apimachinery's `ObjectMeta`): the garbage collector's orphaning strips the last owner
/// reference and no `ownerReferences: []` is left, and such an update is no write at all.
#[test]
fn empty_metadata_lists_and_maps_are_stored_absent() {
    let mut api = api();
    let mut p = pod("p");
    p.metadata.owner_references = Some(vec![]);
    p.metadata.finalizers = Some(vec![]);
    p.metadata.labels = Some(Default::default());
    p.metadata.annotations = Some(Default::default());
    let created = api.create("t", p).unwrap();
    let m = &created.metadata;
    assert_eq!(
        (
            &m.owner_references,
            &m.finalizers,
            &m.labels,
            &m.annotations
        ),
        (&None, &None, &None, &None)
    );
    let mut again = (*created).clone();
    again.metadata.owner_references = Some(vec![]);
    let updated = api.update("t", again).unwrap();
    assert_eq!(rv(&*updated), rv(&*created), "no write");
    let json = serde_json::to_value(&*updated).unwrap();
    assert!(json["metadata"].get("ownerReferences").is_none(), "{json}");
}

#[test]
fn a_scale_skips_the_webhooks_but_not_the_schema_or_the_limit_checks() {
    let mut a = api();
    a.add_mutating_hook::<LeaderWorkerSet>("default", |l, _| {
        l.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(
                "defaulted-at".into(),
                l.spec.replicas.unwrap_or(0).to_string(),
            );
        Ok(())
    });
    a.add_schema_check::<LeaderWorkerSet>(|l| match l.spec.replicas {
        Some(r) if r > 8 => Err(format!("spec.replicas: Invalid value: {r}")),
        _ => Ok(()),
    });
    a.add_validating_hook::<LeaderWorkerSet>("validate", |l, _| match l.spec.replicas {
        Some(r) if r != 1 => Err(Rejection::Denied(format!("replicas {r}"))),
        _ => Ok(()),
    });
    a.add_limit_hook::<LeaderWorkerSet>("limits", |l, _| match l.spec.replicas {
        Some(r) if r > 5 => Err(Rejection::Denied(format!("{r} is past the limit"))),
        _ => Ok(()),
    });
    let mut one = lws("a");
    one.spec.replicas = Some(1);
    a.create("t", one).unwrap();
    let patch = json!({"spec": {"replicas": 3}});
    let e = a
        .merge_patch::<LeaderWorkerSet>("t", "default", "a", &patch)
        .unwrap_err();
    assert!(e.message.contains("\"validate\" denied"), "{e}");
    let scaled = a
        .scale::<LeaderWorkerSet>("t", "default", "a", 3, None)
        .unwrap();
    assert_eq!(scaled.spec.replicas, Some(3));
    let label = scaled
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("defaulted-at"));
    assert_eq!(
        label.map(String::as_str),
        Some("1"),
        "the mutating webhook ran"
    );
    let e = a
        .scale::<LeaderWorkerSet>("t", "default", "a", 6, None)
        .unwrap_err();
    assert!(
        e.message
            .contains("\"limits\" denied the request: 6 is past"),
        "{e}"
    );
    let e = a
        .scale::<LeaderWorkerSet>("t", "default", "a", 9, None)
        .unwrap_err();
    assert_eq!(e.code, 422, "{e}");
    let stale = a.scale::<LeaderWorkerSet>("t", "default", "a", 2, Some("1"));
    assert_eq!(stale.unwrap_err().code, 409);
}

type PodEdit = (fn(&mut PodSpec), &'static str);

/// One broken pod spec each, with the error ValidatePodSpec gives it.
fn pod_spec_edits() -> Vec<PodEdit> {
    use k8s_openapi::api::core::v1::{
        ContainerPort, EnvVar, HTTPGetAction, Probe, ResourceRequirements,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    vec![
        (
            |s| {
                s.containers[0].ports = Some(vec![ContainerPort {
                    container_port: 70000,
                    ..Default::default()
                }])
            },
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            |s| {
                s.containers[0].ports = Some(vec![ContainerPort {
                    container_port: 80,
                    name: Some("HTTP".into()),
                    protocol: Some("tcp".into()),
                    ..Default::default()
                }])
            },
            r#"spec.containers[0].ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP""#,
        ),
        (
            |s| s.containers[0].image_pull_policy = Some("Sometimes".into()),
            r#"spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never""#,
        ),
        (
            |s| {
                s.containers[0].env = Some(vec![EnvVar {
                    name: "1BAD".into(),
                    ..Default::default()
                }])
            },
            r#"spec.containers[0].env[0].name: Invalid value: "1BAD": a valid environment variable name must consist of alphabetic characters"#,
        ),
        (
            |s| {
                s.containers[0].resources = Some(ResourceRequirements {
                    limits: Some([("cpu".to_string(), Quantity("1".into()))].into()),
                    requests: Some([("cpu".to_string(), Quantity("2".into()))].into()),
                    ..Default::default()
                })
            },
            r#"spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1"#,
        ),
        (
            |s| {
                s.containers[0].resources = Some(ResourceRequirements {
                    limits: Some([("nvidia.com/gpu".to_string(), Quantity("1.5".into()))].into()),
                    ..Default::default()
                })
            },
            r#"spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "1500m": must be an integer"#,
        ),
        (
            |s| {
                s.containers[0].readiness_probe = Some(Probe {
                    http_get: Some(HTTPGetAction {
                        port: IntOrString::Int(8080),
                        ..Default::default()
                    }),
                    initial_delay_seconds: Some(-3),
                    ..Default::default()
                })
            },
            "spec.containers[0].readinessProbe.initialDelaySeconds: Invalid value: -3: must be greater than or equal to 0",
        ),
        (
            |s| s.containers[0].liveness_probe = Some(Probe::default()),
            "spec.containers[0].livenessProbe: Required value: must specify a handler type",
        ),
        (
            |s| s.restart_policy = Some("Sometimes".into()),
            r#"spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never""#,
        ),
    ]
}

/// `ValidateTolerations`' errors, one edit each.
fn toleration_edits() -> Vec<PodEdit> {
    vec![
        (
            |s| s.tolerations = Some(vec![toleration("gpu", "Bogus", "", "")]),
            r#"spec.tolerations[0].operator: Unsupported value: "Bogus": supported values: "Equal", "Exists""#,
        ),
        (
            |s| s.tolerations = Some(vec![toleration("", "Equal", "", "")]),
            r#"spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty"#,
        ),
        (
            |s| s.tolerations = Some(vec![toleration("gpu", "Exists", "", "NoRun")]),
            r#"spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute""#,
        ),
        (
            |s| {
                let mut t = toleration("gpu", "Equal", "a", "NoSchedule");
                t.toleration_seconds = Some(5);
                s.tolerations = Some(vec![t]);
            },
            r#"spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when `tolerationSeconds` is set"#,
        ),
        (
            |s| s.tolerations = Some(vec![toleration("gpu", "Equal", "-x", "")]),
            r#"spec.tolerations[0].operator: Invalid value: "-x": a valid label must be"#,
        ),
    ]
}

fn toleration(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Toleration {
        key: some(key),
        operator: some(operator),
        value: some(value),
        effect: some(effect),
        toleration_seconds: None,
    }
}

#[test]
fn a_pod_spec_is_validated_as_validate_pod_spec_does() {
    // kubernetes pkg/apis/core/validation/validation.go (ValidatePodSpec and its helpers): one
    // error each, the field path and apimachinery's words.
    use k8s_openapi::api::core::v1::EnvVar;
    let mut a = api();
    for (i, (edit, says)) in pod_spec_edits()
        .into_iter()
        .chain(toleration_edits())
        .enumerate()
    {
        let mut p = pod(&format!("p{i}"));
        edit(p.spec.as_mut().unwrap());
        let e = a.create("t", p).unwrap_err();
        assert_eq!((e.code, e.reason), (422, Reason::Invalid), "{e}");
        assert!(e.to_string().contains(says), "{says}\n{e}");
    }
    // Two errors: listed in brackets, as ToAggregate lists them.
    let mut p = pod("two");
    let s = p.spec.as_mut().unwrap();
    s.restart_policy = Some("x".into());
    s.dns_policy = Some("y".into());
    let e = a.create("t", p).unwrap_err();
    assert!(
        e.to_string()
            .contains(r#"is invalid: [spec.restartPolicy: "#),
        "{e}"
    );
    // Relaxed env names from 1.32 (RelaxedEnvironmentVariableValidation beta).
    let mut relaxed = ApiServer::new(1, FeatureGates::for_minor(32));
    let mut p = pod("env");
    p.spec.as_mut().unwrap().containers[0].env = Some(vec![EnvVar {
        name: "1 OK:here".into(),
        ..Default::default()
    }]);
    assert!(relaxed.create("t", p.clone()).is_ok());
    assert!(a.create("t", p).is_err());
}

#[test]
fn a_statefulset_template_must_restart_always_and_a_lws_quantity_match_the_crd_pattern() {
    use k8s_openapi::api::core::v1::ResourceRequirements;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let mut a = api();
    let mut s = sts("s", "v1");
    s.spec.template.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    let e = a.create("t", s).unwrap_err();
    assert!(
        e.to_string().contains(r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#),
        "{e}"
    );
    let mut l = lws("l");
    l.spec.leader_worker_template.worker_template.spec = Some(PodSpec {
        containers: vec![Container {
            name: "w".into(),
            image: Some("w".into()),
            resources: Some(ResourceRequirements {
                requests: Some([("memory".to_string(), Quantity("1 Gi".into()))].into()),
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    });
    let e = a.create("t", l).unwrap_err();
    assert!(
        e.to_string().contains(r#"spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests.memory: Invalid value: "1 Gi": spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests.memory in body should match '^(\+|-)?"#),
        "{e}"
    );
}

/// What defaulting fills in before validation upstream (an empty enum, a zero
/// successThreshold) and what `SetDefaults_ResourceList` rounds (quantities to milli scale)
/// is accepted; found false refusals of an audit.
#[test]
fn a_pod_spec_valid_after_defaulting_is_accepted() {
    use k8s_openapi::api::core::v1::{ExecAction, Probe, ResourceRequirements};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let q = |s: &str| Quantity(s.into());
    let mut a = api();
    let mut p = pod("defaults");
    let c = &mut p.spec.as_mut().unwrap().containers[0];
    c.image_pull_policy = Some(String::new());
    c.termination_message_policy = Some(String::new());
    c.liveness_probe = Some(Probe {
        exec: Some(ExecAction {
            command: Some(vec!["true".into()]),
        }),
        success_threshold: Some(0),
        ..Default::default()
    });
    c.resources = Some(ResourceRequirements {
        limits: Some(
            [
                ("cpu".to_string(), q("0.7")),
                ("memory".to_string(), q(" 1Gi")),
            ]
            .into(),
        ),
        requests: Some([("cpu".to_string(), q("700m"))].into()),
        ..Default::default()
    });
    p.spec.as_mut().unwrap().restart_policy = Some(String::new());
    a.create("t", p).unwrap();
    // Several errors: one cause each, typed as field.Error's type.
    let mut p = pod("causes");
    let s = p.spec.as_mut().unwrap();
    s.containers[0].name = "my.app".into();
    s.dns_policy = Some("None".into());
    let e = a.create("t", p).unwrap_err();
    let got: Vec<(&str, &str)> = e
        .causes
        .iter()
        .map(|c| (c.reason, c.field.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("FieldValueInvalid", "spec.containers[0].name"),
            ("FieldValueRequired", "spec.dnsConfig")
        ],
        "{e}"
    );
    assert!(
        e.to_string().contains(r#""my.app": must not contain dots"#),
        "{e}"
    );
}

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

fn service(name: &str, spec: serde_json::Value) -> k8s_openapi::api::core::v1::Service {
    serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": "default"}, "spec": spec}),
    )
    .unwrap()
}

fn node_ports(svc: &k8s_openapi::api::core::v1::Service) -> Vec<i32> {
    let ports = svc.spec.as_ref().and_then(|s| s.ports.as_ref());
    ports
        .into_iter()
        .flatten()
        .filter_map(|p| p.node_port)
        .collect()
}

fn service_error(api: &mut ApiServer, svc: k8s_openapi::api::core::v1::Service) -> String {
    let e = api.create("t", svc).unwrap_err();
    assert_eq!(e.code, 422, "{e}");
    e.message
}

/// `SetDefaults_Service` and the ClusterIP / NodePort allocators (kubernetes
/// `pkg/apis/core/v1/defaults.go`, `pkg/registry/core/service/storage/alloc.go` at 000f2605):
/// the lowest free address and node ports, a headless Service keeps `None`, an update that
/// leaves the address out keeps it and one that changes it is refused.
#[test]
fn services_are_defaulted_and_get_addresses_and_node_ports() {
    let mut api = api();
    let web = api
        .create(
            "t",
            service(
                "web",
                json!({"ports": [{"port": 80}], "selector": {"app": "w"}}),
            ),
        )
        .unwrap();
    let spec = web.spec.as_ref().unwrap();
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(spec.session_affinity.as_deref(), Some("None"));
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.2"));
    assert_eq!(spec.cluster_ips, Some(vec!["10.96.0.2".to_string()]));
    assert_eq!(spec.ip_family_policy.as_deref(), Some("SingleStack"));
    let port = &spec.ports.as_ref().unwrap()[0];
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    assert_eq!(port.target_port, Some(IntOrString::Int(80)));
    // A named node port is reserved before the others get the lowest free ones.
    let np = json!({"type": "NodePort", "ports": [{"port": 80, "name": "a"}, {"port": 443, "name": "b", "nodePort": 30000}]});
    let np = api.create("t", service("np", np)).unwrap();
    assert_eq!(node_ports(&np), [30001, 30000]);
    let clash = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30001}]});
    let e = service_error(&mut api, service("clash", clash));
    assert!(
        e.ends_with(
            "spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated"
        ),
        "{e}"
    );
    let low = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]});
    let e = service_error(&mut api, service("low", low));
    assert!(e.ends_with("spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"), "{e}");
    assert_eq!(
        np.spec.as_ref().unwrap().cluster_ip.as_deref(),
        Some("10.96.0.3")
    );
    let headless = json!({"clusterIP": "None", "selector": {"app": "h"}});
    let h = api.create("t", service("h", headless)).unwrap();
    assert_eq!(
        h.spec.as_ref().unwrap().cluster_ips,
        Some(vec!["None".to_string()])
    );
    // A replace that leaves the allocated values out keeps them.
    let mut again = service(
        "np",
        json!({"type": "NodePort", "ports": [{"port": 80, "name": "a"}, {"port": 443, "name": "b"}]}),
    );
    again.metadata.resource_version = np.metadata.resource_version.clone();
    let kept = api.update("t", again).unwrap();
    assert_eq!(
        kept.spec.as_ref().unwrap().cluster_ip.as_deref(),
        Some("10.96.0.3")
    );
    let kept_ports = node_ports(&kept);
    assert_eq!(kept_ports, [30001, 30000]);
    let mut moved = (*kept).clone();
    moved.spec.as_mut().unwrap().cluster_ip = Some("10.96.0.9".into());
    moved.spec.as_mut().unwrap().cluster_ips = Some(vec!["10.96.0.9".into()]);
    let e = api.update("t", moved).unwrap_err();
    assert!(
        e.message.ends_with(
            r#"spec.clusterIPs[0]: Invalid value: []string{"10.96.0.9"}: may not change once set"#
        ),
        "{e}"
    );
    // A new port number under the same name keeps its node port (`patchAllocatedValues`
    // matches by name); a switch to ClusterIP drops the node ports the body kept
    // (`dropTypeDependentFields`).
    let mut renumbered = (*kept).clone();
    let ports = renumbered.spec.as_mut().unwrap().ports.as_mut().unwrap();
    ports[0].port = 8080;
    ports[0].node_port = None;
    let renumbered = api.update("t", renumbered).unwrap();
    let first = &renumbered.spec.as_ref().unwrap().ports.as_ref().unwrap()[0];
    assert_eq!((first.port, first.node_port), (8080, Some(30001)));
    let mut cluster_ip = (*renumbered).clone();
    cluster_ip.spec.as_mut().unwrap().type_ = Some("ClusterIP".into());
    let cluster_ip = api.update("t", cluster_ip).unwrap();
    let ports = cluster_ip.spec.as_ref().unwrap().ports.iter().flatten();
    assert!(
        ports.clone().all(|p| p.node_port.is_none()),
        "{:?}",
        ports.collect::<Vec<_>>()
    );
}

/// A cluster IP the body names: one in use or outside the range is the allocator's 422, and
/// `None` is only for a ClusterIP Service.
#[test]
fn a_named_cluster_ip_must_be_free_and_in_range() {
    let mut api = api();
    let web = json!({"ports": [{"port": 80}], "selector": {"app": "w"}});
    api.create("t", service("web", web)).unwrap();
    let headless_np = json!({"type": "NodePort", "clusterIP": "None", "ports": [{"port": 80}]});
    let e = service_error(&mut api, service("hnp", headless_np));
    assert!(e.contains(r#"spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services"#), "{e}");
    let taken = json!({"clusterIP": "10.96.0.2", "ports": [{"port": 80}]});
    let e = service_error(&mut api, service("taken", taken));
    assert!(e.ends_with(r#"spec.clusterIPs: Invalid value: []string{"10.96.0.2"}: failed to allocate IP 10.96.0.2: provided IP is already allocated"#), "{e}");
    let outside = json!({"clusterIP": "192.168.0.1", "ports": [{"port": 80}]});
    let e = service_error(&mut api, service("outside", outside));
    assert!(e.ends_with("the provided IP (192.168.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/16"), "{e}");
}

/// `ValidateService` / `validateServicePort`: every error listed, in the apiserver's words.
#[test]
fn service_ports_are_validated() {
    let mut api = api();
    let bad = json!({"ports": [{"port": 70000}, {"port": 80, "protocol": "FOO", "name": "Web"}, {"port": 80, "name": "w2", "protocol": "FOO", "targetPort": "no_such--"}]});
    let e = service_error(&mut api, service("bad", bad));
    for want in [
        "spec.ports[0].name: Required value",
        "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        r#"spec.ports[1].name: Invalid value: "Web": a lowercase RFC 1123 label"#,
        r#"spec.ports[1].protocol: Unsupported value: "FOO": supported values: "SCTP", "TCP", "UDP""#,
        r#"spec.ports[2].targetPort: Invalid value: "no_such--": must contain only alpha-numeric characters"#,
        r#"spec.ports[2]: Duplicate value: core.ServicePort{Name:"", Protocol:"FOO", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}"#,
    ] {
        assert!(e.contains(want), "missing {want:?} in {e}");
    }
    let e = service_error(
        &mut api,
        service("noports", json!({"selector": {"app": "x"}})),
    );
    assert!(e.ends_with("spec.ports: Required value"), "{e}");
    let np = json!({"ports": [{"port": 80, "nodePort": 30080}]});
    let e = service_error(&mut api, service("np", np));
    assert!(
        e.ends_with(
            "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
        ),
        "{e}"
    );
    let e = service_error(
        &mut api,
        service("t", json!({"type": "Magic", "ports": [{"port": 1}]})),
    );
    assert!(
        e.contains(r#"spec.type: Unsupported value: "Magic""#),
        "{e}"
    );
    let e = service_error(&mut api, service("x", json!({"type": "ExternalName"})));
    assert!(e.ends_with("spec.externalName: Required value"), "{e}");
}

/// eviction.go: a pod that is not Ready counts for no budget; `AlwaysAllow` evicts it outright,
/// `IfHealthyBudget` (the default) only while the budget is met; a Ready pod waits for a
/// disruption the budget allows. A refusal names the budget in a `DisruptionBudget` cause.
#[test]
fn an_unready_pod_is_evicted_as_the_budgets_unhealthy_pod_policy_says() {
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let run = |policy: Option<&str>, min_available: i32| {
        let mut a = api();
        for (name, ready) in [("ready", "True"), ("unready", "False")] {
            let mut p = pod(name);
            p.metadata.labels = Some([("app".to_string(), "a".to_string())].into());
            a.create("t", p).unwrap();
            a.bind("sched", "default", name, "node-0").unwrap();
            let mut p = (*a.get::<Pod>("default", name).unwrap()).clone();
            p.status = Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            });
            a.update_status("kubelet", p).unwrap();
        }
        let pdb = PodDisruptionBudget {
            metadata: meta("b"),
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(IntOrString::Int(min_available)),
                selector: Some(LabelSelector {
                    match_labels: Some([("app".to_string(), "a".to_string())].into()),
                    ..Default::default()
                }),
                unhealthy_pod_eviction_policy: policy.map(str::to_string),
                ..Default::default()
            }),
            status: None,
        };
        a.create("t", pdb).unwrap();
        let opts = DeleteOptions::default();
        let ready = a.evict("drain", "default", "ready", &opts).map(|_| ());
        let unready = a.evict("drain", "default", "unready", &opts).map(|_| ());
        (ready, unready)
    };
    // One healthy of two desired: the budget is not met.
    let (ready, unready) = run(None, 2);
    let e = ready.unwrap_err();
    assert_eq!(e.code, 429);
    assert_eq!(e.causes[0].reason, "DisruptionBudget");
    assert_eq!(
        e.causes[0].message,
        "The disruption budget b needs 2 healthy pods and has 1 currently"
    );
    assert_eq!(unready.unwrap_err().code, 429, "IfHealthyBudget");
    let (ready, unready) = run(Some("AlwaysAllow"), 2);
    assert_eq!(ready.unwrap_err().code, 429);
    assert!(unready.is_ok(), "AlwaysAllow: {unready:?}");
    // One healthy of one desired: the unready pod goes, the ready one would break the budget.
    let (ready, unready) = run(Some("IfHealthyBudget"), 1);
    assert_eq!(ready.unwrap_err().code, 429);
    assert!(unready.is_ok(), "IfHealthyBudget, budget met: {unready:?}");
}

/// PDB strategy `PrepareForCreate`: a new budget's status is the zero value, whose four counts
/// are always written (not `omitempty`), whatever the client sent.
#[test]
fn a_new_budget_reads_zero_of_zero() {
    use k8s_openapi::api::policy::v1::{
        PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
    };
    let mut a = api();
    let pdb = PodDisruptionBudget {
        metadata: meta("b"),
        spec: Some(PodDisruptionBudgetSpec::default()),
        status: Some(PodDisruptionBudgetStatus {
            current_healthy: Some(7),
            ..Default::default()
        }),
    };
    let stored = a.create("t", pdb).unwrap();
    let status = serde_json::to_value(&stored.status).unwrap();
    assert_eq!(
        status,
        json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0})
    );
}

/// `ValidateStatefulSetSpec` validates its selector as `ValidateLabelSelector` does, as a
/// PodDisruptionBudget's is.
#[test]
fn a_statefulset_selector_is_validated_strictly() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    let mut a = api();
    let mut s = sts("s", "app:v1");
    s.spec.selector.match_expressions = Some(vec![LabelSelectorRequirement {
        key: "app".into(),
        operator: "Exists".into(),
        values: Some(vec!["x".into()]),
    }]);
    let e = a.create("t", s).unwrap_err();
    assert_eq!(e.code, 422, "{e}");
    assert!(
        e.to_string().contains("spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        "{e}"
    );
}

/// Pod `name` created, bound to node-0 and Running, as the kubelet writes it.
fn running_pod(a: &mut ApiServer, name: &str) -> crate::api::Shared<Pod> {
    use k8s_openapi::api::core::v1::PodStatus;
    a.create("t", pod(name)).unwrap();
    a.bind("sched", "default", name, "node-0").unwrap();
    let mut p = (*a.get::<Pod>("default", name).unwrap()).clone();
    p.status = Some(PodStatus {
        phase: Some("Running".into()),
        ..Default::default()
    });
    a.update_status("kubelet", p).unwrap()
}

/// An evicted pod is marked `DisruptionTarget` before it is deleted (eviction.go
/// `addConditionAndDeletePod`); evicting it again while it terminates finds the condition
/// already there and writes nothing but the delete.
#[test]
fn eviction_marks_the_pod_a_disruption_target_once() {
    let mut a = api();
    running_pod(&mut a, "p");
    let opts = DeleteOptions {
        grace_period_seconds: Some(30),
        ..Default::default()
    };
    a.evict("drain", "default", "p", &opts).unwrap();
    let evicted = a.get::<Pod>("default", "p").unwrap();
    assert!(evicted.metadata.deletion_timestamp.is_some());
    let conditions = evicted.status.as_ref().unwrap().conditions.clone().unwrap();
    let c = conditions
        .iter()
        .find(|c| c.type_ == "DisruptionTarget")
        .expect("marked");
    assert_eq!(
        (c.status.as_str(), c.reason.as_deref(), c.message.as_deref()),
        (
            "True",
            Some("EvictionByEvictionAPI"),
            Some("Eviction API: evicting")
        )
    );
    let rv = evicted.metadata.resource_version.clone();
    // A precondition the pod does not meet refuses the eviction before anything is written.
    let stale = DeleteOptions {
        precondition_uid: Some("not-its-uid".into()),
        ..opts.clone()
    };
    let e = a.evict("drain", "default", "p", &stale).unwrap_err();
    assert_eq!(e.code, 409, "{e:?}");
    assert!(
        e.message
            .contains("the UID in the precondition (not-its-uid) does not match"),
        "{e:?}"
    );
    assert_eq!(
        a.get::<Pod>("default", "p")
            .unwrap()
            .metadata
            .resource_version,
        rv
    );
    a.evict("drain", "default", "p", &opts).unwrap();
    let again = a.get::<Pod>("default", "p").unwrap();
    assert_eq!(again.metadata.resource_version, rv, "no second write");
}

/// A resourceVersion precondition that holds when the eviction starts is moved past the
/// eviction's own condition write (eviction.go `addConditionAndDeletePod`): the pod is
/// deleted, not refused with a conflict.
#[test]
fn eviction_moves_a_met_resource_version_precondition_past_its_own_write() {
    let mut a = api();
    let running = running_pod(&mut a, "p");
    let opts = DeleteOptions {
        grace_period_seconds: Some(30),
        precondition_rv: running.metadata.resource_version.clone(),
        ..Default::default()
    };
    a.evict("drain", "default", "p", &opts).unwrap();
    let evicted = a.get::<Pod>("default", "p").unwrap();
    assert!(evicted.metadata.deletion_timestamp.is_some());
}
