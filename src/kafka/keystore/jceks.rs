//! What JCEKS adds to JKS (the layout is read by [`super::jks`]): private
//! keys protected by the SunJCE KeyProtector, and secret-key entries.
//!
//! The SunJCE KeyProtector is PBEWithMD5AndTripleDES (OID
//! 1.3.6.1.4.1.42.2.19.1), as OpenJDK's `com.sun.crypto.provider.PBES1Core`
//! derives it for DESede: the 8-byte salt is split in halves (the first
//! reversed when both are equal), each half is hashed with the password by
//! MD5 `iterations` times, and the two digests give the 3DES key (24 bytes)
//! and the CBC IV (8 bytes). The plaintext is the PKCS#8 key, PKCS#5
//! padded. MD5 and DES-EDE3-CBC come from the OpenSSL already linked.
//!
//! Secret-key entries are Java-serialized `SealedObject`s written with no
//! length before them, so skipping one means walking Java's serialization
//! grammar (Object Serialization Stream Protocol, chapter 6): done here for
//! the grammar's plain forms, bounds-checked like the rest of the reader.

use openssl::hash::{hash, MessageDigest};
use openssl::symm::{decrypt, Cipher};

use super::bytes::{der, JksError, Reader};

/// PBEWithMD5AndTripleDES, 1.3.6.1.4.1.42.2.19.1, as DER.
pub(super) const PBE_MD5_3DES_OID: &[u8] = &[0x2B, 0x06, 0x01, 0x04, 0x01, 0x2A, 0x02, 0x13, 0x01];
/// OpenJDK's KeyProtector refuses more iterations than this (a damaged
/// or hostile file must not make us hash for minutes).
const MAX_ITERATIONS: u64 = 5_000_000;

fn damaged(why: &str) -> JksError {
    JksError::Damaged(why.to_string())
}

/// The password as PBEKey encodes it: one byte per character, 7 bits.
/// Java refuses passwords outside printable ASCII for this cipher.
fn password_bytes(password: &str) -> Result<Vec<u8>, JksError> {
    if !password.chars().all(|c| (' '..='~').contains(&c)) {
        return Err(JksError::KeyPassword);
    }
    Ok(password.bytes().collect())
}

/// The 3DES key and IV of PBES1Core for DESede.
fn derive(salt: &[u8], password: &[u8], iterations: u64) -> Vec<u8> {
    let mut salt = salt.to_vec();
    if salt[..4] == salt[4..] {
        salt[..4].reverse();
    }
    let mut out = Vec::with_capacity(32);
    for half in salt.chunks(4) {
        let md5 = |a: &[u8]| hash(MessageDigest::md5(), &[a, password].concat()).expect("md5").to_vec();
        let mut d = md5(half);
        for _ in 1..iterations {
            d = md5(&d);
        }
        out.extend(d);
    }
    out
}

/// The PKCS#8 key of a JCE-protected key: `algorithm` is the content of
/// its AlgorithmIdentifier (the OID, then PBEParameter {salt, iterations}),
/// `rest` what follows it (the encrypted octets).
pub(super) fn recover_key(algorithm: &[u8], rest: &[u8], password: &str) -> Result<Vec<u8>, JksError> {
    let bad = || damaged("a JCEKS private key's protection parameters are damaged");
    let (_, _, params) = der(algorithm).ok_or_else(bad)?;
    let (_, pbe, _) = der(params).filter(|(t, _, _)| *t == 0x30).ok_or_else(bad)?;
    let (_, salt, after) = der(pbe).filter(|(t, s, _)| *t == 0x04 && s.len() == 8).ok_or_else(bad)?;
    let (_, count, _) = der(after).filter(|(t, c, _)| *t == 0x02 && !c.is_empty() && c.len() <= 4).ok_or_else(bad)?;
    let iterations = count.iter().fold(0u64, |a, &b| (a << 8) | b as u64);
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(damaged("a JCEKS private key's iteration count is out of range"));
    }
    let (_, encrypted, _) = der(rest).filter(|(t, _, _)| *t == 0x04).ok_or_else(bad)?;
    let kiv = derive(salt, &password_bytes(password)?, iterations);
    // A wrong password shows as bad padding, or (1 time in 256) as padding
    // that passes over bytes that are no DER: both are the password.
    let plain = decrypt(Cipher::des_ede3_cbc(), &kiv[..24], Some(&kiv[24..]), encrypted).map_err(|_| JksError::KeyPassword)?;
    match der(&plain) {
        Some((0x30, _, [])) => Ok(plain),
        _ => Err(JksError::KeyPassword),
    }
}

// Java serialization's type codes and class flags.
const TC_NULL: u8 = 0x70;
const TC_REFERENCE: u8 = 0x71;
const TC_CLASSDESC: u8 = 0x72;
const TC_OBJECT: u8 = 0x73;
const TC_STRING: u8 = 0x74;
const TC_ARRAY: u8 = 0x75;
const TC_CLASS: u8 = 0x76;
const TC_BLOCKDATA: u8 = 0x77;
const TC_ENDBLOCKDATA: u8 = 0x78;
const TC_BLOCKDATALONG: u8 = 0x7A;
const TC_LONGSTRING: u8 = 0x7C;
const TC_ENUM: u8 = 0x7E;
const BASE_HANDLE: u32 = 0x7E_0000;
const SC_WRITE_METHOD: u8 = 0x01;
const SC_EXTERNALIZABLE: u8 = 0x04;
const SC_BLOCK_DATA: u8 = 0x08;
/// Nesting deeper than this is no SealedObject: refused, not recursed.
const MAX_DEPTH: usize = 32;

struct Desc {
    flags: u8,
    /// Each field's type code ('B', 'L', '[', ...).
    fields: Vec<u8>,
    parent: Option<usize>,
}

#[derive(Clone, Copy)]
enum Handle {
    Desc(usize),
    Other,
}

struct Stream<'r, 'a> {
    r: &'r mut Reader<'a>,
    handles: Vec<Handle>,
    descs: Vec<Desc>,
    depth: usize,
}

/// Skips one serialized object (a JCEKS secret key's SealedObject).
pub(super) fn skip_serialized(r: &mut Reader) -> Result<(), JksError> {
    if r.u16()? != 0xACED || r.u16()? != 5 {
        return Err(damaged("a JCEKS secret key entry is not a Java serialized object"));
    }
    Stream { r, handles: Vec::new(), descs: Vec::new(), depth: 0 }.content()
}

fn not_serialized() -> JksError {
    damaged("a JCEKS secret key entry holds a serialized object this reader does not follow")
}

/// The size of a primitive field or array element, None for an object.
fn primitive(code: u8) -> Result<Option<usize>, JksError> {
    Ok(match code {
        b'B' | b'Z' => Some(1),
        b'C' | b'S' => Some(2),
        b'I' | b'F' => Some(4),
        b'J' | b'D' => Some(8),
        b'L' | b'[' => None,
        _ => return Err(not_serialized()),
    })
}

impl Stream<'_, '_> {
    /// One value of an object field or array.
    fn content(&mut self) -> Result<(), JksError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(not_serialized());
        }
        match self.r.u8()? {
            TC_NULL => {}
            TC_REFERENCE => {
                self.r.u32()?;
            }
            TC_STRING => {
                self.handles.push(Handle::Other);
                self.r.utf()?;
            }
            TC_LONGSTRING => {
                self.handles.push(Handle::Other);
                let n = (self.r.u32()? as u64) << 32 | self.r.u32()? as u64;
                self.r.take(usize::try_from(n).map_err(|_| not_serialized())?)?;
            }
            TC_OBJECT => {
                let d = self.class_desc()?;
                self.handles.push(Handle::Other);
                self.class_data(d)?;
            }
            TC_ARRAY => self.array()?,
            TC_CLASS => {
                self.class_desc()?;
                self.handles.push(Handle::Other);
            }
            TC_ENUM => {
                self.class_desc()?;
                self.handles.push(Handle::Other);
                self.content()?;
            }
            _ => return Err(not_serialized()),
        }
        self.depth -= 1;
        Ok(())
    }

    fn array(&mut self) -> Result<(), JksError> {
        let d = self.class_desc()?.ok_or_else(not_serialized)?;
        let element = self.descs[d].fields.first().copied().ok_or_else(not_serialized)?;
        self.handles.push(Handle::Other);
        let n = self.r.u32()? as usize;
        match primitive(element)? {
            Some(size) => {
                self.r.take(n.checked_mul(size).ok_or_else(not_serialized)?)?;
            }
            None => {
                for _ in 0..n {
                    self.content()?;
                }
            }
        }
        Ok(())
    }

    /// A class description (new, a reference to one, or null), as an
    /// index into `descs`. An array class keeps its element's type code
    /// as its one field.
    fn class_desc(&mut self) -> Result<Option<usize>, JksError> {
        match self.r.u8()? {
            TC_NULL => Ok(None),
            TC_REFERENCE => {
                let h = self.r.u32()?.checked_sub(BASE_HANDLE).ok_or_else(not_serialized)?;
                match self.handles.get(h as usize) {
                    Some(Handle::Desc(i)) => Ok(Some(*i)),
                    _ => Err(not_serialized()),
                }
            }
            TC_CLASSDESC => {
                let name = self.r.utf()?;
                self.r.take(8)?; // serialVersionUID
                let handle = self.handles.len();
                self.handles.push(Handle::Other);
                let flags = self.r.u8()?;
                let mut fields = Vec::new();
                for _ in 0..self.r.u16()? {
                    let code = self.r.u8()?;
                    self.r.utf()?;
                    if primitive(code)?.is_none() {
                        self.content()?; // the field's class name, a string
                    }
                    fields.push(code);
                }
                self.annotation()?;
                let parent = self.class_desc()?;
                if let Some(element) = name.strip_prefix('[') {
                    fields = element.bytes().take(1).collect();
                }
                self.descs.push(Desc { flags, fields, parent });
                self.handles[handle] = Handle::Desc(self.descs.len() - 1);
                Ok(Some(self.descs.len() - 1))
            }
            _ => Err(not_serialized()),
        }
    }

    /// Block data and objects up to TC_ENDBLOCKDATA.
    fn annotation(&mut self) -> Result<(), JksError> {
        loop {
            match self.r.peek()? {
                TC_ENDBLOCKDATA => {
                    self.r.u8()?;
                    return Ok(());
                }
                TC_BLOCKDATA => {
                    self.r.u8()?;
                    let n = self.r.u8()? as usize;
                    self.r.take(n)?;
                }
                TC_BLOCKDATALONG => {
                    self.r.u8()?;
                    let n = self.r.u32()? as usize;
                    self.r.take(n)?;
                }
                _ => self.content()?,
            }
        }
    }

    /// An object's fields, its topmost serializable class first.
    fn class_data(&mut self, d: Option<usize>) -> Result<(), JksError> {
        let mut chain = Vec::new();
        let mut at = d;
        while let Some(i) = at {
            if chain.len() > MAX_DEPTH {
                return Err(not_serialized());
            }
            chain.push(i);
            at = self.descs[i].parent;
        }
        for &i in chain.iter().rev() {
            let (flags, fields) = (self.descs[i].flags, self.descs[i].fields.clone());
            if flags & SC_EXTERNALIZABLE != 0 {
                if flags & SC_BLOCK_DATA == 0 {
                    return Err(not_serialized());
                }
                self.annotation()?;
                continue;
            }
            for code in fields {
                match primitive(code)? {
                    Some(size) => {
                        self.r.take(size)?;
                    }
                    None => self.content()?,
                }
            }
            if flags & SC_WRITE_METHOD != 0 {
                self.annotation()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_salt_halves_reverse_the_first_as_openjdk_does() {
        // Equal halves: the first is reversed, so the two digests differ.
        let k = derive(&[1, 2, 3, 4, 1, 2, 3, 4], b"pw", 3);
        let expected_first = {
            let mut d = hash(MessageDigest::md5(), &[&[4u8, 3, 2, 1][..], b"pw"].concat()).unwrap().to_vec();
            for _ in 1..3 {
                d = hash(MessageDigest::md5(), &[&d[..], b"pw"].concat()).unwrap().to_vec();
            }
            d
        };
        assert_eq!(&k[..16], &expected_first[..]);
        assert_ne!(&k[..16], &k[16..]);
    }

    #[test]
    fn a_non_ascii_password_is_a_key_password_error() {
        assert_eq!(password_bytes("pässword"), Err(JksError::KeyPassword));
        assert_eq!(password_bytes("pass word~").unwrap(), b"pass word~".to_vec());
    }
}
