//! Shared helpers for the end-to-end tests: real clusters, the real binary.
//!
//! The clusters are started by `scripts/clusters start` (scripts/test does
//! it); their addresses come from MM_SOURCE_BOOTSTRAP, MM_TARGET_BOOTSTRAP
//! and MM_EXTRA_BOOTSTRAP. A test that needs them carries
//! `#[ignore = "needs clusters"]` (or a reason naming what else it needs),
//! so a plain `cargo test` reports it as ignored instead of passing it
//! unrun, and starts with [`require_clusters!`], which fails it with the fix
//! when it is run (`-- --include-ignored`) without the addresses, and when a
//! cluster given does not answer. scripts/test runs every test that way and
//! fails if any was still ignored; tests/marks.rs fails when a test that
//! needs clusters lacks the mark. To run one file against running clusters:
//! `scripts/test --test mirror`, or, with the clusters kept running,
//! `eval "$(scripts/clusters start | sed 's/^/export MM_/')"` and then
//! `cargo test --release --test mirror -- --include-ignored`. Every test
//! uses topic and group names of its own, so tests can share the clusters
//! and run in parallel. Waits are conditions with generous deadlines, never
//! fixed sleeps.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

/// The Connect tests' worker files and connector configs.
pub mod connect;

pub const DEADLINE: Duration = Duration::from_secs(120);

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
}

pub fn source() -> String {
    env_or("MM_SOURCE_BOOTSTRAP", "127.0.0.1:19092")
}

pub fn target() -> String {
    env_or("MM_TARGET_BOOTSTRAP", "127.0.0.1:29092")
}

pub fn extra() -> String {
    env_or("MM_EXTRA_BOOTSTRAP", "127.0.0.1:39092")
}

/// The variables scripts/test and scripts/chaos export with the test
/// clusters' addresses.
const CLUSTER_VARS: [&str; 3] = ["MM_SOURCE_BOOTSTRAP", "MM_TARGET_BOOTSTRAP", "MM_EXTRA_BOOTSTRAP"];

/// Whether this run was given the test clusters: any of [`CLUSTER_VARS`] set.
pub fn clusters_given() -> bool {
    CLUSTER_VARS.iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// Fails the test with the fix when the run was not given the test
/// clusters: such a test is `#[ignore]`d, so it only runs when asked to
/// (`--include-ignored`), and then it must not pass without having run.
/// Without this check it would fall back to the default addresses, which may
/// be another run's clusters. The panic names the test's line, not this one.
#[track_caller]
pub fn require_clusters_given() {
    if !clusters_given() {
        let (vars, file) = (CLUSTER_VARS.join(", "), env!("CARGO_CRATE_NAME"));
        panic!(
            "this test needs the test clusters, and none of {vars} is set: run it with 'scripts/test --test {file}', or start them with eval \"$(scripts/clusters start | sed 's/^/export MM_/')\" and run it again (cargo test --release --test {file} -- --include-ignored)"
        );
    }
}

/// The first line of a test that needs the test clusters (and so carries
/// `#[ignore = "needs clusters"]`): fails the test when the run was not
/// given them ([`require_clusters_given`]), then [`require`]s each bootstrap
/// listed, so a cluster that was given but does not answer fails it too.
macro_rules! require_clusters {
    ($($bootstrap:expr),* $(,)?) => {
        $crate::common::require_clusters_given();
        $($crate::common::require(&$bootstrap);)*
    };
}
pub(crate) use require_clusters;

/// Fails the test with the fix when a cluster is not up.
pub fn require(bootstrap: &str) {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    if c.fetch_metadata(None, Duration::from_secs(15)).is_err() {
        panic!("no Kafka broker answers at {bootstrap}: start the test clusters with 'scripts/clusters start' (or run all tests with 'scripts/test')");
    }
}

/// A name no other test (or earlier run) uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() % 1_000_000_000;
    format!("{prefix}-{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Runs a future to completion on this thread: the library's own, which
/// waits for the admin client's futures without an async runtime.
pub use mirror_maker::kafka::admin::block_on;

pub fn create_topic(bootstrap: &str, name: &str, partitions: i32, configs: &[(&str, &str)]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let mut t = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
    for (k, v) in configs {
        t = t.set(k, v);
    }
    let res = block_on(admin.create_topics(&[t], &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))))).unwrap();
    for r in res {
        r.unwrap_or_else(|(t, e)| panic!("create topic {t} on {bootstrap}: {e}"));
    }
    wait_until("topic metadata", || partitions_of(bootstrap, name) == Some(partitions as usize));
}

/// Grows a topic to `n` partitions and waits until its metadata says so.
pub fn add_partitions(bootstrap: &str, topic: &str, n: usize) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let res = block_on(admin.create_partitions(&[rdkafka::admin::NewPartitions::new(topic, n)], &AdminOptions::new())).unwrap();
    for r in res {
        r.unwrap_or_else(|(t, e)| panic!("add partitions to {t}: {e}"));
    }
    wait_until("partitions added", || partitions_of(bootstrap, topic) == Some(n));
}

pub fn partitions_of(bootstrap: &str, topic: &str) -> Option<usize> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let md = c.fetch_metadata(Some(topic), Duration::from_secs(10)).ok()?;
    md.topics().iter().find(|t| t.name() == topic).filter(|t| t.error().is_none() && !t.partitions().is_empty()).map(|t| t.partitions().len())
}

pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out after {DEADLINE:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A record as the tests write and read it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rec {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Vec<u8>)>,
    pub timestamp: Option<i64>,
}

impl Rec {
    pub fn seq(&self) -> Option<u64> {
        self.headers.iter().find(|(k, _)| k == "seq").and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
    }
}

/// Keyed, unkeyed and tombstone records with headers and explicit timestamps.
/// Timestamps are recent (an hour ago onwards): older ones would fall to the
/// brokers' 7-day retention and vanish mid-test.
pub fn sample_records(topic: &str, n: usize) -> Vec<Rec> {
    let base = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64 - 3_600_000;
    (0..n)
        .map(|i| Rec {
            key: (i % 5 != 4).then(|| format!("key-{}", i % 23).into_bytes()),
            value: (i % 17 != 16).then(|| format!("{topic}:{i}:{}", "x".repeat(i % 200)).into_bytes()),
            headers: vec![("seq".into(), i.to_string().into_bytes()), ("h2".into(), vec![0, 1, 2, (i % 256) as u8])],
            timestamp: Some(base + i as i64),
        })
        .collect()
}

pub fn produce(bootstrap: &str, topic: &str, records: &[Rec]) {
    produce_to(bootstrap, topic, None, records)
}

pub fn produce_to(bootstrap: &str, topic: &str, partition: Option<i32>, records: &[Rec]) {
    produce_many(bootstrap, &[(topic, partition, records)])
}

/// Writes each (topic, partition or the partitioner, records) with one
/// producer: one per topic would spend most of a many-topic test starting
/// producers.
pub fn produce_many(bootstrap: &str, batches: &[(&str, Option<i32>, &[Rec])]) {
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("partitioner", "murmur2_random")
        .set("enable.idempotence", "true")
        .set("message.max.bytes", "10000000")
        .create()
        .unwrap();
    for (topic, partition, records) in batches {
        for r in *records {
            let mut h = OwnedHeaders::new();
            for (k, v) in &r.headers {
                h = h.insert(Header { key: k, value: Some(v) });
            }
            let mut rec: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic).headers(h);
            if let Some(ts) = r.timestamp {
                rec = rec.timestamp(ts);
            }
            if let Some(p) = partition {
                rec = rec.partition(*p);
            }
            if let Some(k) = &r.key {
                rec = rec.key(k.as_slice());
            }
            if let Some(v) = &r.value {
                rec = rec.payload(v.as_slice());
            }
            let mut rec = rec;
            loop {
                match p.send(rec) {
                    Ok(()) => break,
                    Err((e, back)) => {
                        assert!(matches!(e, rdkafka::error::KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull)), "produce: {e}");
                        rec = back;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
        }
    }
    p.flush(Duration::from_secs(120)).expect("flush test records");
}

/// A record read back, with where it landed.
#[derive(Debug, Clone)]
pub struct Landed {
    pub partition: i32,
    pub offset: i64,
    pub rec: Rec,
}

/// Reads a topic from the beginning up to the end offsets it has now, on
/// every partition (the tests read after the mirror has stopped).
/// A partition's (low, high) watermarks, asked again while the broker
/// answers with a passing error (a topic just created answers
/// NotLeaderForPartition until its leader is elected); panics with the
/// last error after DEADLINE.
pub fn watermarks<C: rdkafka::consumer::ConsumerContext>(c: &BaseConsumer<C>, topic: &str, partition: i32) -> (i64, i64) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        match c.fetch_watermarks(topic, partition, Duration::from_secs(15)) {
            Ok(w) => return w,
            Err(e) if Instant::now() < deadline => {
                eprintln!("watermarks of {topic}-{partition}: {e}; asking again");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => panic!("watermarks of {topic}-{partition}: {e} (for {DEADLINE:?})"),
        }
    }
}

/// A record read from a topic, as the tests compare it.
fn landed(m: &rdkafka::message::BorrowedMessage<'_>) -> Landed {
    let headers = m.headers().map(|h| h.iter().map(|x| (x.key.to_string(), x.value.unwrap_or_default().to_vec())).collect()).unwrap_or_default();
    Landed {
        partition: m.partition(),
        offset: m.offset(),
        rec: Rec { key: m.key().map(<[u8]>::to_vec), value: m.payload().map(<[u8]>::to_vec), headers, timestamp: m.timestamp().to_millis() },
    }
}

/// A consumer that reads with `isolation`, reporting each partition's end
/// when `eof`; in a group of its own, never committing.
fn reader(bootstrap: &str, isolation: &str, eof: bool) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("reader"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", isolation)
        .set("enable.partition.eof", eof.to_string())
        .create()
        .unwrap()
}

pub fn read_topic(bootstrap: &str, topic: &str) -> Vec<Landed> {
    let parts = partitions_of(bootstrap, topic).unwrap_or(0);
    let mut out = Vec::new();
    if parts == 0 {
        return out;
    }
    let c = reader(bootstrap, "read_uncommitted", false);
    let mut list = TopicPartitionList::new();
    let mut remaining: HashMap<i32, i64> = HashMap::new();
    for p in 0..parts as i32 {
        list.add_partition_offset(topic, p, Offset::Beginning).unwrap();
        let (low, high) = watermarks(&c, topic, p);
        if high > low {
            remaining.insert(p, high);
        }
    }
    c.assign(&list).unwrap();
    let deadline = Instant::now() + DEADLINE;
    while !remaining.is_empty() {
        assert!(Instant::now() < deadline, "{topic}: could not read up to the end offsets; partitions left: {remaining:?}");
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            if remaining.get(&m.partition()).is_some_and(|end| m.offset() + 1 >= *end) {
                remaining.remove(&m.partition());
            }
            out.push(landed(&m));
        }
    }
    out
}

/// The group's committed offset and the end offset, per partition.
pub fn committed_and_end(bootstrap: &str, group: &str, topic: &str) -> Vec<(i32, Option<i64>, i64)> {
    let parts = partitions_of(bootstrap, topic).expect("topic exists");
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).set("group.id", group).create().unwrap();
    let mut list = TopicPartitionList::new();
    for p in 0..parts as i32 {
        list.add_partition(topic, p);
    }
    // The group coordinator may still be loading right after a (re)start:
    // NotCoordinator and the like are retried until the deadline.
    let deadline = Instant::now() + DEADLINE;
    let committed = loop {
        match c.committed_offsets(list.clone(), Duration::from_secs(15)) {
            Ok(c) => break c,
            Err(e) => {
                assert!(Instant::now() < deadline, "read committed offsets of {group}: {e}");
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    };
    committed
        .elements()
        .iter()
        .map(|e| {
            let (_, high) = watermarks(&c, topic, e.partition());
            let off = match e.offset() {
                Offset::Offset(o) => Some(o),
                _ => None,
            };
            (e.partition(), off, high)
        })
        .collect()
}

/// Checks every expected record arrived (by seq) exactly as the source
/// wrote it: key, value, headers and timestamp, nothing added (the default
/// writes no provenance header). Returns the number of duplicates
/// (at-least-once redelivery).
pub fn assert_same_records(topic: &str, expected: &[Rec], landed: &[Landed]) -> usize {
    let landed: Vec<Rec> = landed.iter().map(|l| l.rec.clone()).collect();
    let mut by_seq: HashMap<u64, &Rec> = HashMap::new();
    let mut dups = 0;
    for rec in &landed {
        let seq = rec.seq().unwrap_or_else(|| panic!("{topic}: record without seq header: {rec:?}"));
        if let Some(prev) = by_seq.insert(seq, rec) {
            assert_eq!(prev, rec, "{topic}: duplicate of seq {seq} differs");
            dups += 1;
        }
    }
    let missing: Vec<u64> = (0..expected.len() as u64).filter(|s| !by_seq.contains_key(s)).collect();
    assert!(missing.is_empty(), "{topic}: {} of {} records missing, e.g. seq {:?}", missing.len(), expected.len(), &missing[..missing.len().min(10)]);
    assert_eq!(by_seq.len(), expected.len(), "{topic}: unexpected extra records");
    for (i, e) in expected.iter().enumerate() {
        assert_eq!(by_seq[&(i as u64)], e, "{topic}: record {i} differs");
    }
    dups
}

/// [`assert_same_records`] for a mirror run with `--provenance.header
/// true`: the header it adds on purpose is left out of the comparison.
pub fn assert_same_records_but_provenance(topic: &str, expected: &[Rec], landed: &[Landed]) -> usize {
    let stripped: Vec<Landed> = landed.iter().map(|l| Landed { rec: without_provenance(&l.rec), ..l.clone() }).collect();
    assert_same_records(topic, expected, &stripped)
}

pub const PROVENANCE_HEADER: &str = "mirror-maker.source-cluster";

/// The record as written at the source: the mirror's provenance header removed.
pub fn without_provenance(r: &Rec) -> Rec {
    Rec { headers: r.headers.iter().filter(|(k, _)| k != PROVENANCE_HEADER).cloned().collect(), ..r.clone() }
}

/// The values of the record's provenance headers, in order.
pub fn provenance_of(r: &Rec) -> Vec<String> {
    r.headers.iter().filter(|(k, _)| k == PROVENANCE_HEADER).map(|(_, v)| String::from_utf8_lossy(v).into_owned()).collect()
}

/// Every record of `topic` a `read_committed` consumer sees, as a consumer
/// of an exactly-once mirror's target reads it: records of aborted
/// transactions left out, read up to the last stable offset of each
/// partition (its end once no transaction is open). Transaction markers
/// take offsets of their own, so the end is found by librdkafka's
/// partition-EOF event rather than by offset.
/// Whether no transaction is open on any partition of `topic`: the last
/// stable offset (what a read_committed client is told is the end) equals
/// the high watermark. A process killed with a transaction open leaves it
/// open until the coordinator aborts it (transaction.timeout.ms, then its
/// next cleanup pass), and until then read_committed readers stop short of
/// everything after it, committed or not.
pub fn no_open_transaction(bootstrap: &str, topic: &str) -> bool {
    let parts = partitions_of(bootstrap, topic).unwrap_or(0) as i32;
    let (committed, uncommitted) = (reader(bootstrap, "read_committed", false), reader(bootstrap, "read_uncommitted", false));
    (0..parts).all(|p| watermarks(&committed, topic, p).1 == watermarks(&uncommitted, topic, p).1)
}

pub fn read_topic_committed(bootstrap: &str, topic: &str) -> Vec<Landed> {
    let parts = partitions_of(bootstrap, topic).unwrap_or(0);
    let mut out = Vec::new();
    if parts == 0 {
        return out;
    }
    let c = reader(bootstrap, "read_committed", true);
    let mut list = TopicPartitionList::new();
    for p in 0..parts as i32 {
        list.add_partition_offset(topic, p, Offset::Beginning).unwrap();
    }
    c.assign(&list).unwrap();
    let mut remaining: std::collections::HashSet<i32> = (0..parts as i32).collect();
    let deadline = Instant::now() + DEADLINE;
    while !remaining.is_empty() {
        assert!(Instant::now() < deadline, "{topic}: read_committed could not reach the end of partitions {remaining:?}");
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => out.push(landed(&m)),
            Some(Err(rdkafka::error::KafkaError::PartitionEOF(p))) => {
                remaining.remove(&p);
            }
            _ => {}
        }
    }
    out
}

/// A pseudo-random number in [lo, hi) from the clock (no extra crate).
pub fn jitter(lo: u64, hi: u64) -> u64 {
    let n = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    lo + (n.wrapping_mul(6364136223846793005) >> 33) % (hi - lo)
}

/// A properties file in a temporary directory.
pub fn props(name: &str, lines: &[String]) -> PathBuf {
    let dir = std::env::temp_dir().join(unique("mm-e2e"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

pub fn consumer_props(bootstrap: &str, group: &str) -> PathBuf {
    props("consumer.properties", &[format!("bootstrap.servers={bootstrap}"), format!("group.id={group}"), "auto.offset.reset=earliest".into()])
}

pub fn producer_props(bootstrap: &str) -> PathBuf {
    props("producer.properties", &[format!("bootstrap.servers={bootstrap}")])
}

/// The usual command line: one source group, one target, one topic pattern,
/// then `extra` options.
pub fn mirror_args(from: &str, group: &str, to: &str, whitelist: &str, extra: &[&str]) -> Vec<String> {
    let mut args =
        vec![s("--consumer.config"), path(&consumer_props(from, group)), s("--producer.config"), path(&producer_props(to)), s("--whitelist"), s(whitelist)];
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// Whether the group has committed the end offset of every partition.
pub fn all_committed(bootstrap: &str, group: &str, topic: &str) -> bool {
    committed_and_end(bootstrap, group, topic).iter().all(|(_, c, e)| *c == Some(*e))
}

/// The real binary, run as a user would; its log goes to a file.
pub struct Mirror {
    child: Child,
    pub log: PathBuf,
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mirror-maker")
}

impl Mirror {
    pub fn start(args: &[String]) -> Mirror {
        Mirror::start_with_env(args, &[])
    }

    /// [`Mirror::start`] with more environment (KRB5_CONFIG for Kerberos).
    pub fn start_with_env(args: &[String], env: &[(&str, &str)]) -> Mirror {
        let log = std::env::temp_dir().join(format!("{}.log", unique("mirror")));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(bin())
            .args(args)
            .envs(env.iter().copied())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("start mirror-maker");
        Mirror { child, log }
    }

    pub fn output(&self) -> String {
        let mut s = String::new();
        std::fs::File::open(&self.log).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    pub fn wait_for_log(&self, needle: &str) {
        wait_until(&format!("'{needle}' in the mirror's log {}", self.log.display()), || self.output().contains(needle));
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill").args([&format!("-{sig}"), &self.child.id().to_string()]).status().unwrap().success();
        assert!(ok, "kill -{sig}");
    }

    /// Waits for the exit status (panics after the deadline).
    pub fn wait(&mut self) -> i32 {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                return st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
            }
            assert!(Instant::now() < deadline, "mirror did not exit; log:\n{}", self.output());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Still running?
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Peak resident memory so far (VmHWM), in KiB.
    pub fn peak_rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()).unwrap_or(0)
    }

    /// SIGTERM, then the exit status.
    pub fn stop(&mut self) -> i32 {
        self.signal("TERM");
        self.wait()
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary to completion (for errors that stop it at once).
pub fn run_to_exit(args: &[&str]) -> (i32, String) {
    let out = Command::new(bin()).args(args).stdin(Stdio::null()).output().expect("run mirror-maker");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

pub fn s(v: &str) -> String {
    v.to_string()
}

pub fn path(p: &std::path::Path) -> String {
    p.display().to_string()
}

/// Stops, starts or restarts one broker of the test clusters, keeping its data.
pub fn broker(action: &str, name: &str) {
    broker_with(action, name, &[]);
}

/// The same, with environment (e.g. MM_CLUSTER_EXTRA_PROPS_EXTRA) for the broker's config.
pub fn broker_with(action: &str, name: &str, env: &[(&str, &str)]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/clusters");
    let mut cmd = Command::new(script);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args([action, name]).stdin(Stdio::null()).output().expect("run scripts/clusters");
    assert!(out.status.success(), "scripts/clusters {action} {name}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Sum of the group's committed offsets and of the end offsets over a topic.
pub fn progress(bootstrap: &str, group: &str, topic: &str) -> (i64, i64) {
    committed_and_end(bootstrap, group, topic).iter().fold((0, 0), |(c, e), (_, co, en)| (c + co.unwrap_or(0), e + en))
}

/// A port nothing listens on right now.
/// A port p with p..p+n all free on loopback right now.
pub fn free_run(n: u16) -> u16 {
    loop {
        let p = free_port();
        if p < 1024 || p > u16::MAX - n {
            continue;
        }
        if (p..p + n).all(|q| std::net::TcpListener::bind(("127.0.0.1", q)).is_ok()) {
            return p;
        }
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port()
}

/// One scrape of the mirror's Prometheus page.
#[derive(Debug)]
pub struct Scrape {
    /// Series as written, name plus labels (`a_total{topic="t"}`) -> value.
    pub series: HashMap<String, f64>,
}

impl Scrape {
    /// The sum over every series of the metric `name`, whatever its labels;
    /// None when the page has no series of it.
    pub fn sum(&self, name: &str) -> Option<f64> {
        let values: Vec<f64> = self.series.iter().filter(|(k, _)| k.split('{').next() == Some(name)).map(|(_, v)| *v).collect();
        (!values.is_empty()).then(|| values.iter().sum())
    }

    /// The series of `name` whose labels include every `label="value"` pair given.
    pub fn matching(&self, name: &str, labels: &[(&str, &str)]) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = self
            .series
            .iter()
            .filter(|(k, _)| k.split('{').next() == Some(name) && labels.iter().all(|(l, val)| k.contains(&format!("{l}=\"{val}\""))))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

/// GET /metrics from the mirror's endpoint.
pub fn scrape(port: u16) -> Scrape {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the metrics endpoint");
    write!(s, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut page = String::new();
    s.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    let series = page
        .lines()
        .filter(|l| l.starts_with("mirror_maker_"))
        .filter_map(|l| l.rsplit_once(' ').and_then(|(k, v)| Some((k.to_string(), v.parse().ok()?))))
        .collect();
    Scrape { series }
}

/// This host's address on its default route, if it has one: connecting a
/// UDP socket picks the source address without sending anything.
pub fn non_loopback_address() -> Option<std::net::IpAddr> {
    let sock = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    sock.connect("192.0.2.1:9").ok()?;
    let ip = sock.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

// ---------------------------------------------------------------------------
// MirrorMaker 2 (tests/mm2.rs): Java MM2 beside the binary's --mm2.config,
// and Kafka's own MirrorClient asked about the result.

/// A short id, unique per call, that is safe in a cluster alias and in topic
/// names (letters and digits only): MM2 aliases end up in topic names
/// (`A.t`), Connect group ids and internal topic names, so each test gets
/// aliases of its own and shares nothing with other tests on the clusters.
pub fn short_id() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let mix = (nanos as u64 % 1_000_000_000) ^ ((std::process::id() as u64) << 30);
    format!("{:x}{}", mix % 0xff_ffff, N.fetch_add(1, Ordering::Relaxed))
}

/// The lines every MM2 file of the tests has: single-broker clusters need
/// replication factor 1 for everything MM2 creates, and new topics and
/// groups are found within 5 s rather than MM2's 600 s default.
pub fn mm2_common_lines() -> Vec<String> {
    [
        "refresh.topics.interval.seconds = 5",
        // Java's 600 s would keep a group that commits after the start out
        // of the checkpoints for ten minutes (tests/checkpoints.rs tests the refresh itself).
        "refresh.groups.interval.seconds = 5",
        "replication.factor = 1",
        "checkpoints.topic.replication.factor = 1",
        "heartbeats.topic.replication.factor = 1",
        "offset-syncs.topic.replication.factor = 1",
        "offset.storage.replication.factor = 1",
        "status.storage.replication.factor = 1",
        "config.storage.replication.factor = 1",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect()
}

/// An MM2 file's lines for one flow `a->b` from the source to the target
/// test clusters, mirroring `topics`, then `extra` lines and the tests'
/// common lines.
pub fn mm2_flow_lines(a: &str, b: &str, topics: &str, extra: &[String]) -> Vec<String> {
    let mut lines = vec![
        format!("clusters = {a}, {b}"),
        format!("{a}.bootstrap.servers = {}", source()),
        format!("{b}.bootstrap.servers = {}", target()),
        format!("{a}->{b}.enabled = true"),
        format!("{a}->{b}.topics = {topics}"),
    ];
    lines.extend(extra.iter().cloned());
    lines.extend(mm2_common_lines());
    lines
}

/// Every topic of a cluster (a metadata request naming none, which creates none).
pub fn list_topics(bootstrap: &str) -> std::collections::BTreeSet<String> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let md = c.fetch_metadata(None, Duration::from_secs(15)).unwrap_or_else(|e| panic!("list topics of {bootstrap}: {e}"));
    md.topics().iter().filter(|t| t.error().is_none()).map(|t| t.name().to_string()).collect()
}

/// End offset of each partition (index = partition), or None when the topic
/// is not there (yet). Asks for the topic only once it is listed, so the
/// question creates nothing.
pub fn end_offsets(bootstrap: &str, topic: &str) -> Option<Vec<i64>> {
    if !list_topics(bootstrap).contains(topic) {
        return None;
    }
    let parts = partitions_of(bootstrap, topic)?;
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    (0..parts as i32).map(|p| c.fetch_watermarks(topic, p, Duration::from_secs(15)).ok().map(|(_, high)| high)).collect()
}

/// Records in the topic (sum of end offsets; the tests' topics are never trimmed), 0 when absent.
pub fn count_records(bootstrap: &str, topic: &str) -> i64 {
    end_offsets(bootstrap, topic).map_or(0, |v| v.iter().sum())
}

/// A topic's configs as the broker describes them: name -> (value, source).
pub fn describe_topic_configs(bootstrap: &str, topic: &str) -> std::collections::BTreeMap<String, (Option<String>, rdkafka::admin::ConfigSource)> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let res = block_on(
        admin.describe_configs(&[rdkafka::admin::ResourceSpecifier::Topic(topic)], &AdminOptions::new().request_timeout(Some(Duration::from_secs(30)))),
    )
    .unwrap_or_else(|e| panic!("describe configs of {topic} on {bootstrap}: {e}"));
    let resource = res.into_iter().next().expect("one result").unwrap_or_else(|e| panic!("describe configs of {topic} on {bootstrap}: {e:?}"));
    resource.entries.into_iter().map(|e| (e.name, (e.value, e.source))).collect()
}

/// The configs set on the topic itself (DYNAMIC_TOPIC_CONFIG): what MM2's
/// topic creation and config sync write; the rest is the broker's.
pub fn topic_level_configs(bootstrap: &str, topic: &str) -> std::collections::BTreeMap<String, String> {
    describe_topic_configs(bootstrap, topic)
        .into_iter()
        .filter(|(_, (_, src))| *src == rdkafka::admin::ConfigSource::DynamicTopic)
        .map(|(k, (v, _))| (k, v.unwrap_or_default()))
        .collect()
}

/// One topic config's effective value (whatever its source).
pub fn topic_config(bootstrap: &str, topic: &str, key: &str) -> Option<String> {
    describe_topic_configs(bootstrap, topic).remove(key).and_then(|(v, _)| v)
}

/// Each partition's records in offset order (index = partition).
pub fn records_by_partition(bootstrap: &str, topic: &str) -> Vec<Vec<Rec>> {
    let parts = partitions_of(bootstrap, topic).unwrap_or(0);
    let mut landed = read_topic(bootstrap, topic);
    landed.sort_by_key(|l| (l.partition, l.offset));
    let mut out = vec![Vec::new(); parts];
    for l in landed {
        out[l.partition as usize].push(l.rec);
    }
    out
}

/// Java MirrorMaker 2 in dedicated mode (scripts/java-mm2 FILE), its output
/// in a file. Dropped, it is killed.
pub struct JavaMm2 {
    child: Child,
    pub log: PathBuf,
    pub started: Instant,
}

impl JavaMm2 {
    pub fn start(file: &std::path::Path) -> JavaMm2 {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/java-mm2");
        let log = std::env::temp_dir().join(format!("{}.log", unique("java-mm2")));
        let out = std::fs::File::create(&log).unwrap();
        let started = Instant::now();
        let child = Command::new(script).arg(file).stdin(Stdio::null()).stdout(out.try_clone().unwrap()).stderr(out).spawn().expect("start scripts/java-mm2");
        JavaMm2 { child, log, started }
    }

    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// SIGTERM (the script execs the JVM, so this is the JVM), then the exit status.
    pub fn stop(&mut self) -> i32 {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                return st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return -1;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for JavaMm2 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// scripts/mirror-client/run ARGS: (exit status, stdout, stderr).
pub fn mirror_client(args: &[&str]) -> (i32, String, String) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/mirror-client/run");
    let out = Command::new(script).args(args).stdin(Stdio::null()).output().expect("run scripts/mirror-client/run");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// MirrorClient's view of a cluster (`run topology`): the probe's lines as
/// key -> value (`upstreamClusters` -> `A,B`, `replicationHops(A)` -> `1`, ...).
pub fn mirror_client_topology(bootstrap: &str, source_alias: &str, identity: bool) -> std::collections::BTreeMap<String, String> {
    let mut args = vec!["topology", bootstrap, source_alias];
    if identity {
        args.extend(["--policy", "identity"]);
    }
    let (rc, out, err) = mirror_client(&args);
    assert_eq!(rc, 0, "mirror-client topology {bootstrap}: {err}");
    out.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A heartbeat as Java's Heartbeat.deserializeRecord reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JavaHeartbeat {
    pub source: String,
    pub target: String,
    pub timestamp: i64,
}

/// Up to `n` records of `topic` decoded by Java (`run heartbeats`): Err with
/// the probe's complaint when any record does not decode.
pub fn java_heartbeats(bootstrap: &str, topic: &str, n: usize) -> Result<Vec<JavaHeartbeat>, String> {
    let (rc, out, err) = mirror_client(&["heartbeats", bootstrap, topic, &n.to_string()]);
    if rc != 0 {
        return Err(format!("exit {rc}: {err}"));
    }
    Ok(out
        .lines()
        .filter_map(|l| {
            let mut w = l.split(' ');
            Some(JavaHeartbeat { source: w.next()?.to_string(), target: w.next()?.to_string(), timestamp: w.next()?.parse().ok()? })
        })
        .collect())
}

/// Polls `cond` every half second until it holds; panics naming `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Deletes every topic of the cluster whose name contains `needle` (a test's
/// id): MM2 copies every heartbeats-like topic of a source whatever its
/// filter, each copy under a new prefix, so a test that leaves its copies
/// behind makes every later MM2 run copy more. Returns the names deleted.
pub fn delete_topics_containing(bootstrap: &str, needle: &str) -> Vec<String> {
    let doomed: Vec<String> = list_topics(bootstrap).into_iter().filter(|t| t.contains(needle)).collect();
    if doomed.is_empty() {
        return doomed;
    }
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let names: Vec<&str> = doomed.iter().map(String::as_str).collect();
    match block_on(admin.delete_topics(&names, &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))))) {
        Ok(results) => {
            for r in results {
                if let Err((t, e)) = r {
                    eprintln!("delete topic {t} on {bootstrap}: {e}");
                }
            }
        }
        Err(e) => eprintln!("delete topics on {bootstrap}: {e}"),
    }
    doomed
}

/// A member of `group` on `bootstrap`, subscribed to `topic` and polling
/// on a thread of its own until dropped, so the group stays active
/// (Stable) meanwhile; on drop it leaves at once.
pub struct ActiveMember {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ActiveMember {
    pub fn join(bootstrap: &str, group: &str, topic: &str) -> ActiveMember {
        let c = group_member(bootstrap, group, topic);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let _ = c.poll(Duration::from_millis(100));
            }
            // Leaves the group at once instead of after the session timeout.
            c.unsubscribe();
            let _ = c.poll(Duration::from_millis(100));
        });
        ActiveMember { stop, thread: Some(thread) }
    }
}

impl Drop for ActiveMember {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Every checkpoint in `topic` (partition 0 of the target) in log order,
/// decoded by our reader of MirrorMaker 2's format; none when the topic
/// does not exist yet.
pub fn read_checkpoints(topic: &str) -> Vec<mirror_maker::formats::Checkpoint> {
    if !list_topics(&target()).contains(topic) {
        return Vec::new();
    }
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", target()).set("group.id", unique("cp-read")).create().unwrap();
    let (_, high) = watermarks(&c, topic, 0);
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning).unwrap();
    c.assign(&tpl).unwrap();
    let mut out = Vec::new();
    wait_until("the checkpoints topic read to its end", || {
        while let Some(m) = c.poll(Duration::from_millis(500)) {
            let m = m.unwrap();
            let decoded = mirror_maker::formats::Checkpoint::decode(m.key().unwrap(), m.payload().unwrap());
            out.push(decoded.unwrap_or_else(|e| panic!("checkpoint at {}: {e}", m.offset())));
            if m.offset() + 1 >= high {
                return true;
            }
        }
        high == 0
    });
    out
}

/// A member of `group` subscribed to `topic` from its start, committing
/// only when told (as an application that commits what it processed).
pub fn group_member(bootstrap: &str, group: &str, topic: &str) -> BaseConsumer {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    c.subscribe(&[topic]).unwrap();
    c
}

/// `curl -s -X method [--data @file] url` with a JSON content type, as the
/// Connect guide's commands: (status, body).
pub fn curl(method: &str, url: &str, data: Option<&std::path::Path>) -> (u16, String) {
    let mut c = Command::new("curl");
    c.args(["-s", "-X", method, "-H", "Content-Type: application/json", "-w", "\n%{http_code}", url]);
    if let Some(d) = data {
        c.args(["--data", &format!("@{}", d.display())]);
    }
    let out = c.output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// A REST port of `range`, free now and never handed out again by this
/// test binary: tests run in parallel, and two picking the same free port
/// before either worker binds it would end with one worker refused and its
/// curls answered by the other test's worker. Each test file has a range of
/// its own (one per file: the next port is shared by every call), so files
/// run side by side never collide either.
pub fn rest_port(range: std::ops::Range<u16>) -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    loop {
        let n = NEXT.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| Some(n.max(range.start).saturating_add(1))).unwrap();
        let p = n.max(range.start);
        assert!(p < range.end, "no free port left in {}-{}", range.start, range.end - 1);
        if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
}

/// A Connect worker process started by one of `scripts/` (ours or Java's),
/// its output in a file; killed when dropped.
pub struct ConnectWorker {
    pub child: Child,
    pub log: PathBuf,
}

impl ConnectWorker {
    /// `scripts/<script> <args...>`, logging at RUST_LOG=info.
    pub fn start<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> ConnectWorker {
        Self::start_with(script, args, &[("RUST_LOG", "info")])
    }

    /// `scripts/<script> <args...>` with `env` added to the environment.
    pub fn start_with<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S], env: &[(&str, &str)]) -> ConnectWorker {
        let log = std::env::temp_dir().join(format!("{}.log", unique(script)));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join(script))
            .args(args)
            .env("MIRROR_MAKER_BIN", bin())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start scripts/{script}: {e}"));
        ConnectWorker { child, log }
    }

    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// SIGTERM (the scripts exec the process), then the exit status (128 +
    /// the signal when killed by one); None when it has not exited within
    /// `limit`.
    pub fn stop_within(&mut self, limit: Duration) -> Option<i32> {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(st) = self.child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                return Some(st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0)));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// [`stop_within`](Self::stop_within), failing the test with the
    /// worker's log when it has not exited within `limit`.
    pub fn stop(&mut self, limit: Duration) -> i32 {
        self.stop_within(limit).unwrap_or_else(|| panic!("the worker did not stop within {limit:?}; its log:\n{}", self.output()))
    }
}

impl Drop for ConnectWorker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
