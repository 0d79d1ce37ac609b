//! MirrorMaker 2's duties beside the copy: [`offset_syncs`] written from
//! the target's acknowledgements, [`checkpoints`] and the consumer-group
//! sync built on them, [`heartbeats`], take-over of Java's Connect source
//! offsets ([`connect_offsets`]), and the topic, config and ACL sync
//! ([`topics`], which MM1's `--create.topics` uses too).

pub mod checkpoints;
pub mod connect_offsets;
pub mod heartbeats;
pub mod offset_syncs;
pub mod topics;
