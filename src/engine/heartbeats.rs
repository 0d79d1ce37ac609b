//! MirrorMaker 2's heartbeats: one record every interval in the target's
//! `heartbeats` topic per herder, byte for byte as Java's heartbeat
//! connector writes it, so that Java's `MirrorClient` and latency monitors
//! reading the target see the flow. The topic is created as Java creates
//! it: compacted, one partition.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use log::{info, warn};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use crate::engine::formats::Heartbeat;
use crate::engine::topics::create_compacted;
use crate::ops::shutdown::Shutdown;
use crate::plan::Heartbeats;

/// Starts the emitter of one herder's heartbeats; it ends at the stop.
pub fn spawn(task: &Heartbeats, shutdown: Arc<Shutdown>) -> std::io::Result<JoinHandle<()>> {
    let name = format!("{}->{}", task.source_alias, task.target_alias);
    let (source_alias, target_alias, topic, interval, rf) =
        (task.source_alias.clone(), task.target_alias.clone(), task.topic.clone(), task.interval, task.replication_factor);
    let config = task.target.settings.client_config();
    std::thread::Builder::new().name(format!("mirrormaker-heartbeats-{name}")).spawn(move || {
        create_compacted(&config, &topic, rf);
        let producer: BaseProducer = match config.create() {
            Ok(p) => p,
            Err(e) => {
                warn!("[{name}] no heartbeats: cannot create their producer: {e}");
                return;
            }
        };
        info!("[{name}] heartbeats to {topic} every {interval:?}");
        let mut next = Instant::now() + interval;
        while !shutdown.stopping() {
            producer.poll(Duration::from_millis(100).min(interval));
            if Instant::now() < next {
                continue;
            }
            next += interval;
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let beat = Heartbeat { source_alias: source_alias.clone(), target_alias: target_alias.clone(), timestamp: now };
            let Ok(key) = beat.encode_key() else { return };
            let value = beat.encode_value();
            if let Err((e, _)) = producer.send(BaseRecord::<[u8], [u8]>::to(&topic).partition(0).key(&key).payload(&value).timestamp(now)) {
                warn!("[{name}] heartbeat not sent: {e}");
            }
        }
        // Heartbeats are a signal, not data: what is not out in a second is let go.
        let _ = producer.flush(Duration::from_secs(1));
    })
}
