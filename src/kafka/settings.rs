//! The settings of one client after translation: librdkafka keys with
//! their origins, plus what the mirror itself must do. Shared by every
//! front-end; a leaf above the properties reader.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rdkafka::ClientConfig;

use crate::kafka::conf::accepts;
use crate::kafka::secrets::{is_secret, shown, PUBLIC_FROM_SECRET};

/// Which client a file configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Consumer,
    Producer,
    /// An admin client (MirrorMaker 2's `admin.*` layers): the keys every
    /// client shares; a consumer's or producer's own keys are not passed.
    Admin,
}

/// Where an effective setting came from, for logs and `--check-config`.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    File { at: String, key: String },
    Default(&'static str),
}

/// A translated client configuration plus what the mirror itself must do.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    pub role: Role,
    pub path: PathBuf,
    pub entries: BTreeMap<String, (String, Origin)>,
    pub warnings: Vec<String>,
    /// Infos worth one log line (not problems).
    pub notices: Vec<String>,
    pub group_id: Option<String>,
    pub exclude_internal_topics: bool,
    /// An auto-commit interval from the file, used as the commit-after-ack
    /// interval when `--offset.commit.interval.ms` is not given.
    pub auto_commit_interval_ms: Option<u64>,
    pub bootstrap: String,
    /// `zookeeper.connect` of a ZooKeeper-era consumer file without a broker
    /// list, with its file:line; [`resolve_brokers`] reads the brokers there.
    pub zookeeper_connect: Option<(String, String)>,
    /// 0.8's `kafka.producer.ByteArrayPartitioner`: keyed records are placed
    /// by `abs(Arrays.hashCode(key)) % n` (a custom partitioner).
    pub byte_array_partitioner: bool,
    /// Places (`file:line`, as in [`Origin::File`]) whose value was not
    /// written there but fetched from elsewhere, with text saying from
    /// where: every setting from such a place is shown redacted, with that
    /// text beside its origin. The front decides what is fetched; this
    /// layer only keeps such values out of sight.
    pub fetched: BTreeMap<String, String>,
}

/// Choices the command line makes about how files are read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TranslateOptions {
    /// `--accept.zookeeper.offsets.loss`: a consumer file with
    /// `offsets.storage=zookeeper` starts from `auto.offset.reset`.
    pub accept_zookeeper_offsets_loss: bool,
}

impl ClientSettings {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|(v, _)| v.as_str())
    }

    pub(crate) fn set(&mut self, key: &str, value: impl Into<String>, origin: Origin) {
        self.entries.insert(key.to_string(), (value.into(), origin));
    }

    pub(crate) fn default(&mut self, key: &str, value: &str, why: &'static str) {
        if !self.entries.contains_key(key) {
            self.set(key, value, Origin::Default(why));
        }
    }

    pub fn client_config(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        for (k, (v, _)) in &self.entries {
            c.set(k, v);
        }
        c
    }

    /// One line per setting with its origin; secrets redacted.
    pub fn describe(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|(k, (v, o))| {
                let fetched = match o {
                    Origin::File { at, .. } => self.fetched.get(at),
                    Origin::Default(_) => None,
                };
                let origin = match (o, fetched) {
                    (Origin::File { at, key }, Some(from)) if key == k => format!("{at}, {key} via {from}"),
                    (Origin::File { at, key }, Some(from)) => format!("{at}, translated from {key} via {from}"),
                    (Origin::File { at, key }, None) if key == k => at.clone(),
                    (Origin::File { at, key }, None) => format!("{at}, translated from {key}"),
                    (Origin::Default(why), _) => format!("default: {why}"),
                };
                // Free text made from a secret key's value is secret too (a
                // PEM keystore's path in ssl.certificate.location, the JAAS
                // scope); flags and enums derived from one are not, nor
                // what PUBLIC_FROM_SECRET lists (a keytab's path, a principal).
                let from_secret =
                    matches!(o, Origin::File { key, .. } if is_secret(key)) && accepts(k, "any text").is_ok() && !PUBLIC_FROM_SECRET.contains(&k.as_str());
                let v = if from_secret || fetched.is_some() { "[redacted]".to_string() } else { shown(k, v) };
                format!("{k}={v}  # {origin}")
            })
            .collect()
    }
}
