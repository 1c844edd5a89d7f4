//! An insertion-ordered "pending since" map: node → the time it started pending. Owns only the ordering invariant
//! (front = oldest); the tracker decides when entries come and go and clamps the times it inserts.

use std::hash::Hash;

use foldhash::fast::RandomState;
use hashlink::LinkedHashMap;

use super::PendingNode;

/// Nodes pending since some time, oldest first. Insertions must come in non-decreasing time order (the tracker
/// guarantees it by clamping), so the front is always the longest pending entry: every operation is O(1).
#[derive(Debug)]
pub(super) struct PendingSince<K> {
    map: LinkedHashMap<K, u64, RandomState>,
}

impl<K: Hash + Eq + Clone> PendingSince<K> {
    pub(super) fn new() -> Self {
        Self {
            map: LinkedHashMap::with_hasher(RandomState::default()),
        }
    }

    /// Starts pending at `since_ms` unless already pending (then the original start is kept).
    pub(super) fn enter(&mut self, node: &K, since_ms: u64) {
        debug_assert!(self.map.back().is_none_or(|(_, &last)| last <= since_ms));
        if !self.map.contains_key(node) {
            self.map.insert(node.clone(), since_ms);
        }
    }

    /// Stops pending; a node that was not pending is ignored.
    pub(super) fn leave(&mut self, node: &K) {
        self.map.remove(node);
    }

    /// The longest pending node and for how long, at `now_ms` (saturating at zero).
    pub(super) fn longest(&self, now_ms: u64) -> Option<PendingNode<K>> {
        self.map.front().map(|(node, &since)| PendingNode {
            node: node.clone(),
            pending_ms: now_ms.saturating_sub(since),
        })
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    pub(super) fn clear(&mut self) {
        self.map.clear();
    }
}
