//! The replica arithmetic against naive per-entry models: expected stripes, missing runs, worst copies.

use mqwatch_checks::replicas::{missing, worst_copies};
use mqwatch_model::{EntryRun, Stripes};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn holds(b: i64, e: i64, ensemble: i64, wq: i64) -> bool {
    (b - e).rem_euclid(ensemble) < wq
}

fn expand(runs: &[EntryRun]) -> BTreeSet<i64> {
    runs.iter().flat_map(|r| r.start..r.end_exclusive).collect()
}

fn to_runs(set: &BTreeSet<i64>) -> Vec<EntryRun> {
    let mut out: Vec<EntryRun> = Vec::new();
    for &e in set {
        match out.last_mut() {
            Some(last) if last.end_exclusive == e => last.end_exclusive = e + 1,
            _ => out.push(EntryRun::new(e, e + 1)),
        }
    }
    out
}

fn segment() -> impl Strategy<Value = (usize, usize, i64, i64)> {
    (1usize..8)
        .prop_flat_map(|e| (Just(e), 1..=e, -20i64..40, 0i64..60))
        .prop_map(|(e, wq, first, len)| (e, wq, first, first + len))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn stripes_are_exactly_the_entries_a_bookie_must_hold((e, wq, first, last) in segment(), b in 0usize..8) {
        prop_assume!(b < e);
        let s = Stripes::new(first, last, e, wq, b).unwrap();
        let runs: Vec<EntryRun> = s.runs().collect();
        let naive: BTreeSet<i64> = (first..=last).filter(|&x| holds(b as i64, x, e as i64, wq as i64)).collect();
        prop_assert_eq!(expand(&runs), naive.clone());
        prop_assert_eq!(runs.clone(), to_runs(&naive), "sorted, disjoint, merged");
        prop_assert_eq!(s.count(), naive.len() as u64);
    }

    #[test]
    fn missing_is_the_set_difference(
        (e, wq, first, last) in segment(), b in 0usize..8, kept in proptest::collection::btree_set(-30i64..110, 0..80),
    ) {
        prop_assume!(b < e);
        let s = Stripes::new(first, last, e, wq, b).unwrap();
        let expected: BTreeSet<i64> = expand(&s.runs().collect::<Vec<_>>());
        let got = missing(s.runs(), &to_runs(&kept));
        prop_assert_eq!(got.clone(), to_runs(&expected.difference(&kept).copied().collect()));
    }

    #[test]
    fn worst_copies_is_the_minimum_over_entries(
        (e, wq, first, last) in segment(),
        kept in proptest::collection::vec(proptest::collection::btree_set(-30i64..110, 0..80), 8),
    ) {
        let per_bookie: Vec<Vec<EntryRun>> = (0..e)
            .map(|b| {
                let s = Stripes::new(first, last, e, wq, b).unwrap();
                missing(s.runs(), &to_runs(&kept[b]))
            })
            .collect();
        let copies = |x: i64| (0..e).filter(|&b| holds(b as i64, x, e as i64, wq as i64) && kept[b].contains(&x)).count();
        let min = (first..=last).map(copies).min().unwrap();
        let at: BTreeSet<i64> = (first..=last).filter(|&x| copies(x) == min).collect();
        match worst_copies(wq, &per_bookie) {
            None => prop_assert_eq!(min, wq.min(e)),
            Some((c, runs)) => {
                prop_assert_eq!(c, min);
                prop_assert_eq!(expand(&runs), at);
            }
        }
    }
}
