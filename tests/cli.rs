//! End-to-end: the binary's command line as a user meets it — help,
//! version, usage and configuration errors (exit 1, before anything is
//! consumed), the loop guard against real brokers, and signals.

mod common;

use common::*;

#[test]
fn help_and_version_exit_zero() {
    let (code, out) = run_to_exit(&["--help"]);
    assert_eq!(code, 0, "{out}");
    for opt in [
        "--consumer.config",
        "--producer.config",
        "--whitelist",
        "--include",
        "--blacklist",
        "--num.streams",
        "--num.producers",
        "--queue.size",
        "--queue.byte.size",
        "--offset.commit.interval.ms",
        "--abort.on.send.failure",
        "--message.handler",
    ] {
        assert!(out.contains(opt), "--help lacks {opt}:\n{out}");
    }
    let (code, out) = run_to_exit(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("mirror-maker "), "{out}");
}

#[test]
fn usage_errors_exit_one_with_the_fix() {
    let (code, out) = run_to_exit(&[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("--consumer.config"), "{out}");
    let (code, out) = run_to_exit(&["--consumer.config", "c", "--producer.config", "p"]);
    assert_eq!(code, 1);
    assert!(out.contains("include list must be specified"), "{out}");
    let (code, out) = run_to_exit(&["--consumer.config", "c", "--producer.config", "p", "--whitelist", "x", "--message.handler", "com.acme.Handler"]);
    assert_eq!(code, 1);
    assert!(out.contains("identity, topic-rename, topic-prefix, partition-preserving"), "{out}");
    let (code, out) = run_to_exit(&["--consumer.config", "c", "--producer.config", "p", "--whitelist", "(?!tmp).*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("look-ahead"), "{out}");
    // No topic name is empty: an empty pattern would mirror nothing, silently.
    for empty in ["", "''", " , "] {
        let (code, out) = run_to_exit(&["--consumer.config", "c", "--producer.config", "p", "--whitelist", empty]);
        assert_eq!(code, 1, "--whitelist '{empty}': {out}");
        assert!(out.contains(&format!("--whitelist '{empty}'")) && out.contains("no topic name is empty"), "{out}");
    }
}

#[test]
fn configuration_errors_name_file_line_and_key() {
    let c = props("consumer.properties", &[s("bootstrap.servers=127.0.0.1:1"), s("group.id=g"), s("session.timeout.ms=soon")]);
    let p = producer_props("127.0.0.1:2");
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("{}:3: session.timeout.ms='soon'", c.display())), "{out}");
    let missing = std::env::temp_dir().join(unique("absent")).join("consumer.properties");
    let (code, out) = run_to_exit(&["--consumer.config", &path(&missing), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1);
    assert!(out.contains("cannot read properties file") && out.contains(&path(&missing)), "{out}");
    let c = props("consumer.properties", &[s("bootstrap.servers=127.0.0.1:1")]);
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1);
    assert!(out.contains("group.id is missing"), "{out}");
}

#[test]
#[ignore = "needs clusters"]
fn refuses_to_mirror_a_cluster_onto_itself() {
    require_clusters!(target());
    let group = unique("loop");
    let c = consumer_props(&target(), &group);
    let p = producer_props(&target());
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p), "--whitelist", ".*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("point at the same cluster"), "{out}");
    // Same cluster reached under another name: caught by the cluster id.
    let other_name = target().replace("127.0.0.1", "localhost");
    let p2 = producer_props(&other_name);
    let (code, out) = run_to_exit(&["--consumer.config", &path(&c), "--producer.config", &path(&p2), "--whitelist", ".*"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cluster id"), "{out}");
    // Renaming topics makes it legitimate.
    let mut m = Mirror::start(&[
        s("--consumer.config"),
        path(&c),
        s("--producer.config"),
        path(&p2),
        s("--whitelist"),
        format!("{group}-nothing"),
        s("--message.handler"),
        s("topic-prefix"),
        s("--message.handler.args"),
        s("copy."),
    ]);
    m.wait_for_log("Starting mirror maker");
    assert_eq!(m.stop(), 0, "{}", m.output());
}

#[test]
#[ignore = "needs clusters"]
fn a_second_signal_exits_at_once() {
    require_clusters!(source());
    // A target nobody listens on: the first SIGTERM waits for the drain
    // deadline (10 minutes here), the second must end it at once.
    let id = unique("sig");
    let t = format!("{id}-t");
    create_topic(&source(), &t, 1, &[]);
    produce(&source(), &t, &sample_records(&t, 10));
    let group = unique("sig");
    // Without the provenance header and topic creation, which wait for the
    // target to answer before subscribing: here records must be in flight.
    let mut m = Mirror::start(&mirror_args(
        &source(),
        &group,
        "127.0.0.1:9",
        &t,
        &["--drain.timeout.ms", "600000", "--provenance.header=false", "--create.topics=false", "--sync.partitions=false", "--stats.interval.ms", "200"],
    ));
    // All ten records read and waiting for the target: now a clean shutdown
    // has something to wait for.
    m.wait_for_log("in flight 10,");
    m.signal("TERM");
    m.wait_for_log("Start clean shutdown.");
    m.signal("TERM");
    assert_eq!(m.wait(), 130, "{}", m.output());
    // Nothing was delivered, so nothing may be committed.
    for (p, committed, _) in committed_and_end(&source(), &group, &t) {
        assert_eq!(committed, None, "partition {p} committed although nothing reached the target");
    }
}

#[test]
fn demo_mirrors_between_mock_clusters_and_checks_every_record() {
    let (code, out) = run_to_exit(&["--demo"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("demo: OK: 4000 records mirrored") && out.contains("0 missing"), "{out}");
}

#[test]
fn a_second_copy_with_the_same_pid_file_exits_at_once() {
    // As from cron: the first copy runs (its clusters need not answer for this),
    // the second finds the lock and exits 4 without doing anything.
    let pid_file = std::env::temp_dir().join(format!("{}.pid", unique("mm")));
    let group = unique("pid");
    let mut args = mirror_args("127.0.0.1:9", &group, "127.0.0.1:10", "t", &[]);
    args.extend([s("--pid.file"), path(&pid_file)]);
    let mut first = Mirror::start(&args);
    wait_until("the first copy wrote its pid", || std::fs::read_to_string(&pid_file).is_ok_and(|p| p.trim() == first.pid().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out) = run_to_exit(&refs);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains(&format!("another mirror-maker (pid {}) is already running", first.pid())), "{out}");
    assert!(first.alive(), "the first copy must keep running");
    // A kill -9 leaves the file behind, but not the lock.
    first.signal("KILL");
    first.wait();
    let mut again = Mirror::start(&args);
    wait_until("a new copy takes over after a kill -9", || std::fs::read_to_string(&pid_file).is_ok_and(|p| p.trim() == again.pid().to_string()));
    assert_eq!(again.stop(), 0, "{}", again.output());
}

#[test]
fn two_copies_started_together_leave_exactly_one_running() {
    // Both started in the same instant, as two cron lines would; with
    // --log.file the loser says why in its log and nothing on stderr, so cron
    // mails nothing.
    let dir = std::env::temp_dir().join(unique("pidrace"));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("mm.pid");
    let group = unique("pid");
    let mut args = mirror_args("127.0.0.1:9", &group, "127.0.0.1:10", "t", &[]);
    args.extend([s("--pid.file"), path(&pid_file)]);
    let with_log = |name: &str| {
        let mut a = args.clone();
        a.extend([s("--log.file"), path(&dir.join(name))]);
        a
    };
    let mut copies = [Mirror::start(&with_log("a.log")), Mirror::start(&with_log("b.log"))];
    wait_until("one copy exits", || copies.iter_mut().any(|m| !m.alive()));
    let loser = copies.iter_mut().position(|m| !m.alive()).unwrap();
    let winner = 1 - loser;
    assert_eq!(copies[loser].wait(), 4);
    let loser_log = std::fs::read_to_string(dir.join(["a.log", "b.log"][loser])).unwrap();
    assert!(loser_log.contains(&format!("another mirror-maker (pid {}) is already running", copies[winner].pid())), "{loser_log}");
    assert_eq!(copies[loser].output(), "", "the losing copy wrote to stderr");
    assert!(copies[winner].alive(), "the winning copy must keep running");
    assert_eq!(std::fs::read_to_string(&pid_file).unwrap().trim(), copies[winner].pid().to_string());
    assert_eq!(copies[winner].stop(), 0);
}
