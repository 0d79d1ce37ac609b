//! MirrorMaker 2's `admin.*` layers against real brokers (issue #30 item
//! 6): the target's admin clients (topic creation, config sync, the
//! heartbeats and checkpoints topics) are made from `B.admin.*` over B's
//! own keys, as Java's `targetAdminConfig` makes them, while the producer
//! keeps B's keys. The target cluster's SASL_PLAINTEXT listener (user
//! `mm-plain`, see scripts/kafka/server-target-tls.properties.template) is
//! reachable by the admin layer only; the producer uses PLAINTEXT.
//!
//! The proof that the layer is used, not merely accepted: the same file
//! with a wrong password in `B.admin.sasl.jaas.config` alone makes the
//! target's topic listing fail, with a warning naming that line, where a
//! mirror ignoring the layer would list and create over PLAINTEXT.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;

const DEADLINE: Duration = Duration::from_secs(180);
const PLAIN_USER: &str = "mm-plain";
const PLAIN_PASSWORD: &str = "mm-plain-secret";

/// Deletes the test's topics on both clusters when it ends (passed or failed).
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for bootstrap in [source(), target()] {
            delete_topics_containing(&bootstrap, &self.0);
        }
    }
}

fn target_port() -> u16 {
    std::env::var("MM_TARGET_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(29092)
}

/// From scripts/clusters' exports, or derived as scripts/clusters derives it.
fn sasl_bootstrap() -> String {
    std::env::var("MM_TARGET_SASL_BOOTSTRAP").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| format!("127.0.0.1:{}", target_port() + 2))
}

/// An MM2 file copying `topic` from A to B, B's admin clients on the SASL
/// listener with `password`; the line of `B.admin.sasl.jaas.config`.
fn mm2_file(a: &str, b: &str, topic: &str, password: &str) -> (std::path::PathBuf, usize) {
    let admin = [
        format!("{b}.admin.bootstrap.servers = {}", sasl_bootstrap()),
        format!("{b}.admin.security.protocol = SASL_PLAINTEXT"),
        format!("{b}.admin.sasl.mechanism = PLAIN"),
        format!(
            "{b}.admin.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{PLAIN_USER}\" password=\"{password}\";"
        ),
    ];
    let lines = mm2_flow_lines(a, b, topic, &admin);
    let jaas = lines.iter().position(|l| l.contains(".admin.sasl.jaas.config")).unwrap() + 1;
    (props("mm2.properties", &lines), jaas)
}

fn start(file: &Path) -> Mirror {
    Mirror::start(&[s("--mm2.config"), path(file)])
}

#[test]
#[ignore = "needs clusters"]
fn the_targets_admin_layer_makes_and_syncs_its_topics() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("adm-{id}");
    create_topic(&source(), &topic, 3, &[("retention.ms", "3600000")]);
    let recs = sample_records(&topic, 60);
    produce(&source(), &topic, &recs);
    let (file, jaas) = mm2_file(&a, &b, &topic, PLAIN_PASSWORD);

    // --check-config lists the admin clients' settings with their lines, the password hidden.
    let (code, out) = run_to_exit(&["--mm2.config", &path(&file), "--check-config"]);
    assert_eq!(code, 0, "{out}");
    let at = |n: usize| format!("{}:{n}", file.display());
    let section = out.split("target admin clients, effective librdkafka settings:").nth(1).unwrap_or_else(|| panic!("no target admin section:\n{out}"));
    assert!(section.contains(&format!("bootstrap.servers={}  # {}", sasl_bootstrap(), at(jaas - 3))), "{out}");
    assert!(section.contains(&format!("sasl.password=[redacted]  # {}, translated from sasl.jaas.config", at(jaas))), "{out}");
    assert!(!out.contains(PLAIN_PASSWORD), "the password is never shown:\n{out}");
    assert!(!out.contains("has no effect in this mirror: its admin clients"), "the layer is not said to do nothing:\n{out}");

    let mut ours = start(&file);
    let remote = format!("{a}.{topic}");
    wait_for("the records on the target, in a topic made like the source's", DEADLINE, || {
        assert!(ours.alive(), "mirror-maker exited early; log:\n{}", ours.output());
        count_records(&target(), &remote) >= recs.len() as i64
    });
    assert_same_records(&remote, &recs, &read_topic(&target(), &remote));
    assert_eq!(partitions_of(&target(), &remote), Some(3));
    assert_eq!(topic_config(&target(), &remote, "retention.ms").as_deref(), Some("3600000"), "the source's override, copied at creation");
    let log = ours.output();
    assert!(log.contains(&format!("created target topic {remote} like source topic {topic}: 3 partitions")), "{log}");
    assert!(!log.contains("cannot list the target's topics"), "{log}");
    assert_eq!(ours.stop(), 0, "exit status on SIGTERM; log:\n{}", ours.output());
}

#[test]
#[ignore = "needs clusters"]
fn a_wrong_password_in_the_admin_layer_alone_fails_the_listing_and_names_its_line() {
    require_clusters!(source(), target());
    let id = short_id();
    let _cleanup = Cleanup(id.clone());
    let (a, b) = (format!("A{id}"), format!("B{id}"));
    let topic = format!("adm-{id}");
    create_topic(&source(), &topic, 2, &[]);
    produce(&source(), &topic, &sample_records(&topic, 10));
    let (file, jaas) = mm2_file(&a, &b, &topic, "not-the-password");
    let mut ours = start(&file);
    // A mirror ignoring the layer would list the target over PLAINTEXT and never say this.
    let needle = format!("cannot list the target's topics with its admin client (admin settings of {}", file.display());
    let line = format!("{}:{jaas}: sasl.jaas.config", file.display());
    wait_for("the target's listing refused to the admin layer's credentials", DEADLINE, || {
        assert!(ours.alive(), "mirror-maker exited early; log:\n{}", ours.output());
        ours.output().lines().any(|l| l.contains(&needle) && l.contains(&line))
    });
    let log = ours.output();
    assert!(!log.contains(&format!("created target topic {a}.{topic}")), "nothing is created with refused credentials:\n{log}");
    assert!(!log.contains("not-the-password"), "the password is never shown:\n{log}");
    assert_eq!(ours.stop(), 0, "exit status on SIGTERM; log:\n{}", ours.output());
}
