//! Why the mirror could not start: [`StartError`], one variant per thing
//! the start-up found wrong, each with what to fix. `main` alone turns it
//! into the exit status (always 1, "configuration"), as it does the
//! front's configuration errors: the engine never names a front type.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use rdkafka::error::KafkaError;

use crate::engine::mm2::connect_offsets::ConnectOffsetsError;

/// A client the start-up makes from a properties file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    TargetProducer,
    /// Partition-preserving flows look the target's partitions up with it.
    TargetMetadata,
    SourceConsumer,
    /// The topic sync's, on each side.
    SourceAdmin,
    TargetAdmin,
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Client::TargetProducer => "the target producer",
            Client::TargetMetadata => "the target's metadata client",
            Client::SourceConsumer => "the source consumer",
            Client::SourceAdmin => "the source admin client",
            Client::TargetAdmin => "the target admin client",
        })
    }
}

/// Why the mirror could not start; always exit status 1.
#[derive(Debug)]
pub enum StartError {
    /// The SIGINT/SIGTERM/SIGHUP handler could not be installed.
    Signals(io::Error),
    /// `--metrics.port` could not be bound.
    MetricsPort { bind: String, port: u16, error: io::Error },
    /// A client could not be made from the settings of `file`.
    Client { file: PathBuf, client: Client, error: KafkaError },
    /// A cluster refused our credentials or the TLS handshake failed: the
    /// reason the shutdown recorded, which names the cluster, its file and
    /// the fix (`kafka::auth`).
    Refused(String),
    /// The loop guard: source and target are one cluster (the same id, or
    /// the same bootstrap servers) and topic names are kept.
    SameCluster { source: PathBuf, target: PathBuf, cluster_id: Option<String> },
    /// The same, found only by the cluster ids the provenance header
    /// waited for.
    SameClusterId { source: PathBuf, target: PathBuf, cluster_id: String },
    /// A flow's offset-syncs and checkpoints could not start.
    Checkpoints { flow: String, error: io::Error },
    /// A flow could not take Java MirrorMaker 2's positions over (boxed:
    /// the largest error by far, and the rarest).
    ConnectOffsets { flow: String, error: Box<ConnectOffsetsError> },
    /// An exactly-once flow's task could not start (its transactional
    /// producer refused, or the flow has no topic sync to list with).
    ExactlyOnce { flow: String, error: String },
}

/// What [`StartError::Client`] makes of a client creation's error.
pub fn cannot_create(file: &Path, client: Client) -> impl FnOnce(KafkaError) -> StartError {
    let file = file.to_path_buf();
    move |error| StartError::Client { file, client, error }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Signals(e) => write!(f, "cannot install the signal handler: {e}"),
            StartError::MetricsPort { bind, port, error } => write!(f, "--metrics.port {port} on {bind}: {error}; pick a free port"),
            StartError::Client { file, client, error } => write!(f, "{}: cannot create {client}: {error}", file.display()),
            StartError::Refused(reason) => f.write_str(reason),
            StartError::SameCluster { source, target, cluster_id } => write!(
                f,
                "{} and {} point at the same cluster{}: with topic names kept, every mirrored record would be mirrored again, forever. \
                 Point --producer.config at another cluster, or rename topics with --message.handler topic-prefix/topic-rename and a filter that excludes the renamed topics",
                source.display(),
                target.display(),
                cluster_id.as_ref().map(|id| format!(" (cluster id {id})")).unwrap_or_default()
            ),
            StartError::SameClusterId { source, target, cluster_id } => {
                write!(f, "{} and {} point at the same cluster (cluster id {cluster_id}); point --producer.config at another cluster", source.display(), target.display())
            }
            StartError::Checkpoints { flow, error } => write!(f, "{flow}: cannot start its offset-syncs and checkpoints: {error}"),
            StartError::ConnectOffsets { flow, error } => write!(f, "{flow}: {error}"),
            StartError::ExactlyOnce { flow, error } => write!(f, "{flow}: exactly-once: {error}"),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StartError::Signals(e) | StartError::MetricsPort { error: e, .. } | StartError::Checkpoints { error: e, .. } => Some(e),
            StartError::Client { error, .. } => Some(error),
            StartError::ConnectOffsets { error, .. } => Some(error.as_ref()),
            StartError::Refused(_) | StartError::SameCluster { .. } | StartError::SameClusterId { .. } | StartError::ExactlyOnce { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_the_file_and_the_fix() {
        let e = StartError::Client { file: "p.properties".into(), client: Client::TargetProducer, error: KafkaError::ClientCreation("bad".into()) };
        assert_eq!(e.to_string(), "p.properties: cannot create the target producer: Client creation error: bad");
        let e = StartError::SameCluster { source: "c".into(), target: "p".into(), cluster_id: Some("X".into()) };
        assert!(e.to_string().starts_with("c and p point at the same cluster (cluster id X): with topic names kept"), "{e}");
        let e = StartError::MetricsPort { bind: "0.0.0.0".into(), port: 9100, error: io::Error::from(io::ErrorKind::AddrInUse) };
        assert!(e.to_string().starts_with("--metrics.port 9100 on 0.0.0.0: ") && e.to_string().ends_with("; pick a free port"), "{e}");
    }
}
