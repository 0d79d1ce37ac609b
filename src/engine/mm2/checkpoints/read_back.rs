//! Reading back partition 0 of an offset-syncs or checkpoints topic, as
//! Java does at start: the syncs to translate with, and the checkpoints
//! last written (so only those that moved are written again).

use std::fmt;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::ClientConfig;

use crate::kafka::admin::admin_config;
use crate::kafka::topic_reader::{self, Partitions, ReadError};

use crate::engine::mm2::offset_syncs::{parse_follows, FOLLOWS_HEADER};

/// One record read back.
pub(super) struct Read {
    pub at: i64,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    /// An offset-sync's [`FOLLOWS_HEADER`], when it has one.
    pub follows: Option<(i64, i64)>,
}

pub(super) type KeyValues = Vec<Read>;

/// Reads partition 0 of `topic` from `from` (its start when None or gone)
/// to the end it had when asked (how Java reads offset-syncs and
/// checkpoints); an absent or empty topic gives nothing. Gives up after
/// `patience` without progress, or when `stop` says so.
pub(super) fn read_to_end(
    config: &ClientConfig,
    topic: &str,
    from: Option<i64>,
    patience: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<KeyValues, ReadBackError> {
    Reader::new(config, topic)?.read_to_end(topic, from, patience, stop)
}

/// A reader of partition 0 of topics of one cluster, kept for reading the
/// same topic again and again (a checkpointer tailing the offset-syncs
/// every round): one client and its connections, not one per read.
pub(super) struct Reader(BaseConsumer);

impl Reader {
    /// `topic` only names the reader in an error.
    pub fn new(config: &ClientConfig, topic: &str) -> Result<Reader, ReadBackError> {
        let mut c = admin_config(config);
        c.set("enable.auto.commit", "false").set("enable.partition.eof", "false").set("group.id", "mirror-maker-internal-reader");
        c.create().map(Reader).map_err(|error| ReadBackError::Client { topic: topic.to_string(), error })
    }

    /// As [`read_to_end`] with this reader's client.
    pub fn read_to_end(&self, topic: &str, from: Option<i64>, patience: Duration, stop: &dyn Fn() -> bool) -> Result<KeyValues, ReadBackError> {
        let mut out = Vec::new();
        let read = topic_reader::read_to_end(&self.0, topic, Partitions::Zero { from }, patience, stop, |m| {
            if let (Some(k), Some(v)) = (m.key(), m.payload()) {
                let follows = m.headers().and_then(|h| h.iter().find(|h| h.key == FOLLOWS_HEADER).and_then(|h| h.value.and_then(parse_follows)));
                out.push(Read { at: m.offset(), key: k.to_vec(), value: v.to_vec(), follows });
            }
        })
        .map_err(|error| ReadBackError::Read { topic: topic.to_string(), error });
        // No fetching between reads: the next read assigns again.
        let _ = self.0.unassign();
        read?;
        Ok(out)
    }
}

/// Why [`read_to_end`] did not read a topic to its end.
#[derive(Debug)]
pub(super) enum ReadBackError {
    Client { topic: String, error: KafkaError },
    Read { topic: String, error: ReadError },
}

impl fmt::Display for ReadBackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadBackError::Client { topic, error } => write!(f, "cannot create a reader of {topic}: {error}"),
            ReadBackError::Read { topic, error } => write!(f, "reading {topic}: {error}"),
        }
    }
}
