//! `--demo`: a real mirror on a machine without Kafka.
//!
//! Placeholder until the demo lands; kept separate so main stays wiring only.

pub fn run() -> i32 {
    eprintln!("--demo is not available yet");
    crate::shutdown::exit::CONFIG
}
