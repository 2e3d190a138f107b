//! Small helpers over core Kubernetes objects, shared by the reconcilers and the simulator.
//! Each mirrors a named upstream helper.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

pub fn condition_true(pod: &Pod, type_: &str) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == type_))
        .is_some_and(|c| c.status == "True")
}

/// `podutil.IsPodReady`: the Ready condition is True (phase not checked).
pub fn is_ready(pod: &Pod) -> bool {
    condition_true(pod, "Ready")
}

/// `isRunningAndReady` (statefulset `stateful_set_utils.go`): phase Running and Ready=True.
pub fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == "Running" && is_ready(pod)
}

/// The Ready condition's last transition, in the caller's millisecond clock.
pub fn ready_since(pod: &Pod) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
        .and_then(|c| c.last_transition_time.as_ref())
}

pub fn is_terminating(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some()
}

pub fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
}

pub fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

pub fn namespace(meta: &ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("default")
}

pub fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

pub fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    small_map_get(meta.labels.as_ref()?, key)
}

/// `map.get(key)` for the label maps objects carry. Their keys mostly share a long prefix
/// (`leaderworkerset.sigs.k8s.io/`) and differ in length, so a binary search compares the
/// prefix byte by byte at every step, while a scan of a small map rejects nearly every key by
/// its length and compares bytes once. Large maps are searched.
fn small_map_get<'a>(map: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    if map.len() > 16 {
        return map.get(key).map(String::as_str);
    }
    map.iter()
        .find(|(k, _)| k.as_str() == key)
        .map(|(_, v)| v.as_str())
}

pub fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// `metav1.GetControllerOf`.
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
}

/// `metav1.NewControllerRef`: controller and blockOwnerDeletion both true.
pub fn controller_ref(api_version: &str, kind: &str, owner: &ObjectMeta) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        name: name(owner).to_string(),
        uid: uid(owner).to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Split `<parent>-<ordinal>` (the regex `(.*)-([0-9]+)$` of statefulset and lws utils).
pub fn parent_and_ordinal(name: &str) -> Option<(&str, i32)> {
    let (parent, ord) = name.rsplit_once('-')?;
    if ord.is_empty() || !ord.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, ord.parse().ok()?))
}

/// `intstr.GetScaledValueFromIntOrPercent`: an int as is, `N%` of `total`, rounded up or down.
pub fn scaled_value(v: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let Some(p) = s.strip_suffix('%') else {
                return Err(format!("invalid value for IntOrString: invalid type: string is not a percentage: {s:?}"));
            };
            let p: i64 = p
                .parse()
                .map_err(|_| format!("invalid value {s:?}: not a percentage"))?;
            let num = p * i64::from(total);
            let v = if round_up {
                (num + 99).div_euclid(100)
            } else {
                num.div_euclid(100)
            };
            Ok(v as i32)
        }
    }
}

/// `ContainerRestarted` (lws pkg/utils/pod/pod_utils.go v0.3.0:28-44; the same at v0.10.0): Running or Pending with a restarted container.
pub fn container_restarted(pod: &Pod) -> bool {
    if !matches!(phase(pod), "Running" | "Pending") {
        return false;
    }
    let st = pod.status.as_ref();
    let statuses = st
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten();
    let init = st
        .and_then(|s| s.init_container_statuses.as_ref())
        .into_iter()
        .flatten();
    statuses.chain(init).any(|c| c.restart_count > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_parse_like_the_go_regex() {
        assert_eq!(parent_and_ordinal("lws-3"), Some(("lws", 3)));
        assert_eq!(parent_and_ordinal("lws-3-12"), Some(("lws-3", 12)));
        assert_eq!(parent_and_ordinal("lws"), None);
        assert_eq!(parent_and_ordinal("lws-"), None);
        assert_eq!(parent_and_ordinal("lws-a1"), None);
    }

    #[test]
    fn percentages_scale_up_or_down() {
        let p = |s: &str| IntOrString::String(s.into());
        assert_eq!(scaled_value(&p("50%"), 5, true), Ok(3));
        assert_eq!(scaled_value(&p("50%"), 5, false), Ok(2));
        assert_eq!(scaled_value(&IntOrString::Int(2), 5, false), Ok(2));
        assert!(scaled_value(&p("50"), 5, false).is_err());
    }
}
