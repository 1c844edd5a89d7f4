//! The probe's pure check: a broker whose probe messages were lost (failed sends included) in the window, at
//! least `[thresholds.produce_failure] failures` of them, is one `produce_failure` finding about that broker,
//! with the sent, delivered and lost counts and the last error as evidence; brokers that could not be listed
//! at all are a `collector_error`. A function of the summaries, the thresholds and the time only.

use crate::ledger::BrokerSummary;
use mqwatch_checks::produce::ProduceFailureThresholds;
use mqwatch_model::{Engine, Evidence, Finding, FindingKind, Subject};

/// The findings of one cluster's probe over the window `thresholds.window`.
pub fn probe_findings(
    cluster: &str,
    engine: Engine,
    topic: &str,
    summaries: &[BrokerSummary],
    discovery_error: Option<&str>,
    thresholds: &ProduceFailureThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut findings: Vec<Finding> = summaries
        .iter()
        .filter(|s| s.lost > 0 && s.lost >= thresholds.failures)
        .map(|s| {
            let mut message = format!(
                "broker {}: {} of {} probe messages to topic {topic} lost in {}",
                s.broker.name, s.lost, s.sent, thresholds.window
            );
            if s.send_failures > 0 {
                message.push_str(&format!(" ({} sends failed)", s.send_failures));
            }
            if let Some(e) = &s.last_error {
                message.push_str(&format!("; last error: {e}"));
            }
            let mut evidence = Evidence::new()
                .with("source", "probe")
                .with("broker", s.broker.name.clone())
                .with("topic", topic)
                .with("sent", s.sent)
                .with("delivered", s.delivered)
                .with("lost", s.lost)
                .with("send_failures", s.send_failures)
                .with("threshold", thresholds.failures)
                .with("window", thresholds.window.to_string());
            if let Some(addr) = &s.broker.addr {
                evidence = evidence.with("addr", addr.clone());
            }
            if let Some(e) = &s.last_error {
                evidence = evidence.with("error", e.clone());
            }
            Finding::new(
                FindingKind::ProduceFailure,
                cluster,
                engine,
                Subject::Node {
                    node: s.broker.clone(),
                },
                message,
                now_ms,
            )
            .with_evidence(evidence)
        })
        .collect();
    if let Some(e) = discovery_error {
        findings.push(
            Finding::new(
                FindingKind::CollectorError,
                cluster,
                engine,
                Subject::Cluster,
                format!("probe cannot list the brokers to probe: {e}"),
                now_ms,
            )
            .with_evidence(Evidence::new().with("source", "probe").with("error", e)),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{NodeRef, NodeRole};

    fn summary(lost: u64, delivered: u64) -> BrokerSummary {
        BrokerSummary {
            broker: NodeRef::new(NodeRole::Broker, "broker-a:0").with_addr("127.0.0.1:1"),
            sent: lost + delivered,
            delivered,
            lost,
            send_failures: lost,
            last_error: (lost > 0).then(|| "connection refused".into()),
            ..BrokerSummary::new(NodeRef::new(NodeRole::Broker, "x"))
        }
    }

    #[test]
    fn delivered_probes_are_quiet() {
        let t = ProduceFailureThresholds::default();
        let f = probe_findings("c", Engine::Kafka, "canary", &[summary(0, 9)], None, &t, 1);
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn lost_probes_name_the_broker_with_counts_and_error() {
        let t = ProduceFailureThresholds {
            failures: 2,
            ..Default::default()
        };
        let quiet = probe_findings(
            "c",
            Engine::Rocketmq,
            "canary",
            &[summary(1, 5)],
            None,
            &t,
            1,
        );
        assert!(quiet.is_empty(), "one lost is below 2");
        let f = probe_findings(
            "c",
            Engine::Rocketmq,
            "canary",
            &[summary(3, 5)],
            None,
            &t,
            7,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, FindingKind::ProduceFailure);
        assert_eq!(f[0].subject.to_string(), "broker broker-a:0");
        assert_eq!(f[0].evidence.get("lost"), Some(&serde_json::json!(3)));
        assert_eq!(f[0].evidence.get("sent"), Some(&serde_json::json!(8)));
        assert_eq!(
            f[0].evidence.get("error"),
            Some(&serde_json::json!("connection refused"))
        );
        assert!(f[0].message.contains("3 of 8"), "{}", f[0].message);
    }

    #[test]
    fn unlisted_brokers_are_a_collector_error() {
        let t = ProduceFailureThresholds::default();
        let f = probe_findings("c", Engine::Kafka, "canary", &[], Some("refused"), &t, 1);
        assert_eq!(f[0].kind, FindingKind::CollectorError);
    }
}
