//! Kubernetes Events the controllers record, kept as `core/v1` Event objects (the form the API
//! server stores; `serve` also shows them as events.k8s.io/v1) a scenario's `check` can match.
//!
//! Two recorders, as upstream uses them:
//!
//! - the core/v1 recorder (client-go `tools/record/event.go`, `events_cache.go`), which
//!   controller-runtime's `GetEventRecorderFor` returns (LWS v0.3.0 and v0.4.1): it names an
//!   event `<object>.<nanoseconds hex>` and folds one identical to an earlier one (same source,
//!   object, type, reason and message) into it: `count` + 1 and a new `lastTimestamp`;
//! - the events.k8s.io/v1 recorder (client-go `tools/events/event_recorder.go` and
//!   `event_broadcaster.go` @v0.36.3), which controller-runtime's `GetEventRecorder` returns
//!   (v0.24.1 `pkg/internal/recorder/recorder.go`; LWS v0.10.0): an event carries an action,
//!   an optional related object, `eventTime` and its reporting controller and instance. Each
//!   controller process keeps a cache of the events it recorded, keyed by type, action, reason,
//!   reporting controller and instance, the regarding object's reference (its
//!   resourceVersion included) and the related one's, but not the note. The second isomorphic
//!   event turns the first into a series (`series.count` 2, written at once); later ones only
//!   count in the cache, written every 30 minutes (`refreshExistingEventSeries`) and when the
//!   series has been quiet for 6 minutes (`finishSeries`, every 6 minutes, which also forgets
//!   singletons older than that). The broadcaster starts when the process takes the
//!   leader lease (the "became leader" event is the first use of controller-runtime's lazy
//!   recorder provider, which starts it) or at its first event; a process that dies loses its
//!   unwritten counts. A note over 1 024 bytes is refused by the API server's events.k8s.io
//!   validation (`NoteLengthLimit`): the event is dropped, as the recorder drops a rejected one.
//!
//! Events live here, beside the API server's stores, with their own resourceVersion counter, as
//! in a cluster that keeps events in a separate etcd (`--etcd-servers-overrides=/events#...`):
//! they never move the resourceVersions, watch logs or trace the controllers depend on.
//! Simplified (docs/fidelity.md): no similar-event aggregation ("combined from similar
//! events"), no spam filter, no TTL; the events.k8s.io/v1 recorder's note is taken as written
//! (upstream formats it with `fmt.Sprintf` and no arguments, which rewrites a `%` verb).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Event, EventSeries, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

/// `finishTime` and `refreshTime` (client-go `tools/events/event_broadcaster.go` @v0.36.3).
const FINISH_MS: u64 = 6 * 60 * 1000;
const REFRESH_MS: u64 = 30 * 60 * 1000;
/// `NoteLengthLimit` (kubernetes `pkg/apis/core/validation/events.go`): the most bytes of an
/// events.k8s.io/v1 event's note.
const NOTE_LENGTH_LIMIT: usize = 1024;

/// What a reconciler recorded: the object (kind and metadata), the event's fields, and the
/// name of the recorder (`GetEventRecorderFor(name)` / `GetEventRecorder(name)`).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub object: ObjectMeta,
    pub type_: String,
    pub reason: String,
    pub message: String,
    pub controller: &'static str,
    /// Set when recorded through the events.k8s.io/v1 recorder.
    pub v1: Option<RecordedV1>,
}

/// The fields only the events.k8s.io/v1 recorder has.
#[derive(Clone, Debug)]
pub struct RecordedV1 {
    pub action: String,
    pub related: Option<ObjectReference>,
}

/// `reference.GetReference`: the object reference an event names.
pub fn reference(kind: &str, api_version: &str, meta: &ObjectMeta) -> ObjectReference {
    ObjectReference {
        api_version: Some(api_version.to_string()),
        kind: Some(kind.to_string()),
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        ..Default::default()
    }
}

#[derive(Clone, Debug, Default)]
pub struct EventStore {
    rv: u64,
    /// By (namespace, name).
    events: BTreeMap<(String, String), Event>,
    /// The version each event was created at (its resourceVersion moves when it is counted
    /// again): what a watch needs to tell ADDED from MODIFIED.
    created: BTreeMap<(String, String), u64>,
    /// Correlation key (object uid, type, reason, message) -> the event's key.
    seen: BTreeMap<(String, String, String, String), (String, String)>,
    /// The events.k8s.io/v1 broadcaster of each live controller process, by its host name.
    broadcasters: BTreeMap<String, Broadcaster>,
    /// The earliest tick of any broadcaster (`u64::MAX`: none).
    next_tick_ms: u64,
}

/// One process's events.k8s.io/v1 broadcaster: its cache of isomorphic events and when its
/// two periodic flushes next run.
#[derive(Clone, Debug)]
struct Broadcaster {
    cache: BTreeMap<IsoKey, Cached>,
    next_finish_ms: u64,
    next_refresh_ms: u64,
}

/// `eventKey`: type, action, reason, reporting controller and instance, regarding, related.
type IsoKey = ([String; 5], [String; 7], [String; 7]);

/// A cached event: where the API server keeps it, when it was made, and its series.
#[derive(Clone, Debug)]
struct Cached {
    key: (String, String),
    event_time_ms: u64,
    /// (count, last observed), once an isomorphic event came.
    series: Option<(i32, u64)>,
}

fn ref_key(r: Option<&ObjectReference>) -> [String; 7] {
    let r = r.cloned().unwrap_or_default();
    [
        r.kind,
        r.namespace,
        r.name,
        r.uid,
        r.api_version,
        r.resource_version,
        r.field_path,
    ]
    .map(Option::unwrap_or_default)
}

fn micro(ms: u64) -> MicroTime {
    MicroTime(crate::time::to_time(ms).0)
}

impl EventStore {
    /// How many events were recorded (or counted again) so far.
    pub fn version(&self) -> u64 {
        self.rv
    }

    /// Record `e` at `now_ms`, from the controller process `host` (its pod name).
    pub fn record(&mut self, mut e: Recorded, host: &str, now_ms: u64) {
        match e.v1.take() {
            Some(v1) => {
                self.advance(now_ms);
                self.record_v1(e, v1, host, now_ms);
            }
            None => self.record_core(e, now_ms),
        }
    }

    fn record_core(&mut self, e: Recorded, now_ms: u64) {
        let time = crate::time::to_time(now_ms);
        let uid = e.object.uid.clone().unwrap_or_default();
        let corr = (uid, e.type_.clone(), e.reason.clone(), e.message.clone());
        if let Some(key) = self.seen.get(&corr).cloned() {
            let rv = self.bump();
            let ev = self.events.get_mut(&key).expect("seen events are stored");
            ev.count = Some(ev.count.unwrap_or(1) + 1);
            ev.last_timestamp = Some(time);
            ev.metadata.resource_version = Some(rv);
            return;
        }
        let mut ev = self.new_event(&e, now_ms);
        ev.count = Some(1);
        ev.first_timestamp = Some(time.clone());
        ev.last_timestamp = Some(time);
        ev.source = Some(EventSource {
            component: Some(e.controller.to_string()),
            host: None,
        });
        let key = self.store(ev);
        self.seen.insert(corr, key);
    }

    /// `recordToSink`: a new event, the first repeat of one (a series, written at once), or a
    /// later repeat (counted in the cache only).
    fn record_v1(&mut self, e: Recorded, v1: RecordedV1, host: &str, now_ms: u64) {
        let instance = format!("{}-{host}", e.controller);
        let regarding = reference(e.kind, e.api_version, &e.object);
        let iso: IsoKey = (
            [
                e.type_.clone(),
                v1.action.clone(),
                e.reason.clone(),
                e.controller.to_string(),
                instance.clone(),
            ],
            ref_key(Some(&regarding)),
            ref_key(v1.related.as_ref()),
        );
        if e.message.len() > NOTE_LENGTH_LIMIT {
            return;
        }
        self.start_recording(host, now_ms);
        let b = self.broadcasters.get_mut(host).expect("started above");
        if let Some(c) = b.cache.get_mut(&iso) {
            match &mut c.series {
                Some((count, last)) => {
                    *count += 1;
                    *last = now_ms;
                }
                None => {
                    c.series = Some((2, now_ms));
                    let c = c.clone();
                    self.write_series(&c);
                }
            }
            return;
        }
        let mut ev = self.new_event(&e, now_ms);
        ev.event_time = Some(micro(now_ms));
        ev.action = Some(v1.action);
        ev.related = v1.related;
        ev.reporting_component = Some(e.controller.to_string());
        ev.reporting_instance = Some(instance);
        ev.source = Some(EventSource::default());
        let key = self.store(ev);
        let cached = Cached {
            key,
            event_time_ms: now_ms,
            series: None,
        };
        if let Some(b) = self.broadcasters.get_mut(host) {
            b.cache.insert(iso, cached);
        }
    }

    /// The process `host` starts its events.k8s.io/v1 broadcaster at `now_ms` (its periodic
    /// flushes count from there), unless it has one.
    pub fn start_recording(&mut self, host: &str, now_ms: u64) {
        let b = self
            .broadcasters
            .entry(host.to_string())
            .or_insert_with(|| Broadcaster {
                cache: BTreeMap::new(),
                next_finish_ms: now_ms.saturating_add(FINISH_MS),
                next_refresh_ms: now_ms.saturating_add(REFRESH_MS),
            });
        self.next_tick_ms = self.next_tick_ms.min(b.next_finish_ms);
    }

    /// Run every broadcaster's periodic flushes due by `now_ms`, each at its own time.
    pub fn advance(&mut self, now_ms: u64) {
        if now_ms < self.next_tick_ms {
            return;
        }
        let hosts: Vec<String> = self.broadcasters.keys().cloned().collect();
        for host in hosts {
            loop {
                let b = &self.broadcasters[&host];
                let tick = b.next_finish_ms.min(b.next_refresh_ms);
                if tick > now_ms {
                    break;
                }
                if b.next_finish_ms == tick {
                    self.finish_series(&host, tick);
                }
                if self.broadcasters[&host].next_refresh_ms == tick {
                    self.refresh_series(&host, tick);
                }
            }
        }
        self.next_tick_ms = self
            .broadcasters
            .values()
            .map(|b| b.next_finish_ms.min(b.next_refresh_ms))
            .min()
            .unwrap_or(u64::MAX);
    }

    /// `finishSeries` at `at_ms`: a series quiet for `finishTime` is written and forgotten, a
    /// singleton older than that forgotten.
    fn finish_series(&mut self, host: &str, at_ms: u64) {
        let b = self.broadcasters.get_mut(host).expect("a live broadcaster");
        b.next_finish_ms = at_ms.saturating_add(FINISH_MS);
        let cutoff = at_ms.saturating_sub(FINISH_MS);
        let mut finished = Vec::new();
        b.cache.retain(|_, c| match c.series {
            Some((_, last)) if last < cutoff => {
                finished.push(c.clone());
                false
            }
            Some(_) => true,
            None => c.event_time_ms >= cutoff,
        });
        for c in finished {
            self.write_series(&c);
        }
    }

    /// `refreshExistingEventSeries` at `at_ms`: every series in the cache is written.
    fn refresh_series(&mut self, host: &str, at_ms: u64) {
        let b = self.broadcasters.get_mut(host).expect("a live broadcaster");
        b.next_refresh_ms = at_ms.saturating_add(REFRESH_MS);
        let series: Vec<Cached> = b
            .cache
            .values()
            .filter(|c| c.series.is_some())
            .cloned()
            .collect();
        for c in series {
            self.write_series(&c);
        }
    }

    /// `recordEvent` of a series: the stored event's `series` patched to the cache's count (a
    /// patch that changes nothing writes nothing).
    fn write_series(&mut self, c: &Cached) {
        let Some((count, last)) = c.series else {
            return;
        };
        let series = Some(EventSeries {
            count: Some(count),
            last_observed_time: Some(micro(last)),
        });
        if self.events.get(&c.key).is_none_or(|ev| ev.series == series) {
            return;
        }
        let rv = self.bump();
        let ev = self.events.get_mut(&c.key).expect("looked up above");
        ev.series = series;
        ev.metadata.resource_version = Some(rv);
    }

    /// The process `host` is gone: its broadcaster, cache and unwritten counts with it.
    pub fn stop_recording(&mut self, host: &str) {
        self.broadcasters.remove(host);
    }

    fn bump(&mut self) -> String {
        self.rv += 1;
        self.rv.to_string()
    }

    /// A new event about `e`'s object, named `<object>.<nanoseconds hex>` at `now_ms`.
    fn new_event(&mut self, e: &Recorded, now_ms: u64) -> Event {
        let time = crate::time::to_time(now_ms);
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
        Event {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(namespace),
                creation_timestamp: Some(time),
                ..Default::default()
            },
            involved_object: reference(e.kind, e.api_version, &e.object),
            type_: Some(e.type_.clone()),
            reason: Some(e.reason.clone()),
            message: Some(e.message.clone()),
            ..Default::default()
        }
    }

    fn store(&mut self, mut ev: Event) -> (String, String) {
        let rv = self.bump();
        ev.metadata.resource_version = Some(rv.clone());
        let key = (
            ev.metadata.namespace.clone().unwrap_or_default(),
            ev.metadata.name.clone().unwrap_or_default(),
        );
        self.created.insert(key.clone(), rv.parse().unwrap_or(0));
        self.events.insert(key.clone(), ev);
        key
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

    /// The version the event at (namespace, name) was created at; 0 for none.
    pub fn created_version(&self, namespace: &str, name: &str) -> u64 {
        let key = (namespace.to_string(), name.to_string());
        self.created.get(&key).copied().unwrap_or(0)
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
            controller: "leaderworkerset",
            v1: None,
        }
    }

    /// An events.k8s.io/v1 event about the LWS at resourceVersion `rv`.
    fn rec_v1(reason: &str, note: &str, rv: &str) -> Recorded {
        let mut r = rec(reason, note);
        r.object.resource_version = Some(rv.into());
        r.v1 = Some(RecordedV1 {
            action: "Update".into(),
            related: None,
        });
        r
    }

    fn series(s: &EventStore) -> Vec<(String, Option<i32>)> {
        s.list(None)
            .map(|e| {
                (
                    e.message.clone().unwrap(),
                    e.series.as_ref().and_then(|x| x.count),
                )
            })
            .collect()
    }

    fn at(ms: u64) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        crate::time::to_time(ms)
    }

    #[test]
    fn identical_events_fold_into_one_with_a_count() {
        let mut s = EventStore::default();
        s.record(
            rec("GroupsProgressing", "a"),
            "lws-controller-manager-1",
            1_000,
        );
        s.record(
            rec("GroupsProgressing", "a"),
            "lws-controller-manager-1",
            2_000,
        );
        s.record(
            rec("GroupsProgressing", "b"),
            "lws-controller-manager-1",
            2_000,
        );
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
        s.record(rec("A", "x"), "lws-controller-manager-1", 5);
        s.record(rec("B", "y"), "lws-controller-manager-1", 5);
        let names: Vec<_> = s
            .list(None)
            .map(|e| e.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names.len(), 2);
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| n.starts_with("vllm.")), "{names:?}");
    }

    #[test]
    fn a_core_event_names_its_recorder_as_source() {
        let mut s = EventStore::default();
        s.record(rec("A", "x"), "lws-controller-manager-1", 5);
        let e = s.list(None).next().unwrap();
        let source = e.source.as_ref().unwrap();
        assert_eq!(source.component.as_deref(), Some("leaderworkerset"));
        assert_eq!(e.reporting_component, None);
        assert_eq!(e.event_time, None);
    }

    #[test]
    fn a_v1_event_carries_action_related_and_reporter() {
        let mut s = EventStore::default();
        let mut r = rec_v1("CreatingRevision", "n", "7");
        r.v1.as_mut().unwrap().related = Some(ObjectReference {
            kind: Some("ControllerRevision".into()),
            name: Some("vllm-abc".into()),
            ..Default::default()
        });
        s.record(r, "lws-controller-manager-1", 5_000);
        let e = s.list(None).next().unwrap();
        assert_eq!(e.action.as_deref(), Some("Update"));
        assert_eq!(e.reporting_component.as_deref(), Some("leaderworkerset"));
        assert_eq!(
            e.reporting_instance.as_deref(),
            Some("leaderworkerset-lws-controller-manager-1")
        );
        assert_eq!(e.event_time, Some(micro(5_000)));
        assert_eq!(e.count, None);
        assert_eq!(e.first_timestamp, None);
        assert_eq!(e.source, Some(EventSource::default()));
        let related = e.related.as_ref().unwrap();
        assert_eq!(related.name.as_deref(), Some("vllm-abc"));
        assert_eq!(e.involved_object.resource_version.as_deref(), Some("7"));
    }

    #[test]
    fn v1_events_fold_by_object_version_not_by_note() {
        let mut s = EventStore::default();
        let host = "lws-controller-manager-1";
        // The same LWS version: the second note folds into the first event's series.
        s.record(rec_v1("GroupsProgressing", "first", "7"), host, 1_000);
        s.record(rec_v1("GroupsProgressing", "second", "7"), host, 2_000);
        // Another version of the LWS: a new event.
        s.record(rec_v1("GroupsProgressing", "third", "8"), host, 3_000);
        assert_eq!(
            series(&s),
            vec![("first".into(), Some(2)), ("third".into(), None)]
        );
        let e = s.list(None).next().unwrap();
        let last = e.series.as_ref().unwrap().last_observed_time.clone();
        assert_eq!(last, Some(micro(2_000)));
    }

    #[test]
    fn later_repeats_reach_the_server_when_the_series_finishes() {
        let mut s = EventStore::default();
        let host = "lws-controller-manager-1";
        for t in 0..4 {
            s.record(rec_v1("GroupsProgressing", "n", "7"), host, 1_000 + t);
        }
        // Counted in the cache only: the server has the series as first written.
        assert_eq!(series(&s), vec![("n".into(), Some(2))]);
        // The finish tick at 6 minutes after the first event: the series was observed less
        // than 6 minutes before it, so it stays open.
        s.advance(FINISH_MS + 1_000);
        assert_eq!(series(&s), vec![("n".into(), Some(2))]);
        // The next one, 12 minutes in: quiet for longer than 6 minutes, written and closed.
        s.advance(2 * FINISH_MS + 1_000);
        assert_eq!(series(&s), vec![("n".into(), Some(4))]);
        // Closed: the next isomorphic event starts a new event.
        s.record(
            rec_v1("GroupsProgressing", "n", "7"),
            host,
            2 * FINISH_MS + 2_000,
        );
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn the_refresh_writes_a_busy_series() {
        let mut s = EventStore::default();
        let host = "lws-controller-manager-1";
        // A repeat every 5 minutes keeps the series open through every finish tick.
        for i in 0..6 {
            s.record(rec_v1("GroupsProgressing", "n", "7"), host, i * 300_000);
        }
        assert_eq!(series(&s), vec![("n".into(), Some(2))]);
        // The refresh 30 minutes after the first event writes the cache's count.
        s.advance(REFRESH_MS - 1);
        assert_eq!(series(&s), vec![("n".into(), Some(2))]);
        s.advance(REFRESH_MS);
        assert_eq!(series(&s), vec![("n".into(), Some(6))]);
    }

    #[test]
    fn a_dead_process_loses_its_unwritten_counts() {
        let mut s = EventStore::default();
        let old = "lws-controller-manager-1";
        for t in 0..3 {
            s.record(rec_v1("GroupsProgressing", "n", "7"), old, 1_000 + t);
        }
        s.stop_recording(old);
        s.advance(10 * REFRESH_MS);
        assert_eq!(series(&s), vec![("n".into(), Some(2))]);
        // The next process has its own cache and instance: a new event.
        s.record(
            rec_v1("GroupsProgressing", "n", "7"),
            "lws-controller-manager-2",
            5_000,
        );
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn the_flushes_count_from_the_lease_and_no_op_writes_write_nothing() {
        let mut s = EventStore::default();
        let host = "lws-controller-manager-1";
        s.start_recording(host, 0);
        // Two isomorphic events 4 minutes after the lease: a series, written at once.
        s.record(rec_v1("GroupsProgressing", "n", "7"), host, 240_000);
        s.record(rec_v1("GroupsProgressing", "n", "7"), host, 240_001);
        let rv = s.version();
        // The finish tick 6 minutes after the lease: the series is younger than 6 minutes.
        s.advance(FINISH_MS);
        assert_eq!(s.version(), rv);
        // 12 minutes in: quiet for more than 6; written with the count it has (2, unchanged),
        // which writes nothing, and forgotten.
        s.advance(2 * FINISH_MS);
        assert_eq!(s.version(), rv);
        s.record(
            rec_v1("GroupsProgressing", "n", "7"),
            host,
            2 * FINISH_MS + 1,
        );
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn a_note_over_the_limit_is_dropped() {
        let mut s = EventStore::default();
        let long = "x".repeat(NOTE_LENGTH_LIMIT + 1);
        s.record(rec_v1("FailedCreate", &long, "7"), "h", 0);
        assert!(s.is_empty());
        s.record(rec_v1("FailedCreate", &long[1..], "7"), "h", 0);
        assert_eq!(s.len(), 1);
    }
}
