//! `--check-config`: what a run would do, without running it.
//!
//! Loads and translates every properties file, connects to each cluster
//! (metadata and cluster id), resolves the topic filter against the source's
//! topics, and prints per client the effective librdkafka settings with the
//! origin of each (file:line and the Java key it came from, or which default),
//! secrets redacted, then the topics that would be mirrored and where, and
//! every note and warning. Nothing is consumed and nothing is committed: the
//! consumers are created but never subscribe, assign or commit.
//!
//! The report goes to stdout; the exit status is 0 if a run would start and
//! 1 otherwise, so scripts can gate a deployment on it.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaResult;
use rdkafka::metadata::Metadata;
use rdkafka::producer::{BaseProducer, Producer};

use crate::front::mm1;
use crate::front::mm1::cli::Options;
use crate::front::translate;
use crate::kafka::settings;
use crate::kafka::settings::{ClientSettings, Role};
use crate::ops::shutdown::ExitStatus;
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;

const TIMEOUT: Duration = Duration::from_secs(15);

/// The report being written, and whether anything would stop a run.
struct Report {
    out: String,
    problems: Vec<String>,
    warnings: Vec<String>,
}

impl Report {
    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    fn problem(&mut self, s: String) {
        self.line(format!("  PROBLEM: {s}"));
        self.problems.push(s);
    }

    fn settings(&mut self, s: &ClientSettings) {
        self.line("  effective librdkafka settings (key=value  # origin):");
        for l in s.describe() {
            self.line(format!("    {l}"));
        }
        if s.byte_array_partitioner {
            self.line("    (custom partitioner: keyed records to abs(Arrays.hashCode(key)) % partitions, 0.8 ByteArrayPartitioner)");
        }
        for n in &s.notices {
            self.line(format!("  note: {n}"));
        }
        for w in &s.warnings {
            self.line(format!("  WARNING: {w}"));
            self.warnings.push(w.clone());
        }
    }
}

/// One cluster as the check saw it.
struct Cluster {
    id: Option<String>,
    metadata: Option<Metadata>,
}

fn describe_cluster(r: &mut Report, what: &str, bootstrap: &str, id: Option<String>, md: KafkaResult<Metadata>) -> Cluster {
    match md {
        Ok(md) => {
            r.line(format!(
                "  {what} at {bootstrap}: reached; cluster id {}, {} broker(s), {} topic(s)",
                id.as_deref().unwrap_or("(not reported)"),
                md.brokers().len(),
                md.topics().len()
            ));
            Cluster { id, metadata: Some(md) }
        }
        Err(e) => {
            r.problem(format!("cannot reach the {what} at {bootstrap}: {e}; check bootstrap.servers, the network and the security settings"));
            Cluster { id: None, metadata: None }
        }
    }
}

/// Runs the check; returns the exit status.
pub fn run(options: &Options) -> ExitStatus {
    let (text, code) = report(options);
    // Values fetched by config providers never show, even in a message that prints a value.
    print!("{}", crate::kafka::secrets::scrubbed(&text));
    code
}

/// The report text and the exit status (for tests: no printing).
///
/// The target first: the topic list of each source says where each topic
/// goes. Each step below writes its own section of the report.
pub fn report(options: &Options) -> (String, ExitStatus) {
    let mut r = Report { out: String::new(), problems: Vec::new(), warnings: Vec::new() };
    r.line("mirror-maker --check-config: nothing is consumed or committed");
    for n in &options.notices {
        r.line(format!("note: {n}"));
    }
    let handler = match Handler::from_spec(&options.handler) {
        Ok(h) => Some(h),
        Err(e) => {
            r.problem(e.to_string());
            None
        }
    };
    let topts = settings::TranslateOptions { accept_zookeeper_offsets_loss: options.accept_zookeeper_offsets_loss };
    let target_cluster = check_target(&mut r, options, topts);
    for (i, path) in options.consumer_configs.iter().enumerate() {
        check_source(&mut r, options, topts, i, path, handler.as_ref(), &target_cluster);
    }
    if let (true, Some(h)) = (options.beyond.checkpoints.emit, &handler) {
        check_checkpoints(&mut r, options, h);
    }
    verdict(r)
}

/// `--emit.checkpoints`: where each source's offset-syncs and checkpoints
/// go, or why a run would refuse them.
fn check_checkpoints(r: &mut Report, options: &Options, handler: &Handler) {
    let c = &options.beyond.checkpoints;
    r.line("");
    r.line("== offset-syncs and checkpoints (--emit.checkpoints), on the target");
    let aliases = match mm1::source_aliases(c, options.consumer_configs.len(), handler) {
        Ok(Some(a)) => a,
        Ok(None) => return,
        Err(e) => return r.problem(e.to_string()),
    };
    let groups = match mm1::checkpoint_groups(c) {
        Ok(g) => g,
        Err(e) => return r.problem(e.to_string()),
    };
    for (path, alias) in options.consumer_configs.iter().zip(&aliases) {
        let (syncs, checkpoints) = mm1::checkpoint_topic_names(alias);
        r.line(format!("{}: source alias {alias}: offset-syncs to {syncs}, checkpoints to {checkpoints}", path.display()));
    }
    r.line(format!(
        "groups: {}; every {} ms; group offsets synced to the target: {}",
        groups.description(),
        c.interval_ms,
        if c.sync_group_offsets { "yes, for groups with no active consumer there" } else { "no" }
    ));
}

/// The producer's section: its file's settings, then the target cluster as
/// reached with them (an unknown cluster if either fails).
fn check_target(r: &mut Report, options: &Options, topts: settings::TranslateOptions) -> Cluster {
    r.line("");
    r.line(format!("== producer (target cluster): {}", options.producer_config.display()));
    let target = match translate::load(&options.producer_config, Role::Producer, topts) {
        Ok(s) => Some(s),
        Err(e) => {
            r.problem(e.to_string());
            None
        }
    };
    let mut target_cluster = Cluster { id: None, metadata: None };
    if let Some(t) = &target {
        r.settings(t);
        match t.client_config().create::<BaseProducer>() {
            Ok(p) => {
                let md = p.client().fetch_metadata(None, TIMEOUT);
                let id = md.as_ref().ok().and_then(|_| p.client().fetch_cluster_id(TIMEOUT));
                target_cluster = describe_cluster(r, "target cluster", &t.bootstrap, id, md);
            }
            Err(e) => r.problem(format!("{}: librdkafka refuses the producer settings: {e}", t.path.display())),
        }
    }
    target_cluster
}

/// The section of consumer `i` (file `path`): its settings, the source
/// cluster as reached with them, a loop back to the target, and the topics
/// it would mirror. Ends early where a step fails and the next ones need
/// what it would have given.
fn check_source(
    r: &mut Report,
    options: &Options,
    topts: settings::TranslateOptions,
    i: usize,
    path: &Path,
    handler: Option<&Handler>,
    target_cluster: &Cluster,
) {
    r.line("");
    r.line(format!("== consumer {} (source cluster): {}", i + 1, path.display()));
    let settings = translate::load(path, Role::Consumer, topts).and_then(|mut s| {
        translate::resolve_brokers(&mut s)?;
        Ok(s)
    });
    let s = match settings {
        Ok(s) => s,
        Err(e) => {
            r.problem(e.to_string());
            return;
        }
    };
    r.settings(&s);
    let mut cfg = s.client_config();
    // The name the first stream would use; never subscribed, so it joins nothing.
    cfg.set("client.id", format!("{}-check", s.group_id.as_deref().unwrap_or("mirror-maker")));
    let consumer: BaseConsumer = match cfg.create() {
        Ok(c) => c,
        Err(e) => {
            r.problem(format!("{}: librdkafka refuses the consumer settings: {e}", path.display()));
            return;
        }
    };
    let md = consumer.fetch_metadata(None, TIMEOUT);
    let id = md.as_ref().ok().and_then(|_| consumer.client().fetch_cluster_id(TIMEOUT));
    let source = describe_cluster(r, "source cluster", &s.bootstrap, id, md);
    if let (Some(sid), Some(tid), Some(h)) = (&source.id, &target_cluster.id, handler) {
        if sid == tid && h.keeps_names() {
            r.problem(format!(
                "{} and {} point at the same cluster (cluster id {sid}): with topic names kept, every mirrored record would be mirrored again, forever",
                path.display(),
                options.producer_config.display()
            ));
        }
    }
    let filter = match TopicFilter::new(options.include.as_deref(), options.exclude.as_deref(), s.exclude_internal_topics) {
        Ok(f) => f,
        Err(e) => {
            r.problem(e.to_string());
            return;
        }
    };
    let (Some(md), Some(h)) = (&source.metadata, handler) else { return };
    list_topics(r, md, &filter, h, target_cluster);
}

/// The source topics `filter` takes, by name, each with where `h` sends it
/// and whether that topic exists on the target (when the target was reached).
fn list_topics(r: &mut Report, md: &Metadata, filter: &TopicFilter, h: &Handler, target_cluster: &Cluster) {
    let mut topics: Vec<(&str, usize)> =
        md.topics().iter().filter(|t| t.error().is_none() && filter.matches(t.name())).map(|t| (t.name(), t.partitions().len())).collect();
    topics.sort();
    r.line(format!("  topics to mirror ({}, handler {}): {}", filter.description(), h.name(), topics.len()));
    if topics.is_empty() {
        r.line("    none yet; new matching topics are picked up while running");
    }
    for (name, parts) in topics {
        let dest = h.target_topic(name);
        let there = target_cluster.metadata.as_ref().map(|tm| match tm.topics().iter().find(|t| t.name() == dest && t.error().is_none()) {
            Some(t) => format!("exists with {} partition(s)", t.partitions().len()),
            None => "does not exist yet (created on the first record if the target allows auto.create.topics.enable)".to_string(),
        });
        let mut line = format!("    {name} ({parts} partition(s)) -> {dest} on the target");
        if let Some(t) = there {
            let _ = write!(line, ": {t}");
        }
        r.line(line);
    }
}

/// The last line, and the exit status: OK, or every problem found again in
/// one list.
fn verdict(mut r: Report) -> (String, ExitStatus) {
    r.line("");
    let (n_problems, n_warnings) = (r.problems.len(), r.warnings.len());
    if n_problems == 0 {
        r.line(format!("RESULT: OK, a run would start ({n_warnings} warning(s) above)"));
        (r.out, ExitStatus::Ok)
    } else {
        r.line(format!("RESULT: a run would NOT start: {n_problems} problem(s):"));
        for p in r.problems.clone() {
            r.line(format!("  - {p}"));
        }
        (r.out, ExitStatus::Config)
    }
}
