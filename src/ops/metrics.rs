//! Counters for the stats line, the summary at exit and the Prometheus
//! endpoint: process totals, per source topic, per source partition.
//!
//! Plain atomics, bumped on the hot path with relaxed ordering. A stream
//! looks up its topic's counters once per topic (not per record) and hands
//! them to the producer in each partition's route (see `batch`), so a
//! worker counts and times a round of acknowledgements without a map lookup.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A counter on a cache line of its own (two, as x86 fetches lines in
/// pairs). The consumer streams bump the `consumed` counters and the
/// producer workers the `produced` ones for every record: side by side on
/// one line, each bump pulled the line away from the other thread's core.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Counter(AtomicU64);

impl std::ops::Deref for Counter {
    type Target = AtomicU64;

    fn deref(&self) -> &AtomicU64 {
        &self.0
    }
}

/// Counters of one source topic of one source cluster.
#[derive(Debug)]
pub struct TopicMetrics {
    /// Index of the `--consumer.config` it comes from, 0-based.
    pub source: usize,
    pub topic: Arc<str>,
    pub consumed: Counter,
    pub consumed_bytes: Counter,
    pub produced: Counter,
    pub produced_bytes: Counter,
    pub dropped: Counter,
    /// Per source partition: milliseconds from the latest acknowledged
    /// record's timestamp to its acknowledgement; -1 before the first.
    latency_ms: RwLock<Vec<AtomicI64>>,
}

impl TopicMetrics {
    fn new(source: usize, topic: &str) -> Self {
        TopicMetrics {
            source,
            topic: Arc::from(topic),
            consumed: Counter::default(),
            consumed_bytes: Counter::default(),
            produced: Counter::default(),
            produced_bytes: Counter::default(),
            dropped: Counter::default(),
            latency_ms: RwLock::new(Vec::new()),
        }
    }

    /// The target acknowledged, at `now` (ms since the epoch), a record of
    /// `partition` written at `timestamp_ms`. The caller reads the clock once
    /// for a round of acknowledgements: once per record was 2-3% of the
    /// CPU at 100 B.
    pub fn acknowledged(&self, partition: i32, timestamp_ms: Option<i64>, now: i64) {
        let (Some(ts), Ok(p)) = (timestamp_ms, usize::try_from(partition)) else { return };
        let latency = now.saturating_sub(ts).max(0);
        {
            let slots = self.latency_ms.read().unwrap_or_else(|e| e.into_inner());
            if let Some(slot) = slots.get(p) {
                slot.store(latency, Ordering::Relaxed);
                return;
            }
        }
        let mut slots = self.latency_ms.write().unwrap_or_else(|e| e.into_inner());
        while slots.len() <= p {
            slots.push(AtomicI64::new(-1));
        }
        slots[p].store(latency, Ordering::Relaxed);
    }

    /// (partition, latency in ms) for partitions with an acknowledged record.
    pub fn latencies(&self) -> Vec<(i32, i64)> {
        let slots = self.latency_ms.read().unwrap_or_else(|e| e.into_inner());
        slots.iter().enumerate().map(|(p, l)| (p as i32, l.load(Ordering::Relaxed))).filter(|(_, l)| *l >= 0).collect()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// One consumer stream's view of its partitions' lag (`Stream::report_lag`).
#[derive(Debug, Default, Clone)]
pub struct StreamLag {
    pub source: usize,
    /// (topic, partition, source end offset minus committed offset)
    pub partitions: Vec<(String, i32, i64)>,
}

#[derive(Debug, Default)]
pub struct Metrics {
    pub consumed: Counter,
    pub consumed_bytes: Counter,
    pub produced: Counter,
    pub produced_bytes: Counter,
    /// MM1's `numDroppedMessages`: records skipped after a permanent send
    /// failure with `--abort.on.send.failure false`.
    pub dropped: Counter,
    /// Records not copied because their provenance header names the target
    /// cluster (they came from it): the active/active loop guard, not a loss.
    pub loop_skipped: Counter,
    pub commits: Counter,
    pub commit_failures: Counter,
    pub rebalances: Counter,
    /// Source offsets deleted by retention before they were mirrored.
    pub gap_offsets: Counter,
    /// Checkpoints of source groups written to the target.
    pub checkpoints: Counter,
    /// Partitions of groups whose translated offsets were committed on the target.
    pub group_offsets_synced: Counter,
    /// Group offset syncs left out because the group had active consumers on the target.
    pub group_syncs_skipped_active: Counter,
    /// Per stream: its partitions' lag, replaced at every report.
    pub lag: Mutex<HashMap<String, StreamLag>>,
    /// Per (source, topic); an entry goes when its topic is deleted at the source.
    pub topics: Mutex<HashMap<(usize, String), Arc<TopicMetrics>>>,
    /// Source topics the consumer streams keep a route for (a gauge).
    pub topic_routes: Counter,
    /// Wall time of successful commits, for the endpoint's summary.
    pub commit_micros: Counter,
    /// Records handed to the producer channels, and taken out by the
    /// workers: the difference is what waits in the channels.
    pub channel_in: Counter,
    pub channel_out: Counter,
    /// MirrorMaker 2 mode: each source index's flow (`A->B`), a label of
    /// its series beside `source`.
    pub flow_names: std::sync::OnceLock<Vec<String>>,
    /// Starting, running, failed or stopping: `GET /health` (`health`).
    pub health: crate::ops::health::Health,
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

    /// The lag table, even after a panic in another thread while it held
    /// the lock: each entry is a whole `StreamLag` replaced in one insert,
    /// so a poisoned table holds only whole, if stale, reports, and a
    /// poisoned lock must not fail every later scrape and stats line for
    /// the life of the process.
    pub fn lag(&self) -> std::sync::MutexGuard<'_, HashMap<String, StreamLag>> {
        self.lag.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The per-topic table, poisoned or not: its entries are inserted
    /// whole (an `Arc` each), so a panic mid-update leaves no half entry.
    pub fn topics(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, String), Arc<TopicMetrics>>> {
        self.topics.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn total_lag(&self) -> i64 {
        self.lag().values().flat_map(|s| s.partitions.iter()).map(|(_, _, l)| *l).sum()
    }

    /// The counters of `topic` from source `source`, created on first use.
    pub fn topic(&self, source: usize, topic: &str) -> Arc<TopicMetrics> {
        let mut topics = self.topics();
        topics.entry((source, topic.to_string())).or_insert_with(|| Arc::new(TopicMetrics::new(source, topic))).clone()
    }

    /// Drops the counters of a topic deleted at the source: its series
    /// leave the page, and a topic made again with the name counts afresh.
    pub fn forget_topic(&self, source: usize, topic: &str) {
        self.topics().remove(&(source, topic.to_string()));
    }

    /// Every topic's counters, ordered by source and name.
    pub fn topics_sorted(&self) -> Vec<Arc<TopicMetrics>> {
        let topics = self.topics();
        let sorted: BTreeMap<_, _> = topics.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        sorted.into_values().collect()
    }

    /// Records waiting in the producer channels.
    pub fn channel_depth(&self) -> u64 {
        Self::get(&self.channel_in).saturating_sub(Self::get(&self.channel_out))
    }

    /// The series labels of a source index: `source`, and `flow` in MM2 mode.
    pub fn source_labels(&self, source: usize) -> String {
        match self.flow_names.get().and_then(|names| names.get(source)) {
            Some(flow) => format!("source=\"{source}\",flow=\"{flow}\""),
            None => format!("source=\"{source}\""),
        }
    }

    /// (source, topic, partition, lag) over every stream, sorted.
    pub fn partition_lags(&self) -> Vec<(usize, String, i32, i64)> {
        let lag = self.lag();
        let mut v: Vec<_> = lag.values().flat_map(|s| s.partitions.iter().map(move |(t, p, l)| (s.source, t.clone(), *p, *l))).collect();
        v.sort();
        v
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
        m.lag.lock().unwrap().insert("s0".into(), StreamLag { source: 0, partitions: vec![("t".into(), 0, 4000), ("t".into(), 1, 1000)] });
        std::thread::sleep(Duration::from_millis(20));
        let line = m.stats_line(&mut prev);
        assert!(line.contains("lag 5000") && line.contains("in flight 90") && line.contains("dropped 10"), "{line}");
        assert!(line.contains("catching up"), "{line}");
        Metrics::add(&m.produced, 90);
        m.lag.lock().unwrap().insert("s0".into(), StreamLag { source: 0, partitions: vec![("t".into(), 0, 0)] });
        let line = m.stats_line(&mut prev);
        assert!(line.contains("lag 0") && line.contains("in flight 0") && !line.contains("catching up"), "{line}");
    }

    #[test]
    fn topic_counters_are_shared_and_latency_is_per_partition() {
        let m = Metrics::default();
        let a = m.topic(0, "orders");
        let b = m.topic(0, "orders");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &m.topic(1, "orders")), "another source's topic of the same name is counted apart");
        a.acknowledged(3, Some(now_ms() - 1500), now_ms());
        a.acknowledged(0, None, now_ms());
        let l = a.latencies();
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0].0, 3);
        assert!((1500..60_000).contains(&l[0].1), "{l:?}");
        assert_eq!(m.topics_sorted().iter().map(|t| (t.source, t.topic.to_string())).collect::<Vec<_>>(), vec![(0, "orders".into()), (1, "orders".into())]);
    }
}
