//! `--check-config` on an MM2 file: per flow, the effective settings with
//! their origins, each client's librdkafka settings, and the source topics
//! that would be mirrored under which remote names; nothing is consumed.
//! Exit 0 if a run would start, 1 otherwise.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};

use super::plan;
use crate::ops::shutdown::ExitStatus;
use crate::plan::{ExactlyOnce, Flow, Ops, Plan};

const TIMEOUT: Duration = Duration::from_secs(15);

pub fn run(path: &Path, clusters: &[String]) -> ExitStatus {
    let (text, code) = report(path, clusters);
    // Values fetched by config providers never show, even in a message that prints a value.
    print!("{}", crate::kafka::secrets::scrubbed(&text));
    code
}

/// The report, and the exit status a run would have at start.
pub fn report(path: &Path, clusters: &[String]) -> (String, ExitStatus) {
    let mut out = String::new();
    let cfg = match super::load(path, clusters) {
        Ok(c) => c,
        Err(e) => return (format!("PROBLEM: {e}\n"), ExitStatus::Config),
    };
    let _ = writeln!(
        out,
        "MirrorMaker 2 file {}: clusters {}",
        path.display(),
        cfg.clusters.iter().map(|c| format!("{}={}", c.alias, c.bootstrap)).collect::<Vec<_>>().join(", ")
    );
    for w in &cfg.warnings {
        let _ = writeln!(out, "WARNING: {w}");
    }
    for n in &cfg.notices {
        let _ = writeln!(out, "note: {n}");
    }
    let ops = Ops { drain_timeout: Duration::ZERO, stats_interval: Duration::ZERO, metrics: None, label_flows: true };
    let plan = match plan::plan(&cfg, ops) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(out, "PROBLEM: {e}");
            return (out, ExitStatus::Config);
        }
    };
    for f in &cfg.flows {
        let _ = writeln!(out, "\nflow {}{}", f.name(), if f.enabled { "" } else { " (heartbeats only: not enabled)" });
        for o in &f.origins {
            let _ = writeln!(out, "  {}={}  # {}", o.key, o.value, o.origin);
        }
        if let Some(flow) = plan.flows.iter().find(|p| p.name == f.name()) {
            describe_flow(&mut out, flow);
        }
    }
    describe_shape(&mut out, &plan);
    (out, ExitStatus::Ok)
}

/// The flow's guarantee, and where it resumes from.
fn delivery(flow: &Flow) -> String {
    let group = flow.source.group_id.as_deref().unwrap_or("");
    match flow.exactly_once {
        Some(eos) => format!(
            "delivery: exactly once: records and positions in one transaction on the target, committed {}; positions kept as the offsets of group \
             {} on the target (also committed to {group} on the source, for lag tools); read the target with isolation.level=read_committed",
            if eos.interval.is_zero() {
                "after each batch read (transaction.boundary=poll)".to_string()
            } else {
                format!("every {} ms", eos.interval.as_millis())
            },
            ExactlyOnce::owner_group(&flow.lease)
        ),
        None => format!("delivery: at least once; positions committed to group {group} on the source after the target acknowledged"),
    }
}

fn describe_flow(out: &mut String, flow: &Flow) {
    let _ = writeln!(out, "  source consumer (group {}), effective librdkafka settings:", flow.source.group_id.as_deref().unwrap_or(""));
    for l in flow.source.describe() {
        let _ = writeln!(out, "    {l}");
    }
    let _ = writeln!(out, "  target producer, effective librdkafka settings:");
    for l in flow.target.settings.describe() {
        let _ = writeln!(out, "    {l}");
    }
    let admins = [("source", flow.source_admin.as_ref()), ("target", flow.target.admin.as_ref())];
    for (side, admin) in admins.iter().filter_map(|(side, a)| Some((side, (*a)?))) {
        let _ = writeln!(out, "  {side} admin clients, effective librdkafka settings:");
        for l in admin.describe() {
            let _ = writeln!(out, "    {l}");
        }
    }
    let clients = || [Some(&flow.source), Some(&flow.target.settings), flow.source_admin.as_ref(), flow.target.admin.as_ref()].into_iter().flatten();
    for w in clients().flat_map(|c| &c.warnings) {
        let _ = writeln!(out, "  WARNING: {w}");
    }
    // What the clients' translation says of keys it does not pass on (max.poll.records, ...).
    for n in clients().flat_map(|c| &c.notices) {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = writeln!(out, "  topics: {}", flow.filter.description());
    let _ = writeln!(out, "  {}", delivery(flow));
    let consumer: Result<BaseConsumer, _> = flow.source.client_config().create();
    match consumer.map_err(|e| e.to_string()).and_then(|c| c.fetch_metadata(None, TIMEOUT).map_err(|e| e.to_string())) {
        Ok(md) => {
            let mut topics: Vec<(&str, usize)> =
                md.topics().iter().filter(|t| flow.filter.matches(t.name())).map(|t| (t.name(), t.partitions().len())).collect();
            topics.sort();
            if topics.is_empty() {
                let _ = writeln!(out, "  no source topic matches now");
            }
            for (t, n) in topics {
                let _ = writeln!(out, "  mirrored: {t} ({n} partitions) -> {}", flow.naming.target_topic(t));
            }
        }
        Err(e) => {
            let _ = writeln!(out, "  WARNING: the source cluster did not answer within {TIMEOUT:?} ({e}); topics not listed");
        }
    }
}

fn describe_shape(out: &mut String, plan: &Plan) {
    let s = &plan.shape;
    let _ = writeln!(
        out,
        "\nengine: {} stream(s) and {} producer worker(s) per flow (tasks.max), commits every {} ms, topics looked at every {} s; {} heartbeat emitter(s)",
        s.streams,
        s.producers,
        s.commit_interval.as_millis(),
        s.topic_refresh_interval.as_secs(),
        plan.heartbeats.len()
    );
}
