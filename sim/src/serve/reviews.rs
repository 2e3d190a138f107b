//! The review resources clients ask before they act: `kubectl auth can-i` (a
//! `SelfSubjectAccessReview`, or a `SelfSubjectRulesReview` with `--list`) and `kubectl auth
//! whoami` (a `SelfSubjectReview`). `serve` has no authentication and no authorization, so it
//! answers as a kube-apiserver run with `--authorization-mode=AlwaysAllow` and anonymous access
//! answers: every request is allowed, and the caller is `system:anonymous` (apiserver
//! `pkg/authorization/authorizerfactory/builtin.go` `alwaysAllowAuthorizer`, whose rules are
//! `*` on everything; `pkg/registry/authentication/selfsubjectreview/rest.go`, which echoes
//! the user the request was authenticated as). A review is created, never stored: the request
//! comes back with its `status` filled in, `201 Created`, as the registries answer.

use serde_json::{json, Value};

use super::proto;
use super::query::{bad_request, failure, method_not_allowed, object_body, Reply};

/// client-go's typed clients send reviews in protobuf (kubectl 1.32's `auth can-i`).
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// `ResourceAttributes` and `NonResourceAttributes`: field numbers and JSON names
/// (k8s.io/api `authorization/v1/generated.proto`). The selectors (8, 9) are not read.
const RESOURCE_ATTRIBUTES: [(u64, &str); 7] = [
    (1, "namespace"),
    (2, "verb"),
    (3, "group"),
    (4, "version"),
    (5, "resource"),
    (6, "subresource"),
    (7, "name"),
];
const NON_RESOURCE_ATTRIBUTES: [(u64, &str); 2] = [(1, "path"), (2, "verb")];

/// One review resource: group, version, plural and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Review {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
}

/// What `serve` answers. `localsubjectaccessreviews` and `subjectaccessreviews` (asked about
/// another user) are left out: nothing is authorized per user here.
pub const REVIEWS: [Review; 3] = [
    Review {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
    },
    Review {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
    },
    Review {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
    },
];

/// Why every review says yes; kubectl prints it with `can-i`'s verbose output.
const REASON: &str = "lws-sim serve has no authorization: every request is allowed";

pub fn find(group: &str, version: &str, plural: &str) -> Option<Review> {
    REVIEWS
        .into_iter()
        .find(|r| (r.group, r.version, r.plural) == (group, version, plural))
}

/// The reviews of `group/version` as `APIResourceList` entries: cluster-scoped, create only.
pub fn resource_entries(group: &str, version: &str) -> Vec<Value> {
    REVIEWS
        .iter()
        .filter(|r| (r.group, r.version) == (group, version))
        .map(|r| {
            json!({
                "name": r.plural,
                "singularName": r.kind.to_ascii_lowercase(),
                "namespaced": false,
                "kind": r.kind,
                "verbs": ["create"],
            })
        })
        .collect()
}

/// `POST /apis/GROUP/v1/REVIEWS`: the request with its status; another method is a 405.
pub fn create(review: Review, method: &str, content_type: &str, body: &[u8]) -> Reply {
    if method != "POST" {
        return method_not_allowed(method);
    }
    let decoded = if content_type.starts_with(PROTOBUF) {
        from_protobuf(review, body)
    } else {
        object_body(body, content_type)
    };
    let mut request = match decoded {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(fields) = request.as_object_mut() else {
        return bad_request(format!("the body is not a {} object", review.kind));
    };
    let api_version = format!("{}/{}", review.group, review.version);
    for (field, want) in [("kind", review.kind), ("apiVersion", api_version.as_str())] {
        match fields.get(field).and_then(Value::as_str) {
            None | Some("") => {
                fields.insert(field.into(), want.into());
            }
            Some(got) if got == want => {}
            Some(got) => {
                return bad_request(format!(
                    "the body's {field} is {got:?}; this endpoint takes {want:?}"
                ))
            }
        }
    }
    if review.plural == "selfsubjectaccessreviews" {
        if let Some(problem) = spec_problem(fields.get("spec")) {
            let msg = format!(
                "{}.{} \"\" is invalid: {problem}",
                review.kind, review.group
            );
            return failure(422, "Invalid", msg);
        }
    }
    fields.insert("status".into(), status(review));
    Reply::json(201, &request)
}

/// A review sent in protobuf, as the JSON it stands for: `kind`, `apiVersion` and the spec's
/// string fields (a review's `metadata` and `status` carry nothing the answer reads).
fn from_protobuf(review: Review, body: &[u8]) -> Result<Value, Reply> {
    let bad = |e: String| bad_request(format!("error decoding the request body as protobuf: {e}"));
    let (api_version, kind, raw) = proto::envelope(body).map_err(bad)?;
    let object = proto::fields(raw).map_err(bad)?;
    let spec = proto::fields(proto::get(&object, 2).unwrap_or_default()).map_err(bad)?;
    let strings = |msg: &[u8], names: &[(u64, &str)]| -> Result<Value, Reply> {
        let fields = proto::fields(msg).map_err(bad)?;
        let mut out = serde_json::Map::new();
        for &(n, name) in names {
            if let Some(v) = proto::string(&fields, n)
                .map_err(bad)?
                .filter(|v| !v.is_empty())
            {
                out.insert(name.into(), v.into());
            }
        }
        Ok(Value::Object(out))
    };
    let mut spec_json = serde_json::Map::new();
    match review.plural {
        "selfsubjectaccessreviews" => {
            for (n, name, names) in [
                (1, "resourceAttributes", &RESOURCE_ATTRIBUTES[..]),
                (2, "nonResourceAttributes", &NON_RESOURCE_ATTRIBUTES[..]),
            ] {
                if let Some(msg) = proto::get(&spec, n) {
                    spec_json.insert(name.into(), strings(msg, names)?);
                }
            }
        }
        "selfsubjectrulesreviews" => {
            if let Some(ns) = proto::string(&spec, 1).map_err(bad)? {
                spec_json.insert("namespace".into(), ns.into());
            }
        }
        _ => {}
    }
    let mut out = json!({"kind": kind, "apiVersion": api_version, "metadata": {}});
    if review.plural != "selfsubjectreviews" {
        out["spec"] = Value::Object(spec_json);
    }
    Ok(out)
}

/// What is wrong with an access review's spec, if anything: it must name exactly one of a
/// resource or a non-resource request (apiserver `pkg/apis/authorization/validation`,
/// `ValidateSelfSubjectAccessReviewSpec`, v1.32).
fn spec_problem(spec: Option<&Value>) -> Option<&'static str> {
    let has = |f: &str| spec.and_then(|s| s.get(f)).is_some_and(Value::is_object);
    match (has("resourceAttributes"), has("nonResourceAttributes")) {
        (true, true) => Some("spec.nonResourceAttributes: Invalid value: \"object\": cannot be specified in combination with resourceAttributes"),
        (false, false) => Some("spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"),
        _ => None,
    }
}

/// The status an allow-everything server gives each review.
fn status(review: Review) -> Value {
    match review.plural {
        "selfsubjectaccessreviews" => json!({"allowed": true, "reason": REASON}),
        "selfsubjectrulesreviews" => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        _ => json!({
            "userInfo": {
                "username": "system:anonymous",
                "groups": ["system:unauthenticated"],
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(review: &str, body: &str) -> (u16, Value) {
        let r = find("authorization.k8s.io", "v1", review)
            .or_else(|| find("authentication.k8s.io", "v1", review))
            .expect("a review");
        match create(r, "POST", "application/json", body.as_bytes()) {
            Reply::Json { code, body } => (code, serde_json::from_str(&body).unwrap()),
            _ => panic!("a JSON reply"),
        }
    }

    #[test]
    fn an_access_review_is_allowed_and_echoes_its_spec() {
        let (code, v) = answer(
            "selfsubjectaccessreviews",
            r#"{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"verb":"delete","resource":"pods"}},"status":{"allowed":false}}"#,
        );
        assert_eq!(code, 201);
        assert_eq!(v["status"]["allowed"], true);
        assert_eq!(v["spec"]["resourceAttributes"]["verb"], "delete");
    }

    #[test]
    fn an_access_review_must_ask_about_one_thing() {
        let (code, v) = answer("selfsubjectaccessreviews", r#"{"spec":{}}"#);
        assert_eq!(code, 422, "{v}");
        let both = r#"{"spec":{"resourceAttributes":{},"nonResourceAttributes":{"path":"/x"}}}"#;
        assert_eq!(answer("selfsubjectaccessreviews", both).0, 422);
    }

    #[test]
    fn a_review_of_another_kind_is_refused() {
        let (code, v) = answer(
            "selfsubjectrulesreviews",
            r#"{"kind":"SelfSubjectAccessReview","spec":{"namespace":"default"}}"#,
        );
        assert_eq!(code, 400, "{v}");
    }

    #[test]
    fn rules_and_identity_are_those_of_an_allow_all_anonymous_server() {
        let (code, v) = answer(
            "selfsubjectrulesreviews",
            r#"{"spec":{"namespace":"default"}}"#,
        );
        assert_eq!(code, 201);
        assert_eq!(v["status"]["resourceRules"][0]["verbs"][0], "*");
        assert_eq!(v["kind"], "SelfSubjectRulesReview");
        let (code, v) = answer("selfsubjectreviews", "{}");
        assert_eq!(code, 201);
        assert_eq!(v["status"]["userInfo"]["username"], "system:anonymous");
        assert_eq!(v["apiVersion"], "authentication.k8s.io/v1");
    }

    /// What kubectl 1.32 sent for `auth can-i create pods -n team` and `auth can-i get
    /// /healthz` (captured from the wire).
    const CAN_I_CREATE_PODS: &str = "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a656374416363657373526576696577123c0a100a0012001a0022002a00320038004200121e0a1c0a047465616d12066372656174651a0022002a04706f647332003a001a08080012001a0020001a002200";
    const CAN_I_GET_HEALTHZ: &str = "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a656374416363657373526576696577122f0a100a0012001a0022002a003200380042001211120f0a082f6865616c74687a12036765741a08080012001a0020001a002200";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn answer_protobuf(review: &str, body: &[u8]) -> (u16, Value) {
        let r = find("authorization.k8s.io", "v1", review).expect("a review");
        match create(r, "POST", PROTOBUF, body) {
            Reply::Json { code, body } => (code, serde_json::from_str(&body).unwrap()),
            _ => panic!("a JSON reply"),
        }
    }

    #[test]
    fn kubectl_s_protobuf_reviews_are_read() {
        let (code, v) = answer_protobuf("selfsubjectaccessreviews", &unhex(CAN_I_CREATE_PODS));
        assert_eq!(code, 201, "{v}");
        assert_eq!(v["status"]["allowed"], true);
        let attrs = &v["spec"]["resourceAttributes"];
        assert_eq!(
            (&attrs["namespace"], &attrs["verb"], &attrs["resource"]),
            (&json!("team"), &json!("create"), &json!("pods"))
        );
        assert!(
            attrs.get("group").is_none(),
            "empty strings are left out: {attrs}"
        );
        let (code, v) = answer_protobuf("selfsubjectaccessreviews", &unhex(CAN_I_GET_HEALTHZ));
        assert_eq!(code, 201, "{v}");
        assert_eq!(v["spec"]["nonResourceAttributes"]["path"], "/healthz");
        // The same bytes cut short, or sent to the rules review, are refused.
        let bytes = unhex(CAN_I_CREATE_PODS);
        assert_eq!(
            answer_protobuf("selfsubjectaccessreviews", &bytes[..40]).0,
            400
        );
        assert_eq!(answer_protobuf("selfsubjectrulesreviews", &bytes).0, 400);
    }

    #[test]
    fn only_post_creates_a_review() {
        let r = find("authentication.k8s.io", "v1", "selfsubjectreviews").unwrap();
        assert!(matches!(
            create(r, "GET", "", b""),
            Reply::Json { code: 405, .. }
        ));
    }
}
