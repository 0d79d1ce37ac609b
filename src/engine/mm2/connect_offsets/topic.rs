//! Connect's offsets topic itself (`offset.storage.topic`, MM2's
//! `mm2-offsets.<source>.internal`): made as Java's worker makes it, read
//! whole, written to. One place for the three, used by the take-over and
//! hand-back of a flow's positions (the parent module) and by a Connect
//! worker's offsets endpoints (`worker::offsets`), which must agree on
//! the partition of each key and on what counts as written.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use log::info;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::BorrowedMessage;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{ClientConfig, ClientContext};

use super::file::Entry;
use super::json::partition_of;
use crate::kafka::admin::{admin_client, admin_config, block_on, requested_rf, shown_rf};
use crate::kafka::groups;
use crate::kafka::topic_reader::{self, Ends, Partitions, ReadError};

/// A metadata or create request, or the flush of one write at most.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Why the topic could not be made or read.
#[derive(Debug)]
pub enum TopicError {
    /// A client could not be made from the settings.
    Client { what: String, error: KafkaError },
    /// The target did not answer.
    Unreachable(KafkaError),
    /// The topic exists but could not be read to its end.
    Read { topic: String, error: ReadError },
    /// The topic is missing and could not be made.
    NotMade { topic: String, why: String },
}

impl fmt::Display for TopicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopicError::Client { what, error } => write!(f, "cannot create {what}: {error}"),
            TopicError::Unreachable(e) => write!(f, "the target cluster does not answer ({e}); check its bootstrap.servers and that its brokers are up"),
            TopicError::Read { topic, error } => write!(f, "cannot read {topic} ({error})"),
            TopicError::NotMade { topic, why } => write!(f, "{topic} is missing and cannot be made: {why}"),
        }
    }
}

impl std::error::Error for TopicError {}

/// The topic's partition count, after creating it as Java's Connect worker
/// does when it is missing: compacted, `partitions` partitions, replication
/// factor `replication_factor` as far as the brokers allow (-1: the
/// brokers' default, as in Connect). Waits up to
/// `patience` for a topic just made to show.
pub fn ensure(config: &ClientConfig, topic: &str, partitions: i32, replication_factor: i16, patience: Duration) -> Result<i32, TopicError> {
    let admin = admin_client(config).map_err(|error| TopicError::Client { what: "an admin client for the target".into(), error })?;
    let listed = || -> Result<(usize, Option<i32>), TopicError> {
        let md = admin.inner().fetch_metadata(None, REQUEST_TIMEOUT).map_err(TopicError::Unreachable)?;
        let n = md.topics().iter().find(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty()).map(|t| t.partitions().len() as i32);
        Ok((md.brokers().len(), n))
    };
    let (brokers, existing) = listed()?;
    if let Some(n) = existing {
        return Ok(n);
    }
    let rf = requested_rf(replication_factor, || brokers);
    let partitions = partitions.max(1);
    let new = NewTopic::new(topic, partitions, TopicReplication::Fixed(rf)).set("cleanup.policy", "compact");
    let opts = AdminOptions::new().operation_timeout(Some(REQUEST_TIMEOUT)).request_timeout(Some(REQUEST_TIMEOUT));
    let not_made = |why: String| TopicError::NotMade { topic: topic.into(), why };
    match block_on(admin.create_topics(&[new], &opts)).map(|mut r| r.pop()) {
        Ok(Some(Ok(_))) => info!("created {topic} (compacted, {partitions} partitions, replication factor {}) as Java's Connect worker would", shown_rf(rf)),
        Ok(Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists)))) | Ok(None) => {}
        Ok(Some(Err((_, code)))) => return Err(not_made(format!("{code}; check that this client may create it, or create it compacted"))),
        Err(e) => return Err(not_made(e.to_string())),
    }
    // The new topic's metadata may take a moment to reach every broker.
    let until = Instant::now() + patience;
    loop {
        if let Ok((_, Some(n))) = listed() {
            return Ok(n);
        }
        if Instant::now() >= until {
            return Err(not_made(format!(
                "made with {partitions} partitions and replication factor {}, it does not show after {}s",
                shown_rf(rf),
                patience.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Reads the whole topic (every partition, from the beginning to the last
/// stable offset it has when asked) read committed, as Connect's reader
/// does, handing each record to `each`. None when the topic does not
/// exist. Gives up after `patience` without progress or when `stop` says so.
pub fn read_whole(
    config: &ClientConfig,
    topic: &str,
    patience: Duration,
    stop: &dyn Fn() -> bool,
    each: impl FnMut(&BorrowedMessage<'_>),
) -> Result<Option<Ends>, TopicError> {
    let consumer = reader(config, topic, "read_committed")?;
    match topic_reader::read_to_end(&consumer, topic, Partitions::All, patience, stop, each) {
        Ok(ends) => Ok(ends),
        Err(ReadError::Request { error, .. }) => Err(TopicError::Unreachable(error)),
        Err(error) => Err(TopicError::Read { topic: topic.into(), error }),
    }
}

/// A reader of `topic` at `isolation` (nothing is committed: the group id
/// is only there because librdkafka wants one).
pub(super) fn reader(config: &ClientConfig, topic: &str, isolation: &str) -> Result<BaseConsumer, TopicError> {
    let mut c = admin_config(config);
    c.set("group.id", groups::ADMIN_GROUP_ID).set("enable.auto.commit", "false").set("enable.partition.eof", "false").set("isolation.level", isolation);
    c.create().map_err(|error| TopicError::Client { what: format!("a reader of {topic}"), error })
}

/// Counts the records the target refused, so a write whose records were
/// not all acknowledged is not taken as written.
#[derive(Default)]
struct Acks {
    failed: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl ClientContext for Acks {}

impl ProducerContext for Acks {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            self.failed.fetch_add(1, Ordering::SeqCst);
            *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
        }
    }
}

/// Why a write is not known to be in the topic (writing it again is safe:
/// the last record of a key wins).
#[derive(Debug)]
pub enum WriteError {
    /// The producer's queue took no more.
    Queue(KafkaError),
    /// Not acknowledged within `waited`.
    Flush { topic: String, waited: Duration, error: KafkaError },
    /// The target refused `failed` of the `of` records; `last` says why.
    Refused { failed: u64, of: usize, last: String, topic: String },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Queue(e) => write!(f, "cannot queue a record: {e}"),
            WriteError::Flush { topic, waited, error } => write!(f, "{topic} not acknowledged within {}s: {error}", waited.as_secs()),
            WriteError::Refused { failed, of, last, topic } => {
                write!(f, "the target refused {failed} of {of} records ({last}); check that this client may write to {topic}")
            }
        }
    }
}

/// A writer of positions to the topic, each record in the partition
/// Java's default partitioner gives its key (or compaction and Java's
/// last-wins read go wrong), idempotent and acknowledged by all replicas.
pub struct Writer {
    producer: BaseProducer<Acks>,
    topic: String,
    partitions: i32,
}

impl Writer {
    /// `partitions`: the topic's partition count ([`ensure`]).
    pub fn new(config: &ClientConfig, topic: &str, partitions: i32) -> Result<Writer, KafkaError> {
        let mut p = admin_config(config);
        p.set("acks", "all").set("enable.idempotence", "true").set("linger.ms", "5");
        Ok(Writer { producer: p.create_with_context(Acks::default())?, topic: topic.into(), partitions })
    }

    /// Writes `records` (key, value or None for a tombstone) and waits up
    /// to `timeout` until every one is acknowledged.
    pub fn write(&self, records: &[Entry], timeout: Duration) -> Result<(), WriteError> {
        let failed_before = self.producer.context().failed.load(Ordering::SeqCst);
        for (key, value) in records {
            let mut record = BaseRecord::<[u8], [u8]>::to(&self.topic).partition(partition_of(key, self.partitions)).key(key.as_slice());
            if let Some(v) = value {
                record = record.payload(v.as_slice());
            }
            // The queue is far larger than one flow's partitions; a full
            // queue only means this write fails and is made again.
            self.producer.send(record).map_err(|(e, _)| WriteError::Queue(e))?;
        }
        self.producer.flush(timeout).map_err(|error| WriteError::Flush { topic: self.topic.clone(), waited: timeout, error })?;
        // Refused records leave the queue as failed deliveries, so the
        // flush alone does not tell.
        let failed = self.producer.context().failed.load(Ordering::SeqCst) - failed_before;
        if failed > 0 {
            let last = self.producer.context().last_error.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
            return Err(WriteError::Refused { failed, of: records.len(), last, topic: self.topic.clone() });
        }
        Ok(())
    }
}
