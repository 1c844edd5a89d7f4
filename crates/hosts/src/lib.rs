//! mqwatch-hosts: the machines under a cluster's nodes, read from their node_exporter (Debian's
//! `prometheus-node-exporter`).
//!
//! What it owns: fetching `/metrics` with a timeout ([`HostCollector`]), parsing the text exposition format with
//! the `prometheus-parse` crate into the cumulative counters mqwatch uses ([`Counters`]), and turning two looks
//! into a [`HostSample`] with rates (CPU busy, IO busy, IOPS, network in/out) beside the gauges (memory, load,
//! disk usage, TCP connections, TIME_WAIT). The collector remembers each host's last look, so a `serve` cycle
//! scrapes once; a first look (or a one-shot `check`) scrapes twice, a second apart.
//!
//! What it is not: no thresholds and no findings (`mqwatch_checks::hosts` judges samples), no storage.

mod collector;
mod counters;

pub use collector::{HostCollector, HostError, HostReading};
pub use counters::{Counters, sample};
pub use mqwatch_checks::hosts::HostSample;
