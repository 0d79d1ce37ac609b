//! The one system call the crate makes itself, kept here so that every
//! `unsafe` block lives under this module.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Clears O_NONBLOCK on an open file.
pub fn set_blocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor this File owns and keeps open.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
