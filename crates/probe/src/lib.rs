//! mqwatch-probe: the end-to-end probe (kminion's idea) for clusters whose clients are not instrumented.
//! mqwatch itself produces a small timestamped message to a canary topic on every broker at an interval and
//! reads it back: per broker, the produce latency (send → acknowledgement), the round-trip latency (send →
//! read back) and the messages lost (not read back within the SLA, failed sends included).
//!
//! What it owns: the `[cluster.probe]` settings ([`ProbeConfig`]), the per-engine targets ([`target`],
//! [`rocketmq`], [`kafka`]), the running probe ([`Prober`], one tokio task per cluster plus one per message in
//! flight), its books ([`ledger`]), the pure check that turns them into `produce_failure` findings about the
//! broker ([`check`]), and a process-wide registry keyed by cluster name ([`registry`]) so the binary wires
//! it in with a call per cycle. What it is not: a client library; it is the one place mqwatch writes to a
//! cluster, and it writes only to its canary topic.

pub mod check;
pub mod kafka;
pub mod ledger;
pub mod registry;
pub mod rocketmq;
pub mod target;

pub use check::probe_findings;
pub use ledger::{BrokerSummary, Ledger, Outcome};
pub use target::{ProbeBroker, Target};

use mqwatch_model::Span;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `[cluster.probe]`: off unless `enabled = true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProbeConfig {
    /// Whether the probe runs (default false: mqwatch writes nothing to a cluster unless told to).
    pub enabled: bool,
    /// The canary topic (default `mqwatch-canary`), created on every broker when missing.
    pub topic: String,
    /// How often each broker gets a probe message (default 10s).
    pub interval: Span,
    /// How long a message may take to be read back before it counts as lost (default 30s).
    pub sla: Span,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            topic: "mqwatch-canary".into(),
            interval: Span::from_secs(10),
            sla: Span::from_secs(30),
        }
    }
}

impl ProbeConfig {
    /// Why the settings cannot run, if they cannot.
    pub fn validate(&self) -> Result<(), String> {
        if self.topic.trim().is_empty() {
            return Err("topic: must not be empty".into());
        }
        if self.interval.0 < Duration::from_millis(100) {
            return Err(format!("interval: {} is below 100ms", self.interval));
        }
        if self.sla.0.is_zero() {
            return Err("sla: must be above 0".into());
        }
        Ok(())
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

struct Inner {
    target: Target,
    config: ProbeConfig,
    ledger: Mutex<Ledger>,
    /// Every broker seen so far, by name: one that vanished from the listing (a stopped RocketMQ broker leaves
    /// the name server within a second) is still probed, so its loss shows.
    known: Mutex<BTreeMap<String, ProbeBroker>>,
    seq: AtomicU64,
}

/// A running probe of one cluster; stops (with its messages in flight) when dropped.
pub struct Prober {
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Prober {
    /// Starts probing `target` every `config.interval` (first round at once). Needs a tokio runtime.
    pub fn start(target: Target, config: ProbeConfig) -> Self {
        let inner = Arc::new(Inner {
            target,
            config,
            ledger: Mutex::new(Ledger::default()),
            known: Mutex::new(BTreeMap::new()),
            seq: AtomicU64::new(0),
        });
        let task = tokio::spawn(run(inner.clone()));
        Self { inner, task }
    }

    /// Its settings.
    pub fn config(&self) -> &ProbeConfig {
        &self.inner.config
    }

    /// Each broker's outcomes known in the `window_ms` before `now_ms`.
    pub fn summaries(&self, now_ms: u64, window_ms: u64) -> Vec<BrokerSummary> {
        self.inner
            .ledger
            .lock()
            .map(|l| l.summaries(now_ms, window_ms))
            .unwrap_or_default()
    }

    /// Why the brokers could not be listed at the last round, if they could not.
    pub fn discovery_error(&self) -> Option<String> {
        self.inner
            .ledger
            .lock()
            .ok()
            .and_then(|l| l.discovery_error().map(str::to_string))
    }
}

async fn run(inner: Arc<Inner>) {
    let mut tick = tokio::time::interval(inner.config.interval.0.max(Duration::from_millis(100)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut messages = tokio::task::JoinSet::new();
    loop {
        tick.tick().await;
        while messages.try_join_next().is_some() {}
        let listed = inner.target.discover().await;
        let brokers: Vec<ProbeBroker> = {
            let Ok(mut known) = inner.known.lock() else {
                return;
            };
            let error = match listed {
                Ok(list) => {
                    for b in list {
                        known.insert(b.node.name.clone(), b);
                    }
                    None
                }
                Err(e) => Some(e),
            };
            if let Ok(mut l) = inner.ledger.lock() {
                l.set_discovery_error(error);
            }
            known.values().cloned().collect()
        };
        for b in brokers {
            messages.spawn(message(inner.clone(), b));
        }
    }
}

/// One probe message's life: send, then read back until seen or the SLA is over; the outcome goes to the books.
async fn message(inner: Arc<Inner>, broker: ProbeBroker) {
    let id = inner.seq.fetch_add(1, Ordering::Relaxed);
    let sent_ms = now_ms();
    let body = format!("mqwatch-probe {} {id} {sent_ms}", broker.node.name).into_bytes();
    if let Ok(mut l) = inner.ledger.lock() {
        l.sending(&broker.node);
    }
    let sla = inner.config.sla.0;
    let start = Instant::now();
    let outcome =
        match tokio::time::timeout(sla, inner.target.send(&broker, &body, sent_ms as i64)).await {
            Err(_) => Outcome::SendFailed {
                error: format!(
                    "{}: no acknowledgement within the sla ({})",
                    broker.addr, inner.config.sla
                ),
            },
            Ok(Err(error)) => Outcome::SendFailed { error },
            Ok(Ok(offset)) => {
                let produce = start.elapsed();
                let seen = || inner.target.seen(&broker, offset, &body, sent_ms as i64);
                read_back(seen, sla, start, produce).await
            }
        };
    if let Ok(mut l) = inner.ledger.lock() {
        l.record(&broker.node, now_ms(), outcome);
    }
}

/// Reads back with `seen` until it says yes (delivered) or `sla` since `start` is over (lost, with the last read
/// error): polls from 5 ms, doubling to 200 ms.
async fn read_back<F, Fut>(mut seen: F, sla: Duration, start: Instant, produce: Duration) -> Outcome
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, String>>,
{
    let mut pause = Duration::from_millis(5);
    let mut error = None;
    loop {
        let Some(left) = sla.checked_sub(start.elapsed()).filter(|d| !d.is_zero()) else {
            return Outcome::Lost { produce, error };
        };
        match tokio::time::timeout(left, seen()).await {
            Ok(Ok(true)) => {
                return Outcome::Delivered {
                    produce,
                    roundtrip: start.elapsed(),
                };
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => error = Some(e),
            Err(_) => return Outcome::Lost { produce, error },
        }
        let left = sla.saturating_sub(start.elapsed());
        tokio::time::sleep(pause.min(left)).await;
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLA: Duration = Duration::from_millis(150);

    #[tokio::test]
    async fn a_message_never_seen_is_lost_at_the_sla_with_the_last_read_error() {
        let start = Instant::now();
        let mut reads = 0;
        let o = read_back(
            || {
                reads += 1;
                let n = reads;
                async move {
                    if n % 2 == 0 {
                        Err(format!("read {n} refused"))
                    } else {
                        Ok(false)
                    }
                }
            },
            SLA,
            start,
            Duration::from_millis(1),
        )
        .await;
        assert!(start.elapsed() >= SLA, "not before the sla");
        assert!(reads >= 3, "polled {reads} times");
        match o {
            Outcome::Lost { error: Some(e), .. } => assert!(e.contains("refused"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_read_that_hangs_past_the_sla_is_lost() {
        let start = Instant::now();
        let o = read_back(
            std::future::pending::<Result<bool, String>>,
            SLA,
            start,
            Duration::ZERO,
        )
        .await;
        assert!(matches!(o, Outcome::Lost { error: None, .. }), "{o:?}");
    }

    #[tokio::test]
    async fn a_message_seen_on_the_third_read_is_delivered() {
        let start = Instant::now();
        let mut reads = 0;
        let o = read_back(
            || {
                reads += 1;
                let n = reads;
                async move { Ok(n >= 3) }
            },
            Duration::from_secs(30),
            start,
            Duration::from_millis(1),
        )
        .await;
        assert_eq!(reads, 3);
        match o {
            Outcome::Delivered { roundtrip, .. } => assert!(roundtrip >= Duration::from_millis(15)),
            other => panic!("{other:?}"),
        }
    }
}
