//! `statusConditions`: the conditions of each LWS status write (lws-bugs-and-tests I-STATUS;
//! bugs B16, B18).

use super::*;

impl Checker {
    /// `statusConditions`: Available is never True together with Progressing or
    /// UpgradeInProgress (the exclusive pairs of upstream `setCondition`; bug B16), and
    /// UpgradeInProgress is never True while the LWS template has never changed (bug B18).
    /// A check of the one LWS version just written (lws-bugs-and-tests I-STATUS).
    pub(super) fn check_conditions(&mut self, api: &ApiServer, l: &LeaderWorkerSet) {
        self.check_exclusive_conditions(api, l);
        let upgrading = l.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| is_update_in_progress(&c.type_) && c.status == "True")
        });
        let spurious = upgrading && self.lws_templates.len() == 1;
        if std::mem::replace(&mut self.spurious_upgrade, spurious) || !spurious {
            return;
        }
        let msg = "status has UpgradeInProgress=True (UpdateInProgress from v0.10.0), but the LWS template has never changed: no upgrade can be in progress".to_string();
        let objects = vec![k8s::name(&l.metadata).to_string()];
        self.violate(api, STATUS_CONDITIONS, msg, objects);
    }

    pub(super) fn check_exclusive_conditions(&mut self, api: &ApiServer, l: &LeaderWorkerSet) {
        let conditions = l.status.as_ref().map(|s| s.conditions.as_slice());
        let is_true = |t: &str| {
            conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == t && c.status == "True")
        };
        let clash: Vec<&str> = if is_true(rollout::AVAILABLE) {
            [
                rollout::PROGRESSING,
                rollout::UPGRADE_IN_PROGRESS,
                rollout::UPDATE_IN_PROGRESS,
            ]
            .into_iter()
            .filter(|t| is_true(t))
            .collect()
        } else {
            Vec::new()
        };
        if clash.is_empty() {
            self.conflicting_conditions = false;
            return;
        }
        if std::mem::replace(&mut self.conflicting_conditions, true) {
            return;
        }
        let msg = format!(
            "status has Available=True together with {}=True; they are mutually exclusive",
            clash.join("=True and ")
        );
        let objects = vec![k8s::name(&l.metadata).to_string()];
        self.violate(api, STATUS_CONDITIONS, msg, objects);
    }
}

/// The update condition: `UpgradeInProgress` up to v0.4.1, `UpdateInProgress` at v0.10.0.
fn is_update_in_progress(t: &str) -> bool {
    t == rollout::UPGRADE_IN_PROGRESS || t == rollout::UPDATE_IN_PROGRESS
}
