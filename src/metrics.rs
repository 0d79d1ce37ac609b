//! Process-wide counters: what was consumed, produced and dropped.
//!
//! Plain atomics, bumped on the hot path with relaxed ordering; read for
//! the summary line at exit (and later for the stats line and endpoint).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct Metrics {
    pub consumed: AtomicU64,
    pub consumed_bytes: AtomicU64,
    pub produced: AtomicU64,
    pub produced_bytes: AtomicU64,
    /// MM1's `numDroppedMessages`: records skipped after a permanent send
    /// failure with `--abort.on.send.failure false`.
    pub dropped: AtomicU64,
    /// Records not copied because their provenance header names the target
    /// cluster (they came from it): the active/active loop guard, not a loss.
    pub loop_skipped: AtomicU64,
    pub commits: AtomicU64,
    pub commit_failures: AtomicU64,
    pub rebalances: AtomicU64,
    /// Source offsets deleted by retention before they were mirrored.
    pub gap_offsets: AtomicU64,
    /// Per stream: source end offsets minus committed offsets, summed over
    /// its partitions, from librdkafka's statistics.
    pub lag: Mutex<HashMap<String, i64>>,
}

/// The previous reading, to turn counters into rates.
#[derive(Debug)]
pub struct StatsState {
    at: Instant,
    consumed: u64,
    consumed_bytes: u64,
    produced: u64,
    produced_bytes: u64,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// Records read and neither acknowledged by the target nor dropped.
    pub fn in_flight(&self) -> u64 {
        Self::get(&self.consumed).saturating_sub(Self::get(&self.produced) + Self::get(&self.dropped) + Self::get(&self.loop_skipped))
    }

    pub fn total_lag(&self) -> i64 {
        self.lag.lock().unwrap().values().sum()
    }

    pub fn stats_start(&self) -> StatsState {
        StatsState {
            at: Instant::now(),
            consumed: Self::get(&self.consumed),
            consumed_bytes: Self::get(&self.consumed_bytes),
            produced: Self::get(&self.produced),
            produced_bytes: Self::get(&self.produced_bytes),
        }
    }

    /// One line for the log: rates since `prev`, lag, in flight, dropped,
    /// and when there is a backlog, an estimate of the time to catch up.
    pub fn stats_line(&self, prev: &mut StatsState) -> String {
        let now = self.stats_start();
        let secs = now.at.duration_since(prev.at).as_secs_f64().max(0.001);
        let rate = |a: u64, b: u64| (a - b) as f64 / secs;
        let (in_r, out_r) = (rate(now.consumed, prev.consumed), rate(now.produced, prev.produced));
        let (in_mb, out_mb) = (rate(now.consumed_bytes, prev.consumed_bytes) / 1e6, rate(now.produced_bytes, prev.produced_bytes) / 1e6);
        let in_flight = self.in_flight();
        let lag = self.total_lag();
        let eta = if lag > 0 && out_r > 0.0 {
            format!(", catching up: about {:?} left at this rate", Duration::from_secs((lag as f64 / out_r).ceil() as u64))
        } else {
            String::new()
        };
        *prev = now;
        format!(
            "stats: in {in_r:.0} records/s ({in_mb:.2} MB/s), out {out_r:.0} records/s ({out_mb:.2} MB/s), lag {lag}, in flight {in_flight}, dropped {}{eta}",
            Self::get(&self.dropped)
        )
    }

    pub fn summary(&self) -> String {
        format!(
            "consumed {} records ({} bytes), produced {} records ({} bytes), dropped {}, not copied back to their origin {}, {} commits ({} failed), {} rebalances, {} offsets lost to source retention",
            Self::get(&self.consumed),
            Self::get(&self.consumed_bytes),
            Self::get(&self.produced),
            Self::get(&self.produced_bytes),
            Self::get(&self.dropped),
            Self::get(&self.loop_skipped),
            Self::get(&self.commits),
            Self::get(&self.commit_failures),
            Self::get(&self.rebalances),
            Self::get(&self.gap_offsets),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_line_reports_rates_lag_and_eta() {
        let m = Metrics::default();
        let mut prev = m.stats_start();
        Metrics::add(&m.consumed, 1000);
        Metrics::add(&m.produced, 900);
        Metrics::add(&m.dropped, 10);
        m.lag.lock().unwrap().insert("s0".into(), 5000);
        std::thread::sleep(Duration::from_millis(20));
        let line = m.stats_line(&mut prev);
        assert!(line.contains("lag 5000") && line.contains("in flight 90") && line.contains("dropped 10"), "{line}");
        assert!(line.contains("catching up"), "{line}");
        Metrics::add(&m.produced, 90);
        m.lag.lock().unwrap().insert("s0".into(), 0);
        let line = m.stats_line(&mut prev);
        assert!(line.contains("lag 0") && line.contains("in flight 0") && !line.contains("catching up"), "{line}");
    }
}
