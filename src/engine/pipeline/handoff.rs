//! A consumer stream's side of the channels to the producer workers.
//!
//! The stream fills one open batch per worker while it polls and sends the
//! batches when they are full and at the end of each turn of its loop. A
//! full channel is waited on briefly ([`WAIT_FOR_ROOM`]); a batch it still
//! refuses is held, in order, and the partitions in it are paused, so the
//! stream keeps polling (and stays in its group) without reading more;
//! records for a worker with held batches queue behind them,
//! which keeps every partition in order (a partition always goes to the same
//! worker). When a worker starts holding, the stream pauses every partition
//! it has that goes to that worker, not only those in the held batch (see
//! [`Outcome::holding`]). When a worker's held batches are all sent, its
//! partitions are resumed. On revocation or shutdown, records never sent are taken back and
//! their offsets abandoned, so they are read again, not lost.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TrySendError};

use crate::engine::pipeline::batch::{Batch, PartitionRoute, RecordMeta, MAX_BYTES, MAX_RECORDS};
use crate::engine::pipeline::offsets::Tp;
use crate::fxhash::FxHashSet;
use crate::ops::metrics::Metrics;

/// What the stream must do after a hand-off: pause or resume these
/// partitions, or stop because the workers are gone.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub pause: Vec<Tp>,
    pub resume: Vec<Tp>,
    pub disconnected: bool,
    /// Workers that have just started holding batches: the stream pauses
    /// every partition it has that goes to them ([`Outbox::pause_also`]).
    /// Pausing only the partitions of the held batch let a stream go on
    /// polling the records librdkafka had prefetched for all the others,
    /// each turn holding up to a turn's worth and pausing the few
    /// partitions in it: with 256 partitions and a slow target, 110,000
    /// records of 1 KiB (some 115 MB) piled up in held batches, where
    /// `--queue.size` and `--queue.byte.size` were meant to bound them.
    pub holding: Vec<usize>,
}

impl Outcome {
    fn add(&mut self, other: Outcome) {
        self.pause.extend(other.pause);
        self.resume.extend(other.resume);
        self.disconnected |= other.disconnected;
        self.holding.extend(other.holding);
    }
}

/// How long a stream waits for room in a full channel before it pauses
/// the partitions instead. Pausing makes librdkafka drop what it has
/// fetched for them, to fetch it again on resume: with pausing at the first
/// refusal, callgrind counted 1.6 to 1.95 fetched records per record
/// mirrored. A worker frees room within milliseconds unless the target is
/// slow or away, and the stream's group membership is kept by librdkafka's
/// own heartbeats meanwhile.
pub const WAIT_FOR_ROOM: Duration = Duration::from_millis(100);

/// A channel's capacity: `--queue.size` records and `--queue.byte.size`
/// bytes of keys and values, whichever binds first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    pub records: usize,
    pub bytes: usize,
}

impl Bound {
    /// Bounded in records only (tests).
    #[cfg(test)]
    pub fn records(records: usize) -> Bound {
        Bound { records, bytes: usize::MAX }
    }

    /// The largest batch for a channel of this bound: [`MAX_RECORDS`] and
    /// [`MAX_BYTES`], or the channel's own bound where it is smaller.
    pub fn batch(self) -> Bound {
        Bound { records: self.records.clamp(1, MAX_RECORDS), bytes: self.bytes.clamp(1, MAX_BYTES) }
    }
}

/// A worker's channel, bounded in records and bytes, not batches (an empty
/// channel takes any one batch, so a batch larger than the bound is never
/// stuck). Counting batches instead made a channel of small batches, as a
/// stream that outpaces its fetches sends, fill after a few hundred
/// records: the source was paused and fetched again far more often.
/// Counting records alone let memory grow with the record size.
pub fn lane(bound: Bound) -> (LaneTx, LaneRx) {
    let bound = Bound { records: bound.records.max(1), bytes: bound.bytes.max(1) };
    let (tx, rx) = bounded(bound.records);
    let room = Arc::new(Room::default());
    (LaneTx { tx, room: room.clone(), bound }, LaneRx { rx, room })
}

/// A channel's fill in records and bytes, and a wake-up for streams
/// waiting on it.
#[derive(Default)]
struct Room {
    /// Records sent and not yet received.
    queued: AtomicUsize,
    /// Their bytes of keys and values.
    queued_bytes: AtomicUsize,
    /// Streams waiting for room; the worker only takes the lock to wake
    /// them when there are any.
    waiting: AtomicUsize,
    lock: Mutex<()>,
    freed: Condvar,
}

/// The streams' end of a worker's channel.
#[derive(Clone)]
pub struct LaneTx {
    tx: Sender<Batch>,
    room: Arc<Room>,
    bound: Bound,
}

impl LaneTx {
    /// Whether at most half the bound is queued, in records and in bytes.
    fn half_empty(&self) -> bool {
        let queued = self.room.queued.load(Ordering::SeqCst);
        let bytes = self.room.queued_bytes.load(Ordering::SeqCst);
        queued <= self.bound.records / 2 && bytes <= self.bound.bytes / 2
    }

    fn full_for(&self, batch: &Batch) -> bool {
        let queued = self.room.queued.load(Ordering::SeqCst);
        let bytes = self.room.queued_bytes.load(Ordering::SeqCst);
        queued > 0 && (queued + batch.len() > self.bound.records || bytes + batch.byte_len() > self.bound.bytes)
    }

    fn try_send(&self, batch: Batch) -> Result<(), TrySendError<Batch>> {
        if self.full_for(&batch) {
            return Err(TrySendError::Full(batch));
        }
        let (n, bytes) = (batch.len(), batch.byte_len());
        self.room.queued.fetch_add(n, Ordering::SeqCst);
        self.room.queued_bytes.fetch_add(bytes, Ordering::SeqCst);
        self.tx.try_send(batch).inspect_err(|_| {
            self.room.queued.fetch_sub(n, Ordering::SeqCst);
            self.room.queued_bytes.fetch_sub(bytes, Ordering::SeqCst);
        })
    }

    /// Sends, waiting up to `wait` for room in a full channel.
    fn send_within(&self, batch: Batch, wait: Duration) -> Result<(), TrySendError<Batch>> {
        let batch = match self.try_send(batch) {
            Err(TrySendError::Full(b)) if !wait.is_zero() => b,
            other => return other,
        };
        let until = Instant::now() + wait;
        self.room.waiting.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.room.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Checked after announcing the wait, under the lock the worker takes
        // to wake us: either we see its room or it sees us waiting.
        while self.full_for(&batch) {
            let now = Instant::now();
            if now >= until {
                break;
            }
            guard = self.room.freed.wait_timeout(guard, until - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        drop(guard);
        self.room.waiting.fetch_sub(1, Ordering::SeqCst);
        self.try_send(batch)
    }
}

/// The worker's end.
pub struct LaneRx {
    rx: Receiver<Batch>,
    room: Arc<Room>,
}

impl LaneRx {
    /// The next batch, waiting at most `wait`; an error when the wait ran
    /// out or every stream has let go.
    pub fn recv_timeout(&self, wait: Duration) -> Result<Batch, RecvTimeoutError> {
        let batch = self.rx.recv_timeout(wait)?;
        self.received(&batch);
        Ok(batch)
    }

    fn received(&self, batch: &Batch) {
        self.room.queued.fetch_sub(batch.len(), Ordering::SeqCst);
        self.room.queued_bytes.fetch_sub(batch.byte_len(), Ordering::SeqCst);
        if self.room.waiting.load(Ordering::SeqCst) > 0 {
            let _guard = self.room.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.room.freed.notify_all();
        }
    }
}

/// The partitions paused for one worker, in the order they were paused
/// (resumed in that order), with a set to tell at once whether one is.
#[derive(Default)]
struct Paused {
    order: Vec<Tp>,
    set: FxHashSet<Tp>,
}

impl Paused {
    /// Counts `tp` as paused; false when it already was.
    fn insert(&mut self, tp: &Tp) -> bool {
        let new = self.set.insert(tp.clone());
        if new {
            self.order.push(tp.clone());
        }
        new
    }

    fn take(&mut self) -> Vec<Tp> {
        self.set.clear();
        std::mem::take(&mut self.order)
    }

    /// Takes out those `which` chooses, in order; the rest stay paused.
    fn take_where(&mut self, which: impl Fn(&Tp) -> bool) -> Vec<Tp> {
        let (taken, kept): (Vec<Tp>, Vec<Tp>) = std::mem::take(&mut self.order).into_iter().partition(|tp| which(tp));
        for tp in &taken {
            self.set.remove(tp);
        }
        self.order = kept;
        taken
    }

    fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

pub struct Outbox {
    senders: Vec<LaneTx>,
    /// Being filled, per worker.
    open: Vec<Batch>,
    /// Refused by a full channel, oldest first, per worker.
    held: Vec<VecDeque<Batch>>,
    /// Partitions paused because of a worker's held batches.
    paused: Vec<Paused>,
    /// Bytes of each worker's last batch: the next buffer starts that large,
    /// so it rarely grows (and copies) while it fills.
    last_bytes: Vec<usize>,
    /// The largest batch ([`Bound::batch`]).
    max: Bound,
    /// [`WAIT_FOR_ROOM`] (zero in tests that want a full channel to refuse at once).
    wait_for_room: Duration,
    metrics: Arc<Metrics>,
}

impl Outbox {
    /// Batches of at most `max` records and bytes (see [`Bound::batch`]).
    pub fn new(senders: Vec<LaneTx>, max: Bound, wait_for_room: Duration, metrics: Arc<Metrics>) -> Outbox {
        let n = senders.len();
        Outbox {
            senders,
            open: (0..n).map(|_| Batch::default()).collect(),
            held: (0..n).map(|_| VecDeque::new()).collect(),
            paused: (0..n).map(|_| Paused::default()).collect(),
            last_bytes: vec![0; n],
            max: max.batch(),
            wait_for_room,
            metrics,
        }
    }

    pub fn workers(&self) -> usize {
        self.senders.len()
    }

    /// Adds a record to its worker's open batch, sending that batch first
    /// if the record does not fit.
    pub fn push(&mut self, worker: usize, route: &Arc<PartitionRoute>, meta: RecordMeta, key: Option<&[u8]>, value: Option<&[u8]>) -> Outcome {
        let size = key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len);
        let outcome = if self.open[worker].fits(size, self.max.records, self.max.bytes) { Outcome::default() } else { self.ship(worker) };
        if self.open[worker].is_empty() {
            self.open[worker] = Batch::with_capacity(self.last_bytes[worker].max(size));
        }
        self.open[worker].push(route, meta, key, value);
        outcome
    }

    /// Sends every open batch (the end of a turn).
    pub fn ship_all(&mut self) -> Outcome {
        let mut outcome = Outcome::default();
        for w in 0..self.open.len() {
            if !self.open[w].is_empty() {
                outcome.add(self.ship(w));
            }
        }
        outcome
    }

    fn ship(&mut self, w: usize) -> Outcome {
        let batch = std::mem::take(&mut self.open[w]);
        self.last_bytes[w] = batch.byte_len().min(MAX_BYTES);
        if !self.held[w].is_empty() {
            return self.hold(w, batch);
        }
        let n = batch.len() as u64;
        match self.senders[w].send_within(batch, self.wait_for_room) {
            Ok(()) => {
                Metrics::add(&self.metrics.channel_in, n);
                Outcome::default()
            }
            Err(TrySendError::Full(batch)) => self.hold(w, batch),
            Err(TrySendError::Disconnected(batch)) => {
                let mut outcome = self.hold(w, batch);
                outcome.disconnected = true;
                outcome
            }
        }
    }

    /// Keeps a refused batch; returns its partitions not paused yet, and
    /// the worker when it was holding nothing before.
    fn hold(&mut self, w: usize, batch: Batch) -> Outcome {
        let holding = if self.held[w].is_empty() { vec![w] } else { Vec::new() };
        let mut pause = Vec::new();
        let mut last: Option<&Tp> = None;
        for (_, route) in batch.records() {
            let tp = &route.ack.tp;
            if last == Some(tp) {
                continue;
            }
            last = Some(tp);
            if self.paused[w].insert(tp) {
                pause.push(tp.clone());
            }
        }
        self.held[w].push_back(batch);
        Outcome { pause, holding, ..Outcome::default() }
    }

    /// While worker `w` holds batches, pauses with them `tps` (the stream's
    /// other partitions that go to `w`): returns those not paused yet, now
    /// counted as paused for `w`, so they are resumed with the rest once
    /// its held batches are sent, or given back on revocation. Nothing
    /// when `w` holds nothing (any more).
    pub fn pause_also(&mut self, w: usize, tps: impl IntoIterator<Item = Tp>) -> Vec<Tp> {
        if self.held.get(w).is_none_or(VecDeque::is_empty) {
            return Vec::new();
        }
        let mut pause = Vec::new();
        for tp in tps {
            if self.paused[w].insert(&tp) {
                pause.push(tp);
            }
        }
        pause
    }

    /// Sends held batches where there is room now; the outcome resumes the
    /// partitions of workers with nothing held any more.
    pub fn retry_held(&mut self) -> Outcome {
        let mut outcome = Outcome::default();
        for w in 0..self.held.len() {
            // Never empty: take_back drops the batches it empties.
            while let Some(batch) = self.held[w].pop_front() {
                let n = batch.len() as u64;
                match self.senders[w].try_send(batch) {
                    Ok(()) => Metrics::add(&self.metrics.channel_in, n),
                    Err(TrySendError::Full(batch)) => {
                        self.held[w].push_front(batch);
                        break;
                    }
                    Err(TrySendError::Disconnected(batch)) => {
                        self.held[w].push_front(batch);
                        outcome.disconnected = true;
                        break;
                    }
                }
            }
            // Resumed once the channel has room for half its bound again,
            // not at the first free slot: each pause and resume costs
            // librdkafka work per partition (and drops what it prefetched),
            // so at thousands of partitions a slow target that kept the
            // channel at the brim had the stream pause and resume them all
            // several times a second.
            if self.held[w].is_empty() && self.senders[w].half_empty() {
                outcome.resume.append(&mut self.paused[w].take());
            }
        }
        outcome
    }

    /// The partitions paused now because of held batches.
    pub fn paused(&self) -> Vec<Tp> {
        self.paused.iter().flat_map(|p| p.order.iter()).cloned().collect()
    }

    /// Whether any partition is paused because of held batches.
    pub fn has_paused(&self) -> bool {
        self.paused.iter().any(|p| !p.is_empty())
    }

    /// Whether any batch is waiting for room in a channel.
    pub fn has_held(&self) -> bool {
        self.held.iter().any(|q| !q.is_empty())
    }

    /// Removes the records never sent of the given partitions (all when
    /// `None`); returns each partition's first such offset, from which its
    /// offsets are to be abandoned, and the partitions to resume now: the
    /// chosen ones that were paused (librdkafka keeps an application pause
    /// across unassign and assign, so one given up paused would come back
    /// paused with nothing here to resume it), and those of workers left
    /// with nothing held (the batches that would have resumed them are gone).
    pub fn take_back(&mut self, only: Option<&[Tp]>) -> (Vec<(Tp, i64)>, Outcome) {
        let only: Option<FxHashSet<&Tp>> = only.map(|tps| tps.iter().collect());
        let chosen = |tp: &Tp| only.as_ref().is_none_or(|tps| tps.contains(tp));
        let mut first: Vec<(Tp, i64)> = Vec::new();
        let mut seen: FxHashSet<Tp> = FxHashSet::default();
        let mut outcome = Outcome::default();
        for w in 0..self.senders.len() {
            // Held batches are older than the open one, the front oldest:
            // the first record met is each partition's lowest offset.
            for batch in self.held[w].iter_mut().chain(std::iter::once(&mut self.open[w])) {
                batch.retain(|r, route| {
                    let tp = &route.ack.tp;
                    if !chosen(tp) {
                        return true;
                    }
                    if seen.insert(tp.clone()) {
                        first.push((tp.clone(), r.meta.offset));
                    }
                    false
                });
            }
            self.held[w].retain(|b| !b.is_empty());
            if self.held[w].is_empty() {
                outcome.resume.append(&mut self.paused[w].take());
            } else {
                outcome.resume.extend(self.paused[w].take_where(chosen));
            }
        }
        (first, outcome)
    }

    /// Takes back everything never sent and lets go of the channels, so the
    /// workers finish once every stream has done so.
    pub fn close(&mut self) -> Vec<(Tp, i64)> {
        // Nothing to resume: the stream pauses all it has while it stops.
        let (first, _) = self.take_back(None);
        self.senders.clear();
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pipeline::batch::TestSource;

    /// Registers a record of partition `p` and pushes it for worker `w`.
    fn push(o: &mut Outbox, f: &TestSource, w: usize, p: i32, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Outcome {
        let meta = f.record(p, offset);
        o.push(w, &f.route(p), meta, key, value)
    }

    fn tp(p: i32) -> Tp {
        (Arc::from("t"), p)
    }

    /// (partition, offset, value) of every record received, in order.
    fn drain(rx: &LaneRx) -> Vec<(i32, i64, Vec<u8>)> {
        let mut out = Vec::new();
        while let Ok(b) = rx.rx.try_recv() {
            rx.received(&b);
            let (records, bytes, routes) = b.into_parts();
            out.extend(records.iter().map(|r| (r.route(&routes).ack.tp.1, r.meta.offset, r.value(&bytes).unwrap().to_vec())));
        }
        out
    }

    #[test]
    fn queue_size_counts_records_in_batches() {
        let max = |records, bytes| Bound { records, bytes }.batch();
        assert_eq!(max(10_000, 2 << 20), Bound { records: MAX_RECORDS, bytes: MAX_BYTES });
        assert_eq!((max(7, 100), max(0, 0)), (Bound { records: 7, bytes: 100 }, Bound { records: 1, bytes: 1 }));
        let f = TestSource::new();
        let batch = |n: i64, from: i64| {
            let mut b = Batch::default();
            for o in from..from + n {
                f.push(&mut b, 0, o, None, Some(b"v"));
            }
            b
        };
        let (tx, rx) = lane(Bound::records(3));
        assert!(tx.try_send(batch(2, 0)).is_ok());
        assert!(matches!(tx.try_send(batch(2, 2)), Err(TrySendError::Full(_))), "2 + 2 records exceed --queue.size 3");
        assert!(tx.try_send(batch(1, 4)).is_ok());
        assert_eq!(drain(&rx).len(), 3);
        // An empty channel takes a batch however large, or it would never go.
        assert!(tx.try_send(batch(5, 5)).is_ok());
        assert!(matches!(tx.try_send(batch(1, 10)), Err(TrySendError::Full(_))));
        assert_eq!(drain(&rx).len(), 5);
        assert!(tx.try_send(batch(1, 11)).is_ok());
    }

    #[test]
    fn queue_byte_size_bounds_the_bytes_queued() {
        let f = TestSource::new();
        let batch = |value: &[u8], offset: i64| {
            let mut b = Batch::default();
            f.push(&mut b, 0, offset, Some(b"k"), Some(value));
            b
        };
        let (tx, rx) = lane(Bound { records: 1000, bytes: 100 });
        assert!(tx.try_send(batch(&[1; 59], 0)).is_ok(), "60 bytes");
        assert!(matches!(tx.try_send(batch(&[2; 40], 1)), Err(TrySendError::Full(_))), "60 + 41 bytes exceed 100");
        assert!(tx.try_send(batch(&[3; 39], 2)).is_ok(), "60 + 40 bytes fit");
        assert_eq!(drain(&rx).iter().map(|r| r.1).collect::<Vec<_>>(), vec![0, 2]);
        // Received batches free their bytes; an empty channel takes any batch.
        assert!(tx.try_send(batch(&[4; 500], 3)).is_ok());
        assert!(matches!(tx.try_send(batch(&[], 4)), Err(TrySendError::Full(_))));
        assert_eq!(drain(&rx).len(), 1);
        assert!(tx.try_send(batch(&[], 4)).is_ok());
    }

    #[test]
    fn records_go_in_batches_at_the_end_of_a_turn_or_when_full() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(10));
        let mut o = Outbox::new(vec![tx], Bound::records(3), Duration::ZERO, f.metrics.clone());
        for off in 0..4 {
            assert_eq!(push(&mut o, &f, 0, 0, off, None, Some(format!("v{off}").as_bytes())), Outcome::default());
        }
        // The fourth record did not fit a batch of three: the first three went.
        assert_eq!(rx.rx.len(), 1);
        assert_eq!(o.ship_all(), Outcome::default());
        assert_eq!(rx.rx.len(), 2);
        let got = drain(&rx);
        assert_eq!(got.iter().map(|r| r.1).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(got[3].2, b"v3");
        assert_eq!(Metrics::get(&f.metrics.channel_in), 4);
        // Nothing open: another end of turn sends nothing.
        o.ship_all();
        assert!(rx.rx.is_empty());
    }

    #[test]
    fn a_full_channel_holds_batches_in_order_pauses_then_resumes() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(2));
        let mut o = Outbox::new(vec![tx], Bound::records(2), Duration::ZERO, f.metrics.clone());
        push(&mut o, &f, 0, 0, 0, None, Some(b"a"));
        push(&mut o, &f, 0, 1, 0, None, Some(b"b"));
        assert_eq!(o.ship_all(), Outcome::default());
        // The channel is full now: the next batch is held and its partitions paused.
        push(&mut o, &f, 0, 0, 1, None, Some(b"c"));
        push(&mut o, &f, 0, 0, 2, None, Some(b"d"));
        assert_eq!(o.ship_all(), Outcome { pause: vec![tp(0)], holding: vec![0], ..Outcome::default() });
        assert!(o.has_held());
        assert_eq!(o.paused(), vec![tp(0)]);
        // A record that still arrives queues behind the held batch, even
        // though the channel has room by the time it is shipped.
        push(&mut o, &f, 0, 1, 1, None, Some(b"e"));
        assert_eq!(drain(&rx).len(), 2);
        assert_eq!(o.ship_all(), Outcome { pause: vec![tp(1)], ..Outcome::default() });
        assert_eq!(o.retry_held(), Outcome::default(), "room for two records: only the first held batch went");
        assert!(o.has_held());
        assert_eq!(drain(&rx).iter().map(|r| r.2.clone()).collect::<Vec<_>>(), vec![b"c".to_vec(), b"d".to_vec()]);
        assert_eq!(o.retry_held(), Outcome { resume: vec![tp(0), tp(1)], ..Outcome::default() });
        assert!(!o.has_held());
        assert!(o.paused().is_empty());
        assert_eq!(drain(&rx).iter().map(|r| r.2.clone()).collect::<Vec<_>>(), vec![b"e".to_vec()]);
        assert_eq!(Metrics::get(&f.metrics.channel_in), 5);
    }

    /// Partitions paused for a full channel resume once it is at most half
    /// full again, not at the first free slot: each pause and resume costs
    /// librdkafka work per partition, which a channel kept at the brim
    /// would repeat several times a second.
    #[test]
    fn paused_partitions_resume_once_the_channel_is_half_empty() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(4));
        let mut o = Outbox::new(vec![tx], Bound::records(1), Duration::ZERO, f.metrics.clone());
        for offset in 0..4 {
            push(&mut o, &f, 0, 0, offset, None, Some(b"x"));
            assert_eq!(o.ship_all(), Outcome::default());
        }
        push(&mut o, &f, 0, 0, 4, None, Some(b"held"));
        assert_eq!(o.ship_all().pause, vec![tp(0)]);
        // One record taken: the held one goes in, the channel is full again.
        assert!(rx.recv_timeout(Duration::ZERO).is_ok());
        assert_eq!(o.retry_held(), Outcome::default());
        assert!(!o.has_held() && o.has_paused());
        // Three of four queued, then two of four: resumed at half.
        assert!(rx.recv_timeout(Duration::ZERO).is_ok());
        assert_eq!(o.retry_held(), Outcome::default(), "three of four queued: still paused");
        assert!(rx.recv_timeout(Duration::ZERO).is_ok());
        assert_eq!(o.retry_held().resume, vec![tp(0)]);
        assert!(!o.has_paused());
    }

    /// A worker that starts holding has the stream pause every partition
    /// that goes to it, so the stream cannot go on polling what librdkafka
    /// prefetched for them into held batches; all of them resume with the
    /// held batches sent, and a revoked one is given back.
    #[test]
    fn a_worker_that_starts_holding_has_all_its_partitions_paused() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(1));
        let mut o = Outbox::new(vec![tx], Bound::records(1), Duration::ZERO, f.metrics.clone());
        assert_eq!(o.pause_also(0, vec![tp(5)]), Vec::<Tp>::new(), "nothing held: nothing to pause");
        push(&mut o, &f, 0, 0, 0, None, Some(b"fills the channel"));
        assert_eq!(o.ship_all(), Outcome::default());
        push(&mut o, &f, 0, 1, 0, None, Some(b"held"));
        let outcome = o.ship_all();
        assert_eq!((outcome.pause, outcome.holding), (vec![tp(1)], vec![0]), "the first hold names its worker");
        // The stream's assignment for that worker: 0 to 3; 1 is paused already.
        assert_eq!(o.pause_also(0, (0..4).map(tp)), vec![tp(0), tp(2), tp(3)]);
        assert_eq!(o.pause_also(0, (0..4).map(tp)), Vec::<Tp>::new(), "each partition paused once");
        // A second hold of the same worker is not a new start.
        push(&mut o, &f, 0, 1, 1, None, Some(b"held too"));
        assert_eq!(o.ship_all(), Outcome::default());
        // Partition 3 is revoked: resumed before it is given up, no longer ours to resume later.
        let (first, outcome) = o.take_back(Some(&[tp(3)]));
        assert_eq!((first, outcome.resume), (vec![], vec![tp(3)]));
        assert_eq!(drain(&rx).len(), 1);
        let mut resumed = Vec::new();
        while o.has_held() || o.has_paused() {
            resumed.extend(o.retry_held().resume);
            drain(&rx);
        }
        assert_eq!(resumed, vec![tp(1), tp(0), tp(2)]);
        assert!(o.paused().is_empty());
    }

    #[test]
    fn workers_are_independent() {
        let f = TestSource::new();
        let (tx0, rx0) = lane(Bound::records(1));
        let (tx1, rx1) = lane(Bound::records(1));
        let mut o = Outbox::new(vec![tx0, tx1], Bound::records(10), Duration::ZERO, f.metrics.clone());
        push(&mut o, &f, 0, 0, 0, None, Some(b"a"));
        o.ship_all();
        push(&mut o, &f, 0, 0, 1, None, Some(b"b"));
        push(&mut o, &f, 1, 1, 0, None, Some(b"x"));
        // Worker 0 is full, worker 1 is not.
        assert_eq!(o.ship_all().pause, vec![tp(0)]);
        assert_eq!(drain(&rx1).len(), 1);
        assert_eq!(drain(&rx0).len(), 1);
        // The held batch goes; the channel is full again, so partition 0
        // stays paused until it is at most half full.
        assert_eq!(o.retry_held(), Outcome::default());
        assert_eq!(o.paused(), vec![tp(0)]);
        assert_eq!(drain(&rx0)[0].2, b"b");
        assert_eq!(o.retry_held().resume, vec![tp(0)]);
    }

    #[test]
    fn taking_back_returns_each_partitions_first_unsent_offset() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(1));
        let mut o = Outbox::new(vec![tx], Bound::records(2), Duration::ZERO, f.metrics.clone());
        push(&mut o, &f, 0, 0, 0, None, Some(b"sent"));
        o.ship_all();
        for (p, off) in [(0, 1), (1, 0), (0, 2), (1, 1), (0, 3)] {
            push(&mut o, &f, 0, p, off, None, Some(b"x"));
        }
        o.ship_all();
        assert!(o.has_held());
        // Revoking partition 1 takes back its records, held or open, and
        // resumes it before it is given up; partition 0 stays paused behind
        // its own held batch.
        let (first, outcome) = o.take_back(Some(&[tp(1)]));
        assert_eq!((first, outcome.resume), (vec![(tp(1), 0)], vec![tp(1)]));
        assert_eq!(o.paused(), vec![tp(0)]);
        let mut got = drain(&rx);
        let mut resumed = Vec::new();
        while o.has_held() || o.has_paused() {
            resumed.extend(o.retry_held().resume);
            got.extend(drain(&rx));
        }
        let got: Vec<_> = got.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(got, vec![(0, 0), (0, 1), (0, 2), (0, 3)]);
        assert_eq!(resumed, vec![tp(0)], "partition 1 is no longer ours to resume");
        // Shutting down takes back what was never sent and lets go of the channel.
        push(&mut o, &f, 0, 0, 4, None, Some(b"y"));
        push(&mut o, &f, 0, 0, 5, None, Some(b"z"));
        assert_eq!(o.close(), vec![(tp(0), 4)]);
        assert!(!o.has_held());
        drop(o);
        assert!(rx.rx.recv().is_err(), "the channel is disconnected once the outbox let go");
    }

    /// Revoking the partition of the only batch still held must resume the
    /// partitions that stay ours and are paused: nothing held is left to
    /// resume them later, and librdkafka keeps an application pause across
    /// unassign and assign (it resets only its own), so the revoked ones
    /// must be resumed too before they are given up.
    #[test]
    fn revoking_the_last_held_batch_resumes_what_stays_paused() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(1));
        let mut o = Outbox::new(vec![tx], Bound::records(1), Duration::ZERO, f.metrics.clone());
        push(&mut o, &f, 0, 2, 0, None, Some(b"fills the channel"));
        assert_eq!(o.ship_all(), Outcome::default());
        // p0's batch is held, then p1's: both paused.
        push(&mut o, &f, 0, 0, 0, None, Some(b"p0"));
        assert_eq!(o.ship_all().pause, vec![tp(0)]);
        push(&mut o, &f, 0, 1, 0, None, Some(b"p1"));
        assert_eq!(o.ship_all().pause, vec![tp(1)]);
        // One record drained: p0's batch goes, p1's is still held, so
        // nothing resumes yet (p0 and p1 share a worker).
        assert_eq!(drain(&rx).len(), 1);
        assert_eq!(o.retry_held(), Outcome::default());
        assert_eq!(o.paused(), vec![tp(0), tp(1)]);
        // p1 is revoked: its held batch is taken back, nothing is held any more.
        let (first, outcome) = o.take_back(Some(&[tp(1)]));
        assert_eq!(first, vec![(tp(1), 0)]);
        assert!(!o.has_held());
        let mut resumed = outcome.resume.clone();
        resumed.sort();
        assert_eq!(resumed, vec![tp(0), tp(1)], "p0 stays ours and p1 is given up: both must be resumed in librdkafka now");
        assert!(o.paused().is_empty(), "what the stream believes paused: nothing");
        assert_eq!(o.retry_held(), Outcome::default());
    }

    #[test]
    fn a_stream_waits_for_room_before_it_pauses() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(1));
        // Generous: the test shows the wait ends when room is made, not when it times out.
        let mut o = Outbox::new(vec![tx], Bound::records(1), Duration::from_secs(60), f.metrics.clone());
        push(&mut o, &f, 0, 0, 0, None, Some(b"a"));
        assert_eq!(o.ship_all(), Outcome::default());
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            // Takes the first batch only once the stream is waiting for room.
            while rx.room.waiting.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            let got: Vec<i64> = (0..2).map(|_| rx.recv_timeout(Duration::from_secs(60)).unwrap().records().next().unwrap().0.meta.offset).collect();
            done_tx.send(got).unwrap();
        });
        let started = Instant::now();
        push(&mut o, &f, 0, 0, 1, None, Some(b"b"));
        assert_eq!(o.ship_all(), Outcome::default(), "sent once the worker made room: nothing held, nothing paused");
        assert!(!o.has_held());
        assert!(started.elapsed() < Duration::from_secs(60));
        drop(o);
        assert_eq!(done_rx.recv().unwrap(), vec![0, 1]);
        worker.join().unwrap();
    }

    #[test]
    fn gone_workers_are_reported() {
        let f = TestSource::new();
        let (tx, rx) = lane(Bound::records(1));
        drop(rx);
        let mut o = Outbox::new(vec![tx], Bound::records(2), Duration::ZERO, f.metrics.clone());
        push(&mut o, &f, 0, 0, 0, None, Some(b"a"));
        assert!(o.ship_all().disconnected);
        assert_eq!(o.close(), vec![(tp(0), 0)], "never sent, so never committed");
    }
}
