//! The send path: [`ProducerStats`] holds one [`Slot`] per (topic, broker) in a lock-free map; a slot is a
//! latency histogram and outcome counters, all atomics, so recording is O(1) and never takes a lock. The
//! reporter side ([`ProducerStats::report_since`]) turns cumulative slots into per-interval [`Entry`]s with
//! [`Samplers`] it owns, so nothing on the send path is reset or contended by reporting.

use crate::report::Entry;
use mqwatch_stats::histogram::{Histogram, IntervalSampler};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Why a send failed, in a handful of kinds mqwatch counts apart (MQCloud counts exceptions per broker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No answer within the send timeout.
    Timeout,
    /// The connection failed or broke.
    Network,
    /// The broker refused for load (RocketMQ SYSTEM_BUSY, Kafka throttling).
    BrokerBusy,
    /// No route: the topic or its broker is unknown to the client.
    NoRoute,
    /// The broker rejected the message (permissions, size, validation).
    Rejected,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// Every kind, in index order.
    pub const ALL: [ErrorKind; 6] = [
        ErrorKind::Timeout,
        ErrorKind::Network,
        ErrorKind::BrokerBusy,
        ErrorKind::NoRoute,
        ErrorKind::Rejected,
        ErrorKind::Other,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The snake_case spelling used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Network => "network",
            ErrorKind::BrokerBusy => "broker_busy",
            ErrorKind::NoRoute => "no_route",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Other => "other",
        }
    }
}

/// How one send ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The broker stored the message; its latency goes into the histogram.
    Sent,
    /// The send failed; counted by kind (its latency is not a produce latency and is not recorded).
    Failed(ErrorKind),
}

/// The statistics of one (topic, broker): lock-free, fixed size (about 8.3 KiB).
#[derive(Debug, Default)]
pub struct Slot {
    latency: Histogram,
    success: AtomicU64,
    errors: [AtomicU64; ErrorKind::ALL.len()],
}

impl Slot {
    /// Records one send: O(1), wait-free.
    #[inline]
    pub fn record(&self, latency: Duration, outcome: Outcome) {
        match outcome {
            Outcome::Sent => {
                self.latency.record_duration(latency);
                self.success.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Failed(kind) => {
                self.errors[kind.index()].fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    topic: String,
    broker: String,
}

/// A borrowed key, so a lookup allocates nothing. Hashes exactly as [`Key`] (field by field, `str` hashing).
struct KeyRef<'a> {
    topic: &'a str,
    broker: &'a str,
}

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.topic.hash(state);
        self.broker.hash(state);
    }
}

impl papaya::Equivalent<Key> for KeyRef<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        self.topic == key.topic && self.broker == key.broker
    }
}

/// The topic and broker under which sends are counted once [`ProducerStats`] holds its maximum of keys.
pub const OVERFLOW_KEY: &str = "_other";

/// Per-(topic, broker) producer statistics of one client process. Share it (`Arc`) between the send path and
/// the [`crate::Reporter`].
pub struct ProducerStats {
    slots: papaya::HashMap<Key, Arc<Slot>, foldhash::fast::RandomState>,
    max_keys: usize,
}

impl std::fmt::Debug for ProducerStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerStats")
            .field("keys", &self.slots.len())
            .field("max_keys", &self.max_keys)
            .finish()
    }
}

impl Default for ProducerStats {
    fn default() -> Self {
        Self::new()
    }
}

impl ProducerStats {
    /// Statistics for at most 10 000 (topic, broker) pairs (about 83 MiB at worst); sends beyond are counted
    /// under ([`OVERFLOW_KEY`], [`OVERFLOW_KEY`]).
    pub fn new() -> Self {
        Self::with_max_keys(10_000)
    }

    /// Statistics for at most `max_keys` (topic, broker) pairs (at least 1).
    pub fn with_max_keys(max_keys: usize) -> Self {
        Self {
            slots: papaya::HashMap::builder()
                .hasher(foldhash::fast::RandomState::default())
                .build(),
            max_keys: max_keys.max(1),
        }
    }

    /// Records one send to `topic` on `broker` (the broker's name or address, as the client knows it): a
    /// lock-free map lookup and the slot's O(1) record; the first send of a pair creates its slot.
    #[inline]
    pub fn record(&self, topic: &str, broker: &str, latency: Duration, outcome: Outcome) {
        let guard = self.slots.guard();
        if let Some(slot) = self.slots.get(&KeyRef { topic, broker }, &guard) {
            slot.record(latency, outcome);
            return;
        }
        drop(guard);
        self.slot(topic, broker).record(latency, outcome);
    }

    /// The slot of (`topic`, `broker`), created on first use: a sender that knows its pair keeps it and records
    /// with no lookup at all.
    pub fn slot(&self, topic: &str, broker: &str) -> Arc<Slot> {
        let guard = self.slots.guard();
        if let Some(slot) = self.slots.get(&KeyRef { topic, broker }, &guard) {
            return slot.clone();
        }
        let (topic, broker) = if self.slots.len() >= self.max_keys {
            (OVERFLOW_KEY, OVERFLOW_KEY)
        } else {
            (topic, broker)
        };
        let key = Key {
            topic: topic.to_string(),
            broker: broker.to_string(),
        };
        self.slots
            .get_or_insert_with(key, || Arc::new(Slot::default()), &guard)
            .clone()
    }

    /// Number of (topic, broker) pairs seen.
    pub fn keys(&self) -> usize {
        self.slots.len()
    }

    /// What every slot recorded since `samplers` last looked, as report entries (pairs with no send in the
    /// interval are left out), sorted by topic then broker. The reporter owns `samplers`.
    pub fn report_since(
        &self,
        samplers: &mut Samplers,
        _start_ms: u64,
        _end_ms: u64,
    ) -> Vec<Entry> {
        let guard = self.slots.guard();
        let mut out = Vec::new();
        for (key, slot) in self.slots.iter(&guard) {
            let state = samplers.0.entry(key.clone()).or_default();
            let latency = state.latency.sample(&slot.latency);
            let success = slot.success.load(Ordering::Relaxed);
            let sent = success.saturating_sub(state.success);
            state.success = success;
            let mut errors = BTreeMap::new();
            for kind in ErrorKind::ALL {
                let now = slot.errors[kind.index()].load(Ordering::Relaxed);
                let n = now.saturating_sub(state.errors[kind.index()]);
                state.errors[kind.index()] = now;
                if n > 0 {
                    errors.insert(kind, n);
                }
            }
            if sent == 0 && errors.is_empty() && latency.is_empty() {
                continue;
            }
            out.push(Entry::new(&key.topic, &key.broker, sent, errors, &latency));
        }
        out.sort_by(|a, b| (&a.topic, &a.broker).cmp(&(&b.topic, &b.broker)));
        out
    }
}

/// The reporter's memory of each slot at its last report (histogram sampler and counters).
#[derive(Debug, Default)]
pub struct Samplers(HashMap<Key, SlotSampler>);

#[derive(Debug, Default)]
struct SlotSampler {
    latency: IntervalSampler,
    success: u64,
    errors: [u64; ErrorKind::ALL.len()],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_per_topic_and_broker_and_reports_intervals() {
        let stats = ProducerStats::new();
        let mut samplers = Samplers::default();
        for ms in [1, 2, 3] {
            stats.record("t", "b1", Duration::from_millis(ms), Outcome::Sent);
        }
        stats.record("t", "b2", Duration::from_millis(9), Outcome::Sent);
        stats.record(
            "t",
            "b2",
            Duration::ZERO,
            Outcome::Failed(ErrorKind::Timeout),
        );
        let first = stats.report_since(&mut samplers, 0, 60_000);
        assert_eq!(first.len(), 2);
        assert_eq!((first[0].broker.as_str(), first[0].success), ("b1", 3));
        let s = first[0].latency().unwrap();
        assert_eq!((s.count(), s.min(), s.max()), (3, 1_000_000, 3_000_000));
        assert_eq!(first[1].errors.get(&ErrorKind::Timeout), Some(&1));
        assert_eq!(
            first[1].latency().unwrap().count(),
            1,
            "failures are not latencies"
        );
        assert!(
            stats
                .report_since(&mut samplers, 60_000, 120_000)
                .is_empty()
        );
        stats.record("t", "b1", Duration::from_millis(5), Outcome::Sent);
        let third = stats.report_since(&mut samplers, 120_000, 180_000);
        assert_eq!(third.len(), 1);
        assert_eq!(third[0].success, 1);
        assert_eq!(third[0].latency().unwrap().count(), 1);
    }

    #[test]
    fn keys_beyond_the_maximum_go_to_the_overflow_slot() {
        let stats = ProducerStats::with_max_keys(2);
        for t in ["a", "b", "c", "d"] {
            stats.record(t, "b", Duration::from_millis(1), Outcome::Sent);
        }
        assert_eq!(stats.keys(), 3);
        let r = stats.report_since(&mut Samplers::default(), 0, 1);
        let overflow = r.iter().find(|e| e.topic == OVERFLOW_KEY).unwrap();
        assert_eq!(overflow.success, 2);
    }

    #[test]
    fn concurrent_senders_lose_nothing() {
        let stats = ProducerStats::new();
        std::thread::scope(|s| {
            for t in 0..4 {
                let stats = &stats;
                s.spawn(move || {
                    for i in 0..10_000u64 {
                        let topic = if i % 2 == 0 { "even" } else { "odd" };
                        stats.record(topic, "b", Duration::from_micros(100 + t), Outcome::Sent);
                    }
                });
            }
        });
        let r = stats.report_since(&mut Samplers::default(), 0, 1);
        assert_eq!(r.iter().map(|e| e.success).sum::<u64>(), 40_000);
        assert_eq!(
            r.iter().map(|e| e.latency().unwrap().count()).sum::<u64>(),
            40_000
        );
    }
}
