//! The special keys of the rule table ([`super::rules`]): one function each,
//! named after the key, for a key whose value or neighbours decide what
//! librdkafka gets. Kept apart from the table so the table reads as data.
//! Also what is settled once every line is read: the compression level of
//! the codec in use, the assignor list, the partitioner class.

use super::translation::Translation;
use super::values::{normalise_number, parse_java_bool, parse_long};
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::conf::{accepts, Refusal};
use crate::kafka::settings::{ClientSettings, Origin};

pub(super) fn send_buffer_bytes(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    socket_buffer(t, p, "socket.send.buffer.bytes")
}

pub(super) fn receive_buffer_bytes(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    socket_buffer(t, p, "socket.receive.buffer.bytes")
}

/// Java's -1 (the system's size) is librdkafka's 0.
fn socket_buffer(t: &mut Translation<'_>, p: &Property, to: &str) -> Result<(), ConfigError> {
    let v = parse_long(t.file, p)?.max(0);
    t.set(p, to, v.to_string());
    Ok(())
}

pub(super) fn client_dns_lookup(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    // Java < 2.6 had `default`, which is today's use_all_dns_ips.
    let v = if p.value.eq_ignore_ascii_case("default") { "use_all_dns_ips".to_string() } else { p.value.to_ascii_lowercase() };
    if let Err(Refusal::Invalid(msg)) = accepts("client.dns.lookup", &v) {
        return Err(ConfigError::at(t.file, p, format!("client.dns.lookup='{}' is not accepted: {msg}", p.value)));
    }
    t.set(p, "client.dns.lookup", v);
    Ok(())
}

pub(super) fn topic_metadata_refresh_interval_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    const KEY: &str = "topic.metadata.refresh.interval.ms";
    let mut v = normalise_number(t.file, p, KEY, &p.value, &mut t.s.warnings)?;
    if v == "0" {
        // 0.8 refreshed after every failed send; librdkafka would poll the cluster constantly.
        t.s.notices.push(format!("{}: topic.metadata.refresh.interval.ms=0 is read as 1000 (refresh every second)", t.file.at(p)));
        v = "1000".into();
    }
    t.set(p, KEY, v);
    Ok(())
}

pub(super) fn zookeeper_connect(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if t.file.get("bootstrap.servers").is_none() && t.file.get("metadata.broker.list").is_none() {
        // Read from ZooKeeper by resolve_brokers (network I/O stays out of here).
        t.s.zookeeper_connect = Some((p.value.clone(), t.file.at(p)));
    } else {
        t.s.notices.push(format!("{}: zookeeper.connect is ignored; bootstrap.servers is used", t.file.at(p)));
    }
    Ok(())
}

/// Also 0.8's `auto.commit.enable`; settled in [`Translation::auto_commit`].
pub(super) fn enable_auto_commit<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.auto_commit = Some((parse_java_bool(t.file, p)?, p));
    Ok(())
}

/// Settled in [`Translation::auto_commit`], which says whether it is used.
pub(super) fn auto_commit_interval_ms<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.auto_commit_interval = Some((parse_long(t.file, p)?.max(0) as u64, p));
    Ok(())
}

/// Applied by the mirror's topic filter, not by librdkafka; said, since
/// no librdkafka setting lists it with its line.
pub(super) fn exclude_internal_topics(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.s.exclude_internal_topics = parse_java_bool(t.file, p)?;
    let what = if t.s.exclude_internal_topics {
        "are never mirrored, even when the include pattern names them"
    } else {
        "are mirrored when the include pattern names them"
    };
    t.s.notices.push(format!("{}: {}={}: internal topics (__consumer_offsets, __transaction_state) {what}", t.file.at(p), p.key, t.s.exclude_internal_topics));
    Ok(())
}

pub(super) fn partition_assignment_strategy(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let v = assignor(t.file, p, &mut t.s.warnings)?;
    t.set(p, "partition.assignment.strategy", v);
    Ok(())
}

pub(super) fn auto_offset_reset(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let at = t.file.at(p);
    let v = match p.value.to_ascii_lowercase().as_str() {
        "smallest" | "earliest" => "earliest",
        "largest" | "latest" => "latest",
        by if by.starts_with("by_duration:") => {
            return Err(ConfigError::at(
                t.file,
                p,
                format!(
                    "auto.offset.reset={}: starting a new group at a point in time (Kafka 4.0) is not available here; \
                 use earliest (mirror everything the source still has), or commit the group's offsets for that time first \
                 (kafka-consumer-groups.sh --reset-offsets --to-datetime) and keep earliest",
                    p.value
                ),
            ))
        }
        "none" => {
            return Err(ConfigError::at(t.file, p, "auto.offset.reset=none stops on a partition with no committed offset")
                .with_fix("use earliest (mirror everything) or latest"))
        }
        _ => return Err(ConfigError::at(t.file, p, format!("auto.offset.reset='{}' is not one of earliest, latest (or 0.8's smallest, largest)", p.value))),
    };
    if v == "latest" {
        t.s.warnings.push(format!("{at}: auto.offset.reset=latest: records written to a partition before the group's first commit are not mirrored"));
    }
    t.set(p, "auto.offset.reset", v.to_string());
    Ok(())
}

/// MM1 forced `<group.id>-<stream>`, which the engine sets per stream.
pub(super) fn consumer_client_id(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.s.notices.push(format!("{}: client.id '{}' is replaced by <group.id>-<stream>, as MM1 did", t.file.at(p), p.value));
    Ok(())
}

pub(super) fn offsets_storage(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let at = t.file.at(p);
    match p.value.to_ascii_lowercase().as_str() {
        "kafka" => t.s.notices.push(format!("{at}: offsets.storage=kafka is the only storage; key dropped")),
        "zookeeper" if t.opts.accept_zookeeper_offsets_loss => t.s.warnings.push(format!(
            "{at}: offsets.storage=zookeeper: the group's offsets in ZooKeeper are not read (--accept.zookeeper.offsets.loss); \
             partitions without a Kafka-stored offset start from auto.offset.reset={}",
            t.file.get("auto.offset.reset").map_or("earliest (mirror-maker default)", |r| r.value.as_str())
        )),
        "zookeeper" => {
            return Err(ConfigError::at(
                t.file,
                p,
                "offsets.storage=zookeeper: the group's offsets kept in ZooKeeper are invisible to Kafka-stored groups, so this mirror \
                 would start from auto.offset.reset (records skipped with latest, mirrored again with earliest). Either move them to Kafka \
                 first (run the 0.8 consumer once with offsets.storage=kafka and dual.commit.enabled=true), then set offsets.storage=kafka; \
                 or accept starting from auto.offset.reset with --accept.zookeeper.offsets.loss",
            ))
        }
        _ => {
            return Err(ConfigError::at(t.file, p, format!("offsets.storage='{}' is not kafka or zookeeper", p.value))
                .with_fix("remove the line (offsets are stored in Kafka)"))
        }
    }
    Ok(())
}

pub(super) fn consumer_timeout_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let at = t.file.at(p);
    if parse_long(t.file, p)? >= 0 {
        t.s.warnings
            .push(format!("{at}: consumer.timeout.ms={} is ignored: a 0.8 mirror exited after that long without records; this one keeps running", p.value));
    } else {
        t.s.notices.push(format!("{at}: consumer.timeout.ms={}: wait for records forever, as this mirror always does", p.value));
    }
    Ok(())
}

/// Settled in [`Translation::queued_chunks`].
pub(super) fn queued_max_message_chunks<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.chunks = Some(p);
    Ok(())
}

pub(super) fn queue_enqueue_timeout_ms(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if parse_long(t.file, p)? >= 0 {
        t.s.warnings.push(format!(
            "{}: queue.enqueue.timeout.ms={} would drop records on a full queue; this mirror never drops and waits instead",
            t.file.at(p),
            p.value
        ));
    }
    Ok(())
}

pub(super) fn producer_type(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    t.s.notices.push(format!(
        "{}: producer.type={}: every record is acknowledged by the target before its offset is committed, which is what sync was for; sending stays batched",
        t.file.at(p),
        p.value
    ));
    Ok(())
}

pub(super) fn buffer_memory(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let kb = (parse_long(t.file, p)?.max(1) + 1023) / 1024;
    t.set(p, "queue.buffering.max.kbytes", kb.clamp(1, 2_147_483_647).to_string());
    Ok(())
}

/// 0.8 took numbers; librdkafka takes names only.
pub(super) fn compression_codec(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let v = match p.value.trim().to_ascii_lowercase().as_str() {
        "0" | "none" => "none",
        "1" | "gzip" => "gzip",
        "2" | "snappy" => "snappy",
        "3" | "lz4" => "lz4",
        "4" | "zstd" => "zstd",
        _ => {
            return Err(ConfigError::at(
                t.file,
                p,
                format!("compression.codec='{}' is not a codec: 0 (none), 1 (gzip), 2 (snappy), 3 (lz4) or a name", p.value),
            ))
        }
    };
    t.set(p, "compression.codec", v.to_string());
    Ok(())
}

pub(super) fn partitioner_class(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if p.value.trim() != "kafka.producer.ByteArrayPartitioner" {
        let v = partitioner(t.file, p)?;
        t.set(p, "partitioner", v.to_string());
        return Ok(());
    }
    t.s.byte_array_partitioner = true;
    t.set(p, "partitioner", "murmur2_random".into());
    t.s.notices.push(format!(
        "{}: partitioner.class=kafka.producer.ByteArrayPartitioner: keyed records go to abs(Arrays.hashCode(key)) % partitions, \
         as the 0.8 producer placed them; unkeyed records go to a random partition",
        t.file.at(p)
    ));
    Ok(())
}

pub(super) fn partitioner_ignore_keys(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if parse_java_bool(t.file, p)? {
        t.set(p, "partitioner", "random".into());
    } else {
        // Java's default: nothing to set, but the line is not passed over in silence.
        t.s.notices.push(format!("{}: {}=false is Java's default: keyed records are placed by their key, as without the line", t.file.at(p), p.key));
    }
    Ok(())
}

pub(super) fn batch_size(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    if p.value.trim().parse::<i64>() == Ok(0) {
        // Java: 0 turns batching off, one record per request.
        t.set(p, "batch.num.messages", "1".into());
    } else {
        let v = normalise_number(t.file, p, "batch.size", &p.value, &mut t.s.warnings)?;
        t.set(p, "batch.size", v);
    }
    Ok(())
}

/// Settled in [`compression_level`], once the codec is known.
pub(super) fn compression_gzip_level<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.levels.push(("gzip", p));
    Ok(())
}

/// As [`compression_gzip_level`].
pub(super) fn compression_lz4_level<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.levels.push(("lz4", p));
    Ok(())
}

/// As [`compression_gzip_level`].
pub(super) fn compression_zstd_level<'f>(t: &mut Translation<'f>, p: &'f Property) -> Result<(), ConfigError> {
    t.levels.push(("zstd", p));
    Ok(())
}

pub(super) fn message_send_max_retries(t: &mut Translation<'_>, p: &Property) -> Result<(), ConfigError> {
    let v = normalise_number(t.file, p, "message.send.max.retries", &p.value, &mut t.s.warnings)?;
    t.s.warnings.push(format!(
        "{}: message.send.max.retries={v}: a record still failing after {v} retries is a send failure, which stops the mirror \
         (--abort.on.send.failure true); remove the line to retry for as long as it takes",
        t.file.at(p)
    ));
    t.set(p, "message.send.max.retries", v);
    Ok(())
}

/// Java's per-codec level keys: the one for the codec in use becomes
/// librdkafka's single `compression.level` (-1..12).
pub(super) fn compression_level(file: &PropertiesFile, s: &mut ClientSettings, levels: &[(&str, &Property)]) {
    let codec = s.get("compression.type").or_else(|| s.get("compression.codec")).unwrap_or("none").to_ascii_lowercase();
    for (c, p) in levels {
        if *c != codec {
            s.notices.push(format!("{}: {} is not used: compression.type is {codec}", file.at(p), p.key));
            continue;
        }
        let Ok(n) = p.value.trim().parse::<i64>() else {
            s.warnings.push(format!("{}: {}='{}' is not a whole number; the codec's default level is used", file.at(p), p.key, p.value));
            continue;
        };
        let v = n.clamp(-1, 12);
        if v != n {
            s.warnings.push(format!("{}: {}={n} is outside librdkafka's compression.level range -1..12; using {v}", file.at(p), p.key));
        }
        s.set("compression.level", v.to_string(), Origin::File { at: file.at(p), key: p.key.clone() });
    }
}

/// librdkafka's assignors for a Java list. An assignor librdkafka lacks
/// (Java's eager StickyAssignor, a custom class) decides only which member
/// reads which partition, never what is mirrored, so it is dropped with a
/// warning and the file runs, with range when nothing else is left.
fn assignor(file: &PropertiesFile, p: &Property, warnings: &mut Vec<String>) -> Result<String, ConfigError> {
    let mut out: Vec<&str> = Vec::new();
    let mut dropped = Vec::new();
    for part in p.value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let name = part.rsplit('.').next().unwrap_or(part);
        let mapped = match name {
            "RangeAssignor" | "range" => "range",
            "RoundRobinAssignor" | "roundrobin" => "roundrobin",
            "CooperativeStickyAssignor" | "cooperative-sticky" => "cooperative-sticky",
            _ => {
                dropped.push(part);
                continue;
            }
        };
        if !out.contains(&mapped) {
            out.push(mapped);
        }
    }
    if out.is_empty() && dropped.is_empty() {
        return Err(ConfigError::at(file, p, "partition.assignment.strategy is empty"));
    }
    // Java 3.x's default list [Range, CooperativeSticky] means "range until
    // everyone upgrades"; librdkafka refuses to mix eager and cooperative.
    let chosen = if out.is_empty() {
        "range".to_string()
    } else if out.contains(&"cooperative-sticky") && out.len() > 1 {
        out.into_iter().find(|a| *a != "cooperative-sticky").unwrap_or("range").to_string()
    } else {
        out.join(",")
    };
    if !dropped.is_empty() {
        warnings.push(format!(
            "{}: partition.assignment.strategy {}: not available in librdkafka (the eager sticky assignor and custom Java classes are not); \
             {chosen} is used instead. Every partition is still mirrored, only their spread over the mirror's members may differ, \
             and a group shared with Java members that use only that assignor will not seat this one",
            file.at(p),
            dropped.join(", ")
        ));
    }
    Ok(chosen)
}

fn partitioner(file: &PropertiesFile, p: &Property) -> Result<&'static str, ConfigError> {
    let class = p.value.trim();
    let name = class.rsplit('.').next().unwrap_or("");
    match name {
        // 0.8's old-producer DefaultPartitioner hashed the byte[] identity: effectively random.
        "DefaultPartitioner" if class.starts_with("kafka.producer.") => Ok("random"),
        "DefaultPartitioner" => Ok("murmur2_random"),
        "UniformStickyPartitioner" | "RoundRobinPartitioner" => Ok("random"),
        other => Err(ConfigError::at(
            file,
            p,
            format!(
                "partitioner.class {other}: Java partitioner classes cannot be loaded; remove the line for Java's key hashing (murmur2), \
             or use --message.handler partition-preserving to keep source partitions"
            ),
        )),
    }
}
