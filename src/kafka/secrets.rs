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
        ],
    ),
];

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
