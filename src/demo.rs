//! `--demo`: a real mirror on a machine without Kafka.
//!
//! Starts two in-process librdkafka mock clusters, writes sample records to
//! the "source" (keyed, unkeyed, tombstones, headers, explicit timestamps),
//! runs the very same pipeline as a normal run between them, then reads the
//! "target" back and checks every record: content, key placement (Java's
//! murmur2) and per-key order, and that the group committed the end offsets.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

use crate::engine::{self, StartError};
use crate::front::mm1::cli::Options;
use crate::front::mm1::plan as mirror_plan;
use crate::front::properties::ConfigError;
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::{ExitStatus, Shutdown};
use crate::plan::partitioner::java_partition;

const TOPICS: &[(&str, i32, i32, usize)] = &[
    // name, source partitions, target partitions, records
    ("demo.orders", 3, 5, 3000),
    ("demo.events", 2, 2, 1000),
    ("demo.tmp", 1, 1, 100),
];
const GROUP: &str = "mirror-maker-demo";

#[derive(Debug, Clone, PartialEq)]
struct Rec {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Vec<u8>)>,
    timestamp: i64,
}

fn sample(topic: &str, i: usize) -> Rec {
    let keyed = topic != "demo.events" || i.is_multiple_of(2);
    Rec {
        key: keyed.then(|| format!("customer-{}", i % 37).into_bytes()),
        // Every 50th record is a tombstone: null value, not empty.
        value: (i % 50 != 49).then(|| format!("{topic} record {i}").into_bytes()),
        headers: vec![("seq".into(), i.to_string().into_bytes()), ("origin".into(), b"demo".to_vec())],
        timestamp: 1_700_000_000_000 + i as i64,
    }
}

/// Why the demo failed: a step that could not be taken, or a check the
/// mirrored records did not pass.
#[derive(Debug)]
enum DemoError {
    /// A librdkafka call of the demo's own (mock clusters, writer, checkers).
    Kafka { what: &'static str, error: KafkaError },
    /// The demo's properties files: `what` is "create" or "write".
    File { what: &'static str, path: PathBuf, error: std::io::Error },
    /// The demo's own options did not make a plan.
    Plan(ConfigError),
    /// The mirror did not start.
    Start(StartError),
    /// The mirror's thread panicked.
    Panicked,
    /// The mirror ended with another status than 0.
    Exited(ExitStatus),
    /// What the target holds is not what was written: the finding.
    Check(String),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::Kafka { what, error } => write!(f, "{what}: {error}"),
            DemoError::File { what, path, error } => write!(f, "{what} {}: {error}", path.display()),
            DemoError::Plan(e) => write!(f, "{e}"),
            DemoError::Start(e) => write!(f, "{e}"),
            DemoError::Panicked => f.write_str("the mirror panicked"),
            DemoError::Exited(code) => write!(f, "the mirror exited with status {code}"),
            DemoError::Check(finding) => f.write_str(finding),
        }
    }
}

impl From<ConfigError> for DemoError {
    fn from(e: ConfigError) -> DemoError {
        DemoError::Plan(e)
    }
}

impl From<StartError> for DemoError {
    fn from(e: StartError) -> DemoError {
        DemoError::Start(e)
    }
}

fn fail(e: DemoError) -> ExitStatus {
    eprintln!("demo: FAILED: {e}");
    ExitStatus::Failure
}

pub fn run() -> ExitStatus {
    match run_demo() {
        Ok(report) => {
            println!("{report}");
            ExitStatus::Ok
        }
        Err(e) => fail(e),
    }
}

type Mock = MockCluster<'static, DefaultProducerContext>;

/// A librdkafka error as the demo reports it: what failed, then why.
fn failed(what: &'static str) -> impl Fn(KafkaError) -> DemoError {
    move |error| DemoError::Kafka { what, error }
}

/// The demo, phase by phase; the first failure ends it with its message
/// (and drops the mock clusters with it).
fn run_demo() -> Result<String, DemoError> {
    let (source, target) = start_clusters()?;
    let expected = write_samples(&source)?;
    let options = demo_options(&source, &target)?;
    let (mirrored_in, metrics) = mirror_until_committed(&source, options)?;
    let (checked, duplicates) = check_target(&target, &expected)?;
    check_order_and_commits(&source, &target)?;
    Ok(format!(
        "demo: OK: {checked} records mirrored in {:.1}s and checked one by one, 0 missing, {duplicates} duplicates (at-least-once redelivery); \
         keys, values (tombstones included), headers and timestamps identical; keyed records in Java's murmur2 partition of a 5-partition target; \
         per-key order kept; demo.tmp excluded; the group's committed offsets equal the source end offsets.\n{}",
        mirrored_in.as_secs_f64(),
        metrics.summary()
    ))
}

/// Two in-process mock clusters with the demo topics on both: the target's
/// made beforehand with its own partition counts, as an operator would.
fn start_clusters() -> Result<(Mock, Mock), DemoError> {
    let source = MockCluster::new(1).map_err(failed("start source mock cluster"))?;
    let target = MockCluster::new(1).map_err(failed("start target mock cluster"))?;
    for (t, sp, tp, _) in TOPICS {
        source.create_topic(t, *sp, 1).map_err(failed("create source topic"))?;
        target.create_topic(t, *tp, 1).map_err(failed("create target topic"))?;
    }
    println!("demo: source cluster {} and target cluster {} (in-process mock brokers)", source.bootstrap_servers(), target.bootstrap_servers());
    Ok((source, target))
}

/// Writes every topic's sample records to the source; returns them per
/// topic, in seq order, for the check.
fn write_samples(source: &Mock) -> Result<HashMap<&'static str, Vec<Rec>>, DemoError> {
    // Written with Java's placement so per-key order is per partition.
    let writer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", source.bootstrap_servers())
        .set("partitioner", "murmur2_random")
        .create()
        .map_err(failed("create demo writer"))?;
    let mut expected: HashMap<&str, Vec<Rec>> = HashMap::new();
    for (t, _, _, n) in TOPICS {
        for i in 0..*n {
            let r = sample(t, i);
            let mut h = OwnedHeaders::new();
            for (k, v) in &r.headers {
                h = h.insert(Header { key: k, value: Some(v) });
            }
            let mut rec: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(t).headers(h).timestamp(r.timestamp);
            if let Some(k) = &r.key {
                rec = rec.key(k.as_slice());
            }
            if let Some(v) = &r.value {
                rec = rec.payload(v.as_slice());
            }
            writer.send(rec).map_err(|(error, _)| DemoError::Kafka { what: "write sample record", error })?;
            expected.entry(t).or_default().push(r);
        }
    }
    writer.flush(Duration::from_secs(30)).map_err(failed("flush sample records"))?;
    println!("demo: wrote {} records to 3 source topics; mirroring 'demo\\..*' minus 'demo\\.tmp'", TOPICS.iter().map(|t| t.3).sum::<usize>());
    Ok(expected)
}

/// The command line and properties files a user would give for this
/// mirror, as [`Options`]; the files go to a temporary directory.
fn demo_options(source: &Mock, target: &Mock) -> Result<Options, DemoError> {
    let dir = std::env::temp_dir().join(format!("mirror-maker-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|error| DemoError::File { what: "create", path: dir.clone(), error })?;
    let consumer_file = dir.join("consumer.properties");
    let producer_file = dir.join("producer.properties");
    let write =
        |path: &std::path::Path, text: String| std::fs::write(path, text).map_err(|error| DemoError::File { what: "write", path: path.to_path_buf(), error });
    // A stream that joins the group a moment after the other makes the mock
    // broker wait session.timeout.ms - 1 s for the rebalance (44 s with the
    // default): the smallest timeout a real broker accepts keeps that short.
    write(
        &consumer_file,
        format!("bootstrap.servers={}\ngroup.id={GROUP}\nauto.offset.reset=earliest\nsession.timeout.ms=6000\n", source.bootstrap_servers()),
    )?;
    write(&producer_file, format!("bootstrap.servers={}\n", target.bootstrap_servers()))?;

    Ok(Options {
        exclude: Some("demo\\.tmp".into()),
        num_streams: 2,
        num_producers: 2,
        queue_size: 1000,
        offset_commit_interval_ms: Some(1000),
        topic_refresh_interval_ms: 1000,
        ops: crate::front::mm1::cli::OpsOptions { drain_timeout_ms: 30_000, stats_interval_ms: 0, ..Default::default() },
        // librdkafka's mock brokers have no CreateTopics/DescribeConfigs: the
        // topics are made by the mock's auto-create, as with MM1.
        beyond: crate::front::mm1::cli::BeyondOptions { create_topics: false, sync_partitions: false, ..Default::default() },
        ..Options::new(consumer_file, producer_file, "demo\\..*")
    })
}

/// Runs the mirror, as `main` does, until the group has committed the
/// source's end offsets (or two minutes pass), then stops it cleanly.
/// Returns how long the mirroring took and the run's metrics.
fn mirror_until_committed(source: &Mock, options: Options) -> Result<(Duration, Arc<Metrics>), DemoError> {
    let total: usize = TOPICS.iter().filter(|t| t.0 != "demo.tmp").map(|t| t.3).sum();
    let plan = mirror_plan(&options)?;
    let shutdown = Shutdown::new(Duration::from_secs(30));
    let metrics = Arc::new(Metrics::default());
    let started = Instant::now();
    let runner = {
        let (s, m) = (shutdown.clone(), metrics.clone());
        std::thread::spawn(move || engine::run_until(plan, s, m))
    };
    // Done when the group has committed every source end offset: only
    // then has the target acknowledged everything (a rebalance may have
    // sent some records twice, so counting produced records is not enough).
    let deadline = Instant::now() + Duration::from_secs(120);
    while Metrics::get(&metrics.produced) < total as u64 || !commits_reach_end(source)? {
        if Instant::now() > deadline || shutdown.stopping() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mirrored_in = started.elapsed();
    shutdown.request_stop();
    let code = runner.join().map_err(|_| DemoError::Panicked)??;
    if code != ExitStatus::Ok {
        return Err(DemoError::Exited(code));
    }
    Ok((mirrored_in, metrics))
}

/// Reads the target back, topic by topic, and checks every record against
/// what was written. Returns the records checked and the duplicates seen.
fn check_target(target: &Mock, expected: &HashMap<&str, Vec<Rec>>) -> Result<(usize, usize), DemoError> {
    let reader: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", target.bootstrap_servers())
        .set("group.id", "demo-checker")
        .set("enable.auto.commit", "false")
        .create()
        .map_err(failed("create checker"))?;
    let mut checked = 0;
    let mut duplicates = 0;
    for (t, _, tparts, n) in TOPICS {
        let want = if *t == "demo.tmp" { 0 } else { *n };
        let (got, distinct) = read_back(&reader, t, *tparts, want)?;
        if want == 0 {
            if !got.is_empty() {
                return Err(DemoError::Check(format!("{t} is excluded but {} records reached the target", got.len())));
            }
            continue;
        }
        if distinct != want {
            return Err(DemoError::Check(format!("{t}: expected {want} distinct records on the target, found {distinct}")));
        }
        let (c, d) = check_topic(t, *tparts, &expected[t], got)?;
        checked += c;
        duplicates += d;
    }
    Ok((checked, duplicates))
}

/// Reads `t` on the target from the beginning until `want` distinct records
/// (by seq) have come, or the time is up; an excluded topic (`want` 0) is
/// watched for 3 s, in case anything arrives. Returns every copy read, with
/// its partition, and the number of distinct records.
fn read_back(reader: &BaseConsumer, t: &str, tparts: i32, want: usize) -> Result<(Vec<(i32, Rec)>, usize), DemoError> {
    let mut list = TopicPartitionList::new();
    for p in 0..tparts {
        list.add_partition_offset(t, p, Offset::Beginning).map_err(failed("assign"))?;
    }
    reader.assign(&list).map_err(failed("assign"))?;
    let mut got: Vec<(i32, Rec)> = Vec::new();
    let until = Instant::now() + Duration::from_secs(if want == 0 { 3 } else { 60 });
    let mut distinct = std::collections::HashSet::new();
    while distinct.len() < want && Instant::now() < until || (want == 0 && Instant::now() < until) {
        if let Some(Ok(m)) = reader.poll(Duration::from_millis(100)) {
            // Compared whole: the mirror adds nothing to a record by default.
            let headers = m.headers().map(|h| h.iter().map(|x| (x.key.to_string(), x.value.unwrap_or_default().to_vec())).collect()).unwrap_or_default();
            distinct.insert(m.headers().and_then(|h| h.iter().find(|x| x.key == "seq").and_then(|x| x.value.map(<[u8]>::to_vec))));
            got.push((
                m.partition(),
                Rec { key: m.key().map(<[u8]>::to_vec), value: m.payload().map(<[u8]>::to_vec), headers, timestamp: m.timestamp().to_millis().unwrap_or(-1) },
            ));
        }
    }
    Ok((got, distinct.len()))
}

/// Checks the copies read from `t` against the records written (`exp`, in
/// seq order): each one present and identical, a keyed one in Java's
/// partition, a duplicate identical to its first copy. Returns the records
/// checked and the duplicates.
fn check_topic(t: &str, tparts: i32, exp: &[Rec], got: Vec<(i32, Rec)>) -> Result<(usize, usize), DemoError> {
    let want = exp.len();
    let mut duplicates = 0;
    let mut by_seq: Vec<Option<(i32, Rec)>> = vec![None; want];
    for (p, r) in got {
        let seq: usize = r
            .headers
            .iter()
            .find(|(k, _)| k == "seq")
            .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
            .ok_or_else(|| DemoError::Check("record without seq header".into()))?;
        if seq >= want {
            return Err(DemoError::Check(format!("{t}: unexpected record seq {seq}")));
        }
        match &by_seq[seq] {
            // At-least-once: a redelivered copy must be identical. A
            // keyless record has no fixed partition (Java's partitioner
            // scatters them too), so its copy may land in another one.
            Some(first) if first.1 == r && (first.0 == p || r.key.is_none()) => duplicates += 1,
            Some(first) => return Err(DemoError::Check(format!("{t}: record {seq} arrived twice with different content: {first:?} / {r:?}"))),
            None => by_seq[seq] = Some((p, r)),
        }
    }
    // Per-key order along the target's partitions is checked by
    // check_order_and_commits, reading them in offset order.
    let mut checked = 0;
    for (seq, slot) in by_seq.into_iter().enumerate() {
        let (p, r) = slot.ok_or_else(|| DemoError::Check(format!("{t}: record {seq} missing")))?;
        if r != exp[seq] {
            return Err(DemoError::Check(format!("{t}: record {seq} differs: {:?} != {:?}", r, exp[seq])));
        }
        if let Some(k) = &r.key {
            let want_p = java_partition(k, tparts);
            if p != want_p {
                return Err(DemoError::Check(format!("{t}: key {} landed in partition {p}, Java would use {want_p}", String::from_utf8_lossy(k))));
            }
        }
        checked += 1;
    }
    Ok((checked, duplicates))
}

/// Per-key order on the target and the group's commits on the source.
fn check_order_and_commits(source: &Mock, target: &Mock) -> Result<(), DemoError> {
    // Per key, the seq header must increase along each target partition.
    let reader: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", target.bootstrap_servers())
        .set("group.id", "demo-order-checker")
        .create()
        .map_err(failed("create order checker"))?;
    let mut list = TopicPartitionList::new();
    for p in 0..5 {
        list.add_partition_offset("demo.orders", p, Offset::Beginning).map_err(failed("assign"))?;
    }
    reader.assign(&list).map_err(failed("assign"))?;
    // Per key: the first copies of records appear in source order; a lower
    // seq may only reappear as a redelivered duplicate.
    let mut highest: HashMap<Vec<u8>, i64> = HashMap::new();
    let mut seen_seq = std::collections::HashSet::new();
    let until = Instant::now() + Duration::from_secs(60);
    while seen_seq.len() < 3000 && Instant::now() < until {
        if let Some(Ok(m)) = reader.poll(Duration::from_millis(100)) {
            let seq: i64 =
                m.headers().and_then(|h| h.iter().find(|x| x.key == "seq")).and_then(|x| std::str::from_utf8(x.value?).ok()?.parse().ok()).unwrap_or(-1);
            let first_copy = seen_seq.insert(seq);
            if let Some(k) = m.key() {
                let top = highest.entry(k.to_vec()).or_insert(-1);
                if seq < *top && first_copy {
                    return Err(DemoError::Check(format!("key {} out of order: {seq} after {top}", String::from_utf8_lossy(k))));
                }
                *top = (*top).max(seq);
            }
        }
    }
    if seen_seq.len() < 3000 {
        return Err(DemoError::Check(format!("order check read only {} of 3000 demo.orders records", seen_seq.len())));
    }
    if !commits_reach_end(source)? {
        return Err(DemoError::Check("the group's committed offsets are behind the source end offsets".into()));
    }
    Ok(())
}

/// Whether the demo group's committed offsets equal the source end offsets.
fn commits_reach_end(source: &Mock) -> Result<bool, DemoError> {
    let group: BaseConsumer =
        ClientConfig::new().set("bootstrap.servers", source.bootstrap_servers()).set("group.id", GROUP).create().map_err(failed("create commit checker"))?;
    for (t, parts, _, _) in TOPICS.iter().filter(|t| t.0 != "demo.tmp") {
        let mut list = TopicPartitionList::new();
        for p in 0..*parts {
            list.add_partition(t, p);
        }
        let committed = group.committed_offsets(list, Duration::from_secs(10)).map_err(failed("read committed offsets"))?;
        for el in committed.elements() {
            let (_, high) = group.fetch_watermarks(t, el.partition(), Duration::from_secs(10)).map_err(failed("read end offsets"))?;
            if el.offset() != Offset::Offset(high) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
