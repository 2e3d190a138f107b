//! The input contract's limits (README, "Limits"), enforced when a scenario loads so that a run
//! never panics, hangs or blows up on a value that is merely large: every check here names the
//! file, the line (where the file is known) and the field.
//!
//! Fault targets are checked against the pods and nodes that can ever exist in the scenario's
//! world, decided from its manifests alone. A pod that can exist but is absent when the fault
//! fires (not yet created, or deleted) stays a traced skip at run time: faults are timing-dependent.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

use super::manifest::{LoadError, Manifest};
use super::spec::{ScenarioSpec, StepSpec};
use super::step::{NodeSel, Step};
use crate::api::STATEFULSET_REPLICAS_MAX;
use crate::time::{fmt_ms, HORIZON_MS};

/// Nodes in a cluster (`cluster.nodes.count`).
pub const NODE_COUNT_MAX: u32 = 10_000;
/// Groups of one LeaderWorkerSet (`spec.replicas`, in a manifest or a `scale` step): the leader
/// StatefulSet's replica limit.
pub const LWS_REPLICAS_MAX: i64 = STATEFULSET_REPLICAS_MAX as i64;
/// Pods of one LeaderWorkerSet: `replicas * size`.
pub const LWS_PODS_MAX: i64 = 100_000;
/// A grace period in seconds (`gracePeriodSeconds`, `terminationGracePeriodSeconds`): the horizon.
pub const GRACE_SECONDS_MAX: i64 = (HORIZON_MS / 1000) as i64;
/// Bytes of a scenario or manifest file.
pub const FILE_BYTES_MAX: u64 = 16 << 20;
/// Steps of one scenario.
pub const STEP_COUNT_MAX: usize = 1_000_000;

/// Where the parts of a scenario file are (1-based lines; empty for a spec held in memory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecLines {
    pub steps: Vec<usize>,
    pub invariants: Option<usize>,
    pub expect: BTreeMap<String, usize>,
    pub reconciler: Option<usize>,
    pub nodes: Option<usize>,
}

#[derive(Deserialize)]
struct RawController {
    reconciler: Option<Spanned<IgnoredAny>>,
}

#[derive(Deserialize)]
struct RawCluster {
    nodes: Option<Spanned<IgnoredAny>>,
}

#[derive(Deserialize)]
struct RawLines {
    #[serde(default)]
    steps: Vec<Spanned<IgnoredAny>>,
    invariants: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    expect: BTreeMap<String, Spanned<IgnoredAny>>,
    controller: Option<RawController>,
    cluster: Option<RawCluster>,
}

impl SpecLines {
    /// The lines of a scenario file that already parsed as a spec (anything odd: no lines).
    pub fn of(text: &str) -> SpecLines {
        let Ok(raw) = serde_saphyr::from_str_with_options::<RawLines>(text, super::yaml_options())
        else {
            return SpecLines::default();
        };
        let line = |s: &Spanned<IgnoredAny>| usize::try_from(s.referenced.line()).ok();
        SpecLines {
            steps: raw.steps.iter().map(|s| line(s).unwrap_or(0)).collect(),
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
            nodes: raw.cluster.and_then(|c| c.nodes).as_ref().and_then(line),
        }
    }

    pub fn step(&self, i: usize) -> Option<usize> {
        self.steps.get(i).copied().filter(|l| *l > 0)
    }
}

/// A DNS-1123 subdomain (object and node names): lowercase alphanumerics, `-` and `.`, at most
/// 253 characters, starting and ending alphanumeric (Kubernetes' `IsDNS1123Subdomain`).
pub fn is_dns_subdomain(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 253
        && s.chars().all(|c| alnum(c) || c == '-' || c == '.')
        && s.starts_with(alnum)
        && s.ends_with(alnum)
}

/// A DNS-1123 label (namespaces): as a subdomain without `.`, at most 63 characters.
pub fn is_dns_label(s: &str) -> bool {
    is_dns_subdomain(s) && s.len() <= 63 && !s.contains('.')
}

fn name_error(what: &str, v: &str) -> String {
    format!(
        "{what}: {v:?} is not a valid name (DNS-1123: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)"
    )
}

fn check_name(what: &str, v: &str) -> Result<(), String> {
    if is_dns_subdomain(v) {
        Ok(())
    } else {
        Err(name_error(what, v))
    }
}

fn check_namespace(what: &str, v: &Option<String>) -> Result<(), String> {
    match v {
        Some(n) if !is_dns_label(n) => Err(format!(
            "{what} {n:?} is not a valid namespace (DNS-1123 label: lowercase letters, digits and '-', at most 63 characters)"
        )),
        _ => Ok(()),
    }
}

fn check_grace(what: &str, g: i64) -> Result<(), String> {
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
/// (dotted) and what is wrong.
pub fn check_manifest(value: &Value) -> Result<(), (String, String)> {
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
    walk(value, &mut Vec::new())?;
    if value.get("kind").and_then(Value::as_str) == Some("LeaderWorkerSet") {
        lws_size(value)?;
    }
    Ok(())
}

/// Fields anywhere in a manifest: grace periods and partitions.
fn walk(v: &Value, path: &mut Vec<String>) -> Result<(), (String, String)> {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                let at = || path.join(".");
                match (k.as_str(), x.as_i64()) {
                    ("terminationGracePeriodSeconds", Some(g)) => {
                        check_grace(&at(), g).map_err(|m| (at(), m))?
                    }
                    ("partition", Some(p)) if p < 0 => {
                        return Err((at(), format!("{}: {p} is negative", at())))
                    }
                    _ => walk(x, path)?,
                }
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                walk(x, path)?;
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

/// The LWSs and bare pods a scenario can ever have: faults may only aim at these.
#[derive(Default)]
struct Population {
    /// (namespace, name) -> (max replicas, max size) over every version applied or scaled to.
    lws: BTreeMap<(String, String), (i64, i64)>,
    pods: BTreeSet<(String, String)>,
    replacements: usize,
}

fn ns_of(m: &Option<String>) -> String {
    m.clone().unwrap_or_else(|| "default".into())
}

impl Population {
    fn add(&mut self, m: &Manifest) {
        match m {
            Manifest::LeaderWorkerSet(l) => {
                let key = (ns_of(&l.metadata.namespace), m.name());
                let r = i64::from(l.spec.replicas.unwrap_or(1));
                let s = i64::from(l.spec.leader_worker_template.size.unwrap_or(1));
                self.grow(key, r, s);
            }
            Manifest::Pod(p) => {
                self.pods.insert((ns_of(&p.metadata.namespace), m.name()));
            }
            _ => {}
        }
    }

    fn grow(&mut self, key: (String, String), r: i64, s: i64) {
        let e = self.lws.entry(key).or_insert((0, 0));
        *e = (e.0.max(r), e.1.max(s));
    }

    fn of(manifests: &[(String, Vec<Manifest>)], steps: &[Step]) -> Population {
        let mut p = Population::default();
        manifests.iter().flat_map(|(_, m)| m).for_each(|m| p.add(m));
        for s in steps {
            let s = match s {
                Step::Rejected { step, .. } => step.as_ref(),
                s => s,
            };
            match s {
                Step::Apply { objects, .. } => objects.iter().for_each(|m| p.add(m)),
                Step::Scale {
                    namespace,
                    lws,
                    replicas,
                } => p.grow((namespace.clone(), lws.clone()), i64::from(*replicas), 0),
                Step::Patch {
                    kind,
                    namespace,
                    name,
                    merge,
                } if kind.as_str() == "LeaderWorkerSet" => {
                    let n = |ptr: &str| merge.pointer(ptr).and_then(Value::as_i64).unwrap_or(0);
                    let (r, s) = (n("/spec/replicas"), n("/spec/leaderWorkerTemplate/size"));
                    p.grow((namespace.clone(), name.clone()), r, s);
                }
                Step::DrainNode { replace: true, .. } => p.replacements += 1,
                _ => {}
            }
        }
        p
    }

    /// Can a pod of this name ever exist in `namespace`?
    fn pod_can_exist(&self, namespace: &str, pod: &str) -> bool {
        if self
            .pods
            .contains(&(namespace.to_string(), pod.to_string()))
        {
            return true;
        }
        let index = |s: &str| s.parse::<i64>().ok().filter(|n| n.to_string() == s);
        self.lws.iter().any(|((ns, name), &(r, size))| {
            let Some(rest) = pod
                .strip_prefix(name.as_str())
                .and_then(|r| r.strip_prefix('-'))
            else {
                return false;
            };
            if ns != namespace {
                return false;
            }
            let mut parts = rest.split('-');
            let g = parts.next().and_then(index);
            let w = parts.next().map(index);
            let ok_group = g.is_some_and(|g| g < r);
            match (w, parts.next()) {
                (None, None) => ok_group,
                (Some(Some(w)), None) => ok_group && (1..size).contains(&w),
                _ => false,
            }
        })
    }

    fn pod_choices(&self, namespace: &str) -> String {
        let mut out: Vec<String> = self
            .lws
            .iter()
            .filter(|((ns, _), _)| ns == namespace)
            .map(|((_, n), (r, s))| {
                format!("{n}-<g> and {n}-<g>-<w> with 0 <= g < {r}, 1 <= w < {s}")
            })
            .collect();
        out.extend(
            self.pods
                .iter()
                .filter(|(ns, _)| ns == namespace)
                .map(|(_, n)| n.clone()),
        );
        if out.is_empty() {
            return format!("none: no LeaderWorkerSet or Pod manifest in namespace {namespace:?}");
        }
        out.join("; ")
    }
}

/// One step's fields, checked; `Err` is (field under the step, message).
fn check_step(
    spec: &StepSpec,
    step: &Step,
    pop: &Population,
    nodes: u32,
) -> Result<(), (String, String)> {
    let key = spec.key();
    let f = |field: &str| format!("{key}.{field}");
    let at_least_one = |field: &str, n: Option<u64>| match n {
        Some(0) => Err((
            f(field),
            format!("{}: must be at least 1 (1 = the next)", f(field)),
        )),
        _ => Ok(()),
    };
    if let (StepSpec::Rejected { step: inner, .. }, Step::Rejected { step: resolved, .. }) =
        (spec, step)
    {
        return check_step(inner, resolved, pop, nodes);
    }
    match spec {
        StepSpec::KillController(k) => at_least_one("afterWrites", k.after_writes)?,
        StepSpec::Resync(r) => at_least_one("afterReconciles", r.after_reconciles)?,
        StepSpec::HoldWatchEvent(h) => at_least_one("nth", Some(h.nth))?,
        StepSpec::StaleRead(s) => at_least_one("atReconcile", Some(s.at_reconcile))?,
        StepSpec::Scale(s) => {
            check_namespace(&f("namespace"), &s.namespace).map_err(|m| (f("namespace"), m))?;
            check_name(&f("lws"), &s.lws).map_err(|m| (f("lws"), m))?;
            let r = i64::from(s.replicas);
            if !(0..=LWS_REPLICAS_MAX).contains(&r) {
                return Err((f("replicas"), format!("{}: {r} is out of range: a LeaderWorkerSet has 0..={LWS_REPLICAS_MAX} groups (the simulator's limit)", f("replicas"))));
            }
            let key = (ns_of(&s.namespace), s.lws.clone());
            let size = pop.lws.get(&key).map_or(1, |e| e.1.max(1));
            if r * size > LWS_PODS_MAX {
                return Err((f("replicas"), format!("{}: {r} groups of {size} pods is more than {LWS_PODS_MAX} pods (the simulator's limit)", f("replicas"))));
            }
        }
        StepSpec::Patch(o) | StepSpec::Delete(o) | StepSpec::Check(o) => {
            check_namespace(&f("namespace"), &o.namespace).map_err(|m| (f("namespace"), m))?;
            check_name(&f("name"), &o.name).map_err(|m| (f("name"), m))?;
        }
        StepSpec::DeletePod(d) => {
            if let Some(g) = d.grace_period_seconds {
                check_grace(&f("gracePeriodSeconds"), g)
                    .map_err(|m| (f("gracePeriodSeconds"), m))?;
            }
        }
        _ => {}
    }
    check_target(key, step, pop, nodes)
}

/// A fault's pod or node must be one the scenario can ever have.
fn check_target(
    key: &str,
    step: &Step,
    pop: &Population,
    nodes: u32,
) -> Result<(), (String, String)> {
    let pod = |field: &str, ns: &str, pod: &str| {
        let field = format!("{key}.{field}");
        check_name(&field, pod).map_err(|m| (field.clone(), m))?;
        check_namespace(&format!("{key}.namespace"), &Some(ns.to_string()))
            .map_err(|m| (format!("{key}.namespace"), m))?;
        if pop.pod_can_exist(ns, pod) {
            return Ok(());
        }
        Err((field.clone(), format!(
            "{field}: no pod {pod:?} can exist in namespace {ns:?} in this scenario; valid pods: {}",
            pop.pod_choices(ns)
        )))
    };
    let node = |sel: &NodeSel| match sel {
        NodeSel::NodeOf { namespace, pod: p } => pod("nodeOf", namespace, p),
        NodeSel::Node(n) => {
            let field = format!("{key}.node");
            check_name(&field, n).map_err(|m| (field.clone(), m))?;
            let index = |s: &str| s.parse::<u64>().ok().filter(|i| i.to_string() == s);
            let ok = match n.strip_prefix("node-r") {
                Some(k) => index(k).is_some_and(|k| k < pop.replacements as u64),
                None => n
                    .strip_prefix("node-")
                    .and_then(index)
                    .is_some_and(|i| i < u64::from(nodes)),
            };
            if ok {
                return Ok(());
            }
            let repl = match pop.replacements {
                0 => String::new(),
                r => format!(", or a replacement node node-r0..node-r{}", r - 1),
            };
            Err((field.clone(), format!(
                "{field}: no node {n:?} can exist in this scenario; valid nodes: node-0..node-{}{repl}",
                nodes.saturating_sub(1)
            )))
        }
    };
    match step {
        Step::CrashContainer { namespace, pod: p } => pod("pod", namespace, p),
        Step::DeletePod {
            namespace, pod: p, ..
        } => pod("pod", namespace, p),
        Step::DrainNode { node: sel, .. }
        | Step::FailNode(sel)
        | Step::Cordon(sel)
        | Step::Uncordon(sel) => node(sel),
        _ => Ok(()),
    }
}

/// Every scenario-level limit and cross-check: node count, steps, the sum of waits, names and
/// fault targets.
pub fn check_scenario(
    file: &str,
    lines: &SpecLines,
    spec: &ScenarioSpec,
    manifests: &[(String, Vec<Manifest>)],
    steps: &[Step],
) -> Result<(), LoadError> {
    let at = |line: Option<usize>, message: String| LoadError {
        file: file.into(),
        line,
        message,
    };
    let nodes = spec.cluster.nodes.as_ref().and_then(|n| n.count);
    if let Some(n) = nodes.filter(|n| *n > NODE_COUNT_MAX) {
        return Err(at(
            lines.nodes,
            format!("cluster.nodes.count: {n} is above the limit of {NODE_COUNT_MAX} nodes"),
        ));
    }
    if steps.len() > STEP_COUNT_MAX {
        return Err(at(
            None,
            format!(
                "steps: {} steps, above the limit of {STEP_COUNT_MAX}",
                steps.len()
            ),
        ));
    }
    let nodes = nodes.unwrap_or(crate::world::ClusterConfig::default().node_count);
    let pop = Population::of(manifests, steps);
    let mut waited: u64 = 0;
    for (i, (s, step)) in spec.steps.iter().zip(steps).enumerate() {
        if let StepSpec::Wait(d) = s {
            waited = waited.saturating_add(d.0);
            if waited > HORIZON_MS {
                return Err(at(lines.step(i), format!(
                    "steps[{i}].wait: the waits so far add up to {}, past the simulated horizon ({})",
                    fmt_ms(waited),
                    fmt_ms(HORIZON_MS)
                )));
            }
        }
        check_step(s, step, &pop, nodes)
            .map_err(|(_, m)| at(lines.step(i), format!("steps[{i}].{m}")))?;
    }
    Ok(())
}
