//! The runtime form of a step: kinds resolved, the default namespace filled in, manifests
//! loaded. `Step::resolve` turns each `StepSpec` variant into its `Step` by one function per
//! variant.

use crate::fault::ClusterFault;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

use super::manifest::{self, LoadError};
use super::spec::{self, DeletePodSpec, NodeRef, ObjectRef, StepSpec};
use super::{err, ManifestFiles};
use crate::api::{ApiServer, KindId, Propagation};

#[derive(Clone, Debug)]
pub enum NodeSel {
    Node(String),
    /// The node a pod runs on, the pod looked up in its namespace.
    NodeOf {
        namespace: String,
        pod: String,
    },
}

/// What a `waitFor` or `check` step looks at: one object by name, or the objects of a kind
/// that carry some labels.
#[derive(Clone, Debug)]
pub enum Target {
    Named(String),
    Selected {
        labels: BTreeMap<String, String>,
        /// `None`: at least one.
        count: Option<u32>,
    },
}

/// Whether `v` holds a `{$fieldOf: ...}` anywhere.
fn has_refs(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$fieldOf") || m.values().any(has_refs),
        Value::Array(a) => a.iter().any(has_refs),
        _ => false,
    }
}

/// A pattern with each `{$fieldOf: {kind, name, pointer}}` replaced by the value at the JSON
/// pointer (RFC 6901) of that object, read now in the step's namespace: how a check says "this
/// label equals that object's label".
fn resolve_refs(api: &ApiServer, ns: &str, v: &Value) -> Result<Value, String> {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("$fieldOf") => {
            let r = &m["$fieldOf"];
            let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
            let (kind, name, pointer) = (field("kind"), field("name"), field("pointer"));
            let obj = KindId::parse(kind).and_then(|k| super::object_json(api, k, ns, name));
            let Some(obj) = obj else {
                return Err(format!("$fieldOf: {kind} {name} not found"));
            };
            obj.pointer(pointer)
                .cloned()
                .ok_or_else(|| format!("$fieldOf: {kind} {name} has no field {pointer}"))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, x)| Ok((k.clone(), resolve_refs(api, ns, x)?)))
            .collect::<Result<serde_json::Map<_, _>, String>>()
            .map(Value::Object),
        Value::Array(a) => a
            .iter()
            .map(|x| resolve_refs(api, ns, x))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// The kind a `waitFor` or `check` reads: one of the API server's stores, or the Kubernetes
/// Events the controllers recorded (`api/events.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    Api(KindId),
    Event,
}

impl std::fmt::Display for MatchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchKind::Api(k) => write!(f, "{k}"),
            MatchKind::Event => f.write_str("Event"),
        }
    }
}

impl MatchKind {
    pub(super) fn find(self, api: &ApiServer, ns: &str, name: &str) -> Option<Value> {
        match self {
            MatchKind::Api(k) => super::object_json(api, k, ns, name),
            MatchKind::Event => api
                .events
                .list(Some(ns))
                .find(|e| e.metadata.name.as_deref() == Some(name))
                .map(|e| serde_json::to_value(e).expect("events encode")),
        }
    }

    fn select(self, api: &ApiServer, ns: &str, labels: &BTreeMap<String, String>) -> Vec<Value> {
        match self {
            MatchKind::Api(k) => super::objects_json(api, k, ns, labels),
            MatchKind::Event => api
                .events
                .list(Some(ns))
                .filter(|e| {
                    let have = e.metadata.labels.clone().unwrap_or_default();
                    labels.iter().all(|(k, v)| have.get(k) == Some(v))
                })
                .map(|e| serde_json::to_value(e).expect("events encode"))
                .collect(),
        }
    }
}

/// An object (or a set of objects) and the partial JSON it must match (`waitFor` and `check`).
#[derive(Clone, Debug)]
pub struct ObjectMatch {
    pub kind: MatchKind,
    pub namespace: String,
    pub target: Target,
    /// What the object must match; `None`: a named object must be absent (a selected set
    /// counts every object carrying the labels).
    pub pattern: Option<Value>,
    /// Match the object's `/scale` subresource (`autoscaling/v1` Scale) instead of the object.
    pub scale: bool,
    /// The object must carry another UID than when a step last deleted it (the runner fills
    /// `metadata.uid: {$not: OLD}` into the pattern: `ObjectMatch::recreated_since`).
    pub recreated: bool,
}

impl ObjectMatch {
    /// This match with `metadata.uid` required to differ from `old` (the UID a step deleted).
    pub(super) fn recreated_since(&self, old: &str) -> ObjectMatch {
        let mut m = self.clone();
        let mut p = m.pattern.take().unwrap_or_else(|| serde_json::json!({}));
        if let Some(o) = p.as_object_mut() {
            let meta = o.entry("metadata").or_insert_with(|| serde_json::json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("uid".into(), serde_json::json!({"$not": old}));
            }
        }
        m.pattern = Some(p);
        m.recreated = false;
        m
    }

    /// Ok when the step's condition holds; otherwise why not, with the first field that
    /// differs for a named object.
    pub(super) fn matching(&self, api: &ApiServer) -> Result<(), String> {
        // `waitFor` asks after every event: copy the pattern only when it refers elsewhere.
        let pattern = match &self.pattern {
            Some(p) if has_refs(p) => Some(Cow::Owned(resolve_refs(api, &self.namespace, p)?)),
            Some(p) => Some(Cow::Borrowed(p)),
            None => None,
        };
        let pattern = pattern.as_deref();
        match &self.target {
            Target::Named(name) => self.named(api, name, pattern),
            Target::Selected { labels, count } => self.selected(api, labels, *count, pattern),
        }
    }

    fn named(&self, api: &ApiServer, name: &str, p: Option<&Value>) -> Result<(), String> {
        let found = self.kind.find(api, &self.namespace, name);
        let found = match (self.scale, self.kind) {
            (true, MatchKind::Api(k)) => found.map(|o| crate::api::scale::scale_of(k, &o)),
            _ => found,
        };
        let kind = self.kind;
        match (p, found) {
            (None, None) => Ok(()),
            (Some(p), Some(o)) if super::subset_match(p, &o) => Ok(()),
            (Some(p), None) => Err(format!(
                "{kind} {name} does not match {}: not found",
                super::shown(p)
            )),
            (Some(p), Some(o)) => {
                let why = super::first_mismatch(p, &o, "")
                    .unwrap_or_else(|| "no field differs (a number compared as a float)".into());
                Err(format!(
                    "{kind} {name} does not match {}: {why}",
                    super::shown(p)
                ))
            }
            (None, Some(_)) => Err(format!("{kind} {name} exists; the step wants it absent")),
        }
    }

    fn selected(
        &self,
        api: &ApiServer,
        labels: &BTreeMap<String, String>,
        count: Option<u32>,
        pattern: Option<&Value>,
    ) -> Result<(), String> {
        let found = self.kind.select(api, &self.namespace, labels);
        let names: Vec<String> = found
            .iter()
            .filter(|o| pattern.is_none_or(|p| super::subset_match(p, o)))
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        let n = u32::try_from(names.len()).unwrap_or(u32::MAX);
        let ok = match count {
            Some(want) => n == want,
            None => n > 0,
        };
        if ok {
            return Ok(());
        }
        let shown: Vec<&str> = names.iter().take(10).map(|s| s.as_str()).collect();
        let more = if names.len() > 10 { ", ..." } else { "" };
        let of = match (self.pattern.is_some(), labels.is_empty()) {
            (false, _) => String::new(),
            (true, true) => format!(" of {}", found.len()),
            (true, false) => format!(" of {} carrying the labels", found.len()),
        };
        let listed = if names.is_empty() {
            String::new()
        } else {
            format!(" ({}{more})", shown.join(", "))
        };
        let want = match count {
            Some(w) => format!("wanted exactly {w}"),
            None => "wanted at least one".into(),
        };
        Err(format!(
            "{}: found {n}{listed}{of}, {want}",
            self.describe()
        ))
    }

    /// The step's target in words: `Pod vllm-0`, `Services with {..} matching {..}`.
    pub fn describe(&self) -> String {
        match &self.target {
            Target::Named(name) => format!("{} {name}", self.kind),
            Target::Selected { labels, .. } => {
                let mut s = format!("{}s", self.kind);
                if !labels.is_empty() {
                    s += &format!(" labelled {}", serde_json::json!(labels));
                }
                if let Some(p) = &self.pattern {
                    s += &format!(" matching {}", super::shown(p));
                }
                s
            }
        }
    }

    /// What the step asks for, in words.
    pub fn wanted(&self) -> String {
        match (&self.target, &self.pattern) {
            (Target::Named(_), Some(p)) => format!("to match {}", super::shown(p)),
            (Target::Named(_), None) => "to be absent".into(),
            (Target::Selected { count: Some(n), .. }, _) => format!("to number {n}"),
            (Target::Selected { count: None, .. }, _) => "to number at least one".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub enum WaitTarget {
    Available,
    RolloutComplete,
    Object(ObjectMatch),
}

#[derive(Clone, Debug)]
pub enum Step {
    Apply {
        source: String,
        objects: super::Manifests,
    },
    Patch {
        kind: KindId,
        namespace: String,
        name: String,
        merge: Value,
        /// The status subresource instead of the object.
        status: bool,
    },
    Scale {
        kind: KindId,
        namespace: String,
        name: String,
        replicas: i32,
    },
    Delete {
        kind: KindId,
        namespace: String,
        name: String,
        propagation: Option<Propagation>,
    },
    Wait(u64),
    WaitFor {
        target: WaitTarget,
        timeout_ms: u64,
    },
    Check {
        what: ObjectMatch,
        /// Stay true this long after the step (0: only at the step's instant).
        holds_ms: u64,
    },
    KillController {
        after_writes: Option<u64>,
    },
    Resync {
        after_reconciles: Option<u64>,
    },
    /// Explore's unobserved-state pattern: hold back the N-th watch event to the controller
    /// until the next event of the same object.
    HoldWatchEvent(u64),
    /// Explore's stale-state pattern: the N-th reconcile reads each object's previous version.
    StaleRead(u64),
    DrainNode {
        node: NodeSel,
        replace: bool,
    },
    FailNode(NodeSel),
    Cordon(NodeSel),
    Uncordon(NodeSel),
    CrashContainer {
        namespace: String,
        pod: String,
    },
    DeletePod {
        namespace: String,
        pod: String,
        grace_period_seconds: Option<i64>,
    },
    /// A fault the world injects on its own (`fault.rs`).
    Fault(ClusterFault),
    /// A write (`apply`, `patch`, `scale`) that must be rejected with `code` (any error
    /// status when absent) and a message containing `message`.
    Rejected {
        step: Box<Step>,
        code: Option<u16>,
        message: String,
    },
}

fn ns(n: &Option<String>) -> String {
    n.clone().unwrap_or_else(|| "default".into())
}

/// The namespace a step addresses `kind` in: none for a cluster-scoped kind (a Node), whatever
/// the step says, as kubectl ignores `--namespace` for those.
fn ns_of_kind(kind: KindId, n: &Option<String>) -> String {
    if kind.namespaced() {
        ns(n)
    } else {
        String::new()
    }
}

/// `scale`: `{lws, replicas}`, or `{kind, name, replicas}` for any kind with a `/scale`
/// subresource (the write `kubectl scale` makes).
fn scale(ctx: &str, p: &spec::ScaleSpec) -> Result<Step, LoadError> {
    let (kind, name) = match (&p.lws, &p.kind, &p.name) {
        (Some(lws), None, None) => (KindId::LeaderWorkerSet, lws.clone()),
        (None, Some(kind), Some(name)) => (kind_of(ctx, kind)?, name.clone()),
        _ => {
            let m = "scale: give `lws`, or `kind` and `name` (not both forms)";
            return Err(err(ctx, m.to_string()));
        }
    };
    if !matches!(
        kind,
        KindId::LeaderWorkerSet | KindId::StatefulSet | KindId::DisaggregatedSetRoleScaler
    ) {
        let m = format!("scale: kind {kind} has no /scale subresource (LeaderWorkerSet, StatefulSet and DisaggregatedSetRoleScaler have)");
        return Err(err(ctx, m));
    }
    Ok(Step::Scale {
        kind,
        namespace: ns(&p.namespace),
        name,
        replicas: p.replicas,
    })
}

pub(super) fn kind_of(file: &str, kind: &str) -> Result<KindId, LoadError> {
    kind_among(file, kind, &[])
}

/// `kind_of`, where the step also takes the kinds `also` (listed in the error).
fn kind_among(file: &str, kind: &str, also: &[&str]) -> Result<KindId, LoadError> {
    KindId::parse(kind).ok_or_else(|| {
        let mut all: Vec<&str> = KindId::ALL.iter().map(|k| k.as_str()).collect();
        all.extend_from_slice(also);
        err(
            file,
            format!("unknown kind {kind:?}; valid kinds: {}", all.join(", ")),
        )
    })
}

/// The `{kind, name, namespace, match}` of a `waitFor` or `check` step, or without `name`
/// its `{kind, selector, count, match}`.
/// The operators a `match` takes.
const MATCH_OPERATORS: [&str; 4] = ["$exists", "$not", "$fieldOf", "$contains"];

/// Where `v` holds a key of a `match` operator, as a path under `path`: such a map in a write
/// is a mistake for a `match`.
fn match_operator_at(v: &Value, path: &str) -> Option<String> {
    match v {
        Value::Object(m) => m.iter().find_map(|(k, x)| {
            let at = format!("{path}.{k}");
            if MATCH_OPERATORS.contains(&k.as_str()) {
                return Some(at);
            }
            match_operator_at(x, &at)
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| match_operator_at(x, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The `$` operators of a `match` (`$exists`, `$not`, `$fieldOf`), checked at load: each alone
/// in its map and well formed. A misspelt one (`$exits`) was a literal key that never matched,
/// or under `$not` always did: a verdict decided by a typo.
fn check_operators(v: &Value, path: &str) -> Result<(), String> {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let at = format!("{path}.{k}");
                if !k.starts_with('$') {
                    check_operators(x, &at)?;
                    continue;
                }
                if m.len() != 1 {
                    return Err(format!("{at}: an operator stands alone in its map"));
                }
                match k.as_str() {
                    "$exists" if x.is_boolean() => {}
                    "$exists" => return Err(format!("{at}: must be true or false")),
                    "$not" => check_operators(x, &at)?,
                    "$fieldOf" => check_field_of(x, &at)?,
                    "$contains" if x.is_string() => {}
                    "$contains" => return Err(format!("{at}: must be a string")),
                    other => {
                        return Err(format!(
                            "{at}: unknown operator {other:?}; known: {}",
                            MATCH_OPERATORS.join(", ")
                        ))
                    }
                }
            }
            Ok(())
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_operators(x, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

/// A `match` is a map of the object's fields: an operator in its place (`match: {$exists:
/// false}`) would be read as a field of that name and decide the verdict without a word.
/// Absence of the object is `absent: true`; an operator goes under the field it tests.
fn check_whole_object(p: &Value) -> Result<(), String> {
    let Some(m) = p.as_object() else {
        return Err("match: must be a map of the object's fields".into());
    };
    match m.keys().find(|k| k.starts_with('$')) {
        Some(k) => Err(format!(
            "match.{k}: an operator tests a field, not the whole object: put it under the field (match: {{metadata: {{deletionTimestamp: {{{k}: ...}}}}}}), or ask for a missing object with `absent: true`"
        )),
        None => Ok(()),
    }
}

/// `{$fieldOf: {kind, name, pointer}}`: a kind the API serves, a name, a JSON pointer.
fn check_field_of(v: &Value, at: &str) -> Result<(), String> {
    let Some(m) = v.as_object() else {
        return Err(format!("{at}: must be {{kind, name, pointer}}"));
    };
    if let Some(k) = m
        .keys()
        .find(|k| !["kind", "name", "pointer"].contains(&k.as_str()))
    {
        return Err(format!(
            "{at}: unknown field {k:?}; known: kind, name, pointer"
        ));
    }
    if let Some((k, _)) = m.iter().find(|(_, v)| !v.is_string()) {
        return Err(format!(
            "{at}.{k}: must be a string (a `$fieldOf` does not nest)"
        ));
    }
    let field = |k: &str| m.get(k).and_then(Value::as_str);
    let kind = field("kind").unwrap_or("");
    if KindId::parse(kind).is_none() {
        return Err(format!(
            "{at}.kind: {kind:?} is not a kind the API server serves"
        ));
    }
    if field("name").is_none_or(str::is_empty) {
        return Err(format!("{at}.name: required"));
    }
    match field("pointer") {
        Some(p) if !p.is_empty() && !p.starts_with('/') => Err(format!(
            "{at}.pointer: {p:?} is not a JSON pointer (RFC 6901: it starts with '/')"
        )),
        Some(p) if bad_escape(p) => Err(format!(
            "{at}.pointer: {p:?} is not a JSON pointer (RFC 6901: '~' is written '~0' and '/' in a name '~1')"
        )),
        Some(_) => Ok(()),
        None => Err(format!("{at}.pointer: required")),
    }
}

/// A `~` not followed by `0` or `1`, which RFC 6901 does not allow in a pointer.
fn bad_escape(pointer: &str) -> bool {
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return true;
        }
    }
    false
}

fn object_match(ctx: &str, step: &str, r: &ObjectRef) -> Result<ObjectMatch, LoadError> {
    if r.merge.is_some() || r.propagation.is_some() {
        let m = format!("{step}: `merge` belongs to `patch`, `propagation` to `delete`");
        return Err(err(ctx, m));
    }
    if let Some(p) = &r.pattern {
        check_whole_object(p).map_err(|m| err(ctx, format!("{step}: {m}")))?;
        check_operators(p, "match").map_err(|m| err(ctx, format!("{step}: {m}")))?;
    }
    let (kind, namespace) = if r.kind == "Event" {
        (MatchKind::Event, ns(&r.namespace))
    } else {
        let k = kind_among(ctx, &r.kind, &["Event"])?;
        (MatchKind::Api(k), ns_of_kind(k, &r.namespace))
    };
    if r.name.is_empty() {
        if r.subresource.is_some() || r.recreated {
            let m = format!("{step}: `subresource` and `recreated` need `name`");
            return Err(err(ctx, m));
        }
        if r.absent && r.count.is_some() {
            let m = format!("{step}: `count` and `absent` exclude each other (absent is count 0)");
            return Err(err(ctx, m));
        }
        // As a label selector is validated by the API server (no object carries such a label).
        for (k, v) in &r.selector {
            if let Err(m) = crate::api::names::label(k, v) {
                return Err(err(ctx, format!("{step}: selector: {m}")));
            }
        }
        return Ok(ObjectMatch {
            kind,
            namespace,
            target: Target::Selected {
                labels: r.selector.clone(),
                count: if r.absent { Some(0) } else { r.count },
            },
            pattern: r.pattern.clone(),
            scale: false,
            recreated: false,
        });
    }
    if !r.selector.is_empty() || r.count.is_some() {
        let m = format!("{step}: `selector` and `count` count objects; they exclude `name`");
        return Err(err(ctx, m));
    }
    let scale = match (r.subresource.as_deref(), kind) {
        (None, _) => false,
        (
            Some("scale"),
            MatchKind::Api(
                KindId::LeaderWorkerSet | KindId::StatefulSet | KindId::DisaggregatedSetRoleScaler,
            ),
        ) => true,
        (Some(x), _) => {
            let m = format!("{step}: subresource {x:?}: only `scale`, of a LeaderWorkerSet, StatefulSet or DisaggregatedSetRoleScaler, is read");
            return Err(err(ctx, m));
        }
    };
    if r.recreated && r.absent {
        return Err(err(
            ctx,
            format!("{step}: `recreated` and `absent` exclude each other"),
        ));
    }
    let pattern = match (&r.pattern, r.absent) {
        (Some(p), false) => Some(p.clone()),
        (None, false) if r.recreated => Some(serde_json::json!({})),
        (None, true) => None,
        (Some(_), true) => {
            return Err(err(
                ctx,
                format!("{step}: `match` and `absent` exclude each other"),
            ))
        }
        (None, false) => return Err(err(ctx, format!("{step}: `match` is required"))),
    };
    Ok(ObjectMatch {
        kind,
        namespace,
        target: Target::Named(r.name.clone()),
        pattern,
        scale,
        recreated: r.recreated,
    })
}

fn node_sel(ctx: &str, r: &NodeRef, step: &str) -> Result<NodeSel, LoadError> {
    match (&r.node, &r.node_of) {
        (Some(n), None) => Ok(NodeSel::Node(n.clone())),
        (None, Some(p)) => Ok(NodeSel::NodeOf {
            namespace: ns(&r.namespace),
            pod: p.clone(),
        }),
        _ => Err(err(
            ctx,
            format!("{step} needs exactly one of `node` or `nodeOf`"),
        )),
    }
}

/// Whether an `apply` string is a manifest written inline (`apply: |` and its documents)
/// rather than a file's name: it has a line break, or reads as YAML (`{...}`, `key: value`),
/// which no file name the README's scenarios use does.
pub fn is_inline_block(s: &str) -> bool {
    s.contains('\n') || s.trim_start().starts_with('{') || s.contains(": ")
}

/// A block's text without the indentation all its lines share (`|2` keeps some), so that
/// its top-level keys start their lines, as in a file.
fn dedent(text: &str) -> String {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let common = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(indent)
        .min()
        .unwrap_or(0);
    if common == 0 {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for l in text.lines() {
        out.push_str(l.get(common.min(indent(l))..).unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The name an inline manifest's objects and errors go by.
pub fn inline_source(ctx: &str) -> String {
    format!("{ctx} (inline)")
}

fn apply(
    ctx: &str,
    v: &Value,
    files: &dyn ManifestFiles,
    counts: manifest::Counts,
) -> Result<Step, LoadError> {
    match v {
        // A string of more than one line is no file name: the manifest itself, as a block.
        Value::String(text) if is_inline_block(text) => {
            let source = inline_source(ctx);
            let objects = files.inline(&source, &dedent(text), counts)?;
            if objects.is_empty() {
                return Err(err(ctx, "apply: the inline manifest has no document"));
            }
            Ok(Step::Apply { source, objects })
        }
        Value::String(p) => {
            let (source, objects) = files.read(p)?;
            Ok(Step::Apply { source, objects })
        }
        Value::Object(_) => Ok(Step::Apply {
            source: format!("{ctx} (inline)"),
            objects: [manifest::from_value(ctx, v, counts)?].into(),
        }),
        _ => Err(err(
            ctx,
            "apply: expected a manifest path, an inline object or an inline YAML block (`apply: |`)",
        )),
    }
}

/// `patch` and `delete` address one object by name, never a selected set.
fn one_object(ctx: &str, step: &str, p: &ObjectRef) -> Result<(), LoadError> {
    if p.name.is_empty() {
        return Err(err(ctx, format!("{step}: `name` is required")));
    }
    if !p.selector.is_empty() || p.count.is_some() || p.absent || p.holds.is_some() || p.recreated {
        let m = format!(
            "{step}: `selector`, `count`, `absent`, `holds` and `recreated` belong to `check` and `waitFor`"
        );
        return Err(err(ctx, m));
    }
    Ok(())
}

fn patch(ctx: &str, p: &ObjectRef) -> Result<Step, LoadError> {
    one_object(ctx, "patch", p)?;
    if p.pattern.is_some() || p.propagation.is_some() {
        let m = "patch: `match` belongs to `check` and `waitFor`, `propagation` to `delete`";
        return Err(err(ctx, m));
    }
    let merge = p
        .merge
        .clone()
        .ok_or_else(|| err(ctx, "patch: `merge` is required"))?;
    if let Some(at) = match_operator_at(&merge, "patch.merge") {
        let m = format!("{at}: a `match` operator; a patch writes literal values (the API server would refuse it as an object where it wants a value)");
        return Err(err(ctx, m));
    }
    let kind = kind_of(ctx, &p.kind)?;
    let status = match p.subresource.as_deref() {
        None => false,
        Some("status") => true,
        Some(x) => {
            let m = format!("patch: subresource {x:?} is not supported (only \"status\"; `scale` writes /scale)");
            return Err(err(ctx, m));
        }
    };
    Ok(Step::Patch {
        kind,
        namespace: ns_of_kind(kind, &p.namespace),
        name: p.name.clone(),
        merge,
        status,
    })
}

fn delete(ctx: &str, p: &ObjectRef) -> Result<Step, LoadError> {
    one_object(ctx, "delete", p)?;
    if p.pattern.is_some() || p.merge.is_some() || p.subresource.is_some() {
        let m = "delete: `match`, `merge` and `subresource` do not apply to a delete";
        return Err(err(ctx, m));
    }
    let propagation = match p.propagation.as_deref() {
        None => None,
        Some(x) => Some(Propagation::parse(x).ok_or_else(|| {
            err(
                ctx,
                format!("delete: propagation {x:?} is not Background, Foreground or Orphan"),
            )
        })?),
    };
    let kind = kind_of(ctx, &p.kind)?;
    Ok(Step::Delete {
        kind,
        namespace: ns_of_kind(kind, &p.namespace),
        name: p.name.clone(),
        propagation,
    })
}

fn wait_for(ctx: &str, target: &Value, timeout: Option<spec::Duration>) -> Result<Step, LoadError> {
    let timeout_ms = timeout
        .ok_or_else(|| err(ctx, "waitFor: `timeout` is required"))?
        .0;
    let target = match target {
        Value::String(t) if t == "available" => WaitTarget::Available,
        Value::String(t) if t == "rolloutComplete" => WaitTarget::RolloutComplete,
        Value::Object(o) => {
            let r: ObjectRef = serde_json::from_value(Value::Object(o.clone()))
                .map_err(|e| {
                    let field = spec::culprit::<ObjectRef>(o, |v| v);
                    err(ctx, format!("waitFor{field}: {e}"))
                })?;
            if r.holds.is_some() {
                let m = "waitFor: `holds` belongs to `check` (a waitFor ends when its condition is first met)";
                return Err(err(ctx, m));
            }
            WaitTarget::Object(object_match(ctx, "waitFor", &r)?)
        }
        other => {
            return Err(err(
                ctx,
                format!(
                    "waitFor: expected available, rolloutComplete or {{kind, name, match}}, got {other}"
                ),
            ))
        }
    };
    Ok(Step::WaitFor { target, timeout_ms })
}

fn delete_pod(p: &DeletePodSpec) -> Step {
    Step::DeletePod {
        namespace: ns(&p.namespace),
        pod: p.pod.clone(),
        grace_period_seconds: p.grace_period_seconds,
    }
}

impl Step {
    /// The runtime step of a step as written; `ctx` names it in errors, `files` reads the
    /// manifests an `apply` names.
    pub fn resolve(ctx: &str, s: &StepSpec, files: &dyn ManifestFiles) -> Result<Step, LoadError> {
        Ok(match s {
            StepSpec::Apply(v) => apply(ctx, v, files, manifest::Counts::Checked)?,
            StepSpec::Patch(p) => patch(ctx, p)?,
            StepSpec::Scale(p) => scale(ctx, p)?,
            StepSpec::Delete(p) => delete(ctx, p)?,
            StepSpec::Wait(d) => Step::Wait(d.0),
            StepSpec::WaitFor { target, timeout } => wait_for(ctx, target, *timeout)?,
            StepSpec::Check(r) => Step::Check {
                what: object_match(ctx, "check", r)?,
                holds_ms: r.holds.map_or(0, |d| d.0),
            },
            StepSpec::KillController(k) => Step::KillController {
                after_writes: k.after_writes,
            },
            StepSpec::Resync(r) => Step::Resync {
                after_reconciles: r.after_reconciles,
            },
            StepSpec::HoldWatchEvent(h) => Step::HoldWatchEvent(h.nth),
            StepSpec::StaleRead(r) => Step::StaleRead(r.at_reconcile),
            StepSpec::DrainNode(r) => Step::DrainNode {
                node: node_sel(ctx, r, "drainNode")?,
                replace: r.replace,
            },
            StepSpec::FailNode(r) => Step::FailNode(node_sel(ctx, r, "failNode")?),
            StepSpec::Cordon(r) => Step::Cordon(node_sel(ctx, r, "cordon")?),
            StepSpec::Uncordon(r) => Step::Uncordon(node_sel(ctx, r, "uncordon")?),
            StepSpec::CrashContainer(p) => Step::CrashContainer {
                namespace: ns(&p.namespace),
                pod: p.pod.clone(),
            },
            StepSpec::DeletePod(p) => delete_pod(p),
            StepSpec::Fault(f) => Step::Fault(f.clone()),
            StepSpec::Rejected { step, error } => Step::Rejected {
                step: Box::new(match &**step {
                    // Its counts may be what the step expects refused (`manifest::Counts`).
                    StepSpec::Apply(v) => apply(ctx, v, files, manifest::Counts::AtRunTime)?,
                    step => Step::resolve(ctx, step, files)?,
                }),
                code: error.code,
                message: error.message.clone(),
            },
        })
    }

    /// Steps after which a quiescence window stays open.
    pub(super) fn is_passive(&self) -> bool {
        matches!(
            self,
            Step::Wait(_)
                | Step::WaitFor { .. }
                | Step::Check { .. }
                | Step::KillController { .. }
                | Step::Resync { .. }
                | Step::HoldWatchEvent(_)
                | Step::StaleRead(_)
                | Step::Fault(_)
        )
    }
}
