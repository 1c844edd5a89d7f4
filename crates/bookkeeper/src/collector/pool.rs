//! The collector's side of the bookies: a small connection pool per bookie and the memory of bookies that did
//! not answer. A [`BookieClient`] carries one request at a time, so each bookie gets up to
//! [`CONNECTIONS_PER_BOOKIE`] connections: an idle one is reused, a new one opened while under the cap, otherwise
//! the request waits for one. A connection that failed is dropped; a reused one that failed at once (not by
//! timing out: the bookie closed it while idle, e.g. after a restart) is retried once on a fresh connection. A
//! bookie that could not be reached or did not answer in time is remembered, and later requests get
//! `Unreachable` without being sent, until a probe finds it answering.

use crate::bookie::{BookieClient, BookieError, Holdings};
use mqwatch_model::BookieAnswer;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Connections open to one bookie at most.
pub const CONNECTIONS_PER_BOOKIE: usize = 4;

const LIST: &str = "GET_LIST_OF_ENTRIES_OF_LEDGER";

/// One bookie's connections.
struct Slot {
    /// One permit per connection that may be in use.
    permits: Semaphore,
    /// Connections that answered their last request and wait for the next.
    idle: Mutex<Vec<BookieClient>>,
}

/// Connections to every bookie asked so far, and the bookies that did not answer.
pub(super) struct BookiePool {
    timeout: Duration,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    unreachable: Mutex<BTreeMap<String, String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why `bookie` cannot be addressed, when it is not `host:port`.
pub(super) fn not_an_address(bookie: &str) -> Option<String> {
    let ok = bookie
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0));
    (!ok).then(|| {
        format!("the bookie id {bookie:?} is not host:port, and mqwatch does not resolve other ids")
    })
}

impl BookiePool {
    /// A pool whose connects and requests each give up after `timeout`.
    pub(super) fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            slots: Mutex::new(HashMap::new()),
            unreachable: Mutex::new(BTreeMap::new()),
        }
    }

    fn slot(&self, bookie: &str) -> Arc<Slot> {
        lock(&self.slots)
            .entry(bookie.to_string())
            .or_insert_with(|| {
                Arc::new(Slot {
                    permits: Semaphore::new(CONNECTIONS_PER_BOOKIE),
                    idle: Mutex::new(Vec::new()),
                })
            })
            .clone()
    }

    fn remembered(&self, bookie: &str) -> Option<String> {
        lock(&self.unreachable).get(bookie).cloned()
    }

    /// What `bookie` holds of `ledger`, as an answer: bookie failures are answers, not errors.
    pub(super) async fn entries(&self, bookie: &str, ledger: i64) -> BookieAnswer {
        if let Some(reason) = not_an_address(bookie) {
            return BookieAnswer::Unreachable {
                reason: format!("bookie {bookie}: {LIST}: {reason}"),
            };
        }
        let remembered = |reason: String| BookieAnswer::Unreachable {
            reason: format!("{reason} (remembered: not asked again until a probe succeeds)"),
        };
        if let Some(reason) = self.remembered(bookie) {
            return remembered(reason);
        }
        let slot = self.slot(bookie);
        let _permit = slot
            .permits
            .acquire()
            .await
            .expect("the pool never closes its semaphores");
        // Another request may have found the bookie dead while this one waited for a connection.
        if let Some(reason) = self.remembered(bookie) {
            return remembered(reason);
        }
        match self.request(&slot, bookie, ledger).await {
            Ok(Holdings::Entries(runs)) => BookieAnswer::Entries { runs },
            Ok(Holdings::NoLedger) => BookieAnswer::NoLedger,
            Err(e) => {
                let reason = if e.operation == LIST {
                    e.to_string()
                } else {
                    format!("{LIST} of ledger {ledger}: {e}")
                };
                if e.unreachable {
                    lock(&self.unreachable).insert(bookie.to_string(), reason.clone());
                    BookieAnswer::Unreachable { reason }
                } else {
                    BookieAnswer::Failed { reason }
                }
            }
        }
    }

    /// One request on an idle connection (retried once on a fresh one if the idle one turned out closed) or on a
    /// new connection; the connection goes back to the idle list only after a good answer.
    async fn request(
        &self,
        slot: &Slot,
        bookie: &str,
        ledger: i64,
    ) -> Result<Holdings, BookieError> {
        let reused = lock(&slot.idle).pop();
        if let Some(mut client) = reused {
            let started = Instant::now();
            match client.entries(ledger).await {
                Ok(h) => {
                    lock(&slot.idle).push(client);
                    return Ok(h);
                }
                Err(e) if e.unreachable && started.elapsed() < self.timeout => {}
                Err(e) => return Err(e),
            }
        }
        let mut client = BookieClient::connect(bookie, self.timeout).await?;
        let h = client.entries(ledger).await?;
        lock(&slot.idle).push(client);
        Ok(h)
    }

    /// GET_BOOKIE_INFO on a fresh connection. On success the bookie is forgotten as unreachable and its idle
    /// connections (opened before) are closed; when it cannot be reached it is remembered.
    pub(super) async fn probe(&self, bookie: &str) -> Result<(), BookieError> {
        const INFO: &str = "GET_BOOKIE_INFO";
        if let Some(reason) = not_an_address(bookie) {
            return Err(BookieError {
                bookie: bookie.to_string(),
                operation: INFO,
                reason,
                unreachable: true,
            });
        }
        let result = async {
            let mut client = BookieClient::connect(bookie, self.timeout).await?;
            client.info().await
        }
        .await;
        if let Some(slot) = lock(&self.slots).get(bookie) {
            lock(&slot.idle).clear();
        }
        match result {
            Ok(_) => {
                lock(&self.unreachable).remove(bookie);
                Ok(())
            }
            Err(e) => {
                if e.unreachable {
                    lock(&self.unreachable).insert(bookie.to_string(), e.to_string());
                }
                Err(e)
            }
        }
    }

    /// Bookies remembered as unreachable, with the reason.
    pub(super) fn unreachable(&self) -> BTreeMap<String, String> {
        lock(&self.unreachable).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookie_ids_must_be_host_and_port() {
        for ok in ["10.0.0.1:3181", "bk-0.bk.svc:3181", "[::1]:3181"] {
            assert_eq!(not_an_address(ok), None, "{ok}");
        }
        for bad in ["bookie-0", ":3181", "h:", "h:0", "h:65536", "h:x"] {
            assert!(not_an_address(bad).is_some(), "{bad}");
        }
    }

    #[tokio::test]
    async fn an_unaddressable_bookie_is_unreachable_without_a_request() {
        let pool = BookiePool::new(Duration::from_secs(5));
        match pool.entries("bookie-0", 1).await {
            BookieAnswer::Unreachable { reason } => {
                assert!(
                    reason.contains("bookie-0") && reason.contains(LIST),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(pool.probe("bookie-0").await.is_err());
        assert!(pool.unreachable().is_empty());
    }
}
