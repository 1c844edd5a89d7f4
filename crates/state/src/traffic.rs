//! Traffic statistics of one cluster in RocketMQ StatsItem windows (minute / hour / day): produced messages per
//! topic, broker and cluster from the growth of each log's latest offset between snapshots (a RocketMQ queue's
//! broker is in its name; a Kafka partition's broker is its leader at the time of the look), produced bytes from
//! that growth times the broker's average message size, and consumed messages per topic and group from the
//! growth of committed offsets. The 10-minute topic ranking reads the hour window's last 10-minute step.
//!
//! Offsets are exact where a broker's own counters are not (the Rust broker counts nothing for retry topics, and
//! counters restart with the broker); the broker's own minute counters stay in the snapshot as collected.

use mqwatch_model::{ClusterSnapshot, LogRef, TrafficMetric};
use mqwatch_stats::window::{ItemStats, StatsSet, Window, WindowStats};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// The windows of one cluster. Thread-safe: a collector feeds it while a timer ticks it and readers read it.
#[derive(Default)]
pub struct Traffic {
    /// Key: topic. Value: messages produced.
    pub topic_produce: StatsSet,
    /// Key: topic. Value: bytes produced.
    pub topic_produce_bytes: StatsSet,
    /// Key: `topic@group`. Value: messages consumed (committed).
    pub group_consume: StatsSet,
    /// Key: broker name. Value: messages produced.
    pub broker_produce: StatsSet,
    /// Key: broker name. Value: messages consumed.
    pub broker_consume: StatsSet,
    /// Key: the cluster's name. Value: messages produced.
    pub cluster_produce: StatsSet,
    /// Key: the cluster's name. Value: messages consumed.
    pub cluster_consume: StatsSet,
    last: Mutex<Offsets>,
}

#[derive(Default)]
struct Offsets {
    latest: HashMap<LogRef, i64>,
    committed: HashMap<(String, LogRef), i64>,
    /// When the previous look was taken.
    taken_at_ms: Option<u64>,
}

/// What one look added to the topic windows: messages produced per topic since the previous look (the growth of
/// its logs' latest offsets; 0 for a topic whose logs did not grow), and when that look was (`None` on the first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducedSince {
    /// When the previous look was taken.
    pub previous_ms: Option<u64>,
    /// Topic → messages produced since then.
    pub topics: BTreeMap<String, u64>,
}

/// Everything the windows hold, for the API: per key, its minute, hour and day windows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TrafficReport {
    /// Topic → messages produced.
    pub topic_produce: BTreeMap<String, ItemStats>,
    /// Topic → bytes produced.
    pub topic_produce_bytes: BTreeMap<String, ItemStats>,
    /// `topic@group` → messages consumed.
    pub group_consume: BTreeMap<String, ItemStats>,
    /// Broker → messages produced.
    pub broker_produce: BTreeMap<String, ItemStats>,
    /// Broker → messages consumed.
    pub broker_consume: BTreeMap<String, ItemStats>,
    /// Cluster → messages produced.
    pub cluster_produce: BTreeMap<String, ItemStats>,
    /// Cluster → messages consumed.
    pub cluster_consume: BTreeMap<String, ItemStats>,
    /// The top 10 topics of the last 10 minutes.
    pub ranking: Vec<RankedTopic>,
}

/// One row of the topic ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedTopic {
    /// Topic.
    pub topic: String,
    /// Messages produced in the last 10-minute step.
    pub messages: u64,
    /// Bytes produced in the same step.
    pub bytes: u64,
}

/// Partition → its leader's name, from the snapshot's replica placement.
type Leaders<'a> = HashMap<&'a LogRef, &'a str>;

fn leaders(s: &ClusterSnapshot) -> Leaders<'_> {
    s.partitions
        .iter()
        .filter_map(|p| Some((&p.log, p.leader.as_deref()?)))
        .collect()
}

fn topic_and_broker<'a>(log: &'a LogRef, leaders: &Leaders<'a>) -> (&'a str, Option<&'a str>) {
    match log {
        LogRef::Queue { topic, broker, .. } => (topic, Some(broker)),
        LogRef::Partition { topic, .. } => (topic, leaders.get(log).copied()),
        LogRef::Ledger { .. } => ("", None),
    }
}

/// Growth since the last look; none on the first look or when the offset went back (a reset).
fn growth<K: std::hash::Hash + Eq>(last: &mut HashMap<K, i64>, key: K, now: i64) -> u64 {
    match last.insert(key, now) {
        Some(before) if now > before => (now - before) as u64,
        _ => 0,
    }
}

impl Traffic {
    /// Empty windows.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds what happened since the previous snapshot; returns the messages produced per topic since then.
    pub fn feed(&self, s: &ClusterSnapshot) -> ProducedSince {
        let Ok(mut last) = self.last.lock() else {
            return ProducedSince::default();
        };
        let mut produced = ProducedSince {
            previous_ms: last.taken_at_ms.replace(s.taken_at_ms),
            topics: BTreeMap::new(),
        };
        let avg_size: HashMap<&str, f64> = s
            .traffic
            .iter()
            .filter(|t| {
                t.metric == TrafficMetric::ProduceBytes && t.group.is_none() && t.minute_avg > 0.0
            })
            .filter_map(|t| Some((t.topic.as_deref()?, t.minute_avg)))
            .collect();
        let leaders = leaders(s);
        for l in &s.logs {
            let n = growth(&mut last.latest, l.log.clone(), l.latest);
            let (topic, broker) = topic_and_broker(&l.log, &leaders);
            if !matches!(l.log, LogRef::Ledger { .. }) {
                match produced.topics.get_mut(topic) {
                    Some(sum) => *sum += n,
                    None => {
                        produced.topics.insert(topic.to_string(), n);
                    }
                }
            }
            if n == 0 {
                continue;
            }
            self.topic_produce.add(topic, n, 1);
            if let Some(avg) = avg_size.get(topic) {
                self.topic_produce_bytes
                    .add(topic, (n as f64 * avg).round() as u64, n);
            }
            if let Some(b) = broker {
                self.broker_produce.add(b, n, 1);
            }
            self.cluster_produce.add(&s.cluster, n, 1);
        }
        for g in &s.groups {
            for p in &g.positions {
                let Some(c) = p.committed else { continue };
                let n = growth(
                    &mut last.committed,
                    (g.group.name.clone(), p.log.clone()),
                    c,
                );
                if n == 0 {
                    continue;
                }
                let (topic, broker) = topic_and_broker(&p.log, &leaders);
                self.group_consume
                    .add(&format!("{topic}@{}", g.group.name), n, 1);
                if let Some(b) = broker {
                    self.broker_consume.add(b, n, 1);
                }
                self.cluster_consume.add(&s.cluster, n, 1);
            }
        }
        produced
    }

    /// Samples every window that is due (call every few seconds; the minute window samples every 10 s).
    pub fn tick(&self, now_ms: u64) {
        for set in self.sets() {
            set.tick(now_ms);
        }
    }

    fn sets(&self) -> [&StatsSet; 7] {
        [
            &self.topic_produce,
            &self.topic_produce_bytes,
            &self.group_consume,
            &self.broker_produce,
            &self.broker_consume,
            &self.cluster_produce,
            &self.cluster_consume,
        ]
    }

    /// Every window of every key, and the top-10 ranking.
    pub fn report(&self) -> TrafficReport {
        let all = |set: &StatsSet| {
            let mut m = BTreeMap::new();
            set.for_each(|k, v| {
                m.insert(k.to_string(), *v);
            });
            m
        };
        TrafficReport {
            topic_produce: all(&self.topic_produce),
            topic_produce_bytes: all(&self.topic_produce_bytes),
            group_consume: all(&self.group_consume),
            broker_produce: all(&self.broker_produce),
            broker_consume: all(&self.broker_consume),
            cluster_produce: all(&self.cluster_produce),
            cluster_consume: all(&self.cluster_consume),
            ranking: self.ranking(10),
        }
    }

    /// The `n` topics that produced the most messages in the last 10-minute step of the hour window.
    pub fn ranking(&self, n: usize) -> Vec<RankedTopic> {
        let mut rows = Vec::new();
        self.topic_produce.for_each(|topic, _| {
            let step = |set: &StatsSet| {
                set.last_step(topic, Window::Hour)
                    .map_or(0, |w: WindowStats| w.sum)
            };
            let messages = step(&self.topic_produce);
            if messages > 0 {
                rows.push(RankedTopic {
                    topic: topic.to_string(),
                    messages,
                    bytes: step(&self.topic_produce_bytes),
                });
            }
        });
        rows.sort_by(|a, b| {
            b.messages
                .cmp(&a.messages)
                .then_with(|| a.topic.cmp(&b.topic))
        });
        rows.truncate(n);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{
        GroupPosition, GroupRef, GroupStatus, LogStatus, NodeRef, NodeRole, TrafficSample,
    };

    fn snap(offsets: &[(&str, &str, i64)], committed: i64, avg: f64) -> ClusterSnapshot {
        let log = |t: &str, b: &str| LogRef::Queue {
            topic: t.into(),
            broker: b.into(),
            queue_id: 0,
        };
        ClusterSnapshot {
            cluster: "c".into(),
            logs: offsets
                .iter()
                .map(|(t, b, n)| LogStatus {
                    log: log(t, b),
                    earliest: 0,
                    latest: *n,
                })
                .collect(),
            groups: vec![GroupStatus {
                group: GroupRef::new("g"),
                positions: vec![GroupPosition {
                    log: log("a", "broker-a"),
                    earliest: 0,
                    latest: 0,
                    committed: Some(committed),
                    oldest_unconsumed_age_ms: None,
                    age_source: None,
                }],
                ..Default::default()
            }],
            traffic: vec![TrafficSample {
                metric: TrafficMetric::ProduceBytes,
                topic: Some("a".into()),
                group: None,
                node: NodeRef::new(NodeRole::Broker, "broker-a:0"),
                last_minute: 0,
                minute_avg: avg,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn offset_growth_fills_topic_broker_cluster_and_group_windows() {
        let t = Traffic::new();
        let first = t.feed(&snap(
            &[("a", "broker-a", 100), ("b", "broker-b", 10)],
            40,
            200.0,
        ));
        assert_eq!(first.previous_ms, None);
        assert_eq!(first.topics.values().sum::<u64>(), 0, "a baseline");
        t.tick(0);
        let second = t.feed(&snap(
            &[("a", "broker-a", 160), ("b", "broker-b", 15)],
            90,
            200.0,
        ));
        assert_eq!(
            second.topics,
            BTreeMap::from([("a".to_string(), 60), ("b".to_string(), 5)]),
            "what this look added, per topic"
        );
        t.tick(10_000);
        let minute = |set: &StatsSet, k: &str| set.window(k, Window::Minute).map(|w| w.sum);
        assert_eq!(
            minute(&t.topic_produce, "a"),
            Some(60),
            "the first look is a baseline, not traffic"
        );
        assert_eq!(minute(&t.topic_produce_bytes, "a"), Some(12_000));
        assert_eq!(minute(&t.broker_produce, "broker-b"), Some(5));
        assert_eq!(minute(&t.cluster_produce, "c"), Some(65));
        assert_eq!(minute(&t.group_consume, "a@g"), Some(50));
        assert_eq!(minute(&t.cluster_consume, "c"), Some(50));
    }

    #[test]
    fn ranking_orders_topics_by_their_last_ten_minutes() {
        let t = Traffic::new();
        t.feed(&snap(&[("a", "x", 0), ("b", "x", 0)], 0, 0.0));
        t.tick(0);
        t.feed(&snap(&[("a", "x", 1_000), ("b", "x", 10)], 0, 0.0));
        t.tick(600_000);
        t.feed(&snap(&[("a", "x", 1_005), ("b", "x", 510)], 0, 0.0));
        t.tick(1_200_000);
        let r = t.ranking(10);
        let got: Vec<(&str, u64)> = r.iter().map(|r| (r.topic.as_str(), r.messages)).collect();
        assert_eq!(got, vec![("b", 500), ("a", 5)]);
        assert_eq!(t.ranking(1).len(), 1);
    }

    #[test]
    fn a_kafka_partition_counts_for_its_leader() {
        let part = |p: i32| LogRef::Partition {
            topic: "k".into(),
            partition: p,
        };
        let at = |latest: [i64; 2], leaders: [&str; 2]| ClusterSnapshot {
            cluster: "kc".into(),
            logs: (0..2)
                .map(|i| LogStatus {
                    log: part(i),
                    earliest: 0,
                    latest: latest[i as usize],
                })
                .collect(),
            partitions: (0..2)
                .map(|i| mqwatch_model::PartitionStatus {
                    log: part(i),
                    leader: Some(leaders[i as usize].into()),
                    leader_epoch: None,
                    replicas: vec![],
                    isr: vec![],
                    offline_replicas: vec![],
                    min_insync_replicas: None,
                    error: None,
                })
                .collect(),
            ..Default::default()
        };
        let t = Traffic::new();
        t.feed(&at([0, 0], ["1", "2"]));
        t.feed(&at([7, 3], ["1", "2"]));
        t.feed(&at([9, 3], ["2", "2"]));
        t.tick(0);
        let minute = |set: &StatsSet, k: &str| set.window(k, Window::Minute).map(|w| w.sum);
        assert_eq!(minute(&t.broker_produce, "1"), Some(7));
        assert_eq!(
            minute(&t.broker_produce, "2"),
            Some(5),
            "3, then 2 after the leader moved"
        );
        assert_eq!(minute(&t.topic_produce, "k"), Some(12));
        assert_eq!(minute(&t.cluster_produce, "kc"), Some(12));
    }

    #[test]
    fn an_offset_that_goes_back_is_a_reset_not_traffic() {
        let t = Traffic::new();
        t.feed(&snap(&[("a", "x", 100)], 0, 0.0));
        t.feed(&snap(&[("a", "x", 3)], 0, 0.0));
        t.feed(&snap(&[("a", "x", 8)], 0, 0.0));
        t.tick(0);
        assert_eq!(
            t.topic_produce.window("a", Window::Minute).map(|w| w.sum),
            Some(5)
        );
    }
}
