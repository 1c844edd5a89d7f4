//! Offset errors: a committed offset outside the log's retained range. Above the latest offset is always
//! `offset_out_of_range`; below the earliest it is `retention_loss` on Kafka (messages aged out unread) and
//! `offset_out_of_range` on RocketMQ (MQCloud's CONSUME_OFFSET_MOVED, which the Rust broker never reports itself).

use mqwatch_model::{
    ClusterSnapshot, Engine, Evidence, Finding, FindingKind, GroupPosition, GroupRef, Subject,
};
use std::collections::BTreeMap;

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

/// One finding per group and kind, listing the logs concerned: positions compared directly, plus the offset-moved
/// events brokers wrote (source `OFFSET_MOVED_EVENT`).
pub fn check(s: &ClusterSnapshot, now_ms: u64) -> Vec<Finding> {
    let engine = crate::engine(s);
    let mut found: BTreeMap<(&GroupRef, FindingKind), Vec<serde_json::Value>> = BTreeMap::new();
    for g in &s.groups {
        for p in &g.positions {
            let kind = match (place(p), engine) {
                (OffsetPlace::InRange, _) => continue,
                (OffsetPlace::BelowEarliest, Engine::Kafka) => FindingKind::RetentionLoss,
                _ => FindingKind::OffsetOutOfRange,
            };
            found.entry((&g.group, kind)).or_default().push(serde_json::json!({
                "log": p.log.to_string(), "committed": p.committed, "earliest": p.earliest, "latest": p.latest,
                "source": "offsets",
            }));
        }
    }
    for e in &s.offset_moved {
        found.entry((&e.group, FindingKind::OffsetOutOfRange)).or_default().push(serde_json::json!({
            "log": e.log.to_string(), "requested": e.requested, "moved_to": e.moved_to, "at_ms": e.at_ms,
            "source": "OFFSET_MOVED_EVENT",
        }));
    }
    found
        .into_iter()
        .map(|((group, kind), logs)| {
            let what = if kind == FindingKind::RetentionLoss {
                "committed below the earliest retained offset (messages lost to retention)"
            } else {
                "asked for or committed offsets outside the retained range"
            };
            let message = format!("group {} {what} on {} logs", group.name, logs.len());
            let subject = Subject::Group {
                group: group.clone(),
                topic: None,
            };
            crate::finding(
                s,
                kind,
                subject,
                message,
                Evidence::new().with("logs", logs),
                now_ms,
            )
        })
        .collect()
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

    #[test]
    fn offset_moved_events_are_offset_errors_of_their_group() {
        let mut s = snapshot(vec![group(
            "g",
            vec![position("t", 0, 10, 100, Some(50), None)],
        )]);
        s.offset_moved.push(mqwatch_model::OffsetMovedRecord {
            group: GroupRef::new("other"),
            log: crate::testing::queue("t", 1),
            requested: 900,
            moved_to: 100,
            at_ms: 5,
            node: mqwatch_model::NodeRef::new(mqwatch_model::NodeRole::Broker, "broker-a:0"),
        });
        let f = check(&s, 0);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].subject.to_string(), "group other");
        let logs = f[0].evidence.get("logs").unwrap();
        assert_eq!(logs[0]["source"], "OFFSET_MOVED_EVENT");
        assert_eq!(logs[0]["requested"], 900);
    }
}
