//! `GET /health` on the metrics port, driving the real binary through each
//! state (issue #31 item 4): 503 `starting` while the mirror cannot finish
//! its start-up, 200 `healthy` once it runs against the test clusters,
//! 500 `unhealthy` once a flow has failed (a record the target refuses
//! for good) and while stopping, with
//! Kafka Connect's JSON shape and first sentences (KIP-1017).
//!
//! The Connect worker's REST API answers `GET /health` the same way, for
//! the worker itself (its connectors' failures show in their status, as
//! in Connect).
//!
//! Metrics ports 19390-19392, the worker's REST port 19393; the unreachable target is 127.0.0.1:19399,
//! a port of the same reserved run that nothing listens on.

mod common;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A target nothing answers at: the mirror's producers never reach it.
const CLOSED: &str = "127.0.0.1:19399";

/// One answer of `GET /health`: the status code and the JSON body.
#[derive(Debug, Clone)]
struct Answer {
    code: u16,
    content_type: String,
    body: Value,
}

impl Answer {
    fn status(&self) -> &str {
        self.body["status"].as_str().unwrap_or("")
    }

    fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }
}

/// `GET /health`; None when nothing listens (not yet, or no more).
fn health(port: u16) -> Option<Answer> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The worker's REST server keeps connections open unless told not to.
    s.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
    let content_type = head.lines().find_map(|l| l.strip_prefix("Content-Type: ")).unwrap_or("").to_string();
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("GET /health answered {code} with a body that is not JSON ({e}): {body}"));
    Some(Answer { code, content_type, body })
}

/// Asks until `done` holds for an answer, within [`DEADLINE`]; every answer
/// on the way, in order (the last one is the one `done` took).
fn ask_until(port: u16, what: &str, m: &mut Mirror, mut done: impl FnMut(&Answer) -> bool) -> Vec<Answer> {
    let until = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    loop {
        if let Some(a) = health(port) {
            let stop = done(&a);
            seen.push(a);
            if stop {
                return seen;
            }
        }
        assert!(m.alive(), "the mirror exited while waiting for {what}; answers: {seen:?}\nlog:\n{}", m.output());
        assert!(Instant::now() < until, "timed out after {DEADLINE:?} waiting for {what}; answers: {seen:?}\nlog:\n{}", m.output());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asks until the endpoint is gone with the process; returns the exit
/// status and every answer given on the way.
fn answers_until_exit(port: u16, m: &mut Mirror) -> (i32, Vec<Answer>) {
    let until = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    while m.alive() {
        seen.extend(health(port));
        assert!(Instant::now() < until, "the mirror did not exit within {DEADLINE:?}; log:\n{}", m.output());
        std::thread::sleep(Duration::from_millis(50));
    }
    (m.wait(), seen)
}

fn assert_shape(a: &Answer) {
    assert_eq!(a.content_type, "application/json", "{a:?}");
    let keys: Vec<&String> = a.body.as_object().expect("a JSON object").keys().collect();
    assert_eq!(keys, ["status", "message"], "Connect's WorkerStatus fields, in its order: {a:?}");
}

/// The answers after a SIGTERM: the code of before (`was`) until the
/// signal thread has taken the signal, then 500 to the end, never back.
fn assert_stopping(after_signal: &[Answer], was: u16) {
    let stop = after_signal.iter().position(|a| a.code == 500).unwrap_or(after_signal.len());
    assert!(after_signal[..stop].iter().all(|a| a.code == was), "{was} until the stop began: {after_signal:?}");
    for a in &after_signal[stop..] {
        assert_shape(a);
        assert_eq!((a.code, a.status()), (500, "unhealthy"), "once the stop began, never healthy or starting again: {after_signal:?}");
    }
}

#[test]
#[ignore = "needs clusters"]
fn starting_is_503_while_the_target_does_not_answer_and_stopping_is_500() {
    require_clusters!(source());
    let id = unique("health-starting");
    create_topic(&source(), &id, 1, &[]);
    let port = 19390;
    // The provenance header needs the target's cluster id before any
    // record is read: with the target unreachable the start-up waits for
    // it until stopped, and never gets to run.
    let args = mirror_args(&source(), &unique("group"), CLOSED, &id, &["--provenance.header", "true", "--metrics.port", "19390"]);
    let mut m = Mirror::start(&args);
    m.wait_for_log(&format!("the provenance header needs the cluster id of the target cluster ({CLOSED}), which does not answer yet; waiting"));
    let seen = ask_until(port, "an answer", &mut m, |_| true);
    let a = seen.last().unwrap();
    assert_shape(a);
    assert_eq!((a.code, a.status()), (503, "starting"), "{a:?}");
    assert!(
        a.message()
            .starts_with("Worker is still starting up. The mirror is currently waiting for the cluster ids the provenance header needs (source cluster 0: "),
        "Connect's first sentence, then the stage: {a:?}"
    );
    assert!(a.message().contains(&format!("; the target: {CLOSED}), which began at 20")), "{a:?}");
    // Still starting after the next wait for the target: it never gets further.
    let logged = m.output().matches("which does not answer yet; waiting").count();
    wait_until("the mirror to log its next wait for the target", || m.output().matches("which does not answer yet; waiting").count() > logged);
    assert_eq!(health(port).map(|a| (a.code, a.status().to_string())), Some((503, "starting".into())));

    m.signal("TERM");
    let (status, after_stop) = answers_until_exit(port, &mut m);
    assert_eq!(status, 0, "a stop while waiting is a clean exit; log:\n{}", m.output());
    assert_stopping(&after_stop, 503);
    for a in after_stop.iter().filter(|a| a.code == 500) {
        assert!(a.message().ends_with("The mirror is shutting down: it drains what it read and commits, then exits."), "{a:?}");
    }
}

#[test]
#[ignore = "needs clusters"]
fn healthy_is_200_with_connects_body_once_the_mirror_runs() {
    require_clusters!(source(), target());
    let id = unique("health-running");
    create_topic(&source(), &id, 2, &[]);
    let group = unique("group");
    let port = 19391;
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &id, &["--metrics.port", "19391", "--offset.commit.interval.ms", "500"]));
    let seen = ask_until(port, "GET /health to answer 200", &mut m, |a| a.code == 200);
    for a in &seen {
        assert_shape(a);
    }
    // Only starting before it: never unhealthy on the way up.
    assert!(seen[..seen.len() - 1].iter().all(|a| (a.code, a.status()) == (503, "starting")), "{seen:?}");
    assert_eq!(
        seen.last().unwrap().body,
        serde_json::json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}),
        "Connect's healthy body, whole"
    );
    // Healthy means mirroring: records go through and are committed.
    let recs = sample_records(&id, 100);
    produce(&source(), &id, &recs);
    wait_until("the records mirrored and committed", || all_committed(&source(), &group, &id));
    assert_eq!(health(port).map(|a| a.code), Some(200));

    m.signal("TERM");
    let (status, after_stop) = answers_until_exit(port, &mut m);
    assert_eq!(status, 0, "log:\n{}", m.output());
    assert_stopping(&after_stop, 200);
}

#[test]
#[ignore = "needs clusters"]
fn unhealthy_is_500_with_the_reason_once_a_flow_has_failed() {
    require_clusters!(source(), target());
    let id = unique("health-failed");
    create_topic(&source(), &id, 1, &[]);
    // The target's copy takes no record over 1000 bytes.
    create_topic(&target(), &id, 1, &[("max.message.bytes", "1000")]);
    // First a record of 5000 bytes the target refuses for good: with
    // --abort.on.send.failure true (MM1's default) it stops the mirror with
    // a failure. Bytes that do not compress, so it stays too large on the
    // wire. Refused in its batch, it is sent again alone once the worker
    // has sent the rest of its batch (at most 500 records, 10 s at the
    // throttle's 50 a second); the batches behind it (1200 records read
    // at once) are drained at the same pace until the drain timeout, 10 s:
    // the endpoint stays up, and unhealthy, that long after the failure.
    let mut noise = 0x2545_f491_4f6c_dd1d_u64;
    let big: Vec<u8> = (0..5000)
        .map(|_| {
            noise ^= noise << 13;
            noise ^= noise >> 7;
            noise ^= noise << 17;
            noise as u8
        })
        .collect();
    let mut recs = vec![Rec { key: None, value: Some(big), headers: vec![], timestamp: None }];
    recs.extend(sample_records(&id, 1200));
    produce(&source(), &id, &recs);
    let port = 19392;
    let extra = ["--metrics.port", "19392", "--throttle.records.per.sec", "50", "--drain.timeout.ms", "10000"];
    let mut m = Mirror::start(&mirror_args(&source(), &unique("group"), &target(), &id, &extra));
    let seen = ask_until(port, "GET /health to answer 500", &mut m, |a| a.code == 500);
    for a in &seen {
        assert_shape(a);
    }
    // Forward only: starting, running, failed.
    let rank = |a: &Answer| match (a.code, a.status()) {
        (503, "starting") => 0,
        (200, "healthy") => 1,
        (500, "unhealthy") => 2,
        other => panic!("not one of Connect's answers: {other:?}"),
    };
    assert!(seen.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])), "{seen:?}");
    let failed = seen.last().unwrap();
    assert!(
        failed.message().starts_with(&format!(
            "Worker was unable to handle this request and may be unable to handle other requests. The mirror failed (runtime failure) and is stopping: \
             Error when sending message to topic {id} (5000 bytes) from source {id}-0 at offset 0: "
        )),
        "Connect's first sentence, then the failure's reason: {failed:?}"
    );

    let (status, after) = answers_until_exit(port, &mut m);
    assert_eq!(status, 255, "a runtime failure's exit status; log:\n{}", m.output());
    assert!(!after.is_empty(), "the throttled drain keeps the endpoint up for seconds after the failure; log:\n{}", m.output());
    assert_stopping(&after, 500);
    for a in &after {
        assert_eq!(a.message(), failed.message(), "the first failure's reason, to the end");
    }
}

#[test]
#[ignore = "needs clusters"]
fn a_connect_worker_answers_get_health_as_connect() {
    require_clusters!(target());
    let dir = common::connect::scratch_dir("health-worker");
    let file = dir.join("connect-standalone.properties");
    let bytes = common::connect::BYTE_ARRAY_CONVERTER;
    std::fs::write(
        &file,
        format!(
            "bootstrap.servers={}\noffset.storage.file.filename={}\nlisteners=http://127.0.0.1:19393\nkey.converter={bytes}\nvalue.converter={bytes}\n",
            target(),
            dir.join("connect.offsets").display()
        ),
    )
    .unwrap();
    let mut w = Mirror::start(&[s("--connect.standalone"), path(&file)]);
    let seen = ask_until(19393, "the worker's GET /health to answer 200", &mut w, |a| a.code == 200);
    let a = seen.last().unwrap();
    assert_shape(a);
    assert_eq!(a.body, serde_json::json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}));
    w.signal("TERM");
    let (status, after_stop) = answers_until_exit(19393, &mut w);
    assert_eq!(status, 0, "log:\n{}", w.output());
    assert_stopping(&after_stop, 200);
}
