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
    /// The config-provider references (`${file:/p:k}`, …) this value was
    /// resolved from, as written; `None` for a value taken as written. A
    /// resolved value is a secret: messages name the key and these
    /// references, never the value (see `front::providers`).
    pub resolved: Option<String>,
}

/// A loaded properties file; a repeated key keeps its last value, as in Java.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertiesFile {
    pub path: PathBuf,
    pub props: Vec<Property>,
}

/// A configuration the mirror refuses to start with: where it is (file,
/// line), which key, what is wrong and what to write instead. Displayed as
/// `file:line: problem; fix`, the text users and tests read; a problem that
/// is at no one place (the command line, two keys at once) names its places
/// itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// The file at fault, when one is.
    pub file: Option<PathBuf>,
    /// The line at fault, when one is; 0 for a value MirrorMaker 2 sets
    /// itself, on no line of the file.
    pub line: Option<usize>,
    /// The key at fault, when one is (the text names it as the user wrote it).
    pub key: Option<String>,
    /// What is wrong, with the key and value as written.
    pub problem: String,
    /// What to do instead, when the message says so after a `; `.
    pub fix: Option<String>,
}

impl ConfigError {
    /// A problem at no one place in a file; its text says where.
    pub fn new(problem: impl Into<String>) -> Self {
        ConfigError { file: None, line: None, key: None, problem: problem.into(), fix: None }
    }

    /// A problem of a whole file (a key it lacks, a file it cannot read).
    pub fn in_file(path: &Path, problem: impl Into<String>) -> Self {
        ConfigError { file: Some(path.to_path_buf()), ..ConfigError::new(problem) }
    }

    /// A problem of one line of a file; the key is the line's.
    /// A value a config provider gave is named by its reference, never shown.
    pub fn at(file: &PropertiesFile, p: &Property, problem: impl Into<String>) -> Self {
        let problem = match &p.resolved {
            Some(refs) => format!("{} (the value of {} comes from {refs})", problem.into(), p.key),
            None => problem.into(),
        };
        ConfigError { file: Some(file.path.clone()), line: Some(p.line), key: Some(p.key.clone()), ..ConfigError::new(problem) }
    }

    /// A problem of line `line` of `path` (a line no [`Property`] holds).
    pub fn at_line(path: &Path, line: usize, problem: impl Into<String>) -> Self {
        ConfigError { file: Some(path.to_path_buf()), line: Some(line), ..ConfigError::new(problem) }
    }

    /// The key at fault, when the place does not say it.
    pub fn with_key(self, key: impl Into<String>) -> Self {
        ConfigError { key: Some(key.into()), ..self }
    }

    /// What to write instead, shown after the problem and `; `.
    pub fn with_fix(self, fix: impl Into<String>) -> Self {
        ConfigError { fix: Some(fix.into()), ..self }
    }
}

/// `file:line` as messages show it; line 0 is a front-end's own addition
/// (MirrorMaker 2's defaults), on no line of the file.
fn place(path: &Path, line: Option<usize>) -> String {
    match line {
        None => path.display().to_string(),
        Some(0) => format!("{} (not in the file: set as MirrorMaker 2 sets it)", path.display()),
        Some(line) => format!("{}:{line}", path.display()),
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.file {
            write!(f, "{}: ", place(path, self.line))?;
        }
        f.write_str(&self.problem)?;
        match &self.fix {
            Some(fix) => write!(f, "; {fix}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ConfigError {}

pub fn load(path: &Path) -> Result<PropertiesFile, ConfigError> {
    // The path leads the sentence here, so it is no `file: ` place.
    let text = std::fs::read(path).map_err(|e| ConfigError::new(format!("cannot read properties file {}: {e}", path.display())))?;
    parse(path, &text)
}

/// Reads a properties file as Java's `Properties.load(InputStream)` does:
/// ISO-8859-1, each byte the character of the same number (MirrorMaker
/// loads its files that way), with `\uXXXX` escapes for anything else.
/// Values are trimmed as Java's `String.trim()` trims (characters up to
/// U+0020), as the clients' ConfigDef does; a repeated key keeps its last
/// value and line.
pub fn parse(path: &Path, text: &[u8]) -> Result<PropertiesFile, ConfigError> {
    use java_properties::LineContent;
    let input = for_reader(text);
    // Each key's place in `slots`; a repeat empties the earlier slot, so the
    // file keeps Java's last-wins in one pass.
    let mut slots: Vec<Option<Property>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in reader(&input) {
        let line = line.map_err(|e| refusal(path, &e))?;
        if let LineContent::KVPair(key, value) = line.content() {
            let key = java_trim(key).to_string();
            let value = java_trim(value).to_string();
            if let Some(old) = index.insert(key.clone(), slots.len()) {
                slots[old] = None;
            }
            slots.push(Some(Property { key, value, line: line.line_number(), resolved: None }));
        }
    }
    Ok(PropertiesFile { path: path.to_path_buf(), props: slots.into_iter().flatten().collect() })
}

/// The file's bytes as the properties reader must get them: Latin-1
/// bytes as escapes ([`latin1_as_escapes`]) and each escaped UTF-16
/// surrogate pair as its character ([`join_surrogate_pairs`]), comments
/// emptied ([`comments_emptied`]).
pub(crate) fn for_reader(text: &[u8]) -> Vec<u8> {
    join_surrogate_pairs(&comments_emptied(&latin1_as_escapes(text)))
}

/// Java skips a comment line unread, but the Rust reader unescapes it
/// and refuses a bad escape there (`# see \uD83D`, `# C:\users`): every
/// comment keeps only its `#` or `!`. A comment is a line that does not
/// continue the one before (which ends in an odd number of backslashes)
/// and starts, after spaces, tabs and form feeds, with `#` or `!`; its
/// own last backslash continues nothing, as in Java. Line breaks stay, so
/// line numbers do.
fn comments_emptied(ascii: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ascii.len());
    let mut continued = false;
    let mut rest = ascii;
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == b'\n' || b == b'\r').unwrap_or(rest.len());
        let brk = match &rest[end..] {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        let (body, line) = (&rest[..end], &rest[..end + brk]);
        rest = &rest[end + brk..];
        let lead = body.iter().take_while(|&&b| b == b' ' || b == b'\t' || b == b'\x0c').count();
        if !continued && matches!(body.get(lead), Some(b'#' | b'!')) {
            out.extend_from_slice(&body[..=lead]);
            out.extend_from_slice(&line[end..]);
            continue;
        }
        out.extend_from_slice(line);
        continued = body.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
    }
    out
}

/// The properties reader over [`for_reader`]'s bytes. UTF-8, since a
/// joined pair is written as its UTF-8 bytes; everything else there is
/// ASCII, which reads the same in any of the encodings.
pub(crate) fn reader(input: &[u8]) -> java_properties::PropertiesIter<&[u8]> {
    java_properties::PropertiesIter::new_with_encoding(input, encoding_rs::UTF_8)
}

/// A reader's error as a message naming file:line. The only `\uXXXX`
/// that is no character, once pairs are joined, is a lone surrogate.
pub(crate) fn refusal(path: &Path, e: &java_properties::PropertiesError) -> ConfigError {
    let at = |problem: String| ConfigError { file: Some(path.to_path_buf()), line: e.line_number(), ..ConfigError::new(problem) };
    if e.to_string().contains("invalid character") {
        return at("a \\uXXXX escape of half a UTF-16 surrogate pair (D800-DFFF) without its other half next to it. Java would keep a broken \
             character there; write the whole pair, high half then low half with nothing between (e.g. \\uD83D\\uDE00 for U+1F600), on one line"
            .to_string());
    }
    at(format!("not a valid properties file: {e}"))
}

/// Java's `loadConvert` makes one UTF-16 unit of each `\uXXXX`, so the
/// two escapes of a surrogate pair (`\uD83D\uDE00`) become one character
/// beyond U+FFFF; the Rust reader refuses each half alone. Each such pair
/// is written here as its character's UTF-8 bytes. `ascii` is what
/// [`latin1_as_escapes`] gives. Walking escapes two bytes at a time keeps
/// `\\uD83D` (an escaped backslash, then text) out. A lone half is left
/// as it is: in a comment, which Java never unescapes, it is harmless; in
/// a key or value the reader refuses it (see [`refusal`]).
fn join_surrogate_pairs(ascii: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ascii.len());
    let mut i = 0;
    while i < ascii.len() {
        if ascii[i] != b'\\' {
            out.push(ascii[i]);
            i += 1;
            continue;
        }
        let high = unit_at(ascii, i).filter(|u| (0xD800..0xDC00).contains(u));
        let low = unit_at(ascii, i + 6).filter(|u| (0xDC00..0xE000).contains(u));
        if let (Some(high), Some(low)) = (high, low) {
            let c = char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).expect("a surrogate pair makes a character");
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            i += 12;
            continue;
        }
        // Any other escape is copied whole, so its second byte never starts one.
        out.extend_from_slice(&ascii[i..(i + 2).min(ascii.len())]);
        i += 2;
    }
    out
}

/// The UTF-16 unit of a `\uXXXX` escape starting at `at`, if one does.
fn unit_at(ascii: &[u8], at: usize) -> Option<u32> {
    let e = ascii.get(at..at + 6)?;
    if e[0] != b'\\' || e[1] != b'u' {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(&e[2..]).ok()?, 16).ok()
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
        place(&self.path, Some(p.line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Result<String, ConfigError> {
        let file = parse(Path::new("t.properties"), text.as_bytes())?;
        Ok(file.get("k").expect("k is read").value.clone())
    }

    #[test]
    fn a_config_error_shows_its_place_problem_and_fix() {
        let file = parse(Path::new("c.properties"), b"a=1\nk=v\n").unwrap();
        let p = file.get("k").unwrap();
        let e = ConfigError::at(&file, p, "k='v' is wrong").with_fix("write w");
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("k")));
        assert_eq!(e.to_string(), "c.properties:2: k='v' is wrong; write w");
        let default = Property { key: "k".into(), value: "v".into(), line: 0, resolved: None };
        assert_eq!(ConfigError::at(&file, &default, "bad").to_string(), "c.properties (not in the file: set as MirrorMaker 2 sets it): bad");
        assert_eq!(ConfigError::in_file(Path::new("c.properties"), "group.id is missing").to_string(), "c.properties: group.id is missing");
        assert_eq!(ConfigError::new("--x: bad").with_key("--x").to_string(), "--x: bad");
    }

    #[test]
    fn a_surrogate_pair_escape_is_the_character_java_reads() {
        assert_eq!(value("k=a\\uD83D\\uDE00b\n").unwrap(), "a\u{1F600}b");
        assert_eq!(value("k=\\ud83d\\ude00\n").unwrap(), "\u{1F600}", "hex digits in either case, as Java");
        // In a key too, and beside a Latin-1 byte read as its own character.
        let file = parse(Path::new("t.properties"), b"x\\uD83D\\uDE00y=\xe9\\uD83D\\uDE00\n").unwrap();
        assert_eq!(file.get("x\u{1F600}y").unwrap().value, "\u{e9}\u{1F600}");
        // An escaped backslash before `u` is no escape: the text stays as written.
        let e = value("k=\\\\uD83D\\uDE00\n").unwrap_err().to_string();
        assert!(e.contains("t.properties:1"), "the second half is then lone: {e}");
    }

    #[test]
    fn a_lone_surrogate_is_refused_with_its_file_line_and_what_to_do() {
        for text in ["a=1\nk=x\\uD83D\n", "a=1\nk=\\uDE00x\n", "a=1\nk=\\uD83D\\u0041\n", "a=1\nk=\\uD83D\\uD83D\\uDE00\n"] {
            let e = value(text).unwrap_err().to_string();
            assert!(e.contains("t.properties:2") && e.contains("surrogate") && e.contains("\\uD83D\\uDE00"), "{text:?}: {e}");
        }
        // A comment is never unescaped by Java: a lone surrogate or any bad escape there is no error.
        assert_eq!(value("# \\uD83D alone\n  ! C:\\users \\\nk=v\n").unwrap(), "v");
        // A line continuing a value is no comment, even when it starts with `#`.
        assert_eq!(value("k=a\\\r\n  #b\r\n#c=d\r\n").unwrap(), "a#b");
    }

    #[test]
    fn the_mm2_reader_reads_pairs_too() {
        let (file, _) = crate::front::mm2::raw::read(Path::new("mm2.properties"), b"k = \\uD83D\\uDE00 \n").unwrap();
        assert_eq!(file.get("k").unwrap().value, "\u{1F600} ", "raw: trailing space kept");
        let e = crate::front::mm2::raw::read(Path::new("mm2.properties"), b"\nk = \\uDE00\n").unwrap_err().to_string();
        assert!(e.contains("mm2.properties:2") && e.contains("surrogate"), "{e}");
    }
}
