//! The resource verbs: get, list, create, update, patch (merge, strategic as merge, JSON patch,
//! apply), delete, dry runs of each, and the `/status` and `/scale` subresources, each through
//! the same `ApiServer` calls (and so the same defaulting, admission webhooks and
//! resourceVersions) the simulation uses.
//! Errors are `metav1.Status` objects (apimachinery `pkg/api/errors/errors.go`).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::api::{
    patch::merge_patch, ApiError, ApiServer, DeleteOptions, Deleted, Kind, KindId, Propagation,
    Reason,
};

use super::query::{bad_request, failure, fields_match, status_value, FieldReq, Reply};
use super::resources::Resource;

// The body decoders live beside `Reply` so modules below `ops` (`reviews.rs`) can use them.
pub use super::query::{body_value, object_body};

pub fn api_error(e: &ApiError, r: &Resource, name: &str) -> Reply {
    let reason = format!("{:?}", e.reason);
    // The API server names the resource, not the Kind: `pods "x" not found`,
    // `leaderworkersets.leaderworkerset.x-k8s.io "x" already exists`.
    let qualified = if r.group.is_empty() {
        r.plural.to_string()
    } else {
        format!("{}.{}", r.plural, r.group)
    };
    let named = format!("{} \"", r.kind.as_str());
    let message = match e.reason {
        Reason::NotFound | Reason::AlreadyExists | Reason::Conflict => {
            e.message.replacen(&named, &format!("{qualified} \""), 1)
        }
        // The namespace lifecycle's refusal names the resource too; a webhook's does not.
        Reason::Forbidden if e.message.starts_with(&named) => {
            e.message.replacen(&named, &format!("{qualified} \""), 1)
        }
        _ => e.message.clone(),
    };
    let e = &ApiError {
        message,
        ..e.clone()
    };
    let mut details = json!({"name": name, "group": r.group, "kind": r.plural});
    if e.reason == Reason::TooManyRequests {
        // `NewTooManyRequests` names no object: its details hold only the causes.
        details = json!({});
    }
    let mut e = e.clone();
    if e.code == 422 {
        // An Invalid status (`NewInvalid`) reads `<Kind> "<name>" is invalid: <field>: <why>`
        // and lists the cause by field: kubectl prints `The <Kind> "<name>" is invalid:
        // <field>: <why>` from the causes, and without any it drops the message.
        let cause = e
            .message
            .split_once(" is invalid: ")
            .map_or(e.message.as_str(), |(_, c)| c)
            .to_string();
        let (field, why) = cause
            .split_once(": ")
            .filter(|(f, _)| !f.is_empty() && !f.contains(' '))
            .unwrap_or(("", cause.as_str()));
        let kind = match r.group {
            "" => r.kind.as_str().to_string(),
            group => format!("{}.{group}", r.kind.as_str()),
        };
        e.message = format!("{kind} {name:?} is invalid: {cause}");
        details["kind"] = json!(r.kind.as_str());
        if e.causes.is_empty() {
            details["causes"] =
                json!([{"reason": "FieldValueInvalid", "field": field, "message": why}]);
        }
    }
    if !e.causes.is_empty() {
        let causes: Vec<Value> = e
            .causes
            .iter()
            .map(|c| {
                // `StatusCause.Field` is `omitempty`.
                let mut v = json!({"reason": c.reason, "message": c.message});
                if !c.field.is_empty() {
                    v["field"] = json!(c.field);
                }
                v
            })
            .collect();
        details["causes"] = json!(causes);
    }
    let e = &e;
    Reply::json(
        e.code,
        &status_value(e.code, &reason, &e.message, Some(details)),
    )
}

pub fn to_value<K: Kind>(obj: &K) -> Value {
    serde_json::to_value(obj).expect("stored objects serialize")
}

/// The query parameters of a resource request, checked as the apiserver's parameter decoding
/// and options validation check them, each only by the requests whose options carry it (the
/// others are not decoded): a read's `limit` or `timeoutSeconds` that is not a number is a
/// 400; a write's
/// `fieldManager` longer than 128 bytes or not printable, or a `fieldValidation` other than
/// `Ignore`, `Warn` or `Strict`, is a 422, and so is `force` on a patch that is not an apply.
/// (A boolean takes any value: `query::flag`.)
pub fn check_query(
    q: &BTreeMap<String, String>,
    method: &str,
    content_type: &str,
) -> Result<(), Reply> {
    let write = matches!(method, "POST" | "PUT" | "PATCH");
    // ListOptions' numbers (a read's; a watch checks its timeout again for its own use).
    for field in ["limit", "timeoutSeconds"]
        .into_iter()
        .filter(|_| method == "GET")
    {
        if let Some(l) = q.get(field).filter(|l| l.parse::<i64>().is_err()) {
            return Err(bad_request(format!(
                "{field}: invalid value {l:?}: not an integer"
            )));
        }
    }
    if let Some(m) = q.get("fieldManager").filter(|_| write) {
        if m.len() > 128 || !m.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            return Err(failure(
                422,
                "Invalid",
                "fieldManager: Invalid value: must be at most 128 printable ASCII characters",
            ));
        }
    }
    // `ValidateFieldValidation` (apimachinery meta/v1/validation at v0.33.0).
    if let Some(v) = q.get("fieldValidation").filter(|_| write) {
        if !["", "Ignore", "Strict", "Warn"].contains(&v.as_str()) {
            return Err(failure(
                422,
                "Invalid",
                format!("fieldValidation: Unsupported value: {v:?}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""),
            ));
        }
    }
    let apply = content_type.starts_with("application/apply-patch");
    if method == "PATCH" && super::query::flag(q, "force") && !apply {
        return Err(failure(
            422,
            "Invalid",
            "force: Forbidden: may not be specified for non-apply patch",
        ));
    }
    Ok(())
}

/// `prefixFromUserAgent` (apiserver handlers/create.go at v0.33.0): the User-Agent up to its
/// first `/`, without unprintable characters, cut to the 128 bytes a field manager may have
/// (`kubectl/v1.33.0 (linux/amd64) ...` is `kubectl`; no User-Agent, an empty manager). Go's
/// `unicode.IsPrint` is taken as "not a control character and not a space other than ' '".
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let product = user_agent.split('/').next().unwrap_or("");
    let mut manager = String::new();
    for c in product
        .chars()
        .filter(|&c| !c.is_control() && (c == ' ' || !c.is_whitespace()))
    {
        if manager.len() + c.len_utf8() > 128 {
            break;
        }
        manager.push(c);
    }
    manager
}

/// A list's options, checked as apimachinery's `ValidateListOptions` does (a 422 naming the
/// field; `pkg/apis/meta/internalversion/validation/validation.go` @v0.33.0), then answered as
/// far as a store without history can: `Exact` at a resourceVersion that is not the current one
/// is a 410 (the version is gone, so the client relists, as after a compaction), and a version
/// the server has not reached (`NotOlderThan`, or a bare `resourceVersion` other than "0",
/// which means the same) a 504 "Too large resource version" as the watch cache answers.
pub fn check_list_options(q: &BTreeMap<String, String>, current: u64) -> Result<(), Reply> {
    let rv = q.get("resourceVersion").map_or("", String::as_str);
    // apiserver's storage parses any given resourceVersion (`ParseResourceVersion`): 400.
    if !rv.is_empty() && rv.parse::<u64>().is_err() {
        return Err(bad_request(format!("invalid resourceVersion {rv:?}")));
    }
    let m = q.get("resourceVersionMatch").map_or("", String::as_str);
    let mut errs = Vec::new();
    if !m.is_empty() {
        if rv.is_empty() {
            errs.push("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".to_string());
        }
        if q.get("continue").is_some_and(|c| !c.is_empty()) {
            errs.push("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided".to_string());
        }
        if m != "Exact" && m != "NotOlderThan" {
            errs.push(format!("resourceVersionMatch: Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""));
        }
        if m == "Exact" && rv == "0" {
            errs.push("resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".to_string());
        }
    }
    if q.contains_key("sendInitialEvents") {
        errs.push(
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list".to_string(),
        );
    }
    invalid_options(errs)?;
    // etcd3 store `GetList`: a continuation reads at the first page's version.
    if q.get("continue").is_some_and(|c| !c.is_empty()) && !rv.is_empty() && rv != "0" {
        return Err(bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    let Ok(n) = rv.parse::<u64>() else {
        return Ok(());
    };
    if m == "Exact" && n != current {
        return Err(failure(
            410,
            "Expired",
            format!("too old resource version: {n} ({current})"),
        ));
    }
    if n > current {
        return Err(too_large(n, current));
    }
    Ok(())
}

/// A watch's options (`validateWatchOptions`, same file): `sendInitialEvents` needs
/// `resourceVersionMatch=NotOlderThan`, which needs `sendInitialEvents`.
pub fn check_watch_options(q: &BTreeMap<String, String>) -> Result<(), Reply> {
    let m = q.get("resourceVersionMatch").map_or("", String::as_str);
    let initial = q.contains_key("sendInitialEvents");
    let mut errs = Vec::new();
    if initial && m != "NotOlderThan" {
        errs.push("resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan".to_string());
    }
    if !m.is_empty() {
        if !initial {
            errs.push("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".to_string());
        }
        if m != "NotOlderThan" {
            errs.push(format!(
                "resourceVersionMatch: Unsupported value: {m:?}: supported values: \"NotOlderThan\""
            ));
        }
        if q.get("continue").is_some_and(|c| !c.is_empty()) {
            errs.push("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided".to_string());
        }
    }
    invalid_options(errs)
}

/// `ListOptions.meta.k8s.io "" is invalid: ...` for the errors (an aggregate in brackets).
fn invalid_options(errs: Vec<String>) -> Result<(), Reply> {
    let why = match errs.as_slice() {
        [] => return Ok(()),
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    Err(failure(
        422,
        "Invalid",
        format!("ListOptions.meta.k8s.io \"\" is invalid: {why}"),
    ))
}

/// `storage.NewTooLargeResourceVersionError` (apiserver `pkg/storage/errors.go` @v0.33.0): a
/// 504 whose cause client-go's reflector looks for before it relists from the latest version.
pub fn too_large(n: u64, current: u64) -> Reply {
    Reply::json(504, &too_large_status(n, current))
}

/// The `Status` of `too_large`, also sent as a watch's ERROR event.
pub fn too_large_status(n: u64, current: u64) -> Value {
    let msg = format!("Timeout: Too large resource version: {n}, current: {current}");
    let details = json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    });
    status_value(504, "Timeout", &msg, Some(details))
}

/// Whether the request is a dry run: `?dryRun=All`, or for a DELETE the body's
/// `DeleteOptions.dryRun: ["All"]` (where kubectl puts it). Any other value is 422, as the
/// apiserver's options validation answers.
pub fn dry_run(method: &str, query: &BTreeMap<String, String>, body: &[u8]) -> Result<bool, Reply> {
    let mut values: Vec<String> = query
        .get("dryRun")
        .filter(|v| !v.is_empty())
        .cloned()
        .into_iter()
        .collect();
    if method == "DELETE" && !body.is_empty() {
        if let Ok(body) = serde_json::from_slice::<Value>(body) {
            let listed = body.get("dryRun").and_then(Value::as_array);
            values.extend(listed.into_iter().flatten().map(|v| match v.as_str() {
                Some(s) => s.to_string(),
                None => v.to_string(),
            }));
        }
    }
    match values.iter().find(|v| v.as_str() != "All") {
        Some(other) => Err(failure(
            422,
            "Invalid",
            format!("dryRun: Unsupported value: {other:?}: supported values: \"All\""),
        )),
        None => Ok(!values.is_empty()),
    }
}

/// A PATCH's type, by its `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    /// The patch type of `content_type`; another media type is a 415.
    pub fn of(content_type: &str) -> Result<PatchType, Reply> {
        match content_type.split(';').next().unwrap_or("").trim() {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" => Ok(PatchType::Apply),
            other => Err(failure(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got {other:?}"))),
        }
    }

    /// The body of a merge, strategic or apply patch (YAML allowed for apply).
    pub fn body(self, body: &[u8]) -> Result<Value, Reply> {
        body_value(body, self == PatchType::Apply)
    }
}

/// An `application/json-patch+json` body: RFC 6902 operations (400 when it is not one).
pub fn json_patch_body(body: &[u8]) -> Result<json_patch::Patch, Reply> {
    serde_json::from_slice(body)
        .map_err(|e| bad_request(format!("error decoding the JSON patch: {e}")))
}

/// Apply JSON patch operations to `doc`; a failed operation (a missing path, a failed `test`)
/// is 422, as kube-apiserver's `jsonPatcher` answers (apiserver
/// `pkg/endpoints/handlers/patch.go`).
pub fn apply_json_patch(doc: &mut Value, patch: &json_patch::Patch) -> Result<(), Reply> {
    if patch.0.len() > JSON_PATCH_OPS_MAX {
        return Err(failure(
            413,
            "RequestEntityTooLarge",
            format!(
                "The allowed maximum operations in a JSON patch is {JSON_PATCH_OPS_MAX}, got {}",
                patch.0.len()
            ),
        ));
    }
    let invalid = |e: json_patch::PatchError| {
        failure(
            422,
            "Invalid",
            format!("the server rejected our request due to an error in our request: {e}"),
        )
    };
    // One operation at a time, so a `copy` is measured before it runs: copies of copies grow a
    // document exponentially with the request's length. (A failure leaves `doc` half patched;
    // callers patch a copy and drop it.)
    let mut copied = 0usize;
    for op in &patch.0 {
        if let json_patch::PatchOperation::Copy(c) = op {
            let size = doc
                .pointer(c.from.as_str())
                .map_or(0, |v| serde_json::to_vec(v).map_or(0, |b| b.len()));
            copied = copied.saturating_add(size);
            if copied > JSON_PATCH_COPY_BYTES_MAX {
                return Err(failure(
                    413,
                    "RequestEntityTooLarge",
                    format!("the JSON patch copies more than {JSON_PATCH_COPY_BYTES_MAX} bytes"),
                ));
            }
        }
        json_patch::patch(doc, std::slice::from_ref(op)).map_err(invalid)?;
    }
    Ok(())
}

/// kube-apiserver's limit on the operations of one JSON patch (`MaxJSONPatchOperations`).
pub const JSON_PATCH_OPS_MAX: usize = 10_000;
/// Ours: the bytes all `copy` operations of one JSON patch may duplicate (the request body
/// limit).
pub const JSON_PATCH_COPY_BYTES_MAX: usize = 16 << 20;

/// Whether the request asks for strict field validation (`?fieldValidation=Strict`, what
/// kubectl sends by default since 1.27).
pub fn strict(query: &BTreeMap<String, String>) -> bool {
    query.get("fieldValidation").is_some_and(|v| v == "Strict")
}

/// The fields of `input` that decoding into the typed object dropped (unknown fields), in the
/// body's order, as dotted paths with list indices: what strict field validation refuses.
fn dropped_fields(input: &Value, decoded: &Value, path: &str, out: &mut Vec<String>) {
    match (input, decoded) {
        (Value::Object(i), Value::Object(d)) => {
            for (k, v) in i {
                let at = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match d.get(k) {
                    _ if v.is_null() => {}
                    None => out.push(at),
                    Some(dv) => dropped_fields(v, dv, &at, out),
                }
            }
        }
        (Value::Array(i), Value::Array(d)) => {
            for (n, (v, dv)) in i.iter().zip(d).enumerate() {
                dropped_fields(v, dv, &format!("{path}[{n}]"), out);
            }
        }
        _ => {}
    }
}

/// `fieldValidation=Strict`'s 400 for the unknown fields of a `K` body, every one listed, as
/// the apiserver's decoder words it (`transformDecodeError` in `handlers/rest.go`, apimachinery
/// `runtime.NewStrictDecodingError`), or None when there are none.
fn strict_error<K: Kind>(input: &Value, decoded: &Value) -> Option<Reply> {
    let mut fields = Vec::new();
    dropped_fields(input, decoded, "", &mut fields);
    if fields.is_empty() {
        return None;
    }
    let kind = K::ID.as_str();
    let api_version = K::ID.api_version();
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    let unknown: Vec<String> = fields
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    Some(bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
        unknown.join(", ")
    )))
}

/// A LeaderWorkerSet body (an object, a merge patch or an apply intent) pruned by the CRD's
/// schema, as the API server decodes a custom resource: a field the schema does not declare is
/// dropped (fieldValidation `Warn`, the default, and `Ignore`), or with `strict` a 400 naming
/// it. The newest release's schema, which declares every field the simulator's type has; the
/// release's own CRD prunes again at admission. Other kinds: unchanged.
pub fn prune_custom<K: Kind>(v: &mut Value, strict: bool) -> Result<(), Reply> {
    if K::ID != KindId::LeaderWorkerSet || !v.is_object() {
        return Ok(());
    }
    let before = strict.then(|| v.clone());
    let schema = lws::crd::schema(lws::profile::Release::V0_10_0);
    if !schema.prune_value(v) {
        return Ok(());
    }
    match before.and_then(|b| strict_error::<K>(&b, v)) {
        Some(refused) => Err(refused),
        None => Ok(()),
    }
}

/// lws-sim's own limits on what an object may hold (`scenario::limits`: a grace period within
/// the simulated horizon, no negative partition), which every scenario file is held to: a 422,
/// so that what `serve` stores a recording can replay.
fn within_limits(v: &Value) -> Result<(), Reply> {
    crate::scenario::limits::check_merge_fields(v)
        .map_err(|(_, why)| failure(422, "Invalid", format!("{why} (an lws-sim limit)")))
}

/// The body as a `K` for the request's namespace (filled in when absent, 400 when different);
/// with `strict`, a field the type does not know is a 400, as `fieldValidation=Strict` answers.
pub fn decode<K: Kind>(v: Value, r: &Resource, ns: Option<&str>, strict: bool) -> Result<K, Reply> {
    within_limits(&v)?;
    let mut v = prepare::<K>(v, r, ns)?;
    prune_custom::<K>(&mut v, strict)?;
    // A LeaderWorkerSet's type refuses unknown fields whatever is asked (the CRD's schema is
    // strict here), and its serialization leaves out empty defaults: compare built-in kinds
    // only, whose k8s-openapi types serialize every field they decoded.
    let input = (strict && K::ID != KindId::LeaderWorkerSet).then(|| v.clone());
    // A custom resource's body is checked against its CRD's schema, whose errors are 422s
    // naming the field (`spec.replicas: Invalid value: "string": ...`, `...: Required
    // value`); a built-in kind's fails its decoder (400).
    let obj: K = if K::ID.custom() {
        let name = v.pointer("/metadata/name").and_then(Value::as_str);
        let name = name.unwrap_or_default().to_string();
        crate::api::decode_at(v)
            .map_err(|m| api_error(&ApiError::new(Reason::Invalid, m), r, &name))?
    } else {
        serde_json::from_value(v)
            .map_err(|e| bad_request(format!("error decoding the object: {e}")))?
    };
    if let Some(refused) = input.and_then(|i| strict_error::<K>(&i, &to_value(&obj))) {
        return Err(refused);
    }
    Ok(obj)
}

/// The body's checks that need no type: a JSON object whose `kind` and `apiVersion`, when
/// given, are the resource's, with the request's namespace filled in (400 when different).
pub fn prepare<K: Kind>(mut v: Value, r: &Resource, ns: Option<&str>) -> Result<Value, Reply> {
    if !v.is_object() {
        return Err(bad_request("the request body is not a JSON object"));
    }
    expect_type(&v, K::ID.as_str(), Some(&r.group_version()))?;
    // `metadata` and its namespace must decode as an ObjectMeta and a string before anything
    // reads them (the apiserver's decoder fails such a body with 400; `null` is an empty one).
    let obj = v.as_object_mut().expect("object");
    if obj.get("metadata").is_some_and(Value::is_null) {
        obj.remove("metadata");
    }
    match obj.get("metadata") {
        Some(m) if !m.is_object() => {
            return Err(bad_request(format!(
                "error decoding the object: metadata: invalid type: {}, expected an object",
                json_type(m)
            )))
        }
        Some(m) if m.get("namespace").is_some_and(|n| !n.is_string() && !n.is_null()) => {
            return Err(bad_request(format!(
                "error decoding the object: metadata.namespace: invalid type: {}, expected a string",
                json_type(&m["namespace"])
            )))
        }
        _ => {}
    }
    if let Some(ns) = ns {
        let meta = obj.entry("metadata").or_insert_with(|| json!({}));
        match meta.get("namespace").and_then(Value::as_str) {
            None | Some("") => meta["namespace"] = json!(ns),
            Some(x) if x != ns => {
                return Err(bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            _ => {}
        }
    }
    Ok(v)
}

/// A body's `kind` and `apiVersion` (`None`: any), when given, are the ones the request
/// expects; else the apiserver decoder's 400.
pub fn expect_type(v: &Value, kind: &str, api_version: Option<&str>) -> Result<(), Reply> {
    let given = |f: &str| v.get(f).and_then(Value::as_str);
    if let Some(k) = given("kind").filter(|k| *k != kind) {
        return Err(bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({kind})"
        )));
    }
    if let (Some(a), Some(want)) = (given("apiVersion"), api_version) {
        if a != want {
            return Err(bad_request(format!(
                "the API version in the data ({a}) does not match the expected API version ({want})"
            )));
        }
    }
    Ok(())
}

/// A JSON value's type as serde words it in a decoding error.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "map",
    }
}

/// A URL's object name the storage cannot key (apiserver registry `NamespaceKeyFunc`, apimachinery
/// `path.IsValidPathSegmentName`): `.` or `..`, or one containing `/` or `%`; a 400.
pub fn invalid_path_name(name: &str) -> Option<String> {
    let why = if name == "." || name == ".." {
        format!("may not be '{name}'")
    } else {
        let bad: Vec<String> = ["/", "%"]
            .iter()
            .filter(|c| name.contains(**c))
            .map(|c| format!("may not contain '{c}'"))
            .collect();
        if bad.is_empty() {
            return None;
        }
        bad.join(";")
    };
    Some(format!("Name parameter invalid: {name:?}: {why}"))
}

pub fn list<K: Kind>(
    api: &ApiServer,
    ns: Option<&str>,
    labels: &crate::api::Selector,
    fields: &[FieldReq],
) -> Vec<Value> {
    list_page::<K>(api, ns, labels, fields, None, None).items
}

/// One page of a list: the matching objects after the key `after` (a continue token's), at
/// most `limit` of them; only these are encoded, so paging through a large world costs each
/// page its own objects, not the whole list's.
pub struct Page {
    pub items: Vec<Value>,
    /// Whether objects match past the page (the list continues).
    pub more: bool,
    /// How many objects match past the page, known without a field selector (which is
    /// matched on the encoded object, so only the next match is looked for).
    pub remaining: Option<usize>,
}

pub fn list_page<K: Kind>(
    api: &ApiServer,
    ns: Option<&str>,
    labels: &crate::api::Selector,
    fields: &[FieldReq],
    after: Option<(&str, &str)>,
    limit: Option<usize>,
) -> Page {
    let all = api.list::<K>(ns, labels);
    fn key<K: Kind>(o: &K) -> (&str, &str) {
        let m = o.meta();
        (
            m.namespace.as_deref().unwrap_or(""),
            m.name.as_deref().unwrap_or(""),
        )
    }
    let start = after.map_or(0, |a| all.partition_point(|o| key(&**o) <= a));
    let limit = limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
    let mut items = Vec::new();
    for (i, o) in all.iter().enumerate().skip(start) {
        if items.len() == limit && fields.is_empty() {
            return Page {
                items,
                more: true,
                remaining: Some(all.len() - i),
            };
        }
        let v = to_value(&**o);
        if !fields_match(fields, &v) {
            continue;
        }
        if items.len() == limit {
            return Page {
                items,
                more: true,
                remaining: None,
            };
        }
        items.push(v);
    }
    Page {
        items,
        more: false,
        remaining: None,
    }
}

/// Remove strategic-merge-patch directives (`$patch`, `$setElementOrder/...`, `$retainKeys`,
/// `$deleteFromPrimitiveList/...`): what is left is applied as a JSON merge patch. Only for the
/// `/status` and `/scale` subresources; the main resource is merged by `strategic.rs`.
pub fn strip_directives(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            for c in m.values_mut() {
                strip_directives(c);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

/// `DeleteOptions` from the body (JSON, decoded as the apiserver decodes it: a field of the
/// wrong type is a 400, not dropped) and the query (`propagationPolicy`, `gracePeriodSeconds`).
pub fn delete_options(body: &[u8], q: &BTreeMap<String, String>) -> Result<DeleteOptions, Reply> {
    let v = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        body_value(body, false)?
    };
    expect_type(&v, "DeleteOptions", None)?;
    type Typed = k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions;
    let body: Typed = serde_json::from_value(v)
        .map_err(|e| bad_request(format!("error decoding DeleteOptions: {e}")))?;
    let mut o = DeleteOptions::default();
    if let Some(p) = body
        .propagation_policy
        .or_else(|| q.get("propagationPolicy").cloned())
    {
        // `ValidateDeleteOptions` (apimachinery meta/v1/validation at v0.33.0): a 422.
        o.propagation = Some(Propagation::parse(&p).ok_or_else(|| {
            failure(
                422,
                "Invalid",
                format!("propagationPolicy: Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""),
            )
        })?);
    }
    o.grace_period_seconds = match (body.grace_period_seconds, q.get("gracePeriodSeconds")) {
        (Some(g), _) => Some(g),
        (None, Some(g)) => Some(
            g.parse()
                .map_err(|_| bad_request(format!("invalid gracePeriodSeconds {g:?}")))?,
        ),
        (None, None) => None,
    };
    // `rest.BeforeDelete`: a negative grace period is taken as 1 s; past the horizon is an
    // lws-sim limit.
    if let Some(g) = o.grace_period_seconds.as_mut() {
        if *g < 0 {
            *g = 1;
        }
        crate::scenario::limits::check_grace("gracePeriodSeconds", *g)
            .map_err(|why| failure(422, "Invalid", format!("{why} (an lws-sim limit)")))?;
    }
    let pre = body.preconditions.unwrap_or_default();
    (o.precondition_uid, o.precondition_rv) = (pre.uid, pre.resource_version);
    Ok(o)
}

pub fn deleted_value<K: Kind>(d: &Deleted<K>) -> Value {
    match d {
        Deleted::Gone(o) | Deleted::Terminating(o) => to_value(&**o),
    }
}

/// A PUT's or a patched object's name must be the URL's (apiserver handlers/rest.go
/// `checkName`): 400 otherwise, a missing name included.
pub fn check_name(object: Option<&str>, url: &str) -> Result<(), Reply> {
    let object = object.unwrap_or_default();
    if object == url {
        return Ok(());
    }
    Err(bad_request(format!(
        "the name of the object ({object}) does not match the name on the URL ({url})"
    )))
}

/// The replicas a `/scale` write asks for: a PUT body, or a merge patch of the current Scale.
pub fn scale_target(
    current: &Value,
    body: Value,
    is_patch: bool,
) -> Result<(i64, Option<String>), Reply> {
    let scale = if is_patch {
        let mut s = current.clone();
        merge_patch(&mut s, &body);
        s
    } else {
        body
    };
    check_scale_body(&scale)?;
    // `ScaleSpec.replicas` is a plain int32: left out (a Go client's `omitempty` of 0) it is 0.
    // A value of another type was refused by `check_scale_body`.
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if replicas < 0 {
        return Err(failure(
            422,
            "Invalid",
            format!("spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"),
        ));
    }
    let rv = if is_patch {
        None
    } else {
        scale
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok((replicas, rv))
}

/// A `/scale` body (or a patch's result) decodes as an autoscaling/v1 `Scale`, as the
/// apiserver's decoder requires: another kind or version, or a field of the wrong type
/// (`replicas: "2"`, past int32, `labels: "x"`), is 400.
fn check_scale_body(scale: &Value) -> Result<(), Reply> {
    expect_type(scale, "Scale", Some("autoscaling/v1"))?;
    serde_json::from_value::<k8s_openapi::api::autoscaling::v1::Scale>(scale.clone())
        .map(drop)
        .map_err(|e| bad_request(format!("error decoding the Scale: {e}")))
}

#[cfg(test)]
mod tests {
    use super::{invalid_path_name, manager_from_user_agent};

    /// apimachinery `path.IsValidPathSegmentName`, worded as `NamespaceKeyFunc` does.
    #[test]
    fn names_a_url_cannot_key_are_refused() {
        assert_eq!(
            invalid_path_name("..").as_deref(),
            Some("Name parameter invalid: \"..\": may not be '..'")
        );
        assert_eq!(
            invalid_path_name("a/b%").as_deref(),
            Some("Name parameter invalid: \"a/b%\": may not contain '/';may not contain '%'")
        );
        assert_eq!(invalid_path_name("vllm-0"), None);
        assert_eq!(invalid_path_name("a.b"), None);
    }

    /// apiserver handlers/create_test.go `TestManagerOrUserAgent` (v0.33.0), and no header.
    #[test]
    fn a_manager_from_the_user_agent_is_its_printable_product_cut_to_128_bytes() {
        let mozilla = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)";
        assert_eq!(manager_from_user_agent(mozilla), "Mozilla");
        let long = format!("{}/Something", "f".repeat(129));
        assert_eq!(manager_from_user_agent(&long), "f".repeat(128));
        let burgers = "\u{1f354}".repeat(60);
        assert_eq!(manager_from_user_agent(&burgers), "\u{1f354}".repeat(32));
        assert_eq!(manager_from_user_agent("kube\u{7}ctl\t/v1.33"), "kubectl");
        assert_eq!(manager_from_user_agent(""), "");
    }
}
