//! Partition durability, read off the replica placement a Kafka collector reports ([`PartitionStatus`]):
//! `offline_partition` (no leader), `under_replicated_partition` (ISR smaller than the replica set),
//! `under_min_isr` (ISR below the topic's `min.insync.replicas`: acks=all producers fail) and
//! `replication_factor_low` (fewer replicas than the configured minimum) and `placement_violation` (a replica
//! listed twice, or replicas on fewer racks than configured, judged only when every replica's rack is known).
//! Each rule is a small predicate, tested on its own.

use crate::ReplicationThresholds;
use mqwatch_model::{ClusterSnapshot, Evidence, Finding, FindingKind, PartitionStatus, Subject};
use std::collections::{BTreeMap, BTreeSet};

/// Whether the partition has no leader.
pub fn is_offline(p: &PartitionStatus) -> bool {
    p.leader.is_none()
}

/// Whether a led partition has replicas out of sync (assigned, not in the ISR).
pub fn is_under_replicated(p: &PartitionStatus) -> bool {
    !is_offline(p) && !p.out_of_sync().is_empty()
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

/// Replicas listed more than once.
pub fn duplicate_replicas(p: &PartitionStatus) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    let mut dup = BTreeSet::new();
    for r in &p.replicas {
        if !seen.insert(r.as_str()) {
            dup.insert(r.as_str());
        }
    }
    dup.into_iter().collect()
}

/// The distinct racks of the partition's replicas; `None` when a replica's rack is unknown.
pub fn replica_racks<'a>(
    p: &PartitionStatus,
    racks: &'a BTreeMap<String, String>,
) -> Option<BTreeSet<&'a str>> {
    p.replicas
        .iter()
        .map(|r| racks.get(r).map(String::as_str))
        .collect()
}

/// Whether the replicas span fewer racks than required: `min_racks`, or the number of distinct replicas when
/// that is smaller. Off when `min_racks` is 0 or a rack is unknown.
pub fn too_few_racks(
    p: &PartitionStatus,
    racks: &BTreeMap<String, String>,
    t: &ReplicationThresholds,
) -> bool {
    if t.min_racks == 0 {
        return false;
    }
    let Some(spanned) = replica_racks(p, racks) else {
        return false;
    };
    let distinct = p.replicas.iter().collect::<BTreeSet<_>>().len();
    spanned.len() < distinct.min(t.min_racks as usize)
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
        let dup = duplicate_replicas(p);
        if !dup.is_empty() || too_few_racks(p, &s.racks, t) {
            let spanned: Vec<&str> = replica_racks(p, &s.racks)
                .map(|r| r.into_iter().collect())
                .unwrap_or_default();
            let why = if dup.is_empty() {
                format!(
                    "its replicas span {} racks ({}), fewer than {}",
                    spanned.len(),
                    spanned.join(", "),
                    t.min_racks
                )
            } else {
                format!("replicas listed twice: {}", dup.join(", "))
            };
            found(
                FindingKind::PlacementViolation,
                format!("{} is misplaced: {why}", p.log),
                evidence(p)
                    .with(
                        "racks",
                        spanned.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
                    )
                    .with(
                        "duplicates",
                        dup.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
                    )
                    .with("min_racks", t.min_racks),
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
        let t = ReplicationThresholds {
            min_factor: 3,
            ..Default::default()
        };
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
                &ReplicationThresholds {
                    min_factor: 1,
                    ..Default::default()
                }
            )
            .is_empty()
        );
    }

    #[test]
    fn replicas_on_too_few_racks_or_listed_twice_are_misplaced() {
        let t = ReplicationThresholds {
            min_factor: 1,
            min_racks: 2,
            ..Default::default()
        };
        let racks: BTreeMap<String, String> = [("1", "a"), ("2", "a"), ("3", "b")]
            .into_iter()
            .map(|(n, r)| (n.to_string(), r.to_string()))
            .collect();
        let with = |p: PartitionStatus| ClusterSnapshot {
            cluster: "k".into(),
            engine: Some(Engine::Kafka),
            partitions: vec![p],
            racks: racks.clone(),
            ..Default::default()
        };
        let one_rack = part(Some("1"), &["1", "2"], &["1", "2"], None);
        assert!(too_few_racks(&one_rack, &racks, &t));
        let f = check(&with(one_rack), &t, 0);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, FindingKind::PlacementViolation);
        assert_eq!(f[0].evidence.get("racks"), Some(&serde_json::json!(["a"])));

        assert!(
            check(
                &with(part(Some("1"), &["1", "3"], &["1", "3"], None)),
                &t,
                0
            )
            .is_empty()
        );
        assert!(
            !too_few_racks(&part(Some("1"), &["1"], &["1"], None), &racks, &t),
            "one replica cannot span two racks"
        );
        assert!(
            !too_few_racks(&part(Some("1"), &["1", "9"], &["1"], None), &racks, &t),
            "rack of 9 unknown: not judged"
        );
        let twice = part(Some("1"), &["1", "1"], &["1"], None);
        assert_eq!(duplicate_replicas(&twice), vec!["1"]);
        let off = ReplicationThresholds {
            min_factor: 1,
            min_racks: 0,
            ..Default::default()
        };
        let kinds: Vec<FindingKind> = check(&with(twice), &off, 0)
            .iter()
            .map(|f| f.kind)
            .collect();
        assert_eq!(kinds, vec![FindingKind::PlacementViolation]);
    }
}
