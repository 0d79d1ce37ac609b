//! KIP-875's offsets endpoints, as Connect 3.9 answers them:
//! `GET|PATCH|DELETE /connectors/{name}/offsets`.
//!
//! A connector's positions are the records under its name in the worker's
//! offsets topic (`offset.storage.topic`): GET lists them, PATCH writes the
//! given ones, DELETE writes a tombstone for each. For a
//! MirrorSourceConnector that alone would change nothing: its run
//! continues from the LATER of its flow group's committed offset on the
//! source and the offsets topic's position + 1 (`connect_offsets`), so the
//! group's own offset would win over a position moved back. So PATCH also
//! commits offset + 1 for the group (backwards too), and DELETE deletes the
//! group's committed offsets, before the offsets topic is written: a
//! resumed connector then continues exactly where it was told, or from the
//! beginning, as Java's would.
//!
//! Only a STOPPED connector's offsets may change (Java's 400 otherwise),
//! and only once its run on this worker has ended and handed back its last
//! positions; a resume applied meanwhile waits for the change to be written
//! (`Worker::modifying`). Another worker of the group still running the
//! connector keeps the group active, and the source then refuses the
//! group change: nothing is written and the error says so.

mod java;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use log::{info, warn};
use rdkafka::consumer::Consumer;
use rdkafka::message::Message;
use rdkafka::ClientConfig;
use serde_json::{json, Map, Value};

use super::rest::{done, ApiError, Entry};
use super::store::TargetState;
use super::{lock, Worker, DRAIN_TIMEOUT};
use crate::engine::mm2::connect_offsets::{file as offsets_file, topic as offsets_topic};
use crate::front::connect;
use crate::front::mm2::connector::Kind;
use crate::kafka::groups::{self, GroupError, GroupOffset};
use crate::plan::filter::TopicFilter;

/// A connector's config, in the order it was given.
type Config = Vec<(String, String)>;

/// How long a read of the whole offsets topic may go without progress, and
/// how long a write may take to be acknowledged.
const PATIENCE: Duration = Duration::from_secs(60);

fn not_stopped(name: &str) -> ApiError {
    ApiError::new(
        400,
        format!(
            "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by \
             issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
        ),
    )
}

/// A connector's positions in the offsets topic, folded in log order: the
/// last record of a partition wins, a null value removes it. Partitions
/// are told apart as Java's maps are (field order does not matter).
#[derive(Debug, Default)]
pub struct Stored {
    entries: BTreeMap<String, (Value, Value)>,
}

fn identity(partition: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            other => other.clone(),
        }
    }
    sorted(partition).to_string()
}

impl Stored {
    /// Folds one record in; records of other connectors and keys that are
    /// not Connect's `[name, {partition}]` are not this connector's.
    pub fn apply(&mut self, connector: &str, key: Option<&[u8]>, value: Option<&[u8]>) {
        let Some(Ok(Value::Array(key))) = key.map(serde_json::from_slice::<Value>) else { return };
        let [Value::String(name), partition @ Value::Object(_)] = key.as_slice() else { return };
        if name != connector {
            return;
        }
        let id = identity(partition);
        match value.map(serde_json::from_slice::<Value>) {
            None | Some(Ok(Value::Null)) => {
                self.entries.remove(&id);
            }
            Some(Ok(offset)) => {
                self.entries.insert(id, (partition.clone(), offset));
            }
            Some(Err(e)) => warn!("offsets of connector {connector}: a value that is not JSON is skipped ({e})"),
        }
    }

    /// GET's body: `{"offsets":[{"partition":{..},"offset":{..}}, ..]}`,
    /// the fields of each map in the order Java's JSON has them.
    pub fn body(&self) -> Value {
        let list: Vec<Value> = self.entries.values().map(|(p, o)| json!({ "partition": java::java_order(p), "offset": java::java_order(o) })).collect();
        json!({ "offsets": list })
    }

    pub fn partitions(&self) -> impl Iterator<Item = &Value> {
        self.entries.values().map(|(p, _)| p)
    }
}

/// Reads `connector`'s positions from the whole offsets `topic`, read
/// committed as Connect's reader does.
fn read_stored(reader: &ClientConfig, topic: &str, connector: &str) -> Result<Stored, ApiError> {
    let mut stored = Stored::default();
    offsets_topic::read_whole(reader, topic, PATIENCE, &|| false, |m| stored.apply(connector, m.key(), m.payload()))
        .map_err(|e| ApiError::new(500, format!("Failed to retrieve offsets for source connector {connector}: {e}")))?;
    Ok(stored)
}

/// Writes `records` (key, value or tombstone) to the offsets topic, made
/// first when missing, as Java's worker makes it at its start
/// (compacted, `offset.storage.*`), and waits for every ack.
fn write_records(w: &Worker, records: &[offsets_file::Entry]) -> Result<(), String> {
    let s = &w.cfg.settings;
    let (config, topic) = (w.cfg.cluster.client_config(), &s.offset_storage_topic);
    let partitions =
        offsets_topic::ensure(&config, topic, s.offset_storage_partitions, s.offset_storage_replication_factor, PATIENCE).map_err(|e| e.to_string())?;
    let writer = offsets_topic::Writer::new(&config, topic, partitions).map_err(|e| format!("cannot create a producer for {topic}: {e}"))?;
    writer.write(records, PATIENCE).map_err(|e| e.to_string())
}

/// What a MirrorSourceConnector's positions also live in: its flow's
/// group on the source.
struct SourceSide {
    group: String,
    source: ClientConfig,
    alias: String,
    filter: Arc<TopicFilter>,
}

fn source_side(plan: &connect::ConnectorPlan) -> Option<SourceSide> {
    let flow = plan.plan.flows.first()?;
    let spec = flow.connect_offsets.as_ref()?;
    Some(SourceSide { group: flow.source.group_id.clone()?, source: flow.source_admin_config(), alias: spec.source_alias.clone(), filter: flow.filter.clone() })
}

/// The (topic, partition) a partition map names for this source, when it
/// is exactly the shape the connector's own positions have.
fn own_partition(side: &SourceSide, p: &Map<String, Value>) -> Option<(String, i32)> {
    let (cluster, topic, partition) = (p.get("cluster")?.as_str()?, p.get("topic")?.as_str()?, p.get("partition")?.as_i64()?);
    // A topic the connector does not copy is not the group's business: its
    // position goes to the offsets topic only, as Java's would.
    (p.len() == 3 && cluster == side.alias && side.filter.matches(topic)).then(|| (topic.to_string(), partition as i32))
}

fn group_error(side: &SourceSide, what: &str, e: GroupError) -> ApiError {
    ApiError::new(500, format!("Failed to {what} the offsets of the connector's consumer group '{}' on the source: {e}; nothing was written", side.group))
}

impl SourceSide {
    /// Commits offset + 1 for each given position of this source, and
    /// deletes the group's offset of each given tombstone.
    fn alter(&self, entries: &[Entry]) -> Result<(), ApiError> {
        let admin = groups::admin_consumer(&self.source).map_err(|e| ApiError::new(500, format!("cannot create a group admin client: {e}")))?;
        let (mut commit, mut delete) = (Vec::new(), Vec::new());
        for e in entries {
            let Some((topic, partition)) = e.partition.as_ref().and_then(|p| own_partition(self, p)) else { continue };
            match e.offset.as_ref().and_then(|o| o.get("offset")).and_then(Value::as_i64) {
                Some(last) => commit.push(GroupOffset { topic, partition, offset: last + 1, metadata: String::new() }),
                None => delete.push((topic, partition)),
            }
        }
        groups::alter_group_offsets(admin.client(), &self.group, &commit).map_err(|e| group_error(self, "alter", e))?;
        groups::delete_group_offsets(admin.client(), &self.group, &delete).map_err(|e| group_error(self, "delete", e))?;
        info!("group {}: {} offset(s) committed, {} deleted for an offsets alteration", self.group, commit.len(), delete.len());
        Ok(())
    }

    /// Deletes the group's committed offsets of every topic the connector copies.
    fn reset(&self) -> Result<(), ApiError> {
        let admin = groups::admin_consumer(&self.source).map_err(|e| ApiError::new(500, format!("cannot create a group admin client: {e}")))?;
        let committed = groups::group_offsets(admin.client(), &self.group).map_err(|e| group_error(self, "read", e))?;
        let mine: Vec<(String, i32)> = committed.into_iter().filter(|o| self.filter.matches(&o.topic)).map(|o| (o.topic, o.partition)).collect();
        groups::delete_group_offsets(admin.client(), &self.group, &mine).map_err(|e| group_error(self, "delete", e))?;
        info!("group {}: {} committed offset(s) deleted for an offsets reset", self.group, mine.len());
        Ok(())
    }
}

impl Worker {
    /// The connector's positions: in the offsets file of a standalone
    /// worker (`offset.storage.file.filename`), else in the offsets topic.
    fn stored(&self, name: &str) -> Result<Stored, ApiError> {
        let Some(path) = &self.cfg.offsets_file else {
            return read_stored(&self.cfg.cluster_reader.client_config(), &self.cfg.settings.offset_storage_topic, name);
        };
        let entries = offsets_file::load(path).map_err(|e| ApiError::new(500, format!("Failed to retrieve offsets for source connector {name}: {e}")))?;
        let mut stored = Stored::default();
        for (key, value) in entries.unwrap_or_default() {
            stored.apply(name, Some(&key), value.as_deref());
        }
        Ok(stored)
    }

    /// Writes `records` where [`Self::stored`] reads them.
    fn write(&self, records: &[(Vec<u8>, Option<Vec<u8>>)]) -> Result<(), String> {
        match &self.cfg.offsets_file {
            Some(path) => offsets_file::update(path, records).map_err(|e| e.to_string()),
            None => write_records(self, records),
        }
    }

    fn where_stored(&self) -> String {
        match &self.cfg.offsets_file {
            Some(path) => path.display().to_string(),
            None => self.cfg.settings.offset_storage_topic.clone(),
        }
    }

    /// GET: the connector's positions in the offsets topic, in any state.
    pub(super) fn connector_offsets(&self, name: &str) -> Result<Value, ApiError> {
        if !lock(&self.connectors).contains_key(name) {
            return Err(ApiError::not_found(name));
        }
        Ok(self.stored(name)?.body())
    }

    /// PATCH (`Some`) or DELETE (`None`).
    pub(super) fn modify_offsets(&self, name: &str, entries: Option<Vec<Entry>>) -> Result<Value, ApiError> {
        let (_one_at_a_time, config) = self.stopped_config(name)?;
        let plan =
            connect::plan(name, &config, &self.cfg, DRAIN_TIMEOUT).map_err(|e| ApiError::new(500, format!("Connector configuration is invalid: {e}")))?;
        let side = if plan.kind == Kind::Source { source_side(&plan) } else { None };
        let reset = entries.is_none();
        let entries = match entries {
            Some(e) => e,
            None => {
                let stored = self.stored(name)?;
                stored.partitions().map(|p| Entry { partition: p.as_object().cloned(), offset: None }).collect()
            }
        };
        for e in &entries {
            java::validate(plan.kind, e.partition.as_ref(), e.offset.as_ref()).map_err(|m| ApiError::new(500, m))?;
        }
        if let Some(side) = &side {
            if reset {
                side.reset()?;
            } else {
                side.alter(&entries)?;
            }
        }
        let records: Vec<(Vec<u8>, Option<Vec<u8>>)> = entries
            .iter()
            .map(|e| {
                let p = e.partition.clone().map_or(Value::Null, Value::Object);
                let v = e.offset.as_ref().map(|o| {
                    let mut s = String::new();
                    java::push_json(&mut s, &Value::Object(o.clone()));
                    s.into_bytes()
                });
                (java::key_bytes(name, &p), v)
            })
            .collect();
        // Nothing stored and nothing given (a reset of a connector that never
        // wrote a position): nothing to write, as Java writes nothing then.
        if !records.is_empty() {
            self.write(&records).map_err(|e| ApiError::new(500, format!("Failed to modify offsets for source connector {name}: {e}")))?;
        }
        info!("connector {name}: {} position(s) {} in {}", records.len(), if reset { "reset" } else { "altered" }, self.where_stored());
        Ok(done(reset))
    }

    /// The connector's config once it is STOPPED and its run here has
    /// ended (a run still draining is waited for: it hands back its last
    /// positions as it ends, which would overwrite the change), with
    /// `modifying` held so that no run starts until the change is written.
    /// The run is waited for without holding it: the thread that ends runs
    /// may be waiting for it to start another connector.
    fn stopped_config(&self, name: &str) -> Result<(std::sync::MutexGuard<'_, ()>, Config), ApiError> {
        let until = Instant::now() + DRAIN_TIMEOUT + Duration::from_secs(10);
        let stopped = |map: &BTreeMap<String, super::Connector>| -> Result<Option<Config>, ApiError> {
            let c = map.get(name).ok_or_else(|| ApiError::not_found(name))?;
            if c.target != Some(TargetState::Stopped) {
                return Err(not_stopped(name));
            }
            Ok((c.run.is_none() && c.ending == 0).then(|| c.config.clone()))
        };
        loop {
            if stopped(&lock(&self.connectors))?.is_some() {
                let guard = lock(&self.modifying);
                if let Some(config) = stopped(&lock(&self.connectors))? {
                    return Ok((guard, config));
                }
            }
            if Instant::now() >= until {
                return Err(ApiError::new(409, format!("Connector {name} is STOPPED but its run has not ended yet; try again in a moment")));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::rest::parse_alter;

    #[test]
    fn a_patch_body_needs_offsets() {
        let msg = "Partitions / offsets need to be provided for an alter offsets request";
        for body in [&br#"{}"#[..], br#"{"offsets":[]}"#, br#"{"offsets":null}"#] {
            assert_eq!(parse_alter(body), Err(ApiError::new(400, msg)), "{}", String::from_utf8_lossy(body));
        }
        let e = parse_alter(br#"{"offsets":[{"partition":"p","offset":{"offset":1}}]}"#).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e.message.contains("\"partition\" of \"offsets\" must be a JSON object"), "{}", e.message);
        let ok = parse_alter(br#"{"offsets":[{"partition":{"cluster":"A"},"offset":null}]}"#).unwrap();
        assert_eq!(ok, vec![Entry { partition: Some(json!({ "cluster": "A" }).as_object().unwrap().clone()), offset: None }]);
    }

    #[test]
    fn the_last_record_of_a_partition_wins_whatever_its_field_order() {
        let mut s = Stored::default();
        s.apply("c", Some(br#"["c",{"cluster":"A","partition":0,"topic":"t"}]"#), Some(br#"{"offset":1}"#));
        s.apply("c", Some(br#"["c",{"topic":"t","partition":0,"cluster":"A"}]"#), Some(br#"{"offset":7}"#));
        s.apply("c", Some(br#"["c",{"cluster":"A","partition":1,"topic":"t"}]"#), Some(br#"{"offset":3}"#));
        s.apply("c", Some(br#"["other",{"cluster":"A","partition":0,"topic":"t"}]"#), Some(br#"{"offset":9}"#));
        s.apply("c", Some(b"not json"), Some(br#"{"offset":9}"#));
        s.apply("c", Some(br#"["c",{"cluster":"A","partition":1,"topic":"t"}]"#), None);
        let body = s.body();
        assert_eq!(body, json!({ "offsets": [{ "partition": { "cluster": "A", "partition": 0, "topic": "t" }, "offset": { "offset": 7 } }] }));
        // Java's field order in the answer, not the record's.
        assert_eq!(body.to_string(), r#"{"offsets":[{"partition":{"cluster":"A","partition":0,"topic":"t"},"offset":{"offset":7}}]}"#);
    }
}
