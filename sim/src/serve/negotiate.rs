//! Output media type negotiation for API paths, as the apiserver's
//! `NegotiateOutputMediaType` does (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
//! negotiation/negotiate.go` @ kubernetes v1.33.0, Accept parsed as `munnerz/goautoneg` does):
//! the Accept header's clauses by falling `q` (more specific first among equals), the first one
//! the server can write wins; an absent Accept is JSON; a header naming nothing the server
//! writes is `406 NotAcceptable` before the request is handled.
//!
//! `serve` writes JSON and YAML. Protobuf, which client-go's typed clients ask for beside JSON,
//! is answered as JSON (docs/fidelity.md).

use super::query::{failure, Reply};

/// The media type a reply is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Json,
    Yaml,
}

/// One clause of an Accept header: `type/subtype` and its quality (0 to 1000).
struct Clause<'a> {
    media: &'a str,
    q: u32,
}

/// `goautoneg.ParseAccept`: clauses with their `q` (default 1); a malformed `q` is 0, as Go's
/// `strconv.ParseFloat` error leaves it. Sorted by `q`, then by fewer wildcards.
fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause> = accept
        .split(',')
        .filter_map(|part| {
            let mut params = part.split(';');
            let media = params.next()?.trim();
            if media.is_empty() {
                return None;
            }
            let q = params
                .filter_map(|p| p.trim().strip_prefix("q="))
                .next_back()
                .map_or(1000, quality);
            Some(Clause { media, q })
        })
        .collect();
    let wildcards = |m: &str| m.matches('*').count();
    out.sort_by(|a, b| {
        b.q.cmp(&a.q)
            .then(wildcards(a.media).cmp(&wildcards(b.media)))
    });
    out
}

/// A `q` value in thousandths; anything unparsable or out of range is 0.
fn quality(s: &str) -> u32 {
    match s.trim().parse::<f64>() {
        Ok(q) if (0.0..=1.0).contains(&q) => (q * 1000.0).round() as u32,
        _ => 0,
    }
}

/// What a media range means here, if the server writes it.
fn output_of(media: &str) -> Option<Output> {
    match media.to_ascii_lowercase().as_str() {
        "*/*" | "application/*" | "application/json" => Some(Output::Json),
        // Answered as JSON: see the module comment.
        "application/vnd.kubernetes.protobuf" => Some(Output::Json),
        "application/yaml" => Some(Output::Yaml),
        _ => None,
    }
}

/// The reply's media type for an API path's `accept` header, or the 406 to answer.
pub fn negotiate(path: &str, accept: &str) -> Result<Output, Reply> {
    if accept.trim().is_empty() {
        return Ok(Output::Json);
    }
    let found = clauses(accept)
        .into_iter()
        .filter(|c| c.q > 0)
        .find_map(|c| output_of(c.media));
    found.ok_or_else(|| not_acceptable(path))
}

/// `NewNotAcceptableError`: the media types the resource's serializers offer (a custom
/// resource has no protobuf).
fn not_acceptable(path: &str) -> Reply {
    let custom = path.contains(".x-k8s.io");
    let types = if custom {
        "application/json, application/yaml"
    } else {
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    };
    failure(
        406,
        "NotAcceptable",
        format!("only the following media types are accepted: {types}"),
    )
}

/// Does negotiation apply to `path`: the API groups and their resources (the health checks,
/// `/version` and the OpenAPI documents answer as they always do).
pub fn negotiated(path: &str) -> bool {
    path == "/api" || path == "/apis" || path.starts_with("/api/") || path.starts_with("/apis/")
}

/// A JSON reply body written as YAML; the JSON as it was if it does not parse (never: every
/// body the core writes is JSON).
pub fn yaml_body(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| serde_saphyr::to_string(&v).ok())
        .unwrap_or_else(|| json.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(accept: &str) -> Option<Output> {
        negotiate("/api/v1/pods", accept).ok()
    }

    #[test]
    fn accept_headers_pick_the_first_acceptable_clause_by_quality() {
        assert_eq!(out(""), Some(Output::Json));
        assert_eq!(out("application/yaml"), Some(Output::Yaml));
        assert_eq!(
            out("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
            Some(Output::Json)
        );
        assert_eq!(out("text/html, application/yaml;q=0.5"), Some(Output::Yaml));
        assert_eq!(
            out("application/json;q=0.1, application/yaml"),
            Some(Output::Yaml)
        );
        assert_eq!(out("application/yaml;q=0.9, */*;q=0.9"), Some(Output::Yaml));
        assert_eq!(
            out("text/html,application/xhtml+xml,*/*;q=0.8"),
            Some(Output::Json)
        );
        assert_eq!(out("APPLICATION/YAML"), Some(Output::Yaml));
        assert_eq!(out("text/html"), None);
        assert_eq!(out("application/json;q=0"), None);
        assert_eq!(out("application/json;q=abc"), None);
    }

    #[test]
    fn a_refusal_is_406_naming_what_the_resource_offers() {
        let Err(Reply::Json { code, body }) = negotiate("/api/v1/pods", "text/html") else {
            panic!("text/html alone is not acceptable");
        };
        assert_eq!(code, 406);
        assert!(body.contains("\"reason\":\"NotAcceptable\""), "{body}");
        assert!(
            body.contains("application/vnd.kubernetes.protobuf"),
            "{body}"
        );
        let path = "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets";
        let Err(Reply::Json { body, .. }) = negotiate(path, "text/plain") else {
            panic!("text/plain alone is not acceptable");
        };
        assert!(
            body.contains("accepted: application/json, application/yaml\""),
            "{body}"
        );
    }

    #[test]
    fn yaml_bodies_carry_the_json_object() {
        let y = yaml_body(r#"{"kind":"Pod","metadata":{"name":"a"},"n":1}"#);
        let back: serde_json::Value = serde_saphyr::from_str(&y).expect("yaml parses");
        assert_eq!(back["metadata"]["name"], "a");
        assert_eq!(back["n"], 1);
        assert!(negotiated("/api/v1/pods") && negotiated("/apis") && !negotiated("/version"));
    }
}
