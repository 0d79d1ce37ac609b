//! `--log.file`: the log in a file that logrotate can move away.
//!
//! logrotate renames the file and sends SIGHUP; until the process reopens
//! the path it keeps writing into the renamed file. `reopen` swaps the
//! handle under the same lock the writer takes, so no line is split across
//! the two files and none is lost.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct LogFile {
    path: PathBuf,
    file: Mutex<File>,
}

/// Why the log file cannot be used; names the option and the path.
#[derive(Debug)]
pub struct LogFileError {
    pub path: PathBuf,
    pub source: io::Error,
}

impl std::fmt::Display for LogFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--log.file {}: cannot open for appending: {}; create its directory or give a writable path",
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for LogFileError {}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl LogFile {
    pub fn open(path: &Path) -> Result<Arc<LogFile>, LogFileError> {
        let file = open_append(path).map_err(|source| LogFileError { path: path.to_path_buf(), source })?;
        Ok(Arc::new(LogFile { path: path.to_path_buf(), file: Mutex::new(file) }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the path afresh (a new file if logrotate moved the old one).
    /// On failure the old handle stays, so logging goes on somewhere.
    pub fn reopen(&self) -> Result<(), LogFileError> {
        let fresh = open_append(&self.path).map_err(|source| LogFileError { path: self.path.clone(), source })?;
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = file.flush();
        *file = fresh;
        Ok(())
    }

    /// A writer for the logger; every handle writes through the same lock.
    pub fn writer(self: &Arc<Self>) -> LogWriter {
        LogWriter(self.clone())
    }
}

pub struct LogWriter(Arc<LogFile>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // One write_all per call: env_logger hands over a whole formatted
        // record, which must land in one file.
        self.0.file.lock().unwrap_or_else(|e| e.into_inner()).write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.file.lock().unwrap_or_else(|e| e.into_inner()).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopen_after_rename_writes_to_a_new_file() {
        let dir = std::env::temp_dir().join(format!("mm-logfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mirror.log");
        let rotated = dir.join("mirror.log.1");
        let log = LogFile::open(&path).unwrap();
        let mut w = log.writer();
        w.write_all(b"before\n").unwrap();
        std::fs::rename(&path, &rotated).unwrap();
        w.write_all(b"still old\n").unwrap();
        log.reopen().unwrap();
        w.write_all(b"after\n").unwrap();
        assert_eq!(std::fs::read_to_string(&rotated).unwrap(), "before\nstill old\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "after\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_path_names_the_option() {
        let e = LogFile::open(Path::new("/nonexistent-dir/mirror.log")).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("--log.file /nonexistent-dir/mirror.log: cannot open"), "{text}");
    }
}
