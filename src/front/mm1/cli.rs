//! Command-line parsing for both MirrorMaker 1 eras (0.8 and 0.9–3.9).
//!
//! Two stages, as ripgrep does: [`parse`] turns the raw argument list into
//! [`Options`] (plain values, validated, no I/O), and the pipeline later
//! builds clients, filters and channels from them.
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

/// Every long option MM1 or we accept, with whether it takes a value.
/// Used to recognise the single-dash and dash-mangled spellings.
const LONG_OPTIONS: &[(&str, bool)] = &[
    ("consumer.config", true),
    ("producer.config", true),
    ("whitelist", true),
    ("include", true),
    ("blacklist", true),
    ("num.streams", true),
    ("num.producers", true),
    ("queue.size", true),
    ("queue.byte.size", true),
    ("offset.commit.interval.ms", true),
    ("abort.on.send.failure", true),
    ("message.handler", true),
    ("message.handler.args", true),
    ("consumer.rebalance.listener", true),
    ("rebalance.listener.args", true),
    ("new.consumer", false),
    ("new.producer", false),
    ("topic.refresh.interval.ms", true),
    ("drain.timeout.ms", true),
    ("stats.interval.ms", true),
    ("pid.file", true),
    ("log.file", true),
    ("metrics.port", true),
    ("metrics.bind", true),
    ("create.topics", true),
    ("sync.partitions", true),
    ("provenance.header", true),
    ("throttle.records.per.sec", true),
    ("throttle.bytes.per.sec", true),
    ("demo", false),
    ("check-config", false),
    ("accept.zookeeper.offsets.loss", false),
    ("help", false),
    ("version", false),
];

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
    pub drain_timeout_ms: u64,
    /// 0 turns the periodic stats line off.
    pub stats_interval_ms: u64,
    pub pid_file: Option<PathBuf>,
    /// Log here instead of stderr; reopened on SIGHUP (logrotate).
    pub log_file: Option<PathBuf>,
    /// The Prometheus endpoint's port (off when `None`) and address.
    pub metrics_port: Option<u16>,
    pub metrics_bind: String,
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
            num_streams: 1,
            num_producers: 1,
            queue_size: 10_000,
            queue_byte_size: DEFAULT_QUEUE_BYTE_SIZE,
            offset_commit_interval_ms: None,
            abort_on_send_failure: true,
            handler: HandlerSpec { name: "identity".into(), args: None },
            topic_refresh_interval_ms: DEFAULT_TOPIC_REFRESH_INTERVAL_MS,
            drain_timeout_ms: DEFAULT_DRAIN_TIMEOUT_MS,
            stats_interval_ms: DEFAULT_STATS_INTERVAL_MS,
            pid_file: None,
            log_file: None,
            metrics_port: None,
            metrics_bind: "127.0.0.1".into(),
            beyond: BeyondOptions::default(),
            notices: Vec::new(),
            accept_zookeeper_offsets_loss: false,
        }
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
}

impl Default for BeyondOptions {
    fn default() -> Self {
        // No provenance header by default: the target's records are the
        // source's, byte for byte, as MM1 wrote them; active/active turns it on.
        BeyondOptions { create_topics: true, sync_partitions: true, provenance: false, throttle_records_per_sec: None, throttle_bytes_per_sec: None }
    }
}

fn beyond_options(m: &ArgMatches) -> Result<BeyondOptions, UsageError> {
    let defaults = BeyondOptions::default();
    let flag = |name: &str, default: bool, what: &str| -> Result<bool, UsageError> {
        match m.get_one::<String>(name) {
            None => Ok(default),
            Some(v) => parse_bool(v).ok_or_else(|| UsageError(format!("--{name} '{v}' is not a boolean; write true or false ({what})"))),
        }
    };
    let rate = |name: &str, unit: &str| -> Result<Option<u64>, UsageError> {
        match m.get_one::<String>(name) {
            None => Ok(None),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n >= 1 => Ok(Some(n)),
                _ => Err(UsageError(format!("--{name} '{v}' must be a whole number of {unit} per second, at least 1 (leave it out for no limit)"))),
            },
        }
    };
    Ok(BeyondOptions {
        create_topics: flag("create.topics", defaults.create_topics, "false leaves topic creation to the target broker, as MM1 did")?,
        sync_partitions: flag("sync.partitions", defaults.sync_partitions, "false: partitions added at the source are not added on the target")?,
        provenance: flag(
            "provenance.header",
            defaults.provenance,
            "true stamps each record with its source cluster and stops loops between two mirrors running in opposite directions",
        )?,
        throttle_records_per_sec: rate("throttle.records.per.sec", "records")?,
        throttle_bytes_per_sec: rate("throttle.bytes.per.sec", "bytes")?,
    })
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

/// A built-in message handler and its argument string.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerSpec {
    pub name: String,
    pub args: Option<String>,
}

/// What the process should do.
#[derive(Debug)]
pub enum Invocation {
    Run(Options),
    /// `--check-config`: load, translate, connect and report; mirror nothing.
    Check(Options),
    Demo,
    /// Text for stdout, then exit 0 (`--help`, `--version`).
    Print(String),
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

fn command() -> Command {
    let value =
        |name: &'static str, help: &'static str| Arg::new(name).long(name).value_name("VALUE").help(help).allow_hyphen_values(true).action(ArgAction::Set);
    Command::new("mirror-maker")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Mirror Kafka topics from one or more source clusters to a target cluster, losing nothing.\nA drop-in replacement for kafka-mirror-maker.sh (kafka.tools.MirrorMaker).")
        .disable_version_flag(true)
        .disable_help_flag(true)
        .arg(
            Arg::new("consumer.config")
                .long("consumer.config")
                .value_name("FILE")
                .help("Consumer properties of a source cluster (its group.id is the group). Repeat for several source clusters.")
                .allow_hyphen_values(true)
                .action(ArgAction::Append),
        )
        .arg(value("producer.config", "Producer properties of the target cluster.").value_name("FILE"))
        .arg(value("whitelist", "Topics to mirror: a Java regex, full match; ',' separates alternatives. Deprecated name of --include.").value_name("REGEX"))
        .arg(value("include", "Topics to mirror (same as --whitelist, the Kafka 3.x name).").value_name("REGEX"))
        .arg(value("blacklist", "Topics never to mirror; with --include: include minus exclude.").value_name("REGEX"))
        .arg(value("num.streams", "Consumer threads per source cluster, each with its own consumer in the group. Default 1.").value_name("N"))
        .arg(value("num.producers", "Producer workers writing to the target, each with its own producer. Default 1.").value_name("N"))
        .arg(value("queue.size", "Records buffered per producer worker before consumers pause (backpressure). Default 10000.").value_name("N"))
        .arg(value("queue.byte.size", "Bytes of keys and values buffered per producer worker before consumers pause, beside --queue.size (whichever binds first). Default 2097152 (2 MiB).").value_name("BYTES"))
        .arg(value("offset.commit.interval.ms", "How often acknowledged offsets are committed to the source. Default 60000.").value_name("MS"))
        .arg(value("abort.on.send.failure", "true: a record the target rejects for good stops the mirror (exit 255); false: it is skipped, logged and counted. Default true.").value_name("BOOL"))
        .arg(value("message.handler", "Built-in handler: identity (default), topic-rename, topic-prefix, partition-preserving.").value_name("NAME"))
        .arg(value("message.handler.args", "Handler argument: topic-rename 'src:dst,src2:dst2'; topic-prefix 'prefix.'.").value_name("ARGS"))
        .arg(value("consumer.rebalance.listener", "Not supported (Java classes cannot be loaded).").value_name("CLASS").hide(true))
        .arg(value("rebalance.listener.args", "Not supported.").value_name("ARGS").hide(true))
        .arg(Arg::new("new.consumer").long("new.consumer").action(ArgAction::SetTrue).help("Accepted for compatibility; no effect."))
        .arg(Arg::new("new.producer").long("new.producer").action(ArgAction::SetTrue).help("Accepted for compatibility; no effect."))
        .arg(value("topic.refresh.interval.ms", "How often source topics are listed to find new matching topics. Default 30000.").value_name("MS"))
        .arg(value("drain.timeout.ms", "On shutdown or rebalance, how long to wait for in-flight records to reach the target. Default 60000.").value_name("MS"))
        .arg(value("stats.interval.ms", "How often a stats line (rates, lag, in flight, dropped) is logged; 0 turns it off. Default 30000.").value_name("MS"))
        .arg(value("log.file", "Write the log to this file (appending) instead of stderr; SIGHUP reopens it, for logrotate.").value_name("PATH"))
        .arg(value("pid.file", "Write the process id here and hold a lock on it: a second copy with the same file (e.g. from cron) exits at once with status 4.").value_name("PATH"))
        .arg(value("metrics.port", "Serve Prometheus metrics on this port at /metrics. Off by default.").value_name("PORT"))
        .arg(value("metrics.bind", "Address the metrics endpoint listens on. Default 127.0.0.1 (this host only).").value_name("ADDR"))
        .arg(value("create.topics", "Create a missing target topic like the source topic (partitions, replication up to the target's broker count, topic configs). false: the target broker decides, as with MM1. Default true.").value_name("BOOL"))
        .arg(value("sync.partitions", "When a source topic gains partitions, add them to the target topic. Default true.").value_name("BOOL"))
        .arg(value("provenance.header", "Stamp each record with header mirror-maker.source-cluster (the source cluster id) and never copy back a record that came from the target cluster, so A->B and B->A can run together (turn it on in both directions). Default false: the target's records are the source's, byte for byte.").value_name("BOOL"))
        .arg(value("throttle.records.per.sec", "Most records per second this process writes to the target (smooth; backpressure, nothing dropped). Default: no limit.").value_name("N"))
        .arg(value("throttle.bytes.per.sec", "Most key+value bytes per second this process writes to the target (smooth; backpressure, nothing dropped). Default: no limit.").value_name("N"))
        .arg(Arg::new("check-config").long("check-config").action(ArgAction::SetTrue).help(
            "Check the configuration and exit: load and translate every file, connect to each cluster, list the topics that would be mirrored \
             and every effective client setting with its origin. Consumes and commits nothing. Exit 0 if a run would start, 1 otherwise.",
        ))
        .arg(Arg::new("accept.zookeeper.offsets.loss").long("accept.zookeeper.offsets.loss").action(ArgAction::SetTrue).help(
            "Run with a consumer file that has offsets.storage=zookeeper: the group's ZooKeeper offsets are not read and partitions start \
             from auto.offset.reset. Without this option such a file is refused.",
        ))
        .arg(Arg::new("demo").long("demo").action(ArgAction::SetTrue).help("Run a self-contained demo: two in-process mock clusters, a real mirror between them, and a check."))
        .arg(Arg::new("help").long("help").action(ArgAction::SetTrue).help("Print this help."))
        .arg(Arg::new("version").long("version").action(ArgAction::SetTrue).help("Print the version."))
        .arg(Arg::new("stray").num_args(0..).action(ArgAction::Append).hide(true).allow_hyphen_values(false))
}

/// The option name a dash-mangled or single-dash token stands for, if any.
fn known_option(name: &str) -> Option<(&'static str, bool)> {
    LONG_OPTIONS.iter().copied().find(|(n, _)| *n == name)
}

const DASHES: &[char] = &['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}'];
const CURLY_QUOTES: &[char] = &['\u{201C}', '\u{201D}', '\u{201E}', '\u{2018}', '\u{2019}', '\u{201A}', '\u{00AB}', '\u{00BB}'];

/// Rewrites joptsimple-style and typographically mangled arguments into
/// `--name[=value]` tokens. Returns the tokens and one notice per rewrite.
pub fn normalise_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::with_capacity(args.len());
    let mut notices = Vec::new();
    for arg in args {
        let mut fixed = arg.clone();
        // An en dash, em dash or minus sign at the start: a word processor's `--`.
        let trimmed = fixed.trim_start_matches(|c| DASHES.contains(&c) || c == '-');
        let lead = &fixed[..fixed.len() - trimmed.len()];
        if !lead.is_empty() {
            let (name, value) = match trimmed.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (trimmed, None),
            };
            if known_option(name).is_some() && lead != "--" {
                let rebuilt = match value {
                    Some(v) => format!("--{name}={v}"),
                    None => format!("--{name}"),
                };
                if lead.chars().any(|c| DASHES.contains(&c)) {
                    notices.push(format!("'{arg}' has a typographic dash (pasted from a web page?); read it as '{rebuilt}'"));
                }
                fixed = rebuilt;
            }
        }
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

/// Parses the arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    if args.is_empty() {
        return Err(UsageError(format!("missing required options --consumer.config and --producer.config\n\n{}", command().render_usage())));
    }
    let (args, mut notices) = normalise_args(args);
    let argv = std::iter::once(OsString::from("mirror-maker")).chain(args.iter().map(OsString::from));
    let m = command().try_get_matches_from(argv).map_err(|e| UsageError(clap_message(&e)))?;

    if m.get_flag("help") {
        return Ok(Invocation::Print(command().render_long_help().to_string()));
    }
    if m.get_flag("version") {
        return Ok(Invocation::Print(format!("mirror-maker {}\n", env!("CARGO_PKG_VERSION"))));
    }
    if m.get_flag("demo") {
        return Ok(Invocation::Demo);
    }
    if let Some(class) = m.get_one::<String>("consumer.rebalance.listener") {
        return Err(UsageError(format!(
            "--consumer.rebalance.listener {class}: Java rebalance listeners cannot be loaded by this native mirror. \
             Remove the option (and --rebalance.listener.args); on revocation, in-flight records are drained and committed before partitions are released."
        )));
    }
    if m.get_one::<String>("rebalance.listener.args").is_some() {
        return Err(UsageError("--rebalance.listener.args is only meaningful with --consumer.rebalance.listener, which is not supported; remove it.".into()));
    }
    for flag in ["new.consumer", "new.producer"] {
        if m.get_flag(flag) {
            notices.push(format!("--{flag} has no effect: the modern Kafka protocol is always used"));
        }
    }
    if let Some(stray) = m.get_many::<String>("stray") {
        for word in stray {
            notices.push(format!(
                "ignoring the stray argument '{word}' as MM1 did; if it was meant as part of a pattern, quote the whole pattern, e.g. --whitelist 'a|b'"
            ));
        }
    }

    let consumer_configs: Vec<PathBuf> = m.get_many::<String>("consumer.config").map(|v| v.map(PathBuf::from).collect()).unwrap_or_default();
    if consumer_configs.is_empty() {
        return Err(UsageError("missing required option --consumer.config FILE (the source cluster's consumer properties)".into()));
    }
    let producer_config = m
        .get_one::<String>("producer.config")
        .map(PathBuf::from)
        .ok_or_else(|| UsageError("missing required option --producer.config FILE (the target cluster's producer properties)".into()))?;

    let whitelist = m.get_one::<String>("whitelist").cloned();
    let include_opt = m.get_one::<String>("include").cloned();
    let include = match (include_opt, whitelist) {
        (Some(i), Some(w)) => {
            notices.push(format!("--whitelist '{w}' is ignored because --include '{i}' is given (as in Kafka 3.x)"));
            Some(i)
        }
        (i, w) => i.or(w),
    };
    let exclude = m.get_one::<String>("blacklist").cloned();
    if include.is_none() && exclude.is_none() {
        return Err(UsageError(
            "include list must be specified: add --whitelist REGEX (or --include REGEX), e.g. --whitelist '.*' to mirror every topic".into(),
        ));
    }

    // Checked here, before any file is read, so a bad pattern is the first
    // thing reported; the real filter is built per source later.
    crate::plan::filter::TopicFilter::new(include.as_deref(), exclude.as_deref(), true).map_err(|e| UsageError(e.to_string()))?;

    let num_streams = positive(&m, "num.streams", 1)?;
    let num_producers = positive(&m, "num.producers", 1)?;
    let queue_size = positive(&m, "queue.size", 10_000)?;
    let queue_byte_size = positive(&m, "queue.byte.size", DEFAULT_QUEUE_BYTE_SIZE)?;
    let offset_commit_interval_ms = optional_ms(&m, "offset.commit.interval.ms")?;
    let topic_refresh_interval_ms = optional_ms(&m, "topic.refresh.interval.ms")?.unwrap_or(DEFAULT_TOPIC_REFRESH_INTERVAL_MS);
    if topic_refresh_interval_ms == 0 {
        return Err(UsageError("--topic.refresh.interval.ms must be at least 1".into()));
    }
    let drain_timeout_ms = optional_ms(&m, "drain.timeout.ms")?.unwrap_or(DEFAULT_DRAIN_TIMEOUT_MS);
    let stats_interval_ms = optional_ms(&m, "stats.interval.ms")?.unwrap_or(DEFAULT_STATS_INTERVAL_MS);
    let pid_file = m.get_one::<String>("pid.file").map(PathBuf::from);
    let log_file = m.get_one::<String>("log.file").map(PathBuf::from);
    let metrics_port = match m.get_one::<String>("metrics.port") {
        None => None,
        Some(v) => Some(
            v.trim().parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| UsageError(format!("--metrics.port '{v}' must be a TCP port from 1 to 65535")))?,
        ),
    };
    let metrics_bind = m.get_one::<String>("metrics.bind").cloned().unwrap_or_else(|| "127.0.0.1".into());
    let abort_on_send_failure = match m.get_one::<String>("abort.on.send.failure") {
        None => true,
        Some(v) => parse_bool(v).ok_or_else(|| {
            UsageError(format!("--abort.on.send.failure '{v}' is not a boolean; write true (stop on a rejected record) or false (skip and count it)"))
        })?,
    };

    let handler = handler_spec(&m)?;
    let beyond = beyond_options(&m)?;
    let options = Options {
        consumer_configs,
        producer_config,
        include,
        exclude,
        num_streams,
        num_producers,
        queue_size,
        queue_byte_size,
        offset_commit_interval_ms,
        abort_on_send_failure,
        handler,
        topic_refresh_interval_ms,
        drain_timeout_ms,
        stats_interval_ms,
        pid_file,
        log_file,
        metrics_port,
        metrics_bind,
        beyond,
        notices,
        accept_zookeeper_offsets_loss: m.get_flag("accept.zookeeper.offsets.loss"),
    };
    Ok(if m.get_flag("check-config") { Invocation::Check(options) } else { Invocation::Run(options) })
}

/// Scala's `toBoolean`: true or false in any case, nothing else.
fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

fn positive(m: &ArgMatches, name: &str, default: usize) -> Result<usize, UsageError> {
    match m.get_one::<String>(name) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(UsageError(format!("--{name} '{v}' must be a whole number of at least 1"))),
        },
    }
}

fn optional_ms(m: &ArgMatches, name: &str) -> Result<Option<u64>, UsageError> {
    match m.get_one::<String>(name) {
        None => Ok(None),
        Some(v) => v.trim().parse::<u64>().map(Some).map_err(|_| UsageError(format!("--{name} '{v}' must be a whole number of milliseconds (0 or more)"))),
    }
}

fn handler_spec(m: &ArgMatches) -> Result<HandlerSpec, UsageError> {
    let args = m.get_one::<String>("message.handler.args").cloned();
    let name = match m.get_one::<String>("message.handler") {
        None => "identity".to_string(),
        Some(n) => n.trim().to_string(),
    };
    if !HANDLERS.contains(&name.as_str()) {
        let hint = if name.contains('.') && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            " Java handler classes cannot be loaded by this native mirror; pick the built-in that does the same job"
        } else {
            ""
        };
        return Err(UsageError(format!(
            "--message.handler '{name}' is not a built-in handler.{hint}: {} (topic-rename takes --message.handler.args 'src:dst,src2:dst2', topic-prefix takes the prefix)",
            HANDLERS.join(", ")
        )));
    }
    Ok(HandlerSpec { name, args })
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
        assert_eq!(o.drain_timeout_ms, 60_000);
        assert_eq!((o.stats_interval_ms, o.pid_file), (30_000, None));
        let o = run_with(&["--whitelist", ".*", "--stats.interval.ms", "0", "--pid.file=/run/mm.pid"]);
        assert_eq!((o.stats_interval_ms, o.pid_file), (0, Some(PathBuf::from("/run/mm.pid"))));
        assert_eq!((o.metrics_port, o.metrics_bind.as_str()), (None, "127.0.0.1"));
        let o = run_with(&["--whitelist", ".*", "--metrics.port", "9404", "--metrics.bind", "0.0.0.0"]);
        assert_eq!((o.metrics_port, o.metrics_bind.as_str()), (Some(9404), "0.0.0.0"));
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
                throttle_bytes_per_sec: Some(1_000_000)
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
}
