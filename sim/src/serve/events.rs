//! `/api/v1/[namespaces/NS/]events[/NAME]`: the Kubernetes Events the controllers recorded
//! (`api/events.rs`), read-only: `get`, `list` with a field selector on the fields the API
//! server indexes for events (kubernetes `pkg/registry/core/event/strategy.go`,
//! `ToSelectableFields`: `involvedObject.*`, `reason`, `source`, `type`, `metadata.*`), and the
//! table `kubectl get events` prints (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE). What
//! `kubectl describe` lists under "Events:". Not served: watch and writes (405).

use serde_json::{json, Value};

use super::query::{bad_request, failure, Reply};
use super::table::{human_duration, wants_table};
use crate::api::ApiServer;

/// A GET of events: one by name, or the list (all namespaces when `namespace` is `None`).
pub fn get(
    api: &ApiServer,
    namespace: Option<&str>,
    name: Option<&str>,
    query: &std::collections::BTreeMap<String, String>,
    accept: &str,
) -> Reply {
    if super::query::flag(query, "watch") {
        return failure(
            405,
            "MethodNotAllowed",
            "watching events is not supported by lws-sim serve",
        );
    }
    let events = api
        .events
        .list(namespace)
        .map(|e| serde_json::to_value(e).expect("events encode"));
    if let Some(name) = name {
        return match events.into_iter().find(|e| e["metadata"]["name"] == name) {
            Some(e) => Reply::ok(&e),
            None => failure(404, "NotFound", format!("events \"{name}\" not found")),
        };
    }
    let wanted = match field_selector(query.get("fieldSelector").map_or("", String::as_str)) {
        Ok(w) => w,
        Err(m) => return bad_request(m),
    };
    let items: Vec<Value> = events
        .filter(|e| {
            wanted
                .iter()
                .all(|(path, v, eq)| (field(e, path) == *v) == *eq)
        })
        .collect();
    let meta = json!({"resourceVersion": api.resource_version().to_string()});
    if wants_table(accept) {
        let mut t = table(&items, api.now_ms(), meta);
        return match super::table::include_objects(&mut t, &items, query) {
            Ok(()) => Reply::ok(&t),
            Err(m) => bad_request(m),
        };
    }
    Reply::ok(&json!({"kind": "EventList", "apiVersion": "v1", "metadata": meta, "items": items}))
}

/// Writes: events are recorded by the controllers only.
pub fn refuse(method: &str) -> Reply {
    failure(
        405,
        "MethodNotAllowed",
        format!("{method} is not supported on events by lws-sim serve"),
    )
}

/// The selectable fields of an Event, as the JSON pointer each reads.
const FIELDS: [(&str, &str); 12] = [
    ("metadata.name", "/metadata/name"),
    ("metadata.namespace", "/metadata/namespace"),
    ("involvedObject.kind", "/involvedObject/kind"),
    ("involvedObject.namespace", "/involvedObject/namespace"),
    ("involvedObject.name", "/involvedObject/name"),
    ("involvedObject.uid", "/involvedObject/uid"),
    ("involvedObject.apiVersion", "/involvedObject/apiVersion"),
    (
        "involvedObject.resourceVersion",
        "/involvedObject/resourceVersion",
    ),
    ("involvedObject.fieldPath", "/involvedObject/fieldPath"),
    ("reason", "/reason"),
    ("source", "/source/component"),
    ("type", "/type"),
];

fn field(e: &Value, pointer: &str) -> String {
    e.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `a=b,c!=d` over `FIELDS`: (pointer, value, equal?).
fn field_selector(s: &str) -> Result<Vec<(&'static str, String, bool)>, String> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|part| {
            let (k, v, eq) = if let Some((k, v)) = part.split_once("!=") {
                (k, v, false)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, v, true)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, v, true)
            } else {
                return Err(format!("invalid field selector {part:?}"));
            };
            let (_, ptr) = FIELDS.iter().find(|(name, _)| *name == k).ok_or_else(|| {
                format!("\"{k}\" is not a known field selector: only {}", names())
            })?;
            Ok((*ptr, v.to_string(), eq))
        })
        .collect()
}

fn names() -> String {
    FIELDS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `kubectl get events`' columns (kubernetes `pkg/printers/internalversion/printers.go`,
/// `eventColumnDefinitions`): Last Seen, Type, Reason, Object, Message.
fn table(items: &[Value], now_ms: u64, meta: Value) -> Value {
    let col = |name: &str| json!({"name": name, "type": "string", "format": "", "description": "", "priority": 0});
    let rows: Vec<Value> = items
        .iter()
        .map(|e| {
            let last = e
                .get("lastTimestamp")
                .and_then(|t| serde_json::from_value(t.clone()).ok())
                .map(|t| human_duration(now_ms.saturating_sub(crate::time::from_time(&t))))
                .unwrap_or_else(|| "<unknown>".into());
            let object = format!(
                "{}/{}",
                field(e, "/involvedObject/kind").to_lowercase(),
                field(e, "/involvedObject/name")
            );
            json!({
                "cells": [last, field(e, "/type"), field(e, "/reason"), object, field(e, "/message")],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": e["metadata"]},
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [col("Last Seen"), col("Type"), col("Reason"), col("Object"), col("Message")],
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_selectors_name_the_event_fields() {
        let w = field_selector("involvedObject.name=vllm,type!=Warning").unwrap();
        assert_eq!(w[0], ("/involvedObject/name", "vllm".to_string(), true));
        assert_eq!(w[1], ("/type", "Warning".to_string(), false));
        let e = field_selector("spec.x=1").unwrap_err();
        assert!(
            e.starts_with("\"spec.x\" is not a known field selector"),
            "{e}"
        );
    }
}
