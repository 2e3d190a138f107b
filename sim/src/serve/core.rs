//! The simulation core: one thread owns the world (a scenario `Runner`), and serves requests
//! that arrive over a channel between steps of virtual time. Nothing here waits on a client.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::api::{uid_changed, with_kind, ApiServer, Cursor, Kind, KindId};
use crate::invariants::{FaultEffect, ObjectRef};
use crate::scenario::spec::parse_duration;
use crate::scenario::Runner;

use super::clock::Clock;
use super::ops::{self, api_error, to_value};
use super::query::{
    bad_request, failure, field_selector, label_selector, method_not_allowed, not_found_path,
    status_value, Reply,
};
use super::record::Recorder;
use super::resources::{self, Resource};
use super::table;
use super::watch::{Watcher, WATCH_BUFFER};

/// etcd compaction period (kube-apiserver `--etcd-compaction-interval`, default 5m): at every
/// multiple of it, resourceVersions older than the previous multiple's are compacted.
pub const COMPACTION_MS: u64 = 5 * 60_000;

/// Steps the world takes between two looks at the request queue while it catches up with the
/// clock: milliseconds of work in a small world, a fraction of a second at thousands of groups.
pub const SLICE_STEPS: u64 = 500;

/// A reader on every kind's watch log, positioned after the entries up to `rv`.
fn hold_history(api: &ApiServer, rv: u64) -> Vec<Cursor> {
    KindId::ALL
        .into_iter()
        .map(|kind| {
            with_kind!(kind, K => {
                let log = K::store(api).log();
                log.reader(log.partition_point(|e| e.rv <= rv))
            })
        })
        .collect()
}

/// One HTTP request, as the network front hands it over.
pub struct ApiRequest {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    pub content_type: String,
    pub accept: String,
    /// The `User-Agent` header (invalid UTF-8 replaced): the field manager of a write that
    /// names none.
    pub user_agent: String,
    pub body: Vec<u8>,
}

pub enum Msg {
    Api(ApiRequest, oneshot::Sender<Reply>),
}

pub struct Core {
    pub runner: Runner,
    pub clock: Clock,
    pub recorder: Option<Recorder>,
    pub minor: u32,
    pub addr: String,
    watchers: Vec<Watcher>,
    event_watchers: Vec<super::event_watch::EventWatcher>,
    /// Bytes every watch together has queued for its client (`watch::WATCHES_BYTES_MAX`).
    watch_bytes: Arc<AtomicUsize>,
    next_compaction_ms: u64,
    rv_at_last_compaction: u64,
    compacted_rv: u64,
    /// One reader per kind's watch log, just after `compacted_rv`: the log keeps what a watch
    /// this apiserver still serves may ask for (the simulation's readers alone would let it go).
    history: Vec<Cursor>,
    /// Why time stopped for good (a runaway world), if it did.
    stopped: Option<String>,
    shutdown: bool,
    /// Namespaces clients created (`namespaces.rs`).
    namespaces: super::namespaces::Created,
    /// The open watches of kinds that never change (CRDs): held so they stay open.
    quiet_watches: Vec<tokio::sync::mpsc::Sender<super::stream::Line>>,
}

/// Where a resource request points.
struct Target {
    res: Resource,
    namespace: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

/// Pod subresources a kubelet serves, which `serve` answers with a message saying so.
const KUBELET_SUBRESOURCES: [&str; 4] = ["log", "exec", "attach", "portforward"];

enum Route {
    Version,
    Api,
    Apis,
    Group(String),
    Resources(String, String),
    Resource(Target),
    /// `/api/v1/[namespaces/NS/]events[/NAME]` and the same under `/apis/events.k8s.io/v1`
    /// (`events.rs`): the API form, namespace, name.
    Events(super::events::Form, Option<String>, Option<String>),
    /// `/api/v1/[namespaces/NS/]endpoints[/NAME]` (`endpoints.rs`): namespace, name.
    Endpoints(Option<String>, Option<String>),
    /// `/api/v1/namespaces[/NAME]` (`namespaces.rs`).
    Namespaces(Option<String>),
    /// `/apis/apiextensions.k8s.io/v1/customresourcedefinitions[/NAME]` (`crds.rs`).
    Crds(Option<String>),
    /// `/apis/authorization.k8s.io/v1/selfsubjectaccessreviews` etc. (`reviews.rs`).
    Review(super::reviews::Review),
    Sim(String),
    /// `/openapi/v2`: an empty document (kubectl's client-side validation of a `List`).
    OpenApiV2,
    OpenApiRoot,
    OpenApi(String),
    /// `/healthz`, `/livez`, `/readyz` (and their `/NAME` checks).
    Health,
    NotFound,
    /// A pod subresource only a kubelet serves (`log`, `exec`, `attach`, `portforward`):
    /// the pod's name and the subresource.
    NoKubelet(String, &'static str),
}

fn route(path: &str) -> Route {
    // Each segment percent-decoded, as the real server does (`a%2Fb` names the object `a/b`).
    let decoded: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(super::query::percent_decode)
        .collect();
    let segs: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["healthz" | "livez" | "readyz"] => return Route::Health,
        ["healthz" | "livez" | "readyz", "ping" | "log" | "etcd" | "poststarthook"] => {
            return Route::Health
        }
        ["version"] => return Route::Version,
        ["api"] => return Route::Api,
        ["apis"] => return Route::Apis,
        ["apis", g] => return Route::Group(g.to_string()),
        ["lws-sim", what] => return Route::Sim(what.to_string()),
        ["openapi", "v2"] => return Route::OpenApiV2,
        ["openapi", "v3"] => return Route::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => return Route::OpenApi(rest.join("/")),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Route::NotFound,
    };
    if (group, version) == ("", "v1") {
        match rest {
            ["namespaces"] => return Route::Namespaces(None),
            ["namespaces", n] => return Route::Namespaces(Some(n.to_string())),
            _ => {}
        }
    }
    if (group, version) == (resources::CRD_GROUP, "v1") {
        match rest {
            [p] if *p == resources::CRD_PLURAL => return Route::Crds(None),
            [p, n] if *p == resources::CRD_PLURAL => return Route::Crds(Some(n.to_string())),
            _ => {}
        }
    }
    if let [plural] = rest {
        if let Some(r) = super::reviews::find(group, version, plural) {
            return Route::Review(r);
        }
    }
    let (namespace, rest) = match rest {
        [] => return Route::Resources(group.into(), version.into()),
        ["namespaces", ns, plural, more @ ..] => (Some(ns.to_string()), (plural, more)),
        [plural, more @ ..] => (None, (plural, more)),
    };
    let (plural, more) = rest;
    if let Some(form) = super::events::Form::of(group, version, plural) {
        return match more {
            [] => Route::Events(form, namespace, None),
            [n] => Route::Events(form, namespace, Some(n.to_string())),
            _ => Route::NotFound,
        };
    }
    if (group, version, *plural) == ("", "v1", "endpoints") {
        return match more {
            [] => Route::Endpoints(namespace, None),
            [n] => Route::Endpoints(namespace, Some(n.to_string())),
            _ => Route::NotFound,
        };
    }
    let Some(res) = resources::find(group, version, plural) else {
        return Route::NotFound;
    };
    if namespace.is_some() && !res.namespaced() {
        return Route::NotFound;
    }
    let (name, sub) = match more {
        [] => (None, None),
        [n] => (Some(n.to_string()), None),
        [n, s] if *s == "status" && res.status || *s == "scale" && res.scale => {
            (Some(n.to_string()), Some(s.to_string()))
        }
        [n, "eviction"] if res.kind == KindId::Pod => {
            (Some(n.to_string()), Some("eviction".to_string()))
        }
        [n, s] if res.kind == KindId::Pod => {
            return match KUBELET_SUBRESOURCES.iter().find(|k| **k == *s) {
                Some(k) => Route::NoKubelet(n.to_string(), k),
                None => Route::NotFound,
            };
        }
        _ => return Route::NotFound,
    };
    Route::Resource(Target {
        res,
        namespace,
        name,
        sub,
    })
}

impl Core {
    pub fn new(
        runner: Runner,
        clock: Clock,
        recorder: Option<Recorder>,
        minor: u32,
        addr: String,
    ) -> Core {
        let now = runner.world.now_ms;
        let rv = runner.world.api.resource_version();
        let history = hold_history(&runner.world.api, 0);
        Core {
            runner,
            clock,
            recorder,
            minor,
            addr,
            watchers: Vec::new(),
            event_watchers: Vec::new(),
            watch_bytes: Arc::default(),
            next_compaction_ms: (now / COMPACTION_MS + 1) * COMPACTION_MS,
            rv_at_last_compaction: rv,
            compacted_rv: 0,
            history,
            stopped: None,
            shutdown: false,
            namespaces: Default::default(),
            quiet_watches: Vec::new(),
        }
    }

    /// Serve until the channel closes or a shutdown request arrives. While the world is behind
    /// the clock it advances in slices of `SLICE_STEPS` steps, answering the requests that came
    /// meanwhile between slices, so a long catch-up (a scale to thousands of groups) never
    /// leaves clients, `/healthz` or `/lws-sim/shutdown` without an answer. True when an
    /// invariant broke during the session.
    pub fn run(mut self, rx: Receiver<Msg>) -> bool {
        let tick = Duration::from_millis(10);
        while !self.shutdown {
            let behind = self
                .clock
                .target_ms()
                .is_some_and(|t| t > self.runner.world.now_ms && self.stopped.is_none());
            let msg = if behind {
                rx.try_recv().map_err(|e| match e {
                    TryRecvError::Empty => RecvTimeoutError::Timeout,
                    TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                })
            } else {
                rx.recv_timeout(tick)
            };
            match msg {
                Ok(Msg::Api(req, reply)) => {
                    let r =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(req)));
                    // A request that panicked mid dry run must not leave the server in one.
                    self.runner.world.api.end_dry_run();
                    let r = r.unwrap_or_else(|p| {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "panic".into());
                        failure(
                            500,
                            "InternalError",
                            format!("the simulator panicked: {msg}"),
                        )
                    });
                    let _ = reply.send(r);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if let Some(t) = self.clock.target_ms() {
                if t > self.runner.world.now_ms {
                    self.advance_within(t, SLICE_STEPS);
                }
            }
            self.pump();
        }
        !self.runner.checker.violations.is_empty()
    }

    /// Step the world to `t` (checking invariants), compacting at every period boundary.
    pub fn advance(&mut self, t: u64) {
        self.advance_within(t, u64::MAX);
    }

    /// `advance`, at most `max_steps` steps (it may stop short of `t`).
    fn advance_within(&mut self, t: u64, max_steps: u64) {
        if self.stopped.is_some() {
            return;
        }
        while self.stopped.is_none() {
            let until = t.min(self.next_compaction_ms);
            match self.runner.advance_to_within(until, max_steps) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    self.stopped = Some(e.message());
                    self.clock.set_speed(None, self.runner.world.now_ms);
                    return;
                }
            }
            if until < self.next_compaction_ms {
                break;
            }
            self.compacted_rv = self.rv_at_last_compaction;
            self.history = hold_history(&self.runner.world.api, self.compacted_rv);
            self.rv_at_last_compaction = self.runner.world.api.resource_version();
            self.next_compaction_ms += COMPACTION_MS;
            if until == t {
                break;
            }
        }
    }

    fn pump(&mut self) {
        if !self.runner.world.api.terminating_namespaces.is_empty() {
            self.namespaces.finalize(&mut self.runner.world.api);
        }
        let api = &self.runner.world.api;
        self.watchers
            .retain_mut(|w| w.pump(api) == super::watch::Outcome::Open);
        self.event_watchers.retain_mut(|w| w.pump(api));
    }

    fn status(&self) -> Value {
        let w = &self.runner.world;
        let violations: Vec<Value> = self
            .runner
            .checker
            .violations
            .iter()
            .map(|v| json!(v.report()))
            .collect();
        json!({
            "nowMs": w.now_ms,
            "now": crate::time::fmt_ms(w.now_ms),
            "resourceVersion": w.api.resource_version().to_string(),
            "paused": self.clock.speed.is_none(),
            "speed": self.clock.speed,
            "events": w.event_count,
            "watches": self.watchers.len() + self.event_watchers.len(),
            "violations": violations,
            "stopped": self.stopped,
            "unrecorded": self.recorder.as_ref().map(|r| r.unrecorded.clone()),
        })
    }

    fn handle(&mut self, req: ApiRequest) -> Reply {
        let crds = resources::Installed::of(&self.runner.world.api);
        let route = match route(&req.path) {
            Route::Resource(t) if !resources::served(&t.res, crds) => Route::NotFound,
            r => r,
        };
        let discovery = matches!(
            route,
            Route::Version
                | Route::Api
                | Route::Apis
                | Route::Group(_)
                | Route::Resources(..)
                | Route::OpenApiRoot
                | Route::OpenApi(_)
                | Route::Health
        );
        if discovery && req.method != "GET" && req.method != "HEAD" {
            return method_not_allowed(&req.method);
        }
        let r = match route {
            Route::Health => Reply::Text {
                code: 200,
                body: "ok".into(),
            },
            Route::Version => Reply::ok(&resources::version(self.minor)),
            Route::Api => Reply::ok(&resources::api_versions(&self.addr)),
            Route::Apis => Reply::ok(&resources::api_group_list(crds)),
            Route::Group(g) => resources::api_group(&g, crds)
                .map(|v| Reply::ok(&v))
                .unwrap_or_else(not_found_path),
            Route::Resources(g, v) => resources::resource_list(&g, &v, crds)
                .map(|v| Reply::ok(&v))
                .unwrap_or_else(not_found_path),
            Route::Sim(what) => self.sim(&what, &req),
            Route::OpenApiV2 => resources::openapi_v2(&req.accept),
            Route::OpenApiRoot => Reply::ok(&resources::openapi_v3_root()),
            Route::OpenApi(p) => resources::openapi_v3_doc(&p)
                .map(|v| Reply::ok(&v))
                .unwrap_or_else(not_found_path),
            Route::NotFound => not_found_path(),
            Route::NoKubelet(pod, sub) => {
                let message = format!("pods \"{pod}\" {sub}: lws-sim serve simulates containers and has no kubelet to serve logs, exec, attach or port-forward");
                let details = json!({"name": pod, "kind": "pods"});
                Reply::json(404, &status_value(404, "NotFound", &message, Some(details)))
            }
            Route::Resource(t) => self.resource(t, &req),
            Route::Events(form, ns, None)
                if req.method == "GET" && super::query::flag(&req.query, "watch") =>
            {
                self.watch_events(form, ns.as_deref(), &req)
            }
            Route::Events(form, ns, name) if req.method == "GET" => super::events::get(
                &self.runner.world.api,
                form,
                ns.as_deref(),
                name.as_deref(),
                &req.query,
                &req.accept,
            ),
            Route::Events(..) => super::events::refuse(&req.method),
            Route::Endpoints(ns, name) if req.method == "GET" => super::endpoints::get(
                &self.runner.world.api,
                ns.as_deref(),
                name.as_deref(),
                &req.query,
                &req.accept,
            ),
            Route::Endpoints(..) => super::endpoints::refuse(&req.method),
            Route::Namespaces(name) => self.namespaces(name.as_deref(), &req),
            Route::Crds(name) => {
                let watch = super::query::flag(&req.query, "watch");
                match req.method.as_str() {
                    "GET" if !watch => super::crds::get(
                        &self.runner.world.api,
                        name.as_deref(),
                        &req.query,
                        &req.accept,
                    ),
                    "GET" => self.crd_watch(&req.query),
                    m => method_not_allowed(m),
                }
            }
            Route::Review(r) => {
                super::reviews::create(r, &req.method, &req.content_type, &req.body)
            }
        };
        // The request's own write's warnings, before the world runs on and writes again.
        let warnings = std::mem::take(&mut *self.runner.world.api.admission_warnings.borrow_mut());
        self.pump();
        if warnings.is_empty() {
            return r;
        }
        Reply::Warned {
            reply: Box::new(r),
            warnings,
        }
    }

    /// A watch of the CRDs: they never change here, so it stays open and quiet until the
    /// client leaves or its `timeoutSeconds` runs out (kubectl's `wait` and `get -w` watch
    /// after they list). The sender is kept while the client listens.
    fn crd_watch(&mut self, q: &BTreeMap<String, String>) -> Reply {
        let timeout_s = match super::query::watch_timeout(q) {
            Ok(t) => t,
            Err(r) => return r,
        };
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        self.quiet_watches.retain(|t| !t.is_closed());
        self.quiet_watches.push(tx);
        Reply::Watch { rx, timeout_s }
    }

    /// `/api/v1/namespaces[/NAME]`: get and list, create (a POST to the collection) and a patch
    /// of labels and annotations (`namespaces.rs`).
    fn namespaces(&mut self, name: Option<&str>, req: &ApiRequest) -> Reply {
        let dry = match ops::dry_run(&req.method, &req.query, &req.body) {
            Ok(d) => d,
            Err(r) => return r,
        };
        self.namespaces.finalize(&mut self.runner.world.api);
        if let ("DELETE", Some(n)) = (req.method.as_str(), name) {
            let reply = self.delete_namespace(n, dry);
            self.record_namespace_write("delete", &reply, dry);
            return reply;
        }
        let api = &self.runner.world.api;
        let created = &mut self.namespaces;
        match (req.method.as_str(), name) {
            ("GET", _) if super::query::flag(&req.query, "watch") => failure(
                405,
                "MethodNotAllowed",
                "watching namespaces is not supported by lws-sim serve",
            ),
            ("GET", name) => super::namespaces::get(api, created, name, &req.query, &req.accept),
            ("POST", None) => {
                let reply = match ops::object_body(&req.body, &req.content_type) {
                    Ok(body) => super::namespaces::create(api, created, &body, dry),
                    Err(r) => r,
                };
                self.record_namespace_write("create", &reply, dry);
                reply
            }
            ("PATCH", Some(n)) => {
                let reply = self.patch_namespace(n, req, dry);
                self.record_namespace_write("patch", &reply, dry);
                reply
            }
            (m, _) => method_not_allowed(m),
        }
    }

    /// A namespace's PATCH of each patch type (its labels and annotations).
    fn patch_namespace(&mut self, name: &str, req: &ApiRequest, dry: bool) -> Reply {
        let api = &self.runner.world.api;
        let created = &mut self.namespaces;
        let merge = |body: Value| {
            move |doc: &mut Value| {
                crate::api::patch::merge_patch(doc, &body);
                Ok(())
            }
        };
        let kind = match ops::PatchType::of(&req.content_type) {
            Ok(k) => k,
            Err(r) => return r,
        };
        if kind == ops::PatchType::Json {
            return match ops::json_patch_body(&req.body) {
                Ok(p) => {
                    let apply = |doc: &mut Value| ops::apply_json_patch(doc, &p);
                    super::namespaces::patch(api, created, name, apply, dry)
                }
                Err(r) => r,
            };
        }
        let body = match kind.body(&req.body) {
            Ok(body) => body,
            Err(r) => return r,
        };
        // Server-side apply creates what does not exist yet (`kubectl apply --server-side -f`
        // of a manifest with its Namespace).
        if kind == ops::PatchType::Apply && !created.exists(api, name) {
            let named = body.pointer("/metadata/name").and_then(Value::as_str);
            if named != Some(name) {
                return bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    named.unwrap_or_default()
                ));
            }
            return super::namespaces::create(api, created, &body, dry);
        }
        super::namespaces::patch(api, created, name, merge(body), dry)
    }

    /// A namespace write that took is listed as unrecorded: a scenario has no namespace step
    /// (its objects' namespaces exist when they are applied).
    fn record_namespace_write(&mut self, verb: &str, reply: &Reply, dry: bool) {
        let Reply::Json {
            code: 200 | 201,
            body,
        } = reply
        else {
            return;
        };
        if dry {
            return;
        }
        let name = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| v.pointer("/metadata/name")?.as_str().map(str::to_string))
            .unwrap_or_default();
        self.record(|r, now| r.unrecordable(now, format!("{verb} Namespace {name}")));
    }

    /// DELETE of a namespace: Terminating, then its objects deleted in the background as the
    /// namespace controller deletes them (each recorded as a client's delete), and gone once
    /// they all are (`namespaces::Created::finalize`, at the next namespace request).
    fn delete_namespace(&mut self, name: &str, dry: bool) -> Reply {
        let api = &mut self.runner.world.api;
        let (o, effective) = match self.namespaces.start_deleting(api, name, dry) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        if effective {
            let opts = crate::api::DeleteOptions {
                propagation: Some(crate::api::Propagation::Background),
                ..Default::default()
            };
            for (kind, n) in super::namespaces::contents(&self.runner.world.api, name) {
                let r = with_kind!(kind, K => self.delete_one::<K>("namespace-controller", name, &n, &opts));
                if let Err(e) = r.map(drop) {
                    if !e.is(crate::api::Reason::NotFound) {
                        return api_error(&e, &resources::of_kind(kind), &n);
                    }
                }
            }
            self.settle();
            self.namespaces.finalize(&mut self.runner.world.api);
        }
        Reply::ok(&o)
    }

    /// `/lws-sim/...`: the simulation's own controls.
    fn sim(&mut self, what: &str, req: &ApiRequest) -> Reply {
        let now = self.runner.world.now_ms;
        let dur = |key: &str| -> Result<u64, Reply> {
            let v = req
                .query
                .get(key)
                .ok_or_else(|| bad_request(format!("missing ?{key}=DURATION")))?;
            parse_duration(v).map_err(bad_request)
        };
        match (req.method.as_str(), what) {
            ("GET", "status") => {}
            ("POST", "step") => match dur("for").map(|d| now.checked_add(d)) {
                Ok(Some(t)) if t <= crate::time::HORIZON_MS => self.advance(t),
                Ok(_) => return bad_request(past_horizon("for=", now)),
                Err(r) => return r,
            },
            ("POST", "until") => match dur("t") {
                Ok(t) if t < now => {
                    return bad_request(format!("t={t}ms is before now ({now}ms)"));
                }
                Ok(t) if t <= crate::time::HORIZON_MS => self.advance(t),
                Ok(_) => return bad_request(past_horizon("t=", now)),
                Err(r) => return r,
            },
            ("POST", "pause") => self.clock.speed = None,
            ("POST", "resume") => {
                let speed = match req.query.get("speed").map(|s| s.parse::<f64>()) {
                    None => 60.0,
                    Some(Ok(s)) if s > 0.0 && s <= super::MAX_SPEED => s,
                    Some(_) => {
                        return bad_request(format!(
                            "speed must be a number in (0, {}]",
                            super::MAX_SPEED
                        ))
                    }
                };
                self.clock.speed = Some(speed);
            }
            ("POST", "shutdown") => self.shutdown = true,
            ("POST", "checkpoint") => {
                if self.recorder.is_none() {
                    return bad_request("checkpoint needs --record");
                }
                self.checkpoint();
            }
            (_, "status" | "step" | "until" | "pause" | "resume" | "shutdown" | "checkpoint") => {
                return method_not_allowed(&req.method)
            }
            _ => return not_found_path(),
        }
        self.clock.reanchor(self.runner.world.now_ms);
        Reply::ok(&self.status())
    }

    /// Record a `check` step per LeaderWorkerSet: its resourceVersion, generation and status
    /// counts now. A replay that diverged fails it.
    fn checkpoint(&mut self) {
        let all = crate::api::Selector::everything();
        let lwss = self
            .runner
            .world
            .api
            .list::<lws::api::LeaderWorkerSet>(None, &all);
        for l in lwss {
            let v = to_value(&*l);
            let mut status = json!({});
            for k in ["replicas", "readyReplicas", "updatedReplicas"] {
                if let Some(x) = v.pointer(&format!("/status/{k}")) {
                    status[k] = x.clone();
                }
            }
            let pattern = json!({
                "metadata": {
                    "resourceVersion": v["metadata"]["resourceVersion"],
                    "generation": v["metadata"]["generation"],
                },
                "status": status,
            });
            let ns = v["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let name = v["metadata"]["name"].as_str().unwrap_or("").to_string();
            self.record(|r, now| r.check(now, KindId::LeaderWorkerSet, &ns, &name, pattern));
        }
    }

    /// `?dryRun=All` runs the request through defaulting, admission and validation and stores
    /// nothing (`ApiServer::begin_dry_run`); it is neither recorded nor followed by a step.
    fn resource(&mut self, t: Target, req: &ApiRequest) -> Reply {
        if let Err(r) = ops::check_query(&req.query, &req.method, &req.content_type) {
            return r;
        }
        if let Some(m) = t.name.as_deref().and_then(ops::invalid_path_name) {
            return bad_request(m);
        }
        match ops::dry_run(&req.method, &req.query, &req.body) {
            Ok(false) => self.dispatch(t, req),
            Ok(true) => {
                self.runner.world.api.begin_dry_run();
                let r = self.dispatch(t, req);
                self.runner.world.api.end_dry_run();
                r
            }
            Err(r) => r,
        }
    }

    /// `POST pods/NAME/eviction` (what `kubectl drain` sends when discovery lists it): the
    /// eviction subresource (`ApiServer::evict`, which honours PodDisruptionBudgets); 201, or
    /// 429 while a budget forbids it (kubectl retries).
    fn evict(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let name = t.name.clone().expect("named");
        let ns = t.namespace.clone().unwrap_or_default();
        let body = if req.body.iter().all(u8::is_ascii_whitespace) {
            json!({})
        } else {
            match ops::object_body(&req.body, &req.content_type) {
                Ok(v) => v,
                Err(r) => return r,
            }
        };
        // The body decodes as a policy Eviction (another kind is a 400, as the apiserver's
        // decoder answers it), served at v1 and, for older clients, v1beta1.
        let given = body.get("apiVersion").and_then(Value::as_str);
        let version = given
            .filter(|a| *a == "policy/v1beta1")
            .unwrap_or("policy/v1");
        if let Err(r) = ops::expect_type(&body, "Eviction", Some(version)) {
            return r;
        }
        // kubernetes pkg/registry/core/pod/storage/eviction.go `Create`: the Eviction must
        // name the pod of the URL (an Eviction without a name does not).
        if body.pointer("/metadata/name").and_then(Value::as_str) != Some(name.as_str()) {
            return bad_request("name in URL does not match name in Eviction object");
        }
        // kubectl puts the delete options, dry run included, in the Eviction's deleteOptions.
        let options = body.get("deleteOptions").cloned().unwrap_or(json!({}));
        let options = serde_json::to_vec(&options).expect("values encode");
        let opts = match ops::delete_options(&options, &req.query) {
            Ok(o) => o,
            Err(r) => return r,
        };
        let dry = match ops::dry_run("DELETE", &req.query, &options) {
            Ok(d) => d || self.dry_run(),
            Err(r) => return r,
        };
        let actor = Self::actor(req);
        let api = &mut self.runner.world.api;
        // The Eviction's own dry run, when the request is not a dry run already.
        let own_dry_run = dry && !api.in_dry_run();
        let live = api
            .try_get::<k8s_openapi::api::core::v1::Pod>(&ns, &name)
            .is_some();
        if own_dry_run {
            api.begin_dry_run();
        }
        let r = api.evict(&actor, &ns, &name, &opts);
        if own_dry_run {
            api.end_dry_run();
        }
        if let Err(e) = r {
            return api_error(&e, &t.res, &name);
        }
        if live && !dry {
            // An eviction disrupts the pod, as a client's delete does.
            let pods = vec![ObjectRef::new(&ns, &name)];
            let now = self.runner.world.now_ms;
            self.runner
                .checker
                .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
            let grace = opts.grace_period_seconds;
            self.record(|r, now| r.delete(now, KindId::Pod, &ns, &name, None, grace));
            self.settle();
        }
        Reply::json(
            201,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
        )
    }

    /// A `?dryRun=All` request is being served (the API server holds that state).
    fn dry_run(&self) -> bool {
        self.runner.world.api.in_dry_run()
    }

    fn dispatch(&mut self, t: Target, req: &ApiRequest) -> Reply {
        let q = &req.query;
        let kind = t.res.kind;
        if t.sub.as_deref() == Some("eviction") {
            return match req.method.as_str() {
                "POST" => self.evict(&t, req),
                m => method_not_allowed(m),
            };
        }
        match (req.method.as_str(), t.name.is_some()) {
            ("GET", false) => {
                let watch = super::query::flag(q, "watch");
                with_kind!(kind, K => if watch { self.watch::<K>(&t, req) } else { self.list::<K>(&t, req) })
            }
            ("GET", true) => with_kind!(kind, K => self.get::<K>(&t, req)),
            ("POST", false) => with_kind!(kind, K => self.create::<K>(&t, req)),
            ("PUT", true) => with_kind!(kind, K => self.update::<K>(&t, req)),
            ("PATCH", true) => with_kind!(kind, K => self.patch::<K>(&t, req)),
            ("DELETE", true) => with_kind!(kind, K => self.delete::<K>(&t, req)),
            // A collection delete is registered per namespace (apiserver installer.go: across
            // namespaces only list and watch), so `DELETE /api/v1/pods` is a 405.
            ("DELETE", false) if t.res.namespaced() && t.namespace.is_none() => {
                method_not_allowed("DELETE")
            }
            ("DELETE", false) if t.res.kind != KindId::Service => {
                with_kind!(kind, K => self.delete_collection::<K>(&t, req))
            }
            (m, _) => failure(
                405,
                "MethodNotAllowed",
                format!("{m} is not supported on this path"),
            ),
        }
    }

    fn selectors(
        &self,
        kind: KindId,
        q: &BTreeMap<String, String>,
    ) -> Result<(crate::api::Selector, Vec<super::query::FieldReq>), Reply> {
        let labels = label_selector(q.get("labelSelector").map_or("", String::as_str))
            .map_err(bad_request)?;
        let fields = field_selector(kind, q.get("fieldSelector").map_or("", String::as_str))
            .map_err(bad_request)?;
        Ok((labels, fields))
    }

    fn list<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let q = &req.query;
        let current = self.runner.world.api.resource_version();
        if let Err(r) = ops::check_list_options(q, current) {
            return r;
        }
        let (labels, fields) = match self.selectors(K::ID, q) {
            Ok(s) => s,
            Err(r) => return r,
        };
        let api = &self.runner.world.api;
        // limit/continue: the token is the last key returned; the continuation reads the
        // current state after it (no snapshot at the first page's resourceVersion).
        let after = match q.get("continue").filter(|c| !c.is_empty()) {
            Some(c) => match c.split_once('/') {
                Some(key) => Some(key),
                None => return bad_request("invalid continue token"),
            },
            None => None,
        };
        let limit = q.get("limit").and_then(|l| l.parse::<usize>().ok());
        let ns = t.namespace.as_deref();
        let page = ops::list_page::<K>(api, ns, &labels, &fields, after, limit);
        let items = page.items;
        let mut meta = json!({"resourceVersion": api.resource_version().to_string()});
        if page.more {
            let last = items.last().expect("a page that continues holds objects");
            let token = format!(
                "{}/{}",
                last.pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                last.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            );
            meta["continue"] = json!(token);
            // apiserver `storage.PrepareContinueToken`: the count only for an unfiltered list.
            let filtered = ["labelSelector", "fieldSelector"]
                .iter()
                .any(|k| q.get(*k).is_some_and(|v| !v.is_empty()));
            if let Some(rest) = page.remaining.filter(|_| !filtered) {
                meta["remainingItemCount"] = json!(rest);
            }
        }
        if table::wants_table(&req.accept) {
            let columns = api.lws_printer_columns;
            let t = table::table(K::ID, columns, &items, api.now_ms(), meta, true);
            return table::reply(t, &items, &req.query);
        }
        if table::wants_metadata(&req.accept) {
            let items: Vec<Value> = items.iter().map(table::partial).collect();
            return Reply::ok(&json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": items,
            }));
        }
        Reply::ok(&json!({
            "kind": format!("{}List", K::ID),
            "apiVersion": t.res.group_version(),
            "metadata": meta,
            "items": items,
        }))
    }

    fn watch_events(
        &mut self,
        form: super::events::Form,
        namespace: Option<&str>,
        req: &ApiRequest,
    ) -> Reply {
        let r = super::event_watch::Request {
            form,
            namespace,
            query: &req.query,
            table: table::wants_table(&req.accept),
            budget: [Arc::default(), self.watch_bytes.clone()],
        };
        match super::event_watch::start(&self.runner.world.api, r) {
            Ok((w, reply)) => {
                self.event_watchers.push(w);
                reply
            }
            Err(reply) => reply,
        }
    }

    fn watch<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let q = &req.query;
        let (labels, fields) = match self.selectors(K::ID, q) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if let Err(r) = ops::check_watch_options(q) {
            return r;
        }
        let rv = match q.get("resourceVersion").map(String::as_str) {
            None | Some("") | Some("0") => None,
            Some(s) => match s.parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) => return bad_request(format!("invalid resourceVersion {s:?}")),
            },
        };
        let timeout_s = match super::query::watch_timeout(q) {
            Ok(t) => t,
            Err(r) => return r,
        };
        let (tx, rx) = tokio::sync::mpsc::channel(WATCH_BUFFER);
        let api = &self.runner.world.api;
        let mut w = Watcher {
            kind: K::ID,
            namespace: t.namespace.clone(),
            labels,
            fields,
            bookmarks: super::query::flag(q, "allowWatchBookmarks"),
            table: table::wants_table(&req.accept),
            metadata_only: table::wants_metadata(&req.accept),
            lws_printer_columns: api.lws_printer_columns,
            cursor: api.resource_version(),
            last_bookmark_ms: api.now_ms(),
            headers_sent: false,
            position: None,
            matching: None,
            tx,
            budget: [Arc::default(), self.watch_bytes.clone()],
        };
        if w.selective() {
            w.matching = Some(Default::default());
        }
        // `sendInitialEvents` (watch-list): true sends the current state whatever the given
        // version (history is not needed), then, when bookmarks are allowed, the
        // `initial-events-end` BOOKMARK; false starts from now without synthetic events.
        let initial = q
            .contains_key("sendInitialEvents")
            .then(|| super::query::flag(q, "sendInitialEvents"));
        let mut open = true;
        let current = api.resource_version();
        match (rv, initial) {
            (None, Some(false)) => {}
            // Watch-list from a version the server has not reached (`cacher.go`: an ERROR
            // event once its wait for the version runs out).
            (Some(n), Some(true)) if n > current => {
                w.too_large(ops::too_large_status(n, current));
                open = false;
            }
            (Some(n), None | Some(false)) if n < self.compacted_rv => {
                w.expired(n, self.compacted_rv);
                open = false;
            }
            (Some(n), None | Some(false)) => {
                if w.selective() {
                    w.seed_matching::<K>(api, n);
                }
                w.cursor = n;
            }
            _ => {
                // Start at the most recent state: synthetic ADDED events for what exists.
                for o in api.list::<K>(t.namespace.as_deref(), &w.labels.clone()) {
                    let v = to_value(&*o);
                    if w.matches(&v) {
                        w.note_match(&v);
                        open &= w.event("ADDED", v, api.now_ms()) == super::watch::Outcome::Open;
                    }
                }
                if initial == Some(true) && w.bookmarks && open {
                    open = w.bookmark(w.cursor, true) == super::watch::Outcome::Open;
                }
            }
        }
        if open {
            self.watchers.push(w);
        }
        Reply::Watch { rx, timeout_s }
    }

    fn get<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let name = t.name.as_deref().expect("named");
        let ns = t.namespace.as_deref().unwrap_or("");
        let api = &self.runner.world.api;
        // A bare resourceVersion other than "0" means "not older than" (a future one: 504).
        if let Some(rv) = req.query.get("resourceVersion").filter(|r| !r.is_empty()) {
            match rv.parse::<u64>() {
                Err(_) => return bad_request(format!("invalid resourceVersion {rv:?}")),
                Ok(n) if n > api.resource_version() => {
                    return ops::too_large(n, api.resource_version())
                }
                Ok(_) => {}
            }
        }
        match api.get::<K>(ns, name) {
            Ok(o) => {
                let v = to_value(&*o);
                if t.sub.as_deref() == Some("scale") {
                    Reply::ok(&crate::api::scale::scale_of(K::ID, &v))
                } else if table::wants_table(&req.accept) {
                    let meta = json!({"resourceVersion": v["metadata"]["resourceVersion"]});
                    let t = table::table(
                        K::ID,
                        api.lws_printer_columns,
                        std::slice::from_ref(&v),
                        api.now_ms(),
                        meta,
                        true,
                    );
                    table::reply(t, std::slice::from_ref(&v), &req.query)
                } else if table::wants_metadata(&req.accept) {
                    Reply::ok(&table::partial(&v))
                } else {
                    Reply::ok(&v)
                }
            }
            Err(e) => api_error(&e, &t.res, name),
        }
    }

    /// After a client's update (not an apply): its manager takes over the fields it changed
    /// (`ApiServer::take_updated_fields`).
    fn took_fields<K: Kind>(
        &mut self,
        ns: &str,
        name: &str,
        manager: (&str, Option<&'static str>),
        before: Option<Value>,
        after: &Value,
    ) {
        if let Some(before) = before {
            let key = (ns.to_string(), name.to_string());
            let api = &mut self.runner.world.api;
            api.take_updated_fields::<K>(&key, manager.0, manager.1, &before, after);
        }
    }

    /// The write's field manager, also its actor in the trace: `fieldManager`, else the
    /// User-Agent's product (apiserver `managerOrUserAgent`, handlers/create.go at v0.33.0).
    fn actor(req: &ApiRequest) -> String {
        match req.query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) => m.clone(),
            None => ops::manager_from_user_agent(&req.user_agent),
        }
    }

    fn record(&mut self, f: impl FnOnce(&mut Recorder, u64)) {
        if self.dry_run() {
            return;
        }
        let now = self.runner.world.now_ms;
        if let Some(r) = self.recorder.as_mut() {
            f(r, now);
            if let Err(e) = r.flush() {
                // Recording ends at the first write the file cannot take (too large, or not
                // writable): the file keeps what it held, and the error is said once.
                eprintln!("lws-sim serve: --record: {e}");
                self.recorder = None;
            }
        }
    }

    /// After a write: let the invariants see it at once, as a scenario step would.
    fn settle(&mut self) {
        if self.dry_run() {
            return;
        }
        let now = self.runner.world.now_ms;
        if let Err(e) = self.runner.advance_to(now) {
            self.stopped = Some(e.message());
        }
    }

    fn create<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        if t.res.namespaced() && t.namespace.is_none() {
            return failure(
                405,
                "MethodNotAllowed",
                "create needs a namespace in the path",
            );
        }
        let v = match ops::object_body(&req.body, &req.content_type) {
            Ok(v) => v,
            Err(r) => return r,
        };
        let strict = ops::strict(&req.query);
        let obj: K = match ops::decode(v, &t.res, t.namespace.as_deref(), strict) {
            Ok(o) => o,
            Err(r) => return r,
        };
        let name = obj.meta().name.clone().unwrap_or_default();
        if let Some(r) = self.missing_namespace(t) {
            return r;
        }
        let actor = Self::actor(req);
        match self.runner.world.api.create(&actor, obj) {
            Ok(o) => {
                let v = to_value(&*o);
                self.record(|r, now| r.object(now, "create", K::ID, &v));
                // The creator owns what it set (an Update entry of managedFields).
                let ns = o.meta().namespace.clone().unwrap_or_default();
                self.took_fields::<K>(&ns, &name, (&actor, None), Some(json!({})), &v);
                self.settle();
                Reply::json(201, &v)
            }
            Err(e) => api_error(&e, &t.res, &name),
        }
    }

    /// A create into a namespace that does not exist: 404, as the NamespaceLifecycle admission
    /// plugin answers.
    fn missing_namespace(&mut self, t: &Target) -> Option<Reply> {
        let ns = t.namespace.as_deref().filter(|_| t.res.namespaced())?;
        if self.namespaces.exists(&self.runner.world.api, ns) {
            return None;
        }
        Some(failure(
            404,
            "NotFound",
            format!("namespaces \"{ns}\" not found"),
        ))
    }

    fn update<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let v = match ops::object_body(&req.body, &req.content_type) {
            Ok(v) => v,
            Err(r) => return r,
        };
        let actor = Self::actor(req);
        if t.sub.as_deref() == Some("scale") {
            return self.scale::<K>(t, v, false, &actor);
        }
        self.put::<K>(t, v, &actor, "update", ops::strict(&req.query))
    }

    /// Write `v` (a whole object) as an update of the target or its `/status`; `verb` names
    /// the request in the recording.
    fn put<K: Kind>(
        &mut self,
        t: &Target,
        v: Value,
        actor: &str,
        verb: &str,
        strict: bool,
    ) -> Reply {
        let name = t.name.clone().expect("named");
        let ns = t.namespace.clone().unwrap_or_default();
        let obj: K = match ops::decode(v, &t.res, t.namespace.as_deref(), strict) {
            Ok(o) => o,
            Err(r) => return r,
        };
        if let Err(r) = ops::check_name(obj.meta().name.as_deref(), &name) {
            return r;
        }
        let status = t.sub.as_deref() == Some("status");
        let api = &mut self.runner.world.api;
        // A patch (JSON or strategic) whose result changes the UID is refused as immutable; an
        // update's UID is a precondition, checked by `ApiServer::update`.
        if verb == "patch" {
            let stored = api.try_get::<K>(&ns, &name);
            let changed = stored.and_then(|s| uid_changed(K::ID, &name, obj.meta(), s.meta()));
            if let Some(e) = changed {
                return api_error(&e, &t.res, &name);
            }
        }
        let before = (!status)
            .then(|| api.try_get::<K>(&ns, &name).map(|o| to_value(&*o)))
            .flatten();
        // A node's write is recorded as the change it made.
        let node_before = before.clone().filter(|_| K::ID == KindId::Node);
        let r = if status {
            api.update_status(actor, obj)
        } else {
            api.update(actor, obj)
        };
        match r {
            Ok(o) => {
                let v = to_value(&*o);
                if status {
                    self.record(|r, now| {
                        r.unrecordable(now, format!("{verb} {} {ns}/{name} status", K::ID))
                    });
                } else if let Some(before) = &node_before {
                    self.record(|r, now| r.node(now, &name, before, &v));
                } else {
                    self.record(|r, now| r.object(now, verb, K::ID, &v));
                }
                // The writer takes over the fields it changed (an Update entry).
                self.took_fields::<K>(&ns, &name, (actor, None), before, &v);
                self.settle();
                Reply::ok(&v)
            }
            Err(e) => api_error(&e, &t.res, &name),
        }
    }

    /// The target object as stored, as JSON: what a JSON or strategic merge patch applies to.
    fn stored_value<K: Kind>(&self, t: &Target) -> Result<Value, Reply> {
        let name = t.name.as_deref().expect("named");
        let ns = t.namespace.as_deref().unwrap_or_default();
        match self.runner.world.api.get::<K>(ns, name) {
            Ok(o) => Ok(to_value(&*o)),
            Err(e) => Err(api_error(&e, &t.res, name)),
        }
    }

    /// `application/json-patch+json` (RFC 6902): the operations applied to the stored object
    /// (or its Scale) as JSON, and the result written as an update, through the same
    /// defaulting, admission and resourceVersion check (apiserver
    /// `pkg/endpoints/handlers/patch.go` `jsonPatcher`). Recorded as the resulting object.
    fn json_patch<K: Kind>(&mut self, t: &Target, req: &ApiRequest, actor: &str) -> Reply {
        let patch = match ops::json_patch_body(&req.body) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let current = match self.stored_value::<K>(t) {
            Ok(v) => v,
            Err(r) => return r,
        };
        let scale = t.sub.as_deref() == Some("scale");
        let mut doc = if scale {
            crate::api::scale::scale_of(K::ID, &current)
        } else {
            current
        };
        if let Err(r) = ops::apply_json_patch(&mut doc, &patch) {
            return r;
        }
        if scale {
            return self.scale::<K>(t, doc, false, actor);
        }
        self.put::<K>(t, doc, actor, "patch", ops::strict(&req.query))
    }

    /// A strategic merge patch (`strategic.rs`) applied to the stored object and written as an
    /// update, as a JSON patch is.
    fn strategic_patch<K: Kind>(
        &mut self,
        t: &Target,
        patch: &Value,
        actor: &str,
        strict: bool,
    ) -> Reply {
        let mut doc = match self.stored_value::<K>(t) {
            Ok(v) => v,
            Err(r) => return r,
        };
        if let Err(m) = super::strategic::apply_to(K::ID, &mut doc, patch) {
            return bad_request(m);
        }
        self.put::<K>(t, doc, actor, "patch", strict)
    }

    /// Server-side apply of the intent `v` (a PATCH of `application/apply-patch+yaml`).
    fn server_side_apply<K: Kind>(&mut self, t: &Target, req: &ApiRequest, v: Value) -> Reply {
        let name = t.name.clone().expect("named");
        let manager = match req.query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) => m.clone(),
            None => return failure(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"),
        };
        let strict = ops::strict(&req.query);
        // structuredmerge.go: an apply patch names its version (and `prepare` its kind).
        let given = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        if given != t.res.group_version() {
            return bad_request(format!(
                "Incorrect version specified in apply patch. Specified patch version: {given}, expected: {}",
                t.res.group_version()
            ));
        }
        let mut intent = match ops::prepare::<K>(v, &t.res, t.namespace.as_deref()) {
            Ok(v) => v,
            Err(r) => return r,
        };
        if let Err(r) = ops::prune_custom::<K>(&mut intent, strict) {
            return r;
        }
        let intent_name = intent.pointer("/metadata/name").and_then(Value::as_str);
        if let Err(r) = ops::check_name(intent_name, &name) {
            return r;
        }
        // The intent may be partial (only the fields its manager owns): it is checked as the
        // object it makes, laid over the stored one.
        let ns = t.namespace.clone().unwrap_or_default();
        let stored = self.stored_value::<K>(t).ok();
        let whole_missing = stored.is_none();
        let mut whole = stored.unwrap_or_else(|| json!({}));
        crate::api::patch::overlay(&mut whole, &intent);
        if let Err(r) = ops::decode::<K>(whole, &t.res, t.namespace.as_deref(), strict) {
            return r;
        }
        if let Some(r) = whole_missing.then(|| self.missing_namespace(t)).flatten() {
            return r;
        }
        let force = super::query::flag(&req.query, "force");
        let key = (ns, name.clone());
        match self
            .runner
            .world
            .api
            .apply_value::<K>(&manager, key, intent, force)
        {
            Ok(o) => {
                let v = to_value(&*o);
                self.record(|r, now| r.object(now, "apply", K::ID, &v));
                self.settle();
                // An apply that creates answers 201 Created (apiserver handlers/patch.go:
                // `wasCreated` picks the status), one that updates 200.
                Reply::json(if whole_missing { 201 } else { 200 }, &v)
            }
            Err(e) => api_error(&e, &t.res, &name),
        }
    }

    fn patch<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let name = t.name.clone().expect("named");
        let ns = t.namespace.clone().unwrap_or_default();
        let actor = Self::actor(req);
        let kind = match ops::PatchType::of(&req.content_type) {
            Ok(ops::PatchType::Json) => return self.json_patch::<K>(t, req, &actor),
            Ok(k) => k,
            Err(r) => return r,
        };
        let mut v = match kind.body(&req.body) {
            Ok(v) => v,
            Err(r) => return r,
        };
        if !v.is_object() {
            return bad_request("a patch must be a JSON object");
        }
        let apply = kind == ops::PatchType::Apply;
        let strategic = kind == ops::PatchType::Strategic;
        if strategic && K::ID.custom() {
            // A custom resource: the apiserver has no patch strategies for it.
            return failure(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
        }
        if strategic && t.sub.as_deref() != Some("scale") {
            return self.strategic_patch::<K>(t, &v, &actor, ops::strict(&req.query));
        }
        if strategic {
            ops::strip_directives(&mut v);
        }
        if t.sub.as_deref() == Some("scale") {
            if apply {
                return failure(
                    415,
                    "UnsupportedMediaType",
                    "apply on /scale is not supported",
                );
            }
            return self.scale::<K>(t, v, true, &actor);
        }
        let status = t.sub.as_deref() == Some("status");
        if apply {
            if status {
                return failure(
                    415,
                    "UnsupportedMediaType",
                    "apply on /status is not supported",
                );
            }
            return self.server_side_apply::<K>(t, req, v);
        }
        if let Err(r) = ops::prune_custom::<K>(&mut v, ops::strict(&req.query)) {
            return r;
        }
        // A merge patch that renames the object (or removes its name) makes an object whose
        // name is not the URL's.
        if let Some(renamed) = v.pointer("/metadata/name") {
            if let Err(r) = ops::check_name(renamed.as_str(), &name) {
                return r;
            }
        }
        if let Some(moved) = v.pointer("/metadata/namespace") {
            if K::ID.namespaced() && moved.as_str() != Some(ns.as_str()) {
                let moved = moved.as_str().unwrap_or_default();
                return bad_request(format!("the namespace of the object ({moved}) does not match the namespace on the URL ({ns})"));
            }
        }
        let before = self.stored_value::<K>(t).ok();
        let api = &mut self.runner.world.api;
        let r = if status {
            api.merge_patch_status::<K>(&actor, &ns, &name, &v)
        } else {
            api.merge_patch::<K>(&actor, &ns, &name, &v)
        };
        match r {
            Ok(o) => {
                if status {
                    self.record(|r, now| {
                        r.unrecordable(now, format!("patch {} {ns}/{name} status", K::ID))
                    });
                } else {
                    self.record(|r, now| r.patch(now, K::ID, &ns, &name, &v));
                }
                let after = to_value(&*o);
                self.took_fields::<K>(&ns, &name, (&actor, None), before, &after);
                self.settle();
                Reply::ok(&after)
            }
            Err(e) => api_error(&e, &t.res, &name),
        }
    }

    /// `/scale` PUT or PATCH: a write of `spec.replicas` the webhooks are not called for, as
    /// the scenario's `scale` step makes.
    fn scale<K: Kind>(&mut self, t: &Target, body: Value, is_patch: bool, actor: &str) -> Reply {
        let name = t.name.clone().expect("named");
        let ns = t.namespace.clone().unwrap_or_default();
        let before = match self.stored_value::<K>(t) {
            Ok(v) => v,
            Err(r) => return r,
        };
        let body_name = body.pointer("/metadata/name");
        if !is_patch || body_name.is_some() {
            if let Err(r) = ops::check_name(body_name.and_then(Value::as_str), &name) {
                return r;
            }
        }
        let api = &mut self.runner.world.api;
        let current = crate::api::scale::scale_of(K::ID, &before);
        let (replicas, rv) = match ops::scale_target(&current, body, is_patch) {
            Ok(x) => x,
            Err(r) => return r,
        };
        match api.scale::<K>(actor, &ns, &name, replicas, rv.as_deref()) {
            Ok(o) => {
                let after = to_value(&*o);
                let v = crate::api::scale::scale_of(K::ID, &after);
                self.record(|r, now| r.scale(now, K::ID, &ns, &name, replicas));
                self.took_fields::<K>(&ns, &name, (actor, Some("scale")), Some(before), &after);
                self.settle();
                Reply::ok(&v)
            }
            Err(e) => api_error(&e, &t.res, &name),
        }
    }

    fn delete<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        let name = t.name.clone().expect("named");
        let ns = t.namespace.clone().unwrap_or_default();
        if t.sub.is_some() {
            return failure(
                405,
                "MethodNotAllowed",
                "DELETE is not supported on a subresource",
            );
        }
        let opts = match ops::delete_options(&req.body, &req.query) {
            Ok(o) => o,
            Err(r) => return r,
        };
        let actor = Self::actor(req);
        match self.delete_one::<K>(&actor, &ns, &name, &opts) {
            Ok(v) => {
                self.settle();
                Reply::ok(&v)
            }
            Err(e) => api_error(&e, &t.res, &name),
        }
    }

    /// One object's delete, as a client's DELETE does it: the pod disrupted, the write
    /// recorded. Returns what the DELETE answers (the object, gone or terminating).
    fn delete_one<K: Kind>(
        &mut self,
        actor: &str,
        ns: &str,
        name: &str,
        opts: &crate::api::DeleteOptions,
    ) -> Result<Value, crate::api::ApiError> {
        let exists = self.runner.world.api.try_get::<K>(ns, name).is_some();
        if K::ID == KindId::Pod && exists && !self.dry_run() {
            // A client deleting a pod disrupts it, as the scenario's deletePod step says.
            let pods = vec![ObjectRef::new(ns, name)];
            let now = self.runner.world.now_ms;
            self.runner
                .checker
                .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
        }
        let d = self.runner.world.api.delete::<K>(actor, ns, name, opts)?;
        let v = ops::deleted_value(&d);
        let prop = opts.propagation.map(|p| format!("{p:?}"));
        let grace = opts.grace_period_seconds;
        self.record(|r, now| r.delete(now, K::ID, ns, name, prop.as_deref(), grace));
        Ok(v)
    }

    /// DELETE on a collection (`deletecollection`; kubernetes apiserver
    /// `pkg/registry/generic/registry/store.go` `DeleteCollection`): the objects the label and
    /// field selectors pick, each deleted with the request's options; one already gone is
    /// skipped (NotFound), another error ends the request with it. Answers the list of what was
    /// deleted, as the objects each delete returned. Services have no `deletecollection`.
    fn delete_collection<K: Kind>(&mut self, t: &Target, req: &ApiRequest) -> Reply {
        if t.sub.is_some() {
            return failure(
                405,
                "MethodNotAllowed",
                "DELETE is not supported on a subresource",
            );
        }
        let current = self.runner.world.api.resource_version();
        if let Err(r) = ops::check_list_options(&req.query, current) {
            return r;
        }
        let (labels, fields) = match self.selectors(K::ID, &req.query) {
            Ok(s) => s,
            Err(r) => return r,
        };
        let opts = match ops::delete_options(&req.body, &req.query) {
            Ok(o) => o,
            Err(r) => return r,
        };
        let api = &self.runner.world.api;
        let keys: Vec<(String, String)> =
            ops::list::<K>(api, t.namespace.as_deref(), &labels, &fields)
                .iter()
                .map(|o| {
                    let at = |p: &str| {
                        o.pointer(p)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string()
                    };
                    (at("/metadata/namespace"), at("/metadata/name"))
                })
                .collect();
        let actor = Self::actor(req);
        let mut items = Vec::new();
        for (ns, name) in keys {
            match self.delete_one::<K>(&actor, &ns, &name, &opts) {
                Ok(v) => items.push(v),
                Err(e) if e.is(crate::api::Reason::NotFound) => {}
                Err(e) => {
                    self.settle();
                    return api_error(&e, &t.res, &name);
                }
            }
        }
        self.settle();
        let rv = self.runner.world.api.resource_version().to_string();
        Reply::ok(&json!({
            "kind": format!("{}List", K::ID),
            "apiVersion": t.res.group_version(),
            "metadata": {"resourceVersion": rv},
            "items": items,
        }))
    }
}

/// The refusal of a step past the simulated horizon, where the world stops for good.
fn past_horizon(what: &str, now_ms: u64) -> String {
    format!(
        "{what} reaches past the simulated horizon of {} (now {}): the world would stop there for good",
        crate::time::fmt_ms(crate::time::HORIZON_MS),
        crate::time::fmt_ms(now_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_route_to_resources() {
        let r = |p| match route(p) {
            Route::Resource(t) => Some((t.res.plural, t.namespace, t.name, t.sub)),
            _ => None,
        };
        assert_eq!(
            r("/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm/scale"),
            Some((
                "leaderworkersets",
                Some("default".into()),
                Some("vllm".into()),
                Some("scale".into())
            ))
        );
        assert_eq!(r("/api/v1/pods"), Some(("pods", None, None, None)));
        assert_eq!(r("/api/v1/namespaces/default/nodes"), None);
        assert_eq!(r("/api/v1/namespaces/default/pods/p/scale"), None);
        assert_eq!(r("/api/v1/namespaces/default/widgets"), None);
    }
}
