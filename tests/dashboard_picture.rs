//! scripts/lib/dashboard_picture.py, the README picture's renderer, against
//! a stand-in for Prometheus's HTTP API that answers every query with one
//! series: it sends every query of config/grafana/mirror-maker.json with
//! the variables replaced, draws every panel with data, and writes a PNG
//! small enough for the README. The real-data run is
//! `scripts/dashboard-picture run` (clusters, Prometheus, a mirror), too
//! slow for the suite. Needs Debian's python3-matplotlib (.ci/run installs it).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

const START: u64 = 1_700_000_000;
const END: u64 = START + 300;

/// Percent-decodes a query string value (`+` is a space in forms).
fn decode(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// Serves query_range and query with one rising series, recording each query.
fn fake_prometheus(queries: Arc<Mutex<Vec<String>>>) -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut line = String::new();
            BufReader::new(&stream).read_line(&mut line).unwrap();
            let target = line.split_whitespace().nth(1).unwrap_or_default().to_string();
            let (path, query) = target.split_once('?').unwrap_or((&target, ""));
            let params: Vec<(String, String)> = query.split('&').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), decode(v))).collect();
            let expr = params.iter().find(|(k, _)| k == "query").map(|(_, v)| v.clone()).unwrap_or_default();
            queries.lock().unwrap().push(expr);
            let metric = r#"{"source":"0","flow":"A->B","topic":"orders","partition":"0","instance":"127.0.0.1:19290","group":"billing"}"#;
            let body = if path == "/api/v1/query_range" {
                let values: Vec<String> = (START..=END).step_by(10).map(|t| format!("[{t},\"{}\"]", (t - START) as f64 / 10.0)).collect();
                format!(r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{metric},"values":[{}]}}]}}}}"#, values.join(","))
            } else {
                format!(r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{metric},"value":[{END},"42"]}}]}}}}"#)
            };
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
    port
}

#[test]
fn draws_every_panel_of_the_dashboard_into_a_small_png() {
    let queries = Arc::new(Mutex::new(Vec::new()));
    let port = fake_prometheus(queries.clone());
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard-picture.png");
    let _ = std::fs::remove_file(&out);
    let run = Command::new("/usr/bin/python3")
        .arg("scripts/lib/dashboard_picture.py")
        .args(["--prometheus", &format!("http://127.0.0.1:{port}"), "--start", &START.to_string(), "--end", &END.to_string()])
        .arg("--out")
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("/usr/bin/python3 (Debian's, with python3-matplotlib)");
    let text = String::from_utf8_lossy(&run.stdout).to_string() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "dashboard_picture.py failed:\n{text}");
    assert!(!text.contains("no data for panel"), "a panel was drawn without data although every query had some:\n{text}");

    let png = std::fs::read(&out).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a PNG", out.display());
    assert!(png.len() < 250_000, "the picture is {} bytes, too big for the README", png.len());

    // Every expression of the dashboard was asked, with no variable left.
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/grafana/mirror-maker.json")).unwrap()).unwrap();
    let asked = queries.lock().unwrap().clone();
    let targets = dashboard["panels"].as_array().unwrap().iter().flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default());
    let mut expected = 0;
    for t in targets {
        expected += 1;
        let expr = t["expr"].as_str().unwrap();
        // Its first series name is enough to find it among the queries.
        let series =
            expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).find(|w| w.starts_with("mirror_maker_") || w.starts_with("kafka_")).unwrap();
        assert!(asked.iter().any(|q| q.contains(series)), "no query for {series} ({expr}); asked: {asked:#?}");
    }
    assert_eq!(asked.len(), expected, "one query per target: {asked:#?}");
    for q in &asked {
        assert!(!q.contains('$'), "a variable was sent to Prometheus: {q}");
        assert!(q.contains("=~\".*\"") || !q.contains("=~"), "the variables were not replaced by Grafana's All: {q}");
    }
}
