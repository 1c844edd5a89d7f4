//! Unit tests for the lifecycle tracker: the KIP scenarios, re-registration, clamping and removal.

use super::*;

use LifecycleState::{Active, ControlledShutdown, Fenced, Startup};

fn t(from: Option<LifecycleState>, to: Option<LifecycleState>) -> Option<Transition> {
    Some(Transition { from, to })
}

#[test]
fn state_codes_follow_kip_1131() {
    assert_eq!(Startup.code(), 10);
    assert_eq!(Fenced.code(), 10);
    assert_eq!(ControlledShutdown.code(), 20);
    assert_eq!(Active.code(), 30);
    assert!(Startup.is_fenced() && Fenced.is_fenced());
    assert!(!Active.is_fenced() && !ControlledShutdown.is_fenced());
}

#[test]
fn empty_tracker_reports_nothing() {
    let tr = LifecycleTracker::<u32>::new();
    let m = tr.metrics(1_000);
    assert_eq!(m.longest_pending_startup, None);
    assert_eq!(m.longest_pending_controlled_shutdown, None);
    assert_eq!(
        (
            m.in_startup,
            m.in_controlled_shutdown,
            m.fenced,
            m.active,
            m.registered
        ),
        (0, 0, 0, 0, 0)
    );
    assert!(!m.degraded);
    assert!(tr.is_empty());
}

#[test]
fn rolling_startup_reports_the_oldest_pending_broker() {
    let mut tr = LifecycleTracker::new();
    assert_eq!(tr.register(&1u32, 1_000), t(None, Some(Startup)));
    assert_eq!(tr.register(&2, 2_000), t(None, Some(Startup)));
    assert_eq!(tr.register(&3, 3_000), t(None, Some(Startup)));
    let m = tr.metrics(10_000);
    assert_eq!(
        m.longest_pending_startup,
        Some(PendingNode {
            node: 1,
            pending_ms: 9_000
        })
    );
    assert_eq!((m.in_startup, m.fenced, m.active), (3, 3, 0));
    assert!(m.degraded);

    assert_eq!(
        tr.observe(&1, ObservedState::Active, 11_000),
        t(Some(Startup), Some(Active))
    );
    let m = tr.metrics(12_000);
    assert_eq!(
        m.longest_pending_startup,
        Some(PendingNode {
            node: 2,
            pending_ms: 10_000
        })
    );
    assert_eq!((m.in_startup, m.fenced, m.active), (2, 2, 1));

    // Fenced while in startup is still startup.
    assert_eq!(tr.observe(&2, ObservedState::Fenced, 12_000), None);
    tr.observe(&2, ObservedState::Active, 13_000);
    tr.observe(&3, ObservedState::Active, 13_000);
    let m = tr.metrics(14_000);
    assert_eq!(m.longest_pending_startup, None);
    assert_eq!(
        (m.in_startup, m.fenced, m.active, m.degraded),
        (0, 0, 3, false)
    );
}

#[test]
fn fenced_after_active_is_fenced_not_startup() {
    let mut tr = LifecycleTracker::new();
    tr.register(&7u32, 0);
    tr.observe(&7, ObservedState::Active, 10);
    assert_eq!(
        tr.observe(&7, ObservedState::Fenced, 20),
        t(Some(Active), Some(Fenced))
    );
    let m = tr.metrics(30);
    assert_eq!((m.in_startup, m.fenced, m.degraded), (0, 1, true));
    assert_eq!(m.longest_pending_startup, None);
    let n = tr.node(&7, 30).unwrap();
    assert_eq!(
        (n.state, n.registration_state_code, n.ms_in_state),
        (Fenced, 10, 10)
    );
}

#[test]
fn controlled_shutdown_pends_until_gone_or_back() {
    let mut tr = LifecycleTracker::new();
    for b in 0u32..3 {
        tr.register(&b, 0);
        tr.observe(&b, ObservedState::Active, 0);
    }
    assert_eq!(
        tr.observe(&0, ObservedState::ControlledShutdown, 100),
        t(Some(Active), Some(ControlledShutdown))
    );
    // Repeated observations keep the original start.
    assert_eq!(tr.observe(&0, ObservedState::ControlledShutdown, 150), None);
    tr.observe(&1, ObservedState::ControlledShutdown, 200);
    let m = tr.metrics(1_000);
    assert_eq!(
        m.longest_pending_controlled_shutdown,
        Some(PendingNode {
            node: 0,
            pending_ms: 900
        })
    );
    assert_eq!(
        (m.in_controlled_shutdown, m.active, m.fenced, m.degraded),
        (2, 1, 0, false)
    );
    assert_eq!(tr.node(&0, 1_000).unwrap().registration_state_code, 20);

    assert_eq!(tr.unregister(&0, 1_100), t(Some(ControlledShutdown), None));
    let m = tr.metrics(1_200);
    assert_eq!(
        m.longest_pending_controlled_shutdown,
        Some(PendingNode {
            node: 1,
            pending_ms: 1_000
        })
    );
    assert_eq!(m.in_controlled_shutdown, 1);

    // Back to active ends it too.
    tr.observe(&1, ObservedState::Active, 1_300);
    let m = tr.metrics(1_400);
    assert_eq!(m.longest_pending_controlled_shutdown, None);
    assert_eq!(
        (m.in_controlled_shutdown, m.active, m.registered),
        (0, 2, 2)
    );
}

#[test]
fn controlled_shutdown_during_startup_ends_the_startup_for_good() {
    let mut tr = LifecycleTracker::new();
    tr.register(&1u32, 0);
    tr.observe(&1, ObservedState::ControlledShutdown, 50);
    let m = tr.metrics(60);
    assert_eq!(
        (m.in_startup, m.in_controlled_shutdown, m.fenced),
        (0, 1, 0)
    );
    assert_eq!(
        tr.observe(&1, ObservedState::Fenced, 70),
        t(Some(ControlledShutdown), Some(Fenced))
    );
    let m = tr.metrics(80);
    assert_eq!(
        (m.in_startup, m.in_controlled_shutdown, m.fenced),
        (0, 0, 1)
    );
}

#[test]
fn observing_an_unknown_node_registers_it() {
    let mut tr = LifecycleTracker::new();
    assert_eq!(
        tr.observe(&"b1".to_string(), ObservedState::Fenced, 5),
        t(None, Some(Startup))
    );
    assert_eq!(
        tr.metrics(15).longest_pending_startup.unwrap().pending_ms,
        10
    );
    assert_eq!(
        tr.observe(&"b2".to_string(), ObservedState::Active, 5),
        t(None, Some(Active))
    );
    assert_eq!(tr.metrics(15).in_startup, 1);
    assert_eq!(tr.count(Active), 1);
}

#[test]
fn re_registration_rules() {
    let mut tr = LifecycleTracker::new();
    tr.register(&1u32, 100);
    // Still in startup: same pending startup, original start kept.
    assert_eq!(tr.register(&1, 500), None);
    assert_eq!(
        tr.metrics(1_000)
            .longest_pending_startup
            .unwrap()
            .pending_ms,
        900
    );
    // After being active: a new incarnation starts up now, behind older pending startups.
    tr.register(&2, 600);
    tr.observe(&1, ObservedState::Active, 700);
    tr.observe(&1, ObservedState::ControlledShutdown, 800);
    assert_eq!(
        tr.register(&1, 900),
        t(Some(ControlledShutdown), Some(Startup))
    );
    let m = tr.metrics(1_000);
    assert_eq!(
        m.longest_pending_startup,
        Some(PendingNode {
            node: 2,
            pending_ms: 400
        })
    );
    assert_eq!((m.in_startup, m.in_controlled_shutdown), (2, 0));
    tr.unregister(&2, 1_000);
    assert_eq!(
        tr.metrics(1_000).longest_pending_startup,
        Some(PendingNode {
            node: 1,
            pending_ms: 100
        })
    );
}

#[test]
fn heartbeats_are_per_node_and_never_move_back() {
    let mut tr = LifecycleTracker::new();
    assert!(
        !tr.heartbeat(&9u32, 10),
        "unknown nodes are not resurrected by a heartbeat"
    );
    assert!(tr.is_empty());
    tr.register(&9, 0);
    assert_eq!(tr.node(&9, 50).unwrap().ms_since_last_heartbeat, None);
    assert!(tr.heartbeat(&9, 0));
    assert_eq!(tr.node(&9, 50).unwrap().ms_since_last_heartbeat, Some(50));
    tr.heartbeat(&9, 40);
    tr.heartbeat(&9, 30);
    assert_eq!(tr.node(&9, 50).unwrap().ms_since_last_heartbeat, Some(10));
    // A read clock behind the heartbeat saturates at zero.
    assert_eq!(tr.node(&9, 20).unwrap().ms_since_last_heartbeat, Some(0));
    // Heartbeat times near the end of time do not overflow.
    tr.heartbeat(&9, u64::MAX);
    assert_eq!(
        tr.node(&9, u64::MAX).unwrap().ms_since_last_heartbeat,
        Some(1)
    );
}

#[test]
fn a_clock_stepping_back_cannot_reorder_pending_nodes() {
    let mut tr = LifecycleTracker::new();
    tr.register(&1u32, 1_000);
    tr.register(&2, 400); // clamped to 1 000
    let m = tr.metrics(2_000);
    assert_eq!(
        m.longest_pending_startup,
        Some(PendingNode {
            node: 1,
            pending_ms: 1_000
        })
    );
    tr.observe(&1, ObservedState::Active, 1_100);
    assert_eq!(
        tr.metrics(2_000).longest_pending_startup,
        Some(PendingNode {
            node: 2,
            pending_ms: 1_000
        })
    );
    assert_eq!(
        tr.metrics(500).longest_pending_startup.unwrap().pending_ms,
        0
    );
}

#[test]
fn unregister_and_clear_leave_nothing_behind() {
    let mut tr = LifecycleTracker::new();
    tr.register(&1u32, 0);
    tr.register(&2, 0);
    tr.observe(&2, ObservedState::ControlledShutdown, 1);
    tr.register(&3, 0);
    tr.observe(&3, ObservedState::Active, 1);
    tr.heartbeat(&3, 2);
    for b in [1, 2, 3] {
        assert!(tr.unregister(&b, 5).is_some());
        assert_eq!(tr.node(&b, 5), None);
        assert_eq!(tr.state(&b), None);
    }
    assert_eq!(tr.unregister(&1, 6), None);
    let m = tr.metrics(10);
    assert_eq!(m, LifecycleTracker::<u32>::new().metrics(10));
    assert_eq!(tr.nodes(10).count(), 0);
    assert!(LifecycleState::ALL.iter().all(|&s| tr.count(s) == 0));

    tr.register(&4, 20);
    tr.clear();
    assert_eq!(tr.metrics(30), LifecycleTracker::<u32>::new().metrics(30));
}

#[test]
fn nodes_lists_every_node_once() {
    let mut tr = LifecycleTracker::with_capacity(4);
    tr.register(&"a", 0);
    tr.observe(&"b", ObservedState::Active, 0);
    tr.observe(&"c", ObservedState::ControlledShutdown, 0);
    let mut codes: Vec<_> = tr
        .nodes(10)
        .map(|(k, n)| (*k, n.registration_state_code))
        .collect();
    codes.sort();
    assert_eq!(codes, vec![("a", 10), ("b", 30), ("c", 20)]);
}

#[test]
fn handles_survive_state_changes_and_go_stale_with_the_node() {
    let mut tr = LifecycleTracker::new();
    let b1 = "broker-1".to_string();
    let b2 = "broker-2".to_string();
    assert_eq!(tr.handle(&b1), None);
    tr.register(&b1, 0);
    tr.register(&b2, 0);
    let h1 = tr.handle(&b1).unwrap();
    let h2 = tr.handle(&b2).unwrap();
    assert_ne!(h1.index(), h2.index());
    // Same slot through state changes and a re-registration (a new incarnation).
    tr.observe(&b1, ObservedState::Active, 10);
    tr.observe(&b1, ObservedState::ControlledShutdown, 20);
    assert_eq!(
        tr.register(&b1, 30),
        t(Some(ControlledShutdown), Some(Startup))
    );
    assert_eq!(tr.handle(&b1), Some(h1));
    assert!(tr.heartbeat_handle(h1, 40));
    assert!(tr.heartbeat(&b1, 35), "by key: same path, never moves back");
    assert_eq!(tr.node(&b1, 50).unwrap().ms_since_last_heartbeat, Some(10));
    assert_eq!(tr.node(&b2, 50).unwrap().ms_since_last_heartbeat, None);

    // Gone: the handle is stale, also once the slot is reused and once the same key is back.
    tr.unregister(&b1, 60);
    assert!(!tr.heartbeat_handle(h1, 70));
    tr.register(&"broker-3".to_string(), 80);
    let h3 = tr.handle(&"broker-3".to_string()).unwrap();
    assert_eq!(h3.index(), h1.index(), "the freed slot is reused");
    assert!(
        !tr.heartbeat_handle(h1, 90),
        "stale handle on a reused slot"
    );
    assert_eq!(
        tr.node(&"broker-3".to_string(), 100)
            .unwrap()
            .ms_since_last_heartbeat,
        None
    );
    tr.register(&b1, 110);
    let h1_again = tr.handle(&b1).unwrap();
    assert_ne!(h1_again, h1);
    assert!(!tr.heartbeat_handle(h1, 120));
    assert!(tr.heartbeat_handle(h1_again, 120));
    assert_eq!(tr.node(&b1, 130).unwrap().ms_since_last_heartbeat, Some(10));

    tr.clear();
    assert!(
        [h1_again, h2, h3]
            .iter()
            .all(|&h| !tr.heartbeat_handle(h, 140))
    );
    tr.register(&b2, 150);
    assert!(!tr.heartbeat_handle(h2, 160), "stale after clear");
}
