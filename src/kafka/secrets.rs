//! Which keys hold secrets, so that no message, log line or
//! `--check-config` output ever shows their values. A leaf: librdkafka's own
//! list comes from the glue ([`crate::kafka::conf::sensitive_keys`]).

use crate::kafka::conf::sensitive_keys as librdkafka_sensitive_keys;

/// A value fit for a log line: secrets are never printed.
pub fn shown(key: &str, value: &str) -> String {
    if is_secret(key) {
        "[redacted]".into()
    } else {
        value.to_string()
    }
}

/// Whether a (Java or librdkafka) key holds a secret that must never be
/// logged or shown. librdkafka's own judgement comes first: every property
/// its table flags `_RK_SENSITIVE` (read from the linked library, see
/// [`librdkafka_sensitive_keys`]). A Java key is secret when Java declares
/// it a password ([`JAVA_PASSWORD_KEYS`]) or when its value becomes the
/// value of a sensitive librdkafka key ([`JAVA_TRANSLATIONS`]). Paths count:
/// librdkafka flags ssl.key.location, so the keystore's location is named by
/// its key in messages, never written out. The truststore's path becomes
/// only ssl.ca.location; the public certificates read from the file may go
/// to ssl.ca.pem, but that is not the key's value, so the path stays shown
/// (the keytool command that converts a JKS truststore needs it).
pub fn is_secret(key: &str) -> bool {
    let k = key.trim();
    let k = k.strip_prefix("topic.").unwrap_or(k);
    librdkafka_sensitive_keys().iter().any(|s| s == k)
        || JAVA_PASSWORD_KEYS.contains(&k)
        || JAVA_TRANSLATIONS.iter().any(|(java, targets)| *java == k && targets.iter().any(|t| librdkafka_sensitive_keys().iter().any(|s| s == t)))
}

/// The Java client keys of `ConfigDef.Type.PASSWORD` (Kafka's SslConfigs and
/// SaslConfigs, up to 4.1): Java itself never logs their values.
pub const JAVA_PASSWORD_KEYS: &[&str] = &[
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "sasl.jaas.config",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
];

/// The librdkafka keys whose value [`translate`] makes from each Java
/// key's value when the names differ (all it may use, whatever a store
/// turns out to be). Checked against the translation itself by a test.
pub const JAVA_TRANSLATIONS: &[(&str, &[&str])] = &[
    ("ssl.truststore.location", &["ssl.ca.location"]),
    ("ssl.truststore.certificates", &["ssl.ca.pem"]),
    ("ssl.keystore.location", &["ssl.key.pem", "ssl.certificate.pem", "ssl.key.location", "ssl.certificate.location"]),
    ("ssl.keystore.key", &["ssl.key.pem"]),
    ("ssl.keystore.certificate.chain", &["ssl.certificate.pem"]),
    (
        "sasl.jaas.config",
        &[
            "sasl.username",
            "sasl.password",
            "sasl.oauthbearer.config",
            "sasl.oauthbearer.client.id",
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.scope",
            "sasl.oauthbearer.extensions",
            "sasl.oauthbearer.method",
            "enable.sasl.oauthbearer.unsecure.jwt",
            "sasl.kerberos.keytab",
            "sasl.kerberos.principal",
            "sasl.kerberos.service.name",
            "sasl.kerberos.kinit.cmd",
        ],
    ),
];

/// Keys whose value, though made from a secret key's (the JAAS line), is
/// no secret and is shown where the settings are listed (`--check-config`):
/// a keytab's path (the file, readable by its owner only, is the secret),
/// the principal (the broker logs it), the service name and the kinit
/// command made of them. Knowing which keytab and principal a run uses is
/// what a Kerberos failure is debugged with.
pub const PUBLIC_FROM_SECRET: &[&str] = &["sasl.kerberos.keytab", "sasl.kerberos.principal", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd"];

/// Every key [`is_secret`] is true for that a properties file can hold:
/// librdkafka's sensitive properties, the Java password keys and the Java
/// keys whose values become sensitive librdkafka values.
pub fn secret_keys() -> Vec<String> {
    let mut keys: Vec<String> = librdkafka_sensitive_keys().to_vec();
    keys.extend(JAVA_PASSWORD_KEYS.iter().map(|k| k.to_string()));
    keys.extend(JAVA_TRANSLATIONS.iter().map(|(k, _)| k.to_string()).filter(|k| is_secret(k)));
    keys.sort();
    keys.dedup();
    keys
}

/// Values the front fetched from outside the files (config providers),
/// secret whatever their key: the last line of defence, so that no log
/// line, error or report shows one even where a message prints a value it
/// did not know to hide.
static NEVER_SHOWN: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Adds `value` to the values [`scrubbed`] hides for the life of the process.
///
/// Values under 4 characters are not taken: hiding every standalone `1`
/// or `on` in every log line would garble partition numbers and counts for
/// a value that is no password anyway (a replication factor read from a
/// file). Those are still redacted wherever the value's key and origin are
/// known: `--check-config`, the MM2 origins and configuration errors.
pub fn never_show(value: &str) {
    // Trimmed: a value read with its trailing newline is used trimmed, and
    // the trimmed text is inside the untrimmed one, so both are hidden.
    let value = value.trim();
    if value.chars().count() < 4 {
        return;
    }
    let mut list = NEVER_SHOWN.write().unwrap_or_else(|e| e.into_inner());
    if !list.iter().any(|v| v == value) {
        list.push(value.to_string());
        // Longest first, so a value containing another is hidden whole.
        list.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }
}

/// `text` with every value given to [`never_show`] written `[redacted]`.
/// A short value (under 8 characters) is hidden only where it stands
/// alone (no letter or digit either side): hiding every `1` or `on` would
/// garble line numbers and words, and a short value inside a longer word
/// is that word, not the value.
pub fn scrubbed(text: &str) -> String {
    let list = NEVER_SHOWN.read().unwrap_or_else(|e| e.into_inner());
    let mut out = text.to_string();
    for v in list.iter() {
        out = if v.chars().count() >= 8 { out.replace(v.as_str(), "[redacted]") } else { replace_alone(&out, v) };
    }
    out
}

/// `text` with each occurrence of `v` that no letter or digit touches replaced.
fn replace_alone(text: &str, v: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(v) {
        let before = rest[..i].chars().last().or_else(|| out.chars().last());
        let after = rest[i + v.len()..].chars().next();
        let alone = !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..i]);
        out.push_str(if alone { "[redacted]" } else { v });
        rest = &rest[i + v.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod scrub_tests {
    use super::*;

    #[test]
    fn a_value_never_shown_is_redacted_wherever_a_text_holds_it() {
        never_show("canary-long-secret-1");
        never_show("pw9z");
        never_show("ab");
        let t = scrubbed("a: 'canary-long-secret-1' and qcanary-long-secret-1q; pw9z at line pw9z9, \"pw9z\" ab");
        assert_eq!(t, "a: '[redacted]' and q[redacted]q; [redacted] at line pw9z9, \"[redacted]\" ab");
        assert_eq!(scrubbed("nothing here"), "nothing here");
    }
}
