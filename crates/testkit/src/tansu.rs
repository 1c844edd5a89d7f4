//! A real tansu broker for Kafka tests: tansu 0.6.0 (a Kafka-protocol server in Rust, installed by `scripts/test`
//! with the `dynostore,libsql` features under `$HOME/.cache/mqwatch/peers/tansu-0.6.0`, or `MQWATCH_PEERS`),
//! started in a fresh temp dir (it reads a `.env` from its working dir) on a free loopback port with sqlite
//! storage, stopped by its PID. One broker, node id 111; see specs/kafka.md for what it gets wrong.

use crate::process::PeerProcess;
use crate::{free_port, wait_for_port};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The pinned version `scripts/test` installs.
pub const VERSION: &str = "0.6.0";

/// Where the tansu binary is expected.
pub fn binary_path() -> PathBuf {
    let root = std::env::var_os("MQWATCH_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/mqwatch/peers")
        });
    root.join(format!("tansu-{VERSION}")).join("bin/tansu")
}

/// The tansu binary, if installed.
pub fn binary() -> Option<PathBuf> {
    Some(binary_path()).filter(|p| p.is_file())
}

/// A running tansu broker.
pub struct Tansu {
    /// `127.0.0.1:<port>`, the listener and advertised address.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
    _dir: tempfile::TempDir,
}

impl Tansu {
    /// Starts one with sqlite storage and waits until it accepts connections. Panics with the fix when tansu is
    /// not installed.
    pub fn start() -> Self {
        let bin = binary().unwrap_or_else(|| {
            panic!(
                "tansu {VERSION} is not installed at {}: run ./scripts/test, which installs it",
                binary_path().display()
            )
        });
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-tansu-")
            .tempdir()
            .expect("temp dir");
        let port = free_port();
        let url = format!("tcp://127.0.0.1:{port}");
        let mut cmd = Command::new(bin);
        cmd.arg("broker")
            .arg("--listener-url")
            .arg(&url)
            .arg("--advertised-listener-url")
            .arg(&url)
            .arg("--storage-engine")
            .arg("sqlite://tansu.db")
            .current_dir(dir.path());
        let process = PeerProcess::spawn("tansu", cmd, dir.path());
        let addr = format!("127.0.0.1:{port}");
        wait_for_port(&addr, Duration::from_secs(30));
        Tansu {
            addr,
            process,
            _dir: dir,
        }
    }
}
