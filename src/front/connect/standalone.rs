//! Connect's standalone mode (`connect-standalone.sh worker.properties
//! connector1.properties [connector2.json ...]`, Java 3.9's
//! `ConnectStandalone`): the worker file, with its positions in
//! `offset.storage.file.filename` instead of the storage topics, and the
//! connector files, Java properties or JSON, read as Java reads them.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{distributed_only, WorkerConfig};
use crate::front::properties::{self, ConfigError, PropertiesFile};

/// Where a standalone worker keeps its positions.
pub const OFFSETS_FILE: &str = "offset.storage.file.filename";

/// Reads a standalone worker file.
pub fn load_worker(path: &Path) -> Result<WorkerConfig, ConfigError> {
    worker_config(properties::load(path)?)
}

/// Checks a standalone worker file already read.
pub fn worker_config(file: PropertiesFile) -> Result<WorkerConfig, ConfigError> {
    for (key, example) in [("bootstrap.servers", "bootstrap.servers=localhost:9092"), (OFFSETS_FILE, "offset.storage.file.filename=/tmp/connect.offsets")] {
        if file.get(key).is_none_or(|p| p.value.is_empty()) {
            return Err(ConfigError::in_file(&file.path, format!("{key} is missing; a standalone Connect worker needs it"))
                .with_key(key)
                .with_fix(format!("add e.g. {example}")));
        }
    }
    let offsets = PathBuf::from(&file.get(OFFSETS_FILE).expect("checked above").value);
    super::checked_worker(file, Some(offsets), lint)
}

/// The distributed worker's checks, but a distributed-only key is named as
/// having no effect, and the offsets file is a key of this mode.
fn lint(file: &PropertiesFile, warnings: &mut Vec<String>, notices: &mut Vec<String>) {
    let mut rest = file.clone();
    rest.props.retain(|p| p.key != OFFSETS_FILE && !distributed_only(&p.key));
    super::lint(&rest, warnings, notices);
    for p in file.props.iter().filter(|p| distributed_only(&p.key)) {
        warnings.push(format!(
            "{}: {} is a distributed worker's key and has no effect in standalone mode (Java's ConnectStandalone ignores it too): \
             positions live in {OFFSETS_FILE} and connector configs in memory. Remove it",
            file.at(p),
            p.key
        ));
    }
}

/// A connector's initial state (`initial_state` of a JSON create request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialState {
    Running,
    Paused,
    Stopped,
}

/// One connector file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorFile {
    pub name: String,
    pub config: Vec<(String, String)>,
    pub initial_state: Option<InitialState>,
}

/// Reads a connector file as Java 3.9's `ConnectStandalone` does, trying in
/// turn: a JSON object of string values (the connector config itself), a
/// JSON create request `{"name":..,"config":{..},"initial_state":..}`, and a
/// Java properties file. Each form needs the connector's `name`.
pub fn load_connector(path: &Path) -> Result<ConnectorFile, ConfigError> {
    let text = std::fs::read(path).map_err(|e| ConfigError::new(format!("cannot read connector file {}: {e}", path.display())))?;
    connector_file(path, &text)
}

pub fn connector_file(path: &Path, text: &[u8]) -> Result<ConnectorFile, ConfigError> {
    let looks_json = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if !looks_json {
        let file = properties::parse(path, text)?;
        let config: Vec<(String, String)> = file.props.iter().map(|p| (p.key.clone(), p.value.clone())).collect();
        return named(path, config, None);
    }
    let json: Map<String, Value> = serde_json::from_slice(text).map_err(|e| {
        ConfigError::in_file(path, format!("not valid JSON: {e}"))
            .with_fix("write the connector config as a JSON object of strings, as {\"name\":..,\"config\":{..}}, or as a properties file")
    })?;
    if let Some(config) = flat(&json) {
        return named(path, config, None);
    }
    create_request(path, &json)
}

/// The object as a config when every value is a string (or a number or a
/// boolean, which Jackson turns into its text as Java reads the file).
fn flat(json: &Map<String, Value>) -> Option<Vec<(String, String)>> {
    json.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Some((k.clone(), s.clone())),
            Value::Number(_) | Value::Bool(_) => Some((k.clone(), v.to_string())),
            _ => None,
        })
        .collect()
}

fn create_request(path: &Path, json: &Map<String, Value>) -> Result<ConnectorFile, ConfigError> {
    let shape =
        "write either the connector config as a JSON object of strings, or a create request {\"name\":\"...\",\"config\":{\"connector.class\":\"...\",...}}";
    let Some(Value::String(name)) = json.get("name") else {
        return Err(ConfigError::in_file(
            path,
            "a JSON object with values that are not strings, and no \"name\" string: neither a connector config nor a create request",
        )
        .with_fix(shape));
    };
    let Some(mut config) = json.get("config").and_then(Value::as_object).and_then(flat) else {
        return Err(ConfigError::in_file(path, "\"config\" is missing or not an object of strings").with_key("config").with_fix(shape));
    };
    let initial_state = match json.get("initial_state") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "RUNNING" => Some(InitialState::Running),
        Some(Value::String(s)) if s == "PAUSED" => Some(InitialState::Paused),
        Some(Value::String(s)) if s == "STOPPED" => Some(InitialState::Stopped),
        Some(other) => {
            return Err(ConfigError::in_file(path, format!("initial_state={other} is not a state a connector starts in"))
                .with_key("initial_state")
                .with_fix("write \"RUNNING\", \"PAUSED\" or \"STOPPED\", or leave it out"))
        }
    };
    match config.iter().find(|(k, _)| k == "name") {
        Some((_, n)) if n != name => {
            return Err(ConfigError::in_file(path, format!("the config's name '{n}' is not the request's name '{name}'"))
                .with_key("name")
                .with_fix("give both the same name, or leave \"name\" out of \"config\""))
        }
        Some(_) => {}
        None => config.push(("name".into(), name.clone())),
    }
    Ok(ConnectorFile { name: name.clone(), config, initial_state })
}

fn named(path: &Path, config: Vec<(String, String)>, initial_state: Option<InitialState>) -> Result<ConnectorFile, ConfigError> {
    match config.iter().find(|(k, _)| k == "name") {
        Some((_, name)) if !name.is_empty() => Ok(ConnectorFile { name: name.clone(), config, initial_state }),
        _ => Err(ConfigError::in_file(path, "the connector's name is missing; Connect needs it to name the connector")
            .with_key("name")
            .with_fix("add e.g. name=mm2-source-connector")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(text: &str) -> Result<WorkerConfig, ConfigError> {
        worker_config(properties::parse(Path::new("standalone.properties"), text.as_bytes()).unwrap())
    }

    #[test]
    fn a_standalone_worker_needs_its_offsets_file_and_names_distributed_keys() {
        let e = worker("bootstrap.servers=t:9092\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some(OFFSETS_FILE));
        let e = e.to_string();
        assert!(e.starts_with("standalone.properties: offset.storage.file.filename is missing") && e.contains("add e.g."), "{e}");
        // Before: "group.id is missing; MirrorMaker needs a consumer group"
        // (the distributed worker's config-topic reader), found by
        // tests/connect_standalone.rs.
        let minimal = worker("bootstrap.servers=t:9092\noffset.storage.file.filename=x.offsets\n").unwrap();
        assert!(minimal.warnings.is_empty(), "{:?}", minimal.warnings);
        let w = worker("bootstrap.servers=t:9092\noffset.storage.file.filename=/tmp/x.offsets\ngroup.id=g\nconfig.storage.topic=c\nlisteners=http://127.0.0.1:18400\nofset.flush.interval.ms=5\n")
            .unwrap();
        assert_eq!(w.offsets_file.as_deref(), Some(Path::new("/tmp/x.offsets")));
        assert_eq!(w.bind, ("127.0.0.1".to_string(), 18400));
        for key in ["group.id", "config.storage.topic"] {
            assert!(
                w.warnings.iter().any(|m| m.contains(&format!(": {key} is a distributed worker's key and has no effect in standalone mode"))),
                "{key}: {:?}",
                w.warnings
            );
        }
        assert!(w.warnings.iter().any(|m| m.contains("ofset.flush.interval.ms") && m.contains("Did you mean")), "{:?}", w.warnings);
        assert!(!w.warnings.iter().any(|m| m.contains("offset.storage.file.filename is not")), "{:?}", w.warnings);
        assert_eq!(w.warnings.len(), 3, "{:?}", w.warnings);
    }

    #[test]
    fn a_distributed_worker_does_not_take_the_offsets_file() {
        let text = "bootstrap.servers=t:9092\ngroup.id=connect\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\noffset.storage.file.filename=/x\n";
        let w = super::super::worker_config(properties::parse(Path::new("w.properties"), text.as_bytes()).unwrap()).unwrap();
        assert!(w.offsets_file.is_none());
        assert!(w.warnings.iter().any(|m| m.contains("offset.storage.file.filename is not a Connect worker key")), "{:?}", w.warnings);
    }

    fn read(text: &str) -> Result<ConnectorFile, ConfigError> {
        connector_file(Path::new("c.json"), text.as_bytes())
    }

    #[test]
    fn connector_files_in_the_three_forms_java_reads() {
        let p = read("name=src\nconnector.class=MirrorSourceConnector\ntasks.max=2\n").unwrap();
        assert_eq!((p.name.as_str(), p.config.len(), p.initial_state), ("src", 3, None));
        let bare = read(r#"{"name":"src","connector.class":"MirrorSourceConnector","tasks.max":2,"x":true}"#).unwrap();
        assert_eq!(
            bare.config,
            vec![
                ("name".to_string(), "src".to_string()),
                ("connector.class".into(), "MirrorSourceConnector".into()),
                ("tasks.max".into(), "2".into()),
                ("x".into(), "true".into())
            ]
        );
        let req = read(r#" {"name":"cp","config":{"connector.class":"MirrorCheckpointConnector"},"initial_state":"PAUSED","extra":1}"#).unwrap();
        assert_eq!(req.name, "cp");
        assert_eq!(req.initial_state, Some(InitialState::Paused));
        assert!(req.config.contains(&("name".to_string(), "cp".to_string())), "the name goes into the config, as Java puts it");
    }

    #[test]
    fn bad_connector_files_name_the_file_and_the_fix() {
        let e = read("connector.class=MirrorSourceConnector\n").unwrap_err().to_string();
        assert!(e.starts_with("c.json: the connector's name is missing") && e.contains("name=mm2-source-connector"), "{e}");
        let e = read(r#"{"connector.class":"MirrorSourceConnector"}"#).unwrap_err().to_string();
        assert!(e.starts_with("c.json: the connector's name is missing"), "{e}");
        let e = read(r#"{"name":"a","config":{"name":"b"}}"#).unwrap_err().to_string();
        assert!(e.contains("the config's name 'b' is not the request's name 'a'"), "{e}");
        let e = read(r#"{"name":"a","config":{},"initial_state":"GONE"}"#).unwrap_err().to_string();
        assert!(e.contains("initial_state=\"GONE\"") && e.contains("RUNNING"), "{e}");
        let e = read(r#"{"name":"a","config":[1]}"#).unwrap_err().to_string();
        assert!(e.contains("\"config\" is missing or not an object of strings"), "{e}");
        let e = read(r#"{"name":"a",}"#).unwrap_err().to_string();
        assert!(e.starts_with("c.json: not valid JSON"), "{e}");
    }
}
