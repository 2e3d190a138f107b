//! Ports of upstream's rolling-update integration cases T23-T36 (kubernetes-sigs/lws
//! `test/integration/controllers/leaderworkerset_test.go`, v0.3.0 lines 471-1513), run in the
//! world's manual mode, which reproduces upstream's envtest harness: no StatefulSet controller,
//! kubelet or GC; the test creates leader pods and readies groups by hand (lws
//! `test/integration/controllers/suite_test.go`, `test/testutils/util.go`). Each check runs after the world has converged, like upstream's `Eventually`.
//!
//! `SetPodGroupToReady` follows each release's harness (lws `test/testutils/util.go` at each tag): for v0.3.0 it relabels the
//! leader and lets the pod controller's apply update the worker StatefulSet (that path *is* the
//! seed bug); for v0.4.1 it also deletes the worker StatefulSet so the pod controller re-creates
//! it, as upstream's harness does from PR #229 on.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::api::{
    keys, LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, RollingUpdateConfiguration,
    RolloutStrategy,
};
use lws::k8s;
use lws::profile::Profile;
use lws_sim::api::{set_pod_condition, DeleteOptions, Selector};
use lws_sim::controller::ControllerConfig;
use lws_sim::world::{ClusterConfig, World};

const NAME: &str = "test-sample";
const NS: &str = "default";
const RELEASES: [&str; 2] = ["v0.3.0", "v0.4.1"];

struct Harness {
    w: World,
    profile: Profile,
    step: usize,
}

/// The worker template's first container, to edit in place.
fn worker_container(l: &mut LeaderWorkerSet) -> &mut Container {
    let spec = l.spec.leader_worker_template.worker_template.spec.as_mut();
    &mut spec.expect("the worker template has a pod spec").containers[0]
}

fn template(container: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: container.into(),
                image: Some("nginx:1.14.2".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

/// `BuildLeaderWorkerSet` (test/wrappers): replicas 2, size 2, mU 1, mS 0.
fn wrapper(replicas: i32, mu: i32, ms: i32) -> LeaderWorkerSet {
    LeaderWorkerSet {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: LeaderWorkerSetSpec {
            replicas: Some(replicas),
            leader_worker_template: LeaderWorkerTemplate {
                leader_template: Some(template("leader")),
                worker_template: template("worker"),
                size: Some(2),
                ..Default::default()
            },
            rollout_strategy: Some(RolloutStrategy {
                type_: "RollingUpdate".into(),
                rolling_update_configuration: Some(RollingUpdateConfiguration {
                    max_unavailable: Some(IntOrString::Int(mu)),
                    max_surge: Some(IntOrString::Int(ms)),
                    partition: None,
                }),
            }),
            startup_policy: "LeaderCreated".into(),
            network_config: None,
        },
        ..Default::default()
    }
}

impl Harness {
    /// The prologue: create the LWS, wait for the leader sts, create leaders 0..replicas.
    fn new(release: &str, lws: LeaderWorkerSet) -> Harness {
        let profile = Profile::parse(release).unwrap();
        let mut w = World::new(
            1,
            ClusterConfig {
                manual: true,
                node_count: 0,
                ..Default::default()
            },
        );
        w.install_controller(ControllerConfig::new(profile.clone()));
        let replicas = lws.spec.replicas.unwrap();
        w.api.create("test", lws).unwrap();
        let mut h = Harness {
            w,
            profile,
            step: 0,
        };
        h.settle();
        assert!(
            h.w.api.try_get::<StatefulSet>(NS, NAME).is_some(),
            "leader sts created"
        );
        let hash = h.hash();
        h.create_leaders(0, replicas, &hash);
        h
    }

    fn settle(&mut self) {
        let t = self.w.now_ms + 60_000;
        self.w.run_until(t);
    }

    fn lws(&self) -> Arc<LeaderWorkerSet> {
        self.w.api.get::<LeaderWorkerSet>(NS, NAME).unwrap()
    }

    /// The template hash of the live spec.
    fn hash(&self) -> String {
        lws::hash::template_hash(&self.lws(), self.profile.flags.network_config)
    }

    /// `CreateLeaderPods(a, b)`: leader pods owned by the leader sts, labelled with `hash`.
    fn create_leaders(&mut self, a: i32, b: i32, hash: &str) {
        let sts = self.w.api.get::<StatefulSet>(NS, NAME).unwrap();
        let size = self.lws().size();
        for i in a..b {
            let pod = lws_sim::fixtures::leader_pod(&sts.metadata, NAME, i, hash, size);
            self.w.api.create("test", pod).unwrap();
        }
        self.settle();
    }

    /// `DeleteLeaderPods`-style: leaders a..b and their worker sts.
    /// Upstream deletes the pods, then their worker sts, each a round trip: the caches see the
    /// pods gone before the sts (else v0.3.0's apply re-creates an sts for a cached leader).
    fn delete_leaders(&mut self, a: i32, b: i32) {
        for i in a..b {
            let name = format!("{NAME}-{i}");
            let _ = self
                .w
                .api
                .delete::<Pod>("test", NS, &name, &DeleteOptions::default());
        }
        let t = self.w.now_ms + 1_000;
        self.w.run_until(t);
        for i in a..b {
            let name = format!("{NAME}-{i}");
            let _ = self
                .w
                .api
                .delete::<StatefulSet>("test", NS, &name, &DeleteOptions::default());
        }
        self.settle();
    }

    /// `SetPodGroupToReady(i)`: group i is on the current template and fully ready.
    fn group_ready(&mut self, i: i32) {
        let name = format!("{NAME}-{i}");
        let hash = self.hash();
        let pod = self.w.api.get::<Pod>(NS, &name).unwrap();
        let mut p = (*pod).clone();
        p.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(keys::TEMPLATE_REVISION_HASH.into(), hash);
        let p = self.w.api.update("test", p).unwrap();
        let mut p = (*p).clone();
        p.status.get_or_insert_with(Default::default).phase = Some("Running".into());
        set_pod_condition(&mut p, "Ready", "True", None, self.w.now_ms);
        self.w.api.update_status("test", p).unwrap();
        // Each helper call is a separate round trip upstream; let the caches see the relabel
        // before the worker sts is deleted, or the pod controller may rebuild it from a stale
        // leader.
        let t = self.w.now_ms + 1_000;
        self.w.run_until(t);
        if self.profile.name == "v0.4.1" {
            let _ = self
                .w
                .api
                .delete::<StatefulSet>("test", NS, &name, &DeleteOptions::default());
        }
        self.settle();
        self.worker_sts_ready(&name);
    }

    fn worker_sts_ready(&mut self, name: &str) {
        let sts = self
            .w
            .api
            .get::<StatefulSet>(NS, name)
            .unwrap_or_else(|_| panic!("worker sts {name} re-created"));
        let mut s = (*sts).clone();
        let n = s.spec.replicas.unwrap();
        s.status = Some(StatefulSetStatus {
            replicas: n,
            ready_replicas: Some(n),
            available_replicas: Some(n),
            ..Default::default()
        });
        self.w.api.update_status("test", s).unwrap();
        self.settle();
    }

    /// `SetSuperPodToReady(n)`.
    fn all_ready(&mut self, n: i32) {
        for i in 0..n {
            self.group_ready(i);
        }
    }

    /// `SetStatefulsetToUnReady`.
    fn worker_sts_unready(&mut self, i: i32) {
        let sts = self
            .w
            .api
            .get::<StatefulSet>(NS, &format!("{NAME}-{i}"))
            .unwrap();
        let mut s = (*sts).clone();
        let st = s.status.get_or_insert_with(Default::default);
        st.current_revision = Some("fuz".into());
        st.update_revision = Some("bar".into());
        self.w.api.update_status("test", s).unwrap();
        self.settle();
    }

    fn edit(&mut self, f: impl FnOnce(&mut LeaderWorkerSet)) {
        let mut l = (*self.lws()).clone();
        f(&mut l);
        self.w.api.update("test", l).unwrap();
        self.settle();
    }

    fn update_worker_template(&mut self, container: &str) {
        self.edit(|l| worker_container(l).name = container.into());
    }

    /// Check the leader sts replicas and partition, `(ready, updated)` and the conditions.
    #[track_caller]
    fn expect(
        &mut self,
        lsts: i32,
        partition: i32,
        ready_updated: Option<(i32, i32)>,
        conds: &str,
    ) {
        let sts = self.w.api.get::<StatefulSet>(NS, NAME).unwrap();
        let ctx = format!("{} step {}", self.profile.name, self.step + 1);
        assert_eq!(sts.spec.replicas, Some(lsts), "{ctx}: LSTS replicas");
        let p = sts
            .spec
            .update_strategy
            .as_ref()
            .unwrap()
            .rolling_update
            .as_ref()
            .unwrap()
            .partition;
        assert_eq!(p, Some(partition), "{ctx}: partition");
        self.expect_status(ready_updated, conds);
    }

    /// Steps where upstream checks only the status.
    #[track_caller]
    fn expect_status(&mut self, ready_updated: Option<(i32, i32)>, conds: &str) {
        self.step += 1;
        let ctx = format!("{} step {}", self.profile.name, self.step);
        let sts = self.w.api.get::<StatefulSet>(NS, NAME).unwrap();
        let hash = self.hash();
        assert_eq!(
            k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH),
            Some(hash.as_str()),
            "{ctx}: LSTS hash"
        );
        let lws = self.lws();
        let status = lws.status.clone().unwrap_or_default();
        if let Some((r, u)) = ready_updated {
            assert_eq!(
                (status.ready_replicas, status.updated_replicas),
                (r, u),
                "{ctx}: (ready, updated)"
            );
        }
        for c in conds.split_whitespace() {
            let (t, want) = c.split_once(':').unwrap();
            let t = match t {
                "A" => "Available",
                "Pr" => "Progressing",
                "UIP" => "UpgradeInProgress",
                other => panic!("unknown condition {other}"),
            };
            let want = if want == "T" { "True" } else { "False" };
            let got = status
                .conditions
                .iter()
                .find(|x| x.type_ == t)
                .map(|x| x.status.as_str());
            assert_eq!(got, Some(want), "{ctx}: condition {t}");
        }
    }

    /// `ExpectValidWorkerStatefulSets`: one per leader sts replica, all on the current template.
    #[track_caller]
    fn expect_workers_current(&self) {
        let lsts = self
            .w
            .api
            .get::<StatefulSet>(NS, NAME)
            .unwrap()
            .spec
            .replicas
            .unwrap();
        let hash = self.hash();
        let lws = self.lws();
        let container = &lws
            .spec
            .leader_worker_template
            .worker_template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
            .name;
        let workers: Vec<_> = self
            .w
            .api
            .list::<StatefulSet>(Some(NS), &Selector::labels([(keys::SET_NAME, NAME)]))
            .into_iter()
            .filter(|s| s.metadata.name.as_deref() != Some(NAME))
            .collect();
        assert_eq!(
            workers.len() as i32,
            lsts,
            "{}: one worker sts per group",
            self.profile.name
        );
        for s in workers {
            assert_eq!(
                k8s::label(&s.metadata, keys::TEMPLATE_REVISION_HASH),
                Some(hash.as_str())
            );
            assert_eq!(s.spec.replicas, Some(lws.size() - 1));
            assert_eq!(s.spec.ordinals.as_ref().and_then(|o| o.start), Some(1));
            assert_eq!(
                &s.spec.template.spec.as_ref().unwrap().containers[0].name,
                container
            );
        }
    }
}

#[test]
fn t23_leader_template_changed_with_default_strategy() {
    // v0.3.0 leaderworkerset_test.go:471-566.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 1, 0));
        h.all_ready(4);
        h.expect(4, 0, Some((4, 4)), "A:T");
        h.edit(|l| {
            l.spec
                .leader_worker_template
                .leader_template
                .as_mut()
                .unwrap()
                .spec
                .as_mut()
                .unwrap()
                .containers[0]
                .name = "new-leader-name".into()
        });
        h.expect(4, 3, Some((4, 0)), "A:F Pr:T UIP:T");
        h.group_ready(3);
        h.expect(4, 2, Some((4, 1)), "A:F Pr:T UIP:T");
        h.group_ready(1); // out of order, below the partition: P stays
        h.expect(4, 2, Some((4, 2)), "A:F Pr:T UIP:T");
        h.worker_sts_unready(3); // no backward move; updated-but-unready counts in U
        h.expect(4, 2, Some((3, 2)), "A:F Pr:T UIP:T");
        h.all_ready(4);
        h.expect(4, 0, Some((4, 4)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}

#[test]
fn t24_worker_template_changed_with_max_unavailable_2() {
    // v0.3.0 :567-644.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 2, 0));
        h.all_ready(4);
        h.expect(4, 0, Some((4, 4)), "A:T");
        h.update_worker_template("new-worker-name");
        h.expect(4, 2, Some((4, 0)), "A:F Pr:T UIP:T");
        h.group_ready(3);
        h.expect(4, 1, Some((4, 1)), "A:F Pr:T UIP:T");
        h.group_ready(2);
        h.expect(4, 0, Some((4, 2)), "A:F Pr:T UIP:T");
        h.group_ready(1);
        h.group_ready(0);
        h.expect(4, 0, Some((4, 4)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}

#[test]
fn t25_max_unavailable_greater_than_replicas_clamps_the_partition() {
    // v0.3.0 :645-693 (pins B15).
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 10, 0));
        h.all_ready(4);
        h.update_worker_template("new-worker-name");
        h.expect(4, 0, Some((4, 0)), "A:F Pr:T UIP:T");
        h.all_ready(4);
        h.expect(4, 0, Some((4, 4)), "A:T Pr:F UIP:F");
    }
}

#[test]
fn t26_worker_template_and_replicas_changed_together() {
    // v0.3.0 :694-753.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 1, 0));
        h.all_ready(4);
        let old = h.hash();
        h.edit(|l| {
            l.spec.replicas = Some(6);
            worker_container(l).name = "new-worker".into();
        });
        h.create_leaders(4, 6, &old);
        h.expect(6, 4, Some((4, 0)), "A:F Pr:T UIP:T");
        h.all_ready(6);
        h.expect(6, 0, Some((6, 6)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}

#[test]
fn t27_replicas_increase_during_rolling_update() {
    // v0.3.0 :754-845.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 1, 0));
        h.all_ready(4);
        h.update_worker_template("new-worker-name");
        h.expect(4, 3, Some((4, 0)), "A:F Pr:T UIP:T");
        h.group_ready(3);
        h.expect(4, 2, Some((4, 1)), "A:F Pr:T UIP:T");
        let new = h.hash();
        h.edit(|l| l.spec.replicas = Some(6));
        h.create_leaders(4, 6, &new);
        h.group_ready(4);
        h.group_ready(5);
        h.expect(6, 2, Some((6, 3)), "A:F Pr:T UIP:T");
        h.all_ready(6);
        h.expect(6, 0, Some((6, 6)), "A:T Pr:F UIP:F");
    }
}

#[test]
fn t28_replicas_decrease_during_rolling_update() {
    // v0.3.0 :846-925.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(6, 1, 0));
        h.all_ready(6);
        h.expect(6, 0, Some((6, 6)), "A:T");
        h.edit(|l| worker_container(l).image = Some("nginx:1.16.1".into()));
        h.expect(6, 5, Some((6, 0)), "A:F Pr:T UIP:T");
        h.edit(|l| l.spec.replicas = Some(3));
        h.delete_leaders(3, 6);
        h.expect(3, 2, Some((3, 0)), "A:F Pr:T UIP:T");
        h.all_ready(3);
        h.expect(3, 0, Some((3, 3)), "A:T Pr:F UIP:F");
    }
}

#[test]
fn t30_rolling_update_with_max_surge() {
    // v0.3.0 :926-1044.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 1, 1));
        h.all_ready(4);
        let old = h.hash();
        h.update_worker_template("new-worker");
        h.create_leaders(4, 5, &old);
        h.expect(5, 3, Some((4, 0)), "A:F Pr:T UIP:T");
        h.group_ready(4);
        h.expect(5, 2, Some((5, 1)), "A:F Pr:T UIP:T");
        h.group_ready(3);
        h.expect(5, 1, Some((5, 2)), "A:F Pr:T UIP:T");
        h.group_ready(2);
        h.expect(5, 0, Some((5, 3)), "A:F Pr:T UIP:T");
        h.group_ready(1);
        h.delete_leaders(4, 5);
        h.expect(4, 0, Some((4, 3)), "A:F Pr:T UIP:T");
        h.group_ready(0);
        h.expect(4, 0, Some((4, 4)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}

#[test]
fn t32_replicas_scaled_up_with_max_surge() {
    // v0.3.0 :1045-1113.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(2, 1, 2));
        h.all_ready(2);
        let old = h.hash();
        h.edit(|l| {
            l.spec.replicas = Some(4);
            worker_container(l).name = "new-worker".into();
        });
        h.create_leaders(2, 6, &old);
        h.expect(6, 2, None, "A:F Pr:T UIP:T");
        h.all_ready(6);
        h.expect_status(None, "A:T");
        h.delete_leaders(4, 6);
        h.expect(4, 0, Some((4, 4)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}

#[test]
fn t33_replicas_scaled_down_with_max_surge() {
    // v0.3.0 :1114-1179.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(6, 1, 2));
        h.all_ready(6);
        h.edit(|l| {
            l.spec.replicas = Some(3);
            worker_container(l).name = "new-worker".into();
        });
        h.expect(5, 2, None, "A:F Pr:T UIP:T");
        h.delete_leaders(5, 6);
        h.all_ready(5);
        h.expect_status(None, "A:T");
        h.delete_leaders(3, 5);
        h.expect(3, 0, Some((3, 3)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}

#[test]
fn t34_max_surge_greater_than_replicas() {
    // v0.3.0 :1180-1249.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(2, 1, 4));
        h.all_ready(2);
        let old = h.hash();
        h.update_worker_template("new-worker");
        h.create_leaders(2, 3, &old);
        h.expect(3, 1, None, "A:F Pr:T UIP:T");
        h.all_ready(3);
        h.expect_status(None, "A:T Pr:F UIP:F");
        h.delete_leaders(2, 3);
        h.expect(2, 0, Some((2, 2)), "A:T Pr:F UIP:F");
    }
}

#[test]
fn t35_scale_up_and_down_during_rolling_update_with_max_surge() {
    // v0.3.0 :1250-1406.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 1, 2));
        h.all_ready(4);
        let old = h.hash();
        h.update_worker_template("new-worker");
        h.create_leaders(4, 6, &old);
        h.expect(6, 3, Some((4, 0)), "A:F Pr:T UIP:T");
        let new = h.hash();
        h.edit(|l| l.spec.replicas = Some(6));
        h.create_leaders(6, 8, &new);
        h.expect(8, 3, Some((4, 2)), "A:F Pr:T UIP:T");
        h.group_ready(7);
        h.group_ready(6);
        h.expect(8, 3, Some((6, 2)), "A:F Pr:T UIP:T");
        h.edit(|l| l.spec.replicas = Some(2));
        h.delete_leaders(4, 8);
        h.delete_leaders(3, 4);
        h.expect(3, 1, Some((3, 0)), "A:F Pr:T UIP:T");
        h.group_ready(2);
        h.expect(3, 0, Some((3, 1)), "A:F Pr:T UIP:T");
        h.group_ready(1);
        h.delete_leaders(2, 3);
        h.expect(2, 0, Some((2, 1)), "A:F Pr:T UIP:T");
        h.group_ready(0);
        h.expect(2, 0, Some((2, 2)), "A:T Pr:F UIP:F");
    }
}

#[test]
fn t36_multiple_rolling_updates_with_max_surge() {
    // v0.3.0 :1407-1513.
    for r in RELEASES {
        let mut h = Harness::new(r, wrapper(4, 1, 2));
        h.all_ready(4);
        h.expect(4, 0, Some((4, 4)), "A:T");
        let old = h.hash();
        h.update_worker_template("new-worker");
        h.create_leaders(4, 6, &old);
        h.expect(6, 3, Some((4, 0)), "A:F Pr:T UIP:T");
        h.group_ready(5);
        h.group_ready(4);
        h.expect(6, 1, Some((6, 2)), "A:F Pr:T UIP:T");
        h.update_worker_template("new-worker-2");
        h.expect(6, 3, Some((6, 0)), "A:F Pr:T UIP:T");
        h.all_ready(6);
        h.expect_status(None, "A:T");
        h.delete_leaders(4, 6);
        h.expect(4, 0, Some((4, 4)), "A:T Pr:F UIP:F");
        h.expect_workers_current();
    }
}
