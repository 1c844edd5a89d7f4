//! Time for the demo's charts: the history computed at start (every simulated cluster's cycles from
//! `backfill` ago until now, one a minute, with the time injected, through the same `run::cycle` and
//! `serve::record::record_cycle` as the live loop, then rolled up to hours and days), and the producer latency
//! series and the simulated probe's series: every minute of the history at start, then the current minute every
//! few seconds from a side thread with its own store connection (SQLite in WAL mode takes both writers).

use crate::config::Config;
use crate::run::{Collectors, cycle};
use crate::serve::record::record_cycle;
use crate::state::StateDir;
use anyhow::{Context, Result};
use mqwatch_alert::Alerting;
use mqwatch_demo::LatencyModel;
use mqwatch_model::Span;
use mqwatch_state::ClusterState;
use mqwatch_store::{HOUR_MS, MINUTE_MS, SeriesPoint, Store};
use std::path::Path;
use std::time::Duration;

/// History's step.
const STEP_MS: u64 = MINUTE_MS;

/// Runs every simulated cluster's cycles over `[from_ms, to_ms)`, records them, writes the latency series of
/// those minutes, rolls up, and hands each cluster's memory over to the live loop.
pub async fn backfill(config: &Config, state: &StateDir, from_ms: u64, to_ms: u64) -> Result<()> {
    let store = open(config, state.path()).await?;
    let alerting = std::sync::Arc::new(Alerting::new(
        config.alerts.clone(),
        config.channels.clone(),
    ));
    let mut clusters: Vec<_> = config
        .clusters
        .iter()
        .map(|c| (c, Collectors::new(c), ClusterState::new()))
        .collect();
    let mut t = from_ms;
    while t < to_ms {
        for (cluster, collectors, memory) in &mut clusters {
            let result = cycle(
                cluster,
                collectors,
                &config.thresholds,
                state,
                memory,
                &|_, _| {},
                t,
            )
            .await?;
            record_cycle(&store, &alerting, &result, t).await?;
        }
        t += STEP_MS;
    }
    let window = probe_window(config);
    let minutes = (from_ms / MINUTE_MS..to_ms.div_ceil(MINUTE_MS)).map(|m| m * MINUTE_MS);
    let model = super::estate::latency_model();
    let points: Vec<SeriesPoint> = minutes
        .flat_map(|m| {
            let latency = model.as_ref().map(|model| points(model, m));
            // The probe's rows as serve writes them: the last window of each minute.
            let probe = probe_points((m + MINUTE_MS - 1).min(to_ms), window);
            latency.into_iter().flatten().chain(probe)
        })
        .collect();
    store.insert_minutes(&points).await?;
    store
        .roll_up(from_ms - from_ms % HOUR_MS, to_ms)
        .await
        .context("rolling up the history")?;
    for (_, collectors, memory) in clusters {
        if let Some(sim) = &collectors.simulated {
            sim.hand_over(memory);
        }
    }
    Ok(())
}

/// Starts the side thread that writes the current minute's latency and probe series every few seconds.
pub fn keep_latency_written(config: &Config, state_dir: &Path) -> Result<()> {
    let Some(model) = super::estate::latency_model() else {
        return Ok(());
    };
    let window = probe_window(config);
    let every = config
        .clusters
        .first()
        .map_or(Duration::from_secs(10), |c| c.interval.0)
        .max(Duration::from_secs(1));
    let (config, dir) = (config.clone(), state_dir.to_path_buf());
    std::thread::Builder::new()
        .name("demo-latency".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(store) = open(&config, &dir).await else {
                    return;
                };
                loop {
                    let now = crate::run::now_ms();
                    let rows: Vec<SeriesPoint> = points(&model, now)
                        .into_iter()
                        .chain(probe_points(now, window))
                        .collect();
                    if let Err(e) = store.insert_minutes(&rows).await {
                        tracing::warn!("demo: cannot write latency and probe series: {e}");
                    }
                    tokio::time::sleep(every).await;
                }
            });
        })
        .context("cannot start the latency thread")?;
    Ok(())
}

fn points(model: &LatencyModel, minute_ms: u64) -> Vec<SeriesPoint> {
    model
        .minute(minute_ms)
        .into_iter()
        .map(|p| SeriesPoint::new(p.cluster, p.metric, p.subject, p.minute_ms, p.value))
        .collect()
}

/// The window each probe row summarises: the collection interval, as `serve` writes a running prober's rows.
fn probe_window(config: &Config) -> u64 {
    config
        .clusters
        .first()
        .map_or(10_000, |c| c.interval.as_millis())
}

/// The simulated probe's rows at `now_ms`, at its minute.
fn probe_points(now_ms: u64, window_ms: u64) -> Vec<SeriesPoint> {
    super::estate::probe_series(now_ms, window_ms)
        .into_iter()
        .map(|(cluster, metric, subject, v)| SeriesPoint::new(cluster, metric, subject, now_ms, v))
        .collect()
}

async fn open(config: &Config, dir: &Path) -> Result<Store> {
    let url = config.store.resolve(dir).context("config key store.url")?;
    Store::open(&url)
        .await
        .with_context(|| format!("cannot open the store {url}"))
}

/// How much history `--backfill` asks for, checked.
pub fn parse_backfill(text: &str) -> Result<Span> {
    mqwatch_model::parse_duration(text)
        .map(Span)
        .map_err(|e| anyhow::anyhow!("--backfill {text:?}: {e}"))
}
