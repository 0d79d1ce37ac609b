//! Connect's standalone mode: `mirror-maker --connect.standalone
//! worker.properties [connector1.properties connector2.json ...]` (or
//! `scripts/connect-standalone.sh` with the same arguments), as Java 3.9's
//! `ConnectStandalone`.
//!
//! The same worker as the distributed one, without storage topics: the
//! connectors of the files are created at start, configs PUT over the same
//! REST API live in memory (as in Java's StandaloneHerder, they are gone at
//! the next start), and each source connector's positions live in
//! `offset.storage.file.filename`, Java's own file format, read at start
//! and written every `offset.flush.interval.ms` and at the stop
//! (`engine::mm2::connect_offsets::file`). Each connector is one engine run
//! of the plan `front::connect::plan` makes, as in distributed mode; a
//! single process needs no lease, but the plan keeps its own per connector,
//! which one process always holds.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use log::{info, warn};

use super::{cluster_id, lock, Worker, WorkerError, DRAIN_TIMEOUT};
use crate::front::connect::standalone::{self, ConnectorFile, InitialState};
use crate::front::connect::{self};
use crate::front::properties::ConfigError;
use crate::ops::shutdown::{self, ExitStatus, Shutdown};
use crate::worker::store::{self as records, ConfigRecord, TargetState};

/// Runs a standalone worker on `args` (the worker file, then the connector
/// files) until SIGINT/SIGTERM.
pub fn run(args: &[PathBuf], exit_now: fn(ExitStatus) -> !) -> Result<ExitStatus, WorkerError> {
    let (worker_file, connector_files) = args.split_first().ok_or_else(|| {
        WorkerError::Config(ConfigError::new(
            "--connect.standalone needs the worker file first, then the connector files (worker.properties conn1.properties conn2.json ...)",
        ))
    })?;
    let cfg = standalone::load_worker(worker_file).map_err(WorkerError::Config)?;
    for n in &cfg.notices {
        info!("{n}");
    }
    for w in &cfg.warnings {
        warn!("{w}");
    }
    // Every file is read and every connector checked before anything
    // starts: Java stops with an error at the first connector it cannot
    // create, and one that starts half of them is harder to reason about.
    let mut connectors: Vec<ConnectorFile> = Vec::new();
    for path in connector_files {
        let c = standalone::load_connector(path).map_err(WorkerError::Config)?;
        if connectors.iter().any(|o| o.name == c.name) {
            return Err(WorkerError::Config(
                ConfigError::in_file(path, format!("connector '{}' is already defined by an earlier file", c.name))
                    .with_key("name")
                    .with_fix("give each connector file its own name"),
            ));
        }
        connect::plan(&c.name, &c.config, &cfg, DRAIN_TIMEOUT).map_err(|e| WorkerError::Config(ConfigError::new(format!("{}: {e}", path.display()))))?;
        connectors.push(c);
    }
    let stop = Shutdown::new(DRAIN_TIMEOUT);
    shutdown::install_signal_handler(stop.clone(), None, exit_now).map_err(|e| WorkerError::Start(format!("cannot install signal handlers: {e}")))?;
    let cluster_id = cluster_id(&cfg.cluster.client_config());
    let worker = Arc::new(Worker::new(cfg, None, cluster_id, &stop));
    for c in connectors {
        info!("connector {}: created from its file", c.name);
        worker.apply(records_of(c));
    }
    super::serve_listeners(&worker)?;
    worker.health.running();
    info!(
        "Connect standalone worker {} started; positions in {}",
        worker.cfg.worker_id,
        worker.cfg.offsets_file.as_deref().unwrap_or_else(|| "?".as_ref()).display()
    );
    while !stop.stopping() {
        std::thread::sleep(Duration::from_millis(200));
        worker.notice_ended_runs();
    }
    let names: Vec<String> = lock(&worker.connectors).keys().cloned().collect();
    for name in names {
        worker.stop_run(&name);
    }
    Ok(ExitStatus::Ok)
}

/// A connector file as the records a PUT (and a target-state change) makes.
fn records_of(c: ConnectorFile) -> Vec<ConfigRecord> {
    let mut out = vec![records::decode(format!("connector-{}", c.name).as_bytes(), Some(&records::connector_value(&c.config)))];
    let state = match c.initial_state {
        None | Some(InitialState::Running) => None,
        Some(InitialState::Paused) => Some(TargetState::Paused),
        Some(InitialState::Stopped) => Some(TargetState::Stopped),
    };
    if let Some(state) = state {
        out.push(ConfigRecord::Target { name: c.name, state: Some(state) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connector_file_is_the_records_of_a_put_and_its_initial_state() {
        let c = ConnectorFile { name: "cp".into(), config: vec![("name".into(), "cp".into())], initial_state: Some(InitialState::Stopped) };
        assert_eq!(
            records_of(c),
            vec![
                ConfigRecord::Connector { name: "cp".into(), config: Some(vec![("name".into(), "cp".into())]) },
                ConfigRecord::Target { name: "cp".into(), state: Some(TargetState::Stopped) },
            ]
        );
        let c = ConnectorFile { name: "s".into(), config: vec![], initial_state: Some(InitialState::Running) };
        assert_eq!(records_of(c).len(), 1, "running is the default");
    }
}
