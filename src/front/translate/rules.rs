//! The rule table of [`super::translate`]: every Java (or 0.8) client key
//! that is not handed to librdkafka as it is, with the roles it applies to
//! and what becomes of it. Data, so tests and the configuration reference
//! are checked against the table itself; a key whose value or neighbours
//! decide names its function in [`super::special`]. Also the "did you
//! mean" of an unknown key, which searches the keys users most often write.

use super::special::*;
use super::translation::Translation;
use crate::front::properties::{ConfigError, Property};
use crate::kafka::settings::Role;

/// What becomes of a key librdkafka lacks or reads differently from Java.
pub(super) enum Action {
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
pub(super) type Handler = for<'f> fn(&mut Translation<'f>, &'f Property) -> Result<(), ConfigError>;

/// One row of [`RULES`].
struct Rule {
    keys: &'static [&'static str],
    roles: &'static [Role],
    action: Action,
}

const BOTH: &[Role] = &[Role::Consumer, Role::Producer];
/// Keys every Java client has, admin clients included.
const ANY: &[Role] = &[Role::Consumer, Role::Producer, Role::Admin];
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
        Rule { keys: &["metadata.max.age.ms"], roles: ANY, action: Rename("topic.metadata.refresh.interval.ms") },
        Rule { keys: &["send.buffer.bytes"], roles: ANY, action: Special(send_buffer_bytes) },
        Rule { keys: &["receive.buffer.bytes"], roles: ANY, action: Special(receive_buffer_bytes) },
        Rule {
            keys: &["metric.reporters", "metrics.num.samples", "metrics.sample.window.ms", "metrics.recording.level", "auto.include.jmx.reporter"],
            roles: ANY,
            action: Warn("JMX metrics reporters do not exist here"),
        },
        Rule { keys: &["interceptor.classes"], roles: BOTH, action: Warn("Java interceptors cannot be loaded; records pass unmodified") },
        Rule { keys: &["security.providers"], roles: ANY, action: Warn("Java security provider settings have no OpenSSL equivalent") },
        Rule { keys: &["socket.connection.setup.timeout.max.ms"], roles: ANY, action: Warn("librdkafka has only socket.connection.setup.timeout.ms") },
        Rule { keys: &["default.api.timeout.ms"], roles: ANY, action: Drop("commit, metadata and admin calls use their own timeouts") },
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
        Rule { keys: &["client.dns.lookup"], roles: ANY, action: Special(client_dns_lookup) },
        Rule { keys: &["topic.metadata.refresh.interval.ms"], roles: ANY, action: Special(topic_metadata_refresh_interval_ms) },
        Rule { keys: &["zookeeper.connect"], roles: CONSUMER, action: Special(zookeeper_connect) },
        Rule { keys: &["enable.auto.commit", "auto.commit.enable"], roles: CONSUMER, action: Special(enable_auto_commit) },
        Rule { keys: &["auto.commit.interval.ms"], roles: CONSUMER, action: Special(auto_commit_interval_ms) },
        Rule { keys: &["exclude.internal.topics"], roles: CONSUMER, action: Special(exclude_internal_topics) },
        Rule { keys: &["fetch.max.wait.ms"], roles: CONSUMER, action: Rename("fetch.wait.max.ms") },
        // An admin client's request timeout is librdkafka's socket.timeout.ms too.
        Rule { keys: &["request.timeout.ms"], roles: &[Role::Consumer, Role::Admin], action: Rename("socket.timeout.ms") },
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
pub(super) fn rule(role: Role, key: &str) -> Option<&'static Action> {
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

pub(super) fn did_you_mean(key: &str) -> Option<&'static str> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::conf::{accepts, Refusal};

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
        for role in [Role::Consumer, Role::Producer, Role::Admin] {
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
}
