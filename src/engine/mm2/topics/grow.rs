//! Adding partitions to target topics whose source topic gained some
//! (`--sync.partitions`): one CreatePartitions per [`CHUNK`] topics. A
//! target topic is never shrunk, and one raised meanwhile by someone else
//! counts as grown.

use log::{debug, info, warn};
use rdkafka::admin::{AdminOptions, NewPartitions, TopicResult};
use rdkafka::error::RDKafkaErrorCode;

use super::create::{in_chunks, Outcome};
use super::error::TopicSyncError;
use super::link::{Link, View, CHUNK, TIMEOUT};
use crate::kafka::admin::block_on;

impl Outcome {
    /// A CreatePartitions answer for one topic: INVALID_PARTITIONS means
    /// someone else raised it meanwhile; anything else is tried again.
    pub(super) fn of_growth(answer: Option<&TopicResult>) -> Outcome {
        match answer {
            Some(Ok(_)) => Outcome::Done,
            Some(Err((_, RDKafkaErrorCode::InvalidPartitions))) => Outcome::Already,
            Some(Err((_, code))) => Outcome::Retry(TopicSyncError::Broker(*code)),
            None => Outcome::Retry(TopicSyncError::NotNamed),
        }
    }
}

impl Link {
    /// The source topics in `grown` now have that many partitions: adds the
    /// missing ones on the target, one CreatePartitions per [`CHUNK`]
    /// topics. Returns the topics settled (grown, or with nothing to do)
    /// with their new counts; the others are tried again at the next refresh.
    pub(super) fn grow(&self, view: &View, grown: &[(String, usize)]) -> Vec<(String, usize)> {
        let mut settled = Vec::new();
        // (source topic, target topic, target's partitions, wanted)
        let mut todo: Vec<(&str, String, usize, usize)> = Vec::new();
        for (topic, partitions) in grown {
            let target_topic = self.handler.target_topic(topic).into_owned();
            match view.shapes.get(&target_topic) {
                Some(s) if s.partitions < *partitions => todo.push((topic, target_topic, s.partitions, *partitions)),
                _ => settled.push((topic.clone(), *partitions)),
            }
        }
        let opts = AdminOptions::new().operation_timeout(Some(TIMEOUT)).request_timeout(Some(TIMEOUT));
        let request = |part: &[(&str, String, usize, usize)]| {
            let new: Vec<NewPartitions<'_>> = part.iter().map(|(_, target_topic, _, n)| NewPartitions::new(target_topic, *n)).collect();
            debug!("CreatePartitions: {} topics in one request", new.len());
            block_on(self.target.create_partitions(&new, &opts)).map_err(|error| TopicSyncError::Request {
                request: "CreatePartitions",
                topics: new.len(),
                error,
            })
        };
        in_chunks(
            &todo,
            CHUNK,
            |t| &t.1,
            request,
            Outcome::of_growth,
            |part, outcomes| {
                for ((topic, target_topic, have, partitions), outcome) in part.iter().zip(outcomes) {
                    match &outcome {
                        Outcome::Done => {
                            info!("source topic {topic} grew to {partitions} partitions: target topic {target_topic} raised from {have} to {partitions}")
                        }
                        // Someone else raised it in the meantime.
                        Outcome::Already => {}
                        Outcome::Retry(e) | Outcome::Refused(e) => {
                            warn!("cannot add partitions to target topic {target_topic} ({have} -> {partitions}): {e}; tried again at the next topic refresh")
                        }
                    }
                    if outcome.settled() {
                        settled.push((topic.to_string(), *partitions));
                    }
                }
            },
        );
        settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_outcomes() {
        let ok: TopicResult = Ok("t".into());
        let raised: TopicResult = Err(("t".into(), RDKafkaErrorCode::InvalidPartitions));
        let denied: TopicResult = Err(("t".into(), RDKafkaErrorCode::TopicAuthorizationFailed));
        assert_eq!(Outcome::of_growth(Some(&ok)), Outcome::Done);
        assert_eq!(Outcome::of_growth(Some(&raised)), Outcome::Already, "raised by someone else meanwhile");
        assert!(!Outcome::of_growth(Some(&denied)).settled(), "other refusals are tried again at the next refresh");
        assert!(!Outcome::of_growth(None).settled());
    }
}
