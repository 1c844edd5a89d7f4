//! Benchmark of `StatsSet::add` against a `Mutex<HashMap<String, (u64, u64)>>`, 1 and 2 threads.
//!
//! Owns only measurement. Keys: 1 000 topic-like strings cycled; with 2 threads, thread 1 starts half-way
//! round so the two threads rarely touch the same key at once. `*/1t` time is per add; `*/2t` time is wall
//! time per add *per thread* (each iteration is one add on each of the two threads, timed from a barrier).
//! `first_use` adds each key once to a fresh structure, so every add creates its key. `stats_set_adder` uses
//! one `StatsSet::adder()` handle per thread per measurement instead of `StatsSet::add`; `stats_set_counter`
//! adds through one `StatsSet::counter(key)` handle per key and thread, made before timing.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mqwatch_stats::window::{Counter, StatsSet};

const KEYS: usize = 1_000;

fn keys() -> Vec<String> {
    (0..KEYS)
        .map(|i| format!("TopicTest-orders-{i:04}@broker-{}", i % 4))
        .collect()
}

/// The structure under test, seen through one operation.
trait Adder: Sync {
    fn add(&self, key: &str, value: u64, times: u64);
}

impl Adder for StatsSet {
    fn add(&self, key: &str, value: u64, times: u64) {
        StatsSet::add(self, key, value, times);
    }
}

/// `StatsSet` through an `Adder` made once per thread per measurement (the map pinned once).
struct Pinned<'a>(&'a StatsSet);

impl Pinned<'_> {
    fn run(&self, keys: &[String], start: usize, iters: u64) {
        let adder = self.0.adder();
        let mut i = start;
        for n in 0..iters {
            adder.add(black_box(&keys[i]), black_box(n & 1023), 1);
            i += 1;
            if i == keys.len() {
                i = 0;
            }
        }
    }
}

/// The baseline: one global lock around a std `HashMap` (default hasher).
#[derive(Default)]
struct MutexMap(Mutex<HashMap<String, (u64, u64)>>);

impl Adder for MutexMap {
    fn add(&self, key: &str, value: u64, times: u64) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(key) {
            Some(e) => {
                e.0 = e.0.wrapping_add(value);
                e.1 = e.1.wrapping_add(times);
            }
            None => {
                m.insert(key.to_owned(), (value, times));
            }
        }
    }
}

/// `iters` adds cycling through `keys` from `start`.
fn run(a: &impl Adder, keys: &[String], start: usize, iters: u64) {
    let mut i = start;
    for n in 0..iters {
        a.add(black_box(&keys[i]), black_box(n & 1023), 1);
        i += 1;
        if i == keys.len() {
            i = 0;
        }
    }
}

fn timed_threads(a: &impl Adder, keys: &[String], threads: usize, iters: u64) -> Duration {
    timed(threads, |t| run(a, keys, t * keys.len() / threads, iters))
}

/// Runs `work(thread_index)` on `threads` threads released together; returns the slowest thread's time.
fn timed(threads: usize, work: impl Fn(usize) + Sync) -> Duration {
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    let t0 = Instant::now();
                    work(t);
                    t0.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .max()
            .unwrap_or_default()
    })
}

fn bench(c: &mut Criterion) {
    let keys = keys();
    let mut g = c.benchmark_group("window_add");
    let set = StatsSet::new();
    let mutex = MutexMap::default();
    for k in &keys {
        set.add(k, 0, 0);
        mutex.add(k, 0, 0);
    }
    g.bench_function("stats_set/1t", |b| {
        b.iter_custom(|iters| timed_threads(&set, &keys, 1, iters))
    });
    g.bench_function("mutex_hashmap/1t", |b| {
        b.iter_custom(|iters| timed_threads(&mutex, &keys, 1, iters))
    });
    g.bench_function("stats_set/2t", |b| {
        b.iter_custom(|iters| timed_threads(&set, &keys, 2, iters))
    });
    g.bench_function("mutex_hashmap/2t", |b| {
        b.iter_custom(|iters| timed_threads(&mutex, &keys, 2, iters))
    });
    for threads in [1, 2] {
        g.bench_function(format!("stats_set_adder/{threads}t"), |b| {
            b.iter_custom(|iters| {
                timed(threads, |t| {
                    Pinned(&set).run(&keys, t * KEYS / threads, iters)
                })
            })
        });
    }

    // One `Counter` handle per key and thread, made before the clock starts (as a collector would keep them).
    for threads in [1, 2] {
        g.bench_function(format!("stats_set_counter/{threads}t"), |b| {
            b.iter_custom(|iters| {
                let handles: Vec<Mutex<Vec<Counter<'_>>>> = (0..threads)
                    .map(|_| Mutex::new(keys.iter().map(|k| set.counter(k)).collect()))
                    .collect();
                timed(threads, |t| {
                    let mut counters = handles[t].lock().unwrap_or_else(|e| e.into_inner());
                    let n = counters.len();
                    let start = t * n / threads;
                    for i in 0..iters as usize {
                        counters[(start + i) % n].add(black_box(i as u64), 1);
                    }
                })
            })
        });
    }

    // Every add creates its key: fresh structures of KEYS keys, only the adds timed.
    fn first_use<A: Adder>(keys: &[String], iters: u64, fresh: impl Fn() -> A) -> Duration {
        let mut total = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let n = left.min(KEYS as u64);
            let a = fresh();
            let t0 = Instant::now();
            for (i, k) in keys.iter().take(n as usize).enumerate() {
                a.add(black_box(k), black_box(i as u64), 1);
            }
            total += t0.elapsed();
            drop(black_box(a));
            left -= n;
        }
        total
    }
    g.bench_function("stats_set_first_use/1t", |b| {
        b.iter_custom(|iters| first_use(&keys, iters, StatsSet::new))
    });
    g.bench_function("mutex_hashmap_first_use/1t", |b| {
        b.iter_custom(|iters| first_use(&keys, iters, MutexMap::default))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
