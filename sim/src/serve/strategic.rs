//! Strategic merge patch (`application/strategic-merge-patch+json`), what `kubectl apply`
//! (client-side), `kubectl set image`, `label`, `annotate` and `patch` send for built-in kinds
//! (apimachinery `pkg/util/strategicpatch/patch.go`).
//!
//! Lists whose Go field carries a `patchMergeKey` are merged element by element on that key;
//! `finalizers` (`patchStrategy: merge`, no key) are merged as a set; every other list is
//! replaced whole, as in a JSON merge patch. Directives: `$patch: replace | delete | merge` on a
//! map or a list element, `$retainKeys`, `$deleteFromPrimitiveList/<field>`; the element order of
//! `$setElementOrder/<field>` is applied to the merged list (elements it does not name keep
//! their place after those it does). Simplification: merge keys are chosen by the field's name
//! (and for `ports`, by which key the elements carry), not by the Go type at that path.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::api::KindId;

/// The merge key of a list field, by name: the `patchMergeKey` of the core/v1 and apps/v1
/// fields of that name (`volumeClaimTemplates` has none: atomic, replaced whole).
fn merge_key(field: &str, items: &[&Value]) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "topologySpreadConstraints" => "topologyKey",
        // Container ports merge on containerPort, Service ports on port.
        "ports" if items.iter().any(|i| i.get("containerPort").is_some()) => "containerPort",
        "ports" => "port",
        _ => return None,
    })
}

/// Lists merged as sets of primitives (`patchStrategy: merge` without a key).
fn set_list(field: &str) -> bool {
    field == "finalizers"
}

/// Maps whose Go field is `patchStrategy:"replace"`, by kind: the patch's value replaces them
/// whole (policy/v1 `PodDisruptionBudgetSpec.Selector`).
fn replaced_maps(kind: KindId) -> &'static [&'static str] {
    match kind {
        KindId::PodDisruptionBudget => &["/spec/selector"],
        _ => &[],
    }
}

/// Apply `patch` to `doc`, a stored object of `kind` as JSON. `Err` is a malformed directive
/// (400).
pub fn apply_to(kind: KindId, doc: &mut Value, patch: &Value) -> Result<(), String> {
    let mut patch = patch.clone();
    for path in replaced_maps(kind) {
        if let Some(Value::Object(m)) = patch.pointer_mut(path) {
            m.entry("$patch").or_insert_with(|| Value::from("replace"));
        }
    }
    apply(doc, &patch)
}

/// Apply `patch` to `doc` (a stored object as JSON). `Err` is a malformed directive (400).
pub fn apply(doc: &mut Value, patch: &Value) -> Result<(), String> {
    match (doc, patch) {
        (Value::Object(d), Value::Object(p)) => merge_map(d, p),
        (d, p) => {
            *d = strip(p);
            Ok(())
        }
    }
}

fn merge_map(doc: &mut Map<String, Value>, patch: &Map<String, Value>) -> Result<(), String> {
    match patch.get("$patch").and_then(Value::as_str) {
        None | Some("merge") => {}
        Some("replace") => {
            *doc = strip_map(patch);
            return Ok(());
        }
        // apimachinery `handleDirectiveInMergeMap`: the map becomes empty.
        Some("delete") => {
            doc.clear();
            return Ok(());
        }
        Some(other) => return Err(format!("unknown patch type {other:?} on a map")),
    }
    if let Some(keep) = patch.get("$retainKeys") {
        let keep: BTreeSet<&str> = keep
            .as_array()
            .ok_or("$retainKeys must be a list of strings")?
            .iter()
            .map(|k| k.as_str().ok_or("$retainKeys must be a list of strings"))
            .collect::<Result<_, _>>()?;
        doc.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let gone = v
                .as_array()
                .ok_or("$deleteFromPrimitiveList needs a list")?;
            if let Some(Value::Array(list)) = doc.get_mut(field) {
                let gone: BTreeSet<String> = gone.iter().map(Value::to_string).collect();
                list.retain(|x| !gone.contains(&x.to_string()));
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                doc.remove(k);
            }
            Value::Object(p) => match doc.get_mut(k) {
                Some(Value::Object(d)) => merge_map(d, p)?,
                _ => {
                    if p.get("$patch").and_then(Value::as_str) == Some("delete") {
                        doc.remove(k);
                    } else {
                        doc.insert(k.clone(), Value::Object(strip_map(p)));
                    }
                }
            },
            Value::Array(p) => {
                let merged = match doc.remove(k) {
                    Some(Value::Array(d)) => merge_list(k, d, p)?,
                    _ => merge_list(k, Vec::new(), p)?,
                };
                doc.insert(k.clone(), Value::Array(merged));
            }
            v => {
                doc.insert(k.clone(), v.clone());
            }
        }
    }
    for (k, order) in patch {
        if let Some(field) = k.strip_prefix("$setElementOrder/") {
            if let (Some(Value::Array(list)), Some(order)) = (doc.get_mut(field), order.as_array())
            {
                reorder(field, list, order);
            }
        }
    }
    Ok(())
}

/// Merge a list field. Elements are found by their merge key (or, for a set, by value)
/// through an ordered index, so a patch of many elements costs O(n log n), not O(n²).
fn merge_list(field: &str, doc: Vec<Value>, patch: &[Value]) -> Result<Vec<Value>, String> {
    if set_list(field) {
        let mut doc = doc;
        let mut seen: BTreeSet<String> = doc.iter().map(Value::to_string).collect();
        for v in patch {
            if seen.insert(v.to_string()) {
                doc.push(v.clone());
            }
        }
        return Ok(doc);
    }
    let items: Vec<&Value> = doc.iter().chain(patch).collect();
    let Some(key) = merge_key(field, &items) else {
        return Ok(patch.iter().map(strip).collect());
    };
    // `[{"$patch": "replace"}, ...]`: the list is the patch's other elements.
    if patch
        .iter()
        .any(|p| p.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        let rest = patch.iter().filter(|p| p.get("$patch").is_none());
        return Ok(rest.map(strip).collect());
    }
    // Deleted elements leave a hole until the end; the index names each key's first element.
    let mut slots: Vec<Option<Value>> = doc.into_iter().map(Some).collect();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for (i, d) in slots.iter().enumerate() {
        if let Some(id) = d.as_ref().and_then(|d| d.get(key)) {
            index.entry(id.to_string()).or_insert(i);
        }
    }
    for p in patch {
        let Some(id) = p.get(key) else {
            return Err(format!(
                "map: {p} does not contain declared merge key: {key}"
            ));
        };
        let id = id.to_string();
        match (p.get("$patch").and_then(Value::as_str), index.get(&id)) {
            (Some("delete"), Some(&i)) => {
                slots[i] = None;
                index.remove(&id);
            }
            (Some("delete"), None) => {}
            (_, Some(&i)) => apply(slots[i].as_mut().expect("indexed"), p)?,
            (_, None) => {
                index.insert(id, slots.len());
                slots.push(Some(strip(p)));
            }
        }
    }
    Ok(slots.into_iter().flatten().collect())
}

/// Order `list` as `order` names its elements (by the merge key, or by value for primitives);
/// the others follow in their current order.
fn reorder(field: &str, list: &mut [Value], order: &[Value]) {
    let items: Vec<&Value> = list.iter().chain(order).collect();
    let key = merge_key(field, &items);
    let id = |v: &Value| match key {
        Some(k) => v.get(k).map(Value::to_string),
        None => Some(v.to_string()),
    };
    let mut rank: BTreeMap<String, usize> = BTreeMap::new();
    for (i, o) in order.iter().enumerate() {
        if let Some(id) = id(o) {
            rank.entry(id).or_insert(i);
        }
    }
    list.sort_by_cached_key(|v| {
        id(v)
            .and_then(|me| rank.get(&me).copied())
            .unwrap_or(order.len())
    });
}

/// A patch value without its directives: what a new key or element becomes.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(strip_map(m)),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        v => v.clone(),
    }
}

fn strip_map(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, v)| !k.starts_with('$') && !v.is_null())
        .map(|(k, v)| (k.clone(), strip(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patched(doc: Value, patch: Value) -> Value {
        let mut d = doc;
        apply(&mut d, &patch).unwrap();
        d
    }

    #[test]
    fn containers_merge_by_name_and_keep_what_the_patch_does_not_name() {
        let doc = json!({"spec": {"containers": [
            {"name": "a", "image": "a1", "command": ["x"]},
            {"name": "b", "image": "b1"},
        ]}});
        // What `kubectl set image pod/p a=a2` sends.
        let patch = json!({"spec": {"containers": [{"name": "a", "image": "a2"}]}});
        assert_eq!(
            patched(doc, patch),
            json!({"spec": {"containers": [
                {"name": "a", "image": "a2", "command": ["x"]},
                {"name": "b", "image": "b1"},
            ]}})
        );
    }

    #[test]
    fn delete_directives_and_nulls_remove_and_order_is_applied() {
        let doc = json!({"metadata": {"labels": {"x": "1", "y": "2"}, "finalizers": ["f1"]},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}});
        let patch = json!({
            "metadata": {"labels": {"x": null}, "finalizers": ["f2"]},
            "spec": {
                "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}],
                "containers": [{"name": "b", "$patch": "delete"}],
            }
        });
        assert_eq!(
            patched(doc, patch),
            json!({"metadata": {"labels": {"y": "2"}, "finalizers": ["f1", "f2"]},
                "spec": {"containers": [{"name": "c"}, {"name": "a"}]}})
        );
    }

    /// 20,000 elements (a 3 MiB body holds more): merged by index, not by scanning the list
    /// per element; the result as a scan would give it.
    #[test]
    fn long_lists_merge_and_reorder_by_key() {
        let n = 20_000;
        let names: Vec<String> = (0..n).map(|i| format!("f{i}")).collect();
        let reversed: Vec<&String> = names.iter().rev().collect();
        let doc = json!({"metadata": {"finalizers": ["f5", "old"]},
            "spec": {"containers": [{"name": "f7", "image": "a"}, {"name": "gone"}]}});
        let containers: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        let order: Vec<Value> = reversed.iter().map(|n| json!({"name": n})).collect();
        let patch = json!({
            "metadata": {"$setElementOrder/finalizers": reversed, "finalizers": names},
            "spec": {"$setElementOrder/containers": order, "containers": containers,
                "$deleteFromPrimitiveList/never": ["x"]},
        });
        let out = patched(doc, patch);
        let fins = out["metadata"]["finalizers"].as_array().unwrap();
        // Every name once ("f5" was there already), in the order given, then "old".
        assert_eq!(fins.len(), n + 1);
        assert_eq!(fins[0], json!(format!("f{}", n - 1)));
        assert_eq!(fins[n - 1], json!("f0"));
        assert_eq!(fins[n], json!("old"));
        let cs = out["spec"]["containers"].as_array().unwrap();
        assert_eq!(cs.len(), n + 1);
        assert_eq!(cs[n - 1 - 7], json!({"name": "f7", "image": "a"}));
        assert_eq!(cs[n], json!({"name": "gone"}));
    }

    #[test]
    fn lists_without_a_merge_key_are_replaced_and_replace_directives_win() {
        let doc = json!({"spec": {"tolerations": [{"key": "a"}], "selector": {"x": "1"}}});
        let patch = json!({"spec": {"tolerations": [{"key": "b"}],
            "selector": {"$patch": "replace", "y": "2"}}});
        assert_eq!(
            patched(doc, patch),
            json!({"spec": {"tolerations": [{"key": "b"}], "selector": {"y": "2"}}})
        );
        let mut d = json!({"a": 1});
        assert!(apply(&mut d, &json!({"$patch": "frob"})).is_err());
    }

    #[test]
    fn a_budgets_selector_is_replaced_whole() {
        let mut d = json!({"spec": {"selector": {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "a", "operator": "Exists"}]}}});
        let p = json!({"spec": {"selector": {"matchExpressions": [{"key": "b", "operator": "Exists"}]}}});
        apply_to(KindId::PodDisruptionBudget, &mut d, &p).unwrap();
        assert_eq!(
            d,
            json!({"spec": {"selector": {"matchExpressions": [{"key": "b", "operator": "Exists"}]}}})
        );
    }
}
