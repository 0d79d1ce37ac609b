//! The MM2 file read exactly as `java.util.Properties.load` leaves it,
//! trailing whitespace included.
//!
//! `front::properties::parse` trims values as the Java clients' ConfigDef
//! does, which is right for client files but not here: MirrorMaker 2 reads
//! a few values raw (`Boolean.parseBoolean` of `A->B.enabled`, the policy's
//! separator), so `A->B.enabled = true␠` means something else than
//! `A->B.enabled = true`. Each consumer of a value trims it when Java does.

use std::collections::HashMap;
use std::path::Path;

pub(crate) use crate::front::properties::java_trim;
use crate::front::properties::{for_reader, reader, refusal, ConfigError, PropertiesFile, Property};

/// The file's properties, last value of a repeated key kept (Java's
/// `Properties` is a map), plus a note per repeated key.
pub fn read(path: &Path, text: &[u8]) -> Result<(PropertiesFile, Vec<String>), ConfigError> {
    use java_properties::LineContent;
    let input = for_reader(text);
    let mut slots: Vec<Option<Property>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut notes = Vec::new();
    for line in reader(&input) {
        let line = line.map_err(|e| refusal(path, &e))?;
        if let LineContent::KVPair(key, value) = line.content() {
            if let Some(old) = index.insert(key.clone(), slots.len()) {
                let earlier = slots[old].take().map_or(0, |p| p.line);
                notes.push(format!(
                    "{}:{}: {key} is set again (first at line {earlier}); Java keeps the last value, so line {} wins",
                    path.display(),
                    line.line_number(),
                    line.line_number()
                ));
            }
            slots.push(Some(Property { key: key.clone(), value: value.clone(), line: line.line_number(), resolved: None }));
        }
    }
    Ok((PropertiesFile { path: path.to_path_buf(), props: slots.into_iter().flatten().collect() }, notes))
}

/// `Boolean.parseBoolean`: "true" in any case, untrimmed; anything else is false.
pub fn parse_boolean(s: &str) -> bool {
    s.eq_ignore_ascii_case("true")
}

/// ConfigDef's LIST: trimmed, split on commas with surrounding whitespace,
/// empty elements kept (`split(trimmed, -1)`); an empty value is an empty list.
pub fn parse_list(s: &str) -> Vec<String> {
    let t = java_trim(s);
    if t.is_empty() {
        return Vec::new();
    }
    t.split(',').map(|e| e.trim_matches(is_regex_space).to_string()).collect()
}

/// `\s` of a Java regex: `[ \t\n\x0B\f\r]`.
fn is_regex_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(text: &str) -> PropertiesFile {
        read(Path::new("mm2.properties"), text.as_bytes()).unwrap().0
    }

    // §1.1: separators, kept trailing whitespace, mid-line '#', continuations.
    #[test]
    fn values_are_read_as_java_reads_them() {
        let f = props("clusters: a, b\nA->B.enabled = true \nc = x   # note\n# comment\n  ! also\nlong = a,\\\n    b\nsp   v\u{0020}\n");
        let get = |k: &str| f.get(k).map(|p| p.value.as_str());
        assert_eq!(get("clusters"), Some("a, b"));
        assert_eq!(get("A->B.enabled"), Some("true "));
        assert_eq!(get("c"), Some("x   # note"));
        assert_eq!(get("long"), Some("a,b"));
        assert_eq!(get("sp"), Some("v "));
        assert_eq!(f.props.len(), 5);
        assert_eq!(f.get("long").unwrap().line, 6);
    }

    #[test]
    fn latin1_and_escapes_and_repeats() {
        let (f, notes) = read(Path::new("m"), b"k=caf\xe9\nu=\\u00e9\nk=again\n").unwrap();
        assert_eq!(f.get("u").unwrap().value, "é");
        assert_eq!(f.get("k").unwrap().value, "again");
        assert_eq!(f.get("k").unwrap().line, 3);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("m:3: k is set again (first at line 1)"), "{}", notes[0]);
    }

    #[test]
    fn config_def_parsing() {
        assert_eq!(parse_list("  a ,b,\tc  "), ["a", "b", "c"]);
        assert_eq!(parse_list("a,,b,"), ["a", "", "b", ""]);
        assert!(parse_list("   ").is_empty());
        assert!(parse_boolean("TRUE") && !parse_boolean("true ") && !parse_boolean("yes"));
        assert_eq!(java_trim(" x \t"), "x");
    }
}
