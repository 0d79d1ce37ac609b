//! Producer workers: each owns one librdkafka producer to the target and
//! drains one bounded channel of batches (see `batch`).
//!
//! A full local queue makes the worker wait and retry, never drop. The
//! worker serves its producer's delivery reports itself, between batches
//! and while it waits, and each settles the record's offset in its stream's
//! tracker. (rust-rdkafka's `ThreadedProducer` serves them on a thread of
//! its own; librdkafka then frees every record's message and header list on
//! another thread than the one that allocated them, and each of those frees
//! takes the allocating thread's malloc arena lock.) A record the target rejects for
//! good either stops the mirror (abort mode; its offset is never committed)
//! or is skipped, logged and counted (skip mode). With `--throttle.*`, a
//! worker takes its tokens before each send (see `throttle`).
//!
//! Where things are (each file imports only the ones listed after it):
//! - here: the producer's creation and what `engine` calls;
//! - [`worker`]: the worker thread, its send loop and its waits;
//! - [`failures`]: what a failed delivery calls for (send again, skip,
//!   stop), refused credentials, target topics gone;
//! - [`context`]: the producer's context ([`DeliveryContext`], which its
//!   delivery reports reach) and the state it shares with the worker;
//! - [`acks`]: the table of records in flight per source partition, and how
//!   acknowledgements (in any order) settle their offsets.
//!
//! A transactional worker (exactly-once, issue #29) will sit beside
//! `worker.rs` as `transactional.rs`: the same context and acknowledgement
//! table, its offsets committed with its transactions instead of by the
//! streams.

mod acks;
mod context;
mod failures;
mod worker;

use std::sync::Arc;
use std::thread;

use rdkafka::config::FromClientConfigAndContext;
use rdkafka::error::KafkaError;
use rdkafka::ClientConfig;

pub use acks::Deliveries;
pub use context::{DeliveryContext, GoneTopics, Resends, TargetProducer};
pub(crate) use failures::refusal_hint;

use crate::engine::pipeline::handoff::LaneRx;
use crate::engine::pipeline::throttle::Throttle;
use crate::ops::shutdown::Shutdown;

pub fn create<P: FromClientConfigAndContext<DeliveryContext>>(config: &ClientConfig, ctx: DeliveryContext) -> Result<P, KafkaError> {
    config.create_with_context(ctx)
}

/// Serves whatever events a producer not yet handed to its worker has
/// ready: delivery reports, and errors such as refused credentials, which
/// stop the mirror.
pub fn serve_ready_events(producer: &TargetProducer) {
    worker::Reports::new(producer).serve();
}

/// Runs one worker until every sender of its channel is gone, then flushes
/// within the drain deadline.
pub fn spawn_worker(index: usize, producer: TargetProducer, rx: LaneRx, shutdown: Arc<Shutdown>, throttle: Option<Arc<Throttle>>) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(format!("mirrormaker-producer-{index}"))
        .spawn(move || worker::run(index, producer, rx, shutdown, throttle))
        .expect("spawn producer worker")
}
