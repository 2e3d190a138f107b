//! The checker's model of one watched LWS: its revisions (template fingerprints), its sizes and
//! rollout knobs, its pods, and per-group state derived from the pods' specs, with counters
//! kept in step so no check scans every group.
//!
//! A group is judged by its pods' *specs*, not their labels: each pod's containers (minus the
//! env the LWS webhook injects) are fingerprinted and matched against the leader and worker
//! templates of every LWS revision seen. The seed bug put the new worker template under the old
//! revision label, which only a spec comparison sees. Only where the spec cannot tell (the two
//! revisions share the role's pod spec) does the pod's revision label decide: the key the
//! release hashes (`RevisionHashing`), which is what the leader StatefulSet's pods carry and what
//! the StatefulSet controller compares.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use lws::api::{keys, LeaderWorkerSet};
use lws::k8s;
use lws::profile::{Profile, Release};

use crate::api::EventType;
use crate::lookup::LookupMap;

/// What a release hashes into the revision key (the `template-revision-hash` label) its pods
/// carry: what "the template changed" means for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevisionHashing {
    /// v0.3.0, v0.4.1: `LeaderWorkerTemplateHash` (pkg/utils/utils.go at v0.4.1:43-51;
    /// `lws::hash::template_hash`): the leader and worker templates and, with the
    /// network-config flag (v0.4.0, PR #197), `networkConfig.subdomainPolicy`.
    TemplateHash { network_config: bool },
    /// v0.10.0: a ControllerRevision over `leaderWorkerTemplate` and `networkConfig`
    /// (pkg/utils/revision/revision_utils.go at v0.10.0; `lws::v0_10_0::revision`).
    ControllerRevision,
}

impl RevisionHashing {
    pub fn of(profile: &Profile) -> RevisionHashing {
        match profile.release {
            Release::V0_10_0 => RevisionHashing::ControllerRevision,
            Release::V0_3_0 | Release::V0_4_1 => RevisionHashing::TemplateHash {
                network_config: profile.flags.network_config,
            },
        }
    }

    /// The revision key of this LWS spec, as the release's controller computes it.
    pub fn key(self, l: &LeaderWorkerSet) -> String {
        match self {
            RevisionHashing::TemplateHash { network_config } => {
                lws::hash::template_hash(l, network_config)
            }
            RevisionHashing::ControllerRevision => {
                lws::v0_10_0::revision::hash_revision(&lws::v0_10_0::revision::get_patch(l))
            }
        }
    }

    /// What the key covers, in words.
    pub fn covers(self) -> &'static str {
        match self {
            RevisionHashing::TemplateHash {
                network_config: false,
            } => "the leader and worker templates",
            RevisionHashing::TemplateHash {
                network_config: true,
            } => "the leader and worker templates and networkConfig.subdomainPolicy",
            RevisionHashing::ControllerRevision => "leaderWorkerTemplate and networkConfig",
        }
    }
}

/// One LWS revision: the fingerprints of its leader and worker templates, and its revision key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Revision {
    pub leader: u64,
    pub worker: u64,
    pub key: String,
}

#[derive(Clone, Debug)]
pub(super) struct PodInfo {
    pub group: i32,
    pub leader: bool,
    pub fingerprint: u64,
    pub ready: bool,
    pub terminating: bool,
    /// The template-revision-hash label: what the leader StatefulSet compares with its
    /// template when it decides to replace a leader.
    pub revision: Option<String>,
    pub created: Option<Time>,
    /// The group size the pod was made for (its `leaderworkerset.sigs.k8s.io/size` annotation):
    /// a group on an older revision keeps its own size while a size change rolls out (v0.10.0
    /// in-place resize hashes the size into the revision).
    pub size: Option<i32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Empty,
    /// Pods exist and none is distinguishably on the latest revision.
    Old,
    /// Some live pods are on the latest revision and some are not: the group is being moved.
    Moving,
    /// Every live pod on the latest revision, not all of them ready (or not all there yet).
    On,
    /// Every pod on the latest revision and ready.
    Done,
}

impl Phase {
    /// What a stuck report says of a group in this phase.
    fn in_words(self) -> &'static str {
        match self {
            Phase::Empty => "has no pods",
            Phase::Old => "is on an old revision",
            Phase::Moving => "is being moved to the latest revision",
            Phase::On => "is on the latest revision but not all ready",
            Phase::Done => "is on the latest revision and ready",
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Group {
    pub pods: BTreeSet<String>,
    pub phase: Phase,
    pub available: bool,
    /// A non-terminating leader exists (the group "exists" for `surgeBound`).
    pub has_leader: bool,
    /// Some non-terminating pod exists.
    pub has_live: bool,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            pods: BTreeSet::new(),
            phase: Phase::Empty,
            available: false,
            has_leader: false,
            has_live: false,
        }
    }
}

/// Counters kept in step with the per-group state, so no check scans every group.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub available: i32,
    /// Available groups below `replicas`: what arms `availability`.
    pub available_desired: i32,
    pub with_leader: i32,
    pub done_desired: i32,
    pub live_surge: i32,
}

/// The groups the LWS asks for: below `replicas`, and of those the ones from `partition` up
/// are to be on the latest revision.
#[derive(Clone, Copy, Debug)]
pub(super) struct Desired {
    pub replicas: i32,
    pub partition: i32,
}

impl Counts {
    fn add(&mut self, g: i32, x: &Group, want: Desired, sign: i32) {
        let replicas = want.replicas;
        // A group below the LWS partition is done once ready, on whatever revision it runs.
        let done = x.phase == Phase::Done || (g < want.partition && x.available);
        self.available += sign * i32::from(x.available);
        self.available_desired += sign * i32::from(g < replicas && x.available);
        self.with_leader += sign * i32::from(x.has_leader);
        self.done_desired += sign * i32::from(g < replicas && done);
        self.live_surge += sign * i32::from(g >= replicas && x.has_live);
    }
}

/// A pod event of the watched LWS, as the checks need to know it.
#[derive(Clone, Debug)]
pub(super) struct PodEvent {
    pub name: String,
    pub group: i32,
    /// The pod is (for a deletion: was) its group's leader.
    pub leader: bool,
    pub deleted: bool,
    pub terminating: bool,
    pub was_terminating: bool,
    /// When the pod was created, in virtual ms (for a deletion: the deleted pod's).
    pub created_ms: Option<u64>,
}

/// How a re-evaluated group changed.
#[derive(Clone, Copy, Debug)]
pub(super) struct GroupChange {
    pub before: Phase,
    pub phase: Phase,
    pub available: bool,
}

pub(super) struct Model {
    pub revisions: Vec<Revision>,
    pub latest: Option<usize>,
    pub replicas: i32,
    pub size: i32,
    pub max_unavailable: i32,
    pub max_surge: i32,
    /// The LWS's own `rollingUpdateConfiguration.partition` (v0.7.0+; pruned by older CRDs):
    /// groups below it are left on their revision by design (lws v0.10.0
    /// leaderworkerset_controller.go:433-482, `partitionedUpdatedAndReadyCount`).
    pub lws_partition: i32,
    /// The pods of the watched LWS by name (all in its namespace).
    pub pods: LookupMap<String, PodInfo>,
    /// Container fingerprint per live pod UID (no actor here updates a pod's containers).
    fingerprints: LookupMap<String, u64>,
    pub groups: BTreeMap<i32, Group>,
    pub counts: Counts,
}

impl Model {
    pub fn new() -> Model {
        Model {
            revisions: Vec::new(),
            latest: None,
            replicas: 0,
            size: 1,
            max_unavailable: 1,
            max_surge: 0,
            lws_partition: 0,
            pods: LookupMap::default(),
            fingerprints: LookupMap::default(),
            groups: BTreeMap::new(),
            counts: Counts::default(),
        }
    }

    /// A new LWS spec: sizes, knobs and the latest revision. Every group is re-evaluated after.
    pub fn observe_spec(&mut self, l: &LeaderWorkerSet, key: String) {
        self.replicas = l.replicas();
        self.size = l.size();
        self.lws_partition = l.rolling_update().partition.unwrap_or(0).max(0);
        if let Ok(k) = lws::lws_controller::knobs(l) {
            self.max_unavailable = k.max_unavailable;
            self.max_surge = k.max_surge;
        }
        let rev = Revision {
            leader: template_fingerprint(l.leader_template().spec.as_ref()),
            worker: template_fingerprint(
                l.spec.leader_worker_template.worker_template.spec.as_ref(),
            ),
            key,
        };
        if self.latest.map(|i| &self.revisions[i]) != Some(&rev) {
            let index = self
                .revisions
                .iter()
                .position(|r| *r == rev)
                .unwrap_or_else(|| {
                    self.revisions.push(rev);
                    self.revisions.len() - 1
                });
            self.latest = Some(index);
            // Phases are relative to the latest revision: recompute them all, silently.
            let groups: Vec<i32> = self.groups.keys().copied().collect();
            for g in groups {
                let phase = self.phase_of(g);
                self.groups.get_mut(&g).expect("listed").phase = phase;
            }
        }
        self.recount();
    }

    /// Revisions an earlier LWS of the same name had, whose objects this LWS adopted: known as
    /// older than every revision of its own (a pod running one is on an old revision).
    pub fn inherit(&mut self, older: &[Revision]) {
        let new: Vec<Revision> = older
            .iter()
            .filter(|r| !self.revisions.contains(r))
            .cloned()
            .collect();
        if new.is_empty() {
            return;
        }
        let n = new.len();
        self.revisions.splice(0..0, new);
        self.latest = self.latest.map(|i| i + n);
        let groups: Vec<i32> = self.groups.keys().copied().collect();
        for g in groups {
            let phase = self.phase_of(g);
            self.groups.get_mut(&g).expect("listed").phase = phase;
        }
        self.recount();
    }

    /// Recompute the counters from the per-group state: only when `replicas` or the latest
    /// revision changes, never per event.
    fn recount(&mut self) {
        let mut c = Counts::default();
        let want = self.desired();
        for (g, x) in &self.groups {
            c.add(*g, x, want, 1);
        }
        self.counts = c;
    }

    /// One watch event of a pod of the LWS named `lws` in its namespace; `None` if the pod
    /// belongs to no group of it.
    pub fn observe_pod(&mut self, lws: &str, ty: EventType, p: &Pod) -> Option<PodEvent> {
        let name = k8s::name(&p.metadata).to_string();
        let group = group_of(lws, &name)?;
        let before = self.pods.get(&name);
        let was_terminating = before.is_some_and(|i| i.terminating);
        if ty == EventType::Deleted {
            let leader = before.is_some_and(|i| i.leader);
            let created_ms = before
                .and_then(|i| i.created.as_ref())
                .map(crate::time::from_time);
            self.pods.remove(&name);
            self.fingerprints.remove(k8s::uid(&p.metadata));
            if let Some(g) = self.groups.get_mut(&group) {
                g.pods.remove(&name);
            }
            return Some(PodEvent {
                name,
                group,
                leader,
                deleted: true,
                terminating: false,
                was_terminating,
                created_ms,
            });
        }
        let uid = k8s::uid(&p.metadata).to_string();
        let fp = *self
            .fingerprints
            .entry(uid)
            .or_insert_with(|| fingerprint(p.spec.as_ref()));
        let terminating = k8s::is_terminating(&p.metadata);
        let leader = k8s::label(&p.metadata, keys::WORKER_INDEX) == Some("0");
        let info = PodInfo {
            group,
            leader,
            fingerprint: fp,
            ready: k8s::is_running_and_ready(p),
            terminating,
            revision: k8s::label(&p.metadata, keys::TEMPLATE_REVISION_HASH).map(str::to_string),
            created: p.metadata.creation_timestamp.clone(),
            size: k8s::annotation(&p.metadata, keys::SIZE).and_then(|v| v.parse().ok()),
        };
        self.pods.insert(name.clone(), info);
        self.groups
            .entry(group)
            .or_default()
            .pods
            .insert(name.clone());
        Some(PodEvent {
            name,
            group,
            leader,
            deleted: false,
            terminating,
            was_terminating,
            created_ms: p
                .metadata
                .creation_timestamp
                .as_ref()
                .map(crate::time::from_time),
        })
    }

    /// Re-derive group g's state from its pods, keeping the counters in step.
    pub fn reevaluate(&mut self, g: i32) -> GroupChange {
        let live = self.live_pods(g);
        let has_live = !live.is_empty();
        let has_leader = live.iter().any(|(_, i)| i.leader);
        let available = self.all_ready(g);
        let phase = self.phase_of(g);
        let want = self.desired();
        let group = self.groups.entry(g).or_default();
        let before = group.phase;
        self.counts.add(g, group, want, -1);
        group.available = available;
        group.phase = phase;
        group.has_live = has_live;
        group.has_leader = has_leader;
        self.counts.add(g, group, want, 1);
        GroupChange {
            before,
            phase,
            available,
        }
    }

    /// Does `p` distinguishably run the latest revision's template for its role? By its spec
    /// when no other revision shares it; otherwise by the revision label it carries.
    fn is_new(&self, p: &PodInfo) -> bool {
        let Some(latest) = self.latest else {
            return false;
        };
        let role = |r: &Revision| if p.leader { r.leader } else { r.worker };
        let fp = role(&self.revisions[latest]);
        if p.fingerprint != fp {
            return false;
        }
        let shared = self
            .revisions
            .iter()
            .enumerate()
            .any(|(i, r)| i != latest && role(r) == fp);
        !shared || p.revision.as_deref() == Some(self.revisions[latest].key.as_str())
    }

    /// Does `p` run the latest revision's template for its role? Where another revision shares
    /// that pod spec, a pod labelled with another revision's key is that revision's: a leader
    /// re-created by the leader StatefulSet from its old revision has not moved.
    fn matches_latest(&self, p: &PodInfo) -> bool {
        let Some(latest) = self.latest else {
            return false;
        };
        let r = &self.revisions[latest];
        let role = |r: &Revision| if p.leader { r.leader } else { r.worker };
        if p.fingerprint != role(r) {
            return false;
        }
        match p.revision.as_deref() {
            Some(label) if label != r.key => !self
                .revisions
                .iter()
                .any(|o| o.key == label && role(o) == p.fingerprint),
            _ => true,
        }
    }

    pub fn live_pods(&self, g: i32) -> Vec<(&String, &PodInfo)> {
        let Some(group) = self.groups.get(&g) else {
            return Vec::new();
        };
        group
            .pods
            .iter()
            .filter_map(|n| self.pods.get(n).map(|i| (n, i)))
            .filter(|(_, i)| !i.terminating)
            .collect()
    }

    /// The pods of group g, live or terminating.
    pub fn group_pods(&self, g: i32) -> impl Iterator<Item = &PodInfo> {
        self.groups
            .get(&g)
            .into_iter()
            .flat_map(|x| x.pods.iter().filter_map(|n| self.pods.get(n)))
    }

    fn all_ready(&self, g: i32) -> bool {
        let live = self.live_pods(g);
        // The size the group's leader was made for; the LWS's when no pod says.
        let size = live
            .iter()
            .find(|(_, i)| i.leader)
            .or_else(|| live.first())
            .and_then(|(_, i)| i.size)
            .unwrap_or(self.size);
        live.len() as i32 == size
            && live.iter().filter(|(_, i)| i.leader).count() == 1
            && live.iter().all(|(_, i)| i.ready)
    }

    fn phase_of(&self, g: i32) -> Phase {
        let live = self.live_pods(g);
        if live.is_empty() {
            return Phase::Empty;
        }
        if live.iter().all(|(_, i)| self.matches_latest(i)) {
            return if self.all_ready(g) {
                Phase::Done
            } else {
                Phase::On
            };
        }
        if live.iter().any(|(_, i)| self.is_new(i)) {
            Phase::Moving
        } else {
            Phase::Old
        }
    }

    pub fn phase(&self, g: i32) -> Option<Phase> {
        self.groups.get(&g).map(|x| x.phase)
    }

    pub fn is_available(&self, g: i32) -> bool {
        self.groups.get(&g).is_some_and(|x| x.available)
    }

    pub fn has_terminating(&self, g: i32) -> bool {
        self.group_pods(g).any(|p| p.terminating)
    }

    /// The names of group g's pods (the objects a violation names).
    pub fn group_objects(&self, g: i32) -> Vec<String> {
        self.groups
            .get(&g)
            .map(|x| x.pods.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Groups below `replicas` that are not available.
    pub fn down_groups(&self) -> Vec<i32> {
        (0..self.replicas)
            .filter(|g| !self.is_available(*g))
            .collect()
    }

    pub fn desired(&self) -> Desired {
        Desired {
            replicas: self.replicas,
            partition: self.lws_partition,
        }
    }

    /// Every group below `replicas` is on the latest revision and ready (below the LWS's own
    /// partition: ready on any revision), and no surge group is left.
    pub fn rollout_complete(&self) -> bool {
        if self.latest.is_none() {
            return false;
        }
        self.counts.done_desired == self.replicas && self.counts.live_surge == 0
    }

    /// Why the rollout is not complete, in words (for convergence and timeout reports).
    pub fn stuck_state(&self) -> String {
        let mut parts = Vec::new();
        for g in 0..self.replicas {
            let phase = self.phase(g).unwrap_or(Phase::Empty);
            let kept = g < self.lws_partition && self.is_available(g);
            if phase != Phase::Done && !kept {
                let pods = self.groups.get(&g).map(|x| x.pods.len()).unwrap_or(0);
                parts.push(format!(
                    "group {g} {} ({pods} of {} pods present)",
                    phase.in_words(),
                    self.size
                ));
            }
        }
        for (i, g) in self.groups.range(self.replicas..) {
            if g.pods
                .iter()
                .any(|p| self.pods.get(p).is_some_and(|p| !p.terminating))
            {
                parts.push(format!("surge group {i} still exists"));
            }
        }
        if parts.is_empty() {
            "every group is on the latest revision and ready".into()
        } else {
            parts.join("; ")
        }
    }
}

/// A pod's containers without the env the LWS webhook injects, with the API server's
/// defaults, hashed.
pub(super) fn fingerprint(spec: Option<&PodSpec>) -> u64 {
    containers_hash(spec, false)
}

/// A template's containers as `fingerprint` hashes the pods made from it: with their resource
/// lists as a pod stores them (rounded up to thousandths, where an LWS template keeps `100u`).
pub(super) fn template_fingerprint(spec: Option<&PodSpec>) -> u64 {
    containers_hash(spec, true)
}

fn containers_hash(spec: Option<&PodSpec>, round_lists: bool) -> u64 {
    let strip = |cs: &[Container]| -> Vec<Container> {
        cs.iter()
            .map(|c| {
                let mut c = c.clone();
                crate::api::pod_defaults::default_container(&mut c);
                if round_lists {
                    // A stored template's quantities all parse.
                    let lists = crate::api::quantity::Rounding::Milli;
                    let _ =
                        crate::api::quantity::canonicalize_requirements(&mut c.resources, lists);
                }
                if let Some(env) = c.env.as_mut() {
                    env.retain(|e| !e.name.starts_with("LWS_") && !e.name.starts_with("TPU_"));
                    if env.is_empty() {
                        c.env = None;
                    }
                }
                c
            })
            .collect()
    };
    let (containers, init) = match spec {
        Some(s) => (
            strip(&s.containers),
            strip(s.init_containers.as_deref().unwrap_or(&[])),
        ),
        None => (Vec::new(), Vec::new()),
    };
    fnv64(&serde_json::to_vec(&(containers, init)).expect("containers encode"))
}

pub(super) fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `<lws>-<g>` is a leader, `<lws>-<g>-<w>` a worker of group g.
pub(super) fn group_of(lws: &str, pod: &str) -> Option<i32> {
    let rest = pod.strip_prefix(lws)?.strip_prefix('-')?;
    rest.split('-').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec};

    use super::{fingerprint, group_of};

    #[test]
    fn group_indices_parse_from_pod_names() {
        assert_eq!(group_of("vllm", "vllm-3"), Some(3));
        assert_eq!(group_of("vllm", "vllm-3-2"), Some(3));
        assert_eq!(group_of("vllm", "vllmx-3"), None);
        assert_eq!(group_of("vllm", "vllm-a"), None);
    }

    #[test]
    fn fingerprints_ignore_injected_env_but_not_images() {
        let c = |image: &str, env: &[&str]| Container {
            name: "c".into(),
            image: Some(image.into()),
            env: Some(
                env.iter()
                    .map(|n| EnvVar {
                        name: n.to_string(),
                        value: Some("x".into()),
                        value_from: None,
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        let spec = |c: Container| PodSpec {
            containers: vec![c],
            ..Default::default()
        };
        assert_eq!(
            fingerprint(Some(&spec(c("a", &[])))),
            fingerprint(Some(&spec(c("a", &["LWS_LEADER_ADDRESS"]))))
        );
        assert_ne!(
            fingerprint(Some(&spec(c("a", &[])))),
            fingerprint(Some(&spec(c("a", &["USER_VAR"]))))
        );
        assert_ne!(
            fingerprint(Some(&spec(c("a", &[])))),
            fingerprint(Some(&spec(c("b", &[]))))
        );
    }
}
