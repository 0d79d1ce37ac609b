//! MirrorMaker 2's internal record formats: heartbeats, offset-syncs and
//! checkpoints, byte for byte as Java writes them.
//!
//! Java writes these with its protocol `Schema`/`Struct` types
//! (`clients/.../common/protocol/types`): fields in declared order, no tags,
//! counts or padding; integers big-endian; a `STRING` is an `INT16` byte
//! length and that many bytes of UTF-8, never null. Heartbeat and checkpoint
//! values start with a `{version: INT16}` header struct; offset-syncs have
//! none. Java's readers, `MirrorClient` and the three console formatters,
//! must be able to read what we write, so nothing here may drift from
//! `MC/Heartbeat.java`, `MC/Checkpoint.java` and `MM/OffsetSync.java`.
//!
//! Also read with the same types: a consumer group member's assignment as
//! DescribeGroups shows it ([`assigned_partitions`]).

use std::fmt;

/// The version header Java writes before heartbeat and checkpoint values.
/// Java's `valueSchema(version)` only `assert`s it is 0 (assertions are off
/// in production), so a reader must not depend on it; we always write 0.
pub const VERSION: i16 = 0;

/// Why bytes could not be written or read as Java's schema types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// Java's `STRING` length is an `INT16`: it refuses more than 32767 bytes.
    StringTooLong { field: &'static str, len: usize },
    /// A string length below zero (Java: "cannot be negative").
    NegativeLength { field: &'static str, len: i16 },
    /// The buffer ended inside a field.
    Truncated { field: &'static str, needed: usize, available: usize },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::StringTooLong { field, len } => {
                write!(f, "field '{field}': a string of {len} bytes is longer than the 32767 bytes MirrorMaker 2's record format allows")
            }
            FormatError::NegativeLength { field, len } => write!(f, "field '{field}': string length {len} cannot be negative"),
            FormatError::Truncated { field, needed, available } => {
                write!(f, "field '{field}': needs {needed} bytes, only {available} left (not a MirrorMaker 2 record of this type?)")
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// Appends fields as Java's `Schema.write` does.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn i16(mut self, v: i16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    fn string(self, field: &'static str, s: &str) -> Result<Self, FormatError> {
        let len = i16::try_from(s.len()).map_err(|_| FormatError::StringTooLong { field, len: s.len() })?;
        let mut w = self.i16(len);
        w.0.extend_from_slice(s.as_bytes());
        Ok(w)
    }
}

/// Reads fields in order as Java's `Schema.read` does; trailing bytes are
/// ignored, as there.
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], FormatError> {
        if self.buf.len() < n {
            return Err(FormatError::Truncated { field, needed: n, available: self.buf.len() });
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn i16(&mut self, field: &'static str) -> Result<i16, FormatError> {
        Ok(i16::from_be_bytes(self.take(field, 2)?.try_into().expect("2 bytes")))
    }

    fn i32(&mut self, field: &'static str) -> Result<i32, FormatError> {
        Ok(i32::from_be_bytes(self.take(field, 4)?.try_into().expect("4 bytes")))
    }

    fn i64(&mut self, field: &'static str) -> Result<i64, FormatError> {
        Ok(i64::from_be_bytes(self.take(field, 8)?.try_into().expect("8 bytes")))
    }

    /// Java decodes with `new String(bytes, UTF_8)`, which replaces malformed
    /// sequences instead of failing; so do we.
    fn string(&mut self, field: &'static str) -> Result<String, FormatError> {
        let len = self.i16(field)?;
        let n = usize::try_from(len).map_err(|_| FormatError::NegativeLength { field, len })?;
        Ok(String::from_utf8_lossy(self.take(field, n)?).into_owned())
    }
}

/// One record of the `heartbeats` topic (`MC/Heartbeat.java`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    pub source_alias: String,
    pub target_alias: String,
    /// Epoch milliseconds; also the record's timestamp.
    pub timestamp: i64,
}

impl Heartbeat {
    /// `{sourceClusterAlias: STRING, targetClusterAlias: STRING}`.
    pub fn encode_key(&self) -> Result<Vec<u8>, FormatError> {
        Ok(Writer::default().string("sourceClusterAlias", &self.source_alias)?.string("targetClusterAlias", &self.target_alias)?.0)
    }

    /// `{version: INT16}` then `{timestamp: INT64}`: always 10 bytes.
    pub fn encode_value(&self) -> Vec<u8> {
        Writer::default().i16(VERSION).i64(self.timestamp).0
    }

    pub fn decode(key: &[u8], value: &[u8]) -> Result<Self, FormatError> {
        let mut v = Reader { buf: value };
        v.i16("version")?;
        let timestamp = v.i64("timestamp")?;
        let mut k = Reader { buf: key };
        Ok(Heartbeat { source_alias: k.string("sourceClusterAlias")?, target_alias: k.string("targetClusterAlias")?, timestamp })
    }
}

/// One record of `mm2-offset-syncs.<alias>.internal` (`MM/OffsetSync.java`):
/// where a source record landed on the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetSync {
    /// The source topic, not renamed.
    pub topic: String,
    pub partition: i32,
    pub upstream_offset: i64,
    pub downstream_offset: i64,
}

impl OffsetSync {
    /// `{topic: STRING, partition: INT32}`.
    pub fn encode_key(&self) -> Result<Vec<u8>, FormatError> {
        Ok(Writer::default().string("topic", &self.topic)?.i32(self.partition).0)
    }

    /// `{upstreamOffset: INT64, offset: INT64}`, with no version header: 16 bytes.
    pub fn encode_value(&self) -> Vec<u8> {
        Writer::default().i64(self.upstream_offset).i64(self.downstream_offset).0
    }

    pub fn decode(key: &[u8], value: &[u8]) -> Result<Self, FormatError> {
        let mut k = Reader { buf: key };
        let (topic, partition) = (k.string("topic")?, k.i32("partition")?);
        let mut v = Reader { buf: value };
        Ok(OffsetSync { topic, partition, upstream_offset: v.i64("upstreamOffset")?, downstream_offset: v.i64("offset")? })
    }
}

/// One record of `<source>.checkpoints.internal` (`MC/Checkpoint.java`): a
/// source group's committed offset and its translation on the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub group: String,
    /// The target-side (renamed) topic.
    pub topic: String,
    pub partition: i32,
    pub upstream_offset: i64,
    pub downstream_offset: i64,
    /// The source commit's metadata; Java turns a null into "", so "" when there is none.
    pub metadata: String,
}

impl Checkpoint {
    /// `{group: STRING, topic: STRING, partition: INT32}`.
    pub fn encode_key(&self) -> Result<Vec<u8>, FormatError> {
        Ok(Writer::default().string("group", &self.group)?.string("topic", &self.topic)?.i32(self.partition).0)
    }

    /// `{version: INT16}` then `{upstreamOffset: INT64, offset: INT64, metadata: STRING}`.
    pub fn encode_value(&self) -> Result<Vec<u8>, FormatError> {
        Ok(Writer::default().i16(VERSION).i64(self.upstream_offset).i64(self.downstream_offset).string("metadata", &self.metadata)?.0)
    }

    pub fn decode(key: &[u8], value: &[u8]) -> Result<Self, FormatError> {
        let mut k = Reader { buf: key };
        let (group, topic, partition) = (k.string("group")?, k.string("topic")?, k.i32("partition")?);
        let mut v = Reader { buf: value };
        v.i16("version")?;
        Ok(Checkpoint {
            group,
            topic,
            partition,
            upstream_offset: v.i64("upstreamOffset")?,
            downstream_offset: v.i64("offset")?,
            metadata: v.string("metadata")?,
        })
    }
}

/// The partitions of a consumer group member's assignment
/// (`ConsumerProtocolAssignment`, versions 0 to 3 alike: `{version: INT16}`,
/// then `[topic: STRING, [partition: INT32]]`, then user data, ignored).
pub fn assigned_partitions(bytes: &[u8]) -> Result<Vec<(String, i32)>, FormatError> {
    let mut r = Reader { buf: bytes };
    r.i16("version")?;
    let mut out = Vec::new();
    for _ in 0..r.i32("assigned_partitions")?.max(0) {
        let topic = r.string("topic")?;
        for _ in 0..r.i32("partitions")?.max(0) {
            out.push((topic.clone(), r.i32("partition")?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hex as the reference writes it ("00 07 70 …", `|` as a visual separator).
    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace().filter(|t| *t != "|").map(|t| u8::from_str_radix(t, 16).unwrap()).collect()
    }

    // The vectors of mm2-reference §3.5.
    #[test]
    fn heartbeat_matches_the_reference_vectors() {
        let hb = Heartbeat { source_alias: "primary".into(), target_alias: "backup".into(), timestamp: 1_700_000_000_000 };
        assert_eq!(hb.encode_key().unwrap(), hex("00 07 70 72 69 6d 61 72 79 00 06 62 61 63 6b 75 70"));
        assert_eq!(hb.encode_value(), hex("00 00 00 00 01 8b cf e5 68 00"));
        assert_eq!(Heartbeat::decode(&hb.encode_key().unwrap(), &hb.encode_value()).unwrap(), hb);
    }

    #[test]
    fn checkpoint_matches_the_reference_vectors() {
        let cp = Checkpoint {
            group: "my-group".into(),
            topic: "primary.orders".into(),
            partition: 3,
            upstream_offset: 1000,
            downstream_offset: 990,
            metadata: String::new(),
        };
        assert_eq!(cp.encode_key().unwrap(), hex("00 08 6d 79 2d 67 72 6f 75 70 00 0e 70 72 69 6d 61 72 79 2e 6f 72 64 65 72 73 00 00 00 03"));
        assert_eq!(cp.encode_value().unwrap(), hex("00 00 | 00 00 00 00 00 00 03 e8 | 00 00 00 00 00 00 03 de | 00 00"));
        assert_eq!(Checkpoint::decode(&cp.encode_key().unwrap(), &cp.encode_value().unwrap()).unwrap(), cp);
    }

    #[test]
    fn offset_sync_matches_the_reference_vectors() {
        let os = OffsetSync { topic: "orders".into(), partition: 3, upstream_offset: 1000, downstream_offset: 990 };
        assert_eq!(os.encode_key().unwrap(), hex("00 06 6f 72 64 65 72 73 00 00 00 03"));
        assert_eq!(os.encode_value(), hex("00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 de"));
        assert_eq!(os.encode_value().len(), 16);
        assert_eq!(OffsetSync::decode(&os.encode_key().unwrap(), &os.encode_value()).unwrap(), os);
    }

    #[test]
    fn checkpoint_metadata_and_non_ascii_names_round_trip() {
        let cp = Checkpoint {
            group: "grüppe".into(),
            topic: "A.tópico".into(),
            partition: i32::MAX,
            upstream_offset: i64::MAX,
            downstream_offset: -1,
            metadata: "meta|data".into(),
        };
        let (k, v) = (cp.encode_key().unwrap(), cp.encode_value().unwrap());
        // The length prefix counts UTF-8 bytes, not characters.
        assert_eq!(&k[..2], &[0, 7]);
        assert_eq!(Checkpoint::decode(&k, &v).unwrap(), cp);
    }

    #[test]
    fn strings_longer_than_an_int16_length_are_refused() {
        let hb = Heartbeat { source_alias: "x".repeat(32_768), target_alias: "b".into(), timestamp: 0 };
        assert_eq!(hb.encode_key(), Err(FormatError::StringTooLong { field: "sourceClusterAlias", len: 32_768 }));
        let ok = Heartbeat { source_alias: "x".repeat(32_767), ..hb };
        assert_eq!(ok.encode_key().unwrap().len(), 2 + 32_767 + 2 + 1);
    }

    #[test]
    fn reading_follows_javas_schema_read() {
        // A negative string length is refused, a short buffer is named by field.
        assert_eq!(OffsetSync::decode(&hex("ff ff"), &[0; 16]), Err(FormatError::NegativeLength { field: "topic", len: -1 }));
        let e = OffsetSync::decode(&hex("00 06 6f 72"), &[0; 16]).unwrap_err();
        assert_eq!(e, FormatError::Truncated { field: "topic", needed: 6, available: 2 });
        assert!(e.to_string().contains("'topic'"), "{e}");
        let e = Heartbeat::decode(&hex("00 01 61 00 01 62"), &hex("00 00 00 00")).unwrap_err();
        assert_eq!(e, FormatError::Truncated { field: "timestamp", needed: 8, available: 2 });
        // Trailing bytes are ignored, and a non-zero version is read as version 0,
        // as Java does with assertions off.
        let mut value = hex("00 05 00 00 00 00 00 00 00 2a");
        value.extend_from_slice(b"junk");
        let hb = Heartbeat::decode(&hex("00 01 61 00 01 62 ff"), &value).unwrap();
        assert_eq!(hb, Heartbeat { source_alias: "a".into(), target_alias: "b".into(), timestamp: 42 });
        // Malformed UTF-8 becomes U+FFFD, as Java's decoder does.
        let os = OffsetSync::decode(&hex("00 01 ff 00 00 00 00"), &[0; 16]).unwrap();
        assert_eq!(os.topic, "\u{FFFD}");
    }
}
