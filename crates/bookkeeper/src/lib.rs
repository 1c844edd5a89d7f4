//! mqwatch-bookkeeper: what mqwatch needs to read a BookKeeper cluster's state.
//!
//! What it owns so far: the byte codecs, all pure — ledger metadata as stored in ZooKeeper ([`metadata`], format
//! versions 2 and 3), the znode layout of ledgers and under-replication marks ([`paths`]), the marks' contents
//! ([`underreplication`]) and the bookie's list of a ledger's entries ([`availability`]). The ZooKeeper reader,
//! the bookie client and the collector will build on these.
//!
//! What it is not: a BookKeeper client for writing ledgers, and it never computes alarms.

pub mod availability;
pub mod bookie;
pub mod collector;
pub mod metadata;
pub mod paths;
pub mod textformat;
pub mod underreplication;
pub mod zk;
