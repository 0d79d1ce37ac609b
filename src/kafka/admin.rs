//! What every call through librdkafka's admin API here shares (`acls`,
//! `groups`): a reply queue and admin options of one request, polled with
//! a bound and freed on drop, and the copying of strings librdkafka owns.
//! Also the admin helpers of the layers above (rust-rdkafka's safe admin
//! client): [`admin_client`] for the cluster a properties file points at,
//! [`block_on`] for its futures, [`topic_counts`], [`create_compacted`].

use std::ffi::CStr;
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::client::Client;
use rdkafka::ClientContext;

use std::sync::Arc;

use log::{info, warn};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::ClientConfig;

const TIMEOUT: Duration = Duration::from_secs(15);

pub type Admin = AdminClient<DefaultClientContext>;

/// The client that answers the streams' metadata questions about the
/// target (partition counts in partition-preserving mode). An admin
/// client, made by [`admin_client`], so that naming a topic in a metadata
/// request never makes the broker auto-create it: a producer's handle
/// allows that by default (librdkafka's `allow.auto.create.topics` is true
/// for producers), and asking a producer about a topic the topic sync was
/// about to create gave it the broker's `num.partitions` instead of the
/// source's count (issue #26 item 0).
pub type MetaClient = Admin;

/// An admin client for the cluster a properties file points at: only the
/// connection and security settings are taken, so consumer- or
/// producer-only keys do not draw librdkafka warnings.
pub fn admin_client(settings: &ClientConfig) -> Result<Admin, rdkafka::error::KafkaError> {
    admin_config(settings).create()
}

pub fn admin_config(settings: &ClientConfig) -> ClientConfig {
    let mut c = ClientConfig::new();
    // config_map() masks passwords; the keys come from it, the values from get().
    for (k, _) in settings.config_map() {
        let Some(v) = settings.get(k) else { continue };
        // 0.8 producer files name the brokers with the alias.
        if k == "metadata.broker.list" {
            c.set("bootstrap.servers", v);
            continue;
        }
        let wanted = k == "bootstrap.servers"
            || k.starts_with("security.")
            || k.starts_with("ssl.")
            || k.starts_with("sasl.")
            || k.starts_with("socket.")
            || k == "broker.address.family"
            || k == "client.dns.lookup"
            || k == "enable.ssl.certificate.verification";
        if wanted {
            c.set(k, v);
        }
    }
    // Asking for one topic's metadata must never make the broker create it.
    c.set("allow.auto.create.topics", "false");
    c
}

/// An admin client's settings from an admin layer (MirrorMaker 2's
/// `admin.*`): all of them, since its translation passed only keys an
/// admin client reads, and never a broker's auto-create.
pub fn layer_config(settings: &ClientConfig) -> ClientConfig {
    let mut c = settings.clone();
    c.set("allow.auto.create.topics", "false");
    c
}

/// Waits for an admin future on this thread; the admin client's own thread
/// drives it.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::pin::pin;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// Source topics with their partition counts.
pub type Counts = Vec<(String, usize)>;

/// Every topic of a metadata answer with its partition count, those the
/// broker answered with an error left out.
pub fn topic_counts(md: &rdkafka::metadata::Metadata) -> Counts {
    md.topics().iter().filter(|t| t.error().is_none()).map(|t| (t.name().to_string(), t.partitions().len())).collect()
}

/// Creates one of MirrorMaker 2's internal topics as Java does
/// (`MirrorUtils.createCompactedTopic`): compacted, one partition. One that
/// exists, or that the cluster refuses, is left as it is (Java tolerates
/// the same errors).
pub fn create_compacted(config: &rdkafka::ClientConfig, topic: &str, rf: i16) {
    if let Ok(admin) = admin_client(config) {
        create_compacted_with(&admin, topic, rf);
    }
}

/// The replication factor to send in CreateTopics for a configured
/// `rf`: -1 (the broker's default.replication.factor, KIP-464) as is, as
/// Java sends it; a fixed factor at least 1 and at most the brokers there
/// are (`brokers` is only asked for then).
pub fn requested_rf(rf: i16, brokers: impl FnOnce() -> usize) -> i32 {
    if rf == -1 {
        -1
    } else {
        i32::from(rf.max(1)).min(brokers().max(1) as i32)
    }
}

/// A replication factor for a log line: -1 is the broker's default.
pub fn shown_rf(rf: i32) -> String {
    if rf == -1 {
        "the broker's default.replication.factor (-1)".into()
    } else {
        rf.to_string()
    }
}

/// [`create_compacted`] with an admin client the caller keeps (one that
/// retries makes one client, not one per try).
pub fn create_compacted_with(admin: &AdminClient<DefaultClientContext>, topic: &str, rf: i16) {
    let rf = requested_rf(rf, || admin.inner().fetch_metadata(None, TIMEOUT).map(|m| m.brokers().len()).unwrap_or(1));
    let new = NewTopic::new(topic, 1, TopicReplication::Fixed(rf)).set("cleanup.policy", "compact");
    let opts = AdminOptions::new().operation_timeout(Some(TIMEOUT)).request_timeout(Some(TIMEOUT));
    match block_on(admin.create_topics(&[new], &opts)).map(|mut r| r.pop()) {
        Ok(Some(Ok(_))) => info!("created {topic} (compacted, 1 partition, replication factor {})", shown_rf(rf)),
        Ok(Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists)))) | Ok(None) => {}
        Ok(Some(Err((_, code)))) => warn!("cannot create {topic}: {code}; records go to it as the broker allows"),
        Err(e) => warn!("cannot create {topic}: {e}; records go to it as the broker allows"),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_config_keeps_connection_settings_and_the_0_8_broker_list() {
        let mut p = ClientConfig::new();
        p.set("metadata.broker.list", "b:1").set("security.protocol", "ssl").set("linger.ms", "5").set("sasl.password", "pw");
        let c = admin_config(&p);
        assert_eq!(c.get("bootstrap.servers"), Some("b:1"));
        assert_eq!(c.get("sasl.password"), Some("pw"), "secrets must reach the admin client unmasked");
        assert_eq!(c.get("security.protocol"), Some("ssl"));
        assert_eq!(c.get("linger.ms"), None);
    }
}
