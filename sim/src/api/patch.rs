//! JSON merge patch (RFC 7386) and the field-set arithmetic of server-side apply, on
//! `serde_json::Value` (kubernetes.io "Server-Side Apply";
//! kubernetes/apiserver `pkg/endpoints/handlers/patch.go`).
//!
//! Lists are atomic for apply except the associative lists (`x-kubernetes-list-type: map`) of
//! pod templates and object metadata that clients most often apply in part: containers, init
//! and ephemeral containers, env and volumes by `name`, volume mounts by `mountPath`, owner
//! references by `uid` (`list_keys`). An item of such a list is a path element of its own,
//! `k:{"name":"w"}` as in `managedFields`, so two managers can own different containers, or
//! different fields of one. The rest is listed in docs/fidelity.md.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

/// One step of a `FieldPath`: shared, so a path is copied by its elements' counts, not bytes
/// (`leaf_paths` copies its prefix at every leaf of an intent); it orders as its `str`.
pub type PathElement = Arc<str>;

/// A path of map keys (and keyed list items, `k:{...}`) from the object root to a leaf (a
/// scalar, an atomic list or an empty map).
pub type FieldPath = Vec<PathElement>;

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

/// The key fields of an associative list, by the list's field name and (for `ports`, a
/// container's or a Service's) the kind of item it holds (Kubernetes' `PodSpec`, `Container`,
/// `ServiceSpec` and `ObjectMeta` mark them `+listType=map` with these `+listMapKey`s; the CRD
/// schemas of the LeaderWorkerSet's pod templates carry them as `x-kubernetes-list-map-keys`).
fn list_keys(field: &str, item: Option<&Value>) -> Option<&'static [&'static str]> {
    match field {
        "containers" | "initContainers" | "ephemeralContainers" | "env" | "volumes" => {
            Some(&["name"])
        }
        "volumeMounts" => Some(&["mountPath"]),
        "ownerReferences" => Some(&["uid"]),
        "ports" if item?.get("containerPort").is_some() => Some(&["containerPort", "protocol"]),
        "ports" if item?.get("port").is_some() => Some(&["port", "protocol"]),
        _ => None,
    }
}

/// A port's protocol when the item leaves it out: the default the OpenAPI schema declares, so
/// an item applied without it is the stored, defaulted one (structured-merge-diff reads
/// defaulted list-map keys so).
static TCP: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| Value::from("TCP"));

/// An item's value of key field `k`, its default if it has one and the item leaves it out.
fn key_of<'a>(item: &'a Value, k: &str) -> Option<&'a Value> {
    match item.get(k).filter(|v| !v.is_null()) {
        None if k == "protocol" => Some(&TCP),
        v => v,
    }
}

/// An item's key values, or None when it lacks one.
fn key_values<'a>(item: &'a Value, keys: &[&str]) -> Option<Vec<&'a Value>> {
    keys.iter().map(|k| key_of(item, k)).collect()
}

/// Whether two items of an associative list are the same item: equal key values.
fn same_item(a: &Value, b: &Value, keys: &[&str]) -> bool {
    keys.iter()
        .all(|k| key_of(a, k).is_some_and(|x| key_of(b, k) == Some(x)))
}

/// The list's keys when `list` (the value of field `field`) is associative and every item has
/// its keys, each once; None for a list applied whole.
fn associative(field: &str, list: &[Value]) -> Option<&'static [&'static str]> {
    let keys = list_keys(field, list.first())?;
    for (n, item) in list.iter().enumerate() {
        key_values(item, keys)?;
        if list[..n]
            .iter()
            .any(|earlier| same_item(earlier, item, keys))
        {
            return None;
        }
    }
    Some(keys)
}

/// An item's path element, `k:{"name":"w"}` (keys in their listed order, values as JSON).
fn item_key(item: &Value, keys: &[&str]) -> String {
    let mut out = String::from("k:{");
    for (n, k) in keys.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(k);
        out.push_str("\":");
        let v = key_of(item, k).unwrap_or(&Value::Null);
        out.push_str(&v.to_string());
    }
    out.push('}');
    out
}

/// The leaf paths an apply configuration sets. Identity fields are not "owned".
pub fn leaf_paths(value: &Value) -> BTreeSet<FieldPath> {
    fn walk(v: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
        let field = prefix.last().map_or("", |f| &**f);
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, child) in m {
                    prefix.push(k.as_str().into());
                    walk(child, prefix, out);
                    prefix.pop();
                }
            }
            Value::Array(items) if !items.is_empty() => match associative(field, items) {
                Some(keys) => {
                    for item in items {
                        prefix.push(item_key(item, keys).into());
                        walk(item, prefix, out);
                        prefix.pop();
                    }
                }
                None => {
                    out.insert(prefix.clone());
                }
            },
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
    let at = |i: usize| p.get(i).map(|e| &**e);
    match (p.len(), at(0), at(1)) {
        (1, Some(f), _) => matches!(f, "apiVersion" | "kind" | "status"),
        (2, Some("metadata"), Some(g)) => matches!(g, "name" | "namespace"),
        (_, Some(f), _) => f == "status",
        _ => false,
    }
}

/// The key fields and values a `k:{...}` path element names; None for a map key.
fn item_fields(element: &str) -> Option<Map<String, Value>> {
    serde_json::from_str(element.strip_prefix("k:")?).ok()
}

/// The index of the item of `list` (the value of field `field`) a `k:{...}` element names.
fn item_index(field: &str, list: &[Value], element: &str) -> Option<usize> {
    let wanted = Value::Object(item_fields(element)?);
    let keys = list_keys(field, Some(&wanted))?;
    list.iter().position(|i| same_item(&wanted, i, keys))
}

/// One step down: a map's field, or an associative list's item.
fn child<'a>(v: &'a Value, field: &str, element: &str) -> Option<&'a Value> {
    match v {
        Value::Array(list) if element.starts_with("k:") => {
            list.get(item_index(field, list, element)?)
        }
        _ => v.get(element),
    }
}

pub fn get_path<'a>(value: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    let mut v = value;
    let mut field = "";
    for element in path {
        v = child(v, field, element)?;
        field = element;
    }
    Some(v)
}

/// A path as structured-merge-diff prints it in a conflict: `.spec.containers[name="w"].image`.
pub fn path_text(path: &FieldPath) -> String {
    let mut out = String::new();
    for element in path {
        match item_fields(element) {
            Some(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push_str(&format!("[{}]", parts.join(",")));
            }
            None => {
                out.push('.');
                out.push_str(element);
            }
        }
    }
    out
}

/// Whether a path ends at a key field of an associative list's item (`...k:{"name":"w"}.name`):
/// such a leaf is released after the item's other fields (`remove_path` removes the item then).
pub fn is_key_leaf(path: &[PathElement]) -> bool {
    match path {
        [.., item, field] => item_fields(item).is_some_and(|key| key.contains_key(&**field)),
        _ => false,
    }
}

/// Remove a leaf, then any maps or lists the removal left empty; a key field of an associative
/// list's item removes the item, if nothing but its keys is left in it.
pub fn remove_path(value: &mut Value, path: &[PathElement]) {
    remove_at(value, "", path);
}

fn remove_at(value: &mut Value, field: &str, path: &[PathElement]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match value {
        Value::Object(m) => {
            if rest.is_empty() {
                m.remove(&**first);
                return;
            }
            if let Some(child) = m.get_mut(&**first) {
                remove_at(child, first, rest);
                let emptied = match child {
                    Value::Object(c) => c.is_empty(),
                    Value::Array(l) => l.is_empty(),
                    _ => false,
                };
                if emptied {
                    m.remove(&**first);
                }
            }
        }
        Value::Array(list) if first.starts_with("k:") => {
            let Some(i) = item_index(field, list, first) else {
                return;
            };
            if rest.is_empty() {
                list.remove(i);
                return;
            }
            let keys = list_keys(field, Some(&list[i])).unwrap_or(&[]);
            if let [k] = rest {
                if keys.contains(&&**k) {
                    // A key field goes with its item, once nothing else is left in it.
                    let only_keys = list[i]
                        .as_object()
                        .is_some_and(|m| m.keys().all(|f| keys.contains(&f.as_str())));
                    if only_keys {
                        list.remove(i);
                    }
                    return;
                }
            }
            remove_at(&mut list[i], first, rest);
        }
        _ => {}
    }
}

/// Overlay an apply configuration: maps merge, associative lists merge item by item (a new
/// item goes last), other lists and scalars replace.
pub fn overlay(target: &mut Value, intent: &Value) {
    overlay_at(target, "", intent);
}

fn overlay_at(target: &mut Value, field: &str, intent: &Value) {
    match (target, intent) {
        (Value::Object(t), Value::Object(i)) => {
            for (k, v) in i {
                match t.get_mut(k) {
                    Some(existing) if mergeable(k, existing, v) => overlay_at(existing, k, v),
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(t), Value::Array(i)) => match list_keys(field, i.first()) {
            Some(keys) => {
                for item in i {
                    match t.iter().position(|x| same_item(item, x, keys)) {
                        Some(at) => overlay_at(&mut t[at], "", item),
                        None => t.push(item.clone()),
                    }
                }
            }
            None => t.clone_from(i),
        },
        (t, i) => *t = i.clone(),
    }
}

/// Whether an intent's value merges into the stored one: two maps, or two associative lists
/// whose items all carry their keys.
fn mergeable(field: &str, existing: &Value, intent: &Value) -> bool {
    match (existing, intent) {
        (Value::Object(_), Value::Object(_)) => true,
        (Value::Array(e), Value::Array(i)) => {
            associative(field, e).is_some() && associative(field, i).is_some()
        }
        _ => false,
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

    /// Containers and env merge by name: each item is a path element of its own, lists
    /// without their keys (or of another field) stay whole.
    fn path(elements: &[&str]) -> FieldPath {
        elements.iter().map(|s| PathElement::from(*s)).collect()
    }

    #[test]
    fn associative_lists_are_owned_and_merged_item_by_item() {
        let a = json!({"spec": {"containers": [{"name": "w", "image": "busybox", "env": [{"name": "A"}]}],
                                "args": ["x"]}});
        let got: Vec<String> = leaf_paths(&a).iter().map(path_text).collect();
        assert_eq!(
            got,
            [
                ".spec.args",
                r#".spec.containers[name="w"].env[name="A"].name"#,
                r#".spec.containers[name="w"].image"#,
                r#".spec.containers[name="w"].name"#,
            ]
        );
        let mut stored = a.clone();
        let b = json!({"spec": {"containers": [{"name": "w", "env": [{"name": "B"}]}, {"name": "s", "image": "side"}]}});
        overlay(&mut stored, &b);
        assert_eq!(
            stored,
            json!({"spec": {"containers": [
                {"name": "w", "image": "busybox", "env": [{"name": "A"}, {"name": "B"}]},
                {"name": "s", "image": "side"}], "args": ["x"]}})
        );
        let image = path(&["spec", r#"k:{"name":"w"}"#, "image"]);
        assert_eq!(
            get_path(&stored, &image),
            None,
            "containers sit under spec.containers"
        );
        let image = path(&["spec", "containers", r#"k:{"name":"w"}"#, "image"]);
        assert_eq!(get_path(&stored, &image), Some(&json!("busybox")));
        // The item's key goes with the item once its other fields are gone.
        let side = |leaf: &str| path(&["spec", "containers", r#"k:{"name":"s"}"#, leaf]);
        assert!(is_key_leaf(&side("name")) && !is_key_leaf(&side("image")));
        let len = |v: &Value| v["spec"]["containers"].as_array().map(Vec::len);
        remove_path(&mut stored, &side("name"));
        assert_eq!(len(&stored), Some(2));
        remove_path(&mut stored, &side("image"));
        remove_path(&mut stored, &side("name"));
        assert_eq!(len(&stored), Some(1));
        // Items without their key: the list is applied whole.
        let keyless = json!({"spec": {"containers": [{"image": "x"}]}});
        let got: Vec<String> = leaf_paths(&keyless).iter().map(path_text).collect();
        assert_eq!(got, [".spec.containers"]);
        overlay(&mut stored, &keyless);
        assert_eq!(stored["spec"]["containers"], json!([{"image": "x"}]));
    }

    #[test]
    fn remove_path_prunes_empty_maps() {
        let mut v = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}});
        remove_path(&mut v, &["metadata".into(), "labels".into(), "a".into()]);
        assert_eq!(v, json!({"spec": {"x": 1}}));
    }
}
