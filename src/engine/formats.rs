//! MirrorMaker 2's internal record formats: heartbeats, offset-syncs and
//! checkpoints, byte for byte as Java writes them.
