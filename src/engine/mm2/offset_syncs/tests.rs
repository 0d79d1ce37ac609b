//! Unit tests of the offset-sync rule, the in-memory store and the
//! pipeline hooks (`super`).

use super::*;

fn flow() -> (Arc<FlowSyncs>, Receiver<Outgoing>) {
    let (tx, rx) = FlowSyncs::queue();
    let f = FlowSyncs::new(100, Some(tx), true);
    f.store.loaded(Vec::<(OffsetSync, i64)>::new());
    (f, rx)
}

fn written(rx: &Receiver<Outgoing>) -> Vec<(i64, i64)> {
    rx.try_iter().map(|o| (o.sync.upstream_offset, o.sync.downstream_offset)).collect()
}

#[test]
fn java_rule_first_record_every_lag_max_and_every_upstream_gap() {
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    // 0..250 land at 1000..1250 one after the other.
    p.acknowledged((0..250).map(|u| (u, 1000 + u)));
    // Java's test is down - (last synced down + 1) >= offset.lag.max.
    assert_eq!(written(&rx), [(0, 1000), (101, 1101), (202, 1202)], "first record, then every offset.lag.max (100) + 1");
    // An upstream gap (300 after 249: compaction, transaction markers):
    // the record after it, and (beyond Java) the one before it.
    p.acknowledged([(300, 1250), (301, 1251)]);
    assert_eq!(written(&rx), [(249, 1249), (300, 1250)]);
    // Going back downstream (target truncated).
    p.acknowledged([(302, 10)]);
    assert_eq!(written(&rx), [(301, 1251), (302, 10)]);
}

#[test]
fn the_pipeline_hooks_feed_the_same_rule_and_state() {
    let (f, rx) = flow();
    let hooks: Arc<dyn FlowAckHooks> = f.clone();
    let t: Arc<str> = Arc::from("t");
    // Through the hook, as a producer worker calls it: one call per run.
    hooks.clone().partition_hook(&t, 0).acknowledged(&mut (0..150).map(|u| (u, 1000 + u)));
    hooks.clone().partition_hook(&t, 0).acknowledged(&mut (150..250).map(|u| (u, 1000 + u)));
    assert_eq!(written(&rx), [(0, 1000), (101, 1101), (202, 1202)], "one partition's state across its handles");
    assert!(Arc::ptr_eq(&f.partition(&t, 0), &f.partition(&t, 0)));
    assert_eq!(hooks.tracked(), f.tracked());
    hooks.forget_topic("t");
    assert_eq!(hooks.tracked(), 0);
}

#[test]
fn a_topic_deleted_at_the_source_is_forgotten_and_comes_back_fresh() {
    let (f, rx) = flow();
    let (gone, kept): (Arc<str>, Arc<str>) = (Arc::from("gone"), Arc::from("kept"));
    let in_flight = f.partition(&gone, 0);
    in_flight.acknowledged((0..50).map(|u| (u, 500 + u)));
    f.partition(&kept, 0).acknowledged([(0, 0)]);
    f.flush(false);
    assert_eq!(f.tracked(), 4, "two partitions with rule state, two with syncs");
    f.forget_topic("gone");
    assert_eq!(f.tracked(), 2);
    assert_eq!(f.store.translate("gone", 0, 10), None);
    // A record of the deleted topic still in flight is acknowledged: no sync, nothing comes back.
    let _ = written(&rx);
    in_flight.acknowledged([(50, 550), (300, 900)]);
    f.flush(false);
    assert_eq!(written(&rx), [], "no sync from a forgotten partition");
    assert_eq!(f.tracked(), 2);
    // Made again with the name: its first record is synced as a new partition's is.
    f.partition(&gone, 0).acknowledged([(0, 7)]);
    assert_eq!(written(&rx), [(0, 7)]);
    assert_eq!(f.store.translate("gone", 0, 0), Some(7));
}

#[test]
fn the_latest_mapping_is_written_at_commit_and_once() {
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..42).map(|u| (u, u + 7)));
    assert_eq!(written(&rx), [(0, 7)]);
    f.flush(false);
    assert_eq!(written(&rx), [(41, 48)], "a caught-up group at 42 translates exactly through (41, 48): 49");
    f.flush(false);
    assert!(written(&rx).is_empty(), "nothing new, nothing written");
    assert_eq!(f.store.translate("t", 0, 42), Some(49));
}

#[test]
fn idle_partitions_are_written_once_idle() {
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..5).map(|u| (u, u)));
    written(&rx);
    f.flush(true);
    assert!(written(&rx).is_empty(), "acknowledged just now: not idle yet");
    p.track.lock().unwrap().last_ack -= IDLE_AFTER;
    f.flush(true);
    assert_eq!(written(&rx), [(4, 4)]);
}

#[test]
fn between_contiguous_syncs_translation_is_exact() {
    let (f, _rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..250).map(|u| (u, 1000 + u)));
    f.flush(false);
    for up in [0, 1, 57, 99, 100, 150, 249] {
        assert_eq!(f.store.translate("t", 0, up), Some(1000 + up), "upstream {up}");
    }
    assert_eq!(f.store.translate("t", 0, 250), Some(1250), "one past the last: the next record's place");
    assert_eq!(f.store.translate("t", 0, 5000), Some(1250), "ahead of the mirror: never past what the target has");
}

#[test]
fn a_broken_run_falls_back_to_one_past_the_sync_before() {
    let (f, _rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    // Another source writes into the same target partition: downstream
    // jumps without an upstream gap, which Java's rule does not sync.
    p.acknowledged((0..50).map(|u| (u, u)));
    p.acknowledged((50..100).map(|u| (u, u + 10)));
    p.acknowledged((100..120).map(|u| (u, u + 10)));
    f.flush(false);
    // 0 and 49 (the record before the break) are synced, then 119 at
    // the end; the run from 49 to 119 is broken at 50.
    assert_eq!(f.store.translate("t", 0, 0), Some(0));
    assert_eq!(f.store.translate("t", 0, 30), Some(30), "0..49 ran 1:1");
    assert_eq!(f.store.translate("t", 0, 70), Some(50), "not 80: the mapping after the break is not known record by record");
    assert_eq!(f.store.translate("t", 0, 119), Some(129));
}

#[test]
fn a_record_acknowledged_out_of_order_makes_no_sync_and_never_overshoots() {
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    // 0..10 sent; 5's batch was refused and 5 goes again alone, landing last.
    p.acknowledged([(0, 100), (1, 101), (2, 102), (3, 103), (4, 104), (6, 105), (7, 106), (8, 107), (9, 108), (5, 109), (10, 110)]);
    let w = written(&rx);
    assert!(!w.contains(&(5, 109)), "5 came back after 9: no sync may say 5 sits at 109 ({w:?})");
    assert!(w.contains(&(10, 110)), "the record after it is synced ({w:?})");
    // A group at 5 has not read 5 yet: it must land at or before 109.
    let t = f.store.translate("t", 0, 5).unwrap();
    assert!((100..=109).contains(&t), "{t}");
    // A group at 7 must not skip 7, at 106.
    assert_eq!(f.store.translate("t", 0, 7), Some(106));
}

#[test]
fn a_group_inside_a_gap_resumes_at_the_first_record_after_it() {
    let (f, _rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    // A committed transaction at 0..39 (marker 40), an aborted one at
    // 41..80 (marker 81): a read_committed mirror sees 0..39, then 82...
    p.acknowledged((0..40).map(|u| (u, u)));
    p.acknowledged((82..100).map(|u| (u, u - 42)));
    f.flush(false);
    for (group_at, resume) in [(40, 40), (41, 40), (60, 40), (81, 40), (82, 40), (90, 48), (39, 39), (100, 58)] {
        assert_eq!(f.store.translate("t", 0, group_at), Some(resume), "a group at {group_at}");
    }
}

#[test]
fn the_store_waits_for_the_topic_and_keeps_read_syncs_approximate() {
    let f = FlowSyncs::new(100, None, true);
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((1000..1010).map(|u| (u, u + 1)));
    f.flush(false);
    assert_eq!(f.store.translate("t", 0, 1005), None, "never before the syncs topic is read");
    let read = |up, down| OffsetSync { topic: "t".into(), partition: 0, upstream_offset: up, downstream_offset: down };
    // An earlier run's syncs, and this run's first one read back too.
    f.store.loaded([(read(0, 1), 0), (read(500, 501), 1), (read(1000, 1001), 2)]);
    assert_eq!(f.store.translate("t", 0, 250), Some(2), "read syncs say nothing of what lies between: one past, as Java");
    assert_eq!(f.store.translate("t", 0, 1005), Some(1006), "this run's own are exact");
    assert_eq!(f.store.kept("t", 0), 4, "0, 500, 1000 and 1009; 1000 once");
    assert_eq!(f.store.translate("u", 0, 5), None, "no sync, no translation");
}

/// A mirror quick enough to write all its syncs before the syncs topic
/// was read to its end finds them all in what it read: its own copies,
/// which know the records between were contiguous, are the ones kept.
#[test]
fn this_runs_syncs_read_back_while_loading_stay_exact() {
    let f = FlowSyncs::new(100, None, true);
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..300).map(|u| (u, u)));
    f.flush(false);
    let read = |up, down| OffsetSync { topic: "t".into(), partition: 0, upstream_offset: up, downstream_offset: down };
    f.store.loaded([(read(0, 0), 7), (read(101, 101), 8), (read(202, 202), 9), (read(299, 299), 10)]);
    for at in [50, 150, 250, 299] {
        assert_eq!(f.store.translate("t", 0, at), Some(at), "a group at {at}");
    }
    assert_eq!(f.store.kept("t", 0), 4);
}

#[test]
fn a_restart_reads_from_the_oldest_sync_a_group_still_needs() {
    let f = FlowSyncs::new(100, None, true);
    let read = |t: &str, up, down| OffsetSync { topic: t.into(), partition: 0, upstream_offset: up, downstream_offset: down };
    // The syncs topic: a's syncs at topic offsets 10, 11, 12; b's at 13, 14.
    f.store.loaded([(read("a", 0, 0), 10), (read("a", 100, 100), 11), (read("a", 200, 200), 12), (read("b", 0, 0), 13), (read("b", 50, 50), 14)]);
    let mut oldest = HashMap::new();
    assert_eq!(f.store.resume_point(&oldest), Some(12), "no group: each partition's latest sync (12 and 14)");
    oldest.insert(("a".to_string(), 0), 150);
    assert_eq!(f.store.resume_point(&oldest), Some(11), "a group at 150 of a needs a's sync at 100 (topic offset 11)");
    oldest.insert(("b".to_string(), 0), 0);
    assert_eq!(f.store.resume_point(&oldest), Some(11));
    oldest.insert(("a".to_string(), 0), 5);
    assert_eq!(f.store.resume_point(&oldest), Some(10));
    // This run's own sync of a new partition: its place in the topic is
    // unknown to a store that only keeps what this node sent.
    f.partition(&Arc::from("c"), 0).acknowledged([(7, 7)]);
    assert_eq!(f.store.resume_point(&oldest), None, "c's sync is not known in the topic");
    // A checkpointer tailing the topic (what runs when syncs are written)
    // knows each sync's place, whichever node wrote it.
    let tail = SyncStore::default();
    tail.tailed([(read("a", 0, 0), 10, None), (read("a", 100, 100), 11, Some((0, 0))), (read("b", 0, 0), 13, None), (read("c", 7, 7), 20, None)]);
    let oldest = HashMap::from([(("a".to_string(), 0), 150)]);
    assert_eq!(tail.resume_point(&oldest), Some(11), "a at 150 needs the sync at 11; b and c (no group) their latest, 13 and 20");
    let oldest = HashMap::from([(("a".to_string(), 0), 150), (("c".to_string(), 0), 3)]);
    assert_eq!(tail.resume_point(&oldest), Some(11), "c's only sync is past its group: kept anyway (the first sync a partition has)");
}

/// The sequence of issue #26 item 1: records 0-4 land at 100-104; 5-9
/// are in a batch the target refuses (too large), and librdkafka has
/// 10-19 land at 105-114 meanwhile; 5-9, sent again alone, land at
/// 115-119, then 20 at 120. Before the fix the store ended
/// [(6,116), (9,119), (20,120)]: a group at 12 translated to 120 (8
/// records skipped), one at 7 to 117 (10 skipped).
#[test]
fn records_sent_again_after_later_ones_never_make_a_translation_skip() {
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    let acks: Vec<(i64, i64)> =
        (0..5).map(|u| (u, 100 + u)).chain((10..20).map(|u| (u, 95 + u))).chain((5..10).map(|u| (u, 110 + u))).chain([(20, 120)]).collect();
    p.acknowledged(acks.iter().copied());
    f.flush(false);
    let w = written(&rx);
    assert!(w.iter().all(|(up, _)| !(5..10).contains(up)), "no sync names a record that landed after later ones: {w:?}");
    assert!(w.windows(2).all(|s| s[1].0 > s[0].0 && s[1].1 > s[0].1), "syncs only move forward on both sides: {w:?}");
    // The rule: at or before the first target offset holding any record
    // at or after the group's position.
    for group_at in 0..=21 {
        let first = acks.iter().filter(|(up, _)| *up >= group_at).map(|(_, down)| *down).min().unwrap_or(121);
        let t = f.store.translate("t", 0, group_at).unwrap();
        assert!(t <= first, "a group at {group_at} translates to {t}, past {first} where a record it has not read is");
    }
    assert_eq!(f.store.translate("t", 0, 12), Some(107), "10-19 landed one after the other: exact");
    assert_eq!(f.store.translate("t", 0, 7), Some(105), "7-9 landed late: from the first record after the refused batch");
    assert_eq!(f.store.translate("t", 0, 20), Some(120));
    assert_eq!(f.store.translate("t", 0, 3), Some(103));
}

/// Whatever the order acknowledgements come in, no translation points
/// past a record the group has not read: every order of a small run,
/// as a permutation of which records land late.
#[test]
fn no_order_of_acknowledgements_makes_a_translation_skip() {
    // Each mask picks which of 8 records of a batch are refused and land
    // after the rest (and after 8..12, which follow).
    for mask in 0u32..256 {
        let (f, _rx) = flow();
        let p = f.partition(&Arc::from("t"), 0);
        let first: Vec<i64> = (0..8).filter(|i| mask & (1 << i) == 0).chain(8..12).collect();
        let late: Vec<i64> = (0..8).filter(|i| mask & (1 << i) != 0).collect();
        let acks: Vec<(i64, i64)> = first.iter().chain(&late).chain(&[12, 13]).enumerate().map(|(i, up)| (*up, 1000 + i as i64)).collect();
        p.acknowledged(acks.iter().copied());
        f.flush(false);
        for group_at in 0..=14 {
            let bound = acks.iter().filter(|(up, _)| *up >= group_at).map(|(_, down)| *down).min().unwrap_or(1000 + acks.len() as i64);
            if let Some(t) = f.store.translate("t", 0, group_at) {
                assert!(t <= bound, "mask {mask:08b}: a group at {group_at} translates to {t}, past {bound}");
            }
        }
    }
}

/// The target log found to have gone back by its end offsets, before
/// any record of the new log was acknowledged: afresh from its start.
#[test]
fn a_target_log_found_gone_back_starts_afresh_from_its_start() {
    let (f, _rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..5_000).map(|u| (u, u)));
    f.flush(false);
    assert_eq!(f.store.newest(), [(Arc::from("t"), 0, 4_999, 4_999)]);
    f.store.target_log_went_back("t", 0, (4_000, 4_000), 0);
    assert_eq!(f.store.translate("t", 0, 2_500), Some(2_500), "not the newest sync any more: nothing done");
    f.store.target_log_went_back("t", 0, (4_999, 4_999), 0);
    assert_eq!(f.store.translate("t", 0, 2_500), Some(0), "the new log's start");
    assert_eq!(f.store.epoch("t", 0), 1);
    // Its first records acknowledged then: exact again, no second reset.
    p.acknowledged((5_000..5_100).map(|u| (u, u - 5_000)));
    f.flush(false);
    assert_eq!(f.store.translate("t", 0, 5_050), Some(50));
    assert_eq!(f.store.translate("t", 0, 2_500), Some(0));
    assert_eq!(f.store.epoch("t", 0), 1);
}

/// Acknowledgements and the sync writer's flushes race on a partition
/// (they run on the producer's and the writer's threads): the store
/// must still get its syncs in order, so that no translation points
/// past a record. A compacted-like source: a gap after every third
/// record.
#[test]
fn flushes_racing_acknowledgements_never_make_a_translation_skip() {
    for _ in 0..200 {
        let (f, _rx) = flow();
        let p = f.partition(&Arc::from("t"), 0);
        let ups: Vec<i64> = (0..6_000).filter(|u| u % 4 != 3).collect();
        let acks: Vec<(i64, i64)> = ups.iter().enumerate().map(|(i, u)| (*u, i as i64)).collect();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flusher = {
            let (f, stop) = (f.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    f.flush(false);
                }
            })
        };
        for chunk in acks.chunks(7) {
            p.acknowledged(chunk.iter().copied());
        }
        stop.store(true, Ordering::Relaxed);
        flusher.join().unwrap();
        f.flush(false);
        for g in (0..6_000).step_by(7) {
            let first = acks.iter().find(|(up, _)| *up >= g).map_or(acks.len() as i64, |(_, down)| *down);
            if let Some(t) = f.store.translate("t", 0, g) {
                assert!(t <= first, "a group at {g} translates to {t}, past {first}");
            }
        }
    }
}

/// A source partition whose log went back (the topic made again) cannot
/// be told from records sent again: no sync is made until its offsets
/// pass the highest acknowledged, and translations use the syncs of the
/// old log, whose target offsets all lie before the new log's records
/// (read again, never skipped).
#[test]
fn a_source_that_goes_back_makes_no_sync_until_it_passes_the_highest() {
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((100..200).map(|u| (u, u)));
    f.flush(false);
    written(&rx);
    p.acknowledged((0..10).map(|u| (u, 500 + u)));
    f.flush(false);
    assert!(written(&rx).is_empty(), "nothing the old log's records could be mistaken for");
    assert_eq!(f.store.translate("t", 0, 150), Some(150), "before every record of the new log");
    assert_eq!(f.store.translate("t", 0, 5), None, "behind every sync: no checkpoint");
    p.acknowledged((10..300).map(|u| (u, 500 + u)));
    f.flush(false);
    assert_eq!(written(&rx).first(), Some(&(200, 700)), "synced again once past the highest");
    assert_eq!(f.store.translate("t", 0, 250), Some(750));
}

#[test]
fn syncs_made_while_the_topic_cannot_be_read_stay_bounded_and_safe() {
    // The syncs cluster is down for hours while records flow: what this
    // run makes meanwhile is thinned as the store is, not piled up.
    let f = FlowSyncs::new(100, None, true);
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..200_000).map(|u| (u, u)));
    f.flush(false);
    assert!(f.store.kept("t", 0) <= KEPT_PER_PARTITION, "{} kept before the read", f.store.kept("t", 0));
    f.store.loaded([]);
    assert!(f.store.kept("t", 0) <= KEPT_PER_PARTITION);
    for up in [0, 99, 12_345, 199_999] {
        assert_eq!(f.store.translate("t", 0, up), Some(up), "all 1:1, so exact ({up})");
    }
}

#[test]
fn without_checkpoints_the_store_keeps_nothing() {
    let (tx, rx) = FlowSyncs::queue();
    let f = FlowSyncs::new(100, Some(tx), false);
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..1_000).map(|u| (u, u)));
    f.flush(false);
    assert_eq!(written(&rx).len(), 11, "written as ever: every 100th and the last");
    f.store.loaded([]);
    assert_eq!(f.store.kept("t", 0), 0);
}

#[test]
fn kept_syncs_are_bounded_and_stay_safe() {
    let (f, _rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..200_000).map(|u| (u, u)));
    f.flush(false);
    assert!(f.store.kept("t", 0) <= KEPT_PER_PARTITION);
    for up in [0, 1, 99, 12_345, 150_000, 199_999] {
        let t = f.store.translate("t", 0, up);
        assert_eq!(t, Some(up), "all 1:1: thinned runs stay contiguous, so still exact ({up})");
    }
}

/// What the syncs topic would hold: the writer's records in order, each at
/// its offset, with the header it carries.
fn as_topic(out: Vec<Outgoing>) -> Vec<ReadSync> {
    out.into_iter().enumerate().map(|(at, o)| (o.sync, at as i64, o.follows.map(|f| parse_follows(format!("{},{}", f.0, f.1).as_bytes()).unwrap()))).collect()
}

#[test]
fn a_store_read_from_the_topic_translates_exactly_as_the_writers_own() {
    // The node leading the checkpoints reads every node's syncs from the
    // topic (issue #28): the header keeps the 1:1 runs, so it translates
    // each offset as the node that copied the partition would.
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..250).map(|u| (u, 1000 + u)));
    p.acknowledged((300..420).map(|u| (u, 1250 + u - 300)));
    p.acknowledged([(421, 1400), (422, 1401)]);
    f.flush(false);
    let topic = SyncStore::default();
    topic.tailed(as_topic(rx.try_iter().collect()));
    for up in 0..430 {
        assert_eq!(topic.translate("t", 0, up), f.store.translate("t", 0, up), "upstream {up}");
    }
    assert_eq!(topic.translate("t", 0, 150), Some(1150), "exact inside a 1:1 run");
}

#[test]
fn a_sync_missing_from_the_topic_breaks_the_run_it_claimed() {
    // A sync the queue had no room for (or the topic refused): the next
    // one names it in its header, the reader never saw it, so nothing in
    // between is taken as 1:1 and a translation there is one past the
    // sync before, which reads some records twice but skips none.
    let (f, rx) = flow();
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..250).map(|u| (u, 1000 + u)));
    f.flush(false);
    let mut out: Vec<Outgoing> = rx.try_iter().collect();
    assert!(out.len() >= 3, "{out:?}");
    out.remove(1);
    let topic = SyncStore::default();
    topic.tailed(as_topic(out));
    assert_eq!(topic.translate("t", 0, 0), Some(1000));
    assert_eq!(topic.translate("t", 0, 150), Some(1001), "one past the sync before, not 1150 across a sync never read");
}

#[test]
fn the_follows_header_reads_only_two_numbers() {
    assert_eq!(parse_follows(b"12,1012"), Some((12, 1012)));
    for bad in [&b""[..], b"12", b"12,", b"a,1", b"1,2,3", b"\xff"] {
        assert_eq!(parse_follows(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
}
