//! The simulated estate as a source of observations: a process-wide registry of simulated clusters (by cluster
//! name) that [`crate::run::Collectors`] picks up for a cluster with `source = "simulated"`, and the cycle's
//! simulated collection: a RocketMQ or Kafka snapshot as the collector returns it, or for BookKeeper an audit
//! pass whose ledgers are judged by the audit's own pure check (`mqwatch_checks::ledgers::check_ledger`), so every
//! finding comes from the real checks. History computed at start hands its per-cluster memory (lifecycles,
//! first-seen times, previous snapshot) over to the live loop here too.
//!
//! The end-to-end probe of a simulated RocketMQ or Kafka cluster with `[cluster.probe] enabled` (the demo
//! enables it): the simulated probe messages ([`mqwatch_demo::ProbeModel`]) of a window are recorded in the
//! probe's own books ([`mqwatch_probe::Ledger`]), summarised per broker by them and judged by the probe's pure
//! check (`mqwatch_probe::probe_findings`), as a running prober's would be ([`probe_summaries`]).

use crate::audit::{LedgerAudit, ReportedViolation};
use crate::config::{ClusterConfig, Source};
use crate::run::Collectors;
use mqwatch_checks::Thresholds;
use mqwatch_checks::ledgers::{LedgerVerdict, check_ledger, violation_finding};
use mqwatch_demo::{
    BookkeeperObservation, LatencyModel, Observed, ProbeModel, ProbeResult, Schedule, SimCluster,
};
use mqwatch_model::{ClusterSnapshot, Engine, Finding};
use mqwatch_probe::{BrokerSummary, Ledger, Outcome, ProbeConfig};
use mqwatch_state::ClusterState;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the simulated estate of this process runs.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// Seed of every random-looking number.
    pub seed: u64,
    /// The fault schedule.
    pub schedule: Schedule,
    /// When the simulation starts (history is computed from here on).
    pub start_ms: u64,
}

/// One simulated cluster and what history left for the live loop.
pub struct Simulated {
    cluster: Mutex<SimCluster>,
    handover: Mutex<Option<ClusterState>>,
    /// The probe's messages and settings, when `[cluster.probe]` enables it on a RocketMQ or Kafka cluster.
    probe: Option<(ProbeModel, ProbeConfig)>,
}

struct Registry {
    params: Option<Params>,
    clusters: BTreeMap<String, Arc<Simulated>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    params: None,
    clusters: BTreeMap::new(),
});

/// Sets how simulated clusters created from now on run (`mqwatch demo` does, before any cycle). Without it, a
/// cluster with `source = "simulated"` runs with seed 1 at speed 1 from its first cycle.
pub fn configure(params: Params) {
    if let Ok(mut r) = REGISTRY.lock() {
        r.params = Some(params);
    }
}

/// The simulated cluster standing in for `cluster`, created on first use; `None` for a networked cluster.
pub fn simulated(cluster: &ClusterConfig) -> Option<Arc<Simulated>> {
    if cluster.source != Source::Simulated {
        return None;
    }
    let mut r = REGISTRY.lock().ok()?;
    let params = *r.params.get_or_insert_with(|| {
        let now = crate::run::now_ms();
        Params {
            seed: 1,
            schedule: Schedule::anchored(now, 0, 1.0),
            start_ms: now,
        }
    });
    let sim = r.clusters.entry(cluster.name.clone()).or_insert_with(|| {
        Arc::new(Simulated {
            cluster: Mutex::new(SimCluster::new(
                cluster.engine,
                &cluster.name,
                params.seed,
                params.schedule,
                params.start_ms,
            )),
            handover: Mutex::new(None),
            probe: cluster
                .probe
                .enabled
                .then(|| {
                    let interval = cluster.probe.interval.as_millis();
                    ProbeModel::new(cluster.engine, params.seed, params.schedule, interval)
                })
                .flatten()
                .map(|m| (m, cluster.probe.clone())),
        })
    });
    Some(sim.clone())
}

/// Whether `cluster` is simulated in this process (the API labels it).
pub fn is_simulated(cluster: &str) -> bool {
    REGISTRY
        .lock()
        .is_ok_and(|r| r.clusters.contains_key(cluster))
}

/// The latency series of every simulated cluster registered so far.
pub fn latency_model() -> Option<LatencyModel> {
    let r = REGISTRY.lock().ok()?;
    let params = r.params?;
    let mut model = LatencyModel::new(params.seed, params.schedule);
    for (name, sim) in &r.clusters {
        let c = sim.cluster.lock().ok()?;
        let engine = match &*c {
            SimCluster::Rocketmq(_) => mqwatch_model::Engine::Rocketmq,
            SimCluster::Kafka(_) => mqwatch_model::Engine::Kafka,
            SimCluster::Bookkeeper(_) => mqwatch_model::Engine::Bookkeeper,
        };
        model.add(name, engine, &c.topics());
    }
    Some(model)
}

/// The simulated probe's per-broker summaries of `cluster` over the `window_ms` before `now_ms`, with its
/// settings; `None` when the cluster is not simulated or its probe is off.
pub fn probe_summaries(
    cluster: &str,
    now_ms: u64,
    window_ms: u64,
) -> Option<(ProbeConfig, Vec<BrokerSummary>)> {
    let sim = REGISTRY.lock().ok()?.clusters.get(cluster)?.clone();
    sim.probe_summaries(now_ms, window_ms)
}

/// The simulated probe's series rows of every simulated cluster at `now_ms` (each over the cluster's last
/// `window_ms`), as `serve` writes a running prober's: `(cluster, metric, subject, value)`.
pub fn probe_series(now_ms: u64, window_ms: u64) -> Vec<(String, &'static str, String, f64)> {
    let Ok(r) = REGISTRY.lock() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, sim) in &r.clusters {
        if let Some((_, summaries)) = sim.probe_summaries(now_ms, window_ms) {
            for (metric, subject, v) in mqwatch_probe::registry::series(&summaries) {
                out.push((name.clone(), metric, subject, v));
            }
        }
    }
    out
}

impl Simulated {
    /// The probe's summaries over `(now_ms - window_ms, now_ms]`: every message known then, recorded in the
    /// probe's books and read back by them.
    fn probe_summaries(
        &self,
        now_ms: u64,
        window_ms: u64,
    ) -> Option<(ProbeConfig, Vec<BrokerSummary>)> {
        let (model, config) = self.probe.as_ref()?;
        let mut ledger = Ledger::default();
        for m in model.messages(now_ms.saturating_sub(window_ms), now_ms) {
            let ms = |v: f64| Duration::from_secs_f64(v.max(0.0) / 1e3);
            let outcome = match m.result {
                ProbeResult::Delivered {
                    produce_ms,
                    roundtrip_ms,
                } => Outcome::Delivered {
                    produce: ms(produce_ms),
                    roundtrip: ms(roundtrip_ms),
                },
                ProbeResult::SendFailed { error } => Outcome::SendFailed { error },
            };
            ledger.sending(&m.broker);
            ledger.record(&m.broker, m.known_ms, outcome);
        }
        Some((config.clone(), ledger.summaries(now_ms, window_ms)))
    }

    /// Leaves `memory` for the next cycle to take over.
    pub fn hand_over(&self, memory: ClusterState) {
        if let Ok(mut h) = self.handover.lock() {
            *h = Some(memory);
        }
    }
}

/// One simulated collection of `cluster` at `now_ms`: the snapshot, the ledger findings and the ledger audit
/// (BookKeeper), as a networked collection returns them, and the probe's findings (RocketMQ, Kafka) over
/// `[thresholds.produce_failure] window`, as `serve` adds a running prober's. Takes over memory handed over by history first.
pub fn collect(
    collectors: &Collectors,
    cluster: &ClusterConfig,
    thresholds: &Thresholds,
    memory: &mut ClusterState,
    now_ms: u64,
) -> (ClusterSnapshot, Vec<Finding>, Option<LedgerAudit>) {
    let Some(sim) = &collectors.simulated else {
        return (ClusterSnapshot::default(), Vec::new(), None);
    };
    if let Some(previous) = sim.handover.lock().ok().and_then(|mut h| h.take()) {
        let traffic = memory.traffic.clone();
        *memory = previous;
        memory.traffic = traffic;
    }
    let observed = match sim.cluster.lock() {
        Ok(mut c) => c.observe(now_ms),
        Err(_) => {
            return (
                ClusterSnapshot {
                    cluster: cluster.name.clone(),
                    engine: Some(cluster.engine),
                    taken_at_ms: now_ms,
                    ..Default::default()
                },
                Vec::new(),
                None,
            );
        }
    };
    match observed {
        Observed::Snapshot(s) => {
            let window = thresholds.produce_failure.window.as_millis();
            let findings = match sim.probe_summaries(now_ms, window) {
                Some((config, summaries)) => mqwatch_probe::probe_findings(
                    &cluster.name,
                    s.engine.unwrap_or(Engine::Rocketmq),
                    &config.topic,
                    &summaries,
                    None,
                    &thresholds.produce_failure,
                    now_ms,
                ),
                None => Vec::new(),
            };
            (s, findings, None)
        }
        Observed::Ledgers(obs) => {
            let (findings, audit) = judge(&obs, thresholds, now_ms);
            (obs.snapshot, findings, Some(audit))
        }
    }
}

/// Judges every ledger of an audit pass as `crate::audit` does: counts per category, one finding and one
/// reported violation per violation, unavailable ledgers apart.
pub fn judge(
    obs: &BookkeeperObservation,
    thresholds: &Thresholds,
    now_ms: u64,
) -> (Vec<Finding>, LedgerAudit) {
    let cluster = &obs.snapshot.cluster;
    let mut audit = LedgerAudit::default();
    let mut findings = Vec::new();
    for ledger in &obs.ledgers {
        let id = ledger.layout.id;
        let verdict = check_ledger(ledger, &obs.racks, &thresholds.ledgers, now_ms);
        audit.counts.add(&verdict);
        if let LedgerVerdict::Checked {
            violations,
            unavailable_bookies,
        } = verdict
        {
            if !unavailable_bookies.is_empty() {
                audit.unavailable.insert(id, unavailable_bookies);
            }
            for v in violations {
                findings.push(violation_finding(cluster, id, &v, now_ms));
                audit.violations.push(ReportedViolation {
                    ledger: id,
                    violation: v,
                });
            }
        }
    }
    (findings, audit)
}
