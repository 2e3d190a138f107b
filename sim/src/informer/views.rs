//! Equality-selector views: for each `(namespace, label pairs)` some list has selected on, the
//! objects that match it, in key order, kept true on every change of an object's labels or
//! membership (incremental view maintenance). A list by such a selector then costs the size of
//! its answer and reads no object; a status-only change (most changes) touches no view.
//!
//! A view is found from a change through its first pair: an object that matches a view carries
//! all of the view's pairs, the first among them, so a change of an object concerns only the
//! views filed under one of the pairs it had or has.

use std::collections::BTreeMap;

use crate::api::slots::Slot;
use crate::api::{Key, KeyRef};
use crate::lookup::LookupMap;

type Labels = BTreeMap<String, String>;
type Pair = (String, String);

struct View {
    namespace: String,
    /// Sorted, without repeats; not empty.
    pairs: Vec<Pair>,
    members: BTreeMap<Key, Slot>,
}

impl View {
    fn matches(&self, namespace: &str, labels: Option<&Labels>) -> bool {
        self.namespace == namespace
            && self
                .pairs
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
    }
}

#[derive(Default)]
pub struct Views {
    views: Vec<View>,
    /// The views by `selector_hash` of their namespace and pairs (a lookup builds no key).
    by_selector: LookupMap<u64, Vec<usize>>,
    by_first_pair: BTreeMap<Pair, Vec<usize>>,
}

/// `pairs` sorted and without repeats: the form a view is filed under.
pub fn normal<'a>(pairs: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut out = pairs.to_vec();
    out.sort_unstable();
    out.dedup();
    out
}

/// What `by_selector` files a view under.
fn selector_hash<'a>(namespace: &str, pairs: impl Iterator<Item = (&'a str, &'a str)>) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = rustc_hash::FxHasher::default();
    namespace.hash(&mut h);
    for (k, v) in pairs {
        k.hash(&mut h);
        v.hash(&mut h);
    }
    h.finish()
}

impl Views {
    /// No list has filed a view.
    pub fn is_empty(&self) -> bool {
        self.views.is_empty()
    }

    /// The members of the view for `namespace` and `pairs` (normal form), if there is one.
    pub fn get(&self, namespace: &str, pairs: &[(&str, &str)]) -> Option<&BTreeMap<Key, Slot>> {
        let ids = self
            .by_selector
            .get(&selector_hash(namespace, pairs.iter().copied()))?;
        let view = ids.iter().map(|&i| &self.views[i]).find(|v| {
            v.namespace == namespace
                && v.pairs.len() == pairs.len()
                && v.pairs
                    .iter()
                    .zip(pairs)
                    .all(|((k, v), &(k2, v2))| k == k2 && v == v2)
        })?;
        Some(&view.members)
    }

    /// File a new view for `namespace` and `pairs` (normal form, not empty) with its current
    /// members.
    pub fn add(&mut self, namespace: &str, pairs: &[(&str, &str)], members: BTreeMap<Key, Slot>) {
        let i = self.views.len();
        let pairs: Vec<Pair> = pairs
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.by_first_pair
            .entry(pairs[0].clone())
            .or_default()
            .push(i);
        let hash = selector_hash(
            namespace,
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        self.by_selector.entry(hash).or_default().push(i);
        self.views.push(View {
            namespace: namespace.to_string(),
            pairs,
            members,
        });
    }

    /// Object `key` in `slot` changed labels from `old` (`None`: it is new) to `new` (`None`:
    /// it is gone).
    pub fn on_change(
        &mut self,
        key: &dyn KeyRef,
        slot: Slot,
        old: Option<&Labels>,
        new: Option<&Labels>,
    ) {
        if self.views.is_empty() {
            return;
        }
        let (namespace, name) = key.parts();
        let pairs = old.into_iter().chain(new).flatten();
        for (k, v) in pairs {
            let pair: &dyn KeyRef = &(k.as_str(), v.as_str());
            let Some(ids) = self.by_first_pair.get(pair) else {
                continue;
            };
            for &i in ids {
                let view = &mut self.views[i];
                if new.is_some() && view.matches(namespace, new) {
                    if !view.members.contains_key(key) {
                        view.members
                            .insert((namespace.to_string(), name.to_string()), slot);
                    }
                } else {
                    view.members.remove(key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(m: Option<&BTreeMap<Key, Slot>>) -> Vec<&str> {
        m.into_iter().flatten().map(|(k, _)| k.1.as_str()).collect()
    }

    #[test]
    fn a_view_follows_relabels_moves_and_deletes() {
        let mut v = Views::default();
        let sel = normal(&[("worker", "0"), ("app", "x"), ("app", "x")]);
        assert_eq!(sel.len(), 2, "sorted and without repeats");
        v.add("ns", &sel, BTreeMap::new());
        let leader = labels(&[("app", "x"), ("worker", "0")]);
        let worker = labels(&[("app", "x"), ("worker", "1")]);
        v.on_change(&("ns", "b"), 1, None, Some(&leader));
        v.on_change(&("ns", "a"), 0, None, Some(&leader));
        v.on_change(&("ns", "c"), 2, None, Some(&worker));
        v.on_change(&("other", "d"), 3, None, Some(&leader));
        assert_eq!(
            names(v.get("ns", &sel)),
            ["a", "b"],
            "key order, one namespace"
        );
        v.on_change(&("ns", "a"), 0, Some(&leader), Some(&worker));
        v.on_change(&("ns", "c"), 2, Some(&worker), Some(&leader));
        assert_eq!(names(v.get("ns", &sel)), ["b", "c"]);
        v.on_change(&("ns", "b"), 1, Some(&leader), None);
        assert_eq!(names(v.get("ns", &sel)), ["c"]);
        assert_eq!(v.get("ns", &normal(&[("app", "x")])), None, "no such view");
    }
}
