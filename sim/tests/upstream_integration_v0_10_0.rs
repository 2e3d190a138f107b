//! Ports of upstream's rolling-update integration cases at tag v0.10.0
//! (kubernetes-sigs/lws `test/integration/controllers/leaderworkerset_test.go`), run against the
//! `v0.10.0` profile in the world's manual mode, which reproduces upstream's envtest harness: no
//! StatefulSet controller, kubelet or GC; the test creates leader pods and readies groups by hand.
//! Each check runs after the world has converged, like upstream's `Eventually`.
//!
//! The harness follows `test/testutils` at v0.10.0:
//! - the revision key is the key of a ControllerRevision (`NewRevision(lws, "")`): a hash of the
//!   stored `{leaderWorkerTemplate, networkConfig}` patch; `revision_key` recomputes it from the
//!   LWS as the test sees it, so the checks do not trust the controller's own label;
//! - `CreateLeaderPods(lws, a, b)` labels the pods with the key of the `lws` the step started
//!   with (before its update), and gives them group-index and group-key labels;
//! - `SetPodGroupToReady` relabels the leader with the leader StatefulSet's key, deletes the
//!   worker StatefulSet (the pod controller re-creates it from the leader's revision), marks the
//!   leader Running and Ready, then sets the re-created worker StatefulSet's status to
//!   replicas = ready = available = spec.replicas with empty current/update revisions;
//! - conditions are checked on type, status, message and `observedGeneration == generation`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{Container, ContainerPort, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::api::{
    keys, LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, NetworkConfig,
    RollingUpdateConfiguration, RolloutStrategy,
};
use lws::k8s;
use lws::profile::Profile;
use lws::v0_10_0::revision::{apply_revision, get_patch};
use lws_sim::api::{set_pod_condition, DeleteOptions, Selector};
use lws_sim::controller::ControllerConfig;
use lws_sim::world::{ClusterConfig, World};

const NAME: &str = "test-sample";
const NS: &str = "default";
const IMAGE: &str = "docker.io/nginxinc/nginx-unprivileged:1.27";
const AVAILABLE_MSG: &str = "All replicas are ready";
const PROGRESSING_MSG: &str = "Replicas are progressing";
const UPDATE_MSG: &str = "Rolling Upgrade is in progress";

/// `NewRevision(lws, "")`'s key: FNV-1 32 of the stored patch, in decimal, safe-encoded.
fn revision_key(lws: &LeaderWorkerSet) -> String {
    let bytes = serde_json::to_vec(&get_patch(lws)).expect("patch encodes");
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h = h.wrapping_mul(0x0100_0193);
        h ^= u32::from(b);
    }
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    h.to_string()
        .bytes()
        .map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect()
}

/// `BuildLeaderWorkerSet` (test/wrappers at v0.10.0): replicas 2, size 2, restart policy
/// RecreateGroupOnPodRestart, partition 0, maxUnavailable 1, maxSurge 0, LeaderCreated,
/// subdomain policy Shared; then `.Replica(r).MaxUnavailable(mu).MaxSurge(ms).Partition(p)`.
fn wrapper(replicas: i32, mu: i32, ms: i32, partition: i32) -> LeaderWorkerSet {
    let leader = PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "leader".into(),
                image: Some(IMAGE.into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    };
    let worker = PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "worker".into(),
                image: Some(IMAGE.into()),
                ports: Some(vec![ContainerPort {
                    container_port: 8080,
                    protocol: Some("TCP".into()),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            ..Default::default()
        }),
    };
    LeaderWorkerSet {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: LeaderWorkerSetSpec {
            replicas: Some(replicas),
            leader_worker_template: LeaderWorkerTemplate {
                leader_template: Some(leader),
                worker_template: worker,
                size: Some(2),
                restart_policy: "RecreateGroupOnPodRestart".into(),
                ..Default::default()
            },
            rollout_strategy: Some(RolloutStrategy {
                type_: "RollingUpdate".into(),
                rolling_update_configuration: Some(RollingUpdateConfiguration {
                    max_unavailable: Some(IntOrString::Int(mu)),
                    max_surge: Some(IntOrString::Int(ms)),
                    partition: Some(partition),
                }),
            }),
            startup_policy: "LeaderCreated".into(),
            network_config: Some(NetworkConfig {
                subdomain_policy: Some("Shared".into()),
            }),
        },
        ..Default::default()
    }
}

fn worker_container(l: &mut LeaderWorkerSet) -> &mut Container {
    let spec = l.spec.leader_worker_template.worker_template.spec.as_mut();
    &mut spec.expect("the worker template has a pod spec").containers[0]
}

fn first_container(t: &PodTemplateSpec) -> &str {
    &t.spec.as_ref().expect("pod spec").containers[0].name
}

struct Harness {
    w: World,
}

impl Harness {
    /// The table's prologue: create the LWS, wait for the leader sts, `CreateLeaderPods(0, r)`.
    fn new(lws: LeaderWorkerSet) -> Harness {
        let profile = Profile::parse("v0.10.0").unwrap();
        let mut w = World::new(
            1,
            ClusterConfig {
                manual: true,
                node_count: 0,
                ..Default::default()
            },
        );
        w.install_controller(ControllerConfig::new(profile));
        w.api.create("test", lws).unwrap();
        let mut h = Harness { w };
        h.settle();
        assert!(
            h.w.api.try_get::<StatefulSet>(NS, NAME).is_some(),
            "leader sts created"
        );
        let created = h.lws();
        h.create_leaders(&created, 0, created.replicas());
        h
    }

    fn settle(&mut self) {
        let t = self.w.now_ms + 60_000;
        self.w.run_until(t);
    }

    /// One client round trip: lets the informers see the last write.
    fn round_trip(&mut self) {
        let t = self.w.now_ms + 1_000;
        self.w.run_until(t);
    }

    fn lws(&self) -> Arc<LeaderWorkerSet> {
        self.w.api.get::<LeaderWorkerSet>(NS, NAME).unwrap()
    }

    fn leader_sts(&self) -> Arc<StatefulSet> {
        self.w.api.get::<StatefulSet>(NS, NAME).unwrap()
    }

    fn leader_sts_key(&self) -> String {
        k8s::label(&self.leader_sts().metadata, keys::TEMPLATE_REVISION_HASH)
            .unwrap_or("")
            .to_string()
    }

    // ---- actions (test/testutils/util.go) ----

    /// `makeLeaderPod` for each index in a..b, from `lws`'s leader template, labelled `key`.
    fn create_leaders_with_key(&mut self, lws: &LeaderWorkerSet, key: &str, a: i32, b: i32) {
        let sts = self.leader_sts();
        for i in a..b {
            let labels: BTreeMap<String, String> = [
                (keys::SET_NAME, NAME.to_string()),
                (keys::WORKER_INDEX, "0".to_string()),
                (keys::GROUP_INDEX, i.to_string()),
                (keys::GROUP_UNIQUE_HASH, "randomValue".to_string()),
                (keys::TEMPLATE_REVISION_HASH, key.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            let pod = Pod {
                metadata: ObjectMeta {
                    name: Some(format!("{NAME}-{i}")),
                    namespace: Some(NS.into()),
                    labels: Some(labels),
                    annotations: Some([(keys::SIZE.to_string(), lws.size().to_string())].into()),
                    owner_references: Some(vec![k8s::controller_ref(
                        "apps/v1",
                        "StatefulSet",
                        &sts.metadata,
                    )]),
                    ..Default::default()
                },
                spec: lws.leader_template().spec.clone(),
                status: None,
            };
            self.w.api.create("test", pod).unwrap();
        }
        self.settle();
    }

    /// `CreateLeaderPods(lws, a, b)`: the key is `NewRevision(lws)` of the `lws` passed.
    fn create_leaders(&mut self, lws: &LeaderWorkerSet, a: i32, b: i32) {
        let key = revision_key(lws);
        self.create_leaders_with_key(lws, &key, a, b);
    }

    /// `CreateLeaderPodsFromRevisionNumber`: the revision numbered `number`, applied to the LWS.
    fn create_leaders_from_revision_number(&mut self, a: i32, b: i32, number: i64) {
        let lws = self.lws();
        let revision = self
            .revisions()
            .into_iter()
            .find(|r| r.revision == Some(number))
            .unwrap_or_else(|| panic!("revision {number} exists"));
        let target = apply_revision(&lws, &revision).unwrap();
        let key = k8s::label(&revision.metadata, keys::TEMPLATE_REVISION_HASH)
            .unwrap()
            .to_string();
        self.create_leaders_with_key(&target, &key, a, b);
    }

    /// `SetPodGroupToReady(name)`.
    fn group_ready(&mut self, i: i32) {
        let name = format!("{NAME}-{i}");
        // SetLeaderPodToReady: relabel with the leader sts's key...
        let key = self.leader_sts_key();
        let pod = self.w.api.get::<Pod>(NS, &name).unwrap();
        let mut p = (*pod).clone();
        p.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(keys::TEMPLATE_REVISION_HASH.into(), key);
        self.w.api.update("test", p).unwrap();
        self.round_trip();
        // ...delete the worker sts if it exists, then Running + Ready.
        let _ = self
            .w
            .api
            .delete::<StatefulSet>("test", NS, &name, &DeleteOptions::default());
        let pod = self.w.api.get::<Pod>(NS, &name).unwrap();
        let mut p = (*pod).clone();
        p.status.get_or_insert_with(Default::default).phase = Some("Running".into());
        set_pod_condition(&mut p, "Ready", "True", None, self.w.now_ms);
        self.w.api.update_status("test", p).unwrap();
        self.settle();
        // Then the (re-created) worker sts is ready.
        let sts = self
            .w
            .api
            .get::<StatefulSet>(NS, &name)
            .unwrap_or_else(|_| panic!("worker sts {name} re-created"));
        let mut s = (*sts).clone();
        let n = s.spec.replicas.unwrap_or(1);
        let st = s.status.get_or_insert_with(StatefulSetStatus::default);
        st.replicas = n;
        st.ready_replicas = Some(n);
        st.available_replicas = Some(n);
        st.current_revision = Some(String::new());
        st.update_revision = Some(String::new());
        self.w.api.update_status("test", s).unwrap();
        self.settle();
    }

    /// `SetSuperPodToReady(n)`: once n worker sts exist, ready every group that has one.
    fn all_ready(&mut self, n: i32) {
        let names: Vec<String> = self
            .w
            .api
            .list::<StatefulSet>(Some(NS), &Selector::labels([(keys::SET_NAME, NAME)]))
            .iter()
            .map(|s| k8s::name(&s.metadata).to_string())
            .filter(|s| s != NAME)
            .collect();
        assert_eq!(
            names.len() as i32,
            n,
            "SetSuperPodToReady: worker sts count"
        );
        for name in names {
            let (_, i) = k8s::parent_and_ordinal(&name).unwrap();
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

    /// `DeleteLeaderPod(a, b)`: each leader pod, then its worker sts (on behalf of the GC).
    fn delete_leader_pod(&mut self, a: i32, b: i32) {
        for i in a..b {
            let name = format!("{NAME}-{i}");
            self.w
                .api
                .delete::<Pod>("test", NS, &name, &DeleteOptions::default())
                .unwrap_or_else(|e| panic!("delete pod {name}: {e:?}"));
            self.round_trip();
            self.w
                .api
                .delete::<StatefulSet>("test", NS, &name, &DeleteOptions::default())
                .unwrap_or_else(|e| panic!("delete worker sts {name}: {e:?}"));
        }
        self.settle();
    }

    /// `DeleteLeaderPods`: the leaders (and their worker sts) at or above the LWS replicas.
    fn delete_leader_pods(&mut self) {
        let replicas = self.lws().replicas();
        let mut doomed: Vec<i32> = self
            .w
            .api
            .list::<Pod>(Some(NS), &Selector::labels([(keys::WORKER_INDEX, "0")]))
            .iter()
            .filter_map(|p| k8s::parent_and_ordinal(k8s::name(&p.metadata)).map(|(_, i)| i))
            .filter(|&i| i >= replicas)
            .collect();
        doomed.sort();
        for i in doomed {
            self.delete_leader_pod(i, i + 1);
        }
    }

    fn edit(&mut self, f: impl FnOnce(&mut LeaderWorkerSet)) {
        let mut l = (*self.lws()).clone();
        f(&mut l);
        self.w.api.update("test", l).unwrap();
        self.settle();
    }

    /// `UpdateWorkerTemplate`.
    fn update_worker_template(&mut self) {
        self.edit(|l| worker_container(l).name = "new-worker-name".into());
    }

    /// `SetLwsPartition`.
    fn set_partition(&mut self, p: i32) {
        self.edit(|l| {
            let s = l.spec.rollout_strategy.as_mut().unwrap();
            s.rolling_update_configuration.as_mut().unwrap().partition = Some(p);
        });
    }

    // ---- checks (test/testutils/validators.go) ----

    #[track_caller]
    fn condition(&self, type_: &str, status: bool, message: &str) {
        let lws = self.lws();
        let want = if status { "True" } else { "False" };
        let generation = lws.metadata.generation.unwrap_or(0);
        let conds = lws
            .status
            .as_ref()
            .map(|s| s.conditions.clone())
            .unwrap_or_default();
        let c = conds
            .iter()
            .find(|c| c.type_ == type_ && c.status == want)
            .unwrap_or_else(|| panic!("condition {type_}={want} missing; have {conds:?}"));
        assert_eq!(
            c.observed_generation,
            Some(generation),
            "condition {type_}: observedGeneration"
        );
        assert_eq!(c.message, message, "condition {type_}: message");
    }

    #[track_caller]
    fn available(&self, status: bool) {
        self.condition("Available", status, AVAILABLE_MSG);
    }

    #[track_caller]
    fn progressing(&self, status: bool) {
        self.condition("Progressing", status, PROGRESSING_MSG);
    }

    #[track_caller]
    fn update_in_progress(&self, status: bool) {
        self.condition("UpdateInProgress", status, UPDATE_MSG);
    }

    /// Available False, Progressing True, UpdateInProgress True.
    #[track_caller]
    fn rolling(&self) {
        self.available(false);
        self.progressing(true);
        self.update_in_progress(true);
    }

    /// Available True, Progressing False, UpdateInProgress False.
    #[track_caller]
    fn done(&self) {
        self.available(true);
        self.progressing(false);
        self.update_in_progress(false);
    }

    /// `ExpectStatefulsetPartitionEqualTo`.
    #[track_caller]
    fn partition(&self, p: i32) {
        let sts = self.leader_sts();
        let got = sts
            .spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.rolling_update.as_ref())
            .and_then(|r| r.partition);
        assert_eq!(got, Some(p), "leader sts partition");
    }

    /// `ExpectLeaderWorkerSetStatusReplicas`.
    #[track_caller]
    fn status(&self, ready: i32, updated: i32) {
        let st = self.lws().status.clone().unwrap_or_default();
        assert_eq!(
            (st.ready_replicas, st.updated_replicas),
            (ready, updated),
            "status (readyReplicas, updatedReplicas)"
        );
    }

    /// `ExpectValidLeaderStatefulSet(replicas)`.
    #[track_caller]
    fn valid_leader_sts(&self, replicas: i32) {
        let lws = self.lws();
        let sts = self.leader_sts();
        let key = revision_key(&lws);
        assert!(k8s::label(&sts.metadata, keys::SET_NAME).is_some_and(|v| !v.is_empty()));
        let tmeta = sts.spec.template.metadata.clone().unwrap_or_default();
        let tann = tmeta.annotations.clone().unwrap_or_default();
        assert_eq!(
            k8s::annotation(&lws.metadata, keys::EXCLUSIVE_TOPOLOGY),
            tann.get(keys::EXCLUSIVE_TOPOLOGY).map(String::as_str),
            "exclusive annotation"
        );
        assert_eq!(
            tann.get(keys::SIZE),
            Some(&lws.size().to_string()),
            "size annotation"
        );
        assert_eq!(
            k8s::annotation(&sts.metadata, keys::REPLICAS),
            Some(lws.replicas().to_string().as_str()),
            "replicas annotation"
        );
        let want_labels: BTreeMap<String, String> = [
            (keys::SET_NAME.to_string(), NAME.to_string()),
            (keys::WORKER_INDEX.to_string(), "0".to_string()),
            (keys::TEMPLATE_REVISION_HASH.to_string(), key.clone()),
        ]
        .into();
        assert_eq!(
            tmeta.labels.clone().unwrap_or_default(),
            want_labels,
            "leader sts pod template labels"
        );
        assert_eq!(
            k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH),
            Some(key.as_str()),
            "leader sts revision key"
        );
        assert_eq!(sts.spec.service_name.as_deref(), Some(NAME));
        assert_eq!(sts.spec.replicas, Some(replicas), "leader sts replicas");
        assert_eq!(sts.spec.pod_management_policy.as_deref(), Some("Parallel"));
        let want_selector: BTreeMap<String, String> = [
            (keys::SET_NAME.to_string(), NAME.to_string()),
            (keys::WORKER_INDEX.to_string(), "0".to_string()),
        ]
        .into();
        assert_eq!(sts.spec.selector.match_labels, Some(want_selector));
        assert!(sts.spec.selector.match_expressions.is_none());
        assert_eq!(
            first_container(&sts.spec.template),
            first_container(lws.leader_template()),
            "leader sts template"
        );
    }

    /// `ExpectValidWorkerStatefulSets(leaderPodScheduled=true)`.
    #[track_caller]
    fn valid_worker_sts(&self) {
        let lws = self.lws();
        let key = revision_key(&lws);
        let lsts = self.leader_sts().spec.replicas.unwrap();
        let all = self
            .w
            .api
            .list::<StatefulSet>(Some(NS), &Selector::labels([(keys::SET_NAME, NAME)]));
        let want = if lws.size() == 1 { 0 } else { lsts };
        assert_eq!(all.len() as i32 - 1, want, "one worker sts per group");
        for sts in all.iter().filter(|s| k8s::name(&s.metadata) != NAME) {
            let name = k8s::name(&sts.metadata);
            let (_, ordinal) = k8s::parent_and_ordinal(name).unwrap();
            let m = &sts.metadata;
            assert!(k8s::label(m, keys::SET_NAME).is_some_and(|v| !v.is_empty()));
            assert_eq!(
                k8s::label(m, keys::GROUP_INDEX),
                Some(ordinal.to_string().as_str())
            );
            assert!(k8s::label(m, keys::GROUP_UNIQUE_HASH).is_some_and(|v| !v.is_empty()));
            let tm = sts.spec.template.metadata.clone().unwrap_or_default();
            assert!(k8s::label(&tm, keys::SET_NAME).is_some_and(|v| !v.is_empty()));
            assert_eq!(
                k8s::label(&tm, keys::GROUP_INDEX),
                Some(ordinal.to_string().as_str())
            );
            assert_eq!(
                k8s::annotation(&tm, keys::SIZE),
                Some(lws.size().to_string().as_str())
            );
            assert_eq!(k8s::annotation(&tm, keys::LEADER_POD_NAME), Some(name));
            assert_eq!(
                k8s::annotation(&lws.metadata, keys::EXCLUSIVE_TOPOLOGY),
                k8s::annotation(&tm, keys::EXCLUSIVE_TOPOLOGY)
            );
            assert_eq!(
                k8s::label(m, keys::TEMPLATE_REVISION_HASH),
                Some(key.as_str()),
                "worker sts {name} revision key"
            );
            assert_eq!(sts.spec.replicas, Some(lws.size() - 1));
            assert_eq!(sts.spec.pod_management_policy.as_deref(), Some("Parallel"));
            assert_eq!(sts.spec.ordinals.as_ref().and_then(|o| o.start), Some(1));
            assert_eq!(
                first_container(&sts.spec.template),
                first_container(&lws.spec.leader_worker_template.worker_template),
                "worker sts {name} template"
            );
        }
    }

    /// `ExpectUpdatedWorkerStatefulSet` (`updated`) / `ExpectNotUpdatedWorkerStatefulSet`.
    #[track_caller]
    fn worker_sts_updated(&self, i: i32, updated: bool) {
        let lws = self.lws();
        let sts = self
            .w
            .api
            .get::<StatefulSet>(NS, &format!("{NAME}-{i}"))
            .unwrap();
        let key_match = k8s::label(&sts.metadata, keys::TEMPLATE_REVISION_HASH)
            == Some(revision_key(&lws).as_str());
        let template_match = first_container(&sts.spec.template)
            == first_container(&lws.spec.leader_worker_template.worker_template);
        assert_eq!(
            (key_match, template_match),
            (updated, updated),
            "worker sts {i}: (revision key, template) updated"
        );
    }

    /// `ListRevisions`: owned by the LWS or by nobody.
    fn revisions(&self) -> Vec<Arc<ControllerRevision>> {
        let lws = self.lws();
        self.w
            .api
            .list::<ControllerRevision>(Some(NS), &Selector::labels([(keys::SET_NAME, NAME)]))
            .into_iter()
            .filter(|r| {
                k8s::controller_of(&r.metadata).is_none_or(|o| o.uid == k8s::uid(&lws.metadata))
            })
            .collect()
    }

    /// `ExpectRevisions(n)`: n revisions, one of them the leader sts's key holding the LWS's
    /// current templates.
    #[track_caller]
    fn revision_count(&self, n: usize) {
        let revisions = self.revisions();
        assert_eq!(revisions.len(), n, "revision count");
        let lws = self.lws();
        let key = self.leader_sts_key();
        let patch = get_patch(&lws);
        assert!(
            revisions.iter().any(|r| {
                k8s::label(&r.metadata, keys::TEMPLATE_REVISION_HASH) == Some(key.as_str())
                    && r.data.0 == patch
            }),
            "no revision matches the current state of lws"
        );
    }

    /// `ValidateEvent(reason, Normal, note)`: some event of the LWS matches.
    #[track_caller]
    fn event(&self, reason: &str, note: &str) {
        let want = format!("Normal {reason} {NAME}: {note}");
        let events = &self.w.controller.as_ref().unwrap().events;
        assert!(
            events.iter().any(|e| e.ends_with(&want)),
            "event {want:?} missing; have {events:#?}"
        );
    }

    /// The first update of most entries: all groups ready, then the at-rest checks.
    #[track_caller]
    fn at_rest(&mut self, n: i32) {
        self.all_ready(n);
        self.available(true);
        self.partition(0);
        self.valid_leader_sts(n);
        self.valid_worker_sts();
        self.status(n, n);
    }
}

#[test]
fn leader_template_changed_with_default_strategy() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:631
    let mut h = Harness::new(wrapper(4, 1, 0, 0));
    h.at_rest(4);
    h.edit(|l| {
        let t = l.spec.leader_worker_template.leader_template.as_mut();
        t.unwrap().spec.as_mut().unwrap().containers[0].name = "new-leader-name".into();
    });
    h.valid_leader_sts(4);
    h.rolling();
    h.event("GroupsUpdating", "Updating replica 3");
    h.partition(3);
    h.status(4, 0);
    h.group_ready(3);
    h.valid_leader_sts(4);
    h.rolling();
    h.event("GroupsUpdating", "Updating replica 2");
    h.partition(2);
    h.status(4, 1);
    h.group_ready(1); // below the partition: it stays
    h.rolling();
    h.partition(2);
    h.valid_leader_sts(4);
    h.status(4, 2);
    h.worker_sts_unready(3); // no move back; updated-but-unready still counts as updated
    h.rolling();
    h.partition(2);
    h.valid_leader_sts(4);
    h.status(3, 2);
    h.all_ready(4);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.partition(0);
    h.done();
    h.status(4, 4);
}

#[test]
fn worker_template_changed_with_max_unavailable_2() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:729
    let mut h = Harness::new(wrapper(4, 2, 0, 0));
    h.at_rest(4);
    h.update_worker_template();
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(2);
    h.status(4, 0);
    h.group_ready(3);
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(1);
    h.status(4, 1);
    h.group_ready(2);
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(0);
    h.status(4, 2);
    h.group_ready(1);
    h.group_ready(0);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(4, 4);
}

#[test]
fn worker_template_changed_with_max_unavailable_greater_than_replicas() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:807
    let mut h = Harness::new(wrapper(4, 10, 0, 0));
    h.at_rest(4);
    h.update_worker_template();
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(0);
    h.status(4, 0);
    h.all_ready(4);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.partition(0);
    h.done();
    h.status(4, 4);
}

#[test]
fn rolling_update_with_worker_template_and_replicas_changed() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:856
    let mut h = Harness::new(wrapper(4, 1, 0, 0));
    h.at_rest(4);
    let before = h.lws();
    h.edit(|l| {
        l.spec.replicas = Some(6);
        worker_container(l).name = "new-worker".into();
    });
    h.create_leaders(&before, 4, 6);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(4);
    h.status(4, 0);
    h.all_ready(6);
    h.valid_leader_sts(6);
    h.valid_worker_sts();
    h.partition(0);
    h.done();
    h.status(6, 6);
}

#[test]
fn replicas_increase_during_rolling_update() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:916
    let mut h = Harness::new(wrapper(4, 1, 0, 0));
    h.at_rest(4);
    h.update_worker_template();
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(3);
    h.status(4, 0);
    h.group_ready(3);
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(2);
    h.status(4, 1);
    let before = h.lws();
    h.edit(|l| l.spec.replicas = Some(6));
    h.create_leaders(&before, 4, 6);
    h.group_ready(4);
    h.group_ready(5);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(2);
    h.status(6, 3);
    h.all_ready(6);
    h.valid_leader_sts(6);
    h.valid_worker_sts();
    h.partition(0);
    h.done();
    h.status(6, 6);
}

#[test]
fn replicas_decrease_during_rolling_update() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1008
    let mut h = Harness::new(wrapper(6, 1, 0, 0));
    h.at_rest(6);
    h.edit(|l| {
        worker_container(l).image = Some("docker.io/nginxinc/nginx-unprivileged:1.26".into())
    });
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(5);
    h.status(6, 0);
    h.edit(|l| l.spec.replicas = Some(3));
    h.delete_leader_pods();
    h.valid_leader_sts(3);
    h.rolling();
    h.partition(2);
    h.status(3, 0);
    h.all_ready(3);
    h.valid_leader_sts(3);
    h.valid_worker_sts();
    h.partition(0);
    h.done();
    h.status(3, 3);
}

#[test]
fn rolling_update_with_max_unavailable_zero_and_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1088
    let mut h = Harness::new(wrapper(4, 0, 1, 0));
    h.at_rest(4);
    let before = h.lws();
    h.edit(|l| worker_container(l).name = "new-worker".into());
    h.create_leaders(&before, 4, 5);
    h.valid_leader_sts(5);
    h.rolling();
    h.partition(4);
    h.status(4, 0);
    for (group, partition, updated) in [(4, 3, 1), (3, 2, 2), (2, 1, 3), (1, 0, 4)] {
        h.group_ready(group);
        h.valid_leader_sts(5);
        h.rolling();
        h.partition(partition);
        h.status(5, updated);
    }
    h.group_ready(0);
    h.delete_leader_pod(4, 5); // reclaim the surge replica
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(4, 4);
}

#[test]
fn rolling_update_with_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1207
    let mut h = Harness::new(wrapper(4, 1, 1, 0));
    h.at_rest(4);
    let before = h.lws();
    h.edit(|l| worker_container(l).name = "new-worker".into());
    h.create_leaders(&before, 4, 5);
    h.valid_leader_sts(5);
    h.rolling();
    h.partition(3);
    h.status(4, 0);
    for (group, partition, updated) in [(4, 2, 1), (3, 1, 2), (2, 0, 3)] {
        h.group_ready(group);
        h.valid_leader_sts(5);
        h.rolling();
        h.partition(partition);
        h.status(5, updated);
    }
    h.group_ready(1);
    h.delete_leader_pod(4, 5); // reclaim the surge replica
    h.valid_leader_sts(4);
    h.rolling();
    h.partition(0);
    h.status(4, 3);
    h.group_ready(0);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(4, 4);
}

#[test]
fn rolling_update_with_max_unavailable_and_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1326
    let mut h = Harness::new(wrapper(4, 2, 2, 0));
    h.at_rest(4);
    let before = h.lws();
    h.edit(|l| worker_container(l).name = "new-worker".into());
    h.create_leaders(&before, 4, 6);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(2);
    h.status(4, 0);
    h.group_ready(3);
    h.group_ready(2);
    h.delete_leader_pod(4, 6);
    h.valid_leader_sts(4);
    h.partition(0);
    h.status(4, 2);
    h.group_ready(1);
    h.group_ready(0);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(4, 4);
}

#[test]
fn rolling_update_with_replicas_scaled_up_and_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1404
    let mut h = Harness::new(wrapper(2, 1, 2, 0));
    h.at_rest(2);
    let before = h.lws();
    h.edit(|l| {
        worker_container(l).name = "new-worker".into();
        l.spec.replicas = Some(4);
    });
    h.create_leaders(&before, 2, 6);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(2);
    h.all_ready(6);
    h.available(true);
    h.delete_leader_pods();
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(4, 4);
}

#[test]
fn rolling_update_with_replicas_scaled_down_and_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1473
    let mut h = Harness::new(wrapper(6, 1, 2, 0));
    h.at_rest(6);
    h.edit(|l| {
        worker_container(l).name = "new-worker".into();
        l.spec.replicas = Some(3);
    });
    h.valid_leader_sts(5);
    h.rolling();
    h.partition(2);
    h.delete_leader_pod(5, 6);
    h.all_ready(5);
    h.available(true);
    h.delete_leader_pods();
    h.valid_leader_sts(3);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(3, 3);
}

#[test]
fn rolling_update_with_max_surge_greater_than_replicas() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1539
    let mut h = Harness::new(wrapper(2, 1, 4, 0));
    h.at_rest(2);
    let before = h.lws();
    h.edit(|l| worker_container(l).name = "new-worker".into());
    h.create_leaders(&before, 2, 3);
    h.valid_leader_sts(3);
    h.rolling();
    h.partition(1);
    h.all_ready(3);
    h.done();
    h.delete_leader_pods();
    h.valid_leader_sts(2);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(2, 2);
}

#[test]
fn scale_up_and_down_during_rolling_update_with_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1609
    let mut h = Harness::new(wrapper(4, 1, 2, 0));
    h.at_rest(4);
    let before = h.lws();
    h.edit(|l| worker_container(l).name = "new-worker".into());
    h.create_leaders(&before, 4, 6);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(3);
    h.status(4, 0);
    let before = h.lws();
    h.edit(|l| l.spec.replicas = Some(6));
    h.create_leaders(&before, 6, 8);
    h.valid_leader_sts(8);
    h.rolling();
    h.partition(3);
    h.status(4, 2); // the last 2 are updated but not ready
    h.group_ready(7);
    h.group_ready(6);
    h.valid_leader_sts(8);
    h.rolling();
    h.partition(3);
    h.status(6, 2);
    h.edit(|l| l.spec.replicas = Some(2));
    h.delete_leader_pod(4, 8);
    h.delete_leader_pod(3, 4); // reclaim the last replica
    h.valid_leader_sts(3);
    h.rolling();
    h.partition(1);
    h.status(3, 0);
    h.group_ready(2);
    h.valid_leader_sts(3);
    h.rolling();
    h.partition(0);
    h.status(3, 1);
    h.group_ready(1);
    h.delete_leader_pod(2, 3); // reclaim the last replica
    h.valid_leader_sts(2);
    h.rolling();
    h.partition(0);
    h.status(2, 1);
    h.group_ready(0);
    h.valid_leader_sts(2);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(2, 2);
}

#[test]
fn multiple_rolling_updates_with_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1766
    let mut h = Harness::new(wrapper(4, 1, 2, 0));
    h.at_rest(4);
    h.revision_count(1);
    let before = h.lws();
    h.edit(|l| worker_container(l).name = "new-worker".into());
    h.create_leaders(&before, 4, 6);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(3);
    h.status(4, 0);
    h.revision_count(2);
    h.group_ready(5);
    h.group_ready(4);
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(1);
    h.status(6, 2);
    h.revision_count(2);
    h.edit(|l| worker_container(l).name = "new-worker-2".into());
    h.valid_leader_sts(6);
    h.rolling();
    h.partition(3);
    h.status(6, 0);
    h.revision_count(3);
    h.all_ready(6); // the surge leaders are not deleted yet
    h.available(true);
    h.delete_leader_pods();
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.partition(0);
    h.status(4, 4);
    h.revision_count(1);
}

#[test]
fn not_updated_worker_recreated_with_old_spec_if_restarted_during_update() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:1878
    let mut h = Harness::new(wrapper(4, 1, 0, 0));
    h.all_ready(4);
    h.available(true);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.status(4, 4);
    h.revision_count(1);
    h.update_worker_template();
    h.valid_leader_sts(4);
    h.rolling();
    h.status(4, 0);
    h.revision_count(2);
    h.group_ready(3);
    h.valid_leader_sts(4);
    h.worker_sts_updated(3, true);
    for i in [2, 1, 0] {
        h.worker_sts_updated(i, false);
    }
    h.revision_count(2);
    h.rolling();
    h.status(4, 1);
    // Re-create leader 0 from revision 1: its worker sts comes back with the old template.
    h.delete_leader_pod(0, 1);
    h.create_leaders_from_revision_number(0, 1, 1);
    h.valid_leader_sts(4);
    h.worker_sts_updated(3, true);
    for i in [2, 1, 0] {
        h.worker_sts_updated(i, false);
    }
    h.revision_count(2);
    h.rolling();
    h.all_ready(4);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.done();
    h.revision_count(1);
}

#[test]
fn rolling_update_with_unhealthy_pods_below_partition() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:2132
    let mut h = Harness::new(wrapper(4, 2, 0, 0));
    h.at_rest(4);
    h.worker_sts_unready(1);
    h.available(false);
    h.progressing(true);
    h.status(3, 4);
    h.update_worker_template();
    h.valid_leader_sts(4);
    h.rolling();
    // One group already unavailable below: the partition stops at 3, not 2.
    h.partition(3);
    h.status(3, 0);
    h.all_ready(4);
    h.valid_leader_sts(4);
    h.valid_worker_sts();
    h.partition(0);
    h.done();
    h.status(4, 4);
}

#[test]
fn rolling_update_with_no_ready_replicas() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:2199
    let mut h = Harness::new(wrapper(2, 1, 0, 0));
    h.at_rest(2);
    h.worker_sts_unready(0);
    h.available(false);
    h.partition(0);
    h.worker_sts_unready(1);
    h.available(false);
    h.partition(0);
    h.update_worker_template();
    h.valid_leader_sts(2);
    h.rolling();
    h.partition(1);
    h.status(0, 0);
    h.group_ready(1);
    h.partition(0);
    h.group_ready(0);
    h.available(true);
}

#[test]
fn resize_updates_the_size_of_the_replicas() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:2277
    let mut lws = wrapper(2, 1, 0, 0);
    lws.spec.leader_worker_template.size = Some(3);
    lws.spec.network_config = None; // the wrapper's Size() clears it
    let mut h = Harness::new(lws);
    h.at_rest(2);
    h.edit(|l| l.spec.leader_worker_template.size = Some(4));
    h.all_ready(2);
    h.available(true);
    h.partition(0);
    h.valid_leader_sts(2);
    h.valid_worker_sts();
    h.status(2, 2);
    h.event(
        "GroupsUpdating",
        "Rolling Upgrade is in progress, with 2 groups ready of total 2 groups",
    );
}

#[test]
fn rolling_update_with_partition() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:2312
    let mut h = Harness::new(wrapper(6, 1, 0, 4));
    h.all_ready(6);
    h.available(true);
    h.partition(4);
    h.valid_leader_sts(6);
    h.valid_worker_sts();
    h.status(6, 6);
    h.update_worker_template();
    h.progressing(true);
    h.update_in_progress(true);
    h.partition(5);
    h.valid_leader_sts(6);
    h.status(6, 0);
    h.group_ready(5); // group 4 is next
    h.progressing(true);
    h.update_in_progress(true);
    h.partition(4);
    h.valid_leader_sts(6);
    h.status(6, 1);
    h.group_ready(4); // the partitioned update is complete
    h.available(true);
    h.partition(4);
    h.valid_leader_sts(6);
    h.status(6, 2);
    h.set_partition(2);
    h.progressing(true);
    h.update_in_progress(true);
    h.partition(3);
    h.valid_leader_sts(6);
    h.status(6, 2);
    h.group_ready(3);
    h.progressing(true);
    h.update_in_progress(true);
    h.partition(2);
    h.valid_leader_sts(6);
    h.status(6, 3);
    h.group_ready(2);
    h.available(true);
    h.partition(2);
    h.valid_leader_sts(6);
    h.status(6, 4);
}

#[test]
fn rolling_update_with_partition_and_max_surge() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:2408
    let mut h = Harness::new(wrapper(3, 1, 1, 2));
    h.all_ready(3);
    h.available(true);
    h.partition(2);
    h.valid_leader_sts(3);
    h.valid_worker_sts();
    h.status(3, 3);
    h.update_worker_template();
    h.progressing(true);
    h.update_in_progress(true);
    h.partition(2);
    h.valid_leader_sts(4);
    h.status(3, 0);
    // Create the surge leader, from the LWS replicas up to the leader sts replicas.
    let lws = h.lws();
    let lsts = h.leader_sts().spec.replicas.unwrap();
    h.create_leaders(&lws, lws.replicas(), lsts);
    h.group_ready(3);
    h.group_ready(2);
    h.available(true);
    h.partition(2);
    h.valid_leader_sts(4);
    h.status(4, 2);
    h.set_partition(0);
    h.progressing(true);
    h.update_in_progress(true);
    h.partition(0);
    h.valid_leader_sts(4);
    h.status(4, 2);
    h.group_ready(1);
    h.group_ready(0);
    h.available(true);
    h.partition(0);
    h.valid_leader_sts(3);
    h.status(4, 4);
    h.delete_leader_pod(3, 4);
    h.available(true);
    h.partition(0);
    h.valid_leader_sts(3);
    h.status(3, 3);
}

#[test]
fn missing_controller_revision_is_created_to_match_the_leader_sts() {
    // test/integration/controllers/leaderworkerset_test.go@v0.10.0:2056
    let mut h = Harness::new(wrapper(2, 1, 0, 0));
    h.all_ready(2);
    h.available(true);
    h.revision_count(1);
    // Overwrite the leader sts's revision key with one no revision has.
    let mut sts = (*h.leader_sts()).clone();
    sts.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::TEMPLATE_REVISION_HASH.into(), "template-hash".into());
    h.w.api.update("test", sts).unwrap();
    h.settle();
    assert!(
        h.revisions().iter().any(|r| {
            k8s::label(&r.metadata, keys::TEMPLATE_REVISION_HASH) == Some("template-hash")
        }),
        "a revision keyed template-hash was created"
    );
    h.all_ready(2);
    h.available(true);
    h.revision_count(1);
    h.status(2, 2);
}
