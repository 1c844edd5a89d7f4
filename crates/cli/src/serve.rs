//! `mqwatch serve`: one collection loop per cluster on its interval, and HTTP that serves the latest complete
//! results (never waiting for a collection): `/healthz`, `/api/v1/clusters`, `/api/v1/clusters/{name}` (the
//! snapshot and its findings), `/api/v1/clusters/{name}/traffic` (minute / hour / day windows per topic, group,
//! broker and cluster, and the 10-minute topic ranking) and `/api/v1/findings`. A timer ticks the traffic windows
//! every 10 s (their minute window samples at that rate). Stops gracefully on Ctrl-C or SIGTERM.

use crate::config::{ClusterConfig, Config};
use crate::run::{CycleResult, cycle, now_ms};
use crate::state::StateDir;
use anyhow::{Context, Result};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use mqwatch_checks::Thresholds;
use mqwatch_model::Finding;
use mqwatch_state::{ClusterState, Traffic};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// What the HTTP handlers read: the latest cycle of each cluster, and each cluster's traffic windows.
#[derive(Clone, Default)]
struct Shared {
    latest: Arc<RwLock<BTreeMap<String, CycleResult>>>,
    traffic: Arc<BTreeMap<String, Arc<Traffic>>>,
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
    let traffic = config
        .clusters
        .iter()
        .map(|c| (c.name.clone(), Arc::new(Traffic::new())))
        .collect();
    let shared = Shared {
        latest: Arc::default(),
        traffic: Arc::new(traffic),
    };
    tokio::spawn(tick_traffic(shared.traffic.clone()));
    for cluster in config.clusters.clone() {
        tokio::spawn(collect_loop(
            cluster,
            config.thresholds.clone(),
            state.clone(),
            shared.clone(),
        ));
    }
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/api/v1/clusters", get(clusters))
        .route("/api/v1/clusters/{name}", get(cluster))
        .route("/api/v1/clusters/{name}/traffic", get(traffic_report))
        .route("/api/v1/findings", get(findings))
        .with_state(shared);
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    eprintln!("mqwatch: listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    eprintln!("mqwatch: stopped");
    Ok(())
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

async fn collect_loop(
    cluster: ClusterConfig,
    thresholds: Thresholds,
    state: StateDir,
    shared: Shared,
) {
    let collectors = crate::run::Collectors::new(&cluster);
    let traffic = shared
        .traffic
        .get(&cluster.name)
        .cloned()
        .unwrap_or_default();
    let mut memory = ClusterState::with_traffic(traffic);
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
                tracing::info!(cluster = %cluster.name, findings, cycle_ms, "cycle done");
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
