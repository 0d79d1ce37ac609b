//! Java key and trust stores read as Java reads them, for listeners and
//! clients that take Java's `ssl.keystore.*` and `ssl.truststore.*` keys:
//! JKS and JCEKS (read by [`jks`] and [`jceks`]), PKCS12 (keytool's
//! default, read by OpenSSL) and PEM. As the JDK since 9
//! (`keystore.type.compat`), a store declared JKS or PKCS12 is read as
//! whichever of the two its bytes are; one declared JCEKS is read if it is
//! JCEKS or JKS (SunJCE's JceKeyStore reads both), and nothing else: the
//! same answers keytool -list -storetype gives on Java 17.
//!
//! Errors say which setting is at fault ([`Fault`]) so the caller can name
//! its own key and file; nothing here knows about properties files.

#![forbid(unsafe_code)]

mod bytes;
pub mod jceks;
pub mod jks;

use std::path::Path;

use openssl::pkey::{PKey, Private};
use openssl::x509::X509;

/// `ssl.keystore.type` / `ssl.truststore.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreType {
    Jks,
    Jceks,
    Pkcs12,
    Pem,
}

impl StoreType {
    /// Java's names, in any case (Java's KeyStore.getInstance ignores it).
    pub fn parse(name: &str) -> Option<StoreType> {
        match name.trim().to_ascii_uppercase().as_str() {
            "JKS" => Some(StoreType::Jks),
            "JCEKS" => Some(StoreType::Jceks),
            "PKCS12" => Some(StoreType::Pkcs12),
            "PEM" => Some(StoreType::Pem),
            _ => None,
        }
    }
}

/// Which setting a store error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The file: missing, unreadable, not of its type, empty.
    Location,
    /// The declared type.
    Type,
    /// The store password.
    StorePassword,
    /// The key password.
    KeyPassword,
}

/// Why a store cannot be used: the setting at fault and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    pub fault: Fault,
    pub message: String,
}

impl StoreError {
    fn new(fault: Fault, message: impl Into<String>) -> Self {
        StoreError { fault, message: message.into() }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

/// A keystore's private key and the certificate chain it is served with.
pub struct KeyMaterial {
    pub key: PKey<Private>,
    /// The key's certificate first, then its issuers.
    pub chain: Vec<X509>,
    /// The alias taken, and the other key entries not taken (Java's key
    /// manager would choose among them per handshake; here the first is
    /// served, which the caller says).
    pub alias: String,
    pub others: Vec<String>,
    /// JCEKS secret-key entries, skipped (no TLS use).
    pub secrets: Vec<String>,
}

impl std::fmt::Debug for KeyMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        write!(f, "KeyMaterial {{ alias: {:?}, chain: {} certificates }}", self.alias, self.chain.len())
    }
}

/// What a store file is, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Content {
    Jks,
    Jceks,
    Pkcs12,
    Pem,
    Unknown,
}

fn sniff(bytes: &[u8]) -> Content {
    match bytes {
        _ if jks::is_jks(bytes) => Content::Jks,
        _ if jks::is_jceks(bytes) => Content::Jceks,
        [0x30, ..] => Content::Pkcs12,
        _ if String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]).contains("-----BEGIN ") => Content::Pem,
        _ => Content::Unknown,
    }
}

/// The type a store file's bytes are, if they are one of the four (for a
/// client that names no type: the bytes decide).
pub fn type_of(path: &Path) -> Option<StoreType> {
    match sniff(&std::fs::read(path).ok()?) {
        Content::Jks => Some(StoreType::Jks),
        Content::Jceks => Some(StoreType::Jceks),
        Content::Pkcs12 => Some(StoreType::Pkcs12),
        Content::Pem => Some(StoreType::Pem),
        Content::Unknown => None,
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| StoreError::new(Fault::Location, format!("cannot read {}: {e}", path.display())))?;
    if bytes.is_empty() {
        return Err(StoreError::new(Fault::Location, format!("{} is empty", path.display())));
    }
    Ok(bytes)
}

/// The file's content, checked against its declared type.
fn content(path: &Path, bytes: &[u8], declared: StoreType) -> Result<Content, StoreError> {
    let c = sniff(bytes);
    let named = |c: Content| match c {
        Content::Jks => "a JKS store",
        Content::Jceks => "a JCEKS store",
        Content::Pkcs12 => "a PKCS12 store",
        Content::Pem => "PEM text",
        Content::Unknown => "neither JKS, JCEKS, PKCS12 nor PEM",
    };
    let fits = match declared {
        StoreType::Pem => c == Content::Pem,
        StoreType::Jks | StoreType::Pkcs12 => matches!(c, Content::Jks | Content::Pkcs12),
        StoreType::Jceks => matches!(c, Content::Jceks | Content::Jks),
    };
    if fits {
        return Ok(c);
    }
    let fix = match c {
        Content::Pem => " (set the type to PEM)",
        Content::Jks | Content::Pkcs12 => " (set the type to PKCS12 or JKS)",
        Content::Jceks => " (set the type to JCEKS)",
        Content::Unknown => "",
    };
    let fault = if c == Content::Unknown { Fault::Location } else { Fault::Type };
    Err(StoreError::new(fault, format!("{} is {}, not {declared:?}{fix}", path.display(), named(c))))
}

/// Reads a keystore: its first private key and that key's chain.
/// `key_password` defaults to the store password, as in Java.
pub fn read_keystore(path: &Path, declared: StoreType, store_password: Option<&str>, key_password: Option<&str>) -> Result<KeyMaterial, StoreError> {
    let bytes = read_file(path)?;
    match content(path, &bytes, declared)? {
        Content::Jks | Content::Jceks => jks_keystore(path, &bytes, store_password, key_password),
        Content::Pkcs12 => pkcs12_keystore(path, &bytes, store_password, key_password),
        _ => pem_keystore(path, &bytes, key_password),
    }
}

/// Reads a truststore: its certificates.
pub fn read_truststore(path: &Path, declared: StoreType, password: Option<&str>) -> Result<Vec<X509>, StoreError> {
    Ok(read_truststore_entries(path, declared, password)?.0)
}

/// Reads a truststore: its certificates, and the aliases of the JCEKS
/// secret keys skipped (for the caller to say).
pub fn read_truststore_entries(path: &Path, declared: StoreType, password: Option<&str>) -> Result<(Vec<X509>, Vec<String>), StoreError> {
    let bytes = read_file(path)?;
    let mut secrets = Vec::new();
    let certs = match content(path, &bytes, declared)? {
        Content::Jks | Content::Jceks => {
            let entries = jks::read(&bytes, password).map_err(|e| jks_error(path, e))?;
            secrets = secret_aliases(&entries);
            let ders: Vec<&Vec<u8>> = entries.iter().filter_map(|e| if let jks::Entry::Trusted { cert, .. } = e { Some(cert) } else { None }).collect();
            ders.into_iter().map(|d| x509(path, d)).collect::<Result<Vec<_>, _>>()?
        }
        Content::Pkcs12 => {
            let p = pkcs12(path, &bytes, password.unwrap_or(""))?;
            p.ca.into_iter().flatten().chain(p.cert).collect()
        }
        _ => X509::stack_from_pem(&bytes).map_err(|e| StoreError::new(Fault::Location, format!("{}: {e}", path.display())))?,
    };
    if certs.is_empty() {
        return Err(StoreError::new(Fault::Location, format!("{} holds no certificate to trust; add one with keytool -importcert", path.display())));
    }
    Ok((certs, secrets))
}

fn secret_aliases(entries: &[jks::Entry]) -> Vec<String> {
    entries.iter().filter_map(|e| if let jks::Entry::Secret { alias } = e { Some(alias.clone()) } else { None }).collect()
}

/// Refuses a key whose certificate is not valid now: Java's client would
/// start and then fail every handshake; said at start instead.
pub fn check_validity(path: &Path, m: &KeyMaterial) -> Result<(), StoreError> {
    let cert = &m.chain[0];
    let now = openssl::asn1::Asn1Time::days_from_now(0).map_err(|e| StoreError::new(Fault::Location, e.to_string()))?;
    let entry = if m.alias.is_empty() { String::new() } else { format!(" '{}'", m.alias) };
    let why = if cert.not_after() < now {
        format!("expired on {}", cert.not_after())
    } else if cert.not_before() > now {
        format!("is not valid before {}", cert.not_before())
    } else {
        return Ok(());
    };
    Err(StoreError::new(
        Fault::Location,
        format!(
            "the certificate of the key{entry} in {} {why} (valid from {} to {}); brokers refuse it in the handshake: renew it",
            path.display(),
            cert.not_before(),
            cert.not_after()
        ),
    ))
}

fn x509(path: &Path, der: &[u8]) -> Result<X509, StoreError> {
    X509::from_der(der).map_err(|e| StoreError::new(Fault::Location, format!("{}: a certificate cannot be read: {e}", path.display())))
}

fn jks_error(path: &Path, e: jks::JksError) -> StoreError {
    match e {
        jks::JksError::Damaged(why) => StoreError::new(Fault::Location, format!("{}: {why}", path.display())),
        jks::JksError::StorePassword => StoreError::new(
            Fault::StorePassword,
            format!("{} cannot be opened with this password (its integrity check does not match; keytool says the same)", path.display()),
        ),
        jks::JksError::KeyPassword => StoreError::new(
            Fault::KeyPassword,
            format!("the private key in {} cannot be recovered with this key password (ssl.key.password, else the store password)", path.display()),
        ),
    }
}

fn jks_keystore(path: &Path, bytes: &[u8], store_password: Option<&str>, key_password: Option<&str>) -> Result<KeyMaterial, StoreError> {
    let Some(store_pw) = store_password else {
        let kind = if jks::is_jceks(bytes) { "JCEKS" } else { "JKS" };
        return Err(StoreError::new(Fault::StorePassword, format!("{} is a {kind} keystore and no password is given for it", path.display())));
    };
    let entries = jks::read(bytes, Some(store_pw)).map_err(|e| jks_error(path, e))?;
    let mut keys = entries.iter().filter_map(|e| if let jks::Entry::Key { alias, protected, chain } = e { Some((alias, protected, chain)) } else { None });
    let Some((alias, protected, chain)) = keys.next() else {
        return Err(empty(path));
    };
    let others = keys.map(|(a, _, _)| a.clone()).collect();
    let pkcs8 = jks::recover_key(protected, key_password.unwrap_or(store_pw)).map_err(|e| jks_error(path, e))?;
    let key = PKey::private_key_from_pkcs8(&pkcs8)
        .map_err(|e| StoreError::new(Fault::Location, format!("{}: the private key '{alias}' cannot be read: {e}", path.display())))?;
    let chain = chain.iter().map(|d| x509(path, d)).collect::<Result<Vec<_>, _>>()?;
    if chain.is_empty() {
        return Err(StoreError::new(Fault::Location, format!("{}: the private key '{alias}' has no certificate", path.display())));
    }
    Ok(KeyMaterial { key, chain, alias: alias.clone(), others, secrets: secret_aliases(&entries) })
}

fn empty(path: &Path) -> StoreError {
    StoreError::new(
        Fault::Location,
        format!("{} holds no private key entry (a truststore given as a keystore?); make one with keytool -genkeypair", path.display()),
    )
}

fn pkcs12(path: &Path, bytes: &[u8], password: &str) -> Result<openssl::pkcs12::ParsedPkcs12_2, StoreError> {
    let p12 =
        openssl::pkcs12::Pkcs12::from_der(bytes).map_err(|_| StoreError::new(Fault::Location, format!("{} is not a valid PKCS12 file", path.display())))?;
    p12.parse2(password).map_err(|_| {
        StoreError::new(
            Fault::StorePassword,
            format!("{} cannot be opened with this password (wrong or missing password, or an encryption OpenSSL does not support)", path.display()),
        )
    })
}

fn pkcs12_keystore(path: &Path, bytes: &[u8], store_password: Option<&str>, key_password: Option<&str>) -> Result<KeyMaterial, StoreError> {
    let store_password = store_password.unwrap_or("");
    let p = pkcs12(path, bytes, store_password)?;
    // OpenSSL opened the key with the store password; Java opens it with
    // the key password, and would fail where the two differ.
    if key_password.is_some_and(|k| k != store_password) && p.pkey.is_some() {
        return Err(StoreError::new(
            Fault::KeyPassword,
            format!(
                "the private key in {} is protected by the store password, not by this key password (keytool makes PKCS12 stores with one password): \
                 remove ssl.key.password or set it to the store password",
                path.display()
            ),
        ));
    }
    let (Some(key), Some(cert)) = (p.pkey, p.cert) else {
        return Err(empty(path));
    };
    let mut chain = vec![cert];
    chain.extend(p.ca.into_iter().flatten());
    Ok(KeyMaterial { key, chain, alias: String::new(), others: Vec::new(), secrets: Vec::new() })
}

/// Java's PEM keystore: a PKCS#8 key (encrypted with the key password
/// when it says ENCRYPTED) and its chain, in one file.
fn pem_keystore(path: &Path, bytes: &[u8], key_password: Option<&str>) -> Result<KeyMaterial, StoreError> {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains("PRIVATE KEY-----") {
        return Err(empty(path));
    }
    let key = match key_password {
        _ if !text.contains("ENCRYPTED PRIVATE KEY") => PKey::private_key_from_pem(bytes),
        Some(pw) => PKey::private_key_from_pem_passphrase(bytes, pw.as_bytes()),
        None => {
            return Err(StoreError::new(Fault::KeyPassword, format!("the private key in {} is encrypted and no key password is given", path.display())));
        }
    }
    .map_err(|_| StoreError::new(Fault::KeyPassword, format!("the private key in {} cannot be read with this key password", path.display())))?;
    let chain = X509::stack_from_pem(bytes).map_err(|e| StoreError::new(Fault::Location, format!("{}: {e}", path.display())))?;
    if chain.is_empty() {
        return Err(StoreError::new(Fault::Location, format!("{} holds a private key but no certificate", path.display())));
    }
    Ok(KeyMaterial { key, chain, alias: String::new(), others: Vec::new(), secrets: Vec::new() })
}

#[cfg(test)]
pub(crate) mod tests;
