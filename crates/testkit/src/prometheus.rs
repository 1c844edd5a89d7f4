//! A real Prometheus for tests: Debian's `prometheus` package (installed by `scripts/test`), started with a
//! private config that scrapes one target every second, a private TSDB directory and a free loopback port;
//! stopped by its PID. Values are read back through its HTTP query API (`/api/v1/query`).

use crate::process::PeerProcess;
use crate::{free_port, http_get, wait_for_port};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Debian's binary.
const BINARY: &str = "/usr/bin/prometheus";

/// A running Prometheus.
pub struct Prometheus {
    /// `127.0.0.1:<port>` of its web API.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts one scraping `target` (`host:port`, path `/metrics`) every second, and waits until it is ready.
    pub fn start(target: &str) -> Self {
        assert!(
            Path::new(BINARY).exists(),
            "Prometheus is not installed ({BINARY}): run ./scripts/test, which installs it"
        );
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-prometheus-")
            .tempdir()
            .expect("temp dir");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: mqwatch\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("write prometheus.yml");
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(BINARY);
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .current_dir(dir.path());
        let process = PeerProcess::spawn("prometheus", cmd, dir.path());
        wait_for_port(&addr, Duration::from_secs(60));
        crate::poll_until("Prometheus to be ready", Duration::from_secs(60), || {
            http_get(&addr, "/-/ready").filter(|(s, _)| *s == 200)
        });
        Prometheus {
            addr,
            process,
            _dir: dir,
        }
    }

    /// An instant query: the `data.result` array of `/api/v1/query?query=<expr>`, or `None` when it did not
    /// answer with success.
    pub fn query(&self, expr: &str) -> Option<Vec<serde_json::Value>> {
        let (status, body) =
            http_get(&self.addr, &format!("/api/v1/query?query={}", encode(expr)))?;
        if status != 200 {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        (v["status"] == "success").then(|| v["data"]["result"].as_array().cloned())?
    }

    /// The value of the first series `expr` returns, once it returns one.
    pub fn value(&self, expr: &str) -> Option<f64> {
        self.query(expr)?
            .first()?
            .get("value")?
            .get(1)?
            .as_str()?
            .parse()
            .ok()
    }
}

/// Percent-encodes a query parameter value.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_promql() {
        assert_eq!(
            super::encode(r#"mqwatch_up{cluster="bk"}"#),
            "mqwatch_up%7Bcluster%3D%22bk%22%7D"
        );
    }
}
