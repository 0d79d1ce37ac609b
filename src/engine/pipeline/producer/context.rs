//! A producer's context: what its delivery reports and client errors
//! reach ([`DeliveryContext`]), and the state they share with the worker
//! that polls them: the acknowledgement table (`acks`), the records to send
//! again ([`Resends`]) and the target topics found gone ([`GoneTopics`]).
//!
//! An acknowledgement is noted here and settled with the rest of its round
//! (`acks`); a failure is sorted and acted on by the failure rules
//! (`failures`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use log::error;
use rdkafka::error::KafkaError;
use rdkafka::message::{Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, DeliveryResult, ProducerContext};
use rdkafka::Timestamp;

use super::acks::Deliveries;
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
    /// This worker as a Connect source task's producer: its bytes and send buffer.
    pub client: Arc<crate::ops::metrics::ProducerClient>,
}

impl DeliveryContext {
    /// Settles what the reports served since the last call acknowledged.
    pub(super) fn settle_delivered(&self) {
        self.deliveries.flush(&self.metrics);
    }
}

/// Key plus value bytes, as counted on the consumer side.
pub(super) fn payload_len(msg: &impl Message) -> usize {
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
                let bytes = payload_len(msg) as u64;
                self.client.queued.fetch_sub(bytes as i64, Ordering::Relaxed);
                Metrics::add(&self.client.bytes, bytes);
                let timestamp = match msg.timestamp() {
                    Timestamp::CreateTime(ts) => Some(ts),
                    _ => None,
                };
                self.deliveries.delivered(opaque, bytes, timestamp, msg.offset())
            }
            Err((err, msg)) => {
                self.client.queued.fetch_sub(payload_len(msg) as i64, Ordering::Relaxed);
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
    pub(super) alone: AtomicBool,
    /// While alone: how many times the record in flight was sent again before.
    pub(super) tries: AtomicU32,
    /// Set once librdkafka reported a fatal error for this producer.
    pub(super) fatal: AtomicBool,
}

/// A record to send again, as its failed delivery report carried it.
pub(super) struct Resend {
    pub(super) opaque: usize,
    pub(super) topic: String,
    pub(super) partition: i32,
    pub(super) key: Option<Vec<u8>>,
    pub(super) value: Option<Vec<u8>>,
    pub(super) headers: Option<OwnedHeaders>,
    pub(super) timestamp: Option<i64>,
    /// Times sent again already.
    pub(super) tries: u32,
    pub(super) err: KafkaError,
}

impl Resend {
    /// Key plus value bytes, as counted on the consumer side.
    pub(super) fn size(&self) -> usize {
        self.key.as_ref().map_or(0, Vec::len) + self.value.as_ref().map_or(0, Vec::len)
    }
}

impl Resends {
    pub(super) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    pub(super) fn take(&self) -> Vec<Resend> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(super) fn push(&self, r: Resend) {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    }

    pub(super) fn is_fatal(&self) -> bool {
        self.fatal.load(Ordering::SeqCst)
    }
}

/// Since when each target topic awaited by `worker`'s wait for a partition has been
/// found missing: the wait is per topic, not per record, so that a topic
/// that never comes back costs [`GONE_TOPIC_WAIT`] once, not once per record.
#[derive(Default)]
pub struct GoneTopics(Mutex<std::collections::HashMap<String, std::time::Instant>>);

impl GoneTopics {
    /// Whether records for `topic`, found missing at `now`, still wait for
    /// the topic sync to make it again.
    pub(super) fn awaited(&self, topic: &str, now: std::time::Instant) -> bool {
        let mut gone = self.0.lock().unwrap_or_else(|e| e.into_inner());
        now.duration_since(*gone.entry(topic.to_string()).or_insert(now)) < GONE_TOPIC_WAIT
    }

    /// `topic` is on the target (again).
    pub(super) fn found(&self, topic: &str) {
        let mut gone = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !gone.is_empty() {
            gone.remove(topic);
        }
    }
}

/// The longest a record waits for a target topic that does not exist for
/// the topic sync to make it again (`await_gone_topics`): a few topic
/// refreshes. One the topic sync cannot make (its creation refused for
/// good, by an ACL or a create-topic policy, each logged by the topic sync)
/// is then refused as any gone topic is, rather than holding its worker
/// for ever.
const GONE_TOPIC_WAIT: Duration = Duration::from_secs(300);

#[cfg(test)]
mod tests {
    use super::*;

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
}
