//! Watches over the API server's per-kind watch logs (apiserver
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go` for the stream format, one JSON
//! `{"type","object"}` per line; `staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go`
//! for the slow-consumer rule).
//!
//! A watcher is a cursor (the last resourceVersion sent) plus a bounded channel to its HTTP
//! stream. The core pushes with `try_send` only: a watcher whose buffer is full is closed, as the
//! cacher closes an unresponsive watcher, and the client re-lists; the simulation never waits.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::watch::Cursor;
use serde_json::{json, Value};
use tokio::sync::mpsc::Sender;

use crate::api::{with_kind, ApiServer, EventType, Kind, KindId, Selector};

use super::query::{fields_match, status_value, FieldReq};
use super::resources::of_kind;
use super::stream::{queue, Budget, Line};
use super::table;

/// Events a watch may have in flight before it counts as lagging and is closed.
pub const WATCH_BUFFER: usize = 4096;
/// Simulated time between bookmarks to a watch that asked for them.
pub const BOOKMARK_EVERY_MS: u64 = 60_000;
pub struct Watcher {
    pub kind: KindId,
    pub namespace: Option<String>,
    pub labels: Selector,
    pub fields: Vec<FieldReq>,
    pub bookmarks: bool,
    pub table: bool,
    /// Send each object as `PartialObjectMetadata` (`table::wants_metadata`).
    pub metadata_only: bool,
    /// The release's LWS printer columns (`ApiServer::lws_printer_columns`), for a table.
    pub lws_printer_columns: bool,
    pub cursor: u64,
    pub last_bookmark_ms: u64,
    pub headers_sent: bool,
    /// This watch's place in its kind's watch log, registered with the log so compaction keeps
    /// what it has not sent yet (set at the first push).
    pub position: Option<Cursor>,
    /// With a label or field selector: the objects (namespace, name) whose last state this
    /// watch saw match, with that state, so one that starts matching is ADDED and one that
    /// stops is DELETED with its previous state, as the apiserver's cacher answers
    /// (`cache_watcher.go`, `convertToWatchEvent`). `None` without a selector: every event
    /// passes as it is.
    pub matching: Option<BTreeMap<(String, String), Value>>,
    pub tx: Sender<Line>,
    /// This watch's queued bytes and every watch's (`WATCH_BYTES_MAX`, `WATCHES_BYTES_MAX`).
    pub budget: Budget,
}

/// What happened to a watcher during a push.
#[derive(PartialEq, Eq)]
pub enum Outcome {
    Open,
    /// The client went away, or lagged and was dropped.
    Closed,
}

fn type_name(ty: EventType) -> &'static str {
    match ty {
        EventType::Added => "ADDED",
        EventType::Modified => "MODIFIED",
        EventType::Deleted => "DELETED",
    }
}

fn key_of(obj: &Value) -> (String, String) {
    let field = |f: &str| {
        obj.pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (field("namespace"), field("name"))
}

impl Watcher {
    /// Whether this watch filters by labels or fields (and so tracks `matching`).
    pub fn selective(&self) -> bool {
        !self.labels.is_everything() || !self.fields.is_empty()
    }

    /// A selective watch resumed from resourceVersion `n`: which objects matched at `n`, so a
    /// change after `n` is judged against that (a client lists at `n`, then watches from it).
    /// An object's state at `n` is its last log entry at or before `n`; one whose first entry
    /// after `n` is its creation did not exist; one with no entry either side is as it is now
    /// (unchanged since, or older than what the log keeps: then its current state stands in).
    pub fn seed_matching<K: Kind>(&mut self, api: &ApiServer, n: u64) {
        let log = K::store(api).log();
        let split = log.partition_point(|e| e.rv <= n);
        let mut at_n: BTreeMap<(String, String), Option<Value>> = BTreeMap::new();
        let kept = &log[log.first_index()..];
        for e in &kept[..split.saturating_sub(log.first_index())] {
            let v = serde_json::to_value(&*e.obj).expect("stored objects serialize");
            at_n.insert(key_of(&v), (e.ty != EventType::Deleted).then_some(v));
        }
        let mut created_after = BTreeSet::new();
        let mut changed_after = BTreeSet::new();
        for e in &log[split..] {
            let key = (
                e.obj.meta().namespace.clone().unwrap_or_default(),
                e.obj.meta().name.clone().unwrap_or_default(),
            );
            if changed_after.insert(key.clone()) && e.ty == EventType::Added {
                created_after.insert(key);
            }
        }
        for o in api.list::<K>(self.namespace.as_deref(), &Selector::everything()) {
            let v = serde_json::to_value(&*o).expect("stored objects serialize");
            let key = key_of(&v);
            if !at_n.contains_key(&key) && !created_after.contains(&key) {
                at_n.insert(key, Some(v));
            }
        }
        for v in at_n.into_values().flatten() {
            if self.matches(&v) {
                self.note_match(&v);
            }
        }
    }

    /// Remember that `obj` (an object this watch has just listed or sent) matches.
    pub fn note_match(&mut self, obj: &Value) {
        if let Some(m) = &mut self.matching {
            m.insert(key_of(obj), obj.clone());
        }
    }

    /// The event a log event becomes for this watch, if it is sent at all: the cacher's rule
    /// over whether the previous and the current state match. A DELETED for an object that
    /// stopped matching carries its previous state at the event's resourceVersion.
    fn convert(&mut self, ty: EventType, obj: Value) -> Option<(&'static str, Value)> {
        if self.matching.is_none() {
            // No selector to start or stop matching: every event passes as it is (a namespace
            // filter cannot change, deletions included).
            return self.matches(&obj).then_some((type_name(ty), obj));
        }
        let now = ty != EventType::Deleted && self.matches(&obj);
        let key = key_of(&obj);
        // A deleted object's last state is its previous one.
        let last_state = ty == EventType::Deleted && self.matches(&obj);
        let m = self.matching.as_mut().expect("checked above");
        let before = m.remove(&key);
        if now {
            m.insert(key, obj.clone());
        }
        match (before, now) {
            (None, true) if !last_state => Some(("ADDED", obj)),
            (_, true) => Some((type_name(ty), obj)),
            (None, false) if last_state => Some(("DELETED", obj)),
            (Some(mut previous), false) => {
                if ty == EventType::Deleted {
                    return Some(("DELETED", obj));
                }
                let rv = obj.pointer("/metadata/resourceVersion").cloned();
                if let (Some(rv), Some(meta)) = (rv, previous.get_mut("metadata")) {
                    meta["resourceVersion"] = rv;
                }
                Some(("DELETED", previous))
            }
            (None, false) => None,
        }
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let meta = obj.get("metadata");
        let ns = meta
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if self.namespace.as_deref().is_some_and(|n| n != ns) {
            return false;
        }
        let labels = meta
            .and_then(|m| m.get("labels"))
            .and_then(|l| serde_json::from_value(l.clone()).ok());
        self.labels.matches(labels.as_ref()) && fields_match(&self.fields, obj)
    }

    /// Queue a line for the client (`stream::queue`): `Closed` when it lags or went away.
    fn send(&mut self, text: String) -> Outcome {
        if queue(&self.tx, &self.budget, text) {
            Outcome::Open
        } else {
            Outcome::Closed
        }
    }

    /// Send one event of `obj`.
    pub fn event(&mut self, ty: &str, obj: Value, now_ms: u64) -> Outcome {
        let object = if self.table {
            let rv = obj
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            let t = table::table(
                self.kind,
                self.lws_printer_columns,
                &[obj],
                now_ms,
                json!({"resourceVersion": rv}),
                !self.headers_sent,
            );
            self.headers_sent = true;
            t
        } else if self.metadata_only {
            table::partial(&obj)
        } else {
            obj
        };
        self.send(json!({"type": ty, "object": object}).to_string())
    }

    /// A BOOKMARK at `rv`: an object of the watched kind carrying only its resourceVersion.
    pub fn bookmark(&mut self, rv: u64, initial_events_end: bool) -> Outcome {
        let r = of_kind(self.kind);
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = if self.metadata_only {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
        } else {
            json!({"kind": r.kind.as_str(), "apiVersion": r.group_version(), "metadata": meta})
        };
        self.send(json!({"type": "BOOKMARK", "object": obj}).to_string())
    }

    /// A watch from a resourceVersion the server has not reached: one ERROR event with the
    /// 504 "Too large resource version" Status (the cacher's answer once its wait runs out).
    pub fn too_large(&mut self, status: Value) -> Outcome {
        self.send(json!({"type": "ERROR", "object": status}).to_string())
    }

    /// A watch from a compacted resourceVersion: one ERROR event with a 410 `Expired` Status,
    /// as the cacher's `newErrWatcher` sends.
    pub fn expired(&mut self, rv: u64, oldest: u64) -> Outcome {
        let msg = format!("too old resource version: {rv} ({oldest})");
        let st = status_value(410, "Expired", &msg, None);
        self.send(json!({"type": "ERROR", "object": st}).to_string())
    }

    /// Push everything in the kind's log after the cursor; a bookmark when one is due.
    pub fn pump(&mut self, api: &ApiServer) -> Outcome {
        if self.tx.is_closed() {
            return Outcome::Closed;
        }
        let now = api.now_ms();
        let r = with_kind!(self.kind, K => self.pump_kind::<K>(api));
        if r == Outcome::Closed {
            return r;
        }
        if self.bookmarks && now >= self.last_bookmark_ms + BOOKMARK_EVERY_MS {
            self.last_bookmark_ms = now;
            self.cursor = self.cursor.max(api.resource_version());
            return self.bookmark(self.cursor, false);
        }
        Outcome::Open
    }

    fn pump_kind<K: Kind>(&mut self, api: &ApiServer) -> Outcome {
        let log = K::store(api).log();
        let start = match &self.position {
            Some(c) => c.get(),
            None => {
                let at = log.partition_point(|e| e.rv <= self.cursor);
                self.position = Some(log.reader(at));
                at
            }
        };
        if log.expired(start) || self.cursor < log.compacted_rv() {
            // Fell more than the log's window behind, or asked for a version older than what
            // compaction dropped (it would miss events): 410, and the client relists.
            let oldest = log.get(log.first_index()).map_or(0, |e| e.rv);
            self.expired(self.cursor, oldest);
            return Outcome::Closed;
        }
        if let Some(c) = &self.position {
            c.set(log.len());
        }
        for e in &log[start..] {
            self.cursor = e.rv;
            let obj = serde_json::to_value(&*e.obj).expect("stored objects serialize");
            let Some((ty, obj)) = self.convert(e.ty, obj) else {
                continue;
            };
            if self.event(ty, obj, e.at_ms) == Outcome::Closed {
                return Outcome::Closed;
            }
        }
        Outcome::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::stream::{WATCHES_BYTES_MAX, WATCH_BYTES_MAX};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn watcher(budget: Budget) -> (Watcher, tokio::sync::mpsc::Receiver<Line>) {
        let (tx, rx) = tokio::sync::mpsc::channel(WATCH_BUFFER);
        let w = Watcher {
            kind: KindId::Pod,
            namespace: None,
            labels: Selector::everything(),
            fields: Vec::new(),
            bookmarks: false,
            table: false,
            metadata_only: false,
            lws_printer_columns: false,
            cursor: 0,
            last_bookmark_ms: 0,
            headers_sent: false,
            position: None,
            matching: None,
            tx,
            budget,
        };
        (w, rx)
    }

    /// A client that does not read holds at most its watch's byte budget (and all clients
    /// together every watch's): the watch is closed instead of queueing more; what a client
    /// takes, or a dropped stream, gives the bytes back.
    #[test]
    fn a_watch_that_is_not_read_is_closed_at_its_byte_budget() {
        let all: Arc<AtomicUsize> = Arc::default();
        let (mut w, mut rx) = watcher([Arc::default(), all.clone()]);
        let big = "x".repeat(1 << 20);
        let mut sent = 0;
        while w.send(big.clone()) == Outcome::Open {
            sent += 1;
        }
        assert_eq!(sent, WATCH_BYTES_MAX >> 20);
        assert_eq!(all.load(Ordering::Relaxed), WATCH_BYTES_MAX);
        let line = rx.try_recv().expect("queued");
        assert_eq!(line.into_text().len(), 1 << 20);
        assert_eq!(all.load(Ordering::Relaxed), WATCH_BYTES_MAX - (1 << 20));
        drop(rx);
        assert_eq!(all.load(Ordering::Relaxed), 0);
        // Every watch's budget: a second watch is closed when all of them are full.
        all.store(WATCHES_BYTES_MAX, Ordering::Relaxed);
        let (mut other, _rx) = watcher([Arc::default(), all.clone()]);
        assert!(other.send("{}".into()) == Outcome::Closed);
    }
}
