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

use std::ffi::{c_int, c_void, CString};
use std::ptr;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use log::{error, info, warn};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::config::FromClientConfigAndContext;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::types::{RDKafka, RDKafkaTopic};
use rdkafka::{bindings, ClientConfig, ClientContext};

use crate::metrics::{Metrics, TopicMetrics};
use crate::offsets::AckHandle;
use crate::partitioner::ByteArrayPartitioner;
use crate::provenance::HEADER_C;
use crate::batch::{MirrorRecord, RecordMeta};
use crate::fxhash::FxHashMap;
use crate::handoff::LaneRx;
use crate::shutdown::{exit, Shutdown};
use crate::throttle::Throttle;

/// What a delivery report needs of its record: where to settle the
/// offset, what to count, and when the record was written at the source.
pub struct Delivery {
    pub ack: AckHandle,
    pub stats: Arc<TopicMetrics>,
    pub timestamp: Option<i64>,
}

/// The deliveries a worker's producer has in flight, in reusable slots.
///
/// librdkafka carries one pointer-sized opaque per record to its delivery
/// report; a slot number fits, so a record needs no boxed allocation of its
/// own (allocated on the worker and freed on the polling thread, the box cost
/// a malloc and a cross-thread free per record). Slots are reused as reports
/// come back, so the table only grows to the most records ever in flight.
#[derive(Default)]
pub struct DeliverySlots {
    inner: Mutex<SlotTable>,
}

#[derive(Default)]
struct SlotTable {
    slots: Vec<Option<Delivery>>,
    free: Vec<usize>,
}

impl DeliverySlots {
    fn put(&self, d: Delivery) -> usize {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match t.free.pop() {
            Some(i) => {
                t.slots[i] = Some(d);
                i
            }
            None => {
                t.slots.push(Some(d));
                t.slots.len() - 1
            }
        }
    }

    fn take(&self, i: usize) -> Option<Delivery> {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let d = t.slots.get_mut(i)?.take();
        if d.is_some() {
            t.free.push(i);
        }
        d
    }

    /// Deliveries still awaiting their report.
    #[cfg(test)]
    fn in_use(&self) -> usize {
        let t = self.inner.lock().unwrap();
        t.slots.len() - t.free.len()
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
    pub slots: DeliverySlots,
}

impl ClientContext for DeliveryContext {
    fn error(&self, error: KafkaError, reason: &str) {
        // librdkafka would retry refused credentials forever: stop instead.
        if let Some(msg) = crate::security::auth_failure(error.rdkafka_error_code(), reason, &self.cluster) {
            if !self.shutdown.stopping() {
                error!("{msg}");
            }
            self.shutdown.fail(exit::CONFIG, msg);
            return;
        }
        if self.shutdown.code() == exit::CONFIG {
            // The reconnect noise that follows refused credentials.
            log::debug!("target producer: {error}: {reason}");
            return;
        }
        if matches!(error.rdkafka_error_code(), Some(RDKafkaErrorCode::Fatal)) {
            self.shutdown.fail(exit::FAILURE, format!("target producer fatal error: {reason}"));
        }
        error!("target producer: {error}: {reason}");
    }
}

impl DeliveryContext {
    /// A record the target will never take: abort or skip, as configured.
    fn permanent_failure(&self, delivery: &Delivery, target_topic: &str, size: usize, err: &KafkaError) {
        let ack = &delivery.ack;
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
        let what = format!(
            "Error when sending message to topic {target_topic} ({size} bytes) from source {topic}-{partition} at offset {}: {err}{hint}",
            ack.offset
        );
        if self.abort_on_send_failure {
            ack.failed();
            // The first failure says it all; the records behind it fail the
            // same way while the mirror stops, so they go to the debug log.
            if self.shutdown.code() == exit::FAILURE {
                log::debug!("{what}");
                return;
            }
            error!("{what}");
            error!("Closing producer due to send failure (--abort.on.send.failure true): offset {} of {topic}-{partition} and later are not committed", ack.offset);
            self.shutdown.fail(exit::FAILURE, what);
        } else {
            warn!("{what}; skipped and counted as dropped (--abort.on.send.failure false)");
            Metrics::add(&self.metrics.dropped, 1);
            Metrics::add(&delivery.stats.dropped, 1);
            ack.done();
        }
    }
}

/// Key plus value bytes, as counted on the consumer side.
fn payload_len(msg: &impl Message) -> usize {
    msg.key().map_or(0, <[u8]>::len) + msg.payload().map_or(0, <[u8]>::len)
}

impl ProducerContext<ByteArrayPartitioner> for DeliveryContext {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, slot: usize) {
        let Some(d) = self.slots.take(slot) else {
            // Every record sent holds a slot until this report: a report
            // without one would be a bug, and must not settle anything.
            error!("delivery report for an unknown record (slot {slot}); its offset stays uncommitted");
            return;
        };
        match result {
            Ok(msg) => {
                d.ack.done();
                let bytes = payload_len(msg) as u64;
                Metrics::add(&self.metrics.produced, 1);
                Metrics::add(&self.metrics.produced_bytes, bytes);
                Metrics::add(&d.stats.produced, 1);
                Metrics::add(&d.stats.produced_bytes, bytes);
                d.stats.acknowledged(d.ack.tp.1, d.timestamp);
            }
            Err((err, msg)) => {
                // Purged at shutdown after the drain deadline: not delivered,
                // not committed, sent again after a restart.
                if matches!(err.rdkafka_error_code(), Some(RDKafkaErrorCode::PurgeQueue | RDKafkaErrorCode::PurgeInflight)) {
                    return;
                }
                self.permanent_failure(&d, msg.topic(), payload_len(msg), err);
            }
        }
    }

    fn get_custom_partitioner(&self) -> Option<&ByteArrayPartitioner> {
        self.partitioner.as_ref()
    }
}

/// A worker's producer: polled by the worker itself.
pub type TargetProducer = BaseProducer<DeliveryContext, ByteArrayPartitioner>;

/// The producer that only answers metadata questions (partition counts in
/// partition-preserving mode): it sends nothing, and a thread of its own
/// serves its error events.
pub type MetaProducer = ThreadedProducer<DeliveryContext, ByteArrayPartitioner>;

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
    queue: *mut bindings::rd_kafka_queue_t,
}

impl<'p> Reports<'p> {
    fn new(producer: &'p TargetProducer) -> Reports<'p> {
        // SAFETY: the borrow keeps the producer alive; the handle is
        // released in drop.
        Reports { producer, queue: unsafe { bindings::rd_kafka_queue_get_main(producer.client().native_ptr()) } }
    }

    fn serve(&self) {
        // Bounded, so a flood of reports cannot keep records from being sent.
        for _ in 0..1024 {
            // SAFETY: a live queue handle (see new).
            if unsafe { bindings::rd_kafka_queue_length(self.queue) } == 0 {
                return;
            }
            self.producer.poll(Duration::ZERO);
        }
    }
}

impl Drop for Reports<'_> {
    fn drop(&mut self) {
        // SAFETY: obtained in new, released once.
        unsafe { bindings::rd_kafka_queue_destroy(self.queue) };
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
pub fn spawn_worker(
    index: usize,
    producer: TargetProducer,
    rx: LaneRx,
    shutdown: Arc<Shutdown>,
    throttle: Option<Arc<Throttle>>,
) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(format!("mirrormaker-producer-{index}"))
        .spawn(move || {
            let metrics = producer.context().metrics.clone();
            let mut topics = TopicHandles::new(&producer);
            let reports = Reports::new(&producer);
            loop {
                reports.serve();
                let wait = if producer.in_flight_count() > 0 { IDLE_WAIT_IN_FLIGHT } else { IDLE_WAIT };
                let batch = match rx.recv_timeout(wait) {
                    Ok(batch) => batch,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                Metrics::add(&metrics.channel_out, batch.len() as u64);
                let (records, bytes) = batch.into_parts();
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
                    send(&producer, &reports, &mut topics, &bytes, rec, &shutdown);
                }
            }
            drop(topics);
            drop(reports);
            let left = producer.in_flight_count();
            if left > 0 {
                info!("Flushing producer ({left} records in flight).");
            }
            let wait = shutdown.deadline().saturating_duration_since(std::time::Instant::now());
            if producer.flush(wait).is_err() {
                warn!(
                    "producer {index}: {} records were not acknowledged by the target within the drain timeout; their offsets are not committed",
                    producer.in_flight_count()
                );
                shutdown.drain_timed_out();
            }
        })
        .expect("spawn producer worker")
}

/// A worker's librdkafka topic handles, one per target topic, kept for
/// the worker's life.
///
/// rust-rdkafka's `send` names the topic afresh for every record: a C
/// string allocated and freed, and a topic lookup under the client's
/// write lock inside librdkafka (5% of the instructions per 100 B record
/// in callgrind). A record without headers of its own is produced here
/// straight through `rd_kafka_produceva` with the cached handle instead,
/// with the same flags rust-rdkafka uses (a copy of key and value, the
/// same delivery opaque); one with headers goes through rust-rdkafka,
/// which owns the header list's handover.
struct TopicHandles {
    rk: *mut RDKafka,
    handles: FxHashMap<Arc<str>, *mut RDKafkaTopic>,
}

impl TopicHandles {
    fn new(producer: &TargetProducer) -> TopicHandles {
        TopicHandles { rk: producer.client().native_ptr(), handles: FxHashMap::default() }
    }

    /// The handle, created on first use; None where librdkafka refuses one
    /// (the record then goes through rust-rdkafka, which reports why).
    fn get(&mut self, topic: &Arc<str>) -> Option<*mut RDKafkaTopic> {
        if let Some(rkt) = self.handles.get(topic) {
            return Some(*rkt);
        }
        let name = CString::new(topic.as_bytes()).ok()?;
        // SAFETY: rk is the worker's producer, alive as long as this table
        // (dropped first); a null conf means the producer's default topic
        // configuration, the one rust-rdkafka's send uses too.
        let rkt = unsafe { bindings::rd_kafka_topic_new(self.rk, name.as_ptr(), ptr::null_mut()) };
        if rkt.is_null() {
            return None;
        }
        self.handles.insert(topic.clone(), rkt);
        Some(rkt)
    }
}

impl Drop for TopicHandles {
    fn drop(&mut self) {
        for rkt in self.handles.values() {
            // SAFETY: created by rd_kafka_topic_new above, released once;
            // records still in flight hold librdkafka's own references.
            unsafe { bindings::rd_kafka_topic_destroy(*rkt) };
        }
    }
}

/// Produces one record through a cached topic handle; librdkafka copies
/// key and value (and builds the provenance header from `stamp`).
#[allow(clippy::too_many_arguments)]
fn produce_direct(
    rk: *mut RDKafka,
    rkt: *mut RDKafkaTopic,
    partition: Option<i32>,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    slot: usize,
    timestamp: Option<i64>,
    stamp: Option<&str>,
) -> Result<(), KafkaError> {
    use bindings::rd_kafka_vtype_t::*;
    use bindings::rd_kafka_vu_s__bindgen_ty_1 as U;
    let vu = |vtype, u| bindings::rd_kafka_vu_t { vtype, u };
    let mem = |b: Option<&[u8]>| {
        let (ptr, size) = b.map_or((ptr::null_mut(), 0), |b| (b.as_ptr() as *mut c_void, b.len()));
        U { mem: bindings::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_1 { ptr, size } }
    };
    let mut vus = [
        vu(RD_KAFKA_VTYPE_RKT, U { rkt }),
        vu(RD_KAFKA_VTYPE_PARTITION, U { i32_: partition.unwrap_or(-1) }),
        vu(RD_KAFKA_VTYPE_MSGFLAGS, U { i: bindings::RD_KAFKA_MSG_F_COPY as c_int }),
        vu(RD_KAFKA_VTYPE_VALUE, mem(value)),
        vu(RD_KAFKA_VTYPE_KEY, mem(key)),
        vu(RD_KAFKA_VTYPE_OPAQUE, U { ptr: slot as *mut c_void }),
        // 0: librdkafka stamps the time of sending.
        vu(RD_KAFKA_VTYPE_TIMESTAMP, U { i64_: timestamp.unwrap_or(0) }),
        // Room for the provenance header; not passed without one.
        vu(RD_KAFKA_VTYPE_END, U { ptr: ptr::null_mut() }),
    ];
    let mut count = vus.len() - 1;
    if let Some(id) = stamp {
        let header = bindings::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_2 {
            name: HEADER_C.as_ptr(),
            val: id.as_ptr() as *const c_void,
            size: id.len() as isize,
        };
        vus[count] = vu(RD_KAFKA_VTYPE_HEADER, U { header });
        count += 1;
    }
    // SAFETY: rk and rkt are alive (see TopicHandles); the pointers and
    // lengths describe live slices, copied before the call returns
    // (RD_KAFKA_MSG_F_COPY); the header name is NUL-terminated. A returned
    // error is ours to free.
    unsafe {
        let error = bindings::rd_kafka_produceva(rk, vus.as_ptr(), count);
        if error.is_null() {
            return Ok(());
        }
        let code = bindings::rd_kafka_error_code(error);
        bindings::rd_kafka_error_destroy(error);
        Err(KafkaError::MessageProduction(code.into()))
    }
}

/// Sends one record whose key and value are in `bytes`, its batch's buffer.
fn send(producer: &TargetProducer, reports: &Reports<'_>, topics: &mut TopicHandles, bytes: &[u8], rec: MirrorRecord, shutdown: &Shutdown) {
    let size = rec.size();
    let (key, value) = (rec.key(bytes), rec.value(bytes));
    let RecordMeta { topic, partition, headers, stamp, timestamp, ack, stats } = rec.meta;
    let ctx = producer.context();
    let slot = ctx.slots.put(Delivery { ack, stats, timestamp });
    let direct = if headers.is_none() { topics.get(&topic) } else { None };
    let mut record = match direct {
        Some(_) => None,
        None => {
            let headers = match (headers, &stamp) {
                (None, Some(id)) => Some(crate::provenance::stamped(None, id)),
                (h, _) => h,
            };
            let mut record: BaseRecord<'_, [u8], [u8], usize> = BaseRecord::with_opaque_to(&topic, slot);
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
            Some(record)
        }
    };
    let mut backoff = Duration::from_micros(200);
    loop {
        let result = match (direct, record.take()) {
            (Some(rkt), _) => produce_direct(topics.rk, rkt, partition, key, value, slot, timestamp, stamp.as_deref()),
            (None, Some(r)) => producer.send(r).map_err(|(e, back)| {
                record = Some(back);
                e
            }),
            (None, None) => unreachable!("a record not produced directly is built above"),
        };
        match result {
            Ok(()) => return,
            Err(KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull)) => {
                // The target is slow or away: wait, never drop. Past the
                // drain deadline the record is abandoned unacknowledged, so
                // its offset is never committed.
                if shutdown.deadline_passed() {
                    ctx.slots.take(slot);
                    shutdown.drain_timed_out();
                    return;
                }
                // Serving delivery reports is what frees room in the buffer.
                reports.serve();
                thread::sleep(backoff);
                reports.serve();
                backoff = (backoff * 2).min(MAX_FULL_BACKOFF);
            }
            Err(err) => {
                if let Some(d) = ctx.slots.take(slot) {
                    ctx.permanent_failure(&d, &topic, size, &err);
                }
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offsets::OffsetTracker;

    fn delivery(tracker: &Arc<OffsetTracker>, offset: i64) -> Delivery {
        let tp = (Arc::from("t"), 0);
        Delivery { ack: tracker.register(&tp, offset), stats: Arc::new(Metrics::default()).topic(0, "t"), timestamp: None }
    }

    #[test]
    fn delivery_slots_are_reused_and_taken_once() {
        let slots = DeliverySlots::default();
        let tracker = OffsetTracker::new();
        let a = slots.put(delivery(&tracker, 0));
        let b = slots.put(delivery(&tracker, 1));
        assert_ne!(a, b);
        assert_eq!(slots.in_use(), 2);
        assert_eq!(slots.take(a).map(|d| d.ack.offset), Some(0));
        // A second report for the same slot settles nothing.
        assert!(slots.take(a).is_none());
        assert!(slots.take(99).is_none());
        // The freed slot is used again: the table grows only with what is in flight.
        let c = slots.put(delivery(&tracker, 2));
        assert_eq!(c, a);
        assert_eq!(slots.in_use(), 2);
        assert_eq!(slots.take(b).map(|d| d.ack.offset), Some(1));
        assert_eq!(slots.take(c).map(|d| d.ack.offset), Some(2));
        assert_eq!(slots.in_use(), 0);
    }
}
