//! Issue #31 item 2: the dashboards people run, evaluated by a real
//! Prometheus server scraping the mirror under load.
//!
//! Each cluster test runs the mirror (MM1 mode, then MM2 mode) on a source
//! topic kept under load by a background producer, with an application group
//! committing on the source so that checkpoints are emitted, and starts
//! Debian's Prometheus (`scripts/prometheus`) scraping its `/metrics` every
//! second with the labels Strimzi's PodMonitor adds. Then every expression
//! of Strimzi's MirrorMaker 2 Grafana dashboard (listed below with its
//! panel) and of our own dashboard (`config/grafana/mirror-maker.json`, read
//! at run time) is evaluated through Prometheus's HTTP API until each
//! returns series with plausible values at the same moment: rates above
//! zero under load, counts above zero, ages and latencies between 0 and 10
//! minutes. Once the load stops and every record is on the target, the lag
//! panels must fall to 0. Prometheus, not string matching, decides what a
//! panel would show: its parser, staleness and range functions included.
//!
//! A failure lists every expression that was not plausible, with its panel
//! and what came back, not only the first.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;
use serde_json::Value;

/// Partitions of the loaded source topic: several, so that per-partition
/// panels (lag, age, latency `by (partition, topic)`) have several rows.
const PARTITIONS: i32 = 4;
/// How long the expressions may take to become plausible under load: the
/// first scrapes, two samples for rate(), the first checkpoints (groups
/// are listed every 5 s in MM2 mode) on 2 shared cores.
const UNDER_LOAD_LIMIT: Duration = Duration::from_secs(180);
/// How long the lag panels may take to fall to 0 once every record is on
/// the target: in MM2 mode our own lag panels count from the committed
/// positions, which MM2's default offset.flush.interval.ms (60 s) moves,
/// so a minute of it is normal (seen: 59 s); the rest is for a loaded machine.
const CATCH_UP_LIMIT: Duration = Duration::from_secs(180);
/// Ten minutes in ms: an age or latency beyond it under a steady light
/// load means a wrong clock or unit, not a slow mirror.
const TEN_MINUTES_MS: f64 = 600_000.0;
/// The Prometheus ports of this file (issue #31's range for it), handed
/// out once each by [`rest_port`].
const PROMETHEUS_PORTS: std::ops::Range<u16> = 19090..19100;
/// Our own dashboard, written beside the sample configs.
const OWN_DASHBOARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config/grafana/mirror-maker.json");

/// What a plausible answer to one expression is.
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    /// At least one series, every value finite and >= 0, one above 0:
    /// rates under load, counts of running things, free buffer bytes.
    Positive,
    /// At least one series, every value finite and >= 0 (queue sizes).
    AtLeastZero,
    /// At least one series, every value a duration in ms in [0, 10 min).
    Millis,
    /// A lag in records: at least one series, every value finite and >= 0
    /// under load; each of them must fall to 0 once the mirror caught up.
    Lag,
    /// Every value 0: a lag once the mirror caught up.
    Zero,
    /// A 0/1 gauge summed over one worker (rebalancing).
    Flag,
    /// No series at all: a JVM panel, which a native binary has no
    /// counterpart for. Asserted, so that a series appearing is noticed.
    Absent,
    /// Exactly this many series, each 1 (`up` of the scrape job).
    Up(usize),
    /// Some series carries label = value (a dashboard variable's query,
    /// whose regex picks that label's value).
    Label(&'static str, &'static str),
    /// Some series carries this label, whatever its value (a variable's
    /// `label_values(label)`).
    HasLabel(String),
    /// At least one series with a finite value (our own dashboard's panels).
    Data,
}

/// How one expression is asked.
#[derive(Clone, Debug)]
enum Query {
    /// An instant query, GET /api/v1/query.
    PromQl(String),
    /// The values of a label, GET /api/v1/label/NAME/values (Grafana's
    /// `label_values(NAME)`); each value comes back as a series with that label.
    LabelValues(String),
}

/// One expression to evaluate, with the panel it comes from.
#[derive(Clone, Debug)]
struct Check {
    panel: String,
    query: Query,
    expect: Expect,
}

/// One series of an answer: its labels and value.
#[derive(Clone, Debug)]
struct Series {
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Strimzi's MirrorMaker 2 dashboard, every expression with its panel, as
/// written in strimzi-kafka-operator's
/// packaging/examples/metrics/grafana-dashboards/strimzi-kafka-mirror-maker-2.json
/// (its panels, then its two variables' queries): copied verbatim so that a
/// diff against a newer dashboard shows what changed; the variables are
/// filled in by [`strimzi_vars`].
fn strimzi_dashboard() -> Vec<(&'static str, &'static str, Expect)> {
    use Expect::*;
    vec![
        // Row "Overview".
        (
            "Total Number of Running Connectors",
            r#"sum(kafka_connect_worker_connector_count{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"})"#,
            Positive,
        ),
        (
            "Total record rate",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_record_rate{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"})"#,
            Positive,
        ),
        (
            "Record Age",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_record_age_ms{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Record Age",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_record_age_ms_avg{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Record Age",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_record_age_ms_min{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Record Age",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_record_age_ms_max{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Total Number of Running Tasks",
            r#"sum(kafka_connect_worker_task_count{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"})"#,
            Positive,
        ),
        (
            "Total byte rate",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_byte_rate{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"})"#,
            Positive,
        ),
        (
            "Consumer Lag",
            r#"sum(kafka_consumer_fetch_manager_records_lag{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name",clientid=~".*replication-consumer\""}) by (topic, partition)"#,
            Lag,
        ),
        (
            "Consumer Lag",
            r#"topk(20, sum(kafka_consumer_fetch_manager_records_lag{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name",clientid=~".*replication-consumer\""}) by (partition, topic))"#,
            Lag,
        ),
        // rate(...[5m]) divides by the whole window: while the series is
        // younger than 5 minutes it shows a fraction of the real rate (seen:
        // 14 KB/s at 60 s against a byte rate of 78 KB/s), as it would in
        // Grafana for a new pod. Hence only "above 0" here.
        (
            "Incoming Bytes per Second",
            r#"sum(rate(kafka_consumer_incoming_byte_total{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}[5m])) by (kubernetes_pod_name)"#,
            Positive,
        ),
        (
            "Outgoing Bytes per Second",
            r#"sum(rate(kafka_producer_outgoing_byte_total{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}[5m])) by (kubernetes_pod_name)"#,
            Positive,
        ),
        (
            "Replication Latency",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Replication Latency",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms_avg{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Replication Latency",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms_min{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Replication Latency",
            r#"sum(kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms_max{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (partition, topic)"#,
            Millis,
        ),
        (
            "Consumer Group Offset Sync Latency",
            r#"sum by (source, target, topic, partition, group) (kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"})"#,
            Millis,
        ),
        ("Source Connector - Producer Available Buffer", r#"sum(kafka_producer_buffer_available_bytes{clientid=~"\".*SourceConnector-[0-9]+\""})"#, Positive),
        (
            "Source Connector - Average Offset Commit Time",
            r#"sum(kafka_connect_connector_task_offset_commit_avg_time_ms{connector=~"\".*SourceConnector\"", task=~"[0-9]+"})/count(kafka_connect_connector_task_offset_commit_avg_time_ms{connector=~"\".*SourceConnector\"", task=~"[0-9]+"})"#,
            Millis,
        ),
        (
            "Source Connector - Connect Outstanding Messages Queue",
            r#"sum(kafka_connect_source_task_source_record_active_count{connector=~"\".*SourceConnector\""})"#,
            AtLeastZero,
        ),
        // Row "Workers".
        (
            "Assigned Connectors per Worker",
            r#"sum(kafka_connect_coordinator_assigned_connectors{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (kubernetes_pod_name)"#,
            Positive,
        ),
        (
            "Rebalancing",
            r#"sum(kafka_connect_worker_rebalance_rebalancing{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"})"#,
            Flag,
        ),
        (
            "Assigned Tasks per Worker",
            r#"sum(kafka_connect_coordinator_assigned_tasks{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (kubernetes_pod_name)"#,
            Positive,
        ),
        // Row "JVM": a native binary has no JVM and runs in no container
        // cAdvisor watches here; it serves mirror_maker_process_cpu_seconds_total
        // and mirror_maker_process_resident_memory_bytes instead (our own
        // dashboard shows them). These must stay empty: a series appearing
        // under a JVM name would be a pretence worth noticing.
        (
            "CPU Usage",
            r#"sum(rate(container_cpu_usage_seconds_total{namespace="$kubernetes_namespace",pod=~"$strimzi_mirror_maker_cluster_name-mirrormaker2-.+",container="$strimzi_mirror_maker_cluster_name-mirrormaker2"}[5m])) by (pod)"#,
            Absent,
        ),
        (
            "JVM Memory",
            r#"sum(jvm_memory_used_bytes{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (kubernetes_pod_name)"#,
            Absent,
        ),
        (
            "Time Spent in GC",
            r#"sum(rate(jvm_gc_collection_seconds_sum{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}[5m])) by (kubernetes_pod_name)"#,
            Absent,
        ),
        (
            "JVM Thread Count",
            r#"sum(jvm_threads_current{strimzi_io_kind=~"KafkaMirrorMaker2",strimzi_io_cluster="$strimzi_mirror_maker_cluster_name"}) by (kubernetes_pod_name)"#,
            Absent,
        ),
        // The variables: Grafana offers the namespaces and cluster names
        // its regexes pick from these answers, so ours must be there.
        ("variable Namespace", r#"query_result(kafka_connect_worker_connector_count{strimzi_io_kind="KafkaMirrorMaker2"})"#, Label("namespace", "mirror-test")),
        (
            "variable Cluster Name",
            r#"query_result(kafka_connect_worker_connector_count{namespace="$kubernetes_namespace", strimzi_io_kind="KafkaMirrorMaker2"})"#,
            Label("strimzi_io_cluster", "mirror"),
        ),
    ]
}

/// The values of Strimzi's dashboard variables for the labels
/// scripts/prometheus gives the mirror (as Strimzi's PodMonitor would for a
/// KafkaMirrorMaker2 named `mirror` in namespace `mirror-test`).
fn strimzi_vars() -> BTreeMap<String, String> {
    BTreeMap::from([("strimzi_mirror_maker_cluster_name".to_string(), "mirror".to_string()), ("kubernetes_namespace".to_string(), "mirror-test".to_string())])
}

/// Strimzi's expressions as checks, variables filled in.
fn strimzi_checks() -> Vec<Check> {
    let vars = strimzi_vars();
    strimzi_dashboard()
        .into_iter()
        .map(|(panel, expr, expect)| {
            let expr = substitute(expr, &vars).unwrap_or_else(|e| panic!("Strimzi's {panel}: {e}"));
            // query_result() is Grafana's, around a PromQL expression.
            let query = match expr.strip_prefix("query_result(").and_then(|r| r.strip_suffix(')')) {
                Some(inner) => Query::PromQl(inner.to_string()),
                None => Query::PromQl(expr),
            };
            Check { panel: format!("[Strimzi] {panel}"), query, expect }
        })
        .collect()
}

/// Grafana's built-in interval variables as a dashboard on this data would
/// have them: one minute holds ~60 samples at our 1 s scrapes, plenty for
/// rate(), as Grafana's $__rate_interval is meant to guarantee.
fn grafana_builtins() -> BTreeMap<String, String> {
    [("__rate_interval", "1m"), ("__interval", "1m"), ("__interval_ms", "60000"), ("__range", "5m"), ("__range_s", "300"), ("__range_ms", "300000")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `text` with every Grafana variable reference (`$name`, `${name}`,
/// `${name:format}`, `[[name]]`) replaced by its value in `vars`. A `$` not
/// followed by a name (a regex anchor) or followed by a digit (a
/// label_replace group) stays. An unknown name is an error: it would reach
/// Prometheus as a parse error or, worse, as a literal that matches nothing.
fn substitute(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(['$', '[']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let (name, len) = if let Some(braced) = tail.strip_prefix("${") {
            let end = braced.find('}').ok_or_else(|| format!("unclosed ${{ in {text}"))?;
            (braced[..end].split(':').next().unwrap_or(""), end + 3)
        } else if let Some(bracketed) = tail.strip_prefix("[[") {
            let end = bracketed.find("]]").ok_or_else(|| format!("unclosed [[ in {text}"))?;
            (bracketed[..end].split(':').next().unwrap_or(""), end + 4)
        } else if tail.starts_with('$') && tail[1..].starts_with(|c: char| is_name(c) && !c.is_ascii_digit()) {
            let n = tail[1..].find(|c: char| !is_name(c)).unwrap_or(tail.len() - 1);
            (&tail[1..1 + n], n + 1)
        } else {
            // A lone `$` or `[`, or `$1`: PromQL's, not a variable.
            out.push_str(&tail[..1]);
            rest = &tail[1..];
            continue;
        };
        let value = vars.get(name).ok_or_else(|| format!("unknown Grafana variable {} in {text}", &tail[..len]))?;
        out.push_str(value);
        rest = &tail[len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A Grafana variable's value for these checks: "All" (its allValue, or
/// `.*` as Grafana's regex for all) for query variables, whose values are
/// whatever the data holds; the saved value for the others (custom,
/// constant, interval, textbox), which the file defines.
fn variable_value(var: &Value) -> String {
    let all = || var["allValue"].as_str().filter(|v| !v.is_empty()).unwrap_or(".*").to_string();
    let current = &var["current"]["value"];
    let saved = match current {
        Value::String(v) => Some(v.clone()),
        Value::Array(vs) => Some(vs.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|")),
        _ => None,
    };
    match (var["type"].as_str().unwrap_or(""), saved) {
        ("query", _) => all(),
        (_, Some(v)) if v == "$__all" || v.is_empty() => match var["query"].as_str() {
            Some(q) if !q.is_empty() && var["type"] == "constant" => q.to_string(),
            _ => all(),
        },
        (_, Some(v)) => v,
        (_, None) => var["query"].as_str().unwrap_or(".*").to_string(),
    }
}

/// Splits `a, b` at its last comma outside brackets and quotes (a
/// selector's label matchers hold commas too).
fn split_last_arg(args: &str) -> Option<(&str, &str)> {
    let (mut depth, mut quoted, mut at) = (0i32, false, None);
    let mut prev = ' ';
    for (i, c) in args.char_indices() {
        match c {
            '"' if prev != '\\' => quoted = !quoted,
            '(' | '{' | '[' if !quoted => depth += 1,
            ')' | '}' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => at = Some(i),
            _ => {}
        }
        prev = c;
    }
    at.map(|i| (args[..i].trim(), args[i + 1..].trim()))
}

/// The check a variable's query makes: `label_values(label)`,
/// `label_values(selector, label)`, `query_result(expr)`, or plain PromQL.
fn variable_check(name: &str, q: &str) -> Result<Check, String> {
    let panel = format!("[ours] variable {name}");
    let q = q.trim();
    let (query, expect) = if let Some(args) = q.strip_prefix("label_values(").and_then(|r| r.strip_suffix(')')) {
        match split_last_arg(args) {
            // The selector must find series; the label may be missing on
            // all of them (a flow label in MM1 mode): Grafana then offers
            // only "All", whose allValue the panels are checked with.
            Some((selector, _label)) => (Query::PromQl(selector.to_string()), Expect::Data),
            None => (Query::LabelValues(args.trim().to_string()), Expect::HasLabel(args.trim().to_string())),
        }
    } else if let Some(inner) = q.strip_prefix("query_result(").and_then(|r| r.strip_suffix(')')) {
        (Query::PromQl(inner.to_string()), Expect::Data)
    } else if q.starts_with("metrics(") || q.starts_with("label_names(") {
        return Err(format!("variable {name}: query {q} is not evaluated by this test; use label_values or query_result"));
    } else {
        (Query::PromQl(q.to_string()), Expect::Data)
    };
    Ok(Check { panel, query, expect })
}

/// Every panel of a dashboard (rows' panels, collapsed or not, and the old
/// `rows` layout): (title, panel).
fn panels_of(dashboard: &Value) -> Vec<(String, &Value)> {
    fn walk<'a>(panels: &'a Value, out: &mut Vec<(String, &'a Value)>) {
        for p in panels.as_array().into_iter().flatten() {
            out.push((p["title"].as_str().unwrap_or("(untitled)").to_string(), p));
            walk(&p["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dashboard["panels"], &mut out);
    for row in dashboard["rows"].as_array().into_iter().flatten() {
        walk(&row["panels"], &mut out);
    }
    out
}

/// Our own dashboard's checks: every target `expr` of every panel, and
/// every query variable's query, with the variables and Grafana's built-in
/// intervals filled in; each must return data, and the lag panels must
/// fall to 0 once caught up. Errors name what is wrong
/// with the file (missing, not JSON, no expression, a variable it does not
/// define).
fn own_checks(dashboard: &str) -> Result<Vec<Check>, Vec<String>> {
    let file = PathBuf::from(dashboard);
    let rel =
        file.strip_prefix(env!("CARGO_MANIFEST_DIR")).map(|p| p.display().to_string().trim_start_matches('/').to_string()).unwrap_or(dashboard.to_string());
    let text = std::fs::read_to_string(&file).map_err(|e| vec![format!("{rel} missing ({e}): our own dashboard's expressions cannot be checked")])?;
    let json: Value = serde_json::from_str(&text).map_err(|e| vec![format!("{rel}: not JSON: {e}")])?;
    let mut vars = grafana_builtins();
    let templating = json["templating"]["list"].as_array().cloned().unwrap_or_default();
    for var in &templating {
        if let Some(name) = var["name"].as_str() {
            vars.insert(name.to_string(), variable_value(var));
        }
    }
    let (mut checks, mut errors) = (Vec::new(), Vec::new());
    for (title, panel) in panels_of(&json) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let Some(expr) = target["expr"].as_str().filter(|e| !e.trim().is_empty()) else { continue };
            let panel = format!("[ours] {title} ({})", target["refId"].as_str().unwrap_or("?"));
            match substitute(expr, &vars) {
                // A panel that is the lag itself (no division: not a time
                // to catch up) must also fall to 0 once the mirror caught up.
                Ok(e) => {
                    let expect = if (e.contains("mirror_maker_lag_records") || e.contains("mirror_maker_unread_records")) && !e.contains('/') {
                        Expect::Lag
                    } else {
                        Expect::Data
                    };
                    checks.push(Check { panel, query: Query::PromQl(e), expect })
                }
                Err(e) => errors.push(format!("{panel}: {e}")),
            }
        }
    }
    if checks.is_empty() && errors.is_empty() {
        errors.push(format!("{rel}: no panel target with an expr"));
    }
    for var in templating.iter().filter(|v| v["type"] == "query") {
        let name = var["name"].as_str().unwrap_or("?");
        let q = match &var["query"] {
            Value::String(q) => q.clone(),
            v => v["query"].as_str().unwrap_or("").to_string(),
        };
        match substitute(&q, &vars).and_then(|q| variable_check(name, &q)) {
            Ok(c) => checks.push(c),
            Err(e) => errors.push(format!("[ours] variable {name}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(checks)
    } else {
        Err(errors)
    }
}

/// A private Prometheus server (scripts/prometheus) scraping the given
/// metrics ports; stopped when dropped.
struct Prometheus {
    dir: PathBuf,
    url: String,
}

fn prometheus_script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/prometheus")
}

impl Prometheus {
    fn start(metrics_ports: &[u16]) -> Prometheus {
        let dir = std::env::temp_dir().join(unique("prometheus"));
        let mut cmd = Command::new(prometheus_script());
        cmd.args(["start", "--dir", &path(&dir), "--port", &rest_port(PROMETHEUS_PORTS).to_string()]);
        for p in metrics_ports {
            cmd.args(["--target", &format!("127.0.0.1:{p}")]);
        }
        let out = cmd.stdin(Stdio::null()).output().expect("run scripts/prometheus");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "scripts/prometheus start failed ({}):\n{stderr}", out.status);
        let url = stdout
            .lines()
            .find_map(|l| l.strip_prefix("PROMETHEUS_URL="))
            .unwrap_or_else(|| panic!("no PROMETHEUS_URL= line from scripts/prometheus start:\n{stdout}\n{stderr}"));
        Prometheus { dir, url: url.to_string() }
    }

    /// GET path?params from the server's API; the `data` of a successful
    /// answer, or what went wrong (Prometheus's error for a bad expression).
    fn api(&self, api_path: &str, params: &[(&str, &str)]) -> Result<Value, String> {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "-G", "--max-time", "20"]);
        for (k, v) in params {
            cmd.args(["--data-urlencode", &format!("{k}={v}")]);
        }
        let out = cmd.arg(format!("{}{api_path}", self.url)).stdin(Stdio::null()).output().expect("run curl");
        if !out.status.success() {
            return Err(format!("curl {api_path}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        let body: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("{api_path}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))?;
        if body["status"] != "success" {
            return Err(format!("Prometheus says {}: {}", body["errorType"].as_str().unwrap_or("?"), body["error"].as_str().unwrap_or("?")));
        }
        Ok(body["data"].clone())
    }

    /// The series an expression returns now.
    fn query(&self, q: &Query) -> Result<Vec<Series>, String> {
        let number = |v: &Value| -> Result<f64, String> {
            let s = v[1].as_str().ok_or_else(|| format!("no value in {v}"))?;
            s.parse::<f64>().map_err(|e| format!("value {s}: {e}"))
        };
        match q {
            Query::LabelValues(label) => {
                let data = self.api(&format!("/api/v1/label/{label}/values"), &[])?;
                Ok(data
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|v| Series { labels: BTreeMap::from([(label.clone(), v.to_string())]), value: 1.0 })
                    .collect())
            }
            Query::PromQl(expr) => {
                let data = self.api("/api/v1/query", &[("query", expr)])?;
                match data["resultType"].as_str() {
                    Some("vector") => data["result"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|r| {
                            let labels =
                                r["metric"].as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect();
                            Ok(Series { labels, value: number(&r["value"])? })
                        })
                        .collect(),
                    Some("scalar") => Ok(vec![Series { labels: BTreeMap::new(), value: number(&data["result"])? }]),
                    other => Err(format!("result type {other:?}, expected an instant vector or scalar")),
                }
            }
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let out = Command::new(prometheus_script()).args(["stop", "--dir", &path(&self.dir)]).stdin(Stdio::null()).output();
        match out {
            Ok(o) if o.status.success() => {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
            Ok(o) => eprintln!("scripts/prometheus stop --dir {}: {}", self.dir.display(), String::from_utf8_lossy(&o.stderr)),
            Err(e) => eprintln!("scripts/prometheus stop: {e}"),
        }
    }
}

/// A short account of an answer, for failure messages and the run's log.
fn describe(series: &[Series]) -> String {
    if series.is_empty() {
        return "no series".to_string();
    }
    let shown: Vec<String> = series
        .iter()
        .take(3)
        .map(|s| {
            let labels: Vec<String> = s
                .labels
                .iter()
                .filter(|(k, _)| !k.starts_with("strimzi_io_") && *k != "namespace" && *k != "job" && *k != "instance")
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect();
            format!("{{{}}} {}", labels.join(","), s.value)
        })
        .collect();
    let more = if series.len() > 3 { format!(" and {} more", series.len() - 3) } else { String::new() };
    format!("{} series: {}{more}", series.len(), shown.join("; "))
}

/// Whether an answer is plausible for `expect`; if not, why.
fn plausible(expect: &Expect, series: &[Series]) -> Result<(), String> {
    let values = || series.iter().map(|s| s.value);
    let all = |ok: &dyn Fn(f64) -> bool, what: &str| -> Result<(), String> {
        if series.is_empty() {
            return Err("no series".into());
        }
        if values().all(ok) {
            Ok(())
        } else {
            Err(format!("expected {what}"))
        }
    };
    match expect {
        Expect::Positive => {
            all(&|v| v.is_finite() && v >= 0.0, "every value finite and >= 0")?;
            if values().any(|v| v > 0.0) {
                Ok(())
            } else {
                Err("expected a value above 0 under load".into())
            }
        }
        Expect::AtLeastZero | Expect::Lag => all(&|v| v.is_finite() && v >= 0.0, "every value finite and >= 0"),
        Expect::Millis => {
            all(&|v| v.is_finite() && v >= 0.0, "every value finite and >= 0")?;
            // A heartbeats topic is mirrored from its start, and on clusters
            // shared with the rest of the suite it holds heartbeats of earlier
            // runs: their age is rightly older than this test. The test's
            // own topic is written now, so its records must be young.
            let own: Vec<f64> = series.iter().filter(|s| !s.labels.get("topic").is_some_and(|t| t.ends_with("heartbeats"))).map(|s| s.value).collect();
            if own.is_empty() {
                Err("no series of the test's own topic".into())
            } else if own.iter().all(|v| (0.0..TEN_MINUTES_MS).contains(v)) {
                Ok(())
            } else {
                Err("expected every value of the test's topic in ms between 0 and 10 minutes".into())
            }
        }
        Expect::Zero => all(&|v| v == 0.0, "every value 0 once the mirror caught up"),
        Expect::Flag => all(&|v| v == 0.0 || v == 1.0, "0 or 1"),
        Expect::Absent => {
            if series.is_empty() {
                Ok(())
            } else {
                Err("expected no series: this panel has no counterpart in a native binary".into())
            }
        }
        Expect::Up(n) => {
            if series.len() == *n && values().all(|v| v == 1.0) {
                Ok(())
            } else {
                Err(format!("expected {n} series, each 1"))
            }
        }
        Expect::Label(k, v) => {
            if series.iter().any(|s| s.labels.get(*k).is_some_and(|x| x == v)) {
                Ok(())
            } else {
                Err(format!("expected a series with {k}={v:?}"))
            }
        }
        Expect::HasLabel(k) => {
            if series.iter().any(|s| s.labels.get(k).is_some_and(|x| !x.is_empty())) {
                Ok(())
            } else {
                Err(format!("expected a series with a {k} label"))
            }
        }
        Expect::Data => {
            if values().any(f64::is_finite) {
                Ok(())
            } else if series.is_empty() {
                Err("no series".into())
            } else {
                Err("expected a finite value".into())
            }
        }
    }
}

/// One line per check: its panel, its expression, and what came back.
fn query_text(q: &Query) -> String {
    match q {
        Query::PromQl(e) => e.clone(),
        Query::LabelValues(l) => format!("label_values({l})"),
    }
}

/// One check's answer in a round: what came back (described), and
/// whether it is plausible.
struct Answer {
    check: Check,
    got: String,
    verdict: Result<(), String>,
}

/// Evaluates every check once a second until all are plausible in the same
/// round (the moment a dashboard shows every panel), or `limit` passes, or
/// `still_running` says the mirror is gone. Gives the last round's answers
/// and how long it took.
fn until_all_plausible(prom: &Prometheus, checks: &[Check], limit: Duration, still_running: &mut dyn FnMut() -> Result<(), String>) -> (Vec<Answer>, Duration) {
    let started = Instant::now();
    loop {
        let mut round: Vec<Answer> = checks
            .iter()
            .map(|c| match prom.query(&c.query) {
                Ok(series) => Answer { check: c.clone(), got: describe(&series), verdict: plausible(&c.expect, &series) },
                Err(e) => Answer { check: c.clone(), got: String::new(), verdict: Err(e) },
            })
            .collect();
        if round.iter().all(|a| a.verdict.is_ok()) || started.elapsed() > limit {
            return (round, started.elapsed());
        }
        if let Err(e) = still_running() {
            let check = Check { panel: "the mirror".into(), query: Query::PromQl(String::new()), expect: Expect::Data };
            round.push(Answer { check, got: String::new(), verdict: Err(e) });
            return (round, started.elapsed());
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The failures of a round, one per line, with panel, expression and answer.
fn failures(round: &[Answer]) -> Vec<String> {
    round
        .iter()
        .filter_map(|a| {
            let got = if a.got.is_empty() || a.got == "no series" { String::new() } else { format!(" (got {})", a.got) };
            a.verdict.as_ref().err().map(|why| format!("  {}\n      {}\n      -> {why}{got}", a.check.panel, query_text(&a.check.query)))
        })
        .collect()
}

/// A producer writing batches to every partition of a topic on a thread of
/// its own until stopped: the steady load the rate panels need. Values
/// carry their sequence so byte counts differ from batch to batch; the
/// producer stamps each record with the current time, so record age and
/// replication latency measure the mirror, not the data.
struct Load {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(topic: &str) -> Load {
        let producer: BaseProducer = ClientConfig::new().set("bootstrap.servers", source()).set("linger.ms", "5").create().unwrap();
        let (stop, topic) = (Arc::new(AtomicBool::new(false)), topic.to_string());
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut seq = 0u64;
            while !flag.load(Ordering::Relaxed) {
                for p in 0..PARTITIONS {
                    for _ in 0..25 {
                        let value = format!("{seq}:{}", "v".repeat(100 + (seq % 100) as usize));
                        seq += 1;
                        loop {
                            match producer.send(BaseRecord::<(), str>::to(&topic).partition(p).payload(&value)) {
                                Ok(()) => break,
                                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                                    producer.poll(Duration::from_millis(100));
                                }
                                Err((e, _)) => panic!("produce to {topic}: {e}"),
                            }
                        }
                    }
                }
                producer.flush(Duration::from_secs(60)).unwrap_or_else(|e| panic!("flush to {topic}: {e}"));
                // Paces the load to ~1,000 records/s: steady, and light
                // enough for 2 shared cores.
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Load { stop, thread: Some(thread) }
    }

    /// Stops producing once the batch in hand is written.
    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().expect("the load thread panicked");
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An application group on the source that reads the loaded topic and
/// commits as it goes, on a thread of its own until dropped: the mirror
/// checkpoints its committed offsets, so the checkpoint latency series exist.
struct CommittingGroup {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CommittingGroup {
    fn join(group: &str, topic: &str) -> CommittingGroup {
        let c = group_member(&source(), group, topic);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut last_commit = Instant::now();
            let mut read = false;
            while !flag.load(Ordering::Relaxed) {
                read |= matches!(c.poll(Duration::from_millis(100)), Some(Ok(_)));
                if read && last_commit.elapsed() > Duration::from_millis(500) {
                    // A failed commit (a rebalance) is tried again next time.
                    let _ = c.commit_consumer_state(CommitMode::Sync);
                    (read, last_commit) = (false, Instant::now());
                }
            }
            c.unsubscribe();
        });
        CommittingGroup { stop, thread: Some(thread) }
    }
}

impl Drop for CommittingGroup {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Mm1,
    Mm2,
}

/// The whole scenario in one mode: the mirror under load with Prometheus
/// scraping it, every expression plausible at once, the lag panels at 0
/// once the load stops and the mirror caught up. Panics with every
/// expression that failed, with its panel and what came back.
fn dashboards_show_the_mirror(mode: Mode) {
    let id = short_id();
    let topic = format!("dash-{id}");
    let app = format!("dash-app-{id}");
    create_topic(&source(), &topic, PARTITIONS, &[]);
    let metrics = free_port();
    let (mut mirror, remote) = match mode {
        Mode::Mm1 => {
            // Checkpoints on (they need the partition-preserving handler),
            // so the offset sync latency panel has data in MM1 mode too.
            let (src, dst) = (format!("s{id}"), format!("t{id}"));
            let extra = [
                "--metrics.port",
                &metrics.to_string(),
                "--message.handler",
                "partition-preserving",
                "--emit.checkpoints",
                "true",
                "--source.alias",
                &src,
                "--target.alias",
                &dst,
                "--checkpoint.groups",
                &app,
                "--checkpoint.interval.ms",
                "1000",
                "--offset.commit.interval.ms",
                "1000",
            ]
            .map(str::to_string);
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            (Mirror::start(&mirror_args(&source(), &unique("dash-mirror"), &target(), &topic, &extra)), topic.clone())
        }
        Mode::Mm2 => {
            let (a, b) = (format!("A{id}"), format!("B{id}"));
            let extra = [
                format!("{a}->{b}.groups = {app}"),
                "emit.checkpoints.interval.seconds = 1".into(),
                // Heartbeats go to a topic every MM2 test shares; no panel reads them.
                "emit.heartbeats.enabled = false".into(),
            ];
            let file = props("mm2.properties", &mm2_flow_lines(&a, &b, &topic, &extra));
            (Mirror::start(&[s("--mm2.config"), path(&file), s("--metrics.port"), metrics.to_string()]), format!("{a}.{topic}"))
        }
    };
    let mut load = Load::start(&topic);
    let group = CommittingGroup::join(&app, &topic);
    mirror.wait_for_log(&format!("metrics endpoint: http://127.0.0.1:{metrics}/metrics"));
    let prom = Prometheus::start(&[metrics]);
    let scraped_from = unix_now();

    let mut checks =
        vec![Check { panel: "[scrape] the mirror's target is up".into(), query: Query::PromQl(r#"up{job="mirror-maker"}"#.into()), expect: Expect::Up(1) }];
    checks.extend(strimzi_checks());
    let mut report = Vec::new();
    match own_checks(OWN_DASHBOARD) {
        Ok(own) => checks.extend(own),
        Err(errors) => report.extend(errors),
    }
    let mut alive = || if mirror.alive() { Ok(()) } else { Err(format!("mirror-maker exited; log:\n{}", mirror.output())) };
    let (round, took) = until_all_plausible(&prom, &checks, UNDER_LOAD_LIMIT, &mut alive);
    let failed = failures(&round);
    eprintln!("dashboards {mode:?}: {} of {} expressions plausible under load after {:.1} s", round.len() - failed.len(), checks.len(), took.as_secs_f64());
    for a in &round {
        eprintln!("dashboards {mode:?}: {} {}: {}", if a.verdict.is_ok() { "ok  " } else { "FAIL" }, a.check.panel, a.got);
    }
    if !failed.is_empty() {
        report.push(format!(
            "{mode:?} mode, under load, after {:.0} s: {} of {} expressions not plausible:\n{}",
            took.as_secs_f64(),
            failed.len(),
            checks.len(),
            failed.join("\n")
        ));
    }

    // Caught up: the load stops, every record written reaches the target,
    // and the lag panels must then come down to 0.
    load.stop();
    let written = count_records(&source(), &topic);
    wait_until(&format!("all {written} records of {topic} on the target's {remote}"), || count_records(&target(), &remote) >= written);
    // Only the lag panels that had series under load (the others are
    // reported above already): waiting for absent series to reach 0 would
    // only delay the report.
    let lag_checks: Vec<Check> = round
        .iter()
        .filter(|a| a.check.expect == Expect::Lag && a.verdict.is_ok())
        .map(|a| Check { panel: format!("{} (caught up)", a.check.panel), expect: Expect::Zero, ..a.check.clone() })
        .collect();
    if lag_checks.is_empty() {
        report.push(format!("{mode:?} mode: no lag panel had series under load, so their fall to 0 once caught up was not seen"));
    } else {
        let mut alive = || if mirror.alive() { Ok(()) } else { Err(format!("mirror-maker exited; log:\n{}", mirror.output())) };
        let (round, took) = until_all_plausible(&prom, &lag_checks, CATCH_UP_LIMIT, &mut alive);
        let failed = failures(&round);
        eprintln!(
            "dashboards {mode:?}: {written} records written, all on the target; lag panels {} {:.1} s later",
            if failed.is_empty() { "at 0" } else { "NOT at 0" },
            took.as_secs_f64()
        );
        if !failed.is_empty() {
            report.push(format!("{mode:?} mode, {} s after every record reached the target: lag not 0:\n{}", took.as_secs(), failed.join("\n")));
        }
    }

    // The README's picture is drawn by this renderer from data like this:
    // every panel of our dashboard must have data from a real server.
    if let Err(e) = picture_from(&prom, scraped_from, mode) {
        report.push(format!("{mode:?} mode: the dashboard picture from this run: {e}"));
    }

    drop(group);
    drop(prom);
    let code = mirror.stop();
    for bootstrap in [source(), target()] {
        delete_topics_containing(&bootstrap, &id);
    }
    assert!(report.is_empty(), "{}\n(mirror log: {})", report.join("\n\n"), mirror.log.display());
    assert_eq!(code, 0, "mirror-maker's exit status after SIGTERM; log:\n{}", mirror.output());
}

fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// `scripts/dashboard-picture render` over the run's data: it must draw
/// a PNG with no panel left without data.
fn picture_from(prom: &Prometheus, from: f64, mode: Mode) -> Result<(), String> {
    let out = std::env::temp_dir().join(unique("dashboard")).with_extension("png");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/dashboard-picture");
    let run = Command::new(script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["render", "--prometheus", &prom.url, "--start", &format!("{from:.0}"), "--end", &format!("{:.0}", unix_now())])
        .args(["--step", "2", "--scrape-interval", "1", "--out"])
        .arg(&out)
        .output()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    let text = String::from_utf8_lossy(&run.stderr).into_owned();
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&out);
    if !run.status.success() || size < 10_000 {
        return Err(format!("exit {:?}, PNG of {size} bytes:\n{text}", run.status.code()));
    }
    let empty: Vec<&str> = text.lines().filter(|l| l.contains("no data for panel")).collect();
    if !empty.is_empty() {
        return Err(format!("panels without data in {mode:?} mode:\n{}", empty.join("\n")));
    }
    Ok(())
}

/// MM1 mode (`--consumer.config`/`--producer.config`/`--whitelist`), as
/// the series spec says MM1 serves MM2's names too (source = the source's
/// alias, target = the target's).
#[test]
#[ignore = "needs clusters"]
fn mm1_mode_lights_up_strimzis_dashboard_and_ours() {
    require_clusters!(source(), target());
    dashboards_show_the_mirror(Mode::Mm1);
}

/// MM2 mode (`--mm2.config`), the mode Strimzi's dashboard was made for.
#[test]
#[ignore = "needs clusters"]
fn mm2_mode_lights_up_strimzis_dashboard_and_ours() {
    require_clusters!(source(), target());
    dashboards_show_the_mirror(Mode::Mm2);
}

/// No brokers: our own dashboard file is there, and every expression and
/// variable query in it resolves (no Grafana variable it does not define),
/// so the cluster tests can evaluate all of them.
#[test]
fn our_dashboard_expressions_resolve() {
    let checks = own_checks(OWN_DASHBOARD).unwrap_or_else(|errors| panic!("{}", errors.join("\n")));
    assert!(checks.iter().any(|c| !c.panel.contains("variable ")), "no panel expression in {OWN_DASHBOARD}");
}

/// No brokers: Grafana's variable forms are filled in, and PromQL's own `$`
/// (regex anchors, label_replace groups) is left alone.
#[test]
fn grafana_variables_are_filled_in() {
    let mut vars = grafana_builtins();
    vars.insert("source".into(), ".*".into());
    vars.insert("source_topic".into(), "t.*".into());
    let got =
        substitute(r#"rate(x{source=~"$source",topic=~"${source_topic}",a=~"[[source]]",b=~"${source:regex}",c=~"x$"}[$__rate_interval])"#, &vars).unwrap();
    assert_eq!(got, r#"rate(x{source=~".*",topic=~"t.*",a=~".*",b=~".*",c=~"x$"}[1m])"#);
    assert_eq!(substitute(r#"label_replace(x, "a", "$1", "b", "(.*)")"#, &vars).unwrap(), r#"label_replace(x, "a", "$1", "b", "(.*)")"#);
    assert!(substitute("x{a=~\"$nope\"}", &vars).unwrap_err().contains("$nope"));
    // Strimzi's selectors get our scrape labels' values.
    assert!(strimzi_checks().iter().all(|c| !query_text(&c.query).contains('$')));
    // Variable queries.
    let c = variable_check("topic", r#"label_values(mirror_maker_lag_records{source=~".*", a="x,y"}, topic)"#).unwrap();
    assert!(matches!(&c.query, Query::PromQl(q) if q == r#"mirror_maker_lag_records{source=~".*", a="x,y"}"#), "{c:?}");
    assert_eq!(c.expect, Expect::Data);
    let c = variable_check("source", "label_values(source)").unwrap();
    assert!(matches!(&c.query, Query::LabelValues(l) if l == "source"), "{c:?}");
    // A dashboard with a variable and a row.
    let dir = std::env::temp_dir().join(unique("dash"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("d.json");
    let d = serde_json::json!({
        "panels": [
            {"type": "row", "title": "r", "panels": [{"title": "inner", "targets": [{"refId": "A", "expr": "sum(rate(a_total{source=~\"$source\"}[$__rate_interval]))"}]}]},
            {"title": "top", "targets": [{"refId": "B", "expr": "b"}, {"refId": "C", "expr": ""}]}
        ],
        "templating": {"list": [{"name": "source", "type": "query", "includeAll": true, "allValue": null, "current": {"value": "$__all"}, "query": {"query": "label_values(a_total, source)"}}]}
    });
    std::fs::write(&file, d.to_string()).unwrap();
    let checks = own_checks(&path(&file)).unwrap();
    let texts: Vec<(String, String)> = checks.iter().map(|c| (c.panel.clone(), query_text(&c.query))).collect();
    assert_eq!(
        texts,
        [
            ("[ours] inner (A)".to_string(), r#"sum(rate(a_total{source=~".*"}[1m]))"#.to_string()),
            ("[ours] top (B)".to_string(), "b".to_string()),
            ("[ours] variable source".to_string(), "a_total".to_string()),
        ]
    );
    assert!(own_checks(&path(&dir.join("absent.json"))).unwrap_err()[0].contains("missing"));
}
