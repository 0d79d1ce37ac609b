//! A flow's side tasks: the duties beside the copy (MirrorMaker 2's config
//! and ACL sync, offset-syncs with checkpoints and the group sync, the
//! take-over and hand-back of Java's Connect positions, heartbeats).
//!
//! They are data first: [`of_flow`] and [`of_plan`] turn the plan into the
//! list of [`SideTask`]s it asks for, each with a name, and [`SideTasks`]
//! is the one place that starts them and, at the end, tells them the
//! producer workers are done and waits for them. Nothing else spawns a
//! side task, so a node of a cluster (issue #28) can be given a share of
//! the list without the stream loop or the start-up knowing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use log::warn;

use crate::engine::mm2;
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
    /// Writes offset-syncs from the target's acknowledgements and, when
    /// asked, checkpoints and the consumer-group sync built on them.
    Checkpoints(Arc<Checkpointing>),
    /// Takes Java MirrorMaker 2's positions over before the flow reads,
    /// and hands them back while running when asked.
    ConnectOffsets(Arc<ConnectOffsets>),
    /// One herder's heartbeats to its target.
    Heartbeats(Arc<Heartbeats>),
}

/// One side task of a plan.
#[derive(Debug, Clone)]
pub struct SideTask {
    /// How logs and thread names call it.
    pub name: String,
    pub duty: Duty,
}

/// The side tasks of one flow, in the order they start: the topic syncs,
/// then the offset-syncs (the streams feed them), then the take-over of
/// Java's positions (before the flow's consumers read its group).
pub fn of_flow(flow: &Flow) -> Vec<SideTask> {
    let mut tasks = Vec::new();
    let named = |what: &str, duty| SideTask { name: format!("{what} of {}", flow.name), duty };
    if let Some(remote) = &flow.remote_topics {
        if let Some(interval) = remote.sync_configs {
            tasks.push(named("config sync", Duty::ConfigSync(interval)));
        }
        if let Some(interval) = remote.sync_acls {
            tasks.push(named("ACL sync", Duty::AclSync(interval)));
        }
    }
    if let Some(spec) = &flow.checkpointing {
        tasks.push(named("offset-syncs and checkpoints", Duty::Checkpoints(spec.clone())));
    }
    if let Some(spec) = &flow.connect_offsets {
        tasks.push(named("Connect offsets", Duty::ConnectOffsets(spec.clone())));
    }
    tasks
}

/// Every side task of a plan: each flow's, then the heartbeats (one per
/// herder, not per flow).
pub fn of_plan(plan: &Plan) -> Vec<SideTask> {
    let mut tasks: Vec<SideTask> = plan.flows.iter().flat_map(of_flow).collect();
    tasks.extend(
        plan.heartbeats
            .iter()
            .map(|h| SideTask { name: format!("heartbeats {}->{}", h.source_alias, h.target_alias), duty: Duty::Heartbeats(Arc::new(h.clone())) }),
    );
    tasks
}

/// What a flow's streams need from its side tasks.
pub struct ForStreams {
    /// Each partition's offset-sync state, when the flow writes offset-syncs.
    pub syncs: Option<Arc<FlowSyncs>>,
}

/// The running side tasks of the whole process: started here, stopped here.
#[derive(Default)]
pub struct SideTasks {
    threads: Vec<JoinHandle<()>>,
    /// Set once the producer workers are done: the offset-sync and
    /// hand-back writers then write their last records and end.
    workers_done: Vec<Arc<AtomicBool>>,
}

impl SideTasks {
    /// Starts the side tasks of `flow` that run beside its streams; None
    /// when asked to stop while a cluster did not answer.
    pub fn start_flow(
        &mut self,
        flow: &Flow,
        topic_sync: Option<&Arc<TopicSync>>,
        commit_interval: Duration,
        metrics: &Arc<Metrics>,
        shutdown: &Arc<Shutdown>,
    ) -> Result<Option<ForStreams>, StartError> {
        let mut out = ForStreams { syncs: None };
        for task in of_flow(flow) {
            match task.duty {
                Duty::ConfigSync(interval) => {
                    if let Some(sync) = topic_sync {
                        let name = format!("mirrormaker-config-sync-{}", flow.name);
                        self.threads.push(spawn_topic_job(name, sync.clone(), interval, shutdown.clone(), TopicSync::sync_configs));
                    }
                }
                Duty::AclSync(interval) => {
                    if let Some(sync) = topic_sync {
                        let name = format!("mirrormaker-acl-sync-{}", flow.name);
                        self.threads.push(spawn_topic_job(name, sync.clone(), interval, shutdown.clone(), TopicSync::sync_acls));
                    }
                }
                Duty::Checkpoints(spec) => {
                    let started = mm2::checkpoints::start(flow, &spec, commit_interval, metrics, shutdown)
                        .map_err(|error| StartError::Checkpoints { flow: flow.name.clone(), error })?;
                    self.threads.extend(started.threads);
                    self.workers_done.push(started.workers_done);
                    out.syncs = Some(started.syncs);
                }
                Duty::ConnectOffsets(spec) => {
                    // Java MM2's positions go into the flow's group before its consumers read it.
                    match mm2::connect_offsets::start(flow, &spec, commit_interval, shutdown)
                        .map_err(|error| StartError::ConnectOffsets { flow: flow.name.clone(), error: Box::new(error) })?
                    {
                        Some(started) => {
                            self.threads.extend(started.thread);
                            self.workers_done.push(started.workers_done);
                        }
                        None => return Ok(None),
                    }
                }
                // Not a flow's: started with the plan's (`start_plan`).
                Duty::Heartbeats(_) => {}
            }
        }
        Ok(Some(out))
    }

    /// Starts the side tasks that belong to the plan rather than to one
    /// flow (the heartbeats). One that cannot start is logged; the copy
    /// goes on without it.
    pub fn start_plan(&mut self, plan: &Plan, shutdown: &Arc<Shutdown>) {
        for task in of_plan(plan) {
            if let Duty::Heartbeats(h) = &task.duty {
                match mm2::heartbeats::spawn(h, shutdown.clone()) {
                    Ok(thread) => self.threads.push(thread),
                    Err(e) => warn!("no heartbeats {}->{}: {e}", h.source_alias, h.target_alias),
                }
            }
        }
    }

    /// Takes over the tasks another start-up phase started (one target's).
    pub fn absorb(&mut self, other: SideTasks) {
        self.threads.extend(other.threads);
        self.workers_done.extend(other.workers_done);
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
