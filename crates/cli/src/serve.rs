//! `mqwatch serve`: one collection loop per cluster on its interval, and HTTP that serves the latest complete
//! results (never waiting for a collection): `/healthz`, `/api/v1/clusters`, `/api/v1/clusters/{name}` (the
//! snapshot and its findings) and `/api/v1/findings`. Stops gracefully on Ctrl-C or SIGTERM.

use crate::config::Config;
use crate::run::{CycleResult, cycle, now_ms};
use crate::state::StateDir;
use anyhow::{Context, Result};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use mqwatch_model::Finding;
use mqwatch_rocketmq::client::AdminClient;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};

type Latest = Arc<RwLock<BTreeMap<String, CycleResult>>>;

/// Runs until interrupted.
pub fn run(config: Config, listen: Option<String>, state: StateDir) -> Result<ExitCode> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
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
    let latest: Latest = Arc::default();
    for cluster in config.clusters.clone() {
        let (latest, state, thresholds) =
            (latest.clone(), state.clone(), config.thresholds.clone());
        tokio::spawn(async move {
            let client = AdminClient::new(cluster.timeout.0);
            let mut ticker = tokio::time::interval(cluster.interval.0);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut memory = mqwatch_state::ClusterState::new();
            loop {
                ticker.tick().await;
                match cycle(
                    &cluster,
                    &client,
                    &thresholds,
                    &state,
                    &mut memory,
                    now_ms(),
                )
                .await
                {
                    Ok(result) => {
                        tracing::info!(
                            cluster = %cluster.name,
                            findings = result.findings.len(),
                            cycle_ms = result.snapshot.cycle_ms,
                            "cycle done"
                        );
                        if let Ok(mut l) = latest.write() {
                            l.insert(cluster.name.clone(), result);
                        }
                    }
                    Err(e) => tracing::error!(cluster = %cluster.name, "cycle failed: {e:#}"),
                }
            }
        });
    }
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/api/v1/clusters", get(clusters))
        .route("/api/v1/clusters/{name}", get(cluster))
        .route("/api/v1/findings", get(findings))
        .with_state(latest);
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    eprintln!("mqwatch: listening on http://{addr}");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    eprintln!("mqwatch: stopped");
    Ok(())
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

async fn clusters(State(latest): State<Latest>) -> impl IntoResponse {
    let l = latest.read().map(|l| l.clone()).unwrap_or_default();
    let list: Vec<serde_json::Value> = l
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

async fn cluster(State(latest): State<Latest>, Path(name): Path<String>) -> impl IntoResponse {
    match latest.read().ok().and_then(|l| l.get(&name).cloned()) {
        Some(r) => Json(serde_json::to_value(r).unwrap_or_default()).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            format!("no cluster {name:?} (or no cycle finished yet)\n"),
        )
            .into_response(),
    }
}

async fn findings(State(latest): State<Latest>) -> impl IntoResponse {
    let all: Vec<Finding> = latest
        .read()
        .map(|l| l.values().flat_map(|r| r.findings.clone()).collect())
        .unwrap_or_default();
    Json(all)
}
