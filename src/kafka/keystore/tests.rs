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
    // JCEKS bytes declared JKS: Java 17 refuses them, and so do we, naming the type.
    let jceks = write("x.jceks", &[0xCE, 0xCE, 0xCE, 0xCE, 0, 0, 0, 2]);
    let e = read_keystore(&jceks, StoreType::Jks, Some("x"), None).unwrap_err();
    assert!(e.fault == Fault::Type && e.message.contains("is a JCEKS store, not Jks (set the type to JCEKS)"), "{e}");
    let e = read_keystore(&jceks, StoreType::Jceks, Some("x"), None).unwrap_err();
    assert!(e.fault == Fault::Location && e.message.contains("cut short"), "{e}");
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

/// Runs the JDK's keytool (the judge of what a Java store is) in `dir`.
/// Missing keytool fails the test: these stores cannot be made otherwise.
pub(crate) fn keytool(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("keytool")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("keytool cannot be run ({e}): these tests need a JDK's keytool on PATH"));
    assert!(out.status.success(), "keytool {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A fresh directory holding `ca.pem` (a self-signed certificate).
pub(crate) fn keytool_dir(name: &str) -> (std::path::PathBuf, X509) {
    let dir = std::env::temp_dir().join(format!("keystore-keytool-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_, cert) = key_and_cert();
    std::fs::write(dir.join("ca.pem"), cert.to_pem().unwrap()).unwrap();
    (dir, cert)
}

/// A keytool store of `ty` with the key 'me' (key password `keypw`), the
/// trusted 'ca' and, for JCEKS, the secret key 'sec'.
pub(crate) fn keytool_store(dir: &Path, ty: &str, keypw: &str) -> std::path::PathBuf {
    let file = format!("k.{}", ty.to_ascii_lowercase());
    let common = ["-keystore", file.as_str(), "-storetype", ty, "-storepass", "storepw"];
    let gen = ["-genkeypair", "-alias", "me", "-keyalg", "EC", "-dname", "CN=me", "-keypass", keypw];
    keytool(dir, &[&gen[..], &common[..]].concat());
    keytool(dir, &[&["-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem"][..], &common[..]].concat());
    if ty == "JCEKS" {
        keytool(dir, &[&["-genseckey", "-alias", "sec", "-keyalg", "AES", "-keysize", "128", "-keypass", keypw][..], &common[..]].concat());
    }
    dir.join(file)
}

fn key_matches_its_certificate(m: &KeyMaterial) {
    assert!(m.chain[0].public_key().unwrap().public_eq(&m.key), "the key recovered is not the certificate's");
}

#[test]
fn keytool_jks_and_jceks_keystores_with_a_key_password_of_their_own() {
    for ty in ["JKS", "JCEKS"] {
        let (dir, _) = keytool_dir(ty);
        let path = keytool_store(&dir, ty, "keypass1");
        let declared = StoreType::parse(ty).unwrap();
        let m = read_keystore(&path, declared, Some("storepw"), Some("keypass1")).unwrap_or_else(|e| panic!("{ty}: {e}"));
        key_matches_its_certificate(&m);
        assert_eq!((m.alias.as_str(), m.others.len()), ("me", 0), "{ty}: the trusted and secret entries are no keys");
        assert_eq!(m.secrets, if ty == "JCEKS" { vec!["sec".to_string()] } else { vec![] }, "{ty}");
        let e = read_keystore(&path, declared, Some("storepw"), Some("wrongpw")).unwrap_err();
        assert_eq!(e.fault, Fault::KeyPassword, "{ty}: {e}");
        let e = read_keystore(&path, declared, Some("storepw"), None).unwrap_err();
        assert_eq!(e.fault, Fault::KeyPassword, "{ty}: the store password is not the key's: {e}");
        let e = read_keystore(&path, declared, Some("wrongpw"), Some("keypass1")).unwrap_err();
        assert_eq!(e.fault, Fault::StorePassword, "{ty}: {e}");
        assert!(!e.message.contains("wrongpw") && !e.message.contains("keypass1"), "{e}");
        let (certs, secrets) = read_truststore_entries(&path, declared, Some("storepw")).unwrap();
        assert_eq!((certs.len(), secrets.len()), (1, usize::from(ty == "JCEKS")), "{ty}: the trusted 'ca' only");
    }
}

/// What keytool -list -storetype says on Java 17: JKS and PKCS12 read
/// each other's bytes, JCEKS reads JCEKS and JKS, nothing reads JCEKS
/// bytes but JCEKS.
#[test]
fn declared_types_read_what_java_17_reads() {
    let (dir, _) = keytool_dir("types");
    let stores = [
        ("JKS", keytool_store(&dir, "JKS", "storepw")),
        ("JCEKS", keytool_store(&dir, "JCEKS", "storepw")),
        ("PKCS12", keytool_store(&dir, "PKCS12", "storepw")),
    ];
    let reads =
        |bytes: &str, declared: &str| matches!((bytes, declared), (_, _) if bytes == declared) || matches!((bytes, declared), ("JKS", _) | ("PKCS12", "JKS"));
    for (bytes, path) in &stores {
        for declared in ["JKS", "JCEKS", "PKCS12"] {
            let r = read_keystore(path, StoreType::parse(declared).unwrap(), Some("storepw"), None);
            match r {
                Ok(m) => {
                    assert!(reads(bytes, declared), "{bytes} bytes declared {declared} were read, Java refuses them");
                    key_matches_its_certificate(&m);
                }
                Err(e) => {
                    assert!(!reads(bytes, declared), "{bytes} bytes declared {declared}: {e}");
                    assert_eq!(e.fault, Fault::Type, "{e}");
                    assert!(e.message.contains(&format!("is a {bytes} store")), "{e}");
                }
            }
        }
    }
}

#[test]
fn every_cut_of_a_keytool_jceks_store_is_an_error_never_a_panic() {
    let (dir, _) = keytool_dir("cut");
    let path = keytool_store(&dir, "JCEKS", "keypass1");
    let bytes = std::fs::read(&path).unwrap();
    for n in (0..bytes.len()).step_by(7) {
        let cut = write(&format!("cut{n}.jceks"), &bytes[..n]);
        for pw in [Some("storepw"), None] {
            assert!(read_keystore(&cut, StoreType::Jceks, pw, Some("keypass1")).is_err(), "cut at {n}");
        }
    }
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    let e = read_keystore(&write("flipped.jceks", &flipped), StoreType::Jceks, Some("storepw"), Some("keypass1")).unwrap_err();
    assert_eq!(e.fault, Fault::StorePassword, "a damaged store fails its integrity check as keytool's does: {e}");
}

#[test]
fn an_expired_or_future_certificate_is_refused_with_its_dates() {
    let (key, _) = key_and_cert();
    for (from, to, says) in [(-10, -1, "expired on"), (5, 10, "is not valid before")] {
        let mut name = X509NameBuilder::new().unwrap();
        name.append_entry_by_text("CN", "client").unwrap();
        let name = name.build();
        let mut b = X509::builder().unwrap();
        b.set_subject_name(&name).unwrap();
        b.set_issuer_name(&name).unwrap();
        b.set_pubkey(&key).unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        b.set_not_before(&Asn1Time::from_unix(now + from * 86400).unwrap()).unwrap();
        b.set_not_after(&Asn1Time::from_unix(now + to * 86400).unwrap()).unwrap();
        b.sign(&key, openssl::hash::MessageDigest::sha256()).unwrap();
        let path = write(&format!("old{from}.pem"), &pem_of(&key, &b.build()));
        let m = read_keystore(&path, StoreType::Pem, None, None).unwrap();
        let e = check_validity(&path, &m).unwrap_err();
        assert!(e.fault == Fault::Location && e.message.contains(says) && e.message.contains("renew it"), "{e}");
    }
    let (key, cert) = key_and_cert();
    let path = write("fresh.pem", &pem_of(&key, &cert));
    check_validity(&path, &read_keystore(&path, StoreType::Pem, None, None).unwrap()).unwrap();
}
