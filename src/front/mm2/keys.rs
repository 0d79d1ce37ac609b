//! The key names MirrorMaker 2 (Kafka 3.9) knows, as tables: which keys a
//! connector takes (and so survive at top level), which are client keys
//! (copied into every client of a cluster), which the Connect worker reads,
//! and the typed definitions of the connector keys with Java's defaults.
//! Copied from the 3.9 ConfigDefs (`MirrorConnectorConfig`,
//! `MirrorSourceConfig`, `MirrorCheckpointConfig`, `MirrorHeartbeatConfig`,
//! Connect's `ConnectorConfig`, `SslConfigs`, `SaslConfigs`), because the
//! assembly of §1.3 keeps or drops a key by exactly these names.

use crate::plan::policy::{DEFAULT_POLICY_CLASS, DEFAULT_SEPARATOR, GROUPS_DEFAULT, GROUPS_EXCLUDE_DEFAULT, TOPICS_DEFAULT, TOPICS_EXCLUDE_DEFAULT};

/// `MirrorClientConfig.CLIENT_CONFIG_DEF`: the keys a cluster's clients share.
pub const CLIENT_KEYS: &[&str] = &[
    "bootstrap.servers",
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
    "name",
    "connector.class",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
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

pub const TOPICS_EXCLUDE: &str = "topics.exclude";
pub const GROUPS_EXCLUDE: &str = "groups.exclude";
pub const CONFIG_PROPERTIES_EXCLUDE: &str = "config.properties.exclude";
pub const CONFIG_PROPERTIES_EXCLUDE_DEFAULT: &str = "follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, \
     message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas";

/// Deprecated names and the names that replace them (`ConfigUtils.translateDeprecatedConfigs`).
pub const DEPRECATED: &[(&str, &str)] =
    &[("topics.blacklist", TOPICS_EXCLUDE), ("groups.blacklist", GROUPS_EXCLUDE), ("config.properties.blacklist", CONFIG_PROPERTIES_EXCLUDE)];

/// The typed connector keys of the three MirrorMaker connectors (3.9).
pub const CONNECTOR_DEFS: &[KeyDef] = &[
    def("enabled", Ty::Bool, "true"),
    KeyDef { name: "source.cluster.alias", ty: Ty::Str, default: None },
    def("target.cluster.alias", Ty::Str, "target"),
    def("admin.timeout.ms", Ty::Long, "60000"),
    def("replication.policy.class", Ty::Class, DEFAULT_POLICY_CLASS),
    def("replication.policy.separator", Ty::Str, DEFAULT_SEPARATOR),
    def("replication.policy.internal.topic.separator.enabled", Ty::Bool, "true"),
    def("forwarding.admin.class", Ty::Class, "org.apache.kafka.clients.admin.ForwardingAdmin"),
    KeyDef { name: "metric.reporters", ty: Ty::List, default: None },
    def("auto.include.jmx.reporter", Ty::Bool, "true"),
    def("tasks.max", Ty::Int, "1"),
    // MirrorSourceConnector
    def("topics", Ty::List, ".*"),
    def(TOPICS_EXCLUDE, Ty::List, ".*[\\-\\.]internal, .*\\.replica, __.*"),
    KeyDef { name: "topics.blacklist", ty: Ty::List, default: None },
    def(CONFIG_PROPERTIES_EXCLUDE, Ty::List, CONFIG_PROPERTIES_EXCLUDE_DEFAULT),
    KeyDef { name: "config.properties.blacklist", ty: Ty::List, default: None },
    def("topic.filter.class", Ty::Class, "org.apache.kafka.connect.mirror.DefaultTopicFilter"),
    def("config.property.filter.class", Ty::Class, "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"),
    def("consumer.poll.timeout.ms", Ty::Long, "1000"),
    def("refresh.topics.enabled", Ty::Bool, "true"),
    def("refresh.topics.interval.seconds", Ty::Long, "600"),
    def("sync.topic.configs.enabled", Ty::Bool, "true"),
    def("sync.topic.configs.interval.seconds", Ty::Long, "600"),
    def("use.incremental.alter.configs", Ty::OneOf(&["requested", "required", "never"]), "requested"),
    def("sync.topic.acls.enabled", Ty::Bool, "true"),
    def("sync.topic.acls.interval.seconds", Ty::Long, "600"),
    def("replication.factor", Ty::Int, "2"),
    def("offset-syncs.topic.replication.factor", Ty::Short, "3"),
    def("offset.lag.max", Ty::Long, "100"),
    def("offset-syncs.topic.location", Ty::OneOf(&["source", "target"]), "source"),
    def("add.source.alias.to.metrics", Ty::Bool, "false"),
    def("emit.offset-syncs.enabled", Ty::Bool, "true"),
    // MirrorCheckpointConnector
    def("groups", Ty::List, ".*"),
    def(GROUPS_EXCLUDE, Ty::List, "console-consumer-.*, connect-.*, __.*"),
    KeyDef { name: "groups.blacklist", ty: Ty::List, default: None },
    def("group.filter.class", Ty::Class, "org.apache.kafka.connect.mirror.DefaultGroupFilter"),
    def("refresh.groups.enabled", Ty::Bool, "true"),
    def("refresh.groups.interval.seconds", Ty::Long, "600"),
    def("emit.checkpoints.enabled", Ty::Bool, "true"),
    def("emit.checkpoints.interval.seconds", Ty::Long, "60"),
    def("sync.group.offsets.enabled", Ty::Bool, "false"),
    def("sync.group.offsets.interval.seconds", Ty::Long, "60"),
    def("checkpoints.topic.replication.factor", Ty::Short, "3"),
    // MirrorHeartbeatConnector
    def("emit.heartbeats.enabled", Ty::Bool, "true"),
    def("emit.heartbeats.interval.seconds", Ty::Long, "1"),
    def("heartbeats.topic.replication.factor", Ty::Short, "3"),
];

/// Read by `DefaultConfigPropertyFilter` from the connector config, but in
/// no connector's ConfigDef: dropped at top level, honoured per flow.
pub const USE_DEFAULTS_FROM: KeyDef = def("use.defaults.from", Ty::OneOf(&["source", "target"]), "target");

pub fn connector_def(key: &str) -> Option<&'static KeyDef> {
    CONNECTOR_DEFS.iter().find(|d| d.name == key).or((key == USE_DEFAULTS_FROM.name).then_some(&USE_DEFAULTS_FROM))
}

/// The Connect worker keys of a flow's herder that matter to a mirror
/// (`WorkerConfig`, `DistributedConfig`); the names and topics without a
/// default here get theirs from the driver (`workerConfig`), per flow.
pub const WORKER_DEFS: &[KeyDef] = &[
    KeyDef { name: "group.id", ty: Ty::Str, default: None },
    KeyDef { name: "client.id", ty: Ty::Str, default: None },
    KeyDef { name: "offset.storage.topic", ty: Ty::Str, default: None },
    KeyDef { name: "config.storage.topic", ty: Ty::Str, default: None },
    KeyDef { name: "status.storage.topic", ty: Ty::Str, default: None },
    def("offset.storage.partitions", Ty::Int, "25"),
    def("status.storage.partitions", Ty::Int, "5"),
    def("offset.storage.replication.factor", Ty::Short, "3"),
    def("config.storage.replication.factor", Ty::Short, "3"),
    def("status.storage.replication.factor", Ty::Short, "3"),
    def("offset.flush.interval.ms", Ty::Long, "60000"),
    def("offset.flush.timeout.ms", Ty::Long, "5000"),
    def("exactly.once.source.support", Ty::OneOfAnyCase(&["disabled", "preparing", "enabled"]), "disabled"),
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
    "clusters",
    "dedicated.mode.enable.internal.rest",
    "config.providers",
    "listeners",
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
    "replication.policy",
    "config.providers",
];

/// Connect worker keys (`WorkerConfig`, `DistributedConfig`) that are only
/// read per target cluster (`B.offset.flush.interval.ms`), never at top level.
pub const WORKER_KEYS: &[&str] = &[
    "group.id",
    "client.id",
    "offset.flush.interval.ms",
    "offset.flush.timeout.ms",
    "exactly.once.source.support",
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
    ["offset.storage.", "config.storage.", "status.storage.", "key.converter", "value.converter", "header.converter", "config.providers"]
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

/// Names users reach for that are not close in spelling to the real one.
const KNOWN_MISTAKES: &[(&str, &str)] = &[
    ("topics.whitelist", "topics"),
    ("topics.include", "topics"),
    ("topic.whitelist", "topics"),
    ("whitelist", "topics"),
    ("blacklist", TOPICS_EXCLUDE),
    ("topics.regex", "topics"),
    ("groups.whitelist", "groups"),
    ("groups.include", "groups"),
    ("group.whitelist", "groups"),
    ("sync.group.offsets", "sync.group.offsets.enabled"),
    ("offset.syncs.topic.location", "offset-syncs.topic.location"),
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
        "topics" => Some(TOPICS_DEFAULT),
        TOPICS_EXCLUDE => Some(TOPICS_EXCLUDE_DEFAULT),
        "groups" => Some(GROUPS_DEFAULT),
        GROUPS_EXCLUDE => Some(GROUPS_EXCLUDE_DEFAULT),
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
}
