//! The hooks the pipeline offers to what rides on the target's
//! acknowledgements: a flow's side effects (MM2's offset-syncs, in the
//! engine's mm2 layer above) learn which target offset each source record
//! got, without the pipeline knowing who listens.
//!
//! The producer workers call a partition's [`AckHook`] once per run of its
//! records settled together, not once per record, and before those records'
//! offsets settle in the stream's tracker: a commit never runs ahead of the
//! syncs it needs. The streams ask the flow's [`FlowAckHooks`] for a
//! partition's hook when they route it, and tell it when a topic is
//! deleted at the source.

use std::fmt::Debug;
use std::sync::Arc;

/// What one source partition's acknowledgements feed.
pub trait AckHook: Send + Sync + Debug {
    /// Records of this partition the target acknowledged, in report order:
    /// `(source offset, target offset)`. Called by the partition's producer
    /// worker before their offsets settle, so anything a commit of them
    /// relies on is there before the commit can run.
    fn acknowledged(&self, acks: &mut dyn Iterator<Item = (i64, i64)>);
}

/// A flow's acknowledgement hooks, one per source partition.
pub trait FlowAckHooks: Send + Sync {
    /// The hook of one source partition, the same for its whole life in
    /// this process (so what it keeps survives reassignments). Takes the
    /// flow's `Arc`, as each partition's hook holds its flow.
    fn partition_hook(self: Arc<Self>, topic: &Arc<str>, partition: i32) -> Arc<dyn AckHook>;

    /// `topic` was deleted at the source: forget what its partitions kept
    /// (a hook still held by a record in flight must learn nothing more).
    fn forget_topic(&self, topic: &str);

    /// How many partitions the hooks keep something for, for the log.
    fn tracked(&self) -> usize;
}
