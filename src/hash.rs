//! Opaque, stable hashes standing in for upstream's sha1 strings.
//!
//! Upstream hashes Go protobuf `String()` dumps with sha1 (V3 utils:29-46), which cannot be
//! reproduced byte for byte in Rust; what matters is that equal inputs hash equal and different
//! inputs differ (V3 lwsc:693-695 compares hashes only). We use FNV-1a 64 over the canonical JSON (sorted keys).

use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::api::LeaderWorkerSet;

pub(crate) fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3); // part separator
    }
    h
}

fn template_bytes(t: Option<&PodTemplateSpec>) -> Vec<u8> {
    match t {
        Some(t) => serde_json::to_vec(&serde_json::to_value(t).expect("templates serialize"))
            .expect("values serialize"),
        None => b"nil".to_vec(),
    }
}

/// `LeaderWorkerTemplateHash`: leader template (or "nil") and worker template; with
/// `network_config`, the subdomain policy too (FX utils:43-51).
pub fn template_hash(lws: &LeaderWorkerSet, network_config: bool) -> String {
    let t = &lws.spec.leader_worker_template;
    let leader = template_bytes(t.leader_template.as_ref());
    let worker = template_bytes(Some(&t.worker_template));
    let policy = if network_config {
        lws.spec
            .network_config
            .as_ref()
            .and_then(|n| n.subdomain_policy.clone())
            .unwrap_or_default()
    } else {
        String::new()
    };
    format!("{:016x}", fnv1a64(&[&leader, &worker, policy.as_bytes()]))
}

/// `group-key`: deterministic per `<namespace>/<leader pod name>` (V3 podwh:172-174), so a leader
/// re-created under the same name keeps its key.
pub fn group_key(namespace: &str, pod_name: &str) -> String {
    format!(
        "{:016x}",
        fnv1a64(&[namespace.as_bytes(), b"/", pod_name.as_bytes()])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    #[test]
    fn equal_templates_hash_equal_and_changes_show() {
        let mut a = LeaderWorkerSet::default();
        a.spec.leader_worker_template.worker_template.spec = Some(PodSpec {
            containers: vec![Container {
                name: "w".into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        let b = a.clone();
        assert_eq!(template_hash(&a, false), template_hash(&b, false));
        let mut c = a.clone();
        c.spec
            .leader_worker_template
            .worker_template
            .spec
            .as_mut()
            .unwrap()
            .containers[0]
            .name = "x".into();
        assert_ne!(template_hash(&a, false), template_hash(&c, false));
        // Size is not part of the hash (V3 utils:29-46 hashes the two templates only).
        let mut d = a.clone();
        d.spec.leader_worker_template.size = Some(9);
        assert_eq!(template_hash(&a, false), template_hash(&d, false));
        assert_eq!(group_key("ns", "x-0"), group_key("ns", "x-0"));
        assert_ne!(group_key("ns", "x-0"), group_key("ns", "x-1"));
    }
}
