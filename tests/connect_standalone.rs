//! End-to-end, issue #28 item 2: Connect's standalone mode,
//! `scripts/connect-standalone.sh worker.properties connector files...`
//! (`mirror-maker --connect.standalone`), against real brokers; and Java's
//! own `ConnectStandalone` (scripts/java-connect --standalone) taking over
//! from ours and ours from it on one `offset.storage.file.filename`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::connect::*;
use common::*;
use mirror_maker::engine::mm2::connect_offsets::read_file_positions;
use serde_json::{json, Value};

/// Java Connect needs 10-30 s to start here, and longer on a busy machine.
const LONG: Duration = Duration::from_secs(240);

/// `scripts/<script> <args...>`, Java's with `--standalone` first.
fn start_worker(script: &str, args: &[&Path]) -> ConnectWorker {
    let mut all: Vec<&std::ffi::OsStr> = Vec::new();
    if script == "java-connect" {
        all.push("--standalone".as_ref());
    }
    all.extend(args.iter().map(|p| p.as_os_str()));
    ConnectWorker::start(script, &all)
}

/// Deletes every topic carrying the test's id on both clusters when the
/// test ends, passed or failed.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for bootstrap in [source(), target()] {
            delete_topics_containing(&bootstrap, &self.0);
        }
    }
}

/// A standalone worker file as Connect's guide writes one, and its offsets
/// file beside it (not written yet). Headers as bytes: Java's default
/// SimpleHeaderConverter would rewrite them (the "seq" header "0" arrives
/// as "MA=="), and the records Java copies could not be compared with what
/// was produced.
fn worker_file(dir: &Path, port: u16, extra: &str) -> (PathBuf, PathBuf) {
    let (file, offsets) = (dir.join("connect-standalone.properties"), dir.join("connect.offsets"));
    let bytes = BYTE_ARRAY_CONVERTER;
    let text = format!(
        "bootstrap.servers={}\noffset.storage.file.filename={}\nlisteners=http://127.0.0.1:{port}\noffset.flush.interval.ms=1000\n\
         key.converter={bytes}\nvalue.converter={bytes}\nheader.converter={bytes}\n{extra}",
        target(),
        offsets.display()
    );
    std::fs::write(&file, text).unwrap();
    (file, offsets)
}

/// The guide's keys of a connector of `class` between aliases `a` and `b`.
fn connector(name: &str, class: &str, (a, b): (&str, &str), topic: &str, group: &str) -> BTreeMap<String, String> {
    let guides = json!({
        "name": name, "clusters": format!("{a},{b}"), "tasks.max": "1",
        "checkpoints.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.location": "target",
        "groups": group, "consumer.group.id": format!("{topic}-mirror"),
        "emit.checkpoints.interval.seconds": "1", "emit.heartbeats.interval.seconds": "1",
        "refresh.topics.interval.seconds": "2", "refresh.groups.interval.seconds": "2",
    });
    let v = mirror_connector(class, (a, b), &target(), topic, guides);
    v.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect()
}

fn properties_file(path: &Path, config: &BTreeMap<String, String>) -> PathBuf {
    std::fs::write(path, config.iter().map(|(k, v)| format!("{k}={v}\n")).collect::<String>()).unwrap();
    path.to_path_buf()
}

/// The last replicated offset of each partition of `topic` in the offsets file.
fn file_positions(file: &Path, connector: &str, alias: &str) -> BTreeMap<i32, i64> {
    match read_file_positions(file, connector, alias) {
        Ok(Some(p)) => p.offsets.into_iter().map(|((_, p), o)| (p, o)).collect(),
        Ok(None) => BTreeMap::new(),
        Err(e) => panic!("{e}"),
    }
}

#[test]
#[ignore = "needs clusters"]
fn the_guides_three_connectors_from_files() {
    require_clusters!();
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = ("Sa1", "Sb1");
    let topic = format!("sa-orders-{id}");
    let group = format!("sa-app-{id}");
    create_topic(&source(), &topic, 3, &[]);
    let records = sample_records(&topic, 60);
    produce(&source(), &topic, &records);
    commit_on_source(&group, &topic, &[5, 5, 5]);

    let dir = scratch_dir("standalone");
    let port = rest_port(18700..18800);
    // group.id is a distributed worker's key: accepted with a warning naming it.
    let (worker, offsets) = worker_file(&dir, port, "group.id=left-over\n");
    let src = properties_file(&dir.join("source.properties"), &connector("mm2-source-connector", "MirrorSourceConnector", (a, b), &topic, &group));
    // The checkpoint connector as Connect's create request, the heartbeat
    // connector as a bare config object: the two JSON shapes Java 3.9 reads.
    let mut cp = connector("mm2-checkpoint-connector", "MirrorCheckpointConnector", (a, b), &topic, &group);
    cp.remove("name");
    let cp = json_file(&dir.join("checkpoint.json"), &json!({ "name": "mm2-checkpoint-connector", "config": cp }));
    let hb = json_file(&dir.join("heartbeat.json"), &json!(connector("mm2-heartbeat-connector", "MirrorHeartbeatConnector", (a, b), &topic, &group)));

    let mut w = start_worker("connect-standalone.sh", &[&worker, &src, &cp, &hb]);
    let remote = format!("{a}.{topic}");
    wait_for(&format!("the 60 records in {remote}"), LONG, || read_topic(&target(), &remote).len() >= 60);
    let landed = read_topic(&target(), &remote);
    assert_eq!(assert_same_records(&remote, &records, &landed), 0, "no duplicates");

    let cp_topic = format!("{a}.checkpoints.internal");
    wait_for(&format!("checkpoints of {group} in {cp_topic}"), LONG, || {
        let cps: Vec<_> = read_checkpoints(&cp_topic).into_iter().filter(|c| c.group == group && c.topic == remote).collect();
        let parts: BTreeSet<i32> = cps.iter().filter(|c| c.upstream_offset == 5).map(|c| c.partition).collect();
        parts.len() == 3
    });

    let (code, body) = curl("GET", &format!("http://127.0.0.1:{port}/connectors"), None);
    assert_eq!(code, 200, "{body}");
    let names: BTreeSet<String> = serde_json::from_str::<Vec<String>>(&body).unwrap().into_iter().collect();
    let want: BTreeSet<String> = ["mm2-source-connector", "mm2-checkpoint-connector", "mm2-heartbeat-connector"].iter().map(|s| s.to_string()).collect();
    assert_eq!(names, want);
    for name in &want {
        let (code, body) = curl("GET", &format!("http://127.0.0.1:{port}/connectors/{name}/status"), None);
        assert!(code == 200 && body.contains("\"RUNNING\""), "{name}: {code} {body}");
    }
    // The source positions reach the offsets file while running, in Java's format.
    let ends: BTreeMap<i32, i64> = end_offsets(&source(), &topic).unwrap().into_iter().enumerate().map(|(p, e)| (p as i32, e - 1)).collect();
    wait_for("the source positions in the offsets file", LONG, || file_positions(&offsets, "mm2-source-connector", a) == ends);

    // KIP-875 on a standalone worker: the positions are the file's. GET
    // shows them; stopped, partition 0 moved back by 10 and resumed copies
    // exactly those 10 again, and the file catches up.
    let base = format!("http://127.0.0.1:{port}/connectors/mm2-source-connector");
    let (code, body) = curl("GET", &format!("{base}/offsets"), None);
    assert_eq!(code, 200, "{body}");
    let shown: BTreeMap<i32, i64> = serde_json::from_str::<Value>(&body).unwrap()["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["partition"]["partition"].as_i64().unwrap() as i32, e["offset"]["offset"].as_i64().unwrap()))
        .collect();
    assert_eq!(shown, ends, "GET offsets: {body}");
    assert_eq!(curl("PUT", &format!("{base}/stop"), None).0, 204, "Connect answers a stop with 204");
    let back = ends[&0] - 10;
    let patch = json_file(
        &dir.join("patch.json"),
        &json!({ "offsets": [{ "partition": { "cluster": a, "partition": 0, "topic": topic }, "offset": { "offset": back } }] }),
    );
    let mut altered = (0, String::new());
    wait_for("PATCH accepted once the stopped run has ended", LONG, || {
        altered = curl("PATCH", &format!("{base}/offsets"), Some(&patch));
        altered.0 == 200
    });
    assert!(altered.1.contains("altered successfully"), "{altered:?}");
    assert_eq!(file_positions(&offsets, "mm2-source-connector", a)[&0], back, "the file holds the PATCHed position");
    assert_eq!(curl("PUT", &format!("{base}/resume"), None).0, 202);
    wait_for("partition 0's last 10 records copied again", LONG, || read_topic(&target(), &remote).len() >= 70);
    wait_for("the file caught up again", LONG, || file_positions(&offsets, "mm2-source-connector", a) == ends);
    let again = read_topic(&target(), &remote);
    let twice: BTreeMap<i32, usize> = again.iter().fold(BTreeMap::new(), |mut m, l| {
        *m.entry(l.partition).or_default() += 1;
        m
    });
    let per_partition: BTreeMap<i32, usize> = ends.iter().map(|(p, e)| (*p, (*e + 1) as usize + if *p == 0 { 10 } else { 0 })).collect();
    assert_eq!(twice, per_partition, "exactly partition 0's last 10 records copied again");

    assert_eq!(w.stop(LONG), 0, "SIGTERM exits 0; log:\n{}", w.output());
    let log = w.output();
    assert!(log.contains("group.id is a distributed worker's key and has no effect in standalone mode"), "{log}");
}

#[test]
#[ignore = "needs clusters and Java"]
fn java_and_ours_take_over_from_each_other_on_one_offsets_file() {
    require_clusters!();
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = ("Sa2", "Sb2");
    let topic = format!("sa-moves-{id}");
    create_topic(&source(), &topic, 3, &[]);
    let all = sample_records(&topic, 90);
    let dir = scratch_dir("standalone-java");
    // One worker file and one connector file for both: a drop-in takes Java's.
    let (worker, offsets) = worker_file(&dir, rest_port(18700..18800), "");
    let name = "mm2-source-connector";
    let src = properties_file(&dir.join("source.properties"), &connector(name, "MirrorSourceConnector", (a, b), &topic, "unused-group"));
    let remote = format!("{a}.{topic}");

    // Each phase: a third of the records produced, a worker started, until
    // the target has every record so far, stopped. Records of a partition
    // are copied in order, so duplicates of earlier ones land before the
    // last new ones do and are counted.
    let phases = [("java-connect", "Java"), ("connect-standalone.sh", "ours"), ("java-connect", "Java again")];
    for (i, (script, who)) in phases.iter().enumerate() {
        let so_far = &all[..30 * (i + 1)];
        produce(&source(), &topic, &all[30 * i..30 * (i + 1)]);
        let mut w = start_worker(script, &[&worker, &src]);
        wait_for(&format!("{who}: the first {} records in {remote}", so_far.len()), LONG, || {
            let seqs: BTreeSet<u64> = read_topic(&target(), &remote).iter().filter_map(|l| l.rec.seq()).collect();
            (0..so_far.len() as u64).all(|s| seqs.contains(&s))
        });
        let ends: BTreeMap<i32, i64> = end_offsets(&source(), &topic).unwrap().into_iter().enumerate().map(|(p, e)| (p as i32, e - 1)).collect();
        // Java flushes every offset.flush.interval.ms and at its stop; ours too.
        wait_for(&format!("{who}'s positions in the offsets file"), LONG, || file_positions(&offsets, name, a) == ends);
        let code = w.stop(LONG);
        println!("{who} stopped with {code}");
        if *who == "ours" {
            assert_eq!(code, 0, "log:\n{}", w.output());
            assert!(w.output().contains("partition(s) continue from Java MirrorMaker 2's offsets"), "{}", w.output());
        }
        let landed = read_topic(&target(), &remote);
        let dups = assert_same_records(&remote, so_far, &landed);
        assert_eq!(dups, 0, "after {who}: {dups} duplicate(s) in {remote}");
        assert_eq!(file_positions(&offsets, name, a), ends, "after {who}'s stop");
    }
}
