//! Translation of Java client properties files into librdkafka settings.
//!
//! Users bring the `consumer.properties` and `producer.properties` they ran
//! Java MirrorMaker with. librdkafka rejects keys it doesn't know, silently
//! ignores some old ones and has different defaults, so every key goes
//! through [`translate`]: passed, renamed, handled by the mirror itself,
//! dropped with a note or a warning, or refused with a message naming file,
//! line, key and the fix. Which one is data, the table in [`rules`]: keys,
//! the roles they apply to, and the action; a key whose value or neighbours
//! decide names its own function in [`special`], called after the key. A key no row names
//! goes to librdkafka as it is, with numbers read as Java reads them; SSL and
//! SASL keys are [`security`]'s. MM1's no-loss defaults are then applied
//! ([`defaults`]), and each user override of one is logged, as MM1 did.

mod defaults;
pub mod jaas;
mod rules;
pub mod security;
mod special;
mod translation;
mod values;
pub mod zookeeper;

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::conf::{accepts, Refusal, Scope};
use crate::kafka::secrets::shown;
use crate::kafka::settings::{ClientSettings, Origin, Role, TranslateOptions};

use defaults::{admin_defaults, check_combinations, consumer_defaults, java_defaults, one_name_per_setting, producer_defaults};
pub use rules::rule_keys;
use rules::{did_you_mean, rule, Action};
use special::compression_level;
use translation::Translation;
use values::{normalise_number, parse_long};

/// A key no rule names, as librdkafka would get it: the value with
/// numbers normalised, or librdkafka's refusal.
fn normalised(file: &PropertiesFile, p: &Property, key: &str, warnings: &mut Vec<String>) -> Result<Result<String, Refusal>, ConfigError> {
    if let Err(Refusal::Unknown) = accepts(key, &p.value) {
        return Ok(Err(Refusal::Unknown));
    }
    let v = normalise_number(file, p, key, &p.value, warnings)?;
    Ok(accepts(key, &v).map(|()| v))
}

/// A client file (`--consumer.config`, `--producer.config`) loaded, its
/// config-provider references resolved as the Java client resolves those
/// the same file declares, and translated; the provider keys' warnings
/// join the translation's.
pub fn load(path: &std::path::Path, role: Role, opts: TranslateOptions) -> Result<ClientSettings, ConfigError> {
    let (file, warnings) = crate::front::providers::resolve_file(crate::front::properties::load(path)?, true)?;
    let mut s = translate_with(&file, role, opts)?;
    s.warnings.extend(warnings);
    Ok(s)
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
        Role::Admin => admin_defaults(&mut s),
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
            Err(ConfigError::in_file(&file.path, "bootstrap.servers is missing")
                .with_key("bootstrap.servers")
                .with_fix(format!("add 'bootstrap.servers=host:port'{hint}")))
        }
    }
}

impl<'f> Translation<'f> {
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
            Some(Action::Refuse(why)) => return Err(ConfigError::at(file, p, format!("{}: {why}", p.key))),
            Some(Action::Special(handle)) => return handle(self, p),
            None => return self.pass(p, key),
        }
        Ok(())
    }

    /// A key no rule names: librdkafka's own, or unknown to both sides.
    fn pass(&mut self, p: &Property, key: &str) -> Result<(), ConfigError> {
        let file = self.file;
        // An admin client takes the keys every client has; a consumer's or
        // a producer's own would only draw librdkafka's warnings (Java's
        // AdminClient ignores them as unknown).
        if self.s.role == Role::Admin {
            let only = match crate::kafka::conf::scope(key) {
                Some(Scope::Consumer) => Some("consumer"),
                Some(Scope::Producer) => Some("producer"),
                _ => None,
            };
            if let Some(kind) = only {
                self.s.warnings.push(format!("{}: {} is ignored: librdkafka reads it in a {kind} only, not in an admin client", file.at(p), p.key));
                return Ok(());
            }
        }
        match normalised(file, p, key, &mut self.s.warnings)? {
            Ok(v) => self.set(p, key, v),
            Err(Refusal::Unknown) => {
                let hint = did_you_mean(key).map(|k| format!(" Did you mean '{k}'?")).unwrap_or_default();
                self.s.warnings.push(format!("{}: unknown key '{}' is ignored (neither the Java clients nor librdkafka know it).{hint}", file.at(p), p.key));
            }
            Err(Refusal::Invalid(msg)) => return Err(ConfigError::at(file, p, format!("{}='{}' is not accepted: {msg}", p.key, shown(key, &p.value)))),
        }
        Ok(())
    }

    /// Auto-commit keys, known only once the interval may have been read.
    fn auto_commit(&mut self) {
        let on = self.auto_commit.is_some_and(|(on, _)| on);
        if let Some((ms, p)) = self.auto_commit_interval {
            let at = self.file.at(p);
            self.s.notices.push(if on {
                format!("{at}: {}={ms}: acknowledged offsets are committed every {ms} ms unless --offset.commit.interval.ms is given", p.key)
            } else {
                format!(
                    "{at}: {} is not used: auto-commit is off, so the mirror commits what the target acknowledged every --offset.commit.interval.ms \
                     (Java reads the interval only with auto-commit on)",
                    p.key
                )
            });
        }
        let Some((on, p)) = self.auto_commit else { return };
        let at = self.file.at(p);
        if on {
            let ms = self.auto_commit_interval.map_or(60_000, |(ms, _)| ms);
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
        // `at` is already `file:line`, as the settings keep it.
        Err(e) => Err(ConfigError::new(format!(
            "{at}: zookeeper.connect={connect}: cannot read the brokers from ZooKeeper: {e}. \
             This mirror talks to the brokers directly: add a line 'bootstrap.servers=<broker host:port,...>' to {} \
             (the brokers registered under /brokers/ids in that ZooKeeper)",
            s.path.display()
        ))
        .with_key("zookeeper.connect")),
    }
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
        assert!(e.to_string().starts_with("test.properties:3: session.timeout.ms='soon'"), "{e}");
        let e = translate(&file("group.id=g\n"), Role::Consumer).unwrap_err();
        assert!(e.to_string().contains("bootstrap.servers is missing"), "{e}");
        assert_eq!((e.line, e.key.as_deref(), e.fix.as_deref()), (None, Some("bootstrap.servers"), Some("add 'bootstrap.servers=host:port'")));
        let e = translate(&file("bootstrap.servers=h:1\n"), Role::Consumer).unwrap_err();
        assert!(e.to_string().contains("group.id is missing"), "{e}");
        let e = translate(&file("bootstrap.servers=h:1\ntransactional.id=t\n"), Role::Producer).unwrap_err();
        assert!(e.to_string().contains("test.properties:2: transactional.id"), "{e}");
        // A ZooKeeper-era file: brokers come from ZooKeeper, and a dead one shows the line to add.
        let mut c = translate(&file("zookeeper.connect=127.0.0.1:1/kafka\ngroup.id=g\n"), Role::Consumer).unwrap();
        assert_eq!(c.zookeeper_connect, Some(("127.0.0.1:1/kafka".to_string(), "test.properties:1".to_string())));
        let e = resolve_brokers(&mut c).unwrap_err();
        assert!(e.to_string().starts_with("test.properties:1: zookeeper.connect=127.0.0.1:1/kafka: cannot read the brokers"), "{e}");
        assert!(e.to_string().contains("add a line 'bootstrap.servers=<broker host:port,...>' to test.properties"), "{e}");
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let c = consumer("bootstrap.servers=h:1\ngroup.id=g\nsession.timeout.msx=10\n");
        assert!(c.warnings.iter().any(|w| w.contains("test.properties:3") && w.contains("Did you mean 'session.timeout.ms'")), "{:?}", c.warnings);
        assert!(c.get("session.timeout.msx").is_none());
    }

    #[test]
    fn secrets_are_redacted() {
        let p = producer("bootstrap.servers=h:1\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.password=hunter2\n");
        assert!(p.describe().iter().all(|l| !l.contains("hunter2")));
        assert!(p.describe().iter().any(|l| l.starts_with("sasl.password=[redacted]")));
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
