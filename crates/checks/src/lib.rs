//! mqwatch-checks: pure functions from state to findings.
//!
//! What it owns: every check, each a small named predicate over a [`ClusterSnapshot`] (and, where a check needs
//! change over time, the previous snapshot), the [`Thresholds`] that tune them (MQCloud's defaults), and
//! [`run_all`], which runs every check that applies to a snapshot, and [`run_over_time`], which runs those that
//! read windows the state keeps across cycles (passed in as [`History`]).
//!
//! What it is not: no I/O, no clock of its own (`now_ms` is an argument), no memory between calls. Collectors
//! never compute findings; the alert stage turns findings into alarms.

pub mod backlog;
pub mod clients;
pub mod failures;
pub mod lag_status;
pub mod ledgers;
pub mod lifecycle;
pub mod liveness;
pub mod offsets;
pub mod partitions;
pub mod replicas;
pub mod replication_stuck;
#[cfg(test)]
mod testing;
mod thresholds;

pub use thresholds::{
    BacklogThresholds, ClientBlockedThresholds, ConsumeFailureThresholds, LagStatusThresholds,
    LifecycleThresholds, ReplicationThresholds, SlaveFallBehindThresholds, Thresholds,
};

use mqwatch_model::{ClusterSnapshot, Engine, Finding};

/// Runs every check that applies to `current`. `previous` is the cluster's snapshot from the cycle before, if any.
pub fn run_all(
    current: &ClusterSnapshot,
    previous: Option<&ClusterSnapshot>,
    thresholds: &Thresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(liveness::node_down(current, now_ms));
    out.extend(liveness::collector_errors(current, now_ms));
    out.extend(liveness::slave_fall_behind(
        current,
        &thresholds.slave_fall_behind,
        now_ms,
    ));
    out.extend(backlog::check(current, &thresholds.backlog, now_ms));
    out.extend(clients::client_blocked(
        current,
        &thresholds.client_blocked,
        now_ms,
    ));
    out.extend(clients::subscription_inconsistent(current, now_ms));
    out.extend(offsets::check(current, now_ms));
    out.extend(partitions::check(current, &thresholds.replication, now_ms));
    if let Some(prev) = previous {
        out.extend(failures::consume_failure(
            prev,
            current,
            &thresholds.consume_failure,
            now_ms,
        ));
    }
    out
}

/// What the checks over time read from the state: each group's window of committed positions per log, and
/// since when each partition is under-replicated.
pub struct History<'a, W> {
    /// The window of a group on a log, oldest first (empty when none).
    pub window: W,
    /// Partition → since when it is under-replicated.
    pub under_replicated_since: &'a std::collections::HashMap<mqwatch_model::LogRef, u64>,
}

/// Runs the checks that read state kept across cycles: `consumer_lag_status` (returning every group's status
/// too, OK ones included, for the API) and `under_replication_stuck`.
pub fn run_over_time<'a, W>(
    current: &ClusterSnapshot,
    history: History<'a, W>,
    thresholds: &Thresholds,
    now_ms: u64,
) -> (Vec<Finding>, Vec<mqwatch_model::GroupLagStatus>)
where
    W: Fn(&mqwatch_model::GroupRef, &mqwatch_model::LogRef) -> &'a [mqwatch_model::PositionSample],
{
    let statuses = lag_status::evaluate(current, history.window, &thresholds.lag_status, now_ms);
    let mut out = lag_status::check(current, &statuses, now_ms);
    out.extend(replication_stuck::check(
        current,
        history.under_replicated_since,
        &thresholds.replication,
        now_ms,
    ));
    (out, statuses)
}

/// The engine of a snapshot, RocketMQ when the collector did not say.
pub(crate) fn engine(s: &ClusterSnapshot) -> Engine {
    s.engine.unwrap_or(Engine::Rocketmq)
}

/// A finding about `subject` of the snapshot's cluster.
pub(crate) fn finding(
    s: &ClusterSnapshot,
    kind: mqwatch_model::FindingKind,
    subject: mqwatch_model::Subject,
    message: String,
    evidence: mqwatch_model::Evidence,
    now_ms: u64,
) -> Finding {
    Finding::new(kind, &s.cluster, engine(s), subject, message, now_ms).with_evidence(evidence)
}
