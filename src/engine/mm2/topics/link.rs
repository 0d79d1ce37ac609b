//! What every part of the topic sync works on: the flow's two clusters
//! ([`Link`]: admin clients, naming, MM2's creation settings), one listing
//! of a cluster's topics ([`View`]), and the request bounds ([`TIMEOUT`],
//! [`CHUNK`]). A leaf of `topics`: its `create`, `grow`, `configs` and
//! `acls` parts each add their work to [`Link`], and `TopicSync` (the
//! module's root) holds one beside its bookkeeping, so no part imports
//! another's caller.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use log::warn;

use super::error::TopicSyncError;
use crate::kafka::admin::Admin;
use crate::plan::handler::Handler;
use crate::plan::RemoteTopics;

/// How long an admin request of the topic sync may take.
pub(super) const TIMEOUT: Duration = Duration::from_secs(15);

/// Most topics in one CreateTopics, DescribeConfigs, CreatePartitions or
/// AlterConfigs request. Brokers take far more (the bound is the request's
/// size, socket.request.max.bytes, 100 MiB by default: 500 topics with their
/// configs are well under 1 MiB), but a chunk is also what settles at once,
/// and a request that times out holds back only its own topics.
pub const CHUNK: usize = 500;

/// One flow's two clusters as the topic sync talks to them, with the
/// naming of target topics and, in MM2 mode, MirrorMaker 2's way of
/// creating them.
pub(super) struct Link {
    pub(super) source: Admin,
    pub(super) target: Admin,
    /// The settings each admin client was made with (`plan::Flow::source_admin_origin`).
    pub(super) source_via: String,
    pub(super) target_via: String,
    pub(super) handler: Arc<Handler>,
    /// MirrorMaker 2's way of creating them, in MM2 mode.
    pub(super) remote: Option<Arc<RemoteTopics>>,
}

/// A topic as one cluster has it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TopicShape {
    pub(super) partitions: usize,
    pub(super) replication: usize,
}

/// Every topic of a cluster, as one metadata request lists them.
pub(super) struct View {
    pub(super) shapes: HashMap<String, TopicShape>,
    pub(super) brokers: usize,
}

impl View {
    /// All topics: naming one in a metadata request can auto-create it on
    /// brokers that allow it, with the very defaults we want to avoid.
    /// `via`: the settings `admin` was made with, named when it fails.
    pub(super) fn fetch(admin: &Admin, cluster: &'static str, via: &str) -> Result<View, TopicSyncError> {
        let md = admin.inner().fetch_metadata(None, TIMEOUT).map_err(|error| TopicSyncError::List { cluster, via: via.to_string(), error })?;
        let shapes = md
            .topics()
            .iter()
            .filter(|t| t.error().is_none() && !t.partitions().is_empty())
            .map(|t| (t.name().to_string(), TopicShape { partitions: t.partitions().len(), replication: t.partitions()[0].replicas().len() }))
            .collect();
        Ok(View { shapes, brokers: md.brokers().len() })
    }
}

/// Warns when a target topic has fewer partitions than its source topic.
pub(super) fn report_fewer_partitions(topic: &str, target_topic: &str, source_partitions: usize, target: &TopicShape) {
    if target.partitions < source_partitions {
        warn!(
            "target topic {target_topic} has {} partitions, source topic {topic} has {source_partitions}: keyed records are spread over fewer partitions \
             (and partition-preserving cannot work); it is left as it is (add partitions on the target to match)",
            target.partitions
        );
    }
}
