//! MQCloud's segmented latency buckets, for compatibility: its index function and bucket bounds, and
//! [`Snapshot::segmented`], our histogram re-bucketed into that layout.
//!
//! MQCloud's producer-side layout (whole milliseconds, `max_ms` = send timeout + 500 ms): buckets 0..=10 hold
//! exactly 0..=10 ms; then 5 ms wide up to 100 ms ((10, 15] → 11, (15, 20] → 12, …, (95, 100] → 28); then
//! 50 ms wide ((100, 150] → 29, …); the bucket holding `max_ms` is the last and also takes everything above.
//! A 3000 ms timeout gives `max_ms` = 3500 and 97 buckets, the last (3450, 3500].
//!
//! Not here: MQCloud's sampler or wire format; our own percentiles (see `snapshot`).

use serde::{Deserialize, Serialize};

use super::layout::representative;
use super::snapshot::Snapshot;

/// The largest `max_ms` honoured (1 h): larger ones are treated as this, which bounds a view at 72 027
/// buckets. Our histogram does not resolve beyond 1 h anyway.
pub const MQCLOUD_MAX_MS_CAP: u64 = 3_600_000;

/// MQCloud's bucket for a latency of `ms` whole milliseconds when the last bucket holds `max_ms`.
///
/// MQCloud's producer-side layout (`max_ms` = send timeout + 500 ms): buckets 0..=10 hold exactly 0..=10 ms;
/// then 5 ms wide up to 100 ms ((10, 15] → 11, (15, 20] → 12, …, (95, 100] → 28); then 50 ms wide
/// ((100, 150] → 29, …); the bucket holding `max_ms` is the last and also takes everything above. A 3000 ms
/// timeout gives `max_ms` = 3500 and 97 buckets, the last (3450, 3500]. `max_ms` above
/// [`MQCLOUD_MAX_MS_CAP`] counts as the cap.
pub fn mqcloud_bucket_index(ms: u64, max_ms: u64) -> usize {
    unbounded_index(ms).min(unbounded_index(max_ms.min(MQCLOUD_MAX_MS_CAP))) as usize
}

/// Number of MQCloud buckets for `max_ms` (97 for 3500 ms).
pub fn mqcloud_bucket_count(max_ms: u64) -> usize {
    mqcloud_bucket_index(max_ms, max_ms) + 1
}

/// The upper bound in ms (inclusive) of MQCloud bucket `index` (the last bucket also holds everything above).
pub fn mqcloud_upper_bound_ms(index: usize) -> u64 {
    let i = index as u64;
    match i {
        0..=10 => i,
        11..=28 => 10 + 5 * (i - 10),
        _ => 100u64.saturating_add((i - 28).saturating_mul(50)),
    }
}

/// The upper bounds of all buckets for `max_ms`, ascending.
pub fn mqcloud_upper_bounds(max_ms: u64) -> Vec<u64> {
    (0..mqcloud_bucket_count(max_ms))
        .map(mqcloud_upper_bound_ms)
        .collect()
}

fn unbounded_index(ms: u64) -> u64 {
    match ms {
        0..=10 => ms,
        11..=100 => 10 + (ms - 10).div_ceil(5),
        _ => 28 + (ms - 100).div_ceil(50),
    }
}

/// A snapshot in MQCloud's layout: `counts[i]` values in bucket `i`, whose upper bound is
/// `upper_bounds_ms[i]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SegmentedView {
    /// Inclusive upper bound of each bucket in ms (the last also holds everything above).
    pub upper_bounds_ms: Vec<u64>,
    /// Values per bucket.
    pub counts: Vec<u64>,
}

impl Snapshot {
    /// This snapshot re-bucketed into MQCloud's layout for a send timeout of `timeout_ms` (the last bucket
    /// holds `timeout_ms + 500`, capped at [`MQCLOUD_MAX_MS_CAP`]). Each of our buckets moves whole to the
    /// MQCloud bucket of its midpoint (clamped to [min, max]) floored to whole ms, so values within 1/64 of an
    /// MQCloud boundary may land one bucket off. Counts are preserved.
    pub fn segmented(&self, timeout_ms: u64) -> SegmentedView {
        let max_ms = timeout_ms.saturating_add(500).min(MQCLOUD_MAX_MS_CAP);
        let upper_bounds_ms = mqcloud_upper_bounds(max_ms);
        let mut counts = vec![0u64; upper_bounds_ms.len()];
        for (i, c) in self.buckets() {
            let ms = representative(i).clamp(self.min, self.max) / 1_000_000;
            let slot = &mut counts[mqcloud_bucket_index(ms, max_ms)];
            *slot = slot.saturating_add(c);
        }
        SegmentedView {
            upper_bounds_ms,
            counts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Histogram;
    use super::*;

    #[test]
    fn mqcloud_examples() {
        assert_eq!(mqcloud_bucket_index(18, 3_500), 12);
        assert_eq!(mqcloud_bucket_count(3_000 + 500), 97);
        assert_eq!(mqcloud_bucket_index(0, 3_500), 0);
        assert_eq!(mqcloud_bucket_index(10, 3_500), 10);
        assert_eq!(mqcloud_bucket_index(11, 3_500), 11);
        assert_eq!(mqcloud_bucket_index(15, 3_500), 11);
        assert_eq!(mqcloud_bucket_index(16, 3_500), 12);
        assert_eq!(mqcloud_bucket_index(100, 3_500), 28);
        assert_eq!(mqcloud_bucket_index(101, 3_500), 29);
        assert_eq!(mqcloud_bucket_index(150, 3_500), 29);
        assert_eq!(mqcloud_bucket_index(3_500, 3_500), 96);
        assert_eq!(mqcloud_bucket_index(3_501, 3_500), 96);
        assert_eq!(mqcloud_bucket_index(u64::MAX, 3_500), 96);
        let bounds = mqcloud_upper_bounds(3_500);
        assert_eq!(bounds.len(), 97);
        assert_eq!(&bounds[..13], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20]);
        assert_eq!(bounds[28..30], [100, 150]);
        assert_eq!(bounds[96], 3_500);
    }

    #[test]
    fn odd_maxima() {
        assert_eq!(mqcloud_bucket_count(0), 1);
        assert_eq!(mqcloud_bucket_count(12), 12); // 0..=10 and (10, 15]
        assert_eq!(mqcloud_bucket_index(99, 12), 11);
        assert_eq!(mqcloud_bucket_count(3_510), 98);
        assert_eq!(mqcloud_bucket_count(u64::MAX), 72_027);
    }

    #[test]
    fn segmented_view_of_a_snapshot() {
        let h = Histogram::new();
        for ns in [400_000, 18_000_000, 18_500_000, 120_000_000, 10_000_000_000] {
            h.record(ns);
        }
        let view = h.snapshot().segmented(3_000);
        assert_eq!(view.counts.len(), 97);
        assert_eq!(view.upper_bounds_ms, mqcloud_upper_bounds(3_500));
        assert_eq!(view.counts[0], 1);
        assert_eq!(view.counts[12], 2);
        assert_eq!(view.counts[29], 1);
        assert_eq!(view.counts[96], 1);
        assert_eq!(view.counts.iter().sum::<u64>(), 5);
        // Absurd timeouts are capped, not allocated.
        assert_eq!(h.snapshot().segmented(u64::MAX).counts.len(), 72_027);
    }
}
