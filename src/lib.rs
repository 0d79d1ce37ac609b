//! mirror-maker as a library: the binary in `main.rs` wires these layers
//! together; end-to-end tests and the demo reuse a few pure helpers.
//!
//! The layers, each a folder; imports only point down, and
//! `tests/layers.rs` fails when one does not (the map, and the path of one
//! record through the files: docs/architecture.md):
//! - [`front`]: what the user wrote (MM1's command line, MM2's file, their
//!   properties files) turned into a [`plan::Plan`].
//! - [`plan`]: the plan of flows, the contract between a front-end and the
//!   engine; neither imports the other.
//! - [`engine`]: runs a plan: start-up and the flows' side tasks, over
//!   MirrorMaker 2's duties ([`engine::mm2`]), over the copy every flow runs
//!   ([`engine::pipeline`]).
//! - [`kafka`]: the glue to librdkafka, every `unsafe` block, and what a
//!   plan carries of each client (its translated settings and secrets).
//! - [`ops`]: beside the others: shutdown and [`ops::shutdown::ExitStatus`],
//!   metrics and their endpoint, pid and log files.
//!
//! - [`worker`]: a Connect-compatible worker (REST API, storage topics),
//!   above the front-ends and the engine: it runs one plan per connector.
//!
//! Leaves any layer may use: [`formats`] (MirrorMaker 2's record formats)
//! and [`fxhash`] (the hot-path maps' hash). [`demo`] runs the
//! self-contained demo on top of all.

#![deny(unsafe_code)]

pub mod demo;
pub mod engine;
pub mod formats;
pub mod front;
pub mod fxhash;
pub mod kafka;
pub mod ops;
pub mod plan;
#[cfg(test)]
pub mod testkit;
pub mod worker;
