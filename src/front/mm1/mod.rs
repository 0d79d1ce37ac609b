//! The MirrorMaker 1 front-end: `kafka-mirror-maker.sh`'s command line
//! ([`cli`]) and the [`Plan`] built from it: one flow per
//! `--consumer.config`, all to the one `--producer.config` target.

pub mod cli;

use std::sync::Arc;
use std::time::Duration;

use log::info;

use crate::front::properties::{self, ConfigError};
use crate::front::settings::{Role, TranslateOptions};
use crate::front::translate;
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;
use crate::plan::{Flow, Ops, Plan, Shape, SideEffects, Target};
use cli::{Options, DEFAULT_OFFSET_COMMIT_INTERVAL_MS};

/// The plan for these options: the files loaded and translated, filter and
/// handler built; no network I/O (except reading the brokers of a
/// ZooKeeper-era consumer file from ZooKeeper).
pub fn plan(options: &Options) -> Result<Plan, ConfigError> {
    let naming = Arc::new(Handler::from_spec(&options.handler).map_err(|e| ConfigError(e.0))?);
    let topts = TranslateOptions { accept_zookeeper_offsets_loss: options.accept_zookeeper_offsets_loss };
    let target_settings = {
        let mut sources = Vec::new();
        for path in &options.consumer_configs {
            let file = properties::load(path)?;
            let mut settings = translate::translate_with(&file, Role::Consumer, topts)?;
            translate::resolve_brokers(&mut settings)?;
            let filter = TopicFilter::new(options.include.as_deref(), options.exclude.as_deref(), settings.exclude_internal_topics)
                .map_err(|e| ConfigError(e.to_string()))?;
            sources.push((path, settings, filter));
        }
        let target = translate::translate(&properties::load(&options.producer_config)?, Role::Producer)?;
        (sources, target)
    };
    let (sources, target) = target_settings;
    let commit_interval_ms = commit_interval_ms(options, sources.iter().find_map(|(_, s, _)| s.auto_commit_interval_ms));
    let target = Arc::new(Target { settings: target, origin: format!("--producer.config {}", options.producer_config.display()) });
    let b = &options.beyond;
    let side_effects = SideEffects { create_topics: b.create_topics, sync_partitions: b.sync_partitions, provenance: b.provenance };
    let flows = sources
        .into_iter()
        .enumerate()
        .map(|(i, (path, source, filter))| Flow {
            name: format!("source {i}"),
            source_origin: format!("--consumer.config {}", path.display()),
            source,
            target: target.clone(),
            filter: Arc::new(filter),
            naming: naming.clone(),
            side_effects,
            remote_topics: None,
            checkpointing: None,
        })
        .collect();
    Ok(Plan { flows, heartbeats: Vec::new(), internal_topics: Vec::new(), shape: shape(options, commit_interval_ms), ops: ops(options) })
}

/// `--offset.commit.interval.ms`, else the consumer file's auto-commit
/// interval, else MM1's default.
fn commit_interval_ms(options: &Options, from_file: Option<u64>) -> u64 {
    match (options.offset_commit_interval_ms, from_file) {
        (Some(ms), _) => ms,
        (None, Some(ms)) => {
            info!("committing acknowledged offsets every {ms} ms, the auto-commit interval of the consumer file (--offset.commit.interval.ms not given)");
            ms
        }
        (None, None) => DEFAULT_OFFSET_COMMIT_INTERVAL_MS,
    }
}

fn shape(options: &Options, commit_interval_ms: u64) -> Shape {
    Shape {
        streams: options.num_streams,
        producers: options.num_producers,
        queue_records: options.queue_size,
        queue_bytes: options.queue_byte_size,
        commit_interval: Duration::from_millis(commit_interval_ms),
        topic_refresh_interval: Duration::from_millis(options.topic_refresh_interval_ms),
        abort_on_send_failure: options.abort_on_send_failure,
        throttle_records_per_sec: options.beyond.throttle_records_per_sec,
        throttle_bytes_per_sec: options.beyond.throttle_bytes_per_sec,
    }
}

fn ops(options: &Options) -> Ops {
    Ops {
        drain_timeout: Duration::from_millis(options.drain_timeout_ms),
        stats_interval: Duration::from_millis(options.stats_interval_ms),
        metrics: options.metrics_port.map(|port| (options.metrics_bind.clone(), port)),
        label_flows: false,
    }
}
