//! The side tasks a user's MM2 file asks for, as the engine's one list of
//! them says (`engine::side_tasks`): planned from a real properties file,
//! no broker needed.

use std::path::PathBuf;

use mirror_maker::engine::side_tasks::{of_flow, of_plan, Duty};
use mirror_maker::front::mm1::cli::OpsOptions;
use mirror_maker::front::{mm1, mm2};

fn plan_of(text: &str) -> mirror_maker::plan::Plan {
    let dir = std::env::temp_dir().join(format!("side-tasks-{}-{}", std::process::id(), text.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("mm2.properties");
    std::fs::write(&path, text).unwrap();
    let cfg = mm2::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    mm2::plan::plan_with(&cfg, mm1::ops(&OpsOptions::default(), true), false).unwrap_or_else(|e| panic!("{e}"))
}

fn names(tasks: &[mirror_maker::engine::side_tasks::SideTask]) -> Vec<String> {
    tasks.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn an_mm2_flow_lists_its_duties_in_start_order_and_the_plan_adds_the_heartbeats() {
    let plan = plan_of(
        "clusters = a, b\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:2\na->b.enabled = true\n\
         sync.topic.configs.interval.seconds = 30\nsync.topic.acls.enabled = true\n",
    );
    assert_eq!(plan.flows.len(), 1, "one flow a->b");
    let flow = &plan.flows[0];
    let tasks = of_flow(flow);
    let kinds: Vec<&str> = tasks
        .iter()
        .map(|t| match t.duty {
            Duty::ConfigSync(_) => "config",
            Duty::AclSync(_) => "acl",
            Duty::Checkpoints(_) => "checkpoints",
            Duty::ConnectOffsets(_) => "connect",
            Duty::Heartbeats(_) => "heartbeats",
        })
        .collect();
    // Topic syncs first, then the offset-syncs the streams feed, then the
    // take-over of Java's positions, which must precede the first read.
    assert_eq!(kinds, ["config", "acl", "checkpoints", "connect"], "{:?}", names(&tasks));
    if let Duty::ConfigSync(every) = tasks[0].duty {
        assert_eq!(every.as_secs(), 30, "the file's sync.topic.configs.interval.seconds");
    }
    let all = of_plan(&plan);
    assert_eq!(all.len(), tasks.len() + plan.heartbeats.len(), "{:?}", names(&all));
    assert!(!plan.heartbeats.is_empty(), "MM2 emits heartbeats by default");
    assert!(names(&all).iter().any(|n| n == "heartbeats a->b"), "{:?}", names(&all));
}

#[test]
fn switched_off_duties_are_not_listed_or_do_nothing() {
    let plan = plan_of(
        "clusters = a, b\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:2\na->b.enabled = true\n\
         sync.topic.configs.enabled = false\nsync.topic.acls.enabled = false\nemit.checkpoints.enabled = false\n\
         emit.offset-syncs.enabled = false\nemit.heartbeats.enabled = false\n",
    );
    let all = of_plan(&plan);
    for task in &all {
        match &task.duty {
            // Still listed, as the flow's offset tracking, but writing
            // neither offset-syncs nor checkpoints.
            Duty::Checkpoints(spec) => assert!(!spec.write_syncs && spec.checkpoints.is_none(), "{}: {spec:?}", task.name),
            Duty::ConnectOffsets(_) => {}
            other => panic!("{} is switched off in the file but listed: {other:?}", task.name),
        }
    }
}
