//! The acknowledgement table of a producer worker: which records are in
//! flight, per source partition, and how their delivery reports settle
//! offsets in the stream's tracker.
//!
//! Nothing is stored per record: a record's opaque names its partition's
//! entry and its offset from the entry's base (see [`Deliveries`]).
//! Acknowledgements may come back in any order, across partitions and
//! (for records sent again alone) within one; each settles exactly its own
//! offset, and the tracker never commits past an offset still in flight.
//! Acknowledged records are settled a run of one partition at a time
//! ([`Deliveries::flush`]); failed ones one by one, by the failure rules
//! (`failures`) through [`Deliveries::settle`].

use std::sync::{Arc, Mutex};

use crate::engine::pipeline::ack_hooks::AckHook;
use crate::engine::pipeline::batch::PartitionRoute;
use crate::engine::pipeline::offsets::AckHandle;
use crate::fxhash::FxHashMap;
use crate::ops::metrics::{Metrics, TopicMetrics};

/// How a record's opaque splits: the entry of its partition in the
/// worker's [`Deliveries`] above, its offset from the entry's base below.
const OFFSET_BITS: u32 = 48;
const OFFSET_MASK: usize = (1 << OFFSET_BITS) - 1;
const MAX_ROUTES: usize = 1 << (usize::BITS - OFFSET_BITS);
/// The table is swept for idle entries when it grows past a power of two
/// from here on, so entries of revoked assignments do not pile up.
const SWEEP_FROM: usize = 64;

/// What the delivery reports of a worker's records in flight settle, one
/// entry per source partition (and assignment), not one per record.
///
/// librdkafka carries one pointer-sized opaque per record to its delivery
/// report. It holds the index of the record's partition entry (high 16
/// bits) and the record's offset from that entry's base offset (low 48
/// bits), so nothing is stored per record. A table with a slot per record
/// in flight (the design before this one) cost two cache misses per record,
/// one to fill the slot and one to empty it, as the slots of a hundred
/// thousand records in flight did not stay in cache: 8% of the mirror's
/// cycles at 100 B in `perf`. A record of an offset too far past its
/// entry's base gets a new entry; while all 65,536 entries have records in
/// flight (that many partitions per worker), `put` refuses and the worker
/// serves reports and tries again, as with a full send buffer.
#[derive(Default)]
pub struct Deliveries {
    table: Mutex<RouteTable>,
}

/// A record the target acknowledged, settled with the rest of its round.
struct Delivered {
    route: usize,
    offset: i64,
    /// Where the target put it.
    down: i64,
    bytes: u64,
    timestamp: Option<i64>,
}

/// A partition's assignment, by identity: its tracker and topic name (by
/// address: the entry holds both, so neither address can be reused while
/// the key is in the table), partition and epoch.
type RouteKey = (usize, usize, i32, u64);

fn key_of(ack: &AckHandle) -> RouteKey {
    (Arc::as_ptr(&ack.tracker) as usize, Arc::as_ptr(&ack.tp.0) as *const u8 as usize, ack.tp.1, ack.epoch)
}

struct Route {
    /// The partition's handle; its offset is the entry's base.
    ack: AckHandle,
    stats: Arc<TopicMetrics>,
    /// What its acknowledgements feed besides the tracker, if anything.
    ack_hook: Option<Arc<dyn AckHook>>,
    /// Records sent through this entry whose report has not come back.
    in_flight: usize,
}

impl Route {
    fn delta(&self, offset: i64) -> Option<usize> {
        usize::try_from(offset.checked_sub(self.ack.offset)?).ok().filter(|d| *d <= OFFSET_MASK)
    }
}

#[derive(Default)]
struct RouteTable {
    routes: Vec<Option<Route>>,
    free: Vec<usize>,
    by_key: FxHashMap<RouteKey, usize>,
    /// The entry of the last record: records come in runs of one partition.
    last: usize,
    /// Acknowledged since the last [`Deliveries::flush`], in report order.
    /// Their entries still count them in flight, so none is swept meanwhile.
    pending: Vec<Delivered>,
}

impl RouteTable {
    fn find(&self, key: RouteKey, offset: i64) -> Option<(usize, usize)> {
        let fits = |i: usize| {
            let r = self.routes.get(i)?.as_ref()?;
            (key_of(&r.ack) == key).then(|| r.delta(offset)).flatten().map(|d| (i, d))
        };
        fits(self.last).or_else(|| fits(*self.by_key.get(&key)?))
    }

    fn insert(&mut self, key: RouteKey, route: &PartitionRoute, base: i64) -> Option<usize> {
        let len = self.routes.len();
        if self.free.is_empty() && (len >= MAX_ROUTES || (len >= SWEEP_FROM && len.is_power_of_two())) {
            self.sweep();
        }
        let route = Route { ack: AckHandle { offset: base, ..route.ack.clone() }, stats: route.stats.clone(), ack_hook: route.ack_hook.clone(), in_flight: 0 };
        let i = match self.free.pop() {
            Some(i) => {
                self.routes[i] = Some(route);
                i
            }
            None if len < MAX_ROUTES => {
                self.routes.push(Some(route));
                len
            }
            None => return None,
        };
        self.by_key.insert(key, i);
        Some(i)
    }

    /// Frees the entries with nothing in flight.
    fn sweep(&mut self) {
        for i in 0..self.routes.len() {
            if self.routes[i].as_ref().is_some_and(|r| r.in_flight == 0) {
                let key = key_of(&self.routes[i].take().expect("checked above").ack);
                if self.by_key.get(&key) == Some(&i) {
                    self.by_key.remove(&key);
                }
                self.free.push(i);
            }
        }
    }
}

impl Deliveries {
    /// The opaque of a record of `route`'s partition at `offset`, counted in flight until
    /// [`settle`](Self::settle) takes it back; None while no entry is free.
    pub(super) fn put(&self, route: &PartitionRoute, offset: i64) -> Option<usize> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let key = key_of(&route.ack);
        let (i, delta) = match t.find(key, offset) {
            Some(found) => found,
            None => (t.insert(key, route, offset)?, 0),
        };
        t.last = i;
        t.routes[i].as_mut().expect("found or inserted").in_flight += 1;
        Some(i << OFFSET_BITS | delta)
    }

    /// Takes back a record put in flight and hands `f` its partition's
    /// handle, its offset and its topic's counters; None for an opaque that
    /// is not in flight, which settles nothing.
    pub(super) fn settle<R>(&self, opaque: usize, f: impl FnOnce(&AckHandle, i64, &TopicMetrics) -> R) -> Option<R> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let r = t.routes.get_mut(opaque >> OFFSET_BITS)?.as_mut().filter(|r| r.in_flight > 0)?;
        r.in_flight -= 1;
        Some(f(&r.ack, r.ack.offset + (opaque & OFFSET_MASK) as i64, &r.stats))
    }

    /// A record the target acknowledged, settled and counted with the rest
    /// of its round by [`flush`](Self::flush); false for an opaque not in
    /// flight, which settles nothing.
    pub(super) fn delivered(&self, opaque: usize, bytes: u64, timestamp: Option<i64>, down: i64) -> bool {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let route = opaque >> OFFSET_BITS;
        let Some(r) = t.routes.get(route).and_then(Option::as_ref).filter(|r| r.in_flight > 0) else { return false };
        let offset = r.ack.offset + (opaque & OFFSET_MASK) as i64;
        t.pending.push(Delivered { route, offset, down, bytes, timestamp });
        true
    }

    /// Settles and counts the records acknowledged since the last call: one
    /// tracker lock, one clock reading and one bump of each counter per run
    /// of a partition's records, not per record.
    pub(super) fn flush(&self, metrics: &Metrics) {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if t.pending.is_empty() {
            return;
        }
        let now = crate::ops::metrics::now_ms();
        let mut pending = std::mem::take(&mut t.pending);
        for run in pending.chunk_by(|a, b| a.route == b.route) {
            let r = t.routes[run[0].route].as_mut().expect("counted in flight, so never swept");
            r.in_flight -= run.len();
            if let Some(hook) = &r.ack_hook {
                // Before the offsets settle: a commit never runs ahead of the syncs it needs.
                hook.acknowledged(&mut run.iter().map(|d| (d.offset, d.down)));
            }
            r.ack.done_all(run.iter().map(|d| d.offset));
            let (records, bytes) = (run.len() as u64, run.iter().map(|d| d.bytes).sum());
            Metrics::add(&metrics.produced, records);
            Metrics::add(&metrics.produced_bytes, bytes);
            Metrics::add(&r.stats.produced, records);
            Metrics::add(&r.stats.produced_bytes, bytes);
            // MirrorMaker 2's replication latency: now minus each record's source timestamp.
            let mut latency = crate::ops::sampled::Batch::default();
            let mut last = None;
            for ts in run.iter().filter_map(|d| d.timestamp) {
                let l = now.saturating_sub(ts).max(0);
                latency.add(l as f64);
                last = Some(l);
            }
            r.stats.acked(r.ack.tp.1, records, &latency, last, now);
        }
        pending.clear();
        t.pending = pending;
    }

    /// Records in flight.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.table.lock().unwrap().routes.iter().flatten().map(|r| r.in_flight).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pipeline::offsets::{OffsetTracker, Tp};

    /// An empty delivery table, its offset tracker and one topic's counters.
    fn fixture() -> (Deliveries, Arc<OffsetTracker>, Arc<TopicMetrics>) {
        (Deliveries::default(), OffsetTracker::new(), Arc::new(Metrics::default()).topic(0, "t"))
    }

    /// Puts a record in flight at its handle's offset.
    fn put(d: &Deliveries, ack: &AckHandle, stats: &Arc<TopicMetrics>) -> Option<usize> {
        let route = PartitionRoute { ack: ack.clone(), target: Arc::from("t"), stamp: None, stats: stats.clone(), ack_hook: None };
        d.put(&route, ack.offset)
    }

    fn ack(tracker: &Arc<OffsetTracker>, tp: &Tp, offset: i64) -> AckHandle {
        tracker.register(tp, offset)
    }

    /// Settles an opaque as delivered; (partition, offset) it settled.
    fn settle(d: &Deliveries, opaque: usize) -> Option<(i32, i64)> {
        d.settle(opaque, |ack, offset, _| {
            ack.done_at(offset);
            (ack.tp.1, offset)
        })
    }

    #[test]
    fn an_opaque_settles_its_own_partition_and_offset_once() {
        let (d, tracker, stats) = fixture();
        let (p0, p1): (Tp, Tp) = ((Arc::from("t"), 0), (Arc::from("t"), 1));
        let a = put(&d, &ack(&tracker, &p0, 0), &stats).unwrap();
        let b = put(&d, &ack(&tracker, &p0, 1), &stats).unwrap();
        let c = put(&d, &ack(&tracker, &p1, 7), &stats).unwrap();
        // Offsets 5 to 999 of partition 0 never came (compaction): the gap is kept.
        let e = put(&d, &ack(&tracker, &p0, 1000), &stats).unwrap();
        assert_eq!(d.in_flight(), 4);
        assert_eq!(d.table.lock().unwrap().routes.len(), 2, "one entry per partition, not per record");
        assert_eq!(settle(&d, b), Some((0, 1)), "reports come back in any order");
        assert_eq!(settle(&d, c), Some((1, 7)));
        assert_eq!(settle(&d, e), Some((0, 1000)));
        assert_eq!(settle(&d, a), Some((0, 0)));
        assert_eq!(d.in_flight(), 0);
        // A report for an entry with nothing in flight, or none at all, settles nothing.
        assert_eq!(settle(&d, a), None);
        assert_eq!(settle(&d, 99 << OFFSET_BITS), None);
        assert!(tracker.committable().iter().any(|(tp, o)| tp.1 == 0 && *o == 1001), "{:?}", tracker.committable());
    }

    #[test]
    fn a_new_assignment_or_an_offset_out_of_reach_gets_its_own_entry() {
        let (d, tracker, stats) = fixture();
        let tp: Tp = (Arc::from("t"), 0);
        let old = ack(&tracker, &tp, 10);
        let a = put(&d, &old, &stats).unwrap();
        // Past 2^48 from the entry's base: another entry, same partition.
        let far = AckHandle { offset: 10 + (1 << OFFSET_BITS), ..old.clone() };
        let b = put(&d, &far, &stats).unwrap();
        assert_ne!(a >> OFFSET_BITS, b >> OFFSET_BITS);
        assert_eq!(settle(&d, b), Some((0, 10 + (1 << OFFSET_BITS))));
        // Revoked and assigned again: a new epoch, a new entry; the old
        // epoch's report still names the old epoch.
        tracker.remove(std::slice::from_ref(&tp));
        let new = ack(&tracker, &tp, 11);
        assert_ne!(new.epoch, old.epoch);
        let c = put(&d, &new, &stats).unwrap();
        assert_ne!(a >> OFFSET_BITS, c >> OFFSET_BITS);
        assert_eq!(d.settle(a, |ack, o, _| (ack.epoch, o)), Some((old.epoch, 10)));
        assert_eq!(d.settle(c, |ack, o, _| (ack.epoch, o)), Some((new.epoch, 11)));
    }

    #[test]
    fn acknowledged_records_settle_and_count_when_their_round_is_flushed() {
        let d = Deliveries::default();
        let metrics = Metrics::default();
        let tracker = OffsetTracker::new();
        let stats = metrics.topic(0, "t");
        let (p0, p1): (Tp, Tp) = ((Arc::from("t"), 0), (Arc::from("t"), 1));
        let sent: Vec<usize> = [(&p0, 0), (&p0, 1), (&p1, 0), (&p0, 2)].iter().map(|(tp, o)| put(&d, &ack(&tracker, tp, *o), &stats).unwrap()).collect();
        let written = crate::ops::metrics::now_ms() - 60_000;
        for (i, opaque) in sent.iter().enumerate().take(3) {
            assert!(d.delivered(*opaque, 10 + i as u64, Some(written), i as i64));
        }
        // Nothing is settled or counted before the flush, and nothing swept.
        d.table.lock().unwrap().sweep();
        assert_eq!(d.in_flight(), 4);
        assert!(tracker.committable().iter().all(|(_, o)| *o == 0), "{:?}", tracker.committable());
        assert_eq!(Metrics::get(&metrics.produced), 0);
        d.flush(&metrics);
        assert_eq!(d.in_flight(), 1);
        let mut committable = tracker.committable();
        committable.sort_by_key(|(tp, _)| tp.1);
        assert_eq!(committable.iter().map(|(tp, o)| (tp.1, *o)).collect::<Vec<_>>(), vec![(0, 2), (1, 1)], "offset 2 of partition 0 is still in flight");
        assert_eq!((Metrics::get(&metrics.produced), Metrics::get(&metrics.produced_bytes)), (3, 33));
        assert_eq!((Metrics::get(&stats.produced), Metrics::get(&stats.produced_bytes)), (3, 33));
        assert!(stats.latencies().iter().all(|(_, l)| (60_000..120_000).contains(l)), "{:?}", stats.latencies());
        assert_eq!(stats.latencies().len(), 2);
        // A flush with nothing new changes nothing.
        d.flush(&metrics);
        assert_eq!(Metrics::get(&metrics.produced), 3);
        assert!(!d.delivered(99 << OFFSET_BITS, 1, None, 0), "an unknown record is refused");
        assert!(d.delivered(sent[3], 1, None, 3));
        d.flush(&metrics);
        assert_eq!(d.in_flight(), 0);
        assert!(tracker.committable().iter().any(|(tp, o)| tp.1 == 0 && *o == 3));
    }

    #[test]
    fn idle_entries_are_swept_and_reused() {
        let (d, tracker, stats) = fixture();
        let busy: Tp = (Arc::from("busy"), 0);
        let held = put(&d, &ack(&tracker, &busy, 0), &stats).unwrap();
        // Partitions that come and go (say, across rebalances) leave idle entries behind.
        for p in 0..10 * SWEEP_FROM as i32 {
            let o = put(&d, &ack(&tracker, &(Arc::from("t"), p), 0), &stats).unwrap();
            assert!(settle(&d, o).is_some());
        }
        let len = d.table.lock().unwrap().routes.len();
        assert!(len <= SWEEP_FROM + 1, "the table grew to {len} entries for one record in flight");
        assert_eq!(settle(&d, held), Some((0, 0)), "an entry in flight is never swept");
    }
}
