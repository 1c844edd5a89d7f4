//! Replica placement of a partitioned log as its cluster reports it (Kafka Metadata): leader, replicas, in-sync
//! replicas, offline replicas, and the racks of the nodes. Durability checks (`under_replicated_partition`,
//! `under_min_isr`, `offline_partition`, `replication_factor_low`, `placement_violation`) read these; RocketMQ and
//! BookKeeper leave them empty.

use crate::topology::LogRef;
use serde::{Deserialize, Serialize};

/// One partition's replica set this cycle. Replicas are named as their nodes are ([`crate::NodeRef::name`], for
/// Kafka the broker id, e.g. `"1"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionStatus {
    /// The partition.
    pub log: LogRef,
    /// The leader's name; `None` when the partition has no leader (offline).
    pub leader: Option<String>,
    /// The leader epoch, when the cluster reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_epoch: Option<i32>,
    /// Every assigned replica, preferred leader first.
    pub replicas: Vec<String>,
    /// The in-sync replicas.
    pub isr: Vec<String>,
    /// Replicas the cluster reports offline (their log directory failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offline_replicas: Vec<String>,
    /// The topic's `min.insync.replicas`, when it was read (Kafka DescribeConfigs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_insync_replicas: Option<i32>,
    /// The error the cluster reported for this partition in its metadata, if any (e.g. `LEADER_NOT_AVAILABLE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PartitionStatus {
    /// Whether the partition has no leader.
    pub fn is_offline(&self) -> bool {
        self.leader.is_none()
    }

    /// Whether a led partition lacks replicas: some out of sync, or fewer in sync than its
    /// `min.insync.replicas` (when known). What `under_replication_stuck` times.
    pub fn is_under_replicated_or_below_min_isr(&self) -> bool {
        !self.is_offline()
            && (!self.out_of_sync().is_empty()
                || self
                    .min_insync_replicas
                    .is_some_and(|m| (self.isr.len() as i64) < i64::from(m)))
    }

    /// Assigned replicas that are not in sync.
    pub fn out_of_sync(&self) -> Vec<&str> {
        self.replicas
            .iter()
            .filter(|r| !self.isr.contains(r))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_and_out_of_sync_are_read_off_the_sets() {
        let p = PartitionStatus {
            log: LogRef::Partition {
                topic: "t".into(),
                partition: 0,
            },
            leader: None,
            leader_epoch: None,
            replicas: vec!["1".into(), "2".into(), "3".into()],
            isr: vec!["1".into()],
            offline_replicas: vec![],
            min_insync_replicas: None,
            error: None,
        };
        assert!(p.is_offline());
        assert_eq!(p.out_of_sync(), vec!["2", "3"]);
        assert!(
            !p.is_under_replicated_or_below_min_isr(),
            "offline is not timed as under-replicated"
        );
        let led = PartitionStatus {
            leader: Some("1".into()),
            ..p.clone()
        };
        assert!(led.is_under_replicated_or_below_min_isr());
        let full = PartitionStatus {
            isr: led.replicas.clone(),
            min_insync_replicas: Some(2),
            ..led.clone()
        };
        assert!(!full.is_under_replicated_or_below_min_isr());
        let below_min = PartitionStatus {
            min_insync_replicas: Some(4),
            ..full
        };
        assert!(below_min.is_under_replicated_or_below_min_isr());
        let json = serde_json::to_value(&p).unwrap();
        assert!(json.get("offline_replicas").is_none());
        let back: PartitionStatus = serde_json::from_value(json).unwrap();
        assert_eq!(back, p);
    }
}
