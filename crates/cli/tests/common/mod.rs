//! Helpers shared by the `serve` integration tests: starting `mqwatch serve` as a process on port 0 (its address
//! read from its log), plain HTTP/1.0 requests with a method, headers and a body, and a local webhook receiver
//! (axum on port 0) that records what it is sent.

#![allow(dead_code)]

use mqwatch_testkit::poll_until;
use mqwatch_testkit::process::PeerProcess;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starts `mqwatch serve --config <config> --listen 127.0.0.1:0 --state-dir <state>`, logging to
/// `<log_dir>/<name>.log`; returns it and its HTTP address once it listens.
pub fn start_serve(
    name: &str,
    config: &Path,
    state: &Path,
    log_dir: &Path,
) -> (PeerProcess, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mqwatch"));
    cmd.args(["serve", "--config"])
        .arg(config)
        .args(["--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state)
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1");
    let serve = PeerProcess::spawn(name, cmd, log_dir);
    let addr = poll_until("mqwatch to listen", Duration::from_secs(60), || {
        let log = serve.log_tail(1 << 16);
        let rest = log.split("listening on http://").nth(1)?;
        Some(rest.split_whitespace().next()?.to_string())
    });
    (serve, addr)
}

/// One HTTP/1.0 request: `(status, body)`, or `None` when nothing answered.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut head = format!("{method} {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).ok()?;
    if let Some(b) = body {
        s.write_all(b.as_bytes()).ok()?;
    }
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Some((status, body))
}

/// A GET answered 200 with JSON.
pub fn get_json(addr: &str, path: &str) -> Option<serde_json::Value> {
    let (status, body) = request(addr, "GET", path, &[], None)?;
    (status == 200)
        .then(|| serde_json::from_str(&body).ok())
        .flatten()
}

/// A local HTTP receiver on a free port: records every POST's `X-Mqwatch-Delivery` header and JSON body. It
/// answers 204, or the status given to [`Receiver::set_status`] (a non-2xx one plays a receiver that is down:
/// nothing is recorded, only counted in `refused`).
pub struct Receiver {
    /// `http://127.0.0.1:<port>/hook`.
    pub url: String,
    /// What arrived.
    pub received: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
    /// The status it answers with.
    pub status: Arc<std::sync::atomic::AtomicU16>,
    /// Requests answered with a non-2xx status.
    pub refused: Arc<std::sync::atomic::AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

impl Receiver {
    /// Starts one on a runtime of its own.
    pub fn start() -> Self {
        use axum::extract::State;
        use axum::http::{HeaderMap, StatusCode};
        use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
        type Log = (
            Arc<Mutex<Vec<(String, serde_json::Value)>>>,
            Arc<AtomicU16>,
            Arc<AtomicUsize>,
        );
        async fn hook(
            State((log, status, refused)): State<Log>,
            headers: HeaderMap,
            axum::Json(body): axum::Json<serde_json::Value>,
        ) -> StatusCode {
            let status = StatusCode::from_u16(status.load(Ordering::SeqCst))
                .unwrap_or(StatusCode::NO_CONTENT);
            if !status.is_success() {
                refused.fetch_add(1, Ordering::SeqCst);
                return status;
            }
            let id = headers
                .get("x-mqwatch-delivery")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            log.lock().unwrap().push((id, body));
            StatusCode::NO_CONTENT
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let received: Arc<Mutex<Vec<(String, serde_json::Value)>>> = Arc::default();
        let status = Arc::new(AtomicU16::new(204));
        let refused = Arc::new(AtomicUsize::new(0));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state((received.clone(), status.clone(), refused.clone()));
        runtime.spawn(async move { axum::serve(listener, app).await });
        Receiver {
            url: format!("http://127.0.0.1:{port}/hook"),
            received,
            status,
            refused,
            _runtime: runtime,
        }
    }

    /// Answers `status` from now on (e.g. 503: down; 204: up).
    pub fn set_status(&self, status: u16) {
        self.status
            .store(status, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many requests were answered with a non-2xx status.
    pub fn refused(&self) -> usize {
        self.refused.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// What arrived so far.
    pub fn requests(&self) -> Vec<(String, serde_json::Value)> {
        self.received.lock().unwrap().clone()
    }
}
