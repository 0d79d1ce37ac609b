//! What a stream's control thread asks of the topic sync beside it
//! ([`TargetTopics`]), and the answer it gets ([`Reconciled`]).
//!
//! The control thread must not subscribe a source topic before its target
//! topic is there (or the producer's first record would make the broker
//! auto-create it with its own defaults); making and growing target topics
//! is MirrorMaker 2's side work, which lives above the pipeline (the
//! engine's `mm2` part, `topics`). So the pipeline says here what it needs, and the
//! engine hands each stream an implementation: the pipeline never imports
//! the MM2 side.

use std::collections::HashSet;
use std::sync::Arc;

use rdkafka::error::KafkaError;

/// A flow's target topics as its streams see them: listed, reconciled with
/// the source's at every topic refresh, and settled in the background.
pub trait TargetTopics: Send + Sync {
    /// Every source topic with its partition count (topics the broker
    /// answers with an error left out), by the sync's own source client.
    fn source_topics(&self) -> Result<Vec<(String, usize)>, KafkaError>;

    /// Changes whenever topics held back by [`Self::reconcile`] were
    /// settled since: a stream that saw another value at its last
    /// reconcile looks at its topics again now.
    fn generation(&self) -> u64;

    /// Called with the matching source topics and their partition counts on
    /// every topic refresh, before subscribing: makes or grows what the
    /// target lacks, and says which topics are not to be subscribed yet.
    /// Takes the `Arc` because the work may go on in the background.
    fn reconcile(self: Arc<Self>, topics: &[(String, usize)]) -> Reconciled;
}

/// What [`TargetTopics::reconcile`] found.
pub struct Reconciled {
    /// The topics not to subscribe to yet.
    pub deferred: HashSet<String>,
    /// The target could not be listed (this error), so new topics are
    /// deferred and grown ones not grown on the target yet: a check of
    /// the target's partitions now would find them short for no fault
    /// but the outage.
    pub target_unanswered: Option<String>,
}

/// Up to ten names and how many more, for a log line about many topics.
pub fn shortened<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    let shown = names.iter().take(10).copied().collect::<Vec<_>>().join(", ");
    match names.len() {
        n if n > 10 => format!("{shown} and {} more", n - 10),
        _ => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_topic_lists_are_shortened_in_the_log() {
        let topics: Vec<String> = (0..13).map(|i| format!("t{i:04}")).collect();
        assert_eq!(shortened(topics.iter().take(2).map(String::as_str)), "t0000, t0001");
        let long = shortened(topics.iter().map(String::as_str));
        assert!(long.starts_with("t0000, t0001,") && long.ends_with("t0009 and 3 more"), "{long}");
    }
}
