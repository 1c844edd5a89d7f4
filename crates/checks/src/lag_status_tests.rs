//! Unit tests of `consumer_lag_status`: each predicate on its own, then the combined status on windows shaped
//! like the consumers Burrow's rules describe.

use super::*;
use crate::testing::{client, group, position, queue, snapshot};
use mqwatch_model::Span;

const MIN: u64 = 60_000;

/// A window of (committed, latest) looks one minute apart starting at 0; a commit's time is the first look
/// that saw it.
fn w(looks: &[(i64, i64)]) -> Vec<PositionSample> {
    let mut out: Vec<PositionSample> = Vec::new();
    for (i, &(committed, latest)) in looks.iter().enumerate() {
        let at_ms = i as u64 * MIN;
        let committed_at_ms = match out.last() {
            Some(l) if l.committed == committed => l.committed_at_ms,
            _ => at_ms,
        };
        out.push(PositionSample {
            committed,
            latest,
            at_ms,
            committed_at_ms,
        });
    }
    out
}

fn t(window: usize) -> LagStatusThresholds {
    LagStatusThresholds {
        window,
        ..Default::default()
    }
}

/// The time of the look after the last one.
fn next(w: &[PositionSample]) -> u64 {
    w.last().map_or(0, |s| s.at_ms + MIN)
}

#[test]
fn complete_needs_a_full_window_and_the_minimum_span() {
    let win = w(&[(1, 5), (2, 5), (3, 5)]);
    assert!(is_complete(&win, &t(3)));
    assert!(!is_complete(&win, &t(4)));
    assert!(!is_complete(&[], &t(3)));
    let spanning = LagStatusThresholds {
        window: 3,
        min_span: Span::from_secs(180),
        allowed_lag: 0,
    };
    assert!(!is_complete(&win, &spanning), "3 looks span 2 minutes");
}

#[test]
fn lag_always_over_is_false_once_the_consumer_caught_up() {
    assert!(lag_always_over(&w(&[(1, 5), (2, 6)]), 0));
    assert!(!lag_always_over(&w(&[(1, 5), (6, 6)]), 0));
    assert!(
        !lag_always_over(&w(&[(1, 5), (4, 6)]), 2),
        "lag 2 is allowed"
    );
}

#[test]
fn a_rewind_is_found_and_recovery_is_reaching_the_offset_before_it() {
    let win = w(&[(10, 50), (20, 50), (5, 50), (15, 50)]);
    assert_eq!(rewind_index(&win), Some(2));
    assert!(!rewind_recovered(&win, 2));
    let back = w(&[(10, 50), (20, 50), (5, 50), (20, 50)]);
    assert!(rewind_recovered(&back, 2));
    assert_eq!(rewind_index(&w(&[(1, 5), (1, 5), (2, 5)])), None);
}

#[test]
fn stopped_is_a_last_commit_older_than_the_span_of_the_commits() {
    let moving = w(&[(1, 9), (2, 9), (3, 9)]);
    assert!(!offsets_stopped(&moving, next(&moving)));
    assert!(
        offsets_stopped(&moving, 5 * MIN),
        "3 min since the last commit > 2 min span"
    );
    let still = w(&[(4, 9), (4, 9), (4, 9)]);
    assert!(offsets_stopped(&still, next(&still)));
    assert!(!offsets_stopped(&[], 0));
}

#[test]
fn stalled_is_one_offset_over_the_whole_window() {
    assert!(offsets_stalled(&w(&[(4, 9), (4, 10), (4, 11)])));
    assert!(!offsets_stalled(&w(&[(4, 9), (5, 10), (5, 11)])));
}

#[test]
fn lag_not_decreasing_is_no_step_where_the_lag_fell() {
    assert!(lag_not_decreasing(&w(&[(1, 10), (2, 11), (3, 13)])));
    assert!(!lag_not_decreasing(&w(&[(1, 10), (5, 11), (6, 13)])));
}

#[test]
fn recent_lag_zero_is_a_latest_offset_the_last_commit_reached() {
    assert!(recent_lag_zero(&w(&[(1, 3), (3, 9), (3, 12)])));
    assert!(!recent_lag_zero(&w(&[(1, 5), (3, 9), (3, 12)])));
}

#[test]
fn members_online_reads_the_groups_clients() {
    let mut g = group("g", vec![]);
    assert!(!members_online(&g));
    g.clients.push(client("c1", &[], vec![]));
    assert!(members_online(&g));
}

#[test]
fn statuses_of_typical_consumers() {
    let th = t(5);
    let at = |win: &[PositionSample], members| status(win, members, &th, next(win));
    // Keeping up: lag zero somewhere.
    assert_eq!(
        at(&w(&[(1, 3), (3, 3), (3, 5), (5, 8), (8, 9)]), false),
        LagStatus::Ok
    );
    // Behind but catching up.
    assert_eq!(
        at(
            &w(&[(1, 30), (10, 31), (20, 32), (28, 33), (31, 34)]),
            false
        ),
        LagStatus::Ok
    );
    // Moving, lag growing: slow.
    let slow = w(&[(1, 10), (2, 12), (3, 14), (4, 16), (5, 18)]);
    assert_eq!(at(&slow, false), LagStatus::Warning);
    // Not moving with lag, nobody online: stopped; somebody online: stalled.
    let still = w(&[(7, 20), (7, 20), (7, 21), (7, 22), (7, 23)]);
    assert_eq!(at(&still, false), LagStatus::Stop);
    assert_eq!(at(&still, true), LagStatus::Stall);
    // Went back and stayed below.
    let rewound = w(&[(50, 90), (60, 90), (10, 90), (20, 90), (30, 91)]);
    assert_eq!(at(&rewound, false), LagStatus::Rewind);
    // Caught up a moment ago: not stopped yet (Burrow's recent-lag-zero exception).
    let paused = w(&[(7, 7), (7, 7), (7, 7), (7, 7), (7, 9)]);
    assert_eq!(at(&paused, false), LagStatus::Ok);
    // Incomplete window: not judged.
    assert_eq!(at(&still[..4], false), LagStatus::Ok);
    // No lag now: OK whatever came before.
    assert_eq!(
        at(&w(&[(1, 10), (1, 10), (1, 10), (1, 10), (10, 10)]), false),
        LagStatus::Ok
    );
}

#[test]
fn a_group_takes_its_worst_log_and_critical_statuses_are_critical_findings() {
    let th = t(5);
    let slow = w(&[(1, 10), (2, 12), (3, 14), (4, 16), (5, 18)]);
    let still = w(&[(7, 20), (7, 20), (7, 21), (7, 22), (7, 23)]);
    let now = next(&slow);
    let g = group(
        "g",
        vec![
            position("t", 0, 0, 18, Some(5), None),
            position("t", 1, 0, 23, Some(7), None),
            position("t", 2, 0, 9, None, None),
        ],
    );
    let s = snapshot(vec![
        g.clone(),
        group("quiet", vec![position("t", 0, 0, 5, None, None)]),
    ]);
    let window = |_: &GroupRef, l: &LogRef| -> &[PositionSample] {
        if *l == queue("t", 0) { &slow } else { &still }
    };
    let statuses = evaluate(&s, window, &th, now);
    assert_eq!(statuses.len(), 1, "a group without commits has no status");
    let st = &statuses[0];
    assert_eq!(st.status, LagStatus::Stop);
    assert_eq!((st.logs, st.logs_complete, st.total_lag), (2, 2, 13 + 16));
    let order: Vec<LagStatus> = st.not_ok.iter().map(|l| l.status).collect();
    assert_eq!(order, vec![LagStatus::Stop, LagStatus::Warning]);

    let f = check(&s, &statuses, now);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, FindingKind::ConsumerLagStatus);
    assert_eq!(f[0].severity, Severity::Critical);
    assert_eq!(
        f[0].evidence.get("status"),
        Some(&serde_json::json!("STOP"))
    );
    let parts = f[0]
        .evidence
        .get("partitions")
        .and_then(|p| p.as_array())
        .unwrap();
    assert_eq!(parts[1]["status"], "WARNING");
    assert_eq!(parts[1]["log"], queue("t", 0).to_string());

    let only_slow = |_: &GroupRef, _: &LogRef| -> &[PositionSample] { &slow };
    let st = evaluate(&s, only_slow, &th, now);
    let f = check(&s, &st, now);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(severity(LagStatus::Rewind), Severity::Critical);
    let ok = |_: &GroupRef, _: &LogRef| -> &[PositionSample] { &[] };
    assert!(check(&s, &evaluate(&s, ok, &th, now), now).is_empty());
}
