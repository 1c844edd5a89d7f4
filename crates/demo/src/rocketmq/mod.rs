//! The simulated RocketMQ cluster `demo-rocketmq`: two name servers, brokers `broker-a` and `broker-b` (a master
//! and a slave each), four topics with queues on both masters, four consumer groups. [`RocketmqSim::snapshot`]
//! fills a [`ClusterSnapshot`] the way `mqwatch_rocketmq::collector::collect` does: name servers (answered,
//! no registration), brokers (registration, replica of, commit-log bytes), user-topic queues, groups with
//! positions (age from the broker, `delayTime`, only on queues behind), online clients with their running info,
//! and the brokers' minute counters (TOPIC_PUT_*, GROUP_GET_*, BROKER_*).
//!
//! Faults: `billing` stops consuming (its consumers go offline: a backlog), and the second client of `notify`
//! keeps its cached messages and consumes nothing (a blocked consumer).

mod traffic;

use crate::flow::{Consumer, TopicFlow};
use crate::noise;
use crate::schedule::{FaultKind, Schedule};
use mqwatch_model::{
    AgeSource, ClientQueue, ClientStatus, ClusterSnapshot, Engine, GroupPosition, GroupRef,
    GroupStatus, LogRef, LogStatus, MessageModel, NodeRef, NodeRole, NodeStatus, ObservedNodeState,
};
use std::collections::BTreeMap;

const NAME_SERVERS: [&str; 2] = ["192.0.2.1:9876", "192.0.2.2:9876"];
/// Broker name, master address, slave address.
const BROKERS: [(&str, &str, &str); 2] = [
    ("broker-a", "192.0.2.11:10911", "192.0.2.12:10911"),
    ("broker-b", "192.0.2.13:10911", "192.0.2.14:10911"),
];
/// The masters as the probe names them (`broker-a:0`), with their addresses.
pub(crate) fn masters() -> Vec<NodeRef> {
    BROKERS
        .iter()
        .map(|(name, addr, _)| NodeRef::new(NodeRole::Broker, format!("{name}:0")).with_addr(*addr))
        .collect()
}

/// Topic, peak messages per second, message bytes, queues per master.
const TOPICS: [(&str, f64, f64, i32); 4] = [
    ("orders", 220.0, 700.0, 4),
    ("payments", 45.0, 400.0, 2),
    ("notifications", 70.0, 300.0, 2),
    ("audit-log", 15.0, 1_200.0, 1),
];
/// Group, topic index, clients.
const GROUPS: [(&str, usize, usize); 4] = [
    ("billing", 0, 2),
    ("analytics", 0, 1),
    ("payments-svc", 1, 2),
    ("notify", 2, 2),
];
/// The group that stops consuming, and the one with a blocked client (its second).
const BACKLOG_GROUP: &str = "billing";
const BLOCKED_GROUP: &str = "notify";
/// Messages a RocketMQ push consumer caches per queue at most (pullThresholdForQueue).
const CACHE_LIMIT: i64 = 1_000;

struct Topic {
    flow: TopicFlow,
    /// Per log: broker name and queue id.
    queues: Vec<(&'static str, i32)>,
}

struct Group {
    consumer: Consumer,
    /// Per client: id, address, logs it holds.
    clients: Vec<(String, String, Vec<usize>)>,
    retries: f64,
}

/// The simulated RocketMQ cluster.
pub struct RocketmqSim {
    cluster: String,
    seed: u64,
    schedule: Schedule,
    now_ms: u64,
    topics: Vec<Topic>,
    groups: Vec<Group>,
}

impl RocketmqSim {
    /// The cluster, named `cluster`, as it is at `start_ms`.
    pub fn new(cluster: &str, seed: u64, schedule: Schedule, start_ms: u64) -> Self {
        let topics: Vec<Topic> = TOPICS
            .iter()
            .map(|&(name, rate, bytes, per_master)| {
                let queues: Vec<(&'static str, i32)> = BROKERS
                    .iter()
                    .flat_map(|b| (0..per_master).map(move |q| (b.0, q)))
                    .collect();
                Topic {
                    flow: TopicFlow::new(seed, name, rate, bytes, queues.len()),
                    queues,
                }
            })
            .collect();
        let groups = GROUPS
            .iter()
            .enumerate()
            .map(|(gi, &(name, topic, clients))| {
                let logs = topics[topic].queues.len();
                let clients = (0..clients)
                    .map(|c| {
                        let host = 51 + gi * 4 + c;
                        (
                            format!("192.0.2.{host}@{}", 4_000 + gi * 100 + c),
                            format!("192.0.2.{host}:{}", 50_000 + gi * 10 + c),
                            (0..logs).filter(|l| l % clients == c).collect(),
                        )
                    })
                    .collect();
                Group {
                    consumer: Consumer::new(name, topic, logs, 0.5 + gi as f64 * 0.4),
                    clients,
                    retries: 20.0 * (gi as f64 + 1.0),
                }
            })
            .collect();
        RocketmqSim {
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
            self.step(self.now_ms, dt);
        }
    }

    fn step(&mut self, t: u64, dt: u64) {
        let seed = self.seed;
        for topic in &mut self.topics {
            topic.flow.step(seed, t, dt);
        }
        let backlog = self.schedule.active(FaultKind::Backlog, t).is_some();
        let blocked = self
            .schedule
            .active(FaultKind::BlockedConsumer, t)
            .is_some();
        for g in &mut self.groups {
            let flow = &self.topics[g.consumer.topic].flow;
            let rate = flow.rate(seed, t);
            let name = g.consumer.group.as_str();
            let stopped_all = backlog && name == BACKLOG_GROUP;
            let held = match g.clients.get(1) {
                Some(c) if blocked && name == BLOCKED_GROUP => c.2.clone(),
                _ => Vec::new(),
            };
            g.consumer.step(seed, flow, rate, t, dt, |i| {
                stopped_all || held.contains(&i)
            });
            g.retries += rate * dt as f64 / 1000.0 * 2e-5;
        }
    }

    /// One collection cycle's snapshot at `now_ms` (the cluster is first run forward to then).
    pub fn snapshot(&mut self, now_ms: u64) -> ClusterSnapshot {
        self.advance(now_ms);
        let now = self.now_ms;
        let mut nodes: Vec<NodeStatus> = NAME_SERVERS
            .iter()
            .map(|ns| {
                node(
                    NodeRef::new(NodeRole::NameServer, *ns).with_addr(*ns),
                    None,
                    true,
                    now,
                )
            })
            .collect();
        for (name, master, slave) in BROKERS {
            let bytes = self.commit_log_bytes(name);
            for (id, addr) in [(0, master), (1, slave)] {
                let mut n = node(
                    NodeRef::new(NodeRole::Broker, format!("{name}:{id}")).with_addr(addr),
                    Some(ObservedNodeState::Active),
                    false,
                    now,
                );
                n.replica_of = (id != 0)
                    .then(|| NodeRef::new(NodeRole::Broker, format!("{name}:0")).with_addr(""));
                // The slave trails its master by a moment of writes.
                let behind = (noise::unit(self.seed, now / 1000, id) * 64_000.0) as i64;
                n.store_max_offset = Some(if id == 0 { bytes } else { bytes - behind });
                nodes.push(n);
            }
        }
        let mut logs = Vec::new();
        for t in &self.topics {
            for (i, (broker, q)) in t.queues.iter().enumerate() {
                logs.push(LogStatus {
                    log: queue(&t.flow.name, broker, *q),
                    earliest: t.flow.earliest(i),
                    latest: t.flow.latest(i),
                });
            }
        }
        logs.sort_by(|a, b| a.log.cmp(&b.log));
        let groups = self.groups.iter().map(|g| self.group(g, now)).collect();
        ClusterSnapshot {
            cluster: self.cluster.clone(),
            engine: Some(Engine::Rocketmq),
            taken_at_ms: now,
            cycle_ms: 40 + (noise::unit(self.seed, 7, now / 1000) * 60.0) as u64,
            nodes,
            logs,
            groups,
            traffic: self.traffic(now),
            ..Default::default()
        }
    }

    fn commit_log_bytes(&self, broker: &str) -> i64 {
        let mut bytes = 0.0;
        for t in &self.topics {
            for (i, (b, _)) in t.queues.iter().enumerate() {
                if *b == broker {
                    bytes += t.flow.latest(i) as f64 * t.flow.msg_bytes;
                }
            }
        }
        bytes as i64
    }

    fn group(&self, g: &Group, now: u64) -> GroupStatus {
        let topic = &self.topics[g.consumer.topic];
        let flow = &topic.flow;
        let offline = g.consumer.group == BACKLOG_GROUP
            && self.schedule.active(FaultKind::Backlog, now).is_some();
        let mut positions = Vec::new();
        for (i, (broker, q)) in topic.queues.iter().enumerate() {
            let (latest, committed) = (flow.latest(i), g.consumer.committed(flow, i));
            let behind = committed < latest;
            positions.push(GroupPosition {
                log: queue(&flow.name, broker, *q),
                earliest: flow.earliest(i),
                latest,
                committed: Some(committed),
                oldest_unconsumed_age_ms: behind
                    .then(|| now.saturating_sub(flow.stored_at(i, g.consumer.consumed[i], now))),
                age_source: behind.then_some(AgeSource::Broker),
            });
        }
        let clients = if offline {
            Vec::new()
        } else {
            g.clients
                .iter()
                .map(|(id, addr, held)| ClientStatus {
                    client_id: id.clone(),
                    addr: addr.clone(),
                    subscriptions: BTreeMap::from([(flow.name.clone(), "*".to_string())]),
                    queues: held
                        .iter()
                        .map(|&i| {
                            let (broker, q) = topic.queues[i];
                            let lag = flow.latest(i) - g.consumer.committed(flow, i);
                            ClientQueue {
                                log: queue(&flow.name, broker, q),
                                cached_messages: lag.clamp(0, CACHE_LIMIT),
                                last_consume_ms: g.consumer.last_consume_ms[i],
                                last_pull_ms: now
                                    - (noise::unit(self.seed, i as u64, now) * 900.0) as u64,
                            }
                        })
                        .collect(),
                    error: None,
                })
                .collect()
        };
        GroupStatus {
            group: GroupRef::new(&g.consumer.group),
            model: MessageModel::Clustering,
            clients,
            positions,
            retry_total: Some(g.retries as i64),
            dead_letter_total: None,
            send_back_last_minute: None,
        }
    }

    /// The topics, for latency series.
    pub fn topics(&self) -> Vec<String> {
        self.topics.iter().map(|t| t.flow.name.clone()).collect()
    }
}

fn queue(topic: &str, broker: &str, queue_id: i32) -> LogRef {
    LogRef::Queue {
        topic: topic.to_string(),
        broker: broker.to_string(),
        queue_id,
    }
}

/// A node that answered this cycle.
pub(crate) fn node(
    node: NodeRef,
    registration: Option<ObservedNodeState>,
    expected: bool,
    now: u64,
) -> NodeStatus {
    NodeStatus {
        node,
        registration,
        expected,
        answered: true,
        error: None,
        last_answer_ms: Some(now),
        replica_of: None,
        store_max_offset: None,
    }
}
