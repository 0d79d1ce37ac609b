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
//!
//! Where things are:
//! - here: the producer's creation, its context ([`DeliveryContext`], which
//!   receives the delivery reports) and what `engine` calls;
//! - [`acks`]: the table of records in flight per source partition, and how
//!   acknowledgements (in any order) settle their offsets;
//! - [`failures`]: what a failed delivery calls for (send again, skip,
//!   stop), refused credentials, target topics gone;
//! - [`worker`]: the worker thread, its send loop and its waits.
//!
//! A transactional worker (exactly-once, issue #29) will sit beside
//! `worker.rs` as `transactional.rs`: the same context and acknowledgement
//! table, its offsets committed with its transactions instead of by the
//! streams.

mod acks;
mod failures;
mod worker;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;

use log::error;
use rdkafka::config::FromClientConfigAndContext;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, DeliveryResult, ProducerContext};
use rdkafka::{ClientConfig, Timestamp};

pub use acks::Deliveries;
pub use failures::{GoneTopics, Resends};

use crate::engine::pipeline::handoff::LaneRx;
use crate::engine::pipeline::throttle::Throttle;
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::Shutdown;
use crate::plan::partitioner::ByteArrayPartitioner;

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

impl DeliveryContext {
    /// Settles what the reports served since the last call acknowledged.
    fn settle_delivered(&self) {
        self.deliveries.flush(&self.metrics);
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

/// Serves whatever events a producer not yet handed to its worker has
/// ready: delivery reports, and errors such as refused credentials, which
/// stop the mirror.
pub fn serve_ready_events(producer: &TargetProducer) {
    worker::Reports::new(producer).serve();
}

/// Runs one worker until every sender of its channel is gone, then flushes
/// within the drain deadline.
pub fn spawn_worker(index: usize, producer: TargetProducer, rx: LaneRx, shutdown: Arc<Shutdown>, throttle: Option<Arc<Throttle>>) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(format!("mirrormaker-producer-{index}"))
        .spawn(move || worker::run(index, producer, rx, shutdown, throttle))
        .expect("spawn producer worker")
}
