//! The worker's REST listeners as Connect 3.9 reads them (RestServer,
//! SSLUtils): `listeners` is a list of `http://host:port` and
//! `https://host:port`, each bound; an https listener takes its TLS keys
//! from `listeners.https.ssl.*` or, when no `listeners.https.` key is set
//! at all (Java's `valuesWithPrefixAllOrNothing`), from the worker's
//! top-level `ssl.*` keys; `rest.advertised.listener` picks which
//! listener names the worker.
//!
//! The keystore and truststore are read and the TLS context built here, at
//! start, so a wrong password or a missing file stops the worker with the
//! key at fault, never a worker whose every handshake fails.

use std::path::Path;
use std::sync::Arc;

use openssl::ssl::{SslAcceptor, SslMethod, SslVerifyMode};

use crate::front::mm2::keys::hint_prefixed;
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::keystore::{self, Fault, StoreType};

/// Connect's `listeners` default.
pub const DEFAULT_LISTENER: &str = "http://:8083";

/// The prefix of the https listener's own TLS keys.
pub const HTTPS_PREFIX: &str = "listeners.https.";

/// The TLS keys an https listener applies.
const APPLIED: &[&str] = &[
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
    "ssl.client.auth",
];

/// Java's other SSL keys: accepted under the prefix, with a warning that
/// OpenSSL's defaults stand in for them.
const NOT_APPLIED: &[&str] = &[
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.cipher.suites",
    "ssl.provider",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation",
    "ssl.endpoint.identification.algorithm",
    "ssl.engine.factory.class",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// One entry of `listeners`: where it binds (an empty host is every
/// interface, as in Connect).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    pub scheme: Scheme,
    pub host: String,
    pub port: u16,
}

impl Listener {
    pub fn bind(&self) -> (String, u16) {
        (if self.host.is_empty() { "0.0.0.0".to_string() } else { self.host.clone() }, self.port)
    }
}

/// The https listeners' TLS context, built at start.
#[derive(Clone)]
pub struct Tls(pub Arc<SslAcceptor>);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

fn example() -> &'static str {
    "write e.g. listeners=http://:8083 or listeners=https://:8443 (several separated by commas)"
}

/// `listeners`, every entry checked.
pub fn listeners(file: &PropertiesFile) -> Result<Vec<Listener>, ConfigError> {
    let (value, p) = match file.get("listeners") {
        Some(p) => (p.value.as_str(), Some(p)),
        None => (DEFAULT_LISTENER, None),
    };
    let bad = |why: String| match p {
        Some(p) => ConfigError::at(file, p, format!("listeners='{value}': {why}")).with_fix(example()),
        None => ConfigError::in_file(&file.path, why).with_fix(example()),
    };
    let mut out = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (scheme, rest) = entry.split_once("://").ok_or_else(|| bad(format!("'{entry}' is not written protocol://host:port")))?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => return Err(bad(format!("the protocol '{other}' of '{entry}' is neither http nor https"))),
        };
        let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad(format!("'{entry}' has no port")))?;
        let port: u16 = port.parse().map_err(|_| bad(format!("'{port}' is not a port")))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        out.push(Listener { scheme, host, port });
    }
    if out.is_empty() {
        return Err(bad("no listener is given".into()));
    }
    Ok(out)
}

/// The listener that names the worker (Connect's `advertisedUrl`):
/// `rest.advertised.listener`'s protocol, else http when an http listener
/// is listed, else https; the first listener of that protocol.
pub fn advertised<'a>(file: &PropertiesFile, listeners: &'a [Listener]) -> Result<&'a Listener, ConfigError> {
    let scheme = match file.get("rest.advertised.listener") {
        None if listeners.iter().any(|l| l.scheme == Scheme::Http) => Scheme::Http,
        None => Scheme::Https,
        Some(p) => match p.value.trim().to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            _ => {
                return Err(
                    ConfigError::at(file, p, format!("rest.advertised.listener='{}' is neither http nor https", p.value)).with_fix("write http or https")
                )
            }
        },
    };
    listeners.iter().find(|l| l.scheme == scheme).ok_or_else(|| {
        let p = file.get("rest.advertised.listener").expect("only a given protocol can be missing from the list");
        ConfigError::at(file, p, format!("rest.advertised.listener={} but listeners has no {} listener", p.value, p.value.trim()))
            .with_fix("add one to listeners or name the protocol of one listed")
    })
}

/// Where the https listener's TLS keys come from: `listeners.https.` when
/// any key has that prefix, else the top level (Java's all-or-nothing).
struct Keys<'a> {
    file: &'a PropertiesFile,
    prefix: &'static str,
}

impl<'a> Keys<'a> {
    fn of(file: &'a PropertiesFile) -> Self {
        let prefixed = file.props.iter().any(|p| p.key.starts_with(HTTPS_PREFIX));
        Keys { file, prefix: if prefixed { HTTPS_PREFIX } else { "" } }
    }

    fn get(&self, key: &str) -> Option<&'a Property> {
        self.file.get(&format!("{}{key}", self.prefix))
    }

    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }
}

/// Warnings for `listeners.https.*` keys not applied or not known.
pub fn lint(file: &PropertiesFile, warnings: &mut Vec<String>) {
    for p in file.props.iter().filter(|p| p.key.starts_with("listeners.")) {
        let Some(key) = p.key.strip_prefix(HTTPS_PREFIX) else {
            warnings.push(format!("{}: {} is not a Connect worker key this worker knows; it is ignored", file.at(p), p.key));
            continue;
        };
        if NOT_APPLIED.contains(&key) {
            warnings.push(format!(
                "{}: {} is not applied to the https listener; OpenSSL's defaults (TLS 1.2 and 1.3, its default ciphers) are used",
                file.at(p),
                p.key
            ));
        } else if !APPLIED.contains(&key) {
            warnings.push(format!(
                "{}: {} is not a TLS key of the https listener; it is ignored.{}",
                file.at(p),
                p.key,
                hint_prefixed(key, HTTPS_PREFIX, APPLIED.iter().copied())
            ));
        }
    }
}

fn store_type(keys: &Keys, key: &str) -> Result<StoreType, ConfigError> {
    match keys.get(key) {
        // Kafka's default for both stores; the JDK reads PKCS12 under it too.
        None => Ok(StoreType::Jks),
        Some(p) => StoreType::parse(&p.value).ok_or_else(|| {
            ConfigError::at(keys.file, p, format!("{}={} is not a store type this worker reads", p.key, p.value)).with_fix("write PKCS12, JKS, JCEKS or PEM")
        }),
    }
}

/// PEM stores work here but not on Java Connect, whose REST server
/// (Jetty) asks the JDK for a "PEM" KeyStore and stops with "PEM KeyStore
/// not available" (seen with Kafka 3.9): said, so a file is not taken
/// for one Java would start with.
fn pem_notice(keys: &Keys, type_key: &str, ty: StoreType, notices: &mut Vec<String>) {
    if let (StoreType::Pem, Some(p)) = (ty, keys.get(type_key)) {
        notices.push(format!(
            "{}: {}=PEM is read by this worker; Java Connect's REST server cannot read PEM stores (it stops with \"PEM KeyStore not available\"), \
             so with this file Java Connect would not start: use PKCS12 or JKS for a file both take",
            keys.file.at(p),
            p.key
        ));
    }
}

/// A store error named by the key at fault.
fn store_error(keys: &Keys, e: keystore::StoreError, location: &Property, password: &str, type_key: &str) -> ConfigError {
    let key = match e.fault {
        Fault::Location => location.key.clone(),
        Fault::Type => keys.name(type_key),
        Fault::StorePassword => keys.name(password),
        Fault::KeyPassword => keys.name("ssl.key.password"),
    };
    let fix = match e.fault {
        Fault::Location => format!("point {} at the store file", location.key),
        Fault::Type => format!("set {key} to the store's type"),
        Fault::StorePassword | Fault::KeyPassword => format!("set {key} to the password the store was made with"),
    };
    // A key at fault that is not set (a missing password) is on no line.
    let err = match keys.get(key.strip_prefix(keys.prefix).unwrap_or(&key)) {
        Some(at) => ConfigError::at(keys.file, at, format!("{key}: {e}")),
        None => ConfigError::in_file(&keys.file.path, format!("{key} (not set): {e}")),
    };
    err.with_key(key).with_fix(fix)
}

/// The https listener's TLS context, when `listeners` has one.
pub fn tls(file: &PropertiesFile, listeners: &[Listener], notices: &mut Vec<String>) -> Result<Option<Tls>, ConfigError> {
    if !listeners.iter().any(|l| l.scheme == Scheme::Https) {
        return Ok(None);
    }
    let keys = Keys::of(file);
    let Some(location) = keys.get("ssl.keystore.location") else {
        return Err(ConfigError::in_file(&file.path, format!("an https listener needs a keystore and {} is not set", keys.name("ssl.keystore.location")))
            .with_key(keys.name("ssl.keystore.location"))
            .with_fix(format!(
                "set {HTTPS_PREFIX}ssl.keystore.location and {HTTPS_PREFIX}ssl.keystore.password (or, with no {HTTPS_PREFIX}* key, the worker's ssl.keystore.*)"
            )));
    };
    let value = |k: &str| keys.get(k).map(|p| p.value.as_str());
    let ty = store_type(&keys, "ssl.keystore.type")?;
    pem_notice(&keys, "ssl.keystore.type", ty, notices);
    let material = keystore::read_keystore(Path::new(location.value.trim()), ty, value("ssl.keystore.password"), value("ssl.key.password"))
        .map_err(|e| store_error(&keys, e, location, "ssl.keystore.password", "ssl.keystore.type"))?;
    if !material.others.is_empty() {
        notices.push(format!(
            "{}: the https listener serves the key '{}' of {}; its other keys ({}) are not used",
            file.at(location),
            material.alias,
            location.value.trim(),
            material.others.join(", ")
        ));
    }
    let bad = |why: String| ConfigError::at(file, location, format!("{}: {why}", location.key));
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).map_err(|e| bad(e.to_string()))?;
    b.set_private_key(&material.key).map_err(|e| bad(format!("the private key cannot be used: {e}")))?;
    b.set_certificate(&material.chain[0]).map_err(|e| bad(format!("the certificate cannot be used: {e}")))?;
    for c in &material.chain[1..] {
        b.add_extra_chain_cert(c.clone()).map_err(|e| bad(e.to_string()))?;
    }
    b.check_private_key().map_err(|_| bad("the private key does not match its certificate".into()))?;
    client_auth(&keys, &mut b, notices)?;
    Ok(Some(Tls(Arc::new(b.build()))))
}

/// `ssl.client.auth` (none, requested, required) and the truststore the
/// clients' certificates are checked against.
fn client_auth(keys: &Keys, b: &mut openssl::ssl::SslAcceptorBuilder, notices: &mut Vec<String>) -> Result<(), ConfigError> {
    let mode = match keys.get("ssl.client.auth") {
        None => SslVerifyMode::NONE,
        Some(p) => match p.value.trim().to_ascii_lowercase().as_str() {
            "none" => SslVerifyMode::NONE,
            "requested" => SslVerifyMode::PEER,
            "required" => SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
            _ => {
                return Err(ConfigError::at(keys.file, p, format!("{}={} is not a client authentication mode", p.key, p.value))
                    .with_fix("write none, requested or required"))
            }
        },
    };
    b.set_verify(mode);
    if mode == SslVerifyMode::NONE {
        return Ok(());
    }
    let Some(location) = keys.get("ssl.truststore.location") else {
        // As Java, which then trusts the JDK's default CAs.
        notices.push(format!(
            "{}: client certificates are checked against the system's default CAs, as {} is not set",
            keys.file.path.display(),
            keys.name("ssl.truststore.location")
        ));
        return b.set_default_verify_paths().map_err(|e| ConfigError::in_file(&keys.file.path, format!("the system's default CAs cannot be loaded: {e}")));
    };
    let ty = store_type(keys, "ssl.truststore.type")?;
    pem_notice(keys, "ssl.truststore.type", ty, notices);
    let password = keys.get("ssl.truststore.password").map(|p| p.value.as_str());
    let certs = keystore::read_truststore(Path::new(location.value.trim()), ty, password)
        .map_err(|e| store_error(keys, e, location, "ssl.truststore.password", "ssl.truststore.type"))?;
    for c in certs {
        let bad = |e: openssl::error::ErrorStack| ConfigError::at(keys.file, location, format!("{}: {e}", location.key));
        b.add_client_ca(&c).map_err(bad)?;
        b.cert_store_mut().add_cert(c).map_err(bad)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
