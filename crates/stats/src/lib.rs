//! mqwatch-stats: the in-memory statistics core every collector feeds.
//!
//! What it owns:
//! - [`window`]: keyed counters with RocketMQ `StatsItem` semantics (10 s / 10 min / 1 h snapshots, sum, tps,
//!   avgpt), lock-free to add to from many threads, sampled by an explicit `tick(now)`.
//! - [`histogram`]: a fixed-size (≤ 8 KiB), lock-free latency histogram with ≤ 2 % relative error from 1 µs to
//!   1 h, interval diffs, merges, a compact wire form and MQCloud's segmented view.
//! - [`lifecycle`]: the node lifecycle tracker (startup, active, fenced, controlled shutdown, gone) with the
//!   KIP-1131 metrics and the draft KIP's longest-pending metrics, O(1) per event.
//! - [`clock`]: the injected clock everything above is driven by.
//!
//! What it is not: no I/O, no threads, no alarms. Time only enters through arguments or a [`clock::Clock`].

pub mod clock;
pub mod histogram;
pub mod lifecycle;
pub mod window;
