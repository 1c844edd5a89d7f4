//! mqwatch-checks: pure functions from state to findings.
//!
//! What it owns: every check, each a small named predicate over a [`ClusterSnapshot`] (and, where a check needs
//! change over time, the previous snapshot), the [`Thresholds`] that tune them (MQCloud's defaults), and
//! [`run_all`], which runs every check that applies to a snapshot.
//!
//! What it is not: no I/O, no clock of its own (`now_ms` is an argument), no memory between calls. Collectors
//! never compute findings; the alert stage turns findings into alarms.

pub mod backlog;
pub mod clients;
pub mod failures;
pub mod hosts;
pub mod ledgers;
pub mod lifecycle;
pub mod liveness;
pub mod offsets;
pub mod partitions;
pub mod produce;
pub mod replicas;
pub mod surge;
#[cfg(test)]
mod testing;
mod thresholds;

pub use thresholds::{
    BacklogThresholds, ClientBlockedThresholds, ConsumeFailureThresholds, LifecycleThresholds,
    ReplicationThresholds, SlaveFallBehindThresholds, Thresholds,
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
