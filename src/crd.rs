//! What the API server does with a LeaderWorkerSet before any webhook sees it, per release: it
//! decodes the object against the release's CRD schema and drops every field the schema does not
//! declare (structural schema pruning), then applies the schema's defaults; after the mutating
//! webhooks it checks the schema's enums and bounds. The schema is the CRD of the tag
//! (`config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml` at v0.3.0, v0.4.1 and
//! v0.10.0), reduced by `scripts/crd-schema.py` to its shape in `src/crd/<tag>.schema`.
//!
//! Our `LeaderWorkerSet` is the union of every release's fields (and its pod templates are
//! Kubernetes 1.37's), so a field newer than the tag, for example
//! `rolloutStrategy.rollingUpdateConfiguration.partition` (v0.7.0) or `networkConfig` (v0.4.0)
//! at v0.3.0, is removed here as a real API server serving that CRD would remove it.

use serde_json::Value;

use crate::api::LeaderWorkerSet;
use crate::profile::Release;

/// `src/crd/<tag>.schema` of a release.
fn schema_text(release: Release) -> &'static str {
    match release {
        Release::V0_3_0 => include_str!("crd/v0.3.0.schema"),
        Release::V0_4_1 => include_str!("crd/v0.4.1.schema"),
        Release::V0_10_0 => include_str!("crd/v0.10.0.schema"),
    }
}

/// `additionalProperties` of an object schema.
enum Additional {
    /// Absent: fields not in `properties` are pruned.
    None,
    /// `true`: any field is kept as is.
    Any,
    /// A schema every value is pruned by (a map).
    Schema(usize),
}

struct Node {
    preserve_unknown: bool,
    properties: Vec<(&'static str, usize)>,
    items: Option<usize>,
    additional: Additional,
}

/// One release's CRD schema, as a table of distinct subschemas (the last is the root).
pub struct Schema {
    nodes: Vec<Node>,
}

impl Schema {
    pub fn of(release: Release) -> Schema {
        let mut nodes = Vec::new();
        for line in schema_text(release).lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let mut parts = line.split(' ');
            let flag = parts.next().unwrap_or("-");
            let mut node = Node {
                preserve_unknown: flag == "P",
                properties: Vec::new(),
                items: None,
                additional: Additional::None,
            };
            for entry in parts {
                let (name, id) = entry
                    .rsplit_once(':')
                    .unwrap_or_else(|| panic!("bad schema entry {entry:?}"));
                let child = || -> usize { id.parse().expect("schema node id") };
                match name {
                    "[]" => node.items = Some(child()),
                    "{}" if id == "*" => node.additional = Additional::Any,
                    "{}" => node.additional = Additional::Schema(child()),
                    _ => node.properties.push((name, child())),
                }
            }
            nodes.push(node);
        }
        assert!(!nodes.is_empty(), "empty CRD schema");
        Schema { nodes }
    }

    fn root(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Structural pruning (apiextensions-apiserver `pkg/apiserver/schema/pruning/algorithm.go`):
    /// an object keeps the fields its schema declares, each pruned by its own schema, and the
    /// others only under `additionalProperties` or `x-kubernetes-preserve-unknown-fields`; array
    /// items are pruned by `items`. At the root, `apiVersion`, `kind` and `metadata` are the API
    /// server's (ObjectMeta has its own decoding). Returns whether anything was removed.
    pub fn prune_value(&self, value: &mut Value) -> bool {
        self.prune_at(value, self.root(), true)
    }

    fn prune_at(&self, value: &mut Value, id: usize, is_root: bool) -> bool {
        let node = &self.nodes[id];
        let mut pruned = false;
        match value {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if is_root && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    let declared = node
                        .properties
                        .iter()
                        .find(|(name, _)| *name == key)
                        .map(|(_, child)| *child);
                    let child = match (declared, &node.additional) {
                        (Some(c), _) | (None, &Additional::Schema(c)) => Some(c),
                        (None, Additional::Any) => None,
                        (None, Additional::None) if node.preserve_unknown => None,
                        (None, Additional::None) => {
                            map.remove(&key);
                            pruned = true;
                            continue;
                        }
                    };
                    if let (Some(c), Some(v)) = (child, map.get_mut(&key)) {
                        pruned |= self.prune_at(v, c, false);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(c) = node.items {
                    for v in items {
                        pruned |= self.prune_at(v, c, false);
                    }
                }
            }
            _ => {}
        }
        pruned
    }

    /// Prune a LeaderWorkerSet as the API server decoding it would. The object is rebuilt only
    /// when a field was removed, so an object the schema fully covers is left untouched.
    pub fn prune(&self, lws: &mut LeaderWorkerSet) {
        let Ok(mut value) = serde_json::to_value(&*lws) else {
            return;
        };
        if self.prune_value(&mut value) {
            if let Ok(pruned) = serde_json::from_value(value) {
                *lws = pruned;
            }
        }
    }
}

/// Prune `lws` by the CRD schema of `release`.
pub fn prune(lws: &mut LeaderWorkerSet, release: Release) {
    schema(release).prune(lws);
}

/// Each release's schema, read once: the API server prunes every LWS write by it.
pub fn schema(release: Release) -> &'static Schema {
    static SCHEMAS: [std::sync::OnceLock<Schema>; 3] = [
        std::sync::OnceLock::new(),
        std::sync::OnceLock::new(),
        std::sync::OnceLock::new(),
    ];
    let i = match release {
        Release::V0_3_0 => 0,
        Release::V0_4_1 => 1,
        Release::V0_10_0 => 2,
    };
    SCHEMAS[i].get_or_init(|| Schema::of(release))
}

/// A `+kubebuilder:validation:Enum` violation in the API server's words
/// (apimachinery `field.NotSupported`).
pub fn check_enum(errs: &mut Vec<String>, path: &str, value: &str, allowed: &[&str]) {
    if !allowed.contains(&value) {
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        errs.push(format!(
            "{path}: Unsupported value: {value:?}: supported values: {}",
            quoted.join(", ")
        ));
    }
}

/// The `required` fields of the pod templates' schema that a template commonly lacks: a
/// template's `spec.containers`, and each container's and env var's `name` (the CRD's pod
/// templates are Kubernetes' `PodSpec`, `Container` and `EnvVar`, whose schemas list them as
/// required at every tag). The API server checks them after the mutating webhooks, with every
/// other schema rule: a template without containers is a 422, not a LeaderWorkerSet whose
/// StatefulSets the API server then refuses at every reconcile.
///
/// The typed object cannot tell an absent list or name from an empty one, so an explicit
/// `containers: []` or `name: ""`, which the schema lets through, is refused too
/// (docs/fidelity.md).
pub fn check_required_pod_fields(errs: &mut Vec<String>, lws: &LeaderWorkerSet) {
    let t = &lws.spec.leader_worker_template;
    let templates = [
        (
            "spec.leaderWorkerTemplate.leaderTemplate",
            t.leader_template.as_ref(),
        ),
        (
            "spec.leaderWorkerTemplate.workerTemplate",
            Some(&t.worker_template),
        ),
    ];
    for (path, template) in templates {
        let Some(spec) = template.and_then(|t| t.spec.as_ref()) else {
            continue;
        };
        if spec.containers.is_empty() {
            errs.push(format!("{path}.spec.containers: Required value"));
        }
        let init = spec.init_containers.as_deref().unwrap_or(&[]);
        let lists = [
            ("containers", spec.containers.as_slice()),
            ("initContainers", init),
        ];
        for (list, containers) in lists {
            for (i, c) in containers.iter().enumerate() {
                let at = format!("{path}.spec.{list}[{i}]");
                if c.name.is_empty() {
                    errs.push(format!("{at}.name: Required value"));
                }
                for (j, e) in c.env.iter().flatten().enumerate() {
                    if e.name.is_empty() {
                        errs.push(format!("{at}.env[{j}].name: Required value"));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{NetworkConfig, RollingUpdateConfiguration, RolloutStrategy, SubGroupPolicy};

    fn lws() -> LeaderWorkerSet {
        let mut l = LeaderWorkerSet::default();
        l.metadata.name = Some("lws".into());
        l.spec.rollout_strategy = Some(RolloutStrategy {
            type_: "RollingUpdate".into(),
            rolling_update_configuration: Some(RollingUpdateConfiguration {
                partition: Some(2),
                ..Default::default()
            }),
        });
        l.spec.network_config = Some(NetworkConfig {
            subdomain_policy: Some("Shared".into()),
        });
        l.spec.leader_worker_template.sub_group_policy = Some(SubGroupPolicy {
            sub_group_size: Some(2),
            sub_group_policy_type: Some("LeaderWorker".into()),
        });
        l.spec.leader_worker_template.volume_claim_templates = Some(vec![]);
        l
    }

    /// A worker template without containers, a container without a name and an env var
    /// without one are each `Required value` at their path; a leader template is checked when
    /// there is one.
    #[test]
    fn required_pod_template_fields_are_named() {
        let from = |v: serde_json::Value| -> LeaderWorkerSet { serde_json::from_value(v).unwrap() };
        let mut errs = Vec::new();
        let l = from(
            serde_json::json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": {}}}}}),
        );
        check_required_pod_fields(&mut errs, &l);
        assert_eq!(
            errs,
            ["spec.leaderWorkerTemplate.workerTemplate.spec.containers: Required value"]
        );
        let mut errs = Vec::new();
        let l = from(serde_json::json!({"spec": {"leaderWorkerTemplate": {
            "leaderTemplate": {"spec": {"containers": [{"name": "l", "image": "i", "env": [{"value": "1"}]}]}},
            "workerTemplate": {"spec": {"containers": [{"image": "i"}]}}}}}));
        check_required_pod_fields(&mut errs, &l);
        assert_eq!(
            errs,
            [
                "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].env[0].name: Required value",
                "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].name: Required value",
            ]
        );
        let mut errs = Vec::new();
        let l = from(serde_json::json!({"spec": {"leaderWorkerTemplate": {
            "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}}}));
        check_required_pod_fields(&mut errs, &l);
        assert!(errs.is_empty(), "{errs:?}");
    }

    fn partition(l: &LeaderWorkerSet) -> Option<i32> {
        l.rolling_update().partition
    }

    #[test]
    fn each_release_prunes_the_fields_its_crd_lacks() {
        let mut a = lws();
        prune(&mut a, Release::V0_3_0);
        assert_eq!(partition(&a), None);
        assert_eq!(a.spec.network_config, None);
        let sgp = a
            .spec
            .leader_worker_template
            .sub_group_policy
            .clone()
            .unwrap();
        assert_eq!(
            (sgp.sub_group_size, sgp.sub_group_policy_type),
            (Some(2), None)
        );
        assert_eq!(a.spec.leader_worker_template.volume_claim_templates, None);

        let mut b = lws();
        prune(&mut b, Release::V0_4_1);
        assert_eq!(partition(&b), None);
        assert_eq!(
            b.spec.network_config.unwrap().subdomain_policy.as_deref(),
            Some("Shared")
        );
        assert_eq!(b.spec.leader_worker_template.volume_claim_templates, None);

        let mut c = lws();
        prune(&mut c, Release::V0_10_0);
        assert_eq!(c, lws(), "v0.10.0's CRD declares every LWS field we carry");
    }

    #[test]
    fn pod_template_fields_newer_than_the_crd_are_pruned() {
        // `hostnameOverride` (PodSpec, Kubernetes 1.34) is in v0.10.0's CRD, not v0.4.1's.
        let mut l = lws();
        let v: Value = serde_json::json!({
            "spec": {"hostnameOverride": "h", "containers": [{"name": "c", "image": "i"}]}
        });
        l.spec.leader_worker_template.worker_template = serde_json::from_value(v).unwrap();
        let host = |l: &LeaderWorkerSet| {
            let spec = l.spec.leader_worker_template.worker_template.spec.as_ref();
            spec.and_then(|s| s.hostname_override.clone())
        };
        let mut old = l.clone();
        prune(&mut old, Release::V0_4_1);
        assert_eq!(host(&old), None);
        let mut new = l.clone();
        prune(&mut new, Release::V0_10_0);
        assert_eq!(host(&new).as_deref(), Some("h"));
        // Template metadata keeps only labels, annotations, finalizers, name and namespace.
        let mut g = l.clone();
        let meta = g
            .spec
            .leader_worker_template
            .worker_template
            .metadata
            .get_or_insert_with(Default::default);
        meta.generate_name = Some("x-".into());
        meta.labels = Some([("a".to_string(), "b".to_string())].into());
        prune(&mut g, Release::V0_10_0);
        let meta = g
            .spec
            .leader_worker_template
            .worker_template
            .metadata
            .unwrap();
        assert_eq!(meta.generate_name, None);
        assert_eq!(meta.labels.unwrap().len(), 1);
    }

    #[test]
    fn every_schema_parses_and_names_the_lws_spec() {
        for r in [Release::V0_3_0, Release::V0_4_1, Release::V0_10_0] {
            let s = Schema::of(r);
            let root = &s.nodes[s.root()];
            assert!(root.properties.iter().any(|(n, _)| *n == "spec"));
        }
    }
}
