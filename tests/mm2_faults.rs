//! The fault suite's scenarios that apply to MirrorMaker 2 mode, run with
//! an MM2 file: kill -9 cycles, the target down and back, SIGTERM under
//! load. Each fails on any missing record and prints its figures. One
//! stops and starts the target broker, so they run one at a time (a
//! process-wide lock); cargo runs test binaries one after another, so no
//! other test sees the broker go.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;

static SERIAL: Mutex<()> = Mutex::new(());

/// One flow from the source cluster to the target, under aliases of its
/// own, so its group (`mm2.S->T`) and remote names belong to this test.
struct Flow {
    file: PathBuf,
    source_alias: String,
    group: String,
}

/// The remote topics (this test's and the heartbeats copies MM2 makes of
/// every heartbeats topic on the source) go with the test: left behind,
/// each later MM2 run would copy them again under its own prefix.
impl Drop for Flow {
    fn drop(&mut self) {
        if clusters_given() {
            delete_topics_containing(&target(), &self.source_alias);
        }
    }
}

fn flow(topic: &str) -> Flow {
    let id = short_id();
    let (s, t) = (format!("S{id}"), format!("T{id}"));
    let lines = vec![
        format!("clusters = {s}, {t}"),
        format!("{s}.bootstrap.servers = {}", source()),
        format!("{t}.bootstrap.servers = {}", target()),
        format!("{s}->{t}.enabled = true"),
        format!("{s}->{t}.topics = {topic}"),
        // Heartbeats into the shared source cluster would be seen by other tests.
        format!("{t}->{s}.emit.heartbeats.enabled = false"),
        "replication.factor = 1".into(),
        "heartbeats.topic.replication.factor = 1".into(),
        // Progress committed every second, so a restart repeats little.
        format!("{t}.offset.flush.interval.ms = 1000"),
    ];
    let file = props(&unique("mm2-faults"), &lines);
    Flow { file, group: format!("mm2.{s}->{t}"), source_alias: s }
}

fn start(f: &Flow) -> Mirror {
    Mirror::start(&[s("--mm2.config"), path(&f.file), s("--stats.interval.ms"), s("2000")])
}

/// Reads the remote topic and reports; panics on any missing record or any
/// record out of its source partition.
fn verify(scenario: &str, f: &Flow, topic: &str, recs: &[Rec], extra: &str) {
    let remote = format!("{}.{topic}", f.source_alias);
    let landed = read_topic(&target(), &remote);
    let dups = assert_same_records(&remote, recs, &landed);
    println!("MM2 FAULTS {scenario}: produced {}, mirrored {} distinct to {remote}, missing 0, duplicates {dups}{extra}", recs.len(), recs.len());
}

#[test]
#[ignore = "needs clusters"]
fn mm2_kill_minus_nine_cycles_lose_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("mm2-kill");
    create_topic(&source(), &t, 4, &[]);
    let recs = sample_records(&t, 200_000);
    produce(&source(), &t, &recs);
    let f = flow(&t);
    let mut kills = 0;
    while !all_committed(&source(), &f.group, &t) && kills < 5 {
        let mut m = start(&f);
        let before = progress(&source(), &f.group, &t).0;
        wait_until("progress before the kill", || progress(&source(), &f.group, &t).0 > before || all_committed(&source(), &f.group, &t));
        m.signal("KILL");
        m.wait();
        kills += 1;
    }
    let mut m = start(&f);
    wait_until("everything committed after the kills", || all_committed(&source(), &f.group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    verify("kill -9", &f, &t, &recs, &format!(", {kills} kill -9 cycles"));
}

#[test]
#[ignore = "needs clusters"]
fn mm2_target_down_then_back_loses_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("mm2-tdown");
    create_topic(&source(), &t, 4, &[]);
    let mut recs = sample_records(&t, 50_000);
    produce(&source(), &t, &recs);
    let f = flow(&t);
    let mut m = start(&f);
    wait_until("some progress", || progress(&source(), &f.group, &t).0 > 0);
    broker("stop-broker", "target");
    let more = sample_records(&t, 100_000).split_off(50_000);
    produce(&source(), &t, &more);
    recs.extend(more);
    let down_at = Instant::now();
    while down_at.elapsed() < Duration::from_secs(20) {
        assert!(m.alive(), "the mirror exited while the target was down:\n{}", m.output());
        std::thread::sleep(Duration::from_millis(500));
    }
    broker("start-broker", "target");
    let back = Instant::now();
    wait_until("catch-up after the target returned", || all_committed(&source(), &f.group, &t));
    let catch_up = back.elapsed();
    assert_eq!(m.stop(), 0, "{}", m.output());
    verify("target down 20 s", &f, &t, &recs, &format!(", caught up {:.1}s after the target returned", catch_up.as_secs_f64()));
}

#[test]
#[ignore = "needs clusters"]
fn mm2_sigterm_under_load_then_restart_loses_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("mm2-term");
    create_topic(&source(), &t, 4, &[]);
    let recs = sample_records(&t, 600_000);
    produce(&source(), &t, &recs);
    let f = flow(&t);
    let mut m = start(&f);
    wait_until("some progress", || progress(&source(), &f.group, &t).0 > 0);
    let code = m.stop();
    assert_eq!(code, 0, "a clean drain under load exits 0:\n{}", m.output());
    let committed_at_stop = progress(&source(), &f.group, &t).0;
    let mut m = start(&f);
    wait_until("everything committed after the restart", || all_committed(&source(), &f.group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    verify("SIGTERM under load", &f, &t, &recs, &format!(", {committed_at_stop} committed at the stop"));
}
