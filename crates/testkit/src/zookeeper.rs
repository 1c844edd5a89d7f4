//! A real ZooKeeper for tests: Debian's `zookeeper` package (3.8, installed by `scripts/test`), started in the
//! foreground on a free loopback port with a private data dir, stopped by its PID (the start script execs java).

use crate::process::PeerProcess;
use crate::{free_port, wait_for_port};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Debian's start script.
const SERVER: &str = "/usr/share/zookeeper/bin/zkServer.sh";

/// A running ZooKeeper.
pub struct ZooKeeper {
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
    _dir: tempfile::TempDir,
}

impl ZooKeeper {
    /// Starts one and waits until it accepts connections.
    pub fn start() -> Self {
        assert!(
            Path::new(SERVER).exists(),
            "ZooKeeper is not installed ({SERVER}): run ./scripts/test, which installs it"
        );
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-zk-")
            .tempdir()
            .expect("temp dir");
        let port = free_port();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        let conf = dir.path().join("zoo.cfg");
        std::fs::write(
            &conf,
            format!(
                "tickTime=2000\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
                 admin.enableServer=false\nmaxClientCnxns=0\n",
                data.display()
            ),
        )
        .expect("write zoo.cfg");
        let mut cmd = Command::new(SERVER);
        cmd.arg("start-foreground")
            .arg(&conf)
            .env("ZOO_LOG_DIR", dir.path())
            .current_dir(dir.path());
        let process = PeerProcess::spawn("zookeeper", cmd, dir.path());
        let addr = format!("127.0.0.1:{port}");
        wait_for_port(&addr, Duration::from_secs(60));
        ZooKeeper {
            addr,
            process,
            _dir: dir,
        }
    }
}
