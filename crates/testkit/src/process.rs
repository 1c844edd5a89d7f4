//! A child process owned by a test: output to log files, stopped by its PID (SIGTERM, then SIGKILL after a
//! deadline) when asked or when dropped. Can be paused and resumed (SIGSTOP / SIGCONT) to make a node hang.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running peer process.
pub struct PeerProcess {
    name: String,
    child: Option<Child>,
    log: PathBuf,
}

impl PeerProcess {
    /// Starts `cmd`, with stdout and stderr appended to `<log_dir>/<name>.log`.
    pub fn spawn(name: &str, mut cmd: Command, log_dir: &Path) -> Self {
        let log = log_dir.join(format!("{name}.log"));
        let out = File::create(&log).expect("create peer log");
        let err = out.try_clone().expect("clone log handle");
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("start {name} ({cmd:?}): {e}"));
        Self {
            name: name.to_string(),
            child: Some(child),
            log,
        }
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last `bytes` of the log, for assertion messages.
    pub fn log_tail(&self, bytes: usize) -> String {
        let text = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8_lossy(&text[text.len().saturating_sub(bytes)..]).into_owned()
    }

    fn signal(&self, sig: Signal) {
        if let Some(pid) = self.pid() {
            let _ = kill(Pid::from_raw(pid as i32), sig);
        }
    }

    /// Freezes the process (SIGSTOP): it keeps its sockets but answers nothing.
    pub fn pause(&self) {
        self.signal(Signal::SIGSTOP);
    }

    /// Resumes a paused process.
    pub fn resume(&self) {
        self.signal(Signal::SIGCONT);
    }

    /// Kills the process at once (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops the process: SIGTERM, then SIGKILL if it has not exited within `grace`.
    pub fn stop(&mut self, grace: Duration) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        let pid = Pid::from_raw(c.id() as i32);
        let _ = kill(pid, Signal::SIGCONT);
        let _ = kill(pid, Signal::SIGTERM);
        let start = Instant::now();
        while start.elapsed() < grace {
            if let Ok(Some(_)) = c.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The name given at spawn.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(5));
    }
}
