//! The state directory `serve` and `check` share: the brokers each cluster has shown (so one that vanished since
//! the last look is still known and reported) and each cluster's last snapshot (so a one-shot check measures
//! growth since the previous look). Files are replaced atomically (write, then rename).

use anyhow::{Context, Result};
use mqwatch_kafka::collector::KnownBroker as KafkaKnownBroker;
use mqwatch_model::{ClusterSnapshot, NodeRole, ObservedNodeState};
use mqwatch_rocketmq::collector::KnownBroker;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The state directory.
#[derive(Debug, Clone)]
pub struct StateDir(PathBuf);

#[derive(Debug, Default, Serialize, Deserialize)]
struct Topology {
    /// Cluster → brokers seen registered.
    clusters: BTreeMap<String, Vec<KnownBroker>>,
}

impl StateDir {
    /// `--state-dir`, else the config's `[state] dir`, else `$XDG_STATE_HOME/mqwatch`, else
    /// `~/.local/state/mqwatch`.
    pub fn resolve(flag: Option<&Path>, config: Option<&Path>) -> Result<Self> {
        let dir = match flag.or(config) {
            Some(d) => d.to_path_buf(),
            None => match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
                Some(x) => PathBuf::from(x).join("mqwatch"),
                None => {
                    let home = std::env::var_os("HOME")
                        .context("neither XDG_STATE_HOME nor HOME is set")?;
                    PathBuf::from(home).join(".local/state/mqwatch")
                }
            },
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create state directory {}", dir.display()))?;
        Ok(StateDir(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    fn topology(&self) -> Result<Topology> {
        read_json(&self.0.join("topology.json")).map(Option::unwrap_or_default)
    }

    /// Brokers `cluster` has shown so far.
    pub fn known_brokers(&self, cluster: &str) -> Result<Vec<KnownBroker>> {
        Ok(self
            .topology()?
            .clusters
            .remove(cluster)
            .unwrap_or_default())
    }

    /// Kafka brokers `cluster` has shown so far (their ids and addresses).
    pub fn known_kafka_brokers(&self, cluster: &str) -> Result<Vec<KafkaKnownBroker>> {
        Ok(self
            .known_brokers(cluster)?
            .into_iter()
            .filter(|k| k.id == -1)
            .filter_map(|k| {
                Some(KafkaKnownBroker {
                    id: k.name.parse().ok()?,
                    addr: k.addr,
                })
            })
            .collect())
    }

    /// Adds the brokers registered in `snapshot` to what is known (addresses updated).
    pub fn remember(&self, snapshot: &ClusterSnapshot) -> Result<()> {
        let mut topo = self.topology()?;
        let known = topo.clusters.entry(snapshot.cluster.clone()).or_default();
        let mut changed = false;
        for n in &snapshot.nodes {
            let registered = matches!(
                n.registration,
                Some(
                    ObservedNodeState::Active
                        | ObservedNodeState::Fenced
                        | ObservedNodeState::ControlledShutdown
                )
            );
            if n.node.role != NodeRole::Broker || !registered {
                continue;
            }
            // RocketMQ names a broker `<name>:<id>`; Kafka by its id alone, kept with id -1.
            let (name, id) = match n.node.name.rsplit_once(':') {
                Some((name, id)) => match id.parse::<i64>() {
                    Ok(id) => (name, id),
                    Err(_) => continue,
                },
                None => (n.node.name.as_str(), -1),
            };
            let addr = n.node.addr.clone().unwrap_or_default();
            match known.iter_mut().find(|k| k.name == name && k.id == id) {
                Some(k) if k.addr == addr => {}
                Some(k) => {
                    k.addr = addr;
                    changed = true;
                }
                None => {
                    known.push(KnownBroker {
                        name: name.to_string(),
                        id,
                        addr,
                    });
                    changed = true;
                }
            }
        }
        if changed {
            write_json(&self.0.join("topology.json"), &topo)?;
        }
        Ok(())
    }

    fn snapshot_path(&self, cluster: &str) -> PathBuf {
        self.cluster_path("snapshots", cluster)
    }

    /// `<dir>/<cluster>.json` under the state directory, the cluster's name made safe for a file name.
    pub(crate) fn cluster_path(&self, dir: &str, cluster: &str) -> PathBuf {
        let safe: String = cluster
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.0.join(dir).join(format!("{safe}.json"))
    }

    /// The last snapshot saved for `cluster`.
    pub fn last_snapshot(&self, cluster: &str) -> Result<Option<ClusterSnapshot>> {
        read_json(&self.snapshot_path(cluster))
    }

    /// Saves `snapshot` as its cluster's last.
    pub fn save_snapshot(&self, snapshot: &ClusterSnapshot) -> Result<()> {
        write_json(&self.snapshot_path(&snapshot.cluster), snapshot)
    }
}

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).with_context(|| {
            format!(
                "state file {} is corrupt (delete it to start afresh)",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read state file {}", path.display())),
    }
}

pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(value)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{NodeRef, NodeStatus};

    fn broker(name: &str, addr: &str, reg: ObservedNodeState) -> NodeStatus {
        NodeStatus {
            node: NodeRef::new(NodeRole::Broker, name).with_addr(addr),
            registration: Some(reg),
            expected: false,
            answered: true,
            error: None,
            last_answer_ms: None,
            replica_of: None,
            store_max_offset: None,
        }
    }

    #[test]
    fn brokers_seen_once_stay_known_and_addresses_follow() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::resolve(Some(dir.path()), None).unwrap();
        let mut s = ClusterSnapshot {
            cluster: "c".into(),
            ..Default::default()
        };
        s.nodes = vec![
            broker("broker-a:0", "127.0.0.1:1", ObservedNodeState::Active),
            broker("broker-b:0", "127.0.0.1:2", ObservedNodeState::Unregistered),
        ];
        state.remember(&s).unwrap();
        assert_eq!(
            state.known_brokers("c").unwrap(),
            vec![KnownBroker {
                name: "broker-a".into(),
                id: 0,
                addr: "127.0.0.1:1".into()
            }]
        );
        s.nodes = vec![broker(
            "broker-a:0",
            "127.0.0.1:9",
            ObservedNodeState::Active,
        )];
        state.remember(&s).unwrap();
        assert_eq!(state.known_brokers("c").unwrap()[0].addr, "127.0.0.1:9");
        assert!(state.known_brokers("other").unwrap().is_empty());
    }

    #[test]
    fn snapshots_round_trip_and_corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::resolve(Some(dir.path()), None).unwrap();
        assert!(state.last_snapshot("a/b").unwrap().is_none());
        let s = ClusterSnapshot {
            cluster: "a/b".into(),
            taken_at_ms: 5,
            ..Default::default()
        };
        state.save_snapshot(&s).unwrap();
        assert_eq!(state.last_snapshot("a/b").unwrap(), Some(s));
        std::fs::write(dir.path().join("topology.json"), b"{nope").unwrap();
        let e = state.known_brokers("a").unwrap_err().to_string();
        assert!(e.contains("topology.json") && e.contains("corrupt"), "{e}");
    }
}
