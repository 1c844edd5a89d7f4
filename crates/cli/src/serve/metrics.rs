//! Prometheus exposition (text format 0.0.4) of the latest complete cycle of each cluster: rendered from memory
//! on each scrape, so it never waits for a collection or the store. Low cardinality: per cluster, per node, per
//! group, per finding kind and severity, per ledger-audit category; never per partition or queue.
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
use std::collections::BTreeMap;
use std::fmt::Write;

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
                let _ = write!(self.out, "{k}=\"{}\"", escape(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(value));
    }
}

fn family<'a>(out: &'a mut String, name: &'static str, help: &str) -> Family<'a> {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
    Family { out, name }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        v.to_string()
    }
}

/// The exposition of `latest` (cluster name → its last cycle).
pub fn render(latest: &BTreeMap<String, CycleResult>) -> String {
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
        };
        let text = render(&BTreeMap::from([("a\"b".to_string(), result)]));
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
            render(&BTreeMap::new()).lines().count(),
            22,
            "help and type only"
        );
    }
}
