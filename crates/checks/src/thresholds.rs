//! Thresholds of every check, one table per finding kind in config (`[thresholds.backlog]` …). Absent keys take
//! MQCloud's defaults. Unknown keys are errors, so a typo never silently keeps a default.

use mqwatch_model::Span;
use serde::{Deserialize, Serialize};

/// All thresholds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// `backlog`.
    pub backlog: BacklogThresholds,
    /// `client_blocked`.
    pub client_blocked: ClientBlockedThresholds,
    /// `consume_failure`.
    pub consume_failure: ConsumeFailureThresholds,
    /// `slave_fall_behind`.
    pub slave_fall_behind: SlaveFallBehindThresholds,
    /// `startup_pending`, `controlled_shutdown_pending`.
    pub lifecycle: LifecycleThresholds,
    /// The ledger audit: `under_replication_stuck`, `placement_violation`.
    pub ledgers: crate::ledgers::LedgerThresholds,
    /// Kafka partitions: `replication_factor_low`, `placement_violation`, `under_replication_stuck`.
    pub replication: ReplicationThresholds,
    /// `consumer_lag_status` (Burrow's window).
    pub lag_status: LagStatusThresholds,
}

/// Burrow's evaluator settings: how many looks a window holds (`intervals`), how long it must span before a
/// log is judged, and the lag still counted as caught up (`allowed-lag`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LagStatusThresholds {
    /// Samples (one per cycle) per group and log (default 10, at least 2).
    pub window: usize,
    /// The window must span at least this long (first to last sample) before its log is judged (default 0s:
    /// a full window is enough, as in Burrow). Raise `window` rather than this when cycles are short.
    pub min_span: Span,
    /// Lag at or below this counts as caught up (default 0).
    pub allowed_lag: i64,
}

impl Default for LagStatusThresholds {
    fn default() -> Self {
        Self {
            window: 10,
            min_span: Span::from_millis(0),
            allowed_lag: 0,
        }
    }
}

/// MQCloud CONSUME_UNDONE: clustering groups alert when age AND count exceed; broadcasting groups on count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BacklogThresholds {
    /// Messages behind (default 10 000).
    pub count: i64,
    /// Age of the oldest unconsumed message (default 5m).
    pub age: Span,
}

impl Default for BacklogThresholds {
    fn default() -> Self {
        Self {
            count: 10_000,
            age: Span::from_millis(300_000),
        }
    }
}

/// MQCloud CONSUME_BLOCK: a client's queue with cached messages whose last consume is too long ago.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientBlockedThresholds {
    /// Block time (default 10s).
    pub block: Span,
    /// A queue is considered only when blocked at least this long (default 60s); the effective threshold is the
    /// larger of `block` and `min_block`.
    pub min_block: Span,
    /// … and holds at least this many cached messages (default 100).
    pub min_cached_messages: i64,
}

impl Default for ClientBlockedThresholds {
    fn default() -> Self {
        Self {
            block: Span::from_secs(10),
            min_block: Span::from_secs(60),
            min_cached_messages: 100,
        }
    }
}

/// MQCloud CONSUME_FAIL: messages sent back for retry per check (default 10); any dead letter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsumeFailureThresholds {
    /// Retries per check interval (default 10).
    pub retries: i64,
    /// Dead letters per check interval (default 1).
    pub dead_letters: i64,
}

impl Default for ConsumeFailureThresholds {
    fn default() -> Self {
        Self {
            retries: 10,
            dead_letters: 1,
        }
    }
}

/// MQCloud: master max offset minus slave max offset over 10 MiB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlaveFallBehindThresholds {
    /// Bytes (default 10 MiB).
    pub bytes: i64,
}

impl Default for SlaveFallBehindThresholds {
    fn default() -> Self {
        Self {
            bytes: 10 * 1024 * 1024,
        }
    }
}

/// How long a node may stay in startup or controlled shutdown before it is a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LifecycleThresholds {
    /// Startup pending longer than this (default 5m).
    pub startup: Span,
    /// Controlled shutdown pending longer than this (default 5m).
    pub controlled_shutdown: Span,
}

impl Default for LifecycleThresholds {
    fn default() -> Self {
        Self {
            startup: Span::from_secs(300),
            controlled_shutdown: Span::from_secs(300),
        }
    }
}

/// Partition replication: a partition with fewer replicas than `min_factor` is `replication_factor_low`; one
/// whose replicas sit on fewer than `min_racks` racks (or fewer than it has replicas, if that is less) is a
/// `placement_violation`; one under-replicated (or below `min.insync.replicas`) for longer than `stuck_after` is
/// `under_replication_stuck`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplicationThresholds {
    /// Fewest replicas a partition should have (default 2: one copy is no copy).
    pub min_factor: u32,
    /// Fewest racks a partition's replicas should span (default 0: not checked; racks are opt-in in Kafka).
    pub min_racks: u32,
    /// Grace before an under-replicated partition is stuck (default 10m).
    pub stuck_after: Span,
}

impl Default for ReplicationThresholds {
    fn default() -> Self {
        Self {
            min_factor: 2,
            min_racks: 0,
            stuck_after: Span::from_secs(600),
        }
    }
}
