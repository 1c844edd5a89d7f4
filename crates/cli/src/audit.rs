//! One BP-34 audit pass over a BookKeeper cluster: the collector's I/O and the pure ledger check, put together.
//!
//! The pass probes every registered bookie once (so "registered but silent" is known even for bookies with no
//! ledgers), observes every ledger with the collector's bounded concurrency, judges each with
//! [`mqwatch_checks::ledgers::check_ledger`], and before reporting a violation re-reads the ledger's metadata
//! version: a ledger that changed meanwhile is redone, never reported from stale metadata. Bookies that did not
//! answer are probed again after a delay (count and delay configurable); the ledgers of those that answer are
//! redone, and those still silent while still registered end as `bookie_unreachable` (through the liveness check
//! on the snapshot's nodes), their ledgers counted apart as unavailable, not as data loss.

use mqwatch_bookkeeper::collector::{CollectError, Collector, Registry, Target};
use mqwatch_checks::ledgers::{
    AuditCounts, LedgerThresholds, LedgerVerdict, LedgerViolation, check_ledger, violation_finding,
};
use mqwatch_model::{
    BookieAnswer, ClusterSnapshot, CollectorErrorRecord, Engine, Finding, LedgerObservation,
    NodeRef, NodeRole, NodeStatus, ObservedNodeState,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How an audit pass runs beyond the collector's target.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditOptions {
    /// Grace period and racks per write quorum.
    pub thresholds: LedgerThresholds,
    /// How often a silent bookie is probed again before it counts as unreachable (default 2).
    pub rechecks: u32,
    /// The wait before each re-probe (default 10 s).
    pub recheck_delay: Duration,
    /// How often a ledger whose metadata keeps changing is redone before it is left for the next pass (3).
    pub redo_limit: u32,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            thresholds: LedgerThresholds::default(),
            rechecks: 2,
            recheck_delay: Duration::from_secs(10),
            redo_limit: 3,
        }
    }
}

/// One reported violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportedViolation {
    /// The ledger.
    pub ledger: u64,
    /// What is wrong.
    #[serde(flatten)]
    pub violation: LedgerViolation,
}

/// What one pass found of the ledgers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LedgerAudit {
    /// Per-category counts.
    pub counts: AuditCounts,
    /// One record per violation, by ledger.
    pub violations: Vec<ReportedViolation>,
    /// Ledgers that could not be fully checked because a bookie stayed silent, with those bookies.
    pub unavailable: BTreeMap<u64, Vec<String>>,
    /// Ledgers redone because their metadata changed while they were checked.
    pub redone: u64,
    /// Ledgers left for the next pass because their metadata kept changing.
    pub unsettled: Vec<u64>,
}

/// What one pass produced.
#[derive(Debug, Clone)]
pub struct AuditReport {
    /// The ledgers' results.
    pub ledgers: LedgerAudit,
    /// The bookies and the requests that failed, for the common checks.
    pub snapshot: ClusterSnapshot,
    /// The findings of the ledger check (the common checks add node and collector findings).
    pub findings: Vec<Finding>,
}

/// Progress of a pass: called with (ledgers done, ledgers in all) as ledgers finish.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Runs one pass. Fails only when the registry or the ledger list cannot be read; everything else becomes a
/// record in the report.
pub async fn audit(
    collector: &Collector,
    target: &Target,
    opts: &AuditOptions,
    progress: Progress<'_>,
    now_ms: u64,
) -> Result<AuditReport, CollectError> {
    let started = Instant::now();
    let registry = collector.registry().await?;
    let registered: BTreeSet<String> = registry
        .writable
        .iter()
        .chain(&registry.read_only)
        .cloned()
        .collect();
    let mut silent = probe_all(collector, &registered).await;
    let ids = collector.ledger_ids().await?;
    let total = ids.len() as u64;
    let done = std::sync::atomic::AtomicU64::new(0);
    let pass = Pass {
        collector,
        racks: &registry.racks,
        opts,
        now_ms,
    };
    use futures::StreamExt;
    let results: Vec<(u64, Outcome)> = futures::stream::iter(ids)
        .map(|id| {
            let pass = &pass;
            let done = &done;
            async move {
                let outcome = pass.ledger(id).await;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, total);
                (id, outcome)
            }
        })
        .buffer_unordered(target.metadata_concurrency.max(1))
        .collect()
        .await;
    let mut ledgers: BTreeMap<u64, Outcome> = results.into_iter().collect();

    // Re-probe silent bookies; redo the ledgers of those that answer again.
    silent.extend(collector.unreachable());
    for _ in 0..opts.rechecks {
        if silent.is_empty() {
            break;
        }
        tokio::time::sleep(opts.recheck_delay).await;
        let still = probe_all(collector, &silent.keys().cloned().collect()).await;
        let answering: BTreeSet<&String> =
            silent.keys().filter(|b| !still.contains_key(*b)).collect();
        let redo: Vec<u64> = ledgers
            .iter()
            .filter(|(_, o)| o.unavailable().iter().any(|b| answering.contains(b)))
            .map(|(id, _)| *id)
            .collect();
        silent = still;
        for id in redo {
            let outcome = pass.ledger(id).await;
            ledgers.insert(id, outcome);
        }
    }

    let final_registry = collector.registry().await.unwrap_or(registry);
    let mut report = AuditReport {
        ledgers: LedgerAudit::default(),
        snapshot: ClusterSnapshot {
            cluster: target.cluster.clone(),
            engine: Some(Engine::Bookkeeper),
            taken_at_ms: now_ms,
            ..Default::default()
        },
        findings: Vec::new(),
    };
    for (id, outcome) in ledgers {
        report.ledgers.redone += u64::from(outcome.redone);
        report.snapshot.errors.extend(outcome.errors);
        let Some(verdict) = outcome.verdict else {
            if outcome.unsettled {
                report.ledgers.unsettled.push(id);
            }
            continue;
        };
        report.ledgers.counts.add(&verdict);
        if let LedgerVerdict::Checked {
            violations,
            unavailable_bookies,
        } = verdict
        {
            if !unavailable_bookies.is_empty() {
                report.ledgers.unavailable.insert(id, unavailable_bookies);
            }
            for v in violations {
                report
                    .findings
                    .push(violation_finding(&target.cluster, id, &v, now_ms));
                report.ledgers.violations.push(ReportedViolation {
                    ledger: id,
                    violation: v,
                });
            }
        }
    }
    report.snapshot.nodes = bookie_nodes(&final_registry, &silent, now_ms);
    report.snapshot.racks = final_registry.racks.clone();
    report.snapshot.cycle_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// What became of one ledger.
#[derive(Debug, Default)]
struct Outcome {
    verdict: Option<LedgerVerdict>,
    errors: Vec<CollectorErrorRecord>,
    redone: u32,
    unsettled: bool,
}

impl Outcome {
    fn unavailable(&self) -> &[String] {
        match &self.verdict {
            Some(LedgerVerdict::Checked {
                unavailable_bookies,
                ..
            }) => unavailable_bookies,
            _ => &[],
        }
    }
}

struct Pass<'a> {
    collector: &'a Collector,
    racks: &'a BTreeMap<String, String>,
    opts: &'a AuditOptions,
    now_ms: u64,
}

impl Pass<'_> {
    /// Observes and judges one ledger, redoing it while its metadata changes under a violation.
    async fn ledger(&self, id: u64) -> Outcome {
        let mut out = Outcome::default();
        for attempt in 0..=self.opts.redo_limit {
            let obs = match self.collector.observe(id).await {
                Ok(Some(obs)) => obs,
                Ok(None) => return out,
                Err(e) => {
                    out.errors.push(e.record());
                    return out;
                }
            };
            let verdict = check_ledger(&obs, self.racks, &self.opts.thresholds, self.now_ms);
            let violated = matches!(&verdict, LedgerVerdict::Checked { violations, .. } if !violations.is_empty());
            if violated {
                match self.collector.metadata_version(id).await {
                    Ok(Some(v)) if v == obs.metadata_version => {}
                    Ok(None) => return out,
                    Ok(Some(_)) => {
                        if attempt < self.opts.redo_limit {
                            out.redone += 1;
                        } else {
                            out.unsettled = true;
                        }
                        continue;
                    }
                    Err(e) => {
                        out.errors.push(e.record());
                        return out;
                    }
                }
            }
            out.errors = failed_answers(&obs);
            out.verdict = Some(verdict);
            return out;
        }
        out
    }
}

/// Bad answers (as opposed to silence) are the cluster's doing: `collector_error` records naming the bookie.
fn failed_answers(obs: &LedgerObservation) -> Vec<CollectorErrorRecord> {
    obs.answers
        .iter()
        .filter_map(|(bookie, a)| match a {
            BookieAnswer::Failed { reason } => Some(CollectorErrorRecord {
                node: Some(NodeRef::new(NodeRole::Bookie, bookie).with_addr(bookie)),
                request: "GET_LIST_OF_ENTRIES_OF_LEDGER (11)".into(),
                error: format!("ledger {}: {reason}", obs.layout.id),
            }),
            _ => None,
        })
        .collect()
}

/// Probes `bookies` concurrently; returns those that did not answer, with why.
async fn probe_all(collector: &Collector, bookies: &BTreeSet<String>) -> BTreeMap<String, String> {
    let probes = bookies.iter().map(|b| async move {
        let r = collector.probe(b).await;
        (b.clone(), r)
    });
    futures::future::join_all(probes)
        .await
        .into_iter()
        .filter_map(|(b, r)| r.err().map(|e| (b, e.to_string())))
        .collect()
}

/// Every bookie the registry knows, with its registration and whether it answered: writable → active,
/// read-only → read-only, registered but silent → fenced (not serving), cookie only → unregistered.
fn bookie_nodes(
    registry: &Registry,
    silent: &BTreeMap<String, String>,
    now_ms: u64,
) -> Vec<NodeStatus> {
    let mut ids: BTreeSet<&String> = registry.cookies.iter().collect();
    ids.extend(silent.keys());
    ids.extend(&registry.writable);
    ids.extend(&registry.read_only);
    ids.into_iter()
        .map(|id| {
            let (registration, answered, error) = if let Some(why) = silent.get(id) {
                let registered = registry.writable.contains(id) || registry.read_only.contains(id);
                let state = if registered {
                    ObservedNodeState::Fenced
                } else {
                    ObservedNodeState::Unregistered
                };
                (state, false, Some(why.clone()))
            } else if registry.read_only.contains(id) {
                (ObservedNodeState::ReadOnly, true, None)
            } else if registry.writable.contains(id) {
                (ObservedNodeState::Active, true, None)
            } else {
                (
                    ObservedNodeState::Unregistered,
                    false,
                    Some("not registered (cookie only)".into()),
                )
            };
            NodeStatus {
                node: NodeRef::new(NodeRole::Bookie, id.as_str()).with_addr(id.as_str()),
                registration: Some(registration),
                expected: false,
                answered,
                error,
                last_answer_ms: answered.then_some(now_ms),
                replica_of: None,
                store_max_offset: None,
            }
        })
        .collect()
}
