//! End-to-end: state that ends with what it is about. A consumer group
//! deleted on the source is not committed again on the target by a
//! restarted mirror that read its old checkpoints back; topics created,
//! mirrored and deleted at the source leave nothing behind in the mirror's
//! tracked partitions or on `/metrics`.

mod common;

use std::collections::BTreeMap;

use common::*;
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap()
}

/// Commits `offset` on partition 0 for `group` without joining it.
fn commit(bootstrap: &str, group: &str, topic: &str, offset: i64) {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).set("group.id", group).set("enable.auto.commit", "false").create().unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(offset)).unwrap();
    wait_until(&format!("commit of group {group}"), || c.commit(&tpl, CommitMode::Sync).is_ok());
}

/// The group's committed offsets on `topic`, by partition; empty when it has none (or the topic is not there).
fn committed(bootstrap: &str, group: &str, topic: &str) -> BTreeMap<i32, i64> {
    if !list_topics(bootstrap).contains(topic) {
        return BTreeMap::new();
    }
    committed_and_end(bootstrap, group, topic).into_iter().filter_map(|(p, c, _)| Some((p, c?))).collect()
}

/// Every consumer group of the cluster.
fn groups_of(bootstrap: &str) -> Vec<String> {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let list = c.fetch_group_list(None, std::time::Duration::from_secs(15)).expect("list groups");
    list.groups().iter().map(|g| g.name().to_string()).collect()
}

fn delete_group(bootstrap: &str, group: &str) {
    wait_until(&format!("group {group} deleted on {bootstrap}"), || {
        let answer = block_on(admin(bootstrap).delete_groups(&[group], &AdminOptions::new()));
        matches!(answer.as_deref(), Ok([Ok(_)])) || !groups_of(bootstrap).iter().any(|g| g == group)
    });
}

#[test]
fn a_group_deleted_on_the_source_is_not_synced_again_after_a_restart() {
    require_clusters!();
    let id = short_id();
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("gone{id}");
    let remote = format!("{a}.{topic}");
    create_topic(&source(), &topic, 1, &[]);
    produce(&source(), &topic, &sample_records(&topic, 100));
    let (gone, live) = (format!("gone-group-{id}"), format!("live-group-{id}"));
    commit(&source(), &gone, &topic, 50);
    commit(&source(), &live, &topic, 50);
    let mut lines = vec![
        format!("clusters = {a}, {b}"),
        format!("{a}.bootstrap.servers = {}", source()),
        format!("{b}.bootstrap.servers = {}", target()),
        format!("{a}->{b}.enabled = true"),
        format!("{b}->{a}.enabled = false"),
        "emit.heartbeats.enabled = false".into(),
        format!("{a}->{b}.topics = {topic}"),
        format!("{a}->{b}.groups = (gone|live)-group-{id}"),
        "sync.group.offsets.enabled = true".into(),
        "emit.checkpoints.interval.seconds = 1".into(),
        "sync.group.offsets.interval.seconds = 1".into(),
        "refresh.groups.interval.seconds = 1".into(),
    ];
    lines.extend(mm2_common_lines());
    let file = props("mm2.properties", &lines);
    let mut m = Mirror::start(&[s("--mm2.config"), path(&file)]);
    // Every record is copied one for one, so offset 50 translates to 50.
    wait_until("both groups synced to the target", || {
        committed(&target(), &gone, &remote).get(&0) == Some(&50) && committed(&target(), &live, &remote).get(&0) == Some(&50)
    });
    m.stop();

    delete_group(&source(), &gone);
    delete_group(&target(), &gone);
    assert!(committed(&target(), &gone, &remote).is_empty(), "the group is gone from the target before the restart");
    let mut m = Mirror::start(&[s("--mm2.config"), path(&file)]);
    // Two sync rounds after the restart, each proven by the live group
    // moving on the target: the first round that moves it (which read the
    // old checkpoints back, the deleted group's among them) has ended when
    // the second moves it again. New records each time, so a fresh
    // offset-sync makes the group's new offset translate past the old one.
    let mut at = 50;
    for round in 1..=2 {
        produce(&source(), &topic, &sample_records(&topic, 20));
        commit(&source(), &live, &topic, 100 + 20 * round);
        wait_until(&format!("sync round {round} after the restart moves the live group past {at} on the target"), || {
            committed(&target(), &live, &remote).get(&0).is_some_and(|&o| o > at)
        });
        at = committed(&target(), &live, &remote)[&0];
    }
    let on_target = committed(&target(), &gone, &remote);
    let log = m.output();
    m.stop();
    assert!(on_target.is_empty(), "the group deleted on the source came back on the target with {on_target:?}; log:\n{log}");
    assert!(!groups_of(&target()).contains(&gone), "the deleted group is listed on the target again");
}
