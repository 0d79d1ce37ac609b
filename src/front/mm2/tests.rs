//! Whole-file tests of the MM2 front-end: every key of reference §1 read
//! with its default and its overrides, the precedence rules of §1.3 and
//! their consequences for users, the client layers of §1.4, and the
//! problems of §6 named with their fix.

use std::path::Path;

use super::*;
use crate::front::translate;
use crate::kafka::settings::Role;
use crate::plan::policy::IDENTITY_POLICY_CLASS;

const BASE: &str = "clusters = A, B\nA.bootstrap.servers = a1:9092, a2:9092\nB.bootstrap.servers = b1:9092\nA->B.enabled = true\n";

fn parse_str(text: &str) -> Result<Mm2Config, ConfigError> {
    parse(Path::new("mm2.properties"), text.as_bytes(), &[])
}

fn cfg(text: &str) -> Mm2Config {
    parse_str(text).unwrap_or_else(|e| panic!("{e}\n--- file:\n{text}"))
}

fn with(extra: &str) -> Mm2Config {
    cfg(&format!("{BASE}{extra}"))
}

fn flow<'a>(c: &'a Mm2Config, name: &str) -> &'a Flow {
    c.flows.iter().find(|f| f.name() == name).unwrap_or_else(|| panic!("no flow {name}: {:?}", c.flows.iter().map(Flow::name).collect::<Vec<_>>()))
}

fn origin<'a>(f: &'a Flow, key: &str) -> &'a SettingOrigin {
    f.origins.iter().find(|o| o.key == key).unwrap_or_else(|| panic!("no origin for {key}"))
}

fn warned(c: &Mm2Config, needles: &[&str]) -> bool {
    c.warnings.iter().any(|w| needles.iter().all(|n| w.contains(n)))
}

fn err(text: &str) -> String {
    match parse_str(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn value<'a>(c: &'a ClientProps, key: &str) -> Option<&'a str> {
    c.file.get(key).map(|p| p.value.as_str())
}

fn line(c: &ClientProps, key: &str) -> usize {
    c.file.get(key).unwrap_or_else(|| panic!("{key} not in {:?}", c.file.props)).line
}

type Typed = fn(&Flow) -> String;

fn periodic(p: &Periodic) -> (String, String) {
    (p.enabled.to_string(), p.interval_seconds.to_string())
}

/// Every connector key of §1.6: Java's default, a value, and the typed field it lands in.
const KEYS: &[(&str, &str, &str, Typed)] = &[
    ("tasks.max", "1", "4", |f| f.tasks_max.to_string()),
    ("topics", ".*", "orders,pay.*", |f| f.settings.topics.join(",")),
    ("topics.exclude", ".*[\\-\\.]internal,.*\\.replica,__.*", "tmp.*", |f| f.settings.topics_exclude.join(",")),
    ("groups", ".*", "g1,g2", |f| f.settings.groups.join(",")),
    ("groups.exclude", "console-consumer-.*,connect-.*,__.*", "test-.*", |f| f.settings.groups_exclude.join(",")),
    ("replication.factor", "2", "3", |f| f.settings.replication_factor.to_string()),
    ("offset-syncs.topic.replication.factor", "3", "1", |f| f.settings.offset_syncs_topic_replication_factor.to_string()),
    ("checkpoints.topic.replication.factor", "3", "1", |f| f.settings.checkpoints_topic_replication_factor.to_string()),
    ("heartbeats.topic.replication.factor", "3", "1", |f| f.settings.heartbeats_topic_replication_factor.to_string()),
    ("offset-syncs.topic.location", "Source", "target", |f| format!("{:?}", f.settings.offset_syncs_topic_location)),
    ("emit.offset-syncs.enabled", "true", "false", |f| f.settings.emit_offset_syncs_enabled.to_string()),
    ("offset.lag.max", "100", "0", |f| f.settings.offset_lag_max.to_string()),
    ("refresh.topics.enabled", "true", "false", |f| periodic(&f.settings.refresh_topics).0),
    ("refresh.topics.interval.seconds", "600", "30", |f| periodic(&f.settings.refresh_topics).1),
    ("sync.topic.configs.enabled", "true", "false", |f| periodic(&f.settings.sync_topic_configs).0),
    ("sync.topic.configs.interval.seconds", "600", "31", |f| periodic(&f.settings.sync_topic_configs).1),
    ("sync.topic.acls.enabled", "true", "false", |f| periodic(&f.settings.sync_topic_acls).0),
    ("sync.topic.acls.interval.seconds", "600", "32", |f| periodic(&f.settings.sync_topic_acls).1),
    ("refresh.groups.enabled", "true", "false", |f| periodic(&f.settings.refresh_groups).0),
    ("refresh.groups.interval.seconds", "600", "33", |f| periodic(&f.settings.refresh_groups).1),
    ("emit.checkpoints.enabled", "true", "false", |f| periodic(&f.settings.emit_checkpoints).0),
    ("emit.checkpoints.interval.seconds", "60", "5", |f| periodic(&f.settings.emit_checkpoints).1),
    ("sync.group.offsets.enabled", "false", "true", |f| periodic(&f.settings.sync_group_offsets).0),
    ("sync.group.offsets.interval.seconds", "60", "10", |f| periodic(&f.settings.sync_group_offsets).1),
    ("emit.heartbeats.enabled", "true", "false", |f| periodic(&f.settings.emit_heartbeats).0),
    ("emit.heartbeats.interval.seconds", "1", "5", |f| periodic(&f.settings.emit_heartbeats).1),
    ("config.properties.exclude", "", "retention[.]ms,cleanup[.]policy", |f| f.settings.config_properties_exclude.join(",")),
    ("use.incremental.alter.configs", "Requested", "never", |f| format!("{:?}", f.settings.use_incremental_alter_configs)),
    ("consumer.poll.timeout.ms", "1000", "500", |f| f.settings.consumer_poll_timeout_ms.to_string()),
    ("admin.timeout.ms", "60000", "1000", |f| f.settings.admin_timeout_ms.to_string()),
    ("add.source.alias.to.metrics", "false", "true", |f| f.settings.add_source_alias_to_metrics.to_string()),
    ("replication.policy.separator", ".", "_", |f| f.policy.separator.clone()),
    ("replication.policy.class", "Default", IDENTITY_POLICY_CLASS, |f| match f.policy.kind {
        PolicyKind::Identity => IDENTITY_POLICY_CLASS.to_string(),
        k => format!("{k:?}"),
    }),
];

/// The typed value as the table writes it (enumerations by variant name).
fn typed_as_written(v: &str) -> String {
    match v {
        "target" => "Target".into(),
        "never" => "Never".into(),
        _ => v.to_string(),
    }
}

// §1.6: each key's default, a top-level value (every flow) and a per-flow override.
#[test]
fn every_connector_key_default_top_level_and_per_flow() {
    let base_lines = BASE.lines().count();
    for (key, default, v, typed) in KEYS {
        let c = with("");
        let f = flow(&c, "A->B");
        if !default.is_empty() {
            assert_eq!(typed(f), *default, "default of {key}");
        }
        assert_eq!(origin(f, key).origin, "default", "{key}");

        let c = with(&format!("{key} = {v}\n"));
        let f = flow(&c, "A->B");
        assert_eq!(typed(f), typed_as_written(v), "top-level {key}");
        assert_eq!(origin(f, key).origin, format!("mm2.properties:{}: {key}", base_lines + 1), "{key}");
        if let Some(back) = c.flows.iter().find(|f| f.name() == "B->A") {
            assert_eq!(typed(back), typed_as_written(v), "a top-level {key} is every flow's");
        }

        // Written into a properties file, a backslash needs escaping.
        let java_default = keys::connector_def(key).and_then(|d| d.default).unwrap();
        let c = with(&format!("{key} = {}\nA->B.{key} = {v}\n", java_default.replace('\\', "\\\\")));
        let f = flow(&c, "A->B");
        assert_eq!(typed(f), typed_as_written(v), "A->B.{key} beats top-level {key}");
        assert_eq!(origin(f, key).origin, format!("mm2.properties:{}: A->B.{key}", base_lines + 2), "{key}");
        if let (false, Some(back)) = (default.is_empty(), c.flows.iter().find(|f| f.name() == "B->A")) {
            assert_eq!(typed(back), *default, "A->B.{key} leaves B->A alone");
        }
    }
}

// §1.6: use.defaults.from is in no ConfigDef, so only the per-flow form counts.
#[test]
fn use_defaults_from_only_per_flow() {
    let c = with("use.defaults.from = source\n");
    assert_eq!(flow(&c, "A->B").settings.use_defaults_from, DefaultsFrom::Target);
    assert!(warned(&c, &["mm2.properties:5", "use.defaults.from is ignored at top level", "<source>-><target>.use.defaults.from"]), "{:?}", c.warnings);
    let c = with("A->B.use.defaults.from = source\n");
    assert_eq!(flow(&c, "A->B").settings.use_defaults_from, DefaultsFrom::Source);
}

// §1.2: clusters, bootstrap, herders for heartbeats.
#[test]
fn topology_and_heartbeat_only_herders() {
    let c = with("");
    assert_eq!(
        c.clusters,
        [Cluster { alias: "A".into(), bootstrap: "a1:9092,a2:9092".into(), line: 2 }, Cluster { alias: "B".into(), bootstrap: "b1:9092".into(), line: 3 }]
    );
    let names: Vec<_> = c.flows.iter().map(Flow::name).collect();
    assert_eq!(names, ["A->B", "B->A"]);
    let (ab, ba) = (flow(&c, "A->B"), flow(&c, "B->A"));
    assert!(ab.enabled && ab.heartbeats_enabled);
    assert!(!ba.enabled && ba.heartbeats_enabled, "B->A exists only for heartbeats");
    assert!(!ba.should_replicate_topic("orders"));
    assert!(c.notices.iter().any(|n| n.contains("flow B->A: not enabled; only heartbeats")), "{:?}", c.notices);

    let c = with("emit.heartbeats.enabled = false\n");
    assert_eq!(c.flows.iter().map(Flow::name).collect::<Vec<_>>(), ["A->B"]);
    assert!(!flow(&c, "A->B").heartbeats_enabled);
    // The per-pair key beats the global one.
    let c = with("emit.heartbeats.enabled = false\nB->A.emit.heartbeats.enabled = true\n");
    assert_eq!(c.flows.len(), 2);
    let c = with("A->B.emit.heartbeats.enabled = false\nB->A.emit.heartbeats.enabled = false\n");
    assert_eq!(c.flows.iter().map(Flow::name).collect::<Vec<_>>(), ["A->B"], "enabled keeps the herder");
}

// The sample file Kafka ships (config/connect-mirror-maker.properties, 3.9).
#[test]
fn kafkas_sample_file() {
    let c = cfg("# Licensed to the Apache Software Foundation\nclusters = A, B\n\
         A.bootstrap.servers = A_host1:9092, A_host2:9092, A_host3:9092\nB.bootstrap.servers = B_host1:9092, B_host2:9092, B_host3:9092\n\
         A->B.enabled = true\nA->B.topics = .*\nB->A.enabled = true\nB->A.topics = .*\nreplication.factor=1\n\
         checkpoints.topic.replication.factor=1\nheartbeats.topic.replication.factor=1\noffset-syncs.topic.replication.factor=1\n\
         offset.storage.replication.factor=1\nstatus.storage.replication.factor=1\nconfig.storage.replication.factor=1\n");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    for name in ["A->B", "B->A"] {
        let f = flow(&c, name);
        assert!(f.enabled);
        assert_eq!(f.settings.replication_factor, 1);
        assert_eq!(f.settings.heartbeats_topic_replication_factor, 1);
    }
    assert_eq!(c.clusters[0].bootstrap, "A_host1:9092,A_host2:9092,A_host3:9092");
    let ab = flow(&c, "A->B");
    assert!(ab.should_replicate_topic("orders") && ab.should_replicate_topic("heartbeats"));
    assert!(!ab.should_replicate_topic("B.orders"), "came from B");
    assert_eq!(ab.remote_topic("orders"), "A.orders");
    assert_eq!(ab.offset_syncs_topic(), "mm2-offset-syncs.B.internal");
}

// §1.1: --clusters keeps flows by target.
#[test]
fn clusters_option_restricts_by_target() {
    let text = format!("{BASE}B->A.enabled = true\nclusters = A, B, C\nC.bootstrap.servers = c:1\n");
    let only = |cl: &[&str]| parse(Path::new("mm2.properties"), text.as_bytes(), &cl.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let c = only(&["B"]).unwrap();
    assert!(c.flows.iter().all(|f| f.target == "B"), "{:?}", c.flows.iter().map(Flow::name).collect::<Vec<_>>());
    assert_eq!(c.flows.len(), 2, "A->B and C->B (heartbeats)");
    let c = only(&["B", "X"]).unwrap();
    assert!(warned(&c, &["--clusters X", "not an alias"]));
    // Nothing left: Java's "No source->target replication flows.", with the fix.
    let e = parse(Path::new("mm2.properties"), format!("{BASE}emit.heartbeats.enabled=false\n").as_bytes(), &["A".to_string()]).unwrap_err().to_string();
    assert!(e.contains("no source->target replication flow") && e.contains("--clusters A") && e.contains("flows exist into B"), "{e}");
    let e = err("clusters = A\nA.bootstrap.servers = a:1\n");
    assert!(e.contains("a flow needs two"), "{e}");
    let e = err("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nemit.heartbeats.enabled = false\n");
    assert!(e.contains("no pair has <source>-><target>.enabled = true"), "{e}");
}

// §1.1: A->B.enabled read raw by clusterPairs, trimmed by the connectors.
#[test]
fn trailing_whitespace_in_enabled() {
    let c = cfg("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nA->B.enabled = true \n");
    assert!(flow(&c, "A->B").enabled, "the heartbeats herder exists and the connectors read 'true' trimmed");
    assert!(warned(&c, &["mm2.properties:4", "A->B.enabled='true '", "ends in whitespace"]), "{:?}", c.warnings);
    let e = err("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nA->B.enabled = true \nemit.heartbeats.enabled = false\n");
    assert!(e.contains("no source->target replication flow"), "without heartbeats no herder exists: {e}");
    let e = err(&format!("{BASE}B->A.enabled = yes\n"));
    assert!(e.starts_with("mm2.properties:5: B->A.enabled='yes' must be true or false"), "{e}");
}

// §1.3: the consequences for users.
#[test]
fn cluster_level_connector_keys_do_nothing() {
    let c = with("A.topics = orders\nB.sync.group.offsets.enabled = true\n");
    let f = flow(&c, "A->B");
    assert_eq!(f.settings.topics, [".*"]);
    assert!(!f.settings.sync_group_offsets.enabled);
    assert!(
        warned(&c, &["mm2.properties:5: A.topics has no effect", "source.cluster.topics", "Write topics (every flow) or A-><target>.topics"]),
        "{:?}",
        c.warnings
    );
    assert!(warned(&c, &["B.sync.group.offsets.enabled has no effect"]));
}

#[test]
fn top_level_client_role_keys_are_dropped() {
    let c = with("consumer.max.poll.records = 10\nproducer.batch.size = 1\nadmin.request.timeout.ms = 5\nconsumer.poll.timeout.ms = 250\n");
    let f = flow(&c, "A->B");
    assert_eq!(value(&f.consumer, "max.poll.records"), None);
    assert_eq!(value(&f.producer, "batch.size"), None);
    assert_eq!(value(&f.source_admin, "request.timeout.ms"), None);
    assert!(warned(&c, &["mm2.properties:5: consumer.max.poll.records is ignored", "A.consumer.max.poll.records"]), "{:?}", c.warnings);
    assert!(warned(&c, &["producer.batch.size is ignored", "<source>-><target>.producer.override.*"]));
    assert!(warned(&c, &["admin.request.timeout.ms is ignored"]));
    // consumer.poll.timeout.ms is the connector's own key, not the consumer's: read, and said to have no effect here.
    assert_eq!(f.settings.consumer_poll_timeout_ms, 250);
    assert!(!c.warnings.iter().any(|w| w.contains("consumer.poll.timeout.ms is ignored")), "{:?}", c.warnings);
    assert!(warned(&c, &["mm2.properties:8: consumer.poll.timeout.ms has no effect in this mirror"]), "{:?}", c.warnings);
    assert_eq!(value(&f.consumer, "poll.timeout.ms"), None);
}

// Java's {source,target}AdminConfig: the cluster's client keys, then
// `admin.*` (from A->B.admin.*), then `<side>.admin.*` (from A.admin.*, from
// A's own client keys, which clusterProps spreads to A.admin.*, and from
// A->B.<side>.admin.*). None of these is said to have no effect.
#[test]
fn admin_layers_in_javas_order() {
    let c = with(
        "A.admin.reconnect.backoff.ms = 1\nA->B.admin.reconnect.backoff.ms = 2\nA->B.admin.request.timeout.ms = 3\n\
         A->B.source.admin.request.timeout.ms = 4\nA.security.protocol = SSL\nA->B.admin.security.protocol = SASL_SSL\n\
         B.admin.socket.connection.setup.timeout.ms = 5\nA->B.target.admin.socket.connection.setup.timeout.ms = 6\n",
    );
    let f = flow(&c, "A->B");
    assert_eq!(value(&f.source_admin, "reconnect.backoff.ms"), Some("1"), "A.admin.* (source.admin.*) beats A->B.admin.* (admin.*)");
    assert_eq!(line(&f.source_admin, "reconnect.backoff.ms"), 5);
    assert_eq!(value(&f.target_admin, "reconnect.backoff.ms"), Some("2"), "A->B.admin.* reaches both sides");
    assert_eq!(value(&f.source_admin, "request.timeout.ms"), Some("4"), "A->B.source.admin.* beats A->B.admin.*");
    assert_eq!(value(&f.target_admin, "request.timeout.ms"), Some("3"));
    assert_eq!(value(&f.source_admin, "security.protocol"), Some("SSL"), "A's own key reaches A.admin.*, which beats A->B.admin.*");
    assert_eq!(line(&f.source_admin, "security.protocol"), 9);
    assert_eq!(value(&f.target_admin, "security.protocol"), Some("SASL_SSL"));
    assert_eq!(value(&f.target_admin, "socket.connection.setup.timeout.ms"), Some("6"), "A->B.target.admin.* beats B.admin.*");
    assert_eq!(value(&f.consumer, "socket.connection.setup.timeout.ms"), None, "an admin layer is the admin clients' only");
    assert_eq!(value(&f.producer, "socket.connection.setup.timeout.ms"), None);
    assert_eq!(f.target_admin.effective().get("client.id").unwrap().value, "A->B|MirrorSourceConnector|replication-target-admin");
    assert!(!c.warnings.iter().any(|w| w.contains(".admin.") && w.contains("effect")), "{:?}", c.warnings);
    // A top-level admin.* line is still dropped, as Java's connectorBaseConfig drops it.
    let c = with("admin.reconnect.backoff.ms = 7\n");
    assert_eq!(value(&flow(&c, "A->B").source_admin, "reconnect.backoff.ms"), None);
    assert!(warned(&c, &["mm2.properties:5: admin.reconnect.backoff.ms is ignored: Java drops top-level admin.* keys", "A.admin.reconnect.backoff.ms"]));
}

#[test]
fn client_keys_reach_every_cluster_most_specific_wins() {
    let c = with("security.protocol = SSL\nB.security.protocol = SASL_SSL\nA.consumer.security.protocol = PLAINTEXT\nssl.truststore.location = /t.jks\n");
    let f = flow(&c, "A->B");
    assert_eq!(value(&f.consumer, "security.protocol"), Some("PLAINTEXT"));
    assert_eq!(line(&f.consumer, "security.protocol"), 7);
    assert_eq!(value(&f.source_admin, "security.protocol"), Some("SSL"));
    assert_eq!(line(&f.source_admin, "security.protocol"), 5);
    assert_eq!(value(&f.producer, "security.protocol"), Some("SASL_SSL"));
    assert_eq!(value(&f.target_admin, "security.protocol"), Some("SASL_SSL"));
    assert_eq!(value(&f.consumer, "ssl.truststore.location"), Some("/t.jks"));
    assert_eq!(value(&f.consumer, "bootstrap.servers"), Some("a1:9092, a2:9092"));
    assert_eq!(line(&f.consumer, "bootstrap.servers"), 2);
    assert_eq!(value(&f.producer, "bootstrap.servers"), Some("b1:9092"));
}

#[test]
fn deprecated_and_new_names_side_by_side() {
    let c = with("topics.exclude = a.*\nA->B.topics.blacklist = b.*\n");
    assert_eq!(flow(&c, "A->B").settings.topics_exclude, ["a.*"], "the new name wins, even from top level");
    assert!(warned(&c, &["mm2.properties:6: A->B.topics.blacklist is ignored", "topics.exclude"]), "{:?}", c.warnings);
    let c = with("groups.blacklist = old.*\n");
    assert_eq!(flow(&c, "A->B").settings.groups_exclude, ["old.*"]);
    assert!(warned(&c, &["groups.blacklist: deprecated name", "rename it to groups.exclude"]));
    let c = with("config.properties.blacklist = x\n");
    assert_eq!(flow(&c, "A->B").settings.config_properties_exclude, ["x"]);
}

#[test]
fn top_level_enabled_is_a_full_mesh() {
    let c = with("enabled = true\n");
    assert!(flow(&c, "B->A").enabled);
    assert!(warned(&c, &["enabled=true at top level", "full mesh"]));
}

// §1.4: the clients of a flow, their layers and MirrorMaker 2's settings.
#[test]
fn client_layers_and_forced_settings() {
    let c = with(
        "A.consumer.max.poll.records = 7\nA->B.consumer.fetch.min.bytes = 9\nA.consumer.enable.auto.commit = true\n\
         B.producer.linger.ms = 3\nA->B.producer.override.batch.size = 65536\nA->B.producer.acks = 1\nA.admin.request.timeout.ms = 11\n",
    );
    let f = flow(&c, "A->B");
    assert_eq!(value(&f.consumer, "max.poll.records"), Some("7"));
    assert_eq!(line(&f.consumer, "max.poll.records"), 5);
    assert_eq!(value(&f.consumer, "fetch.min.bytes"), Some("9"));
    assert_eq!(value(&f.target_consumer, "fetch.min.bytes"), Some("9"), "S->T.consumer.* reaches both sides");
    assert_eq!(value(&f.consumer, "enable.auto.commit"), None, "forced off");
    assert!(c.notices.iter().any(|n| n.starts_with("mm2.properties:7: A.consumer.enable.auto.commit=true is replaced by enable.auto.commit=false")));
    let eff = f.consumer.effective();
    assert_eq!(eff.get("enable.auto.commit").unwrap().value, "false");
    assert_eq!(eff.get("auto.offset.reset").unwrap().value, "earliest");
    assert_eq!(eff.get("client.id").unwrap().value, "A->B|MirrorSourceConnector-0|replication-consumer");
    // The data producer: T.producer.* and S->T.producer.override.*, over Connect's base.
    assert_eq!(value(&f.producer, "linger.ms"), Some("3"));
    assert_eq!(value(&f.producer, "batch.size"), Some("65536"));
    assert_eq!(line(&f.producer, "batch.size"), 9);
    assert_eq!(value(&f.producer, "acks"), None);
    assert!(f.producer.defaults.iter().all(|d| d.kind == DefaultKind::ConnectBase));
    let eff = f.producer.effective();
    assert_eq!(eff.get("acks").unwrap().value, "all");
    assert_eq!(eff.get("max.in.flight.requests.per.connection").unwrap().value, "1");
    assert_eq!(eff.get("enable.idempotence").unwrap().value, "false");
    // S->T.producer.* tunes the offset-syncs producer only, with a warning.
    assert_eq!(value(f.offset_syncs_producer(), "acks"), Some("1"));
    assert_eq!(value(f.offset_syncs_producer(), "bootstrap.servers"), Some("a1:9092, a2:9092"), "offset-syncs live on the source");
    assert!(warned(&c, &["mm2.properties:10: A->B.producer.acks tunes only the producer of the offset-syncs topic", "A->B.producer.override.acks"]));
    assert_eq!(value(&f.source_admin, "request.timeout.ms"), Some("11"));
    assert_eq!(f.source_admin.effective().get("client.id").unwrap().value, "A->B|MirrorSourceConnector|replication-source-admin");
    let c = with("offset-syncs.topic.location = target\n");
    let f = flow(&c, "A->B");
    assert_eq!(value(f.offset_syncs_producer(), "bootstrap.servers"), Some("b1:9092"));
    assert_eq!(f.offset_syncs_topic(), "mm2-offset-syncs.A.internal");
}

#[test]
fn the_files_translate_and_errors_name_the_mm2_line() {
    let c = with("B.producer.compression.type = zstd\n");
    let s = translate::translate(&flow(&c, "A->B").producer.file, Role::Producer).unwrap();
    assert_eq!(s.get("compression.type"), Some("zstd"));
    assert_eq!(s.bootstrap, "b1:9092");
    let c = with("B.producer.compression.codec = wrong\n");
    let e = translate::translate(&flow(&c, "A->B").producer.file, Role::Producer).unwrap_err().to_string();
    assert!(e.starts_with("mm2.properties:5: compression.codec='wrong'"), "{e}");
}

// §6: misspelled keys, each warned with the real one.
#[test]
fn misspelled_keys_get_the_real_one() {
    let c = with("task.max = 4\nreplication.policy.seperator = _\nsync.topics.configs.enabled = false\ntopic.blacklist = x\nA->B.task.max = 2\nB.bootstrap.server = b:1\n");
    assert!(warned(&c, &["mm2.properties:5: unknown key task.max is ignored", "Did you mean 'tasks.max'?"]), "{:?}", c.warnings);
    assert!(warned(&c, &["mm2.properties:6: unknown key replication.policy.seperator", "Did you mean 'replication.policy.separator'?"]));
    assert!(warned(&c, &["mm2.properties:7: unknown key sync.topics.configs.enabled", "Did you mean 'sync.topic.configs.enabled'?"]));
    assert!(warned(&c, &["mm2.properties:8: unknown key topic.blacklist", "Did you mean 'topics.exclude' (the new name of 'topics.blacklist')?"]));
    assert!(warned(&c, &["mm2.properties:9: unknown key A->B.task.max", "Did you mean 'A->B.tasks.max'?"]));
    assert!(warned(&c, &["mm2.properties:10: unknown key B.bootstrap.server", "Did you mean 'B.bootstrap.servers'?"]));
    let f = flow(&c, "A->B");
    assert_eq!(f.tasks_max, 1, "Java ignores them, and so do we");
    assert!(f.settings.sync_topic_configs.enabled);
    let c = with("primay.bootstrap.servers = p:1\nclusters.alias = x\n");
    assert!(warned(&c, &["'primay' is not one of the aliases in clusters (A, B)"]), "{:?}", c.warnings);
    let c = cfg("clusters = primary, backup\nprimary.bootstrap.servers = p:1\nbackup.bootstrap.servers = b:1\nprimay.bootstrap.servers = p:2\nprimary->backup.enabled = true\n");
    assert!(warned(&c, &["Did you mean 'primary.bootstrap.servers'?"]), "{:?}", c.warnings);
    let c = with("C->B.enabled = true\n");
    assert!(warned(&c, &["C->B.enabled is ignored", "not a pair of the aliases in clusters"]), "{:?}", c.warnings);
}

// §0 / §6: keys guides invented, and keys read only elsewhere.
#[test]
fn keys_that_do_nothing_say_so() {
    let c = with(
        "heartbeats.topic.retention.ms = 1000\ncheckpoints.topic.retention.ms = 1\noffset.syncs.topic.retention.ms = 1\n\
         offset.flush.interval.ms = 1000\nA->A.enabled = true\nB.producer.override.linger.ms = 5\n",
    );
    for k in ["heartbeats.topic.retention.ms", "checkpoints.topic.retention.ms", "offset.syncs.topic.retention.ms"] {
        assert!(warned(&c, &[k, "never implemented", "compacted"]), "{k}: {:?}", c.warnings);
    }
    // The example names the target of the enabled flow A->B, where the key works.
    assert!(
        warned(
            &c,
            &["mm2.properties:8: offset.flush.interval.ms is ignored at top level", "<target>.offset.flush.interval.ms (e.g. B.offset.flush.interval.ms)"]
        ),
        "{:?}",
        c.warnings
    );
    assert!(warned(&c, &["A->A.enabled is ignored", "into itself"]));
    assert!(warned(&c, &["B.producer.override.linger.ms does nothing", "B.producer.linger.ms"]));
    assert_eq!(value(&flow(&c, "A->B").producer, "override.linger.ms"), None);
    let c = with("transforms = mask\nA->B.transforms = route\n");
    assert!(warned(&c, &["mm2.properties:5: transforms=mask", "SMTs", "copied unchanged"]), "{:?}", c.warnings);
    assert!(warned(&c, &["mm2.properties:6: A->B.transforms=route"]));
    let c = with("B.rest.extension.classes = x\n");
    assert!(c.warnings.is_empty() && c.notices.iter().any(|n| n.contains("B.rest.extension.classes goes to the Connect worker")), "{:?}", c.notices);
}

// §1.5: the worker of each herder, on the target; per-cluster keys, a few top-level prefixes, the driver's names.
#[test]
fn worker_settings_per_target() {
    let c = with("");
    let w = &flow(&c, "A->B").worker;
    assert_eq!((w.group_id.as_str(), w.client_id.as_str()), ("A-mm2", "A->B"));
    assert_eq!(w.offset_storage_topic, "mm2-offsets.A.internal");
    assert_eq!((w.config_storage_topic.as_str(), w.status_storage_topic.as_str()), ("mm2-configs.A.internal", "mm2-status.A.internal"));
    assert_eq!((w.offset_storage_partitions, w.status_storage_partitions, w.offset_storage_replication_factor), (25, 5, 3));
    assert_eq!((w.offset_flush_interval_ms, w.offset_flush_timeout_ms), (60_000, 5_000));
    assert_eq!(w.exactly_once_source_support, "disabled");
    assert_eq!(flow(&c, "B->A").worker.offset_storage_topic, "mm2-offsets.B.internal");

    let c = with("B.offset.flush.interval.ms = 1000\nB.offset.storage.replication.factor = 2\noffset.storage.replication.factor = 1\nB.group.id = g\n");
    let w = &flow(&c, "A->B").worker;
    assert_eq!(w.offset_flush_interval_ms, 1000);
    assert_eq!(w.offset_storage_replication_factor, 1, "top-level storage keys are put after clusterProps(target)");
    assert_eq!(w.group_id, "g");
    assert_eq!(flow(&c, "B->A").worker.offset_flush_interval_ms, 60_000, "B.* is the worker of flows into B only");
    assert!(c.warnings.is_empty() && c.notices.iter().all(|n| !n.contains("offset.flush")), "{:?} {:?}", c.warnings, c.notices);
    let o = flow(&c, "A->B").origins.iter().find(|o| o.key == "offset.flush.interval.ms").unwrap();
    assert_eq!(o.origin, "mm2.properties:5: B.offset.flush.interval.ms");

    let c = with("B.exactly.once.source.support = ENABLED\n");
    assert_eq!(flow(&c, "A->B").worker.exactly_once_source_support, "enabled");
    assert!(c.warnings.iter().all(|w| !w.contains("exactly.once")), "enabled is done, not warned about: {:?}", c.warnings);
    let e = err(&format!("{BASE}B.exactly.once.source.support = sometimes\n"));
    assert!(e.contains("B.exactly.once.source.support='sometimes' must be one of disabled, preparing, enabled"), "{e}");
}

#[test]
fn values_that_are_not_what_they_look_like() {
    let e = err("clusters = us-west, us-east   # defines cluster aliases\nus-west.bootstrap.servers = w:1\nus-east.bootstrap.servers = e:1\n");
    assert!(e.starts_with("mm2.properties:1: cluster alias 'us-east   # defines cluster aliases'") && e.contains("move the comment"), "{e}");
    let e = err("clusters = A, B,\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n");
    assert!(e.contains("empty alias"), "{e}");
    let e = err(&format!("{BASE}B.bootstrap.servers = b1:9092;b2:9092\n"));
    assert!(e.starts_with("mm2.properties:5: B.bootstrap.servers='b1:9092;b2:9092'") && e.contains("B.bootstrap.servers=b1:9092,b2:9092"), "{e}");
    let c = with("topics = orders   # the topics\n");
    assert!(warned(&c, &["mm2.properties:5: topics", "'# the topics'", "part of the value"]), "{:?}", c.warnings);
    let e = err("clusters = A, B\nA.bootstrap.servers = a:1\nA->B.enabled = true\n");
    assert!(e.contains("B.bootstrap.servers is missing"), "{e}");
    let e = err("A.bootstrap.servers = a:1\n");
    assert!(e.contains("clusters is missing"), "{e}");
    let e = err(&format!("{BASE}config.providers = file\nB.sasl.jaas.config = ${{file:/s.properties:jaas}}\n"));
    assert!(e.starts_with("mm2.properties:5: config.providers lists 'file' but config.providers.file.class is missing"), "{e}");
    let e = err("clusters = A, B\nA.bootstrap.servers = x:1\nB.bootstrap.servers = X:1\nA->B.enabled = true\n");
    assert!(e.contains("same bootstrap.servers") && e.contains("into itself"), "{e}");
}

// ConfigDef types: strict booleans, numbers, enumerations, named by file:line and key.
#[test]
fn strict_values_are_refused_with_the_line() {
    for (text, expect) in [
        ("sync.group.offsets.enabled = yes\n", "mm2.properties:5: sync.group.offsets.enabled='yes' must be true or false"),
        ("A->B.emit.checkpoints.enabled = 1\n", "mm2.properties:5: A->B.emit.checkpoints.enabled='1' must be true or false"),
        ("tasks.max = four\n", "mm2.properties:5: tasks.max='four' must be a whole number"),
        ("tasks.max = 0\n", "mm2.properties:5: tasks.max='0' must be at least 1"),
        ("offset-syncs.topic.replication.factor = 40000\n", "must be a whole number (SHORT"),
        ("replication.factor = 0\n", "mm2.properties:5: replication.factor='0' must be at least 1"),
        ("offset.lag.max = 1e3\n", "offset.lag.max='1e3' must be a whole number (LONG)"),
        ("offset-syncs.topic.location = Target\n", "must be one of source, target"),
        ("use.incremental.alter.configs = maybe\n", "must be one of requested, required, never"),
        ("replication.policy.internal.topic.separator.enabled = no\n", "must be true or false"),
    ] {
        let e = err(&format!("{BASE}{text}"));
        assert!(e.contains(expect), "{text}: {e}");
    }
    // Java's trim and case rules.
    let c = with("sync.group.offsets.enabled = TRUE \ntasks.max = +3\n");
    assert!(flow(&c, "A->B").settings.sync_group_offsets.enabled);
    assert_eq!(flow(&c, "A->B").tasks_max, 3);
}

// §2 through the file: classes, separator, KIP-949, Identity.
#[test]
fn policies_from_the_file() {
    let c = with("replication.policy.separator = _\n");
    let f = flow(&c, "A->B");
    assert_eq!(f.remote_topic("orders"), "A_orders");
    assert_eq!(f.offset_syncs_topic(), "mm2-offset-syncs_B_internal");
    assert_eq!(f.policy.checkpoints_topic("A"), "A_checkpoints_internal");
    let c = with("replication.policy.separator = _\nreplication.policy.internal.topic.separator.enabled = false\n");
    assert_eq!(flow(&c, "A->B").offset_syncs_topic(), "mm2-offset-syncs.B.internal");
    // The flag alone does nothing: Java reads it only with a separator.
    let c = with("replication.policy.internal.topic.separator.enabled = false\nreplication.policy.separator = .\n");
    assert_eq!(flow(&c, "A->B").offset_syncs_topic(), "mm2-offset-syncs.B.internal");
    // Read raw: 'true ' is false for the policy.
    let c = with("replication.policy.separator = _\nreplication.policy.internal.topic.separator.enabled = true \n");
    assert_eq!(flow(&c, "A->B").offset_syncs_topic(), "mm2-offset-syncs.B.internal");
    assert!(warned(&c, &["separator.enabled='true '", "untrimmed"]), "{:?}", c.warnings);
    let c = with("replication.policy.separator = _ \n");
    assert_eq!(flow(&c, "A->B").remote_topic("orders"), "A_ orders", "Java uses the separator untrimmed");
    assert!(warned(&c, &["replication.policy.separator='_ ' ends in whitespace"]));
    let e = err(&format!("{BASE}replication.policy.separator =\n"));
    assert!(e.contains("replication.policy.separator is empty"), "{e}");

    let c = with(&format!("replication.policy.class = {IDENTITY_POLICY_CLASS}\n"));
    let f = flow(&c, "A->B");
    assert_eq!(f.remote_topic("orders"), "orders");
    assert_eq!(f.policy.source_alias.as_deref(), Some("A"));
    assert_eq!(flow(&c, "B->A").policy.source_alias.as_deref(), Some("B"));
    let text = format!("{BASE}B->A.enabled = true\nreplication.policy.class = {IDENTITY_POLICY_CLASS}\n");
    let c = cfg(&text);
    let noted = |c: &Mm2Config, needles: &[&str]| c.notices.iter().filter(|n| needles.iter().all(|x| n.contains(x))).count();
    assert_eq!(noted(&c, &["IdentityReplicationPolicy", "mirror-maker.source-cluster", "both directions run in this process"]), 1, "{:?}", c.notices);
    assert!(c.flows.iter().all(|f| f.reverse_enabled));
    // One process per target (--clusters): each still knows of the other.
    for (only, name, other) in [("A", "B->A", "A->B"), ("B", "A->B", "B->A")] {
        let c = parse(Path::new("mm2.properties"), text.as_bytes(), &[only.to_string()]).unwrap();
        let enabled: Vec<String> = c.flows.iter().filter(|f| f.enabled).map(Flow::name).collect();
        assert_eq!(enabled, vec![name.to_string()]);
        assert!(flow(&c, name).reverse_enabled, "--clusters {only}: {name} must know the file enables {other}");
        assert_eq!(noted(&c, &["runs elsewhere (--clusters)", "run it with mirror-maker"]), 1, "{:?}", c.notices);
    }
    let c = with("");
    assert!(!flow(&c, "A->B").reverse_enabled, "B->A is heartbeats-only in BASE");
    assert!(flow(&c, "B->A").reverse_enabled);

    let e = err(&format!("{BASE}replication.policy.class = org.apache.kafka.connect.mirror.LegacyReplicationPolicy\n"));
    assert!(e.starts_with("mm2.properties:5: replication.policy.class: ") && e.contains("never shipped"), "{e}");
    assert!(e.contains(IDENTITY_POLICY_CLASS) && e.contains("org.apache.kafka.connect.mirror.DefaultReplicationPolicy"), "{e}");
    let e = err(&format!("{BASE}A->B.topic.filter.class = com.acme.Filter\n"));
    assert!(e.starts_with("mm2.properties:5: A->B.topic.filter.class: topic.filter.class=com.acme.Filter"), "{e}");
}

// §2.4-2.6 through the file.
#[test]
fn filters_from_the_file() {
    let c = with("topics = orders, pay.*\ntopics.exclude = payments-tmp\ngroups = app-.*\n");
    let f = flow(&c, "A->B");
    assert!(f.should_replicate_topic("orders") && f.should_replicate_topic("payments"));
    assert!(!f.should_replicate_topic("orders-eu") && !f.should_replicate_topic("payments-tmp"));
    assert!(f.should_replicate_topic("heartbeats") && f.should_replicate_topic("C.heartbeats"), "heartbeats whatever topics says");
    assert!(!f.should_replicate_topic("__consumer_offsets") && !f.should_replicate_topic("B.orders"));
    assert!(f.should_checkpoint_group("app-1") && !f.should_checkpoint_group("other"));
    let c = with("topics =\n");
    assert!(!flow(&c, "A->B").should_replicate_topic("orders"), "an empty list matches nothing");
    let e = err(&format!("{BASE}topics = (?!tmp).*\n"));
    assert!(e.starts_with("mm2.properties:5: topics / mm2.properties: default topics.exclude:") && e.contains("look-ahead"), "{e}");
}

#[test]
fn checkpoint_and_group_sync_switches() {
    let f = |extra: &str| {
        let c = with(extra);
        let f = flow(&c, "A->B");
        (f.checkpoints_run(), f.syncs_group_offsets())
    };
    assert_eq!(f(""), (true, false));
    assert_eq!(f("sync.group.offsets.enabled = true\n"), (true, true));
    assert_eq!(f("sync.group.offsets.enabled = true\nemit.checkpoints.enabled = false\n"), (false, false));
    assert_eq!(f("sync.group.offsets.enabled = true\nemit.offset-syncs.enabled = false\n"), (false, false));
    assert_eq!(f("emit.checkpoints.interval.seconds = -1\n"), (false, false));
}

#[test]
fn repeated_keys_and_the_driver_keys() {
    let c = with("tasks.max = 2\ntasks.max = 3\n");
    assert_eq!(flow(&c, "A->B").tasks_max, 3);
    assert!(c.notices.iter().any(|n| n.contains("mm2.properties:6: tasks.max is set again (first at line 5)")), "{:?}", c.notices);
    let e = err(&format!("{BASE}source.cluster.alias = X\n"));
    assert!(e.starts_with("mm2.properties:5: source.cluster.alias at top level"), "{e}");
    let c = with("dedicated.mode.enable.internal.rest = true\nlisteners = http://:8080\noffset.storage.replication.factor = 1\n");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn a_consumer_group_id_of_the_file_is_not_shared_by_the_flows_out_of_a_cluster() {
    let three = "clusters = A, B, C\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nC.bootstrap.servers = c:9092\n\
                 A->B.enabled = true\nA->C.enabled = true\nA.consumer.group.id = shared\n";
    let c = cfg(three);
    for name in ["A->B", "A->C"] {
        assert_eq!(flow(&c, name).consumer.file.get("group.id"), None, "{name} keeps its own group");
    }
    let w: Vec<&String> = c.warnings.iter().filter(|w| w.contains("A.consumer.group.id=shared is not used")).collect();
    assert_eq!(w.len(), 1, "one warning for the line: {:?}", c.warnings);
    assert!(w[0].starts_with("mm2.properties:7: ") && w[0].contains("mm2.<source>-><target>"), "{}", w[0]);
    // The worker key A.group.id (the herder's group) is no consumer setting
    // of the flows either, and is not warned about.
    let c = cfg(&three.replace("A.consumer.group.id = shared", "A.group.id = herder"));
    assert!(c.flows.iter().all(|f| f.consumer.file.get("group.id").is_none()));
    assert!(!c.warnings.iter().any(|w| w.contains("A.group.id")), "{:?}", c.warnings);
}

// Config providers declared at the top level resolve in every prefix, as
// Java's MirrorMakerConfig resolves them before reading any key.
#[test]
fn top_level_providers_resolve_in_every_prefix() {
    let d = std::env::temp_dir().join(format!("mm2-providers-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("c.properties"), "rf = 1\nlinger = 17\n").unwrap();
    std::fs::write(d.join("records"), "5").unwrap();
    std::env::set_var("MM2_PROVIDERS_TEST_TOPICS", "orders.*");
    let c = with(&format!(
        "config.providers = file, dir, env\n\
         config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider\n\
         config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider\n\
         config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
         A->B.topics = ${{env:MM2_PROVIDERS_TEST_TOPICS}}\n\
         B.producer.linger.ms = ${{file:{0}/c.properties:linger}}\n\
         A.consumer.max.poll.records = ${{dir:{0}:records}}\n\
         replication.factor = ${{file:{0}/c.properties:rf}}\n",
        d.display()
    ));
    let f = flow(&c, "A->B");
    assert_eq!(f.settings.topics, ["orders.*"]);
    let o = origin(f, "topics");
    assert_eq!((o.value.as_str(), o.origin.as_str()), ("[redacted]", "mm2.properties:9: A->B.topics via ${env:MM2_PROVIDERS_TEST_TOPICS}"));
    assert_eq!(value(&f.producer, "linger.ms"), Some("17"));
    assert_eq!(line(&f.producer, "linger.ms"), 10);
    assert!(f.producer.file.get("linger.ms").unwrap().resolved.as_deref().unwrap().starts_with("${file:"));
    assert_eq!(value(&f.consumer, "max.poll.records"), Some("5"));
    let s = translate::translate(&f.producer.file, Role::Producer).unwrap();
    let l = s.describe().into_iter().find(|l| l.starts_with("linger.ms=")).unwrap();
    assert!(l.starts_with("linger.ms=[redacted]  # mm2.properties:10, linger.ms via ${file:"), "{l}");
    assert!(f.consumer.file.props.iter().chain(&f.producer.file.props).all(|p| !p.key.starts_with("config.providers")), "consumed");
    let e = err(&format!("{BASE}config.providers = env\nconfig.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\nB.sasl.password = ${{env:MM2_PROVIDERS_TEST_UNSET}}\n"));
    assert!(e.starts_with("mm2.properties:7: B.sasl.password: ${env:MM2_PROVIDERS_TEST_UNSET}") && e.contains("is not set"), "{e}");
}
