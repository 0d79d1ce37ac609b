//! The warnings and notes an MM2 file's reading collects ([`Messages`]),
//! each kept once.
//!
//! A leaf: `mm2/mod.rs` and the checks it runs ([`super::lint`]) both write
//! to it, so it lives below both; the lint never imports its parent.

/// Warnings and notes, each once (a top-level line is seen by every flow).
#[derive(Debug, Default)]
pub(crate) struct Messages {
    pub warnings: Vec<String>,
    pub notices: Vec<String>,
}

impl Messages {
    pub fn warn(&mut self, s: String) {
        if !self.warnings.contains(&s) {
            self.warnings.push(s);
        }
    }

    pub fn note(&mut self, s: String) {
        if !self.notices.contains(&s) {
            self.notices.push(s);
        }
    }
}
