//! The MirrorMaker 1 front-end: `kafka-mirror-maker.sh`'s command line
//! ([`cli`]) and the plan built from it.

pub mod cli;
