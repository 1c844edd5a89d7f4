//! Consumer lag status in Burrow's terms, engine-neutral (a Kafka partition and a RocketMQ queue alike): the
//! [`PositionSample`]s the state keeps per (group, log) over a sliding window, and the [`LagStatus`] a check
//! derives from them, per log ([`LogLagStatus`]) and per group ([`GroupLagStatus`], for the API and dashboard).

use crate::topology::{GroupRef, LogRef};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One observation of a group's position on one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionSample {
    /// The committed offset.
    pub committed: i64,
    /// The log's latest offset at the same look.
    pub latest: i64,
    /// When it was observed (ms).
    pub at_ms: u64,
    /// When this committed offset was made: the first look that saw it (neither Kafka's OffsetFetch nor
    /// RocketMQ's consume stats carry the commit's own time).
    pub committed_at_ms: u64,
}

impl PositionSample {
    /// Messages behind at this look (never negative).
    pub fn lag(&self) -> i64 {
        (self.latest - self.committed).max(0)
    }
}

/// Burrow's statuses, ordered from best to worst: `Ok < Warning < Stop < Stall < Rewind`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LagStatus {
    /// Keeping up, or not judged (window not complete yet).
    #[default]
    Ok,
    /// Committing, but the lag did not decrease anywhere in the window: the consumer is slow.
    Warning,
    /// Lag and no new commit for longer than the window covers: the consumer stopped.
    Stop,
    /// Lag, members online, and the committed offset did not move over the whole window: stuck.
    Stall,
    /// The committed offset went back and has not recovered to where it was.
    Rewind,
}

impl LagStatus {
    /// The upper-case spelling (`OK`, `WARNING`, `STOP`, `STALL`, `REWIND`).
    pub fn as_str(self) -> &'static str {
        match self {
            LagStatus::Ok => "OK",
            LagStatus::Warning => "WARNING",
            LagStatus::Stop => "STOP",
            LagStatus::Stall => "STALL",
            LagStatus::Rewind => "REWIND",
        }
    }
}

impl fmt::Display for LagStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One log's status for one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLagStatus {
    /// The log.
    pub log: LogRef,
    /// Its status.
    pub status: LagStatus,
    /// Messages behind now.
    pub lag: i64,
    /// The committed offset now.
    pub committed: i64,
    /// Samples in the window.
    pub samples: usize,
    /// Whether the window was complete (full and spanning the minimum), i.e. the status was judged.
    pub complete: bool,
}

/// A group's status: the worst of its logs'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupLagStatus {
    /// The group.
    pub group: GroupRef,
    /// The worst log status.
    pub status: LagStatus,
    /// Messages behind, over the logs with a commit.
    pub total_lag: i64,
    /// Logs with a commit.
    pub logs: usize,
    /// Logs whose window was complete.
    pub logs_complete: usize,
    /// The logs not OK, worst first.
    pub not_ok: Vec<LogLagStatus>,
}
