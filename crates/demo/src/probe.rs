//! The end-to-end probe of the simulated RocketMQ and Kafka clusters: what `mqwatch_probe`'s prober would have
//! seen of each broker, one canary message per broker every `interval_ms` (the messages sent at whole multiples
//! of the interval): delivered with a produce latency (send → acknowledgement, log-normal around the engine's
//! median, a little slower under daily load, with a rare slow tail) and a round trip (the produce latency plus
//! the read-back: a read at once that mostly finds the message, else more after waits of 5 ms doubling, as the
//! prober's reads go), or, for Kafka broker 3 while it is away (the `BrokerDown` fault), a failed send. Other
//! Kafka brokers are twice as slow while broker 3 is down or fenced, as the producer latency is.
//!
//! A pure function of seed, schedule, broker and send time, so history and the live loop see the same
//! messages. What it is not: the probe's books or its check (the caller records these outcomes in
//! `mqwatch_probe`'s ledger and judges them with its check).

use crate::flow::daily;
use crate::noise;
use crate::schedule::{FaultKind, Schedule};
use mqwatch_model::{Engine, NodeRef};

/// The Kafka broker that goes away (see [`crate::kafka`]).
const FLAKY_KAFKA: &str = "3";

/// How one simulated probe message ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeResult {
    /// Acknowledged and read back.
    Delivered {
        /// Send → acknowledgement, ms.
        produce_ms: f64,
        /// Send → read back, ms.
        roundtrip_ms: f64,
    },
    /// The send failed.
    SendFailed {
        /// The client's error, naming the broker and the request.
        error: String,
    },
}

/// One simulated probe message.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeMessage {
    /// The broker it went to.
    pub broker: NodeRef,
    /// When it was sent.
    pub sent_ms: u64,
    /// When its outcome became known (read back, or the send failed).
    pub known_ms: u64,
    /// Its outcome.
    pub result: ProbeResult,
}

/// The probe of one simulated cluster.
#[derive(Debug, Clone)]
pub struct ProbeModel {
    seed: u64,
    schedule: Schedule,
    engine: Engine,
    interval_ms: u64,
    brokers: Vec<NodeRef>,
}

impl ProbeModel {
    /// The probe of a simulated cluster of `engine`, one message per broker every `interval_ms`; `None` for an
    /// engine the probe does not run on (BookKeeper).
    pub fn new(engine: Engine, seed: u64, schedule: Schedule, interval_ms: u64) -> Option<Self> {
        let brokers = match engine {
            Engine::Rocketmq => crate::rocketmq::masters(),
            Engine::Kafka => crate::kafka::brokers(),
            Engine::Bookkeeper => return None,
        };
        Some(ProbeModel {
            seed,
            schedule,
            engine,
            interval_ms: interval_ms.max(1),
            brokers,
        })
    }

    /// The brokers probed: RocketMQ's masters (`broker-a:0`), Kafka's brokers (by node id).
    pub fn brokers(&self) -> &[NodeRef] {
        &self.brokers
    }

    /// Every message whose outcome became known in `(from_ms, to_ms]`, by send time.
    pub fn messages(&self, from_ms: u64, to_ms: u64) -> Vec<ProbeMessage> {
        // A round trip never takes longer than this, so earlier sends are known before `from_ms`.
        const LONGEST_MS: u64 = 5_000;
        let first = from_ms.saturating_sub(LONGEST_MS) / self.interval_ms;
        let last = to_ms / self.interval_ms;
        let mut out = Vec::new();
        for k in first..=last {
            let sent = k * self.interval_ms;
            for b in &self.brokers {
                let m = self.message(b, sent);
                if m.known_ms > from_ms && m.known_ms <= to_ms {
                    out.push(m);
                }
            }
        }
        out
    }

    fn message(&self, broker: &NodeRef, sent_ms: u64) -> ProbeMessage {
        let down = |kind| self.schedule.active(kind, sent_ms).is_some();
        let key = noise::name_key(&broker.name) ^ 0x9B0B;
        let i = sent_ms / self.interval_ms;
        let result = if self.engine == Engine::Kafka
            && broker.name == FLAKY_KAFKA
            && down(FaultKind::BrokerDown)
        {
            ProbeResult::SendFailed {
                error: format!(
                    "Produce (0) to {}: connection refused",
                    broker.addr.as_deref().unwrap_or("?")
                ),
            }
        } else {
            let median = match self.engine {
                Engine::Kafka => 3.0,
                _ => 2.0,
            };
            let disturbed = self.engine == Engine::Kafka
                && (down(FaultKind::BrokerDown) || down(FaultKind::StuckStartup));
            let load = 0.8 + 0.4 * daily(sent_ms);
            let mut produce = median * load * (0.4 * noise::normal(self.seed, key, i)).exp();
            if noise::unit(self.seed, key ^ 0x7A11, i) < 0.01 {
                produce *= 5.0 + 15.0 * noise::unit(self.seed, key ^ 0x51, i);
            }
            if disturbed {
                produce *= 2.0;
            }
            // The first read follows the acknowledgement at once and mostly finds the message; when it does not,
            // the prober waits 5 ms, then 10, 20, … before the next.
            let u = noise::unit(self.seed, key ^ 0x2EAD, i);
            let waits = match u {
                u if u < 0.75 => 0,
                u if u < 0.93 => 1,
                u if u < 0.99 => 2,
                _ => 3,
            };
            let read = 0.3
                + 1.2 * noise::unit(self.seed, key ^ 0x3EAD, i)
                + (0..waits).map(|w| 5.0 * f64::from(1 << w)).sum::<f64>();
            ProbeResult::Delivered {
                produce_ms: produce,
                roundtrip_ms: produce + read,
            }
        };
        let took = match &result {
            ProbeResult::Delivered { roundtrip_ms, .. } => roundtrip_ms.ceil() as u64,
            ProbeResult::SendFailed { .. } => 1,
        };
        ProbeMessage {
            broker: broker.clone(),
            sent_ms,
            known_ms: sent_ms + took,
            result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: u64 = 1_800_000_000_000;

    #[test]
    fn every_broker_gets_one_message_per_interval_and_they_repeat() {
        let s = Schedule::anchored(START, 0, 1.0);
        let m = ProbeModel::new(Engine::Rocketmq, 1, s, 10_000).unwrap();
        let names: Vec<&str> = m.brokers().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["broker-a:0", "broker-b:0"]);
        let a = m.messages(START, START + 60_000);
        assert_eq!(a.len(), 12, "6 sends × 2 brokers");
        assert_eq!(a, m.messages(START, START + 60_000));
        for msg in &a {
            match msg.result {
                ProbeResult::Delivered {
                    produce_ms,
                    roundtrip_ms,
                } => {
                    assert!(produce_ms > 0.1 && produce_ms < 100.0, "{msg:?}");
                    assert!(roundtrip_ms > produce_ms, "{msg:?}");
                }
                ProbeResult::SendFailed { .. } => panic!("a healthy broker lost {msg:?}"),
            }
        }
        let halves = [
            m.messages(START, START + 30_000),
            m.messages(START + 30_000, START + 60_000),
        ];
        assert_eq!(halves.concat(), a, "windows split without loss or overlap");
        assert!(ProbeModel::new(Engine::Bookkeeper, 1, s, 10_000).is_none());
    }

    #[test]
    fn kafka_broker_3_fails_its_sends_while_it_is_away_and_only_then() {
        let s = Schedule::anchored(START, 0, 1.0);
        let m = ProbeModel::new(Engine::Kafka, 1, s, 10_000).unwrap();
        let down = (0..60)
            .map(|min| START + min * 60_000)
            .find_map(|t| s.active(FaultKind::BrokerDown, t))
            .unwrap();
        let during = m.messages(down.since_ms, down.since_ms + 60_000);
        let failed: Vec<&ProbeMessage> = during
            .iter()
            .filter(|x| matches!(x.result, ProbeResult::SendFailed { .. }))
            .collect();
        assert_eq!(failed.len(), 6, "{during:?}");
        assert!(failed.iter().all(|x| x.broker.name == "3"));
        let after = m.messages(down.until_ms + 60_000, down.until_ms + 120_000);
        assert!(
            after
                .iter()
                .all(|x| matches!(x.result, ProbeResult::Delivered { .. }))
        );
    }
}
