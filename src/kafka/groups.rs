//! Consumer-group admin calls through librdkafka's admin API
//! (`rd_kafka_ListConsumerGroups`, `rd_kafka_ListConsumerGroupOffsets`,
//! `rd_kafka_AlterConsumerGroupOffsets`), which rust-rdkafka does not
//! expose: what offset translation, group offset sync and the failover
//! command need, nothing more.
//!
//! Each call has a reply queue of its own, polled with a bound, and frees
//! everything it made before returning. The client is borrowed for the
//! call, so its handle outlives every use of it here.
//!
//! Altering a group's offsets from outside the group only works while the
//! group has no members: the coordinator takes the admin's commit (member
//! id "", generation -1) from an Empty or unknown group only, and answers
//! a live one with UNKNOWN_MEMBER_ID (Kafka 3.9, classic protocol) or a
//! rebalance/epoch error while it moves. Those come back as
//! [`GroupError::Active`], so callers can say "left alone: consumers are
//! active" instead of showing a broker error code.
//!
//! [`group_offsets`] needs a consumer handle with a `group.id` (any: it is
//! never joined), such as [`admin_consumer`] makes: librdkafka 2.12 answers
//! a NOT_COORDINATOR reply to ListConsumerGroupOffsets by asking the
//! client's own consumer group to look up its coordinator, and crashes
//! when the client has none (librdkafka issue #5040, still open; it
//! happens on the first call for a group on a fresh cluster). Such a
//! client is refused with a message instead. A coordinator that is moving
//! or loading is retried for a while, as Java's admin does.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::client::Client;
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::KafkaResult;
use rdkafka::{ClientConfig, ClientContext};

use super::admin::{code_text, owned, AdminRequest};
use crate::formats::assigned_partitions;

/// A consumer group's state, as the coordinator reports it (Java's
/// `ConsumerGroupState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupState {
    Unknown,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    Dead,
    Empty,
}

impl GroupState {
    /// Whether the group has (or is taking in) members, so that its offsets
    /// cannot be altered from outside.
    pub fn is_active(self) -> bool {
        matches!(self, GroupState::Stable | GroupState::PreparingRebalance | GroupState::CompletingRebalance)
    }
}

impl fmt::Display for GroupState {
    /// Java's names, the ones `kafka-consumer-groups.sh` prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GroupState::Unknown => "Unknown",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
            GroupState::Empty => "Empty",
        })
    }
}

/// One consumer group of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupListing {
    pub group: String,
    pub state: GroupState,
    /// A group whose offsets are committed without ever joining (manual
    /// assignment, or offsets written by an admin): no protocol type.
    pub simple: bool,
}

/// One committed offset of a group.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// The commit's metadata string; "" when there is none.
    pub metadata: String,
}

/// A partition the broker refused, with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionError {
    pub topic: String,
    pub partition: i32,
    pub error: String,
}

/// Why a group call did not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupError {
    /// The group has active members, so the broker refused to alter its
    /// offsets; nothing was changed. `detail` is the broker's answer.
    Active { group: String, detail: String },
    /// The broker refused some partitions (the others may have been
    /// written: each partition is committed on its own).
    Partitions { group: String, refused: Vec<PartitionError> },
    /// The request was refused as a whole, or could not be sent.
    Failed { what: String, detail: String },
    /// The group's coordinator stayed unavailable (moving or loading)
    /// through every retry.
    CoordinatorUnavailable { what: String, detail: String },
    /// No answer within the bound: the cluster is unreachable or too slow.
    NoAnswer { what: String, after: Duration },
    /// The call's arguments cannot be sent (a NUL byte, a duplicate
    /// partition, a negative offset); nothing was sent.
    Invalid(String),
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupError::Active { group, detail } => write!(
                f,
                "group '{group}' has active members, so its offsets were left alone ({detail}); stop the group's consumers, \
                 wait until 'kafka-consumer-groups.sh --describe --group {group} --state' says Empty, and try again"
            ),
            GroupError::Partitions { group, refused } => {
                write!(f, "group '{group}': the broker refused {} partition(s): ", refused.len())?;
                for (i, r) in refused.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "; " };
                    write!(f, "{sep}{}-{}: {}", r.topic, r.partition, r.error)?;
                }
                Ok(())
            }
            GroupError::Failed { what, detail } => write!(f, "{what}: {detail}"),
            GroupError::CoordinatorUnavailable { what, detail } => write!(
                f,
                "{what}: the group's coordinator was still not available after {}s ({detail}); the cluster is electing or loading it: try again in a minute",
                RETRY_FOR.as_secs()
            ),
            GroupError::NoAnswer { what, after } => {
                write!(f, "{what}: no answer from the cluster within {}s; check bootstrap.servers and that the brokers are up", after.as_secs())
            }
            GroupError::Invalid(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GroupError {}

const TIMEOUT: Duration = Duration::from_secs(15);

/// How long a reply is waited for: a little longer than the request's own
/// timeout, so librdkafka's timeout answer arrives first.
const WAIT: Duration = Duration::from_secs(20);

/// How long a moving or loading coordinator is retried.
const RETRY_FOR: Duration = Duration::from_secs(30);

/// The group.id of [`admin_consumer`]'s clients: never joined, so no group
/// of that name appears on the cluster.
pub const ADMIN_GROUP_ID: &str = "mirror-maker.group-admin";

/// A client for [`group_offsets`] (and the other calls) made from a
/// cluster's settings: a consumer with a group.id of its own that never
/// subscribes, commits or stores offsets.
pub fn admin_consumer(config: &ClientConfig) -> KafkaResult<BaseConsumer> {
    let mut c = config.clone();
    c.set("group.id", ADMIN_GROUP_ID).set("enable.auto.commit", "false").set("enable.auto.offset.store", "false");
    c.create()
}

/// How many members of `group` the coordinator has assigned
/// `topic`-`partition`, as DescribeGroups shows it (assignments are shown
/// only while the group is stable: 0 while it rebalances or has no
/// member).
pub fn members_assigned<C: ClientContext>(client: &Client<C>, group: &str, topic: &str, partition: i32, timeout: Duration) -> KafkaResult<usize> {
    let list = client.fetch_group_list(Some(group), timeout)?;
    let assigned = list
        .groups()
        .iter()
        .filter(|g| g.name() == group)
        .flat_map(|g| g.members())
        .filter(|m| m.assignment().is_some_and(|a| assignment_has(a, topic, partition)))
        .count();
    Ok(assigned)
}

/// Whether a member's assignment names `topic`-`partition`. A malformed
/// one names nothing.
fn assignment_has(bytes: &[u8], topic: &str, partition: i32) -> bool {
    assigned_partitions(bytes).is_ok_and(|ps| ps.iter().any(|(t, p)| t == topic && *p == partition))
}

/// Whether the client is a consumer with a group.id, i.e. librdkafka gave
/// it a consumer group of its own (see the module doc).
fn has_consumer_group<C: ClientContext>(client: &Client<C>) -> bool {
    let rk = client.native_ptr();
    let key = c"group.id";
    let mut buf = [0 as c_char; 512];
    let mut size = buf.len();
    // SAFETY: live handle; its conf lives as long as it; `buf` has `size` bytes.
    unsafe {
        if rd::rd_kafka_type(rk) != rd::rd_kafka_type_t::RD_KAFKA_CONSUMER {
            return false;
        }
        let res = rd::rd_kafka_conf_get(rd::rd_kafka_conf(rk), key.as_ptr(), buf.as_mut_ptr(), &mut size);
        // A group.id longer than the buffer is reported as too small, yet set.
        res == rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK && (size > 1 || buf[0] != 0)
    }
}

/// The answers of a coordinator that is moving or loading: worth a retry.
fn coordinator_moving(err: rd::rd_kafka_resp_err_t) -> bool {
    use rd::rd_kafka_resp_err_t as E;
    matches!(err, E::RD_KAFKA_RESP_ERR_NOT_COORDINATOR | E::RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE | E::RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
}

/// Runs `attempt` again while the coordinator is moving, for [`RETRY_FOR`].
fn retrying<T>(mut attempt: impl FnMut() -> Result<T, GroupError>) -> Result<T, GroupError> {
    let deadline = std::time::Instant::now() + RETRY_FOR;
    loop {
        match attempt() {
            Err(GroupError::CoordinatorUnavailable { .. }) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(500)),
            other => return other,
        }
    }
}

/// The error for a code the broker or librdkafka gave a whole request.
fn failure(what: &str, group: &str, code: rd::rd_kafka_resp_err_t, text: &str) -> GroupError {
    let detail = format!("{}: {text}", code_text(code));
    if means_active(code) {
        GroupError::Active { group: group.into(), detail }
    } else if coordinator_moving(code) {
        GroupError::CoordinatorUnavailable { what: what.into(), detail }
    } else {
        GroupError::Failed { what: what.into(), detail }
    }
}

fn state_from(s: rd::rd_kafka_consumer_group_state_t) -> GroupState {
    use rd::rd_kafka_consumer_group_state_t as S;
    match s {
        S::RD_KAFKA_CONSUMER_GROUP_STATE_PREPARING_REBALANCE => GroupState::PreparingRebalance,
        S::RD_KAFKA_CONSUMER_GROUP_STATE_COMPLETING_REBALANCE => GroupState::CompletingRebalance,
        S::RD_KAFKA_CONSUMER_GROUP_STATE_STABLE => GroupState::Stable,
        S::RD_KAFKA_CONSUMER_GROUP_STATE_DEAD => GroupState::Dead,
        S::RD_KAFKA_CONSUMER_GROUP_STATE_EMPTY => GroupState::Empty,
        _ => GroupState::Unknown,
    }
}

/// The answers a coordinator gives an outside commit to a group that has
/// members: UNKNOWN_MEMBER_ID when it is stable (what Java's admin reports
/// as `UnknownMemberIdException`), the others while it rebalances or under
/// the KIP-848 protocol.
fn means_active(err: rd::rd_kafka_resp_err_t) -> bool {
    use rd::rd_kafka_resp_err_t as E;
    matches!(
        err,
        E::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID
            | E::RD_KAFKA_RESP_ERR_GROUP_SUBSCRIBED_TO_TOPIC
            | E::RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS
            | E::RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION
            | E::RD_KAFKA_RESP_ERR_FENCED_MEMBER_EPOCH
            | E::RD_KAFKA_RESP_ERR_STALE_MEMBER_EPOCH
    )
}

fn c_string(what: &str, s: &str) -> Result<CString, GroupError> {
    CString::new(s).map_err(|_| GroupError::Invalid(format!("{what} {s:?} contains a NUL byte")))
}

/// The code and text of an `rd_kafka_error_t`; None when it says no error.
///
/// SAFETY (caller): `e` is null or a live error.
unsafe fn error_of(e: *const rd::rd_kafka_error_t) -> Option<(rd::rd_kafka_resp_err_t, String)> {
    if e.is_null() {
        return None;
    }
    // SAFETY: live, per the caller; its string lives as long as it.
    let code = unsafe { rd::rd_kafka_error_code(e) };
    if code == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
        return None;
    }
    // SAFETY: as above.
    Some((code, unsafe { owned(rd::rd_kafka_error_string(e)) }))
}

/// The elements of a partition list librdkafka owns.
///
/// SAFETY (caller): `list` is null or a live list, which outlives the slice.
unsafe fn elems<'a>(list: *const rd::rd_kafka_topic_partition_list_t) -> &'a [rd::rd_kafka_topic_partition_t] {
    if list.is_null() {
        return &[];
    }
    // SAFETY: live per the caller; `elems` holds `cnt` initialised entries.
    unsafe {
        let l = &*list;
        if l.elems.is_null() || l.cnt <= 0 {
            &[]
        } else {
            std::slice::from_raw_parts(l.elems, l.cnt as usize)
        }
    }
}

/// A slice of pointers librdkafka returns with a count; empty when null.
///
/// SAFETY (caller): `p` is null or points to `n` pointers alive for the use.
unsafe fn pointers<'a, T>(p: *mut *const T, n: usize) -> &'a [*const T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: per the caller.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// One request, with what it is about for its errors.
struct Request {
    admin: AdminRequest,
    what: String,
    /// The group the request is about ("" for a listing).
    group: String,
}

impl Request {
    fn new<C: ClientContext>(client: &Client<C>, op: rd::rd_kafka_admin_op_t, what: String, group: &str) -> Request {
        Request { admin: AdminRequest::new(client, op, TIMEOUT), what, group: group.into() }
    }

    /// Waits for the reply, checks its top-level error and hands the event
    /// to `read`, then destroys it.
    fn answer<T>(&self, read: impl FnOnce(*mut rd::rd_kafka_event_t) -> Result<T, GroupError>) -> Result<T, GroupError> {
        let Some(event) = self.admin.reply(WAIT) else {
            return Err(GroupError::NoAnswer { what: self.what.clone(), after: WAIT });
        };
        // SAFETY: `event` is live until destroyed below; its error string lives as long as it.
        let err = unsafe { rd::rd_kafka_event_error(event) };
        let answer = if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            // SAFETY: as above.
            let text = unsafe { owned(rd::rd_kafka_event_error_string(event)) };
            Err(failure(&self.what, &self.group, err, &text))
        } else {
            read(event)
        };
        // SAFETY: ours, destroyed once; nothing borrowed from it is kept.
        unsafe { rd::rd_kafka_event_destroy(event) };
        answer
    }
}

/// Every consumer group of the cluster with its state. A broker that did
/// not answer makes it an error: a partial list would pass for the whole.
pub fn list_groups<C: ClientContext>(client: &Client<C>) -> Result<Vec<GroupListing>, GroupError> {
    let request = Request::new(client, rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS, "list consumer groups".into(), "");
    // SAFETY: live handle, options and queue.
    unsafe { rd::rd_kafka_ListConsumerGroups(client.native_ptr(), request.admin.options, request.admin.queue) };
    request.answer(|event| {
        // SAFETY: `event` is live for this closure; the result, its
        // listings and errors (and their strings) live as long as it.
        unsafe {
            let result = rd::rd_kafka_event_ListConsumerGroups_result(event);
            if result.is_null() {
                return Err(GroupError::Failed { what: "list consumer groups".into(), detail: "unexpected answer".into() });
            }
            let mut n = 0usize;
            let errors = pointers(rd::rd_kafka_ListConsumerGroups_result_errors(result, &mut n), n);
            let errors: Vec<String> = errors.iter().filter_map(|&e| error_of(e)).map(|(code, text)| format!("{}: {text}", code_text(code))).collect();
            if !errors.is_empty() {
                return Err(GroupError::Failed {
                    what: "list consumer groups".into(),
                    detail: format!("some brokers did not list their groups: {}", errors.join("; ")),
                });
            }
            let mut n = 0usize;
            let valid = pointers(rd::rd_kafka_ListConsumerGroups_result_valid(result, &mut n), n);
            let mut groups: Vec<GroupListing> = valid
                .iter()
                .map(|&g| GroupListing {
                    group: owned(rd::rd_kafka_ConsumerGroupListing_group_id(g)),
                    state: state_from(rd::rd_kafka_ConsumerGroupListing_state(g)),
                    simple: rd::rd_kafka_ConsumerGroupListing_is_simple_consumer_group(g) != 0,
                })
                .collect();
            groups.sort();
            Ok(groups)
        }
    })
}

/// The single group result of a group request, its group-level error
/// turned into a [`GroupError`].
///
/// SAFETY (caller): `groups` and `n` come from a live result event.
unsafe fn only_group(
    what: &str,
    group: &str,
    groups: *mut *const rd::rd_kafka_group_result_t,
    n: usize,
) -> Result<*const rd::rd_kafka_group_result_t, GroupError> {
    // SAFETY: per the caller.
    let groups = unsafe { pointers(groups, n) };
    let Some(&g) = groups.first() else {
        return Err(GroupError::Failed { what: what.into(), detail: "the answer names no group".into() });
    };
    // SAFETY: a live group result of the live event.
    if let Some((code, text)) = unsafe { error_of(rd::rd_kafka_group_result_error(g)) } {
        return Err(failure(what, group, code, &text));
    }
    Ok(g)
}

/// The partitions of a group result that carry an error.
///
/// SAFETY (caller): `g` is a live group result.
unsafe fn refused_partitions(g: *const rd::rd_kafka_group_result_t) -> Vec<(rd::rd_kafka_resp_err_t, PartitionError)> {
    // SAFETY: per the caller; the list and its topics live as long as `g`.
    unsafe {
        elems(rd::rd_kafka_group_result_partitions(g))
            .iter()
            .filter(|p| p.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR)
            .map(|p| (p.err, PartitionError { topic: owned(p.topic), partition: p.partition, error: code_text(p.err) }))
            .collect()
    }
}

/// Every committed offset of `group`, sorted by topic and partition;
/// partitions without a committed offset are left out. A group the
/// cluster does not know has none. `client` must be a consumer with a
/// group.id, as [`admin_consumer`] makes (see the module doc).
pub fn group_offsets<C: ClientContext>(client: &Client<C>, group: &str) -> Result<Vec<GroupOffset>, GroupError> {
    if !has_consumer_group(client) {
        return Err(GroupError::Invalid(format!(
            "list the offsets of group '{group}': needs a consumer client with a group.id (kafka::groups::admin_consumer makes one); \
             librdkafka 2.12 crashes on a coordinator change with any other client"
        )));
    }
    let name = c_string("group", group)?;
    retrying(|| list_offsets_once(client, group, &name))
}

fn list_offsets_once<C: ClientContext>(client: &Client<C>, group: &str, name: &CStr) -> Result<Vec<GroupOffset>, GroupError> {
    let what = format!("list the offsets of group '{group}'");
    // SAFETY: a null partition list means every partition; the request is
    // ours, destroyed right after the call (librdkafka copies it).
    let mut req = unsafe { rd::rd_kafka_ListConsumerGroupOffsets_new(name.as_ptr(), std::ptr::null()) };
    let request = Request::new(client, rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS, what.clone(), group);
    // SAFETY: live handle, options and queue; an array of one request.
    unsafe {
        rd::rd_kafka_ListConsumerGroupOffsets(client.native_ptr(), &mut req, 1, request.admin.options, request.admin.queue);
        rd::rd_kafka_ListConsumerGroupOffsets_destroy(req);
    }
    request.answer(|event| {
        // SAFETY: `event` is live for this closure; the result, its group
        // and partitions (and their strings and metadata) live as long as it.
        unsafe {
            let result = rd::rd_kafka_event_ListConsumerGroupOffsets_result(event);
            if result.is_null() {
                return Err(GroupError::Failed { what: what.clone(), detail: "unexpected answer".into() });
            }
            let mut n = 0usize;
            let g = only_group(&what, group, rd::rd_kafka_ListConsumerGroupOffsets_result_groups(result, &mut n), n)?;
            judge_refusals(group, refused_partitions(g))?;
            let mut offsets: Vec<GroupOffset> = elems(rd::rd_kafka_group_result_partitions(g))
                .iter()
                .filter(|p| p.offset >= 0)
                .map(|p| GroupOffset { topic: owned(p.topic), partition: p.partition, offset: p.offset, metadata: metadata_of(p) })
                .collect();
            offsets.sort();
            Ok(offsets)
        }
    })
}

/// A partition's metadata bytes as a string (Java's is a string too).
fn metadata_of(p: &rd::rd_kafka_topic_partition_t) -> String {
    if p.metadata.is_null() || p.metadata_size == 0 {
        return String::new();
    }
    // SAFETY: librdkafka keeps `metadata_size` bytes at `metadata` for as
    // long as the partition lives, which outlives this borrow.
    let bytes = unsafe { std::slice::from_raw_parts(p.metadata as *const u8, p.metadata_size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks what librdkafka or the broker would refuse, with a message that
/// names the partition, before anything is sent.
fn check_offsets(offsets: &[GroupOffset]) -> Result<(), GroupError> {
    let mut seen = std::collections::HashSet::new();
    for o in offsets {
        if o.offset < 0 {
            return Err(GroupError::Invalid(format!("{}-{}: offset {} is negative; a committed offset is 0 or more", o.topic, o.partition, o.offset)));
        }
        if !seen.insert((o.topic.as_str(), o.partition)) {
            return Err(GroupError::Invalid(format!("{}-{} is given twice; give each partition once", o.topic, o.partition)));
        }
    }
    Ok(())
}

/// A partition list librdkafka owns and frees, built from `offsets`.
struct PartitionList(*mut rd::rd_kafka_topic_partition_list_t);

impl PartitionList {
    fn new<C: ClientContext>(client: &Client<C>, offsets: &[GroupOffset]) -> Result<PartitionList, GroupError> {
        // SAFETY: a new list of ours, destroyed on drop.
        let list = PartitionList(unsafe { rd::rd_kafka_topic_partition_list_new(offsets.len().min(i32::MAX as usize) as i32) });
        for o in offsets {
            let topic = c_string("topic", &o.topic)?;
            // SAFETY: `list` is live; librdkafka copies the topic name and
            // returns the new element, which lives as long as the list.
            let p = unsafe { &mut *rd::rd_kafka_topic_partition_list_add(list.0, topic.as_ptr(), o.partition) };
            p.offset = o.offset;
            if !o.metadata.is_empty() {
                // The list frees `metadata` with librdkafka's allocator when
                // destroyed, so it is allocated with it.
                // SAFETY: live handle; a fresh buffer of that size, filled
                // below, owned by the element from here on.
                let buf = unsafe { rd::rd_kafka_mem_malloc(client.native_ptr(), o.metadata.len()) };
                if buf.is_null() {
                    return Err(GroupError::Invalid(format!("{}-{}: no memory for its metadata", o.topic, o.partition)));
                }
                // SAFETY: `buf` has room for exactly these bytes; no overlap.
                unsafe { std::ptr::copy_nonoverlapping(o.metadata.as_ptr(), buf as *mut u8, o.metadata.len()) };
                p.metadata = buf;
                p.metadata_size = o.metadata.len();
            }
        }
        Ok(list)
    }
}

impl Drop for PartitionList {
    fn drop(&mut self) {
        // SAFETY: made in new, destroyed once, with the topics and metadata it owns.
        unsafe { rd::rd_kafka_topic_partition_list_destroy(self.0) };
    }
}

/// Commits `offsets` (with their metadata) for `group`, as an admin does
/// from outside the group. The group must have no active members:
/// otherwise [`GroupError::Active`] and nothing is changed. Every
/// partition the broker refuses for another reason is in
/// [`GroupError::Partitions`].
pub fn alter_group_offsets<C: ClientContext>(client: &Client<C>, group: &str, offsets: &[GroupOffset]) -> Result<(), GroupError> {
    if offsets.is_empty() {
        return Ok(());
    }
    check_offsets(offsets)?;
    let name = c_string("group", group)?;
    // Committing the same offsets again is harmless, so a moving
    // coordinator is simply retried.
    retrying(|| send_partition_list(client, &ALTER, format!("alter the offsets of group '{group}'"), group, &name, offsets))
}

/// Deletes the committed offsets of `partitions` (topic, partition) for
/// `group`, as `kafka-consumer-groups.sh --delete-offsets` does: a consumer
/// of the group then starts there from its `auto.offset.reset`. The broker
/// refuses while members of the group read those topics
/// ([`GroupError::Active`], GROUP_SUBSCRIBED_TO_TOPIC); every other
/// refused partition is in [`GroupError::Partitions`].
pub fn delete_group_offsets<C: ClientContext>(client: &Client<C>, group: &str, partitions: &[(String, i32)]) -> Result<(), GroupError> {
    if partitions.is_empty() {
        return Ok(());
    }
    let offsets: Vec<GroupOffset> =
        partitions.iter().map(|(t, p)| GroupOffset { topic: t.clone(), partition: *p, offset: 0, metadata: String::new() }).collect();
    check_offsets(&offsets)?;
    let name = c_string("group", group)?;
    // Deleting what is already deleted answers no error: retrying is harmless.
    retrying(|| send_partition_list(client, &DELETE, format!("delete the offsets of group '{group}'"), group, &name, &offsets))
}

/// The librdkafka calls of a group request that sends one partition list
/// and answers with the partitions it refused: AlterConsumerGroupOffsets
/// and DeleteConsumerGroupOffsets differ in these only.
struct PartitionListCalls<R> {
    op: rd::rd_kafka_admin_op_t,
    new: unsafe extern "C" fn(*const c_char, *const rd::rd_kafka_topic_partition_list_t) -> *mut R,
    send: unsafe extern "C" fn(*mut rd::rd_kafka_t, *mut *mut R, usize, *const rd::rd_kafka_AdminOptions_t, *mut rd::rd_kafka_queue_t),
    destroy: unsafe extern "C" fn(*mut R),
    result: unsafe extern "C" fn(*mut rd::rd_kafka_event_t) -> *const rd::rd_kafka_event_t,
    groups: unsafe extern "C" fn(*const rd::rd_kafka_event_t, *mut usize) -> *mut *const rd::rd_kafka_group_result_t,
}

const ALTER: PartitionListCalls<rd::rd_kafka_AlterConsumerGroupOffsets_t> = PartitionListCalls {
    op: rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS,
    new: rd::rd_kafka_AlterConsumerGroupOffsets_new,
    send: rd::rd_kafka_AlterConsumerGroupOffsets,
    destroy: rd::rd_kafka_AlterConsumerGroupOffsets_destroy,
    result: rd::rd_kafka_event_AlterConsumerGroupOffsets_result,
    groups: rd::rd_kafka_AlterConsumerGroupOffsets_result_groups,
};

const DELETE: PartitionListCalls<rd::rd_kafka_DeleteConsumerGroupOffsets_t> = PartitionListCalls {
    op: rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS,
    new: rd::rd_kafka_DeleteConsumerGroupOffsets_new,
    send: rd::rd_kafka_DeleteConsumerGroupOffsets,
    destroy: rd::rd_kafka_DeleteConsumerGroupOffsets_destroy,
    result: rd::rd_kafka_event_DeleteConsumerGroupOffsets_result,
    groups: rd::rd_kafka_DeleteConsumerGroupOffsets_result_groups,
};

/// Sends `offsets` of `group` (named `name`) with `calls`, once: `what` is
/// the request in words, for its errors.
fn send_partition_list<C: ClientContext, R>(
    client: &Client<C>,
    calls: &PartitionListCalls<R>,
    what: String,
    group: &str,
    name: &CStr,
    offsets: &[GroupOffset],
) -> Result<(), GroupError> {
    let list = PartitionList::new(client, offsets)?;
    // SAFETY: the request copies the group name and list; it is ours,
    // destroyed right after the call (librdkafka copies it again).
    let mut req = unsafe { (calls.new)(name.as_ptr(), list.0) };
    drop(list);
    let request = Request::new(client, calls.op, what.clone(), group);
    // SAFETY: live handle, options and queue; an array of one request.
    unsafe {
        (calls.send)(client.native_ptr(), &mut req, 1, request.admin.options, request.admin.queue);
        (calls.destroy)(req);
    }
    request.answer(|event| {
        // SAFETY: `event` is live for this closure; the result, its group
        // and partitions live as long as it.
        unsafe {
            let result = (calls.result)(event);
            if result.is_null() {
                return Err(GroupError::Failed { what: what.clone(), detail: "unexpected answer".into() });
            }
            let mut n = 0usize;
            let g = only_group(&what, group, (calls.groups)(result, &mut n), n)?;
            judge_refusals(group, refused_partitions(g))
        }
    })
}

/// Refusals that all say "the group has members" are [`GroupError::Active`],
/// all "the coordinator is moving" [`GroupError::CoordinatorUnavailable`];
/// any other refusal is reported with every refused partition.
fn judge_refusals(group: &str, refused: Vec<(rd::rd_kafka_resp_err_t, PartitionError)>) -> Result<(), GroupError> {
    let Some((first, p)) = refused.first() else { return Ok(()) };
    let detail = format!("{} on {}-{} and {} more partition(s)", code_text(*first), p.topic, p.partition, refused.len() - 1);
    if refused.iter().all(|(code, _)| means_active(*code)) {
        return Err(GroupError::Active { group: group.into(), detail });
    }
    if refused.iter().all(|(code, _)| coordinator_moving(*code)) {
        return Err(GroupError::CoordinatorUnavailable { what: format!("group '{group}'"), detail });
    }
    Err(GroupError::Partitions { group: group.into(), refused: refused.into_iter().map(|(_, p)| p).collect() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rd::rd_kafka_resp_err_t as E;
    use rdkafka::consumer::Consumer;

    fn refusal(code: E, topic: &str, partition: i32) -> (E, PartitionError) {
        (code, PartitionError { topic: topic.into(), partition, error: code_text(code) })
    }

    #[test]
    fn assignments_are_read_in_the_consumer_protocol_form() {
        // version 1, two topics: "lease" [0], "other" [0, 3]; no user data.
        let mut b = vec![0, 1, 0, 0, 0, 2];
        b.extend([0, 5]);
        b.extend(b"lease");
        b.extend([0, 0, 0, 1, 0, 0, 0, 0]);
        b.extend([0, 5]);
        b.extend(b"other");
        b.extend([0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3]);
        b.extend([0xff, 0xff, 0xff, 0xff]);
        assert!(assignment_has(&b, "lease", 0));
        assert!(assignment_has(&b, "other", 3));
        assert!(!assignment_has(&b, "lease", 1));
        assert!(!assignment_has(&b, "leas", 0));
        // Cut anywhere, it names nothing rather than a guess.
        for cut in 0..b.len() - 4 {
            assert!(!assignment_has(&b[..cut], "other", 3), "cut at {cut}");
        }
        assert!(!assignment_has(&[], "lease", 0));
    }

    #[test]
    fn states_map_and_only_member_states_count_as_active() {
        use rd::rd_kafka_consumer_group_state_t as S;
        assert_eq!(state_from(S::RD_KAFKA_CONSUMER_GROUP_STATE_EMPTY), GroupState::Empty);
        assert_eq!(state_from(S::RD_KAFKA_CONSUMER_GROUP_STATE_STABLE), GroupState::Stable);
        assert_eq!(state_from(S::RD_KAFKA_CONSUMER_GROUP_STATE_DEAD), GroupState::Dead);
        assert_eq!(state_from(S::RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN), GroupState::Unknown);
        let active: Vec<GroupState> =
            [GroupState::Unknown, GroupState::PreparingRebalance, GroupState::CompletingRebalance, GroupState::Stable, GroupState::Dead, GroupState::Empty]
                .into_iter()
                .filter(|s| s.is_active())
                .collect();
        assert_eq!(active, [GroupState::PreparingRebalance, GroupState::CompletingRebalance, GroupState::Stable]);
        assert_eq!(GroupState::CompletingRebalance.to_string(), "CompletingRebalance", "the name kafka-consumer-groups.sh prints");
    }

    #[test]
    fn member_refusals_are_active_and_any_other_refusal_is_reported_with_every_partition() {
        assert_eq!(judge_refusals("g", Vec::new()), Ok(()));
        let active =
            judge_refusals("g", vec![refusal(E::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, "t", 0), refusal(E::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, "t", 1)]);
        let Err(GroupError::Active { group, detail }) = active else { panic!("{active:?}") };
        assert_eq!(group, "g");
        assert!(detail.contains("UnknownMemberId") && detail.contains("t-0"), "{detail}");
        let mixed = judge_refusals(
            "g",
            vec![refusal(E::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, "t", 0), refusal(E::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, "u", 3)],
        );
        let Err(e @ GroupError::Partitions { .. }) = mixed else { panic!("{mixed:?}") };
        let text = e.to_string();
        assert!(text.starts_with("group 'g': the broker refused 2 partition(s): t-0: "), "{text}");
        assert!(text.contains("u-3: TopicAuthorizationFailed"), "{text}");
    }

    #[test]
    fn duplicates_and_negative_offsets_are_refused_before_sending() {
        let o = |p: i32, offset: i64| GroupOffset { topic: "t".into(), partition: p, offset, metadata: String::new() };
        assert_eq!(check_offsets(&[o(0, 5), o(1, 0)]), Ok(()));
        assert!(matches!(check_offsets(&[o(0, 5), o(0, 6)]), Err(GroupError::Invalid(e)) if e == "t-0 is given twice; give each partition once"));
        assert!(matches!(check_offsets(&[o(2, -1)]), Err(GroupError::Invalid(e)) if e.starts_with("t-2: offset -1 is negative")));
    }

    #[test]
    fn coordinator_moves_are_retried_not_reported_as_refusals() {
        let moving = judge_refusals("g", vec![refusal(E::RD_KAFKA_RESP_ERR_NOT_COORDINATOR, "t", 0)]);
        assert!(matches!(moving, Err(GroupError::CoordinatorUnavailable { .. })), "{moving:?}");
        assert!(matches!(failure("w", "g", E::RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, "x"), GroupError::CoordinatorUnavailable { .. }));
        assert!(matches!(failure("w", "g", E::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, "x"), GroupError::Active { .. }));
        assert!(matches!(failure("w", "g", E::RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, "x"), GroupError::Failed { .. }));
    }

    #[test]
    fn offsets_are_listed_only_through_a_client_with_a_consumer_group() {
        // No broker at this address: nothing here reaches the network.
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", "127.0.0.1:1");
        let admin: rdkafka::admin::AdminClient<rdkafka::client::DefaultClientContext> = config.create().unwrap();
        assert!(!has_consumer_group(admin.inner()));
        let plain: BaseConsumer = config.create().unwrap();
        assert!(!has_consumer_group(plain.client()), "a consumer without group.id has no consumer group either");
        let refused = group_offsets(admin.inner(), "g");
        assert!(matches!(&refused, Err(GroupError::Invalid(e)) if e.contains("admin_consumer")), "{refused:?}");
        let consumer = admin_consumer(&config).unwrap();
        assert!(has_consumer_group(consumer.client()));
    }

    #[test]
    fn the_active_message_says_what_to_do() {
        let e = GroupError::Active { group: "orders".into(), detail: "x".into() };
        let text = e.to_string();
        assert!(text.contains("left alone") && text.contains("stop the group's consumers") && text.contains("--group orders"), "{text}");
        let e = GroupError::NoAnswer { what: "list consumer groups".into(), after: WAIT };
        assert_eq!(e.to_string(), "list consumer groups: no answer from the cluster within 20s; check bootstrap.servers and that the brokers are up");
    }
}
