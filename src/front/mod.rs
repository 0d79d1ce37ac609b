//! Front-ends: what the user wrote, turned into a [`crate::plan::Plan`].
//!
//! [`mm1`] reads MirrorMaker 1's command line, [`mm2`] MirrorMaker 2's
//! file; a Connect-worker front-end (issue #28) will sit beside them.
//! Shared by every front-end: [`properties`] reads files as Java does and
//! [`translate`] turns Java (and 0.8) client properties into librdkafka
//! settings (`kafka::settings`, which the plan carries below the engine).
//! [`providers`] resolves `${provider:path:key}` references as Java's
//! config providers do, once, as files are loaded.
//! [`check`] prints `--check-config`; [`failover`] is the failover command.

pub mod check;
pub mod connect;
pub mod failover;
pub mod mm1;
pub mod mm2;
pub mod properties;
pub mod providers;
pub mod translate;
