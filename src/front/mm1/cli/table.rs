//! The options, each defined once: name, help, default and how its value
//! is read (its kind, from [`super::kinds`]). The clap command, the
//! spellings MM1 accepted and the reading into [`super::Options`] all come
//! from this table.

use clap::{Arg, ArgAction, Command};

use super::defaults::{
    DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_OFFSET_COMMIT_INTERVAL_MS, DEFAULT_QUEUE_BYTE_SIZE, DEFAULT_STATS_INTERVAL_MS, DEFAULT_TOPIC_REFRESH_INTERVAL_MS,
};
use super::kinds::*;

pub(super) const CONSUMER_CONFIG: Opt<Files> = Opt::new(
    "consumer.config",
    "FILE",
    Files { what: "the source cluster's consumer properties" },
    "Consumer properties of a source cluster (its group.id is the group). Repeat for several source clusters.",
);
pub(super) const PRODUCER_CONFIG: Opt<File> =
    Opt::new("producer.config", "FILE", File { what: "the target cluster's producer properties" }, "Producer properties of the target cluster.");
pub(super) const WHITELIST: Opt<Text> =
    Opt::new("whitelist", "REGEX", Text, "Topics to mirror: a Java regex, full match; ',' separates alternatives. Deprecated name of --include.");
pub(super) const INCLUDE: Opt<Text> = Opt::new("include", "REGEX", Text, "Topics to mirror (same as --whitelist, the Kafka 3.x name).");
pub(super) const BLACKLIST: Opt<Text> = Opt::new("blacklist", "REGEX", Text, "Topics never to mirror; with --include: include minus exclude.");
pub(super) const NUM_STREAMS: Opt<Count> =
    Opt::new("num.streams", "N", Count { default: 1 }, "Consumer threads per source cluster, each with its own consumer in the group. Default {default}.");
pub(super) const NUM_PRODUCERS: Opt<Count> =
    Opt::new("num.producers", "N", Count { default: 1 }, "Producer workers writing to the target, each with its own producer. Default {default}.");
pub(super) const QUEUE_SIZE: Opt<Count> =
    Opt::new("queue.size", "N", Count { default: 10_000 }, "Records buffered per producer worker before consumers pause (backpressure). Default {default}.");
pub(super) const QUEUE_BYTE_SIZE: Opt<Count> = Opt::new(
    "queue.byte.size",
    "BYTES",
    Count { default: DEFAULT_QUEUE_BYTE_SIZE },
    "Bytes of keys and values buffered per producer worker before consumers pause, beside --queue.size (whichever binds first). Default {default} (2 MiB).",
);
pub(super) const OFFSET_COMMIT_INTERVAL_MS: Opt<MillisIfGiven> = Opt::new(
    "offset.commit.interval.ms",
    "MS",
    MillisIfGiven { default: DEFAULT_OFFSET_COMMIT_INTERVAL_MS },
    "How often acknowledged offsets are committed to the source. Default {default}.",
);
pub(super) const ABORT_ON_SEND_FAILURE: Opt<Bool> = Opt::new(
    "abort.on.send.failure",
    "BOOL",
    Bool { default: true, fix: "write true (stop on a rejected record) or false (skip and count it)" },
    "true: a record the target rejects for good stops the mirror (exit 255); false: it is skipped, logged and counted. Default {default}.",
);
pub(super) const MESSAGE_HANDLER: Opt<Handler> = Opt::new(
    "message.handler",
    "NAME",
    Handler { default: "identity" },
    "Built-in handler: {default} (default), topic-rename, topic-prefix, partition-preserving.",
);
pub(super) const MESSAGE_HANDLER_ARGS: Opt<Text> =
    Opt::new("message.handler.args", "ARGS", Text, "Handler argument: topic-rename 'src:dst,src2:dst2'; topic-prefix 'prefix.'.");
pub(super) const CONSUMER_REBALANCE_LISTENER: Opt<Refused> = Opt {
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
pub(super) const REBALANCE_LISTENER_ARGS: Opt<Refused> = Opt {
    hidden: true,
    ..Opt::new(
        "rebalance.listener.args",
        "ARGS",
        Refused { why: "is only meaningful with --consumer.rebalance.listener, which is not supported; remove it." },
        "Not supported.",
    )
};
pub(super) const NEW_CONSUMER: Opt<NoEffect> =
    Opt::flag("new.consumer", NoEffect { why: "the modern Kafka protocol is always used" }, "Accepted for compatibility; no effect.");
pub(super) const NEW_PRODUCER: Opt<NoEffect> =
    Opt::flag("new.producer", NoEffect { why: "the modern Kafka protocol is always used" }, "Accepted for compatibility; no effect.");
pub(super) const TOPIC_REFRESH_INTERVAL_MS: Opt<Millis> = Opt::new(
    "topic.refresh.interval.ms",
    "MS",
    Millis { default: DEFAULT_TOPIC_REFRESH_INTERVAL_MS, min: 1 },
    "How often source topics are listed to find new matching topics. Default {default}.",
);
pub(super) const DRAIN_TIMEOUT_MS: Opt<Millis> = Opt::new(
    "drain.timeout.ms",
    "MS",
    Millis { default: DEFAULT_DRAIN_TIMEOUT_MS, min: 0 },
    "On shutdown or rebalance, how long to wait for in-flight records to reach the target. Default {default}.",
);
pub(super) const STATS_INTERVAL_MS: Opt<Millis> = Opt::new(
    "stats.interval.ms",
    "MS",
    Millis { default: DEFAULT_STATS_INTERVAL_MS, min: 0 },
    "How often a stats line (rates, lag, in flight, dropped) is logged; 0 turns it off. Default {default}.",
);
pub(super) const LOG_FILE: Opt<Path> =
    Opt::new("log.file", "PATH", Path, "Write the log to this file (appending) instead of stderr; SIGHUP reopens it, for logrotate.");
pub(super) const PID_FILE: Opt<Path> = Opt::new(
    "pid.file",
    "PATH",
    Path,
    "Write the process id here and hold a lock on it: a second copy with the same file (e.g. from cron) exits at once with status 4.",
);
pub(super) const METRICS_PORT: Opt<Port> = Opt::new("metrics.port", "PORT", Port, "Serve Prometheus metrics on this port at /metrics. Off by default.");
pub(super) const METRICS_BIND: Opt<TextOr> =
    Opt::new("metrics.bind", "ADDR", TextOr { default: "127.0.0.1" }, "Address the metrics endpoint listens on. Default {default} (this host only).");
pub(super) const CREATE_TOPICS: Opt<Bool> = Opt::new(
    "create.topics",
    "BOOL",
    Bool { default: true, fix: "write true or false (false leaves topic creation to the target broker, as MM1 did)" },
    "Create a missing target topic like the source topic (partitions, replication up to the target's broker count, topic configs). \
     false: the target broker decides, as with MM1. Default {default}.",
);
pub(super) const EXACTLY_ONCE: Opt<Bool> = Opt::new(
    "exactly.once",
    "BOOL",
    Bool { default: false, fix: "write true or false (true copies exactly once, read the target with isolation.level=read_committed)" },
    "Copy exactly once: records and the positions they advance in one transaction on the target, so a consumer of the target with \
     isolation.level=read_committed sees every record once, through crashes and rebalances. Needs --create.topics true and \
     --abort.on.send.failure true. Default {default}.",
);
pub(super) const TRANSACTION_INTERVAL_MS: Opt<Millis> = Opt::new(
    "transaction.interval.ms",
    "MS",
    Millis { default: 100, min: 0 },
    "With --exactly.once: how often a transaction commits; records become visible to read_committed consumers when it does, so it \
     adds up to this much latency. 0: a transaction per read of what the source has ready. Default {default}.",
);
pub(super) const SYNC_PARTITIONS: Opt<Bool> = Opt::new(
    "sync.partitions",
    "BOOL",
    Bool { default: true, fix: "write true or false (false: partitions added at the source are not added on the target)" },
    "When a source topic gains partitions, add them to the target topic. Default {default}.",
);
pub(super) const PROVENANCE_HEADER: Opt<Bool> = Opt::new(
    "provenance.header",
    "BOOL",
    Bool {
        default: false,
        fix: "write true or false (true stamps each record with its source cluster and stops loops between two mirrors running in opposite directions)",
    },
    "Stamp each record with header mirror-maker.source-cluster (the source cluster id) and never copy back a record that came from the target cluster, \
     so A->B and B->A can run together (turn it on in both directions). Default {default}: the target's records are the source's, byte for byte.",
);
pub(super) const THROTTLE_RECORDS_PER_SEC: Opt<Rate> = Opt::new(
    "throttle.records.per.sec",
    "N",
    Rate { unit: "records" },
    "Most records per second this process writes to the target (smooth; backpressure, nothing dropped). Default: no limit.",
);
pub(super) const THROTTLE_BYTES_PER_SEC: Opt<Rate> = Opt::new(
    "throttle.bytes.per.sec",
    "N",
    Rate { unit: "bytes" },
    "Most key+value bytes per second this process writes to the target (smooth; backpressure, nothing dropped). Default: no limit.",
);
pub(super) const EMIT_CHECKPOINTS: Opt<Bool> = Opt::new(
    "emit.checkpoints",
    "BOOL",
    Bool { default: false, fix: "write true or false (true writes MirrorMaker 2's offset-syncs and checkpoints to the target)" },
    "Write MirrorMaker 2's offset-syncs (mm2-offset-syncs.<source alias>.internal) and checkpoints (<source alias>.checkpoints.internal) \
     to the target, so consumer groups can fail over to it at translated offsets (mirror-maker translate-offsets, or Java's \
     RemoteClusterUtils with IdentityReplicationPolicy). Needs --message.handler partition-preserving. Default {default}.",
);
pub(super) const SOURCE_ALIAS: Opt<Words> = Opt::new(
    "source.alias",
    "ALIAS",
    Words,
    "With --emit.checkpoints: each source cluster's name in the checkpoint topics, one per --consumer.config in their order. Default: source.",
);
pub(super) const TARGET_ALIAS: Opt<TextOr> =
    Opt::new("target.alias", "ALIAS", TextOr { default: "target" }, "With --emit.checkpoints: the target cluster's name. Default {default}.");
pub(super) const CHECKPOINT_GROUPS: Opt<TextOr> = Opt::new(
    "checkpoint.groups",
    "REGEX",
    TextOr { default: ".*" },
    "With --emit.checkpoints: the source consumer groups to checkpoint, comma-separated Java regexes as MirrorMaker 2's groups \
     (console-consumer-.*, connect-.* and __.* are always left out, as there). Default {default}.",
);
pub(super) const CHECKPOINT_INTERVAL_MS: Opt<Millis> = Opt::new(
    "checkpoint.interval.ms",
    "MS",
    Millis { default: 60_000, min: 1_000 },
    "With --emit.checkpoints: how often the groups' committed offsets are translated and written. Default {default}.",
);
pub(super) const SYNC_GROUP_OFFSETS: Opt<Bool> = Opt::new(
    "sync.group.offsets",
    "BOOL",
    Bool { default: false, fix: "write true or false" },
    "With --emit.checkpoints: also commit the translated offsets to each group on the target that has no active consumer there, \
     never moving one back (MirrorMaker 2's sync.group.offsets.enabled). Default {default}.",
);
pub(super) const CHECK_CONFIG: Opt<Flag> = Opt::flag(
    "check-config",
    Flag,
    "Check the configuration and exit: load and translate every file, connect to each cluster, list the topics that would be mirrored \
     and every effective client setting with its origin. Consumes and commits nothing. Exit 0 if a run would start, 1 otherwise.",
);
pub(super) const ACCEPT_ZOOKEEPER_OFFSETS_LOSS: Opt<Flag> = Opt::flag(
    "accept.zookeeper.offsets.loss",
    Flag,
    "Run with a consumer file that has offsets.storage=zookeeper: the group's ZooKeeper offsets are not read and partitions start \
     from auto.offset.reset. Without this option such a file is refused.",
);
pub(super) const MM2_CONFIG: Opt<Path> = Opt::new(
    "mm2.config",
    "FILE",
    Path,
    "Run a MirrorMaker 2 file (connect-mirror-maker.properties) instead of MM1 options: every enabled A->B flow in this process. \
     With it, only --clusters, --mm2.write.connect.offsets, --check-config and the operations options (log, pid, metrics, stats, drain) apply.",
);
pub(super) const CLUSTERS: Opt<Words> =
    Opt::new("clusters", "ALIAS", Words, "With --mm2.config: run only the flows whose target is one of these aliases, as MM2's --clusters does.");
pub(super) const MM2_WRITE_CONNECT_OFFSETS: Opt<Bool> = Opt::new(
    "mm2.write.connect.offsets",
    "BOOL",
    Bool { default: false, fix: "write true or false (true writes each flow's positions where Java MirrorMaker 2 reads them)" },
    "With --mm2.config: also write each flow's committed positions to Java MirrorMaker 2's Connect offsets (mm2-offsets.<source>.internal \
     on the target, created if missing) at every commit interval and at the stop, so Java MM2 started on the same file continues where \
     this stopped. Java's positions there are always read at start, whatever this says. Default {default}.",
);
pub(super) const CONNECT_DISTRIBUTED: Opt<Path> = Opt::new(
    "connect.distributed",
    "FILE",
    Path,
    "Run a Connect-compatible worker on a Connect worker file (connect-distributed.properties): Connect's REST API on `listeners` \
     (default http://:8083) runs MirrorMaker 2's three connectors, their configs kept in config.storage.topic. No other option applies.",
);
pub(super) const CONNECT_STANDALONE: Opt<Words> = Opt::new(
    "connect.standalone",
    "FILE",
    Words,
    "Run a Connect-compatible worker in standalone mode, as connect-standalone.sh: the worker file (connect-standalone.properties, with \
     offset.storage.file.filename), then connector files (Java properties or JSON) whose connectors start at once. Connect's REST API \
     on `listeners`; configs PUT there live in memory. No other option applies.",
);
pub(super) const DEMO: Opt<Flag> = Opt::flag("demo", Flag, "Run a self-contained demo: two in-process mock clusters, a real mirror between them, and a check.");
pub(super) const HELP: Opt<Flag> = Opt::flag("help", Flag, "Print this help.");
pub(super) const VERSION: Opt<Flag> = Opt::flag("version", Flag, "Print the version.");

/// Every option, in the order `--help` lists them.
pub(super) const OPTIONS: &[&dyn Spec] = &[
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
    &EXACTLY_ONCE,
    &TRANSACTION_INTERVAL_MS,
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
    &CONNECT_DISTRIBUTED,
    &CONNECT_STANDALONE,
    &DEMO,
    &HELP,
    &VERSION,
];

/// The clap command: every option of [`OPTIONS`], then the stray words MM1 ignored.
pub(super) fn command() -> Command {
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
pub(super) fn is_option(name: &str) -> bool {
    OPTIONS.iter().any(|option| option.name() == name)
}
