//! Ready-made worlds for benches and tests: an LWS of any size brought to rest quickly in the
//! manual (envtest-like) mode, where the test plays the StatefulSet controller and kubelet.

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lws::api::{keys, LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate};
use lws::k8s;
use lws::profile::Profile;

use crate::api::set_pod_condition;
use crate::controller::ControllerConfig;
use crate::world::{ClusterConfig, World};

/// v0.4.1 with every known bug fixed: the upstream fixes of the zoo (docs/bug-zoo.md) and the
/// fixes proposed for the findings Z01-Z03. Fuzz campaigns measure each bug against it.
pub use lws::profile::ALL_FIXED;

pub const NAME: &str = "bench";
pub const NS: &str = "default";

/// A one-container pod template running `image`.
pub fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "vllm".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

/// An LWS named [`NAME`] of `groups` groups of `size` pods; the webhook fills the defaults.
pub fn lws(groups: i32, size: i32, image: &str) -> LeaderWorkerSet {
    LeaderWorkerSet {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: LeaderWorkerSetSpec {
            replicas: Some(groups),
            leader_worker_template: LeaderWorkerTemplate {
                worker_template: template(image),
                size: Some(size),
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

fn settle(w: &mut World) {
    let t = w.now_ms + 10_000;
    w.run_until(t);
}

/// Group `i` is on the live template and fully ready: its leader relabelled and Ready; with a
/// create-only release its worker StatefulSet is deleted so the pod controller re-creates it
/// from the leader (upstream's `SetPodGroupToReady`). `ready_worker_sets` then readies it.
fn ready_group(w: &mut World, i: i32, hash: &str, recreate_worker_sts: bool) {
    let name = format!("{NAME}-{i}");
    let pod = w.api.get::<Pod>(NS, &name).expect("leader exists");
    let mut p = (*pod).clone();
    p.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(keys::TEMPLATE_REVISION_HASH.into(), hash.into());
    let p = w.api.update("test", p).expect("relabel");
    let mut p = (*p).clone();
    p.status.get_or_insert_with(Default::default).phase = Some("Running".into());
    set_pod_condition(&mut p, "Ready", "True", None, w.now_ms);
    w.api.update_status("test", p).expect("ready");
    if recreate_worker_sts {
        let t = w.now_ms + 1_000;
        w.run_until(t);
        let _ =
            w.api
                .delete::<StatefulSet>("test", NS, &name, &crate::api::DeleteOptions::default());
    }
}

fn ready_worker_sets(w: &mut World) {
    for s in w.api.list::<StatefulSet>(
        Some(NS),
        &crate::api::Selector::labels([(keys::SET_NAME, NAME)]),
    ) {
        if k8s::name(&s.metadata) == NAME {
            continue;
        }
        let mut s = (*s).clone();
        let n = s.spec.replicas.unwrap_or(1);
        s.status = Some(StatefulSetStatus {
            replicas: n,
            ready_replicas: Some(n),
            available_replicas: Some(n),
            ..Default::default()
        });
        w.api.update_status("test", s).expect("worker sts status");
    }
}

/// A leader pod as upstream's harness makes one (`CreateLeaderPods`): owned by the leader
/// StatefulSet, labelled with `hash`, not yet Ready. The pod webhook adds the rest.
pub fn leader_pod(sts: &ObjectMeta, lws_name: &str, index: i32, hash: &str, size: i32) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{lws_name}-{index}")),
            namespace: sts.namespace.clone(),
            labels: Some(
                [
                    (keys::SET_NAME.to_string(), lws_name.to_string()),
                    (keys::WORKER_INDEX.to_string(), "0".to_string()),
                    (keys::TEMPLATE_REVISION_HASH.to_string(), hash.to_string()),
                ]
                .into(),
            ),
            annotations: Some([(keys::SIZE.to_string(), size.to_string())].into()),
            owner_references: Some(vec![k8s::controller_ref("apps/v1", "StatefulSet", sts)]),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "leader".into(),
                image: Some("nginx:1.14.2".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

/// A manual-mode world with an LWS of `groups` groups of `size`, every group ready, under
/// `profile`.
pub fn lws_at_rest(groups: i32, size: i32, profile: &str) -> World {
    let profile = Profile::parse(profile).expect("valid profile");
    let mut w = World::new(
        1,
        ClusterConfig {
            manual: true,
            node_count: 0,
            ..Default::default()
        },
    );
    w.install_controller(ControllerConfig::new(profile.clone()));
    settle(&mut w);
    w.api
        .create("test", lws(groups, size, "v1"))
        .expect("create lws");
    settle(&mut w);
    let hash = current_hash(&w, &profile);
    let sts = w.api.get::<StatefulSet>(NS, NAME).expect("leader sts");
    for i in 0..groups {
        let pod = leader_pod(&sts.metadata, NAME, i, &hash, size);
        w.api.create("test", pod).expect("leader pod");
    }
    settle(&mut w);
    for i in 0..groups {
        ready_group(&mut w, i, &hash, false);
    }
    settle(&mut w);
    ready_worker_sets(&mut w);
    settle(&mut w);
    w
}

/// The revision key the controller labels the current groups with: our template hash for
/// v0.3.0 and v0.4.1; for v0.10.0 the key of the ControllerRevision the controller created,
/// read off the leader StatefulSet it wrote (call after `settle`).
pub fn current_hash(w: &World, profile: &Profile) -> String {
    if profile.release == lws::profile::Release::V0_10_0 {
        let sts = w.api.get::<StatefulSet>(NS, NAME).expect("leader sts");
        let key = k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH);
        return key
            .expect("the leader sts carries its revision key")
            .to_string();
    }
    let l = w.api.get::<LeaderWorkerSet>(NS, NAME).expect("lws");
    lws::hash::template_hash(&l, profile.flags.network_config)
}

/// Edit the worker template and let the controller start the rollout; then the top `done`
/// groups finish, so the partition is mid-way.
pub fn mid_rollout(w: &mut World, profile: &str, done: i32) {
    let profile = Profile::parse(profile).expect("valid profile");
    let cur = w.api.get::<LeaderWorkerSet>(NS, NAME).expect("lws");
    let mut l = (*cur).clone();
    l.spec.leader_worker_template.worker_template = template("v2");
    w.api.update("test", l).expect("update");
    settle(w);
    let hash = current_hash(w, &profile);
    let groups = cur.replicas();
    let recreate = profile.flags.worker_sts_write == lws::profile::WorkerStsWrite::Create;
    for i in (groups - done..groups).rev() {
        ready_group(w, i, &hash, recreate);
    }
    settle(w);
    ready_worker_sets(w);
    settle(w);
}
