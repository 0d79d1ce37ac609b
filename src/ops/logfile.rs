//! `--log.file`: the log in a file that logrotate can move away.
//!
//! logrotate renames the file and sends SIGHUP; until the process reopens
//! the path it keeps writing into the renamed file. `reopen` swaps the
//! handle under the same lock the writer takes, so no line is split across
//! the two files and none is lost.
//!
//! The path is opened without following a symlink at its last component: a
//! link planted in a shared log directory would otherwise have the mirror
//! append to (or create) a file of the link owner's choosing, with the
//! mirror's rights. A file the mirror creates gets mode 0640 whatever the
//! umask, so the log is not world-readable by accident; a file that exists,
//! such as one logrotate's `create` made, keeps the mode it has.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::ops::opsfile;

/// Mode of a log file the mirror creates: the owner writes, its group
/// (e.g. `adm`) reads, others nothing.
const NEW_FILE_MODE: u32 = 0o640;

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
        let path = self.path.display();
        match self.source.raw_os_error() {
            _ if opsfile::refused_symlink(&self.path, &self.source) => write!(
                f,
                "--log.file {path}: is a symbolic link, which mirror-maker does not follow (a link could point the log at any file); \
                 give the real file's path, or remove the link"
            ),
            Some(libc::ENXIO) => write!(f, "--log.file {path}: is a named pipe that no process reads; start its reader first, or give a regular file"),
            _ => write!(f, "--log.file {path}: cannot open for appending: {}; create its directory or give a writable path", self.source),
        }
    }
}

impl std::error::Error for LogFileError {}

/// Creates the file with `NEW_FILE_MODE`, or opens the one there without
/// following a symlink (see `opsfile`). O_NONBLOCK on the open makes a
/// named pipe without a reader fail at once (ENXIO) instead of blocking the
/// caller, which at a SIGHUP is the signal thread; it is cleared again
/// before any write.
fn open_append(path: &Path) -> io::Result<File> {
    let file = opsfile::create_or_open(path, OpenOptions::new().append(true), NEW_FILE_MODE, libc::O_NONBLOCK)?;
    blocking(&file)?;
    Ok(file)
}

/// Clears O_NONBLOCK: a pipe whose reader lags must slow the writer, not
/// drop its lines with EAGAIN.
fn blocking(file: &File) -> io::Result<()> {
    crate::kafka::unix::set_blocking(file)
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
    use std::fs::Permissions;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

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

    fn scratch(name: &str) -> PathBuf {
        crate::testkit::scratch_dir(&format!("mm-logfile-{name}"))
    }

    #[test]
    fn a_symlink_at_the_path_is_refused_and_its_target_left_alone() {
        let dir = scratch("symlink");
        let precious = dir.join("precious");
        std::fs::write(&precious, "keep me\n").unwrap();
        let path = dir.join("mirror.log");
        std::os::unix::fs::symlink(&precious, &path).unwrap();
        let e = LogFile::open(&path).expect_err("a log file path that is a symlink must be refused");
        let text = e.to_string();
        assert!(text.starts_with(&format!("--log.file {}: ", path.display())) && text.contains("symbolic link"), "{text}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");

        let absent = dir.join("absent");
        let dangling = dir.join("dangling.log");
        std::os::unix::fs::symlink(&absent, &dangling).unwrap();
        assert!(LogFile::open(&dangling).is_err());
        assert!(!absent.exists(), "following the dangling link created {}", absent.display());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reopen_refuses_a_symlink_put_in_place_of_the_rotated_file_and_logs_on() {
        let dir = scratch("reopen-symlink");
        let path = dir.join("mirror.log");
        let precious = dir.join("precious");
        std::fs::write(&precious, "keep me\n").unwrap();
        let log = LogFile::open(&path).unwrap();
        let mut w = log.writer();
        w.write_all(b"before\n").unwrap();
        std::fs::rename(&path, dir.join("mirror.log.1")).unwrap();
        std::os::unix::fs::symlink(&precious, &path).unwrap();
        let e = log.reopen().expect_err("reopen onto a symlink must be refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        w.write_all(b"after\n").unwrap();
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
        assert_eq!(std::fs::read_to_string(dir.join("mirror.log.1")).unwrap(), "before\nafter\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_named_pipe_without_a_reader_is_an_error_not_a_hang() {
        let dir = scratch("fifo");
        let path = dir.join("mirror.log");
        let made = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo (coreutils)");
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || tx.send(LogFile::open(&p).map(|_| ())));
        // Generous: the open either fails at once or blocks until a reader comes, forever.
        let result = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("opening a named pipe nobody reads blocked for 30 s");
        let e = result.expect_err("a named pipe without a reader cannot take the log");
        assert!(e.to_string().starts_with(&format!("--log.file {}: ", path.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_named_pipe_with_a_reader_takes_the_log() {
        let dir = scratch("fifo-read");
        let path = dir.join("mirror.log");
        assert!(std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo (coreutils)").success());
        // Non-blocking so opening the reader does not wait for a writer.
        let mut reader = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&path).unwrap();
        let log = LogFile::open(&path).unwrap();
        log.writer().write_all(b"a line\n").unwrap();
        let mut got = String::new();
        io::Read::read_to_string(&mut io::Read::take(&mut reader, 7), &mut got).unwrap();
        assert_eq!(got, "a line\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_log_file_gets_0640_and_an_existing_one_keeps_its_mode() {
        let dir = scratch("modes");
        let path = dir.join("mirror.log");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        drop(LogFile::open(&path).unwrap());
        assert_eq!(format!("{:o}", mode(&path)), "640");
        std::fs::set_permissions(&path, Permissions::from_mode(0o604)).unwrap();
        let log = LogFile::open(&path).unwrap();
        log.reopen().unwrap();
        assert_eq!(format!("{:o}", mode(&path)), "604");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_path_names_the_option() {
        let e = LogFile::open(Path::new("/nonexistent-dir/mirror.log")).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("--log.file /nonexistent-dir/mirror.log: cannot open"), "{text}");
    }
}
