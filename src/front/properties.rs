//! Properties files read as Java's `Properties.load` reads them: the one
//! reader every front-end uses (MM1 client files, MM2 files). A leaf: it
//! knows nothing of what the keys mean.

use std::fmt;
use std::path::{Path, PathBuf};

/// One `key=value` line of a properties file.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// A loaded properties file; a repeated key keeps its last value, as in Java.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertiesFile {
    pub path: PathBuf,
    pub props: Vec<Property>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

pub fn load(path: &Path) -> Result<PropertiesFile, ConfigError> {
    let text = std::fs::read(path).map_err(|e| ConfigError(format!("cannot read properties file {}: {e}", path.display())))?;
    parse(path, &text)
}

/// Reads a properties file as Java's `Properties.load(InputStream)` does:
/// ISO-8859-1, each byte the character of the same number (MirrorMaker
/// loads its files that way), with `\uXXXX` escapes for anything else.
/// Values are trimmed as Java's `String.trim()` trims (characters up to
/// U+0020), as the clients' ConfigDef does; a repeated key keeps its last
/// value and line.
pub fn parse(path: &Path, text: &[u8]) -> Result<PropertiesFile, ConfigError> {
    use java_properties::{LineContent, PropertiesIter};
    let ascii = latin1_as_escapes(text);
    // Each key's place in `slots`; a repeat empties the earlier slot, so the
    // file keeps Java's last-wins in one pass.
    let mut slots: Vec<Option<Property>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in PropertiesIter::new(ascii.as_slice()) {
        let line = line.map_err(|e| ConfigError(format!("{}: not a valid properties file: {e}", path.display())))?;
        if let LineContent::KVPair(key, value) = line.content() {
            let key = java_trim(key).to_string();
            let value = java_trim(value).to_string();
            if let Some(old) = index.insert(key.clone(), slots.len()) {
                slots[old] = None;
            }
            slots.push(Some(Property { key, value, line: line.line_number() }));
        }
    }
    Ok(PropertiesFile { path: path.to_path_buf(), props: slots.into_iter().flatten().collect() })
}

/// Java's `String.trim()`: only characters up to U+0020 count as space.
pub(crate) fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// The file's bytes as ASCII for the properties reader, which decodes
/// Windows-1252 (0x80 would become U+20AC): every byte from 0x80 up is
/// written as the `\u00XX` escape of the same character. A byte escaped by a
/// backslash (`\é`, which Java reads as `é`) loses that backslash, since an
/// escape cannot be escaped again. Line breaks are untouched, so line
/// numbers stay right.
pub(crate) fn latin1_as_escapes(text: &[u8]) -> Vec<u8> {
    if text.is_ascii() {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len() + text.len() / 4);
    let mut backslashes = 0usize;
    for &b in text {
        if b < 0x80 {
            backslashes = if b == b'\\' { backslashes + 1 } else { 0 };
            out.push(b);
            continue;
        }
        if backslashes % 2 == 1 {
            out.pop();
        }
        backslashes = 0;
        out.extend_from_slice(format!("\\u{b:04X}").as_bytes());
    }
    out
}

impl PropertiesFile {
    pub fn get(&self, key: &str) -> Option<&Property> {
        self.props.iter().find(|p| p.key == key)
    }

    /// `file:line` of one of its properties, for messages.
    pub fn at(&self, p: &Property) -> String {
        match p.line {
            // A front-end's own addition (MirrorMaker 2's defaults), on no line of the file.
            0 => format!("{} (not in the file: set as MirrorMaker 2 sets it)", self.path.display()),
            line => format!("{}:{line}", self.path.display()),
        }
    }
}
