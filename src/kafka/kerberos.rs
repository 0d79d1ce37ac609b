//! The process's Kerberos credential cache, and the one principal it holds.
//!
//! librdkafka's GSSAPI goes through Cyrus SASL and the Kerberos library,
//! which read tickets from the process's *default* credential cache
//! (`KRB5CCNAME`, else the system default, e.g. `/tmp/krb5cc_<uid>`); the
//! `kinit` librdkafka runs for a keytab writes that same cache. Two mirrors
//! of one user, or a mirror and the user's own `kinit`, would overwrite
//! each other's tickets. So the process gets a cache of its own,
//! [`private_ccache`], set before any thread starts (the environment is
//! read by librdkafka's threads and by the `kinit` it forks), unless the
//! user chose one with `KRB5CCNAME`. One cache holds one principal's
//! tickets, so [`claim_principal`] refuses a second principal in the same
//! process.

use std::path::PathBuf;
use std::sync::Mutex;

/// Where [`private_ccache`] put the cache, or None when the user set
/// `KRB5CCNAME` (or it was not called).
static PRIVATE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Points `KRB5CCNAME` at `FILE:<temp dir>/mirror-maker-<pid>.ccache`
/// unless the user set it. Call first thing in `main`, before any thread
/// exists: setting the environment races with threads reading it.
pub fn private_ccache() {
    if std::env::var_os("KRB5CCNAME").is_some() {
        return;
    }
    let path = std::env::temp_dir().join(format!("mirror-maker-{}.ccache", std::process::id()));
    // A cache left by an earlier process with our pid holds someone else's tickets.
    let _ = std::fs::remove_file(&path);
    // SAFETY: called from main before any other thread is started (no
    // librdkafka client, logger or signal thread exists yet), so nothing
    // reads the environment concurrently. (std::env::set_var is a safe fn
    // in edition 2021; the block keeps the call valid under edition 2024.)
    #[allow(unused_unsafe)]
    unsafe {
        std::env::set_var("KRB5CCNAME", format!("FILE:{}", path.display()));
    }
    *PRIVATE.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
}

/// Whether the cache is [`private_ccache`]'s (so a ticket the user got
/// with `kinit` is not in it).
pub fn ccache_is_private() -> bool {
    PRIVATE.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Removes the private cache's file (its tickets are of no use to anyone
/// after this process): called as the process exits.
pub fn forget_private_ccache() {
    if let Some(path) = PRIVATE.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(not(test))]
static PRINCIPAL: Mutex<Option<(String, String)>> = Mutex::new(None);

#[cfg(test)]
thread_local! {
    // Unit tests run in parallel threads of one process: each has its own.
    static PRINCIPAL: std::cell::RefCell<Option<(String, String)>> = const { std::cell::RefCell::new(None) };
}

/// A different principal than [`claim_principal`]'s was configured first,
/// at `at` (file:line).
#[derive(Debug, PartialEq)]
pub struct OtherPrincipal {
    pub at: String,
}

/// Records that the process logs in as `principal`, configured at `at`
/// (file:line). Err names where a different principal was configured
/// first: one credential cache cannot hold both.
pub fn claim_principal(principal: &str, at: &str) -> Result<(), OtherPrincipal> {
    let claim = |slot: &mut Option<(String, String)>| match slot {
        Some((p, first)) if p != principal => Err(OtherPrincipal { at: first.clone() }),
        Some(_) => Ok(()),
        None => {
            *slot = Some((principal.to_string(), at.to_string()));
            Ok(())
        }
    };
    #[cfg(not(test))]
    return claim(&mut PRINCIPAL.lock().unwrap_or_else(|e| e.into_inner()));
    #[cfg(test)]
    return PRINCIPAL.with(|slot| claim(&mut slot.borrow_mut()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_principal_per_process() {
        assert_eq!(claim_principal("mirror@R", "a.properties:3"), Ok(()));
        assert_eq!(claim_principal("mirror@R", "b.properties:4"), Ok(()), "the same principal again is fine");
        assert_eq!(claim_principal("other@R", "c.properties:5"), Err(OtherPrincipal { at: "a.properties:3".to_string() }));
    }
}
