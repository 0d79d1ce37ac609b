use super::*;
use crate::worker::rest::{ApiError, View};
use crate::worker::store::TargetState;
use serde_json::{json, Value};
use std::io::Cursor;

/// One connection's bytes: what the client sent, what was written back.
struct Duplex {
    input: Cursor<Vec<u8>>,
    output: Vec<u8>,
}

impl Read for Duplex {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Duplex {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An API whose PUT records the config it was given.
#[derive(Default)]
struct Fake {
    put: std::sync::Mutex<Vec<(String, String)>>,
}

impl Api for Fake {
    fn root(&self) -> Value {
        json!({"version": "3.9.1"})
    }
    fn names(&self) -> Vec<String> {
        vec!["c".into()]
    }
    fn health(&self) -> crate::ops::health::Report {
        crate::ops::health::Health::default().report()
    }
    fn view(&self, name: &str) -> Option<View> {
        let config = self.put.lock().unwrap().clone();
        Some(View { name: name.into(), config, state: "RUNNING".into(), trace: None, worker_id: "w:1".into() })
    }
    fn put_config(&self, _: &str, config: Vec<(String, String)>) -> Result<bool, ApiError> {
        *self.put.lock().unwrap() = config;
        Ok(true)
    }
    fn set_target(&self, _: &str, _: TargetState) -> Result<(), ApiError> {
        Ok(())
    }
    fn restart(&self, _: &str) -> Result<(), ApiError> {
        Ok(())
    }
    fn delete(&self, _: &str) -> Result<(), ApiError> {
        Ok(())
    }
    fn offsets(&self, _: &str) -> Result<Value, ApiError> {
        Ok(json!({ "offsets": [] }))
    }
    fn modify_offsets(&self, _: &str, _: Option<Vec<crate::worker::rest::Entry>>) -> Result<Value, ApiError> {
        Ok(json!({ "message": "The offsets for this connector have been altered successfully" }))
    }
    fn validate(&self, _: &[(String, String)]) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Serves `input` as one connection: the bytes written back.
fn serve(input: &str, api: &Fake) -> String {
    let mut conn = BufReader::new(Duplex { input: Cursor::new(input.as_bytes().to_vec()), output: Vec::new() });
    while let Ok(true) = request(&mut conn, api) {}
    String::from_utf8(conn.into_inner().output).unwrap()
}

#[test]
fn keep_alive_requests_with_a_body_and_100_continue() {
    let api = Fake::default();
    let body = r#"{"topics":"a"}"#;
    let out = serve(
        &format!(
            "PUT /connectors/c/config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n{body}\
             GET /connectors HTTP/1.1\r\nConnection: close\r\n\r\n",
            body.len()
        ),
        &api,
    );
    assert!(out.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"), "{out}");
    assert!(out.contains("Location: /connectors/c\r\n"), "{out}");
    assert!(out.ends_with("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n[\"c\"]"), "{out}");
    assert_eq!(*api.put.lock().unwrap(), vec![("topics".to_string(), "a".to_string())]);
}

#[test]
fn a_chunked_body_is_read() {
    let api = Fake::default();
    let out =
        serve("PUT /connectors/c/config HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\n{\"a\":\r\n4\r\n\"b\"}\r\n0\r\n\r\n", &api);
    assert!(out.starts_with("HTTP/1.1 201 Created\r\n"), "{out}");
    assert_eq!(*api.put.lock().unwrap(), vec![("a".to_string(), "b".to_string())]);
}

#[test]
fn bad_heads_and_large_bodies_are_refused_and_closed() {
    let api = Fake::default();
    assert!(serve("garbage\r\n\r\n", &api).starts_with("HTTP/1.1 400 Bad Request\r\n"));
    assert!(serve("GET / SPDY/3\r\n\r\n", &api).starts_with("HTTP/1.1 505 "));
    let out = serve("PUT /connectors/c/config HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", &api);
    assert!(out.starts_with("HTTP/1.1 413 Payload Too Large\r\n") && out.contains("Connection: close"), "{out}");
    // HTTP/1.0 closes after one answer unless asked to keep the connection.
    let out = serve("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n", &api);
    assert_eq!(out.matches("HTTP/1.1 200").count(), 1, "{out}");
    // A 204 carries no Content-Length and no body.
    let out = serve("DELETE /connectors/c HTTP/1.1\r\nConnection: close\r\n\r\n", &api);
    assert_eq!(out, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
}
