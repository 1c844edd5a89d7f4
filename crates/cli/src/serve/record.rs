//! What `serve` keeps of each finished cycle: the findings history, the alarm lifecycle's changes (evaluated
//! against the stored alarms and active silences, written in one transaction), and a handful of low-cardinality
//! per-minute series rows taken from the snapshot:
//!
//! | metric             | subject          | value                                                     |
//! |--------------------|------------------|-----------------------------------------------------------|
//! | `backlog`          | `group <g>`      | messages behind, summed over the group's logs              |
//! | `backlog_age_ms`   | `group <g>`      | age of the oldest unconsumed message over the group's logs |
//! | `produce_messages` | `topic <t>`      | messages produced in the last minute, summed over brokers  |
//! |                    |                  | (from offsets where the collector reads no counters: Kafka) |
//! | `node_up`          | the node         | 1 when it answered this cycle, else 0                     |
//! | `findings`         | (empty)          | findings this cycle                                       |

use crate::run::CycleResult;
use anyhow::{Context, Result};
use mqwatch_alert::{Alerting, Cycle, Outcome};
use mqwatch_model::{ClusterSnapshot, NodeRole, TrafficMetric};
use mqwatch_store::{SeriesPoint, Store};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Whether a cycle saw its whole cluster, so that alarms of the cluster without a finding this cycle resolve.
/// Not when the cluster as a whole could not be read (an error naming no node, e.g. ZooKeeper unreachable), nor
/// when it has name servers and none answered: then only what was seen is updated.
pub fn complete(snapshot: &ClusterSnapshot) -> bool {
    if snapshot.errors.iter().any(|e| e.node.is_none()) {
        return false;
    }
    let mut registries = snapshot
        .nodes
        .iter()
        .filter(|n| n.node.role == NodeRole::NameServer)
        .peekable();
    registries.peek().is_none() || registries.any(|n| n.answered)
}

/// The series rows of one cycle (see the module docs), at the snapshot's minute.
pub fn series_points(result: &CycleResult) -> Vec<SeriesPoint> {
    let s = &result.snapshot;
    let at = s.taken_at_ms;
    let point = |metric: &str, subject: String, value: f64| {
        SeriesPoint::new(&s.cluster, metric, subject, at, value)
    };
    let mut points = Vec::new();
    for g in &s.groups {
        let lags: Vec<i64> = g.positions.iter().filter_map(|p| p.lag()).collect();
        if !lags.is_empty() {
            let total: i64 = lags.iter().sum();
            points.push(point(
                "backlog",
                format!("group {}", g.group.name),
                total as f64,
            ));
        }
        let age = g
            .positions
            .iter()
            .filter_map(|p| p.oldest_unconsumed_age_ms)
            .max();
        if let Some(age) = age {
            points.push(point(
                "backlog_age_ms",
                format!("group {}", g.group.name),
                age as f64,
            ));
        }
    }
    let mut produced: BTreeMap<&str, u64> = BTreeMap::new();
    for t in &s.traffic {
        if let (TrafficMetric::ProduceMessages, Some(topic), None) =
            (t.metric, t.topic.as_deref(), t.group.as_deref())
        {
            *produced.entry(topic).or_default() += t.last_minute;
        }
    }
    if produced.is_empty() {
        produced = result
            .produced_from_offsets
            .iter()
            .map(|(t, n)| (t.as_str(), *n))
            .collect();
    }
    for (topic, n) in produced {
        points.push(point(
            "produce_messages",
            format!("topic {topic}"),
            n as f64,
        ));
    }
    for n in &s.nodes {
        points.push(point(
            "node_up",
            n.node.to_string(),
            if n.answered { 1.0 } else { 0.0 },
        ));
    }
    points.push(point(
        "findings",
        String::new(),
        result.findings.len() as f64,
    ));
    points
}

/// The longest time between two snapshots whose offsets still tell a minute's production.
pub const OFFSETS_SPAN_MS: u64 = 15 * 60_000;

/// Messages produced per topic in the minute before `current`, from the latest-offset growth the traffic windows
/// counted since their previous look (`since`, [`mqwatch_state::Traffic::feed`]), scaled to a minute: for
/// collectors that read no produce counters (Kafka's reads none; RocketMQ's reads the brokers' TOPIC_PUT_NUMS, so
/// this is empty for it). A log seen once, or whose offset went back (truncated, recreated), adds nothing; no
/// previous look, or none from the last [`OFFSETS_SPAN_MS`] before (an average over hours is no minute's count),
/// gives nothing.
pub fn produced_from_offsets(
    since: &mqwatch_state::ProducedSince,
    current: &ClusterSnapshot,
) -> BTreeMap<String, u64> {
    let counted = current
        .traffic
        .iter()
        .any(|t| t.metric == TrafficMetric::ProduceMessages);
    let Some(previous_ms) = since.previous_ms.filter(|p| {
        !counted && *p < current.taken_at_ms && current.taken_at_ms - p <= OFFSETS_SPAN_MS
    }) else {
        return BTreeMap::new();
    };
    let elapsed = (current.taken_at_ms - previous_ms) as f64;
    since
        .topics
        .iter()
        .map(|(t, n)| (t.clone(), (*n as f64 * 60_000.0 / elapsed).round() as u64))
        .collect()
}

/// Records one cycle of `cluster` in `store`: findings, series rows, then the alarm changes, evaluated and written
/// in one [`Store::alarm_cycle`] (which instances sharing a PostgreSQL store take in turn).
pub async fn record_cycle(
    store: &Store,
    alerting: &Arc<Alerting>,
    result: &CycleResult,
    now_ms: u64,
) -> Result<Outcome> {
    let cluster = &result.snapshot.cluster;
    store
        .record_findings(result.snapshot.taken_at_ms, &result.findings)
        .await
        .with_context(|| format!("cluster {cluster}: cannot record findings"))?;
    store
        .insert_minutes(&series_points(result))
        .await
        .with_context(|| format!("cluster {cluster}: cannot write series rows"))?;
    let cycle = Cycle {
        clusters: if complete(&result.snapshot) {
            vec![cluster.clone()]
        } else {
            Vec::new()
        },
        findings: result.findings.clone(),
    };
    let alerting = alerting.clone();
    let (outcome, _ids) = store
        .alarm_cycle(now_ms, move |alarms, silences| {
            let outcome = alerting.evaluate(alarms, &cycle, silences, now_ms);
            (outcome.changes.clone(), outcome)
        })
        .await
        .with_context(|| format!("cluster {cluster}: cannot evaluate and write alarms"))?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Lifecycle;
    use mqwatch_model::{
        CollectorErrorRecord, GroupPosition, GroupRef, GroupStatus, LogRef, NodeRef, NodeStatus,
        TrafficSample,
    };
    use mqwatch_stats::lifecycle::LifecycleMetrics;

    fn node(role: NodeRole, name: &str, answered: bool) -> NodeStatus {
        NodeStatus {
            node: NodeRef::new(role, name),
            registration: None,
            expected: false,
            answered,
            error: None,
            last_answer_ms: None,
            replica_of: None,
            store_max_offset: None,
        }
    }

    fn result(snapshot: ClusterSnapshot) -> CycleResult {
        CycleResult {
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
            produced_from_offsets: BTreeMap::new(),
        }
    }

    #[test]
    fn a_cycle_is_complete_unless_the_cluster_could_not_be_read() {
        let mut s = ClusterSnapshot::default();
        assert!(complete(&s));
        s.nodes = vec![node(NodeRole::NameServer, "ns1", false)];
        assert!(!complete(&s), "no name server answered");
        s.nodes.push(node(NodeRole::NameServer, "ns2", true));
        assert!(complete(&s));
        s.errors.push(CollectorErrorRecord {
            node: Some(NodeRef::new(NodeRole::Broker, "broker-a:0")),
            request: "GET_CONSUME_STATS (208)".into(),
            error: "timeout".into(),
        });
        assert!(complete(&s), "one broker failing is still a complete look");
        s.errors.push(CollectorErrorRecord {
            node: None,
            request: "connect".into(),
            error: "refused".into(),
        });
        assert!(!complete(&s));
    }

    #[test]
    fn series_rows_are_per_group_topic_and_node() {
        let log = |q: i32| LogRef::Queue {
            topic: "orders".into(),
            broker: "broker-a".into(),
            queue_id: q,
        };
        let broker = NodeRef::new(NodeRole::Broker, "broker-a:0");
        let s = ClusterSnapshot {
            cluster: "rmq".into(),
            taken_at_ms: 120_500,
            nodes: vec![node(NodeRole::Broker, "broker-a:0", true)],
            groups: vec![GroupStatus {
                group: GroupRef::new("g1"),
                positions: [(0, 100, Some(40)), (1, 50, Some(50)), (2, 9, None)]
                    .into_iter()
                    .map(|(q, latest, committed)| GroupPosition {
                        log: log(q),
                        earliest: 0,
                        latest,
                        committed,
                        oldest_unconsumed_age_ms: None,
                        age_source: None,
                    })
                    .collect(),
                ..Default::default()
            }],
            traffic: [
                ("orders", None, 7),
                ("orders", None, 5),
                ("orders", Some("g1"), 3),
            ]
            .into_iter()
            .map(|(t, g, n)| TrafficSample {
                metric: TrafficMetric::ProduceMessages,
                topic: Some(t.into()),
                group: g.map(Into::into),
                node: broker.clone(),
                last_minute: n,
                minute_avg: 0.0,
            })
            .collect(),
            ..Default::default()
        };
        let rows: Vec<(String, String, f64)> = series_points(&result(s))
            .into_iter()
            .map(|p| {
                assert_eq!((p.cluster.as_str(), p.minute_ms), ("rmq", 120_500));
                (p.metric, p.subject, p.value)
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("backlog".into(), "group g1".into(), 60.0),
                ("produce_messages".into(), "topic orders".into(), 12.0),
                ("node_up".into(), "broker broker-a:0".into(), 1.0),
                ("findings".into(), String::new(), 0.0),
            ]
        );
    }

    #[test]
    fn produced_messages_come_from_offsets_only_where_no_counters_are_read() {
        let log = |topic: &str, p: i32, latest: i64| mqwatch_model::LogStatus {
            log: LogRef::Partition {
                topic: topic.into(),
                partition: p,
            },
            earliest: 0,
            latest,
        };
        let snap = |at: u64, logs| ClusterSnapshot {
            cluster: "k".into(),
            taken_at_ms: at,
            logs,
            ..Default::default()
        };
        let before = snap(
            10_000_000,
            vec![
                log("clicks", 0, 1_000),
                log("clicks", 1, 500),
                log("views", 0, 90),
            ],
        );
        // 30 s later: clicks grew by 300 + 60, views went back (recreated), a new partition has no history.
        let now = snap(
            10_030_000,
            vec![
                log("clicks", 0, 1_300),
                log("clicks", 1, 560),
                log("views", 0, 10),
                log("views", 1, 7),
            ],
        );
        // The growth as the traffic windows count it, look after look.
        let looks = |snaps: &[&ClusterSnapshot]| {
            let traffic = mqwatch_state::Traffic::new();
            snaps.iter().map(|s| traffic.feed(s)).last().unwrap()
        };
        let since = looks(&[&before, &now]);
        let produced = produced_from_offsets(&since, &now);
        assert_eq!(
            produced,
            BTreeMap::from([("clicks".to_string(), 720), ("views".to_string(), 0)]),
            "per minute"
        );
        assert!(produced_from_offsets(&looks(&[&now]), &now).is_empty());
        assert!(
            produced_from_offsets(&looks(&[&now, &now]), &now).is_empty(),
            "no time passed"
        );
        let stale = snap(10_030_000 - OFFSETS_SPAN_MS - 1, before.logs.clone());
        assert!(
            produced_from_offsets(&looks(&[&stale, &now]), &now).is_empty(),
            "too old"
        );
        let mut r = result(now.clone());
        r.produced_from_offsets = produced;
        let rows: Vec<(String, f64)> = series_points(&r)
            .into_iter()
            .filter(|p| p.metric == "produce_messages")
            .map(|p| (p.subject, p.value))
            .collect();
        assert_eq!(
            rows,
            [
                ("topic clicks".to_string(), 720.0),
                ("topic views".to_string(), 0.0)
            ]
        );
        let mut counted = now;
        counted.traffic.push(TrafficSample {
            metric: TrafficMetric::ProduceMessages,
            topic: Some("clicks".into()),
            group: None,
            node: NodeRef::new(NodeRole::Broker, "broker-a:0"),
            last_minute: 4,
            minute_avg: 0.0,
        });
        assert!(
            produced_from_offsets(&since, &counted).is_empty(),
            "the broker's own counters win"
        );
    }
}
