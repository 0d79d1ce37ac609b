//! Producer workers: each owns one librdkafka producer to the target and
//! drains one bounded channel of batches (see `batch`).
//!
//! A full local queue makes the worker wait and retry, never drop. The
//! worker serves its producer's delivery reports itself, between batches
//! and while it waits, and each settles the record's offset in its stream's
//! tracker. (rust-rdkafka's `ThreadedProducer` serves them on a thread of
//! its own; librdkafka then frees every record's message and header list on
//! another thread than the one that allocated them, and each of those frees
//! takes the allocating thread's malloc arena lock.) A record the target rejects for
//! good either stops the mirror (abort mode; its offset is never committed)
//! or is skipped, logged and counted (skip mode). With `--throttle.*`, a
//! worker takes its tokens before each send (see `throttle`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use log::{error, info, warn};
use rdkafka::config::FromClientConfigAndContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{ClientConfig, ClientContext, Timestamp};

use crate::engine::mm2::offset_syncs::PartitionSyncs;
use crate::engine::pipeline::batch::{MirrorRecord, PartitionRoute, RecordMeta};
use crate::engine::pipeline::handoff::LaneRx;
use crate::engine::pipeline::offsets::AckHandle;
use crate::engine::pipeline::provenance::HEADER_C;
use crate::engine::pipeline::throttle::Throttle;
use crate::fxhash::FxHashMap;
use crate::kafka::produce::{send_lingering, MainQueue, TopicHandles};
use crate::ops::metrics::{Metrics, TopicMetrics};
use crate::ops::shutdown::{ExitStatus, Shutdown};
use crate::plan::partitioner::ByteArrayPartitioner;

/// How a record's opaque splits: the entry of its partition in the
/// worker's [`Deliveries`] above, its offset from the entry's base below.
const OFFSET_BITS: u32 = 48;
const OFFSET_MASK: usize = (1 << OFFSET_BITS) - 1;
const MAX_ROUTES: usize = 1 << (usize::BITS - OFFSET_BITS);
/// The table is swept for idle entries when it grows past a power of two
/// from here on, so entries of revoked assignments do not pile up.
const SWEEP_FROM: usize = 64;

/// What the delivery reports of a worker's records in flight settle, one
/// entry per source partition (and assignment), not one per record.
///
/// librdkafka carries one pointer-sized opaque per record to its delivery
/// report. It holds the index of the record's partition entry (high 16
/// bits) and the record's offset from that entry's base offset (low 48
/// bits), so nothing is stored per record. A table with a slot per record
/// in flight (the design before this one) cost two cache misses per record,
/// one to fill the slot and one to empty it, as the slots of a hundred
/// thousand records in flight did not stay in cache: 8% of the mirror's
/// cycles at 100 B in `perf`. A record of an offset too far past its
/// entry's base gets a new entry; while all 65,536 entries have records in
/// flight (that many partitions per worker), `put` refuses and the worker
/// serves reports and tries again, as with a full send buffer.
#[derive(Default)]
pub struct Deliveries {
    table: Mutex<RouteTable>,
}

/// A record the target acknowledged, settled with the rest of its round.
struct Delivered {
    route: usize,
    offset: i64,
    /// Where the target put it.
    down: i64,
    bytes: u64,
    timestamp: Option<i64>,
}

/// A partition's assignment, by identity: its tracker and topic name (by
/// address: the entry holds both, so neither address can be reused while
/// the key is in the table), partition and epoch.
type RouteKey = (usize, usize, i32, u64);

fn key_of(ack: &AckHandle) -> RouteKey {
    (Arc::as_ptr(&ack.tracker) as usize, Arc::as_ptr(&ack.tp.0) as *const u8 as usize, ack.tp.1, ack.epoch)
}

struct Route {
    /// The partition's handle; its offset is the entry's base.
    ack: AckHandle,
    stats: Arc<TopicMetrics>,
    /// The partition's offset-syncs, when its flow writes them.
    syncs: Option<Arc<PartitionSyncs>>,
    /// Records sent through this entry whose report has not come back.
    in_flight: usize,
}

impl Route {
    fn delta(&self, offset: i64) -> Option<usize> {
        usize::try_from(offset.checked_sub(self.ack.offset)?).ok().filter(|d| *d <= OFFSET_MASK)
    }
}

#[derive(Default)]
struct RouteTable {
    routes: Vec<Option<Route>>,
    free: Vec<usize>,
    by_key: FxHashMap<RouteKey, usize>,
    /// The entry of the last record: records come in runs of one partition.
    last: usize,
    /// Acknowledged since the last [`Deliveries::flush`], in report order.
    /// Their entries still count them in flight, so none is swept meanwhile.
    pending: Vec<Delivered>,
}

impl RouteTable {
    fn find(&self, key: RouteKey, offset: i64) -> Option<(usize, usize)> {
        let fits = |i: usize| {
            let r = self.routes.get(i)?.as_ref()?;
            (key_of(&r.ack) == key).then(|| r.delta(offset)).flatten().map(|d| (i, d))
        };
        fits(self.last).or_else(|| fits(*self.by_key.get(&key)?))
    }

    fn insert(&mut self, key: RouteKey, route: &PartitionRoute, base: i64) -> Option<usize> {
        let len = self.routes.len();
        if self.free.is_empty() && (len >= MAX_ROUTES || (len >= SWEEP_FROM && len.is_power_of_two())) {
            self.sweep();
        }
        let route = Route { ack: AckHandle { offset: base, ..route.ack.clone() }, stats: route.stats.clone(), syncs: route.syncs.clone(), in_flight: 0 };
        let i = match self.free.pop() {
            Some(i) => {
                self.routes[i] = Some(route);
                i
            }
            None if len < MAX_ROUTES => {
                self.routes.push(Some(route));
                len
            }
            None => return None,
        };
        self.by_key.insert(key, i);
        Some(i)
    }

    /// Frees the entries with nothing in flight.
    fn sweep(&mut self) {
        for i in 0..self.routes.len() {
            if self.routes[i].as_ref().is_some_and(|r| r.in_flight == 0) {
                let key = key_of(&self.routes[i].take().expect("checked above").ack);
                if self.by_key.get(&key) == Some(&i) {
                    self.by_key.remove(&key);
                }
                self.free.push(i);
            }
        }
    }
}

impl Deliveries {
    /// The opaque of a record of `route`'s partition at `offset`, counted in flight until
    /// [`settle`](Self::settle) takes it back; None while no entry is free.
    fn put(&self, route: &PartitionRoute, offset: i64) -> Option<usize> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let key = key_of(&route.ack);
        let (i, delta) = match t.find(key, offset) {
            Some(found) => found,
            None => (t.insert(key, route, offset)?, 0),
        };
        t.last = i;
        t.routes[i].as_mut().expect("found or inserted").in_flight += 1;
        Some(i << OFFSET_BITS | delta)
    }

    /// Takes back a record put in flight and hands `f` its partition's
    /// handle, its offset and its topic's counters; None for an opaque that
    /// is not in flight, which settles nothing.
    fn settle<R>(&self, opaque: usize, f: impl FnOnce(&AckHandle, i64, &TopicMetrics) -> R) -> Option<R> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let r = t.routes.get_mut(opaque >> OFFSET_BITS)?.as_mut().filter(|r| r.in_flight > 0)?;
        r.in_flight -= 1;
        Some(f(&r.ack, r.ack.offset + (opaque & OFFSET_MASK) as i64, &r.stats))
    }

    /// A record the target acknowledged, settled and counted with the rest
    /// of its round by [`flush`](Self::flush); false for an opaque not in
    /// flight, which settles nothing.
    fn delivered(&self, opaque: usize, bytes: u64, timestamp: Option<i64>, down: i64) -> bool {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let route = opaque >> OFFSET_BITS;
        let Some(r) = t.routes.get(route).and_then(Option::as_ref).filter(|r| r.in_flight > 0) else { return false };
        let offset = r.ack.offset + (opaque & OFFSET_MASK) as i64;
        t.pending.push(Delivered { route, offset, down, bytes, timestamp });
        true
    }

    /// Settles and counts the records acknowledged since the last call: one
    /// tracker lock, one clock reading and one bump of each counter per run
    /// of a partition's records, not per record.
    fn flush(&self, metrics: &Metrics) {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if t.pending.is_empty() {
            return;
        }
        let now = crate::ops::metrics::now_ms();
        let mut pending = std::mem::take(&mut t.pending);
        for run in pending.chunk_by(|a, b| a.route == b.route) {
            let r = t.routes[run[0].route].as_mut().expect("counted in flight, so never swept");
            r.in_flight -= run.len();
            if let Some(syncs) = &r.syncs {
                // Before the offsets settle: a commit never runs ahead of the syncs it needs.
                syncs.acknowledged(run.iter().map(|d| (d.offset, d.down)));
            }
            r.ack.done_all(run.iter().map(|d| d.offset));
            let (records, bytes) = (run.len() as u64, run.iter().map(|d| d.bytes).sum());
            Metrics::add(&metrics.produced, records);
            Metrics::add(&metrics.produced_bytes, bytes);
            Metrics::add(&r.stats.produced, records);
            Metrics::add(&r.stats.produced_bytes, bytes);
            if let Some(ts) = run.iter().rev().find_map(|d| d.timestamp) {
                r.stats.acknowledged(r.ack.tp.1, Some(ts), now);
            }
        }
        pending.clear();
        t.pending = pending;
    }

    /// Records in flight.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.table.lock().unwrap().routes.iter().flatten().map(|r| r.in_flight).sum()
    }
}

/// Delivery-report handling shared by a worker's producer.
pub struct DeliveryContext {
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<Shutdown>,
    pub abort_on_send_failure: bool,
    /// The target cluster and its file, for messages.
    pub cluster: String,
    /// 0.8's ByteArrayPartitioner, when the producer file names it.
    pub partitioner: Option<ByteArrayPartitioner>,
    /// What each in-flight record's delivery report must settle.
    pub deliveries: Deliveries,
    /// Records whose failure says nothing about the record itself, to send
    /// again (see [`Resends`]).
    pub resends: Resends,
    /// The topic sync makes this target's topics (`--create.topics`, MM2):
    /// a record whose target topic is gone (deleted under us) waits for
    /// the topic sync to make it again like the source, instead of being
    /// refused (issue #26 item 3).
    pub await_gone_topics: bool,
    /// Since when each target topic awaited so has been found missing: the
    /// wait is per topic, not per record (see [`GONE_TOPIC_WAIT`]).
    pub gone_since: GoneTopics,
}

/// Delivery failures that are not the target refusing the record: the
/// record goes again, its offset still in flight, instead of being skipped
/// or stopping the mirror.
///
/// - A batch the broker refuses as too large fails every record in it,
///   though perhaps only one of them is too large, or none is and only the
///   batch is. The worker sends each again alone (nothing else in flight,
///   so each travels in a batch of its own): only a record refused alone is
///   refused for good. Java's producer splits such batches the same way.
///   They land after records of their partitions sent meanwhile.
/// - An explicit partition librdkafka does not know yet (partition-preserving
///   mode, the target just grown), or one it dropped: its metadata is asked
///   again, and the record sent once the partition is there, or refused if
///   the target no longer has the topic.
/// - Errors of the idempotent producer's sequence state, which librdkafka
///   recovers from by bumping its epoch.
///
/// A fatal error is none of these: the producer instance can send nothing
/// more, so the mirror stops and commits nothing past what was delivered.
#[derive(Default)]
pub struct Resends {
    queue: Mutex<Vec<Resend>>,
    /// Set while the worker sends records alone.
    alone: AtomicBool,
    /// While alone: how many times the record in flight was sent again before.
    tries: AtomicU32,
    /// Set once librdkafka reported a fatal error for this producer.
    fatal: AtomicBool,
}

/// A record to send again, as its failed delivery report carried it.
struct Resend {
    opaque: usize,
    topic: String,
    partition: i32,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Option<OwnedHeaders>,
    timestamp: Option<i64>,
    /// Times sent again already.
    tries: u32,
    err: KafkaError,
}

/// How many times a record failing with the idempotent producer's sequence
/// errors is sent again before the mirror stops on it (never skipped).
const MAX_STATE_RESENDS: u32 = 10;

impl Resend {
    /// Key plus value bytes, as counted on the consumer side.
    fn size(&self) -> usize {
        self.key.as_ref().map_or(0, Vec::len) + self.value.as_ref().map_or(0, Vec::len)
    }
}

impl Resends {
    fn is_empty(&self) -> bool {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    fn take(&self) -> Vec<Resend> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn push(&self, r: Resend) {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    }

    fn is_fatal(&self) -> bool {
        self.fatal.load(Ordering::SeqCst)
    }
}

/// What a failed delivery report calls for.
#[derive(Debug, PartialEq)]
enum Failure {
    /// Purged: at shutdown past the drain deadline, or after a fatal error.
    Purged,
    /// The producer instance is broken.
    Fatal,
    /// Send the record again (see [`Resends`]).
    Resend,
    /// The target refuses the record itself: abort or skip, as configured.
    Permanent,
}

/// Sorts a failed delivery: `alone` says whether the record was sent alone,
/// `fatal` whether librdkafka reported a fatal error, `tries` how many times
/// it was sent again already.
fn classify(code: Option<RDKafkaErrorCode>, alone: bool, fatal: bool, tries: u32, await_gone_topics: bool) -> Failure {
    use RDKafkaErrorCode::*;
    match code {
        Some(PurgeQueue | PurgeInflight) => Failure::Purged,
        Some(Fatal) => Failure::Fatal,
        _ if fatal => Failure::Fatal,
        // The target topic is gone and the topic sync makes it again: the
        // record waits for it (see `wait_for_partition`).
        Some(UnknownTopic | UnknownTopicOrPartition) if await_gone_topics => Failure::Resend,
        Some(MessageSizeTooLarge | MessageBatchTooLarge) if !alone => Failure::Resend,
        // A partition librdkafka no longer has: its topic was deleted, or
        // its count shrank in librdkafka's view (records in flight then fail
        // with BrokerDestroy). The wait for the partition tells a topic gone
        // (refused) from stale metadata (sent again).
        Some(UnknownPartition | BrokerDestroy) => Failure::Resend,
        Some(OutOfOrderSequenceNumber | UnknownProducerId | InvalidProducerEpoch) if tries < MAX_STATE_RESENDS => Failure::Resend,
        Some(OutOfOrderSequenceNumber | UnknownProducerId | InvalidProducerEpoch) => Failure::Fatal,
        _ => Failure::Permanent,
    }
}

impl ClientContext for DeliveryContext {
    fn error(&self, error: KafkaError, reason: &str) {
        // librdkafka would retry refused credentials forever: stop instead.
        if let Some(msg) = crate::kafka::auth::auth_failure(error.rdkafka_error_code(), reason, &self.cluster) {
            if !self.shutdown.stopping() {
                error!("{msg}");
            }
            self.shutdown.fail(ExitStatus::Config, msg);
            return;
        }
        if self.shutdown.status() == ExitStatus::Config {
            // The reconnect noise that follows refused credentials.
            log::debug!("target producer: {error}: {reason}");
            return;
        }
        if matches!(error.rdkafka_error_code(), Some(RDKafkaErrorCode::Fatal)) {
            // Reported on the same queue as the delivery reports and before
            // the failures it causes, so those see the flag.
            self.resends.fatal.store(true, Ordering::SeqCst);
            let msg = format!(
                "target producer fatal error: {reason}; this producer can send nothing more, so the mirror stops and commits nothing past \
                 the last record the target acknowledged (a restart sends the rest)"
            );
            if !self.shutdown.stopping() {
                error!("{msg}");
            }
            self.shutdown.fail(ExitStatus::Failure, msg);
            return;
        }
        match crate::ops::repeats::check(&format!("target producer {} {:?}", self.cluster, error.rdkafka_error_code())) {
            Some(left_out) => error!("target producer: {error}: {reason}{}", crate::ops::repeats::note(left_out)),
            None => log::debug!("target producer: {error}: {reason}"),
        }
    }
}

impl DeliveryContext {
    /// Settles what the reports served since the last call acknowledged.
    fn settle_delivered(&self) {
        self.deliveries.flush(&self.metrics);
    }

    /// A record the producer could not send because the producer itself is
    /// broken: never skipped, whatever --abort.on.send.failure says; nothing
    /// at or after it is committed, and the mirror stops.
    fn fatal_failure(&self, ack: &AckHandle, offset: i64, err: &KafkaError) {
        self.resends.fatal.store(true, Ordering::SeqCst);
        ack.failed_at(offset);
        let (topic, partition) = (&ack.tp.0, ack.tp.1);
        let msg = format!(
            "target producer can no longer send ({err}): offset {offset} of {topic}-{partition} and later are not committed; \
             the mirror stops, and a restart sends them again"
        );
        if self.shutdown.status() == ExitStatus::Ok {
            error!("{msg}");
        } else {
            log::debug!("{msg}");
        }
        self.shutdown.fail(ExitStatus::Failure, msg);
    }

    /// A failed delivery report, sorted by [`classify`].
    fn failed(&self, opaque: usize, err: &KafkaError, msg: &BorrowedMessage<'_>, tries: u32) {
        let mut failure = classify(err.rdkafka_error_code(), self.resends.alone.load(Ordering::SeqCst), self.resends.is_fatal(), tries, self.await_gone_topics);
        // A record sent again keeps its source timestamp, which only the
        // private message struct still holds once delivery failed; without
        // it the record cannot go again unchanged, so the mirror stops.
        let timestamp = if failure == Failure::Resend { crate::kafka::fetched::produced_timestamp(msg) } else { None };
        if failure == Failure::Resend && timestamp.is_none() {
            failure = Failure::Fatal;
        }
        if failure == Failure::Resend {
            self.resends.push(Resend {
                opaque,
                topic: msg.topic().to_string(),
                partition: msg.partition(),
                key: msg.key().map(<[u8]>::to_vec),
                value: msg.payload().map(<[u8]>::to_vec),
                headers: msg.headers().map(|h| h.detach()),
                timestamp,
                tries,
                err: err.clone(),
            });
            return;
        }
        let known = self.deliveries.settle(opaque, |ack, offset, stats| match failure {
            // Not delivered, not awaited any more, never committed past;
            // sent again after a restart.
            Failure::Purged => ack.failed_at(offset),
            Failure::Fatal => self.fatal_failure(ack, offset, err),
            _ => self.permanent_failure(ack, offset, stats, msg.topic(), payload_len(msg), err),
        });
        if known.is_none() {
            error!("delivery report for an unknown record (opaque {opaque:#x}); its offset stays uncommitted");
        }
    }

    /// A record `producer` refused at once: its instance is broken (fatal),
    /// or the record is refused for good (abort or skip, as configured).
    fn refused_at_send(&self, producer: &TargetProducer, opaque: usize, topic: &str, size: usize, err: &KafkaError) {
        let fatal = matches!(err.rdkafka_error_code(), Some(RDKafkaErrorCode::Fatal)) || producer.client().fatal_error().is_some();
        self.deliveries.settle(opaque, |ack, offset, stats| {
            if fatal {
                self.fatal_failure(ack, offset, err);
            } else {
                self.permanent_failure(ack, offset, stats, topic, size, err);
            }
        });
    }

    /// A record the target will never take: abort or skip, as configured.
    fn permanent_failure(&self, ack: &AckHandle, offset: i64, stats: &TopicMetrics, target_topic: &str, size: usize, err: &KafkaError) {
        let (topic, partition) = (&ack.tp.0, ack.tp.1);
        let hint = match err.rdkafka_error_code() {
            Some(RDKafkaErrorCode::MessageSizeTooLarge) => {
                " (the record, or the batch it was sent in, is larger than the target topic's max.message.bytes or the producer's \
                 message.max.bytes/max.request.size; raise the limit on the target topic, or lower batch.size in the producer file)"
            }
            Some(RDKafkaErrorCode::TopicAuthorizationFailed) => " (the producer's principal may not write to this topic; grant WRITE on it)",
            Some(RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic | RDKafkaErrorCode::UnknownPartition) => {
                " (the topic does not exist on the target and the broker does not create topics; create it first)"
            }
            _ => "",
        };
        let what = format!("Error when sending message to topic {target_topic} ({size} bytes) from source {topic}-{partition} at offset {offset}: {err}{hint}");
        if self.abort_on_send_failure {
            ack.failed_at(offset);
            // The first failure says it all; the records behind it fail the
            // same way while the mirror stops, so they go to the debug log.
            if self.shutdown.status() == ExitStatus::Failure {
                log::debug!("{what}");
                return;
            }
            error!("{what}");
            error!("Closing producer due to send failure (--abort.on.send.failure true): offset {offset} of {topic}-{partition} and later are not committed");
            self.shutdown.fail(ExitStatus::Failure, what);
        } else {
            warn!("{what}; skipped and counted as dropped (--abort.on.send.failure false)");
            Metrics::add(&self.metrics.dropped, 1);
            Metrics::add(&stats.dropped, 1);
            ack.done_at(offset);
        }
    }
}

/// Key plus value bytes, as counted on the consumer side.
fn payload_len(msg: &impl Message) -> usize {
    msg.key().map_or(0, <[u8]>::len) + msg.payload().map_or(0, <[u8]>::len)
}

impl ProducerContext<ByteArrayPartitioner> for DeliveryContext {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, opaque: usize) {
        let known = match result {
            // The timestamp the record was sent with: the source's, which
            // the mirror keeps. A target topic with LogAppendTime reports
            // its own instead, which times nothing; a record the source had
            // none for was stamped when sent.
            Ok(msg) => {
                let timestamp = match msg.timestamp() {
                    Timestamp::CreateTime(ts) => Some(ts),
                    _ => None,
                };
                self.deliveries.delivered(opaque, payload_len(msg) as u64, timestamp, msg.offset())
            }
            Err((err, msg)) => {
                // Only a record sent alone can have been sent before.
                let tries = if self.resends.alone.load(Ordering::SeqCst) { self.resends.tries.load(Ordering::SeqCst) } else { 0 };
                self.failed(opaque, err, msg, tries);
                true
            }
        };
        if !known {
            // Every record sent is in flight until this report: a report
            // for one that is not would be a bug, and must not settle anything.
            error!("delivery report for an unknown record (opaque {opaque:#x}); its offset stays uncommitted");
        }
    }

    fn get_custom_partitioner(&self) -> Option<&ByteArrayPartitioner> {
        self.partitioner.as_ref()
    }
}

/// A worker's producer: polled by the worker itself.
pub type TargetProducer = BaseProducer<DeliveryContext, ByteArrayPartitioner>;

pub fn create<P: FromClientConfigAndContext<DeliveryContext>>(config: &ClientConfig, ctx: DeliveryContext) -> Result<P, KafkaError> {
    config.create_with_context(ctx)
}

/// How long an idle worker waits for a batch before serving delivery
/// reports again: short while records are in flight, so acknowledgements
/// (and the commits behind them) do not wait on the next batch.
const IDLE_WAIT_IN_FLIGHT: Duration = Duration::from_millis(1);
const IDLE_WAIT: Duration = Duration::from_millis(100);
/// Records sent between two rounds of delivery reports within a batch.
const SERVE_EVERY: usize = 64;
/// The longest wait for room in a full send buffer before serving reports
/// again: reports not served keep their records counted in the buffer.
const MAX_FULL_BACKOFF: Duration = Duration::from_millis(1);

/// Serves a worker's delivery reports on the worker's own thread.
///
/// Only rust-rdkafka's non-blocking poll is used: with a timeout it rounds
/// the time left down to whole milliseconds and spins through the last one
/// (waiting in it for room in a full buffer cost 28% more CPU at 1 KiB).
/// The worker waits on its channel or sleeps instead, and each round serves
/// exactly the events librdkafka has ready, counted on its own handle of
/// the producer's main queue (where reports arrive).
struct Reports<'p> {
    producer: &'p TargetProducer,
    queue: MainQueue<'p>,
}

impl<'p> Reports<'p> {
    fn new(producer: &'p TargetProducer) -> Reports<'p> {
        Reports { producer, queue: MainQueue::of(producer.client()) }
    }

    fn serve(&self) {
        // Bounded, so a flood of reports cannot keep records from being sent.
        for _ in 0..1024 {
            if self.queue.is_empty() {
                break;
            }
            self.producer.poll(Duration::ZERO);
        }
        self.producer.context().settle_delivered();
    }
}

/// Serves whatever events a producer not yet handed to its worker has
/// ready: delivery reports, and errors such as refused credentials, which
/// stop the mirror.
pub fn serve_ready_events(producer: &TargetProducer) {
    Reports::new(producer).serve();
}

/// Runs one worker until every sender of its channel is gone, then flushes
/// within the drain deadline.
pub fn spawn_worker(index: usize, producer: TargetProducer, rx: LaneRx, shutdown: Arc<Shutdown>, throttle: Option<Arc<Throttle>>) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(format!("mirrormaker-producer-{index}"))
        .spawn(move || {
            let metrics = producer.context().metrics.clone();
            let mut topics = TopicHandles::new(producer.client());
            let reports = Reports::new(&producer);
            loop {
                reports.serve();
                if !producer.context().resends.is_empty() {
                    resend_alone(&producer, &reports, &shutdown);
                }
                let wait = if producer.in_flight_count() > 0 { IDLE_WAIT_IN_FLIGHT } else { IDLE_WAIT };
                let batch = match rx.recv_timeout(wait) {
                    Ok(batch) => batch,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                Metrics::add(&metrics.channel_out, batch.len() as u64);
                let (records, bytes, routes) = batch.into_parts();
                for (i, rec) in records.into_iter().enumerate() {
                    if i % SERVE_EVERY == SERVE_EVERY - 1 {
                        reports.serve();
                    }
                    // Waiting here fills the channel, which pauses the source: backpressure, no drops.
                    if let Some(t) = &throttle {
                        if !t.take(rec.size(), || shutdown.deadline_passed()) {
                            // Past the drain deadline: never sent, never acknowledged, so never committed.
                            shutdown.drain_timed_out();
                            continue;
                        }
                    }
                    send(&producer, &reports, &mut topics, &routes, &bytes, rec, &shutdown);
                }
            }
            drop(topics);
            let left = producer.in_flight_count();
            if left > 0 {
                info!("Flushing producer ({left} records in flight).");
            }
            // Not rust-rdkafka's flush: the reports it serves would be
            // settled only once it returns (see Deliveries::flush), and the
            // streams, waiting for them until the same deadline, could give
            // up first and commit less.
            let drained = loop {
                send_lingering(producer.client());
                reports.serve();
                if !producer.context().resends.is_empty() && !resend_alone(&producer, &reports, &shutdown) {
                    break false;
                }
                if producer.in_flight_count() == 0 && producer.context().resends.is_empty() {
                    break true;
                }
                if shutdown.deadline_passed() {
                    break false;
                }
                thread::sleep(IDLE_WAIT_IN_FLIGHT);
            };
            drop(reports);
            if !drained {
                warn!(
                    "producer {index}: {} records were not acknowledged by the target within the drain timeout; their offsets are not committed",
                    producer.in_flight_count()
                );
                shutdown.drain_timed_out();
            }
        })
        .expect("spawn producer worker")
}

/// Sends one record whose key and value are in `bytes`, its batch's buffer.
///
/// The retry loop stays here, its slow branches in the steps below: room in
/// a full send buffer ([`wait_for_room`]) and a partition the target does
/// not have yet ([`partition_or_refuse`]).
#[allow(clippy::too_many_arguments)]
fn send(
    producer: &TargetProducer,
    reports: &Reports<'_>,
    topics: &mut TopicHandles<'_>,
    routes: &[Arc<PartitionRoute>],
    bytes: &[u8],
    rec: MirrorRecord,
    shutdown: &Shutdown,
) {
    let size = rec.size();
    let (key, value) = (rec.key(bytes), rec.value(bytes));
    let route = rec.route(routes);
    let RecordMeta { offset, partition, headers, stamp, timestamp } = rec.meta;
    let (topic, stamp) = (&route.target, if stamp { route.stamp.as_deref() } else { None });
    let ctx = producer.context();
    let Some(opaque) = put_in_flight(ctx, reports, route, offset, shutdown) else { return };
    let direct = if headers.is_none() { topics.get(topic) } else { None };
    let mut record = match direct {
        Some(_) => None,
        None => {
            let headers = match (headers, stamp) {
                (None, Some(id)) => Some(crate::engine::pipeline::provenance::stamped(None, id)),
                (h, _) => h,
            };
            Some(built_record(topic, opaque, key, value, headers, timestamp, partition))
        }
    };
    let mut backoff = Duration::from_micros(200);
    loop {
        let result = match (direct, record.take()) {
            (Some(rkt), _) => topics.produce(rkt, partition, key, value, opaque, timestamp, stamp.map(|id| (HEADER_C, id))),
            (None, Some(r)) => producer.send(r).map_err(|(e, back)| {
                record = Some(back);
                e
            }),
            (None, None) => unreachable!("a record not produced directly is built above"),
        };
        match result {
            Ok(()) => return,
            Err(KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull)) => {
                if !wait_for_room(ctx, reports, opaque, &mut backoff, shutdown) {
                    return;
                }
            }
            Err(KafkaError::MessageProduction(code)) if partition.is_some() && waits_for_partition(ctx, code) => {
                // An explicit partition past the count librdkafka last saw:
                // stale metadata (the target just grew), not a refusal; or
                // a topic gone that the topic sync makes again.
                let p = partition.unwrap_or_default();
                if !partition_or_refuse(producer, reports, topic, p, opaque, size, shutdown) {
                    return;
                }
            }
            Err(err) => {
                ctx.refused_at_send(producer, opaque, topic, size, &err);
                return;
            }
        }
    }
}

/// Puts a record about to be sent in flight and returns its opaque, or
/// `None` once the drain deadline passed while every entry had records in
/// flight (the record is then not sent). A step of its own so `send` reads
/// as its retry loop; inlined, as it runs once per record.
#[inline]
fn put_in_flight(ctx: &DeliveryContext, reports: &Reports<'_>, route: &PartitionRoute, offset: i64, shutdown: &Shutdown) -> Option<usize> {
    loop {
        match ctx.deliveries.put(route, offset) {
            Some(opaque) => return Some(opaque),
            // Every entry has records in flight: their reports free one.
            None => {
                if shutdown.deadline_passed() {
                    shutdown.drain_timed_out();
                    return None;
                }
                reports.serve();
                thread::sleep(MAX_FULL_BACKOFF);
            }
        }
    }
}

/// The record librdkafka copies, for one with headers of its own or a
/// topic without a direct handle; inlined, as it may run once per record.
#[inline]
fn built_record<'a>(
    topic: &'a str,
    opaque: usize,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    headers: Option<OwnedHeaders>,
    timestamp: Option<i64>,
    partition: Option<i32>,
) -> BaseRecord<'a, [u8], [u8], usize> {
    let mut record: BaseRecord<'_, [u8], [u8], usize> = BaseRecord::with_opaque_to(topic, opaque);
    // librdkafka copies key and value into its send buffer here.
    if let Some(k) = key {
        record = record.key(k);
    }
    if let Some(v) = value {
        record = record.payload(v);
    }
    if let Some(h) = headers {
        record = record.headers(h);
    }
    if let Some(ts) = timestamp {
        record = record.timestamp(ts);
    }
    if let Some(p) = partition {
        record = record.partition(p);
    }
    record
}

/// A full send buffer: serves delivery reports (what frees room in it) and
/// waits `backoff`, doubled up to [`MAX_FULL_BACKOFF`] for the next try.
/// Returns false once the drain deadline passed: the record is abandoned
/// unacknowledged, so its offset is never committed.
fn wait_for_room(ctx: &DeliveryContext, reports: &Reports<'_>, opaque: usize, backoff: &mut Duration, shutdown: &Shutdown) -> bool {
    // The target is slow or away: wait, never drop. Past the
    // drain deadline the record is abandoned unacknowledged, so
    // its offset is never committed.
    if shutdown.deadline_passed() {
        ctx.deliveries.settle(opaque, |_, _, _| ());
        shutdown.drain_timed_out();
        return false;
    }
    // Serving delivery reports is what frees room in the buffer.
    reports.serve();
    thread::sleep(*backoff);
    reports.serve();
    *backoff = (*backoff * 2).min(MAX_FULL_BACKOFF);
    true
}

/// An explicit partition librdkafka does not know: waits for it (see
/// [`wait_for_partition`]). Returns true to send the record again, false
/// once it is settled: refused as its topic is gone, or abandoned
/// unacknowledged past the drain deadline.
fn partition_or_refuse(producer: &TargetProducer, reports: &Reports<'_>, topic: &str, partition: i32, opaque: usize, size: usize, shutdown: &Shutdown) -> bool {
    let ctx = producer.context();
    match wait_for_partition(producer, reports, topic, partition, shutdown) {
        PartitionWait::Ready => true,
        PartitionWait::TopicGone => {
            ctx.refused_at_send(producer, opaque, topic, size, &topic_gone());
            false
        }
        PartitionWait::DeadlinePassed => {
            ctx.deliveries.settle(opaque, |_, _, _| ());
            shutdown.drain_timed_out();
            false
        }
    }
}

/// Since when each target topic awaited by [`wait_for_partition`] has been
/// found missing: the wait is per topic, not per record, so that a topic
/// that never comes back costs [`GONE_TOPIC_WAIT`] once, not once per record.
#[derive(Default)]
pub struct GoneTopics(Mutex<std::collections::HashMap<String, std::time::Instant>>);

impl GoneTopics {
    /// Whether records for `topic`, found missing at `now`, still wait for
    /// the topic sync to make it again.
    fn awaited(&self, topic: &str, now: std::time::Instant) -> bool {
        let mut gone = self.0.lock().unwrap_or_else(|e| e.into_inner());
        now.duration_since(*gone.entry(topic.to_string()).or_insert(now)) < GONE_TOPIC_WAIT
    }

    /// `topic` is on the target (again).
    fn found(&self, topic: &str) {
        let mut gone = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !gone.is_empty() {
            gone.remove(topic);
        }
    }
}

/// Whether a record refused with `code` at send waits for its partition
/// (or, where the topic sync makes gone topics again, for its topic).
fn waits_for_partition(ctx: &DeliveryContext, code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode::*;
    code == UnknownPartition || (ctx.await_gone_topics && matches!(code, UnknownTopic | UnknownTopicOrPartition))
}

/// How long a record for a partition the target does not have (yet) waits
/// between two looks at the target's metadata.
const PARTITION_WAIT: Duration = Duration::from_secs(1);
/// How often that wait is logged.
const PARTITION_WAIT_LOG: Duration = Duration::from_secs(30);
/// The longest a record waits for a target topic that does not exist for
/// the topic sync to make it again (`await_gone_topics`): a few topic
/// refreshes. One the topic sync cannot make (its creation refused for
/// good, by an ACL or a create-topic policy, each logged by the topic sync)
/// is then refused as any gone topic is, rather than holding its worker
/// for ever.
const GONE_TOPIC_WAIT: Duration = Duration::from_secs(300);

/// How a wait for a target partition ended.
#[derive(Debug, PartialEq)]
enum PartitionWait {
    /// librdkafka's metadata has the partition now.
    Ready,
    /// The target says the topic does not exist (deleted, with auto-create
    /// off): not stale metadata, so the record is refused as before.
    TopicGone,
    /// The drain deadline passed first.
    DeadlinePassed,
}

/// The refusal a record gets when its target topic is gone.
fn topic_gone() -> KafkaError {
    KafkaError::MessageProduction(RDKafkaErrorCode::UnknownTopicOrPartition)
}

/// Waits until librdkafka's metadata has `partition` of `topic`, asking the
/// target again every [`PARTITION_WAIT`] (a metadata answer updates the
/// producer's view of the topic) and serving delivery reports meanwhile.
/// Only a topic that exists with fewer partitions is waited for: one the
/// target answers it does not have ends the wait at once.
fn wait_for_partition(producer: &TargetProducer, reports: &Reports<'_>, topic: &str, partition: i32, shutdown: &Shutdown) -> PartitionWait {
    let started = std::time::Instant::now();
    let mut logged: Option<std::time::Instant> = None;
    loop {
        // Every topic, not this one by name: the producer's handle lets the
        // broker auto-create a topic a metadata request names, and a target
        // topic deleted under us would come back with the broker's
        // num.partitions instead of being reported gone. The answer still
        // updates the producer's view of the topic, which is what the send
        // needs.
        let found = match producer.client().fetch_metadata(None, PARTITION_WAIT * 5) {
            // An answer without the topic, with an error for it, or with no
            // partitions: the target does not have it.
            Ok(md) => match md.topics().iter().find(|t| t.name() == topic) {
                Some(t) if t.error().is_none() && !t.partitions().is_empty() => {
                    producer.context().gone_since.found(topic);
                    Some(t.partitions().len())
                }
                // Made again by the topic sync (deleted under us): wait, a while.
                _ if producer.context().await_gone_topics && producer.context().gone_since.awaited(topic, std::time::Instant::now()) => Some(0),
                _ => return PartitionWait::TopicGone,
            },
            // No answer (the target away): keep asking.
            Err(e) => {
                log::debug!("target metadata for {topic}: {e}");
                None
            }
        };
        if found.is_some_and(|n| n > partition as usize) {
            if logged.is_some() {
                info!("target topic {topic} has partition {partition} now; its records go on after {:.1} s", started.elapsed().as_secs_f64());
            }
            return PartitionWait::Ready;
        }
        if shutdown.deadline_passed() {
            return PartitionWait::DeadlinePassed;
        }
        if logged.is_none_or(|t| t.elapsed() >= PARTITION_WAIT_LOG) && found == Some(0) {
            logged = Some(std::time::Instant::now());
            warn!(
                "target topic {topic} does not exist (deleted on the target?): its records wait for the topic sync to make it again like the source \
                 (looked at every topic refresh); this worker's other records wait behind them"
            );
        } else if logged.is_none_or(|t| t.elapsed() >= PARTITION_WAIT_LOG) {
            logged = Some(std::time::Instant::now());
            warn!(
                "a record for partition {partition} of target topic {topic} waits: the target has {} partitions; \
                 it is sent as soon as the partition exists (add partitions to {topic} on the target, or let --sync.partitions do it); \
                 this worker's other records wait behind it",
                found.map_or("no metadata for it, or no".to_string(), |n| n.to_string())
            );
        }
        let until = std::time::Instant::now() + PARTITION_WAIT;
        while std::time::Instant::now() < until && !shutdown.deadline_passed() {
            reports.serve();
            thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Sends again, one at a time and each alone, the records whose failure
/// said nothing about them (see [`Resends`]). First waits for everything in
/// flight to be settled, so that nothing shares a batch with the record
/// sent; then sends each and waits for its report. A record that fails
/// again goes back to the queue (or, if it was refused alone as too large,
/// is refused for good). Returns false once the drain deadline passed: the
/// records left are abandoned unacknowledged, so their offsets are never
/// committed.
fn resend_alone(producer: &TargetProducer, reports: &Reports<'_>, shutdown: &Shutdown) -> bool {
    let ctx = producer.context();
    if !settle_all(producer, reports, shutdown) {
        return abandon(ctx, ctx.resends.take(), shutdown);
    }
    let mut queue = ctx.resends.take();
    // Report order is send order within a partition; by opaque keeps each
    // partition's records in offset order (same entry, rising delta).
    queue.sort_by_key(|r| r.opaque);
    if let Some(first) = queue.first() {
        info!("sending {} records again one at a time ({}, first from target topic {} partition {})", queue.len(), first.err, first.topic, first.partition);
    }
    ctx.resends.alone.store(true, Ordering::SeqCst);
    // Topics the target said it does not have, asked once per round.
    let mut gone: Vec<String> = Vec::new();
    let mut left = queue.into_iter();
    let ok = loop {
        let Some(r) = left.next() else { break true };
        if !resend_one(producer, reports, shutdown, &r, &mut gone) {
            break false;
        }
    };
    ctx.resends.alone.store(false, Ordering::SeqCst);
    if !ok {
        let mut rest: Vec<Resend> = left.collect();
        rest.extend(ctx.resends.take());
        return abandon(ctx, rest, shutdown);
    }
    true
}

/// Waits until every record `producer` has in flight is settled, so that
/// the next record sent travels alone. Returns false once the drain
/// deadline passed.
fn settle_all(producer: &TargetProducer, reports: &Reports<'_>, shutdown: &Shutdown) -> bool {
    while producer.in_flight_count() > 0 {
        if shutdown.deadline_passed() {
            return false;
        }
        send_lingering(producer.client());
        reports.serve();
        thread::sleep(IDLE_WAIT_IN_FLIGHT);
    }
    true
}

/// Past the drain deadline: the records `left` to send again are settled
/// unacknowledged, so their offsets are never committed. Returns false, as
/// [`resend_alone`] then does.
fn abandon(ctx: &DeliveryContext, left: Vec<Resend>, shutdown: &Shutdown) -> bool {
    for r in left {
        ctx.deliveries.settle(r.opaque, |_, _, _| ());
    }
    shutdown.drain_timed_out();
    false
}

/// One step of [`resend_alone`]: sends `r` alone and waits for its report,
/// or settles it without sending (the producer broken, its topic in `gone`
/// or found gone now, librdkafka refusing it at once). Returns false once
/// the drain deadline passed; `r` is then settled unacknowledged only if it
/// was waiting for its partition.
fn resend_one(producer: &TargetProducer, reports: &Reports<'_>, shutdown: &Shutdown, r: &Resend, gone: &mut Vec<String>) -> bool {
    let ctx = producer.context();
    if ctx.resends.is_fatal() {
        // Never sent: the report's path for a fatal error.
        ctx.deliveries.settle(r.opaque, |ack, offset, _| ctx.fatal_failure(ack, offset, &r.err));
        return true;
    }
    if r.err.rdkafka_error_code().is_some_and(|code| code == RDKafkaErrorCode::BrokerDestroy || waits_for_partition(ctx, code)) {
        let wait = if gone.contains(&r.topic) { PartitionWait::TopicGone } else { wait_for_partition(producer, reports, &r.topic, r.partition, shutdown) };
        match wait {
            PartitionWait::Ready => {}
            PartitionWait::TopicGone => {
                if !gone.contains(&r.topic) {
                    gone.push(r.topic.clone());
                }
                ctx.refused_at_send(producer, r.opaque, &r.topic, r.size(), &topic_gone());
                return true;
            }
            PartitionWait::DeadlinePassed => {
                ctx.deliveries.settle(r.opaque, |_, _, _| ());
                return false;
            }
        }
    }
    ctx.resends.tries.store(r.tries + 1, Ordering::SeqCst);
    if let Err((err, _)) = producer.send(resent_record(r)) {
        // Nothing else is in flight, so the buffer is not full: what
        // fails here fails as the record's report would.
        log::debug!("resend of a record of {} failed at once: {err}", r.topic);
        ctx.refused_at_send(producer, r.opaque, &r.topic, r.size(), &err);
        return true;
    }
    settle_all(producer, reports, shutdown)
}

/// `r` as it is sent again: to its partition, with its source timestamp.
fn resent_record(r: &Resend) -> BaseRecord<'_, [u8], [u8], usize> {
    let mut record: BaseRecord<'_, [u8], [u8], usize> = BaseRecord::with_opaque_to(&r.topic, r.opaque).partition(r.partition);
    if let Some(k) = &r.key {
        record = record.key(k.as_slice());
    }
    if let Some(v) = &r.value {
        record = record.payload(v.as_slice());
    }
    if let Some(h) = r.headers.clone() {
        record = record.headers(h);
    }
    if let Some(ts) = r.timestamp {
        record = record.timestamp(ts);
    }
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pipeline::offsets::{OffsetTracker, Tp};

    /// An empty delivery table, its offset tracker and one topic's counters.
    fn fixture() -> (Deliveries, Arc<OffsetTracker>, Arc<TopicMetrics>) {
        (Deliveries::default(), OffsetTracker::new(), Arc::new(Metrics::default()).topic(0, "t"))
    }

    /// Puts a record in flight at its handle's offset.
    fn put(d: &Deliveries, ack: &AckHandle, stats: &Arc<TopicMetrics>) -> Option<usize> {
        let route = PartitionRoute { ack: ack.clone(), target: Arc::from("t"), stamp: None, stats: stats.clone(), syncs: None };
        d.put(&route, ack.offset)
    }

    fn ack(tracker: &Arc<OffsetTracker>, tp: &Tp, offset: i64) -> AckHandle {
        tracker.register(tp, offset)
    }

    /// Settles an opaque as delivered; (partition, offset) it settled.
    fn settle(d: &Deliveries, opaque: usize) -> Option<(i32, i64)> {
        d.settle(opaque, |ack, offset, _| {
            ack.done_at(offset);
            (ack.tp.1, offset)
        })
    }

    #[test]
    fn an_opaque_settles_its_own_partition_and_offset_once() {
        let (d, tracker, stats) = fixture();
        let (p0, p1): (Tp, Tp) = ((Arc::from("t"), 0), (Arc::from("t"), 1));
        let a = put(&d, &ack(&tracker, &p0, 0), &stats).unwrap();
        let b = put(&d, &ack(&tracker, &p0, 1), &stats).unwrap();
        let c = put(&d, &ack(&tracker, &p1, 7), &stats).unwrap();
        // Offsets 5 to 999 of partition 0 never came (compaction): the gap is kept.
        let e = put(&d, &ack(&tracker, &p0, 1000), &stats).unwrap();
        assert_eq!(d.in_flight(), 4);
        assert_eq!(d.table.lock().unwrap().routes.len(), 2, "one entry per partition, not per record");
        assert_eq!(settle(&d, b), Some((0, 1)), "reports come back in any order");
        assert_eq!(settle(&d, c), Some((1, 7)));
        assert_eq!(settle(&d, e), Some((0, 1000)));
        assert_eq!(settle(&d, a), Some((0, 0)));
        assert_eq!(d.in_flight(), 0);
        // A report for an entry with nothing in flight, or none at all, settles nothing.
        assert_eq!(settle(&d, a), None);
        assert_eq!(settle(&d, 99 << OFFSET_BITS), None);
        assert!(tracker.committable().iter().any(|(tp, o)| tp.1 == 0 && *o == 1001), "{:?}", tracker.committable());
    }

    #[test]
    fn a_new_assignment_or_an_offset_out_of_reach_gets_its_own_entry() {
        let (d, tracker, stats) = fixture();
        let tp: Tp = (Arc::from("t"), 0);
        let old = ack(&tracker, &tp, 10);
        let a = put(&d, &old, &stats).unwrap();
        // Past 2^48 from the entry's base: another entry, same partition.
        let far = AckHandle { offset: 10 + (1 << OFFSET_BITS), ..old.clone() };
        let b = put(&d, &far, &stats).unwrap();
        assert_ne!(a >> OFFSET_BITS, b >> OFFSET_BITS);
        assert_eq!(settle(&d, b), Some((0, 10 + (1 << OFFSET_BITS))));
        // Revoked and assigned again: a new epoch, a new entry; the old
        // epoch's report still names the old epoch.
        tracker.remove(std::slice::from_ref(&tp));
        let new = ack(&tracker, &tp, 11);
        assert_ne!(new.epoch, old.epoch);
        let c = put(&d, &new, &stats).unwrap();
        assert_ne!(a >> OFFSET_BITS, c >> OFFSET_BITS);
        assert_eq!(d.settle(a, |ack, o, _| (ack.epoch, o)), Some((old.epoch, 10)));
        assert_eq!(d.settle(c, |ack, o, _| (ack.epoch, o)), Some((new.epoch, 11)));
    }

    #[test]
    fn acknowledged_records_settle_and_count_when_their_round_is_flushed() {
        let d = Deliveries::default();
        let metrics = Metrics::default();
        let tracker = OffsetTracker::new();
        let stats = metrics.topic(0, "t");
        let (p0, p1): (Tp, Tp) = ((Arc::from("t"), 0), (Arc::from("t"), 1));
        let sent: Vec<usize> = [(&p0, 0), (&p0, 1), (&p1, 0), (&p0, 2)].iter().map(|(tp, o)| put(&d, &ack(&tracker, tp, *o), &stats).unwrap()).collect();
        let written = crate::ops::metrics::now_ms() - 60_000;
        for (i, opaque) in sent.iter().enumerate().take(3) {
            assert!(d.delivered(*opaque, 10 + i as u64, Some(written), i as i64));
        }
        // Nothing is settled or counted before the flush, and nothing swept.
        d.table.lock().unwrap().sweep();
        assert_eq!(d.in_flight(), 4);
        assert!(tracker.committable().iter().all(|(_, o)| *o == 0), "{:?}", tracker.committable());
        assert_eq!(Metrics::get(&metrics.produced), 0);
        d.flush(&metrics);
        assert_eq!(d.in_flight(), 1);
        let mut committable = tracker.committable();
        committable.sort_by_key(|(tp, _)| tp.1);
        assert_eq!(committable.iter().map(|(tp, o)| (tp.1, *o)).collect::<Vec<_>>(), vec![(0, 2), (1, 1)], "offset 2 of partition 0 is still in flight");
        assert_eq!((Metrics::get(&metrics.produced), Metrics::get(&metrics.produced_bytes)), (3, 33));
        assert_eq!((Metrics::get(&stats.produced), Metrics::get(&stats.produced_bytes)), (3, 33));
        assert!(stats.latencies().iter().all(|(_, l)| (60_000..120_000).contains(l)), "{:?}", stats.latencies());
        assert_eq!(stats.latencies().len(), 2);
        // A flush with nothing new changes nothing.
        d.flush(&metrics);
        assert_eq!(Metrics::get(&metrics.produced), 3);
        assert!(!d.delivered(99 << OFFSET_BITS, 1, None, 0), "an unknown record is refused");
        assert!(d.delivered(sent[3], 1, None, 3));
        d.flush(&metrics);
        assert_eq!(d.in_flight(), 0);
        assert!(tracker.committable().iter().any(|(tp, o)| tp.1 == 0 && *o == 3));
    }

    #[test]
    fn failures_that_say_nothing_about_the_record_are_never_skipped() {
        use RDKafkaErrorCode::*;
        let c = |code, alone, fatal, tries| classify(Some(code), alone, fatal, tries, false);
        // A refusal of the record itself: abort or skip, as configured.
        assert_eq!(c(TopicAuthorizationFailed, false, false, 0), Failure::Permanent);
        assert_eq!(c(InvalidRecord, false, false, 0), Failure::Permanent);
        // Too large: a batch says nothing of its records; alone, it does.
        assert_eq!(c(MessageSizeTooLarge, false, false, 0), Failure::Resend);
        assert_eq!(c(MessageBatchTooLarge, false, false, 0), Failure::Resend);
        assert_eq!(c(MessageSizeTooLarge, true, false, 1), Failure::Permanent);
        // Stale metadata is waited out, however often.
        assert_eq!(c(UnknownPartition, true, false, 50), Failure::Resend);
        assert_eq!(c(BrokerDestroy, false, false, 0), Failure::Resend, "a partition that vanished says nothing about the record");
        // The idempotent producer's sequence state: again, a bounded number of times, then stop.
        assert_eq!(c(OutOfOrderSequenceNumber, false, false, 0), Failure::Resend);
        assert_eq!(c(UnknownProducerId, true, false, MAX_STATE_RESENDS), Failure::Fatal);
        // A broken producer: whatever the code, nothing is skipped.
        assert_eq!(c(Fatal, false, false, 0), Failure::Fatal);
        assert_eq!(c(TopicAuthorizationFailed, false, true, 0), Failure::Fatal);
        assert_eq!(c(MessageSizeTooLarge, false, true, 0), Failure::Fatal);
        assert_eq!(c(PurgeQueue, false, true, 0), Failure::Purged);
        assert_eq!(classify(None, false, false, 0, false), Failure::Permanent);
        // A target topic gone: refused, unless the topic sync makes it again.
        assert_eq!(c(UnknownTopicOrPartition, false, false, 0), Failure::Permanent);
        assert_eq!(classify(Some(UnknownTopicOrPartition), false, false, 0, true), Failure::Resend);
        assert_eq!(classify(Some(UnknownTopic), true, false, 9, true), Failure::Resend);
    }

    #[test]
    fn a_gone_topic_is_awaited_for_a_while_per_topic_not_per_record() {
        let gone = GoneTopics::default();
        let t0 = std::time::Instant::now();
        assert!(gone.awaited("t", t0));
        assert!(gone.awaited("t", t0 + GONE_TOPIC_WAIT / 2), "a later record of the same topic waits what is left");
        assert!(!gone.awaited("t", t0 + GONE_TOPIC_WAIT), "then it is refused, and so are the next records at once");
        assert!(gone.awaited("u", t0 + GONE_TOPIC_WAIT), "another topic has its own wait");
        gone.found("t");
        assert!(gone.awaited("t", t0 + GONE_TOPIC_WAIT * 2), "made again, then gone again: a new wait");
    }

    #[test]
    fn idle_entries_are_swept_and_reused() {
        let (d, tracker, stats) = fixture();
        let busy: Tp = (Arc::from("busy"), 0);
        let held = put(&d, &ack(&tracker, &busy, 0), &stats).unwrap();
        // Partitions that come and go (say, across rebalances) leave idle entries behind.
        for p in 0..10 * SWEEP_FROM as i32 {
            let o = put(&d, &ack(&tracker, &(Arc::from("t"), p), 0), &stats).unwrap();
            assert!(settle(&d, o).is_some());
        }
        let len = d.table.lock().unwrap().routes.len();
        assert!(len <= SWEEP_FROM + 1, "the table grew to {len} entries for one record in flight");
        assert_eq!(settle(&d, held), Some((0, 0)), "an entry in flight is never swept");
    }
}
