use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{json, Value};

use super::*;

type Entry = (Vec<(String, String)>, TargetState);

/// A worker in memory: configs and target states, no Kafka; the offsets
/// calls it was given.
#[derive(Default)]
struct Fake {
    connectors: Mutex<BTreeMap<String, Entry>>,
    modified: Mutex<Vec<(String, Option<Vec<super::Entry>>)>>,
    health: crate::ops::health::Health,
}

impl Api for Fake {
    fn root(&self) -> Value {
        json!({ "version": VERSION, "commit": "c", "kafka_cluster_id": "id" })
    }
    fn names(&self) -> Vec<String> {
        self.connectors.lock().unwrap().keys().cloned().collect()
    }
    fn health(&self) -> Report {
        self.health.report()
    }
    fn view(&self, name: &str) -> Option<View> {
        let m = self.connectors.lock().unwrap();
        let (config, t) = m.get(name)?;
        let state = match t {
            TargetState::Started => "RUNNING",
            TargetState::Paused => "PAUSED",
            TargetState::Stopped => "STOPPED",
        };
        Some(View { name: name.into(), config: config.clone(), state: state.into(), trace: None, worker_id: "w:8083".into() })
    }
    fn put_config(&self, name: &str, config: Vec<(String, String)>) -> Result<bool, ApiError> {
        if !config.iter().any(|(k, v)| k == "connector.class" && v.contains("Mirror")) {
            return Err(ApiError::new(400, "Connector configuration is invalid: connector.class"));
        }
        Ok(self.connectors.lock().unwrap().insert(name.into(), (config, TargetState::Started)).is_none())
    }
    fn set_target(&self, name: &str, state: TargetState) -> Result<(), ApiError> {
        self.connectors.lock().unwrap().get_mut(name).map(|c| c.1 = state).ok_or_else(|| ApiError::not_found(name))
    }
    fn restart(&self, name: &str) -> Result<(), ApiError> {
        self.view(name).map(|_| ()).ok_or_else(|| ApiError::not_found(name))
    }
    fn delete(&self, name: &str) -> Result<(), ApiError> {
        self.connectors.lock().unwrap().remove(name).map(|_| ()).ok_or_else(|| ApiError::not_found(name))
    }
    fn offsets(&self, name: &str) -> Result<Value, ApiError> {
        self.view(name).ok_or_else(|| ApiError::not_found(name))?;
        Ok(json!({ "offsets": [{ "partition": { "cluster": "A", "partition": 0, "topic": "t" }, "offset": { "offset": 9 } }] }))
    }
    fn modify_offsets(&self, name: &str, entries: Option<Vec<super::Entry>>) -> Result<Value, ApiError> {
        self.view(name).ok_or_else(|| ApiError::not_found(name))?;
        let reset = entries.is_none();
        self.modified.lock().unwrap().push((name.into(), entries));
        Ok(super::done(reset))
    }
    fn validate(&self, config: &[(String, String)]) -> Vec<(String, String)> {
        if config.iter().any(|(k, _)| k == "source.cluster.alias") {
            vec![]
        } else {
            vec![("source.cluster.alias".into(), "source.cluster.alias is missing".into())]
        }
    }
}

const CFG: &[u8] = br#"{"connector.class":" org.apache.kafka.connect.mirror.MirrorSourceConnector","tasks.max":4,"source.cluster.alias":"A"}"#;

fn call(api: &Fake, method: &str, url: &str, body: &[u8]) -> (u16, Value) {
    let r = route(api, method, url, body);
    (r.status, r.body.unwrap_or(Value::Null))
}

#[test]
fn put_creates_then_updates_with_connects_body_and_location() {
    let api = Fake::default();
    let r = route(&api, "PUT", "/connectors/mm2/config", CFG);
    assert_eq!((r.status, r.location.as_deref()), (201, Some("/connectors/mm2")));
    let body = r.body.unwrap();
    assert_eq!(body["name"], "mm2");
    assert_eq!(body["type"], "source");
    assert_eq!(body["config"]["name"], "mm2", "Connect adds the name to the config");
    assert_eq!(body["config"]["tasks.max"], "4", "numbers are read as their text");
    // Java 3.9.2 answers a new connector with no tasks yet (tests/connect_java.rs saw it).
    assert_eq!(body["tasks"], json!([]));
    let (code, body) = call(&api, "PUT", "/connectors/mm2/config", CFG);
    assert_eq!((code, &body["tasks"]), (200, &json!([{ "connector": "mm2", "task": 0 }])));
    assert_eq!(call(&api, "GET", "/connectors/mm2/config", b"").1["connector.class"], " org.apache.kafka.connect.mirror.MirrorSourceConnector");
}

#[test]
fn errors_are_connects_shape() {
    let api = Fake::default();
    let (code, body) = call(&api, "GET", "/connectors/nope", b"");
    assert_eq!((code, body), (404, json!({ "error_code": 404, "message": "Connector nope not found" })));
    let (code, body) = call(&api, "GET", "/connectors/nope/status", b"");
    assert_eq!((code, body["message"].as_str()), (404, Some("No status found for connector nope")));
    let (code, body) = call(&api, "GET", "/connectors/nope/tasks/0/status", b"");
    assert_eq!((code, body["message"].as_str()), (404, Some("No status found for task nope-0")), "Java names the task");
    let (code, body) = call(&api, "PUT", "/connectors/a/config", br#"{"name":"b","connector.class":"MirrorSourceConnector"}"#);
    assert_eq!(code, 400);
    assert_eq!(body["message"], "Connector name configuration (b) doesn't match connector name in the URL (a)");
    assert_eq!(call(&api, "PUT", "/connectors/a/config", b"{not json").0, 400);
    assert_eq!(call(&api, "PUT", "/connectors/a/config", br#"{"connector.class":"FileStreamSource"}"#).0, 400);
    assert_eq!(call(&api, "PUT", "/connectors/a/config", br#"{"k":{"nested":1}}"#).0, 400);
    assert_eq!(call(&api, "GET", "/nowhere", b"").0, 404);
    assert_eq!(call(&api, "PATCH", "/connectors", b"").0, 405);
}

#[test]
fn post_creates_once() {
    let api = Fake::default();
    let body = format!(r#"{{"name":"mm2","config":{}}}"#, std::str::from_utf8(CFG).unwrap());
    assert_eq!(call(&api, "POST", "/connectors", body.as_bytes()).0, 201);
    let (code, err) = call(&api, "POST", "/connectors", body.as_bytes());
    assert_eq!((code, err["message"].as_str()), (409, Some("Connector mm2 already exists")));
}

#[test]
fn status_list_expand_and_states() {
    let api = Fake::default();
    route(&api, "PUT", "/connectors/mm2/config", CFG);
    let (code, s) = call(&api, "GET", "/connectors/mm2/status", b"");
    assert_eq!(code, 200);
    assert_eq!(
        s,
        json!({ "name": "mm2", "connector": { "state": "RUNNING", "worker_id": "w:8083" }, "tasks": [{ "id": 0, "state": "RUNNING", "worker_id": "w:8083" }], "type": "source" })
    );
    assert_eq!(call(&api, "GET", "/connectors", b"").1, json!(["mm2"]));
    let both = call(&api, "GET", "/connectors?expand=status&expand=info", b"").1;
    assert_eq!(both["mm2"]["status"]["connector"]["state"], "RUNNING");
    assert_eq!(both["mm2"]["info"]["name"], "mm2");
    assert!(call(&api, "GET", "/connectors?expand=info", b"").1["mm2"].get("status").is_none());
    assert_eq!(call(&api, "PUT", "/connectors/mm2/pause", b"").0, 202);
    assert_eq!(call(&api, "GET", "/connectors/mm2/tasks/0/status", b"").1["state"], "PAUSED");
    assert_eq!(call(&api, "PUT", "/connectors/mm2/resume", b"").0, 202);
    assert_eq!(call(&api, "PUT", "/connectors/mm2/stop", b"").0, 204);
    let stopped = call(&api, "GET", "/connectors/mm2/status", b"").1;
    assert_eq!((stopped["connector"]["state"].as_str(), stopped["tasks"].clone()), (Some("STOPPED"), json!([])));
    assert_eq!(call(&api, "GET", "/connectors/mm2/tasks/0/status", b"").0, 404);
    assert_eq!(call(&api, "PUT", "/connectors/nope/pause", b"").0, 404);
}

#[test]
fn restart_tasks_delete_and_plugins() {
    let api = Fake::default();
    route(&api, "PUT", "/connectors/mm2/config", CFG);
    assert_eq!(call(&api, "POST", "/connectors/mm2/restart", b"").0, 204);
    let (code, s) = call(&api, "POST", "/connectors/mm2/restart?includeTasks=true", b"");
    assert_eq!((code, s["connector"]["state"].as_str()), (202, Some("RESTARTING")));
    let tasks = call(&api, "GET", "/connectors/mm2/tasks", b"").1;
    assert_eq!(tasks[0]["id"], json!({ "connector": "mm2", "task": 0 }));
    assert_eq!(tasks[0]["config"]["task.class"], "org.apache.kafka.connect.mirror.MirrorSourceConnectorTask");
    assert_eq!(call(&api, "DELETE", "/connectors/mm2", b"").0, 204);
    assert_eq!(call(&api, "DELETE", "/connectors/mm2", b"").0, 404);
    let plugins = call(&api, "GET", "/connector-plugins", b"").1;
    assert_eq!(plugins.as_array().unwrap().len(), 3);
    assert_eq!(plugins[2], json!({ "class": "org.apache.kafka.connect.mirror.MirrorSourceConnector", "type": "source", "version": VERSION }));
    assert_eq!(call(&api, "GET", "/", b"").1["version"], VERSION);
}

#[test]
fn validate_counts_and_places_errors() {
    let api = Fake::default();
    let url = "/connector-plugins/MirrorSourceConnector/config/validate";
    let (code, v) = call(&api, "PUT", url, br#"{"connector.class":"org.apache.kafka.connect.mirror.MirrorSourceConnector"}"#);
    assert_eq!((code, v["error_count"].as_u64()), (200, Some(1)));
    let missing = v["configs"].as_array().unwrap().iter().find(|c| c["value"]["name"] == "source.cluster.alias").unwrap().clone();
    assert_eq!(missing["value"]["errors"], json!(["source.cluster.alias is missing"]));
    let (_, ok) = call(&api, "PUT", url, br#"{"connector.class":"MirrorSourceConnector","source.cluster.alias":"A"}"#);
    assert_eq!(ok["error_count"], 0);
    assert_eq!(call(&api, "PUT", url, br#"{"connector.class":"MirrorHeartbeatConnector"}"#).0, 400, "class differs from the path");
}

#[test]
fn path_segments_are_percent_decoded() {
    let api = Fake::default();
    assert_eq!(call(&api, "PUT", "/connectors/a%2Db/config", CFG).1["name"], "a-b");
}

/// A config error names `connector 'c':N`, N the key's place in the body:
/// the body's order must survive parsing (serde_json's `preserve_order`),
/// or N would be the key's place in sorted order, which the user never wrote.
#[test]
fn a_config_error_names_the_keys_place_in_the_body_as_sent() {
    let body = br#"{"tasks.max":"four","connector.class":"MirrorSourceConnector","source.cluster.alias":"A"}"#;
    let config = flat_config(&parse_body(body).unwrap()).unwrap();
    let keys: Vec<&str> = config.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["tasks.max", "connector.class", "source.cluster.alias"], "the body's order");
    let worker = crate::front::properties::parse(std::path::Path::new("worker.properties"), b"bootstrap.servers=t:9092\n").unwrap();
    let e = crate::front::mm2::connector::read("c", &config, &worker).unwrap_err();
    assert_eq!((e.key.as_deref(), e.line), (Some("tasks.max"), Some(1)), "{e}");
    assert!(e.to_string().starts_with("connector 'c':1: "), "{e}");
}

#[test]
fn offsets_routes_answer_as_connects() {
    let api = Fake::default();
    route(&api, "PUT", "/connectors/mm2/config", CFG);
    let (code, body) = call(&api, "GET", "/connectors/mm2/offsets", b"");
    assert_eq!((code, body["offsets"][0]["offset"].clone()), (200, json!({ "offset": 9 })));
    assert_eq!(call(&api, "GET", "/connectors/nope/offsets", b"").1, json!({ "error_code": 404, "message": "Connector nope not found" }));
    let patch = br#"{"offsets":[{"partition":{"cluster":"A","partition":0,"topic":"t"},"offset":{"offset":3}}]}"#;
    let (code, body) = call(&api, "PATCH", "/connectors/mm2/offsets", patch);
    assert_eq!((code, body), (200, json!({ "message": "The offsets for this connector have been altered successfully" })));
    let (code, body) = call(&api, "DELETE", "/connectors/mm2/offsets", b"");
    assert_eq!((code, body), (200, json!({ "message": "The offsets for this connector have been reset successfully" })));
    let modified = api.modified.lock().unwrap().clone();
    assert_eq!(modified.len(), 2);
    assert_eq!(modified[0].1.as_ref().map(|e| e[0].offset.clone()), Some(json!({ "offset": 3 }).as_object().cloned()));
    assert_eq!(modified[1], ("mm2".to_string(), None), "DELETE resets");
    // Java's resource checks the body before it looks for the connector.
    let (code, body) = call(&api, "PATCH", "/connectors/nope/offsets", br#"{"offsets":[]}"#);
    assert_eq!((code, body["message"].as_str()), (400, Some("Partitions / offsets need to be provided for an alter offsets request")));
    assert_eq!(call(&api, "PATCH", "/connectors/nope/offsets", patch).0, 404);
    assert_eq!(call(&api, "POST", "/connectors/mm2/offsets", b"").0, 405);
    assert_eq!(api.modified.lock().unwrap().len(), 2, "refused calls reached nothing");
}

#[test]
fn get_health_answers_as_connect_from_start_to_stop() {
    use crate::ops::shutdown::Shutdown;
    let api = Fake::default();
    let stop = Shutdown::new(std::time::Duration::from_secs(1));
    api.health.attach(stop.clone());
    api.health.stage("reading its connectors' configs and starting them");
    let (code, body) = call(&api, "GET", "/health", b"");
    assert_eq!((code, &body["status"]), (503, &json!("starting")));
    assert!(body["message"].as_str().unwrap().starts_with("Worker is still starting up. The mirror is currently reading"), "{body}");
    api.health.running();
    let (code, body) = call(&api, "GET", "/health", b"");
    assert_eq!((code, body), (200, json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."})));
    assert_eq!(
        route(&api, "GET", "/health", b"").body.unwrap().to_string(),
        r#"{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}"#
    );
    assert_eq!(call(&api, "POST", "/health", b"").0, 405);
    stop.request_stop();
    let (code, body) = call(&api, "GET", "/health", b"");
    assert_eq!((code, &body["status"]), (500, &json!("unhealthy")));
    assert!(body["message"].as_str().unwrap().contains("shutting down"), "{body}");
}
