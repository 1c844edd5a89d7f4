//! Observations: the timestamped facts a collector emits after reading a cluster. Collectors never judge; checks
//! read state built from these. Engine issues add facts here as they need them.

use crate::topology::{Engine, GroupRef, LogRef, NodeRef, Subject};
use serde::{Deserialize, Serialize};

/// A node's state as its cluster reports it (the lifecycle tracker derives "startup" from these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedNodeState {
    /// Registered but not serving: Kafka fenced, RocketMQ registered but not `brokerActive`.
    Fenced,
    /// Registered and serving.
    Active,
    /// Serving but draining: Kafka controlled shutdown.
    ControlledShutdown,
    /// Serving reads only: a BookKeeper bookie under `/available/readonly`.
    ReadOnly,
    /// Known (RocketMQ seen before, a bookie with a cookie) but not registered now.
    Unregistered,
}

/// One fact a collector read, about one cluster, at one time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The cluster's configured name.
    pub cluster: String,
    /// The cluster's engine.
    pub engine: Engine,
    /// When the fact was read (ms since the Unix epoch).
    pub at_ms: u64,
    /// The fact.
    pub fact: Fact,
}

/// The facts collectors emit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "fact", rename_all = "snake_case")]
pub enum Fact {
    /// A node's registration state as the cluster reports it.
    NodeState {
        /// The node.
        node: NodeRef,
        /// Its state.
        state: ObservedNodeState,
    },
    /// A node answered a request (a heartbeat as far as mqwatch can tell).
    NodeAnswered {
        /// The node.
        node: NodeRef,
        /// Round-trip time of the answer in microseconds.
        rtt_us: u64,
    },
    /// A node did not answer or answered badly.
    NodeUnreachable {
        /// The node.
        node: NodeRef,
        /// What went wrong, naming the request.
        error: String,
    },
    /// A counter grew: `value` more of `metric` over `times` events (e.g. produced bytes over messages).
    Counter {
        /// Metric name, e.g. `produce_messages`, `produce_bytes`.
        metric: String,
        /// What it counts for.
        subject: Subject,
        /// Amount added.
        value: u64,
        /// Events added.
        times: u64,
    },
    /// A log's retained range.
    LogOffsets {
        /// The log.
        log: LogRef,
        /// First retained offset.
        earliest: i64,
        /// Next offset to be written (high watermark / max offset).
        latest: i64,
    },
    /// A group's committed position on a log; `None` when it never committed there.
    CommittedOffset {
        /// The group.
        group: GroupRef,
        /// The log.
        log: LogRef,
        /// Committed offset, if any.
        committed: Option<i64>,
    },
    /// A request to the cluster failed in a way that is the cluster's doing (bad frame, error code, timeout).
    CollectorError {
        /// The node asked, when one was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeRef>,
        /// The request, e.g. `GET_CONSUME_STATS (208)`.
        request: String,
        /// The error, with the node's own code and remark when it sent one.
        error: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::NodeRole;

    #[test]
    fn observations_round_trip_through_json() {
        let o = Observation {
            cluster: "rmq".into(),
            engine: Engine::Rocketmq,
            at_ms: 42,
            fact: Fact::CommittedOffset {
                group: GroupRef::new("g"),
                log: LogRef::Queue {
                    topic: "t".into(),
                    broker: "broker-a".into(),
                    queue_id: 0,
                },
                committed: None,
            },
        };
        let json = serde_json::to_value(&o).unwrap();
        assert_eq!(json["fact"]["fact"], "committed_offset");
        assert!(json["fact"]["committed"].is_null());
        assert_eq!(serde_json::from_value::<Observation>(json).unwrap(), o);

        let e = Fact::CollectorError {
            node: Some(NodeRef::new(NodeRole::Broker, "broker-b:0")),
            request: "GET_CONSUME_STATS (208)".into(),
            error: "code 206: group not found".into(),
        };
        let back: Fact = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
}
