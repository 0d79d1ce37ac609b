//! Front-ends: what the user wrote, turned into a [`crate::plan::Plan`].
//!
//! [`mm1`] reads MirrorMaker 1's command line. Shared by every front-end:
//! [`properties`] reads files as Java does, [`settings`] holds a client's
//! translated settings, [`secrets`] knows which values are never shown
//! (these three are leaves), and [`translate`] turns Java (and 0.8) client
//! properties into librdkafka settings. [`check`] prints `--check-config`.

pub mod check;
pub mod failover;
pub mod mm1;
pub mod mm2;
pub mod properties;
pub mod translate;
