//! `quiescence`: after a controller restart or a resync at rest, with no rollout pending and no
//! fault ever injected, nothing changes: no pod is deleted, no StatefulSet spec changes.

use super::report::Sink;
use super::InvariantId;
use crate::time::fmt_ms;

/// The open quiet window, if any.
#[derive(Default)]
pub(super) struct Quiescence {
    since: Option<u64>,
}

impl Quiescence {
    pub fn open(&mut self, now_ms: u64) {
        self.since = Some(now_ms);
    }

    pub fn close(&mut self) {
        self.since = None;
    }

    pub fn is_open(&self) -> bool {
        self.since.is_some()
    }

    /// Something changed: a violation if a window is open (one report per window).
    pub fn changed(&mut self, out: &mut Sink, what: String, object: String) {
        if let Some(since) = self.since.take() {
            let msg = format!(
                "{what} after a controller restart or resync at t={} with no rollout pending",
                fmt_ms(since)
            );
            out.violate(InvariantId::Quiescence, msg, vec![object]);
        }
    }
}
