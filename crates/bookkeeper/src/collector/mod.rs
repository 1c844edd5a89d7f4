//! The BookKeeper collector: one audit pass's I/O against a cluster, nothing judged. It reads the registry
//! (writable and read-only bookies, cookies, the rack map from `<root>/../bookies` JSON merged under the
//! configured racks), lists ledgers, and observes one ledger at a time: its metadata and znode version, its
//! under-replication mark, and — for closed, non-empty, unmarked ledgers — each bookie's entry list, asking only
//! bookies with a non-empty expected share. Metadata reads and ledger checks are bounded by two semaphores
//! (BookKeeper's 500 and 100 by default). A bookie that fails to answer is remembered for the rest of the pass
//! (its later ledgers get `Unreachable` at once, so one dead bookie costs one timeout) until [`Collector::probe`]
//! finds it answering again.

use mqwatch_model::{CollectorErrorRecord, LedgerObservation, NodeRef, NodeRole};
use std::collections::BTreeMap;
use std::time::Duration;

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
    /// Metadata reads in flight at most (default 500).
    pub metadata_concurrency: usize,
    /// Ledger checks (bookie queries) in flight at most (default 100).
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
    _target: Target,
}

impl Collector {
    /// Opens the ZooKeeper session.
    pub async fn connect(target: &Target) -> Result<Self, CollectError> {
        let _ = target;
        todo!("helper B")
    }

    /// The registry and rack map.
    pub async fn registry(&self) -> Result<Registry, CollectError> {
        todo!("helper B")
    }

    /// Every ledger id, ascending.
    pub async fn ledger_ids(&self) -> Result<Vec<u64>, CollectError> {
        todo!("helper B")
    }

    /// One ledger's observation; `None` when the ledger is gone. A corrupt metadata znode is an error naming the
    /// path. Bookie failures are not errors: they are answers (`Unreachable` / `Failed`).
    pub async fn observe(&self, id: u64) -> Result<Option<LedgerObservation>, CollectError> {
        let _ = id;
        todo!("helper B")
    }

    /// The metadata znode's version now (`None`: gone), to re-read before reporting.
    pub async fn metadata_version(&self, id: u64) -> Result<Option<i32>, CollectError> {
        let _ = id;
        todo!("helper B")
    }

    /// Asks `bookie` for its info (GET_BOOKIE_INFO) on a fresh connection; on success the bookie is no longer
    /// remembered as unreachable.
    pub async fn probe(&self, bookie: &str) -> Result<(), CollectError> {
        let _ = bookie;
        todo!("helper B")
    }

    /// Bookies found unreachable in this pass so far, with the reason.
    pub fn unreachable(&self) -> BTreeMap<String, String> {
        todo!("helper B")
    }
}
