//! Client reports and the extras' read endpoints, mounted into `serve`'s router with one `merge`:
//!
//! - `POST /api/v1/client-reports`: a report of `mqwatch-client` (`Authorization: Bearer <[server] token>`;
//!   `401` without it or when no token is configured). The report's `cluster` must name a configured cluster;
//!   without one, the only configured cluster is taken. `204` when merged; `400` naming what is wrong.
//! - `GET /api/v1/clusters/{name}/clients?minutes=N`: the producers' statistics over the last N minutes
//!   (default 5, at most 60) merged per topic, broker, client and for the cluster: sends, failures by kind,
//!   latency p50/p90/p99/p99.9/avg/max in ms. The per-minute history is in the series API
//!   (`produce_latency_p99_ms`, subject `topic <t>`, …).
//! - `GET /api/v1/clusters/{name}/hosts`: the latest reading of each of the cluster's hosts (history: the
//!   series API, `host_cpu_percent`, subject `host <endpoint>`, …).

use crate::run::now_ms;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mqwatch_client::Report;
use std::sync::Arc;

/// What the intake needs.
#[derive(Clone)]
struct Intake {
    token: Option<String>,
    clusters: Arc<Vec<String>>,
}

/// The routes, for `Router::merge` (any outer state).
pub fn router<S: Clone + Send + Sync + 'static>(config: &crate::config::Config) -> Router<S> {
    let intake = Intake {
        token: config.server.token.clone().filter(|t| !t.is_empty()),
        clusters: Arc::new(config.clusters.iter().map(|c| c.name.clone()).collect()),
    };
    Router::new()
        .route("/api/v1/client-reports", post(report))
        .route("/api/v1/clusters/{name}/clients", get(clients))
        .route("/api/v1/clusters/{name}/hosts", get(hosts))
        .layer(DefaultBodyLimit::max(16 * 1024 * 1024))
        .with_state(intake)
}

fn fail(status: StatusCode, message: impl Into<String>) -> Response {
    let mut text = message.into();
    text.push('\n');
    (status, text).into_response()
}

async fn report(State(intake): State<Intake>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(token) = intake.token.as_deref() else {
        return fail(
            StatusCode::UNAUTHORIZED,
            "client reports are off: no [server] token is configured",
        );
    };
    if !super::api::bearer(&headers).is_some_and(|g| super::api::token_matches(g, token)) {
        return fail(
            StatusCode::UNAUTHORIZED,
            "client report: missing or wrong bearer token",
        );
    }
    let (report, latencies) = match Report::from_json(&body) {
        Ok(r) => r,
        Err(e) => return fail(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let cluster = match (&report.cluster, intake.clusters.as_slice()) {
        (Some(c), all) if all.contains(c) => c.clone(),
        (Some(c), _) => {
            return fail(
                StatusCode::BAD_REQUEST,
                format!(
                    "client report of {}: no configured cluster named {c:?}",
                    report.client_id
                ),
            );
        }
        (None, [only]) => only.clone(),
        (None, _) => {
            return fail(
                StatusCode::BAD_REQUEST,
                format!(
                    "client report of {}: name its cluster (ReporterConfig::cluster): mqwatch watches {} clusters",
                    report.client_id,
                    intake.clusters.len()
                ),
            );
        }
    };
    match crate::extras::add_report(&cluster, &report, &latencies).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("client report: {e:#}"),
        ),
    }
}

#[derive(serde::Deserialize)]
struct Minutes {
    minutes: Option<u64>,
}

async fn clients(
    State(intake): State<Intake>,
    Path(name): Path<String>,
    Query(q): Query<Minutes>,
) -> Response {
    if !intake.clusters.contains(&name) {
        return fail(StatusCode::NOT_FOUND, format!("no cluster {name:?}"));
    }
    let minutes = q.minutes.unwrap_or(5).clamp(1, 60);
    let to = now_ms() + 1;
    let from = to.saturating_sub(minutes * 60_000);
    let views = crate::extras::client_views(&name, from, to);
    axum::Json(serde_json::json!({
        "cluster": name,
        "from_ms": from,
        "to_ms": to,
        "topics": views.topics,
        "brokers": views.brokers,
        "clients": views.clients,
        "total": views.cluster,
    }))
    .into_response()
}

async fn hosts(State(intake): State<Intake>, Path(name): Path<String>) -> Response {
    if !intake.clusters.contains(&name) {
        return fail(StatusCode::NOT_FOUND, format!("no cluster {name:?}"));
    }
    axum::Json(crate::extras::hosts(&name).unwrap_or_default()).into_response()
}
