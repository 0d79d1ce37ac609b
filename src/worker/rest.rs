//! Connect's REST API: the same paths, status codes and JSON shapes
//! (reference: connect-reference.md §1), so the guide's `curl` commands
//! and scripts written for Java Connect work unchanged.
//!
//! [`route`] is pure (a request in, a [`Response`] out, the worker behind
//! the [`Api`] trait) so every path and shape is unit-tested without a
//! socket; [`serve`] puts it behind `tiny_http`.

use std::io::Read;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::store::TargetState;
use crate::ops::health::Report;

/// A connector as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub name: String,
    pub config: Vec<(String, String)>,
    /// RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED.
    pub state: String,
    pub trace: Option<String>,
    pub worker_id: String,
}

/// A REST error: Connect's `{"error_code","message"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub message: String,
}

impl ApiError {
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into() }
    }

    pub fn not_found(name: &str) -> Self {
        ApiError::new(404, format!("Connector {name} not found"))
    }
}

/// One (partition, offset) of a PATCH body; `offset` None is a JSON null:
/// remove the partition's position.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub partition: Option<Map<String, Value>>,
    pub offset: Option<Map<String, Value>>,
}

/// A PATCH body, `{"offsets":[{"partition":{..},"offset":{..}}, ..]}`.
/// Missing, null or empty offsets are Java's 400.
pub fn parse_alter(body: &[u8]) -> Result<Vec<Entry>, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| ApiError::new(400, format!("Request body is not valid JSON: {e}")))?;
    let list = match v.get("offsets") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_) | Value::Null) | None => return Err(ApiError::new(400, "Partitions / offsets need to be provided for an alter offsets request")),
        Some(other) => return Err(ApiError::new(400, format!("\"offsets\" must be a JSON array of {{\"partition\":{{..}},\"offset\":{{..}}}}, not {other}"))),
    };
    list.iter().map(entry).collect()
}

fn entry(v: &Value) -> Result<Entry, ApiError> {
    let map = |field: &str| match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(other) => Err(ApiError::new(400, format!("each \"{field}\" of \"offsets\" must be a JSON object (or null), not {other}"))),
    };
    if !v.is_object() {
        return Err(ApiError::new(400, format!("each element of \"offsets\" must be a JSON object {{\"partition\":{{..}},\"offset\":{{..}}}}, not {v}")));
    }
    Ok(Entry { partition: map("partition")?, offset: map("offset")? })
}

/// Java's answer to a PATCH or DELETE that was done.
pub fn done(reset: bool) -> Value {
    json!({ "message": format!("The offsets for this connector have been {} successfully", if reset { "reset" } else { "altered" }) })
}

/// What the routes need of the worker.
pub trait Api: Send + Sync {
    /// `{"version","commit","kafka_cluster_id"}`.
    fn root(&self) -> Value;
    /// `GET /health` (KIP-1017): the worker's, not its connectors'.
    fn health(&self) -> Report;
    fn names(&self) -> Vec<String>;
    fn view(&self, name: &str) -> Option<View>;
    /// Stores the config; Ok(true) when the connector is new.
    fn put_config(&self, name: &str, config: Vec<(String, String)>) -> Result<bool, ApiError>;
    fn set_target(&self, name: &str, state: TargetState) -> Result<(), ApiError>;
    fn restart(&self, name: &str) -> Result<(), ApiError>;
    fn delete(&self, name: &str) -> Result<(), ApiError>;
    /// KIP-875's GET: `{"offsets":[..]}`.
    fn offsets(&self, name: &str) -> Result<Value, ApiError>;
    /// KIP-875's PATCH (`Some`) or DELETE (`None`): Java's `{"message"}`.
    fn modify_offsets(&self, name: &str, entries: Option<Vec<Entry>>) -> Result<Value, ApiError>;
    /// Problems of a config: (key at fault, message).
    fn validate(&self, config: &[(String, String)]) -> Vec<(String, String)>;
}

/// One answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub body: Option<Value>,
    pub location: Option<String>,
}

impl Response {
    fn json(status: u16, body: Value) -> Self {
        Response { status, body: Some(body), location: None }
    }

    fn empty(status: u16) -> Self {
        Response { status, body: None, location: None }
    }
}

impl From<ApiError> for Response {
    fn from(e: ApiError) -> Self {
        Response::json(e.code, json!({ "error_code": e.code, "message": e.message }))
    }
}

pub const PLUGINS: &[&str] = &[
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
    "org.apache.kafka.connect.mirror.MirrorSourceConnector",
];

/// The Kafka version whose API this one answers as.
pub const VERSION: &str = "3.9.1";

fn config_json(v: &View) -> Value {
    let mut m: Map<String, Value> = v.config.iter().map(|(k, val)| (k.clone(), Value::String(val.clone()))).collect();
    m.insert("name".into(), Value::String(v.name.clone()));
    Value::Object(m)
}

/// `ConnectorInfo`: name, config, tasks, type.
fn info_json(v: &View) -> Value {
    json!({ "name": v.name, "config": config_json(v), "tasks": [{ "connector": v.name, "task": 0 }], "type": "source" })
}

fn state_json(state: &str, trace: Option<&str>, worker_id: &str) -> Value {
    let mut m = json!({ "state": state, "worker_id": worker_id });
    if let Some(t) = trace.filter(|t| !t.is_empty()) {
        m["trace"] = Value::String(t.to_string());
    }
    m
}

/// `ConnectorStateInfo`. The connector runs as one task on this worker
/// (its streams and producers are inside it), shown as task 0.
fn status_json(v: &View) -> Value {
    let task_state = if v.state == "STOPPED" { None } else { Some(state_json(&v.state, v.trace.as_deref(), &v.worker_id)) };
    let tasks: Vec<Value> = task_state
        .map(|mut t| {
            t["id"] = json!(0);
            t
        })
        .into_iter()
        .collect();
    json!({ "name": v.name, "connector": state_json(&v.state, v.trace.as_deref(), &v.worker_id), "tasks": tasks, "type": "source" })
}

/// A flat string map, as Connect's `Map<String,String>` reads it: numbers
/// and booleans become their text; anything else is a 400.
fn flat_config(v: &Value) -> Result<Vec<(String, String)>, ApiError> {
    let m = v.as_object().ok_or_else(|| ApiError::new(400, "the connector config must be a JSON object of string values"))?;
    m.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
            _ => Err(ApiError::new(400, format!("config value of {k} must be a string, not {v}"))),
        })
        .collect()
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::new(400, format!("Request body is not valid JSON: {e}")))
}

/// Answers one request.
pub fn route(api: &dyn Api, method: &str, url: &str, body: &[u8]) -> Response {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let segs: Vec<String> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).map(decode_segment).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    match answer(api, method, &segs, query, body) {
        Ok(r) => r,
        Err(e) => e.into(),
    }
}

fn answer(api: &dyn Api, method: &str, segs: &[&str], query: &str, body: &[u8]) -> Result<Response, ApiError> {
    let view = |name: &str| api.view(name).ok_or_else(|| ApiError::not_found(name));
    Ok(match (method, segs) {
        ("GET", []) => Response::json(200, api.root()),
        ("GET", ["health"]) => {
            let r = api.health();
            Response::json(r.code, json!({ "status": r.status, "message": r.message }))
        }
        ("GET", ["connectors"]) => connectors(api, query),
        ("POST", ["connectors"]) => {
            let v = parse_body(body)?;
            let name = v.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or_else(|| ApiError::new(400, "Connector name must be given"))?;
            if api.view(name).is_some() {
                return Err(ApiError::new(409, format!("Connector {name} already exists")));
            }
            let config = flat_config(v.get("config").unwrap_or(&Value::Null))?;
            created(api, name, config)?
        }
        ("GET", ["connectors", name]) => Response::json(200, info_json(&view(name)?)),
        ("DELETE", ["connectors", name]) => {
            api.delete(name)?;
            Response::empty(204)
        }
        ("GET", ["connectors", name, "config"]) => Response::json(200, config_json(&view(name)?)),
        ("PUT", ["connectors", name, "config"]) => {
            let mut config = flat_config(&parse_body(body)?)?;
            if let Some((_, given)) = config.iter().find(|(k, _)| k == "name") {
                if given != name {
                    return Err(ApiError::new(400, format!("Connector name configuration ({given}) doesn't match connector name in the URL ({name})")));
                }
            }
            config.retain(|(k, _)| k != "name");
            created(api, name, config)?
        }
        ("GET", ["connectors", name, "status"]) => {
            Response::json(200, status_json(&api.view(name).ok_or_else(|| ApiError::new(404, format!("No status found for connector {name}")))?))
        }
        ("GET", ["connectors", name, "tasks"]) => {
            let v = view(name)?;
            let mut cfg = config_json(&v);
            cfg["task.class"] = json!(format!("{}Task", v.config.iter().find(|(k, _)| k == "connector.class").map_or("", |(_, c)| c.trim())));
            // As Java 3.9's task configs: the source and checkpoint
            // connectors number their tasks, as text; the heartbeat one does not.
            if !cfg["task.class"].as_str().is_some_and(|c| c.ends_with("MirrorHeartbeatConnectorTask")) {
                cfg["task.index"] = json!("0");
            }
            Response::json(200, json!([{ "id": { "connector": name, "task": 0 }, "config": cfg }]))
        }
        ("GET", ["connectors", name, "tasks", id, "status"]) => {
            // Java names the task, not the connector, whichever is unknown.
            let v = api.view(name).ok_or_else(|| ApiError::new(404, format!("No status found for task {name}-{id}")))?;
            if *id != "0" || v.state == "STOPPED" {
                return Err(ApiError::new(404, format!("No status found for task {name}-{id}")));
            }
            let mut t = state_json(&v.state, v.trace.as_deref(), &v.worker_id);
            t["id"] = json!(0);
            Response::json(200, t)
        }
        ("GET", ["connectors", name, "offsets"]) => Response::json(200, api.offsets(name)?),
        // The body is checked before the connector is looked up, as Java's resource does.
        ("PATCH", ["connectors", name, "offsets"]) => Response::json(200, api.modify_offsets(name, Some(parse_alter(body)?))?),
        ("DELETE", ["connectors", name, "offsets"]) => Response::json(200, api.modify_offsets(name, None)?),
        ("PUT", ["connectors", name, "pause"]) => target(api, name, TargetState::Paused, 202)?,
        ("PUT", ["connectors", name, "resume"]) => target(api, name, TargetState::Started, 202)?,
        ("PUT", ["connectors", name, "stop"]) => target(api, name, TargetState::Stopped, 204)?,
        ("POST", ["connectors", name, "restart"]) => {
            api.restart(name)?;
            if query_flag(query, "includeTasks") || query_flag(query, "onlyFailed") {
                let mut s = status_json(&view(name)?);
                s["connector"]["state"] = json!("RESTARTING");
                Response::json(202, s)
            } else {
                Response::empty(204)
            }
        }
        ("POST", ["connectors", name, "tasks", _, "restart"]) => {
            api.restart(name)?;
            Response::empty(204)
        }
        ("GET", ["connector-plugins"]) => {
            Response::json(200, Value::Array(PLUGINS.iter().map(|c| json!({ "class": c, "type": "source", "version": VERSION })).collect()))
        }
        ("PUT", ["connector-plugins", plugin, "config", "validate"]) => validate(api, plugin, body)?,
        (_, ["connectors", ..]) | (_, ["connector-plugins", ..]) | (_, []) | (_, ["health"]) => return Err(ApiError::new(405, "HTTP 405 Method Not Allowed")),
        _ => return Err(ApiError::new(404, "HTTP 404 Not Found")),
    })
}

fn created(api: &dyn Api, name: &str, config: Vec<(String, String)>) -> Result<Response, ApiError> {
    let is_new = api.put_config(name, config)?;
    let v = api.view(name).ok_or_else(|| ApiError::not_found(name))?;
    let mut info = info_json(&v);
    if is_new {
        // As Java's herder answers a new connector: its tasks are not made yet.
        info["tasks"] = json!([]);
    }
    let mut r = Response::json(if is_new { 201 } else { 200 }, info);
    if is_new {
        r.location = Some(format!("/connectors/{name}"));
    }
    Ok(r)
}

fn target(api: &dyn Api, name: &str, state: TargetState, code: u16) -> Result<Response, ApiError> {
    api.set_target(name, state)?;
    Ok(Response::empty(code))
}

fn connectors(api: &dyn Api, query: &str) -> Response {
    let expand: Vec<&str> = query.split('&').filter_map(|kv| kv.strip_prefix("expand=")).collect();
    if expand.is_empty() {
        return Response::json(200, json!(api.names()));
    }
    let mut out = Map::new();
    for name in api.names() {
        let Some(v) = api.view(&name) else { continue };
        let mut e = Map::new();
        if expand.contains(&"status") {
            e.insert("status".into(), status_json(&v));
        }
        if expand.contains(&"info") {
            e.insert("info".into(), info_json(&v));
        }
        out.insert(name, Value::Object(e));
    }
    Response::json(200, Value::Object(out))
}

fn query_flag(query: &str, key: &str) -> bool {
    query.split('&').any(|kv| kv == format!("{key}=true"))
}

/// `ConfigInfos`: the error count and, per given key, its value and errors.
fn validate(api: &dyn Api, plugin: &str, body: &[u8]) -> Result<Response, ApiError> {
    let mut config = flat_config(&parse_body(body)?)?;
    let class = config.iter().find(|(k, _)| k == "connector.class").map(|(_, c)| c.clone());
    if class.as_deref().map(str::trim).is_some_and(|c| !c.ends_with(plugin.trim())) {
        return Err(ApiError::new(400, "Included connector type does not match request type"));
    }
    if class.is_none() {
        config.push(("connector.class".into(), plugin.to_string()));
    }
    let problems = api.validate(&config);
    let configs: Vec<Value> = config
        .iter()
        .map(|(k, v)| {
            let errors: Vec<&str> = problems.iter().filter(|(key, _)| key == k).map(|(_, m)| m.as_str()).collect();
            json!({ "definition": { "name": k }, "value": { "name": k, "value": v, "recommended_values": [], "errors": errors, "visible": true } })
        })
        .collect();
    let mut configs = configs;
    // A missing key's problem has no given value to hang on: its own entry.
    for (key, m) in problems.iter().filter(|(key, _)| !config.iter().any(|(k, _)| k == key)) {
        configs
            .push(json!({ "definition": { "name": key }, "value": { "name": key, "value": null, "recommended_values": [], "errors": [m], "visible": true } }));
    }
    let name = class.unwrap_or_else(|| plugin.to_string());
    Ok(Response::json(200, json!({ "name": name.trim(), "error_count": problems.len(), "groups": ["Common"], "configs": configs })))
}

/// `%xx` escapes of a path segment.
fn decode_segment(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Largest request body read.
const MAX_BODY: u64 = 1024 * 1024;

/// Binds now (a taken port fails the start) and serves on threads.
pub fn serve(bind: &(String, u16), api: Arc<dyn Api>) -> Result<(), std::io::Error> {
    let server = tiny_http::Server::http((bind.0.as_str(), bind.1)).map_err(std::io::Error::other)?;
    let server = Arc::new(server);
    log::info!("REST API listening on http://{}:{}", bind.0, bind.1);
    for i in 0..4 {
        let (server, api) = (server.clone(), api.clone());
        std::thread::Builder::new().name(format!("worker-rest-{i}")).spawn(move || {
            for mut request in server.incoming_requests() {
                let mut body = Vec::new();
                let _ = request.as_reader().take(MAX_BODY).read_to_end(&mut body);
                let method = request.method().as_str().to_ascii_uppercase();
                let r = route(api.as_ref(), &method, request.url(), &body);
                log::debug!("{method} {} -> {}", request.url(), r.status);
                let has_body = r.body.is_some();
                let text = r.body.map(|b| b.to_string()).unwrap_or_default();
                let mut response = tiny_http::Response::from_string(text).with_status_code(r.status);
                if has_body {
                    response.add_header(tiny_http::Header::from_bytes("Content-Type", "application/json").expect("a valid header"));
                }
                if let Some(l) = r.location {
                    if let Ok(h) = tiny_http::Header::from_bytes("Location", l.as_bytes()) {
                        response.add_header(h);
                    }
                }
                let _ = request.respond(response);
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
