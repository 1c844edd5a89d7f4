//! One collection-and-check cycle of one cluster, as `check` and `serve` both run it: collect with the engine's
//! collector, judge with the checks (against the previous snapshot kept in the state directory), remember the
//! brokers seen and save the snapshot.

use crate::config::ClusterConfig;
use crate::state::StateDir;
use anyhow::{Result, bail};
use mqwatch_checks::Thresholds;
use mqwatch_model::{ClusterSnapshot, Engine, Finding};
use mqwatch_rocketmq::client::AdminClient;
use mqwatch_rocketmq::collector::{self, Target};
use mqwatch_state::ClusterState;

/// What one cycle produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CycleResult {
    /// The snapshot.
    pub snapshot: ClusterSnapshot,
    /// The findings.
    pub findings: Vec<Finding>,
}

/// Collects `cluster` once and checks it, updating its in-memory state (`memory`) and the state directory.
pub async fn cycle(
    cluster: &ClusterConfig,
    client: &AdminClient,
    thresholds: &Thresholds,
    state: &StateDir,
    memory: &mut ClusterState,
    now_ms: u64,
) -> Result<CycleResult> {
    let snapshot = match cluster.engine {
        Engine::Rocketmq => {
            let target = Target {
                cluster: cluster.name.clone(),
                name_servers: cluster.name_servers.clone(),
                expected_brokers: cluster.expected_brokers.clone(),
                known_brokers: state.known_brokers(&cluster.name)?,
                concurrency: cluster.concurrency,
            };
            collector::collect(client, &target, now_ms).await
        }
        other => bail!(
            "cluster {}: the {other} collector is not built yet",
            cluster.name
        ),
    };
    memory.observe(&snapshot);
    let stored;
    let previous = match memory.previous() {
        Some(p) => Some(p),
        None => {
            stored = state.last_snapshot(&cluster.name)?;
            stored.as_ref()
        }
    };
    let mut findings = mqwatch_checks::run_all(&snapshot, previous, thresholds, now_ms);
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
    Ok(CycleResult { snapshot, findings })
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    use mqwatch_stats::clock::{Clock, SystemClock};
    SystemClock.now_ms()
}
