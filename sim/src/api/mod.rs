//! The in-memory fake API server (kubernetes/apiserver `pkg/registry/generic/registry/store.go`,
//! `pkg/storage/etcd3/store.go`, `pkg/storage/cacher` @24a394e5; docs/fidelity.md).
//!
//! One global resourceVersion counter; per-kind stores of shared immutable objects (`Arc`);
//! per-kind watch logs in resourceVersion order that consumers read at their own pace; a
//! metadata log across kinds for the garbage collector. Writes that change nothing consume no
//! resourceVersion and emit no event (apiserver `etcd3/store.go` `GuaranteedUpdate` L562-584).

mod at;
pub mod defaults;
pub mod events;
mod eviction;
pub use eviction::{disruption_target, BY_POD_GC, BY_TAINT_MANAGER};
pub mod kinds;
pub mod names;
pub mod patch;
pub mod pod_defaults;
pub mod podspec;
pub mod quantity;
pub mod scale;
pub mod selector;
pub mod service;
pub(crate) mod slots;
pub mod watch;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod, PodCondition, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use lws::api::LeaderWorkerSet;
use lws::disagg::api::{DisaggregatedSet, DisaggregatedSetRoleScaler};
use serde_json::Value;

use crate::lookup::LookupMap;
use crate::rng::SimRng;
use crate::time::{after, secs_to_ms, to_time};
use crate::trace::{Trace, TraceEntry};
pub use defaults::STATEFULSET_REPLICAS_MAX;
pub(crate) use kinds::with_kind;
pub use kinds::{key_of, meta_key, Key, KeyRef, Kind, KindId, Shared};
use patch::FieldPath;
pub use selector::Selector;
use slots::Slots;
pub use watch::{Cursor, Expired, WatchLog};

/// The `reason` of a failed call (`metav1.StatusReason`): the same enum the reconcilers see.
pub use lws::client::Reason;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: u16,
    pub reason: Reason,
    pub message: String,
    /// `details.causes` of the Status (a server-side apply conflict lists one per field).
    pub causes: Vec<Cause>,
}

/// One `metav1.StatusCause`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    pub reason: &'static str,
    pub message: String,
    pub field: String,
}

impl ApiError {
    pub fn new(reason: Reason, message: impl Into<String>) -> ApiError {
        let code = match reason {
            Reason::BadRequest => 400,
            Reason::NotFound => 404,
            Reason::AlreadyExists | Reason::Conflict => 409,
            Reason::Invalid => 422,
            Reason::Forbidden => 403,
            Reason::TooManyRequests => 429,
            Reason::InternalError => 500,
            Reason::ServiceUnavailable => 503,
            Reason::Timeout => 504,
        };
        ApiError {
            code,
            reason,
            message: message.into(),
            causes: Vec::new(),
        }
    }

    pub fn is(&self, reason: Reason) -> bool {
        self.reason == reason
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

/// One entry of a kind's watch log. `at_ms` is when the write happened; a consumer with watch
/// lag `L` sees it at `at_ms + L`.
#[derive(Debug)]
pub struct WatchEvent<K> {
    pub rv: u64,
    pub at_ms: u64,
    pub ty: EventType,
    pub obj: Shared<K>,
}

impl<K> watch::Versioned for WatchEvent<K> {
    fn rv(&self) -> u64 {
        self.rv
    }
}

/// One entry of the cross-kind metadata log: what a metadata informer (the GC's) sees. It
/// shares the stored object (the same `Arc` the kind's own watch log holds) and reads its
/// metadata on demand.
#[derive(Clone)]
pub struct MetaEvent {
    pub rv: u64,
    pub at_ms: u64,
    pub ty: EventType,
    pub kind: KindId,
    obj: Arc<dyn HasMeta>,
}

/// An object of any kind, seen through its metadata.
pub trait HasMeta: Send + Sync {
    fn object_meta(&self) -> &ObjectMeta;
}

impl<K: Kind> HasMeta for K {
    fn object_meta(&self) -> &ObjectMeta {
        self.meta()
    }
}

impl watch::Versioned for MetaEvent {
    fn rv(&self) -> u64 {
        self.rv
    }
}

impl MetaEvent {
    pub fn meta(&self) -> &ObjectMeta {
        self.obj.object_meta()
    }

    /// `(namespace, name)`.
    pub fn key(&self) -> (&str, &str) {
        kinds::meta_key(self.meta())
    }

    pub fn uid(&self) -> &str {
        self.meta().uid.as_deref().unwrap_or_default()
    }

    pub fn owners(&self) -> &[OwnerReference] {
        self.meta().owner_references.as_deref().unwrap_or_default()
    }

    pub fn finalizers(&self) -> &[String] {
        self.meta().finalizers.as_deref().unwrap_or_default()
    }

    pub fn deleting(&self) -> bool {
        self.meta().deletion_timestamp.is_some()
    }
}

impl fmt::Debug for MetaEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetaEvent")
            .field("rv", &self.rv)
            .field("at_ms", &self.at_ms)
            .field("ty", &self.ty)
            .field("kind", &self.kind)
            .field("key", &self.key())
            .field("uid", &self.uid())
            .finish()
    }
}

/// `DeleteOptions` as far as we use them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub propagation: Option<Propagation>,
    pub grace_period_seconds: Option<i64>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

impl Propagation {
    pub fn parse(s: &str) -> Option<Propagation> {
        match s {
            "Background" => Some(Propagation::Background),
            "Foreground" => Some(Propagation::Foreground),
            "Orphan" => Some(Propagation::Orphan),
            _ => None,
        }
    }
}

pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";
pub const FINALIZER_ORPHAN: &str = "orphan";

/// What a delete did: removed the object, or marked it terminating (grace period or finalizers).
#[derive(Clone, Debug)]
pub enum Deleted<K> {
    Gone(Shared<K>),
    Terminating(Shared<K>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

/// Each field manager's fields of one object (server-side apply).
type Managers = BTreeMap<String, BTreeSet<FieldPath>>;
type MutateFn<K> = Box<dyn Fn(&mut K, Operation) -> Result<(), Rejection>>;
type ValidateFn<K> = Box<dyn Fn(&K, Option<&K>) -> Result<(), Rejection>>;
type SchemaFn<K> = Box<dyn Fn(&K) -> Result<(), String>>;

/// Why an admission webhook refused a write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The webhook answered no: a plain error from a controller-runtime webhook becomes
    /// `admission.Denied`, code 403 (controller-runtime v0.24.1
    /// pkg/webhook/admission/validator_custom.go, response.go `ValidationResponse`), and the
    /// API server prefixes its message (apiserver `webhook/errors.ToStatusErr`).
    Denied(String),
    /// The webhook could not be called and its `failurePolicy` is `Fail`: 500 InternalError,
    /// "failed calling webhook" (apiserver `webhook/errors.ErrCallingWebhook`).
    Unreachable(String),
    /// The webhook panicked and controller-runtime answered `Errored(500, ...)` with this
    /// message: 500, the API server prefixing it as a refusal.
    Panicked(String),
    /// The webhook could not decode the object into its Go type and controller-runtime
    /// answered `Errored(400, err)`: 400, the API server prefixing it as a refusal.
    Undecodable(String),
}

impl From<String> for Rejection {
    fn from(message: String) -> Rejection {
        Rejection::Denied(message)
    }
}

/// Admission webhooks registered for one kind, run mutating-first like the real chain.
pub struct Hooks<K> {
    mutating: Vec<(String, MutateFn<K>)>,
    /// The resource's own validation (a CRD's OpenAPI schema): 422, before any validating
    /// webhook is called.
    schema: Vec<SchemaFn<K>>,
    validating: Vec<(String, ValidateFn<K>)>,
    /// The simulator's own admission checks (its input limits): run after the webhooks on
    /// every write of the object, `/scale` included, which the webhooks are not called for.
    limits: Vec<(String, ValidateFn<K>)>,
}

impl<K> Default for Hooks<K> {
    fn default() -> Self {
        Hooks {
            mutating: Vec::new(),
            schema: Vec::new(),
            validating: Vec::new(),
            limits: Vec::new(),
        }
    }
}

/// Which endpoint a write came through, for the admission chain: the webhooks LWS registers
/// match the main resource only (`config/webhook/manifests.yaml@v0.10.0`, `resources:
/// [leaderworkersets]`, as at v0.4.1), so a `/scale` write (`kubectl scale`, an HPA) reaches
/// the object without them; the API server's own validation and the CRD schema still hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Main,
    Scale,
}

/// A successful apply: who applied what, and the object it left.
struct LastApply<K> {
    manager: String,
    force: bool,
    result: Shared<K>,
    intent: K,
    /// No applied path is under `status`.
    status_free: bool,
    /// A write other than to `/status` stored a new version of the object since (`commit`).
    main_written: bool,
}

/// One kind's objects, watch log and field managers.
pub struct Store<K> {
    objects: Slots<K>,
    log: WatchLog<WatchEvent<K>>,
    managed: BTreeMap<Key, Managers>,
    /// The last configuration each object was applied with. Re-applying it to an untouched
    /// object is a no-op, recognised without the JSON round trip (the result is the same; only
    /// our cost differs).
    last_applied: LookupMap<Key, LastApply<K>>,
    /// The managers of each object whose fields came from an update, not an apply, with the
    /// subresource of their last update (a conflict with one reads `"m" using <apiVersion>`,
    /// or `"m" with subresource "scale" using <apiVersion>`).
    updaters: BTreeMap<Key, BTreeMap<String, Option<&'static str>>>,
    hooks: Hooks<K>,
}

impl<K> Default for Store<K> {
    fn default() -> Self {
        Store {
            objects: Slots::default(),
            log: WatchLog::default(),
            managed: BTreeMap::new(),
            last_applied: LookupMap::default(),
            updaters: BTreeMap::new(),
            hooks: Hooks::default(),
        }
    }
}

impl<K> Store<K> {
    /// The watch log, by absolute position; entries every reader passed are compacted away.
    pub fn log(&self) -> &WatchLog<WatchEvent<K>> {
        &self.log
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Shared<K>)> {
        self.objects.iter()
    }

    /// The objects as slots (an informer's cache starts as a copy).
    pub(crate) fn slots(&self) -> &Slots<K> {
        &self.objects
    }

    pub fn get_key(&self, key: &Key) -> Option<&Shared<K>> {
        self.objects.get(key)
    }
}

/// Cluster-wide feature gates that change API behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    /// `MaxUnavailableStatefulSet`: alpha (off) before 1.35, beta (on) from 1.35
    /// (kubernetes `pkg/features/kube_features.go`).
    pub max_unavailable_statefulset: bool,
    /// Not a gate but a version: from 1.37 (PR #137666) a Parallel StatefulSet on the
    /// MaxUnavailable path replaces old pods that are already unavailable first, and they no
    /// longer block the rollout (kubernetes PR #137666, stateful_set_control.go
    /// `updateStatefulSetAfterInvariantEstablished`).
    pub statefulset_replaces_unavailable_first: bool,
    /// `StatefulSetAutoDeletePVC`: beta (on) from 1.27, GA in 1.32; with it the API server
    /// defaults `persistentVolumeClaimRetentionPolicy` to Retain / Retain.
    pub statefulset_auto_delete_pvc: bool,
    /// `RelaxedEnvironmentVariableValidation`: beta (on) from 1.32; with it an env var name
    /// may be any printable ASCII but `=` (`podspec::Rules`).
    pub relaxed_env_var_names: bool,
    /// `InPlacePodVerticalScaling`: beta (on) from 1.33; with it a container's `resizePolicy`
    /// is kept and validated (before, the API server drops the field).
    pub in_place_pod_resize: bool,
    /// `PDBUnhealthyPodEvictionPolicy`: beta (on) from 1.27, GA in 1.31; without it the API
    /// server drops a budget's `unhealthyPodEvictionPolicy`.
    pub pdb_unhealthy_pod_eviction_policy: bool,
}

impl FeatureGates {
    pub fn for_minor(minor: u32) -> FeatureGates {
        FeatureGates {
            max_unavailable_statefulset: minor >= 35,
            statefulset_replaces_unavailable_first: minor >= 37,
            statefulset_auto_delete_pvc: minor >= 27,
            relaxed_env_var_names: minor >= 32,
            in_place_pod_resize: minor >= 33,
            pdb_unhealthy_pod_eviction_policy: minor >= 27,
        }
    }
}

/// An injected failure for the next matching call (issue: API errors injectable per call).
#[derive(Clone, Debug)]
pub struct InjectedError {
    pub actor: Option<String>,
    pub verb: Option<String>,
    pub kind: Option<KindId>,
    pub error: ApiError,
}

pub struct ApiServer {
    now_ms: u64,
    rv: u64,
    rng: SimRng,
    pub gates: FeatureGates,
    pub trace: Trace,
    pub lws: Store<LeaderWorkerSet>,
    pub statefulsets: Store<StatefulSet>,
    pub revisions: Store<ControllerRevision>,
    pub pods: Store<Pod>,
    pub services: Store<Service>,
    pub nodes: Store<Node>,
    pub leases: Store<Lease>,
    pub pdbs: Store<PodDisruptionBudget>,
    pub disaggregatedsets: Store<DisaggregatedSet>,
    pub rolescalers: Store<DisaggregatedSetRoleScaler>,
    pub podgroups: Store<lws::volcano::PodGroup>,
    /// Whether the DisaggregatedSet CRDs are installed (v0.10.0's manifests); without them
    /// both kinds answer 404, as a cluster without the CRD does.
    pub disaggregated_set_crds: bool,
    /// Volcano's PodGroup CRD is installed (`gang-scheduling=volcano`).
    pub volcano_crds: bool,
    /// The release's LeaderWorkerSet CRD declares `additionalPrinterColumns` (v0.10.0: Ready,
    /// Desired, Up-to-date, Age; earlier releases none): what `serve` prints for tables.
    pub lws_printer_columns: bool,
    /// The admission warnings of the write being admitted (`admission.Warnings` a validating
    /// webhook returns; the apiserver sends each as a `Warning` header): hooks push, the write's
    /// caller reads them (`serve`); cleared as each write's admission starts.
    pub admission_warnings: Rc<RefCell<Vec<String>>>,
    meta_log: WatchLog<MetaEvent>,
    injected: Vec<InjectedError>,
    /// Kubernetes Events, outside the resourceVersion sequence (`events.rs`).
    pub events: events::EventStore,
    /// Namespaces being deleted (`serve`'s namespace DELETE): no object may be created in one,
    /// as the `NamespaceLifecycle` admission plugin refuses it.
    pub terminating_namespaces: BTreeSet<String>,
    /// While a dry-run request is served: the random stream as it was before it, restored
    /// after (`begin_dry_run`).
    dry_run: Option<SimRng>,
    /// The random stream dry runs draw from (UIDs, generated names), their own so that a dry
    /// run's answer neither repeats an earlier one's nor foretells the next real create's.
    dry_rng: SimRng,
    /// The resourceVersion at the last look at the watch logs' compaction (`compact`): with no
    /// write since, no log has grown, so another look would find nothing to do.
    compaction_seen_rv: Option<u64>,
    /// Label and annotation keys validated already (`names::KnownKeys`).
    known_keys: names::KnownKeys,
}

impl ApiServer {
    pub fn new(seed: u64, gates: FeatureGates) -> ApiServer {
        ApiServer {
            now_ms: 0,
            rv: 0,
            rng: SimRng::labelled(seed, "apiserver"),
            gates,
            trace: Trace::default(),
            lws: Store::default(),
            statefulsets: Store::default(),
            revisions: Store::default(),
            pods: Store::default(),
            services: Store::default(),
            nodes: Store::default(),
            leases: Store::default(),
            pdbs: Store::default(),
            disaggregatedsets: Store::default(),
            rolescalers: Store::default(),
            podgroups: Store::default(),
            disaggregated_set_crds: false,
            volcano_crds: false,
            lws_printer_columns: false,
            admission_warnings: Rc::default(),
            meta_log: WatchLog::default(),
            compaction_seen_rv: None,
            known_keys: names::KnownKeys::default(),
            injected: Vec::new(),
            events: Default::default(),
            terminating_namespaces: BTreeSet::new(),
            dry_run: None,
            dry_rng: SimRng::labelled(seed, "apiserver-dry-run"),
        }
    }

    /// Serve the writes until `end_dry_run` as `?dryRun=All` (apiserver
    /// `pkg/registry/generic/registry/dryrun.go`): every step up to admission and validation
    /// runs, and nothing is stored, versioned, traced, watched or drawn from the random stream
    /// (the answer's UID and generated name come from the dry runs' own stream, as a real
    /// server's are fresh each time). Injected errors are left for the calls they are aimed at.
    pub fn begin_dry_run(&mut self) {
        let main = std::mem::replace(&mut self.rng, self.dry_rng.clone());
        self.dry_run = Some(main);
    }

    /// Whether a dry run is being served.
    pub fn in_dry_run(&self) -> bool {
        self.dry_run.is_some()
    }

    pub fn end_dry_run(&mut self) {
        if let Some(main) = self.dry_run.take() {
            self.dry_rng = std::mem::replace(&mut self.rng, main);
        }
    }

    /// Advance the server's clock; the kernel calls this before every event.
    pub fn set_now(&mut self, now_ms: u64) {
        assert!(
            now_ms >= self.now_ms,
            "api clock went back: {} -> {}",
            self.now_ms,
            now_ms
        );
        self.now_ms = now_ms;
        self.compact();
        self.events.advance(now_ms);
    }

    /// Keep at most `window` entries of each watch log behind its end for readers that do not
    /// keep up (default `watch::WINDOW_MAX`); tests shrink it to reach the `Expired` path.
    pub fn set_watch_window(&mut self, window: usize) {
        self.compaction_seen_rv = None;
        self.lws.log.set_window(window);
        self.statefulsets.log.set_window(window);
        self.revisions.log.set_window(window);
        self.pods.log.set_window(window);
        self.services.log.set_window(window);
        self.nodes.log.set_window(window);
        self.leases.log.set_window(window);
        self.pdbs.log.set_window(window);
        self.disaggregatedsets.log.set_window(window);
        self.rolescalers.log.set_window(window);
        self.podgroups.log.set_window(window);
        self.meta_log.set_window(window);
    }

    /// Compact every watch log (between events, so no reader is mid-read). Every log entry
    /// comes with a new resourceVersion (`record` follows `commit`'s and `remove`'s), and a
    /// log's `maybe_compact` acts only on its own growth, so without a write since the last
    /// look there is nothing to do.
    fn compact(&mut self) {
        if self.compaction_seen_rv == Some(self.rv) {
            return;
        }
        self.compaction_seen_rv = Some(self.rv);
        self.lws.log.maybe_compact();
        self.statefulsets.log.maybe_compact();
        self.revisions.log.maybe_compact();
        self.pods.log.maybe_compact();
        self.services.log.maybe_compact();
        self.nodes.log.maybe_compact();
        self.leases.log.maybe_compact();
        self.pdbs.log.maybe_compact();
        self.disaggregatedsets.log.maybe_compact();
        self.rolescalers.log.maybe_compact();
        self.podgroups.log.maybe_compact();
        self.meta_log.maybe_compact();
    }

    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Changes whenever what an actor's next wake-up reads of the server can change: a write
    /// (each appends to a watch log under a new resourceVersion) or a compaction (which runs at
    /// most once per resourceVersion, and is what can expire a reader's position). Equal stamps
    /// mean equal logs, so a wake-up computed at one stamp holds at the other (`World`).
    pub fn change_stamp(&self) -> (u64, bool) {
        (self.rv, self.compaction_seen_rv == Some(self.rv))
    }

    /// The current global resourceVersion (what a list returns as its RV).
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    pub fn meta_log(&self) -> &WatchLog<MetaEvent> {
        &self.meta_log
    }

    pub fn add_mutating_hook<K: Kind>(
        &mut self,
        name: &str,
        f: impl Fn(&mut K, Operation) -> Result<(), Rejection> + 'static,
    ) {
        K::store_mut(self)
            .hooks
            .mutating
            .push((name.to_string(), Box::new(f)));
    }

    /// A check of the resource's schema (a CRD's `openAPIV3Schema` enums and bounds): its
    /// errors are the API server's own 422, after the mutating webhooks and before the
    /// validating ones.
    pub fn add_schema_check<K: Kind>(&mut self, f: impl Fn(&K) -> Result<(), String> + 'static) {
        K::store_mut(self).hooks.schema.push(Box::new(f));
    }

    pub fn add_validating_hook<K: Kind>(
        &mut self,
        name: &str,
        f: impl Fn(&K, Option<&K>) -> Result<(), Rejection> + 'static,
    ) {
        K::store_mut(self)
            .hooks
            .validating
            .push((name.to_string(), Box::new(f)));
    }

    /// An admission check of the simulator's own (`lws-sim-limits`), run after the webhooks on
    /// every write of the kind, `/scale` writes included.
    pub fn add_limit_hook<K: Kind>(
        &mut self,
        name: &str,
        f: impl Fn(&K, Option<&K>) -> Result<(), Rejection> + 'static,
    ) {
        K::store_mut(self)
            .hooks
            .limits
            .push((name.to_string(), Box::new(f)));
    }

    /// Make the next call matching the filter fail with `error`.
    pub fn inject_error(&mut self, e: InjectedError) {
        self.injected.push(e);
    }

    fn take_injected(&mut self, actor: &str, verb: &str, kind: KindId) -> Option<ApiError> {
        if self.dry_run.is_some() {
            return None;
        }
        let i = self.injected.iter().position(|e| {
            e.actor.as_deref().is_none_or(|a| a == actor)
                && e.verb.as_deref().is_none_or(|v| v == verb)
                && e.kind.is_none_or(|k| k == kind)
        })?;
        Some(self.injected.remove(i).error)
    }

    /// A kind whose CRD is not installed: the API server has no such resource (404), and
    /// kubectl says which kind it could not map.
    pub fn unserved(&self, kind: KindId) -> Option<ApiError> {
        let missing = match kind {
            KindId::DisaggregatedSet | KindId::DisaggregatedSetRoleScaler => {
                !self.disaggregated_set_crds
            }
            KindId::PodGroup => !self.volcano_crds,
            _ => false,
        };
        missing.then(|| {
            ApiError::new(
                Reason::NotFound,
                format!(
                    "no matches for kind {:?} in version {:?} (the release's manifests install no such CRD)",
                    kind.as_str(),
                    kind.api_version()
                ),
            )
        })
    }

    // ---- reads -------------------------------------------------------------------------------

    pub fn get<K: Kind>(&self, namespace: &str, name: &str) -> ApiResult<Shared<K>> {
        K::store(self)
            .objects
            .get(&(namespace, name) as &dyn KeyRef)
            .cloned()
            .ok_or_else(|| not_found(K::ID, name))
    }

    pub fn try_get<K: Kind>(&self, namespace: &str, name: &str) -> Option<Shared<K>> {
        K::store(self)
            .objects
            .get(&(namespace, name) as &dyn KeyRef)
            .cloned()
    }

    /// List in key order (etcd range order), optionally within one namespace.
    pub fn list<K: Kind>(&self, namespace: Option<&str>, selector: &Selector) -> Vec<Shared<K>> {
        let objects = &K::store(self).objects;
        let iter: Box<dyn Iterator<Item = (&Key, &Shared<K>)>> = match namespace {
            Some(ns) => Box::new(objects.in_namespace(ns)),
            None => Box::new(objects.iter()),
        };
        iter.filter(|(_, o)| selector.matches(o.meta().labels.as_ref()))
            .map(|(_, o)| o.clone())
            .collect()
    }

    // ---- writes ------------------------------------------------------------------------------

    pub fn create<K: Kind>(&mut self, actor: &str, mut obj: K) -> ApiResult<Shared<K>> {
        if let Some(e) = self.take_injected(actor, "create", K::ID) {
            return self.fail(actor, "create", K::ID, &key_of(&obj), e);
        }
        if let Some(e) = self.unserved(K::ID) {
            return self.fail(actor, "create", K::ID, &key_of(&obj), e);
        }
        let meta = obj.meta_mut();
        if meta.name.as_deref().unwrap_or("").is_empty() {
            match meta.generate_name.clone() {
                Some(prefix) if !prefix.is_empty() => {
                    let prefix: String = prefix.chars().take(58).collect();
                    meta.name = Some(format!("{prefix}{}", self.rng.name_suffix()));
                }
                _ => {
                    let e = ApiError::new(Reason::Invalid, "metadata.name: Required value");
                    return self.fail(actor, "create", K::ID, &key_of(&obj), e);
                }
            }
        }
        if K::ID.namespaced() && obj.meta().namespace.is_none() {
            obj.meta_mut().namespace = Some("default".to_string());
        }
        let key = key_of(&obj);
        if self.terminating_namespaces.contains(&key.0) {
            // kubernetes plugin/pkg/admission/namespace/lifecycle/admission.go `Admit`.
            let msg = format!(
                "{} {:?} is forbidden: unable to create new content in namespace {} because it is being terminated",
                K::ID, key.1, key.0
            );
            let e = ApiError::new(Reason::Forbidden, msg);
            return self.fail(actor, "create", K::ID, &key, e);
        }
        let meta_ok = names::validate(K::ID, obj.meta(), &mut self.known_keys)
            .and_then(|()| names::validate_owner_references(obj.meta()));
        if let Err(m) = meta_ok {
            let e = invalid(K::ID, &key.1, &m);
            return self.fail(actor, "create", K::ID, &key, e);
        }
        if let Some(existing) = K::store(self).objects.get(&key) {
            let prefix = if existing.meta().deletion_timestamp.is_some() {
                "object is being deleted: "
            } else {
                ""
            };
            let msg = format!("{prefix}{} {:?} already exists", K::ID, key.1);
            return self.fail(
                actor,
                "create",
                K::ID,
                &key,
                ApiError::new(Reason::AlreadyExists, msg),
            );
        }
        // rest.FillObjectMetaSystemFields and WipeObjectMetaSystemFields (apiserver rest/meta.go).
        let now = to_time(self.now_ms);
        let uid = self.rng.uid();
        let meta = obj.meta_mut();
        meta.uid = Some(uid);
        meta.creation_timestamp = Some(now);
        meta.deletion_timestamp = None;
        meta.deletion_grace_period_seconds = None;
        let version = meta.resource_version.take();
        meta.managed_fields = None;
        meta.generation = K::tracks_generation().then_some(1);
        clear_status_on_create(&mut obj);
        defaults::on_create(&mut obj, self.gates);
        if let Err(e) = self.admit(&mut obj, None, Operation::Create, Endpoint::Main) {
            return self.fail(actor, "create", K::ID, &key, e);
        }
        if let Err(m) = self.allocate(&mut obj, &key) {
            let e = invalid_fields(K::ID, &key.1, &m.into());
            return self.fail(actor, "create", K::ID, &key, e);
        }
        // The storage refuses a create that names a version (apiserver storage/etcd3/store.go
        // `Create`, `ErrResourceVersionSetOnCreate`: a plain error, so a 500); one that does not
        // parse as a number it ignores, and so does this.
        if version
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|v| v != 0)
        {
            let msg = "resourceVersion should not be set on objects to be created";
            let e = ApiError::new(Reason::InternalError, msg);
            return self.fail(actor, "create", K::ID, &key, e);
        }
        drop_empty_meta(obj.meta_mut());
        Ok(self.commit(actor, "create", None, obj))
    }

    /// PUT on the main endpoint: status is ignored, a stale resourceVersion is a 409.
    pub fn update<K: Kind>(&mut self, actor: &str, obj: K) -> ApiResult<Shared<K>> {
        self.update_at(actor, "update", obj, false)
    }

    /// PUT on `/status`: only status is taken from the body.
    pub fn update_status<K: Kind>(&mut self, actor: &str, obj: K) -> ApiResult<Shared<K>> {
        assert!(K::has_status(), "{} has no status subresource", K::ID);
        self.update_at(actor, "update-status", obj, true)
    }

    /// PUT on `/status` of `base` (a stored version of the object, from a cache) with its status
    /// set by `set_status`: `update_status` of `base` so changed, without comparing a body's
    /// other fields with the stored object's (they are `base`'s, and a `base` of the stored
    /// version is the stored object).
    pub fn update_status_of<K: Kind>(
        &mut self,
        actor: &str,
        base: &Shared<K>,
        set_status: impl FnOnce(&mut K),
    ) -> ApiResult<Shared<K>> {
        assert!(K::has_status(), "{} has no status subresource", K::ID);
        let verb = "update-status";
        let old = self.update_target(actor, verb, &**base)?;
        let mut new = (*old).clone();
        set_status(&mut new);
        self.write_existing(actor, verb, old, new)
    }

    fn update_at<K: Kind>(
        &mut self,
        actor: &str,
        verb: &'static str,
        obj: K,
        status_only: bool,
    ) -> ApiResult<Shared<K>> {
        let old = self.update_target(actor, verb, &obj)?;
        let new = if status_only {
            if obj.same_but_status(&old) {
                // The body is the stored object with a new status: take it, not a copy.
                let mut new = obj;
                new.meta_mut().resource_version = old.meta().resource_version.clone();
                new
            } else {
                let mut new = (*old).clone();
                new.copy_status(&obj);
                new
            }
        } else {
            let mut new = obj;
            new.copy_status(&old);
            new
        };
        self.write_existing(actor, verb, old, new)
    }

    /// The stored object an update of `obj` replaces, after the update's preconditions: an
    /// injected error, a missing object (404), another UID or a stale resourceVersion (409), and
    /// an unconditional update of a custom resource (422).
    fn update_target<K: Kind>(
        &mut self,
        actor: &str,
        verb: &'static str,
        obj: &K,
    ) -> ApiResult<Shared<K>> {
        let key = key_with_default_ns(obj);
        if let Some(e) = self.take_injected(actor, verb, K::ID) {
            return self.fail(actor, verb, K::ID, &key, e);
        }
        let Some(old) = K::store(self).objects.get(&key).cloned() else {
            return self.fail(actor, verb, K::ID, &key, not_found(K::ID, &key.1));
        };
        // A UID in the body is a precondition (apiserver rest/update.go
        // `defaultUpdatedObjectInfo.Preconditions`, checked by the storage's GuaranteedUpdate
        // and reported as a conflict): an update of an object deleted and created again fails.
        if let Some(e) = uid_precondition(K::ID, &key.1, obj.meta(), old.meta()) {
            return self.fail(actor, verb, K::ID, &key, e);
        }
        match obj.meta().resource_version.as_deref() {
            Some(rv) if !rv.is_empty() => {
                let stale = Some(rv) != old.meta().resource_version.as_deref();
                if stale {
                    return self.fail(actor, verb, K::ID, &key, conflict(K::ID, &key.1));
                }
            }
            // Unconditional update: fine for built-ins, 422 for custom resources
            // (apiextensions strategy.go L268-271).
            _ if K::ID.custom() => {
                let msg =
                    "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update";
                return self.fail(
                    actor,
                    verb,
                    K::ID,
                    &key,
                    ApiError::new(Reason::Invalid, msg),
                );
            }
            _ => {}
        }
        Ok(old)
    }

    /// JSON merge patch on the main endpoint; no resourceVersion check unless the patch has one.
    pub fn merge_patch<K: Kind>(
        &mut self,
        actor: &str,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> ApiResult<Shared<K>> {
        self.patch_at(actor, "patch", namespace, name, patch, false)
    }

    /// A write of `spec.replicas` through the `/scale` subresource (`kubectl scale`, an HPA):
    /// a merge patch the admission webhooks are not called for, with the given
    /// resourceVersion as a precondition (a PUT of a `Scale` that carries one; traced
    /// `update-scale`, else `patch-scale`).
    pub fn scale<K: Kind>(
        &mut self,
        actor: &str,
        namespace: &str,
        name: &str,
        replicas: i64,
        resource_version: Option<&str>,
    ) -> ApiResult<Shared<K>> {
        let mut patch = serde_json::json!({"spec": {"replicas": replicas}});
        if let Some(rv) = resource_version {
            patch["metadata"] = serde_json::json!({ "resourceVersion": rv });
        }
        let verb = if resource_version.is_some() {
            "update-scale"
        } else {
            "patch-scale"
        };
        self.patch_at(actor, verb, namespace, name, &patch, false)
    }

    pub fn merge_patch_status<K: Kind>(
        &mut self,
        actor: &str,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> ApiResult<Shared<K>> {
        self.patch_at(actor, "patch-status", namespace, name, patch, true)
    }

    fn patch_at<K: Kind>(
        &mut self,
        actor: &str,
        verb: &'static str,
        namespace: &str,
        name: &str,
        patch: &Value,
        status_only: bool,
    ) -> ApiResult<Shared<K>> {
        let key = (namespace.to_string(), name.to_string());
        if status_only && !K::has_status() {
            // No status subresource (a PodGroup's CRD declares none): no such path.
            let e = ApiError::new(
                Reason::NotFound,
                "the server could not find the requested resource",
            );
            return self.fail(actor, verb, K::ID, &key, e);
        }
        if let Some(e) = self.take_injected(actor, verb, K::ID) {
            return self.fail(actor, verb, K::ID, &key, e);
        }
        let Some(old) = K::store(self).objects.get(&key).cloned() else {
            return self.fail(actor, verb, K::ID, &key, not_found(K::ID, name));
        };
        if let Some(rv) = patch
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
        {
            if Some(rv) != old.meta().resource_version.as_deref() {
                return self.fail(actor, verb, K::ID, &key, conflict(K::ID, name));
            }
        }
        let mut value = serde_json::to_value(&*old).expect("stored objects serialize");
        let type_meta = (value.get("apiVersion").cloned(), value.get("kind").cloned());
        patch::merge_patch(&mut value, patch);
        // A patch may not turn the object into another kind or version (the apiserver decodes
        // the patched object as the resource's type and refuses a different one).
        for (field, was) in [("apiVersion", type_meta.0), ("kind", type_meta.1)] {
            let now = value.get(field).cloned();
            if was.is_some() && now != was {
                let e = ApiError::new(
                    Reason::Invalid,
                    format!(
                        "{field}: Invalid value: {}: the patched object must stay a {}",
                        now.unwrap_or(Value::Null),
                        was.unwrap_or(Value::Null)
                    ),
                );
                return self.fail(actor, verb, K::ID, &key, e);
            }
        }
        // apiserver handlers/rest.go `checkName`: the patched object keeps the URL's name and
        // namespace (a 400 there; a refusal here, never a silently dropped rename).
        let ident = |field: &str| {
            let at = value.pointer(&format!("/metadata/{field}"));
            at.and_then(Value::as_str).unwrap_or("").to_string()
        };
        let (patched_name, patched_ns) = (ident("name"), ident("namespace"));
        let wrong = if patched_name != name {
            Some(("name", patched_name, name))
        } else if K::ID.namespaced() && patched_ns != namespace {
            Some(("namespace", patched_ns, namespace))
        } else {
            None
        };
        if let Some((field, got, want)) = wrong {
            let m = format!(
                "the {field} of the object ({got}) does not match the {field} on the URL ({want})"
            );
            return self.fail(actor, verb, K::ID, &key, ApiError::new(Reason::Invalid, m));
        }
        let patched: K = match decode_at(value) {
            Ok(p) => p,
            Err(m) => {
                let e = ApiError::new(Reason::Invalid, m);
                return self.fail(actor, verb, K::ID, &key, e);
            }
        };
        if let Some(e) = uid_changed(K::ID, name, patched.meta(), old.meta()) {
            return self.fail(actor, verb, K::ID, &key, e);
        }
        let mut new = (*old).clone();
        if status_only {
            new.copy_status(&patched);
        } else {
            new = patched;
            new.copy_status(&old);
        }
        self.write_existing(actor, verb, old, new)
    }

    /// Server-side apply of `intent` by `manager` (kubernetes.io "Server-Side Apply": conflicts,
    /// `force`, field managers). Creates a missing object.
    pub fn apply<K: Kind>(
        &mut self,
        manager: &str,
        intent: &K,
        force: bool,
    ) -> ApiResult<Shared<K>> {
        if let Some(e) = self.take_injected(manager, "apply", K::ID) {
            let key = key_with_default_ns(intent);
            return self.fail(manager, "apply", K::ID, &key, e);
        }
        // Most applies re-apply an unchanged intent: recognised by the borrowed key.
        let (ns, name) = key_ref_with_default_ns(intent);
        if let Some(same) = self.reapplied(&(ns, name), manager, intent, force) {
            return Ok(same);
        }
        let key = (ns.to_string(), name.to_string());
        let mut intent_value = serde_json::to_value(intent).expect("objects serialize");
        strip_empty(&mut intent_value);
        let (result, managers) =
            self.apply_fields(manager, &key, &intent_value, force, || Ok(intent.clone()))?;
        self.record_apply(key, manager, intent, force, &result, managers);
        Ok(result)
    }

    /// Server-side apply of an intent as the client sent it (`serve`): the manager owns the
    /// fields the intent sets, and only those, so a partial intent (a label, or only
    /// `spec.replicas`) applies as on a real API server, and the defaults a typed intent would
    /// carry (an empty `startupPolicy`) are not claimed. A missing object is created from the
    /// intent, which must then decode as a whole object.
    pub fn apply_value<K: Kind>(
        &mut self,
        manager: &str,
        key: Key,
        mut intent: Value,
        force: bool,
    ) -> ApiResult<Shared<K>> {
        if let Some(e) = self.take_injected(manager, "apply", K::ID) {
            return self.fail(manager, "apply", K::ID, &key, e);
        }
        strip_empty(&mut intent);
        let decode =
            || decode_at::<K>(intent.clone()).map_err(|m| ApiError::new(Reason::Invalid, m));
        let (result, managers) = self.apply_fields(manager, &key, &intent, force, decode)?;
        if self.dry_run.is_none() {
            let store = K::store_mut(self);
            store.managed.insert(key.clone(), managers);
            // The typed shortcut (`reapplied`) compares typed intents: none to compare now.
            store.last_applied.remove(&key);
        }
        Ok(result)
    }

    /// The field-ownership part of server-side apply, shared by `apply` and `apply_value`:
    /// creates the object from `fresh` when missing, else checks conflicts (`force` takes the
    /// fields over), releases the fields the manager no longer sets and overlays the intent.
    /// Returns the written object and every manager's fields after the write.
    fn apply_fields<K: Kind>(
        &mut self,
        manager: &str,
        key: &Key,
        intent_value: &Value,
        force: bool,
        fresh: impl FnOnce() -> ApiResult<K>,
    ) -> ApiResult<(Shared<K>, Managers)> {
        let paths = patch::leaf_paths(intent_value);
        let Some(old) = K::store(self).objects.get(key).cloned() else {
            let mut obj = match fresh() {
                Ok(o) => o,
                Err(e) => return self.fail(manager, "apply", K::ID, key, e),
            };
            clear_status_on_create(&mut obj);
            // An apply creates through the update path, which takes no version from the body
            // (genericregistry store.go `Update`, `creating`); only a POST refuses one.
            obj.meta_mut().resource_version = None;
            let created = self.create(manager, obj)?;
            let mut managers = K::store(self).managed.get(key).cloned().unwrap_or_default();
            managers.insert(manager.to_string(), paths);
            return Ok((created, managers));
        };
        let rv = intent_value
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        if let Some(rv) = rv {
            if !rv.is_empty() && Some(rv) != old.meta().resource_version.as_deref() {
                return self.fail(manager, "apply", K::ID, key, conflict(K::ID, &key.1));
            }
        }
        let mut current = serde_json::to_value(&*old).expect("stored objects serialize");
        let mut managers = K::store(self).managed.get(key).cloned().unwrap_or_default();
        let conflicts = take_fields(
            &mut managers,
            &current,
            intent_value,
            &paths,
            manager,
            force,
        );
        if !conflicts.is_empty() {
            let updaters = K::store(self)
                .updaters
                .get(key)
                .cloned()
                .unwrap_or_default();
            let e = apply_conflict(&conflicts, &updaters, K::ID.api_version());
            return self.fail(manager, "apply", K::ID, key, e);
        }
        release_fields(&managers, &mut current, &paths, manager);
        patch::overlay(&mut current, intent_value);
        managers.insert(manager.to_string(), paths);
        let mut new: K = match decode_at(current) {
            Ok(n) => n,
            Err(m) => {
                let e = ApiError::new(Reason::Invalid, m);
                return self.fail(manager, "apply", K::ID, key, e);
            }
        };
        new.copy_status(&old);
        let result = self.write_existing(manager, "apply", old, new)?;
        Ok((result, managers))
    }

    /// Server-side apply's bookkeeping for a client's write that is not an apply (`kubectl
    /// create`, `patch`, `scale`, `edit`, a PUT through `serve`; a create is a change from
    /// nothing): `manager` takes over every field of `spec`, `metadata.labels` and
    /// `metadata.annotations` the write changed, and the other managers lose them, so a later
    /// apply of another value conflicts, as on a real API server (an update's manager owns
    /// what it set; the conflict names it `using <apiVersion>`).
    pub fn take_updated_fields<K: Kind>(
        &mut self,
        key: &Key,
        manager: &str,
        subresource: Option<&'static str>,
        old: &Value,
        new: &Value,
    ) {
        if self.dry_run.is_some() {
            return;
        }
        let store = K::store_mut(self);
        let managers = store.managed.entry(key.clone()).or_default();
        // A field's value, absent and null alike.
        fn at<'v>(v: &'v Value, p: &FieldPath) -> Option<&'v Value> {
            patch::get_path(v, p).filter(|x| !x.is_null())
        }
        let owned_kind = |p: &FieldPath| match p.first().map(|e| &**e) {
            Some("spec") => true,
            Some("metadata") => {
                matches!(p.get(1).map(|e| &**e), Some("labels" | "annotations"))
            }
            _ => false,
        };
        let changed: BTreeSet<FieldPath> = patch::leaf_paths(new)
            .into_iter()
            .chain(patch::leaf_paths(old))
            .filter(|p| owned_kind(p) && at(old, p) != at(new, p))
            .collect();
        if changed.is_empty() {
            return;
        }
        for (m, paths) in managers.iter_mut() {
            if m != manager {
                paths.retain(|p| !changed.contains(p));
            }
        }
        let gone = |p: &FieldPath| at(new, p).is_none();
        let mine = managers.entry(manager.to_string()).or_default();
        mine.extend(changed.into_iter().filter(|p| !gone(p)));
        managers.retain(|_, paths| !paths.is_empty());
        if managers.contains_key(manager) {
            let updaters = store.updaters.entry(key.clone()).or_default();
            updaters.insert(manager.to_string(), subresource);
        }
        store.last_applied.remove(key);
    }

    /// The same intent from the same manager onto an object nobody touched since: the stored
    /// object, as is.
    fn reapplied<K: Kind>(
        &self,
        key: &dyn KeyRef,
        manager: &str,
        intent: &K,
        force: bool,
    ) -> Option<Shared<K>> {
        let store = K::store(self);
        let last = store.last_applied.get(key)?;
        let current = store.objects.get(key)?;
        if last.manager != manager || last.force != force || last.intent != *intent {
            return None;
        }
        let untouched = current.meta().resource_version == last.result.meta().resource_version;
        if untouched {
            return Some(current.clone());
        }
        // Touched only in status since (a status write by another actor): with no webhooks, no
        // status field in the intent and no other field manager, applying the same intent
        // again finds nothing to change and no conflict, so the result is the stored object.
        let sole_manager = store
            .managed
            .get(key)
            .is_some_and(|m| m.len() == 1 && m.contains_key(manager));
        let no_hooks = store.hooks.mutating.is_empty() && store.hooks.validating.is_empty();
        if !(K::has_status() && last.status_free && sole_manager && no_hooks) {
            return None;
        }
        // With no main-resource write of the object since, only `/status` writes touched it.
        (!last.main_written).then(|| current.clone())
    }

    /// After a successful apply: the field managers, and the intent for `reapplied`.
    fn record_apply<K: Kind>(
        &mut self,
        key: Key,
        manager: &str,
        intent: &K,
        force: bool,
        result: &Shared<K>,
        managers: Managers,
    ) {
        if self.dry_run.is_some() {
            return;
        }
        let status_free = managers.get(manager).is_some_and(|paths| {
            paths
                .iter()
                .all(|p| p.first().map(|e| &**e) != Some("status"))
        });
        let store = K::store_mut(self);
        store.managed.insert(key.clone(), managers);
        store.last_applied.insert(
            key,
            LastApply {
                manager: manager.to_string(),
                force,
                result: result.clone(),
                intent: intent.clone(),
                status_free,
                main_written: false,
            },
        );
    }

    /// DELETE (kubernetes/apiserver `store.go` `Delete`, `updateForGracefulDeletionAndFinalizers`,
    /// `pkg/registry/rest/delete.go` `BeforeDelete` @24a394e5): preconditions, GC finalizers by propagation policy, graceful
    /// pod deletion, finalizer-blocked deletion, else removal.
    pub fn delete<K: Kind>(
        &mut self,
        actor: &str,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<Deleted<K>> {
        let key = (namespace.to_string(), name.to_string());
        if let Some(e) = self.take_injected(actor, "delete", K::ID) {
            return self.fail(actor, "delete", K::ID, &key, e);
        }
        let Some(old) = K::store(self).objects.get(&key).cloned() else {
            return self.fail(actor, "delete", K::ID, &key, not_found(K::ID, name));
        };
        let meta = old.meta();
        if opts
            .precondition_uid
            .as_ref()
            .is_some_and(|u| Some(u) != meta.uid.as_ref())
            || opts
                .precondition_rv
                .as_ref()
                .is_some_and(|r| Some(r) != meta.resource_version.as_ref())
        {
            let msg = format!("Precondition failed for {} {name:?}", K::ID);
            return self.fail(
                actor,
                "delete",
                K::ID,
                &key,
                ApiError::new(Reason::Conflict, msg),
            );
        }
        let already_deleting = meta.deletion_timestamp.is_some();
        // Propagation finalizers (store.go shouldOrphanDependents / ...InForeground).
        let mut finalizers = meta.finalizers.clone().unwrap_or_default();
        match opts.propagation {
            Some(Propagation::Foreground)
                if !already_deleting && !finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) =>
            {
                finalizers.push(FINALIZER_FOREGROUND.to_string());
            }
            Some(Propagation::Orphan)
                if !already_deleting && !finalizers.iter().any(|f| f == FINALIZER_ORPHAN) =>
            {
                finalizers.push(FINALIZER_ORPHAN.to_string());
            }
            _ => {}
        }
        let has_finalizers = !finalizers.is_empty();
        let grace_s = if K::ID == KindId::Pod {
            pod_grace_seconds(&*old, opts)
        } else {
            0
        };
        // The object as a delete that does not remove it leaves it: copied only then.
        let marked = |old: &K| {
            let mut new = old.clone();
            new.meta_mut().finalizers = has_finalizers.then_some(finalizers);
            new
        };
        if already_deleting {
            // A repeat delete may only shorten a pod's grace period; grace 0 with no finalizers
            // removes it (store.go updateForGracefulDeletionAndFinalizers).
            let remaining = meta.deletion_grace_period_seconds.unwrap_or(0);
            if grace_s == 0 && !has_finalizers && (remaining > 0 || K::ID == KindId::Pod) {
                return Ok(Deleted::Gone(self.remove(actor, old)));
            }
            if grace_s < remaining {
                let mut new = marked(&old);
                let m = new.meta_mut();
                m.deletion_grace_period_seconds = Some(grace_s);
                m.deletion_timestamp = Some(to_time(after(self.now_ms, secs_to_ms(grace_s))));
                return Ok(Deleted::Terminating(self.commit(
                    actor,
                    "delete",
                    Some(old),
                    new,
                )));
            }
            return Ok(Deleted::Terminating(old));
        }
        if grace_s > 0 || has_finalizers {
            let mut new = marked(&old);
            let m = new.meta_mut();
            m.deletion_timestamp = Some(to_time(after(self.now_ms, secs_to_ms(grace_s))));
            m.deletion_grace_period_seconds = Some(grace_s);
            if let Some(g) = m.generation.as_mut() {
                *g += 1;
            }
            return Ok(Deleted::Terminating(self.commit(
                actor,
                "delete",
                Some(old),
                new,
            )));
        }
        Ok(Deleted::Gone(self.remove(actor, old)))
    }

    /// `pods/binding`: set `spec.nodeName` once and `PodScheduled=True`.
    pub fn bind(
        &mut self,
        actor: &str,
        namespace: &str,
        name: &str,
        node: &str,
    ) -> ApiResult<Shared<Pod>> {
        let key = (namespace.to_string(), name.to_string());
        let Some(old) = self.pods.objects.get(&key).cloned() else {
            return self.fail(
                actor,
                "bind",
                KindId::Pod,
                &key,
                not_found(KindId::Pod, name),
            );
        };
        let mut new = (*old).clone();
        let spec = new.spec.get_or_insert_with(Default::default);
        if spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
            let msg = format!(
                "pod {name} is already assigned to node {:?}",
                spec.node_name
            );
            return self.fail(
                actor,
                "bind",
                KindId::Pod,
                &key,
                ApiError::new(Reason::Conflict, msg),
            );
        }
        spec.node_name = Some(node.to_string());
        set_pod_condition(&mut new, "PodScheduled", "True", None, self.now_ms);
        Ok(self.commit(actor, "bind", Some(old), new))
    }

    // ---- internals ---------------------------------------------------------------------------

    fn write_existing<K: Kind>(
        &mut self,
        actor: &str,
        verb: &'static str,
        old: Shared<K>,
        mut new: K,
    ) -> ApiResult<Shared<K>> {
        let key = key_of(&*old);
        // System fields are the server's, whatever the body says.
        {
            let (o, n) = (old.meta(), new.meta_mut());
            n.uid = o.uid.clone();
            n.creation_timestamp = o.creation_timestamp.clone();
            n.deletion_timestamp = o.deletion_timestamp.clone();
            n.deletion_grace_period_seconds = o.deletion_grace_period_seconds;
            n.generation = o.generation;
            n.resource_version = o.resource_version.clone();
            n.managed_fields = None;
            n.name = o.name.clone();
            n.namespace = o.namespace.clone();
        }
        if old.meta().deletion_timestamp.is_some() {
            let before: BTreeSet<&String> = old.meta().finalizers.iter().flatten().collect();
            let added = new
                .meta()
                .finalizers
                .iter()
                .flatten()
                .any(|f| !before.contains(f));
            if added {
                let msg = "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted";
                return self.fail(
                    actor,
                    verb,
                    K::ID,
                    &key,
                    ApiError::new(Reason::Invalid, msg),
                );
            }
        }
        defaults::on_update(&mut new, &old, self.gates);
        // Webhooks are registered for the main resource; `/status` writes skip them.
        let status_subresource = status_verb(verb);
        // A `/status` write keeps the stored labels and annotations, valid already: only a
        // main-resource write has them checked.
        if !status_subresource {
            let meta_ok = names::validate_labels_and_annotations(new.meta(), &mut self.known_keys)
                .and_then(|()| names::validate_owner_references(new.meta()));
            if let Err(m) = meta_ok {
                return self.fail(actor, verb, K::ID, &key, invalid(K::ID, &key.1, &m));
            }
            let endpoint = if matches!(verb, "patch-scale" | "update-scale") {
                Endpoint::Scale
            } else {
                Endpoint::Main
            };
            if let Err(e) = self.admit(&mut new, Some(&old), Operation::Update, endpoint) {
                return self.fail(actor, verb, K::ID, &key, e);
            }
            if let Err(m) = self.allocate(&mut new, &key) {
                let e = invalid_fields(K::ID, &key.1, &m.into());
                return self.fail(actor, verb, K::ID, &key, e);
            }
        } else if let Err(m) = defaults::validate_status(&new, &old) {
            return self.fail(actor, verb, K::ID, &key, invalid(K::ID, &key.1, &m));
        }
        drop_empty_meta(new.meta_mut());
        // A `/status` PUT holds the stored object's other fields (`update_at`,
        // `update_status_of`): its generation stays, and only its status can differ.
        let unchanged = if verb == "update-status" {
            old.status_eq(&new) && old.meta() == new.meta()
        } else {
            if K::tracks_generation() && K::spec_differs(&old, &new) {
                *new.meta_mut().generation.get_or_insert(0) += 1;
            }
            *old == new
        };
        if unchanged {
            return Ok(old);
        }
        // ShouldDeleteDuringUpdate: the last finalizer removed from a deleting object removes it.
        let finalizers_empty = new.meta().finalizers.as_ref().is_none_or(Vec::is_empty);
        let graceful_pending = new.meta().deletion_grace_period_seconds.unwrap_or(0) > 0;
        if new.meta().deletion_timestamp.is_some() && finalizers_empty && !graceful_pending {
            let updated = self.commit(actor, verb, Some(old), new);
            return Ok(self.remove(actor, updated));
        }
        Ok(self.commit(actor, verb, Some(old), new))
    }

    /// A Service's cluster IP and node ports, after admission (the registry allocates once the
    /// object is valid): what every other Service holds is taken.
    fn allocate<K: Kind>(&self, obj: &mut K, key: &Key) -> Result<(), String> {
        let Some(svc) = (obj as &mut dyn std::any::Any).downcast_mut::<Service>() else {
            return Ok(());
        };
        let mut taken = service::Taken::default();
        for (k, other) in self.services.objects.iter() {
            if k != key {
                taken.add(other);
            }
        }
        service::allocate(svc, &taken)
    }

    fn admit<K: Kind>(
        &mut self,
        obj: &mut K,
        old: Option<&K>,
        op: Operation,
        endpoint: Endpoint,
    ) -> ApiResult<()> {
        self.admission_warnings.borrow_mut().clear();
        if endpoint == Endpoint::Main {
            // Decoded into Go types (a quantity that does not parse fails the decode) and
            // encoded again: quantities in their stored form. A `/status` write holds the
            // stored spec, already decoded.
            quantity::canonicalize(obj)?;
        }
        let store = K::store(self);
        let webhooks = endpoint == Endpoint::Main;
        for (name, hook) in store.hooks.mutating.iter().filter(|_| webhooks) {
            hook(obj, op).map_err(|r| admission_denied(name, r))?;
        }
        defaults::validate(obj, old, self.gates)
            .map_err(|e| invalid_fields(K::ID, obj.meta().name.as_deref().unwrap_or(""), &e))?;
        for check in &store.hooks.schema {
            check(obj).map_err(|m| ApiError::new(Reason::Invalid, m))?;
        }
        for (name, hook) in store.hooks.validating.iter().filter(|_| webhooks) {
            hook(obj, old).map_err(|r| admission_denied(name, r))?;
        }
        for (name, hook) in &store.hooks.limits {
            hook(obj, old).map_err(|r| admission_denied(name, r))?;
        }
        Ok(())
    }

    /// Store `new`, assigning the next resourceVersion, and log the watch and metadata events.
    fn commit<K: Kind>(
        &mut self,
        actor: &str,
        verb: &str,
        old: Option<Shared<K>>,
        mut new: K,
    ) -> Shared<K> {
        if self.dry_run.is_some() {
            let rv = old.and_then(|o| o.meta().resource_version.clone());
            new.meta_mut().resource_version = rv;
            return Arc::new(new);
        }
        let prev_rv = self.rv;
        self.rv += 1;
        assert!(self.rv > prev_rv, "resourceVersion must strictly increase");
        new.meta_mut().resource_version = Some(self.rv.to_string());
        let key = key_of(&new);
        let obj = Arc::new(new);
        let ty = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(actor, verb, ty, &key, &obj);
        let store = K::store_mut(self);
        // A main-resource write stores a version that differs in more than status (an
        // unchanged one is not stored, `write_existing`): a re-apply must compare again.
        if !status_verb(verb) {
            if let Some(last) = store.last_applied.get_mut(&key) {
                last.main_written = true;
            }
        }
        store.objects.insert(&key, obj.clone());
        obj
    }

    fn remove<K: Kind>(&mut self, actor: &str, old: Shared<K>) -> Shared<K> {
        if self.dry_run.is_some() {
            return old;
        }
        self.rv += 1;
        let key = key_of(&*old);
        let store = K::store_mut(self);
        store.objects.remove(&key);
        store.managed.remove(&key);
        store.last_applied.remove(&key);
        store.updaters.remove(&key);
        // The DELETED event carries the last state, at the deletion's resourceVersion.
        let mut last = (*old).clone();
        last.meta_mut().resource_version = Some(self.rv.to_string());
        let last = Arc::new(last);
        self.record(actor, "delete", EventType::Deleted, &key, &last);
        last
    }

    fn record<K: Kind>(
        &mut self,
        actor: &str,
        verb: &str,
        ty: EventType,
        key: &Key,
        obj: &Shared<K>,
    ) {
        self.meta_log.push(MetaEvent {
            rv: self.rv,
            at_ms: self.now_ms,
            ty,
            kind: K::ID,
            obj: obj.clone(),
        });
        let (rv, at_ms) = (self.rv, self.now_ms);
        K::store_mut(self).log.push(WatchEvent {
            rv,
            at_ms,
            ty,
            obj: obj.clone(),
        });
        let detail = if ty == EventType::Deleted {
            "gone".to_string()
        } else {
            String::new()
        };
        let t = &mut self.trace;
        let entry = TraceEntry {
            at_ms: self.now_ms,
            actor: t.word(actor),
            verb: t.word(verb),
            kind: t.word(K::ID.as_str()),
            namespace: t.word(&key.0),
            name: key.1.clone(),
            rv: self.rv,
            detail,
        };
        t.push(entry);
    }

    fn fail<T>(
        &mut self,
        actor: &str,
        verb: &str,
        kind: KindId,
        key: &Key,
        e: ApiError,
    ) -> ApiResult<T> {
        if self.dry_run.is_some() {
            return Err(e);
        }
        let t = &mut self.trace;
        let entry = TraceEntry {
            at_ms: self.now_ms,
            actor: t.word(actor),
            verb: t.word(verb),
            kind: t.word(kind.as_str()),
            namespace: t.word(&key.0),
            name: key.1.clone(),
            rv: 0,
            detail: format!("error={:?}", e.reason),
        };
        t.push(entry);
        Err(e)
    }

    /// Record an external event (fault, scenario step) in the trace.
    pub fn trace_external(
        &mut self,
        actor: &str,
        verb: &str,
        kind: &str,
        name: &str,
        detail: String,
    ) {
        let t = &mut self.trace;
        let entry = TraceEntry {
            at_ms: self.now_ms,
            actor: t.word(actor),
            verb: t.word(verb),
            kind: t.word(kind),
            namespace: t.word(""),
            name: name.to_string(),
            rv: 0,
            detail,
        };
        t.push(entry);
    }
}

/// A write to the `/status` subresource (which holds the stored spec and metadata).
fn status_verb(verb: &str) -> bool {
    matches!(verb, "update-status" | "patch-status")
}

/// Decode an object from JSON, an error naming the field as the apiserver's schema validation
/// does (`spec.replicas: Invalid value: "string": spec.replicas in body must be of type
/// integer: "string"`, `spec.roles: Required value`), where serde alone names none.
pub fn decode_at<K: serde::de::DeserializeOwned>(v: Value) -> Result<K, String> {
    // The path is tracked only to word a failure: most objects decode.
    if let Ok(k) = K::deserialize(&v) {
        return Ok(k);
    }
    serde_path_to_error::deserialize(&v).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let missing = inner
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'));
        match (path.as_str(), missing) {
            (".", Some(field)) => format!("{field}: Required value"),
            (_, Some(field)) => format!("{path}.{field}: Required value"),
            (".", None) => inner,
            _ => match schema_types(&inner) {
                Some((got, want)) => format!(
                    "{path}: Invalid value: \"{got}\": {path} in body must be of type {want}: \"{got}\""
                ),
                None => format!("{path}: Invalid value: {inner}"),
            },
        }
    })
}

/// serde's `invalid type: string "3", expected i32` as OpenAPI's type names, the value's and
/// the schema's (`string`, `integer`), as the apiserver's schema validation words a wrong type
/// (kube-openapi `validate/type.go`).
fn schema_types(serde_message: &str) -> Option<(&'static str, &'static str)> {
    let rest = serde_message.strip_prefix("invalid type: ")?;
    let (got, want) = rest.split_once(", expected ")?;
    let got = match got.split([' ', '`']).next()? {
        "string" => "string",
        "integer" => "integer",
        "floating" => "number",
        "boolean" => "boolean",
        "map" => "object",
        "sequence" => "array",
        "null" => "null",
        _ => return None,
    };
    let want = match want.trim() {
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" | "isize" => {
            "integer"
        }
        "f32" | "f64" => "number",
        "a string" | "string" => "string",
        "a boolean" => "boolean",
        "a sequence" => "array",
        w if w.starts_with("struct ") || w == "a map" => "object",
        _ => return None,
    };
    Some((got, want))
}

/// An empty list or map in the metadata is stored as absent: etcd holds objects as protobuf,
/// where an empty repeated field and a missing one are the same, and `ObjectMeta`'s JSON tags
/// are `omitempty` (apimachinery `pkg/apis/meta/v1/types.go`). A garbage collector that strips
/// the last owner reference leaves no `ownerReferences: []`.
fn drop_empty_meta(meta: &mut ObjectMeta) {
    if meta.owner_references.as_ref().is_some_and(Vec::is_empty) {
        meta.owner_references = None;
    }
    if meta.finalizers.as_ref().is_some_and(Vec::is_empty) {
        meta.finalizers = None;
    }
    if meta.labels.as_ref().is_some_and(BTreeMap::is_empty) {
        meta.labels = None;
    }
    if meta.annotations.as_ref().is_some_and(BTreeMap::is_empty) {
        meta.annotations = None;
    }
}

/// An object's key, in namespace `default` when a namespaced object names none.
fn key_with_default_ns<K: Kind>(obj: &K) -> Key {
    let (ns, name) = key_ref_with_default_ns(obj);
    (ns.to_string(), name.to_string())
}

/// `key_with_default_ns`, borrowed from the object.
fn key_ref_with_default_ns<K: Kind>(obj: &K) -> (&str, &str) {
    let (ns, name) = meta_key(obj.meta());
    let ns = if ns.is_empty() && K::ID.namespaced() {
        "default"
    } else {
        ns
    };
    (ns, name)
}

/// Grace period for a pod delete: the request's, else the pod's own (default 30 s), forced to 0
/// for unscheduled or terminal pods (pod strategy `CheckGracefulDelete`).
fn pod_grace_seconds<K: Kind>(obj: &K, opts: &DeleteOptions) -> i64 {
    let Some(pod) = (obj as &dyn std::any::Any).downcast_ref::<Pod>() else {
        return 0;
    };
    let spec = pod.spec.as_ref();
    let node = spec.and_then(|s| s.node_name.as_deref()).unwrap_or("");
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("");
    if node.is_empty() || phase == "Succeeded" || phase == "Failed" {
        return 0;
    }
    let own = spec
        .and_then(|s| s.termination_grace_period_seconds)
        .unwrap_or(30);
    opts.grace_period_seconds.unwrap_or(own).max(0)
}

/// SSA's conflict check: each path the intent changes that another manager owns is a conflict,
/// or with `force` moves to this manager (the others lose it). Returns the conflicts.
fn take_fields(
    managers: &mut Managers,
    current: &Value,
    intent: &Value,
    paths: &BTreeSet<FieldPath>,
    manager: &str,
    force: bool,
) -> Vec<(String, String)> {
    let mut conflicts = Vec::new();
    for p in paths {
        // Whether another manager owns the path first: cheap, and usually no one does; the
        // values are compared only then.
        let owned_by_another = managers
            .iter()
            .any(|(m, owned)| m != manager && owned.contains(p));
        if !owned_by_another || patch::get_path(current, p) == patch::get_path(intent, p) {
            continue;
        }
        for (m, owned) in managers.iter_mut() {
            if m != manager && owned.contains(p) {
                if force {
                    owned.remove(p);
                } else {
                    conflicts.push((m.clone(), patch::path_text(p)));
                }
            }
        }
    }
    conflicts
}

/// The 409 of an apply that conflicts (apiserver `internal.NewConflictError` and
/// `getConflictMessage`, structured-merge-diff's `fieldpath.Path` text): one conflict reads
/// `Apply failed with 1 conflict: conflict with "m": .spec.replicas`, several are grouped by
/// manager (sorted) on lines of their own; one `FieldManagerConflict` cause per field. A
/// manager whose fields came from an update (not an apply) reads `"m" using <apiVersion>`.
fn apply_conflict(
    conflicts: &[(String, String)],
    updaters: &BTreeMap<String, Option<&'static str>>,
    api_version: &str,
) -> ApiError {
    // `printManager` (apimachinery managedfields/internal/conflict.go at v0.33.0): an Update
    // manager is named with its subresource, if any, and the version it wrote.
    let who = |m: &str| match updaters.get(m) {
        Some(Some(sub)) => format!("{m:?} with subresource {sub:?} using {api_version}"),
        Some(None) => format!("{m:?} using {api_version}"),
        None => format!("{m:?}"),
    };
    let message = match conflicts {
        [(m, path)] => format!(
            "Apply failed with 1 conflict: conflict with {}: {path}",
            who(m)
        ),
        _ => {
            let mut by_manager: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (m, path) in conflicts {
                by_manager.entry(m).or_default().push(path);
            }
            let mut lines = Vec::new();
            for (m, paths) in by_manager {
                lines.push(format!("conflicts with {}:", who(m)));
                lines.extend(paths.iter().map(|p| format!("- {p}")));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let mut e = ApiError::new(Reason::Conflict, message);
    e.causes = conflicts
        .iter()
        .map(|(m, path)| Cause {
            reason: "FieldManagerConflict",
            message: format!("conflict with {}", who(m)),
            field: path.clone(),
        })
        .collect();
    e
}

/// Fields this manager applied before but not now are removed, unless another manager owns
/// them too.
fn release_fields(
    managers: &Managers,
    current: &mut Value,
    paths: &BTreeSet<FieldPath>,
    manager: &str,
) {
    let Some(previously) = managers.get(manager) else {
        return;
    };
    // An item's key fields last, once its other fields are gone (`patch::remove_path`), the
    // deepest first (a volume mount's key before its container's).
    let (mut keys, fields): (Vec<&FieldPath>, Vec<&FieldPath>) = previously
        .difference(paths)
        .partition(|p| patch::is_key_leaf(p));
    keys.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in fields.into_iter().chain(keys) {
        // Shared when another manager owns it or anything under it (an empty list or map one
        // manager applied, which another filled).
        let shared = managers
            .iter()
            .any(|(m, owned)| m != manager && owns_under(owned, p));
        if !shared {
            patch::remove_path(current, p);
        }
    }
}

/// Whether `owned` holds `p` or a path under it: such paths sort together, from `p` on.
fn owns_under(owned: &BTreeSet<FieldPath>, p: &FieldPath) -> bool {
    owned
        .range::<FieldPath, _>(p..)
        .next()
        .is_some_and(|o| o.starts_with(p))
}

/// Remove nulls, empty maps and empty lists from an apply configuration: Go's `omitempty`.
fn strip_empty(v: &mut Value) {
    if let Value::Object(m) = v {
        for child in m.values_mut() {
            strip_empty(child);
        }
        m.retain(|_, c| match c {
            Value::Null => false,
            Value::Object(x) => !x.is_empty(),
            _ => true,
        });
    }
}

pub fn not_found(kind: KindId, name: &str) -> ApiError {
    ApiError::new(
        Reason::NotFound,
        lws::client::not_found_message(kind.as_str(), name),
    )
}

/// `NewInvalid`: `<Kind> "<name>" is invalid: <field>: <why>`.
/// `NewInvalid` of a field error list: the aggregate in the message, one cause per error
/// (`metav1.CauseType` from the error's type; its message the error's body).
fn invalid_fields(kind: KindId, name: &str, errs: &defaults::FieldErrors) -> ApiError {
    let mut e = invalid(kind, name, &errs.aggregate());
    e.causes = errs.0.iter().map(|m| field_cause(m)).collect();
    e
}

/// The cause of one `<field>: <type>: ...` error.
fn field_cause(m: &str) -> Cause {
    let (field, body) = m.split_once(": ").unwrap_or(("", m));
    let types = [
        ("Invalid value", "FieldValueInvalid"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Required value", "FieldValueRequired"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Forbidden", "FieldValueForbidden"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
        ("Not found", "FieldValueNotFound"),
    ];
    let reason = types
        .iter()
        .find(|(t, _)| body.starts_with(t))
        .map_or("FieldValueInvalid", |(_, r)| r);
    Cause {
        reason,
        message: body.to_string(),
        field: field.to_string(),
    }
}

fn invalid(kind: KindId, name: &str, cause: &str) -> ApiError {
    ApiError::new(
        Reason::Invalid,
        format!("{kind} {name:?} is invalid: {cause}"),
    )
}

/// A body's UID that is not the stored object's: a failed precondition (409) on an update.
fn uid_precondition(
    kind: KindId,
    name: &str,
    body: &ObjectMeta,
    stored: &ObjectMeta,
) -> Option<ApiError> {
    let uid = body.uid.as_deref().filter(|u| !u.is_empty())?;
    let was = stored.uid.as_deref().unwrap_or_default();
    (uid != was).then(|| {
        let msg = format!(
            "Operation cannot be fulfilled on {kind} {name:?}: Precondition failed: UID in precondition: {uid}, UID in object meta: {was}"
        );
        ApiError::new(Reason::Conflict, msg)
    })
}

/// A patched object whose UID is not the stored one's: `metadata.uid` is immutable
/// (apimachinery `ValidateObjectMetaUpdate`, after `rest.BeforeUpdate` keeps the stored UID
/// only when the object has none).
pub fn uid_changed(
    kind: KindId,
    name: &str,
    patched: &ObjectMeta,
    stored: &ObjectMeta,
) -> Option<ApiError> {
    let uid = patched.uid.as_deref().filter(|u| !u.is_empty())?;
    (Some(uid) != stored.uid.as_deref()).then(|| {
        invalid(
            kind,
            name,
            &format!("metadata.uid: Invalid value: {uid:?}: field is immutable"),
        )
    })
}

fn conflict(kind: KindId, name: &str) -> ApiError {
    let msg = format!(
        "Operation cannot be fulfilled on {kind} {name:?}: the object has been modified; please apply your changes to the latest version and try again"
    );
    ApiError::new(Reason::Conflict, msg)
}

fn admission_denied(hook: &str, r: Rejection) -> ApiError {
    match r {
        Rejection::Denied(msg) => ApiError::new(
            Reason::Forbidden,
            format!("admission webhook {hook:?} denied the request: {msg}"),
        ),
        Rejection::Unreachable(msg) => ApiError::new(
            Reason::InternalError,
            format!("Internal error occurred: failed calling webhook {hook:?}: {msg}"),
        ),
        Rejection::Panicked(msg) => ApiError::new(
            Reason::InternalError,
            format!("admission webhook {hook:?} denied the request: {msg}"),
        ),
        Rejection::Undecodable(msg) => ApiError::new(
            Reason::BadRequest,
            format!("admission webhook {hook:?} denied the request: {msg}"),
        ),
    }
}

/// Set a pod condition, stamping `lastTransitionTime` only when the status flips.
pub fn set_pod_condition(
    pod: &mut Pod,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    now_ms: u64,
) {
    let st = pod.status.get_or_insert_with(Default::default);
    let conds = st.conditions.get_or_insert_with(Vec::new);
    match conds.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == status => {}
        Some(c) => {
            c.status = status.to_string();
            c.reason = reason.map(str::to_string);
            c.last_transition_time = Some(to_time(now_ms));
        }
        None => conds.push(PodCondition {
            type_: type_.to_string(),
            status: status.to_string(),
            reason: reason.map(str::to_string),
            last_transition_time: Some(to_time(now_ms)),
            ..Default::default()
        }),
    }
}

/// A create's `PrepareForCreate`: every kind with a status starts without one, but a Node,
/// which takes its status from the body ("Nodes allow *all* fields, including status, to be
/// set on create", kubernetes pkg/registry/core/node/strategy.go): `kubectl create -f` of a
/// saved Node keeps its conditions and capacity.
fn clear_status_on_create<K: Kind>(obj: &mut K) {
    if K::ID != KindId::Node {
        obj.clear_status();
    }
}

#[cfg(test)]
mod tests;
