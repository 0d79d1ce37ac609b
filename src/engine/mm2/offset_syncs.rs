//! Offset-syncs: which target offset each mirrored source offset got,
//! learnt from the target's acknowledgements, written to MirrorMaker 2's
//! `mm2-offset-syncs.*.internal` topic and kept in memory for checkpoints.
//!
//! Java's source task decides when to write a sync (`OffsetSyncWriter`,
//! 3.9): the first record of a partition, every `offset.lag.max` records,
//! and every break in the upstream offsets (compaction, transaction
//! markers, skipped records) or going back downstream. We follow the same
//! rule so Java's checkpoint connector, reading our topic, translates as it
//! would behind Java MM2, and add two writes Java lacks or makes late: the
//! latest acknowledged record of every partition at each offset commit, and
//! of a partition that has gone idle, so that a caught-up group translates
//! with no lag at all.
//!
//! A sync only ever names a target offset the target acknowledged: they
//! are made from delivery reports, in report order per partition (one
//! source partition always goes to the same producer, whose reports for a
//! target partition come in offset order).
//!
//! The rule every sync keeps: a sync (up, down) is made only when every
//! record of the partition with an upstream offset at or past `up` lands
//! at or past `down`, so a translation (the sync's `down`, or one past it)
//! never points past a record the group has not read. Report order is
//! target order, so this holds exactly when `up` is above every upstream
//! offset acknowledged before it. A record acknowledged at or below that
//! highest one (sent again alone after its batch was refused as too large,
//! for an unknown partition or a sequence error, so that it lands after
//! later records; or copied again after a rebalance) makes no sync, breaks
//! the run, and no sync is made until the upstream offsets pass the
//! highest again. Before, such a record started the rule afresh and its
//! sync made the store drop every earlier one: a group standing among the
//! records that had landed first translated past them (issue #26 item 1).
//!
//! In memory each sync also says whether every record since the previous
//! sync landed one after the other on both sides. Between two such syncs
//! the mapping is known record by record, so [`SyncStore::translate`] gives
//! the exact target offset of any upstream offset in between, where Java
//! can only say "one past the sync before" and makes the consumer read up
//! to `offset.lag.max` records twice. Syncs read back from the topic carry
//! no such knowledge and translate as Java's do.
//!
//! The producer workers feed it through the pipeline's acknowledgement
//! hooks (`pipeline::ack_hooks`): [`FlowSyncs`] is a flow's
//! [`FlowAckHooks`], [`PartitionSyncs`] a partition's [`AckHook`].

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::engine::pipeline::ack_hooks::{AckHook, FlowAckHooks};
use crate::engine::pipeline::offsets::Tp;
use crate::formats::OffsetSync;
use crate::fxhash::FxHashMap;

/// Syncs kept in memory per partition: dense near the head, thinned by
/// halves further back (Java keeps 64, one per power of two back).
const KEPT_PER_PARTITION: usize = 512;

/// A partition with no acknowledgement for this long has its latest
/// mapping written, if not yet written.
pub const IDLE_AFTER: Duration = Duration::from_millis(500);

/// Syncs waiting for the writer; beyond this they are counted and let go
/// (the in-memory store keeps them: only Java readers lose precision).
const QUEUE: usize = 100_000;

/// One sync on its way to the syncs topic.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub sync: OffsetSync,
    /// The sync before it of the same partition, (upstream, downstream),
    /// when every record in between landed one after the other on both
    /// sides. Written in the record's [`FOLLOWS_HEADER`], so a reader of
    /// the topic (the node leading the checkpoints, issue #28) translates
    /// exactly in between, as the in-memory store of one node does. Java's
    /// readers ignore headers.
    pub follows: Option<(i64, i64)>,
}

/// The header of a sync record naming the sync it follows 1:1, as
/// `upstream,downstream` in ASCII.
pub const FOLLOWS_HEADER: &str = "mirror-maker.follows";

/// Reads a [`FOLLOWS_HEADER`] value; None for anything else.
pub fn parse_follows(value: &[u8]) -> Option<(i64, i64)> {
    let text = std::str::from_utf8(value).ok()?;
    let (up, down) = text.split_once(',')?;
    Some((up.parse().ok()?, down.parse().ok()?))
}

/// A sync read from the topic: the sync, its offset there, and the sync
/// it follows 1:1 (its [`FOLLOWS_HEADER`]).
pub type ReadSync = (OffsetSync, i64, Option<(i64, i64)>);

/// One sync as kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub up: i64,
    pub down: i64,
    /// Every record from the previous kept sync to this one landed one
    /// after the other on both sides (so offsets in between map 1:1).
    pub contiguous: bool,
    /// Its offset in the syncs topic, once known (-1 before).
    pub at: i64,
}

/// The sync rule's state of one source partition, per process lifetime as
/// Java's is per task lifetime.
#[derive(Debug)]
struct Track {
    /// The last record acknowledged in upstream order (above every one
    /// acknowledged before it).
    prev_up: i64,
    prev_down: i64,
    /// The highest upstream offset acknowledged: a sync needs an upstream
    /// offset above it (see the module docs).
    max_up: i64,
    last_sync_down: i64,
    /// 1:1 on both sides since the last sync written.
    contiguous: bool,
    /// The next record must be synced (after one acknowledged out of order).
    force: bool,
    /// The latest acknowledged record, when it is not yet synced.
    delayed: Option<Mapping>,
    last_ack: Instant,
    /// The last sync handed to the writer: (upstream, downstream).
    last_emitted: Option<(i64, i64)>,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            prev_up: -1,
            prev_down: -1,
            max_up: -1,
            last_sync_down: -1,
            contiguous: false,
            force: false,
            delayed: None,
            last_ack: Instant::now(),
            last_emitted: None,
        }
    }
}

impl Track {
    /// Java's `OffsetSyncWriter.update` for one acknowledged record, plus
    /// the run bookkeeping; returns the syncs to write, if any are due.
    /// Where the run breaks (a gap on either side), the record before the
    /// break is synced too when it was not: a group that stopped inside
    /// the gap (on a transaction marker, in an aborted stretch) then
    /// translates to the first record after it, not one past a sync far
    /// before.
    fn acknowledged(&mut self, up: i64, down: i64, lag_max: i64, due: &mut Vec<Mapping>) {
        if self.max_up >= 0 && up <= self.max_up {
            // Acknowledged after a later upstream offset: a record sent
            // again alone, copied again, or the source log went back. Records
            // after it landed before it, so no sync may name it (nor any
            // record until the upstream offsets pass the highest again);
            // the latest in-order mapping is written now, since it holds,
            // and the first record past the highest is synced.
            due.extend(self.take_delayed());
            self.contiguous = false;
            self.force = true;
            self.last_ack = Instant::now();
            return;
        }
        self.max_up = up;
        let step = self.prev_up >= 0 && up - self.prev_up == 1 && down - self.prev_down == 1;
        if !step {
            due.extend(self.take_delayed());
        }
        let contiguous = self.contiguous && step;
        let is_due =
            self.last_sync_down < 0 || self.force || down.saturating_sub(self.last_sync_down + 1) >= lag_max || up - self.prev_up != 1 || down < self.prev_down;
        self.prev_up = up;
        self.prev_down = down;
        self.last_ack = Instant::now();
        let m = Mapping { up, down, contiguous, at: -1 };
        if is_due {
            self.synced(down);
            due.push(m);
        } else {
            self.contiguous = contiguous;
            self.delayed = Some(m);
        }
    }

    fn synced(&mut self, down: i64) {
        self.last_sync_down = down;
        self.contiguous = true;
        self.force = false;
        self.delayed = None;
    }

    /// The latest mapping, if not yet written.
    fn take_delayed(&mut self) -> Option<Mapping> {
        let m = self.delayed.take()?;
        self.synced(m.down);
        Some(m)
    }

    /// The sync `m` is handed to the writer: the one it follows 1:1, if
    /// it does (see [`Outgoing::follows`]).
    fn emitted(&mut self, m: &Mapping) -> Option<(i64, i64)> {
        let follows = if m.contiguous { self.last_emitted } else { None };
        self.last_emitted = Some((m.up, m.down));
        follows
    }
}

/// What the producer workers hold for one source partition.
pub struct PartitionSyncs {
    topic: Arc<str>,
    partition: i32,
    flow: Arc<FlowSyncs>,
    track: Mutex<Track>,
    /// Its topic was deleted at the source ([`FlowSyncs::forget_topic`]):
    /// acknowledgements of records still in flight make no sync, which
    /// would bring the partition back into the store.
    forgotten: AtomicBool,
}

impl std::fmt::Debug for PartitionSyncs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PartitionSyncs({}-{})", self.topic, self.partition)
    }
}

impl PartitionSyncs {
    /// Records of this partition the target acknowledged, in report
    /// order: `(source offset, target offset)`.
    pub fn acknowledged(&self, acks: impl IntoIterator<Item = (i64, i64)>) {
        if self.forgotten.load(Ordering::Relaxed) {
            return;
        }
        let lag_max = self.flow.lag_max;
        let mut due = Vec::new();
        // Emitted under the lock, as `flush` does: the store must get a
        // partition's syncs in the order the rule made them. Released in
        // between, a mapping the sync writer's flush took could reach the
        // store after a later sync made here, which the store took for a
        // log gone back and cleared the partition's earlier syncs; a sync
        // after it then claimed a 1:1 run across a gap it never saw.
        let mut t = self.track.lock().unwrap_or_else(|e| e.into_inner());
        for (up, down) in acks {
            t.acknowledged(up, down, lag_max, &mut due);
        }
        for m in due {
            let follows = t.emitted(&m);
            self.flow.emit(&self.topic, self.partition, m, follows);
        }
    }

    fn flush(&self, idle_only: bool) {
        if self.forgotten.load(Ordering::Relaxed) {
            return;
        }
        // Under the lock, as in `acknowledged`.
        let mut t = self.track.lock().unwrap_or_else(|e| e.into_inner());
        if idle_only && t.last_ack.elapsed() < IDLE_AFTER {
            return;
        }
        if let Some(m) = t.take_delayed() {
            let follows = t.emitted(&m);
            self.flow.emit(&self.topic, self.partition, m, follows);
        }
    }
}

/// A flow's offset-syncs: the rule's state per partition, the in-memory
/// store, and the queue to the writer of the syncs topic.
pub struct FlowSyncs {
    lag_max: i64,
    partitions: Mutex<FxHashMap<Tp, Arc<PartitionSyncs>>>,
    pub store: Arc<SyncStore>,
    out: Option<Sender<Outgoing>>,
    /// Syncs the writer's queue had no room for.
    pub dropped: AtomicU64,
}

impl FlowSyncs {
    /// `out`: where syncs go to be written (None: memory only).
    /// `translated`: whether checkpoints are made from them (else the
    /// store keeps none).
    pub fn new(lag_max: i64, out: Option<Sender<Outgoing>>, translated: bool) -> Arc<FlowSyncs> {
        let store = Arc::new(if translated { SyncStore::default() } else { SyncStore::discarding() });
        Arc::new(FlowSyncs { lag_max: lag_max.max(0), partitions: Mutex::default(), store, out, dropped: AtomicU64::new(0) })
    }

    /// A queue of the size the writer takes syncs from.
    pub fn queue() -> (Sender<Outgoing>, Receiver<Outgoing>) {
        crossbeam_channel::bounded(QUEUE)
    }

    /// The handle of one source partition, the same for its whole life in
    /// this process (so the rule's state survives reassignments).
    pub fn partition(self: &Arc<Self>, topic: &Arc<str>, partition: i32) -> Arc<PartitionSyncs> {
        let mut map = self.partitions.lock().unwrap_or_else(|e| e.into_inner());
        map.entry((topic.clone(), partition))
            .or_insert_with(|| {
                Arc::new(PartitionSyncs {
                    topic: topic.clone(),
                    partition,
                    flow: self.clone(),
                    track: Mutex::new(Track::default()),
                    forgotten: AtomicBool::new(false),
                })
            })
            .clone()
    }

    /// Forgets a topic deleted at the source: each partition's rule state
    /// (a handle still held by a record in flight makes no more syncs)
    /// and its syncs in the store, which would otherwise be kept, and pin
    /// the restart point, for the life of the process. A topic made again
    /// with the name starts afresh.
    pub fn forget_topic(&self, topic: &str) {
        self.partitions.lock().unwrap_or_else(|e| e.into_inner()).retain(|(t, _), p| {
            let keep = &**t != topic;
            if !keep {
                p.forgotten.store(true, Ordering::Relaxed);
            }
            keep
        });
        self.store.forget_topic(topic);
    }

    /// Partitions with rule state and partitions with syncs in the store, together.
    pub fn tracked(&self) -> usize {
        self.partitions.lock().unwrap_or_else(|e| e.into_inner()).len() + self.store.partitions()
    }

    /// Writes the latest mapping of every partition not yet written (at
    /// each offset commit and at the end), or of those idle for
    /// [`IDLE_AFTER`].
    pub fn flush(&self, idle_only: bool) {
        let all: Vec<Arc<PartitionSyncs>> = self.partitions.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        for p in all {
            p.flush(idle_only);
        }
    }

    fn emit(&self, topic: &Arc<str>, partition: i32, m: Mapping, follows: Option<(i64, i64)>) {
        self.store.record(topic, partition, m);
        if let Some(out) = &self.out {
            let sync = OffsetSync { topic: topic.to_string(), partition, upstream_offset: m.up, downstream_offset: m.down };
            if let Err(TrySendError::Full(_)) = out.try_send(Outgoing { sync, follows }) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The pipeline's hooks, as the producer workers and streams call them.
impl AckHook for PartitionSyncs {
    fn acknowledged(&self, acks: &mut dyn Iterator<Item = (i64, i64)>) {
        PartitionSyncs::acknowledged(self, acks);
    }
}

impl FlowAckHooks for FlowSyncs {
    fn partition_hook(self: Arc<Self>, topic: &Arc<str>, partition: i32) -> Arc<dyn AckHook> {
        FlowSyncs::partition(&self, topic, partition)
    }

    fn forget_topic(&self, topic: &str) {
        FlowSyncs::forget_topic(self, topic);
    }

    fn tracked(&self) -> usize {
        FlowSyncs::tracked(self)
    }
}

/// Every known sync, by source partition, for translation.
#[derive(Default)]
pub struct SyncStore {
    inner: Mutex<StoreInner>,
}

#[derive(Default)]
struct StoreInner {
    syncs: FxHashMap<Tp, VecDeque<Mapping>>,
    /// The syncs topic has been read to its end: until then a translation
    /// could miss syncs Java or an earlier run wrote, and none is made.
    loaded: bool,
    /// Syncs made by this run before the topic was read, added after it;
    /// bounded per partition as the store is, however long the read takes
    /// (a syncs cluster down for hours).
    early: FxHashMap<Tp, VecDeque<Mapping>>,
    /// No checkpoints are made from this store: it keeps nothing.
    discard: bool,
    /// Partitions whose target log went back (the target topic deleted and
    /// made again, or truncated): the first target offset this run wrote
    /// in the new log. A group behind every sync of the new log resumes
    /// there, and not past it; the old log's syncs are gone.
    floors: FxHashMap<Tp, i64>,
    /// How many times each partition's target log went back: a checkpoint
    /// made in a later log may go back (`checkpoints`).
    epochs: FxHashMap<Tp, u64>,
}

impl SyncStore {
    /// A store that keeps nothing, for a flow that writes offset-syncs
    /// but makes no checkpoints (nothing would ever translate with them).
    fn discarding() -> SyncStore {
        SyncStore { inner: Mutex::new(StoreInner { discard: true, ..StoreInner::default() }) }
    }

    fn record(&self, topic: &Arc<str>, partition: i32, m: Mapping) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if s.discard {
            return;
        }
        let tp: Tp = (topic.clone(), partition);
        let kept = if s.loaded { &mut s.syncs } else { &mut s.early };
        if push(kept.entry(tp.clone()).or_default(), m) == Pushed::NewTargetLog {
            s.new_target_log(tp, m.down);
        }
    }

    /// Adds the syncs read from the topic (in log order: Java's, an
    /// earlier run's, and perhaps some of this run's), then this run's own
    /// made meanwhile; from then on translations are made.
    pub fn loaded(&self, read: impl IntoIterator<Item = (OffsetSync, i64)>) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut mine = std::mem::take(&mut s.early);
        for (sync, at) in read {
            let tp: Tp = (Arc::from(sync.topic.as_str()), sync.partition);
            // One of this run's own syncs, read back: the copy made here
            // knows whether the records since the previous sync were
            // contiguous, the copy read back does not. Kept first, the read
            // one made a mirror that wrote all its syncs before the read
            // ended translate one past each sync, for good.
            if let Some(m) = mine.get_mut(&tp).and_then(|v| v.iter_mut().find(|m| m.up == sync.upstream_offset && m.down == sync.downstream_offset)) {
                if m.at < 0 {
                    m.at = at;
                }
                continue;
            }
            let m = Mapping { up: sync.upstream_offset, down: sync.downstream_offset, contiguous: false, at };
            if push(s.syncs.entry(tp.clone()).or_default(), m) == Pushed::NewTargetLog {
                s.new_target_log(tp, m.down);
            }
        }
        for (tp, early) in mine {
            for m in early {
                if push(s.syncs.entry(tp.clone()).or_default(), m) == Pushed::NewTargetLog {
                    s.new_target_log(tp.clone(), m.down);
                }
            }
        }
        s.loaded = true;
    }

    /// Adds syncs read from the topic by a reader that keeps reading it (the
    /// checkpoints of a mirror of several nodes are made from every node's
    /// syncs, issue #28): in log order, each with its offset in the topic
    /// and the sync it follows 1:1 (see [`Outgoing::follows`]), which makes
    /// it contiguous only when that is the partition's newest sync here. From
    /// then on translations are made.
    pub fn tailed(&self, read: impl IntoIterator<Item = ReadSync>) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for (sync, at, follows) in read {
            let tp: Tp = (Arc::from(sync.topic.as_str()), sync.partition);
            let kept = s.syncs.entry(tp.clone()).or_default();
            let contiguous = follows.is_some() && kept.back().map(|m| (m.up, m.down)) == follows;
            let m = Mapping { up: sync.upstream_offset, down: sync.downstream_offset, contiguous, at };
            if push(kept, m) == Pushed::NewTargetLog {
                s.new_target_log(tp, m.down);
            }
        }
        s.loaded = true;
    }

    /// Where a later run can start reading the syncs topic and still find
    /// every sync it needs: for each partition, the sync at or below the
    /// oldest position a group holds there (`oldest`), or its latest sync
    /// when no group reads it; the earliest of their offsets in the topic.
    /// None until that is known for every partition (a sync not yet
    /// acknowledged, or nothing read yet).
    pub fn resume_point(&self, oldest: &HashMap<(String, i32), i64>) -> Option<i64> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !s.loaded {
            return None;
        }
        let mut point: Option<i64> = None;
        for ((topic, partition), syncs) in &s.syncs {
            let upto = match oldest.get(&(topic.to_string(), *partition)) {
                Some(&pos) => syncs.partition_point(|m| m.up <= pos).max(1),
                None => syncs.len(),
            };
            // Walk back past syncs whose place in the topic is not known yet.
            let at = syncs.iter().take(upto).rev().map(|m| m.at).find(|at| *at >= 0)?;
            point = Some(point.map_or(at, |p| p.min(at)));
        }
        point
    }

    /// Drops every sync of `topic` (see [`FlowSyncs::forget_topic`]).
    fn forget_topic(&self, topic: &str) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.syncs.retain(|(t, _), _| &**t != topic);
        s.early.retain(|(t, _), _| &**t != topic);
        s.floors.retain(|(t, _), _| &**t != topic);
        s.epochs.retain(|(t, _), _| &**t != topic);
    }

    /// Partitions with syncs kept.
    fn partitions(&self) -> usize {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.syncs.len() + s.early.len()
    }

    pub fn is_loaded(&self) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).loaded
    }

    /// The target offset a consumer of the target should resume at to
    /// continue where a group at `upstream` on the source stands; None
    /// when no sync tells (nothing loaded yet, no sync of the partition,
    /// or the group is behind the oldest sync kept).
    ///
    /// Exact at a sync and, between two syncs that are contiguous, for
    /// every offset in between; otherwise one past the sync before, which
    /// may read some records twice but never skips one.
    pub fn translate(&self, topic: &str, partition: i32, upstream: i64) -> Option<i64> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !s.loaded {
            return None;
        }
        let tp: Tp = (Arc::from(topic), partition);
        translate_in(s.syncs.get(&tp)?, upstream).or_else(|| s.floors.get(&tp).copied())
    }

    /// Each partition's newest sync, once the syncs topic is read: (source
    /// topic, partition, upstream, downstream).
    pub fn newest(&self) -> Vec<(Arc<str>, i32, i64, i64)> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !s.loaded {
            return Vec::new();
        }
        s.syncs.iter().filter_map(|((t, p), v)| v.back().map(|m| (t.clone(), *p, m.up, m.down))).collect()
    }

    /// The partition's target log no longer holds the newest sync's record
    /// (`newest` = (up, down), as [`Self::newest`] gave it): the target
    /// topic was deleted and made again, or truncated, before any record of
    /// the new log was acknowledged here. Its syncs start afresh, and a
    /// group behind them translates to `log_start`, the new log's start.
    /// Nothing is done if a newer sync came meanwhile.
    pub fn target_log_went_back(&self, topic: &str, partition: i32, newest: (i64, i64), log_start: i64) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let tp: Tp = (Arc::from(topic), partition);
        let Some(v) = s.syncs.get_mut(&tp) else { return };
        if v.back().map(|m| (m.up, m.down)) != Some(newest) {
            return;
        }
        v.clear();
        s.new_target_log(tp, log_start);
    }

    /// How many times the partition's target log went back (see
    /// [`StoreInner::floors`]); a checkpoint made in a later one may go back.
    pub fn epoch(&self, topic: &str, partition: i32) -> u64 {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.epochs.get(&(Arc::from(topic), partition)).copied().unwrap_or(0)
    }

    /// Syncs kept for a partition, those waiting for the topic's read
    /// included (tests and the debug log).
    pub fn kept(&self, topic: &str, partition: i32) -> usize {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let tp = (Arc::from(topic), partition);
        s.syncs.get(&tp).map_or(0, VecDeque::len) + s.early.get(&tp).map_or(0, VecDeque::len)
    }
}

impl StoreInner {
    /// The partition's target log went back: `down` is the first target
    /// offset written in the new one.
    fn new_target_log(&mut self, tp: Tp, down: i64) {
        log::warn!(
            "offset-syncs: target partition {}-{} went back to offset {down} (the target topic deleted and made again, or truncated): \
             its earlier syncs are dropped, and groups behind its new records translate to {down}",
            tp.0,
            tp.1
        );
        self.floors.insert(tp.clone(), down);
        *self.epochs.entry(tp).or_default() += 1;
    }
}

/// What [`push`] made of a sync.
#[derive(Debug, PartialEq)]
enum Pushed {
    Kept,
    /// It went back downstream: a new target log (see [`StoreInner::floors`]).
    NewTargetLog,
}

/// Adds a sync after those of its partition. One going back upstream
/// means the source log went back (truncated, topic made again) or a
/// restarted mirror copying again from its group's offset: what was known
/// before says nothing of the new copies, so it starts afresh, as Java's
/// store does. One going back downstream while upstream goes on means the
/// target log went back (the target topic deleted and made again): the old
/// syncs point into offsets that now hold later records, so it starts
/// afresh too, which Java's store does not (issue #26 item 3). The same
/// mapping twice (this run's own syncs read back from the topic, then
/// added as made) is kept once.
fn push(syncs: &mut VecDeque<Mapping>, m: Mapping) -> Pushed {
    let mut pushed = Pushed::Kept;
    if let Some(last) = syncs.back() {
        if syncs.iter().rev().any(|s| s.up == m.up && s.down == m.down) {
            return Pushed::Kept;
        }
        if m.up < last.up {
            syncs.clear();
        } else if m.down < last.down {
            syncs.clear();
            pushed = Pushed::NewTargetLog;
        }
    }
    let m = if syncs.is_empty() { Mapping { contiguous: false, ..m } } else { m };
    syncs.push_back(m);
    if syncs.len() > KEPT_PER_PARTITION {
        thin(syncs);
    }
    pushed
}

/// Drops every other sync of the older half. Two contiguous runs joined
/// are one contiguous run, so the flag of the sync after a dropped one is
/// the AND of both.
fn thin(syncs: &mut VecDeque<Mapping>) {
    let half = syncs.len() / 2;
    let mut kept: VecDeque<Mapping> = VecDeque::with_capacity(syncs.len());
    let mut carry = true;
    for (i, m) in syncs.drain(..).enumerate() {
        if i < half && i % 2 == 1 {
            carry &= m.contiguous;
            continue;
        }
        kept.push_back(Mapping { contiguous: m.contiguous && carry, ..m });
        carry = true;
    }
    *syncs = kept;
}

fn translate_in(syncs: &VecDeque<Mapping>, upstream: i64) -> Option<i64> {
    let i = syncs.partition_point(|s| s.up <= upstream).checked_sub(1)?;
    let at = syncs[i];
    if at.up == upstream {
        return Some(at.down);
    }
    match syncs.get(i + 1) {
        Some(next) if next.contiguous && upstream < next.up => Some(at.down + (upstream - at.up)),
        _ => Some(at.down + 1),
    }
}

#[cfg(test)]
mod tests;
