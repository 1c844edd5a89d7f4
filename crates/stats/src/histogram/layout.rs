//! The bucket geometry of [`Histogram`](super::Histogram): which bucket a nanosecond value lands in, each
//! bucket's range and the value reported for it. Pure arithmetic, no state.
//!
//! Log-linear buckets: every power of two ("octave") is split into 32 equal sub-buckets, so a bucket is at most
//! 1/32 of its lower bound wide and its midpoint is within 1/64 (1.5625 %) of every value in it. Only the
//! octaves needed for [1 µs, 1 h] are kept, trimmed at both ends, so that 1015 `u64` counters fit in 8 KiB:
//! the first bucket is [992, 1008) ns and also takes everything below it, the last is
//! [52·2^36, 53·2^36) ns ≈ [59.56 min, 60.70 min) and also takes everything above it.
//!
//! Not here: counting (see `recorder`), percentiles (see `snapshot`).

/// Number of sub-buckets per power of two, as a power of two (32 sub-buckets).
const SUB_BITS: u32 = 5;

/// Global log-linear index of [`LOWEST_TRACKED_NS`]; global index of `v` is `(s << 5) + (v >> s)` with
/// `s = msb(v) - 5`.
const FIRST_GLOBAL: usize = (4 << SUB_BITS) + (992 >> 4);

/// Lower bound of the first bucket, in nanoseconds. Smaller values are counted in the first bucket.
pub const LOWEST_TRACKED_NS: u64 = 992;

/// Largest value whose bucket has the 1/64 error bound, in nanoseconds (53·2^36 - 1 ≈ 1 h 0 min 42 s).
/// Larger values are counted in the last bucket.
pub const HIGHEST_TRACKED_NS: u64 = (53 << 36) - 1;

/// Number of buckets (and of counters in a [`Histogram`](super::Histogram)).
pub const BUCKETS: usize = 1015;

/// The bucket `ns` is counted in: `0..BUCKETS`, monotonic in `ns`. O(1), branch-free apart from the clamp.
#[inline]
pub fn bucket_index(ns: u64) -> usize {
    let v = ns.clamp(LOWEST_TRACKED_NS, HIGHEST_TRACKED_NS);
    // v >= 992 has its most significant bit at >= 9, so s >= 4.
    let s = 63 - SUB_BITS - v.leading_zeros();
    ((s as usize) << SUB_BITS) + (v >> s) as usize - FIRST_GLOBAL
}

/// The nominal range `[low, high)` of bucket `index` in nanoseconds (the first and the last bucket also count
/// values outside it), or `None` if `index >= BUCKETS`.
pub fn bucket_range(index: usize) -> Option<(u64, u64)> {
    (index < BUCKETS).then(|| nominal(index))
}

/// The value reported for bucket `index` (the midpoint of its nominal range), or `None` if
/// `index >= BUCKETS`. Within 1/64 of every value of the nominal range.
pub fn bucket_value(index: usize) -> Option<u64> {
    (index < BUCKETS).then(|| representative(index))
}

/// `[low, high)` of a valid bucket index.
#[inline]
pub(crate) fn nominal(index: usize) -> (u64, u64) {
    debug_assert!(index < BUCKETS);
    let g = index + FIRST_GLOBAL;
    let s = (g >> SUB_BITS) - 1;
    let sub = ((g & ((1 << SUB_BITS) - 1)) | (1 << SUB_BITS)) as u64;
    (sub << s, (sub + 1) << s)
}

/// Midpoint of a valid bucket index.
#[inline]
pub(crate) fn representative(index: usize) -> u64 {
    let (low, high) = nominal(index);
    low + (high - low) / 2
}

/// Every value that can be counted in a valid bucket: inclusive bounds, with the first and the last bucket
/// widened to the ends of `u64`.
#[inline]
pub(crate) fn span(index: usize) -> (u64, u64) {
    let (low, high) = nominal(index);
    let low = if index == 0 { 0 } else { low };
    let high = if index == BUCKETS - 1 {
        u64::MAX
    } else {
        high - 1
    };
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_range() {
        assert_eq!(bucket_index(0), 0);
        assert_eq!(bucket_index(LOWEST_TRACKED_NS), 0);
        assert_eq!(bucket_index(1_007), 0);
        assert_eq!(bucket_index(1_008), 1);
        assert_eq!(bucket_index(HIGHEST_TRACKED_NS), BUCKETS - 1);
        assert_eq!(bucket_index(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_range(0), Some((992, 1_008)));
        assert_eq!(bucket_range(BUCKETS - 1), Some((52 << 36, 53 << 36)));
        assert_eq!(bucket_range(BUCKETS), None);
        assert_eq!(bucket_value(BUCKETS), None);
        // 1 µs and 1 h are inside the tracked range.
        const { assert!(LOWEST_TRACKED_NS <= 1_000 && 3_600_000_000_000 <= HIGHEST_TRACKED_NS) };
    }

    #[test]
    fn buckets_tile_the_range_and_indexes_agree() {
        let mut expected_low = LOWEST_TRACKED_NS;
        for i in 0..BUCKETS {
            let (low, high) = nominal(i);
            assert_eq!(
                low,
                expected_low,
                "bucket {i} starts where {} ends",
                i.wrapping_sub(1)
            );
            assert!(high > low);
            // At most 1/32 of its lower bound wide.
            assert!((high - low) * 32 <= low, "bucket {i} too wide");
            assert_eq!(bucket_index(low), i);
            assert_eq!(bucket_index(high - 1), i);
            expected_low = high;
        }
        assert_eq!(expected_low, HIGHEST_TRACKED_NS + 1);
    }

    #[test]
    fn representative_is_within_one_64th_of_the_bucket() {
        for i in 0..BUCKETS {
            let (low, high) = nominal(i);
            let rep = representative(i);
            for v in [low, high - 1] {
                assert!(rep.abs_diff(v) * 64 <= v, "bucket {i}: {rep} vs {v}");
            }
        }
    }

    #[test]
    fn span_covers_everything() {
        assert_eq!(span(0), (0, 1_007));
        assert_eq!(span(1), (1_008, 1_023));
        assert_eq!(span(BUCKETS - 1), (52 << 36, u64::MAX));
    }
}
