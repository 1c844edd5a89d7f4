//! `check_ledger` against a naive per-entry model on small random ledgers: up to 3 segments (some empty), E <= 5,
//! up to 60 entries, ensembles drawn from 7 bookies (sometimes naming one twice), each bookie answering entries,
//! ENOLEDGER, an error or nothing. The model walks every entry's write set and counts the distinct bookies that
//! hold it (unknown bookies count as holding); the audit must agree on the worst copies, the entries at that level,
//! what each bookie lacks, and which bookies are unavailable.

use mqwatch_checks::ledgers::{LedgerThresholds, LedgerVerdict, check_ledger};
use mqwatch_model::{
    BookieAnswer, EntryRun, FindingKind, LedgerLayout, LedgerObservation, LedgerSegment,
    LedgerState,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const POOL: usize = 7;
const MAX_LAST: i64 = 59;

fn expand(runs: &[EntryRun]) -> BTreeSet<i64> {
    runs.iter().flat_map(|r| r.start..r.end_exclusive).collect()
}

fn to_runs(set: &BTreeSet<i64>) -> Vec<EntryRun> {
    let mut out: Vec<EntryRun> = Vec::new();
    for &e in set {
        match out.last_mut() {
            Some(last) if last.end_exclusive == e => last.end_exclusive = e + 1,
            _ => out.push(EntryRun::new(e, e + 1)),
        }
    }
    out
}

fn name(i: usize) -> String {
    format!("10.0.0.{i}:3181")
}

/// One bookie's answer: entries (a sparse set, or everything but a sparse set), ENOLEDGER, an error, or nothing.
fn answer() -> impl Strategy<Value = Option<BookieAnswer>> {
    let set = proptest::collection::btree_set(0..=MAX_LAST, 0..20);
    prop_oneof![
        6 => (set, any::<bool>()).prop_map(|(s, invert)| {
            let held: BTreeSet<i64> = if invert {
                (0..=MAX_LAST).filter(|x| !s.contains(x)).collect()
            } else {
                s
            };
            Some(BookieAnswer::Entries { runs: to_runs(&held) })
        }),
        1 => Just(Some(BookieAnswer::NoLedger)),
        1 => Just(Some(BookieAnswer::Failed { reason: "EIO".into() })),
        1 => Just(Some(BookieAnswer::Unreachable { reason: "timeout".into() })),
        1 => Just(None),
    ]
}

/// An ensemble of `e` members: distinct, or drawn freely (duplicates possible).
fn ensemble(e: usize) -> impl Strategy<Value = Vec<String>> {
    (
        proptest::sample::subsequence((0..POOL).collect::<Vec<_>>(), e).prop_shuffle(),
        proptest::collection::vec(0..POOL, e),
        any::<bool>(),
    )
        .prop_map(|(distinct, free, pick_free)| {
            let ids = if pick_free { free } else { distinct };
            ids.into_iter().map(name).collect()
        })
}

fn ledger() -> impl Strategy<Value = LedgerObservation> {
    (1usize..=5, 0..=MAX_LAST, 1usize..=3)
        .prop_flat_map(|(e, last, segs)| {
            (
                Just(e),
                1..=e,
                Just(last),
                proptest::collection::vec(1..=last + 2, segs - 1),
                proptest::collection::vec(ensemble(e), segs),
                proptest::collection::vec(answer(), POOL),
            )
        })
        .prop_flat_map(|(e, wq, last, cuts, ensembles, answers)| {
            (1..=wq).prop_map(move |aq| {
                let mut firsts = cuts.clone();
                firsts.push(0);
                firsts.sort_unstable();
                let segments = firsts
                    .iter()
                    .zip(&ensembles)
                    .map(|(&first_entry, ensemble)| LedgerSegment {
                        first_entry,
                        ensemble: ensemble.clone(),
                    })
                    .collect();
                let answers = answers
                    .iter()
                    .enumerate()
                    .filter_map(|(i, a)| Some((name(i), a.clone()?)))
                    .collect();
                LedgerObservation {
                    layout: LedgerLayout {
                        id: 1,
                        state: LedgerState::Closed,
                        ensemble_size: e,
                        write_quorum: wq,
                        ack_quorum: aq,
                        last_entry: Some(last),
                        segments,
                    },
                    metadata_version: 0,
                    mark: None,
                    answers,
                }
            })
        })
}

/// Whether `bookie` holds entry `x`, by its answer (unknown: yes).
fn holds(obs: &LedgerObservation, bookie: &str, x: i64) -> bool {
    match obs.answers.get(bookie) {
        Some(BookieAnswer::Entries { runs }) => {
            runs.iter().any(|r| r.start <= x && x < r.end_exclusive)
        }
        Some(BookieAnswer::NoLedger) => false,
        _ => true,
    }
}

/// The naive model: per entry, its write set's distinct bookies; returns (copies per entry, expected entries per
/// bookie).
fn naive(obs: &LedgerObservation) -> (BTreeMap<i64, usize>, BTreeMap<String, BTreeSet<i64>>) {
    let l = &obs.layout;
    let (e, wq) = (l.ensemble_size, l.write_quorum);
    let mut copies = BTreeMap::new();
    let mut expected: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for x in 0..=l.last_entry.unwrap() {
        let seg = l
            .segments
            .iter()
            .rev()
            .find(|s| s.first_entry <= x)
            .unwrap();
        let write_set: BTreeSet<&String> = (0..wq)
            .map(|j| &seg.ensemble[(x as usize + j) % e])
            .collect();
        for b in &write_set {
            expected.entry(b.to_string()).or_default().insert(x);
        }
        copies.insert(x, write_set.iter().filter(|b| holds(obs, b, x)).count());
    }
    (copies, expected)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_audit_agrees_with_the_per_entry_model(obs in ledger()) {
        let verdict = check_ledger(&obs, &BTreeMap::new(), &LedgerThresholds::default(), 0);
        let LedgerVerdict::Checked { violations, unavailable_bookies } = verdict else {
            panic!("a closed, non-empty, unmarked ledger is checked");
        };
        let (copies, expected) = naive(&obs);
        let l = &obs.layout;

        let unavailable: Vec<String> = expected
            .keys()
            .filter(|b| !matches!(
                obs.answers.get(*b),
                Some(BookieAnswer::Entries { .. } | BookieAnswer::NoLedger)
            ))
            .cloned()
            .collect();
        prop_assert_eq!(unavailable_bookies, unavailable);

        let lacks: BTreeMap<String, BTreeSet<i64>> = expected
            .iter()
            .map(|(b, xs)| (b.clone(), xs.iter().copied().filter(|&x| !holds(&obs, b, x)).collect::<BTreeSet<_>>()))
            .filter(|(_, xs)| !xs.is_empty())
            .collect();

        let min = *copies.values().min().unwrap();
        let replica: Vec<_> = violations.iter().filter(|v| v.kind != FindingKind::PlacementViolation).collect();
        if min >= l.write_quorum {
            prop_assert!(replica.is_empty(), "{:?}", replica);
            prop_assert!(lacks.is_empty());
            return Ok(());
        }
        prop_assert_eq!(replica.len(), 1);
        let v = replica[0];
        let kind = if min == 0 {
            FindingKind::EntriesNoReplica
        } else if min < l.ack_quorum {
            FindingKind::EntriesBelowAckQuorum
        } else {
            FindingKind::EntriesBelowWriteQuorum
        };
        prop_assert_eq!(v.kind, kind);
        prop_assert_eq!(v.copies, Some(min));
        let at: BTreeSet<i64> = copies.iter().filter(|(_, c)| **c == min).map(|(x, _)| *x).collect();
        prop_assert_eq!(v.worst_entries.clone(), to_runs(&at), "sorted, merged runs");
        let got: BTreeMap<String, BTreeSet<i64>> = v.missing.iter().map(|(b, runs)| (b.clone(), expand(runs))).collect();
        prop_assert_eq!(got, lacks);
        for runs in v.missing.values() {
            prop_assert_eq!(runs.clone(), to_runs(&expand(runs)), "sorted, merged runs");
        }
    }
}
