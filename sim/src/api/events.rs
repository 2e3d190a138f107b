//! Kubernetes Events the controllers record (`record.EventRecorder.Eventf`), kept as
//! `core/v1` Event objects a scenario's `check` can match.
//!
//! client-go's recorder (`tools/record/event.go`, `events_cache.go`, v0.32) names an event
//! `<object>.<nanoseconds hex>` and folds an event identical to an earlier one (same object,
//! type, reason, message and source) into it: `count` + 1 and a new `lastTimestamp`. Events
//! live here, beside the API server's stores, with their own resourceVersion counter, as in a
//! cluster that keeps events in a separate etcd (`--etcd-servers-overrides=/events#...`): they
//! never move the resourceVersions, watch logs or trace the controllers depend on. Simplified
//! (docs/fidelity.md): no similar-event aggregation ("combined from similar events"), no
//! spam filter, no TTL.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// What a reconciler recorded: the object (kind and metadata) and the event's fields.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub object: ObjectMeta,
    pub type_: String,
    pub reason: String,
    pub message: String,
}

#[derive(Clone, Debug, Default)]
pub struct EventStore {
    rv: u64,
    /// By (namespace, name).
    events: BTreeMap<(String, String), Event>,
    /// Correlation key (object uid, type, reason, message) -> the event's key.
    seen: BTreeMap<(String, String, String, String), (String, String)>,
}

impl EventStore {
    /// How many events were recorded (or counted again) so far.
    pub fn version(&self) -> u64 {
        self.rv
    }

    /// Record `e` at `now_ms` from `component`.
    pub fn record(&mut self, e: Recorded, component: &str, now_ms: u64) {
        let time = crate::time::to_time(now_ms);
        self.rv += 1;
        let rv = self.rv.to_string();
        let uid = e.object.uid.clone().unwrap_or_default();
        let corr = (uid, e.type_.clone(), e.reason.clone(), e.message.clone());
        if let Some(key) = self.seen.get(&corr) {
            let ev = self.events.get_mut(key).expect("seen events are stored");
            ev.count = Some(ev.count.unwrap_or(1) + 1);
            ev.last_timestamp = Some(time);
            ev.metadata.resource_version = Some(rv);
            return;
        }
        let namespace = e.object.namespace.clone().unwrap_or_default();
        let object_name = e.object.name.clone().unwrap_or_default();
        // Nanoseconds of virtual time, bumped past any event already named so (two events of
        // one object at one instant).
        let mut nanos = time.0.as_nanosecond();
        let name = loop {
            let n = format!("{object_name}.{nanos:x}");
            if !self.events.contains_key(&(namespace.clone(), n.clone())) {
                break n;
            }
            nanos += 1;
        };
        let ev = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                resource_version: Some(rv),
                ..Default::default()
            },
            involved_object: ObjectReference {
                api_version: Some(e.api_version.to_string()),
                kind: Some(e.kind.to_string()),
                name: Some(object_name),
                namespace: Some(namespace.clone()),
                uid: e.object.uid.clone(),
                resource_version: e.object.resource_version.clone(),
                ..Default::default()
            },
            type_: Some(e.type_),
            reason: Some(e.reason),
            message: Some(e.message),
            count: Some(1),
            first_timestamp: Some(time.clone()),
            last_timestamp: Some(time),
            source: Some(EventSource {
                component: Some(component.to_string()),
                host: None,
            }),
            ..Default::default()
        };
        let key = (namespace, name);
        self.seen.insert(corr, key.clone());
        self.events.insert(key, ev);
    }

    /// The events in `namespace` (every namespace for `None`), in name order.
    pub fn list<'a>(&'a self, namespace: Option<&'a str>) -> impl Iterator<Item = &'a Event> + 'a {
        self.events
            .iter()
            .filter(move |((ns, _), _)| namespace.is_none_or(|n| n == ns))
            .map(|(_, e)| e)
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(reason: &str, message: &str) -> Recorded {
        Recorded {
            kind: "LeaderWorkerSet",
            api_version: "leaderworkerset.x-k8s.io/v1",
            object: ObjectMeta {
                name: Some("vllm".into()),
                namespace: Some("default".into()),
                uid: Some("u1".into()),
                ..Default::default()
            },
            type_: "Normal".into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    fn at(ms: u64) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        crate::time::to_time(ms)
    }

    #[test]
    fn identical_events_fold_into_one_with_a_count() {
        let mut s = EventStore::default();
        s.record(rec("GroupsProgressing", "a"), "lws", 1_000);
        s.record(rec("GroupsProgressing", "a"), "lws", 2_000);
        s.record(rec("GroupsProgressing", "b"), "lws", 2_000);
        let all: Vec<&Event> = s.list(Some("default")).collect();
        assert_eq!(all.len(), 2);
        let a = all
            .iter()
            .find(|e| e.message.as_deref() == Some("a"))
            .unwrap();
        assert_eq!(a.count, Some(2));
        assert_eq!(a.first_timestamp, Some(at(1_000)));
        assert_eq!(a.last_timestamp, Some(at(2_000)));
        assert_eq!(a.involved_object.kind.as_deref(), Some("LeaderWorkerSet"));
        assert_eq!(s.list(Some("other")).count(), 0);
    }

    #[test]
    fn two_events_at_one_instant_get_two_names() {
        let mut s = EventStore::default();
        s.record(rec("A", "x"), "lws", 5);
        s.record(rec("B", "y"), "lws", 5);
        let names: Vec<_> = s
            .list(None)
            .map(|e| e.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names.len(), 2);
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| n.starts_with("vllm.")), "{names:?}");
    }
}
