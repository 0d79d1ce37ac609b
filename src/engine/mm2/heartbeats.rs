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

use crate::formats::Heartbeat;
use crate::kafka::admin::create_compacted;
use crate::ops::repeats;
use crate::ops::shutdown::Shutdown;
use crate::plan::Heartbeats;

/// Starts the emitter of one herder's heartbeats; it ends at the stop.
pub fn spawn(task: &Heartbeats, shutdown: Arc<Shutdown>) -> std::io::Result<JoinHandle<()>> {
    let name = format!("{}->{}", task.source_alias, task.target_alias);
    let (interval, floored) = schedule(task.interval);
    let (source_alias, target_alias, topic, rf) = (task.source_alias.clone(), task.target_alias.clone(), task.topic.clone(), task.replication_factor);
    let config = task.target.settings.client_config();
    // Made by an admin client of the target, as Java's heartbeat connector
    // makes it (`heartbeats-target-admin`).
    let admin = task.target.admin_config();
    std::thread::Builder::new().name(format!("mirrormaker-heartbeats-{name}")).spawn(move || {
        create_compacted(&admin, &topic, rf);
        let producer: BaseProducer = match config.create() {
            Ok(p) => p,
            Err(e) => {
                warn!("[{name}] no heartbeats: cannot create their producer: {e}");
                return;
            }
        };
        if let Some(why) = floored {
            warn!("[{name}] {why}");
        }
        info!("[{name}] heartbeats to {topic} every {interval:?}");
        let mut next = Instant::now() + interval;
        while !shutdown.stopping() {
            producer.poll(poll_wait(interval));
            if Instant::now() < next {
                continue;
            }
            next = next_beat(next, interval, Instant::now());
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let beat = Heartbeat { source_alias: source_alias.clone(), target_alias: target_alias.clone(), timestamp: now };
            let Ok(key) = beat.encode_key() else { return };
            let value = beat.encode_value();
            if let Err((e, _)) = producer.send(BaseRecord::<[u8], [u8]>::to(&topic).partition(0).key(&key).payload(&value).timestamp(now)) {
                // While the target is away the queue stays full: one line per kind every while, not one per beat.
                if let Some(left_out) = repeats::check(&format!("heartbeat not sent {name} {e}")) {
                    warn!("[{name}] heartbeat not sent: {e}{}", repeats::note(left_out));
                }
            }
        }
        // Heartbeats are a signal, not data: what is not out in a second is let go.
        let _ = producer.flush(Duration::from_secs(1));
    })
}

/// The shortest time between two heartbeats of a flow. Java's task
/// sleeps the interval and emits, so 0 emits back to back, as fast as its
/// worker takes records (a negative interval turns heartbeats off, see
/// `Periodic::interval`); here 0 means as often as this allows, never a
/// loop that spins a core and floods the target.
pub const FLOOR: Duration = Duration::from_millis(100);

/// The interval the emitter keeps for the configured one, and the line to
/// log at the start when it is not the configured one.
pub fn schedule(configured: Duration) -> (Duration, Option<String>) {
    if configured >= FLOOR {
        return (configured, None);
    }
    let why = format!(
        "emit.heartbeats.interval.seconds = {}: Java emits heartbeats back to back with it; this mirror emits one every {FLOOR:?}, \
         never in a loop that spins (set 1 or more to choose the interval, or emit.heartbeats.enabled = false to have none)",
        configured.as_secs()
    );
    (FLOOR, Some(why))
}

/// How long the loop waits in the producer's poll between looks at the clock.
fn poll_wait(interval: Duration) -> Duration {
    Duration::from_millis(100).min(interval)
}

/// When the beat after one due at `due` and sent at `now` is due: one
/// interval on, or, when the thread was held up past that, one interval
/// after `now`, as Java's sleep-then-emit (no burst to catch up).
fn next_beat(due: Instant, interval: Duration, now: Instant) -> Instant {
    let next = due + interval;
    if next <= now {
        now + interval
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The beats the loop sends over `span` of a clock that the loop
    /// reads every `poll_wait` (the poll's full wait, as when idle), after
    /// a stall of `stall` before the first look.
    fn beats_over(interval: Duration, stall: Duration, span: Duration) -> (u64, u64) {
        let start = Instant::now();
        let (mut now, mut next, mut beats, mut looks) = (start + stall, start + interval, 0u64, 0u64);
        while now < start + span && looks < 1_000_000 {
            looks += 1;
            if now >= next {
                beats += 1;
                next = next_beat(next, interval, now);
            }
            now += poll_wait(interval);
        }
        (beats, looks)
    }

    #[test]
    fn an_interval_of_zero_never_spins_the_loop() {
        let (interval, why) = schedule(Duration::ZERO);
        assert_eq!(interval, FLOOR);
        let why = why.expect("the start says the interval is not the configured one");
        assert!(why.contains("emit.heartbeats.interval.seconds = 0") && why.contains("100ms"), "{why}");
        assert_eq!(schedule(Duration::from_secs(1)), (Duration::from_secs(1), None), "1 s and up are kept, without a word");
        // Ten seconds of clock: the loop may look at it every 100 ms, no more.
        let (beats, looks) = beats_over(interval, Duration::ZERO, Duration::from_secs(10));
        assert!(looks <= 101, "{looks} looks at the clock (and {beats} heartbeats) in 10 s of clock");
        assert!(beats <= 101, "{beats} heartbeats in 10 s of clock");
    }

    #[test]
    fn a_stall_does_not_make_a_burst_of_heartbeats() {
        // The emitter thread was held up 10 s: one heartbeat at once, then one a second, as Java's sleep-then-emit.
        let (beats, _) = beats_over(Duration::from_secs(1), Duration::from_secs(10), Duration::from_secs(12));
        assert!(beats <= 3, "{beats} heartbeats in the 2 s after a 10 s stall");
    }
}
