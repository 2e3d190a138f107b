//! Faults injected into the cluster's machinery that need nothing from the scenario runner:
//! no name to resolve, no bookkeeping for the checker. Each is a scenario step under its own
//! key (`apiErrors: {for: 30s, code: 503}`), a world event, and a handler in `World::inject`.
//!
//! Adding one: a variant here (its YAML key is the variant's camelCase name, its value the
//! spec struct), its arm in `World::inject` (`world.rs`), and the behaviour where it acts
//! (e.g. `controller/`). Fuzz draws it once `fuzz::Fault` names it.

use serde::{Deserialize, Serialize};

use crate::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum ClusterFault {
    /// The API server answers the controller's writes with an error for a while, as an
    /// overloaded or restarting kube-apiserver does (503 ServiceUnavailable from a restarting
    /// apiserver, 429 TooManyRequests from API Priority and Fairness, 500 from an etcd
    /// timeout). Reads are served from the controller's caches and keep working.
    ApiErrors(ApiErrorsSpec),
    /// Every controller write takes `extra` longer for a while, as behind an overloaded
    /// apiserver or a slow etcd (the reconcile waits on its write; no error is returned).
    SlowApi(SlowApiSpec),
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlowApiSpec {
    /// How long the slowness lasts, from the step on.
    #[serde(rename = "for")]
    pub duration: Duration,
    /// Added to every write's sampled API latency.
    pub extra: Duration,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiErrorsSpec {
    /// How long the errors last, from the step on.
    #[serde(rename = "for")]
    pub duration: Duration,
    /// 429, 500 or 503.
    pub code: u16,
}

impl ClusterFault {
    /// The YAML key of every fault, for error messages.
    pub const KEYS: &'static [&'static str] = &["apiErrors", "slowApi"];

    pub fn key(&self) -> &'static str {
        match self {
            ClusterFault::ApiErrors(_) => "apiErrors",
            ClusterFault::SlowApi(_) => "slowApi",
        }
    }

    /// Checks that the spec types cannot express.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            ClusterFault::ApiErrors(s) if ![429, 500, 503].contains(&s.code) => {
                Err(format!("apiErrors.code: {} is not 429, 500 or 503", s.code))
            }
            // A fault of no length (or no slowness) would do nothing: a step that silently
            // injects nothing is a mistake for the one meant.
            ClusterFault::ApiErrors(s) if s.duration.0 == 0 => {
                Err("apiErrors.for: 0s injects nothing; at least 1ms".into())
            }
            ClusterFault::SlowApi(s) if s.duration.0 == 0 => {
                Err("slowApi.for: 0s injects nothing; at least 1ms".into())
            }
            ClusterFault::SlowApi(s) if s.extra.0 == 0 => {
                Err("slowApi.extra: 0s slows nothing; at least 1ms".into())
            }
            ClusterFault::ApiErrors(_) | ClusterFault::SlowApi(_) => Ok(()),
        }
    }
}
