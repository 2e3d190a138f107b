//! `groupRestart` and `requiredRestart`: the restart policy restarts a group exactly when a
//! fault obliges it to (lws-bugs-and-tests I-RESTART; bugs B03, B08, B09).

use std::collections::{BTreeMap, BTreeSet};

use lws::api::LeaderWorkerSet;

use super::model::{Model, PodEvent};
use super::report::Sink;
use super::{InvariantId, RESTART_DUE_MS};
use crate::time::fmt_ms;
use crate::trace::TraceEntry;

/// A group restart a fault made due.
struct Due {
    due_ms: u64,
    /// The pod the fault hit, and when.
    pod: String,
    at_ms: u64,
}

/// The state of the restart checks.
#[derive(Default)]
pub(super) struct RestartChecks {
    /// The LWS asks for RecreateGroupOnPodRestart.
    recreate_on_restart: bool,
    /// Group restarts owed to injected failures, and the restarts the restart policy made
    /// (leader deletions by the pod controller, read from the trace).
    owed: BTreeMap<i32, i32>,
    made: BTreeMap<i32, i32>,
    /// Groups a fault obliges the restart policy to restart.
    required: BTreeMap<i32, Due>,
}

impl RestartChecks {
    pub fn on_lws_spec(&mut self, l: &LeaderWorkerSet) {
        self.recreate_on_restart =
            l.spec.leader_worker_template.restart_policy == "RecreateGroupOnPodRestart";
    }

    /// One injected failure touched these groups: each may be restarted once for it.
    pub fn owe(&mut self, groups: &[i32]) {
        let groups: BTreeSet<i32> = groups.iter().copied().collect();
        for g in groups {
            *self.owed.entry(g).or_default() += 1;
        }
    }

    /// A fault hit `pod` (a crashed container, a deletion, an eviction): if it is a live member
    /// of its group's current generation (not terminating, not a worker of a leader already
    /// replaced) and the LWS asks for RecreateGroupOnPodRestart, the whole group must be
    /// recreated, so its leader must go.
    pub fn require(&mut self, model: &Model, lws: &str, pod: &str, now_ms: u64) {
        let Some(p) = model.pods.get(pod) else {
            return;
        };
        let g = p.group;
        let leader = model.pods.get(&format!("{lws}-{g}"));
        let current = leader.is_some_and(|l| !l.terminating && l.created <= p.created);
        if current && !p.terminating && self.recreate_on_restart {
            self.required.entry(g).or_insert(Due {
                due_ms: now_ms + RESTART_DUE_MS,
                pod: pod.to_string(),
                at_ms: now_ms,
            });
        }
    }

    /// A leader that goes (terminating or deleted) is the restart a fault made due.
    pub fn on_pod(&mut self, e: &PodEvent) {
        if e.leader && (e.deleted || e.terminating) {
            self.required.remove(&e.group);
        }
    }

    /// `requiredRestart`: every group restart a fault made due happens (its leader is deleted)
    /// within `RESTART_DUE_MS` (lws-bugs-and-tests I-RESTART; bug B09). Checked as time passes
    /// and at the end of a run.
    pub fn check_required(&mut self, out: &mut Sink, model: &Model) {
        if self.required.is_empty() {
            return;
        }
        let now = out.now_ms();
        let late: Vec<i32> = self
            .required
            .iter()
            .filter(|(_, d)| d.due_ms <= now)
            .map(|(g, _)| *g)
            .collect();
        for g in late {
            let d = self.required.remove(&g).expect("listed");
            if g >= model.replicas {
                continue; // scaled away
            }
            let msg = format!(
                "pod {} of group {g} failed at t={} under RecreateGroupOnPodRestart, but the group was not recreated within {}: its leader was never deleted",
                d.pod,
                fmt_ms(d.at_ms),
                fmt_ms(RESTART_DUE_MS)
            );
            out.violate(InvariantId::RequiredRestart, msg, model.group_objects(g));
        }
    }

    /// `groupRestart`: the restart policy deletes a group's leader at most once per injected
    /// failure of that group (lws-bugs-and-tests I-RESTART; B03, B08). `entries` are the trace
    /// lines since the last look; only those in `namespace` naming a leader of `lws` count.
    pub fn check_restarts(
        &mut self,
        out: &mut Sink,
        model: &Model,
        namespace: &str,
        lws: &str,
        entries: &[TraceEntry],
    ) {
        let mut restarted = Vec::new();
        for e in entries {
            if e.verb != "delete"
                || e.kind != "Pod"
                || e.actor != "pod-controller"
                || e.rv == 0
                || e.namespace != namespace
            {
                continue;
            }
            let Some(rest) = e.name.strip_prefix(lws).and_then(|r| r.strip_prefix('-')) else {
                continue;
            };
            if let Ok(g) = rest.parse::<i32>() {
                restarted.push(g);
            }
        }
        for g in restarted {
            let n = self.made.entry(g).or_default();
            *n += 1;
            let (n, owed) = (*n, self.owed.get(&g).copied().unwrap_or(0));
            if n > owed {
                let msg = format!(
                    "group {g} was restarted by the restart policy {n} times for {owed} injected failure(s): a stale or out-of-turn pod deleted its leader"
                );
                out.violate(InvariantId::GroupRestart, msg, model.group_objects(g));
            }
        }
    }
}
