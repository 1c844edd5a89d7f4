//! A real Alertmanager for tests: Debian's `prometheus-alertmanager` package (installed by `scripts/test`), started
//! with a private config (one receiver that sends nothing), a private `--storage.path`, a free loopback port and
//! gossip off (`--cluster.listen-address=`); stopped by its PID. Alerts are read through its v2 API.

use crate::process::PeerProcess;
use crate::{free_port, http_get, wait_for_port};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Debian's binary.
const BINARY: &str = "/usr/bin/prometheus-alertmanager";

/// A running Alertmanager.
pub struct Alertmanager {
    /// `http://127.0.0.1:<port>`: what an mqwatch `alertmanager` channel's `url` is.
    pub url: String,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
    _dir: tempfile::TempDir,
}

impl Alertmanager {
    /// Starts one and waits until it is ready.
    pub fn start() -> Self {
        assert!(
            Path::new(BINARY).exists(),
            "Alertmanager is not installed ({BINARY}): run ./scripts/test, which installs it"
        );
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-alertmanager-")
            .tempdir()
            .expect("temp dir");
        let config = dir.path().join("alertmanager.yml");
        std::fs::write(
            &config,
            "route:\n  receiver: nowhere\n  group_wait: 1s\n  group_interval: 1s\n\
             receivers:\n  - name: nowhere\n",
        )
        .expect("write alertmanager.yml");
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(BINARY);
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--cluster.listen-address=")
            .current_dir(dir.path());
        let process = PeerProcess::spawn("alertmanager", cmd, dir.path());
        wait_for_port(&addr, Duration::from_secs(60));
        crate::poll_until("Alertmanager to be ready", Duration::from_secs(60), || {
            http_get(&addr, "/-/ready").filter(|(s, _)| *s == 200)
        });
        Alertmanager {
            url: format!("http://{addr}"),
            addr,
            process,
            _dir: dir,
        }
    }

    /// `GET /api/v2/alerts`: the alerts it holds that have not ended, or `None` when it did not answer.
    pub fn alerts(&self) -> Option<Vec<serde_json::Value>> {
        let (status, body) = http_get(&self.addr, "/api/v2/alerts")?;
        if status != 200 {
            return None;
        }
        serde_json::from_str::<serde_json::Value>(&body)
            .ok()?
            .as_array()
            .cloned()
    }
}
