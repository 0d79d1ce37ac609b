//! End-to-end: a flow moved from Java MirrorMaker 2 (dedicated mode,
//! scripts/java-mm2) to `mirror-maker --mm2.config` on the same file, and
//! back again with `--mm2.write.connect.offsets true`, then to ours once
//! more, between real Kafka 3.9 clusters (`scripts/clusters start`, see
//! tests/common); and a take-over from positions Java wrote in
//! transactions, some aborted or left open.
//!
//! Each move is judged on the target by the records' values (each value is
//! written once at the source): none missing, and duplicates counted and
//! printed. A duplicate is allowed only inside the window the mirror that
//! stopped had copied but not yet written as its position (Java's
//! unflushed window; ours, at the stop, none), which is measured, not
//! assumed.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use common::*;
use mirror_maker::engine::mm2::connect_offsets::{partition_of, read_positions};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

/// Java needs 20-30 s to its first record on an idle machine, more on a
/// loaded one.
const MM2_DEADLINE: Duration = Duration::from_secs(240);

/// `n` keyed records numbered from `from`, each value unique in the test.
fn records(topic: &str, from: usize, n: usize) -> Vec<Rec> {
    (from..from + n)
        .map(|i| Rec { key: Some(format!("key-{}", i % 31).into_bytes()), value: Some(format!("{topic}:{i}").into_bytes()), headers: vec![], timestamp: None })
        .collect()
}

/// Java's positions of `topic` in the flow's Connect offsets (partition ->
/// last replicated offset), read with the mirror's own reader, whose bytes
/// the unit tests hold against a real Java MM2 run.
fn java_positions(alias: &str, topic: &str) -> BTreeMap<i32, i64> {
    let mut cfg = ClientConfig::new();
    cfg.set("bootstrap.servers", target());
    let offsets_topic = format!("mm2-offsets.{alias}.internal");
    match read_positions(&cfg, &offsets_topic, "MirrorSourceConnector", alias, &|| false) {
        Ok(Some(positions)) => positions.offsets.into_iter().filter(|((t, _), _)| t == topic).map(|((_, p), o)| (p, o)).collect(),
        Ok(None) => BTreeMap::new(),
        Err(e) => panic!("read {offsets_topic}: {e}"),
    }
}

/// Records the positions cover: the sum of (position + 1) over partitions.
fn covered(positions: &BTreeMap<i32, i64>) -> i64 {
    positions.values().map(|o| o + 1).sum()
}

/// Whether the positions name the last record of every source partition.
fn positions_at_end(positions: &BTreeMap<i32, i64>, ends: &[i64]) -> bool {
    ends.iter().enumerate().all(|(p, end)| *end == 0 || positions.get(&(p as i32)) == Some(&(end - 1)))
}

/// What the target holds against what the source was given: (missing
/// values, duplicated copies), with examples of each printed.
fn judge(what: &str, remote: &str, produced: &[Rec]) -> (usize, usize) {
    judge_landed(what, read_topic(&target(), remote), produced)
}

/// [`judge`] of what a read_committed consumer of the target sees.
fn judge_committed(what: &str, remote: &str, produced: &[Rec]) -> (usize, usize) {
    judge_landed(&format!("{what} (read_committed)"), read_topic_committed(&target(), remote), produced)
}

fn judge_landed(what: &str, landed: Vec<Landed>, produced: &[Rec]) -> (usize, usize) {
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for l in landed {
        *seen.entry(l.rec.value.unwrap_or_default()).or_default() += 1;
    }
    let missing: Vec<String> =
        produced.iter().filter_map(|r| r.value.as_ref()).filter(|v| !seen.contains_key(*v)).map(|v| String::from_utf8_lossy(v).into_owned()).collect();
    let mut dups: Vec<(String, usize)> = seen.iter().filter(|(_, n)| **n > 1).map(|(v, n)| (String::from_utf8_lossy(v).into_owned(), *n)).collect();
    dups.sort();
    let extra: usize = dups.iter().map(|(_, n)| n - 1).sum();
    println!(
        "{what}: {} produced, {} missing {:?}, {extra} duplicate copies {:?}",
        produced.len(),
        missing.len(),
        &missing[..missing.len().min(10)],
        &dups[..dups.len().min(20)]
    );
    (missing.len(), extra)
}

#[test]
#[ignore = "needs clusters"]
fn take_over_from_java_mm2_and_hand_back() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("tko-{id}");
    let remote = format!("{a}.{topic}");
    let group = format!("mm2.{a}->{b}");
    let offsets_topic = format!("mm2-offsets.{a}.internal");
    // Java's Connect worker flushes its positions every second (per target cluster).
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &topic, &[format!("{b}.offset.flush.interval.ms = 1000")]));
    let (n, m, k) = (3000, 2000, 500);
    create_topic(&source(), &topic, 3, &[]);
    let mut produced = records(&topic, 0, n);
    produce(&source(), &topic, &produced);

    // 1. Java MM2 copies N, its Connect offsets cover them, then SIGTERM.
    let mut java = JavaMm2::start(&file);
    let ends = end_offsets(&source(), &topic).expect("source topic");
    wait_for("Java MM2 to copy every record and flush its positions", MM2_DEADLINE, || {
        assert!(java.alive(), "Java MM2 exited early:\n{}", java.output());
        count_records(&target(), &remote) >= n as i64 && positions_at_end(&java_positions(&a, &topic), &ends)
    });
    // The JVM exits 143 on SIGTERM after its shutdown hooks ran: not checked.
    let java_exit = java.stop();
    // Java's last unflushed window: copied, but not in its final positions.
    let java_window = (count_records(&target(), &remote) - covered(&java_positions(&a, &topic))).max(0) as usize;

    // 2. N more records; ours on the same file continues from Java's positions.
    produced.extend(records(&topic, n, m));
    produce(&source(), &topic, &produced[n..]);
    let mut ours = Mirror::start(&[s("--mm2.config"), path(&file)]);
    wait_for("ours to copy and commit the rest", MM2_DEADLINE, || {
        assert!(ours.alive(), "ours exited early:\n{}", ours.output());
        committed_and_end(&source(), &group, &topic).iter().all(|(_, c, end)| *c == Some(*end))
    });
    assert_eq!(ours.stop(), 0, "ours' exit status on SIGTERM:\n{}", ours.output());
    let log = ours.output();
    let took_over = log.lines().find(|l| l.contains("continue from Java MirrorMaker 2's offsets")).unwrap_or("(no take-over line)").to_string();
    let (missing_in, dups_in) = judge("java -> ours", &remote, &produced);

    // 3. Ours with the hand-back option copies M more and stops; its
    // positions are then in Java's Connect offsets.
    produced.extend(records(&topic, n + m, m));
    produce(&source(), &topic, &produced[n + m..]);
    let mut ours = Mirror::start(&[s("--mm2.config"), path(&file), s("--mm2.write.connect.offsets"), s("true")]);
    wait_for("ours (handing back) to copy and commit the rest", MM2_DEADLINE, || {
        assert!(ours.alive(), "ours exited early:\n{}", ours.output());
        committed_and_end(&source(), &group, &topic).iter().all(|(_, c, end)| *c == Some(*end))
    });
    assert_eq!(ours.stop(), 0, "ours' exit status on SIGTERM:\n{}", ours.output());
    let handed = ours.output().lines().find(|l| l.contains("handed back to Java MirrorMaker 2")).unwrap_or("(no hand-back line)").to_string();
    let after_ours = java_positions(&a, &topic);
    // Ours' window: committed by the group but not in the positions Java will read.
    let committed: i64 = committed_and_end(&source(), &group, &topic).iter().map(|(_, c, _)| c.unwrap_or(0)).sum();
    let ours_window = (committed - covered(&after_ours)).max(0) as usize;

    // 4. Java MM2 again on the same file, K more records: it continues from ours' positions.
    let mut java = JavaMm2::start(&file);
    produced.extend(records(&topic, n + 2 * m, k));
    produce(&source(), &topic, &produced[n + 2 * m..]);
    let ends = end_offsets(&source(), &topic).expect("source topic");
    wait_for("Java MM2 to copy the rest and flush its positions", MM2_DEADLINE, || {
        assert!(java.alive(), "Java MM2 exited early:\n{}", java.output());
        positions_at_end(&java_positions(&a, &topic), &ends)
    });
    let java_exit_again = java.stop();
    let (missing_all, dups_all) = judge("java -> ours -> java", &remote, &produced);
    let dups_back = dups_all - dups_in;

    // 5. Ours once more, K more records. The group still holds what ours
    // committed in step 3, behind what Java copied since; Java's positions
    // are the later ones and must win. Java stopped only once its positions
    // named every source record and nothing was produced meanwhile, so no
    // record it copied is outside them: nothing may be copied twice here.
    produced.extend(records(&topic, n + 2 * m + k, k));
    produce(&source(), &topic, &produced[n + 2 * m + k..]);
    let mut again = Mirror::start(&[s("--mm2.config"), path(&file)]);
    wait_for("ours (again) to copy and commit the rest", MM2_DEADLINE, || {
        assert!(again.alive(), "ours exited early:\n{}", again.output());
        committed_and_end(&source(), &group, &topic).iter().all(|(_, c, end)| *c == Some(*end))
    });
    assert_eq!(again.stop(), 0, "ours' exit status on SIGTERM:\n{}", again.output());
    let took_over_again =
        again.output().lines().find(|l| l.contains("continue from Java MirrorMaker 2's offsets")).unwrap_or("(no take-over line)").to_string();
    let (missing_again, dups_total) = judge("java -> ours -> java -> ours", &remote, &produced);
    let dups_again = dups_total - dups_all;

    println!(
        "take-over: java -> ours: {missing_in} missing, {dups_in} duplicates (java's unflushed window {java_window}); \
         ours -> java: {missing_all} missing, {dups_back} duplicates (ours' unwritten window {ours_window}); positions after ours {after_ours:?}; java exits {java_exit}, {java_exit_again}\n  \
         ours -> java -> ours: {missing_again} missing, {dups_again} duplicates\n  \
         ours: {took_over}\n  ours: {handed}\n  ours again: {took_over_again}"
    );
    assert_eq!(missing_in, 0, "records missing after ours took over from Java MM2 (log {})", ours.log.display());
    assert!(dups_in <= java_window, "{dups_in} records copied twice after the take-over, beyond Java's unflushed window of {java_window}");
    // Three of the topic's, and the source's heartbeats (MM2 copies them whatever `topics` says).
    let continued: usize = took_over.split(" partition(s) continue").next().and_then(|s| s.rsplit(' ').next()?.parse().ok()).unwrap_or(0);
    assert!(continued >= 3, "ours did not take over the topic's three partitions: {took_over}");
    assert_eq!(missing_all, 0, "records missing after Java MM2 took over again from ours");
    assert!(dups_back <= ours_window, "{dups_back} records copied twice after handing back, beyond ours' unwritten window of {ours_window}");
    assert!(list_topics(&target()).contains(&offsets_topic));
    assert_eq!(missing_again, 0, "records missing after ours took over again from Java MM2 (log {})", again.log.display());
    assert_eq!(dups_again, 0, "records Java MM2 had copied were copied again by ours' second take-over (log {}): {took_over_again}", again.log.display());
}

/// The values of `topic` a read_committed consumer sees: every partition
/// from its start to its last stable offset (what such a consumer's end
/// query answers), the end told by the consumer's position, which passes
/// aborted records and transaction markers without handing them over.
fn committed_values(bootstrap: &str, topic: &str) -> Vec<Vec<u8>> {
    let parts = partitions_of(bootstrap, topic).unwrap_or(0) as i32;
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("committed-reader"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    let mut list = TopicPartitionList::new();
    let mut ends = HashMap::new();
    for p in 0..parts {
        list.add_partition_offset(topic, p, Offset::Beginning).unwrap();
        ends.insert(p, c.fetch_watermarks(topic, p, Duration::from_secs(15)).unwrap().1);
    }
    c.assign(&list).unwrap();
    let mut out = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(200)) {
            if m.offset() < ends[&m.partition()] {
                out.push(m.payload().unwrap_or_default().to_vec());
            }
        }
        let at = c.position().unwrap();
        let done = (0..parts).all(|p| ends[&p] == 0 || matches!(at.find_partition(topic, p).map(|e| e.offset()), Some(Offset::Offset(o)) if o >= ends[&p]));
        if done {
            return out;
        }
        assert!(Instant::now() < deadline, "{topic}: could not read committed records up to {ends:?}; at {at:?}");
    }
}

/// Java MirrorMaker 2 with exactly-once (`B.exactly.once.source.support =
/// enabled`) writes its position in the same transaction as the records it
/// copied. An aborted transaction leaves on the target a position whose
/// records no read_committed consumer sees, and a transaction still open
/// (a Java that died mid-transaction; the broker aborts it only after its
/// timeout) a position that may never count. The take-over must continue
/// from the last committed position: here records 0..20 were copied and
/// committed with position 19, 20..60 copied and aborted with position 59,
/// and 60..80 copied with position 79 in a transaction left open while
/// ours takes over. The test writes those records and positions itself,
/// in Java's bytes (see the unit tests of connect_offsets, checked against
/// a real Java MM2), with a transactional producer as Java's Connect
/// worker does.
#[test]
#[ignore = "needs clusters"]
fn take_over_continues_from_the_last_committed_position_only() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("tkc-{id}");
    let remote = format!("{a}.{topic}");
    let group = format!("mm2.{a}->{b}");
    let offsets_topic = format!("mm2-offsets.{a}.internal");
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &topic, &[]));
    let produced = records(&topic, 0, 100);
    create_topic(&source(), &topic, 1, &[]);
    produce(&source(), &topic, &produced);
    create_topic(&target(), &remote, 1, &[]);
    // As Java's Connect worker creates it: compacted, 25 partitions.
    create_topic(&target(), &offsets_topic, 25, &[("cleanup.policy", "compact")]);

    let java: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", target())
        .set("transactional.id", format!("{a}-mm2-MirrorSourceConnector-0"))
        // The open transaction must outlive ours' take-over on a slow machine.
        .set("transaction.timeout.ms", "600000")
        .create()
        .unwrap();
    java.init_transactions(Duration::from_secs(30)).unwrap();
    let key = format!(r#"["MirrorSourceConnector",{{"cluster":"{a}","partition":0,"topic":"{topic}"}}]"#);
    let offsets_partition = partition_of(key.as_bytes(), 25);
    let copy = |from: usize, to: usize| {
        java.begin_transaction().unwrap();
        for r in &produced[from..to] {
            let mut record = BaseRecord::<[u8], [u8]>::to(&remote).partition(0).payload(r.value.as_deref().unwrap());
            record.key = r.key.as_deref();
            java.send(record).map_err(|(e, _)| e).unwrap();
        }
        let value = format!(r#"{{"offset":{}}}"#, to - 1);
        java.send(BaseRecord::to(&offsets_topic).partition(offsets_partition).key(key.as_str()).payload(value.as_str())).map_err(|(e, _)| e).unwrap();
        // Written before an abort, so the aborted records take offsets (an
        // abort purges what is still queued).
        java.flush(Duration::from_secs(30)).unwrap();
    };
    copy(0, 20);
    java.commit_transaction(Duration::from_secs(30)).unwrap();
    copy(20, 60);
    java.abort_transaction(Duration::from_secs(30)).unwrap();
    copy(60, 80);

    let mut ours = Mirror::start(&[s("--mm2.config"), path(&file)]);
    wait_for("ours to take over, copy and commit every source record", MM2_DEADLINE, || {
        assert!(ours.alive(), "ours exited early:\n{}", ours.output());
        committed_and_end(&source(), &group, &topic).iter().all(|(_, c, end)| *c == Some(*end))
    });
    assert_eq!(ours.stop(), 0, "ours' exit status on SIGTERM:\n{}", ours.output());
    let log = ours.output();
    let took_over = log.lines().find(|l| l.contains("continue from Java MirrorMaker 2's offsets")).unwrap_or("(no take-over line)").to_string();
    // The dead Java's transaction ends as the broker would end it.
    java.abort_transaction(Duration::from_secs(30)).unwrap();

    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for v in committed_values(&target(), &remote) {
        *seen.entry(v).or_default() += 1;
    }
    let missing: Vec<String> =
        produced.iter().filter_map(|r| r.value.clone()).filter(|v| !seen.contains_key(v)).map(|v| String::from_utf8_lossy(&v).into_owned()).collect();
    let extra: usize = seen.values().map(|n| n - 1).sum();
    println!("committed take-over: {} missing {:?}, {extra} duplicates; ours: {took_over}", missing.len(), &missing[..missing.len().min(10)]);
    assert!(missing.is_empty(), "a read_committed consumer of {remote} misses {} source records: {missing:?} (log {})", missing.len(), ours.log.display());
    assert_eq!(extra, 0, "records copied twice on {remote} (log {})", ours.log.display());
    // The open transaction neither held the take-over up nor went unsaid.
    assert!(
        log.contains(&format!("{offsets_topic} holds transactions still open (partition {offsets_partition}:")),
        "no warning about the open transaction in {offsets_topic} (log {})",
        ours.log.display()
    );
}

/// Deletes the test's topics on both clusters when it ends, passed or failed.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if std::env::var_os("MM2_TEST_KEEP_TOPICS").is_some_and(|v| v == "1") {
            return;
        }
        for bootstrap in [source(), target()] {
            delete_topics_containing(&bootstrap, &self.0);
        }
    }
}

/// Issue #29's take-over both ways, with exactly-once on both sides (the
/// same file: `B.exactly.once.source.support = enabled`): Java MM2 copies,
/// ours continues from Java's positions, hands back, Java continues from
/// ours', and ours once more from Java's. Java writes its positions in the
/// transactions of its records, ours in its own and hands them back at the
/// stop, so no move may copy a record twice: judged read_committed.
#[test]
#[ignore = "needs clusters"]
fn exactly_once_take_over_both_ways_with_java_mm2() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("tkoe-{id}");
    let remote = format!("{a}.{topic}");
    let group = format!("mm2.{a}->{b}");
    let extra = [
        format!("{b}.exactly.once.source.support = enabled"),
        format!("{a}.consumer.isolation.level = read_committed"),
        // Java's dedicated mode with exactly-once runs its internal REST.
        "dedicated.mode.enable.internal.rest = true".to_string(),
        format!("listeners = http://127.0.0.1:{}", free_port()),
    ];
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &topic, &extra));
    let (n, m, k) = (3000, 2000, 500);
    create_topic(&source(), &topic, 3, &[]);
    let mut produced = records(&topic, 0, n);
    produce(&source(), &topic, &produced);
    let ours_done = |m: &mut Mirror| {
        wait_for("ours to copy and commit every record", MM2_DEADLINE, || {
            assert!(m.alive(), "ours exited early:\n{}", m.output());
            committed_and_end(&source(), &group, &topic).iter().all(|(_, c, end)| *c == Some(*end))
        });
        assert_eq!(m.stop(), 0, "ours' exit status on SIGTERM:\n{}", m.output());
    };
    let java_done = |java: &mut JavaMm2| {
        let ends = end_offsets(&source(), &topic).expect("source topic");
        wait_for("Java MM2 (exactly-once) to copy every record", MM2_DEADLINE, || {
            assert!(java.alive(), "Java MM2 exited early:\n{}", java.output());
            positions_at_end(&java_positions(&a, &topic), &ends)
        });
        java.stop();
    };

    let mut java = JavaMm2::start(&file);
    java_done(&mut java);
    let first = judge_committed("java (eos)", &remote, &produced);

    produced.extend(records(&topic, n, m));
    produce(&source(), &topic, &produced[n..]);
    let mut ours = Mirror::start(&[s("--mm2.config"), path(&file), s("--mm2.write.connect.offsets"), s("true")]);
    ours_done(&mut ours);
    assert!(ours.output().contains("exactly-once task started"), "ours ran at least once:\n{}", ours.output());
    let in_ = judge_committed("java (eos) -> ours (eos)", &remote, &produced);

    produced.extend(records(&topic, n + m, k));
    produce(&source(), &topic, &produced[n + m..]);
    let mut java = JavaMm2::start(&file);
    java_done(&mut java);
    let back = judge_committed("java -> ours -> java (eos)", &remote, &produced);

    produced.extend(records(&topic, n + m + k, k));
    produce(&source(), &topic, &produced[n + m + k..]);
    let mut again = Mirror::start(&[s("--mm2.config"), path(&file)]);
    ours_done(&mut again);
    let last = judge_committed("java -> ours -> java -> ours (eos)", &remote, &produced);
    println!("EOS take-over with Java MM2 exactly-once: (missing, duplicates) java {first:?}, -> ours {in_:?}, -> java {back:?}, -> ours {last:?}");
    for (step, (missing, dups)) in [("java", first), ("java -> ours", in_), ("ours -> java", back), ("java -> ours again", last)] {
        assert_eq!((missing, dups), (0, 0), "{step}: records missing or copied twice (logs: ours {}, again {})", ours.log.display(), again.log.display());
    }
}
