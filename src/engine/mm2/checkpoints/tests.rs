//! Unit tests of the checkpoint rules (`super`).

use super::*;

fn offset(topic: &str, partition: i32, offset: i64) -> GroupOffset {
    GroupOffset { topic: topic.into(), partition, offset, metadata: String::new() }
}

fn store_with(topic: &str, partitions: i32, records: i64) -> Arc<FlowSyncs> {
    let f = FlowSyncs::new(100, None, true);
    f.store.loaded(Vec::<(OffsetSync, i64)>::new());
    for p in 0..partitions {
        f.partition(&Arc::from(topic), p).acknowledged((0..records).map(|u| (u, u + 10)));
    }
    f.flush(false);
    f
}

#[test]
fn checkpoints_only_for_mirrored_topics_with_syncs_and_only_when_they_move() {
    let f = store_with("orders", 2, 500);
    let mirrored = |t: &str| (t == "orders" || t == "nosync").then(|| format!("A.{t}"));
    let mut last = CheckpointStore::default();
    let committed = [offset("orders", 0, 250), offset("orders", 1, 500), offset("other", 0, 5), offset("nosync", 0, 5)];
    let due1 = due("g", &committed, mirrored, &f.store, &last);
    let got: Vec<(String, i32, i64, i64)> = due1.iter().map(|(c, _)| (c.topic.clone(), c.partition, c.upstream_offset, c.downstream_offset)).collect();
    assert_eq!(got, [("A.orders".into(), 0, 250, 260), ("A.orders".into(), 1, 500, 510)], "exact, and caught-up exact");
    for (c, epoch) in &due1 {
        last.put(c, *epoch);
    }
    assert!(due("g", &committed, mirrored, &f.store, &last).is_empty(), "nothing moved, nothing written");
    // The group rewinds on the source: the checkpoint goes back with it.
    let rewound = due("g", &[offset("orders", 0, 100)], mirrored, &f.store, &last);
    assert_eq!(rewound.iter().map(|(c, _)| c.downstream_offset).collect::<Vec<_>>(), [110]);
}

#[test]
fn a_checkpoint_never_goes_back_without_a_rewind() {
    let mut last = CheckpointStore::default();
    let c = |up, down| Checkpoint { group: "g".into(), topic: "t".into(), partition: 0, upstream_offset: up, downstream_offset: down, metadata: String::new() };
    last.put(&c(100, 90), 0);
    assert!(!last.is_more_recent(&c(100, 90), 0));
    assert!(!last.is_more_recent(&c(120, 85), 0), "the group moved on but its translation went back: not written");
    assert!(last.is_more_recent(&c(120, 95), 0));
    assert!(last.is_more_recent(&c(50, 40), 0), "the group was rewound on the source");
}

/// Issue #26 item 3: the target topic deleted and made again. The
/// syncs of the old log are dropped when the new log's first record is
/// acknowledged; a group behind it translates to the new log's first
/// offset, and its checkpoint goes back once to say so.
#[test]
fn after_the_target_log_went_back_a_checkpoint_goes_back_once() {
    let f = FlowSyncs::new(100, None, true);
    f.store.loaded([]);
    let p = f.partition(&Arc::from("t"), 0);
    p.acknowledged((0..10_000).map(|u| (u, u)));
    f.flush(false);
    let mut last = CheckpointStore::default();
    let mirrored = |t: &str| Some(t.to_string());
    let at_5000 = [offset("t", 0, 5_000)];
    for (c, epoch) in due("g", &at_5000, mirrored, &f.store, &last) {
        assert_eq!(c.downstream_offset, 5_000);
        last.put(&c, epoch);
    }
    last.synced("g", &[offset("t", 0, 5_000)]);
    assert_eq!(last.groups()["g"], [(offset("t", 0, 5_000), false)], "committed on the target in this log: forward only");
    // Deleted on the target; the next 10,000 land at 0.. of the new topic.
    p.acknowledged((10_000..20_000).map(|u| (u, u - 10_000)));
    f.flush(false);
    let again = due("g", &at_5000, mirrored, &f.store, &last);
    assert_eq!(again.iter().map(|(c, _)| c.downstream_offset).collect::<Vec<_>>(), [0], "the new topic's start, not 5,000 (which now holds 15,000)");
    for (c, epoch) in &again {
        last.put(c, *epoch);
    }
    assert!(due("g", &at_5000, mirrored, &f.store, &last).is_empty(), "once");
    assert_eq!(last.groups()["g"], [(offset("t", 0, 0), true)], "the group sync may move it back on the target");
    last.synced("g", &[offset("t", 0, 0)]);
    assert_eq!(last.groups()["g"], [(offset("t", 0, 0), false)], "once");
    assert_eq!(f.store.translate("t", 0, 15_000), Some(5_000), "exact in the new log");
}

#[test]
fn groups_no_longer_listed_are_forgotten_with_all_their_checkpoints() {
    let mut last = CheckpointStore::default();
    for (g, p) in [("gone", 0), ("gone", 1), ("live", 0)] {
        last.put(&Checkpoint { group: g.into(), topic: "t".into(), partition: p, upstream_offset: 5, downstream_offset: 5, metadata: String::new() }, 0);
    }
    assert_eq!(last.retain_groups(|g| g == "live"), 1);
    assert_eq!(last.groups().into_keys().collect::<Vec<_>>(), ["live"]);
    assert_eq!(last.retain_groups(|_| true), 0);
    // A partition the group no longer holds (its topic deleted at the source) goes; the rest stays.
    last.put(&Checkpoint { group: "live".into(), topic: "t".into(), partition: 1, upstream_offset: 5, downstream_offset: 5, metadata: String::new() }, 0);
    last.retain_for_group("live", |t, p| (t, p) == ("t", 1));
    assert_eq!(last.groups()["live"].iter().map(|(o, _)| o.partition).collect::<Vec<_>>(), [1]);
}

#[test]
fn group_offsets_only_move_forward_on_the_target() {
    let translated = [(offset("A.t", 0, 100), false), (offset("A.t", 1, 100), false), (offset("A.t", 2, 100), false), (offset("A.t", 3, 0), true)];
    let on_target = [offset("A.t", 0, 150), offset("A.t", 1, 50), offset("A.t", 3, 2479)];
    let moves = forward_only(&translated, &on_target);
    assert_eq!(
        moves.iter().map(|o| (o.partition, o.offset)).collect::<Vec<_>>(),
        [(1, 100), (2, 100), (3, 0)],
        "3 back, once: what the sync committed there belongs to the deleted topic"
    );
}
