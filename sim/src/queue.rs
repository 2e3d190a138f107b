//! A work queue as client-go's delaying, rate-limited queue behaves (client-go
//! `util/workqueue` `queue.go`, `delaying_queue.go`, `default_rate_limiters.go` @32ce75a7):
//! one pending entry per key, the earliest due time wins, per-key exponential backoff
//! 5 ms * 2^failures capped at 1000 s, and `forget` resets it.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::api::Key;
use crate::lookup::LookupMap;

pub const BACKOFF_BASE_MS: u64 = 5;
pub const BACKOFF_MAX_MS: u64 = 1_000_000;

#[derive(Default)]
pub struct WorkQueue {
    /// Each queued key's due time and sequence number: its entry in `order`. Only looked up
    /// (hashed: a key's strings are compared once, not along an ordered search).
    due_by_key: LookupMap<Rc<Key>, (u64, u64)>,
    /// The queue in due order, FIFO among equal due times: keyed by due time and sequence
    /// number (unique), so ordering and removing never compare key strings. A queued key is
    /// one allocation shared with `due_by_key`, not a copy of its strings.
    order: BTreeMap<(u64, u64), Rc<Key>>,
    seq: u64,
    failures: LookupMap<Key, u32>,
}

/// The queue in order; the maps beside it are lookups of the same keys.
impl std::fmt::Debug for WorkQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkQueue")
            .field("order", &self.order)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

impl WorkQueue {
    pub fn add(&mut self, key: Key, now_ms: u64) {
        self.add_after(key, now_ms);
    }

    /// `AddAfter`: keep the earlier of the existing and the new due time.
    pub fn add_after(&mut self, key: Key, at_ms: u64) {
        if let Some(&(due, seq)) = self.due_by_key.get(&key) {
            if due <= at_ms {
                return;
            }
            self.order.remove(&(due, seq));
        }
        self.seq += 1;
        let key = Rc::new(key);
        self.due_by_key.insert(Rc::clone(&key), (at_ms, self.seq));
        self.order.insert((at_ms, self.seq), key);
    }

    /// `AddRateLimited` with `ItemExponentialFailureRateLimiter(5ms, 1000s)`.
    pub fn add_rate_limited(&mut self, key: Key, now_ms: u64) {
        let n = self.failures.entry(key.clone()).or_insert(0);
        let delay = BACKOFF_BASE_MS
            .saturating_mul(1u64 << (*n).min(40))
            .min(BACKOFF_MAX_MS);
        *n += 1;
        self.add_after(key, now_ms.saturating_add(delay));
    }

    pub fn forget(&mut self, key: &Key) {
        self.failures.remove(key);
    }

    pub fn failures(&self, key: &Key) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    pub fn next_due_ms(&self) -> Option<u64> {
        self.order.first_key_value().map(|(&(at, _), _)| at)
    }

    /// The earliest key due at `now_ms`, FIFO among equal due times.
    pub fn pop_due(&mut self, now_ms: u64) -> Option<Key> {
        let (&(at, _), _) = self.order.first_key_value()?;
        if at > now_ms {
            return None;
        }
        let (_, key) = self.order.pop_first()?;
        self.due_by_key.remove(&key);
        // Both maps' references are gone: the key is moved out, not copied.
        Some(Rc::try_unwrap(key).unwrap_or_else(|shared| (*shared).clone()))
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub fn clear(&mut self) {
        *self = WorkQueue::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: &str) -> Key {
        ("default".into(), n.into())
    }

    #[test]
    fn dedups_and_keeps_earliest() {
        let mut q = WorkQueue::default();
        q.add_after(k("a"), 100);
        q.add_after(k("a"), 50);
        q.add_after(k("a"), 70);
        assert_eq!(q.len(), 1);
        assert_eq!(q.next_due_ms(), Some(50));
        assert_eq!(q.pop_due(49), None);
        assert_eq!(q.pop_due(50), Some(k("a")));
        assert!(q.is_empty());
    }

    #[test]
    fn backoff_doubles_and_caps_and_forget_resets() {
        let mut q = WorkQueue::default();
        let mut delays = Vec::new();
        for _ in 0..3 {
            q.add_rate_limited(k("a"), 0);
            delays.push(q.next_due_ms().unwrap());
            q.pop_due(u64::MAX);
        }
        assert_eq!(delays, vec![5, 10, 20]);
        for _ in 0..40 {
            q.add_rate_limited(k("a"), 0);
            q.pop_due(u64::MAX);
        }
        q.add_rate_limited(k("a"), 0);
        assert_eq!(q.next_due_ms(), Some(BACKOFF_MAX_MS));
        q.pop_due(u64::MAX);
        q.forget(&k("a"));
        q.add_rate_limited(k("a"), 0);
        assert_eq!(q.next_due_ms(), Some(5));
    }
}
