//! Target topics created like the source, and kept with as many partitions.
//!
//! MM1 left topic creation to the target broker's auto-create, so mirrored
//! topics got the broker's default partition count and none of the source's
//! settings. Here, the first time a consumer stream's topic refresh sees a
//! matching source topic, and before it subscribes to it (so before any of
//! its records reach a producer, and before the producer could make the
//! broker auto-create it), [`TopicSync::reconcile`] creates the topic on the
//! target when it is missing: the source's partition count, a replication
//! factor of min(source's, target's broker count), and the source's topic
//! overrides (configs whose source is DYNAMIC_TOPIC_CONFIG, such as
//! cleanup.policy, retention.ms, max.message.bytes).
//!
//! An existing target topic is never altered, except that partitions are
//! added when the source topic gains partitions while we run
//! (`--sync.partitions`). Mismatches that matter (fewer target partitions, a
//! smaller max.message.bytes) are logged as warnings naming topic and values.
//! Every admin failure is a warning: the record path then falls back to what
//! MM1 did (the broker decides), so this never stops the mirror.
//!
//! Everything is done in batches, so that a start over thousands of topics
//! costs a few requests, not a few per topic (issue #21). A refresh pass
//! lists the target once: topics whose target exists are settled at once
//! (the stream subscribes them right away), and the missing ones go to a
//! creator thread, which lists the source once and then, per [`CHUNK`]
//! topics, reads their configs with one DescribeConfigs and creates them
//! with one CreateTopics. Streams subscribe the created topics together
//! once the pass's last chunk is answered, or every few seconds in a longer
//! pass ([`TopicSync::generation`]; every change of a subscription is a
//! group rebalance, see [`Held`]). A topic the target refuses
//! for a reason that may pass (a timeout, a busy controller) is logged with
//! the reason and tried again at the next refresh; it holds back no other.
//! Grown topics get one CreatePartitions per chunk, and MM2's config sync
//! one DescribeConfigs per cluster and one AlterConfigs per chunk.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use log::{debug, info, warn};
use rdkafka::admin::{
    AdminOptions, AlterConfig, ConfigSource, NewPartitions, NewTopic, OwnedResourceSpecifier, ResourceSpecifier, TopicReplication, TopicResult,
};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

mod error;

use error::TopicSyncError;

use crate::engine::pipeline::stream::topic_hook::{shortened, Reconciled, TargetTopics};
use crate::kafka::acls::{self, AclBinding, AclError, Operation, Pattern, Permission};
use crate::kafka::admin::{block_on, topic_counts, Admin, Counts};
use crate::plan::handler::Handler;
use crate::plan::RemoteTopics;

const TIMEOUT: Duration = Duration::from_secs(15);

/// Most topics in one CreateTopics, DescribeConfigs, CreatePartitions or
/// AlterConfigs request. Brokers take far more (the bound is the request's
/// size, socket.request.max.bytes, 100 MiB by default: 500 topics with their
/// configs are well under 1 MiB), but a chunk is also what settles at once,
/// and a request that times out holds back only its own topics.
pub const CHUNK: usize = 500;

/// Topic configs never copied: they name broker ids of the source cluster.
const NOT_COPIED: &[&str] = &["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"];

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

/// A topic as one cluster has it.
#[derive(Debug, Clone, PartialEq)]
struct TopicShape {
    partitions: usize,
    replication: usize,
}

/// Every topic of a cluster, as one metadata request lists them.
struct View {
    shapes: HashMap<String, TopicShape>,
    brokers: usize,
}

impl View {
    /// All topics: naming one in a metadata request can auto-create it on
    /// brokers that allow it, with the very defaults we want to avoid.
    fn fetch(admin: &Admin, cluster: &'static str) -> Result<View, TopicSyncError> {
        let md = admin.inner().fetch_metadata(None, TIMEOUT).map_err(|error| TopicSyncError::List { cluster, error })?;
        let shapes = md
            .topics()
            .iter()
            .filter(|t| t.error().is_none() && !t.partitions().is_empty())
            .map(|t| (t.name().to_string(), TopicShape { partitions: t.partitions().len(), replication: t.partitions()[0].replicas().len() }))
            .collect();
        Ok(View { shapes, brokers: md.brokers().len() })
    }
}

/// A topic's config entries: name -> (value, set on the topic itself).
type Configs = BTreeMap<String, (String, bool)>;

/// What one request did for one topic of it.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
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
    fn settled(&self) -> bool {
        !matches!(self, Outcome::Retry(_))
    }

    /// A CreateTopics answer for one topic.
    fn of_creation(answer: Option<&TopicResult>) -> Outcome {
        match answer {
            Some(Ok(_)) => Outcome::Done,
            Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Outcome::Already,
            Some(Err((_, code))) if is_transient(*code) => Outcome::Retry(TopicSyncError::Broker(*code)),
            Some(Err((_, code))) => Outcome::Refused(TopicSyncError::Broker(*code)),
            None => Outcome::Retry(TopicSyncError::NotNamed),
        }
    }

    /// A CreatePartitions answer for one topic: INVALID_PARTITIONS means
    /// someone else raised it meanwhile; anything else is tried again.
    fn of_growth(answer: Option<&TopicResult>) -> Outcome {
        match answer {
            Some(Ok(_)) => Outcome::Done,
            Some(Err((_, RDKafkaErrorCode::InvalidPartitions))) => Outcome::Already,
            Some(Err((_, code))) => Outcome::Retry(TopicSyncError::Broker(*code)),
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
fn in_chunks<T>(
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

/// Every config entry of each of `topics` on `admin`, with one
/// DescribeConfigs per [`CHUNK`] topics. Every topic gets an entry: its
/// configs, or why they could not be read.
fn configs_of(admin: &Admin, topics: &[&str]) -> HashMap<String, Result<Configs, TopicSyncError>> {
    let mut out = HashMap::with_capacity(topics.len());
    for part in topics.chunks(CHUNK) {
        let specs: Vec<ResourceSpecifier<'_>> = part.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
        debug!("DescribeConfigs: {} topics in one request", specs.len());
        match block_on(admin.describe_configs(&specs, &AdminOptions::new().request_timeout(Some(TIMEOUT)))) {
            Err(e) => out.extend(part.iter().map(|t| (t.to_string(), Err(TopicSyncError::Describe(e.clone()))))),
            Ok(answers) => {
                for resource in answers.into_iter().flatten() {
                    let OwnedResourceSpecifier::Topic(name) = resource.specifier else { continue };
                    // rdkafka 0.39 drops a resource's own error (not
                    // authorised, unknown topic): it arrives with no
                    // entries, while a topic always has some (defaults included).
                    if resource.entries.is_empty() {
                        out.insert(name, Err(TopicSyncError::NoEntries));
                        continue;
                    }
                    let entries = resource
                        .entries
                        .into_iter()
                        .filter(|e| !e.is_sensitive)
                        .filter_map(|e| Some((e.name, (e.value?, e.source == ConfigSource::DynamicTopic))))
                        .collect();
                    out.insert(name, Ok(entries));
                }
                for t in part {
                    out.entry(t.to_string()).or_insert(Err(TopicSyncError::DescribeNotNamed));
                }
            }
        }
    }
    out
}

/// A missing target topic as it is to be created.
struct Creation {
    topic: String,
    target_topic: String,
    /// The source topic's partitions and replication factor.
    shape: TopicShape,
    /// The replication factor the target topic gets: the source's (MM2:
    /// `replication.factor`), at most the target's broker count.
    rf: usize,
    /// The source topic's own configs, as copied.
    configs: Vec<(String, String)>,
}

/// The creator thread's work and who is waiting for it.
#[derive(Default)]
struct Creations {
    /// Source topics queued or being created: a pass meanwhile neither
    /// queues them again nor subscribes them.
    pending: HashSet<String>,
    /// Missing on the target: (source topic, source partitions).
    to_create: Vec<(String, usize)>,
    /// Existing on the target, whose max.message.bytes is compared with the
    /// source's: (source topic, target topic).
    to_compare: Vec<(String, String)>,
    /// The target's broker count, from the latest listing.
    brokers: usize,
    /// Whether the creator thread is at work.
    running: bool,
}

/// Longest a created chunk's topics wait for the chunks after it before
/// they are subscribed ([`Held`]).
const HOLD: Duration = Duration::from_secs(5);

/// Chunks created but not yet released to the streams. Every release moves
/// [`TopicSync::generation`], and each stream then subscribes again: a
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

/// Creates target topics like the source and adds partitions as the source
/// gains them; shared by every stream of one source cluster.
pub struct TopicSync {
    source: Admin,
    target: Admin,
    handler: Arc<Handler>,
    create: bool,
    sync_partitions: bool,
    /// MirrorMaker 2's way of creating them, in MM2 mode.
    remote: Option<Arc<RemoteTopics>>,
    /// Settled source topics and their partition count last seen.
    seen: Mutex<HashMap<String, usize>>,
    /// Topics handed to the creator thread.
    creations: Mutex<Creations>,
    /// Moves on every time the creator thread settles topics: streams
    /// then look at their subscription again without waiting for the next
    /// refresh ([`TopicSync::generation`]).
    generation: AtomicU64,
    /// The source has no topic ACLs (or no authorizer): said once, then quiet.
    source_has_no_acls: AtomicBool,
    /// Source topics whose target topic a listing of the target has shown:
    /// one missing from a later listing was deleted under us and is made
    /// again. Not marked when CreateTopics answers: the next listing may
    /// not show a topic just made yet, which looked like a deletion at
    /// every first start. Topics never made (refused, or left to the
    /// broker) are not marked, so a refusal is not asked again every refresh.
    on_target: Mutex<HashSet<String>>,
}

impl TopicSync {
    pub fn new(source: Admin, target: Admin, handler: Arc<Handler>, create: bool, sync_partitions: bool, remote: Option<Arc<RemoteTopics>>) -> TopicSync {
        TopicSync {
            source,
            target,
            handler,
            create,
            sync_partitions,
            remote,
            seen: Mutex::new(HashMap::new()),
            creations: Mutex::new(Creations::default()),
            generation: AtomicU64::new(0),
            source_has_no_acls: AtomicBool::new(false),
            on_target: Mutex::new(HashSet::new()),
        }
    }

    /// Marks the listed topics `view` shows on the target (see
    /// [`TopicSync::on_target`]); returns the settled ones it showed before
    /// and no longer does: deleted under us. They are made again like the source
    /// (still subscribed: their records wait for it in the producer), and
    /// the offset-syncs of their partitions start afresh once the new
    /// topic's first records are acknowledged (`offset_syncs`).
    fn deleted_on_target(&self, view: &View, topics: &[(String, usize)]) -> Vec<(String, usize)> {
        let pending = &self.creations.lock().unwrap().pending;
        let mut on_target = self.on_target.lock().unwrap();
        let mut gone = Vec::new();
        for (topic, partitions) in topics {
            let target_topic = self.handler.target_topic(topic);
            if view.shapes.contains_key(target_topic.as_ref()) {
                on_target.insert(topic.clone());
            } else if on_target.contains(topic) && !pending.contains(topic) {
                warn!(
                    "target topic {target_topic} is gone (deleted on the target?): made again like source topic {topic}; \
                     its records wait for it, and translations for its groups start afresh in the new topic"
                );
                on_target.remove(topic);
                gone.push((topic.clone(), *partitions));
            }
        }
        gone
    }

    /// Hands work to the creator thread; true when it is idle and must be
    /// started ([`Self::start_creator`], once `seen` is unlocked). Called
    /// with `seen` locked, so that the topics are pending before any other
    /// pass can find them neither settled nor pending.
    fn queue(&self, create: Vec<(String, usize)>, compare: Vec<(String, String)>, brokers: usize) -> bool {
        if create.is_empty() && compare.is_empty() {
            return false;
        }
        let mut c = self.creations.lock().unwrap();
        c.pending.extend(create.iter().map(|(t, _)| t.clone()));
        c.to_create.extend(create);
        c.to_compare.extend(compare);
        c.brokers = brokers;
        !std::mem::replace(&mut c.running, true)
    }

    /// Starts the creator thread. Not the stream's own: topics that exist
    /// are subscribed while the others are created.
    fn start_creator(self: &Arc<Self>) {
        let me = Arc::clone(self);
        if let Err(e) = std::thread::Builder::new().name("mirrormaker-topic-sync".into()).spawn(move || me.run_creator()) {
            warn!("cannot start the topic creation thread ({e}); creating the topics on this stream's thread instead");
            Arc::clone(self).run_creator();
        }
    }

    /// The creator thread: creates what is queued, then compares configs,
    /// until nothing is left.
    fn run_creator(self: Arc<Self>) {
        loop {
            let (create, compare, brokers) = {
                let mut c = self.creations.lock().unwrap();
                if c.to_create.is_empty() && c.to_compare.is_empty() {
                    c.running = false;
                    return;
                }
                (std::mem::take(&mut c.to_create), std::mem::take(&mut c.to_compare), c.brokers)
            };
            if !create.is_empty() {
                self.create_missing(&create, brokers);
            }
            if !compare.is_empty() {
                self.compare_max_message_bytes(&compare);
            }
        }
    }

    /// Creates the missing target topics like the source: one listing of
    /// the source, then per [`CHUNK`] topics one DescribeConfigs of the
    /// source and one CreateTopics of the target. The chunks are settled
    /// (and their topics subscribed) together once the last is answered, or
    /// every [`HOLD`] in a longer pass ([`Held`]).
    fn create_missing(&self, create: &[(String, usize)], brokers: usize) {
        let source = match View::fetch(&self.source, "source") {
            Ok(v) => v,
            Err(e) => {
                warn!(
                    "{} target topics not created yet ({}): {e}; tried again at the next topic refresh",
                    create.len(),
                    shortened(create.iter().map(|(t, _)| t.as_str()))
                );
                self.release(create.iter().map(|(t, _)| t.as_str()), &[]);
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
                match View::fetch(&self.target, "target") {
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
                self.release(held.done.iter().map(String::as_str), &held.settled);
                held = Held::default();
            }
        }
    }

    /// The creator is done with `done`: `settled` (a subset) are mirrored
    /// from now on; the others are tried again at the next topic refresh.
    /// Streams are told only when something settled, so topics that keep
    /// failing are tried once per refresh, not in a loop.
    fn release<'a>(&self, done: impl Iterator<Item = &'a str>, settled: &[(String, usize)]) {
        // Settled before they stop being pending: a pass in between must
        // not find them neither and queue them again.
        self.seen.lock().unwrap().extend(settled.iter().cloned());
        let mut c = self.creations.lock().unwrap();
        for t in done {
            c.pending.remove(t);
        }
        if !settled.is_empty() {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// One CreateTopics for `creations`.
    fn request_creation(&self, creations: &[Creation]) -> Result<Vec<TopicResult>, TopicSyncError> {
        let new: Vec<NewTopic<'_>> = creations
            .iter()
            .map(|c| {
                c.configs.iter().fold(NewTopic::new(&c.target_topic, c.shape.partitions as i32, TopicReplication::Fixed(c.rf as i32)), |n, (k, v)| n.set(k, v))
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
    fn configs_to_copy(&self, target_topic: &str, all: Configs, rf: usize) -> Vec<(String, String)> {
        let mut copied = self.own_configs(all);
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

    /// A source topic's own configs (from every entry of it), but those
    /// never copied. MM2 mode leaves out what config.properties.exclude
    /// names (MM2's own list covers the broker-id configs and min.insync.replicas).
    fn own_configs(&self, all: Configs) -> Vec<(String, String)> {
        let excluded = |k: &str| match &self.remote {
            Some(r) => r.config_exclude.matches(k),
            None => NOT_COPIED.contains(&k),
        };
        all.into_iter().filter(|(k, (_, own))| *own && !excluded(k)).map(|(k, (v, _))| (k, v)).collect()
    }

    /// MirrorMaker 2's `sync.topic.configs`: every mirrored topic's own
    /// source configs set on its target topic where they differ. Compared
    /// before anything is written, so a quiet run writes nothing; the
    /// target's own overrides of other keys are sent along unchanged (the
    /// admin call replaces a topic's whole set), so none is wiped. Per
    /// [`CHUNK`] topics: one DescribeConfigs of each cluster and one
    /// AlterConfigs for those that differ.
    pub fn sync_configs(&self) {
        let mut topics: Vec<String> = self.seen.lock().unwrap().keys().cloned().collect();
        topics.sort();
        for part in topics.chunks(CHUNK) {
            let targets: Vec<String> = part.iter().map(|t| self.handler.target_topic(t).into_owned()).collect();
            let mut source = configs_of(&self.source, &part.iter().map(String::as_str).collect::<Vec<_>>());
            let mut target = configs_of(&self.target, &targets.iter().map(String::as_str).collect::<Vec<_>>());
            // (source topic, target topic, the target's whole new set, what changed)
            let mut changes: Vec<(&str, &str, BTreeMap<String, String>, String)> = Vec::new();
            for (topic, target_topic) in part.iter().zip(&targets) {
                let missing = || Err(TopicSyncError::NotAsked);
                let (wanted, have) = match (source.remove(topic).unwrap_or_else(missing), target.remove(target_topic).unwrap_or_else(missing)) {
                    (Ok(w), Ok(t)) => (self.own_configs(w), t),
                    (Err(e), _) | (_, Err(e)) => {
                        warn!("topic {target_topic}: configs not synced this time: {e}");
                        continue;
                    }
                };
                let changed: Vec<String> = wanted.iter().filter(|(k, v)| have.get(k).map(|(tv, _)| tv) != Some(v)).map(|(k, v)| format!("{k}={v}")).collect();
                if changed.is_empty() {
                    continue;
                }
                let mut all: BTreeMap<String, String> = have.into_iter().filter(|(_, (_, own))| *own).map(|(k, (v, _))| (k, v)).collect();
                all.extend(wanted);
                changes.push((topic.as_str(), target_topic.as_str(), all, changed.join(", ")));
            }
            if changes.is_empty() {
                continue;
            }
            let alters: Vec<AlterConfig<'_>> = changes
                .iter()
                .map(|(_, target_topic, all, _)| all.iter().fold(AlterConfig::new(ResourceSpecifier::Topic(target_topic)), |a, (k, v)| a.set(k, v)))
                .collect();
            debug!("AlterConfigs: {} topics in one request", alters.len());
            let opts = AdminOptions::new().request_timeout(Some(TIMEOUT));
            let answers = block_on(self.target.alter_configs(&alters, &opts));
            let by_topic: HashMap<String, Result<(), RDKafkaErrorCode>> = match &answers {
                Ok(list) => list
                    .iter()
                    .filter_map(|a| match a {
                        Ok(OwnedResourceSpecifier::Topic(t)) => Some((t.clone(), Ok(()))),
                        Err((OwnedResourceSpecifier::Topic(t), code)) => Some((t.clone(), Err(*code))),
                        _ => None,
                    })
                    .collect(),
                Err(_) => HashMap::new(),
            };
            for (topic, target_topic, _, shown) in &changes {
                match (&answers, by_topic.get(*target_topic)) {
                    (Err(e), _) => warn!("topic {target_topic}: cannot sync configs ({shown}): {e}"),
                    (Ok(_), Some(Ok(()))) => info!("topic {target_topic}: configs synced from source topic {topic}: {shown}"),
                    (Ok(_), Some(Err(code))) => warn!("topic {target_topic}: cannot sync configs ({shown}): {code}"),
                    (Ok(_), None) => warn!("topic {target_topic}: cannot sync configs ({shown}): the answer did not name it"),
                }
            }
        }
    }

    /// MirrorMaker 2's `sync.topic.acls`: the source's literal ACLs on the
    /// topics this flow mirrors, created on their remote topics as
    /// [`remote_acl`] maps them. Nothing is ever deleted on the target;
    /// bindings it has already are not sent again. A source without an
    /// authorizer (or without topic ACLs) is said once per run, as Java
    /// says the former (KAFKA-14781).
    pub fn sync_acls(&self) {
        // librdkafka (2.12) drops DescribeAcls' top-level error, so a source
        // without an authorizer answers as one without topic ACLs: both
        // are said once per run.
        let source = match acls::describe_topic_acls(self.source.inner()) {
            Ok(b) if !b.is_empty() => b,
            Ok(_) | Err(AclError::SecurityDisabled) => {
                if !self.source_has_no_acls.swap(true, Ordering::Relaxed) {
                    info!("topic ACL sync: the source cluster lists no topic ACLs (or has no authorizer); nothing to sync");
                }
                return;
            }
            Err(e) => {
                warn!("topic ACLs not synced this time: cannot list the source's: {e}");
                return;
            }
        };
        let wanted: Vec<AclBinding> = {
            let seen = self.seen.lock().unwrap();
            let mut w: Vec<AclBinding> =
                source.iter().filter(|b| seen.contains_key(&b.name)).filter_map(|b| remote_acl(b, &self.handler.target_topic(&b.name))).collect();
            w.sort();
            w.dedup();
            w
        };
        if wanted.is_empty() {
            return;
        }
        // What the target has already is left out, so a quiet run writes
        // nothing; a target that cannot be asked gets them all (creating an
        // existing binding is harmless).
        let missing: Vec<AclBinding> = match acls::describe_topic_acls(self.target.inner()) {
            Ok(have) => wanted.into_iter().filter(|b| !have.contains(b)).collect(),
            Err(_) => wanted,
        };
        if missing.is_empty() {
            return;
        }
        // Bounded requests: thousands of topics can carry tens of thousands of bindings.
        for part in missing.chunks(CHUNK) {
            debug!("CreateAcls: {} bindings in one request", part.len());
            match acls::create_acls(self.target.inner(), part) {
                Ok(()) => {
                    for b in part {
                        info!("topic ACL synced to the target: {b}");
                    }
                }
                Err(e) => warn!("cannot sync topic ACLs to the target (tried again in the next sync): {e}"),
            }
        }
    }

    /// The source's factor in MM1 mode, `replication.factor` in MM2 mode;
    /// at most the target's broker count (Java MM2 fails the creation
    /// instead, and the broker's auto-create then makes the topic with its
    /// own partition count).
    fn replication_factor(&self, shape: &TopicShape, brokers: usize, target_topic: &str) -> usize {
        let wanted = self.remote.as_ref().map_or(shape.replication, |r| r.replication_factor.max(1) as usize);
        if self.remote.is_some() && wanted > brokers {
            warn!("target topic {target_topic}: replication.factor {wanted} is more than the target's {brokers} broker(s); created with {brokers}");
        }
        wanted.min(brokers).max(1)
    }

    /// Warns about target topics whose max.message.bytes is below their
    /// source topic's: one DescribeConfigs of each cluster per [`CHUNK`]
    /// topics. Only warnings: a topic that cannot be described is skipped.
    fn compare_max_message_bytes(&self, pairs: &[(String, String)]) {
        for part in pairs.chunks(CHUNK) {
            let source = configs_of(&self.source, &part.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>());
            let target = configs_of(&self.target, &part.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>());
            let num = |m: Option<&Result<Configs, TopicSyncError>>| m?.as_ref().ok()?.get("max.message.bytes")?.0.parse::<u64>().ok();
            for (topic, target_topic) in part {
                if let (Some(s), Some(t)) = (num(source.get(topic)), num(target.get(target_topic))) {
                    if t < s {
                        warn!(
                            "target topic {target_topic} has max.message.bytes {t}, smaller than source topic {topic}'s {s}: records larger than {t} bytes \
                             are rejected by the target; raise max.message.bytes on the target topic to at least {s}"
                        );
                    }
                }
            }
        }
    }

    /// The source topics in `grown` now have that many partitions: adds the
    /// missing ones on the target, one CreatePartitions per [`CHUNK`]
    /// topics. Returns the topics settled (grown, or with nothing to do)
    /// with their new counts; the others are tried again at the next refresh.
    fn grow(&self, view: &View, grown: &[(String, usize)]) -> Vec<(String, usize)> {
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

/// What the streams' control threads ask of their flow's topic sync.
impl TargetTopics for TopicSync {
    fn source_topics(&self) -> Result<Vec<(String, usize)>, KafkaError> {
        self.source.inner().fetch_metadata(None, TIMEOUT).map(|md| topic_counts(&md))
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Called with the matching source topics and their partition counts on
    /// every topic refresh, before subscribing. Cheap when nothing changed;
    /// otherwise one metadata request of the target, and for grown topics
    /// one CreatePartitions per [`CHUNK`]. Returns the topics not to
    /// subscribe to yet: those being created by the creator thread (they
    /// follow when [`TargetTopics::generation`] moves), and those the target could
    /// not be asked about (subscribing now would let the producer's first
    /// record make the broker auto-create them); and, when the target could
    /// not be listed, why (see [`Reconciled`]).
    fn reconcile(self: Arc<Self>, topics: &[(String, usize)]) -> Reconciled {
        // One stream at a time: the others find the work done.
        let mut seen = self.seen.lock().unwrap();
        let (fresh, grown): (Counts, Counts) = {
            let pending = &self.creations.lock().unwrap().pending;
            let fresh = topics.iter().filter(|(t, _)| !seen.contains_key(t) && !pending.contains(t)).cloned().collect();
            let grown = topics.iter().filter(|(t, n)| seen.get(t).is_some_and(|before| n > before)).cloned().collect();
            (fresh, grown)
        };
        let mut grow = grown;
        let mut start = false;
        let mut target_unanswered = None;
        if !self.sync_partitions {
            seen.extend(grow.drain(..));
        }
        // With creation on, the target is listed at every refresh, so that
        // a target topic deleted under us is made again like the source.
        if !fresh.is_empty() || !grow.is_empty() || self.create {
            match View::fetch(&self.target, "target") {
                Err(e) => {
                    // One line per topic for a few (as before batching),
                    // one line for the rest of many.
                    for (t, _) in fresh.iter().take(10) {
                        warn!("topic {t}: {e}; not mirrored until the target answers (looked at again every topic refresh)");
                    }
                    if fresh.len() > 10 {
                        warn!(
                            "{} more new source topics ({}): {e}; not mirrored until the target answers (looked at again every topic refresh)",
                            fresh.len() - 10,
                            shortened(fresh.iter().skip(10).map(|(t, _)| t.as_str()))
                        );
                    }
                    if !grow.is_empty() {
                        warn!("{} grown source topics: {e}; their target partitions are checked again at the next topic refresh", grow.len());
                    }
                    target_unanswered = Some(e.to_string());
                }
                Ok(view) => {
                    let mut to_create = self.deleted_on_target(&view, topics);
                    let mut to_compare = Vec::new();
                    for (topic, partitions) in fresh {
                        let target_topic = self.handler.target_topic(&topic).into_owned();
                        match view.shapes.get(&target_topic) {
                            Some(shape) => {
                                report_fewer_partitions(&topic, &target_topic, partitions, shape);
                                to_compare.push((topic.clone(), target_topic));
                                seen.insert(topic, partitions);
                            }
                            None if !self.create => {
                                seen.insert(topic, partitions);
                            }
                            None => to_create.push((topic, partitions)),
                        }
                    }
                    seen.extend(self.grow(&view, &grow));
                    start = self.queue(to_create, to_compare, view.brokers);
                }
            }
        }
        let deferred = topics.iter().filter(|(t, _)| !seen.contains_key(t)).map(|(t, _)| t.clone()).collect();
        // The creator locks `seen` to settle topics.
        drop(seen);
        if start {
            self.start_creator();
        }
        Reconciled { deferred, target_unanswered }
    }
}

/// Warns when a target topic has fewer partitions than its source topic.
fn report_fewer_partitions(topic: &str, target_topic: &str, source_partitions: usize, target: &TopicShape) {
    if target.partitions < source_partitions {
        warn!(
            "target topic {target_topic} has {} partitions, source topic {topic} has {source_partitions}: keyed records are spread over fewer partitions \
             (and partition-preserving cannot work); it is left as it is (add partitions on the target to match)",
            target.partitions
        );
    }
}

/// A source topic ACL as MirrorMaker 2 copies it to `remote` (the remote
/// topic's name), or None when it is not copied: only LITERAL ones, never
/// `ALLOW WRITE` (only the mirror writes remote topics); `ALLOW ALL`
/// becomes `ALLOW READ`; DENY entries, principal and host unchanged
/// (`MirrorSourceConnector.shouldReplicateAcl`, `targetAclBinding`).
pub fn remote_acl(b: &AclBinding, remote: &str) -> Option<AclBinding> {
    if b.pattern != Pattern::Literal || (b.permission == Permission::Allow && b.operation == Operation::Write) {
        return None;
    }
    let operation = if b.permission == Permission::Allow && b.operation == Operation::All { Operation::Read } else { b.operation };
    Some(AclBinding { name: remote.to_string(), pattern: Pattern::Literal, operation, ..b.clone() })
}

#[cfg(test)]
mod tests {
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

    fn acl(name: &str, pattern: Pattern, principal: &str, permission: Permission, operation: Operation) -> AclBinding {
        AclBinding { name: name.into(), pattern, principal: principal.into(), host: "*".into(), operation, permission }
    }

    #[test]
    fn topic_acls_map_as_mm2_maps_them() {
        use Operation::*;
        use Permission::*;
        let lit = |p: &str, perm, op| acl("orders", Pattern::Literal, p, perm, op);
        let remote = |p: &str, perm, op| Some(acl("A.orders", Pattern::Literal, p, perm, op));
        assert_eq!(remote_acl(&lit("User:alice", Allow, Read), "A.orders"), remote("User:alice", Allow, Read));
        assert_eq!(remote_acl(&lit("User:bob", Allow, All), "A.orders"), remote("User:bob", Allow, Read), "ALLOW ALL is downgraded to READ");
        assert_eq!(remote_acl(&lit("User:carol", Allow, Write), "A.orders"), None, "only the mirror writes remote topics");
        assert_eq!(remote_acl(&lit("User:dave", Deny, Read), "A.orders"), remote("User:dave", Deny, Read));
        assert_eq!(remote_acl(&lit("User:erin", Deny, Write), "A.orders"), remote("User:erin", Deny, Write), "DENY entries are copied as they are");
        assert_eq!(remote_acl(&lit("User:fay", Deny, All), "A.orders"), remote("User:fay", Deny, All));
        assert_eq!(remote_acl(&lit("User:gus", Allow, Describe), "A.orders"), remote("User:gus", Allow, Describe));
        assert_eq!(remote_acl(&acl("ord", Pattern::Prefixed, "User:h", Allow, Read), "A.ord"), None, "prefixed bindings are not copied");
        let mut hosted = lit("User:ian", Allow, Read);
        hosted.host = "10.0.0.1".into();
        assert_eq!(remote_acl(&hosted, "A.orders").map(|b| b.host), Some("10.0.0.1".to_string()));
    }
}
