//! [`Snapshot`]: a plain, owned copy of a histogram's state, and everything computed from it: count, min,
//! max, mean, percentiles, the [`LatencySummary`], interval diffs and merges.
//!
//! Not here: recording (see `recorder`), the wire form (see `codec`), MQCloud's view (see `mqcloud`).

use serde::{Deserialize, Serialize};

use super::layout::{BUCKETS, bucket_index, representative, span};

/// A histogram's state at one moment (or over one interval, or merged from many): sparse bucket counts plus
/// the minimum, maximum and sum.
///
/// Invariants (kept by every constructor, checked by [`Snapshot::decode`]): buckets are sorted by strictly
/// increasing index below [`BUCKETS`](super::BUCKETS) and non-empty; an empty snapshot has min = max = sum = 0;
/// otherwise `min <= max`, `min` falls in the first non-empty bucket and `max` in the last.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub(crate) buckets: Vec<(u16, u64)>,
    pub(crate) count: u64,
    pub(crate) min: u64,
    pub(crate) max: u64,
    pub(crate) sum: u64,
}

/// The numbers a client reports and a chart shows, all in nanoseconds. Percentiles are within 1/64 (1.5625 %)
/// of the exact nearest-rank percentile for values in [1 µs, 1 h].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of values.
    pub count: u64,
    /// Smallest value (exact for cumulative snapshots, see [`Snapshot::min`]).
    pub min_ns: u64,
    /// Largest value (exact for cumulative snapshots, see [`Snapshot::max`]).
    pub max_ns: u64,
    /// Mean, rounded to the nearest nanosecond (see [`Snapshot::mean`]).
    pub mean_ns: u64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
}

impl Snapshot {
    /// A snapshot with no values.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Builds a snapshot from sorted non-empty buckets, normalising min and max into the first and last bucket
    /// (a record racing with a snapshot may have updated an extreme before its bucket).
    pub(crate) fn from_parts(buckets: Vec<(u16, u64)>, min: u64, max: u64, sum: u64) -> Self {
        debug_assert!(buckets.windows(2).all(|w| w[0].0 < w[1].0));
        debug_assert!(
            buckets
                .iter()
                .all(|&(i, c)| usize::from(i) < BUCKETS && c > 0)
        );
        let (Some(&(first, _)), Some(&(last, _))) = (buckets.first(), buckets.last()) else {
            return Self::default();
        };
        let count = buckets
            .iter()
            .fold(0u64, |acc, &(_, c)| acc.saturating_add(c));
        let (first_low, first_high) = span(usize::from(first));
        let (last_low, last_high) = span(usize::from(last));
        let min = min.clamp(first_low, first_high);
        let max = max.clamp(last_low, last_high).max(min);
        Self {
            buckets,
            count,
            min,
            max,
            sum,
        }
    }

    /// Number of values (saturating at `u64::MAX`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Smallest value in nanoseconds, 0 when empty. Exact for a histogram's snapshot and for merges of exact
    /// snapshots; for an interval ([`Snapshot::diff`]) exact when it is a new all-time minimum, otherwise the
    /// lowest non-empty bucket's midpoint clamped to the all-time extremes (within 1/64).
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest value in nanoseconds, 0 when empty; exact or estimated as for [`Snapshot::min`].
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Sum of all values in nanoseconds, modulo 2^64.
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// The non-empty buckets as `(index, count)` in increasing index order; see
    /// [`bucket_range`](super::bucket_range).
    pub fn buckets(&self) -> impl ExactSizeIterator<Item = (usize, u64)> + '_ {
        self.buckets.iter().map(|&(i, c)| (usize::from(i), c))
    }

    /// Mean in nanoseconds rounded to the nearest, 0 when empty. Exact (sum / count) whenever the sum is
    /// consistent with the buckets; a sum that cannot be right (it wrapped past 2^64, or a record raced with the
    /// snapshot) gives way to the mean of the bucket midpoints, within 1/64 for values in [1 µs, 1 h].
    pub fn mean(&self) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let (mut low, mut high, mut estimate) = (0u128, 0u128, 0u128);
        for &(i, c) in &self.buckets {
            let i = usize::from(i);
            let (l, h) = span(i);
            let c = u128::from(c);
            low += c * u128::from(l);
            high += c * u128::from(h);
            estimate += c * u128::from(representative(i).clamp(self.min, self.max));
        }
        // The sum can only have wrapped if count × max reaches 2^64 (584 years of latency in total); a sum that
        // may have wrapped, or that disagrees with the buckets (a racing record), gives way to the estimate.
        let may_wrap = u128::from(self.count) * u128::from(self.max) > u128::from(u64::MAX);
        let total = if !may_wrap && (low..=high).contains(&u128::from(self.sum)) {
            u128::from(self.sum)
        } else {
            estimate
        };
        let count = u128::from(self.count);
        ((total + count / 2) / count) as u64
    }

    /// The value at quantile `q` in [0, 1] (clamped; NaN counts as 0), nearest-rank: the value of rank
    /// `max(1, ceil(q · count))` in sorted order, estimated by its bucket's midpoint clamped to [min, max].
    /// Ranks 1 and `count` return [`min`](Self::min) and [`max`](Self::max). 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        // `as` saturates; the product can round above count for huge counts, hence the clamp.
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank == 1 {
            return self.min;
        }
        if rank == self.count {
            return self.max;
        }
        let mut seen = 0u64;
        for &(i, c) in &self.buckets {
            seen = seen.saturating_add(c);
            if seen >= rank {
                return representative(usize::from(i)).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The value at percentile `p` in [0, 100]: `quantile(p / 100)`.
    pub fn percentile(&self, p: f64) -> u64 {
        self.quantile(p / 100.0)
    }

    /// Count, min, max, mean, p50, p90, p99 and p99.9.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            min_ns: self.min,
            max_ns: self.max,
            mean_ns: self.mean(),
            p50_ns: self.quantile(0.5),
            p90_ns: self.quantile(0.9),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
        }
    }

    /// What was recorded between `earlier` and `self`, two snapshots of the same histogram (or cumulative
    /// merges of the same clients), `earlier` taken first.
    ///
    /// Bucket counts and the sum are exact. The interval's minimum is `self.min` when the all-time minimum
    /// moved down since `earlier` (so it was recorded in the interval), otherwise the lowest non-empty bucket's
    /// midpoint clamped to `[self.min, self.max]`; the maximum likewise. Counts that went down (snapshots of
    /// different histograms) count as 0.
    pub fn diff(&self, earlier: &Snapshot) -> Snapshot {
        if earlier.is_empty() {
            return self.clone();
        }
        let mut buckets = Vec::with_capacity(self.buckets.len());
        let mut old = earlier.buckets.iter().peekable();
        for &(i, c) in &self.buckets {
            while old.next_if(|&&(j, _)| j < i).is_some() {}
            let before = old.next_if(|&&(j, _)| j == i).map_or(0, |&(_, d)| d);
            let c = c.saturating_sub(before);
            if c > 0 {
                buckets.push((i, c));
            }
        }
        let (Some(&(first, _)), Some(&(last, _))) = (buckets.first(), buckets.last()) else {
            return Snapshot::default();
        };
        let min = if self.min < earlier.min {
            self.min
        } else {
            representative(usize::from(first)).clamp(self.min, self.max)
        };
        let max = if self.max > earlier.max {
            self.max
        } else {
            representative(usize::from(last)).clamp(self.min, self.max)
        };
        Snapshot::from_parts(buckets, min, max, self.sum.wrapping_sub(earlier.sum))
    }

    /// Adds `other`'s values to `self` (e.g. many clients' reports into one). Exact: the result is what one
    /// histogram that recorded both would hold (counts saturate at `u64::MAX`, the sum wraps).
    pub fn merge(&mut self, other: &Snapshot) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
            return;
        }
        let mut merged = Vec::with_capacity(self.buckets.len().max(other.buckets.len()));
        let (mut a, mut b) = (
            self.buckets.iter().peekable(),
            other.buckets.iter().peekable(),
        );
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(&&(i, c)), Some(&&(j, d))) if i == j => {
                    a.next();
                    b.next();
                    (i, c.saturating_add(d))
                }
                (Some(&&x), Some(&&y)) => {
                    if x.0 < y.0 {
                        a.next();
                        x
                    } else {
                        b.next();
                        y
                    }
                }
                (Some(&&x), None) => {
                    a.next();
                    x
                }
                (None, Some(&&y)) => {
                    b.next();
                    y
                }
                (None, None) => break,
            };
            merged.push(next);
        }
        *self = Snapshot::from_parts(
            merged,
            self.min.min(other.min),
            self.max.max(other.max),
            self.sum.wrapping_add(other.sum),
        );
    }

    /// Whether `min` and `max` sit in the first and last bucket (part of the invariants).
    pub(crate) fn extremes_consistent(&self) -> bool {
        match (self.buckets.first(), self.buckets.last()) {
            (Some(&(first, _)), Some(&(last, _))) => {
                self.min <= self.max
                    && bucket_index(self.min) == usize::from(first)
                    && bucket_index(self.max) == usize::from(last)
            }
            _ => self.count == 0 && self.min == 0 && self.max == 0 && self.sum == 0,
        }
    }
}

impl Extend<Snapshot> for Snapshot {
    fn extend<I: IntoIterator<Item = Snapshot>>(&mut self, iter: I) {
        for s in iter {
            self.merge(&s);
        }
    }
}

impl FromIterator<Snapshot> for Snapshot {
    fn from_iter<I: IntoIterator<Item = Snapshot>>(iter: I) -> Self {
        let mut all = Snapshot::empty();
        all.extend(iter);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::super::Histogram;
    use super::*;

    fn of(values: &[u64]) -> Snapshot {
        let h = Histogram::new();
        values.iter().for_each(|&v| h.record(v));
        h.snapshot()
    }

    #[test]
    fn empty_snapshot_answers_zero() {
        let s = Snapshot::empty();
        assert_eq!(s.summary(), LatencySummary::default());
        assert_eq!(s.quantile(0.5), 0);
        assert!(s.extremes_consistent());
    }

    #[test]
    fn nearest_rank_percentiles() {
        // 1..=100 ms: p50 is the 50th value, p99 the 99th, p99.9 the 100th.
        let values: Vec<u64> = (1..=100).map(|ms| ms * 1_000_000).collect();
        let s = of(&values);
        for (q, exact) in [
            (0.5, 50),
            (0.9, 90),
            (0.99, 99),
            (0.999, 100),
            (0.0, 1),
            (1.0, 100),
        ] {
            let est = s.quantile(q);
            let exact = exact * 1_000_000;
            assert!(est.abs_diff(exact) * 64 <= exact, "q={q}: {est} vs {exact}");
        }
        assert_eq!(s.quantile(0.0), 1_000_000);
        assert_eq!(s.quantile(1.0), 100_000_000);
        assert_eq!(s.quantile(f64::NAN), 1_000_000);
        assert_eq!(s.percentile(100.0), 100_000_000);
        assert_eq!(s.mean(), 50_500_000);
    }

    #[test]
    fn estimates_are_clamped_to_exact_extremes() {
        let s = of(&[5, 6, 7]);
        assert!((5..=7).contains(&s.quantile(0.5)));
        let s = of(&[u64::MAX - 1, u64::MAX]);
        assert_eq!(s.quantile(0.0), u64::MAX - 1);
        assert!(s.quantile(0.5) >= u64::MAX - 1);
    }

    #[test]
    fn wrapped_sum_falls_back_to_the_bucket_estimate() {
        // 2^23 values of 1 h sum to more than 2^64 ns: the stored sum wraps and is inconsistent.
        let mut s = of(&[3_600_000_000_000]);
        for _ in 0..23 {
            let copy = s.clone();
            s.merge(&copy);
        }
        assert_eq!(s.count(), 1 << 23);
        assert_ne!(u128::from(s.sum()), 3_600_000_000_000u128 << 23);
        assert_eq!(s.mean(), 3_600_000_000_000);
    }

    #[test]
    fn merge_and_diff_are_inverse() {
        let a = of(&[1_000, 2_000_000, 30_000_000]);
        let b = of(&[5_000, 2_000_000]);
        let mut ab = a.clone();
        ab.merge(&b);
        assert_eq!(ab, of(&[1_000, 2_000_000, 30_000_000, 5_000, 2_000_000]));
        let d = ab.diff(&a);
        assert_eq!(d.count(), 2);
        assert_eq!(d.sum(), 2_005_000);
        assert_eq!(
            d.buckets().collect::<Vec<_>>(),
            b.buckets().collect::<Vec<_>>()
        );
        assert!(d.extremes_consistent());
        assert_eq!(ab.diff(&ab), Snapshot::empty());
        assert_eq!([a.clone(), b.clone()].into_iter().collect::<Snapshot>(), ab);
    }

    #[test]
    fn summary_of_one_value() {
        let s = of(&[1_000_000]).summary();
        assert_eq!(s.p999_ns, 1_000_000);
        assert_eq!(s.mean_ns, 1_000_000);
    }
}
