//! `mirror-maker translate-offsets` end to end, with the real binary and
//! the test clusters' target: checkpoint records are written into
//! `<alias>.checkpoints.internal` with the library's own encoder (Java's
//! byte format), the command prints the last one per partition for the
//! group with the group's committed offset beside it, `--apply` commits
//! them forward only, a group with a live member is refused and left as it
//! was, and a missing topic or group says what to check. Each test uses a
//! source alias of its own, so its checkpoints topic is its own.

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};

use common::*;
use mirror_maker::formats::Checkpoint;
use mirror_maker::kafka::groups::{admin_consumer, alter_group_offsets, group_offsets, list_groups, GroupOffset, GroupState};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;

fn admin(bootstrap: &str) -> BaseConsumer {
    admin_consumer(ClientConfig::new().set("bootstrap.servers", bootstrap)).unwrap()
}

fn checkpoint(group: &str, topic: &str, partition: i32, upstream: i64, downstream: i64, metadata: &str) -> Checkpoint {
    Checkpoint { group: group.into(), topic: topic.into(), partition, upstream_offset: upstream, downstream_offset: downstream, metadata: metadata.into() }
}

/// Writes records into partition 0 of the alias's checkpoints topic, made
/// compacted as MM2 makes it; each checkpoint with the timestamp given.
fn write_checkpoints(alias: &str, records: &[Rec]) {
    let topic = format!("{alias}.checkpoints.internal");
    if partitions_of(&target(), &topic).is_none() {
        create_topic(&target(), &topic, 1, &[("cleanup.policy", "compact")]);
    }
    produce_to(&target(), &topic, Some(0), records);
}

fn rec(c: &Checkpoint, timestamp: i64) -> Rec {
    Rec { key: Some(c.encode_key().unwrap()), value: Some(c.encode_value().unwrap()), headers: Vec::new(), timestamp: Some(timestamp) }
}

fn translate_offsets(args: &[&str]) -> Output {
    Command::new(bin()).arg("translate-offsets").args(args).stdin(Stdio::null()).output().expect("run mirror-maker translate-offsets")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The answer lines (`topic partition offset committed=…`), comments left out.
fn answer(o: &Output) -> Vec<String> {
    stdout(o).lines().filter(|l| !l.starts_with('#') && !l.starts_with("applied") && !l.starts_with("kept")).map(str::to_string).collect()
}

fn offsets_of(group: &str) -> BTreeMap<(String, i32), (i64, String)> {
    group_offsets(admin(&target()).client(), group).unwrap().into_iter().map(|o| ((o.topic, o.partition), (o.offset, o.metadata))).collect()
}

fn commit(group: &str, offsets: &[(&str, i32, i64)]) {
    let offsets: Vec<GroupOffset> =
        offsets.iter().map(|(t, p, o)| GroupOffset { topic: t.to_string(), partition: *p, offset: *o, metadata: String::new() }).collect();
    alter_group_offsets(admin(&target()).client(), group, &offsets).unwrap();
}

/// A source alias, its remote topic on the target (3 partitions), and a group.
fn scenario(prefix: &str) -> (String, String, String) {
    let alias = unique(prefix);
    let topic = format!("{alias}.orders");
    create_topic(&target(), &topic, 3, &[]);
    (alias, topic, unique("fo-group"))
}

#[test]
#[ignore = "needs clusters"]
fn prints_the_last_checkpoint_per_partition_and_applies_them_forward_only() {
    require_clusters!(target());
    let (alias, topic, group) = scenario("fo");
    let t = topic.as_str();
    write_checkpoints(
        &alias,
        &[
            rec(&checkpoint(&group, t, 0, 12, 10, "meta-0"), 1_700_000_000_000),
            rec(&checkpoint("another-group", t, 0, 99, 99, ""), 1_700_000_000_500),
            rec(&checkpoint(&group, t, 1, 9, 7, "meta-1"), 1_700_000_001_000),
            rec(&checkpoint(&group, t, 2, 120, 100, "meta-2"), 1_700_000_002_000),
            Rec { key: Some(b"not a checkpoint".to_vec()), value: Some(b"x".to_vec()), headers: Vec::new(), timestamp: Some(1_700_000_002_500) },
            rec(&checkpoint(&group, t, 0, 17, 15, "meta-0b"), 1_700_000_003_000),
        ],
    );
    // On the target the group is behind on partition 1 and ahead on 2.
    commit(&group, &[(t, 1, 3), (t, 2, 200)]);
    let target_config = producer_props(&target());
    let base = ["--group", &group, "--source.alias", &alias, "--target.config", target_config.to_str().unwrap()];

    let printed = translate_offsets(&base);
    assert_eq!(printed.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(&printed), stderr(&printed));
    assert_eq!(answer(&printed), [format!("{t} 0 15 committed=none"), format!("{t} 1 7 committed=3"), format!("{t} 2 100 committed=200")]);
    let out = stdout(&printed);
    assert!(out.contains(&format!("# group {group}: 3 partition(s) from {alias}.checkpoints.internal partition 0")), "{out}");
    assert!(out.contains("newest checkpoint 2023-11-14T22:13:23.000Z (1700000003000)"), "{out}");
    assert!(out.contains("# 1 of 6 records skipped: not checkpoints"), "{out}");
    let before = offsets_of(&group);
    assert_eq!(before.len(), 2, "printing changes nothing: {before:?}");

    let applied = translate_offsets(&[&base[..], &["--apply"]].concat());
    assert_eq!(applied.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(&applied), stderr(&applied));
    let out = stdout(&applied);
    assert!(out.contains(&format!("applied {t} 0 15 (had none)")), "{out}");
    assert!(out.contains(&format!("applied {t} 1 7 (was 3)")), "{out}");
    assert!(out.contains(&format!("kept {t} 2 200 (already at or past the translated 100; never rewound)")), "{out}");
    let after = offsets_of(&group);
    let expected: BTreeMap<(String, i32), (i64, String)> =
        [((topic.clone(), 0), (15, "meta-0b".to_string())), ((topic.clone(), 1), (7, "meta-1".to_string())), ((topic.clone(), 2), (200, String::new()))].into();
    assert_eq!(after, expected, "moved forward with the checkpoints' metadata; partition 2 not rewound");

    // A second --apply has nothing left to move.
    let again = translate_offsets(&[&base[..], &["--apply"]].concat());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).contains("# applied 0 of 3 partition(s)"), "{}", stdout(&again));
    assert_eq!(offsets_of(&group), expected);
}

#[test]
#[ignore = "needs clusters"]
fn an_mm2_file_and_a_cluster_alias_name_the_target() {
    require_clusters!(source(), target());
    let (alias, topic, group) = scenario("fo-mm2");
    write_checkpoints(&alias, &[rec(&checkpoint(&group, &topic, 1, 50, 42, ""), 1_700_000_000_000)]);
    let mm2 = props(
        "mm2.properties",
        &[
            format!("clusters = {alias}, backup"),
            format!("{alias}.bootstrap.servers = {}", source()),
            format!("backup.bootstrap.servers = {}", target()),
            format!("{alias}->backup.enabled = true"),
        ],
    );
    let out = translate_offsets(&["--group", &group, "--source.alias", &alias, "--mm2.config", mm2.to_str().unwrap(), "--target", "backup"]);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    assert_eq!(answer(&out), [format!("{topic} 1 42 committed=none")]);
    assert!(stdout(&out).contains(&format!("on cluster backup ({})", target())), "{}", stdout(&out));

    let wrong = translate_offsets(&["--group", &group, "--source.alias", &alias, "--mm2.config", mm2.to_str().unwrap(), "--target", "nowhere"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains("no flow writes to a cluster 'nowhere'"), "{}", stderr(&wrong));
}

#[test]
#[ignore = "needs clusters"]
fn an_active_group_is_refused_and_left_unchanged() {
    require_clusters!(target());
    let (alias, topic, group) = scenario("fo-active");
    write_checkpoints(&alias, &[rec(&checkpoint(&group, &topic, 0, 30, 25, ""), 1_700_000_000_000)]);
    commit(&group, &[(&topic, 0, 5)]);
    let _member = ActiveMember::join(&target(), &group, &topic);
    wait_until("the group is Stable on the target", || {
        list_groups(admin(&target()).client()).unwrap().iter().any(|g| g.group == group && g.state == GroupState::Stable)
    });
    let target_config = producer_props(&target());
    let out = translate_offsets(&["--group", &group, "--source.alias", &alias, "--target.config", target_config.to_str().unwrap(), "--apply"]);
    assert_eq!(out.status.code(), Some(1), "stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("group '{group}' has active members")) && err.contains("stop the group's consumers"), "{err}");
    assert_eq!(answer(&out), [format!("{topic} 0 25 committed=5")], "the translation is still printed");
    assert_eq!(offsets_of(&group), [((topic.clone(), 0), (5, String::new()))].into(), "unchanged");
}

#[test]
#[ignore = "needs clusters"]
fn a_missing_topic_or_group_is_an_error_that_says_what_to_check() {
    require_clusters!(target());
    let target_config = producer_props(&target());
    let cfg = target_config.to_str().unwrap();
    let alias = unique("fo-none");
    let missing = translate_offsets(&["--group", "g", "--source.alias", &alias, "--target.config", cfg]);
    assert_eq!(missing.status.code(), Some(1));
    let err = stderr(&missing);
    assert!(err.contains(&format!("topic {alias}.checkpoints.internal does not exist on {}", target())), "{err}");
    assert!(err.contains("emit.checkpoints.enabled") && err.contains("`groups` filter"), "{err}");
    assert_eq!(stdout(&missing), "");

    write_checkpoints(&alias, &[rec(&checkpoint("someone-else", "x", 0, 1, 1, ""), 1_700_000_000_000)]);
    let other = translate_offsets(&["--group", "g", "--source.alias", &alias, "--target.config", cfg]);
    assert_eq!(other.status.code(), Some(1));
    let err = stderr(&other);
    assert!(
        err.contains(&format!("{alias}.checkpoints.internal on {}", target())) && err.contains("holds no checkpoint for group 'g' (1 records read)"),
        "{err}"
    );

    let usage = translate_offsets(&["--group", "g", "--source.alias", &alias]);
    assert_eq!(usage.status.code(), Some(1));
    assert!(stderr(&usage).contains("--target.config"), "{}", stderr(&usage));
}
