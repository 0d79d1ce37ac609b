//! The worker's storage on its cluster, in Connect's record shapes
//! (JsonConverter, `schemas.enable=false`), so the topics read the same to
//! a user, a Java Connect worker and this one:
//! - `config.storage.topic` (compacted, 1 partition): `connector-<name>` ->
//!   `{"properties":{...}}`, a tombstone on delete; `target-state-<name>` ->
//!   `{"state":"STARTED"|"PAUSED"|"STOPPED"}`. Every worker reads it from
//!   its start at boot and keeps tailing it, so a restarted worker resumes
//!   every connector and a PUT on any worker reaches all.
//! - `status.storage.topic` (compacted): `status-connector-<name>` ->
//!   `{"state":..,"trace":..,"worker_id":..,"generation":0}`.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, ProducerContext};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};
use serde_json::{json, Map, Value};

/// What the user asked a connector to be (`target-state-<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetState {
    Started,
    Paused,
    Stopped,
}

impl TargetState {
    pub fn name(self) -> &'static str {
        match self {
            TargetState::Started => "STARTED",
            TargetState::Paused => "PAUSED",
            TargetState::Stopped => "STOPPED",
        }
    }
}

/// One record of the config topic, as this worker understands it.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigRecord {
    /// A connector's config, or its deletion (None).
    Connector { name: String, config: Option<Vec<(String, String)>> },
    /// A connector's target state; None when the record is a tombstone.
    Target { name: String, state: Option<TargetState> },
    /// Task configs, commits, session keys: Java's bookkeeping, not ours.
    Other,
}

/// Decodes one config-topic record.
pub fn decode(key: &[u8], value: Option<&[u8]>) -> ConfigRecord {
    let key = String::from_utf8_lossy(key);
    let json = value.and_then(|v| serde_json::from_slice::<Value>(v).ok());
    if let Some(name) = key.strip_prefix("connector-") {
        let config = json.and_then(|v| v.get("properties").and_then(Value::as_object).map(flat));
        return ConfigRecord::Connector { name: name.to_string(), config };
    }
    if let Some(name) = key.strip_prefix("target-state-") {
        let state = json.and_then(|v| v.get("state").and_then(Value::as_str).map(str::to_string)).map(|s| match s.as_str() {
            "PAUSED" => TargetState::Paused,
            "STOPPED" => TargetState::Stopped,
            _ => TargetState::Started,
        });
        return ConfigRecord::Target { name: name.to_string(), state };
    }
    ConfigRecord::Other
}

fn flat(m: &Map<String, Value>) -> Vec<(String, String)> {
    m.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect()
}

/// `{"properties":{...}}` of a connector config.
pub fn connector_value(config: &[(String, String)]) -> Vec<u8> {
    let props: Map<String, Value> = config.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    json!({ "properties": props }).to_string().into_bytes()
}

pub fn target_value(state: TargetState) -> Vec<u8> {
    json!({ "state": state.name() }).to_string().into_bytes()
}

pub fn status_value(state: &str, trace: Option<&str>, worker_id: &str) -> Vec<u8> {
    json!({ "state": state, "trace": trace, "worker_id": worker_id, "generation": 0 }).to_string().into_bytes()
}

/// Why the storage could not be written.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// A write's outcome: its offset, or why it failed.
type Delivery = Result<i64, String>;

/// Delivery reports of the store's producer, by channel.
struct Reports(Mutex<mpsc::Sender<Delivery>>);

impl ClientContext for Reports {}

impl ProducerContext for Reports {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        let r = match result {
            Ok(m) => Ok(m.offset()),
            Err((e, _)) => Err(e.to_string()),
        };
        let _ = self.0.lock().map(|tx| tx.send(r));
    }
}

/// How long a write may wait for the cluster.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// Writes to the storage topics, one record at a time, each acknowledged
/// (acks=all) before the REST call that made it answers.
pub struct Store {
    producer: Mutex<(BaseProducer<Reports>, mpsc::Receiver<Delivery>)>,
    pub config_topic: String,
    pub status_topic: String,
    /// The next config-topic offset the tail has applied.
    applied: Arc<(Mutex<i64>, Condvar)>,
}

impl Store {
    pub fn new(config: &ClientConfig, config_topic: String, status_topic: String) -> Result<Store, StoreError> {
        let (tx, rx) = mpsc::channel();
        let mut c = config.clone();
        c.set("acks", "all").set("enable.idempotence", "true");
        let producer = c.create_with_context(Reports(Mutex::new(tx))).map_err(|e| StoreError(format!("cannot create the storage producer: {e}")))?;
        Ok(Store { producer: Mutex::new((producer, rx)), config_topic, status_topic, applied: Arc::new((Mutex::new(0), Condvar::new())) })
    }

    /// Writes one record; its offset once acknowledged.
    pub fn write(&self, topic: &str, key: &str, value: Option<&[u8]>) -> Result<i64, StoreError> {
        let guard = self.producer.lock().map_err(|_| StoreError("the storage producer failed earlier".into()))?;
        let (producer, rx) = &*guard;
        let mut record: BaseRecord<'_, str, [u8]> = BaseRecord::to(topic).key(key);
        if let Some(v) = value {
            record = record.payload(v);
        }
        producer.send(record).map_err(|(e, _)| StoreError(format!("cannot write {key} to {topic}: {e}")))?;
        let until = Instant::now() + WRITE_TIMEOUT;
        loop {
            producer.poll(Duration::from_millis(100));
            match rx.try_recv() {
                Ok(Ok(offset)) => return Ok(offset),
                Ok(Err(e)) => return Err(StoreError(format!("cannot write {key} to {topic}: {e}"))),
                Err(_) if Instant::now() > until => return Err(StoreError(format!("writing {key} to {topic}: no answer in {}s", WRITE_TIMEOUT.as_secs()))),
                Err(_) => {}
            }
        }
    }

    /// Writes a config-topic record and waits until this worker's tail has
    /// applied it, so the answer to the REST call reflects it.
    pub fn write_config(&self, key: &str, value: Option<&[u8]>) -> Result<(), StoreError> {
        let offset = self.write(&self.config_topic, key, value)?;
        let (lock, cv) = &*self.applied;
        let until = Instant::now() + WRITE_TIMEOUT;
        let mut applied = lock.lock().map_err(|_| StoreError("the config reader failed".into()))?;
        while *applied <= offset {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StoreError(format!("{key} was written to {} at offset {offset} but not read back in time", self.config_topic)));
            }
            applied = cv.wait_timeout(applied, left).map_err(|_| StoreError("the config reader failed".into()))?.0;
        }
        Ok(())
    }

    /// Reads the config topic from its start, then keeps tailing it, handing
    /// each record to `apply` in order until `stop` says so.
    pub fn tail(
        &self,
        config: &ClientConfig,
        group: &str,
        stop: Arc<dyn Fn() -> bool + Send + Sync>,
        apply: impl Fn(Vec<ConfigRecord>) + Send + 'static,
    ) -> Result<JoinHandle<()>, StoreError> {
        let mut c = config.clone();
        // Never committed: the group only satisfies librdkafka.
        c.set("group.id", group).set("enable.auto.commit", "false").set("enable.partition.eof", "false");
        let consumer: BaseConsumer = c.create().map_err(|e| StoreError(format!("cannot create the config reader: {e}")))?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&self.config_topic, 0, Offset::Beginning).map_err(|e| StoreError(e.to_string()))?;
        consumer.assign(&tpl).map_err(|e| StoreError(format!("cannot read {}: {e}", self.config_topic)))?;
        let applied = self.applied.clone();
        let topic = self.config_topic.clone();
        std::thread::Builder::new()
            .name("worker-config-reader".into())
            .spawn(move || {
                while !stop() {
                    // Everything already fetched is applied together: a
                    // worker starting on a long config topic (or catching
                    // up after a pause) acts once on each connector's final
                    // state, not once per record it replays.
                    let mut batch = Vec::new();
                    let mut next = None;
                    let mut wait = Duration::from_millis(200);
                    while let Some(polled) = consumer.poll(wait) {
                        match polled {
                            Ok(m) => {
                                if let Some(key) = m.key() {
                                    batch.push(decode(key, m.payload()));
                                }
                                next = Some(m.offset() + 1);
                            }
                            Err(e) => log::warn!("reading {topic}: {e}"),
                        }
                        wait = Duration::ZERO;
                    }
                    if !batch.is_empty() {
                        apply(batch);
                    }
                    if let Some(next) = next {
                        let (lock, cv) = &*applied;
                        if let Ok(mut a) = lock.lock() {
                            *a = next;
                        }
                        cv.notify_all();
                    }
                }
            })
            .map_err(|e| StoreError(format!("cannot start the config reader: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_record_shapes_round_trip() {
        let cfg = vec![("connector.class".to_string(), "X".to_string()), ("tasks.max".to_string(), "4".to_string())];
        let v = connector_value(&cfg);
        assert_eq!(String::from_utf8(v.clone()).unwrap(), r#"{"properties":{"connector.class":"X","tasks.max":"4"}}"#);
        assert_eq!(decode(b"connector-mm2", Some(&v)), ConfigRecord::Connector { name: "mm2".into(), config: Some(cfg) });
        assert_eq!(decode(b"connector-mm2", None), ConfigRecord::Connector { name: "mm2".into(), config: None });
        assert_eq!(String::from_utf8(target_value(TargetState::Paused)).unwrap(), r#"{"state":"PAUSED"}"#);
        assert_eq!(
            decode(b"target-state-mm2", Some(&target_value(TargetState::Stopped))),
            ConfigRecord::Target { name: "mm2".into(), state: Some(TargetState::Stopped) }
        );
        assert_eq!(decode(b"task-mm2-0", Some(b"{}")), ConfigRecord::Other);
        assert_eq!(decode(b"commit-mm2", Some(b"{\"tasks\":1}")), ConfigRecord::Other);
        let s = String::from_utf8(status_value("RUNNING", None, "h:8083")).unwrap();
        // Java's status schema's field order (KafkaStatusBackingStore).
        assert_eq!(s, r#"{"state":"RUNNING","trace":null,"worker_id":"h:8083","generation":0}"#);
    }
}
