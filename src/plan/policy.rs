//! MirrorMaker 2's replication policies: how remote topics are named.
