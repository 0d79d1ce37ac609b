//! `--pid.file`: one running copy per file.
//!
//! Jobs started from cron (`* * * * * mirror-maker …`) must not pile up.
//! The file holds the process id and an exclusive lock for the life of the
//! process; the kernel drops the lock when the process ends, however it ends,
//! so a stale file from a `kill -9` never blocks the next start.

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum PidFileError {
    /// Another live process holds the lock.
    Running { path: PathBuf, pid: String },
    Io { path: PathBuf, error: std::io::Error },
}

impl fmt::Display for PidFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PidFileError::Running { path, pid } => write!(
                f,
                "another mirror-maker (pid {pid}) is already running with --pid.file {}; this copy exits without doing anything",
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

pub fn acquire(path: &Path) -> Result<PidFile, PidFileError> {
    let io = |error| PidFileError::Io { path: path.to_path_buf(), error };
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            // The holder truncates the file and then writes its pid: two
            // copies started together can see the file empty for a moment.
            let mut pid = String::new();
            for _ in 0..100 {
                pid.clear();
                let _ = file.rewind();
                let _ = file.read_to_string(&mut pid);
                if pid.ends_with('\n') {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let pid = pid.trim();
            let pid = if pid.is_empty() { "unknown".to_string() } else { pid.to_string() };
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
}
