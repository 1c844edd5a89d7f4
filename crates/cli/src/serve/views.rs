//! Read-only JSON views the dashboard (`mqwatch-web`) needs, computed from the latest cycles and the store so the
//! page never downloads whole snapshots:
//!
//! - `GET /api/v1/overview`: the estate (per cluster: engine, whether it is simulated, worst severity, findings by
//!   severity, nodes by lifecycle state, nodes not answering, the lifecycle metrics with the longest pending
//!   startup / controlled shutdown and the node behind each, degraded), every alarm with its subject spelled as a
//!   silence matches it and the active silence muting it, the active silences, and whether writes need a token.
//! - `GET /api/v1/clusters/{name}/groups`: per consumer group its backlog (messages behind, summed over logs),
//!   logs without a commit, the age of its oldest unconsumed message, online clients, and its Burrow-style status
//!   from this cycle's `consumer_lag_status` finding, else the cycle's status of the group (`null` when no check
//!   judged it), and its backlog finding.
//! - `GET /api/v1/clusters/{name}/durability`: the durability audit: per finding kind that applies to the
//!   engine (ledger kinds for BookKeeper, partition kinds for Kafka, none for RocketMQ) its count and violating
//!   logs with their evidence, and the BookKeeper pass's counts when it ran.
//! - `GET /api/v1/clusters/{name}/nodes`: every node of the latest cycle (name servers, brokers, bookies) with
//!   its address, rack, whether it answered (or why not), its registration and lifecycle state and how long it
//!   has been in it, and the master it replicates.

use super::Shared;
use crate::run::{CycleResult, now_ms};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mqwatch_model::{Engine, Finding, FindingKind, Severity, Subject};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Finding kinds of the durability audit, in the order the dashboard lists them (worst first).
pub const DURABILITY_KINDS: &[FindingKind] = &[
    FindingKind::EntriesNoReplica,
    FindingKind::EntriesBelowAckQuorum,
    FindingKind::UnderReplicationStuck,
    FindingKind::OfflinePartition,
    FindingKind::UnderMinIsr,
    FindingKind::EntriesBelowWriteQuorum,
    FindingKind::UnderReplicatedPartition,
    FindingKind::ReplicationFactorLow,
    FindingKind::PlacementViolation,
];

/// The durability kinds that apply to `engine`, in [`DURABILITY_KINDS`]' order: BookKeeper's ledger kinds,
/// Kafka's partition kinds, none for RocketMQ (its queues have no replica placement to audit); every kind when
/// the engine is not known.
pub fn durability_kinds(engine: Option<Engine>) -> Vec<FindingKind> {
    use FindingKind::*;
    let applies = |k: &FindingKind| match engine {
        Some(Engine::Bookkeeper) => matches!(
            k,
            EntriesNoReplica
                | EntriesBelowAckQuorum
                | EntriesBelowWriteQuorum
                | UnderReplicationStuck
                | PlacementViolation
        ),
        Some(Engine::Kafka) => matches!(
            k,
            OfflinePartition
                | UnderMinIsr
                | UnderReplicatedPartition
                | UnderReplicationStuck
                | ReplicationFactorLow
                | PlacementViolation
        ),
        Some(Engine::Rocketmq) => false,
        None => true,
    };
    DURABILITY_KINDS.iter().copied().filter(applies).collect()
}

/// Violations listed per durability kind at most (the count is always whole).
const MAX_LISTED: usize = 200;

fn latest(shared: &Shared) -> BTreeMap<String, CycleResult> {
    shared.latest.read().map(|l| l.clone()).unwrap_or_default()
}

fn one(shared: &Shared, name: &str) -> Result<CycleResult, Box<Response>> {
    shared
        .latest
        .read()
        .ok()
        .and_then(|l| l.get(name).cloned())
        .ok_or_else(|| Box::new(super::not_found(name)))
}

/// One cluster's line of the overview.
pub fn cluster_summary(r: &CycleResult, simulated: bool) -> Value {
    let mut by_severity = BTreeMap::from([("info", 0), ("warning", 0), ("critical", 0)]);
    for f in &r.findings {
        *by_severity.entry(severity_name(f.severity)).or_default() += 1;
    }
    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    for n in &r.lifecycle.nodes {
        let state = serde_json::to_value(n.lifecycle.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *by_state.entry(state).or_default() += 1;
    }
    let not_answering: Vec<String> = r
        .snapshot
        .nodes
        .iter()
        .filter(|n| !n.answered)
        .map(|n| n.node.to_string())
        .collect();
    json!({
        "name": r.snapshot.cluster,
        "engine": r.snapshot.engine,
        "simulated": simulated,
        "taken_at_ms": r.snapshot.taken_at_ms,
        "cycle_ms": r.snapshot.cycle_ms,
        "worst": Finding::worst(&r.findings),
        "findings": by_severity,
        "nodes": r.snapshot.nodes.len(),
        "nodes_by_state": by_state,
        "not_answering": not_answering,
        "lifecycle": r.lifecycle.metrics,
        "groups": r.snapshot.groups.len(),
        "topics": topics(r).len(),
    })
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Critical => "critical",
    }
}

/// The topics of a snapshot's logs, sorted.
fn topics(r: &CycleResult) -> std::collections::BTreeSet<String> {
    r.snapshot
        .logs
        .iter()
        .filter_map(|l| serde_json::to_value(&l.log).ok())
        .filter_map(|v| v.get("topic").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Whether the cycle came from the demo's simulated estate.
fn is_simulated(r: &CycleResult) -> bool {
    crate::demo::is_simulated(&r.snapshot.cluster)
}

/// `GET /api/v1/overview`.
pub async fn overview(State(shared): State<Shared>) -> Response {
    let now = now_ms();
    let clusters: Vec<Value> = latest(&shared)
        .values()
        .map(|r| cluster_summary(r, is_simulated(r)))
        .collect();
    let (alarms, silences) = match (
        shared.store.alarms().await,
        shared.store.active_silences(now).await,
    ) {
        (Ok(a), Ok(s)) => (a, s),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error = %e, "reading alarms for the overview failed");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("reading alarms and silences: {e}\n"),
            )
                .into_response();
        }
    };
    let alarms: Vec<Value> = alarms
        .iter()
        .map(|a| {
            let key = a.key();
            let muted_by = silences.iter().find(|s| s.mutes(&key, now)).map(|s| s.id);
            json!({
                "key": key.to_string(),
                "state": a.state.as_str(),
                "since_ms": a.since_ms,
                "severity": a.severity,
                "kind": key.kind,
                "cluster": key.cluster,
                "subject": key.subject.to_string(),
                "message": a.finding.message,
                "evidence": a.finding.evidence,
                "silenced_by": muted_by,
            })
        })
        .collect();
    Json(json!({
        "now_ms": now,
        "writes": shared.token.is_some(),
        "clusters": clusters,
        "alarms": alarms,
        "silences": silences,
    }))
    .into_response()
}

/// The consumer-group table of one cycle.
pub fn group_rows(r: &CycleResult) -> Vec<Value> {
    let mut rows: Vec<Value> = r
        .snapshot
        .groups
        .iter()
        .map(|g| {
            let backlog: i64 = g.positions.iter().filter_map(|p| p.lag()).sum();
            let without_commit = g.positions.iter().filter(|p| p.committed.is_none()).count();
            let age = g
                .positions
                .iter()
                .filter_map(|p| p.oldest_unconsumed_age_ms)
                .max();
            let about = |kind: FindingKind| {
                r.findings.iter().find(|f| {
                    f.kind == kind
                        && matches!(&f.subject, Subject::Group { group, .. } if group.name == g.group.name)
                })
            };
            // The finding when the status is not OK, else the cycle's own status of the group (OK ones too).
            let status = about(FindingKind::ConsumerLagStatus)
                .map(|f| {
                    json!({
                        "status": f.evidence.0.get("status").cloned().unwrap_or(Value::Null),
                        "severity": f.severity,
                        "message": f.message,
                    })
                })
                .or_else(|| {
                    let s = r.lag_status.iter().find(|s| s.group.name == g.group.name)?;
                    let status = serde_json::to_value(s.status).ok()?;
                    Some(json!({"status": status, "severity": "healthy", "message": status}))
                });
            json!({
                "group": g.group.name,
                "backlog": backlog,
                "logs": g.positions.len(),
                "logs_without_commit": without_commit,
                "oldest_unconsumed_age_ms": age,
                "clients": g.clients.len(),
                "status": status,
                "backlog_finding": about(FindingKind::Backlog).map(|f| &f.message),
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        let lag = |v: &Value| v["backlog"].as_i64().unwrap_or(0);
        lag(b).cmp(&lag(a))
    });
    rows
}

/// `GET /api/v1/clusters/{name}/groups`.
pub async fn groups(State(shared): State<Shared>, Path(name): Path<String>) -> Response {
    match one(&shared, &name) {
        Ok(r) => Json(group_rows(&r)).into_response(),
        Err(e) => *e,
    }
}

/// The durability view of one cycle.
pub fn durability_view(r: &CycleResult) -> Value {
    let categories: Vec<Value> = durability_kinds(r.snapshot.engine)
        .into_iter()
        .map(|kind| {
            let of_kind: Vec<&Finding> = r.findings.iter().filter(|f| f.kind == kind).collect();
            let listed: Vec<Value> = of_kind
                .iter()
                .take(MAX_LISTED)
                .map(|f| {
                    json!({
                        "subject": f.subject.to_string(),
                        "severity": f.severity,
                        "message": f.message,
                        "evidence": f.evidence,
                    })
                })
                .collect();
            json!({"kind": kind, "count": of_kind.len(), "violations": listed})
        })
        .collect();
    json!({
        "engine": r.snapshot.engine,
        "taken_at_ms": r.snapshot.taken_at_ms,
        "ledger_counts": r.ledgers.as_ref().map(|l| &l.counts),
        "unavailable_ledgers": r.ledgers.as_ref().map(|l| l.unavailable.len()),
        "partitions": r.snapshot.partitions.len(),
        "categories": categories,
    })
}

/// `GET /api/v1/clusters/{name}/durability`.
pub async fn durability(State(shared): State<Shared>, Path(name): Path<String>) -> Response {
    match one(&shared, &name) {
        Ok(r) => Json(durability_view(&r)).into_response(),
        Err(e) => *e,
    }
}

/// The node table of one cycle, in the lifecycle's order (by role, then name).
pub fn node_rows(r: &CycleResult) -> Vec<Value> {
    let mut rows: Vec<(&mqwatch_model::NodeRef, Value)> = r
        .snapshot
        .nodes
        .iter()
        .map(|n| {
            let lifecycle = r.lifecycle.nodes.iter().find(|l| l.node == n.node);
            let rack = r.snapshot.racks.get(&n.node.name).or_else(|| {
                let addr = n.node.addr.as_ref()?;
                r.snapshot.racks.get(addr)
            });
            let v = json!({
                "node": n.node,
                "role": n.node.role,
                "name": n.node.name,
                "addr": n.node.addr,
                "rack": rack,
                "answered": n.answered,
                "error": n.error,
                "last_answer_ms": n.last_answer_ms,
                "registration": n.registration,
                "expected": n.expected,
                "replica_of": n.replica_of.as_ref().map(|m| m.name.clone()),
                "state": lifecycle.map(|l| l.lifecycle.state),
                "ms_in_state": lifecycle.map(|l| l.lifecycle.ms_in_state),
            });
            (&n.node, v)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(b.0));
    rows.into_iter().map(|(_, v)| v).collect()
}

/// `GET /api/v1/clusters/{name}/nodes`.
pub async fn nodes(State(shared): State<Shared>, Path(name): Path<String>) -> Response {
    match one(&shared, &name) {
        Ok(r) => Json(node_rows(&r)).into_response(),
        Err(e) => *e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Lifecycle;
    use mqwatch_model::{
        ClusterSnapshot, Engine, Evidence, GroupPosition, GroupRef, GroupStatus, LogRef, NodeRef,
    };
    use mqwatch_stats::lifecycle::LifecycleTracker;

    fn position(
        queue_id: i32,
        latest: i64,
        committed: Option<i64>,
        age: Option<u64>,
    ) -> GroupPosition {
        GroupPosition {
            log: LogRef::Queue {
                topic: "orders".into(),
                broker: "broker-a".into(),
                queue_id,
            },
            earliest: 0,
            latest,
            committed,
            oldest_unconsumed_age_ms: age,
            age_source: None,
        }
    }

    fn result(findings: Vec<Finding>) -> CycleResult {
        let group = |name: &str, positions| GroupStatus {
            group: GroupRef::new(name),
            model: Default::default(),
            clients: vec![],
            positions,
            retry_total: None,
            dead_letter_total: None,
            send_back_last_minute: None,
        };
        CycleResult {
            snapshot: ClusterSnapshot {
                cluster: "c".into(),
                engine: Some(Engine::Rocketmq),
                groups: vec![
                    group("idle", vec![position(0, 10, Some(10), None)]),
                    group(
                        "slow",
                        vec![
                            position(0, 10, Some(5), Some(4_000)),
                            position(1, 9, Some(2), Some(9_000)),
                            position(2, 3, None, None),
                        ],
                    ),
                ],
                ..Default::default()
            },
            findings,
            lifecycle: Lifecycle {
                metrics: LifecycleTracker::<NodeRef>::new().metrics(0),
                nodes: vec![],
            },
            ledgers: None,
            lag_status: vec![],
            produced_from_offsets: Default::default(),
        }
    }

    fn finding(kind: FindingKind, subject: Subject) -> Finding {
        Finding::new(kind, "c", Engine::Rocketmq, subject, "m", 0)
    }

    #[test]
    fn groups_sum_backlog_take_the_oldest_age_and_the_lag_status() {
        let slow = Subject::Group {
            group: GroupRef::new("slow"),
            topic: None,
        };
        let r = result(vec![
            finding(FindingKind::ConsumerLagStatus, slow.clone())
                .with_evidence(Evidence::new().with("status", "STALL")),
            finding(FindingKind::Backlog, slow),
        ]);
        let rows = group_rows(&r);
        assert_eq!(rows[0]["group"], "slow", "most behind first");
        assert_eq!(rows[0]["backlog"], 12);
        assert_eq!(rows[0]["logs_without_commit"], 1);
        assert_eq!(rows[0]["oldest_unconsumed_age_ms"], 9_000);
        assert_eq!(rows[0]["status"]["status"], "STALL");
        assert_eq!(rows[0]["backlog_finding"], "m");
        assert_eq!(rows[1]["backlog"], 0);
        assert_eq!(rows[1]["status"], Value::Null, "no check, no status");
    }

    #[test]
    fn durability_lists_violations_by_category() {
        let ledger = |id| Subject::Log {
            log: LogRef::Ledger { id },
        };
        let mut r = result(vec![
            finding(FindingKind::EntriesBelowAckQuorum, ledger(7)),
            finding(FindingKind::EntriesBelowAckQuorum, ledger(9)),
            finding(FindingKind::Backlog, Subject::Cluster),
        ]);
        r.snapshot.engine = Some(Engine::Bookkeeper);
        let v = durability_view(&r);
        let cats = v["categories"].as_array().unwrap();
        assert_eq!(cats.len(), 5, "the ledger kinds: {cats:?}");
        assert!(cats.iter().all(|c| c["kind"] != "offline_partition"));
        let ack = cats
            .iter()
            .find(|c| c["kind"] == "entries_below_ack_quorum")
            .unwrap();
        assert_eq!(ack["count"], 2);
        assert_eq!(ack["violations"][1]["subject"], "ledger 9");
        let total: u64 = cats.iter().map(|c| c["count"].as_u64().unwrap()).sum();
        assert_eq!(total, 2, "backlog is not a durability finding");
    }

    #[test]
    fn durability_kinds_are_the_engines_own() {
        assert!(durability_kinds(Some(Engine::Rocketmq)).is_empty());
        let kafka = durability_kinds(Some(Engine::Kafka));
        assert!(kafka.contains(&FindingKind::UnderMinIsr));
        assert!(!kafka.contains(&FindingKind::EntriesNoReplica));
        assert_eq!(durability_kinds(None).len(), DURABILITY_KINDS.len());
        let covered: std::collections::BTreeSet<FindingKind> = [Engine::Kafka, Engine::Bookkeeper]
            .into_iter()
            .flat_map(|e| durability_kinds(Some(e)))
            .collect();
        assert_eq!(
            covered.len(),
            DURABILITY_KINDS.len(),
            "every kind has an engine"
        );
    }

    #[test]
    fn nodes_show_their_state_rack_and_error() {
        use mqwatch_model::{NodeRole, NodeStatus};
        let bookie = |name: &str, answered: bool| NodeStatus {
            node: NodeRef::new(NodeRole::Bookie, name),
            registration: None,
            expected: false,
            answered,
            error: (!answered).then(|| format!("{name}: connection refused")),
            last_answer_ms: None,
            replica_of: None,
            store_max_offset: None,
        };
        let mut r = result(vec![]);
        r.snapshot.nodes = vec![
            bookie("192.0.2.32:3181", false),
            bookie("192.0.2.31:3181", true),
        ];
        r.snapshot
            .racks
            .insert("192.0.2.31:3181".into(), "rack-1".into());
        let rows = node_rows(&r);
        assert_eq!(rows[0]["name"], "192.0.2.31:3181", "sorted");
        assert_eq!(rows[0]["rack"], "rack-1");
        assert_eq!(rows[0]["role"], "bookie");
        assert_eq!(rows[1]["answered"], false);
        assert_eq!(rows[1]["error"], "192.0.2.32:3181: connection refused");
        assert_eq!(rows[1]["state"], Value::Null, "no lifecycle tracked");
    }

    #[test]
    fn the_summary_counts_findings_by_severity() {
        let r = result(vec![finding(FindingKind::BrokerDown, Subject::Cluster)]);
        let s = cluster_summary(&r, true);
        assert_eq!(s["findings"]["critical"], 1);
        assert_eq!(s["findings"]["warning"], 0);
        assert_eq!(s["simulated"], true);
        assert_eq!(s["worst"], "critical");
        assert_eq!(s["groups"], 2);
    }
}
