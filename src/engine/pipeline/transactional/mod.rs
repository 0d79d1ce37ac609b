//! The exactly-once copy (issue #29): a task thread that reads its source
//! partitions, writes them to the target in transactions, and commits with
//! each transaction the positions they advance.
//!
//! One task per stream of an exactly-once flow. Unlike the at-least-once
//! pipeline (streams handing batches to producer workers), a task reads
//! and writes on one thread, Kafka Streams' way: a transaction then holds
//! exactly the records read since the last commit, and an abort is undone
//! by going back to the committed positions, with nothing held elsewhere.
//!
//! - Ownership: the flow's ownership group on the target ([`owner`]) says
//!   which source partitions this task copies; the source consumer is
//!   assigned them (`assign`, no source group membership).
//! - A transaction: records read, sent by a transactional producer, then
//!   `send_offsets_to_transaction` with the ownership group's metadata and
//!   the commit, every `interval`. Its positions become the group's
//!   offsets only if it commits, and the coordinator refuses them from a
//!   member whose generation is over, so a zombie cannot commit.
//! - `transactional.id`: one per task and process (flow, task, process id,
//!   start time). Fencing of a zombie rests on the group generation, not on
//!   the id (KIP-447), so ids need not follow partitions; unique ids keep
//!   two live processes from fencing each other. The price: a process
//!   killed mid-transaction leaves it open until the coordinator aborts it
//!   (`transaction.timeout.ms`, 10 s unless the target file says), and the
//!   next owner of its partitions waits that long before it resumes.
//! - Before partitions go, the ownership group's revoke callback ends the
//!   open transaction (see `state` for why that keeps two owners apart);
//!   after any change the source consumer is assigned afresh at the
//!   committed positions, as after an abort: records of an aborted
//!   transaction are read again, never skipped.
//! - After each commit: the source group's offsets (for lag tools, not
//!   resumed from while the ownership group has positions) and the
//!   offset-syncs, from committed positions only.

pub mod owner;
pub mod refused;
pub mod state;

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use log::{debug, info, warn};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, DefaultConsumerContext};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

use crate::engine::pipeline::ack_hooks::FlowAckHooks;
use crate::engine::pipeline::provenance::Provenance;
use crate::engine::pipeline::stream::topic_hook::TargetTopics;
use crate::fxhash::FxHashMap;
use crate::kafka::transactions::{Transactional, TxnError};
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::{ExitStatus, Shutdown};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;
use owner::{Change, OwnerConsumer, OwnerContext};
use refused::{Refused, TargetAccess};
use state::{Owned, Shared, Stop, TxnDeliveries, TxnState, CALL_TIMEOUT};

/// Records taken from the source per turn of the loop.
const BATCH: usize = 500;
/// The longest a `transaction.boundary=poll` transaction stays open while
/// the source has more ready.
const POLL_TXN_MAX: Duration = Duration::from_millis(200);
/// How often the source group is told the committed positions (for lag
/// tools; nothing resumes from them while the ownership group has some).
const SOURCE_GROUP_EVERY: Duration = Duration::from_secs(1);

/// What one task needs, made by the engine.
pub struct TxnSpec {
    pub name: String,
    pub source_index: usize,
    pub filter: Arc<TopicFilter>,
    pub handler: Arc<Handler>,
    pub refresh_interval: Duration,
    /// How often a transaction commits (zero: after every batch read).
    pub interval: Duration,
    /// Lists the source's topics and makes the remote ones (MM2's topic sync).
    pub topic_sync: Arc<dyn TargetTopics>,
    pub ack_hooks: Option<Arc<dyn FlowAckHooks>>,
    /// The provenance stamp, when the flow has one (active/active).
    pub provenance: Option<Provenance>,
    /// The source consumer's settings; its `group.id` is the flow's source
    /// group, committed after transactions, never joined.
    pub source_config: ClientConfig,
    /// The ownership group's consumer on the target.
    pub owner_config: ClientConfig,
    /// The target producer's settings, `transactional.id` set here.
    pub producer_config: ClientConfig,
    /// The target, the principal there, the `transactional.id` and the
    /// ownership group (`group.id` of `owner_config`).
    pub access: Arc<TargetAccess>,
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<Shutdown>,
}

struct Task {
    spec: TxnSpec,
    source: BaseConsumer<DefaultConsumerContext>,
    owner: OwnerConsumer,
    shared: Arc<Shared>,
    /// Remote partitions owned whose source topic this task does not know
    /// yet (another member subscribed to it first); taken up at a refresh.
    unmapped: Vec<(String, i32)>,
    /// Remote topic name -> source topic name, from the listings.
    sources_of: FxHashMap<String, Arc<str>>,
    last_refresh: Option<Instant>,
    /// The remote topics the ownership group is subscribed to.
    subscribed: Vec<String>,
    /// The topic sync's generation at the last refresh: topics it held
    /// back and has settled since are taken up at once.
    settled: u64,
    source_group_told: Instant,
}

/// Why a task cannot start.
#[derive(Debug)]
pub enum TaskError {
    Client(&'static str, rdkafka::error::KafkaError),
    /// The target refused an ACL the transactional producer needs, or
    /// transactions at all.
    Refused(Refused),
    Txn(TxnError),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::Client(what, e) => write!(f, "cannot create the {what}: {e}"),
            TaskError::Refused(r) => write!(f, "{r}"),
            TaskError::Txn(e) => write!(f, "cannot start a transactional producer on the target: {e}"),
        }
    }
}

impl std::error::Error for TaskError {}

/// A transactional producer of `spec`'s, registered with its coordinator;
/// a refusal names what to grant.
fn transactional(spec: &TxnSpec) -> Result<Transactional<TxnDeliveries>, TaskError> {
    Transactional::new(&spec.producer_config, &spec.access.transactional_id, TxnDeliveries::default(), CALL_TIMEOUT).map_err(|e| match e {
        TxnError::Refused(r, e) => TaskError::Refused(Refused::new(&spec.access, spec.access.denied(r, Vec::new()), e)),
        e => TaskError::Txn(e),
    })
}

/// Makes a task's clients (the producer registers its transactional id)
/// and starts its thread.
pub fn spawn(spec: TxnSpec) -> Result<thread::JoinHandle<()>, TaskError> {
    let source: BaseConsumer<DefaultConsumerContext> = spec.source_config.create().map_err(|e| TaskError::Client("source consumer", e))?;
    let txn = transactional(&spec)?;
    let state = TxnState {
        txn,
        open: None,
        owned: FxHashMap::default(),
        for_source_group: FxHashMap::default(),
        reseek: false,
        fenced: false,
        refused_in_a_row: 0,
        fatal: None,
    };
    let shared = Arc::new(Shared {
        name: spec.name.clone(),
        provenance: spec.provenance.clone(),
        handler: spec.handler.clone(),
        metrics: spec.metrics.clone(),
        access: spec.access.clone(),
        state: Mutex::new(state),
    });
    let owner: OwnerConsumer =
        spec.owner_config.create_with_context(OwnerContext::new(shared.clone())).map_err(|e| TaskError::Client("ownership group's consumer", e))?;
    let name = spec.name.clone();
    let task = Task {
        spec,
        source,
        owner,
        shared,
        unmapped: Vec::new(),
        sources_of: FxHashMap::default(),
        last_refresh: None,
        subscribed: Vec::new(),
        settled: 0,
        source_group_told: Instant::now(),
    };
    Ok(thread::Builder::new().name(name).spawn(move || task.run()).expect("spawn exactly-once task"))
}

impl Task {
    fn run(mut self) {
        info!("[{}] exactly-once task started (transactional.id {})", self.spec.name, self.spec.access.transactional_id);
        while !self.spec.shutdown.stopping() {
            let settled = self.spec.topic_sync.generation() != self.settled;
            if settled || self.last_refresh.is_none_or(|t| t.elapsed() >= self.spec.refresh_interval) {
                self.refresh_topics();
            }
            self.serve_owner(Duration::ZERO);
            if !self.check_fatal() {
                break;
            }
            self.tell_source_group(false);
            if self.shared.lock().fenced && !self.new_producer() {
                break;
            }
            if self.shared.lock().owned.is_empty() {
                self.serve_owner(Duration::from_millis(100));
                continue;
            }
            let drained = self.copy_batch();
            let due = match self.shared.lock().open_for() {
                None => false,
                // transaction.boundary=poll: what one poll has ready; here
                // what the consumer holds, until it has nothing more ready
                // (a transaction per 500 records, as Java's poll gives,
                // spent more time committing than copying: see the bench).
                Some(open) if self.spec.interval.is_zero() => drained || open >= POLL_TXN_MAX,
                Some(open) => open >= self.spec.interval,
            };
            if due {
                self.commit();
            }
        }
        self.finish();
    }

    /// False (and the mirror stops) when a transaction ended in a way the
    /// task cannot go on from, or the target refused it what only its
    /// operator can give (exit status 1, as at start: a configuration).
    fn check_fatal(&self) -> bool {
        let stop = self.shared.lock().fatal.take();
        match stop {
            Some(stop) => {
                self.stop_for(stop);
                false
            }
            None => true,
        }
    }

    fn stop_for(&self, stop: Stop) {
        match stop {
            Stop::Failed(why) => self.spec.shutdown.fail(ExitStatus::Failure, why),
            Stop::Refused(r) => self.spec.shutdown.fail(ExitStatus::Config, format!("[{}] exactly-once: {r}", self.spec.name)),
        }
    }

    /// Replaces a fenced producer with a new one of the same
    /// `transactional.id`; false (and the mirror stops) if none can be made.
    fn new_producer(&mut self) -> bool {
        match transactional(&self.spec) {
            Ok(txn) => {
                let mut state = self.shared.lock();
                state.txn = txn;
                state.fenced = false;
                state.open = None;
                drop(state);
                info!("[{}] a new transactional producer replaces the fenced one", self.spec.name);
                self.assign_source();
                true
            }
            Err(TaskError::Refused(r)) => {
                self.stop_for(Stop::Refused(r));
                false
            }
            Err(e) => {
                self.spec.shutdown.fail(ExitStatus::Failure, format!("[{}] exactly-once: no new transactional producer after a fencing: {e}", self.spec.name));
                false
            }
        }
    }

    /// Commits the open transaction (between polls of the ownership group:
    /// every partition in it is still this member's).
    fn commit(&mut self) {
        let mut state = self.shared.lock();
        if let Some(stop) = self.shared.end_open(&mut state, &self.owner).stop() {
            state.fatal = Some(stop);
        }
    }

    /// Lists the source's matching topics, makes their remote topics, and
    /// subscribes the ownership group to the remote topics that exist.
    fn refresh_topics(&mut self) {
        self.last_refresh = Some(Instant::now());
        // Read before reconcile: topics settled from here on move it again.
        self.settled = self.spec.topic_sync.generation();
        let listed = match self.spec.topic_sync.source_topics() {
            Ok(all) => all.into_iter().filter(|(n, _)| self.spec.filter.matches(n)).collect::<Vec<_>>(),
            Err(e) => {
                warn!("[{}] cannot list the source's topics: {e}; trying again in {:?}", self.spec.name, self.spec.refresh_interval);
                return;
            }
        };
        let reconciled = self.spec.topic_sync.clone().reconcile(&listed);
        let mut remotes: Vec<String> = Vec::new();
        for (topic, _) in listed.iter().filter(|(t, _)| !reconciled.deferred.contains(t)) {
            let remote = self.spec.handler.target_topic(topic).into_owned();
            self.sources_of.entry(remote.clone()).or_insert_with(|| Arc::from(topic.as_str()));
            remotes.push(remote);
        }
        remotes.sort();
        // Subscribing again, even to the same list, makes librdkafka
        // rejoin: only a changed list is subscribed.
        if !remotes.is_empty() && remotes != self.subscribed {
            let names: Vec<&str> = remotes.iter().map(String::as_str).collect();
            match self.owner.subscribe(&names) {
                Ok(()) => self.subscribed = remotes,
                Err(e) => warn!("[{}] cannot subscribe the ownership group to {} remote topics: {e}", self.spec.name, names.len()),
            }
        }
        if !self.unmapped.is_empty() {
            let waiting = std::mem::take(&mut self.unmapped);
            self.take_up(waiting);
            self.assign_source();
        }
    }

    /// Serves the ownership group's callbacks (a revocation ends the open
    /// transaction there) and acts on what changed.
    fn serve_owner(&mut self, wait: Duration) {
        // Paused: anything fetched before the pause is dropped.
        self.poll_owner(wait);
        let changes = self.owner.context().take_changes();
        let changed = !changes.is_empty();
        if !changes.is_empty() {
            Metrics::add(&self.spec.metrics.rebalances, 1);
            let mut assigned = Vec::new();
            for change in changes {
                match change {
                    Change::Revoked(tps) => {
                        self.unmapped.retain(|u| !tps.contains(u));
                        info!("[{}] ownership revoked: {} partition(s)", self.spec.name, tps.len());
                    }
                    Change::Assigned(tps) => assigned.extend(tps),
                }
            }
            // Ownership changes at a transaction's edge: what is open
            // commits now, so every owned partition starts from a committed
            // position.
            self.commit();
            if !assigned.is_empty() {
                info!("[{}] ownership assigned: {} partition(s)", self.spec.name, assigned.len());
                self.take_up(assigned);
            }
        }
        // Read last: an abort in the revoke callback or in the commit just
        // above asks for it too, and whatever else happened (even an
        // assignment of topics not known yet, which takes nothing up), the
        // aborted records must be read again.
        let reseek = std::mem::take(&mut self.shared.lock().reseek);
        if changed || reseek {
            self.assign_source();
        }
    }

    /// Takes up remote partitions this task now owns: their positions are
    /// read from the ownership group (waiting while a transaction of the
    /// previous owner is open), or the source group's where it is ahead,
    /// else the source's `auto.offset.reset`. The caller assigns the source
    /// consumer afterwards.
    fn take_up(&mut self, remote: Vec<(String, i32)>) {
        let mut wanted = Vec::new();
        for (topic, p) in remote {
            match self.sources_of.get(&topic) {
                Some(source) => wanted.push((Arc::<str>::from(topic.as_str()), source.clone(), p)),
                None => self.unmapped.push((topic, p)),
            }
        }
        if wanted.is_empty() {
            return;
        }
        let mut list = TopicPartitionList::new();
        for (remote, _, p) in &wanted {
            list.add_partition(remote, *p);
        }
        let Some(stable) = self.settled_positions(&list) else { return };
        // A revocation served while waiting took some of them away again.
        let still: Vec<(String, i32)> = self.owner.assignment().map(|a| owner::elements(&a)).unwrap_or_default();
        let mut state = self.shared.lock();
        let mut source_list = TopicPartitionList::new();
        for (remote, source, p) in &wanted {
            if !still.iter().any(|(t, sp)| **t == **remote && sp == p) {
                continue;
            }
            let next = stable.find_partition(remote, *p).map(|e| e.offset()).unwrap_or(Offset::Invalid);
            source_list.add_partition(source, *p);
            let hook = self.spec.ack_hooks.as_ref().map(|h| h.clone().partition_hook(source, *p));
            state.owned.insert((source.clone(), *p), Owned { remote: remote.clone(), next, hook });
        }
        drop(state);
        if source_list.count() > 0 {
            self.source_group_ahead(source_list);
        }
        // The source group learns where the copy stands now, not only at
        // the next commit: after a restart with nothing new to copy there
        // is none, and lag tools (and a caller waiting for the group to
        // reach the end) would see the positions of before the restart.
        let mut state = self.shared.lock();
        let mut at = Vec::with_capacity(wanted.len());
        for (remote, source, p) in &wanted {
            let next = state.owned.get(&(source.clone(), *p)).map(|o| o.next);
            match next {
                Some(next) => at.push(format!("{source}-{p} {}", from_where(next))),
                None => at.push(format!("{remote}-{p} (revoked meanwhile)")),
            }
            if let Some(Offset::Offset(n)) = next {
                state.for_source_group.insert((source.clone(), *p), n);
            }
        }
        drop(state);
        crate::engine::pipeline::stream::log_names(&self.spec.name, "copying from", "partition(s)", &at);
    }

    /// Where the source group is ahead of the ownership group, or the
    /// ownership group has nothing, its position wins: it is only ever
    /// moved to records already on the target (this mirror's committed
    /// positions, told after each transaction; Java MirrorMaker 2's, taken
    /// over at start; an at-least-once run's acknowledged ones) or by an
    /// operator's reset. So a flow moves from Java or from at-least-once
    /// without copying again, and never resumes behind a take-over.
    fn source_group_ahead(&mut self, list: TopicPartitionList) {
        match self.source.committed_offsets(list, Duration::from_secs(10)) {
            Ok(c) => {
                let mut state = self.shared.lock();
                for e in c.elements() {
                    let Offset::Offset(n) = e.offset() else { continue };
                    if let Some(o) = state.owned.get_mut(&(Arc::from(e.topic()), e.partition())) {
                        if !matches!(o.next, Offset::Offset(m) if m >= n) {
                            debug!("[{}] {}-{}: the source group's {n} is ahead of {:?}", self.spec.name, e.topic(), e.partition(), o.next);
                            o.next = Offset::Offset(n);
                        }
                    }
                }
            }
            Err(e) => warn!(
                "[{}] cannot read the source group's offsets ({e}); partitions without a position in the ownership group start where auto.offset.reset says",
                self.spec.name
            ),
        }
    }

    /// The ownership group's offsets of `list`, once no open transaction
    /// holds them back; None when asked to stop meanwhile, or refused.
    fn settled_positions(&self, list: &TopicPartitionList) -> Option<TopicPartitionList> {
        let mut told = false;
        loop {
            // A partition whose offsets a transaction still holds back may
            // come back as an error of its element rather than of the call.
            let answer =
                self.owner.committed_offsets(list.clone(), Duration::from_secs(5)).and_then(|c| match c.elements().iter().find_map(|e| e.error().err()) {
                    Some(e) => Err(e),
                    None => Ok(c),
                });
            match answer {
                Ok(c) => return Some(c),
                // The group refused: no waiting mends that.
                Err(e) if self.owner.context().refused(&e) => return None,
                Err(e) => {
                    if !told {
                        info!(
                            "[{}] waiting for the positions of {} newly owned partition(s): a transaction of their previous owner is still open ({e}); \
                             the coordinator settles it within transaction.timeout.ms",
                            self.spec.name,
                            list.count()
                        );
                        told = true;
                    }
                    if self.spec.shutdown.stopping() {
                        return None;
                    }
                    self.poll_owner(Duration::from_millis(100));
                    if self.shared.lock().fatal.is_some() {
                        return None;
                    }
                }
            }
        }
    }

    /// Polls the ownership group's consumer (its callbacks are served
    /// here); a refusal of the group is recorded for the task to stop on.
    fn poll_owner(&self, wait: Duration) {
        if let Some(Err(e)) = self.owner.poll(wait) {
            if !self.owner.context().refused(&e) {
                debug!("[{}] ownership group's consumer: {e}", self.spec.name);
            }
        }
    }

    /// Assigns the source consumer every owned partition at its committed
    /// position: also how an aborted transaction's records are read again.
    fn assign_source(&mut self) {
        let mut list = TopicPartitionList::new();
        for ((topic, p), o) in &self.shared.lock().owned {
            let _ = list.add_partition_offset(topic, *p, o.next);
        }
        if let Err(e) = self.source.assign(&list) {
            warn!("[{}] cannot assign the source partitions: {e}", self.spec.name);
        }
    }

    /// Reads up to a batch and sends it in the open transaction; true when
    /// the consumer had nothing more ready.
    fn copy_batch(&mut self) -> bool {
        let shared = self.shared.clone();
        let mut state = shared.lock();
        let mut wait = match state.open_for() {
            Some(d) => self.spec.interval.saturating_sub(d).min(Duration::from_millis(100)),
            None => Duration::from_millis(100),
        };
        for _ in 0..BATCH {
            let msg = match self.source.poll(wait) {
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    debug!("[{}] source consumer: {e}", self.spec.name);
                    return true;
                }
                None => return true,
            };
            wait = Duration::ZERO;
            if let Err(e) = shared.send(&mut state, &msg) {
                state.fatal = Some(Stop::Failed(format!("[{}] exactly-once: cannot begin a transaction: {e}", self.spec.name)));
                return true;
            }
        }
        false
    }

    /// Tells the source group the committed positions (for lag tools),
    /// at most every [`SOURCE_GROUP_EVERY`] unless `now`.
    fn tell_source_group(&mut self, now: bool) {
        if !now && self.source_group_told.elapsed() < SOURCE_GROUP_EVERY {
            return;
        }
        let positions = std::mem::take(&mut self.shared.lock().for_source_group);
        self.source_group_told = Instant::now();
        if positions.is_empty() {
            return;
        }
        let mut list = TopicPartitionList::new();
        for ((t, p), next) in &positions {
            let _ = list.add_partition_offset(t, *p, Offset::Offset(*next));
        }
        let mode = if now { CommitMode::Sync } else { CommitMode::Async };
        if let Err(e) = self.source.commit(&list, mode) {
            debug!("[{}] source group commit (for lag tools only) not sent: {e}", self.spec.name);
        }
    }

    fn finish(mut self) {
        self.commit();
        let stop = self.shared.lock().fatal.take();
        match stop {
            Some(Stop::Failed(why)) => {
                warn!("{why}");
                self.spec.shutdown.drain_timed_out();
            }
            Some(refused @ Stop::Refused(_)) => self.stop_for(refused),
            None => {}
        }
        self.tell_source_group(true);
        self.owner.unsubscribe();
        info!("[{}] exactly-once task stopped", self.spec.name);
    }
}

/// Where a partition taken up is copied from, as the log says it.
fn from_where(next: Offset) -> String {
    match next {
        Offset::Offset(n) => format!("at offset {n}"),
        // Nothing committed by either group: the source consumer's
        // auto.offset.reset decides, as for an at-least-once stream.
        Offset::Invalid | Offset::Stored => "where auto.offset.reset says (nothing committed yet)".to_string(),
        other => format!("at {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_says_where_a_partition_is_copied_from_in_words() {
        assert_eq!(from_where(Offset::Offset(42)), "at offset 42");
        assert_eq!(from_where(Offset::Invalid), "where auto.offset.reset says (nothing committed yet)");
        assert_eq!(from_where(Offset::Beginning), "at Beginning");
    }
}
