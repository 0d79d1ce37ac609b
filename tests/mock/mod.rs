//! What the tests on librdkafka's mock clusters share: the mirror's options
//! between two mock clusters, and the pipeline run in-process as `main`
//! runs it.

use std::sync::Arc;
use std::time::Duration;

use mirror_maker::engine;
use mirror_maker::front::mm1::cli::Options;
use mirror_maker::ops::metrics::Metrics;
use mirror_maker::ops::shutdown::{ExitStatus, Shutdown};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::DefaultProducerContext;

/// Options for a mirror of `topic` between two mock clusters in group
/// `group`, with the consumer file's extra lines.
pub fn mock_options(
    source: &MockCluster<'_, DefaultProducerContext>,
    target: &MockCluster<'_, DefaultProducerContext>,
    topic: &str,
    group: &str,
    consumer_extra: &str,
) -> Options {
    let dir = std::env::temp_dir().join(format!("mm-mock-{group}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cf, pf) = (dir.join("consumer.properties"), dir.join("producer.properties"));
    std::fs::write(&cf, format!("bootstrap.servers={}\ngroup.id={group}\n{consumer_extra}", source.bootstrap_servers())).unwrap();
    std::fs::write(&pf, format!("bootstrap.servers={}\n", target.bootstrap_servers())).unwrap();
    Options {
        offset_commit_interval_ms: Some(300),
        topic_refresh_interval_ms: 1000,
        ops: mirror_maker::front::mm1::cli::OpsOptions { drain_timeout_ms: 10_000, stats_interval_ms: 0, ..Default::default() },
        // librdkafka's mock brokers have no CreateTopics/DescribeConfigs: the
        // topics are made by the mock's auto-create, as with MM1.
        beyond: mirror_maker::front::mm1::cli::BeyondOptions { create_topics: false, sync_partitions: false, ..Default::default() },
        ..Options::new(cf, pf, topic)
    }
}

/// The pipeline on a thread of its own, as `main` runs it, with its stop
/// signal (draining for up to `drain`) and its counters.
pub fn run(options: Options, drain: Duration) -> (Arc<Shutdown>, Arc<Metrics>, std::thread::JoinHandle<Result<ExitStatus, engine::StartError>>) {
    // The mirror's own log, for a failure's output (RUST_LOG=debug for more).
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info,librdkafka=warn")).is_test(true).try_init();
    let plan = mirror_maker::front::mm1::plan(&options).unwrap();
    let shutdown = Shutdown::new(drain);
    let metrics = Arc::new(Metrics::default());
    let (s, m) = (shutdown.clone(), metrics.clone());
    (shutdown, metrics, std::thread::spawn(move || engine::run_until(plan, s, m)))
}
