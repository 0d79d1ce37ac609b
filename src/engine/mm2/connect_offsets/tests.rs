//! Unit tests of connect_offsets: Java's own records as ground truth.

use super::*;

// Ground truth: records Java MirrorMaker 2 (3.9.2, dedicated mode,
// flow Asrc->Btgt) wrote to mm2-offsets.Asrc.internal (25 partitions),
// read back with `kcat -C -f '%p %k|%s'`.
const JAVA: &[(i32, &str, &str)] = &[
    (23, r#"["MirrorSourceConnector",{"cluster":"Asrc","partition":0,"topic":"gt-orders"}]"#, r#"{"offset":61}"#),
    (9, r#"["MirrorSourceConnector",{"cluster":"Asrc","partition":1,"topic":"gt-orders"}]"#, r#"{"offset":16}"#),
    (6, r#"["MirrorSourceConnector",{"cluster":"Asrc","partition":2,"topic":"gt-orders"}]"#, r#"{"offset":20}"#),
    (4, r#"["MirrorSourceConnector",{"cluster":"Asrc","partition":0,"topic":"gt-x_y.z"}]"#, r#"{"offset":6}"#),
    (17, r#"["MirrorSourceConnector",{"cluster":"Asrc","partition":0,"topic":"heartbeats"}]"#, r#"{"offset":19}"#),
];
const JAVA_HEARTBEAT_KEY: &str = r#"["MirrorHeartbeatConnector",{"sourceClusterAlias":"Asrc","targetClusterAlias":"Btgt"}]"#;

#[test]
fn keys_values_and_partitions_are_javas_bytes() {
    for (partition, key, value) in JAVA {
        let Key::Source { cluster, topic, partition: p } = decode_key(key.as_bytes(), CONNECTOR).unwrap() else { panic!("{key} not a source key") };
        assert_eq!(cluster, "Asrc");
        assert_eq!(encode_key(CONNECTOR, &cluster, &topic, p), key.as_bytes(), "key of {topic}-{p}");
        assert_eq!(partition_of(key.as_bytes(), 25), *partition, "partition of {key}");
        let offset = decode_value(value.as_bytes()).unwrap();
        assert_eq!(encode_value(offset), value.as_bytes());
    }
}

#[test]
fn the_last_record_of_a_key_wins_and_a_null_value_deletes_it() {
    let mut j = JavaPositions::default();
    let key = JAVA[0].1.as_bytes();
    j.apply(CONNECTOR, "Asrc", Some(key), Some(br#"{"offset":1}"#), "0");
    j.apply(CONNECTOR, "Asrc", Some(key), Some(br#"{"offset":61}"#), "1");
    j.apply(CONNECTOR, "Asrc", Some(JAVA[3].1.as_bytes()), Some(JAVA[3].2.as_bytes()), "2");
    assert_eq!(j.offsets, BTreeMap::from([(("gt-orders".into(), 0), 61), (("gt-x_y.z".into(), 0), 6)]));
    j.apply(CONNECTOR, "Asrc", Some(key), None, "3");
    assert_eq!(j.offsets, BTreeMap::from([(("gt-x_y.z".into(), 0), 6)]));
    assert_eq!((j.records, j.others, j.malformed), (4, 0, 0));
}

#[test]
fn other_connectors_and_other_clusters_are_ignored() {
    let mut j = JavaPositions::default();
    j.apply(CONNECTOR, "Asrc", Some(JAVA_HEARTBEAT_KEY.as_bytes()), Some(br#"{"offset":0}"#), "0");
    j.apply(CONNECTOR, "Other", Some(JAVA[0].1.as_bytes()), Some(JAVA[0].2.as_bytes()), "1");
    let extra_field = br#"["MirrorSourceConnector",{"cluster":"Asrc","partition":0,"topic":"t","x":1}]"#;
    j.apply(CONNECTOR, "Asrc", Some(extra_field), Some(br#"{"offset":5}"#), "2");
    assert!(j.offsets.is_empty());
    assert_eq!((j.records, j.others, j.malformed), (3, 3, 0));
}

#[test]
fn malformed_records_are_counted_and_skipped() {
    let mut j = JavaPositions::default();
    let good = JAVA[0].1.as_bytes();
    type Record<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
    let cases: &[Record<'_>] = &[
        (None, Some(br#"{"offset":1}"#)),
        (Some(b"not json"), Some(br#"{"offset":1}"#)),
        (Some(br#"["MirrorSourceConnector",{"cluster":"Asrc","topic":"t"}]"#), Some(br#"{"offset":1}"#)),
        (Some(br#"["MirrorSourceConnector",{"cluster":"Asrc","partition":0,"topic":"t"}] x"#), Some(br#"{"offset":1}"#)),
        (Some(good), Some(br#"{"offset":1.5}"#)),
        (Some(good), Some(br#"{"offset":"7"}"#)),
        (Some(good), Some(br#"{"offset":99999999999999999999}"#)),
        (Some(good), Some(br#"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]"#)),
    ];
    for (k, v) in cases {
        j.apply(CONNECTOR, "Asrc", *k, *v, "x");
    }
    assert!(j.offsets.is_empty());
    assert_eq!(j.malformed, cases.len() as u64);
    assert!(j.first_malformed.as_deref().is_some_and(|m| m.contains("no key")));
}

#[test]
fn each_partition_continues_from_the_later_of_the_groups_offset_and_javas_next() {
    let tp = |p| ("t".to_string(), p);
    let o = |p, offset| GroupOffset { topic: "t".into(), partition: p, offset, metadata: String::new() };
    // 0: no own offset; 1: own later; 2: own equal to Java's next;
    // 3: own earlier (ours, then Java, then ours again); 4: Java has
    // nothing yet, own kept; 5: Java has nothing yet, no own.
    let java = BTreeMap::from([(tp(0), 61), (tp(1), 16), (tp(2), 20), (tp(3), 99), (tp(4), -1), (tp(5), -1)]);
    let committed = BTreeMap::from([(tp(1), 40), (tp(2), 21), (tp(3), 50), (tp(4), 7), (tp(9), 3)]);
    let choice = choose_positions(&java, &committed);
    assert_eq!(choice.take, vec![o(0, 62), o(3, 100)]);
    assert_eq!(choice.past_own, vec!["t-3 (group's 50, Java's 100)".to_string()]);
    assert_eq!(choice.kept, 3);
    // Never backwards: every offset taken is past the group's own.
    assert!(choice.take.iter().all(|g| committed.get(&(g.topic.clone(), g.partition)).is_none_or(|own| *own < g.offset)));
}

#[test]
fn only_positions_that_moved_are_handed_back_as_the_last_replicated_offset() {
    let o = |p, offset| GroupOffset { topic: "t".into(), partition: p, offset, metadata: String::new() };
    let written = BTreeMap::from([(("t".to_string(), 0), 61)]);
    let changed = changed_positions(&[o(0, 62), o(1, 17), o(2, 0)], &written);
    assert_eq!(changed, vec![(("t".to_string(), 1), 16)]);
}
