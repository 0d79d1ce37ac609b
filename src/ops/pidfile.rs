//! `--pid.file`: one running copy per file.
//!
//! Jobs started from cron (`* * * * * mirror-maker …`) must not pile up.
//! The file holds the process id and an exclusive lock for the life of the
//! process; the kernel drops the lock when the process ends, however it ends,
//! so a stale file from a `kill -9` never blocks the next start.
//!
//! The path is opened without following a symlink at its last component:
//! the file is truncated and rewritten, so a link planted in a shared
//! directory such as /tmp would have the mirror overwrite a file of the link
//! owner's choosing. A file the mirror creates gets mode 0644 whatever the
//! umask: readable by the tools that look up the pid, writable by no one
//! else, since a pid another user wrote would be the one `kill $(cat …)` hits.
//! A file that exists keeps its mode (an administrator may have made it).

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::ops::opsfile;

/// Mode of a pid file the mirror creates.
const NEW_FILE_MODE: u32 = 0o644;

/// Longer than any pid and its newline; what a holder's file says beyond
/// this is not a pid and is not worth reading or repeating.
const PID_READ_LIMIT: u64 = 32;

#[derive(Debug)]
pub enum PidFileError {
    /// Another live process holds the lock.
    Running {
        path: PathBuf,
        pid: String,
    },
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for PidFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PidFileError::Running { path, pid } => {
                write!(f, "another mirror-maker (pid {pid}) is already running with --pid.file {}; this copy exits without doing anything", path.display())
            }
            PidFileError::Io { path, error } if opsfile::refused_symlink(path, error) => write!(
                f,
                "--pid.file {}: is a symbolic link, which mirror-maker does not follow (the file is overwritten, so a link could \
                 point it at any file); give the real file's path, or remove the link",
                path.display()
            ),
            PidFileError::Io { path, error } => write!(f, "--pid.file {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for PidFileError {}

/// Held for the life of the process.
#[derive(Debug)]
pub struct PidFile {
    _file: File,
}

/// Creates the file with `NEW_FILE_MODE`, or opens the one there without
/// following a symlink (see `opsfile`).
fn open(path: &Path) -> io::Result<File> {
    let file = opsfile::create_or_open(path, OpenOptions::new().read(true).write(true), NEW_FILE_MODE, 0)?;
    // A FIFO or device would take the truncate and the pid in odd ways or
    // not at all.
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("is not a regular file; give the path of a file (it is created if missing)"));
    }
    Ok(file)
}

pub fn acquire(path: &Path) -> Result<PidFile, PidFileError> {
    let io = |error| PidFileError::Io { path: path.to_path_buf(), error };
    let mut file = open(path).map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            // The holder truncates the file and then writes its pid: two
            // copies started together can see the file empty for a moment.
            let mut pid = Vec::new();
            for _ in 0..100 {
                pid.clear();
                let _ = file.rewind();
                let _ = (&mut file).take(PID_READ_LIMIT).read_to_end(&mut pid);
                if pid.contains(&b'\n') {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let pid = String::from_utf8_lossy(&pid);
            let pid = pid.trim();
            // Anything but digits is some other program's file; not echoed.
            let pid = if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) { pid.to_string() } else { "unknown".to_string() };
            return Err(PidFileError::Running { path: path.to_path_buf(), pid });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    writeln!(file, "{}", std::process::id()).map_err(io)?;
    file.flush().map_err(io)?;
    Ok(PidFile { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_until_the_first_goes() {
        let path = std::env::temp_dir().join(format!("mm-pid-test-{}", std::process::id()));
        let first = acquire(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), std::process::id().to_string());
        match acquire(&path) {
            Err(PidFileError::Running { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("expected Running, got {other:?}"),
        }
        drop(first);
        assert!(acquire(&path).is_ok());
        let _ = std::fs::remove_file(&path);
    }

    fn scratch(name: &str) -> PathBuf {
        crate::testkit::scratch_dir(&format!("mm-pid-{name}"))
    }

    #[test]
    fn a_symlink_at_the_path_is_refused_and_its_target_left_alone() {
        let dir = scratch("symlink");
        let precious = dir.join("precious");
        std::fs::write(&precious, "keep me\n").unwrap();
        let path = dir.join("mm.pid");
        std::os::unix::fs::symlink(&precious, &path).unwrap();
        let e = acquire(&path).expect_err("a pid file path that is a symlink must be refused");
        let text = e.to_string();
        assert!(matches!(e, PidFileError::Io { .. }), "{e:?}");
        assert!(text.starts_with(&format!("--pid.file {}: ", path.display())) && text.contains("symbolic link"), "{text}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");

        // A dangling link must not create its target either.
        let absent = dir.join("absent");
        let dangling = dir.join("dangling.pid");
        std::os::unix::fs::symlink(&absent, &dangling).unwrap();
        assert!(acquire(&dangling).is_err());
        assert!(!absent.exists(), "following the dangling link created {}", absent.display());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_a_foreign_holder_wrote_is_read_only_up_to_a_pid_length() {
        let dir = scratch("foreign");
        let path = dir.join("mm.pid");
        // Some other program's file, locked and far longer than any pid.
        std::fs::write(&path, "x".repeat(1 << 20)).unwrap();
        let holder = File::open(&path).unwrap();
        holder.lock().unwrap();
        let e = acquire(&path).expect_err("the lock is held");
        let text = e.to_string();
        assert!(matches!(e, PidFileError::Running { .. }), "{e:?}");
        assert!(text.len() < 400, "the message carries {} bytes of the holder's file", text.len());
        assert!(text.contains(&path.display().to_string()), "{text}");
        drop(holder);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
