//! How Java's driver turns the one MM2 file into each flow's connector
//! config and client configs (reference §1.3, §1.4), step for step, with
//! every value remembering the file line it came from.
//!
//! The steps are Java's `MirrorMakerConfig.clusterProps`,
//! `connectorBaseConfig` and `workerConfig`, then `MirrorConnectorConfig`'s
//! client builders and Connect's `Worker.baseProducerConfigs`. Their order
//! decides which of several lines wins, which is what users get wrong
//! (`A.topics` does nothing, top-level `consumer.*` is dropped), so they are
//! reproduced as written rather than summarised.

use std::collections::BTreeMap;

use super::client_props::{ClientDefault, ClientProps, DefaultKind};
use super::keys::{self, is_client_key, is_connector_key, WORKER_PREFIXES};
use super::raw::java_trim;
use crate::front::properties::{PropertiesFile, Property};

/// One assembled value: the raw text, and the line it came from (`None`:
/// set by the driver itself, such as `source.cluster.alias`).
#[derive(Debug, Clone)]
pub struct Val<'a> {
    pub value: String,
    pub from: Option<&'a Property>,
}

impl<'a> Val<'a> {
    fn of(p: &'a Property) -> Self {
        Val { value: p.value.clone(), from: Some(p) }
    }

    fn driver(value: impl Into<String>) -> Self {
        Val { value: value.into(), from: None }
    }
}

pub type Config<'a> = BTreeMap<String, Val<'a>>;

/// The file's keys with a prefix, the prefix stripped (`Utils.entriesWithPrefix`).
fn file_with_prefix<'a>(file: &'a PropertiesFile, prefix: &str) -> Vec<(String, Val<'a>)> {
    file.props.iter().filter_map(|p| p.key.strip_prefix(prefix).map(|rest| (rest.to_string(), Val::of(p)))).collect()
}

fn config_with_prefix<'a>(c: &Config<'a>, prefix: &str) -> Vec<(String, Val<'a>)> {
    c.iter().filter_map(|(k, v)| k.strip_prefix(prefix).map(|rest| (rest.to_string(), v.clone()))).collect()
}

/// `clientConfigsWithPrefix`'s test, the regex `(^consumer.*|^producer.*|^admin.*)`:
/// no dot needed, so `A.consumerfoo` counts too.
fn is_client_prefixed(key: &str) -> bool {
    key.starts_with("consumer") || key.starts_with("producer") || key.starts_with("admin")
}

/// `clusterProps(C)`: the `C.*` keys, and the client keys spread to each
/// client. `C.consumer.k` beats `C.k`, which beats top-level `k`.
pub fn cluster_props<'a>(file: &'a PropertiesFile, alias: &str) -> Config<'a> {
    let mut m: Config<'a> = file_with_prefix(file, &format!("{alias}.")).into_iter().collect();
    let spread: Vec<(String, Val<'a>)> = m.iter().filter(|(k, _)| is_client_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    for (k, v) in spread {
        for role in ["producer.", "consumer.", "admin."] {
            m.entry(format!("{role}{k}")).or_insert_with(|| v.clone());
        }
    }
    for p in file.props.iter().filter(|p| is_client_key(&p.key)) {
        for role in ["producer.", "consumer.", "admin.", ""] {
            m.entry(format!("{role}{}", p.key)).or_insert_with(|| Val::of(p));
        }
    }
    m
}

/// `connectorBaseConfig(S->T)`: the config every connector of the flow
/// gets. Later steps win; `S->T.*` wins over everything.
pub fn connector_config<'a>(file: &'a PropertiesFile, source: &str, target: &str) -> Config<'a> {
    let mut m: Config<'a> = file.props.iter().filter(|p| is_connector_key(&p.key)).map(|p| (p.key.clone(), Val::of(p))).collect();
    m.extend(
        file.props
            .iter()
            .filter(|p| p.key.starts_with(keys::CONFIG_PROVIDERS) || p.key.starts_with(keys::REPLICATION_POLICY_PREFIX))
            .map(|p| (p.key.clone(), Val::of(p))),
    );
    for (alias, side) in [(source, "source"), (target, "target")] {
        for (k, v) in cluster_props(file, alias) {
            let key = if is_client_prefixed(&k) { format!("{side}.{k}") } else { format!("{side}.cluster.{k}") };
            m.insert(key, v);
        }
    }
    m.entry(keys::NAME.into()).or_insert_with(|| Val::driver("MirrorSourceConnector"));
    m.entry(keys::CONNECTOR_CLASS.into()).or_insert_with(|| Val::driver("org.apache.kafka.connect.mirror.MirrorSourceConnector"));
    m.entry(keys::SOURCE_CLUSTER_ALIAS.name.into()).or_insert_with(|| Val::driver(source));
    m.entry(keys::TARGET_CLUSTER_ALIAS.name.into()).or_insert_with(|| Val::driver(target));
    let flow = format!("{source}->{target}.");
    m.extend(file_with_prefix(file, &flow));
    m.entry(keys::ENABLED.name.into()).or_insert_with(|| Val::driver("false"));
    m
}

/// `workerConfig(S->T)`: the Connect worker of the flow's herder, which
/// runs on the target: `clusterProps(T)`, then the top-level worker keys
/// (which win over `T.*`), then the driver's names for the group and its topics.
pub fn worker_config<'a>(file: &'a PropertiesFile, source: &str, target: &str) -> Config<'a> {
    let mut m = cluster_props(file, target);
    m.extend(file.props.iter().filter(|p| WORKER_PREFIXES.iter().any(|w| p.key.starts_with(w))).map(|p| (p.key.clone(), Val::of(p))));
    for (k, v) in [
        (keys::WORKER_CLIENT_ID.name, format!("{source}->{target}")),
        (keys::WORKER_GROUP_ID.name, format!("{source}-mm2")),
        (keys::OFFSET_STORAGE_TOPIC.name, format!("mm2-offsets.{source}.internal")),
        (keys::STATUS_STORAGE_TOPIC.name, format!("mm2-status.{source}.internal")),
        (keys::CONFIG_STORAGE_TOPIC.name, format!("mm2-configs.{source}.internal")),
    ] {
        m.entry(k.into()).or_insert_with(|| Val::driver(v));
    }
    m
}

/// The client sides and roles of `MirrorConnectorConfig`'s builders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Source,
    Target,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "target",
        }
    }
}

/// `{source|target}{Consumer|Producer|Admin}Config`: the side's cluster
/// client keys, then `<role>.*` (from `S->T.<role>.*`), then
/// `<side>.<role>.*` (from `C.<role>.*`, `C.k`, top-level `k`, or
/// `S->T.<side>.<role>.*`). Keys that are the connector's own
/// (`consumer.poll.timeout.ms`, `admin.timeout.ms`) or Connect's overrides
/// (`producer.override.*`) also start with a role prefix; Java passes them
/// on and the client ignores them as unknown, so they are left out.
pub fn client_config<'a>(cc: &Config<'a>, side: Side, role: &str) -> Config<'a> {
    let mut m: Config<'a> = config_with_prefix(cc, &format!("{}.cluster.", side.name())).into_iter().filter(|(k, _)| is_client_key(k)).collect();
    m.extend(config_with_prefix(cc, &format!("{role}.")));
    m.extend(config_with_prefix(cc, &format!("{}.{role}.", side.name())));
    m.retain(|k, _| !is_connector_key(&format!("{role}.{k}")) && !k.starts_with("override."));
    m
}

/// Connect's data producer for the flow (`Worker.baseProducerConfigs`):
/// the worker's bootstrap, then the worker's `producer.*` (`T.producer.*`
/// and T's client keys), then the connector's `producer.override.*`
/// (`S->T.producer.override.*`).
pub fn data_producer_config<'a>(worker: &Config<'a>, cc: &Config<'a>) -> Config<'a> {
    let mut m = Config::new();
    if let Some(v) = worker.get(keys::BOOTSTRAP_SERVERS) {
        m.insert(keys::BOOTSTRAP_SERVERS.into(), v.clone());
    }
    // `T.producer.override.x` reaches the worker as `producer.override.x`, i.e. `override.x`: no producer key.
    m.extend(config_with_prefix(worker, "producer.").into_iter().filter(|(k, _)| !k.starts_with("override.")));
    m.extend(config_with_prefix(cc, "producer.override."));
    m
}

/// A client's assembled config as a properties file of the MM2 file: each
/// line the MM2 line its value came from, values trimmed as the Java
/// clients' ConfigDef trims them. Forced defaults replace what the file
/// says (as Java's `put` does); `client.id`s keep the user's value as a
/// prefix, as `addClientId` does.
pub fn client_props(path: &std::path::Path, mut m: Config<'_>, mut defaults: Vec<ClientDefault>, notes: &mut Vec<String>) -> ClientProps {
    for d in defaults.iter_mut() {
        if d.kind != DefaultKind::Forced {
            continue;
        }
        let Some(v) = m.remove(d.key) else { continue };
        let value = java_trim(&v.value);
        if d.key == keys::CLIENT_ID {
            d.value = format!("{value}|{}", d.value);
            if let Some(p) = v.from {
                notes.push(format!("{}:{}: {}={value}: the client's id is {}, as Java's addClientId makes it", path.display(), p.line, p.key, d.value));
            }
        } else if let Some(p) = v.from.filter(|_| !value.eq_ignore_ascii_case(&d.value)) {
            notes.push(format!(
                "{}:{}: {}={} is replaced by {}={}, as Java MirrorMaker 2 does: {}",
                path.display(),
                p.line,
                p.key,
                value,
                d.key,
                d.value,
                d.why
            ));
        }
    }
    let props: Vec<Property> = m
        .into_iter()
        .map(|(key, v)| Property {
            key,
            value: java_trim(&v.value).to_string(),
            line: v.from.map_or(0, |p| p.line),
            resolved: v.from.and_then(|p| p.resolved.clone()),
        })
        .collect();
    let defaults = defaults.into_iter().filter(|d| d.kind == DefaultKind::Forced || !props_has(&props, d.key)).collect();
    ClientProps { file: PropertiesFile { path: path.to_path_buf(), props }, defaults }
}

fn props_has(props: &[Property], key: &str) -> bool {
    props.iter().any(|p| p.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file(text: &str) -> PropertiesFile {
        super::super::raw::read(Path::new("mm2.properties"), text.as_bytes()).unwrap().0
    }

    fn get<'a>(c: &'a Config<'_>, k: &str) -> Option<&'a str> {
        c.get(k).map(|v| v.value.as_str())
    }

    // §1.3: `C.consumer.k` beats `C.k`, which beats top-level `k`.
    #[test]
    fn client_keys_spread_per_cluster() {
        let f = file("security.protocol=SSL\nA.security.protocol=SASL_SSL\nA.consumer.security.protocol=PLAINTEXT\nA.bootstrap.servers=a:9092\n");
        let a = cluster_props(&f, "A");
        assert_eq!(get(&a, "consumer.security.protocol"), Some("PLAINTEXT"));
        assert_eq!(get(&a, "producer.security.protocol"), Some("SASL_SSL"));
        assert_eq!(get(&a, "security.protocol"), Some("SASL_SSL"));
        assert_eq!(get(&a, "admin.bootstrap.servers"), Some("a:9092"));
        let b = cluster_props(&f, "B");
        assert_eq!(get(&b, "security.protocol"), Some("SSL"));
        assert_eq!(get(&b, "consumer.security.protocol"), Some("SSL"));
        assert_eq!(get(&b, "bootstrap.servers"), None);
    }

    // §1.3 steps 1-7 and the "what follows for users" bullets.
    #[test]
    fn connector_config_precedence() {
        let f = file(
            "clusters=A,B\ntopics=t.*\nA.topics=ignored\nconsumer.max.poll.records=7\nA->B.topics=x\nA->B.source.cluster.bootstrap.servers=over:1\n\
             A.bootstrap.servers=a:1\nB.bootstrap.servers=b:1\ntasks.max=4\nreplication.policy.separator=_\nfoo=bar\n",
        );
        let cc = connector_config(&f, "A", "B");
        assert_eq!(get(&cc, "topics"), Some("x"));
        assert_eq!(get(&cc, "source.cluster.topics"), Some("ignored"));
        assert_eq!(get(&cc, "source.cluster.bootstrap.servers"), Some("over:1"));
        assert_eq!(get(&cc, "target.cluster.bootstrap.servers"), Some("b:1"));
        assert_eq!(get(&cc, "tasks.max"), Some("4"));
        assert_eq!(get(&cc, "replication.policy.separator"), Some("_"));
        assert_eq!(get(&cc, "consumer.max.poll.records"), None, "top-level consumer.* is dropped");
        assert_eq!(get(&cc, "foo"), None);
        assert_eq!(get(&cc, "enabled"), Some("false"));
        assert!(cc["enabled"].from.is_none());
        assert_eq!(get(&cc, "source.cluster.alias"), Some("A"));
        assert_eq!(get(&cc, "target.cluster.alias"), Some("B"));
        let other = connector_config(&f, "B", "A");
        assert_eq!(get(&other, "topics"), Some("t.*"));
        assert_eq!(get(&other, "source.cluster.bootstrap.servers"), Some("b:1"));
    }

    // §1.4: each builder's layers.
    #[test]
    fn client_layers() {
        let f = file(
            "A.bootstrap.servers=a:1\nA.consumer.fetch.min.bytes=5\nA->B.consumer.fetch.min.bytes=6\nA->B.consumer.max.poll.records=9\n\
             consumer.poll.timeout.ms=100\nA.client.id=ignored\nB.bootstrap.servers=b:1\nB.producer.linger.ms=3\nA->B.producer.override.linger.ms=4\n\
             B.producer.override.batch.size=1\nA->B.producer.acks=1\nA->B.source.consumer.isolation.level=read_committed\n",
        );
        let cc = connector_config(&f, "A", "B");
        let consumer = client_config(&cc, Side::Source, "consumer");
        assert_eq!(get(&consumer, "bootstrap.servers"), Some("a:1"));
        assert_eq!(get(&consumer, "fetch.min.bytes"), Some("5"), "source.consumer.* (A.consumer.*) beats consumer.* (A->B.consumer.*)");
        assert_eq!(get(&consumer, "max.poll.records"), Some("9"));
        assert_eq!(get(&consumer, "isolation.level"), Some("read_committed"));
        assert_eq!(get(&consumer, "poll.timeout.ms"), None);
        assert_eq!(get(&consumer, "client.id"), None, "A.client.id is a worker key, not a client key");
        let target_consumer = client_config(&cc, Side::Target, "consumer");
        assert_eq!(get(&target_consumer, "max.poll.records"), Some("9"), "consumer.* reaches both sides");
        assert_eq!(get(&target_consumer, "bootstrap.servers"), Some("b:1"));
        let data = data_producer_config(&worker_config(&f, "A", "B"), &cc);
        assert_eq!(get(&data, "bootstrap.servers"), Some("b:1"));
        assert_eq!(get(&data, "linger.ms"), Some("4"));
        assert_eq!(get(&data, "acks"), None, "S->T.producer.* tunes the offset-syncs producer only");
        assert_eq!(get(&data, "override.batch.size"), None);
        let syncs = client_config(&cc, Side::Source, "producer");
        assert_eq!(get(&syncs, "acks"), Some("1"));
        assert_eq!(get(&syncs, "bootstrap.servers"), Some("a:1"));
        assert_eq!(get(&syncs, "override.linger.ms"), None);
    }

    #[test]
    fn forced_defaults_replace_and_client_ids_keep_the_users_prefix() {
        let f = file("A.consumer.enable.auto.commit=true\nA.consumer.client.id=mine\nA.consumer.auto.offset.reset=latest\n");
        let cc = connector_config(&f, "A", "B");
        let mut notes = Vec::new();
        let d = |key, value: &str, kind| ClientDefault { key, value: value.into(), kind, why: "test" };
        let defaults = vec![
            d("enable.auto.commit", "false", DefaultKind::Forced),
            d("auto.offset.reset", "earliest", DefaultKind::IfAbsent),
            d("client.id", "A->B|x", DefaultKind::Forced),
        ];
        let c = client_props(Path::new("mm2.properties"), client_config(&cc, Side::Source, "consumer"), defaults, &mut notes);
        assert_eq!(c.file.get("auto.offset.reset").unwrap().value, "latest");
        assert_eq!(c.file.get("auto.offset.reset").unwrap().line, 3);
        assert!(c.file.get("enable.auto.commit").is_none() && c.file.get("client.id").is_none());
        let keys: Vec<_> = c.defaults.iter().map(|d| (d.key, d.value.as_str())).collect();
        assert_eq!(keys, [("enable.auto.commit", "false"), ("client.id", "mine|A->B|x")]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].starts_with("mm2.properties:2: A.consumer.client.id=mine: the client's id is mine|A->B|x"), "{}", notes[1]);
        assert!(notes[0].starts_with("mm2.properties:1: A.consumer.enable.auto.commit=true is replaced by enable.auto.commit=false"), "{}", notes[0]);
    }
}
