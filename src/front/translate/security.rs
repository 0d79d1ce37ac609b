//! TLS and SASL keys of the Java clients, translated to librdkafka's.
//!
//! Java clients read trust and key stores (JKS by default, PKCS12, PEM) and a
//! JAAS login module line; librdkafka reads PEM files or strings, a PKCS12
//! keystore, and plain `sasl.*` keys. [`translate`] handles every
//! `security.protocol`, `ssl.*` and `sasl.*` key of a properties file at
//! once, because the meaning of one depends on others (a store's type,
//! location and password; the JAAS module and the mechanism). Stores are
//! sniffed by their magic bytes, not their declared type: a `.jks` that is
//! really PKCS12 works, a real JKS is refused with the `keytool` command that
//! converts it. Secret values never reach a message: see [`is_secret`].
//!
//! What the translated keys mean when a cluster refuses them is told by
//! [`crate::kafka::auth::auth_failure`].

use std::path::{Path, PathBuf};

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::front::translate::jaas;
use crate::kafka::conf::{accepts, Refusal};
use crate::kafka::secrets::{is_secret, shown};
use crate::kafka::settings::{ClientSettings, Origin};

/// Keys this module translates (all of them, including librdkafka's own).
pub fn owns(key: &str) -> bool {
    key == "security.protocol" || key.starts_with("ssl.") || key.starts_with("sasl.")
}

/// Java SASL mechanisms librdkafka knows (upper case, as it compares them).
const MECHANISMS: &[&str] = &["GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];

/// librdkafka's default `sasl.kerberos.kinit.cmd`, with `kinit` to be replaced.
const KINIT_TEMPLATE: &str = "%{kinit} -R -t \"%{sasl.kerberos.keytab}\" -k %{sasl.kerberos.principal} || \
                              %{kinit} -t \"%{sasl.kerberos.keytab}\" -k %{sasl.kerberos.principal}";

const NO_GSSAPI: &str = "this mirror-maker is built without Kerberos (GSSAPI) support; use SCRAM-SHA-512, SCRAM-SHA-256, PLAIN or OAUTHBEARER \
                         (set sasl.mechanism and a matching sasl.jaas.config), or build with the rdkafka 'gssapi' feature";

fn at(file: &PropertiesFile, p: &Property) -> String {
    format!("{}:{}", file.path.display(), p.line)
}

fn err(file: &PropertiesFile, p: &Property, msg: impl std::fmt::Display) -> ConfigError {
    ConfigError(format!("{}: {}: {msg}", at(file, p), p.key))
}

fn set(s: &mut ClientSettings, file: &PropertiesFile, p: &Property, key: &str, value: impl Into<String>) {
    s.entries.insert(key.to_string(), (value.into(), Origin::File { at: at(file, p), key: p.key.clone() }));
}

/// What a store file really is, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Jks,
    Jceks,
    Pkcs12,
    Pem,
    Unknown,
}

pub fn sniff(bytes: &[u8]) -> StoreKind {
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
pub fn normalize_pem(text: &str) -> Result<String, String> {
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

/// Translates every key [`owns`] returns true for; `config::translate`
/// skips them and calls this once.
///
/// In steps: the protocol, the keys it uses (the others warned about),
/// the stores and SASL (each from several keys), then each key alone.
pub fn translate(file: &PropertiesFile, s: &mut ClientSettings) -> Result<(), ConfigError> {
    let given: Vec<&Property> =
        file.props.iter().filter(|p| owns(&p.key) && (!p.value.is_empty() || p.key == "ssl.endpoint.identification.algorithm")).collect();

    let (protocol, protocol_p) = security_protocol(file, s, &given)?;
    let props = used_keys(file, s, given, &protocol, protocol_p);
    let get = |k: &str| props.iter().copied().find(|p| p.key == k);

    truststore(file, s, &get)?;
    keystore(file, s, &get)?;
    sasl(file, s, &get, protocol.starts_with("SASL_"))?;

    for p in &props {
        one_key(file, s, p)?;
    }
    Ok(())
}

/// `security.protocol` in upper case (PLAINTEXT, Java's default, when the
/// file has none) and its line, set for librdkafka in lower case; any other
/// value is refused.
fn security_protocol<'a>(file: &PropertiesFile, s: &mut ClientSettings, given: &[&'a Property]) -> Result<(String, Option<&'a Property>), ConfigError> {
    let mut protocol = "PLAINTEXT".to_string();
    let protocol_p = given.iter().copied().find(|p| p.key == "security.protocol");
    if let Some(p) = protocol_p {
        protocol = p.value.trim().to_ascii_uppercase();
        if !["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].contains(&protocol.as_str()) {
            return Err(err(file, p, format!("'{}' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", p.value)));
        }
        set(s, file, p, "security.protocol", protocol.to_ascii_lowercase());
    }
    Ok((protocol, protocol_p))
}

/// The keys of `given` that `protocol` uses, with one warning naming the
/// others and the protocol that would use them.
///
/// Java builds the channel for the protocol and reads only its keys: SSL
/// keys on PLAINTEXT or SASL_PLAINTEXT, SASL keys (a JAAS line among them)
/// on PLAINTEXT or SSL are never looked at, so a file carrying them ran.
/// They are left out here too (librdkafka would refuse some, e.g. a JKS
/// store or a JAAS line for another mechanism), with one warning.
fn used_keys<'a>(file: &PropertiesFile, s: &mut ClientSettings, given: Vec<&'a Property>, protocol: &str, protocol_p: Option<&Property>) -> Vec<&'a Property> {
    let uses_ssl = protocol.ends_with("SSL");
    let uses_sasl = protocol.starts_with("SASL_");
    let (props, unused): (Vec<&Property>, Vec<&Property>) =
        given.into_iter().partition(|p| p.key == "security.protocol" || (p.key.starts_with("ssl.") && uses_ssl) || (p.key.starts_with("sasl.") && uses_sasl));
    if !unused.is_empty() {
        let now = match protocol_p {
            Some(p) => format!("security.protocol is {protocol} (line {})", p.line),
            None => "security.protocol is not set (PLAINTEXT, the Java default)".to_string(),
        };
        let want = match (unused.iter().any(|p| p.key.starts_with("sasl.")), unused.iter().any(|p| p.key.starts_with("ssl."))) {
            (true, true) => "SASL_SSL",
            (true, false) if uses_ssl => "SASL_SSL",
            (true, false) => "SASL_PLAINTEXT or SASL_SSL",
            _ if uses_sasl => "SASL_SSL",
            _ => "SSL or SASL_SSL",
        };
        let keys: Vec<String> = unused.iter().map(|p| format!("{} (line {})", p.key, p.line)).collect();
        s.warnings.push(format!(
            "{}: {now}, so these keys are not used, as Java does not use them on that protocol either: {}. \
             If they were meant to be used, set security.protocol={want}",
            file.path.display(),
            keys.join(", ")
        ));
    }
    props
}

/// One used key, after the stores and SASL took theirs: translated,
/// passed on, ignored with a warning, or refused.
fn one_key(file: &PropertiesFile, s: &mut ClientSettings, p: &Property) -> Result<(), ConfigError> {
    let key = p.key.as_str();
    match key {
        "security.protocol" | "sasl.mechanism" | "sasl.mechanisms" | "sasl.jaas.config" | "sasl.login.callback.handler.class" => {}
        k if k.starts_with("ssl.truststore.") || k.starts_with("ssl.keystore.") || k == "ssl.key.password" => {}
        "ssl.endpoint.identification.algorithm" => match p.value.trim().to_ascii_lowercase().as_str() {
            "" => {
                s.warnings.push(format!(
                    "{}: ssl.endpoint.identification.algorithm is empty: the broker certificate's host name is NOT checked \
                     (as in Java; a man-in-the-middle with any certificate from your CA is accepted). Remove the line to check it",
                    at(file, p)
                ));
                set(s, file, p, key, "none");
            }
            v @ ("https" | "none") => set(s, file, p, key, v),
            _ => return Err(err(file, p, format!("'{}' is not supported; use https (check the host name) or an empty value (don't)", p.value))),
        },
        "ssl.cipher.suites" => cipher_suites(file, s, p)?,
        "ssl.protocol" | "ssl.enabled.protocols" => s.warnings.push(format!(
            "{}: {key} is ignored: TLS versions follow OpenSSL's defaults (TLS 1.2 and 1.3); restrict them with OPENSSL_CONF (MinProtocol) if needed",
            at(file, p)
        )),
        "ssl.provider" | "ssl.keymanager.algorithm" | "ssl.trustmanager.algorithm" | "ssl.secure.random.implementation" => {
            s.warnings.push(format!("{}: {key} is ignored: Java security provider settings have no OpenSSL equivalent", at(file, p)))
        }
        "ssl.client.auth" | "ssl.principal.mapping.rules" => s.warnings.push(format!("{}: {key} is ignored: it is a broker setting", at(file, p))),
        "ssl.engine.factory.class" => {
            return Err(err(
                file,
                p,
                "a Java SSL engine factory cannot be loaded; remove it and configure the stores with ssl.truststore.*/ssl.keystore.* (PEM or PKCS12)",
            ))
        }
        "sasl.login.class" | "sasl.client.callback.handler.class" => {
            return Err(err(file, p, "custom Java login classes cannot be loaded; use a standard sasl.jaas.config (PLAIN, SCRAM or OAUTHBEARER) instead"))
        }
        "sasl.kerberos.kinit.cmd" => {
            let cmd = KINIT_TEMPLATE.replace("%{kinit}", p.value.trim());
            pass(file, s, p, "sasl.kerberos.kinit.cmd", &cmd)?;
        }
        k if k.starts_with("sasl.kerberos.ticket.renew.")
            || k.starts_with("sasl.login.")
            || k.starts_with("sasl.oauthbearer.jwks.endpoint.")
            || k.starts_with("sasl.oauthbearer.expected.")
            || k == "sasl.oauthbearer.clock.skew.seconds" =>
        {
            s.warnings.push(format!("{}: {key} is ignored: librdkafka has no equivalent (its own refresh logic applies)", at(file, p)))
        }
        _ => pass(file, s, p, key, &p.value)?,
    }
    Ok(())
}

/// A key librdkafka may know under the same name.
fn pass(file: &PropertiesFile, s: &mut ClientSettings, p: &Property, key: &str, value: &str) -> Result<(), ConfigError> {
    match accepts(key, value) {
        Ok(()) => set(s, file, p, key, value),
        Err(Refusal::Unknown) => {
            s.warnings.push(format!("{}: unknown key '{}' is ignored (neither the Java clients nor librdkafka know it)", at(file, p), p.key))
        }
        Err(Refusal::Invalid(_)) if key.starts_with("sasl.kerberos.") => s.warnings.push(format!("{}: {} is ignored: {NO_GSSAPI}", at(file, p), p.key)),
        Err(Refusal::Invalid(msg)) => {
            return Err(err(file, p, format!("'{}' is not accepted: {msg}", shown(key, value))));
        }
    }
    Ok(())
}

fn truststore<'a>(file: &PropertiesFile, s: &mut ClientSettings, get: &dyn Fn(&str) -> Option<&'a Property>) -> Result<(), ConfigError> {
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

fn keystore<'a>(file: &PropertiesFile, s: &mut ClientSettings, get: &dyn Fn(&str) -> Option<&'a Property>) -> Result<(), ConfigError> {
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

fn cipher_suites(file: &PropertiesFile, s: &mut ClientSettings, p: &Property) -> Result<(), ConfigError> {
    let mut names = Vec::new();
    let mut tls13 = Vec::new();
    for suite in p.value.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        if suite.starts_with("TLS_") && !suite.contains("_WITH_") {
            tls13.push(suite);
            continue;
        }
        if suite.starts_with("TLS_") || suite.starts_with("SSL_") {
            let iana = suite.replacen("SSL_", "TLS_", 1);
            let name = openssl::ssl::cipher_name(&iana);
            if name == "(NONE)" {
                return Err(err(file, p, format!("{suite} is not a cipher suite OpenSSL knows; list OpenSSL or IANA names")));
            }
            names.push(name.to_string());
        } else {
            names.push(suite.to_string());
        }
    }
    if !tls13.is_empty() || !names.is_empty() {
        s.warnings.push(format!(
            "{}: ssl.cipher.suites restricts TLS 1.2 and older only; TLS 1.3 suites cannot be restricted through librdkafka{}",
            at(file, p),
            if tls13.is_empty() { String::new() } else { format!(" ({} dropped)", tls13.join(", ")) }
        ));
    }
    if !names.is_empty() {
        set(s, file, p, "ssl.cipher.suites", names.join(":"));
    }
    Ok(())
}

fn sasl<'a>(file: &PropertiesFile, s: &mut ClientSettings, get: &dyn Fn(&str) -> Option<&'a Property>, sasl_protocol: bool) -> Result<(), ConfigError> {
    let mech_p = get("sasl.mechanism").or_else(|| get("sasl.mechanisms"));
    let mech = mech_p.map(|p| p.value.trim().to_ascii_uppercase());
    if let (Some(p), Some(m)) = (mech_p, &mech) {
        if !MECHANISMS.contains(&m.as_str()) {
            return Err(err(file, p, format!("'{}' is not one of {}", p.value, MECHANISMS.join(", "))));
        }
        set(s, file, p, "sasl.mechanisms", m.clone());
    }
    let handler = get("sasl.login.callback.handler.class");
    let oidc = match handler {
        Some(h) if h.value.trim().ends_with(".OAuthBearerLoginCallbackHandler") => true,
        Some(h) => {
            return Err(err(file, h, "custom Java callback handlers cannot be loaded; only Kafka's OAuthBearerLoginCallbackHandler (OIDC) is translated"))
        }
        None => false,
    };
    let effective = mech.clone().unwrap_or_else(|| "GSSAPI".into());
    if let Some(jp) = get("sasl.jaas.config") {
        let j = jaas::parse(&jp.value).map_err(|e| err(file, jp, e))?;
        let need = |wanted: &[&str], example: &str| -> Result<(), ConfigError> {
            if wanted.contains(&effective.as_str()) {
                return Ok(());
            }
            let now = match mech_p {
                Some(p) => format!("{}:{} sets sasl.mechanism={}", file.path.display(), p.line, effective),
                None => "sasl.mechanism is not set (Java's default is GSSAPI)".into(),
            };
            Err(err(file, jp, format!("{} needs sasl.mechanism={example}, but {now}", j.module_name())))
        };
        match j.module_name() {
            "PlainLoginModule" | "ScramLoginModule" => {
                if j.module_name() == "PlainLoginModule" {
                    need(&["PLAIN"], "PLAIN")?;
                } else {
                    need(&["SCRAM-SHA-256", "SCRAM-SHA-512"], "SCRAM-SHA-512 (or SCRAM-SHA-256)")?;
                    if j.get("tokenauth").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
                        return Err(err(file, jp, "tokenauth=true (delegation tokens) is not supported by librdkafka; use a SCRAM user's credentials"));
                    }
                }
                let (Some(user), Some(pass)) = (j.get("username"), j.get("password")) else {
                    return Err(err(file, jp, format!("{} needs both username=\"...\" and password=\"...\"", j.module_name())));
                };
                set(s, file, jp, "sasl.username", user);
                set(s, file, jp, "sasl.password", pass);
            }
            "Krb5LoginModule" => return Err(err(file, jp, format!("Krb5LoginModule: {NO_GSSAPI}"))),
            "OAuthBearerLoginModule" => {
                need(&["OAUTHBEARER"], "OAUTHBEARER")?;
                oauthbearer(file, s, jp, &j, oidc, get)?;
            }
            _ => {
                return Err(err(
                    file,
                    jp,
                    format!("the login module {} is not supported; use PlainLoginModule, ScramLoginModule or OAuthBearerLoginModule", j.module),
                ))
            }
        }
    } else if oidc {
        return Err(err(
            file,
            handler.expect("oidc"),
            "needs sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"...\" clientSecret=\"...\";",
        ));
    }
    if sasl_protocol && effective == "GSSAPI" {
        let what = match mech_p {
            Some(p) => format!("{}:{}: sasl.mechanism=GSSAPI", file.path.display(), p.line),
            None => format!("{}: security.protocol is SASL_* and sasl.mechanism is not set (Java's default is GSSAPI)", file.path.display()),
        };
        return Err(ConfigError(format!("{what}: {NO_GSSAPI}")));
    }
    Ok(())
}

fn oauthbearer<'a>(
    file: &PropertiesFile,
    s: &mut ClientSettings,
    jp: &Property,
    j: &jaas::JaasConfig,
    oidc: bool,
    get: &dyn Fn(&str) -> Option<&'a Property>,
) -> Result<(), ConfigError> {
    let extensions: Vec<String> = j
        .options
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("extension_").or_else(|| k.strip_prefix("unsecuredLoginExtension_")).map(|n| format!("{n}={v}")))
        .collect();
    if oidc {
        if accepts("sasl.oauthbearer.method", "oidc").is_err() {
            return Err(err(file, jp, "OIDC (OAuthBearerLoginCallbackHandler) needs librdkafka built with libcurl, which this build is not (the rdkafka crate's curl feature); use SCRAM or PLAIN, or an unsecured JWT for tests"));
        }
        let (Some(id), Some(secret)) = (j.get("clientId"), j.get("clientSecret")) else {
            return Err(err(file, jp, "OAuthBearerLoginModule with OAuthBearerLoginCallbackHandler needs clientId=\"...\" and clientSecret=\"...\""));
        };
        if get("sasl.oauthbearer.token.endpoint.url").is_none() {
            return Err(err(file, jp, "OIDC needs sasl.oauthbearer.token.endpoint.url (the identity provider's token URL)"));
        }
        set(s, file, jp, "sasl.oauthbearer.method", "oidc");
        set(s, file, jp, "sasl.oauthbearer.client.id", id);
        set(s, file, jp, "sasl.oauthbearer.client.secret", secret);
        if let Some(scope) = j.get("scope") {
            set(s, file, jp, "sasl.oauthbearer.scope", scope);
        }
        if !extensions.is_empty() {
            set(s, file, jp, "sasl.oauthbearer.extensions", extensions.join(","));
        }
        return Ok(());
    }
    // Java's unsecured JWT handler: claims come from unsecuredLogin* options.
    let Some(principal) = j.get("unsecuredLoginStringClaim_sub") else {
        return Err(err(
            file,
            jp,
            "OAuthBearerLoginModule needs either sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler \
             (OIDC) or unsecuredLoginStringClaim_sub=\"...\" (unsecured JWT, for tests)",
        ));
    };
    let mut parts = vec![format!("principal={principal}")];
    let principal_claim = j.get("unsecuredLoginPrincipalClaimName");
    let mut ignored = Vec::new();
    for (n, (k, v)) in j.options.iter().enumerate() {
        match k.as_str() {
            "unsecuredLoginStringClaim_sub" => {}
            "unsecuredLoginListClaim_scope" => {
                // Java: the first character is the list's separator.
                let mut chars = v.chars();
                let scope: Vec<&str> = match chars.next() {
                    Some(sep) => chars.as_str().split(sep).filter(|x| !x.is_empty()).collect(),
                    None => Vec::new(),
                };
                parts.push(format!("scope={}", scope.join(",")));
            }
            "unsecuredLoginLifetimeSeconds" => parts.push(format!("lifeSeconds={v}")),
            "unsecuredLoginPrincipalClaimName" => parts.push(format!("principalClaimName={v}")),
            "unsecuredLoginScopeClaimName" => parts.push(format!("scopeClaimName={v}")),
            k if k.starts_with("extension_") || k.starts_with("unsecuredLoginExtension_") => {}
            k if principal_claim.is_some_and(|c| k == format!("unsecuredLoginStringClaim_{c}")) => {}
            // Named by place: a key may be a piece of an unquoted value.
            _ => ignored.push((n + 1).to_string()),
        }
    }
    if !ignored.is_empty() {
        s.warnings.push(format!(
            "{}: sasl.jaas.config option(s) {} (counted from the first key=value) have no librdkafka equivalent and are ignored",
            at(file, jp),
            ignored.join(", ")
        ));
    }
    parts.extend(extensions.iter().map(|e| format!("extension_{e}")));
    set(s, file, jp, "enable.sasl.oauthbearer.unsecure.jwt", "true");
    set(s, file, jp, "sasl.oauthbearer.config", parts.join(" "));
    s.warnings.push(format!("{}: OAUTHBEARER with an unsecured JWT (no signature): for tests only", at(file, jp)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::properties::parse;
    use crate::front::translate::translate as translate_file;
    use crate::kafka::conf::sensitive_keys as librdkafka_sensitive_keys;
    use crate::kafka::secrets::{secret_keys, JAVA_TRANSLATIONS};
    use crate::kafka::settings::Role;

    fn producer(text: &str) -> Result<ClientSettings, ConfigError> {
        translate_file(&parse(Path::new("p.properties"), text.as_bytes()).unwrap(), Role::Producer)
    }

    /// A file whose `ssl.*`/`sasl.*` keys are used: without a
    /// security.protocol of its own it gets the one that uses them all,
    /// last, so the lines the tests name stay where they are.
    fn used(text: &str) -> String {
        if text.contains("security.protocol") {
            format!("bootstrap.servers=h:1\n{text}")
        } else {
            let protocol = if text.contains("sasl.") { "SASL_SSL" } else { "SSL" };
            format!("bootstrap.servers=h:1\n{text}\nsecurity.protocol={protocol}")
        }
    }

    fn ok(text: &str) -> ClientSettings {
        producer(&used(text)).unwrap_or_else(|e| panic!("{e}"))
    }

    fn fails(text: &str) -> String {
        producer(&used(text)).map(|s| format!("{:?}", s.entries)).expect_err("should fail").0
    }

    fn dir() -> PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!("mm-security-unit-{}-{}", std::process::id(), N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A self-signed certificate and its key, made with the openssl crate.
    fn cert_and_key() -> (openssl::x509::X509, openssl::pkey::PKey<openssl::pkey::Private>) {
        use openssl::{asn1::Asn1Time, bn::BigNum, ec, hash::MessageDigest, nid::Nid, pkey::PKey, x509};
        let group = ec::EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        let key = PKey::from_ec_key(ec::EcKey::generate(&group).unwrap()).unwrap();
        let mut name = x509::X509NameBuilder::new().unwrap();
        name.append_entry_by_text("CN", "unit test CA").unwrap();
        let name = name.build();
        let mut b = x509::X509Builder::new().unwrap();
        b.set_version(2).unwrap();
        b.set_serial_number(&BigNum::from_u32(7).unwrap().to_asn1_integer().unwrap()).unwrap();
        b.set_subject_name(&name).unwrap();
        b.set_issuer_name(&name).unwrap();
        b.set_pubkey(&key).unwrap();
        b.set_not_before(&Asn1Time::days_from_now(0).unwrap()).unwrap();
        b.set_not_after(&Asn1Time::days_from_now(2).unwrap()).unwrap();
        b.sign(&key, MessageDigest::sha256()).unwrap();
        (b.build(), key)
    }

    #[test]
    fn security_protocol_any_case() {
        assert_eq!(ok("security.protocol=sasl_ssl\nsasl.mechanism=plain\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=p;").get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(ok("security.protocol=Ssl").get("security.protocol"), Some("ssl"));
        assert!(fails("security.protocol=TLS").contains("p.properties:2: security.protocol: 'TLS' is not one of"));
    }

    #[test]
    fn pem_truststore_location_and_certificates() {
        let d = dir();
        let (cert, _) = cert_and_key();
        let pem = String::from_utf8(cert.to_pem().unwrap()).unwrap();
        let ca = d.join("ca.pem");
        std::fs::write(&ca, &pem).unwrap();
        let s = ok(&format!("ssl.truststore.type=PEM\nssl.truststore.location={}", ca.display()));
        assert_eq!(s.get("ssl.ca.location"), Some(ca.to_str().unwrap()));
        // Java-style: the whole PEM on one line with \n escapes (written as \\n in the file).
        let one_line = pem.trim_end().replace('\n', "\\\\n");
        let s = ok(&format!("ssl.truststore.type=PEM\nssl.truststore.certificates={one_line}"));
        assert_eq!(s.get("ssl.ca.pem"), Some(pem.as_str()));
        // Continuation lines lose the line breaks entirely.
        let continued = pem.trim_end().replace('\n', "\\\n   ");
        let s = ok(&format!("ssl.truststore.certificates={continued}"));
        assert_eq!(s.get("ssl.ca.pem"), Some(pem.as_str()));
        assert!(fails("ssl.truststore.certificates=not a pem").contains("ssl.truststore.certificates: it holds no PEM block"));
    }

    #[test]
    fn pkcs12_truststore_becomes_ca_pem_whatever_its_declared_type() {
        let d = dir();
        let (cert, _) = cert_and_key();
        let mut cas = openssl::stack::Stack::new().unwrap();
        cas.push(cert.clone()).unwrap();
        let p12 = openssl::pkcs12::Pkcs12::builder().ca(cas).build2("trustpw").unwrap();
        // Named .jks on purpose: the bytes decide.
        let store = d.join("trust.jks");
        std::fs::write(&store, p12.to_der().unwrap()).unwrap();
        let s = ok(&format!("ssl.truststore.location={}\nssl.truststore.password=trustpw", store.display()));
        assert_eq!(s.get("ssl.ca.pem"), Some(String::from_utf8(cert.to_pem().unwrap()).unwrap().as_str()));
        assert!(s.describe().iter().any(|l| l.contains("translated from ssl.truststore.location")));
        let e = fails(&format!("ssl.truststore.location={}\nssl.truststore.password=wrong-pw", store.display()));
        assert!(e.contains("ssl.truststore.location") && e.contains("cannot be opened"), "{e}");
        assert!(!e.contains("wrong-pw"), "{e}");
    }

    #[test]
    fn jks_and_jceks_are_refused_with_the_keytool_command() {
        let d = dir();
        for (magic, name) in [([0xFEu8, 0xED, 0xFE, 0xED], "JKS"), ([0xCE, 0xCE, 0xCE, 0xCE], "JCEKS")] {
            let store = d.join(format!("store-{name}.jks"));
            std::fs::write(&store, [&magic[..], &[0, 0, 0, 2]].concat()).unwrap();
            for (key, ty) in [("ssl.truststore.location", "ssl.truststore.type"), ("ssl.keystore.location", "ssl.keystore.type")] {
                let e = fails(&format!("ssl.keystore.password=x\n{key}={}", store.display()));
                // The keystore's path is secret (librdkafka flags ssl.key.location): named by its key only.
                let (src, dest) = if key == "ssl.keystore.location" {
                    (format!("<the file in {key}>"), "<a new file>.p12".to_string())
                } else {
                    (store.display().to_string(), store.with_extension("p12").display().to_string())
                };
                assert!(e.starts_with(&format!("p.properties:3: {key}: {src} is a {name} store")), "{e}");
                assert!(
                    e.contains(&format!("keytool -importkeystore -srckeystore {src} -srcstoretype {name} -destkeystore {dest} -deststoretype PKCS12")),
                    "{e}"
                );
                assert!(e.contains(&format!("{ty}=PKCS12")), "{e}");
                assert_eq!(e.contains(d.to_str().unwrap()), key == "ssl.truststore.location", "{e}");
            }
        }
        assert!(fails("ssl.truststore.location=/nonexistent/t.jks").contains("p.properties:2: ssl.truststore.location: cannot read /nonexistent/t.jks"));
        let e = fails("ssl.keystore.location=/nonexistent/k.p12");
        assert!(e.contains("p.properties:2: ssl.keystore.location: cannot read the file in ssl.keystore.location") && !e.contains("k.p12"), "{e}");
    }

    #[test]
    fn pkcs12_keystore_needs_its_password_and_one_password() {
        let d = dir();
        let (cert, key) = cert_and_key();
        let p12 = openssl::pkcs12::Pkcs12::builder().name("client").pkey(&key).cert(&cert).build2("storepw").unwrap();
        let store = d.join("client.p12");
        std::fs::write(&store, p12.to_der().unwrap()).unwrap();
        let s = ok(&format!("ssl.keystore.type=PKCS12\nssl.keystore.location={}\nssl.keystore.password=storepw\nssl.key.password=storepw", store.display()));
        assert_eq!(s.get("ssl.keystore.location"), Some(store.to_str().unwrap()));
        assert_eq!(s.get("ssl.keystore.password"), Some("storepw"));
        assert!(s.describe().iter().all(|l| !l.contains("storepw")), "{:?}", s.describe());
        assert!(fails(&format!("ssl.keystore.location={}", store.display())).contains("needs ssl.keystore.password"));
        let e = fails(&format!("ssl.keystore.location={}\nssl.keystore.password=storepw\nssl.key.password=other", store.display()));
        assert!(e.contains("p.properties:4: ssl.key.password") && e.contains("re-export"), "{e}");
        let e = fails(&format!("ssl.keystore.location={}\nssl.keystore.password=badpw", store.display()));
        assert!(e.contains("p.properties:3: ssl.keystore.password: cannot open the keystore") && !e.contains("badpw"), "{e}");
    }

    #[test]
    fn pem_keystore_strings_and_files() {
        let (cert, key) = cert_and_key();
        let key_pem = String::from_utf8(key.private_key_to_pem_pkcs8().unwrap()).unwrap();
        let cert_pem = String::from_utf8(cert.to_pem().unwrap()).unwrap();
        let esc = |s: &str| s.trim_end().replace('\n', "\\\\n");
        let s =
            ok(&format!("ssl.keystore.type=PEM\nssl.keystore.key={}\nssl.keystore.certificate.chain={}\nssl.key.password=kpw", esc(&key_pem), esc(&cert_pem)));
        assert_eq!(s.get("ssl.key.pem"), Some(key_pem.as_str()));
        assert_eq!(s.get("ssl.certificate.pem"), Some(cert_pem.as_str()));
        assert_eq!(s.get("ssl.key.password"), Some("kpw"));
        let shown = s.describe().join("\n");
        assert!(!shown.contains("PRIVATE KEY") && !shown.contains("kpw"), "{shown}");
        assert!(fails(&format!("ssl.keystore.key={}", esc(&key_pem))).contains("go together"));
        let d = dir();
        let file = d.join("client.pem");
        std::fs::write(&file, format!("{key_pem}{cert_pem}")).unwrap();
        let s = ok(&format!("ssl.keystore.type=PEM\nssl.keystore.location={}", file.display()));
        assert_eq!(s.get("ssl.key.location"), Some(file.to_str().unwrap()));
        assert_eq!(s.get("ssl.certificate.location"), Some(file.to_str().unwrap()));
    }

    #[test]
    fn endpoint_identification() {
        let s = ok("ssl.endpoint.identification.algorithm=");
        assert_eq!(s.get("ssl.endpoint.identification.algorithm"), Some("none"));
        assert!(s.warnings.iter().any(|w| w.contains("p.properties:2") && w.contains("NOT checked")), "{:?}", s.warnings);
        let s = ok("ssl.endpoint.identification.algorithm=HTTPS");
        assert_eq!(s.get("ssl.endpoint.identification.algorithm"), Some("https"));
        assert!(s.warnings.is_empty());
        assert!(fails("ssl.endpoint.identification.algorithm=ldaps").contains("is not supported"));
    }

    #[test]
    fn cipher_suites_iana_to_openssl() {
        let s = ok("ssl.cipher.suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256");
        assert_eq!(s.get("ssl.cipher.suites"), Some("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"));
        assert!(s.warnings.iter().any(|w| w.contains("TLS 1.3") && w.contains("TLS_AES_128_GCM_SHA256 dropped")), "{:?}", s.warnings);
        assert!(fails("ssl.cipher.suites=TLS_NOPE_WITH_NOTHING").contains("not a cipher suite OpenSSL knows"));
    }

    #[test]
    fn java_only_ssl_keys() {
        let s = ok("ssl.protocol=TLSv1.3\nssl.enabled.protocols=TLSv1.2,TLSv1.3\nssl.provider=SunJSSE\nssl.keymanager.algorithm=SunX509\nssl.trustmanager.algorithm=PKIX\nssl.secure.random.implementation=SHA1PRNG");
        for (line, key) in [
            (2, "ssl.protocol"),
            (3, "ssl.enabled.protocols"),
            (4, "ssl.provider"),
            (5, "ssl.keymanager.algorithm"),
            (6, "ssl.trustmanager.algorithm"),
            (7, "ssl.secure.random.implementation"),
        ] {
            assert!(s.warnings.iter().any(|w| w.starts_with(&format!("p.properties:{line}: {key} is ignored"))), "{key}: {:?}", s.warnings);
            assert!(s.entries.keys().all(|k| !k.starts_with(key)));
        }
        assert!(fails("ssl.engine.factory.class=com.example.Factory").contains("p.properties:2: ssl.engine.factory.class"));
        // librdkafka's own keys pass.
        assert_eq!(ok("ssl.ca.location=/etc/ssl/certs").get("ssl.ca.location"), Some("/etc/ssl/certs"));
    }

    const SCRAM: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";

    #[test]
    fn scram_and_plain_from_jaas() {
        let s = ok(&format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=scram-sha-512\nsasl.jaas.config={SCRAM} required username=\"alice\" password=\"s3cr3t-pw\";"
        ));
        assert_eq!(s.get("sasl.mechanisms"), Some("SCRAM-SHA-512"));
        assert_eq!(s.get("sasl.mechanism"), None);
        assert_eq!(s.get("sasl.username"), Some("alice"));
        assert_eq!(s.get("sasl.password"), Some("s3cr3t-pw"));
        assert!(s.describe().iter().all(|l| !l.contains("s3cr3t-pw")));
        assert!(
            s.describe().iter().any(|l| l.starts_with("sasl.password=[redacted]  # p.properties:4, translated from sasl.jaas.config")),
            "{:?}",
            s.describe()
        );
        let s = ok("sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password=pw;");
        assert_eq!(s.get("sasl.username"), Some("bob"));
        let e = fails(&format!("sasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config={SCRAM} required username=a password=hunter2 tokenauth=true;"));
        assert!(e.contains("tokenauth") && !e.contains("hunter2"), "{e}");
        let e = fails(&format!("sasl.mechanism=PLAIN\nsasl.jaas.config={SCRAM} required username=a password=hunter2;"));
        assert!(e.contains("needs sasl.mechanism=SCRAM-SHA-512") && e.contains("p.properties:2 sets sasl.mechanism=PLAIN"), "{e}");
        let e = fails(&format!("sasl.jaas.config={SCRAM} required username=a password=hunter2;"));
        assert!(e.contains("Java's default is GSSAPI"), "{e}");
        let e = fails(&format!("sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={SCRAM} required username=a;"));
        assert!(e.contains("needs both username"), "{e}");
        let e = fails("sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required password=\"hunter2\"");
        assert!(e.contains("p.properties:3: sasl.jaas.config: the options must end with ';'") && !e.contains("hunter2"), "{e}");
        assert!(fails("sasl.mechanism=DIGEST").contains("'DIGEST' is not one of"));
    }

    #[test]
    fn gssapi_is_refused_clearly() {
        let e = fails("security.protocol=SASL_SSL\nsasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\" principal=\"p@R\";");
        assert!(e.contains("Krb5LoginModule") && e.contains("without Kerberos (GSSAPI) support"), "{e}");
        let e = fails("security.protocol=SASL_PLAINTEXT");
        assert!(e.contains("sasl.mechanism is not set (Java's default is GSSAPI)") && e.contains("without Kerberos"), "{e}");
        // On SASL_SSL with PLAIN, so the SASL keys are used but GSSAPI is not.
        let s =
            ok("sasl.kerberos.service.name=kafka\nsasl.kerberos.ticket.renew.window.factor=0.8\nsasl.login.refresh.window.factor=0.8\nsasl.mechanism=PLAIN");
        assert!(s.warnings.iter().any(|w| w.contains("sasl.kerberos.ticket.renew.window.factor is ignored")));
        assert!(s.warnings.iter().any(|w| w.contains("sasl.login.refresh.window.factor is ignored")));
        let s = ok("sasl.kerberos.kinit.cmd=/usr/local/bin/kinit\nsasl.mechanism=PLAIN");
        assert_eq!(
            s.get("sasl.kerberos.kinit.cmd"),
            Some("/usr/local/bin/kinit -R -t \"%{sasl.kerberos.keytab}\" -k %{sasl.kerberos.principal} || /usr/local/bin/kinit -t \"%{sasl.kerberos.keytab}\" -k %{sasl.kerberos.principal}")
        );
        let s = ok("sasl.kerberos.service.name=kafka\nsasl.kerberos.min.time.before.relogin=0\nsasl.mechanism=PLAIN");
        assert_eq!(s.get("sasl.kerberos.service.name"), Some("kafka"));
        assert_eq!(s.get("sasl.kerberos.min.time.before.relogin"), Some("0"));
    }

    #[test]
    fn oauthbearer_unsecured_and_oidc() {
        let s = ok("sasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \
                    unsecuredLoginStringClaim_sub=\"admin\" unsecuredLoginListClaim_scope=\",read,write\" unsecuredLoginLifetimeSeconds=\"600\" unsecuredLoginExtension_traceId=\"42\";");
        assert_eq!(s.get("enable.sasl.oauthbearer.unsecure.jwt"), Some("true"));
        assert_eq!(s.get("sasl.oauthbearer.config"), Some("principal=admin scope=read,write lifeSeconds=600 extension_traceId=42"));
        assert!(s.describe().iter().any(|l| l.starts_with("sasl.oauthbearer.config=[redacted]")));
        let oidc = "sasl.mechanism=OAUTHBEARER\nsasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler\n\
                    sasl.oauthbearer.token.endpoint.url=https://idp/token\n\
                    sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"mm\" clientSecret=\"cs-secret\" scope=\"kafka\" extension_logicalCluster=\"lkc-1\";";
        match producer(&used(oidc)) {
            Ok(s) => {
                assert_eq!(s.get("sasl.oauthbearer.method"), Some("oidc"));
                assert_eq!(s.get("sasl.oauthbearer.client.id"), Some("mm"));
                assert_eq!(s.get("sasl.oauthbearer.client.secret"), Some("cs-secret"));
                assert_eq!(s.get("sasl.oauthbearer.scope"), Some("kafka"));
                assert_eq!(s.get("sasl.oauthbearer.extensions"), Some("logicalCluster=lkc-1"));
                assert_eq!(s.get("sasl.oauthbearer.token.endpoint.url"), Some("https://idp/token"));
                assert!(s.describe().iter().all(|l| !l.contains("cs-secret")));
            }
            Err(e) => assert!(e.0.contains("needs librdkafka built with libcurl") && !e.0.contains("cs-secret"), "{e}"),
        }
        let e = fails("sasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
        assert!(e.contains("unsecuredLoginStringClaim_sub"), "{e}");
        assert!(fails("sasl.login.callback.handler.class=com.example.Handler").contains("custom Java callback handlers"));
        assert!(fails("sasl.login.class=com.example.Login\nsasl.mechanism=PLAIN").contains("custom Java login classes"));
        assert!(fails("sasl.client.callback.handler.class=com.example.H\nsasl.mechanism=PLAIN").contains("custom Java login classes"));
        assert!(fails("sasl.mechanism=PLAIN\nsasl.jaas.config=com.example.MyLoginModule required;").contains("com.example.MyLoginModule is not supported"));
    }

    #[test]
    fn secrets_are_secret() {
        // What librdkafka 2.12 flags _RK_SENSITIVE (the OIDC ones are left
        // out of a build without libcurl and counted for that), and the Java
        // password keys.
        for k in [
            "sasl.password",
            "sasl.username",
            "ssl.key.pem",
            "ssl.key.password",
            "ssl.key.location",
            "ssl.keystore.password",
            "ssl.ca.pem",
            "sasl.oauthbearer.config",
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.assertion.private.key.passphrase",
            "sasl.oauthbearer.assertion.private.key.pem",
            "sasl.oauthbearer.assertion.private.key.file",
            "sasl.jaas.config",
            "ssl.keystore.key",
            "ssl.truststore.password",
            "ssl.truststore.certificates",
            "ssl.keystore.certificate.chain",
            "sasl.oauthbearer.client.credentials.client.secret",
        ] {
            assert!(is_secret(k), "{k}");
            assert!(secret_keys().iter().any(|s| s == k), "{k}");
            assert_eq!(shown(k, "x"), "[redacted]");
        }
        for k in [
            "ssl.ca.location",
            "ssl.certificate.pem",
            "ssl.certificate.location",
            "sasl.mechanisms",
            "sasl.mechanism",
            "bootstrap.servers",
            "security.protocol",
            "group.id",
        ] {
            assert!(!is_secret(k), "{k}");
        }
    }

    /// The sensitive set is read from librdkafka's table, not written here:
    /// every property it lists is probed, and the answer matches what
    /// librdkafka's own scrubbing does to a configuration holding them all.
    /// No translated setting that librdkafka counts sensitive comes from a
    /// Java key that is_secret misses, and JAVA_TRANSLATIONS lists every key
    /// a listed Java key really becomes: checked on files that take each
    /// path of the translation.
    #[test]
    fn java_translations_follow_the_translation() {
        let d = dir();
        let (cert, key) = cert_and_key();
        let cert_pem = String::from_utf8(cert.to_pem().unwrap()).unwrap();
        let key_pem = String::from_utf8(key.private_key_to_pem_pkcs8().unwrap()).unwrap();
        let esc = |s: &str| s.trim_end().replace('\n', "\\\\n");
        let pem_ca = d.join("ca.pem");
        std::fs::write(&pem_ca, &cert_pem).unwrap();
        let pem_key = d.join("client.pem");
        std::fs::write(&pem_key, format!("{key_pem}{cert_pem}")).unwrap();
        let p12 = openssl::pkcs12::Pkcs12::builder().name("c").pkey(&key).cert(&cert).build2("pw").unwrap();
        let p12_file = d.join("client.p12");
        std::fs::write(&p12_file, p12.to_der().unwrap()).unwrap();
        let files = [
            format!("ssl.truststore.location={}\nssl.keystore.location={}\nssl.key.password=kp", pem_ca.display(), pem_key.display()),
            format!("ssl.truststore.location={}\nssl.truststore.password=pw\nssl.keystore.location={}\nssl.keystore.password=pw", p12_file.display(), p12_file.display()),
            format!("ssl.truststore.certificates={}\nssl.keystore.key={}\nssl.keystore.certificate.chain={}", esc(&cert_pem), esc(&key_pem), esc(&cert_pem)),
            format!("sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={SCRAM} required username=u password=p;"),
            "sasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=u;".to_string(),
        ];
        let mut seen = 0;
        for text in &files {
            let s = ok(text);
            let file = crate::front::properties::parse(Path::new("p.properties"), used(text).as_bytes()).unwrap();
            for (k, (v, origin)) in &s.entries {
                let Origin::File { key: java, .. } = origin else { continue };
                if java == k {
                    continue;
                }
                // What a store file holds is not the value of its location key.
                if java.ends_with(".location") && file.get(java).is_some_and(|p| p.value != *v) {
                    continue;
                }
                seen += 1;
                if librdkafka_sensitive_keys().contains(k) {
                    assert!(is_secret(java), "{java} becomes the sensitive {k} but is not secret");
                }
                if let Some((_, targets)) = JAVA_TRANSLATIONS.iter().find(|(j, _)| j == java) {
                    assert!(targets.contains(&k.as_str()), "{java} becomes {k}, which JAVA_TRANSLATIONS does not list");
                }
            }
        }
        assert!(seen >= 10, "only {seen} translated settings");
    }

    /// Java builds a plaintext channel for PLAINTEXT and never reads the
    /// SASL or SSL keys, so a file that ran there must run here, with one
    /// warning naming the unused keys. Likewise SSL keys on SASL_PLAINTEXT
    /// and SASL keys on SSL.
    #[test]
    fn keys_the_protocol_does_not_use_are_ignored_as_java_does() {
        let jaas = format!("sasl.jaas.config={SCRAM} required username=a password=\"CANARY-pw\";");
        let jks = dir().join("t.jks");
        std::fs::write(&jks, [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]).unwrap();
        let ssl = format!("ssl.truststore.location={}\nssl.truststore.password=CANARY-ts", jks.display());
        for (protocol, text, unused) in [
            ("", format!("{jaas}\nsasl.login.class=com.example.L"), vec!["sasl.jaas.config (line 2)", "sasl.login.class (line 3)"]),
            (
                "security.protocol=PLAINTEXT\n",
                format!("{jaas}\nsasl.mechanism=GSSAPI\n{ssl}"),
                vec!["sasl.jaas.config (line 3)", "sasl.mechanism (line 4)", "ssl.truststore.location (line 5)", "ssl.truststore.password (line 6)"],
            ),
            ("security.protocol=SSL\n", jaas.clone(), vec!["sasl.jaas.config (line 3)"]),
            (
                "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n",
                format!("{jaas}\n{ssl}"),
                vec!["ssl.truststore.location (line 5)", "ssl.truststore.password (line 6)"],
            ),
        ] {
            let s = producer(&format!("bootstrap.servers=h:1\n{protocol}{text}")).unwrap_or_else(|e| panic!("{protocol}{text}: {e}"));
            let w: Vec<&String> = s.warnings.iter().filter(|w| w.contains("not used")).collect();
            assert_eq!(w.len(), 1, "{protocol}{text}: {:?}", s.warnings);
            for u in &unused {
                assert!(w[0].contains(u), "{protocol}: {u} missing from {}", w[0]);
            }
            assert!(w[0].starts_with("p.properties: "), "{}", w[0]);
            assert!(!w[0].contains("CANARY"), "{}", w[0]);
            for k in s.entries.keys() {
                let used = match protocol {
                    "security.protocol=SSL\n" => !k.starts_with("sasl."),
                    p if p.starts_with("security.protocol=SASL_PLAINTEXT") => !k.starts_with("ssl."),
                    _ => !k.starts_with("sasl.") && !k.starts_with("ssl."),
                };
                assert!(used, "{protocol}: {k} passed to librdkafka");
            }
        }
        // Used keys are still translated and checked.
        let s = ok(&format!("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n{jaas}"));
        assert_eq!(s.get("sasl.password"), Some("CANARY-pw"));
        assert!(s.warnings.iter().all(|w| !w.contains("not used")), "{:?}", s.warnings);
        assert!(fails(&format!("security.protocol=SSL\n{ssl}")).contains("keytool"));
    }

    #[test]
    fn every_emitted_setting_is_accepted_by_librdkafka() {
        let s = ok("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\nssl.endpoint.identification.algorithm=\n\
                    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=u password=p;\n\
                    ssl.cipher.suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
        for (k, (v, _)) in &s.entries {
            assert!(accepts(k, v).is_ok(), "{k}={v}");
        }
    }
}
