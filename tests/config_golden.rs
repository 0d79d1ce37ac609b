//! Golden tests of properties-file translation, no brokers needed.
//!
//! Every sample file in `config/` and a set of hand-made hard cases must
//! produce exactly the translated map, warnings and errors written down
//! here by hand. Every key of the Java-client and 0.8-era tables of the
//! configuration mapping (SSL/SASL rows aside) has a row in [`TABLE`]:
//! the keys of the translation's own rule table ([`translate::rule_keys`])
//! and the ones passed to librdkafka as they are ([`PASSED_KEYS`]).
//! [`every_documented_key_has_a_case`] fails when one is missing, and
//! [`readme_lists_every_key`] when config/README.md forgets one.

use std::collections::BTreeMap;
use std::path::Path;

use mirror_maker::front::properties;
use mirror_maker::front::translate;

use mirror_maker::kafka::settings::{ClientSettings, Role, TranslateOptions};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn parse(text: &str) -> properties::PropertiesFile {
    properties::parse(Path::new("t.properties"), text.as_bytes()).unwrap()
}

fn translate(role: Role, text: &str) -> Result<ClientSettings, String> {
    translate::translate(&parse(text), role).map_err(|e| e.to_string())
}

fn sample(name: &str, role: Role) -> ClientSettings {
    let path = Path::new(ROOT).join("config").join(name);
    let file = properties::load(&path).unwrap();
    translate::translate_with(&file, role, TranslateOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn map(s: &ClientSettings) -> BTreeMap<&str, &str> {
    s.entries.iter().map(|(k, (v, _))| (k.as_str(), v.as_str())).collect()
}

fn expect_map(name: &str, s: &ClientSettings, want: &[(&str, &str)]) {
    let want: BTreeMap<&str, &str> = want.iter().copied().collect();
    assert_eq!(map(s), want, "{name}: translated map differs");
}

fn has(list: &[String], needle: &str) -> bool {
    list.iter().any(|l| l.contains(needle))
}

// The sample files ---------------------------------------------------------

#[test]
fn sample_java_consumer() {
    let s = sample("java-consumer.properties", Role::Consumer);
    expect_map(
        "java-consumer",
        &s,
        &[
            ("allow.auto.create.topics", "false"),
            ("auto.offset.reset", "earliest"),
            ("bootstrap.servers", "127.0.0.1:19092"),
            ("check.crcs", "true"),
            ("connections.max.idle.ms", "540000"),
            ("enable.auto.commit", "false"),
            ("enable.auto.offset.store", "false"),
            ("fetch.queue.backoff.ms", "10"),
            ("fetch.wait.max.ms", "500"),
            ("group.id", "mirror-maker"),
            ("heartbeat.interval.ms", "3000"),
            ("isolation.level", "read_uncommitted"),
            ("max.partition.fetch.bytes", "1048576"),
            ("max.poll.interval.ms", "300000"),
            ("partition.assignment.strategy", "range"),
            ("queued.max.messages.kbytes", "4096"),
            ("queued.min.messages", "5000"),
            ("reconnect.backoff.max.ms", "1000"),
            ("reconnect.backoff.ms", "50"),
            ("session.timeout.ms", "45000"),
            ("socket.receive.buffer.bytes", "0"),
            ("socket.timeout.ms", "30000"),
            ("topic.metadata.refresh.interval.ms", "300000"),
        ],
    );
    assert_eq!(s.warnings, Vec::<String>::new());
    assert_eq!(s.auto_commit_interval_ms, Some(5000));
    assert!(s.exclude_internal_topics);
    assert!(has(&s.notices, "client.id 'mm-java' is replaced by <group.id>-<stream>"), "{:?}", s.notices);
    assert!(has(&s.notices, "enable.auto.commit=true: auto-commit is never handed to the client"), "{:?}", s.notices);
    assert!(has(&s.notices, "max.poll.records is not passed to librdkafka"), "{:?}", s.notices);
}

#[test]
fn sample_java_producer() {
    let s = sample("java-producer.properties", Role::Producer);
    expect_map(
        "java-producer",
        &s,
        &[
            ("acks", "all"),
            ("batch.size", "65536"),
            ("bootstrap.servers", "127.0.0.1:29092"),
            ("compression.level", "9"),
            ("compression.type", "lz4"),
            ("connections.max.idle.ms", "540000"),
            ("delivery.timeout.ms", "120000"),
            ("enable.idempotence", "true"),
            ("linger.ms", "5"),
            ("max.in.flight.requests.per.connection", "5"),
            ("message.max.bytes", "1048576"),
            ("partitioner", "murmur2_random"),
            ("queue.buffering.max.kbytes", "65536"),
            ("queue.buffering.max.messages", "10000"),
            ("reconnect.backoff.max.ms", "1000"),
            ("reconnect.backoff.ms", "50"),
            ("retries", "2147483647"),
            ("socket.send.buffer.bytes", "131072"),
            ("topic.metadata.propagation.max.ms", "300000"),
        ],
    );
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        s.warnings[0].contains(":10: Property delivery.timeout.ms is overridden to 120000 - data loss or message reordering is possible"),
        "{:?}",
        s.warnings
    );
    assert!(has(&s.notices, "compression.gzip.level is not used: compression.type is lz4"), "{:?}", s.notices);
    assert!(!s.byte_array_partitioner);
}

#[test]
fn sample_legacy_consumer() {
    let s = sample("legacy-0.8-consumer.properties", Role::Consumer);
    expect_map(
        "legacy-0.8-consumer",
        &s,
        &[
            ("allow.auto.create.topics", "false"),
            ("auto.offset.reset", "earliest"),
            ("check.crcs", "true"),
            ("connections.max.idle.ms", "540000"),
            ("enable.auto.commit", "false"),
            ("enable.auto.offset.store", "false"),
            ("fetch.message.max.bytes", "1048576"),
            ("fetch.queue.backoff.ms", "10"),
            ("fetch.wait.max.ms", "100"),
            ("group.id", "mirror-maker"),
            ("isolation.level", "read_uncommitted"),
            ("partition.assignment.strategy", "range"),
            ("queued.max.messages.kbytes", "2048"),
            ("queued.min.messages", "5000"),
            ("reconnect.backoff.max.ms", "1000"),
            ("reconnect.backoff.ms", "50"),
            ("socket.timeout.ms", "30000"),
        ],
    );
    let zk = s.zookeeper_connect.as_ref().expect("zookeeper.connect kept for the broker lookup");
    assert_eq!(zk.0, "127.0.0.1:2181/kafka");
    assert!(zk.1.ends_with("legacy-0.8-consumer.properties:7"), "{}", zk.1);
    assert_eq!(s.bootstrap, "");
    assert_eq!(s.auto_commit_interval_ms, Some(60000));
    assert_eq!(s.warnings.len(), 6, "{:#?}", s.warnings);
    for key in [
        "zookeeper.session.timeout.ms",
        "zookeeper.connection.timeout.ms",
        "num.consumer.fetchers",
        "rebalance.max.retries",
        "rebalance.backoff.ms",
        "dual.commit.enabled",
    ] {
        assert!(has(&s.warnings, &format!("{key} is ignored")), "no warning for {key}: {:#?}", s.warnings);
    }
    assert!(has(&s.notices, "offsets.storage=kafka is the only storage"), "{:?}", s.notices);
    assert!(has(&s.notices, "consumer.timeout.ms=-1: wait for records forever"), "{:?}", s.notices);
}

#[test]
fn sample_legacy_producer() {
    let s = sample("legacy-0.8-producer.properties", Role::Producer);
    expect_map(
        "legacy-0.8-producer",
        &s,
        &[
            ("batch.num.messages", "200"),
            ("batch.size", "1000000"),
            ("compression.codec", "snappy"),
            ("connections.max.idle.ms", "540000"),
            ("delivery.timeout.ms", "0"),
            ("enable.idempotence", "true"),
            ("max.in.flight.requests.per.connection", "5"),
            ("message.max.bytes", "1048576"),
            ("metadata.broker.list", "127.0.0.1:29092"),
            ("partitioner", "murmur2_random"),
            ("queue.buffering.max.kbytes", "4096"),
            ("queue.buffering.max.messages", "10000"),
            ("queue.buffering.max.ms", "5000"),
            ("reconnect.backoff.max.ms", "1000"),
            ("reconnect.backoff.ms", "50"),
            ("request.required.acks", "-1"),
            ("request.timeout.ms", "10000"),
            ("retries", "2147483647"),
            ("retry.backoff.ms", "100"),
            ("socket.send.buffer.bytes", "102400"),
            ("topic.metadata.propagation.max.ms", "300000"),
            ("topic.metadata.refresh.interval.ms", "600000"),
        ],
    );
    assert_eq!(s.warnings, Vec::<String>::new());
    assert!(s.byte_array_partitioner);
    assert_eq!(s.bootstrap, "127.0.0.1:29092");
    assert!(has(&s.notices, "producer.type=sync"), "{:?}", s.notices);
    assert!(has(&s.notices, "ByteArrayPartitioner: keyed records go to abs(Arrays.hashCode(key)) % partitions"), "{:?}", s.notices);
}

#[test]
fn existing_samples_still_work() {
    let c = sample("consumer.properties", Role::Consumer);
    assert_eq!((c.get("bootstrap.servers"), c.get("group.id"), c.get("auto.offset.reset")), (Some("127.0.0.1:19092"), Some("mirror-maker"), Some("earliest")));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let p = sample("producer.properties", Role::Producer);
    assert_eq!((p.get("acks"), p.get("enable.idempotence"), p.get("delivery.timeout.ms")), (Some("all"), Some("true"), Some("0")));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

// Hand-made hard cases ------------------------------------------------------

#[test]
fn java_properties_syntax() {
    let f = parse(
        "# comment\n! also a comment\n  bootstrap.servers : h:1  \ngroup.id g\nclient.id=a\\tb\\\\c\nkey\\ with\\ spaces=v\n\
         a\\=b=c\nlong = one,\\\n       two\nuni=\\u00e9t\\u00E9\ncolon:x=y\nempty=\n",
    );
    let get = |k: &str| f.get(k).map(|p| (p.value.as_str(), p.line));
    assert_eq!(get("bootstrap.servers"), Some(("h:1", 3)));
    assert_eq!(get("group.id"), Some(("g", 4)));
    assert_eq!(get("client.id"), Some(("a\tb\\c", 5)));
    assert_eq!(get("key with spaces"), Some(("v", 6)));
    assert_eq!(get("a=b"), Some(("c", 7)));
    assert_eq!(get("long"), Some(("one,two", 8)));
    assert_eq!(get("uni"), Some(("été", 10)));
    assert_eq!(get("colon"), Some(("x=y", 11)));
    assert_eq!(get("empty"), Some(("", 12)));
}

#[test]
fn numbers_are_read_as_java_reads_them() {
    let c = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\nfetch.min.bytes= 010 \nsession.timeout.ms=+30000\n").unwrap();
    assert_eq!(c.get("fetch.min.bytes"), Some("10"), "librdkafka alone would read 010 as octal 8");
    assert_eq!(c.get("session.timeout.ms"), Some("30000"));
    let e = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\nfetch.min.bytes=0x10\n").unwrap_err();
    assert_eq!(e, "t.properties:3: fetch.min.bytes='0x10' must be a whole number written in base 10 (as Java reads it)");
    let e = translate(Role::Producer, "bootstrap.servers=h:1\nlinger.ms=5ms\n").unwrap_err();
    assert!(e.starts_with("t.properties:2: linger.ms='5ms' must be a whole number"), "{e}");
    // Clamped to librdkafka's range, with a warning naming the line.
    let p = translate(Role::Producer, "bootstrap.servers=h:1\nlinger.ms=2000000\nretry.backoff.ms=0\n").unwrap();
    assert_eq!(p.get("linger.ms"), Some("900000"));
    assert_eq!(p.get("retry.backoff.ms"), Some("1"));
    assert!(has(&p.warnings, "t.properties:2: linger.ms=2000000 is outside librdkafka's range 0..900000; using 900000"), "{:?}", p.warnings);
    assert!(has(&p.warnings, "t.properties:3: retry.backoff.ms=0 is outside librdkafka's range 1..300000; using 1"), "{:?}", p.warnings);
}

#[test]
fn typos_get_a_suggestion_and_nothing_else() {
    let c = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\nauto.comit.enable=false\nbootstrap.server=x:1\nfoo.bar=1\n").unwrap();
    assert!(
        has(
            &c.warnings,
            "t.properties:3: unknown key 'auto.comit.enable' is ignored (neither the Java clients nor librdkafka know it). Did you mean 'auto.commit.enable'?"
        ),
        "{:?}",
        c.warnings
    );
    assert!(
        has(&c.warnings, "t.properties:4: unknown key 'bootstrap.server' is ignored") && has(&c.warnings, "Did you mean 'bootstrap.servers'?"),
        "{:?}",
        c.warnings
    );
    let foo = c.warnings.iter().find(|w| w.contains("'foo.bar'")).unwrap();
    assert!(!foo.contains("Did you mean"), "{foo}");
    assert_eq!(c.warnings.len(), 3);
    for k in ["auto.comit.enable", "bootstrap.server", "foo.bar"] {
        assert_eq!(c.get(k), None);
    }
}

#[test]
fn duplicate_and_alias_keys_keep_one_value() {
    let p = translate(Role::Producer, "bootstrap.servers=h:1\nlinger.ms=7\nqueue.buffering.max.ms=9\nacks=1\nacks=all\n").unwrap();
    assert_eq!((p.get("linger.ms"), p.get("queue.buffering.max.ms")), (None, Some("9")));
    assert!(
        has(&p.warnings, "linger.ms (line 2) and queue.buffering.max.ms are the same setting; the later line, queue.buffering.max.ms, is used"),
        "{:?}",
        p.warnings
    );
    assert_eq!(p.get("acks"), Some("all"));
    let c = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\nfetch.message.max.bytes=2000000\nmax.partition.fetch.bytes=3000000\n").unwrap();
    assert_eq!((c.get("fetch.message.max.bytes"), c.get("max.partition.fetch.bytes")), (None, Some("3000000")));
}

#[test]
fn combinations_librdkafka_would_refuse_are_explained() {
    // Java runs with it; librdkafka would refuse it, so the interval is raised.
    let c = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\nsession.timeout.ms=60000\nmax.poll.interval.ms=30000\n").unwrap();
    assert_eq!(c.get("max.poll.interval.ms"), Some("60000"));
    assert_eq!(
        c.warnings,
        vec!["t.properties:4: max.poll.interval.ms=30000 is below t.properties:3: session.timeout.ms=60000, which librdkafka refuses (Java does not); using max.poll.interval.ms=60000".to_string()]
    );
    assert!(c.client_config().create::<rdkafka::consumer::BaseConsumer>().is_ok());
    let c = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\nmax.poll.interval.ms=30000\n").unwrap();
    assert_eq!(c.get("max.poll.interval.ms"), Some("45000"));
    assert!(has(&c.warnings, "t.properties:3: max.poll.interval.ms=30000 is below the default session.timeout.ms=45000"), "{:?}", c.warnings);
    assert!(c.client_config().create::<rdkafka::consumer::BaseConsumer>().is_ok());
    let e = translate(Role::Producer, "bootstrap.servers=h:1\nlinger.ms=100\ndelivery.timeout.ms=50\n").unwrap_err();
    assert!(e.starts_with("t.properties:3: delivery.timeout.ms=50 must be larger than t.properties:2: linger.ms=100"), "{e}");
    let e = translate(Role::Consumer, "bootstrap.servers=h:1\ngroup.id=g\ngroup.protocol=consumer\nsession.timeout.ms=10000\n").unwrap_err();
    assert!(e.starts_with("t.properties:4: session.timeout.ms=10000: with group.protocol=consumer the broker decides this"), "{e}");
    let p = translate(Role::Producer, "bootstrap.servers=h:1\nreconnect.backoff.ms=5000\n").unwrap();
    assert_eq!((p.get("reconnect.backoff.ms"), p.get("reconnect.backoff.max.ms")), (Some("5000"), Some("5000")));
}

#[test]
fn zookeeper_offsets_need_the_option() {
    let f = parse("bootstrap.servers=h:1\ngroup.id=g\noffsets.storage=zookeeper\nauto.offset.reset=largest\n");
    let e = translate::translate(&f, Role::Consumer).unwrap_err().to_string();
    assert!(e.starts_with("t.properties:3: offsets.storage=zookeeper: the group's offsets kept in ZooKeeper are invisible"), "{e}");
    assert!(e.contains("--accept.zookeeper.offsets.loss"), "{e}");
    let s = translate::translate_with(&f, Role::Consumer, TranslateOptions { accept_zookeeper_offsets_loss: true }).unwrap();
    assert!(has(&s.warnings, "start from auto.offset.reset=largest"), "{:?}", s.warnings);
    assert_eq!(s.get("offsets.storage"), None);
}

// Every key of the tables ---------------------------------------------------

/// What a case expects of the translation.
enum W {
    /// These librdkafka settings, exactly.
    Set(&'static str, &'static str),
    /// This key is not handed to librdkafka.
    Gone(&'static str),
    /// A warning containing this text.
    Warn(&'static str),
    /// A note (log line, not a problem) containing this text.
    Note(&'static str),
    /// Refused: the error contains this text.
    Refused(&'static str),
}

use Role::{Consumer as C, Producer as P};
use W::*;

/// (documented key, role, lines added to a minimal file, expectations).
/// Written from the configuration mapping's Action column, not from the code.
const TABLE: &[(&str, Role, &str, &[W])] = &[
    // §1 Java clients, common
    ("bootstrap.servers", C, "", &[Set("bootstrap.servers", "h:1")]),
    ("client.id", P, "client.id=mm", &[Set("client.id", "mm")]),
    ("client.id", C, "client.id=mm", &[Gone("client.id"), Note("client.id 'mm' is replaced by <group.id>-<stream>")]),
    ("client.dns.lookup", C, "client.dns.lookup=default", &[Set("client.dns.lookup", "use_all_dns_ips")]),
    ("client.rack", C, "client.rack=az1", &[Set("client.rack", "az1")]),
    ("metadata.max.age.ms", C, "metadata.max.age.ms=60000", &[Set("topic.metadata.refresh.interval.ms", "60000"), Gone("metadata.max.age.ms")]),
    ("send.buffer.bytes", P, "send.buffer.bytes=-1", &[Set("socket.send.buffer.bytes", "0"), Gone("send.buffer.bytes")]),
    ("receive.buffer.bytes", C, "receive.buffer.bytes=65536", &[Set("socket.receive.buffer.bytes", "65536")]),
    ("reconnect.backoff.ms", C, "reconnect.backoff.ms=200", &[Set("reconnect.backoff.ms", "200")]),
    ("reconnect.backoff.max.ms", C, "reconnect.backoff.ms=200\nreconnect.backoff.max.ms=100", &[Set("reconnect.backoff.max.ms", "200")]),
    ("retry.backoff.ms", P, "retry.backoff.ms=0", &[Set("retry.backoff.ms", "1"), Warn("retry.backoff.ms=0 is outside librdkafka's range")]),
    ("retry.backoff.max.ms", P, "retry.backoff.max.ms=2000", &[Set("retry.backoff.max.ms", "2000")]),
    ("connections.max.idle.ms", C, "connections.max.idle.ms=-1", &[Set("connections.max.idle.ms", "0")]),
    ("socket.connection.setup.timeout.ms", C, "socket.connection.setup.timeout.ms=500", &[Set("socket.connection.setup.timeout.ms", "1000")]),
    (
        "socket.connection.setup.timeout.max.ms",
        C,
        "socket.connection.setup.timeout.max.ms=30000",
        &[Gone("socket.connection.setup.timeout.max.ms"), Warn("socket.connection.setup.timeout.max.ms is ignored")],
    ),
    ("request.timeout.ms", C, "request.timeout.ms=40000", &[Set("socket.timeout.ms", "40000"), Gone("request.timeout.ms")]),
    ("request.timeout.ms", P, "request.timeout.ms=40000", &[Set("request.timeout.ms", "40000")]),
    (
        "default.api.timeout.ms",
        C,
        "default.api.timeout.ms=60000",
        &[Gone("default.api.timeout.ms"), Note("default.api.timeout.ms is not passed to librdkafka")],
    ),
    ("metadata.recovery.strategy", C, "metadata.recovery.strategy=none", &[Set("metadata.recovery.strategy", "none")]),
    (
        "metadata.recovery.rebootstrap.trigger.ms",
        C,
        "metadata.recovery.rebootstrap.trigger.ms=300000",
        &[Set("metadata.recovery.rebootstrap.trigger.ms", "300000")],
    ),
    ("enable.metrics.push", C, "enable.metrics.push=false", &[Set("enable.metrics.push", "false")]),
    ("metric.reporters", C, "metric.reporters=com.acme.Reporter", &[Gone("metric.reporters"), Warn("metric.reporters is ignored: JMX metrics reporters")]),
    ("metrics.num.samples", C, "metrics.num.samples=2", &[Gone("metrics.num.samples"), Warn("metrics.num.samples is ignored")]),
    ("metrics.sample.window.ms", C, "metrics.sample.window.ms=30000", &[Gone("metrics.sample.window.ms"), Warn("metrics.sample.window.ms is ignored")]),
    ("metrics.recording.level", P, "metrics.recording.level=INFO", &[Gone("metrics.recording.level"), Warn("metrics.recording.level is ignored")]),
    ("auto.include.jmx.reporter", P, "auto.include.jmx.reporter=true", &[Gone("auto.include.jmx.reporter"), Warn("auto.include.jmx.reporter is ignored")]),
    (
        "interceptor.classes",
        C,
        "interceptor.classes=com.acme.I",
        &[Gone("interceptor.classes"), Warn("interceptor.classes is ignored: Java interceptors cannot be loaded")],
    ),
    ("security.providers", C, "security.providers=com.acme.P", &[Gone("security.providers"), Warn("security.providers is ignored")]),
    // §1 producer
    (
        "acks",
        P,
        "acks=1",
        &[Set("acks", "1"), Warn("Property acks is overridden to 1"), Set("max.in.flight.requests.per.connection", "1"), Gone("enable.idempotence")],
    ),
    ("retries", P, "retries=5", &[Set("retries", "5"), Set("enable.idempotence", "true")]),
    ("delivery.timeout.ms", P, "delivery.timeout.ms=0", &[Set("delivery.timeout.ms", "0")]),
    ("linger.ms", P, "linger.ms=1000000", &[Set("linger.ms", "900000"), Warn("linger.ms=1000000 is outside librdkafka's range 0..900000; using 900000")]),
    ("batch.size", P, "batch.size=0", &[Set("batch.num.messages", "1"), Gone("batch.size")]),
    ("buffer.memory", P, "buffer.memory=1000", &[Set("queue.buffering.max.kbytes", "1"), Gone("buffer.memory")]),
    (
        "max.block.ms",
        P,
        "max.block.ms=1000",
        &[Gone("max.block.ms"), Note("max.block.ms is not passed to librdkafka: a full send queue makes the mirror wait")],
    ),
    ("max.request.size", P, "max.request.size=2097152", &[Set("message.max.bytes", "2097152"), Gone("max.request.size")]),
    ("compression.type", P, "compression.type=zstd", &[Set("compression.type", "zstd")]),
    ("compression.gzip.level", P, "compression.type=gzip\ncompression.gzip.level=6", &[Set("compression.level", "6"), Gone("compression.gzip.level")]),
    (
        "compression.lz4.level",
        P,
        "compression.type=lz4\ncompression.lz4.level=17",
        &[Set("compression.level", "12"), Warn("compression.lz4.level=17 is outside librdkafka's compression.level range -1..12; using 12")],
    ),
    ("compression.zstd.level", P, "compression.type=zstd\ncompression.zstd.level=3", &[Set("compression.level", "3"), Gone("compression.zstd.level")]),
    (
        "max.in.flight.requests.per.connection",
        P,
        "max.in.flight.requests.per.connection=10",
        &[Set("max.in.flight.requests.per.connection", "10"), Gone("enable.idempotence")],
    ),
    (
        "enable.idempotence",
        P,
        "enable.idempotence=false",
        &[Set("enable.idempotence", "false"), Warn("Property enable.idempotence is overridden to false"), Set("max.in.flight.requests.per.connection", "1")],
    ),
    ("transactional.id", P, "transactional.id=tx", &[Refused("t.properties:2: transactional.id: MirrorMaker does not mirror transactionally")]),
    ("partitioner.class", P, "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner", &[Set("partitioner", "random")]),
    ("partitioner.class", P, "partitioner.class=org.apache.kafka.clients.producer.internals.DefaultPartitioner", &[Set("partitioner", "murmur2_random")]),
    (
        "partitioner.class",
        P,
        "partitioner.class=com.acme.MyPartitioner",
        &[Refused("partitioner.class MyPartitioner: Java partitioner classes cannot be loaded")],
    ),
    ("partitioner.ignore.keys", P, "partitioner.ignore.keys=true", &[Set("partitioner", "random")]),
    (
        "partitioner.adaptive.partitioning.enable",
        P,
        "partitioner.adaptive.partitioning.enable=false",
        &[Gone("partitioner.adaptive.partitioning.enable"), Warn("partitioner.adaptive.partitioning.enable is ignored")],
    ),
    (
        "partitioner.availability.timeout.ms",
        P,
        "partitioner.availability.timeout.ms=10",
        &[Gone("partitioner.availability.timeout.ms"), Warn("partitioner.availability.timeout.ms is ignored")],
    ),
    ("metadata.max.idle.ms", P, "metadata.max.idle.ms=300000", &[Gone("metadata.max.idle.ms"), Warn("metadata.max.idle.ms is ignored")]),
    (
        "key.serializer",
        P,
        "key.serializer=org.apache.kafka.common.serialization.StringSerializer",
        &[Gone("key.serializer"), Note("records are copied as raw bytes")],
    ),
    (
        "value.serializer",
        P,
        "value.serializer=org.apache.kafka.common.serialization.StringSerializer",
        &[Gone("value.serializer"), Note("records are copied as raw bytes")],
    ),
    // §1 consumer
    ("group.id", C, "", &[Set("group.id", "g")]),
    ("group.instance.id", C, "group.instance.id=mm-1", &[Set("group.instance.id", "mm-1")]),
    ("group.protocol", C, "group.protocol=consumer", &[Set("group.protocol", "consumer"), Gone("partition.assignment.strategy")]),
    ("group.remote.assignor", C, "group.protocol=consumer\ngroup.remote.assignor=uniform", &[Set("group.remote.assignor", "uniform")]),
    (
        "partition.assignment.strategy",
        C,
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        &[Set("partition.assignment.strategy", "range")],
    ),
    (
        "partition.assignment.strategy",
        C,
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        &[Set("partition.assignment.strategy", "cooperative-sticky")],
    ),
    (
        "partition.assignment.strategy",
        C,
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.StickyAssignor",
        &[Set("partition.assignment.strategy", "range"), Warn("StickyAssignor: not available in librdkafka")],
    ),
    (
        "partition.assignment.strategy",
        C,
        "partition.assignment.strategy=org.apache.kafka.clients.consumer.StickyAssignor,org.apache.kafka.clients.consumer.RoundRobinAssignor",
        &[Set("partition.assignment.strategy", "roundrobin"), Warn("roundrobin is used instead")],
    ),
    (
        "partition.assignment.strategy",
        C,
        "partition.assignment.strategy=com.acme.Assignor",
        &[Set("partition.assignment.strategy", "range"), Warn("com.acme.Assignor: not available in librdkafka")],
    ),
    ("session.timeout.ms", C, "session.timeout.ms=10000", &[Set("session.timeout.ms", "10000")]),
    ("heartbeat.interval.ms", C, "heartbeat.interval.ms=1000", &[Set("heartbeat.interval.ms", "1000")]),
    (
        "max.poll.interval.ms",
        C,
        "max.poll.interval.ms=100000000",
        &[Set("max.poll.interval.ms", "86400000"), Warn("max.poll.interval.ms=100000000 is outside librdkafka's range")],
    ),
    ("max.poll.records", C, "max.poll.records=10", &[Gone("max.poll.records"), Note("max.poll.records is not passed to librdkafka")]),
    ("enable.auto.commit", C, "enable.auto.commit=true", &[Set("enable.auto.commit", "false"), Note("auto-commit is never handed to the client")]),
    (
        "auto.commit.interval.ms",
        C,
        "enable.auto.commit=true\nauto.commit.interval.ms=2500",
        &[Set("enable.auto.commit", "false"), Gone("auto.commit.interval.ms"), Note("acknowledged offsets are committed every 2500 ms")],
    ),
    (
        "auto.offset.reset",
        C,
        "auto.offset.reset=latest",
        &[
            Set("auto.offset.reset", "latest"),
            Warn("auto.offset.reset=latest: records written to a partition before the group's first commit are not mirrored"),
        ],
    ),
    ("auto.offset.reset", C, "auto.offset.reset=none", &[Refused("auto.offset.reset=none stops on a partition with no committed offset")]),
    ("auto.offset.reset", C, "auto.offset.reset=by_duration:PT1H", &[Refused("auto.offset.reset=by_duration:PT1H: starting a new group at a point in time")]),
    ("fetch.min.bytes", C, "fetch.min.bytes=1024", &[Set("fetch.min.bytes", "1024")]),
    ("fetch.max.bytes", C, "fetch.max.bytes=10485760", &[Set("fetch.max.bytes", "10485760")]),
    ("fetch.max.wait.ms", C, "fetch.max.wait.ms=250", &[Set("fetch.wait.max.ms", "250"), Gone("fetch.max.wait.ms")]),
    ("max.partition.fetch.bytes", C, "max.partition.fetch.bytes=2097152", &[Set("max.partition.fetch.bytes", "2097152")]),
    ("isolation.level", C, "isolation.level=read_committed", &[Set("isolation.level", "read_committed")]),
    ("check.crcs", C, "check.crcs=false", &[Set("check.crcs", "false")]),
    ("allow.auto.create.topics", C, "allow.auto.create.topics=true", &[Set("allow.auto.create.topics", "true")]),
    ("exclude.internal.topics", C, "exclude.internal.topics=false", &[Gone("exclude.internal.topics")]),
    (
        "key.deserializer",
        C,
        "key.deserializer=org.apache.kafka.common.serialization.StringDeserializer",
        &[Gone("key.deserializer"), Note("records are copied as raw bytes")],
    ),
    (
        "value.deserializer",
        C,
        "value.deserializer=org.apache.kafka.common.serialization.StringDeserializer",
        &[Gone("value.deserializer"), Note("records are copied as raw bytes")],
    ),
    // §2 0.8 consumer
    ("zookeeper.connect", C, "zookeeper.connect=zk:2181", &[Gone("zookeeper.connect"), Note("zookeeper.connect is ignored; bootstrap.servers is used")]),
    (
        "zookeeper.session.timeout.ms",
        C,
        "zookeeper.session.timeout.ms=6000",
        &[Gone("zookeeper.session.timeout.ms"), Warn("zookeeper.session.timeout.ms is ignored")],
    ),
    (
        "zookeeper.connection.timeout.ms",
        C,
        "zookeeper.connection.timeout.ms=6000",
        &[Gone("zookeeper.connection.timeout.ms"), Warn("zookeeper.connection.timeout.ms is ignored")],
    ),
    ("zookeeper.sync.time.ms", C, "zookeeper.sync.time.ms=2000", &[Gone("zookeeper.sync.time.ms"), Warn("zookeeper.sync.time.ms is ignored")]),
    ("consumer.id", C, "consumer.id=c1", &[Gone("consumer.id"), Warn("consumer.id is ignored: 0.8 consumer.id is not static membership")]),
    ("socket.timeout.ms", C, "socket.timeout.ms=20000", &[Set("socket.timeout.ms", "20000")]),
    ("socket.receive.buffer.bytes", C, "socket.receive.buffer.bytes=65536", &[Set("socket.receive.buffer.bytes", "65536")]),
    ("fetch.message.max.bytes", C, "fetch.message.max.bytes=2097152", &[Set("fetch.message.max.bytes", "2097152")]),
    ("fetch.wait.max.ms", C, "fetch.wait.max.ms=100", &[Set("fetch.wait.max.ms", "100")]),
    (
        "auto.commit.enable",
        C,
        "auto.commit.enable=false",
        &[Set("enable.auto.commit", "false"), Gone("auto.commit.enable"), Note("auto.commit.enable=false: the client never auto-commits")],
    ),
    ("auto.offset.reset", C, "auto.offset.reset=smallest", &[Set("auto.offset.reset", "earliest")]),
    ("auto.offset.reset", C, "auto.offset.reset=largest", &[Set("auto.offset.reset", "latest")]),
    ("partition.assignment.strategy", C, "partition.assignment.strategy=roundrobin", &[Set("partition.assignment.strategy", "roundrobin")]),
    (
        "queued.max.message.chunks",
        C,
        "queued.max.message.chunks=4\nfetch.message.max.bytes=524288",
        &[Set("queued.max.messages.kbytes", "2048"), Gone("queued.max.message.chunks")],
    ),
    ("num.consumer.fetchers", C, "num.consumer.fetchers=2", &[Gone("num.consumer.fetchers"), Warn("num.consumer.fetchers is ignored")]),
    ("rebalance.max.retries", C, "rebalance.max.retries=4", &[Gone("rebalance.max.retries"), Warn("rebalance.max.retries is ignored")]),
    ("rebalance.backoff.ms", C, "rebalance.backoff.ms=2000", &[Gone("rebalance.backoff.ms"), Warn("rebalance.backoff.ms is ignored")]),
    ("refresh.leader.backoff.ms", C, "refresh.leader.backoff.ms=200", &[Gone("refresh.leader.backoff.ms"), Warn("refresh.leader.backoff.ms is ignored")]),
    ("offsets.channel.backoff.ms", C, "offsets.channel.backoff.ms=1000", &[Gone("offsets.channel.backoff.ms"), Warn("offsets.channel.backoff.ms is ignored")]),
    (
        "offsets.channel.socket.timeout.ms",
        C,
        "offsets.channel.socket.timeout.ms=10000",
        &[Gone("offsets.channel.socket.timeout.ms"), Warn("offsets.channel.socket.timeout.ms is ignored")],
    ),
    ("offsets.commit.max.retries", C, "offsets.commit.max.retries=5", &[Gone("offsets.commit.max.retries"), Warn("offsets.commit.max.retries is ignored")]),
    ("dual.commit.enabled", C, "dual.commit.enabled=true", &[Gone("dual.commit.enabled"), Warn("dual.commit.enabled is ignored")]),
    ("consumer.timeout.ms", C, "consumer.timeout.ms=10000", &[Gone("consumer.timeout.ms"), Warn("consumer.timeout.ms=10000 is ignored: a 0.8 mirror exited")]),
    ("offsets.storage", C, "offsets.storage=kafka", &[Gone("offsets.storage"), Note("offsets.storage=kafka is the only storage")]),
    ("offsets.storage", C, "offsets.storage=zookeeper", &[Refused("offsets.storage=zookeeper: the group's offsets kept in ZooKeeper are invisible")]),
    ("exclude.internal.topics", C, "exclude.internal.topics=true", &[Gone("exclude.internal.topics")]),
    // 0.7 names
    (
        "zk.connect",
        C,
        "zk.connect=zk:2181",
        &[Gone("zk.connect"), Warn("t.properties:3: zk.connect is ignored: a Kafka 0.7 name that Java ignores too; write zookeeper.connect")],
    ),
    ("groupid", C, "groupid=g", &[Gone("groupid"), Warn("t.properties:3: groupid is ignored: a Kafka 0.7 name that Java ignores too; write group.id")]),
    (
        "broker.list",
        P,
        "broker.list=0:h:9092",
        &[Gone("broker.list"), Warn("t.properties:2: broker.list is ignored: a Kafka 0.7 name that Java ignores too; write bootstrap.servers")],
    ),
    (
        "fetch.size",
        C,
        "fetch.size=1048576",
        &[Gone("fetch.size"), Warn("t.properties:3: fetch.size is ignored: a Kafka 0.7 name that Java ignores too; write max.partition.fetch.bytes")],
    ),
    // §2 0.8 producer
    ("metadata.broker.list", P, "metadata.broker.list=h:2", &[Set("metadata.broker.list", "h:2"), Gone("bootstrap.servers")]),
    ("retry.backoff.ms", P, "retry.backoff.ms=100", &[Set("retry.backoff.ms", "100")]),
    ("producer.type", P, "producer.type=async", &[Gone("producer.type"), Note("producer.type=async")]),
    (
        "request.required.acks",
        P,
        "request.required.acks=0",
        &[Set("request.required.acks", "0"), Gone("acks"), Warn("Property request.required.acks is overridden to 0")],
    ),
    ("request.required.acks", P, "request.required.acks=-1", &[Set("request.required.acks", "-1"), Set("enable.idempotence", "true")]),
    ("compression.codec", P, "compression.codec=3", &[Set("compression.codec", "lz4")]),
    ("compression.codec", P, "compression.codec=0", &[Set("compression.codec", "none")]),
    ("compression.codec", P, "compression.codec=7", &[Refused("compression.codec='7' is not a codec")]),
    (
        "compressed.topics",
        P,
        "compressed.topics=a,b",
        &[Gone("compressed.topics"), Warn("compressed.topics is ignored: the producer's compression applies to every topic")],
    ),
    ("queue.buffering.max.ms", P, "queue.buffering.max.ms=100", &[Set("queue.buffering.max.ms", "100"), Gone("linger.ms")]),
    ("queue.buffering.max.messages", P, "queue.buffering.max.messages=5000", &[Set("queue.buffering.max.messages", "5000")]),
    ("batch.num.messages", P, "batch.num.messages=500", &[Set("batch.num.messages", "500")]),
    (
        "queue.enqueue.timeout.ms",
        P,
        "queue.enqueue.timeout.ms=0",
        &[Gone("queue.enqueue.timeout.ms"), Warn("queue.enqueue.timeout.ms=0 would drop records on a full queue; this mirror never drops and waits instead")],
    ),
    ("queue.enqueue.timeout.ms", P, "queue.enqueue.timeout.ms=-1", &[Gone("queue.enqueue.timeout.ms")]),
    (
        "message.send.max.retries",
        P,
        "message.send.max.retries=3",
        &[
            Set("message.send.max.retries", "3"),
            Gone("retries"),
            Warn("message.send.max.retries=3: a record still failing after 3 retries is a send failure, which stops the mirror"),
        ],
    ),
    ("topic.metadata.refresh.interval.ms", P, "topic.metadata.refresh.interval.ms=-5", &[Set("topic.metadata.refresh.interval.ms", "-1")]),
    (
        "topic.metadata.refresh.interval.ms",
        P,
        "topic.metadata.refresh.interval.ms=0",
        &[Set("topic.metadata.refresh.interval.ms", "1000"), Note("topic.metadata.refresh.interval.ms=0 is read as 1000")],
    ),
    ("serializer.class", P, "serializer.class=kafka.serializer.StringEncoder", &[Gone("serializer.class"), Note("records are copied as raw bytes")]),
    (
        "key.serializer.class",
        P,
        "key.serializer.class=kafka.serializer.StringEncoder",
        &[Gone("key.serializer.class"), Note("records are copied as raw bytes")],
    ),
    ("partitioner.class", P, "partitioner.class=kafka.producer.DefaultPartitioner", &[Set("partitioner", "random")]),
    (
        "partitioner.class",
        P,
        "partitioner.class=kafka.producer.ByteArrayPartitioner",
        &[Set("partitioner", "murmur2_random"), Note("ByteArrayPartitioner: keyed records go to abs(Arrays.hashCode(key))")],
    ),
];

/// The keys of the mapping's tables §1 (Common, Producer, Consumer) and §2
/// that no rule of the translation names: librdkafka takes them under their
/// own name. Copied from the document by hand; the rest of the mapping is
/// the rule table itself.
const PASSED_KEYS: &[&str] = &[
    "bootstrap.servers",
    "client.rack",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
    "connections.max.idle.ms",
    "socket.connection.setup.timeout.ms",
    "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms",
    "enable.metrics.push",
    "acks",
    "retries",
    "delivery.timeout.ms",
    "linger.ms",
    "compression.type",
    "max.in.flight.requests.per.connection",
    "enable.idempotence",
    "group.id",
    "group.instance.id",
    "group.protocol",
    "group.remote.assignor",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "fetch.min.bytes",
    "fetch.max.bytes",
    "max.partition.fetch.bytes",
    "isolation.level",
    "check.crcs",
    "allow.auto.create.topics",
    "socket.timeout.ms",
    "socket.receive.buffer.bytes",
    "fetch.message.max.bytes",
    "fetch.wait.max.ms",
    "metadata.broker.list",
    "request.required.acks",
    "queue.buffering.max.ms",
    "queue.buffering.max.messages",
    "batch.num.messages",
];

/// Every key of the mapping (SSL/SASL rows and `security.protocol` aside):
/// the rule table's and the passed ones.
fn documented_keys() -> Vec<&'static str> {
    let mut keys: Vec<&str> = translate::rule_keys().map(|(k, _)| k).chain(PASSED_KEYS.iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn base(role: Role) -> &'static str {
    match role {
        Role::Consumer => "bootstrap.servers=h:1\ngroup.id=g\n",
        Role::Producer | Role::Admin => "bootstrap.servers=h:1\n",
    }
}

#[test]
fn every_key_of_both_tables() {
    let mut failures = Vec::new();
    for (key, role, lines, wants) in TABLE {
        let mut text = base(*role).to_string();
        // A producer's broker list replaces the minimal one (two names, one setting).
        if lines.starts_with("metadata.broker.list") {
            text.clear();
        }
        text.push_str(lines);
        text.push('\n');
        let got = translate(*role, &text);
        for w in *wants {
            let ok = match (w, &got) {
                (Refused(msg), Err(e)) => e.contains(msg),
                (Refused(_), Ok(_)) => false,
                (_, Err(_)) => false,
                (Set(k, v), Ok(s)) => s.get(k) == Some(v),
                (Gone(k), Ok(s)) => s.get(k).is_none(),
                (Warn(t), Ok(s)) => has(&s.warnings, t),
                (Note(t), Ok(s)) => has(&s.notices, t),
            };
            if !ok {
                let what = match w {
                    Set(k, v) => format!("{k}={v}"),
                    Gone(k) => format!("{k} absent"),
                    Warn(t) => format!("warning '{t}'"),
                    Note(t) => format!("note '{t}'"),
                    Refused(t) => format!("error '{t}'"),
                };
                let shown = match &got {
                    Ok(s) => format!("{:?}\nwarnings {:?}\nnotes {:?}", map(s), s.warnings, s.notices),
                    Err(e) => format!("error: {e}"),
                };
                failures.push(format!("{key} ({role:?}, {lines:?}): expected {what}; got {shown}"));
            }
        }
        // Whatever is emitted must be something librdkafka takes: the
        // consumer or producer is built from exactly this map.
        if let Ok(s) = &got {
            let created = match role {
                Role::Producer | Role::Admin => s.client_config().create::<rdkafka::producer::BaseProducer>().map(drop),
                Role::Consumer => s.client_config().create::<rdkafka::consumer::BaseConsumer>().map(drop),
            };
            if let Err(e) = created {
                failures.push(format!("{key} ({role:?}, {lines:?}): librdkafka refuses the translated settings: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failing expectation(s):\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn every_documented_key_has_a_case() {
    let documented = documented_keys();
    let missing: Vec<&&str> = documented.iter().filter(|k| !TABLE.iter().any(|(t, _, _, _)| t == *k)).collect();
    assert!(missing.is_empty(), "keys of the mapping without a test case: {missing:?}");
    let undocumented: Vec<&str> = TABLE.iter().map(|(k, _, _, _)| *k).filter(|k| !documented.contains(k)).collect();
    assert!(undocumented.is_empty(), "cases for keys not in the documented list: {undocumented:?}");
    // A case for a role the rule does not apply to tests the pass-through instead.
    let untested: Vec<(&str, &[Role])> = translate::rule_keys().filter(|(k, roles)| !TABLE.iter().any(|(t, r, _, _)| t == k && roles.contains(r))).collect();
    assert!(untested.is_empty(), "rules without a case for a role they apply to: {untested:?}");
    // A rule's key listed as passed would be documented twice, once wrongly.
    let ruled: Vec<&str> = PASSED_KEYS.iter().copied().filter(|k| translate::rule_keys().any(|(r, _)| r == *k)).collect();
    assert!(ruled.is_empty(), "PASSED_KEYS has keys the rule table handles: {ruled:?}");
}

/// The per-key reference is config/README.md; the top README keeps only a
/// short list and may shrink.
#[test]
fn readme_lists_every_key() {
    let reference = std::fs::read_to_string(Path::new(ROOT).join("config").join("README.md")).unwrap();
    let missing: Vec<&str> = documented_keys().into_iter().filter(|k| !reference.contains(&format!("`{k}`"))).collect();
    assert!(missing.is_empty(), "config/README.md does not list these keys (as `key`): {missing:?}");
}
