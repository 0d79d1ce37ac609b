//! The topic filter: MirrorMaker 1's whitelist/blacklist semantics.
//!
//! MM1 normalised the pattern (trim, `,` → `|`, spaces removed, leading and
//! trailing quotes stripped) and then required a *full* match with
//! `java.util.regex`. We do the same with the `regex` crate, matching topic
//! names from periodically refreshed metadata ourselves rather than handing
//! a pattern to librdkafka, whose POSIX regexes search instead of matching
//! and include internal topics.

use std::fmt;

use regex::Regex;

use crate::plan::policy::{self, NameFilter, ReplicationPolicy};

/// Kafka's internal topics, never mirrored unless `exclude.internal.topics=false`.
pub const INTERNAL_TOPICS: &[&str] = &["__consumer_offsets", "__transaction_state", "__share_group_state"];

/// A pattern that cannot be used, with what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterError {
    pub option: &'static str,
    pub pattern: String,
    pub reason: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} '{}' is an invalid regex: {}", self.option, self.pattern, self.reason)
    }
}

impl std::error::Error for FilterError {}

#[derive(Debug, Clone)]
pub struct TopicFilter {
    rule: Rule,
    description: String,
}

/// Which topics a flow mirrors, as its front-end's users expect.
#[derive(Debug, Clone)]
enum Rule {
    /// MM1: whitelist minus blacklist, Kafka's internal topics left out.
    Mm1 { include: Option<Regex>, exclude: Option<Regex>, exclude_internal: bool },
    /// MM2's `shouldReplicateTopic` for a flow into `target_alias`.
    Mm2 { policy: ReplicationPolicy, topics: NameFilter, target_alias: String },
}

/// MM1's normalisation of a whitelist/blacklist string.
pub fn normalise(pattern: &str) -> String {
    pattern.trim().replace(',', "|").replace(' ', "").trim_start_matches(['"', '\'']).trim_end_matches(['"', '\'']).to_string()
}

fn compile(option: &'static str, raw: &str) -> Result<Regex, FilterError> {
    let normalised = normalise(raw);
    let err = |reason: String| FilterError { option, pattern: raw.to_string(), reason };
    if option == "--whitelist" && normalised.chars().all(|c| matches!(c, '|' | '(' | ')' | '?' | ':' | '^' | '$')) {
        return Err(err("it can match only an empty topic name, and no topic name is empty, so nothing would be mirrored; \
             use '.*' to mirror every topic, or name the topics (e.g. 'orders|payments')"
            .into()));
    }
    if let Some(construct) = unsupported_construct(&normalised) {
        return Err(err(format!(
            "{construct} is not supported by this mirror's regex engine (linear-time, like RE2); rewrite the pattern without it, \
             e.g. list the topics to keep with '|' and the ones to drop with --blacklist"
        )));
    }
    // `(?:…)` keeps alternation inside the anchors: `a|b` must not become `^a|b$`.
    Regex::new(&format!("^(?:{normalised})$")).map_err(|e| {
        let detail = e.to_string();
        let last = detail.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        let hint = if normalised == "*" || normalised.starts_with('*') { " ('*' alone is not a regex; use '.*' to mean every topic)" } else { "" };
        err(format!("{last}{hint}"))
    })
}

/// Java regex constructs the `regex` crate cannot express, named for the user.
fn unsupported_construct(p: &str) -> Option<&'static str> {
    let bytes = p.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if i + 1 < bytes.len() => {
                let next = bytes[i + 1];
                if next.is_ascii_digit() && next != b'0' {
                    return Some("a back-reference (\\1 …)");
                }
                if next == b'k' && bytes.get(i + 2) == Some(&b'<') {
                    return Some("a named back-reference (\\k<name>)");
                }
                i += 2;
                continue;
            }
            b'(' if bytes.get(i + 1) == Some(&b'?') => {
                let rest = &p[i + 2..];
                if rest.starts_with('=') || rest.starts_with('!') {
                    return Some("look-ahead ((?=…) or (?!…))");
                }
                if rest.starts_with("<=") || rest.starts_with("<!") {
                    return Some("look-behind ((?<=…) or (?<!…))");
                }
                if rest.starts_with('>') {
                    return Some("an atomic group ((?>…))");
                }
            }
            b'+' if i > 0 && matches!(bytes[i - 1], b'+' | b'*' | b'?' | b'}') && !escaped(bytes, i - 1) => {
                return Some("a possessive quantifier (e.g. '.*+')");
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn escaped(bytes: &[u8], i: usize) -> bool {
    let mut n = 0;
    let mut j = i;
    while j > 0 && bytes[j - 1] == b'\\' {
        n += 1;
        j -= 1;
    }
    n % 2 == 1
}

impl TopicFilter {
    pub fn new(include: Option<&str>, exclude: Option<&str>, exclude_internal: bool) -> Result<Self, FilterError> {
        let inc = include.map(|p| compile("--whitelist", p)).transpose()?;
        let exc = exclude.map(|p| compile("--blacklist", p)).transpose()?;
        let mut description = match include {
            Some(p) => format!("include '{}'", normalise(p)),
            None => "include every topic".to_string(),
        };
        if let Some(p) = exclude {
            description.push_str(&format!(" minus '{}'", normalise(p)));
        }
        if exclude_internal {
            description.push_str(", internal topics excluded");
        }
        Ok(TopicFilter { rule: Rule::Mm1 { include: inc, exclude: exc, exclude_internal }, description })
    }

    /// MirrorMaker 2's selection for a flow into `target_alias`: the topic
    /// filter, heartbeats topics always, internal topics and cycles never.
    pub fn mm2(policy: ReplicationPolicy, topics: NameFilter, target_alias: &str) -> TopicFilter {
        let description = format!("{}, heartbeats topics, no internal topics, no topic that came from {target_alias}", topics.description());
        TopicFilter { rule: Rule::Mm2 { policy, topics, target_alias: target_alias.to_string() }, description }
    }

    pub fn matches(&self, topic: &str) -> bool {
        match &self.rule {
            Rule::Mm1 { include, exclude, exclude_internal } => {
                if *exclude_internal && INTERNAL_TOPICS.contains(&topic) {
                    return false;
                }
                if include.as_ref().is_some_and(|inc| !inc.is_match(topic)) {
                    return false;
                }
                !exclude.as_ref().is_some_and(|exc| exc.is_match(topic))
            }
            Rule::Mm2 { policy, topics, target_alias } => policy::should_replicate_topic(policy, topics, target_alias, topic),
        }
    }

    pub fn description(&self) -> &str {
        &self.description
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mm2_flow_takes_heartbeats_and_leaves_internal_topics_and_cycles() {
        let t = TopicFilter::mm2(ReplicationPolicy::default(), NameFilter::new(&["orders.*".into()], &[]).unwrap(), "B");
        assert!(t.matches("orders"));
        assert!(!t.matches("payments"));
        assert!(t.matches("heartbeats") && t.matches("C.heartbeats"), "heartbeats pass whatever the filter says");
        assert!(!t.matches("B.orders"), "a topic that came from the target is a cycle");
        assert!(!t.matches("mm2-offset-syncs.B.internal") && !t.matches("orders.checkpoints.internal"));
    }

    fn f(include: &str) -> TopicFilter {
        TopicFilter::new(Some(include), None, true).unwrap()
    }

    #[test]
    fn normalisation_is_mm1s() {
        assert_eq!(normalise("  a, b ,c  "), "a|b|c");
        assert_eq!(normalise("\"'orders.*'\""), "orders.*");
        assert_eq!(normalise("'x'"), "x");
        assert_eq!(normalise("a b"), "ab");
    }

    #[test]
    fn full_match_not_search() {
        let t = f("orders");
        assert!(t.matches("orders"));
        assert!(!t.matches("orders-eu"));
        assert!(!t.matches("my-orders"));
        let t = f("orders.*");
        assert!(t.matches("orders-eu"));
        assert!(!t.matches("xorders"));
    }

    #[test]
    fn alternation_stays_anchored() {
        let t = f("a,b");
        assert!(t.matches("a") && t.matches("b"));
        assert!(!t.matches("ab") && !t.matches("xb") && !t.matches("ax"));
    }

    #[test]
    fn internal_topics_excluded_unless_asked() {
        let t = f(".*");
        assert!(t.matches("events"));
        for internal in INTERNAL_TOPICS {
            assert!(!t.matches(internal), "{internal}");
        }
        let t = TopicFilter::new(Some(".*"), None, false).unwrap();
        assert!(t.matches("__consumer_offsets"));
    }

    #[test]
    fn include_minus_exclude_and_exclude_alone() {
        let t = TopicFilter::new(Some("logs.*"), Some("logs-tmp.*"), true).unwrap();
        assert!(t.matches("logs-app"));
        assert!(!t.matches("logs-tmp-1"));
        assert!(!t.matches("metrics"));
        let t = TopicFilter::new(None, Some("tmp.*"), true).unwrap();
        assert!(t.matches("anything"));
        assert!(!t.matches("tmp1"));
        assert!(!t.matches("__consumer_offsets"));
    }

    #[test]
    fn java_style_classes_work() {
        let t = f("topic-\\d+");
        assert!(t.matches("topic-12"));
        assert!(!t.matches("topic-x"));
    }

    #[test]
    fn unsupported_constructs_are_named() {
        for (p, word) in
            [("(?!tmp).*", "look-ahead"), ("(?<!x)y", "look-behind"), ("(a)\\1", "back-reference"), ("(?>ab)", "atomic group"), (".*+", "possessive")]
        {
            let e = TopicFilter::new(Some(p), None, true).unwrap_err();
            assert!(e.reason.contains(word), "{p}: {e}");
            assert!(e.to_string().contains("--whitelist"), "{e}");
        }
        // An escaped plus is an ordinary character, not possessive.
        assert!(f("a\\++").matches("a++"));
    }

    /// No topic name is empty, so a pattern that can match only the empty
    /// name would start a mirror that copies nothing, without a word.
    #[test]
    fn a_pattern_for_the_empty_name_only_is_refused() {
        for p in ["", " ", ",", "''", "\"\"", "()", "(|)", "(?:)", "^$"] {
            let e = TopicFilter::new(Some(p), None, true).unwrap_err();
            assert!(e.to_string().starts_with(&format!("--whitelist '{p}'")), "{p}: {e}");
            assert!(e.reason.contains("no topic name is empty") && e.reason.contains("'.*'"), "{p}: {e}");
        }
        // Patterns that also match real names stay valid.
        assert!(f("a|").matches("a"));
        assert!(f("(x)?y").matches("y"));
    }

    #[test]
    fn star_alone_gets_a_hint() {
        let e = TopicFilter::new(Some("*"), None, true).unwrap_err();
        assert!(e.reason.contains("use '.*'"), "{e}");
        let e = TopicFilter::new(None, Some("(unclosed"), true).unwrap_err();
        assert!(e.to_string().starts_with("--blacklist '(unclosed' is an invalid regex"), "{e}");
    }
}
