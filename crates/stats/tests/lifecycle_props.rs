//! Property tests for the lifecycle tracker against a naive model that keeps a plain map of nodes and recomputes
//! every metric by scanning: longest pending always equals the max over pending nodes, counts match, per-node reads
//! match, and removal leaves nothing behind. Heartbeats go by key or by node handle (the model does not tell them
//! apart, so the two agree); handles stay valid while their node is registered, go stale when it is unregistered
//! and stay stale after it registers again, and slots are reused.

use std::collections::{BTreeMap, BTreeSet};

use mqwatch_stats::lifecycle::{
    LifecycleState, LifecycleTracker, NodeHandle, ObservedState, Transition,
};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Event {
    Register(u8),
    Observe(u8, ObservedState),
    Heartbeat(u8),
    /// A heartbeat through the handle resolved when the node registered (or, if it is not registered, through a
    /// stale handle of one of its earlier registrations).
    HeartbeatHandle(u8),
    /// A heartbeat through the n-th stale handle (modulo their number), if any.
    StaleHeartbeat(usize),
    Unregister(u8),
}

/// One step: an event, how far the event clock moves (may go backwards), and where the read clock stands
/// relative to the event clock.
type Step = (Event, i64, i64);

#[derive(Debug, Clone, Copy)]
struct ModelNode {
    state: LifecycleState,
    since: u64,
    heartbeat: Option<u64>,
}

#[derive(Default)]
struct Model {
    nodes: BTreeMap<u8, ModelNode>,
    latest: u64,
}

impl Model {
    fn clamp(&mut self, t: u64) -> u64 {
        self.latest = self.latest.max(t);
        self.latest
    }

    fn apply(&mut self, event: Event, t: u64) -> Option<Transition> {
        match event {
            Event::Register(k) => {
                let now = self.clamp(t);
                let from = self.nodes.get(&k).map(|n| n.state);
                if from == Some(LifecycleState::Startup) {
                    return None;
                }
                let heartbeat = self.nodes.get(&k).and_then(|n| n.heartbeat);
                self.nodes.insert(
                    k,
                    ModelNode {
                        state: LifecycleState::Startup,
                        since: now,
                        heartbeat,
                    },
                );
                Some(Transition {
                    from,
                    to: Some(LifecycleState::Startup),
                })
            }
            Event::Observe(k, obs) => {
                let now = self.clamp(t);
                let from = self.nodes.get(&k).map(|n| n.state);
                let node = self.nodes.entry(k).or_insert(ModelNode {
                    state: LifecycleState::Startup,
                    since: now,
                    heartbeat: None,
                });
                let to = match obs {
                    ObservedState::Fenced if node.state == LifecycleState::Startup => {
                        LifecycleState::Startup
                    }
                    ObservedState::Fenced => LifecycleState::Fenced,
                    ObservedState::Active => LifecycleState::Active,
                    ObservedState::ControlledShutdown => LifecycleState::ControlledShutdown,
                };
                if to != node.state {
                    node.state = to;
                    node.since = now;
                }
                (from != Some(to)).then_some(Transition { from, to: Some(to) })
            }
            Event::StaleHeartbeat(_) => None,
            Event::Heartbeat(k) | Event::HeartbeatHandle(k) => {
                if let Some(n) = self.nodes.get_mut(&k) {
                    n.heartbeat = Some(n.heartbeat.map_or(t, |h| h.max(t)));
                }
                None
            }
            Event::Unregister(k) => {
                self.clamp(t);
                self.nodes.remove(&k).map(|n| Transition {
                    from: Some(n.state),
                    to: None,
                })
            }
        }
    }

    fn count(&self, state: LifecycleState) -> usize {
        self.nodes.values().filter(|n| n.state == state).count()
    }

    /// The maximum pending time over nodes in `state`, by scanning.
    fn longest(&self, state: LifecycleState, now: u64) -> Option<u64> {
        self.nodes
            .values()
            .filter(|n| n.state == state)
            .map(|n| now.saturating_sub(n.since))
            .max()
    }
}

fn observed() -> impl Strategy<Value = ObservedState> {
    prop_oneof![
        Just(ObservedState::Fenced),
        Just(ObservedState::Active),
        Just(ObservedState::ControlledShutdown),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    let key = 0u8..10;
    prop_oneof![
        2 => key.clone().prop_map(Event::Register),
        4 => (key.clone(), observed()).prop_map(|(k, o)| Event::Observe(k, o)),
        1 => key.clone().prop_map(Event::Heartbeat),
        2 => key.clone().prop_map(Event::HeartbeatHandle),
        1 => any::<usize>().prop_map(Event::StaleHeartbeat),
        1 => key.prop_map(Event::Unregister),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    // Mostly forward, sometimes backwards (a clock stepping back), sometimes standing still.
    (
        event(),
        prop_oneof![4 => 0i64..500, 1 => -300i64..0, 1 => Just(0i64)],
        -100i64..1_000,
    )
}

/// The handles the test holds: per registered node the one resolved when it registered, and every stale one.
#[derive(Default)]
struct Handles {
    current: BTreeMap<u8, NodeHandle>,
    stale: Vec<(u8, NodeHandle)>,
    /// The most nodes registered at once so far: slots are reused, so no slot index reaches it.
    peak: usize,
}

impl Handles {
    /// Follows registrations of `k`: resolves a handle for a new registration, retires the handle of a gone one.
    fn track(
        &mut self,
        tr: &LifecycleTracker<u8>,
        model: &Model,
        k: u8,
    ) -> Result<(), TestCaseError> {
        let registered = model.nodes.contains_key(&k);
        if registered && !self.current.contains_key(&k) {
            let h = tr.handle(&k);
            prop_assert!(h.is_some());
            if let Some(h) = h {
                prop_assert!(
                    self.stale.iter().all(|&(_, old)| old != h),
                    "a fresh handle equals a stale one"
                );
                self.current.insert(k, h);
            }
        } else if !registered && let Some(h) = self.current.remove(&k) {
            self.stale.push((k, h));
        }
        self.peak = self.peak.max(model.nodes.len());
        Ok(())
    }

    fn check(&self, tr: &LifecycleTracker<u8>, model: &Model) -> Result<(), TestCaseError> {
        let mut indices = BTreeSet::new();
        for k in 0u8..10 {
            let h = tr.handle(&k);
            // Stable across state changes and re-registrations; gone with the node.
            prop_assert_eq!(h, self.current.get(&k).copied(), "handle of {}", k);
            prop_assert_eq!(h.is_some(), model.nodes.contains_key(&k));
            if let Some(h) = h {
                prop_assert!(
                    (h.index() as usize) < self.peak.max(1),
                    "slot {} not reused",
                    h.index()
                );
                prop_assert!(
                    indices.insert(h.index()),
                    "two nodes share slot {}",
                    h.index()
                );
            }
        }
        Ok(())
    }
}

fn check(tr: &LifecycleTracker<u8>, model: &Model, now: u64) -> Result<(), TestCaseError> {
    let m = tr.metrics(now);
    for (state, reported, len) in [
        (
            LifecycleState::Startup,
            &m.longest_pending_startup,
            m.in_startup,
        ),
        (
            LifecycleState::ControlledShutdown,
            &m.longest_pending_controlled_shutdown,
            m.in_controlled_shutdown,
        ),
    ] {
        prop_assert_eq!(len, model.count(state));
        let expected = model.longest(state, now);
        prop_assert_eq!(reported.as_ref().map(|p| p.pending_ms), expected);
        if let Some(p) = reported {
            // The reported node is one of the pending nodes, and it is (one of) the longest.
            let n = model.nodes.get(&p.node);
            prop_assert_eq!(n.map(|n| n.state), Some(state));
            prop_assert_eq!(n.map(|n| now.saturating_sub(n.since)), expected);
        }
    }
    let fenced = model.count(LifecycleState::Startup) + model.count(LifecycleState::Fenced);
    prop_assert_eq!(m.fenced, fenced);
    prop_assert_eq!(m.active, model.count(LifecycleState::Active));
    prop_assert_eq!(m.registered, model.nodes.len());
    prop_assert_eq!(m.degraded, fenced >= 1);
    prop_assert_eq!(tr.len(), model.nodes.len());
    for s in LifecycleState::ALL {
        prop_assert_eq!(tr.count(s), model.count(s));
    }
    for k in 0u8..10 {
        let got = tr.node(&k, now);
        let want = model.nodes.get(&k);
        prop_assert_eq!(got.is_some(), want.is_some());
        if let (Some(got), Some(want)) = (got, want) {
            prop_assert_eq!(got.state, want.state);
            prop_assert_eq!(got.registration_state_code, want.state.code());
            prop_assert_eq!(got.ms_in_state, now.saturating_sub(want.since));
            prop_assert_eq!(
                got.ms_since_last_heartbeat,
                want.heartbeat.map(|h| now.saturating_sub(h))
            );
        }
    }
    prop_assert_eq!(tr.nodes(now).count(), model.nodes.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tracker_matches_a_scanning_model(steps in prop::collection::vec(step(), 1..150)) {
        let mut tr = LifecycleTracker::<u8>::new();
        let mut model = Model::default();
        let mut handles = Handles::default();
        let mut t: u64 = 1_000_000;
        for (event, dt, read_offset) in steps {
            t = t.saturating_add_signed(dt);
            let got = match event {
                Event::Register(k) => tr.register(&k, t),
                Event::Observe(k, o) => tr.observe(&k, o, t),
                Event::Heartbeat(k) => {
                    let known = tr.heartbeat(&k, t);
                    prop_assert_eq!(known, model.nodes.contains_key(&k));
                    None
                }
                Event::HeartbeatHandle(k) => {
                    let h = handles.current.get(&k).copied().or_else(|| {
                        handles.stale.iter().rev().find(|&&(sk, _)| sk == k).map(|&(_, h)| h)
                    });
                    if let Some(h) = h {
                        prop_assert_eq!(tr.heartbeat_handle(h, t), model.nodes.contains_key(&k));
                    }
                    None
                }
                Event::StaleHeartbeat(n) => {
                    if !handles.stale.is_empty() {
                        let (_, h) = handles.stale[n % handles.stale.len()];
                        prop_assert!(!tr.heartbeat_handle(h, t), "stale handle accepted");
                    }
                    None
                }
                Event::Unregister(k) => tr.unregister(&k, t),
            };
            let want = model.apply(event, t);
            prop_assert_eq!(got, want, "transition of {:?} at {}", event, t);
            match event {
                Event::Register(k) | Event::Observe(k, _) | Event::Unregister(k) => {
                    handles.track(&tr, &model, k)?;
                }
                _ => {}
            }
            handles.check(&tr, &model)?;
            check(&tr, &model, t.saturating_add_signed(read_offset))?;
        }
        // Removal leaves nothing behind: unregistering every node empties every structure.
        let keys: Vec<u8> = model.nodes.keys().copied().collect();
        for k in keys {
            prop_assert!(tr.unregister(&k, t).is_some());
            model.apply(Event::Unregister(k), t);
            prop_assert_eq!(tr.node(&k, t), None);
            handles.track(&tr, &model, k)?;
            handles.check(&tr, &model)?;
            check(&tr, &model, t)?;
        }
        prop_assert_eq!(tr.metrics(t), LifecycleTracker::<u8>::new().metrics(t));
        prop_assert!(tr.is_empty());
        // Every handle is stale now, and stays stale when every key registers again into the reused slots; the new
        // handles work, and carry no heartbeat over.
        for &(_, h) in &handles.stale {
            prop_assert!(!tr.heartbeat_handle(h, t));
        }
        for k in 0u8..10 {
            tr.register(&k, t);
            model.apply(Event::Register(k), t);
            handles.track(&tr, &model, k)?;
        }
        handles.check(&tr, &model)?;
        for &(_, h) in &handles.stale {
            prop_assert!(!tr.heartbeat_handle(h, t + 1));
        }
        check(&tr, &model, t + 5)?;
        for k in 0u8..10 {
            let h = handles.current[&k];
            prop_assert!(tr.heartbeat_handle(h, t + k as u64));
            model.apply(Event::HeartbeatHandle(k), t + k as u64);
        }
        check(&tr, &model, t + 20)?;
    }
}
