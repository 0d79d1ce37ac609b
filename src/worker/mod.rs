//! A Connect-compatible worker (issue #28 item 2): `mirror-maker
//! --connect.distributed worker.properties` (or
//! `scripts/connect-distributed.sh worker.properties`) serves Connect's REST
//! API and runs MirrorMaker 2's connectors.
//!
//! Above both front-ends and the engine, beside `main.rs`: the Connect
//! front-end (`front::connect`) turns each connector config into a plan,
//! and each RUNNING connector is one engine run
//! (`engine::run_until(plan, its own Shutdown, metrics)`) on a thread of
//! its own. A changed config stops that run and starts a new one; pause and
//! stop end it; resume starts it; delete ends it and writes a tombstone.
//!
//! Several workers with one `group.id` each run every connector: the
//! flow's consumer group splits the partitions and the engine's lease keeps
//! one-node duties on one node, so the distribution rides on Kafka's group
//! protocol, not on a Connect group of our own. Configs live in the
//! config topic (`store`), read from its start at boot and tailed, so a
//! restarted worker resumes every connector and a PUT on any worker reaches
//! all of them.

pub mod https;
pub mod offsets;
pub mod rest;
pub mod standalone;
pub mod store;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use log::{error, info, warn};
use rdkafka::producer::{BaseProducer, Producer};
use serde_json::{json, Value};

use crate::engine;
use crate::engine::mm2::connect_offsets::topic as offsets_topic;
use crate::front::connect::{self, WorkerConfig};
use crate::front::properties::ConfigError;
use crate::kafka::admin::create_compacted;
use crate::ops::health::{Health, Report};
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::{self, ExitStatus, Shutdown};
use rest::{Api, ApiError, View};
use store::{ConfigRecord, Store, TargetState};

/// How long a stopped connector's run may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// One engine run of a connector.
struct Run {
    shutdown: Arc<Shutdown>,
    handle: JoinHandle<()>,
    /// Why it ended by itself, once it has.
    ended: Arc<Mutex<Option<String>>>,
}

/// A connector as this worker knows it.
#[derive(Default)]
struct Connector {
    config: Vec<(String, String)>,
    target: Option<TargetState>,
    run: Option<Run>,
    /// Why the last start failed (a bad config, a start-up error).
    failed: Option<String>,
    /// The config the run was started with.
    running_config: Vec<(String, String)>,
    /// Runs taken out by `stop_run` and not yet ended: the offsets
    /// endpoints wait for them (a run hands back positions as it ends).
    ending: u32,
}

/// The worker: its file, its storage and its connectors.
pub struct Worker {
    cfg: WorkerConfig,
    /// The config and status topics; None in standalone mode, where configs
    /// live in memory as in Java's StandaloneHerder.
    store: Option<Store>,
    connectors: Mutex<BTreeMap<String, Connector>>,
    cluster_id: String,
    /// Held while a connector's offsets change, and by a run's start:
    /// a resume applied meanwhile takes over the changed positions.
    modifying: Mutex<()>,
    /// `GET /health`: the worker's own, as Connect's (its connectors'
    /// failures show in their status, not here).
    health: Health,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a worker did not start.
#[derive(Debug)]
pub enum WorkerError {
    Config(ConfigError),
    Start(String),
}

impl std::fmt::Display for WorkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkerError::Config(e) => write!(f, "{e}"),
            WorkerError::Start(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for WorkerError {}

/// Runs a worker on `path` until SIGINT/SIGTERM.
pub fn run(path: &std::path::Path, exit_now: fn(ExitStatus) -> !) -> Result<ExitStatus, WorkerError> {
    let cfg = connect::load_worker(path).map_err(WorkerError::Config)?;
    for n in &cfg.notices {
        info!("{n}");
    }
    for w in &cfg.warnings {
        warn!("{w}");
    }
    let stop = Shutdown::new(DRAIN_TIMEOUT);
    shutdown::install_signal_handler(stop.clone(), None, exit_now).map_err(|e| WorkerError::Start(format!("cannot install signal handlers: {e}")))?;
    let client = cfg.cluster.client_config();
    let s = &cfg.settings;
    create_compacted(&client, &s.config_storage_topic, s.config_storage_replication_factor);
    create_compacted(&client, &s.status_storage_topic, s.status_storage_replication_factor);
    // As Java's worker at its start: GET offsets then never finds the topic
    // a connector's first hand-back is making.
    let offsets = &s.offset_storage_topic;
    if let Err(e) = offsets_topic::ensure(&client, offsets, s.offset_storage_partitions, s.offset_storage_replication_factor, Duration::from_secs(60)) {
        warn!("{e}; a connector's positions are written there once it can be made");
    }
    let cluster_id = cluster_id(&client);
    let store = Store::new(&client, s.config_storage_topic.clone(), s.status_storage_topic.clone()).map_err(|e| WorkerError::Start(e.to_string()))?;
    let worker = Arc::new(Worker::new(cfg, Some(store), cluster_id, &stop));
    let tail_group = format!("{}.config-reader.{}", worker.cfg.settings.group_id, worker.cfg.worker_id);
    let (w, st) = (worker.clone(), stop.clone());
    let reader = store_of(&worker)
        .tail(&worker.cfg.cluster_reader.client_config(), &tail_group, Arc::new(move || st.stopping()), move |batch| w.apply(batch))
        .map_err(|e| WorkerError::Start(e.to_string()))?;
    serve_listeners(&worker)?;
    worker.health.running();
    info!("Connect worker {} of group {} started", worker.cfg.worker_id, worker.cfg.settings.group_id);
    while !stop.stopping() {
        std::thread::sleep(Duration::from_millis(200));
        worker.notice_ended_runs();
    }
    let _ = reader.join();
    let names: Vec<String> = lock(&worker.connectors).keys().cloned().collect();
    for name in names {
        worker.stop_run(&name);
    }
    Ok(ExitStatus::Ok)
}

fn store_of(worker: &Worker) -> &Store {
    worker.store.as_ref().expect("a distributed worker has its storage topics")
}

/// Binds every entry of `listeners`, as Connect does: http with
/// [`rest::serve`], https with [`https::serve_https`] and the TLS context
/// read at start.
fn serve_listeners(worker: &Arc<Worker>) -> Result<(), WorkerError> {
    for l in &worker.cfg.listeners {
        let bind = l.bind();
        let served = match (l.scheme, &worker.cfg.tls) {
            (connect::Scheme::Https, Some(tls)) => https::serve_https(&bind, tls.0.clone(), worker.clone()),
            (connect::Scheme::Https, None) => Err(std::io::Error::other("no TLS context was built for it")),
            (connect::Scheme::Http, _) => rest::serve(&bind, worker.clone()),
        };
        served.map_err(|e| WorkerError::Start(format!("cannot listen on {}:{} (listeners): {e}", bind.0, bind.1)))?;
    }
    Ok(())
}

fn cluster_id(client: &rdkafka::ClientConfig) -> String {
    let p: Result<BaseProducer, _> = client.create();
    p.ok().and_then(|p| p.client().fetch_cluster_id(Duration::from_secs(10))).unwrap_or_default()
}

impl Worker {
    /// A worker that has not started its connectors yet; its health
    /// follows `stop` (unhealthy from the stop signal on).
    fn new(cfg: WorkerConfig, store: Option<Store>, cluster_id: String, stop: &Arc<Shutdown>) -> Worker {
        let health = Health::default();
        health.attach(stop.clone());
        health.stage("reading its connectors' configs and starting them");
        Worker { cfg, store, connectors: Mutex::new(BTreeMap::new()), cluster_id, modifying: Mutex::new(()), health }
    }

    /// One record of the config topic, in order.
    /// Takes records of the config topic in log order, then makes each
    /// connector they name match its final state, once.
    fn apply(&self, records: Vec<ConfigRecord>) {
        let mut touched: Vec<String> = Vec::new();
        let mut deleted: Vec<String> = Vec::new();
        for record in records {
            match record {
                ConfigRecord::Connector { name, config: Some(config) } => {
                    lock(&self.connectors).entry(name.clone()).or_default().config = config;
                    deleted.retain(|n| *n != name);
                    touched.push(name);
                }
                ConfigRecord::Connector { name, config: None } => {
                    touched.retain(|n| *n != name);
                    deleted.push(name);
                }
                ConfigRecord::Target { name, state } => {
                    if let Some(c) = lock(&self.connectors).get_mut(&name) {
                        c.target = state;
                    }
                    touched.push(name);
                }
                ConfigRecord::Other => {}
            }
        }
        for name in deleted {
            self.stop_run(&name);
            lock(&self.connectors).remove(&name);
        }
        touched.sort();
        touched.dedup();
        for name in touched {
            self.reconcile(&name);
        }
    }

    /// Makes the connector's run match its config and target state.
    fn reconcile(&self, name: &str) {
        let (want_run, same) = {
            let map = lock(&self.connectors);
            let Some(c) = map.get(name) else { return };
            let want = c.target.unwrap_or(TargetState::Started) == TargetState::Started;
            (want, c.run.as_ref().is_some_and(|_| c.running_config == c.config))
        };
        if want_run && same {
            return;
        }
        self.stop_run(name);
        if want_run {
            let _offsets_written = lock(&self.modifying);
            self.start_run(name);
        }
        self.write_status(name);
    }

    /// Ends the connector's run, if any, and waits for it.
    fn stop_run(&self, name: &str) {
        let run = lock(&self.connectors).get_mut(name).and_then(|c| {
            let run = c.run.take();
            c.ending += u32::from(run.is_some());
            run
        });
        if let Some(run) = run {
            info!("connector {name}: stopping");
            run.shutdown.request_stop();
            let _ = run.handle.join();
            info!("connector {name}: stopped");
            if let Some(c) = lock(&self.connectors).get_mut(name) {
                c.ending -= 1;
            }
        }
    }

    fn start_run(&self, name: &str) {
        let mut map = lock(&self.connectors);
        let Some(c) = map.get_mut(name) else { return };
        c.failed = None;
        let plan = match connect::plan(name, &c.config, &self.cfg, DRAIN_TIMEOUT) {
            Ok(p) => p,
            Err(e) => {
                error!("connector {name}: {e}");
                c.failed = Some(e.to_string());
                return;
            }
        };
        for n in &plan.notices {
            info!("{n}");
        }
        for w in &plan.warnings {
            warn!("{w}");
        }
        let sd = Shutdown::new(DRAIN_TIMEOUT);
        let ended = Arc::new(Mutex::new(None));
        let (sd2, ended2, label) = (sd.clone(), ended.clone(), name.to_string());
        let spawned = std::thread::Builder::new().name(format!("connector-{name}")).spawn(move || {
            let why = match engine::run_until(plan.plan, sd2.clone(), Arc::new(Metrics::default())) {
                Err(e) => Some(e.to_string()),
                Ok(_) if sd2.stopping() && sd2.reason().is_none() => None,
                Ok(status) => Some(sd2.reason().unwrap_or_else(|| format!("the run ended: {status:?}"))),
            };
            if let Some(w) = &why {
                error!("connector {label} failed: {w}");
            }
            *lock(&ended2) = Some(why.unwrap_or_default());
        });
        match spawned {
            Ok(handle) => {
                info!("connector {name}: started");
                c.run = Some(Run { shutdown: sd, handle, ended });
                c.running_config = c.config.clone();
            }
            Err(e) => c.failed = Some(format!("cannot start a thread: {e}")),
        }
    }

    /// A run that ended by itself is FAILED with its reason.
    fn notice_ended_runs(&self) {
        let ended: Vec<String> = lock(&self.connectors)
            .iter()
            // stop_run takes a run out before it ends it: one still here that
            // finished ended by itself.
            .filter(|(_, c)| c.run.as_ref().is_some_and(|r| r.handle.is_finished()))
            .map(|(n, _)| n.clone())
            .collect();
        for name in ended {
            let mut map = lock(&self.connectors);
            let Some(c) = map.get_mut(&name) else { continue };
            if let Some(run) = c.run.take() {
                let why = lock(&run.ended).clone().filter(|w| !w.is_empty()).unwrap_or_else(|| "the run ended".into());
                c.failed = Some(why);
                drop(map);
                let _ = run.handle.join();
                self.write_status(&name);
            }
        }
    }

    fn state_of(c: &Connector) -> (&'static str, Option<String>) {
        if let Some(f) = &c.failed {
            return ("FAILED", Some(f.clone()));
        }
        match (c.target.unwrap_or(TargetState::Started), &c.run) {
            (TargetState::Paused, _) => ("PAUSED", None),
            (TargetState::Stopped, _) => ("STOPPED", None),
            (TargetState::Started, Some(_)) => ("RUNNING", None),
            (TargetState::Started, None) => ("UNASSIGNED", None),
        }
    }

    fn write_status(&self, name: &str) {
        let (state, trace) = match lock(&self.connectors).get(name) {
            Some(c) => Self::state_of(c),
            None => return,
        };
        let value = store::status_value(state, trace.as_deref(), &self.cfg.worker_id);
        let Some(store) = &self.store else { return };
        if let Err(e) = store.write(&store.status_topic, &format!("status-connector-{name}"), Some(&value)) {
            warn!("connector {name}: {e}");
        }
    }
}

impl Worker {
    /// A config record: to the config topic, whose tail applies it on every
    /// worker; in standalone mode applied here and now, in memory.
    fn write_config(&self, key: &str, value: Option<&[u8]>) -> Result<(), ApiError> {
        match &self.store {
            Some(store) => store.write_config(key, value).map_err(unavailable),
            None => {
                self.apply(vec![store::decode(key.as_bytes(), value)]);
                Ok(())
            }
        }
    }
}

fn unavailable(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(500, e.to_string())
}

impl Api for Worker {
    fn root(&self) -> Value {
        json!({ "version": rest::VERSION, "commit": env!("CARGO_PKG_VERSION"), "kafka_cluster_id": self.cluster_id })
    }

    fn names(&self) -> Vec<String> {
        lock(&self.connectors).keys().cloned().collect()
    }

    fn health(&self) -> Report {
        self.health.report()
    }

    fn view(&self, name: &str) -> Option<View> {
        let map = lock(&self.connectors);
        let c = map.get(name)?;
        let (state, trace) = Self::state_of(c);
        Some(View { name: name.to_string(), config: c.config.clone(), state: state.to_string(), trace, worker_id: self.cfg.worker_id.clone() })
    }

    fn put_config(&self, name: &str, config: Vec<(String, String)>) -> Result<bool, ApiError> {
        // Refused before it is stored: Java validates first too.
        connect::plan(name, &config, &self.cfg, DRAIN_TIMEOUT).map_err(|e| ApiError::new(400, format!("Connector configuration is invalid: {e}")))?;
        let is_new = !lock(&self.connectors).contains_key(name);
        self.write_config(&format!("connector-{name}"), Some(&store::connector_value(&config)))?;
        Ok(is_new)
    }

    fn set_target(&self, name: &str, state: TargetState) -> Result<(), ApiError> {
        if !lock(&self.connectors).contains_key(name) {
            return Err(ApiError::not_found(name));
        }
        self.write_config(&format!("target-state-{name}"), Some(&store::target_value(state)))
    }

    fn restart(&self, name: &str) -> Result<(), ApiError> {
        if !lock(&self.connectors).contains_key(name) {
            return Err(ApiError::not_found(name));
        }
        self.stop_run(name);
        self.reconcile(name);
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<(), ApiError> {
        if !lock(&self.connectors).contains_key(name) {
            return Err(ApiError::not_found(name));
        }
        self.write_config(&format!("connector-{name}"), None)?;
        self.write_config(&format!("target-state-{name}"), None)?;
        if let Some(store) = &self.store {
            if let Err(e) = store.write(&store.status_topic, &format!("status-connector-{name}"), None) {
                warn!("connector {name}: {e}");
            }
        }
        Ok(())
    }

    fn offsets(&self, name: &str) -> Result<Value, ApiError> {
        self.connector_offsets(name)
    }

    fn modify_offsets(&self, name: &str, entries: Option<Vec<rest::Entry>>) -> Result<Value, ApiError> {
        Worker::modify_offsets(self, name, entries)
    }

    fn validate(&self, config: &[(String, String)]) -> Vec<(String, String)> {
        let name = config.iter().find(|(k, _)| k == "name").map_or("validate", |(_, v)| v.as_str());
        match connect::plan(name, config, &self.cfg, DRAIN_TIMEOUT) {
            Ok(_) => Vec::new(),
            Err(e) => vec![(e.key.clone().unwrap_or_else(|| "connector.class".into()), e.to_string())],
        }
    }
}
