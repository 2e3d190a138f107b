//! `kubectl drain` and a managed node-group replacement (kubernetes/kubectl
//! `pkg/drain/drain.go` @dee3483a; the EKS user guide, "managed node update behavior"): cordon, evict
//! every pod on the node concurrently through the eviction API (a 429 is retried after 5 s),
//! wait until each is gone or replaced under a new UID (polling every second). A replacement
//! then waits about 60 s, terminates the instance, and a new node joins later.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};
use lws::k8s;
use serde_json::json;

use crate::api::{ApiServer, Reason, Selector};
use crate::cluster::Infra;
use crate::time::after;

pub const ACTOR: &str = "kubectl-drain";
const EVICT_RETRY_MS: u64 = 5_000;
const POLL_MS: u64 = 1_000;
/// EKS managed node groups wait about a minute after the drain before terminating.
const TERMINATE_WAIT_MS: u64 = 60_000;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    /// Pods to evict (key -> uid) and whether their eviction was admitted.
    Evicting,
    Terminate,
    Done,
}

#[derive(Clone, Debug)]
struct Drain {
    node: String,
    replace: bool,
    phase: Phase,
    next_ms: u64,
    pods: BTreeMap<(String, String), (String, bool, u64)>,
}

/// What a finished step asks the world to do next.
#[derive(Debug, PartialEq, Eq)]
pub enum DrainOutcome {
    Drained(String),
    TerminateInstance(String),
}

#[derive(Default)]
pub struct Drainer {
    drains: Vec<Drain>,
}

impl Drainer {
    pub fn start(&mut self, node: &str, replace: bool, now_ms: u64) {
        self.drains.push(Drain {
            node: node.to_string(),
            replace,
            phase: Phase::Start,
            next_ms: now_ms,
            pods: BTreeMap::new(),
        });
    }

    pub fn next_wakeup_ms(&self) -> Option<u64> {
        self.drains
            .iter()
            .filter(|d| d.phase != Phase::Done)
            .map(|d| d.next_ms)
            .min()
    }

    pub fn active(&self) -> bool {
        self.drains.iter().any(|d| d.phase != Phase::Done)
    }

    pub fn step(&mut self, api: &mut ApiServer, infra: &Infra, now_ms: u64) -> Vec<DrainOutcome> {
        let mut out = Vec::new();
        for d in self
            .drains
            .iter_mut()
            .filter(|d| d.phase != Phase::Done && d.next_ms <= now_ms)
        {
            match d.phase {
                Phase::Start => {
                    let _ = api.merge_patch::<Node>(
                        ACTOR,
                        "",
                        &d.node,
                        &json!({"spec": {"unschedulable": true}}),
                    );
                    for p in api.list::<Pod>(None, &Selector::everything()) {
                        if k8s::node_name(&p) == d.node {
                            let key = (
                                k8s::namespace(&p.metadata).to_string(),
                                k8s::name(&p.metadata).to_string(),
                            );
                            d.pods
                                .insert(key, (k8s::uid(&p.metadata).to_string(), false, now_ms));
                        }
                    }
                    d.phase = Phase::Evicting;
                    d.next_ms = now_ms;
                    step_evictions(d, api, now_ms);
                }
                Phase::Evicting => step_evictions(d, api, now_ms),
                Phase::Terminate => {
                    out.push(DrainOutcome::TerminateInstance(d.node.clone()));
                    d.phase = Phase::Done;
                }
                Phase::Done => {}
            }
            if d.phase == Phase::Evicting && d.pods.is_empty() {
                out.push(DrainOutcome::Drained(d.node.clone()));
                if d.replace && infra.is_alive(&d.node) {
                    d.phase = Phase::Terminate;
                    d.next_ms = after(now_ms, TERMINATE_WAIT_MS);
                } else {
                    d.phase = Phase::Done;
                }
            }
        }
        out
    }
}

/// Evict what is due, drop pods that are gone or replaced, and plan the next poll.
fn step_evictions(d: &mut Drain, api: &mut ApiServer, now_ms: u64) {
    let mut next = u64::MAX;
    let keys: Vec<(String, String)> = d.pods.keys().cloned().collect();
    for key in keys {
        let (uid, evicted, retry_at) = d.pods[&key].clone();
        let live = api.try_get::<Pod>(&key.0, &key.1);
        if live.as_ref().is_none_or(|p| k8s::uid(&p.metadata) != uid) {
            d.pods.remove(&key);
            continue;
        }
        if !evicted && retry_at <= now_ms {
            match api.evict(ACTOR, &key.0, &key.1, &crate::api::DeleteOptions::default()) {
                Ok(_) => {
                    d.pods.insert(key.clone(), (uid, true, now_ms));
                }
                Err(e) if e.is(Reason::NotFound) => {
                    d.pods.remove(&key);
                    continue;
                }
                Err(e) if e.is(Reason::TooManyRequests) => {
                    d.pods
                        .insert(key.clone(), (uid, false, after(now_ms, EVICT_RETRY_MS)));
                    next = next.min(after(now_ms, EVICT_RETRY_MS));
                    continue;
                }
                Err(_) => {
                    d.pods
                        .insert(key.clone(), (uid, false, after(now_ms, EVICT_RETRY_MS)));
                    next = next.min(after(now_ms, EVICT_RETRY_MS));
                    continue;
                }
            }
        }
        next = next.min(after(now_ms, POLL_MS));
    }
    d.next_ms = if next == u64::MAX { now_ms } else { next };
}
