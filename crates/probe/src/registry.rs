//! One running [`Prober`] per cluster name for the whole process, started on the first cycle that asks for
//! it (so `mqwatch serve` wires the probe in with one call per cycle), and the per-cycle reading of it:
//! findings through [`crate::check`], and series values per broker (`probe_produce_p99_ms`,
//! `probe_roundtrip_p50_ms`, `probe_roundtrip_p99_ms`, `probe_sent`, `probe_lost`, subject `broker <name>`).

use crate::{
    BrokerSummary, ProbeConfig, Prober, Target, kafka::KafkaTarget, rocketmq::RocketMqTarget,
};
use mqwatch_checks::produce::ProduceFailureThresholds;
use mqwatch_model::{Engine, Finding, Subject};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

static PROBES: LazyLock<Mutex<HashMap<String, Arc<Prober>>>> = LazyLock::new(Default::default);

/// Where a cluster is and how long a request may take.
#[derive(Debug, Clone)]
pub struct ClusterAddrs<'a> {
    /// mqwatch's name for the cluster.
    pub cluster: &'a str,
    /// Its engine (the probe runs for RocketMQ and Kafka).
    pub engine: Engine,
    /// RocketMQ name servers.
    pub name_servers: &'a [String],
    /// Kafka bootstrap servers.
    pub bootstrap: &'a [String],
    /// Per-request timeout.
    pub timeout: Duration,
    /// Kafka: TLS and SASL, as the collector connects (used when the probe starts).
    pub kafka_security: &'a mqwatch_kafka::client::Security,
}

/// The cluster's running probe, started now if it is enabled and was not running; `None` when it is off or
/// the engine has no probe.
pub fn prober(addrs: &ClusterAddrs<'_>, config: &ProbeConfig) -> Option<Arc<Prober>> {
    if !config.enabled {
        return None;
    }
    let mut probes = PROBES.lock().ok()?;
    if let Some(p) = probes.get(addrs.cluster).filter(|p| p.config() == config) {
        return Some(p.clone());
    }
    let target = match addrs.engine {
        Engine::Rocketmq => Target::Rocketmq(RocketMqTarget::new(
            addrs.name_servers.to_vec(),
            &config.topic,
            addrs.timeout,
        )),
        Engine::Kafka => Target::Kafka(Box::new(
            KafkaTarget::new(addrs.bootstrap.to_vec(), &config.topic, addrs.timeout)
                .with_security(addrs.kafka_security.clone()),
        )),
        _ => return None,
    };
    let p = Arc::new(Prober::start(target, config.clone()));
    probes.insert(addrs.cluster.to_string(), p.clone());
    Some(p)
}

/// This cycle's probe findings of the cluster (none when the probe is off or has no results yet).
pub fn findings(
    addrs: &ClusterAddrs<'_>,
    config: &ProbeConfig,
    thresholds: &ProduceFailureThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let Some(p) = prober(addrs, config) else {
        return Vec::new();
    };
    crate::probe_findings(
        addrs.cluster,
        addrs.engine,
        &config.topic,
        &p.summaries(now_ms, thresholds.window.as_millis()),
        p.discovery_error().as_deref(),
        thresholds,
        now_ms,
    )
}

/// `cluster`'s running probe, if one runs (its settings, summaries and discovery error, for an API).
pub fn running(cluster: &str) -> Option<Arc<Prober>> {
    PROBES.lock().ok()?.get(cluster).cloned()
}

/// The per-broker summaries of `cluster`'s running probe over the `window_ms` before `now_ms` (`None` when no
/// probe runs for it), for an API or a dashboard.
pub fn summaries(cluster: &str, now_ms: u64, window_ms: u64) -> Option<Vec<BrokerSummary>> {
    let p = PROBES.lock().ok()?.get(cluster)?.clone();
    Some(p.summaries(now_ms, window_ms))
}

/// `(metric, subject, value)` series values of the summaries (see the module docs).
pub fn series(summaries: &[BrokerSummary]) -> Vec<(&'static str, String, f64)> {
    let mut out = Vec::new();
    for s in summaries {
        let subject = Subject::Node {
            node: s.broker.clone(),
        }
        .to_string();
        for (metric, value) in [
            ("probe_produce_p99_ms", s.produce_p99_ms),
            ("probe_roundtrip_p50_ms", s.roundtrip_p50_ms),
            ("probe_roundtrip_p99_ms", s.roundtrip_p99_ms),
            ("probe_sent", Some(s.sent as f64)),
            ("probe_lost", Some(s.lost as f64)),
        ] {
            if let Some(v) = value {
                out.push((metric, subject.clone(), v));
            }
        }
    }
    out
}
