//! The bytes of the Connect offsets records: JsonConverter's JSON with
//! `schemas.enable=false`, written and read by hand (the shapes are fixed
//! and tiny), and the partition Java's producer gives a key.

use std::fmt;

use crate::plan::partitioner::java_partition;

/// MM2 mode's source connector name, the first element of its keys.
pub use crate::plan::MM2_SOURCE_CONNECTOR as CONNECTOR;

/// Why a key or value of the offsets topic is not what JsonConverter
/// writes; `at` is a byte position. Such a record is skipped, and the
/// first one described (`JavaPositions::first_malformed`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum JsonError {
    Trailing {
        at: usize,
    },
    /// `what` is e.g. `':'`, `',' or ']'`, `a field name`.
    Expected {
        what: &'static str,
        at: usize,
    },
    UnexpectedByte {
        at: usize,
    },
    UnexpectedEnd,
    TooDeep,
    NotAnInteger {
        at: usize,
    },
    IntegerOutOfRange {
        text: String,
    },
    ShortEscape,
    BadEscape {
        at: usize,
    },
    BadUnicodeEscape {
        at: Option<usize>,
    },
    LoneSurrogate,
    Unterminated {
        what: &'static str,
    },
    ControlCharacter,
    NotUtf8,
    /// The JSON is well formed but not the shape of a key or value:
    /// what it is not.
    Shape(&'static str),
    PartitionOutOfRange(i64),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Trailing { at } => write!(f, "trailing bytes at {at}"),
            JsonError::Expected { what, at } => write!(f, "expected {what} at {at}"),
            JsonError::UnexpectedByte { at } => write!(f, "unexpected byte at {at}"),
            JsonError::UnexpectedEnd => f.write_str("unexpected end"),
            JsonError::TooDeep => f.write_str("nested too deep"),
            JsonError::NotAnInteger { at } => write!(f, "not an integer at {at}"),
            JsonError::IntegerOutOfRange { text } => write!(f, "integer {text} out of range"),
            JsonError::ShortEscape => f.write_str("short \\u escape"),
            JsonError::BadEscape { at } => write!(f, "bad escape at {at}"),
            JsonError::BadUnicodeEscape { at: Some(at) } => write!(f, "bad \\u escape at {at}"),
            JsonError::BadUnicodeEscape { at: None } => f.write_str("bad \\u escape"),
            JsonError::LoneSurrogate => f.write_str("lone surrogate"),
            JsonError::Unterminated { what } => write!(f, "unterminated {what}"),
            JsonError::ControlCharacter => f.write_str("control character in a string"),
            JsonError::NotUtf8 => f.write_str("a string is not UTF-8"),
            JsonError::Shape(what) => f.write_str(what),
            JsonError::PartitionOutOfRange(p) => write!(f, "partition {p} out of range"),
        }
    }
}

/// A string as Jackson writes it: `"` and `\` escaped, control characters
/// as `\n`-style or `\u00XX` (upper-case hex), everything else as is.
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The key Java's source task of connector `connector` writes for a
/// source partition of the flow from `cluster` (its alias).
pub fn encode_key(connector: &str, cluster: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut s = String::with_capacity(64 + connector.len() + cluster.len() + topic.len());
    s.push('[');
    push_json_string(&mut s, connector);
    s.push_str(",{\"cluster\":");
    push_json_string(&mut s, cluster);
    s.push_str(",\"partition\":");
    s.push_str(&partition.to_string());
    s.push_str(",\"topic\":");
    push_json_string(&mut s, topic);
    s.push_str("}]");
    s.into_bytes()
}

/// The value for `offset`, the last replicated offset.
pub fn encode_value(offset: i64) -> Vec<u8> {
    format!("{{\"offset\":{offset}}}").into_bytes()
}

/// The partition of the offsets topic a key goes to, as Java's producer
/// places it.
pub fn partition_of(key: &[u8], partitions: i32) -> i32 {
    java_partition(key, partitions.max(1))
}

/// The JSON values these records hold.
#[derive(Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Deeper than any record of the offsets topic: garbage is refused
/// before it can exhaust the stack.
const MAX_DEPTH: usize = 8;

/// A tiny JSON reader: whitespace anywhere, integers only (offsets and
/// partitions; a fraction or exponent is refused), strings with every
/// escape including surrogate pairs.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Json, JsonError> {
        let mut r = Reader { b: bytes, at: 0 };
        let v = r.value(0)?;
        r.ws();
        if r.at != r.b.len() {
            return Err(JsonError::Trailing { at: r.at });
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while self.at < self.b.len() && matches!(self.b[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.at).copied()
    }

    /// Byte `c`, which `what` names for the error.
    fn expect(&mut self, c: u8, what: &'static str) -> Result<(), JsonError> {
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(JsonError::Expected { what, at: self.at })
        }
    }

    fn literal(&mut self, word: &str, v: Json) -> Result<Json, JsonError> {
        if self.b[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(v)
        } else {
            Err(JsonError::UnexpectedByte { at: self.at })
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        match self.peek() {
            None => Err(JsonError::UnexpectedEnd),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(JsonError::Expected { what: "',' or ']'", at: self.at }),
                    }
                }
            }
            Some(b'{') => {
                self.at += 1;
                let mut fields = Vec::new();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(Json::Object(fields));
                }
                loop {
                    if self.peek() != Some(b'"') {
                        return Err(JsonError::Expected { what: "a field name", at: self.at });
                    }
                    let name = self.string()?;
                    self.expect(b':', "':'")?;
                    fields.push((name, self.value(depth + 1)?));
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Object(fields));
                        }
                        _ => return Err(JsonError::Expected { what: "',' or '}'", at: self.at }),
                    }
                }
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => self.integer(),
            Some(_) => Err(JsonError::UnexpectedByte { at: self.at }),
        }
    }

    fn integer(&mut self) -> Result<Json, JsonError> {
        let start = self.at;
        if self.b[self.at] == b'-' {
            self.at += 1;
        }
        let digits = self.at;
        while self.at < self.b.len() && self.b[self.at].is_ascii_digit() {
            self.at += 1;
        }
        if self.at == digits || matches!(self.b.get(self.at), Some(b'.' | b'e' | b'E')) {
            return Err(JsonError::NotAnInteger { at: start });
        }
        // ASCII digits and a sign, checked above.
        let text = std::str::from_utf8(&self.b[start..self.at]).map_err(|_| JsonError::NotAnInteger { at: start })?;
        text.parse::<i64>().map(Json::Int).map_err(|_| JsonError::IntegerOutOfRange { text: text.to_string() })
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let h = self.b.get(self.at..self.at + 4).ok_or(JsonError::ShortEscape)?;
        let text = std::str::from_utf8(h).map_err(|_| JsonError::BadUnicodeEscape { at: None })?;
        let v = u32::from_str_radix(text, 16).map_err(|_| JsonError::BadUnicodeEscape { at: Some(self.at) })?;
        self.at += 4;
        Ok(v)
    }

    /// A string at the current position (its opening quote included).
    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.at) else { return Err(JsonError::Unterminated { what: "string" }) };
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|_| JsonError::NotUtf8),
                b'\\' => {
                    let Some(&e) = self.b.get(self.at) else { return Err(JsonError::Unterminated { what: "escape" }) };
                    self.at += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if self.b.get(self.at..self.at + 2) != Some(b"\\u") {
                                    return Err(JsonError::LoneSurrogate);
                                }
                                self.at += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(JsonError::LoneSurrogate);
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            char::from_u32(code).ok_or(JsonError::LoneSurrogate)?
                        }
                        _ => return Err(JsonError::BadEscape { at: self.at - 1 }),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err(JsonError::ControlCharacter),
                c => out.push(c),
            }
        }
    }
}

/// What a key of the offsets topic is.
#[derive(Debug, PartialEq)]
pub(super) enum Key {
    /// A source position of a flow from `cluster`.
    Source { cluster: String, topic: String, partition: i32 },
    /// Another connector's key (checkpoint, heartbeat) or another shape.
    Other,
}

/// A key of the offsets topic; a source position of a connector other
/// than `connector` is [`Key::Other`].
pub(super) fn decode_key(bytes: &[u8], connector: &str) -> Result<Key, JsonError> {
    let Json::Array(items) = Reader::parse(bytes)? else { return Err(JsonError::Shape("the key is not a JSON array")) };
    let [Json::Str(name), Json::Object(fields)] = &items[..] else { return Err(JsonError::Shape("the key is not [name, {partition}]")) };
    if name != connector {
        return Ok(Key::Other);
    }
    let (mut cluster, mut topic, mut partition) = (None, None, None);
    for (name, v) in fields {
        match (name.as_str(), v) {
            ("cluster", Json::Str(s)) if cluster.is_none() => cluster = Some(s.clone()),
            ("topic", Json::Str(s)) if topic.is_none() => topic = Some(s.clone()),
            ("partition", Json::Int(p)) if partition.is_none() => partition = Some(i32::try_from(*p).map_err(|_| JsonError::PartitionOutOfRange(*p))?),
            // A key with other fields is another Connect partition: Java
            // would never read it for this source partition.
            _ => return Ok(Key::Other),
        }
    }
    match (cluster, topic, partition) {
        (Some(cluster), Some(topic), Some(partition)) if partition >= 0 => Ok(Key::Source { cluster, topic, partition }),
        _ => Err(JsonError::Shape("a source connector's key without cluster, topic and partition")),
    }
}

pub(super) fn decode_value(bytes: &[u8]) -> Result<i64, JsonError> {
    match Reader::parse(bytes)? {
        Json::Object(fields) => match &fields[..] {
            [(name, Json::Int(o))] if name == "offset" => Ok(*o),
            _ => Err(JsonError::Shape("the value is not {\"offset\":N}")),
        },
        _ => Err(JsonError::Shape("the value is not a JSON object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_writers_spacing_and_field_order_read_the_same() {
        let key = br#" [ "MirrorSourceConnector" , { "topic" : "a\u0062c" , "partition" : 3 , "cluster" : "Asrc" } ] "#;
        assert_eq!(decode_key(key, CONNECTOR).unwrap(), Key::Source { cluster: "Asrc".into(), topic: "abc".into(), partition: 3 });
        assert_eq!(decode_value(b"{ \"offset\" : -1 }").unwrap(), -1);
    }

    #[test]
    fn malformed_records_are_described_as_before_they_were_typed() {
        assert_eq!(decode_value(b"{\"offset\":1.5}").unwrap_err().to_string(), "not an integer at 10");
        assert_eq!(decode_value(b"{\"offset\" 1}").unwrap_err().to_string(), "expected ':' at 10");
        assert_eq!(decode_value(b"[1 2]").unwrap_err().to_string(), "expected ',' or ']' at 3");
        assert_eq!(decode_value(b"{\"offset\":1}x").unwrap_err().to_string(), "trailing bytes at 12");
        assert_eq!(decode_value(b"[]").unwrap_err().to_string(), "the value is not a JSON object");
        assert_eq!(decode_key(b"[\"MirrorSourceConnector\"]", CONNECTOR).unwrap_err().to_string(), "the key is not [name, {partition}]");
        assert_eq!(decode_key(b"\"a\\x\"", CONNECTOR).unwrap_err().to_string(), "bad escape at 3");
        assert_eq!(decode_key(b"\"\\u12zz\"", CONNECTOR).unwrap_err().to_string(), "bad \\u escape at 3");
        assert_eq!(decode_key(b"\"abc", CONNECTOR).unwrap_err().to_string(), "unterminated string");
        assert_eq!(decode_value(b"99999999999999999999").unwrap_err().to_string(), "integer 99999999999999999999 out of range");
    }

    #[test]
    fn strings_are_escaped_as_jackson_escapes_them() {
        let key = encode_key(CONNECTOR, "a\"b\\c\u{1}é", "t", 0);
        assert_eq!(
            String::from_utf8(key.clone()).unwrap(),
            "[\"MirrorSourceConnector\",{\"cluster\":\"a\\\"b\\\\c\\u0001é\",\"partition\":0,\"topic\":\"t\"}]"
        );
        assert_eq!(decode_key(&key, CONNECTOR).unwrap(), Key::Source { cluster: "a\"b\\c\u{1}é".into(), topic: "t".into(), partition: 0 });
        let emoji = br#"["MirrorSourceConnector",{"cluster":"\ud83d\ude00","partition":0,"topic":"t"}]"#;
        assert_eq!(decode_key(emoji, CONNECTOR).unwrap(), Key::Source { cluster: "\u{1F600}".into(), topic: "t".into(), partition: 0 });
    }

    /// A Connect worker's connector keeps its positions under its own name,
    /// as Java Connect does: `["<connector name>",{..}]`.
    #[test]
    fn a_connect_workers_connector_keys_its_positions_by_its_name() {
        let key = encode_key("mm2-source-connector", "A", "foo", 0);
        assert_eq!(key, br#"["mm2-source-connector",{"cluster":"A","partition":0,"topic":"foo"}]"#.to_vec());
        assert_eq!(decode_key(&key, "mm2-source-connector").unwrap(), Key::Source { cluster: "A".into(), topic: "foo".into(), partition: 0 });
        assert_eq!(decode_key(&key, CONNECTOR).unwrap(), Key::Other, "not MM2 mode's positions");
        let mm2 = encode_key(CONNECTOR, "A", "foo", 0);
        assert_eq!(decode_key(&mm2, "mm2-source-connector").unwrap(), Key::Other, "not this connector's positions");
        // A name with characters JSON escapes is escaped as Jackson escapes it.
        assert_eq!(encode_key("a\"b", "A", "t", 1), br#"["a\"b",{"cluster":"A","partition":1,"topic":"t"}]"#.to_vec());
    }
}
