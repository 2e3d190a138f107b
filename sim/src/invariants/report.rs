//! Violations and where the checks record them.

use std::collections::BTreeSet;

use crate::api::ApiServer;
use crate::time::fmt_ms;

use super::InvariantId;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: InvariantId,
    pub at_ms: u64,
    pub message: String,
    /// The objects involved (pod and StatefulSet names, in the namespace of the LWS judged).
    pub objects: Vec<String>,
    /// The last trace lines touching those objects, oldest first.
    pub recent: Vec<String>,
}

impl Violation {
    /// The plain-words report: what broke, when, what, and the events that led there.
    pub fn report(&self) -> String {
        let mut s = format!(
            "{} violated at t={} ({} ms): {}",
            self.invariant,
            fmt_ms(self.at_ms),
            self.at_ms,
            self.message
        );
        if !self.objects.is_empty() {
            s.push_str(&format!("\n  objects: {}", self.objects.join(", ")));
        }
        if !self.recent.is_empty() {
            s.push_str("\n  events that led there:");
            for r in &self.recent {
                s.push_str(&format!("\n    {r}"));
            }
        }
        s
    }
}

/// What a check needs to report: the API server (clock and trace), which invariants are on,
/// the violations so far, and the namespace the objects named live in. Built by the checker
/// for one dispatch.
pub(super) struct Sink<'a> {
    pub api: &'a ApiServer,
    pub enabled: &'a BTreeSet<InvariantId>,
    pub violations: &'a mut Vec<Violation>,
    pub namespace: &'a str,
    /// Put before each message: which LWS, when the run has several (else empty).
    pub prefix: &'a str,
}

impl Sink<'_> {
    pub fn now_ms(&self) -> u64 {
        self.api.now_ms()
    }

    /// Record a violation of `invariant` if it is enabled (the verdicts always are).
    pub fn violate(&mut self, invariant: InvariantId, message: String, objects: Vec<String>) {
        if invariant.always_on() || self.enabled.contains(&invariant) {
            let recent = recent_events(self.api, self.namespace, &objects, 8);
            let message = if self.prefix.is_empty() {
                message
            } else {
                format!("{}{message}", self.prefix)
            };
            self.violations.push(Violation {
                invariant,
                at_ms: self.api.now_ms(),
                message,
                objects,
                recent,
            });
        }
    }
}

/// The last `n` trace lines naming one of `objects` in `namespace` (or a fault), oldest first.
fn recent_events(api: &ApiServer, namespace: &str, objects: &[String], n: usize) -> Vec<String> {
    let mut out: Vec<String> = api
        .trace
        .entries
        .iter()
        .rev()
        .filter(|e| e.actor == "fault" || (e.namespace == namespace && objects.contains(&e.name)))
        .take(n)
        .map(|e| e.line())
        .collect();
    out.reverse();
    out
}
