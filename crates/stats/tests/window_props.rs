//! Property and concurrency tests of `mqwatch_stats::window::StatsSet`.
//!
//! The properties drive a `StatsSet` and a naive model (RocketMQ's `StatsItem` written the plain way: growable
//! lists, a linear due-time loop) with the same random add / tick / evict sequences and compare every key's
//! counters and windows after every step. The concurrency tests check that many adders lose nothing, also
//! while another thread ticks and evicts.

use std::collections::BTreeMap;

use mqwatch_stats::window::{StatsSet, Totals, WindowStats};
use proptest::prelude::*;

const T0: u64 = 1_700_000_000_000;
const LEVELS: [(u64, usize); 3] = [(10_000, 7), (600_000, 7), (3_600_000, 25)];

#[derive(Debug, Default, Clone)]
struct ModelItem {
    value: u64,
    times: u64,
    /// (ts, times, value) per level.
    lists: [Vec<(u64, u64, u64)>; 3],
    seen: Option<(u64, u64)>,
    changed: u64,
}

#[derive(Debug, Default)]
struct Model {
    items: BTreeMap<String, ModelItem>,
    next_due: [Option<u64>; 3],
}

impl Model {
    fn add(&mut self, key: &str, value: u64, times: u64) {
        let it = self.items.entry(key.to_owned()).or_default();
        it.value += value;
        it.times += times;
    }

    fn tick(&mut self, now: u64) {
        for (level, &(period, keep)) in LEVELS.iter().enumerate() {
            let due = match self.next_due[level] {
                None => {
                    self.next_due[level] = Some(now + period);
                    true
                }
                Some(mut next) if now >= next => {
                    while next <= now {
                        next += period;
                    }
                    self.next_due[level] = Some(next);
                    true
                }
                Some(_) => false,
            };
            if !due {
                continue;
            }
            for it in self.items.values_mut() {
                let list = &mut it.lists[level];
                if list.is_empty() {
                    list.push((now.saturating_sub(period), 0, 0));
                }
                list.push((now, it.times, it.value));
                while list.len() > keep {
                    list.remove(0);
                }
                if level == 0 && it.seen != Some((it.value, it.times)) {
                    it.seen = Some((it.value, it.times));
                    it.changed = now;
                }
            }
        }
    }

    fn evict(&mut self, now: u64, idle: u64) -> usize {
        let before = self.items.len();
        self.items.retain(|_, it| {
            let idle_now =
                it.seen == Some((it.value, it.times)) && now.saturating_sub(it.changed) >= idle;
            !idle_now
        });
        before - self.items.len()
    }

    fn window(it: &ModelItem, level: usize) -> (u64, f64, f64) {
        let list = &it.lists[level];
        let (Some(first), Some(last)) = (list.first(), list.last()) else {
            return (0, 0.0, 0.0);
        };
        let sum = last.2 - first.2;
        let span = last.0 - first.0;
        let times = last.1 - first.1;
        let tps = if span > 0 {
            sum as f64 * 1000.0 / span as f64
        } else {
            0.0
        };
        let avgpt = if times > 0 {
            sum as f64 / times as f64
        } else {
            0.0
        };
        (sum, tps, avgpt)
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn check(set: &StatsSet, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(set.len(), model.items.len());
    for (key, it) in &model.items {
        let got = set.get(key);
        prop_assert!(got.is_some(), "key {} missing", key);
        let got = got.unwrap();
        prop_assert_eq!(
            (got.value, got.times),
            (it.value, it.times),
            "totals of {}",
            key
        );
        for (level, w) in [got.minute, got.hour, got.day].into_iter().enumerate() {
            let (sum, tps, avgpt) = Model::window(it, level);
            prop_assert_eq!(w.sum, sum, "sum of {} level {}", key, level);
            prop_assert!(
                close(w.tps, tps),
                "tps of {} level {}: {} vs {}",
                key,
                level,
                w.tps,
                tps
            );
            prop_assert!(
                close(w.avgpt, avgpt),
                "avgpt of {} level {}: {} vs {}",
                key,
                level,
                w.avgpt,
                avgpt
            );
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u64, u64),
    Tick(u64),
    Evict(u64),
}

/// Clock advances: small steps, exact periods, around the 10 min mark, whole hours and long gaps (late ticks).
fn advance() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0..=15_000u64,
        3 => Just(10_000u64),
        2 => 590_000..=610_000u64,
        2 => Just(3_600_000u64),
        1 => 3_000_000..=8_000_000u64,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..6u8, 0..1_000u64, 0..4u64).prop_map(|(k, v, t)| Op::Add(k, v, t)),
        5 => advance().prop_map(Op::Tick),
        1 => prop_oneof![Just(0u64), Just(10_000), Just(60_000), Just(600_000)].prop_map(Op::Evict),
    ]
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let set = StatsSet::new();
    let mut model = Model::default();
    let mut now = T0;
    for op in ops {
        match *op {
            Op::Add(k, v, t) => {
                let key = format!("topic-{k}");
                set.add(&key, v, t);
                model.add(&key, v, t);
            }
            Op::Tick(dt) => {
                now += dt;
                set.tick(now);
                model.tick(now);
            }
            Op::Evict(idle) => {
                prop_assert_eq!(
                    set.evict_idle(now, idle),
                    model.evict(now, idle),
                    "evicted at {}",
                    now
                );
            }
        }
        check(&set, &model)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn windows_match_the_naive_model(ops in prop::collection::vec(op(), 1..150)) {
        run(&ops)?;
    }

    /// Long runs dominated by hour-scale jumps, so the 25-deep day list fills and slides.
    #[test]
    fn day_window_fills_and_slides(
        ops in prop::collection::vec(
            prop_oneof![
                2 => (0..3u8, 0..1_000u64, 0..4u64).prop_map(|(k, v, t)| Op::Add(k, v, t)),
                2 => prop_oneof![Just(3_600_000u64), 3_000_000..=4_000_000u64, 0..700_000u64].prop_map(Op::Tick),
            ],
            60..200,
        )
    ) {
        run(&ops)?;
    }
}

#[test]
fn many_threads_adding_totals_exact() {
    const THREADS: u64 = 4;
    const ADDS: u64 = 20_000;
    const KEYS: u64 = 50;
    let key = |t: u64, i: u64| format!("key-{}", (i + t * 7) % KEYS);
    let set = StatsSet::new();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let set = &set;
            s.spawn(move || {
                for i in 0..ADDS {
                    set.add(&key(t, i), i % 97 + 1, 1);
                }
            });
        }
    });
    let mut expected = BTreeMap::<String, Totals>::new();
    for t in 0..THREADS {
        for i in 0..ADDS {
            let e = expected.entry(key(t, i)).or_default();
            e.value += i % 97 + 1;
            e.times += 1;
        }
    }
    assert_eq!(set.len() as u64, KEYS);
    set.tick(T0);
    for (key, totals) in &expected {
        assert_eq!(set.totals(key).as_ref(), Some(totals), "{key}");
        let w = set.minute(key).unwrap();
        assert_eq!(w.sum, totals.value);
        assert_eq!(w.avgpt, totals.value as f64 / totals.times as f64);
    }
}

#[test]
fn adds_racing_tick_and_eviction_lose_nothing() {
    // Several rounds: the interleavings that would expose a flaw are timing-dependent.
    for _ in 0..4 {
        race_round();
    }
}

fn race_round() {
    const THREADS: u64 = 3;
    const ADDS: u64 = 30_000;
    const KEYS: u64 = 24;
    // Each thread adds in runs of 64 to one key, so keys keep going idle and coming back.
    let key = |t: u64, i: u64| format!("topic-{}", (i / 64 + t * 5) % KEYS);
    let set = StatsSet::new();
    let mut evicted = BTreeMap::<String, Totals>::new();
    let mut on_evict = |k: &str, t: Totals| {
        let e = evicted.entry(k.to_owned()).or_default();
        e.value += t.value;
        e.times += t.times;
    };
    let mut evictions = 0usize;
    let mut now = T0;
    std::thread::scope(|s| {
        let adders: Vec<_> = (0..THREADS)
            .map(|t| {
                let set = &set;
                s.spawn(move || {
                    if t == 0 {
                        // One thread goes through `Adder` handles, each held for a batch of adds.
                        for batch in 0..ADDS / 250 {
                            let adder = set.adder();
                            for i in batch * 250..(batch + 1) * 250 {
                                adder.add(&key(t, i), i % 13 + 1, 1);
                            }
                        }
                    } else if t == 1 {
                        // One thread keeps a `Counter` handle per key across evictions.
                        let mut counters: BTreeMap<String, _> = BTreeMap::new();
                        for i in 0..ADDS {
                            let k = key(t, i);
                            let c = counters.entry(k.clone()).or_insert_with(|| set.counter(&k));
                            c.add(i % 13 + 1, 1);
                        }
                    } else {
                        for i in 0..ADDS {
                            set.add(&key(t, i), i % 13 + 1, 1);
                        }
                    }
                })
            })
            .collect();
        // This thread is the maintenance loop: sample, then evict everything unchanged since that sampling.
        while !adders.iter().all(|h| h.is_finished()) {
            now += 10_000;
            set.tick(now);
            evictions += set.evict_idle_with(now, 0, &mut on_evict);
        }
    });
    // Quiet now: one more sampling makes every key idle, and eviction drains the set.
    now += 10_000;
    set.tick(now);
    evictions += set.evict_idle_with(now, 0, &mut on_evict);
    assert_eq!(set.len(), 0);
    assert!(evictions >= KEYS as usize);

    let mut expected = BTreeMap::<String, Totals>::new();
    for t in 0..THREADS {
        for i in 0..ADDS {
            let e = expected.entry(key(t, i)).or_default();
            e.value += i % 13 + 1;
            e.times += 1;
        }
    }
    assert_eq!(evicted, expected);
}

#[test]
fn a_key_evicted_while_idle_had_an_empty_last_window() {
    let set = StatsSet::new();
    set.add("k", 5, 1);
    set.tick(T0);
    for i in 1..=7 {
        set.tick(T0 + i * 10_000);
    }
    assert_eq!(set.minute("k"), Some(WindowStats::default()));
    assert_eq!(set.evict_idle(T0 + 70_000, 70_000), 1);
    assert_eq!(set.get("k"), None);
}
