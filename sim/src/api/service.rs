//! Services: defaulting, validation and the ClusterIP and NodePort allocators, for the fields a
//! manifest or `kubectl expose` gets wrong (kubernetes at 000f2605, the 1.33 cycle:
//! `pkg/apis/core/v1/defaults.go` `SetDefaults_Service`; `pkg/apis/core/validation/validation.go`
//! `ValidateService`, `validateServicePort`, `validateClusterIPs`,
//! `validateUpgradeDowngradeClusterIPs`; `pkg/registry/core/service/storage/alloc.go`
//! `allocClusterIPs`, `allocServiceNodePorts`, and `patchAllocatedValues` in `storage.go`).
//!
//! Simplified (docs/fidelity.md): one IPv4 family; addresses and node ports are the lowest free
//! ones, not random ones; a TCP and a UDP port of one number get a node port each (upstream
//! shares one); the `kubernetes` Service that holds 10.96.0.1 on a real cluster is not
//! there, its address is kept free; session affinity, external IPs, load-balancer and traffic
//! policy fields are defaulted but not validated.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{names, podspec};

/// The service CIDR of a kind cluster (kind's default `serviceSubnet`; kubeadm's is a /12).
const CLUSTER_CIDR: (Ipv4Addr, u32) = (Ipv4Addr::new(10, 96, 0, 0), 16);
const NODE_PORTS: std::ops::RangeInclusive<i32> = 30000..=32767;
const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// What other Services hold: their cluster IPs and node ports.
#[derive(Default)]
pub struct Taken {
    pub ips: BTreeSet<Ipv4Addr>,
    pub node_ports: BTreeSet<i32>,
}

impl Taken {
    pub fn add(&mut self, svc: &Service) {
        let Some(spec) = &svc.spec else { return };
        for ip in spec.cluster_ips.iter().flatten().chain(&spec.cluster_ip) {
            if let Ok(ip) = ip.parse() {
                self.ips.insert(ip);
            }
        }
        let ports = spec.ports.iter().flatten();
        self.node_ports.extend(ports.filter_map(|p| p.node_port));
    }
}

/// `SetDefaults_Service`, and the normalisation of `clusterIP` / `clusterIPs` the registry
/// does before it allocates.
pub fn default_service(svc: &mut Service) {
    let spec = svc.spec.get_or_insert_with(Default::default);
    let affinity = spec.session_affinity.get_or_insert_with(String::new);
    if affinity.is_empty() {
        *affinity = "None".into();
    }
    if affinity == "None" {
        spec.session_affinity_config = None;
    } else if affinity == "ClientIP" {
        let config = spec
            .session_affinity_config
            .get_or_insert_with(Default::default);
        let client_ip = config.client_ip.get_or_insert_with(Default::default);
        client_ip.timeout_seconds.get_or_insert(10800);
    }
    let ty = spec.type_.get_or_insert_with(String::new);
    if ty.is_empty() {
        *ty = "ClusterIP".into();
    }
    for p in spec.ports.iter_mut().flatten() {
        if p.protocol.as_deref().is_none_or(str::is_empty) {
            p.protocol = Some("TCP".into());
        }
        let unset = match &p.target_port {
            None => true,
            Some(IntOrString::Int(n)) => *n == 0,
            Some(IntOrString::String(s)) => s.is_empty(),
        };
        if unset {
            p.target_port = Some(IntOrString::Int(p.port));
        }
    }
    let ty = spec.type_.as_deref().unwrap_or_default();
    let external = matches!(ty, "NodePort" | "LoadBalancer");
    if external
        && spec
            .external_traffic_policy
            .as_deref()
            .is_none_or(str::is_empty)
    {
        spec.external_traffic_policy = Some("Cluster".into());
    }
    if external || ty == "ClusterIP" {
        spec.internal_traffic_policy
            .get_or_insert_with(|| "Cluster".into());
    }
    if ty == "LoadBalancer" {
        spec.allocate_load_balancer_node_ports.get_or_insert(true);
    }
    normalize_cluster_ips(spec);
}

/// `normalizeClusterIPs` on create: a body with the singular field only (an old client) gets
/// the plural from it; the singular is never taken from the plural.
fn normalize_cluster_ips(spec: &mut ServiceSpec) {
    let ip = spec.cluster_ip.clone().filter(|ip| !ip.is_empty());
    let ips_empty = spec.cluster_ips.as_ref().is_none_or(Vec::is_empty);
    if let (Some(ip), true) = (ip, ips_empty) {
        spec.cluster_ips = Some(vec![ip]);
    }
}

/// On update: `dropTypeDependentFields` (a type that no longer needs node ports or a cluster
/// IP drops the ones the old type had, if the body kept them) and `patchAllocatedValues` (an
/// update that leaves out what was allocated, a `kubectl replace` of the file that created it,
/// keeps it; node ports matched by port name, unless the body uses the value already).
pub fn keep_allocated(svc: &mut Service, old: &Service) {
    let (Some(spec), Some(old)) = (svc.spec.as_mut(), old.spec.as_ref()) else {
        return;
    };
    let needs_ip = |s: &ServiceSpec| s.type_.as_deref() != Some("ExternalName");
    let needs_node_ports =
        |s: &ServiceSpec| matches!(s.type_.as_deref(), Some("NodePort" | "LoadBalancer"));
    drop_type_dependent(
        spec,
        old,
        needs_ip(old) && !needs_ip(spec),
        needs_node_ports(old) && !needs_node_ports(spec),
    );
    if needs_ip(spec) && needs_ip(old) {
        if spec.cluster_ip.as_deref().is_none_or(str::is_empty) {
            spec.cluster_ip.clone_from(&old.cluster_ip);
            spec.cluster_ips.clone_from(&old.cluster_ips);
        }
        if spec.ip_families.is_none() {
            spec.ip_families.clone_from(&old.ip_families);
        }
        if spec.ip_family_policy.is_none() {
            spec.ip_family_policy.clone_from(&old.ip_family_policy);
        }
    }
    if !(needs_node_ports(spec) && needs_node_ports(old)) {
        return;
    }
    let ports = spec.ports.iter().flatten();
    let mut used: BTreeSet<i32> = ports
        .filter_map(|p| p.node_port)
        .filter(|n| *n != 0)
        .collect();
    for p in spec.ports.iter_mut().flatten() {
        if p.node_port.unwrap_or(0) != 0 {
            continue;
        }
        let same_name = |o: &&ServicePort| o.name == p.name;
        let was = old
            .ports
            .iter()
            .flatten()
            .find(same_name)
            .and_then(|o| o.node_port);
        if let Some(n) = was.filter(|n| *n != 0 && used.insert(*n)) {
            p.node_port = Some(n);
        }
    }
}

/// `dropTypeDependentFields`: what the old type needed and the new one does not, left in the
/// body unchanged, is dropped.
fn drop_type_dependent(
    spec: &mut ServiceSpec,
    old: &ServiceSpec,
    drop_ip: bool,
    drop_node_ports: bool,
) {
    if drop_ip && spec.cluster_ips == old.cluster_ips {
        spec.cluster_ip = None;
        spec.cluster_ips = None;
        spec.ip_families = None;
        spec.ip_family_policy = None;
    }
    let node_ports = |s: &ServiceSpec| -> Vec<Option<i32>> {
        s.ports.iter().flatten().map(|p| p.node_port).collect()
    };
    if drop_node_ports && node_ports(spec) == node_ports(old) {
        for p in spec.ports.iter_mut().flatten() {
            p.node_port = None;
        }
    }
}

/// `ValidateService` (and, with `old`, the clusterIP rule of `ValidateServiceUpdate`): one
/// `field.Error` text per error.
pub fn validate(svc: &Service, old: Option<&Service>) -> Vec<String> {
    let mut errs = Vec::new();
    let empty = ServiceSpec::default();
    let spec = svc.spec.as_ref().unwrap_or(&empty);
    let ty = spec.type_.as_deref().unwrap_or("ClusterIP");
    if !TYPES.contains(&ty) {
        podspec::not_supported(&mut errs, "spec.type", ty, &TYPES);
    }
    let headless = spec.cluster_ip.as_deref() == Some("None");
    if headless && matches!(ty, "NodePort" | "LoadBalancer") {
        errs.push(format!(
            "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for {ty} services"
        ));
    }
    let ports = spec.ports.as_deref().unwrap_or_default();
    if ty == "ExternalName" {
        let name = spec.external_name.as_deref().unwrap_or("");
        if name.is_empty() {
            errs.push("spec.externalName: Required value".into());
        }
    } else if ports.is_empty() && !headless {
        errs.push("spec.ports: Required value".into());
    }
    let mut seen_names = BTreeSet::new();
    let mut seen_ports = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        validate_port(&mut errs, &at, p, ports.len() > 1, &mut seen_names);
        if ty == "ClusterIP" && p.node_port.unwrap_or(0) != 0 {
            errs.push(format!(
                "{at}.nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
            ));
        }
        let protocol = p.protocol.as_deref().unwrap_or("");
        if !seen_ports.insert((p.port, protocol)) {
            errs.push(format!("{at}: Duplicate value: {}", go_port_key(p)));
        }
    }
    for (k, v) in spec.selector.iter().flatten() {
        if let Err(m) = names::label(k, v) {
            errs.push(format!("spec.selector: {m}"));
        }
    }
    validate_cluster_ips(&mut errs, spec, old.and_then(|o| o.spec.as_ref()));
    errs
}

/// `validateServicePort`: a name (required when there are several), a port, a protocol and a
/// target port.
fn validate_port(
    errs: &mut Vec<String>,
    at: &str,
    p: &ServicePort,
    require_name: bool,
    seen: &mut BTreeSet<String>,
) {
    match p.name.as_deref().filter(|n| !n.is_empty()) {
        None if require_name => errs.push(format!("{at}.name: Required value")),
        None => {}
        Some(n) => {
            podspec::dns_label(errs, format!("{at}.name"), n);
            if !seen.insert(n.to_string()) {
                errs.push(format!("{at}.name: Duplicate value: {n:?}"));
            }
        }
    }
    if !(1..=65535).contains(&p.port) {
        errs.push(format!(
            "{at}.port: Invalid value: {}: must be between 1 and 65535, inclusive",
            p.port
        ));
    }
    match p.protocol.as_deref().filter(|s| !s.is_empty()) {
        None => errs.push(format!("{at}.protocol: Required value")),
        Some(v) => podspec::not_supported(errs, format!("{at}.protocol"), v, &PROTOCOLS),
    }
    if let Some(t) = &p.target_port {
        podspec::port_num_or_name(errs, format!("{at}.targetPort"), t);
    }
}

/// The key of the duplicate-port check as Go's `%#v` prints a `core.ServicePort` holding only
/// the protocol and the port.
fn go_port_key(p: &ServicePort) -> String {
    format!(
        "core.ServicePort{{Name:\"\", Protocol:{:?}, AppProtocol:(*string)(nil), Port:{}, \
         TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
        p.protocol.as_deref().unwrap_or(""),
        p.port
    )
}

/// `validateClusterIPs`: each address an IP (or the headless `None`), and on update the
/// primary address unchanged.
fn validate_cluster_ips(errs: &mut Vec<String>, spec: &ServiceSpec, old: Option<&ServiceSpec>) {
    let ips = spec.cluster_ips.as_deref().unwrap_or_default();
    let first = ips.first().map(String::as_str);
    if first.is_some() && first != spec.cluster_ip.as_deref() {
        errs.push(format!(
            "spec.clusterIPs: Invalid value: {}: first value must match `clusterIP`",
            go_strings(ips)
        ));
    }
    for (i, ip) in ips.iter().enumerate() {
        if ip != "None" && ip.parse::<std::net::IpAddr>().is_err() {
            errs.push(format!(
                "spec.clusterIPs[{i}]: Invalid value: {ip:?}: must be a valid IP address, \
                 (e.g. 10.9.8.7 or 2001:db8::ffff)"
            ));
        }
    }
    let Some(old) = old else { return };
    let was = old.cluster_ips.as_deref().and_then(<[String]>::first);
    let external_name = |s: &ServiceSpec| s.type_.as_deref() == Some("ExternalName");
    if let (Some(was), Some(now)) = (was, ips.first()) {
        if was != now && !external_name(old) && !external_name(spec) {
            errs.push(format!(
                "spec.clusterIPs[0]: Invalid value: {}: may not change once set",
                go_strings(ips)
            ));
        }
    }
}

fn go_strings(v: &[String]) -> String {
    let items: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// `allocClusterIPs` and `allocServiceNodePorts` for a valid Service: the lowest free address
/// of the service CIDR and the lowest free node ports, or the ones the body names if they are
/// in range and free. Also the IP family fields of a single-stack IPv4 cluster.
pub fn allocate(svc: &mut Service, taken: &Taken) -> Result<(), String> {
    let Some(spec) = svc.spec.as_mut() else {
        return Ok(());
    };
    let ty = spec.type_.clone().unwrap_or_default();
    if ty == "ExternalName" {
        return Ok(());
    }
    allocate_ip(spec, taken)?;
    if spec.ip_families.as_ref().is_none_or(Vec::is_empty) {
        spec.ip_families = Some(vec!["IPv4".into()]);
    }
    if spec.ip_family_policy.is_none() {
        // A headless Service without a selector asks for every family the cluster has.
        let selectorless = spec.selector.as_ref().is_none_or(|s| s.is_empty());
        let headless = spec.cluster_ip.as_deref() == Some("None");
        let policy = if headless && selectorless {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        spec.ip_family_policy = Some(policy.into());
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
        allocate_node_ports(spec, taken)?;
    }
    Ok(())
}

fn allocate_ip(spec: &mut ServiceSpec, taken: &Taken) -> Result<(), String> {
    let (base, bits) = CLUSTER_CIDR;
    let size = 1u32 << (32 - bits);
    let base = u32::from(base);
    match spec.cluster_ip.as_deref() {
        Some("None") => return Ok(()),
        Some(ip) if !ip.is_empty() => {
            let fail = |why: &str| {
                let ips = spec.cluster_ips.as_deref().unwrap_or_default();
                format!(
                    "spec.clusterIPs: Invalid value: {}: failed to allocate IP {ip}: {why}",
                    go_strings(ips)
                )
            };
            let parsed: Option<Ipv4Addr> = ip.parse().ok();
            let in_range = parsed.is_some_and(|a| {
                let a = u32::from(a);
                a > base && a < base + size - 1
            });
            if !in_range {
                return Err(fail(&format!(
                    "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {}/{bits}",
                    CLUSTER_CIDR.0
                )));
            }
            if parsed.is_some_and(|a| taken.ips.contains(&a)) {
                return Err(fail("provided IP is already allocated"));
            }
            return Ok(());
        }
        _ => {}
    }
    // 10.96.0.1 belongs to the `kubernetes` Service on a real cluster.
    let free = (base + 2..base + size - 1)
        .map(Ipv4Addr::from)
        .find(|a| !taken.ips.contains(a));
    let Some(ip) = free else {
        return Err(
            "spec.clusterIPs: Internal error: failed to allocate a serviceIP: range is full".into(),
        );
    };
    spec.cluster_ip = Some(ip.to_string());
    spec.cluster_ips = Some(vec![ip.to_string()]);
    Ok(())
}

/// The ports the body names are reserved first, then the rest get the lowest free ones.
fn allocate_node_ports(spec: &mut ServiceSpec, taken: &Taken) -> Result<(), String> {
    let mut used = taken.node_ports.clone();
    let ports = spec.ports.iter_mut().flatten().enumerate();
    for (i, p) in ports {
        let at = format!("spec.ports[{i}].nodePort");
        match p.node_port.unwrap_or(0) {
            0 => {}
            n if !NODE_PORTS.contains(&n) => {
                return Err(format!(
                    "{at}: Invalid value: {n}: provided port is not in the valid range. The range of valid ports is {}-{}",
                    NODE_PORTS.start(),
                    NODE_PORTS.end()
                ));
            }
            n if !used.insert(n) => {
                return Err(format!(
                    "{at}: Invalid value: {n}: provided port is already allocated"
                ));
            }
            _ => {}
        }
    }
    for p in spec.ports.iter_mut().flatten() {
        if p.node_port.unwrap_or(0) != 0 {
            continue;
        }
        let Some(n) = NODE_PORTS.clone().find(|n| !used.contains(n)) else {
            return Err(
                "spec.ports: Internal error: failed to allocate a nodePort: range is full".into(),
            );
        };
        p.node_port = Some(n);
        used.insert(n);
    }
    Ok(())
}
