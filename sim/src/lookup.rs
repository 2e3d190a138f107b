//! `LookupMap`: a hash map that cannot be iterated. Runs must not depend on hash order, so the
//! simulator uses no `HashMap` (sim/tests/tidy.rs); this wrapper is the one exception, because
//! it offers only `get`, `insert` and `remove`: nothing can observe its order. Used where a key
//! is looked up far more often than the keys are walked in order (`api/slots.rs`, the stores'
//! and informers' objects, keeps a `BTreeMap` beside it for that).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use rustc_hash::FxBuildHasher;

pub struct LookupMap<K, V>(HashMap<K, V, FxBuildHasher>);

impl<K: Clone, V: Clone> Clone for LookupMap<K, V> {
    fn clone(&self) -> Self {
        LookupMap(self.0.clone())
    }
}

/// The size only: entries would print in hash order.
impl<K, V> std::fmt::Debug for LookupMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LookupMap")
            .field("len", &self.0.len())
            .finish()
    }
}

impl<K, V> Default for LookupMap<K, V> {
    fn default() -> Self {
        LookupMap(HashMap::default())
    }
}

impl<K: Hash + Eq, V> LookupMap<K, V> {
    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.0.get(key)
    }

    pub fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.0.get_mut(key)
    }

    pub fn contains_key<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.contains_key(key)
    }

    /// The entry for `key`; an entry sees one key, never the map's order.
    pub fn entry(&mut self, key: K) -> std::collections::hash_map::Entry<'_, K, V> {
        self.0.entry(key)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.0.insert(key, value)
    }

    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.0.remove(key)
    }
}
