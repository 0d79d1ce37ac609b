//! Operations: [`shutdown`] signals and exit codes, [`metrics`] counters and
//! their Prometheus [`endpoint`], the [`pidfile`], the reopenable [`logfile`]
//! and [`opsfile`], which opens both without following links; [`repeats`]
//! collapses a log line that repeats.

pub mod endpoint;
pub mod logfile;
pub mod metrics;
pub mod opsfile;
pub mod pidfile;
pub mod repeats;
pub mod shutdown;
