//! End-to-end: the real binary between real Kafka 3.9 clusters, as a user
//! runs it. Clusters come from `scripts/clusters start` (see tests/common).

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use mirror_maker::plan::partitioner::java_partition;

/// Per key, the seq header must rise with the target offset (first copies).
fn assert_key_order(topic: &str, landed: &[Landed]) {
    let mut sorted: Vec<&Landed> = landed.iter().collect();
    sorted.sort_by_key(|l| (l.partition, l.offset));
    let mut highest: HashMap<(i32, Vec<u8>), u64> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for l in sorted {
        let seq = l.rec.seq().unwrap();
        let first = seen.insert(seq);
        if let Some(k) = &l.rec.key {
            let top = highest.entry((l.partition, k.clone())).or_insert(0);
            assert!(!(first && seq < *top), "{topic}: key {:?} out of order: seq {seq} after {top}", String::from_utf8_lossy(k));
            *top = (*top).max(seq);
        }
    }
}

fn assert_murmur2_placement(topic: &str, landed: &[Landed], partitions: i32) {
    let mut keyed = 0;
    for l in landed {
        if let Some(k) = &l.rec.key {
            assert_eq!(l.partition, java_partition(k, partitions), "{topic}: key {:?} not in Java's partition", String::from_utf8_lossy(k));
            keyed += 1;
        }
    }
    assert!(keyed > 0, "{topic}: no keyed records checked");
}

fn assert_committed_at_end(bootstrap: &str, group: &str, topic: &str) {
    for (p, committed, end) in committed_and_end(bootstrap, group, topic) {
        assert_eq!(committed, Some(end), "{topic}-{p}: group {group} committed {committed:?}, end offset {end}");
    }
}

#[test]
#[ignore = "needs clusters"]
fn mirrors_every_record_faithfully_and_commits_end_offsets() {
    require_clusters!(source(), target());
    let id = unique("core");
    let (a, b, skip, late) = (format!("{id}-a"), format!("{id}-b"), format!("{id}-skip"), format!("{id}-late"));
    create_topic(&source(), &a, 3, &[]);
    create_topic(&source(), &b, 2, &[]);
    create_topic(&source(), &skip, 1, &[]);
    // A target with more partitions than the source: keys are re-hashed as Java does.
    create_topic(&target(), &a, 4, &[]);
    let recs_a = sample_records(&a, 2000);
    let recs_b = sample_records(&b, 500);
    produce(&source(), &a, &recs_a);
    produce(&source(), &b, &recs_b);
    produce(&source(), &skip, &sample_records(&skip, 50));

    let group = unique("group");
    let c = consumer_props(&source(), &group);
    let p = producer_props(&target());
    let port = free_port();
    let mut m = Mirror::start(&[
        s("--metrics.port"),
        port.to_string(),
        s("--consumer.config"),
        path(&c),
        s("--producer.config"),
        path(&p),
        s("--whitelist"),
        format!("{id}-.*"),
        s("--blacklist"),
        skip.clone(),
        s("--num.streams"),
        s("2"),
        s("--num.producers"),
        s("2"),
        s("--offset.commit.interval.ms"),
        s("1000"),
        s("--topic.refresh.interval.ms"),
        s("2000"),
        s("--stats.interval.ms"),
        s("1000"),
    ]);
    wait_until("a and b mirrored and committed", || all_committed(&source(), &group, &a) && all_committed(&source(), &group, &b));

    // A topic created after start is found by the periodic refresh.
    create_topic(&source(), &late, 2, &[]);
    let recs_late = sample_records(&late, 300);
    produce(&source(), &late, &recs_late);
    wait_until("late topic mirrored and committed", || partitions_of(&target(), &late).is_some() && all_committed(&source(), &group, &late));

    // Caught up: the stats line shows it.
    m.wait_for_log("lag 0, in flight 0");
    // So does the Prometheus endpoint, bound to loopback by default.
    m.wait_for_log(&format!("metrics endpoint: http://127.0.0.1:{port}/metrics"));
    let total = (recs_a.len() + recs_b.len() + recs_late.len()) as f64;
    // Every owned partition reports its own lag: 3 + 2 + 2 partitions.
    wait_until("endpoint shows every record and lag 0 on all 7 partitions", || {
        let page = scrape(port);
        page.sum("mirror_maker_records_produced_total") == Some(total)
            && page.matching("mirror_maker_lag_records", &[]).len() == 7
            && page.sum("mirror_maker_lag_records") == Some(0.0)
    });
    let page = scrape(port);
    assert_eq!(page.sum("mirror_maker_records_consumed_total"), Some(total), "{page:?}");
    for (topic, recs, partitions) in [(&a, &recs_a, 3), (&b, &recs_b, 2), (&late, &recs_late, 2)] {
        let l = [("source", "0"), ("topic", topic.as_str())];
        let bytes: usize = recs.iter().map(|r| r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len)).sum();
        assert_eq!(
            page.matching("mirror_maker_records_produced_total", &l),
            vec![(format!("mirror_maker_records_produced_total{{source=\"0\",topic=\"{topic}\"}}"), recs.len() as f64)]
        );
        assert_eq!(page.matching("mirror_maker_bytes_produced_total", &l)[0].1, bytes as f64, "{topic}");
        assert_eq!(page.matching("mirror_maker_bytes_consumed_total", &l)[0].1, bytes as f64, "{topic}");
        assert_eq!(page.matching("mirror_maker_records_dropped_total", &l)[0].1, 0.0, "{topic}");
        // sample_records stamps records an hour before they are written, so
        // the latency from source timestamp to acknowledgement is that hour
        // plus the time the test took so far.
        let latency = page.matching("mirror_maker_replication_latency_seconds", &l);
        assert_eq!(latency.len(), partitions, "{topic}: {latency:?}");
        assert!(latency.iter().all(|(_, s)| (3595.0..4500.0).contains(s)), "{topic}: {latency:?}");
    }
    assert_eq!(page.matching("mirror_maker_records_produced_total", &[("topic", &skip)]), vec![], "excluded topic counted");
    assert_eq!(page.sum("mirror_maker_in_flight_records"), Some(0.0), "{page:?}");
    assert_eq!(page.sum("mirror_maker_channel_records"), Some(0.0), "{page:?}");
    let commits = page.sum("mirror_maker_commits_total").unwrap();
    assert!(commits >= 1.0 && page.sum("mirror_maker_commit_duration_seconds_count") == Some(commits), "{page:?}");
    assert!(page.sum("mirror_maker_process_resident_memory_bytes").unwrap() > 0.0, "{page:?}");
    // Bound to loopback: the host's other address refuses the connection.
    let ip = non_loopback_address().expect("this test needs a non-loopback address (a default route) to show the endpoint is not reachable on it");
    // Control: the address does reach this host, so a refusal means the bind.
    let any = std::net::TcpListener::bind(("0.0.0.0", 0)).unwrap();
    let reachable = std::net::TcpStream::connect_timeout(&(ip, any.local_addr().unwrap().port()).into(), Duration::from_secs(5));
    assert!(reachable.is_ok(), "{ip} does not reach this host ({reachable:?}); cannot tell what the endpoint refuses");
    let refused = std::net::TcpStream::connect_timeout(&(ip, port).into(), Duration::from_secs(5));
    assert!(refused.is_err(), "the metrics endpoint answered on {ip}:{port}; it must listen on 127.0.0.1 only by default");
    println!("core: endpoint refused {ip}:{port} ({}); sample of the page:", refused.unwrap_err());
    for (k, v) in
        page.matching("mirror_maker_records_produced_total", &[]).iter().chain(page.matching("mirror_maker_lag_records", &[("topic", a.as_str())]).iter())
    {
        println!("  {k} {v}");
    }
    let stats: Vec<String> = m.output().lines().filter(|l| l.contains("stats: in ")).map(str::to_string).collect();
    assert!(stats.iter().any(|l| !l.contains("out 0 records/s")), "no stats line saw records flowing: {stats:?}");
    assert_eq!(m.stop(), 0, "exit status after SIGTERM; log:\n{}", m.output());
    let log = m.output();
    for line in ["Starting mirror maker", "Start clean shutdown.", "Committing consumer offsets.", "Kafka mirror maker shutdown successfully"] {
        assert!(log.contains(line), "log lacks '{line}':\n{log}");
    }
    assert!(!log.lines().any(|l| l.contains("subscribed to") && l.contains("__")), "internal topic subscribed:\n{log}");

    let landed_a = read_topic(&target(), &a);
    let dups_a = assert_same_records(&a, &recs_a, &landed_a);
    assert_murmur2_placement(&a, &landed_a, 4);
    assert_key_order(&a, &landed_a);
    let landed_b = read_topic(&target(), &b);
    let dups_b = assert_same_records(&b, &recs_b, &landed_b);
    assert_key_order(&b, &landed_b);
    let landed_late = read_topic(&target(), &late);
    let dups_late = assert_same_records(&late, &recs_late, &landed_late);
    // Nothing failed in this run, so nothing may have been sent twice.
    assert_eq!((dups_a, dups_b, dups_late), (0, 0, 0), "duplicates in a fault-free run");
    assert_eq!(partitions_of(&target(), &skip), None, "excluded topic reached the target");
    for t in [&a, &b, &late] {
        assert_committed_at_end(&source(), &group, t);
    }
    println!("core: mirrored {} + {} + {} records, 0 missing, 0 duplicates, committed = end offsets", recs_a.len(), recs_b.len(), recs_late.len());
}

#[test]
#[ignore = "needs clusters"]
fn two_sources_into_one_target() {
    require_clusters!(source(), extra(), target());
    let id = unique("multi");
    let (t1, t2) = (format!("{id}-from-source"), format!("{id}-from-extra"));
    create_topic(&source(), &t1, 2, &[]);
    create_topic(&extra(), &t2, 3, &[]);
    let (r1, r2) = (sample_records(&t1, 400), sample_records(&t2, 600));
    produce(&source(), &t1, &r1);
    produce(&extra(), &t2, &r2);
    let (g1, g2) = (unique("g1"), unique("g2"));
    let (c1, c2) = (consumer_props(&source(), &g1), consumer_props(&extra(), &g2));
    let p = producer_props(&target());
    let mut m = Mirror::start(&[
        s("--consumer.config"),
        path(&c1),
        s("--consumer.config"),
        path(&c2),
        s("--producer.config"),
        path(&p),
        s("--include"),
        format!("{id}-.*"),
        s("--offset.commit.interval.ms"),
        s("1000"),
    ]);
    wait_until("both sources committed", || all_committed(&source(), &g1, &t1) && all_committed(&extra(), &g2, &t2));
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    assert_eq!(assert_same_records(&t1, &r1, &read_topic(&target(), &t1)), 0);
    assert_eq!(assert_same_records(&t2, &r2, &read_topic(&target(), &t2)), 0);
}

#[test]
#[ignore = "needs clusters"]
fn fan_out_to_two_targets_with_distinct_groups() {
    require_clusters!(source(), extra(), target());
    let id = unique("fanout");
    let t = format!("{id}-t");
    create_topic(&source(), &t, 3, &[]);
    let recs = sample_records(&t, 800);
    produce(&source(), &t, &recs);
    let (g1, g2) = (unique("fan1"), unique("fan2"));
    let args = |g: &str, to: &str| mirror_args(&source(), g, to, &t, &["--offset.commit.interval.ms", "1000"]);
    let mut m1 = Mirror::start(&args(&g1, &target()));
    let mut m2 = Mirror::start(&args(&g2, &extra()));
    wait_until("both fan-out groups committed", || all_committed(&source(), &g1, &t) && all_committed(&source(), &g2, &t));
    assert_eq!(m1.stop(), 0, "log:\n{}", m1.output());
    assert_eq!(m2.stop(), 0, "log:\n{}", m2.output());
    assert_eq!(assert_same_records(&t, &recs, &read_topic(&target(), &t)), 0);
    assert_eq!(assert_same_records(&t, &recs, &read_topic(&extra(), &t)), 0);
}

#[test]
#[ignore = "needs clusters"]
fn two_instances_in_one_group_split_the_partitions() {
    require_clusters!(source(), target());
    let id = unique("scale");
    let t = format!("{id}-t");
    create_topic(&source(), &t, 6, &[]);
    create_topic(&target(), &t, 6, &[]);
    let group = unique("shared");
    let args = || mirror_args(&source(), &group, &target(), &t, &["--offset.commit.interval.ms", "1000"]);
    let mut m1 = Mirror::start(&args());
    m1.wait_for_log("assigned 6 partitions");
    let mut m2 = Mirror::start(&args());
    // After the rebalance each instance owns a share.
    wait_until("both instances own partitions", || {
        let last_assign = |log: String| log.lines().rfind(|l| l.contains("assigned ")).map(str::to_string).unwrap_or_default();
        let (l1, l2) = (last_assign(m1.output()), last_assign(m2.output()));
        l1.contains("assigned 3 partitions") && l2.contains("assigned 3 partitions")
    });
    let recs = sample_records(&t, 3000);
    produce(&source(), &t, &recs);
    wait_until("group committed", || all_committed(&source(), &group, &t));
    assert_eq!(m1.stop(), 0, "log:\n{}", m1.output());
    assert_eq!(m2.stop(), 0, "log:\n{}", m2.output());
    let landed = read_topic(&target(), &t);
    let dups = assert_same_records(&t, &recs, &landed);
    assert_key_order(&t, &landed);
    assert_committed_at_end(&source(), &group, &t);
    println!("scale-out: 3000 records through two instances of one group, 0 missing, {dups} duplicates");
}
