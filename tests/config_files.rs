//! End-to-end: properties files users bring, against real brokers.
//!
//! A Kafka cluster in ZooKeeper mode (scripts/zk-cluster) mirrored with a
//! 0.8-era consumer file that names only `zookeeper.connect`; the
//! `--check-config` report for a file whose keys librdkafka would have read
//! differently (and proof that the check consumes and commits nothing);
//! the refusals that protect offsets.

mod common;

use common::*;

fn zk_bootstrap() -> String {
    std::env::var("MM_ZK_BOOTSTRAP").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "127.0.0.1:19196".into())
}

fn zk_connect() -> String {
    std::env::var("MM_ZK_CONNECT").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "127.0.0.1:12181/mm-kafka".into())
}

fn require_zk() {
    let b = zk_bootstrap();
    let c: rdkafka::consumer::BaseConsumer = rdkafka::ClientConfig::new().set("bootstrap.servers", &b).create().unwrap();
    use rdkafka::consumer::Consumer;
    if c.fetch_metadata(None, std::time::Duration::from_secs(15)).is_err() {
        panic!("no ZooKeeper-mode Kafka broker answers at {b}: start it with 'scripts/zk-cluster start' (scripts/test does it)");
    }
}

/// Every committed offset of the group on the topic, `None` where nothing is committed.
fn committed(bootstrap: &str, group: &str, topic: &str) -> Vec<Option<i64>> {
    committed_and_end(bootstrap, group, topic).into_iter().map(|(_, c, _)| c).collect()
}

#[test]
fn zookeeper_mode_cluster_mirrored_with_only_zookeeper_connect() {
    require_zk();
    require(&target());
    let topic = unique("zkmode");
    let group = unique("zkgroup");
    create_topic(&zk_bootstrap(), &topic, 3, &[]);
    create_topic(&target(), &topic, 5, &[]);
    let records = sample_records(&topic, 3000);
    produce(&zk_bootstrap(), &topic, &records);

    // A 0.8 consumer file: no broker list anywhere.
    let c = props(
        "consumer.properties",
        &[
            format!("zookeeper.connect={}", zk_connect()),
            "zookeeper.session.timeout.ms=6000".into(),
            format!("group.id={group}"),
            "auto.offset.reset=smallest".into(),
            "auto.commit.enable=true".into(),
            "auto.commit.interval.ms=1000".into(),
            "offsets.storage=kafka".into(),
        ],
    );
    // A 0.8 producer file, with the 0.8 MirrorMaker's key placement.
    let p = props(
        "producer.properties",
        &[
            format!("metadata.broker.list={}", target()),
            "request.required.acks=-1".into(),
            "producer.type=sync".into(),
            "compression.codec=2".into(),
            "partitioner.class=kafka.producer.ByteArrayPartitioner".into(),
            "serializer.class=kafka.serializer.DefaultEncoder".into(),
        ],
    );
    // The check finds the brokers the same way, and says what would run.
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", &topic, "--check-config"]);
    assert_eq!(code, 0, "{out}");
    for want in [
        format!("bootstrap.servers={}  # {}:1, translated from zookeeper.connect (/brokers/ids)", zk_bootstrap(), c.display()),
        format!("{topic} (3 partition(s)) -> {topic} on the target: exists with 5 partition(s)"),
        s("custom partitioner: keyed records to abs(Arrays.hashCode(key)) % partitions"),
        s("compression.codec=snappy"),
    ] {
        assert!(out.contains(&want), "--check-config output lacks '{want}':\n{out}");
    }
    assert_eq!(committed(&zk_bootstrap(), &group, &topic), vec![None, None, None], "--check-config committed offsets");

    let mut m = Mirror::start(&[s("--consumer.config"), path(&c), s("--producer.config"), path(&p), s("--whitelist"), topic.clone()]);
    m.wait_for_log("read the brokers from ZooKeeper (/brokers/ids): bootstrap.servers=");
    m.wait_for_log(&format!("bootstrap.servers={}", zk_bootstrap()));
    m.wait_for_log("committing acknowledged offsets every 1000 ms");
    wait_until("every record committed on the ZooKeeper-mode cluster", || all_committed(&zk_bootstrap(), &group, &topic));
    assert_eq!(m.stop(), 0, "{}", m.output());

    let landed = read_topic(&target(), &topic);
    let dups = assert_same_records(&topic, &records, &landed);
    let mut misplaced = 0;
    for l in &landed {
        if let Some(k) = &l.rec.key {
            if l.partition != mirror_maker::partitioner::byte_array_partition(k, 5) {
                misplaced += 1;
            }
        }
    }
    assert_eq!(misplaced, 0, "keyed records not where 0.8's ByteArrayPartitioner puts them");
    let (done, end) = progress(&zk_bootstrap(), &group, &topic);
    println!(
        "zookeeper-mode source: {} records, 0 missing, {dups} duplicates, {misplaced} misplaced keys, committed {done}/{end}",
        records.len()
    );
}

#[test]
fn unreachable_zookeeper_fails_with_the_line_to_add() {
    let port = free_port();
    let c = props("consumer.properties", &[format!("zookeeper.connect=127.0.0.1:{port}/kafka"), s("group.id=g")]);
    let p = producer_props("127.0.0.1:1");
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("{}:1: zookeeper.connect=127.0.0.1:{port}/kafka: cannot read the brokers from ZooKeeper", c.display())), "{out}");
    assert!(out.contains("add a line 'bootstrap.servers=<broker host:port,...>'"), "{out}");
}

#[test]
fn check_config_shows_what_runs_and_consumes_nothing() {
    require(&source());
    require(&target());
    let topic = unique("chk");
    let group = unique("chkgroup");
    create_topic(&source(), &topic, 2, &[]);
    produce(&source(), &topic, &sample_records(&topic, 50));
    // Passed raw to librdkafka these would change guarantees: auto-commit
    // stays on (auto.commit.enable is a silently ignored legacy key), acks=0,
    // and a full queue would have dropped records under 0.8.
    let c = props(
        "consumer.properties",
        &[format!("bootstrap.servers={}", source()), format!("group.id={group}"), s("auto.commit.enable=false"), s("fetch.wait.max.ms=0100")],
    );
    let p = props(
        "producer.properties",
        &[format!("metadata.broker.list={}", target()), s("request.required.acks=0"), s("queue.enqueue.timeout.ms=0"), s("sasl.password=hunter2")],
    );
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", &topic, "--check-config"]);
    println!("{out}");
    assert_eq!(code, 0, "{out}");
    let (cf, pf) = (c.display().to_string(), p.display().to_string());
    for want in [
        // auto.commit.enable=false: what runs, and where it came from.
        format!("enable.auto.commit=false  # {cf}:3, translated from auto.commit.enable=false"),
        format!("{cf}:3: auto.commit.enable=false: the client never auto-commits"),
        s("enable.auto.offset.store=false  # default: mirror-maker: commit only after the target acknowledged"),
        // Octal-looking numbers are read in base 10, as Java does.
        format!("fetch.wait.max.ms=100  # {cf}:4"),
        // request.required.acks=0 runs as written, with MM1's warning and no idempotence.
        format!("request.required.acks=0  # {pf}:2"),
        format!("WARNING: {pf}:2: Property request.required.acks is overridden to 0 - data loss or message reordering is possible"),
        s("max.in.flight.requests.per.connection=1  # default: MM1 default: keeps order without idempotence"),
        // queue.enqueue.timeout.ms=0 is not passed on: the mirror waits instead of dropping.
        format!("WARNING: {pf}:3: queue.enqueue.timeout.ms=0 would drop records on a full queue; this mirror never drops and waits instead"),
        s("delivery.timeout.ms=0  # default: MM1 no-loss default: retry forever"),
        s("sasl.password=[redacted]"),
        format!("source cluster at {}: reached; cluster id ", source()),
        format!("target cluster at {}: reached; cluster id ", target()),
        format!("    {topic} (2 partition(s)) -> {topic} on the target: does not exist yet"),
        s("RESULT: OK, a run would start (2 warning(s) above)"),
    ] {
        assert!(out.contains(&want), "--check-config output lacks '{want}':\n{out}");
    }
    assert!(!out.contains("hunter2"), "secret printed:\n{out}");
    assert!(!out.contains("queue.enqueue.timeout.ms=0  #") && !out.contains("auto.commit.enable=false  #"), "{out}");
    // Nothing consumed, nothing committed.
    let offs = committed(&source(), &group, &topic);
    assert_eq!(offs, vec![None, None], "--check-config committed offsets");
    assert_eq!(partitions_of(&target(), &topic), None, "--check-config created the target topic");
    println!("check-config: exit {code}, group {group} committed offsets {offs:?}");
}

#[test]
fn check_config_exits_one_and_lists_every_problem() {
    require(&source());
    let dead = free_port();
    let c = props("consumer.properties", &[format!("bootstrap.servers={}", source()), s("group.id=g"), s("offsets.storage=zookeeper"), s("sesion.timeout.ms=10")]);
    let p = props("producer.properties", &[format!("bootstrap.servers=127.0.0.1:{dead}"), s("socket.connection.setup.timeout.ms=1000")]);
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*", "--check-config"]);
    println!("{out}");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("cannot reach the target cluster at 127.0.0.1:{dead}")), "{out}");
    assert!(out.contains(&format!("{}:3: offsets.storage=zookeeper: the group's offsets kept in ZooKeeper are invisible", c.display())), "{out}");
    assert!(out.contains("RESULT: a run would NOT start: 2 problem(s)"), "{out}");

    // Accepting the loss turns the refusal into a warning naming the start point;
    // the typo is a warning with a suggestion.
    let p = producer_props(&target());
    let (code, out) = run_to_exit(&[
        "--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*", "--check-config", "--accept.zookeeper.offsets.loss",
    ]);
    println!("{out}");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("offsets.storage=zookeeper: the group's offsets in ZooKeeper are not read (--accept.zookeeper.offsets.loss)"), "{out}");
    assert!(out.contains("start from auto.offset.reset=earliest"), "{out}");
    assert!(out.contains(&format!("{}:4: unknown key 'sesion.timeout.ms' is ignored", c.display())) && out.contains("Did you mean 'session.timeout.ms'?"), "{out}");
}

#[test]
fn zookeeper_offsets_are_refused_before_anything_runs() {
    let c = props("consumer.properties", &[s("bootstrap.servers=127.0.0.1:1"), s("group.id=g"), s("offsets.storage=zookeeper")]);
    let p = producer_props("127.0.0.1:2");
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("or accept starting from auto.offset.reset with --accept.zookeeper.offsets.loss"), "{out}");
}
