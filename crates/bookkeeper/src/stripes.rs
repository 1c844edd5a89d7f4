//! Which entries each bookie of a segment must hold (BookKeeper's round-robin distribution schedule), what a
//! bookie lacks of them, and how many copies the worst entry has left: the arithmetic of the BP-34 replicas
//! check. Bookie `b` of an ensemble of `E` with write quorum `WQ` holds entry `e` iff `(b - e) mod E < WQ`, which
//! is periodic in `e`: one stripe of `WQ` consecutive entries per `E`. Everything here works on runs of entries
//! and never loops over single entries. Pure: no I/O, no judging.

use crate::availability::Run;

/// The entries one bookie of one segment must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stripes {
    first: i64,
    /// One past the segment's last entry.
    end: i64,
    ensemble: i64,
    write_quorum: i64,
    /// Residue (mod E) at which this bookie's stripes start.
    phase: i64,
}

impl Stripes {
    /// Bookie `index` of a segment covering entries `first..=last` with ensemble size `ensemble` and write quorum
    /// `write_quorum`. `None` when the segment is empty or the sizes are not a valid quorum (0 < WQ, E >= 1,
    /// index < E).
    pub fn new(
        first: i64,
        last: i64,
        ensemble: usize,
        write_quorum: usize,
        index: usize,
    ) -> Option<Self> {
        let (e, wq, b) = (
            i64::try_from(ensemble).ok()?,
            i64::try_from(write_quorum).ok()?,
            i64::try_from(index).ok()?,
        );
        if last < first || e < 1 || wq < 1 || b >= e {
            return None;
        }
        let end = last.checked_add(1)?;
        Some(Stripes {
            first,
            end,
            ensemble: e,
            write_quorum: wq.min(e),
            phase: (b - wq + 1).rem_euclid(e),
        })
    }

    /// The expected entries as sorted, disjoint runs (one per period of `E` entries, clipped to the segment).
    pub fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        let (e, wq) = (self.ensemble, self.write_quorum);
        let whole = wq >= e;
        // The stripe containing or preceding `first`.
        let start = if whole {
            self.first
        } else {
            self.first - (self.first - self.phase).rem_euclid(e)
        };
        let step = if whole { i64::MAX } else { e };
        std::iter::successors(Some(start), move |s| {
            s.checked_add(step).filter(|n| *n < self.end)
        })
        .map(move |s| Run {
            start: s.max(self.first),
            end_exclusive: if whole {
                self.end
            } else {
                s.saturating_add(wq).min(self.end)
            },
        })
        .filter(|r| r.start < r.end_exclusive)
    }

    /// How many entries the bookie must hold, computed arithmetically.
    pub fn count(&self) -> u64 {
        self.runs_len_arithmetic()
    }

    fn runs_len_arithmetic(&self) -> u64 {
        let (e, wq) = (self.ensemble as i128, self.write_quorum as i128);
        let (first, end) = (self.first as i128, self.end as i128);
        // Entries below x that the bookie holds, counted from a stripe boundary far below.
        let held_below = |x: i128| -> i128 {
            let rel = x - self.phase as i128;
            rel.div_euclid(e) * wq + rel.rem_euclid(e).min(wq)
        };
        (held_below(end) - held_below(first)).max(0) as u64
    }
}

/// The entries of `expected` that `available` (sorted, disjoint runs) lacks, as runs. Walks both together:
/// O(expected runs + available runs).
pub fn missing(expected: impl IntoIterator<Item = Run>, available: &[Run]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
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
                        Run {
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
                        Run {
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

fn push(out: &mut Vec<Run>, r: Run) {
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
    missing_per_bookie: &[Vec<Run>],
) -> Option<(usize, Vec<Run>)> {
    let mut events: Vec<(i64, i32)> = missing_per_bookie
        .iter()
        .flatten()
        .flat_map(|r| [(r.start, 1), (r.end_exclusive, -1)])
        .collect();
    if events.is_empty() {
        return None;
    }
    events.sort_unstable();
    let (mut depth, mut worst, mut at) = (0i32, 0i32, Vec::<Run>::new());
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
                Run {
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

    fn r(start: i64, end_exclusive: i64) -> Run {
        Run {
            start,
            end_exclusive,
        }
    }

    #[test]
    fn bookie_0_of_3_with_wq_2_holds_residues_0_and_2() {
        // (0 - e) mod 3 < 2  <=>  e mod 3 in {0, 2}: entries 0, 2, 3, 5, 6, 8, 9.
        let s = Stripes::new(0, 9, 3, 2, 0).unwrap();
        assert_eq!(
            s.runs().collect::<Vec<_>>(),
            vec![r(0, 1), r(2, 4), r(5, 7), r(8, 10)]
        );
        assert_eq!(s.count(), 7);
        let full = Stripes::new(5, 9, 3, 3, 1).unwrap();
        assert_eq!(full.runs().collect::<Vec<_>>(), vec![r(5, 10)]);
        assert!(
            Stripes::new(5, 4, 3, 2, 0).is_none(),
            "an empty segment asks nobody"
        );
        assert!(Stripes::new(0, 4, 3, 2, 3).is_none());
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
