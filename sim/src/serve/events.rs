//! `/api/v1/[namespaces/NS/]events[/NAME]`: the Kubernetes Events the controllers recorded
//! (`api/events.rs`), read-only: `get`, `list` with a field selector on the fields the API
//! server indexes for events (kubernetes `pkg/registry/core/event/strategy.go`,
//! `ToSelectableFields`: `involvedObject.*`, `reason`, `source`, `type`, `metadata.*`), and the
//! table `kubectl get events` prints (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE). What
//! `kubectl describe` lists under "Events:". The same events are served under
//! `/apis/events.k8s.io/v1` in that group's form (kubernetes `pkg/apis/events/v1/conversion.go`:
//! `note` is the message, `regarding` the involved object, `reportingController` the reporting
//! component, and the core-only fields `deprecated*`), where a field selector names the
//! events.k8s.io fields (`regarding.*`, `reportingController`, ...). A watch is
//! `event_watch.rs`'s. Not served: writes (405).

use serde_json::{json, Map, Value};

use super::query::{bad_request, failure, Reply};
use super::table::wants_table;
use crate::api::ApiServer;
use crate::time::human_duration;

/// The events.k8s.io API group.
pub const GROUP: &str = "events.k8s.io";

/// Which API an event is read through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `v1` Event: how the controllers' events are stored.
    Core,
    /// `events.k8s.io/v1` Event.
    EventsV1,
}

impl Form {
    /// The form a `group/version/plural` path serves, if it is events.
    pub fn of(group: &str, version: &str, plural: &str) -> Option<Form> {
        match (group, version, plural) {
            ("", "v1", "events") => Some(Form::Core),
            (GROUP, "v1", "events") => Some(Form::EventsV1),
            _ => None,
        }
    }

    fn api_version(self) -> &'static str {
        match self {
            Form::Core => "v1",
            Form::EventsV1 => "events.k8s.io/v1",
        }
    }
}

/// A GET of events: one by name, or the list (all namespaces when `namespace` is `None`).
pub fn get(
    api: &ApiServer,
    form: Form,
    namespace: Option<&str>,
    name: Option<&str>,
    query: &std::collections::BTreeMap<String, String>,
    accept: &str,
) -> Reply {
    if super::query::flag(query, "watch") {
        // A watch of the collection is `event_watch`'s; one event by name is not watched here.
        return failure(
            405,
            "MethodNotAllowed",
            "watching one event by name is not supported by lws-sim serve; watch the list with fieldSelector=metadata.name=NAME",
        );
    }
    let events = api.events.list(namespace).map(|e| rendered(e, form));
    if let Some(name) = name {
        return match events.into_iter().find(|e| e["metadata"]["name"] == name) {
            Some(e) => Reply::ok(&e),
            None => failure(404, "NotFound", format!("events \"{name}\" not found")),
        };
    }
    let selector = query.get("fieldSelector").map_or("", String::as_str);
    let wanted = match field_selector(form, selector) {
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
    // Events have their own resourceVersions (`api/events.rs`): a list's is the event store's,
    // so the watch `kubectl get events -w` starts from it sends what came after.
    let meta = json!({"resourceVersion": api.events.version().to_string()});
    if wants_table(accept) {
        let t = table(form, &items, api.now_ms(), meta);
        return super::table::reply(t, &items, query);
    }
    if super::table::wants_metadata(accept) {
        let items: Vec<Value> = items.iter().map(super::table::partial).collect();
        return Reply::ok(&json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "items": items,
        }));
    }
    let list = json!({"kind": "EventList", "apiVersion": form.api_version(), "metadata": meta, "items": items});
    Reply::ok(&list)
}

/// A stored event as served in `form`.
pub(super) fn rendered(e: &k8s_openapi::api::core::v1::Event, form: Form) -> Value {
    let core = core_json(e);
    match form {
        Form::Core => with_type(core, form),
        Form::EventsV1 => to_events_v1(&core),
    }
}

/// A stored event as the API server encodes a core/v1 Event: Go's zero `metav1.Time` fields are
/// `null` (`omitempty` does not omit a struct) and the reporting fields, which have no
/// `omitempty`, are `""` when unset; so `kubectl get events --sort-by=.lastTimestamp` finds
/// the field on events the events.k8s.io/v1 recorder made.
fn core_json(e: &k8s_openapi::api::core::v1::Event) -> Value {
    let mut v = serde_json::to_value(e).expect("events encode");
    if let Value::Object(m) = &mut v {
        for field in ["firstTimestamp", "lastTimestamp", "eventTime"] {
            m.entry(field).or_insert(Value::Null);
        }
        for field in ["reportingComponent", "reportingInstance"] {
            m.entry(field).or_insert(json!(""));
        }
    }
    v
}

fn with_type(mut e: Value, form: Form) -> Value {
    if let Value::Object(m) = &mut e {
        m.insert("kind".into(), json!("Event"));
        m.insert("apiVersion".into(), json!(form.api_version()));
    }
    e
}

/// A stored (core/v1) event in its events.k8s.io/v1 form (`Convert_core_Event_To_v1_Event`).
fn to_events_v1(core: &Value) -> Value {
    const RENAMED: [(&str, &str); 7] = [
        ("message", "note"),
        ("involvedObject", "regarding"),
        ("reportingComponent", "reportingController"),
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
    ];
    let mut out = Map::new();
    for (k, v) in core.as_object().into_iter().flatten() {
        // `reportingController` and `reportingInstance` are `omitempty` in events.k8s.io/v1.
        if v == "" && (k == "reportingComponent" || k == "reportingInstance") {
            continue;
        }
        let key = RENAMED
            .iter()
            .find(|(from, _)| from == k)
            .map_or(k.as_str(), |(_, to)| to);
        out.insert(key.to_string(), v.clone());
    }
    with_type(Value::Object(out), Form::EventsV1)
}

/// Writes: events are recorded by the controllers only.
pub fn refuse(method: &str) -> Reply {
    failure(
        405,
        "MethodNotAllowed",
        format!("{method} is not supported on events by lws-sim serve"),
    )
}

/// The selectable fields of a core/v1 Event, as the JSON pointer each reads.
const FIELDS: &[(&str, &str)] = &[
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
    ("reportingComponent", "/reportingComponent"),
    ("source", "/source/component"),
    ("type", "/type"),
];

/// The same fields under their events.k8s.io/v1 names (kubernetes
/// `pkg/apis/events/v1/conversion.go`, `AddFieldLabelConversionsForEvent`).
const FIELDS_V1: &[(&str, &str)] = &[
    ("metadata.name", "/metadata/name"),
    ("metadata.namespace", "/metadata/namespace"),
    ("regarding.kind", "/regarding/kind"),
    ("regarding.namespace", "/regarding/namespace"),
    ("regarding.name", "/regarding/name"),
    ("regarding.uid", "/regarding/uid"),
    ("regarding.apiVersion", "/regarding/apiVersion"),
    ("regarding.resourceVersion", "/regarding/resourceVersion"),
    ("regarding.fieldPath", "/regarding/fieldPath"),
    ("reason", "/reason"),
    ("reportingController", "/reportingController"),
    ("source", "/deprecatedSource/component"),
    ("type", "/type"),
];

fn fields(form: Form) -> &'static [(&'static str, &'static str)] {
    match form {
        Form::Core => FIELDS,
        Form::EventsV1 => FIELDS_V1,
    }
}

/// A field's value; `source` is the reporting controller when the event has no source
/// component (`ToSelectableFields`, kubernetes `pkg/registry/core/event/strategy.go`).
pub(super) fn field(e: &Value, pointer: &str) -> String {
    let read = |p: &str| {
        e.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let v = read(pointer);
    match pointer {
        "/source/component" if v.is_empty() => read("/reportingComponent"),
        "/deprecatedSource/component" if v.is_empty() => read("/reportingController"),
        _ => v,
    }
}

/// `a=b,c!=d` over the form's fields: (pointer, value, equal?).
pub(super) fn field_selector(
    form: Form,
    s: &str,
) -> Result<Vec<(&'static str, String, bool)>, String> {
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
            let (_, ptr) = fields(form)
                .iter()
                .find(|(name, _)| *name == k)
                .ok_or_else(|| {
                    format!(
                        "\"{k}\" is not a known field selector: only {}",
                        names(form)
                    )
                })?;
            Ok((*ptr, v.to_string(), eq))
        })
        .collect()
}

fn names(form: Form) -> String {
    fields(form)
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `kubectl get events`' columns (kubernetes `pkg/printers/internalversion/printers.go`,
/// `eventColumnDefinitions`, `printEvent`): Last Seen (the last timestamp, else the first,
/// else the event time; a series' last observation), Type, Reason, Object, Message, and for
/// `-o wide` (priority 1) Subobject, Source (component, else the reporting controller, with
/// the host or reporting instance), First Seen, Count (the series' count, else the count, at
/// least 1) and Name, in that order.
pub(super) fn table(form: Form, items: &[Value], now_ms: u64, meta: Value) -> Value {
    let col = |name: &str, priority: u8| json!({"name": name, "type": "string", "format": "", "description": "", "priority": priority});
    let p = |core: &'static str, v1: &'static str| match form {
        Form::Core => core,
        Form::EventsV1 => v1,
    };
    let object_at = p("/involvedObject", "/regarding");
    let at = |e: &Value, pointer: &str| -> Option<u64> {
        let t = e.pointer(pointer).filter(|t| !t.is_null())?;
        let t: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time =
            serde_json::from_value(t.clone()).ok()?;
        Some(crate::time::from_time(&t))
    };
    let age = |t: Option<u64>| {
        t.map(|t| human_duration(now_ms.saturating_sub(t)))
            .unwrap_or_else(|| "<unknown>".into())
    };
    let rows: Vec<Value> = items
        .iter()
        .map(|e| {
            let first = at(e, p("/firstTimestamp", "/deprecatedFirstTimestamp"))
                .or_else(|| at(e, "/eventTime"));
            let last = at(e, "/series/lastObservedTime")
                .or_else(|| at(e, p("/lastTimestamp", "/deprecatedLastTimestamp")))
                .or(first);
            let object = format!(
                "{}/{}",
                field(e, &format!("{object_at}/kind")).to_lowercase(),
                field(e, &format!("{object_at}/name"))
            );
            let or = |a: String, b: String| if a.is_empty() { b } else { a };
            let component = or(
                field(e, p("/source/component", "/deprecatedSource/component")),
                field(e, p("/reportingComponent", "/reportingController")),
            );
            let instance = or(
                field(e, p("/source/host", "/deprecatedSource/host")),
                field(e, "/reportingInstance"),
            );
            let source = if instance.is_empty() {
                component
            } else {
                format!("{component}, {instance}")
            };
            let count = e
                .pointer("/series/count")
                .or_else(|| e.pointer(p("/count", "/deprecatedCount")))
                .and_then(Value::as_i64)
                .filter(|c| *c != 0)
                .unwrap_or(1);
            json!({
                "cells": [
                    age(last), field(e, "/type"), field(e, "/reason"), object,
                    field(e, &format!("{object_at}/fieldPath")), source,
                    field(e, p("/message", "/note")), age(first), count,
                    field(e, "/metadata/name"),
                ],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": e["metadata"]},
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [
            col("Last Seen", 0), col("Type", 0), col("Reason", 0), col("Object", 0),
            col("Subobject", 1), col("Source", 1), col("Message", 0), col("First Seen", 1),
            col("Count", 1), col("Name", 1),
        ],
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_selectors_name_the_event_fields() {
        let w = field_selector(Form::Core, "involvedObject.name=vllm,type!=Warning").unwrap();
        assert_eq!(w[0], ("/involvedObject/name", "vllm".to_string(), true));
        assert_eq!(w[1], ("/type", "Warning".to_string(), false));
        let w = field_selector(Form::EventsV1, "regarding.name=vllm").unwrap();
        assert_eq!(w[0], ("/regarding/name", "vllm".to_string(), true));
        assert!(field_selector(Form::EventsV1, "involvedObject.name=vllm").is_err());
        let e = field_selector(Form::Core, "spec.x=1").unwrap_err();
        assert!(
            e.starts_with("\"spec.x\" is not a known field selector"),
            "{e}"
        );
    }

    #[test]
    fn the_events_v1_form_renames_the_core_fields() {
        let core = json!({
            "kind": "Event", "apiVersion": "v1",
            "metadata": {"name": "vllm.1", "namespace": "default"},
            "message": "Created leader statefulset vllm",
            "involvedObject": {"kind": "LeaderWorkerSet", "name": "vllm"},
            "reportingComponent": "leaderworkerset",
            "reportingInstance": "leaderworkerset-lws-controller-manager-1",
            "action": "Create",
            "eventTime": "2024-01-01T00:00:01.000000Z",
            "series": {"count": 2, "lastObservedTime": "2024-01-01T00:00:02.000000Z"},
            "source": {},
        });
        let v1 = to_events_v1(&core);
        assert_eq!(v1["apiVersion"], "events.k8s.io/v1");
        assert_eq!(v1["note"], "Created leader statefulset vllm");
        assert_eq!(v1["regarding"]["name"], "vllm");
        assert_eq!(v1["reportingController"], "leaderworkerset");
        assert_eq!(v1["deprecatedSource"], json!({}));
        assert_eq!(v1["series"]["count"], 2);
        assert!(v1.get("message").is_none() && v1.get("involvedObject").is_none());
        // LAST SEEN is the series' last observation.
        let t = table(Form::EventsV1, &[v1], 62_000, json!({}));
        assert_eq!(t["rows"][0]["cells"][0], "60s");
        assert_eq!(t["rows"][0]["cells"][3], "leaderworkerset/vllm");
        // -o wide: the source is the reporting controller and instance, the count the series'.
        let cells = &t["rows"][0]["cells"];
        assert_eq!(
            cells[5],
            "leaderworkerset, leaderworkerset-lws-controller-manager-1"
        );
        assert_eq!(cells[6], "Created leader statefulset vllm");
        assert_eq!(cells[7], "61s");
        assert_eq!(cells[8], 2);
        assert_eq!(cells[9], "vllm.1");
        assert_eq!(t["columnDefinitions"][4]["name"], "Subobject");
        assert_eq!(t["columnDefinitions"][4]["priority"], 1);
    }
}
