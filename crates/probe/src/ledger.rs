//! The probe's books, per broker: every probe message's outcome (delivered with its produce and round-trip
//! latency, or lost with the reason) at the time it became known, and the messages still in flight. Pure: the
//! caller passes the time; [`Ledger::summaries`] reads a window of outcomes into [`BrokerSummary`]s, latencies
//! through mqwatch-stats' histogram.

use mqwatch_model::NodeRef;
use mqwatch_stats::histogram::Histogram;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// How one probe message ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Acknowledged and read back.
    Delivered {
        /// Send → acknowledgement.
        produce: Duration,
        /// Send → read back.
        roundtrip: Duration,
    },
    /// The send failed: the broker refused it, or did not answer, or could not be reached.
    SendFailed {
        /// The client's error, naming the broker and the request.
        error: String,
    },
    /// Acknowledged, but not read back within the SLA.
    Lost {
        /// Send → acknowledgement.
        produce: Duration,
        /// The last read error, if reads failed rather than came back empty.
        error: Option<String>,
    },
}

/// Outcomes older than this are dropped (longer than any window the checks read).
pub const RETENTION_MS: u64 = 3_600_000;

#[derive(Debug, Default)]
struct Book {
    node: Option<NodeRef>,
    in_flight: u64,
    outcomes: VecDeque<(u64, Outcome)>,
}

/// Every broker's book.
#[derive(Debug, Default)]
pub struct Ledger {
    books: BTreeMap<String, Book>,
    discovery_error: Option<String>,
}

/// What one broker's probe messages did over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokerSummary {
    /// The broker (`broker-a:0`, or a Kafka node id) with its address.
    pub broker: NodeRef,
    /// Probe messages whose outcome became known in the window.
    pub sent: u64,
    /// Of them, read back within the SLA.
    pub delivered: u64,
    /// Of them, not read back within the SLA (failed sends included).
    pub lost: u64,
    /// Of the lost, those whose send failed.
    pub send_failures: u64,
    /// The latest error, send or read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Messages sent and not yet resolved.
    pub in_flight: u64,
    /// Send → acknowledgement, p50 and p99 in ms (acknowledged messages).
    pub produce_p50_ms: Option<f64>,
    /// Send → acknowledgement, p99 in ms.
    pub produce_p99_ms: Option<f64>,
    /// Send → read back, p50 in ms (delivered messages).
    pub roundtrip_p50_ms: Option<f64>,
    /// Send → read back, p99 in ms.
    pub roundtrip_p99_ms: Option<f64>,
}

impl BrokerSummary {
    /// A summary of `broker` with nothing counted.
    pub fn new(broker: NodeRef) -> Self {
        Self {
            broker,
            sent: 0,
            delivered: 0,
            lost: 0,
            send_failures: 0,
            last_error: None,
            in_flight: 0,
            produce_p50_ms: None,
            produce_p99_ms: None,
            roundtrip_p50_ms: None,
            roundtrip_p99_ms: None,
        }
    }
}

impl Ledger {
    /// A message to `broker` is on its way.
    pub fn sending(&mut self, broker: &NodeRef) {
        let book = self.book(broker);
        book.in_flight += 1;
    }

    /// A message to `broker` ended with `outcome`, known at `now_ms`.
    pub fn record(&mut self, broker: &NodeRef, now_ms: u64, outcome: Outcome) {
        let book = self.book(broker);
        book.in_flight = book.in_flight.saturating_sub(1);
        book.outcomes.push_back((now_ms, outcome));
        while book
            .outcomes
            .front()
            .is_some_and(|(t, _)| t + RETENTION_MS < now_ms)
        {
            book.outcomes.pop_front();
        }
    }

    /// The brokers could not be listed (`None`: they could).
    pub fn set_discovery_error(&mut self, error: Option<String>) {
        self.discovery_error = error;
    }

    /// Why the brokers could not be listed at the last attempt.
    pub fn discovery_error(&self) -> Option<&str> {
        self.discovery_error.as_deref()
    }

    fn book(&mut self, broker: &NodeRef) -> &mut Book {
        let book = self.books.entry(broker.name.clone()).or_default();
        book.node = Some(broker.clone());
        book
    }

    /// Each broker's outcomes known in `(now_ms - window_ms, now_ms]`.
    pub fn summaries(&self, now_ms: u64, window_ms: u64) -> Vec<BrokerSummary> {
        let from = now_ms.saturating_sub(window_ms);
        self.books
            .values()
            .filter_map(|book| {
                let node = book.node.clone()?;
                let produce = Histogram::new();
                let roundtrip = Histogram::new();
                let mut s = BrokerSummary::new(node);
                s.in_flight = book.in_flight;
                for (_, o) in book
                    .outcomes
                    .iter()
                    .filter(|(t, _)| *t > from && *t <= now_ms)
                {
                    s.sent += 1;
                    match o {
                        Outcome::Delivered {
                            produce: p,
                            roundtrip: r,
                        } => {
                            s.delivered += 1;
                            produce.record_duration(*p);
                            roundtrip.record_duration(*r);
                        }
                        Outcome::SendFailed { error } => {
                            s.lost += 1;
                            s.send_failures += 1;
                            s.last_error = Some(error.clone());
                        }
                        Outcome::Lost { produce: p, error } => {
                            s.lost += 1;
                            produce.record_duration(*p);
                            if error.is_some() {
                                s.last_error = error.clone();
                            }
                        }
                    }
                }
                let ms = |h: &Histogram, p: f64| {
                    let snap = h.snapshot();
                    (!snap.is_empty()).then(|| snap.percentile(p) as f64 / 1e6)
                };
                s.produce_p50_ms = ms(&produce, 50.0);
                s.produce_p99_ms = ms(&produce, 99.0);
                s.roundtrip_p50_ms = ms(&roundtrip, 50.0);
                s.roundtrip_p99_ms = ms(&roundtrip, 99.0);
                Some(s)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::NodeRole;

    fn broker() -> NodeRef {
        NodeRef::new(NodeRole::Broker, "broker-a:0").with_addr("127.0.0.1:10911")
    }

    fn delivered(ms: u64) -> Outcome {
        Outcome::Delivered {
            produce: Duration::from_millis(ms),
            roundtrip: Duration::from_millis(2 * ms),
        }
    }

    #[test]
    fn a_window_counts_outcomes_and_reads_latencies() {
        let mut l = Ledger::default();
        let b = broker();
        for (t, o) in [
            (1_000, delivered(10)),
            (2_000, delivered(20)),
            (
                3_000,
                Outcome::SendFailed {
                    error: "refused".into(),
                },
            ),
            (
                4_000,
                Outcome::Lost {
                    produce: Duration::from_millis(5),
                    error: None,
                },
            ),
        ] {
            l.sending(&b);
            l.record(&b, t, o);
        }
        l.sending(&b);
        let s = &l.summaries(4_000, 3_500)[0];
        assert_eq!((s.sent, s.delivered, s.lost, s.send_failures), (4, 2, 2, 1));
        assert_eq!(s.in_flight, 1);
        assert_eq!(s.last_error.as_deref(), Some("refused"));
        let p99 = s.roundtrip_p99_ms.unwrap();
        assert!((39.0..=41.0).contains(&p99), "{p99}");
        let later = &l.summaries(4_000, 1_500)[0];
        assert_eq!(
            (later.sent, later.lost),
            (2, 2),
            "only 3 000 and 4 000 are in the window"
        );
        assert_eq!(later.roundtrip_p99_ms, None);
    }

    #[test]
    fn old_outcomes_are_dropped() {
        let mut l = Ledger::default();
        let b = broker();
        l.record(&b, 1, delivered(1));
        l.record(&b, RETENTION_MS + 10, delivered(1));
        assert_eq!(l.summaries(RETENTION_MS + 10, u64::MAX)[0].sent, 1);
    }
}
