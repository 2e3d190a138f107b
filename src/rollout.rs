//! The rolling-update arithmetic of the LWS reconciler as plain functions (v0.3.0 and v0.4.1
//! share it: V3 lwsc:215-297 = FX lwsc:193-275, `rollingUpdateParameters`), and the status conditions
//! (V3 lwsc:337-424 `updateConditions`, 635-691 `setConditions`; abbreviations as in
//! docs/fidelity.md).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::profile::PartitionFormula;

/// `max(x, 0)`, upstream's `NonZeroValue`.
pub fn max0(x: i32) -> i32 {
    x.max(0)
}

/// What the LWS reconciler reads off the leader StatefulSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderSts {
    /// `S`: `spec.replicas`.
    pub replicas: i32,
    /// `P`: `spec.updateStrategy.rollingUpdate.partition`.
    pub partition: i32,
    /// The template-hash label.
    pub hash: String,
    /// The `leaderworkerset.sigs.k8s.io/replicas` annotation, as written.
    pub replicas_annotation: Option<String>,
    /// Pods, not being deleted, still on its older revision (`lws_controller::old_pod_count`).
    pub old_pods: i32,
}

/// The scaled rollout knobs: `R`, `MU` (floor) and `MS` (ceil, clamped to `R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knobs {
    pub replicas: i32,
    pub max_unavailable: i32,
    pub max_surge: i32,
    /// B12 fix (PR #778, d275e0a): release surge groups while `u <= MU` rather than one at a
    /// time, and never burst on a scale-up.
    pub surge_release_by_max_unavailable: bool,
    /// B10/B11: how Case 5 lowers the partition.
    pub partition: PartitionFormula,
    /// Z08's proposed fix (`Flags::scale_up_keeps_surge`).
    pub scale_up_keeps_surge: bool,
    /// Z04's proposed fix (`Flags::rescale_holds_old`).
    pub rescale_holds_old: bool,
}

/// One group index's state as the LWS reconciler sees it (HD `getReplicaStates`,
/// lwsc:582-647 at 060ab4d). V3/FX only ever use `ready && updated`, which is exactly their `readyAndUpdated`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicaState {
    /// The leader is Running and Ready and (size 1 or) its worker StatefulSet is ready.
    pub ready: bool,
    /// The leader's and the worker StatefulSet's revision labels are the current one.
    pub updated: bool,
}

impl ReplicaState {
    fn ready_and_updated(&self) -> bool {
        self.ready && self.updated
    }
}

impl Knobs {
    /// `(partition, replicas)` of a scale-up mid-rollout: upstream keeps the partition and asks
    /// for the LWS's replicas. With Z08's fix, while groups remain to be replaced, it asks for
    /// the burst (they keep the spare the partition was lowered for) and holds the partition
    /// above the old groups left, so none is replaced before the new surge is ready to cover
    /// it (Case 5 lowers it again as groups come up).
    pub fn scale_up_parameters(&self, partition: i32, old_pods: i32) -> (i32, i32) {
        if self.scale_up_keeps_surge && (partition > 0 || old_pods > 0) {
            (partition.max(old_pods), self.burst())
        } else {
            (partition, self.replicas)
        }
    }

    /// Case 4's partition (`min(partition, burst)` upstream). With Z04's fix it is raised over
    /// the pods still on the old revision, at most the new replicas: they hold the lowest
    /// ordinals, so the raise rolls back no updated group, and a group released under the old
    /// budget is held until Case 5 releases it under the new one.
    pub fn rescale_partition(&self, partition: i32, old_pods: i32) -> i32 {
        if self.rescale_holds_old {
            partition.max(old_pods.min(self.replicas))
        } else {
            partition
        }
    }

    pub fn burst(&self) -> i32 {
        self.replicas + self.max_surge
    }

    /// `wantReplicas(u)`: release surge groups one at a time once `u <= MS` (V3 lwsc:242-250),
    /// or, with the B12 fix, keep `u - MU` of them (HD lwsc:691-702).
    pub fn want_replicas(&self, unready: i32) -> i32 {
        if unready > self.max_surge {
            return self.burst();
        }
        let keep = if self.surge_release_by_max_unavailable {
            self.max_unavailable
        } else {
            1
        };
        self.replicas + max0(unready - keep)
    }
}

/// Cases 1-3, which need no group state: `Some((partition, replicas))` when one applies.
pub fn early_parameters(
    k: &Knobs,
    sts: Option<&LeaderSts>,
    current_hash: &str,
) -> Option<(i32, i32)> {
    let Some(sts) = sts else {
        return Some((0, k.replicas));
    };
    if sts.hash != current_hash {
        // A new rollout: start from the top.
        // With the B12 fix a scale-up is never burst (HD lwsc:331-338).
        let replicas = if k.surge_release_by_max_unavailable && sts.replicas < k.replicas {
            k.replicas
        } else {
            k.want_replicas(k.replicas)
        };
        return Some((k.replicas.min(sts.replicas), replicas));
    }
    if sts.partition == 0 && sts.replicas == k.replicas {
        return Some((0, k.replicas));
    }
    // With the B12 fix (d275e0a), a scale-up mid-rollout finishes first: the partition stays
    // and no surge is asked for until the leader StatefulSet has the LWS's replicas.
    if k.surge_release_by_max_unavailable && sts.replicas < k.replicas {
        return Some(k.scale_up_parameters(sts.partition, sts.old_pods));
    }
    None
}

/// `C`: the run of ready-and-updated groups counted down from the highest index.
pub fn continuous_ready(states: &[ReplicaState]) -> i32 {
    states
        .iter()
        .rev()
        .take_while(|x| x.ready_and_updated())
        .count() as i32
}

/// `U`: groups below `min(R, S)` that are not ready-and-updated (V3 `iterateReplicas`).
pub fn unready(states: &[ReplicaState], replicas: i32) -> i32 {
    let n = (replicas.max(0) as usize).min(states.len());
    states[..n]
        .iter()
        .filter(|x| !x.ready_and_updated())
        .count() as i32
}

/// `calculateLWSUnreadyReplicas` (6dd31e2, PR #488): `U`, plus every index in `[S, R)`, which
/// has no group yet and so is not ready either.
pub fn unready_counting_missing(states: &[ReplicaState], replicas: i32) -> i32 {
    unready(states, replicas) + max0(replicas - states.len() as i32)
}

/// The Case-5 partition for `states` of indices `[0, S)`, current partition `p_now`.
///
/// `Tail` (V3 lwsc:252-260): `min(P, max0(S - step - C))`. `UnreadyBelow` and `Hd`
/// (`partitionHD`, HD lwsc:649-679): start at the same base, add one index per unready group
/// below it (they already spend the maxUnavailable budget), then slide down over groups that
/// cost no availability: unready ones, and with `Hd` also updated ones.
pub fn case5_partition(
    formula: PartitionFormula,
    states: &[ReplicaState],
    step: i32,
    p_now: i32,
) -> i32 {
    let s = states.len() as i32;
    let c = continuous_ready(states);
    let base = max0(s - step - c);
    if formula == PartitionFormula::Tail {
        return p_now.min(base);
    }
    let unready = |from: i32, to: i32| {
        let (from, to) = (from.min(s) as usize, to.min(s) as usize);
        states[from..to].iter().filter(|x| !x.ready).count() as i32
    };
    let mut p = base + unready(0, base);
    if formula == PartitionFormula::AllUnready {
        // Count the unready groups the raised partition now also protects, until none is new;
        // each pass counts only the indices it newly covers, so the loop is O(S).
        let mut counted = base;
        while counted < p.min(s) {
            let extra = unready(counted, p);
            counted = p.min(s);
            p += extra;
        }
    }
    let mut i = p.min(s - 1);
    while i >= base {
        let x = states[i as usize];
        let free = !x.ready || (formula != PartitionFormula::UnreadyBelow && x.updated);
        if !free {
            break;
        }
        p = i;
        i -= 1;
    }
    p.min(p_now)
}

/// Cases 4-5, given the group states for indices `[0, S)`.
pub fn late_parameters(
    k: &Knobs,
    sts: &LeaderSts,
    states: &[ReplicaState],
) -> Result<(i32, i32), String> {
    let u = match k.partition {
        PartitionFormula::Tail => unready(states, k.replicas),
        _ => unready_counting_missing(states, k.replicas),
    };
    let annotation = sts.replicas_annotation.as_deref().unwrap_or("");
    let original: i32 = annotation
        .parse()
        .map_err(|_| format!("strconv.Atoi: parsing {annotation:?}: invalid syntax"))?;
    if original != k.replicas {
        let partition = k.rescale_partition(sts.partition.min(k.burst()), sts.old_pods);
        return Ok((partition, k.want_replicas(u)));
    }
    let step = k.max_unavailable + k.max_surge - (k.burst() - sts.replicas);
    Ok((
        case5_partition(k.partition, states, step, sts.partition),
        k.want_replicas(u),
    ))
}

/// `rollingUpdateParameters` in one call, for tests and callers that have the states at hand.
pub fn rolling_update_parameters(
    k: &Knobs,
    sts: Option<&LeaderSts>,
    current_hash: &str,
    states: &[ReplicaState],
) -> Result<(i32, i32), String> {
    match early_parameters(k, sts, current_hash) {
        Some(r) => Ok(r),
        None => late_parameters(k, sts.expect("case 1 handles a missing sts"), states),
    }
}

pub const AVAILABLE: &str = "Available";
pub const PROGRESSING: &str = "Progressing";
pub const UPGRADE_IN_PROGRESS: &str = "UpgradeInProgress";
/// The same condition as named from v0.10.0 on (`LeaderWorkerSetUpdateInProgress`).
pub const UPDATE_IN_PROGRESS: &str = "UpdateInProgress";

/// The condition a type stands for, with V3/FX reasons and messages.
pub fn condition(type_: &str, now: Time) -> Condition {
    let (reason, message) = match type_ {
        AVAILABLE => ("AllGroupsReady", "All replicas are ready"),
        UPGRADE_IN_PROGRESS => ("GroupsAreUpgrading", "Rolling Upgrade is in progress"),
        _ => ("GroupsAreProgressing", "Replicas are progressing"),
    };
    Condition {
        type_: type_.to_string(),
        status: "True".into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: now,
        observed_generation: None,
    }
}

fn exclusive(a: &str, b: &str) -> bool {
    matches!(
        (a, b),
        (AVAILABLE, PROGRESSING)
            | (PROGRESSING, AVAILABLE)
            | (AVAILABLE, UPGRADE_IN_PROGRESS)
            | (UPGRADE_IN_PROGRESS, AVAILABLE)
    )
}

/// `setCondition`: replace on a status change, append when missing, and set an exclusive True
/// condition to False (unless `flip_exclusive` is off: bug B16, where the False went to a copy).
/// Returns whether anything changed.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    new: Condition,
    flip_exclusive: bool,
) -> bool {
    let mut found = false;
    let mut changed = false;
    for c in conditions.iter_mut() {
        if c.type_ == new.type_ {
            if c.status != new.status {
                *c = new.clone();
                changed = true;
            }
            found = true;
        } else if flip_exclusive
            && exclusive(&c.type_, &new.type_)
            && c.status == "True"
            && new.status == "True"
        {
            c.status = "False".into();
            changed = true;
        }
    }
    if !found {
        conditions.push(new);
        changed = true;
    }
    changed
}

/// `setConditions`: a short-circuit fold, so after the first change the rest of the list is
/// skipped in this pass (V3 lwsc:635-641: `shouldUpdate = shouldUpdate || setCondition(..)`
/// short-circuits).
pub fn set_conditions(
    conditions: &mut Vec<Condition>,
    new: Vec<Condition>,
    flip_exclusive: bool,
) -> bool {
    let mut changed = false;
    for c in new {
        changed = changed || set_condition(conditions, c, flip_exclusive);
    }
    changed
}

/// One group as `updateConditions` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupStatus {
    pub index: i32,
    pub ready: bool,
    pub updated: bool,
}

/// Counts and the condition types `updateConditions` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusSummary {
    pub ready_replicas: i32,
    pub updated_replicas: i32,
    pub ready_non_burst: i32,
    pub conditions: Vec<&'static str>,
}

pub fn summarize(groups: &[GroupStatus], replicas: i32) -> StatusSummary {
    let (
        mut ready,
        mut updated,
        mut current_non_burst,
        mut updated_non_burst,
        mut updated_and_ready,
    ) = (0, 0, 0, 0, 0);
    let mut ready_non_burst = 0;
    for g in groups {
        let non_burst = g.index < replicas;
        if non_burst {
            current_non_burst += 1;
        }
        if g.ready {
            ready += 1;
            if non_burst {
                ready_non_burst += 1;
            }
        }
        if g.updated {
            updated += 1;
            if non_burst {
                updated_non_burst += 1;
            }
        }
        if g.ready && g.updated && non_burst {
            updated_and_ready += 1;
        }
    }
    let conditions = if updated_non_burst < current_non_burst {
        vec![PROGRESSING, UPGRADE_IN_PROGRESS]
    } else if updated_and_ready == replicas {
        vec![AVAILABLE]
    } else {
        vec![PROGRESSING]
    };
    StatusSummary {
        ready_replicas: ready,
        updated_replicas: updated,
        ready_non_burst,
        conditions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(r: i32, mu: i32, ms: i32) -> Knobs {
        Knobs {
            replicas: r,
            max_unavailable: mu,
            max_surge: ms,
            surge_release_by_max_unavailable: false,
            partition: PartitionFormula::Tail,
            scale_up_keeps_surge: false,
            rescale_holds_old: false,
        }
    }

    /// States that are ready-and-updated or neither, as V3/FX see them.
    fn ru(v: &[bool]) -> Vec<ReplicaState> {
        v.iter()
            .map(|&b| ReplicaState {
                ready: b,
                updated: b,
            })
            .collect()
    }

    #[test]
    fn b12_fix_matches_upstream_want_replicas_vectors() {
        // TestCalculateRollingUpdateReplicas (lws v0.10.0
        // pkg/controllers/leaderworkerset_controller_test.go:874):
        // (replicas, mS, mU, unready) -> want.
        let head = |r, ms, mu| Knobs {
            surge_release_by_max_unavailable: true,
            ..knobs(r, mu, ms)
        };
        assert_eq!(head(1, 1, 0).want_replicas(1), 2);
        assert_eq!(head(4, 2, 1).want_replicas(2), 5);
        assert_eq!(head(2, 2, 1).want_replicas(2), 3);
        assert_eq!(head(1, 1, 0).want_replicas(0), 1);
        assert_eq!(head(1, 1, 1).want_replicas(1), 1);
        assert_eq!(head(3, 0, 0).want_replicas(1), 3);
    }

    fn sts(s: i32, p: i32, hash: &str, ann: i32) -> LeaderSts {
        LeaderSts {
            replicas: s,
            partition: p,
            hash: hash.into(),
            replicas_annotation: Some(ann.to_string()),
            old_pods: 0,
        }
    }

    #[test]
    fn worked_example_r4_mu1_ms0() {
        // R=4, MU=1, MS=0, worked through V3 lwsc:215-297: 4 -> 3 -> 2 -> 1 -> 0.
        let k = knobs(4, 1, 0);
        assert_eq!(
            rolling_update_parameters(&k, Some(&sts(4, 0, "old", 4)), "new", &ru(&[])),
            Ok((4, 4))
        );
        let s = sts(4, 4, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false; 4])),
            Ok((3, 4))
        );
        let s = sts(4, 3, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false, false, false, true])),
            Ok((2, 4))
        );
        let s = sts(4, 2, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false, false, true, true])),
            Ok((1, 4))
        );
        let s = sts(4, 1, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false, true, true, true])),
            Ok((0, 4))
        );
        // Case 3 from then on: group readiness no longer examined.
        assert_eq!(
            rolling_update_parameters(&k, Some(&sts(4, 0, "new", 4)), "new", &ru(&[false; 4])),
            Ok((0, 4))
        );
    }

    #[test]
    fn worked_example_r4_mu2_ms2_v3() {
        // R=4, MU=2, MS=2, worked through V3 lwsc:215-297 (FX lwsc:193-275 agrees).
        let k = knobs(4, 2, 2);
        assert_eq!(
            rolling_update_parameters(&k, Some(&sts(4, 0, "old", 4)), "new", &ru(&[])),
            Ok((4, 6))
        );
        let s = sts(6, 4, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false; 6])),
            Ok((2, 6))
        );
        let s = sts(6, 2, "new", 4);
        assert_eq!(
            rolling_update_parameters(
                &k,
                Some(&s),
                "new",
                &ru(&[false, false, false, false, true, true])
            ),
            Ok((0, 6))
        );
        // Groups 2 and 3 ready (U=2): R + U - 1 = 5, the V3 release of one surge group at a time.
        let s = sts(6, 0, "new", 4);
        assert_eq!(
            rolling_update_parameters(
                &k,
                Some(&s),
                "new",
                &ru(&[false, false, true, true, true, true])
            ),
            Ok((0, 5))
        );
        let s = sts(5, 0, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false, true, true, true, true])),
            Ok((0, 4))
        );
    }

    #[test]
    fn max_unavailable_above_replicas_clamps_the_partition_at_zero() {
        // T25 (B15 fixed before v0.3.0 by a16691b).
        let k = knobs(4, 10, 0);
        let s = sts(4, 4, "new", 4);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[true; 4])),
            Ok((0, 4))
        );
    }

    #[test]
    fn replicas_change_takes_case_4_for_one_reconcile() {
        // T28 step 3 (derived): P = min(5, burst 3) = 3, then case 5 gives 2.
        let k = knobs(3, 1, 0);
        let s = sts(3, 5, "new", 6);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[true, true, true])),
            Ok((3, 3))
        );
        let s = sts(3, 3, "new", 3);
        assert_eq!(
            rolling_update_parameters(&k, Some(&s), "new", &ru(&[false, false, false])),
            Ok((2, 3))
        );
    }

    /// `(ready, updated)` per index.
    fn states(v: &[(bool, bool)]) -> Vec<ReplicaState> {
        v.iter()
            .map(|&(ready, updated)| ReplicaState { ready, updated })
            .collect()
    }

    #[test]
    fn b10_tail_formula_ignores_groups_already_down_below_the_step() {
        use PartitionFormula::*;
        const OLD_READY: (bool, bool) = (true, false);
        const OLD_DOWN: (bool, bool) = (false, false);
        // 6dd31e2's commit message: R=2, MU=1, group 0 down: the tail formula takes down the
        // only ready group; partitionHD waits for group 0.
        let s = states(&[OLD_DOWN, OLD_READY]);
        assert_eq!(case5_partition(Tail, &s, 1, 2), 1);
        assert_eq!(case5_partition(UnreadyBelow, &s, 1, 2), 2);
        assert_eq!(case5_partition(Hd, &s, 1, 2), 2);
        // T43: R=4, MU=2, group 1 down: tail P=2 (three groups down), HD P=3.
        let s = states(&[OLD_READY, OLD_DOWN, OLD_READY, OLD_READY]);
        assert_eq!(case5_partition(Tail, &s, 2, 4), 2);
        assert_eq!(case5_partition(Hd, &s, 2, 4), 3);
        // All old groups down (a broken template being replaced): HD moves through them.
        let s = states(&[OLD_DOWN; 4]);
        assert_eq!(case5_partition(Hd, &s, 1, 4), 3);
        assert_eq!(case5_partition(Hd, &s, 1, 3), 3, "never below the base");
        let s = states(&[OLD_DOWN, OLD_DOWN, OLD_DOWN, (true, true)]);
        assert_eq!(case5_partition(Hd, &s, 1, 3), 2);
    }

    #[test]
    fn b11_slide_stops_at_a_ready_surge_group_unless_updated_groups_are_free() {
        use PartitionFormula::*;
        // #567: R=4, MU=0, MS=1 (S=5, step 1); old groups never ready, surge group 4 ready
        // and updated: base 3, p = 3 + 3 = 6, the slide starts at 4.
        let mut v = vec![(false, false); 4];
        v.push((true, true));
        let s = states(&v);
        assert_eq!(case5_partition(UnreadyBelow, &s, 1, 4), 4, "stuck at 4");
        assert_eq!(case5_partition(Hd, &s, 1, 4), 3);
        assert_eq!(case5_partition(Tail, &s, 1, 4), 3);
    }

    #[test]
    fn z03_hd_ignores_unready_groups_between_the_base_and_the_partition() {
        use PartitionFormula::*;
        const OLD_READY: (bool, bool) = (true, false);
        const OLD_DOWN: (bool, bool) = (false, false);
        const NEW_READY: (bool, bool) = (true, true);
        // Fuzz case 289 (seed 1): R=7, MU=1, MS=1 (S=8, step 2), groups 1 and 3 restarting,
        // 5-7 updated: base 3, HD counts group 1 only, p = 4, and exposes group 4.
        let s = states(&[
            OLD_READY, OLD_DOWN, OLD_READY, OLD_DOWN, OLD_READY, NEW_READY, NEW_READY, NEW_READY,
        ]);
        assert_eq!(case5_partition(Hd, &s, 2, 5), 4);
        assert_eq!(case5_partition(AllUnready, &s, 2, 5), 5);
    }

    /// Issue #10's hand-computed case: a scale-up during a rollout. LWS replicas 4 with the
    /// replicas annotation at 3, maxUnavailable 1, maxSurge 1, leader StatefulSet replicas 3,
    /// partition 2.
    fn scale_up_mid_rollout(surge_fix: bool, partition: PartitionFormula) -> Knobs {
        Knobs {
            surge_release_by_max_unavailable: surge_fix,
            partition,
            ..knobs(4, 1, 1)
        }
    }

    #[test]
    fn d275e0a_early_return_holds_the_partition_while_scaling_up() {
        use PartitionFormula::*;
        let s = sts(3, 2, "new", 3);
        let old_old_new = states(&[(true, false), (true, false), (true, true)]);
        // Upstream at d275e0a and v0.10.0 (leaderworkerset_controller.go, `stsReplicas <
        // lwsReplicas` after Case 3): partition 2, replicas 4.
        let k = scale_up_mid_rollout(true, Hd);
        assert_eq!(late_or_early(&k, &s, &old_old_new), Ok((2, 4)));
        // Without the fix, Case 4: min(2, burst 5) and the burst, as v0.4.1 does.
        let k = scale_up_mid_rollout(false, Tail);
        assert_eq!(late_or_early(&k, &s, &old_old_new), Ok((2, 5)));
    }

    #[test]
    fn d6dd31e2_counts_indices_beyond_the_leader_statefulset_as_unready() {
        use PartitionFormula::*;
        let s = sts(3, 2, "new", 3);
        let old_new_new = states(&[(true, false), (true, true), (true, true)]);
        // 6dd31e2: indices 0 and 3 unready (u = 2 > maxSurge 1): the burst, 5.
        let k = scale_up_mid_rollout(false, Hd);
        assert_eq!(late_or_early(&k, &s, &old_new_new), Ok((2, 5)));
        assert_eq!(unready_counting_missing(&old_new_new, 4), 2);
        // The tail formula's count sees index 0 only: R + max0(1 - 1) = 4.
        let k = scale_up_mid_rollout(false, Tail);
        assert_eq!(late_or_early(&k, &s, &old_new_new), Ok((2, 4)));
    }

    fn late_or_early(k: &Knobs, s: &LeaderSts, st: &[ReplicaState]) -> Result<(i32, i32), String> {
        rolling_update_parameters(k, Some(s), &s.hash, st)
    }

    #[test]
    fn missing_annotation_is_an_error() {
        let k = knobs(3, 1, 0);
        let mut s = sts(3, 2, "new", 3);
        s.replicas_annotation = None;
        assert!(rolling_update_parameters(&k, Some(&s), "new", &ru(&[true; 3])).is_err());
    }

    #[test]
    fn want_replicas_v3_formula_against_upstream_unit_vectors() {
        // TestCalculateRollingUpdateReplicas (lws v0.10.0 leaderworkerset_controller_test.go:874)
        // pins HEAD's
        // R + max0(u - MU). V3 uses R + max0(u - 1); where MU = 1 both agree:
        assert_eq!(knobs(4, 1, 2).want_replicas(2), 5);
        assert_eq!(knobs(2, 1, 2).want_replicas(2), 3);
        assert_eq!(knobs(1, 1, 1).want_replicas(1), 1);
        assert_eq!(knobs(3, 0, 0).want_replicas(1), 3);
        assert_eq!(knobs(1, 0, 1).want_replicas(0), 1);
        // ...and with MU = 0 they differ: HEAD keeps the surge (2), V3 releases it (B12).
        assert_eq!(knobs(1, 0, 1).want_replicas(1), 1);
    }

    #[test]
    fn conditions_are_exclusive_and_short_circuit() {
        let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let mut conds = Vec::new();
        assert!(set_conditions(
            &mut conds,
            vec![condition(AVAILABLE, now.clone())],
            true
        ));
        // Pass 1 sets Progressing and flips Available to False, skipping UpgradeInProgress.
        assert!(set_conditions(
            &mut conds,
            vec![
                condition(PROGRESSING, now.clone()),
                condition(UPGRADE_IN_PROGRESS, now.clone())
            ],
            true
        ));
        let status =
            |c: &Vec<Condition>, t: &str| c.iter().find(|x| x.type_ == t).map(|x| x.status.clone());
        assert_eq!(status(&conds, AVAILABLE).as_deref(), Some("False"));
        assert_eq!(status(&conds, UPGRADE_IN_PROGRESS), None);
        // Pass 2 adds it.
        assert!(set_conditions(
            &mut conds,
            vec![
                condition(PROGRESSING, now.clone()),
                condition(UPGRADE_IN_PROGRESS, now.clone())
            ],
            true
        ));
        assert_eq!(status(&conds, UPGRADE_IN_PROGRESS).as_deref(), Some("True"));
        assert!(!set_conditions(
            &mut conds,
            vec![
                condition(PROGRESSING, now.clone()),
                condition(UPGRADE_IN_PROGRESS, now.clone())
            ],
            true
        ));
        // Available again flips both others to False (B16 fixed).
        assert!(set_conditions(
            &mut conds,
            vec![condition(AVAILABLE, now)],
            true
        ));
        assert_eq!(status(&conds, PROGRESSING).as_deref(), Some("False"));
        assert_eq!(
            status(&conds, UPGRADE_IN_PROGRESS).as_deref(),
            Some("False")
        );
    }

    #[test]
    fn b16_copy_leaves_exclusive_conditions_both_true() {
        let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let mut conds = vec![condition(PROGRESSING, now.clone())];
        assert!(set_conditions(
            &mut conds,
            vec![condition(AVAILABLE, now.clone())],
            false
        ));
        let trues: Vec<&str> = conds
            .iter()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(trues, vec![PROGRESSING, AVAILABLE]);
        // The fixed value flips Progressing.
        let mut conds = vec![condition(PROGRESSING, now.clone())];
        set_conditions(&mut conds, vec![condition(AVAILABLE, now)], true);
        assert_eq!(conds[0].status, "False");
    }

    #[test]
    fn summary_counts_burst_groups_but_not_in_conditions() {
        let g = |index, ready, updated| GroupStatus {
            index,
            ready,
            updated,
        };
        let s = summarize(&[g(0, true, false), g(1, true, true), g(2, false, true)], 2);
        assert_eq!((s.ready_replicas, s.updated_replicas), (2, 2));
        assert_eq!(s.conditions, vec![PROGRESSING, UPGRADE_IN_PROGRESS]);
        let s = summarize(&[g(0, true, true), g(1, true, true)], 2);
        assert_eq!(s.conditions, vec![AVAILABLE]);
        let s = summarize(&[g(0, false, true), g(1, true, true)], 2);
        assert_eq!(s.conditions, vec![PROGRESSING]);
    }
}
