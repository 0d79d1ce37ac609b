//! Kafka transactions on the target, the glue exactly-once (issue #29) is
//! to be built on: one transactional producer's life, and what each
//! failure means for the records of its transaction.
//!
//! Two fences keep a process that lost its partitions (paused by the OS,
//! cut off from its group, a zombie) from committing records that another
//! owner now copies:
//! - `init_transactions` of a producer with the same `transactional.id`
//!   bumps its epoch: the older producer's open transaction is aborted and
//!   it can never commit again ([`TxnError::Fenced`]);
//! - positions commit in the same transaction as the records, through
//!   `send_offsets_to_transaction` with a consumer group's metadata (member
//!   id and generation, KIP-447): the group's coordinator refuses a member
//!   of an older generation, so the transaction cannot commit
//!   ([`TxnError::GroupFenced`]). `tests/transactions.rs` shows both on a
//!   real broker, and that the refused transaction's records never become
//!   visible to a `read_committed` reader.
//!
//! The producer is a `ThreadedProducer`: its delivery reports are served
//! by its own thread. A producer nobody polls cannot abort: librdkafka's
//! abort waits for the outstanding reports to be served.

use std::fmt;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, ConsumerGroupMetadata};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{DefaultProducerContext, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientConfig, TopicPartitionList};

/// What a failed transactional call means.
#[derive(Debug)]
pub enum TxnError {
    /// A newer producer with the same `transactional.id` took over: nothing
    /// of the open transaction commits, and this producer never will.
    Fenced(KafkaError),
    /// The group's coordinator refused the positions: this member's
    /// generation is over, its partitions are another member's now. The
    /// transaction was aborted; its records must not be sent again by this
    /// member.
    GroupFenced(KafkaError),
    /// The positions were not sent: the consumer is not a member of its
    /// group right now (its membership was lost and the loss is not
    /// served yet). Meant as [`TxnError::GroupFenced`]; the transaction
    /// was aborted.
    NotMember(&'static str),
    /// The transaction was aborted; its records are to be sent again in
    /// the next one.
    Aborted(KafkaError),
    /// Not answered in time: the same call is to be made again, and its
    /// outcome is known only then.
    TimedOut(KafkaError),
    /// The target refused what only its operator can give (an ACL, or
    /// transactions at all): asking again changes nothing. A transaction
    /// was aborted.
    Refused(Refusal, KafkaError),
    /// The producer cannot go on (a fatal error other than fencing).
    Fatal(KafkaError),
}

/// What the target refused a transactional producer for good, by the
/// error's code: an ACL of its authorizer, or transactions at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// WRITE (or DESCRIBE, to find its coordinator) on the `transactional.id`.
    TransactionalId,
    /// READ on the group whose offsets the transaction commits.
    Group,
    /// On a topic of the transaction: WRITE for its records, READ for the
    /// positions committed as the group's offsets.
    Topic,
    /// IDEMPOTENT_WRITE on the cluster (brokers before 2.8 ask every
    /// idempotent producer for it).
    Cluster,
    /// The broker has no transactions (before 0.11: librdkafka's
    /// `_UNSUPPORTED_FEATURE`), or not the request versions asked
    /// (`UNSUPPORTED_VERSION`).
    Unsupported,
}

/// The refusal an error code stands for, if it is one.
pub fn refusal(code: RDKafkaErrorCode) -> Option<Refusal> {
    match code {
        RDKafkaErrorCode::TransactionalIdAuthorizationFailed => Some(Refusal::TransactionalId),
        RDKafkaErrorCode::GroupAuthorizationFailed => Some(Refusal::Group),
        RDKafkaErrorCode::TopicAuthorizationFailed => Some(Refusal::Topic),
        RDKafkaErrorCode::ClusterAuthorizationFailed => Some(Refusal::Cluster),
        RDKafkaErrorCode::UnsupportedFeature | RDKafkaErrorCode::UnsupportedVersion => Some(Refusal::Unsupported),
        _ => None,
    }
}

impl fmt::Display for TxnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnError::Fenced(e) => write!(f, "fenced by a newer producer with the same transactional.id ({e}); its transaction is aborted"),
            TxnError::GroupFenced(e) => {
                write!(f, "the group's coordinator refused this member's positions, its partitions are another's ({e}); the transaction is aborted")
            }
            TxnError::NotMember(why) => write!(f, "positions not sent: {why}; the transaction is aborted"),
            TxnError::Aborted(e) => write!(f, "the transaction was aborted ({e}); its records are sent again"),
            TxnError::TimedOut(e) => write!(f, "not answered in time ({e}); asked again"),
            TxnError::Refused(r, e) => write!(f, "refused ({r:?}): {e}"),
            TxnError::Fatal(e) => write!(f, "the transactional producer cannot go on: {e}"),
        }
    }
}

impl std::error::Error for TxnError {}

/// The error codes by which a group's coordinator says a member's
/// generation is over.
fn group_fenced(code: RDKafkaErrorCode) -> bool {
    matches!(code, RDKafkaErrorCode::UnknownMemberId | RDKafkaErrorCode::IllegalGeneration | RDKafkaErrorCode::FencedInstanceId)
}

/// What a failure means, by [`TxnError`]'s variant names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meaning {
    Fenced,
    GroupFenced,
    Aborted,
    TimedOut,
    Refused(Refusal),
    Fatal,
}

/// Sorts a failure by what it means, from its code and librdkafka's own
/// classification (fatal, needs an abort, retriable).
fn meaning(code: Option<RDKafkaErrorCode>, fatal: bool, abort: bool, retriable: bool) -> Meaning {
    match (code, code.and_then(refusal)) {
        // `Fenced` is librdkafka's own (-144) for a producer the broker
        // fenced earlier: the real test saw it rather than ProducerFenced.
        (Some(RDKafkaErrorCode::Fenced | RDKafkaErrorCode::ProducerFenced | RDKafkaErrorCode::InvalidProducerEpoch), _) => Meaning::Fenced,
        (Some(c), _) if group_fenced(c) => Meaning::GroupFenced,
        // Before librdkafka's flags: a refusal it calls fatal, abortable
        // or retriable is the same refusal at every try.
        (_, Some(r)) => Meaning::Refused(r),
        _ if fatal => Meaning::Fatal,
        _ if abort => Meaning::Aborted,
        _ if retriable => Meaning::TimedOut,
        (Some(RDKafkaErrorCode::OperationTimedOut | RDKafkaErrorCode::MessageTimedOut), _) => Meaning::TimedOut,
        _ => Meaning::Fatal,
    }
}

fn classify(e: KafkaError) -> TxnError {
    let m = match &e {
        KafkaError::Transaction(t) => meaning(Some(t.code()), t.is_fatal(), t.txn_requires_abort(), t.is_retriable()),
        other => meaning(other.rdkafka_error_code(), false, false, false),
    };
    wrap(m, e)
}

fn wrap(m: Meaning, e: KafkaError) -> TxnError {
    match m {
        Meaning::Fenced => TxnError::Fenced(e),
        Meaning::GroupFenced => TxnError::GroupFenced(e),
        Meaning::Aborted => TxnError::Aborted(e),
        Meaning::TimedOut => TxnError::TimedOut(e),
        Meaning::Refused(r) => TxnError::Refused(r, e),
        Meaning::Fatal => TxnError::Fatal(e),
    }
}

/// One transactional producer.
pub struct Transactional<C: ProducerContext + 'static = DefaultProducerContext> {
    producer: ThreadedProducer<C>,
}

impl<C: ProducerContext + 'static> Transactional<C> {
    /// A producer of `config` with `transactional.id` `id`, registered with
    /// the transaction coordinator (which fences any older producer of the
    /// same id and aborts its open transaction).
    pub fn new(config: &ClientConfig, id: &str, context: C, timeout: Duration) -> Result<Self, TxnError> {
        let mut c = config.clone();
        c.set("transactional.id", id).set("enable.idempotence", "true").set("acks", "all");
        let producer: ThreadedProducer<C> = c.create_with_context(context).map_err(TxnError::Fatal)?;
        producer.init_transactions(timeout).map_err(classify)?;
        Ok(Transactional { producer })
    }

    /// The producer, to send the records of the open transaction with.
    pub fn producer(&self) -> &ThreadedProducer<C> {
        &self.producer
    }

    pub fn begin(&self) -> Result<(), TxnError> {
        self.producer.begin_transaction().map_err(classify)
    }

    /// Commits the open transaction with `offsets` as `group`'s positions.
    /// Refused or aborted, the transaction is aborted here (nothing of it
    /// becomes visible) and the error says what that means.
    pub fn commit(&self, offsets: &TopicPartitionList, group: &ConsumerGroupMetadata, timeout: Duration) -> Result<(), TxnError> {
        self.serve_deliveries(timeout);
        let sent = self.producer.send_offsets_to_transaction(offsets, group, timeout).map_err(classify);
        self.commit_after(sent, timeout)
    }

    /// Commits the open transaction with `offsets` as the positions of the
    /// group `member` belongs to, sent with the member's id and generation
    /// as librdkafka holds them at this moment (KIP-447: the coordinator
    /// refuses them once the generation is over). A member that is no
    /// member right now (librdkafka reset its generation to -1 after the
    /// coordinator forgot it, and the loss is not served yet) is refused
    /// here without asking: the coordinator takes a transactional commit
    /// with generation -1 and no member id from anyone, which would let a
    /// zombie commit. On a refusal or an abort the transaction is aborted.
    pub fn commit_as<CC: ConsumerContext>(&self, offsets: &TopicPartitionList, member: &BaseConsumer<CC>, timeout: Duration) -> Result<(), TxnError> {
        self.serve_deliveries(timeout);
        let sent = send_offsets_as_member(self.producer.client().native_ptr(), offsets, member.client().native_ptr(), timeout);
        self.commit_after(sent, timeout)
    }

    /// Commits once the positions are `sent`; a refusal or an abort (of
    /// either step) aborts the transaction, and the error says which.
    fn commit_after(&self, sent: Result<(), TxnError>, timeout: Duration) -> Result<(), TxnError> {
        match sent.and_then(|()| self.producer.commit_transaction(timeout).map_err(classify)) {
            Err(e @ (TxnError::GroupFenced(_) | TxnError::NotMember(_) | TxnError::Aborted(_))) => {
                self.abort(timeout)?;
                Err(e)
            }
            Err(e @ TxnError::Refused(..)) => {
                // Aborted where it can be (a refusal librdkafka made fatal
                // cannot be, and commits nothing either): the refusal is
                // what the caller must hear of.
                let _ = self.abort(timeout);
                Err(e)
            }
            done => done,
        }
    }

    /// Serves the delivery reports of the open transaction on the calling
    /// thread until none is outstanding (or `timeout`). The commit's own
    /// flush waits for them, and left to the producer's polling thread
    /// they came about 100 ms late (rust-rdkafka's thread polls with a
    /// 100 ms timeout): each commit took 100 ms more, and a transaction
    /// per poll copied 5,500 records/s instead of hundreds of thousands.
    fn serve_deliveries(&self, timeout: Duration) {
        let until = std::time::Instant::now() + timeout;
        while self.producer.in_flight_count() > 0 && std::time::Instant::now() < until {
            self.producer.poll(Duration::from_millis(1));
        }
    }

    /// Aborts the open transaction: none of its records become visible.
    pub fn abort(&self, timeout: Duration) -> Result<(), TxnError> {
        self.producer.abort_transaction(timeout).map_err(classify)
    }
}

/// librdkafka's serialized group metadata opens with this, then the
/// generation (native-endian int32), the group id and the member id, each
/// NUL-terminated (`rd_kafka_consumer_group_metadata_write`).
const METADATA_MAGIC: &[u8] = b"CGMDv2:";

/// The generation and member id in librdkafka's serialized group metadata.
fn generation_and_member(buf: &[u8]) -> Option<(i32, &[u8])> {
    let rest = buf.strip_prefix(METADATA_MAGIC)?;
    let generation = i32::from_ne_bytes(rest.get(..4)?.try_into().ok()?);
    let rest = &rest[4..];
    let group_end = rest.iter().position(|b| *b == 0)?;
    let rest = &rest[group_end + 1..];
    let member_end = rest.iter().position(|b| *b == 0)?;
    Some((generation, &rest[..member_end]))
}

/// `send_offsets_to_transaction` with the metadata of `consumer`'s group
/// membership read once, checked, and sent: the same object is looked at
/// and sent, so a reset between the two cannot slip through.
fn send_offsets_as_member(
    producer: *mut rd::rd_kafka_t,
    offsets: &TopicPartitionList,
    consumer: *mut rd::rd_kafka_t,
    timeout: Duration,
) -> Result<(), TxnError> {
    let not_member = TxnError::NotMember;
    // SAFETY: both handles are borrowed from live clients for the call;
    // the metadata object and the serialized buffer are freed below on
    // every path; librdkafka copies what it keeps of `offsets`.
    unsafe {
        let md = rd::rd_kafka_consumer_group_metadata(consumer);
        if md.is_null() {
            return Err(not_member("the consumer has no group.id"));
        }
        let mut buf: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        let written = rd::rd_kafka_consumer_group_metadata_write(md, &mut buf, &mut size);
        if !written.is_null() {
            rd::rd_kafka_error_destroy(written);
            rd::rd_kafka_consumer_group_metadata_destroy(md);
            return Err(not_member("the consumer's group metadata could not be read"));
        }
        let member = generation_and_member(std::slice::from_raw_parts(buf as *const u8, size)).map(|(g, m)| (g, !m.is_empty()));
        rd::rd_kafka_mem_free(std::ptr::null_mut(), buf);
        match member {
            Some((generation, true)) if generation >= 0 => {}
            _ => {
                rd::rd_kafka_consumer_group_metadata_destroy(md);
                return Err(not_member("the consumer is not a member of its group right now (its membership was lost)"));
            }
        }
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        let e = rd::rd_kafka_send_offsets_to_transaction(producer, offsets.ptr(), md, ms);
        rd::rd_kafka_consumer_group_metadata_destroy(md);
        if e.is_null() {
            return Ok(());
        }
        let code: RDKafkaErrorCode = rd::rd_kafka_error_code(e).into();
        let m =
            meaning(Some(code), rd::rd_kafka_error_is_fatal(e) != 0, rd::rd_kafka_error_txn_requires_abort(e) != 0, rd::rd_kafka_error_is_retriable(e) != 0);
        rd::rd_kafka_error_destroy(e);
        Err(wrap(m, KafkaError::Global(code)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RDKafkaErrorCode as C;

    #[test]
    fn failures_are_sorted_by_what_they_mean_for_the_records() {
        // Fencing wins over librdkafka's fatal flag: the caller must know
        // the partitions are another's, not merely that the client broke.
        assert_eq!(meaning(Some(C::ProducerFenced), true, false, false), Meaning::Fenced);
        assert_eq!(meaning(Some(C::InvalidProducerEpoch), true, false, false), Meaning::Fenced);
        assert_eq!(meaning(Some(C::Fenced), true, false, false), Meaning::Fenced);
        assert_eq!(meaning(Some(C::UnknownMemberId), false, true, false), Meaning::GroupFenced);
        assert_eq!(meaning(Some(C::IllegalGeneration), false, true, false), Meaning::GroupFenced);
        assert_eq!(meaning(Some(C::FencedInstanceId), true, false, false), Meaning::GroupFenced);
        assert_eq!(meaning(Some(C::BrokerNotAvailable), true, true, false), Meaning::Fatal);
        assert_eq!(meaning(Some(C::MessageTimedOut), false, true, false), Meaning::Aborted);
        assert_eq!(meaning(Some(C::CoordinatorNotAvailable), false, false, true), Meaning::TimedOut);
        assert_eq!(meaning(Some(C::OperationTimedOut), false, false, false), Meaning::TimedOut);
        assert_eq!(meaning(Some(C::InvalidConfig), false, false, false), Meaning::Fatal);
        assert_eq!(meaning(None, false, false, false), Meaning::Fatal);
    }

    #[test]
    fn refusals_are_told_apart_from_failures_asking_again_could_mend() {
        // As librdkafka flags them: init_transactions' and EndTxn's are
        // fatal, AddOffsetsToTxn's and TxnOffsetCommit's abortable.
        assert_eq!(meaning(Some(C::TransactionalIdAuthorizationFailed), true, false, false), Meaning::Refused(Refusal::TransactionalId));
        assert_eq!(meaning(Some(C::GroupAuthorizationFailed), false, true, false), Meaning::Refused(Refusal::Group));
        assert_eq!(meaning(Some(C::TopicAuthorizationFailed), false, true, false), Meaning::Refused(Refusal::Topic));
        assert_eq!(meaning(Some(C::ClusterAuthorizationFailed), true, false, false), Meaning::Refused(Refusal::Cluster));
        // A target too old for transactions: librdkafka finds no broker
        // with InitProducerId (Kafka before 0.11), or a broker refuses the
        // version of a request.
        assert_eq!(meaning(Some(C::UnsupportedFeature), true, false, false), Meaning::Refused(Refusal::Unsupported));
        assert_eq!(meaning(Some(C::UnsupportedVersion), false, false, false), Meaning::Refused(Refusal::Unsupported));
        assert_eq!(meaning(Some(C::UnsupportedVersion), false, false, true), Meaning::Refused(Refusal::Unsupported), "even if called retriable");
        // Fencing still wins: it is no refusal but another owner.
        assert_eq!(meaning(Some(C::ProducerFenced), true, false, false), Meaning::Fenced);
        assert_eq!(refusal(C::SaslAuthenticationFailed), None, "credentials are kafka::auth's");
        assert_eq!(refusal(C::CoordinatorNotAvailable), None);
    }

    #[test]
    fn a_refusal_keeps_librdkafkas_error() {
        let e = wrap(meaning(Some(C::UnsupportedFeature), true, false, false), KafkaError::Global(C::UnsupportedFeature));
        assert!(matches!(e, TxnError::Refused(Refusal::Unsupported, KafkaError::Global(C::UnsupportedFeature))), "{e:?}");
        let e = classify(KafkaError::Global(C::TransactionalIdAuthorizationFailed));
        assert!(matches!(e, TxnError::Refused(Refusal::TransactionalId, _)), "{e:?}");
    }

    #[test]
    fn a_members_generation_and_id_are_read_from_librdkafkas_metadata() {
        let mut buf = METADATA_MAGIC.to_vec();
        buf.extend_from_slice(&7i32.to_ne_bytes());
        buf.extend_from_slice(b"group\0member-1\0\x01");
        assert_eq!(generation_and_member(&buf), Some((7, &b"member-1"[..])));
        let mut reset = METADATA_MAGIC.to_vec();
        reset.extend_from_slice(&(-1i32).to_ne_bytes());
        reset.extend_from_slice(b"group\0\0\x01");
        assert_eq!(generation_and_member(&reset), Some((-1, &b""[..])));
        for cut in 0..buf.len() - 2 {
            assert!(generation_and_member(&buf[..cut]).is_none(), "a metadata cut at {cut} names no member");
        }
    }
}
