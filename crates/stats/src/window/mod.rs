//! Keyed counters with RocketMQ `StatsItem` windows: [`StatsSet`].
//!
//! What it owns: a set of string-keyed items, each with cumulative `value` and `times` counters; adding to
//! them from many threads without locks; sampling them into the minute (every 10 s, 7 kept), hour (every
//! 10 min, 7 kept) and day (every 1 h, 25 kept) snapshot lists when [`StatsSet::tick`] is called; per-window
//! sum, tps and avgpt exactly as `specs/mqcloud.md` defines them; evicting idle keys.
//!
//! What it does not: run timers or threads (the caller calls `tick(now)` from its own loop, with time from a
//! [`crate::clock::Clock`]), read the broker's own stats, or persist anything.
//!
//! Semantics, from RocketMQ's `StatsItem`: when a level samples an item whose list is empty it first pushes a
//! zero baseline `(now - period, 0, 0)`, then `(now, times, value)`, and keeps the last N. A window is computed
//! from the first and last snapshot: `sum = last.value - first.value`, `tps = sum * 1000 / (last.ts -
//! first.ts)` (0 when the span is 0), `avgpt = sum / (last.times - first.times)` (0 when that is 0). RocketMQ
//! samples all three levels at start and then at a fixed rate; here the first `tick` samples every level and
//! each level is then due every period after that; a late tick samples once at its real `now` and the next
//! due time moves to the first whole period after `now` (no catch-up burst). Items created between samplings
//! enter at each level's next sampling.
//!
//! Memory: see [`BYTES_PER_KEY`]. For hot loops over many keys from one thread, [`StatsSet::adder`] saves
//! pinning the map on every add, and a [`Counter`] handle per key also saves the lookup.

mod item;

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use item::{DAY_PERIOD_MS, HOUR_PERIOD_MS, Item, MINUTE_PERIOD_MS};

/// Approximate heap bytes one key costs on a 64-bit target, not counting the key's own characters (add
/// `key.len()`, rounded up by the allocator): the map entry (`Box<str>` header + `Arc` pointer), the `Arc`'s
/// allocation (two counts + the item with its 39 fixed-size snapshots, 24 bytes each) plus
/// [`TABLE_BYTES_PER_KEY`] of hash table. Nothing is allocated per tick. A unit test keeps this figure equal to
/// the real `size_of` sum.
pub const BYTES_PER_KEY: usize = 1_064 + TABLE_BYTES_PER_KEY;

/// The hash table's share per key, estimated: papaya keeps one pointer and one metadata byte per slot at a
/// load factor between about 42 % and 85 %, i.e. 11 to 21 bytes per key; 16 is the figure used here.
pub const TABLE_BYTES_PER_KEY: usize = 16;

/// Statistics of one window of one key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct WindowStats {
    /// `last.value - first.value`.
    pub sum: u64,
    /// `sum * 1000 / (last.ts - first.ts)`: value per second; 0 when the span is 0.
    pub tps: f64,
    /// `sum / (last.times - first.times)`: value per call (e.g. average latency); 0 when no calls.
    pub avgpt: f64,
}

/// The cumulative counters of one key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Sum of all `value`s added (wrapping).
    pub value: u64,
    /// Sum of all `times` added (wrapping).
    pub times: u64,
}

/// Everything known about one key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ItemStats {
    /// Sum of all `value`s added.
    pub value: u64,
    /// Sum of all `times` added.
    pub times: u64,
    /// The minute window (10 s snapshots, 7 kept).
    pub minute: WindowStats,
    /// The hour window (10 min snapshots, 7 kept).
    pub hour: WindowStats,
    /// The day window (1 h snapshots, 25 kept).
    pub day: WindowStats,
}

/// One of the three windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Window {
    /// Snapshots every 10 s, 7 kept.
    Minute,
    /// Snapshots every 10 min, 7 kept.
    Hour,
    /// Snapshots every 1 h, 25 kept.
    Day,
}

/// Which levels a [`StatsSet::tick`] sampled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sampled {
    /// The minute level (10 s) sampled.
    pub minute: bool,
    /// The hour level (10 min) sampled.
    pub hour: bool,
    /// The day level (1 h) sampled.
    pub day: bool,
}

impl Sampled {
    /// Whether any level sampled.
    pub fn any(self) -> bool {
        self.minute || self.hour || self.day
    }
}

/// Due times of the three levels; `None` until the first tick.
#[derive(Debug, Default)]
struct Schedule {
    next_due: [Option<u64>; 3],
}

impl Schedule {
    const PERIODS: [u64; 3] = [MINUTE_PERIOD_MS, HOUR_PERIOD_MS, DAY_PERIOD_MS];

    fn advance(&mut self, now_ms: u64) -> Sampled {
        let mut due = [false; 3];
        for ((next, period), due) in self.next_due.iter_mut().zip(Self::PERIODS).zip(&mut due) {
            *next = match *next {
                None => {
                    *due = true;
                    Some(now_ms.saturating_add(period))
                }
                Some(d) if now_ms >= d => {
                    *due = true;
                    let periods = (now_ms - d) / period + 1;
                    Some(d.saturating_add(periods.saturating_mul(period)))
                }
                keep => keep,
            };
        }
        Sampled {
            minute: due[0],
            hour: due[1],
            day: due[2],
        }
    }
}

/// Keys are `Box<str>` (16 bytes, not 24: a key never grows).
type Map = papaya::HashMap<Box<str>, Arc<Item>, foldhash::fast::RandomState>;

/// A keyed set of counters with minute/hour/day windows (RocketMQ `StatsItemSet`).
///
/// [`add`](Self::add) takes no lock and may be called from any number of threads; it allocates only on a
/// key's first use. The one wait: an add to a key while that key's eviction is being decided spins until
/// the evictor has decided (a few instructions, unless the evictor is descheduled). [`tick`](Self::tick) and [`evict_idle`](Self::evict_idle) are serialised with each
/// other by an internal lock that adders never take; readers take only the read key's small lock.
pub struct StatsSet {
    map: Map,
    /// Serialises sampling and eviction; holds the levels' due times.
    maintenance: Mutex<Schedule>,
}

impl Default for StatsSet {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for StatsSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatsSet")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl StatsSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty set with room for `capacity` keys before its table grows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            // Blocking resize: with papaya's default incremental mode, a resize left unfinished when key
            // creation stops (it only advances on writes) makes every later lookup go through the old table:
            // measured 180 ns per lookup instead of 25 ns. Writers are rare here (first use of a key only).
            map: papaya::HashMap::builder()
                .capacity(capacity)
                .hasher(foldhash::fast::RandomState::default())
                .resize_mode(papaya::ResizeMode::Blocking)
                .build(),
            maintenance: Mutex::new(Schedule::default()),
        }
    }

    /// Adds `value` and `times` to `key`'s counters, creating the key on first use (RocketMQ `addValue`).
    /// Lock-free: a map lookup and four atomic read-modify-writes on one item. Counters wrap on overflow.
    pub fn add(&self, key: &str, value: u64, times: u64) {
        self.add_in(&self.map.guard(), key, value, times);
    }

    /// A handle for many adds from one thread: it pins the map once instead of once per add. Keep it
    /// short-lived (e.g. one batch of samples): while it lives, memory of evicted keys is not reclaimed.
    pub fn adder(&self) -> Adder<'_> {
        Adder {
            set: self,
            guard: self.map.guard(),
        }
    }

    fn add_in(&self, guard: &impl papaya::Guard, key: &str, value: u64, times: u64) {
        let mut item = self.live(guard, key);
        // Loops only while an evictor is retiring `item` (see `item.rs` for the protocol).
        while !item.try_add(value, times) {
            item = self.replacement(guard, key, item);
        }
    }

    /// `key`'s item, created on first use.
    fn live<'g>(&self, guard: &'g impl papaya::Guard, key: &str) -> &'g Arc<Item> {
        match self.map.get(key, guard) {
            Some(item) => item,
            None => self.map.get_or_insert_with(Box::from(key), new_item, guard),
        }
    }

    /// The item to use instead of `retired`: the same one once an aborted eviction un-retires it, or the fresh
    /// one that replaces it in the map after a completed eviction. Spins while the eviction is undecided.
    fn replacement<'g>(
        &self,
        guard: &'g impl papaya::Guard,
        key: &str,
        retired: &Arc<Item>,
    ) -> &'g Arc<Item> {
        let mut spins = 0u32;
        loop {
            match self.map.get(key, guard) {
                None => break self.map.get_or_insert_with(Box::from(key), new_item, guard),
                Some(cur) if !Arc::ptr_eq(cur, retired) || !cur.is_retired() => break cur,
                Some(_) => item::spin_then_yield(&mut spins),
            }
        }
    }

    /// A handle on one key for a thread that adds to it often: adds through it skip the hash lookup and the
    /// map's guard (three steps fewer than [`StatsSet::add`]). Still exact across eviction: a handle whose
    /// item was evicted finds the key's new item on its next add.
    pub fn counter(&self, key: &str) -> Counter<'_> {
        let item = self.live(&self.map.guard(), key).clone();
        Counter {
            set: self,
            key: Box::from(key),
            item,
        }
    }

    /// Samples every item at each level that is due at `now_ms` (ms since the Unix epoch) and returns which
    /// levels sampled. Call it at least every 10 s; calling more often is cheap when nothing is due.
    pub fn tick(&self, now_ms: u64) -> Sampled {
        let mut schedule = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        let due = schedule.advance(now_ms);
        if due.any() {
            let guard = self.map.guard();
            for (_, item) in self.map.iter(&guard) {
                item.sample(now_ms, due);
            }
        }
        due
    }

    /// Removes keys whose counters have not changed for at least `idle_ms` (judged at the 10 s samplings,
    /// including "still unchanged right now"); returns how many were removed. Keys never sampled yet are
    /// kept. Concurrent adds are never lost: an add racing the removal lands in a fresh item.
    pub fn evict_idle(&self, now_ms: u64, idle_ms: u64) -> usize {
        self.evict_idle_with(now_ms, idle_ms, |_, _| {})
    }

    /// [`evict_idle`](Self::evict_idle), also handing each removed key and its final totals to `on_evict`.
    pub fn evict_idle_with(
        &self,
        now_ms: u64,
        idle_ms: u64,
        mut on_evict: impl FnMut(&str, Totals),
    ) -> usize {
        let _schedule = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        let guard = self.map.guard();
        let mut evicted = 0;
        for (key, item) in self.map.iter(&guard) {
            let Some(totals) = item.try_retire(now_ms, idle_ms) else {
                continue;
            };
            match self
                .map
                .remove_if(&**key, |_, v| Arc::ptr_eq(v, item), &guard)
            {
                Ok(Some(_)) => {
                    evicted += 1;
                    on_evict(key, totals);
                }
                // Not reachable while only the evictor removes (it holds the maintenance lock); be safe.
                _ => item.unretire(),
            }
        }
        evicted
    }

    /// `key`'s last sampling step of window `w` alone (the hour window's is the last 10 minutes: MQCloud's
    /// topic ranking), or `None` if the key is absent. All zero before its second sampling at that level.
    pub fn last_step(&self, key: &str, w: Window) -> Option<WindowStats> {
        self.map.pin().get(key).map(|item| item.last_step(w))
    }

    /// `key`'s window `w`, or `None` if the key is absent. All zero until the key's first sampling.
    pub fn window(&self, key: &str, w: Window) -> Option<WindowStats> {
        self.map.pin().get(key).map(|item| item.window(w))
    }

    /// `key`'s minute window (10 s snapshots, 7 kept).
    pub fn minute(&self, key: &str) -> Option<WindowStats> {
        self.window(key, Window::Minute)
    }

    /// `key`'s hour window (10 min snapshots, 7 kept).
    pub fn hour(&self, key: &str) -> Option<WindowStats> {
        self.window(key, Window::Hour)
    }

    /// `key`'s day window (1 h snapshots, 25 kept).
    pub fn day(&self, key: &str) -> Option<WindowStats> {
        self.window(key, Window::Day)
    }

    /// `key`'s cumulative counters.
    pub fn totals(&self, key: &str) -> Option<Totals> {
        self.map.pin().get(key).map(|i| i.totals())
    }

    /// `key`'s counters and all three windows.
    pub fn get(&self, key: &str) -> Option<ItemStats> {
        self.map.pin().get(key).map(|i| i.stats())
    }

    /// Calls `f` with every key and its stats, in no particular order. Keys added or evicted meanwhile may
    /// or may not be visited.
    pub fn for_each(&self, mut f: impl FnMut(&str, &ItemStats)) {
        let guard = self.map.guard();
        for (key, item) in self.map.iter(&guard) {
            f(key, &item.stats());
        }
    }

    /// All keys, in no particular order.
    pub fn keys(&self) -> Vec<String> {
        let guard = self.map.guard();
        self.map.keys(&guard).map(|k| k.to_string()).collect()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the set has no keys.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Adds to a [`StatsSet`] from one thread with the map pinned once: see [`StatsSet::adder`].
pub struct Adder<'a> {
    set: &'a StatsSet,
    guard: papaya::LocalGuard<'a>,
}

impl Adder<'_> {
    /// Same as [`StatsSet::add`].
    pub fn add(&self, key: &str, value: u64, times: u64) {
        self.set.add_in(&self.guard, key, value, times);
    }
}

fn new_item() -> Arc<Item> {
    Arc::new(Item::new())
}

/// Adds to one key of a [`StatsSet`] without looking it up: see [`StatsSet::counter`].
pub struct Counter<'a> {
    set: &'a StatsSet,
    key: Box<str>,
    item: Arc<Item>,
}

impl Counter<'_> {
    /// Same as [`StatsSet::add`] on this handle's key.
    pub fn add(&mut self, value: u64, times: u64) {
        while !self.item.try_add(value, times) {
            let guard = self.set.map.guard();
            self.item = self.set.replacement(&guard, &self.key, &self.item).clone();
        }
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl fmt::Debug for Counter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counter")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Adder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adder").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
