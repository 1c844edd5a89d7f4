//! Topics: every master's topic table (GET_ALL_TOPIC_CONFIG), then per-queue min/max offsets of each user topic
//! and of the retry and dead-letter topics (GET_TOPIC_STATS_INFO), summed per group for the latter.

use super::cycle::Cycle;
use super::names::{DLQ_PREFIX, RETRY_PREFIX, is_system_topic};
use super::nodes::KnownBroker;
use crate::body::{MessageQueue, QueueRange};
use crate::client::AdminClient;
use mqwatch_model::{LogRef, LogStatus};
use std::collections::{BTreeMap, BTreeSet};

/// What the cycle learned about topics.
#[derive(Debug, Default)]
pub(crate) struct Topics {
    /// User topics → masters hosting them.
    pub hosts: BTreeMap<String, Vec<KnownBroker>>,
    /// Every queue read, user topics and retry / dead-letter topics alike.
    pub ranges: BTreeMap<MessageQueue, QueueRange>,
    /// Group → total max offset of its retry topic.
    pub retry_totals: BTreeMap<String, i64>,
    /// Group → total max offset of its dead-letter topic.
    pub dead_letter_totals: BTreeMap<String, i64>,
    /// Masters that have the OFFSET_MOVED_EVENT topic, with its read queue count.
    pub event_queues: Vec<(KnownBroker, i32)>,
}

impl Topics {
    /// Queues of user topics as log statuses.
    pub(crate) fn logs(&self) -> Vec<LogStatus> {
        self.ranges
            .iter()
            .filter(|(mq, _)| self.hosts.contains_key(&mq.topic))
            .map(|(mq, r)| LogStatus {
                log: queue_log(mq),
                earliest: r.min_offset,
                latest: r.max_offset,
            })
            .collect()
    }
}

/// The log a message queue is.
pub(crate) fn queue_log(mq: &MessageQueue) -> LogRef {
    LogRef::Queue {
        topic: mq.topic.clone(),
        broker: mq.broker_name.clone(),
        queue_id: mq.queue_id,
    }
}

/// Reads topic tables and queue offsets from `masters`.
pub(crate) async fn collect(
    client: &AdminClient,
    cycle: &Cycle,
    masters: &[KnownBroker],
    system_names: &[String],
    concurrency: usize,
) -> Topics {
    let tables = futures::future::join_all(masters.iter().map(|m| async move {
        (
            m,
            cycle
                .ask(&m.addr, client.topic_configs(&m.addr))
                .await
                .unwrap_or_default(),
        )
    }))
    .await;
    let mut topics = Topics::default();
    let mut jobs: Vec<(KnownBroker, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (master, table) in tables {
        if let Some(cfg) = table.get(super::offset_moved::EVENT_TOPIC) {
            topics
                .event_queues
                .push((master.clone(), cfg.read_queue_nums));
        }
        for name in table.keys() {
            let special = name.starts_with(RETRY_PREFIX) || name.starts_with(DLQ_PREFIX);
            if !special && is_system_topic(name, system_names) {
                continue;
            }
            if !special {
                topics
                    .hosts
                    .entry(name.clone())
                    .or_default()
                    .push(master.clone());
            }
            if seen.insert((master.addr.clone(), name.clone())) {
                jobs.push((master.clone(), name.clone()));
            }
        }
    }
    let answers: Vec<_> = super::cycle::bounded(
        jobs.into_iter()
            .map(|(m, topic)| async move {
                let ranges = cycle
                    .ask(&m.addr, client.topic_stats(&m.addr, &topic))
                    .await;
                (topic, ranges)
            })
            .collect::<Vec<_>>(),
        concurrency,
    )
    .await;
    for (topic, ranges) in answers {
        let Some(ranges) = ranges else { continue };
        let total: i64 = ranges.values().map(|r| r.max_offset).sum();
        if let Some(group) = topic.strip_prefix(RETRY_PREFIX) {
            *topics.retry_totals.entry(group.to_string()).or_default() += total;
        } else if let Some(group) = topic.strip_prefix(DLQ_PREFIX) {
            *topics
                .dead_letter_totals
                .entry(group.to_string())
                .or_default() += total;
        }
        topics.ranges.extend(ranges);
    }
    topics
}
