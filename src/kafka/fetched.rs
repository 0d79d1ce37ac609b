//! What librdkafka's public API cannot tell about a record: whether a
//! fetched one has headers at all (cheaply), and the timestamp a produced
//! one was sent with, once its delivery failed.
//!
//! `rd_kafka_message_headers` parses a record's headers on first access, and
//! for a v2 record without any it still builds a parse buffer (a zeroed
//! `rd_kafka_buf_t`, a segment, two frees) just to read the count 0: about
//! 1,000 instructions of the 11,000 that a 100 B record cost in callgrind.
//! Most mirrored records have no headers, so [`without_headers`] answers
//! that case from the bytes librdkafka already keeps: in a v2 record the
//! header count directly follows the value, and librdkafka stores a pointer
//! to it in the message it hands out (`rd_kafka_msg_t`, private, in the
//! librdkafka bundled with the pinned `rdkafka-sys`).
//!
//! Reading a private struct is only safe if the layout is right, so the
//! answer is "no headers" only when the stored pointer is exactly where the
//! value ends, which a misread field would not be; any doubt (a layout that
//! does not match, a null or empty value, old message formats, headers parsed
//! already) falls back to librdkafka's own call. A wrong layout can
//! therefore cost speed, never a header; the unit tests below fail if the
//! fast answer is not taken for plain records.

use std::os::raw::{c_int, c_void};

use rdkafka::bindings::rd_kafka_message_t;
use rdkafka::message::BorrowedMessage;

/// The head of librdkafka's `rd_kafka_msg_t` (`rdkafka_msg.h`, 2.12.1) up to
/// the consumer's unparsed headers (`rkm_u.consumer.binhdrs`).
#[repr(C)]
struct MsgHead {
    rkmessage: rd_kafka_message_t,
    link_next: *mut c_void,
    link_prev: *mut *mut c_void,
    flags: c_int,
    tstype: c_int,
    timestamp: i64,
    headers: *mut c_void,
    status: c_int,
    broker_id: i32,
    binhdrs_len: i32,
    binhdrs_data: *const u8,
}

/// `rd_kafka_version()` of the librdkafka whose layout [`MsgHead`] copies.
const LAYOUT_VERSION: i32 = 0x020c_01ff;

/// Whether the librdkafka running is the one [`MsgHead`] was checked
/// against (it is linked statically from `rdkafka-sys`, so it changes only
/// with that crate); asked once.
fn layout_known() -> bool {
    use std::sync::OnceLock;
    static KNOWN: OnceLock<bool> = OnceLock::new();
    // SAFETY: a plain getter with no arguments.
    *KNOWN.get_or_init(|| unsafe { rdkafka::bindings::rd_kafka_version() } == LAYOUT_VERSION)
}

/// librdkafka's `RD_KAFKA_TIMESTAMP_CREATE_TIME`.
const CREATE_TIME: c_int = 1;

/// The timestamp a produced record carried, read from its failed delivery
/// report: `rd_kafka_message_timestamp` answers -1 for any message with an
/// error, and a record sent again must keep its source timestamp. None when
/// the layout is not the one checked, or the record has no create time.
pub fn produced_timestamp(msg: &BorrowedMessage<'_>) -> Option<i64> {
    if !layout_known() {
        return None;
    }
    // SAFETY: a delivery report's rd_kafka_message_t is the first field of
    // the producer's rd_kafka_msg_t, alive for as long as `msg` borrows it;
    // MsgHead is a prefix of that struct in this librdkafka (checked above).
    let head = unsafe { &*(msg.ptr() as *const MsgHead) };
    (head.tstype == CREATE_TIME && head.timestamp >= 0).then_some(head.timestamp)
}

/// True when the record certainly has no headers; false when it has some or
/// when this cannot tell (then ask `Message::headers`).
pub fn without_headers(msg: &BorrowedMessage<'_>) -> bool {
    if !layout_known() {
        return false;
    }
    // SAFETY: a consumed rd_kafka_message_t is the first field of an
    // rd_kafka_msg_t living inside librdkafka's op for as long as `msg`
    // borrows it, and MsgHead is a prefix of that struct. The byte read is
    // inside the record (count varint at Value end), checked against the
    // value's own end first.
    unsafe {
        let head = &*(msg.ptr() as *const MsgHead);
        if !head.headers.is_null() || head.rkmessage.payload.is_null() || head.binhdrs_len < 1 {
            return false;
        }
        let value_end = (head.rkmessage.payload as *const u8).add(head.rkmessage.len);
        head.binhdrs_data == value_end && *head.binhdrs_data == 0
    }
}

/// The record's topic name as bytes. `Message::topic` checks them as UTF-8
/// for every record (1.5% of the instructions per 100 B record); a caller
/// looking routes up by name checks a name once, when its route is made.
pub fn topic_name<'m>(msg: &'m BorrowedMessage<'_>) -> &'m [u8] {
    // SAFETY: a fetched message's topic handle and its name live as long as
    // the message.
    unsafe { std::ffi::CStr::from_ptr(rdkafka::bindings::rd_kafka_topic_name((*msg.ptr()).rkt)) }.to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linked_librdkafka_is_the_one_whose_layout_was_checked() {
        // Fails when rdkafka-sys brings another librdkafka: check MsgHead
        // against its rdkafka_msg.h, then update LAYOUT_VERSION. Until then
        // the safe paths are taken (slower headers; a record whose delivery
        // failed is not sent again with a timestamp it cannot read).
        assert!(layout_known(), "librdkafka {:#x}, layout checked for {LAYOUT_VERSION:#x}", unsafe { rdkafka::bindings::rd_kafka_version() });
    }

    use std::time::{Duration, Instant};

    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::{Header, Message, OwnedHeaders};
    use rdkafka::mocking::MockCluster;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
    use rdkafka::ClientConfig;

    /// A header: name and value.
    type NamedValue = (String, Option<Vec<u8>>);
    /// A record written: key, value and headers.
    type Written = (String, Option<Vec<u8>>, Vec<NamedValue>);

    /// (key, value, headers) of the records written: plain, empty value,
    /// tombstone, one header, two headers, a header with a null value.
    fn records() -> Vec<Written> {
        let mut out = Vec::new();
        for i in 0..60 {
            let key = format!("k{i}");
            let (value, headers) = match i % 6 {
                0 => (Some(vec![b'v'; 1 + i]), vec![]),
                1 => (Some(vec![]), vec![]),
                2 => (None, vec![]),
                3 => (Some(b"x".to_vec()), vec![("h".to_string(), Some(b"1".to_vec()))]),
                4 => (Some(vec![0u8; 10]), vec![("a".to_string(), Some(vec![])), ("b".to_string(), Some(b"2".to_vec()))]),
                _ => (Some(b"y".to_vec()), vec![("n".to_string(), None)]),
            };
            out.push((key, value, headers));
        }
        out
    }

    fn check(compression: &str) {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 1, 1).unwrap();
        let producer: BaseProducer = ClientConfig::new()
            .set("bootstrap.servers", cluster.bootstrap_servers())
            .set("compression.type", compression)
            .set("linger.ms", "20")
            .create()
            .unwrap();
        let written = records();
        for (key, value, headers) in &written {
            let mut rec = BaseRecord::to("t").key(key).partition(0);
            if let Some(v) = value {
                rec = rec.payload(v);
            }
            if !headers.is_empty() {
                let mut h = OwnedHeaders::new();
                for (k, v) in headers {
                    h = h.insert(Header { key: k, value: v.as_deref() });
                }
                rec = rec.headers(h);
            }
            producer.send(rec).map_err(|(e, _)| e).unwrap();
        }
        producer.flush(Duration::from_secs(30)).unwrap();

        let consumer: BaseConsumer =
            ClientConfig::new().set("bootstrap.servers", cluster.bootstrap_servers()).set("group.id", "fetched-test").create().unwrap();
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("t", 0, Offset::Beginning).unwrap();
        consumer.assign(&tpl).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = 0;
        while seen < written.len() {
            assert!(Instant::now() < deadline, "only {seen} of {} records consumed ({compression})", written.len());
            let Some(res) = consumer.poll(Duration::from_millis(200)) else { continue };
            let msg = res.unwrap();
            let (_, value, headers) = &written[msg.offset() as usize];
            let fast = without_headers(&msg);
            // (An empty value's pointer is not into the record: it falls back.)
            if headers.is_empty() && value.as_ref().is_some_and(|v| !v.is_empty()) {
                // The fast answer must be taken, or the layout above is wrong.
                assert!(fast, "record {} without headers not recognised ({compression})", msg.offset());
            }
            if fast {
                assert!(headers.is_empty(), "record {} has headers but was called headerless ({compression})", msg.offset());
                assert!(msg.headers().is_none());
            }
            // The slow path still sees every header the fast one must not hide.
            assert_eq!(msg.headers().map_or(0, rdkafka::message::Headers::count), headers.len());
            seen += 1;
        }
    }

    #[test]
    fn tells_records_without_headers_apart_uncompressed() {
        check("none");
    }

    #[test]
    fn tells_records_without_headers_apart_lz4() {
        check("lz4");
    }
}
