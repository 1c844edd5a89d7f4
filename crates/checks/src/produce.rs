//! `produce_failure` (MQCloud's PRODUCE_EXCEPTION): sends that failed, as the producers themselves reported
//! them (client reports) or as mqwatch's own probe saw them, summed per topic over a window (MQCloud checks
//! every 5 minutes). A topic with at least `failures` failed sends in the window is one finding naming the
//! failures by kind, the brokers and clients involved, and the successful sends beside them.

use mqwatch_model::{Engine, Evidence, Finding, FindingKind, Span, Subject};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// `[thresholds.produce_failure]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProduceFailureThresholds {
    /// Failed sends per window that raise the finding (default 1: any, as MQCloud alarms on any exception).
    pub failures: u64,
    /// The window (default 5m, MQCloud's check period).
    pub window: Span,
}

impl Default for ProduceFailureThresholds {
    fn default() -> Self {
        Self {
            failures: 1,
            window: Span::from_secs(300),
        }
    }
}

/// What the producers of one topic did over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProduceWindow {
    /// The topic.
    pub topic: String,
    /// Successful sends.
    pub success: u64,
    /// Failed sends by kind (`timeout`, `network`, `broker_busy`, `no_route`, `rejected`, `other`, `lost`).
    pub failures: BTreeMap<String, u64>,
    /// Brokers with failed sends.
    pub brokers: BTreeSet<String>,
    /// Clients with failed sends.
    pub clients: BTreeSet<String>,
}

/// One finding per topic whose failed sends reach the threshold.
pub fn produce_failure(
    cluster: &str,
    engine: Engine,
    windows: &[ProduceWindow],
    thresholds: &ProduceFailureThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    windows
        .iter()
        .filter_map(|w| {
            let failed: u64 = w.failures.values().sum();
            if failed == 0 || failed < thresholds.failures {
                return None;
            }
            let kinds: Vec<String> = w.failures.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let evidence = Evidence::new()
                .with("failures", failed)
                .with("threshold", thresholds.failures)
                .with("window", thresholds.window.to_string())
                .with("success", w.success)
                .with(
                    "by_kind",
                    serde_json::to_value(&w.failures).unwrap_or_default(),
                )
                .with("brokers", w.brokers.iter().cloned().collect::<Vec<_>>())
                .with("clients", w.clients.iter().cloned().collect::<Vec<_>>());
            Some(
                Finding::new(
                    FindingKind::ProduceFailure,
                    cluster,
                    engine,
                    Subject::Topic {
                        topic: w.topic.clone(),
                    },
                    format!(
                        "topic {}: {failed} failed sends in {} ({}), {} sent",
                        w.topic,
                        thresholds.window,
                        kinds.join(", "),
                        w.success
                    ),
                    now_ms,
                )
                .with_evidence(evidence),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(failures: &[(&str, u64)]) -> ProduceWindow {
        ProduceWindow {
            topic: "orders".into(),
            success: 100,
            failures: failures.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            brokers: ["10.0.0.1:10911".to_string()].into(),
            clients: ["app@1".to_string()].into(),
        }
    }

    #[test]
    fn no_failure_is_quiet() {
        let f = produce_failure(
            "c",
            Engine::Rocketmq,
            &[window(&[])],
            &Default::default(),
            1,
        );
        assert!(f.is_empty());
    }

    #[test]
    fn failures_at_the_threshold_raise_a_finding_with_their_kinds() {
        let t = ProduceFailureThresholds {
            failures: 3,
            ..Default::default()
        };
        let below = produce_failure("c", Engine::Rocketmq, &[window(&[("timeout", 2)])], &t, 1);
        assert!(below.is_empty());
        let f = produce_failure(
            "c",
            Engine::Kafka,
            &[window(&[("timeout", 2), ("network", 1)])],
            &t,
            9,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, FindingKind::ProduceFailure);
        assert_eq!(f[0].subject.to_string(), "topic orders");
        assert_eq!(f[0].evidence.get("failures"), Some(&serde_json::json!(3)));
        assert_eq!(
            f[0].evidence.get("by_kind"),
            Some(&serde_json::json!({"network": 1, "timeout": 2}))
        );
        assert!(f[0].message.contains("2 timeout"), "{}", f[0].message);
    }
}
