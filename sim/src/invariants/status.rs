//! `statusConditions`: the conditions of each LWS status write (lws-bugs-and-tests I-STATUS;
//! bugs B16, B18).

use std::collections::BTreeSet;

use lws::api::LeaderWorkerSet;
use lws::{k8s, rollout};

use super::model::RevisionHashing;
use super::report::Sink;
use super::InvariantId;

/// The state of the status checks.
#[derive(Default)]
pub(super) struct StatusChecks {
    /// Every revision key the LWS has had, as its release hashes it (`RevisionHashing`): with
    /// only one, no rollout can ever be in progress. v0.4.1 hashes `subdomainPolicy`, so a
    /// change of it alone is a rollout there; v0.3.0 does not.
    revisions: BTreeSet<String>,
    /// Whether the LWS's last status broke `statusConditions` (report once per episode).
    conflicting_conditions: bool,
    spurious_upgrade: bool,
}

impl StatusChecks {
    /// A new LWS spec whose revision key is `key`.
    pub fn on_revision(&mut self, key: &str) {
        if !self.revisions.contains(key) {
            self.revisions.insert(key.to_string());
        }
    }

    /// `statusConditions`: Available is never True together with Progressing or
    /// UpgradeInProgress (the exclusive pairs of upstream `setCondition`; bug B16), and
    /// UpgradeInProgress is never True while the LWS revision (what `hashing` covers) has never
    /// changed (bug B18).
    /// A check of the one LWS version just written (lws-bugs-and-tests I-STATUS).
    pub fn on_lws(&mut self, out: &mut Sink, l: &LeaderWorkerSet, hashing: RevisionHashing) {
        self.check_exclusive_conditions(out, l);
        let upgrading = l.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| is_update_in_progress(&c.type_) && c.status == "True")
        });
        let spurious = upgrading && self.revisions.len() == 1;
        if std::mem::replace(&mut self.spurious_upgrade, spurious) || !spurious {
            return;
        }
        let msg = format!(
            "status has UpgradeInProgress=True (UpdateInProgress from v0.10.0), but the LWS revision ({}, what this release hashes) has never changed: no upgrade can be in progress",
            hashing.covers()
        );
        let objects = vec![k8s::name(&l.metadata).to_string()];
        out.violate(InvariantId::StatusConditions, msg, objects);
    }

    fn check_exclusive_conditions(&mut self, out: &mut Sink, l: &LeaderWorkerSet) {
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
        out.violate(InvariantId::StatusConditions, msg, objects);
    }
}

/// The update condition: `UpgradeInProgress` up to v0.4.1, `UpdateInProgress` at v0.10.0.
fn is_update_in_progress(t: &str) -> bool {
    t == rollout::UPGRADE_IN_PROGRESS || t == rollout::UPDATE_IN_PROGRESS
}
