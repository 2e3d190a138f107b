//! The kubelets of every node, as one actor (kubernetes pkg/kubelet pod lifecycle,
//! simplified; docs/fidelity.md): a bound pod becomes Running and
//! Ready after a sampled start-up delay; a crashed container bumps restartCount and is NotReady
//! until restarted after the CrashLoopBackOff delay; a deleted pod terminates after a sampled
//! delay (at most its grace period) and is then removed with a UID precondition. A pod with an
//! image listed as unpullable stays Pending with its containers waiting in ImagePullBackOff. A
//! running pod whose spec names a new image (`kubectl set image pod/...`) has those containers
//! restarted on it. A dead machine's kubelet does nothing at all.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
    ContainerStatus, HostIP, Node, Pod, PodIP,
};
use lws::k8s;

use crate::api::{set_pod_condition, ApiServer, DeleteOptions, EventType};
use crate::cluster::{ClusterConfig, Infra};
use crate::informer::Informer;
use crate::rng::SimRng;
use crate::time::{after, from_time, to_time};

pub const ACTOR: &str = "kubelet";

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Start,
    Restart,
    Kill,
}

pub struct Kubelet {
    pods: Informer<Pod>,
    /// (due, namespace, name, uid) -> action.
    timers: BTreeMap<(u64, String, String, String), Action>,
    /// UIDs with a start or kill already planned, so repeated events do not plan twice.
    planned_start: BTreeSet<String>,
    planned_kill: BTreeSet<String>,
    /// UIDs of running pods whose changed images are being pulled and started.
    planned_image: BTreeSet<String>,
    /// Per node, how many pod addresses its IPAM has handed out.
    addresses_given: BTreeMap<String, u32>,
}

impl Kubelet {
    pub fn new(api: &ApiServer, lag_ms: u64) -> Kubelet {
        Kubelet {
            pods: Informer::start(api, lag_ms),
            timers: BTreeMap::new(),
            planned_start: BTreeSet::new(),
            planned_kill: BTreeSet::new(),
            planned_image: BTreeSet::new(),
            addresses_given: BTreeMap::new(),
        }
    }

    /// The pod's addresses when its sandbox starts: the node's InternalIP as `hostIP`, and the
    /// next address of the node's pod range as `podIP`, as kind's host-local IPAM hands them
    /// out (in order from `.2`, wrapping after `.254`); a restarted pod keeps its own. The
    /// node's range is 10.244.0.0/16 cut in /24s by the node's slot (its InternalIP's offset
    /// from 10.0.0.2, `nodes::describe_node`). Nothing in the simulation reads them.
    fn assign_addresses(&mut self, api: &ApiServer, pod: &mut Pod) {
        let node = k8s::node_name(pod).to_string();
        let st = pod.status.get_or_insert_with(Default::default);
        if st.pod_ip.is_some() {
            return;
        }
        let Some(host) = api.try_get::<Node>("", &node).and_then(|n| internal_ip(&n)) else {
            return;
        };
        let slot = u32::from(host).wrapping_sub(u32::from(Ipv4Addr::new(10, 0, 0, 2)));
        let given = self.addresses_given.entry(node).or_insert(0);
        let host_part = 2 + *given % 253;
        *given += 1;
        let base = u32::from(Ipv4Addr::new(10, 244, 0, 0));
        let ip = Ipv4Addr::from(base.wrapping_add(slot.wrapping_mul(256)) + host_part);
        // Each address formatted once: `Ipv4Addr`'s `Display` goes through `fmt`.
        let (host, ip) = (host.to_string(), ip.to_string());
        st.host_ips = Some(vec![HostIP { ip: host.clone() }]);
        st.host_ip = Some(host);
        st.pod_ips = Some(vec![PodIP { ip: ip.clone() }]);
        st.pod_ip = Some(ip);
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        let timer = self.timers.keys().next().map(|k| k.0);
        [self.pods.next_due_ms(api), timer]
            .into_iter()
            .flatten()
            .min()
    }

    pub fn step(
        &mut self,
        api: &mut ApiServer,
        rng: &mut SimRng,
        infra: &Infra,
        cfg: &ClusterConfig,
        now_ms: u64,
    ) {
        let mut image_changed = Vec::new();
        let mut gated = Vec::new();
        for d in self.pods.poll(api, now_ms) {
            let uid = k8s::uid(&d.obj.metadata);
            if d.ty == EventType::Deleted {
                self.planned_start.remove(uid);
                self.planned_kill.remove(uid);
                self.planned_image.remove(uid);
                continue;
            }
            let pod = &d.obj;
            let node = k8s::node_name(pod);
            if node.is_empty() || !infra.is_alive(node) {
                continue;
            }
            // (namespace, name, uid), built only for a pod that gets a timer or a restart.
            let key = || {
                let meta = &pod.metadata;
                let ns = k8s::namespace(meta).to_string();
                (ns, k8s::name(meta).to_string(), uid.to_string())
            };
            if let Some(ts) = &pod.metadata.deletion_timestamp {
                if !self.planned_kill.contains(uid) {
                    self.planned_kill.insert(uid.to_string());
                    let grace_deadline = from_time(ts);
                    let delay =
                        rng.range_inclusive(cfg.pod_termination_ms.0, cfg.pod_termination_ms.1);
                    let at = after(now_ms, delay).min(grace_deadline.max(now_ms));
                    let (ns, name, uid) = key();
                    self.timers.insert((at, ns, name, uid), Action::Kill);
                }
            } else if k8s::phase(pod) == "Pending" && !self.planned_start.contains(uid) {
                self.planned_start.insert(uid.to_string());
                let delay = rng.range_inclusive(cfg.pod_startup_ms.0, cfg.pod_startup_ms.1);
                let (ns, name, uid) = key();
                self.timers
                    .insert((after(now_ms, delay), ns, name, uid), Action::Start);
            } else if k8s::phase(pod) == "Running"
                && images_changed(pod)
                && !self.planned_image.contains(uid)
            {
                self.planned_image.insert(uid.to_string());
                image_changed.push(key());
            } else if has_readiness_gates(pod) && containers_ready(pod) {
                gated.push(key());
            }
        }
        for (ns, name, uid) in gated {
            recheck_readiness_gates(api, (&ns, &name, &uid), now_ms);
        }
        for (ns, name, uid) in image_changed {
            self.restart_for_image(api, rng, cfg, (&ns, &name, &uid), now_ms);
        }
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            let ((_, ns, name, uid), action) = entry.remove_entry();
            self.fire(api, infra, cfg, &ns, &name, &uid, action, now_ms);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fire(
        &mut self,
        api: &mut ApiServer,
        infra: &Infra,
        cfg: &ClusterConfig,
        ns: &str,
        name: &str,
        uid: &str,
        action: Action,
        now_ms: u64,
    ) {
        let Some(live) = api.try_get::<Pod>(ns, name) else {
            return;
        };
        if k8s::uid(&live.metadata) != uid || !infra.is_alive(k8s::node_name(&live)) {
            return;
        }
        match action {
            Action::Start | Action::Restart => {
                // A pod marked for deletion before its containers started is never started:
                // its pod worker goes straight to terminating (kubernetes
                // pkg/kubelet/pod_workers.go, `UpdatePod` on a pod with a deletionTimestamp).
                if action == Action::Start
                    && (k8s::phase(&live) != "Pending" || k8s::is_terminating(&live.metadata))
                {
                    return;
                }
                let mut pod = (*live).clone();
                // The sandbox, and so the pod's addresses, come before any image pull.
                self.assign_addresses(api, &mut pod);
                // Also a restart onto a new image that cannot be pulled: the pod stays
                // Running and NotReady in ImagePullBackOff.
                if has_unpullable_image(&pod, cfg) {
                    mark_image_pull_backoff(&mut pod);
                    let _ = api.update_status(ACTOR, pod);
                    return;
                }
                self.planned_image.remove(uid);
                mark_running(&mut pod, now_ms);
                let _ = api.update_status(ACTOR, pod);
            }
            Action::Kill => {
                let opts = DeleteOptions {
                    grace_period_seconds: Some(0),
                    precondition_uid: Some(uid.to_string()),
                    ..Default::default()
                };
                let _ = api.delete::<Pod>(ACTOR, ns, name, &opts);
            }
        }
    }

    /// The spec of a running pod names new images (`kubectl set image pod/...`): the kubelet
    /// kills those containers and starts them again with the new image (their hash changed;
    /// kubernetes `pkg/kubelet/kuberuntime/kuberuntime_manager.go` `computePodActions`):
    /// restartCount+1 and NotReady now, Running and Ready on the new image after a start-up delay.
    fn restart_for_image(
        &mut self,
        api: &mut ApiServer,
        rng: &mut SimRng,
        cfg: &ClusterConfig,
        (ns, name, uid): (&str, &str, &str),
        now_ms: u64,
    ) {
        let Some(live) = api.try_get::<Pod>(ns, name) else {
            return;
        };
        if k8s::uid(&live.metadata) != uid || k8s::is_terminating(&live.metadata) {
            return;
        }
        let mut pod = (*live).clone();
        let wanted: BTreeMap<String, String> = spec_images(&pod).into_iter().collect();
        let st = pod.status.get_or_insert_with(Default::default);
        for c in st.container_statuses.iter_mut().flatten() {
            if wanted.get(&c.name).is_some_and(|image| *image != c.image) {
                c.restart_count += 1;
                c.ready = false;
                c.started = Some(false);
                c.state = Some(ContainerState {
                    waiting: Some(ContainerStateWaiting {
                        reason: Some("ContainerCreating".into()),
                        message: None,
                    }),
                    ..Default::default()
                });
            }
        }
        for condition in ["ContainersReady", "Ready"] {
            set_pod_condition(
                &mut pod,
                condition,
                "False",
                Some("ContainersNotReady"),
                now_ms,
            );
        }
        if api.update_status(ACTOR, pod).is_err() {
            return;
        }
        let delay = rng.range_inclusive(cfg.pod_startup_ms.0, cfg.pod_startup_ms.1);
        let key = (
            after(now_ms, delay),
            ns.to_string(),
            name.to_string(),
            uid.to_string(),
        );
        self.timers.insert(key, Action::Restart);
    }

    /// A container of `pod` exits: restartCount+1, NotReady, restart after the back-off
    /// (10 s doubling to 300 s). The pod object, its UID and phase Running are kept.
    pub fn crash_container(
        &mut self,
        api: &mut ApiServer,
        ns: &str,
        name: &str,
        now_ms: u64,
    ) -> bool {
        let Some(live) = api.try_get::<Pod>(ns, name) else {
            return false;
        };
        if k8s::phase(&live) != "Running" || k8s::is_terminating(&live.metadata) {
            return false;
        }
        let mut pod = (*live).clone();
        // kubelet `format.Pod`, which the back-off message names the pod by.
        let who = format!("{name}_{ns}({})", k8s::uid(&pod.metadata));
        let st = pod.status.get_or_insert_with(Default::default);
        let mut restarts = 0;
        for c in st.container_statuses.iter_mut().flatten() {
            c.restart_count += 1;
            restarts = restarts.max(c.restart_count);
            c.ready = false;
            c.started = Some(false);
            let wait = go_duration(backoff_ms(c.restart_count));
            let message = format!(
                "back-off {wait} restarting failed container={} pod={who}",
                c.name
            );
            // The run that ended, as the kubelet reports it (`lastState`, which `kubectl get
            // pods` reads for "2 (30s ago)"): exit code 1, reason Error.
            let started_at = c.state.as_ref().and_then(|s| s.running.as_ref());
            c.last_state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 1,
                    reason: Some("Error".into()),
                    started_at: started_at.and_then(|r| r.started_at.clone()),
                    finished_at: Some(to_time(now_ms)),
                    ..Default::default()
                }),
                ..Default::default()
            });
            c.state = Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("CrashLoopBackOff".into()),
                    message: Some(message),
                }),
                ..Default::default()
            });
        }
        set_pod_condition(
            &mut pod,
            "ContainersReady",
            "False",
            Some("ContainersNotReady"),
            now_ms,
        );
        set_pod_condition(
            &mut pod,
            "Ready",
            "False",
            Some("ContainersNotReady"),
            now_ms,
        );
        let uid = k8s::uid(&pod.metadata).to_string();
        if api.update_status(ACTOR, pod).is_err() {
            return false;
        }
        let backoff_ms = backoff_ms(restarts);
        self.timers.insert(
            (
                after(now_ms, backoff_ms),
                ns.to_string(),
                name.to_string(),
                uid,
            ),
            Action::Restart,
        );
        true
    }
}

/// Each container of the pod's spec with the image it names.
/// The crash back-off after a container's `restarts`-th restart: 10 s doubling to 300 s.
fn backoff_ms(restarts: i32) -> u64 {
    let doublings = u32::try_from(restarts.max(1) - 1).unwrap_or(0).min(5);
    (10_000u64 << doublings).min(300_000)
}

/// Whole seconds as Go's `time.Duration` prints them: `10s`, `1m20s`, `5m0s`.
fn go_duration(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{}s", s / 60, s % 60)
    }
}

fn has_readiness_gates(pod: &Pod) -> bool {
    let gates = pod.spec.as_ref().and_then(|s| s.readiness_gates.as_ref());
    gates.is_some_and(|g| !g.is_empty())
}

fn containers_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_deref());
    conditions
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "ContainersReady" && c.status == "True")
}

/// A running pod with readiness gates whose conditions changed (a client wrote one): Ready
/// follows them, as the kubelet's next status sync writes it.
fn recheck_readiness_gates(api: &mut ApiServer, (ns, name, uid): (&str, &str, &str), now_ms: u64) {
    let Some(live) = api.try_get::<Pod>(ns, name) else {
        return;
    };
    // The informer's copy may be behind: Ready follows the gates only while the live pod's
    // containers still run and are ready (a crash since made them not).
    let running = k8s::phase(&live) == "Running" && containers_ready(&live);
    if k8s::uid(&live.metadata) != uid || k8s::is_terminating(&live.metadata) || !running {
        return;
    }
    let mut pod = (*live).clone();
    if set_ready(&mut pod, now_ms) {
        let _ = api.update_status(ACTOR, pod);
    }
}

fn spec_images(pod: &Pod) -> Vec<(String, String)> {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

/// Whether some container's spec names another image than its status reports running.
fn images_changed(pod: &Pod) -> bool {
    let Some(statuses) = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
    else {
        return false;
    };
    pod.spec.iter().flat_map(|s| s.containers.iter()).any(|c| {
        statuses
            .iter()
            .find(|st| st.name == c.name)
            .is_some_and(|st| Some(&st.image) != c.image.as_ref())
    })
}

/// Whether some container's image is one the cluster cannot pull.
fn has_unpullable_image(pod: &Pod, cfg: &ClusterConfig) -> bool {
    pod.spec.iter().flat_map(|s| s.containers.iter()).any(|c| {
        c.image
            .as_ref()
            .is_some_and(|i| cfg.unpullable_images.contains(i))
    })
}

/// The pod stays Pending; each container waits in ImagePullBackOff (the kubelet keeps retrying
/// the pull, which never succeeds, so nothing else changes).
fn mark_image_pull_backoff(pod: &mut Pod) {
    let containers = spec_images(pod);
    let st = pod.status.get_or_insert_with(Default::default);
    st.container_statuses = Some(
        containers
            .into_iter()
            .map(|(name, image)| ContainerStatus {
                name,
                image,
                state: Some(ContainerState {
                    waiting: Some(ContainerStateWaiting {
                        reason: Some("ImagePullBackOff".into()),
                        message: Some("Back-off pulling image".into()),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect(),
    );
}

/// A node's InternalIP, if it reports one.
fn internal_ip(node: &Node) -> Option<Ipv4Addr> {
    let addresses = node.status.as_ref()?.addresses.as_ref()?;
    let a = addresses.iter().find(|a| a.type_ == "InternalIP")?;
    a.address.parse().ok()
}

/// Containers running and ready, pod Running with Ready=True (no probes modelled).
fn mark_running(pod: &mut Pod, now_ms: u64) {
    let containers = spec_images(pod);
    let st = pod.status.get_or_insert_with(Default::default);
    st.phase = Some("Running".to_string());
    st.start_time.get_or_insert_with(|| to_time(now_ms));
    // A restarted container keeps its count and the run that ended (`lastState`).
    let old: BTreeMap<String, (i32, Option<ContainerState>)> = st
        .container_statuses
        .iter_mut()
        .flatten()
        .map(|c| (c.name.clone(), (c.restart_count, c.last_state.take())))
        .collect();
    st.container_statuses = Some(
        containers
            .into_iter()
            .map(|(name, image)| {
                let (restart_count, last_state) = old.get(&name).cloned().unwrap_or_default();
                (name, image, restart_count, last_state)
            })
            .map(|(name, image, restart_count, last_state)| ContainerStatus {
                restart_count,
                last_state,
                name,
                image,
                ready: true,
                started: Some(true),
                state: Some(ContainerState {
                    running: Some(ContainerStateRunning {
                        started_at: Some(to_time(now_ms)),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect(),
    );
    report_init_containers(pod, now_ms);
    set_pod_condition(pod, "Initialized", "True", None, now_ms);
    set_pod_condition(pod, "ContainersReady", "True", None, now_ms);
    set_ready(pod, now_ms);
}

/// The init containers as done when the pod runs (they are not run one by one: their time is
/// in the start-up delay): an ordinary one terminated (exit 0, Completed), a sidecar
/// (`restartPolicy: Always`) started, running and ready, as `kubectl get pods` counts it.
fn report_init_containers(pod: &mut Pod, now_ms: u64) {
    let Some(spec) = pod.spec.as_ref().and_then(|s| s.init_containers.as_ref()) else {
        return;
    };
    let statuses: Vec<ContainerStatus> = spec
        .iter()
        .map(|c| {
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            let state = if sidecar {
                ContainerState {
                    running: Some(ContainerStateRunning {
                        started_at: Some(to_time(now_ms)),
                    }),
                    ..Default::default()
                }
            } else {
                ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        exit_code: 0,
                        reason: Some("Completed".into()),
                        finished_at: Some(to_time(now_ms)),
                        ..Default::default()
                    }),
                    ..Default::default()
                }
            };
            ContainerStatus {
                name: c.name.clone(),
                image: c.image.clone().unwrap_or_default(),
                ready: sidecar,
                started: Some(sidecar),
                state: Some(state),
                ..Default::default()
            }
        })
        .collect();
    pod.status
        .get_or_insert_with(Default::default)
        .init_container_statuses = Some(statuses);
}

/// Why the readiness gates hold Ready, every gate whose condition is not True, joined as
/// kubernetes pkg/kubelet/status `GeneratePodReadyCondition` joins them; `None` when none does.
fn unmet_gates(pod: &Pod) -> Option<String> {
    let gates = pod.spec.as_ref()?.readiness_gates.as_deref()?;
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_deref());
    let unmet: Vec<String> = gates
        .iter()
        .filter_map(|g| {
            let ty = &g.condition_type;
            let c = conditions
                .unwrap_or_default()
                .iter()
                .find(|c| &c.type_ == ty);
            match c {
                None => Some(format!(
                    "corresponding condition of pod readiness gate \"{ty}\" does not exist."
                )),
                Some(c) if c.status != "True" => Some(format!(
                    "the status of pod readiness gate \"{ty}\" is not \"True\", but {}",
                    c.status
                )),
                Some(_) => None,
            }
        })
        .collect();
    (!unmet.is_empty()).then(|| unmet.join(", "))
}

/// Ready with containers ready: True when every readiness gate's condition is True, else
/// False (`ReadinessGatesNotReady`, naming every gate that is not). Whether it changed.
fn set_ready(pod: &mut Pod, now_ms: u64) -> bool {
    let unmet = unmet_gates(pod);
    let (status, reason) = match &unmet {
        None => ("True", None),
        Some(_) => ("False", Some("ReadinessGatesNotReady")),
    };
    let before = ready_condition(pod);
    set_pod_condition(pod, "Ready", status, reason, now_ms);
    if let Some(c) = pod
        .status
        .as_mut()
        .and_then(|s| s.conditions.as_mut())
        .and_then(|cs| cs.iter_mut().find(|c| c.type_ == "Ready"))
    {
        c.reason = reason.map(str::to_string);
        c.message = unmet;
    }
    ready_condition(pod) != before
}

fn ready_condition(pod: &Pod) -> Option<k8s_openapi::api::core::v1::PodCondition> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == "Ready").cloned()
}
