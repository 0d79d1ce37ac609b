//! Process-wide rate limits: `--throttle.records.per.sec` and
//! `--throttle.bytes.per.sec`.
//!
//! A token bucket per limit, shared by every producer worker. A worker takes
//! tokens before it hands a record to its producer and sleeps while the
//! bucket is in debt; its channel then fills and the consumer streams pause
//! their partitions (the backpressure path every slow target already uses),
//! so nothing is ever dropped for the sake of the rate.
//!
//! Smoothness: the bucket holds at most a tenth of a second's worth of
//! tokens (at least one record), far below the one second's worth that would
//! allow twice the rate in a single second after an idle spell. A record
//! larger than the bucket is let through once the bucket is full and leaves
//! it in debt, so the long-run rate still holds for big records.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The share of a second's tokens the bucket can save up.
const BURST_SECONDS: f64 = 0.1;

/// One token bucket: `rate` tokens per second, at most `capacity` saved.
#[derive(Debug)]
struct Bucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn new(rate: u64, min_capacity: f64, now: Instant) -> Bucket {
        let rate = rate as f64;
        let capacity = (rate * BURST_SECONDS).max(min_capacity);
        // Starts empty: a mirror started on a backlog begins at the rate, not with a burst.
        Bucket { rate, capacity, tokens: 0.0, at: now }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.capacity);
        self.at = now;
    }

    /// How long until `cost` may be taken: zero when the bucket is full
    /// enough (or full, for a cost above the capacity).
    fn wait_for(&self, cost: f64) -> Duration {
        let need = cost.min(self.capacity) - self.tokens;
        if need <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(need / self.rate)
        }
    }
}

/// The process's limits; `None` fields are unlimited.
#[derive(Debug)]
pub struct Throttle {
    buckets: Mutex<(Option<Bucket>, Option<Bucket>)>,
}

impl Throttle {
    /// `None` when neither limit is set (the hot path then skips the lock).
    pub fn new(records_per_sec: Option<u64>, bytes_per_sec: Option<u64>) -> Option<Throttle> {
        if records_per_sec.is_none() && bytes_per_sec.is_none() {
            return None;
        }
        let now = Instant::now();
        Some(Throttle { buckets: Mutex::new((records_per_sec.map(|r| Bucket::new(r, 1.0, now)), bytes_per_sec.map(|b| Bucket::new(b, 1.0, now)))) })
    }

    /// Takes one record of `bytes` if the limits allow it now; otherwise
    /// returns how long to wait before asking again.
    pub fn try_take(&self, bytes: usize, now: Instant) -> Result<(), Duration> {
        let mut guard = self.buckets.lock().unwrap();
        let (records, size) = &mut *guard;
        let mut wait = Duration::ZERO;
        if let Some(b) = records.as_mut() {
            b.refill(now);
            wait = wait.max(b.wait_for(1.0));
        }
        if let Some(b) = size.as_mut() {
            b.refill(now);
            wait = wait.max(b.wait_for(bytes as f64));
        }
        if !wait.is_zero() {
            return Err(wait);
        }
        if let Some(b) = records.as_mut() {
            b.tokens -= 1.0;
        }
        if let Some(b) = size.as_mut() {
            b.tokens -= bytes as f64;
        }
        Ok(())
    }

    /// Blocks until one record of `bytes` may go. Returns false, without
    /// taking anything, when `give_up` says to stop waiting (the drain deadline).
    pub fn take(&self, bytes: usize, give_up: impl Fn() -> bool) -> bool {
        loop {
            match self.try_take(bytes, Instant::now()) {
                Ok(()) => return true,
                Err(wait) => {
                    if give_up() {
                        return false;
                    }
                    // Short naps keep the deadline check responsive.
                    std::thread::sleep(wait.min(Duration::from_millis(50)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the bucket with a simulated clock: a worker that always has
    /// a record ready, asking again exactly when told to.
    fn simulate(t: &Throttle, bytes: usize, seconds: f64) -> Vec<f64> {
        let start = Instant::now();
        let mut now = start;
        let mut sent = Vec::new();
        while now.duration_since(start).as_secs_f64() < seconds {
            match t.try_take(bytes, now) {
                Ok(()) => sent.push(now.duration_since(start).as_secs_f64()),
                Err(w) => now += w,
            }
        }
        sent
    }

    fn max_in_any_second(times: &[f64]) -> usize {
        let mut best = 0;
        let mut j = 0;
        for i in 0..times.len() {
            while times[i] - times[j] >= 1.0 {
                j += 1;
            }
            best = best.max(i - j + 1);
        }
        best
    }

    #[test]
    fn no_limits_means_no_throttle() {
        assert!(Throttle::new(None, None).is_none());
    }

    #[test]
    fn records_rate_holds_and_never_bursts() {
        let t = Throttle::new(Some(1000), None).unwrap();
        let sent = simulate(&t, 100, 10.0);
        let n = sent.len() as f64;
        assert!((n - 10_000.0).abs() <= 101.0, "{n} records in 10 s at 1000/s");
        let peak = max_in_any_second(&sent);
        assert!(peak <= 1101, "{peak} records in one second at 1000/s");
    }

    #[test]
    fn idle_spell_saves_at_most_a_tenth_of_a_second() {
        let t = Throttle::new(Some(1000), None).unwrap();
        let later = Instant::now() + Duration::from_secs(30);
        let mut burst = 0;
        while t.try_take(10, later).is_ok() {
            burst += 1;
        }
        assert_eq!(burst, 100);
    }

    #[test]
    fn bytes_rate_holds_for_records_larger_than_the_bucket() {
        // 10 kB/s with 5 kB records: the bucket (1 kB) is smaller than a record.
        let t = Throttle::new(None, Some(10_000)).unwrap();
        let sent = simulate(&t, 5_000, 20.0);
        let bytes = sent.len() as f64 * 5_000.0;
        assert!((bytes / 20.0 - 10_000.0).abs() <= 500.0, "{} B/s", bytes / 20.0);
        assert!(max_in_any_second(&sent) * 5_000 <= 20_000);
    }

    #[test]
    fn the_tighter_limit_wins() {
        let t = Throttle::new(Some(1000), Some(50_000)).unwrap();
        let sent = simulate(&t, 500, 10.0);
        // Bytes allow 100 records/s, records allow 1000/s.
        assert!((sent.len() as f64 - 1000.0).abs() <= 20.0, "{}", sent.len());
    }

    #[test]
    fn take_gives_up_when_told() {
        // The bucket starts empty, so the first record has to wait.
        let t = Throttle::new(Some(1), None).unwrap();
        assert!(!t.take(1, || true));
        let t = Throttle::new(Some(1000), None).unwrap();
        assert!(t.take(1, || false));
    }
}
