//! The node lifecycle tracker: which nodes of a cluster are starting up, active, fenced, in controlled shutdown or
//! gone, and for how long, with O(1) work per event.
//!
//! What it owns:
//! - [`LifecycleTracker`]: fed by any engine's collector (Kafka broker ids, RocketMQ broker names, BookKeeper
//!   bookie `host:port`) through four engine-neutral events: [`register`](LifecycleTracker::register),
//!   [`observe`](LifecycleTracker::observe), [`heartbeat`](LifecycleTracker::heartbeat) and
//!   [`unregister`](LifecycleTracker::unregister).
//! - [`NodeHandle`]: a node resolved once, so that the hot event, the heartbeat, does not hash its key
//!   ([`heartbeat_handle`](LifecycleTracker::heartbeat_handle)).
//! - The metric shapes it reads out: [`LifecycleMetrics`] (the draft KIP's longest-pending startup / controlled
//!   shutdown time and node, counts, KIP-748 fenced / active counts, degraded) whose cardinality does not depend on
//!   the node count, and per node [`NodeLifecycle`] (KIP-1131 `BrokerRegistrationState` code and
//!   `TimeSinceLastHeartbeatReceivedMs`).
//!
//! What it does not do: no I/O, no clock of its own (every call takes `now_ms`, milliseconds since the Unix epoch),
//! no alarms or thresholds (checks decide what "too long" is), no persistence. Like Kafka's controller-side metrics
//! this is soft state: a fresh tracker that first sees an already fenced node calls it a startup.
//!
//! # States and transitions
//! A registration puts a node in [`LifecycleState::Startup`] (fenced, never active since this registration).
//! Startup ends the first time the node is observed active (→ `Active`) or in controlled shutdown
//! (→ `ControlledShutdown`), or when it unregisters. Startup never begins again without a new registration: a node
//! that is fenced after having been active, or after a controlled shutdown, is [`LifecycleState::Fenced`].
//! Controlled shutdown lasts from the first observation of it until the node is gone (unregistered) or is observed
//! active or fenced again. "Gone" is not a state: an unregistered node has no entries at all.
//!
//! Re-registration (a registration event for a node already known): if the node is still in startup it is the same
//! pending startup and its start time is kept, so a node crash-looping during startup keeps growing the longest
//! pending startup instead of hiding it. Otherwise it is a new incarnation and a new startup begins now. Collectors
//! that poll a registration list should therefore call `register` only when a registration appears (or use
//! `observe`, which registers nodes it has not seen).
//!
//! # Node handles
//! Heartbeats are by far the most frequent event: a collector sweeps its whole node list every poll. Keyed by node,
//! each one hashes the key and probes the key map at a random place; at 100 000 nodes that map is larger than a
//! core's L2 cache, so nearly every heartbeat is a cache miss (and a `String` key costs a second one, to compare
//! it), which made a heartbeat several times slower at 100 000 nodes than at 10. Like metric handles in Prometheus
//! clients (resolve the labels once, then `inc()` the handle), a collector resolves each node once with
//! [`handle`](LifecycleTracker::handle) and heartbeats through the [`NodeHandle`] from then on.
//!
//! Nodes live in a slab: a `Vec` of slots (the node's state and since-time, plus a generation), a free list for
//! reuse, and a key → slot index map. Heartbeat times are kept apart in a dense `Vec<u64>` indexed by slot (8 bytes
//! a node: 800 KB for 100 000 nodes), so a heartbeat by handle is a bounds check, a generation compare and one write,
//! and a sweep in registration order walks both arrays sequentially, which the hardware prefetcher follows: the cost
//! does not grow with the node count. [`heartbeat`](LifecycleTracker::heartbeat) by key hashes to the handle and
//! takes the same path.
//!
//! A handle stays valid while its node stays registered (state changes and re-registrations keep its slot).
//! Unregistering a node (or [`clear`](LifecycleTracker::clear)) frees its slot and moves the slot's generation on,
//! so its handles go stale: a heartbeat through one returns `false` and touches nothing, even after the slot is
//! reused for another node or the same key registers again (resolve again). Generations are odd while a slot is
//! occupied and even while it is free, and a slot whose generation would wrap around is retired, so a stale handle
//! can never match again. Nothing of an unregistered node is kept: its entry and heartbeat are cleared with the slot.
//!
//! # Time
//! Transition times are clamped to the latest transition time seen so far, so a clock that steps backwards can
//! never reorder the insertion-ordered pending maps (their front is always the longest pending entry); the cost is
//! that a pending duration started during a backward step is under-reported by at most the size of the step.
//! Heartbeat times are kept per node as the maximum seen. Reads take their own `now_ms` and saturate at zero.

mod pending;
mod slab;
mod tracker;

#[cfg(test)]
mod tests;

use serde::Serialize;

pub use slab::NodeHandle;
pub use tracker::LifecycleTracker;

/// Where a registered node is in its lifecycle. A node that is gone has no state (it is absent from the tracker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleState {
    /// Registered and fenced, never active since this registration.
    Startup = 0,
    /// Unfenced and serving.
    Active = 1,
    /// Fenced after having been active (or after a controlled shutdown).
    Fenced = 2,
    /// In controlled shutdown: leaving on purpose, not yet gone.
    ControlledShutdown = 3,
}

impl LifecycleState {
    /// Every state, in discriminant order.
    pub const ALL: [LifecycleState; 4] = [
        LifecycleState::Startup,
        LifecycleState::Active,
        LifecycleState::Fenced,
        LifecycleState::ControlledShutdown,
    ];

    /// The KIP-1131 `BrokerRegistrationState` code: 10 fenced (startup included), 20 controlled shutdown,
    /// 30 active.
    pub const fn code(self) -> u8 {
        match self {
            LifecycleState::Startup | LifecycleState::Fenced => 10,
            LifecycleState::ControlledShutdown => 20,
            LifecycleState::Active => 30,
        }
    }

    /// Whether the node counts as fenced (KIP-748 `FencedBrokerCount`): startup and fenced.
    pub const fn is_fenced(self) -> bool {
        matches!(self, LifecycleState::Startup | LifecycleState::Fenced)
    }
}

/// What a source reports about a node right now; the tracker derives startup from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedState {
    /// Registered but not serving (Kafka: fenced; RocketMQ: registered but not ready (`brokerReady` false) or silent; BookKeeper: cookie
    /// present but not under `/available`).
    Fenced,
    /// Serving.
    Active,
    /// Shutting down on purpose.
    ControlledShutdown,
}

/// A state change caused by one event. `None` on either side means "not registered".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// The state before the event.
    pub from: Option<LifecycleState>,
    /// The state after the event.
    pub to: Option<LifecycleState>,
}

/// A node that has been pending (in startup or controlled shutdown) the longest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingNode<K> {
    /// The node.
    pub node: K,
    /// How long it has been pending, in milliseconds.
    pub pending_ms: u64,
}

/// The cluster-level lifecycle metrics: a fixed set of fields whatever the number of nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LifecycleMetrics<K> {
    /// The longest pending startup (`LongestPendingStartupTimeMs` / `LongestPendingStartupBroker`).
    pub longest_pending_startup: Option<PendingNode<K>>,
    /// Nodes in startup (`NumberOfBrokersInStartup`).
    pub in_startup: usize,
    /// The longest pending controlled shutdown (`LongestPendingControlledShutdownTimeMs` /
    /// `LongestPendingControlledShutdownBroker`).
    pub longest_pending_controlled_shutdown: Option<PendingNode<K>>,
    /// Nodes in controlled shutdown (KIP-1131 `ControlledShutdownBrokerCount`).
    pub in_controlled_shutdown: usize,
    /// Fenced nodes, startup included (KIP-748 `FencedBrokerCount`).
    pub fenced: usize,
    /// Active nodes (KIP-748 `ActiveBrokerCount`).
    pub active: usize,
    /// Registered nodes (every state).
    pub registered: usize,
    /// At least one node is fenced.
    pub degraded: bool,
}

/// One node's lifecycle as read at some `now_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NodeLifecycle {
    /// Its state.
    pub state: LifecycleState,
    /// The KIP-1131 `BrokerRegistrationState` code of `state` (10, 20 or 30).
    pub registration_state_code: u8,
    /// Milliseconds since it entered `state`.
    pub ms_in_state: u64,
    /// Milliseconds since its last heartbeat (`TimeSinceLastHeartbeatReceivedMs`); `None` if none was received.
    pub ms_since_last_heartbeat: Option<u64>,
}
