//! Which node of a mirror runs a flow's side tasks (issue #28).
//!
//! Any number of processes started on the same file form one mirror: the
//! flow's consumer group splits the partitions, and every duty that must
//! run once (heartbeats, checkpoints and the group sync, config and ACL
//! sync, the hand-back of Java's positions) runs on the node that holds
//! the flow's lease. The lease rides on Kafka's own group protocol, as
//! Connect's leader election does: every node joins the group
//! `mirror-maker.leader.<flow>` on the flow's target cluster, subscribed
//! to a one-partition compacted topic `mm2-leader.<source>.internal` that
//! holds no records; the member the group coordinator gives partition 0
//! to leads. No home-made consensus, no clock.
//!
//! The duties of a term start when partition 0 is assigned and are stopped
//! and joined inside the revocation callback: with the cooperative-sticky
//! assignor the coordinator hands partition 0 to another node only after
//! its holder has given it up in a first rebalance, so two live nodes never
//! run them at once; and sticky means a node joining or leaving does not
//! move the lease from the node that holds it (the eager range assignor
//! gave it to whichever member id sorted first, so every join ended the
//! term and often moved it). A node killed -9 stops heartbeating and
//! the coordinator gives the lease away after the session timeout (10 s,
//! Connect's worker default); one stopped cleanly leaves the group at once.
//! A node cut off from the target's coordinator loses its partitions
//! locally after the same timeout (librdkafka's "assignment lost"), about
//! when the coordinator gives them away; a process frozen longer than that
//! (SIGSTOP, a VM paused) may run one more round of its duties on waking
//! before librdkafka tells it. Checkpoints never go back across such a
//! change: each term reads the checkpoints topic back before writing and
//! writes only what moved forward.
//!
//! A node that stops without ever having held the lease (a flow stopped
//! seconds after its start, while a new lease group still forms: the
//! coordinator waits `group.initial.rebalance.delay.ms` before its first
//! assignment) asks the group whether a member holds partition 0; when
//! none does, it runs the last rounds of the duties that have one
//! ([`Duties::unheld_stop`]: the hand-back of positions), so what it copied
//! is still handed back. A group mid-rebalance shows no holder: a node
//! leaving exactly then may write the same positions as the next holder,
//! from the same committed offsets.
//!
//! While the target does not answer, the node keeps trying to make the
//! lease topic and join (its duties could not write there anyway). Where
//! the lease cannot be had although the target answers (the group or topic
//! refused by ACLs, the topic still missing after a minute), the node runs
//! the duties itself and says what to grant: one node then works as
//! before; several would race.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use log::{info, warn};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::admin::{admin_client, create_compacted_with};
use crate::kafka::groups;
use crate::ops::shutdown::{self, Shutdown};

/// Connect's worker `session.timeout.ms`: how long a killed leader holds
/// the lease before another node takes it.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the end of a term waits for its duties before going on
/// without them (one stuck on an unreachable cluster must not hold the
/// whole group's rebalance).
const TERM_END_PATIENCE: Duration = Duration::from_secs(30);

/// One term of leadership, as the duties started in it see it.
#[derive(Clone)]
pub struct Term {
    /// Stops when the term ends (the lease lost or the process stopping).
    pub shutdown: Arc<Shutdown>,
    /// Set when the duties may write their last records: at once when the
    /// lease is lost, once the producer workers are done at a stop.
    pub workers_done: Arc<AtomicBool>,
}

/// Starts the duties of one term; gives their threads.
pub type Starter = Box<dyn Fn(&Term) -> Vec<JoinHandle<()>> + Send + Sync>;

/// What a lease runs: the duties of each term, and the last rounds run at
/// a stop that finds no node holding the lease.
pub struct Duties {
    pub term: Starter,
    /// Started (with a term already ending, once the producer workers are
    /// done) when this node stops without having held the lease and the
    /// group shows no other holder: a flow stopped seconds after its
    /// start, before the lease group formed (the coordinator waits
    /// `group.initial.rebalance.delay.ms` before a new group's first
    /// assignment), still hands its positions back. Only duties whose last
    /// round is a write of what is final at the stop belong here; None
    /// when there are none (nothing is asked of the group then).
    pub unheld_stop: Option<Starter>,
}

/// The lease of one flow (or one herder's heartbeats).
pub struct Lease {
    /// The flow's name, `source->target`.
    pub name: String,
    /// The target cluster's client settings: the group lives there.
    pub config: ClientConfig,
}

impl Lease {
    pub fn group(&self) -> String {
        format!("mirror-maker.leader.{}", self.name)
    }

    /// `mm2-leader.<source>.internal`: MM2's own internal-topic form, so
    /// the default topic filters of both Java MM2 and ours never mirror it.
    pub fn topic(&self) -> String {
        let source = self.name.split("->").next().unwrap_or(&self.name);
        let source: String = source.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
        format!("mm2-leader.{source}.internal")
    }
}

/// The duties of the term being served, if any.
struct Held {
    term: Term,
    threads: Vec<JoinHandle<()>>,
}

/// The lease's state, shared by its thread and its consumer's context.
struct LeaseState {
    name: String,
    start: Starter,
    unheld_stop: Option<Starter>,
    drain_timeout: Duration,
    held: Mutex<Option<Held>>,
    /// The group or topic was refused: the duties run unleased.
    refused: Mutex<Option<KafkaError>>,
}

/// The lease consumer's context: starts and ends terms as the group
/// assigns and revokes partition 0.
struct LeaseContext(Arc<LeaseState>);

impl ClientContext for LeaseContext {}

impl ConsumerContext for LeaseContext {
    fn pre_rebalance(&self, _: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        // Before the member rejoins: the next leader is chosen only after
        // this term's duties have stopped.
        match rebalance {
            Rebalance::Revoke(list) if list.elements().iter().any(|e| e.partition() == 0) => self.0.end_term("the group moved it"),
            Rebalance::Error(_) => self.0.end_term("the group's rebalance failed"),
            _ => {}
        }
    }

    fn post_rebalance(&self, _: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            if list.elements().iter().any(|e| e.partition() == 0) {
                self.0.begin_term();
            }
        }
    }
}

impl LeaseState {
    fn begin_term(&self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.is_some() {
            return;
        }
        info!("[{}] this node now leads the flow's side tasks (heartbeats, checkpoints, group, config and ACL sync)", self.name);
        let term = Term { shutdown: Shutdown::new(self.drain_timeout), workers_done: Arc::new(AtomicBool::new(false)) };
        let threads = (self.start)(&term);
        *held = Some(Held { term, threads });
    }

    /// Ends the term on losing the lease: the duties stop and write their
    /// last records now, before another node begins.
    fn end_term(&self, why: &str) {
        let Some(held) = self.held.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
        held.term.shutdown.request_stop();
        held.term.workers_done.store(true, Ordering::SeqCst);
        join_within(held.threads, Instant::now() + TERM_END_PATIENCE, &self.name);
        info!("[{}] this node no longer leads the flow's side tasks ({why})", self.name);
    }

    /// Ends the term at the process's stop: the duties' last records wait
    /// for the producer workers, as they do unleased. False when no term
    /// was held.
    fn end_at_stop(&self, workers_done: &AtomicBool, shutdown: &Shutdown) -> bool {
        let Some(held) = self.held.lock().unwrap_or_else(|e| e.into_inner()).take() else { return false };
        held.term.shutdown.request_stop();
        wait_for_workers(workers_done, shutdown);
        held.term.workers_done.store(true, Ordering::SeqCst);
        join_within(held.threads, shutdown.grace_deadline(), &self.name);
        info!("[{}] this node no longer leads the flow's side tasks (stopping); another node of the mirror takes them over", self.name);
        true
    }

    /// At a stop without a term: the last rounds of `unheld_stop`, once
    /// the producer workers are done, unless `held_elsewhere`.
    fn last_rounds_unheld(&self, held_elsewhere: bool, workers_done: &AtomicBool, shutdown: &Shutdown) {
        if held_elsewhere {
            return info!("[{}] stopping; the node that leads the flow's side tasks writes their last records", self.name);
        }
        let Some(start) = &self.unheld_stop else { return };
        wait_for_workers(workers_done, shutdown);
        let term = Term { shutdown: Shutdown::new(self.drain_timeout), workers_done: Arc::new(AtomicBool::new(true)) };
        term.shutdown.request_stop();
        let threads = start(&term);
        if !threads.is_empty() {
            info!("[{}] stopping before any node led the flow's side tasks: this node writes their last records", self.name);
        }
        join_within(threads, shutdown.grace_deadline(), &self.name);
    }
}

/// Waits until every acknowledgement is in (or the drain deadline passed).
fn wait_for_workers(workers_done: &AtomicBool, shutdown: &Shutdown) {
    while !workers_done.load(Ordering::SeqCst) && !shutdown.deadline_passed() {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Joins `threads` until `until`; those left run on, named in a warning.
fn join_within(threads: Vec<JoinHandle<()>>, until: Instant, name: &str) {
    shutdown::join_until(threads, || Instant::now() >= until, |names| warn!("[{name}] side tasks still finishing ({names}); going on without them"));
}

/// Runs `start`'s duties whenever this node holds `lease`, until the stop.
/// `workers_done` is the process's: set once every acknowledgement is in.
pub fn spawn(lease: Lease, duties: Duties, workers_done: Arc<AtomicBool>, shutdown: Arc<Shutdown>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name(format!("mirrormaker-lease-{}", lease.name)).spawn(move || run(lease, duties, &workers_done, &shutdown))
}

fn run(lease: Lease, duties: Duties, workers_done: &AtomicBool, shutdown: &Shutdown) {
    let ctx = Arc::new(LeaseState {
        name: lease.name.clone(),
        start: duties.term,
        unheld_stop: duties.unheld_stop,
        drain_timeout: shutdown.drain_timeout(),
        held: Mutex::new(None),
        refused: Mutex::new(None),
    });
    let joined = match ensure_topic(&lease, shutdown) {
        Ok(true) => join(&lease, &ctx),
        // Stopped while the lease topic was being made: no node leads yet
        // unless the group says otherwise.
        Ok(false) => {
            if ctx.unheld_stop.is_some() {
                let elsewhere = groups::admin_consumer(&lease.config).ok().is_some_and(|c| held_elsewhere(&lease, c.client()));
                ctx.last_rounds_unheld(elsewhere, workers_done, shutdown);
            }
            return;
        }
        Err(why) => Err(why),
    };
    let consumer = match joined {
        Ok(consumer) => consumer,
        Err(why) => return unleased(&lease, ctx, &why, workers_done, shutdown),
    };
    while !shutdown.stopping() {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Err(e)) if refused(&e) => {
                *ctx.refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                break;
            }
            // The topic holds no records; a transient error is retried by librdkafka.
            _ => {}
        }
    }
    let refusal = ctx.refused.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(e) = refusal {
        drop(consumer);
        return unleased(&lease, ctx, &format!("the target refused it: {e}"), workers_done, shutdown);
    }
    if ctx.end_at_stop(workers_done, shutdown) || ctx.unheld_stop.is_none() {
        // Leaving the group now hands the lease to another node at once.
        return drop(consumer);
    }
    // Asked while still a member, so a stable group's holder is another node.
    let elsewhere = held_elsewhere(&lease, consumer.client());
    drop(consumer);
    ctx.last_rounds_unheld(elsewhere, workers_done, shutdown);
}

/// Whether the lease group shows a member holding partition 0. Asked of
/// a node holding no term; a group rebalancing or not answering shows none.
fn held_elsewhere<C: ClientContext>(lease: &Lease, client: &rdkafka::client::Client<C>) -> bool {
    match groups::members_assigned(client, &lease.group(), &lease.topic(), 0, Duration::from_secs(5)) {
        Ok(n) => n > 0,
        Err(e) => {
            info!("[{}] cannot tell whether another node leads the flow's side tasks ({e}); taken as none", lease.name);
            false
        }
    }
}

fn refused(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::GroupAuthorizationFailed | RDKafkaErrorCode::TopicAuthorizationFailed | RDKafkaErrorCode::ClusterAuthorizationFailed)
    )
}

/// How long the target may answer without showing the lease topic before
/// the node gives up on the lease (a topic policy refusing it, say).
const TOPIC_PATIENCE: Duration = Duration::from_secs(60);

/// Makes the lease topic if missing and waits until the target shows it;
/// while the target does not answer it keeps trying, since the duties
/// could not write to it either. Ok(false): asked to stop meanwhile. Err:
/// the target answers but will not have the topic.
fn ensure_topic(lease: &Lease, shutdown: &Shutdown) -> Result<bool, String> {
    let topic = lease.topic();
    let admin = admin_client(&lease.config).map_err(|e| format!("no admin client for the target: {e}"))?;
    let mut answered_since: Option<Instant> = None;
    loop {
        create_compacted_with(&admin, &topic, 3);
        if let Ok(m) = admin.inner().fetch_metadata(Some(&topic), Duration::from_secs(10)) {
            match m.topics().iter().find(|t| t.name() == topic).map(|t| (t.error(), t.partitions().len())) {
                Some((None, n)) if n > 0 => return Ok(true),
                Some((Some(RDKafkaRespErr::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED), _)) => {
                    return Err(format!("the target refuses this client topic {topic}"));
                }
                _ => {
                    let since = *answered_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > TOPIC_PATIENCE {
                        return Err(format!("topic {topic} is still missing on the target after {}s of trying to make it", TOPIC_PATIENCE.as_secs()));
                    }
                }
            }
        }
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if shutdown.stopping() {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Joins the lease's group (its topic made by [`ensure_topic`]).
fn join(lease: &Lease, ctx: &Arc<LeaseState>) -> Result<BaseConsumer<LeaseContext>, String> {
    let topic = lease.topic();
    let mut c = crate::kafka::admin::admin_config(&lease.config);
    c.set("group.id", lease.group())
        .set("session.timeout.ms", SESSION_TIMEOUT.as_millis().to_string())
        .set("heartbeat.interval.ms", "3000")
        // Cooperative: partition 0 is revoked from its holder before it is
        // assigned elsewhere (two terms never overlap); sticky: it stays
        // with its holder while other nodes come and go.
        .set("partition.assignment.strategy", "cooperative-sticky")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "latest")
        .set("enable.partition.eof", "false");
    let consumer: BaseConsumer<LeaseContext> = c.create_with_context(LeaseContext(ctx.clone())).map_err(|e| format!("its consumer cannot be made: {e}"))?;
    consumer.subscribe(&[&topic]).map_err(|e| format!("cannot subscribe to {topic}: {e}"))?;
    Ok(consumer)
}

/// Runs the duties without a lease until the stop, having said why.
fn unleased(lease: &Lease, ctx: Arc<LeaseState>, why: &str, workers_done: &AtomicBool, shutdown: &Shutdown) {
    warn!(
        "[{}] no lease for the flow's side tasks ({why}): this node runs them itself. With several nodes on this file they would race; \
         let the mirror's target principal create and read topic {} and use group {} on the target",
        lease.name,
        lease.topic(),
        lease.group()
    );
    ctx.begin_term();
    while !shutdown.stopping() {
        std::thread::sleep(Duration::from_millis(200));
    }
    ctx.end_at_stop(workers_done, shutdown);
}
