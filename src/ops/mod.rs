//! Operations: [`shutdown`] signals and exit codes, [`metrics`] counters and
//! their Prometheus [`endpoint`], which answers `GET /health` from
//! [`health`] too, the [`pidfile`], the reopenable [`logfile`]
//! and [`opsfile`], which opens both without following links; [`repeats`]
//! collapses a log line that repeats.

pub mod endpoint;
pub mod health;
pub mod logfile;
pub mod metrics;
pub mod opsfile;
pub mod pidfile;
pub mod repeats;
pub mod shutdown;
