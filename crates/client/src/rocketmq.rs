//! The ready-made hook for `rocketmq-client-rust` 1.0.0 producers (feature `rocketmq`).
//!
//! That client keeps its `SendMessageHook` trait crate-private, so an application cannot implement it; what it
//! does accept from applications is an RPC hook (`DefaultMQProducer::set_rpc_hook`, before `start`), called
//! before every request leaves and after its response arrives. [`StatsRpcHook`] watches the send requests
//! (SEND_MESSAGE 10, SEND_MESSAGE_V2 310, SEND_BATCH_MESSAGE 320), pairs each response with its request by
//! (broker address, opaque) — exact even with many sends in flight — and records the latency and outcome per
//! (topic, broker address) in [`ProducerStats`]:
//! - response SUCCESS (0) or a stored-but-degraded answer (FLUSH_DISK_TIMEOUT 10, SLAVE_NOT_AVAILABLE 11,
//!   FLUSH_SLAVE_TIMEOUT 12, which the client reports as a sent message with that status): sent, latency kept;
//! - SYSTEM_BUSY (2) or SERVICE_NOT_AVAILABLE (14): `broker_busy`; MESSAGE_ILLEGAL (13) or NO_PERMISSION (16):
//!   `rejected`; TOPIC_NOT_EXIST (17): `no_route`; any other code: `other`;
//! - no response within `expire_after` (the broker died, the connection broke): `timeout`, found by a sweep
//!   that runs at most once a second from inside the hook (the client's heartbeats keep calling it).
//!
//! A send that fails before reaching the wire (no connection to the broker at all) never reaches the hook;
//! the application records it from its error path with [`ProducerStats::record`] and
//! [`crate::Outcome::Failed`] (as `crates/e2e`'s client program does).
//!
//! Cost: with any RPC hook set, the client clones each request for its after-hook (a client cost, body
//! included); the hook itself adds two lock-free map operations and a histogram record per send.

use crate::stats::{ErrorKind, Outcome, ProducerStats, Slot};
use rocketmq_protocol::protocol::remoting_command::RemotingCommand;
use rocketmq_transport::api::RPCHook;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE.
const SEND_CODES: [i32; 3] = [10, 310, 320];

/// The RPC hook that feeds [`ProducerStats`] from a RocketMQ producer's send requests.
pub struct StatsRpcHook {
    stats: Arc<ProducerStats>,
    in_flight:
        papaya::HashMap<(SocketAddr, i32), (Instant, Arc<Slot>), foldhash::fast::RandomState>,
    brokers: papaya::HashMap<SocketAddr, String, foldhash::fast::RandomState>,
    expire_after: Duration,
    epoch: Instant,
    last_sweep_ms: AtomicU64,
}

impl std::fmt::Debug for StatsRpcHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsRpcHook")
            .field("in_flight", &self.in_flight.len())
            .field("expire_after", &self.expire_after)
            .finish()
    }
}

impl StatsRpcHook {
    /// A hook recording into `stats`; a send without a response after `expire_after` (use the producer's
    /// send timeout plus a margin; RocketMQ's default timeout is 3 s) counts as a `timeout`.
    pub fn new(stats: Arc<ProducerStats>, expire_after: Duration) -> Self {
        Self {
            stats,
            in_flight: papaya::HashMap::builder()
                .hasher(foldhash::fast::RandomState::default())
                .build(),
            brokers: papaya::HashMap::builder()
                .hasher(foldhash::fast::RandomState::default())
                .build(),
            expire_after,
            epoch: Instant::now(),
            last_sweep_ms: AtomicU64::new(0),
        }
    }

    /// Sends waiting for their response.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Counts every send older than `expire_after` as a timeout (also run by the hook itself at most once a
    /// second).
    pub fn sweep(&self) {
        let now = Instant::now();
        let guard = self.in_flight.guard();
        for (key, (start, slot)) in self.in_flight.iter(&guard) {
            if now.duration_since(*start) >= self.expire_after
                && self.in_flight.remove(key, &guard).is_some()
            {
                slot.record(Duration::ZERO, Outcome::Failed(ErrorKind::Timeout));
            }
        }
    }

    fn maybe_sweep(&self) {
        let now_ms = self.epoch.elapsed().as_millis() as u64;
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        if now_ms >= last + 1_000
            && self
                .last_sweep_ms
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.sweep();
        }
    }

    fn broker(&self, addr: SocketAddr) -> String {
        let guard = self.brokers.guard();
        self.brokers
            .get_or_insert_with(addr, || addr.to_string(), &guard)
            .clone()
    }
}

/// The topic of a send request: `topic` (SEND_MESSAGE) or `b` (the V2 and batch headers' short names).
fn topic(request: &RemotingCommand) -> Option<&str> {
    let key = if request.code() == 10 { "topic" } else { "b" };
    request
        .ext_fields()?
        .iter()
        .find(|(k, _)| k.as_str() == key)
        .map(|(_, v)| v.as_str())
}

/// The outcome of a send response code (see the module docs).
pub fn outcome(code: i32) -> Outcome {
    match code {
        0 | 10 | 11 | 12 => Outcome::Sent,
        2 | 14 => Outcome::Failed(ErrorKind::BrokerBusy),
        13 | 16 => Outcome::Failed(ErrorKind::Rejected),
        17 => Outcome::Failed(ErrorKind::NoRoute),
        _ => Outcome::Failed(ErrorKind::Other),
    }
}

impl RPCHook for StatsRpcHook {
    fn do_before_request(
        &self,
        remote_addr: SocketAddr,
        request: &mut RemotingCommand,
    ) -> Result<(), rocketmq_error::SharedError> {
        self.maybe_sweep();
        if !SEND_CODES.contains(&request.code()) {
            return Ok(());
        }
        let Some(topic) = topic(request) else {
            return Ok(());
        };
        let slot = self.stats.slot(topic, &self.broker(remote_addr));
        let guard = self.in_flight.guard();
        self.in_flight.insert(
            (remote_addr, request.opaque()),
            (Instant::now(), slot),
            &guard,
        );
        Ok(())
    }

    fn do_after_response(
        &self,
        remote_addr: SocketAddr,
        request: &RemotingCommand,
        response: &mut RemotingCommand,
    ) -> Result<(), rocketmq_error::SharedError> {
        if !SEND_CODES.contains(&request.code()) {
            return Ok(());
        }
        let guard = self.in_flight.guard();
        if let Some((start, slot)) = self
            .in_flight
            .remove(&(remote_addr, request.opaque()), &guard)
        {
            slot.record(start.elapsed(), outcome(response.code()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_codes_map_to_outcomes() {
        assert_eq!(outcome(0), Outcome::Sent);
        assert_eq!(outcome(10), Outcome::Sent);
        assert_eq!(outcome(2), Outcome::Failed(ErrorKind::BrokerBusy));
        assert_eq!(outcome(17), Outcome::Failed(ErrorKind::NoRoute));
        assert_eq!(outcome(1), Outcome::Failed(ErrorKind::Other));
    }
}
