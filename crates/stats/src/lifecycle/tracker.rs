//! [`LifecycleTracker`]: the key → slot map, the node slab, the two pending maps and the per-state counts, kept
//! consistent by every event in O(1). Owns the transition rules documented on the parent module; not the metric
//! shapes, not slot reuse and generations (the slab's).

use std::collections::HashMap;
use std::hash::Hash;

use foldhash::fast::RandomState;

use super::pending::PendingSince;
use super::slab::{NodeEntry, NodeHandle, Slab};
use super::{LifecycleMetrics, LifecycleState, NodeLifecycle, ObservedState, Transition};

/// Tracks the lifecycle of the nodes of one cluster. Generic over the node key (`u32` broker ids, broker names,
/// bookie `host:port`, …). See the [module docs](super) for the transition rules and node handles.
#[derive(Debug)]
pub struct LifecycleTracker<K> {
    /// Key → slot index in `slab`: exactly the registered nodes.
    index: HashMap<K, u32, RandomState>,
    slab: Slab,
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
            index: HashMap::with_capacity_and_hasher(nodes, RandomState::default()),
            slab: Slab::with_capacity(nodes),
            startup: PendingSince::new(),
            shutdown: PendingSince::new(),
            counts: [0; 4],
            latest_ms: 0,
        }
    }

    /// A registration appeared for `node` at `now_ms`. A new node, or a known node that is not in startup (a new
    /// incarnation), enters startup now; a node already in startup keeps its original start and nothing changes.
    /// Returns the state change, if any. A known node keeps its slot, so its handle stays valid.
    pub fn register(&mut self, node: &K, now_ms: u64) -> Option<Transition> {
        let now = self.clamp(now_ms);
        match self.slot_of(node) {
            Some((_, LifecycleState::Startup)) => None,
            Some((index, from)) => {
                self.move_to(node, index, from, LifecycleState::Startup, now);
                Some(Transition {
                    from: Some(from),
                    to: Some(LifecycleState::Startup),
                })
            }
            None => {
                self.insert_new(node, now)?;
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
        let (index, from) = match self.slot_of(node) {
            Some((index, state)) => (index, Some(state)),
            None => (self.insert_new(node, now)?, None),
        };
        let current = from.unwrap_or(LifecycleState::Startup);
        let to = match (current, observed) {
            (LifecycleState::Startup, ObservedState::Fenced) => LifecycleState::Startup,
            (_, ObservedState::Fenced) => LifecycleState::Fenced,
            (_, ObservedState::Active) => LifecycleState::Active,
            (_, ObservedState::ControlledShutdown) => LifecycleState::ControlledShutdown,
        };
        if to != current {
            self.move_to(node, index, current, to, now);
        }
        (from != Some(to)).then_some(Transition { from, to: Some(to) })
    }

    /// The handle of a registered node, for [`heartbeat_handle`](Self::heartbeat_handle); `None` if `node` is not
    /// registered. Resolve once per registration and keep it: it stays valid until the node is unregistered.
    pub fn handle(&self, node: &K) -> Option<NodeHandle> {
        self.index.get(node).and_then(|&i| self.slab.handle(i))
    }

    /// A heartbeat (or any successful answer) from `node` at `now_ms`: hashes `node` to its handle, then as
    /// [`heartbeat_handle`](Self::heartbeat_handle). Returns `false`, changing nothing, if the node is not
    /// registered.
    #[inline]
    pub fn heartbeat(&mut self, node: &K, now_ms: u64) -> bool {
        match self.handle(node) {
            Some(h) => self.heartbeat_handle(h, now_ms),
            None => false,
        }
    }

    /// A heartbeat from the node `handle` addresses, at `now_ms`: O(1) without hashing (a bounds check, a
    /// generation compare and one write to the dense heartbeat array). The last heartbeat time never moves
    /// backwards. Returns `false`, changing nothing, if the handle is stale (its node was unregistered since).
    #[inline]
    pub fn heartbeat_handle(&mut self, handle: NodeHandle, now_ms: u64) -> bool {
        self.slab.heartbeat(handle, now_ms)
    }

    /// `node` is gone at `now_ms`: every entry for it is removed (key map, slot, heartbeat, pending maps, counts)
    /// and its handles go stale. Returns the state it left, or `None` if it was not registered.
    pub fn unregister(&mut self, node: &K, now_ms: u64) -> Option<Transition> {
        self.clamp(now_ms);
        let index = self.index.remove(node)?;
        let entry = self.slab.remove(index)?;
        self.leave(node, entry.state);
        Some(Transition {
            from: Some(entry.state),
            to: None,
        })
    }

    /// Forgets every node (e.g. when the cluster is removed from the watch list); every handle goes stale.
    pub fn clear(&mut self) {
        self.index.clear();
        self.slab.clear();
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
            registered: self.index.len(),
            degraded: fenced > 0,
        }
    }

    /// One node's lifecycle at `now_ms`, or `None` if it is not registered.
    pub fn node(&self, node: &K, now_ms: u64) -> Option<NodeLifecycle> {
        self.index.get(node).and_then(|&i| self.read(i, now_ms))
    }

    /// Every registered node's lifecycle at `now_ms`, in no particular order.
    pub fn nodes(&self, now_ms: u64) -> impl Iterator<Item = (&K, NodeLifecycle)> + '_ {
        self.index
            .iter()
            .filter_map(move |(k, &i)| Some((k, self.read(i, now_ms)?)))
    }

    /// A node's state, or `None` if it is not registered.
    pub fn state(&self, node: &K) -> Option<LifecycleState> {
        self.slot_of(node).map(|(_, state)| state)
    }

    /// The number of registered nodes.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no node is registered.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
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

    /// A registered node's slot index and state.
    fn slot_of(&self, node: &K) -> Option<(u32, LifecycleState)> {
        let &index = self.index.get(node)?;
        self.slab.entry(index).map(|e| (index, e.state))
    }

    /// Registers a node not yet known in startup at `now`; `None` (nothing registered) only if the slab has no
    /// slot index left.
    fn insert_new(&mut self, node: &K, now: u64) -> Option<u32> {
        let index = self.slab.insert(NodeEntry {
            since_ms: now,
            state: LifecycleState::Startup,
        })?;
        self.index.insert(node.clone(), index);
        self.enter(node, LifecycleState::Startup, now);
        Some(index)
    }

    /// Moves a registered node from `from` (its current state) to `to` (different) at `now`.
    fn move_to(
        &mut self,
        node: &K,
        index: u32,
        from: LifecycleState,
        to: LifecycleState,
        now: u64,
    ) {
        self.leave(node, from);
        self.enter(node, to, now);
        if let Some(e) = self.slab.entry_mut(index) {
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

    /// The lifecycle of occupied slot `index` at `now_ms`.
    fn read(&self, index: u32, now_ms: u64) -> Option<NodeLifecycle> {
        let e = self.slab.entry(index)?;
        Some(NodeLifecycle {
            state: e.state,
            registration_state_code: e.state.code(),
            ms_in_state: now_ms.saturating_sub(e.since_ms),
            ms_since_last_heartbeat: self
                .slab
                .last_heartbeat(index)
                .map(|hb| now_ms.saturating_sub(hb)),
        })
    }
}
