//! What a consumer stream hands a producer worker: a batch of records,
//! their keys and values copied into one buffer.
//!
//! Records cross the channel a batch at a time, not one by one: a
//! channel send and, when the worker sleeps, a futex wake per record was
//! the hand-off's cost before. Keys and values are copied out of
//! librdkafka's fetch buffer into the batch's one buffer (no allocation of
//! their own per record) and from there into the producer's send buffer,
//! after which the worker drops the batch. Handing over the librdkafka
//! messages themselves, with no copy at all, was built and measured: every
//! record waiting in a channel then kept its whole fetch response alive,
//! and peak RSS with 1 KiB records rose from 53-62 MiB to 72-92 MiB with
//! no CPU saved, so the mirror copies.

use std::sync::Arc;

use rdkafka::message::OwnedHeaders;

use crate::engine::pipeline::ack_hooks::AckHook;
use crate::engine::pipeline::offsets::AckHandle;
use crate::ops::metrics::TopicMetrics;

/// A batch closes at this many records...
pub const MAX_RECORDS: usize = 500;
/// ...or once its keys and values reach this many bytes, so a channel of
/// large records holds megabytes, not gigabytes (one larger record still
/// gets a batch of its own).
pub const MAX_BYTES: usize = 1 << 20;

/// What the records of one source partition, in one assignment, share on
/// their way to the target. The stream makes it once; a batch holds one
/// reference for all its records of the partition. (Each record carried
/// five reference-counted handles before: bumped by the stream and dropped
/// by a worker for every record, their counts' cache lines went back and
/// forth between the two threads' cores.)
#[derive(Debug)]
pub struct PartitionRoute {
    /// Where the partition's offsets settle (its offset: the first record's).
    pub ack: AckHandle,
    pub target: Arc<str>,
    /// The provenance header's value (the source cluster id), when stamped.
    pub stamp: Option<Arc<str>>,
    /// The source topic's counters.
    pub stats: Arc<TopicMetrics>,
    /// What the partition's acknowledgements feed besides its tracker
    /// (its flow's offset-syncs), if anything.
    pub ack_hook: Option<Arc<dyn AckHook>>,
}

/// One source record on its way to the target. Its key and value live in
/// the batch's buffer, its partition's route in the batch's list.
#[derive(Debug)]
pub struct MirrorRecord {
    pub meta: RecordMeta,
    /// Its route's place in the batch's list.
    route: usize,
    /// Where the key starts in the batch's buffer; the value follows it.
    start: usize,
    /// None for a record without a key.
    key_len: Option<usize>,
    /// None for a tombstone (a record without a value), which must stay one.
    value_len: Option<usize>,
}

/// Everything about a record but its key, value and route.
#[derive(Debug)]
pub struct RecordMeta {
    pub offset: i64,
    /// The target partition, when the handler keeps the source's.
    pub partition: Option<i32>,
    /// The source record's headers (with the provenance header appended).
    pub headers: Option<OwnedHeaders>,
    /// Whether to add the route's provenance header: for a record without
    /// headers of its own, librdkafka builds the header list itself (see
    /// `producer`).
    pub stamp: bool,
    pub timestamp: Option<i64>,
}

impl MirrorRecord {
    /// Key plus value bytes, as the metrics count them.
    pub fn size(&self) -> usize {
        self.key_len.unwrap_or(0) + self.value_len.unwrap_or(0)
    }

    pub fn key<'b>(&self, buf: &'b [u8]) -> Option<&'b [u8]> {
        self.key_len.map(|n| &buf[self.start..self.start + n])
    }

    pub fn value<'b>(&self, buf: &'b [u8]) -> Option<&'b [u8]> {
        let from = self.start + self.key_len.unwrap_or(0);
        self.value_len.map(|n| &buf[from..from + n])
    }

    /// Its route, from the list of the batch it came in.
    pub fn route<'r>(&self, routes: &'r [Arc<PartitionRoute>]) -> &'r Arc<PartitionRoute> {
        &routes[self.route]
    }
}

/// Records bound for one worker, in the order they were read.
#[derive(Debug, Default)]
pub struct Batch {
    records: Vec<MirrorRecord>,
    bytes: Vec<u8>,
    routes: Vec<Arc<PartitionRoute>>,
}

impl Batch {
    /// An empty batch whose buffer takes `bytes` without growing.
    pub fn with_capacity(bytes: usize) -> Batch {
        Batch { records: Vec::new(), bytes: Vec::with_capacity(bytes), routes: Vec::new() }
    }

    /// Whether a record of `size` bytes still fits in a batch of at most
    /// `max_records` records and `max_bytes` bytes (an empty batch always
    /// takes one, however large).
    pub fn fits(&self, size: usize, max_records: usize, max_bytes: usize) -> bool {
        self.records.is_empty() || (self.records.len() < max_records && self.bytes.len() + size <= max_bytes)
    }

    /// Copies the key and value in; returns the record's size.
    pub fn push(&mut self, route: &Arc<PartitionRoute>, meta: RecordMeta, key: Option<&[u8]>, value: Option<&[u8]>) -> usize {
        // Records come in runs of one partition: the last route is the usual hit.
        let route = match self.routes.iter().rposition(|r| Arc::ptr_eq(r, route)) {
            Some(i) => i,
            None => {
                self.routes.push(route.clone());
                self.routes.len() - 1
            }
        };
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key.unwrap_or_default());
        self.bytes.extend_from_slice(value.unwrap_or_default());
        let rec = MirrorRecord { meta, route, start, key_len: key.map(<[u8]>::len), value_len: value.map(<[u8]>::len) };
        let size = rec.size();
        self.records.push(rec);
        size
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Bytes of keys and values held.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Each record with its route.
    pub fn records(&self) -> impl Iterator<Item = (&MirrorRecord, &PartitionRoute)> {
        self.records.iter().map(|r| (r, &*self.routes[r.route]))
    }

    /// Drops the records `keep` refuses (their bytes and routes stay until the batch goes).
    pub fn retain(&mut self, mut keep: impl FnMut(&MirrorRecord, &PartitionRoute) -> bool) {
        let routes = &self.routes;
        self.records.retain(|r| keep(r, &routes[r.route]));
    }

    /// The records, the buffer their keys and values are in, and their routes.
    pub fn into_parts(self) -> (Vec<MirrorRecord>, Vec<u8>, Vec<Arc<PartitionRoute>>) {
        (self.records, self.bytes, self.routes)
    }
}

/// The tests' record source is test-only code and lives in `crate::testkit`;
/// handoff's tests import it from here.
#[cfg(test)]
pub use crate::testkit::TestSource;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_values_empty_and_absent_survive_the_copy() {
        type KeyValue<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
        let cases: [KeyValue<'_>; 6] =
            [(Some(b"key"), Some(b"value")), (None, Some(b"value")), (Some(b"key"), None), (None, None), (Some(b""), Some(b"")), (Some(b""), None)];
        let src = TestSource::new();
        let mut b = Batch::with_capacity(0);
        for (i, (k, v)) in cases.iter().enumerate() {
            let size = src.push(&mut b, 0, i as i64, *k, *v);
            assert_eq!(size, k.map_or(0, <[u8]>::len) + v.map_or(0, <[u8]>::len));
        }
        let (records, bytes, _) = b.into_parts();
        assert_eq!(records.len(), cases.len());
        for (rec, (k, v)) in records.iter().zip(cases) {
            assert_eq!((rec.key(&bytes), rec.value(&bytes)), (k, v), "record at offset {}", rec.meta.offset);
        }
    }

    #[test]
    fn a_batch_closes_at_its_record_or_byte_limit_but_always_takes_one() {
        let src = TestSource::new();
        let mut b = Batch::with_capacity(0);
        assert!(b.fits(MAX_BYTES * 3, MAX_RECORDS, MAX_BYTES), "an empty batch takes a record of any size");
        let big = vec![7u8; MAX_BYTES - 10];
        src.push(&mut b, 0, 0, None, Some(&big));
        assert!(b.fits(10, MAX_RECORDS, MAX_BYTES));
        assert!(!b.fits(11, MAX_RECORDS, MAX_BYTES));
        let mut small = Batch::with_capacity(0);
        for o in 0..MAX_RECORDS {
            assert!(small.fits(1, MAX_RECORDS, MAX_BYTES));
            src.push(&mut small, 0, 1 + o as i64, Some(b"k"), None);
        }
        assert!(!small.fits(0, MAX_RECORDS, MAX_BYTES));
        assert!(!small.fits(0, 3, MAX_BYTES), "a smaller --queue.size makes smaller batches");
        assert!(!b.fits(0, MAX_RECORDS, 100), "a smaller --queue.byte.size makes smaller batches");
        assert_eq!(small.len(), MAX_RECORDS);
    }

    #[test]
    fn a_batch_holds_one_route_per_partition_and_each_record_finds_its_own() {
        let src = TestSource::new();
        let mut b = Batch::default();
        let sent = [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1), (2, 0)];
        for (p, o) in sent {
            src.push(&mut b, p, o, None, Some(b"v"));
        }
        let got: Vec<(i32, i64)> = b.records().map(|(r, route)| (route.ack.tp.1, r.meta.offset)).collect();
        assert_eq!(got, sent);
        let (_, _, routes) = b.into_parts();
        assert_eq!(routes.len(), 3, "one reference per partition, not per record");
        assert!(Arc::ptr_eq(&routes[0], &src.route(0)));
    }

    #[test]
    fn retained_records_still_find_their_bytes() {
        let src = TestSource::new();
        let mut b = Batch::with_capacity(0);
        for (o, v) in [&b"aa"[..], b"bbb", b"c"].into_iter().enumerate() {
            src.push(&mut b, 0, o as i64, Some(b"k"), Some(v));
        }
        b.retain(|r, _| r.meta.offset != 1);
        let (records, bytes, _) = b.into_parts();
        let values: Vec<_> = records.iter().map(|r| r.value(&bytes).unwrap().to_vec()).collect();
        assert_eq!(values, vec![b"aa".to_vec(), b"c".to_vec()]);
    }
}
