//! The store-backed part of `serve`'s JSON API: alarms, silences and per-minute series.
//!
//! - `GET /api/v1/alarms`: every alarm row (pending, firing, resolved but not yet forgotten), with its key.
//! - `GET /api/v1/silences[?all=true]`: active silences (all stored ones with `all=true`).
//! - `POST /api/v1/silences`: adds one, body `{"kind"?, "cluster"?, "subject"?, "duration": "2h" | "expires_ms",
//!   "created_by"?, "comment"?}`; `201` with the stored silence.
//! - `DELETE /api/v1/silences/{id}`: `204`, or `404` when there is none.
//! - `GET /api/v1/clusters/{name}/series?metric=&subject=&from=&to=&resolution=`: minute rows (or `hour` / `day`
//!   rollups) of one metric in `[from, to)` (ms; default the last hour), optionally of one subject.
//!
//! Reads are open. Writes need `Authorization: Bearer <[server] token>`: `401` without it, with a wrong one, or
//! when no token is configured (then writes are off).

use super::Shared;
use crate::run::now_ms;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mqwatch_model::{FindingKind, Span};
use mqwatch_store::{AlarmRecord, NewSilence, Resolution, SeriesQuery, SilenceMatcher};
use serde::{Deserialize, Serialize};

/// An error answer: the status and one line saying what is wrong.
fn fail(status: StatusCode, message: impl Into<String>) -> Response {
    let mut text = message.into();
    text.push('\n');
    (status, text).into_response()
}

/// A store error as a 500 naming the operation.
fn store_failed(what: &str, e: impl std::fmt::Display) -> Response {
    tracing::warn!(error = %e, "{what} failed");
    fail(StatusCode::INTERNAL_SERVER_ERROR, format!("{what}: {e}"))
}

/// Checks the bearer token of a write request.
fn authorize(shared: &Shared, headers: &HeaderMap) -> Result<(), Box<Response>> {
    let Some(token) = shared.token.as_deref() else {
        return Err(Box::new(fail(
            StatusCode::UNAUTHORIZED,
            "writes are off: no [server] token is configured",
        )));
    };
    match bearer(headers) {
        Some(g) if token_matches(g, token) => Ok(()),
        Some(_) => Err(Box::new(fail(
            StatusCode::UNAUTHORIZED,
            "wrong bearer token",
        ))),
        None => Err(Box::new(fail(
            StatusCode::UNAUTHORIZED,
            "this endpoint needs Authorization: Bearer <token>",
        ))),
    }
}

/// The token of an `Authorization: Bearer <token>` header (every token-protected endpoint reads it here).
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Compares tokens without stopping at the first difference (the length still shows).
pub(super) fn token_matches(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// An alarm row with its key.
#[derive(Serialize)]
struct AlarmView {
    key: String,
    #[serde(flatten)]
    record: AlarmRecord,
}

/// `GET /api/v1/alarms`.
pub async fn alarms(State(shared): State<Shared>) -> Response {
    match shared.store.alarms().await {
        Ok(rows) => Json(
            rows.into_iter()
                .map(|record| AlarmView {
                    key: record.key().to_string(),
                    record,
                })
                .collect::<Vec<_>>(),
        )
        .into_response(),
        Err(e) => store_failed("reading alarms", e),
    }
}

/// `GET /api/v1/silences` parameters.
#[derive(Deserialize)]
pub struct SilencesParams {
    #[serde(default)]
    all: bool,
}

/// `GET /api/v1/silences`.
pub async fn silences(
    State(shared): State<Shared>,
    Query(params): Query<SilencesParams>,
) -> Response {
    let rows = if params.all {
        shared.store.all_silences().await
    } else {
        shared.store.active_silences(now_ms()).await
    };
    match rows {
        Ok(rows) => Json(rows).into_response(),
        Err(e) => store_failed("reading silences", e),
    }
}

/// `POST /api/v1/silences` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SilenceRequest {
    #[serde(default)]
    kind: Option<FindingKind>,
    #[serde(default)]
    cluster: Option<String>,
    #[serde(default)]
    subject: Option<String>,
    /// How long from now.
    #[serde(default)]
    duration: Option<Span>,
    /// Or until when (ms).
    #[serde(default)]
    expires_ms: Option<u64>,
    #[serde(default)]
    created_by: String,
    #[serde(default)]
    comment: String,
}

/// `POST /api/v1/silences`.
pub async fn add_silence(
    State(shared): State<Shared>,
    headers: HeaderMap,
    body: Result<Json<SilenceRequest>, axum::extract::rejection::JsonRejection>,
) -> Response {
    if let Err(denied) = authorize(&shared, &headers) {
        return *denied;
    }
    let Json(req) = match body {
        Ok(b) => b,
        Err(e) => return fail(StatusCode::BAD_REQUEST, format!("silence body: {e}")),
    };
    let now = now_ms();
    let expires_ms = match (req.duration, req.expires_ms) {
        (Some(d), None) => now.saturating_add(d.as_millis()),
        (None, Some(at)) => at,
        _ => {
            return fail(
                StatusCode::BAD_REQUEST,
                "silence body: give exactly one of duration (e.g. \"2h\") and expires_ms",
            );
        }
    };
    if expires_ms <= now {
        return fail(
            StatusCode::BAD_REQUEST,
            "silence body: it would expire before it starts",
        );
    }
    let silence = NewSilence {
        matcher: SilenceMatcher {
            kind: req.kind,
            cluster: req.cluster,
            subject: req.subject,
        },
        created_ms: now,
        expires_ms,
        created_by: req.created_by,
        comment: req.comment,
    };
    match shared.store.add_silence(&silence).await {
        Ok(s) => {
            tracing::info!(id = s.id, matcher = ?s.matcher, expires_ms, "silence added");
            (StatusCode::CREATED, Json(s)).into_response()
        }
        Err(e) => store_failed("adding a silence", e),
    }
}

/// `DELETE /api/v1/silences/{id}`.
pub async fn delete_silence(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(denied) = authorize(&shared, &headers) {
        return *denied;
    }
    let Ok(id) = id.parse::<i64>() else {
        return fail(
            StatusCode::BAD_REQUEST,
            format!("silence id {id:?} is not a number"),
        );
    };
    match shared.store.delete_silence(id).await {
        Ok(true) => {
            tracing::info!(id, "silence deleted");
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => fail(StatusCode::NOT_FOUND, format!("no silence {id}")),
        Err(e) => store_failed("deleting a silence", e),
    }
}

/// `GET /api/v1/clusters/{name}/series` parameters.
#[derive(Deserialize)]
pub struct SeriesParams {
    metric: String,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    from: Option<u64>,
    #[serde(default)]
    to: Option<u64>,
    #[serde(default)]
    resolution: Option<String>,
}

/// `GET /api/v1/clusters/{name}/series`.
pub async fn series(
    State(shared): State<Shared>,
    Path(name): Path<String>,
    params: Result<Query<SeriesParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Query(p) = match params {
        Ok(p) => p,
        Err(e) => return fail(StatusCode::BAD_REQUEST, format!("series query: {e}")),
    };
    if !shared.traffic.contains_key(&name) {
        return fail(StatusCode::NOT_FOUND, format!("no cluster {name:?}"));
    }
    let to_ms = p.to.unwrap_or_else(|| now_ms().saturating_add(1));
    let query = SeriesQuery {
        cluster: name,
        metric: p.metric,
        subject: p.subject.filter(|s| !s.is_empty()),
        from_ms: p
            .from
            .unwrap_or(to_ms.saturating_sub(mqwatch_store::HOUR_MS)),
        to_ms,
    };
    let rows = match p.resolution.as_deref() {
        None | Some("minute") => shared
            .store
            .minutes(&query)
            .await
            .map(|r| serde_json::to_value(r).unwrap_or_default()),
        Some("hour") => shared
            .store
            .rollups(Resolution::Hour, &query)
            .await
            .map(|r| serde_json::to_value(r).unwrap_or_default()),
        Some("day") => shared
            .store
            .rollups(Resolution::Day, &query)
            .await
            .map(|r| serde_json::to_value(r).unwrap_or_default()),
        Some(other) => {
            return fail(
                StatusCode::BAD_REQUEST,
                format!("series query: resolution {other:?} is not minute, hour or day"),
            );
        }
    };
    match rows {
        Ok(v) => Json(v).into_response(),
        Err(e) => store_failed("reading series", e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches("secret", "secret"));
        assert!(!token_matches("secret", "secreT"));
        assert!(!token_matches("secret", "secret2"));
        assert!(!token_matches("", "x"));
    }
}
