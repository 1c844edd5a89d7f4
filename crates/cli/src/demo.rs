//! `mqwatch demo`: the whole product — `serve`'s cycles, checks, alarms, store, HTTP API and `/metrics` — on a
//! built-in simulated estate (`crates/demo`: a RocketMQ, a Kafka and a BookKeeper cluster emitting what the real
//! collectors emit, with faults injected on a schedule and recovering later).
//!
//! Start-up: the estate is configured (seed, speed, start), a few hours of history are computed through the
//! same cycle and recording code as the live loop, with an injected clock stepping a minute at a time
//! ([`history`]), then `serve` runs on a config whose clusters have `source = "simulated"`. A side thread keeps
//! the producer latency series (`produce_latency_p50_ms` … per `topic <name>`) of the current minute written,
//! and the simulated probe's series (`probe_roundtrip_p50_ms` … per `broker <name>`).
//!
//! The store is SQLite in a fresh temporary directory (removed at exit) unless `--state-dir` names one (kept).
//! `--speed N` runs the fault schedule N times faster and scales every time threshold, count threshold and
//! the collection interval alike, so that what a visitor sees in 30 minutes a test sees in one at speed 30.

mod estate;
mod history;

pub use estate::{
    Params, Simulated, collect, configure, is_simulated, judge, probe_summaries, simulated,
};
pub use history::parse_backfill;

use crate::config::{ClusterConfig, Config};
use crate::state::StateDir;
use anyhow::{Context, Result, bail};
use mqwatch_demo::Schedule;
use mqwatch_model::{Engine, Span};
use std::path::PathBuf;
use std::process::ExitCode;

/// How long the simulation runs before the history starts.
const WARM_UP_MS: u64 = 5 * 60_000;

/// What `mqwatch demo` was asked for.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// HTTP listen address.
    pub listen: String,
    /// Seed of the simulation.
    pub seed: u64,
    /// How much faster than real time the fault schedule runs.
    pub speed: f64,
    /// History computed at start.
    pub backfill: Span,
    /// Bearer token for silences; generated when absent.
    pub token: Option<String>,
    /// `--state-dir`: keep the store there instead of a temporary directory.
    pub state_dir: Option<PathBuf>,
}

/// The simulated clusters' names.
pub const CLUSTERS: [(&str, Engine); 3] = [
    ("demo-rocketmq", Engine::Rocketmq),
    ("demo-kafka", Engine::Kafka),
    ("demo-bookkeeper", Engine::Bookkeeper),
];

/// The demo's config: the three simulated clusters (the probe on for RocketMQ and Kafka), a collection interval
/// of 10 s, MQCloud's thresholds and the alarm defaults, each duration and count scaled down by `speed`.
pub fn config(listen: &str, token: &str, speed: f64) -> Config {
    let scale = |s: Span| Span::from_millis(((s.as_millis() as f64 / speed).round() as u64).max(1));
    let mut config = Config::default();
    config.server.listen = listen.to_string();
    config.server.token = Some(token.to_string());
    let interval = Span::from_millis(((10_000.0 / speed) as u64).max(200));
    config.clusters = CLUSTERS
        .iter()
        .map(|(name, engine)| {
            let mut c = ClusterConfig {
                interval,
                ..ClusterConfig::simulated(name, *engine)
            };
            // The end-to-end probe, simulated ([`estate`]), where it runs: RocketMQ and Kafka.
            if *engine != Engine::Bookkeeper {
                c.probe.enabled = true;
                c.probe.interval = scale(c.probe.interval).max(Span::from_millis(100));
                c.probe.sla = scale(c.probe.sla);
            }
            c
        })
        .collect();
    let t = &mut config.thresholds;
    t.backlog.count = ((t.backlog.count as f64 / speed).round() as i64).max(1);
    t.backlog.age = scale(t.backlog.age);
    t.client_blocked.block = scale(t.client_blocked.block);
    t.client_blocked.min_block = scale(t.client_blocked.min_block);
    let cached = t.client_blocked.min_cached_messages as f64 / speed;
    t.client_blocked.min_cached_messages = (cached.round() as i64).max(1);
    t.lifecycle.startup = scale(t.lifecycle.startup);
    t.lifecycle.controlled_shutdown = scale(t.lifecycle.controlled_shutdown);
    t.replication.stuck_after = scale(t.replication.stuck_after);
    t.produce_failure.window = scale(t.produce_failure.window);
    config
}

/// Runs the demo until interrupted.
pub fn run(opts: DemoOptions) -> Result<ExitCode> {
    if !(opts.speed.is_finite() && opts.speed > 0.0) {
        bail!("--speed {}: must be a positive number", opts.speed);
    }
    let start = crate::run::now_ms();
    let token = opts.token.clone().unwrap_or_else(|| {
        let salt = u64::from(std::process::id()) << 32 ^ start;
        format!("demo-{:016x}", mqwatch_demo::noise::mix(salt))
    });
    let (dir, temporary) = match &opts.state_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("mqwatch-demo-{}-{start}", std::process::id())),
            true,
        ),
    };
    if dir.join("mqwatch.db").exists() {
        bail!(
            "{} already holds a store: the demo needs a fresh state directory",
            dir.display()
        );
    }
    let state = StateDir::resolve(Some(&dir), None)?;
    let config = config(&opts.listen, &token, opts.speed);
    let backfill = opts.backfill.as_millis();
    configure(Params {
        seed: opts.seed,
        schedule: Schedule::anchored(start, backfill, opts.speed),
        // A few minutes more than the history, so its first minute already has a minute behind it.
        start_ms: start.saturating_sub(backfill + WARM_UP_MS),
    });
    eprintln!(
        "mqwatch demo: a simulated estate (seed {}, speed {}): {}; store {}",
        opts.seed,
        opts.speed,
        CLUSTERS.map(|c| c.0).join(", "),
        dir.join("mqwatch.db").display()
    );
    eprintln!("mqwatch demo: silences need the token {token}");
    eprintln!(
        "mqwatch demo: computing {} of history…",
        Span::from_millis(backfill)
    );
    let result = run_in(&config, &state, start, backfill, &opts.listen);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn run_in(
    config: &Config,
    state: &StateDir,
    start: u64,
    backfill: u64,
    listen: &str,
) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(history::backfill(config, state, start - backfill, start))
        .context("computing the demo's history")?;
    drop(rt);
    history::keep_latency_written(config, state.path())?;
    if !listen.ends_with(":0") {
        eprintln!("mqwatch demo: open http://{listen}/");
    }
    crate::serve::run(config.clone(), None, state.clone())
}
