//! MM2 files read with the meaning Java gives them (issue #30 items 4
//! and 5), against real brokers:
//! - `A.consumer.group.id` does not make the flows out of A share one group
//!   (A->B and A->C would split A's partitions, each copying only part);
//! - `replication.factor = -1` asks the target broker for its
//!   `default.replication.factor`, as Java sends it (KIP-464), instead of
//!   becoming 1;
//! - active/active with IdentityReplicationPolicy in two processes (one per
//!   target, `--clusters`) copies each record once: the loop guard is
//!   decided from the whole file;
//! - the topic config sync removes an override deleted at the source, and
//!   with `use.defaults.from = source` sets the source's defaults.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const DEADLINE: Duration = Duration::from_secs(180);
const IDENTITY: &str = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";

/// Deletes the test's topics on the three clusters when it ends (passed
/// or failed), so later MM2 runs do not copy them again.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for bootstrap in [source(), target(), extra()] {
            delete_topics_containing(&bootstrap, &self.0);
        }
    }
}

fn topic_with_records(bootstrap: &str, topic: &str, partitions: i32, n: usize) -> Vec<Rec> {
    create_topic(bootstrap, topic, partitions, &[]);
    let recs = sample_records(topic, n);
    produce(bootstrap, topic, &recs);
    recs
}

fn start(file: &std::path::Path, extra: &[&str]) -> Mirror {
    let mut args = vec![s("--mm2.config"), path(file)];
    args.extend(extra.iter().map(|a| s(a)));
    Mirror::start(&args)
}

fn running(m: &mut Mirror, what: &str) {
    assert!(m.alive(), "{what} exited early; log:\n{}", m.output());
}

#[test]
#[ignore = "needs clusters"]
fn a_consumer_group_id_in_the_file_does_not_split_fan_out_flows() {
    require_clusters!(source(), target(), extra());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b, c) = (format!("A{id}"), format!("B{id}"), format!("C{id}"));
    let topic = format!("fan-{id}");
    let recs = topic_with_records(&source(), &topic, 4, 400);
    let mut lines = vec![
        format!("clusters = {a}, {b}, {c}"),
        format!("{a}.bootstrap.servers = {}", source()),
        format!("{b}.bootstrap.servers = {}", target()),
        format!("{c}.bootstrap.servers = {}", extra()),
        format!("{a}->{b}.enabled = true"),
        format!("{a}->{c}.enabled = true"),
        format!("topics = {topic}"),
        // One group for every flow out of A, as many files from MM1 days say.
        format!("{a}.consumer.group.id = shared-{id}"),
    ];
    lines.extend(mm2_common_lines());
    let file = props("mm2.properties", &lines);
    let mut ours = start(&file, &[]);
    let remote = format!("{a}.{topic}");
    wait_for("every record on both targets", DEADLINE, || {
        running(&mut ours, "mirror-maker");
        count_records(&target(), &remote) >= recs.len() as i64 && count_records(&extra(), &remote) >= recs.len() as i64
    });
    let dups = assert_same_records(&remote, &recs, &read_topic(&target(), &remote)) + assert_same_records(&remote, &recs, &read_topic(&extra(), &remote));
    let log = ours.output();
    assert!(log.contains(&format!("{a}.consumer.group.id=shared-{id} is not used")), "the unused line is named:\n{log}");
    assert_eq!(ours.stop(), 0, "exit status on SIGTERM; log:\n{}", ours.output());
    // Each flow's progress under its own group.
    for t in [&b, &c] {
        let group = format!("mm2.{a}->{t}");
        wait_for(&format!("{group} committed to the end"), DEADLINE, || all_committed(&source(), &group, &topic));
    }
    println!("fan-out with {a}.consumer.group.id set: {} records on each of {b} and {c} ({dups} duplicates)", recs.len());
}

#[test]
#[ignore = "needs clusters"]
fn replication_factor_minus_one_creates_with_the_brokers_default() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("rf-{id}");
    let recs = topic_with_records(&source(), &topic, 2, 50);
    // The test clusters run Kafka's defaults: default.replication.factor=1.
    let mut lines = mm2_flow_lines(&a, &b, &topic, &[]);
    lines.retain(|l| !l.contains("replication.factor"));
    for key in ["replication.factor", "checkpoints.topic.replication.factor", "heartbeats.topic.replication.factor", "offset-syncs.topic.replication.factor"] {
        lines.push(format!("{key} = -1"));
    }
    lines.extend(["offset.storage.replication.factor = 1", "status.storage.replication.factor = 1", "config.storage.replication.factor = 1"].map(s));
    let file = props("mm2.properties", &lines);
    let mut ours = start(&file, &[]);
    let remote = format!("{a}.{topic}");
    wait_for("the records and the internal topics", DEADLINE, || {
        running(&mut ours, "mirror-maker");
        let on_b = list_topics(&target());
        // The checkpoints and offset-syncs topics carry this test's aliases.
        count_records(&target(), &remote) >= recs.len() as i64
            && on_b.contains(&format!("{a}.checkpoints.internal"))
            && list_topics(&source()).contains(&format!("mm2-offset-syncs.{b}.internal"))
    });
    assert_same_records(&remote, &recs, &read_topic(&target(), &remote));
    let log = ours.output();
    assert!(
        log.contains(&format!(
            "created target topic {remote} like source topic {topic}: 2 partitions, replication factor the broker's default.replication.factor (-1)"
        )),
        "the creation asked for the broker's default:\n{log}"
    );
    assert_eq!(ours.stop(), 0, "exit status on SIGTERM; log:\n{}", ours.output());
}

/// A single-node target of its own whose `default.replication.factor` is 2,
/// which it cannot honour: a creation asking for the broker's default is
/// refused by the broker, where one asking for 1 (what -1 became before)
/// succeeds. The broker, not our log, says what was asked.
struct OwnTarget {
    dir: PathBuf,
    port: u16,
}

impl OwnTarget {
    fn start() -> OwnTarget {
        let dir = std::env::temp_dir().join(unique("mm-rf-cluster"));
        // The target also listens on port+1..+4 (controller, SASL, SSL, mTLS).
        let port = free_run(5);
        let t = OwnTarget { dir, port };
        t.script(&["start-broker", "target"]);
        t
    }

    fn script(&self, args: &[&str]) {
        let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/clusters"))
            .args(args)
            .env("MM_CLUSTERS_DIR", &self.dir)
            .env("MM_TARGET_PORT", self.port.to_string())
            .env("MM_CLUSTER_EXTRA_PROPS_TARGET", "default.replication.factor=2")
            // scripts/test turns these on for the shared target; this one
            // needs no KDC or token endpoint (they would take port+7 and +8,
            // which free_run did not check).
            .env_remove("MM_KERBEROS")
            .env_remove("MM_OIDC")
            .stdin(Stdio::null())
            .output()
            .expect("run scripts/clusters");
        assert!(out.status.success() || args[0] == "stop", "scripts/clusters {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnTarget {
    fn drop(&mut self) {
        self.script(&["stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
#[ignore = "needs clusters"]
fn replication_factor_minus_one_reaches_the_broker() {
    require_clusters!(source());
    let own = OwnTarget::start();
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("rfb-{id}");
    topic_with_records(&source(), &topic, 1, 10);
    let lines = vec![
        format!("clusters = {a}, {b}"),
        format!("{a}.bootstrap.servers = {}", source()),
        format!("{b}.bootstrap.servers = {}", own.bootstrap()),
        format!("{a}->{b}.enabled = true"),
        format!("topics = {topic}"),
        "replication.factor = -1".into(),
        "refresh.topics.interval.seconds = 5".into(),
        "emit.heartbeats.enabled = false".into(),
        "emit.checkpoints.enabled = false".into(),
    ];
    let file = props("mm2.properties", &lines);
    let mut ours = start(&file, &[]);
    let remote = format!("{a}.{topic}");
    let refused = format!("cannot create target topic {remote}");
    wait_for("the broker's answer to the creation", DEADLINE, || {
        let log = ours.output();
        assert!(!log.contains(&format!("created target topic {remote}")), "created although the broker's default cannot be met:\n{log}");
        running(&mut ours, "mirror-maker");
        log.contains(&refused)
    });
    let log = ours.output();
    let line = log.lines().find(|l| l.contains(&refused)).unwrap();
    // The broker's own reason: its default (2) cannot be met by one broker.
    assert!(line.contains("Invalid replication factor"), "the broker's reason is given: {line}");
    assert!(!list_topics(&own.bootstrap()).contains(&remote), "no topic with another factor than the broker's default");
    println!("replication.factor = -1 against default.replication.factor=2 on one broker: {line}");
}

#[test]
#[ignore = "needs clusters"]
fn identity_both_ways_in_a_process_per_target_copies_each_record_once() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let (both, only_a, only_b) = (format!("aa-{id}-both"), format!("aa-{id}-a"), format!("aa-{id}-b"));
    let produced_a = topic_with_records(&source(), &both, 3, 120).len() as i64;
    let produced_b = topic_with_records(&target(), &both, 3, 80).len() as i64;
    let n_a = topic_with_records(&source(), &only_a, 2, 60).len() as i64;
    let n_b = topic_with_records(&target(), &only_b, 1, 40).len() as i64;
    let expected: BTreeMap<String, i64> = BTreeMap::from([(both.clone(), produced_a + produced_b), (only_a.clone(), n_a), (only_b.clone(), n_b)]);
    let mut lines = vec![
        format!("clusters = {a}, {b}"),
        format!("{a}.bootstrap.servers = {}", source()),
        format!("{b}.bootstrap.servers = {}", target()),
        format!("{a}->{b}.enabled = true"),
        format!("{b}->{a}.enabled = true"),
        format!("topics = aa-{id}.*"),
        format!("replication.policy.class = {IDENTITY}"),
    ];
    lines.extend(mm2_common_lines());
    let file = props("mm2.properties", &lines);
    // One process per target cluster, from the one file.
    let mut into_b = start(&file, &["--clusters", &b]);
    let mut into_a = start(&file, &["--clusters", &a]);

    let counts = || -> Vec<(String, &'static str, i64, i64)> {
        let mut v = Vec::new();
        for (t, want) in &expected {
            for (side, bootstrap) in [("A", source()), ("B", target())] {
                v.push((t.clone(), side, count_records(&bootstrap, t), *want));
            }
        }
        v
    };
    let mut check = |c: &[(String, &str, i64, i64)]| {
        running(&mut into_b, "the process with --clusters B");
        running(&mut into_a, "the process with --clusters A");
        let over: Vec<_> = c.iter().filter(|(_, _, n, want)| n > want).collect();
        assert!(over.is_empty(), "records copied back and forth (topic, cluster, count, expected): {over:?}");
    };
    wait_for("every topic to hold what both sides produced", DEADLINE, || {
        let c = counts();
        check(&c);
        c.iter().all(|(_, _, n, want)| n == want)
    });
    // Each flow has read (and committed past) everything on its source,
    // the other flow's copies included: a copy sent back would have been
    // acknowledged on its way before the commit moved past it.
    for (group, bootstrap) in [(format!("mm2.{a}->{b}"), source()), (format!("mm2.{b}->{a}"), target())] {
        for t in expected.keys() {
            wait_for(&format!("{group} committed {t} to the end"), DEADLINE, || {
                check(&counts());
                all_committed(&bootstrap, &group, t)
            });
        }
    }
    let c = counts();
    check(&c);
    assert!(c.iter().all(|(_, _, n, want)| n == want), "counts moved: {c:?}");
    for (m, which) in [(&mut into_b, "--clusters B"), (&mut into_a, "--clusters A")] {
        let log = m.output();
        assert!(log.contains("runs elsewhere (--clusters)"), "{which} says the reverse runs elsewhere:\n{log}");
        assert_eq!(m.stop(), 0, "{which}: exit status on SIGTERM; log:\n{}", m.output());
    }
    println!("identity both ways, two processes: counts (topic, cluster, count, expected) {c:?}");
}

/// Replaces a topic's whole set of overrides (legacy AlterConfigs), as
/// `kafka-configs --alter` after `--delete-config` would leave it.
fn set_topic_configs(bootstrap: &str, topic: &str, configs: &[(&str, &str)]) {
    use rdkafka::admin::{AdminClient, AdminOptions, AlterConfig, ResourceSpecifier};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    let cfg = configs.iter().fold(AlterConfig::new(ResourceSpecifier::Topic(topic)), |a, (k, v)| a.set(k, v));
    for r in block_on(admin.alter_configs(&[cfg], &AdminOptions::new())).unwrap() {
        r.unwrap_or_else(|(_, e)| panic!("alter configs of {topic} on {bootstrap}: {e}"));
    }
}

/// Java 3.9's default `use.incremental.alter.configs = requested` syncs
/// with IncrementalAlterConfigs: an override deleted at the source is
/// deleted at the target too; an override of an excluded config
/// (`min.insync.replicas`, in `config.properties.exclude` by default) set on
/// the target is left alone.
#[test]
#[ignore = "needs clusters"]
fn an_override_deleted_at_the_source_is_deleted_at_the_target() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("cfg-{id}");
    create_topic(&source(), &topic, 1, &[("retention.ms", "3600000"), ("retention.bytes", "1073741824")]);
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &topic, &["sync.topic.configs.interval.seconds = 2".into()]));
    let mut ours = start(&file, &[]);
    let remote = format!("{a}.{topic}");
    let on_target = || if list_topics(&target()).contains(&remote) { topic_level_configs(&target(), &remote) } else { Default::default() };
    wait_for("the target topic with the source's overrides", DEADLINE, || {
        running(&mut ours, "mirror-maker");
        let t = on_target();
        t.get("retention.ms").map(String::as_str) == Some("3600000") && t.get("retention.bytes").map(String::as_str) == Some("1073741824")
    });
    // The target's own override of an excluded config.
    set_topic_configs(&target(), &remote, &[("retention.ms", "3600000"), ("retention.bytes", "1073741824"), ("min.insync.replicas", "1")]);
    // At the source: retention.bytes deleted, retention.ms changed.
    set_topic_configs(&source(), &topic, &[("retention.ms", "7200000")]);
    wait_for("retention.ms synced and retention.bytes deleted on the target", DEADLINE, || {
        running(&mut ours, "mirror-maker");
        let t = on_target();
        t.get("retention.ms").map(String::as_str) == Some("7200000") && !t.contains_key("retention.bytes")
    });
    let t = on_target();
    assert_eq!(t.get("min.insync.replicas").map(String::as_str), Some("1"), "the excluded override stays: {t:?}");
    let log = ours.output();
    assert!(log.contains("retention.bytes removed (at its default on the source)"), "the removal is logged:\n{log}");
    assert_eq!(ours.stop(), 0, "exit status on SIGTERM; log:\n{}", ours.output());
}

/// `A->B.use.defaults.from = source`: the sync sets the source topic's
/// default values on the target topic as overrides, as Java 3.9's
/// `DefaultConfigPropertyFilter.shouldReplicateSourceDefault` asks, so the
/// target topic no longer follows its own broker's defaults; excluded
/// configs (`min.insync.replicas`, by default) are still not copied.
#[test]
#[ignore = "needs clusters"]
fn use_defaults_from_source_sets_the_sources_defaults_on_the_target() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("dflt-{id}");
    create_topic(&source(), &topic, 1, &[("retention.ms", "3600000")]);
    let at_source: BTreeMap<String, String> = describe_topic_configs(&source(), &topic)
        .into_iter()
        .filter(|(_, (_, set))| *set == rdkafka::admin::ConfigSource::Default)
        .map(|(k, (v, _))| (k, v.unwrap_or_default()))
        .collect();
    // Kafka's defaults a topic always has: the source's values must arrive.
    for k in ["cleanup.policy", "segment.bytes", "max.message.bytes"] {
        assert!(at_source.contains_key(k), "{k} is at its default on the source topic: {at_source:?}");
    }
    let extra = [format!("{a}->{b}.use.defaults.from = source"), "sync.topic.configs.interval.seconds = 2".into()];
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &topic, &extra));
    let mut ours = start(&file, &[]);
    let remote = format!("{a}.{topic}");
    let on_target = || if list_topics(&target()).contains(&remote) { topic_level_configs(&target(), &remote) } else { Default::default() };
    wait_for("the source's defaults set on the target topic", DEADLINE, || {
        running(&mut ours, "mirror-maker");
        let t = on_target();
        t.get("retention.ms").map(String::as_str) == Some("3600000")
            && ["cleanup.policy", "segment.bytes", "max.message.bytes"].iter().all(|k| t.get(*k) == at_source.get(*k))
    });
    let t = on_target();
    assert!(!t.contains_key("min.insync.replicas"), "an excluded config is not copied: {t:?}");
    assert_eq!(ours.stop(), 0, "exit status on SIGTERM; log:\n{}", ours.output());
}
