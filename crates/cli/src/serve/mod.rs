//! `mqwatch serve`: one collection loop per cluster on its interval, and HTTP that serves the latest complete
//! results (never waiting for a collection): `/healthz`, `/api/v1/clusters`, `/api/v1/clusters/{name}` (the
//! snapshot and its findings), `/api/v1/clusters/{name}/traffic` (minute / hour / day windows per topic, group,
//! broker and cluster, and the 10-minute topic ranking) and `/api/v1/findings`, plus the store-backed alarms,
//! silences and series of [`api`]. A timer ticks the traffic windows every 10 s (their minute window samples at
//! that rate).
//!
//! The dashboard (`mqwatch-web`, embedded) is served at `/` and `/assets/`, with the read-only views it needs
//! ([`views`]: `/api/v1/overview`, `/api/v1/clusters/{name}/groups`, `/api/v1/clusters/{name}/durability`,
//! `/api/v1/clusters/{name}/nodes`; [`probe_view`]: `/api/v1/clusters/{name}/probe`).
//!
//! The store (default: `mqwatch.db` in the state directory) gets each finished cycle's findings, series rows and
//! alarm changes ([`record`]); `/metrics` is the Prometheus exposition of the latest results ([`metrics`]);
//! alarm acknowledgements and the optional read token are [`alarms_api`]; a [`Deliverer`] drains its outbox
//! through the channels every second; every hour the
//! last two hours are rolled up and retention applied. Stops gracefully on Ctrl-C or SIGTERM: HTTP stops taking
//! requests, the delivery pass in progress finishes, and everything committed stays committed.

mod alarms_api;
mod api;
mod intake;
pub mod metrics;
mod probe_view;
pub(crate) mod record;
mod views;

use crate::config::{ClusterConfig, Config};
use crate::run::{CycleResult, cycle, now_ms};
use crate::state::StateDir;
use anyhow::{Context, Result};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use mqwatch_alert::{Alerting, Deliverer};
use mqwatch_checks::Thresholds;
use mqwatch_model::Finding;
use mqwatch_state::{ClusterState, Traffic};
use mqwatch_stats::clock::SystemClock;
use mqwatch_store::{HOUR_MS, Retention, Store};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// What the HTTP handlers read: the latest cycle of each cluster, each cluster's traffic windows, and the store.
#[derive(Clone)]
struct Shared {
    latest: Arc<RwLock<BTreeMap<String, CycleResult>>>,
    traffic: Arc<BTreeMap<String, Arc<Traffic>>>,
    store: Store,
    /// `[server] token`: what write requests must bear.
    token: Option<String>,
    /// `[server] read_token`: what reads must bear when set ([`alarms_api::require_read_token`]).
    read_token: Option<String>,
    /// `[server] metrics_detail`.
    metrics_detail: metrics::MetricsDetail,
}

/// What each collection loop needs to record its cycles.
#[derive(Clone)]
struct Recorder {
    store: Store,
    alerting: Arc<Alerting>,
}

/// Runs until interrupted.
pub fn run(config: Config, listen: Option<String>, state: StateDir) -> Result<ExitCode> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let listen = listen.unwrap_or_else(|| config.server.listen.clone());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(serve(config, listen, state))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(config: Config, listen: String, state: StateDir) -> Result<()> {
    let url = config
        .store
        .resolve(state.path())
        .context("config key store.url")?;
    let store = Store::open(&url)
        .await
        .with_context(|| format!("cannot open the store {url}"))?;
    tracing::info!(store = %store.describe(), "store open");
    crate::extras::attach_store(store.clone());
    let traffic = config
        .clusters
        .iter()
        .map(|c| (c.name.clone(), Arc::new(Traffic::new())))
        .collect();
    let shared = Shared {
        latest: Arc::default(),
        traffic: Arc::new(traffic),
        store: store.clone(),
        token: config.server.token.clone().filter(|t| !t.is_empty()),
        read_token: config.server.read_token.clone().filter(|t| !t.is_empty()),
        metrics_detail: config.server.metrics_detail,
    };
    let recorder = Recorder {
        store: store.clone(),
        alerting: Arc::new(Alerting::new(
            config.alerts.clone(),
            config.channels.clone(),
        )),
    };
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    };
    let mut tasks = Vec::new();
    tasks.push(tokio::spawn(tick_traffic(shared.traffic.clone())));
    tasks.push(tokio::spawn(maintain(
        store.clone(),
        config.store.retention,
    )));
    for cluster in config.clusters.clone() {
        tasks.push(tokio::spawn(collect_loop(
            cluster,
            config.thresholds.clone(),
            state.clone(),
            shared.clone(),
            recorder.clone(),
        )));
    }
    let deliverer = Deliverer::new(store.clone(), &config.channels, Arc::new(SystemClock));
    let delivery = tokio::spawn({
        let stopped = stopped();
        async move { deliverer.run(Duration::from_secs(1), stopped).await }
    });
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(prometheus))
        .route("/api/v1/clusters", get(clusters))
        .route("/api/v1/clusters/{name}", get(cluster))
        .route("/api/v1/clusters/{name}/traffic", get(traffic_report))
        .route("/api/v1/clusters/{name}/series", get(api::series))
        .route("/api/v1/findings", get(findings))
        .route("/api/v1/alarms", get(api::alarms))
        .route(
            "/api/v1/silences",
            get(api::silences).post(api::add_silence),
        )
        .route("/api/v1/silences/{id}", delete(api::delete_silence))
        .merge(intake::router(&config))
        .route("/api/v1/overview", get(views::overview))
        .route("/api/v1/clusters/{name}/groups", get(views::groups))
        .route("/api/v1/clusters/{name}/durability", get(views::durability))
        .route("/api/v1/clusters/{name}/nodes", get(views::nodes))
        .route("/api/v1/clusters/{name}/probe", get(probe_view::probe))
        .merge(mqwatch_web::router())
        .route("/api/v1/alarms/{key}/ack", post(alarms_api::ack))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            alarms_api::require_read_token,
        ))
        .with_state(shared);
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    eprintln!("mqwatch: listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    let _ = stop_tx.send(true);
    for task in &tasks {
        task.abort();
    }
    if tokio::time::timeout(Duration::from_secs(10), delivery)
        .await
        .is_err()
    {
        tracing::warn!(
            "the delivery pass did not finish within 10s; its claims wait out their lease"
        );
    }
    eprintln!("mqwatch: stopped");
    Ok(())
}

/// Every hour (first at start): rolls up the last two hours and applies retention. Errors are logged.
async fn maintain(store: Store, retention: Retention) {
    let mut ticker = tokio::time::interval(Duration::from_millis(HOUR_MS));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let now = now_ms();
        if let Err(e) = store.roll_up(now.saturating_sub(2 * HOUR_MS), now).await {
            tracing::warn!(store = %store.describe(), "roll-up failed: {e}");
        }
        match store.apply_retention(now, &retention).await {
            Ok(report) => tracing::info!(?report, "retention applied"),
            Err(e) => tracing::warn!(store = %store.describe(), "retention failed: {e}"),
        }
    }
}

async fn tick_traffic(windows: Arc<BTreeMap<String, Arc<Traffic>>>) {
    let mut ticker = tokio::time::interval(Duration::from_secs(10));
    loop {
        ticker.tick().await;
        let now = now_ms();
        for t in windows.values() {
            t.tick(now);
        }
    }
}

fn restore_lifecycles(state: &StateDir, cluster: &str, memory: &mut ClusterState) {
    if let Err(e) = state.restore_lifecycles(cluster, &mut memory.lifecycle) {
        tracing::warn!(cluster = %cluster, "lifecycles not restored: {e:#}");
    }
}

fn save_lifecycles(state: &StateDir, cluster: &str, memory: &ClusterState, now_ms: u64) {
    if let Err(e) = state.save_lifecycles(cluster, &memory.lifecycle, now_ms) {
        tracing::warn!(cluster = %cluster, "lifecycles not saved: {e:#}");
    }
}

async fn collect_loop(
    cluster: ClusterConfig,
    thresholds: Thresholds,
    state: StateDir,
    shared: Shared,
    recorder: Recorder,
) {
    let collectors = crate::run::Collectors::new(&cluster);
    let traffic = shared
        .traffic
        .get(&cluster.name)
        .cloned()
        .unwrap_or_default();
    let mut memory = ClusterState::with_traffic(traffic);
    // Lifecycles survive a restart (and carry over from `check` runs on the same state directory).
    restore_lifecycles(&state, &cluster.name, &mut memory);
    let mut ticker = tokio::time::interval(cluster.interval.0);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match cycle(
            &cluster,
            &collectors,
            &thresholds,
            &state,
            &mut memory,
            &|_, _| {},
            now_ms(),
        )
        .await
        {
            Ok(result) => {
                let (findings, cycle_ms) = (result.findings.len(), result.snapshot.cycle_ms);
                save_lifecycles(&state, &cluster.name, &memory, result.snapshot.taken_at_ms);
                tracing::info!(cluster = %cluster.name, findings, cycle_ms, "cycle done");
                match record::record_cycle(&recorder.store, &recorder.alerting, &result, now_ms())
                    .await
                {
                    Ok(outcome) => {
                        for n in &outcome.notifications {
                            tracing::info!(alarm = %n.key, event = ?n.event, channels = ?n.channels,
                                "alarm notification queued");
                        }
                    }
                    Err(e) => tracing::error!(cluster = %cluster.name, "{e:#}"),
                }
                if let Ok(mut l) = shared.latest.write() {
                    l.insert(cluster.name.clone(), result);
                }
            }
            Err(e) => tracing::error!(cluster = %cluster.name, "cycle failed: {e:#}"),
        }
    }
}

async fn shutdown() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

fn not_found(name: &str) -> axum::response::Response {
    (
        StatusCode::NOT_FOUND,
        format!("no cluster {name:?} (or no cycle finished yet)\n"),
    )
        .into_response()
}

async fn prometheus(State(shared): State<Shared>) -> axum::response::Response {
    let text = match shared.latest.read() {
        Ok(latest) => metrics::render(&latest, shared.metrics_detail),
        Err(_) => String::new(),
    };
    (
        [(axum::http::header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        text,
    )
        .into_response()
}

async fn clusters(State(shared): State<Shared>) -> impl IntoResponse {
    let latest = shared.latest.read().map(|l| l.clone()).unwrap_or_default();
    let list: Vec<serde_json::Value> = latest
        .values()
        .map(|r| {
            serde_json::json!({
                "name": r.snapshot.cluster,
                "engine": r.snapshot.engine,
                "taken_at_ms": r.snapshot.taken_at_ms,
                "cycle_ms": r.snapshot.cycle_ms,
                "findings": r.findings.len(),
                "worst": Finding::worst(&r.findings),
                "simulated": crate::demo::is_simulated(&r.snapshot.cluster),
            })
        })
        .collect();
    Json(list)
}

async fn cluster(
    State(shared): State<Shared>,
    Path(name): Path<String>,
) -> axum::response::Response {
    match shared
        .latest
        .read()
        .ok()
        .and_then(|l| l.get(&name).cloned())
    {
        Some(r) => Json(r).into_response(),
        None => not_found(&name),
    }
}

async fn traffic_report(
    State(shared): State<Shared>,
    Path(name): Path<String>,
) -> axum::response::Response {
    match shared.traffic.get(&name) {
        Some(t) => Json(t.report()).into_response(),
        None => not_found(&name),
    }
}

async fn findings(State(shared): State<Shared>) -> impl IntoResponse {
    let latest = shared.latest.read().map(|l| l.clone()).unwrap_or_default();
    Json(
        latest
            .values()
            .flat_map(|r| r.findings.clone())
            .collect::<Vec<Finding>>(),
    )
}
