//! A flow's side tasks: the duties beside the copy (MirrorMaker 2's config
//! and ACL sync, offset-syncs with checkpoints and the group sync, the
//! take-over and hand-back of Java's Connect positions, heartbeats).
//!
//! They are data first: [`of_flow`] and [`of_plan`] turn the plan into the
//! list of [`SideTask`]s it asks for, each with a name, the lease it runs
//! under and whether it runs on every node of a mirror or on one
//! ([`Duty::one_node`]). [`SideTasks`] is the one place that starts them:
//! those of every node at once (the offset-sync writer, which writes the
//! syncs of the partitions this node copies; the take-over of Java's
//! positions, before this node's consumers read), those of one node
//! whenever this node holds their lease (`engine::lease`, issue #28). At
//! the end it tells them the producer workers are done and waits for them.
//! Nothing else spawns a side task.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use log::warn;
use rdkafka::ClientConfig;

use crate::engine::lease::{self, Lease, Term};
use crate::engine::mm2;
use crate::engine::mm2::checkpoints::CheckpointerSetup;
use crate::engine::mm2::connect_offsets::TakenOver;
use crate::engine::mm2::offset_syncs::FlowSyncs;
use crate::engine::mm2::topics::TopicSync;
use crate::engine::start_error::StartError;
use crate::ops::metrics::Metrics;
use crate::ops::shutdown::Shutdown;
use crate::plan::{Checkpointing, ConnectOffsets, Flow, Heartbeats, Plan};

/// What one side task does.
#[derive(Debug, Clone)]
pub enum Duty {
    /// Copies the flow's topic configs to the target every interval.
    ConfigSync(Duration),
    /// Copies the flow's topic ACLs to the target every interval.
    AclSync(Duration),
    /// Writes offset-syncs from the target's acknowledgements of the
    /// partitions this node copies.
    OffsetSyncs(Arc<Checkpointing>),
    /// Reads every node's offset-syncs and writes the checkpoints and,
    /// when asked, the consumer-group sync built on them.
    Checkpoints(Arc<Checkpointing>),
    /// Takes Java MirrorMaker 2's positions over before the flow reads.
    TakeOver(Arc<ConnectOffsets>),
    /// Hands the flow's positions back to Java's offsets topic while running.
    HandBack(Arc<ConnectOffsets>),
    /// One herder's heartbeats to its target.
    Heartbeats(Arc<Heartbeats>),
}

impl Duty {
    /// Whether it runs on one node of a mirror at a time (the one holding
    /// its lease) rather than on every node.
    pub fn one_node(&self) -> bool {
        !matches!(self, Duty::OffsetSyncs(_) | Duty::TakeOver(_))
    }

    /// Whether its last round also runs at a stop that finds no node holding
    /// its lease (`lease::Duties::unheld_stop`): the hand-back, whose last
    /// round writes what the stop made final, even when no node led yet.
    pub fn last_round_unheld(&self) -> bool {
        matches!(self, Duty::HandBack(_))
    }
}

/// One side task of a plan.
#[derive(Debug, Clone)]
pub struct SideTask {
    /// How logs and thread names call it.
    pub name: String,
    /// The lease its one-node duties run under: the flow's (or herder's)
    /// `source->target`.
    pub lease: String,
    pub duty: Duty,
}

/// The side tasks of one flow, in the order they start: the topic syncs,
/// then the offset-syncs (the streams feed them) and the checkpoints made
/// from them, then the take-over of Java's positions (before the flow's
/// consumers read its group) and their hand-back.
pub fn of_flow(flow: &Flow) -> Vec<SideTask> {
    let mut tasks = Vec::new();
    let named = |what: &str, duty| SideTask { name: format!("{what} of {}", flow.name), lease: flow.lease.clone(), duty };
    if let Some(remote) = &flow.remote_topics {
        if let Some(interval) = remote.sync_configs {
            tasks.push(named("config sync", Duty::ConfigSync(interval)));
        }
        if let Some(interval) = remote.sync_acls {
            tasks.push(named("ACL sync", Duty::AclSync(interval)));
        }
    }
    if let Some(spec) = &flow.checkpointing {
        tasks.push(named("offset-syncs", Duty::OffsetSyncs(spec.clone())));
        if spec.checkpoints.is_some() {
            tasks.push(named("checkpoints", Duty::Checkpoints(spec.clone())));
        }
    }
    if let Some(spec) = &flow.connect_offsets {
        tasks.push(named("take-over of Java's positions", Duty::TakeOver(spec.clone())));
        if spec.hand_back {
            tasks.push(named("hand-back of positions to Java", Duty::HandBack(spec.clone())));
        }
    }
    tasks
}

/// Every side task of a plan: each flow's, then the heartbeats (one per
/// herder, not per flow).
pub fn of_plan(plan: &Plan) -> Vec<SideTask> {
    let mut tasks: Vec<SideTask> = plan.flows.iter().flat_map(of_flow).collect();
    tasks.extend(plan.heartbeats.iter().map(|h| SideTask {
        name: format!("heartbeats {}->{}", h.source_alias, h.target_alias),
        lease: h.lease.clone(),
        duty: Duty::Heartbeats(Arc::new(h.clone())),
    }));
    tasks
}

/// What a flow's streams need from its side tasks.
pub struct ForStreams {
    /// Each partition's offset-sync state, when the flow writes offset-syncs.
    pub syncs: Option<Arc<FlowSyncs>>,
}

/// Starts one duty of a term.
type DutyStart = Box<dyn Fn(&Term) -> std::io::Result<JoinHandle<()>> + Send + Sync>;

/// One one-node duty, set aside until its lease starts.
struct OneNode {
    name: String,
    start: DutyStart,
    /// [`Duty::last_round_unheld`].
    unheld_stop: bool,
}

/// Starts every one of `duties` that `pick` picks in a term; one that
/// cannot is named.
fn starter(duties: Arc<Vec<OneNode>>, pick: fn(&OneNode) -> bool) -> lease::Starter {
    Box::new(move |term: &Term| {
        let mut threads = Vec::new();
        for d in duties.iter().filter(|d| pick(d)) {
            match (d.start)(term) {
                Ok(thread) => threads.push(thread),
                Err(e) => warn!("no {}: cannot start its thread: {e}", d.name),
            }
        }
        threads
    })
}

/// The one-node duties of one lease, waiting for it.
struct Leased {
    /// The target cluster's client settings: the lease's group lives there.
    config: ClientConfig,
    duties: Vec<OneNode>,
}

/// The running side tasks of the whole process: started here, stopped here.
#[derive(Default)]
pub struct SideTasks {
    threads: Vec<JoinHandle<()>>,
    /// Set once the producer workers are done: the offset-sync and
    /// hand-back writers then write their last records and end.
    workers_done: Vec<Arc<AtomicBool>>,
    /// One-node duties by lease, until [`Self::start_plan`] starts the leases.
    leased: BTreeMap<String, Leased>,
}

impl SideTasks {
    /// Sets `task`'s duty aside under its lease, started by `start`.
    fn set_aside(&mut self, task: SideTask, config: impl FnOnce() -> ClientConfig, start: DutyStart) {
        let leased = self.leased.entry(task.lease).or_insert_with(|| Leased { config: config(), duties: Vec::new() });
        leased.duties.push(OneNode { name: task.name, start, unheld_stop: task.duty.last_round_unheld() });
    }

    /// Starts the side tasks of `flow` that run on every node beside its
    /// streams and sets aside those of one node; None when asked to stop
    /// while a cluster did not answer.
    pub fn start_flow(
        &mut self,
        flow: &Flow,
        topic_sync: Option<&Arc<TopicSync>>,
        commit_interval: Duration,
        metrics: &Arc<Metrics>,
        shutdown: &Arc<Shutdown>,
    ) -> Result<Option<ForStreams>, StartError> {
        let mut out = ForStreams { syncs: None };
        let mut hand_back = None;
        let target = || flow.target.settings.client_config();
        for task in of_flow(flow) {
            match task.duty.clone() {
                Duty::ConfigSync(interval) | Duty::AclSync(interval) => {
                    let Some(sync) = topic_sync.cloned() else { continue };
                    let (thread, job): (String, fn(&TopicSync)) = match &task.duty {
                        Duty::ConfigSync(_) => (format!("mirrormaker-config-sync-{}", flow.name), TopicSync::sync_configs),
                        _ => (format!("mirrormaker-acl-sync-{}", flow.name), TopicSync::sync_acls),
                    };
                    let start: DutyStart = Box::new(move |term: &Term| Ok(spawn_topic_job(thread.clone(), sync.clone(), interval, term.shutdown.clone(), job)));
                    self.set_aside(task, target, start);
                }
                Duty::OffsetSyncs(spec) => {
                    let started = mm2::checkpoints::start_writer(&spec, commit_interval, shutdown)
                        .map_err(|error| StartError::Checkpoints { flow: flow.name.clone(), error })?;
                    self.threads.push(started.thread);
                    self.workers_done.push(started.workers_done);
                    out.syncs = Some(started.syncs);
                }
                Duty::Checkpoints(spec) => {
                    let Some(syncs) = &out.syncs else { continue };
                    let Some(setup) = CheckpointerSetup::new(flow, &spec, syncs, metrics) else { continue };
                    let start: DutyStart = Box::new(move |term: &Term| setup.spawn(term.shutdown.clone()));
                    self.set_aside(task, target, start);
                }
                Duty::TakeOver(spec) => {
                    // Java MM2's positions go into the flow's group before its consumers read it.
                    match mm2::connect_offsets::take_over_at_start(flow, &spec, commit_interval, shutdown)
                        .map_err(|error| StartError::ConnectOffsets { flow: flow.name.clone(), error: Box::new(error) })?
                    {
                        TakenOver::Stopped => return Ok(None),
                        TakenOver::Done(setup) => hand_back = setup,
                    }
                }
                Duty::HandBack(_) => {
                    let Some(setup) = hand_back.take() else { continue };
                    let start: DutyStart = Box::new(move |term: &Term| setup.spawn(term.workers_done.clone(), term.shutdown.clone()));
                    self.set_aside(task, target, start);
                }
                // Not a flow's: set aside with the plan's (`start_plan`).
                Duty::Heartbeats(_) => {}
            }
        }
        Ok(Some(out))
    }

    /// Sets aside the side tasks that belong to the plan rather than to
    /// one flow (the heartbeats), then starts every lease: from then on the
    /// one-node duties run whenever this node holds theirs. A lease that
    /// cannot start is logged; the copy goes on without its duties.
    pub fn start_plan(&mut self, plan: &Plan, shutdown: &Arc<Shutdown>) {
        for task in of_plan(plan) {
            if let Duty::Heartbeats(h) = &task.duty {
                let config = h.target.settings.client_config();
                let beats = h.clone();
                let start: DutyStart = Box::new(move |term: &Term| mm2::heartbeats::spawn(&beats, term.shutdown.clone()));
                self.set_aside(task, || config, start);
            }
        }
        let done = Arc::new(AtomicBool::new(false));
        for (name, leased) in std::mem::take(&mut self.leased) {
            let all = Arc::new(leased.duties);
            let unheld_stop = all.iter().any(|d| d.unheld_stop).then(|| starter(all.clone(), |d| d.unheld_stop));
            let duties = lease::Duties { term: starter(all, |_| true), unheld_stop };
            let lease = Lease { name: name.clone(), config: leased.config };
            match lease::spawn(lease, duties, done.clone(), shutdown.clone()) {
                Ok(thread) => self.threads.push(thread),
                Err(e) => warn!("[{name}] no side tasks: cannot start the thread of their lease: {e}"),
            }
        }
        self.workers_done.push(done);
    }

    /// Takes over the tasks another start-up phase started or set aside (one target's).
    pub fn absorb(&mut self, other: SideTasks) {
        self.threads.extend(other.threads);
        self.workers_done.extend(other.workers_done);
        for (name, leased) in other.leased {
            match self.leased.get_mut(&name) {
                Some(mine) => mine.duties.extend(leased.duties),
                None => {
                    self.leased.insert(name, leased);
                }
            }
        }
    }

    /// Once every acknowledgement is in: tells the writers they can write
    /// their last records, then waits for every side task (bounded by the
    /// shutdown's grace deadline). Returns whether one panicked.
    pub fn finish(self, shutdown: &Shutdown) -> bool {
        for done in &self.workers_done {
            done.store(true, Ordering::SeqCst);
        }
        shutdown.join_bounded(self.threads, "checkpoint, offset-sync or heartbeat threads still finishing").0
    }
}

/// Runs `job` on a topic sync at the start, once the streams found the
/// topics, then every `interval`, until the stop.
fn spawn_topic_job(name: String, sync: Arc<TopicSync>, interval: Duration, shutdown: Arc<Shutdown>, job: fn(&TopicSync)) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            // The first run waits for the streams' first look at the topics.
            let mut next = Instant::now() + Duration::from_secs(5).min(interval);
            while !shutdown.stopping() {
                std::thread::sleep(Duration::from_millis(200));
                if Instant::now() >= next {
                    job(&sync);
                    next = Instant::now() + interval;
                }
            }
        })
        .unwrap_or_else(|e| panic!("spawn thread {name}: {e}"))
}
