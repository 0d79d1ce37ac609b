//! Windowed statistics as Kafka's metrics library keeps them (`SampledStat`
//! with its default `MetricConfig`: two samples of 30 s), so the series
//! named after MirrorMaker 2's (`record-rate`, `record-age-ms-max`, ...)
//! mean what they mean in Java: a rate over the last 30-60 s, and the
//! min/max/avg of the values recorded in that window.
//!
//! Callers record whole batches (a count, a sum, a min and a max) under a
//! lock taken once per batch, never per record.

/// Kafka's `metrics.sample.window.ms` default.
pub const SAMPLE_MS: i64 = 30_000;
/// Kafka's `metrics.num.samples` default.
const SAMPLES: usize = 2;

#[derive(Debug, Clone, Copy)]
struct Sample {
    /// When the sample started (Kafka's `lastWindowMs`).
    start: i64,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Sample {
    fn empty(start: i64) -> Sample {
        Sample { start, count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY }
    }
}

/// A batch of values to record at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batch {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Default for Batch {
    fn default() -> Self {
        Batch { count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY }
    }
}

impl Batch {
    pub fn add(&mut self, value: f64) {
        self.count += 1;
        self.sum += value;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// `n` events of total `sum` whose min and max do not matter (a rate's).
    pub fn total(n: u64, sum: f64) -> Batch {
        Batch { count: n, sum, min: sum, max: sum }
    }
}

/// Two samples of [`SAMPLE_MS`], the older one replaced when the current
/// one is full.
#[derive(Debug, Clone)]
pub struct Sampled {
    samples: [Sample; SAMPLES],
    current: usize,
}

impl Sampled {
    pub fn new(now: i64) -> Sampled {
        Sampled { samples: [Sample::empty(now); SAMPLES], current: 0 }
    }

    pub fn record(&mut self, b: &Batch, now: i64) {
        if b.count == 0 {
            return;
        }
        if now - self.samples[self.current].start >= SAMPLE_MS {
            self.current = (self.current + 1) % SAMPLES;
            self.samples[self.current] = Sample::empty(now);
        }
        let s = &mut self.samples[self.current];
        s.count += b.count;
        s.sum += b.sum;
        s.min = s.min.min(b.min);
        s.max = s.max.max(b.max);
    }

    /// Kafka's `purgeObsoleteSamples`: a sample older than the whole window
    /// counts for nothing.
    fn purge(&mut self, now: i64) {
        for s in &mut self.samples {
            if now - s.start >= SAMPLE_MS * SAMPLES as i64 {
                *s = Sample::empty(now);
            }
        }
    }

    /// (min, max, avg) of the window; None when nothing was recorded in it,
    /// where Java answers NaN: a NaN sample would turn every `sum()` over
    /// the series into NaN, so the series is left out instead, which is how
    /// Prometheus expects "no value" to look.
    pub fn stats(&mut self, now: i64) -> Option<(f64, f64, f64)> {
        self.purge(now);
        let count: u64 = self.samples.iter().map(|s| s.count).sum();
        if count == 0 {
            return None;
        }
        let full = self.samples.iter().filter(|s| s.count > 0);
        let (min, max) = full.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| (lo.min(s.min), hi.max(s.max)));
        let sum: f64 = self.samples.iter().map(|s| s.sum).sum();
        Some((min, max, sum / count as f64))
    }

    /// The sum recorded per second over the window, as Kafka's `Rate`
    /// measures it: over the time since the oldest sample started, and at
    /// least over all but one whole sample, so a rate just after a start is
    /// not inflated by a short elapsed time.
    pub fn rate(&mut self, now: i64) -> f64 {
        self.purge(now);
        let sum: f64 = self.samples.iter().map(|s| s.sum).sum();
        let oldest = self.samples.iter().map(|s| s.start).min().unwrap_or(now);
        let mut elapsed = (now - oldest).max(0);
        let full = elapsed / SAMPLE_MS;
        let least = SAMPLES as i64 - 1;
        if full < least {
            elapsed += (least - full) * SAMPLE_MS;
        }
        sum / (elapsed as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(values: &[f64]) -> Batch {
        let mut b = Batch::default();
        values.iter().for_each(|v| b.add(*v));
        b
    }

    #[test]
    fn stats_cover_two_samples_and_forget_older_ones() {
        let mut s = Sampled::new(0);
        assert_eq!(s.stats(0), None, "nothing recorded: no value, not NaN");
        s.record(&batch(&[10.0, 30.0]), 1_000);
        s.record(&batch(&[50.0]), 31_000);
        assert_eq!(s.stats(31_000), Some((10.0, 50.0, 30.0)));
        // The third sample replaces the first.
        s.record(&batch(&[5.0]), 61_000);
        assert_eq!(s.stats(61_000), Some((5.0, 50.0, 27.5)));
        // Nothing for a whole window: no value again.
        assert_eq!(s.stats(130_000), None);
    }

    #[test]
    fn rate_is_over_at_least_one_whole_sample_as_kafka_measures_it() {
        let mut s = Sampled::new(0);
        s.record(&Batch::total(300, 300.0), 1_000);
        // 2 s after the start the rate is over 30 s, not 2 s.
        assert!((s.rate(2_000) - 300.0 / 32.0).abs() < 1e-9, "{}", s.rate(2_000));
        // A steady 100 per second for 60 s measures 100 per second.
        let mut s = Sampled::new(0);
        for t in (0..60_000).step_by(1000) {
            s.record(&Batch::total(100, 100.0), t);
        }
        let r = s.rate(60_000);
        assert!((90.0..=110.0).contains(&r), "{r}");
        // Idle for over a minute: zero.
        assert_eq!(s.rate(200_000), 0.0);
    }
}
