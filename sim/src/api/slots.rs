//! Objects by key as slots, for the API server's stores and the informers' caches: each live
//! object sits in one slot for as long as it lives, the key order is a map from key to slot,
//! and lookups by key are hashed (`LookupMap`). A write to an existing object (most writes:
//! status, resourceVersion) finds its slot by hash and replaces the object in it, comparing no
//! key strings and touching no ordered map; an informer's indexes map keys to slots too, so a
//! list walks an index and reads slots by position. Iteration is in key order only.

use std::collections::BTreeMap;

use super::{Key, KeyRef, Shared};
use crate::lookup::LookupMap;

/// A position in `Slots`; stable while its object lives, reused after it is removed.
pub type Slot = u32;

pub struct Slots<K> {
    /// Key order, for lists and iteration.
    keys: BTreeMap<Key, Slot>,
    /// The same map hashed, for lookups by key.
    lookup: LookupMap<Key, Slot>,
    objects: Vec<Option<Shared<K>>>,
    free: Vec<Slot>,
}

impl<K> Default for Slots<K> {
    fn default() -> Self {
        Slots {
            keys: BTreeMap::new(),
            lookup: LookupMap::default(),
            objects: Vec::new(),
            free: Vec::new(),
        }
    }
}

/// A copy shares the objects and compares no key: what an informer starting from a store's
/// listing holds (slot numbers are positions, never observed).
impl<K> Clone for Slots<K> {
    fn clone(&self) -> Self {
        Slots {
            keys: self.keys.clone(),
            lookup: self.lookup.clone(),
            objects: self.objects.clone(),
            free: self.free.clone(),
        }
    }
}

impl<K> Slots<K> {
    pub fn get(&self, key: &dyn KeyRef) -> Option<&Shared<K>> {
        self.lookup.get(key).map(|&s| self.at(s))
    }

    /// The object in a slot the caller got from `insert` and has not removed since.
    pub fn at(&self, slot: Slot) -> &Shared<K> {
        self.objects[slot as usize]
            .as_ref()
            .expect("an index names a live slot")
    }

    /// Put `obj` under `key`: in its slot if the key is live, else in a free or new one.
    /// Returns the slot and the object it replaced.
    pub fn insert(&mut self, key: &dyn KeyRef, obj: Shared<K>) -> (Slot, Option<Shared<K>>) {
        if let Some(&slot) = self.lookup.get(key) {
            let old = self.objects[slot as usize].replace(obj);
            return (slot, old);
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.objects[s as usize] = Some(obj);
                s
            }
            None => {
                let s = Slot::try_from(self.objects.len()).expect("fewer than 2^32 cached objects");
                self.objects.push(Some(obj));
                s
            }
        };
        let (ns, name) = key.parts();
        let key: Key = (ns.to_string(), name.to_string());
        self.lookup.insert(key.clone(), slot);
        self.keys.insert(key, slot);
        (slot, None)
    }

    pub fn remove(&mut self, key: &dyn KeyRef) -> Option<(Slot, Shared<K>)> {
        let slot = self.lookup.remove(key)?;
        self.keys.remove(key);
        let old = self.objects[slot as usize].take()?;
        self.free.push(slot);
        Some((slot, old))
    }

    /// Keys and slots of one namespace, in key order.
    pub fn slots_in_namespace<'a, 'n>(
        &'a self,
        namespace: &'n str,
    ) -> impl Iterator<Item = (&'a Key, Slot)> + use<'a, 'n, K> {
        self.keys
            .range((namespace.to_string(), String::new())..)
            .take_while(move |((ns, _), _)| ns == namespace)
            .map(|(k, &s)| (k, s))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.keys.keys()
    }

    /// Keys and objects in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Shared<K>)> {
        self.keys.iter().map(|(k, &s)| (k, self.at(s)))
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keys and slots in key order.
    pub fn slots(&self) -> impl Iterator<Item = (&Key, Slot)> {
        self.keys.iter().map(|(k, &s)| (k, s))
    }

    /// Objects in key order.
    pub fn values(&self) -> impl Iterator<Item = &Shared<K>> {
        self.keys.values().map(|&s| self.at(s))
    }

    /// Keys and objects of one namespace, in key order.
    pub fn in_namespace<'a, 'n>(
        &'a self,
        namespace: &'n str,
    ) -> impl Iterator<Item = (&'a Key, &'a Shared<K>)> + use<'a, 'n, K> {
        self.slots_in_namespace(namespace)
            .map(|(k, s)| (k, self.at(s)))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &Slots<&'static str>) -> Vec<&'static str> {
        s.values().map(|v| **v).collect()
    }

    #[test]
    fn a_freed_slot_is_reused_and_order_stays_by_key() {
        let mut s: Slots<&'static str> = Slots::default();
        let (a, _) = s.insert(&("ns", "a"), Shared::new("a1"));
        let (b, _) = s.insert(&("ns", "b"), Shared::new("b1"));
        assert_ne!(a, b);
        let (a2, old) = s.insert(&("ns", "a"), Shared::new("a2"));
        assert_eq!(
            (a2, old.as_deref()),
            (a, Some(&"a1")),
            "a change stays in its slot"
        );
        assert_eq!(s.remove(&("ns", "a")).map(|(slot, _)| slot), Some(a));
        let (c, _) = s.insert(&("ns", "0"), Shared::new("c1"));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(
            names(&s),
            ["c1", "b1"],
            "values come in key order, not slot order"
        );
        assert_eq!(s.get(&("ns", "a")), None);
        assert_eq!(s.get(&("ns", "0")).map(|v| **v), Some("c1"));
        let in_ns: Vec<_> = s.in_namespace("ns").map(|(k, _)| k.1.as_str()).collect();
        assert_eq!(in_ns, ["0", "b"]);
        assert_eq!(s.in_namespace("other").count(), 0);
    }
}
