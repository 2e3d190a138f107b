//! `updateOrder`, `groupConsistency` and `availability`: judged from the per-group state of the
//! model (lws-bugs-and-tests I-ORDER, I-CONSIST, I-AVAIL), with the disruptions faults excuse.

use std::collections::{BTreeMap, BTreeSet};

use super::model::{GroupChange, Model, Phase};
use super::report::Sink;
use super::ObjectRef;
use super::{InvariantId, DISRUPTION_SETTLE_MS, STALE_VIEW_MS};
use crate::trace::TraceEntry;

/// The state of the group checks.
#[derive(Default)]
pub(super) struct GroupChecks {
    /// Armed once every desired group has been available.
    first_available: bool,
    /// Groups excused from `availability` until they have settled (faults, scale-downs).
    disrupted: BTreeSet<i32>,
    /// Every group a fault ever touched.
    disrupted_ever: BTreeSet<i32>,
    /// When each currently available group became available (or was last disrupted).
    available_since: BTreeMap<i32, u64>,
    /// Available groups, at most: the high-water mark since the last change of `replicas`.
    available_hw: i32,
    /// Whether `availability` is broken now (report once per episode).
    below_floor: bool,
    /// The fewest groups available since armed.
    pub min_available: Option<i32>,
    /// Ready groups whose pods mix revisions (report once per episode).
    inconsistent: BTreeSet<i32>,
    /// The floor before the LWS spec last changed it, while the old spec may still be acted on.
    floor_before: Option<StaleFloor>,
}

/// After a spec change of the replicas or maxUnavailable, the cluster may still act on the
/// old spec: a reconcile that read the LWS before the change writes for up to
/// `STALE_VIEW_MS` (as `partitionBudget` allows), and while no LWS controller runs the
/// StatefulSet controller goes on with the partition written for the old spec. Until the LWS
/// controller has written since the change, and for `STALE_VIEW_MS` in any case, a group that
/// goes down while the old floor holds is excused as disrupted until it is back.
struct StaleFloor {
    floor: i32,
    at_ms: u64,
    /// The groups down at the change (the new spec's groups not yet created among them).
    down_then: BTreeSet<i32>,
    /// Whether the LWS controller has written since the change.
    written: bool,
}

impl StaleFloor {
    fn open(&self, now_ms: u64) -> bool {
        now_ms < self.at_ms + STALE_VIEW_MS || !self.written
    }
}

impl GroupChecks {
    /// Has a fault ever touched a group?
    pub fn ever_disrupted(&self) -> bool {
        !self.disrupted_ever.is_empty()
    }

    /// Groups that lost a pod to an injected fault.
    pub fn disrupt(&mut self, groups: &[i32], now_ms: u64) {
        for g in groups {
            // The settle time counts from the fault, not from an older recovery.
            if self.available_since.contains_key(g) {
                self.available_since.insert(*g, now_ms);
            }
        }
        self.disrupted.extend(groups.iter().copied());
        self.disrupted_ever.extend(groups.iter().copied());
    }

    /// The model's counters were recomputed (a new LWS spec, at `at_ms`; `before` is the old
    /// spec's `(replicas, maxUnavailable)`). A change of either opens a `StaleFloor`.
    pub fn on_recount(&mut self, model: &Model, before: (i32, i32), at_ms: u64) {
        if before != (model.replicas, model.max_unavailable) {
            self.floor_before = Some(StaleFloor {
                floor: before.0.min(self.available_hw) - before.1,
                at_ms,
                down_then: model.down_groups().into_iter().collect(),
                written: false,
            });
        }
        self.available_hw = model.counts.available;
    }

    /// New trace entries: the LWS controller's first write (as field manager `lws`) of one of
    /// this LWS's objects (`lws`'s StatefulSets and Service, in its namespace) after a
    /// floor-raising change ends the stale floor's open-ended part.
    pub fn on_trace(&mut self, entries: &[TraceEntry], lws: &ObjectRef) {
        let Some(f) = self.floor_before.as_mut().filter(|f| !f.written) else {
            return;
        };
        let ours = |name: &str| {
            name.strip_prefix(lws.name.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        };
        f.written = entries.iter().any(|e| {
            e.actor == "lws"
                && e.rv != 0
                && e.at_ms >= f.at_ms
                && &*e.namespace == lws.namespace.as_str()
                && ours(&e.name)
        });
    }

    /// A scale-down mid-rollout keeps the lowest groups, whatever their state: those it finds
    /// down (being updated under the old budget) are excused, as disrupted, until they recover.
    pub fn on_scale_down(&mut self, model: &Model) {
        self.disrupted.extend(model.down_groups());
    }

    /// Group g was re-evaluated: track when it came up, and judge its order and consistency.
    pub fn on_group(&mut self, out: &mut Sink, model: &Model, g: i32, change: GroupChange) {
        // A disrupted group recovers once it has stayed available for DISRUPTION_SETTLE_MS: a
        // container restarted in place may still owe a group restart (RecreateGroupOnPodRestart)
        // that a controller, perhaps restarting itself, carries out a little later.
        if change.available {
            self.available_since.entry(g).or_insert(out.now_ms());
        } else {
            self.available_since.remove(&g);
        }
        let left_old = matches!(change.phase, Phase::Moving | Phase::On | Phase::Done);
        if change.before == Phase::Old && left_old && g < model.replicas {
            check_order(out, model, g);
        }
        self.check_consistency(out, model, g, change.available);
    }

    /// `groupConsistency`: an all-ready group's leader and workers come from one revision.
    fn check_consistency(&mut self, out: &mut Sink, model: &Model, g: i32, all_ready: bool) {
        if !all_ready {
            self.inconsistent.remove(&g);
            return;
        }
        let live = model.live_pods(g);
        let leader = live
            .iter()
            .find(|(_, i)| i.leader)
            .map(|(_, i)| i.fingerprint);
        let workers: Vec<u64> = live
            .iter()
            .filter(|(_, i)| !i.leader)
            .map(|(_, i)| i.fingerprint)
            .collect();
        let consistent = model
            .revisions
            .iter()
            .any(|r| Some(r.leader) == leader && workers.iter().all(|w| *w == r.worker));
        let was = if consistent {
            self.inconsistent.remove(&g)
        } else {
            !self.inconsistent.insert(g)
        };
        if consistent || was {
            return;
        }
        let rev_of = |fp: u64, leader: bool| {
            model
                .revisions
                .iter()
                .position(|r| {
                    if leader {
                        r.leader == fp
                    } else {
                        r.worker == fp
                    }
                })
                .map(|i| format!("revision {}", i + 1))
                .unwrap_or_else(|| "no known revision".into())
        };
        let leader_rev = leader.map(|fp| rev_of(fp, true)).unwrap_or_default();
        let mut worker_revs: Vec<String> = workers.iter().map(|fp| rev_of(*fp, false)).collect();
        worker_revs.sort();
        worker_revs.dedup();
        let msg = format!(
            "group {g} is ready but mixes revisions: the leader runs the {leader_rev} leader template, the workers run the {} worker template",
            worker_revs.join(" and ")
        );
        out.violate(InvariantId::GroupConsistency, msg, model.group_objects(g));
    }

    /// `availability`: once all groups have been available, never fewer than
    /// `replicas - maxUnavailable - disrupted` available groups.
    pub fn check_availability(&mut self, out: &mut Sink, model: &Model) {
        let now = out.now_ms();
        let since = &self.available_since;
        self.disrupted
            .retain(|g| since.get(g).is_none_or(|t| now < t + DISRUPTION_SETTLE_MS));
        let available = model.counts.available;
        if !self.first_available {
            // Armed once every desired group has been up (groups being scaled away or surge
            // groups do not count: an LWS that never came up is not owed availability).
            if model.replicas > 0 && model.counts.available_desired >= model.replicas {
                self.first_available = true;
            } else {
                return;
            }
        }
        self.min_available = Some(self.min_available.map_or(available, |m| m.min(available)));
        self.excuse_stale_floor(model, available, now);
        // After a scale-up the new groups are not owed yet: the floor counts groups that have
        // been available since the last change of replicas.
        self.available_hw = self.available_hw.max(available);
        let floor = model.replicas.min(self.available_hw)
            - model.max_unavailable
            - self.disrupted.len() as i32;
        if available >= floor {
            self.below_floor = false;
            return;
        }
        if self.below_floor {
            return;
        }
        self.below_floor = true;
        let down = model.down_groups();
        let msg = format!(
            "{available} of {} groups available, below the floor of {floor} (replicas {} - maxUnavailable {} - disrupted {}); unavailable groups: {down:?}",
            model.replicas,
            model.replicas,
            model.max_unavailable,
            self.disrupted.len()
        );
        let objects = down.iter().flat_map(|g| model.group_objects(*g)).collect();
        out.violate(InvariantId::Availability, msg, objects);
    }
}

impl GroupChecks {
    /// While the old spec may still be acted on (`StaleFloor`), groups that went down since
    /// the change while the old floor holds are excused, as disrupted, until they are back.
    fn excuse_stale_floor(&mut self, model: &Model, available: i32, now: u64) {
        let Some(f) = &self.floor_before else {
            return;
        };
        if !f.open(now) {
            self.floor_before = None;
            return;
        }
        if available < f.floor - self.disrupted.len() as i32 {
            return;
        }
        let newly_down = model.down_groups().into_iter();
        self.disrupted
            .extend(newly_down.filter(|g| !f.down_then.contains(g)));
    }
}

/// `updateOrder`: group g may start moving to the latest revision only together with the
/// groups above it that are not on it yet, in one window of at most
/// max(1, maxUnavailable + maxSurge) groups. So the groups in [g, replicas) still old or
/// part-moved, g included, may number at most that window: top-down, a window at a time.
fn check_order(out: &mut Sink, model: &Model, g: i32) {
    let revision = model.latest.unwrap_or(0) + 1;
    let window = (model.max_unavailable + model.max_surge).max(1);
    let pending: Vec<i32> = (g + 1..model.replicas)
        .filter(|h| matches!(model.phase(*h), Some(Phase::Old | Phase::Moving)))
        .collect();
    if (pending.len() as i32) < window {
        return;
    }
    let old: Vec<i32> = pending
        .iter()
        .copied()
        .filter(|h| model.phase(*h) == Some(Phase::Old))
        .collect();
    let moving: Vec<i32> = pending
        .iter()
        .copied()
        .filter(|h| !old.contains(h))
        .collect();
    let msg = format!(
        "group {g} started moving to revision {revision} while, above it, group(s) {old:?} were still on an older revision and {moving:?} part-moved: {} groups in flight, at most {window} allowed (maxUnavailable {} + maxSurge {})",
        pending.len() + 1,
        model.max_unavailable,
        model.max_surge
    );
    let mut objects = model.group_objects(g);
    objects.extend(pending.iter().flat_map(|h| model.group_objects(*h)));
    out.violate(InvariantId::UpdateOrder, msg, objects);
}
