//! The problems Java MirrorMaker 2 keeps quiet about (reference §1.1, §1.3,
//! §6): misspelled keys, keys that do nothing where they are written, keys
//! guides invented, values that are not what they look like. Each line of
//! the file is judged once, by where it sits (top level, `<alias>.`,
//! `<S>-><T>.`), and every message says what Java does with it and what to
//! write instead. Only what would make the mirror do something other than
//! what the file plainly asks is an error.

use super::keys::{
    dead_key, hint, hint_prefixed, is_client_key, is_connector_key, is_source_connector_key, is_worker_key, is_worker_top_level, nearest, no_effect_here,
    worker_def, BOOTSTRAP_SERVERS, CLUSTERS, CONFIG_PROVIDERS, CONNECTOR_CLASS, DEDICATED_MODE_ENABLE_INTERNAL_REST, DRIVER_KEYS, ENABLED, LISTENERS, NAME,
    PREDICATES, SOURCE_CLUSTER_ALIAS, TARGET_CLUSTER_ALIAS, TRANSFORMS, USE_DEFAULTS_FROM, WORKER_KEYS,
};

/// The keys that name a flow's connector or its clusters, which the driver sets per flow.
fn names_the_flow(key: &str) -> bool {
    [NAME, CONNECTOR_CLASS, SOURCE_CLUSTER_ALIAS.name, TARGET_CLUSTER_ALIAS.name].contains(&key)
}
use super::messages::Messages;
use super::raw::java_trim;
use crate::front::properties::{ConfigError, PropertiesFile, Property};

/// Where a key sits in the file.
#[derive(Debug, PartialEq, Eq)]
pub enum Place<'k> {
    /// `<source>-><target>.<rest>`, both aliases listed in `clusters`.
    Flow {
        source: &'k str,
        target: &'k str,
        rest: &'k str,
    },
    /// `<alias>.<rest>`, the alias listed in `clusters`.
    Cluster {
        alias: &'k str,
        rest: &'k str,
    },
    TopLevel,
}

/// The longest listed alias `key` starts with, followed by a dot.
fn alias_prefix<'k>(key: &'k str, aliases: &[String]) -> Option<(&'k str, &'k str)> {
    aliases
        .iter()
        .filter(|a| key.len() > a.len() + 1 && key.starts_with(a.as_str()) && key.as_bytes()[a.len()] == b'.')
        .max_by_key(|a| a.len())
        .map(|a| (&key[..a.len()], &key[a.len() + 1..]))
}

pub fn place<'k>(key: &'k str, aliases: &[String]) -> Place<'k> {
    if let Some((source, after)) = key.split_once("->") {
        if aliases.iter().any(|a| a == source) {
            if let Some((target, rest)) = alias_prefix(after, aliases) {
                return Place::Flow { source, target, rest };
            }
        }
    }
    // A top-level key Java knows stays top-level even if an alias happens to prefix it.
    if is_top_level_known(key) {
        return Place::TopLevel;
    }
    match alias_prefix(key, aliases) {
        Some((alias, rest)) => Place::Cluster { alias, rest },
        None => Place::TopLevel,
    }
}

fn is_top_level_known(key: &str) -> bool {
    DRIVER_KEYS.contains(&key) || is_connector_key(key) || is_worker_top_level(key)
}

/// Judges every line; errors stop the start, the rest goes to `msgs`.
pub fn check(file: &PropertiesFile, aliases: &[String], msgs: &mut Messages) -> Result<(), ConfigError> {
    for p in &file.props {
        let at = format!("{}:{}", file.path.display(), p.line);
        check_value(file, &at, p, msgs)?;
        let connector_key = match place(&p.key, aliases) {
            Place::Flow { source, target, rest } => {
                flow_key(file, &at, p, source, target, rest, msgs)?;
                rest
            }
            Place::Cluster { alias, rest } => {
                cluster_key(&at, p, alias, rest, msgs);
                ""
            }
            Place::TopLevel => {
                top_level_key(file, &at, p, aliases, msgs)?;
                p.key.as_str()
            }
        };
        if connector_key == TRANSFORMS && !java_trim(&p.value).is_empty() {
            msgs.warn(format!(
                "{at}: {}={}: Connect transforms (SMTs) are Java classes this mirror does not run; records are copied unchanged",
                p.key,
                java_trim(&p.value)
            ));
        }
    }
    Ok(())
}

/// What a value says that its writer probably did not mean.
fn check_value(file: &PropertiesFile, at: &str, p: &Property, msgs: &mut Messages) -> Result<(), ConfigError> {
    if p.key.ends_with(BOOTSTRAP_SERVERS) && p.value.contains(';') {
        let fixed = p.value.split(';').map(str::trim).collect::<Vec<_>>().join(",");
        return Err(ConfigError::at(
            file,
            p,
            format!("{}='{}': bootstrap.servers is a comma-separated list, so Java reads this as one malformed address", p.key, p.value.trim()),
        )
        .with_fix(format!("write {}={fixed}", p.key)));
    }
    if let Some(i) = p.value.find([' ', '\t']).filter(|&i| p.value[i..].trim_start().starts_with('#')) {
        msgs.warn(format!(
            "{at}: {}: the text from '#' on ('{}') is part of the value: Java reads '#' as a comment only at the start of a line. \
             Move the comment to a line of its own",
            p.key,
            p.value[i..].trim()
        ));
    }
    Ok(())
}

/// A target cluster of the file, for an example: the target of its first
/// enabled flow, else the first alias.
fn example_target<'a>(file: &'a PropertiesFile, first: &'a str) -> &'a str {
    file.props
        .iter()
        .find_map(|q| {
            let (_, target) = q.key.strip_suffix(".enabled")?.split_once("->")?;
            java_trim(&q.value).eq_ignore_ascii_case("true").then_some(target)
        })
        .unwrap_or(first)
}

fn top_level_key(file: &PropertiesFile, at: &str, p: &Property, aliases: &[String], msgs: &mut Messages) -> Result<(), ConfigError> {
    let key = p.key.as_str();
    let first = aliases.first().map_or("A", String::as_str);
    // Only keys Java keeps at top level: the others get the message that says where they belong.
    if let Some(why) = no_effect_here(key).filter(|_| is_top_level_known(key)) {
        no_effect_said(msgs, at, key, why);
        return Ok(());
    }
    match key {
        _ if names_the_flow(key) => {
            return Err(ConfigError::at(file, p, format!("{key} at top level would give every flow the same {key} (Java keeps it over the driver's per-flow value)"))
                .with_fix("remove the line"))
        }
        _ if key == ENABLED.name => msgs.warn(format!(
            "{at}: enabled={} at top level applies to every pair of clusters that has a herder (with heartbeats on, all of them: a full mesh), \
             as in Java; to turn on one flow write <source>-><target>.enabled = true",
            java_trim(&p.value)
        )),
        DEDICATED_MODE_ENABLE_INTERNAL_REST | LISTENERS => msgs.note(format!("{at}: {key} configures Java's Connect REST server; this mirror has none")),
        // The rest of MirrorMakerConfig's own keys but the client keys: the REST server's.
        _ if DRIVER_KEYS.contains(&key) && key != CLUSTERS && key != CONFIG_PROVIDERS => {
            msgs.note(format!("{at}: {key} configures Java's Connect REST server; this mirror has none"))
        }
        _ if key == CONFIG_PROVIDERS && !java_trim(&p.value).is_empty() && !file.props.iter().any(|q| q.value.contains("${")) => msgs.warn(format!(
            "{at}: {key} has no effect: no value in the file refers to a provider ('${{name:...}}'), so no provider would be asked for anything"
        )),
        _ if is_top_level_known(key) => {}
        _ if key == USE_DEFAULTS_FROM.name || is_source_connector_key(key) => msgs.warn(format!(
            "{at}: {key} is ignored at top level: Java keeps only keys of the MirrorMaker connectors' ConfigDefs there; write <source>-><target>.{key} for each flow"
        )),
        _ if WORKER_KEYS.contains(&key) => msgs.warn(format!(
            "{at}: {key} is ignored at top level: Java reads Connect worker settings per target cluster; write <target>.{key} (e.g. {}.{key})",
            example_target(file, first)
        )),
        _ if is_role_prefixed(key) => {
            let (role, k) = key.split_once('.').unwrap_or((key, ""));
            msgs.warn(format!(
                "{at}: {key} is ignored: Java drops top-level {role}.* keys. Write it per cluster ({first}.{role}.{k}) or per flow (<source>-><target>.{role}.{k}){}",
                if role == "producer" { "; the replicated data's producer takes <target>.producer.* or <source>-><target>.producer.override.*" } else { "" }
            ))
        }
        _ => unknown_top_level(at, key, aliases, msgs),
    }
    Ok(())
}

/// One line for a key with no effect here: a warning, but a note for the
/// Connect worker's own topics (`config.storage.*`, `status.storage.*`),
/// which Kafka's sample file sets and which cost nothing to leave in.
fn no_effect_said(msgs: &mut Messages, at: &str, key: &str, why: &str) {
    let said = format!("{at}: {key} has no effect in this mirror: {why}");
    let worker_topic = ["config.storage.", "status.storage."].iter().any(|w| key.starts_with(w) || key.contains(&format!(".{w}")));
    if worker_topic {
        msgs.note(said)
    } else {
        msgs.warn(said)
    }
}

fn is_role_prefixed(key: &str) -> bool {
    ["consumer.", "producer.", "admin."].iter().any(|r| key.starts_with(r))
}

fn unknown_top_level(at: &str, key: &str, aliases: &[String], msgs: &mut Messages) {
    if let Some(dead) = dead_key(key) {
        return msgs.warn(format!("{at}: {key} does nothing: {dead}"));
    }
    if key.contains("->") {
        return msgs.warn(format!(
            "{at}: {key} is ignored: '{}' is not a pair of the aliases in clusters ({}), so Java never reads it",
            key.split('.').next().unwrap_or(key),
            aliases.join(", ")
        ));
    }
    if let Some((alias, rest)) = key.split_once('.').filter(|(_, rest)| is_client_key(rest) || is_role_prefixed(rest)) {
        let near = nearest(alias, aliases).map(|a| format!(" Did you mean '{a}.{rest}'?")).unwrap_or_default();
        return msgs.warn(format!("{at}: {key} is ignored: '{alias}' is not one of the aliases in clusters ({}).{near}", aliases.join(", ")));
    }
    msgs.warn(format!("{at}: unknown key {key} is ignored (Java ignores it without a word).{}", hint(key, [])));
}

fn cluster_key(at: &str, p: &Property, alias: &str, rest: &str, msgs: &mut Messages) {
    let key = &p.key;
    if is_client_key(rest) {
        return;
    }
    if let Some(k) = rest.strip_prefix("producer.override.") {
        return msgs.warn(format!(
            "{at}: {key} does nothing: Java hands it to the producer as 'override.{k}', which no producer reads; write {alias}.producer.{k} \
             (every flow into {alias}) or <source>->{alias}.producer.override.{k} (one flow)"
        ));
    }
    if let Some(why) = no_effect_here(rest) {
        return no_effect_said(msgs, at, key, why);
    }
    if rest == "admin.listeners" {
        return msgs.note(format!("{at}: {key} configures the admin listeners of Java's Connect REST server; this mirror has none"));
    }
    if is_role_prefixed(rest) {
        let (role, k) = rest.split_once('.').unwrap_or((rest, ""));
        // `A.admin.k`: the admin clients' layer, honoured; the
        // translation of their settings judges `k`.
        if role == "admin" && !is_connector_key(rest) {
            return;
        }
        if is_connector_key(rest) {
            return msgs.warn(format!(
                "{at}: {key} does nothing: {rest} is a connector setting, which Java reads at top level or per flow, and the {role} ignores '{k}'; \
                 write {rest} or <source>-><target>.{rest}"
            ));
        }
        return;
    }
    if is_worker_key(rest) {
        if worker_def(rest).is_none() {
            msgs.note(format!("{at}: {key} is a Connect worker setting of the flows into {alias}; this mirror runs no Connect worker and does not use it"));
        }
        return;
    }
    if is_connector_key(rest) || rest == USE_DEFAULTS_FROM.name || is_source_connector_key(rest) {
        return msgs.warn(format!(
            "{at}: {key} has no effect: Java passes cluster-level keys to the connectors as source.cluster.{rest} / target.cluster.{rest}, \
             which nothing reads. Write {rest} (every flow) or {alias}-><target>.{rest} / <source>->{alias}.{rest} (one flow)"
        ));
    }
    if let Some(dead) = dead_key(rest) {
        return msgs.warn(format!("{at}: {key} does nothing: {dead}"));
    }
    let near = hint_prefixed(rest, &format!("{alias}."), WORKER_KEYS.iter().copied());
    if near.is_empty() {
        msgs.note(format!("{at}: {key} goes to the Connect worker of the flows into {alias} in Java; this mirror runs no Connect worker and does not use it"));
    } else {
        msgs.warn(format!("{at}: unknown key {key} is ignored (Java ignores it without a word).{near}"));
    }
}

fn flow_key(file: &PropertiesFile, at: &str, p: &Property, source: &str, target: &str, rest: &str, msgs: &mut Messages) -> Result<(), ConfigError> {
    let key = &p.key;
    if source == target {
        msgs.warn(format!("{at}: {key} is ignored: a cluster does not replicate into itself, and Java creates no flow {source}->{target}"));
        return Ok(());
    }
    if let Some(why) = no_effect_here(rest) {
        no_effect_said(msgs, at, key, why);
        return Ok(());
    }
    match rest {
        _ if names_the_flow(rest) => {
            return Err(ConfigError::at(
                file,
                p,
                format!(
                    "{key} would rename the flow's clusters inside Java's connectors (remote topic names, heartbeats); this mirror names them \
                 by the aliases of clusters. Remove the line, or rename the alias in clusters"
                ),
            ))
        }
        _ if is_connector_key(rest) || rest == USE_DEFAULTS_FROM.name || is_source_connector_key(rest) => {}
        _ if rest.starts_with("producer.override.") => {}
        _ if rest.starts_with("producer.") => msgs.warn(format!(
            "{at}: {key} tunes only the producer of the offset-syncs topic, as in Java; the producer of the replicated records takes \
             {source}->{target}.producer.override.{} (or {target}.producer.{} for every flow into {target})",
            &rest[9..],
            &rest[9..]
        )),
        _ if is_role_prefixed(rest) || rest.starts_with("source.") || rest.starts_with("target.") => {}
        _ if [TRANSFORMS, PREDICATES, "errors.", CONFIG_PROVIDERS].iter().any(|x| rest.starts_with(x)) => {}
        _ => match dead_key(rest) {
            Some(dead) => msgs.warn(format!("{at}: {key} does nothing: {dead}")),
            None => {
                let near = hint_prefixed(rest, &format!("{source}->{target}."), []);
                msgs.warn(format!("{at}: unknown key {key} is ignored (Java ignores it without a word).{near}"));
            }
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aliases() -> Vec<String> {
        vec!["A".into(), "B".into(), "us.west".into(), "us".into()]
    }

    #[test]
    fn places() {
        let a = aliases();
        assert_eq!(place("A->B.topics", &a), Place::Flow { source: "A", target: "B", rest: "topics" });
        assert_eq!(place("A->us.west.enabled", &a), Place::Flow { source: "A", target: "us.west", rest: "enabled" });
        assert_eq!(place("us.west.bootstrap.servers", &a), Place::Cluster { alias: "us.west", rest: "bootstrap.servers" });
        assert_eq!(place("us.bootstrap.servers", &a), Place::Cluster { alias: "us", rest: "bootstrap.servers" });
        assert_eq!(place("A.consumer.x", &a), Place::Cluster { alias: "A", rest: "consumer.x" });
        assert_eq!(place("topics", &a), Place::TopLevel);
        assert_eq!(place("C->B.enabled", &a), Place::TopLevel);
        assert_eq!(place("A.", &a), Place::TopLevel);
    }
}
