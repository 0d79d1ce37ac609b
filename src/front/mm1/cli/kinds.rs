//! How a command-line option is defined ([`Opt`]) and the kinds of option:
//! how each reads and checks its value and what clap is told about it. The
//! options themselves are the table in [`super::table`].

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches};

use super::error::UsageError;

/// The built-in message handlers (MM1 loaded Java classes instead).
pub const HANDLERS: &[&str] = &["identity", "topic-rename", "topic-prefix", "partition-preserving"];

/// How an option takes values on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Takes {
    /// None: a flag, given or not.
    Nothing,
    /// One value (which may start with a dash, as joptsimple allowed).
    One,
    /// One value each time the option is given.
    Each,
    /// One value or more after one mention (argparse's `nargs='+'`).
    Several,
}

/// One command-line option: everything about it is here. `K`, its kind,
/// says how its value is read and checked, and holds its default.
pub(super) struct Opt<K> {
    /// The long name, without dashes; also its id in clap's matches.
    pub(super) name: &'static str,
    /// The value's name in the help (`FILE`, `MS`); unused by flags.
    pub(super) value_name: &'static str,
    /// The help line; `{default}` stands for the kind's default.
    pub(super) help: &'static str,
    /// Left out of `--help` (MM1 options that are refused).
    pub(super) hidden: bool,
    pub(super) kind: K,
}

impl<K> Opt<K> {
    pub(super) const fn new(name: &'static str, value_name: &'static str, kind: K, help: &'static str) -> Opt<K> {
        Opt { name, value_name, help, hidden: false, kind }
    }

    pub(super) const fn flag(name: &'static str, kind: K, help: &'static str) -> Opt<K> {
        Opt::new(name, "", kind, help)
    }

    /// The value given on the command line, if any.
    pub(super) fn given<'m>(&self, m: &'m ArgMatches) -> Option<&'m String> {
        m.get_one::<String>(self.name)
    }
}

/// What every kind of option tells the clap command.
pub(super) trait Kind {
    const TAKES: Takes = Takes::One;

    /// The default, as `{default}` in the help shows it.
    fn default_text(&self) -> Option<String> {
        None
    }
}

/// The kinds whose help shows their `default` field.
macro_rules! shows_default {
    ($($kind:ty),*) => {
        $(impl Kind for $kind {
            fn default_text(&self) -> Option<String> {
                Some(self.default.to_string())
            }
        })*
    };
}

shows_default!(TextOr, Handler, Count, Millis, MillisIfGiven, Bool);

/// Any option, whatever its kind: what the clap command and the
/// recognition of MM1's spellings need of it.
pub(super) trait Spec {
    fn name(&self) -> &'static str;
    fn arg(&self) -> Arg;
    /// Whether the help shows the default exactly when there is one.
    #[cfg(test)]
    fn help_states_default(&self) -> bool;
}

impl<K: Kind> Spec for Opt<K> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn arg(&self) -> Arg {
        let help = match self.kind.default_text() {
            Some(default) => self.help.replace("{default}", &default),
            None => self.help.to_string(),
        };
        let arg = Arg::new(self.name).long(self.name).help(help).hide(self.hidden);
        match K::TAKES {
            Takes::Nothing => arg.action(ArgAction::SetTrue),
            Takes::One => arg.value_name(self.value_name).allow_hyphen_values(true).action(ArgAction::Set),
            Takes::Each => arg.value_name(self.value_name).allow_hyphen_values(true).action(ArgAction::Append),
            Takes::Several => arg.value_name(self.value_name).num_args(1..).action(ArgAction::Append),
        }
    }

    #[cfg(test)]
    fn help_states_default(&self) -> bool {
        self.kind.default_text().is_some() == self.help.contains("{default}")
    }
}

// ---------------------------------------------------------------------------
// The kinds of option: how each reads and checks its value.

/// Given or not (`--demo`).
pub(super) struct Flag;

impl Kind for Flag {
    const TAKES: Takes = Takes::Nothing;
}

impl Opt<Flag> {
    pub(super) fn read(&self, m: &ArgMatches) -> bool {
        m.get_flag(self.name)
    }
}

/// An MM1 flag accepted and ignored, with a notice saying why.
pub(super) struct NoEffect {
    pub(super) why: &'static str,
}

impl Kind for NoEffect {
    const TAKES: Takes = Takes::Nothing;
}

impl Opt<NoEffect> {
    pub(super) fn notice(&self, m: &ArgMatches) -> Option<String> {
        m.get_flag(self.name).then(|| format!("--{} has no effect: {}", self.name, self.kind.why))
    }
}

/// An MM1 option this mirror cannot honour: giving it is an error, which
/// follows `--name ` (`{value}` stands for the value given).
pub(super) struct Refused {
    pub(super) why: &'static str,
}

impl Kind for Refused {}

impl Opt<Refused> {
    pub(super) fn check(&self, m: &ArgMatches) -> Result<(), UsageError> {
        match self.given(m) {
            None => Ok(()),
            Some(v) => Err(UsageError::of(self.name, format!("--{} {}", self.name, self.kind.why.replace("{value}", v)))),
        }
    }
}

/// A required file, given once; `what` says what it holds.
pub(super) struct File {
    pub(super) what: &'static str,
}

/// A required file, given once or more.
pub(super) struct Files {
    pub(super) what: &'static str,
}

impl Kind for File {}

impl Kind for Files {
    const TAKES: Takes = Takes::Each;
}

impl<K> Opt<K> {
    pub(super) fn missing(&self, what: &str) -> UsageError {
        UsageError::of(self.name, format!("missing required option --{} {} ({what})", self.name, self.value_name))
    }
}

impl Opt<File> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<PathBuf, UsageError> {
        self.given(m).map(PathBuf::from).ok_or_else(|| self.missing(self.kind.what))
    }
}

impl Opt<Files> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<Vec<PathBuf>, UsageError> {
        let files: Vec<PathBuf> = m.get_many::<String>(self.name).map(|v| v.map(PathBuf::from).collect()).unwrap_or_default();
        if files.is_empty() {
            return Err(self.missing(self.kind.what));
        }
        Ok(files)
    }
}

/// An optional path.
pub(super) struct Path;

impl Kind for Path {}

impl Opt<Path> {
    pub(super) fn read(&self, m: &ArgMatches) -> Option<PathBuf> {
        self.given(m).map(PathBuf::from)
    }
}

/// Words given after one mention (`--clusters A B`), or none.
pub(super) struct Words;

impl Kind for Words {
    const TAKES: Takes = Takes::Several;
}

impl Opt<Words> {
    pub(super) fn read(&self, m: &ArgMatches) -> Vec<String> {
        m.get_many::<String>(self.name).into_iter().flatten().cloned().collect()
    }
}

/// Optional text, taken as given.
pub(super) struct Text;

impl Kind for Text {}

impl Opt<Text> {
    pub(super) fn read(&self, m: &ArgMatches) -> Option<String> {
        self.given(m).cloned()
    }
}

/// Text, taken as given, with a default.
pub(super) struct TextOr {
    pub(super) default: &'static str,
}

impl Opt<TextOr> {
    pub(super) fn read(&self, m: &ArgMatches) -> String {
        self.given(m).cloned().unwrap_or_else(|| self.kind.default.into())
    }
}

/// The name of one of the [`HANDLERS`], trimmed.
pub(super) struct Handler {
    pub(super) default: &'static str,
}

impl Opt<Handler> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<String, UsageError> {
        let name = self.given(m).map_or(self.kind.default, |n| n.trim());
        if HANDLERS.contains(&name) {
            return Ok(name.to_string());
        }
        let hint = if name.contains('.') && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            " Java handler classes cannot be loaded by this native mirror; pick the built-in that does the same job"
        } else {
            ""
        };
        Err(UsageError::of(
            self.name,
            format!(
            "--{} '{name}' is not a built-in handler.{hint}: {} (topic-rename takes --message.handler.args 'src:dst,src2:dst2', topic-prefix takes the prefix)",
            self.name,
            HANDLERS.join(", ")
        ),
        ))
    }
}

/// A whole number of at least 1.
pub(super) struct Count {
    pub(super) default: usize,
}

impl Opt<Count> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<usize, UsageError> {
        match self.given(m) {
            None => Ok(self.kind.default),
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(UsageError::of(self.name, format!("--{} '{v}' must be a whole number of at least 1", self.name))),
            },
        }
    }
}

/// Milliseconds, at least `min`, with a default.
pub(super) struct Millis {
    pub(super) default: u64,
    pub(super) min: u64,
}

/// Milliseconds, `None` when not given: something else may stand in, and
/// `default` (what the help shows) applies only when nothing does.
pub(super) struct MillisIfGiven {
    pub(super) default: u64,
}

impl<K> Opt<K> {
    pub(super) fn millis(&self, v: &str) -> Result<u64, UsageError> {
        v.trim().parse::<u64>().map_err(|_| UsageError::of(self.name, format!("--{} '{v}' must be a whole number of milliseconds (0 or more)", self.name)))
    }
}

impl Opt<Millis> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<u64, UsageError> {
        let ms = self.given(m).map(|v| self.millis(v)).transpose()?.unwrap_or(self.kind.default);
        if ms < self.kind.min {
            return Err(UsageError::of(self.name, format!("--{} must be at least {}", self.name, self.kind.min)));
        }
        Ok(ms)
    }
}

impl Opt<MillisIfGiven> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<Option<u64>, UsageError> {
        self.given(m).map(|v| self.millis(v)).transpose()
    }
}

/// true or false in any case, nothing else (Scala's `toBoolean`); `fix`
/// follows "is not a boolean; " in the error.
pub(super) struct Bool {
    pub(super) default: bool,
    pub(super) fix: &'static str,
}

impl Opt<Bool> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<bool, UsageError> {
        let Some(v) = self.given(m) else { return Ok(self.kind.default) };
        match v.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(UsageError::of(self.name, format!("--{} '{v}' is not a boolean; {}", self.name, self.kind.fix))),
        }
    }
}

/// A limit per second, at least 1; no limit when not given.
pub(super) struct Rate {
    pub(super) unit: &'static str,
}

impl Kind for Rate {}

impl Opt<Rate> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<Option<u64>, UsageError> {
        let Some(v) = self.given(m) else { return Ok(None) };
        match v.trim().parse::<u64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(UsageError::of(
                self.name,
                format!("--{} '{v}' must be a whole number of {} per second, at least 1 (leave it out for no limit)", self.name, self.kind.unit),
            )),
        }
    }
}

/// A TCP port; off when not given.
pub(super) struct Port;

impl Kind for Port {}

impl Opt<Port> {
    pub(super) fn read(&self, m: &ArgMatches) -> Result<Option<u16>, UsageError> {
        let Some(v) = self.given(m) else { return Ok(None) };
        let port = v.trim().parse::<u16>().ok().filter(|p| *p > 0);
        port.map(Some).ok_or_else(|| UsageError::of(self.name, format!("--{} '{v}' must be a TCP port from 1 to 65535", self.name)))
    }
}
