//! Config providers (KIP-297) as Java's `AbstractConfig` runs them: a file
//! declares `config.providers=file,dir,env` with
//! `config.providers.NAME.class` and `config.providers.NAME.param.*`, and
//! every value's `${NAME:[path:]key}` is replaced by what that provider
//! gives. Kafka's own three providers are run here, with the parameters
//! Java 3.9 knows: `FileConfigProvider` (`allowed.paths`),
//! `DirectoryConfigProvider` (`allowed.paths`) and `EnvVarConfigProvider`
//! (`allowlist.pattern`).
//!
//! Resolved once, in the front, as a file is loaded: the `config.providers*`
//! keys are consumed (clients never see them), and each resolved
//! [`Property`] keeps its line and the references it came from
//! (`Property::resolved`), so messages and `--check-config` name the place
//! and the reference, never the value. Every resolved value is also handed
//! to [`crate::kafka::secrets::never_show`], the process-wide last defence.
//!
//! Where Java differs on purpose: Java leaves a `${...}` it cannot resolve
//! (missing file or key, unset or disallowed variable, path outside
//! `allowed.paths`, undeclared provider) in place, and the client then uses
//! the literal text, e.g. as a password, failing later with an
//! authentication error that names nothing. Each of those is a start-up
//! error here naming the reference's file:line, the provider and what is
//! missing. Java loads any class on its classpath; only the three classes
//! above can run here, so any other class is refused by name.

mod reference;
#[cfg(test)]
mod tests;

use std::path::{Component, Path, PathBuf};

use regex::Regex;

use crate::front::properties::{java_trim, ConfigError, PropertiesFile, Property};
use reference::{references, Reference};

/// The key that lists the providers, and the prefix of each one's keys.
pub const CONFIG_PROVIDERS: &str = "config.providers";

const FILE_CLASS: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
const DIR_CLASS: &str = "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
const ENV_CLASS: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// Whether `key` is one of the provider keys a file consumes.
pub fn is_provider_key(key: &str) -> bool {
    key == CONFIG_PROVIDERS || key.starts_with("config.providers.")
}

/// Which of Kafka's providers a name runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    File,
    Dir,
    Env,
}

/// One declared provider, configured.
#[derive(Debug)]
struct Provider {
    name: String,
    kind: Kind,
    /// `allowed.paths` of the file and directory providers (KIP-993).
    allowed_paths: Option<Vec<PathBuf>>,
    /// `allowlist.pattern` of the environment provider, with its file:line.
    allowlist: Option<(Regex, String)>,
}

/// The providers a file declares (maybe none), with the warnings about
/// provider keys that have no effect.
#[derive(Debug, Default)]
pub struct Providers {
    list: Vec<Provider>,
    pub warnings: Vec<String>,
}

/// A file with its references resolved and its provider keys consumed, and
/// the warnings about those keys.
pub fn resolve_file(file: PropertiesFile, trim: bool) -> Result<(PropertiesFile, Vec<String>), ConfigError> {
    let providers = Providers::declared(&file)?;
    let resolved = providers.apply(&file, trim)?;
    Ok((resolved, providers.warnings))
}

/// A Connect worker's file with its own references resolved, its provider
/// keys kept: as in Java, the worker's providers also resolve the configs
/// of the connectors it runs ([`Providers::declared`] on the kept keys).
pub fn resolve_worker_file(file: PropertiesFile) -> Result<(PropertiesFile, Vec<String>), ConfigError> {
    let providers = Providers::declared(&file)?;
    let mut props = Vec::with_capacity(file.props.len());
    for p in &file.props {
        props.push(if is_provider_key(&p.key) { p.clone() } else { providers.resolve(&file, p, true)? });
    }
    Ok((PropertiesFile { path: file.path.clone(), props }, providers.warnings))
}

impl Providers {
    /// The providers `file` declares in `config.providers`, each configured
    /// from its `config.providers.NAME.*` keys; a name without its class,
    /// a class that cannot run here or a bad parameter is refused.
    pub fn declared(file: &PropertiesFile) -> Result<Providers, ConfigError> {
        let mut out = Providers::default();
        let names: Vec<String> = match file.get(CONFIG_PROVIDERS) {
            // Java splits on commas; names are trimmed here (a space after a
            // comma would otherwise name a provider no key can configure).
            Some(p) => java_trim(&p.value).split(',').map(|n| java_trim(n).to_string()).filter(|n| !n.is_empty()).collect(),
            None => Vec::new(),
        };
        for name in &names {
            out.list.push(provider(file, name)?);
        }
        for p in file.props.iter().filter(|p| p.key.starts_with("config.providers.")) {
            let rest = &p.key["config.providers.".len()..];
            if !names.iter().any(|n| rest.starts_with(&format!("{n}."))) {
                out.warnings.push(format!(
                    "{}: {} is ignored: config.providers does not list that provider (it lists: {})",
                    file.at(p),
                    p.key,
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ));
            } else if let Some(n) = names.iter().find(|n| rest.starts_with(&format!("{n}.param."))) {
                let param = &rest[n.len() + ".param.".len()..];
                let known = match out.list.iter().find(|x| &x.name == n).map(|x| x.kind) {
                    Some(Kind::File | Kind::Dir) => param == "allowed.paths",
                    Some(Kind::Env) => param == "allowlist.pattern",
                    None => false,
                };
                if !known {
                    out.warnings.push(format!("{}: {} is ignored: the provider '{n}' has no parameter '{param}' (Java ignores it too)", file.at(p), p.key));
                }
            }
        }
        Ok(out)
    }

    /// `file` with its provider keys dropped and every other value's
    /// references resolved; `trim` trims a resolved value as the clients'
    /// ConfigDef does (MirrorMaker 2's raw values are trimmed later, where
    /// Java trims them).
    pub fn apply(&self, file: &PropertiesFile, trim: bool) -> Result<PropertiesFile, ConfigError> {
        let mut props = Vec::with_capacity(file.props.len());
        for p in file.props.iter().filter(|p| !is_provider_key(&p.key)) {
            props.push(self.resolve(file, p, trim)?);
        }
        Ok(PropertiesFile { path: file.path.clone(), props })
    }

    /// One property with its references replaced by their values, or as it is.
    pub fn resolve(&self, file: &PropertiesFile, p: &Property, trim: bool) -> Result<Property, ConfigError> {
        let refs = references(&p.value);
        if refs.is_empty() {
            return Ok(p.clone());
        }
        let mut value = String::with_capacity(p.value.len());
        let mut last = 0;
        for r in &refs {
            let got = self.value_of(file, p, r)?;
            crate::kafka::secrets::never_show(&got);
            value.push_str(&p.value[last..r.span.start]);
            value.push_str(&got);
            last = r.span.end;
        }
        value.push_str(&p.value[last..]);
        let value = if trim { java_trim(&value).to_string() } else { value };
        let written: Vec<&str> = refs.iter().map(|r| &p.value[r.span.clone()]).collect();
        Ok(Property { key: p.key.clone(), value, line: p.line, resolved: Some(written.join(", ")) })
    }

    /// What reference `r` (in `p`'s value) stands for.
    fn value_of(&self, file: &PropertiesFile, p: &Property, r: &Reference) -> Result<String, ConfigError> {
        let written = &p.value[r.span.clone()];
        let refused = |what: String, fix: String| {
            ConfigError::at(file, p, format!("{}: {written}: {what}", p.key))
                .with_fix(format!("{fix} (Java would leave '{written}' in the value as text and the client would use it as is; it is refused here instead)"))
        };
        let Some(provider) = self.list.iter().find(|x| x.name == r.provider) else {
            let declared: Vec<&str> = self.list.iter().map(|x| x.name.as_str()).collect();
            return Err(refused(
                format!(
                    "no config provider '{}' is declared (config.providers lists: {})",
                    r.provider,
                    if declared.is_empty() { "none".into() } else { declared.join(", ") }
                ),
                format!(
                    "declare it in this file, e.g. 'config.providers={0}' and 'config.providers.{0}.class={FILE_CLASS}' (or {DIR_CLASS}, {ENV_CLASS})",
                    r.provider
                ),
            ));
        };
        match provider.kind {
            Kind::File => provider.read_file(r).map_err(|(what, fix)| refused(what, fix)),
            Kind::Dir => provider.read_dir(r).map_err(|(what, fix)| refused(what, fix)),
            Kind::Env => provider.read_env(r).map_err(|(what, fix)| refused(what, fix)),
        }
    }
}

/// The provider `name` as `file` configures it.
fn provider(file: &PropertiesFile, name: &str) -> Result<Provider, ConfigError> {
    let class_key = format!("config.providers.{name}.class");
    let Some(class) = file.get(&class_key) else {
        // Java skips a listed provider without a class, leaving its
        // references as text; refused here for the same reason as those.
        let listed = file.get(CONFIG_PROVIDERS).expect("the names come from config.providers");
        return Err(ConfigError::at(file, listed, format!("config.providers lists '{name}' but {class_key} is missing"))
            .with_fix(format!("add '{class_key}=' and one of {FILE_CLASS}, {DIR_CLASS}, {ENV_CLASS}")));
    };
    let kind = match java_trim(&class.value) {
        FILE_CLASS => Kind::File,
        DIR_CLASS => Kind::Dir,
        ENV_CLASS => Kind::Env,
        other => {
            return Err(ConfigError::at(
                file,
                class,
                format!("{class_key}={other}: only Kafka's own config providers can run here (Java would load any class on its classpath)"),
            )
            .with_fix(format!("use {FILE_CLASS}, {DIR_CLASS} or {ENV_CLASS}")))
        }
    };
    let param = |p: &str| file.get(&format!("config.providers.{name}.param.{p}"));
    let allowed_paths = match (kind, param("allowed.paths")) {
        (Kind::File | Kind::Dir, Some(p)) => allowed_paths(file, p)?,
        _ => None,
    };
    let allowlist = match (kind, param("allowlist.pattern")) {
        (Kind::Env, Some(p)) => Some((
            Regex::new(&p.value).map_err(|e| {
                ConfigError::at(file, p, format!("{}='{}' is not a regular expression: {e}", p.key, p.value)).with_fix("write a Java regular expression")
            })?,
            file.at(p),
        )),
        _ => None,
    };
    Ok(Provider { name: name.to_string(), kind, allowed_paths, allowlist })
}

/// `allowed.paths` as Java's `AllowedPaths` reads it: comma-separated,
/// each absolute and existing (else Java's ConfigException), normalised;
/// empty means every path.
fn allowed_paths(file: &PropertiesFile, p: &Property) -> Result<Option<Vec<PathBuf>>, ConfigError> {
    if p.value.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for entry in p.value.split(',') {
        let path = normalised(Path::new(entry));
        if !path.is_absolute() {
            return Err(ConfigError::at(file, p, format!("{}: path '{}' is not absolute, as Java requires", p.key, path.display()))
                .with_fix("list absolute paths, comma-separated, no spaces"));
        }
        if !path.exists() {
            return Err(ConfigError::at(file, p, format!("{}: path '{}' does not exist (Java refuses it too)", p.key, path.display()))
                .with_fix("list directories or files that exist"));
        }
        out.push(path);
    }
    Ok(Some(out))
}

/// Java's `Path.normalize()`: `.` dropped and `name/..` folded, lexically.
fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            Component::ParentDir if out.has_root() => {}
            other => out.push(other),
        }
    }
    out
}

/// What went wrong with one reference, and what to do.
type Refusal = (String, String);

impl Provider {
    /// The path a reference may read, as `AllowedPaths.parseUntrustedPath`
    /// decides (whole path components, after normalising).
    fn allowed(&self, path: &str) -> Result<PathBuf, Refusal> {
        let Some(list) = &self.allowed_paths else { return Ok(PathBuf::from(path)) };
        let p = normalised(Path::new(path));
        if list.iter().any(|a| p.starts_with(a)) {
            return Ok(p);
        }
        let shown: Vec<String> = list.iter().map(|a| a.display().to_string()).collect();
        Err((
            format!("provider '{}' may not read '{path}': it is outside config.providers.{}.param.allowed.paths ({})", self.name, self.name, shown.join(",")),
            "move the file under an allowed path or add its directory to allowed.paths".into(),
        ))
    }

    /// `FileConfigProvider`: the key's value in the properties file at the path.
    fn read_file(&self, r: &Reference) -> Result<String, Refusal> {
        let Some(path) = r.path.as_deref().filter(|p| !p.is_empty()) else {
            return Err((
                format!("provider '{}' (FileConfigProvider) needs a file: '${{{}:/path/file.properties:{}}}'", self.name, self.name, r.key),
                "name the properties file between the provider and the key".into(),
            ));
        };
        let path = self.allowed(path)?;
        let bytes = std::fs::read(&path).map_err(|e| {
            (
                format!("provider '{}' cannot read the properties file {}: {e}", self.name, path.display()),
                "check the path and that the mirror's user may read it".into(),
            )
        })?;
        let values = reference::properties_utf8(&path, &bytes).map_err(|e| (format!("provider '{}': {e}", self.name), "fix that file".into()))?;
        values.into_iter().find(|(k, _)| *k == r.key).map(|(_, v)| v).ok_or_else(|| {
            (
                format!("provider '{}': the properties file {} has no key '{}'", self.name, path.display(), r.key),
                format!("add '{}=...' to {}", r.key, path.display()),
            )
        })
    }

    /// `DirectoryConfigProvider`: the whole content of the file named by the
    /// key, directly in the directory at the path, as UTF-8 and untrimmed.
    fn read_dir(&self, r: &Reference) -> Result<String, Refusal> {
        let Some(dir) = r.path.as_deref().filter(|p| !p.is_empty()) else {
            return Err((
                format!("provider '{}' (DirectoryConfigProvider) needs a directory: '${{{}:/path/dir:{}}}'", self.name, self.name, r.key),
                "name the directory between the provider and the file name".into(),
            ));
        };
        let dir = self.allowed(dir)?;
        if !dir.is_dir() {
            return Err((format!("provider '{}': {} is not a directory", self.name, dir.display()), "name a directory that holds one file per value".into()));
        }
        // Java lists the directory's regular files: no subdirectory, no `..`.
        let file = dir.join(&r.key);
        let direct = Path::new(&r.key).components().count() == 1 && matches!(Path::new(&r.key).components().next(), Some(Component::Normal(_)));
        if !direct || !file.is_file() {
            return Err((
                format!("provider '{}': the directory {} has no file '{}'", self.name, dir.display(), r.key),
                format!("create {} holding the value (a file directly in the directory)", file.display()),
            ));
        }
        let bytes = std::fs::read(&file)
            .map_err(|e| (format!("provider '{}' cannot read {}: {e}", self.name, file.display()), "check that the mirror's user may read it".into()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `EnvVarConfigProvider`: the variable, if `allowlist.pattern` finds
    /// its name (Java's `Pattern.asPredicate`, a search, not a whole match).
    fn read_env(&self, r: &Reference) -> Result<String, Refusal> {
        if let Some(path) = r.path.as_deref().filter(|p| !p.is_empty()) {
            return Err((
                format!("provider '{}' (EnvVarConfigProvider) takes no path ('{path}'); Java refuses one too", self.name),
                format!("write '${{{}:{}}}'", self.name, r.key),
            ));
        }
        if let Some((pattern, at)) = &self.allowlist {
            if !pattern.is_match(&r.key) {
                return Err((
                    format!("provider '{}': the environment variable {} is not allowed by allowlist.pattern '{}' ({at})", self.name, r.key, pattern.as_str()),
                    "widen the pattern or use an allowed variable".into(),
                ));
            }
        }
        std::env::var(&r.key).map_err(|e| {
            let what = match e {
                std::env::VarError::NotPresent => "is not set",
                std::env::VarError::NotUnicode(_) => "is not valid Unicode",
            };
            (format!("provider '{}': the environment variable {} {what}", self.name, r.key), format!("set {} in the mirror's environment", r.key))
        })
    }
}
