//! The scenario file format (a contract: extend it, do not break it). YAML, one scenario per
//! file; unknown keys are errors; durations are `1500ms`, `30s`, `5m`, `10h`; ranges `20s..60s`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A duration in milliseconds, written `1500ms`, `30s`, `5m` or `10h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub u64);

/// Uniform in `[lo, hi]`; a single duration is a range of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range(pub u64, pub u64);

pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!("invalid duration {s:?}: expected a number followed by ms, s, m or h")
    })?;
    let scale = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => {
            return Err(format!(
                "invalid duration {s:?}: the unit must be ms, s, m or h"
            ))
        }
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("duration {s:?} is too large"))
}

pub fn parse_range(s: &str) -> Result<Range, String> {
    match s.split_once("..") {
        Some((a, b)) => {
            let (lo, hi) = (parse_duration(a)?, parse_duration(b)?);
            if lo > hi {
                return Err(format!(
                    "invalid range {s:?}: the lower bound exceeds the upper"
                ));
            }
            Ok(Range(lo, hi))
        }
        None => parse_duration(s).map(|d| Range(d, d)),
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s).map(Duration).map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Range {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_range(&s).map_err(de::Error::custom)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::time::fmt_ms(self.0))
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScenarioSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub seed: Option<u64>,
    #[serde(default)]
    pub cluster: ClusterSpec,
    #[serde(default)]
    pub controller: ControllerSpec,
    #[serde(default)]
    pub manifests: Vec<String>,
    #[serde(default)]
    pub steps: Vec<StepSpec>,
    pub invariants: Option<InvariantSelection>,
    /// How long the healed phase may take to reach rollout complete (default 1h).
    pub converge_within: Option<Duration>,
    #[serde(default)]
    pub expect: BTreeMap<String, Expectation>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterSpec {
    /// `"1.29"`: feature-gate defaults (MaxUnavailableStatefulSet on from 1.35).
    pub kubernetes_version: Option<String>,
    pub max_unavailable_stateful_set: Option<bool>,
    pub nodes: Option<NodesSpec>,
    pub pod_startup: Option<Range>,
    pub pod_termination: Option<Range>,
    pub watch_lag: Option<Range>,
    pub gc_lag: Option<Range>,
    pub node_delete_delay: Option<Duration>,
    pub node_join_delay: Option<Duration>,
    /// Images that never pull: their pods stay Pending (ImagePullBackOff).
    #[serde(default)]
    pub unpullable_images: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodesSpec {
    pub count: Option<u32>,
    pub pods_per_node: Option<u32>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ControllerSpec {
    /// `PROFILE[,flag=value...]`; `--reconciler` overrides.
    pub reconciler: Option<String>,
    pub sync_period: Option<Duration>,
    pub api_latency: Option<Range>,
    pub watch_lag: Option<Range>,
    pub restart_delay: Option<Range>,
}

/// `all`, or a list of invariant names.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum InvariantSelection {
    Named(String),
    List(Vec<String>),
}

/// `holds`, or `{violates: [...]}` with the exact set of invariants that must break.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Expectation {
    Holds,
    Violates(Vec<String>),
}

impl<'de> Deserialize<'de> for Expectation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct V {
            violates: Vec<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            V(V),
        }
        match Raw::deserialize(d)? {
            Raw::S(s) if s == "holds" => Ok(Expectation::Holds),
            Raw::S(s) => Err(de::Error::custom(format!(
                "expected `holds` or `{{violates: [...]}}`, got {s:?}"
            ))),
            Raw::V(v) => Ok(Expectation::Violates(v.violates)),
        }
    }
}

/// A node named directly or by one of its pods.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeRef {
    pub node: Option<String>,
    pub node_of: Option<String>,
    #[serde(default)]
    pub replace: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectRef {
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    pub merge: Option<Value>,
    #[serde(rename = "match")]
    pub pattern: Option<Value>,
    pub propagation: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScaleSpec {
    pub lws: String,
    pub replicas: i32,
    pub namespace: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PodRef {
    pub pod: String,
    pub namespace: Option<String>,
}

/// `kubectl delete pod`, optionally with `--grace-period` (0 is `--force --grace-period=0`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeletePodSpec {
    pub pod: String,
    pub namespace: Option<String>,
    pub grace_period_seconds: Option<i64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KillSpec {
    pub after_writes: Option<u64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResyncSpec {
    /// Fire right after the N-th controller reconcile from now finishes, instead of at once.
    pub after_reconciles: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HoldSpec {
    /// Hold back the N-th watch event the controller receives from now (1 = the next).
    pub nth: u64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StaleSpec {
    /// The N-th controller reconcile from now reads previous versions (1 = the next).
    pub at_reconcile: u64,
}

/// One step as written: exactly one action key, plus `timeout` for `waitFor`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StepSpec {
    pub apply: Option<Value>,
    pub patch: Option<ObjectRef>,
    pub scale: Option<ScaleSpec>,
    pub delete: Option<ObjectRef>,
    pub wait: Option<Duration>,
    pub wait_for: Option<Value>,
    pub timeout: Option<Duration>,
    pub check: Option<ObjectRef>,
    pub kill_controller: Option<KillSpec>,
    pub resync: Option<ResyncSpec>,
    pub hold_watch_event: Option<HoldSpec>,
    pub stale_read: Option<StaleSpec>,
    pub drain_node: Option<NodeRef>,
    pub fail_node: Option<NodeRef>,
    pub cordon: Option<NodeRef>,
    pub uncordon: Option<NodeRef>,
    pub crash_container: Option<PodRef>,
    pub delete_pod: Option<DeletePodSpec>,
}

impl StepSpec {
    /// The action keys set, by their YAML names.
    pub fn actions(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |set: bool, name| {
            if set {
                v.push(name)
            }
        };
        add(self.apply.is_some(), "apply");
        add(self.patch.is_some(), "patch");
        add(self.scale.is_some(), "scale");
        add(self.delete.is_some(), "delete");
        add(self.wait.is_some(), "wait");
        add(self.wait_for.is_some(), "waitFor");
        add(self.check.is_some(), "check");
        add(self.kill_controller.is_some(), "killController");
        add(self.resync.is_some(), "resync");
        add(self.hold_watch_event.is_some(), "holdWatchEvent");
        add(self.stale_read.is_some(), "staleRead");
        add(self.drain_node.is_some(), "drainNode");
        add(self.fail_node.is_some(), "failNode");
        add(self.cordon.is_some(), "cordon");
        add(self.uncordon.is_some(), "uncordon");
        add(self.crash_container.is_some(), "crashContainer");
        add(self.delete_pod.is_some(), "deletePod");
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_ranges_parse() {
        assert_eq!(parse_duration("1500ms"), Ok(1500));
        assert_eq!(parse_duration("30s"), Ok(30_000));
        assert_eq!(parse_duration("5m"), Ok(300_000));
        assert_eq!(parse_duration("10h"), Ok(36_000_000));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("10d").is_err());
        assert!(parse_duration("s").is_err());
        assert_eq!(parse_range("20s..60s"), Ok(Range(20_000, 60_000)));
        assert_eq!(parse_range("5s"), Ok(Range(5_000, 5_000)));
        assert!(parse_range("60s..20s").is_err());
    }

    #[test]
    fn expectations_parse() {
        let e: BTreeMap<String, Expectation> =
            serde_saphyr::from_str("v0.3.0: {violates: [availability]}\nv0.4.1: holds\n").unwrap();
        assert_eq!(
            e["v0.3.0"],
            Expectation::Violates(vec!["availability".into()])
        );
        assert_eq!(e["v0.4.1"], Expectation::Holds);
        assert!(serde_saphyr::from_str::<BTreeMap<String, Expectation>>("v0.4.1: fine\n").is_err());
    }
}
