//! Client reports merged on the server: per cluster and minute, one cell per (topic, broker, client) holding the
//! merged latency histogram and the send outcomes. From the cells come the per-minute series rows (per topic,
//! broker, client and the cluster as a whole), the `produce_failure` windows, and the API's summaries. An hour
//! of minutes is kept in memory; the store keeps the series.
//!
//! Series rows of a minute (values in ms, from the merged histograms; rewritten as reports of the minute arrive):
//!
//! | metric | subject |
//! | --- | --- |
//! | `produce_latency_p50_ms`, `_p90_ms`, `_p99_ms`, `_p999_ms`, `_avg_ms`, `_max_ms` | `topic <t>`, `broker <b>`, `client <id>`, (empty: the cluster) |
//! | `produce_sends`, `produce_failures` | the same subjects |

use mqwatch_checks::produce::ProduceWindow;
use mqwatch_client::{ErrorKind, Report};
use mqwatch_stats::histogram::Snapshot;
use mqwatch_store::SeriesPoint;
use serde::Serialize;
use std::collections::BTreeMap;

const MINUTE_MS: u64 = 60_000;
/// Minutes kept in memory.
const KEEP_MINUTES: u64 = 60;

/// (topic, broker, client id).
type CellKey = (String, String, String);

/// One (topic, broker, client) in one minute.
#[derive(Debug, Clone, Default)]
struct Cell {
    latency: Snapshot,
    success: u64,
    errors: BTreeMap<ErrorKind, u64>,
}

impl Cell {
    fn merge(&mut self, other: &Cell) {
        self.latency.merge(&other.latency);
        self.success += other.success;
        for (k, n) in &other.errors {
            *self.errors.entry(*k).or_default() += n;
        }
    }

    fn failures(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// A merged view of some cells, as the API shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProduceSummary {
    /// Successful sends.
    pub sends: u64,
    /// Failed sends.
    pub failures: u64,
    /// Failed sends by kind.
    pub failures_by_kind: BTreeMap<ErrorKind, u64>,
    /// Latency of successful sends, ms.
    pub latency_ms: LatencyMs,
}

/// Latency figures in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct LatencyMs {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Mean.
    pub avg: f64,
    /// Maximum.
    pub max: f64,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn summarize(cell: &Cell) -> ProduceSummary {
    let s = cell.latency.summary();
    ProduceSummary {
        sends: cell.success,
        failures: cell.failures(),
        failures_by_kind: cell.errors.clone(),
        latency_ms: LatencyMs {
            p50: ms(s.p50_ns),
            p90: ms(s.p90_ns),
            p99: ms(s.p99_ns),
            p999: ms(s.p999_ns),
            avg: ms(s.mean_ns),
            max: ms(s.max_ns),
        },
    }
}

/// Every cluster's recent minutes of client reports.
#[derive(Debug, Default)]
pub struct ClientMinutes {
    minutes: BTreeMap<(String, u64), BTreeMap<CellKey, Cell>>,
}

/// The views of some cells merged by topic, broker, client and for the cluster.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Views {
    /// Per topic.
    pub topics: BTreeMap<String, ProduceSummary>,
    /// Per broker.
    pub brokers: BTreeMap<String, ProduceSummary>,
    /// Per client id.
    pub clients: BTreeMap<String, ProduceSummary>,
    /// The whole cluster.
    pub cluster: Option<ProduceSummary>,
}

impl ClientMinutes {
    /// Merges one decoded report of `cluster` (its histograms in `latencies`, entry by entry) into the minute its
    /// interval's midpoint falls in; returns that minute. Minutes older than an hour before it are dropped.
    pub fn add(&mut self, cluster: &str, report: &Report, latencies: &[Snapshot]) -> u64 {
        let mid = report.start_ms + report.end_ms.saturating_sub(report.start_ms) / 2;
        let minute = mid - mid % MINUTE_MS;
        let cells = self
            .minutes
            .entry((cluster.to_string(), minute))
            .or_default();
        for (entry, latency) in report.entries.iter().zip(latencies) {
            let key = (
                entry.topic.clone(),
                entry.broker.clone(),
                report.client_id.clone(),
            );
            cells.entry(key).or_default().merge(&Cell {
                latency: latency.clone(),
                success: entry.success,
                errors: entry.errors.clone(),
            });
        }
        let oldest = minute.saturating_sub(KEEP_MINUTES * MINUTE_MS);
        self.minutes.retain(|(_, m), _| *m >= oldest);
        minute
    }

    fn cells<'a>(
        &'a self,
        cluster: &'a str,
        from_ms: u64,
        to_ms: u64,
    ) -> impl Iterator<Item = (&'a CellKey, &'a Cell)> + 'a {
        self.minutes
            .range(
                (cluster.to_string(), from_ms - from_ms % MINUTE_MS)..(cluster.to_string(), to_ms),
            )
            .flat_map(|(_, cells)| cells.iter())
    }

    /// The cells of `cluster` in minutes starting in `[from_ms, to_ms)`, merged per topic, broker, client and
    /// for the cluster.
    pub fn views(&self, cluster: &str, from_ms: u64, to_ms: u64) -> Views {
        let mut topics: BTreeMap<String, Cell> = BTreeMap::new();
        let mut brokers: BTreeMap<String, Cell> = BTreeMap::new();
        let mut clients: BTreeMap<String, Cell> = BTreeMap::new();
        let mut all: Option<Cell> = None;
        for ((topic, broker, client), cell) in self.cells(cluster, from_ms, to_ms) {
            topics.entry(topic.clone()).or_default().merge(cell);
            brokers.entry(broker.clone()).or_default().merge(cell);
            clients.entry(client.clone()).or_default().merge(cell);
            all.get_or_insert_with(Cell::default).merge(cell);
        }
        let map =
            |m: BTreeMap<String, Cell>| m.into_iter().map(|(k, c)| (k, summarize(&c))).collect();
        Views {
            topics: map(topics),
            brokers: map(brokers),
            clients: map(clients),
            cluster: all.as_ref().map(summarize),
        }
    }

    /// The series rows of one minute of `cluster` (see the module docs).
    pub fn rows(&self, cluster: &str, minute_ms: u64) -> Vec<SeriesPoint> {
        let v = self.views(cluster, minute_ms, minute_ms + 1);
        let mut points = Vec::new();
        let subjects = v
            .topics
            .iter()
            .map(|(t, s)| (format!("topic {t}"), s))
            .chain(v.brokers.iter().map(|(b, s)| (format!("broker {b}"), s)))
            .chain(v.clients.iter().map(|(c, s)| (format!("client {c}"), s)))
            .chain(v.cluster.iter().map(|s| (String::new(), s)));
        for (subject, s) in subjects {
            let mut push = |metric: &str, value: f64| {
                points.push(SeriesPoint::new(
                    cluster,
                    metric,
                    subject.clone(),
                    minute_ms,
                    value,
                ));
            };
            push("produce_sends", s.sends as f64);
            push("produce_failures", s.failures as f64);
            if s.sends > 0 {
                let l = s.latency_ms;
                push("produce_latency_p50_ms", l.p50);
                push("produce_latency_p90_ms", l.p90);
                push("produce_latency_p99_ms", l.p99);
                push("produce_latency_p999_ms", l.p999);
                push("produce_latency_avg_ms", l.avg);
                push("produce_latency_max_ms", l.max);
            }
        }
        points
    }

    /// Per topic of `cluster`, what its producers did in minutes starting in `[from_ms, to_ms)`.
    pub fn windows(&self, cluster: &str, from_ms: u64, to_ms: u64) -> Vec<ProduceWindow> {
        let mut out: BTreeMap<&str, ProduceWindow> = BTreeMap::new();
        for ((topic, broker, client), cell) in self.cells(cluster, from_ms, to_ms) {
            let w = out.entry(topic).or_insert_with(|| ProduceWindow {
                topic: topic.clone(),
                ..Default::default()
            });
            w.success += cell.success;
            for (k, n) in &cell.errors {
                *w.failures.entry(k.as_str().to_string()).or_default() += n;
            }
            if cell.failures() > 0 {
                w.brokers.insert(broker.clone());
                w.clients.insert(client.clone());
            }
        }
        out.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_client::{Entry, PAYLOAD_VERSION};
    use mqwatch_stats::histogram::Histogram;

    fn report(client: &str, values_ms: &[u64], timeouts: u64) -> (Report, Vec<Snapshot>) {
        let h = Histogram::new();
        for v in values_ms {
            h.record(v * 1_000_000);
        }
        let errors = if timeouts > 0 {
            [(ErrorKind::Timeout, timeouts)].into()
        } else {
            BTreeMap::new()
        };
        let r = Report {
            version: PAYLOAD_VERSION,
            client_id: client.into(),
            address: "10.0.0.1".into(),
            cluster: None,
            start_ms: 120_000,
            end_ms: 180_000,
            dropped_reports: 0,
            entries: vec![Entry::new(
                "orders",
                "b1",
                values_ms.len() as u64,
                errors,
                &h.snapshot(),
            )],
        };
        let (r, l) = Report::from_json(&r.to_json()).unwrap();
        (r, l)
    }

    #[test]
    fn merges_clients_into_minute_rows_and_failure_windows() {
        let mut m = ClientMinutes::default();
        let (a, la) = report("app@1", &[1, 2, 3, 4], 0);
        let (b, lb) = report("app@2", &[5, 6, 7, 8, 9, 10], 2);
        assert_eq!(m.add("c", &a, &la), 120_000);
        m.add("c", &b, &lb);
        let rows = m.rows("c", 120_000);
        let get = |metric: &str, subject: &str| {
            rows.iter()
                .find(|p| p.metric == metric && p.subject == subject)
                .map(|p| p.value)
        };
        assert_eq!(get("produce_sends", "topic orders"), Some(10.0));
        assert_eq!(get("produce_failures", "client app@2"), Some(2.0));
        let p50 = get("produce_latency_p50_ms", "topic orders").unwrap();
        assert!((p50 - 5.0).abs() <= 5.0 / 64.0, "{p50}");
        assert_eq!(get("produce_latency_max_ms", ""), Some(10.0));
        let w = m.windows("c", 0, 600_000);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].failures.get("timeout"), Some(&2));
        assert!(w[0].clients.contains("app@2") && !w[0].clients.contains("app@1"));
        assert!(m.windows("other", 0, 600_000).is_empty());
        assert!(m.windows("c", 180_000, 600_000).is_empty());
    }
}
