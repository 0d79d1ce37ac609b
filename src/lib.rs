//! mirror-maker as a library: the binary in `main.rs` wires these layers
//! together; end-to-end tests and the demo reuse a few pure helpers.
//!
//! The layers, each a folder, each depending only on those below it:
//! - [`front`]: what the user wrote (the MM1 command line and properties
//!   files) turned into a [`plan::Plan`]; the client-key translation they share.
//! - [`plan`]: the plan of flows (source, target, topic filter, naming,
//!   partitioning, pipeline shape), the only thing the engine takes.
//! - [`engine`]: runs a plan: source streams, hand-off, batches, producer
//!   workers, offset tracking, topic sync, throttle.
//! - [`kafka`]: the glue to librdkafka's C API; every `unsafe` block lives there.
//! - [`ops`]: shutdown and exit codes, metrics and their endpoint, pid and log files.
//!
//! The front-ends' leaves (`front::properties`, `kafka::settings`,
//! `kafka::secrets`) are the one thing the lower layers take from above:
//! a plan carries each client's translated settings. [`fxhash`] is the
//! hot-path maps' hash; [`demo`] runs the self-contained demo on top of all.

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
