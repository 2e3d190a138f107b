//! Opaque, stable hashes standing in for upstream's sha1 strings.
//!
//! Upstream hashes Go protobuf `String()` dumps with sha1 (V3 utils:29-46), which cannot be
//! reproduced byte for byte in Rust; what matters is that equal inputs hash equal and different
//! inputs differ (V3 lwsc:693-695 compares hashes only). We use FNV-1a 64 over the canonical JSON (sorted keys).

use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::api::LeaderWorkerSet;

pub(crate) fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h = Fnv1a64::default();
    for part in parts {
        h.bytes(part);
        h.end_part();
    }
    h.0
}

/// FNV-1a 64 fed in pieces, so a template is hashed as it serializes, with no buffer.
struct Fnv1a64(u64);

impl Default for Fnv1a64 {
    fn default() -> Self {
        Fnv1a64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a64 {
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The separator between parts, so `["ab", "c"]` and `["a", "bc"]` differ.
    fn end_part(&mut self) {
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
    }

    /// One part: the template's JSON (or "nil"). k8s-openapi serializes a struct's fields in
    /// sorted order and its maps are `BTreeMap`s, so these are the bytes of the canonical
    /// (sorted-keys) JSON without building it (`template_json_is_canonical` checks it).
    fn template(&mut self, t: Option<&PodTemplateSpec>) {
        match t {
            Some(t) => serde_json::to_writer(&mut *self, t).expect("templates serialize"),
            None => self.bytes(b"nil"),
        }
        self.end_part();
    }
}

impl std::io::Write for Fnv1a64 {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `LeaderWorkerTemplateHash`: leader template (or "nil") and worker template; with
/// `network_config`, the subdomain policy too (FX utils:43-51).
pub fn template_hash(lws: &LeaderWorkerSet, network_config: bool) -> String {
    let t = &lws.spec.leader_worker_template;
    let mut h = Fnv1a64::default();
    h.template(t.leader_template.as_ref());
    h.template(Some(&t.worker_template));
    let policy = if network_config {
        lws.spec
            .network_config
            .as_ref()
            .and_then(|n| n.subdomain_policy.clone())
            .unwrap_or_default()
    } else {
        String::new()
    };
    h.bytes(policy.as_bytes());
    h.end_part();
    hex16(h.0)
}

/// `format!("{:016x}", n)` without `fmt` (a template hash per LWS reconcile).
fn hex16(n: u64) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    (0..16)
        .rev()
        .map(|i| char::from(DIGITS[(n >> (4 * i)) as usize & 0xf]))
        .collect()
}

/// `group-key`: deterministic per `<namespace>/<leader pod name>` (V3 podwh:172-174), so a leader
/// re-created under the same name keeps its key.
pub fn group_key(namespace: &str, pod_name: &str) -> String {
    hex16(fnv1a64(&[namespace.as_bytes(), b"/", pod_name.as_bytes()]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    #[test]
    fn hex16_is_zero_padded_lower_hex() {
        for n in [0, 1, 0xabc, u64::MAX, 0x0123_4567_89ab_cdef, 1 << 63] {
            assert_eq!(hex16(n), format!("{n:016x}"));
        }
    }

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

    /// The streaming hash relies on k8s-openapi writing a struct's fields in sorted order:
    /// a template using many of a pod's fields serializes to the same bytes directly and
    /// through `serde_json::Value` (whose maps sort their keys).
    #[test]
    fn template_json_is_canonical() {
        let t: PodTemplateSpec = serde_json::from_value(serde_json::json!({
            "metadata": {"labels": {"b": "1", "a": "2"}, "annotations": {"z": "", "A": "x"}},
            "spec": {
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchExpressions": [
                        {"key": "k", "operator": "In", "values": ["v"]}]},
                     "topologyKey": "kubernetes.io/hostname"}]}},
                "automountServiceAccountToken": false,
                "containers": [{
                    "name": "vllm", "image": "vllm:1", "imagePullPolicy": "IfNotPresent",
                    "args": ["--x"], "command": ["sh"], "workingDir": "/w",
                    "env": [{"name": "A", "value": "1"},
                            {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "envFrom": [{"configMapRef": {"name": "c"}}],
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "resources": {"limits": {"nvidia.com/gpu": "8", "cpu": "4"},
                                  "requests": {"memory": "1Gi"}},
                    "readinessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 15,
                                       "periodSeconds": 10},
                    "livenessProbe": {"httpGet": {"path": "/h", "port": "http"}},
                    "startupProbe": {"exec": {"command": ["true"]}},
                    "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
                    "securityContext": {"privileged": true, "runAsUser": 0},
                    "volumeMounts": [{"mountPath": "/dev/shm", "name": "dshm"}],
                    "stdin": true, "tty": true,
                    "terminationMessagePath": "/t", "terminationMessagePolicy": "File"}],
                "dnsPolicy": "ClusterFirst", "hostIPC": true, "hostNetwork": false,
                "hostPID": false, "hostname": "h", "subdomain": "s",
                "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Always"}],
                "nodeSelector": {"cloud.google.com/gke-tpu-topology": "2x4"},
                "priorityClassName": "high", "restartPolicy": "Always",
                "schedulerName": "default-scheduler", "serviceAccountName": "sa",
                "terminationGracePeriodSeconds": 30,
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                               "whenUnsatisfiable": "DoNotSchedule"}],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "15Gi"}},
                            {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}}]
            }
        }))
        .unwrap();
        let direct = serde_json::to_vec(&t).unwrap();
        let sorted = serde_json::to_vec(&serde_json::to_value(&t).unwrap()).unwrap();
        assert_eq!(String::from_utf8(direct), String::from_utf8(sorted));
        let mut h = Fnv1a64::default();
        h.template(Some(&t));
        let mut parts = Fnv1a64::default();
        parts.bytes(&serde_json::to_vec(&t).unwrap());
        parts.end_part();
        assert_eq!(h.0, parts.0);
    }
}
