//! The state one collection cycle leaves behind: a complete, timestamped picture of one cluster that checks read.
//! Engine-neutral: RocketMQ queues and Kafka partitions are both [`LogRef`]s, a RocketMQ slave and a Kafka
//! follower are both replicas. A collector fills what its engine has and leaves the rest empty.

use crate::observation::ObservedNodeState;
use crate::partition::PartitionStatus;
use crate::topology::{Engine, GroupRef, LogRef, NodeRef};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything one cycle learned about one cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterSnapshot {
    /// The cluster's configured name.
    pub cluster: String,
    /// Its engine.
    pub engine: Option<Engine>,
    /// When the cycle started (ms since the Unix epoch).
    pub taken_at_ms: u64,
    /// How long the cycle took.
    pub cycle_ms: u64,
    /// Every node mqwatch knows of: registered now, seen before, or expected by config.
    pub nodes: Vec<NodeStatus>,
    /// Retained ranges of the logs read (system topics skipped).
    pub logs: Vec<LogStatus>,
    /// Consumer groups.
    pub groups: Vec<GroupStatus>,
    /// Traffic read this cycle.
    pub traffic: Vec<TrafficSample>,
    /// Requests that failed in a way that is the cluster's doing.
    pub errors: Vec<CollectorErrorRecord>,
    /// Offset-moved events the brokers wrote recently (RocketMQ's OFFSET_MOVED_EVENT, where a broker writes it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offset_moved: Vec<OffsetMovedRecord>,
    /// Replica placement of every partition read (Kafka); empty for engines without partitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionStatus>,
    /// Node name → rack, for the nodes whose rack the cluster reports (Kafka `broker.rack`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub racks: BTreeMap<String, String>,
}

/// A consumer asked for an offset outside its log's range and the broker moved it (the broker's own report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetMovedRecord {
    /// The consumer's group.
    pub group: GroupRef,
    /// The log.
    pub log: LogRef,
    /// The offset it asked for.
    pub requested: i64,
    /// Where the broker moved it.
    pub moved_to: i64,
    /// When the broker wrote the event (ms).
    pub at_ms: u64,
    /// The broker that wrote it.
    pub node: NodeRef,
}

/// One node's status this cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// The node.
    pub node: NodeRef,
    /// What the cluster's registry says (`None`: the registry could not be read this cycle).
    pub registration: Option<ObservedNodeState>,
    /// Whether config names it as expected.
    pub expected: bool,
    /// Whether it answered this cycle.
    pub answered: bool,
    /// Why it did not, naming the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it last answered, this cycle or earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_answer_ms: Option<u64>,
    /// The master (RocketMQ broker name with id 0) or leader this node replicates, for replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_of: Option<NodeRef>,
    /// Bytes written to the node's log store (RocketMQ commit log max offset), for replica lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_max_offset: Option<i64>,
}

/// A log's retained range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogStatus {
    /// The log.
    pub log: LogRef,
    /// First retained offset.
    pub earliest: i64,
    /// Next offset to be written.
    pub latest: i64,
}

/// How a group's members share the work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageModel {
    /// Each message to one member (RocketMQ CLUSTERING, every Kafka group).
    #[default]
    Clustering,
    /// Each message to every member.
    Broadcasting,
}

/// A consumer group this cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupStatus {
    /// The group.
    pub group: GroupRef,
    /// How its members share the work.
    pub model: MessageModel,
    /// Online members.
    pub clients: Vec<ClientStatus>,
    /// Its position on every log it consumes.
    pub positions: Vec<GroupPosition>,
    /// Messages sent back for retry so far: the retry topic's total max offset (RocketMQ `%RETRY%<group>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_total: Option<i64>,
    /// Messages dead-lettered so far (`%DLQ%<group>` total max offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_letter_total: Option<i64>,
    /// Consumer send-backs the broker counted in the last minute (SNDBCK_PUT_NUMS), where it counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_back_last_minute: Option<u64>,
}

/// A group's position on one log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupPosition {
    /// The log.
    pub log: LogRef,
    /// The log's first retained offset.
    pub earliest: i64,
    /// The log's next offset to be written.
    pub latest: i64,
    /// The committed offset; `None` when the group never committed on this log.
    pub committed: Option<i64>,
    /// Age of the oldest unconsumed message (now minus its store time), when there is one and it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_unconsumed_age_ms: Option<u64>,
    /// How that age was measured, when the collector says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_source: Option<AgeSource>,
}

/// How a position's age (time lag) was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgeSource {
    /// Now minus the timestamp of the record at the committed offset (read with one fetch).
    RecordTimestamp,
    /// Interpolated over sampled (latest offset, time) points, because the record is gone or unreadable.
    Interpolated,
    /// Nothing to consume (committed = latest): 0 s.
    Idle,
    /// The broker's own measure (RocketMQ QUERY_CONSUME_TIME_SPAN).
    Broker,
}

impl GroupPosition {
    /// Messages behind: `latest - committed` (never negative); `None` without a commit.
    pub fn lag(&self) -> Option<i64> {
        self.committed.map(|c| (self.latest - c).max(0))
    }
}

/// One online member of a group, as it describes itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientStatus {
    /// Client id.
    pub client_id: String,
    /// Client address.
    pub addr: String,
    /// Topic → subscription expression (tags).
    pub subscriptions: BTreeMap<String, String>,
    /// The logs it holds, with its own view of them (RocketMQ consumer running info).
    pub queues: Vec<ClientQueue>,
    /// Why its running info could not be read, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A client's view of one log it consumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientQueue {
    /// The log.
    pub log: LogRef,
    /// Messages pulled but not yet consumed.
    pub cached_messages: i64,
    /// When it last finished consuming a message (ms), 0 if never.
    pub last_consume_ms: u64,
    /// When it last pulled (ms), 0 if never.
    pub last_pull_ms: u64,
}

/// What a traffic sample counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrafficMetric {
    /// Messages produced.
    ProduceMessages,
    /// Bytes produced.
    ProduceBytes,
    /// Messages consumed.
    ConsumeMessages,
    /// Bytes consumed.
    ConsumeBytes,
    /// Messages consumers sent back for retry (RocketMQ SNDBCK_PUT_NUMS, where the broker counts it).
    SendBack,
}

/// Traffic over the last minute, from the engine's own counters or offset deltas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrafficSample {
    /// What it counts.
    pub metric: TrafficMetric,
    /// Topic, when per topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Group, when per group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Node that counted it.
    pub node: NodeRef,
    /// Amount in the last minute.
    pub last_minute: u64,
    /// Average per event over that minute (the broker's avgpt: for a size counter, bytes per message).
    #[serde(default)]
    pub minute_avg: f64,
}

/// A request that failed: the node, the request and the error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectorErrorRecord {
    /// The node asked, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeRef>,
    /// The request, e.g. `GET_CONSUME_STATS (208)`.
    pub request: String,
    /// The error.
    pub error: String,
}
