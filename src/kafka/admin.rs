//! What every call through librdkafka's admin API here shares (`acls`,
//! `groups`): a reply queue and admin options of one request, polled with
//! a bound and freed on drop, and the copying of strings librdkafka owns.

use std::ffi::CStr;
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::client::Client;
use rdkafka::ClientContext;

/// A reply queue and admin options of one request, freed on drop. The
/// client is borrowed for the call, so its handle outlives every use.
pub struct AdminRequest {
    pub queue: *mut rd::rd_kafka_queue_t,
    pub options: *mut rd::rd_kafka_AdminOptions_t,
}

impl AdminRequest {
    /// A request of kind `op` that the brokers must answer within `timeout`.
    pub fn new<C: ClientContext>(client: &Client<C>, op: rd::rd_kafka_admin_op_t, timeout: Duration) -> AdminRequest {
        let rk = client.native_ptr();
        // SAFETY: `rk` is the live client's handle, borrowed for the call;
        // the queue and options are ours until dropped.
        let (queue, options) = unsafe { (rd::rd_kafka_queue_new(rk), rd::rd_kafka_AdminOptions_new(rk, op)) };
        let mut errstr = [0 as c_char; 256];
        // SAFETY: `options` is live; `errstr` is a buffer of the size given.
        // A failure leaves librdkafka's default timeout, which is fine.
        unsafe { rd::rd_kafka_AdminOptions_set_request_timeout(options, timeout.as_millis() as i32, errstr.as_mut_ptr(), errstr.len()) };
        AdminRequest { queue, options }
    }

    /// The reply event, waited for up to `wait`; None if it did not come.
    /// The caller destroys it.
    pub fn reply(&self, wait: Duration) -> Option<*mut rd::rd_kafka_event_t> {
        // SAFETY: polls our own live queue; only this request's reply is put on it.
        let event = unsafe { rd::rd_kafka_queue_poll(self.queue, wait.as_millis() as i32) };
        (!event.is_null()).then_some(event)
    }
}

impl Drop for AdminRequest {
    fn drop(&mut self) {
        // SAFETY: both made in new, released once. librdkafka holds its own
        // reference to the queue for a reply still to come, which it then
        // drops instead of writing to freed memory.
        unsafe {
            rd::rd_kafka_AdminOptions_destroy(self.options);
            rd::rd_kafka_queue_destroy(self.queue);
        }
    }
}

/// A string librdkafka owns, copied; empty when null.
///
/// # Safety
/// `p` is null or a NUL-terminated string alive for the call.
pub unsafe fn owned(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-null and NUL-terminated, per the caller.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// librdkafka's name and text for an error code, e.g.
/// `UNKNOWN_MEMBER_ID (Broker: Unknown member)`.
pub fn code_text(err: rd::rd_kafka_resp_err_t) -> String {
    rdkafka::error::RDKafkaErrorCode::from(err).to_string()
}
