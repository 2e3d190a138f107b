//! `/api/v1/namespaces[/NAME]`: the namespaces of the simulated cluster. The simulation has no
//! Namespace objects (every namespace exists implicitly, as its objects name it), so these are
//! derived: the four a cluster starts with, every namespace an object lives in, and those a
//! client created here. `get`, `list` (with kubectl's table: NAME, STATUS, AGE; a label or
//! `metadata.name` selector), `create` and `patch` of its labels and annotations (what `kubectl
//! apply` and `kubectl label` send), and `delete` (Terminating, then gone: `core.rs`); no
//! watch or update (405). A namespace is Active
//! from the simulation's start, or from its creation here.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{json, Value};

use super::query::{failure, Reply};
use super::table::{col, of_rows, wants_table};
use crate::api::{with_kind, ApiServer, Kind, KindId, Selector};
use crate::time::human_duration;

/// The namespaces a cluster has before anyone creates one.
const BUILT_IN: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

/// What clients wrote: each namespace created or patched here, with when it appeared and its
/// labels and annotations.
#[derive(Default)]
pub struct Created(BTreeMap<String, Meta>);

#[derive(Clone, Default)]
pub struct Meta {
    created_ms: u64,
    /// When a client deleted it: Terminating since.
    deleting_ms: Option<u64>,
    labels: serde_json::Map<String, Value>,
    annotations: serde_json::Map<String, Value>,
}

fn object(name: &str, m: &Meta) -> Value {
    let mut labels = m.labels.clone();
    labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    let mut meta = json!({
        "name": name,
        "creationTimestamp": crate::time::to_time(m.created_ms),
        "labels": labels,
    });
    if !m.annotations.is_empty() {
        meta["annotations"] = json!(m.annotations);
    }
    let mut status = json!({"phase": "Active"});
    if let Some(at) = m.deleting_ms {
        meta["deletionTimestamp"] = json!(crate::time::to_time(at));
        status = json!({"phase": "Terminating"});
    }
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta,
        "spec": {"finalizers": ["kubernetes"]},
        "status": status,
    })
}

/// The namespaces `NamespaceLifecycle` never lets go (`immortalNamespaces`).
const IMMORTAL: [&str; 3] = ["default", "kube-public", "kube-system"];

/// Whether any namespaced object lives in `ns`.
fn holds_objects(api: &ApiServer, ns: &str) -> bool {
    KindId::ALL.iter().filter(|k| k.namespaced()).any(
        |kind| with_kind!(*kind, K => !api.list::<K>(Some(ns), &Selector::everything()).is_empty()),
    )
}

/// The namespaced objects in `ns`, by kind, as the namespace controller deletes them.
pub fn contents(api: &ApiServer, ns: &str) -> Vec<(KindId, String)> {
    let mut out = Vec::new();
    for kind in KindId::ALL.iter().filter(|k| k.namespaced()) {
        with_kind!(*kind, K => {
            for o in api.list::<K>(Some(ns), &Selector::everything()) {
                out.push((*kind, o.meta().name.clone().unwrap_or_default()));
            }
        });
    }
    out
}

/// A namespace body (or a patch's result) decodes as a v1 Namespace, as the apiserver's
/// decoder requires: another kind or version, a field of the wrong type (`labels: "x"`), or a
/// patch renaming it, is a 400.
fn decodes(doc: &Value, name: Option<&str>) -> Result<(), Reply> {
    let bad = |m: String| Err(failure(400, "BadRequest", m));
    super::ops::expect_type(doc, "Namespace", Some("v1"))?;
    if let Err(e) = serde_json::from_value::<k8s_openapi::api::core::v1::Namespace>(doc.clone()) {
        return bad(format!("error decoding the Namespace: {e}"));
    }
    let named = doc.pointer("/metadata/name").and_then(Value::as_str);
    match (name, named) {
        (Some(url), Some(n)) if n != url => bad(format!(
            "the name of the object ({n}) does not match the name on the URL ({url})"
        )),
        _ => Ok(()),
    }
}

/// The labels and annotations of a namespace body, validated as every object's are
/// (`names::validate_labels_and_annotations`): a 422.
fn valid_metadata(name: &str, doc: &Value) -> Result<(), Reply> {
    let meta = doc.get("metadata").cloned().unwrap_or_default();
    let meta: ObjectMeta = serde_json::from_value(meta).unwrap_or_default();
    let mut known = crate::api::names::KnownKeys::default();
    crate::api::names::validate_labels_and_annotations(&meta, &mut known).map_err(|m| {
        failure(
            422,
            "Invalid",
            format!("Namespace {name:?} is invalid: {m}"),
        )
    })
}

fn string_map(v: Option<&Value>) -> serde_json::Map<String, Value> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(_, v)| v.is_string())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

impl Created {
    /// Whether namespace `ns` exists: a built-in one, one a client created, or one objects
    /// live in. A namespace once seen is remembered, so it outlives its last object (a real
    /// one stays until it is deleted, which is not served).
    pub fn exists(&mut self, api: &ApiServer, ns: &str) -> bool {
        if BUILT_IN.contains(&ns) || self.0.contains_key(ns) {
            return true;
        }
        let seen = holds_objects(api, ns);
        if seen {
            self.0.insert(ns.to_string(), Meta::default());
        }
        seen
    }

    /// The namespace controller's last step: a Terminating namespace whose objects are all
    /// gone is removed (and objects may be created under its name again once it is made again).
    pub fn finalize(&mut self, api: &mut ApiServer) {
        let done: Vec<String> = self
            .0
            .iter()
            .filter(|(ns, m)| m.deleting_ms.is_some() && !holds_objects(api, ns))
            .map(|(ns, _)| ns.clone())
            .collect();
        for ns in done {
            self.0.remove(&ns);
            api.terminating_namespaces.remove(&ns);
        }
    }

    /// A client's DELETE of namespace `name`: 404 when there is none, 403 for the immortal
    /// ones, 409 when it is Terminating already; else it is Terminating from now (the caller
    /// deletes its objects unless `dry`, the second value) and the answer is the namespace so
    /// marked.
    pub fn start_deleting(
        &mut self,
        api: &mut ApiServer,
        name: &str,
        dry: bool,
    ) -> Result<(Value, bool), Reply> {
        let Some(mut m) = all(api, self).remove(name) else {
            return Err(failure(
                404,
                "NotFound",
                format!("namespaces \"{name}\" not found"),
            ));
        };
        if IMMORTAL.contains(&name) {
            let msg =
                format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted");
            return Err(failure(403, "Forbidden", msg));
        }
        if m.deleting_ms.is_some() {
            // The namespace registry's answer to a second delete (`storage.go` `Delete`).
            let msg = format!("Operation cannot be fulfilled on namespaces \"{name}\": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.");
            return Err(failure(409, "Conflict", msg));
        }
        m.deleting_ms = Some(api.now_ms());
        let o = object(name, &m);
        if !dry {
            self.0.insert(name.to_string(), m);
            api.terminating_namespaces.insert(name.to_string());
        }
        Ok((o, !dry))
    }
}

/// Every namespace: the built-in ones and those objects live in (from 0), and what clients wrote.
fn all(api: &ApiServer, created: &Created) -> BTreeMap<String, Meta> {
    let mut out: BTreeMap<String, Meta> = BUILT_IN
        .iter()
        .map(|n| (n.to_string(), Meta::default()))
        .collect();
    for kind in KindId::ALL.iter().filter(|k| k.namespaced()) {
        with_kind!(*kind, K => {
            for o in api.list::<K>(None, &Selector::everything()) {
                if let Some(ns) = o.meta().namespace.as_deref() {
                    out.entry(ns.to_string()).or_default();
                }
            }
        });
    }
    for (n, m) in &created.0 {
        out.insert(n.clone(), m.clone());
    }
    out
}

fn table(rows: &[Value], now: u64, all: &BTreeMap<String, Meta>, meta: Value) -> Value {
    let columns = vec![
        col("Name", "string", 0),
        col("Status", "string", 0),
        col("Age", "string", 0),
    ];
    let rows = rows.iter().map(|o| {
        let n = o["metadata"]["name"].as_str().unwrap_or("");
        let at = all.get(n).map_or(0, |m| m.created_ms);
        let age = human_duration(now.saturating_sub(at));
        let phase = o["status"]["phase"].clone();
        (vec![json!(n), phase, json!(age)], o)
    });
    of_rows(meta, columns, rows)
}

pub fn get(
    api: &ApiServer,
    created: &Created,
    name: Option<&str>,
    query: &BTreeMap<String, String>,
    accept: &str,
) -> Reply {
    let all = all(api, created);
    let now = api.now_ms();
    let meta = json!({"resourceVersion": api.resource_version().to_string()});
    if let Some(name) = name {
        let Some(m) = all.get(name) else {
            return failure(404, "NotFound", format!("namespaces \"{name}\" not found"));
        };
        let o = object(name, m);
        if wants_table(accept) {
            return Reply::ok(&table(&[o], now, &all, meta));
        }
        return Reply::ok(&o);
    }
    let items = all.iter().map(|(n, m)| object(n, m)).collect();
    let items = match super::query::select_derived(items, query) {
        Ok(i) => i,
        Err(r) => return r,
    };
    if wants_table(accept) {
        return super::table::reply(table(&items, now, &all, meta), &items, query);
    }
    Reply::ok(
        &json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": meta, "items": items}),
    )
}

/// A patch of a namespace's labels and annotations (`apply` applies the request's JSON,
/// merge, strategic or apply patch to the stored object); other fields are ignored.
pub fn patch(
    api: &ApiServer,
    created: &mut Created,
    name: &str,
    apply: impl FnOnce(&mut Value) -> Result<(), Reply>,
    dry: bool,
) -> Reply {
    let all = all(api, created);
    let Some(m) = all.get(name) else {
        return failure(404, "NotFound", format!("namespaces \"{name}\" not found"));
    };
    let mut doc = object(name, m);
    if let Err(r) = apply(&mut doc).and_then(|()| decodes(&doc, Some(name))) {
        return r;
    }
    if let Err(r) = valid_metadata(name, &doc) {
        return r;
    }
    let mut next = m.clone();
    next.labels = string_map(doc.pointer("/metadata/labels"));
    next.labels.remove("kubernetes.io/metadata.name");
    next.annotations = string_map(doc.pointer("/metadata/annotations"));
    if !dry {
        created.0.insert(name.to_string(), next.clone());
    }
    Reply::ok(&object(name, &next))
}

/// `kubectl create namespace NAME`: 201, 409 when it exists, 422 for a name that is not a
/// DNS-1123 label.
pub fn create(api: &ApiServer, created: &mut Created, body: &Value, dry: bool) -> Reply {
    if let Err(r) = decodes(body, None) {
        return r;
    }
    let name = body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !crate::api::names::is_dns_label(name) {
        return failure(
            422,
            "Invalid",
            format!("Namespace {name:?} is invalid: metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"),
        );
    }
    if let Err(r) = valid_metadata(name, body) {
        return r;
    }
    if all(api, created).contains_key(name) {
        return failure(
            409,
            "AlreadyExists",
            format!("namespaces \"{name}\" already exists"),
        );
    }
    let m = Meta {
        created_ms: api.now_ms(),
        deleting_ms: None,
        labels: string_map(body.pointer("/metadata/labels")),
        annotations: string_map(body.pointer("/metadata/annotations")),
    };
    let o = object(name, &m);
    if !dry {
        created.0.insert(name.to_string(), m);
    }
    Reply::json(201, &o)
}
