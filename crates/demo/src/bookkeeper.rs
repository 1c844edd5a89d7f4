//! The simulated BookKeeper cluster `demo-bookkeeper`: five bookies on three racks and a rolling set of ledgers
//! (a new one every two minutes, the open one rolled over and closed, those older than an hour deleted), each
//! striped over an ensemble of 3 or 5 with write quorum 3 and ack quorum 2. [`BookkeeperSim::observe`] returns
//! what the BookKeeper collector reads in one audit pass: the registered bookies (all writable, all
//! answering), the rack map, and per ledger a [`LedgerObservation`] (metadata as read, and for closed non-empty
//! ledgers every bookie's answer to GET_LIST_OF_ENTRIES_OF_LEDGER). Judging is left to the audit's pure check.
//!
//! Fault: bookie 3 loses a run of entries of the three newest closed ledgers it holds; the entries come back
//! (re-replicated) when the fault ends.

use crate::flow::daily;
use crate::noise;
use crate::rocketmq::node;
use crate::schedule::{FaultKind, Schedule};
use mqwatch_model::{
    BookieAnswer, ClusterSnapshot, Engine, EntryRun, LedgerLayout, LedgerObservation,
    LedgerSegment, LedgerState, NodeRef, NodeRole, ObservedNodeState,
};
use std::collections::BTreeMap;

/// Bookie id and rack.
const BOOKIES: [(&str, &str); 5] = [
    ("192.0.2.31:3181", "/dc-1/rack-1"),
    ("192.0.2.32:3181", "/dc-1/rack-1"),
    ("192.0.2.33:3181", "/dc-1/rack-2"),
    ("192.0.2.34:3181", "/dc-1/rack-2"),
    ("192.0.2.35:3181", "/dc-1/rack-3"),
];
/// The bookie that loses entries.
const VICTIM: usize = 2;
/// Ledgers damaged per occurrence of the fault.
const VICTIM_LEDGERS: usize = 3;
/// A ledger is rolled over this often.
const LEDGER_EVERY_MS: u64 = 120_000;
/// Ledgers kept (an hour's worth).
const LEDGERS_KEPT: u64 = 30;
/// Entries per second at the daily peak.
const PEAK_ENTRIES_PER_S: f64 = 25.0;

/// What one audit pass reads of the cluster.
#[derive(Debug, Clone)]
pub struct BookkeeperObservation {
    /// The bookies (as the audit reports them: nodes with registration and answer), engine and time.
    pub snapshot: ClusterSnapshot,
    /// Every ledger, as read.
    pub ledgers: Vec<LedgerObservation>,
    /// Bookie id → rack.
    pub racks: BTreeMap<String, String>,
}

/// The simulated BookKeeper cluster. Stateless between passes: ledgers are a function of time and seed.
pub struct BookkeeperSim {
    cluster: String,
    seed: u64,
    schedule: Schedule,
}

impl BookkeeperSim {
    /// The cluster, named `cluster`.
    pub fn new(cluster: &str, seed: u64, schedule: Schedule) -> Self {
        BookkeeperSim {
            cluster: cluster.to_string(),
            seed,
            schedule,
        }
    }

    /// The ledger created `k` rollovers after the Unix epoch, as its metadata reads at `now`.
    fn layout(&self, k: u64, now: u64) -> LedgerLayout {
        let open = (k + 1) * LEDGER_EVERY_MS > now;
        let wide = k.is_multiple_of(3);
        let e = if wide { 5 } else { 3 };
        let ensemble = (0..e)
            .map(|i| BOOKIES[(k as usize + i) % BOOKIES.len()].0.to_string())
            .collect();
        let entries = PEAK_ENTRIES_PER_S
            * (LEDGER_EVERY_MS / 1000) as f64
            * daily(k * LEDGER_EVERY_MS)
            * (0.9 + 0.2 * noise::unit(self.seed, 0xB00C, k));
        LedgerLayout {
            id: k,
            state: if open {
                LedgerState::Open
            } else {
                LedgerState::Closed
            },
            ensemble_size: e,
            write_quorum: 3,
            ack_quorum: 2,
            last_entry: (!open).then(|| entries.round() as i64 - 1),
            segments: vec![LedgerSegment {
                first_entry: 0,
                ensemble,
            }],
        }
    }

    /// Ledgers (by id) the fault under way at `now` took entries from, with the lost entries.
    fn damage(&self, now: u64) -> BTreeMap<u64, EntryRun> {
        let Some(o) = self.schedule.active(FaultKind::MissingEntries, now) else {
            return BTreeMap::new();
        };
        let newest_closed = (o.since_ms / LEDGER_EVERY_MS).saturating_sub(1);
        let victim = BOOKIES[VICTIM].0;
        (newest_closed.saturating_sub(LEDGERS_KEPT / 2)..=newest_closed)
            .rev()
            .map(|k| self.layout(k, o.since_ms))
            .filter(|l| l.segments[0].ensemble.iter().any(|b| b == victim))
            .take(VICTIM_LEDGERS)
            .map(|l| {
                let last = l.last_entry.unwrap_or(0);
                let from =
                    (last as f64 * (0.3 + 0.1 * noise::unit(self.seed, l.id, o.index))) as i64;
                (l.id, EntryRun::new(from, from + last / 6 + 1))
            })
            .collect()
    }

    /// One audit pass at `now_ms`.
    pub fn observe(&self, now_ms: u64) -> BookkeeperObservation {
        let damage = self.damage(now_ms);
        let newest = now_ms / LEDGER_EVERY_MS;
        let ledgers = (newest.saturating_sub(LEDGERS_KEPT - 1)..=newest)
            .map(|k| {
                let layout = self.layout(k, now_ms);
                let mut answers = BTreeMap::new();
                if layout.is_closed_and_non_empty() {
                    for (i, bookie) in layout.segments[0].ensemble.iter().enumerate() {
                        let Some(stripes) = layout.stripes(0, i) else {
                            continue;
                        };
                        let mut runs: Vec<EntryRun> = stripes.runs().collect();
                        if let Some(lost) = damage.get(&k).filter(|_| bookie == BOOKIES[VICTIM].0) {
                            runs = without(&runs, *lost);
                        }
                        let answer = if runs.is_empty() {
                            BookieAnswer::NoLedger
                        } else {
                            BookieAnswer::Entries { runs }
                        };
                        answers.insert(bookie.clone(), answer);
                    }
                }
                LedgerObservation {
                    metadata_version: if layout.state == LedgerState::Open {
                        1
                    } else {
                        2
                    },
                    layout,
                    mark: None,
                    answers,
                }
            })
            .collect();
        let nodes = BOOKIES
            .iter()
            .map(|(id, _)| {
                let n = NodeRef::new(NodeRole::Bookie, *id).with_addr(*id);
                node(n, Some(ObservedNodeState::Active), false, now_ms)
            })
            .collect();
        let racks: BTreeMap<String, String> = BOOKIES
            .iter()
            .map(|(id, rack)| (id.to_string(), rack.to_string()))
            .collect();
        BookkeeperObservation {
            snapshot: ClusterSnapshot {
                cluster: self.cluster.clone(),
                engine: Some(Engine::Bookkeeper),
                taken_at_ms: now_ms,
                cycle_ms: 120 + (noise::unit(self.seed, 13, now_ms / 1000) * 80.0) as u64,
                nodes,
                racks: racks.clone(),
                ..Default::default()
            },
            ledgers,
            racks,
        }
    }
}

/// `runs` without the entries of `lost`.
fn without(runs: &[EntryRun], lost: EntryRun) -> Vec<EntryRun> {
    let mut out = Vec::new();
    for r in runs {
        if r.end_exclusive <= lost.start || lost.end_exclusive <= r.start {
            out.push(*r);
            continue;
        }
        if r.start < lost.start {
            out.push(EntryRun::new(r.start, lost.start));
        }
        if lost.end_exclusive < r.end_exclusive {
            out.push(EntryRun::new(lost.end_exclusive, r.end_exclusive));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_entries_are_cut_out_of_runs() {
        let runs = [EntryRun::new(0, 10), EntryRun::new(20, 30)];
        assert_eq!(
            without(&runs, EntryRun::new(5, 25)),
            [EntryRun::new(0, 5), EntryRun::new(25, 30)]
        );
        assert_eq!(without(&runs, EntryRun::new(10, 20)), runs);
    }

    #[test]
    fn the_victim_lacks_entries_only_while_the_fault_lasts() {
        let start = 1_800_000_000_000;
        let s = Schedule::anchored(start, 0, 1.0);
        let sim = BookkeeperSim::new("bk", 1, s);
        let short = |obs: &BookkeeperObservation| -> usize {
            obs.ledgers
                .iter()
                .filter(|l| match l.answers.get(BOOKIES[VICTIM].0) {
                    Some(BookieAnswer::Entries { runs }) => {
                        let held: u64 = runs.iter().map(EntryRun::len).sum();
                        let i = l.layout.segments[0]
                            .ensemble
                            .iter()
                            .position(|b| b == BOOKIES[VICTIM].0)
                            .unwrap();
                        held < l.layout.stripes(0, i).unwrap().count()
                    }
                    _ => false,
                })
                .count()
        };
        let during = sim.observe(start);
        assert_eq!(short(&during), VICTIM_LEDGERS);
        assert_eq!(during.ledgers.len() as u64, LEDGERS_KEPT);
        assert_eq!(during.snapshot.nodes.len(), 5);
        let after = s.active(FaultKind::MissingEntries, start).unwrap().until_ms;
        assert_eq!(short(&sim.observe(after)), 0);
    }
}
