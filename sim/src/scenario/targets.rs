//! The scenario-level half of the input contract (README, "Limits"): node and step counts, the
//! sum of the waits, and every step's arguments, including fault targets.
//!
//! Fault targets are checked against the pods and nodes that can ever exist in the scenario's
//! world, decided from its manifests alone. A pod that can exist but is absent when the fault
//! fires (not yet created, or deleted) stays a traced skip at run time: faults are timing-dependent.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::error::LoadError;
use super::limits::{
    check_grace, check_name, check_namespace, SpecLines, LWS_PODS_MAX, LWS_REPLICAS_MAX,
    NODE_COUNT_MAX, NODE_LABEL_EXCESS_MAX, NODE_LABEL_FREE_BYTES, STEP_COUNT_MAX,
};
use super::manifest::{Counts, Manifest};
use super::spec::{NodesSpec, ObjectRef, ScenarioSpec, StepSpec};
use super::step::{NodeSel, Step};
use crate::api::names::{label_value, qualified_name};
use crate::cluster::HOSTNAME_LABEL;
use crate::time::{fmt_ms, HORIZON_MS};

/// The LWSs and bare pods a scenario can ever have: faults may only aim at these.
#[derive(Default)]
struct Population {
    /// (namespace, name) -> (max replicas, max size) over every version applied or scaled to.
    lws: BTreeMap<(String, String), (i64, i64)>,
    /// The LWSs a manifest or an `apply` step creates (`lws` also holds what steps scale).
    created: BTreeSet<(String, String)>,
    pods: BTreeSet<(String, String)>,
    /// DisaggregatedSets: their LWS names carry a revision hash, so any pod named after the set
    /// (`<set>-...`) can exist.
    sets: BTreeSet<(String, String)>,
    /// StatefulSets a manifest or an `apply` step creates: (namespace, name) -> (first
    /// ordinal, most replicas over every version and scale); their pods are `<set>-<ordinal>`.
    stateful_sets: BTreeMap<(String, String), (i64, i64)>,
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
                self.created.insert(key.clone());
                self.grow(key, r, s);
            }
            Manifest::Pod(p) => {
                self.pods.insert((ns_of(&p.metadata.namespace), m.name()));
            }
            Manifest::DisaggregatedSet(d) => {
                self.sets.insert((ns_of(&d.metadata.namespace), m.name()));
            }
            Manifest::StatefulSet(set) => {
                let key = (ns_of(&set.metadata.namespace), m.name());
                let start = set.spec.ordinals.as_ref().and_then(|o| o.start);
                let start = i64::from(start.unwrap_or(0));
                let replicas = set.spec.replicas.unwrap_or(1);
                let e = self.stateful_sets.entry(key).or_insert((start, 0));
                *e = (start, e.1.max(i64::from(replicas)));
            }
            _ => {}
        }
    }

    /// A StatefulSet scaled: its pods up to the new count can exist if the set does.
    fn grow_set(&mut self, key: (String, String), replicas: i64) {
        if let Some(e) = self.stateful_sets.get_mut(&key) {
            e.1 = e.1.max(replicas);
        }
    }

    fn grow(&mut self, key: (String, String), r: i64, s: i64) {
        let e = self.lws.entry(key).or_insert((0, 0));
        *e = (e.0.max(r), e.1.max(s));
    }

    fn of(manifests: &[(String, super::Manifests)], steps: &[Step]) -> Population {
        let mut p = Population::default();
        manifests
            .iter()
            .flat_map(|(_, m)| m.iter())
            .for_each(|m| p.add(m));
        for s in steps {
            // A write the step expects refused changes nothing: it neither creates an LWS nor
            // raises the limits later steps are held to.
            match s {
                Step::Apply { objects, .. } => objects.iter().for_each(|m| p.add(m)),
                Step::Scale {
                    kind: crate::api::KindId::LeaderWorkerSet,
                    namespace,
                    name,
                    replicas,
                } => p.grow((namespace.clone(), name.clone()), i64::from(*replicas), 0),
                Step::Scale {
                    kind: crate::api::KindId::StatefulSet,
                    namespace,
                    name,
                    replicas,
                } => p.grow_set((namespace.clone(), name.clone()), i64::from(*replicas)),
                Step::Patch {
                    kind,
                    namespace,
                    name,
                    merge,
                    status: false,
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

    /// Can an LWS of this name ever exist in `namespace`: created by a manifest or an `apply`
    /// step, or by a DisaggregatedSet (whose LWS names start with the set's)?
    fn lws_can_exist(&self, namespace: &str, name: &str) -> bool {
        let key = (namespace.to_string(), name.to_string());
        self.created.contains(&key) || self.named_after_a_set(namespace, name)
    }

    /// Whether `name` (of an LWS or a pod) starts with `<set>-` for a DisaggregatedSet of
    /// `namespace`: the set's objects carry its name and a revision hash the scenario cannot know.
    fn named_after_a_set(&self, namespace: &str, name: &str) -> bool {
        self.sets.iter().any(|(ns, set)| {
            ns == namespace
                && name
                    .strip_prefix(set.as_str())
                    .is_some_and(|r| r.starts_with('-'))
        })
    }

    fn lws_choices(&self, namespace: &str) -> String {
        let mut out: Vec<String> = self
            .created
            .iter()
            .filter(|(ns, _)| ns == namespace)
            .map(|(_, n)| n.clone())
            .collect();
        out.extend(
            self.sets
                .iter()
                .filter(|(ns, _)| ns == namespace)
                .map(|(_, s)| format!("{s}-<revision>-<role> (DisaggregatedSet {s})")),
        );
        if out.is_empty() {
            return format!(
                "none: no LeaderWorkerSet or DisaggregatedSet in namespace {namespace:?}"
            );
        }
        out.join(", ")
    }

    /// Can a pod of this name ever exist in `namespace`?
    fn pod_can_exist(&self, namespace: &str, pod: &str) -> bool {
        if self
            .pods
            .contains(&(namespace.to_string(), pod.to_string()))
        {
            return true;
        }
        if self.named_after_a_set(namespace, pod) {
            return true;
        }
        let index = |s: &str| s.parse::<i64>().ok().filter(|n| n.to_string() == s);
        let of_a_set = self.stateful_sets.iter().any(|((ns, name), &(start, r))| {
            let ordinal = pod
                .strip_prefix(name.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .and_then(index);
            ns == namespace && ordinal.is_some_and(|o| o >= start && o < start.saturating_add(r))
        });
        if of_a_set {
            return true;
        }
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
            self.stateful_sets
                .iter()
                .filter(|((ns, _), _)| ns == namespace)
                .map(|((_, n), (start, r))| {
                    format!("{n}-<o> with {start} <= o < {}", start.saturating_add(*r))
                }),
        );
        out.extend(
            self.pods
                .iter()
                .filter(|(ns, _)| ns == namespace)
                .map(|(_, n)| n.clone()),
        );
        if out.is_empty() {
            return format!(
                "none: no LeaderWorkerSet, StatefulSet or Pod manifest in namespace {namespace:?}"
            );
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
    counts: Counts,
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
        // What the step expects refused may be the counts (`manifest::Counts::AtRunTime`).
        return check_step(inner, resolved, pop, nodes, Counts::AtRunTime);
    }
    match spec {
        StepSpec::KillController(k) => at_least_one("afterWrites", k.after_writes)?,
        StepSpec::Resync(r) => at_least_one("afterReconciles", r.after_reconciles)?,
        StepSpec::HoldWatchEvent(h) => at_least_one("nth", Some(h.nth))?,
        StepSpec::StaleRead(s) => at_least_one("atReconcile", Some(s.at_reconcile))?,
        StepSpec::Scale(s) => {
            check_namespace(&f("namespace"), &s.namespace).map_err(|m| (f("namespace"), m))?;
            let (field, name) = match (&s.lws, &s.name) {
                (Some(lws), _) => ("lws", lws),
                (None, Some(name)) => ("name", name),
                (None, None) => return Ok(()),
            };
            check_name(&f(field), name).map_err(|m| (f(field), m))?;
            if counts == Counts::AtRunTime {
                // A scale the step expects refused (`replicas: -1`): the API server judges it.
                return Ok(());
            }
            let r = i64::from(s.replicas);
            if !(0..=LWS_REPLICAS_MAX).contains(&r) {
                return Err((f("replicas"), format!("{}: {r} is out of range: a scale step sets 0..={LWS_REPLICAS_MAX} replicas (the simulator's limit)", f("replicas"))));
            }
            let key = (ns_of(&s.namespace), name.clone());
            let size = pop.lws.get(&key).map_or(1, |e| e.1.max(1));
            if r * size > LWS_PODS_MAX {
                return Err((f("replicas"), format!("{}: {r} groups of {size} pods is more than {LWS_PODS_MAX} pods (the simulator's limit)", f("replicas"))));
            }
        }
        StepSpec::Patch(o) | StepSpec::Delete(o) | StepSpec::Check(o) => {
            check_namespace(&f("namespace"), &o.namespace).map_err(|m| (f("namespace"), m))?;
            if !o.name.is_empty() {
                check_name(&f("name"), &o.name).map_err(|m| (f("name"), m))?;
            }
            // Nodes are the scenario's own: a write to one that can never exist is a typo
            // (a `check` may well ask that one does not).
            let writes = matches!(spec, StepSpec::Patch(_) | StepSpec::Delete(_));
            if writes && o.kind == "Node" && counts == Counts::Checked {
                node_can_exist(&f("name"), &o.name, pop, nodes)?;
            }
            if let (StepSpec::Patch(_), Some(merge)) = (spec, &o.merge) {
                if counts == Counts::Checked && !merge.is_object() {
                    // A merge patch that is not a mapping would replace the whole object.
                    let m = format!("{}: expected a mapping of the fields to change", f("merge"));
                    return Err((f("merge"), m));
                }
                if counts == Counts::Checked {
                    // The message starts with the path under `merge`.
                    super::limits::check_merge_fields(merge).map_err(|(at, m)| {
                        (
                            format!("{}.{at}", f("merge")),
                            format!("{}.{m}", f("merge")),
                        )
                    })?;
                }
                if o.kind == "LeaderWorkerSet" && counts == Counts::Checked {
                    check_lws_patch(&f("merge"), merge, o, pop)?;
                }
                if o.kind == "DisaggregatedSetRoleScaler" && counts == Counts::Checked {
                    check_role_scaler_patch(&f("merge"), merge)?;
                }
            }
        }
        StepSpec::DeletePod(d) => {
            if let Some(g) = d.grace_period_seconds {
                check_grace(&f("gracePeriodSeconds"), g)
                    .map_err(|m| (f("gracePeriodSeconds"), m))?;
            }
        }
        _ => {}
    }
    if counts == Counts::Checked {
        lws_written_can_exist(key, spec, step, pop)?;
    }
    check_target(key, step, pop, nodes)
}

/// A `scale`, `patch` or `delete` of an LWS nothing in the scenario creates is a typo: at run
/// time it could only fail with 404. (Under `rejected:` a refusal is what the step asks for.)
fn lws_written_can_exist(
    key: &str,
    spec: &StepSpec,
    step: &Step,
    pop: &Population,
) -> Result<(), (String, String)> {
    let (namespace, name) = match step {
        Step::Scale {
            kind,
            namespace,
            name,
            ..
        }
        | Step::Patch {
            kind,
            namespace,
            name,
            ..
        }
        | Step::Delete {
            kind,
            namespace,
            name,
            ..
        } if kind.as_str() == "LeaderWorkerSet" => (namespace, name),
        _ => return Ok(()),
    };
    if pop.lws_can_exist(namespace, name) {
        return Ok(());
    }
    let field = match spec {
        StepSpec::Scale(s) if s.lws.is_some() => format!("{key}.lws"),
        _ => format!("{key}.name"),
    };
    Err((
        field.clone(),
        format!(
            "{field}: no LeaderWorkerSet {name:?} is created in namespace {namespace:?} by this scenario's manifests or apply steps; valid: {}",
            pop.lws_choices(namespace)
        ),
    ))
}

/// A merge patch of an LWS (or its `/scale`) may not take it past the limits a manifest or a
/// `scale` step is held to: replicas and size as patched, or else as the manifests had them.
fn check_lws_patch(
    field: &str,
    merge: &Value,
    o: &ObjectRef,
    pop: &Population,
) -> Result<(), (String, String)> {
    let at = format!("{field}.spec.replicas");
    let replicas = patched_integer(merge, "/spec/replicas", &at)?;
    let size = patched_integer(
        merge,
        "/spec/leaderWorkerTemplate/size",
        &format!("{field}.spec.leaderWorkerTemplate.size"),
    )?;
    if replicas.is_none() && size.is_none() {
        return Ok(());
    }
    let known = pop.lws.get(&(ns_of(&o.namespace), o.name.clone()));
    let r = replicas.unwrap_or_else(|| known.map_or(1, |e| e.0));
    let s = size.unwrap_or_else(|| known.map_or(1, |e| e.1)).max(1);
    if !(0..=LWS_REPLICAS_MAX).contains(&r) {
        return Err((at.clone(), format!("{at}: {r} is out of range: a LeaderWorkerSet has 0..={LWS_REPLICAS_MAX} groups (the simulator's limit)")));
    }
    if r.saturating_mul(s) > LWS_PODS_MAX {
        // Name the field this patch sets; the other number is the most the scenario gives it.
        let (at, groups) = match replicas {
            Some(_) => (at, "groups"),
            None => (
                format!("{field}.spec.leaderWorkerTemplate.size"),
                "groups (the most this scenario gives it)",
            ),
        };
        return Err((at.clone(), format!("{at}: {r} {groups} of {s} pods is more than {LWS_PODS_MAX} pods (the simulator's limit)")));
    }
    Ok(())
}

/// A merge patch of a DisaggregatedSetRoleScaler sets the groups of its role's LeaderWorkerSet:
/// held to the group limit, as a `scale` step of it is.
fn check_role_scaler_patch(field: &str, merge: &Value) -> Result<(), (String, String)> {
    let at = format!("{field}.spec.replicas");
    match patched_integer(merge, "/spec/replicas", &at)? {
        Some(r) if !(0..=LWS_REPLICAS_MAX).contains(&r) => Err((at.clone(), format!("{at}: {r} is out of range: a role's LeaderWorkerSet has 0..={LWS_REPLICAS_MAX} groups (the simulator's limit)"))),
        _ => Ok(()),
    }
}

/// The integer a merge patch sets at `pointer`, if it sets one there. A number that is not an
/// integer of 64 bits (`1e30`, `18446744073709551616`, `1.5`) is refused here, naming `at`, as
/// the limit it would break: the API server would refuse it only once the run reached the step.
/// Anything else (a string, null) is the API server's to judge at run time.
fn patched_integer(
    merge: &Value,
    pointer: &str,
    at: &str,
) -> Result<Option<i64>, (String, String)> {
    match merge.pointer(pointer) {
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err((
                at.to_string(),
                format!("{at}: {n} is out of range: an integer field of 32 bits"),
            )),
        },
        _ => Ok(None),
    }
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
        NodeSel::Node(n) => node_can_exist(&format!("{key}.node"), n, pop, nodes),
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

/// A node name `field` gives is one that can exist: `node-0` .. `node-<nodes-1>`, or a
/// replacement `node-r<k>` for each `drainNode` with `replace: true`.
fn node_can_exist(
    field: &str,
    n: &str,
    pop: &Population,
    nodes: u32,
) -> Result<(), (String, String)> {
    check_name(field, n).map_err(|m| (field.to_string(), m))?;
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
    Err((
        field.to_string(),
        format!(
            "{field}: no node {n:?} can exist in this scenario; valid nodes: node-0..node-{}{repl}",
            nodes.saturating_sub(1)
        ),
    ))
}

/// Every scenario-level limit and cross-check: node count, steps, the sum of waits, names and
/// fault targets.
pub fn check_scenario(
    file: &str,
    lines: &SpecLines,
    spec: &ScenarioSpec,
    manifests: &[(String, super::Manifests)],
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
    if let Some(v) = &spec.cluster.kubernetes_version {
        if let Err(m) = super::kubernetes_minor(v) {
            return Err(at(
                lines.kubernetes_version,
                format!("cluster.kubernetesVersion: {m}"),
            ));
        }
    }
    if let Some(n) = &spec.cluster.nodes {
        check_nodes(n).map_err(|(domain, m)| {
            let line = domain.map_or(lines.node_labels(), |i| lines.node_domain(i));
            at(line, format!("cluster.nodes.{m}"))
        })?;
    }
    if steps.len() > STEP_COUNT_MAX {
        return Err(at(
            lines.steps.get(STEP_COUNT_MAX).copied().filter(|l| *l > 0),
            format!(
                "steps: {} steps, above the limit of {STEP_COUNT_MAX}",
                steps.len()
            ),
        ));
    }
    let nodes = nodes.unwrap_or(crate::world::ClusterConfig::default().node_count);
    let pop = Population::of(manifests, steps);
    let mut waited: u64 = 0;
    let mut deleted: BTreeSet<(String, String, String)> = BTreeSet::new();
    for (i, (s, step)) in spec.steps.iter().zip(steps).enumerate() {
        note_deleted(s, &mut deleted);
        if let Some(m) = recreated_without_delete(s, &deleted) {
            return Err(at(lines.step(i), format!("steps[{i}].{m}")));
        }
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
        check_step(s, step, &pop, nodes, Counts::Checked)
            .map_err(|(_, m)| at(lines.step(i), format!("steps[{i}].{m}")))?;
    }
    Ok(())
}

/// The nodes' labels are valid labels, and each topology domain key is a label key that no
/// other entry and no plain label sets, with at least one node per domain.
/// An error names the domain entry it is about (`None`: the labels).
fn check_nodes(n: &NodesSpec) -> Result<(), (Option<usize>, String)> {
    let bytes: u64 = n
        .labels
        .iter()
        .map(|(k, v)| (k.len() + v.len()) as u64)
        .sum();
    let count = u64::from(
        n.count
            .unwrap_or(crate::world::ClusterConfig::default().node_count),
    );
    let excess = bytes.saturating_sub(NODE_LABEL_FREE_BYTES);
    if count.saturating_mul(excess) > NODE_LABEL_EXCESS_MAX {
        return Err((
            None,
            format!("labels: {count} nodes of {bytes} bytes of labels is over the simulator's limit: count * (label bytes - {NODE_LABEL_FREE_BYTES}) may be at most {NODE_LABEL_EXCESS_MAX} (NODE_LABEL_EXCESS_MAX)"),
        ));
    }
    for (k, v) in &n.labels {
        qualified_name(k).map_err(|m| (None, format!("labels: Invalid value: {k:?}: {m}")))?;
        label_value(v).map_err(|m| (None, format!("labels.{k}: Invalid value: {v:?}: {m}")))?;
        if k == HOSTNAME_LABEL {
            return Err((
                None,
                format!("labels.{k}: is set by each node to its own name"),
            ));
        }
    }
    let mut keys = BTreeSet::new();
    for (i, d) in n.domains.iter().enumerate() {
        let at = |m: String| (Some(i), format!("domains[{i}].{m}"));
        qualified_name(&d.key).map_err(|m| at(format!("key: Invalid value: {:?}: {m}", d.key)))?;
        if d.key == HOSTNAME_LABEL || n.labels.contains_key(&d.key) || !keys.insert(&d.key) {
            return Err(at(format!(
                "key: {:?} is already set on the nodes (by a label, another domain or the node itself)",
                d.key
            )));
        }
        if d.nodes_per_domain == 0 {
            return Err(at("nodesPerDomain: must be at least 1".into()));
        }
    }
    Ok(())
}

/// A name standing for every object of its kind and namespace in `note_deleted`'s set (no
/// object is named `*`).
const ANY_NAME: &str = "*";

/// The (kind, namespace, name) a `delete` or `deletePod` step deletes; a `crashContainer` step
/// may replace any pod or StatefulSet of its namespace (a group recreated after it).
fn note_deleted(s: &StepSpec, deleted: &mut BTreeSet<(String, String, String)>) {
    let ns = |n: &Option<String>| n.clone().unwrap_or_else(|| "default".into());
    match s {
        StepSpec::CrashContainer(p) => {
            for kind in ["Pod", "StatefulSet"] {
                deleted.insert((kind.into(), ns(&p.namespace), ANY_NAME.into()));
            }
        }
        StepSpec::Delete(o) => {
            deleted.insert((o.kind.clone(), ns(&o.namespace), o.name.clone()));
        }
        StepSpec::DeletePod(d) => {
            deleted.insert(("Pod".into(), ns(&d.namespace), d.pod.clone()));
        }
        _ => {}
    }
}

/// A `check`/`waitFor` with `recreated: true` whose object no earlier step deletes: the
/// message, else `None`.
fn recreated_without_delete(
    s: &StepSpec,
    deleted: &BTreeSet<(String, String, String)>,
) -> Option<String> {
    // A `waitFor` without one compares with the object it finds when it starts.
    let StepSpec::Check(o) = s else {
        return None;
    };
    let ns = o.namespace.clone().unwrap_or_else(|| "default".into());
    let known = deleted.contains(&(o.kind.clone(), ns.clone(), o.name.clone()))
        || deleted.contains(&(o.kind.clone(), ns, ANY_NAME.into()));
    (o.recreated && !known).then(|| {
        format!(
            "check.recreated: no earlier `delete`, `deletePod` or `crashContainer` step deletes {} {} (a `waitFor` can wait for it to be replaced)",
            o.kind, o.name
        )
    })
}
