//! The errors librdkafka reports when a cluster refuses our credentials or
//! the TLS handshake fails. librdkafka would retry those forever, so the
//! mirror stops with exit status 1 instead, saying which settings to check.

use rdkafka::error::RDKafkaErrorCode;
use rdkafka::ClientConfig;

fn tls_alert(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    ["sslv3 alert", "tlsv1 alert", "tlsv13 alert", "ssl alert number"].iter().any(|w| r.contains(w))
}

fn transient(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    ["disconnected", "connection reset", "connection refused", "timed out", "broken pipe"].iter().any(|w| r.contains(w))
}

/// The message for an error that means the cluster refused our credentials
/// or the TLS handshake failed, or None for any other error. `cluster`
/// names the cluster and the file that configures it.
pub fn auth_failure(code: Option<RDKafkaErrorCode>, reason: &str, cluster: &str) -> Option<String> {
    let hint = match code? {
        // librdkafka names the mechanism in its reason: Kerberos and OIDC
        // fail for other reasons than a password.
        RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed if reason.contains("GSSAPI") || reason.contains("Kerberos") => {
            "check the keytab and principal (keyTab= and principal= in sasl.jaas.config, or sasl.kerberos.keytab/sasl.kerberos.principal; \
             klist -k -t KEYTAB lists a keytab's principals), that KRB5_CONFIG (else /etc/krb5.conf) names the KDC of the principal's realm, \
             and that sasl.kerberos.service.name and the host in bootstrap.servers make the broker's principal (service/host@REALM)"
        }
        RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed if reason.contains("OAUTHBEARER") || reason.contains("OIDC") => {
            "check clientId, clientSecret and scope (sasl.jaas.config) and sasl.oauthbearer.token.endpoint.url against the identity provider, \
             and that the listener accepts its tokens (issuer, audience, key set)"
        }
        RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed => {
            "check the user name and password (sasl.jaas.config, or sasl.username/sasl.password) and that sasl.mechanism \
             is one the listener enables and the user exists for (SCRAM users are per mechanism)"
        }
        // A connection dropped mid-handshake (a broker restarting) is
        // reported the same way but is worth retrying.
        RDKafkaErrorCode::SSL if !transient(reason) => {
            "check that the truststore (ssl.truststore.*, or ssl.ca.location) holds the CA that signed the broker's certificate, \
             that the certificate names the host in bootstrap.servers (or set ssl.endpoint.identification.algorithm= to skip that check), \
             that any client keystore is accepted by the broker, and that security.protocol matches the listener"
        }
        // With TLS 1.3 a broker rejecting our client certificate sends its
        // alert after the handshake, so librdkafka reports a receive failure.
        RDKafkaErrorCode::BrokerTransportFailure if tls_alert(reason) => {
            "the broker rejected the TLS connection (an alert): check that the client certificate (ssl.keystore.*) is signed by a CA \
             the broker trusts, and that security.protocol matches the listener"
        }
        _ => return None,
    };
    Some(format!(
        "authentication with the {cluster} failed: {reason}. This does not fix itself by retrying, so mirror-maker stops without committing anything; {hint}"
    ))
}

/// The principal a broker's default principal builder makes of a client
/// of `config`, when the settings alone tell: `User:ANONYMOUS` over
/// PLAINTEXT and over TLS without a client certificate,
/// `User:<sasl.username>` with SASL PLAIN or SCRAM. None when it comes
/// from outside the settings: a client certificate's subject, a Kerberos
/// or OAuth identity, as the broker's mapping rules make them.
pub fn principal(config: &ClientConfig) -> Option<String> {
    const ANONYMOUS: &str = "User:ANONYMOUS";
    let protocol = config.get("security.protocol").unwrap_or("plaintext").to_ascii_lowercase();
    match protocol.as_str() {
        "plaintext" => Some(ANONYMOUS.into()),
        "ssl" => {
            let certificate = ["ssl.certificate.location", "ssl.certificate.pem", "ssl.keystore.location"].iter().any(|k| config.get(k).is_some());
            (!certificate).then(|| ANONYMOUS.into())
        }
        "sasl_plaintext" | "sasl_ssl" => {
            let mechanism = config.get("sasl.mechanisms").or(config.get("sasl.mechanism")).unwrap_or("GSSAPI").to_ascii_uppercase();
            match mechanism.as_str() {
                "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512" => config.get("sasl.username").map(|u| format!("User:{u}")),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_principal_is_named_when_the_settings_tell_it() {
        let of = |pairs: &[(&str, &str)]| {
            let mut c = ClientConfig::new();
            for (k, v) in pairs {
                c.set(*k, *v);
            }
            principal(&c)
        };
        assert_eq!(of(&[]), Some("User:ANONYMOUS".into()));
        assert_eq!(of(&[("security.protocol", "SSL")]), Some("User:ANONYMOUS".into()), "TLS without a client certificate");
        assert_eq!(of(&[("security.protocol", "ssl"), ("ssl.keystore.location", "/k.p12")]), None, "the certificate's subject, as the broker maps it");
        assert_eq!(of(&[("security.protocol", "ssl"), ("ssl.certificate.location", "/c.pem")]), None);
        let sasl = |mechanism: &str| of(&[("security.protocol", "SASL_SSL"), ("sasl.mechanisms", mechanism), ("sasl.username", "alice")]);
        assert_eq!(sasl("PLAIN"), Some("User:alice".into()));
        assert_eq!(sasl("scram-sha-512"), Some("User:alice".into()));
        assert_eq!(sasl("SCRAM-SHA-256"), Some("User:alice".into()));
        assert_eq!(sasl("GSSAPI"), None, "Kerberos: the broker's mapping rules name it");
        assert_eq!(sasl("OAUTHBEARER"), None);
        assert_eq!(of(&[("security.protocol", "sasl_plaintext"), ("sasl.username", "bob")]), None, "GSSAPI is librdkafka's default mechanism");
        assert_eq!(of(&[("security.protocol", "sasl_plaintext"), ("sasl.mechanism", "PLAIN")]), None, "no user name");
    }

    #[test]
    fn auth_errors_are_recognised() {
        let m = auth_failure(Some(RDKafkaErrorCode::Authentication), "SASL authentication error", "target cluster h:1 (p.properties)").unwrap();
        assert!(m.contains("target cluster h:1 (p.properties)") && m.contains("user name and password"), "{m}");
        assert!(auth_failure(Some(RDKafkaErrorCode::SSL), "SSL handshake failed: certificate verify failed", "x").unwrap().contains("truststore"));
        assert!(auth_failure(Some(RDKafkaErrorCode::SSL), "SSL handshake failed: Disconnected", "x").is_none());
        assert!(auth_failure(Some(RDKafkaErrorCode::BrokerTransportFailure), "down", "x").is_none());
        let rejected = "Receive failed: error:0A000416:SSL routines::sslv3 alert certificate unknown: SSL alert number 46";
        assert!(auth_failure(Some(RDKafkaErrorCode::BrokerTransportFailure), rejected, "x").unwrap().contains("client certificate"));
        assert!(auth_failure(None, "?", "x").is_none());
        // The reasons librdkafka gives for a keytab without the principal and for a refused client secret.
        let krb = "SASL handshake failed (start (-1)): SASL(-1): generic failure: GSSAPI Error: No credentials were supplied";
        assert!(auth_failure(Some(RDKafkaErrorCode::Authentication), krb, "x").unwrap().contains("klist -k -t KEYTAB"));
        let oidc = "Failed to acquire SASL OAUTHBEARER token: {\"error\": \"invalid_client\"}";
        assert!(auth_failure(Some(RDKafkaErrorCode::Authentication), oidc, "x").unwrap().contains("clientSecret"));
    }
}
