//! What a client knows without asking a broker.

use std::ffi::CString;

use rdkafka::client::Client;
use rdkafka::ClientContext;

/// The partition's log start as librdkafka last learned it (from a fetch
/// response or an earlier query), without asking the broker; None when it
/// knows none yet.
pub fn cached_log_start<C: ClientContext>(client: &Client<C>, topic: &str, partition: i32) -> Option<i64> {
    cached_watermarks(client, topic, partition).map(|(low, _)| low).filter(|low| *low >= 0)
}

/// The partition's log start and end as librdkafka last learned them
/// (-1 for what it has not learned yet), without asking the broker; None
/// when it does not know the partition.
pub fn cached_watermarks<C: ClientContext>(client: &Client<C>, topic: &str, partition: i32) -> Option<(i64, i64)> {
    let topic = CString::new(topic.as_bytes()).ok()?;
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: the live client's handle (borrowed for the call) and a
    // NUL-terminated name; librdkafka only reads its cache and writes the
    // two offsets.
    let err = unsafe { rdkafka::bindings::rd_kafka_get_watermark_offsets(client.native_ptr(), topic.as_ptr(), partition, &mut low, &mut high) };
    (err == rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR).then_some((low, high))
}
