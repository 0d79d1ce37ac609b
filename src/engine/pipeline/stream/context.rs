//! What a stream and its control thread share: the stream's fixed inputs
//! ([`StreamSpec`]), the consumer's context with its rebalance callbacks
//! ([`StreamContext`]), the bounded commit of acknowledged offsets
//! ([`commit`]) and the pausing and resuming of partitions. A leaf of `stream`, so that the
//! stream and its `control` child both use it without importing each other.

use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use log::{debug, error, info, warn};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};

use crate::engine::pipeline::ack_hooks::FlowAckHooks;
use crate::engine::pipeline::handoff::{Outbox, Outcome};
use crate::engine::pipeline::offsets::{OffsetTracker, Tp};
use crate::engine::pipeline::provenance::Provenance;
use crate::engine::pipeline::stream::topic_hook::TargetTopics;
use crate::fxhash::{self, FxHashMap, FxHashSet};
use crate::kafka::admin::MetaClient;
use crate::kafka::commit::{CommitError, CommitQueue};
use crate::kafka::partition_list;
use crate::ops::metrics::Metrics;
use crate::ops::repeats;
use crate::ops::shutdown::{ExitStatus, Shutdown};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;

/// Names listed in an info line about a subscription or an assignment;
/// thousands on every change would drown the log (all are at debug level).
const LISTED: usize = 50;

/// Logs `[stream] {what} {n} {unit}: names` with the first [`LISTED`]
/// names, and every name at debug level when there are more.
pub fn log_names(stream: &str, what: &str, unit: &str, names: &[String]) {
    if names.len() <= LISTED {
        info!("[{stream}] {what} {} {unit}: {}", names.len(), names.join(", "));
    } else {
        info!("[{stream}] {what} {} {unit}: {}, and {} more (all of them at debug level)", names.len(), names[..LISTED].join(", "), names.len() - LISTED);
        debug!("[{stream}] {what}: {}", names.join(", "));
    }
}

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
    /// The stream's index within its flow (MirrorMaker 2's task number).
    pub task: usize,
    /// Its bytes read, as MirrorMaker 2's replication consumer's.
    pub client: Arc<crate::ops::metrics::StreamClient>,
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
                self.shutdown.fail(ExitStatus::Config, msg);
            }
            None if self.shutdown.status() == ExitStatus::Config => debug!("[{}] librdkafka: {error}: {reason}", self.name),
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
    /// Creates target topics like the source and adds partitions (the
    /// engine's `mm2::topics`, seen through [`TargetTopics`]).
    pub topic_sync: Option<Arc<dyn TargetTopics>>,
    /// Stamps records with their source cluster and skips those that came
    /// from the target (`provenance`).
    pub provenance: Option<Provenance>,
    /// Learns each record's target offset from its acknowledgement (the
    /// flow's offset-syncs, see `ack_hooks`), when the flow has any.
    pub ack_hooks: Option<Arc<dyn FlowAckHooks>>,
    /// How often the stream reports its partitions' lag (none: never).
    pub lag_interval: Option<Duration>,
}

pub fn create(config: &ClientConfig, ctx: StreamContext) -> Result<SourceConsumer, rdkafka::error::KafkaError> {
    config.create_with_context(ctx)
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
pub(super) fn commit_until(shutdown: &Shutdown) -> Instant {
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
                Err(CommitError::Unanswered { waited: until.saturating_duration_since(started) })
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
pub(super) fn apply(consumer: &SourceConsumer, name: &str, outcome: Outcome) {
    let disconnected = outcome.disconnected;
    if !(outcome.pause.is_empty() && outcome.resume.is_empty() && outcome.holding.is_empty()) {
        pause_and_resume(consumer, name, outcome);
    }
    if disconnected {
        consumer.context().shutdown.fail(ExitStatus::Failure, "producer workers stopped unexpectedly".into());
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

/// The worker for a source partition: always the same one, so the
/// partition's records reach the target in order.
pub(super) fn worker_of(workers: usize, route_hash: u64, partition: i32) -> usize {
    if workers == 1 {
        return 0;
    }
    (fxhash::hash_one(&(route_hash, partition)) % workers as u64) as usize
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
