//! An MM2 file's flows turned into the engine's [`Plan`]: one flow per
//! enabled `A->B` with its own target workers (Java runs a Connect worker
//! per herder), remote topic names and MM2's topic selection, and a
//! heartbeat emitter per herder that emits.

use std::sync::Arc;
use std::time::Duration;

use log::{info, warn};

use super::keys::{CONFIG_PROPERTIES_EXCLUDE, EXACTLY_ONCE_SUPPORT, GROUP_ID};
use super::settings::DefaultsFrom;
use super::{ClientProps, DefaultKind, Flow as Mm2Flow, Mm2Config};
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::front::translate;
use crate::kafka::settings::{ClientSettings, Role, TranslateOptions};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;
use crate::plan::policy::{NameFilter, PolicyKind};
use crate::plan::{Checkpointing, Checkpoints, ConnectOffsets, ExactlyOnce, Flow, Heartbeats, Ops, Plan, RemoteTopics, Shape, SideEffects, Target};

/// A refresh turned off still needs one look at the topics, at the start.
const NEVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// The plan for an MM2 file's flows; `ops` comes from the command line.
/// Nothing is written to Java MM2's Connect offsets (see [`plan_with`]).
pub fn plan(cfg: &Mm2Config, ops: Ops) -> Result<Plan, ConfigError> {
    plan_with(cfg, ops, false)
}

/// [`plan`], with `hand_back`: `--mm2.write.connect.offsets`, each flow's
/// positions written to Java MM2's Connect offsets while running.
pub fn plan_with(cfg: &Mm2Config, ops: Ops, hand_back: bool) -> Result<Plan, ConfigError> {
    for n in &cfg.notices {
        info!("{n}");
    }
    for w in &cfg.warnings {
        warn!("{w}");
    }
    let mut flows = Vec::new();
    let mut heartbeats = Vec::new();
    for f in &cfg.flows {
        let target = Arc::new(Target {
            settings: translate::translate(&without_connect_base(&f.producer), Role::Producer)?,
            admin: Some(admin_settings(&f.target_admin)?),
            origin: format!("cluster {} of {}", f.target, cfg.path.display()),
        });
        if f.enabled {
            let flow = record_flow(cfg, f, target.clone(), hand_back)?;
            flows.push(flow);
        }
        if let (true, Some(interval)) = (f.heartbeats_enabled, f.settings.emit_heartbeats.interval()) {
            heartbeats.push(Heartbeats {
                lease: f.name(),
                source_alias: f.source.clone(),
                target_alias: f.target.clone(),
                target,
                topic: f.policy.heartbeats_topic().to_string(),
                interval,
                replication_factor: f.settings.heartbeats_topic_replication_factor,
            });
        }
    }
    let enabled: Vec<&Mm2Flow> = cfg.flows.iter().filter(|f| f.enabled).collect();
    // One process runs every flow: each gets the machine's share that
    // tasks.max asked for, in streams and producer workers.
    let tasks = enabled.iter().map(|f| f.tasks_max).max().unwrap_or(1).max(1);
    let commit_ms = enabled.iter().map(|f| f.worker.offset_flush_interval_ms).min().unwrap_or(60_000).max(1);
    let refresh = enabled.iter().filter_map(|f| f.settings.refresh_topics.interval()).min().unwrap_or(NEVER);
    let shape = Shape {
        streams: tasks,
        producers: tasks,
        queue_records: 10_000,
        queue_bytes: crate::front::mm1::cli::DEFAULT_QUEUE_BYTE_SIZE,
        commit_interval: Duration::from_millis(commit_ms as u64),
        topic_refresh_interval: refresh.max(Duration::from_secs(1)),
        // Connect's errors.tolerance=none: a record the target refuses stops the task.
        abort_on_send_failure: true,
        throttle_records_per_sec: None,
        throttle_bytes_per_sec: None,
    };
    Ok(Plan { flows, heartbeats, shape, ops })
}

/// The group this mirror commits a flow's progress under on the source.
/// Java MM2 keeps it in Connect's offsets topic on the target instead; a
/// group per flow keeps fan-out flows (A->B, A->C) apart.
pub fn group_id(f: &Mm2Flow) -> String {
    format!("mm2.{}->{}", f.source, f.target)
}

fn record_flow(cfg: &Mm2Config, f: &Mm2Flow, target: Arc<Target>, hand_back: bool) -> Result<Flow, ConfigError> {
    let source = consumer_settings(f)?;
    // The file's reverse flow counts even when --clusters runs it in
    // another process: both directions must stamp and check the header.
    let reverse = f.reverse_enabled || cfg.flows.iter().any(|r| r.enabled && r.source == f.target && r.target == f.source);
    // Identity names both ways: only the header tells a record that came
    // from the other side, where Java MM2 loops forever.
    let provenance = reverse && f.policy.kind == PolicyKind::Identity;
    if provenance {
        info!("{}: flows both ways with IdentityReplicationPolicy: records carry the provenance header, so none goes back where it came from", f.name());
    }
    let exactly_once = exactly_once(cfg, f, &source)?;
    let exclude = NameFilter::new(&f.settings.config_properties_exclude, &[])
        .map_err(|e| ConfigError::in_file(&cfg.path, format!("{}: {e}", CONFIG_PROPERTIES_EXCLUDE.name)).with_key(CONFIG_PROPERTIES_EXCLUDE.name))?;
    Ok(Flow {
        name: f.name(),
        lease: f.name(),
        source_origin: format!("cluster {} of {}", f.source, cfg.path.display()),
        source,
        source_admin: Some(admin_settings(&f.source_admin)?),
        target,
        filter: Arc::new(TopicFilter::mm2(f.policy.clone(), f.topics.clone(), &f.target)),
        naming: Arc::new(Handler::Remote { policy: f.policy.clone(), source_alias: f.source.clone() }),
        side_effects: SideEffects { create_topics: true, sync_partitions: f.settings.refresh_topics.interval().is_some(), provenance },
        remote_topics: Some(Arc::new(RemoteTopics {
            // -1 stays -1: the target broker's default (KIP-464), as Java sends it.
            replication_factor: f.settings.replication_factor.clamp(-1, i16::MAX as i32) as i16,
            config_exclude: exclude,
            sync_configs: f.settings.sync_topic_configs.interval(),
            remove_defaulted: f.settings.use_defaults_from == DefaultsFrom::Target,
            sync_acls: f.settings.sync_topic_acls.interval(),
        })),
        checkpointing: Some(Arc::new(checkpointing(f)?)),
        // Java's positions of this flow: in its herder's worker config.
        connect_offsets: Some(Arc::new(ConnectOffsets {
            connector: crate::plan::MM2_SOURCE_CONNECTOR.to_string(),
            source_alias: f.source.clone(),
            topic: f.worker.offset_storage_topic.clone(),
            partitions: f.worker.offset_storage_partitions,
            replication_factor: f.worker.offset_storage_replication_factor,
            hand_back,
            file: None,
        })),
        exactly_once,
    })
}

/// Whether the flow copies exactly once, and how often it commits: the
/// target's worker has `exactly.once.source.support=enabled` (`preparing`
/// is Java's step before it, still at least once). `transaction.boundary`
/// `poll` commits after each batch read, `interval` every
/// `transaction.boundary.interval.ms` (the worker's
/// `offset.flush.interval.ms` unless set), as Java's worker does.
fn exactly_once(cfg: &Mm2Config, f: &Mm2Flow, source: &ClientSettings) -> Result<Option<ExactlyOnce>, ConfigError> {
    if !f.worker.exactly_once_enabled() {
        return Ok(None);
    }
    let read_committed = source.get("isolation.level") == Some("read_committed");
    if !read_committed {
        if f.settings.exactly_once_support == "required" {
            return Err(ConfigError::in_file(
                &cfg.path,
                format!(
                    "{}: exactly.once.support=required, but MirrorSourceConnector supports exactly-once only when its consumer reads committed records \
                     (Java fails the connector the same way); set {}.consumer.isolation.level=read_committed",
                    f.name(),
                    f.source
                ),
            )
            .with_key(EXACTLY_ONCE_SUPPORT.name));
        }
        warn!(
            "{}: exactly-once with a source consumer reading uncommitted records (Java's default): records of transactions aborted on the source \
             are copied too; set {}.consumer.isolation.level=read_committed to leave them out",
            f.name(),
            f.source
        );
    }
    let interval = match f.settings.transaction_boundary.as_str() {
        "interval" => f.settings.transaction_boundary_interval_ms.unwrap_or(f.worker.offset_flush_interval_ms),
        _ => 0,
    };
    Ok(Some(ExactlyOnce { interval: Duration::from_millis(interval.max(0) as u64) }))
}

/// Offset-syncs as Java's source task writes them (where
/// `offset-syncs.topic.location` says, unless `emit.offset-syncs.enabled`
/// is false), and checkpoints as its checkpoint task emits them.
fn checkpointing(f: &Mm2Flow) -> Result<Checkpointing, ConfigError> {
    let checkpoints = f.checkpoints_run().then(|| Checkpoints {
        topics: None,
        topic: f.policy.checkpoints_topic(&f.source),
        replication_factor: f.settings.checkpoints_topic_replication_factor,
        interval: f.settings.emit_checkpoints.interval().unwrap_or(NEVER).max(Duration::from_secs(1)),
        groups: f.groups.clone(),
        refresh_groups: f.settings.refresh_groups.interval(),
        sync_group_offsets: if f.syncs_group_offsets() { f.settings.sync_group_offsets.interval().map(|d| d.max(Duration::from_secs(1))) } else { None },
    });
    Ok(Checkpointing {
        source_alias: f.source.clone(),
        target_alias: f.target.clone(),
        syncs_cluster: translate::translate(&without_connect_base(f.offset_syncs_producer()), Role::Producer)?,
        syncs_admin: Some(admin_settings(f.offset_syncs_admin())?),
        syncs_topic: f.offset_syncs_topic(),
        syncs_replication_factor: f.settings.offset_syncs_topic_replication_factor,
        write_syncs: f.settings.emit_offset_syncs_enabled,
        lag_max: f.settings.offset_lag_max.max(0),
        checkpoints,
    })
}

/// The source consumer: the file's settings and MM2's (earliest when the
/// file says nothing), in a group of the flow's own.
fn consumer_settings(f: &Mm2Flow) -> Result<ClientSettings, ConfigError> {
    let mut file = f.consumer.file.clone();
    for d in &f.consumer.defaults {
        // Offsets are committed by the engine, after the target acknowledged.
        if d.key == "enable.auto.commit" {
            continue;
        }
        if d.kind == DefaultKind::IfAbsent && file.get(d.key).is_none() {
            file.props.push(Property { key: d.key.to_string(), value: d.value.clone(), line: 0, resolved: None });
        }
    }
    if file.get(GROUP_ID).is_none() {
        file.props.push(Property { key: GROUP_ID.into(), value: group_id(f), line: 0, resolved: None });
    }
    let mut settings = translate::translate_with(&file, Role::Consumer, TranslateOptions::default())?;
    settings.group_id = settings.group_id.or_else(|| Some(group_id(f)));
    Ok(settings)
}

/// An admin client's settings as Java's `{source,target}AdminConfig`
/// makes them: the cluster's keys under the `admin.*` layers, with the
/// client id MirrorMaker 2 gives it.
fn admin_settings(p: &ClientProps) -> Result<ClientSettings, ConfigError> {
    translate::translate(&p.effective(), Role::Admin)
}

/// The file's producer settings without Connect's throughput-costly base
/// (one request in flight, no idempotence): the engine's no-loss defaults
/// take their place.
fn without_connect_base(p: &ClientProps) -> PropertiesFile {
    let mut file = p.file.clone();
    for d in p.defaults.iter().filter(|d| d.kind != DefaultKind::ConnectBase) {
        if d.kind == DefaultKind::Forced || file.get(d.key).is_none() {
            file.props.retain(|q| q.key != d.key);
            file.props.push(Property { key: d.key.to_string(), value: d.value.clone(), line: 0, resolved: None });
        }
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn plan_of(text: &str) -> Plan {
        let cfg = super::super::parse(Path::new("mm2.properties"), text.as_bytes(), &[]).unwrap();
        plan(&cfg, Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: true }).unwrap()
    }

    const TWO: &str = "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n";

    #[test]
    fn an_enabled_flow_copies_and_every_herder_beats() {
        let p = plan_of(&format!("{TWO}A->B.enabled = true\ntasks.max = 3\n"));
        assert_eq!(p.flows.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["A->B"]);
        let f = &p.flows[0];
        assert_eq!(f.source.group_id.as_deref(), Some("mm2.A->B"));
        assert_eq!(f.source.get("auto.offset.reset"), Some("earliest"), "MM2 starts a new flow from the beginning");
        assert_eq!(f.naming.target_topic("orders"), "A.orders");
        assert_eq!(f.naming.target_partition(4), Some(4), "the same partition number, as MM2");
        assert!(!f.side_effects.provenance);
        assert_eq!(f.target.settings.get("acks"), Some("all"));
        assert_eq!(f.target.settings.get("enable.idempotence"), Some("true"), "Connect's base (no idempotence) gives way to the no-loss defaults");
        assert_eq!((p.shape.streams, p.shape.producers), (3, 3), "tasks.max");
        // B->A exists for its heartbeats only, as Java's clusterPairs() makes it.
        let beats: Vec<(&str, &str)> = p.heartbeats.iter().map(|h| (h.source_alias.as_str(), h.target_alias.as_str())).collect();
        assert_eq!(beats, [("A", "B"), ("B", "A")]);
        assert_eq!(p.heartbeats[0].interval, Duration::from_secs(1));
        let cp = p.flows[0].checkpointing.as_ref().expect("A->B checkpoints");
        assert_eq!((cp.syncs_topic.as_str(), cp.syncs_cluster.bootstrap.as_str()), ("mm2-offset-syncs.B.internal", "a:9092"));
        let checkpoints = cp.checkpoints.as_ref().expect("emit.checkpoints.enabled");
        assert_eq!((checkpoints.topic.as_str(), p.flows[0].target.settings.bootstrap.as_str()), ("A.checkpoints.internal", "b:9092"));
    }

    #[test]
    fn admin_clients_get_their_layers_translated_for_an_admin_client() {
        let p = plan_of(&format!(
            "{TWO}A->B.enabled = true\nA.admin.request.timeout.ms = 9000\nA.admin.fetch.min.bytes = 5\nB.admin.bootstrap.servers = b-admin:9093\n\
             B.admin.security.protocol = SASL_PLAINTEXT\nB.admin.sasl.mechanism = PLAIN\nB.admin.sasl.jaas.config = \
             org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"secret\";\n"
        ));
        let f = &p.flows[0];
        let source = f.source_admin.as_ref().expect("MM2 flows carry their admin settings");
        assert_eq!(source.role, Role::Admin);
        assert_eq!(source.get("socket.timeout.ms"), Some("9000"), "request.timeout.ms is librdkafka's socket.timeout.ms");
        assert_eq!(source.get("fetch.min.bytes"), None, "a consumer's key never reaches an admin client");
        assert!(source.warnings.iter().any(|w| w.contains("mm2.properties:6: fetch.min.bytes is ignored")), "{:?}", source.warnings);
        assert_eq!(source.get("client.id"), Some("A->B|MirrorSourceConnector|replication-source-admin"));
        assert_eq!(f.source_admin_config().get("bootstrap.servers"), Some("a:9092"));
        assert_eq!(f.source_admin_config().get("allow.auto.create.topics"), Some("false"));
        let target = f.target.admin.as_ref().unwrap();
        assert_eq!(target.bootstrap, "b-admin:9093");
        assert_eq!(target.get("sasl.username"), Some("u"));
        assert_eq!(f.target.settings.bootstrap, "b:9092", "the producer keeps B's own brokers");
        assert_eq!(f.target.settings.get("sasl.username"), None);
        assert!(f.target.admin_origin().contains("mm2.properties:10: sasl.jaas.config"), "{}", f.target.admin_origin());
        // The shown settings never show the password.
        assert!(target.describe().iter().all(|l| !l.contains("secret")), "{:?}", target.describe());
        let cp = f.checkpointing.as_ref().unwrap();
        assert_eq!(cp.syncs_admin.as_ref().unwrap().bootstrap, "a:9092", "offset-syncs on the source: the source's admin");
        let p = plan_of(&format!("{TWO}A->B.enabled = true\noffset-syncs.topic.location = target\nB.admin.bootstrap.servers = b-admin:9093\n"));
        assert_eq!(p.flows[0].checkpointing.as_ref().unwrap().syncs_admin.as_ref().unwrap().bootstrap, "b-admin:9093");
        assert_eq!(p.heartbeats[0].target.admin_config().get("bootstrap.servers"), Some("b-admin:9093"), "heartbeats topic made by B's admin");
    }

    #[test]
    fn identity_both_ways_stamps_the_provenance_header_and_default_does_not() {
        let both = format!("{TWO}A->B.enabled = true\nB->A.enabled = true\n");
        assert!(plan_of(&both).flows.iter().all(|f| !f.side_effects.provenance), "prefixed names already stop the loop");
        let identity = format!("{both}replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n");
        let p = plan_of(&identity);
        assert!(p.flows.iter().all(|f| f.side_effects.provenance));
        assert_eq!(p.flows[0].naming.target_topic("orders"), "orders");
    }

    #[test]
    fn topic_acls_are_synced_every_interval_unless_turned_off() {
        let remote = |extra: &str| plan_of(&format!("{TWO}A->B.enabled = true\n{extra}")).flows[0].remote_topics.as_ref().unwrap().sync_acls;
        assert_eq!(remote(""), Some(Duration::from_secs(600)));
        assert_eq!(remote("sync.topic.acls.interval.seconds = 30\n"), Some(Duration::from_secs(30)));
        assert_eq!(remote("A->B.sync.topic.acls.enabled = false\n"), None);
    }

    #[test]
    fn java_positions_are_where_its_worker_keeps_them_and_handed_back_only_when_asked() {
        let text = format!("{TWO}A->B.enabled = true\nB.offset.storage.partitions = 10\n");
        let c = plan_of(&text).flows[0].connect_offsets.clone().unwrap();
        assert_eq!((c.source_alias.as_str(), c.topic.as_str(), c.partitions, c.replication_factor, c.hand_back), ("A", "mm2-offsets.A.internal", 10, 3, false));
        assert_eq!(c.connector, "MirrorSourceConnector", "MM2 mode's name, as Java's dedicated mode names its source connector");
        let cfg = super::super::parse(Path::new("mm2.properties"), text.as_bytes(), &[]).unwrap();
        let ops = Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: true };
        assert!(plan_with(&cfg, ops, true).unwrap().flows[0].connect_offsets.as_ref().unwrap().hand_back);
    }

    #[test]
    fn exactly_once_is_the_target_workers_and_commits_at_javas_boundaries() {
        let eos = |extra: &str| {
            let text = format!("{TWO}A->B.enabled = true\nA.consumer.isolation.level = read_committed\n{extra}");
            let cfg = super::super::parse(Path::new("mm2.properties"), text.as_bytes(), &[]).map_err(|e| e.to_string())?;
            let ops = Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: true };
            plan(&cfg, ops).map(|p| p.flows[0].exactly_once).map_err(|e| e.to_string())
        };
        assert_eq!(eos("").unwrap(), None, "disabled by default");
        assert_eq!(eos("B.exactly.once.source.support = preparing\n").unwrap(), None, "Java's step before enabled: still at least once");
        assert_eq!(eos("A.exactly.once.source.support = enabled\n").unwrap(), None, "the target's worker decides, not the source's");
        let on = "B.exactly.once.source.support = Enabled\n";
        assert_eq!(eos(on).unwrap(), Some(ExactlyOnce { interval: Duration::ZERO }), "transaction.boundary=poll: a transaction per batch read");
        let interval = format!("{on}A->B.transaction.boundary = interval\nA->B.transaction.boundary.interval.ms = 250\n");
        assert_eq!(eos(&interval).unwrap(), Some(ExactlyOnce { interval: Duration::from_millis(250) }));
        let flush = format!("{on}A->B.transaction.boundary = interval\nB.offset.flush.interval.ms = 5000\n");
        assert_eq!(eos(&flush).unwrap(), Some(ExactlyOnce { interval: Duration::from_secs(5) }), "unset: the worker's offset.flush.interval.ms");
        let e = eos(&format!("{on}A->B.transaction.boundary = connector\n")).unwrap_err();
        assert!(e.contains("mm2.properties:7: A->B.transaction.boundary='connector' is refused by Java for MirrorSourceConnector"), "{e}");
        let e = eos(&format!("{on}A->B.transaction.boundary.interval.ms = -5\n")).unwrap_err();
        assert!(e.contains("A->B.transaction.boundary.interval.ms='-5' must be at least 0"), "{e}");
        let uncommitted = format!("{TWO}A->B.enabled = true\n{on}A->B.exactly.once.support = required\n");
        let cfg = super::super::parse(Path::new("mm2.properties"), uncommitted.as_bytes(), &[]).unwrap();
        let e = plan(&cfg, Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: true }).unwrap_err().to_string();
        assert!(e.contains("exactly.once.support=required") && e.contains("set A.consumer.isolation.level=read_committed"), "{e}");
    }

    #[test]
    fn heartbeats_off_means_no_emitter() {
        let p = plan_of(&format!("{TWO}A->B.enabled = true\nemit.heartbeats.enabled = false\n"));
        assert!(p.heartbeats.is_empty());
        assert_eq!(p.flows.len(), 1);
    }

    #[test]
    fn flows_out_of_one_cluster_commit_under_groups_of_their_own_whatever_the_file_says() {
        let three = "clusters = A, B, C\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nC.bootstrap.servers = c:9092\n\
                     A->B.enabled = true\nA->C.enabled = true\nA.consumer.group.id = shared\nconsumer.group.id = everyone\n";
        let p = plan_of(three);
        let groups: Vec<(String, Option<String>)> = p.flows.iter().map(|f| (f.name.clone(), f.source.group_id.clone())).collect();
        assert!(groups.contains(&("A->B".into(), Some("mm2.A->B".into()))), "{groups:?}");
        assert!(groups.contains(&("A->C".into(), Some("mm2.A->C".into()))), "{groups:?}");
    }

    #[test]
    fn replication_factor_minus_one_asks_the_target_broker_for_its_default() {
        let p = plan_of(&format!("{TWO}A->B.enabled = true\nreplication.factor = -1\n"));
        let f = p.flows.iter().find(|f| f.name == "A->B").unwrap();
        assert_eq!(f.remote_topics.as_ref().unwrap().replication_factor, -1);
        let p = plan_of(&format!("{TWO}A->B.enabled = true\nreplication.factor = 2\n"));
        assert_eq!(p.flows.iter().find(|f| f.name == "A->B").unwrap().remote_topics.as_ref().unwrap().replication_factor, 2);
    }

    #[test]
    fn identity_both_ways_stamps_the_header_in_a_process_per_target_too() {
        let text =
            format!("{TWO}A->B.enabled = true\nB->A.enabled = true\nreplication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n");
        for only in ["A", "B"] {
            let cfg = super::super::parse(Path::new("mm2.properties"), text.as_bytes(), &[only.to_string()]).unwrap();
            let p = plan(&cfg, Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: true }).unwrap();
            let running: Vec<_> = p.flows.iter().filter(|f| f.side_effects.provenance).map(|f| f.name.clone()).collect();
            assert_eq!(running.len(), 1, "--clusters {only}: {running:?}");
        }
    }
}
