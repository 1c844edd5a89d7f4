//! `consume_failure`: messages a group sent back for retry (growth of its retry topic between two cycles, or the
//! broker's SNDBCK_PUT_NUMS where it counts them) or dead-lettered, over thresholds per check interval.

use crate::ConsumeFailureThresholds;
use mqwatch_model::{ClusterSnapshot, Evidence, Finding, FindingKind, GroupStatus, Subject};

/// Growth of a counter between two cycles; `None` if either is unknown or it went down (a reset).
pub fn growth(before: Option<i64>, after: Option<i64>) -> Option<i64> {
    match (before, after) {
        (Some(b), Some(a)) if a >= b => Some(a - b),
        _ => None,
    }
}

/// Retries of one group this interval: SNDBCK_PUT_NUMS where counted, else retry-topic growth.
pub fn retries(prev: &GroupStatus, cur: &GroupStatus) -> Option<i64> {
    cur.send_back_last_minute
        .map(|n| n as i64)
        .or_else(|| growth(prev.retry_total, cur.retry_total))
}

/// `consume_failure` findings: one per group over the retry threshold, one per group with dead letters.
pub fn consume_failure(
    prev: &ClusterSnapshot,
    cur: &ClusterSnapshot,
    t: &ConsumeFailureThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in &cur.groups {
        let Some(p) = prev.groups.iter().find(|p| p.group == g.group) else {
            continue;
        };
        let finding = |topic: Option<String>, message: String, evidence: Evidence| {
            let subject = Subject::Group {
                group: g.group.clone(),
                topic,
            };
            crate::finding(
                cur,
                FindingKind::ConsumeFailure,
                subject,
                message,
                evidence,
                now_ms,
            )
        };
        if let Some(n) = retries(p, g).filter(|&n| n >= t.retries) {
            let message = format!(
                "group {} sent {n} messages back for retry since the last check",
                g.group.name
            );
            let source = if g.send_back_last_minute.is_some() {
                "SNDBCK_PUT_NUMS"
            } else {
                "retry topic growth"
            };
            let evidence = Evidence::new()
                .with("retries", n)
                .with("threshold", t.retries)
                .with("source", source);
            out.push(finding(None, message, evidence));
        }
        if let Some(n) =
            growth(p.dead_letter_total, g.dead_letter_total).filter(|&n| n >= t.dead_letters)
        {
            let message = format!(
                "group {} dead-lettered {n} messages since the last check",
                g.group.name
            );
            let evidence = Evidence::new()
                .with("dead_letters", n)
                .with("threshold", t.dead_letters);
            let f = finding(Some(format!("%DLQ%{}", g.group.name)), message, evidence);
            out.push(f.with_severity(mqwatch_model::Severity::Critical));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{group, snapshot};

    fn with(retry: Option<i64>, dlq: Option<i64>) -> ClusterSnapshot {
        let mut g = group("g", vec![]);
        g.retry_total = retry;
        g.dead_letter_total = dlq;
        snapshot(vec![g])
    }

    #[test]
    fn retry_growth_over_the_threshold_is_a_finding_with_the_count() {
        let t = ConsumeFailureThresholds {
            retries: 10,
            dead_letters: 1,
        };
        let f = consume_failure(&with(Some(5), None), &with(Some(17), None), &t, 0);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.get("retries"), Some(&serde_json::json!(12)));
        assert!(consume_failure(&with(Some(5), None), &with(Some(14), None), &t, 0).is_empty());
        assert!(
            consume_failure(&with(None, None), &with(Some(500), None), &t, 0).is_empty(),
            "no baseline"
        );
        assert!(
            consume_failure(&with(Some(500), None), &with(Some(3), None), &t, 0).is_empty(),
            "reset"
        );
    }

    #[test]
    fn send_back_counts_win_where_the_broker_has_them() {
        let t = ConsumeFailureThresholds::default();
        let mut cur = with(Some(0), None);
        cur.groups[0].send_back_last_minute = Some(25);
        let f = consume_failure(&with(Some(0), None), &cur, &t, 0);
        assert_eq!(
            f[0].evidence.get("source"),
            Some(&serde_json::json!("SNDBCK_PUT_NUMS"))
        );
    }

    #[test]
    fn dead_letters_are_their_own_critical_finding() {
        let t = ConsumeFailureThresholds::default();
        let f = consume_failure(&with(Some(0), Some(0)), &with(Some(0), Some(2)), &t, 0);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, mqwatch_model::Severity::Critical);
        assert!(f[0].subject.to_string().contains("%DLQ%g"));
    }
}
