//! lws-sim: a deterministic world in which the LeaderWorkerSet controllers run.

pub mod actors;
pub mod api;
pub mod cluster;
pub mod controller;
pub mod explore;
pub mod fault;
pub mod fixtures;
pub mod fuzz;
pub mod informer;
pub mod invariants;
pub mod perfetto;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod serve;
pub mod sweep;
pub mod time;
pub mod timeline;
pub mod trace;
pub mod world;
