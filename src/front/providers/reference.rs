//! The text side of config providers: where a value holds references
//! (`ConfigTransformer`'s pattern), and the properties files that
//! `FileConfigProvider` reads (UTF-8, unlike the Latin-1 files Java's
//! MirrorMaker loads).

use std::ops::Range;
use std::path::Path;

use crate::front::properties::{for_reader, reader, refusal, ConfigError};

/// One `${provider:[path:]key}` in a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Where it is in the value, `${` to `}` included.
    pub span: Range<usize>,
    pub provider: String,
    pub path: Option<String>,
    pub key: String,
}

/// The references in `value`, as Java's `ConfigTransformer` finds them
/// with `\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`: from a `${` to the next `}`,
/// provider up to the first `:`, then the path up to the next `:` if
/// there is one, and the rest the key (which may hold `:`). A `${` with no
/// `:` before its `}` is no reference (Java leaves it as text, so do we).
pub(super) fn references(value: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = value[from..].find("${").map(|i| i + from) {
        let Some(end) = value[i + 2..].find('}').map(|e| e + i + 2) else { break };
        let inner = &value[i + 2..end];
        match inner.split_once(':') {
            Some((provider, rest)) => {
                let (path, key) = match rest.split_once(':') {
                    Some((path, key)) => (Some(path.to_string()), key.to_string()),
                    None => (None, rest.to_string()),
                };
                out.push(Reference { span: i..end + 1, provider: provider.to_string(), path, key });
                from = end + 1;
            }
            // The regex then tries the next `$`, which may start inside this one.
            None => from = i + 1,
        }
    }
    out
}

/// A properties file read as `FileConfigProvider` reads it: UTF-8 text
/// through `Properties.load(Reader)`, values untrimmed at the end (the
/// client trims the resolved value where its ConfigDef does). Each key once,
/// the last value winning.
pub(super) fn properties_utf8(path: &Path, bytes: &[u8]) -> Result<Vec<(String, String)>, ConfigError> {
    use java_properties::LineContent;
    let text = std::str::from_utf8(bytes).map_err(|e| ConfigError::in_file(path, format!("not UTF-8 text ({e}), which Java's FileConfigProvider reads")))?;
    let input = for_reader(&utf8_as_escapes(text));
    let mut out: Vec<(String, String)> = Vec::new();
    for line in reader(&input) {
        let line = line.map_err(|e| refusal(path, &e))?;
        if let LineContent::KVPair(key, value) = line.content() {
            out.retain(|(k, _)| k != key);
            out.push((key.clone(), value.clone()));
        }
    }
    Ok(out)
}

/// UTF-8 text as ASCII for the properties reader: each other character as
/// its `\uXXXX` escapes (two for one beyond U+FFFF, joined again by
/// `for_reader`). A backslash escaping such a character is dropped, as
/// Java reads `\é` as `é`.
fn utf8_as_escapes(text: &str) -> Vec<u8> {
    let mut out = String::with_capacity(text.len());
    let mut backslashes = 0usize;
    for c in text.chars() {
        if c.is_ascii() {
            backslashes = if c == '\\' { backslashes + 1 } else { 0 };
            out.push(c);
            continue;
        }
        if backslashes % 2 == 1 {
            out.pop();
        }
        backslashes = 0;
        for unit in c.encode_utf16(&mut [0; 2]) {
            out.push_str(&format!("\\u{unit:04X}"));
        }
    }
    out.into_bytes()
}
