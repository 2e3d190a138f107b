//! JSON merge patch (RFC 7386) and the field-set arithmetic of server-side apply, on
//! `serde_json::Value` (kubernetes.io "Server-Side Apply";
//! kubernetes/apiserver `pkg/endpoints/handlers/patch.go`).
//!
//! Simplification (docs/fidelity.md): every list is atomic for apply, where the real server merges
//! `containers`, `env` and `ownerReferences` by key. The LWS controllers always send whole lists
//! under one manager, so the difference is not observable for them.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// A path of map keys from the object root to a leaf (a scalar, a list or an empty map).
pub type FieldPath = Vec<String>;

/// RFC 7386: maps merge recursively, `null` deletes, everything else (lists too) replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        unreachable!("target was just made an object")
    };
    for (k, v) in patch {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// The leaf paths an apply configuration sets. Identity fields are not "owned".
pub fn leaf_paths(value: &Value) -> BTreeSet<FieldPath> {
    fn walk(v: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, child) in m {
                    prefix.push(k.clone());
                    walk(child, prefix, out);
                    prefix.pop();
                }
            }
            _ => {
                out.insert(prefix.clone());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(value, &mut Vec::new(), &mut out);
    out.retain(|p| !is_identity(p));
    out
}

fn is_identity(p: &FieldPath) -> bool {
    let p: Vec<&str> = p.iter().map(String::as_str).collect();
    matches!(
        p.as_slice(),
        ["apiVersion"] | ["kind"] | ["metadata", "name"] | ["metadata", "namespace"]
    ) || p.first().is_some_and(|f| *f == "status")
}

pub fn get_path<'a>(value: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, k| v.get(k))
}

/// Remove a leaf, then any maps the removal left empty.
pub fn remove_path(value: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Value::Object(m) = value else { return };
    if rest.is_empty() {
        m.remove(first);
        return;
    }
    if let Some(child) = m.get_mut(first) {
        remove_path(child, rest);
        if child.as_object().is_some_and(Map::is_empty) {
            m.remove(first);
        }
    }
}

/// Overlay an apply configuration: maps merge, leaves (lists included) replace.
pub fn overlay(target: &mut Value, intent: &Value) {
    match (target, intent) {
        (Value::Object(t), Value::Object(i)) => {
            for (k, v) in i {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => overlay(existing, v),
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (t, i) => *t = i.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc7386() {
        // RFC 7386 §3 example, abridged: null deletes, lists replace, maps merge.
        let mut t = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        merge_patch(&mut t, &json!({"a": "z", "c": {"f": null}, "l": [3]}));
        assert_eq!(t, json!({"a": "z", "c": {"d": "e"}, "l": [3]}));
    }

    #[test]
    fn leaf_paths_skip_identity_and_status() {
        let v = json!({"apiVersion": "v1", "metadata": {"name": "x", "labels": {"a": "1"}},
                       "spec": {"replicas": 2, "list": [1]}, "status": {"replicas": 1}});
        let got: Vec<String> = leaf_paths(&v).into_iter().map(|p| p.join(".")).collect();
        assert_eq!(got, vec!["metadata.labels.a", "spec.list", "spec.replicas"]);
    }

    #[test]
    fn remove_path_prunes_empty_maps() {
        let mut v = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}});
        remove_path(&mut v, &["metadata".into(), "labels".into(), "a".into()]);
        assert_eq!(v, json!({"spec": {"x": 1}}));
    }
}
