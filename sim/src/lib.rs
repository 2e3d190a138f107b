//! lws-sim: a deterministic world in which the LeaderWorkerSet controllers run.

pub mod api;
pub mod rng;
pub mod time;
pub mod trace;
