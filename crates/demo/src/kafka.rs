//! The simulated Kafka cluster `demo-kafka`: brokers 1, 2 and 3 on three racks, three topics of replication
//! factor 3 with `min.insync.replicas` 2, three consumer groups. [`KafkaSim::snapshot`] fills a
//! [`ClusterSnapshot`] the way `mqwatch_kafka::collector::collect` does: brokers from Metadata and DescribeCluster
//! (a fenced broker is registered but not in Metadata), a known broker gone from both as unregistered and
//! silent, partitions with leader, epoch, replicas and ISR, offsets, groups with committed offsets and time lag
//! (the timestamp of the record at the committed offset, or idle), racks of the registered brokers, and no
//! traffic counters (the Kafka collector reads none; traffic windows come from offsets).
//!
//! Faults: broker 3 goes down (its partitions' leaders move, ISRs shrink), comes back fenced and stays fenced
//! for long (a stuck startup), then unfences and rejoins every ISR.

use crate::flow::{Consumer, TopicFlow};
use crate::noise;
use crate::rocketmq::node;
use crate::schedule::{FaultKind, Schedule};
use mqwatch_model::{
    AgeSource, ClientStatus, ClusterSnapshot, Engine, GroupPosition, GroupRef, GroupStatus, LogRef,
    LogStatus, MessageModel, NodeRef, NodeRole, NodeStatus, ObservedNodeState, PartitionStatus,
};
use std::collections::BTreeMap;

/// Broker id, address, rack.
const BROKERS: [(i32, &str, &str); 3] = [
    (1, "192.0.2.21:9092", "rack-1"),
    (2, "192.0.2.22:9092", "rack-2"),
    (3, "192.0.2.23:9092", "rack-3"),
];
/// The brokers by node id, with their addresses.
pub(crate) fn brokers() -> Vec<NodeRef> {
    BROKERS
        .iter()
        .map(|(id, addr, _)| NodeRef::new(NodeRole::Broker, id.to_string()).with_addr(*addr))
        .collect()
}

/// The broker that goes down and then starts slowly.
const FLAKY: i32 = 3;
/// Topic, peak messages per second, message bytes, partitions.
const TOPICS: [(&str, f64, f64, usize); 3] = [
    ("clicks", 420.0, 350.0, 6),
    ("page-views", 260.0, 500.0, 6),
    ("checkout", 30.0, 900.0, 3),
];
/// Group, topic index, members.
const GROUPS: [(&str, usize, usize); 3] = [
    ("clickstream-etl", 0, 2),
    ("recommender", 1, 1),
    ("checkout-svc", 2, 2),
];
const MIN_INSYNC_REPLICAS: i32 = 2;

/// How broker 3 is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flaky {
    Up,
    Down,
    Fenced,
}

/// The simulated Kafka cluster.
pub struct KafkaSim {
    cluster: String,
    seed: u64,
    schedule: Schedule,
    now_ms: u64,
    topics: Vec<TopicFlow>,
    groups: Vec<Consumer>,
}

impl KafkaSim {
    /// The cluster, named `cluster`, as it is at `start_ms`.
    pub fn new(cluster: &str, seed: u64, schedule: Schedule, start_ms: u64) -> Self {
        let topics: Vec<TopicFlow> = TOPICS
            .iter()
            .map(|&(name, rate, bytes, n)| TopicFlow::new(seed, name, rate, bytes, n))
            .collect();
        let groups = GROUPS
            .iter()
            .enumerate()
            .map(|(gi, &(name, topic, _))| {
                Consumer::new(name, topic, topics[topic].shares.len(), 2.0 + gi as f64)
            })
            .collect();
        KafkaSim {
            cluster: cluster.to_string(),
            seed,
            schedule,
            now_ms: start_ms,
            topics,
            groups,
        }
    }

    /// Runs the cluster forward to `to_ms` in steps of at most a second.
    pub fn advance(&mut self, to_ms: u64) {
        while self.now_ms < to_ms {
            let dt = (to_ms - self.now_ms).min(crate::STEP_MS);
            self.now_ms += dt;
            let (t, seed) = (self.now_ms, self.seed);
            for flow in &mut self.topics {
                flow.step(seed, t, dt);
            }
            for g in &mut self.groups {
                let flow = &self.topics[g.topic];
                g.step(seed, flow, flow.rate(seed, t), t, dt, |_| false);
            }
        }
    }

    fn flaky(&self, now: u64) -> Flaky {
        if self.schedule.active(FaultKind::BrokerDown, now).is_some() {
            Flaky::Down
        } else if self.schedule.active(FaultKind::StuckStartup, now).is_some() {
            Flaky::Fenced
        } else {
            Flaky::Up
        }
    }

    /// One collection cycle's snapshot at `now_ms` (the cluster is first run forward to then).
    pub fn snapshot(&mut self, now_ms: u64) -> ClusterSnapshot {
        self.advance(now_ms);
        let now = self.now_ms;
        let flaky = self.flaky(now);
        let nodes: Vec<NodeStatus> = BROKERS
            .iter()
            .map(|&(id, addr, _)| {
                let n = NodeRef::new(NodeRole::Broker, id.to_string()).with_addr(addr);
                match (id == FLAKY, flaky) {
                    (true, Flaky::Down) => NodeStatus {
                        answered: false,
                        error: Some(format!("ApiVersions (18) to {addr}: connection refused")),
                        last_answer_ms: None,
                        ..node(n, Some(ObservedNodeState::Unregistered), false, now)
                    },
                    (true, Flaky::Fenced) => node(n, Some(ObservedNodeState::Fenced), false, now),
                    _ => node(n, Some(ObservedNodeState::Active), false, now),
                }
            })
            .collect();
        let in_sync = |b: i32| b != FLAKY || flaky == Flaky::Up;
        // Leadership moves off broker 3 once per outage and back when it rejoins.
        let outages = self
            .schedule
            .last(FaultKind::BrokerDown, now)
            .map_or(0, |o| o.index as i32 + 1);
        let mut logs = Vec::new();
        let mut partitions = Vec::new();
        for flow in &self.topics {
            for p in 0..flow.shares.len() {
                let log = partition(&flow.name, p);
                logs.push(LogStatus {
                    log: log.clone(),
                    earliest: flow.earliest(p),
                    latest: flow.latest(p),
                });
                let replicas: Vec<i32> = (0..3).map(|k| ((p + k) % 3) as i32 + 1).collect();
                let isr: Vec<i32> = replicas.iter().copied().filter(|b| in_sync(*b)).collect();
                let moved = replicas[0] == FLAKY;
                let epoch = if moved {
                    3 + 2 * outages - i32::from(flaky != Flaky::Up)
                } else {
                    3
                };
                partitions.push(PartitionStatus {
                    log,
                    leader: isr.first().map(i32::to_string),
                    leader_epoch: Some(epoch),
                    replicas: replicas.iter().map(i32::to_string).collect(),
                    isr: isr.iter().map(i32::to_string).collect(),
                    offline_replicas: Vec::new(),
                    min_insync_replicas: Some(MIN_INSYNC_REPLICAS),
                    error: None,
                });
            }
        }
        let groups = self
            .groups
            .iter()
            .enumerate()
            .map(|(gi, g)| self.group(gi, g, now))
            .collect();
        let racks: BTreeMap<String, String> = BROKERS
            .iter()
            .filter(|(id, _, _)| *id != FLAKY || flaky != Flaky::Down)
            .map(|(id, _, rack)| (id.to_string(), rack.to_string()))
            .collect();
        ClusterSnapshot {
            cluster: self.cluster.clone(),
            engine: Some(Engine::Kafka),
            taken_at_ms: now,
            cycle_ms: 25 + (noise::unit(self.seed, 11, now / 1000) * 40.0) as u64,
            nodes,
            logs,
            groups,
            partitions,
            racks,
            ..Default::default()
        }
    }

    fn group(&self, gi: usize, g: &Consumer, now: u64) -> GroupStatus {
        let flow = &self.topics[g.topic];
        let positions = (0..flow.shares.len())
            .map(|p| {
                let (latest, committed) = (flow.latest(p), g.committed(flow, p));
                let (age, source) = if committed < latest {
                    let stored = flow.stored_at(p, g.consumed[p], now);
                    (now.saturating_sub(stored), AgeSource::RecordTimestamp)
                } else {
                    (0, AgeSource::Idle)
                };
                GroupPosition {
                    log: partition(&flow.name, p),
                    earliest: flow.earliest(p),
                    latest,
                    committed: Some(committed),
                    oldest_unconsumed_age_ms: Some(age),
                    age_source: Some(source),
                }
            })
            .collect();
        let clients = (0..GROUPS[gi].2)
            .map(|m| ClientStatus {
                client_id: format!("consumer-{}-{}", g.group, m + 1),
                addr: format!("/192.0.2.{}", 71 + gi * 4 + m),
                subscriptions: BTreeMap::from([(flow.name.clone(), String::new())]),
                queues: Vec::new(),
                error: None,
            })
            .collect();
        GroupStatus {
            group: GroupRef::new(&g.group),
            model: MessageModel::Clustering,
            clients,
            positions,
            ..Default::default()
        }
    }

    /// The topics, for latency series.
    pub fn topics(&self) -> Vec<String> {
        self.topics.iter().map(|t| t.name.clone()).collect()
    }
}

fn partition(topic: &str, p: usize) -> LogRef {
    LogRef::Partition {
        topic: topic.to_string(),
        partition: p as i32,
    }
}
