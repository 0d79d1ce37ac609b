//! SASL: the mechanism and the JAAS login module line of a Java client,
//! as librdkafka's plain `sasl.*` keys (PLAIN, SCRAM, GSSAPI, OAUTHBEARER
//! unsecured or OIDC). The JAAS line itself is parsed by [`jaas`];
//! Kerberos's `Krb5LoginModule` is [`super::kerberos`]'s.

use super::kerberos::krb5;
use super::place::{at, err, set};
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::front::translate::jaas;
use crate::kafka::conf::accepts;
use crate::kafka::settings::ClientSettings;

/// Java SASL mechanisms librdkafka knows (upper case, as it compares them).
const MECHANISMS: &[&str] = &["GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];

/// What GSSAPI without a Krb5LoginModule line needs.
const KRB5_EXAMPLE: &str =
    "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/etc/security/keytabs/mirror.keytab\" \
                            principal=\"mirror@EXAMPLE.COM\"; with sasl.kerberos.service.name=kafka";

pub(super) fn sasl<'a>(
    file: &PropertiesFile,
    s: &mut ClientSettings,
    get: &dyn Fn(&str) -> Option<&'a Property>,
    sasl_protocol: bool,
) -> Result<(), ConfigError> {
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
            "Krb5LoginModule" => {
                need(&["GSSAPI"], "GSSAPI")?;
                krb5(file, s, jp, &j, get)?;
                return Ok(());
            }
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
    // GSSAPI with librdkafka's own keys (a keytab and principal) needs no
    // JAAS line; without either, Java would look for a JAAS file named by
    // -Djava.security.auth.login.config, which mirror-maker does not read.
    let native = get("sasl.kerberos.keytab").is_some() || get("sasl.kerberos.principal").is_some();
    if sasl_protocol && effective == "GSSAPI" && get("sasl.jaas.config").is_none() && !native {
        return Err(match mech_p {
            Some(p) => ConfigError::at_line(&file.path, p.line, "sasl.mechanism=GSSAPI needs a Krb5LoginModule sasl.jaas.config line (a JAAS file given to Java with -Djava.security.auth.login.config is not read)")
                .with_key(p.key.clone())
                .with_fix(format!("add {KRB5_EXAMPLE}")),
            None => ConfigError::in_file(&file.path, "security.protocol is SASL_* and sasl.mechanism is not set, so the mechanism is GSSAPI (Java's default), which needs a Krb5LoginModule sasl.jaas.config line")
                .with_key("sasl.mechanism")
                .with_fix(format!("set sasl.mechanism (PLAIN, SCRAM-SHA-512, OAUTHBEARER) with a matching sasl.jaas.config, or for Kerberos add {KRB5_EXAMPLE}")),
        });
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
