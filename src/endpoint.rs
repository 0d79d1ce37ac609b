//! `--metrics.port`: the counters in Prometheus's text format over HTTP.
//!
//! A handful of lines of std networking rather than an HTTP crate: the
//! endpoint serves one read-only page to a scraper, nothing more. It binds
//! to 127.0.0.1 unless `--metrics.bind` says otherwise, so metrics are not
//! exposed beyond the host by accident.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;

use log::{info, warn};

use crate::metrics::Metrics;

/// Binds now (so a taken port fails at start) and serves on a thread.
pub fn serve(bind: &str, port: u16, metrics: Arc<Metrics>) -> std::io::Result<()> {
    let listener = TcpListener::bind((bind, port))?;
    info!("metrics endpoint: http://{}/metrics", listener.local_addr()?);
    thread::Builder::new().name("mirrormaker-metrics".into()).spawn(move || {
        for conn in listener.incoming() {
            match conn {
                Ok(stream) => {
                    if let Err(e) = answer(stream, &metrics) {
                        warn!("metrics endpoint: {e}");
                    }
                }
                Err(e) => warn!("metrics endpoint: {e}"),
            }
        }
    })?;
    Ok(())
}

fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // Drain the headers; the request line alone decides the answer.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let (status, body) = if request.starts_with("GET ") && (path == "/metrics" || path == "/") {
        ("200 OK", render(metrics))
    } else {
        ("404 Not Found", "only GET /metrics is served\n".to_string())
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
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
/// Per-topic series carry `source` (the `--consumer.config` index, from 0)
/// and `topic` (the source topic); per-partition series add `partition`.
pub fn render(m: &Metrics) -> String {
    let g = Metrics::get;
    let (rss, cpu) = process_figures();
    let topics = m.topics_sorted();
    let labels = |source: usize, topic: &str| format!("{{source=\"{source}\",topic=\"{topic}\"}}");
    let per_topic = |f: fn(&crate::metrics::TopicMetrics) -> u64| -> Vec<(String, f64)> {
        topics.iter().map(|t| (labels(t.source, &t.topic), f(t) as f64)).collect()
    };
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
        m.partition_lags().into_iter().map(|(s, t, p, lag)| (format!("{{source=\"{s}\",topic=\"{t}\",partition=\"{p}\"}}"), lag as f64)),
    );
    page.family(
        "replication_latency_seconds",
        "gauge",
        "Time from the source record's timestamp to the target's acknowledgement, for the latest acknowledged record of the partition.",
        topics.iter().flat_map(|t| {
            t.latencies().into_iter().map(|(p, ms)| (format!("{{source=\"{}\",topic=\"{}\",partition=\"{p}\"}}", t.source, t.topic), ms as f64 / 1000.0))
        }),
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
    page.single("process_resident_memory_bytes", "gauge", "Resident memory of the mirror process.", rss);
    page.single("process_cpu_seconds_total", "counter", "User and system CPU time of the mirror process.", cpu);
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
    fn page_has_help_type_and_values() {
        let m = Metrics::default();
        Metrics::add(&m.consumed, 7);
        Metrics::add(&m.produced, 5);
        Metrics::add(&m.dropped, 1);
        let t = m.topic(1, "orders");
        Metrics::add(&t.consumed, 7);
        t.acknowledged(2, Some(0), crate::metrics::now_ms());
        Metrics::add(&m.commits, 2);
        Metrics::add(&m.commit_micros, 3_000);
        m.lag.lock().unwrap().insert("s".into(), crate::metrics::StreamLag { source: 1, partitions: vec![("orders".into(), 2, 42)] });
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
}
