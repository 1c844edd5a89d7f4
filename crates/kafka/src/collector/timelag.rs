//! Time lag: how old the oldest unconsumed record of each group position is. Preferred: now minus the timestamp
//! of the record at the committed offset, read from the partition's leader (batched, [`super::record_times`]) and
//! cached by offset (a record's timestamp never changes, so the cache holds until the commit moves). When that record is gone
//! (committed below the earliest retained offset) or unreadable, the time it was written is interpolated over
//! (latest offset, time) points sampled each cycle. An idle position (committed = latest) is 0 s. Each value says
//! which method produced it ([`AgeSource`]). No commit: no age.

use super::cycle::Cycle;
use super::metadata::Metadata;
use super::offsets::Ranges;
use crate::client::KafkaClient;
use mqwatch_model::{AgeSource, GroupStatus, LogRef};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;

/// Sampled points kept per partition.
const SAMPLES: usize = 120;

/// One sampled point: the log end offset and the first and last time it was seen at that value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    latest: i64,
    first_ms: u64,
    last_ms: u64,
}

/// What the collector remembers between cycles of one cluster: record timestamps and sampled offsets for time lag,
/// and earliest offsets between their full reads. Keep one per cluster.
#[derive(Debug, Default)]
pub struct LagMemory {
    /// `(topic, partition, offset)` → the record's timestamp (ms).
    records: Mutex<HashMap<(String, i32, i64), i64>>,
    /// `(topic, partition)` → sampled points, oldest first.
    samples: Mutex<HashMap<(String, i32), VecDeque<Sample>>>,
    /// Earliest offsets between their full reads.
    pub(crate) earliest: super::offsets::EarliestCache,
}

impl LagMemory {
    /// Empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records this cycle's latest offsets at `now_ms`.
    pub(crate) fn sample(&self, ranges: &Ranges, now_ms: u64) {
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        samples.retain(|k, _| ranges.contains_key(k));
        for (k, &(_, latest)) in ranges {
            // Most logs never move between looks: one point each until they do.
            let points = samples
                .entry(k.clone())
                .or_insert_with(|| VecDeque::with_capacity(1));
            match points.back_mut() {
                Some(last) if last.latest == latest => last.last_ms = now_ms,
                _ => {
                    if points.len() == SAMPLES {
                        points.pop_front();
                    }
                    points.push_back(Sample {
                        latest,
                        first_ms: now_ms,
                        last_ms: now_ms,
                    });
                }
            }
        }
    }

    /// When the record at `offset` was written, interpolated over the samples: after the last time the log end
    /// was at or below `offset`, before the first time it was past it. `None` when the samples do not bracket it.
    pub(crate) fn interpolate(&self, topic: &str, partition: i32, offset: i64) -> Option<u64> {
        let samples = self.samples.lock().ok()?;
        let points = samples.get(&(topic.to_string(), partition))?;
        interpolate(&points.iter().copied().collect::<Vec<_>>(), offset)
    }
}

fn interpolate(points: &[Sample], offset: i64) -> Option<u64> {
    let after = points.iter().position(|p| p.latest > offset)?;
    if after == 0 {
        return None; // written before the first sample: no lower bound
    }
    let (before, after) = (points[after - 1], points[after]);
    let span_offsets = (after.latest - before.latest).max(1) as f64;
    let into = (offset - before.latest + 1).max(0) as f64 / span_offsets;
    let span_ms = after.first_ms.saturating_sub(before.last_ms) as f64;
    Some(before.last_ms + (into.min(1.0) * span_ms) as u64)
}

/// Fills `oldest_unconsumed_age_ms` and `age_source` of every group position with a commit.
pub(crate) async fn fill(
    client: &KafkaClient,
    cycle: &Cycle,
    meta: &Metadata,
    memory: &LagMemory,
    groups: &mut [GroupStatus],
    now_ms: u64,
    concurrency: usize,
) {
    // The records to read: at a committed offset behind the log end and still retained.
    let mut wanted: BTreeSet<(String, i32, i64)> = BTreeSet::new();
    for g in groups.iter() {
        for p in &g.positions {
            let (LogRef::Partition { topic, partition }, Some(c)) = (&p.log, p.committed) else {
                continue;
            };
            if c < p.latest && c >= p.earliest {
                wanted.insert((topic.clone(), *partition, c));
            }
        }
    }
    let cached: HashMap<(String, i32, i64), i64> = memory
        .records
        .lock()
        .map(|r| {
            wanted
                .iter()
                .filter_map(|k| r.get(k).map(|ts| (k.clone(), *ts)))
                .collect()
        })
        .unwrap_or_default();
    let leaders: BTreeMap<(&str, i32), &str> = meta
        .partitions
        .iter()
        .filter_map(|p| {
            meta.brokers
                .get(&p.leader)
                .map(|b| ((p.topic.as_str(), p.index), b.addr.as_str()))
        })
        .collect();
    let missing: Vec<&(String, i32, i64)> =
        wanted.iter().filter(|k| !cached.contains_key(*k)).collect();
    let fetched = super::record_times::read(client, cycle, &leaders, &missing, concurrency).await;
    let mut times = cached;
    times.extend(fetched);
    for g in groups.iter_mut() {
        for p in &mut g.positions {
            let (LogRef::Partition { topic, partition }, Some(c)) = (&p.log, p.committed) else {
                continue;
            };
            if c >= p.latest {
                p.oldest_unconsumed_age_ms = Some(0);
                p.age_source = Some(AgeSource::Idle);
                continue;
            }
            if let Some(ts) = times.get(&(topic.clone(), *partition, c)) {
                p.oldest_unconsumed_age_ms = Some(now_ms.saturating_sub(*ts as u64));
                p.age_source = Some(AgeSource::RecordTimestamp);
            } else if let Some(written) = memory.interpolate(topic, *partition, c) {
                p.oldest_unconsumed_age_ms = Some(now_ms.saturating_sub(written));
                p.age_source = Some(AgeSource::Interpolated);
            }
        }
    }
    if let Ok(mut r) = memory.records.lock() {
        *r = times;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(latest: i64, first_ms: u64, last_ms: u64) -> Sample {
        Sample {
            latest,
            first_ms,
            last_ms,
        }
    }

    #[test]
    fn a_record_is_placed_between_the_last_time_before_and_the_first_time_after() {
        // End offset 10 seen from t=0 to t=1000, then 20 from t=2000.
        let points = vec![s(10, 0, 1_000), s(20, 2_000, 3_000)];
        assert_eq!(interpolate(&points, 10), Some(1_100));
        assert_eq!(interpolate(&points, 19), Some(2_000));
        assert_eq!(interpolate(&points, 25), None, "not written yet");
        assert_eq!(interpolate(&points, 5), None, "before the first sample");
    }

    #[test]
    fn samples_keep_first_and_last_sight_and_forget_vanished_partitions() {
        let m = LagMemory::new();
        let ranges = |latest: i64| Ranges::from([(("t".to_string(), 0), (0, latest))]);
        m.sample(&ranges(10), 0);
        m.sample(&ranges(10), 1_000);
        m.sample(&ranges(20), 2_000);
        assert_eq!(m.interpolate("t", 0, 10), Some(1_100));
        m.sample(&Ranges::new(), 3_000);
        assert_eq!(m.interpolate("t", 0, 10), None);
    }
}
