//! Offset tracking: which source offsets are safe to commit.
//!
//! As in Brooklin's flushless mode and Vector's Kafka source, each source
//! partition keeps the offsets it has handed to the producers, in order.
//! Acknowledgements arrive out of order (one source partition fans out to
//! several target partitions), so the committable offset is the lowest offset
//! still in flight, or one past the last offset seen when nothing is in
//! flight. An out-of-order ack never moves the watermark past a gap, and a
//! record that failed for good in abort mode stays in flight forever, so
//! nothing at or after it is ever committed.
//!
//! Every assignment of a partition gets a fresh epoch; acks for an older
//! epoch (records still in flight when the partition was revoked) are
//! ignored, so a late ack can't touch a newer owner's bookkeeping.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::fxhash::FxHashMap;

static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

/// A source partition: topic name and partition number.
pub type Tp = (Arc<str>, i32);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Sending,
    Done,
    /// Rejected for good in abort mode: blocks the watermark forever but is
    /// no longer awaited.
    Failed,
}

#[derive(Debug)]
struct PartitionState {
    epoch: u64,
    /// Offsets handed to producers, ascending, with their state.
    in_flight: VecDeque<(i64, State)>,
    /// One past the highest offset registered.
    next: i64,
    /// The last offset committed (or known committed) for this partition.
    committed: Option<i64>,
    /// How many entries of `in_flight` are `Sending`: kept as a count, since
    /// every ack asks and scanning tens of thousands of entries per ack cost
    /// an eighth of the mirror's CPU in a profile.
    sending: usize,
}

impl PartitionState {
    fn watermark(&self) -> i64 {
        self.in_flight.front().map(|(o, _)| *o).unwrap_or(self.next)
    }

    fn pending(&self) -> usize {
        self.sending
    }
}

/// Where `offset` is among a partition's tracked offsets. Offsets are
/// usually consecutive, so its distance from the first is its place; where
/// compaction or transaction markers left gaps, a binary search finds it
/// (the search alone was 1.5% of the instructions per 100 B record).
fn position(in_flight: &VecDeque<(i64, State)>, offset: i64) -> Option<usize> {
    let first = in_flight.front()?.0;
    let guess = usize::try_from(offset.checked_sub(first)?).ok()?;
    if in_flight.get(guess).is_some_and(|(o, _)| *o == offset) {
        return Some(guess);
    }
    in_flight.binary_search_by_key(&offset, |(o, _)| *o).ok()
}

/// The source handed out `offset`, below one already seen, within one
/// assignment: its log was truncated (an unclean leader election, a topic
/// made again) and librdkafka reset the position. Tracking starts again
/// there, as for a new assignment: records from before are no longer
/// awaited and their acks settle nothing (a new epoch), and the commit may go
/// back with the log. Left in place, the out-of-order entry would never be
/// found by its ack: commits would stop and every drain would time out.
fn rewind(tp: &Tp, st: &mut PartitionState, offset: i64) {
    log::warn!(
        "source partition {}-{} went back from offset {} to {offset} (its log was truncated or the topic made again); \
         tracking restarts at {offset}: records from {offset} on are mirrored again, and {} records from before that are no longer awaited",
        tp.0,
        tp.1,
        st.next,
        st.sending
    );
    st.epoch = NEXT_EPOCH.fetch_add(1, Ordering::Relaxed);
    st.in_flight.clear();
    st.sending = 0;
    st.committed = None;
}

/// The tracker of one consumer stream: the partitions its consumer owns.
#[derive(Debug, Default)]
pub struct OffsetTracker {
    parts: Mutex<FxHashMap<Tp, PartitionState>>,
    drained: Condvar,
}

/// Where to find a record's bookkeeping when its ack comes back.
#[derive(Debug, Clone)]
pub struct AckHandle {
    pub tracker: Arc<OffsetTracker>,
    pub tp: Tp,
    pub offset: i64,
    pub epoch: u64,
}

impl AckHandle {
    /// The target has the record (or, in skip mode, it was dropped for good).
    pub fn done(&self) {
        self.done_at(self.offset);
    }

    /// The target rejected the record for good and the mirror is aborting:
    /// nothing at or after this offset is ever committed.
    pub fn failed(&self) {
        self.failed_at(self.offset);
    }

    /// [`done`](Self::done) for another record of the same partition and
    /// assignment: a producer worker keeps one handle per partition, not
    /// one per record (see `producer::Deliveries`).
    pub fn done_at(&self, offset: i64) {
        self.tracker.settle(&self.tp, offset, self.epoch, State::Done);
    }

    /// [`done_at`](Self::done_at) for several records at once.
    pub fn done_all(&self, offsets: impl IntoIterator<Item = i64>) {
        self.tracker.settle_all(&self.tp, self.epoch, offsets, State::Done);
    }

    /// [`failed`](Self::failed) for another record of the same partition and assignment.
    pub fn failed_at(&self, offset: i64) {
        self.tracker.settle(&self.tp, offset, self.epoch, State::Failed);
    }
}

impl OffsetTracker {
    pub fn new() -> Arc<Self> {
        Arc::new(OffsetTracker::default())
    }

    /// Records that `offset` of `tp` is about to be handed to a producer.
    /// Offsets of one partition ascend; one below those seen restarts the
    /// partition's tracking (see [`rewind`]).
    pub fn register(self: &Arc<Self>, tp: &Tp, offset: i64) -> AckHandle {
        let epoch = self.track(tp, offset);
        AckHandle { tracker: self.clone(), tp: tp.clone(), offset, epoch }
    }

    /// [`register`](Self::register) without a handle: the partition's
    /// current epoch, which says whether a handle made earlier still holds.
    pub fn track(&self, tp: &Tp, offset: i64) -> u64 {
        let mut parts = self.parts.lock().unwrap();
        // Looked up before `entry`, which takes an owned key: cloning the
        // topic's Arc for every record is two atomic operations on a count
        // the producer workers also touch.
        let st = match parts.get_mut(tp) {
            Some(st) => st,
            None => parts.entry(tp.clone()).or_insert_with(|| PartitionState {
                epoch: NEXT_EPOCH.fetch_add(1, Ordering::Relaxed),
                in_flight: VecDeque::new(),
                next: offset,
                committed: None,
                sending: 0,
            }),
        };
        if offset < st.next {
            rewind(tp, st, offset);
            self.drained.notify_all();
        }
        st.in_flight.push_back((offset, State::Sending));
        st.sending += 1;
        st.next = offset + 1;
        st.epoch
    }

    fn settle(&self, tp: &Tp, offset: i64, epoch: u64, state: State) {
        self.settle_all(tp, epoch, std::iter::once(offset), state);
    }

    /// Settles several offsets of one partition under one lock: the
    /// producer workers settle a round of reports at a time, so the lock's
    /// line does not go back and forth with the stream's for every record.
    fn settle_all(&self, tp: &Tp, epoch: u64, offsets: impl IntoIterator<Item = i64>, state: State) {
        let mut parts = self.parts.lock().unwrap();
        let Some(st) = parts.get_mut(tp) else { return };
        if st.epoch != epoch {
            return;
        }
        for offset in offsets {
            if let Some(i) = position(&st.in_flight, offset) {
                if st.in_flight[i].1 == State::Sending {
                    st.sending -= 1;
                }
                st.in_flight[i].1 = state;
            }
        }
        while st.in_flight.front().is_some_and(|(_, s)| *s == State::Done) {
            st.in_flight.pop_front();
        }
        if st.pending() == 0 {
            self.drained.notify_all();
        }
    }

    /// Offsets to commit now: per partition, the watermark, where it moved
    /// past what was last committed.
    pub fn committable(&self) -> Vec<(Tp, i64)> {
        let parts = self.parts.lock().unwrap();
        parts
            .iter()
            .filter_map(|(tp, st)| {
                let w = st.watermark();
                (st.committed.is_none_or(|c| w > c)).then(|| (tp.clone(), w))
            })
            .collect()
    }

    /// The same, restricted to the given partitions (used on revocation).
    pub fn committable_for(&self, tps: &[Tp]) -> Vec<(Tp, i64)> {
        self.committable().into_iter().filter(|(tp, _)| tps.contains(tp)).collect()
    }

    /// Remembers a successful commit so it is not repeated.
    /// Each partition's last committed offset, where one is known.
    pub fn committed_offsets(&self) -> FxHashMap<Tp, i64> {
        let parts = self.parts.lock().unwrap();
        parts.iter().filter_map(|(tp, st)| st.committed.map(|c| (tp.clone(), c))).collect()
    }

    pub fn mark_committed(&self, done: &[(Tp, i64)]) {
        let mut parts = self.parts.lock().unwrap();
        for (tp, off) in done {
            if let Some(st) = parts.get_mut(tp) {
                st.committed = Some(st.committed.map_or(*off, |c| c.max(*off)));
            }
        }
    }

    /// Takes back offsets from `from` on that were registered but never
    /// handed to a producer (held back by backpressure when the partition
    /// was revoked or the mirror stopped). The watermark falls back to
    /// `from`, so they are read again by whoever owns the partition next.
    pub fn abandon(&self, tp: &Tp, from: i64) {
        let mut parts = self.parts.lock().unwrap();
        if let Some(st) = parts.get_mut(tp) {
            while st.in_flight.back().is_some_and(|(o, _)| *o >= from) {
                if let Some((_, State::Sending)) = st.in_flight.pop_back() {
                    st.sending -= 1;
                }
            }
            st.next = st.next.min(from);
        }
        self.drained.notify_all();
    }

    /// Forgets partitions this stream no longer owns. Acks still in flight
    /// for them are ignored from now on.
    pub fn remove(&self, tps: &[Tp]) {
        let mut parts = self.parts.lock().unwrap();
        for tp in tps {
            parts.remove(tp);
        }
        self.drained.notify_all();
    }

    /// Records handed to producers and not yet acknowledged, over the given
    /// partitions (all when `None`).
    pub fn in_flight(&self, tps: Option<&[Tp]>) -> usize {
        let parts = self.parts.lock().unwrap();
        parts.iter().filter(|(tp, _)| tps.is_none_or(|t| t.contains(tp))).map(|(_, st)| st.pending()).sum()
    }

    /// Waits until nothing is in flight for the given partitions (all when
    /// `None`) or the deadline passes. Returns whether it drained.
    pub fn wait_drained(&self, tps: Option<&[Tp]>, deadline: Instant) -> bool {
        let mut parts = self.parts.lock().unwrap();
        loop {
            let busy = parts.iter().any(|(tp, st)| tps.is_none_or(|t| t.contains(tp)) && st.pending() > 0);
            if !busy {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            // Wake at least every 100 ms: a stream may also need to poll its consumer.
            let wait = (deadline - now).min(std::time::Duration::from_millis(100));
            parts = self.drained.wait_timeout(parts, wait).unwrap().0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tp(t: &str, p: i32) -> Tp {
        (Arc::from(t), p)
    }

    #[test]
    fn offsets_are_found_with_and_without_gaps() {
        let q: VecDeque<(i64, State)> = [10, 11, 12, 15, 16, 20].iter().map(|o| (*o, State::Sending)).collect();
        for (i, (o, _)) in q.iter().enumerate() {
            assert_eq!(position(&q, *o), Some(i), "offset {o}");
        }
        for missing in [9, 13, 14, 17, 21, -1, i64::MAX] {
            assert_eq!(position(&q, missing), None, "offset {missing}");
        }
        assert_eq!(position(&VecDeque::new(), 10), None);
    }

    #[test]
    fn nothing_registered_nothing_to_commit() {
        let t = OffsetTracker::new();
        assert!(t.committable().is_empty());
    }

    #[test]
    fn in_order_acks_move_the_watermark() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        let hs: Vec<_> = (10..13).map(|o| t.register(&a, o)).collect();
        assert_eq!(t.committable(), vec![(a.clone(), 10)]);
        hs[0].done();
        assert_eq!(t.committable(), vec![(a.clone(), 11)]);
        hs[1].done();
        hs[2].done();
        assert_eq!(t.committable(), vec![(a.clone(), 13)]);
        assert_eq!(t.in_flight(None), 0);
    }

    #[test]
    fn out_of_order_acks_never_skip_a_gap() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        let hs: Vec<_> = (0..5).map(|o| t.register(&a, o)).collect();
        hs[4].done();
        hs[2].done();
        hs[1].done();
        // 0 is still in flight: nothing past it may be committed.
        assert_eq!(t.committable(), vec![(a.clone(), 0)]);
        hs[0].done();
        // 3 is still in flight.
        assert_eq!(t.committable(), vec![(a.clone(), 3)]);
        hs[3].done();
        assert_eq!(t.committable(), vec![(a.clone(), 5)]);
    }

    #[test]
    fn offset_gaps_from_compaction_are_fine() {
        let t = OffsetTracker::new();
        let a = tp("a", 1);
        let h1 = t.register(&a, 100);
        let h2 = t.register(&a, 105);
        h2.done();
        assert_eq!(t.committable(), vec![(a.clone(), 100)]);
        h1.done();
        assert_eq!(t.committable(), vec![(a.clone(), 106)]);
    }

    #[test]
    fn a_failed_record_blocks_the_watermark_forever() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        let h0 = t.register(&a, 0);
        let h1 = t.register(&a, 1);
        let h2 = t.register(&a, 2);
        h0.done();
        h2.done();
        assert_eq!(t.in_flight(None), 1);
        h1.failed();
        assert_eq!(t.committable(), vec![(a.clone(), 1)]);
        // Failed records are not awaited, so a drain doesn't hang on them.
        assert_eq!(t.in_flight(None), 0);
        assert!(t.wait_drained(None, Instant::now()));
        t.register(&a, 3).done();
        assert_eq!(t.committable(), vec![(a, 1)]);
    }

    #[test]
    fn committed_offsets_are_not_repeated() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        t.register(&a, 0).done();
        let c = t.committable();
        assert_eq!(c, vec![(a.clone(), 1)]);
        t.mark_committed(&c);
        assert!(t.committable().is_empty());
        t.register(&a, 1).done();
        assert_eq!(t.committable(), vec![(a, 2)]);
    }

    #[test]
    fn partitions_are_independent_and_revocation_forgets() {
        let t = OffsetTracker::new();
        let (a, b) = (tp("a", 0), tp("a", 1));
        let ha = t.register(&a, 0);
        t.register(&b, 7).done();
        assert_eq!(t.committable_for(std::slice::from_ref(&b)), vec![(b.clone(), 8)]);
        assert_eq!(t.in_flight(Some(std::slice::from_ref(&a))), 1);
        assert_eq!(t.in_flight(Some(std::slice::from_ref(&b))), 0);
        t.remove(std::slice::from_ref(&a));
        // A late ack from the old assignment is ignored.
        ha.done();
        assert_eq!(t.committable(), vec![(b, 8)]);
    }

    #[test]
    fn abandoned_records_are_not_committed_nor_awaited() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        t.register(&a, 0).done();
        let _held1 = t.register(&a, 1);
        let _held2 = t.register(&a, 2);
        t.abandon(&a, 1);
        assert_eq!(t.committable(), vec![(a.clone(), 1)]);
        assert!(t.wait_drained(None, Instant::now()));
    }

    #[test]
    fn a_stale_epoch_ack_does_not_touch_a_new_assignment() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        let old = t.register(&a, 5);
        t.remove(std::slice::from_ref(&a));
        let _new = t.register(&a, 5);
        old.done();
        assert_eq!(t.committable(), vec![(a, 5)]);
    }

    /// After log truncation on the source (an unclean leader election, or a
    /// topic deleted and made again), librdkafka resets the position and
    /// hands out offsets below those already seen, within one assignment.
    #[test]
    fn an_offset_that_goes_backwards_restarts_the_partitions_tracking() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        let old: Vec<_> = (100..103).map(|o| t.register(&a, o)).collect();
        old[0].done();
        t.mark_committed(&t.committable());
        assert_eq!(t.committable(), vec![], "101 committed");
        // Offsets 101 and 102 are still in flight when the log is truncated
        // and the consumer goes back to 40.
        let new = t.register(&a, 40);
        assert_ne!(new.epoch, old[1].epoch, "a new epoch: acks of records from before the rewind settle nothing");
        assert_eq!(t.in_flight(None), 1, "records from before the rewind are no longer awaited");
        old[1].done();
        old[2].done();
        assert_eq!(t.committable(), vec![(a.clone(), 40)], "only the new record counts");
        new.done();
        let next = t.register(&a, 41);
        // Committing goes backwards with the log: 41 < 101.
        assert_eq!(t.committable(), vec![(a.clone(), 41)]);
        assert!(!t.wait_drained(Some(std::slice::from_ref(&a)), Instant::now() + Duration::from_millis(20)), "41 is in flight");
        next.done();
        assert!(t.wait_drained(Some(&[a]), Instant::now() + Duration::from_secs(30)), "nothing from before the rewind holds the drain");
    }

    #[test]
    fn wait_drained_returns_when_acked_from_another_thread() {
        let t = OffsetTracker::new();
        let a = tp("a", 0);
        let h = t.register(&a, 0);
        let worker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            h.done();
        });
        assert!(t.wait_drained(None, Instant::now() + Duration::from_secs(30)));
        worker.join().unwrap();
        let _stuck = t.register(&a, 1);
        assert!(!t.wait_drained(Some(&[a]), Instant::now() + Duration::from_millis(50)));
    }
}
