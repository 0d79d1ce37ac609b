//! The MirrorMaker 1 front-end: `kafka-mirror-maker.sh`'s command line
//! ([`cli`]) and the [`Plan`] built from it: one flow per
//! `--consumer.config`, all to the one `--producer.config` target.

pub mod cli;

use std::sync::Arc;
use std::time::Duration;

use log::info;

use crate::front::properties::ConfigError;
use crate::front::translate;
use crate::kafka::settings::{Role, TranslateOptions};
use crate::plan::filter::TopicFilter;
use crate::plan::handler::Handler;
use crate::plan::policy::NameFilter;
use crate::plan::{Checkpointing, Checkpoints, Flow, Ops, Plan, Shape, SideEffects, Target};
use cli::{CheckpointOptions, OpsOptions, Options, DEFAULT_OFFSET_COMMIT_INTERVAL_MS};

/// The plan for these options: the files loaded and translated, filter and
/// handler built; no network I/O (except reading the brokers of a
/// ZooKeeper-era consumer file from ZooKeeper).
pub fn plan(options: &Options) -> Result<Plan, ConfigError> {
    let naming = Arc::new(Handler::from_spec(&options.handler).map_err(|e| ConfigError::new(e.to_string()).with_key("--message.handler"))?);
    let topts = TranslateOptions { accept_zookeeper_offsets_loss: options.accept_zookeeper_offsets_loss };
    let target_settings = {
        let mut sources = Vec::new();
        for path in &options.consumer_configs {
            let mut settings = translate::load(path, Role::Consumer, topts)?;
            translate::resolve_brokers(&mut settings)?;
            let filter = TopicFilter::new(options.include.as_deref(), options.exclude.as_deref(), settings.exclude_internal_topics)
                .map_err(|e| ConfigError::new(e.to_string()))?;
            sources.push((path, settings, filter));
        }
        let target = translate::load(&options.producer_config, Role::Producer, TranslateOptions::default())?;
        (sources, target)
    };
    let (sources, target) = target_settings;
    let commit_interval_ms = commit_interval_ms(options, sources.iter().find_map(|(_, s, _)| s.auto_commit_interval_ms));
    let target = Arc::new(Target { settings: target, admin: None, origin: format!("--producer.config {}", options.producer_config.display()) });
    let b = &options.beyond;
    let side_effects = SideEffects { create_topics: b.create_topics, sync_partitions: b.sync_partitions, provenance: b.provenance };
    let aliases = source_aliases(&b.checkpoints, sources.len(), &naming)?;
    let flows = sources
        .into_iter()
        .enumerate()
        .map(|(i, (path, source, filter))| {
            let checkpointing = match &aliases {
                Some(a) => Some(Arc::new(checkpointing(&b.checkpoints, &a[i], &target)?)),
                None => None,
            };
            // Named by the checkpoint aliases: the same in every copy of
            // this job, and distinct for each source of one job.
            let lease = checkpointing.as_ref().map_or_else(|| format!("source {i}"), |c| format!("{}->{}", c.source_alias, c.target_alias));
            Ok(Flow {
                name: format!("source {i}"),
                lease,
                source_origin: format!("--consumer.config {}", path.display()),
                source,
                // MM1 has no admin layer: its admin clients take the consumer's connection settings.
                source_admin: None,
                target: target.clone(),
                filter: Arc::new(filter),
                naming: naming.clone(),
                side_effects,
                remote_topics: None,
                checkpointing,
                connect_offsets: None,
                exactly_once: b.exactly_once.map(|ms| crate::plan::ExactlyOnce { interval: std::time::Duration::from_millis(ms) }),
            })
        })
        .collect::<Result<Vec<Flow>, ConfigError>>()?;
    Ok(Plan { flows, heartbeats: Vec::new(), shape: shape(options, commit_interval_ms), ops: ops(&options.ops, false) })
}

/// Each source's alias in the checkpoint topics, when `--emit.checkpoints`
/// is on; refused when a sync could not mean anything.
pub(crate) fn source_aliases(c: &CheckpointOptions, sources: usize, naming: &Handler) -> Result<Option<Vec<String>>, ConfigError> {
    if !c.emit {
        return Ok(None);
    }
    if !naming.preserves_partitions() {
        return Err(ConfigError::new(format!(
            "--emit.checkpoints needs every record in its source partition's number on the target (an offset-sync maps a source partition \
             to the target partition of the same number), which --message.handler {} does not do: add --message.handler partition-preserving",
            naming.name()
        ))
        .with_key("--emit.checkpoints"));
    }
    let aliases = match c.source_aliases.len() {
        0 if sources == 1 => vec!["source".to_string()],
        n if n == sources => c.source_aliases.clone(),
        n => {
            return Err(ConfigError::new(format!(
                "--source.alias names {n} source cluster(s) but there are {sources} --consumer.config files: give one alias per file, in the same order"
            ))
            .with_key("--source.alias"))
        }
    };
    for (i, a) in aliases.iter().enumerate() {
        if a.is_empty() || a.contains(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
            return Err(ConfigError::new(format!("--source.alias '{a}': an alias becomes part of topic names: use letters, digits, '.', '_' or '-'"))
                .with_key("--source.alias"));
        }
        if aliases[..i].contains(a) || *a == c.target_alias {
            return Err(ConfigError::new(format!("--source.alias '{a}' is given twice (or is the --target.alias): each cluster needs its own"))
                .with_key("--source.alias"));
        }
    }
    Ok(Some(aliases))
}

/// `--checkpoint.groups` with MirrorMaker 2's default excludes.
pub(crate) fn checkpoint_groups(c: &CheckpointOptions) -> Result<NameFilter, ConfigError> {
    let include: Vec<String> = c.groups.split(',').map(|g| g.trim().to_string()).filter(|g| !g.is_empty()).collect();
    NameFilter::new(&include, &NameFilter::default_groups().exclude_list)
        .map_err(|e| ConfigError::new(format!("--checkpoint.groups '{}': {e}", c.groups)).with_key("--checkpoint.groups"))
}

/// The offset-syncs and checkpoints topics of a source alias on the target.
pub(crate) fn checkpoint_topic_names(alias: &str) -> (String, String) {
    (format!("mm2-offset-syncs.{alias}.internal"), format!("{alias}.checkpoints.internal"))
}

/// A flow's offset-syncs and checkpoints, both on the target (MM1 mode
/// never writes to the source): the syncs as MirrorMaker 2's
/// `offset-syncs.topic.location=target` names them.
fn checkpointing(c: &CheckpointOptions, alias: &str, target: &Target) -> Result<Checkpointing, ConfigError> {
    let include: Vec<String> = c.groups.split(',').map(|g| g.trim().to_string()).filter(|g| !g.is_empty()).collect();
    let groups = NameFilter::new(&include, &NameFilter::default_groups().exclude_list)
        .map_err(|e| ConfigError::new(format!("--checkpoint.groups '{}': {e}", c.groups)).with_key("--checkpoint.groups"))?;
    let (syncs_topic, checkpoints_topic) = (format!("mm2-offset-syncs.{alias}.internal"), format!("{alias}.checkpoints.internal"));
    Ok(Checkpointing {
        source_alias: alias.to_string(),
        target_alias: c.target_alias.clone(),
        syncs_cluster: target.settings.clone(),
        syncs_admin: None,
        syncs_topic,
        // MirrorMaker 2's default; capped at the cluster's broker count.
        syncs_replication_factor: 3,
        write_syncs: true,
        lag_max: 100,
        checkpoints: Some(Checkpoints {
            topics: None,
            topic: checkpoints_topic,
            replication_factor: 3,
            interval: Duration::from_millis(c.interval_ms),
            groups,
            // MM1 has no refresh option: the groups are listed every round.
            refresh_groups: Some(Duration::from_millis(c.interval_ms)),
            sync_group_offsets: c.sync_group_offsets.then(|| Duration::from_millis(c.interval_ms)),
        }),
    })
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

/// The run's operations, the same options in both modes; `label_flows`
/// adds a flow label to the metrics (MM2 mode).
pub fn ops(o: &OpsOptions, label_flows: bool) -> Ops {
    Ops {
        drain_timeout: Duration::from_millis(o.drain_timeout_ms),
        stats_interval: Duration::from_millis(o.stats_interval_ms),
        metrics: o.metrics_port.map(|port| (o.metrics_bind.clone(), port)),
        label_flows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(aliases: &[&str]) -> CheckpointOptions {
        CheckpointOptions { emit: true, source_aliases: aliases.iter().map(|a| a.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn checkpoints_need_partition_preserving_and_an_alias_per_source() {
        let pp = Handler::PartitionPreserving;
        assert_eq!(source_aliases(&CheckpointOptions::default(), 1, &Handler::Identity).unwrap(), None, "off by default");
        let e = source_aliases(&on(&[]), 1, &Handler::Identity).unwrap_err();
        assert!(e.to_string().contains("--message.handler partition-preserving"), "{e}");
        assert_eq!(source_aliases(&on(&[]), 1, &pp).unwrap(), Some(vec!["source".to_string()]));
        assert!(source_aliases(&on(&[]), 2, &pp).unwrap_err().to_string().contains("one alias per file"));
        assert_eq!(source_aliases(&on(&["A", "B"]), 2, &pp).unwrap(), Some(vec!["A".to_string(), "B".to_string()]));
        assert!(source_aliases(&on(&["A", "A"]), 2, &pp).unwrap_err().to_string().contains("given twice"));
        assert!(source_aliases(&on(&["target"]), 1, &pp).unwrap_err().to_string().contains("--target.alias"));
        assert!(source_aliases(&on(&["a b"]), 1, &pp).unwrap_err().to_string().contains("letters, digits"));
    }

    #[test]
    fn checkpoints_and_syncs_go_to_the_target_named_as_mm2_names_them_there() {
        let file = crate::front::properties::parse(std::path::Path::new("t.properties"), b"bootstrap.servers=t:9092\n").unwrap();
        let settings = translate::translate(&file, Role::Producer).unwrap();
        let target = Target { settings, admin: None, origin: "t".into() };
        let c = CheckpointOptions { groups: "app-.*, billing".into(), ..on(&[]) };
        let cp = checkpointing(&c, "east", &target).unwrap();
        assert_eq!(cp.syncs_topic, "mm2-offset-syncs.east.internal", "offset-syncs.topic.location=target naming");
        let checkpoints = cp.checkpoints.unwrap();
        assert_eq!(checkpoints.topic, "east.checkpoints.internal");
        assert!(checkpoints.groups.matches("app-1") && checkpoints.groups.matches("billing"));
        assert!(!checkpoints.groups.matches("other") && !checkpoints.groups.matches("console-consumer-1"));
        assert_eq!((cp.syncs_replication_factor, checkpoints.replication_factor), (3, 3), "MM2's defaults, capped at the broker count when made");
    }
}
