//! Replica comparison for the durability audit: what a bookie lacks of its expected stripes (set difference of
//! sorted runs, walked together in O(runs)), how many copies the worst entry of a segment has left (a sweep over
//! the missing runs' ends), and the class of that worst entry. Never loops over single entries.

use mqwatch_model::EntryRun;

/// The entries of `expected` that `available` (sorted, disjoint runs) lacks, as runs. Walks both together:
/// O(expected runs + available runs).
pub fn missing(
    expected: impl IntoIterator<Item = EntryRun>,
    available: &[EntryRun],
) -> Vec<EntryRun> {
    let mut out: Vec<EntryRun> = Vec::new();
    let mut j = 0;
    for run in expected {
        let mut cur = run.start;
        while j < available.len() && available[j].end_exclusive <= cur {
            j += 1;
        }
        let mut k = j;
        while cur < run.end_exclusive {
            match available.get(k) {
                Some(a) if a.start <= cur => {
                    cur = cur.max(a.end_exclusive);
                    k += 1;
                }
                Some(a) if a.start < run.end_exclusive => {
                    push(
                        &mut out,
                        EntryRun {
                            start: cur,
                            end_exclusive: a.start,
                        },
                    );
                    cur = a.end_exclusive;
                    k += 1;
                }
                _ => {
                    push(
                        &mut out,
                        EntryRun {
                            start: cur,
                            end_exclusive: run.end_exclusive,
                        },
                    );
                    cur = run.end_exclusive;
                }
            }
        }
    }
    out
}

fn push(out: &mut Vec<EntryRun>, r: EntryRun) {
    match out.last_mut() {
        Some(last) if last.end_exclusive == r.start => last.end_exclusive = r.end_exclusive,
        _ => out.push(r),
    }
}

/// The fewest copies any entry of a segment has left, and the entries at that level, given what each bookie of
/// its ensemble lacks (`missing` per bookie, each within that bookie's stripes). An entry's copies are `WQ` minus
/// the bookies of its write set that lack it; a sweep over the missing runs' ends finds the worst, in
/// O(r log r) for r missing runs. `None` when nothing is missing.
pub fn worst_copies(
    write_quorum: usize,
    missing_per_bookie: &[Vec<EntryRun>],
) -> Option<(usize, Vec<EntryRun>)> {
    let mut events: Vec<(i64, i32)> = missing_per_bookie
        .iter()
        .flatten()
        .flat_map(|r| [(r.start, 1), (r.end_exclusive, -1)])
        .collect();
    if events.is_empty() {
        return None;
    }
    events.sort_unstable();
    let (mut depth, mut worst, mut at) = (0i32, 0i32, Vec::<EntryRun>::new());
    let mut i = 0;
    while i < events.len() {
        let x = events[i].0;
        while i < events.len() && events[i].0 == x {
            depth += events[i].1;
            i += 1;
        }
        let Some(&(next, _)) = events.get(i) else {
            break;
        };
        if depth > worst {
            worst = depth;
            at.clear();
        }
        if depth == worst && depth > 0 {
            push(
                &mut at,
                EntryRun {
                    start: x,
                    end_exclusive: next,
                },
            );
        }
    }
    let copies = write_quorum.saturating_sub(worst.max(0) as usize);
    Some((copies, at))
}

/// How bad a ledger's worst entry is, by its copies left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Durability {
    /// Fewer than WQ copies, at least AQ.
    BelowWriteQuorum,
    /// Fewer than AQ copies, at least one.
    BelowAckQuorum,
    /// No copy at all.
    NoReplica,
}

/// The class of an entry with `copies` left, or `None` when it has its full write quorum.
pub fn classify(copies: usize, write_quorum: usize, ack_quorum: usize) -> Option<Durability> {
    match copies {
        0 => Some(Durability::NoReplica),
        c if c < ack_quorum => Some(Durability::BelowAckQuorum),
        c if c < write_quorum => Some(Durability::BelowWriteQuorum),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: i64, end_exclusive: i64) -> EntryRun {
        EntryRun::new(start, end_exclusive)
    }

    #[test]
    fn missing_walks_expected_and_available_together() {
        let expected = [r(0, 1), r(2, 4), r(5, 7), r(8, 10)];
        let available = [r(0, 3), r(6, 9)];
        assert_eq!(
            missing(expected, &available),
            vec![r(3, 4), r(5, 6), r(9, 10)]
        );
        assert_eq!(missing(expected, &[]), expected.to_vec());
        assert_eq!(missing(expected, &[r(-5, 100)]), vec![]);
    }

    #[test]
    fn the_worst_entry_decides_the_class() {
        // WQ 3: entry 4 is missing on two bookies, entries 2..4 on one.
        let per_bookie = vec![vec![r(2, 5)], vec![r(4, 5)], vec![]];
        assert_eq!(worst_copies(3, &per_bookie), Some((1, vec![r(4, 5)])));
        assert_eq!(classify(1, 3, 2), Some(Durability::BelowAckQuorum));
        assert_eq!(classify(2, 3, 2), Some(Durability::BelowWriteQuorum));
        assert_eq!(classify(0, 3, 2), Some(Durability::NoReplica));
        assert_eq!(classify(3, 3, 2), None);
        assert_eq!(worst_copies(3, &[vec![], vec![]]), None);
    }
}
