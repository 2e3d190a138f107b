//! The `autoscaling/v1` `Scale` view of a scalable kind (the `/scale` subresource): what an
//! HPA, `kubectl scale` and `lws-sim serve` read, and what a scenario `check` with
//! `subresource: scale` matches.

use serde_json::{json, Value};

use super::KindId;

/// The `autoscaling/v1` `Scale` of an LWS, a StatefulSet or a DisaggregatedSetRoleScaler (its
/// CRD: `labelSelectorPath: .status.selector`).
pub fn scale_of(kind: KindId, obj: &Value) -> Value {
    let meta = &obj["metadata"];
    let selector = match kind {
        KindId::LeaderWorkerSet => obj
            .pointer("/status/hpaPodSelector")
            .cloned()
            .unwrap_or(json!("")),
        KindId::DisaggregatedSetRoleScaler => obj
            .pointer("/status/selector")
            .cloned()
            .unwrap_or(json!("")),
        _ => {
            let labels = obj
                .pointer("/spec/selector/matchLabels")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default();
            json!(labels)
        }
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": obj.pointer("/spec/replicas").cloned().unwrap_or(json!(1))},
        "status": {
            "replicas": obj.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": selector,
        },
    })
}
