//! End-to-end, issue #28 item 3: a real Java Connect worker
//! (scripts/java-connect, `ConnectDistributed` from the Kafka jars) and ours
//! (scripts/connect-distributed.sh) side by side, each given a worker file
//! of the same shape (its own group.id, storage topics and REST port, so
//! they share no state) and the same three connector JSON files as the
//! Connect guide writes them. Java mirrors the source cluster into the
//! extra cluster, ours into the target cluster, as tests/mm2.rs's
//! `same_file_same_result_as_java_mm2` does for dedicated mode; then the
//! two are compared: remote topics, records, checkpoints (decoded by Java's
//! Checkpoint class), heartbeats, and the REST answers' shapes and codes.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::connect::*;
use common::*;
use serde_json::{json, Value};

/// Java Connect needs 10-30 s to start here, and longer on a busy machine.
const LONG: Duration = Duration::from_secs(240);

const CONNECTORS: [(&str, &str); 3] = [
    ("mm2-source-connector", "MirrorSourceConnector"),
    ("mm2-checkpoint-connector", "MirrorCheckpointConnector"),
    ("mm2-heartbeat-connector", "MirrorHeartbeatConnector"),
];

fn get_json(url: &str) -> (u16, Value) {
    let (code, body) = curl("GET", url, None);
    (code, serde_json::from_str(&body).unwrap_or(Value::String(body)))
}

/// A worker process (Java's or ours) and its REST base URL.
struct Worker {
    process: ConnectWorker,
    base: String,
}

impl Worker {
    /// `scripts/<script> <file>`, RUST_LOG as this test's.
    fn start(script: &str, file: &Path, port: u16) -> Worker {
        Worker { process: ConnectWorker::start_with(script, &[file], &[]), base: format!("http://127.0.0.1:{port}") }
    }

    /// SIGTERM, then the exit status; -1 when it has not exited within LONG.
    fn stop(&mut self) -> i32 {
        self.process.stop_within(LONG).unwrap_or(-1)
    }
}

impl std::ops::Deref for Worker {
    type Target = ConnectWorker;
    fn deref(&self) -> &ConnectWorker {
        &self.process
    }
}

impl std::ops::DerefMut for Worker {
    fn deref_mut(&mut self) -> &mut ConnectWorker {
        &mut self.process
    }
}

/// Deletes every topic carrying the test's id on the three clusters when
/// the test ends, passed or failed (MM2 copies every heartbeats-like topic
/// of a source, so leftovers would be copied by later runs).
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for bootstrap in [source(), target(), extra()] {
            delete_topics_containing(&bootstrap, &self.0);
        }
    }
}

/// The worker file: the guide's keys, storage on the worker's own cluster.
fn worker_file(dir: &Path, side: &str, bootstrap: &str, storage: &str, port: u16) -> PathBuf {
    let rest =
        [format!("listeners=http://127.0.0.1:{port}"), format!("key.converter={BYTE_ARRAY_CONVERTER}"), format!("value.converter={BYTE_ARRAY_CONVERTER}")];
    distributed_worker_file(&dir.join(format!("worker-{side}.properties")), bootstrap, storage, &rest)
}

/// The three connector JSON files as the guide writes them ("tasks.max"
/// "4", consumer.group.id, producer.enable.idempotence); only the target's
/// address differs. The guide's leading space in the class name is tried
/// apart, by [`spaced_class`]: Java refuses it, so with it Java would run nothing.
fn connector_files(dir: &Path, side: &str, (a, b): (&str, &str), target_bootstrap: &str, topic: &str, group: &str) -> Vec<PathBuf> {
    CONNECTORS
        .iter()
        .map(|(name, class)| {
            let guides = json!({
                "name": name, "clusters": format!("{a},{b}"), "tasks.max": "4",
                "checkpoints.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1",
                // Each side's offset-syncs on its own target: with the default
                // (the source), both would write mm2-offset-syncs.B.internal on
                // the shared source and each checkpoint task read the other's.
                "offset-syncs.topic.location": "target",
                "groups": group,
                "emit.checkpoints.interval.seconds": "1", "emit.heartbeats.interval.seconds": "1",
            });
            // mirror_connector's class has no leading space: Java 3.9.2
            // refuses one in JSON (see spaced_class).
            let mut v = mirror_connector(class, (a, b), target_bootstrap, topic, guides);
            if *class == "MirrorSourceConnector" {
                v["consumer.group.id"] = json!(format!("{group}-mirror-{side}"));
                v["producer.enable.idempotence"] = json!("true");
            }
            json_file(&dir.join(format!("{side}-{name}.json")), &v)
        })
        .collect()
}

/// A JSON value's shape: leaves become their type, arrays the set of their
/// elements' shapes, objects keep their keys (sorted).
fn shape(v: &Value) -> Value {
    match v {
        Value::Null => json!("null"),
        Value::Bool(_) => json!("bool"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        Value::Array(a) => {
            let distinct: BTreeSet<String> = a.iter().map(|e| shape(e).to_string()).collect();
            Value::Array(distinct.iter().map(|s| serde_json::from_str(s).unwrap()).collect())
        }
        // Keys sorted whatever serde_json's map keeps (with preserve_order,
        // the order of the text): the order of keys is not compared.
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, shape(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
    }
}

/// Where two shapes differ, as paths: a key only one side has, or a
/// different type (arrays of one element shape are followed).
fn shape_diff(java: &Value, ours: &Value, at: &str) -> Vec<String> {
    match (java, ours) {
        (Value::Object(j), Value::Object(o)) => {
            let keys: BTreeSet<&String> = j.keys().chain(o.keys()).collect();
            keys.into_iter()
                .flat_map(|k| match (j.get(k), o.get(k)) {
                    (Some(jv), Some(ov)) => shape_diff(jv, ov, &format!("{at}.{k}")),
                    (Some(_), None) => vec![format!("{at}.{k} only in java")],
                    _ => vec![format!("{at}.{k} only in ours")],
                })
                .collect()
        }
        (Value::Array(j), Value::Array(o)) if j.len() == 1 && o.len() == 1 => shape_diff(&j[0], &o[0], &format!("{at}[]")),
        _ if java == ours => vec![],
        _ => vec![format!("{at}: java {java} | ours {ours}")],
    }
}

/// Notes where two JSON answers' shapes differ.
fn differ_shape(diffs: &mut Vec<String>, what: &str, java: &Value, ours: &Value) {
    let d = shape_diff(&shape(java), &shape(ours), "");
    if !d.is_empty() {
        diffs.push(format!("{what} shape: {}", d.join("; ")));
    }
}

/// (connector state, task states) of a status answer.
fn states(status: &Value) -> (String, Vec<String>) {
    let connector = status["connector"]["state"].as_str().unwrap_or("?").to_string();
    let tasks = status["tasks"].as_array().map(|t| t.iter().map(|t| t["state"].as_str().unwrap_or("?").to_string()).collect()).unwrap_or_default();
    (connector, tasks)
}

fn all_running(w: &Worker) -> bool {
    CONNECTORS.iter().all(|(name, _)| {
        let (code, s) = get_json(&format!("{}/connectors/{name}/status", w.base));
        let (c, t) = states(&s);
        code == 200 && c == "RUNNING" && !t.is_empty() && t.iter().all(|t| t == "RUNNING")
    })
}

/// Standard base64 with padding, as Java's SimpleHeaderConverter writes bytes.
fn base64(b: &[u8]) -> Vec<u8> {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] } else { b'=' });
        }
    }
    out
}

/// (remote topic, partition) -> (upstream, downstream) of a group's last checkpoints.
type Checkpoints = BTreeMap<(String, i32), (i64, i64)>;

/// The last checkpoint of each (group, topic, partition) in `A.checkpoints.internal`
/// on `bootstrap`, decoded by Java's Checkpoint: (upstream, downstream).
fn checkpoints(bootstrap: &str, topic: &str, group: &str) -> Result<Checkpoints, String> {
    let (rc, out, err) = mirror_client(&["checkpoints", bootstrap, topic]);
    if rc != 0 {
        return Err(format!("exit {rc}: {err}"));
    }
    let mut last = BTreeMap::new();
    for l in out.lines() {
        let w: Vec<&str> = l.splitn(6, ' ').collect();
        if w.len() == 6 && w[0] == group {
            last.insert((w[1].to_string(), w[2].parse().unwrap()), (w[3].parse().unwrap(), w[4].parse().unwrap()));
        }
    }
    Ok(last)
}

/// Notes a difference between what Java and ours show.
fn differ(diffs: &mut Vec<String>, what: &str, java: impl std::fmt::Debug, ours: impl std::fmt::Debug) {
    let (j, o) = (format!("{java:?}"), format!("{ours:?}"));
    if j != o {
        diffs.push(format!("{what}: java {j} | ours {o}"));
    }
}

/// Compares the two workers' REST answers: the same codes, and the same
/// JSON shapes (keys and value types; worker ids and traces differ).
fn compare_rest(java: &Worker, ours: &Worker, diffs: &mut Vec<String>) -> usize {
    let mut compared = 0;
    let names: BTreeSet<String> = CONNECTORS.iter().map(|(n, _)| n.to_string()).collect();
    for path in ["/", "/connectors", "/connectors?expand=status", "/connectors?expand=info", "/connectors?expand=status&expand=info"] {
        let ((jc, jv), (oc, ov)) = (get_json(&format!("{}{path}", java.base)), get_json(&format!("{}{path}", ours.base)));
        differ(diffs, &format!("GET {path} status code"), jc, oc);
        differ_shape(diffs, &format!("GET {path}"), &jv, &ov);
        compared += 1;
        if path == "/connectors" {
            // The order of Java's list is a HashSet's: compared as sets.
            let set = |v: &Value| v.as_array().map(|a| a.iter().filter_map(|n| n.as_str().map(String::from)).collect::<BTreeSet<_>>());
            differ(diffs, "GET /connectors names", set(&jv), set(&ov));
            assert_eq!(set(&jv), Some(names.clone()), "Java lists the three connectors: {jv}");
        }
    }
    for (name, _) in CONNECTORS {
        for sub in ["", "/status", "/config", "/tasks", "/tasks/0/status"] {
            let path = format!("/connectors/{name}{sub}");
            let ((jc, jv), (oc, ov)) = (get_json(&format!("{}{path}", java.base)), get_json(&format!("{}{path}", ours.base)));
            differ(diffs, &format!("GET {path} status code"), jc, oc);
            // Java's task configs name the partitions (or groups) assigned
            // to each of its tasks; ours runs one task per connector whose
            // partitions the flow's consumer group assigns at run time, so
            // no task config can name them: those keys are set aside here,
            // and printed.
            let mut jv = jv;
            if sub == "/tasks" {
                let mut assigned = Vec::new();
                for t in jv.as_array_mut().into_iter().flatten() {
                    if let Some(cfg) = t["config"].as_object_mut() {
                        let keys: Vec<String> = cfg.keys().filter(|k| k.starts_with("task.assigned.")).cloned().collect();
                        for k in keys {
                            cfg.remove(&k);
                            assigned.push(k);
                        }
                    }
                }
                println!("GET {path}: Java's task configs name {assigned:?}; ours has one task per connector");
            }
            differ_shape(diffs, &format!("GET {path}"), &jv, &ov);
            if sub == "/status" {
                // The states, each distinct task state once: Java runs one task
                // per partition group up to tasks.max, ours one engine run per
                // connector (task 0), so the task counts are printed, not compared.
                let distinct = |v: &Value| {
                    let (c, t) = states(v);
                    (c, t.into_iter().collect::<BTreeSet<_>>())
                };
                differ(diffs, &format!("GET {path} states (connector, distinct task states)"), distinct(&jv), distinct(&ov));
                println!("{path}: tasks java {} | ours {}", states(&jv).1.len(), states(&ov).1.len());
                differ(diffs, &format!("GET {path} type"), &jv["type"], &ov["type"]);
            }
            compared += 1;
        }
    }
    // The three mirror classes' plugin entries: class and type; the version
    // is printed (Java's is its jars', ours a constant).
    let plugins = |w: &Worker| -> (u16, BTreeMap<String, Value>) {
        let (code, v) = get_json(&format!("{}/connector-plugins", w.base));
        let entries = v.as_array().cloned().unwrap_or_default().into_iter().filter(|e| e["class"].as_str().is_some_and(|c| c.contains(".connect.mirror.")));
        (code, entries.map(|e| (e["class"].as_str().unwrap().to_string(), e)).collect())
    };
    let ((jc, jp), (oc, op)) = (plugins(java), plugins(ours));
    differ(diffs, "GET /connector-plugins status code", jc, oc);
    assert_eq!(jp.len(), 3, "Java's plugin list has the three mirror classes: {jp:?}");
    let kinds = |p: &BTreeMap<String, Value>| p.iter().map(|(c, e)| (c.clone(), e["type"].clone(), shape(e))).collect::<Vec<_>>();
    differ(diffs, "GET /connector-plugins mirror entries (class, type, shape)", kinds(&jp), kinds(&op));
    let version = |p: &BTreeMap<String, Value>| p.values().next().map(|e| e["version"].clone());
    if version(&jp) != version(&op) {
        eprintln!("connector-plugins version: java {:?} | ours {:?}", version(&jp), version(&op));
    }
    compared += 1;
    compared + compare_errors(java, ours, diffs)
}

/// Errors: an unknown connector (404s) and an unknown class, as Java answers them.
fn compare_errors(java: &Worker, ours: &Worker, diffs: &mut Vec<String>) -> usize {
    let mut n = 0;
    for path in ["/connectors/nope", "/connectors/nope/status", "/connectors/nope/config", "/connectors/nope/tasks/0/status", "/no/such/path"] {
        let ((jc, jv), (oc, ov)) = (get_json(&format!("{}{path}", java.base)), get_json(&format!("{}{path}", ours.base)));
        assert_eq!(jc, 404, "Java's GET {path}: {jv}");
        differ(diffs, &format!("GET {path} status code"), jc, oc);
        differ(diffs, &format!("GET {path} body"), &jv, &ov);
        n += 1;
    }
    let dir = scratch_dir("connect-java-bad");
    let bad = json_file(&dir.join("bad.json"), &json!({"connector.class": "org.example.NoSuchConnector", "tasks.max": "1"}));
    let put = |w: &Worker| {
        let (code, body) = curl("PUT", &format!("{}/connectors/bad/config", w.base), Some(&bad));
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
        (code, v)
    };
    let ((jc, jv), (oc, ov)) = (put(java), put(ours));
    // Java 3.9.2 answers 500 (the plugin lookup's ConnectException), naming the class.
    println!("unknown connector.class: java {jc} {jv} | ours {oc} {ov}");
    // On purpose (issue #28): ours refuses a class it cannot run as a bad
    // request naming the three it can, where Java answers 500.
    differ(diffs, "PUT an unknown connector.class status code (Java 500, ours 400 on purpose)", (500, 400), (jc, oc));
    differ_shape(diffs, "PUT an unknown connector.class error", &jv, &ov);
    for (side, v) in [("java", &jv), ("ours", &ov)] {
        let msg = v["message"].as_str().unwrap_or_default();
        if !msg.contains("org.example.NoSuchConnector") {
            diffs.push(format!("{side}'s error for an unknown class does not name it: {v}"));
        }
    }
    n + 1 + spaced_class(java, ours, &dir)
}

/// The guide's leading space in a class name (`" org.apache...Mirror..."`)
/// in a JSON PUT: Java 3.9.2 does not trim it and answers 500 ("Failed to
/// find any class that implements Connector and which name matches
/// ' org...'"), nothing stored; ours trims it and accepts the connector
/// (issue #28 asks for that, believing Java accepts it). A difference kept
/// visible here: both halves are asserted, so a change on either side shows.
fn spaced_class(java: &Worker, ours: &Worker, dir: &Path) -> usize {
    let config = json!({
        "connector.class": " org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "tasks.max": "4",
        "source.cluster.alias": "S", "target.cluster.alias": "T",
        "source.cluster.bootstrap.servers": source(), "target.cluster.bootstrap.servers": source(),
        "heartbeats.topic.replication.factor": "1", "emit.heartbeats.enabled": "false",
    });
    let spaced = json_file(&dir.join("spaced.json"), &config);
    let put = |w: &Worker| curl("PUT", &format!("{}/connectors/spaced-class/config", w.base), Some(&spaced));
    let ((jc, jb), (oc, ob)) = (put(java), put(ours));
    println!("leading space in connector.class: java {jc} {} | ours {oc} {ob}", &jb[..jb.len().min(160)]);
    // Ours started it: deleted at once (it emits no heartbeats meanwhile).
    let deleted = curl("DELETE", &format!("{}/connectors/spaced-class", ours.base), None).0;
    assert_eq!(jc, 500, "Java 3.9.2's answer to a leading space in connector.class changed: {jb}");
    assert!(jb.contains("which name matches  org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"), "{jb}");
    assert_eq!((oc, deleted), (201, 204), "ours accepts the guide's leading space (and deletes the connector): {ob}");
    1
}

#[test]
#[ignore = "needs clusters"]
fn same_worker_and_connector_files_same_result_as_java_connect() {
    require_clusters!(source(), target(), extra());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("cj-{id}-t");
    let group = format!("cj-{id}-g");
    create_topic(&source(), &topic, 3, &[]);
    let recs = sample_records(&topic, 300);
    produce(&source(), &topic, &recs);
    // A group on the source at two thirds of each partition: what the
    // checkpoint connectors translate. Committed before the PUTs, so both
    // find it in their first group listing.
    let ends = end_offsets(&source(), &topic).unwrap();
    let committed: Vec<i64> = ends.iter().map(|e| e * 2 / 3).collect();
    commit_on_source(&group, &topic, &committed);

    let dir = scratch_dir("connect-java");
    let (jport, oport) = (rest_port(18400..18500), rest_port(18400..18500));
    let java_file = worker_file(&dir, "java", &extra(), &format!("cj-{id}-java"), jport);
    let ours_file = worker_file(&dir, "ours", &target(), &format!("cj-{id}-ours"), oport);
    let java_json = connector_files(&dir, "java", (&a, &b), &extra(), &topic, &group);
    let ours_json = connector_files(&dir, "ours", (&a, &b), &target(), &topic, &group);
    let started = Instant::now();
    let mut java = Worker::start("java-connect", &java_file, jport);
    let mut ours = Worker::start("connect-distributed.sh", &ours_file, oport);
    let up = |w: &mut Worker| {
        assert!(w.alive(), "worker exited; log {}", w.log.display());
        curl("GET", &format!("{}/", w.base), None).0 == 200
    };
    wait_for("both workers' REST APIs", LONG, || up(&mut java) && up(&mut ours));
    let java_up = started.elapsed();

    let mut diffs: Vec<String> = Vec::new();
    for (((name, _), jf), of) in CONNECTORS.iter().zip(&java_json).zip(&ours_json) {
        let url = |w: &Worker| format!("{}/connectors/{name}/config", w.base);
        let ((jc, jb), (oc, ob)) = (curl("PUT", &url(&java), Some(jf)), curl("PUT", &url(&ours), Some(of)));
        assert_eq!(jc, 201, "Java's PUT {name}: {jb}");
        differ(&mut diffs, &format!("PUT {name} status code"), jc, oc);
        let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::String(s.into()));
        differ_shape(&mut diffs, &format!("PUT {name} answer"), &parse(&jb), &parse(&ob));
    }
    wait_for("every connector and task RUNNING on both workers", LONG, || {
        assert!(java.alive() && ours.alive(), "a worker exited; logs {} {}", java.log.display(), ours.log.display());
        all_running(&java) && all_running(&ours)
    });

    // Records: every one on both targets.
    let remote = format!("{a}.{topic}");
    wait_for("both targets to hold the 300 records", LONG, || count_records(&extra(), &remote) >= 300 && count_records(&target(), &remote) >= 300);
    // Checkpoints: the group's translated position on every partition it committed.
    let cp_topic = format!("{a}.checkpoints.internal");
    let want: BTreeSet<(String, i32)> = committed.iter().enumerate().filter(|(_, c)| **c > 0).map(|(p, _)| (remote.clone(), p as i32)).collect();
    let complete = |bootstrap: &str| {
        checkpoints(bootstrap, &cp_topic, &group)
            .is_ok_and(|cp| want.iter().all(|k| cp.get(k).is_some_and(|(up, down)| *up == committed[k.1 as usize] && *down > 0)))
    };
    // Java's first (it is the reference), then ours within the same
    // deadline; ours missing is a difference, and the comparison goes on
    // so that every other difference is reported too.
    wait_for("Java's checkpoints of the group's every partition", LONG, || complete(&extra()));
    let until = Instant::now() + LONG;
    while !complete(&target()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(500));
    }
    let (java_cp, ours_cp) = (checkpoints(&extra(), &cp_topic, &group), checkpoints(&target(), &cp_topic, &group));
    // The same upstream positions; ours translates each exactly where Java
    // points earlier (one past an older sync: records read again), so
    // ours' downstream is at or past Java's, never behind it.
    let ups = |cp: &Result<Checkpoints, String>| cp.as_ref().map(|m| m.iter().map(|(k, (u, _))| (k.clone(), *u)).collect::<BTreeMap<_, _>>()).ok();
    differ(&mut diffs, "last checkpoints' upstream offsets", ups(&java_cp), ups(&ours_cp));
    if let (Ok(j), Ok(o)) = (&java_cp, &ours_cp) {
        for (k, (_, jd)) in j {
            if o.get(k).is_some_and(|(_, od)| od < jd) {
                diffs.push(format!("checkpoint of {k:?}: ours' downstream {:?} behind Java's {jd}", o.get(k)));
            }
        }
    }
    println!("last checkpoints (remote topic, partition) -> (upstream, downstream): java {java_cp:?} | ours {ours_cp:?}");

    // Topic names of the test on each target, the workers' storage topics apart.
    let names = |bootstrap: &str| -> BTreeSet<String> {
        list_topics(bootstrap).into_iter().filter(|t| t.contains(&id) && !t.starts_with(&format!("cj-{id}-"))).collect()
    };
    differ(&mut diffs, "topics on the target", names(&extra()), names(&target()));

    let (header_checked, compared) = compare_records(&remote, &topic, &mut diffs);
    for (side, bootstrap) in [("java", extra()), ("ours", target())] {
        match java_heartbeats(&bootstrap, "heartbeats", 1_000_000) {
            Ok(hb) if hb.iter().any(|h| h.source == a && h.target == b) => {}
            Ok(hb) => diffs.push(format!("{side}: no {a}->{b} heartbeat among {} in heartbeats", hb.len())),
            Err(e) => diffs.push(format!("{side}: heartbeats do not decode with Java's Heartbeat: {e}")),
        }
    }
    let rest = compare_rest(&java, &ours, &mut diffs) + compare_offsets(&java, &ours, &a, &topic, &mut diffs);
    let (java_exit, ours_exit) = (java.stop(), ours.stop());
    println!(
        "connect vs java: Java's REST up after {:.1} s; {compared} records compared partition by partition ({header_checked} headers base64'd by Java, \
         byte for byte by ours); checkpoints java {java_cp:?} ours {ours_cp:?}; {rest} REST answers compared; exit java {java_exit} ours {ours_exit}; \
         {} differences; logs: java {}, ours {}",
        java_up.as_secs_f64(),
        diffs.len(),
        java.log.display(),
        ours.log.display()
    );
    assert!(diffs.is_empty(), "ours differs from Java Connect on the same files:\n  {}", diffs.join("\n  "));
}

/// Compares both targets' remote topic partition by partition with the
/// source: keys, values and timestamps the same everywhere; headers byte
/// for byte on ours, and on Java's each value base64'd by its worker's
/// default header.converter (SimpleHeaderConverter turns the BYTES
/// MirrorSourceTask gives it into base64 text): the difference the issue
/// keeps on purpose, asserted here so that neither side changes unseen.
/// Returns (headers checked, records compared).
fn compare_records(remote: &str, topic: &str, diffs: &mut Vec<String>) -> (usize, usize) {
    let source_recs = records_by_partition(&source(), topic);
    let (java_recs, ours_recs) = (records_by_partition(&extra(), remote), records_by_partition(&target(), remote));
    differ(diffs, &format!("{remote} partitions"), java_recs.len(), ours_recs.len());
    let (mut headers, mut compared) = (0, 0);
    for (p, src) in source_recs.iter().enumerate() {
        let (j, o) = (java_recs.get(p).cloned().unwrap_or_default(), ours_recs.get(p).cloned().unwrap_or_default());
        differ(diffs, &format!("{remote}-{p} records (source has {})", src.len()), j.len(), o.len());
        for (i, s) in src.iter().enumerate() {
            let Some(o) = o.get(i) else { break };
            if o != s {
                diffs.push(format!("{remote}-{p} record {i}: ours {o:?} | source {s:?}"));
            }
            compared += 1;
            let Some(j) = j.get(i) else { continue };
            let base64d: Vec<(String, Vec<u8>)> = s.headers.iter().map(|(k, v)| (k.clone(), base64(v))).collect();
            if (&j.key, &j.value, j.timestamp) != (&s.key, &s.value, s.timestamp) || j.headers != base64d {
                diffs.push(format!("{remote}-{p} record {i}: java {j:?} | source {s:?} with base64'd headers {base64d:?}"));
            }
            headers += j.headers.len();
        }
    }
    (headers, compared)
}

/// A request with a JSON body (or none), as (status, parsed body).
fn send(w: &Worker, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let file = body.map(|b| {
        let f = std::env::temp_dir().join(unique("offsets-body"));
        std::fs::write(&f, b.to_string()).unwrap();
        f
    });
    let (code, text) = curl(method, &format!("{}{path}", w.base), file.as_deref());
    (code, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// KIP-875's offsets endpoints side by side: GET of each connector while
/// running, PATCH refused while running, then on the stopped source
/// connector a malformed partition, a well-formed PATCH and a DELETE.
fn compare_offsets(java: &Worker, ours: &Worker, a: &str, topic: &str, diffs: &mut Vec<String>) -> usize {
    let mut n = 0;
    let src = "/connectors/mm2-source-connector";
    // The source connector's positions: both at each partition's last
    // copied offset once flushed (every offset.flush.interval.ms).
    let last: Vec<i64> = end_offsets(&source(), topic).unwrap().iter().map(|e| e - 1).collect();
    let positions = |w: &Worker| -> Option<Vec<i64>> {
        let (_, v) = send(w, "GET", &format!("{src}/offsets"), None);
        let mut by: Vec<(i64, i64)> = v["offsets"]
            .as_array()?
            .iter()
            .map(|e| (e["partition"]["partition"].as_i64().unwrap_or(-1), e["offset"]["offset"].as_i64().unwrap_or(-1)))
            .collect();
        by.sort();
        Some(by.into_iter().map(|(_, o)| o).collect())
    };
    let until = Instant::now() + LONG;
    while (positions(java).as_ref() != Some(&last) || positions(ours).as_ref() != Some(&last)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(500));
    }
    differ(diffs, "GET source connector offsets (last copied offset per partition)", positions(java), positions(ours));
    for (name, _) in CONNECTORS {
        let path = format!("/connectors/{name}/offsets");
        let ((jc, jv), (oc, ov)) = (send(java, "GET", &path, None), send(ours, "GET", &path, None));
        println!("GET {path}: java {jc} {jv} | ours {oc} {ov}");
        differ(diffs, &format!("GET {path} status code"), jc, oc);
        if name == "mm2-source-connector" {
            differ_shape(diffs, &format!("GET {path}"), &jv, &ov);
        } else {
            // A gap kept visible (both halves asserted, so a change on either
            // side shows): Java's heartbeat and checkpoint tasks store a
            // position {"offset":0} per heartbeat pair ({sourceClusterAlias,
            // targetClusterAlias}) and per checkpointed (group, topic,
            // partition), which nothing reads back; ours writes none, so
            // GET lists none (PATCH and DELETE of them work as Java's).
            let keys = |v: &Value| v["offsets"][0]["partition"].as_object().map(|m| m.keys().cloned().collect::<BTreeSet<_>>());
            let want: &[&str] =
                if name == "mm2-heartbeat-connector" { &["sourceClusterAlias", "targetClusterAlias"] } else { &["group", "topic", "partition"] };
            let want: BTreeSet<String> = want.iter().map(|k| k.to_string()).collect();
            assert_eq!((keys(&jv), jv["offsets"][0]["offset"].clone()), (Some(want), json!({ "offset": 0 })), "Java's GET {path}: {jv}");
            assert_eq!(ov, json!({ "offsets": [] }), "ours' GET {path}");
        }
        n += 1;
    }
    let (_, jv) = send(java, "GET", &format!("{src}/offsets"), None);
    let one = |offset: Value| json!({ "offsets": [{ "partition": { "cluster": a, "topic": topic, "partition": 1 }, "offset": offset }] });
    let exact = |diffs: &mut Vec<String>, what: &str, method: &str, path: &str, body: Option<&Value>| {
        let ((jc, jv), (oc, ov)) = (send(java, method, path, body), send(ours, method, path, body));
        println!("{what}: java {jc} {jv} | ours {oc} {ov}");
        differ(diffs, &format!("{what}: status code and body"), (jc, &jv), (oc, &ov));
    };
    exact(diffs, "PATCH a running connector's offsets", "PATCH", &format!("{src}/offsets"), Some(&one(json!({ "offset": 0 }))));
    exact(diffs, "DELETE a running connector's offsets", "DELETE", &format!("{src}/offsets"), None);
    exact(diffs, "GET an unknown connector's offsets", "GET", "/connectors/nope/offsets", None);
    exact(diffs, "PATCH no offsets", "PATCH", &format!("{src}/offsets"), Some(&json!({ "offsets": [] })));
    for w in [java, ours] {
        assert_eq!(send(w, "PUT", &format!("{src}/stop"), None).0, 204);
    }
    wait_for("the source connector STOPPED on both", LONG, || {
        [java, ours].iter().all(|w| states(&send(w, "GET", &format!("{src}/status"), None).1).0 == "STOPPED")
    });
    let malformed = json!({ "offsets": [{ "partition": { "cluster": a, "topic": topic }, "offset": { "offset": 1 } }] });
    exact(diffs, "PATCH a partition without 'partition'", "PATCH", &format!("{src}/offsets"), Some(&malformed));
    let negative = one(json!({ "offset": -5 }));
    exact(diffs, "PATCH a negative offset", "PATCH", &format!("{src}/offsets"), Some(&negative));
    exact(diffs, "PATCH a partition back", "PATCH", &format!("{src}/offsets"), Some(&one(json!({ "offset": 3 }))));
    let (_, after) = send(java, "GET", &format!("{src}/offsets"), None);
    println!("Java's source offsets before {jv} and after the PATCH {after}");
    differ(diffs, "source offsets after the same PATCH", positions(java), positions(ours));
    exact(diffs, "DELETE a stopped connector's offsets", "DELETE", &format!("{src}/offsets"), None);
    exact(diffs, "GET offsets after DELETE", "GET", &format!("{src}/offsets"), None);
    n + 9
}
