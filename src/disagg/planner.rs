//! `pkg/controllers/disaggregatedset/planner.go` at v0.10.0: the pure rolling-update planner of
//! a DisaggregatedSet, function by function (names in each doc comment).
//!
//! A rollout moves every role from its old revisions (`past`) to the new one (`new`) along an
//! approximately linear schedule of `total_steps` batches: the new side grows as
//! `ceil(i * target / total_steps)`, the old side shrinks as
//! `initial_old - floor(i * initial_old / total_steps)`. The controller keeps no state between
//! reconciles, so each call infers the step it is at from the observed replicas and returns the
//! replicas of the next one. Each returned step changes either the old or the new side, never
//! both (except a forced drain paired with a scale-up the surge blocked); per role, old + new
//! stays within target + maxSurge; all roles move together, and no old revision is left with
//! one role drained to zero while another still runs (orphan prevention).
//!
//! Go's `int` is `i32` here, widened to `i64` wherever a sum or difference of a replica count
//! and a role's maxSurge or maxUnavailable could pass `i32` (Go's 64-bit `int` does not wrap
//! there: a maxSurge of 2^31 - 1 is valid); per-role slices (`[]int`) are `Vec<i32>` when returned, `&[i32]`
//! when passed. Go's `*UpdateStep` (nil = nothing to do) is `Option<UpdateStep>`. Where Go
//! returns a step aliasing an input slice, the Rust step owns a copy: no caller mutates either.

/// `UpdateStep` (planner.go:40-43): the old-revision (`past`) and new-revision (`new`) replicas
/// per role after the step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateStep {
    pub past: Vec<i32>,
    pub new: Vec<i32>,
}

/// `RoleReplicaState` (planner.go:45): replicas per role, in the caller's role order (Go's
/// `[]int`, an alias there too).
pub type RoleReplicaState = Vec<i32>;

/// `RollingUpdateConfig` (planner.go:47-50): one role's absolute maxSurge and maxUnavailable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RollingUpdateConfig {
    pub max_surge: i32,
    pub max_unavailable: i32,
}

/// `DefaultRollingUpdateConfig` (planner.go:52-59): maxSurge 1, maxUnavailable 0 per role.
pub fn default_rolling_update_config(num_roles: usize) -> Vec<RollingUpdateConfig> {
    let default = RollingUpdateConfig {
        max_surge: 1,
        max_unavailable: 0,
    };
    vec![default; num_roles]
}

fn wide(x: i32) -> i64 {
    i64::from(x)
}

/// Back to `i32`: every caller narrows a value between 0 and a replica count.
fn narrow(x: i64) -> i32 {
    i32::try_from(x).unwrap_or(if x < 0 { i32::MIN } else { i32::MAX })
}

/// `batchSize` (planner.go:61-66): the surge when positive, else the unavailability, at least 1.
fn batch_size(max_surge: i32, max_unavailable: i32) -> i32 {
    if max_surge > 0 {
        return max_surge;
    }
    max_unavailable.max(1)
}

/// `computeTotalSteps` (planner.go:68-82): the most batches any role needs,
/// `ceil(max(initial_old, target) / batch_size)`. Not the number of reconciles: each of those
/// moves only the old or only the new side.
fn compute_total_steps(initial_old: &[i32], target: &[i32], config: &[RollingUpdateConfig]) -> i32 {
    let mut total_steps = 0;
    let num_roles = initial_old.len();
    for i in 0..num_roles {
        let max_replicas = initial_old[i].max(target[i]).max(0);
        let role_batch_size = batch_size(config[i].max_surge, config[i].max_unavailable);
        // Integer ceiling division (at most `max_replicas`, so back within i32).
        let steps = (wide(max_replicas) + wide(role_batch_size) - 1) / wide(role_batch_size);
        let role_steps = narrow(steps);
        total_steps = total_steps.max(role_steps);
    }
    total_steps
}

/// `computeNextNewReplicas` (planner.go:84-117): the new side of the step after the least
/// advanced role's current step, never below the current replicas nor above the target.
fn compute_next_new_replicas(
    target: &[i32],
    current_new: &[i32],
    total_steps: i32,
) -> RoleReplicaState {
    let num_roles = target.len();
    if total_steps == 0 {
        return target.to_vec();
    }
    // Go converts the float quotient with int(), truncating toward zero, as `as` does.
    let step_index = |current: i32, target_val: i32| -> i32 {
        if target_val == 0 {
            return total_steps;
        }
        (f64::from(current) * f64::from(total_steps) / f64::from(target_val)) as i32
    };
    let mut min_step_idx = total_steps;
    for i in 0..num_roles {
        let step_idx = step_index(current_new[i], target[i]);
        min_step_idx = min_step_idx.min(step_idx);
    }
    let next_step_idx = min_step_idx + 1;
    let compute_new = |target_val: i32, current_val: i32| -> i32 {
        let progress = f64::from(next_step_idx) * f64::from(target_val) / f64::from(total_steps);
        let computed = (progress.ceil() as i32).min(target_val);
        computed.max(current_val)
    };
    let mut result = vec![0; num_roles];
    for i in 0..num_roles {
        result[i] = compute_new(target[i], current_new[i]);
    }
    result
}

/// `computeNextOldReplicas` (planner.go:119-153): the old side of the step after the most
/// advanced role's current step, never above the current replicas nor below zero.
fn compute_next_old_replicas(
    initial_old: &[i32],
    current_old: &[i32],
    total_steps: i32,
) -> RoleReplicaState {
    let num_roles = initial_old.len();
    if total_steps == 0 {
        return vec![0; num_roles];
    }
    let step_index = |removed: i32, source_val: i32| -> i32 {
        if source_val == 0 {
            return 0;
        }
        (f64::from(removed) * f64::from(total_steps) / f64::from(source_val)) as i32
    };
    let mut max_step_idx = 0;
    for i in 0..num_roles {
        if initial_old[i] == 0 {
            continue;
        }
        let removed = initial_old[i] - current_old[i];
        max_step_idx = max_step_idx.max(step_index(removed, initial_old[i]));
    }
    let next_step_idx = max_step_idx + 1;
    let compute_old = |source_val: i32, current_val: i32| -> i32 {
        let progress = f64::from(next_step_idx) * f64::from(source_val) / f64::from(total_steps);
        let computed = (source_val - progress.floor() as i32).max(0);
        computed.min(current_val)
    };
    let mut result = vec![0; num_roles];
    for i in 0..num_roles {
        result[i] = compute_old(initial_old[i], current_old[i]);
    }
    result
}

/// `correctAbnormalState` (planner.go:155-175): when some role's old side holds more than its
/// initial replicas, a step clamping it back (new side unchanged); else None.
fn correct_abnormal_state(
    current_old: &[i32],
    current_new: &[i32],
    initial_old: &[i32],
) -> Option<UpdateStep> {
    let num_roles = initial_old.len();
    let mut expected_old = vec![0; num_roles];
    let mut needs_correction = false;
    for i in 0..num_roles {
        expected_old[i] = initial_old[i].min(current_old[i]);
        if current_old[i] > expected_old[i] {
            needs_correction = true;
        }
    }
    if needs_correction {
        // Go's copy(): as many entries of `current_new` as fit, the rest 0.
        let mut new_copy = vec![0; num_roles];
        let n = num_roles.min(current_new.len());
        new_copy[..n].copy_from_slice(&current_new[..n]);
        return Some(UpdateStep {
            past: expected_old,
            new: new_copy,
        });
    }
    None
}

/// `isComplete` (planner.go:177-184): no old replicas left and every role at its target.
fn is_complete(current_old: &[i32], current_new: &[i32], target_new: &[i32]) -> bool {
    for i in 0..current_old.len() {
        if current_old[i] != 0 || current_new[i] < target_new[i] {
            return false;
        }
    }
    true
}

/// `isNewAtTarget` (planner.go:186-193): every role's new side at (or above) its target.
fn is_new_at_target(current_new: &[i32], target_new: &[i32]) -> bool {
    for i in 0..current_new.len() {
        if current_new[i] < target_new[i] {
            return false;
        }
    }
    true
}

/// `canScaleUp` (planner.go:195-205): old + next new within target + maxSurge for every role
/// with a non-zero target.
fn can_scale_up(
    current_old: &[i32],
    next_new: &[i32],
    target_new: &[i32],
    config: &[RollingUpdateConfig],
) -> bool {
    for i in 0..current_old.len() {
        if target_new[i] == 0 {
            continue;
        }
        if wide(current_old[i]) + wide(next_new[i])
            > wide(target_new[i]) + wide(config[i].max_surge)
        {
            return false;
        }
    }
    true
}

/// `computeMinOld` (planner.go:207-215): the old replicas each role must keep for
/// maxUnavailable, for roles not scaling up (initial old at least the target); 0 otherwise.
fn compute_min_old(
    initial_old: &[i32],
    current_new: &[i32],
    target_new: &[i32],
    config: &[RollingUpdateConfig],
) -> Vec<i32> {
    let mut min_old = vec![0; initial_old.len()];
    for i in 0..initial_old.len() {
        if initial_old[i] >= target_new[i] {
            let min = wide(target_new[i]) - wide(config[i].max_unavailable) - wide(current_new[i]);
            min_old[i] = narrow(min.max(0));
        }
    }
    min_old
}

/// `tryScaleUp` (planner.go:217-232): the step to `next_new` (old side unchanged) when some role
/// grows and the surge allows it; else None.
fn try_scale_up(
    current_old: &[i32],
    current_new: &[i32],
    next_new: &[i32],
    target_new: &[i32],
    config: &[RollingUpdateConfig],
) -> Option<UpdateStep> {
    let mut needs_scale_up = false;
    for i in 0..current_new.len() {
        if next_new[i] > current_new[i] {
            needs_scale_up = true;
            break;
        }
    }
    if !needs_scale_up {
        return None;
    }
    if !can_scale_up(current_old, next_new, target_new, config) {
        return None;
    }
    Some(UpdateStep {
        past: current_old.to_vec(),
        new: next_new.to_vec(),
    })
}

/// `tryProportionalDrain` (planner.go:234-254): the scheduled old side of the next step, kept at
/// or above `min_old` and free of orphans, when it drains anything (new side unchanged); else
/// None.
fn try_proportional_drain(
    initial_old: &[i32],
    current_old: &[i32],
    current_new: &[i32],
    target_new: &[i32],
    min_old: &[i32],
    total_steps: i32,
    config: &[RollingUpdateConfig],
) -> Option<UpdateStep> {
    let mut next_old = compute_next_old_replicas(initial_old, current_old, total_steps);
    for i in 0..next_old.len() {
        next_old[i] = next_old[i].max(min_old[i]);
    }
    apply_orphan_prevention(&mut next_old, current_new, initial_old, target_new, config);
    let mut needs_scale_down = false;
    for i in 0..next_old.len() {
        if next_old[i] < current_old[i] {
            needs_scale_down = true;
            break;
        }
    }
    if !needs_scale_down {
        return None;
    }
    Some(UpdateStep {
        past: next_old,
        new: current_new.to_vec(),
    })
}

/// `canDrainAllToZero` (planner.go:256-266): whether `next_new` alone meets maxUnavailable for
/// every role not scaling up.
fn can_drain_all_to_zero(
    next_new: &[i32],
    initial_old: &[i32],
    target: &[i32],
    config: &[RollingUpdateConfig],
) -> bool {
    for i in 0..target.len() {
        if initial_old[i] >= target[i] {
            let min_required = wide(target[i]) - wide(config[i].max_unavailable);
            if wide(next_new[i]) < min_required {
                return false;
            }
        }
    }
    true
}

/// `applyOrphanPrevention` (planner.go:268-298): when some roles (that had old replicas) would
/// drain to zero and others not, drain them all to zero if the new side allows it, else keep
/// one old replica on each role that would reach zero. Edits `next_old` in place.
fn apply_orphan_prevention(
    next_old: &mut [i32],
    current_new: &[i32],
    initial_old: &[i32],
    target: &[i32],
    config: &[RollingUpdateConfig],
) {
    let mut any_drains_to_zero = false;
    let mut all_drain_to_zero = true;
    for i in 0..next_old.len() {
        if initial_old[i] == 0 {
            continue;
        }
        if next_old[i] == 0 {
            any_drains_to_zero = true;
        } else {
            all_drain_to_zero = false;
        }
    }
    if !any_drains_to_zero || all_drain_to_zero {
        return;
    }
    if can_drain_all_to_zero(current_new, initial_old, target, config) {
        for v in next_old.iter_mut() {
            *v = 0;
        }
        return;
    }
    for i in 0..next_old.len() {
        if next_old[i] == 0 && initial_old[i] > 0 {
            next_old[i] = 1;
        }
    }
}

/// `tryForceDrain` (planner.go:300-322): when the surge blocked the scale-up, drain the old side
/// enough for `next_new` to fit (keeping maxUnavailable) and take both in one step; None when
/// nothing needs draining.
fn try_force_drain(
    current_old: &[i32],
    next_new: &[i32],
    initial_old: &[i32],
    target_new: &[i32],
    config: &[RollingUpdateConfig],
) -> Option<UpdateStep> {
    let mut drained_old = vec![0; current_old.len()];
    let mut needs_drain = false;
    for i in 0..current_old.len() {
        let max_old = wide(target_new[i]) + wide(config[i].max_surge) - wide(next_new[i]);
        drained_old[i] = narrow(wide(current_old[i]).min(max_old).max(0));
        if initial_old[i] >= target_new[i] {
            let min_old_for_role = narrow(
                (wide(target_new[i]) - wide(config[i].max_unavailable) - wide(next_new[i])).max(0),
            );
            drained_old[i] = drained_old[i].max(min_old_for_role);
        }
        if drained_old[i] < current_old[i] {
            needs_drain = true;
        }
    }
    if !needs_drain {
        return None;
    }
    apply_orphan_prevention(&mut drained_old, next_new, initial_old, target_new, config);
    Some(UpdateStep {
        past: drained_old,
        new: next_new.to_vec(),
    })
}

/// `ComputeNextStep` (planner.go:324-356): the next step of the rollout, None when it is complete
/// (or there is nothing to roll). In order: correct an abnormal old side, drain the old side
/// once the new one is at target, scale up, drain on schedule, force a drain.
pub fn compute_next_step(
    initial_old: &[i32],
    current_old: &[i32],
    current_new: &[i32],
    target_new: &[i32],
    config: &[RollingUpdateConfig],
) -> Option<UpdateStep> {
    if is_complete(current_old, current_new, target_new) {
        return None;
    }
    let total_steps = compute_total_steps(initial_old, target_new, config);
    if total_steps == 0 {
        return None;
    }
    if let Some(step) = correct_abnormal_state(current_old, current_new, initial_old) {
        return Some(step);
    }
    if is_new_at_target(current_new, target_new) {
        return Some(UpdateStep {
            past: vec![0; initial_old.len()],
            new: current_new.to_vec(),
        });
    }
    let next_new = compute_next_new_replicas(target_new, current_new, total_steps);
    let min_old = compute_min_old(initial_old, current_new, target_new, config);
    if let Some(step) = try_scale_up(current_old, current_new, &next_new, target_new, config) {
        return Some(step);
    }
    if let Some(step) = try_proportional_drain(
        initial_old,
        current_old,
        current_new,
        target_new,
        &min_old,
        total_steps,
        config,
    ) {
        return Some(step);
    }
    if let Some(step) = try_force_drain(current_old, &next_new, initial_old, target_new, config) {
        return Some(step);
    }
    None
}

/// `ComputeAllSteps` (planner.go:358-389): a whole rollout, the initial state first, by calling
/// `compute_next_step` until it returns None (at most `2 * max replicas + 10` steps). Upstream
/// uses it in tests.
pub fn compute_all_steps(
    initial_old: &[i32],
    target: &[i32],
    config: &[RollingUpdateConfig],
) -> Vec<UpdateStep> {
    let num_roles = initial_old.len();
    let mut current_old = initial_old.to_vec();
    let mut current_new = vec![0; num_roles];
    let mut max_replicas = 0;
    for i in 0..num_roles {
        max_replicas = max_replicas.max(initial_old[i]).max(target[i]);
    }
    let max_steps = max_replicas * 2 + 10;
    let mut steps = vec![UpdateStep {
        past: initial_old.to_vec(),
        new: vec![0; num_roles],
    }];
    for _ in 0..max_steps {
        let Some(next_step) =
            compute_next_step(initial_old, &current_old, &current_new, target, config)
        else {
            break;
        };
        current_old = next_step.past.clone();
        current_new = next_step.new.clone();
        steps.push(next_step);
    }
    steps
}

#[cfg(test)]
mod tests {
    //! `pkg/controllers/disaggregatedset/planner_test.go` at v0.10.0, every test, each citing
    //! its Go test as `planner_test.go@v0.10.0:LINE` (table cases cite their own lines).
    //! testify's `assert`/`require` become `assert!`; Go's `stepsEqual` is `==` on the steps.

    use super::*;

    /// `RollingUpdateConfig{MaxSurge: surge, MaxUnavailable: unavailable}`.
    #[test]
    fn a_surge_of_i32_max_rolls_out_as_go_s_64_bit_int_does() {
        // Two roles of 2, maxSurge 2^31 - 1: Go's `2 + 2147483647 - 1` does not wrap, so the
        // rollout is one step (it wrapped to 0 steps here, "completed" at once).
        let config = vec![cfg(i32::MAX, 1), cfg(i32::MAX, 1)];
        assert_eq!(compute_total_steps(&[2, 2], &[2, 2], &config), 1);
        assert!(can_scale_up(&[2, 2], &[2, 2], &[2, 2], &config));
        let drained = try_force_drain(&[2, 2], &[2, 2], &[2, 2], &[2, 2], &config);
        assert!(drained.is_none(), "{drained:?}");
    }

    fn cfg(max_surge: i32, max_unavailable: i32) -> RollingUpdateConfig {
        RollingUpdateConfig {
            max_surge,
            max_unavailable,
        }
    }

    /// One config per role from the per-role surge and unavailability lists.
    fn cfgs(surge: &[i32], unavail: &[i32]) -> Vec<RollingUpdateConfig> {
        surge
            .iter()
            .zip(unavail)
            .map(|(&s, &u)| cfg(s, u))
            .collect()
    }

    /// `completes` (planner_test.go@v0.10.0:35-57): the last step has no old replicas and the
    /// new side equals the target.
    fn completes(steps: &[UpdateStep], target: &[i32]) -> bool {
        let Some(last) = steps.last() else {
            return false;
        };
        last.past.iter().all(|&v| v == 0) && last.new == target
    }

    /// `totalAtStep` (planner_test.go@v0.10.0:59-69): old plus new replicas over all roles.
    fn total_at_step(s: &UpdateStep) -> i32 {
        s.past.iter().sum::<i32>() + s.new.iter().sum::<i32>()
    }

    /// The smallest `total_at_step` of a rollout (Go starts its minimum at 100).
    fn min_total(steps: &[UpdateStep]) -> i32 {
        steps.iter().map(total_at_step).fold(100, i32::min)
    }

    type Pair = ([i32; 2], [i32; 2]);

    /// A case of TestComputeAllSteps_ExactSequence: name, source, target, config, steps.
    type ExactCase = (
        &'static str,
        [i32; 2],
        [i32; 2],
        Vec<RollingUpdateConfig>,
        Vec<Pair>,
    );

    // TestComputeAllSteps_ExactSequence (planner_test.go@v0.10.0:106): the exact step sequence
    // of two-role rollouts; each case cites the line of its name.
    #[test]
    fn compute_all_steps_exact_sequence() {
        for (name, source, target, config, expected) in exact_sequence_cases() {
            let actual = compute_all_steps(&source, &target, &config);
            let expected: Vec<UpdateStep> = expected
                .iter()
                .map(|(past, new)| UpdateStep {
                    past: past.to_vec(),
                    new: new.to_vec(),
                })
                .collect();
            assert_eq!(actual, expected, "{name}: ComputeAllSteps mismatch");
        }
    }

    fn exact_sequence_cases() -> Vec<ExactCase> {
        vec![
            // small_1_1_surge1 (:118)
            (
                "small_1_1_surge1",
                [1, 1],
                [1, 1],
                default_rolling_update_config(2),
                vec![([1, 1], [0, 0]), ([1, 1], [1, 1]), ([0, 0], [1, 1])],
            ),
            // small_2_2_surge1 (:128)
            (
                "small_2_2_surge1",
                [2, 2],
                [2, 2],
                default_rolling_update_config(2),
                vec![
                    ([2, 2], [0, 0]),
                    ([2, 2], [1, 1]),
                    ([1, 1], [1, 1]),
                    ([1, 1], [2, 2]),
                    ([0, 0], [2, 2]),
                ],
            ),
            // small_3_3_surge1 (:140)
            (
                "small_3_3_surge1",
                [3, 3],
                [3, 3],
                default_rolling_update_config(2),
                vec![
                    ([3, 3], [0, 0]),
                    ([3, 3], [1, 1]),
                    ([2, 2], [1, 1]),
                    ([2, 2], [2, 2]),
                    ([1, 1], [2, 2]),
                    ([1, 1], [3, 3]),
                    ([0, 0], [3, 3]),
                ],
            ),
            // medium_6_2_surge1 (:155)
            (
                "medium_6_2_surge1",
                [6, 2],
                [6, 2],
                default_rolling_update_config(2),
                vec![
                    ([6, 2], [0, 0]),
                    ([6, 2], [1, 1]),
                    ([5, 2], [1, 1]),
                    ([5, 2], [2, 1]),
                    ([4, 2], [2, 1]),
                    ([4, 2], [3, 1]),
                    ([3, 1], [3, 1]),
                    ([3, 1], [4, 2]),
                    ([2, 1], [4, 2]),
                    ([2, 1], [5, 2]),
                    ([1, 1], [5, 2]),
                    ([1, 1], [6, 2]),
                    ([0, 0], [6, 2]),
                ],
            ),
            // medium_6_2_surge2 (:175)
            (
                "medium_6_2_surge2",
                [6, 2],
                [6, 2],
                vec![cfg(2, 0), cfg(2, 0)],
                vec![
                    ([6, 2], [0, 0]),
                    ([6, 2], [2, 1]),
                    ([4, 2], [2, 1]),
                    ([4, 2], [4, 2]),
                    ([2, 1], [4, 2]),
                    ([2, 1], [6, 2]),
                    ([0, 0], [6, 2]),
                ],
            ),
            // medium_6_4_surge2 (:189)
            (
                "medium_6_4_surge2",
                [6, 4],
                [6, 4],
                vec![cfg(2, 0), cfg(2, 0)],
                vec![
                    ([6, 4], [0, 0]),
                    ([6, 4], [2, 2]),
                    ([4, 3], [2, 2]),
                    ([4, 3], [4, 3]),
                    ([2, 2], [4, 3]),
                    ([2, 2], [6, 4]),
                    ([0, 0], [6, 4]),
                ],
            ),
            // asymmetric_10_1_surge1 (:204)
            (
                "asymmetric_10_1_surge1",
                [10, 1],
                [10, 1],
                default_rolling_update_config(2),
                vec![
                    ([10, 1], [0, 0]),
                    ([10, 1], [1, 1]),
                    ([9, 1], [1, 1]),
                    ([9, 1], [2, 1]),
                    ([8, 1], [2, 1]),
                    ([8, 1], [3, 1]),
                    ([7, 1], [3, 1]),
                    ([7, 1], [4, 1]),
                    ([6, 1], [4, 1]),
                    ([6, 1], [5, 1]),
                    ([5, 1], [5, 1]),
                    ([5, 1], [6, 1]),
                    ([4, 1], [6, 1]),
                    ([4, 1], [7, 1]),
                    ([3, 1], [7, 1]),
                    ([3, 1], [8, 1]),
                    ([2, 1], [8, 1]),
                    ([2, 1], [9, 1]),
                    ([1, 1], [9, 1]),
                    ([1, 1], [10, 1]),
                    ([0, 0], [10, 1]),
                ],
            ),
            // asymmetric_1_10_surge1 (:232)
            (
                "asymmetric_1_10_surge1",
                [1, 10],
                [1, 10],
                default_rolling_update_config(2),
                vec![
                    ([1, 10], [0, 0]),
                    ([1, 10], [1, 1]),
                    ([1, 9], [1, 1]),
                    ([1, 9], [1, 2]),
                    ([1, 8], [1, 2]),
                    ([1, 8], [1, 3]),
                    ([1, 7], [1, 3]),
                    ([1, 7], [1, 4]),
                    ([1, 6], [1, 4]),
                    ([1, 6], [1, 5]),
                    ([1, 5], [1, 5]),
                    ([1, 5], [1, 6]),
                    ([1, 4], [1, 6]),
                    ([1, 4], [1, 7]),
                    ([1, 3], [1, 7]),
                    ([1, 3], [1, 8]),
                    ([1, 2], [1, 8]),
                    ([1, 2], [1, 9]),
                    ([1, 1], [1, 9]),
                    ([1, 1], [1, 10]),
                    ([0, 0], [1, 10]),
                ],
            ),
            // large_10_10_surge1 (:261)
            (
                "large_10_10_surge1",
                [10, 10],
                [10, 10],
                default_rolling_update_config(2),
                vec![
                    ([10, 10], [0, 0]),
                    ([10, 10], [1, 1]),
                    ([9, 9], [1, 1]),
                    ([9, 9], [2, 2]),
                    ([8, 8], [2, 2]),
                    ([8, 8], [3, 3]),
                    ([7, 7], [3, 3]),
                    ([7, 7], [4, 4]),
                    ([6, 6], [4, 4]),
                    ([6, 6], [5, 5]),
                    ([5, 5], [5, 5]),
                    ([5, 5], [6, 6]),
                    ([4, 4], [6, 6]),
                    ([4, 4], [7, 7]),
                    ([3, 3], [7, 7]),
                    ([3, 3], [8, 8]),
                    ([2, 2], [8, 8]),
                    ([2, 2], [9, 9]),
                    ([1, 1], [9, 9]),
                    ([1, 1], [10, 10]),
                    ([0, 0], [10, 10]),
                ],
            ),
            // large_10_10_surge3 (:292)
            (
                "large_10_10_surge3",
                [10, 10],
                [10, 10],
                vec![cfg(3, 0), cfg(3, 0)],
                vec![
                    ([10, 10], [0, 0]),
                    ([10, 10], [3, 3]),
                    ([8, 8], [3, 3]),
                    ([8, 8], [5, 5]),
                    ([5, 5], [8, 8]),
                    ([3, 3], [8, 8]),
                    ([3, 3], [10, 10]),
                    ([0, 0], [10, 10]),
                ],
            ),
            // large_12_6_surge2 (:307)
            (
                "large_12_6_surge2",
                [12, 6],
                [12, 6],
                vec![cfg(2, 0), cfg(2, 0)],
                vec![
                    ([12, 6], [0, 0]),
                    ([12, 6], [2, 1]),
                    ([10, 5], [2, 1]),
                    ([10, 5], [4, 2]),
                    ([8, 4], [4, 2]),
                    ([8, 4], [6, 3]),
                    ([6, 3], [6, 3]),
                    ([6, 3], [8, 4]),
                    ([4, 2], [8, 4]),
                    ([4, 2], [10, 5]),
                    ([2, 1], [10, 5]),
                    ([2, 1], [12, 6]),
                    ([0, 0], [12, 6]),
                ],
            ),
            // scale_up_1_1_to_3_3 (:328)
            (
                "scale_up_1_1_to_3_3",
                [1, 1],
                [3, 3],
                default_rolling_update_config(2),
                vec![
                    ([1, 1], [0, 0]),
                    ([1, 1], [1, 1]),
                    ([1, 1], [2, 2]),
                    ([1, 1], [3, 3]),
                    ([0, 0], [3, 3]),
                ],
            ),
            // scale_up_4_4_to_6_6 (:343)
            (
                "scale_up_4_4_to_6_6",
                [4, 4],
                [6, 6],
                default_rolling_update_config(2),
                vec![
                    ([4, 4], [0, 0]),
                    ([4, 4], [1, 1]),
                    ([4, 4], [2, 2]),
                    ([4, 4], [3, 3]),
                    ([3, 3], [4, 4]),
                    ([2, 2], [5, 5]),
                    ([1, 1], [6, 6]),
                    ([0, 0], [6, 6]),
                ],
            ),
            // scale_down_5_5_to_2_2 (:359)
            (
                "scale_down_5_5_to_2_2",
                [5, 5],
                [2, 2],
                default_rolling_update_config(2),
                vec![
                    ([5, 5], [0, 0]),
                    ([4, 4], [0, 0]),
                    ([3, 3], [0, 0]),
                    ([2, 2], [0, 0]),
                    ([2, 2], [1, 1]),
                    ([1, 1], [1, 1]),
                    ([1, 1], [2, 2]),
                    ([0, 0], [2, 2]),
                ],
            ),
            // mixed_scale_3_5_to_5_3 (:376)
            (
                "mixed_scale_3_5_to_5_3",
                [3, 5],
                [5, 3],
                default_rolling_update_config(2),
                vec![
                    ([3, 5], [0, 0]),
                    ([3, 4], [0, 0]),
                    ([2, 3], [0, 0]),
                    ([2, 3], [1, 1]),
                    ([2, 2], [1, 1]),
                    ([2, 2], [2, 2]),
                    ([2, 2], [3, 2]),
                    ([1, 1], [3, 2]),
                    ([1, 1], [4, 3]),
                    ([1, 1], [5, 3]),
                    ([0, 0], [5, 3]),
                ],
            ),
            // asymmetric_2_4_to_4_2 (:396)
            (
                "asymmetric_2_4_to_4_2",
                [2, 4],
                [4, 2],
                default_rolling_update_config(2),
                vec![
                    ([2, 4], [0, 0]),
                    ([2, 3], [0, 0]),
                    ([1, 2], [0, 0]),
                    ([1, 2], [1, 1]),
                    ([1, 2], [2, 1]),
                    ([1, 1], [2, 1]),
                    ([1, 1], [3, 2]),
                    ([1, 1], [4, 2]),
                    ([0, 0], [4, 2]),
                ],
            ),
            // proportional_3_5_to_4_2 (:414)
            (
                "proportional_3_5_to_4_2",
                [3, 5],
                [4, 2],
                default_rolling_update_config(2),
                vec![
                    ([3, 5], [0, 0]),
                    ([3, 4], [0, 0]),
                    ([2, 3], [0, 0]),
                    ([2, 2], [0, 0]),
                    ([2, 2], [1, 1]),
                    ([2, 2], [2, 1]),
                    ([1, 1], [2, 1]),
                    ([1, 1], [3, 2]),
                    ([1, 1], [4, 2]),
                    ([0, 0], [4, 2]),
                ],
            ),
            // medium_4_4_surge2 (:431)
            (
                "medium_4_4_surge2",
                [4, 4],
                [4, 4],
                vec![cfg(2, 0), cfg(2, 0)],
                vec![
                    ([4, 4], [0, 0]),
                    ([4, 4], [2, 2]),
                    ([2, 2], [2, 2]),
                    ([2, 2], [4, 4]),
                    ([0, 0], [4, 4]),
                ],
            ),
            // asymmetric_surge_4_6 (:443)
            (
                "asymmetric_surge_4_6",
                [4, 6],
                [4, 6],
                vec![cfg(2, 0), cfg(3, 0)],
                vec![
                    ([4, 6], [0, 0]),
                    ([4, 6], [2, 3]),
                    ([2, 3], [2, 3]),
                    ([2, 3], [4, 6]),
                    ([0, 0], [4, 6]),
                ],
            ),
            // asymmetric_5_3_surge2 (:455)
            (
                "asymmetric_5_3_surge2",
                [5, 3],
                [5, 3],
                vec![cfg(2, 0), cfg(2, 0)],
                vec![
                    ([5, 3], [0, 0]),
                    ([5, 3], [2, 1]),
                    ([4, 2], [2, 1]),
                    ([3, 2], [2, 1]),
                    ([3, 2], [4, 2]),
                    ([2, 1], [4, 2]),
                    ([2, 1], [5, 3]),
                    ([0, 0], [5, 3]),
                ],
            ),
            // fresh_deploy_0_0_to_3_3 (:471)
            (
                "fresh_deploy_0_0_to_3_3",
                [0, 0],
                [3, 3],
                default_rolling_update_config(2),
                vec![
                    ([0, 0], [0, 0]),
                    ([0, 0], [1, 1]),
                    ([0, 0], [2, 2]),
                    ([0, 0], [3, 3]),
                ],
            ),
            // empty_0_0_to_0_0 (:482)
            (
                "empty_0_0_to_0_0",
                [0, 0],
                [0, 0],
                default_rolling_update_config(2),
                vec![([0, 0], [0, 0])],
            ),
        ]
    }

    // TestUnavailableBasic_Symmetric4_4 (planner_test.go@v0.10.0:507)
    #[test]
    fn unavailable_basic_symmetric_4_4() {
        let steps = compute_all_steps(&[4, 4], &[4, 4], &[cfg(0, 1), cfg(0, 1)]);
        assert!(completes(&steps, &[4, 4]), "rollout should complete");
        assert!(
            min_total(&steps) < 8,
            "total should drop below 8 for unavailable pattern"
        );
    }

    // TestUnavailableBasic_StepSequence (planner_test.go@v0.10.0:521)
    #[test]
    fn unavailable_basic_step_sequence() {
        let steps = compute_all_steps(&[4, 4], &[4, 4], &[cfg(0, 1), cfg(0, 1)]);
        let found = steps.windows(2).any(|w| {
            let (prev, curr) = (&w[0], &w[1]);
            let old_decreased = curr.past[0] < prev.past[0] || curr.past[1] < prev.past[1];
            let new_increase = (curr.new[0] - prev.new[0]) + (curr.new[1] - prev.new[1]);
            let old_decrease = (prev.past[0] - curr.past[0]) + (prev.past[1] - curr.past[1]);
            old_decreased && old_decrease > new_increase
        });
        assert!(found, "No unavailable pattern found");
    }

    // TestSurgePriority_SurgeTakesPriorityOverUnavailable (planner_test.go@v0.10.0:542)
    #[test]
    fn surge_priority_surge_takes_priority_over_unavailable() {
        let steps = compute_all_steps(&[4, 4], &[4, 4], &[cfg(1, 1), cfg(1, 1)]);
        assert!(completes(&steps, &[4, 4]), "rollout should complete");
        for s in &steps {
            assert!(
                total_at_step(s) >= 8,
                "total should never drop below 8 when surge > 0: {s:?}"
            );
        }
    }

    // TestSurgePriority_UnavailableWhenSurgeZero (planner_test.go@v0.10.0:554)
    #[test]
    fn surge_priority_unavailable_when_surge_zero() {
        let steps = compute_all_steps(&[4, 4], &[4, 4], &[cfg(0, 1), cfg(0, 1)]);
        assert!(completes(&steps, &[4, 4]), "rollout should complete");
        assert!(
            min_total(&steps) < 8,
            "total should drop below 8 when surge=0"
        );
    }

    // TestSurgePriority_Surge2Behavior (planner_test.go@v0.10.0:569)
    #[test]
    fn surge_priority_surge2_behavior() {
        let steps = compute_all_steps(&[6, 6], &[6, 6], &[cfg(2, 0), cfg(2, 0)]);
        assert!(completes(&steps, &[6, 6]), "rollout should complete");
        for s in &steps {
            assert!(
                total_at_step(s) >= 12,
                "surge should not drop below target: {s:?}"
            );
        }
    }

    // TestSurgePriority_Unavailable2Behavior (planner_test.go@v0.10.0:581)
    #[test]
    fn surge_priority_unavailable2_behavior() {
        let steps = compute_all_steps(&[6, 6], &[6, 6], &[cfg(0, 2), cfg(0, 2)]);
        assert!(completes(&steps, &[6, 6]), "rollout should complete");
        assert!(
            min_total(&steps) < 12,
            "unavailable should drop below target"
        );
    }

    // TestSurgePriority_BothSurgeAndUnavailableUsesSurge (planner_test.go@v0.10.0:596)
    #[test]
    fn surge_priority_both_surge_and_unavailable_uses_surge() {
        let steps = compute_all_steps(&[6, 6], &[6, 6], &[cfg(2, 2), cfg(2, 2)]);
        assert!(completes(&steps, &[6, 6]), "rollout should complete");
        for s in &steps {
            assert!(total_at_step(s) >= 12, "surge should take priority: {s:?}");
        }
    }

    // TestMixedSurgeUnavailable_Role0SurgeRole1Unavailable (planner_test.go@v0.10.0:608)
    #[test]
    fn mixed_surge_unavailable_role0_surge_role1_unavailable() {
        let steps = compute_all_steps(&[4, 4], &[4, 4], &[cfg(1, 0), cfg(0, 1)]);
        assert!(completes(&steps, &[4, 4]), "rollout should complete");
    }

    // TestMixedSurgeUnavailable_Role0UnavailableRole1Surge (planner_test.go@v0.10.0:614)
    #[test]
    fn mixed_surge_unavailable_role0_unavailable_role1_surge() {
        let steps = compute_all_steps(&[4, 4], &[4, 4], &[cfg(0, 1), cfg(1, 0)]);
        assert!(completes(&steps, &[4, 4]), "rollout should complete");
    }

    // TestMixedSurgeUnavailable_Asymmetric (planner_test.go@v0.10.0:620): cases at :624.
    #[test]
    fn mixed_surge_unavailable_asymmetric() {
        let config = [cfg(1, 0), cfg(0, 1)];
        for (sp, sd) in [(6, 2), (2, 6), (8, 4)] {
            let steps = compute_all_steps(&[sp, sd], &[sp, sd], &config);
            assert!(
                completes(&steps, &[sp, sd]),
                "sp={sp}, sd={sd}: rollout should complete"
            );
        }
    }

    // TestUnavailableEdgeCases_ScaleUpWithUnavailable (planner_test.go@v0.10.0:635)
    #[test]
    fn unavailable_edge_cases_scale_up_with_unavailable() {
        let steps = compute_all_steps(&[2, 2], &[4, 4], &[cfg(0, 1), cfg(0, 1)]);
        assert!(
            completes(&steps, &[4, 4]),
            "Scale-up with unavailable did not complete"
        );
    }

    // TestUnavailableEdgeCases_ScaleDownWithUnavailable (planner_test.go@v0.10.0:642)
    #[test]
    fn unavailable_edge_cases_scale_down_with_unavailable() {
        let steps = compute_all_steps(&[4, 4], &[2, 2], &[cfg(0, 1), cfg(0, 1)]);
        assert!(
            completes(&steps, &[2, 2]),
            "Scale-down with unavailable did not complete"
        );
    }

    // TestUnavailableEdgeCases_FreshDeployWithUnavailable (planner_test.go@v0.10.0:649)
    #[test]
    fn unavailable_edge_cases_fresh_deploy_with_unavailable() {
        let steps = compute_all_steps(&[0, 0], &[4, 4], &[cfg(0, 1), cfg(0, 1)]);
        assert!(
            completes(&steps, &[4, 4]),
            "Fresh deploy with unavailable did not complete"
        );
    }

    // TestUnavailableEdgeCases_NoInfiniteLoop (planner_test.go@v0.10.0:656): cases at :660.
    #[test]
    fn unavailable_edge_cases_no_infinite_loop() {
        for (size, unavailable) in [(4, 1), (6, 2), (10, 5)] {
            let config = [cfg(0, unavailable), cfg(0, unavailable)];
            let steps = compute_all_steps(&[size, size], &[size, size], &config);
            assert!(
                steps.len() as i32 <= size * 4,
                "size={size}, unavailable={unavailable}: too many steps ({})",
                steps.len()
            );
            assert!(
                completes(&steps, &[size, size]),
                "size={size}, unavailable={unavailable}: rollout should complete"
            );
        }
    }

    // TestBatchSize (planner_test.go@v0.10.0:674): cases at :678-683.
    #[test]
    fn batch_size_cases() {
        let cases = [
            (1, 0, 1),
            (2, 0, 2),
            (0, 1, 1),
            (0, 2, 2),
            (0, 0, 1), // the minimum is 1
            (3, 2, 3), // the surge takes priority
        ];
        for (max_surge, max_unavailable, expected) in cases {
            assert_eq!(
                batch_size(max_surge, max_unavailable),
                expected,
                "batchSize({max_surge}, {max_unavailable})"
            );
        }
    }

    /// A case of TestComputeTotalSteps: initial old, target, config, expected steps.
    type TotalStepsCase = ([i32; 2], [i32; 2], Vec<RollingUpdateConfig>, i32);

    // TestComputeTotalSteps (planner_test.go@v0.10.0:692): cases at :698-713.
    #[test]
    fn compute_total_steps_cases() {
        let cases: [TotalStepsCase; 4] = [
            ([4, 4], [4, 4], default_rolling_update_config(2), 4),
            ([6, 2], [6, 2], default_rolling_update_config(2), 6),
            ([4, 4], [4, 4], vec![cfg(2, 0), cfg(2, 0)], 2),
            ([0, 0], [3, 3], default_rolling_update_config(2), 3),
        ];
        for (initial_old, target, config, expected) in cases {
            assert_eq!(
                compute_total_steps(&initial_old, &target, &config),
                expected,
                "computeTotalSteps({initial_old:?}, {target:?}, {config:?})"
            );
        }
    }

    // TestCorrectAbnormalState_Normal (planner_test.go@v0.10.0:722)
    #[test]
    fn correct_abnormal_state_normal() {
        let result = correct_abnormal_state(&[2, 2], &[2, 2], &[4, 4]);
        assert_eq!(result, None, "normal state should return nil");
    }

    // TestCorrectAbnormalState_Abnormal (planner_test.go@v0.10.0:732): old above initial old.
    #[test]
    fn correct_abnormal_state_abnormal() {
        let result = correct_abnormal_state(&[5, 5], &[2, 2], &[4, 4]);
        let result = result.expect("abnormal state should return correction step");
        assert_eq!(result.past, [4, 4], "old should be clamped to initialOld");
        assert_eq!(result.new, [2, 2], "new should be unchanged");
    }

    // TestComputeNextStep_ReturnsNilWhenDone (planner_test.go@v0.10.0:746): cases at :756-769.
    #[test]
    fn compute_next_step_returns_nil_when_done() {
        let config = default_rolling_update_config(2);
        let cases = [
            ("exactly at target", [3, 6], [0, 0], [3, 6], [3, 6]),
            ("new exceeds target", [3, 6], [0, 0], [4, 7], [3, 6]),
        ];
        for (name, initial_old, current_old, current_new, target_new) in cases {
            let result = compute_next_step(
                &initial_old,
                &current_old,
                &current_new,
                &target_new,
                &config,
            );
            assert_eq!(
                result, None,
                "{name}: should return nil when rollout is complete"
            );
        }
    }

    // TestComputeNextStep_FreshStart (planner_test.go@v0.10.0:780)
    #[test]
    fn compute_next_step_fresh_start() {
        let config = default_rolling_update_config(2);
        let result = compute_next_step(&[4, 4], &[4, 4], &[0, 0], &[4, 4], &config)
            .expect("fresh start should return a step");
        assert!(
            result.new[0] > 0,
            "first step should create new role0 replicas"
        );
        assert!(
            result.new[1] > 0,
            "first step should create new role1 replicas"
        );
    }

    /// A case of the edge-case tests: name, two per-role inputs, total steps, and the check of
    /// the result (Go's `checkFunc`, given the case name for its messages).
    type EdgeCase = (&'static str, [i32; 2], [i32; 2], i32, fn(&str, &[i32]));

    // TestComputeNextNewReplicas_EdgeCases (planner_test.go@v0.10.0:800): cases at :809-836.
    #[test]
    fn compute_next_new_replicas_edge_cases() {
        let cases: [EdgeCase; 3] = [
            ("target_role0_zero", [0, 4], [0, 2], 4, |n, r| {
                assert_eq!(r[0], 0, "{n}: role0 should remain 0 when target is 0");
                assert!(r[1] > 2, "{n}: role1 should increase");
            }),
            ("target_role1_zero", [4, 0], [2, 0], 4, |n, r| {
                assert!(r[0] > 2, "{n}: role0 should increase");
                assert_eq!(r[1], 0, "{n}: role1 should remain 0 when target is 0");
            }),
            ("total_steps_zero", [4, 4], [2, 2], 0, |n, r| {
                assert_eq!(r, [4, 4], "{n}: should return target when totalSteps is 0");
            }),
        ];
        for (name, target, current_new, total_steps, check) in cases {
            check(
                name,
                &compute_next_new_replicas(&target, &current_new, total_steps),
            );
        }
    }

    // TestComputeNextOldReplicas_EdgeCases (planner_test.go@v0.10.0:852): cases at :861-888.
    #[test]
    fn compute_next_old_replicas_edge_cases() {
        let cases: [EdgeCase; 3] = [
            ("source_role0_zero", [0, 4], [0, 3], 4, |n, r| {
                assert_eq!(r[0], 0, "{n}: role0 should remain 0");
                assert!(r[1] <= 3, "{n}: role1 should decrease or stay same");
            }),
            ("source_role1_zero", [4, 0], [3, 0], 4, |n, r| {
                assert!(r[0] <= 3, "{n}: role0 should decrease or stay same");
                assert_eq!(r[1], 0, "{n}: role1 should remain 0");
            }),
            ("total_steps_zero", [4, 4], [2, 2], 0, |n, r| {
                assert_eq!(r, [0, 0], "{n}: should return zeros when totalSteps is 0");
            }),
        ];
        for (name, initial_old, current_old, total_steps, check) in cases {
            check(
                name,
                &compute_next_old_replicas(&initial_old, &current_old, total_steps),
            );
        }
    }

    /// Per-role slices of a case: initial old, target, surge, unavailability.
    type NRoleCase = (
        &'static str,
        &'static [i32],
        &'static [i32],
        &'static [i32],
        &'static [i32],
    );

    // TestNRole_RolloutCompletes (planner_test.go@v0.10.0:904): 3 to 6 roles, role addition,
    // removal and rename; each case cites its line.
    #[test]
    fn n_role_rollout_completes() {
        let cases: &[NRoleCase] = &[
            // 3-role scenarios
            (
                "3role_symmetric",
                &[3, 3, 3],
                &[3, 3, 3],
                &[1, 1, 1],
                &[0, 0, 0],
            ), // :913
            (
                "3role_asymmetric",
                &[6, 3, 2],
                &[6, 3, 2],
                &[2, 1, 1],
                &[0, 0, 0],
            ), // :914
            (
                "3role_different_surge",
                &[4, 4, 4],
                &[4, 4, 4],
                &[2, 1, 3],
                &[0, 0, 0],
            ), // :915
            (
                "3role_scale_up",
                &[2, 2, 2],
                &[4, 4, 4],
                &[1, 1, 1],
                &[0, 0, 0],
            ), // :916
            (
                "3role_scale_down",
                &[4, 4, 4],
                &[2, 2, 2],
                &[1, 1, 1],
                &[0, 0, 0],
            ), // :917
            (
                "3role_fresh_deploy",
                &[0, 0, 0],
                &[3, 3, 3],
                &[1, 1, 1],
                &[0, 0, 0],
            ), // :918
            (
                "3role_unavailable",
                &[4, 4, 4],
                &[4, 4, 4],
                &[0, 0, 0],
                &[1, 1, 1],
            ), // :919
            (
                "3role_mixed_surge_unavail",
                &[4, 4, 4],
                &[4, 4, 4],
                &[1, 0, 2],
                &[0, 1, 0],
            ), // :920
            // 4-role scenarios
            (
                "4role_symmetric",
                &[4, 4, 4, 4],
                &[4, 4, 4, 4],
                &[1, 1, 1, 1],
                &[0, 0, 0, 0],
            ), // :923
            // :924
            (
                "4role_asymmetric",
                &[8, 4, 2, 1],
                &[8, 4, 2, 1],
                &[2, 2, 1, 1],
                &[0, 0, 0, 0],
            ),
            (
                "4role_scale_up",
                &[1, 1, 1, 1],
                &[3, 3, 3, 3],
                &[1, 1, 1, 1],
                &[0, 0, 0, 0],
            ), // :925
            // :926
            (
                "4role_scale_down",
                &[5, 5, 5, 5],
                &[2, 2, 2, 2],
                &[1, 1, 1, 1],
                &[0, 0, 0, 0],
            ),
            // :927
            (
                "4role_fresh_deploy",
                &[0, 0, 0, 0],
                &[4, 4, 4, 4],
                &[1, 1, 1, 1],
                &[0, 0, 0, 0],
            ),
            // 5-role scenarios
            // :930
            (
                "5role_symmetric",
                &[5, 5, 5, 5, 5],
                &[5, 5, 5, 5, 5],
                &[1, 1, 1, 1, 1],
                &[0, 0, 0, 0, 0],
            ),
            // :931
            (
                "5role_asymmetric",
                &[10, 5, 3, 2, 1],
                &[10, 5, 3, 2, 1],
                &[2, 2, 1, 1, 1],
                &[0, 0, 0, 0, 0],
            ),
            // :932
            (
                "5role_scale_up",
                &[1, 1, 1, 1, 1],
                &[2, 2, 2, 2, 2],
                &[1, 1, 1, 1, 1],
                &[0, 0, 0, 0, 0],
            ),
            // :933
            (
                "5role_scale_down",
                &[6, 6, 6, 6, 6],
                &[3, 3, 3, 3, 3],
                &[1, 1, 1, 1, 1],
                &[0, 0, 0, 0, 0],
            ),
            // :934
            (
                "5role_fresh_deploy",
                &[0, 0, 0, 0, 0],
                &[5, 5, 5, 5, 5],
                &[1, 1, 1, 1, 1],
                &[0, 0, 0, 0, 0],
            ),
            // Role addition: 2 roles -> 3 roles (a,b -> a,b,c)
            (
                "add_role_2to3",
                &[4, 4, 0],
                &[4, 4, 4],
                &[1, 1, 1],
                &[0, 0, 0],
            ), // :937
            (
                "add_role_3to4",
                &[3, 3, 3, 0],
                &[3, 3, 3, 3],
                &[1, 1, 1, 1],
                &[0, 0, 0, 0],
            ), // :938
            // :939
            (
                "add_role_5to6",
                &[2, 2, 2, 2, 2, 0],
                &[2, 2, 2, 2, 2, 2],
                &[1, 1, 1, 1, 1, 1],
                &[0, 0, 0, 0, 0, 0],
            ),
            // Role removal: 3 roles -> 2 roles (a,b,c -> a,b)
            (
                "remove_role_3to2",
                &[4, 4, 4],
                &[4, 4, 0],
                &[1, 1, 1],
                &[0, 0, 0],
            ), // :942
            // :943
            (
                "remove_role_4to3",
                &[3, 3, 3, 3],
                &[3, 3, 3, 0],
                &[1, 1, 1, 1],
                &[0, 0, 0, 0],
            ),
            // Role rename (simultaneous add + remove): a,b,c,d,i -> a,b,c,d,h
            // Sorted order becomes [a,b,c,d,h,i] with initialOld h=0, target i=0
            // :947
            (
                "rename_role_5to5",
                &[10, 10, 10, 10, 0, 10],
                &[10, 10, 10, 10, 10, 0],
                &[1, 1, 1, 1, 1, 1],
                &[0, 0, 0, 0, 0, 0],
            ),
            // Scale-down scenarios (maxSurge constraint regression tests)
            (
                "scale_down_prefill_up_decode",
                &[10, 2],
                &[6, 8],
                &[2, 2],
                &[0, 0],
            ), // :950
            ("scale_down_both", &[10, 10], &[4, 4], &[2, 2], &[0, 0]), // :951
            ("scale_down_asymmetric", &[8, 4], &[3, 2], &[1, 1], &[0, 0]), // :952
            // maxUnavailable constraint regression test (asymmetric roles)
            ("unavail_asymmetric_5_2", &[5, 2], &[5, 2], &[0, 0], &[1, 1]), // :955
        ];
        for &(name, initial_old, target, surge, unavail) in cases {
            let steps = compute_all_steps(initial_old, target, &cfgs(surge, unavail));
            assert!(completes(&steps, target), "{name}: rollout should complete");
        }
    }

    /// A case of the constraint tests: name, initial old, target, per-role surge or
    /// unavailability.
    type ConstraintCase = (&'static str, &'static [i32], &'static [i32], &'static [i32]);

    // TestNRole_SurgeConstraint (planner_test.go@v0.10.0:970): per role, old + new stays within
    // target + surge once the role's new side has started (drain-only steps are exempt).
    #[test]
    fn n_role_surge_constraint() {
        let cases: &[ConstraintCase] = &[
            ("3role", &[3, 3, 3], &[3, 3, 3], &[1, 1, 1]), // :977
            ("4role", &[4, 4, 4, 4], &[4, 4, 4, 4], &[1, 1, 1, 1]), // :978
            (
                "5role",
                &[5, 5, 5, 5, 5],
                &[5, 5, 5, 5, 5],
                &[1, 1, 1, 1, 1],
            ), // :979
            // Scale-down scenarios (maxSurge constraint regression tests)
            ("scale_down_prefill_up_decode", &[10, 2], &[6, 8], &[2, 2]), // :981
            ("scale_down_both", &[10, 10], &[4, 4], &[2, 2]),             // :982
            ("scale_down_asymmetric", &[8, 4], &[3, 2], &[1, 1]),         // :983
        ];
        for &(name, initial_old, target, surge) in cases {
            let config: Vec<RollingUpdateConfig> = surge.iter().map(|&s| cfg(s, 0)).collect();
            let steps = compute_all_steps(initial_old, target, &config);
            for (step_idx, s) in steps.iter().enumerate() {
                for role_idx in 0..target.len() {
                    if s.new[role_idx] == 0 {
                        continue;
                    }
                    let max_allowed = target[role_idx] + surge[role_idx];
                    let actual = s.past[role_idx] + s.new[role_idx];
                    assert!(
                        actual <= max_allowed,
                        "{name}: step {step_idx}, role {role_idx}: old({}) + new({}) = {actual} \
                         exceeds target({}) + surge({}) = {max_allowed}",
                        s.past[role_idx],
                        s.new[role_idx],
                        target[role_idx],
                        surge[role_idx],
                    );
                }
            }
        }
    }

    // TestNRole_UnavailableConstraint (planner_test.go@v0.10.0:1014): the rollout completes and,
    // per role not scaling up, old + new never falls below target - unavailable.
    #[test]
    fn n_role_unavailable_constraint() {
        let cases: &[ConstraintCase] = &[
            ("symmetric_4_4", &[4, 4], &[4, 4], &[1, 1]),  // :1021
            ("asymmetric_5_2", &[5, 2], &[5, 2], &[1, 1]), // :1022
            ("asymmetric_2_5", &[2, 5], &[2, 5], &[1, 1]), // :1023
            ("3role_symmetric", &[3, 3, 3], &[3, 3, 3], &[1, 1, 1]), // :1024
        ];
        for &(name, initial_old, target, unavail) in cases {
            let config: Vec<RollingUpdateConfig> = unavail.iter().map(|&u| cfg(0, u)).collect();
            let steps = compute_all_steps(initial_old, target, &config);
            assert!(completes(&steps, target), "{name}: rollout should complete");
            for (step_idx, s) in steps.iter().enumerate() {
                for role_idx in 0..target.len() {
                    if initial_old[role_idx] < target[role_idx] {
                        continue;
                    }
                    let min_required = target[role_idx] - unavail[role_idx];
                    let actual = s.past[role_idx] + s.new[role_idx];
                    assert!(
                        actual >= min_required,
                        "{name}: step {step_idx}, role {role_idx}: old({}) + new({}) = {actual} \
                         below target({}) - unavail({}) = {min_required}",
                        s.past[role_idx],
                        s.new[role_idx],
                        target[role_idx],
                        unavail[role_idx],
                    );
                }
            }
        }
    }

    // TestNRole_DefaultConfig (planner_test.go@v0.10.0:1057)
    #[test]
    fn n_role_default_config() {
        for num_roles in [3, 4, 5] {
            let config = default_rolling_update_config(num_roles);
            assert_eq!(config.len(), num_roles);
            for c in &config {
                assert_eq!(c.max_surge, 1, "default surge should be 1");
                assert_eq!(c.max_unavailable, 0, "default unavailable should be 0");
            }
        }
    }
}
