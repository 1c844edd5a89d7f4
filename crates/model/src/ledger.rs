//! A ledger as the durability audit sees it (BookKeeper's ledger: a log striped over an ensemble of bookies).
//!
//! What it owns: the ledger's layout ([`LedgerLayout`]: segments with their ensembles, write quorum, ack quorum),
//! the replica schedule ([`Stripes`]: which entries one ensemble member must hold, as runs, computed
//! arithmetically — bookie `b` of an ensemble of `E` with write quorum `WQ` holds entry `e` iff
//! `(b - e) mod E < WQ`), and what one audit pass observed of a ledger ([`LedgerObservation`]: its metadata
//! version, its under-replication mark, each bookie's answer). No judging: the checks crate compares.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// A run of consecutive entries `[start, end_exclusive)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EntryRun {
    /// First entry of the run.
    pub start: i64,
    /// One past the last entry.
    pub end_exclusive: i64,
}

impl EntryRun {
    /// The run `[start, end_exclusive)`.
    pub const fn new(start: i64, end_exclusive: i64) -> Self {
        Self {
            start,
            end_exclusive,
        }
    }

    /// Entries in the run.
    pub fn len(&self) -> u64 {
        (self.end_exclusive as i128 - self.start as i128).max(0) as u64
    }

    /// Whether the run holds no entry.
    pub fn is_empty(&self) -> bool {
        self.end_exclusive <= self.start
    }
}

/// A ledger's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerState {
    /// Still being written.
    Open,
    /// Being recovered after its writer went away.
    InRecovery,
    /// Closed: the last entry is final.
    Closed,
}

/// One segment: from `first_entry` on, entries go to this ensemble.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerSegment {
    /// First entry written to this ensemble.
    pub first_entry: i64,
    /// The bookies (ids, usually `host:port`), in ensemble order.
    pub ensemble: Vec<String>,
}

/// What the metadata says of a ledger's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerLayout {
    /// Ledger id.
    pub id: u64,
    /// Lifecycle state.
    pub state: LedgerState,
    /// Ensemble size (E).
    pub ensemble_size: usize,
    /// Write quorum (WQ): copies of every entry.
    pub write_quorum: usize,
    /// Ack quorum (AQ): copies acknowledged before an add succeeds.
    pub ack_quorum: usize,
    /// Last entry (`None` or -1: nothing written).
    pub last_entry: Option<i64>,
    /// Segments in entry order.
    pub segments: Vec<LedgerSegment>,
}

impl LedgerLayout {
    /// Entries `first..=last` of segment `i` (possibly empty: `first > last`); `None` when there is no segment `i`.
    /// A segment ends before the next one starts, and never past the ledger's last entry (a segment may start
    /// beyond it: its ensemble was replaced before anything more was written).
    pub fn segment_range(&self, i: usize) -> Option<RangeInclusive<i64>> {
        let seg = self.segments.get(i)?;
        let last = self.last_entry.unwrap_or(-1);
        let end = match self.segments.get(i + 1) {
            Some(next) => next.first_entry.saturating_sub(1).min(last),
            None => last,
        };
        Some(seg.first_entry..=end)
    }

    /// Closed with at least one entry: the only ledgers the durability audit checks.
    pub fn is_closed_and_non_empty(&self) -> bool {
        self.state == LedgerState::Closed && self.last_entry.is_some_and(|l| l >= 0)
    }

    /// The entries ensemble member `index` of segment `segment` must hold; `None` when it must hold none.
    pub fn stripes(&self, segment: usize, index: usize) -> Option<Stripes> {
        let range = self.segment_range(segment)?;
        Stripes::new(
            *range.start(),
            *range.end(),
            self.ensemble_size,
            self.write_quorum,
            index,
        )
        .filter(|s| s.count() > 0)
    }

    /// Every bookie that must hold at least one entry, each once, in order of first appearance.
    pub fn bookies_with_entries(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (i, seg) in self.segments.iter().enumerate() {
            for (b, bookie) in seg.ensemble.iter().enumerate() {
                if !out.contains(&bookie.as_str()) && self.stripes(i, b).is_some() {
                    out.push(bookie);
                }
            }
        }
        out
    }
}

/// The entries one bookie of one segment must hold: one stripe of `WQ` consecutive entries per `E`.
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
    pub fn runs(&self) -> impl Iterator<Item = EntryRun> + '_ {
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
        .map(move |s| EntryRun {
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

/// A ledger's under-replication mark (the auditor or a bookie flagged it for re-replication).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnderReplicationMark {
    /// Bookies named by the mark.
    pub replicas: Vec<String>,
    /// When it was marked (ms since the epoch), when the mark says.
    pub marked_at_ms: Option<i64>,
}

/// What one bookie answered about one ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum BookieAnswer {
    /// It holds these entries (sorted, merged runs).
    Entries {
        /// The runs.
        runs: Vec<EntryRun>,
    },
    /// It holds nothing of the ledger.
    NoLedger,
    /// It could not be reached or did not answer in time.
    Unreachable {
        /// Why, naming the request.
        reason: String,
    },
    /// It answered, but badly (an error status or bytes that do not decode).
    Failed {
        /// Why, naming the request.
        reason: String,
    },
}

/// What one audit pass observed of one ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerObservation {
    /// The metadata as read.
    pub layout: LedgerLayout,
    /// The metadata znode's version when read (a changed version means the ledger must be redone).
    pub metadata_version: i32,
    /// Its under-replication mark, if any.
    pub mark: Option<UnderReplicationMark>,
    /// Each asked bookie's answer, by bookie id. Bookies with nothing to hold are not asked.
    pub answers: BTreeMap<String, BookieAnswer>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: i64, end_exclusive: i64) -> EntryRun {
        EntryRun::new(start, end_exclusive)
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
    fn a_bookie_without_a_share_is_not_asked() {
        // One entry (0) in an ensemble of 3 with WQ 2: bookies 0 and 1 hold it, bookie 2 holds nothing.
        let layout = LedgerLayout {
            id: 7,
            state: LedgerState::Closed,
            ensemble_size: 3,
            write_quorum: 2,
            ack_quorum: 2,
            last_entry: Some(0),
            segments: vec![LedgerSegment {
                first_entry: 0,
                ensemble: vec!["a".into(), "b".into(), "c".into()],
            }],
        };
        assert_eq!(layout.bookies_with_entries(), vec!["a", "b"]);
        assert!(layout.is_closed_and_non_empty());
        assert_eq!(layout.segment_range(0), Some(0..=0));
    }

    #[test]
    fn a_segment_never_runs_past_the_last_entry() {
        let mut layout = LedgerLayout {
            id: 8,
            state: LedgerState::Closed,
            ensemble_size: 2,
            write_quorum: 2,
            ack_quorum: 2,
            last_entry: Some(4),
            segments: ["a", "b"]
                .iter()
                .zip([0, 10])
                .map(|(b, first)| LedgerSegment {
                    first_entry: first,
                    ensemble: vec![b.to_string(), "c".into()],
                })
                .collect(),
        };
        assert_eq!(layout.segment_range(0), Some(0..=4));
        assert!(layout.segment_range(1).unwrap().is_empty());
        assert_eq!(layout.bookies_with_entries(), vec!["a", "c"]);
        layout.last_entry = Some(12);
        assert_eq!(layout.segment_range(0), Some(0..=9));
        assert_eq!(layout.bookies_with_entries(), vec!["a", "c", "b"]);
    }
}
