//! The node slab: where the tracker keeps each registered node's entry, addressed by slot index, and the
//! [`NodeHandle`]s that address it without hashing. Owns slot allocation and reuse, generations (what makes a handle
//! stale) and the dense per-slot heartbeat array; not the key → slot map or the transition rules (the tracker's).

use super::LifecycleState;

/// A resolved node of one [`LifecycleTracker`](super::LifecycleTracker): its slot index and the generation of the
/// registration it was resolved for. Get one with [`handle`](super::LifecycleTracker::handle), then heartbeat
/// through [`heartbeat_handle`](super::LifecycleTracker::heartbeat_handle) without hashing the key.
///
/// A handle stays valid for as long as its node stays registered (state changes and re-registrations included). It
/// goes stale when the node is unregistered or the tracker is cleared, and stays stale for good, even when the same
/// key registers again and is given the same slot: resolve the key again. A handle is meaningful only to the tracker
/// that issued it (like an index into a `Vec`): given to another tracker it may address another node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeHandle {
    index: u32,
    generation: u32,
}

impl NodeHandle {
    /// The node's slot index. Slots are dense (below the highest number of nodes registered at once) and are
    /// reused after an unregistration, so a collector may index its own per-node arrays by it.
    pub const fn index(self) -> u32 {
        self.index
    }
}

/// The per-node entry kept in a slot; the heartbeat time lives in the slab's dense array instead.
#[derive(Debug, Clone, Copy)]
pub(super) struct NodeEntry {
    /// When the node entered `state` (clamped transition time).
    pub(super) since_ms: u64,
    pub(super) state: LifecycleState,
}

/// A slot: 16 bytes. Its generation is odd while it holds a node and even while it is free, so a handle (always
/// issued with an odd generation) can never match a free slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    entry: NodeEntry,
    generation: u32,
}

const VACANT: NodeEntry = NodeEntry {
    since_ms: 0,
    state: LifecycleState::Startup,
};

/// Node entries in reusable slots.
#[derive(Debug)]
pub(super) struct Slab {
    slots: Vec<Slot>,
    /// Per slot, the last heartbeat time + 1 (0: none yet, or the slot is free). 8 bytes a node, apart from the
    /// slots, so a sweep of heartbeats streams through one small array.
    heartbeats: Vec<u64>,
    /// Free slot indices, reused last freed first.
    free: Vec<u32>,
}

impl Slab {
    pub(super) fn with_capacity(nodes: usize) -> Self {
        Self {
            slots: Vec::with_capacity(nodes),
            heartbeats: Vec::with_capacity(nodes),
            free: Vec::new(),
        }
    }

    /// Puts `entry` in a free slot (or a new one) with no heartbeat. `None` only when all 2^32 slot indices are
    /// taken.
    pub(super) fn insert(&mut self, entry: NodeEntry) -> Option<u32> {
        if let Some(index) = self.free.pop() {
            let i = index as usize;
            // A free slot holds nothing (`remove` cleared its entry and heartbeat); only its generation moves on.
            if let Some(slot) = self.slots.get_mut(i) {
                slot.generation = slot.generation.wrapping_add(1);
                slot.entry = entry;
                return Some(index);
            }
        }
        let index = u32::try_from(self.slots.len()).ok()?;
        self.slots.push(Slot {
            entry,
            generation: 1,
        });
        self.heartbeats.push(0);
        Some(index)
    }

    /// Frees an occupied slot: its generation moves on (every handle to it goes stale) and nothing of the node is
    /// kept. A slot whose generation would wrap around is retired instead of reused, so an old handle can never
    /// match again. Returns the entry it held, `None` if the slot was not occupied.
    pub(super) fn remove(&mut self, index: u32) -> Option<NodeEntry> {
        let i = index as usize;
        let slot = self.slots.get_mut(i).filter(|s| s.generation % 2 == 1)?;
        let entry = slot.entry;
        slot.entry = VACANT;
        slot.generation = slot.generation.wrapping_add(1);
        if slot.generation != 0 {
            self.free.push(index);
        }
        if let Some(hb) = self.heartbeats.get_mut(i) {
            *hb = 0;
        }
        Some(entry)
    }

    /// Frees every occupied slot (every handle goes stale).
    pub(super) fn clear(&mut self) {
        for index in 0..self.slots.len() {
            // Indices of existing slots fit in u32 (see `insert`).
            if let Ok(index) = u32::try_from(index) {
                self.remove(index);
            }
        }
    }

    /// The handle of occupied slot `index`.
    pub(super) fn handle(&self, index: u32) -> Option<NodeHandle> {
        self.slots
            .get(index as usize)
            .filter(|s| s.generation % 2 == 1)
            .map(|s| NodeHandle {
                index,
                generation: s.generation,
            })
    }

    pub(super) fn entry(&self, index: u32) -> Option<&NodeEntry> {
        self.slots
            .get(index as usize)
            .filter(|s| s.generation % 2 == 1)
            .map(|s| &s.entry)
    }

    pub(super) fn entry_mut(&mut self, index: u32) -> Option<&mut NodeEntry> {
        self.slots
            .get_mut(index as usize)
            .filter(|s| s.generation % 2 == 1)
            .map(|s| &mut s.entry)
    }

    /// Records a heartbeat at `now_ms` for the node `h` addresses, keeping the maximum. `false`, changing nothing,
    /// if the handle is stale.
    #[inline]
    pub(super) fn heartbeat(&mut self, h: NodeHandle, now_ms: u64) -> bool {
        let i = h.index as usize;
        if self
            .slots
            .get(i)
            .is_none_or(|s| s.generation != h.generation)
        {
            return false;
        }
        match self.heartbeats.get_mut(i) {
            Some(hb) => {
                *hb = (*hb).max(now_ms.saturating_add(1));
                true
            }
            None => false,
        }
    }

    /// The last heartbeat time of slot `index`, `None` if none was received.
    pub(super) fn last_heartbeat(&self, index: u32) -> Option<u64> {
        self.heartbeats
            .get(index as usize)
            .and_then(|hb| hb.checked_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(since_ms: u64) -> NodeEntry {
        NodeEntry {
            since_ms,
            state: LifecycleState::Active,
        }
    }

    #[test]
    fn freed_slots_are_reused_and_old_handles_go_stale() {
        let mut s = Slab::with_capacity(2);
        let a = s.insert(entry(1)).unwrap();
        let b = s.insert(entry(2)).unwrap();
        assert_eq!((a, b), (0, 1));
        let ha = s.handle(a).unwrap();
        assert!(s.heartbeat(ha, 10));
        assert_eq!(s.last_heartbeat(a), Some(10));
        assert_eq!(s.remove(a).map(|e| e.since_ms), Some(1));
        assert_eq!(s.remove(a).map(|e| e.since_ms), None, "already free");
        assert_eq!(s.handle(a), None);
        assert_eq!(s.entry(a).map(|e| e.since_ms), None);
        assert!(!s.heartbeat(ha, 20), "stale handle on a free slot");
        let c = s.insert(entry(3)).unwrap();
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(s.last_heartbeat(c), None, "no heartbeat carried over");
        assert!(!s.heartbeat(ha, 30), "stale handle on a reused slot");
        assert_eq!(s.last_heartbeat(c), None);
        assert!(s.heartbeat(s.handle(c).unwrap(), 40));
        assert_eq!(s.last_heartbeat(c), Some(40));
        assert_eq!(s.last_heartbeat(b), None);
    }

    #[test]
    fn a_slot_whose_generation_would_wrap_is_retired() {
        let mut s = Slab::with_capacity(1);
        let a = s.insert(entry(1)).unwrap();
        s.slots[0].generation = u32::MAX;
        let old = s.handle(a).unwrap();
        assert!(s.remove(a).is_some());
        let b = s.insert(entry(2)).unwrap();
        assert_ne!(b, a, "the wrapped slot is not reused");
        assert!(!s.heartbeat(old, 5));
        assert_eq!(s.handle(a), None);
    }

    #[test]
    fn clear_makes_every_handle_stale() {
        let mut s = Slab::with_capacity(3);
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let index = s.insert(entry(i)).unwrap();
                s.handle(index).unwrap()
            })
            .collect();
        s.clear();
        for i in 0..3 {
            s.insert(entry(10 + i)).unwrap();
        }
        assert!(hs.iter().all(|&h| !s.heartbeat(h, 1)));
        assert_eq!(s.slots.len(), 3, "slots are reused, not grown");
    }
}
