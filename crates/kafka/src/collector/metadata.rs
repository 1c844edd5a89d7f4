//! The cluster's metadata (Metadata, asked of the bootstrap brokers in turn until one answers): brokers with
//! their addresses and racks, topics, and each partition's leader, replicas, ISR and offline replicas. Internal
//! topics (`__consumer_offsets`, `__transaction_state`, any `__`-prefixed or flagged internal) are skipped.

use super::cycle::Cycle;
use crate::client::{Api, KafkaClient, check_code, code_name};
use kafka_protocol::messages::MetadataRequest;
use kafka_protocol::protocol::Request;
use std::collections::BTreeMap;

/// A broker as Metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrokerInfo {
    /// `host:port`.
    pub addr: String,
    /// Its rack, when configured.
    pub rack: Option<String>,
}

/// A partition as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartitionInfo {
    pub topic: String,
    pub index: i32,
    /// -1 when there is no leader.
    pub leader: i32,
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub offline: Vec<i32>,
    pub error_code: i16,
}

/// What Metadata said.
#[derive(Debug, Clone, Default)]
pub(crate) struct Metadata {
    /// The bootstrap address that answered.
    pub answered_by: String,
    /// Broker id → broker.
    pub brokers: BTreeMap<i32, BrokerInfo>,
    /// Non-internal partitions, by topic and index.
    pub partitions: Vec<PartitionInfo>,
}

impl Metadata {
    /// Partitions of `topic`: a binary search, as `partitions` is sorted by topic and index (asked per group
    /// topic, so a scan would cost groups × partitions).
    pub fn partitions_of<'a>(&'a self, topic: &'a str) -> impl Iterator<Item = &'a PartitionInfo> {
        let start = self
            .partitions
            .partition_point(|p| p.topic.as_str() < topic);
        self.partitions[start..]
            .iter()
            .take_while(move |p| p.topic == topic)
    }
}

/// Whether a topic is the cluster's own (offsets, transactions, …), not users' data.
pub fn is_internal_topic(name: &str) -> bool {
    name.starts_with("__")
}

/// Asks the bootstrap brokers in turn; the first answer wins. `None` when none answered (each failure recorded).
pub(crate) async fn read(
    client: &KafkaClient,
    cycle: &Cycle,
    bootstrap: &[String],
) -> Option<Metadata> {
    for addr in bootstrap {
        let answer = client
            .send::<MetadataRequest>(addr, None, |v| {
                let r = MetadataRequest::default().with_topics(None);
                if v >= 4 {
                    r.with_allow_auto_topic_creation(false)
                } else {
                    r
                }
            })
            .await;
        let (version, r) = match answer {
            Ok(a) => a,
            Err(e) => {
                cycle.bad_answer(e);
                continue;
            }
        };
        if version >= 10 && r.error_code != 0 {
            // v13 carries a top-level error (e.g. REBOOTSTRAP_REQUIRED).
            if let Err(e) = check_code::<MetadataRequest>(addr, version, r.error_code, None) {
                cycle.bad_answer(e);
                continue;
            }
        }
        let mut m = Metadata {
            answered_by: addr.clone(),
            ..Metadata::default()
        };
        for b in r.brokers {
            m.brokers.insert(
                b.node_id.0,
                BrokerInfo {
                    addr: format!("{}:{}", b.host, b.port),
                    rack: b.rack.map(|r| r.to_string()),
                },
            );
        }
        for t in r.topics {
            let Some(name) = t.name.map(|n| n.0.to_string()) else {
                continue;
            };
            if t.is_internal || is_internal_topic(&name) {
                continue;
            }
            if t.error_code != 0 {
                cycle.note(
                    None,
                    &format!("{} v{version}", Api(MetadataRequest::KEY)),
                    format!(
                        "error code {} ({}) for topic {name}",
                        t.error_code,
                        code_name(t.error_code)
                    ),
                );
            }
            for p in t.partitions {
                m.partitions.push(PartitionInfo {
                    topic: name.clone(),
                    index: p.partition_index,
                    leader: p.leader_id.0,
                    leader_epoch: p.leader_epoch,
                    replicas: p.replica_nodes.iter().map(|b| b.0).collect(),
                    isr: p.isr_nodes.iter().map(|b| b.0).collect(),
                    offline: p.offline_replicas.iter().map(|b| b.0).collect(),
                    error_code: p.error_code,
                });
            }
        }
        m.partitions
            .sort_by(|a, b| (&a.topic, a.index).cmp(&(&b.topic, b.index)));
        return Some(m);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(topic: &str, index: i32) -> PartitionInfo {
        PartitionInfo {
            topic: topic.into(),
            index,
            leader: 1,
            leader_epoch: 0,
            replicas: vec![1],
            isr: vec![1],
            offline: vec![],
            error_code: 0,
        }
    }

    #[test]
    fn partitions_of_a_topic_are_found_in_the_sorted_list() {
        let m = Metadata {
            partitions: vec![
                part("a", 0),
                part("b", 0),
                part("b", 1),
                part("ba", 0),
                part("c", 0),
            ],
            ..Default::default()
        };
        let of = |t: &str| -> Vec<(String, i32)> {
            m.partitions_of(t)
                .map(|p| (p.topic.clone(), p.index))
                .collect()
        };
        assert_eq!(of("b"), vec![("b".into(), 0), ("b".into(), 1)]);
        assert_eq!(of("ba"), vec![("ba".into(), 0)]);
        assert!(of("bb").is_empty() && of("0").is_empty() && of("z").is_empty());
    }
}
