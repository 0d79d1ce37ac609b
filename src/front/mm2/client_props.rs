//! A client's Java properties as the MM2 file makes them ([`ClientProps`]),
//! with the settings Java MirrorMaker 2 or Connect adds ([`ClientDefault`],
//! [`DefaultKind`]).
//!
//! A leaf: the driver's assembly ([`super::assemble`]) makes these and
//! `mm2/mod.rs`, which imports the assembly, puts them in each flow, so they
//! live below both; the assembly never imports its parent.

use crate::front::properties::{PropertiesFile, Property};

/// A client's Java properties as the MM2 file makes them, and what Java
/// MirrorMaker 2 or Connect adds. The defaults are not in `file`: the
/// translation would take them for the user's choice (and warn that
/// `enable.idempotence=false` risks reordering, for instance).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientProps {
    pub file: PropertiesFile,
    pub defaults: Vec<ClientDefault>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClientDefault {
    pub key: &'static str,
    pub value: String,
    pub kind: DefaultKind,
    pub why: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultKind {
    /// Java sets it whatever the file says (a file value was dropped).
    Forced,
    /// Java sets it when the file does not.
    IfAbsent,
    /// Connect's base for its producers, under the file's values; Connect
    /// chose throughput-costly settings (one request in flight, no
    /// idempotence) for old brokers, so the engine may put its own no-loss
    /// defaults in their place.
    ConnectBase,
}

impl ClientProps {
    /// The properties Java's client would get: the file's, with the defaults applied.
    pub fn effective(&self) -> PropertiesFile {
        let mut f = self.file.clone();
        for d in &self.defaults {
            if d.kind == DefaultKind::Forced || f.get(d.key).is_none() {
                f.props.retain(|p| p.key != d.key);
                f.props.push(Property { key: d.key.to_string(), value: d.value.clone(), line: 0, resolved: None });
            }
        }
        f
    }
}
