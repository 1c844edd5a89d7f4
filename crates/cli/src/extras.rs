//! What a cycle adds beyond the engine's collector, and what `serve`'s client-report intake shares with it:
//! the cluster's hosts (node_exporter, [`mqwatch_hosts`]) judged by `host_threshold`, the producers' own
//! reports ([`crate::clients`]) judged by `produce_failure`, and, where a store keeps history, each topic's
//! last minute against its recent daily maxima (`traffic_surge`). [`cycle_findings`] is called once per cycle by
//! [`crate::run::cycle`] (so `check` sees hosts too); `serve` attaches its store ([`attach_store`]) so host
//! readings and client minutes become series rows, and its intake adds reports ([`add_report`]).
//!
//! The state lives in one process-wide registry keyed by cluster name, so the wiring into `run` and `serve`
//! stays a line each. The end-to-end probe ([`mqwatch_probe`], `[cluster.probe]`) adds its findings and, with a
//! store, the series rows `probe_produce_p99_ms`, `probe_roundtrip_p50_ms`, `probe_roundtrip_p99_ms`,
//! `probe_sent`, `probe_lost` (subject `broker <name>`, over the last cluster interval). Host series rows: `host_cpu_percent`, `host_memory_percent`, `host_load1`,
//! `host_disk_percent`, `host_io_busy_percent`, `host_iops`, `host_net_in_bytes_per_sec`,
//! `host_net_out_bytes_per_sec`, `host_tcp_connections`, `host_tcp_time_wait`, subject `host <endpoint>`.

use crate::clients::ClientMinutes;
use crate::config::ClusterConfig;
use mqwatch_checks::Thresholds;
use mqwatch_checks::hosts::{HostSample, host_node};
use mqwatch_checks::surge::TopicTraffic;
use mqwatch_client::Report;
use mqwatch_hosts::{HostCollector, HostReading};
use mqwatch_model::{ClusterSnapshot, Evidence, Finding, FindingKind, Subject, TrafficMetric};
use mqwatch_stats::histogram::Snapshot;
use mqwatch_store::{DAY_MS, Resolution, SeriesPoint, SeriesQuery, Store};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, RwLock};

/// The process-wide registry.
#[derive(Default)]
struct Extras {
    store: OnceLock<Store>,
    hosts: Mutex<HashMap<String, Arc<HostCollector>>>,
    latest_hosts: RwLock<BTreeMap<String, Vec<HostRow>>>,
    clients: Mutex<ClientMinutes>,
}

static EXTRAS: LazyLock<Extras> = LazyLock::new(Extras::default);

/// One host's latest reading, as the API shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostRow {
    /// The endpoint.
    pub host: String,
    /// The reading, when the host answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<HostSample>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Lets the registry write series rows (called once by `serve`).
pub fn attach_store(store: Store) {
    let _ = EXTRAS.store.set(store);
}

/// The latest host readings of `cluster`.
pub fn hosts(cluster: &str) -> Option<Vec<HostRow>> {
    EXTRAS.latest_hosts.read().ok()?.get(cluster).cloned()
}

/// Merges a decoded client report of `cluster` and, with a store attached, rewrites that minute's series rows.
pub async fn add_report(
    cluster: &str,
    report: &Report,
    latencies: &[Snapshot],
) -> anyhow::Result<()> {
    let rows = {
        let mut clients = EXTRAS
            .clients
            .lock()
            .map_err(|_| anyhow::anyhow!("client reports poisoned"))?;
        let minute = clients.add(cluster, report, latencies);
        clients.rows(cluster, minute)
    };
    if let Some(store) = EXTRAS.store.get() {
        store.insert_minutes(&rows).await?;
    }
    Ok(())
}

/// The merged client views of `cluster` over `[from_ms, to_ms)`.
pub fn client_views(cluster: &str, from_ms: u64, to_ms: u64) -> crate::clients::Views {
    EXTRAS
        .clients
        .lock()
        .map(|c| c.views(cluster, from_ms, to_ms))
        .unwrap_or_default()
}

/// This cycle's findings from the cluster's hosts, its producers' reports and its traffic history.
pub async fn cycle_findings(
    cluster: &ClusterConfig,
    kafka_security: &mqwatch_kafka::client::Security,
    snapshot: &ClusterSnapshot,
    thresholds: &Thresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut findings = host_findings(cluster, thresholds, now_ms).await;
    if let Some(store) = EXTRAS.store.get() {
        match surge_inputs(store, snapshot, thresholds.traffic_surge.days, now_ms).await {
            Ok(topics) => findings.extend(mqwatch_checks::surge::traffic_surge(
                &cluster.name,
                cluster.engine,
                &topics,
                &thresholds.traffic_surge,
                now_ms,
            )),
            Err(e) => {
                tracing::warn!(cluster = %cluster.name, "cannot read daily traffic maxima: {e}")
            }
        }
    }
    let windows = EXTRAS
        .clients
        .lock()
        .map(|c| {
            c.windows(
                &cluster.name,
                now_ms.saturating_sub(thresholds.produce_failure.window.as_millis()),
                now_ms + 1,
            )
        })
        .unwrap_or_default();
    findings.extend(mqwatch_checks::produce::produce_failure(
        &cluster.name,
        cluster.engine,
        &windows,
        &thresholds.produce_failure,
        now_ms,
    ));
    findings.extend(probe_findings(cluster, kafka_security, thresholds, now_ms).await);
    findings
}

/// The end-to-end probe's findings of `cluster` (started on the first call when `[cluster.probe]` enables it;
/// [`mqwatch_probe::registry`]), with its per-broker series rows written to the store. Only in `serve` (the
/// process with a store attached): a one-shot `check` would write to the cluster and end before any probe
/// message is judged.
async fn probe_findings(
    cluster: &ClusterConfig,
    kafka_security: &mqwatch_kafka::client::Security,
    thresholds: &Thresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let Some(store) = EXTRAS.store.get() else {
        return Vec::new();
    };
    if !cluster.probe.enabled || cluster.source != crate::config::Source::Network {
        return Vec::new();
    }
    let addrs = mqwatch_probe::registry::ClusterAddrs {
        cluster: &cluster.name,
        engine: cluster.engine,
        name_servers: &cluster.name_servers,
        bootstrap: &cluster.bootstrap,
        timeout: cluster.timeout.0,
        kafka_security,
    };
    let findings = mqwatch_probe::registry::findings(
        &addrs,
        &cluster.probe,
        &thresholds.produce_failure,
        now_ms,
    );
    if let Some(p) = mqwatch_probe::registry::prober(&addrs, &cluster.probe) {
        let points: Vec<SeriesPoint> =
            mqwatch_probe::registry::series(&p.summaries(now_ms, cluster.interval.as_millis()))
                .into_iter()
                .map(|(metric, subject, v)| {
                    SeriesPoint::new(&cluster.name, metric, subject, now_ms, v)
                })
                .collect();
        if let Err(e) = store.insert_minutes(&points).await {
            tracing::warn!(cluster = %cluster.name, "cannot write probe series rows: {e}");
        }
    }
    findings
}

/// Each topic's produced messages in the snapshot's last minute, with the daily maxima of the `days` days
/// before today from the store's day rollups of `produce_messages`.
pub async fn surge_inputs(
    store: &Store,
    snapshot: &ClusterSnapshot,
    days: u32,
    now_ms: u64,
) -> anyhow::Result<Vec<TopicTraffic>> {
    let mut last: BTreeMap<&str, f64> = BTreeMap::new();
    for t in &snapshot.traffic {
        if let (TrafficMetric::ProduceMessages, Some(topic), None) =
            (t.metric, t.topic.as_deref(), t.group.as_deref())
        {
            *last.entry(topic).or_default() += t.last_minute as f64;
        }
    }
    if last.is_empty() || days == 0 {
        return Ok(Vec::new());
    }
    let today = now_ms - now_ms % DAY_MS;
    let rollups = store
        .rollups(
            Resolution::Day,
            &SeriesQuery {
                cluster: snapshot.cluster.clone(),
                metric: "produce_messages".into(),
                subject: None,
                from_ms: today.saturating_sub(u64::from(days) * DAY_MS),
                to_ms: today,
            },
        )
        .await?;
    let mut maxima: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in &rollups {
        if let Some(topic) = r.subject.strip_prefix("topic ") {
            maxima.entry(topic).or_default().push(r.max);
        }
    }
    Ok(last
        .into_iter()
        .map(|(topic, v)| TopicTraffic {
            topic: topic.to_string(),
            last_minute: v,
            daily_maxima: maxima.remove(topic).unwrap_or_default(),
        })
        .collect())
}

async fn host_findings(
    cluster: &ClusterConfig,
    thresholds: &Thresholds,
    now_ms: u64,
) -> Vec<Finding> {
    if cluster.hosts.is_empty() {
        return Vec::new();
    }
    let collector = EXTRAS
        .hosts
        .lock()
        .map(|mut h| {
            h.entry(cluster.name.clone())
                .or_insert_with(|| Arc::new(HostCollector::new(cluster.timeout.0)))
                .clone()
        })
        .unwrap_or_else(|_| Arc::new(HostCollector::new(cluster.timeout.0)));
    let readings = collector.collect(&cluster.hosts).await;
    let mut samples = Vec::new();
    let mut findings = Vec::new();
    let mut rows = Vec::new();
    for (host, reading) in cluster.hosts.iter().zip(readings) {
        match reading {
            HostReading::Sample(s) => {
                rows.push(HostRow {
                    host: host.clone(),
                    sample: Some(s.clone()),
                    error: None,
                });
                samples.push(s);
            }
            HostReading::Error(e) => {
                findings.push(
                    Finding::new(
                        FindingKind::CollectorError,
                        &cluster.name,
                        cluster.engine,
                        Subject::Node {
                            node: host_node(host),
                        },
                        e.to_string(),
                        now_ms,
                    )
                    .with_evidence(Evidence::new().with("request", format!("GET {}", e.url))),
                );
                rows.push(HostRow {
                    host: host.clone(),
                    sample: None,
                    error: Some(e.to_string()),
                });
            }
        }
    }
    findings.extend(mqwatch_checks::hosts::check(
        &cluster.name,
        cluster.engine,
        &samples,
        &thresholds.host,
        now_ms,
    ));
    if let Some(store) = EXTRAS.store.get()
        && let Err(e) = store
            .insert_minutes(&host_points(&cluster.name, &samples, now_ms))
            .await
    {
        tracing::warn!(cluster = %cluster.name, "cannot write host series rows: {e}");
    }
    if let Ok(mut latest) = EXTRAS.latest_hosts.write() {
        latest.insert(cluster.name.clone(), rows);
    }
    findings
}

/// The series rows of host readings (see the module docs).
pub fn host_points(cluster: &str, samples: &[HostSample], now_ms: u64) -> Vec<SeriesPoint> {
    let mut points = Vec::new();
    for s in samples {
        let subject = host_node(&s.host).to_string();
        for (metric, value) in [
            ("host_cpu_percent", s.cpu_percent),
            ("host_memory_percent", s.memory_percent),
            ("host_load1", s.load1),
            ("host_disk_percent", s.disk_percent),
            ("host_io_busy_percent", s.io_busy_percent),
            ("host_iops", s.iops),
            ("host_net_in_bytes_per_sec", s.net_in_bytes_per_sec),
            ("host_net_out_bytes_per_sec", s.net_out_bytes_per_sec),
            ("host_tcp_connections", s.tcp_connections),
            ("host_tcp_time_wait", s.tcp_time_wait),
        ] {
            if let Some(v) = value {
                points.push(SeriesPoint::new(
                    cluster,
                    metric,
                    subject.clone(),
                    now_ms,
                    v,
                ));
            }
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{NodeRef, NodeRole, TrafficSample};
    use mqwatch_store::StoreUrl;

    #[tokio::test]
    async fn surge_inputs_read_the_previous_days_maxima_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&StoreUrl::Sqlite(dir.path().join("s.db")))
            .await
            .unwrap();
        let today = 1_764_460_800_000 - 1_764_460_800_000 % DAY_MS;
        let minute = |day: u64, m: u64, v: f64| {
            SeriesPoint::new(
                "c",
                "produce_messages",
                "topic orders",
                today - day * DAY_MS + m * 60_000,
                v,
            )
        };
        store
            .insert_minutes(&[
                minute(1, 0, 100.0),
                minute(1, 5, 900.0),
                minute(2, 3, 1_500.0),
                minute(9, 0, 1e6),
            ])
            .await
            .unwrap();
        store.roll_up(today - 10 * DAY_MS, today).await.unwrap();
        let snapshot = ClusterSnapshot {
            cluster: "c".into(),
            traffic: [("orders", 4_000), ("fresh", 10)]
                .into_iter()
                .map(|(t, n)| TrafficSample {
                    metric: TrafficMetric::ProduceMessages,
                    topic: Some(t.into()),
                    group: None,
                    node: NodeRef::new(NodeRole::Broker, "b:0"),
                    last_minute: n,
                    minute_avg: 0.0,
                })
                .collect(),
            ..Default::default()
        };
        let now = today + 3_600_000;
        let mut inputs = surge_inputs(&store, &snapshot, 7, now).await.unwrap();
        inputs.sort_by(|a, b| a.topic.cmp(&b.topic));
        assert_eq!(inputs[0].topic, "fresh");
        assert!(inputs[0].daily_maxima.is_empty());
        let mut maxima = inputs[1].daily_maxima.clone();
        maxima.sort_by(f64::total_cmp);
        assert_eq!(maxima, vec![900.0, 1_500.0], "day 9 is outside the 7 days");
        let f = mqwatch_checks::surge::traffic_surge(
            "c",
            mqwatch_model::Engine::Rocketmq,
            &inputs,
            &Default::default(),
            now,
        );
        assert_eq!(f.len(), 1, "4 000 > 2 x 1 500: {f:?}");
        assert_eq!(f[0].subject.to_string(), "topic orders");
    }
}
