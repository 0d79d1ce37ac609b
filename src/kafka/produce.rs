//! Producing without rust-rdkafka's per-record costs: cached topic
//! handles and `rd_kafka_produceva`, the producer's main queue watched for
//! ready reports, and sending lingering batches at once.

use std::ffi::{c_int, c_void, CStr, CString};
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use rdkafka::client::Client;
use rdkafka::error::KafkaError;
use rdkafka::types::{RDKafka, RDKafkaTopic};
use rdkafka::{bindings, ClientContext};

use crate::fxhash::FxHashMap;

/// One of a [`TopicHandles`] table's topic handles.
#[derive(Clone, Copy)]
pub struct TopicHandle(*mut RDKafkaTopic);

/// A worker's librdkafka topic handles, one per target topic, kept for
/// the worker's life.
///
/// rust-rdkafka's `send` names the topic afresh for every record: a C
/// string allocated and freed, and a topic lookup under the client's
/// write lock inside librdkafka (5% of the instructions per 100 B record
/// in callgrind). A record without headers of its own is produced here
/// straight through `rd_kafka_produceva` with the cached handle instead,
/// with the same flags rust-rdkafka uses (a copy of key and value, the
/// same delivery opaque); one with headers goes through rust-rdkafka,
/// which owns the header list's handover.
pub struct TopicHandles<'c> {
    rk: *mut RDKafka,
    handles: FxHashMap<Arc<str>, *mut RDKafkaTopic>,
    /// The last handle used, by the address of its name as the map holds
    /// it (alive as long as the map, so never reused by another name):
    /// records come in runs of one topic, and hashing the name for every
    /// record was 1% of the cycles at 100 B.
    last: Option<(*const u8, *mut RDKafkaTopic)>,
    /// The client the handles belong to outlives them.
    _client: PhantomData<&'c ()>,
}

impl<'c> TopicHandles<'c> {
    pub fn new<C: ClientContext>(client: &'c Client<C>) -> TopicHandles<'c> {
        TopicHandles { rk: client.native_ptr(), handles: FxHashMap::default(), last: None, _client: PhantomData }
    }

    /// The handle, created on first use; None where librdkafka refuses one
    /// (the record then goes through rust-rdkafka, which reports why).
    pub fn get(&mut self, topic: &Arc<str>) -> Option<TopicHandle> {
        let id = Arc::as_ptr(topic) as *const u8;
        if let Some((name, rkt)) = self.last {
            if name == id {
                return Some(TopicHandle(rkt));
            }
        }
        if let Some((name, rkt)) = self.handles.get_key_value(topic) {
            if Arc::ptr_eq(name, topic) {
                self.last = Some((id, *rkt));
            }
            return Some(TopicHandle(*rkt));
        }
        let name = CString::new(topic.as_bytes()).ok()?;
        // SAFETY: rk is the client's, which outlives this table (its borrow); a null conf means the producer's default topic
        // configuration, the one rust-rdkafka's send uses too.
        let rkt = unsafe { bindings::rd_kafka_topic_new(self.rk, name.as_ptr(), ptr::null_mut()) };
        if rkt.is_null() {
            return None;
        }
        self.handles.insert(topic.clone(), rkt);
        self.last = Some((id, rkt));
        Some(TopicHandle(rkt))
    }
}

impl Drop for TopicHandles<'_> {
    fn drop(&mut self) {
        for rkt in self.handles.values() {
            // SAFETY: created by rd_kafka_topic_new above, released once;
            // records still in flight hold librdkafka's own references.
            unsafe { bindings::rd_kafka_topic_destroy(*rkt) };
        }
    }
}

/// Produces one record through a cached topic handle; librdkafka copies
/// key and value (and the one header given, if any).
impl TopicHandles<'_> {
    #[allow(clippy::too_many_arguments)]
    pub fn produce(
        &self,
        rkt: TopicHandle,
        partition: Option<i32>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        opaque: usize,
        timestamp: Option<i64>,
        header: Option<(&CStr, &str)>,
    ) -> Result<(), KafkaError> {
        let (rk, rkt) = (self.rk, rkt.0);
        use bindings::rd_kafka_vtype_t::*;
        use bindings::rd_kafka_vu_s__bindgen_ty_1 as U;
        let vu = |vtype, u| bindings::rd_kafka_vu_t { vtype, u };
        let mem = |b: Option<&[u8]>| {
            let (ptr, size) = b.map_or((ptr::null_mut(), 0), |b| (b.as_ptr() as *mut c_void, b.len()));
            U { mem: bindings::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_1 { ptr, size } }
        };
        let mut vus = [
            vu(RD_KAFKA_VTYPE_RKT, U { rkt }),
            vu(RD_KAFKA_VTYPE_PARTITION, U { i32_: partition.unwrap_or(-1) }),
            vu(RD_KAFKA_VTYPE_MSGFLAGS, U { i: bindings::RD_KAFKA_MSG_F_COPY as c_int }),
            vu(RD_KAFKA_VTYPE_VALUE, mem(value)),
            vu(RD_KAFKA_VTYPE_KEY, mem(key)),
            vu(RD_KAFKA_VTYPE_OPAQUE, U { ptr: opaque as *mut c_void }),
            // 0: librdkafka stamps the time of sending.
            vu(RD_KAFKA_VTYPE_TIMESTAMP, U { i64_: timestamp.unwrap_or(0) }),
            // Room for the provenance header; not passed without one.
            vu(RD_KAFKA_VTYPE_END, U { ptr: ptr::null_mut() }),
        ];
        let mut count = vus.len() - 1;
        if let Some((name, value)) = header {
            let header =
                bindings::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_2 { name: name.as_ptr(), val: value.as_ptr() as *const c_void, size: value.len() as isize };
            vus[count] = vu(RD_KAFKA_VTYPE_HEADER, U { header });
            count += 1;
        }
        // SAFETY: rk and rkt are alive (rkt is one of this table's); the pointers and
        // lengths describe live slices, copied before the call returns
        // (RD_KAFKA_MSG_F_COPY); the header name is NUL-terminated. A returned
        // error is ours to free.
        unsafe {
            let error = bindings::rd_kafka_produceva(rk, vus.as_ptr(), count);
            if error.is_null() {
                return Ok(());
            }
            let code = bindings::rd_kafka_error_code(error);
            bindings::rd_kafka_error_destroy(error);
            Err(KafkaError::MessageProduction(code.into()))
        }
    }
}

/// A handle on a client's main queue, where a producer's delivery reports
/// arrive: how many events are ready, without serving them.
pub struct MainQueue<'c> {
    queue: *mut bindings::rd_kafka_queue_t,
    _client: PhantomData<&'c ()>,
}

impl<'c> MainQueue<'c> {
    pub fn of<C: ClientContext>(client: &'c Client<C>) -> MainQueue<'c> {
        // SAFETY: the borrow keeps the client alive; the handle is released
        // in drop.
        MainQueue { queue: unsafe { bindings::rd_kafka_queue_get_main(client.native_ptr()) }, _client: PhantomData }
    }

    pub fn is_empty(&self) -> bool {
        // SAFETY: a live queue handle (see of).
        unsafe { bindings::rd_kafka_queue_length(self.queue) == 0 }
    }
}

impl Drop for MainQueue<'_> {
    fn drop(&mut self) {
        // SAFETY: obtained in of, released once.
        unsafe { bindings::rd_kafka_queue_destroy(self.queue) };
    }
}

/// Sends lingering batches at once, without waiting for anything. Not
/// rust-rdkafka's flush: that serves the reports itself, and they would be
/// settled only once it returns.
pub fn send_lingering<C: ClientContext>(client: &Client<C>) {
    // SAFETY: the live client's handle, borrowed for the call; with no wait
    // rd_kafka_flush only sends what lingers.
    unsafe { bindings::rd_kafka_flush(client.native_ptr(), 0) };
}
