//! Fault injection with librdkafka's mock cluster (in-process, fast): produce
//! and commit requests failing with retriable errors, added latency, and the
//! target broker going down and coming back, all while the real pipeline
//! runs. Nothing may be missing and per-key order must hold.
//!
//! This complements, never replaces, the real-broker suites (tests/chaos.rs).

mod mock;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use mirror_maker::front::mm1::cli::Options;
use mirror_maker::ops::metrics::Metrics;
use mirror_maker::plan::partitioner::java_partition;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use rdkafka::ClientConfig;

use mock::{mock_options, run};

const TOPIC: &str = "faults";
const N: usize = 20_000;
const GROUP: &str = "mock-faults";

fn committed_all(source: &str) -> bool {
    committed_all_in(source, GROUP)
}

#[test]
fn retriable_errors_latency_and_a_target_outage_lose_nothing() {
    let (source, target) = loaded_clusters(N);

    // Faults before the mirror starts: retriable produce and commit errors, latency.
    use RDKafkaRespErr::*;
    target.request_errors(
        RDKafkaApiKey::Produce,
        &[
            RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
            RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
            RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
            RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
        ],
    );
    source.request_errors(RDKafkaApiKey::OffsetCommit, &[RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT]);
    target.broker_round_trip_time(1, Duration::from_millis(30)).unwrap();

    let mut options = Options { num_streams: 2, num_producers: 2, queue_size: 500, ..mock_options(&source, &target, TOPIC, GROUP, "") };
    options.ops.drain_timeout_ms = 30_000;
    let (shutdown, metrics, runner) = run(options, Duration::from_secs(30));

    // The target goes away mid-run and comes back.
    let deadline = Instant::now() + Duration::from_secs(120);
    while Metrics::get(&metrics.produced) < 2_000 {
        assert!(Instant::now() < deadline, "no progress: {}", metrics.summary());
        std::thread::sleep(Duration::from_millis(50));
    }
    target.broker_down(1).unwrap();
    let during = Metrics::get(&metrics.produced);
    std::thread::sleep(Duration::from_secs(3)); // the length of the outage itself
    target.broker_up(1).unwrap();
    while !committed_all(&source.bootstrap_servers()) {
        assert!(Instant::now() < deadline, "did not catch up: {}", metrics.summary());
        std::thread::sleep(Duration::from_millis(200));
    }
    shutdown.request_stop();
    assert_eq!(runner.join().unwrap().unwrap(), mirror_maker::ops::shutdown::ExitStatus::Ok);

    // Every record on the target, keyed placement and per-key order kept.
    let reader: BaseConsumer = ClientConfig::new().set("bootstrap.servers", target.bootstrap_servers()).set("group.id", "mock-reader").create().unwrap();
    let mut list = TopicPartitionList::new();
    for p in 0..4 {
        list.add_partition_offset(TOPIC, p, Offset::Beginning).unwrap();
    }
    reader.assign(&list).unwrap();
    let mut seen = HashSet::new();
    let mut copies = 0usize;
    let mut highest: HashMap<Vec<u8>, usize> = HashMap::new();
    let until = Instant::now() + Duration::from_secs(60);
    while seen.len() < N && Instant::now() < until {
        if let Some(Ok(m)) = reader.poll(Duration::from_millis(100)) {
            copies += 1;
            let seq: usize = std::str::from_utf8(m.payload().unwrap()).unwrap().parse().unwrap();
            assert_eq!(m.headers().unwrap().get(0).value, Some(seq.to_string().as_bytes()));
            let key = m.key().unwrap().to_vec();
            assert_eq!(m.partition(), java_partition(&key, 4));
            let first = seen.insert(seq);
            let top = highest.entry(key.clone()).or_insert(0);
            assert!(!(first && seq < *top), "key {} out of order: {seq} after {top}", String::from_utf8_lossy(&key));
            *top = (*top).max(seq);
        }
    }
    assert_eq!(seen.len(), N, "missing {} records; {}", N - seen.len(), metrics.summary());
    println!(
        "MOCK faults: {N} records, 0 missing, {} duplicates, per-key order kept; produce/commit errors injected, 30 ms latency, target down 3 s at {during} delivered; {}",
        copies - N,
        metrics.summary()
    );
}

/// A source mock cluster holding `n` records with keys `k0`..`k100`, values
/// and a `seq` header equal to their sequence number, in [`TOPIC`] (4
/// partitions); and an empty target with the same topic.
fn loaded_clusters(n: usize) -> (MockCluster<'static, DefaultProducerContext>, MockCluster<'static, DefaultProducerContext>) {
    let source = MockCluster::new(1).unwrap();
    let target = MockCluster::new(1).unwrap();
    source.create_topic(TOPIC, 4, 1).unwrap();
    target.create_topic(TOPIC, 4, 1).unwrap();
    let writer: ThreadedProducer<DefaultProducerContext> =
        ClientConfig::new().set("bootstrap.servers", source.bootstrap_servers()).set("partitioner", "murmur2_random").create().unwrap();
    for i in 0..n {
        let key = format!("k{}", i % 101);
        let seq = i.to_string();
        let rec = BaseRecord::to(TOPIC).key(&key).payload(&seq).headers(OwnedHeaders::new().insert(Header { key: "seq", value: Some(&seq) }));
        writer.send(rec).map_err(|(e, _)| e).unwrap();
    }
    writer.flush(Duration::from_secs(30)).unwrap();
    (source, target)
}

/// Every record of `topic` as (partition, offset, seq), read from the start.
fn read_seqs(bootstrap: &str, n_partitions: i32) -> Vec<(i32, i64, usize)> {
    let reader: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).set("group.id", "mock-seq-reader").create().unwrap();
    let mut list = TopicPartitionList::new();
    let mut ends = HashMap::new();
    for p in 0..n_partitions {
        list.add_partition_offset(TOPIC, p, Offset::Beginning).unwrap();
        let (_, high) = reader.fetch_watermarks(TOPIC, p, Duration::from_secs(10)).unwrap();
        if high > 0 {
            ends.insert(p, high);
        }
    }
    reader.assign(&list).unwrap();
    let mut out = Vec::new();
    let until = Instant::now() + Duration::from_secs(60);
    while !ends.is_empty() {
        assert!(Instant::now() < until, "could not read {TOPIC} to its end: {ends:?} left");
        if let Some(Ok(m)) = reader.poll(Duration::from_millis(100)) {
            let seq: usize = std::str::from_utf8(m.payload().unwrap()).unwrap().parse().unwrap();
            out.push((m.partition(), m.offset(), seq));
            if ends.get(&m.partition()).is_some_and(|end| m.offset() + 1 >= *end) {
                ends.remove(&m.partition());
            }
        }
    }
    out
}

/// The group's committed offset per partition (partitions without one left out).
fn committed(bootstrap: &str, group: &str) -> Vec<(i32, i64)> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).set("group.id", group).create().unwrap();
    let mut list = TopicPartitionList::new();
    for p in 0..4 {
        list.add_partition(TOPIC, p);
    }
    let got = c.committed_offsets(list, Duration::from_secs(10)).unwrap();
    got.elements().iter().filter_map(|e| if let Offset::Offset(o) = e.offset() { Some((e.partition(), o)) } else { None }).collect()
}

/// Item 2 of the fault review: a fatal error makes librdkafka's producer
/// fail every later send at once. In skip mode those records were counted
/// as dropped and their offsets committed (30,000 of 30,000 committed, none
/// on the target, exit 0). A fatal error says the producer is broken, not
/// that the target refused a record: nothing is skipped, nothing past the
/// last delivered record is committed, and the mirror stops with exit 1.
#[test]
fn a_fatal_producer_error_in_skip_mode_skips_nothing_and_commits_only_what_was_delivered() {
    const N: usize = 30_000;
    let (source, target) = loaded_clusters(N);
    // A head-of-line sequence error is fatal for librdkafka's idempotent producer.
    target.request_errors(RDKafkaApiKey::Produce, &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER]);
    let group = "mock-fatal";
    let options = Options { abort_on_send_failure: false, ..mock_options(&source, &target, TOPIC, group, "") };
    let (shutdown, metrics, runner) = run(options, Duration::from_secs(10));
    // The fatal error stops the mirror by itself; the deadline is for a
    // mirror that would run on (the fault this test is about).
    let deadline = Instant::now() + Duration::from_secs(120);
    while !runner.is_finished() {
        if Instant::now() > deadline {
            shutdown.request_stop();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let code = runner.join().unwrap().unwrap();
    assert_eq!(Metrics::get(&metrics.dropped), 0, "a fatal error is no refusal of a record: {}", metrics.summary());
    assert_eq!(code, mirror_maker::ops::shutdown::ExitStatus::Failure, "the mirror must stop with a failure (exit 255): {}", metrics.summary());
    // Whatever was committed is on the target.
    let on_target: HashSet<usize> = read_seqs(&target.bootstrap_servers(), 4).into_iter().map(|(_, _, seq)| seq).collect();
    let on_source = read_seqs(&source.bootstrap_servers(), 4);
    let commits = committed(&source.bootstrap_servers(), group);
    let mut covered = 0;
    for (p, c) in &commits {
        for (_, _, seq) in on_source.iter().filter(|(sp, so, _)| sp == p && so < c) {
            assert!(on_target.contains(seq), "seq {seq} of partition {p} is below the committed offset {c} but not on the target");
            covered += 1;
        }
    }
    println!(
        "MOCK fatal: {N} records, skip mode, head-of-line OUT_OF_ORDER_SEQUENCE_NUMBER: exit {code}, 0 dropped, {covered} committed, {} on the target, every committed record delivered",
        on_target.len()
    );
}

/// Item 4 of the fault review: a batch the target refuses as too large
/// fails every record in it; in skip mode all were dropped with it. Each is
/// now sent again alone, and only one refused alone is skipped: here none
/// is (the refusal is injected once, for a batch of small records).
#[test]
fn a_batch_refused_as_too_large_is_sent_again_record_by_record() {
    const N: usize = 5_000;
    let (source, target) = loaded_clusters(N);
    // The first produce request refused whole, as a broker refuses a batch
    // over the topic's max.message.bytes. Once only: the mock fails the next
    // requests whatever they carry, and a second refusal could fall on a
    // record already sent alone, which a real broker refuses only when that
    // record itself is too large (a slow CI run saw exactly that).
    target.request_errors(RDKafkaApiKey::Produce, &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE]);
    let group = "mock-too-large";
    let options = Options { abort_on_send_failure: false, ..mock_options(&source, &target, TOPIC, group, "") };
    let (shutdown, metrics, runner) = run(options, Duration::from_secs(30));
    let deadline = Instant::now() + Duration::from_secs(120);
    let done = |m: &Metrics| Metrics::get(&m.produced) + Metrics::get(&m.dropped) >= N as u64;
    while !done(&metrics) || !committed_all_in(&source.bootstrap_servers(), group) {
        assert!(Instant::now() < deadline && !runner.is_finished(), "did not finish: {}", metrics.summary());
        std::thread::sleep(Duration::from_millis(100));
    }
    shutdown.request_stop();
    assert_eq!(runner.join().unwrap().unwrap(), mirror_maker::ops::shutdown::ExitStatus::Ok);
    assert_eq!(Metrics::get(&metrics.dropped), 0, "no record was too large by itself: {}", metrics.summary());
    let seqs: HashSet<usize> = read_seqs(&target.bootstrap_servers(), 4).into_iter().map(|(_, _, s)| s).collect();
    assert_eq!(seqs.len(), N, "missing {} records", N - seqs.len());
    println!("MOCK too large: {N} records, the first batch refused as too large, 0 dropped, 0 missing; {}", metrics.summary());
}

fn committed_all_in(source: &str, group: &str) -> bool {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", source).set("group.id", group).create().unwrap();
    let mut list = TopicPartitionList::new();
    for p in 0..4 {
        list.add_partition(TOPIC, p);
    }
    let Ok(got) = c.committed_offsets(list, Duration::from_secs(5)) else { return false };
    got.elements().iter().all(|e| {
        let (_, high) = c.fetch_watermarks(TOPIC, e.partition(), Duration::from_secs(5)).unwrap_or((0, -1));
        e.offset() == Offset::Offset(high)
    })
}
