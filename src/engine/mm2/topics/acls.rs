//! MirrorMaker 2's topic ACL sync: which source ACLs are copied and how
//! ([`remote_acl`]), and their creation on the target, never a deletion.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use log::{debug, info, warn};

use super::link::{Link, CHUNK};
use crate::kafka::acls::{self, AclBinding, AclError, Operation, Pattern, Permission};

/// A source topic ACL as MirrorMaker 2 copies it to `remote` (the remote
/// topic's name), or None when it is not copied: only LITERAL ones, never
/// `ALLOW WRITE` (only the mirror writes remote topics); `ALLOW ALL`
/// becomes `ALLOW READ`; DENY entries, principal and host unchanged
/// (`MirrorSourceConnector.shouldReplicateAcl`, `targetAclBinding`).
pub fn remote_acl(b: &AclBinding, remote: &str) -> Option<AclBinding> {
    if b.pattern != Pattern::Literal || (b.permission == Permission::Allow && b.operation == Operation::Write) {
        return None;
    }
    let operation = if b.permission == Permission::Allow && b.operation == Operation::All { Operation::Read } else { b.operation };
    Some(AclBinding { name: remote.to_string(), pattern: Pattern::Literal, operation, ..b.clone() })
}

impl Link {
    /// MirrorMaker 2's `sync.topic.acls`: the source's literal ACLs on the
    /// topics this flow mirrors, created on their remote topics as
    /// [`remote_acl`] maps them. Nothing is ever deleted on the target;
    /// bindings it has already are not sent again. A source without an
    /// authorizer (or without topic ACLs) is said once per run, as Java
    /// says the former (KAFKA-14781). `mirrored`: the source topics
    /// settled so far, locked only while the bindings wanted are picked;
    /// `said_none`: whether the first of those was said.
    pub(super) fn sync_acls(&self, mirrored: &Mutex<HashMap<String, usize>>, said_none: &AtomicBool) {
        // librdkafka (2.12) drops DescribeAcls' top-level error, so a source
        // without an authorizer answers as one without topic ACLs: both
        // are said once per run.
        let source = match acls::describe_topic_acls(self.source.inner()) {
            Ok(b) if !b.is_empty() => b,
            Ok(_) | Err(AclError::SecurityDisabled) => {
                if !said_none.swap(true, Ordering::Relaxed) {
                    info!("topic ACL sync: the source cluster lists no topic ACLs (or has no authorizer); nothing to sync");
                }
                return;
            }
            Err(e) => {
                warn!("topic ACLs not synced this time: cannot list the source's: {e}");
                return;
            }
        };
        let wanted: Vec<AclBinding> = {
            let seen = mirrored.lock().unwrap();
            let mut w: Vec<AclBinding> =
                source.iter().filter(|b| seen.contains_key(&b.name)).filter_map(|b| remote_acl(b, &self.handler.target_topic(&b.name))).collect();
            w.sort();
            w.dedup();
            w
        };
        if wanted.is_empty() {
            return;
        }
        // What the target has already is left out, so a quiet run writes
        // nothing; a target that cannot be asked gets them all (creating an
        // existing binding is harmless).
        let missing: Vec<AclBinding> = match acls::describe_topic_acls(self.target.inner()) {
            Ok(have) => wanted.into_iter().filter(|b| !have.contains(b)).collect(),
            Err(_) => wanted,
        };
        if missing.is_empty() {
            return;
        }
        // Bounded requests: thousands of topics can carry tens of thousands of bindings.
        for part in missing.chunks(CHUNK) {
            debug!("CreateAcls: {} bindings in one request", part.len());
            match acls::create_acls(self.target.inner(), part) {
                Ok(()) => {
                    for b in part {
                        info!("topic ACL synced to the target: {b}");
                    }
                }
                Err(e) => warn!("cannot sync topic ACLs to the target (tried again in the next sync): {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(name: &str, pattern: Pattern, principal: &str, permission: Permission, operation: Operation) -> AclBinding {
        AclBinding { name: name.into(), pattern, principal: principal.into(), host: "*".into(), operation, permission }
    }

    #[test]
    fn topic_acls_map_as_mm2_maps_them() {
        use Operation::*;
        use Permission::*;
        let lit = |p: &str, perm, op| acl("orders", Pattern::Literal, p, perm, op);
        let remote = |p: &str, perm, op| Some(acl("A.orders", Pattern::Literal, p, perm, op));
        assert_eq!(remote_acl(&lit("User:alice", Allow, Read), "A.orders"), remote("User:alice", Allow, Read));
        assert_eq!(remote_acl(&lit("User:bob", Allow, All), "A.orders"), remote("User:bob", Allow, Read), "ALLOW ALL is downgraded to READ");
        assert_eq!(remote_acl(&lit("User:carol", Allow, Write), "A.orders"), None, "only the mirror writes remote topics");
        assert_eq!(remote_acl(&lit("User:dave", Deny, Read), "A.orders"), remote("User:dave", Deny, Read));
        assert_eq!(remote_acl(&lit("User:erin", Deny, Write), "A.orders"), remote("User:erin", Deny, Write), "DENY entries are copied as they are");
        assert_eq!(remote_acl(&lit("User:fay", Deny, All), "A.orders"), remote("User:fay", Deny, All));
        assert_eq!(remote_acl(&lit("User:gus", Allow, Describe), "A.orders"), remote("User:gus", Allow, Describe));
        assert_eq!(remote_acl(&acl("ord", Pattern::Prefixed, "User:h", Allow, Read), "A.ord"), None, "prefixed bindings are not copied");
        let mut hosted = lit("User:ian", Allow, Read);
        hosted.host = "10.0.0.1".into();
        assert_eq!(remote_acl(&hosted, "A.orders").map(|b| b.host), Some("10.0.0.1".to_string()));
    }
}
