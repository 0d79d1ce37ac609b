//! Opening a file an operator names on the command line (`--pid.file`,
//! `--log.file`) as a daemon must: never through a symlink at the last
//! component (a link planted in a shared directory would point the write at
//! a file of the link owner's choosing), and a new file with an exact mode,
//! whatever the umask of cron, systemd or the shell that started us. Both
//! files need the same race-safe dance, so it lives here once.

use std::fs::{File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `path` with exactly `mode`, or opens the file there without
/// following a symlink, both with `access` (read/write/append); `flags` are
/// added to the open of an existing file. Another process may create or
/// remove the path between the two opens (two copies started together
/// race to create a pid file): a few rounds settle that, more would mean
/// something keeps toggling it.
pub fn create_or_open(path: &Path, access: &OpenOptions, mode: u32, flags: i32) -> io::Result<File> {
    let mut last = None;
    for _ in 0..3 {
        match access.clone().create_new(true).mode(mode).open(path) {
            Ok(file) => {
                // The umask can only have narrowed the mode asked for;
                // fchmod makes it exact.
                file.set_permissions(Permissions::from_mode(mode))?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        match access.clone().custom_flags(libc::O_NOFOLLOW | flags).open(path) {
            Ok(file) => return Ok(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("the path kept appearing and disappearing")))
}

/// Whether `error` is the refusal of a symlink at `path` (ELOOP from
/// O_NOFOLLOW), so the message can say so instead of "too many levels of
/// symbolic links".
pub fn refused_symlink(path: &Path, error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::ELOOP) && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}
