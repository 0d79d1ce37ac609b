//! End-to-end: records the target rejects for good (larger than the target
//! topic's max.message.bytes), in abort mode and in skip mode.

mod common;

use common::*;

fn big_record(seq: usize) -> Rec {
    Rec { key: Some(b"poison".to_vec()), value: Some(vec![b'x'; 60_000]), headers: vec![("seq".into(), seq.to_string().into_bytes())], timestamp: None }
}

fn committed_offset(group: &str, topic: &str) -> Option<i64> {
    committed_and_end(&source(), group, topic)[0].1
}

#[test]
#[ignore = "needs clusters"]
fn abort_mode_stops_with_the_records_coordinates_and_never_commits_it() {
    require_clusters!(source(), target());
    let t = unique("poison-abort");
    create_topic(&source(), &t, 1, &[]);
    create_topic(&target(), &t, 1, &[("max.message.bytes", "20000")]);
    let group = unique("abort");
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &t, &["--offset.commit.interval.ms", "500"]));
    produce(&source(), &t, &sample_records(&t, 10));
    wait_until("first 10 records committed", || committed_offset(&group, &t) == Some(10));
    // The poison record alone (offset 10), so its batch holds nothing else.
    produce(&source(), &t, &[big_record(10)]);
    assert_eq!(m.wait(), 255, "{}", m.output());
    let log = m.output();
    assert!(log.contains(&format!("from source {t}-0 at offset 10")), "log lacks the coordinates:\n{log}");
    assert!(log.contains("Message size too large") || log.contains("MessageSizeTooLarge") || log.contains("too large"), "{log}");
    assert_eq!(committed_offset(&group, &t), Some(10), "the rejected record's offset must never be committed");

    // After the limit is raised on the target, a restart mirrors it: 0 missing.
    raise_max_message_bytes(&target(), &t);
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &t, &["--offset.commit.interval.ms", "500"]));
    wait_until("poison record mirrored after the fix", || committed_offset(&group, &t) == Some(11));
    assert_eq!(m.stop(), 0, "{}", m.output());
    let landed = read_topic(&target(), &t);
    let mut seqs: Vec<u64> = landed.iter().filter_map(|l| l.rec.seq()).collect();
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs, (0..11).collect::<Vec<u64>>(), "0 missing after the restart");
}

fn raise_max_message_bytes(bootstrap: &str, topic: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions, AlterConfig, ResourceSpecifier};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let cfg = AlterConfig::new(ResourceSpecifier::Topic(topic)).set("max.message.bytes", "1000000");
    for r in block_on(admin.alter_configs(&[cfg], &AdminOptions::new())).unwrap() {
        r.unwrap_or_else(|(_, e)| panic!("alter max.message.bytes: {e}"));
    }
}

#[test]
#[ignore = "needs clusters"]
fn skip_mode_drops_and_counts_only_the_rejected_record() {
    require_clusters!(source(), target());
    let t = unique("poison-skip");
    create_topic(&source(), &t, 1, &[]);
    create_topic(&target(), &t, 1, &[("max.message.bytes", "20000")]);
    let group = unique("skip");
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &t, &["--offset.commit.interval.ms", "500", "--abort.on.send.failure", "false"]));
    let mut recs = sample_records(&t, 10);
    produce(&source(), &t, &recs);
    wait_until("first 10 committed", || committed_offset(&group, &t) == Some(10));
    produce(&source(), &t, &[big_record(10)]);
    wait_until("poison record skipped and committed past", || committed_offset(&group, &t) == Some(11));
    let more: Vec<Rec> = sample_records(&t, 21).into_iter().skip(11).collect();
    produce(&source(), &t, &more);
    wait_until("the rest committed", || committed_offset(&group, &t) == Some(21));
    assert_eq!(m.stop(), 0, "{}", m.output());
    let log = m.output();
    assert!(log.contains(&format!("from source {t}-0 at offset 10")) && log.contains("counted as dropped"), "{log}");
    assert!(log.contains("dropped 1,"), "summary lacks the drop count:\n{log}");
    let landed = read_topic(&target(), &t);
    recs.extend(more);
    let mut seqs: Vec<u64> = landed.iter().filter_map(|l| l.rec.seq()).collect();
    seqs.sort();
    assert_eq!(seqs, (0..21).filter(|s| *s != 10).collect::<Vec<u64>>(), "every record but the rejected one, once");
}
