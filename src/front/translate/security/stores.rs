//! The trust and key stores of the Java clients, as librdkafka takes them.
//! Stores are sniffed by their magic bytes, not their declared type: a
//! `.jks` that is really PKCS12 works, a real JKS is refused with the
//! `keytool` command that converts it. PEM given inline is rebuilt with its
//! line breaks, as Java accepts it with `\n` escapes.

use std::path::{Path, PathBuf};

use super::place::{at, err, set};
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::secrets::is_secret;
use crate::kafka::settings::ClientSettings;

/// What a store file really is, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreKind {
    Jks,
    Jceks,
    Pkcs12,
    Pem,
    Unknown,
}

fn sniff(bytes: &[u8]) -> StoreKind {
    match bytes {
        [0xFE, 0xED, 0xFE, 0xED, ..] => StoreKind::Jks,
        [0xCE, 0xCE, 0xCE, 0xCE, ..] => StoreKind::Jceks,
        [0x30, ..] => StoreKind::Pkcs12,
        _ if String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]).contains("-----BEGIN ") => StoreKind::Pem,
        _ => StoreKind::Unknown,
    }
}

/// The error for a Java-only store, with the command that converts it.
fn java_store_error(file: &PropertiesFile, p: &Property, kind: StoreKind, type_key: &str) -> ConfigError {
    let (name, magic) = if kind == StoreKind::Jceks { ("JCEKS", "CECECECE") } else { ("JKS", "FEEDFEED") };
    // A secret path (see is_secret) is named by its key, never written out.
    let (src, dest) = if is_secret(&p.key) {
        (format!("<the file in {}>", p.key), "<a new file>.p12".to_string())
    } else {
        let src = p.value.trim().to_string();
        let dest = match Path::new(&src).extension() {
            Some(_) => Path::new(&src).with_extension("p12").display().to_string(),
            None => format!("{src}.p12"),
        };
        (src, dest)
    };
    err(
        file,
        p,
        format!(
            "{src} is a {name} store (magic bytes {magic}), a Java-only format OpenSSL cannot read. Convert it once with\n    \
             keytool -importkeystore -srckeystore {src} -srcstoretype {name} -destkeystore {dest} -deststoretype PKCS12\n\
             (keytool asks for the store passwords), then set {}={dest} and {type_key}=PKCS12; the password stays the same",
            p.key
        ),
    )
}

/// A store's path for a message, or the key naming it when the path is
/// itself a secret (librdkafka treats ssl.key.location as one).
fn named(p: &Property, path: &Path) -> String {
    if is_secret(&p.key) {
        format!("the file in {}", p.key)
    } else {
        path.display().to_string()
    }
}

fn read_store(file: &PropertiesFile, p: &Property) -> Result<(PathBuf, Vec<u8>), ConfigError> {
    let path = PathBuf::from(p.value.trim());
    let bytes = std::fs::read(&path).map_err(|e| err(file, p, format!("cannot read {}: {e}", named(p, &path))))?;
    Ok((path, bytes))
}

/// PEM text as OpenSSL wants it. Java accepts PEM with its line breaks
/// written as `\n` escapes or lost to continuation lines; each block is
/// rebuilt with 64-character lines.
fn normalize_pem(text: &str) -> Result<String, String> {
    let text = text.replace("\\n", "\n").replace("\\r", "");
    let re = regex::Regex::new(r"(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----").expect("valid regex");
    let mut out = String::new();
    for c in re.captures_iter(&text) {
        if c[1] != c[3] {
            return Err(format!("a PEM block begins with '{}' but ends with '{}'", &c[1], &c[3]));
        }
        let body: String = c[2].chars().filter(|ch| !ch.is_whitespace()).collect();
        if body.is_empty() || !body.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '+' | '/' | '=')) {
            return Err(format!("the PEM block '{}' is not base64 (headers such as Proc-Type are not supported; use PKCS#8)", &c[1]));
        }
        out.push_str(&format!("-----BEGIN {}-----\n", &c[1]));
        for chunk in body.as_bytes().chunks(64) {
            out.push_str(std::str::from_utf8(chunk).expect("ascii"));
            out.push('\n');
        }
        out.push_str(&format!("-----END {}-----\n", &c[1]));
    }
    if out.is_empty() {
        return Err("it holds no PEM block (-----BEGIN ...----- ... -----END ...-----)".into());
    }
    Ok(out)
}

/// The certificates of a PKCS12 truststore, as PEM.
fn pkcs12_certificates(bytes: &[u8], password: &str) -> Result<String, String> {
    let p12 = openssl::pkcs12::Pkcs12::from_der(bytes).map_err(|_| "it is not a valid PKCS12 file".to_string())?;
    let parsed = p12
        .parse2(password)
        .map_err(|_| "it cannot be opened with the given ssl.truststore.password (wrong or missing password, or an unsupported encryption)".to_string())?;
    let mut pem = Vec::new();
    for cert in parsed.ca.into_iter().flatten().chain(parsed.cert) {
        pem.extend(cert.to_pem().map_err(|e| e.to_string())?);
    }
    if pem.is_empty() {
        return Err("it contains no certificates".into());
    }
    String::from_utf8(pem).map_err(|e| e.to_string())
}

/// The truststore keys, as the CA librdkafka verifies brokers with.
pub(super) fn truststore<'a>(file: &PropertiesFile, s: &mut ClientSettings, get: &dyn Fn(&str) -> Option<&'a Property>) -> Result<(), ConfigError> {
    let location = get("ssl.truststore.location");
    let password = get("ssl.truststore.password");
    if let Some(p) = get("ssl.truststore.certificates") {
        if let Some(l) = location {
            return Err(err(file, l, "ssl.truststore.certificates is also set; keep one of the two"));
        }
        let pem = normalize_pem(&p.value).map_err(|e| err(file, p, e))?;
        set(s, file, p, "ssl.ca.pem", pem);
    }
    let Some(p) = location else {
        if let Some(t) = get("ssl.truststore.type") {
            s.notices.push(format!("{}: ssl.truststore.type is not used without ssl.truststore.location", at(file, t)));
        }
        return Ok(());
    };
    let (path, bytes) = read_store(file, p)?;
    match sniff(&bytes) {
        k @ (StoreKind::Jks | StoreKind::Jceks) => Err(java_store_error(file, p, k, "ssl.truststore.type")),
        StoreKind::Pem => {
            set(s, file, p, "ssl.ca.location", path.display().to_string());
            Ok(())
        }
        StoreKind::Pkcs12 => {
            let pw = password.map_or("", |p| p.value.as_str());
            let pem = pkcs12_certificates(&bytes, pw).map_err(|e| err(file, p, format!("{}: {e}", named(p, &path))))?;
            s.notices.push(format!(
                "{}: the CA certificates of the PKCS12 truststore ({}) are handed to librdkafka as ssl.ca.pem",
                at(file, p),
                named(p, &path)
            ));
            set(s, file, p, "ssl.ca.pem", pem);
            Ok(())
        }
        StoreKind::Unknown => Err(err(file, p, format!("{} is neither PEM, PKCS12 nor JKS", named(p, &path)))),
    }
}

/// The keystore keys, as the client's own certificate and key.
pub(super) fn keystore<'a>(file: &PropertiesFile, s: &mut ClientSettings, get: &dyn Fn(&str) -> Option<&'a Property>) -> Result<(), ConfigError> {
    let location = get("ssl.keystore.location");
    let password = get("ssl.keystore.password");
    let key_password = get("ssl.key.password");
    let key = get("ssl.keystore.key");
    let chain = get("ssl.keystore.certificate.chain");
    if key.is_some() || chain.is_some() {
        if let Some(l) = location {
            return Err(err(file, l, "ssl.keystore.key/ssl.keystore.certificate.chain are also set; keep one way of giving the client key"));
        }
        let (Some(k), Some(c)) = (key, chain) else {
            let p = key.or(chain).expect("one is set");
            return Err(err(file, p, "ssl.keystore.key and ssl.keystore.certificate.chain go together; set both"));
        };
        // Never quote the key's text in an error.
        let key_pem = normalize_pem(&k.value).map_err(|e| err(file, k, e))?;
        let chain_pem = normalize_pem(&c.value).map_err(|e| err(file, c, e))?;
        set(s, file, k, "ssl.key.pem", key_pem);
        set(s, file, c, "ssl.certificate.pem", chain_pem);
        if let Some(kp) = key_password {
            set(s, file, kp, "ssl.key.password", kp.value.clone());
        }
        return Ok(());
    }
    let Some(p) = location else {
        if let Some(kp) = key_password {
            // For a PEM key given with librdkafka's own ssl.key.location.
            set(s, file, kp, "ssl.key.password", kp.value.clone());
        }
        return Ok(());
    };
    let (path, bytes) = read_store(file, p)?;
    match sniff(&bytes) {
        k @ (StoreKind::Jks | StoreKind::Jceks) => Err(java_store_error(file, p, k, "ssl.keystore.type")),
        StoreKind::Pem => {
            // A Java PEM keystore file holds the key and the chain.
            set(s, file, p, "ssl.key.location", path.display().to_string());
            set(s, file, p, "ssl.certificate.location", path.display().to_string());
            if let Some(kp) = key_password {
                set(s, file, kp, "ssl.key.password", kp.value.clone());
            }
            Ok(())
        }
        StoreKind::Pkcs12 => {
            let Some(pw) = password else {
                return Err(err(file, p, "a PKCS12 keystore needs ssl.keystore.password (librdkafka cannot open it without one)"));
            };
            if let Some(kp) = key_password.filter(|kp| kp.value != pw.value) {
                return Err(err(
                    file,
                    kp,
                    "a key password different from ssl.keystore.password is not supported by librdkafka; re-export the keystore with one password \
                     (e.g. openssl pkcs12 -export) or remove ssl.key.password if it is not needed",
                ));
            }
            let p12 = openssl::pkcs12::Pkcs12::from_der(&bytes).map_err(|_| err(file, p, format!("{} is not a valid PKCS12 file", named(p, &path))))?;
            if p12.parse2(&pw.value).is_err() {
                return Err(err(file, pw, format!("cannot open the keystore ({}) with this password", named(p, &path))));
            }
            set(s, file, p, "ssl.keystore.location", path.display().to_string());
            set(s, file, pw, "ssl.keystore.password", pw.value.clone());
            Ok(())
        }
        StoreKind::Unknown => Err(err(file, p, format!("{} is neither PEM, PKCS12 nor JKS", named(p, &path)))),
    }
}
