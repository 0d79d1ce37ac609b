//! Operations files: the systemd unit, the drop-in kafka-mirror-maker.sh,
//! and the `--pid.file`/`--log.file` files (modes, symlinks refused).

mod common;

use std::process::Command;

use common::*;

#[test]
fn systemd_units_pass_systemd_analyze_verify() {
    // The shipped units (MM1, and one node of an MM2 mirror), pointed at
    // the binary under test (verify checks the executable exists).
    for name in ["mirror-maker.service", "mirror-maker-mm2.service"] {
        let unit = std::fs::read_to_string(format!("{}/config/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert!(unit.contains("/usr/local/bin/mirror-maker "), "{name} starts the installed binary");
        let unit = unit.replace("/usr/local/bin/mirror-maker", bin());
        let dir = std::env::temp_dir().join(unique("unit"));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, unit).unwrap();
        let out =
            Command::new("systemd-analyze").arg("verify").arg(&file).output().expect("systemd-analyze (Debian package systemd) is needed; .ci/run installs it");
        let text = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "systemd-analyze verify {name} failed:\n{text}");
        assert!(!text.contains(&format!("{name}:")), "systemd-analyze warns about {name}:\n{text}");
    }
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
    let out = Command::new(script)
        .args(["--whitelist", "a *", "--consumer.config", "/nonexistent/c", "--producer.config", "/nonexistent/p"])
        .env("MIRROR_MAKER_BIN", bin())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read properties file /nonexistent/c"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
#[ignore = "needs clusters"]
fn sighup_reopens_the_log_file_for_logrotate() {
    require_clusters!(source(), target());
    let id = unique("logrotate");
    create_topic(&source(), &id, 1, &[]);
    let dir = std::env::temp_dir().join(unique("logdir"));
    std::fs::create_dir_all(&dir).unwrap();
    let (log, rotated) = (dir.join("mirror.log"), dir.join("mirror.log.1"));
    let group = unique("group");
    let mut args = mirror_args(&source(), &group, &target(), &id, &["--stats.interval.ms", "500", "--offset.commit.interval.ms", "500"]);
    args.extend([s("--log.file"), path(&log)]);
    let mut m = Mirror::start(&args);
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    wait_until("the log file has the start line", || read(&log).contains("Starting mirror maker"));

    // What logrotate does: rename, then signal.
    std::fs::rename(&log, &rotated).unwrap();
    m.signal("HUP");
    wait_until("a new log file with the reopen line", || read(&log).contains("SIGHUP: reopened the log file"));
    // Still mirroring, and logging into the new file.
    let recs = sample_records(&id, 200);
    produce(&source(), &id, &recs);
    wait_until("records mirrored and committed after the reopen", || all_committed(&source(), &group, &id));
    wait_until("stats lines land in the new file", || read(&log).lines().filter(|l| l.contains("stats: in ")).count() >= 2);
    assert!(m.alive(), "SIGHUP with --log.file must not stop the mirror");
    assert_eq!(m.stop(), 0, "exit status after SIGTERM; log:\n{}", read(&log));

    let (old, new) = (read(&rotated), read(&log));
    assert!(old.contains("Starting mirror maker") && !old.contains("SIGHUP: reopened"), "rotated file:\n{old}");
    assert!(new.contains("Kafka mirror maker shutdown successfully") && !new.contains("Starting mirror maker"), "new file:\n{new}");
    // Nothing went to stderr: the log file is the only log.
    assert!(!m.output().contains("Starting mirror maker"), "log lines on stderr:\n{}", m.output());
    assert_same_records(&id, &recs, &read_topic(&target(), &id));
    println!("logrotate: {} lines in the rotated file, {} in the reopened one, 200 records mirrored", old.lines().count(), new.lines().count());
}

#[test]
#[ignore = "needs clusters"]
fn kafka_consumer_groups_describe_shows_the_mirror_with_zero_lag() {
    require_clusters!(source(), target());
    let id = unique("describe");
    create_topic(&source(), &id, 3, &[]);
    let recs = sample_records(&id, 900);
    produce(&source(), &id, &recs);
    let group = unique("group");
    let mut m = Mirror::start(&mirror_args(&source(), &group, &target(), &id, &["--offset.commit.interval.ms", "500"]));
    wait_until("mirrored and committed", || all_committed(&source(), &group, &id));

    // Kafka's own tool, from the 3.9 jars, while the mirror runs.
    let describe = || {
        let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-run"))
            .args(["consumer-groups", "--bootstrap-server", &source(), "--describe", "--group", &group])
            .output()
            .expect("scripts/kafka-run consumer-groups");
        assert!(out.status.success(), "kafka-consumer-groups failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = describe();
    let header: Vec<&str> = text.lines().find(|l| l.starts_with("GROUP")).expect("a header line").split_whitespace().collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} column in:\n{text}"));
    let rows: Vec<Vec<&str>> =
        text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).filter(|r| r.len() == header.len() && r[col("TOPIC")] == id).collect();
    assert_eq!(rows.len(), 3, "one row per partition expected:\n{text}");
    for r in &rows {
        assert_eq!(r[col("LAG")], "0", "lag not zero:\n{text}");
        assert_eq!(r[col("CURRENT-OFFSET")], r[col("LOG-END-OFFSET")], "{text}");
        assert_ne!(r[col("CONSUMER-ID")], "-", "partition without an active member:\n{text}");
        assert!(r[col("CLIENT-ID")].starts_with(&format!("{group}-")), "client id is <group.id>-<stream> as in MM1:\n{text}");
    }
    let end: i64 = rows.iter().map(|r| r[col("LOG-END-OFFSET")].parse::<i64>().unwrap()).sum();
    assert_eq!(end, recs.len() as i64, "{text}");
    assert_eq!(m.stop(), 0);
    println!("consumer-groups --describe:\n{}", text.trim_end());
}

#[test]
#[ignore = "needs clusters"]
fn stats_line_estimates_the_time_to_catch_up_a_backlog() {
    require_clusters!(source(), target());
    let id = unique("backlog");
    create_topic(&source(), &id, 2, &[]);
    let recs = sample_records(&id, 20_000);
    produce(&source(), &id, &recs);
    let group = unique("group");
    // The throttle makes the catch-up last about ten seconds, so several
    // stats lines see the backlog shrinking.
    let mut m = Mirror::start(&mirror_args(
        &source(),
        &group,
        &target(),
        &id,
        &["--throttle.records.per.sec", "2000", "--stats.interval.ms", "1000", "--offset.commit.interval.ms", "500", "--queue.size", "1000"],
    ));
    wait_until("mirrored and committed", || all_committed(&source(), &group, &id));
    m.wait_for_log("lag 0, in flight 0");
    assert_eq!(m.stop(), 0);
    let out = m.output();
    let field = |l: &str, after: &str, until: char| l.split(after).nth(1).and_then(|r| r.split(until).next()).map(str::to_string);
    let mut checked = 0;
    for l in out.lines().filter(|l| l.contains("catching up: about ")) {
        let lag: f64 = field(l, "lag ", ',').unwrap().parse().unwrap();
        let rate: f64 = field(l, "out ", ' ').unwrap().parse().unwrap();
        let eta: f64 = field(l, "catching up: about ", 's').unwrap().parse().unwrap();
        // The estimate is the line's own lag over its own out rate, rounded up.
        assert!(lag > 0.0 && rate > 0.0, "{l}");
        assert!((eta - (lag / rate).ceil()).abs() <= 1.0, "estimate {eta}s does not follow from lag {lag} at {rate} records/s: {l}");
        checked += 1;
    }
    assert!(checked >= 2, "fewer than two stats lines showed the catch-up estimate:\n{out}");
    println!(
        "backlog: {checked} stats lines with an estimate, e.g. {}",
        out.lines().find(|l| l.contains("catching up")).unwrap().split("stats: ").nth(1).unwrap()
    );
}

/// Runs the binary under `umask 000` with `--pid.file` and `--log.file`;
/// the consumer file does not exist, so it exits 1 right after opening both,
/// before anything needs a broker.
fn run_with_files(dir: &std::path::Path, pid: &std::path::Path, log: &std::path::Path) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(r#"umask 000; exec "$0" "$@""#)
        .arg(bin())
        .args(["--whitelist", "x", "--consumer.config"])
        .arg(dir.join("absent-consumer.properties"))
        .arg("--producer.config")
        .arg(dir.join("absent-producer.properties"))
        .arg("--pid.file")
        .arg(pid)
        .arg("--log.file")
        .arg(log)
        .output()
        .unwrap()
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn pid_and_log_files_get_0644_and_0640_whatever_the_umask() {
    let dir = std::env::temp_dir().join(unique("modes"));
    std::fs::create_dir_all(&dir).unwrap();
    let (pid, log) = (dir.join("mm.pid"), dir.join("mirror.log"));
    let out = run_with_files(&dir, &pid, &log);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The run got past both files: it stopped at the missing consumer file.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("absent-consumer.properties"), "{stderr}");
    assert_eq!(format!("{:o}", mode(&pid)), "644", "pid file mode under umask 000");
    assert_eq!(format!("{:o}", mode(&log)), "640", "new log file mode under umask 000");

    // An existing log file keeps the mode its owner (or logrotate's `create`) gave it.
    std::fs::remove_file(&pid).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = run_with_files(&dir, &pid, &log);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(format!("{:o}", mode(&log)), "600", "an existing log file's mode was changed");
    assert!(std::fs::read_to_string(&log).unwrap().contains("absent-consumer.properties"), "the second run did not append to the log");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symlinks_at_the_pid_and_log_paths_are_refused_with_exit_1() {
    let dir = std::env::temp_dir().join(unique("links"));
    std::fs::create_dir_all(&dir).unwrap();
    let precious = dir.join("precious");
    std::fs::write(&precious, "keep me\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&precious, &link).unwrap();

    for (option, pid, log) in [("--log.file", dir.join("mm.pid"), link.clone()), ("--pid.file", link.clone(), dir.join("mirror.log"))] {
        let out = run_with_files(&dir, &pid, &log);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{option} at a symlink: {stderr}");
        assert!(stderr.contains(&format!("{option} {}: ", link.display())) && stderr.contains("symbolic link"), "{option} at a symlink: {stderr}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n", "{option} wrote through the symlink");
        assert_eq!(format!("{:o}", mode(&precious)), "600", "{option} changed the mode of the symlink's target");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
