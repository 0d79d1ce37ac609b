//! Operations: [`shutdown`] signals and exit codes, [`metrics`] counters and
//! their Prometheus [`endpoint`], which answers `GET /health` from
//! [`health`] too, the [`pidfile`], the reopenable [`logfile`]
//! and [`opsfile`], which opens both without following links; [`repeats`]
//! collapses a log line that repeats; [`sampled`] keeps windowed statistics
//! as Kafka's metrics do, for [`mm2_series`], the series named as
//! MirrorMaker 2's JMX metrics reach Prometheus.

pub mod endpoint;
pub mod health;
pub mod logfile;
pub mod metrics;
pub mod mm2_series;
pub mod opsfile;
pub mod pidfile;
pub mod repeats;
pub mod sampled;
pub mod shutdown;
