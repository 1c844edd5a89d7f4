//! The audit's gauges: one [`AuditCounts`] per pass, each ledger's verdict counted once per category.

use super::{LedgerVerdict, SkipReason};
use mqwatch_model::FindingKind;
use serde::{Deserialize, Serialize};

/// Per-category counts over one audit pass (the gauges).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditCounts {
    /// Ledgers whose verdict was counted.
    pub ledgers: u64,
    /// Skipped: open or in recovery.
    pub skipped_open: u64,
    /// Skipped: closed and empty.
    pub skipped_empty: u64,
    /// Skipped: marked under-replicated within the grace period.
    pub skipped_marked: u64,
    /// Checked with no violation and every bookie answering.
    pub healthy: u64,
    /// Ledgers whose worst entry has no copy.
    pub entries_no_replica: u64,
    /// … fewer than AQ copies.
    pub entries_below_ack_quorum: u64,
    /// … fewer than WQ copies.
    pub entries_below_write_quorum: u64,
    /// Ledgers placed against the policy.
    pub placement_violation: u64,
    /// Ledgers marked under-replicated for longer than the grace period.
    pub under_replication_stuck: u64,
    /// Ledgers with at least one bookie that did not answer (reported apart, not as data loss).
    pub unavailable: u64,
}

impl AuditCounts {
    /// Counts one verdict.
    pub fn add(&mut self, verdict: &LedgerVerdict) {
        self.ledgers += 1;
        match verdict {
            LedgerVerdict::Skipped { reason } => match reason {
                SkipReason::Open => self.skipped_open += 1,
                SkipReason::Empty => self.skipped_empty += 1,
                SkipReason::Marked => self.skipped_marked += 1,
            },
            LedgerVerdict::Checked {
                violations,
                unavailable_bookies,
            } => {
                for v in violations {
                    match v.kind {
                        FindingKind::EntriesNoReplica => self.entries_no_replica += 1,
                        FindingKind::EntriesBelowAckQuorum => self.entries_below_ack_quorum += 1,
                        FindingKind::EntriesBelowWriteQuorum => {
                            self.entries_below_write_quorum += 1
                        }
                        FindingKind::PlacementViolation => self.placement_violation += 1,
                        FindingKind::UnderReplicationStuck => self.under_replication_stuck += 1,
                        _ => {}
                    }
                }
                if !unavailable_bookies.is_empty() {
                    self.unavailable += 1;
                }
                if violations.is_empty() && unavailable_bookies.is_empty() {
                    self.healthy += 1;
                }
            }
        }
    }
}
