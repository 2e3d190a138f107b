//! `updateOrder`, `groupConsistency` and `availability`: judged from the per-group state the
//! checker keeps (lws-bugs-and-tests I-ORDER, I-CONSIST, I-AVAIL).

use super::*;

impl Checker {
    /// `updateOrder`: group g may start moving to the latest revision only together with the
    /// groups above it that are not on it yet, in one window of at most
    /// max(1, maxUnavailable + maxSurge) groups. So the groups in [g, replicas) still old or
    /// part-moved, g included, may number at most that window: top-down, a window at a time.
    pub(super) fn check_order(&mut self, api: &ApiServer, g: i32) {
        let revision = self.latest.unwrap_or(0) + 1;
        let window = (self.max_unavailable + self.max_surge).max(1);
        let pending: Vec<i32> = (g + 1..self.replicas)
            .filter(|h| {
                matches!(
                    self.groups.get(h).map(|x| x.phase),
                    Some(Phase::Old | Phase::Moving)
                )
            })
            .collect();
        if (pending.len() as i32) < window {
            return;
        }
        let old: Vec<i32> = pending
            .iter()
            .copied()
            .filter(|h| self.groups.get(h).is_some_and(|x| x.phase == Phase::Old))
            .collect();
        let moving: Vec<i32> = pending
            .iter()
            .copied()
            .filter(|h| !old.contains(h))
            .collect();
        let msg = format!(
            "group {g} started moving to revision {revision} while, above it, group(s) {old:?} were still on an older revision and {moving:?} part-moved: {} groups in flight, at most {window} allowed (maxUnavailable {} + maxSurge {})",
            pending.len() + 1,
            self.max_unavailable,
            self.max_surge
        );
        let mut objects = self.group_objects(g);
        objects.extend(pending.iter().flat_map(|h| self.group_objects(*h)));
        self.violate(api, UPDATE_ORDER, msg, objects);
    }

    /// `groupConsistency`: an all-ready group's leader and workers come from one revision.
    pub(super) fn check_consistency(&mut self, api: &ApiServer, g: i32, all_ready: bool) {
        if !all_ready {
            if let Some(x) = self.groups.get_mut(&g) {
                x.inconsistent = false;
            }
            return;
        }
        let live = self.live_pods(g);
        let leader = live
            .iter()
            .find(|(_, i)| i.leader)
            .map(|(_, i)| i.fingerprint);
        let workers: Vec<u64> = live
            .iter()
            .filter(|(_, i)| !i.leader)
            .map(|(_, i)| i.fingerprint)
            .collect();
        let consistent = self
            .revisions
            .iter()
            .any(|r| Some(r.leader) == leader && workers.iter().all(|w| *w == r.worker));
        let was = self.groups.get(&g).is_some_and(|x| x.inconsistent);
        if let Some(x) = self.groups.get_mut(&g) {
            x.inconsistent = !consistent;
        }
        if consistent || was {
            return;
        }
        let rev_of = |fp: u64, leader: bool| {
            self.revisions
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
        let objects = self.group_objects(g);
        self.violate(api, GROUP_CONSISTENCY, msg, objects);
    }

    /// `availability`: once all groups have been available, never fewer than
    /// `replicas - maxUnavailable - disrupted` available groups.
    pub(super) fn check_availability(&mut self, api: &ApiServer) {
        let now = api.now_ms();
        let since = &self.available_since;
        self.disrupted
            .retain(|g| since.get(g).is_none_or(|t| now < t + DISRUPTION_SETTLE_MS));
        let available = self.available_groups();
        if !self.first_available {
            // Armed once every desired group has been up (groups being scaled away or surge
            // groups do not count: an LWS that never came up is not owed availability).
            if self.replicas > 0 && self.counts.available_desired >= self.replicas {
                self.first_available = true;
            } else {
                return;
            }
        }
        self.min_available = Some(self.min_available.map_or(available, |m| m.min(available)));
        // After a scale-up the new groups are not owed yet: the floor counts groups that have
        // been available since the last change of replicas.
        self.available_hw = self.available_hw.max(available);
        let floor = self.replicas.min(self.available_hw)
            - self.max_unavailable
            - self.disrupted.len() as i32;
        if available >= floor {
            self.below_floor = false;
            return;
        }
        if self.below_floor {
            return;
        }
        self.below_floor = true;
        let down: Vec<i32> = (0..self.replicas)
            .filter(|g| !self.groups.get(g).is_some_and(|x| x.available))
            .collect();
        let msg = format!(
            "{available} of {} groups available, below the floor of {floor} (replicas {} - maxUnavailable {} - disrupted {}); unavailable groups: {down:?}",
            self.replicas,
            self.replicas,
            self.max_unavailable,
            self.disrupted.len()
        );
        let objects = down.iter().flat_map(|g| self.group_objects(*g)).collect();
        self.violate(api, AVAILABILITY, msg, objects);
    }
}
