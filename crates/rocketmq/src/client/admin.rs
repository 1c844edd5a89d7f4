//! The typed admin requests mqwatch sends, on top of [`AdminClient::request`]. Absence that the protocol
//! signals with a response code (no committed offset, no stats yet) is `Ok(None)`, never an empty success.

use super::{AdminClient, AdminError, ErrorKind, RequestCode};
use crate::body::{
    self, BodyError, BrokerStatsData, ClusterInfo, ConsumeStats, ConsumerConnection,
};
use crate::body::{ConsumerRunningInfo, MessageQueue, QueueRange, QueueTimeSpan, TopicConfig};
use std::collections::BTreeMap;

/// Response code: the stats item has no data (VIEW_BROKER_STATS_DATA) — RocketMQ's SYSTEM_ERROR, used so.
pub const CODE_NO_STATS: i32 = 1;
/// Response code QUERY_NOT_FOUND: e.g. the group never committed on that queue.
pub const CODE_QUERY_NOT_FOUND: i32 = 22;
/// Response code CONSUMER_NOT_ONLINE.
pub const CODE_CONSUMER_NOT_ONLINE: i32 = 206;

/// `Ok(None)` where the node answers `code` to say the thing asked for does not exist (yet).
fn absent_on<T>(result: Result<T, AdminError>, code: i32) -> Result<Option<T>, AdminError> {
    match result {
        Err(e) if e.response_code() == Some(code) => Ok(None),
        other => other.map(Some),
    }
}

fn body_error(addr: &str, request: RequestCode, e: BodyError) -> AdminError {
    AdminError {
        node: addr.to_string(),
        request,
        kind: ErrorKind::Body(e.to_string()),
    }
}

impl AdminClient {
    async fn typed<T>(
        &self,
        addr: &str,
        code: RequestCode,
        ext: &[(&str, String)],
        parse: impl FnOnce(&serde_json::Value) -> Result<T, BodyError>,
    ) -> Result<T, AdminError> {
        let v = self.request_json(addr, code, ext).await?;
        parse(&v).map_err(|e| body_error(addr, code, e))
    }

    async fn ext_i64(
        &self,
        addr: &str,
        code: RequestCode,
        ext: &[(&str, String)],
        name: &str,
    ) -> Result<i64, AdminError> {
        let frame = self.request(addr, code, ext, Vec::new()).await?;
        let raw = frame.header.ext_fields.get(name);
        raw.and_then(|s| s.parse().ok()).ok_or_else(|| {
            let e = BodyError {
                what: format!("response field {name}"),
                reason: format!("{raw:?}"),
            };
            body_error(addr, code, e)
        })
    }

    /// GET_BROKER_CLUSTER_INFO from a name server.
    pub async fn cluster_info(&self, namesrv: &str) -> Result<ClusterInfo, AdminError> {
        self.typed(
            namesrv,
            RequestCode::GET_BROKER_CLUSTER_INFO,
            &[],
            ClusterInfo::from_json,
        )
        .await
    }

    /// GET_ALL_TOPIC_LIST_FROM_NAMESERVER.
    pub async fn topic_list(&self, namesrv: &str) -> Result<Vec<String>, AdminError> {
        let code = RequestCode::GET_ALL_TOPIC_LIST_FROM_NAMESERVER;
        self.typed(namesrv, code, &[], body::topic_list).await
    }

    /// GET_BROKER_RUNTIME_INFO.
    pub async fn runtime_info(&self, broker: &str) -> Result<BTreeMap<String, String>, AdminError> {
        self.typed(
            broker,
            RequestCode::GET_BROKER_RUNTIME_INFO,
            &[],
            body::runtime_info,
        )
        .await
    }

    /// GET_ALL_SUBSCRIPTIONGROUP_CONFIG: group name → `consumeBroadcastEnable` (broadcast allowed, not the model).
    pub async fn subscription_groups(
        &self,
        broker: &str,
    ) -> Result<BTreeMap<String, bool>, AdminError> {
        let code = RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG;
        self.typed(broker, code, &[], body::subscription_groups)
            .await
    }

    /// GET_ALL_TOPIC_CONFIG: every topic the broker hosts.
    pub async fn topic_configs(
        &self,
        broker: &str,
    ) -> Result<BTreeMap<String, TopicConfig>, AdminError> {
        self.typed(
            broker,
            RequestCode::GET_ALL_TOPIC_CONFIG,
            &[],
            body::topic_configs,
        )
        .await
    }

    /// QUERY_CONSUME_TIME_SPAN of `group` on `topic`: per queue, the age of the first unconsumed message.
    pub async fn consume_time_spans(
        &self,
        broker: &str,
        topic: &str,
        group: &str,
    ) -> Result<Vec<QueueTimeSpan>, AdminError> {
        let ext = [("topic", topic.to_string()), ("group", group.to_string())];
        let code = RequestCode::QUERY_CONSUME_TIME_SPAN;
        self.typed(broker, code, &ext, body::consume_time_spans)
            .await
    }

    /// GET_TOPIC_STATS_INFO: per-queue min/max offsets of `topic` on `broker`.
    pub async fn topic_stats(
        &self,
        broker: &str,
        topic: &str,
    ) -> Result<BTreeMap<MessageQueue, QueueRange>, AdminError> {
        let ext = [("topic", topic.to_string())];
        self.typed(
            broker,
            RequestCode::GET_TOPIC_STATS_INFO,
            &ext,
            body::topic_stats,
        )
        .await
    }

    /// GET_CONSUME_STATS of `group` (optionally one topic) on `broker`, asked of that broker directly.
    pub async fn consume_stats(
        &self,
        broker: &str,
        group: &str,
        topic: Option<&str>,
    ) -> Result<ConsumeStats, AdminError> {
        let mut ext = vec![("consumerGroup", group.to_string())];
        if let Some(t) = topic {
            ext.push(("topic", t.to_string()));
        }
        self.typed(
            broker,
            RequestCode::GET_CONSUME_STATS,
            &ext,
            ConsumeStats::from_json,
        )
        .await
    }

    /// GET_CONSUMER_CONNECTION_LIST; `Ok(None)` when the group has no online client.
    pub async fn consumer_connections(
        &self,
        broker: &str,
        group: &str,
    ) -> Result<Option<ConsumerConnection>, AdminError> {
        let ext = [("consumerGroup", group.to_string())];
        let code = RequestCode::GET_CONSUMER_CONNECTION_LIST;
        absent_on(
            self.typed(broker, code, &ext, ConsumerConnection::from_json)
                .await,
            CODE_CONSUMER_NOT_ONLINE,
        )
    }

    /// GET_CONSUMER_RUNNING_INFO of one client (the broker asks the client).
    pub async fn consumer_running_info(
        &self,
        broker: &str,
        group: &str,
        client_id: &str,
    ) -> Result<ConsumerRunningInfo, AdminError> {
        let ext = [
            ("consumerGroup", group.to_string()),
            ("clientId", client_id.to_string()),
            ("jstackEnable", "false".to_string()),
        ];
        let code = RequestCode::GET_CONSUMER_RUNNING_INFO;
        self.typed(broker, code, &ext, ConsumerRunningInfo::from_json)
            .await
    }

    /// QUERY_CONSUMER_OFFSET; `Ok(None)` when the group never committed on the queue.
    pub async fn committed_offset(
        &self,
        broker: &str,
        group: &str,
        topic: &str,
        queue_id: i32,
    ) -> Result<Option<i64>, AdminError> {
        let ext = [
            ("consumerGroup", group.to_string()),
            ("topic", topic.to_string()),
            ("queueId", queue_id.to_string()),
        ];
        absent_on(
            self.ext_i64(broker, RequestCode::QUERY_CONSUMER_OFFSET, &ext, "offset")
                .await,
            CODE_QUERY_NOT_FOUND,
        )
    }

    /// GET_MAX_OFFSET of one queue.
    pub async fn max_offset(
        &self,
        broker: &str,
        topic: &str,
        queue_id: i32,
    ) -> Result<i64, AdminError> {
        self.queue_offset(broker, RequestCode::GET_MAX_OFFSET, topic, queue_id)
            .await
    }

    /// GET_MIN_OFFSET of one queue.
    pub async fn min_offset(
        &self,
        broker: &str,
        topic: &str,
        queue_id: i32,
    ) -> Result<i64, AdminError> {
        self.queue_offset(broker, RequestCode::GET_MIN_OFFSET, topic, queue_id)
            .await
    }

    async fn queue_offset(
        &self,
        broker: &str,
        code: RequestCode,
        topic: &str,
        queue_id: i32,
    ) -> Result<i64, AdminError> {
        let ext = [
            ("topic", topic.to_string()),
            ("queueId", queue_id.to_string()),
        ];
        self.ext_i64(broker, code, &ext, "offset").await
    }

    /// VIEW_BROKER_STATS_DATA; `Ok(None)` when the broker has no data for the key yet.
    pub async fn broker_stats(
        &self,
        broker: &str,
        stats_name: &str,
        stats_key: &str,
    ) -> Result<Option<BrokerStatsData>, AdminError> {
        let ext = [
            ("statsName", stats_name.to_string()),
            ("statsKey", stats_key.to_string()),
        ];
        let code = RequestCode::VIEW_BROKER_STATS_DATA;
        absent_on(
            self.typed(broker, code, &ext, BrokerStatsData::from_json)
                .await,
            CODE_NO_STATS,
        )
    }

    /// UPDATE_CONSUMER_OFFSET: sets a group's committed offset (the broker does not range-check it).
    pub async fn update_consumer_offset(
        &self,
        broker: &str,
        group: &str,
        topic: &str,
        queue_id: i32,
        offset: i64,
    ) -> Result<(), AdminError> {
        let ext = [
            ("consumerGroup", group.to_string()),
            ("topic", topic.to_string()),
            ("queueId", queue_id.to_string()),
            ("commitOffset", offset.to_string()),
        ];
        self.request(
            broker,
            RequestCode::UPDATE_CONSUMER_OFFSET,
            &ext,
            Vec::new(),
        )
        .await
        .map(drop)
    }

    /// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP with default settings.
    pub async fn create_subscription_group(
        &self,
        broker: &str,
        group: &str,
    ) -> Result<(), AdminError> {
        let body =
            serde_json::to_vec(&serde_json::json!({ "groupName": group })).unwrap_or_default();
        let code = RequestCode::UPDATE_AND_CREATE_SUBSCRIPTIONGROUP;
        self.request(broker, code, &[], body).await.map(drop)
    }

    /// UPDATE_AND_CREATE_TOPIC with `queues` read and write queues, read-write permission.
    pub async fn create_topic(
        &self,
        broker: &str,
        topic: &str,
        queues: u32,
    ) -> Result<(), AdminError> {
        let ext = [
            ("topic", topic.to_string()),
            ("defaultTopic", "TBW102".to_string()),
            ("readQueueNums", queues.to_string()),
            ("writeQueueNums", queues.to_string()),
            ("perm", "6".to_string()),
            ("topicFilterType", "SINGLE_TAG".to_string()),
            ("topicSysFlag", "0".to_string()),
            ("order", "false".to_string()),
        ];
        self.request(
            broker,
            RequestCode::UPDATE_AND_CREATE_TOPIC,
            &ext,
            Vec::new(),
        )
        .await
        .map(drop)
    }
}

/// Response code PULL_NOT_FOUND: nothing at or after the offset yet.
pub const CODE_PULL_NOT_FOUND: i32 = 19;
/// Response code PULL_RETRY_IMMEDIATELY.
pub const CODE_PULL_RETRY_IMMEDIATELY: i32 = 20;
/// Response code PULL_OFFSET_MOVED: the offset asked for is outside the queue.
pub const CODE_PULL_OFFSET_MOVED: i32 = 21;

/// What PULL_MESSAGE returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The messages (empty when nothing was found).
    pub messages: Vec<crate::message::StoredMessage>,
    /// Where the next pull should start.
    pub next_begin_offset: i64,
}

impl AdminClient {
    /// PULL_MESSAGE of up to `max` messages of one queue from `offset`, as a reader that subscribes to every
    /// tag and commits nothing (sys flag: subscription only). "Not found", "retry" and "offset moved" are empty
    /// answers, not errors.
    pub async fn pull(
        &self,
        broker: &str,
        group: &str,
        topic: &str,
        queue_id: i32,
        offset: i64,
        max: i32,
    ) -> Result<Pulled, AdminError> {
        const FLAG_SUBSCRIPTION: i32 = 0x4;
        let ext = [
            ("consumerGroup", group.to_string()),
            ("topic", topic.to_string()),
            ("queueId", queue_id.to_string()),
            ("queueOffset", offset.to_string()),
            ("maxMsgNums", max.to_string()),
            ("sysFlag", FLAG_SUBSCRIPTION.to_string()),
            ("commitOffset", "0".to_string()),
            ("suspendTimeoutMillis", "0".to_string()),
            ("subscription", "*".to_string()),
            ("subVersion", "0".to_string()),
            ("expressionType", "TAG".to_string()),
        ];
        let code = RequestCode::PULL_MESSAGE;
        let frame = self.exchange(broker, code, &ext, Vec::new()).await?;
        let next = frame
            .header
            .ext_fields
            .get("nextBeginOffset")
            .and_then(|v| v.parse().ok())
            .unwrap_or(offset);
        match frame.header.code {
            0 => {
                let messages =
                    crate::message::decode_messages(&frame.body).map_err(|e| AdminError {
                        node: broker.to_string(),
                        request: code,
                        kind: ErrorKind::Body(e.to_string()),
                    })?;
                Ok(Pulled {
                    messages,
                    next_begin_offset: next,
                })
            }
            CODE_PULL_NOT_FOUND | CODE_PULL_RETRY_IMMEDIATELY | CODE_PULL_OFFSET_MOVED => {
                Ok(Pulled {
                    messages: Vec::new(),
                    next_begin_offset: next,
                })
            }
            other => Err(AdminError {
                node: broker.to_string(),
                request: code,
                kind: ErrorKind::Response {
                    code: other,
                    remark: frame.header.remark,
                },
            }),
        }
    }
}
