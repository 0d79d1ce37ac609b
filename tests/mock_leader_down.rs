//! A source broker that leads most partitions is down when the mirror joins
//! its group (librdkafka's mock cluster, in-process). The retention-gap
//! check on every new assignment asks each partition's leader for its log
//! start; a leader that does not answer must not hold up the partitions
//! whose leaders do, nor keep the member from polling past
//! max.poll.interval.ms, which would have it leave and rejoin the group in a loop.

mod mock;

use std::time::{Duration, Instant};

use mirror_maker::ops::metrics::Metrics;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::mocking::{MockCluster, MockCoordinator};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

use mock::{mock_options, run};

const TOPIC: &str = "leader-down";
const GROUP: &str = "mock-leader-down";
const PARTITIONS: i32 = 40;
/// Partitions 0..HEALTHY are led by broker 1, which stays up; the rest by broker 2.
const HEALTHY: i32 = 4;
const PER_PARTITION: usize = 500;

fn committed_healthy(source: &str) -> Vec<(i32, Option<i64>, i64)> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", source).set("group.id", GROUP).create().unwrap();
    let mut list = TopicPartitionList::new();
    for p in 0..HEALTHY {
        list.add_partition(TOPIC, p);
    }
    let Ok(committed) = c.committed_offsets(list, Duration::from_secs(5)) else { return Vec::new() };
    committed
        .elements()
        .iter()
        .map(|e| {
            let (_, high) = c.fetch_watermarks(TOPIC, e.partition(), Duration::from_secs(5)).unwrap_or((0, -1));
            let off = if let Offset::Offset(o) = e.offset() { Some(o) } else { None };
            (e.partition(), off, high)
        })
        .collect()
}

#[test]
fn a_down_leader_does_not_stall_the_healthy_partitions_or_the_group() {
    let source = MockCluster::new(2).unwrap();
    let target = MockCluster::new(1).unwrap();
    source.create_topic(TOPIC, PARTITIONS, 1).unwrap();
    target.create_topic(TOPIC, PARTITIONS, 1).unwrap();
    for p in 0..PARTITIONS {
        source.partition_leader(TOPIC, p, Some(if p < HEALTHY { 1 } else { 2 })).unwrap();
    }
    source.coordinator(MockCoordinator::Group(GROUP.into()), 1).unwrap();

    let writer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new().set("bootstrap.servers", source.bootstrap_servers()).create().unwrap();
    for p in 0..HEALTHY {
        for i in 0..PER_PARTITION {
            let v = format!("{p}:{i}");
            writer.send(BaseRecord::<str, str>::to(TOPIC).partition(p).key(&v).payload(&v)).map_err(|(e, _)| e).unwrap();
        }
    }
    writer.flush(Duration::from_secs(30)).unwrap();

    // The group has committed offsets everywhere, so each assigned partition
    // is checked for a retention gap against its log start (which is 0: no gap).
    let committer: BaseConsumer = ClientConfig::new().set("bootstrap.servers", source.bootstrap_servers()).set("group.id", GROUP).create().unwrap();
    let mut zero = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        zero.add_partition_offset(TOPIC, p, Offset::Offset(0)).unwrap();
    }
    committer.commit(&zero, CommitMode::Sync).unwrap();
    drop(committer);

    // Broker 2 hangs: it keeps its connections and its leadership but
    // answers nothing for a minute, like a broker stalled on its disk or a
    // host gone dark behind a firewall that drops packets. (A broker that
    // refuses connections, or a partition without a leader, fails requests
    // at once and shows nothing.)
    source.broker_round_trip_time(2, Duration::from_secs(60)).unwrap();

    // A short max.poll.interval.ms: a member that spends longer than this
    // inside one poll (the rebalance callback runs inside it) is taken out
    // of the group.
    let options = mock_options(&source, &target, TOPIC, GROUP, "session.timeout.ms=6000\nheartbeat.interval.ms=1000\nmax.poll.interval.ms=10000\n");
    let started = Instant::now();
    let (shutdown, metrics, runner) = run(options, Duration::from_secs(10));

    // Mirroring the healthy partitions takes a few seconds; checking the 36
    // partitions of the down broker one after another, 10 s each, inside
    // the assignment callback took six minutes before anything was read.
    let bound = Duration::from_secs(60);
    let caught_up = loop {
        let c = committed_healthy(&source.bootstrap_servers());
        if c.len() == HEALTHY as usize && c.iter().all(|(_, off, end)| *off == Some(*end) && *end == PER_PARTITION as i64) {
            break started.elapsed();
        }
        if started.elapsed() > bound {
            shutdown.request_stop();
            panic!("the healthy partitions were not mirrored within {bound:?} while broker 2 hung (committed, end: {c:?}); {}", metrics.summary());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // Still in the group: the member was never taken out for polling too late.
    let rebalances = Metrics::get(&metrics.rebalances);
    assert_eq!(rebalances, 0, "the member lost or gave up its partitions while broker 2 hung; {}", metrics.summary());
    assert_eq!(Metrics::get(&metrics.gap_offsets), 0, "a gap was reported where the log starts at the committed offset");

    source.broker_round_trip_time(2, Duration::ZERO).unwrap();
    shutdown.request_stop();
    assert_eq!(runner.join().unwrap().unwrap(), mirror_maker::ops::shutdown::ExitStatus::Ok, "{}", metrics.summary());
    println!(
        "MOCK leader down: {HEALTHY} healthy partitions ({} records) mirrored and committed {:.1}s after the start with broker 2 (leader of {} partitions) hung; {rebalances} rebalances; {}",
        HEALTHY as usize * PER_PARTITION,
        caught_up.as_secs_f64(),
        PARTITIONS - HEALTHY,
        metrics.summary()
    );
}
