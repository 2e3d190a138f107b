//! Server-side printing: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` gets a
//! `meta.k8s.io/v1` `Table` (apiserver `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go`
//! `asTable`; columns after `pkg/printers/internalversion/printers.go`). Ages are simulated time.

use serde_json::{json, Value};

use super::columns::{printer_columns, PrinterColumn};
use super::query::Reply;
use crate::api::KindId;
use crate::time::{from_time, human_duration};

/// Does the Accept header ask for a Table?
pub fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let p: Vec<&str> = part.split(';').map(str::trim).collect();
        p.contains(&"as=Table") && p.contains(&"g=meta.k8s.io")
    })
}

/// Whether the client asks for metadata only (`as=PartialObjectMetadata` or
/// `as=PartialObjectMetadataList` in `meta.k8s.io/v1`, what client-go's metadata client and
/// controller-runtime's `OnlyMetadata` watches send), and no table first.
pub fn wants_metadata(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let p: Vec<&str> = part.split(';').map(str::trim).collect();
        let partial =
            p.contains(&"as=PartialObjectMetadata") || p.contains(&"as=PartialObjectMetadataList");
        partial && p.contains(&"g=meta.k8s.io")
    }) && !wants_table(accept)
}

/// An object as `PartialObjectMetadata`: its metadata, nothing else.
pub fn partial(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// A column definition (`format: name` for the Name column, as the API server gives it).
pub fn col(name: &str, ty: &str, priority: u8) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": ty, "format": format, "description": "", "priority": priority})
}

pub fn columns(kind: KindId, lws_printer_columns: bool) -> Vec<Value> {
    let mut c = vec![col("Name", "string", 0)];
    if kind.custom() {
        let declared = printer_columns(kind, lws_printer_columns);
        c.extend(declared.iter().map(|p| col(p.name, p.ty, p.priority)));
        if declared.is_empty() {
            c.push(col("Age", "date", 0));
        }
        return c;
    }
    match kind {
        KindId::Pod => {
            c.push(col("Ready", "string", 0));
            c.push(col("Status", "string", 0));
            c.push(col("Restarts", "string", 0));
            c.push(col("Age", "string", 0));
            c.push(col("IP", "string", 1));
            c.push(col("Node", "string", 1));
            c.push(col("Nominated Node", "string", 1));
            c.push(col("Readiness Gates", "string", 1));
        }
        KindId::StatefulSet => {
            c.push(col("Ready", "string", 0));
            c.push(col("Age", "string", 0));
            c.push(col("Containers", "string", 1));
            c.push(col("Images", "string", 1));
        }
        KindId::Node => {
            c.push(col("Status", "string", 0));
            c.push(col("Roles", "string", 0));
            c.push(col("Age", "string", 0));
            c.push(col("Version", "string", 0));
            c.push(col("Internal-IP", "string", 1));
            c.push(col("External-IP", "string", 1));
            c.push(col("OS-Image", "string", 1));
            c.push(col("Kernel-Version", "string", 1));
            c.push(col("Container-Runtime", "string", 1));
        }
        KindId::Service => {
            c.push(col("Type", "string", 0));
            c.push(col("Cluster-IP", "string", 0));
            c.push(col("External-IP", "string", 0));
            c.push(col("Port(s)", "string", 0));
            c.push(col("Age", "string", 0));
            c.push(col("Selector", "string", 1));
        }
        // printers.go `printPodDisruptionBudget`, `printLease`, `printControllerRevision`.
        KindId::PodDisruptionBudget => {
            c.push(col("Min Available", "string", 0));
            c.push(col("Max Unavailable", "string", 0));
            c.push(col("Allowed Disruptions", "integer", 0));
            c.push(col("Age", "string", 0));
        }
        KindId::Lease => {
            c.push(col("Holder", "string", 0));
            c.push(col("Age", "string", 0));
        }
        KindId::ControllerRevision => {
            c.push(col("Controller", "string", 0));
            c.push(col("Revision", "integer", 0));
            c.push(col("Age", "string", 0));
        }
        _ => c.push(col("Age", "string", 0)),
    }
    c
}

fn age(obj: &Value, now_ms: u64) -> String {
    let created = obj
        .pointer("/metadata/creationTimestamp")
        .and_then(|t| serde_json::from_value(t.clone()).ok())
        .map(|t| from_time(&t));
    match created {
        Some(c) => human_duration(now_ms.saturating_sub(c)),
        None => "<unknown>".into(),
    }
}

fn s<'a>(obj: &'a Value, ptr: &str) -> &'a str {
    obj.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn n(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(x: &str) -> String {
    if x.is_empty() {
        "<none>".into()
    } else {
        x.into()
    }
}

fn containers(obj: &Value, spec: &str) -> (String, String) {
    let list = obj
        .pointer(spec)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = list.iter().map(|c| s(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| s(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// `getServiceExternalIP` (printers.go): the external IPs; a load balancer's ingress, or
/// `<pending>` before it has one; an ExternalName Service's name.
fn external_ip(obj: &Value, ty: &str) -> String {
    let strings = |ptr: &str| -> Vec<String> {
        let items = obj.pointer(ptr).and_then(Value::as_array);
        let items = items.map(Vec::as_slice).unwrap_or_default();
        items
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    };
    let external = strings("/spec/externalIPs");
    match ty {
        "ExternalName" => s(obj, "/spec/externalName").to_string(),
        "LoadBalancer" => {
            let ingress = obj.pointer("/status/loadBalancer/ingress");
            let ingress = ingress.and_then(Value::as_array).map(Vec::as_slice);
            let mut all: Vec<String> = ingress
                .unwrap_or_default()
                .iter()
                .map(|i| match s(i, "/ip") {
                    "" => s(i, "/hostname").to_string(),
                    ip => ip.to_string(),
                })
                .collect();
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        _ => or_none(&external.join(",")),
    }
}

/// `findNodeRoles` (printers.go): the `node-role.kubernetes.io/<role>` labels and
/// `kubernetes.io/role`, or `<none>`.
fn node_roles(obj: &Value) -> String {
    let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
    let mut roles: Vec<&str> = labels
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            _ => (k == "kubernetes.io/role").then(|| v.as_str().unwrap_or("")),
        })
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort_unstable();
    roles.dedup();
    or_none(&roles.join(","))
}

/// `getNodeInternalIP` / `getNodeExternalIP`: the first address of the type, or `<none>`.
fn node_address(obj: &Value, ty: &str) -> String {
    let addresses = obj.pointer("/status/addresses").and_then(Value::as_array);
    let found = addresses
        .into_iter()
        .flatten()
        .find(|a| s(a, "/type") == ty)
        .map(|a| s(a, "/address"));
    or_none(found.unwrap_or(""))
}

/// `makePortString` (printers.go): `80/TCP`, `80:30080/TCP` with a node port.
fn service_ports(obj: &Value) -> String {
    let ports = obj.pointer("/spec/ports").and_then(Value::as_array);
    let ports = ports.map(Vec::as_slice).unwrap_or_default();
    let one = |p: &Value| match n(p, "/nodePort") {
        0 => format!("{}/{}", n(p, "/port"), s(p, "/protocol")),
        np => format!("{}:{np}/{}", n(p, "/port"), s(p, "/protocol")),
    };
    ports.iter().map(one).collect::<Vec<_>>().join(",")
}

/// `labels.FormatLabels` of a Service's selector: `k=v` pairs in key order.
fn selector(obj: &Value) -> String {
    let sel = obj.pointer("/spec/selector").and_then(Value::as_object);
    let pairs = sel.into_iter().flatten();
    let pairs: Vec<String> = pairs
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.join(",")
}

/// A row's cells for an object of `kind`, after printers.go's print functions.
pub fn cells(kind: KindId, lws_printer_columns: bool, obj: &Value, now_ms: u64) -> Vec<Value> {
    let name = s(obj, "/metadata/name");
    let age = age(obj, now_ms);
    if kind.custom() {
        return custom_cells(printer_columns(kind, lws_printer_columns), obj, name, age);
    }
    match kind {
        KindId::Pod => super::pod_row::cells(obj, name, age, now_ms),
        KindId::StatefulSet => {
            let (c, i) = containers(obj, "/spec/template/spec/containers");
            let ready = format!(
                "{}/{}",
                n(obj, "/status/readyReplicas"),
                obj.pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
            );
            vec![json!(name), json!(ready), json!(age), json!(c), json!(i)]
        }
        KindId::Node => node_cells(obj, name, age),
        KindId::Service => {
            let ty = match s(obj, "/spec/type") {
                "" => "ClusterIP",
                t => t,
            };
            vec![
                json!(name),
                json!(ty),
                json!(or_none(s(obj, "/spec/clusterIP"))),
                json!(external_ip(obj, ty)),
                json!(or_none(&service_ports(obj))),
                json!(age),
                json!(or_none(&selector(obj))),
            ]
        }
        KindId::PodDisruptionBudget => pdb_cells(obj, name, age),
        KindId::Lease => vec![
            json!(name),
            json!(s(obj, "/spec/holderIdentity")),
            json!(age),
        ],
        KindId::ControllerRevision => vec![
            json!(name),
            json!(revision_controller(obj)),
            json!(n(obj, "/revision")),
            json!(age),
        ],
        _ => vec![json!(name), json!(age)],
    }
}

/// A custom resource's cells: its name, then each declared column's value at its path (a date
/// column as an age), or its age when it declares none.
fn custom_cells(declared: &[PrinterColumn], obj: &Value, name: &str, age: String) -> Vec<Value> {
    let mut out = vec![json!(name)];
    out.extend(declared.iter().map(|c| match c.ty {
        "date" => json!(age),
        _ => {
            let pointer = c.json_path.replace('.', "/");
            obj.pointer(&pointer).cloned().unwrap_or(Value::Null)
        }
    }));
    if declared.is_empty() {
        out.push(json!(age));
    }
    out
}

/// printers.go `printNode`'s cells: status (with `SchedulingDisabled` when cordoned), roles,
/// age, version, addresses and system info.
fn node_cells(obj: &Value, name: &str, age: String) -> Vec<Value> {
    let ready = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| s(c, "/type") == "Ready"))
        .map(|c| s(c, "/status") == "True");
    let mut st = match ready {
        Some(true) => "Ready".to_string(),
        Some(false) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if obj.pointer("/spec/unschedulable") == Some(&Value::Bool(true)) {
        st.push_str(",SchedulingDisabled");
    }
    let info = |f: &str| match s(obj, &format!("/status/nodeInfo/{f}")) {
        "" => "<unknown>".to_string(),
        v => v.to_string(),
    };
    vec![
        json!(name),
        json!(st),
        json!(node_roles(obj)),
        json!(age),
        json!(s(obj, "/status/nodeInfo/kubeletVersion")),
        json!(node_address(obj, "InternalIP")),
        json!(node_address(obj, "ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

/// printers.go `printPodDisruptionBudget`'s cells.
fn pdb_cells(obj: &Value, name: &str, age: String) -> Vec<Value> {
    // An unset bound prints N/A; an int or a percentage as written.
    let bound = |p: &str| match obj.pointer(p) {
        Some(Value::String(v)) => v.clone(),
        Some(Value::Number(v)) => v.to_string(),
        _ => "N/A".to_string(),
    };
    vec![
        json!(name),
        json!(bound("/spec/minAvailable")),
        json!(bound("/spec/maxUnavailable")),
        json!(n(obj, "/status/disruptionsAllowed")),
        json!(age),
    ]
}

/// `printControllerRevision`'s controller: `<kind>.<group>/<name>` in lower case (the group
/// left out for the core group), or `<none>`.
fn revision_controller(obj: &Value) -> String {
    let owners = obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array);
    let Some(owner) = owners
        .into_iter()
        .flatten()
        .find(|o| o.get("controller") == Some(&Value::Bool(true)))
    else {
        return "<none>".into();
    };
    let group = s(owner, "/apiVersion")
        .rsplit_once('/')
        .map_or("", |(g, _)| g);
    let kind = match group {
        "" => s(owner, "/kind").to_string(),
        g => format!("{}.{g}", s(owner, "/kind")),
    };
    format!("{}/{}", kind.to_lowercase(), s(owner, "/name"))
}

/// A Table of `objects`; each row carries the object's metadata as `PartialObjectMetadata`
/// (the default `includeObject=Metadata`).
pub fn table(
    kind: KindId,
    lws_printer_columns: bool,
    objects: &[Value],
    now_ms: u64,
    meta: Value,
    headers: bool,
) -> Value {
    let cols = if headers {
        columns(kind, lws_printer_columns)
    } else {
        Vec::new()
    };
    let rows = objects
        .iter()
        .map(|o| (cells(kind, lws_printer_columns, o, now_ms), o));
    of_rows(meta, cols, rows)
}

/// A Table of rows, each its cells and the object it shows (carried as its metadata,
/// `PartialObjectMetadata`, the default `includeObject=Metadata`).
pub fn of_rows<'a>(
    meta: Value,
    columns: Vec<Value>,
    rows: impl Iterator<Item = (Vec<Value>, &'a Value)>,
) -> Value {
    let rows: Vec<Value> = rows
        .map(|(cells, o)| json!({"cells": cells, "object": partial(o)}))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// A list's Table answered, its rows' objects as the request's `includeObject` asks.
pub fn reply(
    mut table: Value,
    objects: &[Value],
    query: &std::collections::BTreeMap<String, String>,
) -> Reply {
    match include_objects(&mut table, objects, query) {
        Ok(()) => Reply::ok(&table),
        Err(m) => super::query::bad_request(m),
    }
}

/// `includeObject` of a Table request: rows carry `PartialObjectMetadata` by default
/// (`Metadata`), the whole object with `Object` (kubectl `--sort-by` sorts on it), nothing with
/// `None`. `objects` are the rows' objects, in order.
pub fn include_objects(
    table: &mut Value,
    objects: &[Value],
    query: &std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    let how = query
        .get("includeObject")
        .map_or("Metadata", String::as_str);
    let rows = table["rows"].as_array_mut();
    match how {
        "" | "Metadata" => Ok(()),
        "Object" => {
            for (row, o) in rows.into_iter().flatten().zip(objects) {
                row["object"] = o.clone();
            }
            Ok(())
        }
        "None" => {
            for row in rows.into_iter().flatten() {
                row["object"] = Value::Null;
            }
            Ok(())
        }
        other => Err(format!(
            "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_accept_headers_are_recognised() {
        assert!(wants_table(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
        ));
        assert!(!wants_table("application/json"));
    }
}
