use super::*;
use openssl::asn1::Asn1Time;
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::x509::X509NameBuilder;

/// A fresh EC key and its self-signed certificate for 127.0.0.1, valid
/// for a day: the material of every keystore the tests write (also the
/// Connect listeners' tests).
pub(crate) fn key_and_cert() -> (PKey<Private>, X509) {
    let key = PKey::from_ec_key(EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", "127.0.0.1").unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap()).unwrap();
    b.set_not_after(&Asn1Time::days_from_now(1).unwrap()).unwrap();
    b.sign(&key, openssl::hash::MessageDigest::sha256()).unwrap();
    (key, b.build())
}

/// A PEM keystore's text: `key` (PKCS#8, unencrypted), then `cert`.
pub(crate) fn pem_of(key: &PKey<Private>, cert: &X509) -> Vec<u8> {
    let mut pem = key.private_key_to_pem_pkcs8().unwrap();
    pem.extend(cert.to_pem().unwrap());
    pem
}

/// `bytes` written as `name` in a directory of this test process's own.
pub(crate) fn write(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("keystore-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn jks_keystore_file(name: &str, store_pw: &str, key_pw: &str) -> (std::path::PathBuf, X509) {
    let (key, cert) = key_and_cert();
    let protected = jks::tests::protect(&key.private_key_to_pkcs8().unwrap(), key_pw);
    let file = jks::tests::jks_file(&[(1, "me", protected, vec![cert.to_der().unwrap()])], store_pw);
    (write(name, &file), cert)
}

#[test]
fn a_jks_keystore_with_its_own_key_password() {
    let (path, cert) = jks_keystore_file("k.jks", "storepw", "keypass");
    // Declared PKCS12 or JKS alike, as the JDK reads either.
    for declared in [StoreType::Jks, StoreType::Pkcs12] {
        let m = read_keystore(&path, declared, Some("storepw"), Some("keypass")).unwrap();
        assert_eq!(m.chain[0].to_der().unwrap(), cert.to_der().unwrap());
        assert_eq!(m.alias, "me");
    }
    let e = read_keystore(&path, StoreType::Jks, Some("storepw"), None).unwrap_err();
    assert_eq!(e.fault, Fault::KeyPassword, "the key password defaults to the store password, which is not it: {e}");
    let e = read_keystore(&path, StoreType::Jks, Some("wrong"), Some("keypass")).unwrap_err();
    assert_eq!(e.fault, Fault::StorePassword, "{e}");
    assert!(e.message.starts_with(&format!("{} cannot be opened with this password", path.display())), "{e}");
}

#[test]
fn a_pkcs12_keystore_and_its_password() {
    let (key, cert) = key_and_cert();
    let p12 = openssl::pkcs12::Pkcs12::builder().name("me").pkey(&key).cert(&cert).build2("storepw").unwrap();
    let path = write("k.p12", &p12.to_der().unwrap());
    let m = read_keystore(&path, StoreType::Pkcs12, Some("storepw"), None).unwrap();
    assert!(m.key.public_eq(&key));
    let e = read_keystore(&path, StoreType::Pkcs12, Some("nope"), None).unwrap_err();
    assert_eq!(e.fault, Fault::StorePassword, "{e}");
    // A truststore (certificates only) given as the keystore.
    let mut cas = openssl::stack::Stack::new().unwrap();
    cas.push(cert.clone()).unwrap();
    let mut trust = openssl::pkcs12::Pkcs12::builder();
    trust.ca(cas);
    let path = write("t.p12", &trust.build2("pw").unwrap().to_der().unwrap());
    let e = read_keystore(&path, StoreType::Pkcs12, Some("pw"), None).unwrap_err();
    assert!(e.fault == Fault::Location && e.message.contains("holds no private key entry"), "{e}");
    assert_eq!(read_truststore(&path, StoreType::Pkcs12, Some("pw")).unwrap().len(), 1);
}

#[test]
fn a_pem_keystore_plain_and_encrypted() {
    let (key, cert) = key_and_cert();
    let path = write("k.pem", &pem_of(&key, &cert));
    assert!(read_keystore(&path, StoreType::Pem, None, None).is_ok());
    let mut enc = key.private_key_to_pem_pkcs8_passphrase(openssl::symm::Cipher::aes_256_cbc(), b"keypass").unwrap();
    enc.extend(cert.to_pem().unwrap());
    let path = write("e.pem", &enc);
    assert!(read_keystore(&path, StoreType::Pem, None, Some("keypass")).is_ok());
    assert_eq!(read_keystore(&path, StoreType::Pem, None, Some("bad")).unwrap_err().fault, Fault::KeyPassword);
    assert_eq!(read_keystore(&path, StoreType::Pem, None, None).unwrap_err().fault, Fault::KeyPassword);
    // PEM declared as PKCS12: the type is at fault, and the fix says so.
    let e = read_keystore(&path, StoreType::Pkcs12, None, None).unwrap_err();
    assert!(e.fault == Fault::Type && e.message.contains("is PEM text, not Pkcs12 (set the type to PEM)"), "{e}");
}

#[test]
fn missing_empty_and_foreign_files() {
    let e = read_keystore(Path::new("/nonexistent/k.jks"), StoreType::Jks, Some("x"), None).unwrap_err();
    assert!(e.fault == Fault::Location && e.message.starts_with("cannot read /nonexistent/k.jks:"), "{e}");
    let e = read_keystore(&write("empty.jks", b""), StoreType::Jks, Some("x"), None).unwrap_err();
    assert!(e.message.ends_with("is empty"), "{e}");
    let e = read_keystore(&write("x.jceks", &[0xCE, 0xCE, 0xCE, 0xCE, 0, 0, 0, 2]), StoreType::Jks, Some("x"), None).unwrap_err();
    assert!(e.fault == Fault::Location && e.message.contains("JCEKS") && e.message.contains("keytool -importkeystore"), "{e}");
    let (_, cert) = key_and_cert();
    let only_trusted = jks::tests::jks_file(&[(2, "ca", cert.to_der().unwrap(), vec![])], "pw");
    let e = read_keystore(&write("t.jks", &only_trusted), StoreType::Jks, Some("pw"), None).unwrap_err();
    assert!(e.message.contains("holds no private key entry"), "{e}");
    assert_eq!(StoreType::parse("pkcs12"), Some(StoreType::Pkcs12));
    assert_eq!(StoreType::parse("BKS"), None);
}

#[test]
fn a_jks_truststore_of_trusted_certificates() {
    let (_, cert) = key_and_cert();
    let file = jks::tests::jks_file(&[(2, "ca", cert.to_der().unwrap(), vec![])], "trustpw");
    let path = write("trust.jks", &file);
    let certs = read_truststore(&path, StoreType::Jks, Some("trustpw")).unwrap();
    assert_eq!(certs[0].to_der().unwrap(), cert.to_der().unwrap());
    assert_eq!(read_truststore(&path, StoreType::Jks, Some("bad")).unwrap_err().fault, Fault::StorePassword);
    // A keystore's key entries are no trusted certificates.
    let (keys, _) = jks_keystore_file("keys.jks", "pw", "pw");
    let e = read_truststore(&keys, StoreType::Jks, Some("pw")).unwrap_err();
    assert!(e.message.contains("holds no certificate to trust"), "{e}");
}
