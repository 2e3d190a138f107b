//! deploy/fuzz-job.yaml is a valid Job, decoded strictly (no field k8s-openapi does not know),
//! and its shard count agrees with its completions.

use k8s_openapi::api::batch::v1::Job;
use serde_json::Value;

/// Keys of `doc` that `typed` (the decoded object, re-encoded) lost: fields the type ignored.
fn lost(doc: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    if let (Value::Object(d), Value::Object(t)) = (doc, typed) {
        for (k, v) in d {
            match t.get(k) {
                None => out.push(format!("{path}.{k}")),
                Some(tv) => lost(v, tv, &format!("{path}.{k}"), out),
            }
        }
    }
    if let (Value::Array(d), Value::Array(t)) = (doc, typed) {
        for (i, (a, b)) in d.iter().zip(t).enumerate() {
            lost(a, b, &format!("{path}[{i}]"), out);
        }
    }
}

#[test]
fn the_fuzz_job_is_a_strict_indexed_job_with_one_shard_per_completion() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/fuzz-job.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    let job: Job = serde_json::from_value(doc.clone()).unwrap();
    let mut unknown = Vec::new();
    lost(&doc, &serde_json::to_value(&job).unwrap(), "", &mut unknown);
    assert!(
        unknown.is_empty(),
        "fields a Job does not have: {unknown:?}"
    );
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    let n = spec.completions.unwrap();
    assert_eq!(spec.parallelism, Some(n));
    let args = spec.template.spec.unwrap().containers[0]
        .args
        .clone()
        .unwrap()
        .join(" ");
    assert!(
        args.contains(&format!("--shard \"$JOB_COMPLETION_INDEX/{n}\"")),
        "{args}"
    );
}
