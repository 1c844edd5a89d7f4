//! One collection cycle's bookkeeping: which brokers could not be reached (their remaining requests are skipped,
//! so one dead or slow broker costs one timeout, not one per request), which refused mqwatch (TLS, SASL or the
//! client's own settings: recorded once, their remaining requests skipped too, but the broker is up), and which
//! requests were answered badly.

use crate::client::KafkaError;
use futures::StreamExt;
use mqwatch_model::{CollectorErrorRecord, NodeRef, NodeRole};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

/// Shared by every request of one cycle.
#[derive(Default)]
pub(crate) struct Cycle {
    /// Address → why the broker is unreachable this cycle.
    failed: Mutex<HashMap<String, String>>,
    /// Addresses whose requests mqwatch cannot make this cycle: TLS or credentials refused by the broker
    /// (`true`: it spoke), or the client's own settings unusable (`false`).
    refused: Mutex<HashMap<String, bool>>,
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

    /// Runs `request` against `addr` unless the broker already failed this cycle. A connection failure or
    /// timeout marks the broker failed; any other error is recorded as a bad answer.
    pub(crate) async fn ask<T>(
        &self,
        addr: &str,
        request: impl Future<Output = Result<T, KafkaError>>,
    ) -> Option<T> {
        if self.failure(addr).is_some() || self.refused(addr).is_some() {
            return None;
        }
        match request.await {
            Ok(v) => Some(v),
            Err(e) => {
                self.record(e);
                None
            }
        }
    }

    /// Records a failed request (the broker is the error's).
    pub(crate) fn record(&self, e: KafkaError) {
        if e.is_unreachable() {
            if let Ok(mut f) = self.failed.lock() {
                f.entry(e.broker.clone())
                    .or_insert_with(|| format!("{}: {}", e.request(), e.kind));
            }
            return;
        }
        if e.is_refusal() {
            let spoke = !matches!(e.kind, crate::client::ErrorKind::Config(_));
            let first = self
                .refused
                .lock()
                .map(|mut r| r.insert(e.broker.clone(), spoke).is_none())
                .unwrap_or(true);
            if first {
                self.bad_answer(e);
            }
            return;
        }
        self.bad_answer(e);
    }

    /// Whether requests to `addr` are refused this cycle: `Some(true)` when the broker refused mqwatch's TLS or
    /// credentials (so it is up), `Some(false)` when the client's settings are unusable.
    pub(crate) fn refused(&self, addr: &str) -> Option<bool> {
        self.refused.lock().ok().and_then(|r| r.get(addr).copied())
    }

    /// Records an error as a bad answer even when it is a timeout (for a request on its own, whose failure says
    /// nothing of the broker's other requests).
    pub(crate) fn bad_answer(&self, e: KafkaError) {
        let node = self
            .nodes
            .lock()
            .ok()
            .and_then(|n| n.get(&e.broker).cloned());
        let node =
            node.unwrap_or_else(|| NodeRef::new(NodeRole::Broker, &e.broker).with_addr(&e.broker));
        if let Ok(mut errors) = self.errors.lock() {
            errors.push(CollectorErrorRecord {
                node: Some(node),
                request: e.request(),
                error: e.kind.to_string(),
            });
        }
    }

    /// Records a problem of the cluster's answers that no one request caused (e.g. a leader missing from the
    /// broker list).
    pub(crate) fn note(&self, node: Option<NodeRef>, request: &str, error: String) {
        if let Ok(mut errors) = self.errors.lock() {
            errors.push(CollectorErrorRecord {
                node,
                request: request.to_string(),
                error,
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

/// Runs `jobs` with at most `concurrency` in flight; results in completion order. Jobs are made as they start,
/// so a lazy iterator of thousands of requests holds only `concurrency` request futures at a time.
pub(crate) async fn bounded<F: Future>(
    jobs: impl IntoIterator<Item = F>,
    concurrency: usize,
) -> Vec<F::Output> {
    futures::stream::iter(jobs)
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}
