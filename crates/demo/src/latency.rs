//! Producer latency of the simulated topics: per topic and minute, a few hundred send latencies drawn from a
//! log-normal around the topic's median (a little slower under daily load, with a rare slow tail), recorded in
//! `mqwatch_stats`'s histogram, read back as p50/p90/p99/p99.9 in milliseconds. Kafka topics slow down while
//! broker 3 is down or fenced (leaders moved, ISRs shrunk). A pure function of seed, topic and minute.

use crate::flow::daily;
use crate::noise;
use crate::schedule::{FaultKind, Schedule};
use mqwatch_model::Engine;
use mqwatch_stats::histogram::Histogram;

/// Series names and the percentile each holds.
pub const METRICS: [(&str, f64); 4] = [
    ("produce_latency_p50_ms", 50.0),
    ("produce_latency_p90_ms", 90.0),
    ("produce_latency_p99_ms", 99.0),
    ("produce_latency_p999_ms", 99.9),
];
/// Samples drawn per topic and minute.
const SAMPLES: u64 = 600;

/// One per-minute value of one latency series.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyPoint {
    /// The cluster.
    pub cluster: String,
    /// One of [`METRICS`].
    pub metric: &'static str,
    /// `topic <name>`, as the store's other per-topic series.
    pub subject: String,
    /// The minute's start.
    pub minute_ms: u64,
    /// Milliseconds.
    pub value: f64,
}

/// Which topics have latency, and how fast each is.
#[derive(Debug, Clone)]
pub struct LatencyModel {
    seed: u64,
    schedule: Schedule,
    /// Cluster, engine, topic, median in ms.
    topics: Vec<(String, Engine, String, f64)>,
}

impl LatencyModel {
    /// No topics yet.
    pub fn new(seed: u64, schedule: Schedule) -> Self {
        LatencyModel {
            seed,
            schedule,
            topics: Vec::new(),
        }
    }

    /// Adds the topics of one cluster.
    pub fn add(&mut self, cluster: &str, engine: Engine, topics: &[String]) {
        for t in topics {
            let median = match engine {
                Engine::Kafka => 4.0,
                _ => 2.5,
            } * (0.7 + 0.6 * noise::unit(self.seed, noise::name_key(t), 5));
            self.topics
                .push((cluster.to_string(), engine, t.clone(), median));
        }
    }

    /// Every series' value for the minute starting at `minute_ms`.
    pub fn minute(&self, minute_ms: u64) -> Vec<LatencyPoint> {
        let minute_ms = minute_ms - minute_ms % 60_000;
        let mut out = Vec::new();
        for (cluster, engine, topic, median) in &self.topics {
            let key = noise::name_key(topic) ^ minute_ms;
            let disturbed = *engine == Engine::Kafka
                && [FaultKind::BrokerDown, FaultKind::StuckStartup]
                    .iter()
                    .any(|k| self.schedule.active(*k, minute_ms + 30_000).is_some());
            let load = 0.8 + 0.4 * daily(minute_ms);
            let h = Histogram::new();
            for i in 0..SAMPLES {
                let mut ms = median * load * (0.45 * noise::normal(self.seed, key, i)).exp();
                let tail = noise::unit(self.seed, key ^ 0x7A11, i);
                if tail < if disturbed { 0.05 } else { 0.01 } {
                    ms *= 4.0 + 20.0 * noise::unit(self.seed, key ^ 0x51, i);
                }
                if disturbed {
                    ms *= 2.0;
                }
                h.record((ms * 1e6) as u64);
            }
            let snap = h.snapshot();
            for (metric, p) in METRICS {
                out.push(LatencyPoint {
                    cluster: cluster.clone(),
                    metric,
                    subject: format!("topic {topic}"),
                    minute_ms,
                    value: snap.percentile(p) as f64 / 1e6,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_rise_and_repeat() {
        let s = Schedule::anchored(1_800_000_000_000, 0, 1.0);
        let mut m = LatencyModel::new(3, s);
        m.add("k", Engine::Kafka, &["clicks".to_string()]);
        let a = m.minute(1_800_000_000_000);
        assert_eq!(a.len(), 4);
        assert_eq!(
            a,
            m.minute(1_800_000_000_000 + 59_999),
            "same minute, same values"
        );
        assert!(a.windows(2).all(|w| w[0].value <= w[1].value), "{a:?}");
        assert!(a[0].value > 0.5 && a[0].value < 20.0, "{a:?}");
        assert_eq!(a[0].subject, "topic clicks");
    }
}
