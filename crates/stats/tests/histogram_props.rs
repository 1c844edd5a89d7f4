//! Property tests of `mqwatch_stats::histogram` against naive models: exact percentiles of the sorted values,
//! one histogram holding everything (for merges and diffs), a linear scan of MQCloud's bounds, and the codec's
//! own output (for arbitrary bytes). Plus many threads recording while another samples intervals.

use mqwatch_stats::histogram::{
    BUCKETS, Histogram, IntervalSampler, Snapshot, bucket_index, mqcloud_bucket_count,
    mqcloud_bucket_index,
};
use proptest::collection::vec;
use proptest::prelude::*;

const ONE_US: u64 = 1_000;
const ONE_HOUR: u64 = 3_600_000_000_000;

/// Values in [1 µs, 1 h]: log-uniform, a tight cluster, or both ends.
fn in_range() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (3.0f64..12.556_302).prop_map(|e| (10f64.powf(e) as u64).clamp(ONE_US, ONE_HOUR)),
        2 => 1_800_000u64..2_200_000,
        1 => prop_oneof![Just(ONE_US), Just(ONE_HOUR), ONE_US..ONE_US + 64],
    ]
}

fn any_value() -> impl Strategy<Value = u64> {
    prop_oneof![in_range(), any::<u64>(), 0u64..2_000]
}

fn histogram_of(values: &[u64]) -> Histogram {
    let h = Histogram::new();
    values.iter().for_each(|&v| h.record(v));
    h
}

/// The exact nearest-rank quantile, the definition `Snapshot::quantile` estimates.
fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
    let n = sorted.len() as u64;
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    sorted[(rank - 1) as usize]
}

fn within_bound(estimate: u64, exact: u64) -> bool {
    u128::from(estimate.abs_diff(exact)) * 64 <= u128::from(exact)
}

const QUANTILES: [f64; 7] = [0.0, 0.5, 0.9, 0.99, 0.999, 1.0, 0.25];

fn check_quantiles(s: &Snapshot, values: &[u64], extra: &[f64]) -> Result<(), TestCaseError> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    for &q in QUANTILES.iter().chain(extra) {
        let (estimate, exact) = (s.quantile(q), exact_quantile(&sorted, q));
        prop_assert!(
            within_bound(estimate, exact),
            "q={q}: estimate {estimate}, exact {exact}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn percentiles_within_the_error_bound(values in vec(in_range(), 1..600), qs in vec(0.0f64..=1.0, 0..6)) {
        let s = histogram_of(&values).snapshot();
        let n = values.len() as u64;
        let sum: u64 = values.iter().sum();
        prop_assert_eq!(s.count(), n);
        prop_assert_eq!(s.min(), *values.iter().min().unwrap());
        prop_assert_eq!(s.max(), *values.iter().max().unwrap());
        prop_assert_eq!(s.sum(), sum);
        prop_assert_eq!(s.mean(), (sum + n / 2) / n);
        check_quantiles(&s, &values, &qs)?;
        let summary = s.summary();
        prop_assert_eq!((summary.p50_ns, summary.p999_ns), (s.quantile(0.5), s.quantile(0.999)));
    }

    #[test]
    fn any_values_are_counted_and_estimates_stay_within_the_extremes(values in vec(any_value(), 1..300)) {
        let s = histogram_of(&values).snapshot();
        prop_assert_eq!(s.count(), values.len() as u64);
        prop_assert_eq!(s.min(), *values.iter().min().unwrap());
        prop_assert_eq!(s.max(), *values.iter().max().unwrap());
        prop_assert_eq!(s.sum(), values.iter().fold(0u64, |a, &v| a.wrapping_add(v)));
        for q in QUANTILES {
            let v = s.quantile(q);
            prop_assert!(s.min() <= v && v <= s.max());
        }
        prop_assert!(s.min() <= s.mean() && s.mean() <= s.max());
        let mut buckets = vec![0u64; BUCKETS];
        values.iter().for_each(|&v| buckets[bucket_index(v)] += 1);
        let expected: Vec<(usize, u64)> = buckets.into_iter().enumerate().filter(|&(_, c)| c > 0).collect();
        prop_assert_eq!(s.buckets().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn interval_diff_is_the_interval(before in vec(in_range(), 0..400), during in vec(in_range(), 1..400)) {
        let h = histogram_of(&before);
        let mut sampler = IntervalSampler::new();
        let first = sampler.sample(&h);
        prop_assert_eq!(first, h.snapshot());
        during.iter().for_each(|&v| h.record(v));
        let interval = sampler.sample(&h);
        let alone = histogram_of(&during).snapshot();
        prop_assert_eq!(interval.buckets().collect::<Vec<_>>(), alone.buckets().collect::<Vec<_>>());
        prop_assert_eq!(interval.count(), alone.count());
        prop_assert_eq!(interval.sum(), alone.sum());
        prop_assert_eq!(interval.mean(), alone.mean());
        prop_assert!(within_bound(interval.min(), alone.min()), "{} vs {}", interval.min(), alone.min());
        prop_assert!(within_bound(interval.max(), alone.max()), "{} vs {}", interval.max(), alone.max());
        check_quantiles(&interval, &during, &[])?;
        prop_assert_eq!(Snapshot::decode(&interval.encode()), Ok(interval));
    }

    #[test]
    fn merge_is_one_histogram_of_everything(parts in vec(vec(any_value(), 0..100), 0..6)) {
        let merged: Snapshot = parts.iter().map(|p| histogram_of(p).snapshot()).collect();
        let all: Vec<u64> = parts.concat();
        prop_assert_eq!(&merged, &histogram_of(&all).snapshot());
        // And merging then diffing gives the part back (as an interval: same buckets, count and sum).
        if let Some(last) = parts.last() {
            let rest: Snapshot = parts[..parts.len() - 1].iter().map(|p| histogram_of(p).snapshot()).collect();
            let d = merged.diff(&rest);
            let alone = histogram_of(last).snapshot();
            prop_assert_eq!(d.buckets().collect::<Vec<_>>(), alone.buckets().collect::<Vec<_>>());
            prop_assert_eq!((d.count(), d.sum()), (alone.count(), alone.sum()));
        }
    }

    #[test]
    fn encode_decode_round_trips(values in vec(any_value(), 0..300), split in any::<prop::sample::Index>()) {
        let h = Histogram::new();
        let cut = if values.is_empty() { 0 } else { split.index(values.len()) };
        values[..cut].iter().for_each(|&v| h.record(v));
        let earlier = h.snapshot();
        values[cut..].iter().for_each(|&v| h.record(v));
        let later = h.snapshot();
        for s in [earlier.clone(), later.diff(&earlier), later] {
            let bytes = s.encode();
            prop_assert_eq!(Snapshot::decode(&bytes), Ok(s));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop_oneof![
        vec(any::<u8>(), 0..48),
        vec(any::<u8>(), 0..48).prop_map(|mut b| { b.insert(0, 1); b }),
        (0u8..8, vec(any::<u8>(), 0..48)).prop_map(|(n, mut b)| { b.splice(0..0, [1, n]); b }),
    ]) {
        if let Ok(s) = Snapshot::decode(&bytes) {
            // Only canonical encodings are accepted, and what is accepted is usable.
            prop_assert_eq!(s.encode(), bytes);
            let _ = (s.summary(), s.segmented(3_000));
        }
    }

    #[test]
    fn mutated_encodings_never_panic(values in vec(any_value(), 1..50), at in any::<prop::sample::Index>(),
                                      byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let bytes = histogram_of(&values).snapshot().encode();
        let mut mutated = bytes.clone();
        mutated[at.index(bytes.len())] = byte;
        for b in [&mutated[..], &bytes[..cut.index(bytes.len())]] {
            if let Ok(s) = Snapshot::decode(b) {
                prop_assert_eq!(&s.encode()[..], b);
            }
        }
    }

    #[test]
    fn mqcloud_index_matches_a_linear_scan(ms in 0u64..5_000, max_ms in 0u64..5_000) {
        // Model: walk the buckets 1 ms, then 5 ms, then 50 ms wide.
        let mut upper = Vec::new();
        let mut bound = 0u64;
        loop {
            upper.push(bound);
            if bound >= max_ms { break; }
            bound += if bound < 10 { 1 } else if bound < 100 { 5 } else { 50 };
        }
        let model = upper.iter().position(|&u| ms <= u).unwrap_or(upper.len() - 1);
        prop_assert_eq!(mqcloud_bucket_count(max_ms), upper.len());
        prop_assert_eq!(mqcloud_bucket_index(ms, max_ms), model);
    }

    #[test]
    fn segmented_view_keeps_counts_and_places_single_values(
        values in vec(any_value(), 0..200),
        one in 0u64..5_000_000_000,
    ) {
        let view = histogram_of(&values).snapshot().segmented(3_000);
        prop_assert_eq!(view.counts.len(), 97);
        prop_assert_eq!(view.counts.iter().sum::<u64>(), values.len() as u64);
        // A single value is its own min and max, so it lands exactly where MQCloud would put it.
        let view = histogram_of(&[one]).snapshot().segmented(3_000);
        prop_assert_eq!(view.counts[mqcloud_bucket_index(one / 1_000_000, 3_500)], 1);
    }
}

/// Many threads record while another samples intervals: every record is counted exactly once, and every
/// interval snapshot is a valid one (its encoding decodes, which checks the invariants).
#[test]
fn concurrent_recording_with_interval_sampling() {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 25_000;
    let h = Histogram::new();
    let value = |t: u64, i: u64| ONE_US + ((t * PER_THREAD + i) * 7_919_993) % ONE_HOUR;
    let mut sampler = IntervalSampler::new();
    let mut intervals = Vec::new();
    std::thread::scope(|scope| {
        let h = &h;
        for t in 0..THREADS {
            scope.spawn(move || (0..PER_THREAD).for_each(|i| h.record(value(t, i))));
        }
        for _ in 0..200 {
            intervals.push(sampler.sample(h));
        }
    });
    intervals.push(sampler.sample(&h));
    for s in &intervals {
        assert_eq!(Snapshot::decode(&s.encode()).as_ref(), Ok(s));
    }
    let all: Vec<u64> = (0..THREADS)
        .flat_map(|t| (0..PER_THREAD).map(move |i| value(t, i)))
        .collect();
    let expected = histogram_of(&all).snapshot();
    let total: u64 = intervals.iter().map(Snapshot::count).sum();
    assert_eq!(total, THREADS * PER_THREAD);
    let sum = intervals.iter().fold(0u64, |a, s| a.wrapping_add(s.sum()));
    assert_eq!(sum, expected.sum());
    let merged: Snapshot = intervals.into_iter().collect();
    assert_eq!(
        merged.buckets().collect::<Vec<_>>(),
        expected.buckets().collect::<Vec<_>>()
    );
    assert_eq!(h.snapshot(), expected);
}
