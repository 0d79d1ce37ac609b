//! Several mirror-maker nodes on one MM2 file form one mirror (issue #28
//! §1), end to end on real brokers, judged from outside: the binary's logs,
//! the clusters' topics and Java's own MirrorMaker 2 client classes.
//!
//! The partitions of a flow are split by the flow's consumer group on the
//! source; its side duties (heartbeats, checkpoints, group offset sync,
//! topic/config/ACL sync) must run on exactly one node at a time, elected
//! through a group on the flow's target cluster. A leading node logs
//! `[<source>-><target>] this node now leads the flow's side tasks`, and
//! `[<source>-><target>] this node no longer leads ...` when it stops
//! leading. From those lines (with their timestamps, and the moment the test
//! killed or stopped a node) the tests rebuild who led when and fail when two
//! nodes led at once or when the lead moved without a reason.
//!
//! A consumer group on the source (the "app") reads and commits throughout;
//! the checkpoints topic is read back with Java's Checkpoint deserializer
//! (scripts/mirror-client/run checkpoints) and must never go back, in
//! upstream or downstream offset, per (group, partition), across the changes
//! of leader; Java's RemoteClusterUtils.translateOffsets (run translate) of
//! the app's final position must point at or before the first record on the
//! target the app had not read, on every partition (a failover would miss
//! nothing).
//!
//! Every test has aliases of its own (`A<id>`, `B<id>`): its checkpoints
//! topic, offset-syncs topic and groups hold its own records only. Dropped,
//! a test deletes its topics and groups (CLUSTER_KEEP=1 keeps them).
//!
//! Run: scripts/test --test cluster -- --nocapture

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::Message;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

use common::*;
use mirror_maker::formats::Checkpoint;

/// How long copying a batch, or checkpointing a new position, may take on
/// a shared 2-core machine with three mirrors and three brokers on it.
const COPY: Duration = Duration::from_secs(180);
/// How long a new leader may take: the election group's session timeout is
/// 10 s, so a killed leader is replaced within ~10-20 s and a stopped one
/// within seconds; the rest is the noisy machine.
const TAKE_OVER: Duration = Duration::from_secs(60);

/// One flow A<id> -> B<id>, its source topic, the app's group and the MM2
/// file every node runs.
struct Flow {
    id: String,
    a: String,
    b: String,
    topic: String,
    remote: String,
    group: String,
    file: PathBuf,
}

impl Flow {
    fn new(partitions: i32) -> Flow {
        let id = short_id();
        let (a, b) = (format!("A{id}"), format!("B{id}"));
        let topic = format!("cl-{id}-t");
        create_topic(&source(), &topic, partitions, &[]);
        let extra: Vec<String> = vec![
            format!("{a}->{b}.groups = cl-{id}-.*"),
            // No heartbeats into A (other tests share it): B->A is not a flow.
            format!("{b}->{a}.emit.heartbeats.enabled = false"),
            "emit.checkpoints.interval.seconds = 1".into(),
            // MM2's default, set for [`heartbeat_emitters`]'s arithmetic.
            "emit.heartbeats.interval.seconds = 1".into(),
            "sync.group.offsets.enabled = true".into(),
            "sync.group.offsets.interval.seconds = 1".into(),
            "refresh.groups.interval.seconds = 1".into(),
        ];
        let lines = mm2_flow_lines(&a, &b, &format!("cl-{id}-.*"), &extra);
        let file = props("mm2.properties", &lines);
        Flow { remote: format!("{a}.{topic}"), group: format!("cl-{id}-app"), id, a, b, topic, file }
    }

    fn leads(&self) -> String {
        format!("[{}->{}] this node now leads the flow's side tasks", self.a, self.b)
    }

    fn no_longer_leads(&self) -> String {
        format!("[{}->{}] this node no longer leads", self.a, self.b)
    }

    fn checkpoints_topic(&self) -> String {
        format!("{}.checkpoints.internal", self.a)
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        if std::env::var_os("CLUSTER_KEEP").is_some_and(|v| v == "1") {
            return;
        }
        for bootstrap in [source(), target()] {
            delete_topics_containing(&bootstrap, &self.id);
            // The app's group (synced to B too), the flow's mirroring group on
            // A and its election group on B; a name a cluster lacks is ignored.
            let names = [self.group.clone(), format!("mm2.{}->{}", self.a, self.b), format!("mirror-maker.leader.{}->{}", self.a, self.b)];
            let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", &bootstrap).create().unwrap();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let _ = block_on(admin.delete_groups(&names, &AdminOptions::new()));
        }
    }
}

/// `n` keyed records, seq `from..from + n` (the header the helpers read).
fn batch(from: usize, n: usize) -> Vec<Rec> {
    (from..from + n)
        .map(|i| Rec {
            key: Some(format!("k{i}").into_bytes()),
            value: Some(format!("rec-{i}").into_bytes()),
            headers: vec![("seq".into(), i.to_string().into_bytes())],
            timestamp: None,
        })
        .collect()
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// The time of a log line (`[2026-12-06T22:07:08.190Z] INFO ...`, UTC) in
/// ms since the epoch; None for a line without one (a continuation).
fn log_time_ms(line: &str) -> Option<i64> {
    let ts = line.strip_prefix('[')?.get(..24)?;
    if ts.as_bytes()[23] != b'Z' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| -> Option<i64> { ts.get(r)?.parse().ok() };
    let (y, mo, d, h, mi, s, ms) = (n(0..4)?, n(5..7)?, n(8..10)?, n(11..13)?, n(14..16)?, n(17..19)?, n(20..23)?);
    // Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((mo + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some((((days * 24 + h) * 60 + mi) * 60 + s) * 1000 + ms)
}

/// One mirror-maker process of the mirror, and when the test ended it.
struct Node {
    mirror: Mirror,
    started: i64,
    ended: Option<i64>,
}

/// The nodes, numbered from 0 in the order they started.
struct Nodes {
    file: PathBuf,
    all: Vec<Node>,
}

impl Nodes {
    fn new(file: &std::path::Path) -> Nodes {
        Nodes { file: file.to_path_buf(), all: Vec::new() }
    }

    fn add(&mut self) -> usize {
        let started = now_ms();
        self.all.push(Node { mirror: Mirror::start(&[s("--mm2.config"), path(&self.file)]), started, ended: None });
        self.all.len() - 1
    }

    fn logs(&self) -> String {
        self.all.iter().enumerate().map(|(i, n)| format!("node {i}: {}", n.mirror.log.display())).collect::<Vec<_>>().join(", ")
    }

    /// Panics, naming the logs, when a node the test has not ended has exited.
    fn assert_running(&mut self) {
        let logs = self.logs();
        for (i, n) in self.all.iter_mut().enumerate() {
            if n.ended.is_none() {
                assert!(n.mirror.alive(), "node {i} exited on its own; logs: {logs}");
            }
        }
    }

    fn running(&self) -> Vec<usize> {
        (0..self.all.len()).filter(|&i| self.all[i].ended.is_none()).collect()
    }

    /// kill -9 (`sig` KILL) or a clean stop (TERM); the exit status.
    fn end(&mut self, i: usize, sig: &str) -> i32 {
        let n = &mut self.all[i];
        n.mirror.signal(sig);
        let status = n.mirror.wait();
        n.ended = Some(now_ms());
        status
    }

    /// Each node's lines saying it took or lost the lead: (node, time, took).
    fn lead_events(&self, flow: &Flow) -> Vec<(usize, i64, bool)> {
        let (leads, lost) = (flow.leads(), flow.no_longer_leads());
        let mut out = Vec::new();
        for (i, n) in self.all.iter().enumerate() {
            for line in n.mirror.output().lines() {
                let took = line.contains(&leads);
                if took || line.contains(&lost) {
                    let at = log_time_ms(line).unwrap_or_else(|| panic!("node {i}: no time on {line:?}"));
                    out.push((i, at, took));
                }
            }
        }
        out.sort_by_key(|e| e.1);
        out
    }

    /// How many "now leads" lines each node has logged.
    fn leads_per_node(&self, flow: &Flow) -> Vec<usize> {
        let mut per = vec![0; self.all.len()];
        for (i, _, took) in self.lead_events(flow) {
            per[i] += usize::from(took);
        }
        per
    }

    /// The running nodes that lead now: their last lead line is "now leads".
    fn leaders(&self, flow: &Flow) -> Vec<usize> {
        let mut last: BTreeMap<usize, bool> = BTreeMap::new();
        for (i, _, took) in self.lead_events(flow) {
            last.insert(i, took);
        }
        last.into_iter().filter(|&(i, took)| took && self.all[i].ended.is_none()).map(|(i, _)| i).collect()
    }

    /// Waits until `n` "now leads" lines in all; false when `limit` passed.
    fn wait_for_lead_lines(&mut self, flow: &Flow, n: usize, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        loop {
            self.assert_running();
            if self.leads_per_node(flow).iter().sum::<usize>() >= n {
                return true;
            }
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Who led when, from the logs: each lead runs from its "now leads" line
    /// to the node's "no longer leads" line, or to the moment the test ended
    /// the node, or to now. Problems: two leads overlapping in time, and a
    /// log whose clock is not this one (the timestamps would mean nothing).
    fn overlapping_leads(&self, flow: &Flow) -> Vec<String> {
        let mut problems = Vec::new();
        let mut leads: Vec<(usize, i64, i64)> = Vec::new();
        let mut open: HashMap<usize, i64> = HashMap::new();
        for (i, at, took) in self.lead_events(flow) {
            match (took, open.remove(&i)) {
                (true, Some(since)) => problems.push(format!("node {i} logged 'now leads' twice without losing the lead (at {since} and {at} ms)")),
                (true, None) => {
                    open.insert(i, at);
                }
                (false, Some(since)) => leads.push((i, since, at)),
                (false, None) => {}
            }
        }
        for (i, since) in open {
            leads.push((i, since, self.all[i].ended.unwrap_or_else(now_ms)));
        }
        for (i, n) in self.all.iter().enumerate() {
            let first = n.mirror.output().lines().find_map(log_time_ms);
            if let Some(first) = first.filter(|f| (f - n.started).abs() > 60_000) {
                problems.push(format!("node {i}: its first log line says {first} ms, it started at {} ms: the log's clock is not UTC", n.started));
            }
        }
        for (x, &(i, s1, e1)) in leads.iter().enumerate() {
            for &(j, s2, e2) in &leads[x + 1..] {
                if i != j && s1 < e2 && s2 < e1 {
                    problems.push(format!("nodes {i} and {j} led at once: node {i} from {s1} to {e1} ms, node {j} from {s2} to {e2} ms"));
                }
            }
        }
        problems
    }
}

/// The app: a consumer group on the source that reads the topic and commits
/// what it read every half second, up to `budget` records in all (then it
/// pauses, still in its group), so that its final position can be halfway
/// through the last batch.
struct App {
    stop: Arc<AtomicBool>,
    read: Arc<AtomicI64>,
    budget: i64,
    thread: Option<JoinHandle<BTreeMap<i32, i64>>>,
}

impl App {
    fn start(group: &str, topic: &str, budget: i64) -> App {
        let c = group_member(&source(), group, topic);
        let (stop, read) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicI64::new(0)));
        let (s, r, topic) = (stop.clone(), read.clone(), topic.to_string());
        let thread = std::thread::spawn(move || {
            let mut at: BTreeMap<i32, i64> = BTreeMap::new();
            let (mut dirty, mut paused) = (false, false);
            let mut last_commit = std::time::Instant::now();
            let commit = |at: &BTreeMap<i32, i64>| {
                let mut tpl = TopicPartitionList::new();
                for (p, o) in at {
                    tpl.add_partition_offset(&topic, *p, Offset::Offset(*o)).unwrap();
                }
                c.commit(&tpl, CommitMode::Sync)
            };
            while !s.load(Ordering::Relaxed) {
                match c.poll(Duration::from_millis(100)) {
                    // Past the budget nothing more is taken: a record polled
                    // before the pause took effect is left unread.
                    Some(Ok(m)) if r.load(Ordering::Relaxed) < budget => {
                        at.insert(m.partition(), m.offset() + 1);
                        r.fetch_add(1, Ordering::Relaxed);
                        dirty = true;
                    }
                    Some(Err(e)) => eprintln!("cluster: app consumer: {e}"),
                    _ => {}
                }
                if !paused && r.load(Ordering::Relaxed) >= budget {
                    if let Ok(assigned) = c.assignment() {
                        paused = c.pause(&assigned).is_ok();
                    }
                }
                if dirty && last_commit.elapsed() > Duration::from_millis(500) {
                    match commit(&at) {
                        Ok(()) => dirty = false,
                        Err(e) => eprintln!("cluster: app commit: {e}"),
                    }
                    last_commit = std::time::Instant::now();
                }
            }
            commit(&at).unwrap_or_else(|e| panic!("the app's final commit: {e}"));
            c.unsubscribe();
            at
        });
        App { stop, read, budget, thread: Some(thread) }
    }

    /// Waits until it has read its budget, commits, leaves its group and
    /// returns its final committed position per partition.
    fn finish(mut self) -> BTreeMap<i32, i64> {
        wait_for("the app to read its budget", COPY, || self.read.load(Ordering::Relaxed) >= self.budget);
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().expect("the app's thread")
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// End offset per partition of the source topic.
fn source_ends(flow: &Flow) -> BTreeMap<i32, i64> {
    end_offsets(&source(), &flow.topic).expect("the source topic").into_iter().enumerate().map(|(p, e)| (p as i32, e)).collect()
}

/// The group's committed offsets on `bootstrap` (partitions without one left out).
fn committed(bootstrap: &str, group: &str, topic: &str) -> BTreeMap<i32, i64> {
    committed_and_end(bootstrap, group, topic).into_iter().filter_map(|(p, c, _)| Some((p, c?))).collect()
}

/// The checkpoints topic in log order, decoded by the library's reader of
/// Java's format (cheap, for waiting; Java's own reader judges at the end).
fn checkpoints(flow: &Flow) -> Vec<Checkpoint> {
    read_checkpoints(&flow.checkpoints_topic())
}

/// Waits until the app's last checkpoint of every partition says `at` upstream.
fn wait_for_checkpoints(flow: &Flow, nodes: &mut Nodes, at: &BTreeMap<i32, i64>, what: &str) {
    wait_for(what, COPY, || {
        nodes.assert_running();
        let mut last = BTreeMap::new();
        for c in checkpoints(flow).into_iter().filter(|c| c.group == flow.group && c.topic == flow.remote) {
            last.insert(c.partition, c.upstream_offset);
        }
        at.iter().all(|(p, o)| last.get(p) == Some(o))
    });
}

/// Waits until the app has committed `at` on the source.
fn wait_for_app(flow: &Flow, nodes: &mut Nodes, at: &BTreeMap<i32, i64>) {
    wait_for("the app to commit every record so far", COPY, || {
        nodes.assert_running();
        committed(&source(), &flow.group, &flow.topic) == *at
    });
}

/// The seqs 0..total missing on the target's remote topic, and the copies
/// there beyond the first of each record (at-least-once redelivery).
fn missing_and_duplicates(flow: &Flow, total: usize) -> (Vec<usize>, usize) {
    let mut seen = vec![0usize; total];
    for l in read_topic(&target(), &flow.remote) {
        let seq = l.rec.seq().unwrap_or_else(|| panic!("{}: a record without seq: {:?}", flow.remote, l.rec)) as usize;
        seen[seq] += 1;
    }
    let missing = (0..total).filter(|&s| seen[s] == 0).collect();
    (missing, seen.iter().map(|n| n.saturating_sub(1)).sum())
}

/// Waits until every record 0..total is on the target.
fn wait_for_target(flow: &Flow, nodes: &mut Nodes, total: usize, what: &str) {
    wait_for(what, COPY, || {
        nodes.assert_running();
        count_records(&target(), &flow.remote) >= total as i64 && missing_and_duplicates(flow, total).0.is_empty()
    });
}

/// Java's Checkpoint.deserializeRecord over the whole checkpoints topic:
/// (group, topic, partition, upstream, downstream) in log order.
fn java_checkpoints(flow: &Flow) -> Vec<(String, String, i32, i64, i64)> {
    let (rc, out, err) = mirror_client(&["checkpoints", &target(), &flow.checkpoints_topic()]);
    assert_eq!(rc, 0, "{} on B: not every record decodes with Java's Checkpoint: {err}", flow.checkpoints_topic());
    out.lines()
        .map(|l| {
            let w: Vec<&str> = l.splitn(6, ' ').collect();
            assert!(w.len() >= 5, "checkpoint line {l:?}");
            (w[0].to_string(), w[1].to_string(), w[2].parse().unwrap(), w[3].parse().unwrap(), w[4].parse().unwrap())
        })
        .collect()
}

/// Every checkpoint that goes back, in upstream or downstream offset, from
/// the one before it of the same (group, topic, partition).
fn checkpoints_going_back(cps: &[(String, String, i32, i64, i64)]) -> Vec<String> {
    let mut last: HashMap<(&str, &str, i32), (i64, i64)> = HashMap::new();
    let mut back = Vec::new();
    for (i, (g, t, p, up, down)) in cps.iter().enumerate() {
        if let Some((u0, d0)) = last.insert((g, t, *p), (*up, *down)) {
            if *up < u0 || *down < d0 {
                back.push(format!("checkpoint #{i} of {g} {t}-{p}: upstream {u0} -> {up}, downstream {d0} -> {down}"));
            }
        }
    }
    back
}

/// Heartbeats are a side duty too, and the one a node that should not
/// write them shows from outside: with one node emitting every second (the
/// file's interval) no 10 s span of heartbeat timestamps holds more than 11;
/// three nodes each emitting make it ~30 (measured: 31 on the code before
/// #28). Read with Java's Heartbeat deserializer from B's heartbeats topic
/// (shared by every test: filtered by the flow's aliases). Returns a problem
/// when some 10 s held more than 15, and the count, for the summary.
fn heartbeat_emitters(flow: &Flow) -> (usize, Option<String>) {
    let all = java_heartbeats(&target(), "heartbeats", 10_000_000).unwrap_or_else(|e| panic!("Java's Heartbeat on B's heartbeats: {e}"));
    let mut ts: Vec<i64> = all.into_iter().filter(|h| h.source == flow.a && h.target == flow.b).map(|h| h.timestamp).collect();
    ts.sort_unstable();
    let (mut from, mut most, mut at) = (0, 0, 0);
    for (i, &t) in ts.iter().enumerate() {
        while ts[from] < t - 10_000 {
            from += 1;
        }
        if i + 1 - from > most {
            (most, at) = (i + 1 - from, t);
        }
    }
    let problem = (most > 15).then(|| format!("{most} heartbeats {}->{} in the 10 s up to {at} ms: more than one node emits them", flow.a, flow.b));
    (most, problem)
}

/// Java's RemoteClusterUtils.translateOffsets of the app on B: partition of
/// the remote topic -> offset.
fn java_translate(flow: &Flow) -> BTreeMap<i32, i64> {
    let (rc, out, err) = mirror_client(&["translate", &target(), &flow.a, &flow.group]);
    assert_eq!(rc, 0, "Java's translateOffsets of {} on B: {err}", flow.group);
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!(w.len(), 3, "translate line {l:?}");
            (w[0] == flow.remote).then(|| (w[1].parse().unwrap(), w[2].parse().unwrap()))
        })
        .collect()
}

/// Per partition of the remote topic, the first offset holding a record the
/// app had not read at `position` (its source offset at or past the app's
/// position there), or the partition's end when it has none.
fn first_unread(flow: &Flow, position: &BTreeMap<i32, i64>) -> BTreeMap<i32, i64> {
    let on_source: HashMap<u64, (i32, i64)> = read_topic(&source(), &flow.topic).into_iter().map(|l| (l.rec.seq().unwrap(), (l.partition, l.offset))).collect();
    let mut out: BTreeMap<i32, i64> = end_offsets(&target(), &flow.remote).unwrap().into_iter().enumerate().map(|(p, e)| (p as i32, e)).collect();
    for l in read_topic(&target(), &flow.remote) {
        let (p, at) = on_source[&l.rec.seq().unwrap()];
        assert_eq!(p, l.partition, "seq {:?} is in partition {p} on A but {} on B", l.rec.seq(), l.partition);
        if at >= position.get(&p).copied().unwrap_or(0) {
            let first = out.get_mut(&p).unwrap();
            *first = (*first).min(l.offset);
        }
    }
    out
}

const PARTITIONS: i32 = 6;

/// Whether `cond` holds within `limit` (polled twice a second), for a wait
/// that must not panic before the test has put things back.
fn within(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while !cond() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    true
}

/// One scenario at a time: each times leases and sessions, and one stops
/// the target broker every other test here writes to.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// Records per batch (3 batches).
const BATCH: usize = 1200;

#[test]
#[ignore = "needs clusters"]
fn three_nodes_on_one_file_survive_a_kill_and_a_stop_losing_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let flow = Flow::new(PARTITIONS);
    // All of the first two batches and half of the third.
    let app = App::start(&flow.group, &flow.topic, (2 * BATCH + BATCH / 2) as i64);
    let mut nodes = Nodes::new(&flow.file);
    for _ in 0..3 {
        nodes.add();
    }
    // What the test finds wrong but can go on after, reported together at the end.
    let mut problems: Vec<String> = Vec::new();

    // 1. Three nodes copy the first batch; exactly one leads; checkpoints follow the app.
    produce(&source(), &flow.topic, &batch(0, BATCH));
    wait_for_target(&flow, &mut nodes, BATCH, "the first batch on B");
    let e1 = source_ends(&flow);
    wait_for_app(&flow, &mut nodes, &e1);
    wait_for_checkpoints(&flow, &mut nodes, &e1, "checkpoints of the app at the end of the first batch");
    if !nodes.wait_for_lead_lines(&flow, 1, TAKE_OVER) {
        problems.push(format!("no node logged {:?} within {TAKE_OVER:?} of the first batch on B", flow.leads()));
    }
    let before_kill = nodes.leads_per_node(&flow);
    if before_kill.iter().sum::<usize>() > 1 {
        problems.push(format!("before the kill, 'now leads' lines per node: {before_kill:?} (one in all expected)"));
    }
    // Without a leader line (the code before #28) the first node stands in,
    // so the rest of the scenario still runs and reports what it finds.
    let victim = nodes.leaders(&flow).first().copied().unwrap_or(0);

    // 2. kill -9 the leader; more records; a new leader checkpoints them.
    let status = nodes.end(victim, "KILL");
    assert_eq!(status, 128 + 9, "node {victim}'s exit status after kill -9");
    produce(&source(), &flow.topic, &batch(BATCH, BATCH));
    wait_for_target(&flow, &mut nodes, 2 * BATCH, "the second batch on B after the kill");
    let e2 = source_ends(&flow);
    wait_for_app(&flow, &mut nodes, &e2);
    wait_for_checkpoints(&flow, &mut nodes, &e2, "checkpoints of the app at the end of the second batch, after the kill");
    if !nodes.wait_for_lead_lines(&flow, before_kill.iter().sum::<usize>() + 1, TAKE_OVER) {
        problems.push(format!("no surviving node logged {:?} within {TAKE_OVER:?} of the kill of node {victim}", flow.leads()));
    }
    let after_kill = nodes.leads_per_node(&flow);

    // 3. Stop a node that does not lead: the lead stays where it is.
    let leader = nodes.leaders(&flow).first().copied();
    let quiet = *nodes.running().iter().find(|&&i| Some(i) != leader).expect("two nodes left");
    let status = nodes.end(quiet, "TERM");
    assert_eq!(status, 0, "node {quiet}'s exit status on SIGTERM; logs: {}", nodes.logs());
    produce(&source(), &flow.topic, &batch(2 * BATCH, BATCH));
    wait_for_target(&flow, &mut nodes, 3 * BATCH, "the third batch on B after the stop");
    let position = app.finish();
    wait_for_checkpoints(&flow, &mut nodes, &position, "checkpoints of the app's final position");
    let after_stop = nodes.leads_per_node(&flow);
    if after_stop != after_kill {
        problems.push(format!("stopping node {quiet}, which did not lead, moved the lead: 'now leads' lines per node {after_kill:?} -> {after_stop:?}"));
    }
    if after_stop.iter().sum::<usize>() > 2 {
        problems.push(format!("'now leads' lines per node: {after_stop:?}; two in all expected (one at the start, one after the kill)"));
    }
    problems.extend(nodes.overlapping_leads(&flow));

    // 4. The judges: the records, Java's checkpoints, Java's translation.
    let (missing, duplicates) = missing_and_duplicates(&flow, 3 * BATCH);
    let (heartbeats, emitters) = heartbeat_emitters(&flow);
    problems.extend(emitters);
    let cps = java_checkpoints(&flow);
    let back = checkpoints_going_back(&cps);
    let translated = java_translate(&flow);
    let unread = first_unread(&flow, &position);
    let mut early = 0;
    for (p, first) in &unread {
        match translated.get(p) {
            Some(t) if t <= first => early += first - t,
            Some(t) => problems
                .push(format!("{}-{p}: Java translates the app's position {} to {t}, past the first unread record at {first}", flow.remote, position[p])),
            None => problems.push(format!("{}-{p}: Java translates nothing for the app (position {:?})", flow.remote, position.get(p))),
        }
    }
    // The group offset sync writes the same translation into B for the app.
    wait_for("the app's offsets synced to B", COPY, || committed(&target(), &flow.group, &flow.remote).len() == unread.len());
    let synced = committed(&target(), &flow.group, &flow.remote);
    for (p, first) in &unread {
        if synced[p] > *first {
            problems.push(format!("{}-{p}: the app's offset synced to B is {}, past the first unread record at {first}", flow.remote, synced[p]));
        }
    }
    println!(
        "cluster: 3 nodes, {} records on A; missing on B {}, duplicates {duplicates}; {} checkpoints decoded by Java, {} going back; \
         app position {position:?}, Java's translation {translated:?}, synced on B {synced:?}, first unread {unread:?} ({early} records early); \
         at most {heartbeats} heartbeats in 10 s; 'now leads' per node before the kill {before_kill:?}, after {after_kill:?}, at the end {after_stop:?}; \
         node {victim} killed, node {quiet} stopped; logs: {}",
        3 * BATCH,
        missing.len(),
        cps.len(),
        back.len(),
        nodes.logs()
    );
    assert!(missing.is_empty(), "{} records missing on B, e.g. seq {:?}; logs: {}", missing.len(), &missing[..missing.len().min(10)], nodes.logs());
    problems.extend(back);
    assert!(problems.is_empty(), "{} problems:\n{}\nlogs: {}", problems.len(), problems.join("\n"), nodes.logs());
}

/// Commits `at` for `group` on the source, from outside any member.
fn commit_at(group: &str, topic: &str, at: &BTreeMap<i32, i64>) {
    let c: BaseConsumer = ClientConfig::new().set("bootstrap.servers", source()).set("group.id", group).create().unwrap();
    let mut tpl = TopicPartitionList::new();
    for (p, o) in at {
        tpl.add_partition_offset(topic, *p, Offset::Offset(*o)).unwrap();
    }
    c.commit(&tpl, CommitMode::Sync).unwrap_or_else(|e| panic!("commit {group}: {e}"));
}

/// A leader frozen past the lease's session timeout (SIGSTOP: as a VM
/// paused or a process swapped out) wakes up still holding its term for a
/// moment, until librdkafka tells it the group gave the lease away (the
/// window `engine::lease` documents). What its duties may write in that
/// moment is built from inputs each round reads afresh (the syncs topic to
/// its end, the groups' committed offsets on the source, the target's group
/// offsets), so it repeats what the new leader wrote rather than going
/// back: no checkpoint goes back, the translation misses nothing, and the
/// woken node says it no longer leads.
#[test]
#[ignore = "needs clusters"]
fn a_leader_frozen_past_its_session_timeout_writes_nothing_back_when_it_wakes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let flow = Flow::new(4);
    let app = App::start(&flow.group, &flow.topic, (2 * BATCH + BATCH / 2) as i64);
    let mut nodes = Nodes::new(&flow.file);
    nodes.add();
    nodes.add();
    produce(&source(), &flow.topic, &batch(0, BATCH));
    wait_for_target(&flow, &mut nodes, BATCH, "the first batch on B");
    let e1 = source_ends(&flow);
    wait_for_app(&flow, &mut nodes, &e1);
    wait_for_checkpoints(&flow, &mut nodes, &e1, "checkpoints of the app at the end of the first batch");
    assert!(nodes.wait_for_lead_lines(&flow, 1, TAKE_OVER), "no node logged {:?}; logs: {}", flow.leads(), nodes.logs());
    let frozen = nodes.leaders(&flow)[0];
    nodes.all[frozen].mirror.signal("STOP");
    // The other node leads once the frozen one's lease session expires, and
    // copies its partitions once its source session expires.
    produce(&source(), &flow.topic, &batch(BATCH, BATCH));
    let took_over = nodes.wait_for_lead_lines(&flow, 2, COPY);
    wait_for_target(&flow, &mut nodes, 2 * BATCH, "the second batch on B while the leader is frozen");
    let e2 = source_ends(&flow);
    wait_for_app(&flow, &mut nodes, &e2);
    wait_for_checkpoints(&flow, &mut nodes, &e2, "checkpoints of the app at the end of the second batch, by the new leader");
    nodes.all[frozen].mirror.signal("CONT");
    assert!(took_over, "no node took the lead over from frozen node {frozen}; logs: {}", nodes.logs());
    let lost = flow.no_longer_leads();
    wait_for("the woken node saying it no longer leads", TAKE_OVER, || nodes.all[frozen].mirror.output().contains(&lost));
    produce(&source(), &flow.topic, &batch(2 * BATCH, BATCH));
    wait_for_target(&flow, &mut nodes, 3 * BATCH, "the third batch on B after the wake");
    let position = app.finish();
    wait_for_checkpoints(&flow, &mut nodes, &position, "checkpoints of the app's final position");
    let (missing, duplicates) = missing_and_duplicates(&flow, 3 * BATCH);
    let cps = java_checkpoints(&flow);
    let back = checkpoints_going_back(&cps);
    let translated = java_translate(&flow);
    let unread = first_unread(&flow, &position);
    let past: Vec<String> = unread
        .iter()
        .filter(|(p, first)| translated.get(p).is_none_or(|t| t > first))
        .map(|(p, first)| format!("partition {p}: Java translates to {:?}, first unread {first}", translated.get(p)))
        .collect();
    println!(
        "cluster frozen leader: node {frozen} stopped then continued; missing {}, duplicates {duplicates}; {} checkpoints decoded by Java, {} going back; \
         app position {position:?}, Java's translation {translated:?}, first unread {unread:?}; 'now leads' per node {:?}; logs: {}",
        missing.len(),
        cps.len(),
        back.len(),
        nodes.leads_per_node(&flow),
        nodes.logs()
    );
    assert!(missing.is_empty(), "{} records missing on B; logs: {}", missing.len(), nodes.logs());
    assert!(back.is_empty(), "checkpoints went back:\n{}\nlogs: {}", back.join("\n"), nodes.logs());
    assert!(past.is_empty(), "translation past unread records: {past:?}; logs: {}", nodes.logs());
}

/// A node started while the target does not answer waits for it, then
/// takes the lease: it does not give up on the lease and run the one-node
/// duties uncoordinated, which several nodes started during the same
/// outage would then all do. MM1 mode with checkpoints, because MM2 mode
/// already waits for the target before its leases start (it reads Java's
/// positions there first).
#[test]
#[ignore = "needs clusters"]
fn a_node_started_while_the_target_is_down_takes_the_lease_once_it_answers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let id = short_id();
    let (a, b, topic) = (format!("A{id}"), format!("B{id}"), format!("cl-{id}-mm1"));
    create_topic(&source(), &topic, 2, &[]);
    let consumer =
        props("consumer.properties", &[format!("bootstrap.servers={}", source()), format!("group.id=cl-{id}-mirror"), "auto.offset.reset=earliest".into()]);
    let producer = props("producer.properties", &[format!("bootstrap.servers={}", target())]);
    broker("stop-broker", "target");
    let mut m = Mirror::start(&[
        s("--consumer.config"),
        path(&consumer),
        s("--producer.config"),
        path(&producer),
        s("--whitelist"),
        topic.clone(),
        s("--message.handler"),
        s("partition-preserving"),
        s("--emit.checkpoints"),
        s("true"),
        s("--source.alias"),
        a.clone(),
        s("--target.alias"),
        b.clone(),
    ]);
    // The lease's first attempt to make its topic failed: the node is up and trying.
    let tried = format!("cannot create mm2-leader.{a}.internal");
    let seen = within(COPY, || m.output().contains(&tried));
    broker("start-broker", "target");
    assert!(seen, "the node never tried to make its lease topic while the target was down; log: {}", m.log.display());
    let leads = format!("[{a}->{b}] this node now leads the flow's side tasks");
    wait_for("the node taking the lease once the target answers", COPY, || m.output().contains(&leads));
    produce(&source(), &topic, &batch(0, 100));
    wait_for("the records on the target", COPY, || read_topic(&target(), &topic).len() >= 100);
    let out = m.output();
    assert_eq!(m.stop(), 0, "exit status; log: {}", m.log.display());
    assert!(!out.contains("no lease for the flow's side tasks"), "the node gave up on the lease while the target was down; log: {}", m.log.display());
    println!("cluster target down at start: the node waited for the target, then led; log: {}", m.log.display());
    for bootstrap in [source(), target()] {
        delete_topics_containing(&bootstrap, &id);
    }
}

#[test]
#[ignore = "needs clusters"]
fn a_second_node_joining_takes_no_side_task_and_needs_no_restart() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let flow = Flow::new(4);
    let half = BATCH / 2;
    let mut nodes = Nodes::new(&flow.file);
    let first = nodes.add();
    produce(&source(), &flow.topic, &batch(0, half));
    wait_for_target(&flow, &mut nodes, half, "the first batch on B");
    assert!(nodes.wait_for_lead_lines(&flow, 1, TAKE_OVER), "the only node never logged {:?}; log: {}", flow.leads(), nodes.logs());
    let e1 = source_ends(&flow);
    commit_at(&flow.group, &flow.topic, &e1);
    wait_for_checkpoints(&flow, &mut nodes, &e1, "checkpoints of the first commit");

    // A second node joins: records keep flowing, checkpoints go on, and the
    // lead stays with the first node.
    let second = nodes.add();
    wait_for("the second node to be assigned partitions of the flow", COPY, || {
        nodes.assert_running();
        nodes.all[second].mirror.output().lines().any(|l| l.contains("] assigned ") && l.contains(&flow.topic))
    });
    produce(&source(), &flow.topic, &batch(half, half));
    wait_for_target(&flow, &mut nodes, 2 * half, "the second batch on B with two nodes");
    let e2 = source_ends(&flow);
    commit_at(&flow.group, &flow.topic, &e2);
    wait_for_checkpoints(&flow, &mut nodes, &e2, "checkpoints of the second commit, with two nodes");
    assert_eq!(
        nodes.leads_per_node(&flow),
        vec![1, 0],
        "'now leads' lines per node while both run (the joining node must not take the lead); logs: {}",
        nodes.logs()
    );

    // The first stops cleanly: the second takes the side tasks over within seconds.
    let status = nodes.end(first, "TERM");
    assert_eq!(status, 0, "the first node's exit status on SIGTERM; logs: {}", nodes.logs());
    let stopped = std::time::Instant::now();
    assert!(
        nodes.wait_for_lead_lines(&flow, 2, TAKE_OVER),
        "the second node did not log {:?} within {TAKE_OVER:?} of the first's stop; logs: {}",
        flow.leads(),
        nodes.logs()
    );
    println!("cluster: the second node leads {:.1} s after the first stopped", stopped.elapsed().as_secs_f64());
    produce(&source(), &flow.topic, &batch(2 * half, half));
    wait_for_target(&flow, &mut nodes, 3 * half, "the third batch on B with the second node alone");
    let e3 = source_ends(&flow);
    commit_at(&flow.group, &flow.topic, &e3);
    wait_for_checkpoints(&flow, &mut nodes, &e3, "checkpoints of the third commit, by the second node");

    let (missing, duplicates) = missing_and_duplicates(&flow, 3 * half);
    let back = checkpoints_going_back(&java_checkpoints(&flow));
    let overlaps = nodes.overlapping_leads(&flow);
    let (heartbeats, emitters) = heartbeat_emitters(&flow);
    println!(
        "cluster: join and leave: missing {}, duplicates {duplicates}, checkpoints going back {}, at most {heartbeats} heartbeats in 10 s; logs: {}",
        missing.len(),
        back.len(),
        nodes.logs()
    );
    assert!(missing.is_empty(), "records missing on B: {:?}", &missing[..missing.len().min(10)]);
    assert!(back.is_empty(), "checkpoints going back:\n{}", back.join("\n"));
    assert!(overlaps.is_empty(), "{}", overlaps.join("\n"));
    assert_eq!(emitters, None, "logs: {}", nodes.logs());
    assert_eq!(nodes.leads_per_node(&flow), vec![1, 1], "'now leads' lines per node at the end; logs: {}", nodes.logs());
}

#[test]
fn log_times_read_as_utc_milliseconds() {
    assert_eq!(log_time_ms("[1970-01-01T00:00:00.000Z] INFO [main] x"), Some(0));
    assert_eq!(log_time_ms("[2026-12-06T22:07:08.190Z] INFO [main] x"), Some(1_796_594_828_190));
    assert_eq!(log_time_ms("[2000-02-29T23:59:59.999Z] WARN [t] y"), Some(951_868_799_999));
    assert_eq!(log_time_ms("  continuation"), None);
    assert_eq!(log_time_ms("[2026-12-06 22:07:08] no"), None);
}
