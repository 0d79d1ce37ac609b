//! The TLS and SASL translation, checked key by key against what Java
//! accepts and librdkafka takes, with stores made on the fly.

use std::path::{Path, PathBuf};

use super::*;
use crate::front::properties::parse;
use crate::front::translate::translate as translate_file;
use crate::kafka::conf::sensitive_keys as librdkafka_sensitive_keys;
use crate::kafka::secrets::{is_secret, secret_keys, JAVA_TRANSLATIONS};
use crate::kafka::settings::{Origin, Role};

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
    producer(&used(text)).map(|s| format!("{:?}", s.entries)).expect_err("should fail").to_string()
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
    assert!(e.contains("p.properties:3: ssl.truststore.password:") && e.contains("cannot be opened"), "{e}");
    assert!(!e.contains("wrong-pw"), "{e}");
}

/// JKS and JCEKS were refused with a keytool conversion command; now
/// they are read in memory and handed over as PEM, the key unencrypted
/// and only in memory, its values redacted in the --check-config listing.
#[test]
fn jks_and_jceks_stores_become_pem_in_memory() {
    use crate::kafka::keystore::tests::{keytool_dir, keytool_store};
    for ty in ["JKS", "JCEKS"] {
        let (d, ca) = keytool_dir(&format!("translate-{ty}"));
        let store = keytool_store(&d, ty, "keypass1");
        let text = format!(
            "ssl.truststore.type={ty}\nssl.truststore.location={0}\nssl.truststore.password=storepw\n\
             ssl.keystore.type={ty}\nssl.keystore.location={0}\nssl.keystore.password=storepw\nssl.key.password=keypass1",
            store.display()
        );
        let s = ok(&text);
        assert_eq!(s.get("ssl.ca.pem"), Some(String::from_utf8(ca.to_pem().unwrap()).unwrap().as_str()), "{ty}");
        let key = s.get("ssl.key.pem").unwrap_or_else(|| panic!("{ty}: no ssl.key.pem"));
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{ty}: an unencrypted PKCS#8 key");
        let cert = openssl::x509::X509::from_pem(s.get("ssl.certificate.pem").unwrap().as_bytes()).unwrap();
        assert!(cert.public_key().unwrap().public_eq(&openssl::pkey::PKey::private_key_from_pem(key.as_bytes()).unwrap()), "{ty}");
        for k in ["ssl.keystore.location", "ssl.key.location", "ssl.key.password", "ssl.keystore.password"] {
            assert_eq!(s.get(k), None, "{ty}: {k} is not handed over");
        }
        let shown = s.describe().join("\n");
        for line in [
            "ssl.key.pem=[redacted]  # p.properties:6, translated from ssl.keystore.location",
            "ssl.certificate.pem=[redacted]  # p.properties:6",
            "ssl.ca.pem=[redacted]  # p.properties:3",
        ] {
            assert!(shown.contains(line), "{ty}: no '{line}' in\n{shown}");
        }
        assert!(!shown.contains("PRIVATE") && !shown.contains("storepw") && !shown.contains("keypass1"), "{shown}");
        // JCEKS's secret key 'sec' (keytool_store adds one) is skipped, and said.
        let skipped = s.notices.iter().any(|n| n.starts_with("p.properties:6: the secret-key entries of the store (sec) are skipped"));
        assert_eq!(skipped, ty == "JCEKS", "{ty}: {:?}", s.notices);
        let key_pw = fails(&text.replace("ssl.key.password=keypass1", "ssl.key.password=wrong-kp"));
        assert!(
            key_pw.starts_with("p.properties:8: ssl.key.password: the private key in the file in ssl.keystore.location cannot be recovered"),
            "{ty}: {key_pw}"
        );
        let store_pw = fails(&text.replace("ssl.keystore.password=storepw", "ssl.keystore.password=wrong-sp"));
        assert!(
            store_pw.starts_with("p.properties:7: ssl.keystore.password: the file in ssl.keystore.location cannot be opened with this password"),
            "{ty}: {store_pw}"
        );
        let trust_pw = fails(&text.replace("ssl.truststore.password=storepw", "ssl.truststore.password=wrong-tp"));
        assert!(trust_pw.starts_with(&format!("p.properties:4: ssl.truststore.password: {} cannot be opened", store.display())), "{ty}: {trust_pw}");
        for e in [key_pw, store_pw, trust_pw] {
            assert!(!e.contains("wrong-") && !e.contains("storepw") && !e.contains("keypass1"), "{e}");
        }
        // Declared PKCS12, JCEKS bytes: Java 17 refuses them; the type's line says so.
        if ty == "JCEKS" {
            let e = fails(&text.replace("ssl.keystore.type=JCEKS", "ssl.keystore.type=PKCS12"));
            assert!(
                e.starts_with("p.properties:5: ssl.keystore.type: the file in ssl.keystore.location is a JCEKS store, not Pkcs12 (set the type to JCEKS)"),
                "{e}"
            );
        }
    }
    // Cut-short stores: an error naming the file (the keystore by its key only).
    let d = dir();
    for (magic, name) in [([0xFEu8, 0xED, 0xFE, 0xED], "JKS"), ([0xCE, 0xCE, 0xCE, 0xCE], "JCEKS")] {
        let store = d.join(format!("store-{name}.jks"));
        std::fs::write(&store, [&magic[..], &[0, 0, 0, 2]].concat()).unwrap();
        let e = fails(&format!("ssl.truststore.type={name}\nssl.truststore.location={}", store.display()));
        assert!(e.starts_with(&format!("p.properties:3: ssl.truststore.location: {}: it is not a JKS or JCEKS keystore", store.display())), "{e}");
        let e = fails(&format!("ssl.keystore.password=x\nssl.keystore.type={name}\nssl.keystore.location={}", store.display()));
        assert!(e.starts_with("p.properties:4: ssl.keystore.location: the file in ssl.keystore.location: it is not a JKS"), "{e}");
        assert!(!e.contains(d.to_str().unwrap()), "{e}");
    }
    assert!(fails("ssl.truststore.location=/nonexistent/t.jks").contains("p.properties:2: ssl.truststore.location: cannot read /nonexistent/t.jks"));
    let e = fails("ssl.keystore.location=/nonexistent/k.p12");
    assert!(e.contains("p.properties:2: ssl.keystore.location: cannot read the file in ssl.keystore.location") && !e.contains("k.p12"), "{e}");
    let e = fails("ssl.keystore.type=BKS\nssl.keystore.location=/nonexistent/k.p12");
    assert!(e.contains("p.properties:2: ssl.keystore.type: 'BKS' is not a store type read here; use JKS, JCEKS, PKCS12 or PEM"), "{e}");
}

/// Several private keys: Java's key manager picks per handshake,
/// librdkafka takes one; refused with the aliases and the keytool command.
#[test]
fn a_keystore_with_several_keys_is_refused_with_its_aliases() {
    use crate::kafka::keystore::tests::{keytool, keytool_dir, keytool_store};
    let (d, _) = keytool_dir("translate-several");
    let store = keytool_store(&d, "JKS", "storepw");
    keytool(&d, &["-genkeypair", "-alias", "other", "-keyalg", "EC", "-dname", "CN=other", "-keystore", "k.jks", "-storepass", "storepw"]);
    let e = fails(&format!("ssl.keystore.location={}\nssl.keystore.password=storepw", store.display()));
    assert!(e.starts_with("p.properties:2: ssl.keystore.location: the file in ssl.keystore.location holds 2 private keys (me, other)"), "{e}");
    assert!(e.contains("keytool -importkeystore -srckeystore <the file in ssl.keystore.location> -destkeystore <new store> -srcalias <one of them>"), "{e}");
}

#[test]
fn pkcs12_keystore_is_read_in_memory_with_its_password() {
    let d = dir();
    let (cert, key) = cert_and_key();
    let p12 = openssl::pkcs12::Pkcs12::builder().name("client").pkey(&key).cert(&cert).build2("storepw").unwrap();
    let store = d.join("client.p12");
    std::fs::write(&store, p12.to_der().unwrap()).unwrap();
    let s = ok(&format!("ssl.keystore.type=PKCS12\nssl.keystore.location={}\nssl.keystore.password=storepw\nssl.key.password=storepw", store.display()));
    assert_eq!(s.get("ssl.key.pem"), Some(String::from_utf8(key.private_key_to_pem_pkcs8().unwrap()).unwrap().as_str()));
    assert_eq!(s.get("ssl.certificate.pem"), Some(String::from_utf8(cert.to_pem().unwrap()).unwrap().as_str()));
    assert_eq!(s.get("ssl.keystore.location"), None, "librdkafka no longer opens the file itself");
    assert!(s.describe().iter().all(|l| !l.contains("storepw") && !l.contains("PRIVATE")), "{:?}", s.describe());
    let e = fails(&format!("ssl.keystore.location={}", store.display()));
    assert!(e.contains("p.properties:2: ssl.keystore.location:") && e.contains("ssl.keystore.password is not set"), "{e}");
    // keytool makes PKCS12 with one password; Java opens the key with ssl.key.password and would fail.
    let e = fails(&format!("ssl.keystore.location={}\nssl.keystore.password=storepw\nssl.key.password=other", store.display()));
    assert!(e.contains("p.properties:4: ssl.key.password") && e.contains("protected by the store password"), "{e}");
    let e = fails(&format!("ssl.keystore.location={}\nssl.keystore.password=badpw", store.display()));
    assert!(
        e.contains("p.properties:3: ssl.keystore.password: the file in ssl.keystore.location cannot be opened with this password") && !e.contains("badpw"),
        "{e}"
    );
    assert!(!e.contains("client.p12"), "{e}");
}

#[test]
fn pem_keystore_strings_and_files() {
    let (cert, key) = cert_and_key();
    let key_pem = String::from_utf8(key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    let cert_pem = String::from_utf8(cert.to_pem().unwrap()).unwrap();
    let esc = |s: &str| s.trim_end().replace('\n', "\\\\n");
    let s = ok(&format!("ssl.keystore.type=PEM\nssl.keystore.key={}\nssl.keystore.certificate.chain={}\nssl.key.password=kpw", esc(&key_pem), esc(&cert_pem)));
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
    assert!(s.describe().iter().any(|l| l.starts_with("sasl.password=[redacted]  # p.properties:4, translated from sasl.jaas.config")), "{:?}", s.describe());
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

const KRB5: &str = "com.sun.security.auth.module.Krb5LoginModule";

/// A keytab file (its content is not read by the translation, only that it can be).
fn keytab() -> PathBuf {
    let k = dir().join("client.keytab");
    std::fs::write(&k, [5, 2]).unwrap();
    k
}

#[test]
fn krb5_login_module_with_a_keytab_becomes_librdkafka_gssapi() {
    let k = keytab();
    let text = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n\
         sasl.jaas.config={KRB5} required useKeyTab=true storeKey=true keyTab=\"{}\" principal=\"mirror@UNIT.TEST\";",
        k.display()
    );
    let s = ok(&text);
    assert_eq!(s.get("sasl.mechanisms"), Some("GSSAPI"));
    assert_eq!(s.get("sasl.kerberos.keytab"), Some(k.to_str().unwrap()));
    assert_eq!(s.get("sasl.kerberos.principal"), Some("mirror@UNIT.TEST"));
    assert_eq!(s.get("sasl.kerberos.service.name"), Some("kafka"));
    assert_eq!(s.get("sasl.kerberos.kinit.cmd"), Some(KINIT_TEMPLATE.replace("%{kinit}", "kinit").as_str()));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // Shown with their origin by --check-config: a path and a name are no secrets.
    let d = s.describe();
    assert!(d.iter().any(|l| l == &format!("sasl.kerberos.keytab={}  # p.properties:5, translated from sasl.jaas.config", k.display())), "{d:?}");
    assert!(d.iter().any(|l| l == "sasl.kerberos.principal=mirror@UNIT.TEST  # p.properties:5, translated from sasl.jaas.config"), "{d:?}");
    assert!(d.iter().any(|l| l == "sasl.kerberos.service.name=kafka  # p.properties:4"), "{d:?}");

    // The JAAS serviceName does as well; Java's default mechanism is GSSAPI.
    let s = ok(&format!("security.protocol=SASL_PLAINTEXT\nsasl.jaas.config={KRB5} required useKeyTab=true keyTab=\"{}\" principal=\"mirror@UNIT.TEST\" serviceName=\"kafka-svc\";", k.display()));
    assert_eq!(s.get("sasl.kerberos.service.name"), Some("kafka-svc"));
    // A sasl.kerberos.kinit.cmd line names another kinit.
    let s = ok(&format!(
        "sasl.kerberos.service.name=kafka\nsasl.mechanism=GSSAPI\nsasl.kerberos.kinit.cmd=/opt/krb/bin/kinit\nsasl.jaas.config={KRB5} required useKeyTab=true keyTab=\"{}\" principal=\"mirror@UNIT.TEST\";",
        k.display()
    ));
    assert!(s.get("sasl.kerberos.kinit.cmd").unwrap().starts_with("/opt/krb/bin/kinit -R -t"), "{:?}", s.get("sasl.kerberos.kinit.cmd"));
    // Options with no meaning here are named, not silently dropped.
    let s = ok(&format!("sasl.kerberos.service.name=kafka\nsasl.mechanism=GSSAPI\nsasl.jaas.config={KRB5} required useKeyTab=true keyTab=\"{}\" principal=\"mirror@UNIT.TEST\" useFirstPass=true;", k.display()));
    assert!(s.warnings.iter().any(|w| w.contains("useFirstPass") && w.contains("ignored")), "{:?}", s.warnings);
}

#[test]
fn krb5_login_module_mistakes_are_refused_with_the_fix() {
    let k = keytab();
    let jaas = |opts: &str| format!("sasl.jaas.config={KRB5} required {opts};");
    let good = format!("useKeyTab=true keyTab=\"{}\" principal=\"mirror@UNIT.TEST\"", k.display());
    let e = fails(&format!("sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}", jaas("useKeyTab=true principal=\"mirror@UNIT.TEST\"")));
    assert!(e.contains("p.properties:4") && e.contains("useKeyTab=true needs keyTab="), "{e}");
    let e = fails(&format!(
        "sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}",
        jaas("useKeyTab=true keyTab=\"/nonexistent/x.keytab\" principal=\"m@R\"")
    ));
    assert!(e.contains("p.properties:4") && e.contains("the keytab /nonexistent/x.keytab cannot be read") && e.contains("No such file"), "{e}");
    let e = fails(&format!("sasl.mechanism=GSSAPI\n{}", jaas(&good)));
    assert!(e.contains("p.properties:3") && e.contains("service name") && e.contains("sasl.kerberos.service.name=kafka"), "{e}");
    let e = fails(&format!("sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}", jaas(&format!("{good} serviceName=\"other\""))));
    assert!(e.contains("conflicts with sasl.kerberos.service.name=kafka at p.properties:3"), "{e}");
    let e = fails(&format!("sasl.mechanism=PLAIN\nsasl.kerberos.service.name=kafka\n{}", jaas(&good)));
    assert!(e.contains("Krb5LoginModule needs sasl.mechanism=GSSAPI") && e.contains("p.properties:2 sets sasl.mechanism=PLAIN"), "{e}");
    let e = fails(&format!("sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}", jaas("useKeyTab=false")));
    assert!(e.contains("cannot prompt for a password"), "{e}");
    let e = fails(&format!("sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}", jaas(&format!("useKeyTab=true keyTab=\"{}\"", k.display()))));
    assert!(e.contains("needs principal="), "{e}");
    // One process, one credential cache, one principal.
    ok(&format!("sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}", jaas(&good)));
    let e = fails(&format!(
        "sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}",
        jaas(&format!("useKeyTab=true keyTab=\"{}\" principal=\"other@UNIT.TEST\"", k.display()))
    ));
    assert!(e.contains("differs from the one p.properties:4 logs in as") && e.contains("one mirror-maker per principal"), "{e}");
    // A ticket cache is the user's, the process's cache (no private one
    // is made in unit tests): no kinit, only a check that it holds a ticket.
    let s = ok(&format!("sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}", jaas("useTicketCache=true")));
    assert_eq!(s.get("sasl.kerberos.kinit.cmd"), Some("klist -s"));
    assert_eq!(s.get("sasl.kerberos.keytab"), None);
    // Another cache than the process's cannot be read.
    let e = fails(&format!(
        "sasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n{}",
        jaas("useTicketCache=true ticketCache=\"/tmp/mm-unit-elsewhere.cache\"")
    ));
    assert!(e.contains("KRB5CCNAME=FILE:/tmp/mm-unit-elsewhere.cache"), "{e}");
    // GSSAPI with no login line at all.
    let e = fails("security.protocol=SASL_PLAINTEXT");
    assert!(e.contains("sasl.mechanism is not set, so the mechanism is GSSAPI") && e.contains("Krb5LoginModule"), "{e}");
    let e = fails("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI");
    assert!(e.contains("p.properties:3") && e.contains("-Djava.security.auth.login.config is not read"), "{e}");
    // librdkafka's own keys need no JAAS line.
    let s =
        ok(&format!("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.keytab={}\nsasl.kerberos.principal=mirror@UNIT.TEST", k.display()));
    assert_eq!(s.get("sasl.kerberos.principal"), Some("mirror@UNIT.TEST"));
}

#[test]
fn kerberos_keys_beside_another_mechanism() {
    // On SASL_SSL with PLAIN, so the SASL keys are used but GSSAPI is not.
    let s = ok("sasl.kerberos.service.name=kafka\nsasl.kerberos.ticket.renew.window.factor=0.8\nsasl.login.refresh.window.factor=0.8\nsasl.mechanism=PLAIN");
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
        Err(e) => assert!(e.to_string().contains("needs librdkafka built with libcurl") && !e.to_string().contains("cs-secret"), "{e}"),
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
    assert!(fails(&format!("security.protocol=SSL\n{ssl}")).contains("cut short"));
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
