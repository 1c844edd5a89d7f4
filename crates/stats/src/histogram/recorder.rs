//! The live, shared [`Histogram`] that many threads record into, and the [`IntervalSampler`] that turns its
//! cumulative counters into per-interval [`Snapshot`]s.
//!
//! Not here: percentiles, merging, the wire form (see `snapshot` and `codec`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::layout::{BUCKETS, bucket_index};
use super::snapshot::Snapshot;

/// A fixed-size (8 KiB), lock-free latency histogram in nanoseconds.
///
/// `record` is O(1) and wait-free: one counter increment and one sum addition (two atomic read-modify-writes),
/// plus a load and compare each for the exact minimum and maximum (a read-modify-write only for a new extreme).
/// The count is not stored; it is the sum of the buckets, computed by [`Histogram::snapshot`].
///
/// Counters are `u64` and never wrap in practice; the sum of all recorded nanoseconds wraps after 2^64 ns
/// (584 years of latency in total): interval diffs stay exact across the wrap, and a [`Snapshot`] whose sum
/// cannot be right falls back to a mean from bucket midpoints (see [`Snapshot::mean`]).
///
/// Layout: `#[repr(C)]` with the read-mostly minimum and maximum on the first cache line and the sum, written
/// on every record, on the last, so that threads recording concurrently do not invalidate each other's copy of
/// the extremes.
#[repr(C, align(64))]
pub struct Histogram {
    min: AtomicU64,
    max: AtomicU64,
    counts: [AtomicU64; BUCKETS],
    sum: AtomicU64,
}

impl Histogram {
    /// An empty histogram. `const`, so it can be a `static`.
    pub const fn new() -> Self {
        Self {
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            counts: [const { AtomicU64::new(0) }; BUCKETS],
            sum: AtomicU64::new(0),
        }
    }

    /// Records one value in nanoseconds. Values below 1 µs or above 1 h are counted in the first or last
    /// bucket; the minimum, maximum and sum stay exact for every value.
    #[inline]
    pub fn record(&self, ns: u64) {
        // Extremes and sum first, the bucket last with Release: a snapshot that sees the bucket
        // (Acquire) also sees this value in the extremes and the sum.
        if ns < self.min.load(Ordering::Relaxed) {
            self.min.fetch_min(ns, Ordering::Relaxed);
        }
        if ns > self.max.load(Ordering::Relaxed) {
            self.max.fetch_max(ns, Ordering::Relaxed);
        }
        self.sum.fetch_add(ns, Ordering::Relaxed);
        self.counts[bucket_index(ns)].fetch_add(1, Ordering::Release);
    }

    /// Records a [`Duration`] (saturating at `u64::MAX` nanoseconds, about 584 years).
    #[inline]
    pub fn record_duration(&self, duration: Duration) {
        self.record(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Everything recorded so far. Lock-free: concurrent records are either in it or not, bucket by bucket;
    /// the minimum and maximum are kept consistent with the buckets that were read.
    pub fn snapshot(&self) -> Snapshot {
        let buckets = self
            .counts
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let n = c.load(Ordering::Acquire);
                (n > 0).then_some((i as u16, n))
            })
            .collect();
        Snapshot::from_parts(
            buckets,
            self.min.load(Ordering::Relaxed),
            self.max.load(Ordering::Relaxed),
            self.sum.load(Ordering::Relaxed),
        )
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.snapshot();
        f.debug_struct("Histogram")
            .field("count", &s.count())
            .field("min", &s.min())
            .field("max", &s.max())
            .finish_non_exhaustive()
    }
}

/// The per-interval sampler (e.g. once a minute): keeps the previous cumulative snapshot and returns what was
/// recorded since.
///
/// Interval counts and the interval sum are exact; the interval minimum and maximum are exact when they are a
/// new all-time extreme and otherwise estimated from the lowest and highest non-empty bucket (within 1/64).
#[derive(Debug, Clone, Default)]
pub struct IntervalSampler {
    previous: Snapshot,
}

impl IntervalSampler {
    /// A sampler whose first interval starts when the histogram was created.
    pub fn new() -> Self {
        Self::default()
    }

    /// A sampler whose first interval starts now.
    pub fn starting_at(histogram: &Histogram) -> Self {
        Self {
            previous: histogram.snapshot(),
        }
    }

    /// What `histogram` recorded since the previous call (or since the start). Always pass the same histogram.
    pub fn sample(&mut self, histogram: &Histogram) -> Snapshot {
        let current = histogram.snapshot();
        let interval = current.diff(&self.previous);
        // An interval with no visible bucket change is empty, sum included; a record caught between its sum
        // and its bucket then belongs to the interval that sees its bucket, so the baseline stays put and the
        // interval sums still add up to the histogram's sum.
        if !interval.is_empty() {
            self.previous = current;
        }
        interval
    }

    /// The cumulative snapshot taken by the last [`sample`](Self::sample).
    pub fn cumulative(&self) -> &Snapshot {
        &self.previous
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_in_8_kib() {
        assert!(
            std::mem::size_of::<Histogram>() <= 8192,
            "{}",
            std::mem::size_of::<Histogram>()
        );
    }

    #[test]
    fn records_and_snapshots() {
        let h = Histogram::new();
        assert!(h.snapshot().is_empty());
        h.record(1_500);
        h.record_duration(Duration::from_millis(18));
        h.record(7);
        let s = h.snapshot();
        assert_eq!(s.count(), 3);
        assert_eq!(s.min(), 7);
        assert_eq!(s.max(), 18_000_000);
        assert_eq!(s.sum(), 18_001_507);
        assert_eq!(s.mean(), 6_000_502);
    }

    #[test]
    fn huge_duration_saturates() {
        let h = Histogram::new();
        h.record_duration(Duration::MAX);
        assert_eq!(h.snapshot().max(), u64::MAX);
    }

    #[test]
    fn sampler_returns_each_interval() {
        let h = Histogram::new();
        let mut sampler = IntervalSampler::new();
        for v in [2_000, 3_000, 5_000_000] {
            h.record(v);
        }
        let first = sampler.sample(&h);
        assert_eq!(
            (first.count(), first.min(), first.max()),
            (3, 2_000, 5_000_000)
        );
        assert!(sampler.sample(&h).is_empty());
        h.record(1_000);
        h.record(40_000);
        let third = sampler.sample(&h);
        assert_eq!(third.count(), 2);
        assert_eq!(third.sum(), 41_000);
        // 1 000 is a new all-time minimum, so it is exact; 40 000 is estimated from its bucket.
        assert_eq!(third.min(), 1_000);
        assert!(third.max().abs_diff(40_000) * 64 <= 40_000);
        assert_eq!(sampler.cumulative().count(), 5);
    }

    #[test]
    fn concurrent_records_are_all_counted() {
        let h = Histogram::new();
        let threads = 4u64;
        let per_thread = 20_000u64;
        std::thread::scope(|scope| {
            for t in 0..threads {
                let h = &h;
                scope.spawn(move || {
                    for i in 0..per_thread {
                        h.record(1_000 + (t * per_thread + i) * 997);
                    }
                });
            }
        });
        let s = h.snapshot();
        let n = threads * per_thread;
        assert_eq!(s.count(), n);
        assert_eq!(s.min(), 1_000);
        assert_eq!(s.max(), 1_000 + (n - 1) * 997);
        assert_eq!(s.sum(), n * 1_000 + 997 * n * (n - 1) / 2);
    }
}
