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

/// One injected failure of a group: it owes one restart of the leader that was the group's
/// leader when it happened (a leader created at or before `at_ms`), and no other.
struct Owed {
    at_ms: u64,
    answered: bool,
}

/// The state of the restart checks.
#[derive(Default)]
pub(super) struct RestartChecks {
    /// The LWS asks for RecreateGroupOnPodRestart.
    recreate_on_restart: bool,
    /// Group restarts owed to injected failures, per group in failure order, each answered by
    /// at most one leader deletion by the pod controller (read from the trace) of a leader that
    /// existed at the failure: a leader created after it (re-created for it) is owed nothing
    /// (B08: a user's or an eviction's leader deletion, then the old workers' deletions
    /// restart the new leader).
    owed: BTreeMap<i32, Vec<Owed>>,
    made: BTreeMap<i32, i32>,
    /// Creation time of the last live version of each leader pod seen, by name: the leader a
    /// pod-controller delete in the trace refers to.
    leader_created: BTreeMap<String, Option<u64>>,
    /// Groups a fault obliges the restart policy to restart.
    required: BTreeMap<i32, Due>,
}

impl RestartChecks {
    pub fn on_lws_spec(&mut self, l: &LeaderWorkerSet) {
        self.recreate_on_restart =
            l.spec.leader_worker_template.restart_policy == "RecreateGroupOnPodRestart";
    }

    /// One injected failure at `now_ms` touched these groups: each may be restarted once for
    /// it, by deleting the leader it had then.
    pub fn owe(&mut self, groups: &[i32], now_ms: u64) {
        let groups: BTreeSet<i32> = groups.iter().copied().collect();
        for g in groups {
            self.owed.entry(g).or_default().push(Owed {
                at_ms: now_ms,
                answered: false,
            });
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
        if e.leader && !e.deleted {
            self.leader_created.insert(e.name.clone(), e.created_ms);
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
    /// failure of that group, and only a leader the group had when the failure happened
    /// (lws-bugs-and-tests I-RESTART; B03, B08). `entries` are the trace lines since the last
    /// look; only those in `namespace` naming a leader of `lws` count.
    pub fn check_restarts<'e>(
        &mut self,
        out: &mut Sink,
        model: &Model,
        namespace: &str,
        lws: &str,
        entries: impl Iterator<Item = &'e TraceEntry>,
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
                let created = self.leader_created.get(&e.name).copied().flatten();
                restarted.push((g, created));
            }
        }
        for (g, created) in restarted {
            let n = self.made.entry(g).or_default();
            *n += 1;
            let n = *n;
            let failures = self.owed.entry(g).or_default();
            let owed = failures.len();
            // The earliest unanswered failure this leader was there for (an unknown creation
            // time, which no trace of ours produces, is taken as there for all).
            let answers = failures
                .iter_mut()
                .find(|f| !f.answered && created.is_none_or(|c| c <= f.at_ms));
            if let Some(f) = answers {
                f.answered = true;
                continue;
            }
            let unanswered = failures.iter().filter(|f| !f.answered).count();
            let msg = if unanswered == 0 {
                format!(
                    "group {g} was restarted by the restart policy {n} times for {owed} injected failure(s): a stale or out-of-turn pod deleted its leader"
                )
            } else {
                format!(
                    "group {g}'s leader, created at t={} after the group's last injected failure, was deleted by the restart policy ({n} restart(s) for {owed} failure(s)): a leader re-created after a failure owes that failure nothing; a stale pod deleted it (B08)",
                    created.map(fmt_ms).unwrap_or_default()
                )
            };
            out.violate(InvariantId::GroupRestart, msg, model.group_objects(g));
        }
    }
}
