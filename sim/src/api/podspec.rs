//! `ValidatePodSpec`'s rules for the fields a manifest commonly gets wrong (kubernetes
//! `pkg/apis/core/validation/validation.go` at 000f2605, the 1.33 cycle: `validateContainers`,
//! `validateInitContainers`, `validateContainerCommon`, `validateContainerPorts`,
//! `AccumulateUniqueHostPorts`, `ValidateEnv`, `validateEnvVarValueFrom`, `ValidateEnvFrom`,
//! `validateResourceRequirements`, `ValidateResourceQuantityValue`, `validateProbe`,
//! `validateHandler`, `validatePullPolicy`, `validateRestartPolicy`, `validateDNSPolicy`;
//! the messages of apimachinery v0.33.0 `pkg/util/validation`). A pod whose spec breaks one is
//! refused with 422, every error listed as `field.ErrorList.ToAggregate` lists them.
//!
//! What is left out is listed in docs/fidelity.md: volumes, security contexts, affinity, DNS
//! config, topology spread, lifecycle hooks, hugepages and the update-only rules (immutability
//! is `defaults::validate_pod_update`).
//!
//! Defaults are applied before validation upstream (`SetDefaults_PodSpec`,
//! `SetDefaults_Container`, the ports' `TCP`): the simulator does not write them, so an absent
//! enum here is taken as its default, never as the `Required value` it cannot be on a real
//! server.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec, Probe, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use std::fmt::Display;

use super::at::At;
use super::{names, quantity};

/// `validation.InclusiveRangeError(1, 65535)`.
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";
/// `validation.IsNegativeErrorMsg`.
const NON_NEGATIVE: &str = "must be greater than or equal to 0";

/// Which rules of a Kubernetes version apply.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// `RelaxedEnvironmentVariableValidation` (beta, on by default from 1.32): env names are
    /// any printable ASCII but `=`, else `IsEnvVarName`'s C-like names.
    pub relaxed_env_names: bool,
    /// `InPlacePodVerticalScaling` (beta, on by default from 1.33): a container's
    /// `resizePolicy` is validated (`validateResizePolicy`).
    pub resize_policy: bool,
}

/// Every error of a pod's spec, in `ValidatePodSpec`'s order, at paths under `path`.
pub fn validate(path: &str, spec: &PodSpec, rules: Rules) -> Vec<String> {
    let path = &At::root(path);
    let mut errs = Vec::new();
    containers(&mut errs, path, spec, rules);
    defaulted_enum(
        &mut errs,
        path.field("restartPolicy"),
        spec.restart_policy.as_deref(),
        &["Always", "OnFailure", "Never"],
    );
    defaulted_enum(
        &mut errs,
        path.field("dnsPolicy"),
        spec.dns_policy.as_deref(),
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    );
    // validateDNSPolicy: `None` takes its servers from dnsConfig, which must then be given.
    if spec.dns_policy.as_deref() == Some("None") && spec.dns_config.is_none() {
        errs.push(format!(
            "{path}.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"
        ));
    }
    for (k, v) in spec.node_selector.iter().flatten() {
        // ValidateLabels: the key and the value each on their own.
        if let Err(m) = names::qualified_name(k) {
            errs.push(format!("{path}.nodeSelector: Invalid value: {k:?}: {m}"));
        }
        if let Err(m) = names::label_value(v) {
            errs.push(format!("{path}.nodeSelector: Invalid value: {v:?}: {m}"));
        }
    }
    tolerations(&mut errs, &path.field("tolerations"), spec);
    if let Some(s) = spec
        .active_deadline_seconds
        .filter(|s| !(1..=i64::from(i32::MAX)).contains(s))
    {
        errs.push(format!(
            "{path}.activeDeadlineSeconds: Invalid value: {s}: must be between 1 and 2147483647, inclusive"
        ));
    }
    for (field, value) in [("hostname", &spec.hostname), ("subdomain", &spec.subdomain)] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            dns_label(&mut errs, path.field(field), v);
        }
    }
    errs
}

/// `ValidateTolerations` (kubernetes pkg/apis/core/validation/validation.go): a key is a
/// label name, an empty key takes `Exists`, `tolerationSeconds` only with `NoExecute`, an
/// `Equal` value is a label value (upstream names `operator` for it), an `Exists` one is empty,
/// and the operator and effect are among theirs.
fn tolerations(errs: &mut Vec<String>, path: &At, spec: &PodSpec) {
    for (i, t) in spec.tolerations.iter().flatten().enumerate() {
        let at = path.index(i);
        let key = t.key.as_deref().unwrap_or("");
        let op = t.operator.as_deref().unwrap_or("");
        let value = t.value.as_deref().unwrap_or("");
        let effect = t.effect.as_deref().unwrap_or("");
        if !key.is_empty() {
            if let Err(m) = names::qualified_name(key) {
                errs.push(format!("{at}.key: Invalid value: {key:?}: {m}"));
            }
        }
        if key.is_empty() && op != "Exists" {
            errs.push(format!("{at}.operator: Invalid value: {op:?}: operator must be Exists when `key` is empty, which means \"match all values and all keys\""));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            errs.push(format!("{at}.effect: Invalid value: {effect:?}: effect must be 'NoExecute' when `tolerationSeconds` is set"));
        }
        match op {
            "" | "Equal" => {
                if let Err(m) = names::label_value(value) {
                    errs.push(format!("{at}.operator: Invalid value: {value:?}: {m}"));
                }
            }
            "Exists" if !value.is_empty() => {
                let seconds = if t.toleration_seconds.is_some() {
                    "(*int64)(...)"
                } else {
                    "(*int64)(nil)"
                };
                errs.push(format!("{at}.operator: Invalid value: core.Toleration{{Key:{key:?}, Operator:\"Exists\", Value:{value:?}, Effect:{effect:?}, TolerationSeconds:{seconds}}}: value must be empty when `operator` is 'Exists'"));
            }
            "Exists" => {}
            other => unsupported(errs, at.field("operator"), other, &["Equal", "Exists"]),
        }
        if !effect.is_empty() {
            not_supported(
                errs,
                at.field("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            );
        }
    }
}

/// `IsDNS1123Label`'s message for a value that is not one (`RegexError` joins its examples
/// with `",  or "`, two spaces).
pub const DNS_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// `ValidateDNS1123Label`: too long, and (apart) not of the label's form: a dotted name that
/// would be a subdomain is told so.
pub(super) fn dns_label(errs: &mut Vec<String>, path: impl Display, v: &str) {
    if v.len() > 63 {
        errs.push(format!(
            "{path}: Invalid value: {v:?}: must be no more than 63 characters"
        ));
    }
    if !label_form(v) {
        let why = if v.split('.').all(label_form) {
            "must not contain dots"
        } else {
            DNS_LABEL
        };
        errs.push(format!("{path}: Invalid value: {v:?}: {why}"));
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, whatever the length.
fn label_form(v: &str) -> bool {
    let b = v.as_bytes();
    let edge = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    edge(b.first())
        && edge(b.last())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The containers of both lists, in order: path, container, whether an init container.
fn each_container<'a>(
    path: &'a At<'a>,
    spec: &'a PodSpec,
) -> impl Iterator<Item = (At<'a>, &'a Container, bool)> + 'a {
    let init = spec.init_containers.as_deref().unwrap_or(&[]);
    let lists = [
        ("containers", spec.containers.as_slice(), false),
        ("initContainers", init, true),
    ];
    lists.into_iter().flat_map(move |(list, items, is_init)| {
        items
            .iter()
            .enumerate()
            .map(move |(i, c)| (path.item(list, i), c, is_init))
    })
}

/// The container names and images alone (at least one container, each named with a DNS-1123
/// label unique across both lists, each with an image): what the simulator checks of a
/// StatefulSet's template (docs/fidelity.md).
pub fn names_and_images(path: &str, spec: &PodSpec) -> Vec<String> {
    let path = &At::root(path);
    let mut errs = Vec::new();
    if spec.containers.is_empty() {
        errs.push(format!("{path}.containers: Required value"));
    }
    let mut seen = BTreeSet::new();
    for (at, c, _) in each_container(path, spec) {
        identity(&mut errs, &at, c);
        if !c.name.is_empty() && !seen.insert(c.name.as_str()) {
            errs.push(format!("{at}.name: Duplicate value: {:?}", c.name));
        }
    }
    errs
}

/// `validateContainers` then `validateInitContainers`: each container's own rules in turn
/// (its name unique across both lists), then the regular containers' host ports together.
fn containers(errs: &mut Vec<String>, path: &At, spec: &PodSpec, rules: Rules) {
    if spec.containers.is_empty() {
        errs.push(format!("{path}.containers: Required value"));
    }
    let mut seen = BTreeSet::new();
    for (at, c, is_init) in each_container(path, spec) {
        identity(errs, &at, c);
        if !c.name.is_empty() && !seen.insert(c.name.as_str()) {
            errs.push(format!("{at}.name: Duplicate value: {:?}", c.name));
        }
        container(errs, &at, c, is_init, rules);
        if is_init {
            // Init containers are checked one at a time (`checkHostPortConflicts` on a list
            // of one, so their index reads 0).
            let list = path.field("initContainers");
            unique_host_ports(errs, &list, 0, c, &mut BTreeSet::new());
        }
    }
    let mut host_ports = BTreeSet::new();
    for (i, c) in spec.containers.iter().enumerate() {
        let list = path.field("containers");
        unique_host_ports(errs, &list, i, c, &mut host_ports);
    }
}

/// `validateContainerCommon`'s name and image.
fn identity(errs: &mut Vec<String>, at: &At, c: &Container) {
    if c.name.is_empty() {
        errs.push(format!("{at}.name: Required value"));
    } else {
        dns_label(errs, at.field("name"), &c.name);
    }
    if c.image.as_deref().unwrap_or("").is_empty() {
        errs.push(format!("{at}.image: Required value"));
    }
}

/// The rest of `validateContainerCommon` and the init/regular container rules of one
/// container.
fn container(errs: &mut Vec<String>, at: &At, c: &Container, is_init: bool, rules: Rules) {
    ports(errs, at, c);
    env(errs, at, c, rules);
    if rules.resize_policy && !is_init && c.resize_policy.is_some() {
        resize_policy(errs, &at.field("resizePolicy"), c);
    }
    if let Some(r) = &c.resources {
        resources(errs, &at.field("resources"), r);
    }
    defaulted_enum(
        errs,
        at.field("terminationMessagePolicy"),
        c.termination_message_policy.as_deref(),
        &["File", "FallbackToLogsOnError"],
    );
    defaulted_enum(
        errs,
        at.field("imagePullPolicy"),
        c.image_pull_policy.as_deref(),
        &["Always", "IfNotPresent", "Never"],
    );
    let sidecar = c.restart_policy.as_deref() == Some("Always");
    let probes = [
        ("livenessProbe", &c.liveness_probe, Kind::Liveness),
        ("readinessProbe", &c.readiness_probe, Kind::Readiness),
        ("startupProbe", &c.startup_probe, Kind::Startup),
    ];
    for (field, p, kind) in probes {
        let Some(p) = p else { continue };
        if is_init && !sidecar {
            errs.push(format!(
                "{at}.{field}: Forbidden: may not be set for init containers without restartPolicy=Always"
            ));
            continue;
        }
        probe(errs, &at.field(field), p, kind);
    }
    match (c.restart_policy.as_deref(), is_init) {
        (Some(p), true) => not_supported(errs, at.field("restartPolicy"), p, &["Always"]),
        (Some(_), false) => errs.push(format!(
            "{at}.restartPolicy: Forbidden: may not be set for non-init containers"
        )),
        (None, _) => {}
    }
}

/// `validateContainerPorts`: names (per container), port numbers, protocols.
fn ports(errs: &mut Vec<String>, at: &At, c: &Container) {
    let mut names_seen = BTreeSet::new();
    for (i, p) in c.ports.iter().flatten().enumerate() {
        let here = at.item("ports", i);
        if let Some(n) = p.name.as_deref().filter(|n| !n.is_empty()) {
            let bad = port_name_errors(n);
            for m in &bad {
                errs.push(format!("{here}.name: Invalid value: {n:?}: {m}"));
            }
            if bad.is_empty() && !names_seen.insert(n) {
                errs.push(format!("{here}.name: Duplicate value: {n:?}"));
            }
        }
        match p.container_port {
            0 => errs.push(format!("{here}.containerPort: Required value")),
            n if !(1..=65535).contains(&n) => errs.push(format!(
                "{here}.containerPort: Invalid value: {n}: {PORT_RANGE}"
            )),
            _ => {}
        }
        if let Some(h) = p.host_port.filter(|h| *h != 0 && !(1..=65535).contains(h)) {
            errs.push(format!("{here}.hostPort: Invalid value: {h}: {PORT_RANGE}"));
        }
        let allowed = ["SCTP", "TCP", "UDP"];
        defaulted_enum(
            errs,
            here.field("protocol"),
            p.protocol.as_deref(),
            &allowed,
        );
    }
}

/// `AccumulateUniqueHostPorts`: a non-zero host port is taken once per protocol and host IP.
fn unique_host_ports(
    errs: &mut Vec<String>,
    list: &At,
    index: usize,
    c: &Container,
    taken: &mut BTreeSet<String>,
) {
    for (pi, p) in c.ports.iter().flatten().enumerate() {
        let Some(port) = p.host_port.filter(|h| *h != 0) else {
            continue;
        };
        let key = format!(
            "{}/{}/{port}",
            p.protocol
                .as_deref()
                .filter(|p| !p.is_empty())
                .unwrap_or("TCP"),
            p.host_ip.as_deref().unwrap_or("")
        );
        if !taken.insert(key.clone()) {
            errs.push(format!(
                "{list}[{index}].ports[{pi}].hostPort: Duplicate value: {key:?}"
            ));
        }
    }
}

/// `IsValidPortName`: an IANA service name.
fn port_name_errors(n: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if n.len() > 15 {
        out.push("must be no more than 15 characters");
    }
    if !n
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !n.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)");
    }
    if n.contains("--") {
        out.push("must not contain consecutive hyphens");
    }
    if n.starts_with('-') || n.ends_with('-') {
        out.push("must not begin or end with a hyphen");
    }
    out
}

/// `ValidatePortNumOrName` for a probe's port.
pub(super) fn port_num_or_name(errs: &mut Vec<String>, at: impl Display, port: &IntOrString) {
    match port {
        IntOrString::Int(n) if !(1..=65535).contains(n) => {
            errs.push(format!("{at}: Invalid value: {n}: {PORT_RANGE}"))
        }
        IntOrString::String(s) => {
            for m in port_name_errors(s) {
                errs.push(format!("{at}: Invalid value: {s:?}: {m}"));
            }
        }
        IntOrString::Int(_) => {}
    }
}

/// `ValidateEnv` and `ValidateEnvFrom`.
fn env(errs: &mut Vec<String>, at: &At, c: &Container, rules: Rules) {
    for (i, e) in c.env.iter().flatten().enumerate() {
        let here = at.item("env", i);
        if e.name.is_empty() {
            errs.push(format!("{here}.name: Required value"));
        } else {
            for m in env_name_errors(&e.name, rules) {
                errs.push(format!("{here}.name: Invalid value: {:?}: {m}", e.name));
            }
        }
        value_from(errs, &here, e);
    }
    for (i, e) in c.env_from.iter().flatten().enumerate() {
        if let Some(p) = e.prefix.as_deref().filter(|p| !p.is_empty()) {
            for m in env_name_errors(p, rules) {
                errs.push(format!(
                    "{at}.envFrom[{i}].prefix: Invalid value: {p:?}: {m}"
                ));
            }
        }
        let refs = usize::from(e.config_map_ref.is_some()) + usize::from(e.secret_ref.is_some());
        let m = match refs {
            0 => "must specify one of: `configMapRef` or `secretRef`",
            1 => continue,
            _ => "may not have more than one field specified at a time",
        };
        errs.push(format!("{at}.envFrom: Invalid value: \"\": {m}"));
    }
}

/// `validateEnvVarValueFrom`'s count of sources.
fn value_from(errs: &mut Vec<String>, here: &At, e: &EnvVar) {
    let Some(s) = &e.value_from else { return };
    let sources = [
        s.field_ref.is_some(),
        s.resource_field_ref.is_some(),
        s.config_map_key_ref.is_some(),
        s.secret_key_ref.is_some(),
        s.file_key_ref.is_some(),
    ]
    .into_iter()
    .filter(|b| *b)
    .count();
    let m = if sources == 0 {
        "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
    } else if e.value.as_deref().is_some_and(|v| !v.is_empty()) {
        "may not be specified when `value` is not empty"
    } else if sources > 1 {
        "may not have more than one field specified at a time"
    } else {
        return;
    };
    errs.push(format!("{here}.valueFrom: Invalid value: \"\": {m}"));
}

/// `IsRelaxedEnvVarName` with the gate on, else `IsEnvVarName`.
fn env_name_errors(n: &str, rules: Rules) -> Vec<&'static str> {
    if rules.relaxed_env_names {
        let printable = n.bytes().all(|b| (b' '..=b'~').contains(&b) && b != b'=');
        return if printable {
            Vec::new()
        } else {
            vec!["a valid environment variable name must consist only of printable ASCII characters other than '='"]
        };
    }
    let mut out = Vec::new();
    let first_ok = n
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b"-._".contains(&b));
    let rest_ok = n
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
    if !(first_ok && rest_ok) {
        out.push("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')");
    }
    if n == "." {
        out.push("must not be '.'");
    } else if n == ".." {
        out.push("must not be '..'");
    } else if n.starts_with("..") {
        out.push("must not start with '..'");
    }
    out
}

/// `validateResourceRequirements` for a container: names, values, requests against limits.
fn resources(errs: &mut Vec<String>, at: &At, r: &ResourceRequirements) {
    let empty = BTreeMap::new();
    let limits = r.limits.as_ref().unwrap_or(&empty);
    let requests = r.requests.as_ref().unwrap_or(&empty);
    let mut limit_values = BTreeMap::new();
    for (name, q) in limits {
        if let Some(v) = resource_value(errs, &at.entry("limits", name), name, q) {
            limit_values.insert(name.as_str(), (v, q));
        }
    }
    for (name, q) in requests {
        let Some(v) = resource_value(errs, &at.entry("requests", name), name, q) else {
            continue;
        };
        let overcommittable = is_native(name) && !name.starts_with("hugepages-");
        match limit_values.get(name.as_str()) {
            Some((l, lq)) if !overcommittable && v != *l => errs.push(format!(
                "{at}.requests: Invalid value: {:?}: must be equal to {name} limit of {}",
                q.0, lq.0
            )),
            Some((l, lq)) if v > *l => errs.push(format!(
                "{at}.requests: Invalid value: {:?}: must be less than or equal to {name} limit of {}",
                q.0, lq.0
            )),
            None if !overcommittable => errs.push(format!(
                "{at}.limits: Required value: Limit must be set for non overcommitable resources"
            )),
            _ => {}
        }
    }
}

/// One resource's name and quantity (`ValidateResourceQuantityValue`, after
/// `SetDefaults_ResourceList` rounded it up to milli scale): its value in thousandths when
/// valid.
fn resource_value(errs: &mut Vec<String>, here: &At, name: &str, q: &Quantity) -> Option<i128> {
    resource_name(errs, here, name);
    let bad = match quantity::parse_milli(&q.0) {
        Err(m) => m,
        Ok(v) if v < 0 => NON_NEGATIVE,
        Ok(v) if is_integer_resource(name) && v % 1000 != 0 => "must be an integer",
        Ok(v) => return Some(v),
    };
    errs.push(format!("{here}: Invalid value: {:?}: {bad}", q.0));
    None
}

/// `IsStandardResourceName`'s set (kubernetes `pkg/apis/core/helper/helpers.go`), hugepages
/// aside.
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `validateContainerResourceName`: a qualified name; without a `/` a standard resource
/// name and one a container may ask for, with one an extended resource name.
fn resource_name(errs: &mut Vec<String>, here: &At, name: &str) {
    if let Err(m) = names::qualified_name(name) {
        errs.push(format!("{here}: Invalid value: {name:?}: {m}"));
        return;
    }
    if !name.contains('/') {
        let hugepages = name.starts_with("hugepages-");
        let standard = STANDARD_RESOURCES.contains(&name)
            || hugepages
            || name.starts_with("requests.hugepages-");
        if !standard {
            errs.push(format!(
                "{here}: Invalid value: {name:?}: must be a standard resource type or fully qualified"
            ));
        }
        if !(["cpu", "memory", "ephemeral-storage"].contains(&name) || hugepages) {
            errs.push(format!(
                "{here}: Invalid value: {name:?}: must be a standard resource for containers"
            ));
        }
    } else if !is_native(name) && names::qualified_name(&format!("requests.{name}")).is_err() {
        errs.push(format!(
            "{here}: Invalid value: {name:?}: doesn't follow extended resource name standard"
        ));
    }
}

/// `IsNativeResource`: no domain, or a `kubernetes.io/` one.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsIntegerResourceName`: extended resources are counted in whole units.
fn is_integer_resource(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.")
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Liveness,
    Readiness,
    Startup,
}

/// `validateProbe` and `validateHandler`.
fn probe(errs: &mut Vec<String>, at: &At, p: &Probe, kind: Kind) {
    let handlers = [
        ("exec", p.exec.is_some()),
        ("httpGet", p.http_get.is_some()),
        ("tcpSocket", p.tcp_socket.is_some()),
        ("grpc", p.grpc.is_some()),
    ];
    let mut set = handlers.iter().filter(|(_, on)| *on).map(|(h, _)| *h);
    match set.next() {
        None => errs.push(format!("{at}: Required value: must specify a handler type")),
        // Only the first handler is checked further; each other one is refused as such.
        Some(first) => handler(errs, at, p, first),
    }
    for extra in set {
        errs.push(format!(
            "{at}.{extra}: Forbidden: may not specify more than 1 handler type"
        ));
    }
    let fields = [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ];
    for (field, v) in fields {
        if let Some(v) = v.filter(|v| *v < 0) {
            errs.push(format!("{at}.{field}: Invalid value: {v}: {NON_NEGATIVE}"));
        }
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        errs.push(format!(
            "{at}.terminationGracePeriodSeconds: Invalid value: {t}: must be greater than 0"
        ));
    }
    match kind {
        Kind::Liveness | Kind::Startup => {
            // SetDefaults_Probe makes 0 (or absent) 1 before this check.
            if let Some(s) = p.success_threshold.filter(|s| *s != 1 && *s != 0) {
                errs.push(format!(
                    "{at}.successThreshold: Invalid value: {s}: must be 1"
                ));
            }
        }
        Kind::Readiness => {
            if let Some(t) = p.termination_grace_period_seconds {
                errs.push(format!(
                    "{at}.terminationGracePeriodSeconds: Invalid value: {t}: must not be set for readinessProbes"
                ));
            }
        }
    }
}

/// `validateHandler`'s check of the one handler kept.
fn handler(errs: &mut Vec<String>, at: &At, p: &Probe, which: &str) {
    match which {
        "exec" => {
            let empty = p
                .exec
                .as_ref()
                .is_some_and(|e| e.command.as_ref().is_none_or(Vec::is_empty));
            if empty {
                errs.push(format!("{at}.exec.command: Required value"));
            }
        }
        "httpGet" => {
            if let Some(h) = &p.http_get {
                port_num_or_name(errs, at.field("httpGet.port"), &h.port);
                let schemes = ["HTTP", "HTTPS"];
                let path = at.field("httpGet.scheme");
                defaulted_enum(errs, path, h.scheme.as_deref(), &schemes);
            }
        }
        "tcpSocket" => {
            if let Some(t) = &p.tcp_socket {
                port_num_or_name(errs, at.field("tcpSocket.port"), &t.port);
            }
        }
        _ => {
            if let Some(g) = p.grpc.as_ref().filter(|g| !(1..=65535).contains(&g.port)) {
                let port = g.port;
                errs.push(format!(
                    "{at}.grpc.port: Invalid value: {port}: {PORT_RANGE}"
                ));
            }
        }
    }
}

/// `field.NotSupported`: `<path>: Unsupported value: "x": supported values: "A", "B"`.
pub(super) fn not_supported(
    errs: &mut Vec<String>,
    path: impl Display,
    value: &str,
    allowed: &[&str],
) {
    if allowed.contains(&value) {
        return;
    }
    unsupported(errs, path, value, allowed);
}

/// A defaulted enum: `""` is filled in by defaulting as an absent value is (the
/// `SetDefaults_*` functions test `== ""`), so only another value is checked.
fn defaulted_enum(
    errs: &mut Vec<String>,
    path: impl Display,
    value: Option<&str>,
    allowed: &[&str],
) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        not_supported(errs, path, v, allowed);
    }
}

/// `validateResizePolicy` (kubernetes pkg/apis/core/validation/validation.go): each entry
/// names a resource once, `cpu` or `memory`, and a restart policy, `NotRequired` or
/// `RestartContainer`. (The rule that a pod of `restartPolicy: Never` takes only `NotRequired`
/// is not checked.)
fn resize_policy(errs: &mut Vec<String>, path: &At, c: &Container) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, p) in c.resize_policy.iter().flatten().enumerate() {
        if !seen.insert(p.resource_name.as_str()) {
            errs.push(format!(
                "{path}[{i}]: Duplicate value: {:?}",
                p.resource_name
            ));
        }
        let checks = [
            (p.resource_name.as_str(), &["cpu", "memory"][..]),
            (
                p.restart_policy.as_str(),
                &["NotRequired", "RestartContainer"][..],
            ),
        ];
        for (value, allowed) in checks {
            if value.is_empty() {
                errs.push(format!("{path}: Required value"));
            } else {
                not_supported(errs, path, value, allowed);
            }
        }
    }
}

fn unsupported(errs: &mut Vec<String>, path: impl Display, value: &str, allowed: &[&str]) {
    let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
    errs.push(format!(
        "{path}: Unsupported value: {value:?}: supported values: {}",
        list.join(", ")
    ));
}

/// The CRD schema's check of every `resource.Quantity` string in a pod template of a custom
/// resource (`CRD_PATTERN`, which controller-gen puts on every Quantity of the embedded
/// PodSpec: container resources, pod-level resources, overhead, `emptyDir.sizeLimit`,
/// ephemeral claim templates). The apiextensions validator words a miss as `<path>: Invalid
/// value: "x": <path> in body should match '<pattern>'`.
pub fn crd_quantities(errs: &mut Vec<String>, path: &str, spec: Option<&PodSpec>) {
    let Some(spec) = spec else { return };
    quantity::each_in_pod_spec(spec, path, &mut |at, q| crd_quantity(errs, at, q));
}

/// One quantity against `CRD_PATTERN`.
pub fn crd_quantity(errs: &mut Vec<String>, at: quantity::PathOf, q: &Quantity) {
    if !quantity::matches_crd_pattern(&q.0) {
        let here = at();
        errs.push(format!(
            "{here}: Invalid value: {:?}: {here} in body should match '{}'",
            q.0,
            quantity::CRD_PATTERN
        ));
    }
}
