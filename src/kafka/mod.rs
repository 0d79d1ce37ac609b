//! The glue to librdkafka's C API, for what rust-rdkafka does not expose.
//! Every `unsafe` block of the crate lives under this module, including
//! the one system call the crate makes itself ([`unix`], for `ops::logfile`).
//! Also what the layers above share about a client: its translated
//! [`settings`] and which values are [`secrets`], and the [`admin`] helpers.

#![allow(unsafe_code)]

pub mod acls;
pub mod admin;
pub mod auth;
pub mod client;
pub mod commit;
pub mod conf;
pub mod fetched;
pub mod groups;
pub mod kerberos;
pub mod keystore;
pub mod partition_list;
pub mod produce;
pub mod secrets;
pub mod settings;
pub mod topic_reader;
pub mod transactions;
pub mod unix;
