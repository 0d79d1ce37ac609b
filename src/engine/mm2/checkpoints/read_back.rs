//! Reading back partition 0 of an offset-syncs or checkpoints topic, as
//! Java does at start: the syncs to translate with, and the checkpoints
//! last written (so only those that moved are written again).

use std::fmt;
use std::time::Duration;

use rdkafka::consumer::BaseConsumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::ClientConfig;

use crate::kafka::admin::admin_config;
use crate::kafka::topic_reader::{self, Partitions, ReadError};

/// Records as (offset, key, value).
pub(super) type KeyValues = Vec<(i64, Vec<u8>, Vec<u8>)>;

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
    let mut c = admin_config(config);
    c.set("enable.auto.commit", "false").set("enable.partition.eof", "false").set("group.id", "mirror-maker-internal-reader");
    let consumer: BaseConsumer = c.create().map_err(|error| ReadBackError::Client { topic: topic.to_string(), error })?;
    let mut out = Vec::new();
    topic_reader::read_to_end(&consumer, topic, Partitions::Zero { from }, patience, stop, |m| {
        if let (Some(k), Some(v)) = (m.key(), m.payload()) {
            out.push((m.offset(), k.to_vec(), v.to_vec()));
        }
    })
    .map_err(|error| ReadBackError::Read { topic: topic.to_string(), error })?;
    Ok(out)
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
