//! `groupRestart` and `requiredRestart`: the restart policy restarts a group exactly when a
//! fault obliges it to (lws-bugs-and-tests I-RESTART; bugs B03, B08, B09).

use super::*;

impl Checker {
    /// One injected failure touched these groups: each may be restarted once for it.
    pub fn owe_restart(&mut self, groups: impl IntoIterator<Item = i32>) {
        let groups: BTreeSet<i32> = groups.into_iter().collect();
        for g in groups {
            *self.owed_restarts.entry(g).or_default() += 1;
        }
    }

    /// A fault hit `pod` of group `g` (a crashed container, a deletion, an eviction): under
    /// RecreateGroupOnPodRestart the whole group must be recreated, so its leader must go.
    pub fn require_restart(&mut self, g: i32, pod: &str, now_ms: u64) {
        if self.recreate_on_restart {
            self.required_restarts.entry(g).or_insert((
                now_ms + RESTART_DUE_MS,
                pod.to_string(),
                now_ms,
            ));
        }
    }

    /// `requiredRestart`: every group restart a fault made due happens (its leader is deleted)
    /// within `RESTART_DUE_MS` (lws-bugs-and-tests I-RESTART; bug B09). Checked as time passes
    /// and by `finish` at the end of a run.
    pub(super) fn check_required_restarts(&mut self, api: &ApiServer) {
        let now = api.now_ms();
        let late: Vec<i32> = self
            .required_restarts
            .iter()
            .filter(|(_, (due, _, _))| *due <= now)
            .map(|(g, _)| *g)
            .collect();
        for g in late {
            let (_, pod, at) = self.required_restarts.remove(&g).expect("listed");
            if g >= self.replicas {
                continue; // scaled away
            }
            let msg = format!(
                "pod {pod} of group {g} failed at t={} under RecreateGroupOnPodRestart, but the group was not recreated within {}: its leader was never deleted",
                fmt_ms(at),
                fmt_ms(RESTART_DUE_MS)
            );
            let objects = self.group_objects(g);
            self.violate(api, REQUIRED_RESTART, msg, objects);
        }
    }

    /// End of run: restarts still owed are late if their time has come.
    pub fn finish(&mut self, api: &ApiServer) {
        self.check_required_restarts(api);
    }

    /// `groupRestart`: the restart policy deletes a group's leader at most once per injected
    /// failure of that group (lws-bugs-and-tests I-RESTART; B03, B08).
    pub(super) fn check_restarts(&mut self, api: &ApiServer, name: &str) {
        let entries = &api.trace.entries;
        let mut restarted = Vec::new();
        while let Some(e) = entries.get(self.trace_cursor) {
            self.trace_cursor += 1;
            if e.verb != "delete" || e.kind != "Pod" || e.actor != "pod-controller" || e.rv == 0 {
                continue;
            }
            let Some(rest) = e.name.strip_prefix(name).and_then(|r| r.strip_prefix('-')) else {
                continue;
            };
            if let Ok(g) = rest.parse::<i32>() {
                restarted.push(g);
            }
        }
        for g in restarted {
            let n = self.restarts.entry(g).or_default();
            *n += 1;
            let (n, owed) = (*n, self.owed_restarts.get(&g).copied().unwrap_or(0));
            if n > owed {
                let msg = format!(
                    "group {g} was restarted by the restart policy {n} times for {owed} injected failure(s): a stale or out-of-turn pod deleted its leader"
                );
                let objects = self.group_objects(g);
                self.violate(api, GROUP_RESTART, msg, objects);
            }
        }
    }
}
