//! One collection-and-check cycle of one cluster, as `check` and `serve` both run it: collect with the engine's
//! collector, judge with the checks (against the previous snapshot kept in the state directory, and the windows
//! the in-memory state keeps: commits per group for `consumer_lag_status`, under-replication since-times for
//! `under_replication_stuck`), remember the brokers seen and save the snapshot. For BookKeeper a cycle is one audit pass ([`crate::audit`]).

use crate::audit::{AuditOptions, AuditReport, LedgerAudit, Progress, audit};
use crate::config::ClusterConfig;
use crate::state::StateDir;
use anyhow::Result;
use mqwatch_bookkeeper::collector::{CollectError, Collector, Target as BkTarget};
use mqwatch_checks::Thresholds;
use mqwatch_kafka::client::{ClientConfig as KafkaClientConfig, KafkaClient};
use mqwatch_kafka::collector::{LagMemory, Target as KafkaTarget};
use mqwatch_model::{ClusterSnapshot, Engine, Finding, GroupLagStatus, NodeRef};
use mqwatch_rocketmq::client::AdminClient;
use mqwatch_rocketmq::collector::{self, Target};
use mqwatch_state::ClusterState;
use mqwatch_stats::lifecycle::{LifecycleMetrics, LifecycleTracker, NodeLifecycle};

/// What one cycle produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CycleResult {
    /// The snapshot.
    pub snapshot: ClusterSnapshot,
    /// The findings.
    pub findings: Vec<Finding>,
    /// Node lifecycles after this cycle: the cluster-level metrics (fixed cardinality) and each node's state.
    pub lifecycle: Lifecycle,
    /// BookKeeper: the ledger audit's counts, violations and unavailable ledgers (`None`: the pass could not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledgers: Option<LedgerAudit>,
    /// Burrow-style status of every group with a commit (OK ones too): worst status, lag, the logs not OK.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lag_status: Vec<GroupLagStatus>,
    /// Messages produced per topic in the last minute from the growth of the logs' latest offsets since the
    /// previous look, for a collector that reads no produce counters (Kafka); empty otherwise
    /// ([`crate::serve::record::produced_from_offsets`]).
    #[serde(skip)]
    pub produced_from_offsets: std::collections::BTreeMap<String, u64>,
}

/// The lifecycle tracker read out at the end of a cycle.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Lifecycle {
    /// Longest pending startup / controlled shutdown and their nodes, counts, degraded.
    pub metrics: LifecycleMetrics<NodeRef>,
    /// Per node: state, KIP-1131 registration state code, time in state, time since its last answer.
    pub nodes: Vec<NodeLifecycleRow>,
}

/// One node's lifecycle.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NodeLifecycleRow {
    /// The node.
    pub node: NodeRef,
    /// Its lifecycle.
    #[serde(flatten)]
    pub lifecycle: NodeLifecycle,
}

impl Lifecycle {
    fn read(tracker: &LifecycleTracker<NodeRef>, now_ms: u64) -> Self {
        let mut nodes: Vec<NodeLifecycleRow> = tracker
            .nodes(now_ms)
            .map(|(node, lifecycle)| NodeLifecycleRow {
                node: node.clone(),
                lifecycle,
            })
            .collect();
        nodes.sort_by(|a, b| a.node.cmp(&b.node));
        Lifecycle {
            metrics: tracker.metrics(now_ms),
            nodes,
        }
    }
}

/// What one cluster keeps between cycles besides its [`ClusterState`]: the engines' clients (connections are
/// reused across cycles) and the Kafka collector's time-lag memory.
pub struct Collectors {
    /// RocketMQ admin client.
    pub rocketmq: AdminClient,
    /// Kafka client.
    pub kafka: KafkaClient,
    /// Kafka record timestamps and sampled offsets, for time lag.
    pub kafka_lag: LagMemory,
    /// The simulated cluster that stands in for the network (`source = "simulated"`), if any.
    pub simulated: Option<std::sync::Arc<crate::demo::Simulated>>,
}

impl Collectors {
    /// Clients with the cluster's timeout.
    pub fn new(cluster: &ClusterConfig) -> Self {
        let security = cluster.kafka_security();
        let kafka = KafkaClient::new(KafkaClientConfig {
            connect_timeout: cluster.timeout.0,
            request_timeout: cluster.timeout.0,
            security: security.as_ref().cloned().unwrap_or_default(),
            ..KafkaClientConfig::default()
        });
        let kafka = match security {
            Ok(_) => kafka,
            // Checked when the config loaded; a password file that went away since is said every cycle.
            Err(e) => kafka.refusing(format!("{e:#}")),
        };
        Self {
            rocketmq: AdminClient::new(cluster.timeout.0),
            kafka,
            kafka_lag: LagMemory::new(),
            simulated: crate::demo::simulated(cluster),
        }
    }
}

/// Collects `cluster` once and checks it, updating its in-memory state (`memory`) and the state directory.
pub async fn cycle(
    cluster: &ClusterConfig,
    collectors: &Collectors,
    thresholds: &Thresholds,
    state: &StateDir,
    memory: &mut ClusterState,
    progress: Progress<'_>,
    now_ms: u64,
) -> Result<CycleResult> {
    let (snapshot, ledger_findings, ledgers) = match cluster.engine {
        _ if collectors.simulated.is_some() => {
            crate::demo::collect(collectors, cluster, thresholds, memory, now_ms)
        }
        Engine::Rocketmq => {
            let target = Target {
                cluster: cluster.name.clone(),
                name_servers: cluster.name_servers.clone(),
                expected_brokers: cluster.expected_brokers.clone(),
                known_brokers: state.known_brokers(&cluster.name)?,
                concurrency: cluster.concurrency,
            };
            let snapshot = collector::collect(&collectors.rocketmq, &target, now_ms).await;
            (snapshot, Vec::new(), None)
        }
        Engine::Kafka => {
            let target = KafkaTarget {
                cluster: cluster.name.clone(),
                bootstrap: cluster.bootstrap.clone(),
                expected_brokers: cluster.expected_brokers.clone(),
                known_brokers: state.known_kafka_brokers(&cluster.name)?,
                concurrency: cluster.concurrency,
            };
            let snapshot = mqwatch_kafka::collector::collect(
                &collectors.kafka,
                &target,
                &collectors.kafka_lag,
                now_ms,
            )
            .await;
            (snapshot, Vec::new(), None)
        }
        Engine::Bookkeeper => match audit_cluster(cluster, thresholds, progress, now_ms).await {
            Ok(r) => (r.snapshot, r.findings, Some(r.ledgers)),
            Err(e) => (
                ClusterSnapshot {
                    cluster: cluster.name.clone(),
                    engine: Some(Engine::Bookkeeper),
                    taken_at_ms: now_ms,
                    errors: vec![e.record()],
                    ..Default::default()
                },
                Vec::new(),
                None,
            ),
        },
    };
    memory.positions.set_window(thresholds.lag_status.window);
    let produced_since = memory.observe(&snapshot);
    let stored;
    let previous = match memory.previous() {
        Some(p) => Some(p),
        None => {
            stored = state.last_snapshot(&cluster.name)?;
            stored.as_ref()
        }
    };
    let mut findings = mqwatch_checks::run_all(&snapshot, previous, thresholds, now_ms);
    findings.extend(ledger_findings);
    let (over_time, lag_status) = mqwatch_checks::run_over_time(
        &snapshot,
        mqwatch_checks::History {
            window: |g: &_, l: &_| memory.positions.window(g, l),
            under_replicated_since: memory.under_replicated.all(),
        },
        thresholds,
        now_ms,
    );
    findings.extend(over_time);
    let produced_from_offsets =
        crate::serve::record::produced_from_offsets(&produced_since, &snapshot);
    findings.extend(
        crate::extras::cycle_findings(
            cluster,
            &collectors.kafka.config().security,
            &snapshot,
            thresholds,
            now_ms,
        )
        .await,
    );
    findings.extend(mqwatch_checks::lifecycle::check(
        &cluster.name,
        cluster.engine,
        &memory.lifecycle,
        &thresholds.lifecycle,
        now_ms,
    ));
    let findings = memory.stamp(findings);
    state.remember(&snapshot)?;
    state.save_snapshot(&snapshot)?;
    memory.keep(snapshot.clone());
    let lifecycle = Lifecycle::read(&memory.lifecycle, now_ms);
    Ok(CycleResult {
        snapshot,
        findings,
        lifecycle,
        ledgers,
        lag_status,
        produced_from_offsets,
    })
}

/// The collector target and audit options of a BookKeeper cluster's config.
pub fn bookkeeper_target(
    cluster: &ClusterConfig,
    thresholds: &Thresholds,
) -> (BkTarget, AuditOptions) {
    let target = BkTarget {
        cluster: cluster.name.clone(),
        zookeeper: cluster.zookeeper.clone().unwrap_or_default(),
        root: cluster.root.clone().unwrap_or_else(|| "/ledgers".into()),
        timeout: cluster.timeout.0,
        metadata_concurrency: cluster.metadata_concurrency,
        ledger_concurrency: cluster.ledger_concurrency,
        racks: cluster.racks.clone(),
    };
    let opts = AuditOptions {
        thresholds: thresholds.ledgers.clone(),
        rechecks: cluster.rechecks,
        recheck_delay: cluster.recheck_delay.0,
        ..AuditOptions::default()
    };
    (target, opts)
}

/// One audit pass of a BookKeeper cluster; an error when ZooKeeper, the registry or the ledger list cannot be
/// read (a cycle turns that into a `collector_error` record naming ZooKeeper and the request).
pub async fn audit_cluster(
    cluster: &ClusterConfig,
    thresholds: &Thresholds,
    progress: Progress<'_>,
    now_ms: u64,
) -> Result<AuditReport, CollectError> {
    let (target, opts) = bookkeeper_target(cluster, thresholds);
    let collector = Collector::connect(&target).await?;
    audit(&collector, &target, &opts, progress, now_ms).await
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    use mqwatch_stats::clock::{Clock, SystemClock};
    SystemClock.now_ms()
}
