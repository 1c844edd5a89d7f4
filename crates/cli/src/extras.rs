//! What a cycle adds beyond the engine's collector, and what `serve`'s client-report intake shares with it:
//! the cluster's hosts (node_exporter, [`mqwatch_hosts`]) judged by `host_threshold`, and the producers' own
//! reports ([`crate::clients`]) judged by `produce_failure`. [`cycle_findings`] is called once per cycle by
//! [`crate::run::cycle`] (so `check` sees hosts too); `serve` attaches its store ([`attach_store`]) so host
//! readings and client minutes become series rows, and its intake adds reports ([`add_report`]).
//!
//! The state lives in one process-wide registry keyed by cluster name, so the wiring into `run` and `serve`
//! stays a line each. Host series rows: `host_cpu_percent`, `host_memory_percent`, `host_load1`,
//! `host_disk_percent`, `host_io_busy_percent`, `host_iops`, `host_net_in_bytes_per_sec`,
//! `host_net_out_bytes_per_sec`, `host_tcp_connections`, `host_tcp_time_wait`, subject `host <endpoint>`.

use crate::clients::ClientMinutes;
use crate::config::ClusterConfig;
use mqwatch_checks::Thresholds;
use mqwatch_checks::hosts::{HostSample, host_node};
use mqwatch_client::Report;
use mqwatch_hosts::{HostCollector, HostReading};
use mqwatch_model::{Evidence, Finding, FindingKind, Subject};
use mqwatch_stats::histogram::Snapshot;
use mqwatch_store::{SeriesPoint, Store};
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

/// This cycle's findings from the cluster's hosts and its producers' reports.
pub async fn cycle_findings(
    cluster: &ClusterConfig,
    thresholds: &Thresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut findings = host_findings(cluster, thresholds, now_ms).await;
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
    findings
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
