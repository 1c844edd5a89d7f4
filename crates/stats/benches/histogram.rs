//! Benchmarks of `mqwatch_stats::histogram`: the cost of `record` against the `hdrhistogram` crate and against
//! MQCloud's 97-bucket `AtomicU64` array, on one thread and on two threads sharing one histogram; and, printed
//! before the timings, the bytes of each and its measured worst relative error over 1 µs..1 h, plus encoded
//! sizes of typical client reports.
//!
//! Run: `cargo bench -p mqwatch-stats --bench histogram` (short criterion settings: the machine is shared).

use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::Criterion;
use mqwatch_stats::histogram::{
    BUCKETS, Histogram, IntervalSampler, bucket_index, bucket_value, mqcloud_bucket_count,
    mqcloud_bucket_index, mqcloud_upper_bound_ms,
};

const ONE_US: u64 = 1_000;
const ONE_HOUR: u64 = 3_600_000_000_000;
/// MQCloud's `max_ms` for its default 3000 ms send timeout.
const MQ_MAX_MS: u64 = 3_500;
/// Values fed to `record`, cycled.
const N_VALUES: usize = 4096;

/// splitmix64: a small deterministic generator (no `rand` dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-normal with the given median and sigma (of the natural log).
    fn log_normal(&mut self, median: f64, sigma: f64) -> u64 {
        let (u1, u2) = (self.unit().max(1e-300), self.unit());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        (median * (sigma * z).exp()) as u64
    }
}

/// Log-uniform over 1 µs..10 s.
fn values() -> Vec<u64> {
    let mut rng = Rng(42);
    let (lo, hi) = ((ONE_US as f64).ln(), (1e10f64).ln());
    (0..N_VALUES)
        .map(|_| (lo + (hi - lo) * rng.unit()).exp() as u64)
        .collect()
}

/// hdrhistogram as the brief sets it up: bounds 1 µs..1 h in ns, 2 significant figures. Its lowest
/// discernible value of 1 µs makes its unit 512 ns, so it is coarse below ~131 µs.
fn hdr() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(ONE_US, ONE_HOUR, 2).expect("valid bounds")
}

/// hdrhistogram with a 1 ns unit (bounds 1 ns..1 h, 2 significant figures): ≤ 1 % from 1 µs up.
fn hdr_1ns() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, ONE_HOUR, 2).expect("valid bounds")
}

/// MQCloud's layout: 97 `AtomicU64` counters, the value in whole ms.
struct MqCloud97 {
    counts: [AtomicU64; 97],
}

impl MqCloud97 {
    fn new() -> Self {
        assert_eq!(mqcloud_bucket_count(MQ_MAX_MS), 97);
        Self {
            counts: [const { AtomicU64::new(0) }; 97],
        }
    }

    #[inline]
    fn record(&self, ns: u64) {
        self.counts[mqcloud_bucket_index(ns / 1_000_000, MQ_MAX_MS)]
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// Our design without the exact sum (one atomic read-modify-write per record; the mean would come from
/// bucket midpoints), to measure what the sum costs.
struct NoSum {
    min: AtomicU64,
    max: AtomicU64,
    counts: [AtomicU64; BUCKETS],
}

impl NoSum {
    fn new() -> Self {
        Self {
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            counts: [const { AtomicU64::new(0) }; BUCKETS],
        }
    }

    #[inline]
    fn record(&self, ns: u64) {
        if ns < self.min.load(Ordering::Relaxed) {
            self.min.fetch_min(ns, Ordering::Relaxed);
        }
        if ns > self.max.load(Ordering::Relaxed) {
            self.max.fetch_max(ns, Ordering::Relaxed);
        }
        self.counts[bucket_index(ns)].fetch_add(1, Ordering::Release);
    }
}

/// Our bucket index with plain (non-atomic) `u64` counters: the floor for any atomic design.
struct Plain {
    counts: Box<[u64; BUCKETS]>,
}

impl Plain {
    #[inline]
    fn record(&mut self, ns: u64) {
        self.counts[bucket_index(ns)] += 1;
    }
}

fn worst_error(points: &[u64], reported: impl Fn(u64) -> u64) -> (f64, u64) {
    points
        .iter()
        .map(|&v| (reported(v).abs_diff(v) as f64 / v as f64, v))
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a })
}

fn print_tables() {
    // 1 000 001 log-spaced points over [1 µs, 1 h], plus every bucket edge of ours.
    let (lo, hi) = ((ONE_US as f64).ln(), (ONE_HOUR as f64).ln());
    let mut points: Vec<u64> = (0..=1_000_000)
        .map(|k| (lo + (hi - lo) * k as f64 / 1e6).exp() as u64)
        .map(|v| v.clamp(ONE_US, ONE_HOUR))
        .collect();
    for i in 0..BUCKETS {
        let (l, h) = mqwatch_stats::histogram::bucket_range(i).expect("valid");
        points.extend(
            [l, h - 1]
                .into_iter()
                .filter(|v| (ONE_US..=ONE_HOUR).contains(v)),
        );
    }
    let h = hdr();
    let ours = |v: u64| bucket_value(bucket_index(v)).expect("valid");
    let mq =
        |v: u64| mqcloud_upper_bound_ms(mqcloud_bucket_index(v / 1_000_000, MQ_MAX_MS)) * 1_000_000;
    let in_mq_range: Vec<u64> = points
        .iter()
        .copied()
        .filter(|v| (1_000_000..=3_500_000_000).contains(v))
        .collect();
    println!("variant                       bytes   worst rel. error 1us..1h (at value ns)");
    let row = |name: &str, bytes: usize, (e, at): (f64, u64)| {
        println!("{name:<28} {bytes:>6}   {:>9.4} %  (at {at})", e * 100.0)
    };
    row(
        "mqwatch Histogram",
        std::mem::size_of::<Histogram>(),
        worst_error(&points, ours),
    );
    let hdr_bytes = h.distinct_values() * 8;
    row(
        "hdrhistogram (value_at_q)",
        hdr_bytes,
        worst_error(&points, |v| h.highest_equivalent(v)),
    );
    row(
        "hdrhistogram (median_equiv)",
        hdr_bytes,
        worst_error(&points, |v| h.median_equivalent(v)),
    );
    let h1 = hdr_1ns();
    let hdr1_bytes = h1.distinct_values() * 8;
    row(
        "hdr 1ns unit (value_at_q)",
        hdr1_bytes,
        worst_error(&points, |v| h1.highest_equivalent(v)),
    );
    row(
        "hdr 1ns unit (median_equiv)",
        hdr1_bytes,
        worst_error(&points, |v| h1.median_equivalent(v)),
    );
    row("MQCloud 97 x AtomicU64", 97 * 8, worst_error(&points, mq));
    row(
        "  same, only 1 ms..3.5 s",
        97 * 8,
        worst_error(&in_mq_range, mq),
    );
    println!(
        "(hdrhistogram: {} / {} counters of 8 bytes, struct itself {} bytes more)",
        h.distinct_values(),
        h1.distinct_values(),
        std::mem::size_of::<hdrhistogram::Histogram<u64>>()
    );

    println!("\nencoded one-minute client report (log-normal, median 2 ms, sigma 0.6):");
    println!("records/min  non-empty buckets  encoded bytes");
    for per_minute in [10, 60, 1_000, 60_000] {
        let mut rng = Rng(per_minute);
        let h = Histogram::new();
        let mut sampler = IntervalSampler::new();
        for _ in 0..3 * per_minute {
            h.record(rng.log_normal(2e6, 0.6)); // earlier minutes
        }
        sampler.sample(&h);
        for _ in 0..per_minute {
            h.record(rng.log_normal(2e6, 0.6));
        }
        let minute = sampler.sample(&h);
        println!(
            "{per_minute:>11}  {:>17}  {:>13}",
            minute.buckets().len(),
            minute.encode().len()
        );
    }
    println!();
}

/// Interleaved timing, robust to a machine shared with other jobs: in each of 31 rounds every variant records
/// the same 2^20 values once, back to back; prints the median ns per record of each and the median of the
/// per-round ratios to hdrhistogram.
fn paired_single_thread(vals: &[u64]) {
    const ROUNDS: usize = 31;
    const OPS: u64 = 1 << 20;
    let ours = Histogram::new();
    let no_sum = NoSum::new();
    let mut h = hdr();
    let mut h1 = hdr_1ns();
    let mq = MqCloud97::new();
    let time = |d: Duration| d.as_secs_f64() * 1e9 / OPS as f64;
    let names = [
        "mqwatch",
        "mqwatch_without_sum",
        "hdrhistogram",
        "hdrhistogram_1ns_unit",
        "mqcloud_atomic_97",
    ];
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..ROUNDS {
        ns[0].push(time(run(vals, OPS, |v| ours.record(v))));
        ns[1].push(time(run(vals, OPS, |v| no_sum.record(v))));
        ns[2].push(time(run(vals, OPS, |v| {
            let _ = h.record(v);
        })));
        ns[3].push(time(run(vals, OPS, |v| {
            let _ = h1.record(v);
        })));
        ns[4].push(time(run(vals, OPS, |v| mq.record(v))));
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    println!(
        "interleaved single-thread record, {ROUNDS} rounds of 2^20 values (median ns/op, median ratio to hdr):"
    );
    for (i, name) in names.iter().enumerate() {
        let ratio = median(ns[i].iter().zip(&ns[2]).map(|(a, b)| a / b).collect());
        println!("{name:<24} {:>7.2} ns   x{ratio:.2}", median(ns[i].clone()));
    }
    println!();
}

/// Records `iters` values cycled from `vals` on this thread, the loop counter in a register (the same loop for
/// every variant, so closure state does not weigh on some more than others).
fn run(vals: &[u64], iters: u64, mut record: impl FnMut(u64)) -> Duration {
    let mask = vals.len() - 1;
    let start = Instant::now();
    for k in 0..iters as usize {
        record(black_box(vals[k & mask]));
    }
    start.elapsed()
}

fn single_thread(c: &mut Criterion, vals: &[u64]) {
    let mut g = c.benchmark_group("record_1_thread");
    let ours = Histogram::new();
    g.bench_function("mqwatch", |b| {
        b.iter_custom(|n| run(vals, n, |v| ours.record(v)))
    });
    let no_sum = NoSum::new();
    g.bench_function("mqwatch_without_sum", |b| {
        b.iter_custom(|n| run(vals, n, |v| no_sum.record(v)))
    });
    let mut plain = Plain {
        counts: Box::new([0; BUCKETS]),
    };
    g.bench_function("mqwatch_index_plain_counters", |b| {
        b.iter_custom(|n| run(vals, n, |v| plain.record(v)))
    });
    let mut h = hdr();
    g.bench_function("hdrhistogram", |b| {
        b.iter_custom(|n| {
            run(vals, n, |v| {
                let _ = h.record(v);
            })
        })
    });
    let mut h1 = hdr_1ns();
    g.bench_function("hdrhistogram_1ns_unit", |b| {
        b.iter_custom(|n| {
            run(vals, n, |v| {
                let _ = h1.record(v);
            })
        })
    });
    let m = Mutex::new(hdr());
    g.bench_function("hdrhistogram_mutex", |b| {
        b.iter_custom(|n| {
            run(vals, n, |v| {
                let _ = m.lock().expect("not poisoned").record(v);
            })
        })
    });
    let mq = MqCloud97::new();
    g.bench_function("mqcloud_atomic_97", |b| {
        b.iter_custom(|n| run(vals, n, |v| mq.record(v)))
    });
    g.finish();
    black_box((
        ours.snapshot().count(),
        no_sum.counts[0].load(Ordering::Relaxed),
        plain.counts[0],
    ));
}

/// Two threads record `iters` values each into one shared recorder; the time reported per iteration is one
/// record on each of the two threads (so 2 records).
fn two_threads(vals: &[u64], iters: u64, record: &(impl Fn(u64) + Sync)) -> Duration {
    let mask = vals.len() - 1;
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..2usize {
            s.spawn(move || {
                for k in 0..iters as usize {
                    record(black_box(vals[(k + t * 2048) & mask]));
                }
            });
        }
    });
    start.elapsed()
}

fn concurrent(c: &mut Criterion, vals: &[u64]) {
    let mut g = c.benchmark_group("record_2_threads_shared");
    let ours = Histogram::new();
    g.bench_function("mqwatch", |b| {
        b.iter_custom(|iters| two_threads(vals, iters, &|v| ours.record(v)))
    });
    let no_sum = NoSum::new();
    g.bench_function("mqwatch_without_sum", |b| {
        b.iter_custom(|iters| two_threads(vals, iters, &|v| no_sum.record(v)))
    });
    let m = Mutex::new(hdr());
    g.bench_function("hdrhistogram_mutex", |b| {
        b.iter_custom(|iters| {
            two_threads(vals, iters, &|v| {
                let _ = m.lock().expect("not poisoned").record(v);
            })
        })
    });
    let mq = MqCloud97::new();
    g.bench_function("mqcloud_atomic_97", |b| {
        b.iter_custom(|iters| two_threads(vals, iters, &|v| mq.record(v)))
    });
    g.finish();
}

fn main() {
    print_tables();
    let vals = values();
    paired_single_thread(&vals);
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    single_thread(&mut c, &vals);
    concurrent(&mut c, &vals);
    c.final_summary();
}
