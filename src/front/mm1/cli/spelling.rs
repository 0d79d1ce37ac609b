//! MM1's spellings: joptsimple accepted `-opt value` and `---opt`, and
//! commands copied from web pages arrive with en dashes (`–whitelist`) and
//! curly quotes (`”.*”`). [`normalise_args`] rewrites all of these into the
//! form clap understands and reports every rewrite, so the user can fix the
//! command line for good.

use super::table::is_option;

const DASHES: &[char] = &['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}'];
const CURLY_QUOTES: &[char] = &['\u{201C}', '\u{201D}', '\u{201E}', '\u{2018}', '\u{2019}', '\u{201A}', '\u{00AB}', '\u{00BB}'];

/// How an argument spells an option.
#[derive(Debug, PartialEq)]
pub(super) enum Spelling {
    /// As clap reads it: `--name`, or not an option at all.
    AsGiven,
    /// Another dash count joptsimple accepted (`-name`, `---name`): read as the rewrite.
    Joptsimple(String),
    /// With a typographic dash (`–name`, pasted from a web page): read as the rewrite, with a notice.
    Typographic(String),
}

/// How `arg` spells an option, and its `--name[=value]` form when that differs.
pub(super) fn spelling(arg: &str) -> Spelling {
    // An en dash, em dash or minus sign at the start: a word processor's `--`.
    let trimmed = arg.trim_start_matches(|c| DASHES.contains(&c) || c == '-');
    let lead = &arg[..arg.len() - trimmed.len()];
    let (name, value) = match trimmed.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (trimmed, None),
    };
    if lead.is_empty() || lead == "--" || !is_option(name) {
        return Spelling::AsGiven;
    }
    let rebuilt = match value {
        Some(v) => format!("--{name}={v}"),
        None => format!("--{name}"),
    };
    if lead.chars().any(|c| DASHES.contains(&c)) {
        Spelling::Typographic(rebuilt)
    } else {
        Spelling::Joptsimple(rebuilt)
    }
}

/// Rewrites joptsimple-style and typographically mangled arguments into
/// `--name[=value]` tokens. Returns the tokens and one notice per rewrite.
pub fn normalise_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::with_capacity(args.len());
    let mut notices = Vec::new();
    for arg in args {
        let mut fixed = match spelling(arg) {
            Spelling::AsGiven => arg.clone(),
            Spelling::Joptsimple(rebuilt) => rebuilt,
            Spelling::Typographic(rebuilt) => {
                notices.push(format!("'{arg}' has a typographic dash (pasted from a web page?); read it as '{rebuilt}'"));
                rebuilt
            }
        };
        // Curly quotes the shell did not remove: strip them from both ends.
        let stripped = strip_curly(&fixed);
        if stripped != fixed {
            notices.push(format!("'{fixed}' has typographic quotes (pasted from a web page?); read it as '{stripped}'"));
            fixed = stripped;
        }
        out.push(fixed);
    }
    (out, notices)
}

fn strip_curly(s: &str) -> String {
    match s.split_once('=') {
        Some((name, value)) if name.starts_with("--") => {
            format!("{name}={}", value.trim_matches(|c| CURLY_QUOTES.contains(&c)))
        }
        _ => s.trim_matches(|c| CURLY_QUOTES.contains(&c)).to_string(),
    }
}
