//! The shipped Grafana dashboard (config/grafana/mirror-maker.json) is a
//! dashboard Grafana imports, checked two ways:
//!
//! - against Grafana's official schema: the `Dashboard` type of the npm
//!   package `@grafana/schema` (Grafana's own TypeScript types generated
//!   from its CUE schema; the package has no JSON Schema file), by
//!   TypeScript's compiler with excess property checks, both installed
//!   with npm into cargo's test scratch directory at test time (pinned
//!   versions; nothing of them is committed);
//! - by structure, per Grafana's documented JSON model, where the types
//!   cannot say it: the import wrapper (`__inputs`, `__requires`), unique
//!   panel ids, panels inside the 24-column grid and not overlapping, known
//!   panel types, every target with a refId and an expression that
//!   promtool parses, every `$variable` defined, every data source the
//!   dashboard's variable, and the series issue #31 asks it to show.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Versions of the official schema and of the compiler that checks against it.
const GRAFANA_SCHEMA: &str = "@grafana/schema@13.2.3";
const TYPESCRIPT: &str = "typescript@5.9.3";

/// Variables Grafana defines itself (global variables of its docs).
const BUILT_INS: &[&str] = &["__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__range_ms", "__dashboard", "__from", "__to", "__all"];

/// Panel types the dashboard may use: core panels of every Grafana from 8 on.
const PANEL_TYPES: &[&str] = &["row", "timeseries", "stat", "table"];

fn dashboard() -> Value {
    let path = format!("{}/config/grafana/mirror-maker.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"))
}

fn panels(d: &Value) -> &Vec<Value> {
    d["panels"].as_array().expect("panels is an array")
}

/// Panels that query (every panel but rows).
fn queried(d: &Value) -> impl Iterator<Item = &Value> {
    panels(d).iter().filter(|p| p["type"] != "row")
}

fn targets(p: &Value) -> &Vec<Value> {
    p["targets"].as_array().unwrap_or_else(|| panic!("panel {} has no targets", p["title"]))
}

fn variables(d: &Value) -> &Vec<Value> {
    d["templating"]["list"].as_array().expect("templating.list is an array")
}

/// Names after `$` or inside `${...}` (up to a `:format`) in `text`.
fn used_variables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        let name: String = match rest.strip_prefix('{') {
            Some(braced) => braced.split(['}', ':']).next().unwrap_or_default().to_string(),
            None => rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect(),
        };
        out.push(name);
    }
    out
}

#[test]
fn matches_grafanas_official_dashboard_schema() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("grafana-schema");
    let installed = |package: &str| {
        let (name, version) = package.rsplit_once('@').unwrap();
        std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
            .is_ok_and(|j| serde_json::from_str::<Value>(&j).is_ok_and(|v| v["version"] == version))
    };
    if !installed(GRAFANA_SCHEMA) || !installed(TYPESCRIPT) {
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("npm")
            .args(["install", "--no-save", "--no-audit", "--no-fund", "--fetch-timeout=60000", "--prefix"])
            .arg(&dir)
            .args([GRAFANA_SCHEMA, TYPESCRIPT])
            .output()
            .expect("npm (Debian package nodejs, or the machine's Node.js) is needed to fetch Grafana's schema");
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "npm install {GRAFANA_SCHEMA} {TYPESCRIPT} failed:\n{text}");
    }
    let mut d = dashboard();
    // The export wrapper Grafana's import dialog reads and strips; not part
    // of the saved model (checked in import_wrapper_names_the_data_source).
    let model = d.as_object_mut().unwrap();
    model.remove("__inputs");
    model.remove("__requires");
    // The schema's enums are TypeScript enums; Json<T> turns each into the
    // union of its values, which is what the JSON holds. An object literal
    // (not an imported .json file) keeps literal types and excess property
    // checks, so an unknown or misspelt key fails too.
    let source = format!(
        "import type {{ Dashboard }} from '@grafana/schema';\n\
         type Json<T> = T extends string ? `${{T}}` : T extends number | boolean | null | undefined ? T\n  \
         : T extends Array<infer U> ? Array<Json<U>> : T extends object ? {{ [K in keyof T]: Json<T[K]> }} : T;\n\
         export const dashboard: Json<Dashboard> = {};\n",
        serde_json::to_string_pretty(&d).unwrap()
    );
    let file = dir.join("check.ts");
    std::fs::write(&file, source).unwrap();
    let out = Command::new("node")
        .arg(dir.join("node_modules/typescript/bin/tsc"))
        .args(["--noEmit", "--strict", "--target", "es2020", "--module", "esnext", "--moduleResolution", "bundler"])
        .arg(&file)
        .current_dir(&dir)
        .output()
        .expect("node runs the TypeScript compiler");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the dashboard does not match @grafana/schema's Dashboard ({} holds what was checked):\n{text}", file.display());
}

#[test]
fn import_wrapper_names_the_data_source() {
    let d = dashboard();
    let inputs = d["__inputs"].as_array().expect("__inputs, as Grafana's export for sharing writes it");
    assert!(
        inputs.iter().any(|i| i["name"] == "DS_PROMETHEUS" && i["type"] == "datasource" && i["pluginId"] == "prometheus"),
        "__inputs asks for a Prometheus data source as DS_PROMETHEUS: {inputs:?}"
    );
    let requires = d["__requires"].as_array().expect("__requires");
    for p in queried(&d) {
        assert!(requires.iter().any(|r| r["type"] == "panel" && r["id"] == p["type"]), "__requires lacks panel type {}", p["type"]);
    }
    // The data source variable starts on the imported data source, and
    // every panel and target queries through the variable.
    let ds = variables(&d).iter().find(|v| v["type"] == "datasource").expect("a data source variable");
    assert_eq!((&ds["query"], &ds["current"]["value"]), (&Value::from("prometheus"), &Value::from("${DS_PROMETHEUS}")));
    let through_variable = serde_json::json!({"type": "prometheus", "uid": format!("${{{}}}", ds["name"].as_str().unwrap())});
    for p in queried(&d) {
        assert_eq!(p["datasource"], through_variable, "panel {}", p["title"]);
        for t in targets(p) {
            assert_eq!(t["datasource"], through_variable, "panel {} target {}", p["title"], t["refId"]);
        }
    }
    for v in variables(&d).iter().filter(|v| v["type"] == "query") {
        assert_eq!(v["datasource"], through_variable, "variable {}", v["name"]);
    }
}

#[test]
fn model_has_grafanas_top_level_keys() {
    let d = dashboard();
    assert!(d["title"].as_str().is_some_and(|t| !t.is_empty()), "title");
    assert!(d["uid"].as_str().is_some_and(|u| !u.is_empty() && u.len() <= 40), "uid of at most 40 characters");
    // 36 is the first model with data source references as objects, the
    // form used here; Grafana migrates older models on load.
    assert!(d["schemaVersion"].as_u64().is_some_and(|v| (36..=41).contains(&v)), "schemaVersion {}", d["schemaVersion"]);
    assert!(d["time"]["from"].is_string() && d["time"]["to"].is_string(), "time range");
    assert!(d["id"].is_null(), "id is null in a dashboard meant for import (Grafana assigns it)");
    assert!(!panels(&d).is_empty());
}

#[test]
fn panels_have_unique_ids_and_fit_the_grid_without_overlap() {
    let d = dashboard();
    let mut ids = HashSet::new();
    let mut cells = HashSet::new();
    for p in panels(&d) {
        let title = &p["title"];
        assert!(PANEL_TYPES.contains(&p["type"].as_str().unwrap_or_default()), "panel {title} has type {}, not one of {PANEL_TYPES:?}", p["type"]);
        let id = p["id"].as_u64().unwrap_or_else(|| panic!("panel {title} has no numeric id"));
        assert!(ids.insert(id), "panel id {id} used twice (second: {title})");
        assert!(title.as_str().is_some_and(|t| !t.is_empty()), "panel {id} has no title");
        let g = |k: &str| p["gridPos"][k].as_u64().unwrap_or_else(|| panic!("panel {title} gridPos.{k} is not a whole number"));
        let (x, y, w, h) = (g("x"), g("y"), g("w"), g("h"));
        assert!(w >= 1 && h >= 1 && x + w <= 24, "panel {title} at x={x} w={w} leaves the 24 columns");
        for cx in x..x + w {
            for cy in y..y + h {
                assert!(cells.insert((cx, cy)), "panel {title} overlaps another at column {cx}, row {cy}");
            }
        }
        if p["type"] != "row" {
            assert!(p["description"].as_str().is_some_and(|t| !t.is_empty()), "panel {title} says what it shows");
            assert!(p["fieldConfig"]["defaults"]["unit"].is_string(), "panel {title} has a unit");
        }
    }
}

#[test]
fn every_target_has_a_ref_id_and_an_expression() {
    let d = dashboard();
    for p in queried(&d) {
        let mut refs = HashSet::new();
        assert!(!targets(p).is_empty(), "panel {} queries nothing", p["title"]);
        for t in targets(p) {
            let r = t["refId"].as_str().unwrap_or_else(|| panic!("a target of {} has no refId", p["title"]));
            assert!(!r.is_empty() && refs.insert(r), "panel {} refId {r:?} empty or used twice", p["title"]);
            assert!(t["expr"].as_str().is_some_and(|e| !e.trim().is_empty()), "panel {} target {r} has no expr", p["title"]);
        }
    }
}

#[test]
fn every_variable_used_is_defined() {
    let d = dashboard();
    let defined: HashSet<&str> = variables(&d).iter().map(|v| v["name"].as_str().expect("a variable without a name")).collect();
    let mut texts: Vec<String> = Vec::new();
    for p in queried(&d) {
        texts.push(p["title"].as_str().unwrap_or_default().into());
        texts.push(p["datasource"]["uid"].as_str().unwrap_or_default().into());
        for t in targets(p) {
            texts.push(t["expr"].as_str().unwrap_or_default().into());
            texts.push(t["legendFormat"].as_str().unwrap_or_default().into());
        }
    }
    for v in variables(&d) {
        texts.push(v["query"]["query"].as_str().or(v["query"].as_str()).unwrap_or_default().into());
    }
    let mut used = BTreeSet::new();
    for text in &texts {
        for name in used_variables(text) {
            assert!(defined.contains(name.as_str()) || BUILT_INS.contains(&name.as_str()), "${name} in {text:?} is neither a variable nor a built-in");
            used.insert(name);
        }
    }
    for name in &defined {
        assert!(used.contains(*name), "variable {name} is defined and never used");
    }
}

/// Each expression, with the variables replaced as Grafana would, goes
/// into a recording rule that `promtool check rules` parses: PromQL
/// errors show here rather than as an empty panel. promtool is the one of
/// Debian's prometheus 2.42, the oldest server the dashboard supports.
#[test]
fn every_expression_is_promql_that_prometheus_parses() {
    let d = dashboard();
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let mut count = 0;
    for p in queried(&d) {
        for t in targets(p) {
            let expr = t["expr"].as_str().unwrap();
            let expr = ["$__rate_interval", "$__interval", "$__range"].iter().fold(expr.to_string(), |e, v| e.replace(v, "1m"));
            let expr = ["$instance", "$source", "$flow"].iter().fold(expr, |e, v| e.replace(v, ".*"));
            assert!(!expr.contains('$'), "{expr} still holds a variable the test does not replace");
            // A JSON string is a valid YAML double-quoted scalar.
            rules += &format!("      - record: dashboard:panel_{}:{}\n        expr: {}\n", p["id"], t["refId"].as_str().unwrap(), Value::from(expr));
            count += 1;
        }
    }
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard-exprs.yml");
    std::fs::write(&file, &rules).unwrap();
    let out =
        Command::new("promtool").arg("check").arg("rules").arg(&file).output().expect("promtool (Debian package prometheus) is needed; .ci/run installs it");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains(&format!("SUCCESS: {count} rules found")),
        "promtool refuses an expression of the dashboard:\n{text}\n{rules}"
    );
}

/// What issue #31 asks the dashboard to show, by the series it reads.
#[test]
fn shows_the_series_issue_31_asks_for() {
    let d = dashboard();
    let exprs: Vec<&str> = queried(&d).flat_map(targets).filter_map(|t| t["expr"].as_str()).collect();
    for series in [
        "mirror_maker_records_consumed_total",
        "mirror_maker_records_produced_total",
        "mirror_maker_bytes_consumed_total",
        "mirror_maker_bytes_produced_total",
        "mirror_maker_lag_records",
        "mirror_maker_replication_latency_seconds",
        "kafka_connect_mirror_mirrorsourceconnector_record_age_ms_avg",
        "kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms",
        "mirror_maker_checkpoint_timestamp_seconds",
        "mirror_maker_records_dropped_total",
        "mirror_maker_rebalances_total",
        "mirror_maker_commit_failures_total",
        "mirror_maker_in_flight_records",
        "mirror_maker_process_cpu_seconds_total",
        "mirror_maker_process_resident_memory_bytes",
    ] {
        assert!(exprs.iter().any(|e| e.contains(&format!("{series}{{"))), "no panel reads {series}");
    }
    // Time to catch up: the records not read yet over the rate records go
    // out (not the committed lag, which in MM2 mode holds up to a minute of
    // records already copied, until the next offset flush).
    assert!(
        exprs.iter().any(|e| e.contains("mirror_maker_unread_records{") && e.contains(") / (") && e.contains("rate(mirror_maker_records_produced_total{")),
        "no panel divides the records not read yet by the out rate"
    );
    let kinds: HashSet<&str> = queried(&d).filter_map(|p| p["type"].as_str()).collect();
    assert_eq!(kinds, HashSet::from(["timeseries", "stat", "table"]), "the dashboard uses each panel type it declares");
}
