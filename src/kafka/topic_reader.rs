//! Reading a topic once to the end it has when asked: how Java's
//! MirrorMaker 2 reads its internal topics (offset-syncs, checkpoints,
//! Connect offsets), and so how every reader of them here does it: the
//! checkpointer at its start, `translate-offsets`, and the take-over from
//! Java's Connect offsets.
//!
//! The end is each partition's end offset when the read starts, as the
//! caller's consumer's isolation level has it (librdkafka asks the broker
//! at that level): the high watermark read uncommitted, the last stable
//! offset read committed, so a transaction open at the end stops a
//! read_committed read before it instead of holding it up. A partition
//! whose last offsets are a transaction marker or aborted records (Java
//! MM2 with exactly-once writes its internal records in transactions)
//! never hands those offsets over: the consumer's position tells they were
//! passed. The consumer's `group.id` is only there because librdkafka
//! wants one (nothing is committed).

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use log::debug;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::BorrowedMessage;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

/// Metadata and watermark requests: one each per read.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Each read partition's end offset.
pub type Ends = BTreeMap<i32, i64>;

/// Which partitions to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partitions {
    /// Partition 0, from an offset or its start: where MirrorMaker 2
    /// writes offset-syncs and checkpoints (and reads only there).
    Zero { from: Option<i64> },
    /// Every partition from its start (Connect's offsets topic).
    All,
}

/// Why a read did not reach the end.
#[derive(Debug)]
pub enum ReadError {
    /// Listing the topic, its ends or assigning it failed.
    Request { what: &'static str, error: KafkaError },
    /// The cluster refused this client (authorization, authentication, TLS):
    /// no retry mends it.
    Refused(KafkaError),
    /// No progress for `patience`: (partition, next offset, end) left.
    Stalled { patience: Duration, left: Vec<(i32, i64, i64)> },
    /// The stop came first.
    Stopped,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Request { what, error } => write!(f, "cannot {what}: {error}"),
            ReadError::Refused(e) => write!(f, "refused: {e}; check that this client may read the topic"),
            ReadError::Stalled { patience, left } => {
                let left: Vec<String> = left.iter().map(|(p, at, end)| format!("partition {p} at offset {at} of {end}")).collect();
                write!(f, "no progress for {}s ({}); check the cluster's health", patience.as_secs(), left.join(", "))
            }
            ReadError::Stopped => write!(f, "stopped before reading to the end"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads `topic` through `consumer` up to the ends it has now, handing each
/// record to `each`; gives up after `patience` without progress or when
/// `stop` says so. Ok(None) when the topic does not exist; else each read
/// partition's end (empty partitions included).
pub fn read_to_end<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    partitions: Partitions,
    patience: Duration,
    stop: &dyn Fn() -> bool,
    mut each: impl FnMut(&BorrowedMessage<'_>),
) -> Result<Option<Ends>, ReadError> {
    let request = |what: &'static str| move |error: KafkaError| if is_refusal(&error) { ReadError::Refused(error) } else { ReadError::Request { what, error } };
    // By name: librdkafka's consumers ask the broker not to create it
    // (allow.auto.create.topics=false, their default).
    let metadata = consumer.fetch_metadata(Some(topic), REQUEST_TIMEOUT).map_err(request("read the topic's metadata"))?;
    let Some(count) = metadata.topics().iter().find(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty()).map(|t| t.partitions().len())
    else {
        return Ok(None);
    };
    let (read, from): (Vec<i32>, Option<i64>) = match partitions {
        Partitions::Zero { from } => (vec![0], from),
        Partitions::All => ((0..count as i32).collect(), None),
    };
    let mut ends = BTreeMap::new();
    // Next offset to read, per partition not yet at its end.
    let mut left: BTreeMap<i32, (i64, i64)> = BTreeMap::new();
    let mut tpl = TopicPartitionList::new();
    for p in read {
        let (low, high) = watermarks(consumer, topic, p, patience, stop).map_err(request("read the topic's end offsets"))?;
        ends.insert(p, high);
        let start = from.filter(|f| *f > low).unwrap_or(low);
        if high > start {
            left.insert(p, (start, high));
            tpl.add_partition_offset(topic, p, Offset::Offset(start)).map_err(request("read from the start offset"))?;
        }
    }
    if left.is_empty() {
        return Ok(Some(ends));
    }
    consumer.assign(&tpl).map_err(request("assign the topic's partitions"))?;
    let mut progress = Instant::now();
    while !left.is_empty() {
        if stop() {
            return Err(ReadError::Stopped);
        }
        if progress.elapsed() > patience {
            return Err(ReadError::Stalled { patience, left: left.iter().map(|(p, (at, end))| (*p, *at, *end)).collect() });
        }
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                use rdkafka::Message;
                let Some(&(next, end)) = left.get(&m.partition()) else { continue };
                // Below `next`: fetched for an earlier read by a consumer
                // kept for reading again (never expected, but never counted).
                if m.offset() >= end || m.offset() < next {
                    continue;
                }
                each(&m);
                progress = Instant::now();
                if m.offset() + 1 >= end {
                    left.remove(&m.partition());
                } else {
                    left.insert(m.partition(), (m.offset() + 1, end));
                }
            }
            Some(Err(e)) if is_refusal(&e) => return Err(ReadError::Refused(e)),
            Some(Err(e)) => debug!("reading {topic}: {e}"),
            None => {
                // Past a transaction marker at the end: only the position says so.
                if let Ok(at) = consumer.position() {
                    for e in at.elements_for_topic(topic) {
                        if let (Offset::Offset(o), Some(&(_, end))) = (e.offset(), left.get(&e.partition())) {
                            if o >= end {
                                left.remove(&e.partition());
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(Some(ends))
}

/// A partition's watermarks, asked again while it has no leader (a topic
/// made a moment ago, a leader moving), up to `patience`.
fn watermarks<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    partition: i32,
    patience: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<(i64, i64), KafkaError> {
    let until = Instant::now() + patience;
    loop {
        match consumer.fetch_watermarks(topic, partition, REQUEST_TIMEOUT) {
            Err(e) if leaderless(&e) && Instant::now() < until && !stop() => {
                debug!("{topic}-{partition} has no leader yet ({e}); asking again");
                std::thread::sleep(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

fn leaderless(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::LeaderNotAvailable | RDKafkaErrorCode::NotLeaderForPartition | RDKafkaErrorCode::UnknownTopicOrPartition)
    )
}

/// Errors no retry mends (librdkafka retries the others itself).
fn is_refusal(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::TopicAuthorizationFailed
                | RDKafkaErrorCode::GroupAuthorizationFailed
                | RDKafkaErrorCode::ClusterAuthorizationFailed
                | RDKafkaErrorCode::SaslAuthenticationFailed
                | RDKafkaErrorCode::Authentication
                | RDKafkaErrorCode::SSL
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use rdkafka::mocking::MockCluster;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    use rdkafka::ClientConfig;

    fn consumer(bootstrap: &str) -> BaseConsumer {
        ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", "topic-reader-test")
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "false")
            .create()
            .unwrap()
    }

    fn produce(bootstrap: &str, topic: &str, records: &[(i32, &str)]) {
        let p: BaseProducer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
        for (partition, value) in records {
            p.send(BaseRecord::<(), str>::to(topic).partition(*partition).payload(*value)).unwrap();
        }
        p.flush(Duration::from_secs(30)).unwrap();
    }

    /// (partition, offset, value) of each record handed over.
    type Seen = Vec<(i32, i64, String)>;

    fn read(bootstrap: &str, topic: &str, partitions: Partitions) -> Result<Option<(Seen, Ends)>, ReadError> {
        use rdkafka::Message;
        let mut seen = Vec::new();
        let ends = read_to_end(&consumer(bootstrap), topic, partitions, Duration::from_secs(30), &|| false, |m| {
            seen.push((m.partition(), m.offset(), String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned()))
        })?;
        Ok(ends.map(|e| (seen, e)))
    }

    #[test]
    fn every_partition_to_the_end_it_had_when_asked_and_an_empty_one_at_once() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 3, 1).unwrap();
        let b = cluster.bootstrap_servers();
        produce(&b, "t", &[(0, "a"), (0, "b"), (2, "c")]);
        let (seen, ends) = read(&b, "t", Partitions::All).unwrap().expect("the topic exists");
        assert_eq!(ends, BTreeMap::from([(0, 2), (1, 0), (2, 1)]));
        let mut seen = seen;
        seen.sort();
        assert_eq!(seen, vec![(0, 0, "a".into()), (0, 1, "b".into()), (2, 0, "c".into())]);
    }

    #[test]
    fn partition_zero_from_an_offset_and_only_it() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 2, 1).unwrap();
        let b = cluster.bootstrap_servers();
        produce(&b, "t", &[(0, "a"), (0, "b"), (0, "c"), (1, "x")]);
        let (seen, ends) = read(&b, "t", Partitions::Zero { from: Some(1) }).unwrap().unwrap();
        assert_eq!(ends, BTreeMap::from([(0, 3)]));
        assert_eq!(seen, vec![(0, 1, "b".into()), (0, 2, "c".into())]);
        // An offset below the log start reads from the start.
        let (seen, _) = read(&b, "t", Partitions::Zero { from: Some(-5) }).unwrap().unwrap();
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn a_missing_topic_is_none_and_a_stop_ends_the_read() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 1, 1).unwrap();
        let b = cluster.bootstrap_servers();
        assert!(read(&b, "absent", Partitions::All).unwrap().is_none());
        produce(&b, "t", &[(0, "a")]);
        let stopped = read_to_end(&consumer(&b), "t", Partitions::All, Duration::from_secs(30), &|| true, |_| {});
        assert!(matches!(stopped, Err(ReadError::Stopped)), "{stopped:?}");
    }
}
