//! The periodic work beside each consumer stream, on a thread of its own:
//! listing the source's topics and subscribing to those the filter takes,
//! checking newly assigned partitions for retention gaps, reporting lag,
//! and asking the ends of paused partitions.
//!
//! Each of these waits on a broker (a metadata request, an OffsetFetch, a
//! ListOffsets) and, at thousands of partitions, on librdkafka's main
//! thread; on the stream's own thread they kept it from polling for
//! seconds at a time, just after an assignment when the first records
//! were waiting. The stream's thread now only polls, hands records over,
//! pauses, resumes and commits.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use log::{debug, error, info, warn};
use rdkafka::consumer::Consumer;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

use super::context::{log_names, SourceConsumer, StreamContext, StreamSpec, TpSet};
use super::topic_hook::{shortened, Reconciled};
use crate::engine::pipeline::offsets::Tp;
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::kafka::admin::{topic_counts, MetaClient};
use crate::kafka::partition_list;
use crate::ops::metrics::{Metrics, StreamLag};
use crate::ops::shutdown::{ExitStatus, Shutdown};
use crate::plan::handler::Handler;

/// How long the control thread rests between turns, unless told to stop.
const TURN: Duration = Duration::from_millis(100);

/// How often a stream asks the source for the end offsets of partitions it
/// has paused: librdkafka learns a partition's end only from its fetches,
/// so while the target is away the lag figure would freeze at what it was
/// when the partitions were paused, just when it matters most.
/// The first ask comes once partitions have been paused that long: a
/// short pause leaves the lag figure as it was.
const PAUSED_ENDS_EVERY: Duration = Duration::from_secs(2);

/// The most paused partitions one such ask names; more are asked in turn,
/// a share per [`PAUSED_ENDS_EVERY`]. librdkafka matches each answer to
/// its request by a linear search, so one request for 10,000 partitions
/// cost some 50 million string compares on the asking thread.
const PAUSED_ENDS_PER_ASK: usize = 1000;

/// How long each of a gap check's two requests may take: one for the
/// group's committed offsets, one for the log starts, each for every
/// partition still to check at once.
const GAP_REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// After a gap check could not finish, the wait before the next try;
/// doubled after each failure up to [`GAP_RETRY_MAX`], so a broker that
/// does not answer is not kept busy with asks it cannot serve.
const GAP_RETRY_MIN: Duration = Duration::from_secs(2);
const GAP_RETRY_MAX: Duration = Duration::from_secs(30);

/// Newly assigned partitions on their way through the retention-gap check.
#[derive(Default)]
struct GapCheck {
    /// Their group's committed offset is still to be read.
    unread: Vec<Tp>,
    /// The committed offset as read after the assignment, before the
    /// stream committed anything of theirs; their log start is still to come.
    committed: Vec<(Tp, i64)>,
    next_try: Option<Instant>,
    backoff: Duration,
    /// Warned about the current run of failures already.
    warned: bool,
}

/// The stream's control state; see the module docs.
struct Control {
    spec: Arc<StreamSpec>,
    consumer: Arc<SourceConsumer>,
    subscribed: Vec<String>,
    /// Each listed topic's partition count at the last refresh.
    listed_partitions: FxHashMap<String, usize>,
    /// Partition-preserving: each topic's source partition count when the
    /// target was last found to have them all.
    checked_partitions: FxHashMap<String, usize>,
    /// The partition check could not reach the target, and said so: once
    /// per outage, not at every refresh.
    target_unanswered: bool,
    last_paused_ends: Option<Instant>,
    /// End offsets of paused partitions as last asked of the source, by
    /// topic and partition.
    paused_ends: FxHashMap<(String, i32), i64>,
    /// Where the next ask for paused partitions' ends starts in the list of them.
    paused_ends_from: usize,
    last_lag: Option<Instant>,
    /// The group's committed offsets as read after each assignment (by the
    /// gap check), for the lag until the stream commits its own.
    group_committed: FxHashMap<Tp, i64>,
    last_refresh: Option<Instant>,
    /// The topic sync's generation at the last refresh: when it moves,
    /// topics it held back are settled and are subscribed at once.
    topics_settled: u64,
    gaps: GapCheck,
    /// Disconnected when the stream begins to stop (see [`Control::unless_stopped`]).
    stop: Receiver<()>,
}

/// Starts the stream's control thread; it ends when the mirror stops or
/// `stop`'s sender is dropped.
pub fn spawn(spec: Arc<StreamSpec>, consumer: Arc<SourceConsumer>, stop: Receiver<()>) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(format!("{}-control", spec.name))
        .spawn(move || {
            let mut c = Control {
                spec,
                consumer,
                subscribed: Vec::new(),
                listed_partitions: FxHashMap::default(),
                checked_partitions: FxHashMap::default(),
                target_unanswered: false,
                last_paused_ends: None,
                paused_ends: FxHashMap::default(),
                paused_ends_from: 0,
                last_lag: None,
                group_committed: FxHashMap::default(),
                last_refresh: None,
                topics_settled: 0,
                gaps: GapCheck::default(),
                stop,
            };
            // A bug here would otherwise leave the stream mirroring with no
            // new topics, gap checks or lag, and nothing said: stop instead.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.run())).is_err() {
                c.ctx().shutdown.fail(ExitStatus::Failure, format!("[{}] the stream's control thread panicked (see above); stopping", c.spec.name));
            }
        })
        .expect("spawn consumer stream control")
}

impl Control {
    fn ctx(&self) -> &StreamContext {
        self.consumer.context()
    }

    /// Turns until the stop. Looked for between the parts of a turn too:
    /// the requests left on this thread wait at most a couple of seconds
    /// each, the longer ones are left behind at the stop (see
    /// [`Self::unless_stopped`]).
    fn run(&mut self) {
        while !self.stopping() {
            let settled = self.spec.topic_sync.as_ref().is_some_and(|s| s.generation() != self.topics_settled);
            if settled || self.last_refresh.is_none_or(|t| t.elapsed() >= self.spec.refresh_interval) {
                self.refresh_subscription();
            }
            if self.stopping() {
                return;
            }
            self.refresh_paused_ends();
            if self.stopping() {
                return;
            }
            self.check_gaps();
            self.report_lag();
            match self.stop.recv_timeout(TURN) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Whether the mirror or this stream has begun to stop.
    fn stopping(&self) -> bool {
        self.ctx().shutdown.stopping() || matches!(self.stop.try_recv(), Err(TryRecvError::Disconnected))
    }

    /// Runs `request` (named `what` in the log) on a thread of its own and
    /// returns its answer; None when the stream begins to stop first (or
    /// had begun), without waiting for the answer.
    ///
    /// For the requests that wait on a broker for many seconds (listings,
    /// the topic sync's, the partition check: up to 25 s when a cluster
    /// does not answer): the stream joins this thread after its final
    /// commit, and a turn in such a request held a clean stop past the
    /// drain timeout's grace, which then exited 3 (issue #26 item 7c).
    /// The request left behind ends on its own, holding only what it was
    /// given: a request made on the consumer keeps it from being closed
    /// (leaving the group) until it ends, or at all should the process
    /// exit first; the group then sees the member go when its session
    /// times out, as after a kill.
    fn unless_stopped<T: Send + 'static>(&self, what: &str, request: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        if self.stopping() {
            return None;
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let name = &self.spec.name;
        // Named so that its first 15 bytes, all Linux keeps of a thread's
        // name, tell it apart: tests/chaos.rs s11 stops the mirror while one waits.
        if let Err(e) = thread::Builder::new().name(format!("ask-{name}")).spawn(move || {
            let _ = tx.send(request());
        }) {
            warn!("[{name}] cannot start a thread to ask for {what} ({e}); asked again at a later turn");
            return None;
        }
        crossbeam_channel::select! {
            recv(rx) -> answer => match answer {
                Ok(answer) => Some(answer),
                Err(_) => {
                    self.ctx().shutdown.fail(ExitStatus::Failure, format!("[{name}] the request for {what} panicked (see above); stopping"));
                    None
                }
            },
            recv(self.stop) -> _ => {
                info!("[{name}] stopping: not waiting for the control thread's request in progress ({what}); it ends on its own");
                None
            }
        }
    }

    fn refresh_subscription(&mut self) {
        self.last_refresh = Some(Instant::now());
        // Read before reconcile: topics settled from here on move it again.
        self.topics_settled = self.spec.topic_sync.as_ref().map_or(0, |s| s.generation());
        // Listed by the topic sync's own source client where there is one:
        // librdkafka matches each topic of a metadata answer against every
        // topic its client knows, one by one, so on the consumer (which
        // knows all it is subscribed to) a list of 5,000 topics cost 12.5
        // million compares on the thread that also serves the group.
        let listed = match &self.spec.topic_sync {
            Some(sync) => {
                let sync = sync.clone();
                self.unless_stopped("the source's topics", move || sync.source_topics())
            }
            None => {
                let consumer = self.consumer.clone();
                self.unless_stopped("the source's topics", move || consumer.fetch_metadata(None, Duration::from_secs(10)).map(|md| topic_counts(&md)))
            }
        };
        let Some(listed) = listed else { return };
        let mut topics: Vec<(String, usize)> = match listed {
            Ok(all) => all.into_iter().filter(|(name, _)| self.spec.filter.matches(name)).collect(),
            Err(e) => {
                warn!("[{}] cannot list the source's topics: {e}; trying again in {:?}", self.spec.name, self.spec.refresh_interval);
                return;
            }
        };
        topics.sort();
        self.forget_gone(&topics);
        // Before subscribing, so a new topic exists on the target before any
        // of its records is produced (and the broker never auto-creates it).
        let mut target_unanswered = None;
        if let Some(sync) = &self.spec.topic_sync {
            let (sync, listed) = (sync.clone(), topics.clone());
            let Some(Reconciled { deferred, target_unanswered: e }) = self.unless_stopped("the target's topics", move || sync.reconcile(&listed)) else {
                return;
            };
            target_unanswered = e;
            if !deferred.is_empty() {
                topics.retain(|(n, _)| !deferred.contains(n));
                if topics.is_empty() {
                    return;
                }
            }
        }
        // Partition-preserving needs every source partition on the target:
        // checked for a new topic, and again whenever a source topic grows
        // (after topic sync had its chance to grow the target).
        let mut growth_unchecked = false;
        if let Some(meta) = &self.spec.target_meta {
            let unchecked: Vec<(String, usize)> =
                topics.iter().filter(|(topic, partitions)| self.checked_partitions.get(topic).is_none_or(|n| n < partitions)).cloned().collect();
            // The topic sync could not list the target just now, so it has
            // not grown it either: asking again would only wait for the same
            // outage, or, should the target be back this instant, find it
            // short of the partitions the sync is still to add.
            let checked = match target_unanswered {
                Some(e) if !unchecked.is_empty() => Err(PartitionCheck::Unanswered(e)),
                _ if unchecked.is_empty() => Ok(()),
                _ => {
                    let (meta, handler, shutdown, asked) = (meta.clone(), self.spec.handler.clone(), self.ctx().shutdown.clone(), unchecked.clone());
                    let Some(checked) = self.unless_stopped("the target's partitions", move || check_target_partitions(&meta, &handler, &asked, &shutdown))
                    else {
                        return;
                    };
                    checked
                }
            };
            match checked {
                Ok(()) => {
                    self.target_unanswered = false;
                    self.checked_partitions.extend(unchecked);
                }
                Err(PartitionCheck::Short(msg)) => {
                    self.ctx().shutdown.fail(ExitStatus::Failure, msg.clone());
                    error!("{msg}");
                    return;
                }
                Err(PartitionCheck::Unanswered(e)) => {
                    self.partition_check_unanswered(&unchecked, &e);
                    // Left unchecked, so looked at again at the next refresh.
                    // A new topic is not subscribed before it is checked; a
                    // grown one stays subscribed (its old partitions are
                    // fine) but the consumer is not told of its growth below.
                    let checked = &self.checked_partitions;
                    topics.retain(|(t, _)| checked.contains_key(t) || !unchecked.iter().any(|(u, _)| u == t));
                    growth_unchecked = true;
                }
            }
        }
        // The consumer learns that a subscribed topic has more partitions
        // (and rejoins the group for them) from a metadata answer of its
        // own; left alone it asks only every topic.metadata.refresh.interval.ms
        // (5 minutes). So, once the target has grown too (above): one full
        // listing on the consumer whenever a listed topic has grown since.
        // Not while the partition check could not reach the target: that
        // listing would tell the consumer of every grown topic, the
        // unchecked ones too. (Should librdkafka's own periodic refresh
        // find them first, their records still reach no other partition:
        // the producer holds a record for a partition the target lacks
        // until the target has it, see the producer worker's wait_for_partition.)
        if self.spec.topic_sync.is_some() && !growth_unchecked {
            let grown = topics.iter().any(|(name, n)| self.listed_partitions.get(name).is_some_and(|before| n > before));
            let told = !grown || {
                let consumer = self.consumer.clone();
                let Some(told) = self.unless_stopped("the consumer's metadata of grown topics", move || {
                    consumer.fetch_metadata(None, Duration::from_secs(10)).map(|_| ()).map_err(|e| e.to_string())
                }) else {
                    return;
                };
                told.map_err(|e| debug!("[{}] cannot refresh the consumer's metadata for grown topics: {e}", self.spec.name)).is_ok()
            };
            // Not told: the growth is looked for again at the next refresh.
            if told {
                self.listed_partitions = topics.iter().cloned().collect();
            }
        }
        let names: Vec<String> = topics.iter().map(|(n, _)| n.clone()).collect();
        if names == self.subscribed {
            return;
        }
        // Held while subscribing: once the stream has begun to stop, a new
        // subscription would start a rebalance under its final commit.
        let consumer = self.consumer.clone();
        let stopped = consumer.context().control_stopped.lock().unwrap();
        if *stopped {
            return;
        }
        if names.is_empty() {
            info!("[{}] no source topic matches ({}); looking again every {:?}", self.spec.name, self.spec.filter.description(), self.spec.refresh_interval);
            self.consumer.unsubscribe();
        } else {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            if let Err(e) = self.consumer.subscribe(&refs) {
                warn!("[{}] subscribe failed: {e}", self.spec.name);
                return;
            }
            log_names(&self.spec.name, "subscribed to", "topics", &names);
        }
        drop(stopped);
        self.subscribed = names;
    }

    /// Topics subscribed before and no longer listed (deleted at the
    /// source): this thread's own state of them goes now; the stream
    /// forgets its routes, counters and offset-sync state of them once
    /// they have left its assignment (see `Stream::forget_gone`). A topic
    /// listed again before that is not forgotten there at all.
    fn forget_gone(&mut self, listed: &[(String, usize)]) {
        let names: FxHashSet<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
        let gone: Vec<&String> = self.subscribed.iter().filter(|t| !names.contains(t.as_str())).collect();
        let mut pending = self.ctx().gone_topics.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|t| !names.contains(&**t));
        if gone.is_empty() {
            return;
        }
        pending.extend(gone.iter().map(|t| Arc::from(t.as_str())));
        drop(pending);
        debug!("[{}] {} subscribed topics no longer listed on the source: forgetting them", self.spec.name, gone.len());
        self.checked_partitions.retain(|t, _| names.contains(t.as_str()));
        self.listed_partitions.retain(|t, _| names.contains(t.as_str()));
        self.group_committed.retain(|(t, _), _| names.contains(&**t));
        self.paused_ends.retain(|(t, _), _| names.contains(t.as_str()));
    }

    /// Partition-preserving: the target could not be asked whether it has
    /// every partition of `unchecked`. An outage, not a target that lacks
    /// them: waited out like every other one (issue #26 item 5).
    fn partition_check_unanswered(&mut self, unchecked: &[(String, usize)], e: &str) {
        let name = &self.spec.name;
        let topics = shortened(unchecked.iter().map(|(t, _)| t.as_str()));
        let n = unchecked.len();
        if std::mem::replace(&mut self.target_unanswered, true) {
            debug!("[{name}] partition-preserving: the target did not answer for {n} topics ({topics}): {e}; checked again at the next topic refresh");
        } else {
            warn!(
                "[{name}] partition-preserving: the target did not answer for {n} topics ({topics}): {e}; checked again at every topic refresh \
                 until it does (said once per outage); nothing of their new partitions is mirrored before the target has them"
            );
        }
    }

    /// Reports each assigned partition's lag, every [`StreamSpec::lag_interval`]:
    /// its end (as librdkafka last learned it from a fetch, or as asked of
    /// the source while paused) minus its committed offset (the stream's
    /// own commit, else the group's as read at assignment); with no
    /// committed offset under `auto.offset.reset=earliest`, from the log start.
    ///
    /// Computed here rather than taken from librdkafka's statistics: with
    /// statistics on, librdkafka keeps a timer per partition of every
    /// subscribed topic, each re-inserted into a sorted list on every
    /// firing, which at 10,000 partitions kept a core a third busy with a
    /// mirror that had nothing to do.
    fn report_lag(&mut self) {
        let Some(every) = self.spec.lag_interval else { return };
        if self.last_lag.is_some_and(|t| t.elapsed() < every) {
            return;
        }
        self.last_lag = Some(Instant::now());
        let Ok(assigned) = self.consumer.assignment() else { return };
        let ctx = self.consumer.context();
        let ours = ctx.tracker.committed_offsets();
        let paused_ends = &self.paused_ends;
        // The stream's read position (librdkafka's, no request), for the
        // lag as Java's consumer measures it (`records-lag`).
        let positions: FxHashMap<(String, i32), i64> = self
            .consumer
            .position()
            .map(|l| l.elements().iter().filter_map(|e| Some(((e.topic().to_string(), e.partition()), e.offset().to_raw().filter(|o| *o >= 0)?))).collect())
            .unwrap_or_default();
        let mut partitions = Vec::new();
        let mut fetch = Vec::new();
        for e in assigned.elements() {
            let tp: Tp = (Arc::from(e.topic()), e.partition());
            let Some((lo, hi)) = crate::kafka::client::cached_watermarks(self.consumer.client(), e.topic(), e.partition()) else { continue };
            // A paused partition's end, as last asked of the source, where
            // it is newer than what librdkafka last fetched.
            let hi = paused_ends.get(&(e.topic().to_string(), e.partition())).copied().filter(|end| *end > hi).unwrap_or(hi);
            let committed = ours.get(&tp).or_else(|| self.group_committed.get(&tp)).copied();
            let lag = match committed {
                Some(c) if hi >= 0 && hi >= c => hi - c,
                Some(_) => continue,
                None if ctx.lag_from_log_start && lo >= 0 && hi >= lo => hi - lo,
                None => continue,
            };
            let read = positions.get(&(e.topic().to_string(), e.partition())).copied();
            fetch.push(read.filter(|r| hi >= *r).map_or(lag, |r| hi - r));
            partitions.push((e.topic().to_string(), e.partition(), lag));
        }
        ctx.metrics.lag().insert(self.spec.name.clone(), StreamLag { source: ctx.source_index, task: ctx.task, partitions, fetch });
    }

    /// Asks the source for the ends of the partitions paused now, every
    /// [`PAUSED_ENDS_EVERY`] while any are, so the lag keeps counting.
    fn refresh_paused_ends(&mut self) {
        let ctx = self.consumer.context();
        if !ctx.outbox.lock().unwrap().has_paused() {
            if self.last_paused_ends.take().is_some() {
                self.paused_ends.clear();
            }
            return;
        }
        let Some(last) = self.last_paused_ends else {
            self.last_paused_ends = Some(Instant::now());
            self.paused_ends_from = 0;
            return;
        };
        if last.elapsed() < PAUSED_ENDS_EVERY {
            return;
        }
        self.last_paused_ends = Some(Instant::now());
        let paused = ctx.outbox.lock().unwrap().paused();
        if self.paused_ends_from >= paused.len() {
            self.paused_ends_from = 0;
        }
        let from = self.paused_ends_from;
        let ask = &paused[from..paused.len().min(from + PAUSED_ENDS_PER_ASK)];
        self.paused_ends_from = from + ask.len();
        let mut list = TopicPartitionList::with_capacity(ask.len());
        for tp in ask {
            // The offset field carries the timestamp asked for: latest.
            let _ = list.add_partition_offset(&tp.0, tp.1, Offset::End);
        }
        match self.consumer.offsets_for_times(list, Duration::from_secs(2)) {
            Ok(ends) => {
                let map = &mut self.paused_ends;
                if ask.len() == paused.len() {
                    map.clear();
                }
                for e in ends.elements() {
                    if let (Offset::Offset(end), None) = (e.offset(), e.error().err()) {
                        map.insert((e.topic().to_string(), e.partition()), end);
                    }
                }
            }
            Err(e) => debug!("[{}] cannot read the ends of paused partitions: {e}", self.spec.name),
        }
    }

    /// Compares the newly assigned partitions' committed offsets with
    /// their log starts (see [`StreamContext::report_gap`]): two batched
    /// requests of at most [`GAP_REQUEST_TIMEOUT`] each. What does not get
    /// an answer is asked again on a later turn, after a growing pause.
    fn check_gaps(&mut self) {
        let ctx = self.consumer.context();
        {
            let mut pending = ctx.gap_pending.lock().unwrap();
            if !pending.newly.is_empty() {
                let new: FxHashSet<Tp> = pending.newly.drain(..).collect();
                for tp in &new {
                    self.group_committed.remove(tp);
                }
                // Assigned again: what was read before may be our own commit since.
                self.gaps.committed.retain(|(tp, _)| !new.contains(tp));
                self.gaps.unread.retain(|tp| !new.contains(tp));
                self.gaps.unread.extend(new);
                self.gaps.next_try = None;
            }
        }
        if self.gaps.unread.is_empty() && self.gaps.committed.is_empty() {
            return;
        }
        if self.gaps.next_try.is_some_and(|t| Instant::now() < t) {
            return;
        }
        // Revoked meanwhile: the next owner checks them.
        let Ok(assignment) = self.consumer.assignment() else { return };
        let elements = assignment.elements();
        let owned: std::collections::HashSet<(&str, i32)> = elements.iter().map(|e| (e.topic(), e.partition())).collect();
        let (unread, gone): (Vec<Tp>, Vec<Tp>) = std::mem::take(&mut self.gaps.unread).into_iter().partition(|(t, p)| owned.contains(&(&**t, *p)));
        self.gaps.unread = unread;
        self.gaps.committed.retain(|((t, p), _)| owned.contains(&(&**t, *p)));
        drop(owned);
        ctx.gap_checked(&gone);

        if !self.gaps.unread.is_empty() {
            // Cut from the assignment, not built by name (see apply).
            let unread = TpSet::of(&self.gaps.unread);
            let ask = partition_list::subset(&assignment, |t, p| unread.contains(t, p));
            drop(unread);
            match self.consumer.committed_offsets(ask, GAP_REQUEST_TIMEOUT) {
                Ok(list) => {
                    for e in list.elements() {
                        // No commit yet (or an error for this one): nothing to compare.
                        if let (Offset::Offset(c), Ok(())) = (e.offset(), e.error()) {
                            let tp: Tp = (Arc::from(e.topic()), e.partition());
                            self.group_committed.insert(tp.clone(), c);
                            self.gaps.committed.push((tp, c));
                        }
                    }
                    // Read: the stream may commit them from now on.
                    let read = std::mem::take(&mut self.gaps.unread);
                    ctx.gap_checked(&read);
                }
                Err(e) => return self.gap_check_failed("the group's committed offsets", &e),
            }
        }

        // Each request waits up to GAP_REQUEST_TIMEOUT: not a second one
        // once the stream stops (what is left is checked by the next owner).
        if self.stopping() {
            return;
        }
        // librdkafka learns a partition's log start from every fetch
        // response, so partitions already being read need no request.
        let mut ask = TopicPartitionList::new();
        self.gaps.committed.retain(|(tp, c)| match cached_log_start(&self.consumer, tp) {
            Some(low) => {
                ctx.report_gap(tp, *c, low);
                false
            }
            _ => {
                // The offset field carries the timestamp asked for: earliest.
                let _ = ask.add_partition_offset(&tp.0, tp.1, Offset::Beginning);
                true
            }
        });
        if ask.count() > 0 {
            match self.consumer.offsets_for_times(ask, GAP_REQUEST_TIMEOUT) {
                Ok(starts) => {
                    let mut lows: FxHashMap<Tp, i64> = FxHashMap::default();
                    for e in starts.elements() {
                        if let (Offset::Offset(low), Ok(())) = (e.offset(), e.error()) {
                            lows.insert((Arc::from(e.topic()), e.partition()), low);
                        }
                    }
                    self.gaps.committed.retain(|(tp, c)| match lows.get(tp) {
                        Some(&low) => {
                            ctx.report_gap(tp, *c, low);
                            false
                        }
                        None => true,
                    });
                }
                Err(e) => return self.gap_check_failed("the log start offsets", &e),
            }
        }
        if self.gaps.committed.is_empty() {
            self.gaps = GapCheck::default();
        } else {
            self.gap_check_failed("the log start offsets", &"no answer for some partitions");
        }
    }

    fn gap_check_failed(&mut self, what: &str, e: &dyn std::fmt::Display) {
        let g = &mut self.gaps;
        g.backoff = (g.backoff * 2).clamp(GAP_RETRY_MIN, GAP_RETRY_MAX);
        g.next_try = Some(Instant::now() + g.backoff);
        let n = g.unread.len() + g.committed.len();
        let name = &self.spec.name;
        // Warned once the tries have backed off to the longest wait (about a
        // minute of failures): a stream that has just been given thousands
        // of partitions often gets no answer within its first tries while
        // librdkafka is still starting their fetches, and then one.
        if !g.warned && g.backoff >= GAP_RETRY_MAX {
            g.warned = true;
            warn!("[{name}] cannot read {what} of {n} newly assigned partitions to look for retention gaps: {e}; trying again in {:?}", g.backoff);
        } else {
            debug!("[{name}] cannot read {what} of {n} newly assigned partitions to look for retention gaps: {e}; trying again in {:?}", g.backoff);
        }
    }
}

impl StreamContext {
    /// `done` need no gap check any more (read, or revoked): the stream may
    /// commit them, except those assigned again since, which wait for
    /// their next check.
    fn gap_checked(&self, done: &[Tp]) {
        if done.is_empty() {
            return;
        }
        let mut pending = self.gap_pending.lock().unwrap();
        let again: FxHashSet<Tp> = pending.newly.iter().cloned().collect();
        for tp in done {
            if !again.contains(tp) {
                pending.unread.remove(tp);
            }
        }
    }

    /// MM1 and MM2 skip silently when retention deleted records the group
    /// had not mirrored yet. We say so, with the count, on every assignment.
    fn report_gap(&self, (topic, partition): &Tp, committed: i64, low: i64) {
        if committed < low {
            let lost = (low - committed) as u64;
            Metrics::add(&self.metrics.gap_offsets, lost);
            error!(
                "[{}] GAP in {topic}-{partition}: the group's committed offset {committed} is no longer on the source (its log starts at {low}); \
                 {lost} offsets were deleted by retention before they were mirrored. Mirroring resumes at {low}. \
                 Raise retention on the source or keep the mirror running to avoid this.",
                self.name
            );
        }
    }
}

/// The partition's log start as librdkafka last learned it; None when it
/// knows none yet.
fn cached_log_start(consumer: &SourceConsumer, (topic, partition): &Tp) -> Option<i64> {
    crate::kafka::client::cached_log_start(consumer.client(), topic, *partition)
}

/// Why [`check_target_partitions`] did not pass.
#[derive(Debug)]
enum PartitionCheck {
    /// The target answered, and lacks partitions: the mirror cannot go on.
    Short(String),
    /// The target did not answer (down, unreachable): nothing is known.
    Unanswered(String),
}

/// Partition-preserving mode needs every source partition on the target.
/// One metadata request per look for all of `topics` (source name, source
/// partitions), never one per topic: a start over thousands of topics
/// checks them all in one round trip.
fn check_target_partitions(meta: &MetaClient, handler: &Handler, topics: &[(String, usize)], shutdown: &Shutdown) -> Result<(), PartitionCheck> {
    if topics.is_empty() {
        return Ok(());
    }
    // A topic just created or grown (by the topic sync, a moment ago) can
    // take a while to show in the metadata of the broker asked: look again
    // until every one shows, for a bounded time, before calling one missing.
    let deadline = Instant::now() + Duration::from_secs(15);
    let only = match topics {
        [(topic, _)] => Some(handler.target_topic(topic)),
        _ => None,
    };
    loop {
        let md = meta.inner().fetch_metadata(only.as_deref(), Duration::from_secs(10)).map_err(|e| PartitionCheck::Unanswered(e.to_string()))?;
        let on_target: FxHashMap<&str, usize> = md.topics().iter().filter(|t| t.error().is_none()).map(|t| (t.name(), t.partitions().len())).collect();
        let short = topics
            .iter()
            .map(|(topic, n)| (topic, *n, handler.target_topic(topic)))
            .find(|(_, n, target)| on_target.get(target.as_ref()).is_none_or(|have| have < n));
        let Some((topic, source_partitions, target)) = short else { return Ok(()) };
        // Left behind at a stop (see Control::unless_stopped): ends, and
        // calls nothing short that was not waited for in full.
        if shutdown.stopping() {
            return Err(PartitionCheck::Unanswered("the mirror is stopping".into()));
        }
        if Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(250));
            continue;
        }
        return Err(PartitionCheck::Short(match on_target.get(target.as_ref()) {
            Some(n) => format!(
                "partition-preserving: target topic {target} has {n} partitions but source topic {topic} has {source_partitions}; \
                 add partitions on the target (kafka-topics.sh --alter --topic {target} --partitions {source_partitions}) or use --message.handler identity"
            ),
            None => format!("partition-preserving: target topic {target} does not exist; create it with at least {source_partitions} partitions first"),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::admin::admin_client;

    /// A client of a cluster that does not answer: the address of a
    /// listener just closed, so every connection is refused.
    fn unanswered_target() -> MetaClient {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut config = rdkafka::ClientConfig::new();
        config.set("bootstrap.servers", format!("127.0.0.1:{port}"));
        admin_client(&config).unwrap()
    }

    /// Issue #26 item 5: a target that does not answer is not one that
    /// lacks partitions. Before, both were the same error, which stopped
    /// the mirror (exit 255). Takes the metadata request's 10 s.
    #[test]
    fn an_unanswered_partition_check_is_not_a_short_target() {
        let shutdown = Shutdown::new(Duration::from_secs(1));
        let checked = check_target_partitions(&unanswered_target(), &Handler::PartitionPreserving, &[("t".into(), 4)], &shutdown);
        assert!(matches!(checked, Err(PartitionCheck::Unanswered(_))), "{checked:?}");
        assert!(check_target_partitions(&unanswered_target(), &Handler::PartitionPreserving, &[], &shutdown).is_ok(), "nothing to check");
    }
}
