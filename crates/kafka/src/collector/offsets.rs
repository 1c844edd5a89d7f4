//! Retained ranges: earliest and latest offsets of every partition with a leader, in ListOffsets requests batched
//! per leader (two per leader, as one request may not name a partition twice; at most [`BATCH`] partitions
//! each), with bounded concurrency. Partitions whose leader is unreachable or answered badly have no range.

use super::cycle::{Cycle, bounded};
use super::metadata::Metadata;
use crate::client::{KafkaClient, OffsetSpec};
use std::collections::BTreeMap;

/// Partitions per ListOffsets request.
pub(crate) const BATCH: usize = 1000;

/// `(topic, partition)` → `(earliest, latest)`.
pub(crate) type Ranges = BTreeMap<(String, i32), (i64, i64)>;

/// Reads both ends of every led partition.
pub(crate) async fn collect(
    client: &KafkaClient,
    cycle: &Cycle,
    meta: &Metadata,
    concurrency: usize,
) -> Ranges {
    let mut by_leader: BTreeMap<&str, Vec<(String, i32)>> = BTreeMap::new();
    for p in &meta.partitions {
        if let Some(b) = meta.brokers.get(&p.leader) {
            by_leader
                .entry(b.addr.as_str())
                .or_default()
                .push((p.topic.clone(), p.index));
        }
    }
    let mut jobs = Vec::new();
    for (addr, parts) in &by_leader {
        for chunk in parts.chunks(BATCH) {
            for spec in [OffsetSpec::Earliest, OffsetSpec::Latest] {
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
    earliest
        .into_iter()
        .filter_map(|(tp, e)| latest.get(&tp).map(|l| (tp, (e, *l))))
        .collect()
}
