//! `partitionBudget`, `surgeBound` and `writeStorm`: judged on each write of the leader
//! StatefulSet (lws-bugs-and-tests I-AVAIL, I-SURGE; bugs B10, B12, B14, Z02, Z03, Z06).

use super::*;

impl Checker {
    /// `partitionBudget`: a partition decrease never exposes a ready, not-yet-updated group
    /// while that would leave fewer than `replicas - maxUnavailable` groups up, counting the
    /// groups already down (bug B10; lws-bugs-and-tests I-AVAIL as judged at the move). Groups
    /// down for less than `STALE_VIEW_MS` count as up: the controller may not have seen them.
    /// Unlike `availability`, groups disrupted by faults are not excused: the budget is what
    /// the controller must protect.
    pub(super) fn check_partition_move(&mut self, api: &ApiServer, sts: &StatefulSet) {
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
            let leader = self.groups.get(g).and_then(|x| {
                x.pods
                    .iter()
                    .filter_map(|n| self.pods.get(n))
                    .find(|p| p.leader && !p.terminating)
            });
            leader.is_some_and(|p| p.revision.as_deref() != target)
        };
        let exposed: Vec<i32> = (partition..before.min(s))
            .filter(|g| {
                self.groups
                    .get(g)
                    .is_some_and(|x| x.available && x.phase == Phase::Old)
            })
            .filter(replaced)
            .collect();
        if exposed.is_empty() {
            return;
        }
        let now = api.now_ms();
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
        let up = self.counts.available + unseen - exposed.len() as i32;
        let floor = self.replicas - self.max_unavailable;
        if up >= floor {
            return;
        }
        let down_why: Vec<String> = down
            .iter()
            .map(|g| format!("{g} ({})", self.why_down(*g)))
            .collect();
        let msg = format!(
            "partition lowered {before} -> {partition}, taking down ready groups {exposed:?} on an older revision while groups [{}] have been unavailable for over {}: {up} groups left up, below replicas {} - maxUnavailable {}",
            down_why.join(", "),
            fmt_ms(STALE_VIEW_MS),
            self.replicas,
            self.max_unavailable
        );
        let mut objects = vec![k8s::name(&sts.metadata).to_string()];
        for g in exposed.iter().chain(&down) {
            objects.extend(self.group_objects(*g));
        }
        self.violate(api, PARTITION_BUDGET, msg, objects);
    }

    pub(super) fn has_terminating(&self, g: i32) -> bool {
        self.groups.get(&g).is_some_and(|x| {
            x.pods
                .iter()
                .any(|n| self.pods.get(n).is_some_and(|p| p.terminating))
        })
    }

    /// `writeStorm`: the controller does not rewrite the leader StatefulSet's spec more than
    /// `STORM_WRITES` times in `STORM_WINDOW_MS`; a rollout moves the partition a few times per
    /// group. A storm is two writers, or one writer and its own stale cache, fighting.
    pub(super) fn check_storm(&mut self, api: &ApiServer, sts_name: &str) {
        let now = api.now_ms();
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
        self.violate(api, WRITE_STORM, msg, vec![sts_name.to_string()]);
    }

    /// Why group g is not available, in a few words.
    fn why_down(&self, g: i32) -> String {
        let Some(group) = self.groups.get(&g) else {
            return "no pods".into();
        };
        let pods: Vec<&PodInfo> = group.pods.iter().filter_map(|n| self.pods.get(n)).collect();
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
        if live < self.size as usize {
            parts.push(format!("{live} of {} pods live", self.size));
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
    pub(super) fn check_surge(
        &mut self,
        api: &ApiServer,
        sts: &k8s_openapi::api::apps::v1::StatefulSet,
    ) {
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
        self.violate(
            api,
            SURGE_BOUND,
            msg,
            vec![k8s::name(&sts.metadata).to_string()],
        );
    }
}
