//! A flow's consumer-failover side: the writer of its offset-syncs, its
//! checkpoints of the source's consumer groups, and (when asked) those
//! groups' offsets committed on the target, all in MirrorMaker 2's formats
//! and topics so Java's `RemoteClusterUtils`, `MirrorClient` and checkpoint
//! connector read them as they read Java MM2's.
//!
//! Two threads per flow:
//! - the sync writer sends the syncs `offset_syncs` makes from delivery
//!   reports to the syncs topic, writes every partition's latest mapping
//!   at each commit interval and when a partition goes idle, and at the
//!   stop, once the producer workers are done, the last ones;
//! - when checkpoints are made (else there is no second thread), the
//!   checkpointer reads the syncs topic once to its end (until then
//!   nothing is translated, as Java), then the checkpoints topic (so no
//!   checkpoint goes back across a restart), then every interval
//!   translates the committed offsets of the source's groups it knows and
//!   writes the checkpoints that moved forward (or back after the group
//!   rewound); it knows the groups of its last listing, made at the start
//!   and again every `refresh.groups.interval.seconds` ([`known_groups`]);
//! - with `sync.group.offsets.enabled`, the same thread commits the
//!   checkpoints to each group on the target that has no active member,
//!   never moving a partition back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use log::{debug, info, warn};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

use crate::engine::mm2::offset_syncs::{FlowSyncs, Outgoing, SyncStore, FOLLOWS_HEADER, IDLE_AFTER};
use crate::formats::{Checkpoint, OffsetSync};
use crate::kafka::admin::create_compacted;
use crate::kafka::groups::{self, GroupError, GroupOffset};
use crate::ops::metrics::{CheckpointSent, Metrics};
use crate::ops::shutdown::Shutdown;
use crate::plan::handler::Handler;
use crate::plan::{Checkpointing, Flow};

mod known_groups;
mod read_back;

use known_groups::KnownGroups;
use read_back::{read_to_end, Reader};

/// How long a read of an internal topic to its end may go without progress.
const READ_PATIENCE: Duration = Duration::from_secs(120);

/// What a flow's sync writer hands the engine.
pub struct Started {
    /// For the flow's streams: each partition's sync state.
    pub syncs: Arc<FlowSyncs>,
    pub thread: JoinHandle<()>,
    /// Set once the producer workers are done: the writer then writes the
    /// last mappings and ends.
    pub workers_done: Arc<AtomicBool>,
}

/// Starts the flow's sync writer. It runs on every node of a mirror: each
/// writes the syncs of the partitions it copies.
pub fn start_writer(spec: &Arc<Checkpointing>, commit_interval: Duration, shutdown: &Arc<Shutdown>) -> std::io::Result<Started> {
    let (tx, rx) = FlowSyncs::queue();
    // The checkpoints are made from the syncs topic, read by the node that
    // leads them, so that every node's syncs count; this node's own store
    // is kept only when no syncs are written (then one node's partitions
    // are all that translate).
    let local = spec.checkpoints.is_some() && !spec.write_syncs;
    let syncs = FlowSyncs::new(spec.lag_max, spec.write_syncs.then_some(tx), local);
    let workers_done = Arc::new(AtomicBool::new(false));
    let name = format!("{}->{}", spec.source_alias, spec.target_alias);
    let (flow_syncs, spec, done, shutdown) = (syncs.clone(), spec.clone(), workers_done.clone(), shutdown.clone());
    let config = spec.syncs_cluster.client_config();
    let thread = std::thread::Builder::new()
        .name(format!("mirrormaker-offset-syncs-{name}"))
        .spawn(move || write_syncs(&name, &config, &spec, &flow_syncs, rx, commit_interval, &done, &shutdown))?;
    Ok(Started { syncs, thread, workers_done })
}

/// What the checkpointer of a flow needs, made once; a node that leads
/// the flow's side tasks starts one per term ([`Self::spawn`]).
#[derive(Clone)]
pub struct CheckpointerSetup {
    name: String,
    spec: Arc<Checkpointing>,
    /// This node's own store, when no syncs are written to the topic.
    local: Option<Arc<SyncStore>>,
    /// Admin settings of the source (its groups and their offsets).
    source: ClientConfig,
    /// The target producer's settings: the checkpoints are written and read back with them.
    target: ClientConfig,
    /// Admin settings of the target (the checkpoints topic, group offsets synced there).
    target_admin: ClientConfig,
    naming: Arc<Handler>,
    filter: Arc<crate::plan::filter::TopicFilter>,
    own_group: Option<String>,
    metrics: Arc<Metrics>,
}

impl CheckpointerSetup {
    /// None when the flow makes no checkpoints.
    pub fn new(flow: &Flow, spec: &Arc<Checkpointing>, syncs: &FlowSyncs, metrics: &Arc<Metrics>) -> Option<CheckpointerSetup> {
        // Checkpoints of topics another flow copies are made from the
        // syncs that flow writes, read from the topic.
        let apart = spec.checkpoints.as_ref()?.topics.clone();
        Some(CheckpointerSetup {
            name: format!("{}->{}", spec.source_alias, spec.target_alias),
            spec: spec.clone(),
            local: (!spec.write_syncs && apart.is_none()).then(|| syncs.store.clone()),
            source: flow.source_admin_config(),
            target: flow.target.settings.client_config(),
            target_admin: flow.target.admin_config(),
            naming: flow.naming.clone(),
            filter: apart.unwrap_or_else(|| flow.filter.clone()),
            own_group: flow.source.group_id.clone(),
            metrics: metrics.clone(),
        })
    }

    /// Starts a checkpointer that runs until `shutdown` stops (the end of
    /// the term, or of the process).
    pub fn spawn(&self, shutdown: Arc<Shutdown>) -> std::io::Result<JoinHandle<()>> {
        let (store, tail) = match &self.local {
            Some(local) => (local.clone(), false),
            None => (Arc::new(SyncStore::default()), true),
        };
        let checkpointer = Checkpointer { setup: self.clone(), store, tail, shutdown };
        std::thread::Builder::new().name(format!("mirrormaker-checkpoints-{}", self.name)).spawn(move || checkpointer.run())
    }
}

/// The sync writer's loop (see the module doc).
#[allow(clippy::too_many_arguments)]
fn write_syncs(
    name: &str,
    config: &ClientConfig,
    spec: &Checkpointing,
    syncs: &FlowSyncs,
    rx: crossbeam_channel::Receiver<Outgoing>,
    commit_interval: Duration,
    workers_done: &AtomicBool,
    shutdown: &Shutdown,
) {
    let producer: Option<BaseProducer> = if spec.write_syncs {
        // Made before the first sync goes out, so a broker that creates
        // topics on first use never makes it uncompacted with its defaults.
        // By an admin client of the syncs' cluster, as Java's source
        // connector makes it (`offsetSyncsTopicAdminConfig`).
        create_compacted(&spec.syncs_admin_config(), &spec.syncs_topic, spec.syncs_replication_factor);
        match config.create() {
            Ok(p) => Some(p),
            Err(e) => {
                warn!("[{name}] offset-syncs are kept in memory only: cannot create their producer: {e}");
                None
            }
        }
    } else {
        None
    };
    let send = |out: Outgoing| {
        let Some(p) = &producer else { return };
        let s = out.sync;
        let Ok(key) = s.encode_key() else {
            warn!("[{name}] no offset-sync for topic {}: its name is longer than MirrorMaker 2's format allows", s.topic);
            return;
        };
        let value = s.encode_value();
        // Java sends to partition 0 explicitly; only partition 0 is read back.
        let follows = out.follows.map(|(up, down)| format!("{up},{down}"));
        let mut record = BaseRecord::to(&spec.syncs_topic).partition(0).key(&key[..]).payload(&value[..]);
        if let Some(f) = &follows {
            record = record.headers(OwnedHeaders::new().insert(Header { key: FOLLOWS_HEADER, value: Some(f.as_bytes()) }));
        }
        if let Err((e, _)) = p.send(record) {
            debug!("[{name}] offset-sync not sent ({e}); the next one for the partition supersedes it");
        }
    };
    let (mut next_commit, mut next_idle) = (Instant::now() + commit_interval, Instant::now() + IDLE_AFTER);
    let mut written = 0u64;
    loop {
        let finishing = shutdown.stopping() && (workers_done.load(Ordering::SeqCst) || shutdown.deadline_passed());
        if finishing {
            syncs.flush(false);
        } else if Instant::now() >= next_commit {
            syncs.flush(false);
            next_commit = Instant::now() + commit_interval;
        } else if Instant::now() >= next_idle {
            syncs.flush(true);
            next_idle = Instant::now() + IDLE_AFTER;
        }
        for s in rx.try_iter() {
            send(s);
            written += 1;
        }
        if let Some(p) = &producer {
            p.poll(Duration::ZERO);
        }
        if finishing {
            break;
        }
        if let Ok(s) = rx.recv_timeout(Duration::from_millis(100)) {
            send(s);
            written += 1;
        }
    }
    if let Some(p) = &producer {
        // Syncs only sharpen translation: what is not out in a few seconds is let go.
        let _ = p.flush(Duration::from_secs(5));
    }
    let dropped = syncs.dropped.load(Ordering::Relaxed);
    info!(
        "[{name}] {written} offset-syncs written to {}{}",
        spec.syncs_topic,
        if dropped > 0 { format!(", {dropped} dropped (queue full)") } else { String::new() }
    );
}

/// (group, target topic, partition).
type GroupPartition = (String, String, i32);

/// The latest checkpoint of each (group, target topic, partition): what
/// One round of checkpoints (`Checkpointer::emit`).
struct Round {
    sent: Vec<CheckpointSent>,
    /// Groups whose offsets were read this round.
    read: Vec<String>,
    /// Every listed group's offsets were read.
    complete: bool,
}

/// is written again only when it moves forward, or back after the group
/// rewound on the source, or after the target partition's log went back.
#[derive(Default)]
pub struct CheckpointStore {
    /// (upstream, downstream, metadata, the sync store's epoch of the
    /// partition when it was made: 0 for those read back).
    last: HashMap<GroupPartition, (i64, i64, String, u64)>,
    /// The epoch of the checkpoint last committed to each (group, target
    /// topic, partition) on the target by the group sync.
    synced: HashMap<GroupPartition, u64>,
}

impl CheckpointStore {
    /// Java's `checkpointIsMoreRecent`, and one more case: a checkpoint made
    /// after the partition's target log went back (`epoch`, see
    /// [`SyncStore::epoch`]) may go back, once per new log: the one before
    /// points into offsets that now hold later records (issue #26 item 3).
    fn is_more_recent(&self, c: &Checkpoint, epoch: u64) -> bool {
        match self.last.get(&(c.group.clone(), c.topic.clone(), c.partition)) {
            None => true,
            Some(&(up, down, _, made_in)) => {
                let new_log = made_in != epoch && c.downstream_offset < down;
                if new_log {
                    info!(
                        "checkpoint of group {} on {}-{} goes back from {down} to {}: the target partition's log went back (the topic deleted and made again)",
                        c.group, c.topic, c.partition, c.downstream_offset
                    );
                }
                new_log || c.upstream_offset < up || c.downstream_offset > down
            }
        }
    }

    fn put(&mut self, c: &Checkpoint, epoch: u64) {
        self.last.insert((c.group.clone(), c.topic.clone(), c.partition), (c.upstream_offset, c.downstream_offset, c.metadata.clone(), epoch));
    }

    /// Forgets every group `keep` refuses; gives how many were forgotten.
    fn retain_groups(&mut self, keep: impl Fn(&str) -> bool) -> usize {
        let mut gone = std::collections::HashSet::new();
        self.last.retain(|(g, _, _), _| {
            let kept = keep(g);
            if !kept {
                gone.insert(g.clone());
            }
            kept
        });
        self.synced.retain(|(g, _, _), _| !gone.contains(g));
        gone.len()
    }

    /// Forgets the checkpoints of `group` on partitions `held` refuses
    /// (checkpoint topic, partition): those the group holds no offset of
    /// any more on the source (its topic deleted there, or its offsets
    /// deleted), which would otherwise be committed to the target again
    /// each sync and kept for the life of the process. As Java, whose
    /// task keeps only each group's checkpoints of its latest round.
    fn retain_for_group(&mut self, group: &str, held: impl Fn(&str, i32) -> bool) {
        self.last.retain(|(g, t, p), _| g != group || held(t, *p));
        self.synced.retain(|(g, t, p), _| g != group || held(t, *p));
    }

    /// Groups with checkpoints, each with its latest per partition and
    /// whether the group sync may move that partition back on the target:
    /// it committed a checkpoint of an earlier target log there, which
    /// points into offsets that now hold later records.
    fn groups(&self) -> HashMap<String, Vec<(GroupOffset, bool)>> {
        let mut by: HashMap<String, Vec<(GroupOffset, bool)>> = HashMap::new();
        for (key @ (g, t, p), (_, down, meta, epoch)) in &self.last {
            let back = self.synced.get(key).is_some_and(|synced| synced != epoch);
            by.entry(g.clone()).or_default().push((GroupOffset { topic: t.clone(), partition: *p, offset: *down, metadata: meta.clone() }, back));
        }
        by
    }

    /// The group sync committed `group`'s checkpoints of `offsets` (or
    /// found them there): remembered with their epochs.
    fn synced(&mut self, group: &str, offsets: &[GroupOffset]) {
        for o in offsets {
            let key = (group.to_string(), o.topic.clone(), o.partition);
            if let Some(&(_, _, _, epoch)) = self.last.get(&key) {
                self.synced.insert(key, epoch);
            }
        }
    }
}

/// The checkpoints due for one group's committed offsets on the source:
/// only topics the flow mirrors, only partitions with a sync, only those
/// that moved (see [`CheckpointStore::is_more_recent`]).
pub fn due(
    group: &str,
    committed: &[GroupOffset],
    mirrored: impl Fn(&str) -> Option<String>,
    store: &SyncStore,
    last: &CheckpointStore,
) -> Vec<(Checkpoint, u64)> {
    let mut out = Vec::new();
    for o in committed {
        let Some(topic) = mirrored(&o.topic) else { continue };
        let Some(down) = store.translate(&o.topic, o.partition, o.offset).filter(|d| *d >= 0) else { continue };
        let c = Checkpoint {
            group: group.to_string(),
            topic,
            partition: o.partition,
            upstream_offset: o.offset,
            downstream_offset: down,
            metadata: o.metadata.clone(),
        };
        let epoch = store.epoch(&o.topic, o.partition);
        if last.is_more_recent(&c, epoch) {
            out.push((c, epoch));
        }
    }
    out
}

/// The translated offsets worth committing to a group on the target:
/// those of partitions it has no offset for, or an older one. A group is
/// never moved back, except where `back` says the offset there is one the
/// group sync committed in an earlier target log (the topic deleted and
/// made again): that one points at later records, and is moved back once.
pub fn forward_only(translated: &[(GroupOffset, bool)], on_target: &[GroupOffset]) -> Vec<GroupOffset> {
    let now: HashMap<(&str, i32), i64> = on_target.iter().map(|o| ((o.topic.as_str(), o.partition), o.offset)).collect();
    translated
        .iter()
        .filter(|(o, back)| now.get(&(o.topic.as_str(), o.partition)).is_none_or(|&at| at < o.offset || (*back && at != o.offset)))
        .map(|(o, _)| o.clone())
        .collect()
}

/// The group whose committed offset on the syncs topic says where a
/// restart starts reading it (see [`SyncStore::resume_point`]).
pub fn resume_group(syncs_topic: &str) -> String {
    format!("mirror-maker.restart-point.{syncs_topic}")
}

struct Checkpointer {
    /// Its `source` and `target` are the connection settings of the source
    /// (its groups) and the target; `own_group` the group this mirror
    /// commits its own progress under: not a consumer to fail over.
    setup: CheckpointerSetup,
    store: Arc<SyncStore>,
    /// The store is made from the syncs topic alone, read again before
    /// each round (every node's syncs); else it is this node's own.
    tail: bool,
    shutdown: Arc<Shutdown>,
}

impl Checkpointer {
    fn run(self) {
        let name = &self.setup.name;
        let Some(cp) = &self.setup.spec.checkpoints else { return };
        // First, as Java's checkpoint connector does: tools that list the
        // checkpoints topics (`MirrorClient.checkpointTopics`) find it from
        // the start, and a broker that creates topics on first use never
        // makes it uncompacted.
        create_compacted(&self.setup.target_admin, &cp.topic, cp.replication_factor);
        let syncs_admin = match groups::admin_consumer(&self.setup.spec.syncs_admin_config()) {
            Ok(c) => c,
            Err(e) => {
                warn!("[{name}] no checkpoints: cannot create a client of the offset-syncs cluster: {e}");
                return;
            }
        };
        let resume_group = resume_group(&self.setup.spec.syncs_topic);
        // Where the last run said the syncs still needed begin; else the start.
        let mut resumed_at = groups::group_offsets(syncs_admin.client(), &resume_group)
            .ok()
            .and_then(|o| o.into_iter().find(|o| o.topic == self.setup.spec.syncs_topic && o.partition == 0).map(|o| o.offset));
        // Never translate before every sync written so far is known (Java's KAFKA-13659).
        // A later term of this node with its own store has them already.
        let mut next_sync_at = resumed_at;
        let syncs_topic = &self.setup.spec.syncs_topic;
        let syncs = match Reader::new(&self.setup.spec.syncs_cluster.client_config(), syncs_topic) {
            Ok(r) => r,
            Err(e) => {
                warn!("[{name}] no checkpoints: {e}");
                return;
            }
        };
        while self.tail || !self.store.is_loaded() {
            match syncs.read_to_end(syncs_topic, resumed_at, READ_PATIENCE, &|| self.shutdown.stopping()) {
                Ok(records) => {
                    let from = resumed_at.map_or("its start".to_string(), |o| format!("offset {o}, where the last run left the syncs still needed"));
                    info!("[{name}] {} offset-syncs read from {} (from {from})", records.len(), self.setup.spec.syncs_topic);
                    self.load(records, &mut next_sync_at);
                    break;
                }
                Err(e) => warn!("[{name}] {e}; no checkpoint until it is read, trying again"),
            }
            if self.wait(Duration::from_secs(5)) {
                return;
            }
        }
        let mut last = CheckpointStore::default();
        let mut read_back = 0;
        match read_to_end(&self.setup.target, &cp.topic, None, READ_PATIENCE, &|| self.shutdown.stopping()) {
            Ok(records) => {
                // Only groups the filter takes now: one excluded since (or one of ours) is never synced again.
                for c in records.iter().filter_map(|r| Checkpoint::decode(&r.key, &r.value).ok()).filter(|c| self.is_consumer(&cp.groups, &c.group)) {
                    last.put(&c, 0);
                    read_back += 1;
                }
            }
            Err(e) => warn!("[{name}] {e}; checkpoints start afresh"),
        }
        let producer: BaseProducer = match self.setup.target.create() {
            Ok(p) => p,
            Err(e) => {
                warn!("[{name}] no checkpoints: cannot create their producer: {e}");
                return;
            }
        };
        let (Ok(source), Ok(target)) = (groups::admin_consumer(&self.setup.source), groups::admin_consumer(&self.setup.target_admin)) else {
            warn!("[{name}] no checkpoints: cannot create the admin clients");
            return;
        };
        info!(
            "[{name}] checkpoints to {} every {:?} ({read_back} read back); the source's groups listed {}{}",
            cp.topic,
            cp.interval,
            cp.refresh_groups.map_or("at the start only (refresh.groups.enabled = false)".to_string(), |d| format!("at the start and every {d:?}")),
            cp.sync_group_offsets.map_or(String::new(), |d| format!("; group offsets synced to the target every {d:?}"))
        );
        let mut next_sync = cp.sync_group_offsets.map(|d| Instant::now() + d);
        let mut known = KnownGroups::new(cp.refresh_groups);
        loop {
            if self.wait(cp.interval) {
                return;
            }
            if self.tail {
                // The syncs every node wrote since the last round.
                match syncs.read_to_end(syncs_topic, next_sync_at, READ_PATIENCE, &|| self.shutdown.stopping()) {
                    Ok(records) => self.load(records, &mut next_sync_at),
                    Err(e) => warn!("[{name}] {e}; checkpoints this round from the syncs read so far"),
                }
            }
            self.check_target_logs(&target);
            let mut oldest = HashMap::new();
            let listing = known.refresh(
                Instant::now(),
                || Ok(groups::list_groups(source.client())?.into_iter().map(|g| g.group).filter(|g| self.is_consumer(&cp.groups, g)).collect()),
                |g| groups::group_offsets(source.client(), g),
                |t| self.mirrored(t).is_some(),
            );
            match listing {
                None => {}
                Some(Err(e)) => warn!("[{name}] cannot list the source's consumer groups: {e}; trying again at the next round"),
                Some(Ok(change)) => {
                    if change.first {
                        info!("[{name}] {} consumer group(s) of the source hold offsets of mirrored topics: checkpointed", change.found);
                    } else if change.new > 0 || change.gone > 0 {
                        info!(
                            "[{name}] {} consumer group(s) of the source hold offsets of mirrored topics: {} new, {} gone (of {} before)",
                            change.found,
                            change.new,
                            change.gone,
                            change.found + change.gone - change.new
                        );
                    }
                    // A group no longer listed (deleted on the source, excluded
                    // since, or holding no offset of a mirrored topic) is
                    // forgotten: no more checkpoints of it in memory, no more
                    // commits of them to the target. A failed listing says
                    // nothing about any group, so nothing is forgotten then.
                    let listed: std::collections::HashSet<&str> = known.groups().unwrap_or_default().iter().map(String::as_str).collect();
                    let forgotten = last.retain_groups(|g| listed.contains(g));
                    self.setup.metrics.retain_checkpointed_groups(name, |g| listed.contains(g));
                    if forgotten > 0 {
                        info!("[{name}] {forgotten} group(s) with checkpoints no longer listed on the source (or no longer taken by the groups filter): forgotten, no longer synced");
                    }
                }
            }
            let Round { sent, read, complete } = self.emit(source.client(), &producer, &cp.topic, known.groups().unwrap_or_default(), &mut last, &mut oldest);
            let written = sent.len();
            match producer.flush(Duration::from_secs(10)) {
                // MirrorMaker 2's checkpoint-latency-ms: from the checkpoint's
                // timestamp to the target's acknowledgement (here: the flush
                // that waited for every one of the round's).
                Ok(()) => {
                    let spec = &self.setup.spec;
                    let now = crate::ops::metrics::now_ms();
                    self.setup.metrics.checkpoints_acked(&spec.source_alias, &spec.target_alias, &sent, now);
                    self.setup.metrics.groups_checkpointed(name, cp.interval, &read, now);
                }
                Err(e) => warn!("[{name}] checkpoints not all written: {e}"),
            }
            if written > 0 {
                debug!("[{name}] {written} checkpoints written");
            }
            // A restart reads the syncs topic from here, not from its start.
            // Only from a round that read every known group's offsets: a
            // group left out (no listing yet, its offsets not read, the stop
            // cutting the round short) would not hold the point back, and a
            // restart could read the syncs it stands at no more.
            let counted = complete && known.groups().is_some();
            if let Some(point) = self.store.resume_point(&oldest).filter(|p| counted && resumed_at.is_none_or(|r| *p > r)) {
                let at = GroupOffset { topic: self.setup.spec.syncs_topic.clone(), partition: 0, offset: point, metadata: String::new() };
                match groups::alter_group_offsets(syncs_admin.client(), &resume_group, &[at]) {
                    Ok(()) => resumed_at = Some(point),
                    Err(e) => debug!("[{name}] restart point of {} not saved: {e}", self.setup.spec.syncs_topic),
                }
            }
            if let (Some(at), Some(every)) = (next_sync, cp.sync_group_offsets) {
                // Until a listing has succeeded, the checkpoints read back may
                // name groups deleted since, so none is synced.
                if Instant::now() >= at && known.groups().is_some() {
                    self.sync_groups(target.client(), &mut last);
                    next_sync = Some(Instant::now() + every);
                }
            }
        }
    }

    /// Puts syncs read from the topic into the store; `next` becomes the
    /// offset after the last one read.
    fn load(&self, records: Vec<read_back::Read>, next: &mut Option<i64>) {
        if let Some(last) = records.last() {
            *next = Some(last.at + 1);
        }
        let syncs = records.into_iter().filter_map(|r| Some((OffsetSync::decode(&r.key, &r.value).ok()?, r.at, r.follows)));
        if self.tail {
            self.store.tailed(syncs);
        } else {
            self.store.loaded(syncs.map(|(sync, at, _)| (sync, at)));
        }
    }

    /// Sleeps up to `d`; true when asked to stop.
    fn wait(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        while Instant::now() < until {
            if self.shutdown.stopping() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100).min(until - Instant::now()));
        }
        self.shutdown.stopping()
    }

    /// The name a checkpoint gives a source topic, or None for a topic the flow does not mirror.
    fn mirrored(&self, topic: &str) -> Option<String> {
        if !self.setup.filter.matches(topic) {
            return None;
        }
        Some(match &*self.setup.naming {
            Handler::Remote { policy, source_alias } => policy.checkpoint_topic(source_alias, &self.setup.spec.target_alias, topic),
            other => other.target_topic(topic).to_string(),
        })
    }

    /// Finds target partitions whose end is at or below their newest
    /// sync's downstream offset: the record it names is gone, so the topic
    /// was deleted and made again (or truncated) and no record of the new
    /// log was acknowledged here yet (that would have told the store). Their
    /// syncs start afresh from the new log's start (issue #26 item 3). Two
    /// batched ListOffsets per round; a failed one waits for the next round.
    fn check_target_logs(&self, target: &BaseConsumer) {
        let newest = self.store.newest();
        let mut ask = TopicPartitionList::new();
        let mut of: HashMap<(String, i32), (Arc<str>, i64, i64)> = HashMap::new();
        for (topic, p, up, down) in newest {
            if let Some(t) = self.mirrored(&topic) {
                // The offset field carries the timestamp asked for: latest.
                let _ = ask.add_partition_offset(&t, p, Offset::End);
                of.insert((t, p), (topic, up, down));
            }
        }
        if ask.count() == 0 {
            return;
        }
        let answered = |list: TopicPartitionList, what: Offset| -> Option<HashMap<(String, i32), i64>> {
            let mut l = TopicPartitionList::new();
            for e in list.elements() {
                let _ = l.add_partition_offset(e.topic(), e.partition(), what);
            }
            let got = target.offsets_for_times(l, Duration::from_secs(5)).map_err(|e| debug!("[{}] target ends not read: {e}", self.setup.name)).ok()?;
            Some(
                got.elements()
                    .iter()
                    .filter_map(|e| match (e.offset(), e.error()) {
                        (Offset::Offset(o), Ok(())) => Some(((e.topic().to_string(), e.partition()), o)),
                        _ => None,
                    })
                    .collect(),
            )
        };
        let Some(ends) = answered(ask, Offset::End) else { return };
        let mut gone = TopicPartitionList::new();
        for ((t, p), end) in &ends {
            if of.get(&(t.clone(), *p)).is_some_and(|(_, _, down)| end <= down) {
                let _ = gone.add_partition_offset(t, *p, Offset::Beginning);
            }
        }
        if gone.count() == 0 {
            return;
        }
        let Some(starts) = answered(gone, Offset::Beginning) else { return };
        for ((t, p), start) in starts {
            if let Some((topic, up, down)) = of.get(&(t, p)) {
                self.store.target_log_went_back(topic, p, (*up, *down), start);
            }
        }
    }

    /// Whether `group` is a consumer group to checkpoint: taken by the
    /// groups filter and not one of the mirror's own (its progress, its
    /// restart points, its admin client), which are no consumers to fail over.
    fn is_consumer(&self, filter: &crate::plan::policy::NameFilter, group: &str) -> bool {
        filter.matches(group) && Some(group) != self.setup.own_group.as_deref() && !group.starts_with("mirror-maker.")
    }

    /// Checkpoints of the `listed` groups (see [`Self::is_consumer`]): those
    /// sent, the groups whose offsets were read (their checkpoints are now
    /// current once the round's are acknowledged), and whether that is every
    /// group (their positions gathered into `oldest`, each mirrored
    /// partition's oldest position held).
    fn emit<C: rdkafka::ClientContext>(
        &self,
        source: &rdkafka::client::Client<C>,
        producer: &BaseProducer,
        topic: &str,
        listed: &[String],
        last: &mut CheckpointStore,
        oldest: &mut HashMap<(String, i32), i64>,
    ) -> Round {
        let name = &self.setup.name;
        let (mut sent, mut read, mut complete) = (Vec::new(), Vec::new(), true);
        for group in listed {
            if self.shutdown.stopping() {
                complete = false;
                break;
            }
            // Java stamps checkpoints with the time just before the group's offsets were listed.
            let ts = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let committed = match groups::group_offsets(source, group) {
                Ok(c) => c,
                Err(e) => {
                    warn!("[{name}] group {group}: {e}");
                    complete = false;
                    continue;
                }
            };
            read.push(group.clone());
            let held: std::collections::HashSet<(String, i32)> = committed.iter().filter_map(|o| Some((self.mirrored(&o.topic)?, o.partition))).collect();
            last.retain_for_group(group, |t, p| held.contains(&(t.to_string(), p)));
            for o in committed.iter().filter(|o| self.mirrored(&o.topic).is_some()) {
                let e = oldest.entry((o.topic.clone(), o.partition)).or_insert(o.offset);
                *e = (*e).min(o.offset);
            }
            for (c, epoch) in due(group, &committed, |t| self.mirrored(t), &self.store, last) {
                let (Ok(key), Ok(value)) = (c.encode_key(), c.encode_value()) else {
                    warn!("[{name}] no checkpoint for group {} on {}: a name or metadata too long for MirrorMaker 2's format", c.group, c.topic);
                    continue;
                };
                match producer.send(BaseRecord::<[u8], [u8]>::to(topic).partition(0).key(&key).payload(&value).timestamp(ts)) {
                    Ok(()) => {
                        last.put(&c, epoch);
                        sent.push((c.group.clone(), c.topic.clone(), c.partition, ts));
                        Metrics::add(&self.setup.metrics.checkpoints, 1);
                    }
                    Err((e, _)) => warn!("[{name}] checkpoint of group {} not written: {e}", c.group),
                }
                producer.poll(Duration::ZERO);
            }
        }
        Round { sent, read, complete }
    }

    /// `sync.group.offsets.enabled`: each group with checkpoints gets them
    /// committed on the target unless consumers of it are active there.
    fn sync_groups<C: rdkafka::ClientContext>(&self, target: &rdkafka::client::Client<C>, last: &mut CheckpointStore) {
        let name = &self.setup.name;
        let states = match groups::list_groups(target) {
            Ok(l) => l.into_iter().map(|g| (g.group, g.state)).collect::<HashMap<_, _>>(),
            Err(e) => {
                warn!("[{name}] group offsets not synced: cannot list the target's groups: {e}");
                return;
            }
        };
        for (group, translated) in last.groups() {
            let group = group.as_str();
            if self.shutdown.stopping() {
                return;
            }
            if states.get(group).is_some_and(|s| s.is_active()) {
                info!("[{name}] group {group} left alone on the target: it has active consumers there");
                Metrics::add(&self.setup.metrics.group_syncs_skipped_active, 1);
                continue;
            }
            let on_target = match groups::group_offsets(target, group) {
                Ok(o) => o,
                Err(e) => {
                    warn!("[{name}] group {group} not synced: {e}");
                    continue;
                }
            };
            let moves = forward_only(&translated, &on_target);
            let all: Vec<GroupOffset> = translated.iter().map(|(o, _)| o.clone()).collect();
            if moves.is_empty() {
                last.synced(group, &all);
                continue;
            }
            match groups::alter_group_offsets(target, group, &moves) {
                Ok(()) => {
                    last.synced(group, &all);
                    let back: Vec<String> = translated
                        .iter()
                        .filter(|(o, back)| *back && moves.iter().any(|m| m.topic == o.topic && m.partition == o.partition))
                        .map(|(o, _)| format!("{}-{} to {}", o.topic, o.partition, o.offset))
                        .collect();
                    if !back.is_empty() {
                        warn!(
                            "[{name}] group {group}: moved back on the target ({}): the target topic was deleted and made again, and the offsets committed before point at later records",
                            back.join(", ")
                        );
                    }
                    info!("[{name}] group {group}: {} partitions moved forward on the target to their translated offsets", moves.len() - back.len());
                    Metrics::add(&self.setup.metrics.group_offsets_synced, moves.len() as u64);
                }
                Err(GroupError::Active { .. }) => {
                    info!("[{name}] group {group} left alone on the target: consumers joined it meanwhile");
                    Metrics::add(&self.setup.metrics.group_syncs_skipped_active, 1);
                }
                Err(e) => warn!("[{name}] group {group} not synced: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests;
