//! Who owns which source partitions in an exactly-once flow: a consumer
//! group on the target (the ownership group) that never fetches.
//!
//! Why on the target: a transaction commits on the target, and the only
//! fence a Kafka transaction offers against a member that lost its
//! partitions (KIP-447) is the generation of a group whose coordinator is
//! on the same cluster as the transaction. The source group's coordinator
//! is on another cluster. So each flow's tasks join a group on the target,
//! subscribed to the flow's remote topics; owning remote partition `p` of
//! `S.topic` means copying source partition `p` of `topic` (MirrorMaker 2
//! keeps partition numbers, and grows the remote topic with the source).
//! Every transaction sends the copied positions as that group's offsets,
//! with this member's id and generation: once the member's generation is
//! over (its partitions were given away while it was frozen past its
//! session), the coordinator refuses them and the transaction aborts.
//!
//! The group's offsets of remote partition `p` hold the next source offset
//! of source partition `p` (not an offset of the remote topic): read with
//! `require_stable` (librdkafka asks for it under `read_committed`), they
//! are not answered while a transaction that sends them is still open, so
//! a new owner resumes only after the old owner's last transaction is
//! settled, committed or aborted.
//!
//! The revoke callback ends the open transaction before the partitions
//! go (see `state`); assigned partitions are paused at once in the
//! callback: this consumer only holds membership.

use std::sync::{Arc, Mutex};

use log::{error, warn};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::{ClientContext, TopicPartitionList};

use super::refused::{Denied, Refused};
use super::state::{Shared, Stop};

/// A change of ownership, as the callbacks saw it (remote topic, partition).
#[derive(Debug)]
pub enum Change {
    Assigned(Vec<(String, i32)>),
    Revoked(Vec<(String, i32)>),
}

/// The ownership consumer's context: ends the open transaction at a
/// revocation, and records the changes for the task's loop, which acts on
/// them right after the poll that served them.
pub struct OwnerContext {
    shared: Arc<Shared>,
    changes: Mutex<Vec<Change>>,
}

impl OwnerContext {
    pub fn new(shared: Arc<Shared>) -> Self {
        OwnerContext { shared, changes: Mutex::default() }
    }

    pub fn take_changes(&self) -> Vec<Change> {
        std::mem::take(&mut *self.changes.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn record(&self, change: Change) {
        self.changes.lock().unwrap_or_else(|e| e.into_inner()).push(change);
    }

    /// Whether `e`, met by the ownership group's consumer, is the target
    /// refusing READ on the group (librdkafka would ask again forever);
    /// if so the task is told to stop with what to grant.
    pub fn refused(&self, e: &KafkaError) -> bool {
        if e.rdkafka_error_code() != Some(RDKafkaErrorCode::GroupAuthorizationFailed) {
            return false;
        }
        let access = &self.shared.access;
        self.shared.lock().fatal = Some(Stop::Refused(Refused::new(access, Denied::Group(access.group.clone()), e)));
        true
    }
}

impl ClientContext for OwnerContext {
    fn error(&self, error: KafkaError, reason: &str) {
        // The coordinator's refusal arrives here as soon as the consumer
        // is made (before it subscribes): librdkafka looks the group's
        // coordinator up at once.
        if !self.refused(&error) {
            error!("librdkafka: {error}: {reason}");
        }
    }
}

pub fn elements(tpl: &TopicPartitionList) -> Vec<(String, i32)> {
    tpl.elements().iter().map(|e| (e.topic().to_string(), e.partition())).collect()
}

impl ConsumerContext for OwnerContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Revoke(tpl) => {
                let revoked = elements(tpl);
                let mut state = self.shared.lock();
                // Before the partitions go: what is open commits as this
                // member (or is refused and aborted when the membership
                // is already lost).
                if let Some(stop) = self.shared.end_open(&mut state, consumer).stop() {
                    state.fatal = Some(stop);
                }
                state.owned.retain(|(_, p), o| !revoked.iter().any(|(t, rp)| **t == *o.remote && rp == p));
                drop(state);
                self.record(Change::Revoked(revoked));
            }
            Rebalance::Error(e) => warn!("[{}] the ownership group's rebalance failed: {e}", self.shared.name),
            Rebalance::Assign(_) => {}
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(tpl) = rebalance {
            // Membership only: nothing of the remote topics is read.
            if let Err(e) = consumer.pause(tpl) {
                warn!("[{}] could not pause the ownership group's partitions (they are read and dropped): {e}", self.shared.name);
            }
            self.record(Change::Assigned(elements(tpl)));
        }
    }
}

pub type OwnerConsumer = BaseConsumer<OwnerContext>;
