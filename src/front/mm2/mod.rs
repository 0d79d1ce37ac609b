//! The MirrorMaker 2 front-end: a `connect-mirror-maker.properties` file
//! read as Java's dedicated mode reads it, turned into flows.
//!
//! [`load`]/[`parse`] give an [`Mm2Config`]: the clusters, and per herder
//! pair of Java's `clusterPairs()` a [`Flow`] with its replication policy,
//! topic and group filters, every connector setting typed (reference §1.6)
//! and the effective Java client properties of each of its clients
//! (§1.3, §1.4) as properties files of the MM2 file, each line the MM2 line
//! the value came from, so that the client-key translation names the MM2
//! file:line in its messages. Nothing here touches the network.
//!
//! Submodules: [`raw`] reads the file untrimmed, [`keys`] holds Java's key
//! tables, [`assemble`] reproduces the driver's assembly, [`settings`]
//! types the connector keys, [`lint`] names the problems Java keeps quiet
//! about. [`client_props`](mod@client_props) (a client's properties and Java's defaults) and
//! [`messages`] (the warnings and notes) are leaves, below `mod.rs` and the
//! submodules alike, so no submodule imports this file.

mod assemble;
pub mod check;
mod client_props;
pub mod connector;
pub mod keys;
mod lint;
mod messages;
pub mod plan;
pub(crate) mod raw;
pub mod settings;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use assemble::{client_config, client_props, connector_config, data_producer_config, worker_config, Config, Side};
pub use client_props::{ClientDefault, ClientProps, DefaultKind};
pub(crate) use messages::Messages;
use raw::{java_trim, parse_boolean, parse_list};
pub use settings::{DefaultsFrom, FlowSettings, IncrementalAlterConfigs, Location, Periodic, SettingOrigin, WorkerSettings};

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::plan::policy::{self, NameFilter, PolicyKind, ReplicationPolicy};

/// What a `connect-mirror-maker.properties` file asks for.
#[derive(Debug, Clone)]
pub struct Mm2Config {
    pub path: PathBuf,
    /// The clusters some flow reads or writes, in the order of `clusters`.
    pub clusters: Vec<Cluster>,
    /// Java's herders (`clusterPairs()`), restricted by `--clusters`.
    pub flows: Vec<Flow>,
    pub warnings: Vec<String>,
    pub notices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub alias: String,
    /// `<alias>.bootstrap.servers` (or the top-level one), comma-joined.
    pub bootstrap: String,
    /// The line it came from.
    pub line: usize,
}

/// One herder of Java's dedicated mode: source → target.
///
/// Java creates a herder for every pair that is enabled *or* emits
/// heartbeats, so with `clusters = A, B` and only `A->B.enabled = true`
/// there is also a B→A flow with `enabled == false` that only writes
/// heartbeats {B→A} into A (from where A→B replicates them to B as
/// `A.heartbeats`).
#[derive(Debug, Clone)]
pub struct Flow {
    pub source: String,
    pub target: String,
    /// The source and checkpoint connectors do their work.
    pub enabled: bool,
    /// The heartbeat connector emits (it ignores `enabled`).
    pub heartbeats_enabled: bool,
    /// The replication consumer on the source (`replication-consumer`); also
    /// the offset-syncs reader when the topic is on the source.
    pub consumer: ClientProps,
    /// Connect's producer of the replicated records, on the target.
    pub producer: ClientProps,
    pub source_admin: ClientProps,
    pub target_admin: ClientProps,
    /// The offset-syncs producer when `offset-syncs.topic.location=source`.
    pub source_producer: ClientProps,
    /// The offset-syncs producer when `offset-syncs.topic.location=target`.
    pub target_producer: ClientProps,
    /// The checkpoints-topic reader; also the offset-syncs reader when the topic is on the target.
    pub target_consumer: ClientProps,
    pub policy: ReplicationPolicy,
    pub topics: NameFilter,
    pub groups: NameFilter,
    pub tasks_max: usize,
    /// The file enables the reverse flow (target->source), whether or not
    /// `--clusters` keeps it in this process: active/active deployments
    /// often run one process per target cluster from one file.
    pub reverse_enabled: bool,
    pub settings: FlowSettings,
    /// The settings of the Connect worker Java runs for this flow on the target.
    pub worker: WorkerSettings,
    /// Every connector and worker setting's effective value and where it came from, for `--check-config`.
    pub origins: Vec<SettingOrigin>,
}

impl Flow {
    pub fn name(&self) -> String {
        format!("{}->{}", self.source, self.target)
    }

    /// `MirrorSourceConnector.shouldReplicateTopic` (reference §2.4).
    pub fn should_replicate_topic(&self, topic: &str) -> bool {
        self.enabled && policy::should_replicate_topic(&self.policy, &self.topics, &self.target, topic)
    }

    /// The target name of a replicated source topic.
    pub fn remote_topic(&self, topic: &str) -> String {
        self.policy.format_remote_topic(&self.source, topic)
    }

    /// Whether the checkpoint connector runs: Java 3.9 refuses its config
    /// when checkpoints or offset-syncs are turned off.
    pub fn checkpoints_run(&self) -> bool {
        self.enabled && self.settings.emit_checkpoints.interval().is_some() && self.settings.emit_offset_syncs_enabled
    }

    /// Group offsets are written to the target only by the checkpoint task.
    pub fn syncs_group_offsets(&self) -> bool {
        self.checkpoints_run() && self.settings.sync_group_offsets.interval().is_some()
    }

    /// `DefaultGroupFilter` (reference §2.6); the topic check is separate.
    pub fn should_checkpoint_group(&self, group: &str) -> bool {
        self.groups.matches(group)
    }

    /// The offset-syncs topic: on the source named after the target, or the reverse.
    pub fn offset_syncs_topic(&self) -> String {
        match self.settings.offset_syncs_topic_location {
            Location::Source => self.policy.offset_syncs_topic(&self.target),
            Location::Target => self.policy.offset_syncs_topic(&self.source),
        }
    }

    pub fn offset_syncs_producer(&self) -> &ClientProps {
        match self.settings.offset_syncs_topic_location {
            Location::Source => &self.source_producer,
            Location::Target => &self.target_producer,
        }
    }

    /// Java's `offsetSyncsTopicAdminConfig`: the admin client of the
    /// cluster that holds the offset-syncs topic.
    pub fn offset_syncs_admin(&self) -> &ClientProps {
        match self.settings.offset_syncs_topic_location {
            Location::Source => &self.source_admin,
            Location::Target => &self.target_admin,
        }
    }

    /// Java's `offset-syncs-{source,target}-consumer`: the same properties as
    /// the side's other consumer, under another `client.id` role.
    pub fn offset_syncs_consumer(&self) -> &ClientProps {
        match self.settings.offset_syncs_topic_location {
            Location::Source => &self.consumer,
            Location::Target => &self.target_consumer,
        }
    }
}

pub fn load(path: &Path, clusters: &[String]) -> Result<Mm2Config, ConfigError> {
    let bytes = std::fs::read(path).map_err(|e| ConfigError::new(format!("cannot read MirrorMaker 2 properties file {}: {e}", path.display())))?;
    parse(path, &bytes, clusters)
}

/// Reads an MM2 file; `clusters` is `--clusters` (empty: every cluster),
/// which keeps only the flows whose target it lists.
pub fn parse(path: &Path, bytes: &[u8], clusters: &[String]) -> Result<Mm2Config, ConfigError> {
    let (file, repeats) = raw::read(path, bytes)?;
    // Java's MirrorMakerConfig resolves the top level's providers in every
    // key, prefixed or not, before reading any; values stay raw (untrimmed)
    // as the rest of this reader expects.
    let (file, provider_warnings) = crate::front::providers::resolve_file(file, false)?;
    let mut msgs = Messages { warnings: provider_warnings, notices: repeats };
    let aliases = aliases(&file)?;
    lint::check(&file, &aliases, &mut msgs)?;
    let pairs = herders(&file, &aliases, &mut msgs)?;
    let pairs = restrict(&file, &aliases, pairs, clusters, &mut msgs)?;
    let mut flows = Vec::new();
    for (s, t) in &pairs {
        let mut f = flow(&file, s, t, &mut msgs)?;
        // From the whole file, not the pairs --clusters kept.
        f.reverse_enabled = file.get(&format!("{t}->{s}.{}", keys::ENABLED.name)).is_some_and(|p| parse_boolean(&p.value));
        flows.push(f);
    }
    let used: Vec<&String> = aliases.iter().filter(|a| flows.iter().any(|f| &f.source == *a || &f.target == *a)).collect();
    let clusters = used.into_iter().map(|a| cluster(&file, a)).collect::<Result<Vec<_>, _>>()?;
    check_topology(&file, &clusters, &flows, &mut msgs)?;
    Ok(Mm2Config { path: path.to_path_buf(), clusters, flows, warnings: msgs.warnings, notices: msgs.notices })
}

/// `clusters`: required, a LIST; Java keeps a set, we keep the file's order.
fn aliases(file: &PropertiesFile) -> Result<Vec<String>, ConfigError> {
    let Some(p) = file.get(keys::CLUSTERS) else {
        return Err(ConfigError::in_file(
            &file.path,
            "clusters is missing; Java requires it. Name the clusters and give each its brokers, e.g. 'clusters = A, B', \
             'A.bootstrap.servers = a1:9092', 'B.bootstrap.servers = b1:9092', 'A->B.enabled = true'",
        )
        .with_key(keys::CLUSTERS));
    };
    let mut out: Vec<String> = Vec::new();
    for alias in parse_list(&p.value) {
        if alias.is_empty() {
            return Err(
                ConfigError::at(file, p, format!("clusters='{}' has an empty alias (a doubled or trailing comma)", java_trim(&p.value))).with_fix("remove it")
            );
        }
        if alias.contains(['#', ' ', '\t']) {
            let hint = if alias.contains('#') { "; '#' starts a comment only at the beginning of a line, so move the comment to its own line" } else { "" };
            return Err(ConfigError::at(file, p, format!("cluster alias '{alias}' contains a space or '#'{hint}")));
        }
        if alias.contains("->") {
            return Err(ConfigError::at(file, p, format!("cluster alias '{alias}' contains '->', which Java's flow keys (A->B.enabled) cannot tell apart")));
        }
        if !out.contains(&alias) {
            out.push(alias);
        }
    }
    Ok(out)
}

/// `clusterPairs()`: a herder per ordered pair that is enabled or emits
/// heartbeats, both read with `Boolean.parseBoolean` (untrimmed).
fn herders(file: &PropertiesFile, aliases: &[String], msgs: &mut Messages) -> Result<Vec<(String, String)>, ConfigError> {
    let global_hb = file.get(keys::EMIT_HEARTBEATS_ENABLED.name);
    let mut pairs = Vec::new();
    for s in aliases {
        for t in aliases.iter().filter(|t| *t != s) {
            let enabled = file.get(&format!("{s}->{t}.{}", keys::ENABLED.name));
            let hb = file.get(&format!("{s}->{t}.{}", keys::EMIT_HEARTBEATS_ENABLED.name)).or(global_hb);
            for p in [enabled, hb].into_iter().flatten() {
                strict_boolean(file, p)?;
                raw_boolean_warning(file, p, msgs);
            }
            if enabled.is_some_and(|p| parse_boolean(&p.value)) || hb.is_none_or(|p| parse_boolean(&p.value)) {
                pairs.push((s.clone(), t.clone()));
            }
        }
    }
    Ok(pairs)
}

/// A flag that decides whether a herder exists is checked even where Java,
/// having created no herder, never validates it: `A->B.enabled = yes`
/// would otherwise turn off a flow without a word.
fn strict_boolean(file: &PropertiesFile, p: &Property) -> Result<(), ConfigError> {
    let v = java_trim(&p.value);
    if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
        return Ok(());
    }
    Err(ConfigError::at(
        file,
        p,
        format!("{}='{}' must be true or false: Java reads anything else as false here and refuses it in the connectors", p.key, p.value),
    ))
}

/// Java reads these raw in `clusterPairs()` but trimmed in the connectors:
/// `true␠` creates no herder of its own, yet counts as true where one exists.
fn raw_boolean_warning(file: &PropertiesFile, p: &Property, msgs: &mut Messages) {
    if parse_boolean(&p.value) || !java_trim(&p.value).eq_ignore_ascii_case("true") {
        return;
    }
    msgs.warn(format!(
        "{}: {}='{}' ends in whitespace: Java's clusterPairs() reads it with Boolean.parseBoolean, untrimmed, as false (no herder of its own), \
         while the connectors read it trimmed, as true; this mirror follows Java. Remove the trailing whitespace",
        file.at(p),
        p.key,
        p.value
    ));
}

/// `--clusters`: only flows into the listed clusters run.
fn restrict(
    file: &PropertiesFile,
    aliases: &[String],
    pairs: Vec<(String, String)>,
    only: &[String],
    msgs: &mut Messages,
) -> Result<Vec<(String, String)>, ConfigError> {
    for c in only.iter().filter(|c| !aliases.contains(c)) {
        msgs.warn(format!("--clusters {c}: not an alias of clusters ({}) in {}; Java ignores it", aliases.join(", "), file.path.display()));
    }
    let kept: Vec<_> = pairs.iter().filter(|(_, t)| only.is_empty() || only.contains(t)).cloned().collect();
    if !kept.is_empty() {
        return Ok(kept);
    }
    let why = if aliases.len() < 2 {
        format!("clusters lists {} alias(es) ({}); a flow needs two. Add the other cluster and set e.g. A->B.enabled = true", aliases.len(), aliases.join(", "))
    } else if pairs.is_empty() {
        "no pair has <source>-><target>.enabled = true, and with emit.heartbeats.enabled = false there are no heartbeat-only flows either. \
         Set e.g. A->B.enabled = true"
            .to_string()
    } else {
        let into: Vec<_> = pairs.iter().map(|(_, t)| t.as_str()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        format!(
            "--clusters {} keeps only flows into those clusters and none exists; flows exist into {}. Name one of those, or enable a flow into {} \
             (<source>->{}.enabled = true)",
            only.join(" "),
            into.join(", "),
            only.join(", "),
            only[0]
        )
    };
    Err(ConfigError::in_file(&file.path, format!("no source->target replication flow to run: {why}")))
}

fn cluster(file: &PropertiesFile, alias: &str) -> Result<Cluster, ConfigError> {
    let props = assemble::cluster_props(file, alias);
    let Some(v) = props.get(keys::BOOTSTRAP_SERVERS) else {
        return Err(ConfigError::in_file(
            &file.path,
            format!("{alias}.bootstrap.servers is missing; every cluster a flow uses needs its brokers: add '{alias}.bootstrap.servers = host:port'"),
        )
        .with_key(format!("{alias}.bootstrap.servers")));
    };
    let list = parse_list(&v.value);
    let p = v.from.expect("bootstrap.servers comes from the file");
    if list.iter().all(String::is_empty) {
        return Err(ConfigError::at(file, p, format!("{} is empty", p.key)).with_fix("give the brokers as host:port,host:port"));
    }
    Ok(Cluster { alias: alias.to_string(), bootstrap: list.join(","), line: p.line })
}

/// Errors and warnings about the flows as a whole.
fn check_topology(file: &PropertiesFile, clusters: &[Cluster], flows: &[Flow], msgs: &mut Messages) -> Result<(), ConfigError> {
    let servers = |alias: &str| {
        let mut v: Vec<String> = clusters.iter().find(|c| c.alias == alias).map_or("", |c| &c.bootstrap).split(',').map(|s| s.to_ascii_lowercase()).collect();
        v.sort();
        v
    };
    for f in flows.iter().filter(|f| f.enabled) {
        if servers(&f.source) == servers(&f.target) {
            return Err(ConfigError::in_file(
                &file.path,
                format!(
                    "{} and {} have the same bootstrap.servers: flow {} would replicate the cluster into itself, renaming topics again on \
                 every pass ({}.{}.topic, ...). Point one alias at the other cluster",
                    f.source,
                    f.target,
                    f.name(),
                    f.source,
                    f.source
                ),
            ));
        }
        if f.reverse_enabled && f.policy.kind == PolicyKind::Identity {
            let here = flows.iter().any(|b| b.enabled && b.source == f.target && b.target == f.source);
            if here && f.source > f.target {
                continue; // Said once per pair.
            }
            msgs.note(format!(
                "{}: {} and its reverse both run with IdentityReplicationPolicy, which keeps topic names, so the names cannot tell a copied \
                 record from an original (Java MM2 copies every record back and forth forever). Here every copied record carries the header \
                 mirror-maker.source-cluster and is never copied back to the cluster it came from; {}",
                file.path.display(),
                f.name(),
                if here {
                    "both directions run in this process".to_string()
                } else {
                    format!(
                        "the reverse flow {}->{} runs elsewhere (--clusters): run it with mirror-maker and this file too, as Java MM2 neither \
                         writes nor reads the header",
                        f.target, f.source
                    )
                }
            ));
        }
    }
    for f in flows.iter().filter(|f| !f.enabled) {
        msgs.note(format!(
            "flow {}: not enabled; {}",
            f.name(),
            if f.heartbeats_enabled {
                format!("only heartbeats are written to {}'s heartbeats topic (as Java's herder for this pair does)", f.target)
            } else {
                "nothing but the heartbeats topic's creation (Java's herder exists for this pair)".to_string()
            }
        ));
    }
    if !flows.iter().any(|f| f.enabled) {
        msgs.warn(format!("{}: no flow is enabled, so nothing is replicated (only heartbeats); set <source>-><target>.enabled = true", file.path.display()));
    }
    Ok(())
}

/// One flow: its connector config typed, its policy, filters and clients.
fn flow(file: &PropertiesFile, s: &str, t: &str, msgs: &mut Messages) -> Result<Flow, ConfigError> {
    let mut f = flow_of(file, &connector_config(file, s, t), &worker_config(file, s, t), s, t, msgs)?;
    own_group(file, &mut f, msgs);
    Ok(f)
}

/// In an MM2 file every flow commits its progress on the source under a
/// group of its own (`plan::group_id`, `mm2.A->B`), whatever the file
/// says: one `A.consumer.group.id` shared by A->B and A->C would make the
/// two flows split A's partitions, each copying only part of them. Java
/// MM2 does not use the setting for mirroring either (its tasks assign
/// partitions and keep positions in Connect's offsets topic), so it is
/// dropped with a word. A Connect connector's `consumer.group.id` keeps its
/// meaning (one connector is one flow): `connector` builds its own flows.
fn own_group(file: &PropertiesFile, f: &mut Flow, msgs: &mut Messages) {
    let Some(i) = f.consumer.file.props.iter().position(|p| p.key == keys::GROUP_ID) else { return };
    let p = f.consumer.file.props.remove(i);
    // `A.group.id` is a worker key (the herder's group) that also reaches
    // the cluster's clients: dropped here without a word, as it has one.
    let Some(q) = file.props.iter().find(|q| q.line == p.line && q.key.ends_with("consumer.group.id")) else { return };
    msgs.warn(format!(
        "{}: {}={} is not used: each flow commits its progress on the source under a group of its own (mm2.<source>-><target>), so \
         that flows out of one cluster (A->B, A->C) each copy every partition; Java MM2 does not use it for mirroring \
         either (positions a mirror-maker before this version committed under it are not read: the flow continues from its own group, \
         or from Java MM2's positions). Remove the line",
        file.at(q),
        q.key,
        java_trim(&q.value),
    ));
}

/// A flow from its connector config `cc` (of `file`) and its worker's
/// config: the MM2 file's assembly, or a Connect connector's own config
/// (`connector`).
fn flow_of(file: &PropertiesFile, cc: &Config<'_>, worker_cfg: &Config<'_>, s: &str, t: &str, msgs: &mut Messages) -> Result<Flow, ConfigError> {
    let cc = cc.clone();
    let mut r = settings::Reader::new(&cc, &file.path);
    let settings = settings::read(&mut r)?;
    let policy = policy_of(file, &cc, &mut r, &settings.replication_policy_class, s, msgs)?;
    let (mut origins, warnings) = (r.origins, r.warnings);
    warnings.into_iter().for_each(|w| msgs.warn(w));
    for (def, class) in [
        (keys::TOPIC_FILTER_CLASS, &settings.topic_filter_class),
        (keys::GROUP_FILTER_CLASS, &settings.group_filter_class),
        (keys::CONFIG_PROPERTY_FILTER_CLASS, &settings.config_property_filter_class),
        (keys::FORWARDING_ADMIN_CLASS, &settings.forwarding_admin_class),
    ] {
        let (key, default) = (def.name, def.default.unwrap_or_default());
        if class != default {
            return Err(error_of(file, &cc, key, format!("{key}={class}: custom Java classes cannot be loaded here"))
                .with_fix(format!("remove the line to use {default}")));
        }
    }
    let filter = |inc: &[String], exc: &[String], keys: [&str; 2]| {
        // Two keys, each with its own place: the text names both.
        NameFilter::new(inc, exc).map_err(|e| ConfigError::new(format!("{} / {}: {e}", at_of(file, &cc, keys[0]), at_of(file, &cc, keys[1]))).with_key(keys[0]))
    };
    let topics = filter(&settings.topics, &settings.topics_exclude, [keys::TOPICS.name, keys::TOPICS_EXCLUDE.name])?;
    let groups = filter(&settings.groups, &settings.groups_exclude, [keys::GROUPS.name, keys::GROUPS_EXCLUDE.name])?;
    let mut wr = settings::Reader::new(worker_cfg, &file.path);
    let worker = settings::read_worker(&mut wr)?;
    origins.extend(wr.origins);
    origins.push(SettingOrigin { key: "(remote topic name)".into(), value: policy.format_remote_topic(s, "<topic>"), origin: "replication policy".into() });
    let clients = clients(file, &cc, worker_cfg, s, t, msgs);
    Ok(Flow {
        source: s.to_string(),
        target: t.to_string(),
        enabled: settings.enabled,
        heartbeats_enabled: settings.emit_heartbeats.interval().is_some(),
        consumer: clients.consumer,
        producer: clients.producer,
        source_admin: clients.source_admin,
        target_admin: clients.target_admin,
        source_producer: clients.source_producer,
        target_producer: clients.target_producer,
        target_consumer: clients.target_consumer,
        policy,
        topics,
        groups,
        tasks_max: settings.tasks_max as usize,
        reverse_enabled: false,
        settings,
        worker,
        origins,
    })
}

/// `file:line: key` of a connector key of the flow, or "default key".
/// An error of `key` in a flow's connector config, placed as [`at_of`] places it.
fn error_of(file: &PropertiesFile, cc: &Config<'_>, key: &str, problem: String) -> ConfigError {
    match cc.get(key).and_then(|v| v.from) {
        Some(p) => ConfigError::at(file, p, format!("{}: {problem}", p.key)),
        None => ConfigError::in_file(&file.path, format!("default {key}: {problem}")).with_key(key),
    }
}

fn at_of(file: &PropertiesFile, cc: &Config<'_>, key: &str) -> String {
    match cc.get(key).and_then(|v| v.from) {
        Some(p) => format!("{}: {}", file.at(p), p.key),
        None => format!("{}: default {key}", file.path.display()),
    }
}

/// The flow's policy, configured as `DefaultReplicationPolicy.configure`
/// does from the connector's raw originals.
fn policy_of(
    file: &PropertiesFile,
    cc: &Config<'_>,
    r: &mut settings::Reader<'_, '_>,
    class: &str,
    source: &str,
    msgs: &mut Messages,
) -> Result<ReplicationPolicy, ConfigError> {
    let kind = PolicyKind::from_class(class).map_err(|e| error_of(file, cc, keys::REPLICATION_POLICY_CLASS.name, e.to_string()))?;
    let sep = cc.get(keys::REPLICATION_POLICY_SEPARATOR.name);
    if let Some(p) = sep.and_then(|v| v.from) {
        if p.value.is_empty() {
            return Err(ConfigError::at(
                file,
                p,
                format!("{} is empty: remote topics would be named <alias><topic> and could not be told apart; write '.' (the default) or e.g. '_'", p.key),
            ));
        }
        if java_trim(&p.value) != p.value {
            msgs.warn(format!(
                "{}: {}='{}' ends in whitespace, and Java uses the separator untrimmed: remote topics are named '{source}{}orders'",
                file.at(p),
                p.key,
                p.value,
                p.value
            ));
        }
    }
    let internal_def = &keys::REPLICATION_POLICY_INTERNAL_TOPIC_SEPARATOR_ENABLED;
    let strict = r.bool(internal_def)?;
    let internal = r.raw(internal_def).map(|v| parse_boolean(&v.value));
    if let (Some(false), true, Some(p)) = (internal, strict, r.raw(internal_def).and_then(|v| v.from)) {
        msgs.warn(format!(
            "{}: {}='{}' ends in whitespace: the policy reads it with Boolean.parseBoolean, untrimmed, as false (dotted internal topic names), as Java does",
            file.at(p),
            p.key,
            p.value
        ));
    }
    let alias = cc.get(keys::SOURCE_CLUSTER_ALIAS.name).map(|v| v.value.as_str());
    Ok(ReplicationPolicy::configure(kind, sep.map(|v| v.value.as_str()), internal, alias))
}

struct Clients {
    consumer: ClientProps,
    producer: ClientProps,
    source_admin: ClientProps,
    target_admin: ClientProps,
    source_producer: ClientProps,
    target_producer: ClientProps,
    target_consumer: ClientProps,
}

/// Every client of the flow with the settings Java adds (§1.4).
fn clients(file: &PropertiesFile, cc: &Config<'_>, worker_cfg: &Config<'_>, s: &str, t: &str, msgs: &mut Messages) -> Clients {
    let id = |connector: &str, role: &str| ClientDefault {
        key: keys::CLIENT_ID,
        value: format!("{s}->{t}|{connector}|{role}"),
        kind: DefaultKind::Forced,
        why: "MirrorMaker 2 names each client by flow, connector and role (KAFKA-14838), after the file's client.id",
    };
    let consumer_defaults = |connector: &str, role: &str| {
        vec![
            ClientDefault {
                key: "enable.auto.commit",
                value: "false".into(),
                kind: DefaultKind::Forced,
                why: "MirrorMaker 2 keeps its source positions itself; its consumers never commit",
            },
            ClientDefault {
                key: "auto.offset.reset",
                value: "earliest".into(),
                kind: DefaultKind::IfAbsent,
                why: "MirrorMaker 2 starts a partition it has no position for at the beginning (honoured since 3.6.2/3.7.0)",
            },
            id(connector, role),
        ]
    };
    let path = file.path.as_path();
    let mut notes = Vec::new();
    let producer = client_props(path, data_producer_config(worker_cfg, cc), connect_producer_base(), &mut notes);
    let mut build = |side, role: &str, defaults| client_props(path, client_config(cc, side, role), defaults, &mut notes);
    let out = Clients {
        consumer: build(Side::Source, "consumer", consumer_defaults("MirrorSourceConnector-0", "replication-consumer")),
        target_consumer: build(Side::Target, "consumer", consumer_defaults("MirrorCheckpointConnector-0", "checkpoints-target-consumer")),
        source_producer: build(Side::Source, "producer", vec![id("MirrorSourceConnector-0", "offset-syncs-source-producer")]),
        target_producer: build(Side::Target, "producer", vec![id("MirrorSourceConnector-0", "offset-syncs-target-producer")]),
        source_admin: build(Side::Source, "admin", vec![id("MirrorSourceConnector", "replication-source-admin")]),
        target_admin: build(Side::Target, "admin", vec![id("MirrorSourceConnector", "replication-target-admin")]),
        producer,
    };
    notes.into_iter().for_each(|n| msgs.note(n));
    out
}

/// `Worker.baseProducerConfigs`: what Connect gives every source task's producer.
fn connect_producer_base() -> Vec<ClientDefault> {
    let base = |key, value: &str, why| ClientDefault { key, value: value.into(), kind: DefaultKind::ConnectBase, why };
    let order = "Connect's base: one request in flight and no idempotence keep order on brokers without idempotence";
    vec![
        base("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer", "records are copied as bytes"),
        base("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer", "records are copied as bytes"),
        base("max.block.ms", "9223372036854775807", "Connect's base: a full buffer waits, never drops"),
        base("enable.idempotence", "false", order),
        base("acks", "all", "Connect's base: no loss"),
        base("max.in.flight.requests.per.connection", "1", order),
        base("delivery.timeout.ms", "2147483647", "Connect's base: retry (practically) forever"),
        base(keys::CLIENT_ID, "connector-producer-MirrorSourceConnector-0", "Connect's name for the task's producer"),
    ]
}
