//! What Java Connect 3.9 makes of a PATCH body's partitions and offsets:
//! the JsonConverter round trip (`Worker.normalizeSourceConnectorOffsets`:
//! integers become `Long`, objects `HashMap`), the checks and messages of
//! `OffsetUtils.validateFormat` and of the three Mirror connectors'
//! `alterOffsets` (`MirrorUtils.validateSource*`), `Map.toString` in a
//! `HashMap`'s iteration order for those messages, and the JSON bytes
//! JsonConverter writes for a key (its object fields in that same order).

use serde_json::{Map, Value};

use crate::engine::mm2::connect_offsets::push_json_string;
use crate::front::mm2::connector::Kind;

/// `String.hashCode()`: over UTF-16 code units, wrapping.
fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The order a `java.util.HashMap` filled with `keys` iterates them: by
/// bucket (`(h ^ h >>> 16) & (capacity - 1)`), then insertion order (a
/// resize keeps the order within a bucket). The table starts at 16 and
/// doubles while the entries pass 3/4 of it.
pub fn hash_order<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let keys: Vec<&str> = keys.into_iter().collect();
    let mut capacity = 16usize;
    while keys.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let bucket = |k: &str| {
        let h = string_hash(k) as u32;
        ((h ^ (h >> 16)) as usize) & (capacity - 1)
    };
    let mut indexed: Vec<(usize, usize, &str)> = keys.iter().enumerate().map(|(i, k)| (bucket(k), i, *k)).collect();
    indexed.sort();
    indexed.into_iter().map(|(_, _, k)| k).collect()
}

/// `v` with every object's fields in [`hash_order`], as Jackson writes the
/// maps Connect hands it.
pub fn java_order(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let ordered: Map<String, Value> = hash_order(m.keys().map(String::as_str)).into_iter().map(|k| (k.to_string(), java_order(&m[k]))).collect();
            Value::Object(ordered)
        }
        Value::Array(a) => Value::Array(a.iter().map(java_order).collect()),
        other => other.clone(),
    }
}

/// `Double.toString`: plain between 10^-3 and 10^7, else `d.dddE±n`.
fn java_double(d: f64) -> String {
    let a = d.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        return format!("{d:?}");
    }
    let s = format!("{d:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    format!("{mantissa}E{exp}")
}

/// `toString()` of the value JsonConverter reads `v` as (`Long`,
/// `Double`, `String`, `Boolean`, `ArrayList`, `HashMap`).
pub fn java_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            n.as_i64().map(|i| i.to_string()).or_else(|| n.as_u64().map(|u| u.to_string())).unwrap_or_else(|| java_double(n.as_f64().unwrap_or(0.0)))
        }
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(java_string).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => {
            let fields: Vec<String> = hash_order(m.keys().map(String::as_str)).into_iter().map(|k| format!("{k}={}", java_string(&m[k]))).collect();
            format!("{{{}}}", fields.join(", "))
        }
    }
}

/// The bytes JsonConverter (`schemas.enable=false`) writes for `v`.
pub fn push_json(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => push_json_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, k) in hash_order(m.keys().map(String::as_str)).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, k);
                out.push(':');
                push_json(out, &m[k]);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The key of `partition` of `connector` in the offsets topic.
pub fn key_bytes(connector: &str, partition: &Value) -> Vec<u8> {
    let mut s = String::new();
    push_json(&mut s, &Value::Array(vec![Value::String(connector.into()), partition.clone()]));
    s.into_bytes()
}

/// Why Java refuses an alteration: the message of its `ConnectException`
/// (answered as 500, as Connect's exception mapper does).
pub type Refusal = String;

/// `OffsetUtils.validateFormat` of one map of the request as Jackson read
/// it: only primitive values.
fn validate_format(m: Option<&Map<String, Value>>) -> Result<(), Refusal> {
    for (k, v) in m.into_iter().flatten() {
        let kind = match v {
            Value::Array(_) => "ARRAY",
            Value::Object(_) => "MAP",
            _ => continue,
        };
        return Err(format!("Offsets may only contain primitive types as values, but field {k} contains {kind}"));
    }
    Ok(())
}

fn is_integer(v: Option<&Value>) -> bool {
    v.and_then(Value::as_number).is_some_and(|n| n.is_i64())
}

/// `MirrorUtils.validateSourcePartitionString`.
fn partition_string(p: &Map<String, Value>, key: &str) -> Result<(), Refusal> {
    let shown = java_string(&Value::Object(p.clone()));
    match p.get(key) {
        None => Err(format!("Source partition {shown} is missing the '{key}' key, which is required")),
        Some(Value::String(_)) => Ok(()),
        Some(v) => Err(format!("Source partition {shown} has an invalid value {} for the '{key}' key, which must be a string", java_string(v))),
    }
}

/// `MirrorUtils.validateSourcePartitionPartition`.
fn partition_partition(p: &Map<String, Value>) -> Result<(), Refusal> {
    let shown = java_string(&Value::Object(p.clone()));
    let v = p.get("partition").ok_or_else(|| format!("Source partition {shown} is missing the 'partition' key, which is required"))?;
    let n = v.as_i64().filter(|n| is_integer(Some(v)) && *n <= i64::from(i32::MAX));
    let Some(n) = n else {
        return Err(format!("Source partition {shown} has an invalid value {} for the 'partition' key, which must be an integer", java_string(v)));
    };
    // Java compares the int value: a long below Integer.MIN_VALUE wraps.
    if (n as i32) < 0 {
        return Err(format!("Source partition {shown} has an invalid value {} for the 'partition' key, which cannot be negative", java_string(v)));
    }
    Ok(())
}

/// `MirrorUtils.validateSourceOffset`.
fn source_offset(p: &Map<String, Value>, o: &Map<String, Value>, only_zero: bool) -> Result<(), Refusal> {
    let (ps, os) = (java_string(&Value::Object(p.clone())), java_string(&Value::Object(o.clone())));
    let v = o.get("offset").ok_or_else(|| format!("Source offset {os} for source partition {ps} is missing the 'offset' key, which is required"))?;
    let shown = java_string(v);
    let Some(n) = v.as_i64().filter(|_| is_integer(Some(v))) else {
        return Err(format!("Source offset {os} for source partition {ps} has an invalid value {shown} for the 'offset' key, which must be an integer"));
    };
    if only_zero && n != 0 {
        return Err(format!("Source offset {os} for source partition {ps} has an invalid value {shown} for the 'offset' key; the only accepted value is 0"));
    }
    if !only_zero && n < 0 {
        return Err(format!("Source offset {os} for source partition {ps} has an invalid value {shown} for the 'offset' key, which cannot be negative"));
    }
    Ok(())
}

/// Java's checks of one (partition, offset) of an alteration of a
/// connector of `kind`, in Java's order. A null offset (a tombstone) is
/// allowed for anything, as Java allows it to clean up garbage.
pub fn validate(kind: Kind, partition: Option<&Map<String, Value>>, offset: Option<&Map<String, Value>>) -> Result<(), Refusal> {
    validate_format(partition)?;
    validate_format(offset)?;
    let Some(offset) = offset else { return Ok(()) };
    let partition = partition.ok_or("Source partitions may not be null")?;
    match kind {
        Kind::Source => {
            partition_string(partition, "cluster")?;
            partition_string(partition, "topic")?;
            partition_partition(partition)?;
            source_offset(partition, offset, false)
        }
        Kind::Checkpoint => {
            partition_string(partition, "group")?;
            partition_string(partition, "topic")?;
            partition_partition(partition)?;
            source_offset(partition, offset, true)
        }
        Kind::Heartbeat => {
            partition_string(partition, "sourceClusterAlias")?;
            partition_string(partition, "targetClusterAlias")?;
            source_offset(partition, offset, true)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn keys_are_written_in_javas_hashmap_order() {
        // Java's own records (connect_offsets' ground truth), whatever order
        // the request gave the fields in.
        let p = json!({ "topic": "gt-orders", "partition": 0, "cluster": "Asrc" });
        assert_eq!(
            String::from_utf8(key_bytes("MirrorSourceConnector", &p)).unwrap(),
            r#"["MirrorSourceConnector",{"cluster":"Asrc","partition":0,"topic":"gt-orders"}]"#
        );
        let hb = json!({ "targetClusterAlias": "Btgt", "sourceClusterAlias": "Asrc" });
        assert_eq!(
            String::from_utf8(key_bytes("MirrorHeartbeatConnector", &hb)).unwrap(),
            r#"["MirrorHeartbeatConnector",{"sourceClusterAlias":"Asrc","targetClusterAlias":"Btgt"}]"#
        );
        // HashMap order of these three: by bucket of (h ^ h>>>16) & 15.
        assert_eq!(hash_order(["group", "topic", "partition"]), ["partition", "topic", "group"]);
        assert_eq!(string_hash("hello"), 99_162_322, "Java's \"hello\".hashCode()");
    }

    #[test]
    fn java_strings_of_maps_and_numbers() {
        assert_eq!(java_string(&json!({ "topic": "t", "cluster": "A", "partition": 1.5 })), "{cluster=A, partition=1.5, topic=t}");
        assert_eq!(java_string(&json!([1, "a", null, true])), "[1, a, null, true]");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(2.0), "2.0");
        assert_eq!(java_double(1.5e-4), "1.5E-4");
    }

    #[test]
    fn source_partitions_and_offsets_are_checked_as_java_checks_them() {
        let ok = obj(json!({ "cluster": "A", "topic": "t", "partition": 0 }));
        assert_eq!(validate(Kind::Source, Some(&ok), Some(&obj(json!({ "offset": 5 })))), Ok(()));
        assert_eq!(
            validate(Kind::Source, Some(&obj(json!({ "a": [1] }))), None),
            Err("Offsets may only contain primitive types as values, but field a contains ARRAY".into())
        );
        assert_eq!(validate(Kind::Source, Some(&obj(json!({ "x": 1 }))), None), Ok(()), "a tombstone for anything");
        let cases = [
            (json!({ "topic": "t", "partition": 0 }), json!({ "offset": 1 }), "Source partition {partition=0, topic=t} is missing the 'cluster' key, which is required"),
            (
                json!({ "cluster": "A", "topic": "t", "partition": "0" }),
                json!({ "offset": 1 }),
                "Source partition {cluster=A, partition=0, topic=t} has an invalid value 0 for the 'partition' key, which must be an integer",
            ),
            (
                json!({ "cluster": "A", "topic": "t", "partition": -1 }),
                json!({ "offset": 1 }),
                "Source partition {cluster=A, partition=-1, topic=t} has an invalid value -1 for the 'partition' key, which cannot be negative",
            ),
            (
                json!({ "cluster": 7, "topic": "t", "partition": 0 }),
                json!({ "offset": 1 }),
                "Source partition {cluster=7, partition=0, topic=t} has an invalid value 7 for the 'cluster' key, which must be a string",
            ),
            (
                json!({ "cluster": "A", "topic": "t", "partition": 0 }),
                json!({ "offset": -2 }),
                "Source offset {offset=-2} for source partition {cluster=A, partition=0, topic=t} has an invalid value -2 for the 'offset' key, which cannot be negative",
            ),
            (
                json!({ "cluster": "A", "topic": "t", "partition": 0 }),
                json!({ "offset": "3" }),
                "Source offset {offset=3} for source partition {cluster=A, partition=0, topic=t} has an invalid value 3 for the 'offset' key, which must be an integer",
            ),
            (
                json!({ "cluster": "A", "topic": "t", "partition": 0 }),
                json!({ "position": 3 }),
                "Source offset {position=3} for source partition {cluster=A, partition=0, topic=t} is missing the 'offset' key, which is required",
            ),
        ];
        for (p, o, want) in cases {
            assert_eq!(validate(Kind::Source, Some(&obj(p.clone())), Some(&obj(o))), Err(want.to_string()), "{p}");
        }
    }

    #[test]
    fn checkpoint_and_heartbeat_offsets_must_be_zero() {
        let cp = obj(json!({ "group": "g", "topic": "t", "partition": 0 }));
        assert_eq!(validate(Kind::Checkpoint, Some(&cp), Some(&obj(json!({ "offset": 0 })))), Ok(()));
        assert_eq!(
            validate(Kind::Checkpoint, Some(&cp), Some(&obj(json!({ "offset": 1 })))),
            Err("Source offset {offset=1} for source partition {partition=0, topic=t, group=g} has an invalid value 1 for the 'offset' key; the only accepted value is 0".into())
        );
        let hb = obj(json!({ "sourceClusterAlias": "A" }));
        assert_eq!(
            validate(Kind::Heartbeat, Some(&hb), Some(&obj(json!({ "offset": 0 })))),
            Err("Source partition {sourceClusterAlias=A} is missing the 'targetClusterAlias' key, which is required".into())
        );
        assert_eq!(validate(Kind::Heartbeat, None, Some(&obj(json!({ "offset": 0 })))), Err("Source partitions may not be null".into()));
    }
}
