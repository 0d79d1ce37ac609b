//! Creating missing target topics like the source: per [`CHUNK`] topics,
//! one DescribeConfigs of the source and one CreateTopics of the target
//! ([`in_chunks`]), each topic judged by its own answer ([`Outcome`]): done,
//! made meanwhile by someone else, refused for a reason that may pass
//! (tried again at the next topic refresh) or refused for good (left to
//! the broker, as MM1 did). The created chunks of one pass are released
//! to the streams together ([`Held`]).

use std::collections::HashMap;
use std::time::Duration;

use log::{debug, info, warn};
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication, TopicResult};
use rdkafka::error::RDKafkaErrorCode;

use super::configs::{configs_of, Configs};
use super::error::TopicSyncError;
use super::link::{report_fewer_partitions, Link, TopicShape, View, CHUNK, TIMEOUT};
use crate::engine::pipeline::stream::topic_hook::shortened;
use crate::kafka::admin::block_on;

/// Errors that go away by themselves (a busy or moving controller).
fn is_transient(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::NotController
            | RDKafkaErrorCode::BrokerNotAvailable
            | RDKafkaErrorCode::NetworkException
            | RDKafkaErrorCode::LeaderNotAvailable
    )
}

/// What one request did for one topic of it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Outcome {
    /// Done as asked.
    Done,
    /// Done already, by someone else (another mirror, the broker, an operator).
    Already,
    /// Refused for a reason that may pass (a timeout, a busy controller, no
    /// answer): held back and tried again at the next topic refresh.
    Retry(TopicSyncError),
    /// Refused for good: left to the broker, as MM1 did.
    Refused(TopicSyncError),
}

impl Outcome {
    /// Whether the topic needs no more work from this pass's kind of request.
    pub(super) fn settled(&self) -> bool {
        !matches!(self, Outcome::Retry(_))
    }

    /// A CreateTopics answer for one topic.
    pub(super) fn of_creation(answer: Option<&TopicResult>) -> Outcome {
        match answer {
            Some(Ok(_)) => Outcome::Done,
            Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Outcome::Already,
            Some(Err((_, code))) if is_transient(*code) => Outcome::Retry(TopicSyncError::Broker(*code)),
            Some(Err((_, code))) => Outcome::Refused(TopicSyncError::Broker(*code)),
            None => Outcome::Retry(TopicSyncError::NotNamed),
        }
    }
}

/// Sends `items` in requests of at most `chunk` and judges each item by its
/// own answer (found by `name`): a refused item, an item the answer leaves
/// out, or a request that fails as a whole holds back only the items
/// concerned. `settle` gets each request's items and outcomes as soon as it
/// is answered, so they are used before the next request is sent. Returns
/// the number of requests sent.
pub(super) fn in_chunks<T>(
    items: &[T],
    chunk: usize,
    name: impl Fn(&T) -> &str,
    mut request: impl FnMut(&[T]) -> Result<Vec<TopicResult>, TopicSyncError>,
    judge: fn(Option<&TopicResult>) -> Outcome,
    mut settle: impl FnMut(&[T], Vec<Outcome>),
) -> usize {
    let mut requests = 0;
    for part in items.chunks(chunk.max(1)) {
        requests += 1;
        let outcomes = match request(part) {
            Err(e) => part.iter().map(|_| Outcome::Retry(e.clone())).collect(),
            Ok(answers) => {
                let by_name: HashMap<&str, &TopicResult> = answers
                    .iter()
                    .map(|a| {
                        let n = match a {
                            Ok(n) | Err((n, _)) => n.as_str(),
                        };
                        (n, a)
                    })
                    .collect();
                part.iter().map(|t| judge(by_name.get(name(t)).copied())).collect()
            }
        };
        settle(part, outcomes);
    }
    requests
}

/// A missing target topic as it is to be created.
struct Creation {
    topic: String,
    target_topic: String,
    /// The source topic's partitions and replication factor.
    shape: TopicShape,
    /// The replication factor the target topic gets: the source's (MM2:
    /// `replication.factor`), at most the target's broker count; or the
    /// target broker's `default.replication.factor`.
    rf: Replication,
    /// The source topic's own configs, as copied.
    configs: Vec<(String, String)>,
}

/// Longest a created chunk's topics wait for the chunks after it before
/// they are subscribed ([`Held`]).
const HOLD: Duration = Duration::from_secs(5);

/// Chunks created but not yet released to the streams. Every release moves
/// the topic sync's generation (`TopicSync`), and each stream then subscribes again: a
/// group rebalance, which with the eager assignors (range, MM1's) revokes
/// every partition of every member, waits until what is in flight is
/// delivered (records for topics the target broker is still bringing up
/// wait for it: seconds, with thousands of new partitions) and fetches from
/// the committed offsets again. Releasing each chunk as it was answered
/// made a start over 1,000 new topics rebalance once in its first second
/// and wait 3.8 s for that drain (5,000 topics: ten chunks, up to nine
/// such rebalances). So the chunks of one pass are released together when
/// it ends (its CreateTopics take about 0.3 s per chunk here), or every
/// [`HOLD`] in a pass that takes longer: one subscription for a start over
/// a few thousand new topics.
struct Held {
    /// Source topics of the held chunks (all to leave `pending`).
    done: Vec<String>,
    /// Those of them settled, with their partition counts.
    settled: Vec<(String, usize)>,
    since: std::time::Instant,
}

impl Default for Held {
    fn default() -> Held {
        Held { done: Vec::new(), settled: Vec::new(), since: std::time::Instant::now() }
    }
}

impl Held {
    /// Whether to release now, after chunk `i` (0-based) of `chunks`.
    fn due(&self, i: usize, chunks: usize) -> bool {
        i + 1 >= chunks || self.since.elapsed() >= HOLD
    }
}

impl Link {
    /// Creates the missing target topics like the source: one listing of
    /// the source, then per [`CHUNK`] topics one DescribeConfigs of the
    /// source and one CreateTopics of the target. The chunks are settled
    /// (and their topics subscribed) together once the last is answered, or
    /// every [`HOLD`] in a longer pass ([`Held`]): `release` gets the
    /// topics done with and those of them settled (the others are tried
    /// again at the next topic refresh).
    pub(super) fn create_missing(&self, create: &[(String, usize)], brokers: usize, mut release: impl FnMut(&[String], &[(String, usize)])) {
        let source = match View::fetch(&self.source, "source", &self.source_via) {
            Ok(v) => v,
            Err(e) => {
                warn!(
                    "{} target topics not created yet ({}): {e}; tried again at the next topic refresh",
                    create.len(),
                    shortened(create.iter().map(|(t, _)| t.as_str()))
                );
                release(&create.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(), &[]);
                return;
            }
        };
        let chunks = create.len().div_ceil(CHUNK);
        let mut held = Held::default();
        for (i, part) in create.chunks(CHUNK).enumerate() {
            // A topic gone from the source meanwhile is settled: left to
            // the broker, as MM1 did.
            let (known, gone): (Vec<_>, Vec<_>) = part.iter().partition(|(t, _)| source.shapes.contains_key(t));
            for (topic, _) in &gone {
                let target_topic = self.handler.target_topic(topic);
                warn!("target topic {target_topic} not created like the source: source topic {topic} has no metadata; the target broker decides, as with MM1");
            }
            let names: Vec<&str> = known.iter().map(|(t, _)| t.as_str()).collect();
            let mut configs = configs_of(&self.source, &names);
            let creations: Vec<Creation> = known
                .iter()
                .map(|(topic, _)| {
                    let target_topic = self.handler.target_topic(topic).into_owned();
                    let shape = source.shapes[topic].clone();
                    let rf = self.replication_factor(&shape, brokers, &target_topic);
                    let configs = match configs.remove(topic.as_str()).unwrap_or(Err(TopicSyncError::NotAsked)) {
                        Ok(all) => self.configs_to_copy(&target_topic, all, rf),
                        Err(e) => {
                            warn!(
                                "target topic {target_topic} is created without the source's topic configs: {e} (the principal may need DESCRIBE_CONFIGS on the source topic)"
                            );
                            Vec::new()
                        }
                    };
                    Creation { topic: topic.clone(), target_topic, shape, rf, configs }
                })
                .collect();
            let mut settled: Vec<(String, usize)> = gone.iter().map(|(t, n)| (t.clone(), *n)).collect();
            let mut already: Vec<(String, String, usize)> = Vec::new();
            in_chunks(
                &creations,
                CHUNK,
                |c| &c.target_topic,
                |cs| self.request_creation(cs),
                Outcome::of_creation,
                |cs, outcomes| {
                    for (c, outcome) in cs.iter().zip(outcomes) {
                        self.log_creation(c, &outcome);
                        if outcome == Outcome::Already {
                            already.push((c.topic.clone(), c.target_topic.clone(), c.shape.partitions));
                        }
                        if outcome.settled() {
                            // The source's count as listed now: a stream that
                            // sees more later grows the target topic.
                            settled.push((c.topic.clone(), c.shape.partitions));
                        }
                    }
                },
            );
            if !already.is_empty() {
                // Made by someone else: checked as an existing one.
                match View::fetch(&self.target, "target", &self.target_via) {
                    Ok(view) => {
                        for (topic, target_topic, partitions) in &already {
                            if let Some(shape) = view.shapes.get(target_topic) {
                                report_fewer_partitions(topic, target_topic, *partitions, shape);
                            }
                        }
                    }
                    Err(e) => warn!("{} target topics made meanwhile by someone else are not checked: {e}", already.len()),
                }
                let pairs: Vec<(String, String)> = already.into_iter().map(|(t, tt, _)| (t, tt)).collect();
                self.compare_max_message_bytes(&pairs);
            }
            held.done.extend(part.iter().map(|(t, _)| t.clone()));
            held.settled.extend(settled);
            if held.due(i, chunks) {
                release(&held.done, &held.settled);
                held = Held::default();
            }
        }
    }

    /// One CreateTopics for `creations`.
    fn request_creation(&self, creations: &[Creation]) -> Result<Vec<TopicResult>, TopicSyncError> {
        let new: Vec<NewTopic<'_>> = creations
            .iter()
            .map(|c| {
                c.configs
                    .iter()
                    .fold(NewTopic::new(&c.target_topic, c.shape.partitions as i32, TopicReplication::Fixed(c.rf.request())), |n, (k, v)| n.set(k, v))
            })
            .collect();
        debug!("CreateTopics: {} topics in one request", new.len());
        let opts = AdminOptions::new().operation_timeout(Some(TIMEOUT)).request_timeout(Some(TIMEOUT));
        block_on(self.target.create_topics(&new, &opts)).map_err(|error| TopicSyncError::Request { request: "CreateTopics", topics: new.len(), error })
    }

    /// Says what became of a creation.
    fn log_creation(&self, c: &Creation, outcome: &Outcome) {
        let Creation { topic, target_topic, shape, rf, configs } = c;
        let described = configs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
        match outcome {
            Outcome::Done => info!(
                "created target topic {target_topic} like source topic {topic}: {} partitions, replication factor {rf} (source {}), configs [{described}]",
                shape.partitions, shape.replication
            ),
            Outcome::Already => info!("target topic {target_topic} was created meanwhile by someone else"),
            Outcome::Retry(e) => {
                warn!("cannot create target topic {target_topic} yet: {e}; not mirrored until it is created (tried again at the next topic refresh)")
            }
            Outcome::Refused(e) => warn!(
                "cannot create target topic {target_topic} ({} partitions, replication factor {rf}, configs [{described}]): {e}; \
                 the target broker decides as with MM1 (auto-create with its defaults, if enabled)",
                shape.partitions
            ),
        }
    }

    /// The source topic's own configs worth copying (`all` being every
    /// entry of it), `min.insync.replicas` capped at the replication factor
    /// the target topic gets.
    fn configs_to_copy(&self, target_topic: &str, all: Configs, rf: Replication) -> Vec<(String, String)> {
        let mut copied = self.own_configs(all);
        // The broker's default is not known here; the broker checks
        // min.insync.replicas against it when it creates the topic, as
        // it does for Java MM2.
        let Replication::Fixed(rf) = rf else { return copied };
        // acks=all with min.insync.replicas above the replication factor
        // could never succeed: every record would be retried forever.
        for (k, v) in copied.iter_mut() {
            if k == "min.insync.replicas" && v.parse::<usize>().is_ok_and(|m| m > rf) {
                warn!("topic {target_topic}: min.insync.replicas {v} on the source is more than the target's replication factor {rf}; created with {rf}");
                *v = rf.to_string();
            }
        }
        copied
    }

    /// The source's factor in MM1 mode, `replication.factor` in MM2 mode;
    /// at most the target's broker count (Java MM2 fails the creation
    /// instead, and the broker's auto-create then makes the topic with its
    /// own partition count). `replication.factor = -1` asks for the target
    /// broker's `default.replication.factor`, as Java sends it (KIP-464):
    /// the broker, which knows its default, decides.
    fn replication_factor(&self, shape: &TopicShape, brokers: usize, target_topic: &str) -> Replication {
        if self.remote.as_ref().is_some_and(|r| r.replication_factor == -1) {
            return Replication::BrokerDefault;
        }
        let wanted = self.remote.as_ref().map_or(shape.replication, |r| r.replication_factor.max(1) as usize);
        if self.remote.is_some() && wanted > brokers {
            warn!("target topic {target_topic}: replication.factor {wanted} is more than the target's {brokers} broker(s); created with {brokers}");
        }
        Replication::Fixed(wanted.min(brokers).max(1))
    }
}

/// The replication factor a target topic is created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replication {
    Fixed(usize),
    /// `-1` in CreateTopics: the target broker's `default.replication.factor`.
    BrokerDefault,
}

impl Replication {
    /// As CreateTopics takes it.
    fn request(self) -> i32 {
        match self {
            Replication::Fixed(n) => n as i32,
            Replication::BrokerDefault => -1,
        }
    }
}

impl std::fmt::Display for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::kafka::admin::shown_rf(self.request()))
    }
}

#[cfg(test)]
mod tests {
    use rdkafka::error::KafkaError;

    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i:04}")).collect()
    }

    /// Every topic created: each request answered topic by topic.
    fn all_made(part: &[String]) -> Result<Vec<TopicResult>, TopicSyncError> {
        Ok(part.iter().map(|t| Ok(t.clone())).collect())
    }

    #[test]
    fn topics_go_in_requests_of_at_most_a_chunk_and_each_is_settled_as_its_request_is_answered() {
        let topics = names(1201);
        let mut sizes = Vec::new();
        let settled = std::cell::RefCell::new(Vec::new());
        let requests = in_chunks(
            &topics,
            500,
            |t| t,
            |part| {
                // What the previous requests settled is already known.
                assert_eq!(settled.borrow().len(), sizes.iter().sum::<usize>(), "each request settled before the next is sent");
                sizes.push(part.len());
                all_made(part)
            },
            Outcome::of_creation,
            |part, outcomes| settled.borrow_mut().extend(part.iter().zip(outcomes).map(|(t, o)| (t.clone(), o))),
        );
        let settled = settled.into_inner();
        assert_eq!(requests, 3);
        assert_eq!(sizes, vec![500, 500, 201]);
        assert_eq!(settled.len(), 1201);
        assert!(settled.iter().all(|(_, o)| *o == Outcome::Done));
        assert_eq!(settled.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(), topics, "every topic once, in order");
    }

    #[test]
    fn a_refused_or_missing_topic_holds_back_only_itself() {
        let topics = names(6);
        let mut seen = Vec::new();
        in_chunks(
            &topics,
            500,
            |t| t,
            |part| {
                // Answers out of order, one refused for good, one busy, one left out.
                let mut answers: Vec<TopicResult> = part
                    .iter()
                    .filter(|t| *t != "t0003")
                    .map(|t| match t.as_str() {
                        "t0001" => Err((t.clone(), RDKafkaErrorCode::PolicyViolation)),
                        "t0002" => Err((t.clone(), RDKafkaErrorCode::RequestTimedOut)),
                        "t0004" => Err((t.clone(), RDKafkaErrorCode::TopicAlreadyExists)),
                        _ => Ok(t.clone()),
                    })
                    .collect();
                answers.reverse();
                Ok(answers)
            },
            Outcome::of_creation,
            |part, outcomes| seen.extend(part.iter().cloned().zip(outcomes)),
        );
        let by: HashMap<String, Outcome> = seen.into_iter().collect();
        assert_eq!(by["t0000"], Outcome::Done);
        assert!(
            matches!(&by["t0001"], Outcome::Refused(e) if e.to_string().contains("Policy violation")),
            "refused for good, with the reason: {:?}",
            by["t0001"]
        );
        assert!(matches!(by["t0002"], Outcome::Retry(_)), "a timeout is tried again: {:?}", by["t0002"]);
        assert!(matches!(by["t0003"], Outcome::Retry(_)), "no answer for it: tried again");
        assert_eq!(by["t0004"], Outcome::Already);
        assert_eq!(by["t0005"], Outcome::Done);
        let settled: Vec<&str> = ["t0000", "t0001", "t0002", "t0003", "t0004", "t0005"].into_iter().filter(|t| by[*t].settled()).collect();
        assert_eq!(settled, vec!["t0000", "t0001", "t0004", "t0005"]);
    }

    #[test]
    fn a_failed_request_holds_back_only_its_own_chunk() {
        let topics = names(250);
        let mut n = 0;
        let mut seen = Vec::new();
        let requests = in_chunks(
            &topics,
            100,
            |t| t,
            |part| {
                n += 1;
                if n == 2 {
                    Err(TopicSyncError::Request { request: "CreateTopics", topics: 100, error: KafkaError::AdminOp(RDKafkaErrorCode::OperationTimedOut) })
                } else {
                    all_made(part)
                }
            },
            Outcome::of_creation,
            |part, outcomes| seen.extend(part.iter().cloned().zip(outcomes)),
        );
        assert_eq!(requests, 3, "the chunk after the failed one is still sent");
        let retry: Vec<&String> = seen.iter().filter(|(_, o)| !o.settled()).map(|(t, _)| t).collect();
        assert_eq!(retry.len(), 100);
        assert_eq!(retry.first().map(|t| t.as_str()), Some("t0100"));
        assert_eq!(retry.last().map(|t| t.as_str()), Some("t0199"));
        assert_eq!(seen.iter().filter(|(_, o)| *o == Outcome::Done).count(), 150);
    }

    #[test]
    fn the_chunks_of_a_pass_are_released_together_with_the_last() {
        let held = Held::default();
        // One chunk: released as it is answered.
        assert!(held.due(0, 1));
        // Ten: held (well within HOLD of a fresh Held) until the last,
        // which releases everything held.
        assert!((0..9).all(|i| !held.due(i, 10)));
        assert!(held.due(9, 10));
        // A pass that takes longer than HOLD releases what it holds.
        let old = Held { since: std::time::Instant::now() - HOLD, ..Held::default() };
        assert!(old.due(4, 10));
    }
}
