//! mqwatch-state: what mqwatch remembers about a cluster between cycles, in memory.
//!
//! What it owns: [`ClusterState`] — the node lifecycle tracker fed from each snapshot's registrations and answers,
//! the [`Traffic`] windows fed from offset growth, the [`Positions`] windows of each group's commits (for
//! `consumer_lag_status`), since when each partition is under-replicated ([`UnderReplicatedSince`]),
//! the first-seen time of every finding that is still present, and the previous snapshot (for checks that measure
//! growth). Collectors fill snapshots; this crate turns a stream of them into state; checks read it.
//!
//! What it is not: no I/O (the state directory and the store persist what must survive a restart), no judging.

mod positions;
mod traffic;

pub use positions::{DEFAULT_WINDOW, Positions, UnderReplicatedSince};
pub use traffic::{ProducedSince, RankedTopic, Traffic, TrafficReport};

use mqwatch_model::{ClusterSnapshot, Finding, FindingKey, NodeRef, NodeRole, ObservedNodeState};
use mqwatch_stats::lifecycle::{LifecycleTracker, ObservedState};
use std::collections::HashMap;

/// One cluster's state.
#[derive(Default)]
pub struct ClusterState {
    /// Lifecycle of every registered broker, controller and bookie.
    pub lifecycle: LifecycleTracker<NodeRef>,
    /// Traffic windows; shared, so a timer can tick them while collections feed them.
    pub traffic: std::sync::Arc<Traffic>,
    /// Each group's recent committed positions per log.
    pub positions: Positions,
    /// Since when each partition is under-replicated.
    pub under_replicated: UnderReplicatedSince,
    first_seen: HashMap<FindingKey, u64>,
    previous: Option<ClusterSnapshot>,
}

/// Whether nodes of this role have a registration lifecycle (name servers and hosts do not).
fn has_lifecycle(role: NodeRole) -> bool {
    matches!(
        role,
        NodeRole::Broker | NodeRole::Controller | NodeRole::Bookie
    )
}

impl ClusterState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty state whose traffic goes into `traffic` (shared with whoever ticks and reads it).
    pub fn with_traffic(traffic: std::sync::Arc<Traffic>) -> Self {
        Self {
            traffic,
            ..Self::default()
        }
    }

    /// Feeds the lifecycle tracker and the traffic windows from `snapshot` (at its `taken_at_ms`): registrations
    /// become observations, nodes no longer registered are unregistered, a node that answered counts as a
    /// heartbeat, offset growth since the previous snapshot is traffic, committed positions join their windows
    /// and under-replicated partitions keep (or start) their since-time. Returns the messages produced per topic
    /// since the previous look, from that offset growth.
    pub fn observe(&mut self, snapshot: &ClusterSnapshot) -> ProducedSince {
        let produced = self.traffic.feed(snapshot);
        self.positions.feed(snapshot);
        self.under_replicated.feed(snapshot);
        let now = snapshot.taken_at_ms;
        for n in snapshot.nodes.iter().filter(|n| has_lifecycle(n.node.role)) {
            let observed = match n.registration {
                None => None,
                Some(ObservedNodeState::Unregistered) => {
                    self.lifecycle.unregister(&n.node, now);
                    None
                }
                Some(ObservedNodeState::Fenced) => Some(ObservedState::Fenced),
                Some(ObservedNodeState::Active | ObservedNodeState::ReadOnly) => {
                    Some(ObservedState::Active)
                }
                Some(ObservedNodeState::ControlledShutdown) => {
                    Some(ObservedState::ControlledShutdown)
                }
            };
            if let Some(o) = observed {
                self.lifecycle.observe(&n.node, o, now);
                if n.answered {
                    self.lifecycle.heartbeat(&n.node, now);
                }
            }
        }
        produced
    }

    /// Gives each finding the time its key was first seen (its own time when new), and forgets keys no longer
    /// found, so a condition that clears and comes back starts afresh.
    pub fn stamp(&mut self, mut findings: Vec<Finding>) -> Vec<Finding> {
        let mut seen = HashMap::with_capacity(findings.len());
        for f in &mut findings {
            let key = f.key();
            let first = self
                .first_seen
                .get(&key)
                .copied()
                .unwrap_or(f.first_seen_ms)
                .min(f.first_seen_ms);
            f.first_seen_ms = first;
            seen.insert(key, first);
        }
        self.first_seen = seen;
        findings
    }

    /// The snapshot of the cycle before, if any.
    pub fn previous(&self) -> Option<&ClusterSnapshot> {
        self.previous.as_ref()
    }

    /// Keeps `snapshot` as the previous one for the next cycle.
    pub fn keep(&mut self, snapshot: ClusterSnapshot) {
        self.previous = Some(snapshot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{Engine, FindingKind, NodeStatus, Subject};
    use mqwatch_stats::lifecycle::LifecycleState;

    fn snap(at: u64, nodes: Vec<(&str, Option<ObservedNodeState>, bool)>) -> ClusterSnapshot {
        ClusterSnapshot {
            cluster: "c".into(),
            taken_at_ms: at,
            nodes: nodes
                .into_iter()
                .map(|(name, registration, answered)| NodeStatus {
                    node: NodeRef::new(NodeRole::Broker, name),
                    registration,
                    expected: false,
                    answered,
                    error: None,
                    last_answer_ms: None,
                    replica_of: None,
                    store_max_offset: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn snapshots_drive_the_lifecycle() {
        let mut s = ClusterState::new();
        let a = NodeRef::new(NodeRole::Broker, "a:0");
        s.observe(&snap(
            1_000,
            vec![("a:0", Some(ObservedNodeState::Fenced), true)],
        ));
        assert_eq!(s.lifecycle.state(&a), Some(LifecycleState::Startup));
        s.observe(&snap(
            61_000,
            vec![("a:0", Some(ObservedNodeState::Fenced), false)],
        ));
        let m = s.lifecycle.metrics(61_000);
        assert_eq!(
            m.longest_pending_startup.map(|p| p.pending_ms),
            Some(60_000)
        );
        assert_eq!(
            s.lifecycle
                .node(&a, 61_000)
                .and_then(|n| n.ms_since_last_heartbeat),
            Some(60_000)
        );
        s.observe(&snap(
            62_000,
            vec![("a:0", Some(ObservedNodeState::Active), true)],
        ));
        assert_eq!(s.lifecycle.state(&a), Some(LifecycleState::Active));
        s.observe(&snap(
            63_000,
            vec![("a:0", Some(ObservedNodeState::Unregistered), false)],
        ));
        assert_eq!(s.lifecycle.state(&a), None);
        assert!(s.lifecycle.is_empty());
    }

    #[test]
    fn findings_keep_their_first_seen_until_they_clear() {
        let mut s = ClusterState::new();
        let f = |at| {
            Finding::new(
                FindingKind::Backlog,
                "c",
                Engine::Rocketmq,
                Subject::Cluster,
                "x",
                at,
            )
        };
        assert_eq!(s.stamp(vec![f(10)])[0].first_seen_ms, 10);
        assert_eq!(s.stamp(vec![f(20)])[0].first_seen_ms, 10);
        assert!(s.stamp(vec![]).is_empty());
        assert_eq!(s.stamp(vec![f(30)])[0].first_seen_ms, 30);
    }
}
