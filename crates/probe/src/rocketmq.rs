//! The probe on RocketMQ: every master (broker id 0) the name servers list gets the canary topic with one
//! queue, created explicitly (UPDATE_AND_CREATE_TOPIC, not the broker's autoCreateTopicEnable, which production
//! brokers turn off), and the probe's reader group (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP). A probe message is a
//! SEND_MESSAGE (10) to queue 0 of the master, read back by PULL_MESSAGE at the queue offset the broker
//! answered, as a reader that commits nothing.

use crate::target::ProbeBroker;
use mqwatch_model::{NodeRef, NodeRole};
use mqwatch_rocketmq::client::{AdminClient, RequestCode};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

/// Producer and reader group of the probe.
pub const PROBE_GROUP: &str = "mqwatch-probe";

/// Response code TOPIC_NOT_EXIST.
const CODE_TOPIC_NOT_EXIST: i32 = 17;

/// The probe's view of one RocketMQ cluster.
pub struct RocketMqTarget {
    client: AdminClient,
    name_servers: Vec<String>,
    topic: String,
    /// Masters whose canary topic and group are in place.
    prepared: Mutex<BTreeSet<String>>,
}

impl RocketMqTarget {
    /// A target reached through `name_servers`, writing to `topic`, every request bounded by `timeout`.
    pub fn new(name_servers: Vec<String>, topic: &str, timeout: Duration) -> Self {
        Self {
            client: AdminClient::new(timeout),
            name_servers,
            topic: topic.to_string(),
            prepared: Mutex::new(BTreeSet::new()),
        }
    }

    pub(crate) async fn discover(&self) -> Result<Vec<ProbeBroker>, String> {
        let mut errors = Vec::new();
        let mut info = None;
        for ns in &self.name_servers {
            match self.client.cluster_info(ns).await {
                Ok(i) => {
                    info = Some(i);
                    break;
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        let info = info.ok_or_else(|| errors.join("; "))?;
        let mut brokers = Vec::new();
        for b in info.brokers.values() {
            let Some(addr) = b.addrs.get(&0) else {
                continue;
            };
            let node =
                NodeRef::new(NodeRole::Broker, format!("{}:0", b.broker_name)).with_addr(addr);
            if let Err(e) = self.prepare(addr).await {
                tracing::warn!(broker = %node.name, "probe cannot create its canary topic: {e}");
            }
            brokers.push(ProbeBroker {
                node,
                addr: addr.clone(),
                slot: 0,
            });
        }
        Ok(brokers)
    }

    fn is_prepared(&self, addr: &str) -> bool {
        self.prepared
            .lock()
            .map(|p| p.contains(addr))
            .unwrap_or(false)
    }

    fn set_prepared(&self, addr: &str, yes: bool) {
        if let Ok(mut p) = self.prepared.lock() {
            if yes {
                p.insert(addr.to_string());
            } else {
                p.remove(addr);
            }
        }
    }

    async fn prepare(&self, addr: &str) -> Result<(), String> {
        if self.is_prepared(addr) {
            return Ok(());
        }
        self.client
            .create_topic(addr, &self.topic, 1)
            .await
            .map_err(|e| e.to_string())?;
        self.client
            .create_subscription_group(addr, PROBE_GROUP)
            .await
            .map_err(|e| e.to_string())?;
        self.set_prepared(addr, true);
        Ok(())
    }

    pub(crate) async fn send(
        &self,
        broker: &ProbeBroker,
        body: &[u8],
        sent_ms: i64,
    ) -> Result<i64, String> {
        self.prepare(&broker.addr).await?;
        let ext = [
            ("producerGroup", PROBE_GROUP.to_string()),
            ("topic", self.topic.clone()),
            ("defaultTopic", "TBW102".to_string()),
            ("defaultTopicQueueNums", "1".to_string()),
            ("queueId", broker.slot.to_string()),
            ("sysFlag", "0".to_string()),
            ("bornTimestamp", sent_ms.to_string()),
            ("flag", "0".to_string()),
            ("reconsumeTimes", "0".to_string()),
            ("unitMode", "false".to_string()),
            ("batch", "false".to_string()),
        ];
        let code = RequestCode::SEND_MESSAGE;
        let frame = match self
            .client
            .request(&broker.addr, code, &ext, body.to_vec())
            .await
        {
            Ok(f) => f,
            Err(e) => {
                if e.response_code() == Some(CODE_TOPIC_NOT_EXIST) {
                    self.set_prepared(&broker.addr, false);
                }
                return Err(e.to_string());
            }
        };
        let raw = frame.header.ext_fields.get("queueOffset");
        raw.and_then(|o| o.parse().ok()).ok_or_else(|| {
            format!(
                "{}: {code}: response without a queueOffset ({raw:?})",
                broker.addr
            )
        })
    }

    pub(crate) async fn seen(
        &self,
        broker: &ProbeBroker,
        offset: i64,
        body: &[u8],
    ) -> Result<bool, String> {
        let pulled = self
            .client
            .pull(
                &broker.addr,
                PROBE_GROUP,
                &self.topic,
                broker.slot,
                offset,
                1,
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(pulled
            .messages
            .iter()
            .any(|m| m.queue_offset == offset && m.body == body))
    }
}
