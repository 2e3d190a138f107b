//! The production side of lws-sim: LeaderWorkerSet API types, webhooks and reconcilers, written
//! against the `Client` trait. Nothing here knows about the simulator.

pub mod api;
pub mod k8s;
