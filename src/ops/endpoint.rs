//! `--metrics.port`: the counters in Prometheus's text format over HTTP,
//! and `GET /health` for probes (Kafka Connect's answer; see `health`).
//!
//! A handful of lines of std networking rather than an HTTP crate: the
//! endpoint serves one read-only page to a scraper and one line of JSON to
//! a probe, nothing more. It binds
//! to 127.0.0.1 unless `--metrics.bind` says otherwise, so metrics are not
//! exposed beyond the host by accident.
//!
//! Any process that can connect is a client, so no client may stall the
//! scraper or grow the mirror's memory: each connection gets a thread of its
//! own, at most `MAX_CONNECTIONS` at once (one more is told 503 at once);
//! the request must arrive whole, at most `MAX_REQUEST_BYTES`, within
//! `READ_DEADLINE` however it trickles in; the answer must be taken within
//! `WRITE_DEADLINE`. What clients get wrong is logged at debug level only,
//! or one of them could fill the log.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use log::{debug, info, warn};

use crate::ops::health::Health;
use crate::ops::metrics::Metrics;

/// Connections served at once. A scraper needs one; the rest leaves room for
/// a second scraper and a curl while a few clients misbehave.
const MAX_CONNECTIONS: usize = 8;
/// Request line and headers together; a scraper sends a few hundred bytes.
const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// For the whole request, from the connection's accept to its blank line.
const READ_DEADLINE: Duration = Duration::from_secs(5);
/// For the whole answer; a page of tens of thousands of partitions takes a
/// scraper on loopback well under a second.
const WRITE_DEADLINE: Duration = Duration::from_secs(10);
/// After a failed accept. The usual cause, no file descriptors left
/// (EMFILE), leaves the connection queued, so accept fails again at once:
/// without a pause the thread would spin and log at full speed.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// Least time between two warnings about the same repeating failure.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Binds now (so a taken port fails at start) and serves on a thread.
pub fn serve(bind: &str, port: u16, metrics: Arc<Metrics>) -> io::Result<()> {
    let listener = TcpListener::bind((bind, port))?;
    let at = listener.local_addr()?;
    info!("metrics endpoint: http://{at}/metrics (health: http://{at}/health)");
    let active = Arc::new(AtomicUsize::new(0));
    thread::Builder::new().name("mirrormaker-metrics".into()).spawn(move || {
        let mut busy = Every::new(WARN_EVERY);
        accept_loop(listener.incoming(), |stream| dispatch(stream, &active, &metrics, &mut busy), thread::sleep);
    })?;
    Ok(())
}

/// Takes connections until `incoming` ends (a listener's never does).
fn accept_loop(incoming: impl Iterator<Item = io::Result<TcpStream>>, mut handle: impl FnMut(TcpStream), mut pause: impl FnMut(Duration)) {
    let mut failing = Every::new(WARN_EVERY);
    for conn in incoming {
        match conn {
            Ok(stream) => handle(stream),
            Err(e) => {
                if let Some(quiet) = failing.due(Instant::now()) {
                    warn!("metrics endpoint: cannot accept a connection: {e}{}", quiet.since());
                }
                pause(ACCEPT_PAUSE);
            }
        }
    }
}

/// Starts a handler thread for the connection if a slot is free.
fn dispatch(stream: TcpStream, active: &Arc<AtomicUsize>, metrics: &Arc<Metrics>, busy: &mut Every) {
    let Some(slot) = Slot::take(active) else {
        if let Some(quiet) = busy.due(Instant::now()) {
            warn!("metrics endpoint: {MAX_CONNECTIONS} connections already open, answering 503 to further ones{}", quiet.since());
        }
        refuse_busy(stream);
        return;
    };
    let metrics = metrics.clone();
    let spawned = thread::Builder::new().name("mirrormaker-metrics-conn".into()).spawn(move || {
        // Held until the thread ends, by return or by unwinding.
        let _slot = slot;
        answer(stream, &metrics);
    });
    // The closure, slot and stream with it, is dropped when the spawn fails.
    if let Err(e) = spawned {
        warn!("metrics endpoint: cannot start a thread for a connection: {e}");
    }
}

/// One of the `MAX_CONNECTIONS`; given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(active: &Arc<AtomicUsize>) -> Option<Slot> {
        active.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_CONNECTIONS).then_some(n + 1)).ok()?;
        Some(Slot(active.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// 503 on the accept thread, so it never waits: a fresh socket's send
/// buffer takes these few bytes whole, and non-blocking calls give up
/// rather than wait if it does not.
fn refuse_busy(stream: TcpStream) {
    let _ = stream.set_nonblocking(true);
    let _ = (&stream).write_all(&response("503 Service Unavailable", "Retry-After: 1\r\n", "too many connections to the metrics endpoint; try again\n"));
    let _ = stream.shutdown(Shutdown::Write);
    // A request left unread turns the close into a reset, which can destroy
    // the 503 before the client reads it; take what has arrived, no more.
    let _ = (&stream).read(&mut [0u8; 1024]);
}

/// Why a request gets no page.
#[derive(Debug)]
enum Refusal {
    /// An answer is owed: status line and body.
    Answer(&'static str, &'static str),
    /// The client went away or broke the connection; nothing to say to it.
    Gone(io::Error),
}

fn answer(mut stream: TcpStream, metrics: &Metrics) {
    let head = read_head(&mut stream, Instant::now() + READ_DEADLINE);
    let bytes = match head {
        Ok(head) => page_for(&head, metrics),
        Err(Refusal::Answer(status, body)) => {
            debug!("metrics endpoint: {status} to {}", peer(&stream));
            response(status, "", body)
        }
        Err(Refusal::Gone(e)) => {
            debug!("metrics endpoint: {} went away before its request was whole: {e}", peer(&stream));
            return;
        }
    };
    if let Err(e) = write_by(&mut stream, &bytes, Instant::now() + WRITE_DEADLINE) {
        debug!("metrics endpoint: answer to {} not taken: {e}", peer(&stream));
    }
    let _ = stream.shutdown(Shutdown::Both);
}

fn peer(stream: &TcpStream) -> String {
    stream.peer_addr().map_or_else(|_| "a client".into(), |a| a.to_string())
}

/// The request line and headers, read by `deadline` into a buffer of
/// `MAX_REQUEST_BYTES` that is never grown.
fn read_head(stream: &mut TcpStream, deadline: Instant) -> Result<String, Refusal> {
    let mut buf = [0u8; MAX_REQUEST_BYTES];
    let mut len = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Refusal::Answer("408 Request Timeout", "the request did not arrive in time\n"));
        }
        stream.set_read_timeout(Some(left)).map_err(Refusal::Gone)?;
        let n = match stream.read(&mut buf[len..]) {
            Ok(0) => return Err(Refusal::Gone(io::ErrorKind::UnexpectedEof.into())),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                return Err(Refusal::Answer("408 Request Timeout", "the request did not arrive in time\n"))
            }
            Err(e) => return Err(Refusal::Gone(e)),
        };
        // Only the new bytes and the three before them can complete the end.
        let from = len.saturating_sub(3);
        len += n;
        if let Some(end) = head_end(&buf[from..len]) {
            return Ok(String::from_utf8_lossy(&buf[..from + end]).into_owned());
        }
        if len == buf.len() {
            return Err(Refusal::Answer(
                "431 Request Header Fields Too Large",
                "request line and headers are limited to 8 KiB; only GET /metrics and GET /health are served\n",
            ));
        }
    }
}

/// Where the blank line ending the headers ends; bare LFs are accepted as
/// curl and HTTP/1.0 clients may send them.
fn head_end(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len()).find_map(|i| {
        let rest = &bytes[i..];
        if rest.starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if rest.starts_with(b"\n\n") {
            Some(i + 2)
        } else if rest.starts_with(b"\n\r\n") {
            Some(i + 3)
        } else {
            None
        }
    })
}

/// The page for `GET /metrics` (or `/`), the health for `GET /health`,
/// 404 for anything else; 500 if rendering panics, which ends that scrape
/// and nothing more.
fn page_for(head: &str, metrics: &Metrics) -> Vec<u8> {
    health_for(head, &metrics.health).unwrap_or_else(|| page_with(head, || render(metrics)))
}

/// `GET /health` (a query string ignored, as Connect's JAX-RS does):
/// Connect's status code and JSON body; None for any other request.
fn health_for(head: &str, health: &Health) -> Option<Vec<u8>> {
    let request = head.lines().next().unwrap_or("");
    let path = request.split_whitespace().nth(1).unwrap_or("");
    if !(request.starts_with("GET ") && path.split('?').next() == Some("/health")) {
        return None;
    }
    let report = health.report();
    Some(response_as(report.status_line(), "application/json", "", &report.json()))
}

/// [`page_for`] with the page made by `render`.
fn page_with(head: &str, render: impl FnOnce() -> String) -> Vec<u8> {
    let request = head.lines().next().unwrap_or("");
    let path = request.split_whitespace().nth(1).unwrap_or("");
    if !(request.starts_with("GET ") && (path == "/metrics" || path == "/")) {
        return response("404 Not Found", "", "only GET /metrics and GET /health are served\n");
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(render)) {
        Ok(body) => response("200 OK", "", &body),
        Err(_) => {
            warn!("metrics endpoint: rendering the page panicked (the message went to stderr); answering 500");
            response("500 Internal Server Error", "", "rendering the metrics failed; see the mirror's log and stderr\n")
        }
    }
}

/// One buffer, so the answer leaves in as few segments as the kernel likes.
fn response(status: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    response_as(status, "text/plain; version=0.0.4", extra_headers, body)
}

/// [`response`] of another content type.
fn response_as(status: &str, content_type: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra_headers}Connection: close\r\n\r\n{body}", body.len())
        .into_bytes()
}

/// `write_all` with one deadline for all of it: a timeout per write call
/// alone would let a client that reads a byte now and then hold on forever.
fn write_by(stream: &mut TcpStream, mut data: &[u8], deadline: Instant) -> io::Result<()> {
    while !data.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, format!("not read within {WRITE_DEADLINE:?}")));
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Lets a repeating failure through at most once per period, and counts
/// what it held back.
struct Every {
    period: Duration,
    last: Option<Instant>,
    held: u64,
}

/// How many warnings were held back before the one let through.
struct Held(u64);

impl Held {
    fn since(&self) -> String {
        match self.0 {
            0 => String::new(),
            n => format!(" ({n} more like it since the last warning)"),
        }
    }
}

impl Every {
    fn new(period: Duration) -> Every {
        Every { period, last: None, held: 0 }
    }

    fn due(&mut self, now: Instant) -> Option<Held> {
        if self.last.is_some_and(|last| now.saturating_duration_since(last) < self.period) {
            self.held += 1;
            return None;
        }
        self.last = Some(now);
        Some(Held(std::mem::take(&mut self.held)))
    }
}

/// One metric family: HELP and TYPE once, then its series.
struct Page(String);

impl Page {
    fn family(&mut self, name: &str, kind: &str, help: &str, series: impl IntoIterator<Item = (String, f64)>) {
        self.0.push_str(&format!("# HELP mirror_maker_{name} {help}\n# TYPE mirror_maker_{name} {kind}\n"));
        for (labels, value) in series {
            self.0.push_str(&format!("mirror_maker_{name}{labels} {value}\n"));
        }
    }

    fn single(&mut self, name: &str, kind: &str, help: &str, value: f64) {
        self.family(name, kind, help, [(String::new(), value)]);
    }
}

/// The page: counters (`_total`), gauges, base units (bytes, seconds).
/// Per-topic series carry `source` (the `--consumer.config` index, from 0;
/// in MirrorMaker 2 mode the flow's index, with `flow="A->B"` beside it)
/// and `topic` (the source topic); per-partition series add `partition`.
pub fn render(m: &Metrics) -> String {
    let g = Metrics::get;
    let (rss, cpu) = process_figures();
    let topics = m.topics_sorted();
    let labels = |source: usize, topic: &str| format!("{{{},topic=\"{topic}\"}}", m.source_labels(source));
    let per_topic =
        |f: fn(&crate::ops::metrics::TopicMetrics) -> u64| -> Vec<(String, f64)> { topics.iter().map(|t| (labels(t.source, &t.topic), f(t) as f64)).collect() };
    let mut page = Page(String::new());
    page.family("records_consumed_total", "counter", "Records read from the source clusters.", per_topic(|t| Metrics::get(&t.consumed)));
    page.family("bytes_consumed_total", "counter", "Key and value bytes read from the source clusters.", per_topic(|t| Metrics::get(&t.consumed_bytes)));
    page.family("records_produced_total", "counter", "Records acknowledged by the target cluster.", per_topic(|t| Metrics::get(&t.produced)));
    page.family("bytes_produced_total", "counter", "Key and value bytes acknowledged by the target cluster.", per_topic(|t| Metrics::get(&t.produced_bytes)));
    page.family(
        "records_dropped_total",
        "counter",
        "Records skipped after a permanent send failure with --abort.on.send.failure false (MM1 numDroppedMessages).",
        per_topic(|t| Metrics::get(&t.dropped)),
    );
    page.family(
        "lag_records",
        "gauge",
        "Source end offset minus the group's committed offset, per owned partition (from the log start before the first commit).",
        m.partition_lags().into_iter().map(|(s, t, p, lag)| (format!("{{{},topic=\"{t}\",partition=\"{p}\"}}", m.source_labels(s)), lag as f64)),
    );
    page.family(
        "unread_records",
        "gauge",
        "Source end offset minus the stream's read position, per owned partition: records not read yet (Java's records-lag); 0 once caught up, commits or not.",
        m.unread_lags().into_iter().map(|(s, _, t, p, lag)| (format!("{{{},topic=\"{t}\",partition=\"{p}\"}}", m.source_labels(s)), lag as f64)),
    );
    page.family(
        "replication_latency_seconds",
        "gauge",
        "Time from the source record's timestamp to the target's acknowledgement, for the latest acknowledged record of the partition.",
        topics.iter().flat_map(|t| {
            t.latencies().into_iter().map(|(p, ms)| (format!("{{{},topic=\"{}\",partition=\"{p}\"}}", m.source_labels(t.source), t.topic), ms as f64 / 1000.0))
        }),
    );
    page.single(
        "topic_routes",
        "gauge",
        "Source topics the consumer streams keep a route for; a topic deleted at the source leaves it.",
        g(&m.topic_routes) as f64,
    );
    page.single("in_flight_records", "gauge", "Records read and not yet acknowledged or dropped.", m.in_flight() as f64);
    page.single("channel_records", "gauge", "Records waiting in the channels between consumer streams and producer workers.", m.channel_depth() as f64);
    page.single(
        "records_loop_skipped_total",
        "counter",
        "Records not copied because their provenance header names the target cluster (active/active loop guard).",
        g(&m.loop_skipped) as f64,
    );
    page.single("commits_total", "counter", "Successful offset commits to the source groups.", g(&m.commits) as f64);
    page.single("commit_failures_total", "counter", "Failed offset commits (retried).", g(&m.commit_failures) as f64);
    page.family(
        "commit_duration_seconds",
        "summary",
        "Wall time of successful offset commits.",
        [(String::from("_sum"), g(&m.commit_micros) as f64 / 1e6), (String::from("_count"), g(&m.commits) as f64)],
    );
    page.single("rebalances_total", "counter", "Partition revocations seen by the consumer streams.", g(&m.rebalances) as f64);
    page.single("gap_offsets_total", "counter", "Source offsets deleted by retention before they were mirrored.", g(&m.gap_offsets) as f64);
    page.single("checkpoints_total", "counter", "Checkpoints of source consumer groups written to the target.", g(&m.checkpoints) as f64);
    let checkpointed = m.checkpointed.lock().unwrap_or_else(|e| e.into_inner()).clone();
    page.family(
        "checkpoint_timestamp_seconds",
        "gauge",
        "When the group's checkpoints on the target were last current: the end of the last checkpoint round that read its offsets and whose checkpoints were all acknowledged.",
        checkpointed.iter().flat_map(|(flow, f)| {
            let flow = crate::ops::mm2_series::esc(flow);
            f.groups.iter().map(move |(g, at)| (format!("{{flow=\"{flow}\",group=\"{}\"}}", crate::ops::mm2_series::esc(g)), *at as f64 / 1000.0))
        }),
    );
    page.family(
        "checkpoint_interval_seconds",
        "gauge",
        "How often the flow's checkpoints are emitted (emit.checkpoints.interval.seconds, --checkpoint.interval.ms).",
        checkpointed.iter().map(|(flow, f)| (format!("{{flow=\"{}\"}}", crate::ops::mm2_series::esc(flow)), f.interval.as_secs_f64())),
    );
    page.single(
        "group_offsets_synced_total",
        "counter",
        "Partitions of consumer groups moved forward on the target to their translated offsets.",
        g(&m.group_offsets_synced) as f64,
    );
    page.single(
        "group_syncs_skipped_active_total",
        "counter",
        "Group offset syncs left out because the group had active consumers on the target.",
        g(&m.group_syncs_skipped_active) as f64,
    );
    page.single("process_resident_memory_bytes", "gauge", "Resident memory of the mirror process.", rss);
    page.single("process_cpu_seconds_total", "counter", "User and system CPU time of the mirror process.", cpu);
    crate::ops::mm2_series::render(&mut page.0, m);
    page.0
}

/// Resident bytes and CPU seconds of this process, from /proc.
fn process_figures() -> (f64, f64) {
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb * 1024.0);
    // utime and stime are fields 14 and 15, in clock ticks (100 per second on Linux).
    let cpu = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.split_whitespace().collect::<Vec<_>>();
            Some((rest.get(11)?.parse::<f64>().ok()? + rest.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(0.0);
    (rss, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_groups_checkpoints_have_a_time_and_forgotten_groups_leave() {
        let m = Metrics::default();
        m.groups_checkpointed("A->B", Duration::from_secs(60), &["g1".into(), "we\"ird".into()], 1_700_000_000_000);
        let page = render(&m);
        assert!(page.contains("mirror_maker_checkpoint_timestamp_seconds{flow=\"A->B\",group=\"g1\"} 1700000000\n"), "{page}");
        assert!(page.contains("mirror_maker_checkpoint_timestamp_seconds{flow=\"A->B\",group=\"we\\\"ird\"} 1700000000\n"), "{page}");
        assert!(page.contains("mirror_maker_checkpoint_interval_seconds{flow=\"A->B\"} 60\n"), "{page}");
        m.retain_checkpointed_groups("A->B", |g| g == "g1");
        assert!(!render(&m).contains("ird"), "a forgotten group leaves the page");
    }

    #[test]
    fn mm2_series_carry_the_flow() {
        let m = Metrics::default();
        m.flow_names.set(vec!["A->B".into(), "B->A".into()]).unwrap();
        let t = m.topic(1, "heartbeats");
        Metrics::add(&t.consumed, 3);
        t.acknowledged(0, Some(0), crate::ops::metrics::now_ms());
        let page = render(&m);
        assert!(page.contains("mirror_maker_records_consumed_total{source=\"1\",flow=\"B->A\",topic=\"heartbeats\"} 3\n"), "{page}");
        assert!(page.contains("mirror_maker_replication_latency_seconds{source=\"1\",flow=\"B->A\",topic=\"heartbeats\",partition=\"0\"} "), "{page}");
    }

    #[test]
    fn page_has_help_type_and_values() {
        let m = Metrics::default();
        Metrics::add(&m.consumed, 7);
        Metrics::add(&m.produced, 5);
        Metrics::add(&m.dropped, 1);
        let t = m.topic(1, "orders");
        Metrics::add(&t.consumed, 7);
        t.acknowledged(2, Some(0), crate::ops::metrics::now_ms());
        Metrics::add(&m.commits, 2);
        Metrics::add(&m.commit_micros, 3_000);
        m.lag
            .lock()
            .unwrap()
            .insert("s".into(), crate::ops::metrics::StreamLag { source: 1, task: 0, partitions: vec![("orders".into(), 2, 42)], fetch: vec![] });
        let page = render(&m);
        assert!(
            page.contains("# TYPE mirror_maker_records_consumed_total counter\nmirror_maker_records_consumed_total{source=\"1\",topic=\"orders\"} 7\n"),
            "{page}"
        );
        assert!(page.contains("mirror_maker_lag_records{source=\"1\",topic=\"orders\",partition=\"2\"} 42\n"), "{page}");
        assert!(page.contains("mirror_maker_replication_latency_seconds{source=\"1\",topic=\"orders\",partition=\"2\"} "), "{page}");
        assert!(page.contains("mirror_maker_commit_duration_seconds_sum 0.003\nmirror_maker_commit_duration_seconds_count 2\n"), "{page}");
        assert!(page.contains("mirror_maker_in_flight_records 1\n"), "{page}");
        assert!(page.lines().any(|l| l.starts_with("mirror_maker_process_resident_memory_bytes ") && !l.ends_with(" 0")), "{page}");
    }

    #[test]
    fn serves_get_metrics_and_refuses_other_paths() {
        let m = Arc::new(Metrics::default());
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        serve("127.0.0.1", port, m).unwrap();
        let get = |path: &str| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut out = String::new();
            std::io::Read::read_to_string(&mut s, &mut out).unwrap();
            out
        };
        let ok = get("/metrics");
        assert!(ok.starts_with("HTTP/1.1 200 OK") && ok.contains("mirror_maker_commits_total 0"), "{ok}");
        assert!(get("/other").starts_with("HTTP/1.1 404"));
    }

    /// Far above anything the endpoint should need on 2 busy cores.
    const GENEROUS: Duration = Duration::from_secs(30);

    fn start(metrics: Arc<Metrics>) -> u16 {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        serve("127.0.0.1", port, metrics).unwrap();
        port
    }

    /// A scrape as Prometheus makes it; the whole answer, or why there is none.
    fn scrape(port: u16) -> io::Result<String> {
        let failed = |step: String| move |e: io::Error| io::Error::new(e.kind(), format!("{step}: {e}"));
        let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(failed("connect".into()))?;
        s.set_read_timeout(Some(GENEROUS)).unwrap();
        s.set_write_timeout(Some(GENEROUS)).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n").map_err(failed("write".into()))?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).map_err(failed(format!("no answer within {GENEROUS:?}")))?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn wait_for(what: &str, deadline: Duration, mut cond: impl FnMut() -> bool) {
        let until = Instant::now() + deadline;
        while !cond() {
            assert!(Instant::now() < until, "timed out after {deadline:?} waiting for {what}");
            thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn a_client_sending_a_byte_a_second_neither_blocks_a_scrape_nor_stays_connected() {
        let port = start(Arc::new(Metrics::default()));
        let sent = Arc::new(AtomicUsize::new(0));
        let slow = {
            let sent = sent.clone();
            thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.write_all(b"GET /metrics HTTP/1.1\r\nX-Slow: ").unwrap();
                // Two minutes of a byte a second unless the server hangs up first.
                for _ in 0..120 {
                    if let Err(e) = s.write_all(b"a") {
                        return Some(e);
                    }
                    sent.fetch_add(1, Ordering::SeqCst);
                    thread::sleep(Duration::from_secs(1));
                }
                None
            })
        };
        // Connected and trickling before the scrape, so the scrape queues behind it.
        wait_for("the slow client to send its first bytes", GENEROUS, || sent.load(Ordering::SeqCst) >= 2);
        let page = scrape(port).expect("a scrape while a slow client is connected");
        assert!(page.starts_with("HTTP/1.1 200 OK") && page.contains("mirror_maker_commits_total 0"), "{page}");
        let ended = slow.join().unwrap();
        assert!(ended.is_some(), "the server let a client trickle a request for two minutes (sent {} bytes)", sent.load(Ordering::SeqCst));
    }

    #[test]
    fn a_ten_megabyte_request_line_is_cut_off_and_does_not_block_a_scrape() {
        let port = start(Arc::new(Metrics::default()));
        let hostile = thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            // A server that neither reads nor hangs up fails the test instead of hanging it.
            s.set_write_timeout(Some(GENEROUS)).unwrap();
            s.write_all(b"GET /").unwrap();
            let chunk = vec![b'a'; 64 * 1024];
            let mut accepted = 5;
            while accepted < 10 << 20 {
                match s.write(&chunk) {
                    Ok(n) => accepted += n,
                    Err(e) => return (accepted, Some(e)),
                }
            }
            (accepted, None)
        });
        let page = scrape(port).expect("a scrape while a client sends a 10 MB request line");
        assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
        let (accepted, error) = hostile.join().unwrap();
        // The kernel's buffers take a few MB before the server's close shows;
        // a server that read on would have taken all 10 MB.
        let e = error.unwrap_or_else(|| panic!("the server took the whole 10 MB request line ({accepted} bytes) without hanging up"));
        assert!(
            matches!(e.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset),
            "the hostile client's write failed for another reason than the server hanging up: {e}"
        );
    }

    /// Metrics whose page is far larger than the socket buffers (a few MB on
    /// loopback), so a client that does not read stalls the server's writes.
    fn huge_page_metrics() -> Arc<Metrics> {
        let m = Arc::new(Metrics::default());
        for i in 0..40_000 {
            let t = m.topic(0, &format!("a-topic-with-a-long-name-to-fill-the-page-{i:06}"));
            Metrics::add(&t.consumed, i);
        }
        m
    }

    /// Asks for the page and reads nothing back.
    fn request_and_never_read(port: u16) -> TcpStream {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        s
    }

    #[test]
    fn a_client_that_stops_reading_does_not_block_a_scrape() {
        let port = start(huge_page_metrics());
        let _stalled = request_and_never_read(port);
        let page = scrape(port).expect("a scrape while another client does not read its answer");
        assert!(page.starts_with("HTTP/1.1 200 OK") && page.contains("mirror_maker_commits_total 0"), "{}", &page[..page.len().min(300)]);
    }

    #[test]
    fn past_the_connection_cap_a_client_gets_503_and_stalled_readers_free_their_slots() {
        let port = start(huge_page_metrics());
        // Every slot taken by a client that asked for the big page and reads nothing.
        let stalled: Vec<TcpStream> = (0..MAX_CONNECTIONS).map(|_| request_and_never_read(port)).collect();
        // The accept thread takes them in order; one more is refused at once.
        wait_for("a connection past the cap to be answered 503", GENEROUS, || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(Some(GENEROUS)).unwrap();
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            out.starts_with(b"HTTP/1.1 503 ")
        });
        // The stalled clients still hold their sockets; the write deadline
        // gives their slots back.
        wait_for("a scrape to be served again", WRITE_DEADLINE + GENEROUS, || scrape(port).is_ok_and(|p| p.starts_with("HTTP/1.1 200 OK")));
        drop(stalled);
    }

    #[test]
    fn accept_failures_pause_the_loop_and_are_not_logged_each_time() {
        let failures = (0..5).map(|_| Err(io::Error::from_raw_os_error(libc::EMFILE)));
        let mut pauses = Vec::new();
        accept_loop(failures, |_| panic!("no connection was offered"), |d| pauses.push(d));
        assert_eq!(pauses, vec![ACCEPT_PAUSE; 5]);

        let t0 = Instant::now();
        let mut every = Every::new(Duration::from_secs(60));
        assert_eq!(every.due(t0).map(|h| h.0), Some(0));
        assert!(every.due(t0 + Duration::from_secs(1)).is_none());
        assert!(every.due(t0 + Duration::from_secs(59)).is_none());
        let next = every.due(t0 + Duration::from_secs(60)).expect("a warning once the period is over");
        assert_eq!(next.since(), " (2 more like it since the last warning)");
        assert_eq!(every.due(t0 + Duration::from_secs(121)).map(|h| h.0), Some(0));
    }

    #[test]
    fn the_end_of_the_headers_is_found_with_crlf_or_bare_lf_and_across_reads() {
        let crlf = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(head_end(&[&crlf[..], b"body"].concat()), Some(crlf.len()));
        let lf = b"GET / HTTP/1.0\nHost: x\n\n";
        assert_eq!(head_end(lf), Some(lf.len()));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }

    #[test]
    fn a_request_arriving_a_byte_at_a_time_within_the_deadline_is_served() {
        let port = start(Arc::new(Metrics::default()));
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(GENEROUS)).unwrap();
        s.set_nodelay(true).unwrap();
        for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" {
            s.write_all(&[*b]).unwrap();
        }
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK") && out.contains("mirror_maker_commits_total 0"), "{out}");
    }

    #[test]
    fn a_lag_table_poisoned_by_a_panic_elsewhere_does_not_break_later_scrapes() {
        let m = Arc::new(Metrics::default());
        m.lag
            .lock()
            .unwrap()
            .insert("s".into(), crate::ops::metrics::StreamLag { source: 0, task: 0, partitions: vec![("orders".into(), 1, 7)], fetch: vec![] });
        m.topic(0, "orders");
        let poisoner = m.clone();
        let _ = thread::spawn(move || {
            let _lag = poisoner.lag.lock().unwrap();
            let _topics = poisoner.topics.lock().unwrap();
            panic!("poisons the lag and topic tables on purpose");
        })
        .join();
        assert!(m.lag.is_poisoned() && m.topics.is_poisoned(), "the test must really poison both tables");
        let port = start(m);
        // More scrapes than there are handler slots: a slot lost per scrape would show too.
        for i in 0..20 {
            let page = scrape(port).unwrap_or_else(|e| panic!("scrape {i} after the poisoning: {e}"));
            assert!(page.starts_with("HTTP/1.1 200"), "scrape {i}: {page}");
            assert!(page.contains("mirror_maker_lag_records{source=\"0\",topic=\"orders\",partition=\"1\"} 7\n"), "scrape {i}: {page}");
        }
    }

    #[test]
    fn a_panic_while_rendering_answers_500_and_the_next_render_answers_200() {
        let head = "GET /metrics HTTP/1.1\r\n\r\n";
        let failed = String::from_utf8(page_with(head, || panic!("a render that panics, on purpose"))).unwrap();
        assert!(failed.starts_with("HTTP/1.1 500"), "{failed}");
        let ok = String::from_utf8(page_with(head, || "mirror_maker_commits_total 0\n".to_string())).unwrap();
        assert!(ok.starts_with("HTTP/1.1 200") && ok.ends_with("mirror_maker_commits_total 0\n"), "{ok}");
    }
}
