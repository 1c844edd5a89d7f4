//! mqwatch-testkit: what integration tests need to run against real peers.
//!
//! What it owns: free loopback ports, processes started from a binary and stopped by their PID (SIGTERM, then
//! SIGKILL after a deadline; also on drop), polling with a deadline instead of sleeping, and the location of the
//! peers `scripts/test` installs (`$HOME/.cache/mqwatch/peers/<name>-<version>`, or `MQWATCH_PEERS`).
//! Engine-specific harnesses live in [`rocketmq`] (a name server with brokers), [`tansu`] (a Kafka-protocol
//! broker), [`zookeeper`] and [`bookkeeper`] (a protocol-exact test bookie, which is not a real bookie, and
//! writers of a cluster's znodes), [`prometheus`] (Debian's Prometheus scraping one target) and
//! [`alertmanager`] (Debian's Alertmanager), [`smtp`] (Debian's aiosmtpd as a mail sink); [`browser`] runs the
//! dashboard's browser tests (Node, playwright-core, Debian's Chromium).
//!
//! What it is not: a fake of anything, with one declared exception: [`bookkeeper::TestBookie`] stands in for the
//! one peer that cannot be installed here (a bookie), speaks its protocol byte for byte and says so. Other fakes
//! stay in the test files that need them and say so.

pub mod alertmanager;
pub mod bookkeeper;
pub mod browser;
pub mod node_exporter;
pub mod process;
pub mod prometheus;
pub mod rocketmq;
pub mod smtp;
pub mod tansu;
pub mod tls;
pub mod zookeeper;

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A loopback port that was free a moment ago (bound to port 0, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// Calls `probe` until it returns `Some`, or panics with `what` after `deadline`. Polls every 50 ms.
pub fn poll_until<T>(what: &str, deadline: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A plain HTTP/1.0 GET against a loopback server: `(status, body)`, or `None` if nothing answered.
pub fn http_get(addr: &str, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Some((status, body))
}

/// Waits until `addr` accepts TCP connections.
pub fn wait_for_port(addr: &str, deadline: Duration) {
    poll_until(&format!("{addr} to accept connections"), deadline, || {
        std::net::TcpStream::connect(addr).ok().map(drop)
    });
}

/// Retries the async `op` until it succeeds, every 50 ms, or panics after `deadline` naming `what` and the last
/// error (a peer that just created something may not serve it at once).
pub async fn retry_until_ok<T, E, F>(what: &str, deadline: Duration, mut op: impl FnMut() -> F) -> T
where
    E: std::fmt::Display,
    F: std::future::Future<Output = Result<T, E>>,
{
    let start = std::time::Instant::now();
    loop {
        match op().await {
            Ok(v) => return v,
            Err(e) if start.elapsed() < deadline => {
                eprintln!("{what}: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{what}: still failing after {deadline:?}: {e}"),
        }
    }
}

/// A directory of `scripts/test`'s cache: the one `env` names, else `$HOME/.cache/mqwatch/<name>`.
pub fn cache_dir(env: &str, name: &str) -> PathBuf {
    std::env::var_os(env).map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        home.join(".cache/mqwatch").join(name)
    })
}

/// Directory of an installed peer, e.g. `peer_dir("rocketmq", "1.0.0")`. Panics with the fix when missing.
pub fn peer_dir(name: &str, version: &str) -> PathBuf {
    let dir = cache_dir("MQWATCH_PEERS", "peers").join(format!("{name}-{version}"));
    assert!(
        dir.is_dir(),
        "peer {name} {version} is not installed at {}: run ./scripts/test, which installs it",
        dir.display()
    );
    dir
}

/// A tokio runtime with two workers, for tests that drive async clients from a plain `#[test]`.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}
