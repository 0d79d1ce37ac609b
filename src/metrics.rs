//! Process-wide counters: what was consumed, produced and dropped.
//!
//! Plain atomics, bumped on the hot path with relaxed ordering; read for
//! the summary line at exit (and later for the stats line and endpoint).

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Metrics {
    pub consumed: AtomicU64,
    pub consumed_bytes: AtomicU64,
    pub produced: AtomicU64,
    pub produced_bytes: AtomicU64,
    /// MM1's `numDroppedMessages`: records skipped after a permanent send
    /// failure with `--abort.on.send.failure false`.
    pub dropped: AtomicU64,
    pub commits: AtomicU64,
    pub commit_failures: AtomicU64,
    pub rebalances: AtomicU64,
    /// Source offsets deleted by retention before they were mirrored.
    pub gap_offsets: AtomicU64,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub fn summary(&self) -> String {
        format!(
            "consumed {} records ({} bytes), produced {} records ({} bytes), dropped {}, {} commits ({} failed), {} rebalances, {} offsets lost to source retention",
            Self::get(&self.consumed),
            Self::get(&self.consumed_bytes),
            Self::get(&self.produced),
            Self::get(&self.produced_bytes),
            Self::get(&self.dropped),
            Self::get(&self.commits),
            Self::get(&self.commit_failures),
            Self::get(&self.rebalances),
            Self::get(&self.gap_offsets),
        )
    }
}
