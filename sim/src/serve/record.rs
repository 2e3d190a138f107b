//! `--record FILE`: the session as an ordinary scenario. The file is the served scenario (its
//! cluster, controller, manifests and steps, paths made relative to FILE), with `seed` and
//! `controller.reconciler` pinned and `expect` dropped, plus one step per client write at the
//! simulated instant it happened: a `wait` to that instant, then the write as `apply` (inline
//! object), `patch` (`merge`), `scale`, `delete` or `deletePod`. `lws-sim run FILE` replays it.
//! Writes the step vocabulary cannot express (status writes, kinds a manifest cannot hold) are
//! listed in `description` and left out.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

use crate::api::KindId;

pub struct Recorder {
    file: PathBuf,
    base: Value,
    steps: Vec<Value>,
    last_ms: u64,
    pub unrecorded: Vec<String>,
}

/// `path` relative to directory `base` (both absolute).
fn relative(path: &Path, base: &Path) -> PathBuf {
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    out
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    })
}

impl Recorder {
    /// Start from the scenario file's own text; `now_ms` is when its steps ended.
    pub fn new(
        file: &Path,
        scenario: &Path,
        text: &str,
        reconciler: &str,
        seed: u64,
        now_ms: u64,
    ) -> Result<Recorder, String> {
        let mut base: Value =
            serde_saphyr::from_str(text).map_err(|e| format!("{}: {e}", scenario.display()))?;
        let from = absolute(scenario.parent().unwrap_or(Path::new(".")));
        let file_abs = absolute(
            file.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        );
        let relocate = |p: &str| -> Value {
            let abs = absolute(&from.join(p));
            Value::String(relative(&abs, &file_abs).display().to_string())
        };
        if let Some(ms) = base.get_mut("manifests").and_then(Value::as_array_mut) {
            for m in ms.iter_mut() {
                if let Some(p) = m.as_str() {
                    *m = relocate(p);
                }
            }
        }
        if let Some(steps) = base.get_mut("steps").and_then(Value::as_array_mut) {
            for s in steps.iter_mut() {
                if let Some(p) = s.get("apply").and_then(Value::as_str) {
                    s["apply"] = relocate(p);
                }
            }
        } else {
            base["steps"] = json!([]);
        }
        let obj = base.as_object_mut().ok_or("a scenario is a mapping")?;
        obj.remove("expect");
        obj.insert("seed".into(), json!(seed));
        let name = obj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("scenario")
            .to_string();
        obj.insert("name".into(), json!(format!("{name}-recorded")));
        let controller = obj.entry("controller").or_insert_with(|| json!({}));
        controller["reconciler"] = json!(reconciler);
        let r = Recorder {
            file: file.to_path_buf(),
            base,
            steps: Vec::new(),
            last_ms: now_ms,
            unrecorded: Vec::new(),
        };
        r.flush()?;
        Ok(r)
    }

    fn push(&mut self, at_ms: u64, step: Value) {
        if at_ms > self.last_ms {
            self.steps
                .push(json!({"wait": format!("{}ms", at_ms - self.last_ms)}));
            self.last_ms = at_ms;
        }
        self.steps.push(step);
    }

    /// A create, update or apply: the object as stored now (what `apply:` replaces: spec,
    /// labels, annotations).
    pub fn object(&mut self, at_ms: u64, verb: &str, kind: KindId, obj: &Value) {
        let manifest_kinds = [
            KindId::LeaderWorkerSet,
            KindId::StatefulSet,
            KindId::Service,
            KindId::Pod,
            KindId::PodDisruptionBudget,
            KindId::DisaggregatedSet,
        ];
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !manifest_kinds.contains(&kind) {
            self.unrecorded
                .push(format!("t={at_ms}ms {verb} {kind} {name}"));
            return;
        }
        let meta = &obj["metadata"];
        let mut m = json!({"name": meta["name"]});
        for k in ["namespace", "labels", "annotations"] {
            if let Some(v) = meta.get(k) {
                m[k] = v.clone();
            }
        }
        let mut inline =
            json!({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": m});
        if let Some(spec) = obj.get("spec") {
            inline["spec"] = spec.clone();
        }
        self.push(at_ms, json!({"apply": inline}));
    }

    /// A write of one of the scenario's nodes (`kubectl cordon`, `uncordon`, `drain`, `label`,
    /// `taint`): a merge patch (RFC 7386) from `old` to `new` of what a client may change
    /// (labels, annotations, spec).
    pub fn node(&mut self, at_ms: u64, name: &str, old: &Value, new: &Value) {
        let part = |v: &Value| {
            json!({
                "metadata": {
                    "labels": v["metadata"]["labels"],
                    "annotations": v["metadata"]["annotations"],
                },
                "spec": v["spec"],
            })
        };
        let merge = merge_diff(&part(old), &part(new)).unwrap_or_else(|| json!({}));
        self.patch(at_ms, KindId::Node, "", name, &merge);
    }

    pub fn patch(&mut self, at_ms: u64, kind: KindId, ns: &str, name: &str, merge: &Value) {
        let mut p = json!({"kind": kind.as_str(), "name": name, "merge": merge});
        if !ns.is_empty() {
            p["namespace"] = json!(ns);
        }
        self.push(at_ms, json!({"patch": p}));
    }

    pub fn scale(&mut self, at_ms: u64, kind: KindId, ns: &str, name: &str, replicas: i64) {
        if kind == KindId::LeaderWorkerSet {
            let s = json!({"lws": name, "replicas": replicas, "namespace": ns});
            self.push(at_ms, json!({"scale": s}));
        } else {
            self.patch(
                at_ms,
                kind,
                ns,
                name,
                &json!({"spec": {"replicas": replicas}}),
            );
        }
    }

    pub fn delete(
        &mut self,
        at_ms: u64,
        kind: KindId,
        ns: &str,
        name: &str,
        propagation: Option<&str>,
        grace: Option<i64>,
    ) {
        // Background is what kubectl sends, and what a pod delete does anyway.
        let propagation = propagation.filter(|p| *p != "Background");
        if kind == KindId::Pod && propagation.is_none() {
            let mut d = json!({"pod": name, "namespace": ns});
            if let Some(g) = grace {
                d["gracePeriodSeconds"] = json!(g);
            }
            self.push(at_ms, json!({"deletePod": d}));
            return;
        }
        let mut d = json!({"kind": kind.as_str(), "name": name});
        if !ns.is_empty() {
            d["namespace"] = json!(ns);
        }
        if let Some(p) = propagation {
            d["propagation"] = json!(p);
        }
        if grace.is_some() {
            self.unrecorded.push(format!(
                "t={at_ms}ms gracePeriodSeconds of delete {kind} {name}"
            ));
        }
        self.push(at_ms, json!({"delete": d}));
    }

    /// A `check` step: the object must match `pattern` at this instant when replayed.
    pub fn check(&mut self, at_ms: u64, kind: KindId, ns: &str, name: &str, pattern: Value) {
        let mut c = json!({"kind": kind.as_str(), "name": name, "match": pattern});
        if !ns.is_empty() {
            c["namespace"] = json!(ns);
        }
        self.push(at_ms, json!({"check": c}));
    }

    pub fn unrecordable(&mut self, at_ms: u64, what: String) {
        self.unrecorded.push(format!("t={at_ms}ms {what}"));
    }

    /// Rewrite the whole file (after every write, so a killed server leaves a usable file).
    pub fn flush(&self) -> Result<(), String> {
        let mut doc = self.base.clone();
        let mut desc = doc
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string();
        desc.push_str(" Recorded by lws-sim serve.");
        if !self.unrecorded.is_empty() {
            desc.push_str(&format!(
                " Writes the step vocabulary cannot express, left out: {}.",
                self.unrecorded.join("; ")
            ));
        }
        doc["description"] = json!(desc.trim());
        if let Some(steps) = doc.get_mut("steps").and_then(Value::as_array_mut) {
            steps.extend(self.steps.iter().cloned());
        }
        let text = serde_saphyr::to_string(&doc).map_err(|e| e.to_string())?;
        let max = crate::scenario::limits::FILE_BYTES_MAX;
        if text.len() as u64 > max {
            return Err(format!(
                "{}: the recording would pass {max} bytes (16 MiB), the most `lws-sim run` reads; recording stopped, the file holds the session up to the write before",
                self.file.display()
            ));
        }
        std::fs::write(&self.file, text).map_err(|e| format!("{}: {e}", self.file.display()))
    }
}

/// The JSON merge patch (RFC 7386) that turns `old` into `new`; `None` when they are equal.
/// A key `new` lacks (or holds as null) is `null` in the patch, as RFC 7386 deletes it.
fn merge_diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = serde_json::Map::new();
            for (k, nv) in n.iter().filter(|(_, v)| !v.is_null()) {
                let ov = o.get(k).unwrap_or(&Value::Null);
                if let Some(d) = merge_diff(ov, nv) {
                    patch.insert(k.clone(), d);
                }
            }
            for (k, _) in o.iter().filter(|(_, v)| !v.is_null()) {
                if n.get(k).is_none_or(Value::is_null) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ if old == new => None,
        _ => Some(new.clone()),
    }
}
