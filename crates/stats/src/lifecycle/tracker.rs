//! [`LifecycleTracker`]: the node table, the two pending maps and the per-state counts, kept consistent by every
//! event in O(1). Owns the transition rules documented on the parent module; not the metric shapes.

use std::collections::HashMap;
use std::hash::Hash;

use foldhash::fast::RandomState;

use super::pending::PendingSince;
use super::{LifecycleMetrics, LifecycleState, NodeLifecycle, ObservedState, Transition};

/// The per-node entry: 24 bytes, so the node table stays cache-light.
#[derive(Debug, Clone, Copy)]
struct NodeEntry {
    /// When the node entered `state` (clamped transition time).
    since_ms: u64,
    /// Last heartbeat time + 1; 0 means no heartbeat yet.
    heartbeat_plus_one: u64,
    state: LifecycleState,
}

/// Tracks the lifecycle of the nodes of one cluster. Generic over the node key (`u32` broker ids, broker names,
/// bookie `host:port`, …). See the [module docs](super) for the transition rules.
#[derive(Debug)]
pub struct LifecycleTracker<K> {
    nodes: HashMap<K, NodeEntry, RandomState>,
    startup: PendingSince<K>,
    shutdown: PendingSince<K>,
    /// Nodes per state, indexed by the state's discriminant.
    counts: [usize; 4],
    /// The latest transition time seen: transition times are clamped to it.
    latest_ms: u64,
}

impl<K: Hash + Eq + Clone> Default for LifecycleTracker<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Hash + Eq + Clone> LifecycleTracker<K> {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty tracker with room for `nodes` nodes in its node table.
    pub fn with_capacity(nodes: usize) -> Self {
        Self {
            nodes: HashMap::with_capacity_and_hasher(nodes, RandomState::default()),
            startup: PendingSince::new(),
            shutdown: PendingSince::new(),
            counts: [0; 4],
            latest_ms: 0,
        }
    }

    /// A registration appeared for `node` at `now_ms`. A new node, or a known node that is not in startup (a new
    /// incarnation), enters startup now; a node already in startup keeps its original start and nothing changes.
    /// Returns the state change, if any.
    pub fn register(&mut self, node: &K, now_ms: u64) -> Option<Transition> {
        let now = self.clamp(now_ms);
        let from = self.nodes.get(node).map(|e| e.state);
        match from {
            Some(LifecycleState::Startup) => None,
            Some(from) => {
                self.move_to(node, from, LifecycleState::Startup, now);
                Some(Transition {
                    from: Some(from),
                    to: Some(LifecycleState::Startup),
                })
            }
            None => {
                self.insert_new(node, now);
                Some(Transition {
                    from: None,
                    to: Some(LifecycleState::Startup),
                })
            }
        }
    }

    /// The source reports `node` as `observed` at `now_ms`. A node never registered is registered first (entering
    /// startup at `now_ms`). Fenced keeps a node in startup; otherwise the node moves to the observed state.
    /// Returns the state change, if any (`from: None` when the node was registered by this call).
    pub fn observe(
        &mut self,
        node: &K,
        observed: ObservedState,
        now_ms: u64,
    ) -> Option<Transition> {
        let now = self.clamp(now_ms);
        let from = match self.nodes.get(node) {
            Some(e) => Some(e.state),
            None => {
                self.insert_new(node, now);
                None
            }
        };
        let current = from.unwrap_or(LifecycleState::Startup);
        let to = match (current, observed) {
            (LifecycleState::Startup, ObservedState::Fenced) => LifecycleState::Startup,
            (_, ObservedState::Fenced) => LifecycleState::Fenced,
            (_, ObservedState::Active) => LifecycleState::Active,
            (_, ObservedState::ControlledShutdown) => LifecycleState::ControlledShutdown,
        };
        if to != current {
            self.move_to(node, current, to, now);
        }
        (from != Some(to)).then_some(Transition { from, to: Some(to) })
    }

    /// A heartbeat (or any successful answer) from `node` at `now_ms`. The last heartbeat time never moves
    /// backwards. Returns `false`, changing nothing, if the node is not registered.
    #[inline]
    pub fn heartbeat(&mut self, node: &K, now_ms: u64) -> bool {
        match self.nodes.get_mut(node) {
            Some(e) => {
                e.heartbeat_plus_one = e.heartbeat_plus_one.max(now_ms.saturating_add(1));
                true
            }
            None => false,
        }
    }

    /// `node` is gone at `now_ms`: every entry for it is removed (node table, pending maps, counts). Returns the
    /// state it left, or `None` if it was not registered.
    pub fn unregister(&mut self, node: &K, now_ms: u64) -> Option<Transition> {
        self.clamp(now_ms);
        let entry = self.nodes.remove(node)?;
        self.leave(node, entry.state);
        Some(Transition {
            from: Some(entry.state),
            to: None,
        })
    }

    /// Forgets every node (e.g. when the cluster is removed from the watch list).
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.startup.clear();
        self.shutdown.clear();
        self.counts = [0; 4];
    }

    /// The cluster-level metrics at `now_ms`: O(1), clones at most two keys.
    pub fn metrics(&self, now_ms: u64) -> LifecycleMetrics<K> {
        let fenced = self.count(LifecycleState::Startup) + self.count(LifecycleState::Fenced);
        LifecycleMetrics {
            longest_pending_startup: self.startup.longest(now_ms),
            in_startup: self.startup.len(),
            longest_pending_controlled_shutdown: self.shutdown.longest(now_ms),
            in_controlled_shutdown: self.shutdown.len(),
            fenced,
            active: self.count(LifecycleState::Active),
            registered: self.nodes.len(),
            degraded: fenced > 0,
        }
    }

    /// One node's lifecycle at `now_ms`, or `None` if it is not registered.
    pub fn node(&self, node: &K, now_ms: u64) -> Option<NodeLifecycle> {
        self.nodes.get(node).map(|e| read(e, now_ms))
    }

    /// Every registered node's lifecycle at `now_ms`, in no particular order.
    pub fn nodes(&self, now_ms: u64) -> impl Iterator<Item = (&K, NodeLifecycle)> + '_ {
        self.nodes.iter().map(move |(k, e)| (k, read(e, now_ms)))
    }

    /// A node's state, or `None` if it is not registered.
    pub fn state(&self, node: &K) -> Option<LifecycleState> {
        self.nodes.get(node).map(|e| e.state)
    }

    /// The number of registered nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node is registered.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of nodes in `state`.
    pub fn count(&self, state: LifecycleState) -> usize {
        self.counts[state as usize]
    }

    /// Clamps a transition time to the latest one seen and records it.
    fn clamp(&mut self, now_ms: u64) -> u64 {
        self.latest_ms = self.latest_ms.max(now_ms);
        self.latest_ms
    }

    fn insert_new(&mut self, node: &K, now: u64) {
        self.nodes.insert(
            node.clone(),
            NodeEntry {
                since_ms: now,
                heartbeat_plus_one: 0,
                state: LifecycleState::Startup,
            },
        );
        self.enter(node, LifecycleState::Startup, now);
    }

    /// Moves a registered node from `from` (its current state) to `to` (different) at `now`.
    fn move_to(&mut self, node: &K, from: LifecycleState, to: LifecycleState, now: u64) {
        self.leave(node, from);
        self.enter(node, to, now);
        if let Some(e) = self.nodes.get_mut(node) {
            e.state = to;
            e.since_ms = now;
        }
    }

    fn enter(&mut self, node: &K, state: LifecycleState, now: u64) {
        self.counts[state as usize] += 1;
        match state {
            LifecycleState::Startup => self.startup.enter(node, now),
            LifecycleState::ControlledShutdown => self.shutdown.enter(node, now),
            LifecycleState::Active | LifecycleState::Fenced => {}
        }
    }

    fn leave(&mut self, node: &K, state: LifecycleState) {
        self.counts[state as usize] -= 1;
        match state {
            LifecycleState::Startup => self.startup.leave(node),
            LifecycleState::ControlledShutdown => self.shutdown.leave(node),
            LifecycleState::Active | LifecycleState::Fenced => {}
        }
    }
}

fn read(e: &NodeEntry, now_ms: u64) -> NodeLifecycle {
    NodeLifecycle {
        state: e.state,
        registration_state_code: e.state.code(),
        ms_in_state: now_ms.saturating_sub(e.since_ms),
        ms_since_last_heartbeat: e
            .heartbeat_plus_one
            .checked_sub(1)
            .map(|hb| now_ms.saturating_sub(hb)),
    }
}
