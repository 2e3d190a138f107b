//! `partitionBudget`, `surgeBound` and `writeStorm`: judged on each write of the leader
//! StatefulSet (lws-bugs-and-tests I-AVAIL, I-SURGE; bugs B10, B12, B14, Z02, Z03, Z06).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::api::{keys, LeaderWorkerSet};
use lws::k8s;

use super::model::{GroupChange, Model, Phase};
use super::report::Sink;
use super::{InvariantId, STALE_VIEW_MS, STORM_WINDOW_MS, STORM_WRITES};
use crate::time::fmt_ms;

/// The state of the leader StatefulSet checks.
#[derive(Default)]
pub(super) struct PartitionChecks {
    /// The LWS's maxSurge as written (scaled against the replicas each write is based on).
    max_surge_raw: Option<IntOrString>,
    /// When each unavailable group became unavailable.
    unavailable_since: BTreeMap<i32, u64>,
    /// When each group that had been unavailable became available again (kept until the group
    /// goes down again): a controller may not have seen it up yet.
    available_since: BTreeMap<i32, u64>,
    /// Unavailable groups that have had a terminating pod since they went down (a terminating
    /// pod may still be Ready, and upstream counts it as ready: see docs/bug-zoo.md, Z02).
    down_terminating: BTreeSet<i32>,
    /// The lowest partition written to the leader StatefulSet for its current template.
    leader_partition: Option<i32>,
    partition_template: Option<String>,
    /// When the leader StatefulSet's spec last changed, within the storm window.
    leader_spec_writes: VecDeque<u64>,
    storming: bool,
    over_surge: bool,
    /// The availability floor (`replicas - maxUnavailable`) before the LWS spec last changed
    /// it, and when: a controller may still work from the old spec.
    floor_before: Option<(i32, u64)>,
}

impl PartitionChecks {
    pub fn on_lws_spec(&mut self, l: &LeaderWorkerSet) {
        self.max_surge_raw = l.rolling_update().max_surge;
    }

    /// The LWS spec moved the availability floor from `before` to `after` at `at_ms`.
    pub fn on_floor(&mut self, before: i32, after: i32, at_ms: u64) {
        if before != after {
            self.floor_before = Some((before, at_ms));
        }
    }

    /// Group g was re-evaluated: track since when it is down, and why.
    pub fn on_group(&mut self, model: &Model, g: i32, change: GroupChange, now_ms: u64) {
        if change.available {
            if self.unavailable_since.remove(&g).is_some() {
                self.available_since.insert(g, now_ms);
            }
            self.down_terminating.remove(&g);
        } else {
            self.available_since.remove(&g);
            self.unavailable_since.entry(g).or_insert(now_ms);
            if model.has_terminating(g) {
                self.down_terminating.insert(g);
            }
        }
    }

    /// A version of the leader StatefulSet was written (not deleted).
    pub fn on_leader_sts(&mut self, out: &mut Sink, model: &Model, sts: &StatefulSet) {
        self.check_surge(out, sts);
        self.check_partition_move(out, model, sts);
    }

    /// `partitionBudget`: a partition decrease never exposes a ready, not-yet-updated group
    /// while that would leave fewer than `replicas - maxUnavailable` groups up, counting the
    /// groups already down (bug B10; lws-bugs-and-tests I-AVAIL as judged at the move). Groups
    /// down for less than `STALE_VIEW_MS` count as up: the controller may not have seen them.
    /// Symmetrically, a group back up for less than `STALE_VIEW_MS` is not exposed by the move:
    /// the controller may still see it down, and lowering the partition onto a group it sees
    /// down costs nothing in its view (found with the Z05 fix: a worker StatefulSet's status
    /// turned ready 7 ms before a reconcile whose cache had not yet seen it).
    /// The same allowance holds for the floor: within `STALE_VIEW_MS` of a spec change the
    /// lower of the old and new floors applies (a scale from 3 to 5 groups 14 ms before a
    /// reconcile that still saw 3 lowered the partition as 3 groups allow; fuzz case 19143,
    /// scenarios/defects/partition-scale-race.yaml).
    /// Unlike `availability`, groups disrupted by faults are not excused: the budget is what
    /// the controller must protect.
    fn check_partition_move(&mut self, out: &mut Sink, model: &Model, sts: &StatefulSet) {
        let partition = sts
            .spec
            .update_strategy
            .as_ref()
            .and_then(|u| u.rolling_update.as_ref())
            .and_then(|r| r.partition)
            .unwrap_or(0);
        // Only leaders the StatefulSet will replace are exposed: a partition lowered together
        // with a template the groups already run (a write from a stale view) takes nothing down.
        let target = sts
            .spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| k8s::label(m, keys::TEMPLATE_REVISION_HASH));
        // A move is judged against the lowest partition of this template: a partition raised
        // by a write from a stale view and lowered again exposes nothing new.
        if self.partition_template.as_deref() != target {
            self.partition_template = target.map(str::to_string);
            self.leader_partition = Some(partition);
            return;
        }
        let Some(before) = self.leader_partition else {
            self.leader_partition = Some(partition);
            return;
        };
        if partition >= before {
            return;
        }
        self.leader_partition = Some(partition);
        let s = sts.spec.replicas.unwrap_or(1);
        let replaced = |g: &i32| {
            let leader = model.group_pods(*g).find(|p| p.leader && !p.terminating);
            leader.is_some_and(|p| p.revision.as_deref() != target)
        };
        let now = out.now_ms();
        let seen_up = |g: &i32| {
            self.available_since
                .get(g)
                .is_none_or(|&since| now >= since + STALE_VIEW_MS)
        };
        let exposed: Vec<i32> = (partition..before.min(s))
            .filter(|g| model.is_available(*g) && model.phase(*g) == Some(Phase::Old))
            .filter(replaced)
            .filter(seen_up)
            .collect();
        if exposed.is_empty() {
            return;
        }
        let (mut down, mut unseen) = (Vec::new(), 0);
        for (&g, &since) in &self.unavailable_since {
            if g >= s {
                continue;
            }
            if now >= since + STALE_VIEW_MS {
                down.push(g);
            } else {
                unseen += 1;
            }
        }
        let up = model.counts.available + unseen - exposed.len() as i32;
        // The spec's floor, or the one before it if it changed within the stale-view window: a
        // scale-up racing a partition move is judged by the replicas the controller saw.
        let spec_floor = model.replicas - model.max_unavailable;
        let floor = match self.floor_before {
            Some((f, at)) if now < at + STALE_VIEW_MS => f.min(spec_floor),
            _ => spec_floor,
        };
        if up >= floor {
            return;
        }
        let down_why: Vec<String> = down
            .iter()
            .map(|g| format!("{g} ({})", self.why_down(model, *g)))
            .collect();
        let msg = format!(
            "partition lowered {before} -> {partition}, taking down ready groups {exposed:?} on an older revision while groups [{}] have been unavailable for over {}: {up} groups left up, below replicas {} - maxUnavailable {}",
            down_why.join(", "),
            fmt_ms(STALE_VIEW_MS),
            model.replicas,
            model.max_unavailable
        );
        let mut objects = vec![k8s::name(&sts.metadata).to_string()];
        for g in exposed.iter().chain(&down) {
            objects.extend(model.group_objects(*g));
        }
        out.violate(InvariantId::PartitionBudget, msg, objects);
    }

    /// `writeStorm`: the controller does not rewrite the leader StatefulSet's spec more than
    /// `STORM_WRITES` times in `STORM_WINDOW_MS`; a rollout moves the partition a few times per
    /// group. A storm is two writers, or one writer and its own stale cache, fighting.
    pub fn check_storm(&mut self, out: &mut Sink, sts_name: &str) {
        let now = out.now_ms();
        let w = &mut self.leader_spec_writes;
        w.push_back(now);
        while w.front().is_some_and(|&t| t + STORM_WINDOW_MS < now) {
            w.pop_front();
        }
        let storm = w.len() > STORM_WRITES;
        if std::mem::replace(&mut self.storming, storm) || !storm {
            return;
        }
        let msg = format!(
            "the leader StatefulSet's spec changed {} times within {}: its writers are fighting (the partition or replicas flip back and forth)",
            w.len(),
            fmt_ms(STORM_WINDOW_MS)
        );
        out.violate(InvariantId::WriteStorm, msg, vec![sts_name.to_string()]);
    }

    /// Why group g is not available, in a few words.
    fn why_down(&self, model: &Model, g: i32) -> String {
        if !model.groups.contains_key(&g) {
            return "no pods".into();
        }
        let pods: Vec<_> = model.group_pods(g).collect();
        let terminating = pods.iter().filter(|p| p.terminating).count();
        let live = pods.len() - terminating;
        let unready = pods.iter().filter(|p| !p.terminating && !p.ready).count();
        let leader_terminating = pods.iter().any(|p| p.leader && p.terminating);
        let mut parts = Vec::new();
        if leader_terminating {
            parts.push("leader terminating".to_string());
        } else if terminating > 0 {
            parts.push(format!("{terminating} pods terminating"));
        }
        if live < model.size as usize {
            parts.push(format!("{live} of {} pods live", model.size));
        }
        if unready > 0 {
            parts.push(format!("{unready} not ready"));
        }
        if terminating == 0 && self.down_terminating.contains(&g) {
            parts.push("had a terminating pod".into());
        }
        parts.join(", ")
    }

    /// `surgeBound`: the leader StatefulSet never asks for more than `replicas + maxSurge`
    /// groups, judged against the replicas the controller based that write on (its
    /// `leaderworkerset.sigs.k8s.io/replicas` annotation), so a user's scale-down in flight is
    /// not counted against it (lws-bugs-and-tests I-SURGE).
    fn check_surge(&mut self, out: &mut Sink, sts: &StatefulSet) {
        let Some(base) =
            k8s::annotation(&sts.metadata, keys::REPLICAS).and_then(|r| r.parse::<i32>().ok())
        else {
            return;
        };
        let surge = self
            .max_surge_raw
            .as_ref()
            .map_or(0, |v| k8s::scaled_value(v, base, true).unwrap_or(0))
            .clamp(0, base);
        let asked = sts.spec.replicas.unwrap_or(1);
        let bound = base + surge;
        if asked <= bound {
            self.over_surge = false;
            return;
        }
        if self.over_surge {
            return;
        }
        self.over_surge = true;
        let msg = format!("the leader StatefulSet asks for {asked} groups, more than replicas {base} + maxSurge {surge}");
        out.violate(
            InvariantId::SurgeBound,
            msg,
            vec![k8s::name(&sts.metadata).to_string()],
        );
    }
}
