//! The plan of flows: what to mirror from where to where, and how.
//!
//! [`filter`] selects source topics; [`handler`] names the target topic and
//! partition; [`partitioner`] places keys as Java's producer does.

pub mod filter;
pub mod handler;
pub mod partitioner;
pub mod policy;
