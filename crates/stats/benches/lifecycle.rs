//! Lifecycle tracker benchmarks: heartbeat cost at 10, 10 000 and 100 000 registered nodes (target: 100 000 within
//! 1.2x of 10), heartbeats cycling over every node in registration order (the order a collector sweeps its node
//! list): by node handle from a pre-built handle array, and by key from a pre-built key array for `u32` broker ids
//! and `String` names, next to a bare `HashMap` doing the same (the floor of any keyed heartbeat); plus the cost of
//! a state transition (`observe`) and of reading the metrics. Not a model of any engine's event mix.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use foldhash::fast::RandomState;
use mqwatch_stats::lifecycle::{LifecycleTracker, NodeHandle, ObservedState};

const SIZES: [usize; 3] = [10, 10_000, 100_000];
const BATCH: usize = 1_000;

fn tracker<K: std::hash::Hash + Eq + Clone>(keys: &[K]) -> LifecycleTracker<K> {
    let mut tr = LifecycleTracker::with_capacity(keys.len());
    for k in keys {
        tr.register(k, 0);
        tr.observe(k, ObservedState::Active, 1);
    }
    tr
}

/// `BATCH` heartbeats per iteration, round-robin over `keys`.
fn heartbeat_round_robin<K: std::hash::Hash + Eq + Clone>(
    c: &mut Criterion,
    name: &str,
    keys_of: fn(usize) -> Vec<K>,
) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(BATCH as u64));
    for n in SIZES {
        let keys = keys_of(n);
        let mut tr = tracker(&keys);
        let mut i = 0usize;
        let mut now = 1_000u64;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    now += 1;
                    black_box(tr.heartbeat(&keys[i], now));
                    i += 1;
                    if i == keys.len() {
                        i = 0;
                    }
                }
            })
        });
    }
    g.finish();
}

/// `BATCH` heartbeats per iteration by handle, round-robin over the handles of `n` `u32` nodes in registration
/// order: no hashing, one bounds check, one generation compare, one write to the dense heartbeat array.
/// With `shuffled`, the handles are swept in a fixed pseudo-random order instead: what a collector that does not
/// keep its node list in registration order pays (the slab is then read at random places too).
fn heartbeat_by_handle(c: &mut Criterion, name: &str, shuffled: bool) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(BATCH as u64));
    for n in SIZES {
        let keys: Vec<u32> = (0..n as u32).collect();
        let mut tr = tracker(&keys);
        let mut handles: Vec<NodeHandle> = keys.iter().filter_map(|k| tr.handle(k)).collect();
        assert_eq!(handles.len(), n);
        if shuffled {
            shuffle(&mut handles);
        }
        let mut i = 0usize;
        let mut now = 1_000u64;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    now += 1;
                    black_box(tr.heartbeat_handle(handles[i], now));
                    i += 1;
                    if i == handles.len() {
                        i = 0;
                    }
                }
            })
        });
    }
    g.finish();
}

/// A deterministic Fisher-Yates shuffle (xorshift64), so runs compare.
fn shuffle<T>(v: &mut [T]) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

/// The floor any keyed heartbeat pays: a bare `HashMap<u32, u64>` (same hasher) updated round-robin, so the
/// tracker's own scaling can be told apart from the hash table's cache misses.
fn bare_map_floor(c: &mut Criterion) {
    let mut g = c.benchmark_group("lifecycle_heartbeat_floor_bare_hashmap_u32");
    g.throughput(Throughput::Elements(BATCH as u64));
    for n in SIZES {
        let keys: Vec<u32> = (0..n as u32).collect();
        let mut map: HashMap<u32, u64, RandomState> = keys.iter().map(|&k| (k, 0)).collect();
        let mut i = 0usize;
        let mut now = 1_000u64;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    now += 1;
                    if let Some(v) = map.get_mut(&keys[i]) {
                        *v = (*v).max(now);
                    }
                    i += 1;
                    if i == keys.len() {
                        i = 0;
                    }
                }
            })
        });
    }
    g.finish();
}

fn heartbeats(c: &mut Criterion) {
    heartbeat_by_handle(c, "lifecycle_heartbeat_handle", false);
    heartbeat_by_handle(c, "lifecycle_heartbeat_handle_shuffled", true);
    heartbeat_round_robin(c, "lifecycle_heartbeat_u32", |n| (0..n as u32).collect());
    bare_map_floor(c);
    heartbeat_round_robin(c, "lifecycle_heartbeat_string", |n| {
        (0..n).map(|i| format!("broker-{i}")).collect()
    });
}

/// One `observe` transition per element: nodes alternate Active → ControlledShutdown → Active, so every call
/// enters or leaves the controlled-shutdown pending map.
fn transitions(c: &mut Criterion) {
    let mut g = c.benchmark_group("lifecycle_observe_transition_u32");
    g.throughput(Throughput::Elements(BATCH as u64));
    for n in [10usize, 100_000] {
        let keys: Vec<u32> = (0..n as u32).collect();
        let mut tr = tracker(&keys);
        let mut i = 0usize;
        let mut now = 1_000u64;
        let mut to_shutdown = true;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    now += 1;
                    let obs = if to_shutdown {
                        ObservedState::ControlledShutdown
                    } else {
                        ObservedState::Active
                    };
                    black_box(tr.observe(&keys[i], obs, now));
                    i += 1;
                    if i == keys.len() {
                        i = 0;
                        to_shutdown = !to_shutdown;
                    }
                }
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("lifecycle_metrics_read_u32");
    for n in [10usize, 100_000] {
        let keys: Vec<u32> = (0..n as u32).collect();
        let mut tr = tracker(&keys);
        for (j, k) in keys.iter().enumerate().step_by(3) {
            tr.observe(k, ObservedState::ControlledShutdown, 2 + j as u64);
        }
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| black_box(tr.metrics(black_box(1_000_000))))
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = heartbeats, transitions
}
criterion_main!(benches);
