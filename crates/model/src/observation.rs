//! What a collector observes of a node's registration. A collector's observations of one cycle travel together as
//! a [`crate::ClusterSnapshot`] (timestamped, complete, engine-neutral); collectors never judge, checks read it.

use serde::{Deserialize, Serialize};

/// A node's state as its cluster reports it (the lifecycle tracker derives "startup" from these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedNodeState {
    /// Registered but not serving: Kafka fenced, RocketMQ registered but not ready (`brokerReady` false) or silent.
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
