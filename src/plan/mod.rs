//! The plan of flows: what to mirror from where to where, and how. Every
//! front-end produces one; `--check-config` prints one; the engine takes
//! nothing else.
//!
//! [`filter`] selects source topics; [`handler`] names the target topic and
//! partition; [`partitioner`] places keys as Java's producer does;
//! [`policy`] names remote topics as MirrorMaker 2 does.

pub mod filter;
pub mod handler;
pub mod partitioner;
pub mod policy;

use std::sync::Arc;
use std::time::Duration;

use rdkafka::ClientConfig;

use crate::kafka::settings::ClientSettings;
use filter::TopicFilter;
use handler::Handler;
use policy::NameFilter;

/// Everything needed to start, with no network I/O done yet.
#[derive(Debug)]
pub struct Plan {
    /// Flows sharing one target (the same `Arc`) share its producer workers.
    pub flows: Vec<Flow>,
    /// MirrorMaker 2's heartbeat emitters, one per herder that has them.
    pub heartbeats: Vec<Heartbeats>,
    pub shape: Shape,
    pub ops: Ops,
}

/// Heartbeat records written to a target every `interval`, as MirrorMaker
/// 2's heartbeat connector writes them, so that tools reading the target
/// (Java's `MirrorClient`, latency monitors) see the flow.
#[derive(Debug, Clone)]
pub struct Heartbeats {
    /// The lease they run under, as [`Flow::lease`].
    pub lease: String,
    pub source_alias: String,
    pub target_alias: String,
    pub target: Arc<Target>,
    pub topic: String,
    pub interval: Duration,
    /// The topic is created compacted, one partition, with this factor.
    pub replication_factor: i16,
}

/// One source cluster mirrored to one target cluster.
#[derive(Debug)]
pub struct Flow {
    /// How logs, thread names and `--check-config` call this flow.
    pub name: String,
    /// The lease its one-node side tasks run under (`engine::lease`): the
    /// same on every node of one mirror, distinct for each flow (and each
    /// connector) one process runs.
    pub lease: String,
    /// What the user named the source for messages: its file, or its alias.
    pub source_origin: String,
    /// The source consumer's settings; its `group.id` is the flow's group.
    pub source: ClientSettings,
    /// The settings of the flow's admin clients on the source, from a
    /// front-end that has an admin layer (MirrorMaker 2's `admin.*`);
    /// None: the source consumer's connection settings
    /// ([`Flow::source_admin_config`]).
    pub source_admin: Option<ClientSettings>,
    pub target: Arc<Target>,
    pub filter: Arc<TopicFilter>,
    /// Target topic and partition of each record.
    pub naming: Arc<Handler>,
    pub side_effects: SideEffects,
    /// How MirrorMaker 2 creates target topics; None: like the source (MM1 mode).
    pub remote_topics: Option<Arc<RemoteTopics>>,
    /// Offset-syncs and checkpoints, so consumer groups can fail over.
    pub checkpointing: Option<Arc<Checkpointing>>,
    /// Java MirrorMaker 2's positions of this flow (MM2 mode only): taken
    /// over at start, and handed back while running when asked.
    pub connect_offsets: Option<Arc<ConnectOffsets>>,
    /// Records and their positions written to the target in transactions
    /// (issue #29); None: at least once.
    pub exactly_once: Option<ExactlyOnce>,
}

/// How an exactly-once flow commits (`engine::pipeline::transactional`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExactlyOnce {
    /// How often a transaction commits; zero: after every batch read from
    /// the source (Connect's `transaction.boundary=poll`).
    pub interval: std::time::Duration,
}

impl ExactlyOnce {
    /// What every exactly-once task's `transactional.id` begins with: the
    /// prefix a target's operator grants WRITE and DESCRIBE on.
    pub const TRANSACTIONAL_ID_PREFIX: &'static str = "mirror-maker-";
    /// What every ownership group's name begins with: the prefix a
    /// target's operator grants READ on.
    pub const OWNER_GROUP_PREFIX: &'static str = "mirror-maker.eos.";

    /// The `transactional.id` of task `task` of the flow with lease
    /// `lease`, in the process `pid` started at `started` (ns since the
    /// epoch): unique per process, so two nodes never fence each other.
    pub fn transactional_id(lease: &str, task: usize, pid: u32, started: u128) -> String {
        format!("{}{lease}-{task}-{pid}-{started:x}", Self::TRANSACTIONAL_ID_PREFIX)
    }

    /// The ownership group on the target of the flow with lease `lease`.
    pub fn owner_group(lease: &str) -> String {
        format!("{}{lease}", Self::OWNER_GROUP_PREFIX)
    }
}

/// The first element of a source position's key is the connector's name;
/// in dedicated mode Java names the source connector after its class's
/// simple name. A Connect worker's connector has the name it was PUT under.
pub const MM2_SOURCE_CONNECTOR: &str = "MirrorSourceConnector";

/// Where Java MirrorMaker 2's Connect worker keeps a flow's source
/// positions (`offset.storage.topic` on the target), so a flow can move
/// between Java MM2 and this mirror without copying records again.
#[derive(Debug)]
pub struct ConnectOffsets {
    /// The first element of the records' keys: the source connector's name
    /// (`MirrorSourceConnector` in MM2 mode, where Java names it after its
    /// class; a Connect worker's connector's own name).
    pub connector: String,
    /// The `cluster` field of the records' keys.
    pub source_alias: String,
    /// `mm2-offsets.<source>.internal` unless the file says otherwise.
    pub topic: String,
    /// `offset.storage.partitions` and `offset.storage.replication.factor`,
    /// used when the topic is created for a hand-back.
    pub partitions: i32,
    pub replication_factor: i16,
    /// Write the flow's committed positions there while running
    /// (`--mm2.write.connect.offsets`), so Java MM2 can take over again.
    pub hand_back: bool,
    /// Java Connect standalone's `offset.storage.file.filename`: the
    /// positions are read from and written to this file instead of `topic`
    /// (`--connect.standalone`).
    pub file: Option<std::path::PathBuf>,
}

/// MirrorMaker 2's offset translation for one flow: offset-syncs learnt
/// from the target's acknowledgements, and checkpoints of the source's
/// consumer groups translated with them, in Java's formats and topics.
/// Needs a partition-preserving flow (a sync names a source partition and
/// means the target partition of the same number).
#[derive(Debug)]
pub struct Checkpointing {
    pub source_alias: String,
    pub target_alias: String,
    /// The offset-syncs topic and the cluster that holds it.
    pub syncs_cluster: ClientSettings,
    /// The admin settings of that cluster (the flow's source or target
    /// admin, as MirrorMaker 2's `offsetSyncsTopicAdminConfig`); None:
    /// `syncs_cluster`'s connection settings.
    pub syncs_admin: Option<ClientSettings>,
    pub syncs_topic: String,
    /// Of the syncs topic, made (compacted, one partition, as Java makes
    /// it) by the sync writer before its first record.
    pub syncs_replication_factor: i16,
    /// Write syncs there (`emit.offset-syncs.enabled`); they are kept in
    /// memory either way.
    pub write_syncs: bool,
    /// `offset.lag.max`: at most this many records between two syncs.
    pub lag_max: i64,
    pub checkpoints: Option<Checkpoints>,
}

/// Checkpoints of the source's groups, on the target.
#[derive(Debug)]
pub struct Checkpoints {
    /// `<source>.checkpoints.internal`, made as the syncs topic is, by
    /// the checkpointer before anything else.
    pub topic: String,
    pub replication_factor: i16,
    /// `emit.checkpoints.interval.seconds`.
    pub interval: Duration,
    /// `groups` and `groups.exclude`.
    pub groups: NameFilter,
    /// How often the source's consumer groups are listed again
    /// (`refresh.groups.interval.seconds`): they are listed at the start
    /// (each round until a listing succeeds), then again at the first
    /// round this long after the last listing; None
    /// (`refresh.groups.enabled = false`): never again. The groups known
    /// get checkpoints every `interval` in between.
    pub refresh_groups: Option<Duration>,
    /// `sync.group.offsets.interval.seconds`, when groups with no active
    /// member on the target get their translated offsets committed there.
    pub sync_group_offsets: Option<Duration>,
    /// The source topics whose groups' positions are checkpointed, when
    /// not the ones the flow copies: MM2's checkpoint connector on a
    /// Connect worker copies nothing and translates what the source
    /// connector copies, from the syncs it writes (read from the topic).
    pub topics: Option<Arc<TopicFilter>>,
}

/// Target topics created as MirrorMaker 2 creates them.
#[derive(Debug)]
pub struct RemoteTopics {
    /// `replication.factor`, whatever the source topic has.
    pub replication_factor: i16,
    /// `config.properties.exclude`: source topic configs never copied.
    pub config_exclude: NameFilter,
    /// `sync.topic.configs.interval.seconds`, if configs are synced.
    pub sync_configs: Option<Duration>,
    /// `use.defaults.from = target` (Java's default): the config sync also
    /// removes a target topic's overrides of configs the source topic has at
    /// Kafka's default, as Java 3.x's sync does. False (`= source`): the
    /// source's default values are set on the target topic instead.
    pub remove_defaulted: bool,
    /// `sync.topic.acls.interval.seconds`, if topic ACLs are synced.
    pub sync_acls: Option<Duration>,
}

/// A target cluster, as every flow writing to it sees it.
#[derive(Debug)]
pub struct Target {
    pub settings: ClientSettings,
    /// The settings of the admin clients on this target, from a front-end
    /// that has an admin layer (MirrorMaker 2's `admin.*`); None: the
    /// producer's connection settings ([`Target::admin_config`]).
    pub admin: Option<ClientSettings>,
    /// What the user named the target for messages: its file, or its alias.
    pub origin: String,
}

/// What a flow does besides copying records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SideEffects {
    /// Create missing target topics like the source.
    pub create_topics: bool,
    /// Add target partitions when a source topic gains some.
    pub sync_partitions: bool,
    /// Stamp and check the provenance header (the loop guard).
    pub provenance: bool,
}

/// How the pipeline behind each target is built.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Consumer streams per flow.
    pub streams: usize,
    /// Producer workers per target.
    pub producers: usize,
    /// Each worker's channel: records and bytes (keys and values).
    pub queue_records: usize,
    pub queue_bytes: usize,
    /// How often acknowledged offsets are committed.
    pub commit_interval: Duration,
    pub topic_refresh_interval: Duration,
    /// Stop (true) or skip and count (false) a record the target refuses.
    pub abort_on_send_failure: bool,
    pub throttle_records_per_sec: Option<u64>,
    pub throttle_bytes_per_sec: Option<u64>,
}

/// The process around the pipelines.
#[derive(Debug, Clone, PartialEq)]
pub struct Ops {
    /// How long a stop may take to deliver and commit what is in flight.
    pub drain_timeout: Duration,
    /// The stats line's period; zero turns it off.
    pub stats_interval: Duration,
    /// The Prometheus endpoint's address and port, if any.
    pub metrics: Option<(String, u16)>,
    /// Label metrics with each flow's name (MirrorMaker 2's `A->B`).
    pub label_flows: bool,
}

/// An admin client's librdkafka settings: an admin layer's own, or the
/// connection and security settings of the client beside it.
fn admin_of(layer: Option<&ClientSettings>, beside: &ClientSettings) -> ClientConfig {
    match layer {
        Some(a) => crate::kafka::admin::layer_config(&a.client_config()),
        None => crate::kafka::admin::admin_config(&beside.client_config()),
    }
}

impl Flow {
    /// The settings every admin client of this flow on the source is made with.
    pub fn source_admin_config(&self) -> ClientConfig {
        admin_of(self.source_admin.as_ref(), &self.source)
    }

    /// Which settings those are, for messages: the admin layer's (with the
    /// places of their security keys), or the source consumer's file.
    pub fn source_admin_origin(&self) -> String {
        admin_origin(self.source_admin.as_ref(), &self.source)
    }
}

impl Target {
    /// The settings every admin client on this target is made with.
    pub fn admin_config(&self) -> ClientConfig {
        admin_of(self.admin.as_ref(), &self.settings)
    }

    /// Which settings those are, for messages (as [`Flow::source_admin_origin`]).
    pub fn admin_origin(&self) -> String {
        admin_origin(self.admin.as_ref(), &self.settings)
    }
}

impl Checkpointing {
    /// The settings of admin clients of the offset-syncs cluster.
    pub fn syncs_admin_config(&self) -> ClientConfig {
        admin_of(self.syncs_admin.as_ref(), &self.syncs_cluster)
    }
}

/// `admin settings of mm2.properties: mm2.properties:9: sasl.jaas.config,
/// ...`: which settings an admin client is made with, and where its
/// brokers and security settings were written, so a refusal names them.
fn admin_origin(layer: Option<&ClientSettings>, beside: &ClientSettings) -> String {
    use crate::kafka::settings::Origin;
    let s = layer.unwrap_or(beside);
    let connection = |k: &str| k == "bootstrap.servers" || k.starts_with("security.") || k.starts_with("sasl.") || k.starts_with("ssl.");
    let places: std::collections::BTreeSet<String> = s
        .entries
        .iter()
        .filter(|(k, _)| connection(k))
        .filter_map(|(_, (_, o))| match o {
            Origin::File { at, key } => Some(format!("{at}: {key}")),
            Origin::Default(_) => None,
        })
        .collect();
    let whose = if layer.is_some() { "admin settings" } else { "connection settings" };
    let places: Vec<String> = places.into_iter().collect();
    format!("{whose} of {}: {}", s.path.display(), places.join(", "))
}

impl Plan {
    /// The flows grouped by target, in the order they first appear.
    pub fn by_target(&self) -> Vec<(Arc<Target>, Vec<&Flow>)> {
        let mut groups: Vec<(Arc<Target>, Vec<&Flow>)> = Vec::new();
        for f in &self.flows {
            match groups.iter_mut().find(|(t, _)| Arc::ptr_eq(t, &f.target)) {
                Some((_, flows)) => flows.push(f),
                None => groups.push((f.target.clone(), vec![f])),
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::settings::Role;

    fn settings(role: Role) -> ClientSettings {
        ClientSettings {
            role,
            path: "x.properties".into(),
            entries: Default::default(),
            warnings: vec![],
            notices: vec![],
            group_id: None,
            exclude_internal_topics: true,
            auto_commit_interval_ms: None,
            bootstrap: "b:9092".into(),
            zookeeper_connect: None,
            byte_array_partitioner: false,
            fetched: Default::default(),
        }
    }

    #[test]
    fn flows_share_the_workers_of_the_target_they_share() {
        let t1 = Arc::new(Target { settings: settings(Role::Producer), admin: None, origin: "t1".into() });
        let t2 = Arc::new(Target { settings: settings(Role::Producer), admin: None, origin: "t2".into() });
        let flow = |name: &str, target: &Arc<Target>| Flow {
            name: name.into(),
            lease: name.into(),
            source_origin: name.into(),
            source: settings(Role::Consumer),
            source_admin: None,
            target: target.clone(),
            filter: Arc::new(TopicFilter::new(Some(".*"), None, true).unwrap()),
            naming: Arc::new(Handler::Identity),
            side_effects: SideEffects { create_topics: true, sync_partitions: true, provenance: false },
            remote_topics: None,
            checkpointing: None,
            connect_offsets: None,
            exactly_once: None,
        };
        let shape = Shape {
            streams: 1,
            producers: 1,
            queue_records: 1,
            queue_bytes: 1,
            commit_interval: Duration::ZERO,
            topic_refresh_interval: Duration::ZERO,
            abort_on_send_failure: true,
            throttle_records_per_sec: None,
            throttle_bytes_per_sec: None,
        };
        let ops = Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: false };
        let plan = Plan { flows: vec![flow("a", &t1), flow("b", &t2), flow("c", &t1)], heartbeats: vec![], shape, ops };
        let groups: Vec<(String, Vec<&str>)> =
            plan.by_target().iter().map(|(t, fs)| (t.origin.clone(), fs.iter().map(|f| f.name.as_str()).collect())).collect();
        assert_eq!(groups, vec![("t1".to_string(), vec!["a", "c"]), ("t2".to_string(), vec!["b"])]);
    }

    #[test]
    fn exactly_once_names_begin_with_the_prefixes_acls_grant() {
        let id = ExactlyOnce::transactional_id("A->B", 2, 42, 0xabc);
        assert_eq!(id, "mirror-maker-A->B-2-42-abc");
        assert!(id.starts_with(ExactlyOnce::TRANSACTIONAL_ID_PREFIX));
        let group = ExactlyOnce::owner_group("A->B");
        assert_eq!(group, "mirror-maker.eos.A->B");
        assert!(group.starts_with(ExactlyOnce::OWNER_GROUP_PREFIX));
    }
}
