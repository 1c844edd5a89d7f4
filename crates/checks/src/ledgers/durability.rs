//! Replicas of one ledger: each ensemble member's expected stripes (per segment, from the layout) against what the
//! bookie answered, as runs; then the fewest copies any entry has left over all segments.
//!
//! A bookie that answered with entries lacks `stripes \ runs`; one that answered ENOLEDGER lacks all its stripes;
//! one that did not answer (or answered badly, or was not asked) is unknown and counted as holding everything, so
//! what is reported missing is certain. A bookie named twice in one ensemble holds one copy of an entry, not two:
//! where its stripes at the two indexes overlap, the second index counts as a missing copy (though the bookie is
//! not said to lack anything). An index beyond the ensemble's members holds nothing. Work is O(E + runs) per
//! segment; single entries are never visited.

use crate::replicas::{missing, worst_copies};
use mqwatch_model::{BookieAnswer, EntryRun, LedgerObservation};
use std::collections::{BTreeMap, BTreeSet};

/// What the answers tell of one ledger's replicas.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Replicas {
    /// Fewest copies any entry has left and the entries at that level; `None` when no copy is missing.
    pub worst: Option<(usize, Vec<EntryRun>)>,
    /// What each bookie lacks of its expected stripes, merged over segments.
    pub missing: BTreeMap<String, Vec<EntryRun>>,
    /// Bookies that must hold entries but did not answer, or answered badly (sorted, each once).
    pub unavailable: Vec<String>,
}

/// Every entry: what an unknown bookie is assumed to hold.
const EVERYTHING: [EntryRun; 1] = [EntryRun::new(i64::MIN, i64::MAX)];

/// Compares every bookie's answer with its stripes. The layout's quorums must be valid (1 <= AQ <= WQ <= E).
pub(crate) fn compare(obs: &LedgerObservation) -> Replicas {
    let layout = &obs.layout;
    let write_quorum = layout.write_quorum.min(layout.ensemble_size);
    let mut out = Replicas::default();
    let mut unavailable: BTreeSet<&str> = BTreeSet::new();
    let mut not_held: Vec<Vec<EntryRun>> = Vec::with_capacity(layout.ensemble_size);
    for (i, seg) in layout.segments.iter().enumerate() {
        not_held.clear();
        for b in 0..layout.ensemble_size {
            let Some(stripes) = layout.stripes(i, b) else {
                continue;
            };
            let Some(bookie) = seg.ensemble.get(b) else {
                not_held.push(stripes.runs().collect());
                continue;
            };
            let held: &[EntryRun] = match obs.answers.get(bookie) {
                Some(BookieAnswer::Entries { runs }) => runs,
                Some(BookieAnswer::NoLedger) => &[],
                Some(BookieAnswer::Unreachable { .. } | BookieAnswer::Failed { .. }) | None => {
                    unavailable.insert(bookie);
                    &EVERYTHING
                }
            };
            let lacks = missing(stripes.runs(), held);
            let copies_not_held = if seg.ensemble[..b].contains(bookie) {
                let earlier = earlier_stripes(obs, i, b, bookie);
                missing(stripes.runs(), &missing(held.iter().copied(), &earlier))
            } else {
                lacks.clone()
            };
            if !lacks.is_empty() {
                let merged = out.missing.entry(bookie.clone()).or_default();
                *merged = union(merged, &lacks);
            }
            not_held.push(copies_not_held);
        }
        let Some((copies, at)) = worst_copies(write_quorum, &not_held) else {
            continue;
        };
        match &mut out.worst {
            Some((c, runs)) if *c == copies => runs.extend(at),
            Some((c, _)) if *c < copies => {}
            _ => out.worst = Some((copies, at)),
        }
    }
    if let Some((_, runs)) = &mut out.worst {
        *runs = union(runs, &[]);
    }
    out.unavailable = unavailable.into_iter().map(str::to_owned).collect();
    out
}

/// The union of the stripes of segment `segment` at the indexes before `index` where `bookie` also stands.
fn earlier_stripes(
    obs: &LedgerObservation,
    segment: usize,
    index: usize,
    bookie: &str,
) -> Vec<EntryRun> {
    let layout = &obs.layout;
    let mut acc: Vec<EntryRun> = Vec::new();
    for (p, member) in layout.segments[segment].ensemble[..index]
        .iter()
        .enumerate()
    {
        if member == bookie
            && let Some(s) = layout.stripes(segment, p)
        {
            acc = union(&acc, &s.runs().collect::<Vec<_>>());
        }
    }
    acc
}

/// The union of two sorted run lists, sorted and merged (touching or overlapping runs become one).
pub(crate) fn union(a: &[EntryRun], b: &[EntryRun]) -> Vec<EntryRun> {
    let mut out: Vec<EntryRun> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if y.start < x.start => {
                j += 1;
                *y
            }
            (Some(x), _) => {
                i += 1;
                *x
            }
            (None, Some(y)) => {
                j += 1;
                *y
            }
            (None, None) => break,
        };
        match out.last_mut() {
            Some(last) if next.start <= last.end_exclusive => {
                last.end_exclusive = last.end_exclusive.max(next.end_exclusive);
            }
            _ if next.is_empty() => {}
            _ => out.push(next),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledgers::tests::{closed, entries, r};
    use mqwatch_model::LedgerSegment;

    #[test]
    fn union_merges_overlapping_and_touching_runs() {
        assert_eq!(
            union(&[r(0, 2), r(5, 7)], &[r(2, 3), r(6, 9), r(20, 21)]),
            vec![r(0, 3), r(5, 9), r(20, 21)]
        );
        assert_eq!(union(&[r(3, 4), r(4, 5)], &[]), vec![r(3, 5)]);
        assert_eq!(union(&[], &[r(1, 1)]), vec![]);
    }

    #[test]
    fn a_bookie_named_twice_counts_as_one_copy() {
        // E 3, WQ 2: entry 0 goes to indexes 0 and 1, both "a"; entry 1 to "a" and "c"; entry 2 to "c" and "a".
        let mut obs = closed(1, 3, 2, 1, 2, &["a", "a", "c"]);
        obs.answers.insert("a".into(), entries(&[r(0, 3)]));
        obs.answers.insert("c".into(), entries(&[r(1, 3)]));
        let rep = compare(&obs);
        assert_eq!(rep.worst, Some((1, vec![r(0, 1)])));
        assert!(rep.missing.is_empty(), "nobody lacks an entry it holds");
        assert!(rep.unavailable.is_empty());
    }

    #[test]
    fn an_index_without_a_member_holds_nothing() {
        // Ensemble size 3 but only two members: index 2's copies (entries 1 and 2 with WQ 2) do not exist.
        let mut obs = closed(1, 3, 2, 2, 2, &["a", "b"]);
        obs.answers.insert("a".into(), entries(&[r(0, 3)]));
        obs.answers.insert("b".into(), entries(&[r(0, 2)]));
        assert_eq!(compare(&obs).worst, Some((1, vec![r(1, 3)])));
    }

    #[test]
    fn nothing_past_the_last_entry_is_expected() {
        // Segment 0 would end where segment 1 begins (entry 5), but the ledger's last entry is 2; c and d hold
        // nothing, so their silence does not matter.
        let mut obs = closed(1, 2, 2, 2, 2, &["a", "b"]);
        obs.layout.segments.push(LedgerSegment {
            first_entry: 5,
            ensemble: vec!["c".into(), "d".into()],
        });
        obs.answers.insert("a".into(), entries(&[r(0, 3)]));
        obs.answers.insert("b".into(), entries(&[r(0, 3)]));
        assert_eq!(compare(&obs), Replicas::default());
    }
}
