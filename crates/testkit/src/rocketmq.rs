//! A real RocketMQ cluster for tests: the Rust name server and brokers (`rocketmq-namesrv` / `rocketmq-broker`
//! 1.0.0 from crates.io, installed by `scripts/test`), started on free loopback ports with small stores in a
//! private temp dir, each stopped by its PID.

use crate::process::PeerProcess;
use crate::{free_port, peer_dir, poll_until};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The pinned version `scripts/test` installs.
pub const VERSION: &str = "1.0.0";

/// Deadline for a process to open its port.
const START: Duration = Duration::from_secs(30);

/// What a broker in the test cluster is.
#[derive(Debug, Clone)]
pub struct BrokerSpec {
    /// Broker name (a master and its slaves share it).
    pub name: String,
    /// 0 for a master, > 0 for a slave.
    pub id: u32,
}

impl BrokerSpec {
    /// A master named `name`.
    pub fn master(name: &str) -> Self {
        Self {
            name: name.into(),
            id: 0,
        }
    }
    /// A slave (id 1) of the master named `name`.
    pub fn slave(name: &str) -> Self {
        Self {
            name: name.into(),
            id: 1,
        }
    }
}

/// One running broker.
pub struct Broker {
    /// Its spec.
    pub spec: BrokerSpec,
    /// `127.0.0.1:<listenPort>`.
    pub addr: String,
    /// The process.
    pub process: PeerProcess,
}

/// A name server with brokers.
pub struct RocketMqCluster {
    /// Cluster name the brokers register under.
    pub cluster_name: String,
    /// `127.0.0.1:<port>` of the name server.
    pub namesrv_addr: String,
    /// The name server process.
    pub namesrv: PeerProcess,
    /// Brokers in start order.
    pub brokers: Vec<Broker>,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

/// A port `p` such that `p`, `p - 2` (the broker's VIP channel) and `p + 1` are free.
/// Waits for `peer` to accept connections on `addr`; on timeout the panic carries the peer's log.
fn wait_for_peer(peer: &PeerProcess, addr: &str) {
    let deadline = std::time::Instant::now() + START;
    while std::time::Instant::now() < deadline {
        if std::net::TcpStream::connect(addr).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "timed out after {START:?} waiting for {addr} to accept connections; its log:\n{}",
        peer.log_tail(400_000)
    );
}

fn broker_port() -> u16 {
    poll_until("a free broker port triple", Duration::from_secs(10), || {
        let p = free_port();
        let free = |q: u16| TcpListener::bind(("127.0.0.1", q)).is_ok();
        (p > 1026 && free(p - 2) && free(p + 1)).then_some(p)
    })
}

impl RocketMqCluster {
    /// Starts a name server and `brokers`, and waits until every broker is registered with the name server.
    pub fn start(brokers: &[BrokerSpec]) -> Self {
        let bin = peer_dir("rocketmq", VERSION).join("bin");
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-rmq-")
            .tempdir_in(store_parent())
            .expect("temp dir");
        let port = free_port();
        let home = dir.path().join("namesrv");
        std::fs::create_dir_all(&home).expect("namesrv dir");
        let h = home.display();
        let conf = home.join("namesrv.toml");
        std::fs::write(
            &conf,
            format!(
                "rocketmqHome = \"{h}\"\nkvConfigPath = \"{h}/kvConfig.json\"\n\
                 configStorePath = \"{h}/namesrv.properties\"\n\n[runtime]\nworkerThreads = 2\n"
            ),
        )
        .expect("write namesrv.toml");
        let mut cmd = Command::new(bin.join("rocketmq-namesrv-rust"));
        cmd.arg("-c")
            .arg(&conf)
            .args(["--bindAddress", "127.0.0.1", "--listenPort"])
            .arg(port.to_string());
        cmd.env("HOME", &home).current_dir(&home);
        let namesrv = PeerProcess::spawn("namesrv", cmd, dir.path());
        let namesrv_addr = format!("127.0.0.1:{port}");
        wait_for_peer(&namesrv, &namesrv_addr);
        let mut cluster = RocketMqCluster {
            cluster_name: "MqwatchTestCluster".into(),
            namesrv_addr,
            namesrv,
            brokers: Vec::new(),
            dir,
            bin,
        };
        for spec in brokers {
            cluster.add_broker(spec.clone());
        }
        cluster
    }

    /// Starts one more broker and waits until its port is open.
    pub fn add_broker(&mut self, spec: BrokerSpec) -> &Broker {
        let port = broker_port();
        let ha_port = port + 1;
        let label = format!("{}-{}", spec.name, spec.id);
        let home = self.dir.path().join(&label);
        let store = home.join("store");
        std::fs::create_dir_all(&store).expect("broker dir");
        let conf = home.join("broker.toml");
        std::fs::write(
            &conf,
            broker_toml(
                &spec,
                port,
                ha_port,
                &self.namesrv_addr,
                &self.cluster_name,
                &store,
            ),
        )
        .expect("write broker.toml");
        let mut cmd = Command::new(self.bin.join("rocketmq-broker-rust"));
        cmd.arg("-c")
            .arg(&conf)
            .env("ROCKETMQ_HOME", &home)
            .env("HOME", &home)
            .current_dir(&home);
        let process = PeerProcess::spawn(&label, cmd, self.dir.path());
        let addr = format!("127.0.0.1:{port}");
        wait_for_peer(&process, &addr);
        self.brokers.push(Broker {
            spec,
            addr,
            process,
        });
        self.brokers.last().expect("just pushed")
    }

    /// The broker with this name and id.
    pub fn broker(&mut self, name: &str, id: u32) -> &mut Broker {
        self.brokers
            .iter_mut()
            .find(|b| b.spec.name == name && b.spec.id == id)
            .unwrap_or_else(|| panic!("no broker {name}:{id} in the test cluster"))
    }

    /// Where logs and stores live.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Logs of every process, for assertion messages.
    pub fn logs(&self) -> String {
        let mut out = format!("--- namesrv\n{}\n", self.namesrv.log_tail(2000));
        for b in &self.brokers {
            out.push_str(&format!(
                "--- {}\n{}\n",
                b.process.name(),
                b.process.log_tail(2000)
            ));
        }
        out
    }
}

/// Where the peers' homes and stores go: `/dev/shm` when it is there, else the temp dir. The broker refuses writes
/// once its store's file system is 90 % used, counted as `1 - available / total` (statvfs), and that cap cannot be
/// raised by config (it is clamped at 90 %). A root file system with a large reservation for other users looks full
/// to it long before it is; a tmpfs has its own counts, and the test brokers' stores are a few MiB.
fn store_parent() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() && tempfile::Builder::new().tempdir_in(shm).is_ok() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

fn broker_toml(
    spec: &BrokerSpec,
    port: u16,
    ha_port: u16,
    namesrv: &str,
    cluster: &str,
    store: &Path,
) -> String {
    let role = if spec.id == 0 {
        "ASYNC_MASTER"
    } else {
        "SLAVE"
    };
    let store = store.display();
    format!(
        r#"[broker]
listenPort = {port}
brokerIp1 = "127.0.0.1"
namesrvAddr = "{namesrv}"
storePathRootDir = "{store}"
autoCreateTopicEnable = true
autoCreateSubscriptionGroup = true

[broker.brokerServerConfig]
bindAddress = "127.0.0.1"

[broker.brokerIdentity]
brokerName = "{name}"
brokerClusterName = "{cluster}"
brokerId = {id}

[store]
storePathRootDir = "{store}"
haListenAddress = "127.0.0.1"
haListenPort = {ha_port}
mappedFileSizeCommitLog = 16777216
mappedFileSizeConsumeQueue = 60000
maxHashSlotNum = 10000
maxIndexNum = 40000
linuxFilePreallocateEnable = false
brokerRole = "{role}"
flushDiskType = "ASYNC_FLUSH"
"#,
        name = spec.name,
        id = spec.id,
    )
}
