//! Java MirrorMaker 2's source positions, kept by its Connect worker in the
//! offsets topic on the target (`mm2-offsets.<source>.internal`, reference
//! §3.8), so that a flow moves between Java MM2 and this mirror without
//! copying its records again.
//!
//! - **Taking over** ([`start`], before the flow's consumers start): the
//!   topic is read whole and read committed, every partition from the
//!   beginning to the last stable offset it had (last record per key wins,
//!   a null value deletes the key; see [`read_positions`]), and
//!   every source partition of the flow's group `mm2.A->B` continues from
//!   the later of its own committed offset and Java's position `offset + 1`
//!   (Java stores the last replicated offset, a consumer group the next one
//!   to read): both name only records the target acknowledged, and after
//!   ours, then Java, then ours again the group's own offsets are behind
//!   what Java copied. The group is never moved back.
//! - **Handing back** (`--mm2.write.connect.offsets`): a thread reads the
//!   group's committed offsets every commit interval, and once more after
//!   the streams are done at the stop, and writes the positions that
//!   changed in Java's bytes and partition, so Java MM2 started later
//!   continues where we stopped.
//!
//! Records are JsonConverter's with `schemas.enable=false`: key
//! `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"foo"}]`
//! (the first element is the connector's name: `MirrorSourceConnector` in
//! MM2 mode, a Connect worker's connector's own name; `ConnectOffsets::connector`),
//! value `{"offset":1234}`, compact. The JSON is written and read by hand
//! (module `json`): the shapes are fixed and tiny. A writer must produce
//! the same key bytes, in the same partition (`murmur2(key) % partitions`,
//! Java's default partitioner), or compaction and Java's last-wins read go
//! wrong.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use log::{debug, info, warn};
use rdkafka::consumer::Consumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{ClientConfig, ClientContext};

use crate::engine::pipeline::stream::log_names;
use crate::kafka::groups::{self, GroupError, GroupOffset};
use crate::kafka::topic_reader::{self, ReadError};
use crate::ops::shutdown::Shutdown;
use crate::plan::{ConnectOffsets, Flow};

pub mod file;
mod json;
pub mod topic;

pub(crate) use json::push_json_string;
use json::{decode_key, decode_value, Key};
pub use json::{encode_key, encode_value, partition_of, CONNECTOR};

/// How long reading the whole offsets topic at start may go without progress.
const READ_PATIENCE: Duration = Duration::from_secs(120);

/// How long a metadata request or a flush of written positions may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Between two attempts while a cluster does not answer at start.
const RETRY_EVERY: Duration = Duration::from_secs(5);

/// A source partition: (topic, partition).
pub type SourcePartition = (String, i32);

/// Why Java MM2's positions could not be read or written.
#[derive(Debug)]
pub enum ConnectOffsetsError {
    /// The cluster did not answer; worth another try.
    Unreachable { cluster: String, error: KafkaError },
    /// The offsets topic exists but could not be read to its end.
    Read { topic: String, error: ReadError },
    /// The flow's group on the source could not be read or moved.
    Group { group: String, source: GroupError },
    /// A client could not be made from the settings.
    Client { what: String, error: KafkaError },
    /// Java Connect standalone's offsets file could not be read or written.
    File(file::FileError),
    /// The offsets topic is missing and could not be made.
    Topic(topic::TopicError),
}

impl ConnectOffsetsError {
    /// Whether waiting may help: an unanswered request or a moving coordinator.
    fn transient(&self) -> bool {
        match self {
            ConnectOffsetsError::Unreachable { .. } => true,
            ConnectOffsetsError::Group { source, .. } => {
                matches!(source, GroupError::NoAnswer { .. } | GroupError::CoordinatorUnavailable { .. })
            }
            _ => false,
        }
    }
}

impl fmt::Display for ConnectOffsetsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectOffsetsError::Unreachable { cluster, error } => {
                write!(f, "{cluster} does not answer ({error}); check its bootstrap.servers and that its brokers are up")
            }
            ConnectOffsetsError::Read { topic, error } => write!(
                f,
                "cannot read Java MirrorMaker 2's positions in {topic} ({error}); without them the flow would copy again what Java MM2 \
                 copied. Check the target's brokers and that this client may read {topic} (ACL READ on the topic)"
            ),
            ConnectOffsetsError::Group { group, source } => write!(f, "cannot take over Java MirrorMaker 2's positions into group '{group}': {source}"),
            ConnectOffsetsError::Client { what, error } => write!(f, "cannot create {what}: {error}"),
            ConnectOffsetsError::File(e) => write!(f, "{e}"),
            ConnectOffsetsError::Topic(e) => write!(f, "{e}"),
        }
    }
}

impl From<topic::TopicError> for ConnectOffsetsError {
    fn from(e: topic::TopicError) -> Self {
        match e {
            topic::TopicError::Client { what, error } => ConnectOffsetsError::Client { what, error },
            topic::TopicError::Unreachable(error) => ConnectOffsetsError::Unreachable { cluster: "the target cluster".into(), error },
            topic::TopicError::Read { topic, error } => ConnectOffsetsError::Read { topic, error },
            e @ topic::TopicError::NotMade { .. } => ConnectOffsetsError::Topic(e),
        }
    }
}

impl std::error::Error for ConnectOffsetsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectOffsetsError::Unreachable { error, .. } | ConnectOffsetsError::Client { error, .. } => Some(error),
            ConnectOffsetsError::Read { error, .. } => Some(error),
            ConnectOffsetsError::Group { source, .. } => Some(source),
            ConnectOffsetsError::File(e) => Some(e),
            ConnectOffsetsError::Topic(e) => Some(e),
        }
    }
}

/// Java MirrorMaker 2's positions of one flow, as read from the offsets topic.
#[derive(Debug, Default, PartialEq)]
pub struct JavaPositions {
    /// The last replicated offset of each source partition.
    pub offsets: BTreeMap<SourcePartition, i64>,
    /// Records read.
    pub records: u64,
    /// Records of other connectors or other source clusters, left alone.
    pub others: u64,
    /// Records that are not JsonConverter's, skipped; the first is described.
    pub malformed: u64,
    pub first_malformed: Option<String>,
    /// Partitions of the offsets topic read only to an open transaction:
    /// (partition, last stable offset, high watermark).
    pub open: Vec<(i32, i64, i64)>,
}

impl JavaPositions {
    /// Folds one record in, in the topic's order: the last record of a key
    /// wins, a null value deletes it.
    pub fn apply(&mut self, connector: &str, cluster: &str, key: Option<&[u8]>, value: Option<&[u8]>, at: &str) {
        self.records += 1;
        let Some(key) = key else { return self.skip(at, "no key".into()) };
        let (topic, partition) = match decode_key(key, connector) {
            Ok(Key::Source { cluster: c, topic, partition }) if c == cluster => (topic, partition),
            Ok(_) => {
                self.others += 1;
                return;
            }
            Err(e) => return self.skip(at, format!("key {}: {e}", String::from_utf8_lossy(key))),
        };
        match value.map(decode_value) {
            None => {
                self.offsets.remove(&(topic, partition));
            }
            Some(Ok(offset)) => {
                self.offsets.insert((topic, partition), offset);
            }
            Some(Err(e)) => self.skip(at, format!("value {}: {e}", String::from_utf8_lossy(value.unwrap_or_default()))),
        }
    }

    fn skip(&mut self, at: &str, why: String) {
        self.malformed += 1;
        self.first_malformed.get_or_insert_with(|| format!("{at}: {why}"));
    }
}

// ---------------------------------------------------------------------------
// Reading.

/// Reads the whole offsets `topic` (every partition, from the beginning to
/// the last stable offset it has when asked) for the positions of the flow
/// from `cluster`. None when the topic does not exist. Gives up when `stop`
/// says so.
///
/// Read committed: Java MM2 with exactly-once writes a position in the
/// same transaction as the records it names, so the position of an aborted
/// transaction names records no read_committed consumer of the target ever
/// sees, and continuing after it would lose them. Without exactly-once
/// nothing is transactional and every record is read as before. The end of
/// a read_committed read is each partition's last stable offset: a
/// transaction still open there (a Java MM2 still running, or one that died
/// mid-transaction, which the broker aborts after its
/// `transaction.timeout.ms`) does not hold the read up; its positions are
/// not taken (they are listed in [`JavaPositions::open`] and warned about),
/// so if it commits later its records are copied again: duplicates, never
/// a loss.
pub fn read_positions(
    config: &ClientConfig,
    topic: &str,
    connector: &str,
    cluster: &str,
    stop: &dyn Fn() -> bool,
) -> Result<Option<JavaPositions>, ConnectOffsetsError> {
    let mut positions = JavaPositions::default();
    let read = topic::read_whole(config, topic, READ_PATIENCE, stop, |m| {
        positions.apply(connector, cluster, m.key(), m.payload(), &format!("{topic}-{} offset {}", m.partition(), m.offset()))
    })?;
    let Some(stable) = read else { return Ok(None) };
    positions.open = open_transactions(config, topic, &stable);
    Ok(Some(positions))
}

/// The partitions whose high watermark is past the last stable offset the
/// read stopped at, as (partition, last stable offset, high watermark): an
/// open transaction. Asked only to say so; a failed question is logged and
/// answers none.
fn open_transactions(config: &ClientConfig, topic: &str, stable: &topic_reader::Ends) -> Vec<(i32, i64, i64)> {
    let consumer = match topic::reader(config, topic, "read_uncommitted") {
        Ok(c) => c,
        Err(e) => {
            debug!("open transactions in {topic} not looked for: {e}");
            return Vec::new();
        }
    };
    let mut open = Vec::new();
    for (&p, &lso) in stable {
        match consumer.fetch_watermarks(topic, p, REQUEST_TIMEOUT) {
            Ok((_, high)) if high > lso => open.push((p, lso, high)),
            Ok(_) => {}
            Err(e) => debug!("open transactions in {topic}-{p} not looked for: {e}"),
        }
    }
    open
}

// ---------------------------------------------------------------------------
// Taking over.

/// How the take-over at start ended.
pub enum TakenOver {
    /// Asked to stop while a cluster did not answer.
    Stopped,
    /// Done; the hand-back writer's setup when the plan asks for one (it
    /// runs on the node that leads the flow's side tasks).
    Done(Option<Box<HandBackSetup>>),
}

/// Takes Java MM2's positions over into the flow's group (see the module
/// doc). Every node of a mirror does it at its start, before its
/// consumers read; a node joining a running mirror finds the group active
/// and leaves it to the consumers that own the positions.
pub fn take_over_at_start(
    flow: &Flow,
    spec: &Arc<ConnectOffsets>,
    commit_interval: Duration,
    shutdown: &Arc<Shutdown>,
) -> Result<TakenOver, ConnectOffsetsError> {
    let Some(group) = flow.source.group_id.clone() else {
        return Ok(TakenOver::Done(None));
    };
    // The offsets topic is the Connect worker's: Java reads and makes it
    // with the worker's own settings (the target's keys, not its admin.*).
    let target = flow.target.settings.client_config();
    // The flow's group on the source is altered by an admin client.
    let source = flow.source_admin_config();
    let java = loop {
        match take_over(flow, spec, &group, &target, &source, shutdown) {
            Ok(java) => break java,
            Err(e) if e.transient() && !shutdown.stopping() => {
                warn!("[{}] {e}; Java MirrorMaker 2's positions are read before anything is copied: trying again in {}s", flow.name, RETRY_EVERY.as_secs());
                let until = Instant::now() + RETRY_EVERY;
                while Instant::now() < until && !shutdown.stopping() {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            Err(_) if shutdown.stopping() => return Ok(TakenOver::Stopped),
            Err(e) => return Err(e),
        }
    };
    if !spec.hand_back {
        return Ok(TakenOver::Done(None));
    }
    Ok(TakenOver::Done(Some(Box::new(HandBackSetup {
        name: flow.name.clone(),
        spec: spec.clone(),
        group,
        source,
        target,
        written: java.offsets,
        interval: commit_interval,
    }))))
}

/// What the hand-back writer of a flow needs (`--mm2.write.connect.offsets`).
#[derive(Clone)]
pub struct HandBackSetup {
    name: String,
    spec: Arc<ConnectOffsets>,
    group: String,
    source: ClientConfig,
    target: ClientConfig,
    /// Java's positions read at the take-over.
    written: BTreeMap<SourcePartition, i64>,
    interval: Duration,
}

impl HandBackSetup {
    /// Starts a writer that runs until `shutdown` stops and, once
    /// `workers_done` is set, writes the last positions and ends.
    pub fn spawn(&self, workers_done: Arc<AtomicBool>, shutdown: Arc<Shutdown>) -> std::io::Result<JoinHandle<()>> {
        let writer = HandBack { setup: self.clone(), workers_done, shutdown };
        std::thread::Builder::new().name(format!("mirrormaker-connect-offsets-{}", self.name)).spawn(move || writer.run())
    }
}

/// One attempt: Java's positions read, the group's missing ones committed.
/// Returns Java's positions (the flow's, selected by its filter).
fn take_over(
    flow: &Flow,
    spec: &ConnectOffsets,
    group: &str,
    target: &ClientConfig,
    source: &ClientConfig,
    shutdown: &Shutdown,
) -> Result<JavaPositions, ConnectOffsetsError> {
    let read = match &spec.file {
        Some(path) => read_file_positions(path, &spec.connector, &spec.source_alias)?,
        None => read_positions(target, &spec.topic, &spec.connector, &spec.source_alias, &|| shutdown.stopping())?,
    };
    let Some(mut java) = read else {
        info!("[{}] no {}: no Java MirrorMaker 2 positions to continue from", flow.name, where_kept(spec));
        return Ok(JavaPositions::default());
    };
    if java.malformed > 0 {
        warn!(
            "[{}] {} of {} records of {} are not Connect's JSON and were skipped (first: {})",
            flow.name,
            java.malformed,
            java.records,
            spec.topic,
            java.first_malformed.as_deref().unwrap_or("")
        );
    }
    if !java.open.is_empty() {
        let open: Vec<String> = java.open.iter().map(|(p, lso, high)| format!("partition {p}: offsets {lso} to {}", high - 1)).collect();
        warn!(
            "[{}] {} holds transactions still open ({}): a Java MirrorMaker 2 with exactly-once is still running, or died mid-transaction \
             (the broker aborts it after its transaction.timeout.ms). Their positions are not taken over: if they commit, the records \
             they copied are copied again. Stop every Java MirrorMaker 2 of this flow before the take-over",
            flow.name,
            spec.topic,
            open.join(", ")
        );
    }
    // Java keeps positions of topics it no longer mirrors; they are not ours.
    java.offsets.retain(|(topic, _), _| flow.filter.matches(topic));
    if java.offsets.is_empty() {
        info!("[{}] {} holds no positions of this flow: nothing to continue from Java MirrorMaker 2", flow.name, where_kept(spec));
        return Ok(java);
    }
    let admin = groups::admin_consumer(source).map_err(|error| ConnectOffsetsError::Client { what: "a group admin client for the source".into(), error })?;
    // A partition deleted since Java copied it has nothing left to copy,
    // and the broker refuses a commit for it.
    let metadata = admin
        .fetch_metadata(None, REQUEST_TIMEOUT)
        .map_err(|error| ConnectOffsetsError::Unreachable { cluster: format!("source cluster {}", flow.source.bootstrap), error })?;
    let existing: std::collections::HashSet<SourcePartition> =
        metadata.topics().iter().flat_map(|t| t.partitions().iter().map(move |p| (t.name().to_string(), p.id()))).collect();
    let before = java.offsets.len();
    java.offsets.retain(|tp, _| existing.contains(tp));
    let gone = before - java.offsets.len();
    let group_err = |source| ConnectOffsetsError::Group { group: group.into(), source };
    let committed: BTreeMap<SourcePartition, i64> =
        groups::group_offsets(admin.client(), group).map_err(group_err)?.into_iter().map(|o| ((o.topic, o.partition), o.offset)).collect();
    let choice = choose_positions(&java.offsets, &committed);
    let mut taken = choice.take.len();
    if !choice.take.is_empty() {
        match groups::alter_group_offsets(admin.client(), group, &choice.take) {
            Ok(()) => {}
            // Another node of this mirror (or another copy of the flow) is
            // running: its consumers own the positions, and took them over
            // when it started.
            Err(e @ GroupError::Active { .. }) => {
                info!("[{}] Java MirrorMaker 2's positions left to the running members of the flow's group (another node of this mirror took them over at its start): {e}", flow.name);
                taken = 0;
            }
            Err(GroupError::Partitions { refused, .. }) => {
                warn!(
                    "[{}] the source refused Java MirrorMaker 2's positions for {} partition(s), which keep the group's own committed offset \
                     or else start from auto.offset.reset: {}",
                    flow.name,
                    refused.len(),
                    refused.iter().map(|r| format!("{}-{}: {}", r.topic, r.partition, r.error)).collect::<Vec<_>>().join("; ")
                );
                taken -= refused.len().min(taken);
            }
            Err(e) => return Err(group_err(e)),
        }
    }
    if taken > 0 && !choice.past_own.is_empty() {
        // The group's own offsets there are from before Java ran (ours, then
        // Java, then ours again): continuing from them would copy again
        // what Java copied meanwhile.
        log_names(
            &flow.name,
            &format!("Java MirrorMaker 2's positions are later than group {group}'s own committed offsets on"),
            "partitions",
            &choice.past_own,
        );
    }
    info!(
        "[{}] {taken} partition(s) continue from Java MirrorMaker 2's offsets in {} ({} of them past the group {group}'s own earlier \
         committed offset; {} kept the group's own committed offset, at or past Java's; {gone} no longer exist at the source; {} records \
         of other connectors or clusters ignored)",
        flow.name,
        where_kept(spec),
        choice.past_own.len(),
        choice.kept,
        java.others
    );
    Ok(java)
}

/// Where the positions are kept, for messages.
fn where_kept(spec: &ConnectOffsets) -> String {
    match &spec.file {
        Some(path) => format!("offsets file {}", path.display()),
        None => format!("{} on the target", spec.topic),
    }
}

/// Where the partitions of Java's positions continue.
#[derive(Debug, Default, PartialEq)]
struct Choice {
    /// The group offsets to commit: Java's next offset where it is later
    /// than the group's own committed offset, or the group has none.
    take: Vec<GroupOffset>,
    /// Of those, the partitions where the group had an earlier offset of its
    /// own, described: `topic-p (group's X, Java's Y)`.
    past_own: Vec<String>,
    /// Partitions whose own committed offset is at or past Java's next one.
    kept: usize,
}

/// Per partition, the later of the group's own committed offset and Java's
/// next offset (the one after its last replicated one). Both name only
/// records the target acknowledged (Java writes a position after the ack,
/// ours commits after it), so the later one loses nothing and copies
/// nothing twice; the earlier one would copy again what the other mirror
/// copied since. Never moves the group back.
fn choose_positions(java: &BTreeMap<SourcePartition, i64>, committed: &BTreeMap<SourcePartition, i64>) -> Choice {
    let mut choice = Choice::default();
    for (tp, &last) in java {
        let own = committed.get(tp).copied();
        // A negative position is Java's "nothing yet": the group's own
        // offset, or else auto.offset.reset, decides, as for Java.
        if last < 0 || own.is_some_and(|own| own > last) {
            choice.kept += usize::from(own.is_some());
            continue;
        }
        let (topic, partition) = tp;
        if let Some(own) = own {
            choice.past_own.push(format!("{topic}-{partition} (group's {own}, Java's {})", last + 1));
        }
        choice.take.push(GroupOffset { topic: topic.clone(), partition: *partition, offset: last + 1, metadata: String::new() });
    }
    choice
}

// ---------------------------------------------------------------------------
// Handing back.

/// Why a round of the hand-back wrote nothing for sure (the next round
/// writes it again).
#[derive(Debug)]
enum HandBackError {
    /// The flow's group offsets could not be read.
    Group(GroupError),
    Write(topic::WriteError),
}

impl fmt::Display for HandBackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandBackError::Group(e) => write!(f, "{e}"),
            HandBackError::Write(e) => write!(f, "{e}"),
        }
    }
}

/// The hand-back writer of one flow.
struct HandBack {
    /// Its `written` is what the offsets topic holds for each source
    /// partition as far as we know: Java's positions read at start, then
    /// what we wrote.
    setup: HandBackSetup,
    workers_done: Arc<AtomicBool>,
    shutdown: Arc<Shutdown>,
}

impl HandBack {
    fn run(mut self) {
        let name = self.setup.name.clone();
        let admin = match groups::admin_consumer(&self.setup.source) {
            Ok(a) => a,
            Err(e) => return warn!("[{name}] positions are not handed back to Java MirrorMaker 2: cannot create a group admin client: {e}"),
        };
        if let Some(path) = self.setup.spec.file.clone() {
            return self.run_to_file(admin.client(), &path);
        }
        let mut writer: Option<topic::Writer> = None;
        let mut total = 0usize;
        let mut next = Instant::now() + self.setup.interval;
        loop {
            let finishing = self.shutdown.stopping() && (self.workers_done.load(Ordering::SeqCst) || self.shutdown.deadline_passed());
            if finishing || Instant::now() >= next {
                if writer.is_none() {
                    writer = self.writer();
                }
                if let Some(w) = &writer {
                    match self.write_changed(admin.client(), w) {
                        Ok(k) => total += k,
                        Err(e) => warn!("[{name}] positions not handed back to {} this time: {e}", self.setup.spec.topic),
                    }
                }
                next = Instant::now() + self.setup.interval;
            }
            if finishing {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        info!("[{name}] {total} position(s) handed back to Java MirrorMaker 2 in {} over the run", self.setup.spec.topic);
    }

    /// A writer of the topic, after creating it as Java's Connect worker
    /// would when missing; None (said why) when it cannot be had yet.
    fn writer(&self) -> Option<topic::Writer> {
        let spec = &self.setup.spec;
        let made = topic::ensure(&self.setup.target, &spec.topic, spec.partitions, spec.replication_factor, REQUEST_TIMEOUT)
            .map_err(|e| e.to_string())
            .and_then(|n| topic::Writer::new(&self.setup.target, &spec.topic, n).map_err(|e| format!("cannot create a producer for {}: {e}", spec.topic)));
        made.map_err(|e| warn!("[{}] {e}; tried again at the next commit interval", self.setup.name)).ok()
    }

    /// Writes the positions the group committed that differ from what the
    /// topic holds; returns how many.
    fn write_changed<C: ClientContext>(&mut self, admin: &rdkafka::client::Client<C>, writer: &topic::Writer) -> Result<usize, HandBackError> {
        let committed = groups::group_offsets(admin, &self.setup.group).map_err(HandBackError::Group)?;
        let changed = changed_positions(&committed, &self.setup.written);
        if changed.is_empty() {
            return Ok(0);
        }
        writer.write(&self.entries(&changed), REQUEST_TIMEOUT).map_err(HandBackError::Write)?;
        debug!("[{}] {} position(s) handed back to {}", self.setup.name, changed.len(), self.setup.spec.topic);
        let n = changed.len();
        self.setup.written.extend(changed);
        Ok(n)
    }

    /// The records of `changed` positions, in Connect's bytes.
    fn entries(&self, changed: &[(SourcePartition, i64)]) -> Vec<file::Entry> {
        let spec = &self.setup.spec;
        changed.iter().map(|((topic, p), offset)| (encode_key(&spec.connector, &spec.source_alias, topic, *p), Some(encode_value(*offset)))).collect()
    }
}

/// Java's form (the last replicated offset) of every committed offset that
/// differs from what the topic holds. A committed 0 replicated nothing.
fn changed_positions(committed: &[GroupOffset], written: &BTreeMap<SourcePartition, i64>) -> Vec<(SourcePartition, i64)> {
    committed
        .iter()
        .filter(|o| o.offset > 0)
        .map(|o| ((o.topic.clone(), o.partition), o.offset - 1))
        .filter(|(tp, last)| written.get(tp) != Some(last))
        .collect()
}

// ---------------------------------------------------------------------------
// The flow's positions in the file.

/// The positions of the flow from `cluster` in Java Connect standalone's
/// offsets file (the same keys and values as the topic's, in a map); None
/// when there is no file yet.
pub fn read_file_positions(path: &std::path::Path, connector: &str, cluster: &str) -> Result<Option<JavaPositions>, ConnectOffsetsError> {
    let Some(entries) = file::load(path).map_err(ConnectOffsetsError::File)? else { return Ok(None) };
    let mut positions = JavaPositions::default();
    for (key, value) in &entries {
        positions.apply(connector, cluster, Some(key), value.as_deref(), &path.display().to_string());
    }
    Ok(Some(positions))
}

impl HandBack {
    /// The hand-back to Java Connect standalone's offsets file: the same
    /// rounds, each one read-merge-replace of the file.
    fn run_to_file<C: ClientContext>(mut self, admin: &rdkafka::client::Client<C>, path: &std::path::Path) {
        let mut total = 0usize;
        let mut next = Instant::now() + self.setup.interval;
        loop {
            let finishing = self.shutdown.stopping() && (self.workers_done.load(Ordering::SeqCst) || self.shutdown.deadline_passed());
            if finishing || Instant::now() >= next {
                match self.write_changed_to_file(admin, path) {
                    Ok(k) => total += k,
                    Err(e) => warn!("[{}] positions not written to the offsets file this time: {e}", self.setup.name),
                }
                next = Instant::now() + self.setup.interval;
            }
            if finishing {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        info!("[{}] {total} position(s) written to the offsets file {} over the run", self.setup.name, path.display());
    }

    fn write_changed_to_file<C: ClientContext>(&mut self, admin: &rdkafka::client::Client<C>, path: &std::path::Path) -> Result<usize, String> {
        let committed = groups::group_offsets(admin, &self.setup.group).map_err(|e| e.to_string())?;
        let changed = changed_positions(&committed, &self.setup.written);
        if changed.is_empty() {
            return Ok(0);
        }
        file::update(path, &self.entries(&changed)).map_err(|e| e.to_string())?;
        let n = changed.len();
        self.setup.written.extend(changed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
