//! Built-in message handlers: where a source record goes on the target.
//!
//! MM1 loaded a Java class implementing `MirrorMakerMessageHandler`; the
//! handlers people actually wrote did one of four things (keep the topic,
//! rename it, prefix it, keep the source partition), so those are built in.
//! A handler never touches key, value, headers or timestamp.

use std::collections::HashMap;
use std::fmt;

use crate::plan::policy::ReplicationPolicy;

/// A built-in message handler and its argument string, as MM1's
/// `--message.handler` and `--message.handler.args` give them.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerSpec {
    pub name: String,
    pub args: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Handler {
    /// Same topic name; the target partition comes from the key (murmur2).
    Identity,
    /// Topics listed in the map are renamed; others keep their name.
    TopicRename(HashMap<String, String>),
    /// Every topic gets the prefix.
    TopicPrefix(String),
    /// Same topic name and the same partition number as the source.
    PartitionPreserving,
    /// MirrorMaker 2: the remote topic its replication policy names for the
    /// source alias, and the same partition number as the source.
    Remote { policy: ReplicationPolicy, source_alias: String },
}

/// What is wrong with `--message.handler` or `--message.handler.args`;
/// each text says how to write it instead.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerError {
    /// `identity` and `partition-preserving` take no arguments.
    TakesNoArgs { handler: String, args: String },
    /// `topic-prefix` without its prefix.
    NoPrefix,
    /// `topic-rename` without its mapping.
    NoRenames,
    /// A mapping that is not `source<separator>target`.
    NotAPair { pair: String, separator: char },
    /// A source topic mapped twice.
    RenamedTwice { topic: String },
    /// A prefix or a topic of the mapping that Kafka would refuse;
    /// `what` says which.
    IllegalTopic { what: &'static str, name: String },
    /// No built-in handler has that name.
    Unknown { name: String },
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandlerError::TakesNoArgs { handler, args } => {
                write!(f, "--message.handler {handler} takes no arguments, but --message.handler.args '{args}' was given; remove it")
            }
            HandlerError::NoPrefix => {
                f.write_str("--message.handler topic-prefix needs the prefix in --message.handler.args, e.g. --message.handler.args 'dr.'")
            }
            HandlerError::NoRenames => f.write_str("--message.handler topic-rename needs --message.handler.args 'src:dst,src2:dst2'"),
            HandlerError::NotAPair { pair, separator } => {
                write!(f, "--message.handler.args: '{pair}' is not 'source{separator}target'; write e.g. 'orders:orders-copy'")
            }
            HandlerError::RenamedTwice { topic } => write!(f, "--message.handler.args renames '{topic}' twice; keep one mapping"),
            HandlerError::IllegalTopic { what, name } => {
                write!(f, "--message.handler.args: {what} '{name}' is not a legal Kafka topic name (letters, digits, '.', '_', '-', at most 249)")
            }
            HandlerError::Unknown { name } => write!(f, "unknown handler '{name}'"),
        }
    }
}

impl std::error::Error for HandlerError {}

impl Handler {
    pub fn from_spec(spec: &HandlerSpec) -> Result<Handler, HandlerError> {
        let args = spec.args.as_deref().map(str::trim).filter(|a| !a.is_empty());
        match spec.name.as_str() {
            "identity" | "partition-preserving" => {
                if let Some(a) = args {
                    return Err(HandlerError::TakesNoArgs { handler: spec.name.clone(), args: a.to_string() });
                }
                Ok(if spec.name == "identity" { Handler::Identity } else { Handler::PartitionPreserving })
            }
            "topic-prefix" => {
                let prefix = args.ok_or(HandlerError::NoPrefix)?;
                validate_topic_name(prefix, "the prefix")?;
                Ok(Handler::TopicPrefix(prefix.to_string()))
            }
            "topic-rename" => {
                let a = args.ok_or(HandlerError::NoRenames)?;
                let mut map = HashMap::new();
                // Also accept the popular RenameTopicHandler form `src,dst;src2,dst2`.
                let (pair_sep, kv_sep) = if a.contains(':') { (',', ':') } else { (';', ',') };
                for pair in a.split(pair_sep).map(str::trim).filter(|p| !p.is_empty()) {
                    let (src, dst) = pair.split_once(kv_sep).ok_or_else(|| HandlerError::NotAPair { pair: pair.to_string(), separator: kv_sep })?;
                    let (src, dst) = (src.trim(), dst.trim());
                    validate_topic_name(src, "a source topic")?;
                    validate_topic_name(dst, "a target topic")?;
                    if map.insert(src.to_string(), dst.to_string()).is_some() {
                        return Err(HandlerError::RenamedTwice { topic: src.to_string() });
                    }
                }
                Ok(Handler::TopicRename(map))
            }
            other => Err(HandlerError::Unknown { name: other.to_string() }),
        }
    }

    /// The target topic for a source topic.
    pub fn target_topic<'a>(&'a self, topic: &'a str) -> std::borrow::Cow<'a, str> {
        use std::borrow::Cow;
        match self {
            Handler::Identity | Handler::PartitionPreserving => Cow::Borrowed(topic),
            Handler::TopicRename(map) => map.get(topic).map(|t| Cow::Borrowed(t.as_str())).unwrap_or(Cow::Borrowed(topic)),
            Handler::TopicPrefix(prefix) => Cow::Owned(format!("{prefix}{topic}")),
            Handler::Remote { policy, source_alias } => Cow::Owned(policy.format_remote_topic(source_alias, topic)),
        }
    }

    /// The explicit target partition, or `None` to let the partitioner decide.
    pub fn target_partition(&self, source_partition: i32) -> Option<i32> {
        match self {
            Handler::PartitionPreserving | Handler::Remote { .. } => Some(source_partition),
            _ => None,
        }
    }

    /// Whether the handler keeps every topic name: with source == target
    /// that would copy records onto themselves forever.
    pub fn keeps_names(&self) -> bool {
        match self {
            Handler::Identity | Handler::PartitionPreserving => true,
            Handler::TopicRename(map) => map.iter().all(|(s, d)| s == d) || map.is_empty(),
            Handler::TopicPrefix(_) => false,
            // Identity keeps every name but the heartbeats topics'.
            Handler::Remote { policy, .. } => policy.kind == crate::plan::policy::PolicyKind::Identity,
        }
    }

    /// Whether every record goes to its source partition's number, so the
    /// target topic needs at least as many partitions.
    pub fn preserves_partitions(&self) -> bool {
        self.target_partition(0).is_some()
    }

    pub fn name(&self) -> &'static str {
        match self {
            Handler::Identity => "identity",
            Handler::TopicRename(_) => "topic-rename",
            Handler::TopicPrefix(_) => "topic-prefix",
            Handler::PartitionPreserving => "partition-preserving",
            Handler::Remote { .. } => "mm2 replication policy",
        }
    }
}

/// Kafka's legal topic characters, checked early so a typo fails at start,
/// not on the first record.
fn validate_topic_name(name: &str, what: &'static str) -> Result<(), HandlerError> {
    let ok = !name.is_empty() && name.len() <= 249 && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(HandlerError::IllegalTopic { what, name: name.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, args: Option<&str>) -> HandlerSpec {
        HandlerSpec { name: name.into(), args: args.map(String::from) }
    }

    #[test]
    fn identity_keeps_everything() {
        let h = Handler::from_spec(&spec("identity", None)).unwrap();
        assert_eq!(h.target_topic("t"), "t");
        assert_eq!(h.target_partition(3), None);
        assert!(h.keeps_names());
    }

    #[test]
    fn rename_both_syntaxes() {
        let h = Handler::from_spec(&spec("topic-rename", Some("a:b, c:d"))).unwrap();
        assert_eq!(h.target_topic("a"), "b");
        assert_eq!(h.target_topic("c"), "d");
        assert_eq!(h.target_topic("e"), "e");
        assert!(!h.keeps_names());
        let h = Handler::from_spec(&spec("topic-rename", Some("a,b;c,d"))).unwrap();
        assert_eq!(h.target_topic("c"), "d");
    }

    #[test]
    fn rename_errors() {
        assert!(Handler::from_spec(&spec("topic-rename", None)).unwrap_err().to_string().contains("src:dst"));
        assert!(Handler::from_spec(&spec("topic-rename", Some("a:b,a:c"))).unwrap_err().to_string().contains("twice"));
        assert!(Handler::from_spec(&spec("topic-rename", Some("a:b c"))).unwrap_err().to_string().contains("not a legal"));
    }

    #[test]
    fn prefix() {
        let h = Handler::from_spec(&spec("topic-prefix", Some("dr."))).unwrap();
        assert_eq!(h.target_topic("t"), "dr.t");
        assert!(!h.keeps_names());
        assert!(Handler::from_spec(&spec("topic-prefix", None)).is_err());
        assert!(Handler::from_spec(&spec("topic-prefix", Some("a/b"))).is_err());
    }

    #[test]
    fn partition_preserving() {
        let h = Handler::from_spec(&spec("partition-preserving", None)).unwrap();
        assert_eq!(h.target_partition(5), Some(5));
        assert_eq!(h.target_topic("t"), "t");
        assert!(Handler::from_spec(&spec("partition-preserving", Some("x"))).unwrap_err().to_string().contains("takes no arguments"));
    }
}
