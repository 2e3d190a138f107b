//! Upstream unit tests of LeaderWorkerSet v0.10.0, ported as table tests against the pure
//! functions of this port. Every test cites the Go test (and each case its line) it comes from
//! as `path@v0.10.0:LINE`. Expected values are upstream's; where the Rust model cannot carry a
//! case as written (hash strings, apply-configuration plumbing, private helpers), only the
//! representation of input or output is adapted, and a comment says how.
//!
//! Objects are built with `Lws`, a copy of `test/wrappers.LeaderWorkerSetWrapper`, and with
//! `serde_json::json!` for the expected Kubernetes objects. The few async functions exercised
//! (`rolling_update_parameters`, `new_revision`, and for finding Z07
//! `get_or_create_revision_if_non_exist`) run on `FakeApi`, which stands in for the fake
//! controller-runtime client of the Go tests: it lists and creates revisions and refuses every
//! other call; `block_on` polls once, since nothing in it ever suspends.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::lws_controller::{
    calculate_rolling_update_replicas, construct_leader_statefulset_apply_configuration,
    exclusive_condition_types, existing_updated_revision, get_or_create_revision_if_non_exist,
    get_updated_revision, rolling_update_parameters, set_condition,
};
use super::pod_controller::construct_worker_statefulset_apply_configuration;
use super::revision::{
    apply_revision, equal_revision, get_revision_key, new_revision, set_matches_revision,
};
use super::tpu::{
    add_tpu_variables, add_tpu_variables_sub_group, get_container_requesting_tpus,
    get_containers_requesting_tpus, pod_requests_tpus, LEADER_REQUESTS_TPUS_ANNOTATION_KEY,
    TPU_NAME, TPU_PROCESS_ADDRESSES, TPU_PROCESS_PORT_NAME, TPU_WORKER_HOSTNAMES, TPU_WORKER_ID,
};
use super::utils::{
    container_restarted, get_env_var_value_if_in_container, get_parent_name_and_ordinal,
    get_pvc_apply_configuration, sort_by_index, statefulset_ready,
};
use super::webhook::{default_lws, get_sub_group_index, set_exclusive_affinities, validate_lws};
use crate::api::{
    keys, LeaderWorkerSet, NetworkConfig, RollingUpdateConfiguration, RolloutStrategy,
    SubGroupPolicy,
};
use crate::client::{Client, Error, Propagation, Reason, Resource, Result};
use crate::k8s;
use crate::lws_controller::Ctx;
use crate::profile::Flags;

const NS: &str = "default";
const IMAGE: &str = "docker.io/nginxinc/nginx-unprivileged:1.27";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn from_json<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("test object decodes")
}

fn epoch() -> Time {
    Time(Timestamp::UNIX_EPOCH)
}

fn int(i: i32) -> IntOrString {
    IntOrString::Int(i)
}

fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.to_string())
}

fn map(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `wrappers.MakeWorkerPodSpec`.
fn worker_pod_spec_json() -> Value {
    json!({"containers": [{
        "name": "worker",
        "image": IMAGE,
        "ports": [{"containerPort": 8080, "protocol": "TCP"}]
    }]})
}

/// `wrappers.MakeLeaderPodSpec`.
fn leader_pod_spec_json() -> Value {
    json!({"containers": [{"name": "leader", "image": IMAGE}]})
}

fn worker_pod_spec() -> PodSpec {
    from_json(worker_pod_spec_json())
}

fn leader_pod_spec() -> PodSpec {
    from_json(leader_pod_spec_json())
}

/// `wrappers.MakeWorkerPodSpecWithVolume`; with `nil_image`,
/// `MakeWorkerPodSpecWithVolumeAndNilImage` (the volume's `Image: nil` spelled `"image": null`,
/// which decodes to the same Rust value: the Go case is about a semantically equal encoding).
fn worker_pod_spec_with_volume(nil_image: bool) -> PodSpec {
    let volume = if nil_image {
        json!({"name": "dshm", "image": null})
    } else {
        json!({"name": "dshm"})
    };
    from_json(json!({
        "containers": [{
            "name": "leader",
            "image": IMAGE,
            "ports": [{"containerPort": 8080, "protocol": "TCP"}]
        }],
        "volumes": [volume]
    }))
}

/// The `pvc1` spec of the volumeClaimTemplates cases.
fn pvc1_spec_json() -> Value {
    json!({
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "standard",
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": "1Gi"}, "limits": {"storage": "2Gi"}}
    })
}

fn retention_policy_json() -> Value {
    json!({"whenDeleted": "Retain", "whenScaled": "Delete"})
}

/// `.PersistentVolumeClaimRetentionPolicy(Retain, Delete).VolumeClaimTemplates([pvc1])`.
fn with_pvc1(l: &mut LeaderWorkerSet) {
    let t = &mut l.spec.leader_worker_template;
    t.persistent_volume_claim_retention_policy = Some(from_json(retention_policy_json()));
    t.volume_claim_templates = Some(vec![from_json(json!({
        "metadata": {"name": "pvc1"},
        "spec": pvc1_spec_json()
    }))]);
}

/// The `rollingUpdateConfiguration` of an LWS that has one.
fn ru(l: &mut LeaderWorkerSet) -> &mut RollingUpdateConfiguration {
    l.spec
        .rollout_strategy
        .as_mut()
        .and_then(|s| s.rolling_update_configuration.as_mut())
        .expect("rollingUpdateConfiguration is set")
}

fn condition(type_: &str, status: &str, observed_generation: i64) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        observed_generation: Some(observed_generation),
        last_transition_time: epoch(),
        reason: String::new(),
        message: String::new(),
    }
}

/// `test/wrappers.LeaderWorkerSetWrapper`, for the builders the ported tests use.
#[derive(Clone)]
struct Lws(LeaderWorkerSet);

impl Lws {
    /// `BuildBasicLeaderWorkerSet`. Go encodes a pod template's zero `ObjectMeta` as
    /// `"metadata":{}`; `Some(default)` keeps that encoding (TestGetUpdatedRevision rewrites it).
    fn basic(name: &str, ns: &str) -> Lws {
        let mut lws = LeaderWorkerSet::default();
        lws.metadata.name = Some(name.to_string());
        lws.metadata.namespace = Some(ns.to_string());
        lws.spec.leader_worker_template.worker_template.metadata = Some(ObjectMeta::default());
        Lws(lws)
    }

    /// `BuildLeaderWorkerSet`.
    fn build(ns: &str) -> Lws {
        Lws::basic("test-sample", ns)
            .replica(2)
            .restart_policy("RecreateGroupOnPodRestart")
            .size(2)
            .leader_template_spec(leader_pod_spec())
            .worker_template_spec(worker_pod_spec())
            .rollout(int(1), int(0), Some(0))
            .startup_policy("LeaderCreated")
            .subdomain_policy("Shared")
    }

    fn obj(self) -> LeaderWorkerSet {
        self.0
    }

    fn with(mut self, f: impl FnOnce(&mut LeaderWorkerSet)) -> Lws {
        f(&mut self.0);
        self
    }

    fn name(self, name: &str) -> Lws {
        self.with(|l| l.metadata.name = Some(name.to_string()))
    }

    fn replica(self, n: i32) -> Lws {
        self.with(|l| l.spec.replicas = Some(n))
    }

    fn size(self, n: i32) -> Lws {
        self.with(|l| l.spec.leader_worker_template.size = Some(n))
    }

    fn generation(self, g: i64) -> Lws {
        self.with(|l| l.metadata.generation = Some(g))
    }

    fn restart_policy(self, p: &str) -> Lws {
        self.with(|l| l.spec.leader_worker_template.restart_policy = p.to_string())
    }

    fn startup_policy(self, p: &str) -> Lws {
        self.with(|l| l.spec.startup_policy = p.to_string())
    }

    fn subdomain_policy(self, p: &str) -> Lws {
        self.with(|l| {
            l.spec.network_config = Some(NetworkConfig {
                subdomain_policy: Some(p.to_string()),
            })
        })
    }

    fn worker_template_spec(self, spec: PodSpec) -> Lws {
        self.with(|l| l.spec.leader_worker_template.worker_template.spec = Some(spec))
    }

    fn leader_template_spec(self, spec: PodSpec) -> Lws {
        self.with(|l| {
            let t = l
                .spec
                .leader_worker_template
                .leader_template
                .get_or_insert_with(|| PodTemplateSpec {
                    metadata: Some(ObjectMeta::default()),
                    spec: None,
                });
            t.spec = Some(spec);
        })
    }

    /// `RolloutStrategy(RollingUpdate, {MaxUnavailable, MaxSurge, Partition})`. Go's
    /// `IntOrString` fields are values (unset means 0), so both are always given here.
    fn rollout(self, max_unavailable: IntOrString, max_surge: IntOrString, p: Option<i32>) -> Lws {
        self.rollout_strategy(RolloutStrategy {
            type_: "RollingUpdate".to_string(),
            rolling_update_configuration: Some(RollingUpdateConfiguration {
                max_unavailable: Some(max_unavailable),
                max_surge: Some(max_surge),
                partition: p,
            }),
        })
    }

    fn rollout_strategy(self, s: RolloutStrategy) -> Lws {
        self.with(|l| l.spec.rollout_strategy = Some(s))
    }

    fn annotations(self, kv: &[(&str, &str)]) -> Lws {
        self.with(|l| l.metadata.annotations = Some(map(kv)))
    }

    fn labels(self, kv: &[(&str, &str)]) -> Lws {
        self.with(|l| l.metadata.labels = Some(map(kv)))
    }

    fn sub_group_size(self, n: i32) -> Lws {
        self.with(|l| {
            let t = &mut l.spec.leader_worker_template;
            t.sub_group_policy
                .get_or_insert_with(SubGroupPolicy::default)
                .sub_group_size = Some(n);
        })
    }

    fn sub_group_type(self, policy_type: &str) -> Lws {
        self.with(|l| {
            let t = &mut l.spec.leader_worker_template;
            t.sub_group_policy
                .get_or_insert_with(SubGroupPolicy::default)
                .sub_group_policy_type = Some(policy_type.to_string());
        })
    }
}

/// The fake client of the Go tests: lists and creates the revisions it holds; every other call
/// is refused (the ported code paths make none).
#[derive(Default)]
struct FakeApi {
    /// Listed by labels; `create` adds one (AlreadyExists on a taken name).
    revisions: RefCell<Vec<ControllerRevision>>,
}

impl FakeApi {
    fn with(revisions: Vec<ControllerRevision>) -> FakeApi {
        FakeApi {
            revisions: RefCell::new(revisions),
        }
    }

    fn names(&self) -> Vec<String> {
        let all = self.revisions.borrow();
        all.iter()
            .map(|r| k8s::name(&r.metadata).to_string())
            .collect()
    }
}

fn refused(call: &str) -> Error {
    Error::internal(format!("FakeApi: unexpected {call} in a ported unit test"))
}

impl Client for FakeApi {
    async fn get<K: Resource>(&self, _namespace: &str, _name: &str) -> Result<Arc<K>> {
        Err(refused("get"))
    }

    async fn get_live<K: Resource>(&self, _namespace: &str, _name: &str) -> Result<Arc<K>> {
        Err(refused("get_live"))
    }

    async fn list<K: Resource>(
        &self,
        _namespace: &str,
        labels: &[(&str, &str)],
    ) -> Result<Vec<Arc<K>>> {
        if K::KIND != "ControllerRevision" {
            return Err(refused("list"));
        }
        let all = self.revisions.borrow();
        let matching = all.iter().filter(|r| {
            labels
                .iter()
                .all(|&(k, v)| k8s::label(&r.metadata, k) == Some(v))
        });
        Ok(matching
            .map(|r| Arc::new(from_json(serde_json::to_value(r).expect("encodes"))))
            .collect())
    }

    async fn create<K: Resource>(&self, obj: K) -> Result<Arc<K>> {
        if K::KIND != "ControllerRevision" {
            return Err(refused("create"));
        }
        let r: ControllerRevision = from_json(serde_json::to_value(&obj).expect("encodes"));
        let mut all = self.revisions.borrow_mut();
        if all.iter().any(|o| o.metadata.name == r.metadata.name) {
            return Err(Error::new(Reason::AlreadyExists, "taken"));
        }
        all.push(r);
        Ok(Arc::new(obj))
    }

    async fn update<K: Resource>(&self, _obj: K) -> Result<Arc<K>> {
        Err(refused("update"))
    }

    async fn update_status<K: Resource>(&self, _obj: K) -> Result<Arc<K>> {
        Err(refused("update_status"))
    }

    async fn merge_patch<K: Resource>(
        &self,
        _namespace: &str,
        _name: &str,
        _patch: Value,
    ) -> Result<Arc<K>> {
        Err(refused("merge_patch"))
    }

    async fn merge_patch_status<K: Resource>(
        &self,
        _namespace: &str,
        _name: &str,
        _patch: Value,
    ) -> Result<Arc<K>> {
        Err(refused("merge_patch_status"))
    }

    async fn apply<K: Resource>(&self, _obj: K, _manager: &str, _force: bool) -> Result<Arc<K>> {
        Err(refused("apply"))
    }

    async fn delete<K: Resource>(
        &self,
        _namespace: &str,
        _name: &str,
        _propagation: Option<Propagation>,
    ) -> Result<()> {
        Err(refused("delete"))
    }

    fn event<K: Resource>(&self, _object: &K, _type_: &str, _reason: &str, _message: &str) {}
}

/// Runs a future that never suspends (FakeApi answers at once).
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a future on FakeApi suspended"),
    }
}

/// `revisionutils.NewRevision(ctx, fakeClient, lws, "")` with no stored revisions.
fn new_revision_of(lws: &LeaderWorkerSet) -> ControllerRevision {
    block_on(new_revision(&FakeApi::default(), lws, "")).expect("NewRevision")
}

fn revision_key(r: &ControllerRevision) -> String {
    get_revision_key(&r.metadata).to_string()
}

// ---------------------------------------------------------------------------------------------
// pkg/controllers/leaderworkerset_controller_test.go
// ---------------------------------------------------------------------------------------------

/// The leader StatefulSet upstream's wanted apply configuration describes. Left out as
/// apply-configuration plumbing: TypeMeta, and the empty `Resources` the unstructured round
/// trip leaves on each container (the Rust template is the LWS's pod spec as is).
fn want_leader_sts(
    replicas: i32,
    revision_key: &str,
    annotations: Value,
    template_annotations: Value,
    template_spec: Value,
    max_unavailable: i32,
) -> Value {
    let labels = json!({
        "leaderworkerset.sigs.k8s.io/name": "test-sample",
        "leaderworkerset.sigs.k8s.io/template-revision-hash": revision_key
    });
    let template_labels = json!({
        "leaderworkerset.sigs.k8s.io/name": "test-sample",
        "leaderworkerset.sigs.k8s.io/worker-index": "0",
        "leaderworkerset.sigs.k8s.io/template-revision-hash": revision_key
    });
    let selector = json!({"matchLabels": {
        "leaderworkerset.sigs.k8s.io/name": "test-sample",
        "leaderworkerset.sigs.k8s.io/worker-index": "0"
    }});
    let update_strategy = json!({
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0, "maxUnavailable": max_unavailable}
    });
    json!({
        "metadata": {
            "name": "test-sample",
            "namespace": "default",
            "labels": labels,
            "annotations": annotations
        },
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "template": {
                "metadata": {"labels": template_labels, "annotations": template_annotations},
                "spec": template_spec
            },
            "serviceName": "test-sample",
            "podManagementPolicy": "Parallel",
            "updateStrategy": update_strategy
        }
    })
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:52
// The revision keys come from this port's NewRevision (its hash is not upstream's); like
// upstream, key 1 is of an LWS with leader and worker templates, key 2 of one with a worker
// template only.
#[test]
fn leader_statefulset_apply_config() {
    let key1 = revision_key(&new_revision_of(
        &Lws::basic("test-sample", NS)
            .leader_template_spec(leader_pod_spec())
            .worker_template_spec(worker_pod_spec())
            .obj(),
    ));
    let key2 = revision_key(&new_revision_of(
        &Lws::basic("test-sample", NS)
            .worker_template_spec(worker_pod_spec())
            .obj(),
    ));
    let excl = "leaderworkerset.sigs.k8s.io/exclusive-topology";
    let sub_excl = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology";

    struct Case {
        name: &'static str,
        revision_key: String,
        lws: LeaderWorkerSet,
        sts_replicas: Option<i32>,
        want: Value,
    }
    let mut pvc_want = want_leader_sts(
        1,
        &key2,
        json!({"leaderworkerset.sigs.k8s.io/replicas": "1"}),
        json!({"leaderworkerset.sigs.k8s.io/size": "1"}),
        worker_pod_spec_json(),
        1,
    );
    pvc_want["spec"]["persistentVolumeClaimRetentionPolicy"] = retention_policy_json();
    pvc_want["spec"]["volumeClaimTemplates"] = json!([{
        "metadata": {"name": "pvc1", "namespace": "default"},
        "spec": pvc1_spec_json()
    }]);
    let cases = vec![
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:78
        Case {
            name: "1 replica, size 1, with empty leader template, exclusive placement disabled",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .rollout(int(1), int(0), None)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                1,
                &key2,
                json!({"leaderworkerset.sigs.k8s.io/replicas": "1"}),
                json!({"leaderworkerset.sigs.k8s.io/size": "1"}),
                worker_pod_spec_json(),
                1,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:144
        Case {
            name: "1 replica, size 2 , with empty leader template, exclusive placement enabled",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .annotations(&[(excl, "topologyKey")])
                .replica(1)
                .rollout(int(1), int(0), None)
                .worker_template_spec(worker_pod_spec())
                .size(2)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                1,
                &key2,
                json!({
                    "leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey",
                    "leaderworkerset.sigs.k8s.io/replicas": "1"
                }),
                json!({
                    "leaderworkerset.sigs.k8s.io/size": "2",
                    "leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey"
                }),
                worker_pod_spec_json(),
                1,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:216
        Case {
            name: "2 replica, size 2, with leader template, exclusive placement enabled",
            revision_key: key1.clone(),
            lws: Lws::basic("test-sample", NS)
                .annotations(&[(excl, "topologyKey")])
                .replica(2)
                .rollout(int(1), int(0), None)
                .worker_template_spec(worker_pod_spec())
                .leader_template_spec(leader_pod_spec())
                .size(2)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                2,
                &key1,
                json!({
                    "leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey",
                    "leaderworkerset.sigs.k8s.io/replicas": "2"
                }),
                json!({
                    "leaderworkerset.sigs.k8s.io/size": "2",
                    "leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey"
                }),
                leader_pod_spec_json(),
                1,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:287
        Case {
            name: "2 maxUnavailable, 1 maxSurge, with empty leader template, exclusive placement \
                   disabled",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .rollout(int(2), int(1), None)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                1,
                &key2,
                json!({"leaderworkerset.sigs.k8s.io/replicas": "1"}),
                json!({"leaderworkerset.sigs.k8s.io/size": "1"}),
                worker_pod_spec_json(),
                3,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:354
        // maxSurge is capped at the 1 LWS replica, so maxUnavailable = 0 + 1.
        Case {
            name: "0 maxUnavailable, 2 maxSurge, with empty leader template, exclusive placement \
                   disabled",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .rollout(int(0), int(2), None)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                1,
                &key2,
                json!({"leaderworkerset.sigs.k8s.io/replicas": "1"}),
                json!({"leaderworkerset.sigs.k8s.io/size": "1"}),
                worker_pod_spec_json(),
                1,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:423
        Case {
            name: "1 replica, size 2, with leader template, exclusive placement enabled, \
                   subgroupsize enabled",
            revision_key: key1.clone(),
            lws: Lws::basic("test-sample", NS)
                .annotations(&[(sub_excl, "topologyKey")])
                .sub_group_size(2)
                .sub_group_type("LeaderWorker")
                .replica(1)
                .rollout(int(1), int(0), None)
                .worker_template_spec(worker_pod_spec())
                .leader_template_spec(leader_pod_spec())
                .size(2)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                1,
                &key1,
                json!({
                    "leaderworkerset.sigs.k8s.io/replicas": "1",
                    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "topologyKey"
                }),
                json!({
                    "leaderworkerset.sigs.k8s.io/size": "2",
                    "leaderworkerset.sigs.k8s.io/subgroup-size": "2",
                    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "topologyKey",
                    "leaderworkerset.sigs.k8s.io/subgroup-policy-type": "LeaderWorker"
                }),
                leader_pod_spec_json(),
                1,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:496
        // The PVC's TypeMeta (Kind/APIVersion) is apply-configuration plumbing.
        Case {
            name: "1 replica, size 1, with volumeClaimTemplates and \
                   PersistentVolumeClaimRetentionPolicy configured",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .rollout(int(1), int(0), None)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .with(with_pvc1)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: pvc_want,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:612
        // The StatefulSet's maxUnavailable is at least 1, even for 0/0 and 0 replicas.
        Case {
            name: "0 replica, 0 maxUnavailable, 0 maxSurge, with empty leader template, \
                   exclusive placement disabled",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .replica(0)
                .rollout(int(0), int(0), None)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: None,
            want: want_leader_sts(
                0,
                &key2,
                json!({"leaderworkerset.sigs.k8s.io/replicas": "0"}),
                json!({"leaderworkerset.sigs.k8s.io/size": "1"}),
                worker_pod_spec_json(),
                1,
            ),
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:681
        // maxSurge 50% is of the 2 LWS replicas (not the 3 StatefulSet ones): 1 + 1 = 2.
        Case {
            name: "1 maxUnavailable, 50% maxSurge, 2 lws replicas, 3 sts replicas currently",
            revision_key: key2.clone(),
            lws: Lws::basic("test-sample", NS)
                .replica(2)
                .rollout(int(1), pct("50%"), None)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .restart_policy("RecreateGroupOnPodRestart")
                .obj(),
            sts_replicas: Some(3),
            want: want_leader_sts(
                3,
                &key2,
                json!({"leaderworkerset.sigs.k8s.io/replicas": "2"}),
                json!({"leaderworkerset.sigs.k8s.io/size": "1"}),
                worker_pod_spec_json(),
                2,
            ),
        },
    ];
    for c in cases {
        let replicas = c.sts_replicas.unwrap_or(c.lws.replicas());
        let got =
            construct_leader_statefulset_apply_configuration(&c.lws, 0, replicas, &c.revision_key)
                .unwrap_or_else(|e| panic!("{}: failed with error: {e}", c.name));
        let want: StatefulSet = from_json(c.want);
        assert_eq!(
            got, want,
            "{}: unexpected StatefulSet apply configuration",
            c.name
        );
    }
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:771
#[test]
fn leader_statefulset_apply_config_propagates_object_meta() {
    let lws = Lws::basic("test-sample", NS)
        .labels(&[("app", "inference"), (keys::SET_NAME, "user-value")])
        .annotations(&[("owner", "platform"), (keys::REPLICAS, "user-value")])
        .replica(2)
        .rollout(int(1), int(0), None)
        .worker_template_spec(worker_pod_spec())
        .size(1)
        .restart_policy("RecreateGroupOnPodRestart")
        .obj();
    let sts = construct_leader_statefulset_apply_configuration(&lws, 0, 2, "revision-1")
        .expect("constructLeaderStatefulSetApplyConfiguration");
    let want_labels = map(&[
        ("app", "inference"),
        (keys::SET_NAME, "test-sample"),
        (keys::TEMPLATE_REVISION_HASH, "revision-1"),
    ]);
    assert_eq!(
        sts.metadata.labels,
        Some(want_labels),
        "unexpected StatefulSet labels"
    );
    let want_annotations = map(&[("owner", "platform"), (keys::REPLICAS, "2")]);
    assert_eq!(
        sts.metadata.annotations,
        Some(want_annotations),
        "unexpected StatefulSet annotations"
    );
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:816
#[test]
fn exclusive_condition_types_table() {
    struct Case {
        name: &'static str,
        condition1: &'static str,
        condition2: &'static str,
        expect_exclusive_condition_types: bool,
    }
    let cases = [
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:823
        Case {
            name: "First Condition available, second Progressing",
            condition1: "Available",
            condition2: "Progressing",
            expect_exclusive_condition_types: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:829
        Case {
            name: "First Condition Progressing, second Available",
            condition1: "Progressing",
            condition2: "Available",
            expect_exclusive_condition_types: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:835
        Case {
            name: "Same Conditions",
            condition1: "Progressing",
            condition2: "Progressing",
            expect_exclusive_condition_types: false,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:840
        Case {
            name: "First Condition UpdateInProgress, second Available",
            condition1: "UpdateInProgress",
            condition2: "Available",
            expect_exclusive_condition_types: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:846
        Case {
            name: "First Condition Available, second UpdateInProgress",
            condition1: "Available",
            condition2: "UpdateInProgress",
            expect_exclusive_condition_types: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:852
        Case {
            name: "First Condition Progressing, second UpdateInProgress",
            condition1: "Progressing",
            condition2: "UpdateInProgress",
            expect_exclusive_condition_types: false,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:857
        Case {
            name: "First Condition UpdateInProgress, second Progressing",
            condition1: "UpdateInProgress",
            condition2: "Progressing",
            expect_exclusive_condition_types: false,
        },
    ];
    for c in cases {
        assert_eq!(
            exclusive_condition_types(c.condition1, c.condition2),
            c.expect_exclusive_condition_types,
            "{}",
            c.name
        );
    }
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:874
#[test]
fn calculate_rolling_update_replicas_table() {
    struct Case {
        name: &'static str,
        lws_replicas: i32,
        max_surge: i32,
        max_unavailable: i32,
        unready: i32,
        want_replicas: i32,
    }
    let cases = [
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:883
        Case {
            name: "keeps surge replicas until maxUnavailable budget covers unready desired \
                   replicas",
            lws_replicas: 1,
            max_surge: 1,
            max_unavailable: 0,
            unready: 1,
            want_replicas: 2,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:891
        Case {
            name: "reclaims surge replicas gradually once enough desired replicas are ready",
            lws_replicas: 4,
            max_surge: 2,
            max_unavailable: 1,
            unready: 2,
            want_replicas: 5,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:899
        Case {
            name: "reclaims surge even before partition reaches zero when maxUnavailable \
                   permits it",
            lws_replicas: 2,
            max_surge: 2,
            max_unavailable: 1,
            unready: 2,
            want_replicas: 3,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:907
        Case {
            name: "falls back to desired replicas when all desired replicas are ready",
            lws_replicas: 1,
            max_surge: 1,
            max_unavailable: 0,
            unready: 0,
            want_replicas: 1,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:915
        Case {
            name: "reclaims surge when maxUnavailable permits an unready desired replica",
            lws_replicas: 1,
            max_surge: 1,
            max_unavailable: 1,
            unready: 1,
            want_replicas: 1,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:923
        Case {
            name: "does not surge when maxSurge is zero",
            lws_replicas: 3,
            max_surge: 0,
            max_unavailable: 0,
            unready: 1,
            want_replicas: 3,
        },
    ];
    for c in cases {
        let got = calculate_rolling_update_replicas(
            c.lws_replicas,
            c.max_surge,
            c.max_unavailable,
            c.unready,
        );
        assert_eq!(
            got, c.want_replicas,
            "{}: calculateRollingUpdateReplicas()",
            c.name
        );
    }
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:943, :985 and :1027, one case
// each. Upstream runs `rollingUpdateParameters` on a reconciler without a client; these cases
// return before any API read (`sts_replicas < lws_replicas`, or Case 2 of a new rollout), so
// the real async function runs here on FakeApi, which would refuse any read.
#[test]
fn rolling_update_parameters_table() {
    struct Case {
        name: &'static str,
        lws_replicas: i32,
        max_unavailable: i32,
        max_surge: i32,
        lws_updated: bool,
        want_partition: i32,
        want_replicas: i32,
    }
    let cases = [
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:943
        Case {
            name: "TestRollingUpdateParametersScaleUpDoesNotCreateExtraSurge",
            lws_replicas: 3,
            max_unavailable: 0,
            max_surge: 1,
            lws_updated: false,
            want_partition: 0,
            want_replicas: 3,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:985
        Case {
            name: "TestRollingUpdateParametersScaleUpWithTemplateUpdateDoesNotCreateExtraSurge",
            lws_replicas: 3,
            max_unavailable: 0,
            max_surge: 1,
            lws_updated: true,
            want_partition: 2,
            want_replicas: 3,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1027
        Case {
            name: "TestRollingUpdateParametersTemplateUpdateReclaimsSurgeWhenAllowed",
            lws_replicas: 2,
            max_unavailable: 1,
            max_surge: 2,
            lws_updated: true,
            want_partition: 2,
            want_replicas: 3,
        },
    ];
    let flags = Flags::v0_10_0();
    let ctx = Ctx {
        flags: &flags,
        now: epoch(),
    };
    for c in cases {
        let lws = Lws::basic("test-sample", NS)
            .replica(c.lws_replicas)
            .size(1)
            .rollout(int(c.max_unavailable), int(c.max_surge), Some(0))
            .obj();
        // The same leader StatefulSet in all three: 2 replicas, annotated 2, partition 0.
        let sts: StatefulSet = from_json(json!({
            "metadata": {
                "name": "test-sample",
                "namespace": "default",
                "annotations": {"leaderworkerset.sigs.k8s.io/replicas": "2"}
            },
            "spec": {
                "replicas": 2,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
            }
        }));
        let got = block_on(rolling_update_parameters(
            &FakeApi::default(),
            &ctx,
            &lws,
            Some(&sts),
            "rev-new",
            c.lws_updated,
        ));
        assert_eq!(
            got,
            Ok((c.want_partition, c.want_replicas)),
            "{}: rollingUpdateParameters() (partition, replicas)",
            c.name
        );
    }
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1069
// Upstream's `setCondition(lws, condition)` works on `lws.Status.Conditions`; the port takes
// the conditions themselves (the LWS generation plays no part in `setCondition`).
#[test]
fn set_condition_table() {
    type Cond = (&'static str, &'static str, i64);
    struct Case {
        name: &'static str,
        condition: Cond,
        existing: &'static [Cond],
        expected_should_update: bool,
    }
    let cases = [
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1076
        Case {
            name: "Same condition type, different condition status",
            condition: ("Progressing", "True", 1),
            existing: &[("Progressing", "False", 1)],
            expected_should_update: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1085
        Case {
            name: "Different condition type, new condition status is true",
            condition: ("Progressing", "True", 1),
            existing: &[("Available", "False", 1)],
            expected_should_update: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1094
        Case {
            name: "No initial condition",
            condition: ("Progressing", "True", 1),
            existing: &[],
            expected_should_update: true,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1100
        Case {
            name: "Same condition type, Same condition status",
            condition: ("Progressing", "False", 0),
            existing: &[("Progressing", "False", 0)],
            expected_should_update: false,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1107
        Case {
            name: "Same condition type, same status, but generation advanced",
            condition: ("Available", "True", 2),
            existing: &[("Available", "True", 1)],
            expected_should_update: true,
        },
    ];
    let flags = Flags::v0_10_0();
    let ctx = Ctx {
        flags: &flags,
        now: epoch(),
    };
    for c in cases {
        let mut conditions: Vec<Condition> = c
            .existing
            .iter()
            .map(|&(t, s, g)| condition(t, s, g))
            .collect();
        let (t, s, g) = c.condition;
        let should_update = set_condition(&mut conditions, condition(t, s, g), &ctx);
        assert_eq!(should_update, c.expected_should_update, "{}", c.name);
    }
}

// pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1128
// `getUpdatedRevision` is private in the port, so its body (`!EqualRevision &&
// !SetMatchesRevision`) is spelled out on the public revision functions. Skipped: "sts is nil,
// should return nil" (:1138), the nil guard of the private function itself. The raw-byte
// rewrites are upstream's, applied to this port's JSON encoding of the revision.
#[test]
fn get_updated_revision_table() {
    struct Case {
        name: &'static str,
        replace: Option<(&'static str, &'static str)>,
        expect_update: bool,
    }
    let cases = [
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1144
        Case {
            name: "revision matches current spec, no update",
            replace: None,
            expect_update: false,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1152
        Case {
            name: "revision has old serialization with creationTimestamp null, semantic match, \
                   no update",
            replace: Some((
                r#""metadata":{}"#,
                r#""metadata":{"creationTimestamp":null}"#,
            )),
            expect_update: false,
        },
        // pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:1164
        Case {
            name: "revision has different spec, should trigger update",
            replace: Some((r#""name":"leader""#, r#""name":"changed""#)),
            expect_update: true,
        },
    ];
    for c in cases {
        let lws = Lws::build(NS).obj();
        let mut revision = new_revision_of(&lws);
        if let Some((from, to)) = c.replace {
            let raw = serde_json::to_string(&revision.data.0).expect("encodes");
            assert!(raw.contains(from), "{}: {from} not in {raw}", c.name);
            revision.data.0 = serde_json::from_str(&raw.replace(from, to)).expect("decodes");
        }
        let current = new_revision_of(&lws);
        let got_update = !equal_revision(Some(&current), Some(&revision))
            && !set_matches_revision(&lws, &current, &revision);
        assert_eq!(got_update, c.expect_update, "{}: update", c.name);
    }
}

// Not ported from pkg/controllers/leaderworkerset_controller_test.go@v0.10.0:
// - TestEnqueueLWSRequests (:1208): `enqueueLWSRequests` is watch plumbing with no counterpart
//   in the port (the simulator wires its handlers itself).

// ---------------------------------------------------------------------------------------------
// pkg/controllers/pod_controller_test.go
// ---------------------------------------------------------------------------------------------

/// The worker StatefulSet upstream's wanted apply configuration describes (TypeMeta and the
/// containers' empty `Resources` left out, as for the leader StatefulSet).
fn want_worker_sts(
    replicas: i32,
    revision_key: &str,
    annotations: Option<Value>,
    template_annotations: Value,
) -> Value {
    let labels = json!({
        "leaderworkerset.sigs.k8s.io/name": "test-sample",
        "leaderworkerset.sigs.k8s.io/group-index": "1",
        "leaderworkerset.sigs.k8s.io/group-key": "test-key",
        "leaderworkerset.sigs.k8s.io/template-revision-hash": revision_key
    });
    let selector = json!({"matchLabels": {
        "leaderworkerset.sigs.k8s.io/name": "test-sample",
        "leaderworkerset.sigs.k8s.io/group-index": "1",
        "leaderworkerset.sigs.k8s.io/group-key": "test-key"
    }});
    let mut want = json!({
        "metadata": {"name": "test-sample", "namespace": "default", "labels": labels.clone()},
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "template": {
                "metadata": {"labels": labels, "annotations": template_annotations},
                "spec": worker_pod_spec_json()
            },
            "ordinals": {"start": 1},
            "serviceName": "test-sample",
            "podManagementPolicy": "Parallel"
        }
    });
    if let Some(a) = annotations {
        want["metadata"]["annotations"] = a;
    }
    want
}

/// The leader pod of the worker StatefulSet tests.
fn leader_pod(revision_key: &str) -> Pod {
    from_json(json!({"metadata": {
        "name": "test-sample",
        "namespace": "default",
        "labels": {
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
            "leaderworkerset.sigs.k8s.io/name": "test-sample",
            "leaderworkerset.sigs.k8s.io/group-index": "1",
            "leaderworkerset.sigs.k8s.io/group-key": "test-key",
            "leaderworkerset.sigs.k8s.io/template-revision-hash": revision_key
        }
    }}))
}

// pkg/controllers/pod_controller_test.go@v0.10.0:42
// The revision key is this port's hash of the same LWS upstream hashes.
#[test]
fn construct_worker_statefulset_apply_configuration_table() {
    let update_revision = new_revision_of(
        &Lws::basic("test-sample", NS)
            .replica(1)
            .worker_template_spec(worker_pod_spec())
            .size(1)
            .obj(),
    );
    let key = revision_key(&update_revision);
    let excl = "leaderworkerset.sigs.k8s.io/exclusive-topology";
    let sub_excl = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology";

    struct Case {
        name: &'static str,
        lws: LeaderWorkerSet,
        want: Value,
    }
    let mut pvc_want = want_worker_sts(
        0,
        &key,
        None,
        json!({
            "leaderworkerset.sigs.k8s.io/size": "1",
            "leaderworkerset.sigs.k8s.io/leader-name": "test-sample"
        }),
    );
    pvc_want["spec"]["persistentVolumeClaimRetentionPolicy"] = retention_policy_json();
    pvc_want["spec"]["volumeClaimTemplates"] = json!([{
        "metadata": {"name": "pvc1", "namespace": "default"},
        "spec": pvc1_spec_json()
    }]);
    let cases = vec![
        // pkg/controllers/pod_controller_test.go@v0.10.0:59
        Case {
            name: "1 replica, size 1, exclusive placement disabled",
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .worker_template_spec(worker_pod_spec())
                .size(1)
                .obj(),
            want: want_worker_sts(
                0,
                &key,
                None,
                json!({
                    "leaderworkerset.sigs.k8s.io/size": "1",
                    "leaderworkerset.sigs.k8s.io/leader-name": "test-sample"
                }),
            ),
        },
        // pkg/controllers/pod_controller_test.go@v0.10.0:133
        Case {
            name: "1 replica, size 2, exclusive placement enabled",
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .worker_template_spec(worker_pod_spec())
                .annotations(&[(excl, "topologyKey")])
                .size(2)
                .obj(),
            want: want_worker_sts(
                1,
                &key,
                Some(json!({"leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey"})),
                json!({
                    "leaderworkerset.sigs.k8s.io/size": "2",
                    "leaderworkerset.sigs.k8s.io/leader-name": "test-sample",
                    "leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey"
                }),
            ),
        },
        // pkg/controllers/pod_controller_test.go@v0.10.0:213
        Case {
            name: "1 replica, size 2, subgroupsize 2, exclusive placement enabled",
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .worker_template_spec(worker_pod_spec())
                .annotations(&[(sub_excl, "topologyKey")])
                .size(2)
                .sub_group_size(2)
                .sub_group_type("LeaderExcluded")
                .obj(),
            want: want_worker_sts(
                1,
                &key,
                Some(json!({
                    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "topologyKey"
                })),
                json!({
                    "leaderworkerset.sigs.k8s.io/size": "2",
                    "leaderworkerset.sigs.k8s.io/leader-name": "test-sample",
                    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "topologyKey",
                    "leaderworkerset.sigs.k8s.io/subgroup-size": "2",
                    "leaderworkerset.sigs.k8s.io/subgroup-policy-type": "LeaderExcluded"
                }),
            ),
        },
        // pkg/controllers/pod_controller_test.go@v0.10.0:295
        Case {
            name: "1 replica, size 1, with volumeClaimTemplates and \
                   PersistentVolumeClaimRetentionPolicy configured",
            lws: Lws::basic("test-sample", NS)
                .replica(1)
                .worker_template_spec(worker_pod_spec())
                .with(with_pvc1)
                .size(1)
                .obj(),
            want: pvc_want,
        },
    ];
    let flags = Flags::v0_10_0();
    let leader = leader_pod(&key);
    for c in cases {
        let got = construct_worker_statefulset_apply_configuration(
            &leader,
            &c.lws,
            &update_revision,
            &flags,
        )
        .unwrap_or_else(|e| panic!("{}: failed with error {e}", c.name));
        let want: StatefulSet = from_json(c.want);
        assert_eq!(
            got, want,
            "{}: unexpected StatefulSet apply operation",
            c.name
        );
    }
}

// pkg/controllers/pod_controller_test.go@v0.10.0:434
#[test]
fn worker_statefulset_apply_config_propagates_object_meta() {
    let lws = Lws::basic("test-sample", NS)
        .labels(&[("app", "inference"), (keys::GROUP_INDEX, "user-value")])
        .annotations(&[("owner", "platform")])
        .replica(1)
        .worker_template_spec(worker_pod_spec())
        .size(2)
        .obj();
    let revision = new_revision_of(&lws);
    let key = revision_key(&revision);
    let leader: Pod = from_json(json!({"metadata": {
        "name": "test-sample",
        "namespace": "default",
        "labels": {
            "leaderworkerset.sigs.k8s.io/name": "test-sample",
            "leaderworkerset.sigs.k8s.io/group-index": "1",
            "leaderworkerset.sigs.k8s.io/group-key": "test-key",
            "leaderworkerset.sigs.k8s.io/template-revision-hash": key
        }
    }}));
    let flags = Flags::v0_10_0();
    let sts = construct_worker_statefulset_apply_configuration(&leader, &lws, &revision, &flags)
        .expect("constructWorkerStatefulSetApplyConfiguration");
    let want_labels = map(&[
        ("app", "inference"),
        (keys::SET_NAME, "test-sample"),
        (keys::GROUP_INDEX, "1"),
        (keys::GROUP_UNIQUE_HASH, "test-key"),
        (keys::TEMPLATE_REVISION_HASH, key.as_str()),
    ]);
    assert_eq!(
        sts.metadata.labels,
        Some(want_labels),
        "unexpected StatefulSet labels"
    );
    assert_eq!(
        sts.metadata.annotations,
        Some(map(&[("owner", "platform")])),
        "unexpected StatefulSet annotations"
    );
}

/// B23 (not an upstream test at the tag; d014d0f, PR #963, after it): a leader on the old
/// revision (size 4) while the live LWS says size 2. v0.10.0 builds the worker StatefulSet with
/// the live size; `worker-sts-spec=revision` with the revision's.
#[test]
fn b23_an_old_group_is_rebuilt_with_the_live_size_at_the_tag_and_the_revisions_with_the_fix() {
    let old = Lws::basic("test-sample", NS)
        .replica(1)
        .worker_template_spec(worker_pod_spec())
        .size(4)
        .obj();
    let revision = new_revision_of(&old);
    let mut live = old.clone();
    live.spec.leader_worker_template.size = Some(2);
    let leader = leader_pod(&revision_key(&revision));
    for (from_revision, replicas, size) in [(false, 1, "2"), (true, 3, "4")] {
        let flags = Flags {
            worker_sts_spec_from_revision: from_revision,
            ..Flags::v0_10_0()
        };
        let sts =
            construct_worker_statefulset_apply_configuration(&leader, &live, &revision, &flags)
                .expect("constructWorkerStatefulSetApplyConfiguration");
        assert_eq!(sts.spec.replicas, Some(replicas));
        let annotations = sts
            .spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.annotations.as_ref());
        assert_eq!(
            annotations
                .and_then(|a| a.get(keys::SIZE))
                .map(String::as_str),
            Some(size)
        );
    }
}

// Not ported from pkg/controllers/pod_controller_test.go@v0.10.0:
// - TestHandleRestartPolicyUsesCurrentWorkerOwnership (:487): `handleRestartPolicy` is async
//   and reads and deletes through a client seeded with objects; FakeApi holds revisions only.

// ---------------------------------------------------------------------------------------------
// pkg/utils/revision/revision_utils_test.go
// ---------------------------------------------------------------------------------------------

// pkg/utils/revision/revision_utils_test.go@v0.10.0:33
#[test]
fn apply_revision_restores_templates() {
    let mut lws = Lws::build(NS).obj();
    let revision = new_revision_of(&lws);
    let current_lws = lws.clone();

    let leader = lws
        .spec
        .leader_worker_template
        .leader_template
        .as_mut()
        .unwrap();
    leader.spec.as_mut().unwrap().containers[0].name = "update-name".to_string();
    lws.spec.network_config = Some(NetworkConfig {
        subdomain_policy: Some("UniquePerReplica".to_string()),
    });
    lws.spec.rollout_strategy = Some(RolloutStrategy {
        type_: "RollingUpdate".to_string(),
        rolling_update_configuration: Some(RollingUpdateConfiguration {
            max_unavailable: Some(int(2)),
            max_surge: Some(int(1)),
            partition: None,
        }),
    });
    let restored = apply_revision(&lws, &revision).expect("ApplyRevision");
    let restored_revision = new_revision_of(&restored);

    assert!(
        equal_revision(Some(&revision), Some(&restored_revision)),
        "expected value {revision:?}, got {restored_revision:?}"
    );
    assert_eq!(
        current_lws.spec.leader_worker_template, restored.spec.leader_worker_template,
        "unexpected restored LeaderWorkerTemplate"
    );
    assert_eq!(
        current_lws.spec.network_config, restored.spec.network_config,
        "NetworkConfig should be restored"
    );
    assert_eq!(
        lws.spec.rollout_strategy, restored.spec.rollout_strategy,
        "It should not restore/clear non NetworkConfig Spec fields"
    );
}

// pkg/utils/revision/revision_utils_test.go@v0.10.0:82
#[test]
fn equal_revision_table() {
    struct Case {
        name: &'static str,
        left_lws: Option<LeaderWorkerSet>,
        right_lws: Option<LeaderWorkerSet>,
        left_revision_key: &'static str,
        right_revision_key: &'static str,
        equal: bool,
    }
    let cases = vec![
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:92
        Case {
            name: "same LeaderWorkerTemplate, networkConfig, should be equal",
            left_lws: Some(Lws::build(NS).obj()),
            right_lws: Some(Lws::build(NS).obj()),
            left_revision_key: "",
            right_revision_key: "",
            equal: true,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:100
        Case {
            name: "same LeaderWorkerTemplate, networkConfig, different revisionKey, should be \
                   equal",
            left_lws: Some(Lws::build(NS).obj()),
            right_lws: Some(Lws::build(NS).obj()),
            left_revision_key: "",
            right_revision_key: "templateHash",
            equal: true,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:108
        Case {
            name: "same LeaderWorkerTemplate, shared subdomainpolicy & nil, should be equal",
            left_lws: Some(Lws::build(NS).subdomain_policy("Shared").obj()),
            right_lws: Some(Lws::build(NS).with(|l| l.spec.network_config = None).obj()),
            left_revision_key: "",
            right_revision_key: "",
            equal: true,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:116
        Case {
            name: "left nil, right nil, should be equal",
            left_lws: None,
            right_lws: None,
            left_revision_key: "",
            right_revision_key: "",
            equal: true,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:124
        Case {
            name: "semantically same LeaderWorkerTemplate, different fields set, same \
                   networkConfig, should be equal",
            left_lws: Some(
                Lws::build(NS)
                    .worker_template_spec(worker_pod_spec_with_volume(true))
                    .obj(),
            ),
            right_lws: Some(
                Lws::build(NS)
                    .worker_template_spec(worker_pod_spec_with_volume(false))
                    .obj(),
            ),
            left_revision_key: "",
            right_revision_key: "",
            equal: true,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:132
        Case {
            name: "left nil, right non-nil, should not be equal",
            left_lws: None,
            right_lws: Some(Lws::build(NS).obj()),
            left_revision_key: "",
            right_revision_key: "",
            equal: false,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:140
        Case {
            name: "same LeaderWorkerTemplate, different networkConfig, should not be equal",
            left_lws: Some(Lws::build(NS).subdomain_policy("UniquePerReplica").obj()),
            right_lws: Some(Lws::build(NS).obj()),
            left_revision_key: "",
            right_revision_key: "",
            equal: false,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:148
        Case {
            name: "different LeaderWorkerTemplate, same networkConfig, should not be equal",
            left_lws: Some(Lws::build(NS).obj()),
            right_lws: Some(Lws::build(NS).worker_template_spec(leader_pod_spec()).obj()),
            left_revision_key: "",
            right_revision_key: "",
            equal: false,
        },
    ];
    let api = FakeApi::default();
    for c in cases {
        let revision = |lws: &Option<LeaderWorkerSet>, key: &str| {
            lws.as_ref()
                .map(|l| block_on(new_revision(&api, l, key)).expect("NewRevision"))
        };
        let left = revision(&c.left_lws, c.left_revision_key);
        let right = revision(&c.right_lws, c.right_revision_key);
        assert_eq!(
            equal_revision(left.as_ref(), right.as_ref()),
            c.equal,
            "{}: equality between controller revisions",
            c.name
        );
    }
}

// pkg/utils/revision/revision_utils_test.go@v0.10.0:182
// The port keeps no LRU cache (documented in revision.rs), so the cache assertions are not
// ported: the cache length after the first call (:207), and the second call (:211-:215), whose
// `true` comes from a cache hit on a proposed revision mutated to
// `{"spec":{"leaderWorkerTemplate":{"$patch":"replace"}}}`; recomputed, as the port does, that
// call would return false.
#[test]
fn set_matches_revision_without_cache() {
    let mut lws = Lws::build(NS)
        .with(|l| l.metadata.uid = Some("test-uid".to_string()))
        .generation(1)
        .obj();
    let mut revision = new_revision_of(&lws);
    revision.metadata.resource_version = Some("100".to_string());
    // Built from the same LWS, so it should match.
    let mut proposed = new_revision_of(&lws);
    assert!(
        set_matches_revision(&lws, &proposed, &revision),
        "expected SetMatchesRevision to return true on first call (cache miss path)"
    );
    proposed.data.0 = json!({"spec": {"leaderWorkerTemplate": {"$patch": "replace"}}});
    lws.metadata.generation = Some(2);
    assert!(
        !set_matches_revision(&lws, &proposed, &revision),
        "expected SetMatchesRevision to return false for different generation with mismatched \
         proposed data"
    );
}

// pkg/utils/revision/revision_utils_test.go@v0.10.0:225
// `getHighestRevision` is private in the port; `NewRevision` numbers a new revision one above
// the highest listed one, so the expected highest revision `n` shows as `n + 1` (and "nil" as
// 1) on a revision made with FakeApi holding the case's revisions.
#[test]
fn get_highest_revision_table() {
    let lws = Lws::build(NS).obj();
    let revision1 = new_revision_of(&lws);
    let mut revision2 = revision1.clone();
    revision2.revision = Some(2);
    let mut revision3 = revision2.clone();
    revision3.revision = Some(3);

    struct Case {
        name: &'static str,
        revisions: Vec<ControllerRevision>,
        expected_revision: Option<i64>,
    }
    let cases = vec![
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:241
        Case {
            name: "empty revision list, returns nil",
            revisions: vec![],
            expected_revision: None,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:246
        Case {
            name: "only one revision in list, returns it",
            revisions: vec![revision1.clone()],
            expected_revision: revision1.revision,
        },
        // pkg/utils/revision/revision_utils_test.go@v0.10.0:251
        Case {
            name: "returns the revision with highest revision number",
            revisions: vec![revision2.clone(), revision3.clone(), revision2.clone()],
            expected_revision: revision3.revision,
        },
    ];
    for c in cases {
        let api = FakeApi::with(c.revisions);
        let next = block_on(new_revision(&api, &lws, ""))
            .expect("NewRevision")
            .revision;
        assert_eq!(
            next,
            Some(c.expected_revision.map_or(1, |n| n + 1)),
            "{}: highest revision + 1",
            c.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// pkg/webhooks/leaderworkerset_webhook_test.go
//
// `getPercentValue`, `validateNonnegativeField` and `IsNotMoreThan100Percent` are private in
// the port (inlined in `validate_lws`), so each case is observed through `validate_lws` on a
// defaulted `BuildLeaderWorkerSet` whose only change is the field under test: maxUnavailable
// for the percent helpers, the partition for `validateNonnegativeField`. The assertions look
// only for the message of the helper under test (other rules, such as maxUnavailable and
// maxSurge both 0, may add their own).
// ---------------------------------------------------------------------------------------------

/// The aggregated error of admitting (create) `BuildLeaderWorkerSet` changed by `f`; "" if none.
fn create_errors(f: impl FnOnce(&mut LeaderWorkerSet)) -> String {
    let mut lws = Lws::build(NS).with(f).obj();
    default_lws(&mut lws);
    validate_lws(&lws, None).err().unwrap_or_default()
}

// pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:27
// Observed: a percent above 100 is rejected as such, and a string that is not a percent
// fails the percent check `getPercentValue` shares (`IsValidPercent`).
#[test]
fn get_percent_value_table() {
    struct Case {
        name: &'static str,
        input: IntOrString,
        want_output_val: i32,
        want_output_bool: bool,
    }
    let cases = [
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:34
        Case {
            name: "input type int",
            input: int(1),
            want_output_val: 0,
            want_output_bool: false,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:43
        Case {
            name: "input type string - invalid format",
            input: pct("1"),
            want_output_val: 0,
            want_output_bool: false,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:52
        Case {
            name: "input type string - valid format",
            input: pct("1%"),
            want_output_val: 1,
            want_output_bool: true,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:61
        Case {
            name: "input type string - valid format",
            input: pct("101%"),
            want_output_val: 101,
            want_output_bool: true,
        },
    ];
    for c in cases {
        let is_string = matches!(c.input, IntOrString::String(_));
        let errs = create_errors(|l| ru(l).max_unavailable = Some(c.input));
        assert_eq!(
            errs.contains("must not be greater than 100%"),
            c.want_output_bool && c.want_output_val > 100,
            "{}: {errs}",
            c.name
        );
        if is_string {
            assert_eq!(
                errs.contains("a valid percent string"),
                !c.want_output_bool,
                "{}: {errs}",
                c.name
            );
        }
    }
}

// pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:85
#[test]
fn validate_nonnegative_field_table() {
    struct Case {
        name: &'static str,
        input: i32,
        want_error: Option<&'static str>,
    }
    let cases = [
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:91
        Case {
            name: "input less than 0",
            input: -1,
            want_error: Some(
                "spec.rolloutStrategy.rollingUpdateConfiguration.partition: Invalid value: -1: \
                 must be greater than or equal to 0",
            ),
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:103
        Case {
            name: "input equal to 0",
            input: 0,
            want_error: None,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:108
        Case {
            name: "input greater than 0",
            input: 1,
            want_error: None,
        },
    ];
    for c in cases {
        let errs = create_errors(|l| ru(l).partition = Some(c.input));
        match c.want_error {
            Some(want) => assert!(errs.contains(want), "{}: {errs}", c.name),
            None => assert!(!errs.contains("partition"), "{}: {errs}", c.name),
        }
    }
}

// pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:126
#[test]
fn is_not_more_than_100_percent_table() {
    struct Case {
        name: &'static str,
        input: IntOrString,
        want_error: bool,
    }
    let cases = [
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:133
        Case {
            name: "invalid input",
            input: int(1),
            want_error: false,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:141
        Case {
            name: "valid input - greater than 100",
            input: pct("101%"),
            want_error: true,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:159
        Case {
            name: "valid input - less than 100",
            input: pct("99%"),
            want_error: false,
        },
        // pkg/webhooks/leaderworkerset_webhook_test.go@v0.10.0:167
        Case {
            name: "valid input - equal to 100",
            input: pct("100%"),
            want_error: false,
        },
    ];
    for c in cases {
        let errs = create_errors(|l| ru(l).max_unavailable = Some(c.input));
        assert_eq!(
            errs.contains("must not be greater than 100%"),
            c.want_error,
            "{}: {errs}",
            c.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// pkg/webhooks/pod_webhook_test.go
// ---------------------------------------------------------------------------------------------

// pkg/webhooks/pod_webhook_test.go@v0.10.0:29
// The port's group key is its own stable hash, not upstream's SHA-1, so upstream's hex strings
// cannot be compared; what they show is kept: the key is a pure function of (namespace, pod
// name), and the three keys differ from one another.
#[test]
fn gen_group_unique_key_table() {
    struct Case {
        name: &'static str,
        pod_name: &'static str,
        namespace: &'static str,
    }
    let cases = [
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:36
        Case {
            name: "same namespace, pod name",
            pod_name: "test-sample",
            namespace: "default",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:42
        Case {
            name: "same namespace, different pod name",
            pod_name: "podName",
            namespace: "default",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:48
        Case {
            name: "different namespace, same pod name",
            pod_name: "test-sample",
            namespace: "leaderworkerset",
        },
    ];
    let got: Vec<String> = cases
        .iter()
        .map(|c| crate::hash::group_key(c.namespace, c.pod_name))
        .collect();
    for (i, c) in cases.iter().enumerate() {
        assert_eq!(
            crate::hash::group_key(c.namespace, c.pod_name),
            got[i],
            "{}: deterministic",
            c.name
        );
        for (j, other) in cases.iter().enumerate().skip(i + 1) {
            assert_ne!(
                got[i], got[j],
                "{} vs {}: distinct keys",
                c.name, other.name
            );
        }
    }
}

// pkg/webhooks/pod_webhook_test.go@v0.10.0:66
#[test]
fn set_exclusive_affinities_table() {
    struct Case {
        name: &'static str,
        pod: Value,
        group_unique_key: &'static str,
        topology_key: &'static str,
        pod_affinity_key: &'static str,
        expected_pod: Value,
    }
    let annotations = json!({"leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey"});
    let existing_terms = json!({
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "topologyKey"}]
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "topologyKey"}]
        }
    });
    let affinity = json!({
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "topologyKey",
            "labelSelector": {"matchExpressions": [{
                "key": "leaderworkerset.sigs.k8s.io/group-key",
                "operator": "In",
                "values": ["test-key"]
            }]}
        }]
    });
    let anti_affinity = json!({
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "topologyKey",
            "labelSelector": {"matchExpressions": [
                {"key": "leaderworkerset.sigs.k8s.io/group-key", "operator": "Exists"},
                {
                    "key": "leaderworkerset.sigs.k8s.io/group-key",
                    "operator": "NotIn",
                    "values": ["test-key"]
                }
            ]}
        }]
    });
    let cases = vec![
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:75
        Case {
            name: "Pod with only Exclusive Topology Annotation",
            pod: json!({"metadata": {"annotations": annotations.clone()}}),
            group_unique_key: "test-key",
            topology_key: "topologyKey",
            pod_affinity_key: keys::GROUP_UNIQUE_HASH,
            expected_pod: json!({
                "metadata": {"annotations": annotations.clone()},
                "spec": {"affinity": {"podAffinity": affinity, "podAntiAffinity": anti_affinity}}
            }),
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:123
        Case {
            name: "Pod with Exclusive Annotation, Affinity, and AntiAffinity",
            pod: json!({
                "metadata": {"annotations": annotations.clone()},
                "spec": {"affinity": existing_terms.clone()}
            }),
            group_unique_key: "test-key",
            topology_key: "topologyKey",
            pod_affinity_key: keys::GROUP_UNIQUE_HASH,
            expected_pod: json!({
                "metadata": {"annotations": annotations.clone()},
                "spec": {"affinity": existing_terms}
            }),
        },
    ];
    for c in cases {
        let mut pod: Pod = from_json(c.pod);
        set_exclusive_affinities(
            &mut pod,
            c.group_unique_key,
            c.topology_key,
            c.pod_affinity_key,
        );
        let expected: Pod = from_json(c.expected_pod);
        assert_eq!(
            pod, expected,
            "{}: unexpected set exclusive affinities operation",
            c.name
        );
    }
}

// pkg/webhooks/pod_webhook_test.go@v0.10.0:171
// `exclusiveAffinityApplied` is inlined in the port's `set_exclusive_affinities`, which leaves
// the pod untouched exactly when the exclusive affinity is already applied; that is what is
// observed here.
#[test]
fn exclusive_affinity_applied_table() {
    struct Case {
        name: &'static str,
        affinity: Value,
        expected_applied_exclusive_placement: bool,
        topology_key: &'static str,
    }
    let term = |key: &str| {
        json!({"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": key}
        ]})
    };
    let cases = [
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:178
        Case {
            name: "Has annotiation, Pod Affinity and Pod AntiAffinity",
            affinity: json!({
                "podAffinity": term("topologyKey"),
                "podAntiAffinity": term("topologyKey")
            }),
            expected_applied_exclusive_placement: true,
            topology_key: "topologyKey",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:200
        Case {
            name: "Has annotiation, Pod Affinity, doesn't have Pod AntiAffinity",
            affinity: json!({"podAffinity": term("topologyKey")}),
            expected_applied_exclusive_placement: false,
            topology_key: "topologyKey",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:219
        Case {
            name: "Has annotiation, Pod AntiAffinity, doesn't have Pod Affinity",
            affinity: json!({"podAntiAffinity": term("topologyKey")}),
            expected_applied_exclusive_placement: false,
            topology_key: "topologyKey",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:238
        Case {
            name: "Has annotiation, Pod Affinity and Pod AntiAffinity, Topology Key doesn't \
                   match",
            affinity: json!({
                "podAffinity": term("topologyKey1"),
                "podAntiAffinity": term("topologyKey")
            }),
            expected_applied_exclusive_placement: false,
            topology_key: "topologyKey",
        },
    ];
    for c in cases {
        let pod: Pod = from_json(json!({
            "metadata": {"annotations": {
                "leaderworkerset.sigs.k8s.io/exclusive-topology": "topologyKey"
            }},
            "spec": {"affinity": c.affinity}
        }));
        let mut after = pod.clone();
        set_exclusive_affinities(
            &mut after,
            "test-key",
            c.topology_key,
            keys::GROUP_UNIQUE_HASH,
        );
        assert_eq!(
            after == pod,
            c.expected_applied_exclusive_placement,
            "{}: applied exclusive placement",
            c.name
        );
    }
}

// pkg/webhooks/pod_webhook_test.go@v0.10.0:272
#[test]
fn get_sub_group_index_table() {
    struct Case {
        name: &'static str,
        pod_count: i64,
        sub_group_size: i64,
        worker_index: i64,
        expected_sub_group_index: &'static str,
    }
    let cases = [
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:281
        Case {
            name: "Even number of pods",
            pod_count: 4,
            sub_group_size: 2,
            worker_index: 2,
            expected_sub_group_index: "1",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:288
        Case {
            name: "Odd number of pods, first subgroup has an extra pod",
            pod_count: 5,
            sub_group_size: 2,
            worker_index: 2,
            expected_sub_group_index: "0",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:295
        Case {
            name: "SubGroupSize 1, workerIndex 1",
            pod_count: 3,
            sub_group_size: 1,
            worker_index: 1,
            expected_sub_group_index: "1",
        },
        // pkg/webhooks/pod_webhook_test.go@v0.10.0:302
        Case {
            name: "SubGroupSize 1, workerIndex 2",
            pod_count: 3,
            sub_group_size: 1,
            worker_index: 2,
            expected_sub_group_index: "2",
        },
    ];
    for c in cases {
        let got = get_sub_group_index(c.pod_count, c.sub_group_size, c.worker_index);
        assert_eq!(got, c.expected_sub_group_index, "{}: subGroupIndex", c.name);
    }
}

// ---------------------------------------------------------------------------------------------
// test/integration/webhooks/leaderworkerset_test.go (envtest tables: API server + webhooks)
//
// The API server's part is the CRD schema (defaults and enums), which the port folds into
// `default_lws` and `validate_lws`. A create is `default_lws` then `validate_lws(new, None)`;
// an update starts from the created (defaulted) object, applies the change, and runs
// `default_lws` (the mutating webhook serves updates too) then `validate_lws(new, Some(old))`.
// ---------------------------------------------------------------------------------------------

// test/integration/webhooks/leaderworkerset_test.go@v0.10.0:53
#[test]
fn lws_webhook_defaulting_table() {
    struct Case {
        name: &'static str,
        make: fn() -> LeaderWorkerSet,
        expected: fn() -> LeaderWorkerSet,
    }
    let cases = [
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:67
        Case {
            name: "apply defaulting logic for replicas",
            make: || Lws::build(NS).with(|l| l.spec.replicas = None).obj(),
            expected: || {
                Lws::build(NS)
                    .replica(1)
                    .restart_policy("RecreateGroupOnPodRestart")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:77
        Case {
            name: "apply defaulting logic for size",
            make: || {
                Lws::build(NS)
                    .with(|l| l.spec.leader_worker_template.size = None)
                    .obj()
            },
            expected: || {
                Lws::build(NS)
                    .size(1)
                    .restart_policy("RecreateGroupOnPodRestart")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:87
        Case {
            name: "defaulting logic won't apply when shouldn't",
            make: || Lws::build(NS).replica(2).size(2).obj(),
            expected: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .leader_template_spec(leader_pod_spec())
                    .worker_template_spec(worker_pod_spec())
                    .restart_policy("RecreateGroupOnPodRestart")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:95
        Case {
            name: "defaulting logic applies when leaderworkertemplate.restartpolicy is not set",
            make: || Lws::build(NS).replica(2).size(2).restart_policy("").obj(),
            expected: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .restart_policy("RecreateGroupOnPodRestart")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:103
        Case {
            name: "defaulting logic won't apply when leaderworkertemplate.restartpolicy is set",
            make: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .restart_policy("None")
                    .obj()
            },
            expected: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .restart_policy("None")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:111
        Case {
            name: "DeprecatedDefaultRestartPolicy will be shift to NoneRestartPolicy",
            make: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .restart_policy("Default")
                    .obj()
            },
            expected: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .restart_policy("None")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:119
        Case {
            name: "defaulting logic applies when spec.startpolicy is not set",
            make: || Lws::build(NS).replica(2).size(2).obj(),
            expected: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .startup_policy("LeaderCreated")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:127
        Case {
            name: "defaulting logic applies when spec.startpolicy is set",
            make: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .startup_policy("LeaderReady")
                    .obj()
            },
            expected: || {
                Lws::build(NS)
                    .replica(2)
                    .size(2)
                    .startup_policy("LeaderReady")
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:135
        Case {
            name: "defaulting of subdomainPolicy applies when spec.NetworkConfig is not set",
            make: || Lws::build(NS).with(|l| l.spec.network_config = None).obj(),
            expected: || Lws::build(NS).subdomain_policy("Shared").obj(),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:145
        // Go's `RolloutStrategy{}` (a struct value) is `Some(RolloutStrategy::default())`.
        Case {
            name: "apply default rollout strategy",
            make: || {
                Lws::build(NS)
                    .rollout_strategy(RolloutStrategy::default())
                    .obj()
            },
            expected: || {
                Lws::build(NS)
                    .restart_policy("RecreateGroupOnPodRestart")
                    .rollout(int(1), int(0), Some(0))
                    .obj()
            },
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:159
        Case {
            name: "wouldn't apply default rollout strategy when configured",
            make: || Lws::build(NS).rollout(int(2), int(1), Some(2)).obj(),
            expected: || {
                Lws::build(NS)
                    .restart_policy("RecreateGroupOnPodRestart")
                    .rollout(int(2), int(1), Some(2))
                    .obj()
            },
        },
    ];
    for c in cases {
        let mut lws = (c.make)();
        default_lws(&mut lws);
        assert_eq!(validate_lws(&lws, None), Ok(()), "{}: creation", c.name);
        assert_eq!(lws.spec, (c.expected)().spec, "{}: defaulted spec", c.name);
    }
}

// test/integration/webhooks/leaderworkerset_test.go@v0.10.0:190
#[test]
fn lws_webhook_creation_and_update_table() {
    struct Case {
        name: &'static str,
        make: fn() -> LeaderWorkerSet,
        lws_creation_should_fail: bool,
        /// `updateLeaderWorkerSet`; a no-op when `update_should_fail` is None (no update step).
        update: fn(&mut LeaderWorkerSet),
        update_should_fail: Option<bool>,
    }
    let cases = [
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:219
        Case {
            name: "creation with invalid name should fail",
            make: || Lws::build(NS).name("2cube").obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:225
        Case {
            name: "creation with invalid replicas and size should fail",
            make: || Lws::build(NS).replica(100000).size(1000000).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:231
        Case {
            name: "creation with invalid size should fail",
            make: || Lws::build(NS).replica(2).size(-1).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:237
        Case {
            name: "creation with invalid replicas should fail",
            make: || Lws::build(NS).size(2).replica(-1).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:243
        Case {
            name: "creation with replicas greater than 1000000 should fail",
            make: || Lws::build(NS).size(2).replica(1000001).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:249
        Case {
            name: "creation with invalid startpolicy should fail",
            make: || Lws::build(NS).startup_policy("invalidValue").obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:255
        Case {
            name: "creation with invalid subGroupSize should fail",
            make: || Lws::build(NS).size(2).sub_group_size(-1).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:261
        Case {
            name: "creation with subGroupSize larger than size should fail",
            make: || Lws::build(NS).size(2).sub_group_size(3).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:267
        Case {
            name: "creation where (subGroupSize-1) is not divisible by 1 and \
                   SubGroupPolicyTypeLeaderExcluded should fail",
            make: || {
                Lws::build(NS)
                    .size(4)
                    .sub_group_size(2)
                    .sub_group_type("LeaderExcluded")
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:273
        Case {
            name: "update to size should succeed",
            make: || Lws::build(NS).size(2).obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.leader_worker_template.size = Some(3),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:282
        Case {
            name: "update with invalid replicas should fail (larger than maxInt32)",
            make: || Lws::build(NS).replica(100000).size(1).obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.leader_worker_template.size = Some(100000000),
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:291
        Case {
            name: "update with invalid replicas should fail (number is negative)",
            make: || Lws::build(NS).replica(1).size(1).obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.replicas = Some(-1),
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:300
        Case {
            name: "update with invalid startpolicy should fail",
            make: || Lws::build(NS).startup_policy("LeaderReady").obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.startup_policy = "invalidValue".to_string(),
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:309
        Case {
            name: "number of subGroupSize can not be updated",
            make: || Lws::build(NS).replica(1).size(2).sub_group_size(1).obj(),
            lws_creation_should_fail: false,
            update: |l| {
                let p = l.spec.leader_worker_template.sub_group_policy.as_mut();
                p.expect("subGroupPolicy").sub_group_size = Some(2);
            },
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:318
        Case {
            name: "number of subGroupSize cannot be added after update",
            make: || Lws::build(NS).replica(1).size(2).obj(),
            lws_creation_should_fail: false,
            update: |l| {
                l.spec.leader_worker_template.sub_group_policy = Some(SubGroupPolicy {
                    sub_group_size: Some(2),
                    sub_group_policy_type: None,
                })
            },
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:328
        Case {
            name: "number of subGroupSize can not be removed after update",
            make: || Lws::build(NS).replica(1).size(2).sub_group_size(1).obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.leader_worker_template.sub_group_policy = None,
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:337
        Case {
            name: "number of replicas can be updated",
            make: || Lws::build(NS).replica(1).size(1).obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.replicas = Some(3),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:346
        Case {
            name: "update with invalid replicas should fail (larger than 1000000)",
            make: || Lws::build(NS).replica(1).size(1).obj(),
            lws_creation_should_fail: false,
            update: |l| l.spec.replicas = Some(1000001),
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:355
        Case {
            name: "leader/workerTemplate can be updated",
            make: || Lws::build(NS).obj(),
            lws_creation_should_fail: false,
            update: |l| {
                let t = &mut l.spec.leader_worker_template;
                t.leader_template.as_mut().expect("leaderTemplate").spec = Some(worker_pod_spec());
                t.worker_template.spec = Some(leader_pod_spec());
            },
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:365
        Case {
            name: "subdomainPolicy can be updated from UniquePerReplica to Shared",
            make: || Lws::build(NS).subdomain_policy("UniquePerReplica").obj(),
            lws_creation_should_fail: false,
            update: |l| set_subdomain_policy(l, Some("Shared")),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:374
        Case {
            name: "subdomainPolicy can be updated from Shared to UniquePerReplica",
            make: || Lws::build(NS).subdomain_policy("Shared").obj(),
            lws_creation_should_fail: false,
            update: |l| set_subdomain_policy(l, Some("UniquePerReplica")),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:383
        Case {
            name: "subdomainPolicy can be updated from nil to UniquePerReplica",
            make: || Lws::build(NS).with(|l| l.spec.network_config = None).obj(),
            lws_creation_should_fail: false,
            update: |l| set_subdomain_policy(l, Some("UniquePerReplica")),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:394
        Case {
            name: "subdomainPolicy can be updated to nil",
            make: || Lws::build(NS).obj(),
            lws_creation_should_fail: false,
            update: |l| set_subdomain_policy(l, None),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:403
        Case {
            name: "set restart policy should succeed",
            make: || Lws::build(NS).restart_policy("None").obj(),
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:409
        Case {
            name: "set restart policy should fail when value is invalid",
            make: || Lws::build(NS).restart_policy("invalidValue").obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:417
        Case {
            name: "set invalid rolloutStrategyType should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| {
                        let s = l.spec.rollout_strategy.as_mut().expect("rolloutStrategy");
                        s.type_ = "invalidValue".to_string();
                    })
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:425
        Case {
            name: "set maxUnavailable greater than replicas is allowed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_unavailable = Some(int(10)))
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:433
        Case {
            name: "set maxUnavailable greater than 100% should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_unavailable = Some(pct("200%")))
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:441
        Case {
            name: "set maxUnavailable less than 0 should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_unavailable = Some(int(-1)))
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:449
        Case {
            name: "set maxSurge greater than replicas is allowed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_surge = Some(int(10)))
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:457
        Case {
            name: "set maxSurge greater than 100% should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_surge = Some(pct("200%")))
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:465
        Case {
            name: "set maxSurge less than 0 should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_surge = Some(int(-1)))
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:473
        Case {
            name: "set maxUnavailable and maxSurge both to 0 should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| ru(l).max_unavailable = Some(int(0)))
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:481
        Case {
            name: "set maxUnavailable to 0 and maxSurge to non-zero should succeed",
            make: || {
                Lws::build(NS)
                    .with(|l| {
                        ru(l).max_unavailable = Some(int(0));
                        ru(l).max_surge = Some(int(1));
                    })
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:490
        Case {
            name: "set replica to 0 no matter maxUnavailable or maxSurge is should be allowed",
            make: || {
                Lws::build(NS)
                    .with(|l| {
                        l.spec.replicas = Some(0);
                        ru(l).max_unavailable = Some(pct("25%"));
                        ru(l).max_surge = Some(pct("25%"));
                    })
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:500
        Case {
            name: "set maxSurge to 0 and maxUnavailable to non-zero should be failed",
            make: || {
                Lws::build(NS)
                    .with(|l| {
                        ru(l).max_unavailable = Some(pct("25%"));
                        ru(l).max_surge = Some(int(0));
                    })
                    .obj()
            },
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:509
        Case {
            name: "creation with negative partition should fail",
            make: || Lws::build(NS).with(|l| ru(l).partition = Some(-1)).obj(),
            lws_creation_should_fail: true,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:517
        Case {
            name: "creation with partition greater than replicas should succeed",
            make: || {
                Lws::build(NS)
                    .replica(3)
                    .with(|l| ru(l).partition = Some(5))
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:525
        Case {
            name: "creation with partition equal to replicas should succeed",
            make: || {
                Lws::build(NS)
                    .replica(3)
                    .with(|l| ru(l).partition = Some(3))
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:533
        Case {
            name: "creation with partition zero should succeed",
            make: || {
                Lws::build(NS)
                    .replica(3)
                    .with(|l| ru(l).partition = Some(0))
                    .obj()
            },
            lws_creation_should_fail: false,
            update: |_| {},
            update_should_fail: None,
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:541
        Case {
            name: "update partition should succeed",
            make: || Lws::build(NS).replica(5).obj(),
            lws_creation_should_fail: false,
            update: |l| ru(l).partition = Some(2),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:550
        Case {
            name: "update partition to negative should fail",
            make: || Lws::build(NS).replica(5).obj(),
            lws_creation_should_fail: false,
            update: |l| ru(l).partition = Some(-1),
            update_should_fail: Some(true),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:559
        Case {
            name: "update partition to greater than replicas should succeed",
            make: || Lws::build(NS).replica(5).obj(),
            lws_creation_should_fail: false,
            update: |l| ru(l).partition = Some(10),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:568
        Case {
            name: "update partition to equal replicas should succeed",
            make: || Lws::build(NS).replica(5).obj(),
            lws_creation_should_fail: false,
            update: |l| ru(l).partition = Some(5),
            update_should_fail: Some(false),
        },
        // test/integration/webhooks/leaderworkerset_test.go@v0.10.0:577
        Case {
            name: "update partition to zero should succeed",
            make: || Lws::build(NS).replica(5).obj(),
            lws_creation_should_fail: false,
            update: |l| ru(l).partition = Some(0),
            update_should_fail: Some(false),
        },
    ];
    for c in cases {
        let mut lws = (c.make)();
        default_lws(&mut lws);
        let created = validate_lws(&lws, None);
        if c.lws_creation_should_fail {
            assert!(created.is_err(), "{}: creation should fail", c.name);
            continue;
        }
        assert_eq!(created, Ok(()), "{}: creation should succeed", c.name);
        let Some(should_fail) = c.update_should_fail else {
            continue;
        };
        let old = lws.clone();
        (c.update)(&mut lws);
        default_lws(&mut lws);
        let updated = validate_lws(&lws, Some(&old));
        assert_eq!(
            updated.is_err(),
            should_fail,
            "{}: update: {updated:?}",
            c.name
        );
    }
}

/// `*lws.Spec.NetworkConfig.SubdomainPolicy = p` (or `= nil`) on a defaulted LWS.
fn set_subdomain_policy(l: &mut LeaderWorkerSet, p: Option<&str>) {
    let nc = l
        .spec
        .network_config
        .as_mut()
        .expect("networkConfig is defaulted");
    nc.subdomain_policy = p.map(str::to_string);
}

// ---------------------------------------------------------------------------------------------
// pkg/utils/...: the small utilities
// ---------------------------------------------------------------------------------------------

// pkg/utils/utils_test.go@v0.10.0:25
// Go sorts plain ints by an index function into a `[]int`, where an empty slot is the zero
// value 0; the port sorts objects by their group-index label into `Option`s. So each input is
// a pod labelled with its number, and upstream's `want` is read as: a 0 in slot 0 is the input
// 0, a 0 elsewhere is an empty slot (None).
#[test]
fn sort_by_index_table() {
    struct Case {
        name: &'static str,
        inputs: &'static [i32],
        length: i32,
        want: &'static [Option<i32>],
    }
    let cases = [
        // pkg/utils/utils_test.go@v0.10.0:33
        Case {
            name: "inputs equal to the length",
            inputs: &[3, 2, 1, 0],
            length: 4,
            want: &[Some(0), Some(1), Some(2), Some(3)],
        },
        // pkg/utils/utils_test.go@v0.10.0:40
        Case {
            name: "inputs less than the length",
            inputs: &[3, 1, 0],
            length: 4,
            want: &[Some(0), Some(1), None, Some(3)],
        },
        // pkg/utils/utils_test.go@v0.10.0:47
        Case {
            name: "inputs larger than the length",
            inputs: &[3, 0, 2, 5, 6, 7, 4],
            length: 4,
            want: &[Some(0), None, Some(2), Some(3)],
        },
    ];
    for c in cases {
        let pods: Vec<Arc<Pod>> = c
            .inputs
            .iter()
            .map(|i| {
                Arc::new(from_json(json!({"metadata": {
                    "name": format!("p-{i}"),
                    "labels": {"leaderworkerset.sigs.k8s.io/group-index": i.to_string()}
                }})))
            })
            .collect();
        let got: Vec<Option<i32>> = sort_by_index(pods, c.length)
            .iter()
            .map(|p| {
                p.as_ref().map(|p| {
                    let index = k8s::label(&p.metadata, keys::GROUP_INDEX).expect("labelled");
                    index.parse().expect("a number")
                })
            })
            .collect();
        assert_eq!(got, c.want, "{}: unexpected result", c.name);
    }
}

// pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:26
#[test]
fn get_parent_name_and_ordinal_table() {
    struct Case {
        name: &'static str,
        want_str: &'static str,
        want_ord: i32,
    }
    let cases = [
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:32
        Case {
            name: "lws-samples-132",
            want_str: "lws-samples",
            want_ord: 132,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:37
        Case {
            name: "lws-samples-132-u",
            want_str: "",
            want_ord: -1,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:42
        Case {
            name: "lws-samples-",
            want_str: "",
            want_ord: -1,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:47
        Case {
            name: "lws-samples-0",
            want_str: "lws-samples",
            want_ord: 0,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:52
        Case {
            name: "lws-samples--1",
            want_str: "lws-samples-",
            want_ord: 1,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:57
        Case {
            name: "lws-samples1",
            want_str: "",
            want_ord: -1,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:62
        Case {
            name: "lws-samples-1-0",
            want_str: "lws-samples-1",
            want_ord: 0,
        },
    ];
    for c in cases {
        let (parent, ord) = get_parent_name_and_ordinal(c.name);
        assert_eq!(parent, c.want_str, "{}: unexpected parent name", c.name);
        assert_eq!(ord, c.want_ord, "{}: unexpected ordinal", c.name);
    }
}

// pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:81
// With the tag's flags (`worker-sts-ready=available`, no terminating-pods override).
#[test]
fn statefulset_ready_table() {
    struct Case {
        name: &'static str,
        available_replicas: i32,
        current_revision: &'static str,
        update_revision: &'static str,
        want_bool: bool,
    }
    let cases = [
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:88
        Case {
            name: "statefulset is ready when AvailableReplicas equals Spec.Replicas and \
                   revisions match",
            available_replicas: 3,
            current_revision: "rev-1",
            update_revision: "rev-1",
            want_bool: true,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:102
        Case {
            name: "statefulset is not ready when AvailableReplicas less than Spec.Replicas",
            available_replicas: 2,
            current_revision: "rev-1",
            update_revision: "rev-1",
            want_bool: false,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:116
        Case {
            name: "statefulset is not ready when CurrentRevision != UpdateRevision",
            available_replicas: 3,
            current_revision: "rev-1",
            update_revision: "rev-2",
            want_bool: false,
        },
        // pkg/utils/statefulset/statefulset_utils_test.go@v0.10.0:130
        Case {
            name: "statefulset is not ready when both conditions fail",
            available_replicas: 2,
            current_revision: "rev-1",
            update_revision: "rev-2",
            want_bool: false,
        },
    ];
    let flags = Flags::v0_10_0();
    for c in cases {
        let sts: StatefulSet = from_json(json!({
            "spec": {"replicas": 3},
            "status": {
                "availableReplicas": c.available_replicas,
                "currentRevision": c.current_revision,
                "updateRevision": c.update_revision
            }
        }));
        assert_eq!(statefulset_ready(&sts, &flags), c.want_bool, "{}", c.name);
    }
}

// pkg/utils/pod/pod_utils_test.go@v0.10.0:28
#[test]
fn container_restarted_table() {
    struct Case {
        name: &'static str,
        status: Value,
        expect_restarted_container: bool,
    }
    let cases = [
        // pkg/utils/pod/pod_utils_test.go@v0.10.0:34
        Case {
            name: "Pod in running phase, InitContainerStatuses has restart count > 0",
            status: json!({"phase": "Running", "initContainerStatuses": [{"restartCount": 1}]}),
            expect_restarted_container: true,
        },
        // pkg/utils/pod/pod_utils_test.go@v0.10.0:46
        Case {
            name: "Pod in pending phase, InitContainerStatuses has restart count > 0",
            status: json!({"phase": "Pending", "initContainerStatuses": [{"restartCount": 1}]}),
            expect_restarted_container: true,
        },
        // pkg/utils/pod/pod_utils_test.go@v0.10.0:58
        Case {
            name: "Pod in running phase, ContainerStatuses has restart count > 0",
            status: json!({"phase": "Running", "containerStatuses": [{"restartCount": 1}]}),
            expect_restarted_container: true,
        },
        // pkg/utils/pod/pod_utils_test.go@v0.10.0:70
        Case {
            name: "Pod in Failed status",
            status: json!({"phase": "Failed"}),
            expect_restarted_container: false,
        },
        // pkg/utils/pod/pod_utils_test.go@v0.10.0:78
        Case {
            name: "Pod in running phase, InitContainerStatuses has restart count = 0, \
                   ContainerStatuses = 0",
            status: json!({
                "phase": "Running",
                "initContainerStatuses": [{"restartCount": 0}],
                "containerStatuses": [{"restartCount": 0}]
            }),
            expect_restarted_container: false,
        },
    ];
    for c in cases {
        let pod: Pod = from_json(json!({"status": c.status}));
        assert_eq!(
            container_restarted(&pod),
            c.expect_restarted_container,
            "{}",
            c.name
        );
    }
}

// pkg/utils/controller/controller_utils_test.go@v0.10.0:34
// Skipped: "Nil LeaderWorkerSet" (:113); the port takes `&LeaderWorkerSet`, which cannot be
// nil. Upstream's empty slice is the port's empty Vec.
#[test]
fn get_pvc_apply_configuration_table() {
    struct Case {
        name: &'static str,
        templates: Option<Value>,
        expected: Value,
    }
    let cases = [
        // pkg/utils/controller/controller_utils_test.go@v0.10.0:40
        Case {
            name: "No PVC templates in LeaderWorkerSet",
            templates: None,
            expected: json!([]),
        },
        // pkg/utils/controller/controller_utils_test.go@v0.10.0:45
        Case {
            name: "Single PVC template with all fields",
            templates: Some(json!([{"metadata": {"name": "pvc1"}, "spec": pvc1_spec_json()}])),
            expected: json!([{
                "metadata": {"name": "pvc1", "namespace": "default"},
                "spec": pvc1_spec_json()
            }]),
        },
        // pkg/utils/controller/controller_utils_test.go@v0.10.0:83
        Case {
            name: "Multiple PVC templates with partial fields",
            templates: Some(json!([
                {"metadata": {"name": "pvc1"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
                {
                    "metadata": {"name": "pvc2"},
                    "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "fast"}
                }
            ])),
            expected: json!([
                {
                    "metadata": {"name": "pvc1", "namespace": "default"},
                    "spec": {"accessModes": ["ReadWriteOnce"]}
                },
                {
                    "metadata": {"name": "pvc2", "namespace": "default"},
                    "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "fast"}
                }
            ]),
        },
    ];
    for c in cases {
        let templates: Option<Vec<PersistentVolumeClaim>> = c.templates.map(from_json);
        let lws = Lws::basic("test-sample", NS)
            .with(|l| l.spec.leader_worker_template.volume_claim_templates = templates)
            .obj();
        let expected: Vec<PersistentVolumeClaim> = from_json(c.expected);
        assert_eq!(
            get_pvc_apply_configuration(&lws),
            expected,
            "{}: Unexpected PVC apply configuration",
            c.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// pkg/utils/accelerators/tpu_test.go@v0.10.0
// ---------------------------------------------------------------------------------------------

/// `wrappers.MakeContainerWithTPU(name)`, with `env` if given (`MakeContainerWithTPUAndEnvVars`).
fn tpu_container(name: &str, env: Option<(&str, &str)>) -> Value {
    let mut c = json!({"name": name, "image": "busybox",
                       "resources": {"limits": {"google.com/tpu": "4"}}});
    if let Some((n, v)) = env {
        c["env"] = json!([{"name": n, "value": v}]);
    }
    c
}

/// A pod of the TPU tests: `spec` a PodSpec JSON, labels and annotations as pairs.
fn tpu_pod(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)], spec: Value) -> Pod {
    from_json(json!({
        "metadata": {"name": name, "namespace": NS, "labels": map(labels),
                     "annotations": map(annotations)},
        "spec": spec
    }))
}

/// `wrappers.MakeLeaderPodSpecWithTPUResource`; with `port`, `MakeLeaderPodSpecWithTPUAndEnvVars`
/// with TPU_PROCESS_PORT.
fn leader_tpu_spec(port: Option<&str>) -> Value {
    let env = port.map(|p| (TPU_PROCESS_PORT_NAME, p));
    json!({"containers": [tpu_container("worker", env)], "subdomain": "default"})
}

/// The value of `name` in a container's env, as `GetEnvVarValueIfInContainer`.
fn env_of(c: &k8s_openapi::api::core::v1::Container, name: &str) -> Option<String> {
    match get_env_var_value_if_in_container(c, name) {
        (true, v) => Some(v),
        (false, _) => None,
    }
}

/// The expected variables of a TPU test case: hostnames, id, name, addresses, port.
struct TpuWant<'a> {
    hostnames: &'a str,
    id: &'a str,
    name: &'a str,
    addresses: &'a str,
    port: &'a str,
}

const LRT: (&str, &str) = (LEADER_REQUESTS_TPUS_ANNOTATION_KEY, "true");

// pkg/utils/accelerators/tpu_test.go@v0.10.0:34
#[test]
fn add_tpu_variables_table() {
    struct Case<'a> {
        name: &'static str,
        pod: Pod,
        size: i64,
        want: Option<TpuWant<'a>>,
        expected_error: bool,
    }
    let wi = |w| [(keys::WORKER_INDEX, w)];
    let two = |p1: Option<&'static str>, p2: Option<&'static str>| {
        let c1 = tpu_container("c1", p1.map(|p| (TPU_PROCESS_PORT_NAME, p)));
        let c2 = tpu_container("c2", p2.map(|p| (TPU_PROCESS_PORT_NAME, p)));
        json!({"containers": [c1, c2], "subdomain": "default"})
    };
    let two_hosts =
        "test-sample-0.default,test-sample-0.default,test-sample-0-1.default,test-sample-0-1.default";
    let want = |hostnames, id, name, addresses, port| {
        Some(TpuWant {
            hostnames,
            id,
            name,
            addresses,
            port,
        })
    };
    let two_addresses = |p1: i32, p2: i32| {
        format!("test-sample-0.default:{p1},test-sample-0.default:{p2},test-sample-0-1.default:{p1},test-sample-0-1.default:{p2}")
    };
    let (a8476, a8478) = (two_addresses(8476, 8477), two_addresses(8478, 8479));
    let cases = [
        // :47
        Case {
            name: "Leader requests TPU resources, leader pod",
            pod: tpu_pod("test-sample-0", &wi("0"), &[LRT], leader_tpu_spec(None)),
            size: 2,
            want: want(
                "test-sample-0.default,test-sample-0-1.default",
                "0",
                "test-sample-0",
                "test-sample-0.default:8476,test-sample-0-1.default:8476",
                "8476",
            ),
            expected_error: false,
        },
        // :69
        Case {
            name: "Leader requests TPU resources, worker pod",
            pod: tpu_pod("test-sample-0-1", &wi("1"), &[LRT], leader_tpu_spec(None)),
            size: 2,
            want: want(
                "test-sample-0.default,test-sample-0-1.default",
                "1",
                "test-sample-0",
                "test-sample-0.default:8476,test-sample-0-1.default:8476",
                "8476",
            ),
            expected_error: false,
        },
        // :91
        Case {
            name: "Leader requests TPU resources, leader pod",
            pod: tpu_pod("test-sample-0", &wi("0"), &[], leader_tpu_spec(None)),
            size: 2,
            want: want(
                "test-sample-0.default,test-sample-0-1.default",
                "0",
                "test-sample-0",
                "test-sample-0.default:8476,test-sample-0-1.default:8476",
                "8476",
            ),
            expected_error: false,
        },
        // :110
        Case {
            name: "Leader does not request TPU resources, worker pod",
            pod: tpu_pod("test-sample-0-1", &wi("1"), &[], leader_tpu_spec(None)),
            size: 2,
            want: want(
                "test-sample-0-1.default",
                "0",
                "test-sample-0",
                "test-sample-0-1.default:8476",
                "8476",
            ),
            expected_error: false,
        },
        // :129
        Case {
            name: "Test multi-container TPU_PROCESS_ADDRESSES, leader pod",
            pod: tpu_pod("test-sample-0", &wi("0"), &[LRT], two(None, None)),
            size: 2,
            want: want(two_hosts, "0", "test-sample-0", &a8476, "8476"),
            expected_error: false,
        },
        // :157
        Case {
            name: "Test multi-container TPU_PROCESS_ADDRESSES with custom ports",
            pod: tpu_pod(
                "test-sample-0",
                &wi("0"),
                &[LRT],
                two(Some("8478"), Some("8479")),
            ),
            size: 2,
            want: want(two_hosts, "0", "test-sample-0", &a8478, "8478"),
            expected_error: false,
        },
        // :185 (the Go pod has no namespace; nothing reads it)
        Case {
            name: "TPU resources in init containers",
            pod: tpu_pod(
                "sample-0",
                &wi("0"),
                &[],
                json!({"initContainers": [tpu_container("i1", None)], "subdomain": "default"}),
            ),
            size: 1,
            want: want(
                "sample-0.default",
                "0",
                "sample-0",
                "sample-0.default:8476",
                "8476",
            ),
            expected_error: false,
        },
        // :208
        Case {
            name: "Invalid pod name",
            pod: tpu_pod(
                "invalidname",
                &[],
                &[],
                json!({"containers": [tpu_container("c1", None)]}),
            ),
            size: 1,
            want: None,
            expected_error: true,
        },
        // :219
        Case {
            name: "Zero containers requesting TPUs",
            pod: tpu_pod("", &[], &[], json!({"containers": [{"name": "c1"}]})),
            size: 1,
            want: None,
            expected_error: false,
        },
    ];
    for mut c in cases {
        // "Ensure subdomain is set for consistency in tests".
        let spec = c.pod.spec.as_mut().expect("a spec");
        spec.subdomain.get_or_insert_with(|| "default".into());
        let result = add_tpu_variables(&mut c.pod, c.size);
        if c.expected_error {
            assert!(result.is_err(), "{}: expected error but got nil", c.name);
            continue;
        }
        result.unwrap_or_else(|e| panic!("{}: Error parsing parent: {e}", c.name));
        let pod_name = k8s::name(&c.pod.metadata).to_string();
        let worker_label = k8s::label(&c.pod.metadata, keys::WORKER_INDEX) == Some("0");
        let requests =
            k8s::annotation(&c.pod.metadata, LEADER_REQUESTS_TPUS_ANNOTATION_KEY) == Some("true");
        let spec = c.pod.spec.as_mut().expect("a spec");
        let containers = get_containers_requesting_tpus(spec);
        let Some(want) = c.want else {
            assert!(containers.is_empty(), "{}", c.name);
            for x in spec
                .containers
                .iter()
                .chain(spec.init_containers.iter().flatten())
            {
                assert_eq!(
                    x.env, None,
                    "{}: Expected no env vars in container {}",
                    c.name, x.name
                );
            }
            continue;
        };
        let n = containers.len() as i64;
        for (i, x) in containers.iter().enumerate() {
            let pod_worker_index = if worker_label {
                0
            } else {
                let (_, ordinal) = get_parent_name_and_ordinal(&pod_name);
                i64::from(ordinal) - i64::from(!requests)
            };
            let id = (i as i64 + n * pod_worker_index).to_string();
            if i == 0 {
                // The Go case's expectedTpuWorkerId, which its loop derives instead.
                assert_eq!(id, want.id, "{}", c.name);
            }
            let port = (want.port.parse::<i64>().unwrap() + i as i64).to_string();
            assert_eq!(
                env_of(x, TPU_NAME).as_deref(),
                Some(want.name),
                "{}",
                c.name
            );
            assert_eq!(env_of(x, TPU_WORKER_ID), Some(id), "{}", c.name);
            assert_eq!(
                env_of(x, TPU_WORKER_HOSTNAMES).as_deref(),
                Some(want.hostnames),
                "{}",
                c.name
            );
            assert_eq!(
                env_of(x, TPU_PROCESS_ADDRESSES).as_deref(),
                Some(want.addresses),
                "{}",
                c.name
            );
            assert_eq!(env_of(x, TPU_PROCESS_PORT_NAME), Some(port), "{}", c.name);
        }
    }
}

// pkg/utils/accelerators/tpu_test.go@v0.10.0:295
#[test]
fn add_tpu_variables_skip_table() {
    let c1 = json!({"containers": [{"name": "c1",
        "resources": {"limits": {"google.com/tpu": "1"}},
        "env": [{"name": TPU_WORKER_ID, "value": "0"}]}]});
    let cases = [
        // :301
        (
            "Skip injection if TPU_WORKER_ID already exists, non-subgroup",
            tpu_pod("", &[], &[], c1.clone()),
        ),
        // :317
        (
            "Skip injection if TPU_WORKER_ID already exists, subgroup",
            tpu_pod("", &[], &[(keys::SUBGROUP_SIZE_V0_10, "1")], c1),
        ),
    ];
    for (name, mut pod) in cases {
        add_tpu_variables(&mut pod, 1).unwrap_or_else(|e| panic!("{name}: Unexpected error: {e}"));
        let env = pod.spec.unwrap().containers[0]
            .env
            .clone()
            .unwrap_or_default();
        assert_eq!(
            env.len(),
            1,
            "{name}: Expected skip injection, but env changed: {env:?}"
        );
    }
}

// pkg/utils/accelerators/tpu_test.go@v0.10.0:348
// The Go test reads the first container's variables by name; a case's missing expectation
// (the error cases) is None.
#[test]
fn add_tpu_variables_sub_group_table() {
    struct Case {
        name: &'static str,
        pod: Pod,
        want: Option<TpuWant<'static>>,
    }
    let sg = keys::SUBGROUP_SIZE_V0_10;
    let (wi, si) = (keys::WORKER_INDEX, keys::SUBGROUP_INDEX);
    let c1 = || json!({"containers": [tpu_container("c1", None)]});
    let cases = [
        // :360
        Case {
            name: "Leader requests TPU resources, leader pod",
            pod: tpu_pod("test-sample-0", &[(wi, "0"), (si, "0")], &[(sg, "1")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "test-sample-0.default",
                id: "0",
                name: "test-sample-0",
                addresses: "test-sample-0.default:8476",
                port: "8476",
            }),
        },
        // :382
        Case {
            name: "Leader requests TPU resources, leader pod, size=2",
            pod: tpu_pod("test-sample-0", &[(wi, "0"), (si, "0")], &[(sg, "2")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "test-sample-0.default,test-sample-0-1.default",
                id: "0",
                name: "test-sample-0",
                addresses: "test-sample-0.default:8476,test-sample-0-1.default:8476",
                port: "8476",
            }),
        },
        // :404
        Case {
            name: "Leader requests TPU resources",
            pod: tpu_pod("test-sample-1-3", &[(wi, "3"), (si, "0")], &[LRT, (sg, "5")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "test-sample-1.default,test-sample-1-1.default,test-sample-1-2.default,test-sample-1-3.default,test-sample-1-4.default",
                id: "3",
                name: "test-sample-1",
                addresses: "test-sample-1.default:8476,test-sample-1-1.default:8476,test-sample-1-2.default:8476,test-sample-1-3.default:8476,test-sample-1-4.default:8476",
                port: "8476",
            }),
        },
        // :427
        Case {
            name: "Leader requests TPU resources, worker with subgroup index > 0",
            pod: tpu_pod("test-sample-1-7", &[(wi, "7"), (si, "1")], &[LRT, (sg, "4")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "test-sample-1-4.default,test-sample-1-5.default,test-sample-1-6.default,test-sample-1-7.default",
                id: "3",
                name: "test-sample-1",
                addresses: "test-sample-1-4.default:8476,test-sample-1-5.default:8476,test-sample-1-6.default:8476,test-sample-1-7.default:8476",
                port: "8476",
            }),
        },
        // :450
        Case {
            name: "Leader does not request TPU resources, worker with subgroup index > 0",
            pod: tpu_pod("test-sample-1-5", &[(wi, "5"), (si, "1")], &[(sg, "4")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "test-sample-1-5.default,test-sample-1-6.default,test-sample-1-7.default,test-sample-1-8.default",
                id: "0",
                name: "test-sample-1",
                addresses: "test-sample-1-5.default:8476,test-sample-1-6.default:8476,test-sample-1-7.default:8476,test-sample-1-8.default:8476",
                port: "8476",
            }),
        },
        // :472
        Case {
            name: "Leader does not request TPU resources, worker with subgroup index > 0, LeaderOnly Subgroup",
            pod: tpu_pod("test-sample-0-2", &[(wi, "2"), (si, "0")], &[(sg, "2"), (keys::SUBGROUP_POLICY_TYPE, "LeaderExcluded")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "test-sample-0-1.default,test-sample-0-2.default",
                id: "1",
                name: "test-sample-0",
                addresses: "test-sample-0-1.default:8476,test-sample-0-2.default:8476",
                port: "8476",
            }),
        },
        // :495
        Case {
            name: "Leader does not request TPU resources, worker with subgroup index > 0, TPU_PROCESS_PORT is already set",
            pod: tpu_pod("test-sample-1-5", &[(wi, "5"), (si, "1")], &[(sg, "4")], leader_tpu_spec(Some("8478"))),
            want: Some(TpuWant {
                hostnames: "test-sample-1-5.default,test-sample-1-6.default,test-sample-1-7.default,test-sample-1-8.default",
                id: "0",
                name: "test-sample-1",
                addresses: "test-sample-1-5.default:8478,test-sample-1-6.default:8478,test-sample-1-7.default:8478,test-sample-1-8.default:8478",
                port: "8478",
            }),
        },
        // :517
        Case {
            name: "Invalid size",
            pod: tpu_pod("", &[], &[(sg, "invalid")], c1()),
            want: None,
        },
        // :529
        Case {
            name: "Invalid index",
            pod: tpu_pod("", &[(si, "invalid")], &[(sg, "1")], c1()),
            want: None,
        },
        // :542
        Case {
            name: "Invalid worker index",
            pod: tpu_pod("", &[(si, "0"), (wi, "invalid")], &[(sg, "1")], c1()),
            want: None,
        },
        // :558
        Case {
            name: "Invalid name",
            pod: tpu_pod("invalidname", &[(si, "0"), (wi, "1")], &[(sg, "1")], c1()),
            want: None,
        },
        // :575
        Case {
            name: "Worker 1 of group size 3 with subgroup size 1",
            pod: tpu_pod("prefill-0-1", &[(wi, "1"), (si, "1")], &[LRT, (sg, "1")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "prefill-0-1.default",
                id: "0",
                name: "prefill-0",
                addresses: "prefill-0-1.default:8476",
                port: "8476",
            }),
        },
        // :598
        Case {
            name: "Worker 2 of group size 3 with subgroup size 1",
            pod: tpu_pod("prefill-0-2", &[(wi, "2"), (si, "2")], &[LRT, (sg, "1")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "prefill-0-2.default",
                id: "0",
                name: "prefill-0",
                addresses: "prefill-0-2.default:8476",
                port: "8476",
            }),
        },
        // :621
        Case {
            name: "Leader does not request TPU resources, subGroupSize=1, worker 1",
            pod: tpu_pod("prefill-0-1", &[(wi, "1"), (si, "1")], &[(sg, "1")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "prefill-0-1.default",
                id: "0",
                name: "prefill-0",
                addresses: "prefill-0-1.default:8476",
                port: "8476",
            }),
        },
        // :643
        Case {
            name: "Leader does not request TPU resources, subGroupSize=1, worker 2",
            pod: tpu_pod("prefill-0-2", &[(wi, "2"), (si, "2")], &[(sg, "1")], leader_tpu_spec(None)),
            want: Some(TpuWant {
                hostnames: "prefill-0-2.default",
                id: "0",
                name: "prefill-0",
                addresses: "prefill-0-2.default:8476",
                port: "8476",
            }),
        },
    ];
    for Case {
        name,
        mut pod,
        want,
    } in cases
    {
        let result = add_tpu_variables_sub_group(&mut pod);
        let Some(want) = want else {
            assert!(result.is_err(), "{name}: expected error but got nil");
            continue;
        };
        result.unwrap_or_else(|e| panic!("{name}: Error parsing parent: {e}"));
        let c = &pod.spec.as_ref().unwrap().containers[0];
        for (var, value) in [
            (TPU_WORKER_HOSTNAMES, want.hostnames),
            (TPU_WORKER_ID, want.id),
            (TPU_NAME, want.name),
            (TPU_PROCESS_ADDRESSES, want.addresses),
            (TPU_PROCESS_PORT_NAME, want.port),
        ] {
            assert_eq!(env_of(c, var).as_deref(), Some(value), "{name}: {var}");
        }
    }
    // :665 Zero containers requesting TPUs: no error, no env.
    let mut pod = tpu_pod(
        "",
        &[],
        &[(sg, "1")],
        json!({"containers": [{"name": "c1"}]}),
    );
    add_tpu_variables_sub_group(&mut pod).unwrap();
    assert_eq!(pod.spec.unwrap().containers[0].env, None);
}

// pkg/utils/accelerators/tpu_test.go@v0.10.0:724 (TestGetContainersRequestingTPUs), :792
// (TestGetContainerRequestingTPUs) and :840 (TestPodRequestsTPUs).
#[test]
fn containers_requesting_tpus_tables() {
    let spec = |v: Value| -> PodSpec { from_json(v) };
    let c = |n| tpu_container(n, None);
    for (line, mut s, want) in [
        (":731", spec(json!({"containers": [c("c1")]})), 1),
        (":740", spec(json!({"containers": [{"name": "c1"}]})), 0),
        (":751", spec(json!({"containers": [c("c1"), c("c2")]})), 2),
        (
            ":761",
            spec(json!({"containers": [c("c1"), {"name": "c2"}]})),
            1,
        ),
        (":773", spec(json!({"initContainers": [c("i1")]})), 1),
    ] {
        assert_eq!(get_containers_requesting_tpus(&mut s).len(), want, "{line}");
    }
    let worker = || -> k8s_openapi::api::core::v1::Container { from_json(c("worker")) };
    let two = json!({"containers": [c("worker"), {"name": "leader", "image": IMAGE,
        "ports": [{"containerPort": 8080, "protocol": "TCP"}]}], "subdomain": "default"});
    for (line, mut s, want) in [
        (":799", spec(leader_tpu_spec(None)), Some(worker())),
        (":812", spec(two), Some(worker())),
        (":825", leader_pod_spec(), None),
    ] {
        assert_eq!(
            get_container_requesting_tpus(&mut s).cloned(),
            want,
            "{line}"
        );
    }
    for (line, s, want) in [
        (":847", spec(json!({"containers": [c("c1")]})), true),
        (
            ":856",
            spec(
                json!({"containers": [{"name": "", "resources": {"requests": {"google.com/tpu": "1"}}}]}),
            ),
            true,
        ),
        (":869", spec(json!({"initContainers": [c("c1")]})), true),
        (":878", PodSpec::default(), false),
    ] {
        assert_eq!(pod_requests_tpus(&s), want, "{line}");
    }
}

// Not ported from pkg/utils at v0.10.0:
// - pod/pod_utils_test.go TestAddLWSVariables (:103), TestGetEnvVarIfInContainer (:188): the
//   port's `add_lws_variables` is private to the pod webhook.

/// One reconcile's `getOrCreateRevisionIfNonExist` with no leader StatefulSet in the cache,
/// under `revision-at-creation=<reuse>` (finding Z07, not an upstream test).
fn revision_with_no_sts(api: &FakeApi, lws: &LeaderWorkerSet, reuse: bool) -> ControllerRevision {
    let flags = reuse_flags(reuse);
    let ctx = Ctx {
        flags: &flags,
        now: Time(Timestamp::UNIX_EPOCH),
    };
    let r = block_on(get_or_create_revision_if_non_exist(api, &ctx, None, lws));
    (*r.expect("a revision")).clone()
}

/// v0.10.0 with `revision-at-creation=reuse` when `reuse` (Z07's proposed fix).
fn reuse_flags(reuse: bool) -> Flags {
    Flags {
        revision_reuse_at_creation: reuse,
        ..Flags::v0_10_0()
    }
}

fn z07_lws(size: i32) -> LeaderWorkerSet {
    let mut l = LeaderWorkerSet::default();
    l.metadata.name = Some("test-sample".into());
    l.metadata.namespace = Some("default".into());
    l.metadata.uid = Some("uid-1".into());
    l.spec.leader_worker_template.size = Some(size);
    l
}

/// Z07: a second reconcile that still does not see the leader StatefulSet it created makes
/// a second revision of the same key upstream (numbered 2, so its name is free), and reuses
/// the first with `revision-at-creation=reuse`.
#[test]
fn z07_a_revision_of_the_current_templates_is_created_twice_upstream_and_reused_with_the_fix() {
    let l = z07_lws(2);
    let api = FakeApi::default();
    let first = revision_with_no_sts(&api, &l, false);
    let key = get_revision_key(&first.metadata).to_string();
    assert_eq!(key, super::revision::current_revision_key(&l));
    let second = revision_with_no_sts(&api, &l, false);
    assert_eq!(get_revision_key(&second.metadata), key);
    let (n1, n2) = (
        format!("test-sample-{key}-1"),
        format!("test-sample-{key}-2"),
    );
    assert_eq!(api.names(), [n1.clone(), n2]);

    let api = FakeApi::default();
    revision_with_no_sts(&api, &l, true);
    let again = revision_with_no_sts(&api, &l, true);
    assert_eq!(k8s::name(&again.metadata), n1);
    assert_eq!(api.names(), [n1]);
}

/// The Z07 fix reuses only a revision of the current templates: after a template change (no
/// leader StatefulSet seen) it creates one, numbered above the old.
#[test]
fn z07_reuse_creates_a_revision_when_the_templates_changed() {
    let api = FakeApi::default();
    let old = revision_with_no_sts(&api, &z07_lws(2), true);
    let new = revision_with_no_sts(&api, &z07_lws(3), true);
    assert_ne!(
        get_revision_key(&new.metadata),
        get_revision_key(&old.metadata)
    );
    assert_eq!(new.revision, Some(2));
    assert_eq!(api.names().len(), 2);
}

/// Z07 after an update (not an upstream test): a reconcile that reads the leader StatefulSet
/// from before the controller's own apply takes the new templates for an update again. The
/// revision `getUpdatedRevision` returns then has a key already stored; upstream creates it
/// again (`existing_updated_revision` finds nothing to reuse), the fix reuses the stored one.
#[test]
fn z07_after_an_update_the_stored_revision_of_the_new_key_is_reused_only_with_the_fix() {
    let api = FakeApi::default();
    revision_with_no_sts(&api, &z07_lws(2), false);
    let stored = revision_with_no_sts(&api, &z07_lws(3), false);
    let updated_lws = z07_lws(3);
    let updated = block_on(new_revision(&api, &updated_lws, "")).expect("a revision");
    assert_eq!(
        get_revision_key(&updated.metadata),
        get_revision_key(&stored.metadata)
    );
    for (reuse, want) in [(false, None), (true, Some(k8s::name(&stored.metadata)))] {
        let flags = reuse_flags(reuse);
        let ctx = Ctx {
            flags: &flags,
            now: Time(Timestamp::UNIX_EPOCH),
        };
        let found = block_on(existing_updated_revision(
            &api,
            &ctx,
            &updated_lws,
            &updated,
        ))
        .expect("a lookup");
        assert_eq!(found.as_deref().map(|r| k8s::name(&r.metadata)), want);
    }
}

/// Z11 (not an upstream test): an LWS created again (another UID) whose first reconcile finds
/// its predecessor's leader StatefulSet. No revision of its own carries that StatefulSet's key
/// (the predecessor's is controlled by the old UID), so the "missing revision" stores the
/// current templates under the predecessor's key, and then no update is seen.
#[test]
fn z11_a_recreated_lws_stores_its_templates_under_its_predecessors_key() {
    let api = FakeApi::default();
    let predecessor = revision_with_no_sts(&api, &z07_lws(2), false);
    let old_key = get_revision_key(&predecessor.metadata).to_string();
    let mut again = z07_lws(3);
    again.metadata.uid = Some("uid-2".into());
    let new_key = super::revision::current_revision_key(&again);
    assert_ne!(old_key, new_key, "new templates");
    let mut sts = StatefulSet::default();
    sts.metadata.labels = Some(BTreeMap::from([(
        keys::TEMPLATE_REVISION_HASH.to_string(),
        old_key.clone(),
    )]));
    let flags = Flags::v0_10_0();
    let ctx = Ctx {
        flags: &flags,
        now: Time(Timestamp::UNIX_EPOCH),
    };
    let r = block_on(get_or_create_revision_if_non_exist(
        &api,
        &ctx,
        Some(&sts),
        &again,
    ))
    .expect("a revision");
    assert_eq!(get_revision_key(&r.metadata), old_key);
    assert!(
        k8s::name(&r.metadata).contains(&new_key),
        "named after the current templates: {}",
        k8s::name(&r.metadata)
    );
    let updated = block_on(get_updated_revision(&api, Some(&sts), &again, &r)).unwrap();
    assert!(updated.is_none(), "no update seen");
}
