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
#[ignore = "needs clusters and the ZooKeeper-mode cluster"]
fn zookeeper_mode_cluster_mirrored_with_only_zookeeper_connect() {
    require_clusters!();
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
            if l.partition != mirror_maker::plan::partitioner::byte_array_partition(k, 5) {
                misplaced += 1;
            }
        }
    }
    assert_eq!(misplaced, 0, "keyed records not where 0.8's ByteArrayPartitioner puts them");
    let (done, end) = progress(&zk_bootstrap(), &group, &topic);
    println!("zookeeper-mode source: {} records, 0 missing, {dups} duplicates, {misplaced} misplaced keys, committed {done}/{end}", records.len());
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
#[ignore = "needs clusters"]
fn check_config_shows_what_runs_and_consumes_nothing() {
    require_clusters!(source(), target());
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
        // Java does not use SASL keys on PLAINTEXT, so neither do we: named, with the fix.
        format!("WARNING: {pf}: security.protocol is not set (PLAINTEXT, the Java default), so these keys are not used"),
        s("sasl.password (line 4)"),
        format!("source cluster at {}: reached; cluster id ", source()),
        format!("target cluster at {}: reached; cluster id ", target()),
        format!("    {topic} (2 partition(s)) -> {topic} on the target: does not exist yet"),
        s("RESULT: OK, a run would start (3 warning(s) above)"),
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
#[ignore = "needs clusters"]
fn check_config_exits_one_and_lists_every_problem() {
    require_clusters!(source());
    let dead = free_port();
    let c =
        props("consumer.properties", &[format!("bootstrap.servers={}", source()), s("group.id=g"), s("offsets.storage=zookeeper"), s("sesion.timeout.ms=10")]);
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
        "--consumer.config",
        &path(&c),
        "--producer.config",
        &path(&p),
        "--whitelist",
        ".*",
        "--check-config",
        "--accept.zookeeper.offsets.loss",
    ]);
    println!("{out}");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("offsets.storage=zookeeper: the group's offsets in ZooKeeper are not read (--accept.zookeeper.offsets.loss)"), "{out}");
    assert!(out.contains("start from auto.offset.reset=earliest"), "{out}");
    assert!(
        out.contains(&format!("{}:4: unknown key 'sesion.timeout.ms' is ignored", c.display())) && out.contains("Did you mean 'session.timeout.ms'?"),
        "{out}"
    );
}

#[test]
fn zookeeper_offsets_are_refused_before_anything_runs() {
    let c = props("consumer.properties", &[s("bootstrap.servers=127.0.0.1:1"), s("group.id=g"), s("offsets.storage=zookeeper")]);
    let p = producer_props("127.0.0.1:2");
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("or accept starting from auto.offset.reset with --accept.zookeeper.offsets.loss"), "{out}");
}

/// Runs the binary once per argument list, 24 at a time (a check waits up
/// to 15 s for an unreachable cluster), and returns each exit status and output.
fn run_all(runs: Vec<Vec<String>>) -> Vec<(i32, String)> {
    let mut results = Vec::new();
    for batch in runs.chunks(24) {
        let children: Vec<_> = batch
            .iter()
            .map(|args| {
                std::process::Command::new(bin())
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("run mirror-maker")
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().expect("wait for mirror-maker");
            results.push((out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)));
        }
    }
    results
}

/// Values that reach each code path a secret can take: accepted as is, split
/// by spaces, shaped like a broken PEM block, with properties escapes.
fn canary_values(tag: &str) -> Vec<String> {
    vec![
        format!("CANARY-{tag}-plain"),
        format!("CANARY-{tag}-a CANARY-{tag}-b;"),
        format!("-----BEGIN PRIVATE KEY-----CANARY-{tag}-pem-----END CERTIFICATE-----"),
        format!("/nonexistent/CANARY-{tag}-\\\\esc\\u0041\\\"q"),
    ]
}

/// JAAS lines carrying a canary password in every form: unquoted, quoted,
/// split by a space, unterminated, with an escaped quote, without the
/// closing ';', and a bare value where the module name belongs.
fn jaas_forms(module: &str) -> Vec<String> {
    vec![
        format!("{module} required username=u password=CANARY-j-plain;"),
        format!("{module} required username=u password=\"CANARY-j-quoted\";"),
        format!("{module} required username=u password=CANARY-j-a CANARY-j-b;"),
        format!("{module} required username=u password=CANARY-j-a CANARY-j-b=x;"),
        format!("{module} required username=u password=\"CANARY-j-unterminated;"),
        format!("{module} required username=u password=\"CANARY-j-\\\\\"esc\";"),
        format!("{module} required username=u password=CANARY-j-nosemicolon"),
        format!("{module} required clientId=u clientSecret=CANARY-j-cs CANARY-j-b=x unsecuredLoginStringClaim_sub=u;"),
        s("CANARY-j-alone"),
        s("CANARY-j-a CANARY-j-b required;"),
    ]
}

fn check_args(consumer: &std::path::Path, producer: &std::path::Path) -> Vec<String> {
    vec![s("--consumer.config"), path(consumer), s("--producer.config"), path(producer), s("--whitelist"), s(".*"), s("--check-config")]
}

/// A canary in every key librdkafka's own table marks sensitive, every Java
/// password key and every Java key whose value becomes a sensitive one, in
/// every JAAS form, on a protocol that uses the key and on one that ignores
/// it: it never reaches the --check-config report, stdout or stderr,
/// whichever path the file takes (accepted, refused by the translation,
/// refused by librdkafka).
#[test]
fn secrets_never_reach_the_check_config_report() {
    let keys = mirror_maker::kafka::secrets::secret_keys();
    for k in ["sasl.oauthbearer.assertion.private.key.passphrase", "sasl.oauthbearer.assertion.private.key.pem", "sasl.password", "sasl.jaas.config"] {
        assert!(keys.iter().any(|x| x == k), "{k} is not among the secret keys {keys:?}");
    }
    // The producer file fails at once, so each check waits for one cluster only.
    let p = props("producer.properties", &[s("acks=all")]);
    let base = [s("bootstrap.servers=127.0.0.1:1"), s("group.id=g")];
    let mut runs = Vec::new();
    let mut what = Vec::new();
    for (n, key) in keys.iter().enumerate() {
        for (m, v) in canary_values(&format!("k{n}")).into_iter().enumerate() {
            let lines = [&base[..], &[s("security.protocol=SASL_SSL"), s("sasl.mechanism=PLAIN"), format!("{key}={v}")]].concat();
            runs.push(check_args(&props("consumer.properties", &lines), &p));
            what.push(format!("{key} value {m} on SASL_SSL"));
        }
    }
    // On PLAINTEXT every one of them is unused, all in one file.
    let mut lines = base.to_vec();
    lines.extend(keys.iter().enumerate().map(|(n, k)| format!("{k}=CANARY-plaintext-{n}")));
    runs.push(check_args(&props("consumer.properties", &lines), &p));
    what.push(s("every key on PLAINTEXT"));
    for (module, mechanism) in [
        ("org.apache.kafka.common.security.plain.PlainLoginModule", "PLAIN"),
        ("org.apache.kafka.common.security.scram.ScramLoginModule", "SCRAM-SHA-512"),
        ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", "OAUTHBEARER"),
        ("com.example.CustomLoginModule", "PLAIN"),
    ] {
        for (m, jaas) in jaas_forms(module).into_iter().enumerate() {
            for (protocol, mech) in [("SASL_PLAINTEXT", mechanism), ("SASL_SSL", "SCRAM-SHA-256")] {
                let lines =
                    [&base[..], &[format!("security.protocol={protocol}"), format!("sasl.mechanism={mech}"), format!("sasl.jaas.config={jaas}")]].concat();
                runs.push(check_args(&props("consumer.properties", &lines), &p));
                what.push(format!("sasl.jaas.config form {m} with {module} on {protocol}, mechanism {mech}"));
            }
        }
    }
    let results = run_all(runs);
    for ((code, out), what) in results.iter().zip(&what) {
        assert!(!out.contains("CANARY"), "{what}: a secret reached the output (exit {code}):\n{out}");
        assert!(out.contains("RESULT: a run would NOT start"), "{what}: no check report (exit {code}):\n{out}");
    }
    // The redaction is seen, not just the absence: accepted secrets show as such.
    assert!(results.iter().any(|(_, out)| out.contains("sasl.password=[redacted]")), "no accepted secret in any report");
    println!("{} --check-config runs, {} secret keys, no canary in any output", results.len(), keys.len());
}

/// The same secrets in a running mirror (no cluster to reach): neither
/// stderr, the --log.file written at debug level (librdkafka's own
/// configuration dump included) nor the /metrics page shows one.
#[test]
fn secrets_never_reach_the_log_file_or_metrics() {
    let keys = mirror_maker::kafka::secrets::secret_keys();
    let dir = std::env::temp_dir().join(unique("mm-secret-run"));
    std::fs::create_dir_all(&dir).unwrap();
    // SASL_PLAINTEXT with PLAIN: the client is created whatever the sasl.*
    // canaries say, and the ssl.* ones are the unused keys of that protocol.
    let mut lines =
        vec![s("bootstrap.servers=127.0.0.1:1"), s("group.id=g"), s("security.protocol=SASL_PLAINTEXT"), s("sasl.mechanism=PLAIN"), s("debug=conf,security")];
    // Keys this librdkafka build refuses (OIDC without libcurl) would stop the
    // start; their refusals are covered by the --check-config test.
    let refused = |k: &str| {
        use rdkafka::bindings as rd;
        let (k, v) = (std::ffi::CString::new(k).unwrap(), std::ffi::CString::new("CANARY").unwrap());
        let mut err = [0 as std::os::raw::c_char; 512];
        // SAFETY: a scratch conf object, destroyed below; NUL-terminated strings.
        unsafe {
            let conf = rd::rd_kafka_conf_new();
            let res = rd::rd_kafka_conf_set(conf, k.as_ptr(), v.as_ptr(), err.as_mut_ptr(), err.len());
            rd::rd_kafka_conf_destroy(conf);
            res == rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_INVALID
        }
    };
    let usable: Vec<&String> = keys.iter().filter(|k| k.as_str() != "sasl.jaas.config" && !refused(k)).collect();
    assert!(usable.len() >= 10, "{usable:?}");
    lines.extend(usable.iter().enumerate().map(|(n, k)| format!("{k}=CANARY-run-{n}")));
    lines.push(s("sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=CANARY-run-user password=CANARY-run-pw;"));
    let c = props("consumer.properties", &lines);
    // Another (dead) address than the source's, or the loop guard stops it first.
    let mut plines: Vec<String> = lines.iter().filter(|l| !l.starts_with("group.id=")).cloned().collect();
    plines[0] = s("bootstrap.servers=127.0.0.1:2");
    let p = props("producer.properties", &plines);
    let log = dir.join("mirror.log");
    let port = free_port();
    let mut child = std::process::Command::new(bin())
        .args([s("--consumer.config"), path(&c), s("--producer.config"), path(&p), s("--whitelist"), s(".*")])
        .args([s("--log.file"), path(&log), s("--metrics.port"), port.to_string()])
        .env("RUST_LOG", "trace,librdkafka=trace")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mirror-maker");
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    // The settings (debug), librdkafka's configuration dump and the first
    // failed connection are all written by then.
    wait_until("the mirror to report the unreachable target", || read_log().contains("cannot reach the target cluster") || child.try_wait().unwrap().is_some());
    assert!(child.try_wait().unwrap().is_none(), "the mirror stopped:\n{}", read_log());
    let page = {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to /metrics");
        write!(conn, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
        let mut page = String::new();
        conn.read_to_string(&mut page).unwrap();
        page
    };
    let pid = child.id().to_string();
    std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let logged = read_log();
    assert!(page.starts_with("HTTP/1.1 200 OK") && page.contains("mirror_maker_"), "{page}");
    assert!(logged.contains("sasl.password=[redacted]"), "the settings were not logged:\n{logged}");
    assert!(logged.contains("CONF"), "librdkafka's configuration dump was not logged:\n{logged}");
    for (name, text) in [("--log.file", &logged), ("stderr", &stderr), ("/metrics", &page)] {
        assert!(!text.contains("CANARY"), "a secret reached {name}:\n{text}");
    }
    println!("run: {} log lines, {} metrics lines, no canary", logged.lines().count(), page.lines().count());
}
