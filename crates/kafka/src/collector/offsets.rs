//! Retained ranges: earliest and latest offsets of every partition with a leader, in ListOffsets requests batched
//! per leader (two per leader, as one request may not name a partition twice; at most [`BATCH`] partitions
//! each, and a leader's partitions spread over its connections), with bounded concurrency. Partitions whose leader is unreachable or answered badly have no range.
//!
//! Latest offsets are read every cycle. Earliest offsets move only when retention (or DeleteRecords) drops a
//! segment, so they are read for every partition once every [`EARLIEST_EVERY`] cycles, and in between only for
//! partitions the [`EarliestCache`] does not know; a cached earliest above the latest just read (a recreated or
//! truncated partition) is dropped, so it is read again next cycle. This halves the broker's work per steady cycle;
//! `retention_loss` may then show up to `EARLIEST_EVERY - 1` cycles late.

use super::cycle::{Cycle, bounded};
use super::metadata::Metadata;
use crate::client::{KafkaClient, OffsetSpec};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// Most partitions per ListOffsets request.
pub(crate) const BATCH: usize = 1000;
/// Fewest partitions per ListOffsets request when a leader's partitions are spread over its connections.
const MIN_BATCH: usize = 100;

/// `(topic, partition)` → `(earliest, latest)`.
pub(crate) type Ranges = BTreeMap<(String, i32), (i64, i64)>;

/// Cycles between two full reads of earliest offsets.
pub const EARLIEST_EVERY: u32 = 6;

/// Earliest offsets remembered between cycles (keep one per cluster, inside the collector's `LagMemory`).
#[derive(Debug, Default)]
pub(crate) struct EarliestCache(Mutex<EarliestState>);

#[derive(Debug, Default)]
struct EarliestState {
    offsets: HashMap<(String, i32), i64>,
    /// Cycles since the last full read; `None` before the first.
    since_full: Option<u32>,
}

impl EarliestCache {
    /// Whether this cycle reads every partition's earliest offset; counts the cycle.
    fn full_read_due(&self) -> bool {
        let Ok(mut s) = self.0.lock() else {
            return true;
        };
        let due = s.since_full.is_none_or(|n| n + 1 >= EARLIEST_EVERY);
        s.since_full = Some(if due {
            0
        } else {
            s.since_full.unwrap_or(0) + 1
        });
        due
    }

    fn get(&self, tp: &(String, i32)) -> Option<i64> {
        self.0.lock().ok()?.offsets.get(tp).copied()
    }

    /// Keeps `read` (this cycle's answers) and drops entries for partitions gone or above their latest offset.
    fn update(&self, read: &BTreeMap<(String, i32), i64>, latest: &BTreeMap<(String, i32), i64>) {
        let Ok(mut s) = self.0.lock() else {
            return;
        };
        for (tp, e) in read {
            s.offsets.insert(tp.clone(), *e);
        }
        s.offsets
            .retain(|tp, e| latest.get(tp).is_some_and(|l| *e <= *l));
    }
}

/// Reads both ends of every led partition (earliest from `cache` where it is fresh enough).
pub(crate) async fn collect(
    client: &KafkaClient,
    cycle: &Cycle,
    meta: &Metadata,
    concurrency: usize,
    cache: &EarliestCache,
) -> Ranges {
    let full = cache.full_read_due();
    let mut by_leader: BTreeMap<&str, Vec<(String, i32)>> = BTreeMap::new();
    for p in &meta.partitions {
        if let Some(b) = meta.brokers.get(&p.leader) {
            by_leader
                .entry(b.addr.as_str())
                .or_default()
                .push((p.topic.clone(), p.index));
        }
    }
    let unknown: BTreeMap<&str, Vec<(String, i32)>> = by_leader
        .iter()
        .map(|(addr, parts)| {
            let parts = parts
                .iter()
                .filter(|tp| full || cache.get(tp).is_none())
                .cloned()
                .collect();
            (*addr, parts)
        })
        .collect();
    let mut jobs = Vec::new();
    for (spec, leaders) in [
        (OffsetSpec::Earliest, &unknown),
        (OffsetSpec::Latest, &by_leader),
    ] {
        for (addr, parts) in leaders {
            // Spread over the broker's connections, which it serves side by side.
            let lanes = client.config().connections_per_broker.max(1);
            let per = parts.len().div_ceil(lanes).clamp(MIN_BATCH, BATCH);
            for chunk in parts.chunks(per) {
                jobs.push(async move {
                    let answer = cycle
                        .ask(addr, client.list_offsets(addr, spec, chunk))
                        .await;
                    (spec, answer.unwrap_or_default())
                });
            }
        }
    }
    let mut earliest: BTreeMap<(String, i32), i64> = BTreeMap::new();
    let mut latest: BTreeMap<(String, i32), i64> = BTreeMap::new();
    for (spec, answers) in bounded(jobs, concurrency).await {
        for (tp, result) in answers {
            match result {
                Ok(offset) => {
                    let side = match spec {
                        OffsetSpec::Earliest => &mut earliest,
                        OffsetSpec::Latest => &mut latest,
                    };
                    side.insert(tp, offset);
                }
                Err(e) => cycle.bad_answer(e),
            }
        }
    }
    cache.update(&earliest, &latest);
    latest
        .into_iter()
        .filter_map(|(tp, l)| {
            let e = earliest.get(&tp).copied().or_else(|| cache.get(&tp))?;
            Some((tp, (e, l)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> (String, i32) {
        ("t".into(), p)
    }

    #[test]
    fn a_full_read_every_earliest_every_cycles_starting_with_the_first() {
        let cache = EarliestCache::default();
        let due: Vec<bool> = (0..2 * EARLIEST_EVERY)
            .map(|_| cache.full_read_due())
            .collect();
        let expected: Vec<bool> = (0..2 * EARLIEST_EVERY)
            .map(|i| i % EARLIEST_EVERY == 0)
            .collect();
        assert_eq!(due, expected);
    }

    #[test]
    fn entries_above_their_latest_or_gone_are_dropped_so_they_are_read_again() {
        let cache = EarliestCache::default();
        let read = BTreeMap::from([(tp(0), 5), (tp(1), 7), (tp(2), 1)]);
        let latest = BTreeMap::from([(tp(0), 9), (tp(1), 3)]);
        cache.update(&read, &latest);
        assert_eq!(cache.get(&tp(0)), Some(5));
        assert_eq!(
            cache.get(&tp(1)),
            None,
            "earliest 7 above latest 3: recreated"
        );
        assert_eq!(cache.get(&tp(2)), None, "no longer led");
    }
}
