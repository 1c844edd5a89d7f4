//! `consumer_lag_status`: Burrow's consumer status (OK, WARNING, STOP, STALL, REWIND) over a sliding window of
//! each group's committed positions per log, engine-neutral (Kafka partitions and RocketMQ queues alike). The
//! rules are Burrow's evaluator rules, each a small named predicate over the window:
//!
//! - a log is judged only when its window is complete ([`is_complete`]: `window` samples spanning `min_span`) and
//!   its current lag is over `allowed_lag`;
//! - [`offsets_stopped`] (no new commit for longer than the window's commits span) and not
//!   [`recent_lag_zero`] (the consumer was caught up at some recent look): STOP, or STALL when the group has
//!   members online ([`members_online`]: alive, yet its offset does not move);
//! - [`rewind_index`] without [`rewind_recovered`]: REWIND;
//! - when [`lag_always_over`] the allowed lag: [`offsets_stalled`] (every sample the same offset) is STALL,
//!   [`lag_not_decreasing`] is WARNING;
//! - anything else is OK.
//!
//! A group's status is its worst log's. One finding per group not OK: WARNING is a warning, STOP, STALL and
//! REWIND are critical. The statuses of every group (OK ones too) go to the API through [`evaluate`].

use crate::LagStatusThresholds;
use mqwatch_model::{
    ClusterSnapshot, Evidence, Finding, FindingKind, GroupLagStatus, GroupRef, GroupStatus,
    LagStatus, LogLagStatus, LogRef, PositionSample, Severity, Subject,
};

/// Not-OK logs listed in a finding's evidence at most (the count is always there).
pub const EVIDENCE_LOGS: usize = 50;

/// Whether the window is full and spans at least `min_span`.
pub fn is_complete(w: &[PositionSample], t: &LagStatusThresholds) -> bool {
    let (Some(first), Some(last)) = (w.first(), w.last()) else {
        return false;
    };
    w.len() >= t.window.max(2) && last.at_ms.saturating_sub(first.at_ms) >= t.min_span.as_millis()
}

/// Rule 1: whether the lag was over `allowed` at every sample (once within it, the window is OK).
pub fn lag_always_over(w: &[PositionSample], allowed: i64) -> bool {
    w.iter().all(|s| s.lag() > allowed)
}

/// Rule 2: the index of the first sample whose committed offset is below the one before.
pub fn rewind_index(w: &[PositionSample]) -> Option<usize> {
    (1..w.len()).find(|&i| w[i].committed < w[i - 1].committed)
}

/// Rule 2, part 2: whether after the rewind at `i` the offset got back to where it was before it.
pub fn rewind_recovered(w: &[PositionSample], i: usize) -> bool {
    i > 0 && w[i..].iter().any(|s| s.committed >= w[i - 1].committed)
}

/// Rule 3: whether the last commit is older (at `now_ms`) than the time between the window's first and last
/// commits.
pub fn offsets_stopped(w: &[PositionSample], now_ms: u64) -> bool {
    let (Some(first), Some(last)) = (w.first(), w.last()) else {
        return false;
    };
    now_ms.saturating_sub(last.committed_at_ms)
        > last.committed_at_ms.saturating_sub(first.committed_at_ms)
}

/// Rule 4: whether every sample has the same committed offset.
pub fn offsets_stalled(w: &[PositionSample]) -> bool {
    w.windows(2).all(|p| p[0].committed == p[1].committed)
}

/// Rule 5: whether the lag never decreased from one sample to the next.
pub fn lag_not_decreasing(w: &[PositionSample]) -> bool {
    w.windows(2).all(|p| p[1].lag() >= p[0].lag())
}

/// Whether some recent latest offset was at or below the last committed offset: the consumer was caught up a
/// moment ago, so it is not called stopped yet.
pub fn recent_lag_zero(w: &[PositionSample]) -> bool {
    let Some(last) = w.last() else { return false };
    w.iter().any(|s| s.latest <= last.committed)
}

/// Whether the group has members online (a consumer is alive).
pub fn members_online(g: &GroupStatus) -> bool {
    !g.clients.is_empty()
}

/// The status of one window at `now_ms`.
pub fn status(
    w: &[PositionSample],
    members: bool,
    t: &LagStatusThresholds,
    now_ms: u64,
) -> LagStatus {
    let Some(last) = w.last() else {
        return LagStatus::Ok;
    };
    if !is_complete(w, t) || last.lag() <= t.allowed_lag {
        return LagStatus::Ok;
    }
    if offsets_stopped(w, now_ms) && !recent_lag_zero(w) {
        return if members {
            LagStatus::Stall
        } else {
            LagStatus::Stop
        };
    }
    if rewind_index(w).is_some_and(|i| !rewind_recovered(w, i)) {
        return LagStatus::Rewind;
    }
    if lag_always_over(w, t.allowed_lag) {
        if offsets_stalled(w) {
            return LagStatus::Stall;
        }
        if lag_not_decreasing(w) {
            return LagStatus::Warning;
        }
    }
    LagStatus::Ok
}

/// The status of every group of `s` with at least one commit, from the windows `window` returns.
pub fn evaluate<'a>(
    s: &ClusterSnapshot,
    window: impl Fn(&GroupRef, &LogRef) -> &'a [PositionSample],
    t: &LagStatusThresholds,
    now_ms: u64,
) -> Vec<GroupLagStatus> {
    let mut out = Vec::new();
    for g in &s.groups {
        let members = members_online(g);
        let mut group = GroupLagStatus {
            group: g.group.clone(),
            status: LagStatus::Ok,
            total_lag: 0,
            logs: 0,
            logs_complete: 0,
            not_ok: Vec::new(),
        };
        for p in &g.positions {
            let Some(committed) = p.committed else {
                continue;
            };
            let w = window(&g.group, &p.log);
            let lag = p.lag().unwrap_or_default();
            let complete = is_complete(w, t);
            let st = status(w, members, t, now_ms);
            group.logs += 1;
            group.logs_complete += usize::from(complete);
            group.total_lag += lag;
            group.status = group.status.max(st);
            if st != LagStatus::Ok {
                group.not_ok.push(LogLagStatus {
                    log: p.log.clone(),
                    status: st,
                    lag,
                    committed,
                    samples: w.len(),
                    complete,
                });
            }
        }
        if group.logs > 0 {
            group
                .not_ok
                .sort_by(|a, b| b.status.cmp(&a.status).then_with(|| a.log.cmp(&b.log)));
            out.push(group);
        }
    }
    out
}

/// The severity of a group status: WARNING is a warning, STOP, STALL and REWIND are critical.
pub fn severity(status: LagStatus) -> Severity {
    match status {
        LagStatus::Ok | LagStatus::Warning => Severity::Warning,
        LagStatus::Stop | LagStatus::Stall | LagStatus::Rewind => Severity::Critical,
    }
}

/// One finding per group whose status is not OK.
pub fn check(s: &ClusterSnapshot, statuses: &[GroupLagStatus], now_ms: u64) -> Vec<Finding> {
    statuses
        .iter()
        .filter(|g| g.status != LagStatus::Ok)
        .map(|g| {
            let worst: Vec<String> = g
                .not_ok
                .iter()
                .take(3)
                .map(|l| format!("{} {} (lag {})", l.log, l.status, l.lag))
                .collect();
            let message = format!(
                "group {} is {}: {} of {} logs not OK, e.g. {}",
                g.group.name,
                g.status,
                g.not_ok.len(),
                g.logs,
                worst.join(", ")
            );
            let logs: Vec<serde_json::Value> = g
                .not_ok
                .iter()
                .take(EVIDENCE_LOGS)
                .map(|l| {
                    serde_json::json!({
                        "log": l.log.to_string(), "status": l.status, "lag": l.lag,
                        "committed": l.committed, "samples": l.samples,
                    })
                })
                .collect();
            let evidence = Evidence::new()
                .with("status", g.status.as_str())
                .with("total_lag", g.total_lag)
                .with("logs", g.logs)
                .with("logs_complete", g.logs_complete)
                .with("logs_not_ok", g.not_ok.len())
                .with("partitions", logs);
            let subject = Subject::Group {
                group: g.group.clone(),
                topic: None,
            };
            crate::finding(
                s,
                FindingKind::ConsumerLagStatus,
                subject,
                message,
                evidence,
                now_ms,
            )
            .with_severity(severity(g.status))
        })
        .collect()
}

#[cfg(test)]
#[path = "lag_status_tests.rs"]
mod tests;
