//! Node lifecycle findings read off the lifecycle tracker: `startup_pending` (registered, never yet serving, for
//! longer than the threshold), `controlled_shutdown_pending` (leaving for too long) and `node_fenced` (fenced
//! after having served).

use crate::LifecycleThresholds;
use mqwatch_model::{Engine, Evidence, Finding, FindingKind, NodeRef, Subject};
use mqwatch_stats::lifecycle::{LifecycleState, LifecycleTracker, NodeLifecycle};

/// The finding kind a node's lifecycle calls for, if any.
pub fn kind_for(n: &NodeLifecycle, t: &LifecycleThresholds) -> Option<FindingKind> {
    match n.state {
        LifecycleState::Startup if n.ms_in_state > t.startup.as_millis() => {
            Some(FindingKind::StartupPending)
        }
        LifecycleState::ControlledShutdown if n.ms_in_state > t.controlled_shutdown.as_millis() => {
            Some(FindingKind::ControlledShutdownPending)
        }
        LifecycleState::Fenced => Some(FindingKind::NodeFenced),
        _ => None,
    }
}

/// One finding per node whose lifecycle calls for one.
pub fn check(
    cluster: &str,
    engine: Engine,
    tracker: &LifecycleTracker<NodeRef>,
    t: &LifecycleThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = tracker
        .nodes(now_ms)
        .filter_map(|(node, n)| {
            let kind = kind_for(&n, t)?;
            let what = match kind {
                FindingKind::StartupPending => "has been starting up (registered, not serving)",
                FindingKind::ControlledShutdownPending => "has been in controlled shutdown",
                _ => "has been fenced",
            };
            let message = format!("{node} {what} for {} s", n.ms_in_state / 1000);
            let evidence = Evidence::new()
                .with("state", format!("{:?}", n.state))
                .with("registration_state_code", n.registration_state_code)
                .with("ms_in_state", n.ms_in_state)
                .with("ms_since_last_heartbeat", n.ms_since_last_heartbeat);
            let subject = Subject::Node { node: node.clone() };
            Some(
                Finding::new(kind, cluster, engine, subject, message, now_ms)
                    .with_evidence(evidence),
            )
        })
        .collect();
    out.sort_by(|a, b| a.subject.cmp(&b.subject));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{NodeRole, Span};
    use mqwatch_stats::lifecycle::ObservedState;

    #[test]
    fn long_startups_and_fenced_nodes_are_found() {
        let t = LifecycleThresholds {
            startup: Span::from_secs(60),
            controlled_shutdown: Span::from_secs(60),
        };
        let mut tr = LifecycleTracker::new();
        let (a, b, c) = (
            NodeRef::new(NodeRole::Broker, "a"),
            NodeRef::new(NodeRole::Broker, "b"),
            NodeRef::new(NodeRole::Broker, "c"),
        );
        tr.register(&a, 0);
        tr.register(&b, 50_000);
        tr.observe(&c, ObservedState::Active, 0);
        tr.observe(&c, ObservedState::Fenced, 1_000);
        let f = check("k", Engine::Kafka, &tr, &t, 100_000);
        let got: Vec<(FindingKind, String)> =
            f.iter().map(|f| (f.kind, f.subject.to_string())).collect();
        assert_eq!(
            got,
            vec![
                (FindingKind::StartupPending, "broker a".into()),
                (FindingKind::NodeFenced, "broker c".into())
            ]
        );
        assert_eq!(
            f[0].evidence.get("registration_state_code"),
            Some(&serde_json::json!(10))
        );
    }
}
