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

use crate::ops::sampled::{Batch, Sampled};

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
    /// The topic's name on the target (MirrorMaker 2's remote topic), set
    /// when the stream makes its route; the `topic` label of the series
    /// named as MirrorMaker 2's.
    pub remote: std::sync::OnceLock<Arc<str>>,
    pub consumed: Counter,
    pub consumed_bytes: Counter,
    pub produced: Counter,
    pub produced_bytes: Counter,
    pub dropped: Counter,
    /// Records read and not copied by the loop guard (see `Metrics::loop_skipped`).
    pub loop_skipped: Counter,
    /// Per source partition: what MirrorMaker 2's `MirrorSourceMetrics`
    /// keeps of it (counts, rates, record age, replication latency).
    partitions: RwLock<Vec<Mutex<PartitionWindows>>>,
}

/// One source partition's MirrorMaker 2 figures, updated once per batch:
/// the consumer stream's turn ([`TopicMetrics::polled`]) and the producer
/// worker's round of acknowledgements ([`TopicMetrics::acked`]).
#[derive(Debug, Clone)]
pub struct PartitionWindows {
    /// `record-count`: records the target acknowledged.
    pub record_count: u64,
    /// `byte-count`: value bytes read from the source, as Java counts them at poll.
    pub byte_count: u64,
    records: Sampled,
    bytes: Sampled,
    age: Sampled,
    latency: Sampled,
    /// `record-age-ms` and `replication-latency-ms`: the latest values.
    pub age_last: Option<i64>,
    pub latency_last: Option<i64>,
}

/// What a scrape shows of one partition (see [`TopicMetrics::windows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionFigures {
    pub partition: i32,
    pub record_count: u64,
    pub byte_count: u64,
    pub record_rate: f64,
    pub byte_rate: f64,
    pub age_last: Option<i64>,
    /// (min, max, avg) over the window, None while it is empty.
    pub age: Option<(f64, f64, f64)>,
    pub latency_last: Option<i64>,
    pub latency: Option<(f64, f64, f64)>,
}

/// What a consumer stream read of one partition in one turn of its loop.
#[derive(Debug, Default, Clone)]
pub struct Polled {
    pub value_bytes: u64,
    /// Record ages (now minus the source timestamp), ms.
    pub age: Batch,
    pub age_last: Option<i64>,
}

impl PartitionWindows {
    fn new(now: i64) -> Self {
        PartitionWindows {
            record_count: 0,
            byte_count: 0,
            records: Sampled::new(now),
            bytes: Sampled::new(now),
            age: Sampled::new(now),
            latency: Sampled::new(now),
            age_last: None,
            latency_last: None,
        }
    }
}

impl TopicMetrics {
    fn new(source: usize, topic: &str) -> Self {
        TopicMetrics {
            source,
            topic: Arc::from(topic),
            remote: std::sync::OnceLock::new(),
            consumed: Counter::default(),
            consumed_bytes: Counter::default(),
            produced: Counter::default(),
            produced_bytes: Counter::default(),
            dropped: Counter::default(),
            loop_skipped: Counter::default(),
            partitions: RwLock::new(Vec::new()),
        }
    }

    /// Runs `f` on the partition's windows, made on first use.
    fn with_partition(&self, partition: i32, now: i64, f: impl FnOnce(&mut PartitionWindows)) {
        let Ok(p) = usize::try_from(partition) else { return };
        {
            let slots = self.partitions.read().unwrap_or_else(|e| e.into_inner());
            if let Some(slot) = slots.get(p) {
                f(&mut slot.lock().unwrap_or_else(|e| e.into_inner()));
                return;
            }
        }
        let mut slots = self.partitions.write().unwrap_or_else(|e| e.into_inner());
        while slots.len() <= p {
            slots.push(Mutex::new(PartitionWindows::new(now)));
        }
        f(&mut slots[p].lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// A round of `records` acknowledgements of `partition` at `now` (ms
    /// since the epoch), with the replication latencies of those that had a
    /// timestamp. The caller reads the clock once for a round: once per
    /// record was 2-3% of the CPU at 100 B.
    pub fn acked(&self, partition: i32, records: u64, latency: &Batch, latency_last: Option<i64>, now: i64) {
        self.with_partition(partition, now, |w| {
            w.record_count += records;
            w.records.record(&Batch::total(records, records as f64), now);
            w.latency.record(latency, now);
            if latency_last.is_some() {
                w.latency_last = latency_last;
            }
        });
    }

    /// The target acknowledged, at `now`, one record of `partition` written
    /// at `timestamp_ms` (the workers acknowledge whole rounds, [`Self::acked`]).
    #[cfg(test)]
    pub fn acknowledged(&self, partition: i32, timestamp_ms: Option<i64>, now: i64) {
        let mut latency = Batch::default();
        let last = timestamp_ms.map(|ts| now.saturating_sub(ts).max(0));
        if let Some(l) = last {
            latency.add(l as f64);
        }
        self.acked(partition, 1, &latency, last, now);
    }

    /// What a stream read of `partition` in one turn.
    pub fn polled(&self, partition: i32, p: &Polled, now: i64) {
        self.with_partition(partition, now, |w| {
            w.byte_count += p.value_bytes;
            w.bytes.record(&Batch::total(p.age.count.max(1), p.value_bytes as f64), now);
            w.age.record(&p.age, now);
            if p.age_last.is_some() {
                w.age_last = p.age_last;
            }
        });
    }

    /// Every partition's figures at `now`, for a scrape.
    pub fn windows(&self, now: i64) -> Vec<PartitionFigures> {
        let slots = self.partitions.read().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .enumerate()
            .filter_map(|(p, slot)| {
                let mut w = slot.lock().unwrap_or_else(|e| e.into_inner());
                // A partition of another stream's assignment, never seen here.
                if w.record_count == 0 && w.byte_count == 0 && w.age_last.is_none() {
                    return None;
                }
                Some(PartitionFigures {
                    partition: p as i32,
                    record_count: w.record_count,
                    byte_count: w.byte_count,
                    record_rate: w.records.rate(now),
                    byte_rate: w.bytes.rate(now),
                    age_last: w.age_last,
                    age: w.age.stats(now),
                    latency_last: w.latency_last,
                    latency: w.latency.stats(now),
                })
            })
            .collect()
    }

    /// (partition, latency in ms) for partitions with an acknowledged record.
    pub fn latencies(&self) -> Vec<(i32, i64)> {
        let slots = self.partitions.read().unwrap_or_else(|e| e.into_inner());
        slots.iter().enumerate().filter_map(|(p, w)| Some((p as i32, w.lock().unwrap_or_else(|e| e.into_inner()).latency_last?))).collect()
    }

    /// The topic's name on the target, once known; else its source name.
    pub fn remote_name(&self) -> &str {
        self.remote.get().map_or(&self.topic, |r| r)
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
    /// The stream's index within its flow (MirrorMaker 2's task number).
    pub task: usize,
    /// (topic, partition, source end offset minus committed offset)
    pub partitions: Vec<(String, i32, i64)>,
    /// Beside each of `partitions`: the end offset minus the stream's read
    /// position (Java's `records-lag`), which falls to 0 once every record
    /// is read, not once it is committed.
    pub fetch: Vec<i64>,
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
    /// Each source index's flow as MirrorMaker 2 names it (its aliases),
    /// for the series named as MirrorMaker 2's; set by the engine at start.
    pub flows: std::sync::OnceLock<Vec<FlowLabels>>,
    /// The connectors a MirrorMaker 2 worker would run for this plan, set
    /// once every flow runs (the worker series count them).
    pub connectors: std::sync::OnceLock<Vec<Connector>>,
    /// Each consumer stream's bytes, as MirrorMaker 2's replication consumer.
    pub stream_clients: Mutex<Vec<Arc<StreamClient>>>,
    /// Each producer worker, as a Connect source task's producer.
    pub producer_clients: Mutex<Vec<Arc<ProducerClient>>>,
    /// MirrorMaker 2's `checkpoint-latency-ms` per group and partition.
    pub checkpoint_latency: Mutex<BTreeMap<CheckpointKey, CheckpointLatency>>,
    /// Per flow (`A->B`): when each group's checkpoints were last current.
    pub checkpointed: Mutex<BTreeMap<String, FlowCheckpointed>>,
    /// Starting, running, failed or stopping: `GET /health` (`health`).
    pub health: crate::ops::health::Health,
}

/// A flow's checkpoint rounds, for the age of each group's checkpoints.
#[derive(Debug, Default, Clone)]
pub struct FlowCheckpointed {
    /// `emit.checkpoints.interval.seconds` (MirrorMaker 1: `--checkpoint.interval.ms`).
    pub interval: Duration,
    /// Group: ms since the epoch of the last round that left its checkpoints current.
    pub groups: BTreeMap<String, i64>,
}

/// A flow's aliases (`A->B`); MirrorMaker 1 mode names its sources
/// `source-N` and its target `target` unless checkpoint aliases are given.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowLabels {
    pub source: String,
    pub target: String,
}

impl FlowLabels {
    /// The source connector's name as a Connect-based MirrorMaker 2 (such
    /// as Strimzi's) names it: unique per flow.
    pub fn connector(&self, class: &str) -> String {
        format!("{}->{}.{class}", self.source, self.target)
    }
}

/// A connector of the plan and its tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct Connector {
    /// `A->B.MirrorSourceConnector`, ...
    pub name: String,
    pub tasks: usize,
    /// The source index of its flow, for the per-flow figures.
    pub source: usize,
    pub is_source: bool,
}

/// One consumer stream, seen as MirrorMaker 2's replication consumer of a task.
#[derive(Debug)]
pub struct StreamClient {
    pub source: usize,
    pub task: usize,
    /// Key and value bytes read.
    pub bytes: Counter,
}

/// One producer worker of a target.
#[derive(Debug)]
pub struct ProducerClient {
    /// Its Connect client id, without the quotes.
    pub client_id: String,
    /// Key and value bytes the target acknowledged.
    pub bytes: Counter,
    /// Key and value bytes handed to librdkafka and not yet reported on.
    pub queued: AtomicI64,
    /// librdkafka's `queue.buffering.max.kbytes`, in bytes.
    pub capacity: u64,
}

impl ProducerClient {
    pub fn new(client_id: String, capacity: u64) -> Self {
        ProducerClient { client_id, bytes: Counter::default(), queued: AtomicI64::new(0), capacity }
    }

    /// Room left in the send buffer (Java's `buffer-available-bytes`).
    pub fn available(&self) -> u64 {
        let queued = self.queued.load(Ordering::Relaxed).max(0) as u64;
        self.capacity.saturating_sub(queued)
    }
}

/// A checkpoint sent: (group, remote topic, partition, its timestamp in ms).
pub type CheckpointSent = (String, String, i32, i64);

/// (source alias, target alias, group, remote topic, partition)
pub type CheckpointKey = (String, String, String, String, i32);

/// One group partition's checkpoint latencies.
#[derive(Debug, Clone)]
pub struct CheckpointLatency {
    pub window: Sampled,
    pub last: i64,
    /// When the last checkpoint was acknowledged (ms since the epoch).
    pub at: i64,
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

    /// Registers a consumer stream's client.
    pub fn stream_client(&self, source: usize, task: usize) -> Arc<StreamClient> {
        let c = Arc::new(StreamClient { source, task, bytes: Counter::default() });
        self.stream_clients.lock().unwrap_or_else(|e| e.into_inner()).push(c.clone());
        c
    }

    /// Registers a producer worker's client.
    pub fn producer_client(&self, client_id: String, capacity: u64) -> Arc<ProducerClient> {
        let c = Arc::new(ProducerClient::new(client_id, capacity));
        self.producer_clients.lock().unwrap_or_else(|e| e.into_inner()).push(c.clone());
        c
    }

    /// Checkpoints written at `written` (ms) were acknowledged at `now`.
    pub fn checkpoints_acked(&self, source: &str, target: &str, written: &[CheckpointSent], now: i64) {
        let mut table = self.checkpoint_latency.lock().unwrap_or_else(|e| e.into_inner());
        for (group, topic, partition, at) in written {
            let latency = now.saturating_sub(*at).max(0);
            let key = (source.to_string(), target.to_string(), group.clone(), topic.clone(), *partition);
            let e = table.entry(key).or_insert_with(|| CheckpointLatency { window: Sampled::new(now), last: latency, at: now });
            let mut b = Batch::default();
            b.add(latency as f64);
            e.window.record(&b, now);
            e.last = latency;
            e.at = now;
        }
        // A group that stopped committing (or was deleted) leaves the page
        // after an hour rather than staying forever.
        table.retain(|_, e| now - e.at < 3_600_000);
    }

    /// A checkpoint round of `flow` read the offsets of `groups` and every
    /// checkpoint it wrote was acknowledged at `now`: their checkpoints
    /// on the target are current (written, or unchanged since).
    pub fn groups_checkpointed(&self, flow: &str, interval: Duration, groups: &[String], now: i64) {
        let mut table = self.checkpointed.lock().unwrap_or_else(|e| e.into_inner());
        let f = table.entry(flow.to_string()).or_default();
        f.interval = interval;
        for g in groups {
            f.groups.insert(g.clone(), now);
        }
    }

    /// Forgets the groups of `flow` the checkpointer no longer checkpoints.
    pub fn retain_checkpointed_groups(&self, flow: &str, keep: impl Fn(&str) -> bool) {
        if let Some(f) = self.checkpointed.lock().unwrap_or_else(|e| e.into_inner()).get_mut(flow) {
            f.groups.retain(|g, _| keep(g));
        }
    }

    /// The labels of a source index's flow.
    pub fn flow_labels(&self, source: usize) -> FlowLabels {
        self.flows.get().and_then(|f| f.get(source).cloned()).unwrap_or_else(|| FlowLabels { source: format!("source-{source}"), target: "target".into() })
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
        let gone = self.topics().remove(&(source, topic.to_string()));
        // Its checkpoint latencies go with it.
        if let Some(t) = gone {
            let alias = self.flow_labels(source).source;
            let remote = t.remote_name().to_string();
            self.checkpoint_latency.lock().unwrap_or_else(|e| e.into_inner()).retain(|(s, _, _, topic, _), _| !(*s == alias && *topic == remote));
        }
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

    /// (source, task, topic, partition, end offset minus read position)
    /// over every stream, sorted; the committed lag where a stream gave no
    /// position. Both `mirror_maker_unread_records` and MirrorMaker 2's
    /// `records-lag` (per task) are these.
    pub fn unread_lags(&self) -> Vec<(usize, usize, String, i32, i64)> {
        let lag = self.lag();
        let mut v: Vec<_> = lag
            .values()
            .flat_map(|s| s.partitions.iter().enumerate().map(move |(i, (t, p, l))| (s.source, s.task, t.clone(), *p, s.fetch.get(i).copied().unwrap_or(*l))))
            .collect();
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
        m.lag
            .lock()
            .unwrap()
            .insert("s0".into(), StreamLag { source: 0, task: 0, partitions: vec![("t".into(), 0, 4000), ("t".into(), 1, 1000)], fetch: vec![] });
        std::thread::sleep(Duration::from_millis(20));
        let line = m.stats_line(&mut prev);
        assert!(line.contains("lag 5000") && line.contains("in flight 90") && line.contains("dropped 10"), "{line}");
        assert!(line.contains("catching up"), "{line}");
        Metrics::add(&m.produced, 90);
        m.lag.lock().unwrap().insert("s0".into(), StreamLag { source: 0, task: 0, partitions: vec![("t".into(), 0, 0)], fetch: vec![] });
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
