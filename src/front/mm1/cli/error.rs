//! The error of a command line the mirror cannot run ([`UsageError`]).
//!
//! A leaf: the option kinds, the table and the parser all report it, so it
//! lives below them rather than in `cli/mod.rs`, which imports them; no
//! file of `cli` has to import its parent.

use std::fmt;

/// A command line the mirror cannot run: the option at fault (when one
/// is) and a message that says what is wrong and what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageError {
    /// The option at fault, without dashes, when one is.
    pub option: Option<String>,
    /// What is wrong and the fix, naming the option as the user wrote it.
    pub message: String,
}

impl UsageError {
    /// An error of the command line as a whole (no option, an unknown one).
    pub fn new(message: impl Into<String>) -> Self {
        UsageError { option: None, message: message.into() }
    }

    /// An error of one option.
    pub fn of(option: impl Into<String>, message: impl Into<String>) -> Self {
        UsageError { option: Some(option.into()), message: message.into() }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\nRun 'mirror-maker --help' for every option.", self.message)
    }
}

impl std::error::Error for UsageError {}
