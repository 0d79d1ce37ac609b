//! End-to-end: the Connect guide's workflow against `scripts/connect-distributed.sh
//! worker.properties` (issue #28 item 2), driven with curl as a user would:
//! PUT the guide's source connector JSON, read its status, pause, resume,
//! kill -9 the worker and start it again with no new PUT, delete. Clusters
//! come from `scripts/clusters start` (see tests/common).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;

/// A REST port of this test run's range (18300-18399), free now.
fn rest_port() -> u16 {
    (18300..18400).find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok()).expect("a free port in 18300-18399")
}

/// `curl -s -X method [--data @file] url`: (status, body).
fn curl(method: &str, url: &str, data: Option<&Path>) -> (u16, String) {
    let mut c = Command::new("curl");
    c.args(["-s", "-X", method, "-H", "Content-Type: application/json", "-w", "\n%{http_code}", url]);
    if let Some(d) = data {
        c.args(["--data", &format!("@{}", d.display())]);
    }
    let out = c.output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// The worker as the guide starts it, its log in a file.
struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn start(file: &Path) -> Worker {
        let log = std::env::temp_dir().join(format!("{}.log", unique("connect-worker")));
        let out = std::fs::File::create(&log).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/connect-distributed.sh");
        let child = Command::new(script)
            .arg(file)
            .env("MIRROR_MAKER_BIN", bin())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start connect-distributed.sh");
        Worker { child, log }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn state(base: &str, name: &str) -> Option<String> {
    let (code, body) = curl("GET", &format!("{base}/connectors/{name}/status"), None);
    if code != 200 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    v["connector"]["state"].as_str().map(str::to_string)
}

/// Sequence numbers of the records on the target's remote topic.
fn seqs_on(topic: &str) -> std::collections::BTreeSet<u64> {
    read_topic(&target(), topic).iter().filter_map(|l| l.rec.seq()).collect()
}

fn batch(topic: &str, from: usize, n: usize) -> Vec<Rec> {
    let mut v = sample_records(topic, from + n);
    v.drain(..from);
    v
}

#[test]
#[ignore = "needs clusters"]
fn the_connect_guides_workflow_runs_as_is() {
    require_clusters!(source(), target());
    let id = short_id();
    let (alias_a, alias_b) = (format!("A{id}"), format!("B{id}"));
    let topic = unique("guide");
    create_topic(&source(), &topic, 3, &[]);
    let remote = format!("{alias_a}.{topic}");
    let port = rest_port();
    let base = format!("http://127.0.0.1:{port}");
    let dir = std::env::temp_dir().join(unique("connect"));
    std::fs::create_dir_all(&dir).unwrap();
    let worker_file = dir.join("worker.properties");
    let storage = unique("connect");
    std::fs::write(
        &worker_file,
        format!(
            "bootstrap.servers={}\ngroup.id={storage}\nconfig.storage.topic={storage}-configs\noffset.storage.topic={storage}-offsets\n\
             status.storage.topic={storage}-status\nconfig.storage.replication.factor=1\noffset.storage.replication.factor=1\n\
             status.storage.replication.factor=1\nlisteners=http://127.0.0.1:{port}\noffset.flush.interval.ms=1000\n",
            target()
        ),
    )
    .unwrap();
    // The guide's connector JSON: tasks.max "4", a leading space in the
    // class name, consumer.group.id and producer.enable.idempotence.
    let json = dir.join("mm2-source-connector.json");
    let group = unique("guide-group");
    std::fs::write(
        &json,
        serde_json::json!({
            "name": "mm2-source-connector",
            "connector.class": " org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": alias_a, "target.cluster.alias": alias_b,
            "source.cluster.bootstrap.servers": source(), "target.cluster.bootstrap.servers": target(),
            "topics": topic, "tasks.max": "4",
            "consumer.group.id": group, "producer.enable.idempotence": "true",
            "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
            "sync.topic.acls.enabled": "false"
        })
        .to_string(),
    )
    .unwrap();
    let url = format!("{base}/connectors/mm2-source-connector");

    let mut worker = Worker::start(&worker_file);
    wait_until("the worker's REST API", || curl("GET", &format!("{base}/"), None).0 == 200);
    let (code, body) = curl("PUT", &format!("{url}/config"), Some(&json));
    assert_eq!(code, 201, "PUT config created: {body}\n{}", worker.output());
    assert!(body.contains("\"type\":\"source\"") && body.contains("\"name\":\"mm2-source-connector\""), "{body}");
    assert_eq!(curl("PUT", &format!("{url}/config"), Some(&json)).0, 200, "the same PUT again is an update");
    wait_until("status RUNNING", || state(&base, "mm2-source-connector").as_deref() == Some("RUNNING"));

    produce(&source(), &topic, &batch(&topic, 0, 300));
    wait_until("the first 300 records on the remote topic", || seqs_on(&remote).len() == 300);

    // Paused: records produced meanwhile stay on the source.
    assert_eq!(curl("PUT", &format!("{url}/pause"), None).0, 202);
    wait_until("status PAUSED", || state(&base, "mm2-source-connector").as_deref() == Some("PAUSED"));
    produce(&source(), &topic, &batch(&topic, 300, 100));
    std::thread::sleep(Duration::from_secs(5)); // a window in which a running copy would have copied them
    assert_eq!(seqs_on(&remote).len(), 300, "records produced while paused were copied");
    assert_eq!(curl("PUT", &format!("{url}/resume"), None).0, 202);
    wait_until("status RUNNING after resume", || state(&base, "mm2-source-connector").as_deref() == Some("RUNNING"));
    wait_until("the paused 100 after resume", || seqs_on(&remote).len() == 400);

    // kill -9, records meanwhile, a new worker on the same file with no PUT.
    Command::new("kill").args(["-9", &worker.child.id().to_string()]).status().unwrap();
    let _ = worker.child.wait();
    produce(&source(), &topic, &batch(&topic, 400, 200));
    worker = Worker::start(&worker_file);
    wait_until("the restarted worker knows the connector from the config topic", || state(&base, "mm2-source-connector").as_deref() == Some("RUNNING"));
    wait_until("all 600 records after the restart", || seqs_on(&remote).len() == 600);
    let missing: Vec<u64> = (0..600).filter(|s| !seqs_on(&remote).contains(s)).collect();
    assert!(missing.is_empty(), "missing: {missing:?}");

    // DELETE stops it: 204, 404 afterwards, and nothing more is copied.
    assert_eq!(curl("DELETE", &url, None).0, 204);
    let (code, body) = curl("GET", &format!("{url}/status"), None);
    assert_eq!(code, 404, "{body}");
    assert!(body.contains("\"error_code\":404"), "{body}");
    assert_eq!(curl("GET", &format!("{base}/connectors"), None).1, "[]");
    wait_until("the run to stop", || worker.output().contains("connector mm2-source-connector: stopped"));
    produce(&source(), &topic, &batch(&topic, 600, 50));
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(seqs_on(&remote).len(), 600, "a deleted connector copied");
}
