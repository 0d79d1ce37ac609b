//! One stop signal for every thread, and the process's exit status.
//!
//! As in mini-redis: the first SIGINT/SIGTERM (or a fatal error) sets one
//! flag that every stream and worker checks; streams stop polling and drop
//! their senders, workers drain their channels, and the last one out flushes
//! and commits. The drain deadline bounds that wait when the target is
//! unreachable. A second signal exits at once without committing anything
//! that was not delivered.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::ops::logfile::LogFile;

/// How the process ends, as the README's exit-status table names it.
/// `main.rs` alone turns it into a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Clean shutdown: everything consumed was delivered and committed.
    Ok,
    /// Usage or configuration error; nothing was consumed.
    Config,
    /// Stopped after the drain timeout with records still undelivered; their
    /// offsets were not committed, so a restart sends them again.
    DrainTimeout,
    /// Another copy holds the `--pid.file` lock; this one did nothing.
    AlreadyRunning,
    /// A second signal during shutdown: exited at once.
    Forced,
    /// A runtime failure, such as a record the target rejected for good.
    Failure,
}

impl ExitStatus {
    const ALL: [ExitStatus; 6] =
        [ExitStatus::Ok, ExitStatus::Config, ExitStatus::DrainTimeout, ExitStatus::AlreadyRunning, ExitStatus::Forced, ExitStatus::Failure];

    /// Its place in [`Self::ALL`], to keep it in an atomic (not an exit code).
    fn index(self) -> u8 {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0) as u8
    }
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ExitStatus::Ok => "clean shutdown",
            ExitStatus::Config => "configuration error",
            ExitStatus::DrainTimeout => "drain timeout",
            ExitStatus::AlreadyRunning => "already running",
            ExitStatus::Forced => "forced exit",
            ExitStatus::Failure => "runtime failure",
        })
    }
}

/// What the shutdown may take past the drain deadline: the final commit
/// and leaving the source's group. Both need the source's group
/// coordinator, and librdkafka waits for an unreachable one for as long as
/// the session timeout (45 s by default) or forever, so the process stops
/// waiting for them here and exits.
pub const GRACE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct Shutdown {
    stop: AtomicBool,
    status: AtomicU8,
    drain_timeout: Duration,
    deadline: OnceLock<Instant>,
    reason: Mutex<Option<String>>,
}

impl Shutdown {
    pub fn new(drain_timeout: Duration) -> Arc<Self> {
        Arc::new(Shutdown {
            stop: AtomicBool::new(false),
            status: AtomicU8::new(ExitStatus::Ok.index()),
            drain_timeout,
            deadline: OnceLock::new(),
            reason: Mutex::new(None),
        })
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Asks every thread to stop and drain; starts the drain clock.
    pub fn request_stop(&self) {
        self.deadline.get_or_init(|| Instant::now() + self.drain_timeout);
        self.stop.store(true, Ordering::Release);
    }

    /// Stops the mirror because of a failure; the first failure's status wins.
    pub fn fail(&self, status: ExitStatus, reason: String) {
        let _ = self.status.compare_exchange(ExitStatus::Ok.index(), status.index(), Ordering::AcqRel, Ordering::Acquire);
        let mut r = self.reason.lock().unwrap();
        if r.is_none() {
            *r = Some(reason);
        }
        drop(r);
        self.request_stop();
    }

    /// Records that the drain deadline passed with records undelivered,
    /// unless a failure already set the status.
    pub fn drain_timed_out(&self) {
        let _ = self.status.compare_exchange(ExitStatus::Ok.index(), ExitStatus::DrainTimeout.index(), Ordering::AcqRel, Ordering::Acquire);
    }

    pub fn status(&self) -> ExitStatus {
        ExitStatus::ALL[self.status.load(Ordering::Acquire) as usize]
    }

    pub fn reason(&self) -> Option<String> {
        self.reason.lock().unwrap().clone()
    }

    /// When draining must end; far away while running normally.
    pub fn deadline(&self) -> Instant {
        self.deadline.get().copied().unwrap_or_else(|| Instant::now() + Duration::from_secs(365 * 24 * 3600))
    }

    /// The earlier of `now + wait` and the shutdown deadline.
    pub fn bounded(&self, wait: Duration) -> Instant {
        (Instant::now() + wait).min(self.deadline())
    }

    /// [`GRACE`] past the deadline: when the process stops waiting for its
    /// threads. Far away while running normally.
    pub fn grace_deadline(&self) -> Instant {
        self.deadline() + GRACE
    }

    pub fn deadline_passed(&self) -> bool {
        self.deadline.get().is_some_and(|d| Instant::now() >= *d)
    }

    pub fn drain_timeout(&self) -> Duration {
        self.drain_timeout
    }

    /// Joins the threads as they finish, but once the shutdown's grace
    /// deadline has passed stops waiting for those left and names them: the
    /// process then exits with them still running, rather than wait for a
    /// cluster that does not answer. Returns whether one panicked and whether
    /// all finished.
    pub fn join_bounded(&self, pending: Vec<std::thread::JoinHandle<()>>, what: &str) -> (bool, bool) {
        join_until(
            pending,
            || self.stopping() && Instant::now() >= self.grace_deadline(),
            |names| log::warn!("{what}: {names} {GRACE:?} after the drain timeout; exiting without waiting for them"),
        )
    }
}

/// Joins the threads as they finish until `give_up` says so; then
/// `abandon` is told the names of those left, which run on. Returns
/// whether one panicked and whether all finished. The one join loop of the
/// process: a stop's bounded wait and a lease term's end both use it.
pub fn join_until(mut pending: Vec<std::thread::JoinHandle<()>>, give_up: impl Fn() -> bool, abandon: impl FnOnce(&str)) -> (bool, bool) {
    let mut panicked = false;
    loop {
        let (done, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|h| h.is_finished());
        for h in done {
            panicked |= h.join().is_err();
        }
        pending = rest;
        if pending.is_empty() {
            return (panicked, true);
        }
        if give_up() {
            let names: Vec<&str> = pending.iter().map(|h| h.thread().name().unwrap_or("unnamed")).collect();
            abandon(&names.join(", "));
            return (panicked, false);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts the signal thread. SIGINT and SIGTERM: the first drains, the
/// second exits at once. SIGHUP reopens `--log.file` when there is one
/// (logrotate's postrotate); without a log file it means the terminal went
/// away, and the mirror shuts down cleanly as for SIGTERM. `exit_now` ends
/// the process with a status (`main` knows the numbers).
pub fn install_signal_handler(shutdown: Arc<Shutdown>, log_file: Option<Arc<LogFile>>, exit_now: fn(ExitStatus) -> !) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("mirrormaker-signals".into()).spawn(move || {
        let mut seen = false;
        for signal in signals.forever() {
            if signal == SIGHUP {
                if let Some(log) = &log_file {
                    match log.reopen() {
                        Ok(()) => log::info!("SIGHUP: reopened the log file {}", log.path().display()),
                        Err(e) => log::warn!("SIGHUP: {e}; still writing to the file opened before"),
                    }
                    continue;
                }
            }
            if seen {
                eprintln!("Second signal: exiting now without committing undelivered records (they will be mirrored again on restart).");
                exit_now(ExitStatus::Forced);
            }
            seen = true;
            log::info!("Start clean shutdown.");
            shutdown.request_stop();
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_failure_wins_and_stops() {
        let s = Shutdown::new(Duration::from_secs(1));
        assert!(!s.stopping());
        s.fail(ExitStatus::Failure, "first".into());
        s.fail(ExitStatus::Config, "second".into());
        assert!(s.stopping());
        assert_eq!(s.status(), ExitStatus::Failure);
        assert_eq!(s.reason().as_deref(), Some("first"));
        s.drain_timed_out();
        assert_eq!(s.status(), ExitStatus::Failure);
    }

    #[test]
    fn deadline_starts_with_the_stop() {
        let s = Shutdown::new(Duration::from_millis(20));
        assert!(!s.deadline_passed());
        s.request_stop();
        assert!(!s.deadline_passed());
        std::thread::sleep(Duration::from_millis(30));
        assert!(s.deadline_passed());
        s.drain_timed_out();
        assert_eq!(s.status(), ExitStatus::DrainTimeout);
    }
}
