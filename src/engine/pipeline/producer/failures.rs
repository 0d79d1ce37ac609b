//! The failure rules of a producer worker: what a failed delivery (or a
//! record librdkafka refuses at once) calls for, and what it does to the
//! record's offset.
//!
//! - Purged at shutdown: not delivered, never committed past.
//! - The producer broken (a fatal error): the mirror stops, whatever
//!   `--abort.on.send.failure` says; nothing at or past the record commits.
//! - A failure that says nothing about the record (a batch refused as too
//!   large, a partition librdkafka does not know yet, the idempotent
//!   producer's sequence state, a target topic the topic sync makes again):
//!   the record goes again, its offset still in flight (queued in the
//!   context's `Resends`; the worker sends them, see `worker`).
//! - The target refusing the record itself: abort or skip, as configured.
//!
//! Refused credentials reach the producer as client errors, not as
//! failed deliveries: they stop the mirror with the configuration exit
//! status (the [`ClientContext`] impl here).

use std::sync::atomic::Ordering;

use log::{error, warn};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::Producer;
use rdkafka::ClientContext;

use super::context::{payload_len, DeliveryContext, Resend, TargetProducer};
use crate::engine::pipeline::offsets::AckHandle;
use crate::ops::metrics::{Metrics, TopicMetrics};
use crate::ops::shutdown::ExitStatus;

/// How many times a record failing with the idempotent producer's sequence
/// errors is sent again before the mirror stops on it (never skipped).
const MAX_STATE_RESENDS: u32 = 10;

/// What a failed delivery report calls for.
#[derive(Debug, PartialEq)]
enum Failure {
    /// Purged: at shutdown past the drain deadline, or after a fatal error.
    Purged,
    /// The producer instance is broken.
    Fatal,
    /// Send the record again (queued in the context's `Resends`).
    Resend,
    /// The target refuses the record itself: abort or skip, as configured.
    Permanent,
}

/// Sorts a failed delivery: `alone` says whether the record was sent alone,
/// `fatal` whether librdkafka reported a fatal error, `tries` how many times
/// it was sent again already.
fn classify(code: Option<RDKafkaErrorCode>, alone: bool, fatal: bool, tries: u32, await_gone_topics: bool) -> Failure {
    use RDKafkaErrorCode::*;
    match code {
        Some(PurgeQueue | PurgeInflight) => Failure::Purged,
        Some(Fatal) => Failure::Fatal,
        _ if fatal => Failure::Fatal,
        // The target topic is gone and the topic sync makes it again: the
        // record waits for it (see `wait_for_partition`).
        Some(UnknownTopic | UnknownTopicOrPartition) if await_gone_topics => Failure::Resend,
        Some(MessageSizeTooLarge | MessageBatchTooLarge) if !alone => Failure::Resend,
        // A partition librdkafka no longer has: its topic was deleted, or
        // its count shrank in librdkafka's view (records in flight then fail
        // with BrokerDestroy). The wait for the partition tells a topic gone
        // (refused) from stale metadata (sent again).
        Some(UnknownPartition | BrokerDestroy) => Failure::Resend,
        Some(OutOfOrderSequenceNumber | UnknownProducerId | InvalidProducerEpoch) if tries < MAX_STATE_RESENDS => Failure::Resend,
        Some(OutOfOrderSequenceNumber | UnknownProducerId | InvalidProducerEpoch) => Failure::Fatal,
        _ => Failure::Permanent,
    }
}

impl ClientContext for DeliveryContext {
    fn error(&self, error: KafkaError, reason: &str) {
        // librdkafka would retry refused credentials forever: stop instead.
        if let Some(msg) = crate::kafka::auth::auth_failure(error.rdkafka_error_code(), reason, &self.cluster) {
            if !self.shutdown.stopping() {
                error!("{msg}");
            }
            self.shutdown.fail(ExitStatus::Config, msg);
            return;
        }
        if self.shutdown.status() == ExitStatus::Config {
            // The reconnect noise that follows refused credentials.
            log::debug!("target producer: {error}: {reason}");
            return;
        }
        if matches!(error.rdkafka_error_code(), Some(RDKafkaErrorCode::Fatal)) {
            // Reported on the same queue as the delivery reports and before
            // the failures it causes, so those see the flag.
            self.resends.fatal.store(true, Ordering::SeqCst);
            let msg = format!(
                "target producer fatal error: {reason}; this producer can send nothing more, so the mirror stops and commits nothing past \
                 the last record the target acknowledged (a restart sends the rest)"
            );
            if !self.shutdown.stopping() {
                error!("{msg}");
            }
            self.shutdown.fail(ExitStatus::Failure, msg);
            return;
        }
        match crate::ops::repeats::check(&format!("target producer {} {:?}", self.cluster, error.rdkafka_error_code())) {
            Some(left_out) => error!("target producer: {error}: {reason}{}", crate::ops::repeats::note(left_out)),
            None => log::debug!("target producer: {error}: {reason}"),
        }
    }
}

impl DeliveryContext {
    /// A record the producer could not send because the producer itself is
    /// broken: never skipped, whatever --abort.on.send.failure says; nothing
    /// at or after it is committed, and the mirror stops.
    pub(super) fn fatal_failure(&self, ack: &AckHandle, offset: i64, err: &KafkaError) {
        self.resends.fatal.store(true, Ordering::SeqCst);
        ack.failed_at(offset);
        let (topic, partition) = (&ack.tp.0, ack.tp.1);
        let msg = format!(
            "target producer can no longer send ({err}): offset {offset} of {topic}-{partition} and later are not committed; \
             the mirror stops, and a restart sends them again"
        );
        if self.shutdown.status() == ExitStatus::Ok {
            error!("{msg}");
        } else {
            log::debug!("{msg}");
        }
        self.shutdown.fail(ExitStatus::Failure, msg);
    }

    /// A failed delivery report, sorted by [`classify`].
    pub(super) fn failed(&self, opaque: usize, err: &KafkaError, msg: &BorrowedMessage<'_>, tries: u32) {
        let mut failure = classify(err.rdkafka_error_code(), self.resends.alone.load(Ordering::SeqCst), self.resends.is_fatal(), tries, self.await_gone_topics);
        // A record sent again keeps its source timestamp, which only the
        // private message struct still holds once delivery failed; without
        // it the record cannot go again unchanged, so the mirror stops.
        let timestamp = if failure == Failure::Resend { crate::kafka::fetched::produced_timestamp(msg) } else { None };
        if failure == Failure::Resend && timestamp.is_none() {
            failure = Failure::Fatal;
        }
        if failure == Failure::Resend {
            self.resends.push(Resend {
                opaque,
                topic: msg.topic().to_string(),
                partition: msg.partition(),
                key: msg.key().map(<[u8]>::to_vec),
                value: msg.payload().map(<[u8]>::to_vec),
                headers: msg.headers().map(|h| h.detach()),
                timestamp,
                tries,
                err: err.clone(),
            });
            return;
        }
        let known = self.deliveries.settle(opaque, |ack, offset, stats| match failure {
            // Not delivered, not awaited any more, never committed past;
            // sent again after a restart.
            Failure::Purged => ack.failed_at(offset),
            Failure::Fatal => self.fatal_failure(ack, offset, err),
            _ => self.permanent_failure(ack, offset, stats, msg.topic(), payload_len(msg), err),
        });
        if known.is_none() {
            error!("delivery report for an unknown record (opaque {opaque:#x}); its offset stays uncommitted");
        }
    }

    /// A record `producer` refused at once: its instance is broken (fatal),
    /// or the record is refused for good (abort or skip, as configured).
    pub(super) fn refused_at_send(&self, producer: &TargetProducer, opaque: usize, topic: &str, size: usize, err: &KafkaError) {
        let fatal = matches!(err.rdkafka_error_code(), Some(RDKafkaErrorCode::Fatal)) || producer.client().fatal_error().is_some();
        self.deliveries.settle(opaque, |ack, offset, stats| {
            if fatal {
                self.fatal_failure(ack, offset, err);
            } else {
                self.permanent_failure(ack, offset, stats, topic, size, err);
            }
        });
    }

    /// A record the target will never take: abort or skip, as configured.
    fn permanent_failure(&self, ack: &AckHandle, offset: i64, stats: &TopicMetrics, target_topic: &str, size: usize, err: &KafkaError) {
        let (topic, partition) = (&ack.tp.0, ack.tp.1);
        let hint = refusal_hint(err.rdkafka_error_code());
        let what = format!("Error when sending message to topic {target_topic} ({size} bytes) from source {topic}-{partition} at offset {offset}: {err}{hint}");
        if self.abort_on_send_failure {
            ack.failed_at(offset);
            // The first failure says it all; the records behind it fail the
            // same way while the mirror stops, so they go to the debug log.
            if self.shutdown.status() == ExitStatus::Failure {
                log::debug!("{what}");
                return;
            }
            error!("{what}");
            error!("Closing producer due to send failure (--abort.on.send.failure true): offset {offset} of {topic}-{partition} and later are not committed");
            self.shutdown.fail(ExitStatus::Failure, what);
        } else {
            warn!("{what}; skipped and counted as dropped (--abort.on.send.failure false)");
            Metrics::add(&self.metrics.dropped, 1);
            Metrics::add(&stats.dropped, 1);
            ack.done_at(offset);
        }
    }
}

/// What to do about a record the target refused with `code`, as a
/// parenthesised sentence to append to the error ("" when there is no
/// more to say); the exactly-once tasks say the same.
pub(crate) fn refusal_hint(code: Option<RDKafkaErrorCode>) -> &'static str {
    match code {
        Some(RDKafkaErrorCode::MessageSizeTooLarge | RDKafkaErrorCode::MessageBatchTooLarge) => {
            " (the record, or the batch it was sent in, is larger than the target topic's max.message.bytes or the producer's \
             message.max.bytes/max.request.size; raise the limit on the target topic, or lower batch.size in the producer file)"
        }
        Some(RDKafkaErrorCode::TopicAuthorizationFailed) => " (the producer's principal may not write to this topic; grant WRITE on it)",
        Some(RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic | RDKafkaErrorCode::UnknownPartition) => {
            " (the topic does not exist on the target and the broker does not create topics; create it first)"
        }
        _ => "",
    }
}

/// Whether a record refused with `code` at send waits for its partition
/// (or, where the topic sync makes gone topics again, for its topic).
pub(super) fn waits_for_partition(ctx: &DeliveryContext, code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode::*;
    code == UnknownPartition || (ctx.await_gone_topics && matches!(code, UnknownTopic | UnknownTopicOrPartition))
}

/// The refusal a record gets when its target topic is gone.
pub(super) fn topic_gone() -> KafkaError {
    KafkaError::MessageProduction(RDKafkaErrorCode::UnknownTopicOrPartition)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_that_say_nothing_about_the_record_are_never_skipped() {
        use RDKafkaErrorCode::*;
        let c = |code, alone, fatal, tries| classify(Some(code), alone, fatal, tries, false);
        // A refusal of the record itself: abort or skip, as configured.
        assert_eq!(c(TopicAuthorizationFailed, false, false, 0), Failure::Permanent);
        assert_eq!(c(InvalidRecord, false, false, 0), Failure::Permanent);
        // Too large: a batch says nothing of its records; alone, it does.
        assert_eq!(c(MessageSizeTooLarge, false, false, 0), Failure::Resend);
        assert_eq!(c(MessageBatchTooLarge, false, false, 0), Failure::Resend);
        assert_eq!(c(MessageSizeTooLarge, true, false, 1), Failure::Permanent);
        // Stale metadata is waited out, however often.
        assert_eq!(c(UnknownPartition, true, false, 50), Failure::Resend);
        assert_eq!(c(BrokerDestroy, false, false, 0), Failure::Resend, "a partition that vanished says nothing about the record");
        // The idempotent producer's sequence state: again, a bounded number of times, then stop.
        assert_eq!(c(OutOfOrderSequenceNumber, false, false, 0), Failure::Resend);
        assert_eq!(c(UnknownProducerId, true, false, MAX_STATE_RESENDS), Failure::Fatal);
        // A broken producer: whatever the code, nothing is skipped.
        assert_eq!(c(Fatal, false, false, 0), Failure::Fatal);
        assert_eq!(c(TopicAuthorizationFailed, false, true, 0), Failure::Fatal);
        assert_eq!(c(MessageSizeTooLarge, false, true, 0), Failure::Fatal);
        assert_eq!(c(PurgeQueue, false, true, 0), Failure::Purged);
        assert_eq!(classify(None, false, false, 0, false), Failure::Permanent);
        // A target topic gone: refused, unless the topic sync makes it again.
        assert_eq!(c(UnknownTopicOrPartition, false, false, 0), Failure::Permanent);
        assert_eq!(classify(Some(UnknownTopicOrPartition), false, false, 0, true), Failure::Resend);
        assert_eq!(classify(Some(UnknownTopic), true, false, 9, true), Failure::Resend);
    }
}
