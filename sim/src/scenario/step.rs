//! The runtime form of a step: kinds resolved, the default namespace filled in, manifests
//! loaded. `Step::resolve` turns each `StepSpec` variant into its `Step` by one function per
//! variant.

use crate::fault::ClusterFault;
use serde_json::Value;

use super::manifest::{self, LoadError, Manifest};
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

/// An object and the partial JSON it must match (`waitFor` and `check` steps).
#[derive(Clone, Debug)]
pub struct ObjectMatch {
    pub kind: KindId,
    pub namespace: String,
    pub name: String,
    /// What the object must match; `None`: the object must be absent.
    pub pattern: Option<Value>,
}

impl ObjectMatch {
    /// Ok when the object exists and matches (or, for `absent`, does not exist); otherwise
    /// the object as found, if at all.
    pub(super) fn matching(&self, api: &ApiServer) -> Result<(), Option<Value>> {
        let found = super::object_json(api, self.kind, &self.namespace, &self.name);
        match (&self.pattern, found) {
            (None, None) => Ok(()),
            (Some(p), Some(o)) if super::subset_match(p, &o) => Ok(()),
            (_, other) => Err(other),
        }
    }

    /// What the step asks for, in words.
    pub fn wanted(&self) -> String {
        match &self.pattern {
            Some(p) => format!("to match {p}"),
            None => "to be absent".into(),
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
        objects: Vec<Manifest>,
    },
    Patch {
        kind: KindId,
        namespace: String,
        name: String,
        merge: Value,
    },
    Scale {
        namespace: String,
        lws: String,
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
    Check(ObjectMatch),
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
    /// A write (`apply`, `patch`, `scale`) that must be rejected with `code` and a message
    /// containing `message`.
    Rejected {
        step: Box<Step>,
        code: u16,
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

pub(super) fn kind_of(file: &str, kind: &str) -> Result<KindId, LoadError> {
    KindId::parse(kind).ok_or_else(|| {
        let all: Vec<&str> = KindId::ALL.iter().map(|k| k.as_str()).collect();
        err(
            file,
            format!("unknown kind {kind:?}; valid kinds: {}", all.join(", ")),
        )
    })
}

/// The `{kind, name, namespace, match}` of a `waitFor` or `check` step.
fn object_match(ctx: &str, step: &str, r: &ObjectRef) -> Result<ObjectMatch, LoadError> {
    let pattern = match (&r.pattern, r.absent) {
        (Some(p), false) => Some(p.clone()),
        (None, true) => None,
        (Some(_), true) => {
            return Err(err(
                ctx,
                format!("{step}: `match` and `absent` exclude each other"),
            ))
        }
        (None, false) => return Err(err(ctx, format!("{step}: `match` is required"))),
    };
    let kind = kind_of(ctx, &r.kind)?;
    Ok(ObjectMatch {
        kind,
        namespace: ns_of_kind(kind, &r.namespace),
        name: r.name.clone(),
        pattern,
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

fn apply(ctx: &str, v: &Value, files: &dyn ManifestFiles) -> Result<Step, LoadError> {
    match v {
        Value::String(p) => {
            let (source, objects) = files.read(p)?;
            Ok(Step::Apply { source, objects })
        }
        Value::Object(_) => Ok(Step::Apply {
            source: format!("{ctx} (inline)"),
            objects: vec![manifest::from_value(ctx, v)?],
        }),
        _ => Err(err(
            ctx,
            "apply: expected a manifest path or an inline object",
        )),
    }
}

fn patch(ctx: &str, p: &ObjectRef) -> Result<Step, LoadError> {
    let merge = p
        .merge
        .clone()
        .ok_or_else(|| err(ctx, "patch: `merge` is required"))?;
    let kind = kind_of(ctx, &p.kind)?;
    Ok(Step::Patch {
        kind,
        namespace: ns_of_kind(kind, &p.namespace),
        name: p.name.clone(),
        merge,
    })
}

fn delete(ctx: &str, p: &ObjectRef) -> Result<Step, LoadError> {
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
                .map_err(|e| err(ctx, format!("waitFor: {e}")))?;
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
            StepSpec::Apply(v) => apply(ctx, v, files)?,
            StepSpec::Patch(p) => patch(ctx, p)?,
            StepSpec::Scale(p) => Step::Scale {
                namespace: ns(&p.namespace),
                lws: p.lws.clone(),
                replicas: p.replicas,
            },
            StepSpec::Delete(p) => delete(ctx, p)?,
            StepSpec::Wait(d) => Step::Wait(d.0),
            StepSpec::WaitFor { target, timeout } => wait_for(ctx, target, *timeout)?,
            StepSpec::Check(r) => Step::Check(object_match(ctx, "check", r)?),
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
                step: Box::new(Step::resolve(ctx, step, files)?),
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
                | Step::Check(_)
                | Step::KillController { .. }
                | Step::Resync { .. }
                | Step::HoldWatchEvent(_)
                | Step::StaleRead(_)
                | Step::Fault(_)
        )
    }
}
