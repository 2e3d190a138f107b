//! What a real API server fills into a Pod that the manifest leaves out (kubernetes at 000f2605,
//! the 1.33 cycle): `SetDefaults_Pod`, `SetDefaults_PodSpec`, `SetDefaults_Container`,
//! `SetDefaults_ContainerPort`, `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`,
//! `SetDefaults_ObjectFieldSelector` (`pkg/apis/core/v1/defaults.go`), on every write; and on a
//! create the default admission plugins' additions: `DefaultTolerationSeconds`
//! (`plugin/pkg/admission/defaulttolerationseconds`), the priority of a pod without a class
//! (`plugin/pkg/admission/priority`), the `default` service account
//! (`plugin/pkg/admission/serviceaccount`) and `status.qosClass`
//! (`pkg/registry/core/pod/strategy.go` `PrepareForCreate`, `pkg/apis/core/helper/qos`).
//!
//! Left out (docs/fidelity.md): the service account's projected token volume and its mounts
//! (the name takes a random suffix; nothing in the simulation reads it), host-network port
//! defaults, volume source defaults. Nothing the simulated cluster decides reads these fields,
//! so every trace is the same with them; clients (`kubectl get pod -o yaml`, field selectors on
//! `spec.restartPolicy` or `spec.schedulerName`, `kubectl describe`'s QoS class) see what a
//! real cluster shows.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, Pod, PodSecurityContext, PodSpec, Probe, ResourceRequirements, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// `SetDefaults_Pod` and the defaults of everything it holds.
pub fn default_pod(pod: &mut Pod) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    default_spec(spec);
    let containers = spec.containers.iter_mut();
    for c in containers.chain(spec.init_containers.iter_mut().flatten()) {
        default_container(c);
    }
    spec.enable_service_links.get_or_insert(true);
}

/// `SetDefaults_PodSpec`.
fn default_spec(spec: &mut PodSpec) {
    fill(&mut spec.dns_policy, "ClusterFirst");
    fill(&mut spec.restart_policy, "Always");
    spec.security_context
        .get_or_insert_with(PodSecurityContext::default);
    spec.termination_grace_period_seconds.get_or_insert(30);
    fill(&mut spec.scheduler_name, "default-scheduler");
}

/// An absent or empty string field: the default (the `SetDefaults_*` functions test `== ""`).
fn fill(field: &mut Option<String>, default: &str) {
    if field.as_deref().is_none_or(str::is_empty) {
        *field = Some(default.to_string());
    }
}

/// `SetDefaults_Pod`'s first rule: a resource with a limit and no request requests its limit.
fn requests_from_limits(c: &mut Container) {
    let Some(r) = c.resources.as_mut() else {
        return;
    };
    let Some(limits) = r.limits.as_ref().filter(|l| !l.is_empty()) else {
        return;
    };
    let requests = r.requests.get_or_insert_with(BTreeMap::new);
    for (name, q) in limits {
        requests.entry(name.clone()).or_insert_with(|| q.clone());
    }
}

/// `SetDefaults_Container`, its ports, probes and downward-API env vars, and the requests
/// `SetDefaults_Pod` takes from the limits: a container as the API server stores it (the
/// invariant checker compares pods with templates through it).
pub fn default_container(c: &mut Container) {
    requests_from_limits(c);
    if c.image_pull_policy.as_deref().is_none_or(str::is_empty) {
        let policy = if image_tag(c.image.as_deref().unwrap_or("")) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.image_pull_policy = Some(policy.into());
    }
    fill(&mut c.termination_message_path, "/dev/termination-log");
    fill(&mut c.termination_message_policy, "File");
    for p in c.ports.iter_mut().flatten() {
        fill(&mut p.protocol, "TCP");
    }
    let probes = [
        &mut c.liveness_probe,
        &mut c.readiness_probe,
        &mut c.startup_probe,
    ];
    for probe in probes.into_iter().flatten() {
        default_probe(probe);
    }
    for e in c.env.iter_mut().flatten() {
        let field_ref = e.value_from.as_mut().and_then(|v| v.field_ref.as_mut());
        if let Some(f) = field_ref {
            fill(&mut f.api_version, "v1");
        }
    }
}

/// The tag `ParseImageName` finds: `latest` when the reference has neither a tag nor a digest,
/// none (`""`) when it has only a digest.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    // A tag follows the last `:` after the last `/` (a registry's `host:port/` is not one).
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag,
        None if digest => "",
        None => "latest",
    }
}

/// `SetDefaults_Probe` and `SetDefaults_HTTPGetAction`.
fn default_probe(p: &mut Probe) {
    // `SetDefaults_Probe` replaces a zero as it fills an absent value.
    let zero_or_none = |v: &mut Option<i32>, default: i32| {
        if v.unwrap_or(0) == 0 {
            *v = Some(default);
        }
    };
    zero_or_none(&mut p.timeout_seconds, 1);
    zero_or_none(&mut p.period_seconds, 10);
    zero_or_none(&mut p.success_threshold, 1);
    zero_or_none(&mut p.failure_threshold, 3);
    if let Some(h) = p.http_get.as_mut() {
        fill(&mut h.path, "/");
        fill(&mut h.scheme, "HTTP");
    }
}

/// The default admission plugins' additions to a pod being created, and its QoS class.
pub fn admit_pod_create(pod: &mut Pod) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    // The deprecated `serviceAccount` names it when `serviceAccountName` does not (conversion).
    if spec
        .service_account_name
        .as_deref()
        .is_none_or(str::is_empty)
    {
        spec.service_account_name = spec.service_account.clone();
    }
    fill(&mut spec.service_account_name, "default");
    spec.service_account = spec.service_account_name.clone();
    // Priority: no class and no global default class.
    if spec
        .priority_class_name
        .as_deref()
        .is_none_or(str::is_empty)
    {
        spec.priority.get_or_insert(0);
    }
    fill(&mut spec.preemption_policy, "PreemptLowerPriority");
    default_tolerations(spec);
    let qos = qos_class(spec);
    pod.status.get_or_insert_with(Default::default).qos_class = Some(qos.into());
}

/// `DefaultTolerationSeconds`: 300 s on a NotReady or unreachable node, unless the pod says.
fn default_tolerations(spec: &mut PodSpec) {
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = tolerations.iter().any(|t| {
            let effect = t.effect.as_deref().unwrap_or("");
            let key_matches = t.key.as_deref().is_none_or(|k| k.is_empty() || k == key);
            key_matches && (effect.is_empty() || effect == "NoExecute")
        });
        if !tolerated {
            tolerations.push(Toleration {
                key: Some(key.into()),
                operator: Some("Exists".into()),
                effect: Some("NoExecute".into()),
                toleration_seconds: Some(300),
                value: None,
            });
        }
    }
}

/// `GetPodQOS`: Guaranteed when every container limits and requests CPU and memory alike,
/// BestEffort when none requests or limits either, else Burstable.
fn qos_class(spec: &PodSpec) -> &'static str {
    let containers = spec.containers.iter();
    let all: Vec<&Container> = containers
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let compute = |m: Option<&BTreeMap<String, Quantity>>| -> BTreeMap<String, Quantity> {
        m.into_iter()
            .flatten()
            .filter(|(k, q)| matches!(k.as_str(), "cpu" | "memory") && !is_zero(q))
            .map(|(k, q)| (k.clone(), q.clone()))
            .collect()
    };
    let res =
        |c: &Container, pick: fn(&ResourceRequirements) -> Option<&BTreeMap<String, Quantity>>| {
            compute(c.resources.as_ref().and_then(pick))
        };
    let requests = |c: &Container| res(c, |r| r.requests.as_ref());
    let limits = |c: &Container| res(c, |r| r.limits.as_ref());
    if all
        .iter()
        .all(|c| requests(c).is_empty() && limits(c).is_empty())
    {
        return "BestEffort";
    }
    let guaranteed = all.iter().all(|c| {
        let (req, lim) = (requests(c), limits(c));
        let same = |k: &String, q: &Quantity| lim.get(k).is_some_and(|l| milli(l) == milli(q));
        lim.len() == 2 && req.len() == 2 && req.iter().all(|(k, q)| same(k, q))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// A quantity's value in thousandths (validation has refused one that does not parse).
fn milli(q: &Quantity) -> Option<i128> {
    super::quantity::parse_milli(&q.0).ok()
}

fn is_zero(q: &Quantity) -> bool {
    milli(q) == Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_without_a_tag_is_pulled_always_and_a_tagged_or_pinned_one_if_not_present() {
        assert_eq!(image_tag("vllm/vllm-openai"), "latest");
        assert_eq!(image_tag("vllm/vllm-openai:latest"), "latest");
        assert_eq!(image_tag("registry:5000/vllm"), "latest");
        assert_eq!(image_tag("registry:5000/vllm:v1"), "v1");
        assert_eq!(image_tag("vllm@sha256:abc"), "");
    }

    #[test]
    fn qos_follows_requests_and_limits() {
        let q = |s: &str| Quantity(s.into());
        let container = |req: &[(&str, &str)], lim: &[(&str, &str)]| {
            let map = |v: &[(&str, &str)]| {
                let m: BTreeMap<String, Quantity> =
                    v.iter().map(|(k, s)| (k.to_string(), q(s))).collect();
                (!m.is_empty()).then_some(m)
            };
            let mut c = Container {
                name: "c".into(),
                resources: Some(ResourceRequirements {
                    requests: map(req),
                    limits: map(lim),
                    ..Default::default()
                }),
                ..Default::default()
            };
            requests_from_limits(&mut c);
            c
        };
        let spec = |c: Container| PodSpec {
            containers: vec![c],
            ..Default::default()
        };
        assert_eq!(qos_class(&spec(container(&[], &[]))), "BestEffort");
        let both = [("cpu", "1"), ("memory", "1Gi")];
        assert_eq!(qos_class(&spec(container(&[], &both))), "Guaranteed");
        assert_eq!(
            qos_class(&spec(container(&[("cpu", "1")], &[]))),
            "Burstable"
        );
        let less = [("cpu", "500m"), ("memory", "1Gi")];
        assert_eq!(qos_class(&spec(container(&less, &both))), "Burstable");
        assert_eq!(
            qos_class(&spec(container(&[("cpu", "0")], &[]))),
            "BestEffort"
        );
        let same = [("cpu", "1000m"), ("memory", "1Gi")];
        assert_eq!(qos_class(&spec(container(&same, &both))), "Guaranteed");
    }
}
