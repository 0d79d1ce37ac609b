//! The byte-level reading JKS and JCEKS share ([`super::jks`] walks the
//! file, [`super::jceks`] adds what JCEKS has more): a bounds-checked
//! reader of Java's big-endian counts and `writeUTF` strings, a minimal
//! DER walker, and the error they report. A leaf, so that the two format
//! modules need not import each other both ways.

/// Why a JKS or JCEKS file could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum JksError {
    /// Not a JKS file or cut short.
    Damaged(String),
    /// The integrity check does not match the store password.
    StorePassword,
    /// The key cannot be recovered with the key password.
    KeyPassword,
}

pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], JksError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len()).ok_or_else(|| JksError::Damaged("the file is cut short".into()))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    pub(super) fn peek(&self) -> Result<u8, JksError> {
        self.bytes.get(self.at).copied().ok_or_else(|| JksError::Damaged("the file is cut short".into()))
    }

    pub(super) fn u8(&mut self) -> Result<u8, JksError> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u16(&mut self) -> Result<u16, JksError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(super) fn u32(&mut self) -> Result<u32, JksError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Java's `writeUTF`: a u16 length and modified UTF-8 (read lossily:
    /// an alias is only ever shown).
    pub(super) fn utf(&mut self) -> Result<String, JksError> {
        let n = self.u16()? as usize;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    pub(super) fn blob(&mut self) -> Result<Vec<u8>, JksError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }

    /// A certificate: in version 2 preceded by its type ("X.509").
    pub(super) fn cert(&mut self, version: u32) -> Result<Vec<u8>, JksError> {
        if version == 2 {
            self.utf()?;
        }
        self.blob()
    }
}

/// One DER element: (tag, content, what follows).
pub(super) fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = b.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7F) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        (rest[..n].iter().fold(0usize, |a, &x| (a << 8) | x as usize), &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}
