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
//! converts it ([`stores`]). SASL is [`sasl`]'s, Kerberos [`kerberos`]'s.
//! Secret values never reach a
//! message: see [`crate::kafka::secrets::is_secret`].
//!
//! What the translated keys mean when a cluster refuses them is told by
//! [`crate::kafka::auth::auth_failure`].

mod kerberos;
mod place;
mod sasl;
mod stores;

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::conf::{accepts, Refusal};
use crate::kafka::secrets::shown;
use crate::kafka::settings::ClientSettings;
use kerberos::KINIT_TEMPLATE;
use place::{at, err, set};
use sasl::sasl;
use stores::{keystore, truststore};

/// Keys this module translates (all of them, including librdkafka's own).
pub fn owns(key: &str) -> bool {
    key == "security.protocol" || key.starts_with("ssl.") || key.starts_with("sasl.")
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
            _ => return Err(err(file, p, format!("'{}' is not supported", p.value)).with_fix("use https (check the host name) or an empty value (don't)")),
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
        Err(Refusal::Invalid(msg)) => {
            return Err(err(file, p, format!("'{}' is not accepted: {msg}", shown(key, value))));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests;
