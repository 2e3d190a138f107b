//! The resources the server exposes and their discovery documents, in the legacy
//! (unaggregated) form: `/api`, `/api/v1`, `/apis`, `/apis/GROUP`, `/apis/GROUP/VERSION`
//! (apiserver `staging/src/k8s.io/apiserver/pkg/endpoints/discovery/{legacy.go,group.go,version.go}`).
//! A client asking for aggregated discovery (`Accept: ...;as=APIGroupDiscoveryList`) gets the
//! legacy form with `Content-Type: application/json`, and falls back to it
//! (client-go `discovery/aggregated_discovery.go`, `discovery_client.go` `downloadLegacy`).

use serde_json::{json, Value};

use crate::api::KindId;

use super::query::Reply;

/// One REST resource: its plural name, kind, group/version and subresources.
#[derive(Clone, Copy, Debug)]
pub struct Resource {
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: KindId,
    pub group: &'static str,
    pub version: &'static str,
    pub short_names: &'static [&'static str],
    pub status: bool,
    pub scale: bool,
}

impl Resource {
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub fn namespaced(&self) -> bool {
        self.kind.namespaced()
    }
}

pub const RESOURCES: [Resource; 11] = [
    Resource {
        plural: "pods",
        singular: "pod",
        kind: KindId::Pod,
        group: "",
        version: "v1",
        short_names: &["po"],
        status: true,
        scale: false,
    },
    Resource {
        plural: "services",
        singular: "service",
        kind: KindId::Service,
        group: "",
        version: "v1",
        short_names: &["svc"],
        status: true,
        scale: false,
    },
    Resource {
        plural: "nodes",
        singular: "node",
        kind: KindId::Node,
        group: "",
        version: "v1",
        short_names: &["no"],
        status: true,
        scale: false,
    },
    Resource {
        plural: "statefulsets",
        singular: "statefulset",
        kind: KindId::StatefulSet,
        group: "apps",
        version: "v1",
        short_names: &["sts"],
        status: true,
        scale: true,
    },
    Resource {
        plural: "controllerrevisions",
        singular: "controllerrevision",
        kind: KindId::ControllerRevision,
        group: "apps",
        version: "v1",
        short_names: &[],
        status: false,
        scale: false,
    },
    Resource {
        plural: "leases",
        singular: "lease",
        kind: KindId::Lease,
        group: "coordination.k8s.io",
        version: "v1",
        short_names: &[],
        status: false,
        scale: false,
    },
    Resource {
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        kind: KindId::PodDisruptionBudget,
        group: "policy",
        version: "v1",
        short_names: &["pdb"],
        status: true,
        scale: false,
    },
    Resource {
        plural: "leaderworkersets",
        singular: "leaderworkerset",
        kind: KindId::LeaderWorkerSet,
        group: "leaderworkerset.x-k8s.io",
        version: "v1",
        short_names: &["lws"],
        status: true,
        scale: true,
    },
    Resource {
        plural: "disaggregatedsets",
        singular: "disaggregatedset",
        kind: KindId::DisaggregatedSet,
        group: "disaggregatedset.x-k8s.io",
        version: "v1",
        short_names: &[],
        status: true,
        scale: false,
    },
    Resource {
        plural: "disaggregatedsetrolescalers",
        singular: "disaggregatedsetrolescaler",
        kind: KindId::DisaggregatedSetRoleScaler,
        group: "disaggregatedset.x-k8s.io",
        version: "v1",
        short_names: &["dsrs"],
        status: true,
        scale: true,
    },
    Resource {
        plural: "podgroups",
        singular: "podgroup",
        kind: KindId::PodGroup,
        group: VOLCANO_GROUP,
        version: "v1beta1",
        short_names: &["pg", "podgroup-v1beta1"],
        status: false,
        scale: false,
    },
];

/// Volcano's scheduling group (its PodGroup CRD, installed with `gang-scheduling=volcano`).
pub const VOLCANO_GROUP: &str = "scheduling.volcano.sh";

/// Which optional CRDs the cluster has: discovery and routing follow them.
#[derive(Clone, Copy, Debug)]
pub struct Installed {
    /// The DisaggregatedSet CRDs (v0.10.0).
    pub disaggregated: bool,
    /// Volcano's PodGroup CRD.
    pub volcano: bool,
}

impl Installed {
    pub fn of(api: &crate::api::ApiServer) -> Installed {
        Installed {
            disaggregated: api.disaggregated_set_crds,
            volcano: api.volcano_crds,
        }
    }
}

/// Whether the API server serves `r`: the DisaggregatedSet group only while its CRDs are
/// installed (`ApiServer::disaggregated_set_crds`, v0.10.0), Volcano's only with Volcano, as
/// discovery follows the CRDs.
pub fn served(r: &Resource, crds: Installed) -> bool {
    match r.group {
        lws::disagg::api::GROUP => crds.disaggregated,
        VOLCANO_GROUP => crds.volcano,
        _ => true,
    }
}

/// The groups under `/apis`, in the order `RESOURCES` names them, then the review groups
/// (`reviews.rs`).
fn groups(crds: Installed) -> Vec<&'static str> {
    let served = RESOURCES
        .iter()
        .filter(|r| served(r, crds))
        .map(|r| r.group);
    let reviews = super::reviews::REVIEWS.iter().map(|r| r.group);
    let mut out: Vec<&'static str> = Vec::new();
    // The recorded events, read-only, as events.k8s.io/v1 (`events.rs`).
    let read_only = [super::events::GROUP, CRD_GROUP];
    for group in served.chain(reviews).chain(read_only) {
        if !group.is_empty() && !out.contains(&group) {
            out.push(group);
        }
    }
    out
}

pub fn find(group: &str, version: &str, plural: &str) -> Option<Resource> {
    RESOURCES
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

pub fn of_kind(kind: KindId) -> Resource {
    RESOURCES
        .into_iter()
        .find(|r| r.kind == kind)
        .expect("every kind is served")
}

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// A Service's verbs: its registry has no `deletecollection`.
const SERVICE_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// The installed CRDs, served read-only (`crds.rs`).
pub const CRD_GROUP: &str = "apiextensions.k8s.io";
pub const CRD_PLURAL: &str = "customresourcedefinitions";

/// The discovery entry of `apiextensions.k8s.io/v1`.
fn crd_entry() -> Value {
    json!({
        "name": CRD_PLURAL,
        "singularName": "customresourcedefinition",
        "namespaced": false,
        "kind": "CustomResourceDefinition",
        "verbs": ["get", "list", "watch"],
        "shortNames": ["crd", "crds"],
        "categories": ["api-extensions"],
    })
}

/// `GET /api`: `APIVersions`.
pub fn api_versions(addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}],
    })
}

fn group_doc(group: &str) -> Value {
    // Every group here serves one version: its resources' (v1 but for Volcano's v1beta1).
    let version = RESOURCES
        .iter()
        .find(|r| r.group == group)
        .map_or("v1", |r| r.version);
    let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
    json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": [gv.clone()],
        "preferredVersion": gv,
    })
}

/// `GET /apis`: `APIGroupList`.
pub fn api_group_list(crds: Installed) -> Value {
    let groups: Vec<Value> = groups(crds).into_iter().map(group_doc).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/GROUP`.
pub fn api_group(group: &str, crds: Installed) -> Option<Value> {
    groups(crds).contains(&group).then(|| group_doc(group))
}

/// The resources served that are no store's kind: namespaces (derived from the objects,
/// `namespaces.rs`), endpoints (computed, `endpoints.rs`), events (recorded, `events.rs`).
fn not_stored(group: &str, version: &str) -> Vec<Value> {
    let mut resources = Vec::new();
    if (group, version) == ("", "v1") {
        // Derived from the objects, creatable (`namespaces.rs`).
        resources.push(json!({
            "name": "namespaces",
            "singularName": "namespace",
            "namespaced": false,
            "kind": "Namespace",
            "verbs": ["create", "delete", "get", "list", "patch"],
            "shortNames": ["ns"],
        }));
    }
    if (group, version) == ("", "v1") {
        // Computed from Services and Pods when asked (`endpoints.rs`).
        resources.push(json!({
            "name": "endpoints",
            "singularName": "endpoints",
            "namespaced": true,
            "kind": "Endpoints",
            "verbs": ["get", "list"],
            "shortNames": ["ep"],
        }));
    }
    if super::events::Form::of(group, version, "events").is_some() {
        // Read-only: the controllers' recorded events, as core/v1 or events.k8s.io/v1
        // (`events.rs`), listed and watched.
        resources.push(json!({
            "name": "events",
            "singularName": "event",
            "namespaced": true,
            "kind": "Event",
            "verbs": ["get", "list", "watch"],
            "shortNames": ["ev"],
        }));
    }
    resources
}

/// `GET /api/v1` or `/apis/GROUP/VERSION`: `APIResourceList`, subresources as `plural/sub`.
pub fn resource_list(group: &str, version: &str, crds: Installed) -> Option<Value> {
    let mut resources = not_stored(group, version);
    for r in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version && served(r, crds))
    {
        let mut main = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced(),
            "kind": r.kind.as_str(),
            "verbs": if r.kind == KindId::Service { &SERVICE_VERBS[..] } else { &VERBS[..] },
        });
        if !r.short_names.is_empty() {
            main["shortNames"] = json!(r.short_names);
        }
        if matches!(r.kind, KindId::Pod | KindId::Service | KindId::StatefulSet) {
            main["categories"] = json!(["all"]);
        }
        resources.push(main);
        if r.kind == KindId::Pod {
            // `kubectl drain` evicts through it when discovery lists it (else it deletes).
            resources.push(json!({
                "name": "pods/eviction",
                "singularName": "",
                "namespaced": true,
                "group": "policy",
                "version": "v1",
                "kind": "Eviction",
                "verbs": ["create"],
            }));
        }
        if r.scale {
            resources.push(json!({
                "name": format!("{}/scale", r.plural),
                "singularName": "",
                "namespaced": r.namespaced(),
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        if r.status {
            resources.push(json!({
                "name": format!("{}/status", r.plural),
                "singularName": "",
                "namespaced": r.namespaced(),
                "kind": r.kind.as_str(),
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    resources.extend(super::reviews::resource_entries(group, version));
    if (group, version) == (CRD_GROUP, "v1") {
        resources.push(crd_entry());
    }
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }))
}

/// `GET /version`: the simulated cluster's minor version.
pub fn version(minor: u32) -> Value {
    json!({
        "major": "1",
        "minor": minor.to_string(),
        "gitVersion": format!("v1.{minor}.0-lws-sim"),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "none",
        "compiler": "rustc",
        "platform": "linux/amd64",
    })
}

/// The path of a group/version under `/openapi/v3/`: `api/v1`, `apis/GROUP/VERSION`.
fn openapi_gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `GET /openapi/v2`: a document with no definitions. kubectl fetches it to validate a `List`
/// on the client (`kubectl apply -f` of `kubectl get -o yaml` output) and skips the kinds it
/// does not define, leaving validation to the server; it asks for protobuf, whose empty
/// message is an empty body (gnostic `openapi_v2.Document`).
pub fn openapi_v2(accept: &str) -> Reply {
    if accept.contains("protobuf") {
        return Reply::Typed {
            code: 200,
            content_type: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
            body: String::new(),
        };
    }
    Reply::ok(&json!({
        "swagger": "2.0",
        "info": {"title": "lws-sim", "version": "v1"},
        "paths": {},
        "definitions": {},
    }))
}

/// `GET /openapi/v3`: the index of group/version documents (kube-openapi
/// `pkg/handler3/handler.go`). Served so kubectl's field validation finds what it looks for.
pub fn openapi_v3_root() -> Value {
    let mut paths = serde_json::Map::new();
    for r in RESOURCES {
        let p = openapi_gv_path(r.group, r.version);
        let url = format!("/openapi/v3/{p}?hash=0");
        paths.insert(p, json!({"serverRelativeURL": url}));
    }
    json!({ "paths": paths })
}

/// `GET /openapi/v3/api/v1` etc.: a skeleton, not a schema. Each resource's PATCH operation is
/// listed with its `x-kubernetes-group-version-kind` and the `fieldValidation` parameter, which
/// tells kubectl to leave validation to the server (cli-runtime `pkg/resource/query_param_verifier_v3.go`);
/// no request body types, so `kubectl apply` computes its patch without the schema (kubectl
/// `pkg/cmd/apply/patcher.go`: a strategic merge patch from built-in types, a JSON merge
/// patch for the LeaderWorkerSet). Bodies are decoded into the simulator's types: unknown
/// fields are a 400 under `fieldValidation=Strict` and dropped otherwise (a LeaderWorkerSet's
/// pruned by its CRD schema, `ops::prune_custom`). The derived namespaces (`namespaces.rs`) are
/// listed under `api/v1`.
pub fn openapi_v3_doc(path: &str) -> Option<Value> {
    let mut paths = serde_json::Map::new();
    if path == "api/v1" {
        let op = json!({
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Namespace"},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert("/api/v1/namespaces/{name}".into(), json!({ "patch": op }));
    }
    for r in RESOURCES
        .iter()
        .filter(|r| openapi_gv_path(r.group, r.version) == path)
    {
        let prefix = if r.group.is_empty() {
            format!("/api/{}", r.version)
        } else {
            format!("/apis/{}/{}", r.group, r.version)
        };
        let ns = if r.namespaced() {
            "/namespaces/{namespace}"
        } else {
            ""
        };
        let op = json!({
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind.as_str()},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(
            format!("{prefix}{ns}/{}/{{name}}", r.plural),
            json!({ "patch": op }),
        );
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "lws-sim", "version": "v1"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
