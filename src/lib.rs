//! mirror-maker as a library: the binary in `main.rs` wires these modules
//! together; end-to-end tests and the demo reuse a few pure helpers.
//!
//! Room map: [`cli`] options; [`config`] properties files and their
//! translation; [`filter`] topic selection; [`handler`] target topic and
//! partition; [`consumer`] source streams; [`fetched`] what a fetched record holds; [`handoff`] their side of the channels; [`batch`] what crosses them; [`producer`] target workers;
//! [`offsets`] what may be committed; [`fxhash`] the hot-path maps' hash; [`pipeline`] building and running it
//! all; [`shutdown`] signals and exit codes; [`metrics`] counters; [`endpoint`] the Prometheus page;
//! [`partitioner`] Java's key placement; [`pidfile`] one copy per pid file; [`logfile`] the reopenable log file; [`opsfile`] opening them without following links; [`demo`] the self-contained demo;
//! beyond MM1: [`topics`] target topics like the source, [`provenance`] the loop guard header,
//! [`throttle`] rate limits; [`security`] TLS and SASL keys, [`jaas`] the `sasl.jaas.config` parser;
//! [`zookeeper`] broker lookup for 0.8 consumer files; [`check`] `--check-config`.

pub mod batch;
pub mod check;
pub mod cli;
pub mod config;
pub mod consumer;
pub mod demo;
pub mod endpoint;
pub mod fetched;
pub mod filter;
pub mod fxhash;
pub mod handler;
pub mod handoff;
pub mod jaas;
pub mod logfile;
pub mod metrics;
pub mod offsets;
pub mod opsfile;
pub mod partitioner;
pub mod pidfile;
pub mod pipeline;
pub mod producer;
pub mod provenance;
pub mod security;
pub mod shutdown;
pub mod throttle;
pub mod topics;
pub mod zookeeper;
