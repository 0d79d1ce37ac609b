//! The files the Connect tests (tests/connect_*.rs) give a worker, Java's
//! or ours: worker files and connector configs, written one way here so
//! that each test states only what it does differently.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{source, unique};

/// Java Connect's byte-array converter: records are copied as they are.
pub const BYTE_ARRAY_CONVERTER: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

/// A new directory under the system's temporary one, named after `prefix`.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(prefix));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A distributed worker file written at `file`: its group and its three
/// storage topics named after `storage` on `bootstrap` (replication factor
/// 1: the test clusters have one broker), positions flushed every second,
/// then the `extra` lines.
pub fn distributed_worker_file(file: &Path, bootstrap: &str, storage: &str, extra: &[String]) -> PathBuf {
    let mut text = format!(
        "bootstrap.servers={bootstrap}\ngroup.id={storage}\nconfig.storage.topic={storage}-configs\noffset.storage.topic={storage}-offsets\n\
         status.storage.topic={storage}-status\nconfig.storage.replication.factor=1\noffset.storage.replication.factor=1\n\
         status.storage.replication.factor=1\noffset.flush.interval.ms=1000\n"
    );
    for l in extra {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(file, text).unwrap();
    file.to_path_buf()
}

/// A MirrorMaker 2 connector config: `org.apache.kafka.connect.mirror.<class>`
/// copying `topics` from alias `a` (the source cluster) to alias `b`
/// (`target_bootstrap`), records as bytes, replication factor 1 for the
/// topics it creates, no ACL sync; then the keys of `extra` (a JSON
/// object), each added or replacing the one of its name.
pub fn mirror_connector(class: &str, (a, b): (&str, &str), target_bootstrap: &str, topics: &str, extra: Value) -> Value {
    let mut config = serde_json::json!({
        "connector.class": format!("org.apache.kafka.connect.mirror.{class}"),
        "source.cluster.alias": a, "target.cluster.alias": b,
        "source.cluster.bootstrap.servers": source(), "target.cluster.bootstrap.servers": target_bootstrap,
        "topics": topics,
        "key.converter": BYTE_ARRAY_CONVERTER, "value.converter": BYTE_ARRAY_CONVERTER,
        "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
    });
    let Value::Object(extra) = extra else { panic!("the extra keys of a connector config are a JSON object, not {extra}") };
    config.as_object_mut().unwrap().extend(extra);
    config
}

/// `value` written as JSON at `path`.
pub fn json_file(path: &Path, value: &Value) -> PathBuf {
    std::fs::write(path, value.to_string()).unwrap();
    path.to_path_buf()
}

/// Commits `group`'s positions `at` (one per partition, from 0) of `topic`
/// on the source cluster, as an application that read that far would (no
/// member needed).
pub fn commit_on_source(group: &str, topic: &str, at: &[i64]) {
    use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
    let c: BaseConsumer = rdkafka::ClientConfig::new().set("bootstrap.servers", source()).set("group.id", group).create().unwrap();
    let mut list = rdkafka::TopicPartitionList::new();
    for (p, o) in at.iter().enumerate() {
        list.add_partition_offset(topic, p as i32, rdkafka::Offset::Offset(*o)).unwrap();
    }
    c.commit(&list, CommitMode::Sync).expect("commit the group's positions");
}
