//! Builds the mirror from validated options and runs it to the end.
//!
//! The second stage of argument handling: properties files are loaded and
//! translated, filters and handlers built, clients created, and the threads
//! started: per source, `--num.streams` consumer streams; for the target,
//! `--num.producers` workers, each behind a bounded channel. Anything wrong
//! before the first record is read is a [`StartError`] (exit 1).

pub mod batch;
pub mod consumer;
pub mod formats;
pub mod fxhash;
pub mod handoff;
pub mod offsets;
pub mod producer;
pub mod provenance;
pub mod throttle;
pub mod topics;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use log::{error, info, warn};
use rdkafka::producer::Producer;

use crate::engine::consumer::{StreamContext, StreamSpec};
use crate::engine::handoff::{lane, Bound, Outbox, WAIT_FOR_ROOM};
use crate::engine::offsets::OffsetTracker;
use crate::engine::producer::DeliveryContext;
use crate::engine::provenance::Provenance;
use crate::engine::throttle::Throttle;
use crate::engine::topics::TopicSync;
use crate::front::mm1::cli::{Options, DEFAULT_OFFSET_COMMIT_INTERVAL_MS};
use crate::front::properties;
use crate::front::settings;
use crate::front::settings::{ClientSettings, Role};
use crate::front::translate;
use crate::ops::logfile::LogFile;
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::{self, exit, Shutdown};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;

/// Why the mirror could not start; always exit status 1.
#[derive(Debug)]
pub struct StartError(pub String);

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

impl From<properties::ConfigError> for StartError {
    fn from(e: properties::ConfigError) -> Self {
        StartError(e.0)
    }
}

/// One source cluster: its translated consumer settings.
pub struct Source {
    pub settings: ClientSettings,
    pub filter: Arc<TopicFilter>,
}

/// Everything needed to start, built from [`Options`] with no network I/O
/// (except reading the brokers of a ZooKeeper-era consumer file from ZooKeeper).
pub struct Plan {
    pub sources: Vec<Source>,
    pub target: ClientSettings,
    pub handler: Arc<Handler>,
    pub commit_interval: Duration,
    pub options: Options,
}

fn log_settings(s: &ClientSettings) {
    for n in &s.notices {
        info!("{n}");
    }
    for w in &s.warnings {
        warn!("{w}");
    }
    for line in s.describe() {
        log::debug!("{:?} {}: {line}", s.role, s.path.display());
    }
}

pub fn plan(options: Options) -> Result<Plan, StartError> {
    let handler = Arc::new(Handler::from_spec(&options.handler).map_err(|e| StartError(e.0))?);
    let mut sources = Vec::new();
    let topts = settings::TranslateOptions { accept_zookeeper_offsets_loss: options.accept_zookeeper_offsets_loss };
    for path in &options.consumer_configs {
        let file = properties::load(path)?;
        let mut settings = translate::translate_with(&file, Role::Consumer, topts)?;
        translate::resolve_brokers(&mut settings)?;
        let filter = TopicFilter::new(options.include.as_deref(), options.exclude.as_deref(), settings.exclude_internal_topics)
            .map_err(|e| StartError(e.to_string()))?;
        sources.push(Source { settings, filter: Arc::new(filter) });
    }
    let target = translate::translate(&properties::load(&options.producer_config)?, Role::Producer)?;
    let commit_interval_ms = match options.offset_commit_interval_ms {
        Some(ms) => ms,
        None => match sources.iter().find_map(|s| s.settings.auto_commit_interval_ms) {
            Some(ms) => {
                info!("committing acknowledged offsets every {ms} ms, the auto-commit interval of the consumer file (--offset.commit.interval.ms not given)");
                ms
            }
            None => DEFAULT_OFFSET_COMMIT_INTERVAL_MS,
        },
    };
    Ok(Plan { sources, target, handler, commit_interval: Duration::from_millis(commit_interval_ms), options })
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
/// `log_file` is reopened on SIGHUP.
pub fn run(plan: Plan, log_file: Option<Arc<LogFile>>) -> Result<i32, StartError> {
    let shutdown = Shutdown::new(Duration::from_millis(plan.options.drain_timeout_ms));
    shutdown::install_signal_handler(shutdown.clone(), log_file).map_err(|e| StartError(format!("cannot install the signal handler: {e}")))?;
    run_until(plan, shutdown, Arc::new(Metrics::default()))
}

/// Runs the mirror until `shutdown` is triggered; returns the exit status.
/// Each producer worker's channel: `--queue.size` and `--queue.byte.size`.
fn queue_bound(opts: &Options) -> Bound {
    Bound { records: opts.queue_size, bytes: opts.queue_byte_size }
}

pub fn run_until(plan: Plan, shutdown: Arc<Shutdown>, metrics: Arc<Metrics>) -> Result<i32, StartError> {
    let opts = &plan.options;

    for s in &plan.sources {
        log_settings(&s.settings);
    }
    if let Some(port) = opts.metrics_port {
        crate::ops::endpoint::serve(&opts.metrics_bind, port, metrics.clone())
            .map_err(|e| StartError(format!("--metrics.port {port} on {}: {e}; pick a free port", opts.metrics_bind)))?;
    }
    log_settings(&plan.target);

    // Producers first: the loop guard needs the target's cluster id.
    let target_config = plan.target.client_config();
    let mut channels = Vec::new();
    let mut producers = Vec::new();
    let target_cluster = format!("target cluster {} (--producer.config {})", plan.target.bootstrap, plan.target.path.display());
    for _ in 0..opts.num_producers {
        let ctx = DeliveryContext {
            metrics: metrics.clone(),
            shutdown: shutdown.clone(),
            abort_on_send_failure: opts.abort_on_send_failure,
            cluster: target_cluster.clone(),
            partitioner: plan.target.byte_array_partitioner.then_some(crate::plan::partitioner::ByteArrayPartitioner),
            deliveries: Default::default(),
            resends: Default::default(),
        };
        let p: producer::TargetProducer =
            producer::create(&target_config, ctx).map_err(|e| StartError(format!("{}: cannot create the target producer: {e}", plan.target.path.display())))?;
        producers.push(p);
        channels.push(lane(queue_bound(opts)));
    }
    let mut target_id = target_cluster_id(&producers[0]);
    if target_id.is_none() {
        // Refused credentials or a failed TLS handshake: stop before reading anything.
        if shutdown.code() == exit::CONFIG {
            return Err(StartError(shutdown.reason().unwrap_or_default()));
        }
        warn!("cannot reach the target cluster ({}) yet; records wait until it answers", plan.target.bootstrap);
    }
    let target_meta = if matches!(*plan.handler, Handler::PartitionPreserving) {
        let ctx = DeliveryContext {
            metrics: metrics.clone(),
            shutdown: shutdown.clone(),
            abort_on_send_failure: true,
            cluster: target_cluster.clone(),
            partitioner: None,
            deliveries: Default::default(),
            resends: Default::default(),
        };
        Some(Arc::new(producer::create::<producer::MetaProducer>(&target_config, ctx).map_err(|e| StartError(e.to_string()))?))
    } else {
        None
    };

    let beyond = &opts.beyond;

    let senders: Vec<_> = channels.iter().map(|(tx, _)| tx.clone()).collect();
    let leave_barrier = Arc::new(std::sync::Barrier::new(plan.sources.len() * opts.num_streams));
    let mut streams = Vec::new();
    for (si, source) in plan.sources.iter().enumerate() {
        let group = source.settings.group_id.clone().unwrap_or_default();
        let mut stamp: Option<Provenance> = None;
        // One per source cluster, shared by its streams (see `topics`).
        let topic_sync = if beyond.create_topics || beyond.sync_partitions {
            let source_admin = topics::admin_client(&source.settings.client_config())
                .map_err(|e| StartError(format!("{}: cannot create the source admin client: {e}", source.settings.path.display())))?;
            let target_admin = topics::admin_client(&target_config)
                .map_err(|e| StartError(format!("{}: cannot create the target admin client: {e}", plan.target.path.display())))?;
            Some(Arc::new(TopicSync::new(source_admin, target_admin, plan.handler.clone(), beyond.create_topics, beyond.sync_partitions)))
        } else {
            None
        };
        for j in 0..opts.num_streams {
            let mut cfg = source.settings.client_config();
            cfg.set("client.id", format!("{group}-{j}"));
            if opts.stats_interval_ms > 0 && source.settings.get("statistics.interval.ms").is_none() {
                // Feeds the lag figure of the stats line.
                cfg.set("statistics.interval.ms", opts.stats_interval_ms.min(10_000).to_string());
            }
            // Static membership: every stream is a member of its own, so each
            // needs its own instance id; stable across restarts, so a restarted
            // mirror gets its partitions back without a rebalance.
            if let Some(instance) = source.settings.get("group.instance.id") {
                let id = if plan.sources.len() > 1 { format!("{instance}-{si}-{j}") } else { format!("{instance}-{j}") };
                cfg.set("group.instance.id", id);
            }
            let name = if plan.sources.len() > 1 { format!("mirrormaker-thread-{si}-{j}") } else { format!("mirrormaker-thread-{j}") };
            let ctx = StreamContext {
                name: name.clone(),
                source_index: si,
                lag_from_log_start: source.settings.get("auto.offset.reset") == Some("earliest"),
                tracker: OffsetTracker::new(),
                outbox: Mutex::new(Outbox::new(senders.clone(), queue_bound(opts), WAIT_FOR_ROOM, metrics.clone())),
                paused_ends: Default::default(),
                newly_assigned: Default::default(),
                unanswered_commit: Default::default(),
                shutdown: shutdown.clone(),
                metrics: metrics.clone(),
                cluster: format!("source cluster {} (--consumer.config {})", source.settings.bootstrap, source.settings.path.display()),
            };
            let consumer =
                consumer::create(&cfg, ctx).map_err(|e| StartError(format!("{}: cannot create the source consumer: {e}", source.settings.path.display())))?;
            if j == 0 {
                use rdkafka::consumer::Consumer;
                let source_id = cluster_id(consumer.client());
                if source_id.is_none() {
                    // Serves the error callbacks: refused credentials or a
                    // failed TLS handshake stop us before anything is read.
                    let until = std::time::Instant::now() + Duration::from_secs(1);
                    while std::time::Instant::now() < until && shutdown.code() != exit::CONFIG {
                        if let Some(Err(e)) = consumer.poll(Duration::from_millis(100)) {
                            if let Some(msg) =
                                crate::front::translate::security::auth_failure(e.rdkafka_error_code(), &e.to_string(), &consumer.context().cluster)
                            {
                                shutdown.fail(exit::CONFIG, msg);
                            }
                        }
                    }
                    if shutdown.code() == exit::CONFIG {
                        return Err(StartError(shutdown.reason().unwrap_or_default()));
                    }
                    warn!("cannot reach source cluster {} ({}) yet; it is tried again", si, source.settings.bootstrap);
                }
                let same_id = source_id.is_some() && source_id == target_id;
                let same_servers = normalise_bootstrap(&source.settings.bootstrap) == normalise_bootstrap(&plan.target.bootstrap);
                if (same_id || same_servers) && plan.handler.keeps_names() {
                    return Err(StartError(format!(
                        "{} and {} point at the same cluster{}: with topic names kept, every mirrored record would be mirrored again, forever. \
                         Point --producer.config at another cluster, or rename topics with --message.handler topic-prefix/topic-rename and a filter that excludes the renamed topics",
                        source.settings.path.display(),
                        plan.target.path.display(),
                        source_id.map(|id| format!(" (cluster id {id})")).unwrap_or_default()
                    )));
                }
                if beyond.provenance {
                    let Some(sid) = wait_cluster_id(
                        &format!("source cluster {si} ({})", source.settings.bootstrap),
                        source_id,
                        || cluster_id(consumer.client()),
                        &shutdown,
                    ) else {
                        return Ok(shutdown.code());
                    };
                    let Some(tid) = wait_cluster_id(
                        &format!("the target cluster ({})", plan.target.bootstrap),
                        target_id.clone(),
                        || target_cluster_id(&producers[0]),
                        &shutdown,
                    ) else {
                        return Ok(shutdown.code());
                    };
                    if sid == tid && plan.handler.keeps_names() {
                        return Err(StartError(format!(
                            "{} and {} point at the same cluster (cluster id {sid}); point --producer.config at another cluster",
                            source.settings.path.display(),
                            plan.target.path.display()
                        )));
                    }
                    info!(
                        "provenance: records from source cluster {si} get header {}={sid}; records whose {} header names the target ({tid}) came from it and are not copied back",
                        provenance::HEADER, provenance::HEADER
                    );
                    target_id = Some(tid.clone());
                    stamp = Some(Provenance { source_id: sid, target_id: tid });
                }
            }
            let spec = StreamSpec {
                name,
                source_index: si,
                filter: source.filter.clone(),
                handler: plan.handler.clone(),
                commit_interval: plan.commit_interval,
                refresh_interval: Duration::from_millis(opts.topic_refresh_interval_ms),
                target_meta: target_meta.clone(),
                leave_barrier: leave_barrier.clone(),
                topic_sync: topic_sync.clone(),
                provenance: stamp.clone(),
            };
            streams.push((spec, consumer));
        }
    }
    drop(senders);

    info!(
        "Starting mirror maker: {} source(s) [{}] -> target [{}]; topics: {}; handler {}; {} stream(s) per source, {} producer(s), queue {} records or {} bytes; \
         acks={}, idempotence={}, commit after ack every {} ms, abort.on.send.failure={}",
        plan.sources.len(),
        plan.sources.iter().map(|s| format!("{} group {}", s.settings.bootstrap, s.settings.group_id.as_deref().unwrap_or(""))).collect::<Vec<_>>().join("; "),
        plan.target.bootstrap,
        plan.sources[0].filter.description(),
        plan.handler.name(),
        opts.num_streams,
        opts.num_producers,
        opts.queue_size,
        opts.queue_byte_size,
        plan.target.get("acks").or(plan.target.get("request.required.acks")).unwrap_or("all"),
        plan.target.get("enable.idempotence").unwrap_or("false"),
        plan.commit_interval.as_millis(),
        opts.abort_on_send_failure,
    );

    let throttle = Throttle::new(beyond.throttle_records_per_sec, beyond.throttle_bytes_per_sec).map(Arc::new);
    if throttle.is_some() {
        info!(
            "throttled to {} records/s and {} bytes/s (key + value) for this process; the source is slowed, nothing is dropped",
            beyond.throttle_records_per_sec.map_or("unlimited".into(), |r| r.to_string()),
            beyond.throttle_bytes_per_sec.map_or("unlimited".into(), |b| b.to_string())
        );
    }
    let workers: Vec<_> = producers
        .into_iter()
        .zip(channels)
        .enumerate()
        .map(|(i, (p, (_tx, rx)))| producer::spawn_worker(i, p, rx, shutdown.clone(), throttle.clone()))
        .collect();
    let stream_handles: Vec<_> = streams.into_iter().map(|(spec, c)| consumer::spawn(spec, c)).collect();
    let stats = (opts.stats_interval_ms > 0).then(|| spawn_stats(Duration::from_millis(opts.stats_interval_ms), metrics.clone(), shutdown.clone()));

    let (mut panicked, streams_done) =
        join_bounded(stream_handles, &shutdown, "consumer streams still committing or leaving the source group (is the source cluster reachable?)");
    if streams_done {
        info!("Mirror maker thread shutdown complete");
    } else {
        // What they had not committed is mirrored again on restart.
        shutdown.drain_timed_out();
    }
    info!("Closing producer.");
    panicked |= join_bounded(workers, &shutdown, "producer workers still closing (is the target cluster reachable?)").0;
    drop(target_meta);
    if let Some(h) = stats {
        let _ = h.join();
    }
    if panicked {
        shutdown.fail(exit::FAILURE, "a mirror thread panicked".into());
    }
    info!("Mirrored: {}", metrics.summary());
    let code = shutdown.code();
    match code {
        exit::OK => info!("Kafka mirror maker shutdown successfully"),
        exit::DRAIN_TIMEOUT => warn!(
            "Stopped after the drain timeout ({} ms) with records undelivered or not committed; their offsets were not committed and they are mirrored again on restart (exit {code})",
            opts.drain_timeout_ms
        ),
        _ => error!(
            "Mirror maker stopped because of a failure (exit {code}): {}",
            shutdown.reason().unwrap_or_else(|| "unknown".into())
        ),
    }
    Ok(code)
}

/// Joins the threads as they finish, but once the shutdown's grace
/// deadline has passed stops waiting for those left and names them: the
/// process then exits with them still running, rather than wait for a
/// cluster that does not answer. Returns whether one panicked and whether
/// all finished.
fn join_bounded(mut pending: Vec<std::thread::JoinHandle<()>>, shutdown: &Shutdown, what: &str) -> (bool, bool) {
    let mut panicked = false;
    loop {
        let (done, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|h| h.is_finished());
        for h in done {
            panicked |= h.join().is_err();
        }
        pending = rest;
        if pending.is_empty() {
            return (panicked, true);
        }
        if shutdown.stopping() && std::time::Instant::now() >= shutdown.grace_deadline() {
            let names: Vec<&str> = pending.iter().map(|h| h.thread().name().unwrap_or("unnamed")).collect();
            warn!("{what}: {} {:?} after the drain timeout; exiting without waiting for them", names.join(", "), shutdown::GRACE);
            return (panicked, false);
        }
        std::thread::sleep(Duration::from_millis(50));
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
fn target_cluster_id(p: &producer::TargetProducer) -> Option<String> {
    let id = cluster_id(p.client());
    producer::serve_ready_events(p);
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
}
