//! A real tansu broker for Kafka tests: tansu 0.6.0 (a Kafka-protocol server in Rust, installed by `scripts/test`
//! with the `dynostore,libsql` features under `$HOME/.cache/mqwatch/peers/tansu-0.6.0`, or `MQWATCH_PEERS`),
//! started in a fresh temp dir (it reads a `.env` from its working dir) on a free loopback port with sqlite
//! storage, stopped by its PID. One broker, node id 111; see specs/kafka.md for what it gets wrong.
//!
//! [`Tansu::start_with`] also starts it with SASL authentication required (`--authentication`: SCRAM-SHA-256/512
//! for users made with `tansu user create`; tansu 0.6's build has no PLAIN, which needs an unauthenticated broker, so the users
//! are made first on the same storage and the broker restarted), or advertising another address (a TLS front,
//! [`crate::tls`]: tansu 0.6 parses `--cert`/`--key` but never wraps its listener in TLS).

use crate::process::PeerProcess;
use crate::{free_port, wait_for_port};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The pinned version `scripts/test` installs.
pub const VERSION: &str = "0.6.0";

/// Where the tansu binary is expected.
pub fn binary_path() -> PathBuf {
    crate::cache_dir("MQWATCH_PEERS", "peers")
        .join(format!("tansu-{VERSION}"))
        .join("bin/tansu")
}

/// The tansu binary, if installed.
pub fn binary() -> Option<PathBuf> {
    Some(binary_path()).filter(|p| p.is_file())
}

/// Whether tansu is missing; says so (a test then skips; `scripts/test` installs it).
pub fn missing() -> bool {
    if binary().is_some() {
        return false;
    }
    eprintln!(
        "SKIPPED: tansu {VERSION} is not installed at {} (./scripts/test installs it)",
        binary_path().display()
    );
    true
}

/// A running tansu broker.
pub struct Tansu {
    /// `127.0.0.1:<port>`, the listener and advertised address.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
    _dir: tempfile::TempDir,
}

/// How to start a tansu broker beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct TansuOptions {
    /// Require SASL authentication.
    pub authentication: bool,
    /// SCRAM users to create first: (name, password, `scram256` or `scram512`).
    pub scram_users: Vec<(String, String, String)>,
    /// The address to advertise instead of its own listener (e.g. a TLS front's).
    pub advertised: Option<String>,
}

impl Tansu {
    /// Starts one with sqlite storage and waits until it accepts connections. Panics with the fix when tansu is
    /// not installed.
    pub fn start() -> Self {
        Self::start_with(&TansuOptions::default())
    }

    /// Starts one as `options` say: SCRAM users first (on a broker without authentication, stopped by PID
    /// after), then the broker on the same storage.
    pub fn start_with(options: &TansuOptions) -> Self {
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
        if !options.scram_users.is_empty() {
            let (addr, mut setup) = broker("tansu-setup", &bin, dir.path(), false, None);
            for (name, password, mechanism) in &options.scram_users {
                let out = Command::new(&bin)
                    .args(["user", "create", "--broker", &format!("tcp://{addr}")])
                    .args(["--mechanism", mechanism, name, password])
                    .current_dir(dir.path())
                    .output()
                    .expect("run tansu user create");
                assert!(
                    out.status.success(),
                    "tansu user create {name}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            setup.stop(Duration::from_secs(10));
        }
        let (addr, process) = broker(
            "tansu",
            &bin,
            dir.path(),
            options.authentication,
            options.advertised.as_deref(),
        );
        Tansu {
            addr,
            process,
            _dir: dir,
        }
    }
}

/// Starts a broker on a free port with `dir`'s sqlite storage; waits until it listens.
fn broker(
    name: &str,
    bin: &std::path::Path,
    dir: &std::path::Path,
    authentication: bool,
    advertised: Option<&str>,
) -> (String, PeerProcess) {
    let port = free_port();
    let url = format!("tcp://127.0.0.1:{port}");
    let advertised = advertised.map_or_else(|| url.clone(), |a| format!("tcp://{a}"));
    let mut cmd = Command::new(bin);
    cmd.arg("broker")
        .arg("--listener-url")
        .arg(&url)
        .arg("--advertised-listener-url")
        .arg(&advertised)
        .arg("--storage-engine")
        .arg("sqlite://tansu.db")
        .current_dir(dir);
    if authentication {
        cmd.arg("--authentication");
    }
    let process = PeerProcess::spawn(name, cmd, dir);
    let addr = format!("127.0.0.1:{port}");
    wait_for_port(&addr, Duration::from_secs(30));
    (addr, process)
}
