//! The series MirrorMaker 2 users' dashboards read, named and labelled as
//! the Prometheus JMX exporter turns MirrorMaker 2's and Connect's MBeans
//! into series under Strimzi's rules (`kafka-mirror-maker-2-metrics.yaml`):
//! `kafka_connect_mirror_mirrorsourceconnector_*`,
//! `kafka_connect_mirror_mirrorcheckpointconnector_*`, the replication
//! consumer's and the source task producer's client series and the Connect
//! worker's. Served beside our own `mirror_maker_*` series, in both modes, so
//! Strimzi's MirrorMaker 2 dashboard works unchanged.
//!
//! Label values are as the exporter leaves them: Kafka's JMX reporter
//! quotes a value with a character outside `[\w-%. \t]` (a connector name
//! such as `A->B.MirrorSourceConnector`, a client id with `|`), and the
//! dashboard's selectors match those quotes.

use std::fmt::Write as _;

use crate::ops::metrics::{now_ms, FlowLabels, Metrics};

/// Kafka's `Sanitizer.jmxSanitize`: the value as is when it matches
/// `[\w-%. \t]*`, else `ObjectName.quote`d.
pub fn jmx(value: &str) -> String {
    let plain = value.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '%' | '.' | ' ' | '\t'));
    if plain {
        return value.to_string();
    }
    let mut q = String::with_capacity(value.len() + 2);
    q.push('"');
    for c in value.chars() {
        match c {
            '"' | '*' | '?' | '\\' => {
                q.push('\\');
                q.push(c);
            }
            '\n' => q.push_str("\\n"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A label value in Prometheus's text format.
pub(crate) fn esc(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// `name="value"` pairs, each value sanitised as JMX would and escaped.
fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{}\"", esc(&jmx(v)))).collect();
    format!("{{{}}}", inner.join(","))
}

struct Out<'a>(&'a mut String);

impl Out<'_> {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn line(&mut self, name: &str, labels: &str, value: f64) {
        let _ = writeln!(self.0, "{name}{labels} {value}");
    }
}

/// MirrorMaker 2's replication consumer client id for a flow's task.
pub fn consumer_client_id(flow: &FlowLabels, task: usize) -> String {
    format!("{}->{}|{}-{task}|replication-consumer", flow.source, flow.target, flow.connector("MirrorSourceConnector"))
}

/// Appends every series to `page`.
pub fn render(page: &mut String, m: &Metrics) {
    let now = now_ms();
    let mut out = Out(page);
    source_connector(&mut out, m, now);
    checkpoint_connector(&mut out, m, now);
    clients(&mut out, m);
    worker(&mut out, m);
}

const SOURCE: &str = "kafka_connect_mirror_mirrorsourceconnector";

fn source_connector(out: &mut Out<'_>, m: &Metrics, now: i64) {
    // (labels, figures) of every partition seen, gathered once per scrape.
    let mut rows = Vec::new();
    for t in m.topics_sorted() {
        let flow = m.flow_labels(t.source);
        for f in t.windows(now) {
            let p = f.partition.to_string();
            rows.push((labels(&[("source", &flow.source), ("target", &flow.target), ("topic", t.remote_name()), ("partition", &p)]), f));
        }
    }
    let gauge = |out: &mut Out<'_>, name: &str, help: &str, value: &dyn Fn(&crate::ops::metrics::PartitionFigures) -> Option<f64>| {
        let name = format!("{SOURCE}_{name}");
        out.family(&name, "gauge", help);
        for (l, f) in &rows {
            if let Some(v) = value(f) {
                out.line(&name, l, v);
            }
        }
    };
    gauge(out, "record_count", "Number of source records replicated to the target cluster.", &|f| Some(f.record_count as f64));
    gauge(out, "record_rate", "Average number of source records replicated to the target cluster per second.", &|f| Some(f.record_rate));
    gauge(out, "byte_count", "Number of bytes replicated to the target cluster.", &|f| Some(f.byte_count as f64));
    gauge(out, "byte_rate", "Average number of bytes replicated per second.", &|f| Some(f.byte_rate));
    gauge(out, "record_age_ms", "The age of incoming source records when replicated to the target cluster.", &|f| f.age_last.map(|v| v as f64));
    gauge(out, "record_age_ms_min", "The min age of incoming source records when replicated to the target cluster.", &|f| f.age.map(|s| s.0));
    gauge(out, "record_age_ms_max", "The max age of incoming source records when replicated to the target cluster.", &|f| f.age.map(|s| s.1));
    gauge(out, "record_age_ms_avg", "The average age of incoming source records when replicated to the target cluster.", &|f| f.age.map(|s| s.2));
    gauge(out, "replication_latency_ms", "Time it takes records to replicate from source to target cluster.", &|f| f.latency_last.map(|v| v as f64));
    gauge(out, "replication_latency_ms_min", "Min time it takes records to replicate from source to target cluster.", &|f| f.latency.map(|s| s.0));
    gauge(out, "replication_latency_ms_max", "Max time it takes records to replicate from source to target cluster.", &|f| f.latency.map(|s| s.1));
    gauge(out, "replication_latency_ms_avg", "Average time it takes records to replicate from source to target cluster.", &|f| f.latency.map(|s| s.2));
}

fn checkpoint_connector(out: &mut Out<'_>, m: &Metrics, now: i64) {
    let mut table = m.checkpoint_latency.lock().unwrap_or_else(|e| e.into_inner());
    type Row = (String, i64, Option<(f64, f64, f64)>);
    let rows: Vec<Row> = table
        .iter_mut()
        .map(|((s, t, g, topic, p), e)| {
            let l = labels(&[("source", s), ("target", t), ("group", g), ("topic", topic), ("partition", &p.to_string())]);
            (l, e.last, e.window.stats(now))
        })
        .collect();
    drop(table);
    let name = "kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms";
    out.family(name, "gauge", "Time it takes consumer group offsets to replicate from source to target cluster.");
    for (l, last, _) in &rows {
        out.line(name, l, *last as f64);
    }
    for (suffix, what, pick) in [("min", "Min", 0), ("max", "Max", 1), ("avg", "Average", 2)] {
        let n = format!("{name}_{suffix}");
        out.family(&n, "gauge", &format!("{what} time it takes consumer group offsets to replicate from source to target cluster."));
        for (l, _, stats) in &rows {
            if let Some(s) = stats {
                out.line(&n, l, [s.0, s.1, s.2][pick]);
            }
        }
    }
}

fn clients(out: &mut Out<'_>, m: &Metrics) {
    let name = "kafka_consumer_fetch_manager_records_lag";
    out.family(name, "gauge", "The latest lag of the partition (source end offset minus the read position).");
    for (source, task, topic, p, lag) in m.unread_lags() {
        let id = consumer_client_id(&m.flow_labels(source), task);
        out.line(name, &labels(&[("clientid", &id), ("topic", &topic), ("partition", &p.to_string())]), lag as f64);
    }
    let streams = m.stream_clients.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let name = "kafka_consumer_incoming_byte_total";
    out.family(name, "counter", "The total number of bytes read off the source (record keys and values).");
    for c in &streams {
        let id = consumer_client_id(&m.flow_labels(c.source), c.task);
        out.line(name, &labels(&[("clientid", &id)]), Metrics::get(&c.bytes) as f64);
    }
    let producers = m.producer_clients.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let name = "kafka_producer_outgoing_byte_total";
    out.family(name, "counter", "The total number of bytes the target acknowledged (record keys and values).");
    for p in &producers {
        out.line(name, &labels(&[("clientid", &p.client_id)]), Metrics::get(&p.bytes) as f64);
    }
    let name = "kafka_producer_buffer_available_bytes";
    out.family(name, "gauge", "The send buffer's room left (queue.buffering.max.kbytes minus what waits in it).");
    for p in &producers {
        out.line(name, &labels(&[("clientid", &p.client_id)]), p.available() as f64);
    }
}

fn worker(out: &mut Out<'_>, m: &Metrics) {
    let connectors = m.connectors.get().cloned().unwrap_or_default();
    let tasks: usize = connectors.iter().map(|c| c.tasks).sum();
    for (name, help, value) in [
        ("kafka_connect_worker_connector_count", "The number of connectors run in this worker.", connectors.len()),
        ("kafka_connect_worker_task_count", "The number of tasks run in this worker.", tasks),
    ] {
        out.family(name, "gauge", help);
        out.line(name, "", value as f64);
    }
    // One process, no worker group: never rebalancing.
    let name = "kafka_connect_worker_rebalance_rebalancing";
    out.family(name, "gauge", "Whether this worker is rebalancing (a single process never is).");
    out.line(name, "", 0.0);
    let client = labels(&[("clientid", "mirror-maker")]);
    for (name, help, value) in [
        ("kafka_connect_coordinator_assigned_connectors", "The number of connectors assigned to this worker.", connectors.len()),
        ("kafka_connect_coordinator_assigned_tasks", "The number of tasks assigned to this worker.", tasks),
    ] {
        out.family(name, "gauge", help);
        out.line(name, &client, value as f64);
    }
    let name = "kafka_connect_connector_status";
    out.family(name, "gauge", "Kafka Connect JMX Connector status");
    // Set once every flow runs; a failure ends the process.
    let status = "running";
    for c in &connectors {
        for t in 0..c.tasks {
            out.line(name, &labels(&[("connector", &c.name), ("task", &t.to_string()), ("status", status)]), 1.0);
        }
    }
    // The process's commits (every stream's), the same on each source task.
    let commits = Metrics::get(&m.commits);
    let name = "kafka_connect_connector_task_offset_commit_avg_time_ms";
    out.family(name, "gauge", "The average time in milliseconds taken by this task to commit offsets (the process's average).");
    if commits > 0 {
        let avg = Metrics::get(&m.commit_micros) as f64 / commits as f64 / 1000.0;
        for c in connectors.iter().filter(|c| c.is_source) {
            for t in 0..c.tasks {
                out.line(name, &labels(&[("connector", &c.name), ("task", &t.to_string())]), avg);
            }
        }
    }
    let name = "kafka_connect_source_task_source_record_active_count";
    out.family(name, "gauge", "The number of records read and not yet acknowledged by the target (the flow's, on its task 0).");
    let topics = m.topics_sorted();
    for c in connectors.iter().filter(|c| c.is_source) {
        let active: u64 = topics
            .iter()
            .filter(|t| t.source == c.source)
            .map(|t| Metrics::get(&t.consumed).saturating_sub(Metrics::get(&t.produced) + Metrics::get(&t.dropped) + Metrics::get(&t.loop_skipped)))
            .sum();
        out.line(name, &labels(&[("connector", &c.name), ("task", "0")]), active as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::metrics::{Connector, StreamLag};

    #[test]
    fn values_are_quoted_as_kafkas_jmx_reporter_quotes_them() {
        assert_eq!(jmx("A.orders"), "A.orders");
        assert_eq!(jmx("my group-1 %x"), "my group-1 %x");
        assert_eq!(jmx("A->B.MirrorSourceConnector"), "\"A->B.MirrorSourceConnector\"");
        assert_eq!(jmx("a\"b*c?d\\e"), "\"a\\\"b\\*c\\?d\\\\e\"");
        // And escaped again for Prometheus's text format.
        assert_eq!(labels(&[("connector", "A->B.X")]), "{connector=\"\\\"A->B.X\\\"\"}");
    }

    #[test]
    fn the_page_has_the_series_strimzis_dashboard_reads() {
        let m = Metrics::default();
        m.flows.set(vec![FlowLabels { source: "A".into(), target: "B".into() }]).unwrap();
        m.connectors.set(vec![Connector { name: "A->B.MirrorSourceConnector".into(), tasks: 2, source: 0, is_source: true }]).unwrap();
        let t = m.topic(0, "orders");
        t.remote.set("A.orders".into()).unwrap();
        Metrics::add(&t.consumed, 5);
        Metrics::add(&t.produced, 3);
        let now = now_ms();
        let mut polled = crate::ops::metrics::Polled { value_bytes: 500, ..Default::default() };
        polled.age.add(20.0);
        polled.age_last = Some(20);
        t.polled(1, &polled, now);
        t.acknowledged(1, Some(now - 40), now);
        m.lag().insert("s".into(), StreamLag { source: 0, task: 1, partitions: vec![("orders".into(), 1, 9)], fetch: vec![7] });
        let c = m.stream_client(0, 1);
        Metrics::add(&c.bytes, 900);
        let p = m.producer_client("connector-producer-A->B.MirrorSourceConnector-0".into(), 1000);
        p.queued.store(400, std::sync::atomic::Ordering::Relaxed);
        m.checkpoints_acked("A", "B", &[("g\"1".into(), "A.orders".into(), 1, now - 15)], now);
        let mut page = String::new();
        render(&mut page, &m);
        let l = "{source=\"A\",target=\"B\",topic=\"A.orders\",partition=\"1\"}";
        for want in [
            format!("{SOURCE}_record_count{l} 1\n"),
            format!("{SOURCE}_byte_count{l} 500\n"),
            format!("{SOURCE}_record_age_ms{l} 20\n"),
            format!("{SOURCE}_record_age_ms_max{l} 20\n"),
            format!("{SOURCE}_replication_latency_ms_avg{l} 4"),
            "kafka_consumer_fetch_manager_records_lag{clientid=\"\\\"A->B|A->B.MirrorSourceConnector-1|replication-consumer\\\"\",topic=\"orders\",partition=\"1\"} 7\n".into(),
            "kafka_consumer_incoming_byte_total{clientid=\"\\\"A->B|A->B.MirrorSourceConnector-1|replication-consumer\\\"\"} 900\n".into(),
            "kafka_producer_buffer_available_bytes{clientid=\"\\\"connector-producer-A->B.MirrorSourceConnector-0\\\"\"} 600\n".into(),
            "kafka_connect_worker_connector_count 1\n".into(),
            "kafka_connect_worker_task_count 2\n".into(),
            "kafka_connect_connector_status{connector=\"\\\"A->B.MirrorSourceConnector\\\"\",task=\"1\",status=\"running\"} 1\n".into(),
            "kafka_connect_source_task_source_record_active_count{connector=\"\\\"A->B.MirrorSourceConnector\\\"\",task=\"0\"} 2\n".into(),
            "kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms{source=\"A\",target=\"B\",group=\"\\\"g\\\\\\\"1\\\"\",topic=\"A.orders\",partition=\"1\"} 15\n"
                .into(),
        ] {
            assert!(page.contains(&want), "missing {want:?} in\n{page}");
        }
        // The record rate is over at least 30 s (Kafka's Rate), never NaN.
        assert!(!page.contains("NaN"), "{page}");
        // No commit yet: no average commit time rather than NaN.
        assert!(!page.contains("kafka_connect_connector_task_offset_commit_avg_time_ms{"), "{page}");
    }
}
