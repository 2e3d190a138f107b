//! A lagging view of one kind: a cursor into the API server's watch log and the cache it feeds
//! (client-go `tools/cache` reflector + store @32ce75a7; controller-runtime `pkg/cache`). Each consumer has its own, so
//! caches of different kinds and different actors are skewed, as in a real cluster.
//!
//! The cache keeps the answer of every equality selector some list has asked for (`views.rs`)
//! and an index by controller owner UID, so a list by labels or by owner costs the size of the
//! answer, not of the namespace. (client-go scans the namespace; the result is the same, only
//! our cost differs.)
//!
//! Simplification (docs/fidelity.md): the initial list is consistent (WatchList, client-go
//! v0.35+) and the lag is fixed per informer. An informer whose cursor the server's log
//! compaction passed (`410 Gone`, `api::watch`) relists, as client-go's reflector does: its
//! cache is replaced by the server's current objects, and its handlers get the difference.
//!
//! Two perturbations serve `lws-sim explore` (Sieve's patterns): an event can be *held back*
//! until the next event of the same object, so the consumer never observes that intermediate
//! state (unobserved state); and, when asked to, the informer remembers each object's previous
//! version so a read can be served from it (stale state).

mod views;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use views::Views;

use crate::api::slots::{Slot, Slots};
use crate::api::{ApiServer, Cursor, EventType, Expired, Key, KeyRef, Kind, Selector, Shared};
use crate::lookup::LookupMap;

/// One change delivered to a consumer. `old` is the cached object before the change.
#[derive(Debug)]
pub struct Delta<K> {
    pub ty: EventType,
    pub old: Option<Shared<K>>,
    pub obj: Shared<K>,
}

/// A held-back event has been delivered late after this long with no newer event of its
/// object: a real watch coalesces states, it does not lose the last one.
pub const HOLD_MAX_MS: u64 = 30_000;

pub struct Informer<K> {
    cursor: Cursor,
    lag_ms: u64,
    cache: Slots<K>,
    /// The answer of every equality selector some list has asked for, kept up to date
    /// (`views.rs`); built on that first list.
    views: RefCell<Views>,
    /// Each controller UID's objects (`ORPHANS`: those without one), in key order. Only
    /// looked up by UID, so hashed.
    by_owner: LookupMap<String, BTreeMap<Key, Slot>>,
    last_rv: u64,
    /// A held-back event: its object's key, the event, and when it is delivered anyway.
    held: Option<Held<K>>,
    /// Relists after falling behind the server's log compaction.
    relists: u64,
    /// Each object's version before its latest change (`None`: it did not exist), kept only
    /// when stale reads may be asked for.
    previous: Option<BTreeMap<Key, Option<Shared<K>>>>,
}

struct Held<K> {
    key: Key,
    ty: EventType,
    obj: Shared<K>,
    due_ms: u64,
}

fn key_ref<K: Kind>(o: &K) -> (&str, &str) {
    crate::api::meta_key(o.meta())
}

/// The owner index's key of an object: its controller's UID, or `ORPHANS` when it has none.
fn owner_of<K: Kind>(o: &K) -> &str {
    let controller = o
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str());
    controller.unwrap_or(ORPHANS)
}

/// The owner index of a fresh cache: its objects grouped by owner (found by hash; each group
/// gathered in key order) and each group's map built from its sorted keys at once, instead of
/// one search of the ordered group per object.
fn owner_index<K: Kind>(cache: &Slots<K>) -> LookupMap<String, BTreeMap<Key, Slot>> {
    let mut groups: Vec<(&str, Vec<(Key, Slot)>)> = Vec::new();
    let mut group_of: LookupMap<&str, usize> = LookupMap::default();
    for (key, slot) in cache.slots() {
        let owner = owner_of(&**cache.at(slot));
        let g = *group_of.entry(owner).or_insert_with(|| {
            groups.push((owner, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push((key.clone(), slot));
    }
    let mut index = LookupMap::default();
    for (owner, members) in groups {
        index.insert(owner.to_string(), members.into_iter().collect());
    }
    index
}

/// The owner index's key for objects without a controller (no UID is empty).
const ORPHANS: &str = "";

impl<K: Kind> Informer<K> {
    /// Start with a consistent list of everything the server holds now.
    pub fn start(api: &ApiServer, lag_ms: u64) -> Informer<K> {
        let store = K::store(api);
        // The listing, as the store holds it (no view and no previous version is kept yet):
        // a copy compares no keys, where inserting object by object searched for each.
        let cache = store.slots().clone();
        Informer {
            cursor: store.log().reader(store.log().len()),
            lag_ms,
            by_owner: owner_index(&cache),
            cache,
            views: RefCell::default(),
            last_rv: api.resource_version(),
            held: None,
            relists: 0,
            previous: None,
        }
    }

    fn unindex_owner(&mut self, key: &dyn KeyRef, o: &K) {
        let uid = owner_of(o);
        if let Some(s) = self.by_owner.get_mut(uid) {
            s.remove(key);
            if s.is_empty() {
                self.by_owner.remove(uid);
            }
        }
    }

    /// Remember previous versions from now on, for `stale_get` and `stale_list`.
    pub fn track_previous(&mut self) {
        self.previous.get_or_insert_with(BTreeMap::new);
    }

    fn remember(&mut self, key: &dyn KeyRef, old: Option<Shared<K>>) {
        if let Some(p) = self.previous.as_mut() {
            let (ns, name) = key.parts();
            p.insert((ns.to_string(), name.to_string()), old);
        }
    }

    /// Cache `o` under its own key. Returns the version it replaced.
    fn insert(&mut self, o: Shared<K>) -> Option<Shared<K>> {
        let key = key_ref(&*o);
        let (slot, old) = self.cache.insert(&key, o.clone());
        self.remember(&key, old.clone());
        if let Some(old) = &old {
            // Most changes (status, resourceVersion) keep labels and owner: the object changed
            // in its slot, and the indexes stay.
            let (om, nm) = (old.meta(), o.meta());
            let same_owner = owner_of(&**old) == owner_of(&*o);
            // Labels matter only to views; most informers have none.
            if !self.views.get_mut().is_empty() && om.labels != nm.labels {
                self.views
                    .get_mut()
                    .on_change(&key, slot, om.labels.as_ref(), nm.labels.as_ref());
            }
            if same_owner {
                return Some(old.clone());
            }
            self.unindex_owner(&key, old);
        } else {
            self.views
                .get_mut()
                .on_change(&key, slot, None, o.meta().labels.as_ref());
        }
        let member = (key.0.to_string(), key.1.to_string());
        let owner = owner_of(&*o);
        match self.by_owner.get_mut(owner) {
            Some(members) => {
                members.insert(member, slot);
            }
            None => {
                self.by_owner
                    .insert(owner.to_string(), BTreeMap::from([(member, slot)]));
            }
        }
        old
    }

    fn remove(&mut self, key: &dyn KeyRef) -> Option<Shared<K>> {
        let (slot, old) = self.cache.remove(key)?;
        self.views
            .get_mut()
            .on_change(key, slot, old.meta().labels.as_ref(), None);
        self.unindex_owner(key, &old);
        self.remember(key, Some(old.clone()));
        Some(old)
    }

    /// The initial list as `Added` deltas (what a fresh informer hands its handlers).
    pub fn initial_deltas(&self) -> Vec<Delta<K>> {
        self.cache
            .values()
            .map(|o| Delta {
                ty: EventType::Added,
                old: None,
                obj: o.clone(),
            })
            .collect()
    }

    /// When the next undelivered event becomes visible to this consumer.
    pub fn next_due_ms(&self, api: &ApiServer) -> Option<u64> {
        let next = match K::store(api).log().read(self.cursor.get()) {
            Ok(e) => e.map(|e| e.at_ms.saturating_add(self.lag_ms)),
            Err(Expired) => Some(api.now_ms()),
        };
        let held = self.held.as_ref().map(|h| h.due_ms);
        next.into_iter().chain(held).min()
    }

    /// How many times this informer relisted after an `Expired` watch.
    pub fn relists(&self) -> u64 {
        self.relists
    }

    /// `410 Gone`: replace the cache by the server's current objects (the reflector's relist and
    /// `Replace`), handing the handlers an update for each object still there, an add for each
    /// new one and a delete for each one gone, in key order; a held event is dropped (the
    /// list supersedes it).
    fn relist(&mut self, api: &ApiServer) -> Vec<Delta<K>> {
        self.relists += 1;
        self.held = None;
        let store = K::store(api);
        self.cursor.set(store.log().len());
        self.last_rv = api.resource_version();
        let gone: Vec<Key> = self
            .cache
            .keys()
            .filter(|k| store.get_key(k).is_none())
            .cloned()
            .collect();
        let mut out = Vec::new();
        for key in gone {
            if let Some(old) = self.remove(&key) {
                out.push(Delta {
                    ty: EventType::Deleted,
                    old: Some(old.clone()),
                    obj: old,
                });
            }
        }
        for (_, obj) in store.iter() {
            let old = self.insert(obj.clone());
            let ty = if old.is_some() {
                EventType::Modified
            } else {
                EventType::Added
            };
            out.push(Delta {
                ty,
                old,
                obj: obj.clone(),
            });
        }
        out
    }

    /// Deliver every event visible at `now_ms`, in resourceVersion order, updating the cache.
    pub fn poll(&mut self, api: &ApiServer, now_ms: u64) -> Vec<Delta<K>> {
        self.poll_holding(api, now_ms, &mut None)
    }

    /// `poll`, counting delivered events down in `hold`: the event that brings it to zero is
    /// held back (explore's unobserved-state pattern), and dropped when a newer event of the
    /// same object arrives, or delivered late after `HOLD_MAX_MS`.
    pub fn poll_holding(
        &mut self,
        api: &ApiServer,
        now_ms: u64,
        hold: &mut Option<u64>,
    ) -> Vec<Delta<K>> {
        let log = K::store(api).log();
        if log.expired(self.cursor.get()) {
            return self.relist(api);
        }
        let mut out = Vec::new();
        while let Some(e) = log.get(self.cursor.get()) {
            if e.at_ms.saturating_add(self.lag_ms) > now_ms {
                break;
            }
            assert!(
                e.rv > self.last_rv,
                "watch went back: rv {} after {}",
                e.rv,
                self.last_rv
            );
            self.last_rv = e.rv;
            self.cursor.advance();
            if let Some(n) = hold.as_mut() {
                *n -= 1;
                if *n == 0 {
                    *hold = None;
                    self.held = Some(Held {
                        key: crate::api::key_of(&*e.obj),
                        ty: e.ty,
                        obj: e.obj.clone(),
                        due_ms: now_ms.saturating_add(HOLD_MAX_MS),
                    });
                    continue;
                }
            }
            if self
                .held
                .as_ref()
                .is_some_and(|h| (h.key.0.as_str(), h.key.1.as_str()) == key_ref(&*e.obj))
            {
                self.held = None;
            }
            out.push(self.apply(e.ty, e.obj.clone()));
        }
        if let Some(h) = self.held.take() {
            if h.due_ms <= now_ms {
                out.push(self.apply(h.ty, h.obj));
            } else {
                self.held = Some(h);
            }
        }
        out
    }

    fn apply(&mut self, ty: EventType, obj: Shared<K>) -> Delta<K> {
        let old = match ty {
            EventType::Deleted => self.remove(&key_ref(&*obj)),
            _ => self.insert(obj.clone()),
        };
        Delta { ty, old, obj }
    }

    /// `get` as of each object's previous version (`track_previous` must be on). A creation is
    /// not undone: the handler that queued this reconcile may have seen it, and a stale view
    /// older than that is the time travel of an HA apiserver after a restart, not a lag.
    /// Deletions are: a deleted object is served as it last was.
    pub fn stale_get(&self, namespace: &str, name: &str) -> Option<&Shared<K>> {
        let key: &dyn KeyRef = &(namespace, name);
        match self.previous.as_ref().and_then(|p| p.get(key)) {
            Some(Some(previous)) => Some(previous),
            _ => self.cache.get(key),
        }
    }

    /// `list` as of each object's previous version: a scan of the namespace, for the rare
    /// reconcile explore serves stale.
    pub fn stale_list(&self, namespace: &str, selector: &Selector) -> Vec<&Shared<K>> {
        fn in_ns<'a, V>(
            m: &'a BTreeMap<Key, V>,
            namespace: &'a str,
        ) -> impl Iterator<Item = Key> + 'a {
            m.range((namespace.to_string(), String::new())..)
                .take_while(move |((ns, _), _)| ns == namespace)
                .map(|(k, _)| k.clone())
        }
        let mut keys: BTreeSet<Key> = self
            .cache
            .in_namespace(namespace)
            .map(|(k, _)| k.clone())
            .collect();
        if let Some(p) = &self.previous {
            keys.extend(in_ns(p, namespace));
        }
        keys.iter()
            .filter_map(|(ns, name)| self.stale_get(ns, name))
            .filter(|o| selector.matches(o.meta().labels.as_ref()))
            .collect()
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<&Shared<K>> {
        self.cache.get(&(namespace, name) as &dyn KeyRef)
    }

    /// Objects in `namespace` matching `selector`, in key order. An equality selector is served
    /// from the label index through its rarest pair.
    pub fn list(&self, namespace: &str, selector: &Selector) -> Vec<&Shared<K>> {
        let Some(pairs) = selector.equalities() else {
            return self
                .cache
                .in_namespace(namespace)
                .map(|(_, o)| o)
                .filter(|o| selector.matches(o.meta().labels.as_ref()))
                .collect();
        };
        let pairs = views::normal(&pairs);
        if let Some(members) = self.views.borrow().get(namespace, &pairs) {
            return members.values().map(|&slot| self.cache.at(slot)).collect();
        }
        // The first list by this selector: one scan of the namespace files its view.
        let members: BTreeMap<Key, Slot> = self
            .cache
            .slots_in_namespace(namespace)
            .filter(|&(_, slot)| selector.matches(self.cache.at(slot).meta().labels.as_ref()))
            .map(|(k, slot)| (k.clone(), slot))
            .collect();
        let out = members.values().map(|&slot| self.cache.at(slot)).collect();
        self.views.borrow_mut().add(namespace, &pairs, members);
        out
    }

    /// Objects whose controller owner has this UID, in key order.
    pub fn owned_by(&self, uid: &str) -> Vec<&Shared<K>> {
        if uid == ORPHANS {
            return Vec::new();
        }
        self.by_owner
            .get(uid)
            .map(|keys| keys.values().map(|&slot| self.cache.at(slot)).collect())
            .unwrap_or_default()
    }

    /// Objects of `namespace` without a controller, in key order: what a controller may adopt.
    pub fn orphans_in(&self, namespace: &str) -> Vec<&Shared<K>> {
        self.by_owner
            .get(ORPHANS)
            .map(|keys| {
                keys.iter()
                    .filter(|((ns, _), _)| ns == namespace)
                    .map(|(_, &slot)| self.cache.at(slot))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn all(&self) -> impl Iterator<Item = &Shared<K>> {
        self.cache.values()
    }

    pub fn len(&self) -> usize {
        self.cache.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cache.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::FeatureGates;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(name: &str, app: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                labels: Some([("app".to_string(), app.to_string())].into()),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::core::v1::PodSpec {
                containers: vec![k8s_openapi::api::core::v1::Container {
                    name: "c".into(),
                    image: Some("app:v1".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_lagging_informer_sees_writes_only_after_its_lag() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        let mut inf = Informer::<Pod>::start(&api, 100);
        api.create("t", pod("a", "x")).unwrap();
        assert!(inf.poll(&api, 99).is_empty());
        assert!(
            inf.get("default", "a").is_none(),
            "the cache is stale until the lag passes"
        );
        assert_eq!(inf.next_due_ms(&api), Some(100));
        assert_eq!(inf.poll(&api, 100).len(), 1);
        assert!(inf.get("default", "a").is_some());
    }

    #[test]
    fn label_index_follows_relabels_and_deletes() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        let mut inf = Informer::<Pod>::start(&api, 0);
        api.create("t", pod("a", "x")).unwrap();
        api.create("t", pod("b", "y")).unwrap();
        let names = |inf: &Informer<Pod>, app: &str| -> Vec<String> {
            inf.list("default", &Selector::labels([("app", app)]))
                .iter()
                .map(|p| p.metadata.name.clone().unwrap())
                .collect()
        };
        inf.poll(&api, 0);
        assert_eq!(names(&inf, "x"), ["a"]);
        api.merge_patch::<Pod>(
            "t",
            "default",
            "b",
            &serde_json::json!({"metadata": {"labels": {"app": "x"}}}),
        )
        .unwrap();
        inf.poll(&api, 0);
        assert_eq!(names(&inf, "x"), ["a", "b"]);
        assert!(names(&inf, "y").is_empty());
        api.delete::<Pod>("t", "default", "a", &crate::api::DeleteOptions::default())
            .unwrap();
        inf.poll(&api, 0);
        assert_eq!(names(&inf, "x"), ["b"]);
    }

    #[test]
    fn an_index_built_by_a_late_first_list_answers_as_a_scan_would() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        let mut inf = Informer::<Pod>::start(&api, 0);
        for i in 0..12 {
            let mut p = pod(&format!("p{i:02}"), if i % 2 == 0 { "x" } else { "y" });
            let labels = p.metadata.labels.get_or_insert_with(Default::default);
            labels.insert("tier".into(), (i % 3).to_string());
            api.create("t", p).unwrap();
        }
        relabel(&mut api, "p04", "y");
        api.delete::<Pod>("t", "default", "p06", &crate::api::DeleteOptions::default())
            .unwrap();
        inf.poll(&api, 0);
        let listed = |inf: &Informer<Pod>, pairs: &[(&str, &str)]| -> Vec<String> {
            let sel = Selector::labels(pairs.iter().copied());
            inf.list("default", &sel)
                .iter()
                .map(|p| p.metadata.name.clone().unwrap())
                .collect()
        };
        let scanned = |inf: &Informer<Pod>, pairs: &[(&str, &str)]| -> Vec<String> {
            let sel = Selector::labels(pairs.iter().copied());
            inf.all()
                .filter(|p| sel.matches(p.metadata.labels.as_ref()))
                .map(|p| p.metadata.name.clone().unwrap())
                .collect()
        };
        // The first list on "tier" builds its index from the cache; both pairs then answer from
        // indexes, the rarer one first.
        for pairs in [
            &[("tier", "0")][..],
            &[("app", "x"), ("tier", "0")],
            &[("tier", "1"), ("app", "y")],
            &[("app", "z")],
        ] {
            assert_eq!(listed(&inf, pairs), scanned(&inf, pairs), "{pairs:?}");
        }
        assert_eq!(listed(&inf, &[("app", "x"), ("tier", "0")]), ["p00"]);
        // Changes after the indexes exist keep them true.
        relabel(&mut api, "p00", "y");
        inf.poll(&api, 0);
        assert!(listed(&inf, &[("app", "x"), ("tier", "0")]).is_empty());
        assert_eq!(
            listed(&inf, &[("tier", "0"), ("app", "y")]),
            ["p00", "p03", "p09"]
        );
    }

    fn relabel(api: &mut ApiServer, name: &str, app: &str) {
        let patch = serde_json::json!({"metadata": {"labels": {"app": app}}});
        api.merge_patch::<Pod>("t", "default", name, &patch)
            .unwrap();
    }

    fn app_of(inf: &Informer<Pod>, name: &str) -> Option<String> {
        let p = inf.get("default", name)?;
        p.metadata.labels.as_ref()?.get("app").cloned()
    }

    #[test]
    fn a_held_event_is_never_observed_when_a_newer_one_follows() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        let mut inf = Informer::<Pod>::start(&api, 0);
        api.create("t", pod("a", "x")).unwrap();
        inf.poll(&api, 0);
        relabel(&mut api, "a", "y");
        let mut hold = Some(1);
        assert!(inf.poll_holding(&api, 0, &mut hold).is_empty(), "held");
        assert_eq!(hold, None, "the countdown is spent");
        assert_eq!(
            app_of(&inf, "a").as_deref(),
            Some("x"),
            "still the old state"
        );
        relabel(&mut api, "a", "z");
        let d = inf.poll_holding(&api, 1, &mut hold);
        assert_eq!(d.len(), 1, "only the newer event is delivered");
        let old = d[0].old.as_ref().unwrap();
        assert_eq!(
            old.metadata.labels.as_ref().unwrap()["app"],
            "x",
            "y was skipped"
        );
        assert_eq!(inf.next_due_ms(&api), None, "nothing left held");
    }

    #[test]
    fn a_held_event_with_no_successor_arrives_late() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        let mut inf = Informer::<Pod>::start(&api, 0);
        api.create("t", pod("a", "x")).unwrap();
        assert!(inf.poll_holding(&api, 0, &mut Some(1)).is_empty());
        assert_eq!(inf.next_due_ms(&api), Some(HOLD_MAX_MS));
        assert!(inf.poll(&api, HOLD_MAX_MS - 1).is_empty());
        assert_eq!(inf.poll(&api, HOLD_MAX_MS).len(), 1);
        assert_eq!(app_of(&inf, "a").as_deref(), Some("x"));
    }

    #[test]
    fn an_informer_behind_the_compacted_log_relists() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        api.set_watch_window(4);
        let mut inf = Informer::<Pod>::start(&api, 0);
        let mut keeping_up = Informer::<Pod>::start(&api, 0);
        api.create("t", pod("a", "x")).unwrap();
        api.create("t", pod("b", "x")).unwrap();
        inf.poll(&api, 0);
        api.delete::<Pod>("t", "default", "a", &crate::api::DeleteOptions::default())
            .unwrap();
        for i in 0..6 {
            relabel(&mut api, "b", &format!("v{i}"));
        }
        api.create("t", pod("c", "x")).unwrap();
        assert_eq!(keeping_up.poll(&api, 0).len(), 10, "every event, in order");
        api.set_now(1); // the kernel's clock tick compacts the logs
        assert!(log_expired(&api, &inf));
        assert_eq!(inf.next_due_ms(&api), Some(1), "due at once, to relist");
        let d = inf.poll(&api, 1);
        assert_eq!(inf.relists(), 1);
        let seen: Vec<(EventType, String)> = d
            .iter()
            .map(|d| (d.ty, d.obj.metadata.name.clone().unwrap()))
            .collect();
        assert_eq!(
            seen,
            [
                (EventType::Deleted, "a".to_string()),
                (EventType::Modified, "b".to_string()),
                (EventType::Added, "c".to_string()),
            ]
        );
        assert_eq!(
            app_of(&inf, "b").as_deref(),
            Some("v5"),
            "the current state"
        );
        assert!(inf.get("default", "a").is_none());
        relabel(&mut api, "c", "y");
        assert_eq!(inf.poll(&api, 1).len(), 1, "watching again from the list");
        assert_eq!(keeping_up.poll(&api, 1).len(), 1);
        assert_eq!(
            keeping_up.relists(),
            0,
            "a reader that keeps up never relists"
        );
    }

    fn log_expired(api: &ApiServer, inf: &Informer<Pod>) -> bool {
        Pod::store(api).log().expired(inf.cursor.get())
    }

    #[test]
    fn stale_reads_serve_previous_versions_but_never_undo_a_creation() {
        let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
        let mut inf = Informer::<Pod>::start(&api, 0);
        inf.track_previous();
        api.create("t", pod("a", "x")).unwrap();
        api.create("t", pod("b", "x")).unwrap();
        inf.poll(&api, 0);
        relabel(&mut api, "a", "y");
        api.delete::<Pod>("t", "default", "b", &crate::api::DeleteOptions::default())
            .unwrap();
        inf.poll(&api, 0);
        let stale_app = |name: &str| {
            inf.stale_get("default", name)
                .and_then(|p| p.metadata.labels.as_ref()?.get("app").cloned())
        };
        assert_eq!(stale_app("a").as_deref(), Some("x"), "a before its relabel");
        assert_eq!(
            stale_app("b").as_deref(),
            Some("x"),
            "b before its deletion"
        );
        let names: Vec<String> = inf
            .stale_list("default", &Selector::labels([("app", "x")]))
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["a", "b"]);
        api.create("t", pod("c", "x")).unwrap();
        inf.poll(&api, 0);
        assert!(inf.stale_get("default", "c").is_some(), "a creation stays");
    }
}
