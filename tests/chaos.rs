//! The fault suite against real brokers: kill -9 cycles, the target down,
//! the source restarted, SIGTERM under load (target up and down). Each
//! scenario prints records produced, mirrored, missing and duplicated, and
//! fails on any missing record. Scenarios stop and start brokers, so they
//! run one at a time (a process-wide lock), and `scripts/test` runs this
//! binary after the others. `scripts/chaos` runs it alone.
//!
//! MM_CHAOS_RECORDS (default 500000) sizes the kill -9 run; MM_CHAOS_OUTAGE_SECS
//! (default 60) is how long the target stays down.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;

static SERIAL: Mutex<()> = Mutex::new(());

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn mirror(group: &str, topic: &str, extra: &[&str]) -> Mirror {
    let mut opts = vec!["--offset.commit.interval.ms", "1000"];
    opts.extend_from_slice(extra);
    Mirror::start(&mirror_args(&source(), group, &target(), topic, &opts))
}

/// Reads the target and reports; panics on any missing record.
fn verify(scenario: &str, topic: &str, recs: &[Rec], extra: &str) {
    let landed = read_topic(&target(), topic);
    let dups = assert_same_records(topic, recs, &landed);
    println!("CHAOS {scenario}: produced {}, mirrored {} distinct, missing 0, duplicates {dups}{extra}", recs.len(), recs.len());
}

fn seq_records(topic: &str, from: usize, n: usize) -> Vec<Rec> {
    sample_records(topic, from + n).split_off(from)
}

#[test]
#[ignore = "needs clusters"]
fn s1_kill_minus_nine_cycles_lose_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let n = env_num("MM_CHAOS_RECORDS", 500_000) as usize;
    let t = unique("chaos-kill");
    create_topic(&source(), &t, 4, &[]);
    let recs = sample_records(&t, n);
    produce(&source(), &t, &recs);
    let group = unique("kill");
    // Static membership, as the README recommends for restarts: the restarted
    // mirror gets its partitions back at once instead of waiting for the
    // killed member's session to expire.
    let consumer = props(
        "consumer.properties",
        &[format!("bootstrap.servers={}", source()), format!("group.id={group}"), format!("group.instance.id={group}-member"), s("session.timeout.ms=10000")],
    );
    let args = vec![
        s("--consumer.config"),
        path(&consumer),
        s("--producer.config"),
        path(&producer_props(&target())),
        s("--whitelist"),
        t.clone(),
        s("--offset.commit.interval.ms"),
        s("500"),
    ];
    let started = Instant::now();
    kill_cycles("s1", &args, &group, &t);
    verify("s1 kill -9 x10", &t, &recs, &format!(", total {:.1}s", started.elapsed().as_secs_f64()));
}

/// Ten cycles of: start the mirror, wait for the source group to move,
/// `kill -9` it at a random moment while records flow; then one more start
/// that catches up and stops cleanly. The group's offsets never go back.
fn kill_cycles(label: &str, args: &[String], group: &str, topic: &str) {
    let mut last = 0;
    for cycle in 0..10 {
        let mut m = Mirror::start(args);
        wait_until("progress since the last kill", || {
            let (c, e) = progress(&source(), group, topic);
            c > last || c == e
        });
        let wait = jitter(0, 700);
        std::thread::sleep(Duration::from_millis(wait));
        m.signal("KILL");
        let code = m.wait();
        let (c, e) = progress(&source(), group, topic);
        println!("CHAOS {label}: cycle {cycle}: kill -9 {wait} ms after progress (exit {code}), committed {c} of {e}");
        assert!(c >= last, "committed offsets went backwards");
        last = c;
    }
    let mut m = Mirror::start(args);
    wait_until("mirror catches up after the kills", || all_committed(&source(), group, topic));
    assert_eq!(m.stop(), 0, "{}", m.output());
}

/// s1 with exactly-once on (MirrorMaker 2 mode,
/// `exactly.once.source.support = enabled`): the same ten kill -9 under
/// load, then the target read `read_committed`, as its consumers would:
/// every record once. Printed beside s1's duplicates.
#[test]
#[ignore = "needs clusters"]
fn s1e_kill_minus_nine_cycles_with_exactly_once_copy_each_record_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let n = env_num("MM_CHAOS_RECORDS", 500_000) as usize;
    let t = unique("chaos-eos");
    create_topic(&source(), &t, 4, &[]);
    let recs = sample_records(&t, n);
    produce(&source(), &t, &recs);
    let (a, b) = (format!("S{}", short_id()), format!("T{}", short_id()));
    let extra = [format!("{b}.exactly.once.source.support = enabled"), format!("{a}.consumer.isolation.level = read_committed")];
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &t, &extra));
    let args = [s("--mm2.config"), path(&file)];
    let group = format!("mm2.{a}->{b}");
    let remote = format!("{a}.{t}");
    let started = Instant::now();
    kill_cycles("s1e", &args, &group, &t);
    // The last killed process may have left a transaction open: its
    // records are aborted by the coordinator after transaction.timeout.ms
    // (10 s), and until then read_committed stops short of everything
    // after them (the survivors' committed copies included).
    wait_until("no transaction left open by a killed process on the remote topic", || no_open_transaction(&target(), &remote));
    let landed = read_topic_committed(&target(), &remote);
    let dups = assert_same_records(&remote, &recs, &landed);
    println!(
        "CHAOS s1e kill -9 x10, exactly-once: produced {}, read_committed {} distinct, missing 0, duplicates {dups}, total {:.1}s",
        recs.len(),
        recs.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(dups, 0, "exactly-once: {dups} records on the target twice");
}

#[test]
#[ignore = "needs clusters"]
fn s2_target_down_then_back_loses_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let outage = env_num("MM_CHAOS_OUTAGE_SECS", 60);
    let t = unique("chaos-target");
    create_topic(&source(), &t, 4, &[]);
    let mut recs = sample_records(&t, 100_000);
    produce(&source(), &t, &recs);
    let group = unique("tdown");
    let mut m = mirror(&group, &t, &["--stats.interval.ms", "2000"]);
    wait_until("some progress", || progress(&source(), &group, &t).0 > 0);
    broker("stop-broker", "target");
    let more = seq_records(&t, 100_000, 100_000);
    produce(&source(), &t, &more);
    recs.extend(more);
    let down_at = Instant::now();
    while down_at.elapsed() < Duration::from_secs(outage) {
        assert!(m.alive(), "the mirror exited while the target was down:\n{}", m.output());
        std::thread::sleep(Duration::from_millis(500));
    }
    let rss_down_mb = m.peak_rss_kb() / 1024;
    // The stats line shows the backlog building up while nothing goes out:
    // at least the 100,000 records written during the outage are uncommitted.
    let lag_of = |l: &str| l.split("lag ").nth(1).and_then(|r| r.split(',').next()?.parse::<i64>().ok());
    let out = m.output();
    let outage_line = out
        .lines()
        .filter(|l| l.contains("stats: in ") && l.contains("out 0 records/s"))
        .find(|l| lag_of(l).is_some_and(|lag| lag >= 100_000))
        .unwrap_or_else(|| panic!("no stats line during the outage showed the backlog:\n{out}"))
        .to_string();
    broker("start-broker", "target");
    let back = Instant::now();
    wait_until("catch-up after the target returned", || all_committed(&source(), &group, &t));
    let catch_up = back.elapsed();
    assert!(m.alive(), "{}", m.output());
    let peak_mb = m.peak_rss_kb() / 1024;
    assert_eq!(m.stop(), 0, "{}", m.output());
    // Bounded by --queue.size and the producer buffer (4 MiB), not by the backlog.
    assert!(peak_mb < 400, "peak RSS {peak_mb} MiB exceeds the documented 400 MiB bound");
    verify(
        "s2 target down",
        &t,
        &recs,
        &format!(
            ", outage {outage}s, caught up {:.1}s after the target returned, peak RSS {peak_mb} MiB ({rss_down_mb} MiB during the outage); during the outage: {}",
            catch_up.as_secs_f64(),
            outage_line.split("stats: ").nth(1).unwrap_or_default()
        ),
    );
}

#[test]
#[ignore = "needs clusters"]
fn s3_source_restart_loses_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("chaos-source");
    create_topic(&source(), &t, 4, &[]);
    let mut recs = sample_records(&t, 100_000);
    produce(&source(), &t, &recs);
    let group = unique("sdown");
    let mut m = mirror(&group, &t, &[]);
    wait_until("some progress", || progress(&source(), &group, &t).0 > 0);
    broker("restart-broker", "source");
    let more = seq_records(&t, 100_000, 100_000);
    produce(&source(), &t, &more);
    recs.extend(more);
    wait_until("catch-up after the source restart", || all_committed(&source(), &group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    verify("s3 source restart", &t, &recs, "");
}

#[test]
#[ignore = "needs clusters"]
fn s4_sigterm_under_load_with_target_up_and_down() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("chaos-term");
    create_topic(&source(), &t, 4, &[]);
    let mut recs = sample_records(&t, 300_000);
    produce(&source(), &t, &recs);
    let group = unique("term");

    // Target up: a clean exit 0 well within 30 s.
    let mut m = mirror(&group, &t, &[]);
    wait_until("some progress", || progress(&source(), &group, &t).0 > 0);
    let t0 = Instant::now();
    assert_eq!(m.stop(), 0, "{}", m.output());
    let up_exit = t0.elapsed();
    assert!(up_exit < Duration::from_secs(30), "SIGTERM took {up_exit:?}");

    // Target down: exit within the drain timeout, status 3, nothing undelivered committed.
    let mut m = mirror(&group, &t, &["--drain.timeout.ms", "5000"]);
    m.wait_for_log("assigned 4 partitions");
    broker("stop-broker", "target");
    let more = seq_records(&t, 300_000, 50_000);
    produce(&source(), &t, &more);
    recs.extend(more);
    let t1 = Instant::now();
    let code = m.stop();
    let down_exit = t1.elapsed();
    assert!(down_exit < Duration::from_secs(5 + 25), "exit took {down_exit:?} with a 5 s drain timeout:\n{}", m.output());
    assert_eq!(code, 3, "undelivered records at the drain deadline must give exit 3:\n{}", m.output());
    broker("start-broker", "target");

    // After a restart: 0 missing.
    let mut m = mirror(&group, &t, &[]);
    wait_until("catch-up after restart", || all_committed(&source(), &group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    verify(
        "s4 SIGTERM",
        &t,
        &recs,
        &format!(
            ", exit 0 in {:.1}s with the target up; exit {code} in {:.1}s with the target down (drain timeout 5s)",
            up_exit.as_secs_f64(),
            down_exit.as_secs_f64()
        ),
    );
}

#[test]
#[ignore = "needs clusters"]
fn s8_retention_gap_is_reported_with_its_size() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("chaos-gap");
    create_topic(&source(), &t, 1, &[]);
    let recs = sample_records(&t, 200);
    produce(&source(), &t, &recs[..100]);
    let group = unique("gap");
    let mut m = mirror(&group, &t, &[]);
    wait_until("first 100 committed", || progress(&source(), &group, &t) == (100, 100));
    assert_eq!(m.stop(), 0, "{}", m.output());
    // While the mirror is stopped, retention (here: DeleteRecords) passes the committed offset.
    produce(&source(), &t, &recs[100..]);
    delete_records_before(&source(), &t, 150);
    let mut m = mirror(&group, &t, &[]);
    wait_until("caught up after the gap", || progress(&source(), &group, &t) == (200, 200));
    assert_eq!(m.stop(), 0, "{}", m.output());
    let log = m.output();
    assert!(log.contains(&format!("GAP in {t}-0: the group's committed offset 100")) && log.contains("50 offsets were deleted"), "{log}");
    assert!(log.contains("50 offsets lost to source retention"), "{log}");
    let landed = read_topic(&target(), &t);
    let mut seqs: Vec<u64> = landed.iter().filter_map(|l| l.rec.seq()).collect();
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs, (0..100).chain(150..200).collect::<Vec<u64>>());
    println!("CHAOS s8 retention gap: 200 produced, 50 deleted by retention while stopped, reported as a 50-offset GAP (error log + counter); the other 150 mirrored, 0 missing");
}

fn delete_records_before(bootstrap: &str, topic: &str, offset: i64) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let mut list = TopicPartitionList::new();
    list.add_partition_offset(topic, 0, Offset::Offset(offset)).unwrap();
    block_on(admin.delete_records(&list, &AdminOptions::new())).expect("delete records");
}

#[test]
#[ignore = "needs clusters"]
fn s5_group_churn_loses_nothing() {
    require_clusters!();
    churn("range (eager)", None);
}

#[test]
#[ignore = "needs clusters"]
fn s5_group_churn_with_cooperative_sticky_loses_nothing() {
    require_clusters!();
    churn("cooperative-sticky", Some(COOPERATIVE_STICKY));
}

/// Java's cooperative assignor, as a consumer file names it.
const COOPERATIVE_STICKY: &str = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";

/// A consumer file for the source in `group`, with the assignor given
/// (range, the default, when none is).
fn group_consumer_props(group: &str, assignor: Option<&str>) -> std::path::PathBuf {
    let mut lines = vec![format!("bootstrap.servers={}", source()), format!("group.id={group}")];
    if let Some(a) = assignor {
        lines.push(format!("partition.assignment.strategy={a}"));
    }
    props("consumer.properties", &lines)
}

fn churn(label: &str, assignor: Option<&str>) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require(&source());
    require(&target());
    let t = unique("chaos-churn");
    create_topic(&source(), &t, 6, &[]);
    let mut recs = sample_records(&t, 100_000);
    produce(&source(), &t, &recs);
    let group = unique("churn");
    let consumer = group_consumer_props(&group, assignor);
    let member = || {
        Mirror::start(&[
            s("--consumer.config"),
            path(&consumer),
            s("--producer.config"),
            path(&producer_props(&target())),
            s("--whitelist"),
            t.clone(),
            s("--offset.commit.interval.ms"),
            s("1000"),
        ])
    };
    let mut a = member();
    let mut b = member();
    wait_until("some progress", || progress(&source(), &group, &t).0 > 0);
    let mut c = member();
    wait_until("the third member owns partitions", || c.output().contains("assigned "));
    let more = seq_records(&t, 100_000, 100_000);
    produce(&source(), &t, &more);
    recs.extend(more);
    assert_eq!(a.stop(), 0, "{}", a.output());
    wait_until("catch-up after the churn", || all_committed(&source(), &group, &t));
    assert_eq!(b.stop(), 0, "{}", b.output());
    assert_eq!(c.stop(), 0, "{}", c.output());
    let landed = read_topic(&target(), &t);
    let dups = assert_same_records(&t, &recs, &landed);
    // Revoked partitions are drained and committed before they move, so a
    // clean join or leave duplicates nothing. Seen once under CI-like load
    // (1 duplicate, 0 missing, #27): the members' warnings and rebalance
    // lines are what tells which step let it through.
    let evidence = |name: &str, out: String| -> String {
        let lines: Vec<&str> =
            out.lines().filter(|l| l.contains(" WARN ") || l.contains("ERROR") || l.contains("released ") || l.contains("assigned ")).collect();
        format!("--- member {name}:\n{}", lines.join("\n"))
    };
    assert_eq!(
        dups,
        0,
        "duplicates after clean joins and leaves; which records (seq per partition) landed more than once and the members' warnings:\n{}\n{}\n{}\n{}",
        duplicated(&landed),
        evidence("a", a.output()),
        evidence("b", b.output()),
        evidence("c", c.output())
    );
    println!(
        "CHAOS s5 group churn ({label}): produced {}, mirrored {} distinct, missing 0, duplicates {dups} (two members, a third joined, one left)",
        recs.len(),
        recs.len()
    );
}

/// Item 2.1 of the fault review: partitions paused while the target is
/// away, then a rebalance. librdkafka keeps an application pause across
/// unassign and assign; a partition given up (or kept) paused with nothing
/// left to resume it would never be read again, silently. Every record
/// must arrive once the target is back, with the eager and the cooperative
/// protocol.
#[test]
#[ignore = "needs clusters"]
fn s9_paused_partitions_survive_a_rebalance() {
    require_clusters!();
    paused_then_rebalanced("range (eager)", None);
}

#[test]
#[ignore = "needs clusters"]
fn s9_paused_partitions_survive_a_cooperative_rebalance() {
    require_clusters!();
    paused_then_rebalanced("cooperative-sticky", Some(COOPERATIVE_STICKY));
}

fn paused_then_rebalanced(label: &str, assignor: Option<&str>) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require(&source());
    require(&target());
    let t = unique("chaos-paused");
    create_topic(&source(), &t, 6, &[]);
    create_topic(&target(), &t, 6, &[]);
    let mut recs = sample_records(&t, 10_000);
    produce(&source(), &t, &recs);
    let group = unique("paused");
    let consumer = group_consumer_props(&group, assignor);
    // A small channel and producer buffer fill within seconds of the
    // target going away, so the stream holds batches and pauses partitions.
    let producer = props("producer.properties", &[format!("bootstrap.servers={}", target()), "queue.buffering.max.messages=1000".into()]);
    let member = || {
        Mirror::start(&[
            s("--consumer.config"),
            path(&consumer),
            s("--producer.config"),
            path(&producer),
            s("--whitelist"),
            t.clone(),
            s("--offset.commit.interval.ms"),
            s("1000"),
            s("--queue.size"),
            s("200"),
            s("--drain.timeout.ms"),
            s("3000"),
            // Without topic sync, which waits for the target before it
            // subscribes: the second member joins while the target is away.
            s("--stats.interval.ms"),
            s("1000"),
            s("--create.topics"),
            s("false"),
            s("--sync.partitions"),
            s("false"),
        ])
    };
    let mut a = member();
    wait_until("first records committed", || all_committed(&source(), &group, &t));
    broker("stop-broker", "target");
    let more = seq_records(&t, 10_000, 30_000);
    produce(&source(), &t, &more);
    recs.extend(more);
    // Read, held and paused: the stats line shows the backlog with nothing going out.
    wait_until("the first member holds a backlog it cannot send", || {
        a.output().lines().any(|l| l.contains("stats: in ") && l.contains("out 0 records/s") && !l.contains("in flight 0,"))
    });
    let mut b = member();
    wait_until("the second member owns partitions", || b.output().contains("assigned "));
    // Eager: it gave up all and got half back; cooperative: it gave up half.
    wait_until("the first member gave up partitions it held paused", || a.output().contains("] released "));
    broker("start-broker", "target");
    wait_until("every record mirrored and committed after the target returned", || {
        assert!(a.alive() && b.alive(), "a member exited:\n{}\n{}", a.output(), b.output());
        all_committed(&source(), &group, &t)
    });
    assert_eq!(a.stop(), 0, "{}", a.output());
    assert_eq!(b.stop(), 0, "{}", b.output());
    verify(&format!("s9 paused then rebalanced ({label})"), &t, &recs, ", target down while a second member joined");
}

#[test]
#[ignore = "needs clusters"]
fn s7_target_topic_deleted_with_auto_create_off_is_a_clear_error() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), extra());
    broker_with("restart-broker", "extra", &[("MM_CLUSTER_EXTRA_PROPS_EXTRA", "auto.create.topics.enable=false")]);
    let t = unique("chaos-deleted");
    create_topic(&source(), &t, 2, &[]);
    create_topic(&extra(), &t, 2, &[]);
    let recs = sample_records(&t, 20_000);
    produce(&source(), &t, &recs[..10_000]);
    let group = unique("deleted");
    // librdkafka declares a topic gone only once it has been known for
    // topic.metadata.propagation.max.ms (ours: 5 minutes, so that a broker
    // slow to show thousands of new topics is waited for); a topic deleted
    // seconds after the start would hold the error that long. A topic
    // known for longer is declared gone at once, as here with 30 s.
    let producer = props("producer.properties", &[format!("bootstrap.servers={}", extra()), "topic.metadata.propagation.max.ms=30000".into()]);
    let args = vec![
        s("--consumer.config"),
        path(&consumer_props(&source(), &group)),
        s("--producer.config"),
        path(&producer),
        s("--whitelist"),
        t.clone(),
        s("--offset.commit.interval.ms"),
        s("500"),
        // MM1's behaviour: the target broker decides about topics. With
        // topic creation on (the default) a deleted target topic is made
        // again like the source and the mirror goes on (tests/checkpoints
        // a_target_topic_deleted_and_made_again_never_makes_a_translation_skip).
        s("--create.topics"),
        s("false"),
    ];
    let mut m = Mirror::start(&args);
    wait_until("first half committed", || progress(&source(), &group, &t) == (10_000, 10_000));
    delete_topic(&extra(), &t);
    produce(&source(), &t, &recs[10_000..]);
    let code = m.wait();
    let log = m.output();
    assert_eq!(code, 255, "{log}");
    assert!(log.contains(&format!("Error when sending message to topic {t}")) && log.contains("does not exist on the target"), "{log}");
    let (committed, end) = progress(&source(), &group, &t);
    assert!(committed < end, "records that could not be delivered were committed");
    // The operator recreates the topic and restarts: nothing was lost.
    create_topic(&extra(), &t, 2, &[]);
    let mut m = Mirror::start(&args);
    wait_until("second half committed", || progress(&source(), &group, &t) == (20_000, 20_000));
    assert_eq!(m.stop(), 0, "{}", m.output());
    let landed = read_topic(&extra(), &t);
    let mut seqs: Vec<u64> = landed.iter().filter_map(|l| l.rec.seq()).collect();
    seqs.sort();
    seqs.dedup();
    assert!((10_000..20_000).all(|s| seqs.binary_search(&s).is_ok()), "records after the deletion are missing");
    broker("restart-broker", "extra");
    println!("CHAOS s7 target topic deleted (auto-create off): exit 255 naming the topic, committed {committed} of {end} (nothing undelivered committed); after recreating it, all 10000 later records mirrored");
}

fn delete_topic(bootstrap: &str, topic: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    for r in block_on(admin.delete_topics(&[topic], &AdminOptions::new())).unwrap() {
        r.unwrap_or_else(|(t, e)| panic!("delete {t}: {e}"));
    }
    wait_until("topic gone", || partitions_of(bootstrap, topic).is_none());
}

/// Starts the target broker again when dropped: a scenario that fails while
/// the target is down must not leave it down for the scenarios after it.
struct TargetBackOnDrop(bool);

impl TargetBackOnDrop {
    fn stop_target() -> TargetBackOnDrop {
        broker("stop-broker", "target");
        TargetBackOnDrop(true)
    }

    fn start_target(&mut self) {
        broker("start-broker", "target");
        self.0 = false;
    }
}

impl Drop for TargetBackOnDrop {
    fn drop(&mut self) {
        if self.0 {
            broker("start-broker", "target");
        }
    }
}

/// Issue #26 item 5: in partition-preserving mode a source topic that
/// grows while the target is down. The check that the target has every
/// source partition could not reach the target, and that one failed
/// metadata request stopped the mirror (exit 255) as if the target lacked
/// the partitions. An outage is waited out like every other one: the check
/// is made again at each topic refresh, the new partitions are mirrored
/// once the target has them, each record in its source partition.
#[test]
#[ignore = "needs clusters"]
fn s10_partition_preserving_source_grown_while_the_target_is_down() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("chaos-pp-grow-down");
    create_topic(&source(), &t, 2, &[]);
    let recs = sample_records(&t, 1200);
    // Record i goes to partition (i / 200) % 4: 0 and 1 before the growth,
    // then 2, 3, 0 and 1 again after it.
    let partition_of = |seq: u64| ((seq / 200) % 4) as i32;
    produce_to(&source(), &t, Some(0), &recs[..200]);
    produce_to(&source(), &t, Some(1), &recs[200..400]);
    let group = unique("pp-grow-down");
    let mut m = mirror(&group, &t, &["--message.handler", "partition-preserving", "--topic.refresh.interval.ms", "1000"]);
    wait_until("the first records mirrored and committed", || all_committed(&source(), &group, &t));

    let mut target_down = TargetBackOnDrop::stop_target();
    add_partitions(&source(), &t, 4);
    for (i, chunk) in recs[400..].chunks(200).enumerate() {
        produce_to(&source(), &t, Some(((i + 2) % 4) as i32), chunk);
    }
    // A topic refresh that found the growth and could not ask the target.
    let unanswered = "partition-preserving: the target did not answer";
    wait_until("a partition check that could not reach the target", || !m.alive() || m.output().contains(unanswered));
    assert!(m.alive(), "the mirror exited while the target was down (before the fix: exit 255):\n{}", m.output());
    // Another refresh or two against the stopped target, still running.
    let log_len = m.output().len();
    wait_until("a later topic refresh while the target is still down", || !m.alive() || m.output()[log_len..].contains("cannot list the target's topics"));
    assert!(m.alive(), "the mirror exited while the target was down:\n{}", m.output());
    target_down.start_target();

    wait_until("every record mirrored and committed after the target returned", || {
        assert!(m.alive(), "the mirror exited after the target returned:\n{}", m.output());
        let ce = committed_and_end(&source(), &group, &t);
        ce.len() == 4 && ce.iter().all(|(_, c, e)| *c == Some(*e))
    });
    assert_eq!(partitions_of(&target(), &t), Some(4), "the topic sync grew the target topic");
    let code = m.stop();
    let log = m.output();
    assert_eq!(code, 0, "{log}");
    let landed = read_topic(&target(), &t);
    for l in &landed {
        let seq = l.rec.seq().unwrap();
        assert_eq!(l.partition, partition_of(seq), "seq {seq} landed in partition {}", l.partition);
    }
    verify("s10 partition-preserving, source grown 2 -> 4 while the target was down", &t, &recs, ", exit 0, each record in its source partition");
}

/// Issue #26 item 7 (part c): a clean stop is not held by a control turn
/// in progress. The control thread's requests wait on brokers (here the
/// topic sync's listing of the stopped target, 15 s, at every topic
/// refresh while the source topic's growth is unchecked); the stream
/// joined it after its final commit, so a SIGTERM during such a request
/// waited for it, past the drain timeout (1 s here) plus the 5 s of grace,
/// and the mirror exited 3 ("consumer streams still committing or leaving
/// the source group") though everything was delivered and committed.
/// Nothing is in flight at the SIGTERM (nothing was produced since the
/// target went down), so the clean status is 0.
#[test]
#[ignore = "needs clusters"]
fn s11_sigterm_during_a_slow_control_turn_is_a_clean_stop() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("chaos-slow-turn");
    create_topic(&source(), &t, 2, &[]);
    let recs = sample_records(&t, 400);
    produce(&source(), &t, &recs);
    let group = unique("slow-turn");
    let mut m = mirror(&group, &t, &["--message.handler", "partition-preserving", "--topic.refresh.interval.ms", "1000", "--drain.timeout.ms", "1000"]);
    wait_until("every record mirrored and committed", || all_committed(&source(), &group, &t));

    let mut target_down = TargetBackOnDrop::stop_target();
    // Every refresh from now on asks the stopped target about the growth.
    add_partitions(&source(), &t, 4);
    m.wait_for_log("partition-preserving: the target did not answer");
    // The next refresh follows at once (its interval has long passed) and
    // waits on the target again, in a thread of its own (named ask-<stream>,
    // "ask-mirrormaker" as Linux keeps it). Seen in two looks 300 ms apart,
    // it is in the 15 s listing of the target, not in the source's listing
    // of a few milliseconds before it. The log line asserted below, written
    // only when the stop finds such a request in progress, shows the
    // SIGTERM came during one.
    wait_until("a request of the control thread in progress", || {
        let before = threads_named(m.pid(), "ask-mirrormaker");
        std::thread::sleep(Duration::from_millis(300));
        before > 0 && threads_named(m.pid(), "ask-mirrormaker") > 0
    });
    m.signal("TERM");
    let code = m.wait();
    let log = m.output();
    target_down.start_target();
    assert_eq!(code, 0, "a clean stop (everything delivered and committed) held by the control thread's request (before the fix: exit 3):\n{log}");
    let at = |needle: &str| log.find(needle).unwrap_or_else(|| panic!("'{needle}' not in the log:\n{log}"));
    let interrupted = at("not waiting for the control thread's request");
    let commit = at("Committing consumer offsets.");
    let stopped = at("Mirror maker thread stopped");
    assert!(commit < stopped && interrupted < stopped, "the final commit, then the stream's end:\n{log}");
    assert!(!log.contains("still committing or leaving the source group"), "{log}");
    // The two partitions added are empty, so have no commit of their own.
    let (committed, end) = progress(&source(), &group, &t);
    assert_eq!(committed, end, "everything committed at the stop");
    verify("s11 SIGTERM during a slow control turn", &t, &recs, ", exit 0 with the control thread waiting on the stopped target");
}

/// How many threads of process `pid` are named `name` (as /proc shows the
/// names: at most 15 bytes).
fn threads_named(pid: u32, name: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok()).filter(|comm| comm.trim_end() == name).count()
}

/// The (partition, seq) of every record that landed more than once, with
/// its count.
fn duplicated(landed: &[Landed]) -> String {
    let mut n: std::collections::BTreeMap<(i32, u64), usize> = std::collections::BTreeMap::new();
    for l in landed {
        if let Some(seq) = l.rec.seq() {
            *n.entry((l.partition, seq)).or_insert(0) += 1;
        }
    }
    let twice: Vec<String> = n.into_iter().filter(|(_, k)| *k > 1).map(|((p, seq), k)| format!("partition {p} seq {seq} x{k}")).collect();
    twice.join(", ")
}
