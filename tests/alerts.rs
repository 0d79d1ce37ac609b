//! The shipped Prometheus alerting rules (config/prometheus/alerts.yml):
//! `promtool check rules` accepts them and `promtool test rules` passes
//! their unit tests (config/prometheus/alerts.test.yml), and those tests
//! show every alert both firing and quiet. promtool is /usr/bin/promtool
//! from Debian's `prometheus` package.

use std::process::Command;

fn config(path: &str) -> String {
    format!("{}/config/prometheus/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// promtool's exit status and everything it printed.
fn promtool(args: &[&str]) -> (bool, String) {
    let out = Command::new("promtool").args(args).output().expect("promtool (Debian package prometheus) is needed; .ci/run installs it");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn promtool_checks_the_rules() {
    let (ok, text) = promtool(&["check", "rules", &config("alerts.yml")]);
    assert!(ok && text.contains("SUCCESS"), "promtool check rules config/prometheus/alerts.yml failed:\n{text}");
}

#[test]
fn promtool_unit_tests_of_the_rules_pass() {
    let (ok, text) = promtool(&["test", "rules", &config("alerts.test.yml")]);
    assert!(ok && text.contains("SUCCESS"), "promtool test rules config/prometheus/alerts.test.yml failed:\n{text}");
}

/// promtool passes a rules file whose alerts have no test at all; this
/// keeps a new alert from being shipped untested. Line-based, since the
/// crate has no YAML parser and both files keep one key per line.
#[test]
fn every_alert_is_tested_firing_and_quiet() {
    let rules = std::fs::read_to_string(config("alerts.yml")).unwrap();
    let tests = std::fs::read_to_string(config("alerts.test.yml")).unwrap();
    let alerts: Vec<&str> = rules.lines().filter_map(|l| l.trim().strip_prefix("- alert: ")).collect();
    assert!(alerts.len() >= 6, "alerts.yml defines the six alerts of issue #31, found {alerts:?}");
    // (alert name, whether the case expects it firing) for each alert_rule_test case.
    let mut cases = Vec::new();
    let lines: Vec<&str> = tests.lines().map(str::trim).collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix("alertname: ") {
            let expects = lines[i + 1..].iter().find(|l| l.starts_with("exp_alerts:")).unwrap_or_else(|| panic!("case of {name} without exp_alerts"));
            cases.push((name, *expects != "exp_alerts: []"));
        }
    }
    for alert in &alerts {
        assert!(cases.contains(&(alert, true)), "alerts.test.yml has no case where {alert} fires: {cases:?}");
        assert!(cases.contains(&(alert, false)), "alerts.test.yml has no case where {alert} stays quiet: {cases:?}");
    }
    for (name, _) in &cases {
        assert!(alerts.contains(name), "alerts.test.yml tests {name}, which alerts.yml does not define");
    }
}
