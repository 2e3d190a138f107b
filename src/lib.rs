//! The production side of lws-sim: LeaderWorkerSet API types, webhooks and reconcilers, written
//! against the `Client` trait. Nothing here knows about the simulator: no clock, no randomness,
//! no threads, no files.

pub mod api;
pub mod client;
pub mod crd;
pub mod disagg;
pub mod hash;
pub mod k8s;
pub mod lws_controller;
pub mod pod_controller;
pub mod profile;
pub mod quantity;
pub mod restart_guard;
pub mod revision;
pub mod rollout;
pub mod tpu;
pub mod v0_10_0;
pub mod volcano;
pub mod webhook;
