//! SIGTERM ends within `--drain.timeout.ms` plus a few seconds whichever
//! cluster is away. Offset commits go to the source's group coordinator,
//! and leaving the group needs it too: with the source down neither is
//! answered, and an unbounded wait there would keep the process up until
//! systemd (or an operator) kills it. The target-down case is
//! tests/chaos.rs s4. The test stops the source broker: cargo runs test
//! binaries one at a time, and this one has a single test.

mod common;

use std::time::{Duration, Instant};

use common::*;

/// Drain timeout of the runs below.
const DRAIN: Duration = Duration::from_secs(5);
/// What "a few seconds" after the drain timeout may come to: the mirror
/// stops waiting for the source `shutdown::GRACE` (5 s) after it; the rest
/// is slack for two busy cores.
const MARGIN: Duration = Duration::from_secs(15);

#[test]
#[ignore = "needs clusters"]
fn sigterm_with_the_source_down_ends_a_few_seconds_after_the_drain_timeout() {
    require_clusters!(source(), target());
    let t = unique("bounds-source-down");
    create_topic(&source(), &t, 4, &[]);
    let recs = sample_records(&t, 200_000);
    produce(&source(), &t, &recs);
    let group = unique("sdown-term");
    // MM1's commit interval (60 s), so that whatever was mirrored before
    // the source went away is still to be committed at SIGTERM: the final
    // commit is what must not hold the exit. (With frequent commits the
    // last one can land before the broker is gone, and there is nothing
    // left to commit.)
    let args = mirror_args(&source(), &group, &target(), &t, &["--drain.timeout.ms", &DRAIN.as_millis().to_string()]);

    let mut m = Mirror::start(&args);
    wait_until("records on the target", || mirrored(&target(), &t) > 0);
    broker("stop-broker", "source");
    assert!(m.alive(), "{}", m.output());
    let t0 = Instant::now();
    m.signal("TERM");
    // Waited for well past the bound, so a slow exit is measured, not cut off.
    while m.alive() && t0.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let exit_time = t0.elapsed();
    let code = m.wait();
    let log = m.output();
    println!("SHUTDOWN source down: exit {code} {:.1}s after SIGTERM (drain timeout {DRAIN:?})", exit_time.as_secs_f64());
    broker("start-broker", "source");
    assert!(exit_time < DRAIN + MARGIN, "SIGTERM with the source down took {exit_time:?} (drain timeout {DRAIN:?}):\n{log}");
    // Whatever was consumed since the last commit could not be committed:
    // a restart reads it again, which is the drain timeout's status.
    assert_eq!(code, 3, "the final commit cannot reach the source, so the exit status is 3:\n{log}");

    // The source back, a rerun mirrors the rest: nothing was committed
    // that the target does not have.
    let mut m = Mirror::start(&args);
    wait_until("catch-up after the source returned", || all_committed(&source(), &group, &t));
    assert_eq!(m.stop(), 0, "{}", m.output());
    let landed = read_topic(&target(), &t);
    let dups = assert_same_records(&t, &recs, &landed);
    println!(
        "SHUTDOWN source down: {} records, 0 missing, {dups} duplicates after the rerun; exit {code} in {:.1}s with a {}s drain timeout",
        recs.len(),
        exit_time.as_secs_f64(),
        DRAIN.as_secs()
    );
}

/// Records on `bootstrap`'s `topic`, summed over its partitions; 0 while it does not exist.
fn mirrored(bootstrap: &str, topic: &str) -> i64 {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let Some(parts) = partitions_of(bootstrap, topic) else { return 0 };
    let c: BaseConsumer = rdkafka::ClientConfig::new().set("bootstrap.servers", bootstrap).create().unwrap();
    (0..parts as i32).map(|p| c.fetch_watermarks(topic, p, Duration::from_secs(10)).map_or(0, |(low, high)| high - low)).sum()
}
