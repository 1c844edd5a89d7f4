//! One key of a [`StatsSet`](super::StatsSet): its cumulative counters, its three snapshot rings and the
//! retire flag that lets an idle item leave the map without losing a concurrent add.
//!
//! What it owns: the hot-path add (two atomic adds and one load), sampling one item, computing a window from
//! a ring, and the item half of the eviction protocol. What it does not: the map, scheduling, or choosing
//! which items to evict (see `mod.rs`).
//!
//! # Eviction without losing adds
//!
//! An adder runs, all `SeqCst`: `A1 value.fetch_add(v)`, `A2 times.fetch_add(t)`, `A3 retired.load()`; if
//! A3 reads `true` it undoes both adds and retries through the map. The evictor (serialised with sampling by
//! the set's maintenance lock) runs `E1 retired.store(true)`, `E2 value.load()`, `E3 times.load()` and evicts
//! only if both equal the values recorded at the last sampling; otherwise it clears the flag.
//!
//! All six operations are `SeqCst`, so they sit in one total order S consistent with program order. Take an
//! adder whose add is *not* undone: its A3 read `false`, and the only store of `true` is E1, so A3 precedes E1
//! in S, hence A1 < A2 < A3 < E1 < E2 < E3 in S, and E2/E3 (SeqCst loads) see A1/A2 or later values. So an
//! add that stays in the item is visible to the evictor's check, which then aborts because the counters
//! moved. An adder whose A3 reads `true` undoes its add and re-adds through the map: to this item again if
//! the evictor aborted, or to a fresh item once the evictor removed this one. Either way nothing is lost.
//!
//! One caveat, stated for exactness: the check compares counters by equality, so it could be fooled only if
//! the adds that stay in the item and the adds still waiting to be undone summed to a multiple of 2^64 in
//! `value` *and* in `times` at the same instant. With real counts (bytes, messages, milliseconds) that cannot
//! happen; a counter would have to be fed deltas near 2^64.
//!
//! Adders that find the flag set spin (then yield) until the evictor has either removed the item or cleared
//! the flag, a window of a few instructions in the evictor with no lock held by it that adders need.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard};

use super::{ItemStats, Sampled, Totals, Window, WindowStats};

/// Sampling period of the minute window (ms).
pub(crate) const MINUTE_PERIOD_MS: u64 = 10_000;
/// Sampling period of the hour window (ms).
pub(crate) const HOUR_PERIOD_MS: u64 = 600_000;
/// Sampling period of the day window (ms).
pub(crate) const DAY_PERIOD_MS: u64 = 3_600_000;
/// Snapshots kept by the minute window.
pub(crate) const MINUTE_KEEP: usize = 7;
/// Snapshots kept by the hour window.
pub(crate) const HOUR_KEEP: usize = 7;
/// Snapshots kept by the day window.
pub(crate) const DAY_KEEP: usize = 25;

/// One sample of an item's cumulative counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    ts: u64,
    times: u64,
    value: u64,
}

/// A fixed-capacity ring of the last `N` snapshots (oldest dropped first). No allocation.
#[derive(Debug, Clone)]
pub(crate) struct Ring<const N: usize> {
    buf: [Snapshot; N],
    head: u8,
    len: u8,
}

impl<const N: usize> Ring<N> {
    const EMPTY: Snapshot = Snapshot {
        ts: 0,
        times: 0,
        value: 0,
    };

    pub(crate) const fn new() -> Self {
        assert!(N >= 2 && N <= u8::MAX as usize);
        Self {
            buf: [Self::EMPTY; N],
            head: 0,
            len: 0,
        }
    }

    fn push(&mut self, s: Snapshot) {
        let len = self.len as usize;
        if len < N {
            self.buf[(self.head as usize + len) % N] = s;
            self.len += 1;
        } else {
            self.buf[self.head as usize] = s;
            self.head = ((self.head as usize + 1) % N) as u8;
        }
    }

    /// RocketMQ's sampling step: an empty ring first gets a zero baseline one period back, so a new item's
    /// first window counts everything added before its first sampling.
    pub(crate) fn sample(&mut self, now_ms: u64, period_ms: u64, times: u64, value: u64) {
        if self.len == 0 {
            self.push(Snapshot {
                ts: now_ms.saturating_sub(period_ms),
                times: 0,
                value: 0,
            });
        }
        self.push(Snapshot {
            ts: now_ms,
            times,
            value,
        });
    }

    /// sum, tps and avgpt between the oldest and the newest snapshot; all zero for an empty ring.
    pub(crate) fn stats(&self) -> WindowStats {
        if self.len == 0 {
            return WindowStats::default();
        }
        let first = self.buf[self.head as usize];
        let last = self.buf[(self.head as usize + self.len as usize - 1) % N];
        let sum = last.value.wrapping_sub(first.value);
        let span = last.ts.saturating_sub(first.ts);
        let times = last.times.wrapping_sub(first.times);
        WindowStats {
            sum,
            tps: if span == 0 {
                0.0
            } else {
                sum as f64 * 1000.0 / span as f64
            },
            avgpt: if times == 0 {
                0.0
            } else {
                sum as f64 / times as f64
            },
        }
    }
}

/// What sampling and eviction keep per item; touched only under the item's lock (tick, evict, readers).
#[derive(Debug)]
struct ItemState {
    minute: Ring<MINUTE_KEEP>,
    hour: Ring<HOUR_KEEP>,
    day: Ring<DAY_KEEP>,
    /// Counters seen at the last minute-level sampling.
    seen_value: u64,
    seen_times: u64,
    /// When the counters last differed from the previous sampling (valid once `sampled`).
    changed_ms: u64,
    /// Whether the item has been sampled at least once (a never-sampled item is never idle).
    sampled: bool,
}

/// One key's counters and windows.
#[derive(Debug)]
pub(crate) struct Item {
    value: AtomicU64,
    times: AtomicU64,
    retired: AtomicBool,
    state: Mutex<ItemState>,
}

impl Default for Item {
    fn default() -> Self {
        Self::new()
    }
}

impl Item {
    pub(crate) const fn new() -> Self {
        Self {
            value: AtomicU64::new(0),
            times: AtomicU64::new(0),
            retired: AtomicBool::new(false),
            state: Mutex::new(ItemState {
                minute: Ring::new(),
                hour: Ring::new(),
                day: Ring::new(),
                seen_value: 0,
                seen_times: 0,
                changed_ms: 0,
                sampled: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, ItemState> {
        // Nothing panics while holding this lock; if something ever did, the rings are still valid data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The hot path. Returns false (with the add undone) when the item is being evicted: retry via the map.
    #[inline]
    pub(crate) fn try_add(&self, value: u64, times: u64) -> bool {
        self.value.fetch_add(value, SeqCst);
        self.times.fetch_add(times, SeqCst);
        if !self.retired.load(SeqCst) {
            return true;
        }
        self.value.fetch_sub(value, SeqCst);
        self.times.fetch_sub(times, SeqCst);
        false
    }

    /// Whether an evictor has flagged this item (it will be removed or the flag cleared shortly).
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(SeqCst)
    }

    pub(crate) fn totals(&self) -> Totals {
        Totals {
            value: self.value.load(SeqCst),
            times: self.times.load(SeqCst),
        }
    }

    /// Samples the levels in `due` at `now_ms`; the minute level also updates idle tracking.
    pub(crate) fn sample(&self, now_ms: u64, due: Sampled) {
        let mut st = self.state();
        let Totals { value, times } = self.totals();
        if due.minute {
            st.minute.sample(now_ms, MINUTE_PERIOD_MS, times, value);
            if !st.sampled || st.seen_value != value || st.seen_times != times {
                st.seen_value = value;
                st.seen_times = times;
                st.changed_ms = now_ms;
                st.sampled = true;
            }
        }
        if due.hour {
            st.hour.sample(now_ms, HOUR_PERIOD_MS, times, value);
        }
        if due.day {
            st.day.sample(now_ms, DAY_PERIOD_MS, times, value);
        }
    }

    pub(crate) fn window(&self, w: Window) -> WindowStats {
        let st = self.state();
        match w {
            Window::Minute => st.minute.stats(),
            Window::Hour => st.hour.stats(),
            Window::Day => st.day.stats(),
        }
    }

    pub(crate) fn stats(&self) -> ItemStats {
        let st = self.state();
        let Totals { value, times } = self.totals();
        ItemStats {
            value,
            times,
            minute: st.minute.stats(),
            hour: st.hour.stats(),
            day: st.day.stats(),
        }
    }

    /// The evictor's half of the protocol (caller holds the set's maintenance lock). If the item has been
    /// sampled, unchanged for at least `idle_ms` at its samplings, and its counters still equal the last
    /// sampled ones after the flag is up, the item stays flagged and its final totals are returned; the
    /// caller must then remove it from the map or call [`Item::unretire`].
    pub(crate) fn try_retire(&self, now_ms: u64, idle_ms: u64) -> Option<Totals> {
        let st = self.state();
        if !st.sampled || now_ms.saturating_sub(st.changed_ms) < idle_ms {
            return None;
        }
        self.retired.store(true, SeqCst); // E1
        let value = self.value.load(SeqCst); // E2
        let times = self.times.load(SeqCst); // E3
        if value != st.seen_value || times != st.seen_times {
            self.retired.store(false, SeqCst);
            return None;
        }
        Some(Totals { value, times })
    }

    /// Cancels a [`Item::try_retire`] whose removal did not happen.
    pub(crate) fn unretire(&self) {
        self.retired.store(false, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_last_n_and_computes_from_first_and_last() {
        let mut r = Ring::<3>::new();
        assert_eq!(r.stats(), WindowStats::default());
        r.sample(10_000, 10_000, 2, 100); // baseline (0, 0, 0) + (10 000, 2, 100)
        assert_eq!(
            r.stats(),
            WindowStats {
                sum: 100,
                tps: 10.0,
                avgpt: 50.0
            }
        );
        r.sample(20_000, 10_000, 2, 100);
        r.sample(30_000, 10_000, 6, 500); // baseline dropped: first is (10 000, 2, 100)
        assert_eq!(
            r.stats(),
            WindowStats {
                sum: 400,
                tps: 20.0,
                avgpt: 100.0
            }
        );
    }

    #[test]
    fn zero_span_and_zero_times_give_zero_not_nan() {
        let mut r = Ring::<7>::new();
        r.sample(0, 10_000, 0, 5); // baseline ts saturates to 0: span 0, times 0
        let s = r.stats();
        assert_eq!((s.sum, s.tps, s.avgpt), (5, 0.0, 0.0));
    }

    #[test]
    fn add_is_undone_on_a_retired_item() {
        let it = Item::new();
        assert!(it.try_add(3, 1));
        it.sample(
            1_000,
            Sampled {
                minute: true,
                hour: false,
                day: false,
            },
        );
        assert_eq!(it.try_retire(1_000, 0), Some(Totals { value: 3, times: 1 }));
        assert!(!it.try_add(5, 1));
        assert_eq!(it.totals(), Totals { value: 3, times: 1 });
        it.unretire();
        assert!(it.try_add(5, 1));
        assert_eq!(it.totals(), Totals { value: 8, times: 2 });
    }

    #[test]
    fn retire_refuses_changed_unsampled_or_recent_items() {
        let it = Item::new();
        assert_eq!(it.try_retire(1_000_000, 0), None, "never sampled");
        it.try_add(1, 1);
        it.sample(
            1_000,
            Sampled {
                minute: true,
                hour: true,
                day: true,
            },
        );
        assert_eq!(it.try_retire(1_500, 1_000), None, "changed 500 ms ago");
        it.try_add(1, 1);
        assert_eq!(
            it.try_retire(5_000, 1_000),
            None,
            "counters moved since sampling"
        );
        assert!(!it.is_retired(), "an aborted retire clears the flag");
        assert!(it.try_add(0, 0));
    }
}
