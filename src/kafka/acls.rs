//! Topic ACLs read and written through librdkafka's admin API
//! (`rd_kafka_DescribeAcls`, `rd_kafka_CreateAcls`), which rust-rdkafka
//! does not expose: what MirrorMaker 2's ACL sync needs, nothing more.
//!
//! Each call has a reply queue of its own, polled with a bound, and frees
//! everything it made before returning. The client is borrowed for the
//! call, so its handle outlives every use of it here.

use std::ffi::CString;
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::client::Client;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::ClientContext;

use super::admin::{owned, AdminRequest};

/// What an ACL lets a principal do (Kafka's `AclOperation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    Unknown,
    Any,
    All,
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    DescribeConfigs,
    AlterConfigs,
    IdempotentWrite,
}

/// ALLOW or DENY (ANY only in filters, UNKNOWN from newer brokers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permission {
    Unknown,
    Any,
    Deny,
    Allow,
}

/// How the resource name is matched: the name itself, or every name it
/// begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    Unknown,
    Literal,
    Prefixed,
}

/// One ACL on a topic resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AclBinding {
    /// The topic (or, for [`Pattern::Prefixed`], the prefix); `*` literal is every topic.
    pub name: String,
    pub pattern: Pattern,
    /// e.g. `User:alice`.
    pub principal: String,
    /// `*` for any host.
    pub host: String,
    pub operation: Operation,
    pub permission: Permission,
}

impl std::fmt::Display for AclBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?} {:?} on topic {} ({:?}) from host {}", self.principal, self.permission, self.operation, self.name, self.pattern, self.host)
    }
}

/// Which of the two requests failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclRequest {
    Describe,
    Create,
}

impl std::fmt::Display for AclRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AclRequest::Describe => "describe ACLs",
            AclRequest::Create => "create ACLs",
        })
    }
}

/// Why topic ACLs could not be listed or created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AclError {
    /// The cluster has no authorizer, so no ACLs. librdkafka 2.12 drops
    /// DescribeAcls' top-level error code, so such a cluster is listed as
    /// one with no topic ACLs instead; kept for a librdkafka that reports it.
    SecurityDisabled,
    /// librdkafka would not build the listing's filter: what it said.
    BadFilter(String),
    /// A binding's topic, principal or host (`what`) holds a NUL byte.
    NulByte { what: &'static str, value: String },
    /// librdkafka would not build a binding: what it said.
    BadBinding { binding: AclBinding, reason: String },
    /// The cluster did not answer within `waited`.
    NoAnswer { request: AclRequest, waited: Duration },
    /// The request failed as a whole.
    Failed { request: AclRequest, code: RDKafkaErrorCode, text: String },
    /// An answer of another kind than the request's.
    Unexpected(AclRequest),
    /// The cluster refused these bindings, each with why.
    Refused(Vec<(AclBinding, String)>),
}

impl std::fmt::Display for AclError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AclError::SecurityDisabled => write!(f, "the cluster has no authorizer (security disabled)"),
            AclError::BadFilter(reason) => write!(f, "{}: bad filter: {reason}", AclRequest::Describe),
            AclError::NulByte { what, value } => write!(f, "{what} {value:?} contains a NUL byte"),
            AclError::BadBinding { binding, reason } => write!(f, "ACL {binding}: {reason}"),
            AclError::NoAnswer { request, waited } => write!(f, "{request}: no answer within {waited:?}"),
            AclError::Failed { request, code, text } => write!(f, "{request}: {code}: {text}"),
            AclError::Unexpected(request) => write!(f, "{request}: unexpected answer"),
            AclError::Refused(refused) => {
                let each: Vec<String> = refused.iter().map(|(b, why)| format!("{b}: {why}")).collect();
                f.write_str(&each.join("; "))
            }
        }
    }
}

impl std::error::Error for AclError {}

const TIMEOUT: Duration = Duration::from_secs(15);

fn operation_from(op: rd::rd_kafka_AclOperation_t) -> Operation {
    use rd::rd_kafka_AclOperation_t as O;
    match op {
        O::RD_KAFKA_ACL_OPERATION_ANY => Operation::Any,
        O::RD_KAFKA_ACL_OPERATION_ALL => Operation::All,
        O::RD_KAFKA_ACL_OPERATION_READ => Operation::Read,
        O::RD_KAFKA_ACL_OPERATION_WRITE => Operation::Write,
        O::RD_KAFKA_ACL_OPERATION_CREATE => Operation::Create,
        O::RD_KAFKA_ACL_OPERATION_DELETE => Operation::Delete,
        O::RD_KAFKA_ACL_OPERATION_ALTER => Operation::Alter,
        O::RD_KAFKA_ACL_OPERATION_DESCRIBE => Operation::Describe,
        O::RD_KAFKA_ACL_OPERATION_CLUSTER_ACTION => Operation::ClusterAction,
        O::RD_KAFKA_ACL_OPERATION_DESCRIBE_CONFIGS => Operation::DescribeConfigs,
        O::RD_KAFKA_ACL_OPERATION_ALTER_CONFIGS => Operation::AlterConfigs,
        O::RD_KAFKA_ACL_OPERATION_IDEMPOTENT_WRITE => Operation::IdempotentWrite,
        _ => Operation::Unknown,
    }
}

fn operation_to(op: Operation) -> rd::rd_kafka_AclOperation_t {
    use rd::rd_kafka_AclOperation_t as O;
    match op {
        Operation::Unknown => O::RD_KAFKA_ACL_OPERATION_UNKNOWN,
        Operation::Any => O::RD_KAFKA_ACL_OPERATION_ANY,
        Operation::All => O::RD_KAFKA_ACL_OPERATION_ALL,
        Operation::Read => O::RD_KAFKA_ACL_OPERATION_READ,
        Operation::Write => O::RD_KAFKA_ACL_OPERATION_WRITE,
        Operation::Create => O::RD_KAFKA_ACL_OPERATION_CREATE,
        Operation::Delete => O::RD_KAFKA_ACL_OPERATION_DELETE,
        Operation::Alter => O::RD_KAFKA_ACL_OPERATION_ALTER,
        Operation::Describe => O::RD_KAFKA_ACL_OPERATION_DESCRIBE,
        Operation::ClusterAction => O::RD_KAFKA_ACL_OPERATION_CLUSTER_ACTION,
        Operation::DescribeConfigs => O::RD_KAFKA_ACL_OPERATION_DESCRIBE_CONFIGS,
        Operation::AlterConfigs => O::RD_KAFKA_ACL_OPERATION_ALTER_CONFIGS,
        Operation::IdempotentWrite => O::RD_KAFKA_ACL_OPERATION_IDEMPOTENT_WRITE,
    }
}

fn permission_from(p: rd::rd_kafka_AclPermissionType_t) -> Permission {
    use rd::rd_kafka_AclPermissionType_t as P;
    match p {
        P::RD_KAFKA_ACL_PERMISSION_TYPE_ANY => Permission::Any,
        P::RD_KAFKA_ACL_PERMISSION_TYPE_DENY => Permission::Deny,
        P::RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW => Permission::Allow,
        _ => Permission::Unknown,
    }
}

fn permission_to(p: Permission) -> rd::rd_kafka_AclPermissionType_t {
    use rd::rd_kafka_AclPermissionType_t as P;
    match p {
        Permission::Unknown => P::RD_KAFKA_ACL_PERMISSION_TYPE_UNKNOWN,
        Permission::Any => P::RD_KAFKA_ACL_PERMISSION_TYPE_ANY,
        Permission::Deny => P::RD_KAFKA_ACL_PERMISSION_TYPE_DENY,
        Permission::Allow => P::RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW,
    }
}

fn pattern_from(p: rd::rd_kafka_ResourcePatternType_t) -> Pattern {
    use rd::rd_kafka_ResourcePatternType_t as R;
    match p {
        R::RD_KAFKA_RESOURCE_PATTERN_LITERAL => Pattern::Literal,
        R::RD_KAFKA_RESOURCE_PATTERN_PREFIXED => Pattern::Prefixed,
        _ => Pattern::Unknown,
    }
}

fn pattern_to(p: Pattern) -> rd::rd_kafka_ResourcePatternType_t {
    use rd::rd_kafka_ResourcePatternType_t as R;
    match p {
        Pattern::Unknown => R::RD_KAFKA_RESOURCE_PATTERN_UNKNOWN,
        Pattern::Literal => R::RD_KAFKA_RESOURCE_PATTERN_LITERAL,
        Pattern::Prefixed => R::RD_KAFKA_RESOURCE_PATTERN_PREFIXED,
    }
}

fn c_string(what: &'static str, s: &str) -> Result<CString, AclError> {
    CString::new(s).map_err(|_| AclError::NulByte { what, value: s.to_string() })
}

/// A request of ours: answered within [`TIMEOUT`], waited for 5 s longer.
fn request<C: ClientContext>(client: &Client<C>, op: rd::rd_kafka_admin_op_t) -> AdminRequest {
    AdminRequest::new(client, op, TIMEOUT)
}

fn reply(request: &AdminRequest) -> Option<*mut rd::rd_kafka_event_t> {
    request.reply(TIMEOUT + Duration::from_secs(5))
}

/// Every ACL on topic resources (any pattern, principal, host, operation
/// and permission), as the cluster's authorizer lists them.
pub fn describe_topic_acls<C: ClientContext>(client: &Client<C>) -> Result<Vec<AclBinding>, AclError> {
    let mut errstr = [0 as c_char; 512];
    // SAFETY: null name, principal and host mean "any"; `errstr` is a
    // buffer of the size given. The filter is ours; destroyed below.
    let filter = unsafe {
        rd::rd_kafka_AclBindingFilter_new(
            rd::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC,
            std::ptr::null(),
            rd::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_ANY,
            std::ptr::null(),
            std::ptr::null(),
            rd::rd_kafka_AclOperation_t::RD_KAFKA_ACL_OPERATION_ANY,
            rd::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_ANY,
            errstr.as_mut_ptr(),
            errstr.len(),
        )
    };
    if filter.is_null() {
        // SAFETY: librdkafka wrote a NUL-terminated message into the buffer.
        return Err(AclError::BadFilter(unsafe { owned(errstr.as_ptr()) }));
    }
    let request = request(client, rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBEACLS);
    // SAFETY: live handle, filter, options and queue; librdkafka copies the
    // filter, which is ours to destroy right after.
    unsafe {
        rd::rd_kafka_DescribeAcls(client.native_ptr(), filter, request.options, request.queue);
        rd::rd_kafka_AclBinding_destroy(filter);
    }
    let Some(event) = reply(&request) else {
        return Err(AclError::NoAnswer { request: AclRequest::Describe, waited: TIMEOUT + Duration::from_secs(5) });
    };
    // SAFETY: `event` is a live event we own until destroyed at the end;
    // the result and its bindings (and their strings) live as long as it.
    unsafe {
        let answer = (|| {
            let err = rd::rd_kafka_event_error(event);
            if err == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_SECURITY_DISABLED {
                return Err(AclError::SecurityDisabled);
            }
            if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                let text = owned(rd::rd_kafka_event_error_string(event));
                return Err(AclError::Failed { request: AclRequest::Describe, code: RDKafkaErrorCode::from(err), text });
            }
            let result = rd::rd_kafka_event_DescribeAcls_result(event);
            if result.is_null() {
                return Err(AclError::Unexpected(AclRequest::Describe));
            }
            let mut n = 0usize;
            let acls = rd::rd_kafka_DescribeAcls_result_acls(result, &mut n);
            let acls = if acls.is_null() || n == 0 { &[][..] } else { std::slice::from_raw_parts(acls, n) };
            Ok(acls
                .iter()
                .filter(|a| rd::rd_kafka_AclBinding_restype(**a) == rd::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC)
                .map(|&a| AclBinding {
                    name: owned(rd::rd_kafka_AclBinding_name(a)),
                    pattern: pattern_from(rd::rd_kafka_AclBinding_resource_pattern_type(a)),
                    principal: owned(rd::rd_kafka_AclBinding_principal(a)),
                    host: owned(rd::rd_kafka_AclBinding_host(a)),
                    operation: operation_from(rd::rd_kafka_AclBinding_operation(a)),
                    permission: permission_from(rd::rd_kafka_AclBinding_permission_type(a)),
                })
                .collect())
        })();
        rd::rd_kafka_event_destroy(event);
        answer
    }
}

/// Creates topic ACLs; one that exists already is no error (the broker
/// keeps one copy). Err lists every binding refused, with why.
pub fn create_acls<C: ClientContext>(client: &Client<C>, bindings: &[AclBinding]) -> Result<(), AclError> {
    if bindings.is_empty() {
        return Ok(());
    }
    let mut made: Vec<*mut rd::rd_kafka_AclBinding_t> = Vec::with_capacity(bindings.len());
    let free = |made: &mut Vec<*mut rd::rd_kafka_AclBinding_t>| {
        for b in made.drain(..) {
            // SAFETY: each made by rd_kafka_AclBinding_new below, destroyed once.
            unsafe { rd::rd_kafka_AclBinding_destroy(b) };
        }
    };
    for b in bindings {
        let strings = (|| Ok::<_, AclError>((c_string("topic", &b.name)?, c_string("principal", &b.principal)?, c_string("host", &b.host)?)))();
        let (name, principal, host) = match strings {
            Ok(s) => s,
            Err(e) => {
                free(&mut made);
                return Err(e);
            }
        };
        let mut errstr = [0 as c_char; 512];
        // SAFETY: the strings live for the call (librdkafka copies them);
        // `errstr` is a buffer of the size given.
        let acl = unsafe {
            rd::rd_kafka_AclBinding_new(
                rd::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC,
                name.as_ptr(),
                pattern_to(b.pattern),
                principal.as_ptr(),
                host.as_ptr(),
                operation_to(b.operation),
                permission_to(b.permission),
                errstr.as_mut_ptr(),
                errstr.len(),
            )
        };
        if acl.is_null() {
            free(&mut made);
            // SAFETY: librdkafka wrote a NUL-terminated message into the buffer.
            return Err(AclError::BadBinding { binding: b.clone(), reason: unsafe { owned(errstr.as_ptr()) } });
        }
        made.push(acl);
    }
    let request = request(client, rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_CREATEACLS);
    // SAFETY: live handle, bindings, options and queue; librdkafka copies
    // the bindings, which are ours to destroy right after.
    unsafe { rd::rd_kafka_CreateAcls(client.native_ptr(), made.as_mut_ptr(), made.len(), request.options, request.queue) };
    free(&mut made);
    let Some(event) = reply(&request) else {
        return Err(AclError::NoAnswer { request: AclRequest::Create, waited: TIMEOUT + Duration::from_secs(5) });
    };
    // SAFETY: `event` is a live event we own until destroyed at the end;
    // the results and their errors live as long as it (not ours to free).
    unsafe {
        let answer = (|| {
            let err = rd::rd_kafka_event_error(event);
            if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                return Err(AclError::Failed {
                    request: AclRequest::Create,
                    code: RDKafkaErrorCode::from(err),
                    text: owned(rd::rd_kafka_event_error_string(event)),
                });
            }
            let result = rd::rd_kafka_event_CreateAcls_result(event);
            if result.is_null() {
                return Err(AclError::Unexpected(AclRequest::Create));
            }
            let mut n = 0usize;
            let results = rd::rd_kafka_CreateAcls_result_acls(result, &mut n);
            let results = if results.is_null() || n == 0 { &[][..] } else { std::slice::from_raw_parts(results, n) };
            // The results come in the order of the request.
            let refused: Vec<(AclBinding, String)> = results
                .iter()
                .zip(bindings)
                .filter_map(|(&r, b)| {
                    let e = rd::rd_kafka_acl_result_error(r);
                    if e.is_null() || rd::rd_kafka_error_code(e) == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                        return None;
                    }
                    Some((b.clone(), owned(rd::rd_kafka_error_string(e))))
                })
                .collect();
            if refused.is_empty() {
                Ok(())
            } else {
                Err(AclError::Refused(refused))
            }
        })();
        rd::rd_kafka_event_destroy(event);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_through_librdkafka_values() {
        for op in [Operation::All, Operation::Read, Operation::Write, Operation::Describe, Operation::IdempotentWrite] {
            assert_eq!(operation_from(operation_to(op)), op);
        }
        for p in [Permission::Allow, Permission::Deny, Permission::Any] {
            assert_eq!(permission_from(permission_to(p)), p);
        }
        for p in [Pattern::Literal, Pattern::Prefixed] {
            assert_eq!(pattern_from(pattern_to(p)), p);
        }
    }

    #[test]
    fn errors_read_as_before_they_were_typed() {
        let b = |name: &str| AclBinding {
            name: name.into(),
            pattern: Pattern::Literal,
            principal: "User:a".into(),
            host: "*".into(),
            operation: Operation::Read,
            permission: Permission::Allow,
        };
        let refused = AclError::Refused(vec![(b("t1"), "no".into()), (b("t2"), "never".into())]);
        assert_eq!(refused.to_string(), format!("{}: no; {}: never", b("t1"), b("t2")));
        assert_eq!(c_string("host", "a\0b").unwrap_err().to_string(), "host \"a\\0b\" contains a NUL byte");
        let late = AclError::NoAnswer { request: AclRequest::Create, waited: Duration::from_secs(20) };
        assert_eq!(late.to_string(), "create ACLs: no answer within 20s");
        assert_eq!(AclError::Unexpected(AclRequest::Describe).to_string(), "describe ACLs: unexpected answer");
    }
}
