//! What an exactly-once task and its ownership group's revoke callback
//! share ([`Shared`]): the transactional producer, the transaction in
//! progress and the partitions owned, behind one lock.
//!
//! Why the callback commits: another member can own a partition only
//! after this member served its revocation (eager: it rejoins only after
//! the callback; cooperative: the partition is assigned elsewhere only in
//! the rebalance after this member rejoined), or after this member lost
//! its membership, which resets its generation to -1 and makes every
//! commit refused ([`Transactional::commit_as`]). So a transaction that
//! ends inside the revoke callback, committed or aborted, cannot overlap
//! with the next owner's, and commits made between polls (the task's) are
//! made while every partition in them is still this member's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use log::{debug, error, warn};
use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, DeliveryResult, Message};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

use crate::engine::pipeline::ack_hooks::AckHook;
use crate::engine::pipeline::producer::refusal_hint;
use crate::engine::pipeline::provenance::Provenance;
use crate::fxhash::FxHashMap;
use crate::kafka::transactions::{refusal, Refusal, Transactional, TxnError};
use crate::ops::metrics::Metrics;
use crate::plan::handler::Handler;

use super::refused::{Denied, Refused, TargetAccess};

/// How long a transactional call may take before it counts as unanswered.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Transactions in a row aborted by a record the target refuses for good
/// before the task stops: a record cannot be skipped inside a transaction,
/// and reading it again would fail the same way forever. More than one, so
/// a batch refused for its size alone gets other batchings.
const REFUSED_IN_A_ROW: u32 = 3;

/// Whether the target refusing a record with `code` will refuse it again
/// however often it is sent (its size, its shape, a topic policy): the
/// `--abort.on.send.failure true` cases of the at-least-once producer.
fn for_good(code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode::*;
    matches!(code, MessageSizeTooLarge | MessageBatchTooLarge | InvalidMessage | InvalidMessageSize | InvalidTimestamp | PolicyViolation | InvalidRecord)
}

/// The open transaction's first failed record: why, and where it was going.
#[derive(Clone, Debug)]
pub struct Failed {
    pub code: RDKafkaErrorCode,
    pub topic: String,
    pub partition: i32,
}

pub type Tp = (Arc<str>, i32);

/// The producer's context: the last target offset each target partition
/// acknowledged in the open transaction, for the offset-syncs.
#[derive(Default)]
pub struct TxnDeliveries {
    last: Mutex<FxHashMap<String, Vec<i64>>>,
    failed: AtomicBool,
    /// The open transaction's first refused record.
    first_failure: Mutex<Option<Failed>>,
}

impl ClientContext for TxnDeliveries {
    fn error(&self, error: KafkaError, reason: &str) {
        // A refusal (an ACL, a broker too old) comes back from the call
        // that met it, and the task says it with what to grant.
        match error.rdkafka_error_code().and_then(refusal) {
            Some(_) => debug!("librdkafka: {error}: {reason}"),
            None => error!("librdkafka: {error}: {reason}"),
        }
    }
}

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
            Err((e, m)) => {
                debug!("a record of the open transaction was refused: {e}");
                self.fail(e, m.topic(), m.partition());
            }
        }
    }
}

impl TxnDeliveries {
    fn reset(&self) {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.failed.store(false, Ordering::Relaxed);
        *self.first_failure.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// A record of the open transaction for `topic`-`partition` failed
    /// with `e`: the transaction is to be aborted.
    fn fail(&self, e: &KafkaError, topic: &str, partition: i32) {
        self.failed.store(true, Ordering::Relaxed);
        self.first_failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| Failed {
            code: e.rdkafka_error_code().unwrap_or(RDKafkaErrorCode::Fail),
            topic: topic.to_string(),
            partition,
        });
    }

    fn first_failure(&self) -> Option<Failed> {
        self.first_failure.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The refusal behind the open transaction's first failed record, if
    /// that is what failed it.
    fn refused(&self) -> Option<(Refusal, RDKafkaErrorCode)> {
        let code = self.first_failure()?.code;
        refusal(code).map(|r| (r, code))
    }

    fn last(&self, topic: &str, partition: i32) -> Option<i64> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.get(topic).and_then(|p| p.get(partition as usize)).copied().filter(|o| *o >= 0)
    }
}

/// A source partition this task owns.
pub struct Owned {
    /// Its remote topic (the ownership group's partition `p` of it).
    pub remote: Arc<str>,
    /// Where its next transaction starts: the committed position.
    pub next: Offset,
    pub hook: Option<Arc<dyn AckHook>>,
}

/// The transaction in progress.
pub struct Open {
    started: Instant,
    /// The last source offset sent, per source partition.
    last: FxHashMap<Tp, i64>,
    records: u64,
    bytes: u64,
}

/// How a transaction ended.
pub enum Ended {
    /// Committed, or there was none.
    Committed,
    /// Aborted (refused, or a record failed): the source consumer must go
    /// back to the committed positions.
    Aborted,
    /// The producer cannot go on.
    Fatal(String),
    /// The target refused what only its operator can give (the
    /// transaction was aborted).
    Refused(Refused),
}

impl Ended {
    /// Why the task must stop after this end, if it must.
    pub fn stop(self) -> Option<Stop> {
        match self {
            Ended::Committed | Ended::Aborted => None,
            Ended::Fatal(why) => Some(Stop::Failed(why)),
            Ended::Refused(r) => Some(Stop::Refused(r)),
        }
    }
}

/// Why a task stops before it is asked to.
pub enum Stop {
    /// A transaction ended in a way the task cannot go on from.
    Failed(String),
    /// The target refused what only its operator can give.
    Refused(Refused),
}

pub struct TxnState {
    pub txn: Transactional<TxnDeliveries>,
    pub open: Option<Open>,
    pub owned: FxHashMap<Tp, Owned>,
    /// Positions committed since the source group was last told (it is
    /// told for lag tools, by the task).
    pub for_source_group: FxHashMap<Tp, i64>,
    /// A transaction was aborted since the task last assigned its source
    /// consumer: its records are to be read again.
    pub reseek: bool,
    /// The producer was fenced (the coordinator aborted its transaction
    /// after `transaction.timeout.ms`, as it does for a process frozen
    /// mid-transaction): the task makes a new one before it goes on.
    pub fenced: bool,
    /// Transactions aborted in a row by a record refused for good (see
    /// [`REFUSED_IN_A_ROW`]); back to 0 at each commit.
    pub refused_in_a_row: u32,
    /// Why the task must stop, when a transaction ended in a way it
    /// cannot go on from or the target refused it (set where the task
    /// cannot act, in a callback).
    pub fatal: Option<Stop>,
}

/// The state and what ending a transaction needs besides it.
pub struct Shared {
    pub name: String,
    /// Stamps records with their source cluster and skips those that came
    /// from the target (`provenance`), as the at-least-once streams do.
    pub provenance: Option<Provenance>,
    pub handler: Arc<Handler>,
    pub metrics: Arc<Metrics>,
    /// What a refusal's message names.
    pub access: Arc<TargetAccess>,
    pub state: Mutex<TxnState>,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, TxnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the open transaction: commits it with its positions as the
    /// ownership group's offsets, sent as `member` (the ownership group's
    /// consumer), or aborts it when that is refused.
    pub fn end_open<C: ConsumerContext>(&self, state: &mut TxnState, member: &BaseConsumer<C>) -> Ended {
        let Some(open) = state.open.take() else { return Ended::Committed };
        let mut positions = TopicPartitionList::new();
        for (tp, last) in &open.last {
            if let Some(o) = state.owned.get(tp) {
                let _ = positions.add_partition_offset(&o.remote, tp.1, Offset::Offset(last + 1));
            }
        }
        let mut remotes: Vec<String> = positions.elements().iter().map(|e| e.topic().to_string()).collect();
        remotes.sort();
        remotes.dedup();
        let deliveries = state.txn.producer().context();
        let result = if deliveries.failed.load(Ordering::Relaxed) {
            if let Some((r, code)) = deliveries.refused() {
                let _ = state.txn.abort(CALL_TIMEOUT);
                let denied = match r {
                    Refusal::Topic => Denied::TopicWrite(remotes),
                    r => self.access.denied(r, remotes),
                };
                return Ended::Refused(Refused::new(&self.access, denied, KafkaError::Global(code)));
            }
            let failed = deliveries.first_failure();
            let aborted = state.txn.abort(CALL_TIMEOUT);
            if let (Ok(()), Some(f)) = (&aborted, failed.as_ref().filter(|f| for_good(f.code))) {
                state.refused_in_a_row += 1;
                if state.refused_in_a_row >= REFUSED_IN_A_ROW {
                    return Ended::Fatal(format!(
                        "[{}] exactly-once: the target refused a record for {}-{} in {} transactions in a row ({}){}: a record refused for good \
                         cannot be skipped inside a transaction, so the mirror stops, as --abort.on.send.failure true does; nothing past the last \
                         committed transaction is committed, and a restart reads the rest again",
                        self.name,
                        f.topic,
                        f.partition,
                        state.refused_in_a_row,
                        KafkaError::MessageProduction(f.code),
                        refusal_hint(Some(f.code))
                    ));
                }
            }
            let code = failed.map_or(RDKafkaErrorCode::Fail, |f| f.code);
            aborted.and(Err(TxnError::Aborted(KafkaError::MessageProduction(code))))
        } else {
            state.txn.commit_as(&positions, member, CALL_TIMEOUT)
        };
        match result {
            Ok(()) => {
                state.refused_in_a_row = 0;
                self.committed(state, &open);
                Ended::Committed
            }
            Err(e @ (TxnError::GroupFenced(_) | TxnError::NotMember(_) | TxnError::Aborted(_))) => {
                Metrics::add(&self.metrics.commit_failures, 1);
                warn!("[{}] transaction of {} records not committed: {e}; read again from the committed positions", self.name, open.records);
                state.reseek = true;
                Ended::Aborted
            }
            Err(e @ TxnError::Fenced(_)) => {
                Metrics::add(&self.metrics.commit_failures, 1);
                warn!(
                    "[{}] transaction of {} records not committed: {e}; a new transactional producer is made and they are read again from the committed positions",
                    self.name, open.records
                );
                state.reseek = true;
                state.fenced = true;
                Ended::Aborted
            }
            Err(TxnError::Refused(r, e)) => Ended::Refused(Refused::new(&self.access, self.access.denied(r, remotes), e)),
            Err(e) => Ended::Fatal(format!(
                "[{}] exactly-once: {e}; the open transaction's records are not committed and are copied again at the next start",
                self.name
            )),
        }
    }

    /// After a commit: positions move on; the offset-syncs learn them.
    fn committed(&self, state: &mut TxnState, open: &Open) {
        let m = &self.metrics;
        Metrics::add(&m.produced, open.records);
        Metrics::add(&m.produced_bytes, open.bytes);
        Metrics::add(&m.commits, 1);
        let ctx = state.txn.producer().context();
        for (tp, last) in &open.last {
            let Some(o) = state.owned.get_mut(tp) else { continue };
            o.next = Offset::Offset(last + 1);
            state.for_source_group.insert(tp.clone(), last + 1);
            let target_partition = self.handler.target_partition(tp.1).unwrap_or(tp.1);
            if let (Some(hook), Some(downstream)) = (&o.hook, ctx.last(&o.remote, target_partition)) {
                hook.acknowledged(&mut std::iter::once((*last, downstream)));
            }
        }
    }

    /// Sends one record in the open transaction (beginning one if none is).
    /// Err: no transaction could begin (the task stops).
    pub fn send(&self, state: &mut TxnState, msg: &BorrowedMessage<'_>) -> Result<(), TxnError> {
        let tp: Tp = (Arc::from(msg.topic()), msg.partition());
        // Read before the partition was given up, or after an abort sent
        // the consumer back: not this transaction's.
        let Some(o) = state.owned.get(&tp) else { return Ok(()) };
        if state.reseek || state.fenced {
            return Ok(());
        }
        if state.open.is_none() {
            state.txn.producer().context().reset();
            state.txn.begin()?;
            state.open = Some(Open { started: Instant::now(), last: FxHashMap::default(), records: 0, bytes: 0 });
        }
        let source_headers = msg.headers();
        if self.provenance.as_ref().is_some_and(|p| p.came_from_target(source_headers)) {
            // Written on the target by the mirror of the other direction:
            // its position moves with this transaction, nothing is copied.
            Metrics::add(&self.metrics.loop_skipped, 1);
            state.open.as_mut().expect("begun above").last.insert(tp, msg.offset());
            return Ok(());
        }
        let headers = match (&self.provenance, source_headers) {
            (Some(p), h) => Some(p.stamp(h.map(|h| h.detach()))),
            (None, h) => h.map(|h| h.detach()),
        };
        let mut record: BaseRecord<'_, [u8], [u8], ()> = BaseRecord::to(&o.remote);
        let record_partition = self.handler.target_partition(msg.partition());
        if let Some(p) = record_partition {
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
        if let Some(h) = headers {
            record = record.headers(h);
        }
        let size = (msg.key().map_or(0, <[u8]>::len) + msg.payload().map_or(0, <[u8]>::len)) as u64;
        loop {
            match state.txn.producer().send(record) {
                Ok(()) => break,
                Err((e, r)) if e.rdkafka_error_code() == Some(RDKafkaErrorCode::QueueFull) => {
                    record = r;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err((e, _)) => {
                    // Refused before it left: the whole transaction is
                    // aborted at its end and read again.
                    warn!("[{}] a record of {} could not be sent: {e}", self.name, tp.0);
                    state.txn.producer().context().fail(&e, &o.remote, record_partition.unwrap_or(-1));
                    break;
                }
            }
        }
        Metrics::add(&self.metrics.consumed, 1);
        Metrics::add(&self.metrics.consumed_bytes, size);
        let open = state.open.as_mut().expect("begun above");
        open.last.insert(tp, msg.offset());
        open.records += 1;
        open.bytes += size;
        Ok(())
    }
}

impl TxnState {
    /// How long the open transaction has been open.
    pub fn open_for(&self) -> Option<Duration> {
        self.open.as_ref().map(|o| o.started.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::for_good;
    use rdkafka::types::RDKafkaErrorCode::*;

    #[test]
    fn only_refusals_no_resend_mends_stop_a_task() {
        for code in [MessageSizeTooLarge, MessageBatchTooLarge, InvalidRecord, PolicyViolation, InvalidTimestamp] {
            assert!(for_good(code), "{code:?}");
        }
        // A target down or slow, a leader moving, an abort's purge, a
        // fenced producer: the transaction is sent again, never given up.
        for code in [MessageTimedOut, RequestTimedOut, NotLeaderForPartition, PurgeQueue, PurgeInflight, ProducerFenced, UnknownTopicOrPartition] {
            assert!(!for_good(code), "{code:?}");
        }
    }
}
