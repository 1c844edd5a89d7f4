//! The probe on Kafka: the canary topic gets one partition per broker (CreateTopics with as many partitions as
//! the cluster has brokers, replication 1, when Metadata does not know it), and each broker is probed through a
//! partition it leads: Produce (acks=all) to that partition, then Fetch at the acknowledged offset until the
//! record is there. Placement is the controller's; a broker that leads no canary partition is not probed
//! (pre-create the topic with an explicit replica assignment to choose).

use crate::target::ProbeBroker;
use bytes::Bytes;
use kafka_protocol::messages::{
    MetadataRequest, TopicName, metadata_request::MetadataRequestTopic,
};
use kafka_protocol::protocol::StrBytes;
use mqwatch_kafka::{ClientConfig, KafkaClient};
use mqwatch_model::{NodeRef, NodeRole};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// UNKNOWN_TOPIC_OR_PARTITION.
const CODE_UNKNOWN_TOPIC: i16 = 3;
/// TOPIC_ALREADY_EXISTS.
const CODE_TOPIC_EXISTS: i16 = 36;

/// The probe's view of one Kafka cluster.
pub struct KafkaTarget {
    client: KafkaClient,
    bootstrap: Vec<String>,
    topic: String,
    /// Brokers already logged as leading no canary partition (logged once each).
    uncovered: std::sync::Mutex<BTreeSet<i32>>,
}

/// What Metadata said about the canary topic: brokers (id → address) and partition → leader.
struct Canary {
    answered_by: String,
    brokers: BTreeMap<i32, String>,
    leaders: BTreeMap<i32, i32>,
    missing: bool,
}

/// One probe broker per broker that leads a canary partition (its lowest such partition), from Metadata's
/// brokers (id → address) and the canary's leaders (partition → broker id).
pub fn covering(brokers: &BTreeMap<i32, String>, leaders: &BTreeMap<i32, i32>) -> Vec<ProbeBroker> {
    let mut covered = BTreeSet::new();
    let mut out = Vec::new();
    for (partition, leader) in leaders {
        let Some(addr) = brokers.get(leader) else {
            continue;
        };
        if covered.insert(*leader) {
            out.push(ProbeBroker {
                node: NodeRef::new(NodeRole::Broker, leader.to_string()).with_addr(addr),
                addr: addr.clone(),
                slot: *partition,
            });
        }
    }
    out
}

impl KafkaTarget {
    /// A target reached through `bootstrap`, writing to `topic`, every request bounded by `timeout`.
    pub fn new(bootstrap: Vec<String>, topic: &str, timeout: Duration) -> Self {
        let config = ClientConfig {
            client_id: "mqwatch-probe".into(),
            connect_timeout: timeout,
            request_timeout: timeout,
            ..ClientConfig::default()
        };
        Self {
            client: KafkaClient::new(config),
            bootstrap,
            topic: topic.to_string(),
            uncovered: Default::default(),
        }
    }

    /// The same target reached with `security` (TLS, SASL).
    pub fn with_security(mut self, security: mqwatch_kafka::client::Security) -> Self {
        let config = ClientConfig {
            security,
            ..self.client.config().clone()
        };
        self.client = KafkaClient::new(config);
        self
    }

    async fn canary(&self) -> Result<Canary, String> {
        let mut errors = Vec::new();
        for addr in &self.bootstrap {
            let name = TopicName(StrBytes::from_string(self.topic.clone()));
            let answer = self
                .client
                .send::<MetadataRequest>(addr, None, |v| {
                    let r = MetadataRequest::default().with_topics(Some(vec![
                        MetadataRequestTopic::default().with_name(Some(name)),
                    ]));
                    if v >= 4 {
                        r.with_allow_auto_topic_creation(false)
                    } else {
                        r
                    }
                })
                .await;
            let (_, r) = match answer {
                Ok(a) => a,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            let mut c = Canary {
                answered_by: addr.clone(),
                brokers: r
                    .brokers
                    .iter()
                    .map(|b| (b.node_id.0, format!("{}:{}", b.host, b.port)))
                    .collect(),
                leaders: BTreeMap::new(),
                missing: true,
            };
            for t in r.topics {
                if t.error_code == CODE_UNKNOWN_TOPIC {
                    continue;
                }
                for p in t.partitions {
                    if p.error_code == 0 && p.leader_id.0 >= 0 {
                        c.leaders.insert(p.partition_index, p.leader_id.0);
                    }
                    c.missing = false;
                }
            }
            return Ok(c);
        }
        Err(errors.join("; "))
    }

    pub(crate) async fn discover(&self) -> Result<Vec<ProbeBroker>, String> {
        let mut c = self.canary().await?;
        if c.missing {
            let partitions = c.brokers.len().max(1) as i32;
            match self
                .client
                .create_topic(&c.answered_by, &self.topic, partitions, 1)
                .await
            {
                Ok(()) => {}
                Err(e) if e.error_code() == Some(CODE_TOPIC_EXISTS) => {}
                Err(e) => return Err(e.to_string()),
            }
            c = self.canary().await?;
        }
        let brokers = covering(&c.brokers, &c.leaders);
        for (id, addr) in &c.brokers {
            let covered = brokers.iter().any(|b| b.node.name == id.to_string());
            let first = !covered
                && self
                    .uncovered
                    .lock()
                    .map(|mut u| u.insert(*id))
                    .unwrap_or(false);
            if first {
                tracing::warn!(broker = id, %addr, topic = %self.topic, "leads no canary partition: not probed");
            }
        }
        Ok(brokers)
    }

    pub(crate) async fn send(
        &self,
        broker: &ProbeBroker,
        body: &[u8],
        sent_ms: i64,
    ) -> Result<i64, String> {
        self.client
            .produce(
                &broker.addr,
                &self.topic,
                broker.slot,
                &[Bytes::copy_from_slice(body)],
                sent_ms,
            )
            .await
            .map(|b| b.base_offset)
            .map_err(|e| e.to_string())
    }

    pub(crate) async fn seen(
        &self,
        broker: &ProbeBroker,
        offset: i64,
        sent_ms: i64,
    ) -> Result<bool, String> {
        let r = self
            .client
            .fetch_record(&broker.addr, &self.topic, broker.slot, offset, 64 * 1024)
            .await
            .map_err(|e| e.to_string())?;
        Ok(r.is_some_and(|r| {
            r.offset == offset && (r.log_append_time || r.timestamp_ms == sent_ms)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_leading_broker_is_probed_once_through_its_lowest_partition() {
        let brokers: BTreeMap<i32, String> = [(1, "h1:9092"), (2, "h2:9092"), (3, "h3:9092")]
            .map(|(i, a)| (i, a.to_string()))
            .into();
        // Partition 0 and 2 led by 2, 1 by 1, 3 by a broker Metadata does not list; 3 leads nothing.
        let leaders: BTreeMap<i32, i32> = [(0, 2), (1, 1), (2, 2), (3, 9)].into();
        let got: Vec<(String, String, i32)> = covering(&brokers, &leaders)
            .into_iter()
            .map(|b| (b.node.name, b.addr, b.slot))
            .collect();
        assert_eq!(
            got,
            vec![
                ("2".into(), "h2:9092".into(), 0),
                ("1".into(), "h1:9092".into(), 1)
            ]
        );
    }
}
