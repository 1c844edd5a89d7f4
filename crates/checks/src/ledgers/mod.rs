//! The BP-34 durability audit of one ledger, pure: which ledgers are checked (closed, non-empty, not already
//! marked under-replicated unless the mark outlived the grace period → `under_replication_stuck`), placement
//! (distinct ensemble members, ensemble size, racks per write quorum → `placement_violation`), and replicas (each
//! bookie's expected stripes against its answer, the ledger classed by its worst entry → `entries_no_replica`,
//! `entries_below_ack_quorum`, `entries_below_write_quorum`, with the missing entries as runs per bookie).
//! Bookies that did not answer (or answered badly) are unknown, not empty: their expected entries count as held,
//! so a violation found is certain, and the ledger is also reported as unavailable.
//!
//! Layout: this file holds the verdict, the counts and the finding; `placement` judges the metadata alone and
//! `durability` compares the answers with the replica schedule, in runs (never entry by entry).

mod counts;
mod durability;
mod placement;
mod report;

pub use counts::AuditCounts;
pub use placement::DEFAULT_RACK;
pub use report::{MAX_EVIDENCE_RUNS, violation_finding};

use crate::replicas::{Durability, classify};
use mqwatch_model::{
    EntryRun, FindingKind, LedgerLayout, LedgerObservation, LedgerState, Span, UnderReplicationMark,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Tuning of the ledger audit (`[thresholds.ledgers]`). BookKeeper's defaults: grace off, 2 racks per quorum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LedgerThresholds {
    /// A mark older than this is `under_replication_stuck`; `None` (default) skips marked ledgers.
    pub grace: Option<Span>,
    /// Racks every write quorum must span, capped at WQ (default 2). Checked only when a rack map is known.
    pub min_racks_per_write_quorum: usize,
}

impl Default for LedgerThresholds {
    fn default() -> Self {
        Self {
            grace: None,
            min_racks_per_write_quorum: 2,
        }
    }
}

/// Why a ledger was not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Open or in recovery: its last entry is not final.
    Open,
    /// Closed without entries.
    Empty,
    /// Already marked under-replicated, within the grace period (or no grace period).
    Marked,
}

/// One violation of one ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerViolation {
    /// `entries_no_replica`, `entries_below_ack_quorum`, `entries_below_write_quorum`, `placement_violation` or
    /// `under_replication_stuck`.
    pub kind: FindingKind,
    /// Copies the worst entry has left (replica violations).
    pub copies: Option<usize>,
    /// The entries at that worst level (replica violations).
    pub worst_entries: Vec<EntryRun>,
    /// What each bookie lacks of its expected stripes (replica violations), by bookie id.
    pub missing: BTreeMap<String, Vec<EntryRun>>,
    /// Human-readable detail (placement: which quorum on which racks; stuck: the mark's age).
    pub detail: String,
    /// The ledger's ensemble size (E).
    pub ensemble_size: usize,
    /// The ledger's write quorum (WQ).
    pub write_quorum: usize,
    /// The ledger's ack quorum (AQ).
    pub ack_quorum: usize,
    /// Age of the under-replication mark (`under_replication_stuck`).
    pub mark_age_ms: Option<u64>,
    /// The grace period the mark outlived (`under_replication_stuck`).
    pub grace_ms: Option<u64>,
}

impl LedgerViolation {
    /// A violation of `kind` of the ledger laid out as `layout`, with nothing but `detail` filled in.
    pub fn new(kind: FindingKind, layout: &LedgerLayout, detail: String) -> Self {
        Self {
            kind,
            copies: None,
            worst_entries: Vec::new(),
            missing: BTreeMap::new(),
            detail,
            ensemble_size: layout.ensemble_size,
            write_quorum: layout.write_quorum,
            ack_quorum: layout.ack_quorum,
            mark_age_ms: None,
            grace_ms: None,
        }
    }
}

/// The audit's conclusion for one ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum LedgerVerdict {
    /// Not checked.
    Skipped {
        /// Why.
        reason: SkipReason,
    },
    /// Checked.
    Checked {
        /// Everything wrong with it (empty: healthy, as far as the answering bookies tell).
        violations: Vec<LedgerViolation>,
        /// Bookies that must hold entries of it but did not answer or answered badly.
        unavailable_bookies: Vec<String>,
    },
}

/// Audits one ledger. `racks` maps bookie id → rack (empty: placement by racks is not checked).
///
/// Open or in-recovery ledgers are skipped, then empty ones. A marked ledger is skipped unless `t.grace` is set and
/// the mark (with a known time) is at least that old: then its only violation is `under_replication_stuck` (it is
/// already flagged, so neither placement nor replicas are judged). Otherwise placement comes first, then the
/// replica class of the worst entry (replicas only when 1 <= AQ <= WQ <= E; placement reports broken quorums).
pub fn check_ledger(
    obs: &LedgerObservation,
    racks: &BTreeMap<String, String>,
    t: &LedgerThresholds,
    now_ms: u64,
) -> LedgerVerdict {
    let layout = &obs.layout;
    if matches!(layout.state, LedgerState::Open | LedgerState::InRecovery) {
        return LedgerVerdict::Skipped {
            reason: SkipReason::Open,
        };
    }
    if !layout.is_closed_and_non_empty() {
        return LedgerVerdict::Skipped {
            reason: SkipReason::Empty,
        };
    }
    if let Some(mark) = &obs.mark {
        return match stuck(layout, mark, t.grace, now_ms) {
            Some(v) => LedgerVerdict::Checked {
                violations: vec![v],
                unavailable_bookies: Vec::new(),
            },
            None => LedgerVerdict::Skipped {
                reason: SkipReason::Marked,
            },
        };
    }
    let mut violations = Vec::new();
    let problems = placement::problems(layout, racks, t.min_racks_per_write_quorum);
    if !problems.is_empty() {
        violations.push(LedgerViolation::new(
            FindingKind::PlacementViolation,
            layout,
            problems.join("; "),
        ));
    }
    let mut unavailable_bookies = Vec::new();
    if placement::quorums_valid(layout) {
        let replicas = durability::compare(obs);
        unavailable_bookies = replicas.unavailable;
        if let Some((copies, worst)) = replicas.worst
            && let Some(class) = classify(copies, layout.write_quorum, layout.ack_quorum)
        {
            let mut v = LedgerViolation::new(kind_of(class), layout, String::new());
            v.detail = format!(
                "{copies} of {} copies ({})",
                layout.write_quorum,
                class_text(class, &v)
            );
            if !unavailable_bookies.is_empty() {
                let _ = write!(
                    v.detail,
                    "; not answering (counted as holding their entries): {}",
                    unavailable_bookies.join(", ")
                );
            }
            v.copies = Some(copies);
            v.worst_entries = worst;
            v.missing = replicas.missing;
            violations.push(v);
        }
    }
    LedgerVerdict::Checked {
        violations,
        unavailable_bookies,
    }
}

/// The `under_replication_stuck` violation when the mark is at least `grace` old; `None` when there is no grace
/// period, the mark has no time, or it is younger.
fn stuck(
    layout: &LedgerLayout,
    mark: &UnderReplicationMark,
    grace: Option<Span>,
    now_ms: u64,
) -> Option<LedgerViolation> {
    let grace_ms = grace?.as_millis();
    let marked_at = mark.marked_at_ms?;
    let age_ms = (i128::from(now_ms) - i128::from(marked_at)).clamp(0, i128::from(u64::MAX)) as u64;
    if age_ms < grace_ms {
        return None;
    }
    let mut detail = format!(
        "marked under-replicated {} ago, grace period {}",
        Span::from_millis(age_ms),
        Span::from_millis(grace_ms)
    );
    if !mark.replicas.is_empty() {
        let _ = write!(detail, "; replicas named: {}", mark.replicas.join(", "));
    }
    let mut v = LedgerViolation::new(FindingKind::UnderReplicationStuck, layout, detail);
    v.mark_age_ms = Some(age_ms);
    v.grace_ms = Some(grace_ms);
    Some(v)
}

fn kind_of(class: Durability) -> FindingKind {
    match class {
        Durability::NoReplica => FindingKind::EntriesNoReplica,
        Durability::BelowAckQuorum => FindingKind::EntriesBelowAckQuorum,
        Durability::BelowWriteQuorum => FindingKind::EntriesBelowWriteQuorum,
    }
}

fn class_text(class: Durability, v: &LedgerViolation) -> String {
    match class {
        Durability::NoReplica => "no replica".to_owned(),
        Durability::BelowAckQuorum => format!("below ack quorum {}", v.ack_quorum),
        Durability::BelowWriteQuorum => format!("below write quorum {}", v.write_quorum),
    }
}

#[cfg(test)]
mod tests;
