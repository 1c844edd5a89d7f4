//! Ledger audit benchmarks.
//!
//! `expected_vs_available`: one closed ledger, one segment, E = 3, every bookie answering what it holds as a real
//! bookie does (its entries as merged runs), each holding its stripes except three gaps of two entries. Two layouts:
//! `wq3` (E 3, WQ 3, AQ 2: a bookie's stripes are one run, so its answer is 4 runs whatever the ledger's length) and
//! `wq2` (E 3, WQ 2, AQ 2: a bookie holds two entries of every three, so its answer is ~n/3 runs). `check_ledger`
//! (runs against runs) is timed next to `per_entry`, the auditor's way: for every entry, its write set, and for each
//! bookie in it a binary search of that bookie's runs ("is entry available"), counting copies. Both see the same
//! answers and agree on the worst copies and how many entries are at that level (asserted before timing), at
//! 1 000, 100 000 and 10 000 000 entries. Setup allocates the runs only, never per entry.
//!
//! `audit_throughput`: 1 000 000 ledgers (8 000 in criterion's test mode) through `check_ledger` + `AuditCounts::add` per iteration, cycling over a
//! handful of templates (healthy E3/WQ2 with 1 000 entries and exact answers, healthy E3/WQ3 with 10 000, an
//! ensemble change E5/WQ3, a loss below AQ, an unreachable bookie, open, marked, empty), each ledger getting its own
//! id; a rack map of three racks is known, so placement by racks is checked too. Reported as ledgers per second.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use mqwatch_checks::ledgers::{
    AuditCounts, LedgerThresholds, LedgerVerdict, LedgerViolation, check_ledger,
};
use mqwatch_checks::replicas::missing;
use mqwatch_model::{
    BookieAnswer, EntryRun, LedgerLayout, LedgerObservation, LedgerSegment, LedgerState,
    UnderReplicationMark,
};

const SIZES: [i64; 3] = [1_000, 100_000, 10_000_000];

/// Ledgers per throughput iteration: 1 000 000 under `cargo bench`; 8 000 in criterion's test mode (no `--bench`
/// argument, e.g. `cargo test --benches`, an unoptimised build that runs every bench once).
fn ledgers() -> u64 {
    if std::env::args().any(|a| a == "--bench") {
        1_000_000
    } else {
        8_000
    }
}

fn bookie(i: usize) -> String {
    format!("10.0.0.{i}:3181")
}

/// A closed ledger of entries `0..n` on one segment of `e` bookies; nobody asked yet.
fn layout(
    id: u64,
    e: usize,
    wq: usize,
    aq: usize,
    n: i64,
    first_bookie: usize,
) -> LedgerObservation {
    LedgerObservation {
        layout: LedgerLayout {
            id,
            state: LedgerState::Closed,
            ensemble_size: e,
            write_quorum: wq,
            ack_quorum: aq,
            last_entry: Some(n - 1),
            segments: vec![LedgerSegment {
                first_entry: 0,
                ensemble: (first_bookie..first_bookie + e).map(bookie).collect(),
            }],
        },
        metadata_version: 1,
        mark: None,
        answers: BTreeMap::new(),
    }
}

/// Every bookie answers its stripes of every segment minus `gaps(index)`.
fn answer_stripes(obs: &mut LedgerObservation, gaps: impl Fn(usize) -> Vec<EntryRun>) {
    let l = &obs.layout;
    for (i, seg) in l.segments.iter().enumerate() {
        for (b, id) in seg.ensemble.iter().enumerate() {
            let Some(s) = l.stripes(i, b) else { continue };
            let runs = missing(s.runs(), &gaps(b));
            let answer = obs
                .answers
                .entry(id.clone())
                .or_insert(BookieAnswer::Entries { runs: Vec::new() });
            if let BookieAnswer::Entries { runs: held } = answer {
                for r in runs {
                    match held.last_mut() {
                        Some(last) if last.end_exclusive == r.start => {
                            last.end_exclusive = r.end_exclusive
                        }
                        _ => held.push(r),
                    }
                }
            }
        }
    }
}

/// Three gaps of two entries in each bookie's answer, at a quarter, a half and three quarters, shifted per bookie.
fn three_gaps(n: i64) -> impl Fn(usize) -> Vec<EntryRun> {
    move |b| {
        let shift = 7 * b as i64;
        [n / 4, n / 2, 3 * n / 4]
            .iter()
            .map(|&p| EntryRun::new(p + shift, p + shift + 2))
            .collect()
    }
}

/// The auditor's way: every entry, its write set, a binary search in each member's runs. Returns the fewest copies
/// and how many entries have that few.
fn per_entry(obs: &LedgerObservation) -> (usize, u64) {
    let l = &obs.layout;
    let (e, wq) = (l.ensemble_size, l.write_quorum);
    let mut worst = (usize::MAX, 0u64);
    for (i, seg) in l.segments.iter().enumerate() {
        let availability: Vec<&[EntryRun]> = seg
            .ensemble
            .iter()
            .map(|b| match obs.answers.get(b) {
                Some(BookieAnswer::Entries { runs }) => runs.as_slice(),
                _ => &[],
            })
            .collect();
        let range = l.segment_range(i).expect("segment");
        for entry in range {
            let mut copies = 0;
            for j in 0..wq {
                let runs = availability[(entry as usize + j) % e];
                if is_entry_available(runs, entry) {
                    copies += 1;
                }
            }
            if copies < worst.0 {
                worst = (copies, 1);
            } else if copies == worst.0 {
                worst.1 += 1;
            }
        }
    }
    worst
}

fn is_entry_available(runs: &[EntryRun], entry: i64) -> bool {
    let i = runs.partition_point(|r| r.end_exclusive <= entry);
    runs.get(i).is_some_and(|r| r.start <= entry)
}

/// `check_ledger`'s answer in `per_entry`'s terms.
fn by_runs(obs: &LedgerObservation) -> (usize, u64) {
    let verdict = check_ledger(obs, &BTreeMap::new(), &LedgerThresholds::default(), 0);
    let LedgerVerdict::Checked { violations, .. } = verdict else {
        panic!("a closed ledger is checked");
    };
    let worst: Option<&LedgerViolation> = violations.iter().find(|v| v.copies.is_some());
    match worst {
        Some(v) => (
            v.copies.unwrap_or_default(),
            v.worst_entries.iter().map(EntryRun::len).sum(),
        ),
        None => (obs.layout.write_quorum, 0),
    }
}

fn expected_vs_available(c: &mut Criterion) {
    let mut g = c.benchmark_group("expected_vs_available");
    for (name, wq) in [("wq3", 3), ("wq2", 2)] {
        for n in SIZES {
            let mut obs = layout(1, 3, wq, 2, n, 0);
            answer_stripes(&mut obs, three_gaps(n));
            let (copies, at) = per_entry(&obs);
            assert_eq!(by_runs(&obs), (copies, at), "{name}/{n}: both agree");
            assert_eq!(copies, wq - 1, "{name}/{n}: the gaps cost one copy");
            let runs: usize = obs
                .answers
                .values()
                .map(|a| match a {
                    BookieAnswer::Entries { runs } => runs.len(),
                    _ => 0,
                })
                .sum();
            eprintln!(
                "{name}/{n}: {runs} runs answered in all; worst {copies} copies on {at} entries"
            );
            g.throughput(Throughput::Elements(n as u64));
            if n >= 1_000_000 {
                g.sample_size(10);
                g.sampling_mode(SamplingMode::Flat);
                g.measurement_time(Duration::from_secs(10));
            } else {
                g.sample_size(30);
                g.sampling_mode(SamplingMode::Auto);
                g.measurement_time(Duration::from_secs(3));
            }
            g.bench_with_input(
                BenchmarkId::new(format!("check_ledger/{name}"), n),
                &obs,
                |b, o| b.iter(|| black_box(by_runs(black_box(o)))),
            );
            g.bench_with_input(
                BenchmarkId::new(format!("per_entry/{name}"), n),
                &obs,
                |b, o| b.iter(|| black_box(per_entry(black_box(o)))),
            );
        }
    }
    g.finish();
}

/// The templates the throughput bench cycles over.
fn templates() -> Vec<LedgerObservation> {
    let mut out = Vec::new();
    let mut healthy = layout(0, 3, 2, 2, 1_000, 0);
    answer_stripes(&mut healthy, |_| Vec::new());
    out.push(healthy.clone());
    let mut wide = layout(0, 3, 3, 2, 10_000, 3);
    answer_stripes(&mut wide, |_| Vec::new());
    out.push(wide);
    let mut changed = layout(0, 5, 3, 2, 5_000, 0);
    changed.layout.segments.push(LedgerSegment {
        first_entry: 2_500,
        ensemble: [0, 1, 2, 3, 5].into_iter().map(bookie).collect(),
    });
    answer_stripes(&mut changed, |_| Vec::new());
    out.push(changed);
    let mut lossy = layout(0, 3, 2, 2, 1_000, 0);
    answer_stripes(&mut lossy, |b| {
        if b == 0 {
            vec![EntryRun::new(100, 200)]
        } else {
            Vec::new()
        }
    });
    out.push(lossy);
    let mut unreachable = healthy.clone();
    unreachable.answers.insert(
        bookie(2),
        BookieAnswer::Unreachable {
            reason: "GET_LIST_OF_ENTRIES_OF_LEDGER timed out".into(),
        },
    );
    out.push(unreachable);
    let mut open = healthy.clone();
    open.layout.state = LedgerState::Open;
    out.push(open);
    let mut marked = healthy.clone();
    marked.mark = Some(UnderReplicationMark {
        replicas: vec![bookie(1)],
        marked_at_ms: Some(0),
    });
    out.push(marked);
    let mut empty = layout(0, 3, 2, 2, 0, 0);
    empty.layout.last_entry = Some(-1);
    out.push(empty);
    out
}

/// `LEDGERS` ledgers through the audit, cycling over the templates; each keeps its own id.
fn audit(
    templates: &mut [LedgerObservation],
    racks: &BTreeMap<String, String>,
    ledgers: u64,
) -> AuditCounts {
    let t = LedgerThresholds::default();
    let mut counts = AuditCounts::default();
    let k = templates.len() as u64;
    for id in 0..ledgers {
        let obs = &mut templates[(id % k) as usize];
        obs.layout.id = id;
        counts.add(&check_ledger(obs, racks, &t, 1_000));
    }
    counts
}

fn audit_throughput(c: &mut Criterion) {
    let mut templates = templates();
    let racks: BTreeMap<String, String> = (0..6)
        .map(|i| (bookie(i), format!("/rack-{}", i % 3)))
        .collect();
    let n = ledgers();
    let counts = audit(&mut templates, &racks, n);
    assert_eq!(counts.ledgers, n);
    assert_eq!(counts.healthy, 3 * n / 8);
    assert_eq!(counts.entries_below_ack_quorum, n / 8);
    assert_eq!(counts.unavailable, n / 8);
    eprintln!("audit_throughput counts: {counts:?}");
    let mut g = c.benchmark_group("audit_throughput");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function(format!("check_ledger+add/{n}_ledgers"), |b| {
        b.iter(|| black_box(audit(&mut templates, black_box(&racks), n)))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = expected_vs_available, audit_throughput
}
criterion_main!(benches);
