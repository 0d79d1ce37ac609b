//! MirrorMaker 2's replication policies: how remote topics are named.
//!
//! [`ReplicationPolicy`] is Java's `DefaultReplicationPolicy` or
//! `IdentityReplicationPolicy` (`connect/mirror-client`, 3.9), method for
//! method: Java's tools (`MirrorClient`, `RemoteClusterUtils`, the checkpoint
//! connector) compute the same names from the same settings, so any drift
//! breaks them silently. The selection rules that depend on naming live here
//! too: the `DefaultTopicFilter`/`DefaultGroupFilter` pattern lists
//! ([`NameFilter`]), which source topics a flow replicates
//! ([`should_replicate_topic`], with cycle detection by alias), and the name
//! a checkpoint gives a topic ([`ReplicationPolicy::checkpoint_topic`]).
//! The engine needs these and knows nothing of files, so errors here carry
//! no file:line; the front-end adds it.

use std::fmt;

use regex::Regex;

/// The policy classes Java ships, by the names a file must use.
pub const DEFAULT_POLICY_CLASS: &str = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";
pub const IDENTITY_POLICY_CLASS: &str = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";

/// Java's `DefaultReplicationPolicy.SEPARATOR_DEFAULT`.
pub const DEFAULT_SEPARATOR: &str = ".";

/// `DefaultTopicFilter` and `DefaultGroupFilter` defaults (`MM/DefaultTopicFilter.java`, `MM/DefaultGroupFilter.java`).
pub const TOPICS_DEFAULT: &[&str] = &[".*"];
pub const TOPICS_EXCLUDE_DEFAULT: &[&str] = &[r".*[\-\.]internal", r".*\.replica", "__.*"];
pub const GROUPS_DEFAULT: &[&str] = &[".*"];
pub const GROUPS_EXCLUDE_DEFAULT: &[&str] = &["console-consumer-.*", "connect-.*", "__.*"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// Remote topics are `<source><sep><topic>`.
    Default,
    /// Names kept, except topics ending in `heartbeats`; no cycle detection.
    Identity,
}

/// A `replication.policy.class` this mirror cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    pub class: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let simple = self.class.rsplit(['.', '$']).next().unwrap_or(&self.class);
        let hint = match simple {
            "LegacyReplicationPolicy" => " (LegacyReplicationPolicy never shipped with Kafka; the no-rename policy is IdentityReplicationPolicy)",
            "DefaultReplicationPolicy" | "IdentityReplicationPolicy" => " (Java needs the fully qualified class name)",
            _ => " (custom Java classes cannot be loaded here)",
        };
        write!(f, "'{}' is not a replication policy this mirror has{hint}; use {DEFAULT_POLICY_CLASS} or {IDENTITY_POLICY_CLASS}", self.class)
    }
}

impl std::error::Error for PolicyError {}

impl PolicyKind {
    /// The policy of a `replication.policy.class` value, already trimmed as
    /// ConfigDef's CLASS type trims it. Java loads the class by name, so
    /// only fully qualified names are accepted.
    pub fn from_class(class: &str) -> Result<PolicyKind, PolicyError> {
        match class {
            DEFAULT_POLICY_CLASS => Ok(PolicyKind::Default),
            IDENTITY_POLICY_CLASS => Ok(PolicyKind::Identity),
            _ => Err(PolicyError { class: class.to_string() }),
        }
    }

    pub fn class_name(self) -> &'static str {
        match self {
            PolicyKind::Default => DEFAULT_POLICY_CLASS,
            PolicyKind::Identity => IDENTITY_POLICY_CLASS,
        }
    }
}

/// A configured replication policy, as Java's `configure(props)` leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicationPolicy {
    pub kind: PolicyKind,
    /// Used as written: Java reads it from the raw properties, untrimmed.
    pub separator: String,
    /// KIP-949: whether internal topic names use `separator` (else `.`).
    pub internal_separator_enabled: bool,
    /// Identity only: the `source.cluster.alias` it was configured with,
    /// which it returns as the source of every non-heartbeat topic.
    pub source_alias: Option<String>,
}

impl Default for ReplicationPolicy {
    fn default() -> Self {
        ReplicationPolicy { kind: PolicyKind::Default, separator: DEFAULT_SEPARATOR.into(), internal_separator_enabled: true, source_alias: None }
    }
}

impl ReplicationPolicy {
    /// Java's `configure`: `internal_separator_enabled` counts only when a
    /// separator is given (`DefaultReplicationPolicy.configure` reads it
    /// inside `if (props.containsKey(SEPARATOR_CONFIG))`).
    pub fn configure(kind: PolicyKind, separator: Option<&str>, internal_separator_enabled: Option<bool>, source_alias: Option<&str>) -> Self {
        let internal_separator_enabled = match separator {
            Some(_) => internal_separator_enabled.unwrap_or(true),
            None => true,
        };
        ReplicationPolicy {
            kind,
            separator: separator.unwrap_or(DEFAULT_SEPARATOR).to_string(),
            internal_separator_enabled,
            source_alias: match kind {
                PolicyKind::Identity => source_alias.map(str::to_string),
                PolicyKind::Default => None,
            },
        }
    }

    /// Identity renames only what `endsWith("heartbeats")`, so that the
    /// heartbeats topics still show the path a flow took.
    fn looks_like_heartbeat(&self, topic: &str) -> bool {
        topic.ends_with(self.heartbeats_topic())
    }

    fn renames(&self, topic: &str) -> bool {
        self.kind == PolicyKind::Default || self.looks_like_heartbeat(topic)
    }

    pub fn format_remote_topic(&self, source_alias: &str, topic: &str) -> String {
        if self.renames(topic) {
            format!("{source_alias}{}{topic}", self.separator)
        } else {
            topic.to_string()
        }
    }

    /// The cluster a remote topic came from; `None` when it is not remote.
    pub fn topic_source<'a>(&'a self, topic: &'a str) -> Option<&'a str> {
        if !self.renames(topic) {
            return self.source_alias.as_deref();
        }
        let parts = java_split(topic, &self.separator);
        if parts.len() < 2 {
            None
        } else {
            Some(parts[0])
        }
    }

    /// The topic's name one hop upstream; Identity returns non-heartbeat
    /// topics unchanged (which is what ends its cycle detection).
    pub fn upstream_topic<'a>(&self, topic: &'a str) -> Option<&'a str> {
        if !self.renames(topic) {
            return Some(topic);
        }
        let source = self.topic_source(topic)?;
        Some(&topic[source.len() + self.separator.len()..])
    }

    /// `upstream_topic` followed until it gives nothing or the same name.
    pub fn original_topic<'a>(&self, topic: &'a str) -> &'a str {
        let mut t = topic;
        while let Some(up) = self.upstream_topic(t).filter(|up| *up != t) {
            t = up;
        }
        t
    }

    pub fn heartbeats_topic(&self) -> &'static str {
        "heartbeats"
    }

    fn internal_separator(&self) -> &str {
        if self.internal_separator_enabled {
            &self.separator
        } else {
            "."
        }
    }

    fn internal_suffix(&self) -> String {
        format!("{}internal", self.internal_separator())
    }

    fn checkpoints_suffix(&self) -> String {
        format!("{}checkpoints{}", self.internal_separator(), self.internal_suffix())
    }

    /// `mm2-offset-syncs.<alias>.internal`, with the separator since 3.1 (KIP-690).
    pub fn offset_syncs_topic(&self, alias: &str) -> String {
        format!("mm2-offset-syncs{}{alias}{}", self.internal_separator(), self.internal_suffix())
    }

    pub fn checkpoints_topic(&self, alias: &str) -> String {
        format!("{alias}{}", self.checkpoints_suffix())
    }

    pub fn is_heartbeats_topic(&self, topic: &str) -> bool {
        self.original_topic(topic) == self.heartbeats_topic()
    }

    pub fn is_checkpoints_topic(&self, topic: &str) -> bool {
        topic.ends_with(&self.checkpoints_suffix())
    }

    pub fn is_mm2_internal_topic(&self, topic: &str) -> bool {
        topic.ends_with(&self.internal_suffix())
    }

    /// `ReplicationPolicy.isInternalTopic` (3.1+, KAFKA-13397): Kafka's own
    /// (`__`, `.`), Connect's (`-internal`, `.internal`) and MM2's.
    pub fn is_internal_topic(&self, topic: &str) -> bool {
        self.is_mm2_internal_topic(topic) || topic.starts_with("__") || topic.starts_with('.') || topic.ends_with("-internal") || topic.ends_with(".internal")
    }

    /// The topic name a checkpoint of flow `source`→`target` gives a source
    /// topic (`MirrorCheckpointTask.renameTopicPartition`): a topic that
    /// came from the target goes back to its original name (failback),
    /// anything else gets its remote name.
    pub fn checkpoint_topic(&self, source_alias: &str, target_alias: &str, topic: &str) -> String {
        if self.topic_source(topic) == Some(target_alias) {
            self.original_topic(topic).to_string()
        } else {
            self.format_remote_topic(source_alias, topic)
        }
    }
}

/// Java's `Pattern.compile(Pattern.quote(sep)).split(s)`: trailing empty
/// strings dropped, and (for an empty separator) no leading empty string.
fn java_split<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let mut parts: Vec<&str> = if sep.is_empty() { s.char_indices().map(|(i, c)| &s[i..i + c.len_utf8()]).collect() } else { s.split(sep).collect() };
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// A flow's cycle check (`MirrorSourceConnector.isCycle`): the topic, or
/// one of its upstream names, came from the target. The alias in the name
/// is the only evidence, so Identity topics never count as cycles.
pub fn is_cycle(policy: &ReplicationPolicy, target_alias: &str, topic: &str) -> bool {
    let mut t = topic;
    loop {
        let Some(source) = policy.topic_source(t) else { return false };
        if source == target_alias {
            return true;
        }
        match policy.upstream_topic(t) {
            Some(up) if up != t => t = up,
            _ => return false,
        }
    }
}

/// Whether a flow into `target_alias` replicates a source topic
/// (`MirrorSourceConnector.shouldReplicateTopic`): heartbeats topics pass
/// whatever the filter says; internal topics and cycles never do.
pub fn should_replicate_topic(policy: &ReplicationPolicy, topics: &NameFilter, target_alias: &str, topic: &str) -> bool {
    (topics.matches(topic) || policy.is_heartbeats_topic(topic)) && !policy.is_internal_topic(topic) && !is_cycle(policy, target_alias, topic)
}

/// A regex list Java could compile that this mirror cannot, or could not either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pub pattern: String,
    pub reason: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is not a usable regex: {}", self.pattern, self.reason)
    }
}

impl std::error::Error for PatternError {}

/// `DefaultTopicFilter`/`DefaultGroupFilter`: a name passes when it fully
/// matches an include pattern and no exclude pattern. Each list is joined
/// with `|` into one regex, as `MirrorUtils.compilePatternList` does; an
/// empty list matches nothing (so `topics=` replicates nothing).
#[derive(Debug, Clone)]
pub struct NameFilter {
    include: Option<Regex>,
    exclude: Option<Regex>,
    pub include_list: Vec<String>,
    pub exclude_list: Vec<String>,
}

impl NameFilter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, PatternError> {
        Ok(NameFilter { include: compile_list(include)?, exclude: compile_list(exclude)?, include_list: include.to_vec(), exclude_list: exclude.to_vec() })
    }

    /// Java's defaults for topics (`topics`, `topics.exclude`).
    pub fn default_topics() -> Self {
        Self::new(&owned(TOPICS_DEFAULT), &owned(TOPICS_EXCLUDE_DEFAULT)).expect("Java's default topic patterns compile")
    }

    /// Java's defaults for groups (`groups`, `groups.exclude`).
    pub fn default_groups() -> Self {
        Self::new(&owned(GROUPS_DEFAULT), &owned(GROUPS_EXCLUDE_DEFAULT)).expect("Java's default group patterns compile")
    }

    pub fn matches(&self, name: &str) -> bool {
        self.include.as_ref().is_some_and(|r| r.is_match(name)) && !self.exclude.as_ref().is_some_and(|r| r.is_match(name))
    }

    pub fn description(&self) -> String {
        let list = |l: &[String]| if l.is_empty() { "nothing".to_string() } else { format!("'{}'", l.join(", ")) };
        format!("include {} minus {}", list(&self.include_list), list(&self.exclude_list))
    }
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// One Java regex for the list, matched against the whole name as
/// `Matcher.matches()` does.
fn compile_list(list: &[String]) -> Result<Option<Regex>, PatternError> {
    if list.is_empty() {
        return Ok(None);
    }
    let joined = list.join("|");
    let err = |reason: String| PatternError { pattern: joined.clone(), reason };
    let rust = unquote(&joined);
    if let Some(construct) = unsupported_construct(&rust) {
        return Err(err(format!("{construct} is not supported by this mirror's regex engine (linear-time, like RE2); rewrite the pattern without it")));
    }
    // `(?:…)` keeps alternation inside the anchors: `a|b` must not become `^a|b$`.
    Regex::new(&format!("^(?:{rust})$")).map(Some).map_err(|e| {
        let detail = e.to_string();
        err(detail.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string())
    })
}

/// Java's `\Q…\E` quoting, which the `regex` crate lacks, as escaped literals.
fn unquote(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut rest = p;
    while let Some(i) = find_unescaped(rest, "\\Q") {
        out.push_str(&rest[..i]);
        let quoted = &rest[i + 2..];
        let end = quoted.find("\\E").unwrap_or(quoted.len());
        out.push_str(&regex::escape(&quoted[..end]));
        rest = quoted.get(end + 2..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

fn find_unescaped(s: &str, needle: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if !escaped && s[i..].starts_with(needle) {
            return Some(i);
        }
        escaped = !escaped && c == '\\';
    }
    None
}

/// Java regex constructs the `regex` crate cannot express, named for the user.
fn unsupported_construct(p: &str) -> Option<&'static str> {
    let b = p.as_bytes();
    let mut i = 0;
    let mut in_class = false;
    while i < b.len() {
        match (b[i], b.get(i + 1), b.get(i + 2)) {
            (b'\\', Some(d), _) if !in_class && d.is_ascii_digit() && *d != b'0' => return Some("a back-reference (\\1 …)"),
            (b'\\', Some(b'k'), Some(b'<')) if !in_class => return Some("a named back-reference (\\k<name>)"),
            (b'\\', _, _) => i += 1,
            (b'[', _, _) => in_class = true,
            (b']', _, _) => in_class = false,
            _ if in_class => {}
            (b'(', Some(b'?'), Some(b'=' | b'!')) => return Some("look-ahead ((?=…) or (?!…))"),
            (b'(', Some(b'?'), Some(b'<')) if matches!(b.get(i + 3), Some(b'=' | b'!')) => return Some("look-behind ((?<=…) or (?<!…))"),
            (b'(', Some(b'?'), Some(b'>')) => return Some("an atomic group ((?>…))"),
            (b'+' | b'*' | b'?' | b'}', Some(b'+'), _) => return Some("a possessive quantifier (e.g. '.*+')"),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_policy(sep: Option<&str>, internal: Option<bool>) -> ReplicationPolicy {
        ReplicationPolicy::configure(PolicyKind::Default, sep, internal, None)
    }

    fn identity(alias: Option<&str>) -> ReplicationPolicy {
        ReplicationPolicy::configure(PolicyKind::Identity, None, None, alias)
    }

    fn list(l: &[&str]) -> Vec<String> {
        owned(l)
    }

    // §2.1 / §2.2: the naming table of the Default policy.
    #[test]
    fn default_policy_names() {
        let p = ReplicationPolicy::default();
        assert_eq!(p.format_remote_topic("A", "orders"), "A.orders");
        assert_eq!(p.topic_source("A.orders"), Some("A"));
        assert_eq!(p.topic_source("B.A.orders"), Some("B"));
        assert_eq!(p.topic_source("orders"), None);
        assert_eq!(p.upstream_topic("B.A.orders"), Some("A.orders"));
        assert_eq!(p.upstream_topic("orders"), None);
        assert_eq!(p.original_topic("B.A.orders"), "orders");
        assert_eq!(p.original_topic("orders"), "orders");
        assert_eq!(p.heartbeats_topic(), "heartbeats");
        assert_eq!(p.offset_syncs_topic("B"), "mm2-offset-syncs.B.internal");
        assert_eq!(p.checkpoints_topic("A"), "A.checkpoints.internal");
        assert!(p.is_heartbeats_topic("heartbeats") && p.is_heartbeats_topic("A.heartbeats") && p.is_heartbeats_topic("B.A.heartbeats"));
        assert!(!p.is_heartbeats_topic("app-heartbeats") && !p.is_heartbeats_topic("A.heartbeats-x"));
        assert!(p.is_checkpoints_topic("A.checkpoints.internal") && !p.is_checkpoints_topic("A.checkpoints"));
        assert!(p.is_mm2_internal_topic("mm2-offsets.A.internal"));
    }

    // §2.2: Java's String.split drops trailing empty strings.
    #[test]
    fn default_policy_splits_as_java() {
        let p = ReplicationPolicy::default();
        assert_eq!(p.topic_source("A."), None);
        assert_eq!(p.topic_source("."), None);
        assert_eq!(p.topic_source(""), None);
        assert_eq!(p.topic_source(".x"), Some(""));
        assert_eq!(p.upstream_topic(".x"), Some("x"));
        assert_eq!(p.topic_source("A..b"), Some("A"));
        assert_eq!(p.upstream_topic("A..b"), Some(".b"));
        assert_eq!(p.upstream_topic("A.b."), Some("b."));
    }

    // §2.2: KIP-690 (custom separator in internal names) and KIP-949 (turned off).
    #[test]
    fn custom_separator_and_internal_separator_flag() {
        let p = default_policy(Some("_"), None);
        assert_eq!(p.format_remote_topic("A", "orders"), "A_orders");
        assert_eq!(p.topic_source("A_orders"), Some("A"));
        assert_eq!(p.topic_source("A.orders"), None);
        assert_eq!(p.offset_syncs_topic("B"), "mm2-offset-syncs_B_internal");
        assert_eq!(p.checkpoints_topic("A"), "A_checkpoints_internal");
        assert!(p.is_checkpoints_topic("A_checkpoints_internal") && !p.is_checkpoints_topic("A.checkpoints.internal"));
        assert!(p.is_mm2_internal_topic("x_internal"));
        // The fixed suffixes still make Connect's dotted topics internal.
        assert!(p.is_internal_topic("mm2-offsets.A.internal") && p.is_internal_topic("x-internal"));
        assert!(!p.is_mm2_internal_topic("mm2-offsets.A.internal"));

        let old = default_policy(Some("_"), Some(false));
        assert_eq!(old.format_remote_topic("A", "orders"), "A_orders");
        assert_eq!(old.offset_syncs_topic("B"), "mm2-offset-syncs.B.internal");
        assert_eq!(old.checkpoints_topic("A"), "A.checkpoints.internal");
        assert!(old.is_checkpoints_topic("A.checkpoints.internal"));

        // The flag is read only when a separator is given.
        assert!(default_policy(None, Some(false)).internal_separator_enabled);
        // A multi-character separator is literal, not a regex.
        let p = default_policy(Some("__"), None);
        assert_eq!(p.topic_source("A__x.y"), Some("A"));
        assert_eq!(p.upstream_topic("A__x.y"), Some("x.y"));
        let p = default_policy(Some("|"), None);
        assert_eq!(p.topic_source("A|x"), Some("A"));
    }

    // §2.3: Identity renames only heartbeat-like topics.
    #[test]
    fn identity_policy_names() {
        let p = identity(Some("A"));
        assert_eq!(p.format_remote_topic("A", "orders"), "orders");
        assert_eq!(p.format_remote_topic("A", "heartbeats"), "A.heartbeats");
        assert_eq!(p.format_remote_topic("A", "app-heartbeats"), "A.app-heartbeats");
        assert_eq!(p.topic_source("orders"), Some("A"));
        assert_eq!(p.topic_source("B.orders"), Some("A"));
        assert_eq!(p.topic_source("B.heartbeats"), Some("B"));
        assert_eq!(p.topic_source("heartbeats"), None);
        assert_eq!(p.upstream_topic("orders"), Some("orders"));
        assert_eq!(p.upstream_topic("B.heartbeats"), Some("heartbeats"));
        assert_eq!(p.original_topic("orders"), "orders");
        assert_eq!(p.original_topic("C.B.heartbeats"), "heartbeats");
        assert!(p.is_heartbeats_topic("B.heartbeats"));
        assert_eq!(identity(None).topic_source("orders"), None);
        // Internal names are the Default policy's.
        assert_eq!(p.offset_syncs_topic("B"), "mm2-offset-syncs.B.internal");
        assert_eq!(p.checkpoints_topic("A"), "A.checkpoints.internal");
    }

    // §2.5: the alias in the name is the only protection.
    #[test]
    fn cycles_by_alias() {
        let p = ReplicationPolicy::default();
        assert!(!is_cycle(&p, "B", "orders"));
        assert!(is_cycle(&p, "B", "B.orders"));
        assert!(is_cycle(&p, "B", "C.B.orders"));
        assert!(!is_cycle(&p, "B", "C.orders"));
        // A dotted source topic whose first segment is the target's alias is never replicated.
        assert!(is_cycle(&p, "B", "B.metrics"));
        // Identity cannot tell.
        let id = identity(Some("A"));
        assert!(!is_cycle(&id, "B", "orders"));
        // Not even a name that looks like it came from the target (flow B->A).
        assert!(!is_cycle(&identity(Some("B")), "A", "A.orders"));
        assert!(is_cycle(&id, "B", "B.heartbeats"));
    }

    // §2.4: filter, heartbeats, internal topics, cycles.
    #[test]
    fn which_topics_a_flow_replicates() {
        let p = ReplicationPolicy::default();
        let f = NameFilter::default_topics();
        let ok = |t: &str| should_replicate_topic(&p, &f, "B", t);
        assert!(ok("orders") && ok("C.orders"));
        for never in ["__consumer_offsets", ".hidden", "x-internal", "x.internal", "mm2-offset-syncs.B.internal", "A.checkpoints.internal", "B.orders"] {
            assert!(!ok(never), "{never}");
        }
        assert!(!ok("x.replica"), "default exclude");
        // Heartbeats pass even when `topics` leaves them out.
        let only_orders = NameFilter::new(&list(&["orders"]), &[]).unwrap();
        let ok = |t: &str| should_replicate_topic(&p, &only_orders, "B", t);
        assert!(ok("orders") && ok("heartbeats") && ok("C.heartbeats"));
        assert!(!ok("payments") && !ok("B.heartbeats"));
        // `topics=` (empty) replicates nothing but heartbeats.
        let none = NameFilter::new(&[], &[]).unwrap();
        assert!(!should_replicate_topic(&p, &none, "B", "orders"));
        assert!(should_replicate_topic(&p, &none, "B", "heartbeats"));
    }

    #[test]
    fn patterns_match_whole_names_and_excludes_win() {
        let f = NameFilter::new(&list(&["orders", "pay.*"]), &list(&["payments-tmp"])).unwrap();
        assert!(f.matches("orders") && f.matches("payments"));
        assert!(!f.matches("orders-eu") && !f.matches("my-orders") && !f.matches("payments-tmp"));
        // An empty exclude list excludes nothing; an empty element matches only "".
        assert!(NameFilter::new(&list(&[".*"]), &[]).unwrap().matches("x"));
        assert!(!NameFilter::new(&list(&["a", ""]), &[]).unwrap().matches("ab"));
        // Java's \Q…\E quoting.
        let q = NameFilter::new(&list(&[r"\Qa.b\E.*"]), &[]).unwrap();
        assert!(q.matches("a.bc") && !q.matches("axbc"));
        assert_eq!(unquote(r"x\\Qy"), r"x\\Qy");
        // Inside a character class, `*+` is two characters, not a possessive quantifier.
        assert!(NameFilter::new(&list(&["a[*+]b"]), &[]).unwrap().matches("a+b"));
    }

    // §2.6: the default group excludes.
    #[test]
    fn default_group_filter() {
        let g = NameFilter::default_groups();
        assert!(g.matches("orders-app"));
        for excluded in ["console-consumer-1234", "connect-mm2", "__share"] {
            assert!(!g.matches(excluded), "{excluded}");
        }
    }

    #[test]
    fn unsupported_regexes_are_named() {
        for (p, word) in [("(?!tmp).*", "look-ahead"), ("(?<!x)y", "look-behind"), ("(a)\\1", "back-reference"), ("(?>ab)", "atomic"), (".*+", "possessive")] {
            let e = NameFilter::new(&list(&[p]), &[]).unwrap_err();
            assert!(e.reason.contains(word), "{p}: {e}");
        }
        let e = NameFilter::new(&list(&["(unclosed"]), &[]).unwrap_err();
        assert!(e.to_string().starts_with("'(unclosed' is not a usable regex"), "{e}");
        // Named groups are fine.
        assert!(NameFilter::new(&list(&["(?<n>a)b"]), &[]).unwrap().matches("ab"));
    }

    #[test]
    fn checkpoint_topic_names() {
        let p = ReplicationPolicy::default();
        assert_eq!(p.checkpoint_topic("A", "B", "orders"), "A.orders");
        // A topic that came from the target fails back to its original name.
        assert_eq!(p.checkpoint_topic("A", "B", "B.orders"), "orders");
        assert_eq!(p.checkpoint_topic("A", "B", "C.orders"), "A.C.orders");
        assert_eq!(identity(Some("A")).checkpoint_topic("A", "B", "orders"), "orders");
    }

    #[test]
    fn policy_classes() {
        assert_eq!(PolicyKind::from_class(DEFAULT_POLICY_CLASS), Ok(PolicyKind::Default));
        assert_eq!(PolicyKind::from_class(IDENTITY_POLICY_CLASS), Ok(PolicyKind::Identity));
        let e = PolicyKind::from_class("org.apache.kafka.connect.mirror.LegacyReplicationPolicy").unwrap_err().to_string();
        assert!(e.contains("never shipped") && e.contains(IDENTITY_POLICY_CLASS) && e.contains(DEFAULT_POLICY_CLASS), "{e}");
        let e = PolicyKind::from_class("IdentityReplicationPolicy").unwrap_err().to_string();
        assert!(e.contains("fully qualified"), "{e}");
        let e = PolicyKind::from_class("com.acme.Prefixless").unwrap_err().to_string();
        assert!(e.contains("custom Java classes"), "{e}");
    }
}
