//! The source's consumer groups a checkpointer makes checkpoints of, as
//! Java's `MirrorCheckpointConnector` (3.9) knows them: listed at the
//! start, listed again every `refresh.groups.interval.seconds` when
//! `refresh.groups.enabled`, never again when not. A listing keeps the
//! groups the `groups` filter takes that hold an offset of at least one
//! topic the flow mirrors (Java's `findConsumerGroups`); between listings
//! the groups known get their checkpoints every
//! `emit.checkpoints.interval.seconds`, and a group made since waits for
//! the next listing, as behind Java.
//!
//! One difference: a listing that fails is tried again at the next
//! checkpoint round rather than at the next refresh (Java's scheduler
//! waits a whole interval, and with the refresh off a failed first
//! listing leaves Java's connector with no group for good). The groups
//! known before are kept meanwhile.

use std::time::{Duration, Instant};

use crate::kafka::groups::{GroupError, GroupOffset};

/// The groups known and when they are listed next.
pub(super) struct KnownGroups {
    /// `refresh.groups.interval.seconds`; None: listed once.
    refresh: Option<Duration>,
    /// None until a listing has succeeded.
    groups: Option<Vec<String>>,
    /// When the last successful listing began.
    listed_at: Option<Instant>,
}

/// What a successful listing changed, for the log.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Change {
    pub found: usize,
    pub new: usize,
    pub gone: usize,
    pub first: bool,
}

impl KnownGroups {
    pub fn new(refresh: Option<Duration>) -> KnownGroups {
        KnownGroups { refresh, groups: None, listed_at: None }
    }

    /// Whether the groups are to be listed at a round beginning `now`:
    /// until a listing has succeeded, at every round; then once
    /// `refresh` has passed since it began, never with no refresh.
    pub fn due(&self, now: Instant) -> bool {
        match (self.listed_at, self.refresh) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(at), Some(every)) => at.checked_add(every).is_none_or(|next| now >= next),
        }
    }

    /// The groups known; None until a listing has succeeded (then the
    /// checkpoints read back may name groups deleted since).
    pub fn groups(&self) -> Option<&[String]> {
        self.groups.as_deref()
    }

    /// Lists the groups if due at `now` (see [`Self::due`]): `list` gives
    /// the source's groups the filter takes, `offsets` a group's committed
    /// offsets, `mirrored` whether the flow mirrors a topic. A group whose
    /// offsets cannot be read is kept (its next round says why, and a
    /// passing error must not drop a group). None when not due; the error
    /// of a failed listing, which changes nothing.
    pub fn refresh(
        &mut self,
        now: Instant,
        list: impl FnOnce() -> Result<Vec<String>, GroupError>,
        offsets: impl Fn(&str) -> Result<Vec<GroupOffset>, GroupError>,
        mirrored: impl Fn(&str) -> bool,
    ) -> Option<Result<Change, GroupError>> {
        if !self.due(now) {
            return None;
        }
        let listed = match list() {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        let mut found: Vec<String> = listed.into_iter().filter(|g| offsets(g).map_or(true, |o| o.iter().any(|o| mirrored(&o.topic)))).collect();
        found.sort();
        found.dedup();
        let before = self.groups.as_deref().unwrap_or_default();
        let change = Change {
            found: found.len(),
            new: found.iter().filter(|g| !before.contains(g)).count(),
            gone: before.iter().filter(|g| !found.contains(g)).count(),
            first: self.groups.is_none(),
        };
        self.groups = Some(found);
        self.listed_at = Some(now);
        Some(Ok(change))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(topic: &str) -> GroupOffset {
        GroupOffset { topic: topic.into(), partition: 0, offset: 1, metadata: String::new() }
    }

    /// The source of these tests: g1 and g2 read the mirrored topic, idle
    /// reads another, broken's offsets cannot be read.
    fn offsets_of(group: &str) -> Result<Vec<GroupOffset>, GroupError> {
        match group {
            "idle" => Ok(vec![offset("other")]),
            "broken" => Err(GroupError::Failed { what: "list".into(), detail: "coordinator moving".into() }),
            _ => Ok(vec![offset("other"), offset("orders")]),
        }
    }

    fn mirrored(topic: &str) -> bool {
        topic == "orders"
    }

    fn listing(groups: &[&str]) -> impl FnOnce() -> Result<Vec<String>, GroupError> {
        let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        move || Ok(groups)
    }

    fn failing() -> Result<Vec<String>, GroupError> {
        Err(GroupError::Failed { what: "list groups".into(), detail: "timed out".into() })
    }

    #[test]
    fn listed_at_start_then_every_refresh_only() {
        let t0 = Instant::now();
        let every = Duration::from_secs(600);
        let mut k = KnownGroups::new(Some(every));
        assert!(k.groups().is_none(), "nothing known before the first listing");
        let c = k.refresh(t0, listing(&["g1", "idle", "broken"]), offsets_of, mirrored).unwrap().unwrap();
        assert_eq!(c, Change { found: 2, new: 2, gone: 0, first: true });
        assert_eq!(k.groups().unwrap(), ["broken", "g1"], "only groups holding offsets of mirrored topics; an unreadable one kept");
        // A group made since waits for the refresh.
        assert!(k.refresh(t0 + every - Duration::from_millis(1), listing(&["g1", "g2"]), offsets_of, mirrored).is_none());
        assert_eq!(k.groups().unwrap(), ["broken", "g1"]);
        let c = k.refresh(t0 + every, listing(&["g1", "g2"]), offsets_of, mirrored).unwrap().unwrap();
        assert_eq!(c, Change { found: 2, new: 1, gone: 1, first: false });
        assert_eq!(k.groups().unwrap(), ["g1", "g2"]);
        assert!(!k.due(t0 + every + every - Duration::from_millis(1)) && k.due(t0 + every + every), "the next one an interval after");
    }

    #[test]
    fn with_no_refresh_listed_once() {
        let t0 = Instant::now();
        let mut k = KnownGroups::new(None);
        k.refresh(t0, listing(&["g1"]), offsets_of, mirrored).unwrap().unwrap();
        for later in [Duration::from_secs(1), Duration::from_secs(86_400 * 365)] {
            assert!(k.refresh(t0 + later, listing(&["g1", "g2"]), offsets_of, mirrored).is_none(), "never listed again");
        }
        assert_eq!(k.groups().unwrap(), ["g1"]);
    }

    #[test]
    fn a_failed_listing_changes_nothing_and_is_tried_again_at_the_next_round() {
        let t0 = Instant::now();
        let every = Duration::from_secs(600);
        let mut k = KnownGroups::new(None);
        assert!(k.refresh(t0, failing, offsets_of, mirrored).unwrap().is_err());
        assert!(k.groups().is_none() && k.due(t0 + Duration::from_secs(1)), "a failed first listing is tried again, even with no refresh");
        k.refresh(t0 + Duration::from_secs(1), listing(&["g1"]), offsets_of, mirrored).unwrap().unwrap();
        assert!(!k.due(t0 + every * 10));

        let mut k = KnownGroups::new(Some(every));
        k.refresh(t0, listing(&["g1"]), offsets_of, mirrored).unwrap().unwrap();
        assert!(k.refresh(t0 + every, failing, offsets_of, mirrored).unwrap().is_err());
        assert_eq!(k.groups().unwrap(), ["g1"], "the groups known are kept");
        assert!(k.due(t0 + every + Duration::from_secs(1)), "and the listing tried again at the next round");
    }
}
