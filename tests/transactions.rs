//! `kafka::transactions`, the glue exactly-once (issue #29) is built on,
//! against a real broker (the test clusters' target): the two fences that
//! keep a zombie from committing, and that a refused transaction's records
//! never reach a `read_committed` reader.
//!
//! The group here plays the part the design gives it (see the closing note
//! of the session that wrote this): an ownership group on the target whose
//! members never fetch (their partitions paused) and whose committed
//! offsets are the positions, sent in each transaction.

mod common;

use std::time::{Duration, Instant};

use common::*;
use mirror_maker::kafka::transactions::{Transactional, TxnError};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

const TIMEOUT: Duration = Duration::from_secs(30);

fn client() -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", target());
    c
}

/// A member of `group` subscribed to `topic`, with partitions paused: it
/// owns, it never fetches. Left after `max_poll_ms` without a poll.
fn owner(group: &str, topic: &str, max_poll_ms: u32) -> BaseConsumer {
    let c: BaseConsumer = client()
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("session.timeout.ms", "6000")
        .set("max.poll.interval.ms", max_poll_ms.to_string())
        .create()
        .unwrap();
    c.subscribe(&[topic]).unwrap();
    c
}

/// Polls `c` (pausing what it is given) until it owns `n` partitions.
fn owns(c: &BaseConsumer, n: usize) {
    wait_until(&format!("a member owning {n} partitions"), || {
        let _ = c.poll(Duration::from_millis(100));
        let a = c.assignment().unwrap();
        let _ = c.pause(&a);
        a.count() == n
    });
}

fn positions(topic: &str, at: i64) -> TopicPartitionList {
    let mut l = TopicPartitionList::new();
    for p in 0..2 {
        l.add_partition_offset(topic, p, Offset::Offset(at)).unwrap();
    }
    l
}

fn send(t: &Transactional, topic: &str, values: &[String]) {
    for v in values {
        t.producer().send(BaseRecord::<(), str>::to(topic).payload(v)).map_err(|(e, _)| e).unwrap();
    }
}

/// Every value of partition 0 of `topic` a read_committed reader sees,
/// read to the end the partition has now (every transaction written to it
/// is resolved by then, so the end is reachable).
fn committed_values(topic: &str) -> Vec<String> {
    let c: BaseConsumer = client().set("group.id", unique("reader")).set("isolation.level", "read_committed").create().unwrap();
    let (_, end) = watermarks(&c, topic, 0);
    let mut l = TopicPartitionList::new();
    l.add_partition_offset(topic, 0, Offset::Beginning).unwrap();
    c.assign(&l).unwrap();
    let mut seen = Vec::new();
    // The position also passes transaction markers and aborted records,
    // which are never handed over.
    wait_until("the data topic read to its end", || {
        while let Some(m) = c.poll(Duration::from_millis(200)) {
            let m = m.unwrap();
            seen.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).to_string());
        }
        let at = c.position().unwrap().elements().first().map(|e| e.offset());
        end == 0 || matches!(at, Some(Offset::Offset(o)) if o >= end)
    });
    seen
}

/// The group's committed offsets of `topic`'s two partitions.
fn group_positions(c: &BaseConsumer, topic: &str) -> Vec<Offset> {
    let mut l = TopicPartitionList::new();
    l.add_partition(topic, 0);
    l.add_partition(topic, 1);
    c.committed_offsets(l, TIMEOUT).unwrap().elements().iter().map(|e| e.offset()).collect()
}

fn values(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

struct Topics {
    own: String,
    data: String,
    group: String,
}

fn topics() -> Topics {
    let t = Topics { own: unique("own"), data: unique("txn-data"), group: unique("owners") };
    create_topic(&target(), &t.own, 2, &[]);
    create_topic(&target(), &t.data, 1, &[]);
    t
}

#[test]
#[ignore = "needs clusters"]
fn records_and_positions_commit_together_and_an_abort_shows_nothing() {
    require_clusters!(target());
    let t = topics();
    let a = owner(&t.group, &t.own, 300_000);
    owns(&a, 2);
    let p = Transactional::new(&client(), &unique("txn"), DefaultProducerContext, TIMEOUT).unwrap();
    p.begin().unwrap();
    send(&p, &t.data, &values("kept", 5));
    p.commit(&positions(&t.own, 5), &a.group_metadata().unwrap(), TIMEOUT).unwrap();
    p.begin().unwrap();
    send(&p, &t.data, &values("aborted", 3));
    p.abort(TIMEOUT).unwrap();
    assert_eq!(committed_values(&t.data), values("kept", 5));
    assert_eq!(group_positions(&a, &t.own), vec![Offset::Offset(5), Offset::Offset(5)]);
}

/// A member whose generation is over (it stopped polling, as a process
/// paused by the OS; another member took its partitions) cannot commit:
/// its positions are refused, its transaction aborted, its records never
/// visible, the new owner's positions untouched.
#[test]
#[ignore = "needs clusters"]
fn a_member_whose_generation_is_over_cannot_commit() {
    require_clusters!(target());
    let t = topics();
    let a = owner(&t.group, &t.own, 7_000);
    owns(&a, 2);
    let p = Transactional::new(&client(), &unique("txn-a"), DefaultProducerContext, TIMEOUT).unwrap();
    p.begin().unwrap();
    send(&p, &t.data, &values("a", 5));
    p.commit(&positions(&t.own, 5), &a.group_metadata().unwrap(), TIMEOUT).unwrap();

    // A stops polling; B joins and, once A's max.poll.interval.ms is over,
    // owns both partitions.
    let b = owner(&t.group, &t.own, 300_000);
    owns(&b, 2);

    p.begin().unwrap();
    send(&p, &t.data, &values("zombie", 5));
    let started = Instant::now();
    match p.commit(&positions(&t.own, 10), &a.group_metadata().unwrap(), TIMEOUT) {
        Err(TxnError::GroupFenced(e)) => eprintln!("refused after {:?}: {e}", started.elapsed()),
        other => panic!("a member of an older generation committed or failed otherwise: {other:?}"),
    }
    assert_eq!(committed_values(&t.data), values("a", 5), "the zombie's records are never visible");
    assert_eq!(group_positions(&b, &t.own), vec![Offset::Offset(5), Offset::Offset(5)], "the zombie moved no position");
}

/// A newer producer with the same transactional.id aborts the older one's
/// open transaction, and the older one can never commit again.
#[test]
#[ignore = "needs clusters"]
fn a_newer_producer_with_the_same_id_fences_the_older() {
    require_clusters!(target());
    let t = topics();
    let a = owner(&t.group, &t.own, 300_000);
    owns(&a, 2);
    let id = unique("txn-shared");
    let old = Transactional::new(&client(), &id, DefaultProducerContext, TIMEOUT).unwrap();
    old.begin().unwrap();
    send(&old, &t.data, &values("old", 3));
    let new = Transactional::new(&client(), &id, DefaultProducerContext, TIMEOUT).unwrap();
    match old.commit(&positions(&t.own, 3), &a.group_metadata().unwrap(), TIMEOUT) {
        Err(TxnError::Fenced(e)) => eprintln!("the older producer: {e}"),
        other => panic!("the fenced producer committed or failed otherwise: {other:?}"),
    }
    new.begin().unwrap();
    send(&new, &t.data, &values("new", 2));
    new.commit(&positions(&t.own, 2), &a.group_metadata().unwrap(), TIMEOUT).unwrap();
    assert_eq!(committed_values(&t.data), values("new", 2));
    assert_eq!(group_positions(&a, &t.own), vec![Offset::Offset(2), Offset::Offset(2)]);
}

/// The hole `commit_as` closes: a consumer whose membership is gone
/// (librdkafka resets its generation to -1 and its member id to "" until
/// the loss is served) sends metadata the coordinator checks nothing of.
/// Shown with a consumer that never joined (the same -1 and ""): through
/// the plain call the coordinator takes its positions although a live
/// member owns the partitions; `commit_as` refuses to send them, aborts,
/// and nothing of its transaction becomes visible.
#[test]
#[ignore = "needs clusters"]
fn positions_of_a_consumer_that_is_no_member_are_never_sent() {
    require_clusters!(target());
    let t = topics();
    let a = owner(&t.group, &t.own, 300_000);
    owns(&a, 2);
    let outsider: BaseConsumer = client().set("group.id", &t.group).set("enable.auto.commit", "false").create().unwrap();

    let p = Transactional::new(&client(), &unique("txn-outsider"), DefaultProducerContext, TIMEOUT).unwrap();
    p.begin().unwrap();
    send(&p, &t.data, &values("taken", 2));
    p.commit(&positions(&t.own, 7), &outsider.group_metadata().unwrap(), TIMEOUT).expect("the coordinator takes generation -1 from anyone");
    assert_eq!(group_positions(&a, &t.own), vec![Offset::Offset(7), Offset::Offset(7)], "the hole: a non-member moved the owner's positions");

    p.begin().unwrap();
    send(&p, &t.data, &values("refused", 3));
    match p.commit_as(&positions(&t.own, 9), &outsider, TIMEOUT) {
        Err(e @ TxnError::NotMember(_)) => eprintln!("refused: {e}"),
        other => panic!("positions of a non-member were sent or failed otherwise: {other:?}"),
    }
    assert_eq!(committed_values(&t.data), values("taken", 2), "the refused transaction's records are never visible");
    assert_eq!(group_positions(&a, &t.own), vec![Offset::Offset(7), Offset::Offset(7)]);
    // The member itself commits through the same call.
    p.begin().unwrap();
    send(&p, &t.data, &values("member", 1));
    p.commit_as(&positions(&t.own, 11), &a, TIMEOUT).unwrap();
    assert_eq!(group_positions(&a, &t.own), vec![Offset::Offset(11), Offset::Offset(11)]);
}
