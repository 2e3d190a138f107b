//! The input contract's limits (README, "Limits"), enforced when a scenario loads so that a run
//! never panics, hangs or blows up on a value that is merely large: every check here names the
//! file, the line (where the file is known) and the field.
//!
//! This file holds the limits and the checks of single values and manifests; `targets.rs` the
//! checks that need the whole scenario (steps, fault targets).

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

use crate::api::STATEFULSET_REPLICAS_MAX;
use crate::time::{fmt_ms, HORIZON_MS};

/// Nodes in a cluster (`cluster.nodes.count`).
pub const NODE_COUNT_MAX: u32 = 10_000;
/// Groups of one LeaderWorkerSet (`spec.replicas`, in a manifest or a `scale` step): the leader
/// StatefulSet's replica limit.
pub const LWS_REPLICAS_MAX: i64 = STATEFULSET_REPLICAS_MAX as i64;
/// Pods of one LeaderWorkerSet: `replicas * size`.
pub const LWS_PODS_MAX: i64 = 100_000;
/// Pods of one DisaggregatedSet: `slices * sum(replicas * size)` over its roles, each role also
/// held to the LeaderWorkerSet limits (every role becomes one LeaderWorkerSet per slice).
pub const DS_PODS_MAX: i64 = LWS_PODS_MAX;
/// Pods the world may hold at once, whatever made them (many LWSs within their own limits, bare
/// pods, a client of `serve`): past it the run stops with a `liveness` verdict, so a small file
/// cannot make memory grow without bound (about 25 KB per pod with every cache and log).
pub const WORLD_PODS_MAX: usize = 150_000;
/// A grace period in seconds (`gracePeriodSeconds`, `terminationGracePeriodSeconds`): the horizon.
pub const GRACE_SECONDS_MAX: i64 = (HORIZON_MS / 1000) as i64;
/// The Kubernetes minors a scenario may name (`cluster.kubernetesVersion: "1.N"`): LWS needs
/// 1.26 or later (its README at v0.10.0; at 1.26 the StatefulSetStartOrdinal gate must be turned
/// on, and the simulator takes it as on), and 1.37 is the newest API the simulator encodes
/// (k8s-openapi `v1_37`) and the newest whose StatefulSet behaviour it models.
pub const KUBERNETES_MINORS: std::ops::RangeInclusive<u32> = 26..=37;
/// Bytes (JSON) of an LWS's `leaderWorkerTemplate` that each of its pods carries for free in
/// `TEMPLATE_EXCESS_MAX` (a vLLM template is 2-4 KiB).
pub const TEMPLATE_FREE_BYTES: i64 = 8 << 10;
/// An LWS's pods times its template's bytes beyond `TEMPLATE_FREE_BYTES`: each pod copies its
/// template's labels and annotations into every version of itself, so 2,000 template labels
/// on 1,000 pods held 660 MB; this keeps such a world within a few GB.
pub const TEMPLATE_EXCESS_MAX: i64 = 64 << 20;
/// Bytes of `cluster.nodes.labels` (keys and values) that each node carries for free in
/// `NODE_LABEL_EXCESS_MAX`.
pub const NODE_LABEL_FREE_BYTES: u64 = 2 << 10;
/// Nodes times their labels' bytes beyond `NODE_LABEL_FREE_BYTES` (5,000 labels on 10,000
/// nodes held over 9 GB).
pub const NODE_LABEL_EXCESS_MAX: u64 = 16 << 20;
/// Bytes of a scenario or manifest file.
pub const FILE_BYTES_MAX: u64 = 16 << 20;
/// Steps of one scenario.
pub const STEP_COUNT_MAX: usize = 1_000_000;

/// Where the parts of a scenario file are (1-based lines; empty for a spec held in memory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecLines {
    pub steps: Vec<usize>,
    /// Each `manifests` entry's line.
    pub manifests: Vec<usize>,
    pub invariants: Option<usize>,
    pub expect: BTreeMap<String, usize>,
    pub reconciler: Option<usize>,
    pub nodes: Option<usize>,
    /// `cluster.nodes.labels`.
    pub node_labels: Option<usize>,
    /// Each `cluster.nodes.domains` entry's line.
    pub node_domains: Vec<usize>,
    /// `cluster.kubernetesVersion`.
    pub kubernetes_version: Option<usize>,
    /// Each step's `apply` value's line (0: none): for an inline manifest written as a
    /// literal block (`apply: |`), the line of its first line that is not blank.
    pub apply_values: Vec<usize>,
}

#[derive(Deserialize)]
struct RawController {
    reconciler: Option<Spanned<IgnoredAny>>,
}

#[derive(Deserialize)]
struct RawNodes {
    labels: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    domains: Vec<Spanned<IgnoredAny>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCluster {
    nodes: Option<Spanned<RawNodes>>,
    kubernetes_version: Option<Spanned<IgnoredAny>>,
}

#[derive(Deserialize)]
struct RawSteps {
    #[serde(default)]
    steps: Vec<Spanned<IgnoredAny>>,
}

/// `STEP_COUNT_MAX` before the file is read as a spec (which builds every step: a file one
/// step over the limit took half a minute and 1.6 GB to be refused): the line of the first
/// step past the limit, and the message; `None` when within it (or when the file does not
/// parse, which the spec's reading reports).
pub fn too_many_steps(text: &str) -> Option<(usize, String)> {
    steps_over(text, STEP_COUNT_MAX)
}

fn steps_over(text: &str, max: usize) -> Option<(usize, String)> {
    let raw: RawSteps = serde_saphyr::from_str_with_options(text, super::yaml_options()).ok()?;
    let n = raw.steps.len();
    let first_over = raw.steps.get(max)?;
    let line = usize::try_from(first_over.referenced.line())
        .unwrap_or(1)
        .max(1);
    Some((line, format!("steps: {n} steps, above the limit of {max}")))
}

#[derive(Deserialize)]
struct RawStep {
    apply: Option<Spanned<IgnoredAny>>,
}

/// The line of each step's `apply` value when it is a literal block (`|`, `|-`, `|2`...),
/// whose lines are the file's; 0 otherwise (a quoted or folded string's lines are not).
fn apply_values(text: &str, steps: &[Spanned<RawStep>]) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let line = |s: &Spanned<IgnoredAny>| usize::try_from(s.referenced.line()).unwrap_or(0);
    let literal = |first: usize| {
        let above = lines[..first.saturating_sub(1).min(lines.len())]
            .iter()
            .rev();
        let indicator = above.map(|l| l.trim()).find(|l| !l.is_empty());
        indicator.is_some_and(|l| {
            let l = l.split(" #").next().unwrap_or(l).trim_end();
            let (_, tail) = l.rsplit_once('|').unwrap_or((l, "x"));
            tail.chars()
                .all(|c| c.is_ascii_digit() || c == '+' || c == '-')
        })
    };
    steps
        .iter()
        .map(|s| s.value.apply.as_ref().map_or(0, line))
        .map(|l| if l > 0 && literal(l) { l } else { 0 })
        .collect()
}

#[derive(Deserialize)]
struct RawLines {
    /// Mappings: the file already parsed as a spec, whose steps are.
    #[serde(default)]
    steps: Vec<Spanned<RawStep>>,
    #[serde(default)]
    manifests: Vec<Spanned<IgnoredAny>>,
    invariants: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    expect: BTreeMap<String, Spanned<IgnoredAny>>,
    controller: Option<RawController>,
    cluster: Option<RawCluster>,
}

impl SpecLines {
    /// The lines of a scenario file that already parsed as a spec (anything odd: no lines).
    pub fn of(text: &str) -> SpecLines {
        // Only positions are read here: a `.nan` where the spec wants a string (a name) parsed
        // as that string, and must not cost the file its lines.
        let mut options = super::yaml_options();
        options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::AsString;
        let Ok(raw) = serde_saphyr::from_str_with_options::<RawLines>(text, options) else {
            return SpecLines::default();
        };
        let line = |s: &Spanned<IgnoredAny>| usize::try_from(s.referenced.line()).ok();
        let nodes = raw.cluster.as_ref().and_then(|c| c.nodes.as_ref());
        let kubernetes_version = raw
            .cluster
            .as_ref()
            .and_then(|c| c.kubernetes_version.as_ref());
        SpecLines {
            kubernetes_version: kubernetes_version.and_then(line),
            apply_values: apply_values(text, &raw.steps),
            steps: raw
                .steps
                .iter()
                .map(|s| usize::try_from(s.referenced.line()).unwrap_or(0))
                .collect(),
            manifests: raw.manifests.iter().map(|s| line(s).unwrap_or(0)).collect(),
            invariants: raw.invariants.as_ref().and_then(line),
            expect: raw
                .expect
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), line(v)?)))
                .collect(),
            reconciler: raw
                .controller
                .and_then(|c| c.reconciler)
                .as_ref()
                .and_then(line),
            nodes: nodes
                .map(|n| n.referenced.line())
                .and_then(|l| usize::try_from(l).ok()),
            node_labels: nodes.and_then(|n| n.value.labels.as_ref()).and_then(line),
            node_domains: nodes
                .map(|n| {
                    n.value
                        .domains
                        .iter()
                        .map(|d| line(d).unwrap_or(0))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The line of `cluster.nodes.labels`, else of `cluster.nodes`.
    pub fn node_labels(&self) -> Option<usize> {
        self.node_labels.or(self.nodes)
    }

    /// The line of `cluster.nodes.domains[i]`, else of `cluster.nodes`.
    pub fn node_domain(&self, i: usize) -> Option<usize> {
        self.node_domains
            .get(i)
            .copied()
            .filter(|l| *l > 0)
            .or(self.nodes)
    }

    pub fn step(&self, i: usize) -> Option<usize> {
        self.steps.get(i).copied().filter(|l| *l > 0)
    }

    /// The file's line of line `k` (1-based) of step `i`'s inline manifest block, whose text
    /// starts with `blank` empty lines.
    pub fn apply_block_line(&self, i: usize, k: usize, blank: usize) -> Option<usize> {
        let first = self.apply_values.get(i).copied().filter(|l| *l > blank)?;
        Some(first - blank - 1 + k)
    }

    pub fn manifest(&self, i: usize) -> Option<usize> {
        self.manifests.get(i).copied().filter(|l| *l > 0)
    }
}

pub use crate::api::names::{is_dns_label, is_dns_subdomain};

pub(super) fn name_error(what: &str, v: &str) -> String {
    format!(
        "{what}: {v:?} is not a valid name (DNS-1123: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)"
    )
}

pub(super) fn check_name(what: &str, v: &str) -> Result<(), String> {
    if is_dns_subdomain(v) {
        Ok(())
    } else {
        Err(name_error(what, v))
    }
}

pub(super) fn check_namespace(what: &str, v: &Option<String>) -> Result<(), String> {
    match v {
        Some(n) if !is_dns_label(n) => Err(format!(
            "{what} {n:?} is not a valid namespace (DNS-1123 label: lowercase letters, digits and '-', at most 63 characters)"
        )),
        _ => Ok(()),
    }
}

pub fn check_grace(what: &str, g: i64) -> Result<(), String> {
    if (0..=GRACE_SECONDS_MAX).contains(&g) {
        Ok(())
    } else {
        Err(format!(
            "{what}: {g} is out of range: a grace period is 0..={GRACE_SECONDS_MAX} seconds (the simulated horizon, {})",
            fmt_ms(HORIZON_MS)
        ))
    }
}

/// A manifest document's limits, on its JSON before decoding: the path of the offending field
/// (dotted) and what is wrong. Without `lws_counts` (an object a step expects refused,
/// `manifest::Counts::AtRunTime`) an LWS's group and pod counts and a negative partition are
/// left to the webhooks and the run-time check (`install_limits`).
pub fn check_manifest(value: &Value, lws_counts: bool) -> Result<(), (String, String)> {
    let meta = |k: &str| {
        value
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
    };
    if let Some(n) = meta("name") {
        check_name("metadata.name", n).map_err(|m| ("metadata.name".into(), m))?;
    }
    if let Some(n) = meta("namespace") {
        check_namespace("metadata.namespace", &Some(n.to_string()))
            .map_err(|m| ("metadata.namespace".into(), m))?;
    }
    walk(value, &mut Vec::new(), lws_counts)?;
    match value.get("kind").and_then(Value::as_str) {
        Some("LeaderWorkerSet") if lws_counts => lws_size(value)?,
        Some("DisaggregatedSet") if lws_counts => ds_size(value)?,
        Some("StatefulSet") => statefulset_weight(value)?,
        _ => {}
    }
    Ok(())
}

/// `lws_size` on every role of a DisaggregatedSet (its fields under
/// `spec.roles[i].`), then its pods over all slices against `DS_PODS_MAX`.
fn ds_size(v: &Value) -> Result<(), (String, String)> {
    let int = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_i64);
    let roles = v.pointer("/spec/roles").and_then(Value::as_array);
    let mut pods: i64 = 0;
    for (i, role) in roles.into_iter().flatten().enumerate() {
        let r = int(role, "/spec/replicas").unwrap_or(1);
        let s = int(role, "/spec/leaderWorkerTemplate/size").unwrap_or(1);
        // A role's `spec` is its LeaderWorkerSet's, held to the same limits (groups, pods and
        // template bytes).
        lws_size(role).map_err(|(field, m)| {
            let at = format!("spec.roles[{i}].");
            (format!("{at}{field}"), format!("{at}{m}"))
        })?;
        pods = pods.saturating_add(r.saturating_mul(s));
    }
    let slices = int(v, "/spec/slices").unwrap_or(1);
    if pods.saturating_mul(slices) > DS_PODS_MAX {
        let field = "spec.slices";
        let m = format!("{field}: {slices} slices of {pods} pods is more than {DS_PODS_MAX} pods (the simulator's limit on a DisaggregatedSet)");
        return Err((field.into(), m));
    }
    Ok(())
}

/// The grace periods and partitions a patch step's `merge` writes, held to what a manifest's
/// are (the path under `merge`, and what is wrong).
pub fn check_merge_fields(merge: &Value) -> Result<(), (String, String)> {
    walk(merge, &mut Vec::new(), true)
}

/// Fields anywhere in a manifest: grace periods and partitions.
fn walk(v: &Value, path: &mut Vec<String>, partitions: bool) -> Result<(), (String, String)> {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                let at = || path.join(".");
                match (k.as_str(), x.as_i64()) {
                    ("terminationGracePeriodSeconds", Some(g)) => {
                        check_grace(&at(), g).map_err(|m| (at(), m))?
                    }
                    ("partition", Some(p)) if p < 0 && partitions => {
                        return Err((at(), format!("{}: {p} is negative", at())))
                    }
                    _ => walk(x, path, partitions)?,
                }
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                walk(x, path, partitions)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// An LWS's groups and pods: `0 <= replicas <= LWS_REPLICAS_MAX`, `size >= 1`,
/// `replicas * size <= LWS_PODS_MAX`.
fn lws_size(v: &Value) -> Result<(), (String, String)> {
    let replicas = v.pointer("/spec/replicas").and_then(Value::as_i64);
    let size = v
        .pointer("/spec/leaderWorkerTemplate/size")
        .and_then(Value::as_i64);
    let (r, s) = (replicas.unwrap_or(1), size.unwrap_or(1));
    check_lws_counts(r, s)?;
    let template = v.pointer("/spec/leaderWorkerTemplate");
    check_template_weight(LWS_TEMPLATE, r * s, || {
        template.map_or(0, |t| t.to_string().len())
    })
}

/// A StatefulSet's pods times its `spec.template`'s bytes (`TEMPLATE_EXCESS_MAX`); its
/// replicas are left to the API server's validation (at most `STATEFULSET_REPLICAS_MAX`, and
/// not negative), which a run applies.
fn statefulset_weight(v: &Value) -> Result<(), (String, String)> {
    let replicas = v.pointer("/spec/replicas").and_then(Value::as_i64);
    let pods = replicas
        .unwrap_or(1)
        .clamp(0, STATEFULSET_REPLICAS_MAX.into());
    let template = v.pointer("/spec/template");
    check_template_weight(STATEFULSET_TEMPLATE, pods, || {
        template.map_or(0, |t| t.to_string().len())
    })
}

/// The template field `TEMPLATE_EXCESS_MAX` names for an LWS.
pub const LWS_TEMPLATE: &str = "spec.leaderWorkerTemplate";
/// The template field `TEMPLATE_EXCESS_MAX` names for a StatefulSet.
pub const STATEFULSET_TEMPLATE: &str = "spec.template";

/// `TEMPLATE_EXCESS_MAX` for `pods` pods of the template at `field` of `bytes()` bytes
/// (computed only when the pods could reach the limit with a template of the largest size a
/// body may have).
pub fn check_template_weight(
    field: &str,
    pods: i64,
    bytes: impl FnOnce() -> usize,
) -> Result<(), (String, String)> {
    const BODY_BYTES_MAX: i64 = 3 << 20;
    if pods.saturating_mul(BODY_BYTES_MAX) <= TEMPLATE_EXCESS_MAX {
        return Ok(());
    }
    let bytes = i64::try_from(bytes()).unwrap_or(i64::MAX);
    let excess = bytes.saturating_sub(TEMPLATE_FREE_BYTES).max(0);
    if pods.saturating_mul(excess) <= TEMPLATE_EXCESS_MAX {
        return Ok(());
    }
    Err((
        field.into(),
        format!("{field}: {pods} pods of a {bytes}-byte template is over the simulator's limit: pods * (template bytes - {TEMPLATE_FREE_BYTES}) may be at most {TEMPLATE_EXCESS_MAX} (TEMPLATE_EXCESS_MAX; fewer labels and annotations, or fewer pods)"),
    ))
}

/// `lws_size` on the numbers: (the offending field, the message).
pub fn check_lws_counts(r: i64, s: i64) -> Result<(), (String, String)> {
    let field = "spec.replicas";
    if !(0..=LWS_REPLICAS_MAX).contains(&r) {
        return Err((
            field.into(),
            format!("{field}: {r} is out of range: a LeaderWorkerSet has 0..={LWS_REPLICAS_MAX} groups (the simulator's limit)"),
        ));
    }
    let field = "spec.leaderWorkerTemplate.size";
    if s < 1 {
        return Err((
            field.into(),
            format!("{field}: {s} is out of range: at least 1"),
        ));
    }
    if r.saturating_mul(s) > LWS_PODS_MAX {
        return Err((
            field.into(),
            format!("{field}: {r} groups of {s} pods is more than {LWS_PODS_MAX} pods (the simulator's limit on replicas * size)"),
        ));
    }
    Ok(())
}

/// The name of the admission check `serve` adds so that no client takes an LWS past the limits
/// (`install_limits`).
pub const LIMITS_HOOK: &str = "lws-sim-limits";

/// Refuse, after the real webhooks, any LeaderWorkerSet write past the limits (a `/scale`
/// write too, which the webhooks never see): what a scenario
/// file is held to when it loads, `serve`'s clients are held to at run time (403, an
/// admission check's refusal).
pub fn install_limits(api: &mut crate::api::ApiServer) {
    api.add_limit_hook::<lws::api::LeaderWorkerSet>(LIMITS_HOOK, |l, old| {
        // A write that leaves the groups and the template as stored (a status write, a label)
        // has nothing these limits judge: the stored object passed them.
        let same = |o: &lws::api::LeaderWorkerSet| {
            o.spec.replicas == l.spec.replicas
                && o.spec.leader_worker_template == l.spec.leader_worker_template
        };
        if old.is_some_and(same) {
            return Ok(());
        }
        let replicas = l.spec.replicas.unwrap_or(1);
        let size = l.spec.leader_worker_template.size.unwrap_or(1);
        let (r, s) = (i64::from(replicas), i64::from(size));
        check_lws_counts(r, s).map_err(|(_, m)| m.to_string())?;
        let template = &l.spec.leader_worker_template;
        check_template_weight(LWS_TEMPLATE, r * s, || {
            serde_json::to_vec(template).map_or(usize::MAX, |b| b.len())
        })
        .map_err(|(_, m)| m.into())
    });
    // A StatefulSet an LWS's controllers made (owned by the LWS, or by a leader pod) carries
    // that LWS's template, which the check above already held to the limit.
    api.add_limit_hook::<k8s_openapi::api::apps::v1::StatefulSet>(LIMITS_HOOK, |set, old| {
        let same = |o: &k8s_openapi::api::apps::v1::StatefulSet| {
            o.spec.replicas == set.spec.replicas && o.spec.template == set.spec.template
        };
        let of_an_lws = lws::k8s::controller_of(&set.metadata)
            .is_some_and(|o| matches!(o.kind.as_str(), "LeaderWorkerSet" | "Pod"));
        if of_an_lws || old.is_some_and(same) {
            return Ok(());
        }
        let pods = set.spec.replicas.unwrap_or(1).max(0);
        check_template_weight(STATEFULSET_TEMPLATE, pods.into(), || {
            serde_json::to_vec(&set.spec.template).map_or(usize::MAX, |b| b.len())
        })
        .map_err(|(_, m)| m.into())
    });
    // A role scaler's replicas become its role's LeaderWorkerSet's groups.
    api.add_limit_hook::<lws::disagg::api::DisaggregatedSetRoleScaler>(LIMITS_HOOK, |r, _| {
        let groups = i64::from(r.spec.replicas);
        check_lws_counts(groups, 1).map_err(|(_, m)| m.into())
    });
    api.add_limit_hook::<lws::disagg::api::DisaggregatedSet>(LIMITS_HOOK, |d, _| {
        let v = serde_json::to_value(d).expect("objects encode");
        ds_size(&v).map_err(|(_, m)| m.into())
    });
}

#[cfg(test)]
mod step_count_tests {
    use super::steps_over;

    /// The count is read before the steps are built; the line is the first step past it.
    #[test]
    fn steps_past_the_limit_are_counted_before_they_are_built() {
        let text = "name: s\nsteps:\n  - wait: 1s\n  - wait: 2s\n  - {bogus: 1}\n";
        assert_eq!(steps_over(text, 3), None);
        let (line, m) = steps_over(text, 2).expect("over");
        assert_eq!(line, 5);
        assert_eq!(m, "steps: 3 steps, above the limit of 2");
        assert_eq!(steps_over("steps: [", 0), None);
    }
}

#[cfg(test)]
mod ds_tests {
    use super::check_manifest;

    /// Each role of a DisaggregatedSet becomes a LeaderWorkerSet: its template's bytes times
    /// its pods are held to `TEMPLATE_EXCESS_MAX` as a LeaderWorkerSet's are (a role past it
    /// loaded, and its LeaderWorkerSet was refused at every try, without a word).
    #[test]
    fn a_role_with_a_heavy_template_is_refused_naming_the_role() {
        let role = |name: &str, replicas: i64, note: usize| {
            serde_json::json!({"name": name, "spec": {"replicas": replicas, "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"metadata": {"annotations": {"a": "x".repeat(note)}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}}})
        };
        let ds = |heavy: usize| {
            serde_json::json!({"apiVersion": "disaggregatedset.x-k8s.io/v1", "kind": "DisaggregatedSet",
                "metadata": {"name": "d"}, "spec": {"roles": [role("decode", 1, 10), role("prefill", 5000, heavy)]}})
        };
        assert!(check_manifest(&ds(100), true).is_ok());
        let (field, m) = check_manifest(&ds(20_000), true).expect_err("over the limit");
        assert_eq!(field, "spec.roles[1].spec.leaderWorkerTemplate");
        assert!(m.contains("10000 pods of a"), "{m}");
    }
}
