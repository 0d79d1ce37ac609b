//! Target topics created like the source, and kept with as many partitions.
//!
//! MM1 left topic creation to the target broker's auto-create, so mirrored
//! topics got the broker's default partition count and none of the source's
//! settings. Here, the first time a consumer stream's topic refresh sees a
//! matching source topic, and before it subscribes to it (so before any of
//! its records reach a producer, and before the producer could make the
//! broker auto-create it), [`TopicSync::reconcile`] creates the topic on the
//! target when it is missing: the source's partition count, a replication
//! factor of min(source's, target's broker count), and the source's topic
//! overrides (configs whose source is DYNAMIC_TOPIC_CONFIG, such as
//! cleanup.policy, retention.ms, max.message.bytes).
//!
//! An existing target topic is never altered, except that partitions are
//! added when the source topic gains partitions while we run
//! (`--sync.partitions`). Mismatches that matter (fewer target partitions, a
//! smaller max.message.bytes) are logged as warnings naming topic and values.
//! Every admin failure is a warning: the record path then falls back to what
//! MM1 did (the broker decides), so this never stops the mirror.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use log::{info, warn};
use rdkafka::admin::{AdminClient, AdminOptions, AlterConfig, ConfigSource, NewPartitions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::ClientConfig;

use crate::kafka::acls::{self, AclBinding, AclError, Operation, Pattern, Permission};
use crate::plan::handler::Handler;
use crate::plan::RemoteTopics;

const TIMEOUT: Duration = Duration::from_secs(15);

/// Topic configs never copied: they name broker ids of the source cluster.
const NOT_COPIED: &[&str] = &["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"];

type Admin = AdminClient<DefaultClientContext>;

/// An admin client for the cluster a properties file points at: only the
/// connection and security settings are taken, so consumer- or
/// producer-only keys do not draw librdkafka warnings.
pub fn admin_client(settings: &ClientConfig) -> Result<Admin, rdkafka::error::KafkaError> {
    admin_config(settings).create()
}

pub(crate) fn admin_config(settings: &ClientConfig) -> ClientConfig {
    let mut c = ClientConfig::new();
    // config_map() masks passwords; the keys come from it, the values from get().
    for (k, _) in settings.config_map() {
        let Some(v) = settings.get(k) else { continue };
        // 0.8 producer files name the brokers with the alias.
        if k == "metadata.broker.list" {
            c.set("bootstrap.servers", v);
            continue;
        }
        let wanted = k == "bootstrap.servers"
            || k.starts_with("security.")
            || k.starts_with("ssl.")
            || k.starts_with("sasl.")
            || k.starts_with("socket.")
            || k == "broker.address.family"
            || k == "client.dns.lookup"
            || k == "enable.ssl.certificate.verification";
        if wanted {
            c.set(k, v);
        }
    }
    // Asking for one topic's metadata must never make the broker create it.
    c.set("allow.auto.create.topics", "false");
    c
}

/// Waits for an admin future on this thread; the admin client's own thread
/// drives it.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::pin::pin;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// Errors that go away by themselves (a busy or moving controller).
fn is_transient(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::NotController
            | RDKafkaErrorCode::BrokerNotAvailable
            | RDKafkaErrorCode::NetworkException
            | RDKafkaErrorCode::LeaderNotAvailable
    )
}

/// A topic as one cluster has it.
#[derive(Debug, Clone, PartialEq)]
struct TopicShape {
    partitions: usize,
    replication: usize,
}

/// Every topic of a cluster, as one metadata request lists them.
struct View {
    shapes: HashMap<String, TopicShape>,
    brokers: usize,
}

impl View {
    /// All topics: naming one in a metadata request can auto-create it on
    /// brokers that allow it, with the very defaults we want to avoid.
    fn fetch(admin: &Admin, what: &str) -> Result<View, String> {
        let md = admin.inner().fetch_metadata(None, TIMEOUT).map_err(|e| format!("cannot list the {what}'s topics: {e}"))?;
        let shapes = md
            .topics()
            .iter()
            .filter(|t| t.error().is_none() && !t.partitions().is_empty())
            .map(|t| (t.name().to_string(), TopicShape { partitions: t.partitions().len(), replication: t.partitions()[0].replicas().len() }))
            .collect();
        Ok(View { shapes, brokers: md.brokers().len() })
    }
}

/// One reconciliation pass: each cluster is listed once, when first
/// needed, not once per topic (which made a start over thousands of new
/// topics quadratic); a cluster that does not answer is asked once per pass.
#[derive(Default)]
struct Pass {
    target: std::cell::OnceCell<Result<View, String>>,
    source: std::cell::OnceCell<Result<View, String>>,
}

impl Pass {
    fn target(&self, admin: &Admin) -> Result<&View, String> {
        self.target.get_or_init(|| View::fetch(admin, "target")).as_ref().map_err(|e| e.clone())
    }

    fn source(&self, admin: &Admin) -> Result<&View, String> {
        self.source.get_or_init(|| View::fetch(admin, "source")).as_ref().map_err(|e| e.clone())
    }
}

/// What a missing target topic is created with.
struct Creation {
    /// The source topic's partitions and replication factor.
    shape: TopicShape,
    /// The replication factor the target topic gets: the source's, at most
    /// the target's broker count.
    rf: usize,
    /// The source topic's own configs, as copied.
    configs: Vec<(String, String)>,
}

/// Creates target topics like the source and adds partitions as the source
/// gains them; shared by every stream of one source cluster.
pub struct TopicSync {
    source: Admin,
    target: Admin,
    handler: Arc<Handler>,
    create: bool,
    sync_partitions: bool,
    /// MirrorMaker 2's way of creating them, in MM2 mode.
    remote: Option<Arc<RemoteTopics>>,
    /// Source partition count last seen, per source topic.
    seen: Mutex<HashMap<String, usize>>,
    /// The source has no topic ACLs (or no authorizer): said once, then quiet.
    source_has_no_acls: AtomicBool,
}

impl TopicSync {
    pub fn new(source: Admin, target: Admin, handler: Arc<Handler>, create: bool, sync_partitions: bool, remote: Option<Arc<RemoteTopics>>) -> TopicSync {
        TopicSync { source, target, handler, create, sync_partitions, remote, seen: Mutex::new(HashMap::new()), source_has_no_acls: AtomicBool::new(false) }
    }

    /// Called with the matching source topics and their partition counts on
    /// every topic refresh, before subscribing. Cheap when nothing changed.
    /// Returns the new topics not to subscribe to yet: the target could not
    /// be asked whether they exist, and subscribing now would let the
    /// producer's first record make the broker auto-create them.
    pub fn reconcile(&self, topics: &[(String, usize)]) -> Vec<String> {
        // One stream at a time: the others find the work done.
        let mut seen = self.seen.lock().unwrap();
        let mut deferred = Vec::new();
        let pass = Pass::default();
        for (topic, partitions) in topics {
            match seen.get(topic).copied() {
                None => {
                    if self.first_look(&pass, topic, *partitions) {
                        seen.insert(topic.clone(), *partitions);
                    } else {
                        deferred.push(topic.clone());
                    }
                }
                Some(before) if *partitions > before => {
                    if !self.sync_partitions || self.grow(&pass, topic, *partitions) {
                        seen.insert(topic.clone(), *partitions);
                    }
                }
                Some(_) => {}
            }
        }
        deferred
    }

    /// The target topic's shape, `None` when it does not exist; `Err` when
    /// the target cannot be asked. From the pass's one listing of the target.
    fn target_shape(&self, pass: &Pass, topic: &str) -> Result<Option<TopicShape>, String> {
        pass.target(&self.target).map(|v| v.shapes.get(topic).cloned())
    }

    fn target_brokers(&self, pass: &Pass) -> Result<usize, String> {
        pass.target(&self.target).map(|v| v.brokers)
    }

    fn source_shape(&self, pass: &Pass, topic: &str) -> Result<TopicShape, String> {
        let view = pass.source(&self.source)?;
        view.shapes.get(topic).cloned().ok_or_else(|| format!("source topic {topic} has no metadata"))
    }

    /// Every config entry of `topic` on `admin`: name -> (value, set on the topic itself).
    fn configs(admin: &Admin, topic: &str) -> Result<BTreeMap<String, (String, bool)>, String> {
        let res = block_on(admin.describe_configs(&[ResourceSpecifier::Topic(topic)], &AdminOptions::new().request_timeout(Some(TIMEOUT))))
            .map_err(|e| format!("describe configs of {topic}: {e}"))?;
        let resource = res.into_iter().next().ok_or_else(|| format!("describe configs of {topic}: empty answer"))?;
        let resource = resource.map_err(|e| format!("describe configs of {topic}: {e}"))?;
        Ok(resource
            .entries
            .into_iter()
            .filter(|e| !e.is_sensitive)
            .filter_map(|e| Some((e.name, (e.value?, e.source == ConfigSource::DynamicTopic))))
            .collect())
    }

    /// Returns whether the topic is settled (also when it was only warned
    /// about and left to the broker); false: the target could not be asked,
    /// look again at the next refresh.
    fn first_look(&self, pass: &Pass, topic: &str, source_partitions: usize) -> bool {
        let target_topic = self.handler.target_topic(topic).into_owned();
        let existing = match self.target_shape(pass, &target_topic) {
            Ok(s) => s,
            Err(e) => {
                warn!("topic {topic}: {e}; not mirrored until the target answers (looked at again every topic refresh)");
                return false;
            }
        };
        match existing {
            Some(shape) => {
                self.report_mismatch(topic, &target_topic, source_partitions, &shape);
                true
            }
            None if !self.create => true,
            None => self.create_like_source(pass, topic, &target_topic),
        }
    }

    /// The source topic's own configs worth copying, `min.insync.replicas`
    /// capped at the replication factor the target topic gets.
    fn configs_to_copy(&self, topic: &str, target_topic: &str, rf: usize) -> Result<Vec<(String, String)>, String> {
        let mut copied = self.source_configs(topic)?;
        // acks=all with min.insync.replicas above the replication factor
        // could never succeed: every record would be retried forever.
        for (k, v) in copied.iter_mut() {
            if k == "min.insync.replicas" && v.parse::<usize>().is_ok_and(|m| m > rf) {
                warn!("topic {target_topic}: min.insync.replicas {v} on the source is more than the target's replication factor {rf}; created with {rf}");
                *v = rf.to_string();
            }
        }
        Ok(copied)
    }

    /// The source topic's own configs, but those never copied. MM2 mode
    /// leaves out what config.properties.exclude names (MM2's own list
    /// covers the broker-id configs and min.insync.replicas).
    fn source_configs(&self, topic: &str) -> Result<Vec<(String, String)>, String> {
        let excluded = |k: &str| match &self.remote {
            Some(r) => r.config_exclude.matches(k),
            None => NOT_COPIED.contains(&k),
        };
        Ok(Self::configs(&self.source, topic)?.into_iter().filter(|(k, (_, own))| *own && !excluded(k)).map(|(k, (v, _))| (k, v)).collect())
    }

    /// MirrorMaker 2's `sync.topic.configs`: every mirrored topic's own
    /// source configs set on its target topic where they differ. Compared
    /// before anything is written, so a quiet run writes nothing; the
    /// target's own overrides of other keys are sent along unchanged (the
    /// admin call replaces a topic's whole set), so none is wiped.
    pub fn sync_configs(&self) {
        let topics: Vec<String> = self.seen.lock().unwrap().keys().cloned().collect();
        for topic in topics {
            let target_topic = self.handler.target_topic(&topic).into_owned();
            let (wanted, target) = match (self.source_configs(&topic), Self::configs(&self.target, &target_topic)) {
                (Ok(w), Ok(t)) => (w, t),
                (Err(e), _) | (_, Err(e)) => {
                    warn!("topic {target_topic}: configs not synced this time: {e}");
                    continue;
                }
            };
            let changed: Vec<&(String, String)> = wanted.iter().filter(|(k, v)| target.get(k).map(|(tv, _)| tv) != Some(v)).collect();
            if changed.is_empty() {
                continue;
            }
            let mut all: BTreeMap<&str, &str> = target.iter().filter(|(_, (_, own))| *own).map(|(k, (v, _))| (k.as_str(), v.as_str())).collect();
            all.extend(wanted.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let alter = all.iter().fold(AlterConfig::new(ResourceSpecifier::Topic(&target_topic)), |a, (k, v)| a.set(k, v));
            let shown = changed.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
            let opts = AdminOptions::new().request_timeout(Some(TIMEOUT));
            match block_on(self.target.alter_configs(&[alter], &opts)).map(|mut r| r.pop()) {
                Ok(Some(Ok(_))) => info!("topic {target_topic}: configs synced from source topic {topic}: {shown}"),
                Ok(Some(Err((_, code)))) => warn!("topic {target_topic}: cannot sync configs ({shown}): {code}"),
                Ok(None) => warn!("topic {target_topic}: cannot sync configs ({shown}): empty answer"),
                Err(e) => warn!("topic {target_topic}: cannot sync configs ({shown}): {e}"),
            }
        }
    }

    /// MirrorMaker 2's `sync.topic.acls`: the source's literal ACLs on the
    /// topics this flow mirrors, created on their remote topics as
    /// [`remote_acl`] maps them. Nothing is ever deleted on the target;
    /// bindings it has already are not sent again. A source without an
    /// authorizer (or without topic ACLs) is said once per run, as Java
    /// says the former (KAFKA-14781).
    pub fn sync_acls(&self) {
        // librdkafka (2.12) drops DescribeAcls' top-level error, so a source
        // without an authorizer answers as one without topic ACLs: both
        // are said once per run.
        let source = match acls::describe_topic_acls(self.source.inner()) {
            Ok(b) if !b.is_empty() => b,
            Ok(_) | Err(AclError::SecurityDisabled) => {
                if !self.source_has_no_acls.swap(true, Ordering::Relaxed) {
                    info!("topic ACL sync: the source cluster lists no topic ACLs (or has no authorizer); nothing to sync");
                }
                return;
            }
            Err(e) => {
                warn!("topic ACLs not synced this time: cannot list the source's: {e}");
                return;
            }
        };
        let wanted: Vec<AclBinding> = {
            let seen = self.seen.lock().unwrap();
            let mut w: Vec<AclBinding> =
                source.iter().filter(|b| seen.contains_key(&b.name)).filter_map(|b| remote_acl(b, &self.handler.target_topic(&b.name))).collect();
            w.sort();
            w.dedup();
            w
        };
        if wanted.is_empty() {
            return;
        }
        // What the target has already is left out, so a quiet run writes
        // nothing; a target that cannot be asked gets them all (creating an
        // existing binding is harmless).
        let missing: Vec<AclBinding> = match acls::describe_topic_acls(self.target.inner()) {
            Ok(have) => wanted.into_iter().filter(|b| !have.contains(b)).collect(),
            Err(_) => wanted,
        };
        if missing.is_empty() {
            return;
        }
        match acls::create_acls(self.target.inner(), &missing) {
            Ok(()) => {
                for b in &missing {
                    info!("topic ACL synced to the target: {b}");
                }
            }
            Err(e) => warn!("cannot sync topic ACLs to the target (tried again in the next sync): {e}"),
        }
    }

    /// Creates the missing target topic like the source: first what it
    /// should be, then the request, then what its answer means for the
    /// topic. Returns whether the topic is settled, as [`Self::first_look`].
    fn create_like_source(&self, pass: &Pass, topic: &str, target_topic: &str) -> bool {
        let creation = match self.creation(pass, topic, target_topic) {
            Ok(c) => c,
            Err(settled) => return settled,
        };
        let outcome = self.request_creation(target_topic, &creation);
        self.settle_creation(topic, target_topic, &creation, outcome)
    }

    /// The target topic to create: the source's partitions, the replication
    /// factor the target's brokers allow, the source's own configs (without
    /// them, with a warning, when they cannot be read). `Err(settled)` when
    /// there is nothing to create from: the target's brokers unknown (not
    /// settled: asked again at the next refresh), or the source topic's
    /// metadata missing (settled: left to the broker, as MM1 did).
    fn creation(&self, pass: &Pass, topic: &str, target_topic: &str) -> Result<Creation, bool> {
        let brokers = match self.target_brokers(pass) {
            Ok(b) => b,
            Err(e) => {
                warn!("topic {topic}: {e}; not mirrored until the target answers (looked at again every topic refresh)");
                return Err(false);
            }
        };
        let shape = match self.source_shape(pass, topic) {
            Ok(s) => s,
            Err(e) => {
                warn!("target topic {target_topic} not created like the source: {e}; the target broker decides, as with MM1");
                return Err(true);
            }
        };
        let rf = self.replication_factor(&shape, brokers, target_topic);
        let configs = self.configs_to_copy(topic, target_topic, rf).unwrap_or_else(|e| {
            warn!(
                "target topic {target_topic} is created without the source's topic configs: {e} (the principal may need DESCRIBE_CONFIGS on the source topic)"
            );
            Vec::new()
        });
        Ok(Creation { shape, rf, configs })
    }

    /// The source's factor in MM1 mode, `replication.factor` in MM2 mode;
    /// at most the target's broker count (Java MM2 fails the creation
    /// instead, and the broker's auto-create then makes the topic with its
    /// own partition count).
    fn replication_factor(&self, shape: &TopicShape, brokers: usize, target_topic: &str) -> usize {
        let wanted = self.remote.as_ref().map_or(shape.replication, |r| r.replication_factor.max(1) as usize);
        if self.remote.is_some() && wanted > brokers {
            warn!("target topic {target_topic}: replication.factor {wanted} is more than the target's {brokers} broker(s); created with {brokers}");
        }
        wanted.min(brokers).max(1)
    }

    /// Asks the target to create the topic. Ok(true): created; Ok(false):
    /// it exists already; Err((why, transient)): a transient failure is
    /// tried again at the next refresh, with the topic held back meanwhile.
    fn request_creation(&self, target_topic: &str, creation: &Creation) -> Result<bool, (String, bool)> {
        let mut new = NewTopic::new(target_topic, creation.shape.partitions as i32, TopicReplication::Fixed(creation.rf as i32));
        for (k, v) in &creation.configs {
            new = new.set(k, v);
        }
        let opts = AdminOptions::new().operation_timeout(Some(TIMEOUT)).request_timeout(Some(TIMEOUT));
        block_on(self.target.create_topics(&[new], &opts)).map_err(|e| (e.to_string(), true)).and_then(|mut r| match r.pop() {
            Some(Ok(_)) => Ok(true),
            Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Ok(false),
            Some(Err((_, code))) => Err((code.to_string(), is_transient(code))),
            None => Err(("empty answer".into(), true)),
        })
    }

    /// Logs the outcome of the creation request and returns whether the
    /// topic is settled: created, or made by someone else meanwhile (then
    /// checked like an existing one), or refused for good (left to the
    /// broker); not settled when the refusal may pass.
    fn settle_creation(&self, topic: &str, target_topic: &str, creation: &Creation, outcome: Result<bool, (String, bool)>) -> bool {
        let Creation { shape, rf, configs } = creation;
        let described = configs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
        match outcome {
            Ok(true) => {
                info!(
                    "created target topic {target_topic} like source topic {topic}: {} partitions, replication factor {rf} (source {}), configs [{described}]",
                    shape.partitions, shape.replication
                );
                true
            }
            Ok(false) => {
                // Another mirror instance (or the broker) was first: check what it made.
                info!("target topic {target_topic} was created meanwhile by someone else");
                match self.target_shape(&Pass::default(), target_topic) {
                    Ok(Some(t)) => self.report_mismatch(topic, target_topic, shape.partitions, &t),
                    _ => return false,
                }
                true
            }
            Err((e, true)) => {
                warn!("cannot create target topic {target_topic} yet: {e}; not mirrored until it is created (tried again every topic refresh)");
                false
            }
            Err((e, false)) => {
                warn!(
                    "cannot create target topic {target_topic} ({} partitions, replication factor {rf}, configs [{described}]): {e}; \
                     the target broker decides as with MM1 (auto-create with its defaults, if enabled)",
                    shape.partitions
                );
                true
            }
        }
    }

    /// Warnings for differences that change what the mirror can do.
    fn report_mismatch(&self, topic: &str, target_topic: &str, source_partitions: usize, target: &TopicShape) {
        if target.partitions < source_partitions {
            warn!(
                "target topic {target_topic} has {} partitions, source topic {topic} has {source_partitions}: keyed records are spread over fewer partitions \
                 (and partition-preserving cannot work); it is left as it is (add partitions on the target to match)",
                target.partitions
            );
        }
        let (Ok(src), Ok(dst)) = (Self::configs(&self.source, topic), Self::configs(&self.target, target_topic)) else { return };
        let num = |m: &BTreeMap<String, (String, bool)>| m.get("max.message.bytes").and_then(|(v, _)| v.parse::<u64>().ok());
        if let (Some(s), Some(t)) = (num(&src), num(&dst)) {
            if t < s {
                warn!(
                    "target topic {target_topic} has max.message.bytes {t}, smaller than source topic {topic}'s {s}: records larger than {t} bytes \
                     are rejected by the target; raise max.message.bytes on the target topic to at least {s}"
                );
            }
        }
    }

    /// The source topic now has `partitions`: add the missing ones on the target.
    fn grow(&self, pass: &Pass, topic: &str, partitions: usize) -> bool {
        let target_topic = self.handler.target_topic(topic).into_owned();
        let have = match self.target_shape(pass, &target_topic) {
            Ok(Some(s)) => s.partitions,
            Ok(None) => return true,
            Err(e) => {
                warn!("topic {target_topic}: {e}; partitions checked again at the next topic refresh");
                return false;
            }
        };
        if have >= partitions {
            return true;
        }
        let opts = AdminOptions::new().operation_timeout(Some(TIMEOUT)).request_timeout(Some(TIMEOUT));
        let res = block_on(self.target.create_partitions(&[NewPartitions::new(&target_topic, partitions)], &opts));
        match res.map_err(|e| e.to_string()).and_then(|mut r| r.pop().ok_or("empty answer".to_string())) {
            Ok(Ok(_)) => {
                info!("source topic {topic} grew to {partitions} partitions: target topic {target_topic} raised from {have} to {partitions}");
                true
            }
            Ok(Err((_, RDKafkaErrorCode::InvalidPartitions))) => {
                // Someone else raised it in the meantime.
                true
            }
            Ok(Err((_, code))) => {
                warn!("cannot add partitions to target topic {target_topic} ({have} -> {partitions}): {code}; tried again at the next topic refresh");
                false
            }
            Err(e) => {
                warn!("cannot add partitions to target topic {target_topic} ({have} -> {partitions}): {e}; tried again at the next topic refresh");
                false
            }
        }
    }
}

/// A source topic ACL as MirrorMaker 2 copies it to `remote` (the remote
/// topic's name), or None when it is not copied: only LITERAL ones, never
/// `ALLOW WRITE` (only the mirror writes remote topics); `ALLOW ALL`
/// becomes `ALLOW READ`; DENY entries, principal and host unchanged
/// (`MirrorSourceConnector.shouldReplicateAcl`, `targetAclBinding`).
pub fn remote_acl(b: &AclBinding, remote: &str) -> Option<AclBinding> {
    if b.pattern != Pattern::Literal || (b.permission == Permission::Allow && b.operation == Operation::Write) {
        return None;
    }
    let operation = if b.permission == Permission::Allow && b.operation == Operation::All { Operation::Read } else { b.operation };
    Some(AclBinding { name: remote.to_string(), pattern: Pattern::Literal, operation, ..b.clone() })
}

/// Creates one of MirrorMaker 2's internal topics as Java does
/// (`MirrorUtils.createCompactedTopic`): compacted, one partition. One that
/// exists, or that the cluster refuses, is left as it is (Java tolerates
/// the same errors).
pub fn create_compacted(config: &rdkafka::ClientConfig, topic: &str, rf: i16) {
    let Ok(admin) = admin_client(config) else { return };
    let brokers = admin.inner().fetch_metadata(None, TIMEOUT).map(|m| m.brokers().len()).unwrap_or(1).max(1);
    let rf = (rf.max(1) as usize).min(brokers) as i32;
    let new = NewTopic::new(topic, 1, TopicReplication::Fixed(rf)).set("cleanup.policy", "compact");
    let opts = AdminOptions::new().operation_timeout(Some(TIMEOUT)).request_timeout(Some(TIMEOUT));
    match block_on(admin.create_topics(&[new], &opts)).map(|mut r| r.pop()) {
        Ok(Some(Ok(_))) => info!("created {topic} (compacted, 1 partition, replication factor {rf})"),
        Ok(Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists)))) | Ok(None) => {}
        Ok(Some(Err((_, code)))) => warn!("cannot create {topic}: {code}; records go to it as the broker allows"),
        Err(e) => warn!("cannot create {topic}: {e}; records go to it as the broker allows"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_config_keeps_connection_settings_and_the_0_8_broker_list() {
        let mut p = ClientConfig::new();
        p.set("metadata.broker.list", "b:1").set("security.protocol", "ssl").set("linger.ms", "5").set("sasl.password", "pw");
        let c = admin_config(&p);
        assert_eq!(c.get("bootstrap.servers"), Some("b:1"));
        assert_eq!(c.get("sasl.password"), Some("pw"), "secrets must reach the admin client unmasked");
        assert_eq!(c.get("security.protocol"), Some("ssl"));
        assert_eq!(c.get("linger.ms"), None);
    }

    fn acl(name: &str, pattern: Pattern, principal: &str, permission: Permission, operation: Operation) -> AclBinding {
        AclBinding { name: name.into(), pattern, principal: principal.into(), host: "*".into(), operation, permission }
    }

    #[test]
    fn topic_acls_map_as_mm2_maps_them() {
        use Operation::*;
        use Permission::*;
        let lit = |p: &str, perm, op| acl("orders", Pattern::Literal, p, perm, op);
        let remote = |p: &str, perm, op| Some(acl("A.orders", Pattern::Literal, p, perm, op));
        assert_eq!(remote_acl(&lit("User:alice", Allow, Read), "A.orders"), remote("User:alice", Allow, Read));
        assert_eq!(remote_acl(&lit("User:bob", Allow, All), "A.orders"), remote("User:bob", Allow, Read), "ALLOW ALL is downgraded to READ");
        assert_eq!(remote_acl(&lit("User:carol", Allow, Write), "A.orders"), None, "only the mirror writes remote topics");
        assert_eq!(remote_acl(&lit("User:dave", Deny, Read), "A.orders"), remote("User:dave", Deny, Read));
        assert_eq!(remote_acl(&lit("User:erin", Deny, Write), "A.orders"), remote("User:erin", Deny, Write), "DENY entries are copied as they are");
        assert_eq!(remote_acl(&lit("User:fay", Deny, All), "A.orders"), remote("User:fay", Deny, All));
        assert_eq!(remote_acl(&lit("User:gus", Allow, Describe), "A.orders"), remote("User:gus", Allow, Describe));
        assert_eq!(remote_acl(&acl("ord", Pattern::Prefixed, "User:h", Allow, Read), "A.ord"), None, "prefixed bindings are not copied");
        let mut hosted = lit("User:ian", Allow, Read);
        hosted.host = "10.0.0.1".into();
        assert_eq!(remote_acl(&hosted, "A.orders").map(|b| b.host), Some("10.0.0.1".to_string()));
    }
}
