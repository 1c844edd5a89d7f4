//! What tests need to put data into a real broker, built once: CreateTopics, Produce (one uncompressed batch,
//! acks=all) and OffsetCommit (as a standalone committer). mqwatch itself never writes to a cluster.

use super::ops::{ProducedBatch, error_of, group_id, topic_name};
use super::{ErrorKind, KafkaClient, KafkaError, check_code};
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    CreateTopicsRequest, OffsetCommitRequest, ProduceRequest,
    create_topics_request::CreatableTopic,
    offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic},
    produce_request::{PartitionProduceData, TopicProduceData},
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use std::collections::BTreeMap;

impl KafkaClient {
    /// Creates `topic` with `partitions` partitions of `replication` copies, asked of `addr` (the controller or
    /// any broker).
    pub async fn create_topic(
        &self,
        addr: &str,
        topic: &str,
        partitions: i32,
        replication: i16,
    ) -> Result<(), KafkaError> {
        let (version, r) = self
            .send::<CreateTopicsRequest>(addr, None, |_| {
                CreateTopicsRequest::default()
                    .with_timeout_ms(10_000)
                    .with_topics(vec![
                        CreatableTopic::default()
                            .with_name(topic_name(topic))
                            .with_num_partitions(partitions)
                            .with_replication_factor(replication),
                    ])
            })
            .await?;
        for t in r.topics {
            check_code::<CreateTopicsRequest>(
                addr,
                version,
                t.error_code,
                Some(format!("topic {topic}")),
            )?;
        }
        Ok(())
    }

    /// Produces `values` with `timestamp_ms` to one partition, asked of its leader `addr`, acks=all, in one
    /// uncompressed batch.
    pub async fn produce(
        &self,
        addr: &str,
        topic: &str,
        partition: i32,
        values: &[Bytes],
        timestamp_ms: i64,
    ) -> Result<ProducedBatch, KafkaError> {
        let records: Vec<Record> = values
            .iter()
            .enumerate()
            .map(|(i, v)| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: -1,
                timestamp: timestamp_ms,
                key: None,
                value: Some(v.clone()),
                headers: Default::default(),
            })
            .collect();
        let mut batch = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut batch,
            &records,
            &RecordEncodeOptions {
                version: 2,
                compression: Compression::None,
            },
        )
        .map_err(|e| {
            error_of::<ProduceRequest>(addr, -1, ErrorKind::Encode(format!("record batch: {e}")))
        })?;
        let batch = batch.freeze();
        let (version, r) = self
            .send::<ProduceRequest>(addr, Some(12), |_| {
                ProduceRequest::default()
                    .with_acks(-1)
                    .with_timeout_ms(10_000)
                    .with_topic_data(vec![
                        TopicProduceData::default()
                            .with_name(topic_name(topic))
                            .with_partition_data(vec![
                                PartitionProduceData::default()
                                    .with_index(partition)
                                    .with_records(Some(batch.clone())),
                            ]),
                    ])
            })
            .await?;
        let p = r
            .responses
            .into_iter()
            .flat_map(|t| t.partition_responses)
            .next()
            .ok_or_else(|| {
                error_of::<ProduceRequest>(
                    addr,
                    version,
                    ErrorKind::Decode("no partition in response".into()),
                )
            })?;
        check_code::<ProduceRequest>(
            addr,
            version,
            p.error_code,
            Some(format!("partition {topic}-{partition}")),
        )?;
        Ok(ProducedBatch {
            base_offset: p.base_offset,
        })
    }

    /// Commits `offsets` (`(topic, partition, offset)`) for `group` as a standalone committer (no generation,
    /// no member), asked of the group's coordinator `addr`.
    pub async fn commit_offsets(
        &self,
        addr: &str,
        group: &str,
        offsets: &[(String, i32, i64)],
    ) -> Result<(), KafkaError> {
        let mut by_topic: BTreeMap<&str, Vec<(i32, i64)>> = BTreeMap::new();
        for (t, p, o) in offsets {
            by_topic.entry(t.as_str()).or_default().push((*p, *o));
        }
        let (version, r) = self
            .send::<OffsetCommitRequest>(addr, None, |v| {
                let r = OffsetCommitRequest::default()
                    .with_group_id(group_id(group))
                    .with_generation_id_or_member_epoch(-1)
                    .with_member_id(StrBytes::from_static_str(""));
                let r = if v <= 4 {
                    r.with_retention_time_ms(-1)
                } else {
                    r
                };
                r.with_topics(
                    by_topic
                        .iter()
                        .map(|(t, ps)| {
                            OffsetCommitRequestTopic::default()
                                .with_name(topic_name(t))
                                .with_partitions(
                                    ps.iter()
                                        .map(|(p, o)| {
                                            let part = OffsetCommitRequestPartition::default()
                                                .with_partition_index(*p)
                                                .with_committed_offset(*o);
                                            if v >= 6 {
                                                part.with_committed_leader_epoch(-1)
                                            } else {
                                                part
                                            }
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                )
            })
            .await?;
        for t in r.topics {
            for p in t.partitions {
                check_code::<OffsetCommitRequest>(
                    addr,
                    version,
                    p.error_code,
                    Some(format!(
                        "group {group} partition {}-{}",
                        t.name.0, p.partition_index
                    )),
                )?;
            }
        }
        Ok(())
    }
}
