//! Offset errors: a committed offset outside the log's retained range. Above the latest offset is always
//! `offset_out_of_range`; below the earliest it is `retention_loss` on Kafka (messages aged out unread) and
//! `offset_out_of_range` on RocketMQ (MQCloud's CONSUME_OFFSET_MOVED, which the Rust broker never reports itself).

use mqwatch_model::{
    ClusterSnapshot, Engine, Evidence, Finding, FindingKind, GroupPosition, Subject,
};

/// Where a committed offset lies against its log's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetPlace {
    /// Inside [earliest, latest], or no commit.
    InRange,
    /// Below the earliest retained offset.
    BelowEarliest,
    /// Beyond the latest offset.
    BeyondLatest,
}

/// Classifies one position.
pub fn place(p: &GroupPosition) -> OffsetPlace {
    match p.committed {
        Some(c) if c > p.latest => OffsetPlace::BeyondLatest,
        Some(c) if c < p.earliest => OffsetPlace::BelowEarliest,
        _ => OffsetPlace::InRange,
    }
}

/// One finding per group and kind, listing the logs concerned.
pub fn check(s: &ClusterSnapshot, now_ms: u64) -> Vec<Finding> {
    let engine = crate::engine(s);
    let mut out = Vec::new();
    for g in &s.groups {
        let mut by_kind: Vec<(FindingKind, Vec<serde_json::Value>)> = Vec::new();
        for p in &g.positions {
            let kind = match (place(p), engine) {
                (OffsetPlace::InRange, _) => continue,
                (OffsetPlace::BelowEarliest, Engine::Kafka) => FindingKind::RetentionLoss,
                _ => FindingKind::OffsetOutOfRange,
            };
            let entry = serde_json::json!({
                "log": p.log.to_string(), "committed": p.committed, "earliest": p.earliest, "latest": p.latest,
            });
            match by_kind.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, v)) => v.push(entry),
                None => by_kind.push((kind, vec![entry])),
            }
        }
        for (kind, logs) in by_kind {
            let what = if kind == FindingKind::RetentionLoss {
                "committed below the earliest retained offset (messages lost to retention)"
            } else {
                "committed outside the retained range"
            };
            let message = format!("group {} {what} on {} logs", g.group.name, logs.len());
            let subject = Subject::Group {
                group: g.group.clone(),
                topic: None,
            };
            out.push(
                Finding::new(kind, &s.cluster, engine, subject, message, now_ms)
                    .with_evidence(Evidence::new().with("logs", logs)),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{group, position, snapshot};

    #[test]
    fn beyond_latest_and_below_earliest_are_found() {
        let g = group(
            "g",
            vec![
                position("t", 0, 10, 100, Some(100), None),
                position("t", 1, 10, 100, Some(101), None),
                position("t", 2, 10, 100, Some(9), None),
                position("t", 3, 10, 100, None, None),
            ],
        );
        let f = check(&snapshot(vec![g.clone()]), 0);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, FindingKind::OffsetOutOfRange);
        assert_eq!(
            f[0].evidence
                .get("logs")
                .and_then(|l| l.as_array())
                .map(Vec::len),
            Some(2)
        );

        let mut kafka = snapshot(vec![g]);
        kafka.engine = Some(Engine::Kafka);
        let kinds: Vec<FindingKind> = check(&kafka, 0).iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            vec![FindingKind::OffsetOutOfRange, FindingKind::RetentionLoss]
        );
    }
}
