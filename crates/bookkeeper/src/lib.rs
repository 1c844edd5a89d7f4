//! mqwatch-bookkeeper: what mqwatch needs to read a BookKeeper cluster's state.
//!
//! What it owns: the byte codecs, all pure — ledger metadata as stored in ZooKeeper ([`metadata`], format
//! versions 2 and 3), the znode layout of ledgers and under-replication marks ([`paths`]), the marks' contents
//! ([`underreplication`]) and the bookie's list of a ledger's entries ([`availability`]); the ZooKeeper metadata
//! reader ([`zk`]), the bookie protocol-v3 client ([`bookie`]), and the [`collector`] that observes a cluster's
//! registry and ledgers for one audit pass.
//!
//! What it is not: a BookKeeper client for writing ledgers, and it never judges: the ledger audit itself is
//! `mqwatch_checks::ledgers`, put together with this collector by the `mqwatch` binary's audit pass.

pub mod availability;
pub mod bookie;
pub mod collector;
pub mod metadata;
pub mod paths;
pub mod textformat;
pub mod underreplication;
pub mod zk;
