//! The command line, as MM1 users write it.

use super::spelling::{spelling, Spelling};
use super::*;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn run(list: &[&str]) -> Options {
    match parse(&args(list)).expect("parse") {
        Invocation::Run(o) => o,
        other => panic!("expected a run, got {other:?}"),
    }
}

const BASE: &[&str] = &["--consumer.config", "c.properties", "--producer.config", "p.properties"];

fn with(extra: &[&str]) -> Vec<String> {
    let mut v = args(BASE);
    v.extend(args(extra));
    v
}

fn run_with(extra: &[&str]) -> Options {
    let v = with(extra);
    let refs: Vec<&str> = v.iter().map(String::as_str).collect();
    run(&refs)
}

#[test]
fn defaults_match_mm1() {
    let o = run_with(&["--whitelist", ".*"]);
    assert_eq!(o.consumer_configs, vec![PathBuf::from("c.properties")]);
    assert_eq!(o.producer_config, PathBuf::from("p.properties"));
    assert_eq!(o.include.as_deref(), Some(".*"));
    assert_eq!(o.exclude, None);
    assert_eq!((o.num_streams, o.num_producers, o.queue_size), (1, 1, 10_000));
    assert_eq!(o.offset_commit_interval_ms, None);
    assert!(o.abort_on_send_failure);
    assert_eq!(o.handler, HandlerSpec { name: "identity".into(), args: None });
    assert_eq!(o.topic_refresh_interval_ms, 30_000);
    assert_eq!(o.ops.drain_timeout_ms, 60_000);
    assert_eq!((o.ops.stats_interval_ms, o.ops.pid_file), (30_000, None));
    let o = run_with(&["--whitelist", ".*", "--stats.interval.ms", "0", "--pid.file=/run/mm.pid"]);
    assert_eq!((o.ops.stats_interval_ms, o.ops.pid_file), (0, Some(PathBuf::from("/run/mm.pid"))));
    assert_eq!((o.ops.metrics_port, o.ops.metrics_bind.as_str()), (None, "127.0.0.1"));
    let o = run_with(&["--whitelist", ".*", "--metrics.port", "9404", "--metrics.bind", "0.0.0.0"]);
    assert_eq!((o.ops.metrics_port, o.ops.metrics_bind.as_str()), (Some(9404), "0.0.0.0"));
    let e = parse(&with(&["--whitelist", "x", "--metrics.port", "0"])).unwrap_err();
    assert!(e.message.contains("--metrics.port '0'"), "{e}");
}

#[test]
fn embedding_defaults_equal_the_command_lines() {
    let parsed = run(&["--consumer.config", "c.properties", "--producer.config", "p.properties", "--whitelist", ".*"]);
    assert_eq!(Options::new("c.properties".into(), "p.properties".into(), ".*"), parsed);
}

#[test]
fn equals_form_and_single_dash_parse() {
    let o = run(&["-consumer.config", "a", "--producer.config=b", "--whitelist=\"t\"", "-num.streams", "3"]);
    assert_eq!(o.consumer_configs, vec![PathBuf::from("a")]);
    assert_eq!(o.producer_config, PathBuf::from("b"));
    assert_eq!(o.include.as_deref(), Some("\"t\""));
    assert_eq!(o.num_streams, 3);
}

#[test]
fn value_may_start_with_a_dash() {
    let o = run_with(&["--whitelist", "-weird-topic"]);
    assert_eq!(o.include.as_deref(), Some("-weird-topic"));
}

#[test]
fn repeated_consumer_config_gives_several_sources() {
    let o = run(&["--consumer.config", "a", "--consumer.config", "b", "--producer.config", "p", "--include", "x"]);
    assert_eq!(o.consumer_configs, vec![PathBuf::from("a"), PathBuf::from("b")]);
}

#[test]
fn en_dash_and_curly_quotes_are_accepted_with_a_notice() {
    let o = run(&["\u{2013}consumer.config", "c", "\u{2014}producer.config", "p", "\u{2013}whitelist", "\u{201D}.*\u{201D}"]);
    assert_eq!(o.include.as_deref(), Some(".*"));
    assert_eq!(o.consumer_configs, vec![PathBuf::from("c")]);
    assert!(o.notices.iter().any(|n| n.contains("typographic dash") && n.contains("--whitelist")), "{:?}", o.notices);
    assert!(o.notices.iter().any(|n| n.contains("typographic quotes")), "{:?}", o.notices);
}

#[test]
fn curly_quotes_in_equals_form() {
    let o = run_with(&["--whitelist=\u{201C}orders.*\u{201D}"]);
    assert_eq!(o.include.as_deref(), Some("orders.*"));
}

#[test]
fn include_wins_over_whitelist() {
    let o = run_with(&["--whitelist", "a", "--include", "b"]);
    assert_eq!(o.include.as_deref(), Some("b"));
    assert!(o.notices.iter().any(|n| n.contains("--whitelist 'a' is ignored")));
}

#[test]
fn blacklist_alone_or_with_include() {
    let o = run_with(&["--blacklist", "tmp.*"]);
    assert_eq!((o.include, o.exclude.as_deref()), (None, Some("tmp.*")));
    let o = run_with(&["--include", ".*", "--blacklist", "tmp.*"]);
    assert_eq!((o.include.as_deref(), o.exclude.as_deref()), (Some(".*"), Some("tmp.*")));
}

#[test]
fn missing_filter_is_an_error_naming_the_option() {
    let e = parse(&args(BASE)).unwrap_err();
    assert!(e.message.contains("include list must be specified") && e.message.contains("--whitelist"), "{e}");
}

#[test]
fn missing_required_files() {
    let e = parse(&args(&["--producer.config", "p", "--whitelist", "x"])).unwrap_err();
    assert!(e.message.contains("--consumer.config"), "{e}");
    let e = parse(&args(&["--consumer.config", "c", "--whitelist", "x"])).unwrap_err();
    assert!(e.message.contains("--producer.config"), "{e}");
    let e = parse(&[]).unwrap_err();
    assert!(e.message.contains("missing required options"), "{e}");
}

#[test]
fn numbers_are_validated() {
    for (opt, bad) in [("--num.streams", "0"), ("--num.producers", "x"), ("--queue.size", "-1"), ("--queue.byte.size", "0")] {
        let e = parse(&with(&["--whitelist", "x", opt, bad])).unwrap_err();
        assert!(e.message.contains(opt), "{opt}: {e}");
    }
    let o = run_with(&["--whitelist", "x", "--num.producers", "4", "--queue.size", "7", "--queue.byte.size", "65536", "--offset.commit.interval.ms", "250"]);
    assert_eq!((o.num_producers, o.queue_size, o.queue_byte_size, o.offset_commit_interval_ms), (4, 7, 65536, Some(250)));
    assert_eq!(run_with(&["--whitelist", "x"]).queue_byte_size, DEFAULT_QUEUE_BYTE_SIZE);
    let e = parse(&with(&["--whitelist", "x", "--offset.commit.interval.ms", "soon"])).unwrap_err();
    assert!(e.message.contains("--offset.commit.interval.ms"), "{e}");
}

#[test]
fn abort_on_send_failure_is_scala_to_boolean() {
    assert!(!run_with(&["--whitelist", "x", "--abort.on.send.failure", "FALSE"]).abort_on_send_failure);
    assert!(run_with(&["--whitelist", "x", "--abort.on.send.failure", "True"]).abort_on_send_failure);
    let e = parse(&with(&["--whitelist", "x", "--abort.on.send.failure", "yes"])).unwrap_err();
    assert!(e.message.contains("--abort.on.send.failure 'yes'"), "{e}");
}

#[test]
fn handlers() {
    let o = run_with(&["--whitelist", "x", "--message.handler", "topic-prefix", "--message.handler.args", "dr."]);
    assert_eq!(o.handler, HandlerSpec { name: "topic-prefix".into(), args: Some("dr.".into()) });
    let e = parse(&with(&["--whitelist", "x", "--message.handler", "com.example.MyHandler"])).unwrap_err();
    assert!(e.message.contains("Java handler classes cannot be loaded") && e.message.contains("topic-rename"), "{e}");
}

#[test]
fn beyond_mm1_options() {
    let o = run_with(&["--whitelist", "x"]);
    assert_eq!(o.beyond, BeyondOptions::default());
    assert!(o.beyond.create_topics && o.beyond.sync_partitions, "{o:?}");
    assert!(!o.beyond.provenance, "the target's records are the source's, with nothing added, unless asked");
    assert!(run_with(&["--whitelist", "x", "--provenance.header", "true"]).beyond.provenance);
    let o = run_with(&[
        "--whitelist",
        "x",
        "--create.topics=false",
        "--sync.partitions",
        "FALSE",
        "--provenance.header",
        "false",
        "--throttle.records.per.sec",
        "500",
        "--throttle.bytes.per.sec=1000000",
    ]);
    assert_eq!(
        o.beyond,
        BeyondOptions {
            create_topics: false,
            sync_partitions: false,
            provenance: false,
            throttle_records_per_sec: Some(500),
            throttle_bytes_per_sec: Some(1_000_000),
            checkpoints: CheckpointOptions::default(),
            exactly_once: None,
        }
    );
    let e = parse(&with(&["--whitelist", "x", "--create.topics", "no"])).unwrap_err();
    assert!(e.message.contains("--create.topics 'no'"), "{e}");
    let e = parse(&with(&["--whitelist", "x", "--throttle.bytes.per.sec", "0"])).unwrap_err();
    assert!(e.message.contains("--throttle.bytes.per.sec '0'"), "{e}");
    let e = parse(&with(&["--whitelist", "x", "--throttle.records.per.sec", "1k"])).unwrap_err();
    assert!(e.message.contains("--throttle.records.per.sec '1k'"), "{e}");
}

#[test]
fn exactly_once_with_its_interval_and_what_it_cannot_do() {
    assert_eq!(run_with(&["--whitelist", "x"]).beyond.exactly_once, None);
    assert_eq!(run_with(&["--whitelist", "x", "--exactly.once", "true"]).beyond.exactly_once, Some(100));
    assert_eq!(run_with(&["--whitelist", "x", "--exactly.once=true", "--transaction.interval.ms", "0"]).beyond.exactly_once, Some(0));
    let refused = |extra: &[&str], needle: &str| {
        let mut v = vec!["--whitelist", "x"];
        v.extend_from_slice(extra);
        let e = parse(&with(&v)).unwrap_err();
        assert!(e.message.contains(needle), "{extra:?}: {e}");
    };
    refused(&["--transaction.interval.ms", "50"], "--transaction.interval.ms applies only with --exactly.once true");
    refused(&["--exactly.once", "true", "--create.topics", "false"], "--exactly.once true needs --create.topics true");
    refused(&["--exactly.once", "true", "--abort.on.send.failure", "false"], "cannot be skipped inside a transaction");
    refused(&["--exactly.once", "true", "--throttle.records.per.sec", "10"], "does not throttle yet");
    refused(&["--exactly.once", "maybe"], "--exactly.once 'maybe'");
}

#[test]
fn rebalance_listener_is_a_clear_error() {
    let e = parse(&with(&["--whitelist", "x", "--consumer.rebalance.listener", "com.x.L"])).unwrap_err();
    assert!(e.message.contains("--consumer.rebalance.listener com.x.L") && e.message.contains("cannot be loaded"), "{e}");
    let e = parse(&with(&["--whitelist", "x", "--rebalance.listener.args", "a"])).unwrap_err();
    assert!(e.message.contains("--rebalance.listener.args"), "{e}");
}

#[test]
fn no_op_flags_are_noticed() {
    let o = run_with(&["--whitelist", "x", "--new.consumer", "--new.producer"]);
    assert_eq!(o.notices.iter().filter(|n| n.contains("has no effect")).count(), 2);
}

#[test]
fn unknown_and_abbreviated_options_are_errors() {
    let e = parse(&with(&["--whitel", "x"])).unwrap_err();
    assert!(e.message.contains("--whitel"), "{e}");
    let e = parse(&with(&["--whitelist", "x", "--bogus", "1"])).unwrap_err();
    assert!(e.message.contains("--bogus"), "{e}");
}

#[test]
fn stray_words_are_ignored_with_a_notice() {
    let o = run_with(&["--whitelist", "a", "b"]);
    assert_eq!(o.include.as_deref(), Some("a"));
    assert!(o.notices.iter().any(|n| n.contains("stray argument 'b'")), "{:?}", o.notices);
}

#[test]
fn help_version_demo() {
    match parse(&args(&["--help"])).unwrap() {
        Invocation::Print(s) => assert!(s.contains("--consumer.config") && s.contains("--whitelist")),
        other => panic!("{other:?}"),
    }
    match parse(&args(&["-version"])).unwrap() {
        Invocation::Print(s) => assert!(s.starts_with("mirror-maker ")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(parse(&args(&["--demo"])).unwrap(), Invocation::Demo));
}

#[test]
fn every_option_is_defined_once_and_its_help_states_its_default() {
    let mut names: Vec<&str> = OPTIONS.iter().map(|o| o.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), OPTIONS.len(), "an option is listed twice");
    for option in OPTIONS {
        assert!(option.help_states_default(), "--{}: the help must show {{default}} exactly when the option has a default", option.name());
    }
    let help = command().render_long_help().to_string();
    assert!(!help.contains("{default}"), "{help}");
    assert!(help.contains("Default 2097152 (2 MiB).") && help.contains("identity (default)"), "{help}");
}

#[test]
fn spellings_mm1_accepted() {
    assert_eq!(spelling("--whitelist"), Spelling::AsGiven);
    assert_eq!(spelling("x"), Spelling::AsGiven);
    assert_eq!(spelling("-bogus"), Spelling::AsGiven);
    assert_eq!(spelling("-whitelist=x"), Spelling::Joptsimple("--whitelist=x".into()));
    assert_eq!(spelling("---new.consumer"), Spelling::Joptsimple("--new.consumer".into()));
    assert_eq!(spelling("\u{2013}whitelist"), Spelling::Typographic("--whitelist".into()));
}

#[test]
fn usage_errors_name_their_option() {
    let e = parse(&with(&["--whitelist", ".*", "--num.streams", "0"])).unwrap_err();
    assert_eq!(e.option.as_deref(), Some("num.streams"));
    assert!(e.to_string().ends_with("\nRun 'mirror-maker --help' for every option."), "{e}");
    let e = parse(&args(&["--consumer.config", "c.properties", "--producer.config", "p.properties"])).unwrap_err();
    assert_eq!(e.option.as_deref(), Some("include"), "{e}");
}
