//! Beyond MM1, end to end against real Kafka 3.9 clusters with the real
//! binary: target topics created like the source (and grown with it),
//! active/active without loops, a consumer group shared with Java MM1
//! (zero-downtime migration), and the throttle.
//!
//! The throttle test measures a rate the mirror enforces (a correctness
//! check, not a speed goal). It measures for 20 s by default;
//! MM_THROTTLE_LONG=1 measures for the full minute.

mod common;

use std::collections::{HashMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use rdkafka::admin::{AdminClient, AdminOptions, ConfigSource, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;

fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap()
}

/// The topic's configs set on the topic itself (DYNAMIC_TOPIC_CONFIG).
fn topic_overrides(bootstrap: &str, topic: &str) -> HashMap<String, String> {
    let res = block_on(admin(bootstrap).describe_configs(&[ResourceSpecifier::Topic(topic)], &AdminOptions::new())).unwrap();
    let r = res.into_iter().next().unwrap().unwrap();
    r.entries.into_iter().filter(|e| e.source == ConfigSource::DynamicTopic).filter_map(|e| Some((e.name, e.value?))).collect()
}

fn cluster_id(bootstrap: &str) -> String {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    c.client().fetch_cluster_id(Duration::from_secs(15)).expect("cluster id")
}

/// Every record keyed (compacted topics refuse null keys), seq `from..`.
fn keyed_records(topic: &str, from: usize, n: usize) -> Vec<Rec> {
    sample_records(topic, from + n)
        .into_iter()
        .enumerate()
        .skip(from)
        .map(|(i, mut r)| {
            r.key = Some(format!("key-{i}").into_bytes());
            r
        })
        .collect()
}

fn count(bootstrap: &str, topic: &str) -> i64 {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let parts = partitions_of(bootstrap, topic).unwrap_or(0);
    (0..parts as i32).map(|p| c.fetch_watermarks(topic, p, Duration::from_secs(15)).map(|(l, h)| h - l).unwrap_or(0)).sum()
}

/// The "not copied back" figure of the mirror's exit summary.
fn loop_skipped(log: &str) -> u64 {
    let line = log.lines().rev().find(|l| l.contains("Mirrored: consumed")).expect("summary line");
    let tail = line.split("not copied back to their origin ").nth(1).unwrap();
    tail.split(',').next().unwrap().trim().parse().unwrap()
}

#[test]
#[ignore = "needs clusters"]
fn target_topics_are_created_like_the_source_and_grow_with_it() {
    require_clusters!(source(), target());
    let id = unique("like");
    let (topic, existing) = (format!("{id}-compact"), format!("{id}-existing"));
    let configs = [("cleanup.policy", "compact"), ("retention.ms", "987654321"), ("min.compaction.lag.ms", "1000"), ("max.message.bytes", "2000000")];
    create_topic(&source(), &topic, 12, &configs);
    // Already on the target with fewer partitions and a smaller record limit: warned about, left alone.
    create_topic(&source(), &existing, 4, &[("max.message.bytes", "2000000")]);
    create_topic(&target(), &existing, 2, &[("max.message.bytes", "500000")]);
    let mut recs = keyed_records(&topic, 0, 1200);
    produce(&source(), &topic, &recs);
    let recs_existing = sample_records(&existing, 200);
    produce(&source(), &existing, &recs_existing);

    let group = unique("group");
    let mut m = Mirror::start(&mirror_args(
        &source(),
        &group,
        &target(),
        &format!("{id}-.*"),
        &["--offset.commit.interval.ms", "1000", "--topic.refresh.interval.ms", "2000"],
    ));
    wait_until("first batch mirrored and committed", || all_committed(&source(), &group, &topic) && all_committed(&source(), &group, &existing));
    assert_eq!(partitions_of(&target(), &topic), Some(12), "target partitions");
    let got = topic_overrides(&target(), &topic);
    for (k, v) in configs {
        assert_eq!(got.get(k).map(String::as_str), Some(v), "target topic config {k}; all overrides: {got:?}");
    }
    let log = m.output();
    assert!(log.contains(&format!("created target topic {topic} like source topic {topic}: 12 partitions")), "{log}");
    assert!(log.contains(&format!("target topic {existing} has 2 partitions, source topic {existing} has 4")), "{log}");
    assert!(log.contains(&format!("target topic {existing} has max.message.bytes 500000, smaller than source topic {existing}'s 2000000")), "{log}");

    // The source grows while the mirror runs; new records land in every partition.
    add_partitions(&source(), &topic, 16);
    wait_until("target topic grown to 16 partitions", || partitions_of(&target(), &topic) == Some(16));
    let more = keyed_records(&topic, 1200, 1600);
    produce(&source(), &topic, &more);
    recs.extend(more);
    wait_until("second batch mirrored and committed on all 16 partitions", || {
        let ce = committed_and_end(&source(), &group, &topic);
        ce.len() == 16 && ce.iter().all(|(_, c, e)| *c == Some(*e))
    });
    assert_eq!(m.stop(), 0, "{}", m.output());
    let log = m.output();
    assert!(log.contains(&format!("source topic {topic} grew to 16 partitions: target topic {topic} raised from 12 to 16")), "{log}");

    // Never altered beyond adding partitions.
    assert_eq!(partitions_of(&target(), &existing), Some(2));
    assert_eq!(topic_overrides(&target(), &existing).get("max.message.bytes").map(String::as_str), Some("500000"));

    let landed = read_topic(&target(), &topic);
    let dups = assert_same_records(&topic, &recs, &landed);
    // assert_same_records compared every record whole: nothing added, the
    // provenance header included (off unless asked for).
    assert!(landed.iter().all(|l| provenance_of(&l.rec).is_empty()), "no record carries {PROVENANCE_HEADER} by default");
    let dups_existing = assert_same_records(&existing, &recs_existing, &read_topic(&target(), &existing));
    println!(
        "BEYOND topics: {topic} 12 -> 16 partitions and {} overrides copied; {} records, 0 missing, {dups} duplicates; {existing}: {} records, 0 missing, {dups_existing} duplicates, left at 2 partitions with warnings",
        configs.len(),
        recs.len(),
        recs_existing.len()
    );
}

#[test]
#[ignore = "needs clusters"]
fn create_topics_false_leaves_it_to_the_broker() {
    require_clusters!(source(), target());
    let topic = unique("brokerdefault");
    create_topic(&source(), &topic, 5, &[("retention.ms", "987654321")]);
    let recs = sample_records(&topic, 100);
    produce(&source(), &topic, &recs);
    let group = unique("group");
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &topic, &["--offset.commit.interval.ms", "1000", "--create.topics=false"]));
    wait_until("mirrored and committed", || all_committed(&source(), &group, &topic));
    assert_eq!(m.stop(), 0, "{}", m.output());
    // The test brokers auto-create with num.partitions=1 and no overrides, as MM1 got.
    assert_eq!(partitions_of(&target(), &topic), Some(1));
    assert!(topic_overrides(&target(), &topic).is_empty());
    assert_same_records(&topic, &recs, &read_topic(&target(), &topic));
    assert!(!m.output().contains("created target topic"));
}

/// A record's origin as the test wrote it.
fn origin_rec(origin: &str, topic: &str, from: usize, n: usize) -> Vec<Rec> {
    sample_records(topic, from + n)
        .into_iter()
        .skip(from)
        .map(|mut r| {
            r.headers.push(("origin".into(), origin.as_bytes().to_vec()));
            r
        })
        .collect()
}

fn origin_and_seq(r: &Rec) -> (String, u64) {
    let o = r.headers.iter().find(|(k, _)| k == "origin").map(|(_, v)| String::from_utf8_lossy(v).into_owned()).expect("origin header");
    (o, r.seq().expect("seq"))
}

#[test]
#[ignore = "needs clusters"]
fn active_active_without_loops() {
    require_clusters!(source(), target());
    let (a, b) = (source(), target());
    let (a_id, b_id) = (cluster_id(&a), cluster_id(&b));
    let topic = unique("aa");
    create_topic(&a, &topic, 3, &[]);
    create_topic(&b, &topic, 3, &[]);
    let (g_ab, g_ba) = (unique("ab"), unique("ba"));
    // The header that stops loops is asked for in both directions, as the README says.
    let opts = ["--offset.commit.interval.ms", "1000", "--topic.refresh.interval.ms", "2000", "--provenance.header", "true"];
    let mut ab = Mirror::start(&mirror_args(&a, &g_ab, &b, &topic, &opts));
    let mut ba = Mirror::start(&mirror_args(&b, &g_ba, &a, &topic, &opts));

    // Rounds of new records on both sides while both mirrors run.
    let (rounds, per_round) = (4, 400);
    let mut written: HashMap<(String, u64), Rec> = HashMap::new();
    for round in 0..rounds {
        for (name, cluster) in [("A", &a), ("B", &b)] {
            let recs = origin_rec(name, &topic, round * per_round, per_round);
            produce(cluster, &topic, &recs);
            for r in recs {
                written.insert(origin_and_seq(&r), r);
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let total = (2 * rounds * per_round) as i64;
    wait_until("both clusters hold every record and both groups committed", || {
        count(&a, &topic) >= total && count(&b, &topic) >= total && all_committed(&a, &g_ab, &topic) && all_committed(&b, &g_ba, &topic)
    });
    assert_eq!(ab.stop(), 0, "{}", ab.output());
    assert_eq!(ba.stop(), 0, "{}", ba.output());

    for (name, cluster, own_id, other, other_id) in [("A", &a, &a_id, "B", &b_id), ("B", &b, &b_id, "A", &a_id)] {
        let landed = read_topic(cluster, &topic);
        assert_eq!(landed.len() as i64, total, "cluster {name}: records written on both sides, each exactly once (no round trip, no duplicate)");
        let mut seen = HashSet::new();
        for l in &landed {
            let key = origin_and_seq(&l.rec);
            assert!(seen.insert(key.clone()), "cluster {name}: {key:?} twice");
            let prov = provenance_of(&l.rec);
            if key.0 == name {
                assert!(prov.is_empty(), "cluster {name}: its own record {key:?} came back with provenance {prov:?}");
            } else {
                assert_eq!(key.0, other);
                assert_eq!(&prov, &vec![other_id.clone()], "cluster {name}: record {key:?} from {other} must carry exactly one provenance header");
            }
            assert!(!prov.contains(own_id), "cluster {name}: {key:?} made the round trip");
            assert_eq!(without_provenance(&l.rec), written[&key], "cluster {name}: {key:?} differs");
        }
    }
    let (skip_ab, skip_ba) = (loop_skipped(&ab.output()), loop_skipped(&ba.output()));
    let per_side = (rounds * per_round) as u64;
    assert_eq!((skip_ab, skip_ba), (per_side, per_side), "each mirror skips exactly the records the other one wrote into its source");
    println!(
        "BEYOND active/active: {} records written on each side in {rounds} rounds; each cluster holds {total} (0 missing, 0 round trips); not copied back: A->B {skip_ab}, B->A {skip_ba}",
        per_side
    );
}

/// Java MM1 from the 3.9 jars, in its own process.
struct JavaMirror(Child);

impl JavaMirror {
    fn start(consumer: &std::path::Path, producer: &std::path::Path, topic: &str, log: &std::path::Path) -> JavaMirror {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-run");
        let file = std::fs::File::create(log).unwrap();
        let child = Command::new(script)
            .args([
                "mirror-maker",
                "--consumer.config",
                &path(consumer),
                "--producer.config",
                &path(producer),
                "--whitelist",
                topic,
                "--offset.commit.interval.ms",
                "1000",
            ])
            .env("KAFKA_HEAP_OPTS", "-Xmx256m")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("start Java MirrorMaker");
        JavaMirror(child)
    }

    /// SIGTERM (Java MM1 commits and leaves the group), then wait.
    fn stop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let deadline = Instant::now() + DEADLINE;
        while self.0.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "Java MirrorMaker did not stop");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for JavaMirror {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The partitions of the latest "assigned" line of our mirror's log.
fn last_assignment(log: &str) -> Option<usize> {
    let line = log.lines().rev().find(|l| l.contains("] assigned ") || l.contains("] released "))?;
    if line.contains("] released ") {
        return Some(0);
    }
    line.split("] assigned ").nth(1)?.split(' ').next()?.parse().ok()
}

/// `kafka-consumer-groups.sh --describe --state`: assignor, state, members.
fn group_state(group: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-run");
    let out = Command::new(script)
        .args(["consumer-groups", "--bootstrap-server", &source(), "--describe", "--group", group, "--state"])
        .stdin(Stdio::null())
        .output()
        .expect("run kafka-consumer-groups");
    // Words separated by single spaces, padded, so " range " matches a column.
    format!(" {} ", String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
#[ignore = "needs clusters"]
fn shares_a_group_with_java_mm1_and_takes_over() {
    require_clusters!(source(), target());
    let topic = unique("migrate");
    create_topic(&source(), &topic, 6, &[]);
    create_topic(&target(), &topic, 6, &[]);
    let group = unique("mm1group");
    let (cprops, pprops) = (consumer_props(&source(), &group), producer_props(&target()));
    let recs = sample_records(&topic, 3000);
    produce(&source(), &topic, &recs[..1000]);

    let java_log = std::env::temp_dir().join(format!("{}.log", unique("java-mm1")));
    let mut java = JavaMirror::start(&cprops, &pprops, &topic, &java_log);
    let java_out = || std::fs::read_to_string(&java_log).unwrap_or_default();
    wait_until("Java MM1 mirrored the first batch", || all_committed(&source(), &group, &topic));

    // Ours joins the same group with the same files: the group splits the
    // partitions (range). The provenance header tells whose copy is whose.
    let mut ours = Mirror::start(&[
        s("--consumer.config"),
        path(&cprops),
        s("--producer.config"),
        path(&pprops),
        s("--whitelist"),
        topic.clone(),
        s("--offset.commit.interval.ms"),
        s("1000"),
        s("--provenance.header"),
        s("true"),
    ]);
    wait_until("our mirror holds part of the partitions", || last_assignment(&ours.output()).is_some_and(|n| n > 0 && n < 6));
    let shared = last_assignment(&ours.output()).unwrap();
    // The protocol both sides picked: Java offers [range, cooperative-sticky], we offer range.
    let state = group_state(&group);
    assert!(state.contains(" range ") && state.contains(" Stable ") && state.contains(" 2 "), "group state:\n{state}");
    produce(&source(), &topic, &recs[1000..2000]);
    wait_until("second batch mirrored by both and committed", || all_committed(&source(), &group, &topic));
    let landed = read_topic(&target(), &topic);
    let by_ours = landed.iter().filter(|l| !provenance_of(&l.rec).is_empty()).count();
    let by_java = landed.iter().filter(|l| l.rec.seq().is_some_and(|s| s >= 1000) && provenance_of(&l.rec).is_empty()).count();
    assert!(by_ours > 0 && by_java > 0, "both mirrors must have copied part of the second batch: ours {by_ours}, Java {by_java}; Java's log:\n{}", java_out());

    // The Java instance goes away; its partitions move to ours.
    java.stop();
    wait_until("our mirror holds all 6 partitions", || last_assignment(&ours.output()) == Some(6));
    produce(&source(), &topic, &recs[2000..]);
    wait_until("third batch mirrored and committed by ours alone", || all_committed(&source(), &group, &topic));
    assert!(ours.alive(), "{}", ours.output());
    assert_eq!(ours.stop(), 0, "{}", ours.output());

    let landed = read_topic(&target(), &topic);
    let dups = assert_same_records_but_provenance(&topic, &recs, &landed);
    println!(
        "BEYOND migration: group {group} shared by Java MM1 (3.9 jars) and mirror-maker ({shared} of 6 partitions ours); second batch: {by_java} by Java, {by_ours} by ours; \
         Java stopped, all 6 partitions moved to ours; {} records, 0 missing, {dups} duplicates",
        recs.len()
    );
}

/// Samples the target's record count (sum of end offsets) until `n` have
/// arrived or `window` has passed since the first arrival.
fn sample_arrivals(topic: &str, window: Duration) -> Vec<(f64, i64)> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", target()).create().unwrap();
    let mut samples = Vec::new();
    let mut first: Option<Instant> = None;
    let give_up = Instant::now() + DEADLINE;
    loop {
        let parts = partitions_of(&target(), topic).unwrap_or(0);
        let n: i64 = (0..parts as i32).map(|p| c.fetch_watermarks(topic, p, Duration::from_secs(5)).map(|(_, h)| h).unwrap_or(0)).sum();
        let now = Instant::now();
        if n > 0 && first.is_none() {
            first = Some(now);
        }
        if let Some(f) = first {
            samples.push((now.duration_since(f).as_secs_f64(), n));
            if now.duration_since(f) >= window {
                return samples;
            }
        }
        assert!(Instant::now() < give_up || first.is_some(), "nothing arrived on the target");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Rate over the window after a 2 s warm-up, and the most arriving within
/// any span of at most one second.
fn rates(samples: &[(f64, i64)]) -> (f64, i64) {
    let start = samples.iter().find(|(t, _)| *t >= 2.0).unwrap();
    let end = samples.last().unwrap();
    let rate = (end.1 - start.1) as f64 / (end.0 - start.0);
    let mut peak = 0;
    for (i, (ti, ni)) in samples.iter().enumerate() {
        for (tj, nj) in &samples[i + 1..] {
            if tj - ti > 1.0 {
                break;
            }
            peak = peak.max(nj - ni);
        }
    }
    (rate, peak)
}

fn window() -> Duration {
    if std::env::var("MM_THROTTLE_LONG").is_ok_and(|v| v == "1") {
        Duration::from_secs(60)
    } else {
        Duration::from_secs(20)
    }
}

/// Runs a throttled mirror over a backlog and checks the rate it holds.
/// `unit` is how many throttled units one record is (1 for records/s,
/// its value size for bytes/s).
fn check_throttle(what: &str, option: &str, limit: u64, value_size: usize, unit: f64) {
    require(&source());
    require(&target());
    let topic = unique(&format!("throttle-{what}"));
    create_topic(&source(), &topic, 4, &[]);
    let per_sec = limit as f64 / unit;
    let backlog = (per_sec * (window().as_secs_f64() + 15.0)) as usize;
    let base = sample_records(&topic, 1)[0].timestamp.unwrap();
    let recs: Vec<Rec> = (0..backlog)
        .map(|i| Rec {
            key: None,
            value: Some(vec![b'v'; value_size]),
            headers: vec![("seq".into(), i.to_string().into_bytes())],
            timestamp: Some(base + i as i64),
        })
        .collect();
    produce(&source(), &topic, &recs);
    let group = unique("group");
    // About two seconds' worth of queue: stopping drains it at the throttled
    // rate too, and a much smaller one makes the partitions pause and resume
    // (refetching) all the time.
    let queue = ((per_sec * 2.0) as usize).max(100).to_string();
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &topic, &[option, &limit.to_string(), "--queue.size", &queue]));
    let samples = sample_arrivals(&topic, window());
    let (rate, peak) = rates(&samples);
    assert!(m.alive(), "{}", m.output());
    assert_eq!(m.stop(), 0, "{}", m.output());
    let (rate_units, peak_units) = (rate * unit, peak as f64 * unit);
    println!(
        "BEYOND throttle {option} {limit}: over {:.0} s (after 2 s warm-up) {rate_units:.0}/s = {:.3} x the limit; busiest span of <= 1 s: {peak_units:.0} = {:.2} x the limit",
        window().as_secs_f64() - 2.0,
        rate_units / limit as f64,
        peak_units / limit as f64
    );
    // The throttle is an upper bound: at most 10% over. Below, a noisy
    // 2-core machine may slow the mirror, so the floor is generous (half).
    assert!(rate_units <= limit as f64 * 1.10, "{what}: {rate_units:.0}/s is more than 10% over the limit {limit}");
    assert!(rate_units >= limit as f64 * 0.5, "{what}: {rate_units:.0}/s is under half the limit {limit}: the throttle holds back far too much");
    assert!(peak_units <= limit as f64 * 2.0, "{what}: {peak_units:.0} within one second, more than twice the limit {limit}");
}

#[test]
#[ignore = "needs clusters"]
fn throttle_records_per_sec_holds_the_rate() {
    require_clusters!();
    check_throttle("records", "--throttle.records.per.sec", 500, 100, 1.0);
}

#[test]
#[ignore = "needs clusters"]
fn throttle_bytes_per_sec_holds_the_rate() {
    require_clusters!();
    // 1000-byte values without keys: 100 records/s.
    check_throttle("bytes", "--throttle.bytes.per.sec", 100_000, 1000, 1000.0);
}

#[test]
#[ignore = "needs clusters"]
fn a_topic_found_while_the_target_is_down_waits_and_is_then_created_like_the_source() {
    // Uses the extra cluster as the target, since it stops it; no other test here touches it.
    require_clusters!(source(), extra());
    let id = unique("down");
    let (first, late) = (format!("{id}-first"), format!("{id}-late"));
    create_topic(&source(), &first, 2, &[]);
    let recs_first = sample_records(&first, 100);
    produce(&source(), &first, &recs_first);
    let group = unique("group");
    let mut m = Mirror::start(&mirror_args(
        &source(),
        &group,
        &extra(),
        &format!("{id}-.*"),
        &["--offset.commit.interval.ms", "1000", "--topic.refresh.interval.ms", "2000"],
    ));
    wait_until("first topic mirrored", || all_committed(&source(), &group, &first));

    broker("stop-broker", "extra");
    create_topic(&source(), &late, 7, &[("retention.ms", "876543210")]);
    let recs_late = sample_records(&late, 500);
    produce(&source(), &late, &recs_late);
    m.wait_for_log(&format!("topic {late}: cannot list the target's topics"));
    broker("start-broker", "extra");
    wait_until("late topic mirrored after the target came back", || partitions_of(&source(), &late).is_some() && all_committed(&source(), &group, &late));
    assert_eq!(m.stop(), 0, "{}", m.output());
    // Created by the mirror, not auto-created by the broker on the producer's first record.
    assert_eq!(partitions_of(&extra(), &late), Some(7));
    assert_eq!(topic_overrides(&extra(), &late).get("retention.ms").map(String::as_str), Some("876543210"));
    let dups = assert_same_records(&late, &recs_late, &read_topic(&extra(), &late));
    println!("BEYOND target down: a topic found meanwhile was held back, then created with 7 partitions and its retention.ms; 500 records, 0 missing, {dups} duplicates");
}
