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
//! - Before ownership changes, the open transaction ends (committed, or
//!   aborted when refused), and the source consumer is assigned afresh at
//!   the committed positions: records of an aborted transaction are read
//!   again, never skipped.
//! - After each commit: the source group's offsets (for lag tools, not
//!   resumed from while the ownership group has positions) and the
//!   offset-syncs, from committed positions only.

pub mod owner;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use log::{debug, info, warn};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, DefaultConsumerContext};
use rdkafka::message::{BorrowedMessage, DeliveryResult, Message};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientConfig, ClientContext};

use crate::engine::pipeline::ack_hooks::{AckHook, FlowAckHooks};
use crate::engine::pipeline::stream::topic_hook::TargetTopics;
use crate::fxhash::FxHashMap;
use crate::kafka::transactions::{Transactional, TxnError};
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::{ExitStatus, Shutdown};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;
use owner::{Change, OwnerConsumer, OwnerContext};

/// Records taken from the source per turn of the loop.
const BATCH: usize = 500;
/// How long a transactional call may take before it counts as unanswered.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What one task needs, made by the engine.
pub struct TxnSpec {
    pub name: String,
    pub source_index: usize,
    pub filter: Arc<TopicFilter>,
    pub handler: Arc<Handler>,
    pub refresh_interval: Duration,
    /// How often a transaction commits.
    pub interval: Duration,
    /// Lists the source's topics and makes the remote ones (MM2's topic sync).
    pub topic_sync: Arc<dyn TargetTopics>,
    pub ack_hooks: Option<Arc<dyn FlowAckHooks>>,
    /// The source consumer's settings; its `group.id` is the flow's source
    /// group, committed after each transaction, never joined.
    pub source_config: ClientConfig,
    /// The ownership group's consumer on the target.
    pub owner_config: ClientConfig,
    /// The target producer's settings, `transactional.id` set here.
    pub producer_config: ClientConfig,
    pub transactional_id: String,
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<Shutdown>,
}

/// The producer's context: the last target offset each target partition
/// acknowledged in the open transaction, for the offset-syncs.
#[derive(Default)]
pub struct TxnDeliveries {
    last: Mutex<FxHashMap<String, Vec<i64>>>,
    failed: AtomicBool,
}

impl ClientContext for TxnDeliveries {}

impl ProducerContext for TxnDeliveries {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(m) => {
                let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
                let parts = match last.get_mut(m.topic()) {
                    Some(p) => p,
                    None => last.entry(m.topic().to_string()).or_default(),
                };
                let i = m.partition().max(0) as usize;
                if parts.len() <= i {
                    parts.resize(i + 1, -1);
                }
                parts[i] = parts[i].max(m.offset());
            }
            Err((e, _)) => {
                debug!("a record of the open transaction was refused: {e}");
                self.failed.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl TxnDeliveries {
    fn reset(&self) {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.failed.store(false, Ordering::Relaxed);
    }

    fn last(&self, topic: &str, partition: i32) -> Option<i64> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.get(topic).and_then(|p| p.get(partition as usize)).copied().filter(|o| *o >= 0)
    }
}

type Tp = (Arc<str>, i32);

/// A source partition this task owns.
struct Owned {
    /// Its remote topic (the ownership group's partition `p` of it).
    remote: Arc<str>,
    /// Where its next transaction starts: the committed position.
    next: Offset,
    hook: Option<Arc<dyn AckHook>>,
}

/// The transaction in progress.
struct Open {
    started: Instant,
    /// The last source offset sent, per source partition.
    last: FxHashMap<Tp, i64>,
    records: u64,
    bytes: u64,
}

struct Task {
    spec: TxnSpec,
    source: BaseConsumer<DefaultConsumerContext>,
    owner: OwnerConsumer,
    txn: Transactional<TxnDeliveries>,
    owned: FxHashMap<Tp, Owned>,
    /// Remote partitions owned whose source topic this task does not know
    /// yet (another member subscribed to it first); taken up at a refresh.
    unmapped: Vec<(String, i32)>,
    /// Remote topic name -> source topic name, from the last listing.
    sources_of: FxHashMap<String, Arc<str>>,
    open: Option<Open>,
    last_refresh: Option<Instant>,
    /// The topic sync's generation at the last refresh: topics it held
    /// back and has settled since are taken up at once.
    settled: u64,
}

/// Why a task cannot start.
#[derive(Debug)]
pub enum TaskError {
    Client(&'static str, rdkafka::error::KafkaError),
    Txn(TxnError),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::Client(what, e) => write!(f, "cannot create the {what}: {e}"),
            TaskError::Txn(e) => write!(
                f,
                "the target refused to start a transactional producer: {e} (exactly-once needs Kafka 2.5 or later and, with ACLs, WRITE and DESCRIBE on \
                 the TransactionalId and IDEMPOTENT_WRITE on the cluster)"
            ),
        }
    }
}

impl std::error::Error for TaskError {}

/// Makes a task's clients (the producer registers its transactional id)
/// and starts its thread.
pub fn spawn(spec: TxnSpec) -> Result<thread::JoinHandle<()>, TaskError> {
    let source: BaseConsumer<DefaultConsumerContext> = spec.source_config.create().map_err(|e| TaskError::Client("source consumer", e))?;
    let owner: OwnerConsumer =
        spec.owner_config.create_with_context(OwnerContext::new(spec.name.clone())).map_err(|e| TaskError::Client("ownership group's consumer", e))?;
    let txn = Transactional::new(&spec.producer_config, &spec.transactional_id, TxnDeliveries::default(), CALL_TIMEOUT).map_err(TaskError::Txn)?;
    let name = spec.name.clone();
    let task = Task {
        spec,
        source,
        owner,
        txn,
        owned: FxHashMap::default(),
        unmapped: Vec::new(),
        sources_of: FxHashMap::default(),
        open: None,
        last_refresh: None,
        settled: 0,
    };
    Ok(thread::Builder::new().name(name).spawn(move || task.run()).expect("spawn exactly-once task"))
}

impl Task {
    fn run(mut self) {
        info!("[{}] exactly-once task started (transactional.id {})", self.spec.name, self.spec.transactional_id);
        while !self.spec.shutdown.stopping() {
            let settled = self.spec.topic_sync.generation() != self.settled;
            if settled || self.last_refresh.is_none_or(|t| t.elapsed() >= self.spec.refresh_interval) {
                self.refresh_topics();
            }
            self.serve_owner(Duration::ZERO);
            if self.owned.is_empty() {
                self.serve_owner(Duration::from_millis(100));
                continue;
            }
            self.copy_batch();
            if self.open.as_ref().is_some_and(|o| o.started.elapsed() >= self.spec.interval) && !self.commit() {
                break;
            }
        }
        self.finish();
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
        let subscribed: Vec<&str> = remotes.iter().map(String::as_str).collect();
        if subscribed.is_empty() {
            return;
        }
        if let Err(e) = self.owner.subscribe(&subscribed) {
            warn!("[{}] cannot subscribe the ownership group to {} remote topics: {e}", self.spec.name, subscribed.len());
        }
        if !self.unmapped.is_empty() {
            let waiting = std::mem::take(&mut self.unmapped);
            self.take_up(waiting);
        }
    }

    /// Serves the ownership group's callbacks and acts on what changed.
    fn serve_owner(&mut self, wait: Duration) {
        // Paused: anything fetched before the pause is dropped.
        let _ = self.owner.poll(wait);
        let changes = self.owner.context().take_changes();
        if changes.is_empty() {
            return;
        }
        Metrics::add(&self.spec.metrics.rebalances, 1);
        // Ownership changes at a transaction's edge: what is open commits
        // now (or is refused, if the generation is already over).
        if self.open.is_some() {
            self.commit();
        }
        let mut assigned = Vec::new();
        for change in changes {
            match change {
                Change::Revoked(tps) => {
                    for (topic, p) in &tps {
                        let gone: Vec<Tp> = self.owned.iter().filter(|(tp, o)| &*o.remote == topic && tp.1 == *p).map(|(tp, _)| tp.clone()).collect();
                        for tp in gone {
                            self.owned.remove(&tp);
                        }
                        self.unmapped.retain(|u| !(u.0 == *topic && u.1 == *p));
                    }
                    info!("[{}] ownership revoked: {} partition(s)", self.spec.name, tps.len());
                }
                Change::Assigned(tps) => assigned.extend(tps),
            }
        }
        if !assigned.is_empty() {
            info!("[{}] ownership assigned: {} partition(s)", self.spec.name, assigned.len());
            self.take_up(assigned);
        } else {
            self.assign_source();
        }
    }

    /// Takes up remote partitions this task now owns: their positions are
    /// read from the ownership group (waiting while a transaction of the
    /// previous owner is open), else from the source group, else the
    /// source's `auto.offset.reset`.
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
        let mut from_source = TopicPartitionList::new();
        for (remote, source, p) in &wanted {
            let next = stable.find_partition(remote, *p).map(|e| e.offset()).unwrap_or(Offset::Invalid);
            if !matches!(next, Offset::Offset(_)) {
                from_source.add_partition(source, *p);
            }
            let hook = self.spec.ack_hooks.as_ref().map(|h| h.clone().partition_hook(source, *p));
            self.owned.insert((source.clone(), *p), Owned { remote: remote.clone(), next, hook });
        }
        if from_source.count() > 0 {
            // Never copied exactly-once before: where the source group is.
            match self.source.committed_offsets(from_source.clone(), Duration::from_secs(10)) {
                Ok(c) => {
                    for e in c.elements() {
                        if let (Offset::Offset(n), Some(o)) = (e.offset(), self.owned.get_mut(&(Arc::from(e.topic()), e.partition()))) {
                            o.next = Offset::Offset(n);
                        }
                    }
                }
                Err(e) => warn!("[{}] cannot read the source group's offsets ({e}); auto.offset.reset decides where new partitions start", self.spec.name),
            }
        }
        self.assign_source();
    }

    /// The ownership group's offsets of `list`, once no open transaction
    /// holds them back; None when asked to stop meanwhile.
    fn settled_positions(&self, list: &TopicPartitionList) -> Option<TopicPartitionList> {
        let mut told = false;
        loop {
            match self.owner.committed_offsets(list.clone(), Duration::from_secs(5)) {
                Ok(c) => return Some(c),
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
                    let _ = self.owner.poll(Duration::from_millis(100));
                }
            }
        }
    }

    /// Assigns the source consumer every owned partition at its committed
    /// position: also how an aborted transaction's records are read again.
    fn assign_source(&mut self) {
        let mut list = TopicPartitionList::new();
        for ((topic, p), o) in &self.owned {
            let _ = list.add_partition_offset(topic, *p, if matches!(o.next, Offset::Invalid) { Offset::Invalid } else { o.next });
        }
        if let Err(e) = self.source.assign(&list) {
            warn!("[{}] cannot assign the source partitions: {e}", self.spec.name);
        }
    }

    /// Reads up to a batch and sends it in the open transaction.
    fn copy_batch(&mut self) {
        let wait = match &self.open {
            Some(o) => self.spec.interval.saturating_sub(o.started.elapsed()).min(Duration::from_millis(100)),
            None => Duration::from_millis(100),
        };
        let mut wait = wait;
        for _ in 0..BATCH {
            let msg = match self.source.poll(wait) {
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    debug!("[{}] source consumer: {e}", self.spec.name);
                    break;
                }
                None => break,
            };
            wait = Duration::ZERO;
            if !send(&self.spec, &self.txn, &mut self.open, &self.owned, &msg) {
                break;
            }
        }
    }

    /// Commits the open transaction; false when the task must stop.
    fn commit(&mut self) -> bool {
        let Some(open) = self.open.take() else { return true };
        let mut positions = TopicPartitionList::new();
        for (tp, last) in &open.last {
            if let Some(o) = self.owned.get(tp) {
                let _ = positions.add_partition_offset(&o.remote, tp.1, Offset::Offset(last + 1));
            }
        }
        let ctx = self.txn.producer().context();
        let result = if ctx.failed.load(Ordering::Relaxed) {
            self.txn.abort(CALL_TIMEOUT).and(Err(TxnError::Aborted(rdkafka::error::KafkaError::Global(RDKafkaErrorCode::InvalidRecord))))
        } else {
            self.txn.commit_as(&positions, &self.owner, CALL_TIMEOUT)
        };
        match result {
            Ok(()) => {
                self.committed(&open);
                true
            }
            Err(e @ (TxnError::GroupFenced(_) | TxnError::Aborted(_))) => {
                Metrics::add(&self.spec.metrics.commit_failures, 1);
                warn!("[{}] transaction of {} records not committed: {e}; read again from the committed positions", self.spec.name, open.records);
                // Partitions given away meanwhile are dropped at the
                // ownership change this poll serves; the rest go back.
                self.assign_source();
                true
            }
            Err(e) => {
                let msg =
                    format!("[{}] exactly-once: {e}; the open transaction's records are not committed and are copied again at the next start", self.spec.name);
                self.spec.shutdown.fail(ExitStatus::Failure, msg);
                false
            }
        }
    }

    /// After a commit: positions move on, the source group and the
    /// offset-syncs learn them.
    fn committed(&mut self, open: &Open) {
        let m = &self.spec.metrics;
        Metrics::add(&m.produced, open.records);
        Metrics::add(&m.produced_bytes, open.bytes);
        Metrics::add(&m.commits, 1);
        let mut source_list = TopicPartitionList::new();
        let ctx = self.txn.producer().context();
        for (tp, last) in &open.last {
            let Some(o) = self.owned.get_mut(tp) else { continue };
            o.next = Offset::Offset(last + 1);
            let _ = source_list.add_partition_offset(&tp.0, tp.1, Offset::Offset(last + 1));
            let target_partition = self.spec.handler.target_partition(tp.1).unwrap_or(tp.1);
            if let (Some(hook), Some(downstream)) = (&o.hook, ctx.last(&o.remote, target_partition)) {
                hook.acknowledged(&mut std::iter::once((*last, downstream)));
            }
        }
        if let Err(e) = self.source.commit(&source_list, CommitMode::Async) {
            debug!("[{}] source group commit (for lag tools only) not sent: {e}", self.spec.name);
        }
    }

    fn finish(mut self) {
        if self.open.is_some() && !self.commit() {
            self.spec.shutdown.drain_timed_out();
        }
        let mut source_list = TopicPartitionList::new();
        for ((t, p), o) in &self.owned {
            if let Offset::Offset(n) = o.next {
                let _ = source_list.add_partition_offset(t, *p, Offset::Offset(n));
            }
        }
        if source_list.count() > 0 {
            if let Err(e) = self.source.commit(&source_list, CommitMode::Sync) {
                debug!("[{}] final source group commit (for lag tools only): {e}", self.spec.name);
            }
        }
        self.owner.unsubscribe();
        info!("[{}] exactly-once task stopped", self.spec.name);
    }
}

/// Sends one record in the open transaction (beginning one if none is);
/// false when the loop should stop reading for now.
fn send(spec: &TxnSpec, txn: &Transactional<TxnDeliveries>, open: &mut Option<Open>, owned: &FxHashMap<Tp, Owned>, msg: &BorrowedMessage<'_>) -> bool {
    let tp: Tp = (Arc::from(msg.topic()), msg.partition());
    let Some(o) = owned.get(&tp) else { return true };
    if open.is_none() {
        txn.producer().context().reset();
        if let Err(e) = txn.begin() {
            spec.shutdown.fail(ExitStatus::Failure, format!("[{}] cannot begin a transaction: {e}", spec.name));
            return false;
        }
        *open = Some(Open { started: Instant::now(), last: FxHashMap::default(), records: 0, bytes: 0 });
    }
    let open = open.as_mut().expect("begun above");
    let mut record: BaseRecord<'_, [u8], [u8], ()> = BaseRecord::to(&o.remote);
    if let Some(p) = spec.handler.target_partition(msg.partition()) {
        record = record.partition(p);
    }
    if let Some(k) = msg.key() {
        record = record.key(k);
    }
    if let Some(v) = msg.payload() {
        record = record.payload(v);
    }
    if let Some(ts) = msg.timestamp().to_millis().filter(|t| *t >= 0) {
        record = record.timestamp(ts);
    }
    if let Some(h) = msg.headers() {
        record = record.headers(h.detach());
    }
    let size = (msg.key().map_or(0, <[u8]>::len) + msg.payload().map_or(0, <[u8]>::len)) as u64;
    loop {
        match txn.producer().send(record) {
            Ok(()) => break,
            Err((e, r)) if e.rdkafka_error_code() == Some(RDKafkaErrorCode::QueueFull) => {
                record = r;
                thread::sleep(Duration::from_millis(1));
            }
            Err((e, _)) => {
                // Refused before it left: the whole transaction is aborted
                // at its commit and read again.
                warn!("[{}] a record of {} could not be sent: {e}", spec.name, tp.0);
                txn.producer().context().failed.store(true, Ordering::Relaxed);
                break;
            }
        }
    }
    Metrics::add(&spec.metrics.consumed, 1);
    Metrics::add(&spec.metrics.consumed_bytes, size);
    open.last.insert(tp, msg.offset());
    open.records += 1;
    open.bytes += size;
    true
}
