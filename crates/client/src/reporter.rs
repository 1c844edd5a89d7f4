//! The background [`Reporter`]: one thread that every interval turns [`ProducerStats`] into a [`Report`],
//! buffers it in the bounded [`Outbox`] and posts what is buffered to mqwatch. The application's threads never
//! wait on it: the send path only touches atomics, and stopping the reporter makes one last report and one
//! last delivery attempt bounded by the post timeout.

use crate::http::{Endpoint, PostError};
use crate::outbox::Outbox;
use crate::report::{PAYLOAD_VERSION, Report};
use crate::stats::{ProducerStats, Samplers};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How to report.
#[derive(Debug, Clone)]
pub struct ReporterConfig {
    /// mqwatch's intake: `http://host:port` (path `/api/v1/client-reports` added) or a full URL.
    pub url: String,
    /// `[server] token` of mqwatch, sent as a bearer token.
    pub token: Option<String>,
    /// This client's id; default `<hostname>@<pid>`.
    pub client_id: Option<String>,
    /// This client's address; default the local IP used to reach mqwatch.
    pub address: Option<String>,
    /// The mqwatch cluster this client sends to (its `[[cluster]] name`), when known.
    pub cluster: Option<String>,
    /// Report interval (default 60 s, MQCloud's minute).
    pub interval: Duration,
    /// Unsent reports kept while mqwatch is down (default 60: an hour of minutes); the oldest is dropped.
    pub max_buffered: usize,
    /// Connect/read/write timeout of one post (default 5 s).
    pub timeout: Duration,
}

impl ReporterConfig {
    /// Defaults for reporting to `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: None,
            client_id: None,
            address: None,
            cluster: None,
            interval: Duration::from_secs(60),
            max_buffered: 60,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Counters of the reporter, for the application's own health page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReporterStatus {
    /// Reports mqwatch accepted.
    pub sent: u64,
    /// Reports dropped unsent because the buffer was full.
    pub dropped: u64,
    /// Reports mqwatch refused for good (bad token, bad request).
    pub rejected: u64,
    /// Reports waiting.
    pub buffered: u64,
    /// The last delivery error.
    pub last_error: Option<String>,
}

/// The reporting thread; stops (with a last report) on [`Reporter::stop`] or drop.
#[derive(Debug)]
pub struct Reporter {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    status: Arc<Mutex<ReporterStatus>>,
    reports: Arc<AtomicU64>,
}

impl Reporter {
    /// Starts reporting `stats` per `config`; an error only for a bad URL.
    pub fn start(stats: Arc<ProducerStats>, config: ReporterConfig) -> Result<Self, PostError> {
        let endpoint = Endpoint::parse(&config.url)?;
        let (stop, stopped) = channel();
        let status = Arc::new(Mutex::new(ReporterStatus::default()));
        let reports = Arc::new(AtomicU64::new(0));
        let worker = Worker {
            client_id: config.client_id.clone().unwrap_or_else(default_client_id),
            address: config
                .address
                .clone()
                .or_else(|| endpoint.local_ip())
                .unwrap_or_default(),
            endpoint,
            samplers: Samplers::default(),
            outbox: Outbox::new(config.max_buffered),
            status: status.clone(),
            reports: reports.clone(),
            stats,
            config,
        };
        let thread = std::thread::Builder::new()
            .name("mqwatch-reporter".into())
            .spawn(move || worker.run(stopped))
            .map_err(|e| PostError::Io(format!("cannot start the reporter thread: {e}")))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
            status,
            reports,
        })
    }

    /// The counters so far.
    pub fn status(&self) -> ReporterStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Reports made so far (sent or not).
    pub fn reports_made(&self) -> u64 {
        self.reports.load(Ordering::Relaxed)
    }

    /// Makes a last report, tries once to deliver what is buffered, and stops.
    pub fn stop(mut self) -> ReporterStatus {
        self.shutdown();
        self.status()
    }

    fn shutdown(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn default_client_id() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    format!("{host}@{}", std::process::id())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

struct Worker {
    stats: Arc<ProducerStats>,
    config: ReporterConfig,
    endpoint: Endpoint,
    client_id: String,
    address: String,
    samplers: Samplers,
    outbox: Outbox,
    status: Arc<Mutex<ReporterStatus>>,
    reports: Arc<AtomicU64>,
}

impl Worker {
    fn run(mut self, stopped: Receiver<()>) {
        let mut start = now_ms();
        loop {
            let last = match stopped.recv_timeout(self.config.interval) {
                Err(RecvTimeoutError::Timeout) => false,
                Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
            };
            let end = now_ms();
            self.report(start, end);
            start = end;
            if last {
                return;
            }
        }
    }

    fn report(&mut self, start_ms: u64, end_ms: u64) {
        let entries = self
            .stats
            .report_since(&mut self.samplers, start_ms, end_ms);
        if !entries.is_empty() {
            let report = Report {
                version: PAYLOAD_VERSION,
                client_id: self.client_id.clone(),
                address: self.address.clone(),
                cluster: self.config.cluster.clone(),
                start_ms,
                end_ms,
                dropped_reports: self.outbox.dropped(),
                entries,
            };
            self.outbox.push(report.to_json());
            self.reports.fetch_add(1, Ordering::Relaxed);
        }
        let (endpoint, token, timeout) = (
            &self.endpoint,
            self.config.token.as_deref(),
            self.config.timeout,
        );
        let outcome = self
            .outbox
            .flush(|body| endpoint.post(body, token, timeout));
        if let Ok(mut s) = self.status.lock() {
            s.sent += outcome.sent as u64;
            s.dropped = self.outbox.dropped();
            s.rejected = self.outbox.rejected();
            s.buffered = self.outbox.len() as u64;
            if outcome.error.is_some() {
                s.last_error = outcome.error;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Outcome;
    use std::io::{Read, Write};

    /// A minimal intake on a loopback port: answers 204 to every post and hands the bodies over.
    fn intake(listener: std::net::TcpListener) -> std::sync::mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for c in listener.incoming() {
                let Ok(mut c) = c else { return };
                let mut data = Vec::new();
                let mut buf = [0u8; 8192];
                let body = loop {
                    let n = c.read(&mut buf).unwrap_or(0);
                    if n == 0 {
                        break None;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("Content-Length: "))
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        if body.len() >= len {
                            break Some(body.as_bytes().to_vec());
                        }
                    }
                };
                let _ = c.write_all(b"HTTP/1.1 204 No Content\r\n\r\n");
                if let Some(b) = body
                    && tx.send(b).is_err()
                {
                    return;
                }
            }
        });
        rx
    }

    #[test]
    fn buffers_while_mqwatch_is_down_then_delivers_in_order() {
        // A port nothing listens on yet: reports buffer, the oldest beyond 2 are dropped.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let stats = Arc::new(ProducerStats::new());
        let mut config = ReporterConfig::new(format!("http://{addr}"));
        config.interval = Duration::from_millis(50);
        config.max_buffered = 2;
        config.timeout = Duration::from_millis(200);
        config.client_id = Some("app-1".into());
        let reporter = Reporter::start(stats.clone(), config).unwrap();
        let start = std::time::Instant::now();
        while reporter.status().dropped < 2 {
            stats.record("t", "b", Duration::from_millis(1), Outcome::Sent);
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{:?}",
                reporter.status()
            );
            std::thread::yield_now();
        }
        let listener = std::net::TcpListener::bind(addr).unwrap();
        let bodies = intake(listener);
        // The buffered reports arrive; the newest says how many were dropped before it.
        loop {
            let body = bodies.recv_timeout(Duration::from_secs(20)).unwrap();
            let (report, _) = Report::from_json(&body).unwrap();
            assert_eq!(report.client_id, "app-1");
            assert_eq!(report.address, "127.0.0.1");
            if report.dropped_reports >= 1 {
                break;
            }
        }
        let status = reporter.stop();
        assert!(status.sent >= 1 && status.dropped >= 2, "{status:?}");
    }
}
