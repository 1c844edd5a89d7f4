//! The config file (TOML, ARCHITECTURE.md's shape): read once at start; any bad key stops mqwatch with the file,
//! the key and the reason. Unknown keys are errors so a typo never silently keeps a default.

use anyhow::{Context, Result, bail};
use mqwatch_alert::{AlertConfig, ChannelConfig};
use mqwatch_checks::Thresholds;
use mqwatch_model::{Engine, Span};
use mqwatch_store::StoreConfig;
use serde::Deserialize;
use std::path::{Path, PathBuf};

mod security;
pub use security::{SaslConfig, TlsConfig};

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerConfig,
    /// `[store]`: where the store lives (default: a SQLite file in the state directory) and its retention.
    #[serde(default)]
    pub store: StoreConfig,
    /// `[state]`.
    #[serde(default)]
    pub state: StateConfig,
    /// `[[cluster]]`.
    #[serde(default, rename = "cluster")]
    pub clusters: Vec<ClusterConfig>,
    /// `[thresholds.<kind>]`.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// `[alerts]`: the alarm lifecycle's pending periods, repeat intervals and resolves, per kind.
    #[serde(default)]
    pub alerts: AlertConfig,
    /// `[[channel]]`: where notifications go and which ones each channel takes.
    #[serde(default, rename = "channel")]
    pub channels: Vec<ChannelConfig>,
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// HTTP listen address.
    pub listen: String,
    /// Bearer token for write endpoints and client reports.
    pub token: Option<String>,
    /// Bearer token for reads (`/api/…` GETs and `/metrics`; the write token also reads); none: reads are open.
    pub read_token: Option<String>,
    /// How fine `/metrics` goes: `group` (default, low cardinality) or `partition` (per partition / queue too).
    pub metrics_detail: crate::serve::metrics::MetricsDetail,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            token: None,
            read_token: None,
            metrics_detail: Default::default(),
        }
    }
}

/// `[state]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StateConfig {
    /// State directory (default `$XDG_STATE_HOME/mqwatch`, else `~/.local/state/mqwatch`).
    pub dir: Option<PathBuf>,
}

/// `[[cluster]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// mqwatch's name for the cluster (unique).
    pub name: String,
    /// `rocketmq`, `kafka` or `bookkeeper`.
    pub engine: Engine,
    /// RocketMQ name servers.
    #[serde(default)]
    pub name_servers: Vec<String>,
    /// Kafka bootstrap servers.
    #[serde(default)]
    pub bootstrap: Vec<String>,
    /// BookKeeper's ZooKeeper.
    #[serde(default)]
    pub zookeeper: Option<String>,
    /// BookKeeper ledgers root.
    #[serde(default)]
    pub root: Option<String>,
    /// Collection interval (MQCloud's 60 s by default).
    #[serde(default = "default_interval")]
    pub interval: Span,
    /// Per-request timeout (default 3 s).
    #[serde(default = "default_timeout")]
    pub timeout: Span,
    /// Requests in flight at once (default 32).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// node_exporter endpoints of this cluster's machines.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Brokers that must be there: `broker-a` (its master) or `broker-a:1`.
    #[serde(default)]
    pub expected_brokers: Vec<String>,
    /// BookKeeper: how often a silent bookie is probed again before it is unreachable (default 2).
    #[serde(default = "default_rechecks")]
    pub rechecks: u32,
    /// BookKeeper: the wait before each re-probe (default 10s).
    #[serde(default = "default_recheck_delay")]
    pub recheck_delay: Span,
    /// BookKeeper: ledger metadata reads in flight at most (default 500, as BookKeeper's auditor).
    #[serde(default = "default_metadata_concurrency")]
    pub metadata_concurrency: usize,
    /// BookKeeper: ledger checks in flight at most (default 100, as BookKeeper's auditor).
    #[serde(default = "default_ledger_concurrency")]
    pub ledger_concurrency: usize,
    /// BookKeeper: bookie id → rack, over the cluster's own `/bookies` map.
    #[serde(default)]
    pub racks: std::collections::BTreeMap<String, String>,
    /// Where observations come from: `network` (default, the engine's collector) or `simulated` (`mqwatch demo`'s
    /// simulated cluster of this engine; no addresses needed).
    #[serde(default)]
    pub source: Source,
    /// `[cluster.probe]`: the end-to-end probe (RocketMQ and Kafka; off by default).
    #[serde(default)]
    pub probe: mqwatch_probe::ProbeConfig,
    /// `[cluster.tls]`: Kafka over TLS.
    #[serde(default)]
    pub tls: Option<TlsConfig>,
    /// `[cluster.sasl]`: Kafka SASL authentication.
    #[serde(default)]
    pub sasl: Option<SaslConfig>,
}

/// Where a cluster's observations come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The engine's collector, over the network.
    #[default]
    Network,
    /// The built-in simulated estate ([`crate::demo`]).
    Simulated,
}

fn default_interval() -> Span {
    Span::from_secs(60)
}
fn default_timeout() -> Span {
    Span::from_secs(3)
}
fn default_concurrency() -> usize {
    32
}
fn default_rechecks() -> u32 {
    2
}
fn default_recheck_delay() -> Span {
    Span::from_secs(10)
}
fn default_metadata_concurrency() -> usize {
    500
}
fn default_ledger_concurrency() -> usize {
    100
}

impl ClusterConfig {
    /// A cluster of `engine` named `name` with every default.
    fn with_defaults(name: String, engine: Engine) -> Self {
        ClusterConfig {
            name,
            engine,
            name_servers: Vec::new(),
            bootstrap: Vec::new(),
            zookeeper: None,
            root: None,
            interval: default_interval(),
            timeout: default_timeout(),
            concurrency: default_concurrency(),
            hosts: Vec::new(),
            expected_brokers: Vec::new(),
            rechecks: default_rechecks(),
            recheck_delay: default_recheck_delay(),
            metadata_concurrency: default_metadata_concurrency(),
            ledger_concurrency: default_ledger_concurrency(),
            racks: Default::default(),
            source: Source::Network,
            probe: Default::default(),
            tls: None,
            sasl: None,
        }
    }

    /// A simulated cluster of `engine` named `name`, as `mqwatch demo` builds it.
    pub fn simulated(name: &str, engine: Engine) -> Self {
        ClusterConfig {
            source: Source::Simulated,
            ..Self::with_defaults(name.to_string(), engine)
        }
    }

    /// The Kafka client security its `tls` and `sasl` tables make (checked when the config loads).
    pub fn kafka_security(&self) -> Result<mqwatch_kafka::client::Security> {
        security::security(self.tls.as_ref(), self.sasl.as_ref()).map_err(anyhow::Error::msg)
    }

    /// A RocketMQ cluster with defaults, as `check --rocketmq` builds it.
    pub fn rocketmq(name_server: &str) -> Self {
        ClusterConfig {
            name_servers: vec![name_server.to_string()],
            ..Self::with_defaults(format!("rocketmq@{name_server}"), Engine::Rocketmq)
        }
    }

    /// A Kafka cluster with defaults, as `check --kafka` builds it.
    pub fn kafka(bootstrap: &str) -> Self {
        ClusterConfig {
            bootstrap: vec![bootstrap.to_string()],
            ..Self::with_defaults(format!("kafka@{bootstrap}"), Engine::Kafka)
        }
    }

    /// A BookKeeper cluster with defaults, as `check --zk` and `audit bookkeeper` build it.
    pub fn bookkeeper(zookeeper: &str, root: &str) -> Self {
        ClusterConfig {
            zookeeper: Some(zookeeper.to_string()),
            root: Some(root.to_string()),
            // An audit pass asks every bookie about every ledger: 10 s per request, as BookKeeper's client.
            timeout: Span::from_secs(10),
            ..Self::with_defaults(format!("bookkeeper@{zookeeper}"), Engine::Bookkeeper)
        }
    }
}

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("config {}", path.display()))
    }

    /// Parses and validates config text.
    pub fn parse(text: &str) -> Result<Self> {
        let config: Config =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks what serde cannot: names unique, each engine's required keys, sane intervals and limits.
    pub fn validate(&self) -> Result<()> {
        let mut names = std::collections::BTreeSet::new();
        for (i, c) in self.clusters.iter().enumerate() {
            let at = format!("cluster[{i}] ({})", c.name);
            if c.name.trim().is_empty() {
                bail!("cluster[{i}]: name must not be empty");
            }
            if !names.insert(&c.name) {
                bail!("{at}: name is used by another cluster");
            }
            match c.engine {
                _ if c.source == Source::Simulated => {}
                Engine::Rocketmq if c.name_servers.is_empty() => {
                    bail!("{at}: engine rocketmq needs name_servers")
                }
                Engine::Kafka if c.bootstrap.is_empty() => {
                    bail!("{at}: engine kafka needs bootstrap")
                }
                Engine::Bookkeeper if c.zookeeper.is_none() => {
                    bail!("{at}: engine bookkeeper needs zookeeper")
                }
                _ => {}
            }
            if c.interval.as_millis() < 100 {
                bail!("{at}: interval {} is shorter than 100ms", c.interval);
            }
            if c.timeout.as_millis() == 0 {
                bail!("{at}: timeout must be positive");
            }
            if c.concurrency == 0 || c.metadata_concurrency == 0 || c.ledger_concurrency == 0 {
                bail!(
                    "{at}: concurrency, metadata_concurrency and ledger_concurrency must be at least 1"
                );
            }
            if c.probe.enabled {
                if !matches!(c.engine, Engine::Rocketmq | Engine::Kafka) {
                    bail!("{at}: probe: the probe runs on rocketmq and kafka clusters only");
                }
                c.probe
                    .validate()
                    .map_err(|e| anyhow::anyhow!("{at}: probe.{e}"))?;
            }
            if (c.tls.is_some() || c.sasl.is_some()) && c.engine != Engine::Kafka {
                bail!("{at}: tls and sasl apply to kafka clusters only");
            }
            c.kafka_security()
                .map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
            if let Some(root) = &c.root
                && !root.starts_with('/')
            {
                bail!("{at}: root {root:?} must be an absolute znode path");
            }
        }
        if self.thresholds.lag_status.window < 2 {
            bail!(
                "thresholds.lag_status.window: {} is too small (a window needs at least 2 samples)",
                self.thresholds.lag_status.window
            );
        }
        mqwatch_alert::validate_channels(&self.channels)?;
        if let Some(url) = &self.store.url {
            url.parse::<mqwatch_store::StoreUrl>()
                .map_err(|e| anyhow::anyhow!("store.url: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mqwatch.toml");
        let c = Config::load(&path).unwrap();
        assert_eq!(c.clusters[0].engine, Engine::Rocketmq);
        assert_eq!(c.clusters[0].interval, Span::from_secs(60));
        assert_eq!(c.thresholds.backlog.count, 10_000);
        assert_eq!(c.thresholds.backlog.age, Span::from_secs(300));
        let bk = &c.clusters[1];
        assert_eq!(bk.engine, Engine::Bookkeeper);
        assert_eq!((bk.metadata_concurrency, bk.ledger_concurrency), (500, 100));
        assert_eq!(bk.racks["127.0.0.1:3181"], "/region-a/rack-1");
        let kafka = c.clusters[2].kafka_security().unwrap();
        assert_eq!(
            kafka.sasl.map(|s| s.mechanism),
            Some(mqwatch_kafka::client::Mechanism::ScramSha512)
        );
        assert_eq!(kafka.tls, None);
        assert_eq!(c.thresholds.ledgers.grace, None);
        assert_eq!(c.store.url, None);
        assert_eq!(c.store.retention, mqwatch_store::Retention::default());
        assert_eq!(
            c.alerts.repeat_ms(mqwatch_model::FindingKind::Backlog),
            3_600_000
        );
        assert_eq!(
            c.alerts.pending_for_ms(mqwatch_model::FindingKind::Backlog),
            300_000
        );
        let kinds: Vec<_> = c.channels.iter().map(|ch| ch.kind.as_str()).collect();
        assert_eq!(kinds, ["webhook", "alertmanager", "email", "log"]);
    }

    #[test]
    fn lag_status_and_replication_grace_are_read_and_checked() {
        let c = Config::parse(
            "[thresholds.lag_status]\nwindow = 6\nmin_span = \"2m\"\nallowed_lag = 5\n\
             [thresholds.replication]\nstuck_after = \"30m\"\n",
        )
        .unwrap();
        assert_eq!(c.thresholds.lag_status.window, 6);
        assert_eq!(c.thresholds.lag_status.min_span, Span::from_secs(120));
        assert_eq!(c.thresholds.lag_status.allowed_lag, 5);
        assert_eq!(c.thresholds.replication.stuck_after, Span::from_secs(1800));
        assert_eq!(c.thresholds.replication.min_factor, 2);
        let e = Config::parse("[thresholds.lag_status]\nwindow = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("thresholds.lag_status.window"), "{e}");
    }

    #[test]
    fn store_alerts_and_channels_are_checked_at_load() {
        let c = Config::parse(
            "[store]\nurl = \"sqlite:///tmp/m.db\"\n[alerts]\nrepeat = \"30m\"\n\
             [[channel]]\nname = \"x\"\nkind = \"log\"\n",
        )
        .unwrap();
        assert_eq!(c.store.url.as_deref(), Some("sqlite:///tmp/m.db"));
        assert_eq!(c.alerts.repeat, Span::from_secs(1800));
        let e = Config::parse("[store]\nurl = \"mysql://h/db\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("store.url") && e.contains("mysql://h/db"), "{e}");
        let e = Config::parse("[[channel]]\nname = \"ops\"\nkind = \"webhook\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("channel[0] (ops)") && e.contains("url"), "{e}");
        let e = Config::parse("[[channel]]\nname = \"ops\"\nkind = \"slack\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("slack"), "{e}");
        let e = Config::parse("[alerts]\nrepat = \"1h\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("repat"), "{e}");
    }

    #[test]
    fn absent_thresholds_take_mqcloud_defaults() {
        let c = Config::parse(
            "[[cluster]]\nname = \"a\"\nengine = \"rocketmq\"\nname_servers = [\"x:1\"]\n",
        )
        .unwrap();
        assert_eq!(c.thresholds, Thresholds::default());
        assert_eq!(c.thresholds.slave_fall_behind.bytes, 10 * 1024 * 1024);
    }

    #[test]
    fn bad_keys_are_named() {
        let e = Config::parse("[thresholds.backlog]\ncout = 5\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cout"), "{e}");
        let e = Config::parse("[[cluster]]\nname = \"a\"\nengine = \"pulsar\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("pulsar"), "{e}");
        let e = Config::parse("[[cluster]]\nname = \"a\"\nengine = \"rocketmq\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cluster[0] (a)") && e.contains("name_servers"),
            "{e}"
        );
        let e = Config::parse("[thresholds.backlog]\nage = \"5 minutes\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown unit"), "{e}");
    }
}
