//! The trust and key stores of the Java clients, as librdkafka takes them.
//! JKS, JCEKS and PKCS12 stores are read in memory by
//! [`crate::kafka::keystore`] (the reader the Connect listener uses too),
//! with the store and key passwords, and handed to librdkafka as PEM held
//! in memory (`ssl.ca.pem`, `ssl.certificate.pem`, `ssl.key.pem`, the key
//! as unencrypted PKCS#8): no key is ever written to disk. PEM files go by
//! their path. The declared type is read as Java 17 reads it (JKS and
//! PKCS12 read either; JCEKS reads JCEKS or JKS); with no type key the
//! bytes decide. PEM given inline is rebuilt with its line breaks, as Java
//! accepts it with `\n` escapes.

use std::path::{Path, PathBuf};

use super::place::{at, err, set};
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::keystore::{self, Fault, StoreError, StoreType};
use crate::kafka::secrets::is_secret;
use crate::kafka::settings::ClientSettings;

/// A store's path for a message, or the key naming it when the path is
/// itself a secret (librdkafka treats ssl.key.location as one).
fn named(p: &Property, path: &Path) -> String {
    if is_secret(&p.key) {
        format!("the file in {}", p.key)
    } else {
        path.display().to_string()
    }
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

type Get<'g, 'a> = &'g dyn Fn(&str) -> Option<&'a Property>;

/// The store type: the type key's (Java's names, any case), else what the
/// bytes are (Kafka's default JKS reads JKS and PKCS12; PEM and JCEKS
/// without a type are taken as they are rather than refused).
fn store_type(file: &PropertiesFile, get: Get, type_key: &str, path: &Path) -> Result<StoreType, ConfigError> {
    if let Some(t) = get(type_key) {
        return StoreType::parse(&t.value).ok_or_else(|| err(file, t, format!("'{}' is not a store type read here; use JKS, JCEKS, PKCS12 or PEM", t.value)));
    }
    Ok(keystore::type_of(path).unwrap_or(StoreType::Jks))
}

/// A store error on the line of the key at fault (the location when that
/// key is not set), the path named as [`named`] says; never a password.
fn store_error(file: &PropertiesFile, get: Get, e: StoreError, location: &Property, keys: [&str; 3]) -> ConfigError {
    let [type_key, password_key, key_password_key] = keys;
    let message = e.message.replace(location.value.trim(), &named(location, Path::new(location.value.trim())));
    let at_fault = match e.fault {
        Fault::Location => None,
        Fault::Type => get(type_key),
        Fault::StorePassword => get(password_key),
        Fault::KeyPassword => get(key_password_key).or_else(|| get(password_key)),
    };
    match (e.fault, at_fault) {
        (Fault::Location, _) => err(file, location, message),
        (_, Some(p)) => err(file, p, message),
        (Fault::Type, None) => err(file, location, format!("{message}; set {type_key}")),
        (_, None) => err(file, location, format!("{message}; {password_key} is not set")),
    }
}

fn pem_of(certs: &[openssl::x509::X509]) -> String {
    certs.iter().map(|c| String::from_utf8(c.to_pem().expect("a parsed certificate encodes")).expect("PEM is ASCII")).collect()
}

fn skipped_notice(file: &PropertiesFile, s: &mut ClientSettings, p: &Property, secrets: &[String]) {
    if !secrets.is_empty() {
        s.notices.push(format!("{}: the secret-key entries of the store ({}) are skipped: TLS has no use for them", at(file, p), secrets.join(", ")));
    }
}

/// The truststore keys, as the CA librdkafka verifies brokers with.
pub(super) fn truststore(file: &PropertiesFile, s: &mut ClientSettings, get: Get) -> Result<(), ConfigError> {
    let location = get("ssl.truststore.location");
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
    let path = PathBuf::from(p.value.trim());
    let ty = store_type(file, get, "ssl.truststore.type", &path)?;
    let password = get("ssl.truststore.password").map(|p| p.value.as_str());
    let keys = ["ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.password"];
    let (certs, secrets) = keystore::read_truststore_entries(&path, ty, password).map_err(|e| store_error(file, get, e, p, keys))?;
    skipped_notice(file, s, p, &secrets);
    if ty == StoreType::Pem {
        set(s, file, p, "ssl.ca.location", path.display().to_string());
        return Ok(());
    }
    s.notices.push(format!(
        "{}: the {} CA certificate(s) of the truststore ({}) are handed to librdkafka in memory as ssl.ca.pem",
        at(file, p),
        certs.len(),
        named(p, &path)
    ));
    set(s, file, p, "ssl.ca.pem", pem_of(&certs));
    Ok(())
}

/// The keystore keys, as the client's own certificate and key.
pub(super) fn keystore(file: &PropertiesFile, s: &mut ClientSettings, get: Get) -> Result<(), ConfigError> {
    let location = get("ssl.keystore.location");
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
    let path = PathBuf::from(p.value.trim());
    let ty = store_type(file, get, "ssl.keystore.type", &path)?;
    let password = get("ssl.keystore.password").map(|p| p.value.as_str());
    let keys = ["ssl.keystore.type", "ssl.keystore.password", "ssl.key.password"];
    let m = keystore::read_keystore(&path, ty, password, key_password.map(|k| k.value.as_str())).map_err(|e| store_error(file, get, e, p, keys))?;
    keystore::check_validity(&path, &m).map_err(|e| store_error(file, get, e, p, keys))?;
    if !m.others.is_empty() {
        return Err(several_keys(file, p, &path, &m));
    }
    skipped_notice(file, s, p, &m.secrets);
    if ty == StoreType::Pem {
        // A Java PEM keystore file holds the key and the chain; librdkafka
        // reads it (and decrypts its key) itself.
        set(s, file, p, "ssl.key.location", path.display().to_string());
        set(s, file, p, "ssl.certificate.location", path.display().to_string());
        if let Some(kp) = key_password {
            set(s, file, kp, "ssl.key.password", kp.value.clone());
        }
        return Ok(());
    }
    let key_pem = m.key.private_key_to_pem_pkcs8().map_err(|e| err(file, p, format!("the private key cannot be encoded: {e}")))?;
    s.notices.push(format!(
        "{}: the private key{} of the keystore ({}) and its {} certificate(s) are handed to librdkafka in memory as ssl.key.pem and ssl.certificate.pem",
        at(file, p),
        if m.alias.is_empty() { String::new() } else { format!(" '{}'", m.alias) },
        named(p, &path),
        m.chain.len()
    ));
    set(s, file, p, "ssl.key.pem", String::from_utf8(key_pem).expect("PEM is ASCII"));
    set(s, file, p, "ssl.certificate.pem", pem_of(&m.chain));
    Ok(())
}

/// Java's SunX509 key manager picks among several keys by what the broker
/// asks for in each handshake; librdkafka takes one key, so a store with
/// several is refused with the command that keeps one.
fn several_keys(file: &PropertiesFile, p: &Property, path: &Path, m: &keystore::KeyMaterial) -> ConfigError {
    let mut aliases = vec![m.alias.clone()];
    aliases.extend(m.others.iter().cloned());
    aliases.sort();
    let src = named(p, path);
    let src_arg = if is_secret(&p.key) { format!("<{src}>") } else { src.clone() };
    err(
        file,
        p,
        format!(
            "{src} holds {} private keys ({}); Java picks one per handshake, librdkafka takes one: make a store with the one to use, e.g.\n    \
             keytool -importkeystore -srckeystore {src_arg} -destkeystore <new store> -srcalias <one of them>\n\
             and set ssl.keystore.location to it",
            aliases.len(),
            aliases.join(", "),
        ),
    )
}
