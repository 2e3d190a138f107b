//! DisaggregatedSet (lws v0.10.0, tag v0.10.0): a set of roles (prefill, decode, ...), each a
//! LeaderWorkerSet per revision and slice, rolled together. Ported file by file in the sans-IO
//! style of `crate::v0_10_0`: every API call goes through `crate::client::Client`; upstream's
//! managers (`LeaderWorkerSetManager`, `ServiceManager`, `ScalerManager`) hold nothing but the
//! client, so their methods are free functions taking it first.
//!
//! | module | upstream file at v0.10.0 |
//! |---|---|
//! | `api` | `api/disaggregatedset/v1/*_types.go` |
//! | `utils` | `pkg/utils/disaggregatedset/utils.go` |
//! | `affinity` | `pkg/utils/disaggregatedset/affinity.go` |
//! | `lws_manager` | `pkg/controllers/disaggregatedset/lws_manager.go` |
//! | `service_manager` | `pkg/controllers/disaggregatedset/service_manager.go` |
//! | `scaler_manager` | `pkg/controllers/disaggregatedset/scaler_manager.go` |
//! | `planner` | `pkg/controllers/disaggregatedset/planner.go` |
//! | `executor` | `pkg/controllers/disaggregatedset/executor.go` |
//! | `controller` | `pkg/controllers/disaggregatedset/disaggregatedset_controller.go` |
//! | `webhook` | `pkg/webhooks/disaggregatedset/disaggregatedset_webhook.go` and the CRD's defaults |
//!
//! Go maps are iterated in key order here (`BTreeMap`): upstream's order is random, and a
//! simulation must pick one (docs/fidelity.md).

use serde_json::{Map, Value};

use crate::client::Error;

pub mod affinity;
pub mod api;
pub mod controller;
pub mod executor;
#[cfg(test)]
mod fake;
pub mod lws_manager;
pub mod planner;
pub mod scaler_manager;
pub mod service_manager;
pub mod utils;
pub mod webhook;

/// The proposed fixes this port can switch on; none is upstream, and all off is the tag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fixes {
    /// Z09 (docs/findings/Z09.md, flag `ds-partial-revision=complete`): a new revision missing
    /// a spec role's LWS (its creation interrupted by a crash or an API error) is completed,
    /// instead of waiting forever for it to become stable.
    pub complete_partial_revision: bool,
    /// Z10 (docs/findings/Z10.md, flag `ds-old-replicas=all-roles`): an old revision's
    /// replicas are counted over every role it has, removed roles included, when choosing
    /// between the rolling update and the simple path, so a removed role left serving by an
    /// interrupted drain is still drained.
    pub count_removed_roles: bool,
}

/// `fmt.Errorf("<context>: %w", err)`: the reason stays (so `IsNotFound` still answers), the
/// message gains the context.
pub fn wrap(e: Error, context: impl std::fmt::Display) -> Error {
    Error::new(e.reason, format!("{context}: {}", e.message))
}

/// `errors.Join`: `None` for no errors; otherwise the first error's reason, the messages one
/// per line.
pub fn join(errs: Vec<Error>) -> Option<Error> {
    let first = errs.first()?.reason;
    let message = errs
        .iter()
        .map(|e| e.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    Some(Error::new(first, message))
}

/// `client.MergeFrom(old)`'s patch: the JSON merge patch (RFC 7386) that turns `old` into
/// `new` (controller-runtime `pkg/client/patch.go`, `jsonpatch.CreateMergePatch`).
pub fn merge_from<T: serde::Serialize>(old: &T, new: &T) -> Value {
    let old = serde_json::to_value(old).expect("objects serialize");
    let new = serde_json::to_value(new).expect("objects serialize");
    merge_diff(&old, &new).unwrap_or_else(|| Value::Object(Map::new()))
}

/// The merge patch from `old` to `new`, `None` when they are equal.
fn merge_diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, ov) in o {
                match n.get(k) {
                    None => {
                        patch.insert(k.clone(), Value::Null);
                    }
                    Some(nv) => {
                        if let Some(d) = merge_diff(ov, nv) {
                            patch.insert(k.clone(), d);
                        }
                    }
                }
            }
            for (k, nv) in n {
                if !o.contains_key(k) {
                    patch.insert(k.clone(), nv.clone());
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ if old == new => None,
        _ => Some(new.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_from_names_only_what_changed() {
        let old = json!({"spec": {"replicas": 2, "x": "a"}, "metadata": {"labels": {"a": "1"}}});
        let new = json!({"spec": {"replicas": 3, "x": "a"}, "metadata": {}});
        assert_eq!(
            merge_from(&old, &new),
            json!({"spec": {"replicas": 3}, "metadata": {"labels": null}})
        );
        assert_eq!(merge_from(&old, &old), json!({}));
    }
}
