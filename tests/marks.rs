//! No brokers: the marks that make a run say what it did not run.
//!
//! A test that needs the test clusters carries `#[ignore = "needs ..."]`, so
//! a plain `cargo test` lists it as ignored instead of reporting it passed,
//! and scripts/test runs it with `--include-ignored`. This file reads every
//! tests/*.rs and fails when a test that needs the clusters lacks that mark,
//! when a test is ignored as needing clusters while it uses none, and when
//! a test is ignored without a reason: a forgotten mark would otherwise only
//! show as a plain `cargo test` failing on a machine without Kafka.

use std::path::{Path, PathBuf};

/// What the clusters' tests call: the macro that fails them with the fix
/// when run without the clusters, and the address helpers of tests/common.
const CLUSTER_MACRO: &str = "require_clusters!";
const CLUSTER_HELPERS: [&str; 3] = ["source()", "target()", "extra()"];

/// One `#[test]` fn as read from a file.
#[derive(Debug)]
struct TestFn {
    name: String,
    line: usize,
    /// The reason of its `#[ignore = "..."]`, `Some("")` for a bare `#[ignore]`.
    ignore: Option<String>,
    body: String,
}

/// Whether `text` calls one of [`CLUSTER_HELPERS`] as a free function
/// (`source()`, `common::source()`), not a method of something else
/// (`clusters.source()`, `resource()`).
fn calls_a_cluster_helper(text: &str) -> bool {
    CLUSTER_HELPERS.iter().any(|h| {
        text.match_indices(h).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            !before.is_some_and(|c| c == '.' || c == '_' || c.is_alphanumeric())
        })
    })
}

/// The `#[test]` fns of one file's source: each with the attributes around
/// `#[test]` (above it, up to the doc comment, and below it, up to the fn)
/// and its body, up to the closing brace at the fn's own indentation.
fn test_fns(src: &str) -> Vec<TestFn> {
    let lines: Vec<&str> = src.lines().collect();
    let is_attr = |l: &str| l.trim_start().starts_with("#[");
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() != "#[test]" {
            continue;
        }
        let mut first = i;
        while first > 0 && is_attr(lines[first - 1]) {
            first -= 1;
        }
        let mut fn_line = i + 1;
        while fn_line < lines.len() && is_attr(lines[fn_line]) {
            fn_line += 1;
        }
        let Some(head) = lines.get(fn_line) else { continue };
        let name = head.split("fn ").nth(1).and_then(|rest| rest.split(['(', '<']).next()).unwrap_or("?").trim().to_string();
        let indent = &head[..head.len() - head.trim_start().len()];
        let close = format!("{indent}}}");
        let end = (fn_line..lines.len()).find(|&k| lines[k] == close || (k == fn_line && head.trim_end().ends_with('}'))).unwrap_or(lines.len() - 1);
        let ignore = lines[first..fn_line].iter().map(|l| l.trim()).find(|l| l.starts_with("#[ignore")).map(|l| match l.split_once('"') {
            Some((_, rest)) => rest.rsplit_once('"').map_or(rest, |(r, _)| r).to_string(),
            None => String::new(),
        });
        found.push(TestFn { name, line: fn_line + 1, ignore, body: lines[fn_line..=end].join("\n") });
    }
    found
}

/// What is wrong with the marks in one file's source, one line per problem.
fn problems(file: &str, src: &str) -> Vec<String> {
    let tests = test_fns(src);
    let mut out = Vec::new();
    for t in &tests {
        let uses_macro = t.body.contains(CLUSTER_MACRO);
        let needs = uses_macro || calls_a_cluster_helper(&t.body);
        let at = format!("{file}:{}: {}", t.line, t.name);
        match (&t.ignore, needs) {
            (None, true) => out.push(format!(
                "{at} needs the test clusters but lacks #[ignore = \"needs clusters\"]: a plain `cargo test` would run it without them and fail, instead of listing it as not run"
            )),
            (Some(reason), true) if !reason.starts_with("needs ") => {
                out.push(format!("{at} needs the test clusters but its #[ignore] says {reason:?}: the reason must start with \"needs \" (e.g. \"needs clusters\")"))
            }
            (Some(reason), false) if reason.is_empty() => {
                out.push(format!("{at} is ignored without a reason: say why (#[ignore = \"...\"]), or drop the #[ignore] if it needs nothing external"))
            }
            (Some(reason), false) if reason.contains("clusters") => out.push(format!(
                "{at} is ignored as {reason:?} but never uses the clusters ({CLUSTER_MACRO}, {}): drop the #[ignore] so a plain `cargo test` runs it",
                CLUSTER_HELPERS.join(", ")
            )),
            _ => {}
        }
        // Without the macro such a test, asked to run without the clusters,
        // would talk to the default addresses (maybe another run's clusters)
        // rather than fail with the fix.
        if needs && !uses_macro {
            out.push(format!("{at} uses the test clusters without {CLUSTER_MACRO} as its first line"));
        }
    }
    // The macro outside a test (in a helper the tests call) hides which
    // tests need the clusters from this check.
    let in_tests: usize = tests.iter().map(|t| t.body.matches(CLUSTER_MACRO).count()).sum();
    let in_file = src.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| l.matches(CLUSTER_MACRO).count()).sum::<usize>();
    if in_file != in_tests {
        out.push(format!(
            "{file}: {CLUSTER_MACRO} appears {in_file} times but {in_tests} times in #[test] fns: call it in the tests themselves, so that this check sees which need the clusters"
        ));
    }
    out
}

fn test_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        // This file holds deliberately wrong examples in its own tests.
        .filter(|p| p.extension().is_some_and(|x| x == "rs") && p.file_name().is_some_and(|n| n != "marks.rs"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_test_that_needs_the_clusters_is_marked_and_no_other_is() {
    let files = test_files();
    let (mut tests, mut marked, mut problems_found) = (0, 0, Vec::new());
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let name = format!("tests/{}", f.file_name().unwrap().to_string_lossy());
        let fns = test_fns(&src);
        tests += fns.len();
        marked += fns.iter().filter(|t| t.ignore.as_deref().is_some_and(|r| r.starts_with("needs "))).count();
        problems_found.extend(problems(&name, &src));
    }
    // A reader that found nothing would pass vacuously.
    assert!(files.len() > 10 && tests > 50 && marked > 0, "read only {} files, {tests} tests, {marked} marked", files.len());
    println!("{} files, {tests} tests, {marked} marked as needing clusters or more", files.len());
    assert!(problems_found.is_empty(), "{} tests with wrong marks:\n{}", problems_found.len(), problems_found.join("\n"));
}

/// The check itself, on sources made to be wrong in each way it knows, and
/// on right ones: it must catch each mistake and accept the right marks.
#[test]
fn the_check_catches_each_wrong_mark() {
    let unmarked = "#[test]\nfn a() {\n    require_clusters!(source());\n}\n";
    let p = problems("x.rs", unmarked);
    assert!(p.len() == 1 && p[0].contains("x.rs:2: a needs the test clusters but lacks"), "{p:?}");

    let helper_only = "#[test]\n#[ignore = \"needs clusters\"]\nfn b() {\n    let s = common::source();\n}\n";
    let p = problems("x.rs", helper_only);
    assert!(p.len() == 1 && p[0].contains("b uses the test clusters without require_clusters!"), "{p:?}");

    let wrong_reason = "#[test]\n#[ignore = \"slow\"]\nfn c() {\n    require_clusters!();\n}\n";
    let p = problems("x.rs", wrong_reason);
    assert!(p.len() == 1 && p[0].contains("the reason must start with \"needs \""), "{p:?}");

    let needless = "/// Doc.\n#[ignore = \"needs clusters\"]\n#[test]\nfn d() {\n    assert_eq!(1 + 1, 2);\n}\n";
    let p = problems("x.rs", needless);
    assert!(p.len() == 1 && p[0].contains("x.rs:4: d is ignored as \"needs clusters\" but never uses the clusters"), "{p:?}");

    let bare = "#[test]\n#[ignore]\nfn e() {}\n";
    let p = problems("x.rs", bare);
    assert!(p.len() == 1 && p[0].contains("e is ignored without a reason"), "{p:?}");

    let hidden = "fn helper() {\n    require_clusters!();\n}\n\n#[test]\nfn f() {\n    helper();\n}\n";
    let p = problems("x.rs", hidden);
    assert!(p.len() == 1 && p[0].contains("appears 1 times but 0 times in #[test] fns"), "{p:?}");

    let right = "#[test]\n#[ignore = \"needs clusters and Java\"]\nfn g() {\n    require_clusters!(source(), target());\n    inner();\n}\n\n\
                 #[test]\nfn h() {\n    let c = clusters.source();\n    let r = resource();\n}\n\n\
                 #[test]\n#[ignore = \"takes an hour\"]\nfn i() {}\n";
    assert_eq!(problems("x.rs", right), Vec::<String>::new());
    let names: Vec<_> = test_fns(right).into_iter().map(|t| (t.name, t.ignore)).collect();
    assert_eq!(
        names,
        [("g".into(), Some("needs clusters and Java".into())), ("h".into(), None), ("i".into(), Some("takes an hour".into()))],
        "the tests and their ignore reasons as read"
    );
}
