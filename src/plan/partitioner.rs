//! Java's key placement, for checks: `(murmur2(key) & 0x7fffffff) % n`.
//!
//! The mirror itself lets librdkafka place keyed records
//! (`partitioner=murmur2_random`, the same formula); this port lets the demo
//! and the end-to-end tests verify that every keyed record landed exactly
//! where Java MirrorMaker would have put it.
//!
//! 0.8's `kafka.producer.ByteArrayPartitioner` placed keys by
//! `abs(Arrays.hashCode(key)) % n`, which librdkafka lacks; producer files
//! naming it get [`ByteArrayPartitioner`] as a custom partitioner.

/// Kafka's `Utils.murmur2` (seed 0x9747b28c).
pub fn murmur2(data: &[u8]) -> i32 {
    let length = data.len() as i32;
    let seed: u32 = 0x9747_b28c;
    let m: u32 = 0x5bd1_e995;
    let r = 24;
    let mut h: u32 = seed ^ (length as u32);
    let chunks = data.len() / 4;
    for i in 0..chunks {
        let i4 = i * 4;
        let mut k = u32::from_le_bytes([data[i4], data[i4 + 1], data[i4 + 2], data[i4 + 3]]);
        k = k.wrapping_mul(m);
        k ^= k >> r;
        k = k.wrapping_mul(m);
        h = h.wrapping_mul(m);
        h ^= k;
    }
    let tail = &data[chunks * 4..];
    if tail.len() >= 3 {
        h ^= (tail[2] as u32) << 16;
    }
    if tail.len() >= 2 {
        h ^= (tail[1] as u32) << 8;
    }
    if !tail.is_empty() {
        h ^= tail[0] as u32;
        h = h.wrapping_mul(m);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(m);
    h ^= h >> 15;
    h as i32
}

/// The partition Java's DefaultPartitioner picks for a keyed record.
pub fn java_partition(key: &[u8], partitions: i32) -> i32 {
    (murmur2(key) & 0x7fff_ffff) % partitions
}

/// `java.util.Arrays.hashCode(byte[])`: 31-polynomial over signed bytes.
pub fn java_array_hash(key: &[u8]) -> i32 {
    key.iter().fold(1i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(*b as i8)))
}

/// The partition 0.8's ByteArrayPartitioner picks: `kafka.utils.Utils.abs`
/// is `n & 0x7fffffff`, so `abs(Int.MinValue)` is 0.
pub fn byte_array_partition(key: &[u8], partitions: i32) -> i32 {
    (java_array_hash(key) & 0x7fff_ffff) % partitions
}

/// 0.8's ByteArrayPartitioner as a librdkafka custom partitioner.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByteArrayPartitioner;

impl rdkafka::producer::Partitioner for ByteArrayPartitioner {
    fn partition(&self, _topic: &str, key: Option<&[u8]>, partitions: i32, _available: impl Fn(i32) -> bool) -> i32 {
        match key {
            Some(k) => byte_array_partition(k, partitions),
            // The 0.8 producer sent unkeyed messages to a random partition.
            None => {
                use std::hash::{BuildHasher, Hasher};
                let r = std::collections::hash_map::RandomState::new().build_hasher().finish();
                (r % partitions.max(1) as u64) as i32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_hash_code_and_0_8_placement() {
        // Worked by hand from Arrays.hashCode: h = 31*h + (signed byte), starting at 1.
        assert_eq!(java_array_hash(b""), 1);
        assert_eq!(java_array_hash(&[0]), 31);
        assert_eq!(java_array_hash(&[0xff]), 30);
        assert_eq!(java_array_hash(b"ab"), 4066);
        assert_eq!(java_array_hash(b"abc"), 126145);
        assert_eq!(byte_array_partition(b"abc", 7), 126145 % 7);
        // Values printed by Java 17's Arrays.hashCode for these keys (a
        // negative hash: the sign bit is masked, not negated).
        assert_eq!(java_array_hash(b"hello world, mirror"), 426590038);
        assert_eq!(byte_array_partition(b"hello world, mirror", 5), 3);
        let neg: &[u8] = &[0x80, 0xff, 0x7f, 0x01, 0x90, 0x00, 0x55];
        assert_eq!(java_array_hash(neg), -99930877);
        assert_eq!(byte_array_partition(neg, 5), 1);
        use rdkafka::producer::Partitioner;
        assert_eq!(ByteArrayPartitioner.partition("t", Some(b"ab"), 10, |_| true), 6);
        for _ in 0..100 {
            assert!((0..3).contains(&ByteArrayPartitioner.partition("t", None, 3, |_| true)));
        }
    }

    #[test]
    fn matches_kafka_utils_test_vectors() {
        // From Kafka's UtilsTest.testMurmur2.
        let cases: &[(&[u8], i32)] = &[
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
            (b"abc", 479470107),
        ];
        for (data, want) in cases {
            assert_eq!(murmur2(data), *want, "{}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn placement_is_in_range() {
        for i in 0..1000 {
            let p = java_partition(format!("key-{i}").as_bytes(), 7);
            assert!((0..7).contains(&p));
        }
    }
}
