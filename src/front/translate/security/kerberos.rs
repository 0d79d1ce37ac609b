//! GSSAPI (Kerberos): Java's `Krb5LoginModule` JAAS line, as librdkafka's
//! `sasl.kerberos.*` keys.
//!
//! Java logs in from a keytab (`useKeyTab=true keyTab=... principal=...`)
//! or from a ticket cache a `kinit` filled (`useTicketCache=true`).
//! librdkafka logs in by running `sasl.kerberos.kinit.cmd` (a `kinit` with
//! `sasl.kerberos.keytab` and `sasl.kerberos.principal`) into the process's
//! credential cache, which [`crate::kafka::kerberos`] makes private to the
//! process unless `KRB5CCNAME` is set. The service name comes from the JAAS
//! `serviceName` or `sasl.kerberos.service.name`, as in Java, which
//! requires one. Java's `-Djava.security.krb5.conf` has no key: like
//! `kinit`, the process reads `KRB5_CONFIG`, else `/etc/krb5.conf`.

use super::place::{at, err, set};
use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::front::translate::jaas::JaasConfig;
use crate::kafka::kerberos::{ccache_is_private, claim_principal};
use crate::kafka::settings::ClientSettings;

/// librdkafka's default `sasl.kerberos.kinit.cmd`, with `kinit` to be
/// replaced (by `kinit`, or a `sasl.kerberos.kinit.cmd` line's program).
pub(super) const KINIT_TEMPLATE: &str = "%{kinit} -R -t \"%{sasl.kerberos.keytab}\" -k %{sasl.kerberos.principal} || \
                                         %{kinit} -t \"%{sasl.kerberos.keytab}\" -k %{sasl.kerberos.principal}";

/// JAAS options of Krb5LoginModule that change nothing for a client that
/// logs in once from a keytab or a cache (`storeKey` keeps the key for an
/// acceptor; the others steer prompts and logging).
const HARMLESS: &[&str] = &["storeKey", "doNotPrompt", "debug", "refreshKrb5Config", "isInitiator", "renewTGT", "clearPass", "tryFirstPass"];

fn truthy(j: &JaasConfig, key: &str) -> bool {
    j.get(key).is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The `Krb5LoginModule` line `jp` (parsed as `j`), mechanism GSSAPI.
pub(super) fn krb5<'a>(
    file: &PropertiesFile,
    s: &mut ClientSettings,
    jp: &Property,
    j: &JaasConfig,
    get: &dyn Fn(&str) -> Option<&'a Property>,
) -> Result<(), ConfigError> {
    service_name(file, s, jp, j, get)?;
    let unknown: Vec<&str> = j
        .options
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !["useKeyTab", "keyTab", "principal", "serviceName", "useTicketCache", "ticketCache"].contains(k) && !HARMLESS.contains(k))
        .collect();
    if !unknown.is_empty() {
        s.warnings.push(format!(
            "{}: sasl.jaas.config: Krb5LoginModule option(s) {} have no librdkafka equivalent and are ignored",
            at(file, jp),
            unknown.join(", ")
        ));
    }
    if truthy(j, "useKeyTab") {
        let Some(keytab) = j.get("keyTab").filter(|k| !k.is_empty()) else {
            return Err(err(file, jp, "Krb5LoginModule: useKeyTab=true needs keyTab=\"/path/to/client.keytab\""));
        };
        if let Err(e) = std::fs::File::open(keytab) {
            return Err(err(file, jp, format!("Krb5LoginModule: the keytab {keytab} cannot be read: {e}"))
                .with_fix("point keyTab at a keytab this user can read (ktutil or kadmin ktadd writes one)"));
        }
        let Some(principal) = j.get("principal").filter(|p| !p.is_empty()) else {
            return Err(err(file, jp, "Krb5LoginModule: useKeyTab=true needs principal=\"name@REALM\" (the keytab's principal; klist -k shows it)"));
        };
        if let Err(crate::kafka::kerberos::OtherPrincipal { at: first }) = claim_principal(principal, &at(file, jp)) {
            return Err(err(
                file,
                jp,
                format!(
                    "Krb5LoginModule: principal {principal} differs from the one {first} logs in as; one mirror-maker process keeps one Kerberos \
                     credential cache, which holds one principal's tickets"
                ),
            )
            .with_fix("use the same principal in both places, or run one mirror-maker per principal"));
        }
        set(s, file, jp, "sasl.kerberos.keytab", keytab);
        set(s, file, jp, "sasl.kerberos.principal", principal);
        // A sasl.kerberos.kinit.cmd line (one_key, after this) names another kinit.
        let kinit = KINIT_TEMPLATE.replace("%{kinit}", "kinit");
        set(s, file, jp, "sasl.kerberos.kinit.cmd", kinit);
        return Ok(());
    }
    if truthy(j, "useTicketCache") {
        let user_cache = std::env::var("KRB5CCNAME").ok();
        if let Some(cache) = j.get("ticketCache") {
            let same = user_cache.as_deref().is_some_and(|c| !ccache_is_private() && c.trim_start_matches("FILE:") == cache.trim_start_matches("FILE:"));
            if !same {
                return Err(err(file, jp, format!("Krb5LoginModule: ticketCache={cache} is read only as the process's credential cache"))
                    .with_fix(format!("start mirror-maker with KRB5CCNAME=FILE:{}", cache.trim_start_matches("FILE:"))));
            }
        } else if ccache_is_private() {
            return Err(err(
                file,
                jp,
                "Krb5LoginModule: useTicketCache=true reads the cache your kinit filled, but KRB5CCNAME is not set, so mirror-maker uses a \
                 private cache of its own",
            )
            .with_fix("start mirror-maker with KRB5CCNAME set to the cache klist names (e.g. KRB5CCNAME=FILE:/tmp/krb5cc_$(id -u)), or log in from a keytab (useKeyTab=true keyTab=... principal=...)"));
        }
        if let Some(principal) = j.get("principal") {
            claim_principal(principal, &at(file, jp)).map_err(|crate::kafka::kerberos::OtherPrincipal { at: first }| {
                err(
                    file,
                    jp,
                    format!(
                        "Krb5LoginModule: principal {principal} differs from the one {first} logs in as; one credential cache holds one principal's tickets"
                    ),
                )
            })?;
            set(s, file, jp, "sasl.kerberos.principal", principal);
        }
        // No kinit: the tickets are the user's to renew. `klist -s` fails
        // (and librdkafka says so) when the cache holds no valid ticket.
        set(s, file, jp, "sasl.kerberos.kinit.cmd", "klist -s");
        return Ok(());
    }
    Err(err(
        file,
        jp,
        "Krb5LoginModule needs useKeyTab=true keyTab=\"...\" principal=\"...\" (log in from a keytab) or useTicketCache=true (use a kinit's tickets); \
         mirror-maker cannot prompt for a password",
    ))
}

/// The Kerberos service name of the brokers: the JAAS `serviceName` or
/// `sasl.kerberos.service.name`, which must agree when both are given
/// (Java's rule, as its KerberosLogin checks it).
fn service_name<'a>(
    file: &PropertiesFile,
    s: &mut ClientSettings,
    jp: &Property,
    j: &JaasConfig,
    get: &dyn Fn(&str) -> Option<&'a Property>,
) -> Result<(), ConfigError> {
    let key = get("sasl.kerberos.service.name");
    match (j.get("serviceName"), key) {
        (Some(jaas), Some(k)) if jaas != k.value.trim() => {
            Err(err(file, jp, format!("serviceName=\"{jaas}\" conflicts with sasl.kerberos.service.name={} at {}", k.value.trim(), at(file, k)))
                .with_fix("keep one of them (Java refuses the pair too)"))
        }
        (Some(jaas), _) => {
            set(s, file, jp, "sasl.kerberos.service.name", jaas);
            Ok(())
        }
        // one_key passes the key on with its own line.
        (None, Some(_)) => Ok(()),
        (None, None) => Err(err(file, jp, "GSSAPI needs the brokers' Kerberos service name, and Java has no default").with_fix(
            "add sasl.kerberos.service.name=kafka (the first part of the brokers' principal kafka/host@REALM), or serviceName=\"kafka\" in the JAAS line",
        )),
    }
}
