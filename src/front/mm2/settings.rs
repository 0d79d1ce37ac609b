//! A flow's connector keys (reference §1.6) typed as Java's ConfigDef
//! types them: strict booleans, whole numbers of the right width, the
//! lists, the enumerations; every value with where it came from.
//!
//! Java validates a key only in the ConfigDef of the connector that
//! defines it, and a refused value stops that connector, not the process;
//! here a value Java would refuse stops the start with file:line and key,
//! since a flow that silently lacks a connector is the failure users could
//! not see.

use std::path::Path;
use std::time::Duration;

use super::assemble::{Config, Val};
use super::keys::*;
use super::raw::{java_trim, parse_list};
use crate::front::properties::ConfigError;

/// One effective setting: its value and its origin (`file:line: key`, `default`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingOrigin {
    pub key: String,
    pub value: String,
    pub origin: String,
}

/// A periodic job: `<job>.enabled` and `<job>.interval.seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Periodic {
    pub enabled: bool,
    pub interval_seconds: i64,
}

impl Periodic {
    /// Java disables the job when it is off or its interval is negative.
    pub fn interval(&self) -> Option<Duration> {
        (self.enabled && self.interval_seconds >= 0).then(|| Duration::from_secs(self.interval_seconds as u64))
    }
}

/// `offset-syncs.topic.location` (KIP-716).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Source,
    Target,
}

/// `use.defaults.from`: whose default topic configs a synced topic keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultsFrom {
    Source,
    Target,
}

/// `use.incremental.alter.configs` (KIP-894).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncrementalAlterConfigs {
    Requested,
    Required,
    Never,
}

/// Every connector key of §1.6 for one flow, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSettings {
    pub enabled: bool,
    pub tasks_max: i32,
    pub topics: Vec<String>,
    pub topics_exclude: Vec<String>,
    pub groups: Vec<String>,
    pub groups_exclude: Vec<String>,
    pub replication_factor: i32,
    pub offset_syncs_topic_replication_factor: i16,
    pub checkpoints_topic_replication_factor: i16,
    pub heartbeats_topic_replication_factor: i16,
    pub offset_syncs_topic_location: Location,
    pub emit_offset_syncs_enabled: bool,
    pub offset_lag_max: i64,
    pub refresh_topics: Periodic,
    pub sync_topic_configs: Periodic,
    pub sync_topic_acls: Periodic,
    pub refresh_groups: Periodic,
    pub emit_checkpoints: Periodic,
    pub sync_group_offsets: Periodic,
    pub emit_heartbeats: Periodic,
    pub config_properties_exclude: Vec<String>,
    pub use_defaults_from: DefaultsFrom,
    pub use_incremental_alter_configs: IncrementalAlterConfigs,
    pub consumer_poll_timeout_ms: i64,
    pub admin_timeout_ms: i64,
    pub add_source_alias_to_metrics: bool,
    pub replication_policy_class: String,
    /// Raw, as the policy reads it (Java does not trim it).
    pub replication_policy_separator: Option<String>,
    pub topic_filter_class: String,
    pub group_filter_class: String,
    pub config_property_filter_class: String,
    pub forwarding_admin_class: String,
    /// `requested` or `required`, lower-cased.
    pub exactly_once_support: String,
    /// `poll` or `interval` (`connector` is refused: MirrorSourceConnector
    /// defines no boundaries).
    pub transaction_boundary: String,
    /// Unset: the worker's `offset.flush.interval.ms`, as Java's default.
    pub transaction_boundary_interval_ms: Option<i64>,
}

/// Reads typed values out of a flow's connector config, recording origins.
pub(crate) struct Reader<'c, 'a> {
    cc: &'c Config<'a>,
    path: &'c Path,
    pub origins: Vec<SettingOrigin>,
    pub warnings: Vec<String>,
}

impl<'c, 'a> Reader<'c, 'a> {
    pub fn new(cc: &'c Config<'a>, path: &'c Path) -> Self {
        Reader { cc, path, origins: Vec::new(), warnings: Vec::new() }
    }

    fn at(&self, v: &Val<'_>) -> String {
        match v.from {
            Some(p) => match &p.resolved {
                Some(refs) => format!("{}:{}: {} via {refs}", self.path.display(), p.line, p.key),
                None => format!("{}:{}: {}", self.path.display(), p.line, p.key),
            },
            None => "MirrorMaker 2's driver".into(),
        }
    }

    /// `value` of `v` as reports show it: a config provider's value never is.
    fn shown(v: Option<&Val<'_>>, value: String) -> String {
        if v.and_then(|v| v.from).is_some_and(|p| p.resolved.is_some()) {
            "[redacted]".into()
        } else {
            value
        }
    }

    /// The value in effect: the key, or its deprecated alias (the new name
    /// wins when both are set, as `ConfigUtils.translateDeprecatedConfigs`
    /// decides), or `None` for Java's default.
    fn lookup(&mut self, key: &str) -> Option<Val<'a>> {
        let old = DEPRECATED.iter().find(|(_, new)| *new == key).map(|(old, _)| *old);
        match (self.cc.get(key), old.and_then(|o| self.cc.get(o))) {
            (Some(v), Some(alias)) => {
                let (kept, ignored) = (self.at(v), self.at(alias));
                self.warnings.push(format!("{ignored} is ignored: {kept} is also set and Java uses {key} (the new name) when both are"));
                Some(v.clone())
            }
            (Some(v), None) => Some(v.clone()),
            (None, Some(alias)) => {
                self.warnings.push(format!("{}: deprecated name (Java still reads it); rename it to {key}", self.at(alias)));
                Some(alias.clone())
            }
            (None, None) => None,
        }
    }

    /// The trimmed text of a key (or its default), recorded in `origins`.
    fn text(&mut self, def: &KeyDef) -> (String, Option<Val<'a>>) {
        let found = self.lookup(def.name);
        let (value, origin) = match &found {
            Some(v) => (java_trim(&v.value).to_string(), self.at(v)),
            None => (def.default.unwrap_or_default().to_string(), "default".to_string()),
        };
        self.origins.push(SettingOrigin { key: def.name.to_string(), value: Self::shown(found.as_ref(), value.clone()), origin });
        (value, found)
    }

    fn refuse(&self, v: &Option<Val<'_>>, key: &str, value: &str, why: &str) -> ConfigError {
        let value = &Self::shown(v.as_ref(), value.to_string());
        match v.as_ref().and_then(|v| v.from) {
            Some(p) => ConfigError::at_line(self.path, p.line, format!("{}='{value}' {why}", p.key)).with_key(p.key.clone()),
            // Java's default, or a value the driver sets: no line says it.
            None => {
                let at = v.as_ref().map_or_else(|| format!("default {key}"), |v| self.at(v));
                ConfigError::new(format!("{at}='{value}' {why}")).with_key(key)
            }
        }
    }

    pub fn bool(&mut self, def: &KeyDef) -> Result<bool, ConfigError> {
        let (t, v) = self.text(def);
        match t.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.refuse(
                &v,
                def.name,
                &t,
                "must be true or false: Java's ConfigDef refuses anything else (yes, 1, on ...) and the connector does not start",
            )),
        }
    }

    fn number<T: std::str::FromStr>(&mut self, def: &KeyDef, what: &str) -> Result<T, ConfigError> {
        let (t, v) = self.text(def);
        t.parse::<T>().map_err(|_| self.refuse(&v, def.name, &t, &format!("must be a whole number ({what}), as Java's ConfigDef reads it")))
    }

    pub fn int(&mut self, def: &KeyDef) -> Result<i32, ConfigError> {
        self.number(def, "INT, -2147483648..2147483647")
    }

    pub fn short(&mut self, def: &KeyDef) -> Result<i16, ConfigError> {
        self.number(def, "SHORT, -32768..32767")
    }

    pub fn long(&mut self, def: &KeyDef) -> Result<i64, ConfigError> {
        self.number(def, "LONG")
    }

    pub fn list(&mut self, def: &KeyDef) -> Vec<String> {
        let key = def.name;
        match self.lookup(key) {
            Some(v) => {
                let at = self.at(&v);
                self.origins.push(SettingOrigin { key: key.into(), value: Self::shown(Some(&v), java_trim(&v.value).into()), origin: at });
                parse_list(&v.value)
            }
            None => {
                let list: Vec<String> = match list_default(key) {
                    Some(l) => l.iter().map(|s| s.to_string()).collect(),
                    None => def.default.map(parse_list).unwrap_or_default(),
                };
                self.origins.push(SettingOrigin { key: key.into(), value: list.join(", "), origin: "default".into() });
                list
            }
        }
    }

    pub fn string(&mut self, def: &KeyDef) -> String {
        self.text(def).0
    }

    /// A `ValidString.in(...)` key: one of its values (any case where Java allows it), lower-cased.
    pub fn one_of(&mut self, def: &KeyDef) -> Result<String, ConfigError> {
        let key = def.name;
        let (allowed, any_case) = match def.ty {
            Ty::OneOf(a) => (a, false),
            Ty::OneOfAnyCase(a) => (a, true),
            _ => panic!("{key} is not an enumeration"),
        };
        let (t, v) = self.text(def);
        let t = if any_case { t.to_ascii_lowercase() } else { t };
        if allowed.contains(&t.as_str()) {
            return Ok(t);
        }
        let case = if any_case { "" } else { " (lower case, as Java's ConfigDef checks it)" };
        Err(self.refuse(&v, key, &t, &format!("must be one of {}{case}", allowed.join(", "))))
    }

    /// The raw value of a key, untrimmed, for the few Java reads raw.
    pub fn raw(&self, def: &KeyDef) -> Option<&Val<'a>> {
        self.cc.get(def.name)
    }

    /// A job's `<job>.enabled` and `<job>.interval.seconds`.
    fn periodic(&mut self, enabled: &KeyDef, interval: &KeyDef) -> Result<Periodic, ConfigError> {
        Ok(Periodic { enabled: self.bool(enabled)?, interval_seconds: self.long(interval)? })
    }

    /// Replication factors: Java creates topics with `(short)` of the value;
    /// only -1 (the broker's default) and 1 and up make a topic.
    fn replication_factor(&mut self, def: &KeyDef, value: i64) -> Result<(), ConfigError> {
        if value == -1 || (1..=i64::from(i16::MAX)).contains(&value) {
            return Ok(());
        }
        let v = self.cc.get(def.name).cloned();
        Err(self.refuse(
            &v,
            def.name,
            &value.to_string(),
            "must be at least 1 (or -1 for the broker's default.replication.factor): Java cannot create topics with it",
        ))
    }
}

/// All §1.6 keys of one flow.
pub(crate) fn read(r: &mut Reader<'_, '_>) -> Result<FlowSettings, ConfigError> {
    let tasks_max = r.int(&TASKS_MAX)?;
    if tasks_max < 1 {
        let v = r.raw(&TASKS_MAX).cloned();
        return Err(r.refuse(&v, TASKS_MAX.name, &tasks_max.to_string(), "must be at least 1, as Java's ConfigDef requires"));
    }
    let replication_factor = r.int(&REPLICATION_FACTOR)?;
    r.replication_factor(&REPLICATION_FACTOR, replication_factor.into())?;
    let offset_syncs_rf = r.short(&OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR)?;
    r.replication_factor(&OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR, offset_syncs_rf.into())?;
    let checkpoints_rf = r.short(&CHECKPOINTS_TOPIC_REPLICATION_FACTOR)?;
    r.replication_factor(&CHECKPOINTS_TOPIC_REPLICATION_FACTOR, checkpoints_rf.into())?;
    let heartbeats_rf = r.short(&HEARTBEATS_TOPIC_REPLICATION_FACTOR)?;
    r.replication_factor(&HEARTBEATS_TOPIC_REPLICATION_FACTOR, heartbeats_rf.into())?;
    let location = match r.one_of(&OFFSET_SYNCS_TOPIC_LOCATION)?.as_str() {
        "target" => Location::Target,
        _ => Location::Source,
    };
    let use_defaults_from = match r.one_of(&USE_DEFAULTS_FROM)?.as_str() {
        "source" => DefaultsFrom::Source,
        _ => DefaultsFrom::Target,
    };
    let incremental = match r.one_of(&USE_INCREMENTAL_ALTER_CONFIGS)?.as_str() {
        "required" => IncrementalAlterConfigs::Required,
        "never" => IncrementalAlterConfigs::Never,
        _ => IncrementalAlterConfigs::Requested,
    };
    // Recorded trimmed for `origins`; the policy takes it raw, as Java's does.
    r.string(&REPLICATION_POLICY_SEPARATOR);
    let separator = r.raw(&REPLICATION_POLICY_SEPARATOR).map(|v| v.value.clone());
    let transaction_boundary = r.one_of(&TRANSACTION_BOUNDARY)?;
    if transaction_boundary == "connector" {
        let v = r.raw(&TRANSACTION_BOUNDARY).cloned();
        return Err(r.refuse(
            &v,
            TRANSACTION_BOUNDARY.name,
            "connector",
            "is refused by Java for MirrorSourceConnector, which defines no transaction boundaries; use poll (a transaction per batch read) or interval",
        ));
    }
    let transaction_boundary_interval_ms = match r.raw(&TRANSACTION_BOUNDARY_INTERVAL_MS).cloned() {
        None => None,
        Some(v) => {
            let ms = r.long(&TRANSACTION_BOUNDARY_INTERVAL_MS)?;
            if ms < 0 {
                return Err(r.refuse(&Some(v), TRANSACTION_BOUNDARY_INTERVAL_MS.name, &ms.to_string(), "must be at least 0, as Java's ConfigDef requires"));
            }
            Some(ms)
        }
    };
    Ok(FlowSettings {
        enabled: r.bool(&ENABLED)?,
        tasks_max,
        topics: r.list(&TOPICS),
        topics_exclude: r.list(&TOPICS_EXCLUDE),
        groups: r.list(&GROUPS),
        groups_exclude: r.list(&GROUPS_EXCLUDE),
        replication_factor,
        offset_syncs_topic_replication_factor: offset_syncs_rf,
        checkpoints_topic_replication_factor: checkpoints_rf,
        heartbeats_topic_replication_factor: heartbeats_rf,
        offset_syncs_topic_location: location,
        emit_offset_syncs_enabled: r.bool(&EMIT_OFFSET_SYNCS_ENABLED)?,
        offset_lag_max: r.long(&OFFSET_LAG_MAX)?,
        refresh_topics: r.periodic(&REFRESH_TOPICS_ENABLED, &REFRESH_TOPICS_INTERVAL_SECONDS)?,
        sync_topic_configs: r.periodic(&SYNC_TOPIC_CONFIGS_ENABLED, &SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS)?,
        sync_topic_acls: r.periodic(&SYNC_TOPIC_ACLS_ENABLED, &SYNC_TOPIC_ACLS_INTERVAL_SECONDS)?,
        refresh_groups: r.periodic(&REFRESH_GROUPS_ENABLED, &REFRESH_GROUPS_INTERVAL_SECONDS)?,
        emit_checkpoints: r.periodic(&EMIT_CHECKPOINTS_ENABLED, &EMIT_CHECKPOINTS_INTERVAL_SECONDS)?,
        sync_group_offsets: r.periodic(&SYNC_GROUP_OFFSETS_ENABLED, &SYNC_GROUP_OFFSETS_INTERVAL_SECONDS)?,
        emit_heartbeats: r.periodic(&EMIT_HEARTBEATS_ENABLED, &EMIT_HEARTBEATS_INTERVAL_SECONDS)?,
        config_properties_exclude: r.list(&CONFIG_PROPERTIES_EXCLUDE),
        use_defaults_from,
        use_incremental_alter_configs: incremental,
        consumer_poll_timeout_ms: r.long(&CONSUMER_POLL_TIMEOUT_MS)?,
        admin_timeout_ms: r.long(&ADMIN_TIMEOUT_MS)?,
        add_source_alias_to_metrics: r.bool(&ADD_SOURCE_ALIAS_TO_METRICS)?,
        replication_policy_class: r.string(&REPLICATION_POLICY_CLASS),
        replication_policy_separator: separator,
        topic_filter_class: r.string(&TOPIC_FILTER_CLASS),
        group_filter_class: r.string(&GROUP_FILTER_CLASS),
        config_property_filter_class: r.string(&CONFIG_PROPERTY_FILTER_CLASS),
        forwarding_admin_class: r.string(&FORWARDING_ADMIN_CLASS),
        exactly_once_support: r.one_of(&EXACTLY_ONCE_SUPPORT)?,
        transaction_boundary,
        transaction_boundary_interval_ms,
    })
}

/// The Connect worker settings of a flow's herder (reference §1.5) that a
/// mirror taking over from Java, or handing back to it, must agree on.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerSettings {
    pub group_id: String,
    pub client_id: String,
    /// Where Java keeps its source positions (`mm2-offsets.<source>.internal`).
    pub offset_storage_topic: String,
    pub config_storage_topic: String,
    pub status_storage_topic: String,
    pub offset_storage_partitions: i32,
    pub status_storage_partitions: i32,
    pub offset_storage_replication_factor: i16,
    pub config_storage_replication_factor: i16,
    pub status_storage_replication_factor: i16,
    pub offset_flush_interval_ms: i64,
    pub offset_flush_timeout_ms: i64,
    /// `disabled`, `preparing` or `enabled`, lower-cased.
    pub exactly_once_source_support: String,
}

impl WorkerSettings {
    /// `exactly.once.source.support=enabled`: the flows into this target
    /// copy exactly once (`preparing` is Java's step before it).
    pub fn exactly_once_enabled(&self) -> bool {
        self.exactly_once_source_support == EXACTLY_ONCE_ENABLED
    }
}

pub(crate) fn read_worker(r: &mut Reader<'_, '_>) -> Result<WorkerSettings, ConfigError> {
    Ok(WorkerSettings {
        group_id: r.string(&WORKER_GROUP_ID),
        client_id: r.string(&WORKER_CLIENT_ID),
        offset_storage_topic: r.string(&OFFSET_STORAGE_TOPIC),
        config_storage_topic: r.string(&CONFIG_STORAGE_TOPIC),
        status_storage_topic: r.string(&STATUS_STORAGE_TOPIC),
        offset_storage_partitions: r.int(&OFFSET_STORAGE_PARTITIONS)?,
        status_storage_partitions: r.int(&STATUS_STORAGE_PARTITIONS)?,
        offset_storage_replication_factor: r.short(&OFFSET_STORAGE_REPLICATION_FACTOR)?,
        config_storage_replication_factor: r.short(&CONFIG_STORAGE_REPLICATION_FACTOR)?,
        status_storage_replication_factor: r.short(&STATUS_STORAGE_REPLICATION_FACTOR)?,
        offset_flush_interval_ms: r.long(&OFFSET_FLUSH_INTERVAL_MS)?,
        offset_flush_timeout_ms: r.long(&OFFSET_FLUSH_TIMEOUT_MS)?,
        exactly_once_source_support: r.one_of(&EXACTLY_ONCE_SOURCE_SUPPORT)?,
    })
}
