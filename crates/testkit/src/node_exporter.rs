//! A real node_exporter for tests: Debian's `prometheus-node-exporter` (installed by `scripts/test`), started
//! on a free loopback port and stopped by its PID. It reports this machine's real CPU, memory, load, disks,
//! network and sockets.

use crate::process::PeerProcess;
use crate::{free_port, http_get, wait_for_port};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Debian's binary.
const BINARY: &str = "/usr/bin/prometheus-node-exporter";

/// A running node_exporter.
pub struct NodeExporter {
    /// `127.0.0.1:<port>`; metrics at `/metrics`.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
    _dir: tempfile::TempDir,
}

impl NodeExporter {
    /// Starts one and waits until it serves `/metrics`.
    pub fn start() -> Self {
        assert!(
            Path::new(BINARY).exists(),
            "node_exporter is not installed ({BINARY}): run ./scripts/test, which installs prometheus-node-exporter"
        );
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-node-exporter-")
            .tempdir()
            .expect("temp dir");
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(BINARY);
        cmd.arg(format!("--web.listen-address={addr}"))
            // Debian's default textfile directory may not exist on a test machine.
            .arg("--no-collector.textfile")
            .current_dir(dir.path());
        let process = PeerProcess::spawn("node_exporter", cmd, dir.path());
        wait_for_port(&addr, Duration::from_secs(30));
        crate::poll_until(
            "node_exporter to serve /metrics",
            Duration::from_secs(30),
            || http_get(&addr, "/metrics").filter(|(s, b)| *s == 200 && b.contains("node_load1")),
        );
        NodeExporter {
            addr,
            process,
            _dir: dir,
        }
    }
}
