//! Consumer streams: one thread, one librdkafka consumer in the source's
//! group, feeding the producer workers' channels.
//!
//! Beside each stream, its control thread (`control`) lists the source's
//! topics every `--topic.refresh.interval.ms`, applies the MM1 filter and
//! subscribes to the exact list, so new topics are picked up without a
//! restart; it also checks new partitions for retention gaps and reports
//! lag, so the stream's own loop never waits on those requests.
//!
//! Records of one source partition always go to the same worker, so
//! per-partition (and per-key) order holds.
//! Records reach the workers in batches (see `handoff`): when a worker's
//! channel is full the stream holds the batch, pauses its partitions and
//! keeps polling, so it stays in the group; it resumes them when there is
//! room. On revocation the stream takes back what it never sent, waits
//! (bounded) for the revoked partitions' records to be acknowledged,
//! commits them, then lets go.

pub mod context;
pub mod control;
pub mod topic_hook;

use context::{apply, commit_until, worker_of};
pub use context::{commit, create, log_names, SourceConsumer, StreamContext, StreamSpec};

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use log::{debug, info, warn};
use rdkafka::consumer::Consumer;
use rdkafka::message::{BorrowedMessage, Message};

use crate::engine::pipeline::ack_hooks::FlowAckHooks;
use crate::engine::pipeline::batch::{PartitionRoute, RecordMeta};
use crate::engine::pipeline::offsets::{AckHandle, OffsetTracker};
use crate::fxhash::{self, FxHashMap, FxHashSet};
use crate::kafka::fetched;
use crate::ops::metrics::{Metrics, Polled, TopicMetrics};
use crate::ops::repeats;
use crate::ops::shutdown::ExitStatus;

/// Records taken from librdkafka per turn of a stream's loop.
const BATCH: usize = 500;

struct TopicRoute {
    source: Arc<str>,
    target: Arc<str>,
    stats: Arc<TopicMetrics>,
    /// Hash of (source, topic), from which each partition's worker follows.
    route_hash: u64,
    /// The provenance header's value (the source cluster id), when stamped.
    stamp: Option<Arc<str>>,
    /// Each partition's route in its current assignment, by partition.
    partitions: Vec<Option<Arc<PartitionRoute>>>,
    /// The flow's acknowledgement hooks (its offset-syncs), if any.
    ack_hooks: Option<Arc<dyn FlowAckHooks>>,
    /// What this turn of the loop read of each partition, by partition,
    /// handed to `stats` at the turn's end ([`Turn::settle`]).
    polled: Vec<Polled>,
    /// Whether `polled` holds anything this turn.
    touched: bool,
}

/// One turn of a stream's loop: up to [`BATCH`] records, counted per
/// partition here and handed to the shared counters once at its end, so
/// the MirrorMaker 2 figures (bytes, record age) cost no lock per record.
#[derive(Default)]
struct Turn {
    /// Read once per turn, when its first record arrives: a clock read per
    /// record showed in profiles.
    now: Option<i64>,
    /// Routes with something in `polled`.
    touched: Vec<Box<[u8]>>,
    /// Key and value bytes read.
    bytes: u64,
}

impl Turn {
    fn now(&mut self) -> i64 {
        *self.now.get_or_insert_with(crate::ops::metrics::now_ms)
    }

    /// Hands what the turn read to the shared counters.
    fn settle(&mut self, routes: &mut FxHashMap<Box<[u8]>, TopicRoute>, ctx: &StreamContext) {
        let now = self.now.take();
        Metrics::add(&ctx.client.bytes, std::mem::take(&mut self.bytes));
        let Some(now) = now else { return };
        for key in self.touched.drain(..) {
            // A route forgotten in the meantime (its topic deleted) has nothing to hand on.
            let Some(r) = routes.get_mut(&key) else { continue };
            r.touched = false;
            for (p, polled) in r.polled.iter_mut().enumerate() {
                if polled.age.count > 0 || polled.value_bytes > 0 {
                    r.stats.polled(p as i32, polled, now);
                    *polled = Polled::default();
                }
            }
        }
    }
}

impl TopicRoute {
    /// Registers `offset` of `partition` with the tracker and returns the
    /// partition's route: the one made before while the partition's
    /// assignment (its epoch) is the same, a new one after it was assigned again.
    fn partition(&mut self, tracker: &Arc<OffsetTracker>, partition: i32, offset: i64) -> &Arc<PartitionRoute> {
        let i = usize::try_from(partition).expect("librdkafka hands fetched records a partition number, never -1");
        if self.partitions.len() <= i {
            self.partitions.resize(i + 1, None);
        }
        let epoch = match &self.partitions[i] {
            Some(r) => tracker.track(&r.ack.tp, offset),
            None => tracker.track(&(self.source.clone(), partition), offset),
        };
        let slot = &mut self.partitions[i];
        if slot.as_ref().is_none_or(|r| r.ack.epoch != epoch) {
            let ack = AckHandle { tracker: tracker.clone(), tp: (self.source.clone(), partition), offset, epoch };
            let ack_hook = self.ack_hooks.as_ref().map(|h| h.clone().partition_hook(&self.source, partition));
            *slot = Some(Arc::new(PartitionRoute { ack, target: self.target.clone(), stamp: self.stamp.clone(), stats: self.stats.clone(), ack_hook }));
        }
        slot.as_ref().expect("set above")
    }
}

struct Stream {
    spec: Arc<StreamSpec>,
    consumer: Arc<SourceConsumer>,
    routes: FxHashMap<Box<[u8]>, TopicRoute>,
    turn: Turn,
    last_commit: Instant,
    /// The stream's control thread, and what tells it to stop (dropped).
    control: Option<(thread::JoinHandle<()>, crossbeam_channel::Sender<()>)>,
}

pub fn spawn(spec: StreamSpec, consumer: SourceConsumer) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(spec.name.clone())
        .spawn(move || {
            let (spec, consumer) = (Arc::new(spec), Arc::new(consumer));
            let (stop, stopped) = crossbeam_channel::bounded(0);
            let control = control::spawn(spec.clone(), consumer.clone(), stopped);
            let mut s =
                Stream { spec, consumer, routes: FxHashMap::default(), turn: Turn::default(), last_commit: Instant::now(), control: Some((control, stop)) };
            info!("[{0}] Starting mirror maker thread {0}", s.spec.name);
            s.run();
            s.finish();
        })
        .expect("spawn consumer stream")
}

impl Stream {
    fn ctx(&self) -> &StreamContext {
        self.consumer.context()
    }

    fn run(&mut self) {
        while !self.ctx().shutdown.stopping() {
            let held = self.retry_held();
            let timeout = if held { Duration::from_millis(5) } else { Duration::from_millis(100) };
            // Once records flow, take what librdkafka already holds without
            // waiting, up to a batch, before looking at the clocks again:
            // per-record timer checks and pending-queue flushes showed in profiles.
            let mut wait = timeout;
            for _ in 0..BATCH {
                match self.consumer.poll(wait) {
                    Some(Ok(msg)) => handle(&self.consumer, &self.spec, &mut self.routes, &msg, &mut self.turn),
                    Some(Err(e)) => {
                        match crate::kafka::auth::auth_failure(e.rdkafka_error_code(), &e.to_string(), &self.ctx().cluster) {
                            Some(msg) => self.ctx().shutdown.fail(ExitStatus::Config, msg),
                            None => match repeats::check(&format!("{} poll {:?}", self.spec.name, e.rdkafka_error_code())) {
                                Some(left_out) => warn!("[{}] consumer error: {e}{}", self.spec.name, repeats::note(left_out)),
                                None => debug!("[{}] consumer error: {e}", self.spec.name),
                            },
                        }
                        break;
                    }
                    None => break,
                }
                wait = Duration::ZERO;
            }
            let outcome = self.consumer.context().outbox.lock().unwrap().ship_all();
            apply(&self.consumer, &self.spec.name, outcome);
            self.turn.settle(&mut self.routes, self.consumer.context());
            self.forget_gone();
            if self.last_commit.elapsed() >= self.spec.commit_interval {
                let ctx = self.consumer.context();
                let mut offsets = ctx.tracker.committable();
                // The group's offset for these is still to be compared with
                // the log start (by the control thread); committing first
                // would hide a gap.
                {
                    let pending = ctx.gap_pending.lock().unwrap();
                    offsets.retain(|(tp, _)| !pending.unread.contains(tp));
                }
                commit(&self.consumer, &ctx.tracker, &ctx.metrics, &self.spec.name, offsets, commit_until(&ctx.shutdown));
                self.last_commit = Instant::now();
            }
        }
    }

    /// Forgets what the stream keeps of topics deleted at the source (see
    /// [`StreamContext::gone_topics`]): their routes, their counters and
    /// their offset-sync state. Only once a topic has left the assignment,
    /// so no record of it comes after; records of it still in flight keep
    /// their own handles (Arcs) and are settled and committed as any other.
    /// A topic made again with the same name starts afresh.
    fn forget_gone(&mut self) {
        let ctx = self.consumer.context();
        if ctx.gone_topics.lock().unwrap_or_else(|e| e.into_inner()).is_empty() {
            return;
        }
        let Ok(assigned) = self.consumer.assignment() else { return };
        let held: FxHashSet<String> = assigned.elements().iter().map(|e| e.topic().to_string()).collect();
        let gone: Vec<Arc<str>> = {
            let mut pending = ctx.gone_topics.lock().unwrap_or_else(|e| e.into_inner());
            let gone: Vec<Arc<str>> = pending.iter().filter(|t| !held.contains(&***t)).cloned().collect();
            for t in &gone {
                pending.remove(t);
            }
            gone
        };
        if gone.is_empty() {
            return;
        }
        for topic in &gone {
            if self.routes.remove(topic.as_bytes()).is_some() {
                ctx.metrics.topic_routes.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            }
            ctx.metrics.forget_topic(self.spec.source_index, topic);
            if let Some(hooks) = &self.spec.ack_hooks {
                hooks.forget_topic(topic);
            }
        }
        let tracked = self.spec.ack_hooks.as_ref().map_or(String::new(), |h| format!("; offset-sync partitions tracked: {}", h.tracked()));
        info!("[{}] forgot {} topics deleted at the source (routes, counters, offset-sync state){tracked}", self.spec.name, gone.len());
    }

    /// Stop: drop what was never handed over, wait for acks, commit, leave.
    fn finish(mut self) {
        let name = self.spec.name.clone();
        info!("[{name}] Shutting down consumer thread.");
        // No subscription changes from here on. Told first, so the control
        // thread ends while the stream drains and commits: it leaves behind
        // any long request in progress (control::Control::unless_stopped),
        // so the join after the final commit waits a moment, not a turn.
        *self.ctx().control_stopped.lock().unwrap() = true;
        let control = self.control.take().map(|(handle, stop)| {
            drop(stop);
            handle
        });
        {
            // Dropping our senders lets the workers finish once every stream is done.
            let ctx = self.consumer.context();
            let unsent = ctx.outbox.lock().unwrap().close();
            for (tp, first) in &unsent {
                ctx.tracker.abandon(tp, *first);
            }
        }
        // Polls from here on (to serve rebalances) must not fetch anything new.
        if let Ok(assigned) = self.consumer.assignment() {
            let _ = self.consumer.pause(&assigned);
        }
        let ctx = self.consumer.context();
        if !ctx.tracker.wait_drained(None, ctx.shutdown.deadline()) {
            warn!(
                "[{name}] {} records were not acknowledged by the target within the drain timeout; their offsets are not committed",
                ctx.tracker.in_flight(None)
            );
            ctx.shutdown.drain_timed_out();
        }
        info!("[{name}] Committing consumer offsets.");
        // A commit can fail while the group rebalances; keep serving the
        // consumer (nothing new is mirrored now) and try again until the deadline.
        // Each attempt waits no later than the deadline (see commit_until),
        // so an unreachable coordinator holds the shutdown no longer.
        while !commit(&self.consumer, &ctx.tracker, &ctx.metrics, &name, ctx.tracker.committable(), commit_until(&ctx.shutdown))
            && !ctx.shutdown.deadline_passed()
        {
            let until = Instant::now() + Duration::from_millis(500);
            while Instant::now() < until {
                let _ = self.consumer.poll(Duration::from_millis(100));
            }
        }
        if !ctx.tracker.committable().is_empty() {
            warn!("[{name}] could not commit the final offsets; records since the last commit are mirrored again on restart (duplicates, no loss)");
            // Not the clean stop of exit 0: a restart sends records again.
            ctx.shutdown.drain_timed_out();
        }
        self.spec.leave_barrier.wait();
        info!("[{name}] Shutting down consumer connectors.");
        // Released while the consumer it belongs to still exists.
        ctx.unanswered_commit.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(handle) = control {
            let _ = handle.join();
        }
        self.consumer.unsubscribe();
        drop(self.consumer);
        info!("[{name}] Mirror maker thread stopped");
    }
}

fn handle(consumer: &SourceConsumer, spec: &StreamSpec, routes: &mut FxHashMap<Box<[u8]>, TopicRoute>, msg: &BorrowedMessage<'_>, turn: &mut Turn) {
    let ctx = consumer.context();
    // Looked up by the name's bytes: `Message::topic` checks them as UTF-8
    // for every record (1.5% of the instructions per 100 B record); a name
    // is checked once, when its route is made.
    let name = crate::kafka::fetched::topic_name(msg);
    let r = match routes.get_mut(name) {
        Some(r) => r,
        None => {
            let topic = msg.topic();
            let target: Arc<str> = Arc::from(spec.handler.target_topic(topic).as_ref());
            let stats = ctx.metrics.topic(spec.source_index, topic);
            let route_hash = fxhash::hash_one(&(spec.source_index, topic));
            let stamp = spec.provenance.as_ref().map(|p| Arc::from(p.source_id.as_str()));
            let ack_hooks = spec.ack_hooks.clone();
            let _ = stats.remote.set(target.clone());
            let route = TopicRoute {
                source: Arc::from(topic),
                target,
                stats,
                route_hash,
                stamp,
                partitions: Vec::new(),
                ack_hooks,
                polled: Vec::new(),
                touched: false,
            };
            Metrics::add(&ctx.metrics.topic_routes, 1);
            routes.entry(Box::from(name)).or_insert(route)
        }
    };
    let (partition, offset) = (msg.partition(), msg.offset());
    let route_hash = r.route_hash;
    let route = r.partition(&ctx.tracker, partition, offset);
    // Parsed once: librdkafka parses a record's headers out of the fetch
    // buffer, with an allocation, every time they are asked for (a second
    // call cost 7% of the instructions per 100 B record in callgrind).
    let source_headers = if fetched::without_headers(msg) { None } else { msg.headers() };
    // Checked before the headers are copied: a skipped record needs no copy.
    if let Some(p) = &spec.provenance {
        if p.came_from_target(source_headers) {
            // Written on the target by the mirror of the other direction:
            // done, so the commit moves past it, but never copied back.
            route.ack.done_at(offset);
            Metrics::add(&ctx.metrics.consumed, 1);
            Metrics::add(&route.stats.consumed, 1);
            Metrics::add(&ctx.metrics.loop_skipped, 1);
            Metrics::add(&route.stats.loop_skipped, 1);
            return;
        }
    }
    // A record without headers of its own only gets the provenance
    // header: the worker hands librdkafka its name and value, and the
    // header list is built once, by librdkafka, instead of here and there.
    let (headers, stamp) = match (source_headers, &spec.provenance) {
        (Some(h), Some(p)) => (Some(p.stamp(Some(h.detach()))), false),
        (Some(h), None) => (Some(h.detach()), false),
        (None, p) => (None, p.is_some()),
    };
    let (key, value) = (msg.key(), msg.payload());
    let size = (key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len)) as u64;
    let meta = RecordMeta {
        offset,
        partition: spec.handler.target_partition(partition),
        headers,
        stamp,
        // -1 (no timestamp, old message format): the target stamps it, as MM1 did.
        timestamp: msg.timestamp().to_millis().filter(|t| *t >= 0),
    };
    Metrics::add(&ctx.metrics.consumed, 1);
    Metrics::add(&ctx.metrics.consumed_bytes, size);
    Metrics::add(&route.stats.consumed, 1);
    Metrics::add(&route.stats.consumed_bytes, size);
    let (value_bytes, timestamp) = (value.map_or(0, <[u8]>::len) as u64, meta.timestamp);
    let mut outbox = ctx.outbox.lock().unwrap();
    let worker = worker_of(outbox.workers(), route_hash, partition);
    let outcome = outbox.push(worker, route, meta, key, value);
    drop(outbox);
    apply(consumer, &spec.name, outcome);
    // MirrorMaker 2's poll-time figures: value bytes and record age.
    turn.bytes += size;
    let age = timestamp.map(|ts| turn.now().saturating_sub(ts).max(0));
    let i = usize::try_from(partition).unwrap_or_default();
    if r.polled.len() <= i {
        r.polled.resize(i + 1, Polled::default());
    }
    let polled = &mut r.polled[i];
    polled.value_bytes += value_bytes;
    if let Some(age) = age {
        polled.age.add(age as f64);
        polled.age_last = Some(age);
    }
    if !r.touched {
        r.touched = true;
        turn.touched.push(Box::from(name));
    }
}

impl Stream {
    /// Sends held batches where there is room; resumes the partitions of
    /// workers with nothing held any more (once their channel is half
    /// empty). Returns whether anything is still held.
    fn retry_held(&mut self) -> bool {
        let mut outbox = self.consumer.context().outbox.lock().unwrap();
        // Paused with nothing held: waiting for the channel to drain to
        // half before resuming (Outbox::retry_held).
        if !outbox.has_held() && !outbox.has_paused() {
            return false;
        }
        let outcome = outbox.retry_held();
        let left = outbox.has_held();
        drop(outbox);
        apply(&self.consumer, &self.spec.name, outcome);
        left
    }
}
