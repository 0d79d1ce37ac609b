//! One Connect connector config (a Connect worker's REST `PUT`, issue #28)
//! read as a flow of this front-end: the same typing of every connector
//! key, the same policies, filters and client assembly as an MM2 file's
//! flow, because Java's dedicated mode hands its connectors exactly such a
//! config (`connectorBaseConfig`, reference §1.3). Only where the config
//! comes from differs: here the user wrote it whole, so it is taken as is,
//! with no `A.`/`A->B.` spreading, and the worker's own file gives the
//! data producer (Connect's `Worker.baseProducerConfigs`).

use std::path::PathBuf;

use super::assemble::{Config, Val};
use super::keys::{self, hint, is_client_key, is_connector_key, is_source_connector_key, CONNECTOR_CLASS, NAME, SOURCE_CLUSTER_ALIAS, TARGET_CLUSTER_ALIAS};
use super::raw::java_trim;
use super::{flow_of, settings, Flow, Messages, WorkerSettings};
use crate::front::properties::{ConfigError, PropertiesFile, Property};

pub const SOURCE_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
pub const CHECKPOINT_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector";
pub const HEARTBEAT_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";
/// The only converter that leaves a mirrored record's bytes alone.
pub const BYTE_ARRAY_CONVERTER: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

/// Which of MirrorMaker 2's three connectors a config runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Source,
    Checkpoint,
    Heartbeat,
}

impl Kind {
    /// Connect accepts a plugin's full class name or its simple name
    /// (`MirrorSourceConnector`), with surrounding whitespace trimmed as
    /// ConfigDef's CLASS type trims it.
    pub fn of_class(class: &str) -> Option<Kind> {
        let class = java_trim(class);
        let simple = class.rsplit('.').next().unwrap_or(class);
        let full_or_simple = |full: &str| class == full || (simple == class && full.ends_with(&format!(".{class}")));
        [(SOURCE_CLASS, Kind::Source), (CHECKPOINT_CLASS, Kind::Checkpoint), (HEARTBEAT_CLASS, Kind::Heartbeat)]
            .into_iter()
            .find(|(full, _)| full_or_simple(full))
            .map(|(_, k)| k)
    }

    pub fn class(self) -> &'static str {
        match self {
            Kind::Source => SOURCE_CLASS,
            Kind::Checkpoint => CHECKPOINT_CLASS,
            Kind::Heartbeat => HEARTBEAT_CLASS,
        }
    }
}

/// A connector config as a flow, with what the user should hear about it.
#[derive(Debug)]
pub struct ConnectorFlow {
    pub kind: Kind,
    pub flow: Flow,
    pub warnings: Vec<String>,
    pub notices: Vec<String>,
}

/// Where messages say a connector's key is: `connector 'name'`.
pub fn origin(name: &str) -> PathBuf {
    PathBuf::from(format!("connector '{name}'"))
}

/// Types `config` (the REST body's flat map, in the order given) as
/// connector `name`; `worker` is the worker's file, whose `producer.*` and
/// `bootstrap.servers` make the data producer, as in Connect.
pub fn read(name: &str, config: &[(String, String)], worker: &PropertiesFile) -> Result<ConnectorFlow, ConfigError> {
    let path = origin(name);
    // Line numbers are the key's place in the body as sent (serde_json
    // keeps the order: its preserve_order feature), 1-based.
    let props = config.iter().enumerate().map(|(i, (k, v))| Property { key: k.clone(), value: v.clone(), line: i + 1, resolved: None }).collect();
    // The worker's providers resolve the connector's references, as Connect's
    // WorkerConfigTransformer does; the stored config keeps them as written.
    let file = crate::front::providers::Providers::declared(worker)?.apply(&PropertiesFile { path: path.clone(), props }, false)?;
    let class = file.get(CONNECTOR_CLASS).ok_or_else(|| {
        ConfigError::in_file(&path, format!("{CONNECTOR_CLASS} is missing")).with_key(CONNECTOR_CLASS).with_fix(format!("set it to one of {}", classes()))
    })?;
    let kind = Kind::of_class(&class.value).ok_or_else(|| unknown_class(&file, class))?;
    let cc: Config<'_> = file.props.iter().map(|p| (p.key.clone(), Val { value: p.value.clone(), from: Some(p) })).collect();
    let worker_cfg: Config<'_> = worker.props.iter().map(|p| (p.key.clone(), Val { value: p.value.clone(), from: Some(p) })).collect();
    let source = alias(&file, SOURCE_CLUSTER_ALIAS.name)?.ok_or_else(|| {
        ConfigError::in_file(&path, format!("{} is missing; Java requires it", SOURCE_CLUSTER_ALIAS.name)).with_key(SOURCE_CLUSTER_ALIAS.name)
    })?;
    let target = alias(&file, TARGET_CLUSTER_ALIAS.name)?.unwrap_or_else(|| TARGET_CLUSTER_ALIAS.default.unwrap_or("target").to_string());
    let mut msgs = Messages { warnings: Vec::new(), notices: Vec::new() };
    lint(&file, name, &mut msgs);
    let mut flow = flow_of(&file, &cc, &worker_cfg, &source, &target, &mut msgs)?;
    // Connect runs each connector of the three on its own: the source
    // connector copies and writes offset-syncs, only the checkpoint
    // connector checkpoints, only the heartbeat connector beats.
    flow.enabled = kind != Kind::Heartbeat;
    flow.heartbeats_enabled = kind == Kind::Heartbeat && flow.settings.emit_heartbeats.interval().is_some();
    if kind == Kind::Source {
        flow.settings.emit_checkpoints.enabled = false;
    }
    Ok(ConnectorFlow { kind, flow, warnings: msgs.warnings, notices: msgs.notices })
}

fn classes() -> String {
    format!("{SOURCE_CLASS}, {CHECKPOINT_CLASS}, {HEARTBEAT_CLASS}")
}

fn unknown_class(file: &PropertiesFile, p: &Property) -> ConfigError {
    ConfigError::at(
        file,
        p,
        format!("{CONNECTOR_CLASS}='{}' is not a connector this worker runs: it runs MirrorMaker 2's three connectors only", java_trim(&p.value)),
    )
    .with_fix(format!("use one of {}", classes()))
}

/// A cluster alias: trimmed, and not empty.
fn alias(file: &PropertiesFile, key: &str) -> Result<Option<String>, ConfigError> {
    let Some(p) = file.get(key) else { return Ok(None) };
    let v = java_trim(&p.value);
    if v.is_empty() {
        return Err(ConfigError::at(file, p, format!("{key} is empty")).with_fix("name the cluster, e.g. A"));
    }
    Ok(Some(v.to_string()))
}

/// Keys a MirrorMaker 2 connector takes besides [`is_connector_key`]: the
/// clusters' client settings, each client's own, Connect's per-connector
/// overrides and source-connector keys.
fn is_known(key: &str) -> bool {
    is_connector_key(key)
        || is_source_connector_key(key)
        || key == NAME
        || [
            "source.cluster.",
            "target.cluster.",
            "source.consumer.",
            "source.producer.",
            "source.admin.",
            "target.consumer.",
            "target.producer.",
            "target.admin.",
        ]
        .iter()
        .any(|p| key.starts_with(p))
        || ["consumer.", "producer.", "admin.", "key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.", "errors."]
            .iter()
            .any(|p| key.starts_with(p))
        || key.starts_with(keys::REPLICATION_POLICY_PREFIX)
}

/// The typo warnings an MM2 file gets, for the keys of one connector.
fn lint(file: &PropertiesFile, name: &str, msgs: &mut Messages) {
    for p in &file.props {
        if !is_known(&p.key) {
            msgs.warn(format!(
                "connector '{name}': {} is not a key of MirrorMaker 2's connectors and is ignored, as Java ignores it.{}",
                p.key,
                hint(&p.key, [])
            ));
        } else if is_client_key(&p.key) && p.key != keys::BOOTSTRAP_SERVERS {
            msgs.warn(format!(
                "connector '{name}': {} alone reaches no client; write source.cluster.{} and/or target.cluster.{} (Java's connectors read those)",
                p.key, p.key, p.key
            ));
        }
        if p.key == keys::TRANSFORMS && !java_trim(&p.value).is_empty() {
            msgs.warn(format!(
                "connector '{name}': {}: Connect transforms (SMTs) are Java classes this worker does not run; records are copied unchanged",
                p.key
            ));
        }
    }
}

/// A Connect worker file's settings typed as MM2 types a herder's worker
/// (`group.id`, the storage topics, their partitions and replication
/// factors, `offset.flush.interval.ms`); errors name the file and line.
pub fn worker_settings(worker: &PropertiesFile) -> Result<WorkerSettings, ConfigError> {
    let cfg: Config<'_> = worker.props.iter().map(|p| (p.key.clone(), Val { value: p.value.clone(), from: Some(p) })).collect();
    let mut r = settings::Reader::new(&cfg, &worker.path);
    settings::read_worker(&mut r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn worker() -> PropertiesFile {
        let text = "bootstrap.servers=t:9092\ngroup.id=g\nproducer.linger.ms=7\n";
        crate::front::properties::parse(Path::new("worker.properties"), text.as_bytes()).unwrap()
    }

    fn config(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn classes_are_read_as_connect_reads_them() {
        assert_eq!(Kind::of_class(" org.apache.kafka.connect.mirror.MirrorSourceConnector"), Some(Kind::Source));
        assert_eq!(Kind::of_class("MirrorCheckpointConnector "), Some(Kind::Checkpoint));
        assert_eq!(Kind::of_class("org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"), Some(Kind::Heartbeat));
        assert_eq!(Kind::of_class("org.example.MirrorSourceConnector"), None);
        assert_eq!(Kind::of_class("FileStreamSource"), None);
    }

    #[test]
    fn the_guides_source_connector_is_one_copying_flow() {
        let c = config(&[
            ("connector.class", " org.apache.kafka.connect.mirror.MirrorSourceConnector"),
            ("source.cluster.alias", "A"),
            ("target.cluster.alias", "B"),
            ("source.cluster.bootstrap.servers", "a:9092"),
            ("target.cluster.bootstrap.servers", "t:9092"),
            ("topics", "orders.*"),
            ("tasks.max", "4"),
            ("consumer.group.id", "mm2-grp"),
            ("producer.enable.idempotence", "true"),
            ("tpoics", "x"),
        ]);
        let f = read("mm2-source-connector", &c, &worker()).unwrap();
        assert_eq!(f.kind, Kind::Source);
        assert!(f.flow.enabled && !f.flow.heartbeats_enabled && !f.flow.checkpoints_run());
        assert_eq!((f.flow.source.as_str(), f.flow.target.as_str(), f.flow.tasks_max), ("A", "B", 4));
        assert!(f.flow.should_replicate_topic("orders.eu") && !f.flow.should_replicate_topic("payments"));
        assert_eq!(f.flow.consumer.file.get("group.id").map(|p| p.value.as_str()), Some("mm2-grp"));
        assert_eq!(f.flow.consumer.file.get("bootstrap.servers").map(|p| p.value.as_str()), Some("a:9092"));
        assert_eq!(f.flow.producer.file.get("bootstrap.servers").map(|p| p.value.as_str()), Some("t:9092"), "the worker's cluster");
        assert_eq!(f.flow.producer.file.get("linger.ms").map(|p| p.value.as_str()), Some("7"), "the worker's producer.*");
        assert!(f.warnings.iter().any(|w| w.contains("tpoics") && w.contains("Did you mean 'topics'")), "{:?}", f.warnings);
    }

    /// Connect's WorkerConfigTransformer: the worker's providers resolve the connector's references.
    #[test]
    fn the_workers_providers_resolve_the_connectors_references() {
        let dir = std::env::temp_dir().join(format!("mm-connect-providers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("c.properties"), "source.pw=from-file-42\n").unwrap();
        let text = "bootstrap.servers=t:9092\ngroup.id=g\nconfig.providers=file\n\
                    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n";
        let (w, warnings) =
            crate::front::providers::resolve_worker_file(crate::front::properties::parse(Path::new("worker.properties"), text.as_bytes()).unwrap()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let reference = format!("${{file:{}/c.properties:source.pw}}", dir.display());
        let base = [
            ("connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector"),
            ("source.cluster.alias", "A"),
            ("source.cluster.bootstrap.servers", "a:9092"),
            ("target.cluster.bootstrap.servers", "t:9092"),
        ];
        let mut c = config(&base);
        c.push(("source.cluster.ssl.truststore.password".into(), reference.clone()));
        let f = read("src", &c, &w).unwrap();
        let p = f.flow.consumer.file.get("ssl.truststore.password").unwrap_or_else(|| panic!("{:?}", f.flow.consumer.file.props));
        assert_eq!((p.value.as_str(), p.resolved.as_deref()), ("from-file-42", Some(reference.as_str())));
        // A missing key is named by the connector's key and the reference; the worker without providers refuses the reference.
        let mut c = config(&base);
        c.push(("source.cluster.ssl.truststore.password".into(), reference.replace("source.pw", "nope")));
        let e = read("src", &c, &w).unwrap_err().to_string();
        assert!(e.starts_with("connector 'src':5: source.cluster.ssl.truststore.password: ${file:") && e.contains("has no key 'nope'"), "{e}");
        let mut c = config(&base);
        c.push(("source.cluster.ssl.truststore.password".into(), reference));
        let e = read("src", &c, &worker()).unwrap_err().to_string();
        assert!(e.contains("no config provider 'file' is declared"), "{e}");
    }

    #[test]
    fn bad_configs_name_the_connector_key_and_fix() {
        let e = read("c", &config(&[("connector.class", "FileStreamSource")]), &worker()).unwrap_err().to_string();
        assert!(e.starts_with("connector 'c':1: connector.class='FileStreamSource' is not a connector") && e.contains(SOURCE_CLASS), "{e}");
        let e = read("c", &config(&[("connector.class", SOURCE_CLASS)]), &worker()).unwrap_err().to_string();
        assert!(e.contains("source.cluster.alias is missing"), "{e}");
        let e = read("c", &config(&[("connector.class", SOURCE_CLASS), ("source.cluster.alias", "A"), ("tasks.max", "four")]), &worker()).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tasks.max"), "{e}");
    }

    #[test]
    fn heartbeat_and_checkpoint_connectors_do_only_their_duty() {
        let base = [("source.cluster.alias", "A"), ("target.cluster.alias", "B")];
        let hb = read("h", &config(&[&[("connector.class", HEARTBEAT_CLASS)][..], &base].concat()), &worker()).unwrap();
        assert!(!hb.flow.enabled && hb.flow.heartbeats_enabled);
        let cp = read("c", &config(&[&[("connector.class", CHECKPOINT_CLASS)][..], &base].concat()), &worker()).unwrap();
        assert!(cp.flow.enabled && !cp.flow.heartbeats_enabled && cp.flow.checkpoints_run());
    }

    #[test]
    fn the_worker_file_is_typed_with_its_own_place() {
        let w = crate::front::properties::parse(Path::new("worker.properties"), b"group.id=g\noffset.flush.interval.ms=soon\n").unwrap();
        let e = worker_settings(&w).unwrap_err().to_string();
        assert!(e.starts_with("worker.properties:2: offset.flush.interval.ms='soon'"), "{e}");
    }
}
