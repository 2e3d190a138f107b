//! Request parameters: label selectors in their string form (apimachinery
//! `staging/src/k8s.io/apimachinery/pkg/labels/selector.go` `Parse`), field selectors
//! (`pkg/fields/selector.go`; the fields each kind supports come from its registry strategy,
//! e.g. `pkg/registry/core/pod/strategy.go` `ToSelectableFields`), and `Status` replies.

use super::proto::Refusal;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use serde_json::{json, Value};

use crate::api::{KindId, Selector};

/// What the core answers: a JSON body with a status code, or a watch stream.
pub enum Reply {
    Json {
        code: u16,
        body: String,
    },
    /// `text/plain` (the health checks' `ok`).
    Text {
        code: u16,
        body: String,
    },
    /// Another media type (the OpenAPI v2 document as protobuf).
    Typed {
        code: u16,
        content_type: &'static str,
        body: String,
    },
    Watch {
        rx: tokio::sync::mpsc::Receiver<super::stream::Line>,
        timeout_s: Option<u64>,
    },
    /// A reply with admission warnings, each sent as a `Warning: 299 - "..."` header (kubectl
    /// prints `Warning: ...`).
    Warned {
        reply: Box<Reply>,
        warnings: Vec<String>,
    },
}

impl Reply {
    pub fn ok(v: &Value) -> Reply {
        Reply::json(200, v)
    }

    pub fn json(code: u16, v: &Value) -> Reply {
        Reply::Json {
            code,
            body: v.to_string(),
        }
    }
}

/// A `metav1.Status` failure (apimachinery `pkg/api/errors/errors.go`).
pub fn status_value(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut v = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if let Some(d) = details {
        v["details"] = d;
    }
    v
}

pub fn failure(code: u16, reason: &str, message: impl AsRef<str>) -> Reply {
    Reply::json(code, &status_value(code, reason, message.as_ref(), None))
}

pub fn bad_request(message: impl AsRef<str>) -> Reply {
    failure(400, "BadRequest", message)
}

/// apimachinery's `NewMethodNotSupported`, whose Status carries (empty) details.
pub fn method_not_allowed(method: &str) -> Reply {
    let message = format!("{method} is not supported on this path");
    let v = status_value(405, "MethodNotAllowed", &message, Some(json!({})));
    Reply::json(405, &v)
}

/// apimachinery's `NewGenericServerResponse(404, ...)` for a path nothing serves: its Status
/// carries `details: {}` (kubectl reads the field without a nil check, e.g. `kubectl debug`).
pub fn not_found_path() -> Reply {
    let message = "the server could not find the requested resource";
    Reply::json(
        404,
        &status_value(404, "NotFound", message, Some(json!({}))),
    )
}

/// A boolean query parameter as the apiserver reads one (apimachinery
/// `Convert_Slice_string_To_bool`): absent, `0` or `false` (any case) is false; any other
/// value, an empty one included, is true.
pub fn flag(q: &BTreeMap<String, String>, key: &str) -> bool {
    q.get(key)
        .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// Decode `a=b&c=d` (percent-decoding, `+` as space). A parameter given twice takes its first
/// value, as the apiserver's parameter codec does (apimachinery runtime/conversion.go
/// `Convert_Slice_string_To_string` and its siblings read `(*in)[0]`).
pub fn parse_query(q: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for kv in q.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        out.entry(percent_decode(k))
            .or_insert_with(|| percent_decode(v));
    }
    out
}

pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(x) => {
                        out.push(x);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn valid_key(k: &str) -> bool {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
    });
    name_ok && prefix_ok
}

fn valid_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric()))
}

/// Split on commas outside parentheses.
fn terms(s: &str) -> Result<Vec<String>, String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err("unbalanced parentheses".into());
        }
        cur.push(c);
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    out.push(cur);
    Ok(out)
}

fn requirement(key: &str, op: &str, values: Vec<String>) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.to_string(),
        operator: op.to_string(),
        values: (!values.is_empty()).then_some(values),
    }
}

/// Parse `a=b,c!=d,e in (x,y),f notin (z),g,!h` into a `Selector`.
pub fn label_selector(s: &str) -> Result<Selector, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Selector::everything());
    }
    let bad = |t: &str| format!("unable to parse requirement: {t:?}: invalid label selector");
    let mut reqs = Vec::new();
    let mut compares = Vec::new();
    for term in terms(s)? {
        let t = term.trim();
        if let Some(c) = comparison(t) {
            compares.push(c.map_err(|why| format!("{}: {why}", bad(t)))?);
            continue;
        }
        let req = if let Some(k) = t.strip_prefix('!') {
            let k = k.trim();
            valid_key(k).then(|| requirement(k, "DoesNotExist", vec![]))
        } else if let Some((k, v)) = t.split_once("!=") {
            let (k, v) = (k.trim(), v.trim());
            (valid_key(k) && valid_value(v)).then(|| requirement(k, "NotIn", vec![v.into()]))
        } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
            let (k, v) = (k.trim(), v.trim());
            (valid_key(k) && valid_value(v)).then(|| requirement(k, "In", vec![v.into()]))
        } else if let Some(open) = t.find('(') {
            let head: Vec<&str> = t[..open].split_whitespace().collect();
            let body = t[open + 1..].strip_suffix(')');
            match (head.as_slice(), body) {
                ([k, op], Some(body)) if valid_key(k) && (*op == "in" || *op == "notin") => {
                    // apimachinery `parseValues`: a set, where `()` and a stray comma
                    // stand for the empty value ("").
                    let values: std::collections::BTreeSet<String> =
                        body.split(',').map(|v| v.trim().to_string()).collect();
                    let op = if *op == "in" { "In" } else { "NotIn" };
                    values
                        .iter()
                        .all(|v| valid_value(v))
                        .then(|| requirement(k, op, values.into_iter().collect()))
                }
                _ => None,
            }
        } else {
            valid_key(t).then(|| requirement(t, "Exists", vec![]))
        };
        reqs.push(req.ok_or_else(|| bad(t))?);
    }
    let ls = LabelSelector {
        match_expressions: Some(reqs),
        match_labels: None,
    };
    let selector = Selector::from_label_selector(Some(&ls))?;
    Ok(compares
        .into_iter()
        .fold(selector, |s, (k, ord, n)| s.and_compare(&k, ord, n)))
}

/// A `key>n` or `key<n` term (apimachinery `labels.Parse`'s `gt` and `lt`), if it is one:
/// the value must be an integer.
fn comparison(t: &str) -> Option<Result<(String, std::cmp::Ordering, i64), String>> {
    let (k, v, ord) = match (t.split_once('>'), t.split_once('<')) {
        (Some((k, v)), None) => (k, v, std::cmp::Ordering::Greater),
        (None, Some((k, v))) => (k, v, std::cmp::Ordering::Less),
        _ => return None,
    };
    let (k, v) = (k.trim(), v.trim());
    if !valid_key(k) {
        return Some(Err(format!("invalid label key {k:?}")));
    }
    Some(
        v.parse::<i64>()
            .map(|n| (k.to_string(), ord, n))
            .map_err(|_| "for 'Gt', 'Lt' operators, the value must be an integer".to_string()),
    )
}

/// One `field=value` (or `==`, `!=`) term of a field selector.
#[derive(Clone, Debug)]
pub struct FieldReq {
    pub pointer: String,
    /// What the field reads as when the object does not have it.
    pub absent: &'static str,
    pub value: String,
    pub equal: bool,
}

/// The fields a field selector may name for `kind` (kubernetes `ToSelectableFields` of each
/// kind's strategy, v1.33: `pkg/registry/core/pod/strategy.go`, `node/strategy.go`), each with
/// the value an absent one reads as (`false` for a boolean): metadata.name and
/// metadata.namespace for every kind; for pods the node, restart policy, scheduler, service
/// account, host network, phase, IP and nominated node; for nodes `spec.unschedulable`.
fn field_pointer(kind: KindId, field: &str) -> Option<(&'static str, &'static str)> {
    let pointer = match (kind, field) {
        (_, "metadata.name") => "/metadata/name",
        (_, "metadata.namespace") => "/metadata/namespace",
        (KindId::Pod, "spec.nodeName") => "/spec/nodeName",
        (KindId::Pod, "spec.restartPolicy") => "/spec/restartPolicy",
        (KindId::Pod, "spec.schedulerName") => "/spec/schedulerName",
        (KindId::Pod, "spec.serviceAccountName") => "/spec/serviceAccountName",
        (KindId::Pod, "spec.hostNetwork") => return Some(("/spec/hostNetwork", "false")),
        (KindId::Pod, "status.phase") => "/status/phase",
        (KindId::Pod, "status.podIP") => "/status/podIP",
        (KindId::Pod, "status.nominatedNodeName") => "/status/nominatedNodeName",
        (KindId::Node, "spec.unschedulable") => return Some(("/spec/unschedulable", "false")),
        _ => return None,
    };
    Some((pointer, ""))
}

pub fn field_selector(kind: KindId, s: &str) -> Result<Vec<FieldReq>, String> {
    let mut out = Vec::new();
    for t in split_unescaped(s)
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
    {
        let (field, value, equal) = if let Some((f, v)) = t.split_once("!=") {
            (f, v, false)
        } else if let Some((f, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
            (f, v, true)
        } else {
            return Err(format!("invalid selector: '{s}'; can't understand '{t}'"));
        };
        let (pointer, absent) = field_pointer(kind, field.trim())
            .ok_or_else(|| format!("field label not supported: {}", field.trim()))?;
        out.push(FieldReq {
            pointer: pointer.to_string(),
            absent,
            value: unescape(value.trim())?,
            equal,
        });
    }
    Ok(out)
}

/// A field selector's terms: split at each `,` not escaped by a backslash (apimachinery
/// `fields.splitTerms`).
fn split_unescaped(s: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&s[start..]);
    terms
}

/// A field selector's value with its escapes read (apimachinery `fields.UnescapeValue`):
/// `\\`, `\,` and `\=` stand for themselves; another escape, or a value ending in a lone
/// backslash, is an error.
fn unescape(v: &str) -> Result<String, String> {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '=' || c == ',' {
            return Err(format!(
                "invalid field selector value {v:?}: unescaped {c:?}"
            ));
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(e @ ('\\' | ',' | '=')) => out.push(e),
            Some(_) => {
                return Err(format!(
                    "invalid field selector value {v:?}: invalid escape sequence"
                ))
            }
            None => {
                return Err(format!(
                    "invalid field selector value {v:?}: unterminated escape sequence"
                ))
            }
        }
    }
    Ok(out)
}

/// A watch's `timeoutSeconds` (kube-apiserver `handlers/get.go` `ListResource`): 0 or none
/// means its default (30 to 60 minutes: here, until the client leaves); a negative timeout is
/// a duration already over, so the watch ends at once; a non-number is a 400.
pub fn watch_timeout(q: &BTreeMap<String, String>) -> Result<Option<u64>, Reply> {
    match q.get("timeoutSeconds").map(|s| (s, s.parse::<i64>())) {
        None | Some((_, Ok(0))) => Ok(None),
        Some((_, Ok(n))) => Ok(Some(u64::try_from(n).unwrap_or(0))),
        Some((v, Err(_))) => Err(bad_request(format!(
            "invalid timeoutSeconds {v:?}: not an integer"
        ))),
    }
}

/// The objects of a resource served without a store (namespaces, CRDs) that a list's label
/// and field selectors pick; `metadata.name` selects as for any cluster-scoped kind.
pub fn select_derived(
    items: Vec<Value>,
    q: &BTreeMap<String, String>,
) -> Result<Vec<Value>, Reply> {
    let labels =
        label_selector(q.get("labelSelector").map_or("", String::as_str)).map_err(bad_request)?;
    let fields = field_selector(
        KindId::Node,
        q.get("fieldSelector").map_or("", String::as_str),
    )
    .map_err(bad_request)?;
    Ok(items
        .into_iter()
        .filter(|o| {
            let l: Option<BTreeMap<String, String>> =
                serde_json::from_value(o["metadata"]["labels"].clone()).ok();
            labels.matches(l.as_ref()) && fields_match(&fields, o)
        })
        .collect())
}

pub fn fields_match(reqs: &[FieldReq], obj: &Value) -> bool {
    reqs.iter().all(|r| {
        let v = match obj.pointer(&r.pointer) {
            Some(Value::String(s)) => s.as_str(),
            Some(Value::Bool(true)) => "true",
            Some(Value::Bool(false)) => "false",
            _ => r.absent,
        };
        (v == r.value) == r.equal
    })
}

/// Decode a request body as JSON, or as YAML for `application/apply-patch+yaml`.
pub fn body_value(body: &[u8], yaml: bool) -> Result<Value, Reply> {
    let text = std::str::from_utf8(body).map_err(|_| bad_request("the body is not UTF-8"))?;
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) if !yaml => Err(bad_request(format!(
            "error decoding the request body as JSON: {e}"
        ))),
        Err(_) => serde_saphyr::from_str(text).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("");
            let why = crate::scenario::yaml::our_words(first.trim_start_matches("error: "));
            bad_request(format!("error decoding the request body as YAML: {why}"))
        }),
    }
}

/// A create's or update's body by its `Content-Type`: JSON, YAML as the apiserver also
/// accepts, or the protobuf client-go's typed clients send (`proto::object`: the kinds this
/// server keeps); another media type is a 415 (a request without one is read as JSON).
pub fn object_body(body: &[u8], content_type: &str) -> Result<Value, Reply> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "" | "application/json" | "*/*" => body_value(body, false),
        "application/yaml" => body_value(body, true),
        "application/vnd.kubernetes.protobuf" => super::proto::object(body, false).map_err(|r| match r {
            Refusal::Kind(why) => failure(415, "UnsupportedMediaType", why),
            Refusal::Malformed(why) => bad_request(format!(
                "error decoding the request body as protobuf: {why}"
            )),
        }),
        other => Err(failure(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got {other:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selectors_parse_like_apimachinery() {
        let l = labels(&[("app", "vllm"), ("tier", "a")]);
        let yes = [
            "app=vllm",
            "app==vllm,tier",
            "app in (vllm, x)",
            "tier notin (b),!zone",
            "app!=other",
            "",
            // `()` is the set of the empty value: no label here has it.
            "tier notin ()",
            "app in (vllm,)",
        ];
        for s in yes {
            assert!(label_selector(s).unwrap().matches(Some(&l)), "{s}");
        }
        for s in ["app=x", "!app", "zone", "tier in (b)", "tier in ()"] {
            assert!(!label_selector(s).unwrap().matches(Some(&l)), "{s}");
        }
        for s in [
            "app=(", "a b", "app in x", "=x", "app=v!", "gpu>x", ">3", "a<b<c",
        ] {
            assert!(label_selector(s).is_err(), "{s}");
        }
        // `>` and `<` compare integers; a label that is not one does not match.
        let l = labels(&[("gpus", "8"), ("app", "vllm")]);
        for (s, hit) in [
            ("gpus>4", true),
            ("gpus<4", false),
            ("gpus > 7,app", true),
            ("app>1", false),
            ("zone<9", false),
        ] {
            assert_eq!(label_selector(s).unwrap().matches(Some(&l)), hit, "{s}");
        }
    }

    #[test]
    fn field_selector_values_read_their_escapes() {
        let reqs = field_selector(KindId::Pod, r"metadata.name=a\,b,spec.nodeName=n\\").unwrap();
        let values: Vec<&str> = reqs.iter().map(|r| r.value.as_str()).collect();
        assert_eq!(values, [r"a,b", r"n\"]);
        for bad in [
            r"metadata.name=a\",
            r"metadata.name=a\x",
            "metadata.name=a=b",
        ] {
            assert!(
                field_selector(KindId::Pod, bad)
                    .unwrap_err()
                    .contains("escape"),
                "{bad}"
            );
        }
    }

    #[test]
    fn booleans_are_false_only_when_absent_zero_or_false() {
        let q = parse_query("a=true&b=1&c=maybe&d=&e=0&f=FALSE&g=False");
        let got: Vec<bool> = ["a", "b", "c", "d", "e", "f", "g", "h"]
            .iter()
            .map(|k| flag(&q, k))
            .collect();
        assert_eq!(got, [true, true, true, true, false, false, false, false]);
    }

    #[test]
    fn a_parameter_given_twice_takes_its_first_value() {
        let q = parse_query("watch=false&limit=5&watch=true&limit=500&dryRun=All&dryRun=");
        assert_eq!(q["watch"], "false");
        assert_eq!(q["limit"], "5");
        assert!(!flag(&q, "watch"));
        assert_eq!(q["dryRun"], "All");
    }

    #[test]
    fn queries_decode() {
        let q = parse_query("labelSelector=app%3Dvllm%2Ctier&watch=true&x=a+b");
        assert_eq!(q["labelSelector"], "app=vllm,tier");
        assert_eq!(q["watch"], "true");
        assert_eq!(q["x"], "a b");
        assert!(field_selector(KindId::Pod, "spec.nodeName=node-1").is_ok());
        assert!(field_selector(KindId::Service, "spec.nodeName=node-1").is_err());
        let host = field_selector(KindId::Pod, "spec.hostNetwork=false").unwrap();
        assert!(fields_match(&host, &json!({"spec": {}})));
        assert!(!fields_match(
            &host,
            &json!({"spec": {"hostNetwork": true}})
        ));
        let sched = field_selector(KindId::Pod, "spec.schedulerName=default-scheduler").unwrap();
        assert!(fields_match(
            &sched,
            &json!({"spec": {"schedulerName": "default-scheduler"}})
        ));
        assert!(field_selector(KindId::Node, "spec.unschedulable=true").is_ok());
    }
}
