//! The BookKeeper collector: one audit pass's I/O against a cluster, nothing judged. It reads the registry
//! (writable and read-only bookies, cookies, the rack map from `<root>/../bookies` JSON merged under the
//! configured racks), lists ledgers, and observes one ledger at a time: its metadata and znode version, its
//! under-replication mark, and — for closed, non-empty, unmarked ledgers — each bookie's entry list, asking only
//! bookies with a non-empty expected share. Metadata reads and ledger checks are bounded by two semaphores
//! (BookKeeper's 500 and 100 by default). A bookie that fails to answer is remembered for the rest of the pass
//! (its later ledgers get `Unreachable` at once, so one dead bookie costs one timeout) until [`Collector::probe`]
//! finds it answering again.
//!
//! Bookies are asked concurrently (one request per bookie of a ledger) through a small connection pool per bookie
//! (see [`CONNECTIONS_PER_BOOKIE`]). A bookie id that is not `host:port` is answered `Unreachable` with the
//! reason. Failures of ZooKeeper, and znodes that do not decode (ledger metadata, marks, the rack map), are
//! [`CollectError`]s naming the path and the request.

mod pool;
mod racks;

pub use pool::CONNECTIONS_PER_BOOKIE;
pub use racks::{parse_rack_map, rack_map_path};

use crate::paths;
use crate::zk::{MetadataReader, ZkError};
use mqwatch_model::{
    CollectorErrorRecord, LedgerObservation, NodeRef, NodeRole, UnderReplicationMark,
};
use pool::BookiePool;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit};
use zookeeper_client::Error as ZkClientError;

/// One BookKeeper cluster to collect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The cluster's configured name.
    pub cluster: String,
    /// ZooKeeper `HOST:PORT` (a comma-separated list is passed through to the client).
    pub zookeeper: String,
    /// The ledgers root, e.g. `/ledgers`.
    pub root: String,
    /// ZooKeeper session timeout and the timeout of every bookie request.
    pub timeout: Duration,
    /// Metadata reads in flight at most (default 500; 0 reads as 1).
    pub metadata_concurrency: usize,
    /// Ledger checks (bookie queries) in flight at most (default 100; 0 reads as 1).
    pub ledger_concurrency: usize,
    /// Racks from config (bookie id → rack), overriding the `/bookies` map.
    pub racks: BTreeMap<String, String>,
}

impl Target {
    /// A target with BookKeeper's defaults: root `/ledgers`, 10 s timeout, 500 / 100 in flight, no racks.
    pub fn new(cluster: &str, zookeeper: &str) -> Self {
        Self {
            cluster: cluster.into(),
            zookeeper: zookeeper.into(),
            root: "/ledgers".into(),
            timeout: Duration::from_secs(10),
            metadata_concurrency: 500,
            ledger_concurrency: 100,
            racks: BTreeMap::new(),
        }
    }
}

/// The bookies as the cluster's registry lists them, with their racks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    /// Registered writable.
    pub writable: Vec<String>,
    /// Registered read-only.
    pub read_only: Vec<String>,
    /// Ever joined (cookie).
    pub cookies: Vec<String>,
    /// Bookie id → rack (`/bookies` JSON, then config on top).
    pub racks: BTreeMap<String, String>,
}

/// A request that failed, naming the path or bookie and the request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{request} {subject}: {error}")]
pub struct CollectError {
    /// The request, e.g. `getData` or `GET_LIST_OF_ENTRIES_OF_LEDGER`.
    pub request: String,
    /// The znode path or bookie id it concerned.
    pub subject: String,
    /// The bookie, when one was asked.
    pub bookie: Option<String>,
    /// What happened.
    pub error: String,
}

impl CollectError {
    /// As a snapshot's error record (the node is the bookie, when one was asked).
    pub fn record(&self) -> CollectorErrorRecord {
        CollectorErrorRecord {
            node: self
                .bookie
                .as_deref()
                .map(|b| NodeRef::new(NodeRole::Bookie, b)),
            request: self.request.clone(),
            error: format!("{}: {}", self.subject, self.error),
        }
    }
}

/// A session with one cluster for one or more audit passes.
pub struct Collector {
    target: Target,
    root: String,
    reader: MetadataReader,
    metadata_permits: Semaphore,
    ledger_permits: Semaphore,
    bookies: BookiePool,
}

fn zk_error(request: &str, e: ZkError) -> CollectError {
    let (subject, error) = match e {
        ZkError::Connect { addr, reason } => (addr, reason),
        ZkError::Request { path, reason } => (path, reason),
        ZkError::Metadata { path, source } => (path, source.to_string()),
        ZkError::Mark { path, source } => (path, source.to_string()),
    };
    CollectError {
        request: request.into(),
        subject,
        bookie: None,
        error,
    }
}

fn permits(n: usize) -> Semaphore {
    Semaphore::new(n.clamp(1, Semaphore::MAX_PERMITS))
}

impl Collector {
    /// Opens the ZooKeeper session.
    pub async fn connect(target: &Target) -> Result<Self, CollectError> {
        let reader = MetadataReader::connect(&target.zookeeper, &target.root, target.timeout)
            .await
            .map_err(|e| zk_error("connect", e))?;
        Ok(Self {
            root: target.root.trim_end_matches('/').to_string(),
            reader,
            metadata_permits: permits(target.metadata_concurrency),
            ledger_permits: permits(target.ledger_concurrency),
            bookies: BookiePool::new(target.timeout),
            target: target.clone(),
        })
    }

    /// The target this collector was opened for.
    pub fn target(&self) -> &Target {
        &self.target
    }

    async fn metadata_permit(&self) -> SemaphorePermit<'_> {
        self.metadata_permits
            .acquire()
            .await
            .expect("the collector never closes its semaphores")
    }

    fn ledger_id(&self, id: u64, request: &str) -> Result<i64, CollectError> {
        i64::try_from(id).map_err(|_| CollectError {
            request: request.into(),
            subject: format!("ledger {id}"),
            bookie: None,
            error: "beyond the largest ledger id (2^63 - 1)".into(),
        })
    }

    /// The registry and rack map.
    pub async fn registry(&self) -> Result<Registry, CollectError> {
        let _permit = self.metadata_permit().await;
        let bookies = self
            .reader
            .bookies()
            .await
            .map_err(|e| zk_error("getChildren", e))?;
        let path = rack_map_path(&self.root);
        let mut racks = match self.reader.client().get_data(&path).await {
            Ok((bytes, _)) => parse_rack_map(&path, &bytes)?,
            Err(ZkClientError::NoNode) => BTreeMap::new(),
            Err(e) => {
                return Err(CollectError {
                    request: "getData".into(),
                    subject: path,
                    bookie: None,
                    error: e.to_string(),
                });
            }
        };
        racks.extend(
            self.target
                .racks
                .iter()
                .map(|(b, r)| (b.clone(), r.clone())),
        );
        Ok(Registry {
            writable: bookies.writable,
            read_only: bookies.read_only,
            cookies: bookies.cookies,
            racks,
        })
    }

    /// Every ledger id, ascending.
    pub async fn ledger_ids(&self) -> Result<Vec<u64>, CollectError> {
        let _permit = self.metadata_permit().await;
        let ids = self
            .reader
            .ledger_ids()
            .await
            .map_err(|e| zk_error("getChildren", e))?;
        // Ids come from znode paths, which never hold a negative one.
        Ok(ids
            .into_iter()
            .filter_map(|id| u64::try_from(id).ok())
            .collect())
    }

    /// One ledger's observation; `None` when the ledger is gone. A corrupt metadata znode is an error naming the
    /// path. Bookie failures are not errors: they are answers (`Unreachable` / `Failed`).
    ///
    /// Metadata and mark are read under the metadata bound. A ledger that is not closed, is empty, or is marked
    /// under-replicated is observed without asking any bookie; otherwise, under the ledger bound, every bookie
    /// with a non-empty expected share is asked at once.
    pub async fn observe(&self, id: u64) -> Result<Option<LedgerObservation>, CollectError> {
        let lid = self.ledger_id(id, "getData")?;
        let (metadata, version, mark) = {
            let _permit = self.metadata_permit().await;
            let Some((metadata, version)) = self
                .reader
                .ledger(lid)
                .await
                .map_err(|e| zk_error("getData", e))?
            else {
                return Ok(None);
            };
            let mark = self
                .reader
                .under_replication_mark(lid)
                .await
                .map_err(|e| zk_error("getData", e))?;
            (metadata, version, mark)
        };
        let mut observation = LedgerObservation {
            layout: metadata.layout(id),
            metadata_version: version,
            mark: mark.map(|m| UnderReplicationMark {
                replicas: m.replicas,
                marked_at_ms: m.ctime_ms,
            }),
            answers: BTreeMap::new(),
        };
        if !observation.layout.is_closed_and_non_empty() || observation.mark.is_some() {
            return Ok(Some(observation));
        }
        let asked: Vec<String> = observation
            .layout
            .bookies_with_entries()
            .into_iter()
            .map(str::to_string)
            .collect();
        let _permit = self
            .ledger_permits
            .acquire()
            .await
            .expect("the collector never closes its semaphores");
        let answers =
            futures::future::join_all(asked.iter().map(|bookie| self.bookies.entries(bookie, lid)))
                .await;
        observation.answers = asked.into_iter().zip(answers).collect();
        Ok(Some(observation))
    }

    /// The metadata znode's version now (`None`: gone), to re-read before reporting.
    pub async fn metadata_version(&self, id: u64) -> Result<Option<i32>, CollectError> {
        let lid = self.ledger_id(id, "exists")?;
        let path = paths::ledger_path(&self.root, lid).expect("non-negative id");
        let _permit = self.metadata_permit().await;
        match self.reader.client().check_stat(&path).await {
            Ok(stat) => Ok(stat.map(|s| s.version)),
            Err(e) => Err(CollectError {
                request: "exists".into(),
                subject: path,
                bookie: None,
                error: e.to_string(),
            }),
        }
    }

    /// Asks `bookie` for its info (GET_BOOKIE_INFO) on a fresh connection; on success the bookie is no longer
    /// remembered as unreachable (and when it cannot be reached, it is remembered).
    pub async fn probe(&self, bookie: &str) -> Result<(), CollectError> {
        self.bookies.probe(bookie).await.map_err(|e| CollectError {
            request: "GET_BOOKIE_INFO".into(),
            subject: bookie.into(),
            bookie: Some(bookie.into()),
            error: if e.operation == "GET_BOOKIE_INFO" {
                e.reason
            } else {
                format!("{}: {}", e.operation, e.reason)
            },
        })
    }

    /// Bookies found unreachable in this pass so far, with the reason.
    pub fn unreachable(&self) -> BTreeMap<String, String> {
        self.bookies.unreachable()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send<T: Send>(_: &T) {}

    #[test]
    fn a_collector_can_be_shared_between_tasks() {
        fn shared<T: Send + Sync>() {}
        shared::<Collector>();
    }

    /// Compiles only if every request's future can be spawned.
    #[allow(dead_code)]
    fn futures_are_send(c: &Collector) {
        send(&c.registry());
        send(&c.ledger_ids());
        send(&c.observe(1));
        send(&c.metadata_version(1));
        send(&c.probe("h:1"));
    }

    #[test]
    fn errors_name_the_request_and_subject() {
        let e = zk_error(
            "getData",
            ZkError::Request {
                path: "/ledgers/00/0000/L0001".into(),
                reason: "ConnectionLoss".into(),
            },
        );
        assert_eq!(
            e.to_string(),
            "getData /ledgers/00/0000/L0001: ConnectionLoss"
        );
        let r = e.record();
        assert_eq!((r.node, r.request.as_str()), (None, "getData"));
    }
}
