//! The producer worker: one thread, one librdkafka producer to the target,
//! draining one bounded channel of batches.
//!
//! It sends (waiting, never dropping, while the local send buffer is full),
//! serves its producer's delivery reports between batches and while it
//! waits (see [`Reports`]), sends again alone the records whose failure
//! said nothing about them (see `failures`), and at the end flushes within
//! the drain deadline.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use log::{info, warn};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::OwnedHeaders;
use rdkafka::producer::{BaseRecord, Producer};

use super::context::{DeliveryContext, Resend, TargetProducer};
use super::failures::{topic_gone, waits_for_partition};
use crate::engine::pipeline::batch::{MirrorRecord, PartitionRoute, RecordMeta};
use crate::engine::pipeline::handoff::LaneRx;
use crate::engine::pipeline::provenance::HEADER_C;
use crate::engine::pipeline::throttle::Throttle;
use crate::kafka::produce::{send_lingering, MainQueue, TopicHandles};
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::Shutdown;

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
pub(super) struct Reports<'p> {
    producer: &'p TargetProducer,
    queue: MainQueue<'p>,
}

impl<'p> Reports<'p> {
    pub(super) fn new(producer: &'p TargetProducer) -> Reports<'p> {
        Reports { producer, queue: MainQueue::of(producer.client()) }
    }

    pub(super) fn serve(&self) {
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

/// What a worker works with: its producer (whose context its delivery
/// reports reach), its handle on their queue, the stop signal and the
/// throttle. Held once per thread, so its steps take only what changes
/// from one call to the next.
struct Worker<'p> {
    producer: &'p TargetProducer,
    ctx: &'p DeliveryContext,
    reports: Reports<'p>,
    shutdown: &'p Shutdown,
    throttle: Option<&'p Throttle>,
}

/// What became of a record the worker could not hand librdkafka at once.
#[must_use]
enum Retry {
    /// Hand it over again.
    Again,
    /// It is settled: refused (abort or skip, as configured), or abandoned
    /// unacknowledged past the drain deadline, so its offset is never
    /// committed.
    Settled,
}

/// How a wait bounded by the drain deadline ended.
#[must_use]
#[derive(Debug, PartialEq)]
enum Deadline {
    /// Done before the deadline.
    Met,
    /// The deadline passed first: what was left is abandoned
    /// unacknowledged, so its offsets are never committed.
    Passed,
}

/// Runs one worker until every sender of its channel is gone, then flushes
/// within the drain deadline.
pub(super) fn run(index: usize, producer: TargetProducer, rx: LaneRx, shutdown: Arc<Shutdown>, throttle: Option<Arc<Throttle>>) {
    let worker = Worker { producer: &producer, ctx: producer.context(), reports: Reports::new(&producer), shutdown: &shutdown, throttle: throttle.as_deref() };
    worker.mirror(&rx);
    let drained = worker.flush();
    drop(worker);
    if drained == Deadline::Passed {
        warn!(
            "producer {index}: {} records were not acknowledged by the target within the drain timeout; their offsets are not committed",
            producer.in_flight_count()
        );
        shutdown.drain_timed_out();
    }
}

impl Worker<'_> {
    /// Sends the channel's batches until every sender is gone.
    fn mirror(&self, rx: &LaneRx) {
        let mut topics = TopicHandles::new(self.producer.client());
        loop {
            self.reports.serve();
            if !self.ctx.resends.is_empty() {
                // Past the drain deadline it abandons them; the channel is drained on regardless.
                let _ = self.resend_alone();
            }
            let wait = if self.producer.in_flight_count() > 0 { IDLE_WAIT_IN_FLIGHT } else { IDLE_WAIT };
            let batch = match rx.recv_timeout(wait) {
                Ok(batch) => batch,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            Metrics::add(&self.ctx.metrics.channel_out, batch.len() as u64);
            let (records, bytes, routes) = batch.into_parts();
            for (i, rec) in records.into_iter().enumerate() {
                if i % SERVE_EVERY == SERVE_EVERY - 1 {
                    self.reports.serve();
                }
                // Waiting here fills the channel, which pauses the source: backpressure, no drops.
                if let Some(t) = self.throttle {
                    if !t.take(rec.size(), || self.shutdown.deadline_passed()) {
                        // Past the drain deadline: never sent, never acknowledged, so never committed.
                        self.shutdown.drain_timed_out();
                        continue;
                    }
                }
                self.send(&mut topics, &routes, &bytes, rec);
            }
        }
    }

    /// Waits for every record in flight (and every record to send again)
    /// to be settled, sending what lingers, until the drain deadline.
    fn flush(&self) -> Deadline {
        let left = self.producer.in_flight_count();
        if left > 0 {
            info!("Flushing producer ({left} records in flight).");
        }
        // Not rust-rdkafka's flush: the reports it serves would be
        // settled only once it returns (see Deliveries::flush), and the
        // streams, waiting for them until the same deadline, could give
        // up first and commit less.
        loop {
            send_lingering(self.producer.client());
            self.reports.serve();
            if !self.ctx.resends.is_empty() && self.resend_alone() == Deadline::Passed {
                return Deadline::Passed;
            }
            if self.producer.in_flight_count() == 0 && self.ctx.resends.is_empty() {
                return Deadline::Met;
            }
            if self.shutdown.deadline_passed() {
                return Deadline::Passed;
            }
            thread::sleep(IDLE_WAIT_IN_FLIGHT);
        }
    }

    /// Sends one record whose key and value are in `bytes`, its batch's buffer.
    ///
    /// The retry loop stays here, its slow branches in the steps below: room in
    /// a full send buffer ([`wait_for_room`](Self::wait_for_room)) and a partition the target does
    /// not have yet ([`partition_or_refuse`](Self::partition_or_refuse)).
    fn send(&self, topics: &mut TopicHandles<'_>, routes: &[Arc<PartitionRoute>], bytes: &[u8], rec: MirrorRecord) {
        let size = rec.size();
        let (key, value) = (rec.key(bytes), rec.value(bytes));
        let route = rec.route(routes);
        let RecordMeta { offset, partition, headers, stamp, timestamp } = rec.meta;
        let (topic, stamp) = (&route.target, if stamp { route.stamp.as_deref() } else { None });
        let ctx = self.ctx;
        let Some(opaque) = self.put_in_flight(route, offset) else { return };
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
                (None, Some(r)) => self.producer.send(r).map_err(|(e, back)| {
                    record = Some(back);
                    e
                }),
                (None, None) => unreachable!("a record not produced directly is built above"),
            };
            match result {
                Ok(()) => {
                    ctx.client.queued.fetch_add(size as i64, std::sync::atomic::Ordering::Relaxed);
                    return;
                }
                Err(KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull)) => {
                    if let Retry::Settled = self.wait_for_room(opaque, &mut backoff) {
                        return;
                    }
                }
                Err(KafkaError::MessageProduction(code)) if partition.is_some() && waits_for_partition(ctx, code) => {
                    // An explicit partition past the count librdkafka last saw:
                    // stale metadata (the target just grew), not a refusal; or
                    // a topic gone that the topic sync makes again.
                    let p = partition.unwrap_or_default();
                    if let Retry::Settled = self.partition_or_refuse(topic, p, opaque, size) {
                        return;
                    }
                }
                Err(err) => {
                    ctx.refused_at_send(self.producer, opaque, topic, size, &err);
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
    fn put_in_flight(&self, route: &PartitionRoute, offset: i64) -> Option<usize> {
        loop {
            match self.ctx.deliveries.put(route, offset) {
                Some(opaque) => return Some(opaque),
                // Every entry has records in flight: their reports free one.
                None => {
                    if self.shutdown.deadline_passed() {
                        self.shutdown.drain_timed_out();
                        return None;
                    }
                    self.reports.serve();
                    thread::sleep(MAX_FULL_BACKOFF);
                }
            }
        }
    }

    /// A full send buffer: serves delivery reports (what frees room in it) and
    /// waits `backoff`, doubled up to [`MAX_FULL_BACKOFF`] for the next try.
    /// Settled once the drain deadline passed: the record is abandoned
    /// unacknowledged, so its offset is never committed.
    fn wait_for_room(&self, opaque: usize, backoff: &mut Duration) -> Retry {
        // The target is slow or away: wait, never drop. Past the
        // drain deadline the record is abandoned unacknowledged, so
        // its offset is never committed.
        if self.shutdown.deadline_passed() {
            self.ctx.deliveries.settle(opaque, |_, _, _| ());
            self.shutdown.drain_timed_out();
            return Retry::Settled;
        }
        // Serving delivery reports is what frees room in the buffer.
        self.reports.serve();
        thread::sleep(*backoff);
        self.reports.serve();
        *backoff = (*backoff * 2).min(MAX_FULL_BACKOFF);
        Retry::Again
    }

    /// An explicit partition librdkafka does not know: waits for it (see
    /// [`wait_for_partition`](Self::wait_for_partition)). Again to send the
    /// record again; settled when refused as its topic is gone, or abandoned
    /// unacknowledged past the drain deadline.
    fn partition_or_refuse(&self, topic: &str, partition: i32, opaque: usize, size: usize) -> Retry {
        match self.wait_for_partition(topic, partition) {
            PartitionWait::Ready => Retry::Again,
            PartitionWait::TopicGone => {
                self.ctx.refused_at_send(self.producer, opaque, topic, size, &topic_gone());
                Retry::Settled
            }
            PartitionWait::DeadlinePassed => {
                self.ctx.deliveries.settle(opaque, |_, _, _| ());
                self.shutdown.drain_timed_out();
                Retry::Settled
            }
        }
    }

    /// Waits until librdkafka's metadata has `partition` of `topic`, asking the
    /// target again every [`PARTITION_WAIT`] (a metadata answer updates the
    /// producer's view of the topic) and serving delivery reports meanwhile.
    /// Only a topic that exists with fewer partitions is waited for: one the
    /// target answers it does not have ends the wait at once.
    fn wait_for_partition(&self, topic: &str, partition: i32) -> PartitionWait {
        let started = std::time::Instant::now();
        let mut logged: Option<std::time::Instant> = None;
        loop {
            // Every topic, not this one by name: the producer's handle lets the
            // broker auto-create a topic a metadata request names, and a target
            // topic deleted under us would come back with the broker's
            // num.partitions instead of being reported gone. The answer still
            // updates the producer's view of the topic, which is what the send
            // needs.
            let found = match self.producer.client().fetch_metadata(None, PARTITION_WAIT * 5) {
                // An answer without the topic, with an error for it, or with no
                // partitions: the target does not have it.
                Ok(md) => match md.topics().iter().find(|t| t.name() == topic) {
                    Some(t) if t.error().is_none() && !t.partitions().is_empty() => {
                        self.ctx.gone_since.found(topic);
                        Some(t.partitions().len())
                    }
                    // Made again by the topic sync (deleted under us): wait, a while.
                    _ if self.ctx.await_gone_topics && self.ctx.gone_since.awaited(topic, std::time::Instant::now()) => Some(0),
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
            if self.shutdown.deadline_passed() {
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
            while std::time::Instant::now() < until && !self.shutdown.deadline_passed() {
                self.reports.serve();
                thread::sleep(Duration::from_millis(10));
            }
        }
    }

    /// Sends again, one at a time and each alone, the records whose failure
    /// said nothing about them (see [`Resends`](super::context::Resends)). First waits for everything in
    /// flight to be settled, so that nothing shares a batch with the record
    /// sent; then sends each and waits for its report. A record that fails
    /// again goes back to the queue (or, if it was refused alone as too large,
    /// is refused for good). Once the drain deadline passed, the
    /// records left are abandoned unacknowledged, so their offsets are never
    /// committed.
    fn resend_alone(&self) -> Deadline {
        let ctx = self.ctx;
        if self.settle_all() == Deadline::Passed {
            return self.abandon(ctx.resends.take());
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
        let ended = loop {
            let Some(r) = left.next() else { break Deadline::Met };
            if self.resend_one(&r, &mut gone) == Deadline::Passed {
                break Deadline::Passed;
            }
        };
        ctx.resends.alone.store(false, Ordering::SeqCst);
        if ended == Deadline::Passed {
            let mut rest: Vec<Resend> = left.collect();
            rest.extend(ctx.resends.take());
            return self.abandon(rest);
        }
        Deadline::Met
    }

    /// Waits until every record the producer has in flight is settled, so that
    /// the next record sent travels alone, or until the drain deadline.
    fn settle_all(&self) -> Deadline {
        while self.producer.in_flight_count() > 0 {
            if self.shutdown.deadline_passed() {
                return Deadline::Passed;
            }
            send_lingering(self.producer.client());
            self.reports.serve();
            thread::sleep(IDLE_WAIT_IN_FLIGHT);
        }
        Deadline::Met
    }

    /// Past the drain deadline: the records `left` to send again are settled
    /// unacknowledged, so their offsets are never committed. Passed, as
    /// [`resend_alone`](Self::resend_alone) then returns.
    fn abandon(&self, left: Vec<Resend>) -> Deadline {
        for r in left {
            self.ctx.deliveries.settle(r.opaque, |_, _, _| ());
        }
        self.shutdown.drain_timed_out();
        Deadline::Passed
    }

    /// One step of [`resend_alone`](Self::resend_alone): sends `r` alone and waits for its report,
    /// or settles it without sending (the producer broken, its topic in `gone`
    /// or found gone now, librdkafka refusing it at once). Passed once
    /// the drain deadline passed; `r` is then settled unacknowledged only if it
    /// was waiting for its partition.
    fn resend_one(&self, r: &Resend, gone: &mut Vec<String>) -> Deadline {
        let ctx = self.ctx;
        if ctx.resends.is_fatal() {
            // Never sent: the report's path for a fatal error.
            ctx.deliveries.settle(r.opaque, |ack, offset, _| ctx.fatal_failure(ack, offset, &r.err));
            return Deadline::Met;
        }
        if r.err.rdkafka_error_code().is_some_and(|code| code == RDKafkaErrorCode::BrokerDestroy || waits_for_partition(ctx, code)) {
            let wait = if gone.contains(&r.topic) { PartitionWait::TopicGone } else { self.wait_for_partition(&r.topic, r.partition) };
            match wait {
                PartitionWait::Ready => {}
                PartitionWait::TopicGone => {
                    if !gone.contains(&r.topic) {
                        gone.push(r.topic.clone());
                    }
                    ctx.refused_at_send(self.producer, r.opaque, &r.topic, r.size(), &topic_gone());
                    return Deadline::Met;
                }
                PartitionWait::DeadlinePassed => {
                    ctx.deliveries.settle(r.opaque, |_, _, _| ());
                    return Deadline::Passed;
                }
            }
        }
        ctx.resends.tries.store(r.tries + 1, Ordering::SeqCst);
        if let Err((err, _)) = self.producer.send(resent_record(r)) {
            // Nothing else is in flight, so the buffer is not full: what
            // fails here fails as the record's report would.
            log::debug!("resend of a record of {} failed at once: {err}", r.topic);
            ctx.refused_at_send(self.producer, r.opaque, &r.topic, r.size(), &err);
            return Deadline::Met;
        }
        ctx.client.queued.fetch_add(r.size() as i64, Ordering::Relaxed);
        self.settle_all()
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

/// How long a record for a partition the target does not have (yet) waits
/// between two looks at the target's metadata.
const PARTITION_WAIT: Duration = Duration::from_secs(1);
/// How often that wait is logged.
const PARTITION_WAIT_LOG: Duration = Duration::from_secs(30);

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
