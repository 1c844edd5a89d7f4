//! mqwatch-kafka: everything mqwatch needs to speak to Kafka-protocol brokers (Apache Kafka, tansu, …).
//!
//! What it owns: a client on the `kafka-protocol` crate over tokio ([`client`]: one connection per broker,
//! ApiVersions negotiation per broker and per API, correlation-id matching, timeouts, bounded frames) and the
//! collector ([`collector`]), which reads one cluster per cycle into a [`mqwatch_model::ClusterSnapshot`].
//!
//! What it is not: a producer or consumer library (it produces and commits only so tests can set up a broker),
//! and it never computes alarms: checks read the snapshot. Every response passes [`guard`] before it is decoded.

pub mod client;
pub mod collector;
pub mod guard;

pub use client::{ClientConfig, KafkaClient, KafkaError, Security};
pub use collector::{LagMemory, Target, collect};
