//! Prometheus exposition (text format 0.0.4) of the latest complete cycle of each cluster: rendered from memory
//! on each scrape, so it never waits for a collection or the store (a cluster whose collection hangs keeps its
//! last cycle's values; `mqwatch_last_cycle_timestamp_seconds` shows how old they are). Low cardinality by
//! default: per cluster, per node, per group, per finding kind and severity, per ledger-audit category; never per
//! partition or queue. `[server] metrics_detail = "partition"` opts in to three per-log families (one series per
//! partition or queue, and per group and partition):
//!
//! | name | labels | what |
//! |------|--------|------|
//! | `mqwatch_log_latest_offset` | cluster, topic, partition, broker (RocketMQ) | next offset to be written |
//! | `mqwatch_log_retained_messages` | cluster, topic, partition, broker (RocketMQ) | latest − earliest offset |
//! | `mqwatch_partition_backlog_messages` | cluster, group, topic, partition, broker (RocketMQ) | messages behind |
//!
//! The default families:
//!
//! | name | labels | what |
//! |------|--------|------|
//! | `mqwatch_up` | cluster | 1 when the last cycle could read the cluster as a whole |
//! | `mqwatch_cycle_duration_seconds` | cluster | how long the last cycle took |
//! | `mqwatch_last_cycle_timestamp_seconds` | cluster | when the last cycle started |
//! | `mqwatch_findings` | cluster, kind, severity | findings of the last cycle |
//! | `mqwatch_node_up` | cluster, role, node | 1 when the node answered the last cycle |
//! | `mqwatch_group_backlog_messages` | cluster, group | messages behind, summed over the group's logs |
//! | `mqwatch_ledgers` | cluster, category | BookKeeper audit: ledgers per category (healthy, skipped_open, …) |
//! | `mqwatch_lifecycle_nodes` | cluster, state | nodes registered, active, fenced, in startup, in controlled shutdown |
//! | `mqwatch_lifecycle_degraded` | cluster | 1 when at least one node is fenced |
//! | `mqwatch_lifecycle_longest_pending_startup_seconds` | cluster | the longest pending startup (0: none) |
//! | `mqwatch_lifecycle_longest_pending_controlled_shutdown_seconds` | cluster | likewise for controlled shutdown |

use crate::run::CycleResult;
use mqwatch_model::LogRef;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// `[server] metrics_detail`: how fine `/metrics` goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricsDetail {
    /// Per cluster, node, group, finding kind (default).
    #[default]
    Group,
    /// Also per partition / queue (and per group and partition): one series per log, many on big clusters.
    Partition,
}

/// The `Content-Type` of the exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One metric family being written: its samples follow its `# HELP` and `# TYPE` lines.
struct Family<'a> {
    out: &'a mut String,
    name: &'static str,
}

impl Family<'_> {
    fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        self.out.push_str(self.name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(k);
                self.out.push_str("=\"");
                escape_into(self.out, v);
                self.out.push('"');
            }
            self.out.push('}');
        }
        self.out.push(' ');
        push_number(self.out, value);
        self.out.push('\n');
    }
}

fn family<'a>(out: &'a mut String, name: &'static str, help: &str) -> Family<'a> {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
    Family { out, name }
}

/// Appends a label value with `\`, `"` and newlines escaped.
fn escape_into(out: &mut String, v: &str) {
    if !v.contains(['\\', '"', '\n']) {
        out.push_str(v);
        return;
    }
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn push_number(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        let _ = write!(out, "{v}");
    }
}

/// A log's labels after `cluster` (and `group`): topic, partition (the partition index or queue id, written into
/// `partition`) and, for a RocketMQ queue, broker. `None` for a ledger.
fn log_labels<'a>(log: &'a LogRef, partition: &mut String) -> Option<(&'a str, Option<&'a str>)> {
    partition.clear();
    match log {
        LogRef::Partition {
            topic,
            partition: p,
        } => {
            let _ = write!(partition, "{p}");
            Some((topic, None))
        }
        LogRef::Queue {
            topic,
            broker,
            queue_id,
        } => {
            let _ = write!(partition, "{queue_id}");
            Some((topic, Some(broker)))
        }
        LogRef::Ledger { .. } => None,
    }
}

/// Writes one per-log sample: `head` labels, then topic, partition and (when there is one) broker.
fn log_sample(
    f: &mut Family<'_>,
    head: &[(&str, &str)],
    log: &LogRef,
    partition: &mut String,
    value: f64,
) {
    let Some((topic, broker)) = log_labels(log, partition) else {
        return;
    };
    let mut labels = [("", ""); 5];
    labels[..head.len()].copy_from_slice(head);
    let mut n = head.len();
    labels[n] = ("topic", topic);
    labels[n + 1] = ("partition", partition.as_str());
    n += 2;
    if let Some(b) = broker {
        labels[n] = ("broker", b);
        n += 1;
    }
    f.sample(&labels[..n], value);
}

/// The per-log families of `metrics_detail = "partition"`.
fn render_partitions(out: &mut String, latest: &BTreeMap<String, CycleResult>) {
    let mut partition = String::new();
    let mut f = family(
        out,
        "mqwatch_log_latest_offset",
        "Next offset to be written, per partition or queue.",
    );
    for (name, r) in latest {
        for l in &r.snapshot.logs {
            let head = [("cluster", name.as_str())];
            log_sample(&mut f, &head, &l.log, &mut partition, l.latest as f64);
        }
    }
    let mut f = family(
        out,
        "mqwatch_log_retained_messages",
        "Messages retained (latest minus earliest offset), per partition or queue.",
    );
    for (name, r) in latest {
        for l in &r.snapshot.logs {
            let head = [("cluster", name.as_str())];
            let retained = l.latest.saturating_sub(l.earliest) as f64;
            log_sample(&mut f, &head, &l.log, &mut partition, retained);
        }
    }
    let mut f = family(
        out,
        "mqwatch_partition_backlog_messages",
        "Messages behind per consumer group and partition or queue.",
    );
    for (name, r) in latest {
        for g in &r.snapshot.groups {
            let head = [("cluster", name.as_str()), ("group", g.group.name.as_str())];
            for p in &g.positions {
                if let Some(lag) = p.lag() {
                    log_sample(&mut f, &head, &p.log, &mut partition, lag as f64);
                }
            }
        }
    }
}

/// The exposition of `latest` (cluster name → its last cycle) at `detail`.
pub fn render(latest: &BTreeMap<String, CycleResult>, detail: MetricsDetail) -> String {
    let mut out = String::with_capacity(4096);
    let mut f = family(
        &mut out,
        "mqwatch_up",
        "1 when the last cycle could read the cluster as a whole.",
    );
    for (name, r) in latest {
        let up = super::record::complete(&r.snapshot);
        f.sample(&[("cluster", name)], if up { 1.0 } else { 0.0 });
    }
    let mut f = family(
        &mut out,
        "mqwatch_cycle_duration_seconds",
        "How long the last collection and check cycle took.",
    );
    for (name, r) in latest {
        f.sample(&[("cluster", name)], r.snapshot.cycle_ms as f64 / 1000.0);
    }
    let mut f = family(
        &mut out,
        "mqwatch_last_cycle_timestamp_seconds",
        "When the last cycle started (Unix time).",
    );
    for (name, r) in latest {
        f.sample(&[("cluster", name)], r.snapshot.taken_at_ms as f64 / 1000.0);
    }
    let mut f = family(
        &mut out,
        "mqwatch_findings",
        "Findings of the last cycle per kind and severity.",
    );
    for (name, r) in latest {
        let mut counts: BTreeMap<(&str, &str), u64> = BTreeMap::new();
        for finding in &r.findings {
            *counts
                .entry((finding.kind.as_str(), finding.severity.as_str()))
                .or_default() += 1;
        }
        for ((kind, severity), n) in counts {
            f.sample(
                &[("cluster", name), ("kind", kind), ("severity", severity)],
                n as f64,
            );
        }
    }
    let mut f = family(
        &mut out,
        "mqwatch_node_up",
        "1 when the node answered the last cycle.",
    );
    for (name, r) in latest {
        for n in &r.snapshot.nodes {
            f.sample(
                &[
                    ("cluster", name),
                    ("role", n.node.role.as_str()),
                    ("node", &n.node.name),
                ],
                if n.answered { 1.0 } else { 0.0 },
            );
        }
    }
    let mut f = family(
        &mut out,
        "mqwatch_group_backlog_messages",
        "Messages behind per consumer group, summed over its logs.",
    );
    for (name, r) in latest {
        for g in &r.snapshot.groups {
            let lags: Vec<i64> = g.positions.iter().filter_map(|p| p.lag()).collect();
            if !lags.is_empty() {
                let total: i64 = lags.iter().sum();
                f.sample(&[("cluster", name), ("group", &g.group.name)], total as f64);
            }
        }
    }
    let mut f = family(
        &mut out,
        "mqwatch_ledgers",
        "BookKeeper audit: ledgers per category in the last pass.",
    );
    for (name, r) in latest {
        let Some(audit) = &r.ledgers else { continue };
        if let Ok(serde_json::Value::Object(counts)) = serde_json::to_value(&audit.counts) {
            for (category, n) in counts {
                if let Some(n) = n.as_f64() {
                    f.sample(&[("cluster", name), ("category", &category)], n);
                }
            }
        }
    }
    let mut f = family(
        &mut out,
        "mqwatch_lifecycle_nodes",
        "Nodes per lifecycle state (KIP-748 / KIP-1131 counts).",
    );
    for (name, r) in latest {
        let m = &r.lifecycle.metrics;
        for (state, n) in [
            ("registered", m.registered),
            ("active", m.active),
            ("fenced", m.fenced),
            ("startup", m.in_startup),
            ("controlled_shutdown", m.in_controlled_shutdown),
        ] {
            f.sample(&[("cluster", name), ("state", state)], n as f64);
        }
    }
    let mut f = family(
        &mut out,
        "mqwatch_lifecycle_degraded",
        "1 when at least one node is fenced.",
    );
    for (name, r) in latest {
        let degraded = r.lifecycle.metrics.degraded;
        f.sample(&[("cluster", name)], if degraded { 1.0 } else { 0.0 });
    }
    let mut f = family(
        &mut out,
        "mqwatch_lifecycle_longest_pending_startup_seconds",
        "The longest pending startup (0: none).",
    );
    for (name, r) in latest {
        let ms = r
            .lifecycle
            .metrics
            .longest_pending_startup
            .as_ref()
            .map_or(0, |p| p.pending_ms);
        f.sample(&[("cluster", name)], ms as f64 / 1000.0);
    }
    let mut f = family(
        &mut out,
        "mqwatch_lifecycle_longest_pending_controlled_shutdown_seconds",
        "The longest pending controlled shutdown (0: none).",
    );
    for (name, r) in latest {
        let ms = r
            .lifecycle
            .metrics
            .longest_pending_controlled_shutdown
            .as_ref()
            .map_or(0, |p| p.pending_ms);
        f.sample(&[("cluster", name)], ms as f64 / 1000.0);
    }
    if detail == MetricsDetail::Partition {
        render_partitions(&mut out, latest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Lifecycle;
    use mqwatch_model::{
        ClusterSnapshot, CollectorErrorRecord, Engine, Finding, FindingKind, NodeRef, NodeRole,
        NodeStatus, Subject,
    };
    use mqwatch_stats::lifecycle::LifecycleMetrics;

    #[test]
    fn partition_detail_is_opt_in() {
        use mqwatch_model::{GroupPosition, GroupRef, GroupStatus, LogStatus};
        let queue = LogRef::Queue {
            topic: "orders".into(),
            broker: "broker-a".into(),
            queue_id: 3,
        };
        let partition = LogRef::Partition {
            topic: "events".into(),
            partition: 7,
        };
        let snapshot = ClusterSnapshot {
            cluster: "c".into(),
            logs: vec![
                LogStatus {
                    log: queue.clone(),
                    earliest: 10,
                    latest: 110,
                },
                LogStatus {
                    log: partition.clone(),
                    earliest: 0,
                    latest: 5,
                },
                LogStatus {
                    log: LogRef::Ledger { id: 1 },
                    earliest: 0,
                    latest: 5,
                },
            ],
            groups: vec![GroupStatus {
                group: GroupRef::new("g1"),
                positions: vec![GroupPosition {
                    log: queue,
                    earliest: 10,
                    latest: 110,
                    committed: Some(70),
                    oldest_unconsumed_age_ms: None,
                    age_source: None,
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let result = CycleResult {
            snapshot,
            findings: Vec::new(),
            lifecycle: Lifecycle {
                metrics: LifecycleMetrics {
                    longest_pending_startup: None,
                    in_startup: 0,
                    longest_pending_controlled_shutdown: None,
                    in_controlled_shutdown: 0,
                    fenced: 0,
                    active: 0,
                    registered: 0,
                    degraded: false,
                },
                nodes: Vec::new(),
            },
            ledgers: None,
            lag_status: Vec::new(),
            produced_from_offsets: Default::default(),
        };
        let latest = BTreeMap::from([("c".to_string(), result)]);
        let coarse = render(&latest, MetricsDetail::Group);
        assert!(coarse.contains(r#"mqwatch_group_backlog_messages{cluster="c",group="g1"} 40"#));
        assert!(!coarse.contains("partition="), "{coarse}");
        let fine = render(&latest, MetricsDetail::Partition);
        for line in [
            r#"mqwatch_log_latest_offset{cluster="c",topic="orders",partition="3",broker="broker-a"} 110"#,
            r#"mqwatch_log_retained_messages{cluster="c",topic="orders",partition="3",broker="broker-a"} 100"#,
            r#"mqwatch_log_latest_offset{cluster="c",topic="events",partition="7"} 5"#,
            r#"mqwatch_partition_backlog_messages{cluster="c",group="g1",topic="orders",partition="3",broker="broker-a"} 40"#,
        ] {
            assert!(fine.lines().any(|l| l == line), "{line} missing in\n{fine}");
        }
        assert_eq!(
            fine.lines()
                .filter(|l| l.starts_with("mqwatch_log_latest_offset{"))
                .count(),
            2,
            "a ledger is not a partition: {fine}"
        );
        assert!(fine.starts_with(&coarse), "the detail only adds families");
        let detail: MetricsDetail = serde_json::from_str("\"partition\"").unwrap();
        assert_eq!(detail, MetricsDetail::Partition);
        assert!(serde_json::from_str::<MetricsDetail>("\"queue\"").is_err());
    }

    #[test]
    fn renders_each_family_once_with_escaped_labels() {
        let snapshot = ClusterSnapshot {
            cluster: "a\"b".into(),
            taken_at_ms: 1_500,
            cycle_ms: 250,
            nodes: vec![NodeStatus {
                node: NodeRef::new(NodeRole::Bookie, "127.0.0.1:3181"),
                registration: None,
                expected: false,
                answered: false,
                error: None,
                last_answer_ms: None,
                replica_of: None,
                store_max_offset: None,
            }],
            errors: vec![CollectorErrorRecord {
                node: None,
                request: "connect".into(),
                error: "refused".into(),
            }],
            ..Default::default()
        };
        let finding = Finding::new(
            FindingKind::CollectorError,
            "a\"b",
            Engine::Bookkeeper,
            Subject::Cluster,
            "refused",
            1_500,
        );
        let result = CycleResult {
            snapshot,
            findings: vec![finding.clone(), finding],
            lifecycle: Lifecycle {
                metrics: LifecycleMetrics {
                    longest_pending_startup: None,
                    in_startup: 0,
                    longest_pending_controlled_shutdown: None,
                    in_controlled_shutdown: 0,
                    fenced: 1,
                    active: 2,
                    registered: 3,
                    degraded: true,
                },
                nodes: Vec::new(),
            },
            ledgers: None,
            lag_status: Vec::new(),
            produced_from_offsets: Default::default(),
        };
        let text = render(
            &BTreeMap::from([("a\"b".to_string(), result)]),
            MetricsDetail::Group,
        );
        for line in [
            r#"mqwatch_up{cluster="a\"b"} 0"#,
            r#"mqwatch_cycle_duration_seconds{cluster="a\"b"} 0.25"#,
            r#"mqwatch_last_cycle_timestamp_seconds{cluster="a\"b"} 1.5"#,
            r#"mqwatch_findings{cluster="a\"b",kind="collector_error",severity="warning"} 2"#,
            r#"mqwatch_node_up{cluster="a\"b",role="bookie",node="127.0.0.1:3181"} 0"#,
            r#"mqwatch_lifecycle_nodes{cluster="a\"b",state="fenced"} 1"#,
            r#"mqwatch_lifecycle_degraded{cluster="a\"b"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
        assert_eq!(text.matches("# TYPE mqwatch_up gauge").count(), 1);
        assert_eq!(
            render(&BTreeMap::new(), MetricsDetail::Group)
                .lines()
                .count(),
            22,
            "help and type only"
        );
    }
}
