//! Watch logs with compaction (etcd compaction behind the apiserver's watch cache, kubernetes
//! apiserver `pkg/storage/cacher/watch_cache.go`; client-go `tools/cache/reflector.go` relists
//! on `410 Gone`).
//!
//! A log is addressed by absolute position: entry `i` is the `i`-th write of its kind since the
//! server started, whatever was dropped before it. Readers (informers, the garbage collector's
//! metadata informer, the invariant checker) register a `Cursor`; an entry every live reader has
//! passed is dropped. A reader that falls more than `WINDOW_MAX` entries behind the end loses
//! what it has not read: its cursor is then *expired* (`410 Gone`, `Expired`) and it must list
//! again, as client-go's reflector does. Runs whose readers keep up (every run we know) never
//! see an expiry, so compaction changes no trace.

use std::cell::{Cell, RefCell};
use std::ops::{Index, RangeFrom};
use std::rc::{Rc, Weak};

/// Entries kept behind the end for a reader that does not keep up, before they are dropped
/// anyway and that reader's next read is `Expired`.
pub const WINDOW_MAX: usize = 1 << 16;

/// Compaction looks at the readers only once this many entries are kept (amortised). Small:
/// a run then frees each version soon after the last reader passes it, while it is still in
/// cache, and the allocator reuses the memory (a fuzz case, ~850 writes, never reached the
/// earlier 1,024 and freed every version at teardown; 16 measured ~10% faster on fuzz).
const COMPACT_AT: usize = 16;

/// `410 Gone`: the entries after this reader's position were compacted away; relist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expired;

/// A registered reader's position: the absolute index of the next entry it reads. Dropping it
/// unregisters the reader.
#[derive(Debug)]
pub struct Cursor(Rc<Cell<usize>>);

impl Cursor {
    pub fn get(&self) -> usize {
        self.0.get()
    }

    pub fn set(&self, at: usize) {
        self.0.set(at);
    }

    pub fn advance(&self) {
        self.0.set(self.0.get() + 1);
    }
}

/// An entry's resourceVersion: what a watch from a resourceVersion is positioned by.
pub trait Versioned {
    fn rv(&self) -> u64;
}

pub struct WatchLog<T> {
    /// Absolute index of `entries[0]`.
    base: usize,
    /// The resourceVersion of the newest dropped entry (0: none dropped). A watch from an
    /// older resourceVersion would miss events: `410 Gone` (etcd's "required revision has been
    /// compacted").
    compacted_rv: u64,
    /// `maybe_compact` looks at the readers again only once this many entries are kept.
    check_at: usize,
    /// Kept entries, oldest first: a `Vec`, so a suffix is a slice (`log[at..]`); the front is
    /// dropped only when at least half of it can go (amortised O(1) per entry).
    entries: Vec<T>,
    readers: RefCell<Vec<Weak<Cell<usize>>>>,
    /// `WINDOW_MAX` unless a test shrinks it.
    window: usize,
}

impl<T> Default for WatchLog<T> {
    fn default() -> Self {
        WatchLog {
            base: 0,
            compacted_rv: 0,
            check_at: COMPACT_AT,
            entries: Vec::new(),
            readers: RefCell::new(Vec::new()),
            window: WINDOW_MAX,
        }
    }
}

impl<T> WatchLog<T> {
    /// The entry at absolute position `at`, if it is kept.
    pub fn get(&self, at: usize) -> Option<&T> {
        self.entries.get(at.checked_sub(self.base)?)
    }

    /// The end: the absolute position the next write takes.
    pub fn len(&self) -> usize {
        self.base + self.entries.len()
    }

    /// Nothing was ever written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The absolute position of the oldest kept entry.
    pub fn first_index(&self) -> usize {
        self.base
    }

    /// How many entries are kept.
    pub fn retained(&self) -> usize {
        self.entries.len()
    }

    pub fn last(&self) -> Option<&T> {
        self.entries.last()
    }

    /// `<[T]>::partition_point` over the kept entries, as an absolute position.
    pub fn partition_point(&self, pred: impl FnMut(&T) -> bool) -> usize {
        self.base + self.entries.partition_point(pred)
    }

    /// The kept entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.entries.iter()
    }

    /// Whether a reader at `at` has lost entries to compaction.
    pub fn expired(&self, at: usize) -> bool {
        at < self.base
    }

    /// `Ok(entry)` at `at` (`None` at the end), or `Expired`.
    pub fn read(&self, at: usize) -> Result<Option<&T>, Expired> {
        if self.expired(at) {
            return Err(Expired);
        }
        Ok(self.get(at))
    }

    /// Register a reader starting at absolute position `at`.
    pub fn reader(&self, at: usize) -> Cursor {
        let c = Rc::new(Cell::new(at));
        self.readers.borrow_mut().push(Rc::downgrade(&c));
        Cursor(c)
    }

    /// Keep at most `window` entries behind the end for slow readers (tests shrink it).
    pub(crate) fn set_window(&mut self, window: usize) {
        self.window = window.max(1);
    }

    pub(crate) fn push(&mut self, entry: T) {
        self.entries.push(entry);
    }
}

impl<T: Versioned> WatchLog<T> {
    /// The resourceVersion of the newest entry compaction dropped (0: none).
    pub fn compacted_rv(&self) -> u64 {
        self.compacted_rv
    }

    /// `compact`, amortised: after an attempt, the next waits until `COMPACT_AT / 2` more
    /// entries are kept, so a slow reader holding many entries costs a look at the readers
    /// every few writes, not every event.
    pub(crate) fn maybe_compact(&mut self) {
        if self.entries.len() < self.check_at.min(self.window) {
            return;
        }
        self.compact();
        self.check_at = COMPACT_AT.max(self.entries.len() + COMPACT_AT / 2);
    }

    /// Drop the entries every live reader has passed, and any more than `WINDOW_MAX` behind
    /// the end.
    pub(crate) fn compact(&mut self) {
        if self.entries.len() < COMPACT_AT.min(self.window) {
            return;
        }
        let end = self.len();
        let mut readers = self.readers.borrow_mut();
        readers.retain(|r| r.strong_count() > 0);
        let slowest = readers
            .iter()
            .filter_map(Weak::upgrade)
            .map(|c| c.get())
            .min()
            .unwrap_or(end);
        let upto = slowest.max(end.saturating_sub(self.window)).min(end);
        let drop = upto.saturating_sub(self.base);
        if drop > 0 && drop * 2 >= self.entries.len() {
            self.compacted_rv = self.entries[drop - 1].rv();
            self.entries.drain(..drop);
            self.base = upto;
        }
    }
}

/// `log[at..]`: the kept entries from absolute position `at` (panics if `at` was compacted).
impl<T> Index<RangeFrom<usize>> for WatchLog<T> {
    type Output = [T];

    fn index(&self, r: RangeFrom<usize>) -> &[T] {
        let from = r.start.checked_sub(self.base).unwrap_or_else(|| {
            panic!(
                "watch log entries from {} compacted (oldest {})",
                r.start, self.base
            )
        });
        &self.entries[from..]
    }
}

impl<T> Index<usize> for WatchLog<T> {
    type Output = T;

    fn index(&self, at: usize) -> &T {
        self.get(at)
            .unwrap_or_else(|| panic!("watch log entry {at} not kept"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Versioned for usize {
        fn rv(&self) -> u64 {
            *self as u64
        }
    }

    fn log_of(n: usize, window: usize) -> WatchLog<usize> {
        let mut log = WatchLog::default();
        log.set_window(window);
        for i in 0..n {
            log.push(i);
        }
        log
    }

    #[test]
    fn compaction_keeps_what_the_slowest_reader_has_not_read() {
        let mut log = log_of(10, 8);
        let (slow, fast) = (log.reader(6), log.reader(9));
        log.compact();
        assert_eq!(
            (log.first_index(), log.len()),
            (6, 10),
            "positions stay absolute"
        );
        assert_eq!(log.get(6), Some(&6));
        assert_eq!(log.get(5), None);
        assert_eq!(log[8], 8);
        assert_eq!(&log[8..], &[8, 9]);
        assert_eq!(log.partition_point(|&e| e < 7), 7);
        for i in 10..14 {
            log.push(i);
        }
        log.compact();
        assert_eq!(log.first_index(), 6, "the slow reader holds its entries");
        drop(slow);
        fast.set(12);
        log.compact();
        assert_eq!(
            log.first_index(),
            12,
            "a dropped reader no longer holds entries"
        );
        assert_eq!(log.read(fast.get()), Ok(Some(&12)));
    }

    #[test]
    fn compaction_waits_until_half_the_kept_entries_can_go() {
        let mut log = log_of(10, 8);
        let r = log.reader(3);
        log.compact();
        assert_eq!(log.first_index(), 0, "3 of 10: not yet");
        assert_eq!(log.compacted_rv(), 0);
        r.set(5);
        log.compact();
        assert_eq!(log.first_index(), 5);
        assert_eq!(log.compacted_rv(), 4, "the newest dropped entry's version");
    }

    #[test]
    fn a_reader_past_the_window_is_expired() {
        let mut log = log_of(20, 8);
        let behind = log.reader(0);
        log.compact();
        assert_eq!(
            log.first_index(),
            12,
            "only the window is kept behind the end"
        );
        assert_eq!(log.read(behind.get()), Err(Expired));
        assert!(log.expired(behind.get()));
        assert_eq!(log.read(12), Ok(Some(&12)));
        assert_eq!(log.read(20), Ok(None), "the end reads as nothing yet");
    }

    #[test]
    fn with_no_reader_everything_read_is_dropped() {
        let mut log = log_of(10, 4);
        log.compact();
        assert_eq!((log.first_index(), log.retained()), (10, 0));
        let r = log.reader(log.len());
        log.push(10);
        assert_eq!(log.read(r.get()), Ok(Some(&10)));
    }
}
