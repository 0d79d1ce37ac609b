//! Parsing references, each provider, and every refusal naming its place.

use std::path::{Path, PathBuf};

use super::reference::{properties_utf8, references, Reference};
use super::*;
use crate::front::properties::parse;

const FILE: &str = "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n";
const DIR: &str = "config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider\n";
const ENV: &str = "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n";

/// A fresh directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mm-providers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn resolved(text: &str) -> Result<(PropertiesFile, Vec<String>), ConfigError> {
    resolve_file(parse(Path::new("c.properties"), text.as_bytes()).unwrap(), true)
}

fn err(text: &str) -> String {
    resolved(text).unwrap_err().to_string()
}

#[test]
fn references_are_found_as_java_s_pattern_finds_them() {
    let r = |provider: &str, path: Option<&str>, key: &str, span: std::ops::Range<usize>| Reference {
        span,
        provider: provider.into(),
        path: path.map(String::from),
        key: key.into(),
    };
    assert_eq!(references("${env:HOME}"), vec![r("env", None, "HOME", 0..11)]);
    assert_eq!(references("a${file:/x/c.properties:pw}b"), vec![r("file", Some("/x/c.properties"), "pw", 1..27)]);
    // The path ends at the second colon; the key keeps the rest.
    assert_eq!(references("${file:/x:a:b}"), vec![r("file", Some("/x"), "a:b", 0..14)]);
    assert_eq!(references("${nocolon} ${env:A}${env:B}").len(), 2, "a ${{...}} without ':' is text");
    assert_eq!(references("${nocolon} ${env:A}")[0].span, 11..19);
    assert!(references("$ {env:A} ${env:A").is_empty());
}

#[test]
fn the_file_provider_gives_a_key_of_a_utf8_properties_file() {
    let d = scratch("file");
    let creds = d.join("creds.properties");
    std::fs::write(&creds, "password = s3cr\u{e9}t \nother=x\n").unwrap();
    let (f, warnings) =
        resolved(&format!("config.providers=file\n{FILE}ssl.key.password=${{file:{}:password}}\nk=pre-${{file:{}:other}}\n", creds.display(), creds.display()))
            .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let p = f.get("ssl.key.password").unwrap();
    assert_eq!((p.value.as_str(), p.line), ("s3cr\u{e9}t", 3), "UTF-8, trimmed as ConfigDef trims");
    assert_eq!(p.resolved.as_deref(), Some(format!("${{file:{}:password}}", creds.display()).as_str()));
    assert_eq!(f.get("k").unwrap().value, "pre-x");
    assert!(f.props.iter().all(|p| !p.key.starts_with("config.providers")), "provider keys are consumed");
    // Untrimmed when asked (MM2's raw values): Java's Properties keeps the trailing space.
    let raw = parse(Path::new("m"), format!("config.providers=file\n{FILE}k=${{file:{}:password}}\n", creds.display()).as_bytes()).unwrap();
    assert_eq!(resolve_file(raw, false).unwrap().0.get("k").unwrap().value, "s3cr\u{e9}t ");
    assert_eq!(properties_utf8(Path::new("p"), b"a=1\na=2\n").unwrap(), vec![("a".to_string(), "2".to_string())]);
}

#[test]
fn the_file_provider_refuses_a_missing_file_or_key_naming_both() {
    let d = scratch("file-missing");
    let creds = d.join("creds.properties");
    std::fs::write(&creds, "password=x\n").unwrap();
    let e = err(&format!("config.providers=file\n{FILE}sasl.password=${{file:{}:nope}}\n", creds.display()));
    assert!(e.starts_with("c.properties:3: sasl.password: ${file:") && e.contains("has no key 'nope'") && e.contains("add 'nope=...'"), "{e}");
    assert!(e.contains("Java would leave"), "{e}");
    let e = err(&format!("config.providers=file\n{FILE}sasl.password=${{file:{}/absent.properties:pw}}\n", d.display()));
    assert!(e.starts_with("c.properties:3:") && e.contains("cannot read the properties file") && e.contains("absent.properties"), "{e}");
}

#[test]
fn allowed_paths_limit_the_file_and_dir_providers_as_kip_993_does() {
    let d = scratch("allowed");
    std::fs::create_dir_all(d.join("ok")).unwrap();
    std::fs::create_dir_all(d.join("no")).unwrap();
    std::fs::write(d.join("ok/c.properties"), "pw=1\n").unwrap();
    std::fs::write(d.join("no/c.properties"), "pw=2\n").unwrap();
    let head = format!("config.providers=file\n{FILE}config.providers.file.param.allowed.paths={}\n", d.join("ok").display());
    let (f, _) = resolved(&format!("{head}a=${{file:{}/ok/c.properties:pw}}\n", d.display())).unwrap();
    assert_eq!(f.get("a").unwrap().value, "1");
    let e = err(&format!("{head}a=${{file:{}/no/c.properties:pw}}\n", d.display()));
    assert!(e.starts_with("c.properties:4: a:") && e.contains("outside config.providers.file.param.allowed.paths"), "{e}");
    // `..` is normalised first, and a sibling whose name starts the same is no child.
    let e = err(&format!("{head}a=${{file:{}/ok/../no/c.properties:pw}}\n", d.display()));
    assert!(e.contains("outside"), "{e}");
    std::fs::create_dir_all(d.join("ok2")).unwrap();
    std::fs::write(d.join("ok2/c.properties"), "pw=3\n").unwrap();
    assert!(err(&format!("{head}a=${{file:{}/ok2/c.properties:pw}}\n", d.display())).contains("outside"));
    // Java's AllowedPaths: each entry absolute and existing.
    let e = err(&format!("config.providers=dir\n{DIR}config.providers.dir.param.allowed.paths=relative/x\n"));
    assert!(e.starts_with("c.properties:3:") && e.contains("not absolute"), "{e}");
    let e = err(&format!("config.providers=dir\n{DIR}config.providers.dir.param.allowed.paths={}/none\n", d.display()));
    assert!(e.contains("does not exist"), "{e}");
}

#[test]
fn the_dir_provider_gives_a_file_s_content() {
    let d = scratch("dir");
    std::fs::write(d.join("pw"), "from-dir").unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/x"), "deep").unwrap();
    let (f, _) = resolved(&format!("config.providers=dir\n{DIR}sasl.jaas.config=x password=\"${{dir:{}:pw}}\";\n", d.display())).unwrap();
    assert_eq!(f.get("sasl.jaas.config").unwrap().value, "x password=\"from-dir\";");
    let e = err(&format!("config.providers=dir\n{DIR}k=${{dir:{}:absent}}\n", d.display()));
    assert!(e.starts_with("c.properties:3: k:") && e.contains("has no file 'absent'"), "{e}");
    let e = err(&format!("config.providers=dir\n{DIR}k=${{dir:{}:sub/x}}\n", d.display()));
    assert!(e.contains("has no file 'sub/x'"), "only files directly in the directory, as Java lists them: {e}");
    let e = err(&format!("config.providers=dir\n{DIR}k=${{dir:{}:pw}}\n", d.join("pw").display()));
    assert!(e.contains("is not a directory"), "{e}");
}

#[test]
fn the_env_provider_honours_its_allowlist_pattern() {
    std::env::set_var("MM_PROVIDERS_TEST_OK", "env-value");
    std::env::set_var("MM_PROVIDERS_TEST_OTHER", "x");
    let (f, _) = resolved(&format!("config.providers=env\n{ENV}k=${{env:MM_PROVIDERS_TEST_OK}}\n")).unwrap();
    assert_eq!(f.get("k").unwrap().value, "env-value");
    // Java's Pattern.asPredicate: a search, so 'TEST_OK' allows the whole name.
    let head = format!("config.providers=env\n{ENV}config.providers.env.param.allowlist.pattern=TEST_OK\n");
    assert_eq!(resolved(&format!("{head}k=${{env:MM_PROVIDERS_TEST_OK}}\n")).unwrap().0.get("k").unwrap().value, "env-value");
    let e = err(&format!("{head}k=${{env:MM_PROVIDERS_TEST_OTHER}}\n"));
    assert!(e.starts_with("c.properties:4: k:") && e.contains("not allowed by allowlist.pattern 'TEST_OK' (c.properties:3)"), "{e}");
    let e = err(&format!("config.providers=env\n{ENV}k=${{env:MM_PROVIDERS_TEST_UNSET}}\n"));
    assert!(e.contains("MM_PROVIDERS_TEST_UNSET is not set") && e.contains("set MM_PROVIDERS_TEST_UNSET"), "{e}");
    let e = err(&format!("config.providers=env\n{ENV}k=${{env:/p:MM_PROVIDERS_TEST_OK}}\n"));
    assert!(e.contains("takes no path"), "{e}");
    let e = err(&format!("config.providers=env\n{ENV}config.providers.env.param.allowlist.pattern=(\n"));
    assert!(e.starts_with("c.properties:3:") && e.contains("not a regular expression"), "{e}");
}

#[test]
fn providers_must_be_declared_with_one_of_the_three_classes() {
    let e = err("k=${vault:secret/x:pw}\n");
    assert!(e.starts_with("c.properties:1: k:") && e.contains("no config provider 'vault' is declared (config.providers lists: none)"), "{e}");
    let e = err(&format!("config.providers=file\n{FILE}k=${{env:HOME}}\n"));
    assert!(e.contains("no config provider 'env'") && e.contains("lists: file"), "{e}");
    let e = err("config.providers=file\n");
    assert!(e.starts_with("c.properties:1:") && e.contains("config.providers.file.class is missing"), "{e}");
    let e = err("config.providers=vault\nconfig.providers.vault.class=io.confluent.VaultProvider\n");
    assert!(
        e.starts_with("c.properties:2:") && e.contains("FileConfigProvider") && e.contains("DirectoryConfigProvider") && e.contains("EnvVarConfigProvider"),
        "{e}"
    );
    // Keys of providers not listed, and unknown parameters, are warned about, never silent.
    let (_, w) = resolved(&format!("config.providers=env\n{ENV}config.providers.env.param.foo=1\nconfig.providers.old.class=x\n")).unwrap();
    assert!(w.iter().any(|w| w.starts_with("c.properties:3: config.providers.env.param.foo is ignored")), "{w:?}");
    assert!(w.iter().any(|w| w.starts_with("c.properties:4: config.providers.old.class is ignored")), "{w:?}");
}

#[test]
fn a_resolved_value_is_redacted_in_the_settings_and_in_errors() {
    let d = scratch("redact");
    std::fs::write(d.join("c.properties"), "pw=canary-unit-1234\nbad=not-a-number-canary\n").unwrap();
    let text = format!(
        "config.providers=file\n{FILE}bootstrap.servers=b:9092\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n\
         sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"${{file:{}/c.properties:pw}}\";\n",
        d.display()
    );
    let (f, _) = resolved(&text).unwrap();
    let s = crate::front::translate::translate(&f, crate::kafka::settings::Role::Producer).unwrap();
    assert_eq!(s.get("sasl.password"), Some("canary-unit-1234"), "the client gets the value");
    let lines = s.describe();
    let line = lines.iter().find(|l| l.starts_with("sasl.password=")).unwrap();
    let via = format!("via ${{file:{}/c.properties:pw}}", d.display());
    assert_eq!(*line, format!("sasl.password=[redacted]  # c.properties:6, translated from sasl.jaas.config {via}"));
    let user = lines.iter().find(|l| l.starts_with("sasl.username=")).unwrap();
    assert!(user.starts_with("sasl.username=[redacted]  # c.properties:6") && user.ends_with(&via), "{user}");
    assert!(lines.iter().all(|l| !l.contains("canary-unit-1234")), "{lines:?}");
    // A value librdkafka refuses: the error names the key and the reference.
    let text = format!("config.providers=file\n{FILE}bootstrap.servers=b:9092\nlinger.ms=${{file:{}/c.properties:bad}}\n", d.display());
    let (f, _) = resolved(&text).unwrap();
    let e = crate::front::translate::translate(&f, crate::kafka::settings::Role::Producer).unwrap_err().to_string();
    assert!(e.starts_with("c.properties:4:") && e.contains("the value of linger.ms comes from ${file:"), "{e}");
    assert!(!crate::kafka::secrets::scrubbed(&e).contains("not-a-number-canary"), "{e}");
}
