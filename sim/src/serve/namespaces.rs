//! `/api/v1/namespaces[/NAME]`: the namespaces of the simulated cluster. The simulation has no
//! Namespace objects (every namespace exists implicitly, as its objects name it), so these are
//! derived: the four a cluster starts with, every namespace an object lives in, and those a
//! client created here. `get`, `list` (with kubectl's table: NAME, STATUS, AGE) and `create`
//! (`kubectl create namespace`); no watch, update or delete (405). A namespace is Active from the
//! simulation's start, or from its creation here.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::query::{failure, Reply};
use super::table::{human_duration, wants_table};
use crate::api::{with_kind, ApiServer, Kind, KindId, Selector};

/// The namespaces a cluster has before anyone creates one.
const BUILT_IN: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

/// Namespaces a client created, with the simulated instant of each creation.
#[derive(Default)]
pub struct Created(BTreeMap<String, u64>);

fn object(name: &str, created_ms: u64) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "creationTimestamp": crate::time::to_time(created_ms),
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// Every namespace and when it appeared: the built-in ones and those objects live in at 0.
fn all(api: &ApiServer, created: &Created) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BUILT_IN.iter().map(|n| (n.to_string(), 0)).collect();
    for kind in KindId::ALL.iter().filter(|k| k.namespaced()) {
        with_kind!(*kind, K => {
            for o in api.list::<K>(None, &Selector::everything()) {
                if let Some(ns) = o.meta().namespace.as_deref() {
                    out.entry(ns.to_string()).or_insert(0);
                }
            }
        });
    }
    for (n, at) in &created.0 {
        out.entry(n.clone()).or_insert(*at);
    }
    out
}

pub fn get(api: &ApiServer, created: &Created, name: Option<&str>, accept: &str) -> Reply {
    let all = all(api, created);
    if let Some(name) = name {
        return match all.get(name) {
            Some(at) => Reply::ok(&object(name, *at)),
            None => failure(404, "NotFound", format!("namespaces \"{name}\" not found")),
        };
    }
    let now = api.now_ms();
    let items: Vec<Value> = all.iter().map(|(n, at)| object(n, *at)).collect();
    let meta = json!({"resourceVersion": api.resource_version().to_string()});
    if wants_table(accept) {
        let col = |name: &str| json!({"name": name, "type": "string", "format": "", "description": "", "priority": 0});
        let rows: Vec<Value> = all
            .iter()
            .zip(&items)
            .map(|((n, at), o)| {
                json!({
                    "cells": [n, "Active", human_duration(now.saturating_sub(*at))],
                    "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]},
                })
            })
            .collect();
        return Reply::ok(&json!({
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "columnDefinitions": [col("Name"), col("Status"), col("Age")],
            "rows": rows,
        }));
    }
    Reply::ok(
        &json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": meta, "items": items}),
    )
}

/// `kubectl create namespace NAME`: 201, 409 when it exists, 422 for a name that is not a
/// DNS-1123 label.
pub fn create(api: &ApiServer, created: &mut Created, body: &Value) -> Reply {
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
    if all(api, created).contains_key(name) {
        return failure(
            409,
            "AlreadyExists",
            format!("namespaces \"{name}\" already exists"),
        );
    }
    let now = api.now_ms();
    created.0.insert(name.to_string(), now);
    Reply::json(201, &object(name, now))
}
