use super::*;
use crate::front::properties;
use crate::kafka::keystore::tests::{key_and_cert, pem_of, write};

fn file(text: &str) -> PropertiesFile {
    properties::parse(Path::new("worker.properties"), text.as_bytes()).unwrap()
}

/// A PKCS12 keystore with a fresh key for 127.0.0.1, password `pw`.
fn p12(name: &str, pw: &str) -> String {
    let (key, cert) = key_and_cert();
    let store = openssl::pkcs12::Pkcs12::builder().name("me").pkey(&key).cert(&cert).build2(pw).unwrap();
    // Named apart from the keystore tests' files, written by the same process.
    write(&format!("listeners-{name}"), &store.to_der().unwrap()).display().to_string()
}

fn tls_of(text: &str) -> Result<Option<Tls>, ConfigError> {
    let f = file(text);
    let l = listeners(&f)?;
    tls(&f, &l, &mut Vec::new())
}

#[test]
fn a_list_of_http_and_https_listeners() {
    let f = file("listeners=HTTP://127.0.0.1:8083, https://:8443,https://[::1]:9443\n");
    let l = listeners(&f).unwrap();
    assert_eq!(
        l.iter().map(|l| (l.scheme, l.bind())).collect::<Vec<_>>(),
        vec![(Scheme::Http, ("127.0.0.1".to_string(), 8083)), (Scheme::Https, ("0.0.0.0".to_string(), 8443)), (Scheme::Https, ("::1".to_string(), 9443)),]
    );
    assert_eq!(advertised(&f, &l).unwrap().port, 8083, "http when listed, as Connect");
    let f = file("listeners=http://:8083,https://:8443\nrest.advertised.listener=HTTPS\n");
    assert_eq!(advertised(&f, &listeners(&f).unwrap()).unwrap().port, 8443);
    let f = file("listeners=https://:8443\n");
    assert_eq!(advertised(&f, &listeners(&f).unwrap()).unwrap().port, 8443, "https when only https is listed");
    let f = file("listeners=http://:8083\nrest.advertised.listener=https\n");
    let e = advertised(&f, &listeners(&f).unwrap()).unwrap_err().to_string();
    assert!(e.starts_with("worker.properties:2: rest.advertised.listener=https but listeners has no https listener"), "{e}");
    let e = listeners(&file("listeners=ftp://:21\n")).unwrap_err().to_string();
    assert!(e.contains("the protocol 'ftp' of 'ftp://:21' is neither http nor https"), "{e}");
    assert_eq!(listeners(&file("")).unwrap()[0].port, 8083, "Connect's default");
}

#[test]
fn the_prefixed_keys_or_else_the_top_level_ones() {
    let store = p12("a.p12", "storepw");
    assert!(tls_of(&format!("listeners=https://:8443\nlisteners.https.ssl.keystore.location={store}\nlisteners.https.ssl.keystore.password=storepw\n"))
        .unwrap()
        .is_some());
    // No listeners.https.* key: the worker's own ssl.* keys, as Java.
    assert!(tls_of(&format!("listeners=https://:8443\nssl.keystore.location={store}\nssl.keystore.password=storepw\n")).unwrap().is_some());
    // One listeners.https.* key: the top-level keys are not read at all.
    let e = tls_of(&format!("listeners=https://:8443\nssl.keystore.location={store}\nssl.keystore.password=storepw\nlisteners.https.ssl.client.auth=none\n"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("worker.properties: an https listener needs a keystore and listeners.https.ssl.keystore.location is not set"), "{e}");
    assert!(tls_of("listeners=http://:8083\nlisteners.https.ssl.keystore.location=/nonexistent\n").unwrap().is_none(), "no https listener, no store read");
}

#[test]
fn store_errors_name_the_key_at_fault_and_the_file() {
    let store = p12("b.p12", "storepw");
    let base = format!("listeners=https://:8443\nlisteners.https.ssl.keystore.location={store}\n");
    let e = tls_of(&format!("{base}listeners.https.ssl.keystore.password=wrong\n")).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("listeners.https.ssl.keystore.password"));
    assert!(
        e.to_string().starts_with(&format!("worker.properties:3: listeners.https.ssl.keystore.password: {store} cannot be opened with this password")),
        "{e}"
    );
    let e = tls_of("listeners=https://:8443\nlisteners.https.ssl.keystore.location=/nonexistent/k.p12\n").unwrap_err().to_string();
    assert!(e.starts_with("worker.properties:2: listeners.https.ssl.keystore.location: cannot read /nonexistent/k.p12"), "{e}");
    let e = tls_of(&format!("{base}listeners.https.ssl.keystore.password=storepw\nlisteners.https.ssl.keystore.type=BKS\n")).unwrap_err().to_string();
    assert!(e.contains("listeners.https.ssl.keystore.type=BKS is not a store type this worker reads; write PKCS12, JKS, JCEKS or PEM"), "{e}");
    let e = tls_of(&format!("{base}listeners.https.ssl.keystore.password=storepw\nlisteners.https.ssl.client.auth=always\n")).unwrap_err().to_string();
    assert!(e.contains("listeners.https.ssl.client.auth=always is not a client authentication mode; write none, requested or required"), "{e}");
    // A wrong truststore password names the truststore's key.
    assert!(tls_of(&format!(
        "{base}listeners.https.ssl.keystore.password=storepw\nlisteners.https.ssl.client.auth=required\nlisteners.https.ssl.truststore.location={store}\n\
         listeners.https.ssl.truststore.password=wrong\n"
    ))
    .unwrap_err()
    .to_string()
    .contains("listeners.https.ssl.truststore.password: "));
}

#[test]
fn keys_not_applied_or_unknown_are_warned_about() {
    let mut w = Vec::new();
    lint(&file("listeners.https.ssl.enabled.protocols=TLSv1.3\nlisteners.https.ssl.keystore.locaton=x\nlisteners.http.x=1\n"), &mut w);
    assert!(w[0].starts_with("worker.properties:1: listeners.https.ssl.enabled.protocols is not applied to the https listener"), "{w:?}");
    assert!(w[1].contains("Did you mean 'listeners.https.ssl.keystore.location'?"), "{w:?}");
    assert!(w[2].contains("listeners.http.x is not a Connect worker key"), "{w:?}");
}

/// The worker's top-level ssl.* keys serving its https listener, its
/// Kafka clients on PLAINTEXT: no warning that the connectors' producer
/// needs them again (it would not use them either). Before: that warning.
#[test]
fn the_worker_file_with_top_level_tls_keys_for_its_https_listener() {
    let store = p12("c.p12", "storepw");
    let text = format!(
        "bootstrap.servers=t:9092\ngroup.id=connect\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n\
         listeners=https://127.0.0.1:8443\nssl.keystore.location={store}\nssl.keystore.password=storepw\nssl.keystore.type=PKCS12\nssl.client.auth=none\n"
    );
    let w = crate::front::connect::worker_config(file(&text)).unwrap();
    assert!(w.tls.is_some());
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
    // With the clients on SSL the warning stands.
    let w = crate::front::connect::worker_config(file(&format!("{text}security.protocol=SSL\n"))).unwrap();
    assert!(w.warnings.iter().any(|m| m.contains("producer.<key>")), "{:?}", w.warnings);
}

/// A PEM keystore is served, with a notice that Java Connect would refuse
/// the file (its Jetty has no PEM KeyStore).
#[test]
fn a_pem_keystore_is_served_and_the_difference_from_java_said() {
    let (key, cert) = key_and_cert();
    let path = write("listeners-ks.pem", &pem_of(&key, &cert));
    let f = file(&format!("listeners=https://:8443\nlisteners.https.ssl.keystore.location={}\nlisteners.https.ssl.keystore.type=PEM\n", path.display()));
    let mut notices = Vec::new();
    assert!(tls(&f, &listeners(&f).unwrap(), &mut notices).unwrap().is_some());
    assert!(
        notices.iter().any(|n| n.starts_with("worker.properties:3: listeners.https.ssl.keystore.type=PEM is read by this worker; Java Connect")),
        "{notices:?}"
    );
}
