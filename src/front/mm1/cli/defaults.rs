//! The named defaults of the command-line options: public because the rest
//! of the crate reads some of them (the MM1 front-end's commit interval, the
//! MM2 plan's byte bound).
//!
//! A leaf: the option table reads them and so does `cli/mod.rs`, which
//! imports the table, so they live below both; the table never imports its
//! parent.

pub const DEFAULT_OFFSET_COMMIT_INTERVAL_MS: u64 = 60_000;
pub const DEFAULT_TOPIC_REFRESH_INTERVAL_MS: u64 = 30_000;
pub const DEFAULT_DRAIN_TIMEOUT_MS: u64 = 60_000;
pub const DEFAULT_STATS_INTERVAL_MS: u64 = 30_000;
/// Chosen by measurement: at 1 KiB, 10,000 records per worker (10 MiB)
/// held a fifth of the mirror's memory and made it no faster than 2 MiB
/// (see README Performance); it also bounds the channel with large records,
/// where a record count alone let memory grow with the record size.
pub const DEFAULT_QUEUE_BYTE_SIZE: usize = 2 << 20;
