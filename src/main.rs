//! mirror-maker: a native drop-in replacement for Kafka's MirrorMaker 1.
//!
//! `main` wires the parts together and maps errors to exit codes: `cli`
//! parses and validates, `engine` builds and runs the mirror; the modules
//! are listed in `lib.rs`.

use std::io::Write;
use std::sync::Arc;

use mirror_maker::front::check;
use mirror_maker::front::mm1::{self, cli};
use mirror_maker::ops::logfile::LogFile;
use mirror_maker::ops::pidfile;
use mirror_maker::ops::shutdown::exit;
use mirror_maker::{demo, engine};

/// Logs to stderr, or to `--log.file` when given.
fn init_logging(log_file: Option<&Arc<LogFile>>) {
    // librdkafka's own chatter stays at warn unless RUST_LOG asks for more.
    let env = env_logger::Env::default().default_filter_or("info,librdkafka=warn");
    let mut builder = env_logger::Builder::from_env(env);
    if let Some(file) = log_file {
        builder.target(env_logger::Target::Pipe(Box::new(file.writer())));
    }
    builder
        .format(|buf, record| {
            let thread = std::thread::current();
            writeln!(buf, "[{}] {} [{}] {}", buf.timestamp_millis(), record.level(), thread.name().unwrap_or("main"), record.args())
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
    let log_file = match &invocation {
        cli::Invocation::Run(options) => match options.log_file.as_deref().map(LogFile::open).transpose() {
            Ok(f) => f,
            Err(e) => {
                eprintln!("mirror-maker: {e}");
                std::process::exit(exit::CONFIG);
            }
        },
        _ => None,
    };
    init_logging(log_file.as_ref());
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
                    // With --log.file a cron-started second copy says so in
                    // the log only: on stderr, cron would mail it every minute.
                    match (&e, &log_file) {
                        (pidfile::PidFileError::Running { .. }, Some(_)) => log::warn!("{e}"),
                        _ => eprintln!("mirror-maker: {e}"),
                    }
                    std::process::exit(match e {
                        pidfile::PidFileError::Running { .. } => exit::ALREADY_RUNNING,
                        pidfile::PidFileError::Io { .. } => exit::CONFIG,
                    });
                }
            };
            match mm1::plan(&options).map_err(engine::StartError::from).and_then(|plan| engine::run(plan, log_file)) {
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
