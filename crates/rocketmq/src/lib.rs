//! mqwatch-rocketmq: everything mqwatch needs to speak to RocketMQ name servers and brokers.
//!
//! What it owns: the remoting codec ([`codec`]: frames, JSON and ROCKETMQ binary headers, and the lenient JSON
//! that RocketMQ bodies are written in, with fastjson's bare object keys). The admin client and the collector
//! build on it.
//!
//! What it is not: a RocketMQ client for producing or consuming (tests use `rocketmq-client-rust` for that), and
//! it never computes alarms.

pub mod body;
pub mod client;
pub mod codec;
pub mod collector;
pub mod message;
