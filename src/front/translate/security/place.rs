//! A translated key's place in its properties file: the `file:line` text
//! warnings name ([`at`]), the error of that line ([`err`]) and the setting
//! it produced, stamped with where it came from ([`set`]).
//!
//! A leaf: `security/mod.rs`, the stores and SASL all write their results
//! through these, and `mod.rs` imports the other two, so the helpers live
//! below all three; no file of `security` imports its parent.

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::settings::{ClientSettings, Origin};

/// Where a line is, as warnings and settings' origins name it.
pub(super) fn at(file: &PropertiesFile, p: &Property) -> String {
    format!("{}:{}", file.path.display(), p.line)
}

/// The error of one line: its place, its key, then what is wrong.
pub(super) fn err(file: &PropertiesFile, p: &Property, msg: impl std::fmt::Display) -> ConfigError {
    ConfigError::at(file, p, format!("{}: {msg}", p.key))
}

/// Sets a librdkafka key from one line, remembering that line as its origin.
pub(super) fn set(s: &mut ClientSettings, file: &PropertiesFile, p: &Property, key: &str, value: impl Into<String>) {
    s.entries.insert(key.to_string(), (value.into(), Origin::File { at: at(file, p), key: p.key.clone() }));
}
