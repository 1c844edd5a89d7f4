//! `GET /api/v1/clusters/{name}/probe[?minutes=N]`: the end-to-end probe's results per broker over the last N
//! minutes (default 5, 1 to 60): messages sent, delivered and lost (failed sends among them), in flight, produce
//! and round-trip latency p50 / p99 in ms, the last error, and the subject its series rows carry
//! (`probe_roundtrip_p50_ms` … `broker <name>`), with the probe's settings and why brokers could not be
//! listed, if they could not. From the running prober of a networked cluster ([`mqwatch_probe::registry`]) or
//! the simulated probe of a demo cluster ([`crate::demo::probe_summaries`]); `"running": false` and no brokers
//! when the probe is off (`[cluster.probe] enabled`), not started yet, or the engine has none (BookKeeper).
//! Reads are guarded like every other read ([`super::alarms_api::require_read_token`]).

use super::Shared;
use crate::run::now_ms;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mqwatch_model::Subject;
use mqwatch_probe::{BrokerSummary, ProbeConfig};
use serde::Deserialize;
use serde_json::{Value, json};

/// The window when none is asked for, and the longest one (the probe's books keep an hour).
const DEFAULT_MINUTES: u64 = 5;
const MAX_MINUTES: u64 = 60;

/// `?minutes=N`.
#[derive(Deserialize)]
pub struct ProbeParams {
    #[serde(default)]
    minutes: Option<u64>,
}

/// The view of one cluster's probe (see the module docs).
pub fn probe_view(
    cluster: &str,
    probe: Option<(ProbeConfig, Vec<BrokerSummary>, Option<String>)>,
    simulated: bool,
    window_ms: u64,
) -> Value {
    let Some((config, summaries, discovery_error)) = probe else {
        return json!({
            "cluster": cluster,
            "running": false,
            "simulated": simulated,
            "window_ms": window_ms,
            "brokers": [],
        });
    };
    let brokers: Vec<Value> = summaries
        .into_iter()
        .map(|s| {
            let subject = Subject::Node {
                node: s.broker.clone(),
            }
            .to_string();
            let mut v = serde_json::to_value(s).unwrap_or_default();
            v["subject"] = subject.into();
            v
        })
        .collect();
    json!({
        "cluster": cluster,
        "running": true,
        "simulated": simulated,
        "topic": config.topic,
        "interval_ms": config.interval.as_millis(),
        "sla_ms": config.sla.as_millis(),
        "window_ms": window_ms,
        "discovery_error": discovery_error,
        "brokers": brokers,
    })
}

/// `GET /api/v1/clusters/{name}/probe`.
pub async fn probe(
    State(shared): State<Shared>,
    Path(name): Path<String>,
    params: Result<Query<ProbeParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let minutes = match params {
        Ok(Query(p)) => p.minutes.unwrap_or(DEFAULT_MINUTES),
        Err(e) => {
            return (StatusCode::BAD_REQUEST, format!("probe query: {e}\n")).into_response();
        }
    };
    if !(1..=MAX_MINUTES).contains(&minutes) {
        return (
            StatusCode::BAD_REQUEST,
            format!("probe query: minutes={minutes} is not between 1 and {MAX_MINUTES}\n"),
        )
            .into_response();
    }
    if !shared.traffic.contains_key(&name) {
        return super::not_found(&name);
    }
    let (now, window) = (now_ms(), minutes * 60_000);
    let simulated = crate::demo::is_simulated(&name);
    let probe = match mqwatch_probe::registry::running(&name) {
        Some(p) => Some((
            p.config().clone(),
            p.summaries(now, window),
            p.discovery_error(),
        )),
        None => crate::demo::probe_summaries(&name, now, window).map(|(c, s)| (c, s, None)),
    };
    Json(probe_view(&name, probe, simulated, window)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{NodeRef, NodeRole};

    #[test]
    fn brokers_carry_their_results_and_series_subject() {
        let mut s = BrokerSummary::new(
            NodeRef::new(NodeRole::Broker, "broker-a:0").with_addr("127.0.0.1:10911"),
        );
        (s.sent, s.delivered, s.lost, s.send_failures) = (10, 8, 2, 1);
        s.roundtrip_p50_ms = Some(4.5);
        s.last_error = Some("broker-a:0: SEND_MESSAGE (10): timeout".into());
        let v = probe_view(
            "rmq",
            Some((
                ProbeConfig::default(),
                vec![s],
                Some("no name server".into()),
            )),
            false,
            300_000,
        );
        assert_eq!(v["running"], true);
        assert_eq!(v["topic"], "mqwatch-canary");
        assert_eq!(v["interval_ms"], 10_000);
        assert_eq!(v["discovery_error"], "no name server");
        let b = &v["brokers"][0];
        assert_eq!(b["subject"], "broker broker-a:0");
        assert_eq!(b["broker"]["addr"], "127.0.0.1:10911");
        assert_eq!(
            (b["sent"].as_u64(), b["lost"].as_u64()),
            (Some(10), Some(2))
        );
        assert_eq!(b["roundtrip_p50_ms"], 4.5);
        assert_eq!(b["roundtrip_p99_ms"], Value::Null);

        let off = probe_view("bk", None, true, 60_000);
        assert_eq!(off["running"], false);
        assert_eq!(off["brokers"].as_array().map(Vec::len), Some(0));
    }
}
