//! Where probe messages go, per engine: [`Target::discover`] lists the brokers to probe (and makes sure the
//! canary topic has a queue or partition on each), [`Target::send`] produces one message to a broker and
//! returns its offset, [`Target::seen`] reads that offset back. Each error is a string naming the broker and
//! the request (the engine clients' errors do).

use crate::{kafka::KafkaTarget, rocketmq::RocketMqTarget};
use mqwatch_model::NodeRef;

/// One broker the probe writes to: its node, and the queue (RocketMQ) or partition (Kafka) it leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeBroker {
    /// The broker, with its address.
    pub node: NodeRef,
    /// The address requests go to.
    pub addr: String,
    /// Queue id or partition index of the canary topic on this broker.
    pub slot: i32,
}

/// An engine's probe target.
pub enum Target {
    /// RocketMQ: every master.
    Rocketmq(RocketMqTarget),
    /// Kafka: the leader of each canary partition (boxed: its client is the larger).
    Kafka(Box<KafkaTarget>),
}

impl Target {
    /// The brokers to probe now, with the canary topic in place on each.
    pub async fn discover(&self) -> Result<Vec<ProbeBroker>, String> {
        match self {
            Target::Rocketmq(t) => t.discover().await,
            Target::Kafka(t) => t.discover().await,
        }
    }

    /// Produces `body` (sent at `sent_ms`) to `broker`; the offset it was stored at.
    pub async fn send(
        &self,
        broker: &ProbeBroker,
        body: &[u8],
        sent_ms: i64,
    ) -> Result<i64, String> {
        match self {
            Target::Rocketmq(t) => t.send(broker, body, sent_ms).await,
            Target::Kafka(t) => t.send(broker, body, sent_ms).await,
        }
    }

    /// Whether the message `body` (sent at `sent_ms`) can be read back at `offset` yet.
    pub async fn seen(
        &self,
        broker: &ProbeBroker,
        offset: i64,
        body: &[u8],
        sent_ms: i64,
    ) -> Result<bool, String> {
        match self {
            Target::Rocketmq(t) => t.seen(broker, offset, body).await,
            Target::Kafka(t) => t.seen(broker, offset, sent_ms).await,
        }
    }
}
