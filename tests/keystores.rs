//! End to end: the client's key and trust stores in each format Java reads
//! (JKS, JCEKS, PKCS12), made by the JDK's keytool from a client key signed
//! by the target's test CA, used over the target's MTLS listener (client
//! certificate required, see the header of scripts/clusters). MM1 mirrors
//! with a producer file holding the stores, MM2 with `B.ssl.*` keys; wrong
//! passwords stop the mirror with exit 1, naming file:line and key and
//! never the password. Records are checked on the target's PLAINTEXT
//! listener.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::*;

const STORE_PW: &str = "ks-store-pw-1";
const KEY_PW: &str = "ks-key-pw-2";
const TRUST_PW: &str = "ks-trust-pw-3";

fn mtls_bootstrap() -> String {
    let port = std::env::var("MM_TARGET_PORT").ok().and_then(|p| p.parse::<u16>().ok()).unwrap_or(29092);
    std::env::var("MM_TARGET_MTLS_BOOTSTRAP").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| format!("127.0.0.1:{}", port + 4))
}

fn ca_pem() -> PathBuf {
    let p =
        std::env::var("MM_TARGET_SSL_CA").ok().filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var("MM_CLUSTERS_DIR").unwrap_or_else(|_| "/tmp/mirror-maker-clusters".into())).join("target/tls/ca.pem")
        });
    assert!(p.is_file(), "the target's test CA {} is missing: start the clusters with scripts/clusters start", p.display());
    p
}

fn run(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program} cannot be run ({e}); these tests need openssl and a JDK's keytool on PATH"));
    assert!(out.status.success(), "{program} {args:?} failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// A directory with `client.<ty>` (the client key, signed by the target's
/// CA, key password KEY_PW unless PKCS12, where keytool keeps one password)
/// and `trust.<ty>` (the CA), both made by keytool.
fn stores(ty: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique("mm-keystores"));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = ca_pem();
    let (ca, ca_key) = (ca.display().to_string(), ca.with_file_name("ca.key").display().to_string());
    let openssl = |args: &str| run(&dir, "openssl", &args.split(' ').collect::<Vec<_>>());
    openssl("req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr -subj /CN=mirror-maker-ks");
    openssl(&format!("x509 -req -in client.csr -CA {ca} -CAkey {ca_key} -set_serial 4343 -days 2 -out client.pem"));
    openssl("pkcs12 -export -in client.pem -inkey client.key -name client -out source.p12 -passout pass:source-pw");
    let client = format!("client.{}", ty.to_ascii_lowercase());
    let key_pw = if ty == "PKCS12" { STORE_PW } else { KEY_PW };
    #[rustfmt::skip]
    run(&dir, "keytool", &["-importkeystore", "-noprompt", "-srckeystore", "source.p12", "-srcstoretype", "PKCS12", "-srcstorepass", "source-pw",
        "-srcalias", "client", "-destkeystore", &client, "-deststoretype", ty, "-deststorepass", STORE_PW, "-destkeypass", key_pw]);
    let trust = format!("trust.{}", ty.to_ascii_lowercase());
    run(&dir, "keytool", &["-importcert", "-noprompt", "-alias", "test-ca", "-file", &ca, "-keystore", &trust, "-storetype", ty, "-storepass", TRUST_PW]);
    // The client key's files are not needed any more; only the stores hold it.
    for f in ["client.key", "source.p12"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    dir
}

/// The SSL keys of a client with both stores of `ty` in `dir`, prefixed
/// (`B.` in an MM2 file), one per line, in this order (the tests name lines).
fn ssl_lines(prefix: &str, dir: &Path, ty: &str, store_pw: &str, key_pw: &str) -> Vec<String> {
    let ext = ty.to_ascii_lowercase();
    vec![
        format!("{prefix}security.protocol=SSL"),
        format!("{prefix}ssl.truststore.type={ty}"),
        format!("{prefix}ssl.truststore.location={}", dir.join(format!("trust.{ext}")).display()),
        format!("{prefix}ssl.truststore.password={TRUST_PW}"),
        format!("{prefix}ssl.keystore.type={ty}"),
        format!("{prefix}ssl.keystore.location={}", dir.join(format!("client.{ext}")).display()),
        format!("{prefix}ssl.keystore.password={store_pw}"),
        format!("{prefix}ssl.key.password={key_pw}"),
    ]
}

fn producer_file(dir: &Path, ty: &str, store_pw: &str, key_pw: &str) -> PathBuf {
    let mut text = format!("bootstrap.servers={}\n", mtls_bootstrap());
    for l in ssl_lines("", dir, ty, store_pw, key_pw) {
        text.push_str(&l);
        text.push('\n');
    }
    let p = dir.join(unique("producer") + ".properties");
    std::fs::write(&p, text).unwrap();
    p
}

fn mm1_args(consumer: &Path, producer: &Path, topic: &str) -> Vec<String> {
    vec![
        s("--consumer.config"),
        path(consumer),
        s("--producer.config"),
        path(producer),
        s("--whitelist"),
        topic.to_string(),
        s("--offset.commit.interval.ms"),
        s("1000"),
    ]
}

fn assert_no_password(out: &str) {
    for pw in [STORE_PW, KEY_PW, TRUST_PW, "wrong-pw-9"] {
        assert!(!out.contains(pw), "a password appears in the output:\n{out}");
    }
}

/// MM1 with both stores of `ty`: every record arrives over MTLS.
fn mm1_mirrors_with(ty: &str) {
    let dir = stores(ty);
    let topic = unique(&format!("ks-{}", ty.to_ascii_lowercase()));
    create_topic(&source(), &topic, 2, &[]);
    let records = sample_records(&topic, 150);
    produce(&source(), &topic, &records);
    let group = unique("ks-group");
    let consumer = props(&unique("ks-consumer"), &[format!("bootstrap.servers={}", source()), format!("group.id={group}"), s("auto.offset.reset=earliest")]);
    let producer = producer_file(&dir, ty, STORE_PW, if ty == "PKCS12" { STORE_PW } else { KEY_PW });
    let started = Instant::now();
    let mut m = Mirror::start(&mm1_args(&consumer, &producer, &topic));
    wait_until("all records mirrored and committed", || {
        assert!(m.alive(), "the mirror exited early; log:\n{}", m.output());
        all_committed(&source(), &group, &topic)
    });
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    let dups = assert_same_records(&topic, &records, &read_topic(&target(), &topic));
    let out = m.output();
    assert_no_password(&out);
    assert!(out.contains("handed to librdkafka in memory as ssl.key.pem"), "no notice of the in-memory key in:\n{out}");
    println!("{ty}: {} records over MTLS in {:.1}s, {dups} duplicates, no password in the output", records.len(), started.elapsed().as_secs_f64());
}

#[test]
#[ignore = "needs clusters"]
fn mm1_mirrors_with_jks_stores_and_a_key_password_of_its_own() {
    require_clusters!();
    mm1_mirrors_with("JKS");
}

#[test]
#[ignore = "needs clusters"]
fn mm1_mirrors_with_jceks_stores_and_a_key_password_of_its_own() {
    require_clusters!();
    mm1_mirrors_with("JCEKS");
}

#[test]
#[ignore = "needs clusters"]
fn mm1_mirrors_with_pkcs12_stores() {
    require_clusters!();
    mm1_mirrors_with("PKCS12");
}

/// Wrong store and key passwords: exit 1 at start, the line and key at
/// fault named, no password in stdout or stderr.
#[test]
#[ignore = "needs clusters"]
fn wrong_store_and_key_passwords_stop_with_file_line_and_key() {
    require_clusters!();
    let dir = stores("JKS");
    let topic = unique("ks-wrong");
    create_topic(&source(), &topic, 1, &[]);
    let consumer = props(&unique("ks-consumer"), &[format!("bootstrap.servers={}", source()), format!("group.id={}", unique("ks-group"))]);
    for (store_pw, key_pw, line, key) in [("wrong-pw-9", KEY_PW, 8, "ssl.keystore.password"), (STORE_PW, "wrong-pw-9", 9, "ssl.key.password")] {
        let producer = producer_file(&dir, "JKS", store_pw, key_pw);
        let mut m = Mirror::start(&mm1_args(&consumer, &producer, &topic));
        let code = m.wait();
        let out = m.output();
        assert_eq!(code, 1, "log:\n{out}");
        assert!(out.contains(&format!("{}:{line}: {key}:", producer.display())), "no '{}:{line}: {key}:' in:\n{out}", producer.display());
        assert_no_password(&out);
        assert!(!out.contains("client.jks"), "the keystore's path (a secret for librdkafka) appears in:\n{out}");
        println!("{key} wrong: exit 1 with {}", out.lines().find(|l| l.contains(key)).unwrap_or_default());
    }
}

/// MM2 dedicated mode with the target's client stores in `B.ssl.*` (JKS,
/// a key password of its own): the remote topic gets every record.
#[test]
#[ignore = "needs clusters"]
fn mm2_mirrors_with_jks_stores_for_the_target() {
    require_clusters!();
    let dir = stores("JKS");
    let topic = unique("ks-mm2");
    create_topic(&source(), &topic, 2, &[]);
    let records = sample_records(&topic, 120);
    produce(&source(), &topic, &records);
    let mut lines = vec![
        s("clusters = A, B"),
        format!("A.bootstrap.servers = {}", source()),
        format!("B.bootstrap.servers = {}", mtls_bootstrap()),
        s("A->B.enabled = true"),
        format!("A->B.topics = {topic}"),
        s("B->A.emit.heartbeats.enabled = false"),
    ];
    lines.extend(ssl_lines("B.", &dir, "JKS", STORE_PW, KEY_PW));
    lines.extend(mm2_common_lines());
    let file = props(&unique("ks-mm2"), &lines);
    let mut m = Mirror::start(&[s("--mm2.config"), path(&file)]);
    let remote = format!("A.{topic}");
    wait_until("every record in the remote topic", || {
        assert!(m.alive(), "the mirror exited early; log:\n{}", m.output());
        read_topic(&target(), &remote).len() >= records.len()
    });
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    assert_same_records(&remote, &records, &read_topic(&target(), &remote));
    assert_no_password(&m.output());
}
