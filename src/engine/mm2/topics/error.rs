//! Why the topic sync could not do something for a topic: a listing, a
//! request or one topic's answer. Every such failure ends in a warning
//! naming the topic (the record path then falls back to what the broker
//! does), so the text is what an operator reads; each variant says exactly
//! what was said before the errors were typed.

use std::fmt;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

/// What went wrong, for one topic or for every topic of one request.
#[derive(Debug, Clone, PartialEq)]
pub enum TopicSyncError {
    /// A cluster (`cluster`: "source" or "target") did not list its
    /// topics to an admin client made with the settings `via` names.
    List { cluster: &'static str, via: String, error: KafkaError },
    /// A whole request (`request`: CreateTopics, CreatePartitions) of
    /// `topics` topics failed: every topic in it is concerned.
    Request { request: &'static str, topics: usize, error: KafkaError },
    /// The broker answered for this topic with this error.
    Broker(RDKafkaErrorCode),
    /// The broker's answer to a request left this topic out.
    NotNamed,
    /// A DescribeConfigs request failed as a whole.
    Describe(KafkaError),
    /// DescribeConfigs answered for the topic without entries: rdkafka
    /// drops a resource's own error, and a topic always has some.
    NoEntries,
    /// DescribeConfigs' answer left this topic out.
    DescribeNotNamed,
    /// The topic's configs were never asked for.
    NotAsked,
}

impl fmt::Display for TopicSyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopicSyncError::List { cluster, via, error } => write!(f, "cannot list the {cluster}'s topics with its admin client ({via}): {error}"),
            TopicSyncError::Request { request, topics, error } => write!(f, "{request} request of {topics} topics: {error}"),
            TopicSyncError::Broker(code) => write!(f, "{code}"),
            TopicSyncError::NotNamed => f.write_str("the broker's answer did not name it"),
            TopicSyncError::Describe(error) => write!(f, "describe configs: {error}"),
            TopicSyncError::NoEntries => f.write_str("describe configs: no entries in the answer (the principal may need DESCRIBE_CONFIGS on the topic)"),
            TopicSyncError::DescribeNotNamed => f.write_str("describe configs: the answer did not name it"),
            TopicSyncError::NotAsked => f.write_str("not asked"),
        }
    }
}

impl std::error::Error for TopicSyncError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_what_was_said_before() {
        let timed_out = KafkaError::AdminOp(RDKafkaErrorCode::OperationTimedOut);
        let list = TopicSyncError::List {
            cluster: "target",
            via: "admin settings of m.properties: m.properties:3: sasl.jaas.config".into(),
            error: timed_out.clone(),
        };
        assert_eq!(
            list.to_string(),
            format!("cannot list the target's topics with its admin client (admin settings of m.properties: m.properties:3: sasl.jaas.config): {timed_out}")
        );
        assert_eq!(
            TopicSyncError::Request { request: "CreateTopics", topics: 100, error: timed_out.clone() }.to_string(),
            format!("CreateTopics request of 100 topics: {timed_out}")
        );
        assert_eq!(TopicSyncError::Broker(RDKafkaErrorCode::PolicyViolation).to_string(), RDKafkaErrorCode::PolicyViolation.to_string());
        assert_eq!(TopicSyncError::NotNamed.to_string(), "the broker's answer did not name it");
        assert_eq!(TopicSyncError::Describe(timed_out.clone()).to_string(), format!("describe configs: {timed_out}"));
        assert_eq!(TopicSyncError::DescribeNotNamed.to_string(), "describe configs: the answer did not name it");
        assert_eq!(TopicSyncError::NotAsked.to_string(), "not asked");
    }
}
