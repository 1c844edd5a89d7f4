//! Reading records back for their timestamps (time lag): one Fetch for many partitions of one leader, each at
//! its own offset, read by mqwatch's own bounded record reader ([`crate::guard::records`]), never kafka-protocol's.
//!
//! A Fetch answer is bounded twice: `partition_max_bytes` per partition and `max_bytes` for the whole answer. A
//! broker returns a batch larger than either only for the first partition it fills (KIP-74), so a partition
//! answered without records while its log goes past the offset was left out for size: it is [`Fetched::Skipped`],
//! and the caller asks it alone (where the first-batch rule always applies).

use super::ops::{FetchedRecord, error_of, topic_name};
use super::{ErrorKind, KafkaClient, KafkaError, check_code};
use kafka_protocol::messages::{
    BrokerId, FetchRequest,
    fetch_request::{FetchPartition, FetchTopic},
};
use std::collections::BTreeMap;

/// What one partition of a batched Fetch gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The first record at or after the offset.
    Record(FetchedRecord),
    /// No record at or after the offset (the log ends there).
    Nothing,
    /// Left out of this answer for its size: ask it alone.
    Skipped,
}

/// One partition to read: `(topic, partition, offset)`.
pub type FetchAt = (String, i32, i64);

impl KafkaClient {
    /// The first record at or after `offset` of a partition, asked of its leader `addr` (`None` when there is
    /// none yet). Reads at most `max_bytes` of the partition, but always its first batch.
    pub async fn fetch_record(
        &self,
        addr: &str,
        topic: &str,
        partition: i32,
        offset: i64,
        max_bytes: i32,
    ) -> Result<Option<FetchedRecord>, KafkaError> {
        let at = [(topic.to_string(), partition, offset)];
        let mut answers = self.fetch_records(addr, &at, max_bytes, max_bytes).await?;
        match answers.pop().map(|(_, r)| r) {
            Some(Ok(Fetched::Record(r))) => Ok(Some(r)),
            Some(Ok(_)) | None => Ok(None),
            Some(Err(e)) => Err(e),
        }
    }

    /// One Fetch for every partition of `at` (each at most once; all led by `addr`), each answered with its first
    /// record at or after its offset, or why not. `partition_max_bytes` bounds each partition, `max_bytes` the
    /// whole answer. An `Err` is the request's (the broker unreachable or the answer unreadable).
    pub async fn fetch_records(
        &self,
        addr: &str,
        at: &[FetchAt],
        partition_max_bytes: i32,
        max_bytes: i32,
    ) -> Result<Vec<(FetchAt, Result<Fetched, KafkaError>)>, KafkaError> {
        let mut by_topic: BTreeMap<&str, Vec<(i32, i64)>> = BTreeMap::new();
        for (t, p, o) in at {
            by_topic.entry(t.as_str()).or_default().push((*p, *o));
        }
        let (version, r) = self
            .send::<FetchRequest>(addr, Some(11), |_| {
                FetchRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_max_wait_ms(0)
                    .with_min_bytes(1)
                    .with_max_bytes(max_bytes)
                    .with_session_epoch(-1)
                    .with_topics(
                        by_topic
                            .iter()
                            .map(|(t, ps)| {
                                FetchTopic::default()
                                    .with_topic(topic_name(t))
                                    .with_partitions(
                                        ps.iter()
                                            .map(|(p, o)| {
                                                FetchPartition::default()
                                                    .with_partition(*p)
                                                    .with_current_leader_epoch(-1)
                                                    .with_fetch_offset(*o)
                                                    .with_log_start_offset(-1)
                                                    .with_partition_max_bytes(partition_max_bytes)
                                            })
                                            .collect(),
                                    )
                            })
                            .collect(),
                    )
            })
            .await?;
        if r.error_code != 0 {
            check_code::<FetchRequest>(addr, version, r.error_code, None)?;
        }
        let offsets: BTreeMap<(&str, i32), i64> =
            at.iter().map(|(t, p, o)| ((t.as_str(), *p), *o)).collect();
        let mut out = Vec::with_capacity(at.len());
        for t in r.responses {
            let topic = t.topic.as_str();
            for p in t.partitions {
                let Some(&offset) = offsets.get(&(topic, p.partition_index)) else {
                    continue; // a partition not asked: ignored
                };
                let key = (topic.to_string(), p.partition_index, offset);
                let about = || format!("partition {topic}-{}", p.partition_index);
                let result = if p.error_code != 0 {
                    check_code::<FetchRequest>(addr, version, p.error_code, Some(about()))
                        .map(|()| Fetched::Nothing)
                } else {
                    let records = p.records.as_deref().unwrap_or_default();
                    match crate::guard::records::first_at_or_after(records, offset) {
                        Ok(Some(r)) => Ok(Fetched::Record(FetchedRecord {
                            offset: r.offset,
                            timestamp_ms: r.timestamp_ms,
                            log_append_time: r.log_append_time,
                        })),
                        Ok(None) if p.high_watermark > offset && records.is_empty() => {
                            Ok(Fetched::Skipped)
                        }
                        Ok(None) => Ok(Fetched::Nothing),
                        Err(e) => Err(error_of::<FetchRequest>(
                            addr,
                            version,
                            ErrorKind::Decode(format!("{}: {e}", about())),
                        )),
                    }
                };
                out.push((key, result));
            }
        }
        Ok(out)
    }
}
