//! A watch of Kubernetes Events (`kubectl get events -w`, `kubectl events -w`, a client-go event
//! informer): the events recorded or counted again after the version it starts from, in the
//! order they were, `ADDED` for one created after that version (the first time the watch sends
//! it) and `MODIFIED` for a change to one the client has (a series' count going up), filtered by namespace and field selector as a list is. Events
//! have their own resourceVersions (`api/events.rs`), and an events list answers with the event
//! store's, so a client that lists then watches misses nothing. The store is read again only
//! when its version moved; no bookmarks and no 410: events are never compacted away here.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use tokio::sync::mpsc::Sender;

use super::events::{field, field_selector, rendered, table, Form};
use super::query::{bad_request, Reply};
use super::stream::{queue, Budget, Line};
use crate::api::ApiServer;

pub struct EventWatcher {
    form: Form,
    namespace: Option<String>,
    fields: Vec<(&'static str, String, bool)>,
    table: bool,
    /// The event store's version this watch has sent everything up to.
    cursor: u64,
    /// The version the watch started from: an event created after it is new to the client.
    start: u64,
    /// The events sent as ADDED: a later change to one is MODIFIED.
    added: BTreeSet<(String, String)>,
    /// The event store's version at the last pump: nothing to read while it stays.
    seen_version: Option<u64>,
    tx: Sender<Line>,
    budget: Budget,
}

/// What a watch request on events sets up.
pub struct Request<'a> {
    pub form: Form,
    pub namespace: Option<&'a str>,
    pub query: &'a std::collections::BTreeMap<String, String>,
    pub table: bool,
    pub budget: Budget,
}

/// Start a watch: from the `resourceVersion` given (an events list's), else from now with the
/// events that exist sent as `ADDED` first, as a watch without a version starts.
pub fn start(api: &ApiServer, r: Request<'_>) -> Result<(EventWatcher, Reply), Reply> {
    let selector = r.query.get("fieldSelector").map_or("", String::as_str);
    let fields = field_selector(r.form, selector).map_err(bad_request)?;
    let timeout_s = super::query::watch_timeout(r.query)?;
    let from = match r.query.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => None,
        Some(s) => match s.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => return Err(bad_request(format!("invalid resourceVersion {s:?}"))),
        },
    };
    let (tx, rx) = tokio::sync::mpsc::channel(super::watch::WATCH_BUFFER);
    let mut w = EventWatcher {
        form: r.form,
        namespace: r.namespace.map(str::to_string),
        fields,
        table: r.table,
        cursor: from.unwrap_or(0),
        start: from.unwrap_or(0),
        added: BTreeSet::new(),
        seen_version: None,
        tx,
        budget: r.budget,
    };
    w.pump(api);
    Ok((w, Reply::Watch { rx, timeout_s }))
}

fn version(e: &k8s_openapi::api::core::v1::Event) -> u64 {
    let rv = e.metadata.resource_version.as_deref().unwrap_or("0");
    rv.parse().unwrap_or(0)
}

fn key(e: &k8s_openapi::api::core::v1::Event) -> (String, String) {
    let m = &e.metadata;
    let part = |s: &Option<String>| s.clone().unwrap_or_default();
    (part(&m.namespace), part(&m.name))
}

impl EventWatcher {
    /// Send what changed since the cursor, oldest first. `Closed` when the client went away or
    /// fell too far behind.
    pub fn pump(&mut self, api: &ApiServer) -> bool {
        if self.tx.is_closed() {
            return false;
        }
        if self.seen_version == Some(api.events.version()) {
            return true;
        }
        self.seen_version = Some(api.events.version());
        let namespace = self.namespace.clone();
        let mut fresh: Vec<_> = api
            .events
            .list(namespace.as_deref())
            .filter(|e| version(e) > self.cursor)
            .collect();
        fresh.sort_by_key(|e| version(e));
        for e in fresh {
            self.cursor = version(e);
            let obj = rendered(e, self.form);
            let wanted = self.fields.iter();
            if !wanted
                .clone()
                .all(|(p, v, eq)| (field(&obj, p) == *v) == *eq)
            {
                continue;
            }
            let (ns, name) = key(e);
            let created = api.events.created_version(&ns, &name);
            let new_to_client = created > self.start && self.added.insert((ns, name));
            let ty = if new_to_client { "ADDED" } else { "MODIFIED" };
            if !self.send(ty, obj, api.now_ms()) {
                return false;
            }
        }
        true
    }

    fn send(&mut self, ty: &str, obj: Value, now_ms: u64) -> bool {
        let object = if self.table {
            let meta = json!({"resourceVersion": self.cursor.to_string()});
            table(self.form, &[obj], now_ms, meta)
        } else {
            obj
        };
        let text = json!({"type": ty, "object": object}).to_string();
        queue(&self.tx, &self.budget, text)
    }
}
