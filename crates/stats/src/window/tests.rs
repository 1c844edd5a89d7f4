//! Unit tests of the window set: scheduling, RocketMQ baseline semantics, eviction, memory figure.

use super::item::Item;
use super::*;

const T0: u64 = 1_700_000_000_000;

#[test]
fn bytes_per_key_matches_the_real_sizes() {
    // papaya stores each key as one boxed `Entry { key: Box<str>, value: Arc<Item> }`; the Arc's allocation
    // holds two counts and the item.
    let entry = std::mem::size_of::<(Box<str>, std::sync::Arc<Item>)>()
        + 2 * std::mem::size_of::<usize>()
        + std::mem::size_of::<Item>();
    assert_eq!(
        BYTES_PER_KEY,
        entry + TABLE_BYTES_PER_KEY,
        "update the documented figure"
    );
}

#[test]
fn first_tick_samples_every_level_then_each_on_its_period() {
    let s = StatsSet::new();
    assert_eq!(
        s.tick(T0),
        Sampled {
            minute: true,
            hour: true,
            day: true
        }
    );
    assert_eq!(s.tick(T0 + 9_999), Sampled::default());
    assert_eq!(
        s.tick(T0 + 10_000),
        Sampled {
            minute: true,
            hour: false,
            day: false
        }
    );
    assert_eq!(
        s.tick(T0 + 600_000),
        Sampled {
            minute: true,
            hour: true,
            day: false
        }
    );
    assert_eq!(
        s.tick(T0 + 3_600_000),
        Sampled {
            minute: true,
            hour: true,
            day: true
        }
    );
}

#[test]
fn late_tick_samples_once_and_keeps_the_phase() {
    let s = StatsSet::new();
    s.tick(T0);
    // 35 s late: one minute sampling, next due at T0 + 40 s (whole periods past now), not T0 + 45 s.
    assert!(s.tick(T0 + 35_000).minute);
    assert!(!s.tick(T0 + 39_999).minute);
    assert!(s.tick(T0 + 40_000).minute);
}

#[test]
fn a_fresh_items_first_window_counts_everything_added() {
    let s = StatsSet::new();
    s.add("t", 300, 3);
    s.add("t", 200, 2);
    assert_eq!(
        s.minute("t"),
        Some(WindowStats::default()),
        "not sampled yet"
    );
    s.tick(T0);
    // Baseline (T0 - 10 s, 0, 0) then (T0, 5, 500).
    assert_eq!(
        s.minute("t"),
        Some(WindowStats {
            sum: 500,
            tps: 50.0,
            avgpt: 100.0
        })
    );
    // Hour baseline is 10 min back, day baseline 1 h back.
    assert_eq!(s.hour("t").map(|w| w.tps), Some(500.0 * 1000.0 / 600_000.0));
    assert_eq!(
        s.day("t").map(|w| w.tps),
        Some(500.0 * 1000.0 / 3_600_000.0)
    );
    assert_eq!(s.minute("absent"), None);
}

#[test]
fn minute_window_slides_over_seven_snapshots() {
    let s = StatsSet::new();
    s.tick(T0);
    for i in 1..=10u64 {
        s.add("k", i, 1);
        s.tick(T0 + i * 10_000);
    }
    // Item entered at T0 + 10 s; snapshots at T0 + 40 s .. T0 + 100 s remain (7), values 1+..+4 .. 1+..+10.
    let w = s.minute("k").unwrap();
    assert_eq!(w.sum, 55 - 10);
    assert_eq!(w.tps, 45.0 * 1000.0 / 60_000.0);
    assert_eq!(w.avgpt, 45.0 / 6.0);
    let all = s.get("k").unwrap();
    assert_eq!((all.value, all.times), (55, 10));
    assert_eq!(all.minute, w);
}

#[test]
fn items_created_between_samplings_enter_at_the_next_sampling_of_each_level() {
    let s = StatsSet::new();
    s.tick(T0);
    s.add("late", 7, 1);
    s.tick(T0 + 10_000);
    assert_eq!(s.minute("late").unwrap().sum, 7);
    assert_eq!(
        s.hour("late"),
        Some(WindowStats::default()),
        "hour level has not sampled since"
    );
    s.tick(T0 + 600_000);
    assert_eq!(s.hour("late").unwrap().sum, 7);
}

#[test]
fn evicts_idle_keys_only() {
    let s = StatsSet::new();
    s.add("idle", 1, 1);
    s.add("busy", 1, 1);
    s.tick(T0);
    s.add("fresh", 1, 1); // never sampled: kept
    for i in 1..=6 {
        s.add("busy", 1, 1);
        s.tick(T0 + i * 10_000);
    }
    let mut gone = Vec::new();
    let n = s.evict_idle_with(T0 + 60_000, 60_000, |k, t| gone.push((k.to_owned(), t)));
    assert_eq!(n, 1);
    assert_eq!(
        gone,
        vec![("idle".to_owned(), Totals { value: 1, times: 1 })]
    );
    let mut keys = s.keys();
    keys.sort();
    assert_eq!(keys, ["busy", "fresh"]);
    assert_eq!(s.len(), 2);
    // An evicted key comes back fresh on its next add.
    s.add("idle", 2, 1);
    assert_eq!(s.totals("idle"), Some(Totals { value: 2, times: 1 }));
}

#[test]
fn a_key_changed_since_the_last_sampling_is_not_evicted() {
    let s = StatsSet::new();
    s.add("k", 1, 1);
    s.tick(T0);
    s.add("k", 1, 1);
    assert_eq!(s.evict_idle(T0 + 1_000_000, 0), 0);
    assert_eq!(s.totals("k"), Some(Totals { value: 2, times: 2 }));
    s.add("k", 1, 1);
    assert_eq!(
        s.totals("k"),
        Some(Totals { value: 3, times: 3 }),
        "aborted eviction leaves it usable"
    );
}

#[test]
fn for_each_visits_every_key() {
    let s = StatsSet::with_capacity(16);
    for k in ["a", "b", "c"] {
        s.add(k, 2, 1);
    }
    s.tick(T0);
    let mut seen = Vec::new();
    s.for_each(|k, st| seen.push((k.to_owned(), st.value, st.minute.sum)));
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        [("a".into(), 2, 2), ("b".into(), 2, 2), ("c".into(), 2, 2)]
    );
    assert!(!s.is_empty());
}

#[test]
fn clock_going_backwards_samples_nothing_and_does_not_panic() {
    let s = StatsSet::new();
    s.add("k", 1, 1);
    s.tick(T0);
    assert_eq!(s.tick(T0 - 50_000), Sampled::default());
    assert_eq!(s.tick(0), Sampled::default());
    assert_eq!(s.evict_idle(0, u64::MAX), 0);
    assert_eq!(s.minute("k").unwrap().sum, 1);
}

#[test]
fn adder_handle_adds_like_add() {
    let s = StatsSet::new();
    {
        let a = s.adder();
        a.add("k", 3, 1);
        a.add("k", 4, 1);
        a.add("j", 1, 0);
    }
    s.add("k", 1, 1);
    assert_eq!(s.totals("k"), Some(Totals { value: 8, times: 3 }));
    assert_eq!(s.totals("j"), Some(Totals { value: 1, times: 0 }));
    // An adder also follows a key through eviction.
    let a = s.adder();
    s.tick(T0);
    assert_eq!(s.evict_idle(T0, 0), 2);
    a.add("k", 5, 1);
    assert_eq!(s.totals("k"), Some(Totals { value: 5, times: 1 }));
}

#[test]
fn last_step_is_the_newest_sampling_period_alone() {
    let set = StatsSet::new();
    set.add("t", 5, 1);
    set.tick(0);
    set.add("t", 7, 1);
    set.tick(600_000);
    set.add("t", 11, 2);
    set.tick(1_200_000);
    let step = set.last_step("t", Window::Hour).unwrap();
    assert_eq!(step.sum, 11);
    assert_eq!(step.avgpt, 5.5);
    assert_eq!(step.tps, 11.0 * 1000.0 / 600_000.0);
    assert_eq!(
        set.window("t", Window::Hour).unwrap().sum,
        23,
        "the whole window still counts everything"
    );
    assert_eq!(set.last_step("nope", Window::Hour), None);
    let fresh = StatsSet::new();
    fresh.add("t", 1, 1);
    assert_eq!(
        fresh.last_step("t", Window::Hour),
        Some(WindowStats::default()),
        "no sampling yet"
    );
}

#[test]
fn a_counter_handle_adds_to_its_key_and_survives_eviction() {
    let s = StatsSet::new();
    let mut c = s.counter("t");
    c.add(5, 1);
    s.add("t", 1, 1);
    assert_eq!(s.totals("t"), Some(Totals { value: 6, times: 2 }));
    // Idle long enough to be evicted: the handle's next add lands in the key's new item, nothing lost.
    s.tick(T0);
    s.tick(T0 + 10_000);
    assert_eq!(s.evict_idle(T0 + 10_000, 0), 1);
    assert_eq!(s.totals("t"), None);
    c.add(7, 1);
    assert_eq!(s.totals("t"), Some(Totals { value: 7, times: 1 }));
    assert_eq!(c.key(), "t");
}
