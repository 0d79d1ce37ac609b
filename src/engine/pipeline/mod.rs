//! The pipeline every flow runs, whichever front-end planned it: source
//! [`stream`]s (each with its [`stream::control`] thread) read, [`handoff`]
//! lanes carry [`batch`]es to the target's [`producer`] workers,
//! [`offsets`] commits what the target acknowledged, [`throttle`] paces
//! and [`provenance`] stamps the records. What rides on the target's
//! acknowledgements (MM2's offset-syncs) plugs in through [`ack_hooks`].

pub mod ack_hooks;
pub mod batch;
pub mod handoff;
pub mod offsets;
pub mod producer;
pub mod provenance;
pub mod stream;
pub mod throttle;
pub mod transactional;
