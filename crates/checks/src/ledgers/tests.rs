//! Unit tests of the ledger audit, and the builders the submodules' tests share.

use super::*;
use mqwatch_model::{BookieAnswer, Engine, LedgerSegment, LogRef, Severity, Stripes, Subject};

pub(super) fn r(start: i64, end_exclusive: i64) -> EntryRun {
    EntryRun::new(start, end_exclusive)
}

pub(super) fn entries(runs: &[EntryRun]) -> BookieAnswer {
    BookieAnswer::Entries {
        runs: runs.to_vec(),
    }
}

/// A closed ledger `id` of entries `0..=last` on one segment, nobody asked yet.
pub(super) fn closed(
    id: u64,
    e: usize,
    wq: usize,
    aq: usize,
    last: i64,
    ensemble: &[&str],
) -> LedgerObservation {
    LedgerObservation {
        layout: LedgerLayout {
            id,
            state: LedgerState::Closed,
            ensemble_size: e,
            write_quorum: wq,
            ack_quorum: aq,
            last_entry: Some(last),
            segments: vec![LedgerSegment {
                first_entry: 0,
                ensemble: ensemble.iter().map(|b| b.to_string()).collect(),
            }],
        },
        metadata_version: 1,
        mark: None,
        answers: BTreeMap::new(),
    }
}

/// Every bookie answers exactly what it must hold (merged over segments).
fn all_hold(obs: &mut LedgerObservation) {
    let l = &obs.layout;
    let mut held: BTreeMap<String, Vec<EntryRun>> = BTreeMap::new();
    for (i, seg) in l.segments.iter().enumerate() {
        for (b, bookie) in seg.ensemble.iter().enumerate() {
            if let Some(s) = l.stripes(i, b) {
                let runs = held.entry(bookie.clone()).or_default();
                *runs = durability::union(runs, &s.runs().collect::<Vec<_>>());
            }
        }
    }
    for (bookie, runs) in held {
        obs.answers.insert(bookie, BookieAnswer::Entries { runs });
    }
}

/// `bookie`'s answer with `gone` removed.
fn lose(obs: &mut LedgerObservation, bookie: &str, gone: EntryRun) {
    let Some(BookieAnswer::Entries { runs }) = obs.answers.get(bookie) else {
        panic!("{bookie} answers no entries");
    };
    let kept = crate::replicas::missing(runs.iter().copied(), &[gone]);
    obs.answers.insert(bookie.into(), entries(&kept));
}

const NOW: u64 = 10_000_000;

fn check(obs: &LedgerObservation) -> LedgerVerdict {
    check_ledger(obs, &BTreeMap::new(), &LedgerThresholds::default(), NOW)
}

fn violations(v: &LedgerVerdict) -> (&[LedgerViolation], &[String]) {
    match v {
        LedgerVerdict::Checked {
            violations,
            unavailable_bookies,
        } => (violations, unavailable_bookies),
        other => panic!("not checked: {other:?}"),
    }
}

fn one(v: &LedgerVerdict) -> &LedgerViolation {
    let (vs, _) = violations(v);
    assert_eq!(vs.len(), 1, "{vs:?}");
    &vs[0]
}

#[test]
fn a_ledger_whose_bookies_hold_their_stripes_is_healthy() {
    let mut obs = closed(1, 3, 2, 2, 99, &["a", "b", "c"]);
    all_hold(&mut obs);
    let v = check(&obs);
    assert_eq!(violations(&v), (&[][..], &[][..]));
}

#[test]
fn entries_missing_on_one_bookie_are_below_the_write_quorum() {
    let mut obs = closed(42, 3, 3, 2, 99, &["a", "b", "c"]);
    all_hold(&mut obs);
    lose(&mut obs, "b", r(10, 20));
    let v = check(&obs);
    let v = one(&v);
    assert_eq!(v.kind, FindingKind::EntriesBelowWriteQuorum);
    assert_eq!(v.copies, Some(2));
    assert_eq!(v.worst_entries, vec![r(10, 20)]);
    assert_eq!(
        v.missing,
        BTreeMap::from([("b".to_string(), vec![r(10, 20)])])
    );
}

#[test]
fn entries_missing_on_every_copy_have_no_replica() {
    let mut obs = closed(42, 3, 2, 2, 99, &["a", "b", "c"]);
    all_hold(&mut obs);
    for b in ["a", "b", "c"] {
        lose(&mut obs, b, r(10, 20));
    }
    let v = check(&obs);
    let v = one(&v);
    assert_eq!(v.kind, FindingKind::EntriesNoReplica);
    assert_eq!(
        (v.copies, v.worst_entries.clone()),
        (Some(0), vec![r(10, 20)])
    );
    // Each bookie lacks only its own stripes of 10..=19: a holds residues 0 and 2 (mod 3).
    assert_eq!(v.missing["a"], vec![r(11, 13), r(14, 16), r(17, 19)]);
    assert_eq!(v.missing.len(), 3);
}

#[test]
fn fewer_copies_than_the_ack_quorum_is_its_own_class() {
    let mut obs = closed(42, 3, 3, 2, 99, &["127.0.0.1:3181", "b", "c"]);
    all_hold(&mut obs);
    lose(&mut obs, "127.0.0.1:3181", r(10, 20));
    lose(&mut obs, "b", r(15, 30));
    let v = check(&obs);
    let v = one(&v);
    assert_eq!(v.kind, FindingKind::EntriesBelowAckQuorum);
    assert_eq!(
        (v.copies, v.worst_entries.clone()),
        (Some(1), vec![r(15, 20)])
    );
    let f = violation_finding("bk", 42, v, NOW);
    assert_eq!(
        f.message,
        "ledger 42: entries 15..=19 have 1 of 3 copies (below ack quorum 2); \
         missing on 127.0.0.1:3181: 10..=19; b: 15..=29"
    );
}

#[test]
fn a_bookie_without_the_ledger_lacks_all_its_stripes() {
    let mut obs = closed(7, 3, 2, 2, 8, &["a", "b", "c"]);
    all_hold(&mut obs);
    obs.answers.insert("c".into(), BookieAnswer::NoLedger);
    let v = check(&obs);
    let v = one(&v);
    // c (index 2) holds entries e with (2 - e) mod 3 < 2: 1, 2, 4, 5, 7, 8.
    assert_eq!(v.kind, FindingKind::EntriesBelowAckQuorum);
    assert_eq!(v.missing["c"], vec![r(1, 3), r(4, 6), r(7, 9)]);
    assert_eq!(v.worst_entries, vec![r(1, 3), r(4, 6), r(7, 9)]);
}

#[test]
fn an_unreachable_bookie_is_unknown_not_empty() {
    let mut obs = closed(7, 3, 2, 2, 8, &["a", "b", "c"]);
    all_hold(&mut obs);
    obs.answers.insert(
        "c".into(),
        BookieAnswer::Unreachable {
            reason: "GET_LIST_OF_ENTRIES_OF_LEDGER timed out".into(),
        },
    );
    let v = check(&obs);
    assert_eq!(violations(&v), (&[][..], &["c".to_string()][..]));
    // c not answering must not hide a certain loss: a lacks entry 5 (write set 2, 0 = c, a): at most 1 copy.
    obs.answers.remove("b");
    lose(&mut obs, "a", r(5, 6));
    let v = check(&obs);
    let (vs, unavailable) = violations(&v);
    assert_eq!(
        unavailable,
        ["b", "c"],
        "absent from the answers counts too"
    );
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0].kind, FindingKind::EntriesBelowAckQuorum);
    assert_eq!(vs[0].worst_entries, vec![r(5, 6)]);
    assert!(vs[0].detail.contains("b, c"), "{}", vs[0].detail);
}

#[test]
fn an_ensemble_on_one_rack_breaks_placement() {
    let mut obs = closed(7, 3, 2, 2, 8, &["a", "b", "c"]);
    all_hold(&mut obs);
    lose(&mut obs, "a", r(0, 1));
    let racks: BTreeMap<String, String> = ["a", "b", "c"]
        .iter()
        .map(|b| (b.to_string(), "/r1".to_string()))
        .collect();
    let v = check_ledger(&obs, &racks, &LedgerThresholds::default(), NOW);
    let (vs, _) = violations(&v);
    let kinds: Vec<FindingKind> = vs.iter().map(|v| v.kind).collect();
    assert_eq!(
        kinds,
        [
            FindingKind::PlacementViolation,
            FindingKind::EntriesBelowAckQuorum
        ]
    );
    assert_eq!(vs[0].detail.matches("spans 1 rack(s) (/r1)").count(), 3);
    let f = violation_finding("bk", 7, &vs[0], NOW);
    assert!(
        f.message
            .starts_with("ledger 7 is placed against the policy: segment 0")
    );
    assert_eq!(f.severity, Severity::Warning);
}

#[test]
fn a_duplicate_member_breaks_placement() {
    let mut obs = closed(7, 3, 3, 2, 8, &["a", "b", "a"]);
    all_hold(&mut obs);
    let v = check(&obs);
    let (vs, _) = violations(&v);
    assert_eq!(vs[0].kind, FindingKind::PlacementViolation);
    assert!(
        vs[0].detail.contains("a is a member 2 times"),
        "{:?}",
        vs[0]
    );
    // Every entry's write set names a twice: two distinct copies at most.
    assert_eq!(vs[1].kind, FindingKind::EntriesBelowWriteQuorum);
    assert_eq!(
        (vs[1].copies, vs[1].worst_entries.clone()),
        (Some(2), vec![r(0, 9)])
    );
    assert!(vs[1].missing.is_empty());
}

#[test]
fn segments_are_checked_each_and_an_empty_last_one_asks_nobody() {
    let mut obs = closed(9, 3, 2, 2, 19, &["a", "b", "c"]);
    let seg = |first: i64, e: [&str; 3]| LedgerSegment {
        first_entry: first,
        ensemble: e.iter().map(|b| b.to_string()).collect(),
    };
    obs.layout.segments.push(seg(10, ["a", "b", "d"]));
    obs.layout.segments.push(seg(20, ["a", "d", "e"]));
    all_hold(&mut obs);
    assert!(!obs.answers.contains_key("e"), "e holds nothing");
    // b loses 0..30: its stripes in segment 0 and segment 1; d loses entry 10 (write set 10 % 3 = 1, 2: b, d).
    lose(&mut obs, "b", r(0, 30));
    lose(&mut obs, "d", r(10, 11));
    let v = check(&obs);
    let v = one(&v);
    assert_eq!(v.kind, FindingKind::EntriesNoReplica);
    assert_eq!(v.worst_entries, vec![r(10, 11)]);
    let b0: Vec<EntryRun> = Stripes::new(0, 9, 3, 2, 1).unwrap().runs().collect();
    let b1: Vec<EntryRun> = Stripes::new(10, 19, 3, 2, 1).unwrap().runs().collect();
    assert_eq!(v.missing["b"], durability::union(&b0, &b1));
    assert_eq!(v.missing["d"], vec![r(10, 11)]);
}

#[test]
fn a_mark_older_than_the_grace_period_is_stuck() {
    let mut obs = closed(5, 3, 2, 2, 8, &["a", "b", "c"]);
    obs.mark = Some(UnderReplicationMark {
        replicas: vec!["c".into()],
        marked_at_ms: Some((NOW - 3_600_000) as i64),
    });
    let hour = LedgerThresholds {
        grace: Some(Span::from_secs(3_600)),
        ..LedgerThresholds::default()
    };
    let none = BTreeMap::new();
    let v = check_ledger(&obs, &none, &hour, NOW);
    let v = one(&v);
    assert_eq!(v.kind, FindingKind::UnderReplicationStuck);
    assert_eq!(
        (v.mark_age_ms, v.grace_ms),
        (Some(3_600_000), Some(3_600_000))
    );
    let f = violation_finding("bk", 5, v, NOW);
    assert_eq!(
        f.evidence.get("mark_age_ms"),
        Some(&serde_json::json!(3_600_000))
    );
    assert!(f.message.contains("1h ago"), "{}", f.message);
    let marked = LedgerVerdict::Skipped {
        reason: SkipReason::Marked,
    };
    assert_eq!(check_ledger(&obs, &none, &hour, NOW - 1), marked, "younger");
    assert_eq!(check(&obs), marked, "no grace period");
    obs.mark.as_mut().unwrap().marked_at_ms = None;
    assert_eq!(check_ledger(&obs, &none, &hour, NOW), marked, "unknown age");
}

#[test]
fn open_recovering_and_empty_ledgers_are_skipped() {
    let mut obs = closed(5, 3, 2, 2, 8, &["a", "b", "c"]);
    let skipped = |reason| LedgerVerdict::Skipped { reason };
    obs.layout.state = LedgerState::Open;
    assert_eq!(check(&obs), skipped(SkipReason::Open));
    obs.layout.state = LedgerState::InRecovery;
    assert_eq!(check(&obs), skipped(SkipReason::Open));
    obs.layout.state = LedgerState::Closed;
    obs.layout.last_entry = Some(-1);
    assert_eq!(check(&obs), skipped(SkipReason::Empty));
    obs.layout.last_entry = None;
    assert_eq!(check(&obs), skipped(SkipReason::Empty));
}

#[test]
fn counts_add_up_per_category() {
    let mut healthy = closed(1, 3, 2, 2, 8, &["a", "b", "c"]);
    all_hold(&mut healthy);
    let mut lossy = healthy.clone();
    lose(&mut lossy, "a", r(0, 1));
    lose(&mut lossy, "b", r(0, 1));
    let mut unreachable = healthy.clone();
    lose(&mut unreachable, "a", r(0, 1));
    unreachable.answers.remove("c");
    let racks = BTreeMap::from([("a".to_string(), "/r1".to_string())]);
    let mut c = AuditCounts::default();
    let t = LedgerThresholds::default();
    for (obs, racks) in [
        (&healthy, &BTreeMap::new()),
        (&healthy, &racks),
        (&lossy, &BTreeMap::new()),
        (&unreachable, &BTreeMap::new()),
    ] {
        c.add(&check_ledger(obs, racks, &t, NOW));
    }
    c.add(&LedgerVerdict::Skipped {
        reason: SkipReason::Marked,
    });
    let mut open = healthy.clone();
    open.layout.state = LedgerState::Open;
    c.add(&check(&open));
    assert_eq!(
        c,
        AuditCounts {
            ledgers: 6,
            skipped_open: 1,
            skipped_marked: 1,
            healthy: 1,
            placement_violation: 1,
            entries_no_replica: 1,
            entries_below_ack_quorum: 1,
            unavailable: 1,
            ..AuditCounts::default()
        }
    );
}

#[test]
fn the_finding_carries_the_numbers() {
    let mut obs = closed(42, 3, 3, 2, 99, &["a", "b", "c"]);
    all_hold(&mut obs);
    lose(&mut obs, "a", r(10, 20));
    lose(&mut obs, "b", r(10, 11));
    let v = check(&obs);
    let f = violation_finding("bk", 42, one(&v), NOW);
    assert_eq!(f.kind, FindingKind::EntriesBelowAckQuorum);
    assert_eq!(f.severity, Severity::Critical);
    assert_eq!((f.engine, f.first_seen_ms), (Engine::Bookkeeper, NOW));
    assert_eq!(
        f.subject,
        Subject::Log {
            log: LogRef::Ledger { id: 42 }
        }
    );
    assert_eq!(
        f.message,
        "ledger 42: entry 10 has 1 of 3 copies (below ack quorum 2); missing on a: 10..=19; b: 10"
    );
    let e = |k: &str| f.evidence.get(k).cloned();
    assert_eq!(e("copies"), Some(serde_json::json!(1)));
    assert_eq!(e("write_quorum"), Some(serde_json::json!(3)));
    assert_eq!(e("ack_quorum"), Some(serde_json::json!(2)));
    assert_eq!(e("worst_entries"), Some(serde_json::json!([[10, 10]])));
    assert_eq!(
        e("missing"),
        Some(serde_json::json!({"a": [[10, 19]], "b": [[10, 10]]}))
    );
    assert!(e("detail").is_some() && e("truncated").is_none());
}

#[test]
fn long_lists_are_cut_in_the_message_and_the_evidence() {
    let mut obs = closed(
        3,
        3,
        2,
        2,
        3 * (MAX_EVIDENCE_RUNS as i64 + 5),
        &["a", "b", "c"],
    );
    all_hold(&mut obs);
    obs.answers.insert("a".into(), BookieAnswer::NoLedger);
    let v = check(&obs);
    let f = violation_finding("bk", 3, one(&v), NOW);
    assert!(
        f.message.contains("entries 0, 2..=3, 5..=6, … (1006 runs"),
        "{}",
        f.message
    );
    assert_eq!(f.evidence.get("truncated"), Some(&serde_json::json!(true)));
    let listed = f
        .evidence
        .get("worst_entries")
        .unwrap()
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, MAX_EVIDENCE_RUNS);
}
