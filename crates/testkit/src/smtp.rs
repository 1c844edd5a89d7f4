//! A real SMTP sink for tests: Debian's `python3-aiosmtpd` (installed by `scripts/test`) run as
//! `python3 -m aiosmtpd -n -l 127.0.0.1:<free port> -c aiosmtpd.handlers.Mailbox <maildir>`, so every message it
//! accepts is written whole (headers and body, as received) to a private Maildir; stopped by its PID. It can be
//! stopped and started again on the same port and Maildir, to play a mail server that is down for a while.

use crate::process::PeerProcess;
use crate::{free_port, wait_for_port};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where Debian installs the module.
const MODULE: &str = "/usr/lib/python3/dist-packages/aiosmtpd";

/// A running (or stopped) SMTP sink.
pub struct SmtpSink {
    /// `127.0.0.1:<port>`: what an mqwatch email channel's `smtp` is.
    pub addr: String,
    /// The process, while running.
    pub process: Option<PeerProcess>,
    dir: tempfile::TempDir,
}

impl SmtpSink {
    /// Starts one on a free port and waits until it accepts connections.
    pub fn start() -> Self {
        let mut sink = Self::stopped();
        sink.resume();
        sink
    }

    /// A sink with a port and a Maildir that is not running yet (connections to it are refused).
    pub fn stopped() -> Self {
        assert!(
            Path::new(MODULE).is_dir(),
            "aiosmtpd is not installed ({MODULE}): run ./scripts/test, which installs python3-aiosmtpd"
        );
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-smtp-")
            .tempdir()
            .expect("temp dir");
        Self {
            addr: format!("127.0.0.1:{}", free_port()),
            process: None,
            dir,
        }
    }

    /// Starts the process (again) on the same port and Maildir, and waits until it accepts connections.
    pub fn resume(&mut self) {
        if self.process.is_some() {
            return;
        }
        let mut cmd = Command::new("/usr/bin/python3");
        cmd.args(["-m", "aiosmtpd", "-n", "-l", &self.addr])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(self.maildir())
            .current_dir(self.dir.path());
        let process = PeerProcess::spawn("aiosmtpd", cmd, self.dir.path());
        wait_for_port(&self.addr, Duration::from_secs(30));
        self.process = Some(process);
    }

    /// Stops the process by its PID; the port refuses connections until [`SmtpSink::resume`].
    pub fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.stop(Duration::from_secs(5));
        }
    }

    /// The Maildir messages land in.
    pub fn maildir(&self) -> PathBuf {
        self.dir.path().join("maildir")
    }

    /// Every message received so far, as raw text, oldest first (by delivery time, then name).
    pub fn messages(&self) -> Vec<String> {
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = ["new", "cur"]
            .iter()
            .filter_map(|sub| std::fs::read_dir(self.maildir().join(sub)).ok())
            .flatten()
            .filter_map(|e| {
                let e = e.ok()?;
                Some((e.metadata().ok()?.modified().ok()?, e.path()))
            })
            .collect();
        files.sort();
        files
            .into_iter()
            .filter_map(|(_, p)| std::fs::read_to_string(p).ok())
            .collect()
    }

    /// The log of the process, for assertion messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("aiosmtpd.log")).unwrap_or_default()
    }
}
