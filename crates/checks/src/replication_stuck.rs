//! `under_replication_stuck` for Kafka partitions: a led partition under-replicated (or below its
//! `min.insync.replicas`) for longer than `[thresholds.replication] stuck_after`. The since-time of each
//! partition comes from the state (the first look in an unbroken run that saw it so); this check only compares.
//! The ledger audit has its own `under_replication_stuck` for BookKeeper ledgers (`[thresholds.ledgers] grace`).

use crate::ReplicationThresholds;
use mqwatch_model::{ClusterSnapshot, Evidence, Finding, FindingKind, LogRef, Subject};
use std::collections::HashMap;

/// How long a partition has been under-replicated at `now_ms`, if it is.
pub fn under_replicated_for(
    since: &HashMap<LogRef, u64>,
    log: &LogRef,
    now_ms: u64,
) -> Option<u64> {
    since.get(log).map(|s| now_ms.saturating_sub(*s))
}

/// Whether that is longer than the grace.
pub fn is_stuck(for_ms: u64, t: &ReplicationThresholds) -> bool {
    for_ms > t.stuck_after.as_millis()
}

/// One finding per partition of `s` that is under-replicated now and has been for longer than the grace.
pub fn check(
    s: &ClusterSnapshot,
    since: &HashMap<LogRef, u64>,
    t: &ReplicationThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    s.partitions
        .iter()
        .filter(|p| p.is_under_replicated_or_below_min_isr())
        .filter_map(|p| {
            let for_ms = under_replicated_for(since, &p.log, now_ms)?;
            if !is_stuck(for_ms, t) {
                return None;
            }
            let message = format!(
                "{} has been under-replicated for {} s ({} of {} replicas in sync), longer than {}",
                p.log,
                for_ms / 1000,
                p.isr.len(),
                p.replicas.len(),
                t.stuck_after
            );
            let evidence = Evidence::new()
                .with("under_replicated_ms", for_ms)
                .with("since_ms", since.get(&p.log).copied())
                .with("stuck_after_ms", t.stuck_after.as_millis())
                .with("replicas", p.replicas.clone())
                .with("isr", p.isr.clone())
                .with("min_insync_replicas", p.min_insync_replicas);
            let subject = Subject::Log { log: p.log.clone() };
            Some(crate::finding(
                s,
                FindingKind::UnderReplicationStuck,
                subject,
                message,
                evidence,
                now_ms,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{Engine, PartitionStatus, Span};

    fn log() -> LogRef {
        LogRef::Partition {
            topic: "t".into(),
            partition: 3,
        }
    }

    fn snap(isr: &[&str]) -> ClusterSnapshot {
        ClusterSnapshot {
            cluster: "k".into(),
            engine: Some(Engine::Kafka),
            partitions: vec![PartitionStatus {
                log: log(),
                leader: Some("1".into()),
                leader_epoch: None,
                replicas: vec!["1".into(), "2".into(), "3".into()],
                isr: isr.iter().map(|r| r.to_string()).collect(),
                offline_replicas: vec![],
                min_insync_replicas: Some(2),
                error: None,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn stuck_is_longer_than_the_grace() {
        let t = ReplicationThresholds::default();
        assert!(!is_stuck(600_000, &t));
        assert!(is_stuck(600_001, &t));
        let since: HashMap<LogRef, u64> = [(log(), 1_000)].into();
        assert_eq!(under_replicated_for(&since, &log(), 4_000), Some(3_000));
        assert_eq!(under_replicated_for(&HashMap::new(), &log(), 4_000), None);
    }

    #[test]
    fn a_partition_under_replicated_past_the_grace_is_one_critical_finding() {
        let t = ReplicationThresholds {
            stuck_after: Span::from_secs(60),
            ..Default::default()
        };
        let since: HashMap<LogRef, u64> = [(log(), 10_000)].into();
        assert!(
            check(&snap(&["1", "2"]), &since, &t, 70_000).is_empty(),
            "60 s is not longer"
        );
        let f = check(&snap(&["1", "2"]), &since, &t, 70_001);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, FindingKind::UnderReplicationStuck);
        assert_eq!(f[0].severity, mqwatch_model::Severity::Critical);
        assert_eq!(f[0].subject.to_string(), "partition t-3");
        assert_eq!(
            f[0].evidence.get("under_replicated_ms"),
            Some(&serde_json::json!(60_001))
        );
        assert!(
            check(&snap(&["1", "2", "3"]), &since, &t, 900_000).is_empty(),
            "in sync now: a stale since-time judges nothing"
        );
        assert!(check(&snap(&["1"]), &HashMap::new(), &t, 900_000).is_empty());
    }
}
