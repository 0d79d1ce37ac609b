//! End-to-end: state that ends with what it is about. A consumer group
//! deleted on the source is not committed again on the target by a
//! restarted mirror that read its old checkpoints back; topics created,
//! mirrored and deleted at the source leave nothing behind in the mirror's
//! tracked partitions or on `/metrics`.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
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
#[ignore = "needs clusters"]
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

/// Creating, mirroring and deleting 1,000 topics on a loaded 2-core
/// machine takes longer than the common deadline.
const LONG: Duration = Duration::from_secs(600);

fn wait_long(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + LONG;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out after {LONG:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// One admin request per 100 topics (the test's setup, not what is tested).
fn create_topics(bootstrap: &str, names: &[String]) {
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(60)));
    for part in names.chunks(100) {
        let new: Vec<NewTopic<'_>> = part.iter().map(|n| NewTopic::new(n, 1, TopicReplication::Fixed(1))).collect();
        for r in block_on(admin(bootstrap).create_topics(&new, &opts)).expect("create the source topics") {
            r.unwrap_or_else(|(t, e)| panic!("create source topic {t}: {e}"));
        }
    }
}

fn delete_topics(bootstrap: &str, names: &[String]) {
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(60)));
    for part in names.chunks(100) {
        let refs: Vec<&str> = part.iter().map(String::as_str).collect();
        for r in block_on(admin(bootstrap).delete_topics(&refs, &opts)).expect("delete the source topics") {
            r.unwrap_or_else(|(t, e)| panic!("delete source topic {t}: {e}"));
        }
    }
}

/// The series on the page naming a topic that starts with `prefix`.
fn series_naming(page: &Scrape, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = page.series.keys().filter(|k| k.contains(&format!("topic=\"{prefix}"))).cloned().collect();
    v.sort();
    v
}

/// Records acknowledged by the target for `topic`, as its series says (None: no series).
fn produced_of(page: &Scrape, topic: &str) -> Option<f64> {
    page.matching("mirror_maker_records_produced_total", &[("topic", topic)]).first().map(|(_, v)| *v)
}

#[test]
#[ignore = "needs clusters"]
fn a_thousand_topics_created_and_deleted_at_the_source_leave_no_trace() {
    require_clusters!();
    let id = short_id();
    let prefix = format!("fg{id}");
    let names: Vec<String> = (0..1000).map(|i| format!("{prefix}-{i}")).collect();
    create_topics(&source(), &names);
    let records: Vec<(String, Vec<Rec>)> = names.iter().map(|n| (n.clone(), sample_records(n, 2))).collect();
    let port = free_port();
    let mut args = checkpointing_mirror(&format!("{prefix}-.*"), &prefix);
    args.extend([s("--metrics.port"), port.to_string()]);
    let mut m = Mirror::start(&args);
    wait_long("the mirror's metrics endpoint", || {
        assert!(m.alive(), "the mirror stopped; log:\n{}", m.output());
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let batches: Vec<(&str, Option<i32>, &[Rec])> = records.iter().map(|(t, r)| (t.as_str(), None, r.as_slice())).collect();
    produce_many(&source(), &batches);
    wait_long("every topic's 2 records acknowledged by the target", || {
        let page = scrape(port);
        names.iter().all(|n| produced_of(&page, n) == Some(2.0))
    });
    let routes = scrape(port).sum("mirror_maker_topic_routes");
    assert_eq!(routes, Some(1000.0), "one route per mirrored topic while they exist");

    delete_topics(&source(), &names);
    wait_long("no series naming the deleted topics, and no routes left", || {
        let page = scrape(port);
        series_naming(&page, &prefix).is_empty() && page.sum("mirror_maker_topic_routes") == Some(0.0)
    });
    m.wait_for_log("offset-sync partitions tracked: 0");

    // One comes back with the same name: its state starts afresh (3 records, not 2 + 3).
    let again = &names[7];
    wait_long("the deleted topic gone from the source's listing", || !list_topics(&source()).contains(again));
    wait_until("the topic made again", || {
        let r = block_on(admin(&source()).create_topics(&[NewTopic::new(again, 1, TopicReplication::Fixed(1))], &AdminOptions::new()));
        matches!(r.as_deref(), Ok([Ok(_)])) || list_topics(&source()).contains(again)
    });
    produce(&source(), again, &sample_records(again, 3));
    wait_long("the topic made again mirrored with fresh counters", || produced_of(&scrape(port), again) == Some(3.0));
    assert_eq!(scrape(port).sum("mirror_maker_topic_routes"), Some(1.0));
    assert!(m.alive(), "the mirror stopped; log:\n{}", m.output());
    m.stop();
}

/// MM1 mode with checkpoints (so offset-syncs are tracked per partition),
/// topics looked at every second. An alias of the test's own: its syncs
/// topic then holds no other run's syncs, which would be read back.
fn checkpointing_mirror(whitelist: &str, alias: &str) -> Vec<String> {
    let consumer = props(
        "consumer.properties",
        &[format!("bootstrap.servers={}", source()), format!("group.id={}", unique("forget-mirror")), "auto.offset.reset=earliest".into()],
    );
    let mut args = vec![s("--consumer.config"), path(&consumer), s("--producer.config"), path(&producer_props(&target())), s("--whitelist"), s(whitelist)];
    let extra = [
        "--message.handler",
        "partition-preserving",
        "--emit.checkpoints",
        "true",
        "--source.alias",
        alias,
        "--checkpoint.interval.ms",
        "1000",
        "--topic.refresh.interval.ms",
        "1000",
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}
