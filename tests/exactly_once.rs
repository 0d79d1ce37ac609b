//! Exactly-once (issue #29) against real brokers, in MirrorMaker 2 mode
//! (`exactly.once.source.support = enabled`): a zombie (a process frozen
//! mid-transaction past its session while another takes its partitions,
//! then resumed), and rebalance storms with eager and cooperative
//! assignors. Each run reads the target `read_committed`, as the target's
//! consumers do, and requires every record exactly once. The kill -9
//! scenario is in the fault suite (tests/chaos.rs, s1e).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use common::*;

/// Scenarios start and stop several mirrors under load: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Produces `recs` to the source in chunks of `chunk` every `every`, on a
/// thread of its own, so the mirrors copy under load.
struct Load {
    handle: Option<thread::JoinHandle<()>>,
    done: Arc<AtomicBool>,
}

impl Load {
    fn start(topic: &str, recs: Vec<Rec>, chunk: usize, every: Duration) -> Load {
        let done = Arc::new(AtomicBool::new(false));
        let (topic, flag) = (topic.to_string(), done.clone());
        let handle = thread::spawn(move || {
            for c in recs.chunks(chunk) {
                produce(&source(), &topic, c);
                thread::sleep(every);
            }
            flag.store(true, Ordering::SeqCst);
        });
        Load { handle: Some(handle), done }
    }

    fn finished(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    fn join(&mut self) {
        if let Some(h) = self.handle.take() {
            h.join().expect("the load thread");
        }
    }
}

/// An exactly-once MM2 file for one flow of `topic`, with the lines
/// `extra` makes of the source and target aliases; the file, the flow's
/// source group and the remote topic.
fn eos_file(topic: &str, extra: impl Fn(&str, &str) -> Vec<String>) -> (std::path::PathBuf, String, String) {
    let (a, b) = (format!("S{}", short_id()), format!("T{}", short_id()));
    let mut lines = vec![
        format!("{b}.exactly.once.source.support = enabled"),
        format!("{a}.consumer.isolation.level = read_committed"),
        // The ownership group's session: a frozen member is out after 6 s.
        format!("{a}.consumer.session.timeout.ms = 6000"),
    ];
    lines.extend(extra(&a, &b));
    let file = props("mm2.properties", &mm2_flow_lines(&a, &b, topic, &lines));
    (file, format!("mm2.{a}->{b}"), format!("{a}.{topic}"))
}

fn count(m: &Mirror, needle: &str) -> usize {
    m.output().matches(needle).count()
}

fn verify(label: &str, remote: &str, recs: &[Rec]) {
    let landed = read_topic_committed(&target(), remote);
    let dups = assert_same_records(remote, recs, &landed);
    println!("EOS {label}: produced {}, read_committed {} distinct, missing 0, duplicates {dups}", recs.len(), recs.len());
    assert_eq!(dups, 0, "{label}: {dups} records on the target twice");
}

#[test]
#[ignore = "needs clusters"]
fn a_zombie_resumed_after_its_partitions_moved_commits_nothing_twice() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("eos-zombie");
    create_topic(&source(), &t, 4, &[]);
    let recs = sample_records(&t, 40_000);
    // Transactions of 8 s: frozen under load, the zombie is almost surely
    // inside one, with records sent and nothing committed.
    let (file, group, remote) =
        eos_file(&t, |a, b| vec![format!("{a}->{b}.transaction.boundary = interval"), format!("{a}->{b}.transaction.boundary.interval.ms = 8000")]);
    let args = [s("--mm2.config"), path(&file)];
    let (first, rest) = recs.split_at(30_000);
    let mut load = Load::start(&t, first.to_vec(), 500, Duration::from_millis(200));
    let mut zombie = Mirror::start(&args);
    zombie.wait_for_log("ownership assigned");
    let mut other = Mirror::start(&args);
    other.wait_for_log("ownership assigned");
    wait_until("both copy (the source group moves)", || progress(&source(), &group, &t).0 > 0);
    let before = count(&other, "ownership assigned");
    // Into the zombie's open transaction, past its session.
    thread::sleep(Duration::from_millis(3000));
    zombie.signal("STOP");
    wait_until("the other member takes the frozen one's partitions", || count(&other, "ownership assigned") > before);
    load.join();
    let mut load = Load::start(&t, rest.to_vec(), 500, Duration::from_millis(100));
    load.join();
    wait_until("the other member copies every record", || all_committed(&source(), &group, &t));
    let refused = count(&zombie, "not committed");
    zombie.signal("CONT");
    wait_until("the resumed zombie tries to commit and is refused", || count(&zombie, "not committed") > refused);
    assert!(zombie.alive(), "the resumed member goes on as a member: {}", zombie.output());
    assert!(load.finished());
    assert_eq!(other.stop(), 0, "{}", other.output());
    assert_eq!(zombie.stop(), 0, "{}", zombie.output());
    let refusal = zombie.output().lines().rfind(|l| l.contains("not committed")).unwrap_or_default().to_string();
    println!("EOS zombie: the resumed member was refused: {refusal}");
    verify("zombie (SIGSTOP past the session, SIGCONT after the take-over)", &remote, &recs);
}

/// Members join and leave every few seconds under load; `strategy` is the
/// ownership group's assignor (the source consumer's, as a user sets it).
fn storm(label: &str, strategy: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = unique("eos-storm");
    create_topic(&source(), &t, 6, &[]);
    let recs = sample_records(&t, 60_000);
    let (file, group, remote) = eos_file(&t, |a, _| vec![format!("{a}.consumer.partition.assignment.strategy = {strategy}")]);
    let args = [s("--mm2.config"), path(&file)];
    let mut load = Load::start(&t, recs.clone(), 500, Duration::from_millis(150));
    let mut members = vec![Mirror::start(&args)];
    members[0].wait_for_log("ownership assigned");
    let mut changes = 0;
    for round in 0..8 {
        thread::sleep(Duration::from_millis(jitter(2000, 4000)));
        if members.len() < 3 && (round % 3 != 2 || members.len() == 1) {
            members.push(Mirror::start(&args));
        } else {
            let mut leaving = members.remove(round % members.len());
            assert_eq!(leaving.stop(), 0, "a member leaving with SIGTERM: {}", leaving.output());
        }
        changes += 1;
    }
    load.join();
    wait_until("the members copy every record", || all_committed(&source(), &group, &t));
    let rebalanced: usize = members.iter().map(|m| count(m, "ownership")).sum();
    for m in &mut members {
        assert_eq!(m.stop(), 0, "{}", m.output());
    }
    println!("EOS storm ({label}): {changes} joins and leaves under load; {rebalanced} ownership changes logged by the last members");
    verify(&format!("rebalance storm, {label}"), &remote, &recs);
}

#[test]
#[ignore = "needs clusters"]
fn a_rebalance_storm_with_an_eager_assignor_copies_each_record_once() {
    require_clusters!(source(), target());
    storm("eager, RoundRobinAssignor", "org.apache.kafka.clients.consumer.RoundRobinAssignor");
}

#[test]
#[ignore = "needs clusters"]
fn a_rebalance_storm_with_the_cooperative_assignor_copies_each_record_once() {
    require_clusters!(source(), target());
    storm("cooperative, CooperativeStickyAssignor", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
}

/// MM1 mode: `--exactly.once true` on the usual command line, killed -9
/// three times under load and restarted: every record once, read_committed,
/// and the source group committed (for lag tools) to the end.
#[test]
#[ignore = "needs clusters"]
fn mm1_mode_with_exactly_once_survives_kill_minus_nine() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("eos-mm1");
    create_topic(&source(), &t, 3, &[]);
    let recs = sample_records(&t, 60_000);
    let group = unique("eos-mm1");
    let args = mirror_args(&source(), &group, &target(), &t, &["--exactly.once", "true", "--transaction.interval.ms", "200"]);
    let mut load = Load::start(&t, recs.clone(), 1000, Duration::from_millis(100));
    let mut last = 0;
    for cycle in 0..3 {
        let mut m = Mirror::start(&args);
        wait_until("progress since the last kill", || {
            let (c, e) = progress(&source(), &group, &t);
            c > last || (load.finished() && c == e)
        });
        thread::sleep(Duration::from_millis(jitter(100, 700)));
        m.signal("KILL");
        m.wait();
        last = progress(&source(), &group, &t).0;
        println!("EOS mm1: cycle {cycle}: killed -9, source group at {last}");
    }
    load.join();
    let mut m = Mirror::start(&args);
    m.wait_for_log("exactly-once task started");
    wait_until("the mirror copies every record", || all_committed(&source(), &group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    verify("MM1 --exactly.once, kill -9 x3 under load", &t, &recs);
}

/// A record the target refuses for good (larger than the target topic's
/// `max.message.bytes`) cannot be skipped inside a transaction: after a
/// few transactions aborted on it the mirror stops with status 255 naming
/// the record's partition and the fix, as `--abort.on.send.failure true`
/// does, instead of reading it again forever; what was committed before
/// it stays, once, and nothing after it is committed.
#[test]
#[ignore = "needs clusters"]
fn a_record_the_target_refuses_for_good_stops_the_mirror() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_clusters!(source(), target());
    let t = unique("eos-refused");
    create_topic(&source(), &t, 1, &[]);
    // Room for a batch of the small records, not for the large one.
    create_topic(&target(), &t, 1, &[("max.message.bytes", "100000")]);
    let recs = sample_records(&t, 300);
    let (before, after) = recs.split_at(200);
    produce(&source(), &t, before);
    let group = unique("eos-refused");
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &t, &["--exactly.once", "true"]));
    wait_until("the records before the large one visible read_committed", || read_topic_committed(&target(), &t).len() == before.len());
    let big = Rec { key: Some(b"big".to_vec()), value: Some(vec![b'x'; 300_000]), headers: Vec::new(), timestamp: None };
    produce(&source(), &t, &[big]);
    produce(&source(), &t, after);
    wait_until("the mirror stops on the refused record", || !m.alive());
    let code = m.wait();
    let out = m.output();
    assert_eq!(code, 255, "exit status after a record refused for good (a runtime failure, as --abort.on.send.failure's):\n{out}");
    let said = format!("the target refused a record for {t}-0 in 3 transactions in a row");
    assert!(out.contains(&said) && out.contains("max.message.bytes"), "the mirror names the partition and the limit:\n{out}");
    let landed = read_topic_committed(&target(), &t);
    let dups = assert_same_records(&t, before, &landed);
    assert_eq!((landed.len(), dups), (before.len(), 0), "only the records before the refused one, once each");
    println!("EOS refused record: exit 255 after 3 aborted transactions; {} records before it read_committed once, none after", landed.len());
}
