//! End-to-end over Kerberos (GSSAPI) and OIDC (OAUTHBEARER with signed
//! JWTs): the real binary, Java-style properties and MM2 files written here,
//! and the target cluster's GSSAPI and OIDC listeners with the private KDC
//! and token endpoint behind them (scripts/lib/sasl-services.sh; started by
//! scripts/test, or by `MM_KERBEROS=1 MM_OIDC=1 scripts/clusters start`).
//! The source stays PLAINTEXT; records are checked on the target's
//! PLAINTEXT listener, count and content.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;

/// One of the MM_TARGET_* lines `scripts/clusters start` prints when the
/// service behind it was asked for with `switch`.
fn service_var(name: &str, switch: &str) -> String {
    std::env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        panic!(
            "{name} is not set: this test needs the target's {} listener; start the clusters with {switch} \
             ({switch} scripts/clusters start | sed 's/^/export MM_/') and export its lines, or run scripts/test, which turns it on",
            if switch == "MM_KERBEROS=1" { "GSSAPI" } else { "OIDC" }
        )
    })
}

struct Kerberos {
    bootstrap: String,
    krb5_conf: String,
    keytab: String,
    principal: String,
}

fn kerberos() -> Kerberos {
    let v = |n: &str| service_var(n, "MM_KERBEROS=1");
    Kerberos {
        bootstrap: v("MM_TARGET_GSSAPI_BOOTSTRAP"),
        krb5_conf: v("MM_TARGET_KRB5_CONF"),
        keytab: v("MM_TARGET_KEYTAB"),
        principal: v("MM_TARGET_PRINCIPAL"),
    }
}

impl Kerberos {
    /// Java's client keys for the GSSAPI listener, without a prefix.
    fn lines(&self, principal: &str) -> Vec<String> {
        vec![
            "security.protocol=SASL_PLAINTEXT".into(),
            "sasl.mechanism=GSSAPI".into(),
            "sasl.kerberos.service.name=kafka".into(),
            format!(
                "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=\"{}\" principal=\"{principal}\";",
                self.keytab
            ),
        ]
    }

    /// What the JVM got with -Djava.security.krb5.conf: the process reads KRB5_CONFIG.
    fn env(&self) -> Vec<(&str, &str)> {
        vec![("KRB5_CONFIG", self.krb5_conf.as_str())]
    }
}

struct Oidc {
    bootstrap: String,
    token_url: String,
    client_id: String,
    client_secret: String,
    scope: String,
}

fn oidc() -> Oidc {
    let v = |n: &str| service_var(n, "MM_OIDC=1");
    Oidc {
        bootstrap: v("MM_TARGET_OIDC_BOOTSTRAP"),
        token_url: v("MM_TARGET_OIDC_TOKEN_URL"),
        client_id: v("MM_TARGET_OIDC_CLIENT_ID"),
        client_secret: v("MM_TARGET_OIDC_CLIENT_SECRET"),
        scope: v("MM_TARGET_OIDC_SCOPE"),
    }
}

impl Oidc {
    /// Java's client keys for the OIDC listener (Kafka 3.x handler name).
    fn lines(&self, secret: &str) -> Vec<String> {
        vec![
            "security.protocol=SASL_PLAINTEXT".into(),
            "sasl.mechanism=OAUTHBEARER".into(),
            "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler".into(),
            format!("sasl.oauthbearer.token.endpoint.url={}", self.token_url),
            format!(
                "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"{}\" clientSecret=\"{secret}\" scope=\"{}\";",
                self.client_id, self.scope
            ),
        ]
    }
}

fn write(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(unique("mm-sasl-services"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A source topic with `n` records, and a consumer file for group `group`.
fn source_topic(name: &str, n: usize) -> (String, Vec<Rec>) {
    let topic = unique(name);
    create_topic(&source(), &topic, 3, &[]);
    let records = sample_records(&topic, n);
    produce(&source(), &topic, &records);
    (topic, records)
}

/// MM1 from the source to `producer_lines`' listener until every record is
/// committed; the target then holds exactly the source's records.
fn mm1_through(name: &str, producer_lines: &[String], env: &[(&str, &str)], secret: &str) {
    let (topic, records) = source_topic(name, 500);
    let dir = tmpdir();
    let group = unique("sasl-group");
    let consumer =
        write(&dir, "consumer.properties", &[format!("bootstrap.servers={}", source()), format!("group.id={group}"), "auto.offset.reset=earliest".into()]);
    let producer = write(&dir, "producer.properties", producer_lines);
    let started = Instant::now();
    let args = [
        s("--consumer.config"),
        path(&consumer),
        s("--producer.config"),
        path(&producer),
        s("--whitelist"),
        topic.clone(),
        s("--offset.commit.interval.ms"),
        s("1000"),
    ];
    let mut m = Mirror::start_with_env(&args, env);
    wait_until("all records mirrored and committed", || {
        assert!(m.alive(), "the mirror exited early; log:\n{}", m.output());
        all_committed(&source(), &group, &topic)
    });
    let took = started.elapsed();
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    let landed = read_topic(&target(), &topic);
    let dups = assert_same_records(&topic, &records, &landed);
    let out = m.output();
    assert!(!out.contains(secret), "the secret appears in the mirror's output:\n{out}");
    println!("{topic}: {} records mirrored by MM1 over {name}, {dups} duplicates, all committed after {:.1}s", records.len(), took.as_secs_f64());
}

/// MM2 (`--mm2.config`) from the source to the target reached with
/// `target_lines` (each prefixed with the target's alias); the records land
/// in `<source alias>.<topic>` on the target.
fn mm2_through(name: &str, target_bootstrap: &str, target_lines: &[String], env: &[(&str, &str)], secret: &str) {
    let (topic, records) = source_topic(name, 400);
    let (a, b) = ("saslsrc", "sasltgt");
    let mut lines = vec![
        format!("clusters = {a}, {b}"),
        format!("{a}.bootstrap.servers = {}", source()),
        format!("{b}.bootstrap.servers = {target_bootstrap}"),
        format!("{a}->{b}.enabled = true"),
        format!("{a}->{b}.topics = {topic}"),
    ];
    lines.extend(target_lines.iter().map(|l| format!("{b}.{l}")));
    lines.extend(mm2_common_lines());
    let file = write(&tmpdir(), "mm2.properties", &lines);
    let started = Instant::now();
    let mut m = Mirror::start_with_env(&[s("--mm2.config"), path(&file)], env);
    let remote = format!("{a}.{topic}");
    wait_until(&format!("{} records in {remote} on the target", records.len()), || {
        assert!(m.alive(), "mirror-maker --mm2.config exited early; log:\n{}", m.output());
        end_offsets(&target(), &remote).is_some_and(|ends| ends.iter().sum::<i64>() >= records.len() as i64)
    });
    let took = started.elapsed();
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    let landed = read_topic(&target(), &remote);
    let dups = assert_same_records(&remote, &records, &landed);
    let out = m.output();
    assert!(!out.contains(secret), "the secret appears in the mirror's output:\n{out}");
    println!("{remote}: {} records mirrored by MM2 over {name}, {dups} duplicates, after {:.1}s", records.len(), took.as_secs_f64());
}

/// MM1 to a target that refuses the credentials: exit 1 with the message
/// tests/security.rs expects of an auth failure, nothing committed, no
/// topic created; returns the output.
fn refused(name: &str, producer_lines: &[String], env: &[(&str, &str)]) -> String {
    let (topic, _) = source_topic(name, 100);
    let dir = tmpdir();
    let group = unique("sasl-group");
    let consumer =
        write(&dir, "consumer.properties", &[format!("bootstrap.servers={}", source()), format!("group.id={group}"), "auto.offset.reset=earliest".into()]);
    let producer = write(&dir, "producer.properties", producer_lines);
    let started = Instant::now();
    let mut m =
        Mirror::start_with_env(&[s("--consumer.config"), path(&consumer), s("--producer.config"), path(&producer), s("--whitelist"), topic.clone()], env);
    let limit = Duration::from_secs(60);
    while m.alive() {
        assert!(started.elapsed() < limit, "still running after {limit:?} with wrong credentials; log:\n{}", m.output());
        std::thread::sleep(Duration::from_millis(200));
    }
    let code = m.wait();
    let out = m.output();
    assert_eq!(code, 1, "log:\n{out}");
    let bootstrap = producer_lines.iter().find_map(|l| l.strip_prefix("bootstrap.servers=")).unwrap();
    let expected = format!("authentication with the target cluster {bootstrap} (--producer.config {}) failed", producer.display());
    assert!(out.contains(&expected), "no clear message ({expected}) in:\n{out}");
    for (p, committed, end) in committed_and_end(&source(), &group, &topic) {
        assert_eq!(committed, None, "{topic}-{p}: group committed {committed:?} (end {end}) although nothing reached the target");
    }
    assert_eq!(partitions_of(&target(), &topic), None, "the topic was created on the target");
    println!("{name}: exit {code} after {:.1}s, nothing committed", started.elapsed().as_secs_f64());
    out
}

#[test]
#[ignore = "needs clusters"]
fn mm1_mirrors_over_gssapi() {
    require_clusters!(source(), target());
    let k = kerberos();
    let mut lines = vec![format!("bootstrap.servers={}", k.bootstrap)];
    lines.extend(k.lines(&k.principal));
    mm1_through("krb-mm1", &lines, &k.env(), "no secret in this file");
}

#[test]
#[ignore = "needs clusters"]
fn mm2_mirrors_over_gssapi() {
    require_clusters!(source(), target());
    let k = kerberos();
    mm2_through("krb-mm2", &k.bootstrap, &k.lines(&k.principal), &k.env(), "no secret in this file");
}

#[test]
#[ignore = "needs clusters"]
fn mm1_mirrors_over_oidc() {
    require_clusters!(source(), target());
    let o = oidc();
    let mut lines = vec![format!("bootstrap.servers={}", o.bootstrap)];
    lines.extend(o.lines(&o.client_secret));
    mm1_through("oidc-mm1", &lines, &[], &o.client_secret);
}

#[test]
#[ignore = "needs clusters"]
fn mm2_mirrors_over_oidc() {
    require_clusters!(source(), target());
    let o = oidc();
    mm2_through("oidc-mm2", &o.bootstrap, &o.lines(&o.client_secret), &[], &o.client_secret);
}

/// The keytab holds mirror@, not the principal asked for: kinit fails, the
/// handshake has no credentials, and the mirror stops with the Kerberos hint.
#[test]
#[ignore = "needs clusters"]
fn a_principal_not_in_the_keytab_fails_fast() {
    require_clusters!(source(), target());
    let k = kerberos();
    let wrong = format!("nobody-{}@MIRROR.TEST", short_id());
    let mut lines = vec![format!("bootstrap.servers={}", k.bootstrap)];
    lines.extend(k.lines(&wrong));
    let out = refused("krb-wrong-principal", &lines, &k.env());
    assert!(out.contains("GSSAPI") && out.contains("klist -k -t KEYTAB"), "no Kerberos hint in:\n{out}");
}

#[test]
#[ignore = "needs clusters"]
fn a_wrong_client_secret_fails_fast() {
    require_clusters!(source(), target());
    let o = oidc();
    let wrong = unique("wrong-client-secret");
    let mut lines = vec![format!("bootstrap.servers={}", o.bootstrap)];
    lines.extend(o.lines(&wrong));
    let out = refused("oidc-wrong-secret", &lines, &[]);
    assert!(out.contains("invalid_client") && out.contains("clientSecret"), "no OIDC hint in:\n{out}");
    assert!(!out.contains(&wrong), "the client secret appears in the output:\n{out}");
}
