//! Target topics created like the source, and kept with as many partitions.
//!
//! MM1 left topic creation to the target broker's auto-create, so mirrored
//! topics got the broker's default partition count and none of the source's
//! settings. Here, the first time a consumer stream's topic refresh sees a
//! matching source topic, and before it subscribes to it (so before any of
//! its records reach a producer, and before the producer could make the
//! broker auto-create it), [`TargetTopics::reconcile`] creates the topic on the
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
//! pass ([`TargetTopics::generation`]; every change of a subscription is a
//! group rebalance, see `Held` in `create`). A topic the target refuses
//! for a reason that may pass (a timeout, a busy controller) is logged with
//! the reason and tried again at the next refresh; it holds back no other.
//! Grown topics get one CreatePartitions per chunk, and MM2's config sync
//! one DescribeConfigs per cluster and one AlterConfigs per chunk.
//!
//! The parts: `link` (the two clusters and a listing of one), `create`
//! (creation in chunks, each topic judged by its own answer), `grow`
//! (added partitions), `configs` (config reading, copying and MM2's
//! config sync), `acls` (MM2's topic ACL sync) and `error`; here, the
//! bookkeeping that ties them to the streams: what is settled, what is
//! being created, what the target had, and the generation the streams
//! watch ([`TargetTopics`]).

mod acls;
mod configs;
mod create;
mod error;
mod grow;
mod link;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use log::warn;
use rdkafka::error::KafkaError;

pub use acls::remote_acl;
pub use link::CHUNK;
use link::{report_fewer_partitions, Link, View, TIMEOUT};

use crate::engine::pipeline::stream::topic_hook::{shortened, Reconciled, TargetTopics};
use crate::kafka::admin::{topic_counts, Admin, Counts};
use crate::plan::handler::Handler;
use crate::plan::RemoteTopics;

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

/// Creates target topics like the source and adds partitions as the source
/// gains them; shared by every stream of one source cluster.
pub struct TopicSync {
    /// The two clusters, the naming and MM2's creation settings: what the
    /// `create`, `grow`, `configs` and `acls` parts work on.
    link: Link,
    create: bool,
    sync_partitions: bool,
    /// Settled source topics and their partition count last seen.
    seen: Mutex<HashMap<String, usize>>,
    /// Topics handed to the creator thread.
    creations: Mutex<Creations>,
    /// Moves on every time the creator thread settles topics: streams
    /// then look at their subscription again without waiting for the next
    /// refresh ([`TargetTopics::generation`]).
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
    /// `via`: which settings the source's and the target's admin clients
    /// were made with, for the warnings of a listing they could not make.
    pub fn new(
        (source, target): (Admin, Admin),
        via: (String, String),
        handler: Arc<Handler>,
        create: bool,
        sync_partitions: bool,
        remote: Option<Arc<RemoteTopics>>,
    ) -> TopicSync {
        TopicSync {
            link: Link { source, target, source_via: via.0, target_via: via.1, handler, remote },
            create,
            sync_partitions,
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
            let target_topic = self.link.handler.target_topic(topic);
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
                self.link.create_missing(&create, brokers, |done, settled| self.release(done, settled));
            }
            if !compare.is_empty() {
                self.link.compare_max_message_bytes(&compare);
            }
        }
    }

    /// The creator is done with `done`: `settled` (a subset) are mirrored
    /// from now on; the others are tried again at the next topic refresh.
    /// Streams are told only when something settled, so topics that keep
    /// failing are tried once per refresh, not in a loop.
    fn release(&self, done: &[String], settled: &[(String, usize)]) {
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

    /// MirrorMaker 2's `sync.topic.configs` for the topics settled so far
    /// (see `configs`).
    pub fn sync_configs(&self) {
        // Copied first: `seen` is not held while the clusters are asked.
        let topics: Vec<String> = self.seen.lock().unwrap().keys().cloned().collect();
        self.link.sync_configs(topics);
    }

    /// MirrorMaker 2's `sync.topic.acls` for the topics settled so far (see `acls`).
    pub fn sync_acls(&self) {
        self.link.sync_acls(&self.seen, &self.source_has_no_acls);
    }
}

/// What the streams' control threads ask of their flow's topic sync.
impl TargetTopics for TopicSync {
    fn source_topics(&self) -> Result<Vec<(String, usize)>, KafkaError> {
        self.link.source.inner().fetch_metadata(None, TIMEOUT).map(|md| topic_counts(&md))
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
            match View::fetch(&self.link.target, "target", &self.link.target_via) {
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
                        let target_topic = self.link.handler.target_topic(&topic).into_owned();
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
                    seen.extend(self.link.grow(&view, &grow));
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
