//! End-to-end: the built-in message handlers between real clusters.

mod common;

use common::*;

fn run_handler(topic_on_source: &str, handler: &[&str], n: usize) -> (String, Vec<Rec>) {
    let recs = sample_records(topic_on_source, n);
    produce(&source(), topic_on_source, &recs);
    let group = unique("handler");
    let mut opts = vec!["--offset.commit.interval.ms", "500"];
    opts.extend_from_slice(handler);
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), topic_on_source, &opts));
    wait_until("handler run committed", || all_committed(&source(), &group, topic_on_source));
    assert_eq!(m.stop(), 0, "{}", m.output());
    (group, recs)
}

#[test]
#[ignore = "needs clusters"]
fn topic_prefix_and_rename() {
    require_clusters!(source(), target());
    let t = unique("pfx");
    create_topic(&source(), &t, 2, &[]);
    let (_, recs) = run_handler(&t, &["--message.handler", "topic-prefix", "--message.handler.args", "dr."], 200);
    let landed = read_topic(&target(), &format!("dr.{t}"));
    assert_eq!(assert_same_records(&t, &recs, &landed), 0);
    assert_eq!(partitions_of(&target(), &t), None, "the unprefixed name must not be written");

    let t2 = unique("ren");
    create_topic(&source(), &t2, 1, &[]);
    let renamed = format!("{t2}-copy");
    let (_, recs) = run_handler(&t2, &["--message.handler", "topic-rename", "--message.handler.args", &format!("{t2}:{renamed}")], 100);
    assert_eq!(assert_same_records(&t2, &recs, &read_topic(&target(), &renamed)), 0);
}

#[test]
#[ignore = "needs clusters"]
fn partition_preserving_keeps_source_partitions() {
    require_clusters!(source(), target());
    let t = unique("pp");
    create_topic(&source(), &t, 4, &[]);
    create_topic(&target(), &t, 4, &[]);
    let recs = sample_records(&t, 400);
    // Unkeyed records too, spread over explicit partitions.
    for p in 0..4 {
        let part: Vec<Rec> = recs.iter().enumerate().filter(|(i, _)| (*i % 4) as i32 == p).map(|(_, r)| r.clone()).collect();
        produce_to(&source(), &t, Some(p), &part);
    }
    let group = unique("pp");
    let mut m =
        Mirror::start(&mirror_args(&source(), &group, &target(), &t, &["--message.handler", "partition-preserving", "--offset.commit.interval.ms", "500"]));
    wait_until("committed", || all_committed(&source(), &group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    let landed = read_topic(&target(), &t);
    assert_eq!(assert_same_records(&t, &recs, &landed), 0);
    for l in &landed {
        let seq = l.rec.seq().unwrap();
        assert_eq!(l.partition as u64, seq % 4, "record {seq} left its source partition");
    }
}

#[test]
#[ignore = "needs clusters"]
fn partition_preserving_refuses_a_smaller_target() {
    require_clusters!(source(), target());
    let t = unique("pp-small");
    create_topic(&source(), &t, 4, &[]);
    create_topic(&target(), &t, 2, &[]);
    let group = unique("pp-small");
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &t, &["--message.handler", "partition-preserving"]));
    assert_eq!(m.wait(), 255, "{}", m.output());
    assert!(m.output().contains("has 2 partitions but source topic"), "{}", m.output());
}
