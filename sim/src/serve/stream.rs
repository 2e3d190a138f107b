//! The lines of a watch stream between the simulation core and a client's connection, with
//! the byte budgets that bound what clients that do not read can make the server hold.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc::Sender;

/// Bytes of events one watch may have queued for its client before it counts as lagging and
/// is closed (a few events of the largest objects, 3 MiB each, fit).
pub const WATCH_BYTES_MAX: usize = 16 << 20;
/// Bytes of events every watch together may have queued: a watch that would go past it is
/// closed instead, so clients that do not read cannot grow the server's memory without bound.
pub const WATCHES_BYTES_MAX: usize = 256 << 20;

/// The queued bytes of one watch and of every watch.
pub type Budget = [Arc<AtomicUsize>; 2];

/// Queue `text` for a watch's client. False when the client lags (its queue, its bytes or every
/// watch's bytes full) or went away: the watch is then closed, as the cacher closes a watcher
/// that does not keep up.
pub fn queue(tx: &Sender<Line>, budget: &Budget, text: String) -> bool {
    let bytes = text.len();
    let [mine, all] = budget;
    let over = |c: &AtomicUsize, max: usize| c.load(Ordering::Relaxed) + bytes > max;
    if over(mine, WATCH_BYTES_MAX) || over(all, WATCHES_BYTES_MAX) {
        return false;
    }
    tx.try_send(Line::counted(text, budget.clone())).is_ok()
}

/// One line of a watch stream (an event's JSON), counted against its watch's and every
/// watch's byte budget until the client takes it or the stream is dropped with it unsent.
pub struct Line {
    text: String,
    bytes: usize,
    counted: Budget,
}

impl Line {
    /// A line counted against `budget` (its bytes are added now, taken off when it goes).
    pub fn counted(text: String, budget: Budget) -> Line {
        let bytes = text.len();
        for c in &budget {
            c.fetch_add(bytes, Ordering::Relaxed);
        }
        Line {
            text,
            bytes,
            counted: budget,
        }
    }

    /// The line's text, leaving the budgets.
    pub fn into_text(mut self) -> String {
        std::mem::take(&mut self.text)
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        for c in &self.counted {
            c.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}
