//! `host_threshold`: the machines under a cluster's nodes, read from their node_exporter, against MQCloud's
//! host thresholds (`[thresholds.host]`): CPU 90 %, memory 90 %, load1 above 80 % of the CPUs, disk usage 80 %,
//! IO busy 60 %, IOPS 10 000, TCP connections 10 000, TIME_WAIT 10 000. It owns the reading of one host
//! ([`HostSample`], what `crates/hosts` produces) and the predicate per measure. A host with measures over
//! their thresholds gets one finding (subject: node `host <endpoint>`, one alarm per host) naming every such
//! measure with its value and threshold in the message and the evidence.

use mqwatch_model::{Engine, Evidence, Finding, FindingKind, NodeRef, NodeRole, Subject};
use serde::{Deserialize, Serialize};

/// One reading of one host. Rates (CPU, IO, network) need two scrapes and are `None` without them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// The node_exporter endpoint (`host:port`) as configured.
    pub host: String,
    /// When it was read (ms since the Unix epoch).
    pub at_ms: u64,
    /// CPUs.
    pub cpus: u32,
    /// CPU busy (not idle, not iowait), percent of all CPUs.
    pub cpu_percent: Option<f64>,
    /// Memory in use (total minus available), percent.
    pub memory_percent: Option<f64>,
    /// 1-minute load average.
    pub load1: Option<f64>,
    /// The fullest filesystem's usage, percent, and its mount point.
    pub disk_percent: Option<f64>,
    /// Mount point of the fullest filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_mount: Option<String>,
    /// The busiest disk's time busy, percent.
    pub io_busy_percent: Option<f64>,
    /// The busiest disk's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_busy_device: Option<String>,
    /// Reads plus writes completed per second, all disks.
    pub iops: Option<f64>,
    /// Bytes received per second, all interfaces but loopback.
    pub net_in_bytes_per_sec: Option<f64>,
    /// Bytes sent per second, all interfaces but loopback.
    pub net_out_bytes_per_sec: Option<f64>,
    /// Established TCP connections.
    pub tcp_connections: Option<f64>,
    /// TCP sockets in TIME_WAIT.
    pub tcp_time_wait: Option<f64>,
}

/// `[thresholds.host]`: MQCloud's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostThresholds {
    /// CPU busy, percent (default 90).
    pub cpu_percent: f64,
    /// Memory in use, percent (default 90).
    pub memory_percent: f64,
    /// Load1 as a percentage of the CPUs (default 80: load1 > cpus × 0.8).
    pub load_percent_of_cpus: f64,
    /// Fullest filesystem, percent (default 80).
    pub disk_percent: f64,
    /// Busiest disk's time busy, percent (default 60).
    pub io_busy_percent: f64,
    /// Disk operations per second (default 10 000).
    pub iops: f64,
    /// Established TCP connections (default 10 000).
    pub tcp_connections: f64,
    /// TIME_WAIT sockets (default 10 000).
    pub tcp_time_wait: f64,
}

impl Default for HostThresholds {
    fn default() -> Self {
        Self {
            cpu_percent: 90.0,
            memory_percent: 90.0,
            load_percent_of_cpus: 80.0,
            disk_percent: 80.0,
            io_busy_percent: 60.0,
            iops: 10_000.0,
            tcp_connections: 10_000.0,
            tcp_time_wait: 10_000.0,
        }
    }
}

/// The subject of a host: node `host <endpoint>`.
pub fn host_node(host: &str) -> NodeRef {
    NodeRef::new(NodeRole::Host, host)
}

/// Each measure of `sample` with its value and threshold, for those present.
pub fn measures(sample: &HostSample, t: &HostThresholds) -> Vec<(&'static str, f64, f64)> {
    let load_percent = match (sample.load1, sample.cpus) {
        (Some(l), c) if c > 0 => Some(l * 100.0 / f64::from(c)),
        _ => None,
    };
    [
        ("cpu_percent", sample.cpu_percent, t.cpu_percent),
        ("memory_percent", sample.memory_percent, t.memory_percent),
        ("load_percent_of_cpus", load_percent, t.load_percent_of_cpus),
        ("disk_percent", sample.disk_percent, t.disk_percent),
        ("io_busy_percent", sample.io_busy_percent, t.io_busy_percent),
        ("iops", sample.iops, t.iops),
        ("tcp_connections", sample.tcp_connections, t.tcp_connections),
        ("tcp_time_wait", sample.tcp_time_wait, t.tcp_time_wait),
    ]
    .into_iter()
    .filter_map(|(name, v, limit)| v.map(|v| (name, v, limit)))
    .collect()
}

/// One `host_threshold` finding per host with a measure above its threshold, listing every such measure.
pub fn check(
    cluster: &str,
    engine: Engine,
    samples: &[HostSample],
    thresholds: &HostThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    samples
        .iter()
        .filter_map(|s| {
            let over: Vec<_> = measures(s, thresholds)
                .into_iter()
                .filter(|(_, v, limit)| v > limit)
                .collect();
            if over.is_empty() {
                return None;
            }
            let mut evidence = Evidence::new();
            let mut parts = Vec::new();
            for (name, v, limit) in &over {
                evidence = evidence
                    .with(name, round(*v))
                    .with(&format!("{name}_threshold"), *limit);
                parts.push(format!("{name} {:.1} > {limit}", v));
            }
            if let Some(m) = &s.disk_mount {
                evidence = evidence.with("disk_mount", m.as_str());
            }
            if let Some(d) = &s.io_busy_device {
                evidence = evidence.with("io_busy_device", d.as_str());
            }
            evidence = evidence.with("cpus", s.cpus);
            Some(
                Finding::new(
                    FindingKind::HostThreshold,
                    cluster,
                    engine,
                    Subject::Node {
                        node: host_node(&s.host),
                    },
                    format!("host {}: {}", s.host, parts.join(", ")),
                    now_ms,
                )
                .with_evidence(evidence),
            )
        })
        .collect()
}

fn round(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> HostSample {
        HostSample {
            host: "10.0.0.1:9100".into(),
            cpus: 4,
            cpu_percent: Some(50.0),
            memory_percent: Some(40.0),
            load1: Some(3.0),
            disk_percent: Some(70.0),
            disk_mount: Some("/".into()),
            tcp_time_wait: Some(20.0),
            ..Default::default()
        }
    }

    #[test]
    fn below_every_threshold_is_quiet() {
        let f = check(
            "c",
            Engine::Rocketmq,
            &[sample()],
            &HostThresholds::default(),
            1,
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn each_measure_over_its_threshold_is_named() {
        let mut s = sample();
        s.load1 = Some(3.3); // 82.5 % of 4 CPUs
        s.disk_percent = Some(85.0);
        let f = check("c", Engine::Kafka, &[s], &HostThresholds::default(), 7);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, FindingKind::HostThreshold);
        assert_eq!(f[0].subject.to_string(), "host 10.0.0.1:9100");
        assert_eq!(
            f[0].evidence.get("disk_percent"),
            Some(&serde_json::json!(85.0))
        );
        assert_eq!(
            f[0].evidence.get("load_percent_of_cpus"),
            Some(&serde_json::json!(82.5))
        );
        assert!(f[0].evidence.get("cpu_percent").is_none());
        assert!(
            f[0].message.contains("disk_percent 85.0 > 80"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn missing_rates_are_not_judged() {
        let s = HostSample {
            host: "h".into(),
            ..Default::default()
        };
        let t = HostThresholds {
            cpu_percent: 0.0,
            ..Default::default()
        };
        assert!(check("c", Engine::Rocketmq, &[s], &t, 1).is_empty());
    }

    #[test]
    fn thresholds_read_with_defaults_and_reject_typos() {
        let t: HostThresholds = serde_json::from_str(r#"{"cpu_percent": 50}"#).unwrap();
        assert_eq!((t.cpu_percent, t.disk_percent), (50.0, 80.0));
        assert!(serde_json::from_str::<HostThresholds>(r#"{"cpu": 50}"#).is_err());
    }
}
