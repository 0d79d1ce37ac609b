//! End-to-end: the Connect guide's workflow against `scripts/connect-distributed.sh
//! worker.properties` (issue #28 item 2), driven with curl as a user would:
//! PUT the guide's source connector JSON, read its status, pause, resume,
//! kill -9 the worker and start it again with no new PUT, delete. Clusters
//! come from `scripts/clusters start` (see tests/common).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::connect::*;
use common::*;
use serde_json::json;

/// This file's REST ports (see [`rest_port`]).
const RANGE: std::ops::Range<u16> = 18300..18400;

/// How long the tests wait for a condition (a noisy 2-core machine).
const LONG: Duration = Duration::from_secs(180);

/// How long, once nothing can copy, a test watches that nothing does.
const OBSERVE: Duration = Duration::from_secs(3);

/// Members of consumer group `group` on the source now (Kafka's describe
/// groups); None when it cannot be described.
fn members_of(group: &str) -> Option<usize> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = rdkafka::ClientConfig::new().set("bootstrap.servers", source()).create().ok()?;
    let list = c.fetch_group_list(Some(group), Duration::from_secs(15)).ok()?;
    let g = list.groups().iter().find(|g| g.name() == group)?;
    Some(g.members().len())
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

/// The worker file of a test run: the storage topics named after
/// `storage` (also the worker group), the REST listener on `port`.
fn write_worker_file(dir: &Path, name: &str, storage: &str, port: u16) -> PathBuf {
    let rest = [format!("listeners=http://127.0.0.1:{port}"), "scheduled.rebalance.max.delay.ms=10000".into()];
    distributed_worker_file(&dir.join(name), &target(), storage, &rest)
}

/// The guide's connector JSON: tasks.max "4", a leading space in the
/// class name, consumer.group.id and producer.enable.idempotence.
fn write_connector_json(dir: &Path, aliases: (&str, &str), topic: &str, group: &str) -> PathBuf {
    let guides = json!({
        "name": "mm2-source-connector",
        "connector.class": " org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "4", "consumer.group.id": group, "producer.enable.idempotence": "true",
    });
    json_file(&dir.join("mm2-source-connector.json"), &mirror_connector("MirrorSourceConnector", aliases, &target(), topic, guides))
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
    let port = rest_port(RANGE);
    let base = format!("http://127.0.0.1:{port}");
    let dir = scratch_dir("connect");
    let storage = unique("connect");
    let worker_file = write_worker_file(&dir, "worker.properties", &storage, port);
    let group = unique("guide-group");
    let json = write_connector_json(&dir, (&alias_a, &alias_b), &topic, &group);
    let url = format!("{base}/connectors/mm2-source-connector");

    let mut worker = ConnectWorker::start("connect-distributed.sh", &[&worker_file]);
    wait_until("the worker's REST API", || curl("GET", &format!("{base}/"), None).0 == 200);
    let (code, body) = curl("PUT", &format!("{url}/config"), Some(&json));
    assert_eq!(code, 201, "PUT config created: {body}\n{}", worker.output());
    assert!(body.contains("\"type\":\"source\"") && body.contains("\"name\":\"mm2-source-connector\""), "{body}");
    assert_eq!(curl("PUT", &format!("{url}/config"), Some(&json)).0, 200, "the same PUT again is an update");
    wait_until("status RUNNING", || state(&base, "mm2-source-connector").as_deref() == Some("RUNNING"));

    produce(&source(), &topic, &batch(&topic, 0, 300));
    wait_until("the first 300 records on the remote topic", || seqs_on(&remote).len() == 300);
    assert!(members_of(&group).is_some_and(|n| n > 0), "the running flow's group has members: {:?}", members_of(&group));

    // Paused: records produced meanwhile stay on the source.
    assert_eq!(curl("PUT", &format!("{url}/pause"), None).0, 202);
    wait_until("status PAUSED", || state(&base, "mm2-source-connector").as_deref() == Some("PAUSED"));
    // Only once the flow's group on the source has no member can nothing
    // be copied; records produced after that must stay there.
    wait_for("the paused flow's group on the source to have no member", LONG, || members_of(&group) == Some(0));
    produce(&source(), &topic, &batch(&topic, 300, 100));
    // A short window after the condition held: a run wrongly started again
    // would join the group and copy within it.
    std::thread::sleep(OBSERVE);
    assert_eq!(members_of(&group), Some(0), "a member joined the paused flow's group");
    assert_eq!(seqs_on(&remote).len(), 300, "records produced while paused were copied");
    assert_eq!(curl("PUT", &format!("{url}/resume"), None).0, 202);
    wait_until("status RUNNING after resume", || state(&base, "mm2-source-connector").as_deref() == Some("RUNNING"));
    wait_until("the paused 100 after resume", || seqs_on(&remote).len() == 400);

    // kill -9, records meanwhile, a new worker on the same file with no PUT.
    Command::new("kill").args(["-9", &worker.child.id().to_string()]).status().unwrap();
    let _ = worker.child.wait();
    produce(&source(), &topic, &batch(&topic, 400, 200));
    worker = ConnectWorker::start("connect-distributed.sh", &[&worker_file]);
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
    wait_for("the deleted flow's group on the source to have no member", LONG, || members_of(&group) == Some(0));
    produce(&source(), &topic, &batch(&topic, 600, 50));
    // As for the pause: a short window after nothing can copy any more.
    std::thread::sleep(OBSERVE);
    assert_eq!(members_of(&group), Some(0), "a member joined the deleted flow's group");
    assert_eq!(seqs_on(&remote).len(), 600, "a deleted connector copied");
}

/// Whether the worker's log says one of its connector's streams was given
/// partitions of `topic` (the engine logs `assigned N partitions: t-0, ..`).
fn copies(worker: &ConnectWorker, topic: &str) -> bool {
    worker.output().lines().any(|l| l.contains("assigned") && l.contains(&format!(" {topic}-")))
}

/// (distinct sequence numbers, records) on the target's remote topic.
fn landed(topic: &str) -> (std::collections::BTreeSet<u64>, usize) {
    let recs = read_topic(&target(), topic);
    (recs.iter().filter_map(|l| l.rec.seq()).collect(), recs.len())
}

/// Issue #28's "done when" for Connect: two workers on one worker file
/// (same group.id, their own listeners) share the guide's source
/// connector; either answers for it; kill -9 of one loses nothing.
#[test]
#[ignore = "needs clusters"]
fn two_workers_share_a_connector_and_survive_kill_9() {
    require_clusters!(source(), target());
    let id = short_id();
    let (alias_a, alias_b) = (format!("A{id}"), format!("B{id}"));
    let topic = unique("pair");
    // Several partitions, so the flow's group gives both workers a share.
    create_topic(&source(), &topic, 8, &[]);
    let remote = format!("{alias_a}.{topic}");
    let (port1, port2) = (rest_port(RANGE), rest_port(RANGE));
    let (base1, base2) = (format!("http://127.0.0.1:{port1}"), format!("http://127.0.0.1:{port2}"));
    let dir = scratch_dir("connect-pair");
    let storage = unique("connect-pair");
    let file1 = write_worker_file(&dir, "worker-1.properties", &storage, port1);
    let file2 = write_worker_file(&dir, "worker-2.properties", &storage, port2);
    let json = write_connector_json(&dir, (&alias_a, &alias_b), &topic, &unique("pair-group"));
    let long = LONG;

    let mut w1 = ConnectWorker::start("connect-distributed.sh", &[&file1]);
    let w2 = ConnectWorker::start("connect-distributed.sh", &[&file2]);
    wait_for("worker 1's REST API", long, || curl("GET", &format!("{base1}/"), None).0 == 200);
    wait_for("worker 2's REST API", long, || curl("GET", &format!("{base2}/"), None).0 == 200);
    let (code, body) = curl("PUT", &format!("{base1}/connectors/mm2-source-connector/config"), Some(&json));
    assert_eq!(code, 201, "PUT to worker 1: {body}\n{}", w1.output());
    wait_for("worker 2 to list the connector PUT to worker 1", long, || curl("GET", &format!("{base2}/connectors"), None).1 == r#"["mm2-source-connector"]"#);
    wait_for("status RUNNING via worker 2", long, || state(&base2, "mm2-source-connector").as_deref() == Some("RUNNING"));
    wait_for("both workers to copy (each given partitions of the topic)", long, || copies(&w1, &topic) && copies(&w2, &topic));

    produce(&source(), &topic, &batch(&topic, 0, 400));
    wait_for("the first 400 records on the remote topic", long, || landed(&remote).0.len() == 400);

    // kill -9 worker 1: its share moves to worker 2 once the flow's group
    // notices (the session timeout, kept within the worker file's
    // scheduled.rebalance.max.delay.ms), and what it had not committed is
    // copied again (duplicates, counted below), never lost.
    assert!(w2.output().contains("session.timeout.ms=10000"), "worker 2 names the session its connectors' consumers get:\n{}", w2.output());
    Command::new("kill").args(["-9", &w1.child.id().to_string()]).status().unwrap();
    let _ = w1.child.wait();
    produce(&source(), &topic, &batch(&topic, 400, 400));
    wait_for("all 800 records after the kill", long, || landed(&remote).0.len() == 800);
    let (seqs, total) = landed(&remote);
    let missing: Vec<u64> = (0..800).filter(|s| !seqs.contains(s)).collect();
    eprintln!("after kill -9 of worker 1: {} distinct of 800, {} records, {} duplicates", seqs.len(), total, total - seqs.len());
    assert!(missing.is_empty(), "missing: {missing:?}");
    assert_eq!(state(&base2, "mm2-source-connector").as_deref(), Some("RUNNING"), "status via worker 2 after the kill");
    assert_eq!(curl("GET", &format!("{base2}/connectors"), None).1, r#"["mm2-source-connector"]"#);

    // The connector's positions are in the worker's offsets topic under its
    // own name, as Java Connect keeps them (so Java Connect can continue the
    // connector): every partition's last copied offset, end - 1.
    let ends = end_offsets(&source(), &topic).expect("the source topic's end offsets");
    let offsets_topic = format!("{storage}-offsets");
    let expected: std::collections::BTreeMap<String, String> = ends
        .iter()
        .enumerate()
        .filter(|(_, end)| **end > 0)
        .map(|(p, end)| {
            let key = format!(r#"["mm2-source-connector",{{"cluster":"{alias_a}","partition":{p},"topic":"{topic}"}}]"#);
            (key, format!(r#"{{"offset":{}}}"#, end - 1))
        })
        .collect();
    let mut last = Default::default();
    let caught_up = wait_for_result(LONG, || {
        last = positions_in(&offsets_topic);
        expected.iter().all(|(k, v)| last.get(k) == Some(v))
    });
    assert!(caught_up, "positions under the connector's name in {offsets_topic}:\nexpected {expected:#?}\nfound {last:#?}");
    drop(w2);
}

/// Whether `cond` holds within `limit`, polled every half second.
fn wait_for_result(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// The last value of each key of a Connect offsets topic on the target.
fn positions_in(topic: &str) -> std::collections::BTreeMap<String, String> {
    let mut last = std::collections::BTreeMap::new();
    for l in read_topic(&target(), topic) {
        let key = String::from_utf8_lossy(l.rec.key.as_deref().unwrap_or_default()).to_string();
        match &l.rec.value {
            Some(v) => last.insert(key, String::from_utf8_lossy(v).to_string()),
            None => last.remove(&key),
        };
    }
    last
}

/// Issue #29 on Connect workers: the worker's `exactly.once.source.support
/// = enabled` and the connector's `exactly.once.support = required` (with
/// the source read `read_committed`, as Java requires of
/// MirrorSourceConnector) copy exactly once through a kill -9 of the
/// worker under load and its restart with no new PUT: a `read_committed`
/// reader of the target finds every record once.
#[test]
#[ignore = "needs clusters"]
fn an_exactly_once_connector_survives_kill_9_of_its_worker() {
    require_clusters!(source(), target());
    let id = short_id();
    let (alias_a, alias_b) = (format!("A{id}"), format!("B{id}"));
    let topic = unique("eos-connect");
    create_topic(&source(), &topic, 4, &[]);
    let remote = format!("{alias_a}.{topic}");
    let port = rest_port(RANGE);
    let base = format!("http://127.0.0.1:{port}");
    let dir = scratch_dir("connect-eos");
    let storage = unique("connect-eos");
    let rest = [format!("listeners=http://127.0.0.1:{port}"), "exactly.once.source.support=enabled".into()];
    let file = distributed_worker_file(&dir.join("worker.properties"), &target(), &storage, &rest);
    let extra = json!({
        "tasks.max": "2", "consumer.group.id": unique("eos-connect-group"),
        "exactly.once.support": "required", "consumer.isolation.level": "read_committed",
        // The ownership group's session: the killed worker's share moves within 6 s.
        "consumer.session.timeout.ms": "6000",
    });
    let json = json_file(&dir.join("eos.json"), &mirror_connector("MirrorSourceConnector", (&alias_a, &alias_b), &target(), &topic, extra));
    let long = LONG;

    let mut w = ConnectWorker::start("connect-distributed.sh", &[&file]);
    wait_for("the worker's REST API", long, || curl("GET", &format!("{base}/"), None).0 == 200);
    let (code, body) = curl("PUT", &format!("{base}/connectors/mm2-eos/config"), Some(&json));
    assert_eq!(code, 201, "PUT: {body}\n{}", w.output());
    wait_for("status RUNNING", long, || state(&base, "mm2-eos").as_deref() == Some("RUNNING"));

    // Records arrive all along; the worker is killed once some are visible
    // to read_committed readers, mid-stream.
    let total = 20_000;
    let recs = sample_records(&topic, total);
    let load = {
        let (topic, recs) = (topic.clone(), recs.clone());
        std::thread::spawn(move || {
            for chunk in recs.chunks(500) {
                produce(&source(), &topic, chunk);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    wait_for("the first records visible read_committed", long, || !read_topic_committed(&target(), &remote).is_empty());
    assert!(w.output().contains("ownership assigned"), "the connector copies exactly once (its tasks own partitions):\n{}", w.output());
    assert!(!load.is_finished(), "the kill comes while records still arrive");
    Command::new("kill").args(["-9", &w.child.id().to_string()]).status().unwrap();
    let _ = w.child.wait();
    let w = ConnectWorker::start("connect-distributed.sh", &[&file]);
    load.join().unwrap();
    wait_for("every record visible read_committed after the restart", long, || read_topic_committed(&target(), &remote).len() >= total);
    assert_eq!(state(&base, "mm2-eos").as_deref(), Some("RUNNING"), "status after the restart");
    let landed = read_topic_committed(&target(), &remote);
    let dups = assert_same_records(&remote, &recs, &landed);
    println!("EOS Connect worker, kill -9 under load and restart: produced {total}, read_committed {} records, missing 0, duplicates {dups}", landed.len());
    assert_eq!(dups, 0, "records on the target twice after kill -9 of an exactly-once worker");
    drop(w);
}
