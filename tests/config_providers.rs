//! Config providers end to end: MM1 client files and an MM2 file whose
//! settings come from Kafka's FileConfigProvider, DirectoryConfigProvider
//! and EnvVarConfigProvider, on real brokers. The target's SCRAM password
//! (file), its SCRAM user name (env) and the source group or the topics
//! (dir) sit behind the providers, so the run works only if each resolves;
//! each value is a canary that must reach no output: the run's log, the
//! `--check-config` report, and a start that fails on a wrong key. Each of
//! those outputs must show the reference instead, so the checks can fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;

const FILE_CLASS: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
const DIR_CLASS: &str = "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
const ENV_CLASS: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// The target's SASL_PLAINTEXT listener (scripts/clusters: port + 2).
fn sasl_bootstrap() -> String {
    std::env::var("MM_TARGET_SASL_BOOTSTRAP").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        let port: u16 = std::env::var("MM_TARGET_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(29092);
        format!("127.0.0.1:{}", port + 2)
    })
}

/// A SCRAM-SHA-512 user on the target, made with Kafka's own kafka-configs,
/// usable once this returns.
fn scram_user(name: &str, password: &str) {
    let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-run"))
        .args(["configs", "--bootstrap-server", &target(), "--alter", "--add-config"])
        .arg(format!("SCRAM-SHA-512=[password={password}]"))
        .args(["--entity-type", "users", "--entity-name", name])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "kafka-configs: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let bootstrap = sasl_bootstrap();
    wait_until("the SCRAM user to be usable", || {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("security.protocol", "SASL_PLAINTEXT")
            .set("sasl.mechanisms", "SCRAM-SHA-512")
            .set("sasl.username", name)
            .set("sasl.password", password)
            .create()
            .unwrap();
        c.fetch_metadata(None, Duration::from_secs(5)).is_ok()
    });
}

/// The canaries, the files that hold two of them and the variable that
/// holds the third; the SCRAM user exists.
struct Secrets {
    dir: PathBuf,
    /// FileConfigProvider: the SCRAM password, in `dir/creds.properties`.
    password: String,
    /// EnvVarConfigProvider: the SCRAM user name, in `var`.
    user: String,
    var: String,
    /// DirectoryConfigProvider: `dir/secrets/value`.
    dir_value: String,
}

impl Secrets {
    fn new(dir_value: String) -> Secrets {
        let dir = std::env::temp_dir().join(unique("cp"));
        std::fs::create_dir_all(dir.join("secrets")).unwrap();
        let password = unique("cp-file-canary-pw");
        let user = unique("cp-env-canary-user");
        let var = format!("CP_USER_{}", short_id().to_uppercase());
        std::fs::write(dir.join("creds.properties"), format!("# the target's SCRAM password\nscram.password = {password}\n")).unwrap();
        // A trailing newline, as `echo value > file` leaves: the client trims it, as Java's ConfigDef does.
        std::fs::write(dir.join("secrets/value"), format!("{dir_value}\n")).unwrap();
        // Inherited by every mirror-maker this test starts; the name is this test's own.
        std::env::set_var(&var, &user);
        scram_user(&user, &password);
        Secrets { dir, password, user, var, dir_value }
    }

    fn canaries(&self) -> [&str; 3] {
        [&self.password, &self.user, &self.dir_value]
    }

    /// `what`'s output holds no canary.
    fn assert_absent(&self, what: &str, out: &str) {
        for c in self.canaries() {
            assert!(!out.contains(c), "{what}: the secret '{c}' appears in the output:\n{out}");
        }
    }

    fn creds(&self) -> String {
        self.dir.join("creds.properties").display().to_string()
    }

    fn secrets(&self) -> String {
        self.dir.join("secrets").display().to_string()
    }

    /// The JAAS line of the target's SCRAM client, both parts from providers.
    fn jaas(&self, key: &str) -> String {
        format!(
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"${{env:{}}}\" password=\"${{file:{}:{key}}}\";",
            self.var,
            self.creds()
        )
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The producer file of the target's SASL listener, with the password's key in creds.properties.
fn producer_file(s: &Secrets, name: &str, key: &str) -> PathBuf {
    write(
        &s.dir,
        name,
        &format!(
            "config.providers=file,env\nconfig.providers.file.class={FILE_CLASS}\nconfig.providers.env.class={ENV_CLASS}\n\
             config.providers.env.param.allowlist.pattern=^CP_USER_\nconfig.providers.file.param.allowed.paths={}\n\
             bootstrap.servers={}\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={}\n",
            s.dir.display(),
            sasl_bootstrap(),
            s.jaas(key)
        ),
    )
}

#[test]
#[ignore = "needs clusters"]
fn mm1_files_resolve_file_dir_and_env_providers_and_never_show_their_values() {
    require_clusters!(source(), target());
    let topic = unique("cp-mm1");
    create_topic(&source(), &topic, 3, &[]);
    let records = sample_records(&topic, 300);
    produce(&source(), &topic, &records);
    // The group comes from the directory provider: the commits below are made under it only if it resolved.
    let group = unique("cp-dir-canary-group");
    let sec = Secrets::new(group.clone());
    let consumer = write(
        &sec.dir,
        "consumer.properties",
        &format!(
            "config.providers=dir\nconfig.providers.dir.class={DIR_CLASS}\nbootstrap.servers={}\ngroup.id=${{dir:{}:value}}\nauto.offset.reset=earliest\n",
            source(),
            sec.secrets()
        ),
    );
    let producer = producer_file(&sec, "producer.properties", "scram.password");
    let args = |producer: &Path| {
        vec![
            s("--consumer.config"),
            path(&consumer),
            s("--producer.config"),
            path(producer),
            s("--whitelist"),
            topic.clone(),
            s("--offset.commit.interval.ms"),
            s("1000"),
        ]
    };

    // --check-config: every resolved setting redacted, with its reference.
    let mut check = args(&producer);
    check.push(s("--check-config"));
    let check: Vec<&str> = check.iter().map(String::as_str).collect();
    let (rc, out) = run_to_exit(&check);
    assert_eq!(rc, 0, "--check-config:\n{out}");
    sec.assert_absent("--check-config", &out);
    let jaas_via = format!("{}:9, translated from sasl.jaas.config via ${{env:{}}}, ${{file:{}:scram.password}}", producer.display(), sec.var, sec.creds());
    for key in ["sasl.password", "sasl.username"] {
        assert!(out.contains(&format!("{key}=[redacted]  # {jaas_via}")), "--check-config does not show {key}'s origin ({jaas_via}):\n{out}");
    }
    let group_via = format!("{}:4, group.id via ${{dir:{}:value}}", consumer.display(), sec.secrets());
    assert!(out.contains(&format!("group.id=[redacted]  # {group_via}")), "--check-config does not show group.id's origin:\n{out}");
    assert!(!out.contains("config.providers"), "the provider keys are consumed, not passed or warned about:\n{out}");

    // The run: SCRAM on the target and the source group work only if all three resolved.
    let mut m = Mirror::start(&args(&producer));
    wait_until("all records mirrored and committed under the group from the directory provider", || {
        assert!(m.alive(), "the mirror exited early; log:\n{}", m.output());
        all_committed(&source(), &group, &topic)
    });
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    assert_same_records(&topic, &records, &read_topic(&target(), &topic));
    let log = m.output();
    sec.assert_absent("the run", &log);
    // The log names the group where the canary would have been: the check above can fail.
    assert!(log.contains("group [redacted]]"), "the run's log does not name its group (redacted):\n{log}");

    // A start that fails on a key the file lacks: named with its place; no value shown.
    let wrong = producer_file(&sec, "producer-wrong.properties", "scram.pasword");
    let (rc, out) = run_to_exit(&args(&wrong).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(rc, 1, "a missing key stops the start:\n{out}");
    let expected = format!("{}:9: sasl.jaas.config: ${{file:{}:scram.pasword}}: provider 'file': the properties file", wrong.display(), sec.creds());
    assert!(out.contains(&expected) && out.contains("has no key 'scram.pasword'"), "no clear error ({expected}):\n{out}");
    sec.assert_absent("a failing start", &out);
    println!(
        "MM1: {} records mirrored over SCRAM from file/env providers, group from the dir provider; no canary in {} bytes of output",
        records.len(),
        log.len() + out.len()
    );
}

#[test]
#[ignore = "needs clusters"]
fn mm2_file_resolves_file_dir_and_env_providers_in_every_prefix_and_never_shows_their_values() {
    require_clusters!(source(), target());
    let id = short_id();
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    // The topic list comes from the directory provider: nothing is mirrored unless it resolved.
    let topic = unique("cp-dir-canary-topic");
    create_topic(&source(), &topic, 2, &[]);
    let records = sample_records(&topic, 200);
    produce(&source(), &topic, &records);
    let sec = Secrets::new(topic.clone());
    let file = |name: &str, key: &str| {
        let mut lines = vec![
            "config.providers = file, dir, env".to_string(),
            format!("config.providers.file.class = {FILE_CLASS}"),
            format!("config.providers.dir.class = {DIR_CLASS}"),
            format!("config.providers.env.class = {ENV_CLASS}"),
            "config.providers.env.param.allowlist.pattern = ^CP_USER_".to_string(),
            format!("config.providers.dir.param.allowed.paths = {}", sec.dir.display()),
            format!("clusters = {a}, {b}"),
            format!("{a}.bootstrap.servers = {}", source()),
            format!("{b}.bootstrap.servers = {}", sasl_bootstrap()),
            format!("{b}.security.protocol = SASL_PLAINTEXT"),
            format!("{b}.sasl.mechanism = SCRAM-SHA-512"),
            format!("{b}.sasl.jaas.config = {}", sec.jaas(key)),
            format!("{a}->{b}.enabled = true"),
            format!("{a}->{b}.topics = ${{dir:{}:value}}", sec.secrets()),
        ];
        lines.extend(mm2_common_lines());
        write(&sec.dir, name, &(lines.join("\n") + "\n"))
    };
    let good = file("mm2.properties", "scram.password");

    let (rc, out) = run_to_exit(&["--mm2.config", &path(&good), "--check-config"]);
    assert_eq!(rc, 0, "--check-config:\n{out}");
    sec.assert_absent("--check-config", &out);
    let topics = format!("topics=[redacted]  # {}:14: {a}->{b}.topics via ${{dir:{}:value}}", good.display(), sec.secrets());
    assert!(out.contains(&topics), "--check-config does not show the topics' origin ({topics}):\n{out}");
    let jaas_via = format!("{}:12, translated from sasl.jaas.config via ${{env:{}}}, ${{file:{}:scram.password}}", good.display(), sec.var, sec.creds());
    assert!(out.contains(&format!("sasl.password=[redacted]  # {jaas_via}")), "--check-config does not show sasl.password's origin ({jaas_via}):\n{out}");

    let mut m = Mirror::start(&[s("--mm2.config"), path(&good)]);
    let remote = format!("{a}.{topic}");
    wait_for(&format!("{} records on {remote}", records.len()), Duration::from_secs(180), || {
        assert!(m.alive(), "the mirror exited early; log:\n{}", m.output());
        count_records(&target(), &remote) >= records.len() as i64
    });
    assert_eq!(m.stop(), 0, "log:\n{}", m.output());
    let landed = read_topic(&target(), &remote);
    assert_same_records_but_provenance(&remote, &records, &landed);
    let log = m.output();
    sec.assert_absent("the MM2 run", &log);
    // The log names the topics where the canary would have been: the check above can fail.
    assert!(
        log.contains("topics: include '[redacted]'") && log.contains(&format!("created target topic {a}.[redacted]")),
        "the MM2 log does not name its topics (redacted):\n{log}"
    );

    let wrong = file("mm2-wrong.properties", "nope");
    let (rc, out) = run_to_exit(&["--mm2.config", &path(&wrong)]);
    assert_eq!(rc, 1, "a missing key stops the start:\n{out}");
    let expected = format!("{}:12: {b}.sasl.jaas.config: ${{file:{}:nope}}", wrong.display(), sec.creds());
    assert!(out.contains(&expected) && out.contains("has no key 'nope'"), "no clear error ({expected}):\n{out}");
    sec.assert_absent("a failing MM2 start", &out);
    println!("MM2: {} records mirrored to {remote} over SCRAM from file/env providers, topics from the dir provider; no canary in the outputs", records.len());
}
