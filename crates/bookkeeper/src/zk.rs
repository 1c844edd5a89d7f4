//! Reads a BookKeeper cluster's metadata from ZooKeeper (through `zookeeper-client`): the bookies that are
//! registered (writable and read-only) and those that ever joined (cookies), every ledger id (walking the
//! hierarchical and long-hierarchical layouts), a ledger's metadata with its znode version (so a checker can
//! re-read before reporting and notice a change), and under-replication marks. Every error names the path.

use crate::metadata::{LedgerMetadata, MetadataError};
use crate::paths;
use crate::underreplication::{MarkError, UnderReplicatedMark};
use std::time::Duration;
use zookeeper_client::{Client, Error as ZkClientError};

/// Why reading metadata failed.
#[derive(Debug, thiserror::Error)]
pub enum ZkError {
    /// No session with ZooKeeper.
    #[error("ZooKeeper {addr}: cannot connect: {reason}")]
    Connect {
        /// The ZooKeeper address.
        addr: String,
        /// Why.
        reason: String,
    },
    /// A request failed.
    #[error("ZooKeeper {path}: {reason}")]
    Request {
        /// The znode.
        path: String,
        /// Why.
        reason: String,
    },
    /// A ledger's metadata does not decode.
    #[error("ledger metadata {path}: {source}")]
    Metadata {
        /// The znode.
        path: String,
        /// The decoder's error.
        source: MetadataError,
    },
    /// An under-replication mark does not decode.
    #[error("under-replication mark {path}: {source}")]
    Mark {
        /// The znode.
        path: String,
        /// The decoder's error.
        source: MarkError,
    },
}

/// The bookies as ZooKeeper lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bookies {
    /// Registered writable (`<root>/available/<id>`).
    pub writable: Vec<String>,
    /// Registered read-only (`<root>/available/readonly/<id>`).
    pub read_only: Vec<String>,
    /// Every bookie that ever joined (`<root>/cookies/<id>`).
    pub cookies: Vec<String>,
}

/// A metadata reader for one ledgers root.
pub struct MetadataReader {
    client: Client,
    root: String,
}

/// Deepest ledger znode below the root (long hierarchical: 3-4-4-4-L4).
const MAX_DEPTH: usize = 5;

impl MetadataReader {
    /// Opens a session with `addr` (HOST:PORT) for the ledgers root `root` (e.g. `/ledgers`).
    pub async fn connect(
        addr: &str,
        root: &str,
        session_timeout: Duration,
    ) -> Result<Self, ZkError> {
        let connect = Client::connector()
            .with_session_timeout(session_timeout)
            .connect(addr);
        let client = tokio::time::timeout(session_timeout, connect)
            .await
            .map_err(|_| ZkError::Connect {
                addr: addr.into(),
                reason: format!("no session within {session_timeout:?}"),
            })?
            .map_err(|e| ZkError::Connect {
                addr: addr.into(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            client,
            root: root.trim_end_matches('/').to_string(),
        })
    }

    fn path(&self, rest: &str) -> String {
        format!("{}/{rest}", self.root)
    }

    async fn children(&self, path: &str) -> Result<Vec<String>, ZkError> {
        match self.client.list_children(path).await {
            Ok(mut c) => {
                c.sort();
                Ok(c)
            }
            Err(ZkClientError::NoNode) => Ok(Vec::new()),
            Err(e) => Err(ZkError::Request {
                path: path.into(),
                reason: e.to_string(),
            }),
        }
    }

    async fn data(&self, path: &str) -> Result<Option<(Vec<u8>, i32)>, ZkError> {
        match self.client.get_data(path).await {
            Ok((data, stat)) => Ok(Some((data, stat.version))),
            Err(ZkClientError::NoNode) => Ok(None),
            Err(e) => Err(ZkError::Request {
                path: path.into(),
                reason: e.to_string(),
            }),
        }
    }

    /// Registered and known bookies.
    pub async fn bookies(&self) -> Result<Bookies, ZkError> {
        let mut writable = self.children(&self.path("available")).await?;
        writable.retain(|b| b != "readonly");
        Ok(Bookies {
            writable,
            read_only: self.children(&self.path("available/readonly")).await?,
            cookies: self.children(&self.path("cookies")).await?,
        })
    }

    /// Every ledger id under the root, ascending.
    pub async fn ledger_ids(&self) -> Result<Vec<i64>, ZkError> {
        let mut ids = Vec::new();
        let mut stack = vec![(self.root.clone(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            for child in self
                .children(if dir.is_empty() { "/" } else { &dir })
                .await?
            {
                let path = format!("{dir}/{child}");
                if child.starts_with('L') {
                    ids.extend(paths::ledger_id(&self.root, &path));
                } else if depth + 1 < MAX_DEPTH
                    && !child.is_empty()
                    && child.bytes().all(|b| b.is_ascii_digit())
                {
                    stack.push((path, depth + 1));
                }
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// A ledger's metadata and its znode version; `None` when the ledger is gone.
    pub async fn ledger(&self, id: i64) -> Result<Option<(LedgerMetadata, i32)>, ZkError> {
        let path = paths::ledger_path(&self.root, id).ok_or_else(|| ZkError::Request {
            path: format!("ledger {id}"),
            reason: "negative ledger id".into(),
        })?;
        let Some((bytes, version)) = self.data(&path).await? else {
            return Ok(None);
        };
        let metadata =
            LedgerMetadata::decode(&bytes).map_err(|source| ZkError::Metadata { path, source })?;
        Ok(Some((metadata, version)))
    }

    /// A ledger's under-replication mark, if it has one.
    pub async fn under_replication_mark(
        &self,
        id: i64,
    ) -> Result<Option<UnderReplicatedMark>, ZkError> {
        let path = paths::under_replication_path(&self.root, id);
        let Some((bytes, _)) = self.data(&path).await? else {
            return Ok(None);
        };
        UnderReplicatedMark::decode(&bytes)
            .map(Some)
            .map_err(|source| ZkError::Mark { path, source })
    }

    /// The session, for writers in tests and tools.
    pub fn client(&self) -> &Client {
        &self.client
    }
}
