//! mqwatch-demo: a simulated estate for `mqwatch demo` — a RocketMQ cluster, a Kafka cluster and a BookKeeper
//! cluster that emit exactly what the real collectors emit ([`ClusterSnapshot`]s filled as
//! `mqwatch_rocketmq`'s and `mqwatch_kafka`'s collectors fill them; for BookKeeper the bookies and the
//! [`LedgerObservation`](mqwatch_model::LedgerObservation)s the audit judges), with faults injected on a
//! [`schedule`] and recovering later, traffic with a daily shape, and producer latency percentiles.
//!
//! What it owns: the simulated clusters ([`rocketmq`], [`kafka`], [`bookkeeper`]), their offsets over time
//! ([`flow`]), the fault [`schedule`], [`latency`] series, the end-to-end [`probe`]'s messages, deterministic
//! [`noise`]. Everything is a function of
//! the seed and the times it is asked at: the same seed and start give the same estate.
//!
//! What it is not: no judging (every finding comes from the real checks, run by the caller on what this emits),
//! no I/O, no clock of its own (times are arguments; the caller's clock may be real or, for history, injected).

pub mod bookkeeper;
pub mod flow;
pub mod kafka;
pub mod latency;
pub mod noise;
pub mod probe;
pub mod rocketmq;
pub mod schedule;

pub use bookkeeper::{BookkeeperObservation, BookkeeperSim};
pub use kafka::KafkaSim;
pub use latency::{LatencyModel, LatencyPoint};
pub use probe::{ProbeMessage, ProbeModel, ProbeResult};
pub use rocketmq::RocketmqSim;
pub use schedule::{FaultKind, Schedule};

use mqwatch_model::{ClusterSnapshot, Engine};

/// The simulation's step: offsets move forward at most this much real time at once.
pub const STEP_MS: u64 = 1_000;

/// One simulated cluster of any engine.
pub enum SimCluster {
    /// RocketMQ.
    Rocketmq(RocketmqSim),
    /// Kafka.
    Kafka(KafkaSim),
    /// BookKeeper.
    Bookkeeper(BookkeeperSim),
}

/// What one cycle observes of a simulated cluster.
pub enum Observed {
    /// A snapshot, as the RocketMQ and Kafka collectors return.
    Snapshot(ClusterSnapshot),
    /// An audit pass's reading, as the BookKeeper collector returns it.
    Ledgers(BookkeeperObservation),
}

impl SimCluster {
    /// A cluster of `engine` named `name`, starting at `start_ms`, with faults on `schedule`.
    pub fn new(engine: Engine, name: &str, seed: u64, schedule: Schedule, start_ms: u64) -> Self {
        match engine {
            Engine::Rocketmq => {
                SimCluster::Rocketmq(RocketmqSim::new(name, seed, schedule, start_ms))
            }
            Engine::Kafka => SimCluster::Kafka(KafkaSim::new(name, seed, schedule, start_ms)),
            Engine::Bookkeeper => SimCluster::Bookkeeper(BookkeeperSim::new(name, seed, schedule)),
        }
    }

    /// One cycle at `now_ms`.
    pub fn observe(&mut self, now_ms: u64) -> Observed {
        match self {
            SimCluster::Rocketmq(s) => Observed::Snapshot(s.snapshot(now_ms)),
            SimCluster::Kafka(s) => Observed::Snapshot(s.snapshot(now_ms)),
            SimCluster::Bookkeeper(s) => Observed::Ledgers(s.observe(now_ms)),
        }
    }

    /// Topics whose producers have latency series.
    pub fn topics(&self) -> Vec<String> {
        match self {
            SimCluster::Rocketmq(s) => s.topics(),
            SimCluster::Kafka(s) => s.topics(),
            SimCluster::Bookkeeper(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seed: u64) -> Vec<String> {
        let start = 1_800_000_000_000;
        let schedule = Schedule::anchored(start, 600_000, 30.0);
        Engine::ALL
            .iter()
            .map(|e| {
                let mut c = SimCluster::new(*e, "c", seed, schedule, start - 600_000);
                (0..5)
                    .map(|i| match c.observe(start + i * 7_000) {
                        Observed::Snapshot(s) => format!("{s:?}"),
                        Observed::Ledgers(l) => format!("{:?}{:?}", l.snapshot, l.ledgers),
                    })
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_estate_and_another_seed_another() {
        let (a, b, c) = (run(1), run(1), run(2));
        assert_eq!(a, b);
        for engine in 0..3 {
            assert_ne!(a[engine], c[engine], "engine {engine}");
        }
    }

    #[test]
    fn only_rocketmq_and_kafka_topics_have_producers() {
        let s = Schedule::anchored(1_800_000_000_000, 0, 1.0);
        let topics = |e| SimCluster::new(e, "c", 1, s, 1_800_000_000_000).topics();
        assert_eq!(topics(Engine::Rocketmq).len(), 4);
        assert_eq!(topics(Engine::Kafka), ["clicks", "page-views", "checkout"]);
        assert!(topics(Engine::Bookkeeper).is_empty());
    }
}
