//! `mirror-maker translate-offsets`: failing a consumer group over by hand.
//!
//! Prints, for a group, the offsets a consumer should resume from on a
//! target cluster, read from the checkpoints MirrorMaker 2 (Java's or ours)
//! writes there (`<source alias>.checkpoints.internal`, partition 0,
//! reference §3.3), and with `--apply` commits them to the group on the
//! target. It reads the topic as Java's `MirrorClient.remoteConsumerOffsets`
//! (behind `RemoteClusterUtils.translateOffsets`) does: from the beginning
//! to the end offset, the last checkpoint per partition for the group,
//! records that are not checkpoints skipped; so it prints what Java's tool
//! returns. `--apply` moves a partition only forward and never touches a
//! group with members on the target, as MM2's `sync.group.offsets` does
//! (reference §4.4).
//!
//! The target's client settings come from a Java client properties file
//! (`--target.config`, read like `--producer.config`) or from a
//! MirrorMaker 2 file and a cluster alias (`--mm2.config F --target B`:
//! the settings the mirror's flow into B uses to write there).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::ClientConfig;

use crate::formats::Checkpoint;
use crate::front::properties::ConfigError;
use crate::front::{mm2, translate};
use crate::kafka::groups::{self, GroupError, GroupOffset};
use crate::kafka::settings::{ClientSettings, Role};
use crate::kafka::topic_reader::{self, Partitions, ReadError};
use crate::ops::health::utc;
use crate::ops::shutdown::ExitStatus;

/// The first word of the command line that selects this command.
pub const COMMAND: &str = "translate-offsets";

/// How long reading the checkpoints may go without progress before it is
/// given up (Java's tool takes a timeout for the whole read instead).
const STALL: Duration = Duration::from_secs(30);

#[derive(Debug, Parser)]
#[command(
    name = "mirror-maker translate-offsets",
    about = "Print a consumer group's translated offsets on a target cluster (what its consumers should resume from), from MirrorMaker 2's checkpoints; with --apply, commit them to the group there.",
    group(ArgGroup::new("cluster").required(true).args(["target_config", "mm2_config"]))
)]
struct Args {
    /// The consumer group, as named on the source cluster.
    #[arg(long, value_name = "GROUP")]
    group: String,
    /// The source cluster's alias: checkpoints are read from <alias>.checkpoints.internal.
    #[arg(long = "source.alias", value_name = "ALIAS")]
    source_alias: String,
    /// Client properties (Java or librdkafka keys) of the target cluster, e.g. the mirror's --producer.config.
    #[arg(long = "target.config", value_name = "FILE", conflicts_with_all = ["mm2_config", "target"])]
    target_config: Option<PathBuf>,
    /// A MirrorMaker 2 properties file; with --target, the target cluster's settings come from it.
    #[arg(long = "mm2.config", value_name = "FILE", requires = "target")]
    mm2_config: Option<PathBuf>,
    /// The target cluster's alias in --mm2.config.
    #[arg(long, value_name = "ALIAS", requires = "mm2_config")]
    target: Option<String>,
    /// Commit the translated offsets to the group on the target (forward only; the group must have no active members there).
    #[arg(long)]
    apply: bool,
}

/// Why the command could not do what was asked.
#[derive(Debug)]
pub enum FailoverError {
    Usage(String),
    Config(ConfigError),
    /// A client could not be made, or the cluster could not be read.
    Kafka {
        what: String,
        error: KafkaError,
    },
    NoTopic {
        topic: String,
        cluster: String,
    },
    NoCheckpoints {
        topic: String,
        cluster: String,
        group: String,
        read: u64,
        skipped: u64,
    },
    /// The checkpoints topic could not be read to its end.
    Read {
        topic: String,
        cluster: String,
        error: Box<ReadError>,
    },
    Group(GroupError),
}

impl From<ConfigError> for FailoverError {
    fn from(e: ConfigError) -> Self {
        FailoverError::Config(e)
    }
}

impl From<GroupError> for FailoverError {
    fn from(e: GroupError) -> Self {
        FailoverError::Group(e)
    }
}

/// What to check when there is nothing to translate: the usual reasons.
const CHECK: &str = "check that the mirror into this cluster runs with checkpoints on (MirrorMaker 2: emit.checkpoints.enabled, \
                     the default), that its `groups` filter selects the group (and `groups.exclude` does not), that the group has \
                     committed offsets on the source for mirrored topics, and that --source.alias names the source cluster";

impl fmt::Display for FailoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailoverError::Usage(e) => write!(f, "{e}"),
            FailoverError::Config(e) => write!(f, "{e}"),
            FailoverError::Kafka { what, error } => write!(f, "{what}: {error}"),
            FailoverError::NoTopic { topic, cluster } => {
                write!(f, "topic {topic} does not exist on {cluster}, so no checkpoint was ever written there; {CHECK}")
            }
            FailoverError::NoCheckpoints { topic, cluster, group, read, skipped } => {
                let skipped = if *skipped > 0 { format!(", {skipped} of them not checkpoints") } else { String::new() };
                write!(f, "{topic} on {cluster} holds no checkpoint for group '{group}' ({read} records read{skipped}); {CHECK}")
            }
            FailoverError::Read { topic, cluster, error } => write!(f, "reading {topic} on {cluster}: {error}"),
            FailoverError::Group(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FailoverError {}

/// Runs the command with the words after [`COMMAND`]; the exit status.
pub fn run(args: &[String]) -> ExitStatus {
    let argv = std::iter::once(format!("mirror-maker {COMMAND}")).chain(args.iter().cloned());
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            // --help: on stdout, status 0, as the main command line does.
            print!("{e}");
            return ExitStatus::Ok;
        }
        Err(e) => {
            eprint!("{e}");
            return ExitStatus::Config;
        }
    };
    match translate_offsets(&args, &mut std::io::stdout().lock()) {
        Ok(()) => ExitStatus::Ok,
        Err(e) => {
            eprintln!("mirror-maker {COMMAND}: {}", crate::kafka::secrets::scrubbed(&e.to_string()));
            ExitStatus::Config
        }
    }
}

/// The target's settings and a name for it in messages.
fn target_settings(args: &Args) -> Result<(ClientSettings, String), FailoverError> {
    if let Some(path) = &args.target_config {
        let settings = translate::load(path, Role::Producer, Default::default())?;
        let name = format!("{} (--target.config {})", settings.bootstrap, path.display());
        return Ok((settings, name));
    }
    let (Some(path), Some(alias)) = (&args.mm2_config, &args.target) else {
        return Err(FailoverError::Usage("give --target.config FILE, or --mm2.config FILE with --target ALIAS".into()));
    };
    let cfg = mm2::load(path, &[])?;
    let ops = crate::plan::Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: false };
    // The mirror's own plan gives the settings its flows write to the
    // target with (the file's, with MM2's and the engine's defaults).
    let plan = mm2::plan::plan(&cfg, ops)?;
    let wanted = format!("{}->{alias}", args.source_alias);
    let target = plan
        .flows
        .iter()
        .find(|f| f.name == wanted)
        .or_else(|| plan.flows.iter().find(|f| f.name.ends_with(&format!("->{alias}"))))
        .map(|f| f.target.settings.clone())
        .or_else(|| plan.heartbeats.iter().find(|h| &h.target_alias == alias).map(|h| h.target.settings.clone()));
    let Some(settings) = target else {
        let known: Vec<&str> = cfg.clusters.iter().map(|c| c.alias.as_str()).collect();
        return Err(FailoverError::Usage(format!(
            "{}: no flow writes to a cluster '{alias}' (clusters with a flow: {}); give the target cluster's alias with --target",
            path.display(),
            known.join(", ")
        )));
    };
    let name = format!("cluster {alias} ({}) of {}", settings.bootstrap, path.display());
    Ok((settings, name))
}

/// The connection and security settings only (the target file is a
/// producer's, whose producer-only keys a consumer would warn about), as
/// the engine's admin clients take them.
fn connection_config(settings: &ClientSettings) -> ClientConfig {
    crate::kafka::admin::admin_config(&settings.client_config())
}

/// The group's checkpoints as read from the topic.
#[derive(Debug, Default, PartialEq)]
struct Checkpoints {
    /// The last checkpoint per (target topic, partition), with its record's timestamp.
    latest: BTreeMap<(String, i32), (Checkpoint, Option<i64>)>,
    /// Records read, and of those, records that are not checkpoints.
    read: u64,
    skipped: u64,
    /// The end offset read up to.
    end: i64,
}

impl Checkpoints {
    /// One record of the topic: kept when it is a checkpoint of `group`;
    /// a later one replaces an earlier one, as in Java's reader.
    fn add(&mut self, group: &str, key: Option<&[u8]>, value: Option<&[u8]>, timestamp: Option<i64>) {
        self.read += 1;
        let decoded = match (key, value) {
            (Some(k), Some(v)) => Checkpoint::decode(k, v).ok(),
            _ => None,
        };
        match decoded {
            Some(c) if c.group == group => {
                self.latest.insert((c.topic.clone(), c.partition), (c, timestamp));
            }
            Some(_) => {}
            None => self.skipped += 1,
        }
    }

    fn newest(&self) -> Option<i64> {
        self.latest.values().filter_map(|(_, ts)| *ts).max()
    }
}

fn kafka(what: impl Into<String>) -> impl FnOnce(KafkaError) -> FailoverError {
    let what = what.into();
    move |error| FailoverError::Kafka { what, error }
}

/// Reads partition 0 of `topic` from the beginning to its end offset.
fn read_checkpoints(consumer: &BaseConsumer, topic: &str, group: &str, cluster: &str) -> Result<Checkpoints, FailoverError> {
    let mut found = Checkpoints::default();
    let ends = topic_reader::read_to_end(consumer, topic, Partitions::Zero { from: None }, STALL, &|| false, |m| {
        found.add(group, m.key(), m.payload(), m.timestamp().to_millis())
    })
    .map_err(|error| FailoverError::Read { topic: topic.into(), cluster: cluster.into(), error: Box::new(error) })?
    .ok_or_else(|| FailoverError::NoTopic { topic: topic.into(), cluster: cluster.into() })?;
    found.end = ends.get(&0).copied().unwrap_or(0);
    Ok(found)
}

/// What `--apply` does per partition.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Commit this offset; the group's current one, if any.
    Move { to: GroupOffset, from: Option<i64> },
    /// The group is already there or further on the target: left alone.
    Keep { topic: String, partition: i32, current: i64, translated: i64 },
}

/// Forward only, as MM2's group offset sync: a partition is moved when the
/// group has no offset for it on the target or a smaller one.
fn steps(latest: &BTreeMap<(String, i32), (Checkpoint, Option<i64>)>, current: &BTreeMap<(String, i32), i64>) -> Vec<Step> {
    latest
        .iter()
        .map(|((topic, partition), (c, _))| match current.get(&(topic.clone(), *partition)) {
            Some(&now) if now >= c.downstream_offset => {
                Step::Keep { topic: topic.clone(), partition: *partition, current: now, translated: c.downstream_offset }
            }
            from => Step::Move {
                to: GroupOffset { topic: topic.clone(), partition: *partition, offset: c.downstream_offset, metadata: c.metadata.clone() },
                from: from.copied(),
            },
        })
        .collect()
}

/// The header and one line per partition: `topic partition offset
/// committed=N|none`, sorted; the first three words are the answer.
fn report(found: &Checkpoints, current: &BTreeMap<(String, i32), i64>, topic: &str, cluster: &str, group: &str) -> Vec<String> {
    let newest = found.newest().map(|ms| format!("{} ({ms})", utc(ms))).unwrap_or_else(|| "unknown".into());
    let mut lines = vec![format!(
        "# group {group}: {} partition(s) from {topic} partition 0 on {cluster} (offsets read up to {}); newest checkpoint {newest}",
        found.latest.len(),
        found.end
    )];
    if found.skipped > 0 {
        lines.push(format!("# {} of {} records skipped: not checkpoints", found.skipped, found.read));
    }
    for ((t, p), (c, _)) in &found.latest {
        let committed = current.get(&(t.clone(), *p)).map(|o| o.to_string()).unwrap_or_else(|| "none".into());
        lines.push(format!("{t} {p} {} committed={committed}", c.downstream_offset));
    }
    lines
}

fn translate_offsets(args: &Args, out: &mut impl std::io::Write) -> Result<(), FailoverError> {
    let (settings, cluster) = target_settings(args)?;
    let consumer = groups::admin_consumer(&connection_config(&settings)).map_err(kafka(format!("make a client for {cluster}")))?;
    let topic = format!("{}.checkpoints.internal", args.source_alias);
    let found = read_checkpoints(&consumer, &topic, &args.group, &cluster)?;
    if found.latest.is_empty() {
        return Err(FailoverError::NoCheckpoints { topic, cluster, group: args.group.clone(), read: found.read, skipped: found.skipped });
    }
    let current: BTreeMap<(String, i32), i64> =
        groups::group_offsets(consumer.client(), &args.group)?.into_iter().map(|o| ((o.topic, o.partition), o.offset)).collect();
    let write = |out: &mut dyn std::io::Write, line: &str| writeln!(out, "{line}").map_err(|e| FailoverError::Usage(format!("write the output: {e}")));
    for line in report(&found, &current, &topic, &cluster, &args.group) {
        write(out, &line)?;
    }
    if !args.apply {
        return Ok(());
    }
    let listed = groups::list_groups(consumer.client())?;
    if let Some(g) = listed.iter().find(|g| g.group == args.group && g.state.is_active()) {
        return Err(FailoverError::Group(GroupError::Active { group: g.group.clone(), detail: format!("state {} on {cluster}", g.state) }));
    }
    let steps = steps(&found.latest, &current);
    let moves: Vec<GroupOffset> = steps.iter().filter_map(|s| if let Step::Move { to, .. } = s { Some(to.clone()) } else { None }).collect();
    // The broker checks again: members that joined since the listing get
    // GroupError::Active here, and nothing is written.
    groups::alter_group_offsets(consumer.client(), &args.group, &moves)?;
    for s in &steps {
        let line = match s {
            Step::Move { to, from: Some(from) } => format!("applied {} {} {} (was {from})", to.topic, to.partition, to.offset),
            Step::Move { to, from: None } => format!("applied {} {} {} (had none)", to.topic, to.partition, to.offset),
            Step::Keep { topic, partition, current, translated } => {
                format!("kept {topic} {partition} {current} (already at or past the translated {translated}; never rewound)")
            }
        };
        write(out, &line)?;
    }
    write(out, &format!("# applied {} of {} partition(s) to group {} on {cluster}", moves.len(), steps.len(), args.group))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(group: &str, topic: &str, partition: i32, upstream: i64, downstream: i64) -> Checkpoint {
        Checkpoint { group: group.into(), topic: topic.into(), partition, upstream_offset: upstream, downstream_offset: downstream, metadata: "m".into() }
    }

    fn add(found: &mut Checkpoints, c: &Checkpoint, ts: i64) {
        found.add("g", Some(&c.encode_key().unwrap()), Some(&c.encode_value().unwrap()), Some(ts));
    }

    #[test]
    fn the_last_checkpoint_per_partition_of_the_group_wins_and_other_records_are_counted() {
        let mut found = Checkpoints::default();
        add(&mut found, &checkpoint("g", "A.t", 0, 10, 8), 1000);
        add(&mut found, &checkpoint("other", "A.t", 0, 99, 99), 1001);
        add(&mut found, &checkpoint("g", "A.t", 1, 5, 5), 1002);
        // A rewound source group: the later checkpoint wins even though it is smaller.
        add(&mut found, &checkpoint("g", "A.t", 0, 4, 3), 1003);
        found.add("g", Some(b"junk"), Some(b"x"), Some(1004));
        found.add("g", None, None, None);
        assert_eq!((found.read, found.skipped), (6, 2));
        let got: Vec<(&str, i32, i64)> = found.latest.iter().map(|((t, p), (c, _))| (t.as_str(), *p, c.downstream_offset)).collect();
        assert_eq!(got, [("A.t", 0, 3), ("A.t", 1, 5)]);
        assert_eq!(found.newest(), Some(1003));
    }

    #[test]
    fn apply_moves_forward_only_and_fills_partitions_the_group_lacks() {
        let mut found = Checkpoints::default();
        for (p, down) in [(0, 10), (1, 20), (2, 30)] {
            add(&mut found, &checkpoint("g", "A.t", p, down, down), 1);
        }
        let current: BTreeMap<(String, i32), i64> = [(("A.t".to_string(), 0), 5), (("A.t".to_string(), 1), 25)].into();
        let got = steps(&found.latest, &current);
        let to = |p: i32, offset: i64| GroupOffset { topic: "A.t".into(), partition: p, offset, metadata: "m".into() };
        assert_eq!(
            got,
            [
                Step::Move { to: to(0, 10), from: Some(5) },
                Step::Keep { topic: "A.t".into(), partition: 1, current: 25, translated: 20 },
                Step::Move { to: to(2, 30), from: None },
            ]
        );
        let lines = report(&found, &current, "A.checkpoints.internal", "c", "g");
        assert_eq!(lines[1..], ["A.t 0 10 committed=5", "A.t 1 20 committed=25", "A.t 2 30 committed=none"]);
        assert!(lines[0].starts_with("# group g: 3 partition(s) from A.checkpoints.internal partition 0 on c"), "{}", lines[0]);
    }

    #[test]
    fn the_command_line_needs_a_group_an_alias_and_one_way_to_the_target() {
        let parse = |words: &[&str]| Args::try_parse_from(std::iter::once("x").chain(words.iter().copied()));
        let a = parse(&["--group", "g", "--source.alias", "A", "--target.config", "t.properties", "--apply"]).unwrap();
        assert_eq!((a.group.as_str(), a.source_alias.as_str(), a.apply), ("g", "A", true));
        let a = parse(&["--group=g", "--source.alias=A", "--mm2.config", "mm2.properties", "--target", "B"]).unwrap();
        assert_eq!((a.mm2_config.unwrap(), a.target.unwrap()), (PathBuf::from("mm2.properties"), "B".to_string()));
        assert!(parse(&["--group", "g", "--source.alias", "A"]).is_err(), "no target");
        assert!(parse(&["--group", "g", "--source.alias", "A", "--mm2.config", "f"]).is_err(), "--mm2.config without --target");
        assert!(parse(&["--group", "g", "--source.alias", "A", "--target.config", "t", "--mm2.config", "f", "--target", "B"]).is_err());
    }

    #[test]
    fn producer_keys_stay_out_of_the_reading_client() {
        let file = crate::front::properties::parse(
            std::path::Path::new("p.properties"),
            b"bootstrap.servers=b:9092\nacks=all\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nlinger.ms=5\n",
        )
        .unwrap();
        let c = connection_config(&translate::translate(&file, Role::Producer).unwrap());
        assert_eq!(c.get("bootstrap.servers"), Some("b:9092"));
        assert_eq!(c.get("security.protocol"), Some("sasl_ssl"));
        assert_eq!((c.get("acks"), c.get("linger.ms")), (None, None));
    }
}
