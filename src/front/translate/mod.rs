//! Translation of Java client properties files into librdkafka settings.
//!
//! Users bring the `consumer.properties` and `producer.properties` they ran
//! Java MirrorMaker with. librdkafka rejects keys it doesn't know, silently
//! ignores some old ones and has different defaults, so every key goes
//! through [`translate`]: passed, renamed, handled by the mirror itself,
//! dropped with a note or a warning, or refused with a message naming file,
//! line, key and the fix. Which one is data, the table `RULES`: keys, the
//! roles they apply to, and the action; a key whose value or neighbours
//! decide names its own function, called after the key. A key no row names
//! goes to librdkafka as it is, with numbers read as Java reads them; SSL and
//! SASL keys are [`security`]'s. MM1's no-loss defaults are then applied,
//! and each user override of one is logged, as MM1 did.

pub mod jaas;
pub mod security;
pub mod zookeeper;

use std::collections::BTreeMap;

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::conf::{accepts, Refusal};
use crate::kafka::secrets::shown;
use crate::kafka::settings::{ClientSettings, Origin, Role, TranslateOptions};

/// What becomes of a key librdkafka lacks or reads differently from Java.
enum Action {
    /// Same meaning under another name.
    Rename(&'static str),
    /// Dropped with a note; the mirror does what the key asked for, or it has no meaning here.
    Drop(&'static str),
    /// Dropped with a warning: the behaviour differs.
    Warn(&'static str),
    /// Refused: dropping it would change guarantees, data or security.
    Refuse(&'static str),
    /// The value decides, or other keys do: the function named after the key.
    Special(Handler),
}

/// A special key's function. The file outlives the translation, so a
/// property can be kept until the keys it depends on are all read.
type Handler = for<'f> fn(&mut Translation<'f>, &'f Property) -> Result<(), ConfigError>;

/// One row of [`RULES`].
struct Rule {
    keys: &'static [&'static str],
    roles: &'static [Role],
    action: Action,
}

const BOTH: &[Role] = &[Role::Consumer, Role::Producer];
const CONSUMER: &[Role] = &[Role::Consumer];
const PRODUCER: &[Role] = &[Role::Producer];

/// Every key that is not handed to librdkafka as it is. A key no row names
/// for the file's role goes to librdkafka if it knows the key, with numbers
/// read as Java reads them. Tests walk this table through [`rule_keys`]: a
/// key added without a line in config/README.md or a case in
/// tests/config_golden.rs fails them.
const RULES: &[Rule] = {
    use Action::{Drop, Refuse, Rename, Special, Warn};
    &[
        Rule {
            keys: &["key.serializer", "value.serializer", "serializer.class", "key.serializer.class"],
            roles: BOTH,
            action: Drop("records are copied as raw bytes (MM1 forced ByteArraySerializer)"),
        },
        Rule {
            keys: &["key.deserializer", "value.deserializer"],
            roles: BOTH,
            action: Drop("records are copied as raw bytes (MM1 forced ByteArrayDeserializer)"),
        },
        Rule { keys: &["metadata.max.age.ms"], roles: BOTH, action: Rename("topic.metadata.refresh.interval.ms") },
        Rule { keys: &["send.buffer.bytes"], roles: BOTH, action: Special(send_buffer_bytes) },
        Rule { keys: &["receive.buffer.bytes"], roles: BOTH, action: Special(receive_buffer_bytes) },
        Rule {
            keys: &["metric.reporters", "metrics.num.samples", "metrics.sample.window.ms", "metrics.recording.level", "auto.include.jmx.reporter"],
            roles: BOTH,
            action: Warn("JMX metrics reporters do not exist here"),
        },
        Rule { keys: &["interceptor.classes"], roles: BOTH, action: Warn("Java interceptors cannot be loaded; records pass unmodified") },
        Rule { keys: &["security.providers"], roles: BOTH, action: Warn("Java security provider settings have no OpenSSL equivalent") },
        Rule { keys: &["socket.connection.setup.timeout.max.ms"], roles: BOTH, action: Warn("librdkafka has only socket.connection.setup.timeout.ms") },
        Rule { keys: &["default.api.timeout.ms"], roles: BOTH, action: Drop("commit and metadata calls use their own timeouts") },
        Rule {
            keys: &["zookeeper.session.timeout.ms", "zookeeper.connection.timeout.ms", "zookeeper.sync.time.ms"],
            roles: BOTH,
            action: Warn("ZooKeeper is not used for group membership; the broker-side group uses session.timeout.ms (Java default 45000)"),
        },
        // Java clients (0.8 on) ignore these unknown names too; a file lacking
        // the real key is refused for that key (group.id, bootstrap.servers).
        Rule {
            keys: &["zk.connect"],
            roles: BOTH,
            action: Warn("a Kafka 0.7 name that Java ignores too; write zookeeper.connect (or better bootstrap.servers=<broker host:port,...>)"),
        },
        Rule { keys: &["groupid"], roles: BOTH, action: Warn("a Kafka 0.7 name that Java ignores too; write group.id") },
        Rule {
            keys: &["broker.list"],
            roles: BOTH,
            action: Warn("a Kafka 0.7 name that Java ignores too; write bootstrap.servers=<broker host:port,...> (0.7 broker.list had id:host:port entries)"),
        },
        Rule {
            keys: &["fetch.size"],
            roles: BOTH,
            action: Warn("a Kafka 0.7 name that Java ignores too; write max.partition.fetch.bytes (0.8: fetch.message.max.bytes)"),
        },
        Rule { keys: &["client.dns.lookup"], roles: BOTH, action: Special(client_dns_lookup) },
        Rule { keys: &["topic.metadata.refresh.interval.ms"], roles: BOTH, action: Special(topic_metadata_refresh_interval_ms) },
        Rule { keys: &["zookeeper.connect"], roles: CONSUMER, action: Special(zookeeper_connect) },
        Rule { keys: &["enable.auto.commit", "auto.commit.enable"], roles: CONSUMER, action: Special(enable_auto_commit) },
        Rule { keys: &["auto.commit.interval.ms"], roles: CONSUMER, action: Special(auto_commit_interval_ms) },
        Rule { keys: &["exclude.internal.topics"], roles: CONSUMER, action: Special(exclude_internal_topics) },
        Rule { keys: &["fetch.max.wait.ms"], roles: CONSUMER, action: Rename("fetch.wait.max.ms") },
        Rule { keys: &["request.timeout.ms"], roles: CONSUMER, action: Rename("socket.timeout.ms") },
        Rule { keys: &["partition.assignment.strategy"], roles: CONSUMER, action: Special(partition_assignment_strategy) },
        Rule { keys: &["auto.offset.reset"], roles: CONSUMER, action: Special(auto_offset_reset) },
        Rule { keys: &["client.id"], roles: CONSUMER, action: Special(consumer_client_id) },
        Rule { keys: &["max.poll.records"], roles: CONSUMER, action: Drop("librdkafka fetches in batches by bytes; there is no per-poll record cap") },
        Rule { keys: &["offsets.storage"], roles: CONSUMER, action: Special(offsets_storage) },
        Rule { keys: &["consumer.timeout.ms"], roles: CONSUMER, action: Special(consumer_timeout_ms) },
        Rule { keys: &["consumer.id"], roles: CONSUMER, action: Warn("0.8 consumer.id is not static membership; use group.instance.id for that") },
        Rule {
            keys: &[
                "num.consumer.fetchers",
                "rebalance.max.retries",
                "rebalance.backoff.ms",
                "refresh.leader.backoff.ms",
                "offsets.channel.backoff.ms",
                "offsets.channel.socket.timeout.ms",
                "offsets.commit.max.retries",
                "dual.commit.enabled",
            ],
            roles: CONSUMER,
            action: Warn("a 0.8 high-level consumer setting with no librdkafka equivalent"),
        },
        Rule { keys: &["queued.max.message.chunks"], roles: CONSUMER, action: Special(queued_max_message_chunks) },
        Rule { keys: &["max.block.ms"], roles: PRODUCER, action: Drop("a full send queue makes the mirror wait as long as needed (never drops)") },
        Rule { keys: &["queue.enqueue.timeout.ms"], roles: PRODUCER, action: Special(queue_enqueue_timeout_ms) },
        Rule { keys: &["producer.type"], roles: PRODUCER, action: Special(producer_type) },
        Rule { keys: &["buffer.memory"], roles: PRODUCER, action: Special(buffer_memory) },
        Rule { keys: &["max.request.size"], roles: PRODUCER, action: Rename("message.max.bytes") },
        Rule { keys: &["compression.codec"], roles: PRODUCER, action: Special(compression_codec) },
        Rule { keys: &["partitioner.class"], roles: PRODUCER, action: Special(partitioner_class) },
        Rule { keys: &["partitioner.ignore.keys"], roles: PRODUCER, action: Special(partitioner_ignore_keys) },
        Rule {
            keys: &["transactional.id"],
            roles: PRODUCER,
            action: Refuse(
                "MirrorMaker does not mirror transactionally; remove transactional.id (records are delivered at least once with the idempotent producer)",
            ),
        },
        Rule {
            keys: &["partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms", "metadata.max.idle.ms"],
            roles: PRODUCER,
            action: Warn("a Java producer tuning knob with no librdkafka equivalent"),
        },
        Rule { keys: &["batch.size"], roles: PRODUCER, action: Special(batch_size) },
        Rule { keys: &["compression.gzip.level"], roles: PRODUCER, action: Special(compression_gzip_level) },
        Rule { keys: &["compression.lz4.level"], roles: PRODUCER, action: Special(compression_lz4_level) },
        Rule { keys: &["compression.zstd.level"], roles: PRODUCER, action: Special(compression_zstd_level) },
        Rule { keys: &["message.send.max.retries"], roles: PRODUCER, action: Special(message_send_max_retries) },
        Rule { keys: &["compressed.topics"], roles: PRODUCER, action: Warn("the producer's compression applies to every topic") },
    ]
};

/// The row naming `key` for `role`; the tests keep it to one.
fn rule(role: Role, key: &str) -> Option<&'static Action> {
    RULES.iter().find(|r| r.roles.contains(&role) && r.keys.contains(&key)).map(|r| &r.action)
}

/// Every key of the rule table with the roles its row applies to, once per
/// row naming it, so tests and the configuration reference can be checked
/// against the table itself.
pub fn rule_keys() -> impl Iterator<Item = (&'static str, &'static [Role])> {
    RULES.iter().flat_map(|r| r.keys.iter().map(|k| (*k, r.roles)))
}

/// Known keys a typo is likely to be of, for "did you mean".
const COMMON_KEYS: &[&str] = &[
    "bootstrap.servers",
    "group.id",
    "client.id",
    "auto.offset.reset",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "security.protocol",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "acks",
    "retries",
    "linger.ms",
    "batch.size",
    "compression.type",
    "max.in.flight.requests.per.connection",
    "enable.idempotence",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "fetch.min.bytes",
    "fetch.max.bytes",
    "max.partition.fetch.bytes",
    "isolation.level",
    "partition.assignment.strategy",
    "group.instance.id",
    "delivery.timeout.ms",
    "request.timeout.ms",
    "buffer.memory",
    "max.request.size",
    "metadata.max.age.ms",
    "exclude.internal.topics",
    "client.rack",
    "fetch.max.wait.ms",
    "receive.buffer.bytes",
    "send.buffer.bytes",
    "zookeeper.connect",
    "metadata.broker.list",
    "auto.commit.enable",
    "request.required.acks",
    "compression.codec",
    "queue.enqueue.timeout.ms",
    "producer.type",
    "fetch.message.max.bytes",
    "socket.timeout.ms",
    "offsets.storage",
    "message.send.max.retries",
    "queue.buffering.max.ms",
    "batch.num.messages",
    "topic.metadata.refresh.interval.ms",
    "partitioner.class",
    "connections.max.idle.ms",
    "reconnect.backoff.ms",
    "retry.backoff.ms",
];

fn did_you_mean(key: &str) -> Option<&'static str> {
    let key: Vec<char> = key.chars().collect();
    let mut rows = (Vec::new(), Vec::new());
    COMMON_KEYS.iter().copied().filter_map(|k| within_two(&key, k, &mut rows).map(|d| (d, k))).min().map(|(_, k)| k)
}

/// The edit distance of `a` and `b` if it is at most 2. A file of many
/// unknown keys asks this for each against every common key, so lengths
/// too far apart are ruled out first and only the band of the table within
/// 2 of its diagonal is filled (anything outside is more than 2 anyway),
/// in two reused rows, stopping at a row with nothing left within 2.
fn within_two(a: &[char], b: &str, (prev, cur): &mut (Vec<usize>, Vec<usize>)) -> Option<usize> {
    const FAR: usize = 3;
    let b = b.as_bytes();
    if a.len().abs_diff(b.len()) > 2 {
        return None;
    }
    prev.clear();
    prev.extend((0..=b.len()).map(|j| j.min(FAR)));
    cur.clear();
    cur.resize(b.len() + 1, FAR);
    for (i, ca) in a.iter().enumerate().map(|(i, c)| (i + 1, c)) {
        let (lo, hi) = (i.saturating_sub(2).max(1), (i + 2).min(b.len()));
        cur[0] = i.min(FAR);
        // Left of the band: what an earlier row left there is out of reach now.
        cur[lo - 1] = if lo == 1 { cur[0] } else { FAR };
        let mut best = cur[lo - 1];
        for j in lo..=hi {
            let d = (prev[j - 1] + usize::from(*ca != char::from(b[j - 1]))).min(prev[j] + 1).min(cur[j - 1] + 1).min(FAR);
            cur[j] = d;
            best = best.min(d);
        }
        if best >= FAR {
            return None;
        }
        std::mem::swap(prev, cur);
    }
    Some(prev[b.len()]).filter(|&d| d < FAR)
}

fn parse_long(file: &PropertiesFile, p: &Property) -> Result<i64, ConfigError> {
    p.value.trim().parse::<i64>().map_err(|_| ConfigError(format!("{}: {}='{}' must be a whole number (base 10)", file.at(p), p.key, p.value)))
}

/// librdkafka's allowed range for a numeric key, or None for keys that are
/// not numbers (strings, enums, booleans) or unknown. Read from librdkafka's
/// own range check, so it can never drift from the linked version.
fn librdkafka_range(key: &str) -> Option<(f64, f64)> {
    // A string key takes any text; numeric, enum and boolean keys refuse this.
    if matches!(accepts(key, "x"), Ok(()) | Err(Refusal::Unknown)) {
        return None;
    }
    let range_in = |msg: &str| -> Option<(f64, f64)> {
        let r = msg.split("outside allowed range ").nth(1)?.trim();
        let (lo, hi) = r.split_once("..")?;
        Some((lo.trim().parse().ok()?, hi.trim().parse().ok()?))
    };
    let (lo, hi) = (i32::MIN.to_string(), i32::MAX.to_string());
    let low = match accepts(key, &lo) {
        Ok(()) => f64::from(i32::MIN),
        Err(Refusal::Invalid(msg)) => return range_in(&msg),
        Err(Refusal::Unknown) => return None,
    };
    match accepts(key, &hi) {
        Ok(()) => Some((low, f64::from(i32::MAX))),
        Err(Refusal::Invalid(msg)) => range_in(&msg),
        Err(Refusal::Unknown) => None,
    }
}

/// A number as Java reads it (trimmed, base 10, no `0x`, no octal), clamped
/// to librdkafka's range and written in plain decimal; librdkafka's own
/// parser would read `010` as 8 and `5ms` as 5. Non-numeric keys are
/// returned unchanged. A clamp is reported in `warnings`.
fn normalise_number(file: &PropertiesFile, p: &Property, key: &str, value: &str, warnings: &mut Vec<String>) -> Result<String, ConfigError> {
    let v = value.trim();
    let Some((lo, hi)) = librdkafka_range(key) else { return Ok(v.to_string()) };
    let n = match v.parse::<i64>() {
        Ok(n) => n,
        // Fractions exist only for librdkafka's float keys (linger.ms), which check them.
        Err(_) if v.parse::<f64>().is_ok_and(f64::is_finite) => return Ok(v.to_string()),
        // A name some numeric keys take (acks=all); librdkafka judges it.
        Err(_) if !v.trim_start_matches(['+', '-']).starts_with(|c: char| c.is_ascii_digit()) => return Ok(v.to_string()),
        Err(_) => return Err(ConfigError(format!("{}: {}='{}' must be a whole number written in base 10 (as Java reads it)", file.at(p), p.key, value))),
    };
    let clamped = (n as f64).clamp(lo, hi) as i64;
    if clamped != n {
        let to = if key == p.key { String::new() } else { format!(" (as {key})") };
        warnings.push(format!("{}: {}={n} is outside librdkafka's range {lo}..{hi}{to}; using {clamped}", file.at(p), p.key));
    }
    Ok(clamped.to_string())
}

/// A key no rule names, as librdkafka would get it: the value with
/// numbers normalised, or librdkafka's refusal.
fn normalised(file: &PropertiesFile, p: &Property, key: &str, warnings: &mut Vec<String>) -> Result<Result<String, Refusal>, ConfigError> {
    if let Err(Refusal::Unknown) = accepts(key, &p.value) {
        return Ok(Err(Refusal::Unknown));
    }
    let v = normalise_number(file, p, key, &p.value, warnings)?;
    Ok(accepts(key, &v).map(|()| v))
}

fn parse_java_bool(file: &PropertiesFile, p: &Property) -> Result<bool, ConfigError> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError(format!("{}: {}='{}' must be true or false", file.at(p), p.key, p.value))),
    }
}

/// Translates one file for one role, with the command line's defaults.
pub fn translate(file: &PropertiesFile, role: Role) -> Result<ClientSettings, ConfigError> {
    translate_with(file, role, TranslateOptions::default())
}

/// [`translate`] with the command line's choices.
pub fn translate_with(file: &PropertiesFile, role: Role, opts: TranslateOptions) -> Result<ClientSettings, ConfigError> {
    let mut t = Translation::new(file, role, opts);
    for p in &file.props {
        t.property(p)?;
    }
    crate::front::translate::security::translate(file, &mut t.s)?;
    t.auto_commit();
    if !t.levels.is_empty() {
        compression_level(file, &mut t.s, &t.levels);
    }
    t.queued_chunks()?;
    let mut s = t.s;
    s.bootstrap = bootstrap(file, &s)?;
    match role {
        Role::Consumer => consumer_defaults(file, &mut s)?,
        Role::Producer => producer_defaults(&mut s),
    }
    java_defaults(&mut s);
    one_name_per_setting(&mut s);
    check_combinations(&s)?;
    Ok(s)
}

/// The broker list, or nothing yet for a ZooKeeper-era file (filled in from
/// ZooKeeper by [`resolve_brokers`]); a file with neither is refused.
fn bootstrap(file: &PropertiesFile, s: &ClientSettings) -> Result<String, ConfigError> {
    match s.get("bootstrap.servers").or_else(|| s.get("metadata.broker.list")) {
        Some(b) => Ok(b.to_string()),
        None if s.zookeeper_connect.is_some() => Ok(String::new()),
        None => {
            let hint = if s.role == Role::Producer { " (a 0.8 producer file: metadata.broker.list)" } else { "" };
            Err(ConfigError(format!("{}: bootstrap.servers is missing; add 'bootstrap.servers=host:port'{hint}", file.path.display())))
        }
    }
}

/// One file's translation under way: the settings so far, and the keys
/// whose meaning depends on others, settled once every line is read.
struct Translation<'f> {
    file: &'f PropertiesFile,
    opts: TranslateOptions,
    s: ClientSettings,
    levels: Vec<(&'static str, &'f Property)>,
    chunks: Option<&'f Property>,
    auto_commit: Option<(bool, &'f Property)>,
    auto_commit_interval: Option<u64>,
}

impl<'f> Translation<'f> {
    fn new(file: &'f PropertiesFile, role: Role, opts: TranslateOptions) -> Self {
        let s = ClientSettings {
            role,
            path: file.path.clone(),
            entries: BTreeMap::new(),
            warnings: Vec::new(),
            notices: Vec::new(),
            group_id: None,
            exclude_internal_topics: true,
            auto_commit_interval_ms: None,
            bootstrap: String::new(),
            zookeeper_connect: None,
            byte_array_partitioner: false,
        };
        Translation { file, opts, s, levels: Vec::new(), chunks: None, auto_commit: None, auto_commit_interval: None }
    }

    /// Sets a librdkafka key from a line of the file, which stays its origin.
    fn set(&mut self, p: &Property, key: &str, value: String) {
        self.s.set(key, value, Origin::File { at: self.file.at(p), key: p.key.clone() });
    }

    /// One line of the file, as its rule says.
    fn property(&mut self, p: &'f Property) -> Result<(), ConfigError> {
        let file = self.file;
        let key = p.key.strip_prefix("topic.").filter(|k| accepts(k, &p.value).is_ok()).unwrap_or(&p.key);
        if p.value.is_empty() && key != "ssl.endpoint.identification.algorithm" {
            self.s.warnings.push(format!("{}: {} has an empty value and is ignored (Java treats it as unset)", file.at(p), p.key));
            return Ok(());
        }
        if crate::front::translate::security::owns(key) {
            return Ok(()); // they depend on one another: taken together once every line is read
        }
        match rule(self.s.role, key) {
            Some(Action::Rename(to)) => {
                let v = normalise_number(file, p, to, &p.value, &mut self.s.warnings)?;
                self.set(p, to, v);
            }
            Some(Action::Drop(why)) => self.s.notices.push(format!("{}: {} is not passed to librdkafka: {why}", file.at(p), p.key)),
            Some(Action::Warn(why)) => self.s.warnings.push(format!("{}: {} is ignored: {why}", file.at(p), p.key)),
            Some(Action::Refuse(why)) => return Err(ConfigError(format!("{}: {}: {why}", file.at(p), p.key))),
            Some(Action::Special(handle)) => return handle(self, p),
            None => return self.pass(p, key),
        }
        Ok(())
    }

    /// A key no rule names: librdkafka's own, or unknown to both sides.
    fn pass(&mut self, p: &Property, key: &str) -> Result<(), ConfigError> {
        let file = self.file;
        match normalised(file, p, key, &mut self.s.warnings)? {
            Ok(v) => self.set(p, key, v),
            Err(Refusal::Unknown) => {
                let hint = did_you_mean(key).map(|k| format!(" Did you mean '{k}'?")).unwrap_or_default();
                self.s.warnings.push(format!("{}: unknown key '{}' is ignored (neither the Java clients nor librdkafka know it).{hint}", file.at(p), p.key));
            }
            Err(Refusal::Invalid(msg)) => return Err(ConfigError(format!("{}: {}='{}' is not accepted: {msg}", file.at(p), p.key, shown(key, &p.value)))),
        }
        Ok(())
    }

    /// Auto-commit keys, known only once the interval may have been read.
    fn auto_commit(&mut self) {
        let Some((on, p)) = self.auto_commit else { return };
        let at = self.file.at(p);
        if on {
            let ms = self.auto_commit_interval.unwrap_or(60_000);
            self.s.notices.push(format!(
                "{at}: {}=true: auto-commit is never handed to the client (it would commit records the target does not have yet); \
                 acknowledged offsets are committed every {ms} ms (auto.commit.interval.ms) unless --offset.commit.interval.ms is given",
                p.key
            ));
            self.s.auto_commit_interval_ms = Some(ms);
        } else {
            self.s.notices.push(format!(
                "{at}: {}=false: the client never auto-commits; the mirror commits offsets itself once the target acknowledged the records \
                 (passed through, librdkafka would have ignored auto.commit.enable and kept auto-commit on)",
                p.key
            ));
        }
        self.s.set("enable.auto.commit", "false", Origin::File { at, key: format!("{}={on}", p.key) });
    }

    /// `queued.max.message.chunks`, known only once the fetch size may have been read.
    fn queued_chunks(&mut self) -> Result<(), ConfigError> {
        let Some(p) = self.chunks else { return Ok(()) };
        // 0.8 buffered this many fetched chunks of fetch.message.max.bytes each.
        let n = parse_long(self.file, p)?.max(1);
        let s = &self.s;
        let fetch: i64 = s.get("fetch.message.max.bytes").or_else(|| s.get("max.partition.fetch.bytes")).and_then(|v| v.parse().ok()).unwrap_or(1_048_576);
        let kb = (n.saturating_mul(fetch) / 1024).clamp(1, 2_097_151);
        self.set(p, "queued.max.messages.kbytes", kb.to_string());
        Ok(())
    }
}

// The special keys, one function each, in the order of the table.

fn send_buffer_bytes(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    socket_buffer(t, p, "socket.send.buffer.bytes")
}

fn receive_buffer_bytes(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    socket_buffer(t, p, "socket.receive.buffer.bytes")
}

/// Java's -1 (the system's size) is librdkafka's 0.
fn socket_buffer(t: &mut Translation<'_>, p: &Property, to: &str) -> Result<(), ConfigError> {
    let v = parse_long(t.file, p)?.max(0);
    t.set(p, to, v.to_string());
    Ok(())
}

fn client_dns_lookup(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    // Java < 2.6 had `default`, which is today's use_all_dns_ips.
    let v = if p.value.eq_ignore_ascii_case("default") { "use_all_dns_ips".to_string() } else { p.value.to_ascii_lowercase() };
    if let Err(Refusal::Invalid(msg)) = accepts("client.dns.lookup", &v) {
        return Err(ConfigError(format!("{}: client.dns.lookup='{}' is not accepted: {msg}", t.file.at(p), p.value)));
    }
    t.set(p, "client.dns.lookup", v);
    Ok(())
}

fn topic_metadata_refresh_interval_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    const KEY: &str = "topic.metadata.refresh.interval.ms";
    let mut v = normalise_number(t.file, p, KEY, &p.value, &mut t.s.warnings)?;
    if v == "0" {
        // 0.8 refreshed after every failed send; librdkafka would poll the cluster constantly.
        t.s.notices.push(format!("{}: topic.metadata.refresh.interval.ms=0 is read as 1000 (refresh every second)", t.file.at(p)));
        v = "1000".into();
    }
    t.set(p, KEY, v);
    Ok(())
}

fn zookeeper_connect(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if t.file.get("bootstrap.servers").is_none() && t.file.get("metadata.broker.list").is_none() {
        // Read from ZooKeeper by resolve_brokers (network I/O stays out of here).
        t.s.zookeeper_connect = Some((p.value.clone(), t.file.at(p)));
    } else {
        t.s.notices.push(format!("{}: zookeeper.connect is ignored; bootstrap.servers is used", t.file.at(p)));
    }
    Ok(())
}

/// Also 0.8's `auto.commit.enable`; settled in [`Translation::auto_commit`].
fn enable_auto_commit<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.auto_commit = Some((parse_java_bool(t.file, p)?, p));
    Ok(())
}

fn auto_commit_interval_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.auto_commit_interval = Some(parse_long(t.file, p)?.max(0) as u64);
    Ok(())
}

/// Applied by the mirror's topic filter, not by librdkafka.
fn exclude_internal_topics(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.s.exclude_internal_topics = parse_java_bool(t.file, p)?;
    Ok(())
}

fn partition_assignment_strategy(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let v = assignor(t.file, p, &mut t.s.warnings)?;
    t.set(p, "partition.assignment.strategy", v);
    Ok(())
}

fn auto_offset_reset(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let at = t.file.at(p);
    let v = match p.value.to_ascii_lowercase().as_str() {
        "smallest" | "earliest" => "earliest",
        "largest" | "latest" => "latest",
        by if by.starts_with("by_duration:") => {
            return Err(ConfigError(format!(
                "{at}: auto.offset.reset={}: starting a new group at a point in time (Kafka 4.0) is not available here; \
                 use earliest (mirror everything the source still has), or commit the group's offsets for that time first \
                 (kafka-consumer-groups.sh --reset-offsets --to-datetime) and keep earliest",
                p.value
            )))
        }
        "none" => {
            return Err(ConfigError(format!(
                "{at}: auto.offset.reset=none stops on a partition with no committed offset; use earliest (mirror everything) or latest"
            )))
        }
        _ => return Err(ConfigError(format!("{at}: auto.offset.reset='{}' is not one of earliest, latest (or 0.8's smallest, largest)", p.value))),
    };
    if v == "latest" {
        t.s.warnings.push(format!("{at}: auto.offset.reset=latest: records written to a partition before the group's first commit are not mirrored"));
    }
    t.set(p, "auto.offset.reset", v.to_string());
    Ok(())
}

/// MM1 forced `<group.id>-<stream>`, which the engine sets per stream.
fn consumer_client_id(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.s.notices.push(format!("{}: client.id '{}' is replaced by <group.id>-<stream>, as MM1 did", t.file.at(p), p.value));
    Ok(())
}

fn offsets_storage(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let at = t.file.at(p);
    match p.value.to_ascii_lowercase().as_str() {
        "kafka" => t.s.notices.push(format!("{at}: offsets.storage=kafka is the only storage; key dropped")),
        "zookeeper" if t.opts.accept_zookeeper_offsets_loss => t.s.warnings.push(format!(
            "{at}: offsets.storage=zookeeper: the group's offsets in ZooKeeper are not read (--accept.zookeeper.offsets.loss); \
             partitions without a Kafka-stored offset start from auto.offset.reset={}",
            t.file.get("auto.offset.reset").map_or("earliest (mirror-maker default)", |r| r.value.as_str())
        )),
        "zookeeper" => {
            return Err(ConfigError(format!(
                "{at}: offsets.storage=zookeeper: the group's offsets kept in ZooKeeper are invisible to Kafka-stored groups, so this mirror \
                 would start from auto.offset.reset (records skipped with latest, mirrored again with earliest). Either move them to Kafka \
                 first (run the 0.8 consumer once with offsets.storage=kafka and dual.commit.enabled=true), then set offsets.storage=kafka; \
                 or accept starting from auto.offset.reset with --accept.zookeeper.offsets.loss"
            )))
        }
        _ => return Err(ConfigError(format!("{at}: offsets.storage='{}' is not kafka or zookeeper; remove the line (offsets are stored in Kafka)", p.value))),
    }
    Ok(())
}

fn consumer_timeout_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let at = t.file.at(p);
    if parse_long(t.file, p)? >= 0 {
        t.s.warnings
            .push(format!("{at}: consumer.timeout.ms={} is ignored: a 0.8 mirror exited after that long without records; this one keeps running", p.value));
    } else {
        t.s.notices.push(format!("{at}: consumer.timeout.ms={}: wait for records forever, as this mirror always does", p.value));
    }
    Ok(())
}

/// Settled in [`Translation::queued_chunks`].
fn queued_max_message_chunks<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.chunks = Some(p);
    Ok(())
}

fn queue_enqueue_timeout_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if parse_long(t.file, p)? >= 0 {
        t.s.warnings.push(format!(
            "{}: queue.enqueue.timeout.ms={} would drop records on a full queue; this mirror never drops and waits instead",
            t.file.at(p),
            p.value
        ));
    }
    Ok(())
}

fn producer_type(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.s.notices.push(format!(
        "{}: producer.type={}: every record is acknowledged by the target before its offset is committed, which is what sync was for; sending stays batched",
        t.file.at(p),
        p.value
    ));
    Ok(())
}

fn buffer_memory(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let kb = (parse_long(t.file, p)?.max(1) + 1023) / 1024;
    t.set(p, "queue.buffering.max.kbytes", kb.clamp(1, 2_147_483_647).to_string());
    Ok(())
}

/// 0.8 took numbers; librdkafka takes names only.
fn compression_codec(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let v = match p.value.trim().to_ascii_lowercase().as_str() {
        "0" | "none" => "none",
        "1" | "gzip" => "gzip",
        "2" | "snappy" => "snappy",
        "3" | "lz4" => "lz4",
        "4" | "zstd" => "zstd",
        _ => {
            return Err(ConfigError(format!(
                "{}: compression.codec='{}' is not a codec: 0 (none), 1 (gzip), 2 (snappy), 3 (lz4) or a name",
                t.file.at(p),
                p.value
            )))
        }
    };
    t.set(p, "compression.codec", v.to_string());
    Ok(())
}

fn partitioner_class(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if p.value.trim() != "kafka.producer.ByteArrayPartitioner" {
        let v = partitioner(t.file, p)?;
        t.set(p, "partitioner", v.to_string());
        return Ok(());
    }
    t.s.byte_array_partitioner = true;
    t.set(p, "partitioner", "murmur2_random".into());
    t.s.notices.push(format!(
        "{}: partitioner.class=kafka.producer.ByteArrayPartitioner: keyed records go to abs(Arrays.hashCode(key)) % partitions, \
         as the 0.8 producer placed them; unkeyed records go to a random partition",
        t.file.at(p)
    ));
    Ok(())
}

fn partitioner_ignore_keys(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if parse_java_bool(t.file, p)? {
        t.set(p, "partitioner", "random".into());
    }
    Ok(())
}

fn batch_size(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if p.value.trim().parse::<i64>() == Ok(0) {
        // Java: 0 turns batching off, one record per request.
        t.set(p, "batch.num.messages", "1".into());
    } else {
        let v = normalise_number(t.file, p, "batch.size", &p.value, &mut t.s.warnings)?;
        t.set(p, "batch.size", v);
    }
    Ok(())
}

/// Settled in [`compression_level`], once the codec is known.
fn compression_gzip_level<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.levels.push(("gzip", p));
    Ok(())
}

/// As [`compression_gzip_level`].
fn compression_lz4_level<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.levels.push(("lz4", p));
    Ok(())
}

/// As [`compression_gzip_level`].
fn compression_zstd_level<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.levels.push(("zstd", p));
    Ok(())
}

fn message_send_max_retries(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let v = normalise_number(t.file, p, "message.send.max.retries", &p.value, &mut t.s.warnings)?;
    t.s.warnings.push(format!(
        "{}: message.send.max.retries={v}: a record still failing after {v} retries is a send failure, which stops the mirror \
         (--abort.on.send.failure true); remove the line to retry for as long as it takes",
        t.file.at(p)
    ));
    t.set(p, "message.send.max.retries", v);
    Ok(())
}

/// librdkafka's aliases (Java or 0.8 name, librdkafka name): setting both
/// makes the result depend on hash order, so one of each pair is kept.
const ALIASES: &[(&str, &str)] = &[
    ("linger.ms", "queue.buffering.max.ms"),
    ("retries", "message.send.max.retries"),
    ("acks", "request.required.acks"),
    ("delivery.timeout.ms", "message.timeout.ms"),
    ("compression.type", "compression.codec"),
    ("max.partition.fetch.bytes", "fetch.message.max.bytes"),
    ("bootstrap.servers", "metadata.broker.list"),
    ("sasl.mechanism", "sasl.mechanisms"),
];

/// Keeps a file's value over a default, and the later of two file lines
/// (as Java keeps the last of a repeated key).
fn one_name_per_setting(s: &mut ClientSettings) {
    let line = |o: &Origin| match o {
        Origin::File { at, .. } => at.rsplit(':').next().and_then(|l| l.parse::<usize>().ok()),
        Origin::Default(_) => None,
    };
    for (a, b) in ALIASES {
        let (Some((_, oa)), Some((_, ob))) = (s.entries.get(*a), s.entries.get(*b)) else { continue };
        let (la, lb) = (line(oa), line(ob));
        let drop = match (la, lb) {
            (None, _) => a,
            (_, None) => b,
            (Some(x), Some(y)) => {
                let (keep, drop, dl) = if x > y { (a, b, y) } else { (b, a, x) };
                s.warnings.push(format!("{}: {drop} (line {dl}) and {keep} are the same setting; the later line, {keep}, is used", s.path.display()));
                drop
            }
        };
        s.entries.remove(*drop);
    }
}

/// Java's per-codec level keys: the one for the codec in use becomes
/// librdkafka's single `compression.level` (-1..12).
fn compression_level(file: &PropertiesFile, s: &mut ClientSettings, levels: &[(&str, &Property)]) {
    let codec = s.get("compression.type").or_else(|| s.get("compression.codec")).unwrap_or("none").to_ascii_lowercase();
    for (c, p) in levels {
        if *c != codec {
            s.notices.push(format!("{}: {} is not used: compression.type is {codec}", file.at(p), p.key));
            continue;
        }
        let Ok(n) = p.value.trim().parse::<i64>() else {
            s.warnings.push(format!("{}: {}='{}' is not a whole number; the codec's default level is used", file.at(p), p.key, p.value));
            continue;
        };
        let v = n.clamp(-1, 12);
        if v != n {
            s.warnings.push(format!("{}: {}={n} is outside librdkafka's compression.level range -1..12; using {v}", file.at(p), p.key));
        }
        s.set("compression.level", v.to_string(), Origin::File { at: file.at(p), key: p.key.clone() });
    }
}

/// Where librdkafka's defaults differ from the Java clients', the Java value,
/// so a file means what it meant under Java MirrorMaker.
fn java_defaults(s: &mut ClientSettings) {
    s.default("reconnect.backoff.ms", "50", "Java client default");
    s.default("connections.max.idle.ms", "540000", "Java client default (librdkafka: never)");
    match s.role {
        Role::Consumer => {
            s.default("socket.timeout.ms", "30000", "Java consumer request.timeout.ms default");
            // Java subscribes MM1's pattern, which never creates topics; librdkafka's literal
            // subscription would re-create a topic deleted on the source.
            s.default("allow.auto.create.topics", "false", "MM1 subscribed by pattern, which never creates source topics");
            // Chosen by measurement (scripts/bench, README Performance): librdkafka's
            // 64 MiB prefetch made up most of the mirror's memory without speeding it
            // up, and its 1 s back-off after a full prefetch queue stalled small ones.
            s.default("queued.max.messages.kbytes", "4096", "measured: a 4 MiB prefetch per stream keeps pace with the producers at a third of the memory");
            // The byte bound alone let some 40,000 records of 100 B queue, each
            // with librdkafka's own op around it.
            s.default(
                "queued.min.messages",
                "5000",
                "measured: a 5,000-record prefetch took a quarter off the memory at 100 B and kept pace (librdkafka: 100000)",
            );
            s.default("fetch.queue.backoff.ms", "10", "measured: fetch again 10 ms after the prefetch queue drains (librdkafka: 1000)");
        }
        Role::Producer => {
            // Batching decides only how records are grouped into requests, never
            // what is delivered, so these follow measurement rather than Java:
            // Java's linger.ms=0 and 16 KiB batches halved throughput and doubled
            // CPU per record against librdkafka's own defaults (README Performance).
            s.default("linger.ms", "5", "measured: librdkafka's default; Java's 0 halves throughput");
            // Unless the file's batch.size=0 asked for no batching at all.
            if !matches!(s.entries.get("batch.num.messages"), Some((_, Origin::File { key, .. })) if key == "batch.size") {
                s.default("batch.size", "1000000", "measured: librdkafka's default; Java's 16384 halves throughput");
            }
            // Bytes alone (Java's buffer.memory) let 8 MiB of 100 B records
            // become some 80,000 queued messages, each with librdkafka's own
            // few hundred bytes of bookkeeping: peak RSS 107-115 MiB, and
            // 4.2-5.1 us of CPU per record against 2.7-3.3 us at 10,000
            // (2M x 100 B, interleaved runs). At 1 KiB the byte limit binds
            // first and nothing changes.
            s.default("queue.buffering.max.messages", "10000", "measured: 10,000 records in the send buffer keep pace; more only cost memory and CPU");
            // librdkafka fails the records of a topic its metadata does not
            // show after this long (30 s by default). A broker bringing up
            // thousands of new partitions (the topic sync creating a new
            // target's topics) showed the last ones after more than 30 s,
            // and a 5,000-topic start stopped on UnknownTopicOrPartition.
            s.default(
                "topic.metadata.propagation.max.ms",
                "300000",
                "a broker bringing up thousands of new topics shows the last ones after minutes; records wait for them (librdkafka: 30000)",
            );
        }
    }
    // librdkafka refuses max < min; Java quietly uses the larger.
    let num = |s: &ClientSettings, k: &str| s.get(k).and_then(|v| v.parse::<i64>().ok());
    // Java runs with a poll interval below the session timeout (the broker
    // then drops a member that stops polling sooner); librdkafka refuses it
    // at client creation, so the interval is raised to the session timeout,
    // which never drops a member Java would have kept.
    // 45000 is the session timeout of both when the file sets none.
    if let (Some(poll), session) = (num(s, "max.poll.interval.ms"), num(s, "session.timeout.ms").unwrap_or(45_000)) {
        if poll < session && s.role == Role::Consumer {
            let at = |k: &str| match s.entries.get(k) {
                Some((_, Origin::File { at, .. })) => format!("{at}: "),
                Some(_) => String::new(),
                None => "the default ".into(),
            };
            s.warnings.push(format!(
                "{}max.poll.interval.ms={poll} is below {}session.timeout.ms={session}, which librdkafka refuses (Java does not); \
                 using max.poll.interval.ms={session}",
                at("max.poll.interval.ms"),
                at("session.timeout.ms")
            ));
            s.set(
                "max.poll.interval.ms",
                session.to_string(),
                Origin::Default("raised to session.timeout.ms (librdkafka requires max.poll.interval.ms >= session.timeout.ms)"),
            );
        }
    }
    if let (Some(min), Some(max)) = (num(s, "reconnect.backoff.ms"), num(s, "reconnect.backoff.max.ms")) {
        if max < min {
            s.notices.push(format!("reconnect.backoff.max.ms={max} is below reconnect.backoff.ms={min}; using {min} for both, as Java does"));
            s.set("reconnect.backoff.max.ms", min.to_string(), Origin::Default("raised to reconnect.backoff.ms (librdkafka requires max >= min)"));
        }
    }
}

/// Combinations librdkafka would refuse at client creation with a bare
/// message; refused here with the keys and the fix.
fn check_combinations(s: &ClientSettings) -> Result<(), ConfigError> {
    let origin = |k: &str| match s.entries.get(k) {
        Some((v, Origin::File { at, key })) => format!("{at}: {key}={v}"),
        Some((v, Origin::Default(_))) => format!("{k}={v} (default)"),
        None => k.to_string(),
    };
    let num = |k: &str| s.get(k).and_then(|v| v.parse::<f64>().ok());
    let timeout = num("delivery.timeout.ms").or_else(|| num("message.timeout.ms"));
    if let (Some(t), Some(linger)) = (timeout, num("linger.ms").or_else(|| num("queue.buffering.max.ms"))) {
        if t > 0.0 && t <= linger {
            let k = if s.entries.contains_key("delivery.timeout.ms") { "delivery.timeout.ms" } else { "message.timeout.ms" };
            return Err(ConfigError(format!("{} must be larger than {}: records would time out before they are sent", origin(k), origin("linger.ms"))));
        }
    }
    if s.get("group.protocol").is_some_and(|g| g.eq_ignore_ascii_case("consumer")) {
        for k in ["session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"] {
            if let Some((_, Origin::File { .. })) = s.entries.get(k) {
                return Err(ConfigError(format!(
                    "{}: with group.protocol=consumer the broker decides this; remove the line (or use group.protocol=classic)",
                    origin(k)
                )));
            }
        }
    }
    Ok(())
}

/// Fills in the brokers of a ZooKeeper-era consumer file (only
/// `zookeeper.connect`) from ZooKeeper's `/brokers/ids`, and says so.
pub fn resolve_brokers(s: &mut ClientSettings) -> Result<(), ConfigError> {
    let Some((connect, at)) = s.zookeeper_connect.clone() else { return Ok(()) };
    if !s.bootstrap.is_empty() {
        return Ok(());
    }
    let protocol = s.get("security.protocol").unwrap_or("PLAINTEXT").to_ascii_uppercase();
    match crate::front::translate::zookeeper::bootstrap_servers(&connect, &protocol, std::time::Duration::from_secs(10)) {
        Ok(list) => {
            s.notices.push(format!("{at}: zookeeper.connect={connect}: read the brokers from ZooKeeper (/brokers/ids): bootstrap.servers={list}"));
            s.set("bootstrap.servers", list.clone(), Origin::File { at, key: "zookeeper.connect (/brokers/ids)".into() });
            s.bootstrap = list;
            Ok(())
        }
        Err(e) => Err(ConfigError(format!(
            "{at}: zookeeper.connect={connect}: cannot read the brokers from ZooKeeper: {e}. \
             This mirror talks to the brokers directly: add a line 'bootstrap.servers=<broker host:port,...>' to {} \
             (the brokers registered under /brokers/ids in that ZooKeeper)",
            s.path.display()
        ))),
    }
}

/// librdkafka's assignors for a Java list. An assignor librdkafka lacks
/// (Java's eager StickyAssignor, a custom class) decides only which member
/// reads which partition, never what is mirrored, so it is dropped with a
/// warning and the file runs, with range when nothing else is left.
fn assignor(file: &PropertiesFile, p: &Property, warnings: &mut Vec<String>) -> Result<String, ConfigError> {
    let mut out: Vec<&str> = Vec::new();
    let mut dropped = Vec::new();
    for part in p.value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let name = part.rsplit('.').next().unwrap_or(part);
        let mapped = match name {
            "RangeAssignor" | "range" => "range",
            "RoundRobinAssignor" | "roundrobin" => "roundrobin",
            "CooperativeStickyAssignor" | "cooperative-sticky" => "cooperative-sticky",
            _ => {
                dropped.push(part);
                continue;
            }
        };
        if !out.contains(&mapped) {
            out.push(mapped);
        }
    }
    if out.is_empty() && dropped.is_empty() {
        return Err(ConfigError(format!("{}: partition.assignment.strategy is empty", file.at(p))));
    }
    // Java 3.x's default list [Range, CooperativeSticky] means "range until
    // everyone upgrades"; librdkafka refuses to mix eager and cooperative.
    let chosen = if out.is_empty() {
        "range".to_string()
    } else if out.contains(&"cooperative-sticky") && out.len() > 1 {
        out.into_iter().find(|a| *a != "cooperative-sticky").unwrap_or("range").to_string()
    } else {
        out.join(",")
    };
    if !dropped.is_empty() {
        warnings.push(format!(
            "{}: partition.assignment.strategy {}: not available in librdkafka (the eager sticky assignor and custom Java classes are not); \
             {chosen} is used instead. Every partition is still mirrored, only their spread over the mirror's members may differ, \
             and a group shared with Java members that use only that assignor will not seat this one",
            file.at(p),
            dropped.join(", ")
        ));
    }
    Ok(chosen)
}

fn partitioner(file: &PropertiesFile, p: &Property) -> Result<&'static str, ConfigError> {
    let class = p.value.trim();
    let name = class.rsplit('.').next().unwrap_or("");
    match name {
        // 0.8's old-producer DefaultPartitioner hashed the byte[] identity: effectively random.
        "DefaultPartitioner" if class.starts_with("kafka.producer.") => Ok("random"),
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
    s.default("enable.auto.commit", "false", "MM1 no-loss default: the mirror commits only what the target acknowledged");
    s.set("enable.auto.offset.store", "false", Origin::Default("mirror-maker: commit only after the target acknowledged"));
    s.default("isolation.level", "read_uncommitted", "Java consumer default (MM1 mirrored every record)");
    if !s.get("group.protocol").is_some_and(|g| g.eq_ignore_ascii_case("consumer")) {
        s.default("partition.assignment.strategy", "range", "Java MM1 default: lets Java MM1 instances share the group");
    }
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
    s.default("queue.buffering.max.kbytes", "4096", "measured: a 4 MiB send buffer keeps pace at an eighth of Java buffer.memory's 32 MiB");
    s.default("reconnect.backoff.max.ms", "1000", "Java client default: reconnect within a second of a broker's return");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::properties::parse;
    use std::path::Path;

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

    /// Java's `Properties.load(InputStream)` reads ISO-8859-1: every byte is
    /// the character of the same number, 0x80-0x9F included (Windows-1252
    /// would turn 0x80 into the euro sign), and `\uXXXX` escapes still work.
    #[test]
    fn bytes_are_read_as_iso_8859_1() {
        let mut text = b"sasl.password=pw".to_vec();
        text.extend(0x80u8..=0xFF);
        text.extend_from_slice(b"\\u20AC\n\xE9t\xE9=\\\xE9\\\\\xE9\n");
        let f = parse(Path::new("latin1.properties"), &text).unwrap();
        let want: String = "pw".chars().chain((0x80u32..=0xFF).map(|c| char::from_u32(c).unwrap())).chain(['\u{20AC}']).collect();
        assert_eq!(f.get("sasl.password").unwrap().value, want);
        // An escaped high byte is the byte itself; an escaped backslash stays one.
        assert_eq!(f.get("\u{E9}t\u{E9}").unwrap().value, "\u{E9}\\\u{E9}");
        assert_eq!(f.get("\u{E9}t\u{E9}").unwrap().line, 2);
    }

    /// librdkafka gets the UTF-8 bytes of those characters and sends them
    /// as they are (PLAIN copies sasl.password, SCRAM hashes it, neither
    /// re-encodes), which is what Java sends: its PLAIN and SCRAM clients
    /// encode the password as UTF-8. Byte 0xE9 in the file is C3 A9 on the
    /// wire from both.
    #[test]
    fn librdkafka_holds_the_utf8_of_what_java_read() {
        let f = parse(Path::new("p.properties"), b"bootstrap.servers=h:1\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=\"p\xE9\x80\";\n").unwrap();
        let s = translate(&f, Role::Producer).unwrap();
        assert_eq!(s.get("sasl.password"), Some("p\u{E9}\u{80}"));
        let native = s.client_config().create_native_config().unwrap();
        assert_eq!(native.get("sasl.password").unwrap().as_bytes(), [b'p', 0xC3, 0xA9, 0xC2, 0x80]);
    }

    /// Java's String.trim() removes only characters up to U+0020; U+0085
    /// and U+00A0 (bytes 0x85, 0xA0) at either end belong to the value.
    #[test]
    fn values_are_trimmed_as_java_trims() {
        let f = parse(Path::new("t.properties"), b"a=\xA0x\x85\x0b \nb=\\u0020y\\t\n").unwrap();
        assert_eq!(f.get("a").unwrap().value, "\u{A0}x\u{85}");
        assert_eq!(f.get("b").unwrap().value, "y");
    }

    /// 100,000 distinct keys, every 7th repeated later: the last value wins,
    /// each key keeps the line of its last occurrence, in file order.
    #[test]
    fn a_large_file_loads_with_lines_and_last_duplicates() {
        let n = 100_000;
        let mut text = String::new();
        for i in 0..n {
            text.push_str(&format!("key.{i}=value {i}\n"));
        }
        for i in (0..n).step_by(7) {
            text.push_str(&format!("key.{i}=again {i}\n"));
        }
        let f = parse(Path::new("big.properties"), text.as_bytes()).unwrap();
        // Keys seen once come first in file order, then the repeated ones.
        let once = (0..n).filter(|i| i % 7 != 0).map(|i| (i, i + 1, format!("value {i}")));
        let again = (0..n).step_by(7).enumerate().map(|(r, i)| (i, n + r + 1, format!("again {i}")));
        let want: Vec<(usize, usize, String)> = once.chain(again).collect();
        assert_eq!(f.props.len(), n);
        assert_eq!(want.len(), n);
        for (p, (i, line, value)) in f.props.iter().zip(&want) {
            assert_eq!((p.key.as_str(), p.line, p.value.as_str()), (format!("key.{i}").as_str(), *line, value.as_str()));
        }
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
        // A ZooKeeper-era file: brokers come from ZooKeeper, and a dead one shows the line to add.
        let mut c = translate(&file("zookeeper.connect=127.0.0.1:1/kafka\ngroup.id=g\n"), Role::Consumer).unwrap();
        assert_eq!(c.zookeeper_connect, Some(("127.0.0.1:1/kafka".to_string(), "test.properties:1".to_string())));
        let e = resolve_brokers(&mut c).unwrap_err();
        assert!(e.0.starts_with("test.properties:1: zookeeper.connect=127.0.0.1:1/kafka: cannot read the brokers"), "{e}");
        assert!(e.0.contains("add a line 'bootstrap.servers=<broker host:port,...>' to test.properties"), "{e}");
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let c = consumer("bootstrap.servers=h:1\ngroup.id=g\nsession.timeout.msx=10\n");
        assert!(c.warnings.iter().any(|w| w.contains("test.properties:3") && w.contains("Did you mean 'session.timeout.ms'")), "{:?}", c.warnings);
        assert!(c.get("session.timeout.msx").is_none());
    }

    /// The bounded distance agrees with the whole edit-distance table on
    /// every pair of common keys and on typos of them.
    #[test]
    fn typo_distance_is_the_edit_distance_up_to_two() {
        fn full(a: &str, b: &str) -> usize {
            let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
            for (i, row) in d.iter_mut().enumerate() {
                row[0] = i;
            }
            for (j, cell) in d[0].iter_mut().enumerate() {
                *cell = j;
            }
            for i in 1..=a.len() {
                for j in 1..=b.len() {
                    d[i][j] = (d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1])).min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
                }
            }
            d[a.len()][b.len()]
        }
        let mut words: Vec<String> = COMMON_KEYS.iter().map(|k| k.to_string()).collect();
        for k in COMMON_KEYS {
            words.push(k.replacen('.', "", 1));
            words.push(format!("{k}x"));
            words.push(k.chars().rev().collect());
            words.push(k.replace("ms", "sm"));
        }
        let mut close = 0;
        for a in &words {
            for b in COMMON_KEYS {
                let d = full(a, b);
                let chars: Vec<char> = a.chars().collect();
                assert_eq!(within_two(&chars, b, &mut (Vec::new(), Vec::new())), (d <= 2).then_some(d), "{a} / {b}");
                close += usize::from(d <= 2);
            }
        }
        assert!(close > COMMON_KEYS.len() * 3, "{close}");
    }

    #[test]
    fn secrets_are_redacted() {
        let p = producer("bootstrap.servers=h:1\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.password=hunter2\n");
        assert!(p.describe().iter().all(|l| !l.contains("hunter2")));
        assert!(p.describe().iter().any(|l| l.starts_with("sasl.password=[redacted]")));
    }

    /// The reference users read must name every key the table handles.
    #[test]
    fn every_rule_key_is_in_the_configuration_reference() {
        let reference = include_str!("../../../config/README.md");
        let missing: Vec<&str> = rule_keys().map(|(k, _)| k).filter(|k| !reference.contains(&format!("`{k}`"))).collect();
        assert!(missing.is_empty(), "config/README.md does not list these keys of the rule table (as `key`): {missing:?}");
    }

    /// A lookup takes the first row, so a second row for the same key and
    /// role would be dead.
    #[test]
    fn one_rule_per_key_and_role() {
        for role in [Role::Consumer, Role::Producer] {
            let mut keys: Vec<&str> = RULES.iter().filter(|r| r.roles.contains(&role)).flat_map(|r| r.keys.iter().copied()).collect();
            keys.sort_unstable();
            let twice: Vec<&[&str]> = keys.windows(2).filter(|w| w[0] == w[1]).collect();
            assert!(twice.is_empty(), "{role:?}: keys in two rows: {twice:?}");
        }
    }

    /// Security's keys are taken before the table is asked, and a rename
    /// must land on a key librdkafka has.
    #[test]
    fn every_rule_can_apply() {
        for r in RULES {
            assert!(!r.roles.is_empty(), "{:?} applies to no role", r.keys);
            for k in r.keys {
                assert!(!crate::front::translate::security::owns(k), "{k} is security's, so its rule is never reached");
            }
            if let Action::Rename(to) = r.action {
                assert_ne!(accepts(to, "1"), Err(Refusal::Unknown), "{:?} renamed to {to}, which librdkafka does not know", r.keys);
            }
        }
    }

    #[test]
    fn every_emitted_setting_is_accepted_by_librdkafka() {
        for s in [consumer("bootstrap.servers=h:1\ngroup.id=g\n"), producer("bootstrap.servers=h:1\n")] {
            for (k, (v, _)) in &s.entries {
                assert!(accepts(k, v).is_ok(), "{k}={v}");
            }
        }
    }
}
