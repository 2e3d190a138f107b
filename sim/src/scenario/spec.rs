//! The scenario file format (a contract: extend it, do not break it). YAML, one scenario per
//! file; unknown keys are errors; durations are `1500ms`, `30s`, `5m`, `10h`; ranges `20s..60s`.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::time::{duration_text, parse_duration, within_horizon, Duration};

use crate::fault::ClusterFault;

/// Uniform in `[lo, hi]`; a single duration is a range of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range(pub u64, pub u64);

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

impl<'de> Deserialize<'de> for Range {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let r = parse_range(&s).and_then(|r| within_horizon(&s, r.1).map(|_| r));
        r.map_err(de::Error::custom)
    }
}

impl Serialize for Range {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 == self.1 {
            s.serialize_str(&duration_text(self.0))
        } else {
            let (lo, hi) = (duration_text(self.0), duration_text(self.1));
            s.serialize_str(&format!("{lo}..{hi}"))
        }
    }
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// A scenario file. Serializes back to a file that loads to an equal value (fuzz cases and
/// explore findings are written this way).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScenarioSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub cluster: ClusterSpec,
    #[serde(default, skip_serializing_if = "is_default")]
    pub controller: ControllerSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invariants: Option<InvariantSelection>,
    /// How long the healed phase may take to reach rollout complete (default 1h).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converge_within: Option<Duration>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expect: BTreeMap<String, Expectation>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterSpec {
    /// `"1.29"`: feature-gate defaults (MaxUnavailableStatefulSet on from 1.35).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable_stateful_set: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodesSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_startup: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_termination: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch_lag: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_lag: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_delete_delay: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_join_delay: Option<Duration>,
    /// Images that never pull: their pods stay Pending (ImagePullBackOff).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpullable_images: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodesSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods_per_node: Option<u32>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Topology domains: for each entry, node `i` gets the label `key` with the value
    /// `<last segment of key>-<i / nodesPerDomain>` (node pools, zones, TPU slices), so a
    /// topology key can have more than one domain. A replacement node joins its predecessor's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<DomainSpec>,
}

/// One topology label that splits the nodes into domains of `nodesPerDomain` consecutive nodes.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DomainSpec {
    pub key: String,
    pub nodes_per_domain: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ControllerSpec {
    /// `PROFILE[,flag=value...]`; `--reconciler` overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciler: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_period: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_latency: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch_lag: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_delay: Option<Range>,
}

/// `all`, or a list of invariant names.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum InvariantSelection {
    Named(String),
    List(Vec<String>),
}

/// `holds`, or `{violates: [...]}` with the exact set of invariants that must break, or
/// `{violates: [...], in: 30%..70%}`: over `check --seeds N`, the fraction of seeds that break
/// exactly that set lies in the range (inclusive) and every other seed holds (README,
/// "Verdicts over many seeds"). A single run meets a rate if it holds or breaks exactly that
/// set (only one of the two when the range is `0%..0%` or `100%..100%`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    Holds,
    Violates(Vec<String>),
    /// The invariants, and the range of the fraction of seeds, in whole percent.
    Rate(Vec<String>, u32, u32),
}

impl Expectation {
    /// The invariants this expects to break (none for `holds`).
    pub fn invariants(&self) -> &[String] {
        match self {
            Expectation::Holds => &[],
            Expectation::Violates(v) | Expectation::Rate(v, ..) => v,
        }
    }
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Violates {
    violates: Vec<String>,
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    rate: Option<String>,
}

/// `30%..70%`: whole percentages, low to high, at most 100.
pub fn parse_rate(s: &str) -> Result<(u32, u32), String> {
    let pct = |p: &str| {
        p.trim()
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<u32>().ok())
            .filter(|n| *n <= 100)
    };
    s.split_once("..")
        .and_then(|(a, b)| Some((pct(a)?, pct(b)?)))
        .filter(|(a, b)| a <= b)
        .ok_or_else(|| format!("expected a rate LO%..HI% with 0 <= LO <= HI <= 100, got {s:?}"))
}

impl<'de> Deserialize<'de> for Expectation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let wrong = |v: &Value| {
            de::Error::custom(format!(
                "expected `holds`, `{{violates: [...]}}` (a list of invariant names) or \
                 `{{violates: [...], in: LO%..HI%}}`, got {v}"
            ))
        };
        match &v {
            Value::String(s) if s == "holds" => Ok(Expectation::Holds),
            Value::Object(_) => {
                let x = serde_json::from_value::<Violates>(v.clone()).map_err(|_| wrong(&v))?;
                match x.rate {
                    None => Ok(Expectation::Violates(x.violates)),
                    Some(r) => {
                        let (lo, hi) = parse_rate(&r).map_err(de::Error::custom)?;
                        Ok(Expectation::Rate(x.violates, lo, hi))
                    }
                }
            }
            _ => Err(wrong(&v)),
        }
    }
}

impl Serialize for Expectation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Expectation::Holds => s.serialize_str("holds"),
            Expectation::Violates(v) => Violates {
                violates: v.clone(),
                rate: None,
            }
            .serialize(s),
            Expectation::Rate(v, lo, hi) => Violates {
                violates: v.clone(),
                rate: Some(format!("{lo}%..{hi}%")),
            }
            .serialize(s),
        }
    }
}

/// A node named directly or by one of its pods.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_of: Option<String>,
    /// The namespace of the `nodeOf` pod (default `default`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub replace: bool,
}

/// An object's `name`, when given, names one: `name: ""` is an error, not the absence of a
/// name (which makes `check`/`waitFor` count objects by `selector`).
fn non_empty_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    if name.is_empty() {
        return Err(serde::de::Error::custom(
            "an empty name names no object (omit `name` to count objects by `selector`)",
        ));
    }
    Ok(name)
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectRef {
    pub kind: String,
    /// Required but for `check`/`waitFor`, which without a name count the objects of `kind`
    /// matching `selector` and `match`.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "non_empty_name"
    )]
    pub name: String,
    /// `check`/`waitFor` without `name`: the labels the counted objects carry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub selector: BTreeMap<String, String>,
    /// `check`/`waitFor` without `name`: how many objects must match (default: at least one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<Value>,
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub propagation: Option<String>,
    /// `patch`: `status` writes the status subresource (what a controller or kubelet does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// `check`: the condition must stay true this long (checked after every event).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holds: Option<Duration>,
    /// `check`/`waitFor`: the object must be a new one (another UID) since the last `delete` or
    /// `deletePod` step of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recreated: bool,
    /// `check`/`waitFor`: the object must not exist (instead of a `match`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScaleSpec {
    /// The LeaderWorkerSet to scale (the original form; `kind`/`name` address any scalable kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lws: Option<String>,
    /// `kubectl scale <kind>/<name>`: LeaderWorkerSet, StatefulSet or DisaggregatedSetRoleScaler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub replicas: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PodRef {
    pub pod: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `kubectl delete pod`, optionally with `--grace-period` (0 is `--force --grace-period=0`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeletePodSpec {
    pub pod: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KillSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_writes: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResyncSpec {
    /// Fire right after the N-th controller reconcile from now finishes, instead of at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_reconciles: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HoldSpec {
    /// Hold back the N-th watch event the controller receives from now (1 = the next).
    pub nth: u64,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StaleSpec {
    /// The N-th controller reconcile from now reads previous versions (1 = the next).
    pub at_reconcile: u64,
}

/// `expectError` beside `apply`, `patch` or `scale`: the write must be rejected with this HTTP
/// status code and a message containing `message` (upstream's webhook tests,
/// test/integration/webhooks/leaderworkerset_test.go at v0.4.1:187-213).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectErrorSpec {
    /// Absent: any refusal (a case whose status differs by release, e.g. a bound the CRD
    /// checks at v0.10.0 (422) and the webhook before it (403)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One step: the step and fault vocabulary. In YAML a map with exactly one action key (the
/// variant's camelCase name), plus `timeout` beside `waitFor`. A step the runner must resolve
/// or account for is a variant here, its key in `StepMap`, and its handler in
/// `Runner::run_step`; a fault the world injects on its own is a `ClusterFault` variant
/// (`fault.rs`), read and written under its own key with no change here.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "StepMap", into = "StepMap")]
pub enum StepSpec {
    /// A manifest path (relative to the scenario file) or an inline object.
    Apply(Value),
    Patch(ObjectRef),
    Scale(ScaleSpec),
    Delete(ObjectRef),
    Wait(Duration),
    /// `available`, `rolloutComplete` or `{kind, name, match}`; `timeout` is required.
    WaitFor {
        target: Value,
        timeout: Option<Duration>,
    },
    Check(ObjectRef),
    KillController(KillSpec),
    Resync(ResyncSpec),
    HoldWatchEvent(HoldSpec),
    StaleRead(StaleSpec),
    DrainNode(NodeRef),
    FailNode(NodeRef),
    Cordon(NodeRef),
    Uncordon(NodeRef),
    CrashContainer(PodRef),
    DeletePod(DeletePodSpec),
    Fault(ClusterFault),
    /// An `apply`, `patch` or `scale` with `expectError` beside it.
    Rejected {
        step: Box<StepSpec>,
        error: ExpectErrorSpec,
    },
}

impl StepSpec {
    /// The action key, as the file writes it.
    pub fn key(&self) -> &'static str {
        match self {
            StepSpec::Apply(_) => "apply",
            StepSpec::Patch(_) => "patch",
            StepSpec::Scale(_) => "scale",
            StepSpec::Delete(_) => "delete",
            StepSpec::Wait(_) => "wait",
            StepSpec::WaitFor { .. } => "waitFor",
            StepSpec::Check(_) => "check",
            StepSpec::KillController(_) => "killController",
            StepSpec::Resync(_) => "resync",
            StepSpec::HoldWatchEvent(_) => "holdWatchEvent",
            StepSpec::StaleRead(_) => "staleRead",
            StepSpec::DrainNode(_) => "drainNode",
            StepSpec::FailNode(_) => "failNode",
            StepSpec::Cordon(_) => "cordon",
            StepSpec::Uncordon(_) => "uncordon",
            StepSpec::CrashContainer(_) => "crashContainer",
            StepSpec::DeletePod(_) => "deletePod",
            StepSpec::Fault(f) => f.key(),
            StepSpec::Rejected { step, .. } => step.key(),
        }
    }
}

/// A step as a YAML map: every action key optional, so a step with two actions, or none, is
/// reported by name rather than as serde's "data did not match any variant".
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct StepMap {
    #[serde(skip_serializing_if = "Option::is_none")]
    apply: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scale: Option<ScaleSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delete: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_for: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expect_error: Option<ExpectErrorSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    check: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kill_controller: Option<KillSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resync: Option<ResyncSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hold_watch_event: Option<HoldSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stale_read: Option<StaleSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    drain_node: Option<NodeRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fail_node: Option<NodeRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cordon: Option<NodeRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uncordon: Option<NodeRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    crash_container: Option<PodRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delete_pod: Option<DeletePodSpec>,
    /// Every other key: a `ClusterFault` by its key, or an unknown key (an error).
    #[serde(flatten)]
    faults: BTreeMap<String, Value>,
}

/// The `ClusterFault`s among a step's other keys; any other key is reported with every valid
/// key listed.
fn cluster_faults(other: BTreeMap<String, Value>) -> Result<Vec<StepSpec>, String> {
    let mut out = Vec::new();
    for (key, value) in other {
        if !ClusterFault::KEYS.contains(&key.as_str()) {
            let mut valid: Vec<&str> = STEP_KEYS.to_vec();
            valid.extend(ClusterFault::KEYS);
            return Err(format!(
                "unknown field `{key}`, expected one of {}",
                valid.join(", ")
            ));
        }
        let wrap = |v: Value| serde_json::json!({ &key: v });
        let fault: ClusterFault = serde_json::from_value(wrap(value.clone())).map_err(|e| {
            let field = value
                .as_object()
                .map(|o| culprit::<ClusterFault>(o, wrap))
                .unwrap_or_default();
            format!("{key}{field}: {e}")
        })?;
        fault.validate()?;
        out.push(StepSpec::Fault(fault));
    }
    Ok(out)
}

/// The `.field` of object `o` that does not decode on its own as part of a `T` (`wrap` puts the
/// one-field object where `T` expects `o`): a wrong type, a number out of range. Empty when no
/// single field is to blame (a missing one, an unknown one). A value decoded from JSON has lost
/// its position, so this is how its error names the field.
pub(crate) fn culprit<T: serde::de::DeserializeOwned>(
    o: &serde_json::Map<String, Value>,
    wrap: impl Fn(Value) -> Value,
) -> String {
    o.iter()
        .find(|(k, v)| {
            let alone = wrap(serde_json::json!({ k.as_str(): v }));
            serde_json::from_value::<T>(alone).is_err_and(|e| {
                let m = e.to_string();
                !m.starts_with("missing field") && !m.starts_with("unknown field")
            })
        })
        .map(|(k, _)| format!(".{k}"))
        .unwrap_or_default()
}

/// The keys `StepMap` names (`timeout` included).
const STEP_KEYS: &[&str] = &[
    "apply",
    "patch",
    "scale",
    "delete",
    "wait",
    "waitFor",
    "timeout",
    "expectError",
    "check",
    "killController",
    "resync",
    "holdWatchEvent",
    "staleRead",
    "drainNode",
    "failNode",
    "cordon",
    "uncordon",
    "crashContainer",
    "deletePod",
];

impl TryFrom<StepMap> for StepSpec {
    type Error = String;

    fn try_from(m: StepMap) -> Result<Self, String> {
        let timeout = m.timeout;
        let expect_error = m.expect_error;
        let mut found: Vec<StepSpec> = [
            m.apply.map(StepSpec::Apply),
            m.patch.map(StepSpec::Patch),
            m.scale.map(StepSpec::Scale),
            m.delete.map(StepSpec::Delete),
            m.wait.map(StepSpec::Wait),
            m.wait_for
                .map(|target| StepSpec::WaitFor { target, timeout }),
            m.check.map(StepSpec::Check),
            m.kill_controller.map(StepSpec::KillController),
            m.resync.map(StepSpec::Resync),
            m.hold_watch_event.map(StepSpec::HoldWatchEvent),
            m.stale_read.map(StepSpec::StaleRead),
            m.drain_node.map(StepSpec::DrainNode),
            m.fail_node.map(StepSpec::FailNode),
            m.cordon.map(StepSpec::Cordon),
            m.uncordon.map(StepSpec::Uncordon),
            m.crash_container.map(StepSpec::CrashContainer),
            m.delete_pod.map(StepSpec::DeletePod),
        ]
        .into_iter()
        .flatten()
        .collect();
        found.extend(cluster_faults(m.faults)?);
        let keys: Vec<&str> = found.iter().map(StepSpec::key).collect();
        let step = found.pop().filter(|_| found.is_empty()).ok_or_else(|| {
            format!(
                "a step needs exactly one action, found {}: [{}]",
                keys.len(),
                keys.join(", ")
            )
        })?;
        if timeout.is_some() && !matches!(step, StepSpec::WaitFor { .. }) {
            return Err("`timeout` belongs to `waitFor`".into());
        }
        match expect_error {
            None => Ok(step),
            Some(ExpectErrorSpec {
                code: Some(code), ..
            }) if !(400..=599).contains(&code) => Err(format!(
                "expectError.code: {code} is not an error status (400 to 599)"
            )),
            Some(error)
                if matches!(
                    step,
                    StepSpec::Apply(_) | StepSpec::Patch(_) | StepSpec::Scale(_)
                ) =>
            {
                Ok(StepSpec::Rejected {
                    step: Box::new(step),
                    error,
                })
            }
            Some(_) => Err("`expectError` belongs to `apply`, `patch` or `scale`".into()),
        }
    }
}

impl From<StepSpec> for StepMap {
    fn from(s: StepSpec) -> StepMap {
        let mut m = StepMap::default();
        match s {
            StepSpec::Apply(v) => m.apply = Some(v),
            StepSpec::Patch(r) => m.patch = Some(r),
            StepSpec::Scale(r) => m.scale = Some(r),
            StepSpec::Delete(r) => m.delete = Some(r),
            StepSpec::Wait(d) => m.wait = Some(d),
            StepSpec::WaitFor { target, timeout } => {
                m.wait_for = Some(target);
                m.timeout = timeout;
            }
            StepSpec::Check(r) => m.check = Some(r),
            StepSpec::KillController(k) => m.kill_controller = Some(k),
            StepSpec::Resync(r) => m.resync = Some(r),
            StepSpec::HoldWatchEvent(h) => m.hold_watch_event = Some(h),
            StepSpec::StaleRead(r) => m.stale_read = Some(r),
            StepSpec::DrainNode(n) => m.drain_node = Some(n),
            StepSpec::FailNode(n) => m.fail_node = Some(n),
            StepSpec::Cordon(n) => m.cordon = Some(n),
            StepSpec::Uncordon(n) => m.uncordon = Some(n),
            StepSpec::CrashContainer(p) => m.crash_container = Some(p),
            StepSpec::DeletePod(p) => m.delete_pod = Some(p),
            StepSpec::Fault(f) => {
                if let Ok(serde_json::Value::Object(o)) = serde_json::to_value(&f) {
                    m.faults.extend(o);
                }
            }
            StepSpec::Rejected { step, error } => {
                m = StepMap::from(*step);
                m.expect_error = Some(error);
            }
        }
        m
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

    #[test]
    fn a_cluster_fault_reads_and_writes_under_its_own_key() {
        let step: StepSpec = serde_saphyr::from_str("apiErrors: {for: 2m, code: 503}\n").unwrap();
        let StepSpec::Fault(ClusterFault::ApiErrors(spec)) = &step else {
            panic!("{step:?}");
        };
        assert_eq!((spec.duration.0, spec.code), (120_000, 503));
        let text = serde_saphyr::to_string(&step).unwrap();
        assert_eq!(serde_saphyr::from_str::<StepSpec>(&text).unwrap(), step);
        let bad = serde_saphyr::from_str::<StepSpec>("apiErrors: {for: 2m, code: 404}\n");
        assert!(bad.unwrap_err().to_string().contains("not 429, 500 or 503"));
        let typo = serde_saphyr::from_str::<StepSpec>("apiError: {for: 2m, code: 503}\n");
        let msg = typo.unwrap_err().to_string();
        assert!(
            msg.contains("unknown field `apiError`") && msg.contains("apiErrors"),
            "{msg}"
        );
        let quoted = serde_saphyr::from_str::<StepSpec>("apiErrors: {for: 2m, code: \"503\"}\n");
        let msg = quoted.unwrap_err().to_string();
        assert!(msg.contains("apiErrors.code: invalid type"), "{msg}");
        let two = serde_saphyr::from_str::<StepSpec>("apiErrors: {for: 1s, code: 429}\nwait: 1s\n");
        assert!(two.unwrap_err().to_string().contains("exactly one action"));
    }
}
