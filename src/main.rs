//! mirror-maker: a native drop-in replacement for Kafka's MirrorMaker 1.
//!
//! `main` wires the parts together and maps errors to exit codes: `cli`
//! parses and validates, `pipeline` builds and runs the mirror; the modules
//! are listed in `lib.rs`.


use std::io::Write;

use mirror_maker::shutdown::exit;
use mirror_maker::{check, cli, demo, pidfile, pipeline};

fn init_logging() {
    // librdkafka's own chatter stays at warn unless RUST_LOG asks for more.
    let env = env_logger::Env::default().default_filter_or("info,librdkafka=warn");
    env_logger::Builder::from_env(env)
        .format(|buf, record| {
            let thread = std::thread::current();
            writeln!(
                buf,
                "[{}] {} [{}] {}",
                buf.timestamp_millis(),
                record.level(),
                thread.name().unwrap_or("main"),
                record.args()
            )
        })
        .init();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let invocation = match cli::parse(&args) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("mirror-maker: {e}");
            std::process::exit(exit::CONFIG);
        }
    };
    init_logging();
    let code = match invocation {
        cli::Invocation::Print(text) => {
            print!("{text}");
            exit::OK
        }
        cli::Invocation::Demo => demo::run(),
        cli::Invocation::Check(options) => check::run(&options),
        cli::Invocation::Run(options) => {
            for notice in &options.notices {
                log::warn!("{notice}");
            }
            // Held until exit; the kernel releases it however the process ends.
            let _pid_lock = match options.pid_file.as_deref().map(pidfile::acquire).transpose() {
                Ok(lock) => lock,
                Err(e) => {
                    log::error!("{e}");
                    eprintln!("mirror-maker: {e}");
                    std::process::exit(match e {
                        pidfile::PidFileError::Running { .. } => exit::ALREADY_RUNNING,
                        pidfile::PidFileError::Io { .. } => exit::CONFIG,
                    });
                }
            };
            match pipeline::plan(options).and_then(pipeline::run) {
                Ok(code) => code,
                Err(e) => {
                    log::error!("Exception when starting mirror maker: {e}");
                    eprintln!("mirror-maker: {e}");
                    exit::CONFIG
                }
            }
        }
    };
    std::process::exit(code);
}
