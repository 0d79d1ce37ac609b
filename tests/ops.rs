//! Operations files: the systemd unit, the drop-in kafka-mirror-maker.sh.

mod common;

use std::process::Command;

use common::*;

#[test]
fn systemd_unit_passes_systemd_analyze_verify() {
    // The shipped unit, pointed at the binary under test (verify checks the executable exists).
    let unit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/mirror-maker.service")).unwrap();
    let unit = unit.replace("/usr/local/bin/mirror-maker", bin());
    let dir = std::env::temp_dir().join(unique("unit"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mirror-maker.service");
    std::fs::write(&file, unit).unwrap();
    let out = Command::new("systemd-analyze").arg("verify").arg(&file).output().expect("systemd-analyze (Debian package systemd) is needed; .ci/run installs it");
    let text = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "systemd-analyze verify failed:\n{text}");
    assert!(!text.contains("mirror-maker.service:"), "systemd-analyze warns about the unit:\n{text}");
}

#[test]
fn drop_in_script_passes_arguments_through_unsplit() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-mirror-maker.sh");
    let out = Command::new(script).arg("--version").env("MIRROR_MAKER_BIN", bin()).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("mirror-maker "));
    // A pattern with a space and a glob reaches the binary as one argument:
    // the filter strips the space (MM1's normalisation) and the usage error
    // about the missing files shows it was parsed as one value.
    let out = Command::new(script).args(["--whitelist", "a *", "--consumer.config", "/nonexistent/c", "--producer.config", "/nonexistent/p"]).env("MIRROR_MAKER_BIN", bin()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read properties file /nonexistent/c"), "{}", String::from_utf8_lossy(&out.stderr));
}
