//! The latency histogram: fixed memory (8 KiB), O(1) lock-free `record` from many threads, relative error
//! ≤ 1/64 (1.5625 %) from 1 µs to 1 h, snapshots with count/min/max/mean/percentiles, per-interval diffs,
//! merges of many histograms, a compact wire form for client reports and MQCloud's segmented bucket view.
//!
//! ```
//! use mqwatch_stats::histogram::{Histogram, IntervalSampler, Snapshot};
//!
//! let h = Histogram::new();
//! let mut per_minute = IntervalSampler::new();
//! h.record(1_800_000); // 1.8 ms, in nanoseconds
//! h.record_duration(std::time::Duration::from_millis(18));
//! let minute = per_minute.sample(&h); // what was recorded since the last sample
//! let report = minute.encode(); // tens of bytes, to send to the server
//! let mut all_clients = Snapshot::empty();
//! all_clients.merge(&Snapshot::decode(&report).unwrap());
//! assert_eq!(all_clients.summary().count, 2);
//! assert_eq!(all_clients.segmented(3_000).counts[12], 1); // 18 ms is in MQCloud's (15, 20] ms bucket
//! ```
//!
//! Buckets: every power of two is split into 32 equal sub-buckets, so a bucket's midpoint is within 1/64 of
//! every value in it. Only the octaves needed for [1 µs, 1 h] are kept, trimmed at both ends, so that 1015 `u64`
//! counters plus min, max and sum fit in 8 KiB: the first bucket is [992, 1008) ns and also counts everything
//! below, the last is [52·2^36, 53·2^36) ns ≈ [59.6, 60.7) min and also counts everything above; min, max and
//! sum stay exact for every value and estimates are clamped to [min, max]. See [`bucket_index`],
//! [`bucket_range`], [`bucket_value`].
//!
//! Parts: `layout` (bucket geometry), `recorder` ([`Histogram`], [`IntervalSampler`]), `snapshot`
//! ([`Snapshot`], [`LatencySummary`]), `codec` (wire form), `mqcloud` (MQCloud's layout and view).
//!
//! Not here: time (callers measure durations), storage, the HTTP intake of client reports.

mod codec;
mod layout;
mod mqcloud;
mod recorder;
mod snapshot;

pub use codec::DecodeError;
pub use layout::{
    BUCKETS, HIGHEST_TRACKED_NS, LOWEST_TRACKED_NS, bucket_index, bucket_range, bucket_value,
};
pub use mqcloud::{
    MQCLOUD_MAX_MS_CAP, SegmentedView, mqcloud_bucket_count, mqcloud_bucket_index,
    mqcloud_upper_bound_ms, mqcloud_upper_bounds,
};
pub use recorder::{Histogram, IntervalSampler};
pub use snapshot::{LatencySummary, Snapshot};
