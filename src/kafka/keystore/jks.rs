//! Java's own JKS keystore format (magic `FEEDFEED`) and its JCE sibling
//! JCEKS (magic `CECECECE`), read without Java.
//!
//! Hand-written on purpose: OpenSSL reads PKCS12 and PEM but not JKS, and
//! the one JKS crate found (`jks` 0.3) indexes its input without bounds
//! checks (a truncated file panics) and brings an ASN.1 stack of its own.
//! The format is small and fixed since JDK 1.2: big-endian counts, Java's
//! `writeUTF` strings, each private key protected by Sun's KeyProtector
//! (a SHA-1 keystream), and a SHA-1 over password, "Mighty Aphrodite" and
//! the whole file as its integrity check. SHA-1 comes from the OpenSSL the
//! crate already links. Every read is bounds-checked: a damaged file is an
//! error, never a panic.
//!
//! JCEKS has the same layout and integrity check; it differs in how its
//! private keys are protected (PBEWithMD5AndTripleDES, see [`super::jceks`])
//! and in a third entry kind, secret keys, stored as Java-serialized
//! objects that are skipped (a client has no use for them).

use openssl::sha::Sha1;

pub use super::bytes::JksError;
use super::bytes::{der, Reader};

/// One entry of a JKS file.
#[derive(Debug)]
pub enum Entry {
    /// A private key (still protected) and its certificate chain (DER).
    Key { alias: String, protected: Vec<u8>, chain: Vec<Vec<u8>> },
    /// A trusted certificate (DER).
    Trusted { alias: String, cert: Vec<u8> },
    /// A JCEKS secret key, skipped unread.
    Secret { alias: String },
}

const MAGIC: u32 = 0xFEED_FEED;
const JCEKS_MAGIC: u32 = 0xCECE_CECE;
/// The salt and the check of Sun's KeyProtector, each a SHA-1's length.
const SHA1_LEN: usize = 20;
/// Sun's KeyProtector algorithm, 1.3.6.1.4.1.42.2.17.1.1, as DER.
const KEY_PROTECTOR_OID: &[u8] = &[0x2B, 0x06, 0x01, 0x04, 0x01, 0x2A, 0x02, 0x11, 0x01, 0x01];

/// The password as Java hashes it: each UTF-16 unit, big-endian.
fn password_bytes(password: &str) -> Vec<u8> {
    password.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

fn magic(bytes: &[u8]) -> Option<u32> {
    (bytes.len() >= 4).then(|| u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Whether `bytes` starts as a JKS file.
pub fn is_jks(bytes: &[u8]) -> bool {
    magic(bytes) == Some(MAGIC)
}

/// Whether `bytes` starts as a JCEKS file.
pub fn is_jceks(bytes: &[u8]) -> bool {
    magic(bytes) == Some(JCEKS_MAGIC)
}

/// The entries of a JKS or JCEKS file. With a password its integrity check
/// is verified (a mismatch is a wrong password, as keytool says); without
/// one it is not, as Java reads a truststore given no password.
pub fn read(bytes: &[u8], password: Option<&str>) -> Result<Vec<Entry>, JksError> {
    if bytes.len() < SHA1_LEN + 12 || !(is_jks(bytes) || is_jceks(bytes)) {
        return Err(JksError::Damaged("it is not a JKS or JCEKS keystore (no FEEDFEED or CECECECE magic), or it is cut short".into()));
    }
    let jceks = is_jceks(bytes);
    let (body, stored) = bytes.split_at(bytes.len() - SHA1_LEN);
    if let Some(pw) = password {
        let mut h = Sha1::new();
        h.update(&password_bytes(pw));
        h.update(b"Mighty Aphrodite");
        h.update(body);
        if h.finish() != stored {
            return Err(JksError::StorePassword);
        }
    }
    let mut r = Reader { bytes: body, at: 4 };
    let version = r.u32()?;
    if version != 1 && version != 2 {
        return Err(JksError::Damaged(format!("JKS version {version} is unknown (1 and 2 are)")));
    }
    let count = r.u32()?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let tag = r.u32()?;
        let alias = r.utf()?;
        r.take(8)?; // the entry's date
        match tag {
            1 => {
                let protected = r.blob()?;
                let n = r.u32()?;
                let chain = (0..n).map(|_| r.cert(version)).collect::<Result<_, _>>()?;
                entries.push(Entry::Key { alias, protected, chain });
            }
            2 => entries.push(Entry::Trusted { alias, cert: r.cert(version)? }),
            3 if jceks => {
                super::jceks::skip_serialized(&mut r)?;
                entries.push(Entry::Secret { alias });
            }
            t => return Err(JksError::Damaged(format!("entry '{alias}' has the unknown tag {t}"))),
        }
    }
    if r.at != body.len() {
        return Err(JksError::Damaged("bytes follow the last entry".into()));
    }
    Ok(entries)
}

/// The PKCS#8 key inside a KeyProtector-protected key: the
/// EncryptedPrivateKeyInfo's octets are salt, key XOR a SHA-1 keystream
/// seeded with the salt, and SHA-1(password, key) as the check.
pub fn recover_key(protected: &[u8], password: &str) -> Result<Vec<u8>, JksError> {
    let damaged = || JksError::Damaged("a private key entry is not a protected key".into());
    let (_, info, _) = der(protected).filter(|(t, _, _)| *t == 0x30).ok_or_else(damaged)?;
    let (_, algorithm, rest) = der(info).filter(|(t, _, _)| *t == 0x30).ok_or_else(damaged)?;
    let (_, oid, _) = der(algorithm).filter(|(t, _, _)| *t == 0x06).ok_or_else(damaged)?;
    if oid == super::jceks::PBE_MD5_3DES_OID {
        return super::jceks::recover_key(algorithm, rest, password);
    }
    if oid != KEY_PROTECTOR_OID {
        return Err(JksError::Damaged("a private key is protected by an algorithm other than Sun's JKS and JCE KeyProtectors".into()));
    }
    let (_, data, _) = der(rest).filter(|(t, _, _)| *t == 0x04).ok_or_else(damaged)?;
    if data.len() < 2 * SHA1_LEN {
        return Err(damaged());
    }
    let (salt, rest) = data.split_at(SHA1_LEN);
    let (encrypted, check) = rest.split_at(rest.len() - SHA1_LEN);
    let pw = password_bytes(password);
    let mut digest: [u8; SHA1_LEN] = salt.try_into().expect("20 bytes");
    let mut key = Vec::with_capacity(encrypted.len());
    for chunk in encrypted.chunks(SHA1_LEN) {
        let mut h = Sha1::new();
        h.update(&pw);
        h.update(&digest);
        digest = h.finish();
        key.extend(chunk.iter().zip(digest.iter()).map(|(a, b)| a ^ b));
    }
    let mut h = Sha1::new();
    h.update(&pw);
    h.update(&key);
    if h.finish() != check {
        return Err(JksError::KeyPassword);
    }
    Ok(key)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An entry to write: tag (1 key, 2 trusted), alias, protected key or
    /// certificate, and a key's chain.
    pub(crate) type TestEntry<'a> = (u32, &'a str, Vec<u8>, Vec<Vec<u8>>);

    /// A JKS file as Java writes it (version 2), its check made with `pw`.
    pub(crate) fn jks_file(entries: &[TestEntry], pw: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(MAGIC.to_be_bytes());
        b.extend(2u32.to_be_bytes());
        b.extend((entries.len() as u32).to_be_bytes());
        let utf = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as u16).to_be_bytes());
            b.extend(s.as_bytes());
        };
        for (tag, alias, data, chain) in entries {
            b.extend(tag.to_be_bytes());
            utf(&mut b, alias);
            b.extend(0u64.to_be_bytes());
            if *tag == 2 {
                utf(&mut b, "X.509");
            }
            b.extend((data.len() as u32).to_be_bytes());
            b.extend(data);
            if *tag == 1 {
                b.extend((chain.len() as u32).to_be_bytes());
                for c in chain {
                    utf(&mut b, "X.509");
                    b.extend((c.len() as u32).to_be_bytes());
                    b.extend(c);
                }
            }
        }
        let mut h = Sha1::new();
        h.update(&password_bytes(pw));
        h.update(b"Mighty Aphrodite");
        h.update(&b);
        b.extend(h.finish());
        b
    }

    /// `key` protected as Sun's KeyProtector does (salt fixed for the test).
    pub(crate) fn protect(key: &[u8], pw: &str) -> Vec<u8> {
        let salt = [7u8; SHA1_LEN];
        let p = password_bytes(pw);
        let mut digest = salt;
        let mut out = salt.to_vec();
        for chunk in key.chunks(SHA1_LEN) {
            let mut h = Sha1::new();
            h.update(&p);
            h.update(&digest);
            digest = h.finish();
            out.extend(chunk.iter().zip(digest.iter()).map(|(a, b)| a ^ b));
        }
        let mut h = Sha1::new();
        h.update(&p);
        h.update(key);
        out.extend(h.finish());
        let mut alg = vec![0x06, KEY_PROTECTOR_OID.len() as u8];
        alg.extend(KEY_PROTECTOR_OID);
        alg.extend([0x05, 0x00]);
        let mut seq = vec![0x30, alg.len() as u8];
        seq.extend(alg);
        seq.extend(der_header(0x04, out.len()));
        seq.extend(out);
        let mut all = der_header(0x30, seq.len());
        all.extend(seq);
        all
    }

    fn der_header(tag: u8, len: usize) -> Vec<u8> {
        if len < 0x80 {
            vec![tag, len as u8]
        } else {
            vec![tag, 0x82, (len >> 8) as u8, len as u8]
        }
    }

    #[test]
    fn a_protected_key_comes_back_with_its_password_only() {
        let key: Vec<u8> = (0..101u8).collect();
        let p = protect(&key, "keypass");
        assert_eq!(recover_key(&p, "keypass").unwrap(), key);
        assert_eq!(recover_key(&p, "other"), Err(JksError::KeyPassword));
        assert!(matches!(recover_key(&p[..10], "keypass"), Err(JksError::Damaged(_))), "a cut key is an error, not a panic");
    }

    #[test]
    fn entries_are_read_and_the_store_password_checked() {
        let file = jks_file(&[(1, "me", protect(b"k", "pw"), vec![b"c1".to_vec(), b"c2".to_vec()]), (2, "ca", b"ca".to_vec(), vec![])], "storepw");
        let entries = read(&file, Some("storepw")).unwrap();
        assert!(matches!(&entries[0], Entry::Key { alias, chain, .. } if alias == "me" && chain.len() == 2));
        assert!(matches!(&entries[1], Entry::Trusted { alias, cert } if alias == "ca" && cert == b"ca"));
        assert_eq!(read(&file, Some("wrong")).unwrap_err(), JksError::StorePassword);
        assert_eq!(read(&file, None).unwrap().len(), 2, "no password: read without the check, as Java does");
    }

    #[test]
    fn every_cut_of_a_file_is_an_error_never_a_panic() {
        let file = jks_file(&[(1, "me", protect(b"key", "pw"), vec![b"cert".to_vec()])], "pw");
        for n in 0..file.len() {
            assert!(read(&file[..n], None).is_err(), "cut at {n}");
        }
    }
}
