//! Typed response bodies of the admin requests, read from lenient JSON. Field names are accepted in Java's
//! camelCase and the Rust broker's snake_case; message-queue map keys in both the quoted and the bare form.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

/// A queue: a topic's queue on one broker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageQueue {
    /// Topic name.
    pub topic: String,
    /// Broker name.
    #[serde(alias = "broker_name")]
    pub broker_name: String,
    /// Queue id.
    #[serde(alias = "queue_id")]
    pub queue_id: i32,
}

/// Why a body did not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {reason}")]
pub struct BodyError {
    /// Which body or field.
    pub what: String,
    /// What was wrong.
    pub reason: String,
}

fn body_err(what: &str, reason: impl ToString) -> BodyError {
    BodyError {
        what: what.to_string(),
        reason: reason.to_string(),
    }
}

/// Field `name` (camelCase) of `v`, or its snake_case spelling.
pub fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.get(name).or_else(|| v.get(snake_case(name)))
}

fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn typed<T: DeserializeOwned>(v: &Value, what: &str) -> Result<T, BodyError> {
    T::deserialize(v).map_err(|e| body_err(what, e))
}

/// A map keyed by message queue (either key form), its values read as `T`.
fn queue_map<T: DeserializeOwned>(
    v: Option<&Value>,
    what: &str,
) -> Result<BTreeMap<MessageQueue, T>, BodyError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let obj = v
        .as_object()
        .ok_or_else(|| body_err(what, "not an object"))?;
    obj.iter()
        .map(|(k, val)| {
            let mq: MessageQueue = serde_json::from_str(k)
                .map_err(|e| body_err(what, format!("queue key {k:?}: {e}")))?;
            Ok((mq, typed(val, what)?))
        })
        .collect()
}

/// GET_BROKER_CLUSTER_INFO (106): brokers by name with their addresses by broker id, and clusters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterInfo {
    /// Broker name → broker set.
    pub brokers: BTreeMap<String, BrokerData>,
    /// Cluster name → broker names.
    pub clusters: BTreeMap<String, Vec<String>>,
}

/// One broker set (a master and its slaves) as the name server lists it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BrokerData {
    /// Cluster name.
    pub cluster: String,
    /// Broker name.
    pub broker_name: String,
    /// Broker id (0 = master) → address.
    pub addrs: BTreeMap<i64, String>,
}

impl ClusterInfo {
    /// Parses the body.
    pub fn from_json(v: &Value) -> Result<Self, BodyError> {
        const W: &str = "GET_BROKER_CLUSTER_INFO body";
        let mut info = ClusterInfo::default();
        if let Some(table) = field(v, "brokerAddrTable").and_then(Value::as_object) {
            for (name, b) in table {
                let mut addrs = BTreeMap::new();
                if let Some(a) = field(b, "brokerAddrs").and_then(Value::as_object) {
                    for (id, addr) in a {
                        let id: i64 = id
                            .trim_matches('"')
                            .parse()
                            .map_err(|_| body_err(W, format!("broker id {id:?} of {name}")))?;
                        let addr = addr
                            .as_str()
                            .ok_or_else(|| body_err(W, "address not a string"))?;
                        addrs.insert(id, addr.to_string());
                    }
                }
                let cluster = field(b, "cluster")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                info.brokers.insert(
                    name.clone(),
                    BrokerData {
                        cluster: cluster.to_string(),
                        broker_name: name.clone(),
                        addrs,
                    },
                );
            }
        }
        if let Some(table) = field(v, "clusterAddrTable").filter(|t| !t.is_null()) {
            info.clusters = typed(table, W)?;
        }
        Ok(info)
    }
}

/// One queue's offsets from GET_TOPIC_STATS_INFO (202).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueRange {
    /// Smallest offset still stored.
    #[serde(alias = "min_offset")]
    pub min_offset: i64,
    /// Next offset to be written.
    #[serde(alias = "max_offset")]
    pub max_offset: i64,
    /// Store time of the last message (ms), 0 when none.
    #[serde(alias = "last_update_timestamp")]
    pub last_update_timestamp: i64,
}

/// GET_TOPIC_STATS_INFO (202): per-queue offsets of a topic on one broker.
pub fn topic_stats(v: &Value) -> Result<BTreeMap<MessageQueue, QueueRange>, BodyError> {
    queue_map(field(v, "offsetTable"), "GET_TOPIC_STATS_INFO body")
}

/// One queue's positions from GET_CONSUME_STATS (208).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueConsumeStats {
    /// The queue's max offset.
    #[serde(alias = "broker_offset")]
    pub broker_offset: i64,
    /// The group's committed offset (0 also when it never committed: check with QUERY_CONSUMER_OFFSET).
    #[serde(alias = "consumer_offset")]
    pub consumer_offset: i64,
    /// Offset of the last pull.
    #[serde(alias = "pull_offset")]
    pub pull_offset: i64,
    /// Store time of the last consumed message (ms).
    #[serde(alias = "last_timestamp")]
    pub last_timestamp: i64,
}

/// GET_CONSUME_STATS (208): a group's positions per queue on one broker.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConsumeStats {
    /// Per queue.
    pub queues: BTreeMap<MessageQueue, QueueConsumeStats>,
    /// Consume rate the broker measured.
    pub consume_tps: f64,
}

impl ConsumeStats {
    /// Parses the body.
    pub fn from_json(v: &Value) -> Result<Self, BodyError> {
        Ok(ConsumeStats {
            queues: queue_map(field(v, "offsetTable"), "GET_CONSUME_STATS body")?,
            consume_tps: field(v, "consumeTps")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
        })
    }
}

/// One client connection of a consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientConnection {
    /// Client id.
    #[serde(alias = "client_id")]
    pub client_id: String,
    /// Client address.
    #[serde(alias = "client_addr")]
    pub client_addr: String,
    /// Client language.
    pub language: String,
    /// Client version.
    pub version: i64,
}

/// One subscription of a consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Subscription {
    /// Topic.
    pub topic: String,
    /// Tag expression.
    #[serde(alias = "sub_string")]
    pub sub_string: String,
}

/// GET_CONSUMER_CONNECTION_LIST (203): the online clients of a group and what they subscribe to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConsumerConnection {
    /// Online clients.
    pub connections: Vec<ClientConnection>,
    /// Topic → subscription.
    pub subscriptions: BTreeMap<String, Subscription>,
    /// `CONSUME_ACTIVELY` (pull) or `CONSUME_PASSIVELY` (push).
    pub consume_type: String,
    /// `CLUSTERING` or `BROADCASTING`.
    pub message_model: String,
}

impl ConsumerConnection {
    /// Parses the body.
    pub fn from_json(v: &Value) -> Result<Self, BodyError> {
        const W: &str = "GET_CONSUMER_CONNECTION_LIST body";
        let connections = match field(v, "connectionSet").filter(|c| !c.is_null()) {
            Some(c) => typed(c, W)?,
            None => Vec::new(),
        };
        let subscriptions = match field(v, "subscriptionTable").filter(|c| !c.is_null()) {
            Some(c) => typed(c, W)?,
            None => BTreeMap::new(),
        };
        let text = |name| {
            field(v, name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Ok(ConsumerConnection {
            connections,
            subscriptions,
            consume_type: text("consumeType"),
            message_model: text("messageModel"),
        })
    }
}

/// A client's process queue for one queue, from GET_CONSUMER_RUNNING_INFO (307).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct ProcessQueueInfo {
    /// Offset the client will commit.
    #[serde(alias = "commit_offset")]
    pub commit_offset: i64,
    /// Messages pulled but not yet consumed.
    #[serde(alias = "cached_msg_count")]
    pub cached_msg_count: i64,
    /// When the client last pulled (ms).
    #[serde(alias = "last_pull_timestamp")]
    pub last_pull_timestamp: i64,
    /// When the client last finished consuming (ms).
    #[serde(alias = "last_consume_timestamp")]
    pub last_consume_timestamp: i64,
}

/// GET_CONSUMER_RUNNING_INFO (307): what one client of a group is doing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConsumerRunningInfo {
    /// Client properties (consume type, thread counts, start time, …).
    pub properties: BTreeMap<String, String>,
    /// Per queue it holds.
    pub queues: BTreeMap<MessageQueue, ProcessQueueInfo>,
    /// Topic → subscription expression, as this client subscribes.
    pub subscriptions: BTreeMap<String, String>,
}

impl ConsumerRunningInfo {
    /// Parses the body.
    pub fn from_json(v: &Value) -> Result<Self, BodyError> {
        let properties = field(v, "properties")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), str::to_string),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let subscriptions: Vec<Subscription> =
            match field(v, "subscriptionSet").filter(|s| !s.is_null()) {
                Some(s) => typed(s, "GET_CONSUMER_RUNNING_INFO body")?,
                None => Vec::new(),
            };
        Ok(ConsumerRunningInfo {
            properties,
            queues: queue_map(field(v, "mqTable"), "GET_CONSUMER_RUNNING_INFO body")?,
            subscriptions: subscriptions
                .into_iter()
                .map(|s| (s.topic, s.sub_string))
                .collect(),
        })
    }
}

/// One window of VIEW_BROKER_STATS_DATA (315).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct StatsWindow {
    /// Sum over the window.
    pub sum: i64,
    /// Per second.
    pub tps: f64,
    /// Average per event.
    pub avgpt: f64,
}

/// VIEW_BROKER_STATS_DATA (315): a broker's minute, hour and day windows of one stats item.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerStatsData {
    /// Last minute.
    #[serde(alias = "stats_minute")]
    pub stats_minute: StatsWindow,
    /// Last hour.
    #[serde(alias = "stats_hour")]
    pub stats_hour: StatsWindow,
    /// Last day.
    #[serde(alias = "stats_day")]
    pub stats_day: StatsWindow,
}

impl BrokerStatsData {
    /// Parses the body.
    pub fn from_json(v: &Value) -> Result<Self, BodyError> {
        typed(v, "VIEW_BROKER_STATS_DATA body")
    }
}

/// GET_BROKER_RUNTIME_INFO (28): the broker's key/value table.
pub fn runtime_info(v: &Value) -> Result<BTreeMap<String, String>, BodyError> {
    let table = field(v, "table")
        .filter(|t| !t.is_null())
        .ok_or_else(|| body_err("GET_BROKER_RUNTIME_INFO body", "no table"))?;
    typed(table, "GET_BROKER_RUNTIME_INFO body")
}

/// GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206) and GET_SYSTEM_TOPIC_LIST_FROM_NS (304): topic names.
pub fn topic_list(v: &Value) -> Result<Vec<String>, BodyError> {
    match field(v, "topicList").filter(|t| !t.is_null()) {
        Some(t) => typed(t, "topic list body"),
        None => Ok(Vec::new()),
    }
}

/// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): subscription group names with `consumeBroadcastEnable` (whether
/// broadcast consumption is allowed, true by default; not the group's message model).
pub fn subscription_groups(v: &Value) -> Result<BTreeMap<String, bool>, BodyError> {
    let Some(table) = field(v, "subscriptionGroupTable").and_then(Value::as_object) else {
        return Ok(BTreeMap::new());
    };
    Ok(table
        .iter()
        .map(|(name, g)| {
            let broadcast = field(g, "consumeBroadcastEnable")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            (name.clone(), broadcast)
        })
        .collect())
}

/// One topic's configuration on a broker, from GET_ALL_TOPIC_CONFIG (21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfig {
    /// Read queues.
    #[serde(alias = "read_queue_nums")]
    pub read_queue_nums: i32,
    /// Write queues.
    #[serde(alias = "write_queue_nums")]
    pub write_queue_nums: i32,
    /// Permission bits (2 write, 4 read).
    pub perm: i32,
}

/// GET_ALL_TOPIC_CONFIG (21): topic name → configuration.
pub fn topic_configs(v: &Value) -> Result<BTreeMap<String, TopicConfig>, BodyError> {
    match field(v, "topicConfigTable").filter(|t| !t.is_null()) {
        Some(t) => typed(t, "GET_ALL_TOPIC_CONFIG body"),
        None => Ok(BTreeMap::new()),
    }
}

/// One queue of QUERY_CONSUME_TIME_SPAN (303).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueTimeSpan {
    /// The queue.
    #[serde(alias = "message_queue")]
    pub message_queue: MessageQueue,
    /// Store time of the earliest message (ms).
    #[serde(alias = "min_time_stamp", default)]
    pub min_time_stamp: i64,
    /// Store time of the latest message (ms).
    #[serde(alias = "max_time_stamp", default)]
    pub max_time_stamp: i64,
    /// Store time of the last consumed message (ms).
    #[serde(alias = "consume_time_stamp", default)]
    pub consume_time_stamp: i64,
    /// Now minus the store time of the first unconsumed message (ms), 0 when nothing is behind.
    #[serde(alias = "delay_time", default)]
    pub delay_time: i64,
}

/// QUERY_CONSUME_TIME_SPAN (303): per queue time span of a topic for a group.
pub fn consume_time_spans(v: &Value) -> Result<Vec<QueueTimeSpan>, BodyError> {
    match field(v, "consumeTimeSpanSet").filter(|t| !t.is_null()) {
        Some(t) => typed(t, "QUERY_CONSUME_TIME_SPAN body"),
        None => Ok(Vec::new()),
    }
}

/// An OFFSET_MOVED_EVENT message body: a consumer asked for an offset outside its queue's range (Java brokers
/// write one; the Rust broker never does).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetMovedEvent {
    /// The consumer's group.
    #[serde(alias = "consumer_group")]
    pub consumer_group: String,
    /// The queue.
    #[serde(alias = "message_queue")]
    pub message_queue: MessageQueue,
    /// The offset it asked for.
    #[serde(alias = "offset_request")]
    pub offset_request: i64,
    /// The offset the broker moved it to.
    #[serde(alias = "offset_new")]
    pub offset_new: i64,
}

impl OffsetMovedEvent {
    /// Parses a message body.
    pub fn from_json(v: &Value) -> Result<Self, BodyError> {
        typed(v, "OFFSET_MOVED_EVENT body")
    }
}
