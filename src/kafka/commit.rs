//! Offset commits answered on a queue of their own (`rd_kafka_commit_queue`)
//! instead of through the consumer's callbacks, so that a stream can wait
//! for the answer with a bound and never has more than one in flight.

use std::ffi::CStr;
use std::fmt;
use std::time::{Duration, Instant};

use rdkafka::client::Client;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::{ClientContext, TopicPartitionList};

/// A commit's own reply queue: librdkafka's commit, answered there instead
/// of through the consumer's callbacks, so it can be waited on with a bound.
pub struct CommitQueue(*mut rdkafka::bindings::rd_kafka_queue_t);

// SAFETY: a librdkafka queue handle may be used from any thread; this one
// is only ever used by its stream, under the context's lock.
unsafe impl Send for CommitQueue {}

/// What the coordinator answered: the partitions it refused, with why; or
/// why the whole commit failed.
pub type CommitAnswer = Result<Vec<(String, i32, RDKafkaErrorCode)>, CommitError>;

/// Why a whole commit failed.
#[derive(Debug, Clone, PartialEq)]
pub enum CommitError {
    /// librdkafka would not send it, or the coordinator refused it whole.
    Refused(RDKafkaErrorCode),
    /// No answer within `waited` (the stream keeps the queue, see [`CommitQueue::answer`]).
    Unanswered { waited: Duration },
}

impl fmt::Display for CommitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommitError::Refused(code) => write!(f, "{code}"),
            CommitError::Unanswered { waited } => write!(f, "no answer from the group coordinator within {:.1} s", waited.as_secs_f64()),
        }
    }
}

impl std::error::Error for CommitError {}

impl CommitQueue {
    /// Sends the commit of `list`; its answer comes on the returned queue.
    pub fn send<C: ClientContext>(client: &Client<C>, list: &TopicPartitionList) -> Result<CommitQueue, CommitError> {
        use rdkafka::bindings as rd;
        let rk = client.native_ptr();
        // SAFETY: `rk` is the live client's handle (borrowed for the call); the queue is ours until
        // dropped, and librdkafka keeps its own reference for the commit's
        // reply, so a reply that comes after we let go is dropped by
        // librdkafka, not written to freed memory.
        let queue = CommitQueue(unsafe { rd::rd_kafka_queue_new(rk) });
        // SAFETY: `list` is valid for the call (librdkafka copies it); no
        // callback, so the result comes back as an event on `queue`.
        let err = unsafe { rd::rd_kafka_commit_queue(rk, list.ptr(), queue.0, None, std::ptr::null_mut()) };
        if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return Err(CommitError::Refused(RDKafkaErrorCode::from(err)));
        }
        Ok(queue)
    }

    /// The answer, waited for until `until`; None if it has not come.
    pub fn answer(&self, until: Instant) -> Option<CommitAnswer> {
        use rdkafka::bindings as rd;
        let wait = until.saturating_duration_since(Instant::now());
        // SAFETY: polls our own live queue; the only thing ever put on it
        // is this commit's result.
        let event = unsafe { rd::rd_kafka_queue_poll(self.0, i32::try_from(wait.as_millis()).unwrap_or(i32::MAX)) };
        if event.is_null() {
            return None;
        }
        // SAFETY: `event` is a live event we own until destroyed below;
        // its partition list (possibly null) lives as long as it does.
        let answer = unsafe {
            let err = rd::rd_kafka_event_error(event);
            let answer = if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                Err(CommitError::Refused(RDKafkaErrorCode::from(err)))
            } else {
                let tpl = rd::rd_kafka_event_topic_partition_list(event);
                let elems = if tpl.is_null() || (*tpl).cnt <= 0 { &[][..] } else { std::slice::from_raw_parts((*tpl).elems, (*tpl).cnt as usize) };
                Ok(elems
                    .iter()
                    .filter(|e| e.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR)
                    .map(|e| {
                        let topic = CStr::from_ptr(e.topic).to_string_lossy().into_owned();
                        (topic, e.partition, RDKafkaErrorCode::from(e.err))
                    })
                    .collect())
            };
            rd::rd_kafka_event_destroy(event);
            answer
        };
        Some(answer)
    }
}

impl Drop for CommitQueue {
    fn drop(&mut self) {
        // SAFETY: created in send, released once; an answer still to come
        // is dropped by librdkafka (see send).
        unsafe { rdkafka::bindings::rd_kafka_queue_destroy(self.0) };
    }
}
