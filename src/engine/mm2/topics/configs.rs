//! Topic configs: reading them ([`configs_of`], one DescribeConfigs per
//! [`CHUNK`] topics), which of a source topic's own configs are copied
//! ([`NOT_COPIED`], or MM2's `config.properties.exclude`), MirrorMaker 2's
//! `sync.topic.configs`, and the max.message.bytes check of target topics
//! that exist already. Only warnings come out of here: a topic whose
//! configs cannot be read or written is mirrored all the same.

use std::collections::{BTreeMap, HashMap};

use log::{debug, info, warn};
use rdkafka::admin::{AdminOptions, AlterConfig, ConfigSource, OwnedResourceSpecifier, ResourceSpecifier};
use rdkafka::error::RDKafkaErrorCode;

use super::error::TopicSyncError;
use super::link::{Link, CHUNK, TIMEOUT};
use crate::kafka::admin::{block_on, Admin};

/// A topic's config entries: name -> (value, where it comes from).
pub(super) type Configs = BTreeMap<String, (String, Set)>;

/// Where a topic config entry's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Set {
    /// Set on the topic itself (DYNAMIC_TOPIC_CONFIG): an override.
    Topic,
    /// Kafka's default (DEFAULT_CONFIG).
    Default,
    /// A broker's dynamic setting (DYNAMIC_BROKER_CONFIG or
    /// DYNAMIC_DEFAULT_BROKER_CONFIG), set with kafka-configs on the brokers.
    DynamicBroker,
    /// A broker's server.properties (STATIC_BROKER_CONFIG), or a source
    /// librdkafka does not name.
    StaticBroker,
}

impl Set {
    fn of(source: ConfigSource) -> Set {
        match source {
            ConfigSource::DynamicTopic => Set::Topic,
            ConfigSource::Default => Set::Default,
            ConfigSource::DynamicBroker | ConfigSource::DynamicDefaultBroker => Set::DynamicBroker,
            _ => Set::StaticBroker,
        }
    }
}

/// Topic configs never copied: they name broker ids of the source cluster.
const NOT_COPIED: &[&str] = &["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"];

/// Every config entry of each of `topics` on `admin`, with one
/// DescribeConfigs per [`CHUNK`] topics. Every topic gets an entry: its
/// configs, or why they could not be read.
pub(super) fn configs_of(admin: &Admin, topics: &[&str]) -> HashMap<String, Result<Configs, TopicSyncError>> {
    let mut out = HashMap::with_capacity(topics.len());
    for part in topics.chunks(CHUNK) {
        let specs: Vec<ResourceSpecifier<'_>> = part.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
        debug!("DescribeConfigs: {} topics in one request", specs.len());
        match block_on(admin.describe_configs(&specs, &AdminOptions::new().request_timeout(Some(TIMEOUT)))) {
            Err(e) => out.extend(part.iter().map(|t| (t.to_string(), Err(TopicSyncError::Describe(e.clone()))))),
            Ok(answers) => {
                for resource in answers.into_iter().flatten() {
                    let OwnedResourceSpecifier::Topic(name) = resource.specifier else { continue };
                    // rdkafka 0.39 drops a resource's own error (not
                    // authorised, unknown topic): it arrives with no
                    // entries, while a topic always has some (defaults included).
                    if resource.entries.is_empty() {
                        out.insert(name, Err(TopicSyncError::NoEntries));
                        continue;
                    }
                    let entries =
                        resource.entries.into_iter().filter(|e| !e.is_sensitive).filter_map(|e| Some((e.name, (e.value?, Set::of(e.source))))).collect();
                    out.insert(name, Ok(entries));
                }
                for t in part {
                    out.entry(t.to_string()).or_insert(Err(TopicSyncError::DescribeNotNamed));
                }
            }
        }
    }
    out
}

impl Link {
    /// The source topic's configs (from every entry of it) that its target
    /// topic gets, but those never copied. MM1 copies the topic's own
    /// overrides. MM2 copies what Java 3.9's `MirrorSourceConnector.targetConfig`
    /// does: every entry but those of a broker's server.properties, and but
    /// Kafka's defaults unless `use.defaults.from = source` asks for them too;
    /// it leaves out what config.properties.exclude names (MM2's own list
    /// covers the broker-id configs and min.insync.replicas).
    pub(super) fn own_configs(&self, all: Configs) -> Vec<(String, String)> {
        let copied = |set: Set| match &self.remote {
            None => set == Set::Topic,
            Some(r) => match set {
                Set::Topic | Set::DynamicBroker => true,
                Set::Default => !r.remove_defaulted,
                Set::StaticBroker => false,
            },
        };
        all.into_iter().filter(|(k, (_, set))| copied(*set) && !self.excluded(k)).map(|(k, (v, _))| (k, v)).collect()
    }

    /// A config never copied (nor removed) by this link.
    fn excluded(&self, key: &str) -> bool {
        match &self.remote {
            Some(r) => r.config_exclude.matches(key),
            None => NOT_COPIED.contains(&key),
        }
    }

    /// The target topic's overrides that `sync.topic.configs` removes: those
    /// of configs the source topic has at Kafka's default (an override
    /// deleted at the source, say), but not those `config.properties.exclude`
    /// names, as Java 3.x's IncrementalAlterConfigs sync deletes them (and
    /// its legacy AlterConfigs, which replaces the whole set, drops them).
    /// None with `use.defaults.from = source`: the source's default values
    /// are then set on the target topic instead ([`Self::own_configs`]).
    fn defaulted_at_source(&self, source: &Configs, target: &Configs) -> Vec<String> {
        if !self.remote.as_ref().is_some_and(|r| r.remove_defaulted) {
            return Vec::new();
        }
        target
            .iter()
            .filter(|(k, (_, set))| *set == Set::Topic && !self.excluded(k) && source.get(*k).is_some_and(|(_, s)| *s == Set::Default))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// MirrorMaker 2's `sync.topic.configs`: every mirrored topic (`topics`,
    /// the source topics settled so far) gets its own source configs set
    /// on its target topic where they differ, and loses the overrides of
    /// configs the source has at their default ([`Self::defaulted_at_source`]).
    /// Compared before anything is written, so a quiet run writes nothing;
    /// the target's overrides of excluded keys are sent along unchanged (the
    /// admin call replaces a topic's whole set), so none is wiped. Per
    /// [`CHUNK`] topics: one DescribeConfigs of each cluster and one
    /// AlterConfigs for those that differ.
    pub(super) fn sync_configs(&self, mut topics: Vec<String>) {
        topics.sort();
        for part in topics.chunks(CHUNK) {
            let targets: Vec<String> = part.iter().map(|t| self.handler.target_topic(t).into_owned()).collect();
            let mut source = configs_of(&self.source, &part.iter().map(String::as_str).collect::<Vec<_>>());
            let mut target = configs_of(&self.target, &targets.iter().map(String::as_str).collect::<Vec<_>>());
            // (source topic, target topic, the target's whole new set, what changed)
            let mut changes: Vec<(&str, &str, BTreeMap<String, String>, String)> = Vec::new();
            for (topic, target_topic) in part.iter().zip(&targets) {
                let missing = || Err(TopicSyncError::NotAsked);
                let (wanted, have, removed) = match (source.remove(topic).unwrap_or_else(missing), target.remove(target_topic).unwrap_or_else(missing)) {
                    (Ok(w), Ok(t)) => {
                        let removed = self.defaulted_at_source(&w, &t);
                        (self.own_configs(w), t, removed)
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        warn!("topic {target_topic}: configs not synced this time: {e}");
                        continue;
                    }
                };
                let mut changed: Vec<String> = wanted
                    .iter()
                    .filter(|(k, v)| have.get(k).filter(|(_, set)| *set == Set::Topic).map(|(tv, _)| tv) != Some(v))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                changed.extend(removed.iter().map(|k| format!("{k} removed (at its default on the source)")));
                if changed.is_empty() {
                    continue;
                }
                let mut all: BTreeMap<String, String> =
                    have.into_iter().filter(|(k, (_, set))| *set == Set::Topic && !removed.contains(k)).map(|(k, (v, _))| (k, v)).collect();
                all.extend(wanted);
                changes.push((topic.as_str(), target_topic.as_str(), all, changed.join(", ")));
            }
            if changes.is_empty() {
                continue;
            }
            let alters: Vec<AlterConfig<'_>> = changes
                .iter()
                .map(|(_, target_topic, all, _)| all.iter().fold(AlterConfig::new(ResourceSpecifier::Topic(target_topic)), |a, (k, v)| a.set(k, v)))
                .collect();
            debug!("AlterConfigs: {} topics in one request", alters.len());
            let opts = AdminOptions::new().request_timeout(Some(TIMEOUT));
            let answers = block_on(self.target.alter_configs(&alters, &opts));
            let by_topic: HashMap<String, Result<(), RDKafkaErrorCode>> = match &answers {
                Ok(list) => list
                    .iter()
                    .filter_map(|a| match a {
                        Ok(OwnedResourceSpecifier::Topic(t)) => Some((t.clone(), Ok(()))),
                        Err((OwnedResourceSpecifier::Topic(t), code)) => Some((t.clone(), Err(*code))),
                        _ => None,
                    })
                    .collect(),
                Err(_) => HashMap::new(),
            };
            for (topic, target_topic, _, shown) in &changes {
                match (&answers, by_topic.get(*target_topic)) {
                    (Err(e), _) => warn!("topic {target_topic}: cannot sync configs ({shown}): {e}"),
                    (Ok(_), Some(Ok(()))) => info!("topic {target_topic}: configs synced from source topic {topic}: {shown}"),
                    (Ok(_), Some(Err(code))) => warn!("topic {target_topic}: cannot sync configs ({shown}): {code}"),
                    (Ok(_), None) => warn!("topic {target_topic}: cannot sync configs ({shown}): the answer did not name it"),
                }
            }
        }
    }

    /// Warns about target topics whose max.message.bytes is below their
    /// source topic's: one DescribeConfigs of each cluster per [`CHUNK`]
    /// topics. Only warnings: a topic that cannot be described is skipped.
    pub(super) fn compare_max_message_bytes(&self, pairs: &[(String, String)]) {
        for part in pairs.chunks(CHUNK) {
            let source = configs_of(&self.source, &part.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>());
            let target = configs_of(&self.target, &part.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>());
            let num = |m: Option<&Result<Configs, TopicSyncError>>| m?.as_ref().ok()?.get("max.message.bytes")?.0.parse::<u64>().ok();
            for (topic, target_topic) in part {
                if let (Some(s), Some(t)) = (num(source.get(topic)), num(target.get(target_topic))) {
                    if t < s {
                        warn!(
                            "target topic {target_topic} has max.message.bytes {t}, smaller than source topic {topic}'s {s}: records larger than {t} bytes \
                             are rejected by the target; raise max.message.bytes on the target topic to at least {s}"
                        );
                    }
                }
            }
        }
    }
}
