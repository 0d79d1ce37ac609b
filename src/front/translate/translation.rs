//! One file's translation under way ([`Translation`]): the settings so far
//! and the keys settled once every line is read. Reading a line by its rule
//! is `translate/mod.rs`'s (`Translation::property`); the special keys'
//! functions ([`super::special`]) and the rule table's handler type
//! ([`super::rules`]) take it.
//!
//! A leaf: `translate/mod.rs` imports the rules and the special keys, and
//! both need this struct, so it lives below all three; no file of
//! `translate` imports its parent.

use std::collections::BTreeMap;

use crate::front::properties::{PropertiesFile, Property};
use crate::kafka::settings::{ClientSettings, Origin, Role, TranslateOptions};

/// One file's translation under way: the settings so far, and the keys
/// whose meaning depends on others, settled once every line is read.
pub(super) struct Translation<'f> {
    pub(super) file: &'f PropertiesFile,
    pub(super) opts: TranslateOptions,
    pub(super) s: ClientSettings,
    pub(super) levels: Vec<(&'static str, &'f Property)>,
    pub(super) chunks: Option<&'f Property>,
    pub(super) auto_commit: Option<(bool, &'f Property)>,
    pub(super) auto_commit_interval: Option<(u64, &'f Property)>,
}

impl<'f> Translation<'f> {
    /// Nothing translated yet: `file` for `role`, with the command line's choices.
    pub(super) fn new(file: &'f PropertiesFile, role: Role, opts: TranslateOptions) -> Self {
        let s = ClientSettings {
            role,
            path: file.path.clone(),
            entries: BTreeMap::new(),
            warnings: Vec::new(),
            notices: Vec::new(),
            group_id: None,
            exclude_internal_topics: true,
            auto_commit_interval_ms: None,
            bootstrap: String::new(),
            zookeeper_connect: None,
            byte_array_partitioner: false,
            // Every setting made from a resolved line is shown redacted, with the reference.
            fetched: file.props.iter().filter_map(|p| Some((file.at(p), p.resolved.clone()?))).collect(),
        };
        Translation { file, opts, s, levels: Vec::new(), chunks: None, auto_commit: None, auto_commit_interval: None }
    }

    /// Sets a librdkafka key from a line of the file, which stays its origin.
    pub(super) fn set(&mut self, p: &Property, key: &str, value: String) {
        self.s.set(key, value, Origin::File { at: self.file.at(p), key: p.key.clone() });
    }
}
