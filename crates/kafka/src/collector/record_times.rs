//! The timestamps of the records at committed offsets, for time lag: one Fetch per leader for up to
//! [`PER_FETCH`] partitions, each at its own offset (a partition wanted at several offsets, by several groups,
//! is asked once per round). A partition the broker left out of an answer for its size is asked alone, where a
//! broker always returns the first batch (KIP-74). Per-partition errors are bad answers; an unreachable leader
//! is skipped for the cycle.

use super::cycle::{Cycle, bounded};
use crate::client::{FetchAt, Fetched, KafkaClient};
use std::collections::BTreeMap;

/// Partitions per Fetch.
pub(crate) const PER_FETCH: usize = 100;
/// Bytes asked per partition: small, since only the first record at the offset is read.
const PARTITION_BYTES: i32 = 64 * 1024;
/// Bytes asked per Fetch answer, whatever its partitions.
const ANSWER_BYTES: i32 = 1024 * 1024;
/// Fetches in flight at most (each answer may hold [`ANSWER_BYTES`]).
const IN_FLIGHT: usize = 8;

/// Reads the record timestamp at each of `wanted` from the partition's leader in `leaders`; returns those read
/// (records with no timestamp, -1, are left out).
pub(crate) async fn read(
    client: &KafkaClient,
    cycle: &Cycle,
    leaders: &BTreeMap<(&str, i32), &str>,
    wanted: &[&FetchAt],
    concurrency: usize,
) -> Vec<(FetchAt, i64)> {
    let mut per_leader: BTreeMap<&str, BTreeMap<(&str, i32), Vec<i64>>> = BTreeMap::new();
    for &(t, p, o) in wanted {
        if let Some(addr) = leaders.get(&(t.as_str(), *p)) {
            per_leader
                .entry(addr)
                .or_default()
                .entry((t.as_str(), *p))
                .or_default()
                .push(*o);
        }
    }
    let mut batches: Vec<(&str, Vec<FetchAt>)> = Vec::new();
    for (addr, parts) in &per_leader {
        let rounds = parts.values().map(Vec::len).max().unwrap_or(0);
        for round in 0..rounds {
            let at: Vec<FetchAt> = parts
                .iter()
                .filter_map(|((t, p), offsets)| Some((t.to_string(), *p, *offsets.get(round)?)))
                .collect();
            for chunk in at.chunks(PER_FETCH) {
                batches.push((addr, chunk.to_vec()));
            }
        }
    }
    // Made up front (a Vec, not a lazy iterator: futures from a closure held across the await would not be
    // `Send` for every lifetime, which `serve`'s spawned collector needs); one per batch, so few.
    let jobs: Vec<_> = batches
        .iter()
        .map(|(addr, at)| async move {
            let answers = cycle
                .ask(
                    addr,
                    client.fetch_records(addr, at, PARTITION_BYTES, ANSWER_BYTES),
                )
                .await
                .unwrap_or_default();
            let mut read = Vec::new();
            let mut alone = Vec::new();
            for (k, r) in answers {
                match r {
                    Ok(Fetched::Record(rec)) if rec.timestamp_ms >= 0 => {
                        read.push((k, rec.timestamp_ms))
                    }
                    Ok(Fetched::Skipped) => alone.push(k),
                    Ok(_) => {}
                    Err(e) => cycle.bad_answer(e),
                }
            }
            for k in alone {
                let rec = cycle
                    .ask(
                        addr,
                        client.fetch_record(addr, &k.0, k.1, k.2, PARTITION_BYTES),
                    )
                    .await
                    .flatten();
                if let Some(rec) = rec.filter(|r| r.timestamp_ms >= 0) {
                    read.push((k, rec.timestamp_ms));
                }
            }
            read
        })
        .collect();
    bounded(jobs, concurrency.min(IN_FLIGHT))
        .await
        .into_iter()
        .flatten()
        .collect()
}
