//! The Connect front-end (issue #28 item 2): a Connect worker file
//! (`connect-distributed.properties`) and, per connector, the flat config a
//! user `PUT`s over REST, turned into a [`Plan`] the engine runs. The
//! connector keys are typed by the MM2 front-end ([`mm2::connector`]), so the
//! same translation rules and typo warnings apply in both modes.
//!
//! What runs the plans (threads, storage topics, REST) is `crate::worker`,
//! above both front-ends and the engine.

pub mod listeners;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::front::mm2::connector::{self, Kind, BYTE_ARRAY_CONVERTER};
use crate::front::mm2::keys::hint;
use crate::front::mm2::{self, Mm2Config, WorkerSettings};
use crate::front::properties::{self, ConfigError, PropertiesFile, Property};
use crate::front::translate;
use crate::kafka::settings::{ClientSettings, Role};
use crate::plan::filter::TopicFilter;
use crate::plan::{Ops, Plan};

pub mod standalone;

pub use listeners::{Listener, Scheme, Tls, DEFAULT_LISTENER};

/// In which of Connect's modes a worker key has a use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Both modes: distributed and standalone.
    Both,
    /// A distributed worker's only: Java's `StandaloneConfig` does not
    /// define it and logs it as unused; a standalone worker here names each
    /// in a warning ([`standalone`]).
    Distributed,
}

/// Worker keys this worker reads (besides the client-override prefixes and
/// the security keys, which go to the worker's own clients), each with the
/// modes it has a use in: the one table both modes read.
const WORKER_KEYS: &[(&str, Mode)] = &[
    ("bootstrap.servers", Mode::Both),
    ("group.id", Mode::Distributed),
    ("client.id", Mode::Both),
    ("config.storage.topic", Mode::Distributed),
    ("offset.storage.topic", Mode::Distributed),
    ("status.storage.topic", Mode::Distributed),
    ("config.storage.replication.factor", Mode::Distributed),
    ("offset.storage.replication.factor", Mode::Distributed),
    ("status.storage.replication.factor", Mode::Distributed),
    ("offset.storage.partitions", Mode::Distributed),
    ("status.storage.partitions", Mode::Distributed),
    ("listeners", Mode::Both),
    ("rest.advertised.host.name", Mode::Both),
    ("rest.advertised.port", Mode::Both),
    ("rest.advertised.listener", Mode::Both),
    ("key.converter", Mode::Both),
    ("value.converter", Mode::Both),
    ("header.converter", Mode::Both),
    ("offset.flush.interval.ms", Mode::Both),
    ("offset.flush.timeout.ms", Mode::Both),
    ("scheduled.rebalance.max.delay.ms", Mode::Distributed),
    ("exactly.once.source.support", Mode::Distributed),
];

/// The names of [`WORKER_KEYS`].
fn worker_key_names() -> impl Iterator<Item = &'static str> {
    WORKER_KEYS.iter().map(|(k, _)| *k)
}

/// Whether `key` is a worker key of a distributed worker only.
fn distributed_only(key: &str) -> bool {
    WORKER_KEYS.iter().any(|(k, mode)| *k == key && *mode == Mode::Distributed)
}

/// Worker keys Java reads that have no meaning for this worker; accepted
/// with a note saying why, never silently.
const NO_MEANING: &[(&str, &str)] = &[
    ("plugin.path", "the three MirrorMaker 2 connectors are built in; no plugins are loaded"),
    ("plugin.discovery", "the three MirrorMaker 2 connectors are built in; no plugins are loaded"),
    ("internal.key.converter", "removed from Connect in 3.0; the internal topics are written as JSON"),
    ("internal.value.converter", "removed from Connect in 3.0; the internal topics are written as JSON"),
    ("session.timeout.ms", "workers do not form a Connect group here; each connector's consumer group and lease carry the coordination"),
    ("heartbeat.interval.ms", "workers do not form a Connect group here; each connector's consumer group and lease carry the coordination"),
    ("rebalance.timeout.ms", "workers do not form a Connect group here; each connector's consumer group and lease carry the coordination"),
    ("connect.protocol", "workers do not form a Connect group here; each connector's consumer group and lease carry the coordination"),
    ("task.shutdown.graceful.timeout.ms", "a stopped connector drains as a stopped MM2 flow does"),
    ("connector.client.config.override.policy", "every producer.override.* of a connector is applied, as with the policy All"),
];

/// The worker's file, read and checked.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub file: PropertiesFile,
    pub settings: WorkerSettings,
    /// The worker's cluster: where the storage topics live and where the
    /// source connector's records go (Connect's producer).
    pub cluster: ClientSettings,
    /// The same, as a consumer's (the config topic's reader).
    pub cluster_reader: ClientSettings,
    /// Where the first REST listener binds.
    pub bind: (String, u16),
    /// Every entry of `listeners`, each bound.
    pub listeners: Vec<Listener>,
    /// The https listeners' TLS context, when one is listed.
    pub tls: Option<Tls>,
    /// `host:port` as statuses name this worker.
    pub worker_id: String,
    /// The worker's `key.converter` and `value.converter`, when given.
    pub converters: Vec<(String, String)>,
    pub scheduled_rebalance_max_delay_ms: i64,
    /// A standalone worker's `offset.storage.file.filename`, where its
    /// source connectors' positions live instead of the offsets topic.
    pub offsets_file: Option<PathBuf>,
    pub warnings: Vec<String>,
    pub notices: Vec<String>,
}

/// Reads the worker file.
pub fn load_worker(path: &Path) -> Result<WorkerConfig, ConfigError> {
    worker_config(properties::load(path)?)
}

/// Checks a worker file already read.
pub fn worker_config(file: PropertiesFile) -> Result<WorkerConfig, ConfigError> {
    for key in ["bootstrap.servers", "group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"] {
        if file.get(key).is_none_or(|p| p.value.is_empty()) {
            return Err(ConfigError::in_file(&file.path, format!("{key} is missing; a distributed Connect worker needs it"))
                .with_key(key)
                .with_fix(format!("add e.g. {}", example(key))));
        }
    }
    checked_worker(file, None, lint)
}

/// Warnings and notices of a worker file's keys.
type Lint = fn(&PropertiesFile, &mut Vec<String>, &mut Vec<String>);

/// A worker file whose required keys are there: distributed's, or a
/// standalone worker's with its offsets file.
/// `lint` is the mode's: standalone names the distributed-only keys.
fn checked_worker(file: PropertiesFile, offsets_file: Option<PathBuf>, lint: Lint) -> Result<WorkerConfig, ConfigError> {
    // Java's WorkerConfig resolves its own file with its providers first.
    let (file, provider_warnings) = crate::front::providers::resolve_worker_file(file)?;
    let settings = connector::worker_settings(&file)?;
    let (mut warnings, mut notices) = (provider_warnings, Vec::new());
    lint(&file, &mut warnings, &mut notices);
    let rest = listeners::listeners(&file)?;
    let bind = rest[0].bind();
    let worker_id = advertised(&file, listeners::advertised(&file, &rest)?)?;
    let tls = listeners::tls(&file, &rest, &mut notices)?;
    listeners::lint(&file, &mut warnings);
    let converters = ["key.converter", "value.converter"].iter().filter_map(|k| file.get(k).map(|p| (p.key.clone(), p.value.clone()))).collect();
    if let Some(p) = file.get("header.converter").filter(|p| p.value != BYTE_ARRAY_CONVERTER) {
        notices.push(format!(
            "{}: header.converter={}: this worker copies every header of a mirrored record byte for byte whatever the converter says \
             (Java's SimpleHeaderConverter rewrites header values, e.g. \"0\" arrives as \"MA==\")",
            file.at(p),
            p.value
        ));
    }
    let scheduled_rebalance_max_delay_ms = int(&file, "scheduled.rebalance.max.delay.ms", 300_000)?;
    if let (Some(p), Some(ms)) = (file.get("scheduled.rebalance.max.delay.ms"), session_within(scheduled_rebalance_max_delay_ms)) {
        notices.push(format!(
            "{}: scheduled.rebalance.max.delay.ms={}: a stopped or killed worker's partitions move to the others once its connectors' \
             consumer sessions expire: session.timeout.ms={ms} for them unless a connector sets its own{}",
            file.at(p),
            p.value,
            if ms > scheduled_rebalance_max_delay_ms { " (the brokers' least by default; a shorter one they refuse)" } else { "" }
        ));
    }
    let cluster = translate::translate(&worker_client_file(&file), Role::Producer)?;
    // A consumer needs a group to be made; the reader never commits under it.
    let cluster_reader = if offsets_file.is_some() {
        // A standalone worker reads no topic of its own, and has no group.id
        // to make a consumer with.
        cluster.clone()
    } else {
        let mut reader_file = worker_client_file(&file);
        reader_file.props.extend(file.get("group.id").cloned());
        translate::translate(&reader_file, Role::Consumer)?
    };
    Ok(WorkerConfig {
        file,
        settings,
        cluster,
        cluster_reader,
        bind,
        listeners: rest,
        tls,
        worker_id,
        converters,
        scheduled_rebalance_max_delay_ms,
        offsets_file,
        warnings,
        notices,
    })
}

fn example(key: &str) -> &'static str {
    match key {
        "bootstrap.servers" => "bootstrap.servers=localhost:9092",
        "group.id" => "group.id=connect-cluster",
        "config.storage.topic" => "config.storage.topic=connect-configs",
        "offset.storage.topic" => "offset.storage.topic=connect-offsets",
        _ => "status.storage.topic=connect-status",
    }
}

fn is_security_key(key: &str) -> bool {
    key == "security.protocol" || key.starts_with("ssl.") || key.starts_with("sasl.")
}

/// The worker's own clients (storage topics): its bootstrap and security
/// keys, as Connect gives its internal clients.
fn worker_client_file(file: &PropertiesFile) -> PropertiesFile {
    let props = file.props.iter().filter(|p| p.key == "bootstrap.servers" || is_security_key(&p.key)).cloned().collect();
    PropertiesFile { path: file.path.clone(), props }
}

fn lint(file: &PropertiesFile, warnings: &mut Vec<String>, notices: &mut Vec<String>) {
    let prefixes = ["producer.", "consumer.", "admin.", "key.converter.", "value.converter.", "header.converter.", "config.providers"];
    for p in &file.props {
        if let Some((_, why)) = NO_MEANING.iter().find(|(k, _)| *k == p.key) {
            notices.push(format!("{}: {} is accepted and has no effect here: {why}", file.at(p), p.key));
        } else if let Some((prefix, fix)) = connector_side_override(&p.key) {
            warnings.push(format!(
                "{}: {} has no effect on MirrorMaker 2's connectors: as in Java Connect, where the worker's {prefix}* reaches only clients \
                 Connect makes itself (sink connectors' consumers, topic creation and dead-letter queues), none of which these connectors use; \
                 their clients are made from the connector config. Put it in the connector config instead, as {fix}",
                file.at(p),
                p.key
            ));
        } else if !(worker_key_names().any(|k| k == p.key)
            || is_security_key(&p.key)
            || p.key.starts_with("listeners.")
            || prefixes.iter().any(|x| p.key.starts_with(x)))
        {
            warnings.push(format!(
                "{}: {} is not a Connect worker key this worker knows; it is ignored.{}",
                file.at(p),
                p.key,
                hint(&p.key, worker_key_names())
            ));
        }
    }
    // Only when the worker's clients are secured: top-level ssl.* keys with
    // PLAINTEXT clients may be there for the https listener alone.
    let secured = file.get("security.protocol").is_some_and(|p| !p.value.trim().eq_ignore_ascii_case("PLAINTEXT"))
        || file.props.iter().any(|p| p.key.starts_with("sasl."));
    if secured && !file.props.iter().any(|p| p.key.starts_with("producer.") && is_security_key(&p.key["producer.".len()..])) {
        warnings.push(format!(
            "{}: the security keys reach the worker's own clients only; as in Connect, the connectors' producer needs them again as producer.<key>",
            file.path.display()
        ));
    }
}

/// A worker-file `consumer.*` or `admin.*` key: its prefix and where the
/// same setting goes in a connector config. Java's MirrorSourceTask and
/// MirrorCheckpointTask build their consumers and admin clients from the
/// connector config (`source.cluster.*` -> `consumer.*` ->
/// `source.consumer.*`, likewise for admin), never from the worker's
/// prefixed keys, so applying these here would differ from Java.
fn connector_side_override(key: &str) -> Option<(&'static str, String)> {
    if let Some(rest) = key.strip_prefix("consumer.") {
        return Some(("consumer.", format!("\"source.consumer.{rest}\" (the source consumers) or \"consumer.{rest}\" (every consumer of the connector)")));
    }
    let rest = key.strip_prefix("admin.")?;
    Some(("admin.", format!("\"source.admin.{rest}\", \"target.admin.{rest}\" or \"admin.{rest}\" (both clusters' admin clients)")))
}

fn int(file: &PropertiesFile, key: &str, default: i64) -> Result<i64, ConfigError> {
    match file.get(key) {
        None => Ok(default),
        Some(p) => {
            p.value.parse().map_err(|_| ConfigError::at(file, p, format!("{key}='{}' is not a number", p.value)).with_fix("write milliseconds, e.g. 300000"))
        }
    }
}

/// `rest.advertised.host.name:rest.advertised.port`, else the advertised
/// listener's host (this host's name when it binds every interface) and
/// port, as Connect's worker id.
fn advertised(file: &PropertiesFile, listener: &Listener) -> Result<String, ConfigError> {
    let bind = listener.bind();
    let host = match file.get("rest.advertised.host.name") {
        Some(p) => p.value.clone(),
        None if bind.0 != "0.0.0.0" => bind.0.clone(),
        None => hostname(),
    };
    let port = int(file, "rest.advertised.port", bind.1 as i64)?;
    Ok(format!("{host}:{port}"))
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "localhost".into())
}

/// What one connector config runs.
#[derive(Debug)]
pub struct ConnectorPlan {
    pub kind: Kind,
    pub plan: Plan,
    pub warnings: Vec<String>,
    pub notices: Vec<String>,
}

/// The plan of connector `name` with `config` (the REST body, in order).
/// Its flow is named after the connector, so its lease and its group's
/// default are its own: two connectors of one pair never share them.
/// The flow consumers' `session.timeout.ms` that keeps a killed worker's
/// share within `scheduled.rebalance.max.delay.ms`: Connect waits up to
/// that long for a departed worker before moving its tasks; here the
/// flow's consumer group moves a dead worker's partitions once its session
/// expires (45 s by default, already within Connect's default 300000).
/// A shorter delay shortens the session, down to the brokers' least
/// (`group.min.session.timeout.ms`, 6000 by default). None: the default stays.
fn session_within(delay_ms: i64) -> Option<i64> {
    (delay_ms < DEFAULT_SESSION_MS).then_some(delay_ms.max(LEAST_SESSION_MS))
}

/// The consumer's own default `session.timeout.ms`.
const DEFAULT_SESSION_MS: i64 = 45_000;
/// The brokers' default `group.min.session.timeout.ms`.
const LEAST_SESSION_MS: i64 = 6_000;

pub fn plan(name: &str, config: &[(String, String)], worker: &WorkerConfig, drain_timeout: Duration) -> Result<ConnectorPlan, ConfigError> {
    let path = connector::origin(name);
    for key in ["key.converter", "value.converter"] {
        let own = config.iter().find(|(k, _)| k == key).map(|(_, v)| (v.clone(), format!("{}: {key}", path.display())));
        let of_worker = worker.converters.iter().find(|(k, _)| k == key).map(|(_, v)| (v.clone(), format!("{}: {key}", worker.file.path.display())));
        if let Some((class, at)) = own.or(of_worker) {
            if class.trim() != BYTE_ARRAY_CONVERTER {
                return Err(ConfigError::new(format!(
                    "{at}={class}: MirrorMaker 2's connectors copy records as bytes; with any other converter Java's connector would \
                     decode and re-encode every key and value, and this worker will not pretend to"
                ))
                .with_key(key)
                .with_fix(format!("set \"{key}\": \"{BYTE_ARRAY_CONVERTER}\" in the connector config")));
            }
        }
    }
    let read = connector::read(name, config, &worker.file)?;
    let mut flow = read.flow;
    if let Some(ms) = session_within(worker.scheduled_rebalance_max_delay_ms) {
        if flow.consumer.file.get("session.timeout.ms").is_none() {
            flow.consumer.file.props.push(Property { key: "session.timeout.ms".into(), value: ms.to_string(), line: 0, resolved: None });
        }
    }
    if read.kind == Kind::Checkpoint {
        // Its group must not be the source connector's, or the two would
        // split the partitions between a copier and a flow that copies nothing.
        flow.consumer.file.props.retain(|p| p.key != "group.id");
        flow.consumer.file.props.push(Property { key: "group.id".into(), value: format!("mm2.{name}.checkpoints"), line: 0, resolved: None });
    }
    let cfg = Mm2Config { path: path.clone(), clusters: Vec::new(), flows: vec![flow], warnings: Vec::new(), notices: Vec::new() };
    let ops = Ops { drain_timeout, stats_interval: Duration::ZERO, metrics: None, label_flows: true };
    let mut plan = mm2::plan::plan_with(&cfg, ops, false)?;
    // Each connector its own lease, as Connect runs each connector's tasks:
    // a worker's source, checkpoint and heartbeat connectors of one
    // cluster pair never wait for one another's lease.
    for h in &mut plan.heartbeats {
        h.lease = name.to_string();
    }
    for f in &mut plan.flows {
        f.name = name.to_string();
        f.lease = name.to_string();
        if let Some(c) = &mut f.connect_offsets {
            // The worker's offsets topic, where Java Connect keeps this
            // connector's positions under the connector's name: taken over
            // at start and handed back while running, so the connector moves
            // between Java Connect and this worker both ways.
            let c = std::sync::Arc::get_mut(c).expect("the plan's only reference");
            c.connector = name.to_string();
            c.hand_back = true;
            c.topic = worker.settings.offset_storage_topic.clone();
            c.partitions = worker.settings.offset_storage_partitions;
            c.replication_factor = worker.settings.offset_storage_replication_factor;
            c.file = worker.offsets_file.clone();
        }
        if read.kind == Kind::Checkpoint {
            // Java's checkpoint connector copies no record: no topic is
            // selected for the copy, but the connector's topics are the
            // ones its groups' positions are checkpointed on.
            if let Some(c) = &mut f.checkpointing {
                if let Some(cp) = &mut std::sync::Arc::get_mut(c).expect("the plan's only reference").checkpoints {
                    cp.topics = Some(f.filter.clone());
                }
            }
            f.filter =
                std::sync::Arc::new(TopicFilter::new(Some("(?!)"), None, true).unwrap_or_else(|_| TopicFilter::new(Some("a^"), None, true).expect("a regex")));
            f.remote_topics = None;
            f.connect_offsets = None;
            if let Some(c) = &mut f.checkpointing {
                std::sync::Arc::get_mut(c).expect("the plan's only reference").write_syncs = false;
            }
        }
    }
    plan.shape.commit_interval = Duration::from_millis(worker.settings.offset_flush_interval_ms.max(1) as u64);
    Ok(ConnectorPlan { kind: read.kind, plan, warnings: read.warnings, notices: read.notices })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(text: &str) -> Result<WorkerConfig, ConfigError> {
        worker_config(properties::parse(Path::new("worker.properties"), text.as_bytes()).unwrap())
    }

    const MIN: &str = "bootstrap.servers=t:9092\ngroup.id=connect\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n";

    #[test]
    fn a_worker_file_with_connects_keys() {
        let w = worker(&format!(
            "{MIN}listeners=http://127.0.0.1:18301\nheader.converter=org.apache.kafka.connect.storage.SimpleHeaderConverter\nplugin.path=/x\ngroupid=x\n"
        ))
        .unwrap();
        assert_eq!(w.bind, ("127.0.0.1".to_string(), 18301));
        assert_eq!(w.worker_id, "127.0.0.1:18301");
        assert_eq!(w.settings.offset_storage_topic, "o");
        assert!(w.notices.iter().any(|n| n.contains("header.converter") && n.contains("byte for byte")), "{:?}", w.notices);
        assert!(w.notices.iter().any(|n| n.contains("plugin.path")), "{:?}", w.notices);
        assert!(w.warnings.iter().any(|n| n.contains("groupid") && n.contains("Did you mean 'group.id'")), "{:?}", w.warnings);
        assert_eq!(worker(MIN).unwrap().bind, ("0.0.0.0".to_string(), 8083), "Connect's default listener");
    }

    #[test]
    fn a_bad_worker_file_names_file_key_and_fix() {
        let e = worker("bootstrap.servers=t:9092\n").unwrap_err().to_string();
        assert!(e.starts_with("worker.properties: group.id is missing") && e.contains("add e.g. group.id="), "{e}");
        let e = worker(&format!("{MIN}listeners=https://:8443\n")).unwrap_err().to_string();
        assert!(e.starts_with("worker.properties: an https listener needs a keystore and ssl.keystore.location is not set"), "{e}");
        let e = worker(&format!("{MIN}scheduled.rebalance.max.delay.ms=later\n")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("scheduled.rebalance.max.delay.ms"));
    }

    fn source(extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut c: Vec<(String, String)> = [
            ("connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector"),
            ("source.cluster.alias", "A"),
            ("target.cluster.alias", "B"),
            ("source.cluster.bootstrap.servers", "a:9092"),
            ("target.cluster.bootstrap.servers", "t:9092"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        c.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        c
    }

    #[test]
    fn a_source_connector_is_a_flow_named_after_it_with_the_workers_offsets() {
        let w = worker(&format!("{MIN}offset.flush.interval.ms=2000\n")).unwrap();
        let p = plan("mm2-source-connector", &source(&[("tasks.max", "4")]), &w, Duration::from_secs(5)).unwrap();
        assert_eq!(p.plan.flows.len(), 1);
        assert!(p.plan.heartbeats.is_empty());
        let f = &p.plan.flows[0];
        assert_eq!(f.name, "mm2-source-connector");
        assert_eq!(f.target.settings.bootstrap, "t:9092");
        let c = f.connect_offsets.as_ref().unwrap();
        assert_eq!((c.topic.as_str(), c.partitions), ("o", 25));
        assert_eq!((c.connector.as_str(), c.hand_back), ("mm2-source-connector", true), "its positions under its own name, kept up to date");
        assert!(f.checkpointing.as_ref().unwrap().checkpoints.is_none(), "the checkpoint connector checkpoints");
        assert_eq!((p.plan.shape.streams, p.plan.shape.commit_interval), (4, Duration::from_secs(2)));
    }

    #[test]
    fn scheduled_rebalance_max_delay_bounds_the_flow_consumers_session() {
        let session = |worker_extra: &str, conn: &[(&str, &str)]| {
            let w = worker(&format!("{MIN}{worker_extra}")).unwrap();
            let p = plan("mm2-source-connector", &source(conn), &w, Duration::from_secs(5)).unwrap();
            (p.plan.flows[0].source.client_config().get("session.timeout.ms").map(str::to_string), w.notices)
        };
        let (default, notices) = session("", &[]);
        assert_eq!(default, None, "the consumer's own 45 s: Connect's 300000 already bounds it");
        assert!(!notices.iter().any(|n| n.contains("scheduled.rebalance")), "{notices:?}");
        let (short, notices) = session("scheduled.rebalance.max.delay.ms=10000\n", &[]);
        assert_eq!(short.as_deref(), Some("10000"));
        assert!(notices.iter().any(|n| n.contains("scheduled.rebalance.max.delay.ms=10000") && n.contains("session.timeout.ms=10000")), "{notices:?}");
        let (zero, notices) = session("scheduled.rebalance.max.delay.ms=0\n", &[]);
        assert_eq!(zero.as_deref(), Some("6000"), "no shorter than the brokers' least session");
        assert!(notices.iter().any(|n| n.contains("the brokers' least")), "{notices:?}");
        let (own, _) = session("scheduled.rebalance.max.delay.ms=10000\n", &[("source.consumer.session.timeout.ms", "20000")]);
        assert_eq!(own.as_deref(), Some("20000"), "a connector's own session wins");
    }

    #[test]
    fn worker_consumer_and_admin_overrides_are_named_as_having_no_effect() {
        let w = worker(&format!("{MIN}consumer.max.poll.records=7\nadmin.request.timeout.ms=9\nproducer.linger.ms=5\n")).unwrap();
        let consumer = w.warnings.iter().find(|m| m.contains("consumer.max.poll.records")).unwrap_or_else(|| panic!("{:?}", w.warnings));
        assert!(consumer.starts_with("worker.properties:6: consumer.max.poll.records has no effect on MirrorMaker 2's connectors"), "{consumer}");
        assert!(consumer.contains("\"source.consumer.max.poll.records\""), "{consumer}");
        let admin = w.warnings.iter().find(|m| m.contains("admin.request.timeout.ms")).unwrap_or_else(|| panic!("{:?}", w.warnings));
        assert!(
            admin.starts_with("worker.properties:7: admin.request.timeout.ms has no effect") && admin.contains("\"target.admin.request.timeout.ms\""),
            "{admin}"
        );
        assert!(!w.warnings.iter().any(|m| m.contains("producer.linger.ms")), "producer.* reaches the data producer: {:?}", w.warnings);
        // And indeed none reaches a connector's clients.
        let p = plan("c", &source(&[]), &w, Duration::ZERO).unwrap();
        let f = &p.plan.flows[0];
        assert!(!f.source.entries.contains_key("max.poll.records"), "{:?}", f.source.entries);
    }

    #[test]
    fn converters_other_than_byte_array_are_refused_with_why() {
        let w = worker(&format!("{MIN}key.converter=org.apache.kafka.connect.json.JsonConverter\n")).unwrap();
        let e = plan("c", &source(&[]), &w, Duration::ZERO).unwrap_err().to_string();
        assert!(
            e.starts_with("worker.properties: key.converter=org.apache.kafka.connect.json.JsonConverter: MirrorMaker 2's connectors copy records as bytes"),
            "{e}"
        );
        let ok = source(&[("key.converter", BYTE_ARRAY_CONVERTER)]);
        assert!(plan("c", &ok, &w, Duration::ZERO).is_ok(), "the connector's own converter wins over the worker's");
    }

    #[test]
    fn heartbeat_and_checkpoint_connectors() {
        let w = worker(MIN).unwrap();
        let hb =
            source(&[]).into_iter().map(|(k, v)| if k == "connector.class" { (k, connector::HEARTBEAT_CLASS.to_string()) } else { (k, v) }).collect::<Vec<_>>();
        let p = plan("hb", &hb, &w, Duration::ZERO).unwrap();
        assert!(p.plan.flows.is_empty());
        assert_eq!(p.plan.heartbeats.len(), 1);
        let cp = source(&[])
            .into_iter()
            .map(|(k, v)| if k == "connector.class" { (k, connector::CHECKPOINT_CLASS.to_string()) } else { (k, v) })
            .collect::<Vec<_>>();
        let p = plan("cp", &cp, &w, Duration::ZERO).unwrap();
        let f = &p.plan.flows[0];
        assert!(!f.filter.matches("orders"), "copies nothing");
        let cp = f.checkpointing.as_ref().unwrap().checkpoints.as_ref().expect("the checkpoint connector checkpoints");
        // Before: the copy's empty filter chose the checkpointed topics
        // too, and the connector never wrote a checkpoint (found side by
        // side with Java Connect, tests/connect_java.rs on branch h4).
        assert!(cp.topics.as_ref().expect("its own topics").matches("orders"), "checkpoints the connector's topics");
        assert_eq!(f.lease, "cp", "its own lease, not the cluster pair's");
        assert_eq!(p.plan.flows.len(), 1);
        assert_eq!(f.source.group_id.as_deref(), Some("mm2.cp.checkpoints"));
    }
}
