//! The bytes of the Connect offsets records: JsonConverter's JSON with
//! `schemas.enable=false`, written and read by hand (the shapes are fixed
//! and tiny), and the partition Java's producer gives a key.

use super::CONNECTOR;
use crate::plan::partitioner::java_partition;

/// A string as Jackson writes it: `"` and `\` escaped, control characters
/// as `\n`-style or `\u00XX` (upper-case hex), everything else as is.
fn push_json_string(out: &mut String, s: &str) {
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

/// The key Java's source task writes for a source partition of the flow
/// from `cluster` (its alias).
pub fn encode_key(cluster: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut s = String::with_capacity(64 + cluster.len() + topic.len());
    s.push_str("[\"");
    s.push_str(CONNECTOR);
    s.push_str("\",{\"cluster\":");
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
    fn parse(bytes: &'a [u8]) -> Result<Json, String> {
        let mut r = Reader { b: bytes, at: 0 };
        let v = r.value(0)?;
        r.ws();
        if r.at != r.b.len() {
            return Err(format!("trailing bytes at {}", r.at));
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

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.at))
        }
    }

    fn literal(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.b[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(v)
        } else {
            Err(format!("unexpected byte at {}", self.at))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deep".into());
        }
        match self.peek() {
            None => Err("unexpected end".into()),
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
                        _ => return Err(format!("expected ',' or ']' at {}", self.at)),
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
                        return Err(format!("expected a field name at {}", self.at));
                    }
                    let name = self.string()?;
                    self.expect(b':')?;
                    fields.push((name, self.value(depth + 1)?));
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Object(fields));
                        }
                        _ => return Err(format!("expected ',' or '}}' at {}", self.at)),
                    }
                }
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => self.integer(),
            Some(_) => Err(format!("unexpected byte at {}", self.at)),
        }
    }

    fn integer(&mut self) -> Result<Json, String> {
        let start = self.at;
        if self.b[self.at] == b'-' {
            self.at += 1;
        }
        let digits = self.at;
        while self.at < self.b.len() && self.b[self.at].is_ascii_digit() {
            self.at += 1;
        }
        if self.at == digits || matches!(self.b.get(self.at), Some(b'.' | b'e' | b'E')) {
            return Err(format!("not an integer at {start}"));
        }
        let text = std::str::from_utf8(&self.b[start..self.at]).map_err(|e| e.to_string())?;
        text.parse::<i64>().map(Json::Int).map_err(|_| format!("integer {text} out of range"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.b.get(self.at..self.at + 4).ok_or("short \\u escape")?;
        let text = std::str::from_utf8(h).map_err(|_| "bad \\u escape")?;
        let v = u32::from_str_radix(text, 16).map_err(|_| format!("bad \\u escape at {}", self.at))?;
        self.at += 4;
        Ok(v)
    }

    /// A string at the current position (its opening quote included).
    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.at) else { return Err("unterminated string".into()) };
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|_| "a string is not UTF-8".to_string()),
                b'\\' => {
                    let Some(&e) = self.b.get(self.at) else { return Err("unterminated escape".into()) };
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
                                    return Err("lone surrogate".into());
                                }
                                self.at += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err("lone surrogate".into());
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            char::from_u32(code).ok_or("lone surrogate")?
                        }
                        _ => return Err(format!("bad escape at {}", self.at - 1)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err("control character in a string".into()),
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

pub(super) fn decode_key(bytes: &[u8]) -> Result<Key, String> {
    let Json::Array(items) = Reader::parse(bytes)? else { return Err("the key is not a JSON array".into()) };
    let [Json::Str(connector), Json::Object(fields)] = &items[..] else { return Err("the key is not [name, {partition}]".into()) };
    if connector != CONNECTOR {
        return Ok(Key::Other);
    }
    let (mut cluster, mut topic, mut partition) = (None, None, None);
    for (name, v) in fields {
        match (name.as_str(), v) {
            ("cluster", Json::Str(s)) if cluster.is_none() => cluster = Some(s.clone()),
            ("topic", Json::Str(s)) if topic.is_none() => topic = Some(s.clone()),
            ("partition", Json::Int(p)) if partition.is_none() => partition = Some(i32::try_from(*p).map_err(|_| format!("partition {p} out of range"))?),
            // A key with other fields is another Connect partition: Java
            // would never read it for this source partition.
            _ => return Ok(Key::Other),
        }
    }
    match (cluster, topic, partition) {
        (Some(cluster), Some(topic), Some(partition)) if partition >= 0 => Ok(Key::Source { cluster, topic, partition }),
        _ => Err("a MirrorSourceConnector key without cluster, topic and partition".into()),
    }
}

pub(super) fn decode_value(bytes: &[u8]) -> Result<i64, String> {
    match Reader::parse(bytes)? {
        Json::Object(fields) => match &fields[..] {
            [(name, Json::Int(o))] if name == "offset" => Ok(*o),
            _ => Err("the value is not {\"offset\":N}".into()),
        },
        _ => Err("the value is not a JSON object".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_writers_spacing_and_field_order_read_the_same() {
        let key = br#" [ "MirrorSourceConnector" , { "topic" : "a\u0062c" , "partition" : 3 , "cluster" : "Asrc" } ] "#;
        assert_eq!(decode_key(key).unwrap(), Key::Source { cluster: "Asrc".into(), topic: "abc".into(), partition: 3 });
        assert_eq!(decode_value(b"{ \"offset\" : -1 }").unwrap(), -1);
    }

    #[test]
    fn strings_are_escaped_as_jackson_escapes_them() {
        let key = encode_key("a\"b\\c\u{1}é", "t", 0);
        assert_eq!(
            String::from_utf8(key.clone()).unwrap(),
            "[\"MirrorSourceConnector\",{\"cluster\":\"a\\\"b\\\\c\\u0001é\",\"partition\":0,\"topic\":\"t\"}]"
        );
        assert_eq!(decode_key(&key).unwrap(), Key::Source { cluster: "a\"b\\c\u{1}é".into(), topic: "t".into(), partition: 0 });
        let emoji = br#"["MirrorSourceConnector",{"cluster":"\ud83d\ude00","partition":0,"topic":"t"}]"#;
        assert_eq!(decode_key(emoji).unwrap(), Key::Source { cluster: "\u{1F600}".into(), topic: "t".into(), partition: 0 });
    }
}
