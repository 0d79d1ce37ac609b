//! The consumer-group admin calls of `kafka::groups` against a real broker
//! (the test clusters' target): groups are listed with their state, a
//! group's committed offsets read back exactly (metadata included), an
//! Empty group's offsets moved, and a group with a live member refused as
//! `GroupError::Active` with its offsets untouched.

mod common;

use common::*;
use mirror_maker::kafka::groups::{admin_consumer, alter_group_offsets, group_offsets, list_groups, GroupError, GroupListing, GroupOffset, GroupState};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

/// The client the group calls take: listing offsets needs a consumer
/// handle with a group.id (see `kafka::groups`), and serves the others too.
fn admin(bootstrap: &str) -> BaseConsumer {
    admin_consumer(ClientConfig::new().set("bootstrap.servers", bootstrap)).unwrap()
}

fn consumer(bootstrap: &str, group: &str) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap()
}

fn offset(topic: &str, partition: i32, offset: i64, metadata: &str) -> GroupOffset {
    GroupOffset { topic: topic.into(), partition, offset, metadata: metadata.into() }
}

/// Commits as a client that never joins the group (as kcat -G would not:
/// it assigns and commits), leaving the group Empty.
fn commit(bootstrap: &str, group: &str, offsets: &[GroupOffset]) {
    let c = consumer(bootstrap, group);
    let mut tpl = TopicPartitionList::new();
    for o in offsets {
        tpl.add_partition_offset(&o.topic, o.partition, Offset::Offset(o.offset)).unwrap();
        tpl.find_partition(&o.topic, o.partition).unwrap().set_metadata(o.metadata.clone());
    }
    c.commit(&tpl, CommitMode::Sync).unwrap();
}

fn listing(bootstrap: &str, group: &str) -> Option<GroupListing> {
    list_groups(admin(bootstrap).client()).unwrap().into_iter().find(|g| g.group == group)
}

#[test]
#[ignore = "needs clusters"]
fn a_committed_group_is_listed_empty_read_back_exactly_and_moved() {
    require_clusters!(target());
    let (topic, group) = (unique("grp-t"), unique("grp-g"));
    create_topic(&target(), &topic, 3, &[]);
    let committed = [offset(&topic, 0, 3, "from-source"), offset(&topic, 1, 7, "")];
    commit(&target(), &group, &committed);

    let listed = listing(&target(), &group).expect("the group is listed");
    assert_eq!(listed.state, GroupState::Empty, "{listed:?}");
    assert!(listed.simple, "a group that only committed has no protocol type: {listed:?}");

    let admin = admin(&target());
    // Partition 2 has no committed offset: left out.
    assert_eq!(group_offsets(admin.client(), &group).unwrap(), committed);

    let moved = [offset(&topic, 0, 10, "failover"), offset(&topic, 1, 2, ""), offset(&topic, 2, 5, "new")];
    alter_group_offsets(admin.client(), &group, &moved).unwrap();
    assert_eq!(group_offsets(admin.client(), &group).unwrap(), moved, "altered offsets and metadata read back as written");
    assert_eq!(listing(&target(), &group).map(|g| g.state), Some(GroupState::Empty));
}

#[test]
#[ignore = "needs clusters"]
fn a_group_the_cluster_does_not_know_has_no_offsets_and_can_be_given_some() {
    require_clusters!(target());
    let (topic, group) = (unique("grp-t"), unique("grp-new"));
    create_topic(&target(), &topic, 1, &[]);
    let admin = admin(&target());
    assert_eq!(group_offsets(admin.client(), &group).unwrap(), []);
    assert_eq!(listing(&target(), &group), None);
    // What a failover does for a group that never ran on the target.
    alter_group_offsets(admin.client(), &group, &[offset(&topic, 0, 42, "")]).unwrap();
    assert_eq!(group_offsets(admin.client(), &group).unwrap(), [offset(&topic, 0, 42, "")]);
}

#[test]
#[ignore = "needs clusters"]
fn a_group_with_an_active_member_is_refused_and_left_unchanged() {
    require_clusters!(target());
    let (topic, group) = (unique("grp-t"), unique("grp-active"));
    create_topic(&target(), &topic, 2, &[]);
    let committed = [offset(&topic, 0, 4, "m0"), offset(&topic, 1, 9, "m1")];
    commit(&target(), &group, &committed);
    let member = ActiveMember::join(&target(), &group, &topic);
    wait_until("the group is Stable", || listing(&target(), &group).is_some_and(|g| g.state == GroupState::Stable && !g.simple));

    let admin = admin(&target());
    let moved = [offset(&topic, 0, 100, ""), offset(&topic, 1, 200, "")];
    let refused = alter_group_offsets(admin.client(), &group, &moved);
    let Err(e @ GroupError::Active { .. }) = &refused else { panic!("expected GroupError::Active, got {refused:?}") };
    eprintln!("broker's refusal: {e}");
    assert_eq!(group_offsets(admin.client(), &group).unwrap(), committed, "offsets unchanged");

    // The refusal was about the member: once it leaves, the same call passes.
    drop(member);
    wait_until("the group is Empty", || listing(&target(), &group).is_some_and(|g| g.state == GroupState::Empty));
    alter_group_offsets(admin.client(), &group, &moved).unwrap();
    assert_eq!(group_offsets(admin.client(), &group).unwrap(), moved);
}
