//! `/api/v1/[namespaces/NS/]endpoints[/NAME]`: each Service's Endpoints as the endpoints
//! controller would write them (kubernetes `pkg/controller/endpoint/endpoints_controller.go`
//! `syncService`, `addEndpointSubset`; `pkg/controller/util/endpointslice`
//! `ShouldPodBeInEndpoints`; `pkg/api/v1/endpoints` `RepackSubsets`), computed from the
//! Services and Pods at the instant of the request and never stored, so no run's writes,
//! resourceVersions or trace change: what `kubectl describe svc` lists under `Endpoints:` and
//! `kubectl get endpoints` prints (`printEndpoints`, `formatEndpoints`). Read-only (`get`,
//! `list`); not watched.
//!
//! A Service without a selector has none (its Endpoints are a client's to write; 404). A pod of
//! the Service's namespace matching its selector takes part once it has an IP, unless it
//! finished (`Succeeded`, `Failed`) or is terminating (both unless the Service publishes
//! not-ready addresses); a Ready one is an address, another a not-ready address. Each Service
//! port resolves its `targetPort` in the pod (a number as is, a name through the pod's
//! container ports; a pod without that port name is left out of that port). A headless Service
//! without ports lists the addresses alone. Subsets group addresses by their port list,
//! addresses sorted by IP. Not modelled: the `last-change-trigger-time` annotation, a pod's
//! `hostname` for a Service naming no subdomain, the 1,000-address truncation.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference, Pod, Service,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::k8s;
use serde_json::{json, Value};

use super::query::{failure, Reply};
use super::table::wants_table;
use crate::api::{ApiServer, Selector};
use crate::time::{from_time, human_duration};

/// A GET of endpoints: one Service's by name, or the list (all namespaces when `namespace` is
/// `None`).
pub fn get(
    api: &ApiServer,
    namespace: Option<&str>,
    name: Option<&str>,
    query: &std::collections::BTreeMap<String, String>,
    accept: &str,
) -> Reply {
    if super::query::flag(query, "watch") {
        return failure(
            405,
            "MethodNotAllowed",
            "lws-sim serve computes Endpoints from Services and Pods when asked; it does not watch them",
        );
    }
    if let (Some(ns), Some(name)) = (namespace, name) {
        let found = api
            .try_get::<Service>(ns, name)
            .and_then(|s| of_service(api, &s));
        return match found {
            Some(e) => Reply::ok(&typed(&e)),
            None => failure(404, "NotFound", format!("endpoints \"{name}\" not found")),
        };
    }
    let all = api.list::<Service>(namespace, &Selector::everything());
    let endpoints: Vec<Endpoints> = all.iter().filter_map(|s| of_service(api, s)).collect();
    let items: Vec<Value> = endpoints.iter().map(typed).collect();
    let meta = json!({"resourceVersion": api.resource_version().to_string()});
    if wants_table(accept) {
        let t = table(&endpoints, &items, api.now_ms(), meta);
        return super::table::reply(t, &items, query);
    }
    Reply::ok(
        &json!({"kind": "EndpointsList", "apiVersion": "v1", "metadata": meta, "items": items}),
    )
}

/// Writes: the endpoints controller's alone.
pub fn refuse(method: &str) -> Reply {
    failure(
        405,
        "MethodNotAllowed",
        format!("{method} is not supported on endpoints by lws-sim serve: they are computed from Services and Pods"),
    )
}

fn typed(e: &Endpoints) -> Value {
    let mut v = serde_json::to_value(e).expect("endpoints encode");
    v["kind"] = json!("Endpoints");
    v["apiVersion"] = json!("v1");
    v
}

/// The Endpoints `syncService` writes for `svc`: none without a selector.
fn of_service(api: &ApiServer, svc: &Service) -> Option<Endpoints> {
    let spec = svc.spec.as_ref()?;
    let selector = spec.selector.as_ref()?;
    let ns = k8s::namespace(&svc.metadata);
    let publish = spec.publish_not_ready_addresses == Some(true);
    let headless = spec.cluster_ip.as_deref() == Some("None");
    let wanted = Selector::labels(selector.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let ports = spec.ports.as_deref().unwrap_or_default();
    // Port list -> (ready, not ready) addresses.
    let mut subsets: BTreeMap<Vec<(String, i32, String)>, Addresses> = BTreeMap::new();
    for pod in api.list::<Pod>(Some(ns), &wanted) {
        if !in_endpoints(&pod, publish) {
            continue;
        }
        let address = address(&pod, svc);
        let ready = publish || k8s::is_ready(&pod);
        let mut port_list: Vec<(String, i32, String)> = Vec::new();
        for p in ports {
            let Some(port) = target_port(&pod, p.target_port.as_ref(), p.port) else {
                continue;
            };
            let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            port_list.push((p.name.clone().unwrap_or_default(), port, protocol));
        }
        if port_list.is_empty() && !(ports.is_empty() && headless) {
            continue;
        }
        let entry = subsets.entry(port_list).or_default();
        if ready {
            entry.ready.push(address);
        } else {
            entry.not_ready.push(address);
        }
    }
    let subsets: Vec<EndpointSubset> = subsets.into_iter().map(subset).collect();
    let mut labels = svc.metadata.labels.clone().unwrap_or_default();
    if headless {
        labels.insert("service.kubernetes.io/headless".into(), String::new());
    }
    Some(Endpoints {
        metadata: ObjectMeta {
            name: svc.metadata.name.clone(),
            namespace: svc.metadata.namespace.clone(),
            creation_timestamp: svc.metadata.creation_timestamp.clone(),
            labels: Some(labels).filter(|l| !l.is_empty()),
            ..Default::default()
        },
        subsets: Some(subsets).filter(|s| !s.is_empty()),
    })
}

#[derive(Default)]
struct Addresses {
    ready: Vec<EndpointAddress>,
    not_ready: Vec<EndpointAddress>,
}

fn subset((ports, mut a): (Vec<(String, i32, String)>, Addresses)) -> EndpointSubset {
    a.ready.sort_by(|x, y| x.ip.cmp(&y.ip));
    a.not_ready.sort_by(|x, y| x.ip.cmp(&y.ip));
    let ports: Vec<EndpointPort> = ports
        .into_iter()
        .map(|(name, port, protocol)| EndpointPort {
            name: Some(name).filter(|n| !n.is_empty()),
            port,
            protocol: Some(protocol),
            ..Default::default()
        })
        .collect();
    EndpointSubset {
        addresses: Some(a.ready).filter(|v| !v.is_empty()),
        not_ready_addresses: Some(a.not_ready).filter(|v| !v.is_empty()),
        ports: Some(ports).filter(|v| !v.is_empty()),
    }
}

/// `ShouldPodBeInEndpoints`: an IP, not finished, not terminating (unless published anyway).
fn in_endpoints(pod: &Pod, publish: bool) -> bool {
    let ip = pod.status.as_ref().and_then(|s| s.pod_ip.as_deref());
    let finished = matches!(k8s::phase(pod), "Succeeded" | "Failed");
    let terminating = pod.metadata.deletion_timestamp.is_some();
    ip.is_some_and(|ip| !ip.is_empty()) && !finished && (publish || !terminating)
}

/// `podToEndpointAddressForService`: the pod's IP, node and reference; its hostname when the
/// Service is the pod's subdomain.
fn address(pod: &Pod, svc: &Service) -> EndpointAddress {
    let spec = pod.spec.as_ref();
    let hostname = spec
        .filter(|s| s.subdomain.as_deref() == svc.metadata.name.as_deref())
        .and_then(|s| s.hostname.clone())
        .filter(|h| !h.is_empty());
    EndpointAddress {
        ip: pod
            .status
            .as_ref()
            .and_then(|s| s.pod_ip.clone())
            .unwrap_or_default(),
        hostname,
        node_name: spec.and_then(|s| s.node_name.clone()),
        target_ref: Some(ObjectReference {
            kind: Some("Pod".into()),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        }),
    }
}

/// `FindPort`: a numbered target port as is (the Service port when none is given), a named one
/// through the pod's container ports.
fn target_port(pod: &Pod, target: Option<&IntOrString>, port: i32) -> Option<i32> {
    match target {
        None => Some(port),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(name)) => pod
            .spec
            .as_ref()?
            .containers
            .iter()
            .flat_map(|c| c.ports.iter().flatten())
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .map(|p| p.container_port),
    }
}

/// `kubectl get endpoints`: NAME, ENDPOINTS, AGE (`printEndpoints`); `items` are `endpoints`
/// as served, each row's object.
fn table(endpoints: &[Endpoints], items: &[Value], now_ms: u64, meta: Value) -> Value {
    let col = |name: &str| json!({"name": name, "type": "string", "format": "", "description": "", "priority": 0});
    let rows = endpoints.iter().zip(items).map(|(ep, e)| {
        let age = ep
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| human_duration(now_ms.saturating_sub(from_time(t))))
            .unwrap_or_else(|| "<unknown>".into());
        let name = ep.metadata.name.clone().unwrap_or_default();
        (
            vec![json!(name), json!(format_endpoints(ep)), json!(age)],
            e,
        )
    });
    super::table::of_rows(meta, vec![col("Name"), col("Endpoints"), col("Age")], rows)
}

/// `formatEndpoints` (kubernetes `pkg/printers/internalversion/printers.go`): the ready
/// addresses as `ip:port` (the IP alone for a subset without ports), the first three, then
/// ` + N more...`; `<none>` without subsets.
fn format_endpoints(ep: &Endpoints) -> String {
    let Some(subsets) = ep.subsets.as_deref().filter(|s| !s.is_empty()) else {
        return "<none>".into();
    };
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut count = 0;
    for ss in subsets {
        let addresses = ss.addresses.as_deref().unwrap_or_default();
        let ports = ss.ports.as_deref().unwrap_or_default();
        if ports.is_empty() {
            count += addresses.len();
            list.extend(addresses.iter().map(|a| a.ip.clone()));
        } else {
            for p in ports {
                count += addresses.len();
                list.extend(addresses.iter().map(|a| join_host_port(&a.ip, p.port)));
            }
        }
    }
    if list.len() > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(","), count - MAX);
    }
    list.join(",")
}

/// `net.JoinHostPort`: an IPv6 address in brackets.
fn join_host_port(ip: &str, port: i32) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(ips: &[&str], port: Option<i32>) -> Endpoints {
        Endpoints {
            subsets: Some(vec![EndpointSubset {
                addresses: Some(
                    ips.iter()
                        .map(|ip| EndpointAddress {
                            ip: ip.to_string(),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ports: port.map(|port| {
                    vec![EndpointPort {
                        port,
                        ..Default::default()
                    }]
                }),
                ..Default::default()
            }]),
            ..Default::default()
        }
    }

    #[test]
    fn endpoints_print_as_kubectl_prints_them() {
        assert_eq!(format_endpoints(&Endpoints::default()), "<none>");
        assert_eq!(format_endpoints(&ep(&["10.0.0.1"], None)), "10.0.0.1");
        let four = ep(
            &["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"],
            Some(8080),
        );
        assert_eq!(
            format_endpoints(&four),
            "10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 1 more..."
        );
        assert_eq!(
            format_endpoints(&ep(&["fd00::1"], Some(80))),
            "[fd00::1]:80"
        );
    }
}
