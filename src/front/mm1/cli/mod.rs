//! Command-line parsing for both MirrorMaker 1 eras (0.8 and 0.9–3.9).
//!
//! Two stages, as ripgrep does: [`parse`] turns the raw argument list into
//! [`Options`] (plain values, validated, no I/O), and the pipeline later
//! builds clients, filters and channels from them.
//!
//! Each option is defined once, in the table of [`table`] (`OPTIONS`): its name,
//! its help, its default and how its value is read and checked. The clap
//! command, the spellings MM1 accepted and the reading into [`Options`] all
//! come from that one definition.
//!
//! MM1 used joptsimple, which accepts `--opt value`, `--opt=value` and
//! `-opt value`, and takes the next token as the value even when it starts
//! with a dash. Commands copied from web pages also arrive with en dashes
//! (`–whitelist`) and curly quotes (`”.*”`). [`normalise_args`] ([`spelling`]) rewrites all
//! of these into the form clap understands and reports every rewrite, so the
//! user can fix the command line for good.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::ArgMatches;

mod defaults;
mod error;
mod kinds;
mod spelling;
mod table;

pub use defaults::{
    DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_OFFSET_COMMIT_INTERVAL_MS, DEFAULT_QUEUE_BYTE_SIZE, DEFAULT_STATS_INTERVAL_MS, DEFAULT_TOPIC_REFRESH_INTERVAL_MS,
};
pub use error::UsageError;
pub use kinds::HANDLERS;
pub use spelling::normalise_args;
use table::*;

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
    /// `--exactly.once`, with `--transaction.interval.ms`.
    pub exactly_once: Option<u64>,
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
            exactly_once: None,
        }
    }
}

pub use crate::plan::handler::HandlerSpec;

/// What the process should do.
#[derive(Debug)]
pub enum Invocation {
    Run(Options),
    /// `--mm2.config`: a MirrorMaker 2 file (checked only, with `--check-config`).
    Mm2(Mm2Options),
    /// `--check-config`: load, translate, connect and report; mirror nothing.
    Check(Options),
    /// `--connect.distributed`: a Connect worker file.
    Connect(PathBuf),
    /// `--connect.standalone`: a standalone worker file, then connector files.
    ConnectStandalone(Vec<PathBuf>),
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

/// `--exactly.once` and its interval; refused where a transaction cannot
/// keep its promise.
fn exactly_once(m: &ArgMatches) -> Result<Option<u64>, UsageError> {
    let interval = TRANSACTION_INTERVAL_MS.read(m)?;
    if !EXACTLY_ONCE.read(m)? {
        if TRANSACTION_INTERVAL_MS.given(m).is_some() {
            return Err(UsageError::of(TRANSACTION_INTERVAL_MS.name, "--transaction.interval.ms applies only with --exactly.once true"));
        }
        return Ok(None);
    }
    let refuse = |why: &str| Err(UsageError::of(EXACTLY_ONCE.name, format!("--exactly.once true {why}")));
    if !CREATE_TOPICS.read(m)? {
        return refuse("needs --create.topics true: the target topics must have the source's partitions before anything is copied");
    }
    if !ABORT_ON_SEND_FAILURE.read(m)? {
        return refuse("needs --abort.on.send.failure true: a record the target refuses for good cannot be skipped inside a transaction");
    }
    if THROTTLE_RECORDS_PER_SEC.given(m).is_some() || THROTTLE_BYTES_PER_SEC.given(m).is_some() {
        return refuse("does not throttle yet: leave out --throttle.records.per.sec and --throttle.bytes.per.sec");
    }
    Ok(Some(interval))
}

/// Parses the arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    if args.is_empty() {
        return Err(UsageError::of(
            CONSUMER_CONFIG.name,
            format!("missing required options --{} and --{}\n\n{}", CONSUMER_CONFIG.name, PRODUCER_CONFIG.name, command().render_usage()),
        ));
    }
    let (args, mut notices) = normalise_args(args);
    let argv = std::iter::once(OsString::from("mirror-maker")).chain(args.iter().map(OsString::from));
    let m = command().try_get_matches_from(argv).map_err(|e| UsageError::new(clap_message(&e)))?;

    if let Some(answer) = answer_at_once(&m) {
        return Ok(answer);
    }
    if let Some(config) = CONNECT_DISTRIBUTED.read(&m) {
        return only_option(&m, CONNECT_DISTRIBUTED.name).map(|()| Invocation::Connect(config));
    }
    let standalone = CONNECT_STANDALONE.read(&m);
    if !standalone.is_empty() {
        return only_option(&m, CONNECT_STANDALONE.name).map(|()| Invocation::ConnectStandalone(standalone.into_iter().map(PathBuf::from).collect()));
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
            exactly_once: exactly_once(m)?,
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
        return Err(UsageError::of(
            other,
            format!(
                "--{other} does not apply with --{}: the MirrorMaker 2 file sets clusters, topics and client settings itself; remove --{other}",
                MM2_CONFIG.name
            ),
        ));
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

/// `name` is the only option given: it says everything itself.
fn only_option(m: &ArgMatches, name: &str) -> Result<(), UsageError> {
    match m.ids().map(|id| id.as_str()).find(|id| *id != name && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)) {
        Some(other) => Err(UsageError::of(other, format!("--{other} does not apply with --{name}: the worker file says everything; remove --{other}"))),
        None => Ok(()),
    }
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
        return Err(UsageError::of(
            INCLUDE.name,
            "include list must be specified: add --whitelist REGEX (or --include REGEX), e.g. --whitelist '.*' to mirror every topic",
        ));
    }
    // Checked here, before any file is read, so a bad pattern is the first
    // thing reported; the real filter is built per source later.
    crate::plan::filter::TopicFilter::new(include.as_deref(), exclude.as_deref(), true).map_err(|e| UsageError::of(INCLUDE.name, e.to_string()))?;
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
mod tests;
