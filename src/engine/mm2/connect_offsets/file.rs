//! Java Connect standalone's offsets file (`offset.storage.file.filename`):
//! what `FileOffsetBackingStore.save()` writes, an `ObjectOutputStream` of
//! one `HashMap<byte[], byte[]>` whose keys and values are the same
//! JsonConverter bytes a distributed worker writes to its offsets topic.
//! Read at start and written while running, so a connector moves between
//! Java's `ConnectStandalone` and `--connect.standalone` both ways.
//!
//! Java serialization is written and read by hand for exactly that shape
//! (the stream header, the `java.util.HashMap` class descriptor, its two
//! fields, the block of capacity and size, then key and value arrays, the
//! first array carrying the `[B` class descriptor and the others a
//! back-reference to it): a general deserializer would be far more code
//! than this fixed structure, and anything else is refused with the file
//! named rather than taken as "no positions".
//!
//! The format only: a flow's take-over from the file and its hand-back
//! into it are the parent's (`read_file_positions`, `HandBack::run_to_file`).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A key and its value; None is Java's null (a deleted position).
pub type Entry = (Vec<u8>, Option<Vec<u8>>);

const MAGIC: [u8; 4] = [0xAC, 0xED, 0x00, 0x05];
const TC_NULL: u8 = 0x70;
const TC_REFERENCE: u8 = 0x71;
const TC_CLASSDESC: u8 = 0x72;
const TC_OBJECT: u8 = 0x73;
const TC_ARRAY: u8 = 0x75;
const TC_BLOCKDATA: u8 = 0x77;
const TC_ENDBLOCKDATA: u8 = 0x78;
/// The first handle a stream assigns (`ObjectStreamConstants.baseWireHandle`).
const BASE_HANDLE: u32 = 0x7E_0000;
const HASHMAP: &str = "java.util.HashMap";
const HASHMAP_UID: u64 = 362_498_820_763_181_265;
const BYTES: &str = "[B";
const BYTES_UID: u64 = 0xACF3_17F8_0608_54E0;
/// SC_WRITE_METHOD | SC_SERIALIZABLE: HashMap has its own writeObject.
const HASHMAP_FLAGS: u8 = 0x03;
const SERIALIZABLE: u8 = 0x02;

/// Why a file is not Java's offsets map: a byte position and what was
/// expected there.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeError {
    pub at: usize,
    pub what: String,
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.what)
    }
}

/// What a stream handle names: only class descriptors and arrays occur.
enum Handle {
    Class(String),
    Array(Vec<u8>),
    Map,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    handles: Vec<Handle>,
}

impl<'a> Reader<'a> {
    fn err<T>(&self, what: impl Into<String>) -> Result<T, ShapeError> {
        Err(ShapeError { at: self.at, what: what.into() })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ShapeError> {
        if self.bytes.len() - self.at < n {
            return self.err(format!("the file ends early (wanted {n} more bytes); it was cut short"));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, ShapeError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, ShapeError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }

    fn u32(&mut self) -> Result<u32, ShapeError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Result<u64, ShapeError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), ShapeError> {
        let at = self.at;
        match self.u8()? {
            b if b == byte => Ok(()),
            b => Err(ShapeError { at, what: format!("expected {what} (0x{byte:02x}), found 0x{b:02x}") }),
        }
    }

    fn utf(&mut self) -> Result<String, ShapeError> {
        let n = self.u16()? as usize;
        let at = self.at;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| ShapeError { at, what: "a name that is not UTF-8".into() })
    }

    /// A new class descriptor with no fields of interest beyond `fields`
    /// (name, type code), no annotations and no superclass.
    fn class_desc(&mut self, name: &str, uid: u64, flags: u8, fields: &[(&str, u8)]) -> Result<(), ShapeError> {
        self.expect(TC_CLASSDESC, "a class descriptor")?;
        let at = self.at;
        let found = self.utf()?;
        if found != name {
            return Err(ShapeError { at, what: format!("expected a {name}, found a {found}: not Connect's offsets map") });
        }
        let at = self.at;
        if self.u64()? != uid {
            return Err(ShapeError { at, what: format!("{name} with another serialVersionUID") });
        }
        self.handles.push(Handle::Class(name.to_string()));
        self.expect(flags, "the class flags")?;
        let count = self.u16()? as usize;
        if count != fields.len() {
            return self.err(format!("{name} with {count} fields, expected {}", fields.len()));
        }
        for (field, code) in fields {
            self.expect(*code, "a field type")?;
            let at = self.at;
            if self.utf()? != *field {
                return Err(ShapeError { at, what: format!("expected the field {field} of {name}") });
            }
        }
        self.expect(TC_ENDBLOCKDATA, "the end of the class annotations")?;
        self.expect(TC_NULL, "no superclass")
    }

    fn handle(&mut self) -> Result<&Handle, ShapeError> {
        let at = self.at;
        let h = self.u32()?;
        let i = h.checked_sub(BASE_HANDLE).map(|i| i as usize);
        match i.and_then(|i| self.handles.get(i)) {
            Some(handle) => Ok(handle),
            None => Err(ShapeError { at, what: format!("a reference to handle 0x{h:x}, which the file never defined") }),
        }
    }

    /// A `byte[]` or null.
    fn bytes_or_null(&mut self) -> Result<Option<Vec<u8>>, ShapeError> {
        let at = self.at;
        match self.u8()? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.handle()? {
                Handle::Array(a) => Ok(Some(a.clone())),
                _ => Err(ShapeError { at, what: "a reference to something other than a byte array".into() }),
            },
            TC_ARRAY => {
                let at = self.at;
                match self.bytes.get(self.at) {
                    Some(&TC_REFERENCE) => {
                        self.at += 1;
                        if !matches!(self.handle()?, Handle::Class(c) if c == BYTES) {
                            return Err(ShapeError { at, what: "an array of something other than bytes".into() });
                        }
                    }
                    _ => self.class_desc(BYTES, BYTES_UID, SERIALIZABLE, &[])?,
                }
                let n = self.u32()? as usize;
                let a = self.take(n)?.to_vec();
                self.handles.push(Handle::Array(a.clone()));
                Ok(Some(a))
            }
            b => Err(ShapeError { at, what: format!("expected a byte array or null, found 0x{b:02x}") }),
        }
    }
}

/// The entries of a file Java's `FileOffsetBackingStore` wrote.
pub fn decode(bytes: &[u8]) -> Result<Vec<Entry>, ShapeError> {
    let mut r = Reader { bytes, at: 0, handles: Vec::new() };
    if r.take(4).ok() != Some(&MAGIC[..]) {
        return Err(ShapeError { at: 0, what: "not a Java serialization stream (no 0xACED0005 header)".into() });
    }
    r.expect(TC_OBJECT, "an object")?;
    r.class_desc(HASHMAP, HASHMAP_UID, HASHMAP_FLAGS, &[("loadFactor", b'F'), ("threshold", b'I')])?;
    r.handles.push(Handle::Map);
    r.take(8)?; // loadFactor and threshold: Java's readObject recomputes them.
    r.expect(TC_BLOCKDATA, "the block of capacity and size")?;
    r.expect(8, "a block of 8 bytes")?;
    let _capacity = r.u32()?;
    let size = r.u32()? as usize;
    let mut entries = Vec::with_capacity(size.min(1 << 16));
    for _ in 0..size {
        let at = r.at;
        let Some(key) = r.bytes_or_null()? else {
            return Err(ShapeError { at, what: "a null key; Connect never writes one".into() });
        };
        let value = r.bytes_or_null()?;
        entries.push((key, value));
    }
    r.expect(TC_ENDBLOCKDATA, "the end of the map")?;
    if r.at != bytes.len() {
        return r.err(format!("{} bytes after the map", bytes.len() - r.at));
    }
    Ok(entries)
}

/// The bytes Java's `FileOffsetBackingStore.save()` writes for `entries`
/// (in their order; Java's is its hash order, which its reader ignores).
pub fn encode(entries: &[Entry]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.push(TC_OBJECT);
    class_desc(&mut out, HASHMAP, HASHMAP_UID, HASHMAP_FLAGS, &[("loadFactor", b'F'), ("threshold", b'I')]);
    // A HashMap filled by put(): a table of 16 doubled while over 3/4 full.
    let mut capacity: u32 = 16;
    while entries.len() as u64 > u64::from(capacity) * 3 / 4 {
        capacity *= 2;
    }
    let threshold = if entries.is_empty() { 0 } else { capacity * 3 / 4 };
    out.extend(0.75f32.to_be_bytes());
    out.extend(threshold.to_be_bytes());
    out.extend([TC_BLOCKDATA, 8]);
    out.extend(capacity.to_be_bytes());
    out.extend((entries.len() as u32).to_be_bytes());
    // Handles: the map's class 0, the map 1, `[B` 2, then each array.
    let mut first = true;
    let mut array = |out: &mut Vec<u8>, a: &[u8]| {
        out.push(TC_ARRAY);
        if first {
            class_desc(out, BYTES, BYTES_UID, SERIALIZABLE, &[]);
            first = false;
        } else {
            out.push(TC_REFERENCE);
            out.extend((BASE_HANDLE + 2).to_be_bytes());
        }
        out.extend((a.len() as u32).to_be_bytes());
        out.extend_from_slice(a);
    };
    for (key, value) in entries {
        array(&mut out, key);
        match value {
            Some(v) => array(&mut out, v),
            None => out.push(TC_NULL),
        }
    }
    out.push(TC_ENDBLOCKDATA);
    out
}

fn class_desc(out: &mut Vec<u8>, name: &str, uid: u64, flags: u8, fields: &[(&str, u8)]) {
    let utf = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as u16).to_be_bytes());
        out.extend(s.as_bytes());
    };
    out.push(TC_CLASSDESC);
    utf(out, name);
    out.extend(uid.to_be_bytes());
    out.push(flags);
    out.extend((fields.len() as u16).to_be_bytes());
    for (field, code) in fields {
        out.push(*code);
        utf(out, field);
    }
    out.extend([TC_ENDBLOCKDATA, TC_NULL]);
}

/// Why the offsets file could not be read or written.
#[derive(Debug)]
pub enum FileError {
    Io { path: PathBuf, doing: &'static str, error: std::io::Error },
    Shape { path: PathBuf, error: ShapeError },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io { path, doing, error } => write!(f, "cannot {doing} the offsets file {} (offset.storage.file.filename): {error}", path.display()),
            FileError::Shape { path, error } => write!(
                f,
                "the offsets file {} (offset.storage.file.filename) is not what Java Connect standalone writes ({error}); its positions \
                 cannot be read, and starting over would copy again what was copied. Restore the file, or move it away to start from the \
                 connectors' committed offsets and auto.offset.reset",
                path.display()
            ),
        }
    }
}

impl std::error::Error for FileError {}

/// The file's entries; None when there is no file (a first start). An
/// empty file is read as no entries, as Java does.
pub fn load(path: &Path) -> Result<Option<Vec<Entry>>, FileError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(FileError::Io { path: path.into(), doing: "read", error }),
    };
    if bytes.is_empty() {
        return Ok(Some(Vec::new()));
    }
    decode(&bytes).map(Some).map_err(|error| FileError::Shape { path: path.into(), error })
}

/// One writer of offsets files in this process at a time: every source
/// connector of a standalone worker shares the one file.
static WRITING: Mutex<()> = Mutex::new(());

/// Sets `changes` in the file, keeping every other entry (other
/// connectors', Java's heartbeat and checkpoint positions): read, merged,
/// written to `<file>.tmp`, synced and renamed over the file, so a crash
/// leaves the old file or the new one, never half of one.
pub fn update(path: &Path, changes: &[Entry]) -> Result<(), FileError> {
    let _one = WRITING.lock().unwrap_or_else(|p| p.into_inner());
    let mut entries = load(path)?.unwrap_or_default();
    for (key, value) in changes {
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.clone(),
            None => entries.push((key.clone(), value.clone())),
        }
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let io = |doing, error| FileError::Io { path: path.into(), doing, error };
    let mut f = fs::File::create(&tmp).map_err(|e| io("create a temporary file beside", e))?;
    f.write_all(&encode(&entries)).and_then(|()| f.sync_all()).map_err(|e| io("write a temporary file beside", e))?;
    fs::rename(&tmp, path).map_err(|e| io("replace", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by Java 17's ObjectOutputStream with
    /// `java tests/fixtures/OffsetsFile.java` (see its arguments there):
    /// three positions of connector mm2-source, one of them null, and a
    /// heartbeat connector's.
    const JAVA: &[u8] = include_bytes!("../../../../tests/fixtures/connect-standalone.offsets");
    const JAVA_EMPTY: &[u8] = include_bytes!("../../../../tests/fixtures/empty.offsets");

    fn key(p: i32) -> Vec<u8> {
        format!(r#"["mm2-source",{{"cluster":"A","partition":{p},"topic":"orders"}}]"#).into_bytes()
    }

    #[test]
    fn reads_a_file_java_wrote() {
        let mut e = decode(JAVA).unwrap();
        e.sort();
        let hb = br#"["mm2-heartbeat",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]"#.to_vec();
        let want = vec![
            (hb, Some(br#"{"offset":0}"#.to_vec())),
            (key(0), Some(br#"{"offset":41}"#.to_vec())),
            (key(1), Some(br#"{"offset":7}"#.to_vec())),
            (key(2), None),
        ];
        assert_eq!(e, want);
        assert_eq!(decode(JAVA_EMPTY).unwrap(), vec![]);
    }

    #[test]
    fn writes_javas_bytes() {
        // Java's order is its hash order; with one entry or none there is
        // only one order, so the bytes must be Java's exactly.
        assert_eq!(encode(&[]), JAVA_EMPTY);
        let entries = decode(JAVA).unwrap();
        let again = encode(&entries);
        assert_eq!(again.len(), JAVA.len(), "same entries, same size");
        assert_eq!(&again[..0x51], &JAVA[..0x51], "same header, class, fields, capacity and size");
        assert_eq!(decode(&again).unwrap(), entries, "round trip");
    }

    #[test]
    fn a_big_map_round_trips_with_javas_capacity() {
        let entries: Vec<Entry> = (0..100).map(|p| (key(p), if p % 7 == 0 { None } else { Some(format!(r#"{{"offset":{p}}}"#).into_bytes()) })).collect();
        let bytes = encode(&entries);
        assert_eq!(decode(&bytes).unwrap(), entries);
        // 100 entries: a table of 256 (192 > 100 > 96), threshold 192.
        assert_eq!(&bytes[0x43..0x47], 192u32.to_be_bytes());
        assert_eq!(&bytes[0x49..0x4d], 256u32.to_be_bytes());
    }

    #[test]
    fn other_shapes_are_refused_with_where() {
        let e = decode(b"{\"offset\":1}").unwrap_err();
        assert!(e.what.contains("not a Java serialization stream"), "{e}");
        let e = decode(&JAVA[..JAVA.len() - 5]).unwrap_err();
        assert!(e.to_string().contains("cut short"), "{e}");
        let mut other = JAVA.to_vec();
        other[0x10..0x18].copy_from_slice(b"TreeMap.");
        let e = decode(&other).unwrap_err();
        assert!(e.what.contains("expected a java.util.HashMap"), "{e}");
        let mut trailing = JAVA.to_vec();
        trailing.push(0);
        assert!(decode(&trailing).unwrap_err().what.contains("1 bytes after the map"));
    }

    #[test]
    fn update_keeps_other_entries_and_replaces_atomically() {
        let dir = std::env::temp_dir().join(format!("mm-offsets-file-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("connect.offsets");
        assert!(load(&path).unwrap().is_none(), "no file: a first start");
        fs::write(&path, JAVA).unwrap();
        update(&path, &[(key(0), Some(br#"{"offset":99}"#.to_vec())), (key(5), Some(br#"{"offset":1}"#.to_vec()))]).unwrap();
        let mut e = load(&path).unwrap().unwrap();
        e.sort();
        assert_eq!(e.len(), 5, "{e:?}");
        assert!(e.contains(&(key(0), Some(br#"{"offset":99}"#.to_vec()))));
        assert!(e.contains(&(key(5), Some(br#"{"offset":1}"#.to_vec()))));
        assert!(e.contains(&(key(2), None)), "Java's null kept");
        assert!(!dir.join("connect.offsets.tmp").exists());
        fs::write(&path, b"garbage").unwrap();
        let err = update(&path, &[]).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()) && err.contains("offset.storage.file.filename"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"garbage", "an unreadable file is left alone, never overwritten");
        fs::remove_dir_all(&dir).unwrap();
    }
}
