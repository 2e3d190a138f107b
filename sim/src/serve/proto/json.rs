//! A Kubernetes protobuf object as the JSON the API takes: the envelope's `apiVersion` and
//! `kind`, then the object's message decoded field by field through `schema.rs`. As the
//! apiserver's generated unmarshallers do (k8s.io/api `generated.pb.go`, `skipGenerated`), a
//! field number the table does not know is skipped; a value whose wire type is not its
//! field's is an error. A Go value field's zero is dropped and a Go pointer's kept
//! (`schema_types::Card`), so the JSON means what the Go object decoded from the same bytes
//! means.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};

use super::schema::*;
use super::schema_types::{Card, Field, Message, Ty};
use super::{envelope, fields, Wire};

/// The kinds read from protobuf, by `apiVersion` and `kind`.
const KINDS: [(&str, &str, &Message); 13] = [
    ("v1", "Namespace", &CORE_NAMESPACE),
    ("v1", "Service", &CORE_SERVICE),
    ("v1", "Pod", &CORE_POD),
    ("v1", "Node", &CORE_NODE),
    ("v1", "Event", &CORE_EVENT),
    ("apps/v1", "StatefulSet", &APPS_STATEFUL_SET),
    ("apps/v1", "ControllerRevision", &APPS_CONTROLLER_REVISION),
    (
        "policy/v1",
        "PodDisruptionBudget",
        &POLICY_POD_DISRUPTION_BUDGET,
    ),
    ("policy/v1", "Eviction", &POLICY_EVICTION),
    ("policy/v1beta1", "Eviction", &POLICY_EVICTION),
    ("autoscaling/v1", "Scale", &AUTOSCALING_SCALE),
    ("coordination.k8s.io/v1", "Lease", &COORDINATION_LEASE),
    ("v1", "DeleteOptions", &META_DELETE_OPTIONS),
];

/// Messages nest no deeper than this (the types' own nesting is under 15).
const MAX_DEPTH: usize = 32;

/// The Unix time of Go's zero `time.Time`, which a value `metav1.Time` marshals when unset.
const ZERO_TIME_SECONDS: i64 = -62_135_596_800;

/// Why a protobuf body was not read.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A kind this table does not hold (a 415: send JSON).
    Kind(String),
    /// Bytes that are not the message they claim to be (a 400).
    Malformed(String),
}

/// The JSON object of a protobuf body. A DELETE's body without a kind is its `DeleteOptions`
/// (the apiserver decodes it into the options it expects).
pub fn object(body: &[u8], delete: bool) -> Result<Value, Refusal> {
    let (api_version, mut kind, raw) = envelope(body).map_err(Refusal::Malformed)?;
    if delete && kind.is_empty() {
        kind = "DeleteOptions".into();
    }
    // `DeleteOptions` is sent with the group of the request it rides on.
    let known = KINDS
        .iter()
        .find(|(v, k, _)| *k == kind && (*v == api_version || kind == "DeleteOptions"));
    let Some(&(_, _, schema)) = known else {
        return Err(Refusal::Kind(format!(
            "lws-sim serve does not decode {kind:?} ({api_version}) from protobuf; send application/json"
        )));
    };
    let mut out = message(schema, raw, 0).map_err(Refusal::Malformed)?;
    if !api_version.is_empty() {
        out.insert("apiVersion".into(), api_version.into());
    }
    out.insert("kind".into(), kind.into());
    Ok(Value::Object(out))
}

fn message(schema: &Message, buf: &[u8], depth: usize) -> Result<Map<String, Value>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("messages nest more than {MAX_DEPTH} deep"));
    }
    let mut out = Map::new();
    for (number, wire) in fields(buf)? {
        let Some(field) = schema.field(number) else {
            continue;
        };
        let at = |e: String| format!("{}.{}: {e}", schema.name, field.json);
        set(&mut out, field, wire, depth).map_err(at)?;
    }
    Ok(out)
}

/// Store one occurrence of `field` in `out`: the last of a singular field wins (a message is
/// merged into the one before it), a repeated field's values are appended.
fn set(
    out: &mut Map<String, Value>,
    field: &Field,
    wire: Wire<'_>,
    depth: usize,
) -> Result<(), String> {
    match (&field.ty, field.card) {
        (Ty::Inline(schema), _) => {
            let inner = message(schema, bytes(wire)?, depth + 1)?;
            out.extend(inner);
        }
        (Ty::Map(value), _) => {
            let (key, v) = map_entry(value, bytes(wire)?, depth)?;
            let map = out
                .entry(field.json)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = map {
                map.insert(key, v);
            }
        }
        (Ty::Int | Ty::Bool, Card::Rep) if matches!(wire, Wire::Bytes(_)) => {
            // A packed repeated scalar: varints back to back.
            for (_, v) in packed(bytes(wire)?)? {
                push(out, field.json, scalar(&field.ty, v, depth)?);
            }
        }
        (ty, Card::Rep) => push(out, field.json, scalar(ty, wire, depth)?),
        (ty, card) => {
            let v = scalar(ty, wire, depth)?;
            match out.get_mut(field.json) {
                Some(Value::Object(before)) if v.is_object() => {
                    before.extend(v.as_object().cloned().unwrap_or_default());
                }
                _ if card == Card::One && is_zero(&v) => {
                    out.remove(field.json);
                }
                _ => {
                    out.insert(field.json.into(), v);
                }
            }
        }
    }
    Ok(())
}

fn push(out: &mut Map<String, Value>, name: &str, v: Value) {
    let list = out.entry(name).or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = list {
        list.push(v);
    }
}

/// The zero of a Go value field, which JSON's `omitempty` leaves out: a scalar's zero (a
/// struct is never left out, so an empty message stays `{}`, as `resources: {}`).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => s.is_empty(),
        Value::Object(_) | Value::Array(_) => false,
    }
}

fn bytes(wire: Wire<'_>) -> Result<&[u8], String> {
    match wire {
        Wire::Bytes(b) => Ok(b),
        _ => Err("expected a length-delimited value".into()),
    }
}

fn varint(wire: Wire<'_>) -> Result<u64, String> {
    match wire {
        Wire::Varint(v) => Ok(v),
        _ => Err("expected a varint".into()),
    }
}

/// The varints of a packed repeated field, as fields of number 0.
fn packed(mut buf: &[u8]) -> Result<Vec<(u64, Wire<'_>)>, String> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        out.push((0, Wire::Varint(super::varint(&mut buf)?)));
    }
    Ok(out)
}

/// A `map<string, V>` entry: `key` (1) and `value` (2); a missing value is V's zero.
fn map_entry(value: &Ty, buf: &[u8], depth: usize) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut v = None;
    for (number, wire) in fields(buf)? {
        match number {
            1 => key = text(bytes(wire)?),
            2 => v = Some(scalar(value, wire, depth)?),
            _ => {}
        }
    }
    let zero = || match value {
        Ty::Msg(_) => Value::Object(Map::new()),
        Ty::Time | Ty::MicroTime => Value::Null,
        Ty::Quantity => Value::from("0"),
        _ => Value::String(String::new()),
    };
    Ok((key, v.unwrap_or_else(zero)))
}

/// Go's `string(bytes)` carried into JSON: invalid UTF-8 becomes U+FFFD, as `encoding/json`
/// writes it.
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scalar(ty: &Ty, wire: Wire<'_>, depth: usize) -> Result<Value, String> {
    Ok(match ty {
        Ty::Str => text(bytes(wire)?).into(),
        // int32 and int64 alike: a negative int32 is sign-extended to ten bytes.
        Ty::Int => (varint(wire)? as i64).into(),
        Ty::Bool => (varint(wire)? != 0).into(),
        Ty::Time | Ty::MicroTime => time(ty, bytes(wire)?)?,
        Ty::IntOrString => int_or_string(bytes(wire)?)?,
        Ty::Quantity => {
            let f = fields(bytes(wire)?)?;
            text(super::get(&f, 1).unwrap_or_default()).into()
        }
        Ty::RawJson => {
            let f = fields(bytes(wire)?)?;
            match super::get(&f, 1).unwrap_or_default() {
                // An empty RawExtension is Go's nil: `null`.
                [] => Value::Null,
                raw => serde_json::from_slice(raw).map_err(|e| format!("raw JSON: {e}"))?,
            }
        }
        Ty::Msg(schema) => Value::Object(message(schema, bytes(wire)?, depth + 1)?),
        Ty::Inline(_) | Ty::Map(_) => unreachable!("inline and map fields are set by `set`"),
    })
}

/// `metav1.Time` or `MicroTime` (`seconds` 1, `nanos` 2) as their JSON; Go's zero time is
/// `null`, as `Time.MarshalJSON` writes it.
fn time(ty: &Ty, buf: &[u8]) -> Result<Value, String> {
    // A zero time marshals as no bytes at all (apimachinery `time_proto.go`).
    if buf.is_empty() {
        return Ok(Value::Null);
    }
    let f = fields(buf)?;
    let number = |n| -> Result<i64, String> {
        super::last(&f, n).map_or(Ok(0), |w| varint(w).map(|v| v as i64))
    };
    let (seconds, nanos) = (number(1)?, number(2)?);
    if seconds == ZERO_TIME_SECONDS && nanos == 0 {
        return Ok(Value::Null);
    }
    let nanos = i32::try_from(nanos).map_err(|_| format!("{nanos} nanoseconds"))?;
    let at = Timestamp::new(seconds, nanos).map_err(|e| e.to_string())?;
    let v = match ty {
        Ty::MicroTime => serde_json::to_value(MicroTime(at)),
        _ => serde_json::to_value(Time(at)),
    };
    v.map_err(|e| e.to_string())
}

/// `intstr.IntOrString` (`type` 1: 0 an int, 1 a string; `intVal` 2; `strVal` 3).
fn int_or_string(buf: &[u8]) -> Result<Value, String> {
    let f = fields(buf)?;
    let last = |n| super::last(&f, n);
    match last(1).map(varint).transpose()?.unwrap_or(0) {
        0 => Ok((last(2).map(varint).transpose()?.unwrap_or(0) as i32).into()),
        1 => Ok(text(last(3).map(bytes).transpose()?.unwrap_or_default()).into()),
        t => Err(format!(
            "IntOrString type {t} is neither 0 (int) nor 1 (string)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A length-delimited field.
    fn ld(number: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = varint_bytes(number << 3 | 2);
        out.extend(varint_bytes(bytes.len() as u64));
        out.extend_from_slice(bytes);
        out
    }

    /// A varint field.
    fn vi(number: u64, v: u64) -> Vec<u8> {
        let mut out = varint_bytes(number << 3);
        out.extend(varint_bytes(v));
        out
    }

    fn varint_bytes(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    fn body(api_version: &str, kind: &str, object: &[u8]) -> Vec<u8> {
        let type_meta = [ld(1, api_version.as_bytes()), ld(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), ld(1, &type_meta), ld(2, object)].concat()
    }

    #[test]
    fn a_service_decodes_to_the_json_kubectl_would_have_sent() {
        let label = [ld(1, b"app"), ld(2, b"web")].concat();
        // A zero Time is written as an empty message (client-go) or, by hand, as Go's zero.
        let zero_time = [vi(1, ZERO_TIME_SECONDS as u64)].concat();
        let meta = [
            ld(1, b"web"),
            ld(2, b""),
            ld(8, b""),
            ld(9, &zero_time),
            ld(11, &label),
        ]
        .concat();
        let target = [vi(1, 1), ld(3, b"http")].concat();
        let port = [ld(1, b"http"), vi(3, 80), ld(4, &target), vi(5, 0)].concat();
        let spec = [ld(1, &port), ld(2, &label), ld(4, b"ClusterIP")].concat();
        let object = [
            ld(1, &meta),
            ld(2, &spec),
            ld(3, b""),
            ld(99, b"a later field"),
        ]
        .concat();
        let v = object_of(&body("v1", "Service", &object));
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "Service",
                // A set pointer to a zero time is Go's `null`, as encoding/json writes it.
                "metadata": {"name": "web", "labels": {"app": "web"}, "deletionTimestamp": null},
                "status": {},
                "spec": {
                    "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
                    "selector": {"app": "web"},
                    "type": "ClusterIP",
                },
            })
        );
    }

    fn object_of(b: &[u8]) -> Value {
        object(b, false).unwrap()
    }

    fn object_of_kind(b: &[u8]) -> Result<Value, Refusal> {
        object(b, false)
    }

    #[test]
    fn pointers_keep_their_zero_and_values_drop_it() {
        // PodDisruptionBudget: minAvailable is a pointer (an IntOrString 0 is kept), the
        // selector's matchExpressions repeat, a negative int32 is sign-extended.
        let zero = [vi(1, 0), vi(2, 0)].concat();
        let expr = [ld(1, b"tier"), ld(2, b"In"), ld(3, b"a"), ld(3, b"b")].concat();
        let selector = ld(2, &expr);
        let spec = [ld(1, &zero), ld(2, &selector)].concat();
        let status = vi(3, -1i64 as u64);
        let object = [ld(1, &ld(1, b"p")), ld(2, &spec), ld(3, &status)].concat();
        let v = object_of(&body("policy/v1", "PodDisruptionBudget", &object));
        assert_eq!(v["spec"]["minAvailable"], json!(0));
        assert_eq!(
            v["spec"]["selector"],
            json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]})
        );
        assert_eq!(v["status"]["disruptionsAllowed"], json!(-1));
    }

    #[test]
    fn times_quantities_inline_fields_and_packed_ints_decode() {
        // A Pod: a hostPath volume (VolumeSource is inline in Volume), a container with a
        // resource limit, a deletion time, supplemental groups packed.
        let host_path = ld(1, b"/");
        let volume = [ld(1, b"root"), ld(2, &ld(1, &host_path))].concat();
        let limit = [ld(1, b"cpu"), ld(2, &ld(1, b"500m"))].concat();
        let container = [ld(1, b"c"), ld(2, b"busybox"), ld(8, &ld(1, &limit))].concat();
        let groups = [varint_bytes(1000), varint_bytes(2000)].concat();
        let security = ld(4, &groups);
        let spec = [ld(1, &volume), ld(2, &container), ld(14, &security)].concat();
        let deleted = [vi(1, 1_704_067_200), vi(2, 0)].concat();
        let meta = [ld(1, b"p"), ld(9, &deleted)].concat();
        let v = object_of(&body("v1", "Pod", &[ld(1, &meta), ld(2, &spec)].concat()));
        assert_eq!(
            v["metadata"]["deletionTimestamp"],
            json!("2024-01-01T00:00:00Z")
        );
        assert_eq!(
            v["spec"]["volumes"],
            json!([{"name": "root", "hostPath": {"path": "/"}}])
        );
        assert_eq!(
            v["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "500m"}})
        );
        assert_eq!(
            v["spec"]["securityContext"]["supplementalGroups"],
            json!([1000, 2000])
        );
    }

    #[test]
    fn bad_bytes_and_other_kinds_are_refused_with_the_field_named() {
        let Err(Refusal::Kind(why)) = object_of_kind(&body("batch/v1", "Job", &[])) else {
            panic!("a Job is not read");
        };
        assert!(why.contains("\"Job\" (batch/v1)"), "{why}");
        // A string field sent as a varint.
        let bad = ld(1, &vi(1, 7));
        let Err(Refusal::Malformed(why)) = object_of_kind(&body("v1", "Namespace", &bad)) else {
            panic!("a varint name is malformed");
        };
        assert_eq!(
            why,
            "Namespace.metadata: ObjectMeta.name: expected a length-delimited value"
        );
        let cut = &body("v1", "Namespace", &ld(1, &ld(1, b"x")))[..12];
        assert!(matches!(object(cut, false), Err(Refusal::Malformed(_))));
        let Err(Refusal::Malformed(why)) = object(b"{\"kind\":\"Namespace\"}", false) else {
            panic!("JSON is not protobuf");
        };
        assert!(why.contains("prefix"), "{why}");
    }

    #[test]
    fn a_delete_body_without_a_kind_is_its_options_and_empty_raw_json_is_null() {
        let v = object(&body("", "", &vi(1, 30)), true).unwrap();
        assert_eq!(
            v,
            json!({"kind": "DeleteOptions", "gracePeriodSeconds": 30})
        );
        assert!(matches!(
            object(&body("", "", &vi(1, 30)), false),
            Err(Refusal::Kind(_))
        ));
        let revision = [ld(1, &ld(1, b"r")), ld(2, b""), vi(3, 2)].concat();
        let v = object_of(&body("apps/v1", "ControllerRevision", &revision));
        assert_eq!(v.get("data"), None, "{v}");
        assert_eq!(v["revision"], json!(2));
    }
}
