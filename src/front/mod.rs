//! Front-ends: what the user wrote, turned into a [`crate::plan::Plan`].
//!
//! [`mm1`] reads MirrorMaker 1's command line; [`translate`] turns Java
//! (and 0.8) client properties files into librdkafka settings for any
//! front-end; [`check`] prints what `--check-config` shows.

pub mod check;
pub mod mm1;
pub mod translate;
