//! What [`super::translate`] does once every line is read: one name per
//! setting where librdkafka has aliases, the Java clients' defaults where
//! librdkafka's differ, MM1's no-loss defaults per role (each user override
//! of one logged, as MM1 did), and the combinations librdkafka would refuse
//! with a bare message, refused here with the keys and the fix.

use crate::front::properties::{ConfigError, PropertiesFile};
use crate::kafka::settings::{ClientSettings, Origin, Role};

/// librdkafka's aliases (Java or 0.8 name, librdkafka name): setting both
/// makes the result depend on hash order, so one of each pair is kept.
const ALIASES: &[(&str, &str)] = &[
    ("linger.ms", "queue.buffering.max.ms"),
    ("retries", "message.send.max.retries"),
    ("acks", "request.required.acks"),
    ("delivery.timeout.ms", "message.timeout.ms"),
    ("compression.type", "compression.codec"),
    ("max.partition.fetch.bytes", "fetch.message.max.bytes"),
    ("bootstrap.servers", "metadata.broker.list"),
    ("sasl.mechanism", "sasl.mechanisms"),
];

/// Keeps a file's value over a default, and the later of two file lines
/// (as Java keeps the last of a repeated key).
pub(super) fn one_name_per_setting(s: &mut ClientSettings) {
    let line = |o: &Origin| match o {
        Origin::File { at, .. } => at.rsplit(':').next().and_then(|l| l.parse::<usize>().ok()),
        Origin::Default(_) => None,
    };
    for (a, b) in ALIASES {
        let (Some((_, oa)), Some((_, ob))) = (s.entries.get(*a), s.entries.get(*b)) else { continue };
        let (la, lb) = (line(oa), line(ob));
        let drop = match (la, lb) {
            (None, _) => a,
            (_, None) => b,
            (Some(x), Some(y)) => {
                let (keep, drop, dl) = if x > y { (a, b, y) } else { (b, a, x) };
                s.warnings.push(format!("{}: {drop} (line {dl}) and {keep} are the same setting; the later line, {keep}, is used", s.path.display()));
                drop
            }
        };
        s.entries.remove(*drop);
    }
}

/// Where librdkafka's defaults differ from the Java clients', the Java value,
/// so a file means what it meant under Java MirrorMaker.
pub(super) fn java_defaults(s: &mut ClientSettings) {
    s.default("reconnect.backoff.ms", "50", "Java client default");
    s.default("connections.max.idle.ms", "540000", "Java client default (librdkafka: never)");
    match s.role {
        Role::Consumer => {
            s.default("socket.timeout.ms", "30000", "Java consumer request.timeout.ms default");
            // Java subscribes MM1's pattern, which never creates topics; librdkafka's literal
            // subscription would re-create a topic deleted on the source.
            s.default("allow.auto.create.topics", "false", "MM1 subscribed by pattern, which never creates source topics");
            // Chosen by measurement (scripts/bench, README Performance): librdkafka's
            // 64 MiB prefetch made up most of the mirror's memory without speeding it
            // up, and its 1 s back-off after a full prefetch queue stalled small ones.
            s.default("queued.max.messages.kbytes", "4096", "measured: a 4 MiB prefetch per stream keeps pace with the producers at a third of the memory");
            // The byte bound alone let some 40,000 records of 100 B queue, each
            // with librdkafka's own op around it.
            s.default(
                "queued.min.messages",
                "5000",
                "measured: a 5,000-record prefetch took a quarter off the memory at 100 B and kept pace (librdkafka: 100000)",
            );
            s.default("fetch.queue.backoff.ms", "10", "measured: fetch again 10 ms after the prefetch queue drains (librdkafka: 1000)");
        }
        Role::Admin => {}
        Role::Producer => {
            // Batching decides only how records are grouped into requests, never
            // what is delivered, so these follow measurement rather than Java:
            // Java's linger.ms=0 and 16 KiB batches halved throughput and doubled
            // CPU per record against librdkafka's own defaults (README Performance).
            s.default("linger.ms", "5", "measured: librdkafka's default; Java's 0 halves throughput");
            // Unless the file's batch.size=0 asked for no batching at all.
            if !matches!(s.entries.get("batch.num.messages"), Some((_, Origin::File { key, .. })) if key == "batch.size") {
                s.default("batch.size", "1000000", "measured: librdkafka's default; Java's 16384 halves throughput");
            }
            // Bytes alone (Java's buffer.memory) let 8 MiB of 100 B records
            // become some 80,000 queued messages, each with librdkafka's own
            // few hundred bytes of bookkeeping: peak RSS 107-115 MiB, and
            // 4.2-5.1 us of CPU per record against 2.7-3.3 us at 10,000
            // (2M x 100 B, interleaved runs). At 1 KiB the byte limit binds
            // first and nothing changes.
            s.default("queue.buffering.max.messages", "10000", "measured: 10,000 records in the send buffer keep pace; more only cost memory and CPU");
            // librdkafka fails the records of a topic its metadata does not
            // show after this long (30 s by default). A broker bringing up
            // thousands of new partitions (the topic sync creating a new
            // target's topics) showed the last ones after more than 30 s,
            // and a 5,000-topic start stopped on UnknownTopicOrPartition.
            s.default(
                "topic.metadata.propagation.max.ms",
                "300000",
                "a broker bringing up thousands of new topics shows the last ones after minutes; records wait for them (librdkafka: 30000)",
            );
        }
    }
    // librdkafka refuses max < min; Java quietly uses the larger.
    let num = |s: &ClientSettings, k: &str| s.get(k).and_then(|v| v.parse::<i64>().ok());
    // Java runs with a poll interval below the session timeout (the broker
    // then drops a member that stops polling sooner); librdkafka refuses it
    // at client creation, so the interval is raised to the session timeout,
    // which never drops a member Java would have kept.
    // 45000 is the session timeout of both when the file sets none.
    if let (Some(poll), session) = (num(s, "max.poll.interval.ms"), num(s, "session.timeout.ms").unwrap_or(45_000)) {
        if poll < session && s.role == Role::Consumer {
            let at = |k: &str| match s.entries.get(k) {
                Some((_, Origin::File { at, .. })) => format!("{at}: "),
                Some(_) => String::new(),
                None => "the default ".into(),
            };
            s.warnings.push(format!(
                "{}max.poll.interval.ms={poll} is below {}session.timeout.ms={session}, which librdkafka refuses (Java does not); \
                 using max.poll.interval.ms={session}",
                at("max.poll.interval.ms"),
                at("session.timeout.ms")
            ));
            s.set(
                "max.poll.interval.ms",
                session.to_string(),
                Origin::Default("raised to session.timeout.ms (librdkafka requires max.poll.interval.ms >= session.timeout.ms)"),
            );
        }
    }
    if let (Some(min), Some(max)) = (num(s, "reconnect.backoff.ms"), num(s, "reconnect.backoff.max.ms")) {
        if max < min {
            s.notices.push(format!("reconnect.backoff.max.ms={max} is below reconnect.backoff.ms={min}; using {min} for both, as Java does"));
            s.set("reconnect.backoff.max.ms", min.to_string(), Origin::Default("raised to reconnect.backoff.ms (librdkafka requires max >= min)"));
        }
    }
}

/// Combinations librdkafka would refuse at client creation with a bare
/// message; refused here with the keys and the fix.
pub(super) fn check_combinations(s: &ClientSettings) -> Result<(), ConfigError> {
    let origin = |k: &str| match s.entries.get(k) {
        Some((v, Origin::File { at, key })) => format!("{at}: {key}={v}"),
        Some((v, Origin::Default(_))) => format!("{k}={v} (default)"),
        None => k.to_string(),
    };
    let num = |k: &str| s.get(k).and_then(|v| v.parse::<f64>().ok());
    let timeout = num("delivery.timeout.ms").or_else(|| num("message.timeout.ms"));
    if let (Some(t), Some(linger)) = (timeout, num("linger.ms").or_else(|| num("queue.buffering.max.ms"))) {
        if t > 0.0 && t <= linger {
            let k = if s.entries.contains_key("delivery.timeout.ms") { "delivery.timeout.ms" } else { "message.timeout.ms" };
            // Two keys, each with its own place: the text names both.
            return Err(
                ConfigError::new(format!("{} must be larger than {}: records would time out before they are sent", origin(k), origin("linger.ms"))).with_key(k)
            );
        }
    }
    if s.get("group.protocol").is_some_and(|g| g.eq_ignore_ascii_case("consumer")) {
        for k in ["session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"] {
            if let Some((_, Origin::File { .. })) = s.entries.get(k) {
                return Err(ConfigError::new(format!("{}: with group.protocol=consumer the broker decides this", origin(k)))
                    .with_key(k)
                    .with_fix("remove the line (or use group.protocol=classic)"));
            }
        }
    }
    Ok(())
}

pub(super) fn consumer_defaults(file: &PropertiesFile, s: &mut ClientSettings) -> Result<(), ConfigError> {
    s.group_id = s.get("group.id").map(str::to_string);
    if s.group_id.is_none() {
        return Err(ConfigError::in_file(&file.path, "group.id is missing")
            .with_key("group.id")
            .with_fix("MirrorMaker needs a consumer group to commit its progress. Add e.g. 'group.id=mirror-maker'"));
    }
    if !s.entries.contains_key("auto.offset.reset") {
        s.notices.push(format!(
            "{}: auto.offset.reset is not set; using earliest so that nothing written before the group's first commit is skipped",
            file.path.display()
        ));
    }
    s.default("auto.offset.reset", "earliest", "mirror-maker default: nothing skipped before the first commit");
    // Commits are ours, after the target acknowledged; never the client's own.
    s.default("enable.auto.commit", "false", "MM1 no-loss default: the mirror commits only what the target acknowledged");
    s.set("enable.auto.offset.store", "false", Origin::Default("mirror-maker: commit only after the target acknowledged"));
    s.default("isolation.level", "read_uncommitted", "Java consumer default (MM1 mirrored every record)");
    if !s.get("group.protocol").is_some_and(|g| g.eq_ignore_ascii_case("consumer")) {
        s.default("partition.assignment.strategy", "range", "Java MM1 default: lets Java MM1 instances share the group");
    }
    s.default("check.crcs", "true", "Java consumer default");
    s.default("reconnect.backoff.max.ms", "1000", "Java client default: reconnect within a second of a broker's return");
    Ok(())
}

pub(super) fn producer_defaults(s: &mut ClientSettings) {
    let acks_all = s.get("acks").or_else(|| s.get("request.required.acks")).is_none_or(|a| a == "all" || a == "-1");
    let warn_override = |s: &mut ClientSettings, key: &str, expected: &[&str], shown_default: &str| {
        if let Some((v, Origin::File { at, key: orig })) = s.entries.get(key).cloned() {
            if !expected.contains(&v.as_str()) {
                s.warnings.push(format!(
                    "{at}: Property {orig} is overridden to {v} - data loss or message reordering is possible (the no-loss default is {shown_default})"
                ));
            }
        }
    };
    warn_override(s, "acks", &["all", "-1"], "all");
    warn_override(s, "request.required.acks", &["all", "-1"], "all");
    warn_override(s, "delivery.timeout.ms", &["0", "2147483647"], "infinite");
    warn_override(s, "message.timeout.ms", &["0", "2147483647"], "infinite");
    warn_override(s, "enable.idempotence", &["true"], "true");
    if !s.entries.contains_key("request.required.acks") {
        s.default("acks", "all", "MM1 no-loss default");
    }
    if !s.entries.contains_key("message.timeout.ms") {
        s.default("delivery.timeout.ms", "0", "MM1 no-loss default: retry forever");
    }
    if !s.entries.contains_key("message.send.max.retries") {
        s.default("retries", "2147483647", "MM1 no-loss default");
    }
    let in_flight: Option<i64> = s.get("max.in.flight.requests.per.connection").and_then(|v| v.parse().ok());
    let retries_on = s.get("retries").or_else(|| s.get("message.send.max.retries")).is_none_or(|r| r != "0");
    if acks_all && retries_on && in_flight.is_none_or(|n| n <= 5) {
        s.default("enable.idempotence", "true", "keeps per-partition order with several requests in flight, no duplicates from retries");
    }
    if s.get("enable.idempotence") == Some("true") {
        s.default("max.in.flight.requests.per.connection", "5", "Java default with idempotence");
    } else {
        s.default("max.in.flight.requests.per.connection", "1", "MM1 default: keeps order without idempotence");
    }
    s.default("partitioner", "murmur2_random", "Java DefaultPartitioner placement of keyed records");
    s.default("message.max.bytes", "1048576", "Java max.request.size default");
    s.default("queue.buffering.max.kbytes", "4096", "measured: a 4 MiB send buffer keeps pace at an eighth of Java buffer.memory's 32 MiB");
    s.default("reconnect.backoff.max.ms", "1000", "Java client default: reconnect within a second of a broker's return");
}

/// An admin client's: the Java admin client's defaults where librdkafka's differ.
pub(super) fn admin_defaults(s: &mut ClientSettings) {
    s.default("socket.timeout.ms", "30000", "Java admin client request.timeout.ms default");
    s.default("reconnect.backoff.max.ms", "1000", "Java client default: reconnect within a second of a broker's return");
}
