//! Alarm acknowledgement and read access for `serve`'s JSON API.
//!
//! - `POST /api/v1/alarms/{key}/ack` (write token): acknowledges a pending or firing alarm. `{key}` is the alarm
//!   key as `GET /api/v1/alarms` shows it, percent-encoded (`backlog%2Frmq%2Fgroup%20g1`). An acknowledgement is
//!   a silence of exactly that key (kind, cluster and subject) for `duration` (default 24h): no repeat
//!   notification while it lasts, the resolve is still told, and it shows (and can be deleted) under
//!   `/api/v1/silences`. Body, optional: `{"duration": "4h", "by": "alice", "comment": "looking"}`. Answers `201`
//!   with the silence, `404` when there is no such alarm, `409` when it has already resolved.
//! - Reads: open, unless `[server] read_token` is set; then `GET`s under `/api/` and `/metrics` need
//!   `Authorization: Bearer <read_token>` (the write token reads too). `/healthz` and the dashboard's pages stay
//!   open.

use super::Shared;
use crate::run::now_ms;
use axum::Json;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mqwatch_model::Span;
use mqwatch_store::{AlarmState, NewSilence, SilenceMatcher};
use serde::Deserialize;

fn fail(status: StatusCode, message: impl Into<String>) -> Response {
    let mut text = message.into();
    text.push('\n');
    (status, text).into_response()
}

use super::api::{bearer, token_matches as same};

/// Middleware: `GET`/`HEAD` requests under `/api/` and to `/metrics` need the read (or write) token when
/// `[server] read_token` is set.
pub async fn require_read_token(
    State(shared): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    let Some(read) = shared.read_token.as_deref() else {
        return next.run(request).await;
    };
    let path = request.uri().path();
    let guarded = (request.method() == Method::GET || request.method() == Method::HEAD)
        && (path.starts_with("/api/") || path == "/metrics");
    if !guarded {
        return next.run(request).await;
    }
    match bearer(request.headers()) {
        Some(given)
            if same(given, read) || shared.token.as_deref().is_some_and(|w| same(given, w)) =>
        {
            next.run(request).await
        }
        Some(_) => fail(StatusCode::UNAUTHORIZED, "wrong bearer token"),
        None => fail(
            StatusCode::UNAUTHORIZED,
            "reads need Authorization: Bearer <token> ([server] read_token is set)",
        ),
    }
}

/// `POST /api/v1/alarms/{key}/ack` body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckRequest {
    #[serde(default)]
    duration: Option<Span>,
    #[serde(default)]
    by: String,
    #[serde(default)]
    comment: String,
}

/// `POST /api/v1/alarms/{key}/ack`.
pub async fn ack(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(key): Path<String>,
    body: String,
) -> Response {
    let Some(token) = shared.token.as_deref() else {
        return fail(
            StatusCode::UNAUTHORIZED,
            "writes are off: no [server] token is configured",
        );
    };
    match bearer(&headers) {
        Some(g) if same(g, token) => {}
        Some(_) => return fail(StatusCode::UNAUTHORIZED, "wrong bearer token"),
        None => {
            return fail(
                StatusCode::UNAUTHORIZED,
                "this endpoint needs Authorization: Bearer <token>",
            );
        }
    }
    let req: AckRequest = if body.trim().is_empty() {
        AckRequest::default()
    } else {
        match serde_json::from_str(&body) {
            Ok(r) => r,
            Err(e) => return fail(StatusCode::BAD_REQUEST, format!("ack body: {e}")),
        }
    };
    let alarms = match shared.store.alarms().await {
        Ok(a) => a,
        Err(e) => {
            return fail(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("reading alarms: {e}"),
            );
        }
    };
    let Some(alarm) = alarms.iter().find(|a| a.key().to_string() == key) else {
        return fail(StatusCode::NOT_FOUND, format!("no alarm {key:?}"));
    };
    if alarm.state == AlarmState::Resolved {
        return fail(
            StatusCode::CONFLICT,
            format!("alarm {key:?} has resolved; nothing to acknowledge"),
        );
    }
    let now = now_ms();
    let duration = req.duration.unwrap_or(Span::from_secs(24 * 3600));
    let k = alarm.key();
    let silence = NewSilence {
        matcher: SilenceMatcher {
            kind: Some(k.kind),
            cluster: Some(k.cluster.clone()),
            subject: Some(k.subject.to_string()),
        },
        created_ms: now,
        expires_ms: now.saturating_add(duration.as_millis()),
        created_by: req.by,
        comment: if req.comment.is_empty() {
            format!("acknowledged {key}")
        } else {
            format!("acknowledged {key}: {}", req.comment)
        },
    };
    match shared.store.add_silence(&silence).await {
        Ok(s) => {
            tracing::info!(alarm = %key, silence = s.id, by = %s.created_by, "alarm acknowledged");
            (StatusCode::CREATED, Json(s)).into_response()
        }
        Err(e) => fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("acknowledging {key}: {e}"),
        ),
    }
}
