//! mirror-maker: a native drop-in replacement for Kafka's MirrorMaker 1
//! and MirrorMaker 2's dedicated mode.
//!
//! `main` wires the parts together and maps errors to exit codes: `cli`
//! parses and validates, `engine` builds and runs the mirror; the modules
//! are listed in `lib.rs`.

use std::io::Write;
use std::sync::Arc;

use mirror_maker::front::check;
use mirror_maker::front::mm1::{self, cli};
use mirror_maker::front::mm2;
use mirror_maker::front::properties::ConfigError;
use mirror_maker::kafka::secrets::scrubbed;
use mirror_maker::ops::logfile::LogFile;
use mirror_maker::ops::pidfile;
use mirror_maker::ops::shutdown::ExitStatus;
use mirror_maker::{demo, engine};

/// The documented exit codes (README, "Exit codes"): the one place that
/// turns how the process ended into a number.
fn code(status: ExitStatus) -> i32 {
    match status {
        ExitStatus::Ok => 0,
        ExitStatus::Config => 1,
        ExitStatus::DrainTimeout => 3,
        ExitStatus::AlreadyRunning => 4,
        ExitStatus::Forced => 130,
        ExitStatus::Failure => 255,
    }
}

/// Ends the process with `status`.
fn exit(status: ExitStatus) -> ! {
    mirror_maker::kafka::kerberos::forget_private_ccache();
    std::process::exit(code(status))
}

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
            // Values fetched by config providers never reach a log line.
            let text = scrubbed(&record.args().to_string());
            writeln!(buf, "[{}] {} [{}] {text}", buf.timestamp_millis(), record.level(), thread.name().unwrap_or("main"))
        })
        .init();
}

fn main() {
    // Before any thread exists: it sets the environment (see kafka::kerberos).
    mirror_maker::kafka::kerberos::private_ccache();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == mirror_maker::front::failover::COMMAND) {
        init_logging(None);
        exit(mirror_maker::front::failover::run(&args[1..]));
    }
    let invocation = match cli::parse(&args) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("mirror-maker: {e}");
            exit(ExitStatus::Config);
        }
    };
    let log_path = match &invocation {
        cli::Invocation::Run(options) => options.ops.log_file.as_deref(),
        cli::Invocation::Mm2(options) if !options.check => options.ops.log_file.as_deref(),
        _ => None,
    };
    let log_file = match log_path.map(LogFile::open).transpose() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mirror-maker: {e}");
            exit(ExitStatus::Config);
        }
    };
    init_logging(log_file.as_ref());
    let status = match invocation {
        cli::Invocation::Print(text) => {
            print!("{text}");
            ExitStatus::Ok
        }
        cli::Invocation::Demo => demo::run(),
        cli::Invocation::Connect(path) => mirror_maker::worker::run(&path, exit).unwrap_or_else(|e| not_started(&e)),
        cli::Invocation::ConnectStandalone(paths) => mirror_maker::worker::standalone::run(&paths, exit).unwrap_or_else(|e| not_started(&e)),
        cli::Invocation::Check(options) => check::run(&options),
        cli::Invocation::Mm2(options) if options.check => mm2::check::run(&options.config, &options.clusters),
        cli::Invocation::Run(options) => {
            let _pid_lock = lock_pid_file(options.ops.pid_file.as_deref(), &options.notices, log_file.is_some());
            start(mm1::plan(&options), log_file)
        }
        cli::Invocation::Mm2(options) => {
            let _pid_lock = lock_pid_file(options.ops.pid_file.as_deref(), &options.notices, log_file.is_some());
            start(
                mm2::load(&options.config, &options.clusters)
                    .and_then(|cfg| mm2::plan::plan_with(&cfg, mm1::ops(&options.ops, true), options.write_connect_offsets)),
                log_file,
            )
        }
    };
    exit(status);
}

/// Logs the command line's notices, then takes the pid file (held until
/// exit; the kernel releases it however the process ends), or exits.
fn lock_pid_file(path: Option<&std::path::Path>, notices: &[String], logging_to_file: bool) -> Option<pidfile::PidFile> {
    for notice in notices {
        log::warn!("{notice}");
    }
    match path.map(pidfile::acquire).transpose() {
        Ok(lock) => lock,
        Err(e) => {
            // With --log.file a cron-started second copy says so in the
            // log only: on stderr, cron would mail it every minute.
            match (&e, logging_to_file) {
                (pidfile::PidFileError::Running { .. }, true) => log::warn!("{e}"),
                _ => eprintln!("mirror-maker: {e}"),
            }
            exit(match e {
                pidfile::PidFileError::Running { .. } => ExitStatus::AlreadyRunning,
                pidfile::PidFileError::Io { .. } => ExitStatus::Config,
            });
        }
    }
}

/// Runs a plan to the end; anything wrong before the first record, in the
/// configuration (the front's [`ConfigError`]) or at start-up (the
/// engine's [`engine::StartError`]), is exit 1.
fn start(plan: Result<mirror_maker::plan::Plan, ConfigError>, log_file: Option<Arc<LogFile>>) -> ExitStatus {
    match plan {
        Err(e) => not_started(&e),
        Ok(plan) => engine::run(plan, log_file, exit).unwrap_or_else(|e| not_started(&e)),
    }
}

/// Says why the mirror did not start, in the log and on stderr.
fn not_started(why: &dyn std::fmt::Display) -> ExitStatus {
    let why = scrubbed(&why.to_string());
    log::error!("Exception when starting mirror maker: {why}");
    eprintln!("mirror-maker: {why}");
    ExitStatus::Config
}
