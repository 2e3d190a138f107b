//! The Kubernetes machinery a controller depends on. Each actor owns one concern, reads the
//! world through its own lagging informers and writes only through the API server.

pub mod disruption;
pub mod drain;
pub mod gc;
pub mod kubelet;
pub mod nodes;
pub mod scheduler;
pub mod statefulset;
