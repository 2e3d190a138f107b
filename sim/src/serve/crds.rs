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

use super::columns::printer_columns;
use super::query::{failure, Reply};
use super::resources::{Resource, CRD_GROUP as GROUP, CRD_PLURAL as PLURAL, RESOURCES};
use super::table::{col, of_rows, wants_table};
use crate::api::{ApiServer, KindId};

/// The custom resources the cluster serves (`RESOURCES` whose group is not a built-in one).
fn custom(api: &ApiServer) -> Vec<Resource> {
    let mut out: Vec<Resource> = RESOURCES
        .into_iter()
        .filter(|r| {
            let custom = [
                KindId::LeaderWorkerSet,
                KindId::DisaggregatedSet,
                KindId::DisaggregatedSetRoleScaler,
                KindId::PodGroup,
            ];
            custom.contains(&r.kind)
        })
        .filter(|r| super::resources::served(r, super::resources::Installed::of(api)))
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
    let columns: Vec<Value> = printer_columns(r.kind, api.lws_printer_columns)
        .iter()
        .map(|c| {
            let mut v = json!({"name": c.name, "jsonPath": c.json_path, "type": c.ty});
            if c.priority > 0 {
                v["priority"] = json!(c.priority);
            }
            v
        })
        .collect();
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
    let columns = vec![col("Name", "string", 0), col("Created At", "date", 0)];
    let rows = rows.iter().map(|o| {
        let m = &o["metadata"];
        (vec![m["name"].clone(), m["creationTimestamp"].clone()], o)
    });
    of_rows(meta, columns, rows)
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
    let items = match super::query::select_derived(all, query) {
        Ok(i) => i,
        Err(r) => return r,
    };
    if wants_table(accept) {
        return super::table::reply(table(&items, meta), &items, query);
    }
    Reply::ok(&json!({
        "kind": "CustomResourceDefinitionList",
        "apiVersion": format!("{GROUP}/v1"),
        "metadata": meta,
        "items": items,
    }))
}
