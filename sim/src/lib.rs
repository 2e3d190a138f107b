//! lws-sim: a deterministic world in which the LeaderWorkerSet controllers run.

pub mod actors;
mod allocator;
pub mod api;
pub mod cluster;
pub mod controller;
pub mod explore;
pub mod fault;
pub mod fixtures;
pub mod fuzz;
pub mod informer;
pub mod invariants;
pub mod lookup;
pub mod perfetto;
pub mod probe;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod serve;
pub mod summary;
pub mod sweep;
pub mod time;
pub mod timeline;
pub mod trace;
pub mod world;

/// mimalloc for every binary that links the simulator (`allocator`).
#[global_allocator]
static GLOBAL: allocator::Mimalloc = allocator::Mimalloc;
