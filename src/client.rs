//! The `Client` the reconcilers are written against: controller-runtime's client, as LWS uses it.
//! Reads come from the controller's (possibly stale) cache; writes go to the API server.
//!
//! Every method is `async`: each call is a point at which the caller may be suspended while the
//! world runs other actors, fails the call, or kills the controller (the future is then dropped).
//! The simulator drives these futures on a deterministic executor; nothing here knows about it.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::LeaderWorkerSet;
use crate::disagg::api::{DisaggregatedSet, DisaggregatedSetRoleScaler};

/// An object kind the reconcilers read or write.
pub trait Resource:
    Clone + PartialEq + Serialize + DeserializeOwned + fmt::Debug + Send + Sync + 'static
{
    const KIND: &'static str;
    const API_VERSION: &'static str;
    fn meta(&self) -> &ObjectMeta;
    fn meta_mut(&mut self) -> &mut ObjectMeta;
}

macro_rules! resource {
    ($ty:ty, $kind:literal, $version:expr) => {
        impl Resource for $ty {
            const KIND: &'static str = $kind;
            const API_VERSION: &'static str = $version;
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

resource!(LeaderWorkerSet, "LeaderWorkerSet", crate::api::API_VERSION);
resource!(StatefulSet, "StatefulSet", "apps/v1");
resource!(ControllerRevision, "ControllerRevision", "apps/v1");
resource!(Pod, "Pod", "v1");
resource!(Service, "Service", "v1");
resource!(Node, "Node", "v1");
resource!(
    crate::volcano::PodGroup,
    "PodGroup",
    crate::volcano::API_VERSION
);
resource!(
    DisaggregatedSet,
    "DisaggregatedSet",
    crate::disagg::api::API_VERSION
);
resource!(
    DisaggregatedSetRoleScaler,
    "DisaggregatedSetRoleScaler",
    crate::disagg::api::API_VERSION
);

/// `metav1.StatusReason` of a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// 400: the body does not decode (a quantity that does not parse).
    BadRequest,
    NotFound,
    AlreadyExists,
    Conflict,
    Invalid,
    /// 403: an admission webhook refused the write (controller-runtime's `admission.Denied`).
    Forbidden,
    TooManyRequests,
    InternalError,
    /// 503: the API server is unavailable (restarting, overloaded).
    ServiceUnavailable,
    Timeout,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub reason: Reason,
    pub message: String,
}

impl Error {
    pub fn new(reason: Reason, message: impl Into<String>) -> Error {
        Error {
            reason,
            message: message.into(),
        }
    }

    /// An error of the reconciler's own (not from the API): requeued with back-off.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Reason::InternalError, message)
    }

    /// `NotFound` with the API server's message, `<kind> "<name>" not found`.
    pub fn not_found(kind: &str, name: &str) -> Error {
        Error::new(Reason::NotFound, not_found_message(kind, name))
    }

    pub fn is_not_found(&self) -> bool {
        self.reason == Reason::NotFound
    }

    pub fn is_already_exists(&self) -> bool {
        self.reason == Reason::AlreadyExists
    }

    pub fn is_conflict(&self) -> bool {
        self.reason == Reason::Conflict
    }
}

/// `<kind> "<name>" not found`: `format!("{kind} {name:?} not found")`, written without `fmt`
/// when no character of `name` needs Debug's escaping (every name the API server accepts).
pub fn not_found_message(kind: &str, name: &str) -> String {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
    if !plain {
        return format!("{kind} {name:?} not found");
    }
    [kind, " \"", name, "\" not found"].concat()
}

/// The reason, then the message. An event message that upstream formats with Go's `%v` of an
/// API error (a `StatusError`'s message alone) takes `message`, not this.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.reason, self.message)
    }
}

impl std::error::Error for Error {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

/// What a reconcile asks of its queue (controller-runtime `reconcile.Result`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Action {
    pub requeue_after_ms: Option<u64>,
    /// Deprecated `Requeue: true`: a rate-limited requeue.
    pub requeue: bool,
}

impl Action {
    pub fn done() -> Action {
        Action::default()
    }

    pub fn requeue_after(ms: u64) -> Action {
        Action {
            requeue_after_ms: Some(ms),
            requeue: false,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[allow(async_fn_in_trait)]
pub trait Client {
    /// From the cache: NotFound when the cache does not hold it.
    async fn get<K: Resource>(&self, namespace: &str, name: &str) -> Result<Arc<K>>;
    /// From the API server, not the cache (controller-runtime's `mgr.GetAPIReader()`): a round
    /// trip that sees every write before it, the reader's own included.
    async fn get_live<K: Resource>(&self, namespace: &str, name: &str) -> Result<Arc<K>>;
    /// From the cache, objects carrying every given label, in name order.
    async fn list<K: Resource>(
        &self,
        namespace: &str,
        labels: &[(&str, &str)],
    ) -> Result<Vec<Arc<K>>>;
    async fn create<K: Resource>(&self, obj: K) -> Result<Arc<K>>;
    async fn update<K: Resource>(&self, obj: K) -> Result<Arc<K>>;
    async fn update_status<K: Resource>(&self, obj: K) -> Result<Arc<K>>;
    async fn merge_patch<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        patch: serde_json::Value,
    ) -> Result<Arc<K>>;
    /// A JSON merge patch of the status subresource (`client.Status().Patch(obj, MergeFrom(old))`).
    async fn merge_patch_status<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        patch: serde_json::Value,
    ) -> Result<Arc<K>>;
    /// Server-side apply with an explicit field manager and force flag.
    async fn apply<K: Resource>(&self, obj: K, field_manager: &str, force: bool) -> Result<Arc<K>>;
    async fn delete<K: Resource>(
        &self,
        namespace: &str,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<()>;
    /// `record.EventRecorder.Eventf` (client-go `tools/record`, the core/v1 recorder
    /// controller-runtime's `GetEventRecorderFor` returns; v0.3.0 and v0.4.1): not an API
    /// write the reconcilers depend on.
    fn event<K: Resource>(&self, object: &K, type_: &str, reason: &str, message: &str);
    /// `events.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note)`
    /// (client-go `tools/events`, the events.k8s.io/v1 recorder controller-runtime's
    /// `GetEventRecorder` returns; v0.10.0). A client that keeps no events may let it fall
    /// back to `event`, which drops `related` and `action`.
    fn eventf<K: Resource>(
        &self,
        regarding: &K,
        related: Option<Related<'_>>,
        type_: &str,
        reason: &str,
        action: &str,
        note: &str,
    ) {
        let _ = (related, action);
        self.event(regarding, type_, reason, note);
    }
}

/// The `related` object of an events.k8s.io/v1 event, as `reference.GetReference` reads it.
#[derive(Clone, Copy, Debug)]
pub struct Related<'a> {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub meta: &'a ObjectMeta,
}

impl<'a> Related<'a> {
    pub fn of<K: Resource>(object: &'a K) -> Self {
        Related {
            kind: K::KIND,
            api_version: K::API_VERSION,
            meta: object.meta(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::not_found_message;

    #[test]
    fn not_found_message_is_the_formatted_one() {
        let names = [
            "lws-0",
            "a.b-c",
            "",
            "with space",
            "quo\"te",
            "back\\slash",
            "tab\t",
            "é",
            "it's",
        ];
        for name in names {
            assert_eq!(
                not_found_message("pods", name),
                format!("pods {name:?} not found"),
                "{name:?}"
            );
        }
    }
}
