//! `traffic_surge` (MQCloud's topic-surge rule): a topic producing far more per minute than on any recent day.
//! The input is each topic's messages produced in the last minute and the per-day maxima of that per-minute
//! figure over the previous days (the store's day rollups of `produce_messages`); a topic surges when its
//! minute is above `ratio` × the largest of those maxima and at least `min_per_minute`. A topic with no
//! history yet is never judged.

use mqwatch_model::{Engine, Evidence, Finding, FindingKind, Subject};
use serde::{Deserialize, Serialize};

/// `[thresholds.traffic_surge]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrafficSurgeThresholds {
    /// How many times the recent daily maximum counts as a surge (default 2).
    pub ratio: f64,
    /// How many previous days to compare with (default 7).
    pub days: u32,
    /// Minutes below this many messages are never a surge (default 1 000), so idle topics stay quiet.
    pub min_per_minute: f64,
}

impl Default for TrafficSurgeThresholds {
    fn default() -> Self {
        Self {
            ratio: 2.0,
            days: 7,
            min_per_minute: 1_000.0,
        }
    }
}

/// One topic's last minute and its history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopicTraffic {
    /// The topic.
    pub topic: String,
    /// Messages produced in the last minute.
    pub last_minute: f64,
    /// The largest per-minute figure of each previous day (any order).
    pub daily_maxima: Vec<f64>,
}

/// One finding per surging topic.
pub fn traffic_surge(
    cluster: &str,
    engine: Engine,
    topics: &[TopicTraffic],
    t: &TrafficSurgeThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    topics
        .iter()
        .filter_map(|tt| {
            let max = tt.daily_maxima.iter().copied().fold(None, |m: Option<f64>, v| {
                Some(m.map_or(v, |m| m.max(v)))
            })?;
            if tt.last_minute < t.min_per_minute || tt.last_minute <= t.ratio * max {
                return None;
            }
            Some(
                Finding::new(
                    FindingKind::TrafficSurge,
                    cluster,
                    engine,
                    Subject::Topic {
                        topic: tt.topic.clone(),
                    },
                    format!(
                        "topic {}: {} messages in the last minute, above {} x the busiest minute of the last {} days ({})",
                        tt.topic,
                        tt.last_minute,
                        t.ratio,
                        tt.daily_maxima.len(),
                        max
                    ),
                    now_ms,
                )
                .with_evidence(
                    Evidence::new()
                        .with("last_minute", tt.last_minute)
                        .with("recent_daily_max", max)
                        .with("days", tt.daily_maxima.len())
                        .with("ratio", t.ratio),
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(last: f64, maxima: &[f64]) -> TopicTraffic {
        TopicTraffic {
            topic: "orders".into(),
            last_minute: last,
            daily_maxima: maxima.to_vec(),
        }
    }

    #[test]
    fn a_minute_above_twice_the_recent_daily_maxima_surges() {
        let t = TrafficSurgeThresholds::default();
        let f = traffic_surge(
            "c",
            Engine::Rocketmq,
            &[topic(5_000.0, &[1_000.0, 2_400.0])],
            &t,
            1,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, FindingKind::TrafficSurge);
        assert_eq!(
            f[0].evidence.get("recent_daily_max"),
            Some(&serde_json::json!(2400.0))
        );
        let quiet = traffic_surge(
            "c",
            Engine::Rocketmq,
            &[topic(4_800.0, &[1_000.0, 2_400.0])],
            &t,
            1,
        );
        assert!(quiet.is_empty(), "exactly 2x is not above");
    }

    #[test]
    fn no_history_or_small_topics_are_not_judged() {
        let t = TrafficSurgeThresholds::default();
        assert!(traffic_surge("c", Engine::Kafka, &[topic(1e9, &[])], &t, 1).is_empty());
        assert!(traffic_surge("c", Engine::Kafka, &[topic(900.0, &[10.0])], &t, 1).is_empty());
    }
}
