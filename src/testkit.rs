//! Test-only helpers shared by the unit tests of several modules; compiled
//! only for `cargo test` (`#[cfg(test)]` in lib.rs), never into the binary.
//! The integration tests in tests/ have their own (tests/common, tests/mock).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::engine::pipeline::batch::{Batch, PartitionRoute, RecordMeta};
use crate::engine::pipeline::offsets::OffsetTracker;
use crate::ops::metrics::Metrics;

/// Records of topic `t`, registered with a tracker, one route per
/// partition: what a consumer stream would hand the batches (used by the
/// tests of `engine::pipeline::batch` and `engine::pipeline::handoff`).
pub struct TestSource {
    pub tracker: Arc<OffsetTracker>,
    pub metrics: Arc<Metrics>,
    routes: RefCell<HashMap<i32, Arc<PartitionRoute>>>,
}

impl Default for TestSource {
    fn default() -> TestSource {
        TestSource { tracker: OffsetTracker::new(), metrics: Default::default(), routes: Default::default() }
    }
}

impl TestSource {
    pub fn new() -> TestSource {
        TestSource::default()
    }

    /// Registers `offset` of partition `p`: the record's meta (its route is `route(p)`).
    pub fn record(&self, p: i32, offset: i64) -> RecordMeta {
        let ack = self.tracker.register(&(Arc::from("t"), p), offset);
        self.routes
            .borrow_mut()
            .entry(p)
            .or_insert_with(|| Arc::new(PartitionRoute { ack, target: Arc::from("t"), stamp: None, stats: self.metrics.topic(0, "t"), ack_hook: None }));
        RecordMeta { offset, partition: None, headers: None, stamp: false, timestamp: None }
    }

    pub fn route(&self, p: i32) -> Arc<PartitionRoute> {
        self.routes.borrow()[&p].clone()
    }

    /// Registers a record of partition `p` and pushes it into `b`.
    pub fn push(&self, b: &mut Batch, p: i32, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> usize {
        let meta = self.record(p, offset);
        b.push(&self.route(p), meta, key, value)
    }
}

/// An empty directory of its own under the temp dir, for `name` and this
/// process (what was left there by an earlier run is removed first).
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
