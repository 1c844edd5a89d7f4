//! The RocketMQ brokers' minute counters as VIEW_BROKER_STATS_DATA answers them, per master: TOPIC_PUT_NUMS and
//! TOPIC_PUT_SIZE per topic, GROUP_GET_NUMS and GROUP_GET_SIZE per topic and group, BROKER_PUT_NUMS and
//! BROKER_GET_NUMS per broker (no SNDBCK_PUT_NUMS: the Rust broker answers "no stats" for it, which is no sample).

use super::{BROKERS, RocketmqSim, Topic};
use mqwatch_model::{NodeRef, NodeRole, TrafficMetric, TrafficSample};
use std::collections::BTreeMap;

impl RocketmqSim {
    /// The brokers' minute counters, per master, as VIEW_BROKER_STATS_DATA answers them.
    pub(super) fn traffic(&self, now: u64) -> Vec<TrafficSample> {
        let mut out = Vec::new();
        let master = |b: &str| {
            let (name, addr, _) = BROKERS
                .iter()
                .find(|x| x.0 == b)
                .copied()
                .unwrap_or(BROKERS[0]);
            NodeRef::new(NodeRole::Broker, format!("{name}:0")).with_addr(addr)
        };
        let share_on = |t: &Topic, b: &str| -> f64 {
            t.queues
                .iter()
                .zip(&t.flow.shares)
                .filter(|((x, _), _)| *x == b)
                .map(|(_, s)| s)
                .sum()
        };
        let mut put: BTreeMap<&str, u64> = BTreeMap::new();
        let mut get: BTreeMap<&str, u64> = BTreeMap::new();
        let sample = |metric, topic: Option<&str>, group: Option<&str>, b: &str, n: u64, avg| {
            TrafficSample {
                metric,
                topic: topic.map(str::to_string),
                group: group.map(str::to_string),
                node: master(b),
                last_minute: n,
                minute_avg: avg,
            }
        };
        for t in &self.topics {
            let produced = t.flow.last_minute(now) as f64;
            for (b, _, _) in BROKERS {
                let n = (produced * share_on(t, b)).round() as u64;
                *put.entry(b).or_default() += n;
                let name = Some(t.flow.name.as_str());
                out.push(sample(
                    TrafficMetric::ProduceMessages,
                    name,
                    None,
                    b,
                    n,
                    1.0,
                ));
                let bytes = (n as f64 * t.flow.msg_bytes) as u64;
                out.push(sample(
                    TrafficMetric::ProduceBytes,
                    name,
                    None,
                    b,
                    bytes,
                    t.flow.msg_bytes,
                ));
            }
        }
        for g in &self.groups {
            let t = &self.topics[g.consumer.topic];
            let consumed = g.consumer.last_minute(now) as f64;
            for (b, _, _) in BROKERS {
                let n = (consumed * share_on(t, b)).round() as u64;
                *get.entry(b).or_default() += n;
                let (topic, group) = (Some(t.flow.name.as_str()), Some(g.consumer.group.as_str()));
                out.push(sample(
                    TrafficMetric::ConsumeMessages,
                    topic,
                    group,
                    b,
                    n,
                    1.0,
                ));
                let bytes = (n as f64 * t.flow.msg_bytes) as u64;
                out.push(sample(
                    TrafficMetric::ConsumeBytes,
                    topic,
                    group,
                    b,
                    bytes,
                    t.flow.msg_bytes,
                ));
            }
        }
        for (b, _, _) in BROKERS {
            let (p, g) = (
                put.get(b).copied().unwrap_or(0),
                get.get(b).copied().unwrap_or(0),
            );
            out.push(sample(
                TrafficMetric::ProduceMessages,
                None,
                None,
                b,
                p,
                1.0,
            ));
            out.push(sample(
                TrafficMetric::ConsumeMessages,
                None,
                None,
                b,
                g,
                1.0,
            ));
        }
        out
    }
}
