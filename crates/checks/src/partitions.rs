//! Partition durability, read off the replica placement a Kafka collector reports ([`PartitionStatus`]):
//! `offline_partition` (no leader), `under_replicated_partition` (ISR smaller than the replica set),
//! `under_min_isr` (ISR below the topic's `min.insync.replicas`: acks=all producers fail) and
//! `replication_factor_low` (fewer replicas than the configured minimum). One finding per partition; each rule is
//! a small predicate, tested on its own.

use crate::ReplicationThresholds;
use mqwatch_model::{ClusterSnapshot, Evidence, Finding, FindingKind, PartitionStatus, Subject};

/// Whether the partition has no leader.
pub fn is_offline(p: &PartitionStatus) -> bool {
    p.leader.is_none()
}

/// Whether a led partition has replicas out of sync.
pub fn is_under_replicated(p: &PartitionStatus) -> bool {
    !is_offline(p) && p.isr.len() < p.replicas.len()
}

/// Whether a led partition's ISR is below its `min.insync.replicas` (when that is known).
pub fn is_under_min_isr(p: &PartitionStatus) -> bool {
    !is_offline(p)
        && p.min_insync_replicas
            .is_some_and(|m| (p.isr.len() as i64) < i64::from(m))
}

/// Whether the partition has fewer replicas than `t.min_factor`.
pub fn is_replication_factor_low(p: &PartitionStatus, t: &ReplicationThresholds) -> bool {
    (p.replicas.len() as u64) < u64::from(t.min_factor)
}

fn evidence(p: &PartitionStatus) -> Evidence {
    Evidence::new()
        .with("leader", p.leader.clone())
        .with("replicas", p.replicas.clone())
        .with("isr", p.isr.clone())
        .with(
            "out_of_sync",
            p.out_of_sync()
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>(),
        )
        .with("offline_replicas", p.offline_replicas.clone())
        .with("min_insync_replicas", p.min_insync_replicas)
        .with("error", p.error.clone())
}

/// Every partition finding of the snapshot, in partition order; a partition can have several (an offline
/// partition is not also reported under-replicated: it has no leader to replicate from).
pub fn check(s: &ClusterSnapshot, t: &ReplicationThresholds, now_ms: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &s.partitions {
        let subject = || Subject::Log { log: p.log.clone() };
        let mut found = |kind: FindingKind, message: String, ev: Evidence| {
            out.push(crate::finding(s, kind, subject(), message, ev, now_ms));
        };
        if is_offline(p) {
            found(
                FindingKind::OfflinePartition,
                format!("{} has no leader", p.log),
                evidence(p),
            );
        }
        if is_under_min_isr(p) {
            found(
                FindingKind::UnderMinIsr,
                format!(
                    "{} has {} in-sync replicas, below min.insync.replicas {}",
                    p.log,
                    p.isr.len(),
                    p.min_insync_replicas.unwrap_or_default()
                ),
                evidence(p),
            );
        }
        if is_under_replicated(p) {
            found(
                FindingKind::UnderReplicatedPartition,
                format!(
                    "{} has {} of {} replicas in sync (out of sync: {})",
                    p.log,
                    p.isr.len(),
                    p.replicas.len(),
                    p.out_of_sync().join(", ")
                ),
                evidence(p),
            );
        }
        if is_replication_factor_low(p, t) {
            found(
                FindingKind::ReplicationFactorLow,
                format!(
                    "{} has {} replicas, fewer than {}",
                    p.log,
                    p.replicas.len(),
                    t.min_factor
                ),
                evidence(p).with("min_factor", t.min_factor),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{Engine, LogRef};

    fn part(
        leader: Option<&str>,
        replicas: &[&str],
        isr: &[&str],
        min_isr: Option<i32>,
    ) -> PartitionStatus {
        PartitionStatus {
            log: LogRef::Partition {
                topic: "t".into(),
                partition: 0,
            },
            leader: leader.map(String::from),
            leader_epoch: None,
            replicas: replicas.iter().map(|r| r.to_string()).collect(),
            isr: isr.iter().map(|r| r.to_string()).collect(),
            offline_replicas: vec![],
            min_insync_replicas: min_isr,
            error: None,
        }
    }

    fn kinds(p: PartitionStatus, t: &ReplicationThresholds) -> Vec<FindingKind> {
        let s = ClusterSnapshot {
            cluster: "k".into(),
            engine: Some(Engine::Kafka),
            partitions: vec![p],
            ..Default::default()
        };
        check(&s, t, 0).iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_healthy_partition_has_no_finding() {
        let t = ReplicationThresholds::default();
        assert!(
            kinds(
                part(Some("1"), &["1", "2", "3"], &["1", "2", "3"], Some(2)),
                &t
            )
            .is_empty()
        );
    }

    #[test]
    fn isr_shrink_is_under_replicated_and_below_min_isr_is_critical() {
        let t = ReplicationThresholds::default();
        assert_eq!(
            kinds(part(Some("1"), &["1", "2", "3"], &["1", "2"], Some(2)), &t),
            vec![FindingKind::UnderReplicatedPartition]
        );
        let p = part(Some("1"), &["1", "2", "3"], &["1"], Some(2));
        assert!(is_under_min_isr(&p));
        assert_eq!(
            kinds(p, &t),
            vec![
                FindingKind::UnderMinIsr,
                FindingKind::UnderReplicatedPartition
            ]
        );
        assert!(
            !is_under_min_isr(&part(Some("1"), &["1", "2", "3"], &["1"], None)),
            "unknown min.insync.replicas judges nothing"
        );
    }

    #[test]
    fn no_leader_is_offline_only() {
        let t = ReplicationThresholds::default();
        assert_eq!(
            kinds(part(None, &["1", "2"], &[], Some(2)), &t),
            vec![FindingKind::OfflinePartition]
        );
    }

    #[test]
    fn too_few_replicas_is_reported_against_the_configured_minimum() {
        let t = ReplicationThresholds { min_factor: 3 };
        let s = ClusterSnapshot {
            cluster: "k".into(),
            engine: Some(Engine::Kafka),
            partitions: vec![part(Some("1"), &["1", "2"], &["1", "2"], None)],
            ..Default::default()
        };
        let f = check(&s, &t, 7);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, FindingKind::ReplicationFactorLow);
        assert_eq!(f[0].subject.to_string(), "partition t-0");
        assert_eq!(f[0].evidence.get("min_factor"), Some(&serde_json::json!(3)));
        assert!(
            kinds(
                part(Some("1"), &["1"], &["1"], None),
                &ReplicationThresholds { min_factor: 1 }
            )
            .is_empty()
        );
    }
}
