//! Requests with more than one shape across versions, built here once: ListOffsets (earliest / latest / by
//! timestamp, never MAX_TIMESTAMP), OffsetFetch (many groups per request from v8, one per group before),
//! FindCoordinator (batched keys from v4), Fetch of one record (for its timestamp). What tests need to put data
//! into a broker is in `setup`.

use super::{Api, ErrorKind, KafkaClient, KafkaError, check_code};
use kafka_protocol::messages::{
    BrokerId, FindCoordinatorRequest, GroupId, ListOffsetsRequest, OffsetFetchRequest, TopicName,
    list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic},
    offset_fetch_request::OffsetFetchRequestGroup,
};
use kafka_protocol::protocol::{Request, StrBytes};
use std::collections::BTreeMap;

/// Which offset ListOffsets asks for. There is deliberately no MAX_TIMESTAMP (-3): some Kafka-protocol servers
/// (tansu 0.6) crash or drop the connection on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The first retained offset (-2).
    Earliest,
    /// The next offset to be written, the high watermark (-1).
    Latest,
}

impl OffsetSpec {
    fn timestamp(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
        }
    }
}

/// A group's committed offset on one partition, as OffsetFetch returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The offset; `None` when the group has no commit there (Kafka's -1).
    pub offset: Option<i64>,
    /// The broker's error for this partition, if it reported one.
    pub error: Option<KafkaError>,
}

/// Where a produced batch landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducedBatch {
    /// Offset of the batch's first record.
    pub base_offset: i64,
}

/// One record read back, for its timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchedRecord {
    /// Its offset.
    pub offset: i64,
    /// Its timestamp (ms).
    pub timestamp_ms: i64,
    /// Whether the broker set the timestamp on append (LogAppendTime) rather than the producer.
    pub log_append_time: bool,
}

pub(super) fn topic_name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

pub(super) fn group_id(s: &str) -> GroupId {
    GroupId(StrBytes::from_string(s.to_string()))
}

/// One partition of an OffsetFetch answer; `(partition, offset, error code)`.
fn committed(
    addr: &str,
    version: i16,
    group: &str,
    topic: &str,
    (partition, offset, code): (i32, i64, i16),
) -> CommittedOffset {
    CommittedOffset {
        topic: topic.to_string(),
        partition,
        offset: (offset >= 0).then_some(offset),
        // Named only when there is an error: thousands of partitions answer per cycle.
        error: (code != 0)
            .then(|| {
                check_code::<OffsetFetchRequest>(
                    addr,
                    version,
                    code,
                    Some(format!("group {group} partition {topic}-{partition}")),
                )
                .err()
            })
            .flatten(),
    }
}

pub(super) fn error_of<R: Request>(addr: &str, version: i16, kind: ErrorKind) -> KafkaError {
    KafkaError {
        broker: addr.to_string(),
        api: Api(R::KEY),
        version: Some(version),
        kind,
    }
}

impl KafkaClient {
    /// Asks `addr` (the partitions' leader) for `spec` of each partition, in one request. Per partition: the
    /// offset, or the partition's error.
    pub async fn list_offsets(
        &self,
        addr: &str,
        spec: OffsetSpec,
        partitions: &[(String, i32)],
    ) -> Result<Vec<((String, i32), Result<i64, KafkaError>)>, KafkaError> {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in partitions {
            by_topic.entry(t.as_str()).or_default().push(*p);
        }
        let (version, response) = self
            .send::<ListOffsetsRequest>(addr, None, |_| {
                let mut r = ListOffsetsRequest::default().with_replica_id(BrokerId(-1));
                r.topics = by_topic
                    .iter()
                    .map(|(t, ps)| {
                        ListOffsetsTopic::default()
                            .with_name(topic_name(t))
                            .with_partitions(
                                ps.iter()
                                    .map(|p| {
                                        ListOffsetsPartition::default()
                                            .with_partition_index(*p)
                                            .with_current_leader_epoch(-1)
                                            .with_timestamp(spec.timestamp())
                                    })
                                    .collect(),
                            )
                    })
                    .collect();
                r
            })
            .await?;
        Ok(response
            .topics
            .into_iter()
            .flat_map(|t| {
                let topic = t.name.0.to_string();
                t.partitions.into_iter().map(move |p| {
                    let result = match p.error_code {
                        0 => Ok(p.offset),
                        code => {
                            let about = format!("partition {topic}-{}", p.partition_index);
                            check_code::<ListOffsetsRequest>(addr, version, code, Some(about))
                                .map(|()| p.offset)
                        }
                    };
                    ((topic.clone(), p.partition_index), result)
                })
            })
            .collect())
    }

    /// Every committed offset of each of `groups`, asked of `addr` (their coordinator): one request for all from
    /// OffsetFetch v8, one per group (in flight together) before. Per group: its offsets or its error.
    pub async fn offset_fetch(
        &self,
        addr: &str,
        groups: &[String],
    ) -> Result<Vec<(String, Result<Vec<CommittedOffset>, KafkaError>)>, KafkaError> {
        let version = self.version_for::<OffsetFetchRequest>(addr, None).await?;
        if version >= 8 {
            let (version, response) = self
                .send::<OffsetFetchRequest>(addr, None, |_| {
                    OffsetFetchRequest::default().with_groups(
                        groups
                            .iter()
                            .map(|g| {
                                OffsetFetchRequestGroup::default()
                                    .with_group_id(group_id(g))
                                    .with_member_epoch(-1)
                                    .with_topics(None)
                            })
                            .collect(),
                    )
                })
                .await?;
            let mut out = Vec::with_capacity(response.groups.len());
            for g in response.groups {
                let name = g.group_id.0.to_string();
                let about = (g.error_code != 0).then(|| format!("group {name}"));
                let result = check_code::<OffsetFetchRequest>(addr, version, g.error_code, about);
                let result = result.map(|()| {
                    let mut offsets = Vec::new();
                    for t in g.topics {
                        for p in t.partitions {
                            offsets.push(committed(
                                addr,
                                version,
                                &name,
                                t.name.as_str(),
                                (p.partition_index, p.committed_offset, p.error_code),
                            ));
                        }
                    }
                    offsets
                });
                out.push((name, result));
            }
            return Ok(out);
        }
        let one = |g: String| async move {
            let sent = self
                .send::<OffsetFetchRequest>(addr, Some(7), |_| {
                    OffsetFetchRequest::default()
                        .with_group_id(group_id(&g))
                        .with_topics(None)
                })
                .await;
            let result = sent.and_then(|(version, r)| {
                let about = (r.error_code != 0).then(|| format!("group {g}"));
                check_code::<OffsetFetchRequest>(addr, version, r.error_code, about)?;
                let mut offsets = Vec::new();
                for t in r.topics {
                    for p in t.partitions {
                        offsets.push(committed(
                            addr,
                            version,
                            &g,
                            t.name.as_str(),
                            (p.partition_index, p.committed_offset, p.error_code),
                        ));
                    }
                }
                Ok(offsets)
            });
            (g, result)
        };
        Ok(futures::future::join_all(groups.iter().cloned().map(one)).await)
    }

    /// The coordinator (`host:port`) of consumer group `group`, asked of `addr`.
    pub async fn find_coordinator(&self, addr: &str, group: &str) -> Result<String, KafkaError> {
        let (version, r) = self
            .send::<FindCoordinatorRequest>(addr, None, |v| {
                let r = FindCoordinatorRequest::default().with_key_type(0);
                if v >= 4 {
                    r.with_coordinator_keys(vec![StrBytes::from_string(group.to_string())])
                } else {
                    r.with_key(StrBytes::from_string(group.to_string()))
                }
            })
            .await?;
        let about = Some(format!("group {group}"));
        if version >= 4 {
            let c = r.coordinators.into_iter().next().ok_or_else(|| {
                error_of::<FindCoordinatorRequest>(
                    addr,
                    version,
                    ErrorKind::Decode("no coordinator".into()),
                )
            })?;
            check_code::<FindCoordinatorRequest>(addr, version, c.error_code, about)?;
            return Ok(format!("{}:{}", c.host, c.port));
        }
        check_code::<FindCoordinatorRequest>(addr, version, r.error_code, about)?;
        Ok(format!("{}:{}", r.host, r.port))
    }
}
