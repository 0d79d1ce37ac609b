//! Properties files: loading as Java does, and translation to librdkafka.
//!
//! Users bring the `consumer.properties` and `producer.properties` they ran
//! Java MirrorMaker with. librdkafka rejects keys it doesn't know, silently
//! ignores some old ones and has different defaults, so every key goes
//! through [`translate`]: passed, renamed, handled by the mirror itself,
//! dropped with a warning, or refused with a message naming file, line, key
//! and the fix. MM1's no-loss defaults are then applied, and each user
//! override of one is logged, as MM1 did.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fmt;
use std::path::{Path, PathBuf};

use rdkafka::ClientConfig;

/// One `key=value` line of a properties file.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// A loaded properties file; a repeated key keeps its last value, as in Java.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertiesFile {
    pub path: PathBuf,
    pub props: Vec<Property>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

pub fn load(path: &Path) -> Result<PropertiesFile, ConfigError> {
    let text = std::fs::read(path).map_err(|e| {
        ConfigError(format!("cannot read properties file {}: {e}", path.display()))
    })?;
    parse(path, &text)
}

pub fn parse(path: &Path, text: &[u8]) -> Result<PropertiesFile, ConfigError> {
    use java_properties::{LineContent, PropertiesIter};
    let mut props: Vec<Property> = Vec::new();
    let iter = PropertiesIter::new(text);
    for line in iter {
        let line = line.map_err(|e| ConfigError(format!("{}: not a valid properties file: {e}", path.display())))?;
        if let LineContent::KVPair(key, value) = line.content() {
            let key = key.trim().to_string();
            let value = value.trim().to_string();
            props.retain(|p| p.key != key);
            props.push(Property { key, value, line: line.line_number() });
        }
    }
    Ok(PropertiesFile { path: path.to_path_buf(), props })
}

impl PropertiesFile {
    pub fn get(&self, key: &str) -> Option<&Property> {
        self.props.iter().find(|p| p.key == key)
    }

    fn at(&self, p: &Property) -> String {
        format!("{}:{}", self.path.display(), p.line)
    }
}

/// Which client a file configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Consumer,
    Producer,
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
}

/// A value fit for a log line: secrets are never printed.
pub fn shown(key: &str, value: &str) -> String {
    if crate::security::is_secret(key) {
        "[redacted]".into()
    } else {
        value.to_string()
    }
}

impl ClientSettings {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|(v, _)| v.as_str())
    }

    fn set(&mut self, key: &str, value: impl Into<String>, origin: Origin) {
        self.entries.insert(key.to_string(), (value.into(), origin));
    }

    fn default(&mut self, key: &str, value: &str, why: &'static str) {
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
                let origin = match o {
                    Origin::File { at, key } if key == k => at.clone(),
                    Origin::File { at, key } => format!("{at} (from {key})"),
                    Origin::Default(why) => (*why).to_string(),
                };
                format!("{k}={}  # {origin}", shown(k, v))
            })
            .collect()
    }
}

/// Checks a key and value against librdkafka itself, so a bad value fails
/// here with the file and line, not later with a bare librdkafka message.
pub(crate) fn librdkafka_accepts(key: &str, value: &str) -> Result<(), (bool, String)> {
    use rdkafka::bindings as rd;
    let (Ok(k), Ok(v)) = (CString::new(key), CString::new(value)) else {
        return Err((false, "contains a NUL byte".into()));
    };
    let mut err = [0 as std::os::raw::c_char; 512];
    // SAFETY: a scratch conf object, destroyed below; strings are NUL-terminated.
    unsafe {
        let conf = rd::rd_kafka_conf_new();
        let res = rd::rd_kafka_conf_set(conf, k.as_ptr(), v.as_ptr(), err.as_mut_ptr(), err.len());
        rd::rd_kafka_conf_destroy(conf);
        match res {
            rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK => Ok(()),
            rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_UNKNOWN => Err((true, String::new())),
            _ => Err((false, std::ffi::CStr::from_ptr(err.as_ptr()).to_string_lossy().into_owned())),
        }
    }
}

/// Java client keys that librdkafka lacks, and how each is handled.
enum Rule {
    /// Same meaning under another name.
    Rename(&'static str),
    /// Dropped; the mirror does what the key asked for, or it has no meaning here.
    Drop(&'static str),
    /// Dropped with a warning: the behaviour differs.
    Warn(&'static str),
    /// Refused: dropping it would change guarantees, data or security.
    Refuse(&'static str),
    /// Handled by code in `translate`.
    Special,
}

fn rule(role: Role, key: &str) -> Option<Rule> {
    use Rule::*;
    let r = match (role, key) {
        (_, "key.serializer" | "value.serializer" | "serializer.class" | "key.serializer.class") => {
            Drop("records are copied as raw bytes (MM1 forced ByteArraySerializer)")
        }
        (_, "key.deserializer" | "value.deserializer") => Drop("records are copied as raw bytes (MM1 forced ByteArrayDeserializer)"),
        (_, "metadata.max.age.ms") => Rename("topic.metadata.refresh.interval.ms"),
        (_, "send.buffer.bytes") => Special,
        (_, "receive.buffer.bytes") => Special,
        (_, "metric.reporters" | "metrics.num.samples" | "metrics.sample.window.ms" | "metrics.recording.level" | "auto.include.jmx.reporter") => {
            Warn("JMX metrics reporters do not exist here")
        }
        (_, "interceptor.classes") => Warn("Java interceptors cannot be loaded; records pass unmodified"),
        (_, "security.providers") => {
            Warn("Java security provider settings have no OpenSSL equivalent")
        }
        (_, "socket.connection.setup.timeout.max.ms") => Warn("librdkafka has only socket.connection.setup.timeout.ms"),
        (_, "default.api.timeout.ms") => Drop("commit and metadata calls use their own timeouts"),
        (_, "zookeeper.session.timeout.ms" | "zookeeper.connection.timeout.ms" | "zookeeper.sync.time.ms") => {
            Drop("ZooKeeper is not used")
        }
        (Role::Consumer, "zookeeper.connect") => Special,
        (Role::Consumer, "enable.auto.commit" | "auto.commit.enable" | "auto.commit.interval.ms") => Special,
        (Role::Consumer, "exclude.internal.topics") => Special,
        (Role::Consumer, "fetch.max.wait.ms") => Rename("fetch.wait.max.ms"),
        (Role::Consumer, "request.timeout.ms") => Rename("socket.timeout.ms"),
        (Role::Consumer, "partition.assignment.strategy") => Special,
        (Role::Consumer, "auto.offset.reset") => Special,
        (Role::Consumer, "client.id") => Special,
        (Role::Consumer, "max.poll.records") => Drop("librdkafka fetches in batches by bytes; there is no per-poll record cap"),
        (Role::Consumer, "offsets.storage") => Special,
        (Role::Consumer, "consumer.timeout.ms") => Warn("0.8 consumers exited when idle; this mirror keeps running"),
        (Role::Consumer, "consumer.id") => Warn("0.8 consumer.id is not static membership; use group.instance.id for that"),
        (
            Role::Consumer,
            "num.consumer.fetchers" | "rebalance.max.retries" | "rebalance.backoff.ms" | "refresh.leader.backoff.ms" | "offsets.channel.backoff.ms"
            | "offsets.channel.socket.timeout.ms" | "offsets.commit.max.retries" | "dual.commit.enabled" | "queued.max.message.chunks",
        ) => Drop("a 0.8 high-level consumer setting with no librdkafka equivalent"),
        (Role::Producer, "max.block.ms") => Drop("a full send queue makes the mirror wait as long as needed (never drops)"),
        (Role::Producer, "queue.enqueue.timeout.ms") => Special,
        (Role::Producer, "producer.type") => Special,
        (Role::Producer, "buffer.memory") => Special,
        (Role::Producer, "max.request.size") => Rename("message.max.bytes"),
        (Role::Producer, "compression.codec") => Special,
        (Role::Producer, "partitioner.class") => Special,
        (Role::Producer, "partitioner.ignore.keys") => Special,
        (Role::Producer, "transactional.id") => Refuse(
            "MirrorMaker does not mirror transactionally; remove transactional.id (records are delivered at least once with the idempotent producer)",
        ),
        (Role::Producer, "partitioner.adaptive.partitioning.enable" | "partitioner.availability.timeout.ms" | "metadata.max.idle.ms") => {
            Drop("a Java producer tuning knob with no librdkafka equivalent")
        }
        (Role::Producer, "compressed.topics") => Warn("the producer's compression applies to every topic"),
        _ => return None,
    };
    Some(r)
}

/// Known keys a typo is likely to be of, for "did you mean".
const COMMON_KEYS: &[&str] = &[
    "bootstrap.servers", "group.id", "client.id", "auto.offset.reset", "enable.auto.commit", "auto.commit.interval.ms",
    "security.protocol", "sasl.mechanism", "sasl.username", "sasl.password", "ssl.ca.location", "acks", "retries",
    "linger.ms", "batch.size", "compression.type", "max.in.flight.requests.per.connection", "enable.idempotence",
    "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "fetch.min.bytes", "fetch.max.bytes",
    "max.partition.fetch.bytes", "isolation.level", "partition.assignment.strategy", "group.instance.id",
    "delivery.timeout.ms", "request.timeout.ms", "buffer.memory", "max.request.size", "metadata.max.age.ms",
    "exclude.internal.topics", "client.rack", "fetch.max.wait.ms", "receive.buffer.bytes", "send.buffer.bytes",
];

fn did_you_mean(key: &str) -> Option<&'static str> {
    COMMON_KEYS.iter().copied().map(|k| (edit_distance(key, k), k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn parse_long(file: &PropertiesFile, p: &Property) -> Result<i64, ConfigError> {
    p.value.trim().parse::<i64>().map_err(|_| {
        ConfigError(format!("{}: {}='{}' must be a whole number (base 10)", file.at(p), p.key, p.value))
    })
}

fn parse_java_bool(file: &PropertiesFile, p: &Property) -> Result<bool, ConfigError> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError(format!("{}: {}='{}' must be true or false", file.at(p), p.key, p.value))),
    }
}

/// Translates one file for one role. `index` numbers the consumer streams
/// (client.id is `<group.id>-<index>`, as MM1 forced).
pub fn translate(file: &PropertiesFile, role: Role) -> Result<ClientSettings, ConfigError> {
    let mut s = ClientSettings {
        role,
        path: file.path.clone(),
        entries: BTreeMap::new(),
        warnings: Vec::new(),
        notices: Vec::new(),
        group_id: None,
        exclude_internal_topics: true,
        auto_commit_interval_ms: None,
        bootstrap: String::new(),
    };
    let mut auto_commit: Option<(bool, String)> = None;
    let mut auto_commit_interval: Option<u64> = None;
    let user_set = |s: &mut ClientSettings, p: &Property, key: &str, value: String| {
        s.set(key, value, Origin::File { at: file.at(p), key: p.key.clone() });
    };

    for p in &file.props {
        let key = p.key.strip_prefix("topic.").filter(|k| librdkafka_accepts(k, &p.value).is_ok()).unwrap_or(&p.key);
        if p.value.is_empty() && key != "ssl.endpoint.identification.algorithm" {
            s.warnings.push(format!("{}: {} has an empty value and is ignored (Java treats it as unset)", file.at(p), p.key));
            continue;
        }
        if crate::security::owns(key) {
            continue; // all of them at once, below
        }
        match rule(role, key) {
            Some(Rule::Rename(to)) => user_set(&mut s, p, to, p.value.clone()),
            Some(Rule::Drop(why)) => s.notices.push(format!("{}: {} is not passed to librdkafka: {why}", file.at(p), p.key)),
            Some(Rule::Warn(why)) => s.warnings.push(format!("{}: {} is ignored: {why}", file.at(p), p.key)),
            Some(Rule::Refuse(why)) => return Err(ConfigError(format!("{}: {}: {why}", file.at(p), p.key))),
            Some(Rule::Special) => match key {
                "send.buffer.bytes" | "receive.buffer.bytes" => {
                    let v = parse_long(file, p)?.max(0);
                    let to = if key == "send.buffer.bytes" { "socket.send.buffer.bytes" } else { "socket.receive.buffer.bytes" };
                    user_set(&mut s, p, to, v.to_string());
                }
                "zookeeper.connect" => {
                    if file.get("bootstrap.servers").is_none() && file.get("metadata.broker.list").is_none() {
                        return Err(ConfigError(format!(
                            "{}: zookeeper.connect is a ZooKeeper-era consumer setting; this mirror talks to the brokers directly. \
                             Add a line 'bootstrap.servers=<broker host:port,…>' to {} (the brokers registered under /brokers/ids in that ZooKeeper)",
                            file.at(p),
                            file.path.display()
                        )));
                    }
                    s.notices.push(format!("{}: zookeeper.connect is ignored; bootstrap.servers is used", file.at(p)));
                }
                "enable.auto.commit" | "auto.commit.enable" => auto_commit = Some((parse_java_bool(file, p)?, file.at(p))),
                "auto.commit.interval.ms" => auto_commit_interval = Some(parse_long(file, p)?.max(0) as u64),
                "exclude.internal.topics" => s.exclude_internal_topics = parse_java_bool(file, p)?,
                "partition.assignment.strategy" => {
                    let v = assignor(file, p)?;
                    user_set(&mut s, p, "partition.assignment.strategy", v);
                }
                "auto.offset.reset" => {
                    let v = match p.value.to_ascii_lowercase().as_str() {
                        "smallest" | "earliest" => "earliest",
                        "largest" | "latest" => "latest",
                        "none" => {
                            return Err(ConfigError(format!(
                                "{}: auto.offset.reset=none stops on a partition with no committed offset; use earliest (mirror everything) or latest",
                                file.at(p)
                            )))
                        }
                        _ => {
                            return Err(ConfigError(format!(
                                "{}: auto.offset.reset='{}' is not one of earliest, latest (or 0.8's smallest, largest)",
                                file.at(p),
                                p.value
                            )))
                        }
                    };
                    if v == "latest" {
                        s.warnings.push(format!(
                            "{}: auto.offset.reset=latest: records written to a partition before the group's first commit are not mirrored",
                            file.at(p)
                        ));
                    }
                    user_set(&mut s, p, "auto.offset.reset", v.to_string());
                }
                "client.id" => s.notices.push(format!(
                    "{}: client.id '{}' is replaced by <group.id>-<stream>, as MM1 did",
                    file.at(p),
                    p.value
                )),
                "offsets.storage" => match p.value.to_ascii_lowercase().as_str() {
                    "kafka" => s.notices.push(format!("{}: offsets.storage=kafka is the only storage; key dropped", file.at(p))),
                    _ => {
                        return Err(ConfigError(format!(
                            "{}: offsets.storage={}: offsets kept in ZooKeeper are invisible to this mirror, so it would restart the group from \
                             auto.offset.reset. Commit them to Kafka first (dual.commit.enabled with the old consumer), then set offsets.storage=kafka",
                            file.at(p),
                            p.value
                        )))
                    }
                },
                "queue.enqueue.timeout.ms" => {
                    if parse_long(file, p)? >= 0 {
                        s.warnings.push(format!(
                            "{}: queue.enqueue.timeout.ms={} would drop records on a full queue; this mirror never drops and waits instead",
                            file.at(p),
                            p.value
                        ));
                    }
                }
                "producer.type" => s.notices.push(format!(
                    "{}: producer.type={}: every record is acknowledged by the target before its offset is committed, which is what sync was for; sending stays batched",
                    file.at(p),
                    p.value
                )),
                "buffer.memory" => {
                    let kb = (parse_long(file, p)?.max(1) + 1023) / 1024;
                    user_set(&mut s, p, "queue.buffering.max.kbytes", kb.clamp(1, 2_147_483_647).to_string());
                }
                "compression.codec" => {
                    let v = match p.value.trim() {
                        "0" => "none",
                        "1" => "gzip",
                        "2" => "snappy",
                        "3" => "lz4",
                        "4" => "zstd",
                        other => other,
                    };
                    user_set(&mut s, p, "compression.codec", v.to_string());
                }
                "partitioner.class" => {
                    let v = partitioner(file, p)?;
                    user_set(&mut s, p, "partitioner", v.to_string());
                }
                "partitioner.ignore.keys" => {
                    if parse_java_bool(file, p)? {
                        user_set(&mut s, p, "partitioner", "random".into());
                    }
                }
                _ => unreachable!("special key {key} without a handler"),
            },
            None => match librdkafka_accepts(key, &p.value) {
                Ok(()) => user_set(&mut s, p, key, p.value.clone()),
                Err((true, _)) => {
                    let hint = did_you_mean(key).map(|k| format!(" Did you mean '{k}'?")).unwrap_or_default();
                    s.warnings.push(format!(
                        "{}: unknown key '{}' is ignored (neither the Java clients nor librdkafka know it).{hint}",
                        file.at(p),
                        p.key
                    ));
                }
                Err((false, msg)) => {
                    return Err(ConfigError(format!(
                        "{}: {}='{}' is not accepted: {msg}",
                        file.at(p),
                        p.key,
                        shown(key, &p.value)
                    )))
                }
            },
        }
    }

    crate::security::translate(file, &mut s)?;

    if let Some((on, at)) = auto_commit {
        if on {
            s.notices.push(format!(
                "{at}: auto-commit is never handed to the client (it would commit records the target does not have yet); \
                 offsets are committed after the target acknowledges them"
            ));
            s.auto_commit_interval_ms = Some(auto_commit_interval.unwrap_or(60_000));
        }
    }

    s.bootstrap = s
        .get("bootstrap.servers")
        .or_else(|| s.get("metadata.broker.list"))
        .map(str::to_string)
        .ok_or_else(|| ConfigError(format!("{}: bootstrap.servers is missing; add 'bootstrap.servers=host:port'", file.path.display())))?;

    match role {
        Role::Consumer => consumer_defaults(file, &mut s)?,
        Role::Producer => producer_defaults(&mut s),
    }
    Ok(s)
}

fn assignor(file: &PropertiesFile, p: &Property) -> Result<String, ConfigError> {
    let mut out: Vec<&str> = Vec::new();
    for part in p.value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let name = part.rsplit('.').next().unwrap_or(part);
        let mapped = match name {
            "RangeAssignor" | "range" => "range",
            "RoundRobinAssignor" | "roundrobin" => "roundrobin",
            "CooperativeStickyAssignor" | "cooperative-sticky" => "cooperative-sticky",
            "StickyAssignor" | "sticky" => {
                return Err(ConfigError(format!(
                    "{}: partition.assignment.strategy {part}: the eager sticky assignor is not available in librdkafka; use roundrobin, or CooperativeStickyAssignor when every member of the group can",
                    file.at(p)
                )))
            }
            _ => {
                return Err(ConfigError(format!(
                    "{}: partition.assignment.strategy {part}: custom Java assignors cannot be loaded; use range, roundrobin or cooperative-sticky",
                    file.at(p)
                )))
            }
        };
        if !out.contains(&mapped) {
            out.push(mapped);
        }
    }
    // Java 3.x's default list [Range, CooperativeSticky] means "range until
    // everyone upgrades"; librdkafka refuses to mix eager and cooperative.
    if out.contains(&"cooperative-sticky") && out.len() > 1 {
        return Ok(out.into_iter().find(|a| *a != "cooperative-sticky").unwrap_or("range").to_string());
    }
    if out.is_empty() {
        return Err(ConfigError(format!("{}: partition.assignment.strategy is empty", file.at(p))));
    }
    Ok(out.join(","))
}

fn partitioner(file: &PropertiesFile, p: &Property) -> Result<&'static str, ConfigError> {
    let name = p.value.trim().rsplit('.').next().unwrap_or("");
    match name {
        "DefaultPartitioner" => Ok("murmur2_random"),
        "UniformStickyPartitioner" | "RoundRobinPartitioner" => Ok("random"),
        other => Err(ConfigError(format!(
            "{}: partitioner.class {other}: Java partitioner classes cannot be loaded; remove the line for Java's key hashing (murmur2), \
             or use --message.handler partition-preserving to keep source partitions",
            file.at(p)
        ))),
    }
}

fn consumer_defaults(file: &PropertiesFile, s: &mut ClientSettings) -> Result<(), ConfigError> {
    s.group_id = s.get("group.id").map(str::to_string);
    if s.group_id.is_none() {
        return Err(ConfigError(format!(
            "{}: group.id is missing; MirrorMaker needs a consumer group to commit its progress. Add e.g. 'group.id=mirror-maker'",
            file.path.display()
        )));
    }
    if !s.entries.contains_key("auto.offset.reset") {
        s.notices.push(format!(
            "{}: auto.offset.reset is not set; using earliest so that nothing written before the group's first commit is skipped",
            file.path.display()
        ));
    }
    s.default("auto.offset.reset", "earliest", "mirror-maker default: nothing skipped before the first commit");
    // Commits are ours, after the target acknowledged; never the client's own.
    s.set("enable.auto.commit", "false", Origin::Default("mirror-maker: commit only after the target acknowledged"));
    s.set("enable.auto.offset.store", "false", Origin::Default("mirror-maker: commit only after the target acknowledged"));
    s.default("isolation.level", "read_uncommitted", "Java consumer default (MM1 mirrored every record)");
    s.default("partition.assignment.strategy", "range", "Java MM1 default: lets Java MM1 instances share the group");
    s.default("check.crcs", "true", "Java consumer default");
    s.default("reconnect.backoff.max.ms", "1000", "Java client default: reconnect within a second of a broker's return");
    Ok(())
}

fn producer_defaults(s: &mut ClientSettings) {
    let acks_all = s.get("acks").or_else(|| s.get("request.required.acks")).is_none_or(|a| a == "all" || a == "-1");
    let warn_override = |s: &mut ClientSettings, key: &str, expected: &[&str], shown_default: &str| {
        if let Some((v, Origin::File { at, key: orig })) = s.entries.get(key).cloned() {
            if !expected.contains(&v.as_str()) {
                s.warnings.push(format!(
                    "{at}: Property {orig} is overridden to {v} - data loss or message reordering is possible (the no-loss default is {shown_default})"
                ));
            }
        }
    };
    warn_override(s, "acks", &["all", "-1"], "all");
    warn_override(s, "request.required.acks", &["all", "-1"], "all");
    warn_override(s, "delivery.timeout.ms", &["0", "2147483647"], "infinite");
    warn_override(s, "message.timeout.ms", &["0", "2147483647"], "infinite");
    warn_override(s, "enable.idempotence", &["true"], "true");
    if !s.entries.contains_key("request.required.acks") {
        s.default("acks", "all", "MM1 no-loss default");
    }
    if !s.entries.contains_key("message.timeout.ms") {
        s.default("delivery.timeout.ms", "0", "MM1 no-loss default: retry forever");
    }
    if !s.entries.contains_key("message.send.max.retries") {
        s.default("retries", "2147483647", "MM1 no-loss default");
    }
    let in_flight: Option<i64> = s.get("max.in.flight.requests.per.connection").and_then(|v| v.parse().ok());
    let retries_on = s.get("retries").or_else(|| s.get("message.send.max.retries")).is_none_or(|r| r != "0");
    if acks_all && retries_on && in_flight.is_none_or(|n| n <= 5) {
        s.default("enable.idempotence", "true", "keeps per-partition order with several requests in flight, no duplicates from retries");
    }
    if s.get("enable.idempotence") == Some("true") {
        s.default("max.in.flight.requests.per.connection", "5", "Java default with idempotence");
    } else {
        s.default("max.in.flight.requests.per.connection", "1", "MM1 default: keeps order without idempotence");
    }
    s.default("partitioner", "murmur2_random", "Java DefaultPartitioner placement of keyed records");
    s.default("message.max.bytes", "1048576", "Java max.request.size default");
    s.default("queue.buffering.max.kbytes", "32768", "Java buffer.memory default (32 MiB) bounds memory");
    s.default("reconnect.backoff.max.ms", "1000", "Java client default: reconnect within a second of a broker's return");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> PropertiesFile {
        parse(Path::new("test.properties"), text.as_bytes()).unwrap()
    }

    fn consumer(text: &str) -> ClientSettings {
        translate(&file(text), Role::Consumer).unwrap()
    }

    fn producer(text: &str) -> ClientSettings {
        translate(&file(text), Role::Producer).unwrap()
    }

    #[test]
    fn java_properties_syntax_and_lines() {
        let f = file("# c\n! c\nbootstrap.servers = h:1\ngroup.id:g\nclient.id x\nlong=a\\\n   b\nuni=\\u0041\n");
        assert_eq!(f.get("bootstrap.servers").unwrap().value, "h:1");
        assert_eq!(f.get("bootstrap.servers").unwrap().line, 3);
        assert_eq!(f.get("group.id").unwrap().value, "g");
        assert_eq!(f.get("client.id").unwrap().value, "x");
        assert_eq!(f.get("long").unwrap().value, "ab");
        assert_eq!(f.get("uni").unwrap().value, "A");
    }

    #[test]
    fn last_duplicate_wins() {
        let f = file("a=1\na=2\n");
        assert_eq!(f.props.len(), 1);
        assert_eq!(f.get("a").unwrap().value, "2");
    }

    #[test]
    fn consumer_no_loss_defaults() {
        let c = consumer("bootstrap.servers=h:1\ngroup.id=g\n");
        assert_eq!(c.get("enable.auto.commit"), Some("false"));
        assert_eq!(c.get("enable.auto.offset.store"), Some("false"));
        assert_eq!(c.get("auto.offset.reset"), Some("earliest"));
        assert_eq!(c.get("isolation.level"), Some("read_uncommitted"));
        assert_eq!(c.get("partition.assignment.strategy"), Some("range"));
        assert_eq!(c.group_id.as_deref(), Some("g"));
        assert!(c.notices.iter().any(|n| n.contains("auto.offset.reset is not set")));
    }

    #[test]
    fn auto_commit_never_reaches_librdkafka() {
        let c = consumer("bootstrap.servers=h:1\ngroup.id=g\nauto.commit.enable=true\nauto.commit.interval.ms=5000\n");
        assert_eq!(c.get("enable.auto.commit"), Some("false"));
        assert_eq!(c.auto_commit_interval_ms, Some(5000));
        let c = consumer("bootstrap.servers=h:1\ngroup.id=g\nenable.auto.commit=false\n");
        assert_eq!(c.get("enable.auto.commit"), Some("false"));
        assert_eq!(c.auto_commit_interval_ms, None);
        assert!(c.get("auto.commit.enable").is_none());
    }

    #[test]
    fn java_keys_are_translated() {
        let c = consumer(
            "bootstrap.servers=h:1\ngroup.id=g\nfetch.max.wait.ms=200\nmetadata.max.age.ms=1000\nrequest.timeout.ms=40000\n\
             key.deserializer=org.apache.kafka.common.serialization.ByteArrayDeserializer\nauto.offset.reset=smallest\nexclude.internal.topics=false\n\
             partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor\n",
        );
        assert_eq!(c.get("fetch.wait.max.ms"), Some("200"));
        assert_eq!(c.get("topic.metadata.refresh.interval.ms"), Some("1000"));
        assert_eq!(c.get("socket.timeout.ms"), Some("40000"));
        assert_eq!(c.get("key.deserializer"), None);
        assert_eq!(c.get("auto.offset.reset"), Some("earliest"));
        assert_eq!(c.get("partition.assignment.strategy"), Some("range"));
        assert!(!c.exclude_internal_topics);
        let p = producer(
            "bootstrap.servers=h:1\nbuffer.memory=33554433\nmax.request.size=2097152\ncompression.codec=2\nproducer.type=sync\n\
             value.serializer=org.apache.kafka.common.serialization.ByteArraySerializer\n",
        );
        assert_eq!(p.get("queue.buffering.max.kbytes"), Some("32769"));
        assert_eq!(p.get("message.max.bytes"), Some("2097152"));
        assert_eq!(p.get("compression.codec"), Some("snappy"));
        assert_eq!(p.get("producer.type"), None);
        assert!(p.notices.iter().any(|n| n.contains("producer.type=sync")));
    }

    #[test]
    fn producer_no_loss_defaults_and_override_warnings() {
        let p = producer("bootstrap.servers=h:1\n");
        assert_eq!(p.get("acks"), Some("all"));
        assert_eq!(p.get("enable.idempotence"), Some("true"));
        assert_eq!(p.get("max.in.flight.requests.per.connection"), Some("5"));
        assert_eq!(p.get("delivery.timeout.ms"), Some("0"));
        assert_eq!(p.get("partitioner"), Some("murmur2_random"));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let p = producer("bootstrap.servers=h:1\nacks=1\n");
        assert_eq!(p.get("enable.idempotence"), None);
        assert_eq!(p.get("max.in.flight.requests.per.connection"), Some("1"));
        assert!(p.warnings.iter().any(|w| w.contains("Property acks is overridden to 1")), "{:?}", p.warnings);
        let p = producer("bootstrap.servers=h:1\nacks=-1\n");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = translate(&file("bootstrap.servers=h:1\ngroup.id=g\nsession.timeout.ms=soon\n"), Role::Consumer).unwrap_err();
        assert!(e.0.starts_with("test.properties:3: session.timeout.ms='soon'"), "{e}");
        let e = translate(&file("group.id=g\n"), Role::Consumer).unwrap_err();
        assert!(e.0.contains("bootstrap.servers is missing"), "{e}");
        let e = translate(&file("bootstrap.servers=h:1\n"), Role::Consumer).unwrap_err();
        assert!(e.0.contains("group.id is missing"), "{e}");
        let e = translate(&file("bootstrap.servers=h:1\ntransactional.id=t\n"), Role::Producer).unwrap_err();
        assert!(e.0.contains("test.properties:2: transactional.id"), "{e}");
        let e = translate(&file("zookeeper.connect=zk:2181\ngroup.id=g\n"), Role::Consumer).unwrap_err();
        assert!(e.0.contains("bootstrap.servers="), "{e}");
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let c = consumer("bootstrap.servers=h:1\ngroup.id=g\nsession.timeout.msx=10\n");
        assert!(c.warnings.iter().any(|w| w.contains("test.properties:3") && w.contains("Did you mean 'session.timeout.ms'")), "{:?}", c.warnings);
        assert!(c.get("session.timeout.msx").is_none());
    }

    #[test]
    fn secrets_are_redacted() {
        let p = producer("bootstrap.servers=h:1\nsasl.password=hunter2\n");
        assert!(p.describe().iter().all(|l| !l.contains("hunter2")));
        assert!(p.describe().iter().any(|l| l.starts_with("sasl.password=[redacted]")));
    }

    #[test]
    fn every_emitted_setting_is_accepted_by_librdkafka() {
        for s in [consumer("bootstrap.servers=h:1\ngroup.id=g\n"), producer("bootstrap.servers=h:1\n")] {
            for (k, (v, _)) in &s.entries {
                assert!(librdkafka_accepts(k, v).is_ok(), "{k}={v}");
            }
        }
    }
}
