//! What an exactly-once task says when its target refuses it something
//! only the target's operator can give: an ACL (named with its resource,
//! its operation, the principal and the kafka-acls.sh line that grants
//! it), or transactions at all (a broker too old). Asking again changes
//! nothing, so the mirror stops with it (exit status 1).

use std::fmt;
use std::sync::Arc;

use crate::kafka::transactions::Refusal;
use crate::plan::ExactlyOnce;

/// Who a task is on its target and what it uses there, for the messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetAccess {
    /// The target's bootstrap servers, as its settings give them.
    pub bootstrap: String,
    /// What the user named the target's settings by (`cluster B of
    /// mm2.properties`, `--producer.config p.properties`).
    pub origin: String,
    /// `User:name` when the settings tell it (`kafka::auth::principal`).
    pub principal: Option<String>,
    /// This task's `transactional.id`.
    pub transactional_id: String,
    /// The flow's ownership group.
    pub group: String,
}

/// What the target denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// WRITE (and DESCRIBE) on the task's transactional id.
    TransactionalId(String),
    /// READ on the flow's ownership group.
    Group(String),
    /// WRITE on these remote topics: a record was refused.
    TopicWrite(Vec<String>),
    /// WRITE or READ on these remote topics: the transaction was refused
    /// adding them (WRITE) or committing its positions as the ownership
    /// group's offsets of them (READ), and librdkafka's code does not say
    /// which (its log line before does).
    Topics(Vec<String>),
    /// IDEMPOTENT_WRITE on the cluster.
    Cluster,
    /// Transactions at all: the broker is too old.
    Transactions,
}

/// The target refused a task what only its operator can give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub access: Arc<TargetAccess>,
    pub denied: Denied,
    /// What librdkafka said.
    pub detail: String,
}

impl TargetAccess {
    /// What `refusal` of a transactional call denied this task: `topics`
    /// are the remote topics of the transaction (a record refused is
    /// [`Denied::TopicWrite`], told by the caller).
    pub fn denied(&self, refusal: Refusal, topics: Vec<String>) -> Denied {
        match refusal {
            Refusal::TransactionalId => Denied::TransactionalId(self.transactional_id.clone()),
            Refusal::Group => Denied::Group(self.group.clone()),
            Refusal::Topic => Denied::Topics(topics),
            Refusal::Cluster => Denied::Cluster,
            Refusal::Unsupported => Denied::Transactions,
        }
    }
}

impl Refused {
    pub fn new(access: &Arc<TargetAccess>, denied: Denied, detail: impl fmt::Display) -> Refused {
        Refused { access: access.clone(), denied, detail: detail.to_string() }
    }
}

/// `s` in single quotes, one shell word whatever it holds.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `s` as one shell word: as it is when nothing in it is special to a
/// shell, else [`quoted`].
fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c)) {
        s.to_string()
    } else {
        quoted(s)
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.access;
        let cluster = format!("target cluster {} ({})", a.bootstrap, a.origin);
        let (who, grantee) = match &a.principal {
            Some(p) => (format!("principal {p}"), shell_word(p)),
            None => (format!("the principal in {}", a.origin), "'User:<that principal>'".to_string()),
        };
        let topics = |ts: &[String]| ts.iter().map(|t| format!("--topic {}", quoted(t))).collect::<Vec<_>>().join(" ");
        let names = |ts: &[String]| ts.iter().map(|t| quoted(t)).collect::<Vec<_>>().join(", ");
        let (operation, resource, why, grant) = match &self.denied {
            Denied::TransactionalId(id) => (
                "WRITE",
                format!("TransactionalId {}", quoted(id)),
                format!(
                    "exactly-once needs WRITE and DESCRIBE on the transactional ids beginning {} (one per task and process)",
                    quoted(ExactlyOnce::TRANSACTIONAL_ID_PREFIX)
                ),
                format!(
                    "--operation Write --operation Describe --transactional-id {} --resource-pattern-type prefixed",
                    quoted(ExactlyOnce::TRANSACTIONAL_ID_PREFIX)
                ),
            ),
            Denied::Group(group) => (
                "READ",
                format!("Group {}", quoted(group)),
                format!(
                    "exactly-once needs READ on the groups beginning {} (each flow's ownership group, which holds its committed positions)",
                    quoted(ExactlyOnce::OWNER_GROUP_PREFIX)
                ),
                format!("--operation Read --group {} --resource-pattern-type prefixed", quoted(ExactlyOnce::OWNER_GROUP_PREFIX)),
            ),
            Denied::TopicWrite(ts) => {
                ("WRITE", format!("Topic {}", names(ts)), "the records are written there".to_string(), format!("--operation Write {}", topics(ts)))
            }
            Denied::Topics(ts) => (
                "WRITE or READ",
                format!("Topic {}", names(ts)),
                format!("exactly-once writes the records there (WRITE) and commits its positions as the offsets of group {} of them (READ)", quoted(&a.group)),
                format!("--operation Write --operation Read {}", topics(ts)),
            ),
            Denied::Cluster => (
                "IDEMPOTENT_WRITE",
                "the Cluster".to_string(),
                "brokers before 2.8 ask it of every idempotent and transactional producer".to_string(),
                "--operation IdempotentWrite --cluster".to_string(),
            ),
            Denied::Transactions => {
                return write!(
                    f,
                    "the {cluster} does not support transactions ({}). Exactly-once needs Kafka 2.5 or later on the target (transactions, and \
                     the fencing by group generation they rest on, KIP-447); upgrade it, or copy this flow at least once (without \
                     exactly.once.source.support = enabled, or --exactly.once true)",
                    self.detail
                )
            }
        };
        write!(
            f,
            "the {cluster} refused {who} {operation} on {resource} ({}): {why}. The fix (a DENY ACL that matches wins over any ALLOW: remove \
             that first): kafka-acls.sh --bootstrap-server {} --add --allow-principal {grantee} {grant}",
            self.detail,
            shell_word(&a.bootstrap),
        )
    }
}

impl std::error::Error for Refused {}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(principal: Option<&str>) -> Arc<TargetAccess> {
        Arc::new(TargetAccess {
            bootstrap: "b1:9092,b2:9092".into(),
            origin: "cluster B of /etc/mm2.properties".into(),
            principal: principal.map(String::from),
            transactional_id: ExactlyOnce::transactional_id("A->B", 0, 7, 0xff),
            group: ExactlyOnce::owner_group("A->B"),
        })
    }

    fn text(principal: Option<&str>, refusal: Refusal) -> String {
        let a = access(principal);
        Refused::new(&a, a.denied(refusal, vec!["A.orders".into(), "A.pay".into()]), "Broker: denied").to_string()
    }

    #[test]
    fn a_refused_transactional_id_names_the_cluster_principal_resource_and_fix() {
        let m = text(Some("User:mm"), Refusal::TransactionalId);
        assert!(m.starts_with("the target cluster b1:9092,b2:9092 (cluster B of /etc/mm2.properties) refused principal User:mm WRITE on TransactionalId 'mirror-maker-A->B-0-7-ff' (Broker: denied): "), "{m}");
        assert!(m.contains("WRITE and DESCRIBE on the transactional ids beginning 'mirror-maker-'"), "{m}");
        assert!(
            m.ends_with(
                "kafka-acls.sh --bootstrap-server b1:9092,b2:9092 --add --allow-principal User:mm --operation Write --operation Describe \
                 --transactional-id 'mirror-maker-' --resource-pattern-type prefixed"
            ),
            "{m}"
        );
    }

    #[test]
    fn a_refused_group_names_the_group_prefix() {
        let m = text(Some("User:mm"), Refusal::Group);
        assert!(m.contains("refused principal User:mm READ on Group 'mirror-maker.eos.A->B' (Broker: denied)"), "{m}");
        assert!(m.ends_with("--add --allow-principal User:mm --operation Read --group 'mirror-maker.eos.' --resource-pattern-type prefixed"), "{m}");
    }

    #[test]
    fn refused_topics_are_each_named() {
        let m = text(Some("User:mm"), Refusal::Topic);
        assert!(m.contains("WRITE or READ on Topic 'A.orders', 'A.pay'") && m.contains("offsets of group 'mirror-maker.eos.A->B' of them (READ)"), "{m}");
        assert!(m.ends_with("--operation Write --operation Read --topic 'A.orders' --topic 'A.pay'"), "{m}");
        let a = access(Some("User:mm"));
        let m = Refused::new(&a, Denied::TopicWrite(vec!["A.orders".into()]), "x").to_string();
        assert!(m.contains("WRITE on Topic 'A.orders'") && m.ends_with("--operation Write --topic 'A.orders'"), "{m}");
        assert!(text(Some("User:mm"), Refusal::Cluster).ends_with("--operation IdempotentWrite --cluster"));
    }

    #[test]
    fn an_unknown_principal_is_the_one_in_the_target_settings() {
        let m = text(None, Refusal::TransactionalId);
        assert!(m.contains("refused the principal in cluster B of /etc/mm2.properties WRITE on TransactionalId"), "{m}");
        assert!(m.contains("--allow-principal 'User:<that principal>' --operation Write"), "{m}");
        let m = text(Some("User:CN=mirror,O=Acme Corp"), Refusal::Group);
        assert!(m.contains("--allow-principal 'User:CN=mirror,O=Acme Corp' --operation Read"), "quoted for the shell: {m}");
    }

    #[test]
    fn a_target_too_old_for_transactions_says_so_without_an_acl() {
        let m = text(Some("User:mm"), Refusal::Unsupported);
        assert!(m.starts_with("the target cluster b1:9092,b2:9092 (cluster B of /etc/mm2.properties) does not support transactions (Broker: denied)"), "{m}");
        assert!(m.contains("Kafka 2.5 or later") && !m.contains("kafka-acls.sh"), "{m}");
    }
}
