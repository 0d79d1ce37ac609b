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

use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use log::{debug, error, info, warn};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};

use crate::engine::batch::{PartitionRoute, RecordMeta};
use crate::engine::control;
use crate::engine::handoff::{Outbox, Outcome};
use crate::engine::offset_syncs::FlowSyncs;
use crate::engine::offsets::{AckHandle, OffsetTracker, Tp};
use crate::engine::provenance::Provenance;
use crate::engine::topics::MetaClient;
use crate::engine::topics::TopicSync;
use crate::fxhash::{self, FxHashMap, FxHashSet};
use crate::kafka::commit::CommitQueue;
use crate::kafka::{fetched, partition_list};
use crate::ops::metrics::{Metrics, TopicMetrics};
use crate::ops::repeats;
use crate::ops::shutdown::{exit, Shutdown};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;

/// Names listed in an info line about a subscription or an assignment;
/// thousands on every change would drown the log (all are at debug level).
const LISTED: usize = 50;

/// Logs `[stream] {what} {n} {unit}: names` with the first [`LISTED`]
/// names, and every name at debug level when there are more.
pub(crate) fn log_names(stream: &str, what: &str, unit: &str, names: &[String]) {
    if names.len() <= LISTED {
        info!("[{stream}] {what} {} {unit}: {}", names.len(), names.join(", "));
    } else {
        info!("[{stream}] {what} {} {unit}: {}, and {} more (all of them at debug level)", names.len(), names[..LISTED].join(", "), names.len() - LISTED);
        debug!("[{stream}] {what}: {}", names.join(", "));
    }
}

/// Records taken from librdkafka per turn of a stream's loop.
const BATCH: usize = 500;

/// Partitions assigned and not yet through the retention-gap check.
#[derive(Default)]
pub struct GapPending {
    /// Assigned since the control thread last looked.
    pub newly: Vec<Tp>,
    /// Whose group's committed offset is still to be read: nothing of
    /// theirs is committed before, or the read would find our own commit
    /// and a gap would go unseen.
    pub unread: FxHashSet<Tp>,
}

/// What the rebalance callbacks need; lives inside the consumer.
pub struct StreamContext {
    pub name: String,
    /// Index of this stream's `--consumer.config`, for metric labels.
    pub source_index: usize,
    /// auto.offset.reset=earliest: a partition with no commit yet lags by
    /// its whole log, which is what a restart would read again.
    pub lag_from_log_start: bool,
    pub tracker: Arc<OffsetTracker>,
    /// The channels to the workers, with what is not sent yet; here because
    /// revocation (a callback) takes back records of revoked partitions.
    pub outbox: Mutex<Outbox>,
    /// Newly assigned partitions on their way to the retention-gap check.
    pub gap_pending: Mutex<GapPending>,
    /// Set when the stream begins to stop: the control thread subscribes no
    /// more (checked and set under this lock).
    pub control_stopped: Mutex<bool>,
    /// Partitions this stream paused and has not resumed since: librdkafka
    /// keeps an application pause across unassign and assign, so these are
    /// the ones a new assignment may bring back paused.
    pub paused_in_librdkafka: Mutex<FxHashSet<Tp>>,
    /// Topics the control thread found deleted at the source, for the
    /// stream to forget once they have left its assignment.
    pub gone_topics: Mutex<FxHashSet<Arc<str>>>,
    /// A commit sent whose answer did not come back in time (see [`commit`]).
    pub unanswered_commit: Mutex<Option<CommitQueue>>,
    pub shutdown: Arc<Shutdown>,
    pub metrics: Arc<Metrics>,
    /// The source cluster and its file, for messages.
    pub cluster: String,
}

impl ClientContext for StreamContext {
    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        // librdkafka would retry refused credentials forever: stop instead.
        match crate::kafka::auth::auth_failure(error.rdkafka_error_code(), reason, &self.cluster) {
            Some(msg) => {
                if !self.shutdown.stopping() {
                    error!("{msg}");
                }
                self.shutdown.fail(exit::CONFIG, msg);
            }
            None if self.shutdown.code() == exit::CONFIG => debug!("[{}] librdkafka: {error}: {reason}", self.name),
            None => match repeats::check(&format!("{} {:?}", self.name, error.rdkafka_error_code())) {
                Some(left_out) => error!("[{}] librdkafka: {error}: {reason}{}", self.name, repeats::note(left_out)),
                None => debug!("[{}] librdkafka: {error}: {reason}", self.name),
            },
        }
    }

    /// Ignored: the lag comes from [`Stream::report_lag`]. Only a file that
    /// sets `statistics.interval.ms` itself makes librdkafka send them.
    fn stats(&self, _stats: rdkafka::Statistics) {}
}

fn tps_of(list: &TopicPartitionList) -> Vec<Tp> {
    list.elements().iter().map(|e| (Arc::from(e.topic()), e.partition())).collect()
}

impl ConsumerContext for StreamContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            Metrics::add(&self.metrics.rebalances, 1);
            let tps = tps_of(list);
            // Records never handed to a worker are simply not sent; the
            // next owner reads them again from the committed offset.
            let (unsent, outcome) = self.outbox.lock().unwrap().take_back(Some(&tps));
            for (tp, first) in &unsent {
                self.tracker.abandon(tp, *first);
            }
            // Still assigned here, so the resume reaches librdkafka: a pause
            // it kept past the revocation would outlive the partition's
            // next assignment.
            apply(consumer, &self.name, outcome);
            if consumer.assignment_lost() {
                warn!("[{}] assignment lost; nothing is committed for {} partitions", self.name, tps.len());
                self.tracker.remove(&tps);
                return;
            }
            let deadline = self.shutdown.bounded(self.shutdown.drain_timeout());
            if !self.tracker.wait_drained(Some(&tps), deadline) {
                warn!(
                    "[{}] {} records of revoked partitions were not acknowledged in time; only what was delivered is committed",
                    self.name,
                    self.tracker.in_flight(Some(&tps))
                );
            }
            let committed = commit(consumer, &self.tracker, &self.metrics, &self.name, self.tracker.committable_for(&tps), commit_until(&self.shutdown));
            self.tracker.remove(&tps);
            if committed {
                info!("[{}] released {} partitions after committing what was delivered", self.name, tps.len());
            } else {
                warn!("[{}] released {} partitions without committing all that was delivered; their next owner mirrors it again", self.name, tps.len());
            }
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(list) => {
                let mut names: Vec<String> = list.elements().iter().map(|e| format!("{}-{}", e.topic(), e.partition())).collect();
                names.sort();
                log_names(&self.name, "assigned", "partitions", &names);
                // New to this stream, so nothing of theirs is held or paused
                // here; librdkafka may still hold an application pause from an
                // earlier assignment (one lost without a revocation callback
                // that could resume it). Resumed, so what it pauses is what
                // the outbox pauses; only those this stream left paused, since
                // each resume costs librdkafka a barrier in the consumer queue,
                // inserted in priority order: resuming all of 10,000 newly
                // assigned partitions held up their first fetch.
                let again: Vec<Tp> = {
                    let paused = self.paused_in_librdkafka.lock().unwrap();
                    if paused.is_empty() {
                        Vec::new()
                    } else {
                        tps_of(list).into_iter().filter(|tp| paused.contains(tp)).collect()
                    }
                };
                if !again.is_empty() {
                    apply(consumer, &self.name, Outcome { resume: again, ..Outcome::default() });
                }
                // Checked by the stream's loop (Stream::check_gaps): asking
                // the source here, inside the poll, would hold the member
                // past max.poll.interval.ms whenever brokers are slow to answer.
                let mut pending = self.gap_pending.lock().unwrap();
                for tp in tps_of(list) {
                    pending.unread.insert(tp.clone());
                    pending.newly.push(tp);
                }
            }
            Rebalance::Error(e) => warn!("[{}] rebalance error: {e}", self.name),
            Rebalance::Revoke(_) => {}
        }
    }
}

pub type SourceConsumer = BaseConsumer<StreamContext>;

/// How long a commit waits for the group coordinator's answer while the
/// mirror runs. librdkafka's synchronous commit waits for as long as the
/// coordinator does not answer, forever while the source is down, and the
/// stream would stop polling (and its shutdown stop) with it.
const COMMIT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a commit gets when the drain deadline has passed (or is nearer):
/// a drain that took all its time, the target away, still commits what
/// was delivered, which spares a restart from sending it again.
const LAST_COMMIT_WAIT: Duration = Duration::from_secs(2);

/// Until when a commit may wait: [`COMMIT_TIMEOUT`]; while stopping, no
/// later than the drain deadline but at least [`LAST_COMMIT_WAIT`].
fn commit_until(shutdown: &Shutdown) -> Instant {
    let now = Instant::now();
    if !shutdown.stopping() {
        return now + COMMIT_TIMEOUT;
    }
    shutdown.deadline().min(now + COMMIT_TIMEOUT).max(now + LAST_COMMIT_WAIT)
}

/// The list to commit `offsets` with: cut from the assignment where it
/// can be (see [`apply`]: librdkafka handles the answer partition by
/// partition, and by name each one meant a search of every topic), by name
/// for any partition not assigned now.
fn commit_list(consumer: &SourceConsumer, name: &str, offsets: &[(Tp, i64)]) -> TopicPartitionList {
    let mut wanted: FxHashMap<&str, FxHashMap<i32, i64>> = FxHashMap::default();
    for ((topic, partition), offset) in offsets {
        wanted.entry(&**topic).or_default().insert(*partition, *offset);
    }
    let mut list = match consumer.assignment() {
        Ok(assigned) => partition_list::subset(&assigned, |t, p| wanted.get(t).is_some_and(|ps| ps.contains_key(&p))),
        Err(_) => TopicPartitionList::new(),
    };
    partition_list::forget_leader_epochs(&mut list);
    for mut e in list.elements() {
        let offset = wanted.get_mut(e.topic()).and_then(|ps| ps.remove(&e.partition()));
        if let Some(offset) = offset {
            if let Err(err) = e.set_offset(Offset::Offset(offset)) {
                warn!("[{name}] cannot commit {}-{} at {offset}: {err}", e.topic(), e.partition());
            }
        }
    }
    for (topic, partitions) in wanted {
        for (partition, offset) in partitions {
            if let Err(e) = list.add_partition_offset(topic, partition, Offset::Offset(offset)) {
                warn!("[{name}] cannot commit {topic}-{partition} at {offset}: {e}");
            }
        }
    }
    list
}

/// Commits `offsets` (the tracker's watermarks), waiting for the answer
/// until `until` at most. Only what the coordinator confirmed is marked
/// committed. Returns false only when a commit was attempted and failed
/// or was not answered in time.
///
/// At most one commit is in flight: a commit not answered in time stays
/// alive in librdkafka, which may retry it and apply it later. Sent
/// meanwhile, a newer commit could land first and then be overwritten by
/// the older offsets, moving the group back while the tracker believes the
/// newer ones committed (found by the mock suite: a group that never
/// caught up). So the next commit first waits, within the same bound, for
/// the unanswered one, and is not sent while it is still out.
pub fn commit(consumer: &SourceConsumer, tracker: &OffsetTracker, metrics: &Metrics, name: &str, offsets: Vec<(Tp, i64)>, until: Instant) -> bool {
    let mut unanswered = consumer.context().unanswered_commit.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(queue) = unanswered.as_ref() {
        match queue.answer(until) {
            // Its offsets are the same as this one's or older: what it
            // says no longer matters, only that it can no longer land late.
            Some(answer) => {
                debug!("[{name}] the earlier unanswered commit was answered: {answer:?}");
                *unanswered = None;
            }
            None => {
                Metrics::add(&metrics.commit_failures, 1);
                warn!(
                    "[{name}] an earlier offset commit is still unanswered by the group coordinator; no newer one is sent until it is (it could be overtaken)"
                );
                return false;
            }
        }
    }
    if offsets.is_empty() {
        return true;
    }
    let list = commit_list(consumer, name, &offsets);
    let started = Instant::now();
    let answer = match CommitQueue::send(consumer.client(), &list) {
        Ok(queue) => match queue.answer(until) {
            Some(answer) => answer,
            None => {
                *unanswered = Some(queue);
                Err(format!("no answer from the group coordinator within {:.1} s", until.saturating_duration_since(started).as_secs_f64()))
            }
        },
        Err(e) => Err(e),
    };
    match answer {
        Ok(failed) if failed.is_empty() => {
            tracker.mark_committed(&offsets);
            Metrics::add(&metrics.commits, 1);
            Metrics::add(&metrics.commit_micros, started.elapsed().as_micros() as u64);
            debug!("[{name}] committed {} partitions", offsets.len());
            true
        }
        Ok(failed) => {
            let done: Vec<(Tp, i64)> = offsets.into_iter().filter(|((t, p), _)| !failed.iter().any(|(ft, fp, _)| **t == **ft && p == fp)).collect();
            tracker.mark_committed(&done);
            Metrics::add(&metrics.commit_failures, 1);
            let (t, p, e) = &failed[0];
            warn!(
                "[{name}] offset commit failed for {} of {} partitions (e.g. {t}-{p}: {e}); the same offsets are committed again at the next attempt",
                failed.len(),
                failed.len() + done.len()
            );
            false
        }
        Err(e) => {
            Metrics::add(&metrics.commit_failures, 1);
            warn!("[{name}] offset commit failed: {e}; the same offsets are committed again at the next attempt");
            false
        }
    }
}

/// A consumer stream's fixed inputs.
pub struct StreamSpec {
    pub name: String,
    pub source_index: usize,
    pub filter: Arc<TopicFilter>,
    pub handler: Arc<Handler>,
    pub commit_interval: Duration,
    pub refresh_interval: Duration,
    /// For partition-preserving: a client of the target for partition counts.
    pub target_meta: Option<Arc<MetaClient>>,
    /// Shared by every stream of the process: nobody leaves the group until
    /// everybody has committed, or a member's departure would start a
    /// rebalance that fails the others' final commits.
    pub leave_barrier: Arc<Barrier>,
    /// Creates target topics like the source and adds partitions (`topics`).
    pub topic_sync: Option<Arc<TopicSync>>,
    /// Stamps records with their source cluster and skips those that came
    /// from the target (`provenance`).
    pub provenance: Option<Provenance>,
    /// Learns each record's target offset from its acknowledgement
    /// (`offset_syncs`), when the flow writes offset-syncs.
    pub syncs: Option<Arc<FlowSyncs>>,
    /// How often the stream reports its partitions' lag (none: never).
    pub lag_interval: Option<Duration>,
}

pub fn create(config: &ClientConfig, ctx: StreamContext) -> Result<SourceConsumer, rdkafka::error::KafkaError> {
    config.create_with_context(ctx)
}

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
    /// The flow's offset-syncs, when it writes them.
    syncs: Option<Arc<FlowSyncs>>,
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
            let syncs = self.syncs.as_ref().map(|s| s.partition(&self.source, partition));
            *slot = Some(Arc::new(PartitionRoute { ack, target: self.target.clone(), stamp: self.stamp.clone(), stats: self.stats.clone(), syncs }));
        }
        slot.as_ref().expect("set above")
    }
}

struct Stream {
    spec: Arc<StreamSpec>,
    consumer: Arc<SourceConsumer>,
    routes: FxHashMap<Box<[u8]>, TopicRoute>,
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
            let mut s = Stream { spec, consumer, routes: FxHashMap::default(), last_commit: Instant::now(), control: Some((control, stop)) };
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
                    Some(Ok(msg)) => handle(&self.consumer, &self.spec, &mut self.routes, &msg),
                    Some(Err(e)) => {
                        match crate::kafka::auth::auth_failure(e.rdkafka_error_code(), &e.to_string(), &self.ctx().cluster) {
                            Some(msg) => self.ctx().shutdown.fail(exit::CONFIG, msg),
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
            if let Some(syncs) = &self.spec.syncs {
                syncs.forget_topic(topic);
            }
        }
        let tracked = self.spec.syncs.as_ref().map_or(String::new(), |s| format!("; offset-sync partitions tracked: {}", s.tracked()));
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

/// The worker for a source partition: always the same one, so the
/// partition's records reach the target in order.
fn worker_of(workers: usize, route_hash: u64, partition: i32) -> usize {
    if workers == 1 {
        return 0;
    }
    (fxhash::hash_one(&(route_hash, partition)) % workers as u64) as usize
}

fn handle(consumer: &SourceConsumer, spec: &StreamSpec, routes: &mut FxHashMap<Box<[u8]>, TopicRoute>, msg: &BorrowedMessage<'_>) {
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
            let syncs = spec.syncs.clone();
            let route = TopicRoute { source: Arc::from(topic), target, stats, route_hash, stamp, partitions: Vec::new(), syncs };
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
    let mut outbox = ctx.outbox.lock().unwrap();
    let worker = worker_of(outbox.workers(), route_hash, partition);
    let outcome = outbox.push(worker, route, meta, key, value);
    drop(outbox);
    apply(consumer, &spec.name, outcome);
}

fn list_of(tps: &[Tp]) -> TopicPartitionList {
    let mut list = TopicPartitionList::new();
    for tp in tps {
        list.add_partition(&tp.0, tp.1);
    }
    list
}

/// Pauses the partitions of held batches, and every other partition of
/// the stream that goes to a worker that has just started holding (see
/// [`Outcome::holding`]); resumes those of workers with nothing held any
/// more; stops the mirror if the workers are gone.
///
/// The lists handed to librdkafka are cut from the assignment
/// ([`partition_list::subset`]), never built by name: by name, each pause
/// and resume of a stream's 10,000 partitions over 5,000 topics cost a
/// linear search of every topic per partition.
fn apply(consumer: &SourceConsumer, name: &str, outcome: Outcome) {
    let disconnected = outcome.disconnected;
    if !(outcome.pause.is_empty() && outcome.resume.is_empty() && outcome.holding.is_empty()) {
        pause_and_resume(consumer, name, outcome);
    }
    if disconnected {
        consumer.context().shutdown.fail(exit::FAILURE, "producer workers stopped unexpectedly".into());
    }
}

/// [`apply`]'s pauses and resumes.
fn pause_and_resume(consumer: &SourceConsumer, name: &str, mut outcome: Outcome) {
    let assigned = consumer.assignment().ok();
    if let (false, Some(assigned)) = (outcome.holding.is_empty(), &assigned) {
        let ctx = consumer.context();
        let mut outbox = ctx.outbox.lock().unwrap();
        let workers = outbox.workers();
        let elements = assigned.elements();
        for &w in &outcome.holding {
            let tps = elements
                .iter()
                .filter(|e| worker_of(workers, fxhash::hash_one(&(ctx.source_index, e.topic())), e.partition()) == w)
                .map(|e| (Arc::from(e.topic()), e.partition()));
            outcome.pause.extend(outbox.pause_also(w, tps));
        }
    }
    if !outcome.pause.is_empty() {
        // Only what is assigned can be paused: what is not (any more) has
        // nothing fetched for it.
        if let Some(assigned) = &assigned {
            let want = TpSet::of(&outcome.pause);
            let list = partition_list::subset(assigned, |t, p| want.contains(t, p));
            if let Err(e) = consumer.pause(&list) {
                debug!("[{name}] pausing {} partitions failed: {e}", outcome.pause.len());
            }
            consumer.context().paused_in_librdkafka.lock().unwrap().extend(tps_of(&list));
        }
    }
    if !outcome.resume.is_empty() {
        {
            let mut paused = consumer.context().paused_in_librdkafka.lock().unwrap();
            for tp in &outcome.resume {
                paused.remove(tp);
            }
        }
        let mut want = TpSet::of(&outcome.resume);
        if let Some(assigned) = &assigned {
            let list = partition_list::subset(assigned, |t, p| want.remove(t, p));
            if let Err(e) = consumer.resume(&list) {
                debug!("[{name}] resuming {} partitions failed: {e}", list.count());
            }
        }
        // Not assigned now (or the assignment could not be read): resumed
        // by name all the same, since librdkafka keeps an application
        // pause across unassign and assign.
        if !want.is_empty() {
            let rest: Vec<Tp> = outcome.resume.iter().filter(|(t, p)| want.contains(t, *p)).cloned().collect();
            if let Err(e) = consumer.resume(&list_of(&rest)) {
                debug!("[{name}] resuming {} partitions failed: {e}", rest.len());
            }
        }
    }
}

/// Partitions to look up by a topic name borrowed from anywhere (such as a
/// librdkafka list), in constant time.
pub(crate) struct TpSet<'a>(FxHashMap<&'a str, FxHashSet<i32>>);

impl<'a> TpSet<'a> {
    pub(crate) fn of(tps: &'a [Tp]) -> TpSet<'a> {
        let mut set: FxHashMap<&'a str, FxHashSet<i32>> = FxHashMap::default();
        for (t, p) in tps {
            set.entry(&**t).or_default().insert(*p);
        }
        TpSet(set)
    }

    pub(crate) fn contains(&self, topic: &str, partition: i32) -> bool {
        self.0.get(topic).is_some_and(|ps| ps.contains(&partition))
    }

    /// Takes `topic`-`partition` out; whether it was in.
    fn remove(&mut self, topic: &str, partition: i32) -> bool {
        self.0.get_mut(topic).is_some_and(|ps| ps.remove(&partition))
    }

    fn is_empty(&self) -> bool {
        self.0.values().all(FxHashSet::is_empty)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `commit_until` lets a commit wait about `expected`: at most
    /// that, and no more than half a second less (time passes between the
    /// stop and the question on a busy machine).
    fn waits(shutdown: &Shutdown, expected: Duration) -> bool {
        let wait = commit_until(shutdown).saturating_duration_since(Instant::now());
        wait <= expected && wait + Duration::from_millis(500) > expected
    }

    #[test]
    fn a_commit_waits_no_longer_than_the_drain_leaves_but_always_a_little() {
        let running = Shutdown::new(Duration::from_secs(60));
        assert!(waits(&running, COMMIT_TIMEOUT), "while running: the commit timeout");
        running.request_stop();
        assert!(waits(&running, COMMIT_TIMEOUT), "a deadline farther away than the commit timeout changes nothing");
        let between = Shutdown::new(Duration::from_secs(3));
        between.request_stop();
        assert!(waits(&between, Duration::from_secs(3)), "a deadline between the two: until the deadline");
        let short = Shutdown::new(Duration::from_millis(300));
        short.request_stop();
        assert!(waits(&short, LAST_COMMIT_WAIT), "a deadline nearer than the last commit's wait: that wait");
        let passed = Shutdown::new(Duration::ZERO);
        passed.request_stop();
        assert!(passed.deadline_passed());
        assert!(waits(&passed, LAST_COMMIT_WAIT), "after the deadline: the last commit's wait");
    }
}
