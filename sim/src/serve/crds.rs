//! `/apis/apiextensions.k8s.io/v1/customresourcedefinitions[/NAME]`: the CRDs the simulated
//! cluster has installed, read-only. The LeaderWorkerSet CRD always, and at v0.10.0 the
//! DisaggregatedSet and DisaggregatedSetRoleScaler CRDs (their names, scope, subresources and
//! printer columns as `config/crd/bases/*.yaml` at the tag declare them), each `Established`
//! and `NamesAccepted` from the simulation's start, as after `kubectl apply
//! --server-side -f manifests.yaml` and `kubectl wait --for=condition=Established`, which is
//! what install scripts run first. `get` and `list` (kubectl's table: NAME, CREATED AT; a
//! label or `metadata.name` selector); a watch stays open and quiet (they never change); no
//! write (405). The schema is not the tag's:
//! `openAPIV3Schema` says only `type: object` with unknown fields preserved (the simulator
//! prunes and checks by `lws::crd` instead; docs/fidelity.md).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::query::{bad_request, failure, Reply};
use super::resources::{Resource, CRD_GROUP as GROUP, CRD_PLURAL as PLURAL, RESOURCES};
use super::table::wants_table;
use crate::api::{ApiServer, KindId};

/// The custom resources the cluster serves (`RESOURCES` whose group is not a built-in one).
fn custom(api: &ApiServer) -> Vec<Resource> {
    let mut out: Vec<Resource> = RESOURCES
        .into_iter()
        .filter(|r| r.group.contains(".x-k8s.io"))
        .filter(|r| super::resources::served(r, api.disaggregated_set_crds))
        .collect();
    // A list is in key order, as etcd returns it.
    out.sort_by_key(name_of);
    out
}

/// A fixed UID per CRD (FNV-1a of its name, in UUID form): the same on every run.
fn uid_of(name: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let x = format!("{h:016x}{:016x}", h.rotate_left(29) ^ 0x5bd1_e995_5bd1_e995);
    format!(
        "{}-{}-{}-{}-{}",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

fn name_of(r: &Resource) -> String {
    format!("{}.{}", r.plural, r.group)
}

/// The printer columns each CRD declares at the tag; the LeaderWorkerSet's only when the
/// release's CRD has them (`ApiServer::lws_printer_columns`).
fn printer_columns(r: &Resource, api: &ApiServer) -> Vec<Value> {
    let col =
        |name: &str, path: &str, ty: &str| json!({"name": name, "jsonPath": path, "type": ty});
    let age = col("Age", ".metadata.creationTimestamp", "date");
    match r.kind {
        KindId::LeaderWorkerSet if api.lws_printer_columns => vec![
            col("Ready", ".status.readyReplicas", "integer"),
            col("Desired", ".spec.replicas", "integer"),
            col("Up-to-date", ".status.updatedReplicas", "integer"),
            age,
        ],
        KindId::DisaggregatedSetRoleScaler => vec![
            col("Desired", ".spec.replicas", "integer"),
            col("Current", ".status.replicas", "integer"),
            age,
        ],
        _ => Vec::new(),
    }
}

fn object(r: &Resource, api: &ApiServer) -> Value {
    let kind = r.kind.as_str();
    let mut names = json!({
        "plural": r.plural,
        "singular": r.singular,
        "kind": kind,
        "listKind": format!("{kind}List"),
    });
    if !r.short_names.is_empty() {
        names["shortNames"] = json!(r.short_names);
    }
    let mut subresources = json!({});
    if r.status {
        subresources["status"] = json!({});
    }
    if r.scale {
        let selector = match r.kind {
            KindId::LeaderWorkerSet => ".status.hpaPodSelector",
            _ => ".status.selector",
        };
        subresources["scale"] = json!({
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": selector,
        });
    }
    let mut version = json!({
        "name": r.version,
        "served": true,
        "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
        "subresources": subresources,
    });
    let columns = printer_columns(r, api);
    if !columns.is_empty() {
        version["additionalPrinterColumns"] = json!(columns);
    }
    let created = crate::time::to_time(0);
    let condition = |ty: &str, reason: &str, message: &str| json!({"type": ty, "status": "True", "lastTransitionTime": created, "reason": reason, "message": message});
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": name_of(r),
            "uid": uid_of(&name_of(r)),
            "creationTimestamp": created,
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": {
            "group": r.group,
            "names": names.clone(),
            "scope": "Namespaced",
            "versions": [version],
            "conversion": {"strategy": "None"},
        },
        "status": {
            "conditions": [
                condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
            "acceptedNames": names,
            "storedVersions": [r.version],
        },
    })
}

/// `kubectl get crd`'s table: the CRD registry's printer columns, NAME and CREATED AT.
fn table(rows: &[Value], meta: Value) -> Value {
    let col = |name: &str, ty: &str, format: &str| json!({"name": name, "type": ty, "format": format, "description": "", "priority": 0});
    let rows: Vec<Value> = rows
        .iter()
        .map(|o| {
            json!({
                "cells": [o["metadata"]["name"], o["metadata"]["creationTimestamp"]],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]},
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [col("Name", "string", "name"), col("Created At", "date", "")],
        "rows": rows,
    })
}

/// GET of one CRD or the list.
pub fn get(
    api: &ApiServer,
    name: Option<&str>,
    query: &BTreeMap<String, String>,
    accept: &str,
) -> Reply {
    let meta = json!({"resourceVersion": api.resource_version().to_string()});
    let all: Vec<Value> = custom(api).iter().map(|r| object(r, api)).collect();
    if let Some(name) = name {
        let Some(o) = all.into_iter().find(|o| o["metadata"]["name"] == name) else {
            return failure(
                404,
                "NotFound",
                format!("{PLURAL}.{GROUP} \"{name}\" not found"),
            );
        };
        if wants_table(accept) {
            return Reply::ok(&table(&[o], meta));
        }
        return Reply::ok(&o);
    }
    let labels =
        match super::query::label_selector(query.get("labelSelector").map_or("", String::as_str)) {
            Ok(sel) => sel,
            Err(e) => return bad_request(e),
        };
    // `metadata.name` selects any kind: read as a cluster-scoped kind's.
    let fields = match super::query::field_selector(
        KindId::Node,
        query.get("fieldSelector").map_or("", String::as_str),
    ) {
        Ok(f) => f,
        Err(e) => return bad_request(e),
    };
    let items: Vec<Value> = all
        .into_iter()
        .filter(|o| labels.matches(None) && super::query::fields_match(&fields, o))
        .collect();
    if wants_table(accept) {
        let mut t = table(&items, meta);
        return match super::table::include_objects(&mut t, &items, query) {
            Ok(()) => Reply::ok(&t),
            Err(m) => bad_request(m),
        };
    }
    Reply::ok(&json!({
        "kind": "CustomResourceDefinitionList",
        "apiVersion": format!("{GROUP}/v1"),
        "metadata": meta,
        "items": items,
    }))
}
