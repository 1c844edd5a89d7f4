//! Names of the things in a watched estate: engines, nodes, logs (partition / queue / ledger), groups, and the
//! [`Subject`] a finding is about. Display forms are stable: alarms are keyed by them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The kind of message-queue system a cluster runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Apache RocketMQ (Java or Rust servers): name servers and brokers.
    Rocketmq,
    /// Apache Kafka or a Kafka-protocol server: brokers and controllers.
    Kafka,
    /// Apache BookKeeper: bookies with metadata in ZooKeeper.
    Bookkeeper,
}

impl Engine {
    /// Every engine, in a fixed order.
    pub const ALL: [Engine; 3] = [Engine::Rocketmq, Engine::Kafka, Engine::Bookkeeper];

    /// The config and wire spelling: `rocketmq`, `kafka`, `bookkeeper`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Rocketmq => "rocketmq",
            Engine::Kafka => "kafka",
            Engine::Bookkeeper => "bookkeeper",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine {0:?}: expected one of rocketmq, kafka, bookkeeper")]
pub struct UnknownEngine(pub String);

impl FromStr for Engine {
    type Err = UnknownEngine;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Engine::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownEngine(s.to_string()))
    }
}

/// What a node does in its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeRole {
    /// A RocketMQ name server.
    NameServer,
    /// A RocketMQ or Kafka broker (a RocketMQ slave is a broker with a non-zero broker id).
    Broker,
    /// A Kafka KRaft controller.
    Controller,
    /// A BookKeeper bookie.
    Bookie,
    /// A machine under any of the above, watched through its node_exporter.
    Host,
}

impl NodeRole {
    /// The snake_case spelling used in keys and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeRole::NameServer => "name_server",
            NodeRole::Broker => "broker",
            NodeRole::Controller => "controller",
            NodeRole::Bookie => "bookie",
            NodeRole::Host => "host",
        }
    }
}

/// One node of a cluster: its role and its name (RocketMQ broker name and id, Kafka broker id, bookie id,
/// host address), with the address it was reached at when known. Identity (equality, order, hash) is role and
/// name: a node that moves to another address is the same node.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeRef {
    /// What the node does.
    pub role: NodeRole,
    /// The node's stable name within its cluster and role (e.g. `broker-a:0`, `1`, `10.0.0.3:3181`).
    pub name: String,
    /// The address mqwatch talks to, when it differs from or is not part of the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
}

impl NodeRef {
    /// A node with a role and a name, address unknown.
    pub fn new(role: NodeRole, name: impl Into<String>) -> Self {
        Self {
            role,
            name: name.into(),
            addr: None,
        }
    }

    /// The same node with the address it is reached at.
    pub fn with_addr(mut self, addr: impl Into<String>) -> Self {
        self.addr = Some(addr.into());
        self
    }
}

impl PartialEq for NodeRef {
    fn eq(&self, other: &Self) -> bool {
        (self.role, &self.name) == (other.role, &other.name)
    }
}

impl Eq for NodeRef {}

impl std::hash::Hash for NodeRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.role, &self.name).hash(state);
    }
}

impl PartialOrd for NodeRef {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NodeRef {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.role, &self.name).cmp(&(other.role, &other.name))
    }
}

impl fmt::Display for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.role.as_str(), self.name)
    }
}

/// A replicated log: Kafka's partition, RocketMQ's queue, BookKeeper's ledger.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LogRef {
    /// A Kafka topic partition.
    Partition {
        /// Topic name.
        topic: String,
        /// Partition index.
        partition: i32,
    },
    /// A RocketMQ message queue: a topic's queue on one broker.
    Queue {
        /// Topic name.
        topic: String,
        /// Broker name (the master/slave set, not one process).
        broker: String,
        /// Queue id on that broker.
        queue_id: i32,
    },
    /// A BookKeeper ledger.
    Ledger {
        /// Ledger id.
        id: u64,
    },
}

impl fmt::Display for LogRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogRef::Partition { topic, partition } => write!(f, "partition {topic}-{partition}"),
            LogRef::Queue {
                topic,
                broker,
                queue_id,
            } => write!(f, "queue {topic}@{broker}#{queue_id}"),
            LogRef::Ledger { id } => write!(f, "ledger {id}"),
        }
    }
}

/// A consumer group (Kafka) or consumer group / subscription group (RocketMQ).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GroupRef {
    /// Group name.
    pub name: String,
}

impl GroupRef {
    /// A group by name.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

/// What a finding or a statistic is about. Its display form is part of the alarm key, so it is stable.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Subject {
    /// The cluster as a whole.
    Cluster,
    /// One node.
    Node {
        /// The node.
        node: NodeRef,
    },
    /// A topic.
    Topic {
        /// Topic name.
        topic: String,
    },
    /// A consumer group, optionally narrowed to one topic it consumes.
    Group {
        /// The group.
        group: GroupRef,
        /// The topic, when the finding concerns only one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
    },
    /// One replicated log (partition, queue or ledger).
    Log {
        /// The log.
        log: LogRef,
    },
    /// A client process (producer or consumer instance) by its client id.
    Client {
        /// Client id as the engine reports it.
        client_id: String,
    },
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Cluster => f.write_str("cluster"),
            Subject::Node { node } => write!(f, "{node}"),
            Subject::Topic { topic } => write!(f, "topic {topic}"),
            Subject::Group { group, topic: None } => write!(f, "group {}", group.name),
            Subject::Group {
                group,
                topic: Some(t),
            } => write!(f, "group {} topic {t}", group.name),
            Subject::Log { log } => write!(f, "{log}"),
            Subject::Client { client_id } => write!(f, "client {client_id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_parses_its_own_spelling_and_names_bad_input() {
        for e in Engine::ALL {
            assert_eq!(e.as_str().parse::<Engine>(), Ok(e));
            assert_eq!(serde_json::to_string(&e).unwrap(), format!("\"{e}\""));
        }
        let err = "pulsar".parse::<Engine>().unwrap_err();
        assert!(err.to_string().contains("\"pulsar\""), "{err}");
    }

    #[test]
    fn subjects_have_stable_display_forms() {
        let q = LogRef::Queue {
            topic: "orders".into(),
            broker: "broker-a".into(),
            queue_id: 3,
        };
        assert_eq!(
            Subject::Log { log: q }.to_string(),
            "queue orders@broker-a#3"
        );
        let n = NodeRef::new(NodeRole::Broker, "broker-a:0").with_addr("127.0.0.1:10911");
        assert_eq!(Subject::Node { node: n }.to_string(), "broker broker-a:0");
        let g = Subject::Group {
            group: GroupRef::new("g1"),
            topic: Some("t".into()),
        };
        assert_eq!(g.to_string(), "group g1 topic t");
        assert_eq!(LogRef::Ledger { id: 7 }.to_string(), "ledger 7");
    }

    #[test]
    fn a_node_is_the_same_node_at_another_address() {
        let a = NodeRef::new(NodeRole::Broker, "broker-a:0").with_addr("127.0.0.1:1");
        let b = NodeRef::new(NodeRole::Broker, "broker-a:0").with_addr("127.0.0.1:2");
        assert_eq!(a, b);
        assert_ne!(a, NodeRef::new(NodeRole::Bookie, "broker-a:0"));
    }

    #[test]
    fn subject_json_is_tagged() {
        let s = Subject::Log {
            log: LogRef::Partition {
                topic: "t".into(),
                partition: 2,
            },
        };
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["type"], "log");
        assert_eq!(v["log"]["type"], "partition");
        let back: Subject = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
    }
}
