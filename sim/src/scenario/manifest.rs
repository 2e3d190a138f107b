//! Kubernetes manifests: multi-document YAML, dispatched on `kind`, checked strictly.
//!
//! Each document is parsed on its own, so errors carry the file's line numbers. k8s-openapi's
//! types ignore unknown fields, so after decoding we compare the document with the object
//! re-encoded: a key that vanished was unknown (a typo like `imagee:`), and is reported with
//! its path and line, as `kubectl apply --validate=strict` would.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use lws::api::LeaderWorkerSet;
use lws::disagg::api::DisaggregatedSet;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// A decoded manifest object.
#[derive(Clone, Debug)]
pub enum Manifest {
    LeaderWorkerSet(Box<LeaderWorkerSet>),
    StatefulSet(Box<StatefulSet>),
    Service(Box<Service>),
    Pod(Box<Pod>),
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    DisaggregatedSet(Box<DisaggregatedSet>),
    /// Volcano's (served with `gang-scheduling=volcano`).
    PodGroup(Box<lws::volcano::PodGroup>),
}

impl Manifest {
    pub fn kind(&self) -> &'static str {
        match self {
            Manifest::LeaderWorkerSet(_) => "LeaderWorkerSet",
            Manifest::StatefulSet(_) => "StatefulSet",
            Manifest::Service(_) => "Service",
            Manifest::Pod(_) => "Pod",
            Manifest::PodDisruptionBudget(_) => "PodDisruptionBudget",
            Manifest::DisaggregatedSet(_) => "DisaggregatedSet",
            Manifest::PodGroup(_) => "PodGroup",
        }
    }

    pub fn name(&self) -> String {
        let m = match self {
            Manifest::LeaderWorkerSet(o) => &o.metadata,
            Manifest::StatefulSet(o) => &o.metadata,
            Manifest::Service(o) => &o.metadata,
            Manifest::Pod(o) => &o.metadata,
            Manifest::PodDisruptionBudget(o) => &o.metadata,
            Manifest::DisaggregatedSet(o) => &o.metadata,
            Manifest::PodGroup(o) => &o.metadata,
        };
        m.name.clone().unwrap_or_default()
    }
}

pub use super::error::LoadError;

/// Documents in one manifest file, as the YAML budget holds every file to (serde-saphyr 2.2's
/// default; manifests are split here, a document at a time, so the parser never counts them).
pub const MANIFEST_DOCUMENTS_MAX: usize = 1024;

/// The text a file's (or an inline block's) documents may hold once their YAML aliases are
/// expanded, all documents together: the parser's budget bounds one document at 64 MiB, and
/// 1,024 documents of it would take tens of gigabytes.
pub const EXPANDED_BYTES_MAX: usize = 64 << 20;

/// A parsed document's size: its strings (keys and values) in bytes, and 64 bytes for every
/// node, an empty map or list too (what one costs decoded).
fn expanded_bytes(v: &Value) -> usize {
    const NODE: usize = 64;
    NODE + match v {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(expanded_bytes).sum(),
        Value::Object(m) => m
            .iter()
            .map(|(k, w)| k.len() + expanded_bytes(w))
            .sum::<usize>(),
        _ => 0,
    }
}

/// Split into documents at `---` lines, keeping each document's first line number (1-based).
fn documents(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let mut start = 1;
    let mut cur = String::new();
    for (i, line) in text.lines().enumerate() {
        // A document marker: `---` alone or followed by blanks, where the rest of the line
        // (`--- {kind: Pod, ...}`) already belongs to the new document.
        let rest = line
            .strip_prefix("---")
            .filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let Some(rest) = rest {
            docs.push((start, std::mem::take(&mut cur)));
            let rest = rest.trim();
            if rest.is_empty() || rest.starts_with('#') {
                start = i + 2;
            } else {
                start = i + 1;
                cur.push_str(rest);
                cur.push('\n');
            }
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
    }
    docs.push((start, cur));
    docs.retain(|(_, d)| {
        d.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    docs
}

/// A parser error in the document starting at `doc_start`, with the line in the file.
fn saphyr_error(file: &str, doc_start: usize, doc: &str, e: &serde_saphyr::Error) -> LoadError {
    super::yaml::load_error(file, doc_start, doc, e)
}

/// Paths present (non-null) in `input` but absent from `output`.
fn vanished(input: &Value, output: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                if v.is_null() {
                    continue;
                }
                path.push(k.clone());
                match b.get(k) {
                    Some(w) => vanished(v, w, path, out),
                    None => out.push(path.clone()),
                }
                path.pop();
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                path.push(i.to_string());
                vanished(v, w, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The value at a path of keys and list indexes.
fn value_at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| match v {
        Value::Object(m) => m.get(k),
        Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// The first key set to `null` that the type does not know. A null vanishes from the decoded
/// object whether its field is known or not, so the decoder itself says which keys it skipped
/// (`serde_ignored`, one pass: probing each null with a decode of its own took the square of
/// their count, minutes for a pod of 8,000 containers). A real API server's strict field
/// validation refuses an unknown key whatever its value.
fn null_unknown<K: DeserializeOwned>(value: &Value) -> Option<Vec<String>> {
    let mut skipped = Vec::new();
    let decoded: Result<K, _> = serde_ignored::deserialize(value, |p| skipped.push(segments(&p)));
    decoded.ok()?;
    skipped.into_iter().find(|p| {
        // Status is dropped by design (`decode`): an unknown key there is not a typo.
        p.first().is_some_and(|f| f != "status") && value_at(value, p) == Some(&Value::Null)
    })
}

/// A skipped field's path as keys and list indices.
fn segments(p: &serde_ignored::Path) -> Vec<String> {
    use serde_ignored::Path;
    let mut out = match p {
        Path::Root => return Vec::new(),
        Path::Seq { parent, .. }
        | Path::Map { parent, .. }
        | Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => segments(parent),
    };
    match p {
        Path::Seq { index, .. } => out.push(index.to_string()),
        Path::Map { key, .. } => out.push(key.clone()),
        _ => {}
    }
    out
}

/// Scalars the decoder turned into another type: a number or boolean where Kubernetes wants a
/// string (a name, an image, a label or annotation value, an env value), or a quoted string
/// where it wants a number or boolean (`replicas: "2"`), which a real API server refuses
/// ("cannot unmarshal number into Go struct field ... of type string", and the converse). A
/// resource quantity is the exception: `cpu: 4` is a quantity as `cpu: "4"` is. Returns the
/// path and what was expected and found.
fn retyped(
    input: &Value,
    output: &Value,
    path: &mut Vec<String>,
) -> Option<(Vec<String>, &'static str)> {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(k, v)| {
            path.push(k.clone());
            let found = b.get(k).and_then(|w| retyped(v, w, path));
            path.pop();
            found
        }),
        (Value::Array(a), Value::Array(b)) => {
            a.iter().zip(b).enumerate().find_map(|(i, (v, w))| {
                path.push(i.to_string());
                let found = retyped(v, w, path);
                path.pop();
                found
            })
        }
        (Value::Number(n), Value::String(_)) if is_quantity(path) => {
            inexact_quantity(n, path).map(|why| (path.clone(), why))
        }
        (Value::Number(_) | Value::Bool(_), Value::String(_)) if !is_quantity(path) => {
            let got = if input.is_number() {
                "expected a string, got a number (quote it)"
            } else {
                "expected a string, got a boolean (quote it)"
            };
            Some((path.clone(), got))
        }
        (Value::String(_), Value::Number(_)) => {
            Some((path.clone(), "expected a number, got a string (unquote it)"))
        }
        (Value::String(_), Value::Bool(_)) => Some((
            path.clone(),
            "expected a boolean, got a string (unquote it)",
        )),
        _ => None,
    }
}

/// A quantity written as a number that cannot be stored as written: past 2^53 a float is
/// not exact (the YAML reader rounded `18446744073709551617`), and Volcano's CRD takes a
/// `minResources` value as an integer or a string (`anyOf`), never a fraction.
fn inexact_quantity(n: &serde_json::Number, path: &[String]) -> Option<&'static str> {
    let f = n.as_f64().filter(|_| n.is_f64())?;
    let crd_int = path.len() >= 2 && path[path.len() - 2] == "minResources";
    if f.abs() >= 9_007_199_254_740_992.0 {
        Some("a number this large is not exact (quote it)")
    } else if crd_int && f.fract() != 0.0 {
        Some("Invalid value: a number: must be an integer or a string (the CRD's int-or-string; quote it)")
    } else {
        None
    }
}

/// A `resource.Quantity` field, which decodes from a number too: a value of `limits`,
/// `requests`, `overhead` or a PodGroup's `minResources` (int-or-string in Volcano's CRD), a
/// `sizeLimit` or a `resourceFieldRef`'s `divisor`.
fn is_quantity(path: &[String]) -> bool {
    let from_end = |n: usize| path.len().checked_sub(n).map(|i| path[i].as_str());
    let pod_group = path.len() == 3 && path[0] == "spec" && path[1] == "minResources";
    matches!(from_end(2), Some("limits" | "requests" | "overhead"))
        || pod_group
        || from_end(1) == Some("sizeLimit")
        || (from_end(1) == Some("divisor") && from_end(2) == Some("resourceFieldRef"))
}

/// `spec.template.containers[0].name`: a path of keys and list indices as a field.
fn dotted(path: &[String]) -> String {
    let field = path
        .iter()
        .map(|s| {
            if s.parse::<usize>().is_ok() {
                format!("[{s}]")
            } else {
                format!(".{s}")
            }
        })
        .collect::<String>();
    field.trim_start_matches('.').to_string()
}

/// The line of the field at `path` (keys and list indices) in a block-style document: each key
/// searched inside its parent's block; where the path leaves block style (a flow mapping), the
/// last line found. Best effort: the first `key:` of the last key otherwise.
fn line_of_path(doc: &str, doc_start: usize, path: &[String]) -> usize {
    let lines: Vec<&str> = doc.lines().collect();
    // A line's key column: after a `- `, the key sits two columns right of the dash.
    let column = |l: &str| {
        let ind = l.len() - l.trim_start().len();
        if l.trim_start().starts_with("- ") {
            ind + 2
        } else {
            ind
        }
    };
    let blank = |l: &str| l.trim().is_empty() || l.trim_start().starts_with('#');
    // (line found, the key column its block's lines are right of, or the item's dash column).
    let mut at: Option<(usize, usize)> = None;
    let mut item_dash: Option<usize> = None;
    for seg in path {
        let (from, inside) = match (at, item_dash) {
            (Some((a, _)), Some(dash)) => (a, dash),
            (Some((a, c)), None) => (a + 1, c),
            (None, _) => (0, 0),
        };
        let in_block = |k: usize, l: &str| {
            let first = at.is_some() && item_dash.is_some() && k == 0;
            blank(l)
                || first
                || (at.is_none() || column(l) > inside)
                    && !(item_dash.is_some_and(|d| l.len() - l.trim_start().len() == d)
                        && l.trim_start().starts_with("- "))
        };
        let block = lines[from..]
            .iter()
            .enumerate()
            .take_while(|(k, l)| in_block(*k, l));
        let found = if let Ok(i) = seg.parse::<usize>() {
            let items: Vec<(usize, usize)> = block
                .filter(|(_, l)| l.trim_start().starts_with("- "))
                .map(|(k, l)| (from + k, l.len() - l.trim_start().len()))
                .collect();
            let dash = items.first().map(|x| x.1);
            let nth = items.into_iter().filter(|x| Some(x.1) == dash).nth(i);
            item_dash = nth.map(|x| x.1);
            nth
        } else {
            let key = format!("{seg}:");
            let hit = block
                .filter(|(_, l)| !blank(l) && (at.is_some() || column(l) == 0))
                .find(|(_, l)| l.trim_start().trim_start_matches("- ").starts_with(&key))
                .map(|(k, l)| (from + k, column(l)));
            item_dash = None;
            hit
        };
        match found {
            Some(f) => at = Some(f),
            None => break,
        }
    }
    match at {
        Some((a, _)) => doc_start + a,
        None => line_of_key(doc, doc_start, path.last().map_or("", String::as_str)),
    }
}

/// The line of the first `key:` at or after the document start (best effort).
fn line_of_key(doc: &str, doc_start: usize, key: &str) -> usize {
    doc.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with(&format!("{key}:"))
        })
        .map(|i| doc_start + i)
        .unwrap_or(doc_start)
}

fn decode<K: DeserializeOwned + Serialize>(
    file: &str,
    start: usize,
    doc: &str,
    value: &Value,
    counts: Counts,
) -> Result<K, LoadError> {
    let obj: K = serde_saphyr::from_str_with_options(doc, super::yaml_options())
        .map_err(|e| saphyr_error(file, start, doc, &e))?;
    let back = serde_json::to_value(&obj).expect("decoded objects encode");
    let mut unknown = Vec::new();
    vanished(value, &back, &mut Vec::new(), &mut unknown);
    if unknown.is_empty() {
        unknown.extend(null_unknown::<K>(value));
    }
    // Status and server-set metadata are dropped by design, not typos.
    unknown.retain(|p| p.first().is_some_and(|f| f != "status"));
    if let Some(p) = unknown.first() {
        let key = p.last().cloned().unwrap_or_default();
        // A known string field holds "" as its absence (the type drops it on encoding): the
        // CRD's schema refuses an empty value of such a field (an enum, a name).
        let message = if value_at(value, p) == Some(&Value::String(String::new())) {
            format!("{}: Unsupported value: \"\": this field takes no empty string (leave it out for its default)", dotted(p))
        } else {
            format!("unknown field {:?} at {}", key, dotted(p))
        };
        return Err(LoadError {
            file: file.into(),
            line: Some(line_of_path(doc, start, p)),
            message,
        });
    }
    if let Some((p, got)) = retyped(value, &back, &mut Vec::new()) {
        return Err(LoadError {
            file: file.into(),
            line: Some(line_of_path(doc, start, &p)),
            message: format!("{}: {got}", dotted(&p)),
        });
    }
    // The contract's limits (README, "Limits"), on values that decoded.
    super::limits::check_manifest(value, counts == Counts::Checked).map_err(
        |(field, message)| {
            let path: Vec<String> = field
                .split(['.', '[', ']'])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            LoadError {
                file: file.into(),
                line: Some(line_of_path(doc, start, &path)),
                message,
            }
        },
    )?;
    Ok(obj)
}

/// A file's documents decoded, the kinds skipped, and the bytes their text expanded to.
type Parsed = (Vec<Manifest>, Vec<String>, usize);

/// Parse every document of a manifest file; a kind we cannot simulate is an error.
pub fn parse(file: &str, text: &str) -> Result<Vec<Manifest>, LoadError> {
    parse_documents(file, text, false, Counts::Checked, EXPANDED_BYTES_MAX).map(|(m, ..)| m)
}

/// Parse, skipping documents of kinds we do not simulate (returned by name), as a loader of
/// arbitrary upstream manifests needs to.
pub fn parse_lenient(file: &str, text: &str) -> Result<(Vec<Manifest>, Vec<String>), LoadError> {
    parse_documents(file, text, true, Counts::Checked, EXPANDED_BYTES_MAX).map(|(m, k, _)| (m, k))
}

/// Parse an inline manifest a step writes as a YAML block (`apply: |`): one or more
/// documents, as a file holds them; errors name `file` and the line within the block.
/// `budget` is what is left of `EXPANDED_BYTES_MAX` for the scenario's inline manifests;
/// returns the bytes these took.
pub fn parse_inline(
    file: &str,
    text: &str,
    counts: Counts,
    budget: usize,
) -> Result<(Vec<Manifest>, usize), LoadError> {
    parse_documents(file, text, false, counts, budget).map(|(m, _, n)| (m, n))
}

/// Whether a LeaderWorkerSet's group and pod counts are held to the limits when it loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counts {
    Checked,
    /// An object a step expects the API server to refuse (`expectError`): its counts are the
    /// point of the test (upstream's webhook tests create LWSs of `size: -1` or a million
    /// groups). If the webhooks let it through, the `lws-sim-limits` admission check refuses
    /// it at run time, and the step's expectation is not met.
    AtRunTime,
}

/// The `apiVersion` a kind is served at here; another one (`apps/v1beta1`, an LWS at `v1beta1`)
/// is refused as a real API server refuses an unknown group/version. A missing one is taken as
/// this (scenario files have long left it out of inline objects).
fn api_version_of(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "LeaderWorkerSet" => "leaderworkerset.x-k8s.io/v1",
        "StatefulSet" => "apps/v1",
        "Service" | "Pod" => "v1",
        "PodDisruptionBudget" => "policy/v1",
        "DisaggregatedSet" => lws::disagg::api::API_VERSION,
        "PodGroup" => lws::volcano::API_VERSION,
        _ => return None,
    })
}

fn check_api_version(
    file: &str,
    start: usize,
    doc: &str,
    value: &Value,
    kind: &str,
) -> Result<(), LoadError> {
    let (Some(want), Some(got)) = (api_version_of(kind), value.get("apiVersion")) else {
        return Ok(());
    };
    if got.as_str() == Some(want) {
        return Ok(());
    }
    Err(LoadError {
        file: file.into(),
        line: Some(line_of_key(doc, start, "apiVersion")),
        message: format!("apiVersion: {got} is not served for kind {kind}; use {want:?}"),
    })
}

fn parse_documents(
    file: &str,
    text: &str,
    skip_other_kinds: bool,
    counts: Counts,
    budget: usize,
) -> Result<Parsed, LoadError> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let docs = documents(text);
    if let Some((line, _)) = docs.get(MANIFEST_DOCUMENTS_MAX) {
        return Err(LoadError {
            file: file.into(),
            line: Some(*line),
            message: format!(
                "{} documents, above the limit of {MANIFEST_DOCUMENTS_MAX} documents per file (the YAML budget)",
                docs.len()
            ),
        });
    }
    let mut expanded = 0usize;
    for (start, doc) in docs {
        let value: Value = serde_saphyr::from_str_with_options(&doc, super::yaml_options())
            .map_err(|e| saphyr_error(file, start, &doc, &e))?;
        expanded = expanded.saturating_add(expanded_bytes(&value));
        if expanded > budget {
            let m = format!("the documents up to this one expand to more than {} MiB of text (YAML aliases), the limit per file and for a scenario's inline manifests together", EXPANDED_BYTES_MAX >> 20);
            return Err(LoadError {
                file: file.into(),
                line: Some(start),
                message: m,
            });
        }
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        check_api_version(file, start, &doc, &value, kind)?;
        let m = match kind {
            "LeaderWorkerSet" => Manifest::LeaderWorkerSet(Box::new(decode(file, start, &doc, &value, counts)?)),
            "StatefulSet" => Manifest::StatefulSet(Box::new(decode(file, start, &doc, &value, counts)?)),
            "Service" => Manifest::Service(Box::new(decode(file, start, &doc, &value, counts)?)),
            "Pod" => Manifest::Pod(Box::new(decode(file, start, &doc, &value, counts)?)),
            "PodDisruptionBudget" => Manifest::PodDisruptionBudget(Box::new(decode(file, start, &doc, &value, counts)?)),
            "DisaggregatedSet" => Manifest::DisaggregatedSet(Box::new(decode(file, start, &doc, &value, counts)?)),
            "PodGroup" => Manifest::PodGroup(Box::new(decode(file, start, &doc, &value, counts)?)),
            "" => {
                return Err(LoadError { file: file.into(), line: Some(start), message: "document has no `kind`".into() })
            }
            other if skip_other_kinds => {
                skipped.push(other.to_string());
                continue;
            }
            other => {
                return Err(LoadError {
                    file: file.into(),
                    line: Some(line_of_key(&doc, start, "kind")),
                    message: format!("unsupported kind {other:?}; supported: LeaderWorkerSet, StatefulSet, Service, Pod, PodDisruptionBudget, DisaggregatedSet, PodGroup"),
                })
            }
        };
        out.push(m);
    }
    Ok((out, skipped, expanded))
}

/// The line in a manifest file's `text` of the field an API error names (`spec.ports[1].port`),
/// in the document of that kind and name: where a manifest the API server refused at apply
/// time went wrong. `None` when the file holds no such document.
pub fn rejected_line(text: &str, kind: &str, name: &str, field: &str) -> Option<usize> {
    let (start, doc) = documents(text).into_iter().find(|(_, doc)| {
        let v: Option<Value> = serde_saphyr::from_str_with_options(doc, super::yaml_options()).ok();
        let at = |p: &str| {
            v.as_ref()
                .and_then(|v| v.pointer(p))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        at("/kind").as_deref() == Some(kind) && at("/metadata/name").as_deref() == Some(name)
    })?;
    let path: Vec<String> = field
        .split(['.', '['])
        .map(|s| s.trim_end_matches(']').to_string())
        .filter(|s| !s.is_empty())
        .collect();
    Some(line_of_path(&doc, start, &path))
}

/// Parse a manifest given inline in a scenario step (already a JSON value), written out as
/// block YAML, one key a line, so a decoding error names the field it is in (on one line of
/// JSON every error sits at the object's first key).
pub fn from_value(file: &str, value: &Value, counts: Counts) -> Result<Manifest, LoadError> {
    let text = serde_saphyr::to_string(value).expect("values encode");
    let (mut v, ..) = parse_documents(file, &text, false, counts, EXPANDED_BYTES_MAX)?;
    v.pop().ok_or_else(|| LoadError {
        file: file.into(),
        line: None,
        message: "empty inline object".into(),
    })
}

#[cfg(test)]
mod tests {
    /// A document may start on its marker's line (`--- {kind: Pod, ...}`): it is read, not
    /// dropped.
    #[test]
    fn a_document_on_its_markers_line_is_read() {
        let pod = |n: &str| {
            format!("{{apiVersion: v1, kind: Pod, metadata: {{name: {n}}}, spec: {{containers: [{{name: c, image: i}}]}}}}")
        };
        let text = format!(
            "{}\n--- {}\n---\t# a comment\n{}\n",
            pod("a"),
            pod("b"),
            pod("c")
        );
        let names: Vec<String> = super::parse("m.yaml", &text)
            .expect("three pods")
            .iter()
            .map(super::Manifest::name)
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        let e = super::parse(
            "m.yaml",
            &format!("{}\n--- {{kind: Pod, spec: 5}}\n", pod("a")),
        )
        .expect_err("the second document is read");
        assert_eq!(e.line, Some(2), "{e:?}");
    }

    /// YAML aliases may expand each document to the parser's 64 MiB; a file's documents
    /// together are held to the same (two documents of 40 MiB each: refused at the second).
    #[test]
    fn a_files_documents_expand_to_at_most_64_mib_together() {
        let doc = |i: usize| {
            let long = "x".repeat(10_000);
            let refs = vec!["*s"; 4_000].join(", ");
            // Anchors enough for the parser's alias-to-anchor ratio.
            let anchors: String = (0..400).map(|k| format!(", &t{k} t")).collect();
            format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n  - name: c\n    image: i\n    command: [&s {long}{anchors}]\n    args: [{refs}]\n")
        };
        let e = super::parse("m.yaml", &format!("{}---\n{}", doc(0), doc(1)))
            .expect_err("over the budget");
        assert_eq!(e.line, Some(11), "{e:?}");
        assert!(e.message.contains("more than 64 MiB"), "{e:?}");
    }

    /// Past the YAML budget's document count a manifest is refused at the first document
    /// over it (3,000 pods loaded one by one).
    #[test]
    fn a_manifest_of_more_documents_than_the_budget_is_refused() {
        let doc = |i: usize| {
            format!("apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ports: [{{port: 80}}]}}\n")
        };
        let file = |n: usize| (0..n).map(doc).collect::<Vec<_>>().join("---\n");
        let max = super::MANIFEST_DOCUMENTS_MAX;
        assert_eq!(
            super::parse("m.yaml", &file(max))
                .expect("at the limit")
                .len(),
            max
        );
        let e = super::parse("m.yaml", &file(max + 1)).expect_err("over the limit");
        assert_eq!(e.line, Some(max * 5 + 1));
        assert!(
            e.message
                .contains("1025 documents, above the limit of 1024"),
            "{e:?}"
        );
    }

    #[test]
    fn a_field_is_found_on_its_own_line_not_the_first_of_its_name() {
        let doc = "kind: LeaderWorkerSet
metadata:
  name: a
  labels: {size: x}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
        containers:
        - name: c
          image: one
        - name: d
          image: two
          ports:
          - containerPort: 80
          - {containerPort: 81}
";
        let at = |p: &str| {
            let path: Vec<String> = p.split('.').map(str::to_string).collect();
            line_of_path(doc, 10, &path)
        };
        assert_eq!(at("spec.leaderWorkerTemplate.size"), 17);
        assert_eq!(at("metadata.name"), 12);
        let containers = "spec.leaderWorkerTemplate.workerTemplate.spec.containers";
        assert_eq!(at(&format!("{containers}.1.image")), 24);
        assert_eq!(at(&format!("{containers}.0.name")), 21);
        assert_eq!(at(&format!("{containers}.1.ports.1.containerPort")), 27);
        // Not in block style (a flow mapping): the line of the last key found.
        assert_eq!(at("metadata.labels.size"), 13);
        // A key that is not there: the line of its nearest ancestor.
        assert_eq!(at("spec.nothing.size"), 14);
    }

    use super::*;

    const LWS: &str = "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: x
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: c
          image: nginx
";

    #[test]
    fn multi_document_files_load_with_kinds() {
        let text = format!(
            "# comment\n---\n{LWS}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\n"
        );
        let m = parse("f.yaml", &text).unwrap();
        let kinds: Vec<&str> = m.iter().map(Manifest::kind).collect();
        assert_eq!(kinds, ["LeaderWorkerSet", "Service"]);
    }

    #[test]
    fn unknown_fields_name_the_file_line_and_path() {
        let bad = LWS.replace("          image: nginx", "          imagee: nginx");
        let text = format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\n{bad}");
        let e = parse("f.yaml", &text).unwrap_err();
        assert_eq!(e.line, Some(18), "{e}");
        assert!(e.message.contains("imagee"), "{e}");
        assert!(
            e.message
                .contains("spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].imagee"),
            "{e}"
        );
        let bad = LWS.replace("  replicas: 2", "  replicaz: 2");
        let e = parse("f.yaml", &bad).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("replicaz"), "{e}");
    }

    #[test]
    fn an_empty_string_the_type_drops_is_an_unsupported_value_not_an_unknown_field() {
        let bad = LWS.replace(
            "  replicas: 2",
            "  replicas: 2\n  rolloutStrategy: {type: \"\"}",
        );
        let e = parse("f.yaml", &bad).unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(
            e.message
                .starts_with("spec.rolloutStrategy.type: Unsupported value: \"\""),
            "{e}"
        );
    }

    #[test]
    fn syntax_and_type_errors_have_lines() {
        let e = parse("f.yaml", &LWS.replace("replicas: 2", "replicas: two")).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        let e = parse("f.yaml", "kind: [\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        let e = parse("f.yaml", "apiVersion: v1\nkind: ConfigMap\n").unwrap_err();
        assert!(e.message.contains("unsupported kind"), "{e}");
    }
}
