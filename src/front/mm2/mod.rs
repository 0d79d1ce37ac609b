//! The MirrorMaker 2 front-end: a `connect-mirror-maker.properties` file
//! read as Java's dedicated mode reads it, turned into flows.
