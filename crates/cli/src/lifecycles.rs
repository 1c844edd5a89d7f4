//! Node lifecycles kept in the state directory between `check` runs (`lifecycles/<cluster>.json`): each node's
//! lifecycle state, since when, and its last answer. A one-shot `check` restores them before its cycle and saves
//! them after, so a broker fenced since its registration three runs ago is "in startup for 10 min", not "just
//! seen", and a broker fenced after serving is `node_fenced` rather than a new startup. `serve` keeps the tracker
//! in memory across its cycles, restores it when it starts and saves it after each cycle, so a restart neither
//! resets a pending startup's clock nor forgets a broker that was active.
//!
//! Restoring replays each node's state at its start time, oldest first, through the tracker's own events:
//! startup = fenced observed; active = active observed; fenced = active then fenced; controlled shutdown =
//! controlled shutdown observed; then the last heartbeat.

use crate::state::{StateDir, read_json, write_json};
use anyhow::Result;
use mqwatch_model::NodeRef;
use mqwatch_stats::lifecycle::{LifecycleState, LifecycleTracker, ObservedState};
use serde::{Deserialize, Serialize};

/// One node's lifecycle as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedLifecycle {
    /// The node.
    pub node: NodeRef,
    /// `startup`, `active`, `fenced` or `controlled_shutdown`.
    pub state: String,
    /// When it entered that state (ms since the epoch).
    pub since_ms: u64,
    /// When it last answered, if it has.
    pub last_heartbeat_ms: Option<u64>,
}

fn name(s: LifecycleState) -> &'static str {
    match s {
        LifecycleState::Startup => "startup",
        LifecycleState::Active => "active",
        LifecycleState::Fenced => "fenced",
        LifecycleState::ControlledShutdown => "controlled_shutdown",
    }
}

impl StateDir {
    /// Saves `cluster`'s node lifecycles as they are at `now_ms`.
    pub fn save_lifecycles(
        &self,
        cluster: &str,
        tracker: &LifecycleTracker<NodeRef>,
        now_ms: u64,
    ) -> Result<()> {
        let saved: Vec<SavedLifecycle> = tracker
            .nodes(now_ms)
            .map(|(node, n)| SavedLifecycle {
                node: node.clone(),
                state: name(n.state).to_string(),
                since_ms: now_ms.saturating_sub(n.ms_in_state),
                last_heartbeat_ms: n
                    .ms_since_last_heartbeat
                    .map(|ms| now_ms.saturating_sub(ms)),
            })
            .collect();
        write_json(&self.cluster_path("lifecycles", cluster), &saved)
    }

    /// Replays `cluster`'s saved node lifecycles into `tracker` (nothing when none were saved). A state name
    /// this version does not know is skipped.
    pub fn restore_lifecycles(
        &self,
        cluster: &str,
        tracker: &mut LifecycleTracker<NodeRef>,
    ) -> Result<()> {
        let path = self.cluster_path("lifecycles", cluster);
        let mut saved: Vec<SavedLifecycle> = read_json(&path)?.unwrap_or_default();
        saved.sort_by_key(|s| s.since_ms);
        for s in &saved {
            let replay: &[ObservedState] = match s.state.as_str() {
                "startup" => &[ObservedState::Fenced],
                "active" => &[ObservedState::Active],
                "fenced" => &[ObservedState::Active, ObservedState::Fenced],
                "controlled_shutdown" => &[ObservedState::ControlledShutdown],
                _ => continue,
            };
            for o in replay {
                tracker.observe(&s.node, *o, s.since_ms);
            }
        }
        let mut beats: Vec<(&NodeRef, u64)> = saved
            .iter()
            .filter_map(|s| Some((&s.node, s.last_heartbeat_ms?)))
            .collect();
        beats.sort_by_key(|(_, t)| *t);
        for (node, t) in beats {
            tracker.heartbeat(node, t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::NodeRole;

    #[test]
    fn lifecycles_survive_a_save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::resolve(Some(dir.path()), None).unwrap();
        let b = |n: &str| NodeRef::new(NodeRole::Broker, n).with_addr("h:1");
        let mut t = LifecycleTracker::new();
        t.observe(&b("1"), ObservedState::Fenced, 1_000);
        t.observe(&b("2"), ObservedState::Active, 2_000);
        t.observe(&b("3"), ObservedState::Active, 2_000);
        t.observe(&b("3"), ObservedState::Fenced, 5_000);
        t.observe(&b("4"), ObservedState::ControlledShutdown, 6_000);
        t.heartbeat(&b("2"), 9_000);
        state.save_lifecycles("k", &t, 10_000).unwrap();
        let mut back = LifecycleTracker::new();
        state.restore_lifecycles("k", &mut back).unwrap();
        let rows = |t: &LifecycleTracker<NodeRef>| {
            let mut v: Vec<_> = t.nodes(20_000).map(|(n, l)| (n.clone(), l)).collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        assert_eq!(rows(&back), rows(&t));
        assert_eq!(back.metrics(20_000), t.metrics(20_000));
        // Nothing saved for another cluster: nothing restored.
        let mut none = LifecycleTracker::new();
        state.restore_lifecycles("other", &mut none).unwrap();
        assert!(none.is_empty());
    }
}
