//! The one wall clock of `serve`: virtual time runs at `speed` times real time from an anchor,
//! or stands still when paused. Re-anchored whenever the core moves time by request.

use std::time::Instant;

pub struct Clock {
    /// `None`: paused.
    pub speed: Option<f64>,
    anchor: Instant,
    anchor_ms: u64,
}

impl Clock {
    pub fn new(speed: Option<f64>, now_ms: u64) -> Clock {
        Clock {
            speed,
            anchor: Instant::now(),
            anchor_ms: now_ms,
        }
    }

    /// The simulated instant the world should have reached by now, if time runs.
    pub fn target_ms(&self) -> Option<u64> {
        let s = self.speed?;
        let elapsed = self.anchor.elapsed().as_secs_f64() * 1000.0 * s;
        // `as` saturates a float too large for u64; the sum saturates too.
        Some(self.anchor_ms.saturating_add(elapsed as u64))
    }

    /// Continue from `now_ms` (after a step, or when the world lags behind real time).
    pub fn reanchor(&mut self, now_ms: u64) {
        self.anchor = Instant::now();
        self.anchor_ms = now_ms;
    }

    pub fn set_speed(&mut self, speed: Option<f64>, now_ms: u64) {
        self.speed = speed;
        self.reanchor(now_ms);
    }
}
