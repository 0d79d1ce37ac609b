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
            Duty::OffsetSyncs(_) => "offset-syncs",
            Duty::Checkpoints(_) => "checkpoints",
            Duty::TakeOver(_) => "take-over",
            Duty::HandBack(_) => "hand-back",
            Duty::Heartbeats(_) => "heartbeats",
        })
        .collect();
    // Topic syncs first, then the offset-syncs the streams feed and the
    // checkpoints made from them, then the take-over of Java's positions,
    // which must precede the first read.
    assert_eq!(kinds, ["config", "acl", "offset-syncs", "checkpoints", "take-over"], "{:?}", names(&tasks));
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
            Duty::OffsetSyncs(spec) => assert!(!spec.write_syncs && spec.checkpoints.is_none(), "{}: {spec:?}", task.name),
            Duty::TakeOver(_) => {}
            other => panic!("{} is switched off in the file but listed: {other:?}", task.name),
        }
    }
}

#[test]
fn on_several_nodes_only_the_writers_of_their_own_partitions_and_the_take_over_run_everywhere() {
    // Issue #28: every duty that must run once is under the flow's lease
    // (`source->target`), shared with that herder's heartbeats; the
    // offset-sync writer (each node writes the syncs of the partitions it
    // copies) and the take-over (before each node's consumers read) run
    // on every node.
    let plan = plan_of(
        "clusters = a, b\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:2\na->b.enabled = true\n\
         sync.topic.acls.enabled = true\nsync.group.offsets.enabled = true\n",
    );
    let all = of_plan(&plan);
    let everywhere: Vec<&str> = all.iter().filter(|t| !t.duty.one_node()).map(|t| t.name.as_str()).collect();
    assert_eq!(everywhere, ["offset-syncs of a->b", "take-over of Java's positions of a->b"], "{:?}", names(&all));
    let one: Vec<&str> = all.iter().filter(|t| t.duty.one_node()).map(|t| t.name.as_str()).collect();
    for wanted in ["config sync of a->b", "ACL sync of a->b", "checkpoints of a->b", "heartbeats a->b"] {
        assert!(one.contains(&wanted), "{wanted} should run on one node: {one:?}");
    }
    let ab: Vec<&str> = all.iter().filter(|t| t.duty.one_node() && t.name.ends_with("a->b")).map(|t| t.lease.as_str()).collect();
    assert!(ab.iter().all(|l| *l == "a->b"), "one lease for the flow and its herder's heartbeats: {ab:?}");
}
