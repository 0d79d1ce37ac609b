//! The shape of the code, checked as CI checks everything else (issue #27):
//! imports only point down the layers (a front-end makes a plan, the
//! engine runs it, both rest on kafka; ops beside; inside the engine,
//! start-up -> mm2 duties -> pipeline; see `may_use`), no
//! two source files import each other however indirectly, no source file
//! outside tests is over 800 lines, and no public function hands a bare
//! `String` error across a module boundary. Reads src/ as text; no
//! broker, no build of anything.
//!
//! The rules are data (`layer_of`, `may_use`) so that the failure message
//! can name the file, the line and the arrow that points up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest a source file outside tests may be.
const MOST_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: src/engine/pipeline/stream/mod.rs ->
/// engine::pipeline::stream; src/formats.rs -> formats; src/lib.rs -> "".
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// Whether a file holds only tests (`mod tests;` kept in a file of its own).
fn is_test_file(file: &Path) -> bool {
    file.file_name().is_some_and(|n| n == "tests.rs") || module_of(file).first().is_some_and(|m| m == "testkit")
}

/// The text of a file without its comments, string literals and
/// `#[cfg(test)]` items: what the compiler builds into the library.
fn code_of(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut skip_depth: Option<i32> = None;
    let mut depth = 0i32;
    let mut pending_cfg_test = false;
    for (i, raw) in text.lines().enumerate() {
        let mut line = String::new();
        let mut in_str = false;
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if in_str {
                if c == '\\' {
                    chars.next();
                } else if c == '"' {
                    in_str = false;
                }
                continue;
            }
            if c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' {
                in_str = true;
                line.push_str("\"\"");
                continue;
            }
            line.push(c);
        }
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            pending_cfg_test = true;
            continue;
        }
        let opens = line.matches('{').count() as i32;
        let closes = line.matches('}').count() as i32;
        if pending_cfg_test && !trimmed.is_empty() && !trimmed.starts_with("#[") {
            pending_cfg_test = false;
            // `mod tests;` or a one-line item: nothing to skip beyond it.
            if opens > closes {
                skip_depth = Some(depth);
            }
            depth += opens - closes;
            continue;
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        out.push((i + 1, line));
    }
    out
}

/// Expands the paths one line's `crate::`/`super::` references name,
/// including `use` groups written on one line (`a::{b, c::d}`).
fn paths_in(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = line[from..].find(start) {
            let begin = from + at;
            // `crate::` inside a longer identifier (`mirror_maker::crate`) never happens; `super::` as well.
            let prev = line[..begin].chars().last();
            if prev.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                from = begin + start.len();
                continue;
            }
            let rest = &line[begin..];
            let end = path_end(rest);
            expand(&rest[..end], &mut found);
            from = begin + end.max(start.len());
        }
    }
    found
}

/// Where a path (with balanced `{…}` groups) ends.
fn path_end(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => return i,
            _ => {}
        }
    }
    s.len()
}

/// `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e.
fn expand(path: &str, out: &mut Vec<String>) {
    let Some(open) = path.find('{') else {
        out.push(path.trim_end_matches("::").to_string());
        return;
    };
    let prefix = &path[..open];
    let inner = &path[open + 1..path.rfind('}').unwrap_or(path.len())];
    let mut depth = 0;
    let mut part = String::new();
    let mut parts = Vec::new();
    for c in inner.chars() {
        match c {
            '{' => {
                depth += 1;
                part.push(c);
            }
            '}' => {
                depth -= 1;
                part.push(c);
            }
            ',' if depth == 0 => parts.push(std::mem::take(&mut part)),
            _ => part.push(c),
        }
    }
    parts.push(part);
    for p in parts {
        let p = p.trim().split(" as ").next().unwrap_or("").trim().to_string();
        if p.is_empty() {
            continue;
        }
        if p == "self" {
            out.push(prefix.trim_end_matches("::").to_string());
        } else {
            expand(&format!("{prefix}{p}"), out);
        }
    }
}

/// The module a reference from `from` names: `super::` resolved against
/// `from`, then the longest prefix that is a module with a file of its own.
fn target_of(from: &[String], from_is_mod_rs: bool, path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = Vec::new();
    match segs.first() {
        Some(&"crate") => {
            segs.remove(0);
        }
        Some(&"super") => {
            // In a/b.rs, `super` is `a`; in a/b/mod.rs (module a::b) also `a`.
            base = from.to_vec();
            let _ = from_is_mod_rs;
            while segs.first() == Some(&"super") {
                segs.remove(0);
                base.pop()?;
            }
        }
        _ => return None,
    }
    let mut full = base;
    full.extend(segs.iter().map(|s| s.to_string()));
    (0..=full.len()).rev().map(|n| full[..n].to_vec()).find(|m| modules.contains(m))
}

/// Which layer a module belongs to, for the arrows.
fn layer_of(module: &[String]) -> &'static str {
    match module.first().map(String::as_str) {
        Some("front") => "front",
        Some("plan") => "plan",
        Some("engine") => match module.get(1).map(String::as_str) {
            Some("pipeline") => "engine::pipeline",
            Some("mm2") => "engine::mm2",
            _ => "engine",
        },
        Some("kafka") => "kafka",
        Some("ops") => "ops",
        Some("formats") | Some("fxhash") => "leaf",
        Some("demo") => "demo",
        Some("worker") => "worker",
        Some("testkit") => "testkit",
        _ => "crate",
    }
}

/// Whether code in layer `from` may use layer `to`. The plan is the
/// contract between the two halves: a front-end makes one, the engine runs
/// one, and neither knows the other. Inside the engine, start-up uses the
/// MM2 duties, which use the pipeline, which uses neither. Everything rests
/// on kafka (the librdkafka glue). ops sits beside: front-ends and engine
/// use it, it uses only kafka. The leaves (record formats, hashing) use
/// nothing; the demo sits on top of everything.
fn may_use(from: &str, to: &str) -> bool {
    if from == to || to == "leaf" {
        return true;
    }
    let engine = ["engine", "engine::mm2", "engine::pipeline"];
    let below_engine = |l: &str| engine.iter().position(|e| *e == l);
    match from {
        "demo" | "testkit" | "crate" => true,
        "front" => matches!(to, "plan" | "kafka" | "ops"),
        "engine" | "engine::mm2" | "engine::pipeline" => match (below_engine(from), below_engine(to)) {
            (Some(f), Some(t)) => t > f,
            _ => matches!(to, "plan" | "kafka" | "ops"),
        },
        // The Connect worker runs a plan per connector: it sits above both
        // halves, as main.rs does, and nothing but main uses it.
        "worker" => matches!(to, "front" | "plan" | "engine" | "engine::mm2" | "engine::pipeline" | "kafka" | "ops"),
        "plan" | "ops" => to == "kafka",
        _ => false,
    }
}

/// A file's module path and its code lines (numbered from 1).
type Parsed = (Vec<String>, Vec<(usize, String)>);

struct Crate {
    files: BTreeMap<PathBuf, Parsed>,
    modules: BTreeSet<Vec<String>>,
    module_file: BTreeMap<Vec<String>, PathBuf>,
}

fn read_crate() -> Crate {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    let mut files = BTreeMap::new();
    let mut modules = BTreeSet::new();
    let mut module_file = BTreeMap::new();
    for p in paths {
        if p.file_name().is_some_and(|n| n == "main.rs") || is_test_file(&p) {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let module = module_of(&p);
        modules.insert(module.clone());
        module_file.insert(module.clone(), p.clone());
        files.insert(p, (module, code_of(&text)));
    }
    Crate { files, modules, module_file }
}

/// file -> the other files it imports from, with the line of the first use.
fn imports(c: &Crate) -> BTreeMap<PathBuf, BTreeMap<PathBuf, (usize, String)>> {
    let mut graph = BTreeMap::new();
    for (file, (module, lines)) in &c.files {
        let is_mod_rs = file.file_name().is_some_and(|n| n == "mod.rs");
        let mut edges: BTreeMap<PathBuf, (usize, String)> = BTreeMap::new();
        // Child modules this file declares, named without `crate::` or
        // `self::` (`pub mod plan; … plan::plan_with(…)`).
        let children: Vec<String> = lines
            .iter()
            .filter_map(|(_, l)| {
                let t = l.trim().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
                t.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')).map(|m| m.trim().to_string())
            })
            .collect();
        for (n, line) in lines {
            let mut paths = paths_in(line);
            for child in &children {
                let mut child_module = module.clone();
                child_module.push(child.clone());
                for (at, _) in line.match_indices(&format!("{child}::")) {
                    let prev = line[..at].chars().last();
                    if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') && !line[..at].ends_with("self::") {
                        continue;
                    }
                    paths.push(format!("crate::{}", child_module.join("::")));
                }
            }
            for path in paths {
                let Some(target) = target_of(module, is_mod_rs, &path, &c.modules) else { continue };
                // A module naming itself, or its parent naming a child it
                // declares (`pub mod x; use x::Y;`), is not an import upward.
                if &target == module || target.is_empty() {
                    continue;
                }
                let to = c.module_file[&target].clone();
                edges.entry(to).or_insert((*n, path));
            }
        }
        graph.insert(file.clone(), edges);
    }
    graph
}

fn short(p: &Path) -> String {
    p.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or(p).display().to_string()
}

#[test]
fn imports_only_point_down_the_layers() {
    let c = read_crate();
    let mut up = Vec::new();
    for (file, edges) in imports(&c) {
        let from = layer_of(&c.files[&file].0);
        for (to_file, (line, path)) in edges {
            let to = layer_of(&c.files[&to_file].0);
            if !may_use(from, to) {
                up.push(format!("{}:{line}: {from} uses {to} ({path})", short(&file)));
            }
        }
    }
    assert!(up.is_empty(), "imports pointing up or sideways (see may_use in tests/layers.rs for the map):\n{}", up.join("\n"));
}

#[test]
fn no_two_files_import_each_other_even_through_others() {
    let c = read_crate();
    let graph = imports(&c);
    // Tarjan's strongly connected components: any of more than one file is a cycle.
    struct T<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeMap<PathBuf, (usize, String)>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        next: usize,
        found: Vec<Vec<&'a PathBuf>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a PathBuf) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.graph[v].keys() {
            let Some((w, _)) = t.graph.get_key_value(w) else { continue };
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.found.push(comp);
            }
        }
    }
    let mut t = T { graph: &graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on: BTreeSet::new(), next: 0, found: Vec::new() };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    let cycles: Vec<String> = t
        .found
        .iter()
        .map(|comp| {
            let set: BTreeSet<&PathBuf> = comp.iter().copied().collect();
            let arrows: Vec<String> = comp
                .iter()
                .flat_map(|f| {
                    graph[*f]
                        .iter()
                        .filter(|(to, _)| set.contains(to))
                        .map(move |(to, (line, path))| format!("  {}:{line} -> {} ({path})", short(f), short(to)))
                })
                .collect();
            arrows.join("\n")
        })
        .collect();
    assert!(cycles.is_empty(), "files that import each other (directly or through others):\n{}", cycles.join("\n\n"));
}

#[test]
fn no_source_file_outside_tests_is_over_800_lines() {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    let long: Vec<String> = paths
        .iter()
        .filter(|p| !is_test_file(p))
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > MOST_LINES).then(|| format!("{}: {n} lines", short(p)))
        })
        .collect();
    assert!(long.is_empty(), "split these along their seams (a big `mod tests` may go to a tests.rs beside):\n{}", long.join("\n"));
}

#[test]
fn no_public_function_returns_a_bare_string_error() {
    let c = read_crate();
    let mut bare = Vec::new();
    for (file, (_, lines)) in &c.files {
        // A signature may span lines: join each `pub fn` up to its body.
        let mut sig: Option<(usize, String)> = None;
        for (n, line) in lines {
            let t = line.trim_start();
            if sig.is_none() && (t.starts_with("pub fn ") || t.starts_with("pub(crate) fn ") || t.starts_with("pub(super) fn ")) {
                sig = Some((*n, String::new()));
            }
            if let Some((start, s)) = &mut sig {
                s.push_str(line.trim());
                if line.contains('{') || line.trim_end().ends_with(';') {
                    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
                    if compact.contains(",String>{") || compact.contains(",String>where") || compact.ends_with(",String>;") {
                        bare.push(format!("{}:{start}: {}", short(file), s.split('{').next().unwrap_or(s).trim()));
                    }
                    sig = None;
                }
            }
        }
    }
    assert!(bare.is_empty(), "public functions whose error is a bare String (give them a typed error of their layer):\n{}", bare.join("\n"));
}

#[test]
fn the_checks_themselves_see_what_they_should() {
    // The path reader: groups, renames, `self`, nested groups.
    let mut got = Vec::new();
    expand("crate::a::{b, c::{d, e as f}, self}", &mut got);
    assert_eq!(got, ["crate::a::b", "crate::a::c::d", "crate::a::c::e", "crate::a"]);
    let line = &code_of("use crate::engine::mm2::topics::{shortened, Reconciled}; let x = \"crate::front\";")[0].1;
    assert_eq!(paths_in(line), ["crate::engine::mm2::topics::shortened", "crate::engine::mm2::topics::Reconciled"]);
    assert_eq!(paths_in("use super::super::x::{Y, Z};"), ["super::super::x::Y", "super::super::x::Z"]);
    // The arrows: a few that must hold and a few that must not.
    assert!(may_use("front", "plan") && may_use("engine", "engine::mm2") && may_use("engine::mm2", "engine::pipeline") && may_use("engine::pipeline", "kafka"));
    assert!(may_use("engine::pipeline", "plan") && may_use("engine::pipeline", "ops") && may_use("ops", "kafka") && may_use("plan", "kafka"));
    assert!(!may_use("plan", "front") && !may_use("engine::pipeline", "engine::mm2") && !may_use("engine::mm2", "engine"));
    assert!(!may_use("front", "engine") && !may_use("engine", "front") && !may_use("plan", "engine") && !may_use("plan", "ops"));
    assert!(!may_use("kafka", "ops") && !may_use("ops", "engine") && !may_use("leaf", "kafka") && !may_use("kafka", "engine::pipeline"));
    // Test modules are left out; code after them is not.
    let code = code_of("use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::front;\n}\nuse crate::b; // crate::c\n");
    let kept: Vec<&str> = code.iter().map(|(_, l)| l.trim()).collect();
    assert_eq!(kept, ["use crate::a;", "use crate::b;"]);
}
