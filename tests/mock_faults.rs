//! Fault injection with librdkafka's mock cluster (in-process, fast): produce
//! and commit requests failing with retriable errors, added latency, and the
//! target broker going down and coming back, all while the real pipeline
//! runs. Nothing may be missing and per-key order must hold.
//!
//! This complements, never replaces, the real-broker suites (tests/chaos.rs).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mirror_maker::cli::Options;
use mirror_maker::metrics::Metrics;
use mirror_maker::partitioner::java_partition;
use mirror_maker::pipeline;
use mirror_maker::shutdown::Shutdown;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use rdkafka::ClientConfig;

const TOPIC: &str = "faults";
const N: usize = 20_000;
const GROUP: &str = "mock-faults";

fn committed_all(source: &str) -> bool {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", source).set("group.id", GROUP).create().unwrap();
    let mut list = TopicPartitionList::new();
    for p in 0..4 {
        list.add_partition(TOPIC, p);
    }
    let Ok(committed) = c.committed_offsets(list, Duration::from_secs(5)) else { return false };
    committed.elements().iter().all(|e| {
        let (_, high) = c.fetch_watermarks(TOPIC, e.partition(), Duration::from_secs(5)).unwrap_or((0, -1));
        e.offset() == Offset::Offset(high)
    })
}

#[test]
fn retriable_errors_latency_and_a_target_outage_lose_nothing() {
    let source = MockCluster::new(1).unwrap();
    let target = MockCluster::new(1).unwrap();
    source.create_topic(TOPIC, 4, 1).unwrap();
    target.create_topic(TOPIC, 4, 1).unwrap();

    let writer: ThreadedProducer<DefaultProducerContext> =
        ClientConfig::new().set("bootstrap.servers", source.bootstrap_servers()).set("partitioner", "murmur2_random").create().unwrap();
    for i in 0..N {
        let key = format!("k{}", i % 101);
        let seq = i.to_string();
        let rec = BaseRecord::to(TOPIC).key(&key).payload(&seq).headers(OwnedHeaders::new().insert(Header { key: "seq", value: Some(&seq) }));
        writer.send(rec).map_err(|(e, _)| e).unwrap();
    }
    writer.flush(Duration::from_secs(30)).unwrap();

    // Faults before the mirror starts: retriable produce and commit errors, latency.
    use RDKafkaRespErr::*;
    target.request_errors(
        RDKafkaApiKey::Produce,
        &[RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS],
    );
    source.request_errors(RDKafkaApiKey::OffsetCommit, &[RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT]);
    target.broker_round_trip_time(1, Duration::from_millis(30)).unwrap();

    let dir = std::env::temp_dir().join(format!("mm-mock-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cf, pf) = (dir.join("consumer.properties"), dir.join("producer.properties"));
    std::fs::write(&cf, format!("bootstrap.servers={}\ngroup.id={GROUP}\n", source.bootstrap_servers())).unwrap();
    std::fs::write(&pf, format!("bootstrap.servers={}\n", target.bootstrap_servers())).unwrap();
    let options = Options {
        num_streams: 2,
        num_producers: 2,
        queue_size: 500,
        offset_commit_interval_ms: Some(300),
        topic_refresh_interval_ms: 1000,
        drain_timeout_ms: 30_000,
        stats_interval_ms: 0,
        // librdkafka's mock brokers have no CreateTopics/DescribeConfigs: the
        // topics are made by the mock's auto-create, as with MM1.
        beyond: mirror_maker::cli::BeyondOptions { create_topics: false, sync_partitions: false, ..Default::default() },
        ..Options::new(cf, pf, TOPIC)
    };
    let plan = pipeline::plan(options).unwrap();
    let shutdown = Shutdown::new(Duration::from_secs(30));
    let metrics = Arc::new(Metrics::default());
    let runner = {
        let (s, m) = (shutdown.clone(), metrics.clone());
        std::thread::spawn(move || pipeline::run_until(plan, s, m))
    };

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
    assert_eq!(runner.join().unwrap().unwrap(), 0);

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
