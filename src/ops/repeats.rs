//! Collapses a log line that repeats. While a cluster is down librdkafka
//! reports the same error for every reconnect attempt: a source broker
//! gone for 51 s wrote 4,239 lines (83 a second) into the log. The first
//! of a kind is logged at once, then at most one per [`EVERY`], saying how
//! many were left out.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// At most one line of a kind per this long, after the first.
pub const EVERY: Duration = Duration::from_secs(30);

/// Lines of each kind: when one was last logged, and how many were left out since.
#[derive(Default)]
struct Seen(HashMap<String, (Instant, u64)>);

impl Seen {
    /// Whether a line of kind `key` is to be logged at `now`: Some(the
    /// number left out since the last one logged), or None to leave it out.
    fn check(&mut self, key: &str, now: Instant) -> Option<u64> {
        match self.0.get_mut(key) {
            Some((last, left_out)) if now.duration_since(*last) < EVERY => {
                *left_out += 1;
                None
            }
            Some((last, left_out)) => {
                *last = now;
                Some(std::mem::take(left_out))
            }
            None => {
                self.0.insert(key.to_string(), (now, 0));
                Some(0)
            }
        }
    }
}

/// Whether to log a line of kind `key` now (see [`Seen::check`]); the
/// kinds are shared by the whole process.
pub fn check(key: &str) -> Option<u64> {
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    SEEN.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner()).check(key, Instant::now())
}

/// The note a line gets when `left_out` lines like it were not logged.
pub fn note(left_out: u64) -> String {
    if left_out == 0 {
        String::new()
    } else {
        format!(" ({left_out} more like it since the last one were not logged)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_a_kind_is_logged_then_one_per_interval_with_the_count_left_out() {
        let mut seen = Seen::default();
        let t0 = Instant::now();
        assert_eq!(seen.check("a", t0), Some(0));
        assert_eq!(seen.check("b", t0), Some(0), "kinds are counted apart");
        for i in 1..=10 {
            assert_eq!(seen.check("a", t0 + Duration::from_millis(26 * i)), None);
        }
        assert_eq!(seen.check("a", t0 + EVERY), Some(10));
        assert_eq!(seen.check("a", t0 + EVERY + Duration::from_secs(1)), None);
        assert_eq!(seen.check("a", t0 + EVERY * 3), Some(1));
        assert_eq!(note(0), "");
        assert_eq!(note(10), " (10 more like it since the last one were not logged)");
    }
}
