//! Command-line parsing for both MirrorMaker 1 eras (0.8 and 0.9–3.9).
//!
//! Two stages, as ripgrep does: [`parse`] turns the raw argument list into
//! [`Options`] (plain values, validated, no I/O), and the pipeline later
//! builds clients, filters and channels from them.
//!
//! Each option is defined once, in the table below (`OPTIONS`): its name,
//! its help, its default and how its value is read and checked. The clap
//! command, the spellings MM1 accepted and the reading into [`Options`] all
//! come from that one definition.
//!
//! MM1 used joptsimple, which accepts `--opt value`, `--opt=value` and
//! `-opt value`, and takes the next token as the value even when it starts
//! with a dash. Commands copied from web pages also arrive with en dashes
//! (`–whitelist`) and curly quotes (`”.*”`). [`normalise_args`] rewrites all
//! of these into the form clap understands and reports every rewrite, so the
//! user can fix the command line for good.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

/// The built-in message handlers (MM1 loaded Java classes instead).
pub const HANDLERS: &[&str] = &["identity", "topic-rename", "topic-prefix", "partition-preserving"];

/// What the user asked for, validated but not yet turned into clients.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub consumer_configs: Vec<PathBuf>,
    pub producer_config: PathBuf,
    /// The include pattern as given (normalised later by the filter).
    pub include: Option<String>,
    pub exclude: Option<String>,
    pub num_streams: usize,
    pub num_producers: usize,
    pub queue_size: usize,
    /// Bytes (keys and values) buffered per producer worker, beside `queue_size`.
    pub queue_byte_size: usize,
    /// `None` when not given on the command line, so a properties file's
    /// auto-commit interval may stand in for it.
    pub offset_commit_interval_ms: Option<u64>,
    pub abort_on_send_failure: bool,
    pub handler: HandlerSpec,
    pub topic_refresh_interval_ms: u64,
    pub ops: OpsOptions,
    /// Beyond MM1 (see `topics`, `provenance`, `throttle`).
    pub beyond: BeyondOptions,
    /// Lines to log once logging is up: rewrites, deprecated or no-op options.
    pub notices: Vec<String>,
    /// A consumer file with `offsets.storage=zookeeper` may start from
    /// `auto.offset.reset` instead of being refused.
    pub accept_zookeeper_offsets_loss: bool,
}

impl Options {
    /// MM1's defaults for one source and one target, as the command line
    /// would give them; for running the pipeline in-process (the demo, tests).
    pub fn new(consumer_config: PathBuf, producer_config: PathBuf, include: &str) -> Options {
        Options {
            consumer_configs: vec![consumer_config],
            producer_config,
            include: Some(include.to_string()),
            exclude: None,
            num_streams: NUM_STREAMS.kind.default,
            num_producers: NUM_PRODUCERS.kind.default,
            queue_size: QUEUE_SIZE.kind.default,
            queue_byte_size: QUEUE_BYTE_SIZE.kind.default,
            offset_commit_interval_ms: None,
            abort_on_send_failure: ABORT_ON_SEND_FAILURE.kind.default,
            handler: HandlerSpec { name: MESSAGE_HANDLER.kind.default.into(), args: None },
            topic_refresh_interval_ms: TOPIC_REFRESH_INTERVAL_MS.kind.default,
            ops: OpsOptions::default(),
            beyond: BeyondOptions::default(),
            notices: Vec::new(),
            accept_zookeeper_offsets_loss: false,
        }
    }
}

/// How the process is run, the same in both modes: the drain on a stop,
/// the stats line, the pid and log files, the metrics endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct OpsOptions {
    pub drain_timeout_ms: u64,
    /// 0 turns the periodic stats line off.
    pub stats_interval_ms: u64,
    pub pid_file: Option<PathBuf>,
    /// Log here instead of stderr; reopened on SIGHUP (logrotate).
    pub log_file: Option<PathBuf>,
    /// The Prometheus endpoint's port (off when `None`) and address.
    pub metrics_port: Option<u16>,
    pub metrics_bind: String,
}

impl Default for OpsOptions {
    fn default() -> Self {
        OpsOptions {
            drain_timeout_ms: DRAIN_TIMEOUT_MS.kind.default,
            stats_interval_ms: STATS_INTERVAL_MS.kind.default,
            pid_file: None,
            log_file: None,
            metrics_port: None,
            metrics_bind: METRICS_BIND.kind.default.into(),
        }
    }
}

impl OpsOptions {
    fn read(m: &ArgMatches) -> Result<OpsOptions, UsageError> {
        Ok(OpsOptions {
            drain_timeout_ms: DRAIN_TIMEOUT_MS.read(m)?,
            stats_interval_ms: STATS_INTERVAL_MS.read(m)?,
            pid_file: PID_FILE.read(m),
            log_file: LOG_FILE.read(m),
            metrics_port: METRICS_PORT.read(m)?,
            metrics_bind: METRICS_BIND.read(m),
        })
    }
}

/// The options MM1 did not have: topic creation, partition sync, the
/// provenance header, throttling.
#[derive(Debug, Clone, PartialEq)]
pub struct BeyondOptions {
    /// Create missing target topics like the source (`--create.topics`).
    pub create_topics: bool,
    /// Add target partitions when a source topic gains some (`--sync.partitions`).
    pub sync_partitions: bool,
    /// Stamp and check the provenance header (`--provenance.header`).
    pub provenance: bool,
    pub throttle_records_per_sec: Option<u64>,
    pub throttle_bytes_per_sec: Option<u64>,
    /// MirrorMaker 2's offset-syncs and checkpoints (`--emit.checkpoints`).
    pub checkpoints: CheckpointOptions,
}

/// Consumer failover in MM1 mode: offset-syncs and checkpoints written to
/// the target as MirrorMaker 2 writes them, so Java's `RemoteClusterUtils`
/// (with IdentityReplicationPolicy) and `mirror-maker translate-offsets`
/// translate the source's groups.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointOptions {
    pub emit: bool,
    /// One per `--consumer.config`, in order (`--source.alias`); empty: `source`.
    pub source_aliases: Vec<String>,
    pub target_alias: String,
    /// MirrorMaker 2's `groups`: a comma list of Java regexes.
    pub groups: String,
    pub interval_ms: u64,
    pub sync_group_offsets: bool,
}

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions {
            emit: EMIT_CHECKPOINTS.kind.default,
            source_aliases: Vec::new(),
            target_alias: TARGET_ALIAS.kind.default.into(),
            groups: CHECKPOINT_GROUPS.kind.default.into(),
            interval_ms: CHECKPOINT_INTERVAL_MS.kind.default,
            sync_group_offsets: SYNC_GROUP_OFFSETS.kind.default,
        }
    }
}

impl Default for BeyondOptions {
    fn default() -> Self {
        // No provenance header by default: the target's records are the
        // source's, byte for byte, as MM1 wrote them; active/active turns it on.
        BeyondOptions {
            create_topics: CREATE_TOPICS.kind.default,
            sync_partitions: SYNC_PARTITIONS.kind.default,
            provenance: PROVENANCE_HEADER.kind.default,
            throttle_records_per_sec: None,
            throttle_bytes_per_sec: None,
            checkpoints: CheckpointOptions::default(),
        }
    }
}

pub const DEFAULT_OFFSET_COMMIT_INTERVAL_MS: u64 = 60_000;
pub const DEFAULT_TOPIC_REFRESH_INTERVAL_MS: u64 = 30_000;
pub const DEFAULT_DRAIN_TIMEOUT_MS: u64 = 60_000;
pub const DEFAULT_STATS_INTERVAL_MS: u64 = 30_000;
/// Chosen by measurement: at 1 KiB, 10,000 records per worker (10 MiB)
/// held a fifth of the mirror's memory and made it no faster than 2 MiB
/// (see README Performance); it also bounds the channel with large records,
/// where a record count alone let memory grow with the record size.
pub const DEFAULT_QUEUE_BYTE_SIZE: usize = 2 << 20;

pub use crate::plan::handler::HandlerSpec;

/// What the process should do.
#[derive(Debug)]
pub enum Invocation {
    Run(Options),
    /// `--mm2.config`: a MirrorMaker 2 file (checked only, with `--check-config`).
    Mm2(Mm2Options),
    /// `--check-config`: load, translate, connect and report; mirror nothing.
    Check(Options),
    Demo,
    /// Text for stdout, then exit 0 (`--help`, `--version`).
    Print(String),
}

/// What `--mm2.config` runs with: the file, the target aliases that
/// `--clusters` keeps, and the options of the process around the flows.
#[derive(Debug, Clone, PartialEq)]
pub struct Mm2Options {
    pub config: PathBuf,
    pub clusters: Vec<String>,
    /// `--mm2.write.connect.offsets`: hand each flow's positions back to
    /// Java MM2's Connect offsets while running.
    pub write_connect_offsets: bool,
    pub check: bool,
    pub ops: OpsOptions,
    pub notices: Vec<String>,
}

/// A usage error: the message says what is wrong and what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\nRun 'mirror-maker --help' for every option.", self.0)
    }
}

impl std::error::Error for UsageError {}

// ---------------------------------------------------------------------------
// How an option is defined.

/// How an option takes values on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// None: a flag, given or not.
    Nothing,
    /// One value (which may start with a dash, as joptsimple allowed).
    One,
    /// One value each time the option is given.
    Each,
    /// One value or more after one mention (argparse's `nargs='+'`).
    Several,
}

/// One command-line option: everything about it is here. `K`, its kind,
/// says how its value is read and checked, and holds its default.
struct Opt<K> {
    /// The long name, without dashes; also its id in clap's matches.
    name: &'static str,
    /// The value's name in the help (`FILE`, `MS`); unused by flags.
    value_name: &'static str,
    /// The help line; `{default}` stands for the kind's default.
    help: &'static str,
    /// Left out of `--help` (MM1 options that are refused).
    hidden: bool,
    kind: K,
}

impl<K> Opt<K> {
    const fn new(name: &'static str, value_name: &'static str, kind: K, help: &'static str) -> Opt<K> {
        Opt { name, value_name, help, hidden: false, kind }
    }

    const fn flag(name: &'static str, kind: K, help: &'static str) -> Opt<K> {
        Opt::new(name, "", kind, help)
    }

    /// The value given on the command line, if any.
    fn given<'m>(&self, m: &'m ArgMatches) -> Option<&'m String> {
        m.get_one::<String>(self.name)
    }
}

/// What every kind of option tells the clap command.
trait Kind {
    const TAKES: Takes = Takes::One;

    /// The default, as `{default}` in the help shows it.
    fn default_text(&self) -> Option<String> {
        None
    }
}

/// The kinds whose help shows their `default` field.
macro_rules! shows_default {
    ($($kind:ty),*) => {
        $(impl Kind for $kind {
            fn default_text(&self) -> Option<String> {
                Some(self.default.to_string())
            }
        })*
    };
}

shows_default!(TextOr, Handler, Count, Millis, MillisIfGiven, Bool);

/// Any option, whatever its kind: what the clap command and the
/// recognition of MM1's spellings need of it.
trait Spec {
    fn name(&self) -> &'static str;
    fn arg(&self) -> Arg;
    /// Whether the help shows the default exactly when there is one.
    #[cfg(test)]
    fn help_states_default(&self) -> bool;
}

impl<K: Kind> Spec for Opt<K> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn arg(&self) -> Arg {
        let help = match self.kind.default_text() {
            Some(default) => self.help.replace("{default}", &default),
            None => self.help.to_string(),
        };
        let arg = Arg::new(self.name).long(self.name).help(help).hide(self.hidden);
        match K::TAKES {
            Takes::Nothing => arg.action(ArgAction::SetTrue),
            Takes::One => arg.value_name(self.value_name).allow_hyphen_values(true).action(ArgAction::Set),
            Takes::Each => arg.value_name(self.value_name).allow_hyphen_values(true).action(ArgAction::Append),
            Takes::Several => arg.value_name(self.value_name).num_args(1..).action(ArgAction::Append),
        }
    }

    #[cfg(test)]
    fn help_states_default(&self) -> bool {
        self.kind.default_text().is_some() == self.help.contains("{default}")
    }
}

// ---------------------------------------------------------------------------
// The kinds of option: how each reads and checks its value.

/// Given or not (`--demo`).
struct Flag;

impl Kind for Flag {
    const TAKES: Takes = Takes::Nothing;
}

impl Opt<Flag> {
    fn read(&self, m: &ArgMatches) -> bool {
        m.get_flag(self.name)
    }
}

/// An MM1 flag accepted and ignored, with a notice saying why.
struct NoEffect {
    why: &'static str,
}

impl Kind for NoEffect {
    const TAKES: Takes = Takes::Nothing;
}

impl Opt<NoEffect> {
    fn notice(&self, m: &ArgMatches) -> Option<String> {
        m.get_flag(self.name).then(|| format!("--{} has no effect: {}", self.name, self.kind.why))
    }
}

/// An MM1 option this mirror cannot honour: giving it is an error, which
/// follows `--name ` (`{value}` stands for the value given).
struct Refused {
    why: &'static str,
}

impl Kind for Refused {}

impl Opt<Refused> {
    fn check(&self, m: &ArgMatches) -> Result<(), UsageError> {
        match self.given(m) {
            None => Ok(()),
            Some(v) => Err(UsageError(format!("--{} {}", self.name, self.kind.why.replace("{value}", v)))),
        }
    }
}

/// A required file, given once; `what` says what it holds.
struct File {
    what: &'static str,
}

/// A required file, given once or more.
struct Files {
    what: &'static str,
}

impl Kind for File {}

impl Kind for Files {
    const TAKES: Takes = Takes::Each;
}

impl<K> Opt<K> {
    fn missing(&self, what: &str) -> UsageError {
        UsageError(format!("missing required option --{} {} ({what})", self.name, self.value_name))
    }
}

impl Opt<File> {
    fn read(&self, m: &ArgMatches) -> Result<PathBuf, UsageError> {
        self.given(m).map(PathBuf::from).ok_or_else(|| self.missing(self.kind.what))
    }
}

impl Opt<Files> {
    fn read(&self, m: &ArgMatches) -> Result<Vec<PathBuf>, UsageError> {
        let files: Vec<PathBuf> = m.get_many::<String>(self.name).map(|v| v.map(PathBuf::from).collect()).unwrap_or_default();
        if files.is_empty() {
            return Err(self.missing(self.kind.what));
        }
        Ok(files)
    }
}

/// An optional path.
struct Path;

impl Kind for Path {}

impl Opt<Path> {
    fn read(&self, m: &ArgMatches) -> Option<PathBuf> {
        self.given(m).map(PathBuf::from)
    }
}

/// Words given after one mention (`--clusters A B`), or none.
struct Words;

impl Kind for Words {
    const TAKES: Takes = Takes::Several;
}

impl Opt<Words> {
    fn read(&self, m: &ArgMatches) -> Vec<String> {
        m.get_many::<String>(self.name).into_iter().flatten().cloned().collect()
    }
}

/// Optional text, taken as given.
struct Text;

impl Kind for Text {}

impl Opt<Text> {
    fn read(&self, m: &ArgMatches) -> Option<String> {
        self.given(m).cloned()
    }
}

/// Text, taken as given, with a default.
struct TextOr {
    default: &'static str,
}

impl Opt<TextOr> {
    fn read(&self, m: &ArgMatches) -> String {
        self.given(m).cloned().unwrap_or_else(|| self.kind.default.into())
    }
}

/// The name of one of the [`HANDLERS`], trimmed.
struct Handler {
    default: &'static str,
}

impl Opt<Handler> {
    fn read(&self, m: &ArgMatches) -> Result<String, UsageError> {
        let name = self.given(m).map_or(self.kind.default, |n| n.trim());
        if HANDLERS.contains(&name) {
            return Ok(name.to_string());
        }
        let hint = if name.contains('.') && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            " Java handler classes cannot be loaded by this native mirror; pick the built-in that does the same job"
        } else {
            ""
        };
        Err(UsageError(format!(
            "--{} '{name}' is not a built-in handler.{hint}: {} (topic-rename takes --message.handler.args 'src:dst,src2:dst2', topic-prefix takes the prefix)",
            self.name,
            HANDLERS.join(", ")
        )))
    }
}

/// A whole number of at least 1.
struct Count {
    default: usize,
}

impl Opt<Count> {
    fn read(&self, m: &ArgMatches) -> Result<usize, UsageError> {
        match self.given(m) {
            None => Ok(self.kind.default),
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(UsageError(format!("--{} '{v}' must be a whole number of at least 1", self.name))),
            },
        }
    }
}

/// Milliseconds, at least `min`, with a default.
struct Millis {
    default: u64,
    min: u64,
}

/// Milliseconds, `None` when not given: something else may stand in, and
/// `default` (what the help shows) applies only when nothing does.
struct MillisIfGiven {
    default: u64,
}

impl<K> Opt<K> {
    fn millis(&self, v: &str) -> Result<u64, UsageError> {
        v.trim().parse::<u64>().map_err(|_| UsageError(format!("--{} '{v}' must be a whole number of milliseconds (0 or more)", self.name)))
    }
}

impl Opt<Millis> {
    fn read(&self, m: &ArgMatches) -> Result<u64, UsageError> {
        let ms = self.given(m).map(|v| self.millis(v)).transpose()?.unwrap_or(self.kind.default);
        if ms < self.kind.min {
            return Err(UsageError(format!("--{} must be at least {}", self.name, self.kind.min)));
        }
        Ok(ms)
    }
}

impl Opt<MillisIfGiven> {
    fn read(&self, m: &ArgMatches) -> Result<Option<u64>, UsageError> {
        self.given(m).map(|v| self.millis(v)).transpose()
    }
}

/// true or false in any case, nothing else (Scala's `toBoolean`); `fix`
/// follows "is not a boolean; " in the error.
struct Bool {
    default: bool,
    fix: &'static str,
}

impl Opt<Bool> {
    fn read(&self, m: &ArgMatches) -> Result<bool, UsageError> {
        let Some(v) = self.given(m) else { return Ok(self.kind.default) };
        match v.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(UsageError(format!("--{} '{v}' is not a boolean; {}", self.name, self.kind.fix))),
        }
    }
}

/// A limit per second, at least 1; no limit when not given.
struct Rate {
    unit: &'static str,
}

impl Kind for Rate {}

impl Opt<Rate> {
    fn read(&self, m: &ArgMatches) -> Result<Option<u64>, UsageError> {
        let Some(v) = self.given(m) else { return Ok(None) };
        match v.trim().parse::<u64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(UsageError(format!(
                "--{} '{v}' must be a whole number of {} per second, at least 1 (leave it out for no limit)",
                self.name, self.kind.unit
            ))),
        }
    }
}

/// A TCP port; off when not given.
struct Port;

impl Kind for Port {}

impl Opt<Port> {
    fn read(&self, m: &ArgMatches) -> Result<Option<u16>, UsageError> {
        let Some(v) = self.given(m) else { return Ok(None) };
        let port = v.trim().parse::<u16>().ok().filter(|p| *p > 0);
        port.map(Some).ok_or_else(|| UsageError(format!("--{} '{v}' must be a TCP port from 1 to 65535", self.name)))
    }
}

// ---------------------------------------------------------------------------
// The options.

const CONSUMER_CONFIG: Opt<Files> = Opt::new(
    "consumer.config",
    "FILE",
    Files { what: "the source cluster's consumer properties" },
    "Consumer properties of a source cluster (its group.id is the group). Repeat for several source clusters.",
);
const PRODUCER_CONFIG: Opt<File> =
    Opt::new("producer.config", "FILE", File { what: "the target cluster's producer properties" }, "Producer properties of the target cluster.");
const WHITELIST: Opt<Text> =
    Opt::new("whitelist", "REGEX", Text, "Topics to mirror: a Java regex, full match; ',' separates alternatives. Deprecated name of --include.");
const INCLUDE: Opt<Text> = Opt::new("include", "REGEX", Text, "Topics to mirror (same as --whitelist, the Kafka 3.x name).");
const BLACKLIST: Opt<Text> = Opt::new("blacklist", "REGEX", Text, "Topics never to mirror; with --include: include minus exclude.");
const NUM_STREAMS: Opt<Count> =
    Opt::new("num.streams", "N", Count { default: 1 }, "Consumer threads per source cluster, each with its own consumer in the group. Default {default}.");
const NUM_PRODUCERS: Opt<Count> =
    Opt::new("num.producers", "N", Count { default: 1 }, "Producer workers writing to the target, each with its own producer. Default {default}.");
const QUEUE_SIZE: Opt<Count> =
    Opt::new("queue.size", "N", Count { default: 10_000 }, "Records buffered per producer worker before consumers pause (backpressure). Default {default}.");
const QUEUE_BYTE_SIZE: Opt<Count> = Opt::new(
    "queue.byte.size",
    "BYTES",
    Count { default: DEFAULT_QUEUE_BYTE_SIZE },
    "Bytes of keys and values buffered per producer worker before consumers pause, beside --queue.size (whichever binds first). Default {default} (2 MiB).",
);
const OFFSET_COMMIT_INTERVAL_MS: Opt<MillisIfGiven> = Opt::new(
    "offset.commit.interval.ms",
    "MS",
    MillisIfGiven { default: DEFAULT_OFFSET_COMMIT_INTERVAL_MS },
    "How often acknowledged offsets are committed to the source. Default {default}.",
);
const ABORT_ON_SEND_FAILURE: Opt<Bool> = Opt::new(
    "abort.on.send.failure",
    "BOOL",
    Bool { default: true, fix: "write true (stop on a rejected record) or false (skip and count it)" },
    "true: a record the target rejects for good stops the mirror (exit 255); false: it is skipped, logged and counted. Default {default}.",
);
const MESSAGE_HANDLER: Opt<Handler> = Opt::new(
    "message.handler",
    "NAME",
    Handler { default: "identity" },
    "Built-in handler: {default} (default), topic-rename, topic-prefix, partition-preserving.",
);
const MESSAGE_HANDLER_ARGS: Opt<Text> =
    Opt::new("message.handler.args", "ARGS", Text, "Handler argument: topic-rename 'src:dst,src2:dst2'; topic-prefix 'prefix.'.");
const CONSUMER_REBALANCE_LISTENER: Opt<Refused> = Opt {
    hidden: true,
    ..Opt::new(
        "consumer.rebalance.listener",
        "CLASS",
        Refused {
            why: "{value}: Java rebalance listeners cannot be loaded by this native mirror. Remove the option (and --rebalance.listener.args); \
              on revocation, in-flight records are drained and committed before partitions are released.",
        },
        "Not supported (Java classes cannot be loaded).",
    )
};
const REBALANCE_LISTENER_ARGS: Opt<Refused> = Opt {
    hidden: true,
    ..Opt::new(
        "rebalance.listener.args",
        "ARGS",
        Refused { why: "is only meaningful with --consumer.rebalance.listener, which is not supported; remove it." },
        "Not supported.",
    )
};
const NEW_CONSUMER: Opt<NoEffect> =
    Opt::flag("new.consumer", NoEffect { why: "the modern Kafka protocol is always used" }, "Accepted for compatibility; no effect.");
const NEW_PRODUCER: Opt<NoEffect> =
    Opt::flag("new.producer", NoEffect { why: "the modern Kafka protocol is always used" }, "Accepted for compatibility; no effect.");
const TOPIC_REFRESH_INTERVAL_MS: Opt<Millis> = Opt::new(
    "topic.refresh.interval.ms",
    "MS",
    Millis { default: DEFAULT_TOPIC_REFRESH_INTERVAL_MS, min: 1 },
    "How often source topics are listed to find new matching topics. Default {default}.",
);
const DRAIN_TIMEOUT_MS: Opt<Millis> = Opt::new(
    "drain.timeout.ms",
    "MS",
    Millis { default: DEFAULT_DRAIN_TIMEOUT_MS, min: 0 },
    "On shutdown or rebalance, how long to wait for in-flight records to reach the target. Default {default}.",
);
const STATS_INTERVAL_MS: Opt<Millis> = Opt::new(
    "stats.interval.ms",
    "MS",
    Millis { default: DEFAULT_STATS_INTERVAL_MS, min: 0 },
    "How often a stats line (rates, lag, in flight, dropped) is logged; 0 turns it off. Default {default}.",
);
const LOG_FILE: Opt<Path> = Opt::new("log.file", "PATH", Path, "Write the log to this file (appending) instead of stderr; SIGHUP reopens it, for logrotate.");
const PID_FILE: Opt<Path> = Opt::new(
    "pid.file",
    "PATH",
    Path,
    "Write the process id here and hold a lock on it: a second copy with the same file (e.g. from cron) exits at once with status 4.",
);
const METRICS_PORT: Opt<Port> = Opt::new("metrics.port", "PORT", Port, "Serve Prometheus metrics on this port at /metrics. Off by default.");
const METRICS_BIND: Opt<TextOr> =
    Opt::new("metrics.bind", "ADDR", TextOr { default: "127.0.0.1" }, "Address the metrics endpoint listens on. Default {default} (this host only).");
const CREATE_TOPICS: Opt<Bool> = Opt::new(
    "create.topics",
    "BOOL",
    Bool { default: true, fix: "write true or false (false leaves topic creation to the target broker, as MM1 did)" },
    "Create a missing target topic like the source topic (partitions, replication up to the target's broker count, topic configs). \
     false: the target broker decides, as with MM1. Default {default}.",
);
const SYNC_PARTITIONS: Opt<Bool> = Opt::new(
    "sync.partitions",
    "BOOL",
    Bool { default: true, fix: "write true or false (false: partitions added at the source are not added on the target)" },
    "When a source topic gains partitions, add them to the target topic. Default {default}.",
);
const PROVENANCE_HEADER: Opt<Bool> = Opt::new(
    "provenance.header",
    "BOOL",
    Bool {
        default: false,
        fix: "write true or false (true stamps each record with its source cluster and stops loops between two mirrors running in opposite directions)",
    },
    "Stamp each record with header mirror-maker.source-cluster (the source cluster id) and never copy back a record that came from the target cluster, \
     so A->B and B->A can run together (turn it on in both directions). Default {default}: the target's records are the source's, byte for byte.",
);
const THROTTLE_RECORDS_PER_SEC: Opt<Rate> = Opt::new(
    "throttle.records.per.sec",
    "N",
    Rate { unit: "records" },
    "Most records per second this process writes to the target (smooth; backpressure, nothing dropped). Default: no limit.",
);
const THROTTLE_BYTES_PER_SEC: Opt<Rate> = Opt::new(
    "throttle.bytes.per.sec",
    "N",
    Rate { unit: "bytes" },
    "Most key+value bytes per second this process writes to the target (smooth; backpressure, nothing dropped). Default: no limit.",
);
const EMIT_CHECKPOINTS: Opt<Bool> = Opt::new(
    "emit.checkpoints",
    "BOOL",
    Bool { default: false, fix: "write true or false (true writes MirrorMaker 2's offset-syncs and checkpoints to the target)" },
    "Write MirrorMaker 2's offset-syncs (mm2-offset-syncs.<source alias>.internal) and checkpoints (<source alias>.checkpoints.internal) \
     to the target, so consumer groups can fail over to it at translated offsets (mirror-maker translate-offsets, or Java's \
     RemoteClusterUtils with IdentityReplicationPolicy). Needs --message.handler partition-preserving. Default {default}.",
);
const SOURCE_ALIAS: Opt<Words> = Opt::new(
    "source.alias",
    "ALIAS",
    Words,
    "With --emit.checkpoints: each source cluster's name in the checkpoint topics, one per --consumer.config in their order. Default: source.",
);
const TARGET_ALIAS: Opt<TextOr> =
    Opt::new("target.alias", "ALIAS", TextOr { default: "target" }, "With --emit.checkpoints: the target cluster's name. Default {default}.");
const CHECKPOINT_GROUPS: Opt<TextOr> = Opt::new(
    "checkpoint.groups",
    "REGEX",
    TextOr { default: ".*" },
    "With --emit.checkpoints: the source consumer groups to checkpoint, comma-separated Java regexes as MirrorMaker 2's groups \
     (console-consumer-.*, connect-.* and __.* are always left out, as there). Default {default}.",
);
const CHECKPOINT_INTERVAL_MS: Opt<Millis> = Opt::new(
    "checkpoint.interval.ms",
    "MS",
    Millis { default: 60_000, min: 1_000 },
    "With --emit.checkpoints: how often the groups' committed offsets are translated and written. Default {default}.",
);
const SYNC_GROUP_OFFSETS: Opt<Bool> = Opt::new(
    "sync.group.offsets",
    "BOOL",
    Bool { default: false, fix: "write true or false" },
    "With --emit.checkpoints: also commit the translated offsets to each group on the target that has no active consumer there, \
     never moving one back (MirrorMaker 2's sync.group.offsets.enabled). Default {default}.",
);
const CHECK_CONFIG: Opt<Flag> = Opt::flag(
    "check-config",
    Flag,
    "Check the configuration and exit: load and translate every file, connect to each cluster, list the topics that would be mirrored \
     and every effective client setting with its origin. Consumes and commits nothing. Exit 0 if a run would start, 1 otherwise.",
);
const ACCEPT_ZOOKEEPER_OFFSETS_LOSS: Opt<Flag> = Opt::flag(
    "accept.zookeeper.offsets.loss",
    Flag,
    "Run with a consumer file that has offsets.storage=zookeeper: the group's ZooKeeper offsets are not read and partitions start \
     from auto.offset.reset. Without this option such a file is refused.",
);
const MM2_CONFIG: Opt<Path> = Opt::new(
    "mm2.config",
    "FILE",
    Path,
    "Run a MirrorMaker 2 file (connect-mirror-maker.properties) instead of MM1 options: every enabled A->B flow in this process. \
     With it, only --clusters, --mm2.write.connect.offsets, --check-config and the operations options (log, pid, metrics, stats, drain) apply.",
);
const CLUSTERS: Opt<Words> =
    Opt::new("clusters", "ALIAS", Words, "With --mm2.config: run only the flows whose target is one of these aliases, as MM2's --clusters does.");
const MM2_WRITE_CONNECT_OFFSETS: Opt<Bool> = Opt::new(
    "mm2.write.connect.offsets",
    "BOOL",
    Bool { default: false, fix: "write true or false (true writes each flow's positions where Java MirrorMaker 2 reads them)" },
    "With --mm2.config: also write each flow's committed positions to Java MirrorMaker 2's Connect offsets (mm2-offsets.<source>.internal \
     on the target, created if missing) at every commit interval and at the stop, so Java MM2 started on the same file continues where \
     this stopped. Java's positions there are always read at start, whatever this says. Default {default}.",
);
const DEMO: Opt<Flag> = Opt::flag("demo", Flag, "Run a self-contained demo: two in-process mock clusters, a real mirror between them, and a check.");
const HELP: Opt<Flag> = Opt::flag("help", Flag, "Print this help.");
const VERSION: Opt<Flag> = Opt::flag("version", Flag, "Print the version.");

/// Every option, in the order `--help` lists them.
const OPTIONS: &[&dyn Spec] = &[
    &CONSUMER_CONFIG,
    &PRODUCER_CONFIG,
    &WHITELIST,
    &INCLUDE,
    &BLACKLIST,
    &NUM_STREAMS,
    &NUM_PRODUCERS,
    &QUEUE_SIZE,
    &QUEUE_BYTE_SIZE,
    &OFFSET_COMMIT_INTERVAL_MS,
    &ABORT_ON_SEND_FAILURE,
    &MESSAGE_HANDLER,
    &MESSAGE_HANDLER_ARGS,
    &CONSUMER_REBALANCE_LISTENER,
    &REBALANCE_LISTENER_ARGS,
    &NEW_CONSUMER,
    &NEW_PRODUCER,
    &TOPIC_REFRESH_INTERVAL_MS,
    &DRAIN_TIMEOUT_MS,
    &STATS_INTERVAL_MS,
    &LOG_FILE,
    &PID_FILE,
    &METRICS_PORT,
    &METRICS_BIND,
    &CREATE_TOPICS,
    &SYNC_PARTITIONS,
    &PROVENANCE_HEADER,
    &THROTTLE_RECORDS_PER_SEC,
    &THROTTLE_BYTES_PER_SEC,
    &EMIT_CHECKPOINTS,
    &SOURCE_ALIAS,
    &TARGET_ALIAS,
    &CHECKPOINT_GROUPS,
    &CHECKPOINT_INTERVAL_MS,
    &SYNC_GROUP_OFFSETS,
    &CHECK_CONFIG,
    &ACCEPT_ZOOKEEPER_OFFSETS_LOSS,
    &MM2_CONFIG,
    &CLUSTERS,
    &MM2_WRITE_CONNECT_OFFSETS,
    &DEMO,
    &HELP,
    &VERSION,
];

/// The clap command: every option of [`OPTIONS`], then the stray words MM1 ignored.
fn command() -> Command {
    let command = Command::new("mirror-maker")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Mirror Kafka topics from one or more source clusters to a target cluster, losing nothing.\nA drop-in replacement for kafka-mirror-maker.sh (kafka.tools.MirrorMaker).")
        .disable_version_flag(true)
        .disable_help_flag(true);
    OPTIONS
        .iter()
        .fold(command, |command, option| command.arg(option.arg()))
        .arg(Arg::new("stray").num_args(0..).action(ArgAction::Append).hide(true).allow_hyphen_values(false))
}

/// Whether `name` (without dashes) is one of [`OPTIONS`].
fn is_option(name: &str) -> bool {
    OPTIONS.iter().any(|option| option.name() == name)
}

// ---------------------------------------------------------------------------
// MM1's spellings.

const DASHES: &[char] = &['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}'];
const CURLY_QUOTES: &[char] = &['\u{201C}', '\u{201D}', '\u{201E}', '\u{2018}', '\u{2019}', '\u{201A}', '\u{00AB}', '\u{00BB}'];

/// How an argument spells an option.
#[derive(Debug, PartialEq)]
enum Spelling {
    /// As clap reads it: `--name`, or not an option at all.
    AsGiven,
    /// Another dash count joptsimple accepted (`-name`, `---name`): read as the rewrite.
    Joptsimple(String),
    /// With a typographic dash (`–name`, pasted from a web page): read as the rewrite, with a notice.
    Typographic(String),
}

/// How `arg` spells an option, and its `--name[=value]` form when that differs.
fn spelling(arg: &str) -> Spelling {
    // An en dash, em dash or minus sign at the start: a word processor's `--`.
    let trimmed = arg.trim_start_matches(|c| DASHES.contains(&c) || c == '-');
    let lead = &arg[..arg.len() - trimmed.len()];
    let (name, value) = match trimmed.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (trimmed, None),
    };
    if lead.is_empty() || lead == "--" || !is_option(name) {
        return Spelling::AsGiven;
    }
    let rebuilt = match value {
        Some(v) => format!("--{name}={v}"),
        None => format!("--{name}"),
    };
    if lead.chars().any(|c| DASHES.contains(&c)) {
        Spelling::Typographic(rebuilt)
    } else {
        Spelling::Joptsimple(rebuilt)
    }
}

/// Rewrites joptsimple-style and typographically mangled arguments into
/// `--name[=value]` tokens. Returns the tokens and one notice per rewrite.
pub fn normalise_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::with_capacity(args.len());
    let mut notices = Vec::new();
    for arg in args {
        let mut fixed = match spelling(arg) {
            Spelling::AsGiven => arg.clone(),
            Spelling::Joptsimple(rebuilt) => rebuilt,
            Spelling::Typographic(rebuilt) => {
                notices.push(format!("'{arg}' has a typographic dash (pasted from a web page?); read it as '{rebuilt}'"));
                rebuilt
            }
        };
        // Curly quotes the shell did not remove: strip them from both ends.
        let stripped = strip_curly(&fixed);
        if stripped != fixed {
            notices.push(format!("'{fixed}' has typographic quotes (pasted from a web page?); read it as '{stripped}'"));
            fixed = stripped;
        }
        out.push(fixed);
    }
    (out, notices)
}

fn strip_curly(s: &str) -> String {
    match s.split_once('=') {
        Some((name, value)) if name.starts_with("--") => {
            format!("{name}={}", value.trim_matches(|c| CURLY_QUOTES.contains(&c)))
        }
        _ => s.trim_matches(|c| CURLY_QUOTES.contains(&c)).to_string(),
    }
}

// ---------------------------------------------------------------------------
// Parsing.

/// Parses the arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    if args.is_empty() {
        return Err(UsageError(format!("missing required options --{} and --{}\n\n{}", CONSUMER_CONFIG.name, PRODUCER_CONFIG.name, command().render_usage())));
    }
    let (args, mut notices) = normalise_args(args);
    let argv = std::iter::once(OsString::from("mirror-maker")).chain(args.iter().map(OsString::from));
    let m = command().try_get_matches_from(argv).map_err(|e| UsageError(clap_message(&e)))?;

    if let Some(answer) = answer_at_once(&m) {
        return Ok(answer);
    }
    if let Some(config) = MM2_CONFIG.read(&m) {
        return read_mm2_options(&m, config, notices).map(Invocation::Mm2);
    }
    CONSUMER_REBALANCE_LISTENER.check(&m)?;
    REBALANCE_LISTENER_ARGS.check(&m)?;
    notices.extend([NEW_CONSUMER, NEW_PRODUCER].iter().filter_map(|flag| flag.notice(&m)));
    notices.extend(m.get_many::<String>("stray").into_iter().flatten().map(|word| {
        format!("ignoring the stray argument '{word}' as MM1 did; if it was meant as part of a pattern, quote the whole pattern, e.g. --whitelist 'a|b'")
    }));
    let options = read_options(&m, notices)?;
    Ok(if CHECK_CONFIG.read(&m) { Invocation::Check(options) } else { Invocation::Run(options) })
}

/// `--help`, `--version` and `--demo` are answered whatever else is given.
fn answer_at_once(m: &ArgMatches) -> Option<Invocation> {
    if HELP.read(m) {
        return Some(Invocation::Print(command().render_long_help().to_string()));
    }
    if VERSION.read(m) {
        return Some(Invocation::Print(format!("mirror-maker {}\n", env!("CARGO_PKG_VERSION"))));
    }
    DEMO.read(m).then_some(Invocation::Demo)
}

/// Reads every option into [`Options`]. The order of the reads is the order
/// of the checks, so with several bad values the first one here is reported:
/// the files, the topic patterns, then the rest as the fields are written.
fn read_options(m: &ArgMatches, mut notices: Vec<String>) -> Result<Options, UsageError> {
    let consumer_configs = CONSUMER_CONFIG.read(m)?;
    let producer_config = PRODUCER_CONFIG.read(m)?;
    let (include, exclude) = topic_patterns(m, &mut notices)?;
    // A struct's fields are evaluated as written, not as declared.
    Ok(Options {
        consumer_configs,
        producer_config,
        include,
        exclude,
        num_streams: NUM_STREAMS.read(m)?,
        num_producers: NUM_PRODUCERS.read(m)?,
        queue_size: QUEUE_SIZE.read(m)?,
        queue_byte_size: QUEUE_BYTE_SIZE.read(m)?,
        offset_commit_interval_ms: OFFSET_COMMIT_INTERVAL_MS.read(m)?,
        topic_refresh_interval_ms: TOPIC_REFRESH_INTERVAL_MS.read(m)?,
        ops: OpsOptions::read(m)?,
        abort_on_send_failure: ABORT_ON_SEND_FAILURE.read(m)?,
        handler: HandlerSpec { name: MESSAGE_HANDLER.read(m)?, args: MESSAGE_HANDLER_ARGS.read(m) },
        beyond: BeyondOptions {
            create_topics: CREATE_TOPICS.read(m)?,
            sync_partitions: SYNC_PARTITIONS.read(m)?,
            provenance: PROVENANCE_HEADER.read(m)?,
            throttle_records_per_sec: THROTTLE_RECORDS_PER_SEC.read(m)?,
            throttle_bytes_per_sec: THROTTLE_BYTES_PER_SEC.read(m)?,
            checkpoints: CheckpointOptions {
                emit: EMIT_CHECKPOINTS.read(m)?,
                source_aliases: SOURCE_ALIAS.read(m),
                target_alias: TARGET_ALIAS.read(m),
                groups: CHECKPOINT_GROUPS.read(m),
                interval_ms: CHECKPOINT_INTERVAL_MS.read(m)?,
                sync_group_offsets: SYNC_GROUP_OFFSETS.read(m)?,
            },
        },
        notices,
        accept_zookeeper_offsets_loss: ACCEPT_ZOOKEEPER_OFFSETS_LOSS.read(m),
    })
}

/// The options of an MM2 run. MM1's options have no meaning beside an MM2
/// file, which says all of that itself: giving one is an error, not a
/// silent choice between the two.
fn read_mm2_options(m: &ArgMatches, config: PathBuf, notices: Vec<String>) -> Result<Mm2Options, UsageError> {
    let mm2_only: &[&str] = &[
        MM2_CONFIG.name,
        CLUSTERS.name,
        MM2_WRITE_CONNECT_OFFSETS.name,
        CHECK_CONFIG.name,
        DRAIN_TIMEOUT_MS.name,
        STATS_INTERVAL_MS.name,
        PID_FILE.name,
        LOG_FILE.name,
        METRICS_PORT.name,
        METRICS_BIND.name,
    ];
    if let Some(other) =
        m.ids().map(|id| id.as_str()).find(|id| *id != "stray" && !mm2_only.contains(id) && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
    {
        return Err(UsageError(format!(
            "--{other} does not apply with --{}: the MirrorMaker 2 file sets clusters, topics and client settings itself; remove --{other}",
            MM2_CONFIG.name
        )));
    }
    Ok(Mm2Options {
        config,
        clusters: CLUSTERS.read(m),
        write_connect_offsets: MM2_WRITE_CONNECT_OFFSETS.read(m)?,
        check: CHECK_CONFIG.read(m),
        ops: OpsOptions::read(m)?,
        notices,
    })
}

/// The include pattern (`--include`, or `--whitelist`, its older name) and
/// the exclude pattern (`--blacklist`).
fn topic_patterns(m: &ArgMatches, notices: &mut Vec<String>) -> Result<(Option<String>, Option<String>), UsageError> {
    let include = match (INCLUDE.read(m), WHITELIST.read(m)) {
        (Some(i), Some(w)) => {
            notices.push(format!("--{} '{w}' is ignored because --{} '{i}' is given (as in Kafka 3.x)", WHITELIST.name, INCLUDE.name));
            Some(i)
        }
        (i, w) => i.or(w),
    };
    let exclude = BLACKLIST.read(m);
    if include.is_none() && exclude.is_none() {
        return Err(UsageError(
            "include list must be specified: add --whitelist REGEX (or --include REGEX), e.g. --whitelist '.*' to mirror every topic".into(),
        ));
    }
    // Checked here, before any file is read, so a bad pattern is the first
    // thing reported; the real filter is built per source later.
    crate::plan::filter::TopicFilter::new(include.as_deref(), exclude.as_deref(), true).map_err(|e| UsageError(e.to_string()))?;
    Ok((include, exclude))
}

/// Turns clap's error into one that names the option and the fix.
fn clap_message(e: &clap::Error) -> String {
    use clap::error::ErrorKind;
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("").trim_start_matches("error: ").to_string();
    match e.kind() {
        ErrorKind::UnknownArgument => {
            let hint =
                if text.contains("--whitel") || text.contains("--incl") { " (abbreviated option names are not accepted, as in MM1 since 0.11)" } else { "" };
            format!("{first}{hint}\n\n{}", command().render_usage())
        }
        ErrorKind::ArgumentConflict => first,
        _ => format!("{first}\n\n{}", command().render_usage()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn run(list: &[&str]) -> Options {
        match parse(&args(list)).expect("parse") {
            Invocation::Run(o) => o,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    const BASE: &[&str] = &["--consumer.config", "c.properties", "--producer.config", "p.properties"];

    fn with(extra: &[&str]) -> Vec<String> {
        let mut v = args(BASE);
        v.extend(args(extra));
        v
    }

    fn run_with(extra: &[&str]) -> Options {
        let v = with(extra);
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        run(&refs)
    }

    #[test]
    fn defaults_match_mm1() {
        let o = run_with(&["--whitelist", ".*"]);
        assert_eq!(o.consumer_configs, vec![PathBuf::from("c.properties")]);
        assert_eq!(o.producer_config, PathBuf::from("p.properties"));
        assert_eq!(o.include.as_deref(), Some(".*"));
        assert_eq!(o.exclude, None);
        assert_eq!((o.num_streams, o.num_producers, o.queue_size), (1, 1, 10_000));
        assert_eq!(o.offset_commit_interval_ms, None);
        assert!(o.abort_on_send_failure);
        assert_eq!(o.handler, HandlerSpec { name: "identity".into(), args: None });
        assert_eq!(o.topic_refresh_interval_ms, 30_000);
        assert_eq!(o.ops.drain_timeout_ms, 60_000);
        assert_eq!((o.ops.stats_interval_ms, o.ops.pid_file), (30_000, None));
        let o = run_with(&["--whitelist", ".*", "--stats.interval.ms", "0", "--pid.file=/run/mm.pid"]);
        assert_eq!((o.ops.stats_interval_ms, o.ops.pid_file), (0, Some(PathBuf::from("/run/mm.pid"))));
        assert_eq!((o.ops.metrics_port, o.ops.metrics_bind.as_str()), (None, "127.0.0.1"));
        let o = run_with(&["--whitelist", ".*", "--metrics.port", "9404", "--metrics.bind", "0.0.0.0"]);
        assert_eq!((o.ops.metrics_port, o.ops.metrics_bind.as_str()), (Some(9404), "0.0.0.0"));
        let e = parse(&with(&["--whitelist", "x", "--metrics.port", "0"])).unwrap_err();
        assert!(e.0.contains("--metrics.port '0'"), "{e}");
    }

    #[test]
    fn embedding_defaults_equal_the_command_lines() {
        let parsed = run(&["--consumer.config", "c.properties", "--producer.config", "p.properties", "--whitelist", ".*"]);
        assert_eq!(Options::new("c.properties".into(), "p.properties".into(), ".*"), parsed);
    }

    #[test]
    fn equals_form_and_single_dash_parse() {
        let o = run(&["-consumer.config", "a", "--producer.config=b", "--whitelist=\"t\"", "-num.streams", "3"]);
        assert_eq!(o.consumer_configs, vec![PathBuf::from("a")]);
        assert_eq!(o.producer_config, PathBuf::from("b"));
        assert_eq!(o.include.as_deref(), Some("\"t\""));
        assert_eq!(o.num_streams, 3);
    }

    #[test]
    fn value_may_start_with_a_dash() {
        let o = run_with(&["--whitelist", "-weird-topic"]);
        assert_eq!(o.include.as_deref(), Some("-weird-topic"));
    }

    #[test]
    fn repeated_consumer_config_gives_several_sources() {
        let o = run(&["--consumer.config", "a", "--consumer.config", "b", "--producer.config", "p", "--include", "x"]);
        assert_eq!(o.consumer_configs, vec![PathBuf::from("a"), PathBuf::from("b")]);
    }

    #[test]
    fn en_dash_and_curly_quotes_are_accepted_with_a_notice() {
        let o = run(&["\u{2013}consumer.config", "c", "\u{2014}producer.config", "p", "\u{2013}whitelist", "\u{201D}.*\u{201D}"]);
        assert_eq!(o.include.as_deref(), Some(".*"));
        assert_eq!(o.consumer_configs, vec![PathBuf::from("c")]);
        assert!(o.notices.iter().any(|n| n.contains("typographic dash") && n.contains("--whitelist")), "{:?}", o.notices);
        assert!(o.notices.iter().any(|n| n.contains("typographic quotes")), "{:?}", o.notices);
    }

    #[test]
    fn curly_quotes_in_equals_form() {
        let o = run_with(&["--whitelist=\u{201C}orders.*\u{201D}"]);
        assert_eq!(o.include.as_deref(), Some("orders.*"));
    }

    #[test]
    fn include_wins_over_whitelist() {
        let o = run_with(&["--whitelist", "a", "--include", "b"]);
        assert_eq!(o.include.as_deref(), Some("b"));
        assert!(o.notices.iter().any(|n| n.contains("--whitelist 'a' is ignored")));
    }

    #[test]
    fn blacklist_alone_or_with_include() {
        let o = run_with(&["--blacklist", "tmp.*"]);
        assert_eq!((o.include, o.exclude.as_deref()), (None, Some("tmp.*")));
        let o = run_with(&["--include", ".*", "--blacklist", "tmp.*"]);
        assert_eq!((o.include.as_deref(), o.exclude.as_deref()), (Some(".*"), Some("tmp.*")));
    }

    #[test]
    fn missing_filter_is_an_error_naming_the_option() {
        let e = parse(&args(BASE)).unwrap_err();
        assert!(e.0.contains("include list must be specified") && e.0.contains("--whitelist"), "{e}");
    }

    #[test]
    fn missing_required_files() {
        let e = parse(&args(&["--producer.config", "p", "--whitelist", "x"])).unwrap_err();
        assert!(e.0.contains("--consumer.config"), "{e}");
        let e = parse(&args(&["--consumer.config", "c", "--whitelist", "x"])).unwrap_err();
        assert!(e.0.contains("--producer.config"), "{e}");
        let e = parse(&[]).unwrap_err();
        assert!(e.0.contains("missing required options"), "{e}");
    }

    #[test]
    fn numbers_are_validated() {
        for (opt, bad) in [("--num.streams", "0"), ("--num.producers", "x"), ("--queue.size", "-1"), ("--queue.byte.size", "0")] {
            let e = parse(&with(&["--whitelist", "x", opt, bad])).unwrap_err();
            assert!(e.0.contains(opt), "{opt}: {e}");
        }
        let o =
            run_with(&["--whitelist", "x", "--num.producers", "4", "--queue.size", "7", "--queue.byte.size", "65536", "--offset.commit.interval.ms", "250"]);
        assert_eq!((o.num_producers, o.queue_size, o.queue_byte_size, o.offset_commit_interval_ms), (4, 7, 65536, Some(250)));
        assert_eq!(run_with(&["--whitelist", "x"]).queue_byte_size, DEFAULT_QUEUE_BYTE_SIZE);
        let e = parse(&with(&["--whitelist", "x", "--offset.commit.interval.ms", "soon"])).unwrap_err();
        assert!(e.0.contains("--offset.commit.interval.ms"), "{e}");
    }

    #[test]
    fn abort_on_send_failure_is_scala_to_boolean() {
        assert!(!run_with(&["--whitelist", "x", "--abort.on.send.failure", "FALSE"]).abort_on_send_failure);
        assert!(run_with(&["--whitelist", "x", "--abort.on.send.failure", "True"]).abort_on_send_failure);
        let e = parse(&with(&["--whitelist", "x", "--abort.on.send.failure", "yes"])).unwrap_err();
        assert!(e.0.contains("--abort.on.send.failure 'yes'"), "{e}");
    }

    #[test]
    fn handlers() {
        let o = run_with(&["--whitelist", "x", "--message.handler", "topic-prefix", "--message.handler.args", "dr."]);
        assert_eq!(o.handler, HandlerSpec { name: "topic-prefix".into(), args: Some("dr.".into()) });
        let e = parse(&with(&["--whitelist", "x", "--message.handler", "com.example.MyHandler"])).unwrap_err();
        assert!(e.0.contains("Java handler classes cannot be loaded") && e.0.contains("topic-rename"), "{e}");
    }

    #[test]
    fn beyond_mm1_options() {
        let o = run_with(&["--whitelist", "x"]);
        assert_eq!(o.beyond, BeyondOptions::default());
        assert!(o.beyond.create_topics && o.beyond.sync_partitions, "{o:?}");
        assert!(!o.beyond.provenance, "the target's records are the source's, with nothing added, unless asked");
        assert!(run_with(&["--whitelist", "x", "--provenance.header", "true"]).beyond.provenance);
        let o = run_with(&[
            "--whitelist",
            "x",
            "--create.topics=false",
            "--sync.partitions",
            "FALSE",
            "--provenance.header",
            "false",
            "--throttle.records.per.sec",
            "500",
            "--throttle.bytes.per.sec=1000000",
        ]);
        assert_eq!(
            o.beyond,
            BeyondOptions {
                create_topics: false,
                sync_partitions: false,
                provenance: false,
                throttle_records_per_sec: Some(500),
                throttle_bytes_per_sec: Some(1_000_000),
                checkpoints: CheckpointOptions::default(),
            }
        );
        let e = parse(&with(&["--whitelist", "x", "--create.topics", "no"])).unwrap_err();
        assert!(e.0.contains("--create.topics 'no'"), "{e}");
        let e = parse(&with(&["--whitelist", "x", "--throttle.bytes.per.sec", "0"])).unwrap_err();
        assert!(e.0.contains("--throttle.bytes.per.sec '0'"), "{e}");
        let e = parse(&with(&["--whitelist", "x", "--throttle.records.per.sec", "1k"])).unwrap_err();
        assert!(e.0.contains("--throttle.records.per.sec '1k'"), "{e}");
    }

    #[test]
    fn rebalance_listener_is_a_clear_error() {
        let e = parse(&with(&["--whitelist", "x", "--consumer.rebalance.listener", "com.x.L"])).unwrap_err();
        assert!(e.0.contains("--consumer.rebalance.listener com.x.L") && e.0.contains("cannot be loaded"), "{e}");
        let e = parse(&with(&["--whitelist", "x", "--rebalance.listener.args", "a"])).unwrap_err();
        assert!(e.0.contains("--rebalance.listener.args"), "{e}");
    }

    #[test]
    fn no_op_flags_are_noticed() {
        let o = run_with(&["--whitelist", "x", "--new.consumer", "--new.producer"]);
        assert_eq!(o.notices.iter().filter(|n| n.contains("has no effect")).count(), 2);
    }

    #[test]
    fn unknown_and_abbreviated_options_are_errors() {
        let e = parse(&with(&["--whitel", "x"])).unwrap_err();
        assert!(e.0.contains("--whitel"), "{e}");
        let e = parse(&with(&["--whitelist", "x", "--bogus", "1"])).unwrap_err();
        assert!(e.0.contains("--bogus"), "{e}");
    }

    #[test]
    fn stray_words_are_ignored_with_a_notice() {
        let o = run_with(&["--whitelist", "a", "b"]);
        assert_eq!(o.include.as_deref(), Some("a"));
        assert!(o.notices.iter().any(|n| n.contains("stray argument 'b'")), "{:?}", o.notices);
    }

    #[test]
    fn help_version_demo() {
        match parse(&args(&["--help"])).unwrap() {
            Invocation::Print(s) => assert!(s.contains("--consumer.config") && s.contains("--whitelist")),
            other => panic!("{other:?}"),
        }
        match parse(&args(&["-version"])).unwrap() {
            Invocation::Print(s) => assert!(s.starts_with("mirror-maker ")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse(&args(&["--demo"])).unwrap(), Invocation::Demo));
    }

    #[test]
    fn every_option_is_defined_once_and_its_help_states_its_default() {
        let mut names: Vec<&str> = OPTIONS.iter().map(|o| o.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len(), "an option is listed twice");
        for option in OPTIONS {
            assert!(option.help_states_default(), "--{}: the help must show {{default}} exactly when the option has a default", option.name());
        }
        let help = command().render_long_help().to_string();
        assert!(!help.contains("{default}"), "{help}");
        assert!(help.contains("Default 2097152 (2 MiB).") && help.contains("identity (default)"), "{help}");
    }

    #[test]
    fn spellings_mm1_accepted() {
        assert_eq!(spelling("--whitelist"), Spelling::AsGiven);
        assert_eq!(spelling("x"), Spelling::AsGiven);
        assert_eq!(spelling("-bogus"), Spelling::AsGiven);
        assert_eq!(spelling("-whitelist=x"), Spelling::Joptsimple("--whitelist=x".into()));
        assert_eq!(spelling("---new.consumer"), Spelling::Joptsimple("--new.consumer".into()));
        assert_eq!(spelling("\u{2013}whitelist"), Spelling::Typographic("--whitelist".into()));
    }
}
