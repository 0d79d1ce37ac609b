//! Issue #30 item 6, "no key ignored without a word": every key Kafka 3.9's
//! own config definitions know (MirrorMaker 2's driver and connectors,
//! Connect's distributed worker, the consumer, producer and admin clients;
//! listed from the jars by scripts/lib/ConfigKeys.java) is written where a
//! user would write it, with a value Java accepts, and `--check-config`
//! must then either list it with its origin (the file:line) or name it in
//! a warning, note or refusal. A key the output never mentions is one the
//! mirror takes and silently does not use: the failure this test exists for.
//!
//! No brokers are needed: the check's own parsing is the judge, and the one
//! run that gets as far as listing topics waits out its metadata timeout
//! against a closed port.

// No test here needs the clusters, so `require_clusters!` goes unused.
#[allow(unused_macros, unused_imports)]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// One key of Java's config definitions.
#[derive(Debug, Clone)]
struct JavaKey {
    def: String,
    name: String,
    ty: String,
    default: Option<String>,
}

/// Every key of the 3.9 ConfigDefs, from the jars the project already fetches.
fn java_keys() -> Vec<JavaKey> {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(format!("{root}/scripts/kafka-run"))
        .arg(format!("{root}/scripts/lib/ConfigKeys.java"))
        .output()
        .expect("run scripts/kafka-run (needs java and the Kafka jars; see scripts/kafka-env)");
    assert!(out.status.success(), "scripts/lib/ConfigKeys.java failed: {}", String::from_utf8_lossy(&out.stderr));
    let keys: Vec<JavaKey> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "unexpected line from ConfigKeys.java: {l:?}");
            let default = (f[3] != "-").then(|| f[3].to_string());
            JavaKey { def: f[0].into(), name: f[1].into(), ty: f[2].into(), default }
        })
        .collect();
    // The walk is only as good as the list: Java 3.9 has hundreds of keys in these definitions.
    for (def, at_least) in
        [("mm2", 40), ("source", 60), ("checkpoint", 60), ("heartbeat", 40), ("consumer", 60), ("producer", 60), ("admin", 40), ("worker", 60)]
    {
        let n = keys.iter().filter(|k| k.def == def).count();
        assert!(n >= at_least, "only {n} keys of {def} listed by ConfigKeys.java");
    }
    keys
}

/// A value of the key's type that Java accepts: its default where it has
/// one (an empty default is no value to write), else one of its type.
fn value_of(k: &JavaKey) -> String {
    if let Some(d) = k.default.as_ref().filter(|d| !d.trim().is_empty()) {
        return d.clone();
    }
    match k.ty.as_str() {
        "BOOLEAN" => "true",
        "INT" | "SHORT" | "LONG" => "1",
        "DOUBLE" => "0.5",
        "CLASS" => "java.lang.Object",
        _ => "x",
    }
    .to_string()
}

/// One line written for a key: the line as the file has it, and which Java key it stands for.
#[derive(Debug, Clone)]
struct Written {
    line: String,
    what: String,
    /// Java's name of the key, without the prefix the file puts before it.
    name: String,
}

/// A file under test: lines in order, some fixed (the frame: clusters,
/// bootstrap servers) and the rest keys under test.
struct Draft {
    name: &'static str,
    frame: Vec<String>,
    keys: Vec<Written>,
}

impl Draft {
    fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join(self.name);
        let lines: Vec<&str> = self.frame.iter().map(String::as_str).chain(self.keys.iter().map(|w| w.line.as_str())).collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }

    /// The 1-based line of the i-th key.
    fn line_of(&self, i: usize) -> usize {
        self.frame.len() + i + 1
    }
}

/// Whether `text` names the key written at `file:line`: as `file:line` (and
/// not a longer line number), or in a message about the file that names the
/// key and its line (`..., so these keys are not used: ssl.protocol (line 4)`).
fn mentions(text: &str, file: &Path, line: usize, key: &str) -> bool {
    let ends = |t: &str, needle: &str| t.match_indices(needle).any(|(i, _)| !t[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()));
    let file = file.display().to_string();
    ends(text, &format!("{file}:{line}")) || (text.contains(&file) && text.contains(key) && ends(text, &format!("line {line}")))
}

/// Runs `args` (the check) on the drafts until it gets past the parsing:
/// a refusal (a PROBLEM or error line) that names a key's file:line takes
/// that key out (it was not silent: the refusal names it) and the run is
/// repeated. Returns, per key, the output line that speaks of it (the
/// refusal, or the first line naming its file:line), or nothing for a
/// silent key.
fn judge(drafts: &mut [Draft], args: impl Fn(&[PathBuf]) -> Vec<String>) -> Vec<(String, Option<String>)> {
    let dir = std::env::temp_dir().join(unique("every-key"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut verdicts = Vec::new();
    for _round in 0..100 {
        let paths: Vec<PathBuf> = drafts.iter().map(|d| d.write(&dir)).collect();
        let argv = args(&paths);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let (_, out) = run_to_exit(&argv);
        let refusals: Vec<&str> = out.lines().filter(|l| l.contains("PROBLEM") || l.trim_start().starts_with("- ")).collect();
        let mut refused_any = false;
        for (draft, p) in drafts.iter_mut().zip(&paths) {
            let lines: Vec<usize> = (0..draft.keys.len()).map(|i| draft.line_of(i)).collect();
            let mut keep = Vec::new();
            for (w, line) in draft.keys.drain(..).zip(lines) {
                match refusals.iter().find(|l| mentions(l, p, line, &w.name)) {
                    Some(l) => {
                        verdicts.push((w.what, Some(format!("refused: {}", l.trim()))));
                        refused_any = true;
                    }
                    None => keep.push(w),
                }
            }
            draft.keys = keep;
        }
        if refused_any {
            continue;
        }
        for (draft, p) in drafts.iter().zip(&paths) {
            for (i, w) in draft.keys.iter().enumerate() {
                let said = out.lines().find(|l| mentions(l, p, draft.line_of(i), &w.name)).map(|l| l.trim().to_string());
                verdicts.push((w.what.clone(), said));
            }
        }
        if verdicts.iter().all(|(_, v)| v.is_none()) {
            panic!("the check named no key at all; its output:\n{out}");
        }
        return verdicts;
    }
    panic!("more than 100 rounds of refusals");
}

fn written(k: &JavaKey, prefix: &str) -> Written {
    Written { line: format!("{prefix}{}={}", k.name, value_of(k)), what: format!("{prefix}{} ({})", k.name, k.def), name: k.name.clone() }
}

/// Keys the frame sets itself, written again they would say nothing new.
fn framed(name: &str) -> bool {
    matches!(name, "clusters" | "bootstrap.servers")
}

/// The MM2 file: driver keys at top level, connector keys at top level and
/// per flow, client keys per cluster and role, worker keys per target.
fn mm2_drafts(keys: &[JavaKey]) -> Vec<Draft> {
    let frame = vec![s("clusters=A, B"), s("A.bootstrap.servers=127.0.0.1:1"), s("B.bootstrap.servers=127.0.0.1:2"), s("A->B.enabled=true")];
    let mut top = Vec::new();
    let mut flow = Vec::new();
    let mut clients = Vec::new();
    let mut worker = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for k in keys.iter().filter(|k| !framed(&k.name)) {
        match k.def.as_str() {
            "mm2" | "source" | "checkpoint" | "heartbeat" => {
                // A key in several connector definitions is written once per place.
                if seen.insert(k.name.clone()) {
                    top.push(written(k, ""));
                    if k.def != "mm2" && k.name != "enabled" {
                        flow.push(written(k, "A->B."));
                    }
                }
            }
            "consumer" => clients.push(written(k, "A.consumer.")),
            "producer" => clients.push(written(k, "B.producer.")),
            "admin" => clients.push(written(k, "A.admin.")),
            "worker" => worker.push(written(k, "B.")),
            other => panic!("unknown definition {other}"),
        }
    }
    // One file per place: a key at top level and the same key per flow
    // would otherwise decide each other's fate, as would `B.ssl.protocol`
    // (a worker key, also a client key of B) and `B.producer.ssl.protocol`.
    vec![
        Draft { name: "top.properties", frame: frame.clone(), keys: top },
        Draft { name: "flow.properties", frame: frame.clone(), keys: flow },
        Draft { name: "clients.properties", frame: frame.clone(), keys: clients },
        Draft { name: "worker.properties", frame, keys: worker },
    ]
}

fn report(verdicts: &[(String, Option<String>)]) -> Vec<String> {
    let silent: Vec<String> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(k, _)| k.clone()).collect();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, v) in verdicts {
        let kind = match v.as_deref() {
            None => "silent",
            Some(l) if l.starts_with("refused") => "refused",
            Some(l) if l.contains("WARNING") => "warned",
            Some(l) if l.starts_with("note") => "noted",
            Some(_) => "listed",
        };
        *kinds.entry(kind).or_default() += 1;
    }
    eprintln!("{} keys: {kinds:?}", verdicts.len());
    for (k, v) in verdicts {
        eprintln!("  {k}: {}", v.as_deref().unwrap_or("SILENT"));
    }
    silent
}

#[test]
fn every_mm2_key_is_honoured_or_named() {
    let keys = java_keys();
    let mut drafts = mm2_drafts(&keys);
    let mut silent = Vec::new();
    // Each file is judged alone: the check reads one MM2 file.
    for d in drafts.iter_mut() {
        let one = std::slice::from_mut(d);
        let verdicts = judge(one, |p| vec![s("--mm2.config"), path(&p[0]), s("--check-config")]);
        silent.extend(report(&verdicts));
    }
    assert!(silent.is_empty(), "{} MM2 keys accepted and never mentioned by --check-config: {silent:#?}", silent.len());
}

#[test]
fn every_mm1_client_key_is_honoured_or_named() {
    let keys = java_keys();
    let of = |def: &str| keys.iter().filter(|k| k.def == def && !framed(&k.name)).map(|k| written(k, "")).collect::<Vec<_>>();
    let mut drafts = vec![
        Draft { name: "consumer.properties", frame: vec![s("bootstrap.servers=127.0.0.1:1"), s("group.id=every-key")], keys: of("consumer") },
        Draft { name: "producer.properties", frame: vec![s("bootstrap.servers=127.0.0.1:1")], keys: of("producer") },
    ];
    drafts[0].keys.retain(|w| !w.line.starts_with("group.id="));
    let verdicts = judge(&mut drafts, |p| {
        vec![s("--consumer.config"), path(&p[0]), s("--producer.config"), path(&p[1]), s("--whitelist"), s("every-key"), s("--check-config")]
    });
    let silent = report(&verdicts);
    assert!(silent.is_empty(), "{} MM1 client keys accepted and never mentioned by --check-config: {silent:#?}", silent.len());
}

/// The keys issue #30 names as read and unused: each is listed in the
/// connector settings (its origin shown), so the walk above counts it as
/// spoken of; here each must also get its own warning (a note for the
/// worker's `config.storage.*` / `status.storage.*`) saying it has no
/// effect, while the values that ask for what the mirror does anyway
/// (use.defaults.from, use.incremental.alter.configs: all) and the keys
/// honoured since (refresh.groups.*, the admin.* layers) get none.
#[test]
fn keys_read_and_unused_are_warned_about() {
    let lines = [
        "clusters=A, B",
        "A.bootstrap.servers=127.0.0.1:1",
        "B.bootstrap.servers=127.0.0.1:2",
        "A->B.enabled=true",
        "refresh.groups.interval.seconds=30",
        "A->B.refresh.groups.enabled=false",
        "use.incremental.alter.configs=requested",
        "A->B.use.defaults.from=source",
        "errors.tolerance=all",
        "consumer.poll.timeout.ms=500",
        "A->B.admin.timeout.ms=1000",
        "B.config.storage.topic=configs",
        "status.storage.replication.factor=1",
        // Honoured: the mirror does what these ask (the admin layers
        // build the admin clients, as Java's {source,target}AdminConfig).
        "A.admin.request.timeout.ms=5000",
        "A->B.admin.reconnect.backoff.ms=3",
        "A->B.target.admin.sasl.mechanism=PLAIN",
        "B->A.use.defaults.from=target",
        "B->A.use.incremental.alter.configs=never",
    ];
    let file = props("mm2.properties", &lines.iter().map(|l| l.to_string()).collect::<Vec<_>>());
    let (code, out) = run_to_exit(&["--mm2.config", &path(&file), "--check-config"]);
    assert!(code == 0 && !out.contains("PROBLEM"), "the file was refused (exit {code}):\n{out}");
    for (i, line) in lines.iter().enumerate().skip(4) {
        let key = line.split_once('=').unwrap().0;
        let n = i + 1;
        // The Connect worker's topic keys (which Kafka's sample file sets) get a note, the rest a warning.
        let kind = if key.contains("storage.") { "note" } else { "WARNING" };
        let warned = out.lines().any(|l| l.contains(kind) && l.contains("has no effect") && mentions(l, &file, n, key) && l.contains(key));
        // use.incremental.alter.configs is honoured whatever its value: the
        // sync removes what the source no longer sets, as each of Java's modes does.
        // use.defaults.from=source is honoured too: the sync sets the source's
        // default values on the target topic, as Java's does.
        // refresh.groups.* set how often the checkpointer lists the source's groups.
        // The admin layers build the flow's admin clients (admin.timeout.ms
        // is still a key with no effect).
        let honoured = line.starts_with("B->A.")
            || key == "use.incremental.alter.configs"
            || key == "A->B.use.defaults.from"
            || key.contains("refresh.groups.")
            || (key.contains("admin.") && key != "A->B.admin.timeout.ms");
        assert_eq!(warned, !honoured, "line {n} ({line}): warned={warned}; output:\n{out}");
    }
}
