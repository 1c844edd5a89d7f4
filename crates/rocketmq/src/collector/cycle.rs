//! One collection cycle's bookkeeping: which nodes failed (their remaining requests are skipped so one dead or
//! slow broker costs one timeout, not one per request), and which requests a node answered badly.

use crate::client::AdminError;
use futures::StreamExt;
use mqwatch_model::{CollectorErrorRecord, NodeRef};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

/// Shared by every request of one cycle.
#[derive(Default)]
pub(crate) struct Cycle {
    /// Address → why the node is unreachable this cycle.
    failed: Mutex<HashMap<String, String>>,
    /// Bad answers.
    errors: Mutex<Vec<CollectorErrorRecord>>,
    /// Address → node, for naming nodes in errors.
    nodes: Mutex<HashMap<String, NodeRef>>,
}

impl Cycle {
    /// Remembers which node an address is.
    pub(crate) fn name(&self, addr: &str, node: NodeRef) {
        if let Ok(mut n) = self.nodes.lock() {
            n.insert(addr.to_string(), node);
        }
    }

    /// Runs `request` against `addr` unless the node already failed this cycle. A connection failure or timeout
    /// marks the node failed; any other error is recorded as a bad answer.
    pub(crate) async fn ask<T>(
        &self,
        addr: &str,
        request: impl Future<Output = Result<T, AdminError>>,
    ) -> Option<T> {
        if self.failure(addr).is_some() {
            return None;
        }
        match request.await {
            Ok(v) => Some(v),
            Err(e) => {
                self.record(addr, e);
                None
            }
        }
    }

    /// Records a failed request.
    pub(crate) fn record(&self, addr: &str, e: AdminError) {
        if e.is_unreachable() {
            if let Ok(mut f) = self.failed.lock() {
                f.entry(addr.to_string())
                    .or_insert_with(|| format!("{}: {}", e.request, e.kind));
            }
            return;
        }
        let node = self.nodes.lock().ok().and_then(|n| n.get(addr).cloned());
        let node = node
            .unwrap_or_else(|| NodeRef::new(mqwatch_model::NodeRole::Broker, addr).with_addr(addr));
        if let Ok(mut errors) = self.errors.lock() {
            errors.push(CollectorErrorRecord {
                node: Some(node),
                request: e.request.to_string(),
                error: e.kind.to_string(),
            });
        }
    }

    /// Why `addr` failed this cycle, if it did.
    pub(crate) fn failure(&self, addr: &str) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.get(addr).cloned())
    }

    /// The bad answers collected.
    pub(crate) fn take_errors(&self) -> Vec<CollectorErrorRecord> {
        self.errors
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }
}

/// Runs `jobs` with at most `concurrency` in flight; results in completion order. The jobs are built into a
/// `Vec` first so the future holds no iterator closures (keeps it `Send` for any lifetime).
pub(crate) async fn bounded<F: Future>(jobs: Vec<F>, concurrency: usize) -> Vec<F::Output> {
    futures::stream::iter(jobs)
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}
