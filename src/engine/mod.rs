//! The engine: runs a [`Plan`] to the end.
//!
//! Start-up goes in named phases: per target, its producer workers, each
//! behind a bounded channel ([`Workers`]); per flow, its consumer streams,
//! after the preflight checks of the first (the clusters answer, credentials
//! work, the loop guard holds: [`preflight`]); then everything runs until a
//! stop ([`Running`]). Anything wrong before the first record is read is a
//! [`StartError`] (exit 1).
//!
//! Below it: [`side_tasks`] (a flow's duties beside the copy, as data,
//! started and finished in one place), [`mm2`] (those duties) and
//! [`pipeline`] (the copy itself, which knows nothing of MirrorMaker 2 and
//! offers hooks the duties plug into).

pub mod lease;
pub mod mm2;
pub mod pipeline;
pub mod side_tasks;
pub mod start_error;

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use log::{error, info, warn};
use rdkafka::producer::Producer;
use rdkafka::ClientConfig;

use crate::engine::mm2::topics::TopicSync;
use crate::engine::pipeline::handoff::{lane, Bound, LaneRx, LaneTx, Outbox, WAIT_FOR_ROOM};
use crate::engine::pipeline::offsets::OffsetTracker;
use crate::engine::pipeline::producer::{DeliveryContext, TargetProducer};
use crate::engine::pipeline::provenance::Provenance;
use crate::engine::pipeline::stream::topic_hook::TargetTopics;
use crate::engine::pipeline::stream::{SourceConsumer, StreamContext, StreamSpec};
use crate::engine::pipeline::throttle::Throttle;
use crate::engine::pipeline::transactional::refused::TargetAccess;
use crate::engine::pipeline::transactional::TxnSpec;
use crate::engine::side_tasks::SideTasks;
use crate::engine::start_error::{cannot_create, Client};
use crate::kafka::admin::MetaClient;
use crate::kafka::settings::ClientSettings;
use crate::ops::logfile::LogFile;
use crate::ops::metrics::{Connector, FlowLabels, Metrics};
use crate::ops::shutdown::{self, ExitStatus, Shutdown};
use crate::plan::{Flow, Ops, Plan, Shape, Target};

pub use start_error::StartError;

/// Logs a client's notices and warnings, each line once however many
/// clients share it (`said`): a cluster's key reaches a flow's consumer,
/// producer and admin clients alike.
fn log_settings(s: &ClientSettings, said: &mut std::collections::HashSet<String>) {
    for n in s.notices.iter().filter(|n| said.insert(n.to_string())) {
        info!("{n}");
    }
    for w in s.warnings.iter().filter(|w| said.insert(w.to_string())) {
        warn!("{w}");
    }
    for line in s.describe() {
        log::debug!("{:?} {}: {line}", s.role, s.path.display());
    }
}

fn normalise_bootstrap(b: &str) -> Vec<String> {
    let mut v: Vec<String> = b
        .split(',')
        .map(|s| {
            s.trim()
                .trim_start_matches("PLAINTEXT://")
                .trim_start_matches("SSL://")
                .trim_start_matches("SASL_SSL://")
                .trim_start_matches("SASL_PLAINTEXT://")
                .to_ascii_lowercase()
        })
        .filter(|s| !s.is_empty())
        .collect();
    v.sort();
    v
}

/// Runs the mirror until SIGINT/SIGTERM or a failure; returns the exit status.
/// `log_file` is reopened on SIGHUP; `exit_now` ends the process at a
/// second signal.
pub fn run(plan: Plan, log_file: Option<Arc<LogFile>>, exit_now: fn(ExitStatus) -> !) -> Result<ExitStatus, StartError> {
    let shutdown = Shutdown::new(plan.ops.drain_timeout);
    shutdown::install_signal_handler(shutdown.clone(), log_file, exit_now).map_err(StartError::Signals)?;
    run_until(plan, shutdown, Arc::new(Metrics::default()))
}

/// Each producer worker's channel: `--queue.size` and `--queue.byte.size`.
fn queue_bound(shape: &Shape) -> Bound {
    Bound { records: shape.queue_records, bytes: shape.queue_bytes }
}

/// Runs the mirror until `shutdown` is triggered; returns the exit status.
/// `metrics.health` follows it: starting, running once every flow's
/// threads are spawned, failed or stopping from `shutdown` (see
/// `ops::health`), failed with a start-up error.
pub fn run_until(plan: Plan, shutdown: Arc<Shutdown>, metrics: Arc<Metrics>) -> Result<ExitStatus, StartError> {
    metrics.health.attach(shutdown.clone());
    metrics.health.stage("beginning its start-up");
    let run = start_and_run(plan, shutdown, &metrics);
    if let Err(e) = &run {
        metrics.health.failed(e.to_string());
    }
    run
}

fn start_and_run(plan: Plan, shutdown: Arc<Shutdown>, metrics: &Arc<Metrics>) -> Result<ExitStatus, StartError> {
    let mut said = std::collections::HashSet::new();
    for f in &plan.flows {
        log_settings(&f.source, &mut said);
        f.source_admin.iter().for_each(|a| log_settings(a, &mut said));
    }
    if plan.ops.label_flows {
        let _ = metrics.flow_names.set(plan.flows.iter().map(|f| f.name.clone()).collect());
    }
    let _ = metrics.flows.set(plan.flows.iter().enumerate().map(|(i, f)| flow_labels(i, f)).collect());
    if let Some((bind, port)) = &plan.ops.metrics {
        crate::ops::endpoint::serve(bind, *port, metrics.clone()).map_err(|error| StartError::MetricsPort { bind: bind.clone(), port: *port, error })?;
    }
    let env = Env { shape: &plan.shape, lag_interval: lag_interval(&plan.ops), metrics, shutdown: &shutdown };
    let mut pipelines = Vec::new();
    let mut tasks = Vec::new();
    for (target, flows) in plan.by_target() {
        metrics.health.stage(format!("starting the producers of the target cluster ({})", target.settings.bootstrap));
        log_settings(&target.settings, &mut said);
        target.admin.iter().for_each(|a| log_settings(a, &mut said));
        let mut workers = Workers::start(&target, &flows, &plan, &env)?;
        let Some((streams, txn_specs)) = start_streams(&plan, &flows, &mut workers, &env)? else {
            return Ok(shutdown.status());
        };
        log_start(&target, &flows, &plan.shape);
        for (flow, spec) in txn_specs {
            let task = pipeline::transactional::spawn(spec).map_err(|e| StartError::ExactlyOnce { flow, error: e.to_string() })?;
            tasks.push(task);
        }
        pipelines.push((workers, streams));
    }
    let _ = metrics.connectors.set(connectors(&plan));
    let mut running = Running::spawn(pipelines, &plan, metrics, &shutdown);
    running.streams.extend(tasks);
    // Every flow's streams (or exactly-once tasks), producer workers and
    // side tasks are up. Whether the clusters answer is not asked again
    // here: that is what the lag and the rates tell.
    metrics.health.running();
    Ok(running.join(&plan, metrics, &shutdown))
}

/// A flow's aliases for the series named as MirrorMaker 2's: its
/// checkpoint aliases, else MirrorMaker 2's `A->B` name, else (MirrorMaker
/// 1 without checkpoints) `source-N` and `target`.
fn flow_labels(i: usize, f: &Flow) -> FlowLabels {
    if let Some(c) = &f.checkpointing {
        return FlowLabels { source: c.source_alias.clone(), target: c.target_alias.clone() };
    }
    match f.name.split_once("->") {
        Some((s, t)) => FlowLabels { source: s.to_string(), target: t.to_string() },
        None => FlowLabels { source: format!("source-{i}"), target: "target".into() },
    }
}

/// The connectors a Connect-based MirrorMaker 2 runs for this plan: a
/// source connector per flow (a task per stream), a checkpoint connector
/// per flow that emits checkpoints, a heartbeat connector per heartbeat
/// duty.
fn connectors(plan: &Plan) -> Vec<Connector> {
    let mut v = Vec::new();
    for (i, f) in plan.flows.iter().enumerate() {
        let labels = flow_labels(i, f);
        v.push(Connector { name: labels.connector("MirrorSourceConnector"), tasks: plan.shape.streams, source: i, is_source: true });
        if f.checkpointing.as_ref().is_some_and(|c| c.checkpoints.is_some()) {
            v.push(Connector { name: labels.connector("MirrorCheckpointConnector"), tasks: 1, source: i, is_source: false });
        }
    }
    for h in &plan.heartbeats {
        let labels = FlowLabels { source: h.source_alias.clone(), target: h.target_alias.clone() };
        let source = plan.flows.iter().position(|f| f.name == format!("{}->{}", h.source_alias, h.target_alias)).unwrap_or(0);
        v.push(Connector { name: labels.connector("MirrorHeartbeatConnector"), tasks: 1, source, is_source: false });
    }
    v
}

/// The Connect client id of a target's producer worker `w`: its flow's
/// source task's (`connector-producer-A->B.MirrorSourceConnector-0`), or
/// `*->B` when several flows share the target's workers.
fn producer_client_id(flows: &[(usize, &Flow)], w: usize) -> String {
    let labels = match flows {
        [(i, f)] => flow_labels(*i, f),
        _ => FlowLabels { source: "*".into(), target: flows.first().map_or_else(|| "target".into(), |(i, f)| flow_labels(*i, f).target) },
    };
    format!("connector-producer-{}-{w}", labels.connector("MirrorSourceConnector"))
}

/// librdkafka's `queue.buffering.max.kbytes` (default 1048576), in bytes.
fn send_buffer_bytes(config: &ClientConfig) -> u64 {
    config.get("queue.buffering.max.kbytes").and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(1_048_576) * 1024
}

/// What every start-up phase reads.
struct Env<'a> {
    shape: &'a Shape,
    /// How often the streams report their lag, for the stats line and the
    /// metrics endpoint (none when neither is on).
    lag_interval: Option<Duration>,
    metrics: &'a Arc<Metrics>,
    shutdown: &'a Arc<Shutdown>,
}

/// A target's producer workers (not yet running), their channels, and what
/// the preflight checks learn of the target.
struct Workers {
    producers: Vec<TargetProducer>,
    channels: Vec<(LaneTx, LaneRx)>,
    config: ClientConfig,
    /// None until the target answers (the provenance check waits for it).
    target_id: Option<String>,
    /// Partition-preserving flows look the target's partitions up with it.
    meta: Option<Arc<MetaClient>>,
    /// Side tasks of its flows, already running (`side_tasks`).
    side: SideTasks,
}

impl Workers {
    /// Producers first: the loop guard needs the target's cluster id.
    fn start(target: &Target, flows: &[&Flow], plan: &Plan, env: &Env<'_>) -> Result<Workers, StartError> {
        let settings = &target.settings;
        let mut config = settings.client_config();
        // Where the topic sync makes this target's topics like the source,
        // the broker's auto-create must not make one first: a target topic
        // deleted under the mirror came back from the producer's next
        // metadata request with the broker's num.partitions (issue #26
        // item 3), and its records then waited for partitions nobody would
        // add. The topic sync makes it again; the records wait for it.
        let makes_topics = flows.iter().any(|f| f.side_effects.create_topics);
        if makes_topics && settings.get("allow.auto.create.topics").is_none() {
            config.set("allow.auto.create.topics", "false");
        }
        let cluster = format!("target cluster {} ({})", settings.bootstrap, target.origin);
        let indexed: Vec<(usize, &Flow)> = flows.iter().map(|f| (plan.flows.iter().position(|g| std::ptr::eq(g, *f)).unwrap_or(0), *f)).collect();
        let capacity = send_buffer_bytes(&config);
        let context = |abort_on_send_failure: bool, partitioner, w: usize| DeliveryContext {
            client: env.metrics.producer_client(producer_client_id(&indexed, w), capacity),
            metrics: env.metrics.clone(),
            shutdown: env.shutdown.clone(),
            abort_on_send_failure,
            cluster: cluster.clone(),
            partitioner,
            deliveries: Default::default(),
            resends: Default::default(),
            await_gone_topics: makes_topics,
            gone_since: Default::default(),
        };
        let mut producers = Vec::new();
        let mut channels = Vec::new();
        for w in 0..env.shape.producers {
            let partitioner = settings.byte_array_partitioner.then_some(crate::plan::partitioner::ByteArrayPartitioner);
            let ctx = context(env.shape.abort_on_send_failure, partitioner, w);
            let p: TargetProducer = pipeline::producer::create(&config, ctx).map_err(cannot_create(&settings.path, Client::TargetProducer))?;
            producers.push(p);
            channels.push(lane(queue_bound(env.shape)));
        }
        let target_id = target_cluster_id(&producers[0]);
        if target_id.is_none() {
            // Refused credentials or a failed TLS handshake: stop before reading anything.
            if env.shutdown.status() == ExitStatus::Config {
                return Err(StartError::Refused(env.shutdown.reason().unwrap_or_default()));
            }
            warn!("cannot reach the target cluster ({}) yet; records wait until it answers", settings.bootstrap);
        }
        let meta = if flows.iter().any(|f| f.naming.preserves_partitions()) {
            let meta = crate::kafka::admin::admin_client(&target.admin_config()).map_err(cannot_create(&settings.path, Client::TargetMetadata))?;
            Some(Arc::new(meta))
        } else {
            None
        };
        Ok(Workers { producers, channels, config, target_id, meta, side: SideTasks::default() })
    }
}

/// The streams of one target's flows, created but not yet running.
type Streams = Vec<(StreamSpec, SourceConsumer)>;

/// The exactly-once tasks of one target's flows, by flow name.
type TxnSpecs = Vec<(String, TxnSpec)>;

/// Creates every flow's consumer streams (and the exactly-once flows'
/// task settings); None when asked to stop while a preflight check waited.
fn start_streams(plan: &Plan, flows: &[&Flow], workers: &mut Workers, env: &Env<'_>) -> Result<Option<(Streams, TxnSpecs)>, StartError> {
    let senders: Vec<LaneTx> = workers.channels.iter().map(|(tx, _)| tx.clone()).collect();
    let streamed = flows.iter().filter(|f| f.exactly_once.is_none()).count();
    let leave_barrier = Arc::new(std::sync::Barrier::new(streamed * env.shape.streams));
    let mut streams = Vec::new();
    let mut txn_specs = Vec::new();
    for flow in flows {
        let si = plan.flows.iter().position(|f| std::ptr::eq(f, *flow)).unwrap_or(0);
        env.metrics.health.stage(format!("starting flow {} from source cluster {} ({})", flow.name, si, flow.source.bootstrap));
        let topic_sync = topic_sync(flow)?;
        let Some(side) = workers.side.start_flow(flow, topic_sync.as_ref(), env.shape.commit_interval, env.metrics, env.shutdown)? else {
            return Ok(None);
        };
        let syncs = side.syncs;
        let mut stamp: Option<Provenance> = None;
        for j in 0..env.shape.streams {
            let (name, cfg) = stream_config(flow, si, j, plan.flows.len() > 1);
            // An exactly-once flow's tasks make their own consumers: this
            // one is made for its preflight checks only.
            let consumer = if j == 0 || flow.exactly_once.is_none() {
                let ctx = StreamContext {
                    name: name.clone(),
                    source_index: si,
                    task: j,
                    client: env.metrics.stream_client(si, j),
                    lag_from_log_start: flow.source.get("auto.offset.reset") == Some("earliest"),
                    tracker: OffsetTracker::new(),
                    outbox: Mutex::new(Outbox::new(senders.clone(), queue_bound(env.shape), WAIT_FOR_ROOM, env.metrics.clone())),
                    gap_pending: Default::default(),
                    control_stopped: Default::default(),
                    paused_in_librdkafka: Default::default(),
                    unanswered_commit: Default::default(),
                    gone_topics: Default::default(),
                    shutdown: env.shutdown.clone(),
                    metrics: env.metrics.clone(),
                    cluster: format!("source cluster {} ({})", flow.source.bootstrap, flow.source_origin),
                };
                Some(pipeline::stream::create(&cfg, ctx).map_err(cannot_create(&flow.source.path, Client::SourceConsumer))?)
            } else {
                None
            };
            if let (0, Some(consumer)) = (j, &consumer) {
                match preflight(flow, si, consumer, workers, env)? {
                    Preflight::Go(s) => stamp = s,
                    Preflight::Stopped => return Ok(None),
                }
            }
            if let Some(eos) = flow.exactly_once {
                let Some(sync) = topic_sync.clone() else {
                    return Err(StartError::ExactlyOnce {
                        flow: flow.name.clone(),
                        error: "only MirrorMaker 2 flows (which make their remote topics) copy exactly once".into(),
                    });
                };
                let mut spec = txn_spec(flow, name.replace("mirrormaker-thread", "mirrormaker-eos"), si, j, cfg, eos, sync, syncs.clone(), workers, env);
                spec.provenance = stamp.clone();
                txn_specs.push((flow.name.clone(), spec));
                continue;
            }
            let consumer = consumer.expect("made above for every stream of an at-least-once flow");
            let spec = StreamSpec {
                name,
                source_index: si,
                filter: flow.filter.clone(),
                handler: flow.naming.clone(),
                commit_interval: env.shape.commit_interval,
                refresh_interval: env.shape.topic_refresh_interval,
                target_meta: workers.meta.clone(),
                leave_barrier: leave_barrier.clone(),
                topic_sync: topic_sync.clone().map(|s| -> Arc<dyn TargetTopics> { s }),
                provenance: stamp.clone(),
                ack_hooks: syncs.clone().map(|s| s as Arc<dyn pipeline::ack_hooks::FlowAckHooks>),
                lag_interval: env.lag_interval,
            };
            streams.push((spec, consumer));
        }
    }
    Ok(Some((streams, txn_specs)))
}

/// Task `j` of an exactly-once flow: its clients' settings (see
/// `pipeline::transactional`).
#[allow(clippy::too_many_arguments)]
fn txn_spec(
    flow: &Flow,
    name: String,
    si: usize,
    j: usize,
    mut source_config: ClientConfig,
    eos: crate::plan::ExactlyOnce,
    sync: Arc<TopicSync>,
    syncs: Option<Arc<crate::engine::mm2::offset_syncs::FlowSyncs>>,
    workers: &Workers,
    env: &Env<'_>,
) -> TxnSpec {
    // Assigned, never a member of the source group: its offsets are
    // committed for lag tools as a group without members takes them.
    source_config.remove("group.instance.id").set("enable.auto.commit", "false").set("enable.auto.offset.store", "false");
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let access = Arc::new(TargetAccess {
        bootstrap: flow.target.settings.bootstrap.clone(),
        origin: flow.target.origin.clone(),
        principal: crate::kafka::auth::principal(&workers.config),
        transactional_id: crate::plan::ExactlyOnce::transactional_id(&flow.lease, j, std::process::id(), started),
        group: crate::plan::ExactlyOnce::owner_group(&flow.lease),
    });
    let mut owner = crate::kafka::admin::admin_config(&workers.config);
    let strategy = flow.source.get("partition.assignment.strategy").unwrap_or("cooperative-sticky");
    let session = flow.source.get("session.timeout.ms").unwrap_or("10000");
    owner
        .set("group.id", &access.group)
        .set("client.id", format!("mirror-maker-eos-{}-{j}", flow.lease))
        .set("partition.assignment.strategy", strategy)
        .set("session.timeout.ms", session)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "latest")
        .set("isolation.level", "read_committed")
        .set("enable.partition.eof", "false")
        .set("topic.metadata.refresh.interval.ms", env.shape.topic_refresh_interval.as_millis().clamp(1000, 300_000).to_string());
    let mut producer_config = workers.config.clone();
    if flow.target.settings.get("transaction.timeout.ms").is_none() {
        // How long partitions of a process killed mid-transaction wait
        // for the coordinator to abort it before their next owner resumes.
        producer_config.set("transaction.timeout.ms", "10000");
    }
    TxnSpec {
        name,
        source_index: si,
        filter: flow.filter.clone(),
        handler: flow.naming.clone(),
        refresh_interval: env.shape.topic_refresh_interval,
        interval: eos.interval,
        topic_sync: sync,
        ack_hooks: syncs.map(|s| s as Arc<dyn pipeline::ack_hooks::FlowAckHooks>),
        provenance: None,
        source_config,
        owner_config: owner,
        producer_config,
        access,
        metrics: env.metrics.clone(),
        shutdown: env.shutdown.clone(),
    }
}

/// One per flow, shared by its streams (see `topics`).
fn topic_sync(flow: &Flow) -> Result<Option<Arc<TopicSync>>, StartError> {
    let side = flow.side_effects;
    if !side.create_topics && !side.sync_partitions {
        return Ok(None);
    }
    let source_admin = crate::kafka::admin::admin_client(&flow.source_admin_config()).map_err(cannot_create(&flow.source.path, Client::SourceAdmin))?;
    let target_admin =
        crate::kafka::admin::admin_client(&flow.target.admin_config()).map_err(cannot_create(&flow.target.settings.path, Client::TargetAdmin))?;
    let via = (flow.source_admin_origin(), flow.target.admin_origin());
    Ok(Some(Arc::new(TopicSync::new(
        (source_admin, target_admin),
        via,
        flow.naming.clone(),
        side.create_topics,
        side.sync_partitions,
        flow.remote_topics.clone(),
    ))))
}

/// How often the streams report their lag: as often as the stats line, at
/// most every 10 s (as librdkafka's statistics did, which fed it before);
/// every 10 s for the metrics endpoint alone; never when neither is on.
fn lag_interval(ops: &Ops) -> Option<Duration> {
    let most = Duration::from_secs(10);
    match (ops.stats_interval.is_zero(), ops.metrics.is_some()) {
        (false, _) => Some(ops.stats_interval.min(most)),
        (true, true) => Some(most),
        (true, false) => None,
    }
}

/// Stream `j` of flow `si`: its thread name and its consumer's settings.
fn stream_config(flow: &Flow, si: usize, j: usize, several: bool) -> (String, ClientConfig) {
    let group = flow.source.group_id.clone().unwrap_or_default();
    let mut cfg = flow.source.client_config();
    cfg.set("client.id", format!("{group}-{j}"));
    // Static membership: every stream is a member of its own, so each
    // needs its own instance id; stable across restarts, so a restarted
    // mirror gets its partitions back without a rebalance.
    if let Some(instance) = flow.source.get("group.instance.id") {
        let id = if several { format!("{instance}-{si}-{j}") } else { format!("{instance}-{j}") };
        cfg.set("group.instance.id", id);
    }
    let name = if several { format!("mirrormaker-thread-{si}-{j}") } else { format!("mirrormaker-thread-{j}") };
    (name, cfg)
}

/// What the preflight checks decided.
enum Preflight {
    /// Start; with the provenance stamp when the flow asks for one.
    Go(Option<Provenance>),
    /// Asked to stop while waiting for a cluster.
    Stopped,
}

/// The checks made once per flow, with its first consumer: the source
/// answers (or at least does not refuse our credentials), the source is not
/// the target with topic names kept, and the cluster ids the provenance
/// header needs.
fn preflight(flow: &Flow, si: usize, consumer: &SourceConsumer, workers: &mut Workers, env: &Env<'_>) -> Result<Preflight, StartError> {
    use rdkafka::consumer::Consumer;
    let source_id = cluster_id(consumer.client());
    if source_id.is_none() {
        wait_out_auth_failure(consumer, env.shutdown)?;
        warn!("cannot reach source cluster {} ({}) yet; it is tried again", si, flow.source.bootstrap);
    }
    let target = &flow.target.settings;
    let same_id = source_id.is_some() && source_id == workers.target_id;
    let same_servers = normalise_bootstrap(&flow.source.bootstrap) == normalise_bootstrap(&target.bootstrap);
    if (same_id || same_servers) && flow.naming.keeps_names() {
        return Err(StartError::SameCluster { source: flow.source.path.clone(), target: target.path.clone(), cluster_id: source_id });
    }
    if !flow.side_effects.provenance {
        return Ok(Preflight::Go(None));
    }
    let waiting =
        format!("waiting for the cluster ids the provenance header needs (source cluster {si}: {}; the target: {})", flow.source.bootstrap, target.bootstrap);
    env.metrics.health.stage(waiting);
    let Some(sid) = wait_cluster_id(&format!("source cluster {si} ({})", flow.source.bootstrap), source_id, || cluster_id(consumer.client()), env.shutdown)
    else {
        return Ok(Preflight::Stopped);
    };
    let producer = &workers.producers[0];
    let Some(tid) =
        wait_cluster_id(&format!("the target cluster ({})", target.bootstrap), workers.target_id.clone(), || target_cluster_id(producer), env.shutdown)
    else {
        return Ok(Preflight::Stopped);
    };
    if sid == tid && flow.naming.keeps_names() {
        return Err(StartError::SameClusterId { source: flow.source.path.clone(), target: target.path.clone(), cluster_id: sid });
    }
    info!(
        "provenance: records from source cluster {si} get header {}={sid}; records whose {} header names the target ({tid}) came from it and are not copied back",
        pipeline::provenance::HEADER,
        pipeline::provenance::HEADER
    );
    workers.target_id = Some(tid.clone());
    Ok(Preflight::Go(Some(Provenance { source_id: sid, target_id: tid })))
}

/// Serves the error callbacks of a source that does not answer yet for a
/// second: refused credentials or a failed TLS handshake stop us before
/// anything is read.
fn wait_out_auth_failure(consumer: &SourceConsumer, shutdown: &Shutdown) -> Result<(), StartError> {
    use rdkafka::consumer::Consumer;
    let until = std::time::Instant::now() + Duration::from_secs(1);
    while std::time::Instant::now() < until && shutdown.status() != ExitStatus::Config {
        if let Some(Err(e)) = consumer.poll(Duration::from_millis(100)) {
            if let Some(msg) = crate::kafka::auth::auth_failure(e.rdkafka_error_code(), &e.to_string(), &consumer.context().cluster) {
                shutdown.fail(ExitStatus::Config, msg);
            }
        }
    }
    if shutdown.status() == ExitStatus::Config {
        return Err(StartError::Refused(shutdown.reason().unwrap_or_default()));
    }
    Ok(())
}

/// The start line MM1 users grep for, with what this target's pipeline is.
fn log_start(target: &Target, flows: &[&Flow], shape: &Shape) {
    let t = &target.settings;
    info!(
        "Starting mirror maker: {} source(s) [{}] -> target [{}]; topics: {}; handler {}; {} stream(s) per source, {} producer(s), queue {} records or {} bytes; \
         acks={}, idempotence={}, commit after ack every {} ms, abort.on.send.failure={}",
        flows.len(),
        flows.iter().map(|f| format!("{} group {}", f.source.bootstrap, f.source.group_id.as_deref().unwrap_or(""))).collect::<Vec<_>>().join("; "),
        t.bootstrap,
        flows[0].filter.description(),
        flows[0].naming.name(),
        shape.streams,
        shape.producers,
        shape.queue_records,
        shape.queue_bytes,
        t.get("acks").or(t.get("request.required.acks")).unwrap_or("all"),
        t.get("enable.idempotence").unwrap_or("false"),
        shape.commit_interval.as_millis(),
        shape.abort_on_send_failure,
    );
}

/// Every thread of the mirror, running.
struct Running {
    workers: Vec<JoinHandle<()>>,
    streams: Vec<JoinHandle<()>>,
    stats: Option<JoinHandle<()>>,
    /// Kept until the streams are done with it.
    metas: Vec<Arc<MetaClient>>,
    /// Heartbeat emitters, config syncs, offset-sync writers and checkpointers.
    side_tasks: SideTasks,
}

impl Running {
    fn spawn(pipelines: Vec<(Workers, Streams)>, plan: &Plan, metrics: &Arc<Metrics>, shutdown: &Arc<Shutdown>) -> Running {
        let shape = &plan.shape;
        let throttle = Throttle::new(shape.throttle_records_per_sec, shape.throttle_bytes_per_sec).map(Arc::new);
        if throttle.is_some() {
            info!(
                "throttled to {} records/s and {} bytes/s (key + value) for this process; the source is slowed, nothing is dropped",
                shape.throttle_records_per_sec.map_or("unlimited".into(), |r| r.to_string()),
                shape.throttle_bytes_per_sec.map_or("unlimited".into(), |b| b.to_string())
            );
        }
        let mut running = Running { workers: Vec::new(), streams: Vec::new(), stats: None, metas: Vec::new(), side_tasks: SideTasks::default() };
        let mut worker_index = 0;
        let mut all_streams = Vec::new();
        for (workers, streams) in pipelines {
            for (p, (_tx, rx)) in workers.producers.into_iter().zip(workers.channels) {
                running.workers.push(pipeline::producer::spawn_worker(worker_index, p, rx, shutdown.clone(), throttle.clone()));
                worker_index += 1;
            }
            running.metas.extend(workers.meta);
            running.side_tasks.absorb(workers.side);
            all_streams.extend(streams);
        }
        running.streams = all_streams.into_iter().map(|(spec, c)| pipeline::stream::spawn(spec, c)).collect();
        running.side_tasks.start_plan(plan, shutdown);
        let stats = plan.ops.stats_interval;
        running.stats = (!stats.is_zero()).then(|| spawn_stats(stats, metrics.clone(), shutdown.clone()));
        running
    }

    /// Waits for the stop and the drain; returns the exit status.
    fn join(self, plan: &Plan, metrics: &Metrics, shutdown: &Shutdown) -> ExitStatus {
        let (mut panicked, streams_done) =
            shutdown.join_bounded(self.streams, "consumer streams still committing or leaving the source group (is the source cluster reachable?)");
        if streams_done {
            info!("Mirror maker thread shutdown complete");
        } else {
            // What they had not committed is mirrored again on restart.
            shutdown.drain_timed_out();
        }
        info!("Closing producer.");
        panicked |= shutdown.join_bounded(self.workers, "producer workers still closing (is the target cluster reachable?)").0;
        drop(self.metas);
        // Every acknowledgement is in: the last offset-syncs can be written.
        panicked |= self.side_tasks.finish(shutdown);
        if let Some(h) = self.stats {
            let _ = h.join();
        }
        if panicked {
            shutdown.fail(ExitStatus::Failure, "a mirror thread panicked".into());
        }
        info!("Mirrored: {}", metrics.summary());
        let code = shutdown.status();
        match code {
            ExitStatus::Ok => info!("Kafka mirror maker shutdown successfully"),
            ExitStatus::DrainTimeout => warn!(
                "Stopped after the drain timeout ({} ms) with records undelivered or not committed; their offsets were not committed and they are mirrored again on restart (exit status: {code})",
                plan.ops.drain_timeout.as_millis()
            ),
            _ => error!("Mirror maker stopped because of a failure ({code}): {}", shutdown.reason().unwrap_or_else(|| "unknown".into())),
        }
        code
    }
}

/// The cluster's id, or None when it does not answer within 10 s.
/// librdkafka's cluster-id call waits for a metadata cache change that a
/// fresh client's bootstrap request does not always signal (about a second
/// lost at every start); an explicit metadata request returns as soon as
/// the broker answers and leaves the id behind.
fn cluster_id<C: rdkafka::ClientContext>(client: &rdkafka::client::Client<C>) -> Option<String> {
    let _ = client.fetch_metadata(None, Duration::from_secs(10));
    client.fetch_cluster_id(Duration::from_millis(100))
}

/// The target's cluster id, asked through a worker's producer before its
/// worker runs: its error events (refused credentials, a failed TLS
/// handshake) are served here, so they stop the start-up.
fn target_cluster_id(p: &pipeline::producer::TargetProducer) -> Option<String> {
    let id = cluster_id(p.client());
    pipeline::producer::serve_ready_events(p);
    id
}

/// A cluster id the provenance header cannot do without: asks again every
/// few seconds until the cluster answers; `None` when asked to stop meanwhile.
fn wait_cluster_id(what: &str, known: Option<String>, fetch: impl Fn() -> Option<String>, shutdown: &Shutdown) -> Option<String> {
    if known.is_some() {
        return known;
    }
    loop {
        warn!("the provenance header needs the cluster id of {what}, which does not answer yet; waiting (--provenance.header=false does without)");
        if let Some(id) = fetch() {
            return Some(id);
        }
        if shutdown.stopping() {
            return None;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Logs the stats line every `interval` until shutdown.
fn spawn_stats(interval: Duration, metrics: Arc<Metrics>, shutdown: Arc<Shutdown>) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("mirrormaker-stats".into())
        .spawn(move || {
            let mut prev = metrics.stats_start();
            let mut next = std::time::Instant::now() + interval;
            while !shutdown.stopping() {
                std::thread::sleep(Duration::from_millis(100).min(interval));
                if std::time::Instant::now() >= next {
                    info!("{}", metrics.stats_line(&mut prev));
                    next += interval;
                }
            }
        })
        .expect("spawn stats thread")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_lists_compare_as_sets() {
        assert_eq!(normalise_bootstrap("b:2, a:1"), normalise_bootstrap("PLAINTEXT://a:1,b:2"));
        assert_ne!(normalise_bootstrap("a:1"), normalise_bootstrap("a:2"));
    }

    #[test]
    fn lag_is_reported_for_the_stats_line_or_the_endpoint() {
        let ops = |stats_s: u64, metrics: bool| Ops {
            drain_timeout: Duration::from_secs(60),
            stats_interval: Duration::from_secs(stats_s),
            metrics: metrics.then(|| ("127.0.0.1".to_string(), 9100)),
            label_flows: false,
        };
        assert_eq!(lag_interval(&ops(5, false)), Some(Duration::from_secs(5)));
        assert_eq!(lag_interval(&ops(30, false)), Some(Duration::from_secs(10)), "at most every 10 s");
        assert_eq!(lag_interval(&ops(0, true)), Some(Duration::from_secs(10)), "the endpoint alone");
        assert_eq!(lag_interval(&ops(0, false)), None);
    }
}
