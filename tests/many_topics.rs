//! Many topics at once, end to end against real Kafka 3.9 clusters with the
//! real binary (issue #21): 300 source topics of 2 partitions, 10 records
//! each, mirrored with one `--whitelist` to a target that has none of them.
//! Every record must arrive whole, every target topic must have been made
//! like its source (2 partitions, where the target broker's auto-create
//! would make 1), and the target topics must have been created in batches:
//! the mirror's debug log names each CreateTopics request it sends with its
//! topic count, and there may be no more of them than
//! ceil(300 / CHUNK) plus one per creation that was refused and retried.
//! No timing is asserted: speed is measured by `scripts/bench topics`.

mod common;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use mirror_maker::engine::mm2::topics::CHUNK;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

const TOPICS: usize = 300;
const PARTITIONS: usize = 2;
const RECORDS: usize = 10;
/// Creating, mirroring and reading 300 topics on a loaded 2-core machine
/// takes far longer than one topic: more than the common deadline.
const LONG: Duration = Duration::from_secs(600);

/// Creates every topic with one request per 100 (the test's own setup, not
/// what is tested) and waits until the cluster lists them all.
fn create_topics(bootstrap: &str, names: &[String]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(60)));
    for part in names.chunks(100) {
        let new: Vec<NewTopic<'_>> = part.iter().map(|n| NewTopic::new(n, PARTITIONS as i32, TopicReplication::Fixed(1))).collect();
        for r in block_on(admin.create_topics(&new, &opts)).expect("create the source topics") {
            r.unwrap_or_else(|(t, e)| panic!("create source topic {t}: {e}"));
        }
    }
    wait_long("the source to list every topic", || {
        let listed = partition_counts(bootstrap, names);
        names.iter().all(|n| listed.get(n) == Some(&PARTITIONS))
    });
}

/// Each named topic's partition count on the cluster, from one listing of
/// every topic (naming one could make the broker auto-create it).
fn partition_counts(bootstrap: &str, names: &[String]) -> HashMap<String, usize> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let Ok(md) = c.fetch_metadata(None, Duration::from_secs(15)) else { return HashMap::new() };
    let wanted: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    md.topics()
        .iter()
        .filter(|t| t.error().is_none() && wanted.contains(t.name()) && t.partitions().iter().all(|p| p.leader() >= 0))
        .map(|t| (t.name().to_string(), t.partitions().len()))
        .collect()
}

fn wait_long(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + LONG;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out after {LONG:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Writes each topic's records with one producer.
fn produce_all(bootstrap: &str, records: &[(String, Vec<Rec>)]) {
    let batches: Vec<(&str, Option<i32>, &[Rec])> = records.iter().map(|(t, r)| (t.as_str(), None, r.as_slice())).collect();
    produce_many(bootstrap, &batches);
}

/// Sum of the end offsets of every partition of the named topics that the
/// cluster lists (0 for a topic it does not have yet).
fn records_on(bootstrap: &str, names: &[String]) -> i64 {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    partition_counts(bootstrap, names)
        .iter()
        .flat_map(|(t, n)| (0..*n as i32).map(move |p| (t.clone(), p)))
        .map(|(t, p)| c.fetch_watermarks(&t, p, Duration::from_secs(15)).map_or(0, |(_, h)| h))
        .sum()
}

/// Every record of the named topics, read with one consumer from the start
/// up to the end offsets they have now, grouped by topic.
fn read_all(bootstrap: &str, names: &[String]) -> HashMap<String, Vec<Landed>> {
    let c: BaseConsumer =
        ClientConfig::new().set("bootstrap.servers", bootstrap).set("group.id", unique("many-reader")).set("enable.auto.commit", "false").create().unwrap();
    let counts = partition_counts(bootstrap, names);
    let mut list = TopicPartitionList::new();
    let mut remaining: HashMap<(String, i32), i64> = HashMap::new();
    for (t, n) in &counts {
        for p in 0..*n as i32 {
            list.add_partition_offset(t, p, Offset::Beginning).unwrap();
            let (low, high) = c.fetch_watermarks(t, p, Duration::from_secs(15)).unwrap();
            if high > low {
                remaining.insert((t.clone(), p), high);
            }
        }
    }
    c.assign(&list).unwrap();
    let mut out: HashMap<String, Vec<Landed>> = HashMap::new();
    let deadline = Instant::now() + LONG;
    while !remaining.is_empty() {
        assert!(Instant::now() < deadline, "could not read the target up to its end offsets; {} partitions left", remaining.len());
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            let key = (m.topic().to_string(), m.partition());
            if remaining.get(&key).is_some_and(|end| m.offset() + 1 >= *end) {
                remaining.remove(&key);
            }
            let headers = m.headers().map(|h| h.iter().map(|x| (x.key.to_string(), x.value.unwrap_or_default().to_vec())).collect()).unwrap_or_default();
            let rec = Rec { key: m.key().map(<[u8]>::to_vec), value: m.payload().map(<[u8]>::to_vec), headers, timestamp: m.timestamp().to_millis() };
            out.entry(key.0).or_default().push(Landed { partition: m.partition(), offset: m.offset(), rec });
        }
    }
    out
}

#[test]
#[ignore = "needs clusters"]
fn three_hundred_new_topics_arrive_whole_with_batched_creation() {
    require_clusters!(source(), target());
    let prefix = unique("many");
    let names: Vec<String> = (0..TOPICS).map(|i| format!("{prefix}-{i:03}")).collect();
    create_topics(&source(), &names);
    let records: Vec<(String, Vec<Rec>)> = names.iter().map(|t| (t.clone(), sample_records(t, RECORDS))).collect();
    produce_all(&source(), &records);
    assert_eq!(records_on(&source(), &names), (TOPICS * RECORDS) as i64, "the source holds every test record");

    // The real binary with the topic sync's debug lines, which name each
    // CreateTopics request it sends.
    let log = std::env::temp_dir().join(format!("{}.log", unique("many-mirror")));
    let file = std::fs::File::create(&log).unwrap();
    let args = mirror_args(&source(), &unique("many-group"), &target(), &format!("{prefix}-.*"), &["--offset.commit.interval.ms", "1000"]);
    let mut child = Command::new(bin())
        .args(&args)
        .env("RUST_LOG", "info,mirror_maker::engine::mm2::topics=debug")
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("start mirror-maker");
    let output = || std::fs::read_to_string(&log).unwrap_or_default();
    let mut done = false;
    let deadline = Instant::now() + LONG;
    while Instant::now() < deadline {
        if records_on(&target(), &names) >= (TOPICS * RECORDS) as i64 {
            done = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let status = child.wait().expect("wait for mirror-maker");
    let text = output();
    assert!(done, "not every record reached the target within {LONG:?}; mirror log {}:\n{}", log.display(), tail(&text));
    assert_eq!(status.code(), Some(0), "clean stop expected; log {}:\n{}", log.display(), tail(&text));

    // Made like the source: the broker's auto-create would give 1 partition.
    let made = partition_counts(&target(), &names);
    let wrong: Vec<_> = names.iter().filter(|n| made.get(*n) != Some(&PARTITIONS)).take(5).collect();
    assert!(wrong.is_empty(), "target topics not made with the source's {PARTITIONS} partitions, e.g. {wrong:?}: {made:?}");

    // Whole records, topic by topic.
    let landed = read_all(&target(), &names);
    for (topic, expected) in &records {
        let got = landed.get(topic).map(Vec::as_slice).unwrap_or_default();
        assert_same_records(topic, expected, got);
    }

    // Batched: the requests the mirror sent and the topics they named.
    let requests: Vec<usize> = text.lines().filter_map(|l| l.split("CreateTopics: ").nth(1)?.split(' ').next()?.parse().ok()).collect();
    let retried = text.lines().filter(|l| l.contains("cannot create target topic") && l.contains("yet")).count();
    let asked: usize = requests.iter().sum();
    assert!(asked >= TOPICS, "the debug log names CreateTopics requests for {asked} topics, fewer than the {TOPICS} created: {requests:?}");
    let most = TOPICS.div_ceil(CHUNK) + retried;
    assert!(
        requests.len() <= most,
        "{} CreateTopics requests for {TOPICS} topics, at most {most} expected (chunks of {CHUNK}, {retried} refusals retried): {requests:?}",
        requests.len()
    );
    let _ = std::fs::remove_file(&log);
}

/// The end of a long log, for a failure message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}
