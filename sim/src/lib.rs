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

/// mimalloc for every binary that links the simulator (CLI, tests, benches): a run is mostly
/// small short-lived allocations (objects, keys, JSON values), about a quarter faster than
/// glibc's allocator on `benches/fuzz.rs`. Allocation order never reaches the trace.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
