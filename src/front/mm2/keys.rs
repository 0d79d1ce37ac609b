//! The key names MirrorMaker 2 (Kafka 3.9) knows, as tables: which keys a
//! connector takes (and so survive at top level), which are client keys
//! (copied into every client of a cluster), which the Connect worker reads,
//! and the typed definitions of the connector keys with Java's defaults.
//! Copied from the 3.9 ConfigDefs (`MirrorConnectorConfig`,
//! `MirrorSourceConfig`, `MirrorCheckpointConfig`, `MirrorHeartbeatConfig`,
//! Connect's `ConnectorConfig`, `SslConfigs`, `SaslConfigs`), because the
//! assembly of §1.3 keeps or drops a key by exactly these names.

use crate::plan::policy::{DEFAULT_POLICY_CLASS, DEFAULT_SEPARATOR, GROUPS_DEFAULT, GROUPS_EXCLUDE_DEFAULT, TOPICS_DEFAULT, TOPICS_EXCLUDE_DEFAULT};

/// Key names the readers use that no typed definition below holds; each
/// table lists them by these names.
pub const BOOTSTRAP_SERVERS: &str = "bootstrap.servers";
pub const NAME: &str = "name";
pub const CONNECTOR_CLASS: &str = "connector.class";
pub const TRANSFORMS: &str = "transforms";
pub const PREDICATES: &str = "predicates";
pub const CLUSTERS: &str = "clusters";
pub const CONFIG_PROVIDERS: &str = "config.providers";
/// The prefix of the replication policy's keys, copied whole into every connector and worker.
pub const REPLICATION_POLICY_PREFIX: &str = "replication.policy";
pub const LISTENERS: &str = "listeners";
pub const DEDICATED_MODE_ENABLE_INTERNAL_REST: &str = "dedicated.mode.enable.internal.rest";
/// A client's id: a key of every Kafka client, and a Connect worker key.
pub const CLIENT_ID: &str = "client.id";
/// The Connect worker's group.
pub const GROUP_ID: &str = "group.id";

/// `MirrorClientConfig.CLIENT_CONFIG_DEF`: the keys a cluster's clients share.
pub const CLIENT_KEYS: &[&str] = &[
    BOOTSTRAP_SERVERS,
    "security.protocol",
    "ssl.protocol",
    "ssl.provider",
    "ssl.cipher.suites",
    "ssl.enabled.protocols",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm",
    "ssl.secure.random.implementation",
    "ssl.engine.factory.class",
    "sasl.kerberos.service.name",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds",
    "sasl.mechanism",
    "sasl.jaas.config",
    "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.header.urlencode",
];

pub fn is_client_key(key: &str) -> bool {
    CLIENT_KEYS.contains(&key)
}

/// Connect's `ConnectorConfig.configDef()` names, part of every connector's ConfigDef.
const CONNECT_CONNECTOR_KEYS: &[&str] = &[
    NAME,
    CONNECTOR_CLASS,
    TASKS_MAX.name,
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    TRANSFORMS,
    PREDICATES,
    "config.action.reload",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
];

/// A connector key's ConfigDef type, as Java parses the (trimmed) value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Bool,
    Int,
    Short,
    Long,
    List,
    Str,
    Class,
    /// `ValidString.in(...)`: one of these, case-sensitive.
    OneOf(&'static [&'static str]),
    /// `CaseInsensitiveValidString.in(...)`.
    OneOfAnyCase(&'static [&'static str]),
}

/// One connector key of §1.6: name, type and Java's default.
#[derive(Debug, Clone, Copy)]
pub struct KeyDef {
    pub name: &'static str,
    pub ty: Ty,
    /// `None`: no default (the driver sets it, or nothing reads it unset).
    pub default: Option<&'static str>,
}

const fn def(name: &'static str, ty: Ty, default: &'static str) -> KeyDef {
    KeyDef { name, ty, default: Some(default) }
}

pub const CONFIG_PROPERTIES_EXCLUDE_DEFAULT: &str = "follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, \
     message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas";

/// Deprecated names and the names that replace them (`ConfigUtils.translateDeprecatedConfigs`).
pub const DEPRECATED: &[(&str, &str)] = &[
    (TOPICS_BLACKLIST.name, TOPICS_EXCLUDE.name),
    (GROUPS_BLACKLIST.name, GROUPS_EXCLUDE.name),
    (CONFIG_PROPERTIES_BLACKLIST.name, CONFIG_PROPERTIES_EXCLUDE.name),
];

// The typed connector keys of the three MirrorMaker connectors (3.9), each
// defined once, here: the readers take these definitions, never the name again.
pub const ENABLED: KeyDef = def("enabled", Ty::Bool, "true");
pub const SOURCE_CLUSTER_ALIAS: KeyDef = KeyDef { name: "source.cluster.alias", ty: Ty::Str, default: None };
pub const TARGET_CLUSTER_ALIAS: KeyDef = def("target.cluster.alias", Ty::Str, "target");
pub const ADMIN_TIMEOUT_MS: KeyDef = def("admin.timeout.ms", Ty::Long, "60000");
pub const REPLICATION_POLICY_CLASS: KeyDef = def("replication.policy.class", Ty::Class, DEFAULT_POLICY_CLASS);
pub const REPLICATION_POLICY_SEPARATOR: KeyDef = def("replication.policy.separator", Ty::Str, DEFAULT_SEPARATOR);
pub const REPLICATION_POLICY_INTERNAL_TOPIC_SEPARATOR_ENABLED: KeyDef = def("replication.policy.internal.topic.separator.enabled", Ty::Bool, "true");
pub const FORWARDING_ADMIN_CLASS: KeyDef = def("forwarding.admin.class", Ty::Class, "org.apache.kafka.clients.admin.ForwardingAdmin");
pub const METRIC_REPORTERS: KeyDef = KeyDef { name: "metric.reporters", ty: Ty::List, default: None };
pub const AUTO_INCLUDE_JMX_REPORTER: KeyDef = def("auto.include.jmx.reporter", Ty::Bool, "true");
pub const TASKS_MAX: KeyDef = def("tasks.max", Ty::Int, "1");
// MirrorSourceConnector
pub const TOPICS: KeyDef = def("topics", Ty::List, ".*");
pub const TOPICS_EXCLUDE: KeyDef = def("topics.exclude", Ty::List, ".*[\\-\\.]internal, .*\\.replica, __.*");
pub const TOPICS_BLACKLIST: KeyDef = KeyDef { name: "topics.blacklist", ty: Ty::List, default: None };
pub const CONFIG_PROPERTIES_EXCLUDE: KeyDef = def("config.properties.exclude", Ty::List, CONFIG_PROPERTIES_EXCLUDE_DEFAULT);
pub const CONFIG_PROPERTIES_BLACKLIST: KeyDef = KeyDef { name: "config.properties.blacklist", ty: Ty::List, default: None };
pub const TOPIC_FILTER_CLASS: KeyDef = def("topic.filter.class", Ty::Class, "org.apache.kafka.connect.mirror.DefaultTopicFilter");
pub const CONFIG_PROPERTY_FILTER_CLASS: KeyDef = def("config.property.filter.class", Ty::Class, "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter");
pub const CONSUMER_POLL_TIMEOUT_MS: KeyDef = def("consumer.poll.timeout.ms", Ty::Long, "1000");
pub const REFRESH_TOPICS_ENABLED: KeyDef = def("refresh.topics.enabled", Ty::Bool, "true");
pub const REFRESH_TOPICS_INTERVAL_SECONDS: KeyDef = def("refresh.topics.interval.seconds", Ty::Long, "600");
pub const SYNC_TOPIC_CONFIGS_ENABLED: KeyDef = def("sync.topic.configs.enabled", Ty::Bool, "true");
pub const SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS: KeyDef = def("sync.topic.configs.interval.seconds", Ty::Long, "600");
pub const USE_INCREMENTAL_ALTER_CONFIGS: KeyDef = def("use.incremental.alter.configs", Ty::OneOf(&["requested", "required", "never"]), "requested");
pub const SYNC_TOPIC_ACLS_ENABLED: KeyDef = def("sync.topic.acls.enabled", Ty::Bool, "true");
pub const SYNC_TOPIC_ACLS_INTERVAL_SECONDS: KeyDef = def("sync.topic.acls.interval.seconds", Ty::Long, "600");
pub const REPLICATION_FACTOR: KeyDef = def("replication.factor", Ty::Int, "2");
pub const OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR: KeyDef = def("offset-syncs.topic.replication.factor", Ty::Short, "3");
pub const OFFSET_LAG_MAX: KeyDef = def("offset.lag.max", Ty::Long, "100");
pub const OFFSET_SYNCS_TOPIC_LOCATION: KeyDef = def("offset-syncs.topic.location", Ty::OneOf(&["source", "target"]), "source");
pub const ADD_SOURCE_ALIAS_TO_METRICS: KeyDef = def("add.source.alias.to.metrics", Ty::Bool, "false");
pub const EMIT_OFFSET_SYNCS_ENABLED: KeyDef = def("emit.offset-syncs.enabled", Ty::Bool, "true");
// MirrorCheckpointConnector
pub const GROUPS: KeyDef = def("groups", Ty::List, ".*");
pub const GROUPS_EXCLUDE: KeyDef = def("groups.exclude", Ty::List, "console-consumer-.*, connect-.*, __.*");
pub const GROUPS_BLACKLIST: KeyDef = KeyDef { name: "groups.blacklist", ty: Ty::List, default: None };
pub const GROUP_FILTER_CLASS: KeyDef = def("group.filter.class", Ty::Class, "org.apache.kafka.connect.mirror.DefaultGroupFilter");
pub const REFRESH_GROUPS_ENABLED: KeyDef = def("refresh.groups.enabled", Ty::Bool, "true");
pub const REFRESH_GROUPS_INTERVAL_SECONDS: KeyDef = def("refresh.groups.interval.seconds", Ty::Long, "600");
pub const EMIT_CHECKPOINTS_ENABLED: KeyDef = def("emit.checkpoints.enabled", Ty::Bool, "true");
pub const EMIT_CHECKPOINTS_INTERVAL_SECONDS: KeyDef = def("emit.checkpoints.interval.seconds", Ty::Long, "60");
pub const SYNC_GROUP_OFFSETS_ENABLED: KeyDef = def("sync.group.offsets.enabled", Ty::Bool, "false");
pub const SYNC_GROUP_OFFSETS_INTERVAL_SECONDS: KeyDef = def("sync.group.offsets.interval.seconds", Ty::Long, "60");
pub const CHECKPOINTS_TOPIC_REPLICATION_FACTOR: KeyDef = def("checkpoints.topic.replication.factor", Ty::Short, "3");
// MirrorHeartbeatConnector
pub const EMIT_HEARTBEATS_ENABLED: KeyDef = def("emit.heartbeats.enabled", Ty::Bool, "true");
pub const EMIT_HEARTBEATS_INTERVAL_SECONDS: KeyDef = def("emit.heartbeats.interval.seconds", Ty::Long, "1");
pub const HEARTBEATS_TOPIC_REPLICATION_FACTOR: KeyDef = def("heartbeats.topic.replication.factor", Ty::Short, "3");

/// Every typed connector key, in the order of the ConfigDefs.
pub const CONNECTOR_DEFS: &[KeyDef] = &[
    ENABLED,
    SOURCE_CLUSTER_ALIAS,
    TARGET_CLUSTER_ALIAS,
    ADMIN_TIMEOUT_MS,
    REPLICATION_POLICY_CLASS,
    REPLICATION_POLICY_SEPARATOR,
    REPLICATION_POLICY_INTERNAL_TOPIC_SEPARATOR_ENABLED,
    FORWARDING_ADMIN_CLASS,
    METRIC_REPORTERS,
    AUTO_INCLUDE_JMX_REPORTER,
    TASKS_MAX,
    TOPICS,
    TOPICS_EXCLUDE,
    TOPICS_BLACKLIST,
    CONFIG_PROPERTIES_EXCLUDE,
    CONFIG_PROPERTIES_BLACKLIST,
    TOPIC_FILTER_CLASS,
    CONFIG_PROPERTY_FILTER_CLASS,
    CONSUMER_POLL_TIMEOUT_MS,
    REFRESH_TOPICS_ENABLED,
    REFRESH_TOPICS_INTERVAL_SECONDS,
    SYNC_TOPIC_CONFIGS_ENABLED,
    SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS,
    USE_INCREMENTAL_ALTER_CONFIGS,
    SYNC_TOPIC_ACLS_ENABLED,
    SYNC_TOPIC_ACLS_INTERVAL_SECONDS,
    REPLICATION_FACTOR,
    OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR,
    OFFSET_LAG_MAX,
    OFFSET_SYNCS_TOPIC_LOCATION,
    ADD_SOURCE_ALIAS_TO_METRICS,
    EMIT_OFFSET_SYNCS_ENABLED,
    GROUPS,
    GROUPS_EXCLUDE,
    GROUPS_BLACKLIST,
    GROUP_FILTER_CLASS,
    REFRESH_GROUPS_ENABLED,
    REFRESH_GROUPS_INTERVAL_SECONDS,
    EMIT_CHECKPOINTS_ENABLED,
    EMIT_CHECKPOINTS_INTERVAL_SECONDS,
    SYNC_GROUP_OFFSETS_ENABLED,
    SYNC_GROUP_OFFSETS_INTERVAL_SECONDS,
    CHECKPOINTS_TOPIC_REPLICATION_FACTOR,
    EMIT_HEARTBEATS_ENABLED,
    EMIT_HEARTBEATS_INTERVAL_SECONDS,
    HEARTBEATS_TOPIC_REPLICATION_FACTOR,
];

/// Read by `DefaultConfigPropertyFilter` from the connector config, but in
/// no connector's ConfigDef: dropped at top level, honoured per flow.
pub const USE_DEFAULTS_FROM: KeyDef = def("use.defaults.from", Ty::OneOf(&["source", "target"]), "target");

pub fn connector_def(key: &str) -> Option<&'static KeyDef> {
    CONNECTOR_DEFS.iter().find(|d| d.name == key).or((key == USE_DEFAULTS_FROM.name).then_some(&USE_DEFAULTS_FROM))
}

// The Connect worker keys of a flow's herder that matter to a mirror
// (`WorkerConfig`, `DistributedConfig`); the names and topics without a
// default here get theirs from the driver (`workerConfig`), per flow.
pub const WORKER_GROUP_ID: KeyDef = KeyDef { name: GROUP_ID, ty: Ty::Str, default: None };
pub const WORKER_CLIENT_ID: KeyDef = KeyDef { name: CLIENT_ID, ty: Ty::Str, default: None };
pub const OFFSET_STORAGE_TOPIC: KeyDef = KeyDef { name: "offset.storage.topic", ty: Ty::Str, default: None };
pub const CONFIG_STORAGE_TOPIC: KeyDef = KeyDef { name: "config.storage.topic", ty: Ty::Str, default: None };
pub const STATUS_STORAGE_TOPIC: KeyDef = KeyDef { name: "status.storage.topic", ty: Ty::Str, default: None };
pub const OFFSET_STORAGE_PARTITIONS: KeyDef = def("offset.storage.partitions", Ty::Int, "25");
pub const STATUS_STORAGE_PARTITIONS: KeyDef = def("status.storage.partitions", Ty::Int, "5");
pub const OFFSET_STORAGE_REPLICATION_FACTOR: KeyDef = def("offset.storage.replication.factor", Ty::Short, "3");
pub const CONFIG_STORAGE_REPLICATION_FACTOR: KeyDef = def("config.storage.replication.factor", Ty::Short, "3");
pub const STATUS_STORAGE_REPLICATION_FACTOR: KeyDef = def("status.storage.replication.factor", Ty::Short, "3");
pub const OFFSET_FLUSH_INTERVAL_MS: KeyDef = def("offset.flush.interval.ms", Ty::Long, "60000");
pub const OFFSET_FLUSH_TIMEOUT_MS: KeyDef = def("offset.flush.timeout.ms", Ty::Long, "5000");
// SourceConnectorConfig's exactly-once keys, read per flow (Java drops
// them at top level: they are not in MirrorMakerConfig's names).
pub const EXACTLY_ONCE_SUPPORT: KeyDef = def("exactly.once.support", Ty::OneOfAnyCase(&["requested", "required"]), "requested");
pub const TRANSACTION_BOUNDARY: KeyDef = def("transaction.boundary", Ty::OneOfAnyCase(&["poll", "interval", "connector"]), "poll");
pub const TRANSACTION_BOUNDARY_INTERVAL_MS: KeyDef = KeyDef { name: "transaction.boundary.interval.ms", ty: Ty::Long, default: None };
/// The value of `exactly.once.source.support` that turns exactly-once on.
pub const EXACTLY_ONCE_ENABLED: &str = "enabled";
pub const EXACTLY_ONCE_SOURCE_SUPPORT: KeyDef = def("exactly.once.source.support", Ty::OneOfAnyCase(&["disabled", "preparing", "enabled"]), "disabled");

/// Every typed worker key above.
pub const WORKER_DEFS: &[KeyDef] = &[
    WORKER_GROUP_ID,
    WORKER_CLIENT_ID,
    OFFSET_STORAGE_TOPIC,
    CONFIG_STORAGE_TOPIC,
    STATUS_STORAGE_TOPIC,
    OFFSET_STORAGE_PARTITIONS,
    STATUS_STORAGE_PARTITIONS,
    OFFSET_STORAGE_REPLICATION_FACTOR,
    CONFIG_STORAGE_REPLICATION_FACTOR,
    STATUS_STORAGE_REPLICATION_FACTOR,
    OFFSET_FLUSH_INTERVAL_MS,
    OFFSET_FLUSH_TIMEOUT_MS,
    EXACTLY_ONCE_SOURCE_SUPPORT,
];

pub fn worker_def(key: &str) -> Option<&'static KeyDef> {
    WORKER_DEFS.iter().find(|d| d.name == key)
}

/// `MirrorMakerConfig.allConfigNames()`: a top-level key survives into the
/// connector configs only if it is one of these.
pub fn is_connector_key(key: &str) -> bool {
    CONNECT_CONNECTOR_KEYS.contains(&key) || CONNECTOR_DEFS.iter().any(|d| d.name == key) || is_client_key(key)
}

/// Keys of `MirrorMakerConfig`'s own ConfigDef, besides the client keys.
pub const DRIVER_KEYS: &[&str] = &[
    CLUSTERS,
    DEDICATED_MODE_ENABLE_INTERNAL_REST,
    CONFIG_PROVIDERS,
    LISTENERS,
    "rest.advertised.host.name",
    "rest.advertised.port",
    "rest.advertised.listener",
    "access.control.allow.origin",
    "access.control.allow.methods",
    "response.http.headers.config",
    "ssl.client.auth",
];

/// Top-level prefixes `MirrorMakerConfig.workerConfig` copies into every worker.
pub const WORKER_PREFIXES: &[&str] = &[
    "offset.storage",
    "config.storage",
    "status.storage",
    "key.converter",
    "value.converter",
    "header.converter",
    "task",
    "worker",
    REPLICATION_POLICY_PREFIX,
    CONFIG_PROVIDERS,
];

/// Connect worker keys (`WorkerConfig`, `DistributedConfig`) that are only
/// read per target cluster (`B.offset.flush.interval.ms`), never at top level.
pub const WORKER_KEYS: &[&str] = &[
    GROUP_ID,
    CLIENT_ID,
    OFFSET_FLUSH_INTERVAL_MS.name,
    OFFSET_FLUSH_TIMEOUT_MS.name,
    EXACTLY_ONCE_SOURCE_SUPPORT.name,
    "plugin.path",
    "plugin.discovery",
    "connector.client.config.override.policy",
    "topic.tracking.enable",
    "topic.tracking.allow.reset",
    "topic.creation.enable",
    "connect.protocol",
    "scheduled.rebalance.max.delay.ms",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "rebalance.timeout.ms",
    "metadata.max.age.ms",
    "inter.worker.key.generation.algorithm",
    "inter.worker.key.size",
    "inter.worker.key.ttl.ms",
    "inter.worker.signature.algorithm",
    "inter.worker.verification.algorithms",
];

pub fn is_worker_key(key: &str) -> bool {
    WORKER_KEYS.contains(&key) || is_worker_top_level(key)
}

/// Top-level keys `workerConfig` copies into every worker that a worker
/// reads. It copies every key with a prefix of [`WORKER_PREFIXES`], so
/// `task.max` reaches the worker too, where nothing reads it.
pub fn is_worker_top_level(key: &str) -> bool {
    ["offset.storage.", "config.storage.", "status.storage.", "key.converter", "value.converter", "header.converter", CONFIG_PROVIDERS]
        .iter()
        .any(|p| key.starts_with(p))
        || matches!(key, "task.shutdown.graceful.timeout.ms" | "worker.sync.timeout.ms" | "worker.unsync.backoff.ms")
}

/// Connect source-connector keys (`SourceConnectorConfig`): valid per flow,
/// not in `allConfigNames`, so dropped at top level.
pub fn is_source_connector_key(key: &str) -> bool {
    matches!(key, "exactly.once.support" | "transaction.boundary" | "transaction.boundary.interval.ms" | "offsets.storage.topic")
        || key.starts_with("topic.creation.")
}

/// Keys copied from guides that Java accepts and never reads, with what to know.
pub fn dead_key(key: &str) -> Option<&'static str> {
    match key {
        "heartbeats.topic.retention.ms" | "checkpoints.topic.retention.ms" | "offset.syncs.topic.retention.ms" | "offset-syncs.topic.retention.ms" => Some(
            "KIP-382 listed it but it was never implemented: Java accepts it and never reads it. The internal topics are created compacted, \
             with no retention setting; remove the line (set retention on the topic itself if you must)",
        ),
        _ => None,
    }
}

/// Keys Java's connectors or Connect worker read that have nothing to act
/// on in this mirror (issue #30 item 6): accepted, and each line is named
/// in one warning at start with the reason. `None`: the key is honoured (or
/// judged elsewhere).
pub fn no_effect_here(key: &str) -> Option<&'static str> {
    Some(match key {
        "tasks.max.enforce" => "Connect's check that a connector makes no more tasks than tasks.max; here tasks.max is the number of streams, never exceeded",
        "key.converter" | "value.converter" | "header.converter" => {
            "keys, values and headers are copied as bytes, as MirrorMaker 2's ByteArrayConverter does; this mirror runs no converter"
        }
        "predicates" => "predicates only pick the records of Connect transforms (SMTs), which this mirror does not run",
        "config.action.reload" => "Connect restarts a connector when a config provider's value changes; this mirror reads the file once, at start",
        "errors.retry.timeout" | "errors.retry.delay.max.ms" | "errors.tolerance" | "errors.log.enable" | "errors.log.include.messages" => {
            "Connect's error handling of converters, transforms and (errors.tolerance=all) records the producer could not send; this mirror runs \
             no converter or transform, retries a send until it succeeds and stops the flow on a record the target refuses for good \
             (it never skips one), and logs every failure"
        }
        "metric.reporters" | "auto.include.jmx.reporter" => {
            "Java's metrics reporters (JMX and plug-ins); this mirror has no JMX: its counters are served in Prometheus's format (--metrics.port)"
        }
        "consumer.poll.timeout.ms" => {
            "how long a Java task's poll waits for records; this mirror's streams hand records on as they arrive, so no poll timeout applies"
        }
        "admin.timeout.ms" => "the deadline of the Java connectors' admin calls; this mirror's admin calls keep their own fixed deadlines",
        _ if key.starts_with("config.storage.") || key.starts_with("status.storage.") => {
            "Java's Connect worker keeps its connectors' configs and status in these topics; this mirror's configuration is the file \
             and its status is in its logs and metrics, so it makes and reads neither topic"
        }
        _ => return None,
    })
}

/// Names users reach for that are not close in spelling to the real one.
const KNOWN_MISTAKES: &[(&str, &str)] = &[
    ("topics.whitelist", TOPICS.name),
    ("topics.include", TOPICS.name),
    ("topic.whitelist", TOPICS.name),
    ("whitelist", TOPICS.name),
    ("blacklist", TOPICS_EXCLUDE.name),
    ("topics.regex", TOPICS.name),
    ("groups.whitelist", GROUPS.name),
    ("groups.include", GROUPS.name),
    ("group.whitelist", GROUPS.name),
    ("sync.group.offsets", SYNC_GROUP_OFFSETS_ENABLED.name),
    ("offset.syncs.topic.location", OFFSET_SYNCS_TOPIC_LOCATION.name),
];

/// The real key a misspelled one most likely meant: an explicit mistake,
/// else the nearest known key within edit distance 2, and the deprecated
/// name it was near when that is what matched (the new name is suggested).
pub fn did_you_mean<'a>(key: &str, extra: impl IntoIterator<Item = &'a str>) -> Option<(String, Option<&'static str>)> {
    if let Some((_, to)) = KNOWN_MISTAKES.iter().find(|(k, _)| *k == key) {
        return Some((to.to_string(), None));
    }
    let candidates = CONNECTOR_DEFS.iter().map(|d| d.name).chain(CONNECT_CONNECTOR_KEYS.iter().copied()).chain(DRIVER_KEYS.iter().copied());
    let candidates = candidates.chain(CLIENT_KEYS.iter().copied()).chain([USE_DEFAULTS_FROM.name]).chain(extra);
    let best = candidates.filter(|c| *c != key).filter_map(|c| distance_at_most_2(key, c).map(|d| (d, c))).min()?.1;
    Some(match DEPRECATED.iter().find(|(old, _)| *old == best) {
        Some((old, new)) => (new.to_string(), Some(*old)),
        None => (best.to_string(), None),
    })
}

/// " Did you mean 'x'?" for a message, or "" when nothing is near.
pub fn hint<'a>(key: &str, extra: impl IntoIterator<Item = &'a str>) -> String {
    hint_prefixed(key, "", extra)
}

/// [`hint`] for a key written after a prefix (`A.`, `A->B.`), suggested with it.
pub fn hint_prefixed<'a>(key: &str, prefix: &str, extra: impl IntoIterator<Item = &'a str>) -> String {
    match did_you_mean(key, extra) {
        Some((k, Some(old))) => format!(" Did you mean '{prefix}{k}' (the new name of '{old}')?"),
        Some((k, None)) => format!(" Did you mean '{prefix}{k}'?"),
        None => String::new(),
    }
}

/// The alias a misspelled one most likely meant.
pub fn nearest<'s>(word: &str, among: &'s [String]) -> Option<&'s str> {
    among.iter().filter_map(|a| distance_at_most_2(word, a).map(|d| (d, a.as_str()))).min().map(|(_, a)| a)
}

/// Levenshtein distance if it is at most 2.
fn distance_at_most_2(a: &str, b: &str) -> Option<usize> {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 2 {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().min().is_some_and(|&m| m > 2) {
            return None;
        }
        prev = cur;
    }
    Some(prev[b.len()]).filter(|&d| d <= 2)
}

/// The topic and group pattern defaults as Java's LIST strings, for `origins`.
pub fn list_default(key: &str) -> Option<&'static [&'static str]> {
    match key {
        k if k == TOPICS.name => Some(TOPICS_DEFAULT),
        k if k == TOPICS_EXCLUDE.name => Some(TOPICS_EXCLUDE_DEFAULT),
        k if k == GROUPS.name => Some(GROUPS_DEFAULT),
        k if k == GROUPS_EXCLUDE.name => Some(GROUPS_EXCLUDE_DEFAULT),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typos_users_make_get_the_real_key() {
        let mean = |k: &str| did_you_mean(k, []).map(|(k, _)| k);
        assert_eq!(mean("task.max").as_deref(), Some("tasks.max"));
        assert_eq!(mean("sync.topics.configs.enabled").as_deref(), Some("sync.topic.configs.enabled"));
        assert_eq!(mean("topic.blacklist").as_deref(), Some("topics.exclude"));
        assert_eq!(hint("topic.blacklist", []), " Did you mean 'topics.exclude' (the new name of 'topics.blacklist')?");
        assert_eq!(mean("offset.syncs.topic.replication.factor").as_deref(), Some("offset-syncs.topic.replication.factor"));
        assert_eq!(mean("topics.whitelist").as_deref(), Some("topics"));
        assert_eq!(mean("emit.checkpoint.enabled").as_deref(), Some("emit.checkpoints.enabled"));
        assert_eq!(mean("completely.different"), None);
        assert_eq!(hint("completely.different", []), "");
        assert_eq!(mean("bootstrap.server").as_deref(), Some("bootstrap.servers"));
    }

    #[test]
    fn tables_agree_with_javas_names() {
        assert!(is_connector_key("tasks.max") && is_connector_key("topics") && is_connector_key("ssl.truststore.location"));
        assert!(is_connector_key("consumer.poll.timeout.ms") && is_connector_key("emit.heartbeats.enabled"));
        assert!(!is_connector_key("use.defaults.from") && !is_connector_key("consumer.max.poll.records"));
        assert!(is_worker_key("offset.storage.replication.factor") && is_worker_key("offset.flush.interval.ms"));
        assert!(dead_key("heartbeats.topic.retention.ms").is_some());
        assert_eq!(distance_at_most_2("abc", "abc"), Some(0));
        assert_eq!(distance_at_most_2("abc", "abxyz"), None);
    }

    /// Every key name of the tables, the names the readers must take from here.
    fn defined_names() -> Vec<&'static str> {
        let defs = CONNECTOR_DEFS.iter().chain(WORKER_DEFS).chain([&USE_DEFAULTS_FROM]).map(|d| d.name);
        let tables = [CLIENT_KEYS, CONNECT_CONNECTOR_KEYS, DRIVER_KEYS, WORKER_KEYS].into_iter().flatten().copied();
        defs.chain(tables).collect()
    }

    /// The string literals of Rust source, outside comments and char literals.
    fn string_literals(code: &str) -> Vec<String> {
        let (mut out, mut chars) = (Vec::new(), code.chars().peekable());
        while let Some(c) = chars.next() {
            match c {
                '/' if chars.peek() == Some(&'/') => {
                    chars.by_ref().find(|&c| c == '\n');
                }
                // '"' and '\'' are chars, not strings; a lifetime ('a) has no closing quote nearby.
                '\'' => {
                    let ahead: String = chars.clone().take(3).collect();
                    if ahead.starts_with('\\') {
                        chars.by_ref().find(|&c| c == '\'');
                    } else if ahead.chars().nth(1) == Some('\'') {
                        chars.nth(1);
                    }
                }
                '"' => {
                    let mut lit = String::new();
                    while let Some(c) = chars.next() {
                        match c {
                            '\\' => lit.extend(chars.next()),
                            '"' => break,
                            c => lit.push(c),
                        }
                    }
                    out.push(lit);
                }
                _ => {}
            }
        }
        out
    }

    /// A key the tables define reappearing as a whole string literal in
    /// another front/mm2 file (outside its tests): the readers take the
    /// definition (`TOPICS.name`, `BOOTSTRAP_SERVERS`), so a key is
    /// spelled once and a typo cannot hide in a second spelling.
    fn respelled(file: &str, code: &str, names: &[&str]) -> Vec<String> {
        let code = code.split("#[cfg(test)]\nmod tests {").next().unwrap_or_default();
        string_literals(code).into_iter().filter(|l| names.contains(&l.as_str())).map(|l| format!("{file}: \"{l}\"")).collect()
    }

    #[test]
    fn every_key_is_spelled_once_in_its_definition() {
        let names = defined_names();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/front/mm2");
        let mut found = Vec::new();
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).expect("src/front/mm2") {
            let path = entry.expect("a directory entry").path();
            let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if !file.ends_with(".rs") || file == "keys.rs" || file == "tests.rs" {
                continue;
            }
            found.extend(respelled(&file, &std::fs::read_to_string(&path).expect("readable source"), &names));
            read += 1;
        }
        assert!(read >= 6, "only {read} files read in {}", dir.display());
        assert!(found.is_empty(), "keys spelled again instead of taken from keys.rs: {found:?}");
        // The check itself: a respelled key is found, a comment or a longer text is not.
        let sample = "let a = cc.get(\"tasks.max\"); // \"topics\"\nlet b = '\"'; let c = \"topics.exclude is {x}\";";
        assert_eq!(respelled("x.rs", sample, &names), ["x.rs: \"tasks.max\""]);
    }
}
