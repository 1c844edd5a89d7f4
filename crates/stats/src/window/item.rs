//! One key of a [`StatsSet`](super::StatsSet): its cumulative counters, its three snapshot rings and the
//! retire flag that lets an idle item leave the map without losing a concurrent add.
//!
//! What it owns: the hot-path add (four atomic read-modify-writes), sampling one item, computing a window from
//! a ring, and the item half of the eviction protocol. What it does not: the map, scheduling, or choosing
//! which items to evict (see `mod.rs`).
//!
//! # Eviction without losing adds
//!
//! Each item has a `gate` word: bit 63 is RETIRED, the low bits count adders inside their add. An adder
//! does `A1 gate.fetch_add(1)`; if the returned word had RETIRED it takes its 1 back and retries through the
//! map without touching the counters. Otherwise it adds to `value` and `times` and leaves with `A4
//! gate.fetch_sub(1)` (Release). The evictor (serialised with sampling by the set's maintenance lock) does
//! `E1 gate.fetch_or(RETIRED)`, then waits until the count in `gate` is 0, then reads the counters and
//! removes the item only if they still equal the last sampled ones; otherwise it clears RETIRED.
//!
//! Why that is exact: all writes to `gate` are read-modify-writes, so they are totally ordered. An adder
//! whose A1 comes before E1 is counted in the word E1 sees, and the evictor's wait ends only at a word after
//! that adder's A4; that load (Acquire) reads from A4's release sequence, so the adder's counter updates
//! happen-before the evictor reads them. An adder whose A1 comes after E1 sees RETIRED and never touches the
//! counters. So after the wait the counters are final for as long as RETIRED stays set: an evicted item's
//! totals are exactly what was added to it, the check is exact (no undo, hence no transient values that a
//! sampling could capture), and an add either stays in a live item or goes to the fresh item that replaces
//! an evicted one.
//!
//! An earlier design undid adds that found the flag set (add, add, check, undo). It loses nothing, but a
//! sampling can capture an add that is about to be undone as the item's idle baseline; a later eviction then
//! reports that add although it moved to a fresh item (a double count the race test caught).
//!
//! Waiting: adders that find RETIRED spin (then yield) until the evictor has removed the item or cleared the
//! flag; the evictor spins (then yields) until adders already inside their add leave, a few instructions.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::{Mutex, MutexGuard};

use super::{ItemStats, Sampled, Totals, Window, WindowStats};

/// The flag bit in [`Item`]'s gate word; the bits below count adders in flight.
const RETIRED: u64 = 1 << 63;

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
        self.span_back(self.len.saturating_sub(1))
    }

    /// sum, tps and avgpt between the two newest snapshots: the last sampling period alone (for the hour ring,
    /// the last 10 minutes); all zero with fewer than two snapshots.
    pub(crate) fn last_step(&self) -> WindowStats {
        if self.len < 2 {
            WindowStats::default()
        } else {
            self.span_back(1)
        }
    }

    /// Stats from the snapshot `back` places before the newest to the newest.
    fn span_back(&self, back: u8) -> WindowStats {
        if self.len == 0 {
            return WindowStats::default();
        }
        let newest = self.head as usize + self.len as usize - 1;
        let first = self.buf[(newest - back as usize) % N];
        let last = self.buf[newest % N];
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
    /// [`RETIRED`] flag and the number of adders inside [`Item::try_add`].
    gate: AtomicU64,
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
            gate: AtomicU64::new(0),
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

    /// The hot path. Returns false without touching the counters when the item is being evicted; the caller
    /// retries via the map.
    #[inline]
    pub(crate) fn try_add(&self, value: u64, times: u64) -> bool {
        if self.gate.fetch_add(1, Acquire) & RETIRED != 0 {
            self.gate.fetch_sub(1, Release);
            return false;
        }
        self.value.fetch_add(value, Relaxed);
        self.times.fetch_add(times, Relaxed);
        self.gate.fetch_sub(1, Release);
        true
    }

    /// Whether an evictor has flagged this item (it will be removed or the flag cleared shortly).
    pub(crate) fn is_retired(&self) -> bool {
        self.gate.load(Acquire) & RETIRED != 0
    }

    /// The counters; exact once no adder is inside its add, otherwise possibly mid-add.
    pub(crate) fn totals(&self) -> Totals {
        Totals {
            value: self.value.load(Acquire),
            times: self.times.load(Acquire),
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

    pub(crate) fn last_step(&self, w: Window) -> WindowStats {
        let st = self.state();
        match w {
            Window::Minute => st.minute.last_step(),
            Window::Hour => st.hour.last_step(),
            Window::Day => st.day.last_step(),
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
    /// sampled, unchanged for at least `idle_ms` at its samplings, and its counters, once adders in flight
    /// have left, still equal the last sampled ones, the item stays RETIRED and its final totals are
    /// returned; the caller must then remove it from the map or call [`Item::unretire`].
    pub(crate) fn try_retire(&self, now_ms: u64, idle_ms: u64) -> Option<Totals> {
        let seen = {
            let st = self.state();
            if !st.sampled || now_ms.saturating_sub(st.changed_ms) < idle_ms {
                return None;
            }
            Totals {
                value: st.seen_value,
                times: st.seen_times,
            }
        };
        let mut word = self.gate.fetch_or(RETIRED, AcqRel);
        let mut spins = 0u32;
        while word & !RETIRED != 0 {
            spin_then_yield(&mut spins);
            word = self.gate.load(Acquire);
        }
        let now = self.totals();
        if now != seen {
            self.unretire();
            return None;
        }
        Some(now)
    }

    /// Cancels a [`Item::try_retire`] whose removal did not happen.
    pub(crate) fn unretire(&self) {
        self.gate.fetch_and(!RETIRED, Release);
    }
}

/// Busy-waits briefly, then gives the CPU away: for waits that end after a few instructions of another
/// thread, unless that thread was descheduled.
pub(crate) fn spin_then_yield(spins: &mut u32) {
    *spins = spins.saturating_add(1);
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
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
    fn add_is_refused_on_a_retired_item() {
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
